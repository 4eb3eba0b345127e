//! `referee report` end to end: a real run directory, the real binary, and
//! the page opened in headless chromium, replays compared with positions
//! computed by the Rust game implementations.

use std::path::Path;

use referee::game::{Game, GameOptions, Notakto, TicTacToe, Uttt};
use referee::play::record::{GameRecord, Termination};
use referee::protocol::{Forfeit, ForfeitReason};

use crate::common::{builtin_records, chromium, run, run_chromium, stderr, stdout, write_games};

/// Every position of a record, start first, from the real game rules.
fn replay<G: Game>(r: &GameRecord) -> Vec<String> {
    let mut pos: G = r.start.parse().expect("start position parses");
    let mut out = vec![pos.to_string()];
    for m in &r.moves {
        let mv: G::Move = m.parse().expect("move parses");
        pos.play(mv).expect("recorded move is legal");
        out.push(pos.to_string());
    }
    out
}

fn positions(r: &GameRecord) -> Vec<String> {
    match r.game.name() {
        "tictactoe" => replay::<TicTacToe>(r),
        "notakto" => replay::<Notakto>(r),
        "uttt" => replay::<Uttt>(r),
        g => panic!("unknown game {g}"),
    }
}

const NASTY_LINE: &str = "</script><script>document.title='pwned'</script>";
const NASTY_STDERR: &str = "panic at line 3\n<img src=x onerror=\"document.title='pwned'\">";

/// Records of all three games plus one forfeit with hostile strings.
fn run_dir(dir: &Path) -> Vec<GameRecord> {
    let mut recs = builtin_records::<TicTacToe>(&["optimal", "greedy", "random"], 24, 1, 7);
    recs.extend(builtin_records::<Notakto>(
        &["optimal", "random"],
        4,
        101,
        7,
    ));
    recs.extend(builtin_records::<Uttt>(&["greedy", "random"], 4, 201, 7));
    // A forfeit: random tried an occupied cell after two moves.
    let mut f = Forfeit::new(ForfeitReason::Illegal, "cell 4 is taken");
    f.seat = referee::game::Seat::One;
    f.move_number = 3;
    f.line = Some(NASTY_LINE.into());
    f.stderr_tail = NASTY_STDERR.into();
    f.position = "X...O....".into();
    let mut pos = TicTacToe::start(&GameOptions::default());
    for m in ["0", "4"] {
        pos.play(m.parse().unwrap()).unwrap();
    }
    recs.push(GameRecord {
        id: 301,
        game: referee::game::GameKind::TicTacToe,
        players: ["random".into(), "greedy".into()],
        seed: 1,
        opening: vec![],
        start: ".........".into(),
        moves: vec!["0".into(), "4".into()],
        times_us: vec![12, 30],
        winner: Some(referee::game::Seat::Two),
        termination: Termination::Forfeit(ForfeitReason::Illegal),
        forfeit: Some(f),
        final_position: pos.to_string(),
        client: None,
        format: Vec::new(),
        rules: Default::default(),
    });
    // A game from an opening suite's position, won by a bot that plays no
    // other game: a perfect score, whose Elo has no finite bound.
    let mut pos: TicTacToe = "X...O....".parse().unwrap();
    for m in ["1", "7", "2"] {
        pos.play(m.parse().unwrap()).unwrap();
    }
    recs.push(GameRecord {
        id: 302,
        game: referee::game::GameKind::TicTacToe,
        players: ["perfect".into(), "random".into()],
        seed: 2,
        opening: vec![],
        start: "X...O....".into(),
        moves: vec!["1".into(), "7".into(), "2".into()],
        times_us: vec![5, 6, 7],
        winner: Some(referee::game::Seat::One),
        termination: Termination::Normal,
        forfeit: None,
        final_position: pos.to_string(),
        client: None,
        format: Vec::new(),
        rules: Default::default(),
    });
    write_games(dir, &recs);
    recs
}

#[test]
fn report_opens_in_chromium_and_replays_match_the_rules() {
    let guard = tempfile::tempdir().expect("temp dir");
    let tmp = guard.path().to_path_buf();
    let dir = tmp.join("run");
    let recs = run_dir(&dir);
    let o = run(&["report", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("report.html"), "{}", stdout(&o));
    let html_path = dir.join("report.html");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(!html.contains(NASTY_LINE) && !html.contains("<img src=x"));
    // Self-contained: nothing loaded from elsewhere.
    for bad in [
        "<link",
        "<script src",
        "<img",
        "<iframe",
        "fetch(",
        "XMLHttpRequest",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(bad), "the page contains {bad}");
    }

    let Some(browser) = chromium() else {
        crate::common::skipped(
            "the browser half of report_opens_in_chromium...: /usr/bin/chromium is not \
             installed (apt-get install -y chromium; .ci/run installs it)",
        );
        return;
    };
    // One game of each kind, the forfeit included.
    let pick: Vec<&GameRecord> = ["tictactoe", "notakto", "uttt"]
        .iter()
        .filter_map(|g| {
            recs.iter()
                .filter(|r| r.game.name() == *g)
                .max_by_key(|r| r.moves.len())
        })
        .chain(recs.iter().filter(|r| r.id == 301 || r.id == 302))
        .collect();
    assert_eq!(pick.len(), 5);
    let ids: Vec<String> = pick.iter().map(|r| r.id.to_string()).collect();
    let url = format!("file://{}#selftest={}", html_path.display(), ids.join(","));
    let out = run_chromium(&browser, &tmp.join("profile"), &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = dom
        .find("<pre id=\"selftest\">")
        .unwrap_or_else(|| panic!("no self-test output; chromium stderr:\n{}", stderr(&out)))
        + "<pre id=\"selftest\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&text).expect("self-test JSON");
    // The hostile strings ran nothing: the title is untouched.
    assert!(
        dom.contains("<title>referee report: run</title>"),
        "title changed"
    );

    // The leaderboard as the page shows it equals the standings.
    let st = referee::play::standings::Standings::from_records(&recs);
    let rows = v["leaderboard"].as_array().unwrap();
    let ranked = st.ranked();
    assert_eq!(rows.len(), ranked.len());
    for (row, b) in rows.iter().zip(&ranked) {
        assert_eq!(row[1], b.name.as_str());
        assert_eq!(row[2], b.total.games().to_string().as_str());
        assert_eq!(
            row[3],
            format!("{}-{}-{}", b.total.wins, b.total.draws, b.total.losses).as_str()
        );
        let elo = referee::play::stats::elo_trinomial(&b.total)
            .estimate
            .0
            .round();
        let shown = if elo.is_infinite() {
            referee::play::stats::Elo(elo).to_string()
        } else if elo > 0.0 {
            format!("+{elo}")
        } else {
            format!("{elo}")
        };
        assert_eq!(row[5], shown.as_str(), "{}", b.name);
    }
    // The perfect score ranks first and shows an open bound.
    assert_eq!(rows[0][1], "perfect");
    assert_eq!(rows[0][5], "+inf");

    // Every step of every replay shows the position the rules give.
    let games = v["games"].as_array().unwrap();
    assert_eq!(games.len(), pick.len());
    for (g, r) in games.iter().zip(&pick) {
        let want = positions(r);
        let got: Vec<String> = g["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, want, "game {} ({})", r.id, r.game);
        assert_eq!(got.last().unwrap(), &r.final_position);
        // Arrow left from the end goes back one move.
        assert_eq!(g["back"], want[want.len().saturating_sub(2)].as_str());
        // Opening it put its link in the address; its moves are listed.
        assert_eq!(g["hash"], format!("#replay={}", r.id).as_str());
        assert_eq!(g["moves"], r.moves.len());
    }
    let forfeit = &games[3];
    assert_eq!(forfeit["fline"], NASTY_LINE);
    assert_eq!(forfeit["fstderr"], NASTY_STDERR);

    // A screenshot of the page as people see it.
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let url = format!("file://{}", html_path.display());
    let out = run_chromium(
        &browser,
        &tmp.join("profile"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,900",
        ],
        &url,
    );
    let png = std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot: {}", stderr(&out)));
    assert!(
        png.len() > 10_000 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} bytes",
        png.len()
    );
}

#[test]
fn report_of_a_missing_dir_is_a_clear_error() {
    let o = run(&["report", "/nonexistent/run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/run/games.jsonl"),
        "{}",
        stderr(&o)
    );
}

/// A round robin of `n` bots, one tictactoe game a pairing: real games
/// (played by built-ins) under students' names.
fn many_bots(dir: &Path, n: usize) -> Vec<GameRecord> {
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    let mut recs =
        builtin_records::<TicTacToe>(&["optimal", "greedy", "random"], pairs.len() as u64, 1, 11);
    assert_eq!(recs.len(), pairs.len());
    for (k, (r, &(a, b))) in recs.iter_mut().zip(&pairs).enumerate() {
        let (p1, p2) = if k % 2 == 0 { (a, b) } else { (b, a) };
        r.players = [
            format!("student-{p1:02}-with-a-long-name"),
            format!("student-{p2:02}-with-a-long-name"),
        ];
    }
    write_games(dir, &recs);
    recs
}

/// The JSON the page's self-test writes into `<pre id="selftest">`.
fn selftest(dom: &str, browser_err: &str) -> serde_json::Value {
    let start = dom
        .find("<pre id=\"selftest\">")
        .unwrap_or_else(|| panic!("no self-test output; chromium stderr:\n{browser_err}"))
        + "<pre id=\"selftest\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&text).expect("self-test JSON")
}

#[test]
fn a_report_of_30_bots_fits_wide_and_narrow_screens_and_replays_open_by_link() {
    let guard = tempfile::tempdir().expect("temp dir");
    let tmp = guard.path().to_path_buf();
    let dir = tmp.join("ladder");
    let recs = many_bots(&dir, 30);
    let o = run(&["report", dir.to_str().unwrap(), "--title", "CS 101 ladder"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html_path = dir.join("report.html");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("<title>referee report: CS 101 ladder</title>"));
    // A folder with only games.jsonl says it keeps no settings.
    assert!(html.contains("keeps no settings"));

    let Some(browser) = chromium() else {
        crate::common::skipped(
            "the browser half of a_report_of_30_bots...: /usr/bin/chromium is not \
             installed (apt-get install -y chromium; .ci/run installs it)",
        );
        return;
    };
    let profile = tmp.join("profile");
    // A won game, whose winning line is drawn, and a drawn one.
    let won = recs
        .iter()
        .find(|r| r.winner.is_some() && r.forfeit.is_none())
        .expect("a won game");
    let drawn = recs
        .iter()
        .find(|r| r.winner.is_none())
        .expect("a drawn game");
    let file = format!("file://{}", html_path.display());

    // Wide and narrow: the whole crosstable is there, scrolling in its card
    // when it does not fit, and the page itself never scrolls sideways.
    for width in [1400, 420] {
        let url = format!("{file}#selftest={}", won.id);
        let size = format!("--window-size={width},1000");
        let out = run_chromium(&browser, &profile, &["--dump-dom", &size], &url);
        let dom = String::from_utf8_lossy(&out.stdout).into_owned();
        let v = selftest(&dom, &stderr(&out));
        let l = &v["layout"];
        let num = |x: &serde_json::Value| x.as_f64().unwrap_or(f64::NAN);
        assert_eq!(l["cells"], 30 * 30, "{width}: {l}");
        assert!(
            num(&l["page"]) <= num(&l["view"]),
            "{width}: page scrolls sideways: {l}"
        );
        assert!(
            num(&l["card"]) <= num(&l["view"]),
            "{width}: card cut off: {l}"
        );
        if width == 420 {
            assert!(
                num(&l["cross"][1]) > num(&l["cross"][0]),
                "crosstable scrolls: {l}"
            );
        }
        // Opening a game puts its link in the address, and the replay names
        // every move with its time.
        let g = &v["games"][0];
        assert_eq!(g["hash"], format!("#replay={}", won.id).as_str(), "{g}");
        assert_eq!(g["moves"], won.moves.len(), "{g}");

        let shot = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("target/report-30-bots-{width}.png"));
        let _ = std::fs::remove_file(&shot);
        let out = run_chromium(
            &browser,
            &profile,
            &[&format!("--screenshot={}", shot.display()), &size],
            &file,
        );
        let png =
            std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot: {}", stderr(&out)));
        assert!(
            png.len() > 10_000 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{} bytes",
            png.len()
        );
    }

    // A shared link opens its game at the end, the winning line marked as
    // the Rust rules give it.
    let board_of = |id: u64| {
        let url = format!("{file}#replay={id}");
        let out = run_chromium(&browser, &profile, &["--dump-dom"], &url);
        let dom = String::from_utf8_lossy(&out.stdout).into_owned();
        let at = dom
            .find(&format!("data-game=\"{id}\""))
            .unwrap_or_else(|| panic!("game {id} not opened: {}", stderr(&out)));
        let from = at + dom[at..].find("id=\"board\"").expect("a board");
        let to = from + dom[from..].find("id=\"moves\"").expect("a move list");
        dom[from..to].to_string()
    };
    let board = board_of(won.id);
    assert!(
        board.contains(&format!("data-pos=\"{}\"", won.final_position)),
        "{board}"
    );
    let pos: TicTacToe = won.final_position.parse().unwrap();
    assert_eq!(pos.winning_line().len(), 3);
    assert_eq!(board.matches(" win\"").count(), 3, "{board}");
    let board = board_of(drawn.id);
    assert_eq!(board.matches(" win\"").count(), 0, "{board}");
}
