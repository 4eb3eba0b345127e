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
//! engine runs with `time_ms`. The table gives both engines' average time
//! per move. `PEERS_ITERS=N` gives MCTSBot a fixed N iterations instead.
//! The pairs' openings (two random plies) are drawn from a seed, the time
//! per move by default; `PEERS_SEED=N` draws them from N instead, so that a
//! second run adds games on new openings rather than replaying the first's.
//! `PEERS_DRAW=D` (draw contempt), `PEERS_PRIOR=W` (the prior's weight),
//! `PEERS_TAPER=1` (tapered expansion), `PEERS_MINIMAX=A` (the weight of
//! implicit minimax backups), `PEERS_FITTED_EVAL=0|1` (the leaf
//! evaluation: the fitted model or the macro-line one) and `PEERS_NET_MIX=L`
//! (the value network's share of each leaf's value, 1 for no playouts; the
//! network is the built-in one or the file `PEERS_NET_WEIGHTS`) and
//! `PEERS_NET_POLICY=1` (the prior from the policy network, the built-in
//! one or the file `PEERS_POLICY_NET_WEIGHTS`) and `PEERS_SWINDLE=1` (at a
//! root proven a draw, the drawn move the value network likes most) and
//! `PEERS_C=C` (the exploration constant), `PEERS_DRAW_FADE=N` (draw
//! contempt fading to none over the first N plies), `PEERS_DRAW_UNPROVEN=1`
//! (contempt for the draw network's foreseen draws only, not for finished
//! or proven ones), `PEERS_DRAW_OURS=1` (contempt in our own choices
//! only, the opponent's replies searched without it) and
//! `PEERS_PUCT=C` (PUCT selection with constant C instead of UCB1 and the
//! progressive bias), `PEERS_FPU=R` (first-play urgency's reduction) and
//! `PEERS_TEMP=T` (the temperature of PUCT's prior), `PEERS_OPP=M`
//! (PUCT's constant at the opponent's nodes, times M), `PEERS_MODEL=B`
//! (the opponent model: the opponent's replies chosen by random playouts'
//! means at weight B), `PEERS_TRAP=1` (at a proven root, the move after
//! which a plain UCT model of MCTSBot most likely blunders) and
//! `PEERS_DRAW_NET=FILE` (a
//! network trained with `NET_KIND=draw`: with `PEERS_DRAW`, contempt for
//! the draws it foresees at the leaves) and `PEERS_OPPONENT_NET=FILE` (a
//! value network for the leaves where MCTSBot is to move, trained on the
//! UCT opponent's side of `NET_OPPONENT_ITERS` data) and
//! `PEERS_OPPONENT_POLICY=FILE` (a policy network for the priors of
//! MCTSBot's moves in our tree, trained on its own choices: see
//! `PEERS_EXPORT_MOVES`) and `PEERS_REPLY_NET=FILE` with `PEERS_REPLY=M`
//! (our choices read their replies' values mixed at weight M with the
//! expectation under that network's probabilities of them) change our
//! engine's settings, to
//! try a lever against MCTSBot. The settings that differ from the defaults
//! and the network files are printed before the table.
//!
//! Each pair's two games (one opening, both seats) also count as a pair:
//! the line after the table gives the pentanomial counts and the Elo per
//! pair. `PEERS_GAMES=FILE` appends one line per game to FILE (time per
//! move, openings' seed, pair, our seat, our points, plies, the moves
//! with our root value after each of ours; tab separated),
//! so that two runs on the same openings can be compared game by game.
//! `PEERS_REPLAY=FILE` plays again, instead, the games of such a log that
//! our engine did not win (same openings and seats), and `PEERS_OUR_MS=N`
//! gives our engine N ms a move while MCTSBot keeps the run's time: with
//! both, whether the games drawn or lost at equal time are won with more
//! time, that is, whether they are lost to strength or locked by the
//! opening.
//!
//! `PEERS_EXPORT_MOVES=LOG[,LOG...]` instead writes to standard output,
//! as training data for `NET_KIND=policy` (the format of the engine's
//! `value_net_data`), every move MCTSBot chose with two or more legal
//! moves in the games of such logs: the position, and its legal moves
//! with the one played as the only one visited.
//!
//! `PEERS_MODEL_CHECK=N` (with `PEERS_MODEL_ITERS=K`, default 5000)
//! instead checks that model against MCTSBot itself: on N positions from
//! random play both search twice with K iterations, and the distances
//! between their root visit shares are printed (MCTSBot against itself,
//! the model against itself, the two against each other).
//!
//! Run: `cd peers && cargo run --release -- [GAMES] [MS,MS,...]`
//! (defaults: 200 games at 100 ms), games on `PEERS_THREADS` threads at
//! once (default: the number of cores; the rates are measured first, alone).

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use board_game::ai::mcts::MCTSBot;
use board_game::ai::Bot as PeerBot;
use board_game::board::{Board as PeerBoard, Outcome as PeerOutcome, Player};
use board_game::games::sttt::{Coord, STTTBoard};
use rand::SeedableRng as _;
use rand08::SeedableRng as _;
use referee::bot::uttt::net::network_from_env;
use referee::bot::uttt::{Mcts, PolicyNet, SearchConfig, UctModel, ValueNet};
use referee::game::{Game, Outcome, Seat, Uttt, UtttMove};
use referee::standings::Wdl;
use referee::stats::{elo_pentanomial, elo_trinomial, Pentanomial};

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
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
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
    /// A fixed budget (`PEERS_ITERS`) instead of a timed one.
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
    base: SearchConfig,
    seed: u64,
) -> (f64, usize, String) {
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
    static VALUE: OnceLock<ValueNet> = OnceLock::new();
    static POLICY: OnceLock<PolicyNet> = OnceLock::new();
    engine.set_value_net(network(
        &VALUE,
        "PEERS_NET_WEIGHTS",
        ValueNet::builtin,
        ValueNet::load,
    ));
    engine.set_policy_net(network(
        &POLICY,
        "PEERS_POLICY_NET_WEIGHTS",
        PolicyNet::builtin,
        PolicyNet::load,
    ));
    static DRAW: OnceLock<ValueNet> = OnceLock::new();
    if let Some(net) = optional_net(&DRAW, "PEERS_DRAW_NET", ValueNet::builtin, ValueNet::load) {
        engine.set_draw_net(net);
    }
    static OPPONENT: OnceLock<ValueNet> = OnceLock::new();
    let opponent = optional_net(
        &OPPONENT,
        "PEERS_OPPONENT_NET",
        ValueNet::builtin,
        ValueNet::load,
    );
    if let Some(net) = opponent {
        engine.set_opponent_value_net(net);
    }
    static OPPONENT_POLICY: OnceLock<PolicyNet> = OnceLock::new();
    let opponent_policy = optional_net(
        &OPPONENT_POLICY,
        "PEERS_OPPONENT_POLICY",
        PolicyNet::builtin,
        PolicyNet::load,
    );
    if let Some(net) = opponent_policy {
        engine.set_opponent_policy_net(net);
    }
    static REPLY: OnceLock<PolicyNet> = OnceLock::new();
    if let Some(net) = optional_net(
        &REPLY,
        "PEERS_REPLY_NET",
        PolicyNet::builtin,
        PolicyNet::load,
    ) {
        engine.set_reply_net(net);
    }
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

/// How closely referee's model of a plain UCT opponent (`UctModel`, the
/// trap choice's) plays like MCTSBot: on `n` positions from random play
/// (10-50 plies), MCTSBot and the model each search twice with `iters`
/// iterations on different seeds, and the mean total-variation distance
/// between root visit shares and the rate of equal moves are printed for
/// MCTSBot against itself, the model against itself and the two against
/// each other. A faithful model is as far from MCTSBot as MCTSBot is
/// from itself.
fn model_check(n: usize, iters: u64) {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(77);
    let mut model = UctModel::default();
    let shares = |v: &[(UtttMove, u64)]| -> HashMap<UtttMove, f64> {
        let total = v.iter().map(|&(_, c)| c).sum::<u64>().max(1) as f64;
        v.iter().map(|&(m, c)| (m, c as f64 / total)).collect()
    };
    let tv = |a: &HashMap<UtttMove, f64>, b: &HashMap<UtttMove, f64>| {
        let mut d = 0.0;
        for (m, x) in a {
            d += (x - b.get(m).copied().unwrap_or(0.0)).abs();
        }
        for (m, y) in b {
            if !a.contains_key(m) {
                d += y;
            }
        }
        d / 2.0
    };
    let (mut tv_bb, mut tv_mm, mut tv_bm) = (0.0, 0.0, 0.0);
    let (mut eq_bb, mut eq_mm, mut eq_bm) = (0, 0, 0);
    let mut done = 0;
    while done < n {
        let plies = rand::Rng::random_range(&mut rng, 10..50);
        let mut pos = Uttt::new();
        let mut peer = STTTBoard::default();
        for _ in 0..plies {
            let Some(mv) = pos.random_move(&mut rng) else {
                break;
            };
            pos.play_unchecked(mv);
            peer.play(to_peer(mv))
                .expect("the same move is legal on both boards");
        }
        if pos.is_over() || pos.legal_moves().len() < 2 {
            continue;
        }
        let theirs = |seed: u64| {
            let mut r = rand08::rngs::SmallRng::seed_from_u64(seed);
            let mut bot = MCTSBot::new(iters, 2.0, &mut r);
            let tree = bot.build_tree(&peer);
            let root = &tree[0];
            let visits: Vec<(UtttMove, u64)> = root
                .children
                .map(|c| {
                    c.iter()
                        .map(|i| {
                            let node = &tree[i];
                            let mv = node.last_move.and_then(from_peer).expect("a move");
                            (mv, u64::try_from(node.visits).unwrap_or(0))
                        })
                        .collect()
                })
                .unwrap_or_default();
            (from_peer(tree.best_move()).expect("a move"), visits)
        };
        let mut ours = |seed: u64| {
            let mut r = rand::rngs::SmallRng::seed_from_u64(seed);
            let c = model
                .choose(
                    &pos,
                    u32::try_from(iters).unwrap_or(u32::MAX),
                    None,
                    1 << 24,
                    &mut r,
                )
                .expect("a move");
            let visits: Vec<(UtttMove, u64)> =
                c.visits.iter().map(|&(m, v)| (m, u64::from(v))).collect();
            (c.mv, visits)
        };
        let seed = done as u64 * 2;
        let (b1, b2) = (theirs(seed), theirs(seed + 1));
        let (m1, m2) = (ours(seed), ours(seed + 1));
        let (sb1, sb2, sm1, sm2) = (shares(&b1.1), shares(&b2.1), shares(&m1.1), shares(&m2.1));
        tv_bb += tv(&sb1, &sb2);
        tv_mm += tv(&sm1, &sm2);
        tv_bm += (tv(&sb1, &sm1) + tv(&sb2, &sm2)) / 2.0;
        eq_bb += usize::from(b1.0 == b2.0);
        eq_mm += usize::from(m1.0 == m2.0);
        eq_bm += usize::from(b1.0 == m1.0) + usize::from(b2.0 == m2.0);
        done += 1;
    }
    let k = n.max(1) as f64;
    println!("{n} positions, {iters} iterations a search");
    println!("| pair | mean total-variation distance of root visit shares | same move |");
    println!("|---|---|---|");
    println!(
        "| MCTSBot, MCTSBot (two seeds) | {:.3} | {:.1} % |",
        tv_bb / k,
        100.0 * eq_bb as f64 / k
    );
    println!(
        "| model, model (two seeds) | {:.3} | {:.1} % |",
        tv_mm / k,
        100.0 * eq_mm as f64 / k
    );
    println!(
        "| MCTSBot, model | {:.3} | {:.1} % |",
        tv_bm / k,
        50.0 * eq_bm as f64 / k
    );
}

/// A move in the per-game log: its board's digit, then its cell's (`40`
/// is board 4, cell 0).
fn move_digits(mv: UtttMove) -> String {
    format!("{}{}", mv.board(), mv.cell())
}

/// The first `n` pairs' openings drawn from `seed`: two random plies each.
fn openings(seed: u64, n: usize) -> Vec<Vec<UtttMove>> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
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

/// The games of a `PEERS_GAMES` log that our engine did not win, as
/// (openings' seed, pair, our seat), in the log's order; the error names
/// the file and line.
fn replay_games(path: &str) -> Result<Vec<(u64, usize, Seat)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    parse_replay(&text).map_err(|e| format!("{path}:{e}"))
}

/// One game of a `PEERS_GAMES` log.
struct LoggedGame<'a> {
    /// The openings' seed.
    seed: u64,
    pair: usize,
    /// Our seat.
    seat: Seat,
    /// Our points.
    points: f64,
    /// The moves, space separated, ours with `=` and our root's value.
    moves: &'a str,
}

/// The games of a `PEERS_GAMES` log's text; the error starts with the
/// line.
fn logged_games(text: &str) -> Result<Vec<LoggedGame<'_>>, String> {
    let mut games = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = |what: &str| format!("{}: {what}", i + 1);
        if fields.len() != 7 {
            return Err(bad("expected a PEERS_GAMES line (7 tab-separated fields)"));
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
            moves: fields[6],
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

/// MCTSBot's choices in a `PEERS_GAMES` log's games, as training lines
/// for a policy network (game, position, MCTSBot's points twice, then
/// every legal move as `BC:visits`, the one played with 1 and the others
/// with 0); positions with one legal move are left out. Each game's
/// number comes from its openings' seed, pair and seat, so that the
/// trainer holds out whole games. The error starts with the line.
fn opponent_moves(text: &str) -> Result<String, String> {
    let mut data = String::new();
    for (i, g) in logged_games(text)?.into_iter().enumerate() {
        let bad = |what: &str| format!("{}: {what}", i + 1);
        let ours = g.seat;
        let theirs = 1.0 - g.points;
        let game = (g.seed * 1_000_000 + g.pair as u64) * 2 + u64::from(ours == Seat::Two);
        let mut pos = Uttt::new();
        for (ply, word) in g.moves.split(' ').enumerate() {
            let digits = word.split('=').next().unwrap_or("").as_bytes();
            let mv = match digits {
                [b, c] => UtttMove::new(b.wrapping_sub(b'0'), c.wrapping_sub(b'0')),
                _ => None,
            }
            .filter(|&mv| pos.is_legal(mv))
            .ok_or_else(|| bad(&format!("move {} '{word}' is not a legal move", ply + 1)))?;
            let moves = pos.legal_moves();
            if ply >= 2 && pos.to_move() != ours && moves.len() >= 2 {
                let visits: Vec<String> = moves
                    .iter()
                    .map(|&m| format!("{}:{}", move_digits(m), u8::from(m == mv)))
                    .collect();
                data.push_str(&format!(
                    "{game} {pos} {theirs} {theirs} {}\n",
                    visits.join(",")
                ));
            }
            pos.play_unchecked(mv);
        }
    }
    Ok(data)
}

/// The per-game log of `PEERS_GAMES`: the file, opened for appending, or
/// `None` when the variable is not set (a file that cannot be opened ends
/// the run with an error; a write that fails sets it back to `None`).
fn games_log() -> Mutex<Option<std::fs::File>> {
    let Ok(path) = std::env::var("PEERS_GAMES") else {
        return Mutex::new(None);
    };
    match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        Ok(f) => Mutex::new(Some(f)),
        Err(e) => {
            eprintln!("PEERS_GAMES={path}: {e}");
            std::process::exit(2);
        }
    }
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

/// A whole number >= 1 from the environment variable `name`, if set;
/// anything else set there ends the run with an error.
fn env_count(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    match v.parse() {
        Ok(n) if n >= 1 => Some(n),
        _ => {
            eprintln!("{name}='{v}' is not a whole number >= 1");
            std::process::exit(2);
        }
    }
}

/// A number from the environment variable `name`, if set, within `range`;
/// anything else set there ends the run with an error.
fn env_number(name: &str, range: std::ops::RangeInclusive<f32>) -> Option<f32> {
    let v = std::env::var(name).ok()?;
    match v.parse::<f32>() {
        Ok(x) if range.contains(&x) => Some(x),
        _ => {
            eprintln!(
                "{name}='{v}' is not a number from {} to {}",
                range.start(),
                range.end()
            );
            std::process::exit(2);
        }
    }
}

/// Our engine's settings: the defaults, with the knobs `PEERS_DRAW` (draw
/// contempt: what a draw is worth to our engine, 0.5 neutral),
/// `PEERS_PRIOR` (the prior's weight), `PEERS_TAPER=1` (tapered
/// expansion near the node cap), `PEERS_MINIMAX` (implicit minimax
/// backups' weight), `PEERS_FITTED_EVAL` (their leaf evaluation) and
/// `PEERS_SWINDLE=1` (at a proven-draw root, the drawn move the value
/// network likes most) and `PEERS_C` (the exploration constant) for
/// trying a lever against MCTSBot.
fn our_config() -> SearchConfig {
    let mut cfg = SearchConfig::optimal();
    if let Some(w) = env_number("PEERS_PRIOR", 0.0..=10.0) {
        cfg.prior_weight = w;
    }
    if let Some(d) = env_number("PEERS_DRAW", 0.0..=1.0) {
        cfg.draw_value = d;
    }
    if let Some(on) = env_switch("PEERS_TAPER") {
        cfg.taper_expansion = on;
    }
    if let Some(a) = env_number("PEERS_MINIMAX", 0.0..=1.0) {
        cfg.minimax_weight = a;
    }
    if let Some(on) = env_switch("PEERS_FITTED_EVAL") {
        cfg.fitted_eval = on;
        // Each evaluation's own steepness.
        cfg.eval_weight = if on { 1.0 } else { 0.5 };
    }
    if let Some(l) = env_number("PEERS_NET_MIX", 0.0..=1.0) {
        cfg.net_eval = true;
        cfg.value_mix = l;
    }
    if let Some(on) = env_switch("PEERS_NET_POLICY") {
        cfg.net_policy = on;
    }
    if let Some(on) = env_switch("PEERS_SWINDLE") {
        cfg.swindle = on;
    }
    if let Some(c) = env_number("PEERS_C", 0.05..=3.0) {
        cfg.exploration = c;
    }
    if let Some(n) = env_count("PEERS_DRAW_FADE") {
        cfg.draw_fade_plies = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(on) = env_switch("PEERS_DRAW_UNPROVEN") {
        cfg.contempt_unproven_only = on;
    }
    if let Some(on) = env_switch("PEERS_DRAW_OURS") {
        cfg.contempt_ours_only = on;
    }
    if let Some(c) = env_number("PEERS_PUCT", 0.0..=10.0) {
        cfg.puct = c;
    }
    if let Some(r) = env_number("PEERS_FPU", -1.0..=1.0) {
        cfg.puct_fpu = r;
    }
    if let Some(t) = env_number("PEERS_TEMP", 0.1..=10.0) {
        cfg.puct_temperature = t;
    }
    if let Some(m) = env_number("PEERS_MODEL", 0.0..=1.0) {
        cfg.opponent_model = m;
    }
    if let Some(m) = env_number("PEERS_OPP", 0.1..=10.0) {
        cfg.puct_opponent = m;
    }
    if let Some(on) = env_switch("PEERS_TRAP") {
        cfg.trap = on;
    }
    if let Some(m) = env_number("PEERS_REPLY", 0.0..=1.0) {
        cfg.reply_weight = m;
    }
    cfg
}

/// [`network_from_env`], or the end of the run with its error.
fn network<N: Send + Sync>(
    cell: &'static OnceLock<N>,
    var: &str,
    builtin: fn() -> &'static N,
    load: fn(&str) -> Result<N, String>,
) -> &'static N {
    network_from_env(cell, var, builtin, load).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    })
}

/// The network loaded from the file `var` names, or `None` when `var` is
/// unset: the networks that are off unless a run asks for them.
fn optional_net<N: Send + Sync>(
    cell: &'static OnceLock<N>,
    var: &str,
    builtin: fn() -> &'static N,
    load: fn(&str) -> Result<N, String>,
) -> Option<&'static N> {
    std::env::var_os(var)?;
    Some(network(cell, var, builtin, load))
}

/// A 0-or-1 knob from the environment, if set; anything else is an error
/// that stops the run.
fn env_switch(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    match v.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => {
            eprintln!("{name}='{v}' is not 0 or 1");
            std::process::exit(2);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let games: u64 = match args.first().map(|s| s.parse()) {
        None => 200,
        Some(Ok(n)) if n >= 2 => n,
        _ => {
            eprintln!("usage: referee-peers [GAMES (even, >= 2)] [MS,MS,...]");
            std::process::exit(2);
        }
    };
    let times: Vec<u64> = match args.get(1) {
        None => vec![100],
        Some(s) => match s.split(',').map(|t| t.trim().parse()).collect() {
            Ok(v) => v,
            Err(_) => {
                eprintln!("bad time list '{s}': expected milliseconds like 100,1000");
                std::process::exit(2);
            }
        },
    };
    // Games run on this many threads at once (each game alternates between
    // the two engines, so one thread keeps one core busy).
    let threads = env_count("PEERS_THREADS").map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let fixed = env_count("PEERS_ITERS");
    let opening_seed = env_count("PEERS_SEED");
    let our_ms = env_count("PEERS_OUR_MS");
    let replay = std::env::var("PEERS_REPLAY").ok().map(|path| {
        replay_games(&path).unwrap_or_else(|e| {
            eprintln!("PEERS_REPLAY={e}");
            std::process::exit(2)
        })
    });
    if let Ok(logs) = std::env::var("PEERS_EXPORT_MOVES") {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        for path in logs.split(',') {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
                eprintln!("PEERS_EXPORT_MOVES={path}: {e}");
                std::process::exit(2)
            });
            let data = opponent_moves(&text).unwrap_or_else(|e| {
                eprintln!("PEERS_EXPORT_MOVES={path}:{e}");
                std::process::exit(2)
            });
            if let Err(e) = out.write_all(data.as_bytes()).and_then(|()| out.flush()) {
                eprintln!("PEERS_EXPORT_MOVES: standard output: {e}");
                std::process::exit(2)
            }
        }
        return;
    }
    if let Some(n) = env_count("PEERS_MODEL_CHECK") {
        model_check(n as usize, env_count("PEERS_MODEL_ITERS").unwrap_or(5000));
        return;
    }
    let base = our_config();
    if (base.reply_weight != 0.0) != std::env::var_os("PEERS_REPLY_NET").is_some() {
        eprintln!("PEERS_REPLY and PEERS_REPLY_NET go together: the weight and the network it weighs replies by");
        std::process::exit(2);
    }
    let log = games_log();
    if base != SearchConfig::optimal() {
        println!(
            "ours: draw {} (PEERS_DRAW), prior weight {} (PEERS_PRIOR), tapered expansion {} (PEERS_TAPER), minimax weight {} (PEERS_MINIMAX), fitted evaluation {} (PEERS_FITTED_EVAL), value network {} mixed {} (PEERS_NET_MIX), policy network {} (PEERS_NET_POLICY), swindle {} (PEERS_SWINDLE), exploration {} (PEERS_C), contempt fading over {} plies (PEERS_DRAW_FADE, 0: never), for unproven draws only {} (PEERS_DRAW_UNPROVEN), for our choices only {} (PEERS_DRAW_OURS), PUCT {} (PEERS_PUCT, 0: off) with first-play reduction {} (PEERS_FPU) and prior temperature {} (PEERS_TEMP), opponent's constant times {} (PEERS_OPP), opponent model {} (PEERS_MODEL), trap choice {} (PEERS_TRAP), reply expectation's weight {} (PEERS_REPLY)",
            base.draw_value, base.prior_weight, base.taper_expansion, base.minimax_weight, base.fitted_eval, base.net_eval, base.value_mix, base.net_policy, base.swindle, base.exploration, base.draw_fade_plies, base.contempt_unproven_only, base.contempt_ours_only, base.puct, base.puct_fpu, base.puct_temperature, base.puct_opponent, base.opponent_model, base.trap, base.reply_weight
        );
    }
    for var in [
        "PEERS_NET_WEIGHTS",
        "PEERS_POLICY_NET_WEIGHTS",
        "PEERS_DRAW_NET",
        "PEERS_OPPONENT_NET",
        "PEERS_OPPONENT_POLICY",
        "PEERS_REPLY_NET",
    ] {
        if let Ok(file) = std::env::var(var) {
            println!("ours: {var}={file}");
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
        // of threads), or those of `PEERS_REPLAY`. The openings' seed is
        // the time per move unless `PEERS_SEED` gives another (to add games
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
                        base,
                        (pair * 2 + k) as u64,
                    );
                    let mut file = log.lock().expect("no thread panicked");
                    if let Some(f) = file.as_mut() {
                        let line = log_line(ms, seed, pair, seat, points, plies, &moves);
                        // A failed write stops the log, not the run: the
                        // games and the table still count.
                        if let Err(e) = f.write_all(line.as_bytes()) {
                            *file = None;
                            eprintln!("\nPEERS_GAMES: {e}; no more games logged");
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

    #[test]
    fn the_export_takes_mctsbots_choices_with_a_choice_and_names_a_bad_move() {
        // We are O (seat 2): after the opening 44 40, MCTSBot (X) plays 04,
        // we answer 42 and MCTSBot plays 24.
        let log = "1000\t3\t5\t2\t0.5\t5\t44 40 04 42=0.5 24\n";
        let data = opponent_moves(log).expect("a good log");
        let lines: Vec<&str> = data.lines().collect();
        assert_eq!(lines.len(), 2, "{data}");
        let game = (3 * 1_000_000 + 5) * 2 + 1;
        let mut pos = Uttt::new();
        for (b, c) in [(4, 4), (4, 0)] {
            pos.play_unchecked(UtttMove::new(b, c).expect("a move"));
        }
        let fields: Vec<&str> = lines[0].split(' ').collect();
        assert_eq!(
            fields[..4],
            [&*game.to_string(), &*pos.to_string(), "0.5", "0.5"]
        );
        // Every legal move is listed once, the one played with a visit.
        let visits: Vec<&str> = fields[4].split(',').collect();
        assert_eq!(visits.len(), pos.legal_moves().len());
        assert_eq!(
            visits
                .iter()
                .filter(|v| v.ends_with(":1"))
                .collect::<Vec<_>>(),
            [&"04:1"]
        );
        assert!(lines[1]
            .split(' ')
            .nth(4)
            .is_some_and(|v| v.contains("24:1")));
        // A move that is not legal there names its line and place.
        let bad = "1000\t3\t5\t2\t0.5\t3\t44 40 44\n";
        assert_eq!(
            opponent_moves(&format!("{log}{bad}")),
            Err("2: move 3 '44' is not a legal move".into())
        );
        assert!(opponent_moves("garbage").is_err_and(|e| e.starts_with("1: ")));
    }

    #[test]
    fn a_game_ends_with_a_result_on_both_boards() {
        let clock = PeerClock::new(5, Some(200), 200_000.0);
        let opening = [
            UtttMove::new(4, 4).expect("a move"),
            UtttMove::new(4, 0).expect("a move"),
        ];
        let (points, plies, moves) =
            play_game(&opening, Seat::One, &clock, 5, SearchConfig::optimal(), 1);
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
