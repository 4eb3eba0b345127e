//! Runs a list of games on worker threads. Each game's bots, seed and opening
//! are fixed by its [`Pairing`] alone, so results never depend on the number
//! of threads or on which game finishes first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::bot::{BotSpec, BuiltinBots, TimeControl};
use crate::game::{Game, GameOptions, Seat};
use crate::record::{Forfeit, ForfeitReason, GameRecord};
use crate::referee::{play_game, GameSetup};
use crate::seed;

/// One scheduled game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Game id: unique in the run, and the key for resuming.
    pub id: u64,
    /// Indices into the bot list, by seat.
    pub players: [usize; 2],
    /// The game's seed.
    pub seed: u64,
    /// Seed of the opening; both games of a pair share it.
    pub opening_seed: u64,
}

/// Settings shared by every game of a run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Game options (Notakto boards).
    pub options: GameOptions,
    /// Time control for every bot.
    pub time: TimeControl,
    /// Random plies played before the bots take over.
    pub random_plies: usize,
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
pub fn opening<G: Game>(start: &G, plies: usize, opening_seed: u64) -> Vec<G::Move> {
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

/// Plays one scheduled game.
pub fn play_pairing<G: BuiltinBots>(
    entrants: &[Entrant],
    cfg: &RunConfig,
    p: &Pairing,
) -> GameRecord {
    let start = G::start(&cfg.options);
    let mut setup = GameSetup::new(p.id, p.seed, start.clone());
    setup.time = cfg.time;
    setup.opening = opening(&start, cfg.random_plies, p.opening_seed);
    let names = p.players.map(|i| entrants[i].name.clone());
    let mut made = Vec::with_capacity(2);
    for seat in Seat::BOTH {
        let e = &entrants[p.players[seat.index()]];
        let bot_seed = seed::derive(p.seed, &[seat.number() as u64]);
        made.push(e.spec.instantiate::<G>(bot_seed, &cfg.time));
    }
    let mut it = made.into_iter();
    match (it.next(), it.next()) {
        (Some(Ok(mut a)), Some(Ok(mut b))) => play_game(&setup, [&mut a, &mut b], names),
        (first, _) => {
            // A bot that cannot even be made forfeits by start-up; the game is
            // still recorded so that nothing is silently dropped.
            let seat = if matches!(first, Some(Ok(_))) { 2 } else { 1 };
            let mut f = Forfeit::new(ForfeitReason::Startup, "the bot could not be created");
            f.seat = seat;
            f.move_number = setup.opening.len() + 1;
            f.position = start.to_string();
            GameRecord {
                id: p.id,
                game: G::KIND.name().into(),
                players: names,
                seed: p.seed,
                opening: vec![],
                start: start.to_string(),
                moves: vec![],
                times_us: vec![],
                winner: Some(3 - seat),
                termination: crate::record::Termination::Forfeit(ForfeitReason::Startup),
                forfeit: Some(f),
                final_position: start.to_string(),
                client: None,
            }
        }
    }
}

/// Plays every pairing on `jobs` threads, calling `on_done` on the calling
/// thread as each game finishes (in finishing order). Returns the records
/// sorted by id.
pub fn run_games<G: BuiltinBots>(
    entrants: &[Entrant],
    cfg: &RunConfig,
    pairings: &[Pairing],
    jobs: usize,
    mut on_done: impl FnMut(&GameRecord),
) -> Vec<GameRecord> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<GameRecord>();
    let mut records = Vec::with_capacity(pairings.len());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(pairings.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = pairings.get(i) else { break };
                if tx.send(play_pairing::<G>(entrants, cfg, p)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for rec in rx {
            on_done(&rec);
            records.push(rec);
        }
    });
    records.sort_by_key(|r| r.id);
    records
}

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
        };
        let pairings: Vec<Pairing> = (0..200)
            .map(|i| Pairing {
                id: i,
                players: if i % 2 == 0 { [0, 1] } else { [1, 0] },
                seed: seed::derive(9, &[i]),
                opening_seed: seed::derive(9, &[i / 2, 99]),
            })
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
