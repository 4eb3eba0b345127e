//! Admission: a new version enters the ladder only after it passes the
//! compliance check (`referee check`), one game against itself and one
//! against each anchor, all run as ladder games run (the sandbox, the time
//! limit). A version that fails is rejected with a log a student can act
//! on: the failed check, or the forfeit with its line, its stderr tail and
//! the `referee judge` command that replays the game.

use std::fmt::Write as _;

use super::{Entry, League, Status, ADMISSION};
use crate::bot::{BotSpec, BuiltinBots};
use crate::game::Game;
use crate::play::record::GameRecord;

/// Admits or rejects `e`; the verdict is stored, and returned (`Err`: why
/// it was rejected). An `Err` of the outer result is the league's own
/// failure (its database), not the bot's.
pub fn admit<G: BuiltinBots>(
    league: &League,
    e: &Entry,
    jobs: usize,
) -> anyhow::Result<Result<(), String>> {
    let verdict = judge::<G>(league, e, jobs)?;
    match &verdict {
        Ok(log) => league.db.decide(e.id, Status::Admitted, log)?,
        Err(log) => league.db.decide(e.id, Status::Rejected, log)?,
    }
    Ok(verdict.map(|_| ()))
}

fn judge<G: BuiltinBots>(
    league: &League,
    e: &Entry,
    jobs: usize,
) -> anyhow::Result<Result<String, String>> {
    let spec = match league.spec_of::<G>(e) {
        Ok(s) => s,
        Err(why) => return Ok(Err(format!("not accepted: {why:#}"))),
    };
    if let Err(why) = spec.check_sandbox() {
        // The machine's fault, not the student's: the league stops.
        anyhow::bail!(
            "{why} (set sandbox = \"best-effort\" in {} to run without every guarantee)",
            super::settings::SETTINGS
        );
    }
    let s = &league.settings;
    if s.random_plies > 0 || s.openings.is_some() {
        if let Some(why) = spec.empty_board_only() {
            return Ok(Err(format!(
                "not accepted: {why}, and this league starts its games from openings \
                 (random_plies or openings in {})",
                super::settings::SETTINGS
            )));
        }
    }
    let mut log = String::new();
    // The compliance check.
    if let BotSpec::External(ext) = &spec {
        let report =
            crate::check::run_checks::<G>(ext, &league.settings.options(), &league.settings.time())
                .map_err(|err| anyhow::anyhow!("the compliance check could not run: {err:#}"))?;
        let failed: Vec<_> = report.results.iter().filter(|r| !r.pass).collect();
        let _ = writeln!(
            log,
            "compliance check: {} of {} passed",
            report.results.len() - failed.len(),
            report.results.len()
        );
        if !failed.is_empty() {
            for r in failed.iter().take(5) {
                let _ = writeln!(log, "FAILED {}: {}", r.name, r.detail);
            }
            let _ = writeln!(
                log,
                "Run `referee check` on your bot to see every check (docs/protocol.md)."
            );
            return Ok(Err(log));
        }
    }
    // One game against itself, one against each anchor.
    let anchors: Vec<Entry> = league.active()?.into_iter().filter(|a| a.anchor).collect();
    let mut games = vec![(ADMISSION.to_string(), 0i64, [e.id, e.id])];
    for (k, a) in anchors.iter().enumerate() {
        let players = if k % 2 == 0 {
            [e.id, a.id]
        } else {
            [a.id, e.id]
        };
        games.push((ADMISSION.to_string(), 0, players));
    }
    let rows: Vec<super::db::Scheduled> = games
        .into_iter()
        .enumerate()
        .map(|(k, (phase, cycle, players))| {
            let seed = crate::seed::derive(s.seed, &[4, e.id as u64, k as u64]);
            super::db::Scheduled {
                id: 0,
                phase,
                cycle,
                players,
                seed,
                opening_seed: seed,
                round: 0,
            }
        })
        .collect();
    let scheduled = league.db.schedule(&rows)?;
    let mut entries = vec![e.clone()];
    entries.extend(anchors.iter().cloned());
    let records = std::sync::Mutex::new(Vec::new());
    // From the empty board: admission checks the bot, not openings.
    let mut cfg = league.run_config();
    cfg.random_plies = 0;
    super::play_scheduled::<G>(league, &entries, &scheduled, &cfg, None, jobs, &|rec| {
        if let Ok(mut r) = records.lock() {
            r.push(rec.clone());
        }
    })?;
    let mut records = records.into_inner().unwrap_or_default();
    records.sort_by_key(|r| r.id);
    let label = e.label();
    for rec in &records {
        let _ = writeln!(
            log,
            "game {}: {} vs {}: {}",
            rec.id,
            rec.players[0],
            rec.players[1],
            result_text(rec)
        );
        if let Some(f) = &rec.forfeit {
            let who = &rec.players[f.seat.index()];
            if *who == label {
                forfeit_log::<G>(&mut log, rec, league);
                return Ok(Err(log));
            }
        }
    }
    if records.len() < scheduled.len() {
        // Interrupted: not a verdict on the bot.
        anyhow::bail!("interrupted during {label}'s admission");
    }
    Ok(Ok(log))
}

/// A game's result in words.
pub fn result_text(rec: &GameRecord) -> String {
    match (rec.winner, &rec.forfeit) {
        (_, Some(f)) => format!(
            "player {} forfeits ({}: {})",
            f.seat.number(),
            f.reason.name(),
            f.detail
        ),
        (Some(w), None) => format!("player {} wins", w.number()),
        (None, None) => "draw".into(),
    }
}

/// What a student needs to fix a forfeit: the line, the stderr tail, the
/// replay command.
fn forfeit_log<G: Game>(log: &mut String, rec: &GameRecord, league: &League) {
    let Some(f) = &rec.forfeit else { return };
    let _ = writeln!(
        log,
        "REJECTED: your bot forfeited as player {} at move {} ({}): {}",
        f.seat.number(),
        f.move_number,
        f.reason.name(),
        f.detail
    );
    if let Some(line) = &f.line {
        let _ = writeln!(log, "  it sent:  {line}");
    }
    let _ = writeln!(log, "  position: {}", f.position);
    if let Some(status) = &f.exit_status {
        let _ = writeln!(log, "  exit:     {status}");
    }
    let mut judge = format!("referee judge {} '{}'", G::KIND, rec.moves.join(" "));
    if G::KIND == crate::game::GameKind::Notakto {
        let _ = write!(judge, " --boards {}", league.settings.boards);
    }
    if rec.start != G::start(&league.settings.options()).to_string() {
        let _ = write!(judge, " --from '{}'", rec.start);
    }
    let _ = writeln!(log, "  replay:   {judge}");
    if !f.stderr_tail.trim().is_empty() {
        let _ = writeln!(log, "  stderr (last lines):");
        for l in f.stderr_tail.lines() {
            let _ = writeln!(log, "    {}", crate::escape::terminal::line(l));
        }
    }
}
