//! Exhaustive grading of a console program: every line of play.
//!
//! A console program keeps its own state and plays whole games from the
//! start, so it cannot be asked about one position at a time as a protocol
//! bot is. Instead it is run once per *line of play*: the opponent follows
//! a script of moves, and where the script ends it plays its first move in
//! the game's move order, while every other move it could have played there
//! becomes the script of a later run. Lines that share a prefix are merged
//! (the program's answer after a prefix is recorded once), and every answer
//! is judged by the solver.
//!
//! The opponent's moves are all legal moves but those that lose on the
//! spot while another is left (killing the last Notakto board): such a
//! move ends the game in the program's favour without asking it anything.
//!
//! Runs go in waves (every script known at the start of a wave), each wave
//! in parallel and judged in script order, so the result and the failure
//! reported do not depend on `--jobs`. A program that answers the same
//! prefix two ways is not deterministic: the exploration stops and says so
//! (grading then falls back to sampled games). A tree of more than
//! `max_lines` lines stops before running them, with a message that says
//! how far it got.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{outcome_value, Failure, Solved};
use crate::bot::{Bot, BotSpec, TimeControl};
use crate::game::{Game, GameOptions, Seat};
use crate::play::record::GameRecord;
use crate::play::referee::{play_game, GameSetup};
use crate::protocol::Forfeit;

/// How an exploration of lines ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum LinesEnd {
    /// Every line was run.
    Complete,
    /// A line was found that the program does not win (or draw, as
    /// required).
    Refuted(Box<Failure>),
    /// The program answered one prefix two ways.
    NotDeterministic(String),
    /// More lines than the budget.
    TooMany {
        /// Lines run.
        run: u64,
        /// Lines known and not run.
        pending: u64,
    },
}

/// What an exploration found.
#[derive(Clone, Debug)]
pub(crate) struct Lines {
    /// How it ended.
    pub end: LinesEnd,
    /// Lines run (one program run each).
    pub lines: u64,
    /// Distinct positions where the program chose a move.
    pub positions: u64,
    /// The program's moves in won positions, and how many kept the win.
    pub won_positions: u64,
    /// Of those, the moves that kept the win.
    pub kept: u64,
    /// Every game played, in script order.
    pub records: Vec<GameRecord>,
}

/// An opponent that plays a script, then its first candidate.
struct Scripted<G: Game> {
    script: Vec<G::Move>,
    played: usize,
}

/// The opponent's moves worth a line: all legal moves but those that lose
/// on the spot while another is left.
fn opponent_moves<G: Game>(pos: &G) -> Vec<G::Move> {
    super::opponent::not_losing_at_once(pos, pos.legal_moves().into_iter().collect())
}

impl<G: Game> Bot<G> for Scripted<G> {
    fn name(&self) -> &str {
        "lines"
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        let mv = match self.script.get(self.played) {
            Some(&m) => m,
            None => match opponent_moves(pos).first() {
                Some(&m) => m,
                None => return Err(crate::bot::no_move_forfeit(pos)),
            },
        };
        self.played += 1;
        Ok(mv)
    }
}

/// Explores every line of play of the console program `spec` in `seat`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn explore_lines<G: Solved>(
    spec: &BotSpec,
    seat: Seat,
    opts: &GameOptions,
    time: TimeControl,
    seed: u64,
    max_lines: u64,
    jobs: usize,
    mut on_line: impl FnMut(u64),
) -> Lines {
    let start = G::start(opts);
    let required = G::requirement(opts, seat);
    let mut out = Lines {
        end: LinesEnd::Complete,
        lines: 0,
        positions: 0,
        won_positions: 0,
        kept: 0,
        records: Vec::new(),
    };
    // The program's answer after each prefix of moves (as texts).
    let mut answers: HashMap<Vec<String>, String> = HashMap::new();
    let mut wave: Vec<Vec<G::Move>> = vec![Vec::new()];
    while !wave.is_empty() {
        if out.lines + wave.len() as u64 > max_lines {
            out.end = LinesEnd::TooMany {
                run: out.lines,
                pending: wave.len() as u64,
            };
            return out;
        }
        let records = run_wave::<G>(spec, seat, &start, time, seed, &wave, jobs);
        out.lines += wave.len() as u64;
        on_line(out.lines);
        let mut next = Vec::new();
        let mut refuted: Option<Failure> = None;
        for (script, r) in wave.iter().zip(&records) {
            let mut pos = start.clone();
            let mut texts: Vec<String> = Vec::new();
            let mut opp_turns = 0usize;
            for text in &r.moves {
                let Ok(mv) = G::parse_move(text) else { break };
                if pos.is_over() {
                    break;
                }
                if pos.to_move() == seat {
                    match answers.get(&texts) {
                        Some(a) if a != text => {
                            out.end = LinesEnd::NotDeterministic(format!(
                                "after {} it answered {a} in one run and {text} in another",
                                if texts.is_empty() {
                                    "the start".to_string()
                                } else {
                                    format!("`{}`", texts.join(" "))
                                }
                            ));
                            out.records = records;
                            return out;
                        }
                        Some(_) => {}
                        None => {
                            answers.insert(texts.clone(), text.clone());
                            out.positions += 1;
                            let before = pos.solve();
                            let mut after = pos.clone();
                            after.play_unchecked(mv);
                            let now = match after.outcome() {
                                Some(o) => outcome_value(o, seat),
                                None => -after.solve(),
                            };
                            if before > 0 {
                                out.won_positions += 1;
                                if now > 0 {
                                    out.kept += 1;
                                }
                            }
                            if now < required && before >= required && refuted.is_none() {
                                refuted =
                                    Some(Failure::threw_away(seat, before, &texts, &pos, text));
                            }
                        }
                    }
                } else {
                    if opp_turns >= script.len() {
                        // Past the script: every other move is a line of
                        // its own.
                        for alt in opponent_moves(&pos) {
                            if alt != mv {
                                let mut s: Vec<G::Move> = Vec::new();
                                let mut p = start.clone();
                                for t in &texts {
                                    if let Ok(m) = G::parse_move(t) {
                                        if p.to_move() != seat {
                                            s.push(m);
                                        }
                                        p.play_unchecked(m);
                                    }
                                }
                                s.push(alt);
                                next.push(s);
                            }
                        }
                    }
                    opp_turns += 1;
                }
                texts.push(text.clone());
                pos.play_unchecked(mv);
            }
            // A forfeit (crash, unreadable move, timeout) fails the line.
            if let Some(f) = r.forfeit.as_ref().filter(|f| f.seat == seat) {
                if refuted.is_none() {
                    refuted = Some(Failure {
                        seat: seat.number(),
                        reason: format!("forfeit by {}: {}", f.reason, f.detail),
                        moves: r.moves.clone(),
                        position: f.position.clone(),
                        bot_move: f.line.clone(),
                        missed: None,
                        replay: String::new(),
                    });
                }
            } else if refuted.is_none()
                && r.forfeit.is_none()
                && outcome_value(r.outcome(), seat) < required
            {
                refuted = Some(Failure {
                    seat: seat.number(),
                    reason: "the game missed the requirement".into(),
                    moves: r.moves.clone(),
                    position: pos.to_string(),
                    bot_move: None,
                    missed: None,
                    replay: String::new(),
                });
            }
        }
        out.records.extend(records);
        if let Some(f) = refuted {
            out.end = LinesEnd::Refuted(Box::new(f));
            return out;
        }
        wave = next;
    }
    out
}

/// Plays one game per script, `jobs` at a time; the records in script
/// order.
#[allow(clippy::too_many_arguments)]
fn run_wave<G: Solved>(
    spec: &BotSpec,
    seat: Seat,
    start: &G,
    time: TimeControl,
    seed: u64,
    scripts: &[Vec<G::Move>],
    jobs: usize,
) -> Vec<GameRecord> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<GameRecord>>> = scripts.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(scripts.len()) {
            s.spawn(|| loop {
                if crate::play::interrupt::interrupted().is_some() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(script) = scripts.get(i) else {
                    return;
                };
                let mut setup = GameSetup::new(i as u64, seed, start.clone());
                setup.time = time;
                let student = spec.instantiate::<G>(seed, &time, None);
                let mut opp = Scripted::<G> {
                    script: script.clone(),
                    played: 0,
                };
                let record = match student {
                    Ok(mut bot) => {
                        let (names, bots): ([String; 2], [&mut dyn Bot<G>; 2]) = match seat {
                            Seat::One => (
                                [super::STUDENT.into(), "lines".into()],
                                [&mut bot, &mut opp],
                            ),
                            Seat::Two => (
                                ["lines".into(), super::STUDENT.into()],
                                [&mut opp, &mut bot],
                            ),
                        };
                        play_game(&setup, bots, names)
                    }
                    Err(e) => {
                        let p = crate::play::schedule::Pairing {
                            id: i as u64,
                            players: [0, 1],
                            seed,
                            opening_seed: seed,
                            round: 0,
                        };
                        let names = match seat {
                            Seat::One => [super::STUDENT.into(), "lines".into()],
                            Seat::Two => ["lines".into(), super::STUDENT.into()],
                        };
                        let f = Forfeit::new(crate::protocol::ForfeitReason::Startup, e.0);
                        crate::play::runner::forfeit_record(&p, names, start, 0, seat, f)
                    }
                };
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(record);
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Notakto, TicTacToe};

    #[test]
    fn the_opponent_keeps_alive_while_it_can() {
        let pos = Notakto::start(&GameOptions {
            boards: 1,
            ..Default::default()
        });
        assert_eq!(opponent_moves(&pos).len(), 9);
        let mut t = TicTacToe::new();
        t.play_unchecked(TicTacToe::parse_move("4").unwrap());
        assert_eq!(opponent_moves(&t).len(), 8);
    }

    #[test]
    fn a_builtin_optimal_player_wins_every_line_on_one_board() {
        // The in-process optimal player stands in for a deterministic
        // program: every line is run, none refutes it.
        let spec = BotSpec::resolve::<Notakto>("optimal").unwrap();
        let opts = GameOptions {
            boards: 1,
            ..Default::default()
        };
        let r = explore_lines::<Notakto>(
            &spec,
            Seat::One,
            &opts,
            TimeControl::default(),
            3,
            10_000,
            2,
            |_| {},
        );
        // optimal picks at random among winning moves per game seed; with
        // one seed for all lines its answers repeat.
        assert_eq!(r.end, LinesEnd::Complete, "{:?}", r.end);
        assert!(r.lines > 8, "{} lines", r.lines);
        assert_eq!(r.won_positions, r.kept);
        let again = explore_lines::<Notakto>(
            &spec,
            Seat::One,
            &opts,
            TimeControl::default(),
            3,
            10_000,
            1,
            |_| {},
        );
        assert_eq!(again.lines, r.lines);
        assert_eq!(again.positions, r.positions);
    }

    #[test]
    fn greedy_is_refuted_and_a_small_budget_says_so() {
        let spec = BotSpec::resolve::<TicTacToe>("greedy").unwrap();
        let opts = GameOptions::default();
        let r = explore_lines::<TicTacToe>(
            &spec,
            Seat::Two,
            &opts,
            TimeControl::default(),
            3,
            100_000,
            2,
            |_| {},
        );
        assert!(matches!(r.end, LinesEnd::Refuted(_)), "{:?}", r.end);
        let r = explore_lines::<TicTacToe>(
            &spec,
            Seat::One,
            &opts,
            TimeControl::default(),
            3,
            5,
            2,
            |_| {},
        );
        assert!(
            matches!(r.end, LinesEnd::TooMany { run, .. } if run <= 5),
            "{:?}",
            r.end
        );
    }
}
