//! The league's figures (docs/performance.md):
//!
//! 1. the rating's refit: 300 bots and 100,000 games (target under 1 s);
//! 2. the database: 300 students and 100,000 UTTT games (real records of
//!    random play): its size, and each page of `league serve` over HTTP
//!    (target under 100 ms each; the first ladder request pays the fit);
//! 3. sustained games/s of a league of 50 Python bots that declare `reuse`,
//!    at `--jobs 2`, against the same bots in a plain round-robin tournament
//!    (target at least 80 %). Part 3 takes minutes (50 admissions); skip it
//!    with `-- quick`.
//!
//! `cargo bench --bench league [-- quick | python]` (`python`: part 3 alone). Works under target/league-bench
//! and removes it at the end.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use referee::bot::spec::BotSpec;
use referee::game::Uttt;
use referee::league::db::{Scheduled, Status};
use referee::league::rating::{fit, FitSettings, Result3, Tally};
use referee::league::{League, LeagueSettings};
use referee::play::runner::{run_games, Entrant, Pairing, RunConfig};

const REFEREE: &str = env!("CARGO_BIN_EXE_referee");

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn refit() {
    let bots = 300;
    let mut rng = referee::seed::rng(1);
    let strengths: Vec<f64> = (0..bots).map(|i| (i as f64 - 150.0) * 4.0).collect();
    let mut t = Tally::default();
    use rand::Rng;
    for g in 0..100_000usize {
        // Neighbours on the ladder, as matchmaking pairs them.
        let a = g % bots;
        let b = (a + 1 + rng.random_range(0..6)) % bots;
        let d = (strengths[a] - strengths[b] + 30.0) / 400.0 * std::f64::consts::LN_10;
        let (w, l, nu) = ((d / 2.0).exp(), (-d / 2.0).exp(), 0.5);
        let u: f64 = rng.random::<f64>() * (w + l + nu);
        let score = if u < w {
            1
        } else if u < w + nu {
            0
        } else {
            -1
        };
        t.add(Result3 {
            white: a,
            black: b,
            score,
        });
    }
    let s = FitSettings {
        bots,
        pin: 0,
        pin_rating: 0.0,
        prior_games: 2.0,
    };
    let mut times = Vec::new();
    let mut steps = 0;
    for _ in 0..5 {
        let t0 = Instant::now();
        let f = fit(&t, &s);
        times.push(t0.elapsed());
        steps = f.steps;
    }
    println!(
        "refit, 300 bots, 100000 games: median {:.1} ms over 5 ({steps} Newton steps)",
        median(times).as_secs_f64() * 1e3
    );
}

fn get(addr: &str, path: &str) -> (Duration, usize) {
    let t0 = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut body = Vec::new();
    s.read_to_end(&mut body).expect("read");
    assert!(
        body.starts_with(b"HTTP/1.1 200"),
        "{path}: {:?}",
        String::from_utf8_lossy(&body[..body.len().min(200)])
    );
    (t0.elapsed(), body.len())
}

fn database_and_pages(work: &Path) {
    let dir = work.join("big");
    let league = League::init(
        &dir,
        LeagueSettings::new(referee::game::GameKind::Uttt, vec!["random".into()]),
    )
    .expect("init");
    // 300 students (their versions admitted directly: the figures are the
    // database's and the pages', not the admissions').
    let mut ids = vec![league.active().unwrap()[0].id];
    for i in 0..299 {
        let name = format!("s{i:03}");
        league
            .db
            .add_version(
                &name,
                &format!("{i:064}"),
                "submissions/none",
                Status::Pending,
            )
            .unwrap();
        let e = league.db.entries().unwrap().into_iter().last().unwrap();
        league
            .db
            .decide(e.id, Status::Admitted, "compliance check: 9 of 9 passed")
            .unwrap();
        ids.push(e.id);
    }
    // 100,000 real UTTT records of random play, stored as a run stores them.
    let entrants = vec![Entrant {
        name: "random".into(),
        spec: BotSpec::resolve::<Uttt>("random").unwrap(),
    }];
    let cfg = RunConfig {
        options: Default::default(),
        time: Default::default(),
        random_plies: 0,
        affinity: false,
    };
    let total = 100_000u64;
    let t0 = Instant::now();
    let mut rng = referee::seed::rng(2);
    use rand::Rng;
    for chunk in 0..(total / 10_000) {
        let pairings: Vec<Pairing> = (0..10_000u64)
            .map(|k| Pairing {
                id: chunk * 10_000 + k,
                players: [0, 0],
                seed: chunk * 10_000 + k,
                opening_seed: 0,
                round: 0,
            })
            .collect();
        let recs = run_games::<Uttt>(&entrants, &cfg, &pairings, 2, |_| {});
        let rows: Vec<Scheduled> = recs
            .iter()
            .map(|_| {
                let a = rng.random_range(0..ids.len());
                let b = (a + 1 + rng.random_range(0..4)) % ids.len();
                Scheduled {
                    id: 0,
                    phase: "ladder".to_string(),
                    cycle: 1 + chunk as i64,
                    players: [ids[a], ids[b]],
                    seed: 0,
                    opening_seed: 0,
                    round: 0,
                }
            })
            .collect();
        let scheduled: Vec<Scheduled> = league.db.schedule(&rows).unwrap();
        league
            .db
            .in_transaction(|| {
                for (s, r) in scheduled.iter().zip(&recs) {
                    let mut r = r.clone();
                    r.players = [format!("p{}", s.players[0]), format!("p{}", s.players[1])];
                    league.db.store_game(s, &r)?;
                }
                Ok(())
            })
            .unwrap();
    }
    println!(
        "database: 100000 UTTT games of random play stored in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    drop(league);
    let size = std::fs::metadata(dir.join("league.db")).map_or(0, |m| m.len());
    println!(
        "database size: {:.1} MiB for 300 entries and 100000 UTTT games ({} bytes per game)",
        size as f64 / (1 << 20) as f64,
        size / total
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let d2 = dir.clone();
    std::thread::spawn(move || {
        let limits = referee::league::http::WebLimits::default();
        referee::league::web::serve(&d2, "127.0.0.1:0".parse().unwrap(), limits, |a| {
            let _ = tx.send(a);
        })
        .expect("serve");
    });
    let addr = rx.recv().expect("listening").to_string();
    let (cold, _) = get(&addr, "/");
    println!(
        "page /: first request (the first fit is made before the server listens): {:.1} ms",
        cold.as_secs_f64() * 1e3
    );
    for path in [
        "/",
        "/student/s150",
        "/game/50000",
        "/league",
        "/api/ladder",
        "/api/student/s150",
    ] {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..20 {
            let (t, b) = get(&addr, path);
            times.push(t);
            bytes = b;
        }
        println!(
            "page {path}: median {:.2} ms, slowest {:.2} ms over 20 ({} KiB)",
            median(times.clone()).as_secs_f64() * 1e3,
            times.iter().max().unwrap().as_secs_f64() * 1e3,
            bytes / 1024
        );
    }
    // A refit while games arrive: the ladder after the cache expires.
    std::thread::sleep(referee::league::web::REFIT_EVERY + Duration::from_millis(100));
    let (warm_refit, _) = get(&addr, "/");
    println!(
        "page / after a refresh period (the refresher runs on its own thread): {:.1} ms",
        warm_refit.as_secs_f64() * 1e3
    );
}

fn referee_cli(args: &[&str]) -> (Duration, String) {
    let t0 = Instant::now();
    let o = Command::new(REFEREE)
        .args(args)
        .output()
        .expect("referee runs");
    let took = t0.elapsed();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "referee {args:?}: {text}");
    (took, text)
}

fn python_league(work: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("bots/python/random_bot.py")).unwrap();
    let dir = work.join("py");
    let d = dir.to_str().unwrap();
    referee_cli(&[
        "league",
        "init",
        d,
        "--game",
        "tictactoe",
        "--anchor",
        "random",
    ]);
    let settings = dir.join("league.toml");
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, text.replace("sandbox = true", "sandbox = false")).unwrap();
    let mut entries = String::from("game = \"tictactoe\"\ngames_per_pairing = 2\nseed = 3\n");
    for i in 0..50 {
        let b = work.join(format!("bots/b{i:02}"));
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("random_bot.py"), format!("# bot {i}\n{source}")).unwrap();
        std::fs::write(
            b.join("bot.toml"),
            format!("name = \"b{i:02}\"\ncommand = \"python3 random_bot.py\"\nreuse = true\n"),
        )
        .unwrap();
        referee_cli(&[
            "league",
            "submit",
            d,
            &format!("b{i:02}"),
            b.to_str().unwrap(),
        ]);
        entries.push_str(&format!(
            "[[bots]]\nname = \"b{i:02}\"\nmanifest = \"{}\"\n",
            b.join("bot.toml").display()
        ));
    }
    // Admissions first (not timed), then the sustained rate.
    referee_cli(&["league", "run", d, "--games", "2", "--jobs", "2"]);
    let games = 2450;
    let (took, _) = referee_cli(&[
        "league",
        "run",
        d,
        "--games",
        &games.to_string(),
        "--jobs",
        "2",
    ]);
    let league_rate = games as f64 / took.as_secs_f64();
    println!(
        "50 Python bots with reuse, --jobs 2: league run, {games} games: {league_rate:.1} games/s"
    );
    let file = work.join("py.toml");
    std::fs::write(&file, entries).unwrap();
    let out = work.join("py-tournament");
    let (took, _) = referee_cli(&[
        "tournament",
        file.to_str().unwrap(),
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let plain_rate = 2450.0 / took.as_secs_f64();
    println!(
        "50 Python bots with reuse, --jobs 2: league {league_rate:.1} games/s, round-robin \
         tournament {plain_rate:.1} games/s: {:.0} %",
        100.0 * league_rate / plain_rate
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let python_only = std::env::args().any(|a| a == "python");
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/league-bench");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    if !python_only {
        refit();
        database_and_pages(&work);
    }
    if !quick {
        python_league(&work);
    }
    let _ = std::fs::remove_dir_all(&work);
}
