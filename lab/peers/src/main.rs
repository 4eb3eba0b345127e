//! Peer comparison of referee's UTTT engine with the `board-game` crate
//! (KarelPeeters/board-game-rs, which calls the game STTT):
//!
//! 1. random playouts per second of both boards, on the same run;
//! 2. MCTS iterations per second of both engines from the empty board;
//! 3. paired games, our `optimal` against board-game's `MCTSBot`, at equal
//!    wall time per move.
//!
//! `MCTSBot` only takes an iteration budget. Its budget for a move is its
//! speed in the games themselves times the time per move: a [`PeerClock`]
//! times every move it makes and keeps its iterations per second for each
//! phase of the game (ten plies), over all games so far, so that it gets
//! the same wall time as our engine under the same load (the rate measured
//! alone from the empty board, before the games, only starts it off). Our
//! engine runs with a time budget. The table gives both engines' average
//! time per move. `--iters N` gives MCTSBot a fixed N iterations instead.
//! The pairs' openings (two random plies) are drawn from a seed, the time
//! per move by default; `--seed N` draws them from N instead, so that a
//! second run adds games on new openings rather than replaying the
//! first's. `--puct`, `--fpu`, `--value-net` and `--policy-net` change our
//! engine's settings, to try them against MCTSBot.
//!
//! Each pair's two games (one opening, both seats) also count as a pair:
//! the line after the table gives the pentanomial counts and the Elo per
//! pair. `--games-log FILE` appends one line per game to FILE (time per
//! move, openings' seed, pair, our seat, our points, plies, the moves with
//! our root value after each of ours; tab separated), so that two runs on
//! the same openings can be compared game by game. `--replay FILE` plays
//! again, instead, the games of such a log that our engine did not win
//! (same openings and seats), and `--our-ms N` gives our engine N ms a move
//! while MCTSBot keeps the run's time: with both, whether the games drawn
//! or lost at equal time are won with more time, that is, whether they are
//! lost to strength or locked by the opening.
//!
//! Run: `cd lab/peers && cargo run --release -- [--games N] [--ms MS,MS]`
//! (defaults: 200 games at 100 ms), games on `--threads` threads at once
//! (default: the number of cores; the rates are measured first, alone).
//! A workspace of its own, so that nothing in referee's workspace compiles
//! board-game.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use board_game::ai::mcts::MCTSBot;
use board_game::ai::Bot as PeerBot;
use board_game::board::{Board as PeerBoard, Outcome as PeerOutcome, Player};
use board_game::games::sttt::{Coord, STTTBoard};
use clap::Parser;
use rand::SeedableRng as _;
use rand08::SeedableRng as _;
use referee::bot::uttt::lab::{Mcts, PolicyNet, SearchConfig, ValueNet};
use referee::game::{Game, Outcome, Seat, Uttt, UtttMove};
use referee::play::standings::Wdl;
use referee::play::stats::{elo_pentanomial, elo_trinomial, Pentanomial};

/// The board-game crate's coordinate of our move: both number the macro
/// boards and their cells 0..8 row-major, so the index is board * 9 + cell.
fn to_peer(mv: UtttMove) -> Coord {
    Coord::from_oo(mv.board(), mv.cell())
}

fn from_peer(c: Coord) -> Option<UtttMove> {
    UtttMove::new(c.om(), c.os())
}

fn playouts_per_second() -> (f64, f64) {
    let span = Duration::from_secs(3);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let start = Instant::now();
    let mut ours = 0u64;
    let mut wins = 0u64;
    while start.elapsed() < span {
        for _ in 0..1000 {
            let mut p = Uttt::new();
            if p.random_playout(&mut rng).winner().is_some() {
                wins += 1;
            }
        }
        ours += 1000;
    }
    let ours_rate = ours as f64 / start.elapsed().as_secs_f64();
    let mut rng = rand08::rngs::SmallRng::seed_from_u64(1);
    let start = Instant::now();
    let mut theirs = 0u64;
    while start.elapsed() < span {
        for _ in 0..1000 {
            let mut b = STTTBoard::default();
            while !b.is_done() {
                if b.play_random_available_move(&mut rng).is_err() {
                    break;
                }
            }
            if matches!(b.outcome(), Some(PeerOutcome::WonBy(_))) {
                wins += 1;
            }
        }
        theirs += 1000;
    }
    let theirs_rate = theirs as f64 / start.elapsed().as_secs_f64();
    std::hint::black_box(wins);
    (ours_rate, theirs_rate)
}

fn iterations_per_second() -> (f64, f64, f64) {
    let iters = 100_000u32;
    let root = Uttt::new();
    let rate = |cfg: SearchConfig| {
        let mut m = Mcts::new(
            SearchConfig {
                iterations: iters,
                ..cfg
            },
            1,
        );
        let start = Instant::now();
        std::hint::black_box(m.search(&root));
        m.stats().iterations as f64 / start.elapsed().as_secs_f64()
    };
    let optimal = rate(SearchConfig::optimal());
    let uct = rate(SearchConfig::plain_uct());
    let mut bot = MCTSBot::new(iters as u64, 2.0, rand08::rngs::SmallRng::seed_from_u64(1));
    let start = Instant::now();
    let board = STTTBoard::default();
    std::hint::black_box(bot.select_move(&board).ok());
    let theirs = iters as f64 / start.elapsed().as_secs_f64();
    (optimal, uct, theirs)
}

/// Phases of the game for [`PeerClock`]: plies 0-9, 10-19, ..., 80.
const PHASES: usize = 9;

fn phase(ply: usize) -> usize {
    (ply / 10).min(PHASES - 1)
}

/// Both engines' time per move in the games, and MCTSBot's iterations per
/// second by phase, which set its budget.
struct PeerClock {
    ms: u64,
    /// A fixed budget (`--iters`) instead of a timed one.
    fixed: Option<u64>,
    /// The rate measured before the games, for a phase not yet timed.
    start_rate: f64,
    state: Mutex<ClockState>,
}

#[derive(Default)]
struct ClockState {
    /// MCTSBot's iterations and seconds, by phase.
    phase: [(u64, f64); PHASES],
    /// Moves and seconds of ours and of MCTSBot.
    ours: (u64, f64),
    /// Our iterations, and our moves whose tree ended at its node cap.
    ours_iters: u64,
    ours_capped: u64,
    theirs: (u64, f64),
}

impl PeerClock {
    fn new(ms: u64, fixed: Option<u64>, start_rate: f64) -> PeerClock {
        PeerClock {
            ms,
            fixed,
            start_rate,
            state: Mutex::new(ClockState::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ClockState> {
        self.state.lock().expect("no thread panicked")
    }

    /// MCTSBot's budget for a move at `ply`: its rate in this phase (once
    /// it has a tenth of a second of moves there) times the time per move.
    fn budget(&self, ply: usize) -> u64 {
        if let Some(n) = self.fixed {
            return n;
        }
        let (iters, secs) = self.state().phase[phase(ply)];
        let rate = if secs >= 0.1 {
            iters as f64 / secs
        } else {
            self.start_rate
        };
        ((rate * self.ms as f64 / 1000.0) as u64).max(1)
    }

    fn record_theirs(&self, ply: usize, iters: u64, secs: f64) {
        let mut st = self.state();
        let slot = &mut st.phase[phase(ply)];
        slot.0 += iters;
        slot.1 += secs;
        st.theirs.0 += 1;
        st.theirs.1 += secs;
    }

    fn record_ours(&self, secs: f64, iters: u32, capped: bool) {
        let mut st = self.state();
        st.ours.0 += 1;
        st.ours.1 += secs;
        st.ours_iters += u64::from(iters);
        st.ours_capped += u64::from(capped);
    }

    /// Average milliseconds a move: ours, MCTSBot's; and MCTSBot's average
    /// iterations a move.
    fn averages(&self) -> (f64, f64, f64) {
        let st = self.state();
        let avg = |(n, s): (u64, f64)| 1000.0 * s / n.max(1) as f64;
        let iters: u64 = st.phase.iter().map(|p| p.0).sum();
        (
            avg(st.ours),
            avg(st.theirs),
            iters as f64 / st.theirs.0.max(1) as f64,
        )
    }
}

/// Plays one game from `opening` (moves applied to both boards) and returns
/// the result for our engine, which plays `ours`, and the game's plies.
fn play_game(
    opening: &[UtttMove],
    ours: Seat,
    clock: &PeerClock,
    our_ms: u64,
    ours_setup: (SearchConfig, Nets),
    seed: u64,
) -> (f64, usize, String) {
    let (base, nets) = ours_setup;
    let mut pos = Uttt::new();
    let mut peer = STTTBoard::default();
    for &mv in opening {
        pos.play_unchecked(mv);
        peer.play(to_peer(mv))
            .expect("the opening is legal on both boards");
    }
    let cfg = SearchConfig {
        iterations: u32::MAX,
        time: Some(Duration::from_millis(our_ms)),
        ..base
    };
    let mut engine = Mcts::new(cfg, seed);
    engine.set_value_net(nets.0);
    engine.set_policy_net(nets.1);
    let mut rng = rand08::rngs::SmallRng::seed_from_u64(seed ^ 0x5eed);
    let mut ply = opening.len();
    let mut record = String::new();
    for mv in opening {
        record.push_str(&move_digits(*mv));
        record.push(' ');
    }
    while !pos.is_over() {
        let start = Instant::now();
        let mv = if pos.to_move() == ours {
            let mv = engine.search(&pos).expect("a move while the game is on");
            let stats = engine.stats();
            // The tree is full when one more expansion (81 children at
            // most) would pass its cap.
            let capped = stats.nodes + 81 > cfg.node_cap();
            clock.record_ours(start.elapsed().as_secs_f64(), stats.iterations, capped);
            let value = engine
                .root_value(&pos)
                .map_or("-".into(), |v| format!("{v:.3}"));
            record.push_str(&format!("{}={value} ", move_digits(mv)));
            mv
        } else {
            // A bot per move, with this move's budget (MCTSBot keeps no
            // tree between moves). Its search stops early once the root is
            // proven, so the clock records the iterations it ran (the
            // root's visits: one per iteration), not the budget: counting
            // the budget made a proven move look like millions of
            // iterations in no time, and the rate and the next budgets
            // grew without bound.
            let budget = clock.budget(ply);
            let mut theirs = MCTSBot::new(budget, 2.0, &mut rng);
            let tree = theirs.build_tree(&peer);
            let ran = u64::try_from(tree[0].visits).unwrap_or(0).max(1);
            clock.record_theirs(ply, ran, start.elapsed().as_secs_f64());
            let mv = from_peer(tree.best_move()).expect("board-game coordinates are in range");
            record.push_str(&move_digits(mv));
            record.push(' ');
            mv
        };
        ply += 1;
        assert!(pos.is_legal(mv), "illegal move {mv} in {pos}");
        pos.play_unchecked(mv);
        peer.play(to_peer(mv))
            .expect("the same move is legal on both boards");
    }
    // Both boards must agree on the result.
    let peer_result = peer.outcome();
    let result = pos.outcome().expect("game over");
    match (result, peer_result) {
        (Outcome::Draw, Some(PeerOutcome::Draw)) => {}
        (Outcome::Win(Seat::One), Some(PeerOutcome::WonBy(Player::A))) => {}
        (Outcome::Win(Seat::Two), Some(PeerOutcome::WonBy(Player::B))) => {}
        (a, b) => panic!("the boards disagree: {a:?} against {b:?}"),
    }
    record.pop();
    (result.points(ours), ply, record)
}

/// A move in the per-game log: its board's digit, then its cell's (`40`
/// is board 4, cell 0).
fn move_digits(mv: UtttMove) -> String {
    format!("{}{}", mv.board(), mv.cell())
}

/// The first `n` pairs' openings drawn from `seed`: two random plies each.
fn openings(seed: u64, n: usize) -> Vec<Vec<UtttMove>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut opening = Vec::new();
            let mut p = Uttt::new();
            for _ in 0..2 {
                let mv = p.random_move(&mut rng).expect("the opening has moves");
                opening.push(mv);
                p.play_unchecked(mv);
            }
            opening
        })
        .collect()
}

/// The games of a `--games-log` log that our engine did not win, as
/// (openings' seed, pair, our seat), in the log's order; the error names
/// the file and line.
fn replay_games(path: &str) -> Result<Vec<(u64, usize, Seat)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    parse_replay(&text).map_err(|e| format!("{path}:{e}"))
}

/// One game of a `--games-log` log.
struct LoggedGame {
    /// The openings' seed.
    seed: u64,
    pair: usize,
    /// Our seat.
    seat: Seat,
    /// Our points.
    points: f64,
}

/// The games of a `--games-log` log's text; the error starts with the
/// line.
fn logged_games(text: &str) -> Result<Vec<LoggedGame>, String> {
    let mut games = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = |what: &str| format!("{}: {what}", i + 1);
        if fields.len() != 7 {
            return Err(bad("expected a --games-log line (7 tab-separated fields)"));
        }
        games.push(LoggedGame {
            seed: fields[1].parse().map_err(|_| bad("bad openings' seed"))?,
            pair: fields[2].parse().map_err(|_| bad("bad pair"))?,
            seat: match fields[3] {
                "1" => Seat::One,
                "2" => Seat::Two,
                _ => return Err(bad("our seat is not 1 or 2")),
            },
            points: fields[4].parse().map_err(|_| bad("bad points"))?,
        });
    }
    Ok(games)
}

/// [`replay_games`] on the log's text; the error starts with the line.
fn parse_replay(text: &str) -> Result<Vec<(u64, usize, Seat)>, String> {
    Ok(logged_games(text)?
        .into_iter()
        .filter(|g| g.points < 1.0)
        .map(|g| (g.seed, g.pair, g.seat))
        .collect())
}

/// The per-game log of `--games-log`: the file, opened for appending,
/// or `None` without one (a write that fails sets it back to `None`).
fn games_log(path: &Option<PathBuf>) -> Result<Mutex<Option<std::fs::File>>, String> {
    let Some(path) = path else {
        return Ok(Mutex::new(None));
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(|f| Mutex::new(Some(f)))
        .map_err(|e| format!("--games-log {}: {e}", path.display()))
}

/// One line of the per-game log: time per move, openings' seed, pair, our
/// seat (1 or 2), our points, the game's plies and its moves, tab
/// separated. The moves are [`move_digits`], space separated, the opening's
/// first; each of ours is followed by `=` and our root's value after its
/// search (the expected score of the player to move: 1 a proven win, 0.5 a
/// proven draw, 0 a proven loss; `-` with one legal move, no search).
fn log_line(
    ms: u64,
    seed: u64,
    pair: usize,
    seat: Seat,
    points: f64,
    plies: usize,
    moves: &str,
) -> String {
    let seat = if seat == Seat::One { 1 } else { 2 };
    format!("{ms}\t{seed}\t{pair}\t{seat}\t{points}\t{plies}\t{moves}\n")
}

/// Our engine's networks.
type Nets = (&'static ValueNet, &'static PolicyNet);

/// The comparison's settings.
#[derive(Parser, Debug)]
#[command(
    name = "referee-peers",
    about = "referee's UTTT engine against board-game's MCTSBot"
)]
struct Args {
    /// Games per time per move (even: pairs of games from one opening).
    #[arg(long, default_value_t = 200)]
    games: u64,
    /// Times per move in ms, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "100")]
    ms: Vec<u64>,
    /// Games played at once (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// A fixed number of iterations a move for MCTSBot instead of its
    /// clock.
    #[arg(long)]
    iters: Option<u64>,
    /// The openings' seed (default: the time per move).
    #[arg(long)]
    seed: Option<u64>,
    /// Our engine's time per move, when it differs from MCTSBot's.
    #[arg(long)]
    our_ms: Option<u64>,
    /// Append one line per game to this file.
    #[arg(long)]
    games_log: Option<PathBuf>,
    /// Play again the games of such a log that our engine did not win.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Our PUCT constant.
    #[arg(long)]
    puct: Option<f32>,
    /// Our PUCT first-play reduction.
    #[arg(long)]
    fpu: Option<f32>,
    /// Our value network file (default: the built-in one).
    #[arg(long)]
    value_net: Option<PathBuf>,
    /// Our policy network file (default: the built-in one).
    #[arg(long)]
    policy_net: Option<PathBuf>,
}

/// A network file loaded for the rest of the run, or the built-in one.
fn network<N>(
    path: &Option<PathBuf>,
    builtin: fn() -> &'static N,
    load: fn(&str) -> Result<N, String>,
) -> Result<&'static N, String> {
    match path {
        None => Ok(builtin()),
        Some(p) => Ok(Box::leak(Box::new(load(&p.to_string_lossy())?))),
    }
}

/// Ends the run with `error`.
fn fail(error: String) -> ! {
    eprintln!("referee-peers: error: {error}");
    std::process::exit(2)
}

fn main() {
    let args = Args::parse();
    let games = (args.games.max(2) / 2) * 2;
    let times = args.ms.clone();
    // Games run on this many threads at once (each game alternates between
    // the two engines, so one thread keeps one core busy).
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let (fixed, opening_seed, our_ms) = (args.iters, args.seed, args.our_ms);
    let replay = args.replay.as_ref().map(|path| {
        replay_games(&path.to_string_lossy()).unwrap_or_else(|e| fail(format!("--replay {e}")))
    });
    let defaults = SearchConfig::optimal();
    let base = SearchConfig {
        puct: args.puct.unwrap_or(defaults.puct),
        puct_fpu: args.fpu.unwrap_or(defaults.puct_fpu),
        ..defaults
    };
    let nets: Nets = (
        network(&args.value_net, ValueNet::builtin, ValueNet::load)
            .unwrap_or_else(|e| fail(format!("--value-net: {e}"))),
        network(&args.policy_net, PolicyNet::builtin, PolicyNet::load)
            .unwrap_or_else(|e| fail(format!("--policy-net: {e}"))),
    );
    let log = games_log(&args.games_log).unwrap_or_else(|e| fail(e));
    if base != defaults {
        println!(
            "ours: PUCT {} with first-play reduction {}",
            base.puct, base.puct_fpu
        );
    }
    for (flag, file) in [
        ("--value-net", &args.value_net),
        ("--policy-net", &args.policy_net),
    ] {
        if let Some(file) = file {
            println!("ours: {flag} {}", file.display());
        }
    }
    let (ours, theirs) = playouts_per_second();
    println!("random playouts/s   referee {ours:>12.0}   board-game {theirs:>12.0}");
    let (opt, uct, bg) = iterations_per_second();
    println!(
        "MCTS iterations/s   referee optimal {opt:>10.0}   referee uct {uct:>10.0}   board-game MCTSBot {bg:>10.0}"
    );
    println!();
    println!("| opponent | time per move | games | score | Elo (95 % interval) | average move (ours / MCTSBot) |");
    println!("|---|---|---|---|---|---|");
    for ms in times {
        let clock = PeerClock::new(ms, fixed, bg);
        // The games: both seats of each pair's opening (two random plies,
        // drawn up front so that the pairs are the same whatever the number
        // of threads), or those of `--replay`. The openings' seed is
        // the time per move unless `--seed` gives another (to add games
        // on new openings).
        let seed = opening_seed.unwrap_or(ms);
        let jobs = match &replay {
            Some(games) => games.clone(),
            None => {
                let openings = openings(seed, (games / 2) as usize);
                (0..openings.len())
                    .flat_map(|pair| [(seed, pair, Seat::One), (seed, pair, Seat::Two)])
                    .collect()
            }
        };
        // Each seed's openings, drawn once, up to its last pair played.
        let mut pairs: HashMap<u64, usize> = HashMap::new();
        for &(seed, pair, _) in &jobs {
            let n = pairs.entry(seed).or_default();
            *n = (*n).max(pair + 1);
        }
        let by_seed: HashMap<u64, Vec<Vec<UtttMove>>> = pairs
            .into_iter()
            .map(|(seed, n)| (seed, openings(seed, n)))
            .collect();
        let next = AtomicUsize::new(0);
        let results = Mutex::new((Wdl::default(), Pentanomial::default(), HashMap::new()));
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(seed, pair, seat)) = jobs.get(job) else {
                        break;
                    };
                    let opening = &by_seed[&seed][pair];
                    let k = usize::from(seat == Seat::Two);
                    let (points, plies, moves) = play_game(
                        opening,
                        seat,
                        &clock,
                        our_ms.unwrap_or(ms),
                        (base, nets),
                        (pair * 2 + k) as u64,
                    );
                    let mut file = log.lock().expect("no thread panicked");
                    if let Some(f) = file.as_mut() {
                        let line = log_line(ms, seed, pair, seat, points, plies, &moves);
                        // A failed write stops the log, not the run: the
                        // games and the table still count.
                        if let Err(e) = f.write_all(line.as_bytes()) {
                            *file = None;
                            eprintln!("\n--games-log: {e}; no more games logged");
                        }
                    }
                    drop(file);
                    let mut guard = results.lock().expect("no thread panicked");
                    let (wdl, penta, halves) = &mut *guard;
                    wdl.add(points);
                    // A pair counts once both its games are over.
                    let half: &mut [Option<f64>; 2] = halves.entry((seed, pair)).or_default();
                    half[k] = Some(points);
                    if let [Some(a), Some(b)] = *half {
                        penta.add_pair(a, b);
                    }
                    eprint!(
                        "\r{ms} ms: {} games, +{} ={} -{}, score {:.3}",
                        wdl.games(),
                        wdl.wins,
                        wdl.draws,
                        wdl.losses,
                        wdl.score()
                    );
                });
            }
        });
        let (wdl, penta, _) = results.into_inner().expect("no thread panicked");
        eprintln!();
        let elo = elo_trinomial(&wdl);
        let (ours_ms, theirs_ms, iters) = clock.averages();
        let budget = match fixed {
            Some(n) => format!("{n} iterations a move"),
            None => format!("timed: {iters:.0} iterations a move on average"),
        };
        println!(
            "| board-game MCTSBot ({budget}) | {ms} ms | {} | {:.1} % (+{} ={} -{}) | {elo} | {ours_ms:.1} / {theirs_ms:.1} ms |",
            wdl.games(),
            100.0 * wdl.score(),
            wdl.wins,
            wdl.draws,
            wdl.losses
        );
        println!(
            "pairs LL, LD, DD+WL, WD, WW: {penta} ({} pairs); Elo per pair {}",
            penta.pairs(),
            elo_pentanomial(&penta)
        );
        let st = clock.state();
        println!(
            "ours: {:.0} iterations a move on average; {} of {} moves ended with the tree at its node cap",
            st.ours_iters as f64 / st.ours.0.max(1) as f64,
            st.ours_capped,
            st.ours.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_names_the_game_and_our_result() {
        assert_eq!(
            log_line(1000, 3, 17, Seat::Two, 0.5, 81, "40 04=0.612"),
            "1000\t3\t17\t2\t0.5\t81\t40 04=0.612\n"
        );
        assert_eq!(
            log_line(100, 100, 0, Seat::One, 1.0, 40, "88"),
            "100\t100\t0\t1\t1\t40\t88\n"
        );
    }

    #[test]
    fn a_replay_takes_the_games_not_won_and_names_a_bad_line() {
        let log =
            "1000\t1000\t0\t1\t1\t47\t77 74\n1000\t3\t5\t2\t0.5\t51\t88\n100\t2\t9\t1\t0\t40\t11\n";
        assert_eq!(
            parse_replay(log),
            Ok(vec![(3, 5, Seat::Two), (2, 9, Seat::One)])
        );
        assert_eq!(
            parse_replay("1000\t1000\t0\t1\t1\t47\t77\n1000\t1\t0\t3\t1\t47\t77\n"),
            Err("2: our seat is not 1 or 2".into())
        );
        assert!(parse_replay("garbage").is_err_and(|e| e.starts_with("1: ")));
        // The openings are those of the run that logged the games.
        assert_eq!(openings(7, 3)[..2], openings(7, 2)[..]);
    }

    fn nets() -> Nets {
        (ValueNet::builtin(), PolicyNet::builtin())
    }

    #[test]
    fn a_game_ends_with_a_result_on_both_boards() {
        let clock = PeerClock::new(5, Some(200), 200_000.0);
        let opening = [
            UtttMove::new(4, 4).expect("a move"),
            UtttMove::new(4, 0).expect("a move"),
        ];
        let (points, plies, moves) = play_game(
            &opening,
            Seat::One,
            &clock,
            5,
            (SearchConfig::optimal(), nets()),
            1,
        );
        assert!([0.0, 0.5, 1.0].contains(&points));
        assert!((17..=81).contains(&plies), "{plies} plies");
        // The record replays to the end: every move, ours with a value.
        let words: Vec<&str> = moves.split(' ').collect();
        assert_eq!(words.len(), plies);
        assert_eq!(&words[..2], ["44", "40"]);
        let mut pos = Uttt::new();
        for (ply, word) in words.iter().enumerate() {
            let (digits, value) = word.split_once('=').unwrap_or((word, ""));
            let d = digits.as_bytes();
            let mv = UtttMove::new(d[0] - b'0', d[1] - b'0').expect("two digits");
            assert!(pos.is_legal(mv), "{word} at ply {ply}");
            let ours = ply >= 2 && pos.to_move() == Seat::One;
            assert_eq!(!value.is_empty(), ours, "{word} at ply {ply}");
            if ours && value != "-" {
                let v: f32 = value.parse().expect("a value");
                assert!((0.0..=1.0).contains(&v), "{word}");
            }
            pos.play_unchecked(mv);
        }
        assert!(pos.is_over());
    }

    #[test]
    fn the_clock_budgets_by_the_rate_timed_in_each_phase() {
        let clock = PeerClock::new(100, None, 200_000.0);
        // Untimed phases start from the rate measured before the games.
        assert_eq!(clock.budget(0), 20_000);
        // Under a tenth of a second timed, still the starting rate.
        clock.record_theirs(3, 1_000, 0.05);
        assert_eq!(clock.budget(5), 20_000);
        // Then the phase's own rate: 1 000 000 iterations/s.
        clock.record_theirs(9, 99_000, 0.05);
        assert_eq!(clock.budget(0), 100_000);
        // Other phases are untouched; plies past 80 share the last one.
        assert_eq!(clock.budget(10), 20_000);
        clock.record_theirs(85, 50_000, 0.1);
        assert_eq!(clock.budget(80), 50_000);
        clock.record_ours(0.08, 1000, false);
        let (ours, theirs, iters) = clock.averages();
        assert!((ours - 80.0).abs() < 1e-9);
        assert!((theirs - 200.0 / 3.0).abs() < 1e-9);
        assert!((iters - 50_000.0).abs() < 1e-9);
        // A fixed budget ignores the timings.
        assert_eq!(PeerClock::new(100, Some(7), 1.0).budget(0), 7);
    }
}
