//! Grading a student's AI against the optimal player (the Notakto course assignment: a Notakto AI
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

mod breaker;
pub mod catch;
pub mod class;
pub mod exhaustive;
pub mod feedback;
pub mod graders;
pub mod league;
pub(crate) mod lines;
pub(crate) mod opponent;
pub mod rubric;
pub mod text;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::bot::manifest::ExternalKind;
use crate::bot::spec::ProcessSettings;
use crate::bot::tictactoe as ttt_bot;
use crate::bot::{notakto as nk_bot, BotSpec, BuiltinBots, BuiltinSpec, TimeControl};
use crate::game::{Game, GameKind, GameOptions, Notakto, Outcome, Seat, TicTacToe, Uttt};
use crate::play::journal::RunFolder;
use crate::play::record::GameRecord;
use crate::play::runner::{forfeit_record, run_games_with, Entrant, RunConfig};
use crate::play::schedule::{Pairing, Schedule};
use crate::play::standings::Wdl;
use crate::play::Observer;
use crate::protocol::{Forfeit, ForfeitReason};
use crate::seed;
use breaker::{Breaker, BreakerFeed};

/// Games with a perfect solver, which grading uses to judge every move.
pub trait Solved: BuiltinBots {
    /// The perfect-play value for the player to move: 1 win, 0 draw, -1 loss.
    fn solve(&self) -> i8;

    /// A move that keeps the best value (the one a failure report names as
    /// missed).
    fn best_move(&self) -> Option<Self::Move>;

    /// The moves that keep the best value and, in a lost position, leave
    /// the opponent the fewest good replies (the built-in `optimal`'s
    /// choices).
    fn resisting_moves(&self) -> Vec<Self::Move>;

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

    fn resisting_moves(&self) -> Vec<Self::Move> {
        ttt_bot::best_moves(self)
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

    fn resisting_moves(&self) -> Vec<Self::Move> {
        nk_bot::Optimal::candidates(self).to_vec()
    }
}

/// How grading asks the bot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GradeMode {
    /// Games against `optimal` (and, for UTTT, `random` and `greedy`).
    #[default]
    Sampled,
    /// Every position the bot can reach against every opponent line.
    Exhaustive,
    /// The same, one position asked per symmetry class.
    ExhaustiveCanonical,
}

impl GradeMode {
    /// Whether the bot is asked at every reachable position.
    pub(crate) fn is_exhaustive(self) -> bool {
        self != GradeMode::Sampled
    }
}

/// UTTT pass thresholds: the score needed against each built-in, in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// Against `random`.
    pub random: f64,
    /// Against `greedy`.
    pub greedy: f64,
    /// Against `optimal`.
    pub optimal: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            random: 95.0,
            greedy: 0.0,
            optimal: 0.0,
        }
    }
}

/// Everything that fixes how one bot is graded.
#[derive(Clone, Debug)]
pub struct GradeConfig {
    /// Game options (Notakto boards).
    pub options: GameOptions,
    /// The seats graded (`None`: the game's graded seats, Notakto's winning
    /// seat, both otherwise).
    pub seats: Option<Vec<Seat>>,
    /// Games per seat in sampled mode (per opponent for UTTT).
    pub games: u64,
    /// How the bot is asked.
    pub mode: GradeMode,
    /// Master seed.
    pub seed: u64,
    /// Bot processes or games at once.
    pub jobs: usize,
    /// UTTT pass thresholds.
    pub thresholds: Thresholds,
    /// Time control for the bot.
    pub time: TimeControl,
    /// A run folder for every sampled game.
    pub out: Option<PathBuf>,
    /// How the bot's process starts (sandbox, environment, reuse).
    pub process: ProcessSettings,
    /// Turns the results into points (`None`: the requirement, all or
    /// nothing, out of 100).
    pub rubric: Option<rubric::Rubric>,
    /// Timeouts in a row after which the bot is stopped and its remaining
    /// games count as timeout forfeits (0: never).
    pub max_timeouts: u32,
    /// Play every sampled game even after one has missed the requirement
    /// (by default grading stops there: the verdict is settled).
    pub keep_going: bool,
    /// Whether `games` was chosen by the user (else a console program gets
    /// [`DEFAULT_CONSOLE_GAMES`]).
    pub games_explicit: bool,
    /// The form of the submission (`None`: the rubric's, else a protocol
    /// bot).
    pub form: Option<rubric::Form>,
    /// The program file of a submission folder with several.
    pub entry: Option<String>,
    /// Exhaustive grading of a console program: at most this many lines of
    /// play (one process each).
    pub max_lines: u64,
}

/// Games per seat when a console program is graded and `--games` is not
/// given: enough to catch an AI that loses about 1 % of random games on at
/// least 99 % of seeds (measured with `cargo bench --bench catch_rate`:
/// docs/grading.md, "How many games"), and about half a minute for a
/// Python program on 2 cores.
pub const DEFAULT_CONSOLE_GAMES: u64 = 200;

/// The default of [`GradeConfig::max_lines`].
pub const DEFAULT_MAX_LINES: u64 = 20_000;

/// The default of [`GradeConfig::max_timeouts`].
pub const DEFAULT_MAX_TIMEOUTS: u32 = 3;

impl Default for GradeConfig {
    fn default() -> Self {
        GradeConfig {
            options: GameOptions::default(),
            seats: None,
            games: 100,
            mode: GradeMode::Sampled,
            seed: 1,
            jobs: 1,
            thresholds: Thresholds::default(),
            time: TimeControl::default(),
            out: None,
            process: ProcessSettings::default(),
            rubric: None,
            max_timeouts: DEFAULT_MAX_TIMEOUTS,
            keep_going: false,
            games_explicit: false,
            form: None,
            entry: None,
            max_lines: DEFAULT_MAX_LINES,
        }
    }
}

impl GradeConfig {
    /// The `referee grade` command line that plays the same games with
    /// `bot` (the rubric and process settings aside).
    pub(crate) fn command_line(&self, kind: GameKind, bot: &str) -> String {
        let mut words: Vec<String> = vec!["referee".into(), "grade".into(), kind.name().into()];
        if let Some(boards) = kind.boards(&self.options) {
            words.extend(["--boards".into(), boards.to_string()]);
        }
        if let Some(seats) = &self.seats {
            let seat = match seats.as_slice() {
                [s] => s.number().to_string(),
                _ => "both".into(),
            };
            words.extend(["--seat".into(), seat]);
        }
        match self.mode {
            GradeMode::Sampled => words.extend(["--games".into(), self.games.to_string()]),
            GradeMode::Exhaustive => words.push("--exhaustive".into()),
            GradeMode::ExhaustiveCanonical => {
                words.push("--exhaustive".into());
                words.push("--canonical".into());
            }
        }
        if !self.options.rules.is_standard() {
            words.extend(["--rules".into(), self.options.rules.name().into()]);
        }
        words.extend(["--seed".into(), self.seed.to_string()]);
        if self.time == crate::bot::TimeControl::CODINGAME {
            words.extend(["--time-profile".into(), "codingame".into()]);
        } else {
            words.extend(["--time-ms".into(), self.time.move_ms.to_string()]);
        }
        if let Some(p) = self.process.protocol {
            words.extend(["--protocol".into(), p.name().into()]);
        }
        if self.max_timeouts != DEFAULT_MAX_TIMEOUTS {
            words.extend(["--max-timeouts".into(), self.max_timeouts.to_string()]);
        }
        if self.keep_going {
            words.push("--keep-going".into());
        }
        if self.form() == rubric::Form::Console {
            words.extend(["--form".into(), "console".into()]);
            if let Some(e) = self.entry() {
                words.extend(["--entry".into(), e]);
            }
        }
        if kind == GameKind::Uttt {
            let t = self.thresholds;
            let d = Thresholds::default();
            for (flag, v, dv) in [
                ("min-vs-random", t.random, d.random),
                ("min-vs-greedy", t.greedy, d.greedy),
                ("min-vs-optimal", t.optimal, d.optimal),
            ] {
                if v != dv {
                    words.extend([format!("--{flag}"), v.to_string()]);
                }
            }
        }
        // The rubric and the sandbox decide the points too: without them
        // the line would grade something else.
        if let Some(r) = self.rubric.as_ref().filter(|r| !r.source.is_empty()) {
            let path = std::path::absolute(&r.source).unwrap_or_else(|_| r.source.clone().into());
            words.extend(["--rubric".into(), path.display().to_string()]);
        }
        match self.process.sandbox {
            Some(crate::bot::manifest::SandboxMode::On) => words.push("--sandbox".into()),
            Some(crate::bot::manifest::SandboxMode::BestEffort) => {
                words.push("--sandbox=best-effort".into())
            }
            Some(crate::bot::manifest::SandboxMode::Off) => words.push("--no-sandbox".into()),
            None => {}
        }
        words.push(bot.to_string());
        shell_words::join(words)
    }

    /// The rubric grading scores by: the one given, else the requirement
    /// alone.
    pub fn rubric(&self) -> rubric::Rubric {
        self.rubric
            .clone()
            .unwrap_or_else(rubric::Rubric::requirement_only)
    }

    /// The form submissions take: `--form`, else the rubric's, else a
    /// protocol bot.
    pub fn form(&self) -> rubric::Form {
        self.form
            .or(self.rubric.as_ref().and_then(|r| r.form))
            .unwrap_or_default()
    }

    /// The program file of a submission folder with several: `--entry`,
    /// else the rubric's.
    pub fn entry(&self) -> Option<String> {
        self.entry
            .clone()
            .or_else(|| self.rubric.as_ref().and_then(|r| r.entry.clone()))
    }

    /// The seats graded for game `G`.
    pub(crate) fn seats_for<G: Game>(&self) -> Vec<Seat> {
        self.seats
            .clone()
            .unwrap_or_else(|| G::graded_seats(&self.options))
    }
}

/// Games a student's AI can be graded in, each its own way: solved games
/// against perfect play, UTTT by score against the built-ins.
pub(crate) trait Gradable: BuiltinBots {
    /// Grades `spec` (shown as `name`) by `cfg`'s requirement, telling
    /// `observer` how far it is; every game played goes to `records`.
    fn grade_bot(
        spec: &BotSpec,
        name: &str,
        cfg: &GradeConfig,
        observer: &dyn Observer,
        breaker: &Arc<Breaker>,
        records: &mut Vec<GameRecord>,
    ) -> anyhow::Result<GradeReport>;
}

/// Solved games (tic-tac-toe, Notakto) are graded against perfect play.
impl<G: Solved> Gradable for G {
    fn grade_bot(
        spec: &BotSpec,
        name: &str,
        cfg: &GradeConfig,
        observer: &dyn Observer,
        breaker: &Arc<Breaker>,
        records: &mut Vec<GameRecord>,
    ) -> anyhow::Result<GradeReport> {
        grade_solved::<G>(spec, name, cfg, observer, breaker, records)
    }
}

impl Gradable for Uttt {
    fn grade_bot(
        spec: &BotSpec,
        name: &str,
        cfg: &GradeConfig,
        observer: &dyn Observer,
        breaker: &Arc<Breaker>,
        records: &mut Vec<GameRecord>,
    ) -> anyhow::Result<GradeReport> {
        grade_scored(spec, name, cfg, observer, breaker, records)
    }
}

/// The name the student's bot has in its game records.
pub(crate) const STUDENT: &str = "student";

/// What `bot` names: a submission folder (its `bot.toml`, `bot.py` or
/// executable `bot`, shown as `.` in the command that reproduces the
/// grading, which is run from that folder) or a bot as `resolve` takes it.
fn bot_text(bot: &str, cfg: &GradeConfig) -> anyhow::Result<(String, String)> {
    let path = Path::new(bot);
    if path.is_dir() {
        let command = class::submission_bot(path, cfg.form(), cfg.entry().as_deref())
            .map_err(|e| anyhow::anyhow!("{bot}: {e}"))?;
        Ok((command, ".".into()))
    } else if cfg.form() == rubric::Form::Console
        && !bot.trim_start().starts_with("console:")
        && !bot.trim().ends_with(".toml")
        && BuiltinSpec::parse(bot).name.contains([' ', '/', '.'])
    {
        // A command line graded in the console form.
        Ok((format!("console:{bot}"), bot.to_string()))
    } else {
        Ok((bot.to_string(), bot.to_string()))
    }
}

/// Grades the bot named `bot` in game `kind` (a built-in, a manifest, a
/// command line, `console:COMMAND` or a submission folder): the
/// requirement, then the games and checks the rubric asks for, and the
/// rubric's points. `--out` is opened before the first game.
///
/// Proving that the perfect player never loses tic-tac-toe, in both seats,
/// against every line of play:
///
/// ```
/// use referee::game::GameKind;
/// use referee::grade::{grade, GradeConfig, GradeMode};
/// use referee::play::Silent;
///
/// let cfg = GradeConfig { mode: GradeMode::Exhaustive, ..GradeConfig::default() };
/// let report = grade(GameKind::TicTacToe, "optimal", &cfg, &Silent)?;
/// assert!(report.passed);
/// assert!(report.failures.is_empty());
/// // The one-ply greedy rules are refuted, with the line that beats them.
/// let report = grade(GameKind::TicTacToe, "greedy", &cfg, &Silent)?;
/// assert!(!report.passed && !report.failures.is_empty());
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn grade(
    kind: GameKind,
    bot: &str,
    cfg: &GradeConfig,
    observer: &dyn Observer,
) -> anyhow::Result<GradeReport> {
    check_rubric(kind, cfg)?;
    let folder = match &cfg.out {
        Some(dir) => {
            let (folder, games) = RunFolder::open(dir)?;
            for n in &games.notes {
                observer.note(n);
            }
            Some(folder)
        }
        None => None,
    };
    let rubric = cfg.rubric();
    let (command, shown) = bot_text(bot, cfg)?;
    crate::with_game!(kind, G => {
        let mut spec = BotSpec::resolve::<G>(&command).with_context(|| format!("bot '{bot}'"))?;
        spec.adjust(&cfg.process);
        spec.check_game(G::KIND)?;
        if let (true, Some(why)) = (cfg.mode.is_exhaustive(), spec.empty_board_only()) {
            bail!("{why}, not asked about single positions: grade it without --exhaustive (whole games)");
        }
        for lack in spec.check_sandbox()? {
            observer.note(&format!("warning: best-effort sandbox without {lack}"));
        }
        if let Some(folder) = &folder {
            // What the report of the folder shows about the grading.
            let mut s = crate::play::journal::RunSettings::new::<G>("grading", &cfg.options);
            s.time_ms = Some(cfg.time.move_ms);
            s.startup_ms = Some(cfg.time.startup_ms);
            s.seed = Some(cfg.seed);
            s.games = (!cfg.mode.is_exhaustive()).then_some(cfg.games);
            s.bots.push(crate::play::journal::BotAbout::of::<G>(STUDENT, &spec));
            folder.write_settings(&s)?;
        }
        let mut records = Vec::new();
        let started = Instant::now();
        let breaker = Arc::new(Breaker::new(cfg.max_timeouts));
        // Denied attempts are counted from here on (docs/sandbox.md).
        if let BotSpec::External(e) = &spec {
            crate::bot::process::take_denials(e);
        }
        let console = matches!(&spec, BotSpec::External(e) if e.kind == ExternalKind::Console);
        let mut cfg = cfg.clone();
        if console && !cfg.games_explicit {
            cfg.games = DEFAULT_CONSOLE_GAMES;
        }
        let cfg = &cfg;
        let mut report = if rubric.needs_play() {
            G::grade_bot(&spec, bot, cfg, observer, &breaker, &mut records)?
        } else {
            transcripts_report::<G>(&spec, bot, cfg, &rubric, observer)?
        };
        // The rubric's opponents not played yet, and games for its timing
        // items when exhaustive grading played none.
        let mut extra: Vec<(String, f64)> = rubric
            .opponents()
            .into_iter()
            .map(|o| {
                let need = rubric.threshold_vs(&o);
                (o, need)
            })
            .collect();
        if rubric.needs_timing() && records.is_empty() {
            extra.push(("optimal".into(), 0.0));
        }
        for (opponent, threshold) in extra {
            if report.scores.iter().any(|s| s.opponent == opponent) {
                continue;
            }
            if !records.iter().any(|r| r.players.contains(&opponent)) {
                let opp = BotSpec::resolve::<G>(&opponent)
                    .with_context(|| format!("rubric opponent '{opponent}'"))?;
                let sampled = SampledConfig {
                    options: cfg.options,
                    seats: cfg.seats_for::<G>(),
                    games: cfg.games,
                    time: cfg.time,
                    seed: seed::derive_text(cfg.seed, &opponent),
                    jobs: cfg.jobs,
                    breaker: breaker.clone(),
                    settle: None,
                };
                observer.begin(
                    &format!("games vs {opponent}"),
                    Some(cfg.games * sampled.seats.len() as u64),
                    0,
                );
                let played = play_games::<G>(&spec, STUDENT, &opp, &opponent, &sampled, |_| {
                    observer.advance(1)
                });
                observer.end();
                count_games(&played, &mut report);
                records.extend(played);
            }
            let score = opponent_score(&records, &opponent, threshold);
            report.scores.push(score);
        }
        report.timing = Timing::of::<G>(&records, STUDENT, cfg.time.startup_ms);
        report.format = format_report(&records, STUDENT, console && rubric.needs_play());
        report.randomised = answers_differ::<G>(&records, STUDENT);
        report.first_forfeit = first_forfeit(&records, STUDENT);
        if let Some(f) = &mut report.first_forfeit {
            f.replay = judge_command::<G>(&cfg.options, &f.moves);
        }
        for f in &mut report.failures {
            f.replay = judge_command::<G>(&cfg.options, &f.moves);
        }
        if rubric.needs_check() {
            report.check = Some(check_summary::<G>(&spec, cfg)?);
        }
        if let Some(folder) = &folder {
            for r in &records {
                folder.append(r)?;
            }
        }
        report.stopped = breaker.reason();
        if let BotSpec::External(e) = &spec {
            let d = crate::bot::process::take_denials(e);
            report.denied = d.count;
            report.denied_examples = d.examples;
        }
        report.seed = cfg.seed;
        report.reproduce = cfg.command_line(kind, &shown);
        report.rubric_title = rubric.title.clone();
        report.rubric = rubric.score(&report);
        report.points = report.rubric.iter().map(|i| i.points).sum();
        report.max_points = rubric.max_points();
        report.elapsed_s = started.elapsed().as_secs_f64();
        Ok(report)
    })
}

/// Part 1 of the assignment: the program's transcripts of generated
/// human-vs-human games against `referee play`'s (`check-console`).
fn transcripts_report<G: Game>(
    spec: &BotSpec,
    name: &str,
    cfg: &GradeConfig,
    rubric: &rubric::Rubric,
    observer: &dyn Observer,
) -> anyhow::Result<GradeReport> {
    let BotSpec::External(e) = spec else {
        bail!("the transcripts check runs a console program, not a built-in bot");
    };
    let (games, accept_whitespace) = rubric
        .transcripts()
        .unwrap_or((rubric::DEFAULT_TRANSCRIPT_GAMES, false));
    let timeout =
        std::time::Duration::from_millis((cfg.time.move_ms + cfg.time.startup_ms).max(1000) * 3);
    observer.begin("transcripts", Some(games as u64), 0);
    let check = crate::console::check::check_program::<G>(
        e,
        &cfg.options,
        games,
        cfg.seed,
        timeout,
        || observer.advance(1),
    )?;
    observer.end();
    let ok = check.matched
        + if accept_whitespace {
            check.whitespace_only
        } else {
            0
        };
    let first = check.mismatches.first().map(|m| TranscriptMismatch {
        game: m.game,
        input: m.input.clone(),
        diff: m.diff.clone(),
        whitespace_only: m.whitespace_only,
        status: m.status.clone(),
        stderr_tail: m.stderr_tail.clone(),
    });
    Ok(GradeReport {
        game: G::KIND.name().into(),
        bot: name.to_string(),
        passed: ok == check.games,
        requirement: format!(
            "the program prints what `referee play` prints for the same input, in {games} \
             generated games{}",
            if accept_whitespace {
                " (whitespace-only differences accepted)"
            } else {
                ""
            }
        ),
        transcripts: Some(TranscriptSummary {
            games: check.games,
            matched: check.matched,
            whitespace_only: check.whitespace_only,
            accept_whitespace,
            first,
        }),
        ..GradeReport::default()
    })
}

/// Refuses a rubric written for other settings (its `[settings]`) than
/// the grading's game, boards, seats and time limit.
pub(crate) fn check_rubric(kind: GameKind, cfg: &GradeConfig) -> anyhow::Result<()> {
    let Some(rubric) = &cfg.rubric else {
        return Ok(());
    };
    let seats = crate::with_game!(kind, G => cfg.seats_for::<G>());
    match rubric.settings.mismatch(
        kind,
        cfg.options.boards,
        &seats,
        cfg.time.move_ms,
        cfg.options.rules,
    ) {
        Some(why) => bail!("rubric {} does not fit this grading: {why}", rubric.source),
        None => Ok(()),
    }
}

/// The `referee judge` command that replays `moves`.
pub(crate) fn judge_command<G: Game>(opts: &GameOptions, moves: &[String]) -> String {
    let mut words = vec!["referee".to_string(), "judge".into(), G::KIND.name().into()];
    if let Some(boards) = G::KIND.boards(opts) {
        words.extend(["--boards".into(), boards.to_string()]);
    }
    words.push(G::join_moves(moves));
    shell_words::join(words)
}

/// Adds the student's results in `records` to the report's games, W-D-L
/// and forfeits.
fn count_games(records: &[GameRecord], report: &mut GradeReport) {
    for r in records {
        let Some(seat) = student_seat(r, STUDENT) else {
            continue;
        };
        report.games += 1;
        report.wdl.add(r.points(seat));
        if r.forfeit.as_ref().is_some_and(|f| f.seat == seat) {
            report.forfeits += 1;
        }
    }
}

/// The seat `name` played in `r`.
fn student_seat(r: &GameRecord, name: &str) -> Option<Seat> {
    match r.players.iter().position(|p| p == name)? {
        0 => Some(Seat::One),
        _ => Some(Seat::Two),
    }
}

/// The student's score against `opponent` over `records`, against a
/// threshold in percent.
fn opponent_score(records: &[GameRecord], opponent: &str, threshold: f64) -> OpponentScore {
    let mut vs = Wdl::default();
    for r in records
        .iter()
        .filter(|r| r.players.iter().any(|p| p == opponent))
    {
        if let Some(seat) = student_seat(r, STUDENT) {
            vs.add(r.points(seat));
        }
    }
    let pct = if vs.games() > 0 {
        100.0 * vs.score()
    } else {
        0.0
    };
    OpponentScore {
        opponent: opponent.into(),
        games: vs.games(),
        points: vs.points(),
        score_pct: pct,
        threshold_pct: threshold,
        passed: vs.games() > 0 && pct >= threshold,
    }
}

/// The student's first forfeit, in the order the games were played
/// (opponent by opponent, then by game id).
fn first_forfeit(records: &[GameRecord], name: &str) -> Option<ForfeitedGame> {
    records.iter().find_map(|r| {
        let seat = student_seat(r, name)?;
        let f = r.forfeit.as_ref().filter(|f| f.seat == seat)?;
        Some(ForfeitedGame {
            opponent: r.players[seat.other().index()].clone(),
            seat: seat.number(),
            moves: r.moves.clone(),
            replay: String::new(),
            forfeit: f.clone(),
        })
    })
}

/// Runs `referee check` on an external bot (a built-in needs none).
fn check_summary<G: BuiltinBots>(
    spec: &BotSpec,
    cfg: &GradeConfig,
) -> anyhow::Result<CheckSummary> {
    match spec {
        BotSpec::Builtin(_) => Ok(CheckSummary {
            passed: 1,
            failed: Vec::new(),
        }),
        BotSpec::External(e) => {
            let r = crate::check::run_checks::<G>(e, &cfg.options, &cfg.time)?;
            Ok(CheckSummary {
                passed: r.results.iter().filter(|c| c.pass).count(),
                failed: r
                    .results
                    .iter()
                    .filter(|c| !c.pass)
                    .map(|c| format!("{}: {}", c.name, c.detail))
                    .collect(),
            })
        }
    }
}

/// Grades a bot in a solved game: exhaustively or by sampled games against
/// `optimal`, every move judged by the solver.
fn grade_solved<G: Solved>(
    spec: &BotSpec,
    name: &str,
    cfg: &GradeConfig,
    observer: &dyn Observer,
    breaker: &Arc<Breaker>,
    records: &mut Vec<GameRecord>,
) -> anyhow::Result<GradeReport> {
    let options = cfg.options;
    let seats = cfg.seats_for::<G>();
    for &s in &seats {
        if G::requirement(&options, s) < 0 {
            bail!(
                "player {} cannot avoid losing {} with {} board(s) against perfect play; \
                 grade the winning seat",
                s.number(),
                G::KIND,
                options.boards
            );
        }
    }
    let mut report = GradeReport {
        game: G::KIND.name().into(),
        bot: name.to_string(),
        mode: cfg.mode,
        requirement: G::requirement_text(&options, &seats),
        ..GradeReport::default()
    };
    let console = matches!(spec, BotSpec::External(e) if e.kind == ExternalKind::Console);
    if cfg.mode.is_exhaustive() && console {
        if cfg.mode == GradeMode::ExhaustiveCanonical {
            bail!(
                "--canonical needs a bot asked position by position; a console program is run \
                 once per line of play: use --exhaustive alone"
            );
        }
        let (mut won, mut kept, mut lines) = (0u64, 0u64, 0u64);
        let mut fallback = None;
        for &seat in &seats {
            observer.begin(&format!("lines of play (player {seat})"), None, 0);
            let mut shown = 0;
            let r = lines::explore_lines::<G>(
                spec,
                seat,
                &options,
                cfg.time,
                cfg.seed,
                cfg.max_lines.saturating_sub(lines),
                cfg.jobs,
                |n| {
                    observer.advance(n.saturating_sub(shown));
                    shown = n;
                },
            );
            observer.end();
            lines += r.lines;
            report.positions_checked += r.positions;
            won += r.won_positions;
            kept += r.kept;
            count_games(&r.records, &mut report);
            records.extend(r.records);
            match r.end {
                lines::LinesEnd::Complete => {}
                lines::LinesEnd::Refuted(f) => {
                    report.failures.push(*f);
                    break;
                }
                lines::LinesEnd::NotDeterministic(why) => {
                    fallback = Some(format!(
                        "not deterministic ({why}): its games depend on more than its input, so \
                         it was graded by sampled games instead"
                    ));
                    break;
                }
                lines::LinesEnd::TooMany { run, pending } => bail!(
                    "the program's tree of play has more lines than --max-lines {} ({run} lines \
                     run, {pending} more known and not run): raise --max-lines (each line is one \
                     run of the program), or grade by sampled games (without --exhaustive)",
                    cfg.max_lines
                ),
            }
        }
        if let Some(note) = fallback {
            records.clear();
            let played = games_vs_grading_opponent::<G>(spec, cfg, seats, breaker, observer);
            let mut sampled_report = GradeReport {
                mode: GradeMode::Sampled,
                note,
                ..report
            };
            sampled_report.games = 0;
            sampled_report.wdl = Wdl::default();
            sampled_report.forfeits = 0;
            sampled_report.failures.clear();
            judge_sampled::<G>(&played, STUDENT, &options, &mut sampled_report);
            records.extend(played);
            return Ok(sampled_report);
        }
        report.note = format!(
            "exhaustive over every line of play: {lines} lines (one run of the program each), \
             {} distinct positions where it chose a move",
            report.positions_checked
        );
        report.accuracy = (won > 0).then(|| kept as f64 / won as f64);
        report.passed = report.failures.is_empty();
    } else if cfg.mode.is_exhaustive() {
        if cfg.mode == GradeMode::ExhaustiveCanonical {
            report.note = "canonical: one position per symmetry class was asked (a bot that \
                           plays symmetric positions alike gets the same verdict as in full \
                           exhaustive mode)"
                .into();
        }
        let (mut won, mut kept) = (0u64, 0u64);
        for &seat in &seats {
            let mut oracles: Vec<Box<dyn exhaustive::Oracle<G>>> = Vec::new();
            for _ in 0..cfg.jobs.max(1) {
                oracles.push(
                    exhaustive::make_oracle::<G>(spec, seat, cfg.time, cfg.seed)
                        .map_err(|e| anyhow::anyhow!("bot '{name}': {e}"))?,
                );
            }
            observer.begin(&format!("positions (player {seat})"), None, 0);
            let mut shown = 0;
            let canonical = cfg.mode == GradeMode::ExhaustiveCanonical;
            let r = exhaustive::explore::<G>(&options, seat, &mut oracles, canonical, |n| {
                observer.advance(n.saturating_sub(shown));
                shown = n;
            });
            observer.end();
            report.positions_checked += r.positions;
            won += r.won_positions;
            kept += r.kept;
            if let Some(f) = r.failure {
                report.failures.push(f);
                break;
            }
        }
        report.accuracy = (won > 0).then(|| kept as f64 / won as f64);
        report.passed = report.failures.is_empty();
    } else {
        let played = games_vs_grading_opponent::<G>(spec, cfg, seats, breaker, observer);
        judge_sampled::<G>(&played, STUDENT, &options, &mut report);
        records.extend(played);
    }
    Ok(report)
}

/// The sampled games of a solved game: `cfg.games` per seat against the
/// grading opponent, stopping at the first failing game unless
/// `--keep-going`.
fn games_vs_grading_opponent<G: Solved>(
    spec: &BotSpec,
    cfg: &GradeConfig,
    seats: Vec<Seat>,
    breaker: &Arc<Breaker>,
    observer: &dyn Observer,
) -> Vec<GameRecord> {
    let options = cfg.options;
    let sampled = SampledConfig {
        options,
        seats,
        games: cfg.games,
        time: cfg.time,
        seed: cfg.seed,
        jobs: cfg.jobs,
        breaker: breaker.clone(),
        settle: (!cfg.keep_going)
            .then(|| [Seat::One, Seat::Two].map(|s| G::requirement(&options, s))),
    };
    let optimal = grading_opponent::<G>(&sampled, opponent::PRESSURE);
    observer.begin("games", Some(cfg.games * sampled.seats.len() as u64), 0);
    let played = play_games::<G>(spec, STUDENT, &optimal, "optimal", &sampled, |_| {
        observer.advance(1)
    });
    observer.end();
    played
}

/// Grades a UTTT bot by its score against `random`, `greedy` and
/// `optimal`, each against its threshold.
fn grade_scored(
    spec: &BotSpec,
    name: &str,
    cfg: &GradeConfig,
    observer: &dyn Observer,
    breaker: &Arc<Breaker>,
    records: &mut Vec<GameRecord>,
) -> anyhow::Result<GradeReport> {
    if cfg.mode.is_exhaustive() {
        return Err(crate::play::SettingError::new(
            "exhaustive",
            "needs a solved game (tictactoe or notakto); UTTT is graded by score",
        )
        .into());
    }
    let seats = cfg.seats_for::<Uttt>();
    let mut report = GradeReport {
        game: "uttt".into(),
        bot: name.to_string(),
        mode: GradeMode::Sampled,
        requirement: Uttt::requirement_text(&GameOptions::default(), &seats),
        ..GradeReport::default()
    };
    let t = cfg.thresholds;
    for (i, (opponent, threshold)) in [
        ("random", t.random),
        ("greedy", t.greedy),
        ("optimal", t.optimal),
    ]
    .into_iter()
    .enumerate()
    {
        let opp = BotSpec::resolve::<Uttt>(opponent)?;
        let sampled = SampledConfig {
            options: GameOptions::default(),
            seats: seats.clone(),
            games: cfg.games,
            time: cfg.time,
            seed: seed::derive(cfg.seed, &[i as u64]),
            jobs: cfg.jobs,
            breaker: breaker.clone(),
            settle: None,
        };
        observer.begin(
            &format!("games vs {opponent}"),
            Some(cfg.games * seats.len() as u64),
            0,
        );
        let played = play_games::<Uttt>(spec, STUDENT, &opp, opponent, &sampled, |_| {
            observer.advance(1)
        });
        observer.end();
        count_games(&played, &mut report);
        report
            .scores
            .push(opponent_score(&played, opponent, threshold));
        records.extend(played);
    }
    report.passed = report.scores.iter().all(|s| s.passed);
    Ok(report)
}

/// The value of a finished game for `seat`: 1 win, 0 draw, -1 loss.
pub(crate) fn outcome_value(o: Outcome, seat: Seat) -> i8 {
    match o {
        Outcome::Draw => 0,
        Outcome::Win(s) if s == seat => 1,
        Outcome::Win(_) => -1,
    }
}

impl Failure {
    /// The bot's move `text` after `moves`, in `pos` (of value `before`
    /// for the bot, which plays `seat`), threw away a won or drawn position.
    fn threw_away<G: Solved>(
        seat: Seat,
        before: i8,
        moves: &[String],
        pos: &G,
        text: &str,
    ) -> Failure {
        let mut line = moves.to_vec();
        line.push(text.to_string());
        Failure {
            seat: seat.number(),
            reason: format!(
                "the move threw away a {} position",
                if before > 0 { "won" } else { "drawn" }
            ),
            moves: line,
            position: pos.to_string(),
            bot_move: Some(text.to_string()),
            missed: pos.best_move().map(|m| m.to_string()),
            replay: String::new(),
        }
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
    /// The `referee judge` command that replays the moves.
    pub replay: String,
}

/// The result of grading one bot.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GradeReport {
    /// The game.
    pub game: String,
    /// Attempts the operating system refused the bot (the sandbox, or
    /// permissions), as its stderr told them (docs/sandbox.md).
    pub denied: u64,
    /// The first few stderr lines that told of one.
    pub denied_examples: Vec<String>,
    /// The bot's name.
    pub bot: String,
    /// How the bot was asked.
    pub mode: GradeMode,
    /// Whether the bot met the requirement.
    pub passed: bool,
    /// What was required, in words.
    pub requirement: String,
    /// Games played (sampled mode).
    pub games: u64,
    /// The bot's wins, draws and losses (`wins`, `draws`, `losses` in JSON).
    #[serde(flatten)]
    pub wdl: Wdl,
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
    /// The master seed the games were played with.
    pub seed: u64,
    /// The command that replays this grading (from the submission folder
    /// when a folder was graded).
    pub reproduce: String,
    /// The bot's move times over every game played (`None` when no move
    /// was timed: exhaustive grading asks positions in bulk).
    pub timing: Option<Timing>,
    /// The bot's first forfeit, with its stderr tail.
    pub first_forfeit: Option<ForfeitedGame>,
    /// `referee check`'s outcome, when the rubric asks for it.
    pub check: Option<CheckSummary>,
    /// The rubric's title.
    pub rubric_title: String,
    /// Points per rubric item.
    pub rubric: Vec<rubric::ItemScore>,
    /// Points given.
    pub points: f64,
    /// Points the rubric is worth.
    pub max_points: f64,
    /// Why grading stopped the bot before all its games, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// A console program's format, apart from its play (`None` for a bot
    /// that is not a console program).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<FormatReport>,
    /// Whether the bot answered the same line of play differently in two
    /// games: its own randomness, so a rerun plays other games.
    pub randomised: bool,
    /// Part 1: the program's transcripts against `referee play`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcripts: Option<TranscriptSummary>,
}

/// How a console program's printed games compare with the assignment's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FormatReport {
    /// Games that reached their end, whose transcripts were compared.
    pub compared: u64,
    /// Of those, transcripts that match byte for byte.
    pub exact: u64,
    /// Of those, transcripts that match once trailing whitespace is ignored
    /// (and not byte for byte).
    pub trailing_whitespace_only: u64,
    /// The first game (in the schedule's order) whose transcript differed.
    pub first: Option<FormatExample>,
}

/// One game's format finding, for the feedback.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormatExample {
    /// The game's id.
    pub game: u64,
    /// The move before which the difference appeared.
    pub turn: usize,
    /// The moves of the game.
    pub moves: Vec<String>,
    /// What was noticed while playing.
    pub notes: Vec<String>,
    /// The diff, whitespace made visible.
    pub diff: String,
}

/// Part 1's transcripts against `referee play`'s (`check-console`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TranscriptSummary {
    /// Generated games.
    pub games: usize,
    /// Transcripts that match byte for byte.
    pub matched: usize,
    /// Transcripts that differ in whitespace only.
    pub whitespace_only: usize,
    /// Whether whitespace-only differences were accepted.
    pub accept_whitespace: bool,
    /// The first game whose transcript differs (in whitespace or more).
    pub first: Option<TranscriptMismatch>,
}

/// A part-1 game whose transcript differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TranscriptMismatch {
    /// 1-based number of the generated game.
    pub game: usize,
    /// The input typed.
    pub input: String,
    /// The diff, whitespace made visible.
    pub diff: String,
    /// Whether the difference is in whitespace only.
    pub whitespace_only: bool,
    /// How the program ended.
    pub status: String,
    /// Its stderr tail.
    pub stderr_tail: String,
}

/// The format of the console games in `records` played by `name`, or
/// `None` when it played none as a console program (`console`).
fn format_report(records: &[GameRecord], name: &str, console: bool) -> Option<FormatReport> {
    if !console {
        return None;
    }
    let mut rep = FormatReport::default();
    for r in records {
        let Some(seat) = student_seat(r, name) else {
            continue;
        };
        if r.forfeit.is_some() || r.termination != crate::play::record::Termination::Normal {
            continue;
        }
        rep.compared += 1;
        match r.format.iter().find(|f| f.seat == seat) {
            None => rep.exact += 1,
            Some(f) if f.diff.is_empty() => rep.exact += 1,
            Some(f) => {
                if f.trailing_whitespace_only {
                    rep.trailing_whitespace_only += 1;
                }
            }
        }
        if let Some(f) = r.format.iter().find(|f| f.seat == seat) {
            if rep.first.is_none() {
                rep.first = Some(FormatExample {
                    game: r.id,
                    turn: f.turn,
                    moves: r.moves.clone(),
                    notes: f.notes.clone(),
                    diff: f.diff.clone(),
                });
            }
        }
    }
    Some(rep)
}

/// Whether `name` answered one line of play two ways in `records` (moves
/// chosen by the program's own randomness).
fn answers_differ<G: Game>(records: &[GameRecord], name: &str) -> bool {
    let mut seen: std::collections::HashMap<(String, &[String]), &String> =
        std::collections::HashMap::new();
    for r in records {
        let Some(seat) = student_seat(r, name) else {
            continue;
        };
        let first = r
            .start
            .parse::<G>()
            .map(|p| p.to_move())
            .unwrap_or(Seat::One);
        for (i, mv) in r.moves.iter().enumerate() {
            let mover = if i % 2 == 0 { first } else { first.other() };
            if mover != seat {
                continue;
            }
            let key = (r.start.clone(), &r.moves[..i]);
            match seen.get(&key) {
                Some(&m) if m != mv => return true,
                Some(_) => {}
                None => {
                    seen.insert(key, mv);
                }
            }
        }
    }
    false
}

/// The bot's move times.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timing {
    /// Moves timed.
    pub moves: u64,
    /// The median move time in µs.
    pub median_us: u64,
    /// The slowest move in µs, a game's first move aside (its limit
    /// includes the start-up allowance, which `first_max_us` is judged by).
    pub max_us: u64,
    /// The slowest first move of a game in µs (it includes the program's
    /// start).
    #[serde(default)]
    pub first_max_us: u64,
    /// The start-up allowance of a game's first move, in ms.
    #[serde(default)]
    pub startup_ms: u64,
}

impl Timing {
    /// The times of `name`'s moves in `records` (`None` without any); a
    /// game's first move has `startup_ms` more.
    pub(crate) fn of<G: Game>(
        records: &[GameRecord],
        name: &str,
        startup_ms: u64,
    ) -> Option<Timing> {
        let mut times = Vec::new();
        let (mut max_us, mut first_max_us) = (0, 0);
        for r in records {
            let Some(seat) = student_seat(r, name) else {
                continue;
            };
            // Players alternate from the start position's player to move.
            let first = r
                .start
                .parse::<G>()
                .map(|p| p.to_move())
                .unwrap_or(Seat::One);
            let mut first_move = true;
            for (i, &t) in r.times_us.iter().enumerate() {
                let mover = if i % 2 == 0 { first } else { first.other() };
                if mover == seat {
                    times.push(t);
                    if first_move {
                        first_max_us = first_max_us.max(t);
                    } else {
                        max_us = max_us.max(t);
                    }
                    first_move = false;
                }
            }
        }
        if times.is_empty() {
            return None;
        }
        times.sort_unstable();
        Some(Timing {
            moves: times.len() as u64,
            median_us: times[(times.len() - 1) / 2],
            max_us,
            first_max_us,
            startup_ms,
        })
    }

    /// The slowest move of all, first moves included.
    pub fn slowest_us(&self) -> u64 {
        self.max_us.max(self.first_max_us)
    }
}

/// A game the bot forfeited.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForfeitedGame {
    /// Its opponent.
    pub opponent: String,
    /// The bot's seat.
    pub seat: u8,
    /// The moves played before the forfeit.
    pub moves: Vec<String>,
    /// The `referee judge` command that replays them.
    pub replay: String,
    /// What happened: reason, detail, line received, exit status, stderr tail.
    pub forfeit: Forfeit,
}

/// What `referee check` found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckSummary {
    /// Checks passed.
    pub passed: usize,
    /// Each failed check with its reason.
    pub failed: Vec<String>,
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
pub(crate) struct SampledConfig {
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
    /// Stops the student after timeouts in a row.
    pub breaker: Arc<Breaker>,
    /// The result the student must reach in each seat (by seat index),
    /// when grading stops at the first game that misses it.
    pub settle: Option<[i8; 2]>,
}

/// Whether `r` shows the student (`name`) missing its requirement:
/// `required[seat]` is the result it must reach in each seat (1 win, 0
/// draw), and a forfeit always misses it.
fn fails_requirement(r: &GameRecord, name: &str, required: [i8; 2]) -> bool {
    let Some(seat) = student_seat(r, name) else {
        return false;
    };
    r.forfeit.as_ref().is_some_and(|f| f.seat == seat)
        || outcome_value(r.outcome(), seat) < required[seat.index()]
}

/// The games of a sampled grading: the student is bot 0; its games in each
/// graded seat, in id order.
pub(crate) fn sampled_pairings(cfg: &SampledConfig) -> Vec<Pairing> {
    let schedule = Schedule::two_bots(2 * cfg.games, cfg.seed);
    cfg.seats
        .iter()
        .flat_map(|&seat| schedule.pairings_in_seat(0, seat).collect::<Vec<_>>())
        .collect()
}

/// The grading opponent ([`opponent`]) of the games of `cfg`: in each seat,
/// the k-th game plays plan k of `cfg.games`.
pub(crate) fn grading_opponent<G: Solved>(cfg: &SampledConfig, pressure: f64) -> BotSpec {
    let mut plans = std::collections::HashMap::new();
    for &seat in &cfg.seats {
        let schedule = Schedule::two_bots(2 * cfg.games, cfg.seed);
        for (k, p) in schedule.pairings_in_seat(0, seat).enumerate() {
            // The seed the runner gives the opponent's bot (runner.rs:
            // derived from the game's seed and the opponent's seat).
            let opp = seat.other();
            plans.insert(seed::derive(p.seed, &[opp.number() as u64]), k as u64);
        }
    }
    opponent::spreading_opponent::<G>(plans, cfg.games, cfg.seed, pressure)
}

/// Plays `games` games per seat of `student` against `opponent` and returns
/// the records (the student is entrant 0).
pub(crate) fn play_games<G: BuiltinBots>(
    student: &BotSpec,
    student_name: &str,
    opponent: &BotSpec,
    opponent_name: &str,
    cfg: &SampledConfig,
    mut on_done: impl FnMut(&GameRecord),
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
    let pairings = sampled_pairings(cfg);
    let feed = BreakerFeed {
        pairings: &pairings,
        next: AtomicUsize::new(0),
        breaker: &cfg.breaker,
        settled: AtomicUsize::new(usize::MAX),
    };
    let index: std::collections::HashMap<u64, usize> = pairings
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id, i))
        .collect();
    let mut records = Vec::with_capacity(pairings.len());
    run_games_with::<G, _>(
        &entrants,
        &run,
        None,
        &feed,
        cfg.jobs,
        |r| {
            cfg.breaker.record(&r, student_name);
            if let Some(required) = cfg.settle {
                if fails_requirement(&r, student_name, required) {
                    if let Some(&i) = index.get(&r.id) {
                        feed.settled.fetch_min(i, Ordering::SeqCst);
                    }
                }
            }
            r
        },
        |r| {
            on_done(&r);
            records.push(r);
        },
    );
    // The games played are exactly those up to the first failing one in
    // the schedule's order, whatever finished first: games after it that
    // were already under way are dropped.
    let settled = feed.settled.load(Ordering::SeqCst);
    records.retain(|r| index.get(&r.id).is_some_and(|&i| i <= settled));
    if cfg.breaker.tripped() && crate::play::interrupt::interrupted().is_none() {
        // The games the stopped bot did not play: timeout forfeits, so
        // that every scheduled game has its record.
        let played: HashSet<u64> = records.iter().map(|r| r.id).collect();
        let start = G::start(&cfg.options);
        for p in pairings
            .iter()
            .take(settled.saturating_add(1))
            .filter(|p| !played.contains(&p.id))
        {
            let names = p.players.map(|i| entrants[i].name.clone());
            let seat = if p.players[0] == 0 {
                Seat::One
            } else {
                Seat::Two
            };
            let f = Forfeit::new(ForfeitReason::Timeout, cfg.breaker.detail());
            let r = forfeit_record(p, names, &start, 0, seat, f);
            cfg.breaker.skip(1);
            on_done(&r);
            records.push(r);
        }
    }
    records.sort_by_key(|r| r.id);
    records
}

/// Grades sampled games of a solved game: counts results and, for each game
/// that missed the requirement, finds the bot's first move that lost value.
pub(crate) fn judge_sampled<G: Solved>(
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
        report.wdl.add(r.points(seat));
        let forfeited = r.forfeit.as_ref().is_some_and(|f| f.seat == seat);
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
                    mistake = Some(Failure::threw_away(seat, before, &moves_so_far, &pos, text));
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
                    // A better move where it was the bot's turn (a game
                    // the breaker left unplayed may stop before it).
                    missed: f
                        .position
                        .parse::<G>()
                        .ok()
                        .filter(|p| p.to_move() == seat)
                        .and_then(|p| p.best_move())
                        .map(|m| m.to_string()),
                    replay: String::new(),
                },
                (_, Some(m)) => m,
                _ => Failure {
                    seat: seat.number(),
                    reason: "the game missed the requirement".into(),
                    moves: r.moves.clone(),
                    position: pos.to_string(),
                    bot_move: None,
                    missed: None,
                    replay: String::new(),
                },
            };
            report.failures.push(failure);
        }
    }
    report.accuracy = (won_positions > 0).then(|| kept as f64 / won_positions as f64);
    report.passed = report.failures.is_empty() && report.games > 0;
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
            Notakto::requirement(
                &GameOptions {
                    boards: 3,
                    ..Default::default()
                },
                Seat::One
            ),
            1
        );
        assert_eq!(
            Notakto::requirement(
                &GameOptions {
                    boards: 2,
                    ..Default::default()
                },
                Seat::Two
            ),
            1
        );
        assert_eq!(
            Notakto::requirement(
                &GameOptions {
                    boards: 2,
                    ..Default::default()
                },
                Seat::One
            ),
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
            breaker: Arc::new(Breaker::new(0)),
            settle: None,
        };
        let recs = play_games::<TicTacToe>(&student, "greedy", &opt, "optimal", &cfg, |_| {});
        let mut report = GradeReport::default();
        judge_sampled::<TicTacToe>(&recs, "greedy", &cfg.options, &mut report);
        assert_eq!(report.games, 200);
        assert!(!report.passed);
        assert!(report.wdl.losses > 0);
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
            options: GameOptions {
                boards: 3,
                ..Default::default()
            },
            seats: vec![Seat::One],
            games: 50,
            time: TimeControl::default(),
            seed: 2,
            jobs: 2,
            breaker: Arc::new(Breaker::new(0)),
            settle: None,
        };
        let recs = play_games::<Notakto>(&opt, "student", &opt, "optimal", &cfg, |_| {});
        let mut report = GradeReport::default();
        judge_sampled::<Notakto>(&recs, "student", &cfg.options, &mut report);
        assert!(report.passed, "{:?}", report.failures);
        assert_eq!(report.wdl.wins, 50);
        assert_eq!(report.accuracy, Some(1.0));
    }
}
