//! Rubrics: a TOML file that turns what grading measured into points
//! (docs/grading.md). Every item names one check referee computes:
//!
//! ```toml
//! title = "Notakto AI"
//! [[items]]
//! name = "wins every game as player 1 against the optimal AI"
//! check = "passes"
//! points = 70
//! [[items]]
//! check = "score-vs"
//! opponent = "random"
//! min_pct = 95
//! points = 20
//! ```
//!
//! Unknown keys, unknown checks and missing values are errors naming
//! `file:line:column`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::GradeReport;
use crate::game::GameKind;

/// One measurable check.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// The game's grading requirement is met (Notakto: win every game as
    /// the winning seat; tic-tac-toe: never lose; UTTT: the thresholds).
    Passes,
    /// Every graded game won.
    WinsAll,
    /// No graded game lost.
    NeverLoses,
    /// No forfeit in any game (timeout, crash, illegal or malformed move).
    NoForfeits,
    /// At least `min_pct` % of the points against the built-in `opponent`;
    /// with `partial`, points in proportion up to it.
    ScoreVs {
        /// The built-in opponent.
        opponent: String,
        /// The score needed, in percent.
        min_pct: f64,
        /// Partial credit below the threshold.
        partial: bool,
    },
    /// The median move time is at most `max_ms`.
    MedianMoveMs {
        /// The limit in milliseconds.
        max_ms: f64,
    },
    /// The slowest move takes at most `max_ms`.
    MaxMoveMs {
        /// The limit in milliseconds.
        max_ms: f64,
    },
    /// Every check of `referee check` passes.
    PassesCheck,
    /// A console program's transcripts match the assignment's byte for
    /// byte in every game that reached its end (with
    /// `ignore_trailing_whitespace`, once trailing whitespace is ignored).
    /// Met by a protocol bot, which has no console format.
    Format {
        /// Differences only in trailing whitespace are accepted.
        ignore_trailing_whitespace: bool,
    },
    /// Part 1 of the assignment (human vs human): the program's transcripts
    /// of `games` generated inputs match `referee play`'s (`check-console`).
    Transcripts {
        /// Generated games.
        games: usize,
        /// Differences in whitespace only are accepted.
        accept_whitespace: bool,
        /// Points in proportion to the games matched.
        partial: bool,
    },
}

/// The form a submission takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// A program that speaks referee's bot protocol (docs/protocol.md).
    #[default]
    Protocol,
    /// The assignment's console program, run as it is: it prints the
    /// boards and `Player N: ` prompts and reads the opponent's moves.
    Console,
}

impl std::str::FromStr for Form {
    type Err = String;
    fn from_str(s: &str) -> Result<Form, String> {
        match s.trim() {
            "protocol" => Ok(Form::Protocol),
            "console" => Ok(Form::Console),
            other => Err(format!(
                "unknown form \"{other}\" (expected console or protocol)"
            )),
        }
    }
}

/// Generated games of a `transcripts` item by default.
pub const DEFAULT_TRANSCRIPT_GAMES: usize = 50;

impl Check {
    /// Whether the check is about the AI's games (all but `transcripts`).
    pub(crate) fn needs_play(&self) -> bool {
        !matches!(self, Check::Transcripts { .. })
    }
}

/// One rubric item: a check and the points it is worth.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// What the student reads.
    pub name: String,
    /// Points for meeting it.
    pub points: f64,
    /// What is measured.
    pub check: Check,
    /// Who sees it on Gradescope: `visible` (default), `hidden`,
    /// `after_due_date` or `after_published`.
    pub visibility: String,
}

/// The visibilities Gradescope knows.
pub(crate) const VISIBILITIES: [&str; 4] =
    ["visible", "hidden", "after_due_date", "after_published"];

/// A rubric: items in order, and a title for the feedback.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rubric {
    /// Its title.
    pub title: String,
    /// Its items.
    pub items: Vec<Item>,
    /// The grading settings it was written for (`[settings]`): grading
    /// with other ones is refused, so a rubric cannot give an assignment's
    /// points for the wrong game, board count, seat or time limit.
    pub settings: Settings,
    /// Where the rubric came from (for errors).
    pub source: String,
    /// The form submissions take (`form = "console"`), when it says.
    pub form: Option<Form>,
    /// The program file of a submission with several (`entry = "main.py"`).
    pub entry: Option<String>,
}

/// The grading settings a rubric requires; `None` leaves one free.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// The game.
    pub game: Option<GameKind>,
    /// Notakto's boards.
    pub boards: Option<u8>,
    /// The seat graded: 1 or 2 (`both` when 0).
    pub seat: Option<u8>,
    /// The time limit per move, in milliseconds.
    pub time_ms: Option<u64>,
    /// UTTT's rule (`rules = "codingame"`).
    pub rules: Option<crate::game::Rules>,
}

impl Settings {
    /// The first difference between what the rubric requires and what a
    /// grading run uses, as the command-line option to fix it.
    pub(crate) fn mismatch(
        &self,
        game: GameKind,
        boards: u8,
        seats: &[crate::game::Seat],
        time_ms: u64,
        rules: crate::game::Rules,
    ) -> Option<String> {
        if let Some(g) = self.game.filter(|&g| g != game) {
            return Some(format!("it is for {g}, not {game}"));
        }
        if let Some(b) = self.boards.filter(|&b| game.has_boards() && b != boards) {
            return Some(format!("it is for {b} boards: add --boards {b}"));
        }
        if let Some(s) = self.seat {
            let want: Vec<u8> = match s {
                0 => vec![1, 2],
                n => vec![n],
            };
            let have: Vec<u8> = seats.iter().map(|s| s.number()).collect();
            if want != have {
                let flag = if s == 0 {
                    "both".to_string()
                } else {
                    s.to_string()
                };
                return Some(format!("it grades seat {flag}: add --seat {flag}"));
            }
        }
        if let Some(t) = self.time_ms.filter(|&t| t != time_ms) {
            return Some(format!("it is for {t} ms per move: add --time-ms {t}"));
        }
        if let Some(r) = self.rules.filter(|&r| r != rules) {
            return Some(format!("it is for the {r} rules: add --rules {r}"));
        }
        None
    }
}

/// How one item was scored for one student.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ItemScore {
    /// The item's name.
    pub name: String,
    /// Points given.
    pub points: f64,
    /// Points it is worth.
    pub max_points: f64,
    /// Whether it was met in full.
    pub passed: bool,
    /// What was measured, in words.
    pub detail: String,
    /// Who sees it on Gradescope.
    pub visibility: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRubric {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    settings: Option<Spanned<RawSettings>>,
    #[serde(default)]
    items: Vec<Spanned<RawItem>>,
    #[serde(default)]
    form: Option<Spanned<String>>,
    #[serde(default)]
    entry: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    #[serde(default)]
    game: Option<Spanned<String>>,
    #[serde(default)]
    boards: Option<Spanned<i64>>,
    #[serde(default)]
    seat: Option<Spanned<toml::Value>>,
    #[serde(default)]
    time_ms: Option<Spanned<i64>>,
    #[serde(default)]
    rules: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItem {
    #[serde(default)]
    name: Option<String>,
    check: Spanned<String>,
    points: Spanned<f64>,
    #[serde(default)]
    opponent: Option<String>,
    #[serde(default)]
    min_pct: Option<Spanned<f64>>,
    #[serde(default)]
    max: Option<Spanned<f64>>,
    #[serde(default)]
    partial: bool,
    #[serde(default)]
    visibility: Option<Spanned<String>>,
    #[serde(default)]
    ignore_trailing_whitespace: bool,
    #[serde(default)]
    accept_whitespace: bool,
    #[serde(default)]
    games: Option<Spanned<i64>>,
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Rubric {
    /// Reads a rubric file; errors name `file:line:column`.
    pub fn load(path: &Path) -> Result<Rubric, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("rubric {}: {e}", path.display()))?;
        Rubric::parse(path, &text)
    }

    /// Reads a rubric's `text`; `path` names it in errors.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Rubric, String> {
        let at = |offset: usize, msg: &str| {
            let (l, c) = line_col(text, offset);
            format!("{}:{l}:{c}: {msg}", path.display())
        };
        let raw: RawRubric = toml::from_str(text)
            .map_err(|e| at(e.span().map_or(0, |s| s.start), e.message().trim()))?;
        if raw.items.is_empty() {
            return Err(at(0, "a rubric needs at least one [[items]]"));
        }
        let mut items = Vec::new();
        for item in raw.items {
            let span = item.span();
            let item = item.into_inner();
            let points = *item.points.get_ref();
            if !(points.is_finite() && points >= 0.0) {
                return Err(at(item.points.span().start, "points must be a number >= 0"));
            }
            let need_max = |what: &str| -> Result<f64, String> {
                match &item.max {
                    Some(m) if m.get_ref().is_finite() && *m.get_ref() > 0.0 => Ok(*m.get_ref()),
                    Some(m) => Err(at(
                        m.span().start,
                        "max must be a number of milliseconds > 0",
                    )),
                    None => Err(at(
                        span.start,
                        &format!("check \"{what}\" needs max (milliseconds)"),
                    )),
                }
            };
            let check_text = item.check.get_ref().as_str();
            let (check, default_name) = match check_text {
                "passes" => (Check::Passes, "meets the requirement".to_string()),
                "wins-all" => (Check::WinsAll, "wins every game".to_string()),
                "never-loses" => (Check::NeverLoses, "never loses".to_string()),
                "no-forfeits" => (Check::NoForfeits, "never forfeits".to_string()),
                "passes-check" => (Check::PassesCheck, "passes referee check".to_string()),
                "median-move-ms" => {
                    let max_ms = need_max(check_text)?;
                    (
                        Check::MedianMoveMs { max_ms },
                        format!("answers within {max_ms} ms (median)"),
                    )
                }
                "max-move-ms" => {
                    let max_ms = need_max(check_text)?;
                    (
                        Check::MaxMoveMs { max_ms },
                        format!("every move within {max_ms} ms"),
                    )
                }
                "score-vs" => {
                    let Some(opponent) = item.opponent.clone() else {
                        return Err(at(
                            span.start,
                            "check \"score-vs\" needs opponent (a built-in)",
                        ));
                    };
                    let min_pct = match &item.min_pct {
                        Some(p) if (0.0..=100.0).contains(p.get_ref()) => *p.get_ref(),
                        Some(p) => return Err(at(p.span().start, "min_pct must be 0 to 100")),
                        None => return Err(at(span.start, "check \"score-vs\" needs min_pct")),
                    };
                    (
                        Check::ScoreVs {
                            opponent: opponent.clone(),
                            min_pct,
                            partial: item.partial,
                        },
                        format!("scores {min_pct} % or more against {opponent}"),
                    )
                }
                "format" => (
                    Check::Format {
                        ignore_trailing_whitespace: item.ignore_trailing_whitespace,
                    },
                    if item.ignore_trailing_whitespace {
                        "prints the assignment's output (trailing whitespace aside)".to_string()
                    } else {
                        "prints the assignment's output byte for byte".to_string()
                    },
                ),
                "transcripts" => {
                    let games = match &item.games {
                        None => DEFAULT_TRANSCRIPT_GAMES,
                        Some(g) => usize::try_from(*g.get_ref())
                            .ok()
                            .filter(|g| (1..=10_000).contains(g))
                            .ok_or_else(|| at(g.span().start, "games must be 1 to 10000"))?,
                    };
                    (
                        Check::Transcripts {
                            games,
                            accept_whitespace: item.accept_whitespace,
                            partial: item.partial,
                        },
                        format!("matches referee play's transcript in {games} generated games"),
                    )
                }
                other => {
                    return Err(at(
                        item.check.span().start,
                        &format!(
                            "unknown check \"{other}\" (expected passes, wins-all, never-loses, \
                             no-forfeits, score-vs, median-move-ms, max-move-ms, passes-check, \
                             format or transcripts)"
                        ),
                    ))
                }
            };
            let visibility = match &item.visibility {
                None => "visible".to_string(),
                Some(v) if VISIBILITIES.contains(&v.get_ref().as_str()) => v.get_ref().clone(),
                Some(v) => {
                    return Err(at(
                        v.span().start,
                        &format!(
                            "unknown visibility \"{}\" (expected {})",
                            v.get_ref(),
                            VISIBILITIES.join(", ")
                        ),
                    ))
                }
            };
            items.push(Item {
                name: item.name.unwrap_or(default_name),
                points,
                check,
                visibility,
            });
        }
        let mut settings = Settings::default();
        if let Some(raw_settings) = raw.settings {
            let r = raw_settings.into_inner();
            if let Some(g) = &r.game {
                settings.game = Some(g.get_ref().parse::<GameKind>().map_err(|_| {
                    at(
                        g.span().start,
                        &format!(
                            "unknown game \"{}\" (expected tictactoe, notakto or uttt)",
                            g.get_ref()
                        ),
                    )
                })?);
            }
            if let Some(b) = &r.boards {
                settings.boards = Some(
                    u8::try_from(*b.get_ref())
                        .ok()
                        .filter(|b| (1..=crate::game::notakto::MAX_BOARDS as u8).contains(b))
                        .ok_or_else(|| {
                            at(
                                b.span().start,
                                &format!(
                                    "boards must be 1 to {}",
                                    crate::game::notakto::MAX_BOARDS
                                ),
                            )
                        })?,
                );
            }
            if let Some(seat) = &r.seat {
                settings.seat = Some(match seat.get_ref() {
                    toml::Value::Integer(1) => 1,
                    toml::Value::Integer(2) => 2,
                    toml::Value::String(s) if s == "both" => 0,
                    _ => return Err(at(seat.span().start, "seat must be 1, 2 or \"both\"")),
                });
            }
            if let Some(rules) = &r.rules {
                let parsed: crate::game::Rules = rules
                    .get_ref()
                    .parse()
                    .map_err(|e: crate::game::ParseError| at(rules.span().start, &e.to_string()))?;
                if !parsed.is_standard() && settings.game.is_some_and(|g| !g.has_rules()) {
                    return Err(at(rules.span().start, "rules = \"codingame\" is for uttt"));
                }
                settings.rules = Some(parsed);
            }
            if let Some(t) = &r.time_ms {
                settings.time_ms = Some(
                    u64::try_from(*t.get_ref())
                        .ok()
                        .filter(|&t| t > 0)
                        .ok_or_else(|| at(t.span().start, "time_ms must be > 0"))?,
                );
            }
        }
        let form = match &raw.form {
            Some(f) => Some(
                f.get_ref()
                    .parse::<Form>()
                    .map_err(|e| at(f.span().start, &e))?,
            ),
            None => None,
        };
        let entry = match &raw.entry {
            Some(e) => {
                let name = e.get_ref();
                let plain =
                    !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != "..";
                if !plain {
                    return Err(at(
                        e.span().start,
                        "entry must be a file name inside the submission (e.g. \"main.py\")",
                    ));
                }
                Some(name.clone())
            }
            None => None,
        };
        let transcripts = items
            .iter()
            .any(|i| matches!(i.check, Check::Transcripts { .. }));
        if transcripts && items.iter().any(|i| i.check.needs_play()) {
            return Err(at(
                0,
                "check \"transcripts\" (part 1, human vs human) cannot be mixed with checks on \
                 an AI's games (part 2): write one rubric per part",
            ));
        }
        if transcripts && form == Some(Form::Protocol) {
            return Err(at(0, "check \"transcripts\" needs form = \"console\""));
        }
        Ok(Rubric {
            title: raw.title.unwrap_or_else(|| "Grading".to_string()),
            items,
            settings,
            source: path.display().to_string(),
            form: form.or(transcripts.then_some(Form::Console)),
            entry,
        })
    }

    /// The rubric used when none is given: the requirement, all or nothing.
    pub fn requirement_only() -> Rubric {
        Rubric {
            title: "Grading".to_string(),
            items: vec![Item {
                name: "meets the requirement".to_string(),
                points: 100.0,
                check: Check::Passes,
                visibility: "visible".to_string(),
            }],
            settings: Settings::default(),
            source: String::new(),
            form: None,
            entry: None,
        }
    }

    /// Whether grading plays the AI's games (every check but the part-1
    /// transcripts needs them).
    pub(crate) fn needs_play(&self) -> bool {
        self.items.iter().any(|i| i.check.needs_play())
    }

    /// The part-1 transcripts check, if the rubric has one.
    pub(crate) fn transcripts(&self) -> Option<(usize, bool)> {
        self.items.iter().find_map(|i| match i.check {
            Check::Transcripts {
                games,
                accept_whitespace,
                ..
            } => Some((games, accept_whitespace)),
            _ => None,
        })
    }

    /// The points the rubric is worth.
    pub(crate) fn max_points(&self) -> f64 {
        self.items.iter().map(|i| i.points).sum()
    }

    /// The built-in opponents its `score-vs` items need games against.
    pub(crate) fn opponents(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for i in &self.items {
            if let Check::ScoreVs { opponent, .. } = &i.check {
                if !out.contains(opponent) {
                    out.push(opponent.clone());
                }
            }
        }
        out
    }

    /// The score needed against `opponent`: the highest `min_pct` of its
    /// items.
    pub(crate) fn threshold_vs(&self, opponent: &str) -> f64 {
        self.items
            .iter()
            .filter_map(|i| match &i.check {
                Check::ScoreVs {
                    opponent: o,
                    min_pct,
                    ..
                } if o == opponent => Some(*min_pct),
                _ => None,
            })
            .fold(0.0, f64::max)
    }

    /// Whether an item needs move times.
    pub(crate) fn needs_timing(&self) -> bool {
        self.items.iter().any(|i| {
            matches!(
                i.check,
                Check::MedianMoveMs { .. } | Check::MaxMoveMs { .. }
            )
        })
    }

    /// Whether an item needs `referee check` run on the bot.
    pub(crate) fn needs_check(&self) -> bool {
        self.items.iter().any(|i| i.check == Check::PassesCheck)
    }

    /// Scores a graded bot, item by item.
    pub(crate) fn score(&self, r: &GradeReport) -> Vec<ItemScore> {
        self.items.iter().map(|item| score_item(item, r)).collect()
    }
}

fn score_item(item: &Item, r: &GradeReport) -> ItemScore {
    let all_or_nothing = |ok: bool, detail: String| ItemScore {
        name: item.name.clone(),
        points: if ok { item.points } else { 0.0 },
        max_points: item.points,
        passed: ok,
        detail,
        visibility: item.visibility.clone(),
    };
    let ms = |us: u64| us as f64 / 1000.0;
    match &item.check {
        Check::Passes => all_or_nothing(
            r.passed,
            format!(
                "{}: {}",
                r.requirement,
                if r.passed { "met" } else { "not met" }
            ),
        ),
        Check::WinsAll => all_or_nothing(
            r.games > 0 && r.wdl.wins == r.games,
            format!("{} of {} games won", r.wdl.wins, r.games),
        ),
        Check::NeverLoses => all_or_nothing(
            r.games > 0 && r.wdl.losses == 0,
            format!("{} of {} games lost", r.wdl.losses, r.games),
        ),
        Check::NoForfeits => all_or_nothing(r.forfeits == 0, format!("{} forfeits", r.forfeits)),
        Check::MedianMoveMs { max_ms } => match &r.timing {
            Some(t) => all_or_nothing(
                ms(t.median_us) <= *max_ms,
                format!(
                    "median move {:.1} ms (at most {max_ms} ms)",
                    ms(t.median_us)
                ),
            ),
            None => all_or_nothing(false, "no move was timed".into()),
        },
        Check::MaxMoveMs { max_ms } => match &r.timing {
            // A game's first move is judged as the forfeit judges it: with
            // the start-up allowance on top of the limit.
            Some(t) => {
                let first_limit = max_ms + t.startup_ms as f64;
                let ok = ms(t.max_us) <= *max_ms && ms(t.first_max_us) <= first_limit;
                all_or_nothing(
                    ok,
                    format!(
                        "slowest move {:.1} ms (at most {max_ms} ms); slowest first move {:.1} ms \
                         (at most {first_limit} ms: the limit plus the {} ms start-up allowance)",
                        ms(t.max_us),
                        ms(t.first_max_us),
                        t.startup_ms
                    ),
                )
            }
            None => all_or_nothing(false, "no move was timed".into()),
        },
        Check::PassesCheck => match &r.check {
            Some(c) => all_or_nothing(
                c.failed.is_empty(),
                if c.failed.is_empty() {
                    format!("all {} checks passed", c.passed)
                } else {
                    format!("failed: {}", c.failed.join("; "))
                },
            ),
            None => all_or_nothing(false, "referee check was not run".into()),
        },
        Check::Format {
            ignore_trailing_whitespace,
        } => match &r.format {
            None => all_or_nothing(true, "not a console program: no console format".into()),
            Some(f) if f.compared == 0 => all_or_nothing(
                false,
                "no game reached its end, so no transcript could be compared".into(),
            ),
            Some(f) => {
                let ok_games = if *ignore_trailing_whitespace {
                    f.exact + f.trailing_whitespace_only
                } else {
                    f.exact
                };
                let mut detail = format!(
                    "{ok_games} of {} transcripts match{}",
                    f.compared,
                    if *ignore_trailing_whitespace {
                        " (trailing whitespace ignored)"
                    } else {
                        " byte for byte"
                    }
                );
                if let Some(first) = &f.first {
                    detail.push_str(&format!(
                        "; first difference before move {} of game {}",
                        first.turn, first.game
                    ));
                    if let Some(n) = first.notes.first() {
                        detail.push_str(&format!(": {n}"));
                    }
                }
                all_or_nothing(ok_games == f.compared, detail)
            }
        },
        Check::Transcripts { partial, .. } => match &r.transcripts {
            None => all_or_nothing(false, "the transcripts were not checked".into()),
            Some(t) => {
                let ok_games = t.matched
                    + if t.accept_whitespace {
                        t.whitespace_only
                    } else {
                        0
                    };
                let ok = t.games > 0 && ok_games == t.games;
                let points = if ok {
                    item.points
                } else if *partial && t.games > 0 {
                    item.points * ok_games as f64 / t.games as f64
                } else {
                    0.0
                };
                let mut detail = format!("{ok_games} of {} transcripts match", t.games);
                if t.whitespace_only > 0 {
                    detail.push_str(&format!(
                        " ({} differ in whitespace only{})",
                        t.whitespace_only,
                        if t.accept_whitespace {
                            ", accepted"
                        } else {
                            ""
                        }
                    ));
                }
                ItemScore {
                    name: item.name.clone(),
                    points: (points * 100.0).round() / 100.0,
                    max_points: item.points,
                    passed: ok,
                    detail,
                    visibility: item.visibility.clone(),
                }
            }
        },
        Check::ScoreVs {
            opponent,
            min_pct,
            partial,
        } => match r.scores.iter().find(|s| &s.opponent == opponent) {
            Some(s) => {
                let ok = s.score_pct >= *min_pct;
                let points = if ok {
                    item.points
                } else if *partial && *min_pct > 0.0 {
                    item.points * (s.score_pct / min_pct).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                ItemScore {
                    name: item.name.clone(),
                    points: (points * 100.0).round() / 100.0,
                    max_points: item.points,
                    passed: ok,
                    detail: format!(
                        "{:.1} % against {opponent} over {} games (at least {min_pct} %)",
                        s.score_pct, s.games
                    ),
                    visibility: item.visibility.clone(),
                }
            }
            None => all_or_nothing(false, format!("no games against {opponent}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::{CheckSummary, OpponentScore, Timing};

    fn parse(text: &str) -> Result<Rubric, String> {
        Rubric::parse(Path::new("r.toml"), text)
    }

    #[test]
    fn a_rubric_reads_and_scores() {
        let r = parse(
            "title = \"t\"\n\
             [[items]]\ncheck = \"passes\"\npoints = 50\n\
             [[items]]\ncheck = \"no-forfeits\"\npoints = 10\n\
             [[items]]\ncheck = \"score-vs\"\nopponent = \"random\"\nmin_pct = 95\npoints = 20\npartial = true\n\
             [[items]]\nname = \"quick\"\ncheck = \"median-move-ms\"\nmax = 100\npoints = 10\n\
             [[items]]\ncheck = \"passes-check\"\npoints = 10\n",
        )
        .unwrap();
        assert_eq!(r.max_points(), 100.0);
        assert_eq!(r.opponents(), ["random"]);
        assert!(r.needs_check());
        let mut report = GradeReport {
            passed: true,
            games: 10,
            forfeits: 1,
            ..GradeReport::default()
        };
        report.scores.push(OpponentScore {
            opponent: "random".into(),
            games: 10,
            points: 9.0,
            score_pct: 90.0,
            threshold_pct: 0.0,
            passed: true,
        });
        report.timing = Some(Timing {
            moves: 5,
            median_us: 40_000,
            max_us: 900_000,
            first_max_us: 900_000,
            startup_ms: 3000,
        });
        report.check = Some(CheckSummary {
            passed: 8,
            failed: vec![],
        });
        let s = r.score(&report);
        let points: Vec<f64> = s.iter().map(|i| i.points).collect();
        // Partial credit against random: 20 * 90 / 95.
        assert_eq!(points, [50.0, 0.0, 18.95, 10.0, 10.0]);
        assert_eq!(s[3].name, "quick");
        assert!(s[1].detail.contains("1 forfeits"));
    }

    #[test]
    fn mistakes_name_the_place() {
        let e = parse("[[items]]\ncheck = \"passes\"\npoints = 1\ncolour = 2\n").unwrap_err();
        assert!(e.starts_with("r.toml:4:1:") && e.contains("colour"), "{e}");
        let e = parse("[[items]]\ncheck = \"wins\"\npoints = 1\n").unwrap_err();
        assert!(e.starts_with("r.toml:2:9: unknown check \"wins\""), "{e}");
        let e = parse("[[items]]\ncheck = \"score-vs\"\npoints = 1\nmin_pct = 50\n").unwrap_err();
        assert!(e.contains("needs opponent"), "{e}");
        let e = parse("[[items]]\ncheck = \"max-move-ms\"\npoints = 1\n").unwrap_err();
        assert!(e.contains("needs max"), "{e}");
        let e = parse("title = \"x\"\n").unwrap_err();
        assert!(e.contains("at least one"), "{e}");
        let e = parse("[[items]]\ncheck = \"passes\"\npoints = -1\n").unwrap_err();
        assert!(e.starts_with("r.toml:3:10:"), "{e}");
    }
}
