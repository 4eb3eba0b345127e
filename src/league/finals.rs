//! The deadline: the final (a fresh round robin among the frozen versions,
//! Swiss past a size, in the run folder `final/`, apart from the ladder and
//! resumable), and the export of its standings and of points per student
//! under a league rubric, through grading's gradebook and Gradescope
//! writers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use super::{build_ladder, db, Ladder, League};
use crate::bot::BuiltinBots;
use crate::grade::class::{GradebookRow, ItemPoints};
use crate::grade::feedback::{GradeResult, ItemStatus, LeaderboardEntry, ResultItem};
use crate::grade::graders::Format;
use crate::play::runner::Entrant;
use crate::play::{Observer, RunOptions};
use crate::tournament::{self, Plan};

/// The final's run folder in a league folder.
pub const FINAL_DIR: &str = "final";

/// What `league final` is told.
#[derive(Clone, Debug, Default)]
pub struct FinalOptions {
    /// Games per pair (default: the settings' `final_games_per_pair`).
    pub games_per_pair: Option<u64>,
    /// Worker threads.
    pub jobs: usize,
}

/// Plays (or resumes) the final of the frozen league in `dir`, and rates it.
pub fn final_round(
    dir: &Path,
    opts: &FinalOptions,
    observer: &dyn Observer,
) -> anyhow::Result<Ladder> {
    let league = League::open(dir)?;
    if league.frozen()?.is_none() {
        anyhow::bail!(
            "{}: the league is not frozen: the final plays the frozen versions (freeze it first)",
            dir.display()
        );
    }
    let _lock = crate::play::journal::lock(dir)?;
    crate::with_game!(league.settings.game, G => play_final::<G>(&league, opts, observer))
}

fn play_final<G: BuiltinBots>(
    league: &League,
    opts: &FinalOptions,
    observer: &dyn Observer,
) -> anyhow::Result<Ladder> {
    let active = league.active()?;
    if active.len() < 2 {
        anyhow::bail!(
            "the final needs at least 2 bots; the league has {}",
            active.len()
        );
    }
    let s = &league.settings;
    let gpp = opts.games_per_pair.unwrap_or(s.final_games_per_pair);
    if gpp == 0 || gpp % 2 == 1 {
        anyhow::bail!("games per pair must be even and positive (each opening with seats swapped)");
    }
    let mut entrants = Vec::with_capacity(active.len());
    for e in &active {
        entrants.push(Entrant {
            name: e.label(),
            spec: league.spec_of::<G>(e)?,
        });
    }
    let seed = crate::seed::derive(s.seed, &[5]);
    let plan = if active.len() > s.final_swiss_above {
        Plan::swiss(
            active.len(),
            None,
            gpp,
            seed,
            crate::tournament::swiss::Seeding::Shuffle,
        )
    } else {
        Plan::round_robin(active.len(), gpp, seed)
    }
    .map_err(|e| anyhow::anyhow!("the final: {e}"))?;
    let out = league.dir.join(FINAL_DIR);
    let run_opts = RunOptions {
        jobs: opts.jobs.max(1),
        out: Some(out.clone()),
        resume: crate::play::journal::games_path(&out).is_file(),
        title: Some(format!("{}: the final", s.title)),
        ..RunOptions::default()
    };
    let cfg = league.run_config();
    tournament::run_entrants::<G>(&entrants, &plan, &cfg, &run_opts, observer)?;
    crate::report::write_report(&out, &out.join("report.html"), None, observer)?;
    final_ladder(league)
}

/// The final's standings, rated by the ladder's fit, from its run folder.
pub fn final_ladder(league: &League) -> anyhow::Result<Ladder> {
    let out = league.dir.join(FINAL_DIR);
    if !crate::play::journal::games_path(&out).is_file() {
        anyhow::bail!(
            "{}: no final has been played (`referee league final {}`)",
            league.dir.display(),
            league.dir.display()
        );
    }
    let games = crate::play::journal::read_games(&out)?;
    let entries = league.db.entries()?;
    let active = league.active()?;
    let by_label: HashMap<String, i64> = active.iter().map(|e| (e.label(), e.id)).collect();
    let mut rows = Vec::with_capacity(games.records.len());
    for r in &games.records {
        let (Some(&a), Some(&b)) = (by_label.get(&r.players[0]), by_label.get(&r.players[1]))
        else {
            continue;
        };
        rows.push(db::GameRow {
            id: r.id as i64,
            phase: "final".into(),
            players: [a, b],
            winner: r.winner.map(|w| w.number()),
            termination: r.termination.to_string(),
            forfeit_seat: r.forfeit.as_ref().map(|f| f.seat.number()),
            plies: r.moves.len() as u32,
            finished_at: 0,
            by_rule: r.decided_by_rule().is_some(),
        });
    }
    let mut ladder = build_ladder(&entries, &active, &rows, &league.settings);
    for r in &mut ladder.rows {
        r.placing = false;
    }
    Ok(ladder)
}

/// A league rubric (`--rubric FILE`): points per student from the final.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeagueRubric {
    /// The title on the feedback.
    #[serde(default = "default_rubric_title")]
    pub title: String,
    /// The items, each worth its points when its condition holds.
    #[serde(rename = "item", default)]
    pub items: Vec<RubricItem>,
}

fn default_rubric_title() -> String {
    "League".into()
}

/// One rubric item: exactly one condition.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricItem {
    /// Its name (a Gradescope test).
    pub name: String,
    /// Its points.
    pub points: f64,
    /// Placed at this rank or better among all the final's bots.
    #[serde(default)]
    pub rank_at_most: Option<usize>,
    /// Rated at least this (Elo, on the league's scale).
    #[serde(default)]
    pub rating_at_least: Option<f64>,
    /// Rated above this anchor in the final.
    #[serde(default)]
    pub beats: Option<String>,
    /// Played in the final (an admitted version by the freeze).
    #[serde(default)]
    pub played: Option<bool>,
    /// Gradescope visibility.
    #[serde(default = "default_visibility")]
    pub visibility: String,
}

fn default_visibility() -> String {
    "visible".into()
}

impl LeagueRubric {
    /// Reads and checks a league rubric.
    pub fn load(path: &Path, anchors: &[String]) -> anyhow::Result<LeagueRubric> {
        let text = crate::bot::manifest::read_small_text(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let r: LeagueRubric = toml::from_str(&text).map_err(|e| {
            let (l, c) =
                crate::tournament::config::line_col(&text, e.span().map_or(0, |s| s.start));
            anyhow::anyhow!("{}:{l}:{c}: {}", path.display(), e.message().trim())
        })?;
        if r.items.is_empty() {
            anyhow::bail!("{}: no [[item]]: give at least one", path.display());
        }
        for (k, i) in r.items.iter().enumerate() {
            let n = [
                i.rank_at_most.is_some(),
                i.rating_at_least.is_some(),
                i.beats.is_some(),
                i.played.is_some(),
            ]
            .iter()
            .filter(|x| **x)
            .count();
            let at = format!("{}: item {} ('{}')", path.display(), k + 1, i.name);
            if n != 1 {
                anyhow::bail!(
                    "{at}: give exactly one of rank_at_most, rating_at_least, beats, played"
                );
            }
            if !(i.points.is_finite() && i.points >= 0.0) {
                anyhow::bail!("{at}: points must be a number of at least 0");
            }
            if let Some(a) = &i.beats {
                if !anchors.contains(a) {
                    anyhow::bail!("{at}: beats: '{a}' is not an anchor of the league");
                }
            }
        }
        Ok(r)
    }

    fn max(&self) -> f64 {
        self.items.iter().map(|i| i.points).sum()
    }
}

/// Exports the final's standings (`standings.csv`, `standings.json`) into
/// `out`, and with a rubric each student's points (`gradebook.csv`,
/// `gradebook.json`, `grades.csv`, and every grading system's file,
/// `SYSTEM/NAME/FILE`, as `grade-all` writes them: Gradescope's
/// `gradescope/NAME/results.json` and the others).
/// Returns the files written.
pub fn export(dir: &Path, out: &Path, rubric: Option<&Path>) -> anyhow::Result<Vec<PathBuf>> {
    let league = League::open(dir)?;
    let rubric = rubric
        .map(|p| LeagueRubric::load(p, &league.settings.anchors))
        .transpose()?;
    let ladder = final_ladder(&league)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut written = Vec::new();
    let json = out.join("standings.json");
    std::fs::write(
        &json,
        crate::escape::json::to_string_pretty(&ladder)? + "\n",
    )
    .with_context(|| format!("cannot write {}", json.display()))?;
    let csv = out.join("standings.csv");
    std::fs::write(&csv, standings_csv(&ladder))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    written.extend([csv, json]);
    let Some(rubric) = rubric else {
        return Ok(written);
    };
    let entries = league.db.entries()?;
    let mut students: Vec<String> = entries
        .iter()
        .filter(|e| !e.anchor)
        .map(|e| e.name.clone())
        .collect();
    students.sort();
    students.dedup();
    let mut rows = Vec::new();
    for name in &students {
        let row = ladder.rows.iter().find(|r| !r.anchor && &r.name == name);
        let (items, reason) = points(&rubric, &ladder, row);
        let total: f64 = items.iter().map(|i| i.points).sum();
        let gb = GradebookRow {
            student: name.clone(),
            verdict: if row.is_some() { "ranked" } else { "absent" }.into(),
            score_pct: row.map_or(0.0, |r| {
                let g = r.games.max(1) as f64;
                100.0 * (r.wins as f64 + 0.5 * r.draws as f64) / g
            }),
            wdl: row.map_or_else(String::new, |r| {
                format!("{}-{}-{}", r.wins, r.draws, r.losses)
            }),
            forfeits: row.map_or(0, |r| r.forfeits),
            example: row.map_or_else(String::new, |r| format!("rank {}", r.rank)),
            denied: 0,
            points: total,
            max_points: rubric.max(),
            items: items.clone(),
            reason: reason.clone(),
        };
        // Every grading system's file, as grade-all writes them.
        let result = grade_result(&rubric, &ladder, row, &items, &reason);
        for format in Format::ALL {
            let dir = out.join(format.name()).join(name);
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let p = dir.join(format.file_name());
            std::fs::write(&p, format.render(&result))
                .with_context(|| format!("cannot write {}", p.display()))?;
        }
        rows.push(gb);
    }
    let names: Vec<String> = rubric.items.iter().map(|i| i.name.clone()).collect();
    written.extend(crate::grade::class::write_gradebook(out, &rows, &names)?);
    written.extend(Format::ALL.iter().map(|f| out.join(f.name())));
    Ok(written)
}

/// The rubric's points for a student's final row (`None`: no version in
/// the final), and the reason when they have none.
fn points(
    rubric: &LeagueRubric,
    ladder: &Ladder,
    row: Option<&super::LadderRow>,
) -> (Vec<ItemPoints>, String) {
    let rating_of = |name: &str| {
        ladder
            .rows
            .iter()
            .find(|r| r.anchor && r.name == name)
            .and_then(|r| r.rating)
    };
    let items = rubric
        .items
        .iter()
        .map(|i| {
            let met = row.is_some_and(|r| {
                if let Some(k) = i.rank_at_most {
                    r.rating.is_some() && r.rank <= k
                } else if let Some(x) = i.rating_at_least {
                    r.rating.is_some_and(|v| v >= x)
                } else if let Some(a) = &i.beats {
                    matches!((r.rating, rating_of(a)), (Some(v), Some(w)) if v > w)
                } else {
                    i.played == Some(true)
                }
            });
            ItemPoints {
                name: i.name.clone(),
                points: if met { i.points } else { 0.0 },
            }
        })
        .collect();
    let reason = if row.is_none() {
        "no admitted version at the freeze: not in the final".into()
    } else {
        String::new()
    };
    (items, reason)
}

/// A student's result from the final, as every grading system's writer
/// reads it.
fn grade_result(
    rubric: &LeagueRubric,
    ladder: &Ladder,
    row: Option<&super::LadderRow>,
    items: &[ItemPoints],
    reason: &str,
) -> GradeResult {
    let summary = match row {
        Some(r) => format!(
            "Final rank {} of {}, rating {} ({} games: {}-{}-{}, {} forfeits)",
            r.rank,
            ladder.rows.len(),
            r.rating
                .map_or_else(|| "not rated".into(), |x| format!("{x:.0}")),
            r.games,
            r.wins,
            r.draws,
            r.losses,
            r.forfeits
        ),
        None => reason.to_string(),
    };
    let feedback = format!("# {}\n\n{summary}.\n", rubric.title);
    let points: f64 = items.iter().map(|i| i.points).sum();
    let result_items = rubric
        .items
        .iter()
        .zip(items)
        .map(|(i, p)| {
            let met = p.points >= i.points;
            ResultItem {
                name: i.name.clone(),
                points: p.points,
                max_points: i.points,
                visibility: i.visibility.clone(),
                status: if met {
                    ItemStatus::Passed
                } else {
                    ItemStatus::Failed
                },
                message: if met { "met" } else { "not met" }.into(),
            }
        })
        .collect();
    let mut leaderboard = Vec::new();
    if let Some(r) = row {
        leaderboard.push(LeaderboardEntry {
            name: "rank".into(),
            value: serde_json::json!(r.rank),
            order: Some("asc"),
        });
        if let Some(x) = r.rating {
            leaderboard.push(LeaderboardEntry {
                name: "rating".into(),
                value: serde_json::json!((x * 10.0).round() / 10.0),
                order: None,
            });
        }
    }
    GradeResult {
        error: None,
        passed: points >= rubric.max(),
        points,
        max_points: rubric.max(),
        elapsed_s: 0.0,
        summary,
        feedback,
        items: result_items,
        leaderboard,
    }
}

/// The standings as CSV.
pub fn standings_csv(ladder: &Ladder) -> String {
    use crate::escape::csv::line as csv_line;
    let f = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v:.1}"));
    let mut out = csv_line([
        "rank", "name", "version", "anchor", "rating", "low", "high", "games", "wins", "draws",
        "losses", "forfeits", "placing",
    ]);
    for r in &ladder.rows {
        out.push_str(&csv_line([
            r.rank.to_string(),
            r.name.clone(),
            r.version.to_string(),
            r.anchor.to_string(),
            f(r.rating),
            f(r.low),
            f(r.high),
            r.games.to_string(),
            r.wins.to_string(),
            r.draws.to_string(),
            r.losses.to_string(),
            r.forfeits.to_string(),
            r.placing.to_string(),
        ]));
    }
    out
}
