//! Runs a list of games on worker threads. Each game's bots, seed and opening
//! are fixed by its [`Pairing`] alone, so results never depend on the number
//! of threads or on which game finishes first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::interrupt;
use crate::bot::external::{ProcessPool, DEFAULT_POOL};
use crate::bot::{affinity, BotSpec, BuiltinBots, TimeControl};
use crate::game::{Game, GameOptions, Seat};
use crate::play::openings::Openings;
use crate::play::record::GameRecord;
use crate::play::referee::{play_game, GameSetup};
pub use crate::play::schedule::Pairing;
use crate::protocol::{Forfeit, ForfeitReason};
use crate::seed;

/// Settings shared by every game of a run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Game options (Notakto boards).
    pub options: GameOptions,
    /// Time control for every bot.
    pub time: TimeControl,
    /// Random plies played before the bots take over.
    pub random_plies: usize,
    /// Pin each worker, and the bot processes it starts, to one CPU
    /// (docs/protocol.md, "CPU affinity").
    pub affinity: bool,
}

/// A bot entry of a run: its display name and how to make it.
#[derive(Clone, Debug)]
pub struct Entrant {
    /// Unique display name.
    pub name: String,
    /// The resolved bot.
    pub spec: BotSpec,
}

/// A random opening of up to `plies` moves that never ends the game: when
/// every move would finish it, the opening stops early.
pub(crate) fn opening<G: Game>(start: &G, plies: usize, opening_seed: u64) -> Vec<G::Move> {
    let mut rng = seed::rng(opening_seed);
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let safe: Vec<G::Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|&m| {
                let mut n = pos.clone();
                n.play_unchecked(m);
                !n.is_over()
            })
            .collect();
        match crate::bot::pick(&safe, &mut rng) {
            Some(m) => {
                pos.play_unchecked(m);
                moves.push(m);
            }
            None => break,
        }
    }
    moves
}

fn play_prepared<G: BuiltinBots>(
    entrants: &[Entrant],
    cfg: &RunConfig,
    openings: Option<&Openings>,
    p: &Pairing,
    pool: &ProcessPool,
) -> GameRecord {
    // The suite's opening of this round (its start and moves), then the
    // random plies from there.
    let (start, mut forced) = match openings.and_then(|o| o.get::<G>(p.round)) {
        Some(o) => (o.start.clone(), o.moves.clone()),
        None => (G::start(&cfg.options), Vec::new()),
    };
    if cfg.random_plies > 0 {
        let mut pos = start.clone();
        for &m in &forced {
            pos.play_unchecked(m);
        }
        forced.extend(opening(&pos, cfg.random_plies, p.opening_seed));
    }
    let mut setup = GameSetup::new(p.id, p.seed, start.clone());
    setup.time = cfg.time;
    setup.opening = forced;
    let names = p.players.map(|i| entrants[i].name.clone());
    let make = |seat: Seat| {
        let i = p.players[seat.index()];
        let bot_seed = seed::derive(p.seed, &[seat.number() as u64]);
        entrants[i]
            .spec
            .instantiate::<G>(bot_seed, &cfg.time, Some((pool, i as u64)))
    };
    match (make(Seat::One), make(Seat::Two)) {
        (Ok(mut a), Ok(mut b)) => play_game(&setup, [&mut a, &mut b], names),
        (first, _) => {
            // A bot that cannot even be made forfeits by start-up; the game is
            // still recorded so that nothing is silently dropped.
            let seat = if first.is_ok() { Seat::Two } else { Seat::One };
            let f = Forfeit::new(ForfeitReason::Startup, "the bot could not be created");
            forfeit_record(p, names, &start, setup.opening.len(), seat, f)
        }
    }
}

/// The record of a game that ended before its first move was asked for:
/// `seat` forfeits by `f` (located at the move after the opening's
/// `opening_len` plies), nothing is played. For a bot that could not be
/// started, and for games a grading run did not play.
pub(crate) fn forfeit_record<G: Game>(
    p: &Pairing,
    names: [String; 2],
    start: &G,
    opening_len: usize,
    seat: Seat,
    f: Forfeit,
) -> GameRecord {
    let reason = f.reason;
    let f = f.located(seat, opening_len + 1, &start.to_string());
    GameRecord {
        id: p.id,
        game: G::KIND,
        players: names,
        seed: p.seed,
        opening: vec![],
        start: start.to_string(),
        moves: vec![],
        times_us: vec![],
        winner: Some(seat.other()),
        termination: crate::play::record::Termination::Forfeit(reason),
        forfeit: Some(f),
        final_position: start.to_string(),
        client: None,
        format: Vec::new(),
        rules: start.options().rules,
    }
}

/// Plays every pairing on `jobs` threads, calling `on_done` on the calling
/// thread as each game finishes (in finishing order). Returns the records
/// sorted by id. Keeps every record: for runs of known, modest size
/// (grading, tests); long runs stream through [`crate::play::series`].
pub fn run_games<G: BuiltinBots>(
    entrants: &[Entrant],
    cfg: &RunConfig,
    pairings: &[Pairing],
    jobs: usize,
    mut on_done: impl FnMut(&GameRecord),
) -> Vec<GameRecord> {
    let mut records = Vec::with_capacity(pairings.len());
    let feed = SliceFeed {
        pairings,
        next: AtomicUsize::new(0),
    };
    run_games_with::<G, _>(
        entrants,
        cfg,
        None,
        &feed,
        jobs,
        |r| r,
        |r| {
            on_done(&r);
            records.push(r);
        },
    );
    records.sort_by_key(|r| r.id);
    records
}

/// What a worker does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Play this game.
    Play(Pairing),
    /// No game may start yet: the worker hands over the games it holds and
    /// asks again shortly.
    Wait,
    /// No game is left.
    Done,
}

/// Where workers take their games from, one at a time, in the order the
/// games should start. Shared by every worker of a run.
pub(crate) trait Feed: Sync {
    /// The next game, [`Next::Wait`] or [`Next::Done`].
    fn next(&self) -> Next;
    /// At most how many games are left (to start no more workers than games).
    fn remaining(&self) -> u64;
}

/// A fixed list of games, in order.
pub(crate) struct SliceFeed<'a> {
    pairings: &'a [Pairing],
    next: AtomicUsize,
}

impl<'a> SliceFeed<'a> {
    /// A feed of `pairings`, in order.
    pub(crate) fn new(pairings: &'a [Pairing]) -> Self {
        SliceFeed {
            pairings,
            next: AtomicUsize::new(0),
        }
    }
}

impl Feed for SliceFeed<'_> {
    fn next(&self) -> Next {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        match self.pairings.get(i) {
            Some(p) => Next::Play(p.clone()),
            None => Next::Done,
        }
    }

    fn remaining(&self) -> u64 {
        let taken = self.next.load(Ordering::Relaxed);
        self.pairings.len().saturating_sub(taken) as u64
    }
}

/// How long a worker told to wait sleeps before it asks again.
const WAIT_POLL: Duration = Duration::from_millis(1);

/// Plays the games of `feed` on `jobs` threads, each from its round's
/// opening of `openings` when given. Each finished record goes
/// through `work` on the worker thread that played it, at once (per-game
/// work such as serialising and appending it to the results file, which
/// must not wait for other games), then to `on_done` on the calling thread,
/// in finishing order and in small batches (see [`BATCH_WAIT`]).
pub(crate) fn run_games_with<G: BuiltinBots, T: Send>(
    entrants: &[Entrant],
    cfg: &RunConfig,
    openings: Option<&Openings>,
    feed: &dyn Feed,
    jobs: usize,
    work: impl Fn(GameRecord) -> T + Sync,
    mut on_done: impl FnMut(T),
) {
    let (tx, rx) = mpsc::channel::<Vec<T>>();
    std::thread::scope(|s| {
        let left = usize::try_from(feed.remaining()).unwrap_or(usize::MAX);
        let workers = jobs.max(1).min(left.max(1));
        let cpus = if cfg.affinity {
            affinity::plan(workers)
        } else {
            Vec::new()
        };
        for w in 0..workers {
            let tx = tx.clone();
            let work = &work;
            let cpu = cpus.get(w).copied();
            s.spawn(move || {
                // Bots started from this thread inherit its CPU.
                if let Some(cpu) = cpu {
                    affinity::pin_current_thread(cpu);
                }
                // Kept processes live as long as the worker: dropped (and
                // stopped) when it ends.
                let pool = ProcessPool::new(DEFAULT_POOL);
                // `work` has handled the game (written it out) before it is
                // batched: results go to the calling thread in small
                // batches, as one channel message per game costs more than
                // a short game. A batch is sent after BATCH_GAMES games or
                // BATCH_WAIT, whichever comes first, so standings and
                // progress never lag far behind, and before the worker
                // waits, since the feed may be waiting for those very games.
                let mut batch = Vec::new();
                let mut opened = Instant::now();
                loop {
                    if interrupt::interrupted().is_some() {
                        break;
                    }
                    let p = match feed.next() {
                        Next::Play(p) => p,
                        Next::Done => break,
                        Next::Wait => {
                            if !batch.is_empty() && tx.send(std::mem::take(&mut batch)).is_err() {
                                return;
                            }
                            std::thread::sleep(WAIT_POLL);
                            continue;
                        }
                    };
                    // A batch's age counts from the start of its first game,
                    // so a game that took BATCH_WAIT or more goes out at once
                    // instead of waiting for the next game to end.
                    if batch.is_empty() {
                        opened = Instant::now();
                    }
                    let rec = play_prepared::<G>(entrants, cfg, openings, &p, &pool);
                    if interrupt::interrupted().is_some() {
                        // Its bots may have been killed by the interruption:
                        // the game is not theirs to lose.
                        break;
                    }
                    batch.push(work(rec));
                    let full = batch.len() >= BATCH_GAMES || opened.elapsed() >= BATCH_WAIT;
                    if full && tx.send(std::mem::take(&mut batch)).is_err() {
                        return;
                    }
                }
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
            });
        }
        drop(tx);
        while let Ok(batch) = rx.recv() {
            for item in batch {
                on_done(item);
            }
        }
    });
}

/// Most games a worker gathers before handing them over.
const BATCH_GAMES: usize = 256;
/// Longest a finished game waits on its worker before it is handed to the
/// calling thread (for standings and progress; it was written out already).
pub(crate) const BATCH_WAIT: Duration = Duration::from_millis(2);

/// The default number of worker threads: the number of cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::BuiltinSpec;
    use crate::game::TicTacToe;

    fn entrants() -> Vec<Entrant> {
        ["random", "greedy"]
            .iter()
            .map(|n| Entrant {
                name: n.to_string(),
                spec: BotSpec::Builtin(BuiltinSpec::parse(n)),
            })
            .collect()
    }

    #[test]
    fn same_results_at_any_job_count() {
        let cfg = RunConfig {
            options: GameOptions::default(),
            time: TimeControl::default(),
            random_plies: 2,
            affinity: true,
        };
        let pairings: Vec<Pairing> = crate::play::schedule::Schedule::two_bots(200, 9)
            .pairings()
            .collect();
        let strip = |mut v: Vec<GameRecord>| {
            for r in &mut v {
                r.times_us.clear();
            }
            v
        };
        let a = strip(run_games::<TicTacToe>(
            &entrants(),
            &cfg,
            &pairings,
            1,
            |_| {},
        ));
        let b = strip(run_games::<TicTacToe>(
            &entrants(),
            &cfg,
            &pairings,
            4,
            |_| {},
        ));
        assert_eq!(a, b);
        // Both games of a pair start from the same opening.
        assert_eq!(a[0].opening, a[1].opening);
        assert_eq!(a[0].opening.len(), 2);
    }

    #[test]
    fn opening_never_ends_the_game() {
        for s in 0..50 {
            let o = opening(&TicTacToe::new(), 9, s);
            let mut p = TicTacToe::new();
            for m in o {
                p.play(m).unwrap();
            }
            assert!(!p.is_over());
        }
    }
}
