//! Exhaustive grading: every opponent reply at every position the bot
//! reaches, the bot asked once per distinct position.
//!
//! The search goes breadth first: positions are numbered as they are found
//! and checked in that order, while worker threads (one per bot process)
//! take the found positions from a queue in batches and ask the bot about
//! them at once, as pipelined `turn` lines, so several processes share the
//! work across cores and none waits for the checking. The bot is taken to be
//! stateless, as the protocol requires. A crashed process is restarted, and
//! the position that crashed it is a failure.

use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use super::{outcome_value, Failure, Solved};
use crate::bot::manifest::{ExternalKind, ExternalSpec};
use crate::bot::process::BotProcess;
use crate::bot::{BotSpec, BuiltinSpec, TimeControl};
use crate::game::{Game, GameOptions, Seat};
use crate::protocol::ForfeitReason;
use crate::protocol::{self, Allowance, Begin, Breach, Command, Heard};

/// Something that answers positions with moves: the bot under test.
pub trait Oracle<G: Game>: Send {
    /// The bot's move in each position, or why it gave none.
    fn answer(&mut self, positions: &[G]) -> Vec<Result<G::Move, String>>;
}

/// A built-in bot run in this process. Each position is answered by a bot
/// seeded from the grading seed and the position itself, so an answer
/// (and so the positions explored) does not depend on which worker asked
/// or in what order, even for bots that break ties at random.
pub(crate) struct InProcess<G: Game> {
    spec: BuiltinSpec,
    seed: u64,
    _game: std::marker::PhantomData<fn() -> G>,
}

impl<G: crate::bot::BuiltinBots> InProcess<G> {
    /// An oracle for the built-in `spec`, checking it can be made.
    pub(crate) fn new(spec: BuiltinSpec, seed: u64) -> Result<Self, String> {
        spec.make::<G>(seed).map_err(|e| e.to_string())?;
        Ok(InProcess {
            spec,
            seed,
            _game: std::marker::PhantomData,
        })
    }
}

impl<G: crate::bot::BuiltinBots> Oracle<G> for InProcess<G> {
    fn answer(&mut self, positions: &[G]) -> Vec<Result<G::Move, String>> {
        positions
            .iter()
            .map(|p| {
                let mut bot = self
                    .spec
                    .make::<G>(crate::seed::derive_text(self.seed, &p.to_string()))
                    .map_err(|e| e.to_string())?;
                bot.select_move(p).map_err(|f| f.to_string())
            })
            .collect()
    }
}

/// How many turn lines may be in flight to one process.
const WINDOW: usize = 64;

/// An external protocol bot answering pipelined turn lines.
pub struct Pipelined<G: Game> {
    spec: ExternalSpec,
    seat: Seat,
    time: TimeControl,
    seed: u64,
    process: Option<BotProcess>,
    /// The bot's recent time per answer, once measured.
    pace: Option<Duration>,
    _game: std::marker::PhantomData<fn() -> G>,
}

/// Answers between two updates of [`Pipelined`]'s pace.
const PACE_EVERY: usize = 16;

/// Longest nap while answers pile up (far below any move limit).
const MAX_NAP: Duration = Duration::from_millis(2);

impl<G: Game> Pipelined<G> {
    /// A pipelined bot for `spec`, playing `seat`, seeded by `seed`;
    /// started on first use.
    pub fn new(spec: ExternalSpec, seat: Seat, time: TimeControl, seed: u64) -> Self {
        Pipelined {
            spec,
            seat,
            time,
            seed,
            process: None,
            pace: None,
            _game: std::marker::PhantomData,
        }
    }

    fn start(&mut self) -> Result<&mut BotProcess, String> {
        if self.process.is_none() {
            let mut p = BotProcess::spawn(&self.spec, self.seed).map_err(|e| {
                let program = self.spec.command.first().cloned().unwrap_or_default();
                Breach::not_started(&program, &e).detail
            })?;
            let begin = Begin {
                seed: self.spec.reuse.then_some(self.seed),
                ..Begin::new(G::KIND, self.seat, self.time.move_ms)
            };
            let line = format!("{}\n", Command::<G>::Begin(begin));
            let deadline = Instant::now() + Duration::from_millis(self.time.startup_ms);
            p.send(line.as_bytes(), deadline)
                .map_err(|e| format!("could not send begin: {e}"))?;
            self.process = Some(p);
        }
        self.process
            .as_mut()
            .ok_or_else(|| "the bot is not running".to_string())
    }
}

/// A breach as grading reports it: the reason, what happened, the line
/// received and the stderr tail.
fn describe(b: &Breach, p: &mut BotProcess) -> String {
    let mut text = format!("{}: {}", b.reason, b.detail);
    if let Some(line) = &b.line {
        let _ = write!(
            text,
            "; received \"{}\"",
            crate::escape::terminal::reply(line)
        );
    }
    if matches!(b.reason, ForfeitReason::Crash | ForfeitReason::Startup) {
        p.kill();
        if let Some(status) = p.exit_status() {
            let _ = write!(text, "; {status}");
        }
        let tail = p.stderr_tail(300);
        if !tail.trim().is_empty() {
            let _ = write!(text, "; stderr: {}", tail.trim());
        }
    }
    text
}

impl<G: Game> Oracle<G> for Pipelined<G> {
    fn answer(&mut self, positions: &[G]) -> Vec<Result<G::Move, String>> {
        let mut out: Vec<Result<G::Move, String>> = Vec::with_capacity(positions.len());
        let (move_ms, startup_ms, slack_ms) =
            (self.time.move_ms, self.time.startup_ms, self.time.slack_ms);
        let mut pace = self.pace;
        while out.len() < positions.len() {
            let p = match self.start() {
                Ok(p) => p,
                Err(e) => {
                    while out.len() < positions.len() {
                        out.push(Err(e.clone()));
                    }
                    break;
                }
            };
            let mut sent = out.len();
            // Each reply is due within the move limit of the previous one
            // (the first of a fresh process gets the start-up allowance).
            let mut last = Instant::now();
            let mut failed = false;
            let mut burst = String::with_capacity(WINDOW * 64);
            let mut mark = (Instant::now(), out.len());
            while out.len() < positions.len() && !failed {
                let allow = Allowance {
                    move_ms,
                    startup_ms: if p.answered() == 0 { startup_ms } else { 0 },
                    replied_before: p.answered() > 0,
                    slack_ms,
                };
                // Turn lines go out in bursts: once half the window has been
                // answered, the window is refilled with one write.
                if sent < positions.len() && sent - out.len() <= WINDOW / 2 {
                    burst.clear();
                    while sent < positions.len() && sent - out.len() < WINDOW {
                        let _ = writeln!(burst, "{}", Command::Turn(&positions[sent]));
                        sent += 1;
                    }
                    if let Err(e) = p.send(burst.as_bytes(), Instant::now() + allow.limit()) {
                        let heard = Heard::Unsent(e);
                        let b = protocol::judge_reply(heard, &positions[out.len()], &allow);
                        out.push(b.map_err(|b| describe(&b, p)));
                        failed = true;
                        break;
                    }
                }
                // Waking up for every answer costs the referee a poll and a
                // read per line, CPU taken from the bots on a busy machine.
                // While more than half the window is still out, nap for the
                // time the bot needs to answer down to the refill point, so
                // that the answers are read in batches and the bot never
                // runs dry. The nap is short next to any move limit, and a
                // reply's time is still judged from the previous one.
                let out_now = sent - out.len();
                if let (Some(pace), true) = (pace, out_now > WINDOW / 2) {
                    if !p.has_line() {
                        let nap = pace.saturating_mul((out_now - WINDOW / 2) as u32);
                        std::thread::sleep(nap.min(MAX_NAP));
                    }
                }
                let heard = match p.read_line(last + allow.limit()) {
                    Ok(reply) => reply.heard(last),
                    Err(_) => Heard::Closed(Vec::new()),
                };
                last = Instant::now();
                if out.len() + 1 - mark.1 >= PACE_EVERY {
                    let per = (last - mark.0) / (out.len() + 1 - mark.1) as u32;
                    pace = Some(match pace {
                        Some(old) => (old + per) / 2,
                        None => per,
                    });
                    mark = (last, out.len() + 1);
                }
                let pos = &positions[out.len()];
                match protocol::judge_reply(heard, pos, &allow) {
                    Ok(m) => {
                        p.count_answer();
                        out.push(Ok(m));
                    }
                    Err(b) => {
                        // An illegal move goes to the search, which reports
                        // it with the line that led to it.
                        let illegal = (b.reason == ForfeitReason::Illegal)
                            .then(|| b.line.as_deref().map(protocol::reply_text))
                            .flatten()
                            .and_then(Result::ok)
                            .and_then(|t| G::parse_move(t).ok());
                        out.push(illegal.ok_or_else(|| describe(&b, p)));
                        failed = true;
                    }
                }
            }
            if failed {
                // The search stops at its first failure, so the rest of this
                // chunk is not asked; a later call starts a fresh process.
                if let Some(mut p) = self.process.take() {
                    p.kill();
                }
                while out.len() < positions.len() {
                    out.push(Err(
                        "not asked: the bot failed on an earlier position".into()
                    ));
                }
            }
        }
        self.pace = pace;
        out
    }
}

impl<G: Game> Drop for Pipelined<G> {
    fn drop(&mut self) {
        if let Some(mut p) = self.process.take() {
            let end = format!("{}\n", Command::<G>::End(crate::protocol::BotResult::Draw));
            p.finish(end.as_bytes(), Duration::from_millis(200));
        }
    }
}

/// Makes an oracle for the bot: pipelined for an external protocol bot,
/// in-process otherwise (built-ins; console programs keep state and cannot
/// be graded exhaustively).
pub(crate) fn make_oracle<G: crate::bot::BuiltinBots>(
    spec: &BotSpec,
    seat: Seat,
    time: TimeControl,
    seed: u64,
) -> Result<Box<dyn Oracle<G>>, String> {
    match spec {
        BotSpec::External(e) if e.kind == ExternalKind::Console => {
            Err("console programs keep their own state: grade them in sampled mode".to_string())
        }
        BotSpec::External(e) => Ok(Box::new(Pipelined::<G>::new(e.clone(), seat, time, seed))),
        BotSpec::Builtin(b) => Ok(Box::new(InProcess::<G>::new(b.clone(), seed)?)),
    }
}

/// Every position asked, with how it was reached: its parent's index and
/// (the bot's move there, the opponent's reply).
type Nodes<G> = Vec<(G, u32, Option<(<G as Game>::Move, <G as Game>::Move)>)>;

/// The outcome of an exhaustive check.
#[derive(Clone, Debug, Default)]
pub struct Exhaustive {
    /// Distinct positions the bot was asked about.
    pub positions: u64,
    /// The bot's moves in won positions, and how many kept the win.
    pub won_positions: u64,
    /// Of those, the moves that kept the win.
    pub kept: u64,
    /// The first refutation found, if any.
    pub failure: Option<Failure>,
}

/// Most positions a worker takes from the queue at once.
const BATCH: usize = 512;

/// Positions waiting to be asked, shared by the workers.
struct Queue<G> {
    /// (node index, the position as asked).
    items: std::collections::VecDeque<(u32, G)>,
    /// No more work will come: the workers stop once the queue is empty.
    closed: bool,
}

/// Answers a worker sends back: (node index, the bot's answer).
type Answers<G> = Vec<(u32, Result<<G as Game>::Move, String>)>;

/// Explores every line from the start with the bot in `seat` and every
/// opponent reply, asking `oracles` (one per worker) in parallel. With
/// `canonical`, positions are reduced by the game's symmetries first and
/// each class is asked once; answers are mapped back. `progress` is called
/// with the number of positions checked as the check goes.
///
/// Positions are numbered in the order they are found (breadth first) and
/// checked in that order, so the result, and the first refutation, do not
/// depend on timing; but the workers ask the bot about every position as
/// soon as it is found, so the bot processes never wait for the checking.
pub fn explore<G: Solved>(
    opts: &GameOptions,
    seat: Seat,
    oracles: &mut [Box<dyn Oracle<G>>],
    canonical: bool,
    mut progress: impl FnMut(u64),
) -> Exhaustive {
    let required = G::requirement(opts, seat);
    let start = G::start(opts);
    let mut nodes: Nodes<G> = Vec::new();
    // Node numbers by position: the table holds only the numbers and looks
    // positions up in `nodes`, so millions of them are not stored twice.
    let mut index: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
    let hasher = std::hash::RandomState::new();
    let key = |p: &G| {
        if canonical {
            p.canonical().0
        } else {
            p.clone()
        }
    };
    // A node's key hash, and whether a node has key `k`, without copying
    // the node's position when keys are positions.
    let hash_of = |p: &G| {
        if canonical {
            hasher.hash_one(p.canonical().0)
        } else {
            hasher.hash_one(p)
        }
    };
    let has_key = |p: &G, k: &G| {
        if canonical {
            p.canonical().0 == *k
        } else {
            p == k
        }
    };
    let queue = std::sync::Mutex::new(Queue {
        items: std::collections::VecDeque::new(),
        closed: false,
    });
    let ready = std::sync::Condvar::new();
    let workers = oracles.len().max(1);
    // Records position `p` if it is new, and queues it for the bot.
    let mut add = |p: G, parent: u32, via: Option<(G::Move, G::Move)>, nodes: &mut Nodes<G>| {
        let k = key(&p);
        let entry = index.entry(
            hasher.hash_one(&k),
            |&j| has_key(&nodes[j as usize].0, &k),
            |&j| hash_of(&nodes[j as usize].0),
        );
        if let hashbrown::hash_table::Entry::Vacant(e) = entry {
            let i = nodes.len() as u32;
            e.insert(i);
            nodes.push((p, parent, via));
            if let Ok(mut q) = queue.lock() {
                q.items.push_back((i, k));
            }
            ready.notify_one();
        }
    };
    if start.to_move() == seat {
        add(start.clone(), u32::MAX, None, &mut nodes);
    } else {
        // The opponent's first moves, each a line of its own (marked by a
        // parent of u32::MAX - 1: no bot move came before).
        for o in start.legal_moves() {
            let mut p = start.clone();
            p.play_unchecked(o);
            add(p, u32::MAX - 1, Some((o, o)), &mut nodes);
        }
    }
    let mut result = Exhaustive::default();
    let (tx, rx) = std::sync::mpsc::channel::<Answers<G>>();
    std::thread::scope(|s| {
        for oracle in oracles.iter_mut() {
            let tx = tx.clone();
            let (queue, ready) = (&queue, &ready);
            s.spawn(move || loop {
                let batch: Vec<(u32, G)> = {
                    let Ok(mut q) = queue.lock() else { return };
                    while q.items.is_empty() && !q.closed {
                        q = match ready.wait(q) {
                            Ok(q) => q,
                            Err(_) => return,
                        };
                    }
                    if q.items.is_empty() {
                        return;
                    }
                    // An even share of what is queued, so that a small
                    // layer still keeps every worker busy.
                    let take = q.items.len().div_ceil(workers).clamp(1, BATCH);
                    q.items.drain(..take).collect()
                };
                let asked: Vec<G> = batch.iter().map(|(_, p)| p.clone()).collect();
                let answers = oracle.answer(&asked);
                let mut answers = answers.into_iter();
                let out: Answers<G> = batch
                    .iter()
                    .map(|&(i, _)| {
                        let a = answers
                            .next()
                            .unwrap_or_else(|| Err("the bot gave no answer".to_string()));
                        (i, a)
                    })
                    .collect();
                if tx.send(out).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        // Check positions in index order as their answers arrive.
        // Answers that arrived ahead of their turn: slot k is node next + k.
        let mut waiting: std::collections::VecDeque<Option<Result<G::Move, String>>> =
            std::collections::VecDeque::new();
        let mut next = 0u32;
        while (next as usize) < nodes.len() && result.failure.is_none() {
            let Some(answer) = waiting.front_mut().and_then(Option::take) else {
                match rx.recv() {
                    Ok(batch) => {
                        for (i, a) in batch {
                            // Every node is asked once and `next` passes a
                            // node only once its answer is in, so i >= next.
                            let Some(k) = i.checked_sub(next) else {
                                continue;
                            };
                            let k = k as usize;
                            if waiting.len() <= k {
                                waiting.resize_with(k + 1, || None);
                            }
                            waiting[k] = Some(a);
                        }
                    }
                    Err(_) => {
                        // Every worker is gone (cannot happen while work is
                        // queued); report rather than wait forever.
                        result.failure = Some(Failure {
                            seat: seat.number(),
                            reason: "the grading workers stopped".to_string(),
                            moves: line_to(&nodes, next, None),
                            position: nodes[next as usize].0.to_string(),
                            bot_move: None,
                            missed: None,
                            replay: String::new(),
                        });
                    }
                }
                continue;
            };
            waiting.pop_front();
            let i = next;
            next += 1;
            result.positions += 1;
            if result.positions % 4096 == 0 {
                progress(result.positions);
            }
            let pos = nodes[i as usize].0.clone();
            let answer = match answer {
                Ok(m) if canonical => {
                    let (_, sym) = pos.canonical();
                    Ok(G::uncanonical_move(m, &sym))
                }
                other => other,
            };
            let before = pos.solve();
            let fail = |reason: String, bot_move: Option<G::Move>| Failure {
                seat: seat.number(),
                reason,
                moves: line_to(&nodes, i, bot_move),
                position: pos.to_string(),
                bot_move: bot_move.map(|m| m.to_string()),
                missed: pos.best_move().map(|m| m.to_string()),
                replay: String::new(),
            };
            let mv = match answer {
                Ok(m) if pos.is_legal(m) => m,
                Ok(m) => {
                    let why = pos.illegality(m).unwrap_or_default();
                    result.failure = Some(fail(format!("illegal move: {why}"), Some(m)));
                    break;
                }
                Err(e) => {
                    result.failure = Some(fail(e, None));
                    break;
                }
            };
            let mut after = pos.clone();
            after.play_unchecked(mv);
            let now = match after.outcome() {
                Some(o) => outcome_value(o, seat),
                None => -after.solve(),
            };
            if before > 0 {
                result.won_positions += 1;
                if now > 0 {
                    result.kept += 1;
                }
            }
            if now < required {
                let what = if required > 0 { "win" } else { "draw" };
                result.failure = Some(fail(
                    format!("this move lets the opponent stop the {what}: a refutation exists"),
                    Some(mv),
                ));
                break;
            }
            if after.is_over() {
                continue;
            }
            for o in after.legal_moves() {
                let mut q = after.clone();
                q.play_unchecked(o);
                if q.is_over() {
                    // The solver already vouched for the move above.
                    continue;
                }
                add(q, i, Some((mv, o)), &mut nodes);
            }
        }
        // Done, or a failure: the workers stop after their current batch.
        if let Ok(mut q) = queue.lock() {
            q.closed = true;
            q.items.clear();
        }
        ready.notify_all();
    });
    progress(result.positions);
    result
}

/// The moves from the start to node `i`, then `last`.
fn line_to<G: Game>(nodes: &Nodes<G>, mut i: u32, last: Option<G::Move>) -> Vec<String> {
    let mut rev = Vec::new();
    if let Some(m) = last {
        rev.push(m.to_string());
    }
    while (i as usize) < nodes.len() {
        let (_, parent, via) = &nodes[i as usize];
        match via {
            Some((_, opp)) if *parent == u32::MAX - 1 => rev.push(opp.to_string()),
            Some((bot, opp)) => {
                rev.push(opp.to_string());
                rev.push(bot.to_string());
            }
            None => {}
        }
        i = *parent;
    }
    rev.reverse();
    rev
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Notakto, TicTacToe};

    fn builtin<G: crate::bot::BuiltinBots>(name: &str, n: usize) -> Vec<Box<dyn Oracle<G>>> {
        let spec = BotSpec::resolve::<G>(name).unwrap();
        (0..n)
            .map(|_| make_oracle::<G>(&spec, Seat::One, TimeControl::default(), 7).unwrap())
            .collect()
    }

    /// Bots that break ties at random still give the same exploration and
    /// the same first refutation whatever the number of workers.
    #[test]
    fn results_do_not_depend_on_the_number_of_workers() {
        let run = |name: &str, seat: Seat, workers: usize| {
            let mut o = builtin::<TicTacToe>(name, workers);
            let r = explore::<TicTacToe>(&GameOptions::default(), seat, &mut o, false, |_| {});
            (
                r.positions,
                r.won_positions,
                r.kept,
                r.failure.map(|f| f.moves),
            )
        };
        for (name, seat) in [("greedy", Seat::Two), ("optimal", Seat::One)] {
            let one = run(name, seat, 1);
            for workers in [2, 3] {
                assert_eq!(
                    run(name, seat, workers),
                    one,
                    "{name} with {workers} workers"
                );
            }
        }
        let mut o = builtin::<Notakto>("optimal", 1);
        let one = explore::<Notakto>(&GameOptions::default(), Seat::One, &mut o, true, |_| {});
        let mut o = builtin::<Notakto>("optimal", 3);
        let three = explore::<Notakto>(&GameOptions::default(), Seat::One, &mut o, true, |_| {});
        assert_eq!((one.positions, one.kept), (three.positions, three.kept));
    }

    #[test]
    fn optimal_tictactoe_never_loses_in_either_seat() {
        for seat in Seat::BOTH {
            let spec = BotSpec::resolve::<TicTacToe>("optimal").unwrap();
            let mut o: Vec<Box<dyn Oracle<TicTacToe>>> =
                vec![make_oracle::<TicTacToe>(&spec, seat, TimeControl::default(), 1).unwrap()];
            let r = explore::<TicTacToe>(&GameOptions::default(), seat, &mut o, false, |_| {});
            assert!(r.failure.is_none(), "{:?}", r.failure);
            assert!(r.positions > 50, "{}", r.positions);
        }
    }

    #[test]
    fn greedy_tictactoe_is_refuted_with_a_replayable_line() {
        let mut o = builtin::<TicTacToe>("greedy", 2);
        let r = explore::<TicTacToe>(&GameOptions::default(), Seat::Two, &mut o, false, |_| {});
        let f = r.failure.expect("greedy loses some line as O");
        // The line replays to the position, and its last move is the bot's.
        let mut p = TicTacToe::new();
        for m in &f.moves[..f.moves.len() - 1] {
            p.play(m.parse().unwrap()).unwrap();
        }
        assert_eq!(p.to_string(), f.position);
        assert_eq!(f.moves.last(), f.bot_move.as_ref());
    }

    #[test]
    fn optimal_notakto_always_wins_and_canonical_asks_fewer() {
        let opts = GameOptions {
            boards: 3,
            ..Default::default()
        };
        let mut o = builtin::<Notakto>("optimal", 2);
        let canon = explore::<Notakto>(&opts, Seat::One, &mut o, true, |_| {});
        assert!(canon.failure.is_none(), "{:?}", canon.failure);
        assert!(canon.positions <= 18_424, "{}", canon.positions);
        let opts1 = GameOptions {
            boards: 1,
            ..Default::default()
        };
        let full = explore::<Notakto>(&opts1, Seat::One, &mut o, false, |_| {});
        assert!(full.failure.is_none());
        assert_eq!(full.kept, full.won_positions);
    }
}
