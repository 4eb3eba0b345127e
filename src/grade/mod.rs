//! Grading a student's AI against the optimal player (seed 000: a Notakto AI
//! that must always win, marked against an optimal AI at 1 s per move).
//!
//! Requirements per game: in Notakto the student plays the winning seat
//! (player 1 with an odd number of boards, player 2 with an even number) and
//! must win every game; in tic-tac-toe it must never lose, as X and as O; in
//! UTTT, which nobody has solved, it is scored against `random`, `greedy`
//! and `optimal` with pass thresholds.
//!
//! Sampled mode plays games against `optimal`, whose choices among equally
//! good moves (and among its replies when it is losing) vary with the seed.
//! Exhaustive mode ([`exhaustive`]) asks the bot at every position it can
//! reach against every opponent line, which proves the requirement or finds
//! a refutation.

pub mod exhaustive;

use serde::Serialize;

use crate::bot::tictactoe as ttt_bot;
use crate::bot::{notakto as nk_bot, BotSpec, BuiltinBots, TimeControl};
use crate::game::{Game, GameOptions, Notakto, Outcome, Seat, TicTacToe};
use crate::record::GameRecord;
use crate::runner::{run_games, Entrant, Pairing, RunConfig};
use crate::seed;

/// Games with a perfect solver, which grading uses to judge every move.
pub trait Solved: BuiltinBots {
    /// The perfect-play value for the player to move: 1 win, 0 draw, -1 loss.
    fn solve(&self) -> i8;

    /// A move that keeps the best value (the one a failure report names as
    /// missed).
    fn best_move(&self) -> Option<Self::Move>;

    /// What the bot in `seat` must achieve from the start: 1 (win every
    /// game) or 0 (never lose).
    fn requirement(opts: &GameOptions, seat: Seat) -> i8 {
        let start = Self::start(opts);
        let v = start.solve();
        if seat == start.to_move() {
            v
        } else {
            -v
        }
    }
}

impl Solved for TicTacToe {
    fn solve(&self) -> i8 {
        if let Some(o) = self.outcome() {
            return outcome_value(o, self.to_move());
        }
        ttt_bot::value(self).signum()
    }

    fn best_move(&self) -> Option<Self::Move> {
        ttt_bot::best_moves(self).first().copied()
    }
}

impl Solved for Notakto {
    fn solve(&self) -> i8 {
        if nk_bot::mover_wins(self) {
            1
        } else {
            -1
        }
    }

    fn best_move(&self) -> Option<Self::Move> {
        nk_bot::Optimal::candidates(self).first().copied()
    }
}

/// The value of a finished game for `seat`: 1 win, 0 draw, -1 loss.
pub fn outcome_value(o: Outcome, seat: Seat) -> i8 {
    match o {
        Outcome::Draw => 0,
        Outcome::Win(s) if s == seat => 1,
        Outcome::Win(_) => -1,
    }
}

/// The seats graded by default: Notakto's winning seat; both otherwise.
pub fn default_seats(kind: crate::game::GameKind, opts: &GameOptions) -> Vec<Seat> {
    match kind {
        crate::game::GameKind::Notakto if opts.boards % 2 == 1 => vec![Seat::One],
        crate::game::GameKind::Notakto => vec![Seat::Two],
        _ => vec![Seat::One, Seat::Two],
    }
}

/// One way the bot fell short, with everything needed to replay it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    /// The bot's seat.
    pub seat: u8,
    /// What went wrong, in words.
    pub reason: String,
    /// Every move from the start up to and including the bot's bad move
    /// (or the forfeit), in the notation `referee judge` and `play` take.
    pub moves: Vec<String>,
    /// The position the bot moved in.
    pub position: String,
    /// The bot's move there (`None` for a forfeit without a move).
    pub bot_move: Option<String>,
    /// A move that would have kept the required result (from the solver).
    pub missed: Option<String>,
}

/// The result of grading one bot.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GradeReport {
    /// The game.
    pub game: String,
    /// The bot's name.
    pub bot: String,
    /// `sampled` or `exhaustive` (or `exhaustive-canonical`).
    pub mode: String,
    /// Whether the bot met the requirement.
    pub passed: bool,
    /// What was required, in words.
    pub requirement: String,
    /// Games played (sampled mode).
    pub games: u64,
    /// Games the bot won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games the bot lost.
    pub losses: u64,
    /// Games the bot forfeited.
    pub forfeits: u64,
    /// Distinct positions the bot was asked about (exhaustive mode).
    pub positions_checked: u64,
    /// The bot's moves in won positions that kept the win, over all its
    /// moves in won positions (`None` when it had no won position).
    pub accuracy: Option<f64>,
    /// Every failure found (exhaustive mode stops at the first).
    pub failures: Vec<Failure>,
    /// Per-opponent scores (UTTT).
    pub scores: Vec<OpponentScore>,
    /// Wall time in seconds.
    pub elapsed_s: f64,
    /// A note for the reader (e.g. what `--canonical` checks).
    pub note: String,
}

/// A bot's score against one opponent (UTTT grading).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpponentScore {
    /// The opponent.
    pub opponent: String,
    /// Games played.
    pub games: u64,
    /// Points: win 1, draw 0.5.
    pub points: f64,
    /// Points over games, in percent.
    pub score_pct: f64,
    /// The pass threshold in percent.
    pub threshold_pct: f64,
    /// Whether the score reached the threshold.
    pub passed: bool,
}

/// Settings of a sampled grading run.
#[derive(Clone, Debug)]
pub struct SampledConfig {
    /// Game options.
    pub options: GameOptions,
    /// Seats the bot plays.
    pub seats: Vec<Seat>,
    /// Games per seat.
    pub games: u64,
    /// Time control.
    pub time: TimeControl,
    /// Master seed.
    pub seed: u64,
    /// Games played at once.
    pub jobs: usize,
}

/// Plays `games` games per seat of `student` against `opponent` and returns
/// the records (the student is entrant 0).
pub fn play_games<G: BuiltinBots>(
    student: &BotSpec,
    student_name: &str,
    opponent: &BotSpec,
    opponent_name: &str,
    cfg: &SampledConfig,
    on_done: impl FnMut(&GameRecord),
) -> Vec<GameRecord> {
    let entrants = [
        Entrant {
            name: student_name.to_string(),
            spec: student.clone(),
        },
        Entrant {
            name: opponent_name.to_string(),
            spec: opponent.clone(),
        },
    ];
    let run = RunConfig {
        options: cfg.options,
        time: cfg.time,
        random_plies: 0,
        affinity: true,
    };
    let mut pairings = Vec::new();
    for &seat in &cfg.seats {
        for g in 0..cfg.games {
            let id = pairings.len() as u64;
            pairings.push(Pairing {
                id,
                players: if seat == Seat::One { [0, 1] } else { [1, 0] },
                seed: seed::derive(cfg.seed, &[seat.number() as u64, g]),
                opening_seed: 0,
            });
        }
    }
    run_games::<G>(&entrants, &run, &pairings, cfg.jobs, on_done)
}

/// Grades sampled games of a solved game: counts results and, for each game
/// that missed the requirement, finds the bot's first move that lost value.
pub fn judge_sampled<G: Solved>(
    records: &[GameRecord],
    student_name: &str,
    opts: &GameOptions,
    report: &mut GradeReport,
) {
    let mut won_positions = 0u64;
    let mut kept = 0u64;
    for r in records {
        let Some(seat) = r.players.iter().position(|p| p == student_name) else {
            continue;
        };
        let seat = if seat == 0 { Seat::One } else { Seat::Two };
        report.games += 1;
        let v = outcome_value(r.outcome(), seat);
        match v {
            1 => report.wins += 1,
            0 => report.draws += 1,
            _ => report.losses += 1,
        }
        let forfeited = r.forfeit.as_ref().is_some_and(|f| f.seat == seat.number());
        if forfeited {
            report.forfeits += 1;
        }
        // Replay, judging each of the bot's moves with the solver.
        let mut pos = G::start(opts);
        let mut moves_so_far = Vec::new();
        let mut mistake: Option<Failure> = None;
        for text in &r.moves {
            let Ok(mv) = G::parse_move(text) else { break };
            if pos.to_move() == seat && !pos.is_over() {
                let before = pos.solve();
                let mut after = pos.clone();
                after.play_unchecked(mv);
                let now = if after.is_over() {
                    after.outcome().map_or(0, |o| outcome_value(o, seat))
                } else {
                    -after.solve()
                };
                if before > 0 {
                    won_positions += 1;
                    if now > 0 {
                        kept += 1;
                    }
                }
                if now < before && mistake.is_none() {
                    let mut line = moves_so_far.clone();
                    line.push(text.clone());
                    mistake = Some(Failure {
                        seat: seat.number(),
                        reason: format!(
                            "the move threw away a {} position",
                            if before > 0 { "won" } else { "drawn" }
                        ),
                        moves: line,
                        position: pos.to_string(),
                        bot_move: Some(text.clone()),
                        missed: pos.best_move().map(|m| m.to_string()),
                    });
                }
            }
            moves_so_far.push(text.clone());
            pos.play_unchecked(mv);
        }
        let required = G::requirement(opts, seat);
        if v < required || forfeited {
            let failure = match (&r.forfeit, mistake) {
                (Some(f), _) if forfeited => Failure {
                    seat: seat.number(),
                    reason: format!("forfeit by {}: {}", f.reason, f.detail),
                    moves: r.moves.clone(),
                    position: f.position.clone(),
                    bot_move: f.line.clone(),
                    missed: f
                        .position
                        .parse::<G>()
                        .ok()
                        .and_then(|p| p.best_move())
                        .map(|m| m.to_string()),
                },
                (_, Some(m)) => m,
                _ => Failure {
                    seat: seat.number(),
                    reason: "the game missed the requirement".into(),
                    moves: r.moves.clone(),
                    position: pos.to_string(),
                    bot_move: None,
                    missed: None,
                },
            };
            report.failures.push(failure);
        }
    }
    report.accuracy = (won_positions > 0).then(|| kept as f64 / won_positions as f64);
    report.passed = report.failures.is_empty() && report.games > 0;
}

/// The requirement in words.
pub fn requirement_text(kind: crate::game::GameKind, opts: &GameOptions, seats: &[Seat]) -> String {
    let who: Vec<String> = seats
        .iter()
        .map(|s| format!("player {}", s.number()))
        .collect();
    match kind {
        crate::game::GameKind::Notakto => format!(
            "win every game as {} with {} boards",
            who.join(" and "),
            opts.boards
        ),
        crate::game::GameKind::TicTacToe => format!("never lose, as {}", who.join(" and ")),
        crate::game::GameKind::Uttt => "score thresholds against random, greedy and optimal".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_follow_the_solver() {
        let o = GameOptions::default();
        assert_eq!(TicTacToe::requirement(&o, Seat::One), 0);
        assert_eq!(TicTacToe::requirement(&o, Seat::Two), 0);
        assert_eq!(
            Notakto::requirement(&GameOptions { boards: 3 }, Seat::One),
            1
        );
        assert_eq!(
            Notakto::requirement(&GameOptions { boards: 2 }, Seat::Two),
            1
        );
        assert_eq!(
            Notakto::requirement(&GameOptions { boards: 2 }, Seat::One),
            -1
        );
    }

    #[test]
    fn greedy_tictactoe_loses_and_the_mistake_is_found() {
        let student = BotSpec::resolve::<TicTacToe>("greedy").unwrap();
        let opt = BotSpec::resolve::<TicTacToe>("optimal").unwrap();
        let cfg = SampledConfig {
            options: GameOptions::default(),
            seats: vec![Seat::One, Seat::Two],
            games: 100,
            time: TimeControl::default(),
            seed: 1,
            jobs: 2,
        };
        let recs = play_games::<TicTacToe>(&student, "greedy", &opt, "optimal", &cfg, |_| {});
        let mut report = GradeReport::default();
        judge_sampled::<TicTacToe>(&recs, "greedy", &cfg.options, &mut report);
        assert_eq!(report.games, 200);
        assert!(!report.passed);
        assert!(report.losses > 0);
        let f = &report.failures[0];
        // The bad move is the last of the line, played from the position.
        let mut p: TicTacToe = f.position.parse().unwrap();
        let mv = f.bot_move.as_deref().unwrap().parse().unwrap();
        assert!(p.solve() >= 0);
        p.play(mv).unwrap();
        assert!(-p.solve() < 0, "the bot's move loses");
        assert!(f.missed.is_some());
    }

    #[test]
    fn optimal_passes_sampled_grading() {
        let opt = BotSpec::resolve::<Notakto>("optimal").unwrap();
        let cfg = SampledConfig {
            options: GameOptions { boards: 3 },
            seats: vec![Seat::One],
            games: 50,
            time: TimeControl::default(),
            seed: 2,
            jobs: 2,
        };
        let recs = play_games::<Notakto>(&opt, "student", &opt, "optimal", &cfg, |_| {});
        let mut report = GradeReport::default();
        judge_sampled::<Notakto>(&recs, "student", &cfg.options, &mut report);
        assert!(report.passed, "{:?}", report.failures);
        assert_eq!(report.wins, 50);
        assert_eq!(report.accuracy, Some(1.0));
    }
}
