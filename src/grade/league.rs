//! The class leaderboard: a tournament between the students' bots and the
//! built-ins (`grade-all --tournament`), a round-robin or, for a large
//! class, a Swiss system, whose standings feed each student's Gradescope
//! `leaderboard`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::class::{student_name, submission_bot};
use super::rubric::Form;
use super::GradeConfig;
use crate::bot::{BotSpec, BuiltinBots};
use crate::game::{GameKind, Seat};
use crate::grade::feedback::LeaderboardEntry;
use crate::play::runner::{Entrant, RunConfig};
use crate::play::stats::Elo;
use crate::play::Observer;
use crate::play::RunOptions;
use crate::tournament::swiss::Seeding;
use crate::tournament::{self, Plan, RunReport};

/// How the class tournament is played.
#[derive(Clone, Debug)]
pub struct LeagueConfig {
    /// Games per pairing (even: each opening with seats swapped).
    pub games_per_pairing: u64,
    /// `None`: a round-robin; `Some(rounds)`: a Swiss system of that many
    /// rounds (`Some(None)`: the Swiss default, ⌈log2 n⌉ + 2).
    pub swiss: Option<Option<u64>>,
    /// The built-in bots that play with the students.
    pub builtins: Vec<String>,
    /// The report's title.
    pub title: Option<String>,
}

/// One line of the class leaderboard.
#[derive(Clone, Debug, Serialize)]
pub struct LeagueRow {
    /// Place, from 1.
    pub rank: usize,
    /// The student's folder name, or the built-in's.
    pub name: String,
    /// Whether it is a student (not a built-in).
    pub student: bool,
    /// Games played.
    pub games: u64,
    /// Points over games, in percent.
    pub score_pct: f64,
    /// Elo against the field's average (logistic, from the score; ±800 at
    /// a perfect or null score).
    pub elo: f64,
    /// Swiss only: Buchholz.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buchholz: Option<f64>,
}

/// What the class tournament did.
#[derive(Debug)]
pub struct League {
    /// The leaderboard, best first.
    pub rows: Vec<LeagueRow>,
    /// The tournament's run: its standings, for the tables.
    pub run: RunReport,
    /// Its run folder (games, standings, report.html).
    pub dir: PathBuf,
    /// Students left out (no bot, or a bot that cannot be resolved), with
    /// the reason.
    pub left_out: Vec<(String, String)>,
}

/// Plays the class tournament between the bots of the student folders
/// `students` and `league.builtins`, under the grading's time limit,
/// process settings (sandbox) and seed, into `out` (a run folder that a
/// second call resumes; a changed class is refused there with what
/// changed).
pub fn class_tournament(
    kind: GameKind,
    students: &[PathBuf],
    cfg: &GradeConfig,
    league: &LeagueConfig,
    out: &Path,
    observer: &dyn Observer,
) -> anyhow::Result<League> {
    crate::with_game!(kind, G => play::<G>(students, cfg, league, out, observer))
}

/// Checks the class tournament's settings before any game: the built-ins
/// exist, and the plan fits `students` students with them.
pub fn check(
    kind: GameKind,
    students: usize,
    cfg: &GradeConfig,
    league: &LeagueConfig,
) -> anyhow::Result<()> {
    let seat = crate::with_game!(kind, G => {
        for b in &league.builtins {
            BotSpec::resolve::<G>(b)
            .with_context(|| crate::play::SettingError::new("builtins", format!("'{b}'")))?;
        }
        console_seat::<G>(cfg)?
    });
    plan(
        students,
        students + league.builtins.len(),
        seat,
        cfg,
        league,
    )
    .map(|_| ())
    .context("class tournament")
}

/// The seat console-form submissions play (the one their assignment gives
/// them, the graded seat), or `None` for protocol bots, which play both.
fn console_seat<G: BuiltinBots>(cfg: &GradeConfig) -> anyhow::Result<Option<Seat>> {
    if cfg.form() != Form::Console {
        return Ok(None);
    }
    match cfg.seats_for::<G>().as_slice() {
        [seat] => Ok(Some(*seat)),
        _ => Err(crate::play::SettingError::new(
            "seat",
            "must be 1 or 2 for a class tournament of console programs: they play one seat \
             (the assignment's)",
        )
        .into()),
    }
}

/// The class tournament's plan: `bots` bots, the first `students` of them
/// students. Console programs can only play their assignment's seat
/// (`seat`), so two of them cannot meet: their tournament is a gauntlet,
/// each student against the built-ins, always in that seat.
fn plan(
    students: usize,
    bots: usize,
    seat: Option<Seat>,
    cfg: &GradeConfig,
    league: &LeagueConfig,
) -> anyhow::Result<Plan> {
    if let Some(seat) = seat {
        if league.swiss.is_some() {
            return Err(crate::play::SettingError::new(
                "swiss",
                "cannot be used with console programs: they play only their assignment's \
                 seat, so they cannot meet each other, and their class tournament is each \
                 student against the built-ins (drop it)",
            )
            .into());
        }
        if students == 0 || students == bots {
            return Err(crate::play::SettingError::new(
                "builtins",
                "must name at least one: console programs play against the built-ins",
            )
            .into());
        }
        return Plan::seated_gauntlet(
            bots,
            (0..students).collect(),
            seat,
            league.games_per_pairing,
            cfg.seed,
        )
        .map_err(anyhow::Error::msg);
    }
    match league.swiss {
        None => Plan::round_robin(bots, league.games_per_pairing, cfg.seed),
        Some(rounds) => Plan::swiss(
            bots,
            rounds,
            league.games_per_pairing,
            cfg.seed,
            Seeding::Shuffle,
        ),
    }
    .map_err(anyhow::Error::msg)
}

fn play<G: BuiltinBots>(
    students: &[PathBuf],
    cfg: &GradeConfig,
    league: &LeagueConfig,
    out: &Path,
    observer: &dyn Observer,
) -> anyhow::Result<League> {
    let mut entrants = Vec::new();
    let mut left_out = Vec::new();
    for dir in students {
        let name = student_name(dir);
        let spec = submission_bot(dir, cfg.form(), cfg.entry().as_deref())
            .and_then(|command| BotSpec::resolve::<G>(&command).map_err(|e| e.to_string()));
        match spec {
            Ok(mut spec) => {
                spec.adjust(&cfg.process);
                entrants.push(Entrant { name, spec });
            }
            Err(e) => left_out.push((name, e)),
        }
    }
    let students_in = entrants.len();
    for b in &league.builtins {
        let spec = BotSpec::resolve::<G>(b)
            .with_context(|| crate::play::SettingError::new("builtins", format!("'{b}'")))?;
        // A student may be called `random`: the built-in gives way.
        let name = if entrants.iter().any(|e| &e.name == b) {
            format!("builtin-{b}")
        } else {
            b.clone()
        };
        entrants.push(Entrant { name, spec });
    }
    if entrants.len() < 2 {
        anyhow::bail!(
            "the class tournament needs at least 2 bots; it has {}",
            entrants.len()
        );
    }
    let seat = console_seat::<G>(cfg)?;
    let plan = plan(students_in, entrants.len(), seat, cfg, league).context("class tournament")?;
    let run_cfg = RunConfig {
        options: cfg.options,
        time: cfg.time,
        random_plies: 0,
        affinity: true,
    };
    let opts = RunOptions {
        jobs: cfg.jobs,
        out: Some(out.to_path_buf()),
        resume: crate::play::journal::games_path(out).is_file(),
        title: league.title.clone(),
        ..RunOptions::default()
    };
    let run = tournament::run_entrants::<G>(&entrants, &plan, &run_cfg, &opts, observer)?;
    crate::report::write_report(out, &out.join("report.html"), None, observer)?;
    let rows = run
        .summary
        .ranked()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let t = &r.bot.total;
            let score = if t.games() > 0 { t.score() } else { 0.5 };
            let elo = Elo::from_score(score).0;
            LeagueRow {
                rank: i + 1,
                name: r.bot.name.clone(),
                student: entrants[..students_in].iter().any(|e| e.name == r.bot.name),
                games: t.games(),
                score_pct: 100.0 * score,
                elo: if elo.is_finite() {
                    (elo * 10.0).round() / 10.0
                } else {
                    800.0_f64.copysign(elo)
                },
                buchholz: r.buchholz,
            }
        })
        .collect();
    Ok(League {
        rows,
        run,
        dir: out.to_path_buf(),
        left_out,
    })
}

/// A student's Gradescope leaderboard columns from the class tournament.
pub(crate) fn leaderboard_entries(row: &LeagueRow) -> Vec<LeaderboardEntry> {
    vec![
        LeaderboardEntry {
            name: "rank".into(),
            value: serde_json::json!(row.rank),
            order: Some("asc"),
        },
        LeaderboardEntry {
            name: "tournament score %".into(),
            value: serde_json::json!((row.score_pct * 10.0).round() / 10.0),
            order: None,
        },
        LeaderboardEntry {
            name: "Elo".into(),
            value: serde_json::json!(row.elo),
            order: None,
        },
    ]
}

/// Puts the class tournament's columns first in the `leaderboard` of each
/// student's `gradescope/STUDENT/results.json` under `out`.
pub fn add_to_gradescope(out: &Path, rows: &[LeagueRow]) -> anyhow::Result<()> {
    for row in rows.iter().filter(|r| r.student) {
        let path = out.join("gradescope").join(&row.name).join("results.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut json: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
        let mut board = serde_json::to_value(leaderboard_entries(row))?;
        if let (Some(new), Some(old)) = (
            board.as_array_mut(),
            json.get("leaderboard").and_then(|l| l.as_array()),
        ) {
            let names: Vec<serde_json::Value> = new.iter().map(|e| e["name"].clone()).collect();
            new.extend(old.iter().filter(|e| !names.contains(&e["name"])).cloned());
        }
        json["leaderboard"] = board;
        std::fs::write(&path, crate::escape::json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaderboard_columns_go_first_and_replace_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("gradescope/alice");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(
            p.join("results.json"),
            r#"{"score": 5, "leaderboard": [{"name": "points", "value": 5}, {"name": "rank", "value": 9}]}"#,
        )
        .unwrap();
        let row = LeagueRow {
            rank: 2,
            name: "alice".into(),
            student: true,
            games: 10,
            score_pct: 65.0,
            elo: 107.5,
            buchholz: None,
        };
        add_to_gradescope(dir.path(), &[row]).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("results.json")).unwrap())
                .unwrap();
        let names: Vec<&str> = v["leaderboard"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["rank", "tournament score %", "Elo", "points"]);
        assert_eq!(v["leaderboard"][0]["value"], 2);
        assert_eq!(v["leaderboard"][0]["order"], "asc");
        assert_eq!(v["score"], 5);
    }
}
