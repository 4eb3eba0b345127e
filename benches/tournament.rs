//! Harness throughput: a round-robin of the built-in random and greedy bots
//! on tic-tac-toe, written to games.jsonl, at 1 and 2 jobs. Prints games per
//! wall-clock second and games per CPU second of the whole process (every
//! thread: workers, writer, standings), the "per core" figure; the target is
//! at least 200,000 games per core-second. CPU time is the figure to trust on
//! a shared machine, where wall time also measures the other tenants.
//!
//! Then the cost of a match's statistics and interim output: the same
//! games (greedy against greedy, so no SPRT is ever decided) as a
//! two-bot tournament (standings only) and as a match (standings, W-D-L,
//! pentanomial pairs counted in id order, forfeits kept, the running
//! figures formatted for a progress bar every 200 ms and a rating line
//! every 10,000 games), and as a match with an SPRT evaluated after every
//! pair; each written to games.jsonl, each run `BENCH_REPS` times (default
//! 5) in turn, the least wall time and the least CPU time of each kept (on
//! a shared machine the other tenants only ever add time). The target is a
//! match at most 5 % slower.
//!
//! `cargo bench --bench tournament` (optionally `-- GAMES`, default 400000).

use std::path::Path;
use std::time::Instant;

use std::sync::atomic::{AtomicU64, Ordering};

use referee::bot::BotSpec;
use referee::game::{GameOptions, TicTacToe};
use referee::matches::{self, MatchConfig};
use referee::play::runner::{Entrant, RunConfig};
use referee::play::Observer;
use referee::play::RunOptions;
use referee::tournament::{self, TournamentFile};

fn main() {
    let games: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(400_000);
    let text = format!(
        "game = \"tictactoe\"\ngames_per_pairing = {games}\nseed = 1\n\
         [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n"
    );
    let t = TournamentFile::parse(Path::new("bench.toml"), text, None)
        .expect("bench tournament parses")
        .resolve::<TicTacToe>()
        .expect("built-in bots resolve");
    for jobs in [1, 2] {
        let dir =
            std::env::temp_dir().join(format!("referee-bench-tour-{}-{jobs}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = RunOptions {
            jobs,
            out: Some(dir.clone()),
            ..RunOptions::default()
        };
        let cpu0 = cpu_seconds();
        let start = Instant::now();
        let r = tournament::run::<TicTacToe>(&t, &opts, &referee::play::Silent)
            .expect("tournament runs");
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let bytes = std::fs::metadata(dir.join("games.jsonl")).map_or(0, |m| m.len());
        assert_eq!(r.played, games);
        println!(
            "tournament/tictactoe random vs greedy, --out, jobs {jobs}: {games} games in {secs:.3} s \
             = {:.0} games/s wall; {cpu:.3} s CPU = {:.0} games per core-second ({:.1} MB of JSONL)",
            games as f64 / secs,
            games as f64 / cpu,
            bytes as f64 / 1e6
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    statistics_overhead(games);
}

/// Counts what a run tells its observer, as a terminal would draw it: the
/// text is made by the library either way.
#[derive(Default)]
struct Counting {
    notes: AtomicU64,
    statuses: AtomicU64,
}

impl Observer for Counting {
    fn note(&self, _: &str) {
        self.notes.fetch_add(1, Ordering::Relaxed);
    }
    fn status(&self, _: &str) {
        self.statuses.fetch_add(1, Ordering::Relaxed);
    }
}

/// One run of `games` games of greedy against greedy: as a tournament
/// (`None`), a match, or a match with an SPRT. Returns wall and CPU seconds
/// and what the observer was told.
fn one_run(games: u64, jobs: usize, kind: &str) -> (f64, f64, u64, u64) {
    // Under target/, where no other program's clean-up of /tmp reaches.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "target/bench-stats/{}-{kind}-{jobs}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = RunOptions {
        jobs,
        out: Some(dir.clone()),
        ..RunOptions::default()
    };
    let observer = Counting::default();
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    if kind == "tournament" {
        let text = format!(
            "game = \"tictactoe\"\ngames_per_pairing = {games}\nseed = 1\n\
             [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n\
             [[bots]]\nname = \"greedy (2)\"\nbuiltin = \"greedy\"\n"
        );
        let t = TournamentFile::parse(Path::new("bench.toml"), text, None)
            .expect("bench tournament parses")
            .resolve::<TicTacToe>()
            .expect("built-in bots resolve");
        let r = tournament::run::<TicTacToe>(&t, &opts, &observer).expect("tournament runs");
        assert_eq!(r.played, games);
    } else {
        let entrants = ["greedy", "greedy (2)"].map(|name| Entrant {
            name: name.to_string(),
            spec: BotSpec::resolve::<TicTacToe>("greedy").expect("built-in bot"),
        });
        let cfg = MatchConfig {
            games,
            seed: 1,
            run: RunConfig {
                options: GameOptions::default(),
                time: Default::default(),
                random_plies: 0,
                affinity: true,
            },
            openings: None,
            // Equal bots and a 1-nElo gap with 0.1 % errors: undecided
            // long after the bench's games.
            sprt: (kind == "sprt").then(|| {
                "elo0=0,elo1=1,alpha=0.001,beta=0.001"
                    .parse()
                    .expect("a valid SPRT")
            }),
            rating_interval: 10_000,
        };
        let r = matches::run::<TicTacToe>(&entrants, &cfg, &opts, &observer).expect("match runs");
        assert_eq!(r.games(), games, "the SPRT must not be decided");
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let _ = std::fs::remove_dir_all(&dir);
    (
        secs,
        cpu,
        observer.notes.load(Ordering::Relaxed),
        observer.statuses.load(Ordering::Relaxed),
    )
}

fn statistics_overhead(games: u64) {
    for jobs in [1, 2] {
        let kinds = ["tournament", "match", "sprt"];
        let reps: usize = std::env::var("BENCH_REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(5);
        let mut best = [(f64::MAX, f64::MAX, 0, 0); 3];
        for _ in 0..reps {
            for (i, kind) in kinds.iter().enumerate() {
                let r = one_run(games, jobs, kind);
                println!(
                    "  {kind:<10} jobs {jobs}: {games} games in {:.3} s wall ({:.0} games/s), \
                     {:.3} s CPU; {} notes, {} statuses",
                    r.0,
                    games as f64 / r.0,
                    r.1,
                    r.2,
                    r.3
                );
                best[i] = (best[i].0.min(r.0), best[i].1.min(r.1), r.2, r.3);
            }
        }
        let base = best[0];
        for (i, kind) in kinds.iter().enumerate() {
            println!(
                "statistics/{kind}, jobs {jobs}: {:.0} games/s wall ({:+.1} % time), \
                 {:.0} games per core-second ({:+.1} % CPU)",
                games as f64 / best[i].0,
                100.0 * (best[i].0 / base.0 - 1.0),
                games as f64 / best[i].1,
                100.0 * (best[i].1 / base.1 - 1.0),
            );
        }
    }
}

/// User + system CPU time of this process so far, in seconds.
fn cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage on self");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    t(u.user_time()) + t(u.system_time())
}
