//! Grading results as people read them.

use std::fmt::Write as _;

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use crate::grade::class::GradebookRow;
use crate::grade::{GradeMode, GradeReport};

/// The mode's name, as the JSON report writes it.
pub(crate) fn mode_name(m: GradeMode) -> &'static str {
    match m {
        GradeMode::Sampled => "sampled",
        GradeMode::Exhaustive => "exhaustive",
        GradeMode::ExhaustiveCanonical => "exhaustive-canonical",
    }
}

/// The report of one grading run, as `referee grade` prints it.
pub fn grade_report_text(r: &GradeReport) -> String {
    let mut out = String::new();
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["grade", ""]);
    t.add_row(vec!["bot".to_string(), r.bot.clone()]);
    t.add_row(vec!["game".to_string(), r.game.clone()]);
    t.add_row(vec!["mode".to_string(), mode_name(r.mode).to_string()]);
    t.add_row(vec!["requirement".to_string(), r.requirement.clone()]);
    if !r.mode.is_exhaustive() {
        t.add_row(vec![
            "games (W-D-L)".to_string(),
            format!("{} ({})", r.games, r.wdl.text()),
        ]);
        t.add_row(vec!["forfeits".to_string(), r.forfeits.to_string()]);
    } else {
        t.add_row(vec![
            "positions checked".to_string(),
            r.positions_checked.to_string(),
        ]);
    }
    if let Some(a) = r.accuracy {
        t.add_row(vec![
            "accuracy in won positions".to_string(),
            format!("{:.1}%", 100.0 * a),
        ]);
    }
    t.add_row(vec!["time".to_string(), format!("{:.2} s", r.elapsed_s)]);
    t.add_row(vec![
        "verdict".to_string(),
        if r.passed { "PASS" } else { "FAIL" }.to_string(),
    ]);
    let _ = writeln!(out, "{t}");
    if !r.note.is_empty() {
        let _ = writeln!(out, "note: {}", r.note);
    }
    if !r.scores.is_empty() {
        let mut s = Table::new();
        s.load_preset(UTF8_FULL_CONDENSED)
            .set_header(vec!["opponent", "games", "points", "score", "needed", ""]);
        for o in &r.scores {
            s.add_row(vec![
                o.opponent.clone(),
                o.games.to_string(),
                format!("{}", o.points),
                format!("{:.1}%", o.score_pct),
                format!("{:.1}%", o.threshold_pct),
                if o.passed { "pass" } else { "FAIL" }.to_string(),
            ]);
        }
        let _ = writeln!(out, "{s}");
    }
    for (i, f) in r.failures.iter().take(5).enumerate() {
        let _ = writeln!(
            out,
            "failure {} (bot as player {}): {}",
            i + 1,
            f.seat,
            f.reason
        );
        let _ = writeln!(out, "  moves:    {}", f.moves.join(" "));
        let _ = writeln!(out, "  position: {}", f.position);
        if let Some(m) = &f.bot_move {
            let _ = writeln!(out, "  bot move: {m}");
        }
        if let Some(m) = &f.missed {
            let _ = writeln!(out, "  better:   {m}");
        }
        if !f.replay.is_empty() {
            let _ = writeln!(out, "  replay:   {}", f.replay);
        }
    }
    if r.failures.len() > 5 {
        let _ = writeln!(out, "({} more failures)", r.failures.len() - 5);
    }
    if let Some(stop) = &r.stopped {
        let _ = writeln!(out, "stopped: {stop}");
    }
    if let Some(t) = &r.timing {
        let _ = writeln!(
            out,
            "move time: median {}, slowest {} over {} moves (first moves: slowest {}, with \
             the {} ms start-up allowance)",
            crate::play::text::format_us(t.median_us as f64),
            crate::play::text::format_us(t.max_us as f64),
            t.moves,
            crate::play::text::format_us(t.first_max_us as f64),
            t.startup_ms
        );
    }
    if let Some(g) = &r.first_forfeit {
        let f = &g.forfeit;
        let _ = writeln!(
            out,
            "first forfeit: against {} as player {} at move {}: {}: {}",
            g.opponent, g.seat, f.move_number, f.reason, f.detail
        );
        let tail: Vec<&str> = f.stderr_tail.lines().collect();
        if !tail.is_empty() {
            let _ = writeln!(out, "  stderr (last lines):");
            for l in &tail[tail.len().saturating_sub(10)..] {
                let _ = writeln!(out, "    {l}");
            }
        }
    }
    if let Some(c) = &r.check {
        let _ = writeln!(
            out,
            "referee check: {} passed, {} failed",
            c.passed,
            c.failed.len()
        );
        for f in &c.failed {
            let _ = writeln!(out, "  {f}");
        }
    }
    if !r.rubric.is_empty() {
        let mut t = crate::play::text::table(["", "rubric item", "points", "measured"]);
        for i in &r.rubric {
            t.add_row(vec![
                if i.passed { "✓" } else { "✗" }.to_string(),
                i.name.clone(),
                format!(
                    "{} / {}",
                    crate::play::text::format_points(i.points),
                    crate::play::text::format_points(i.max_points)
                ),
                i.detail.clone(),
            ]);
        }
        let _ = writeln!(
            out,
            "{}: {}",
            r.rubric_title,
            super::feedback::verdict_line(r)
        );
        let _ = writeln!(out, "{t}");
    }
    if !r.reproduce.is_empty() {
        let _ = writeln!(out, "reproduce: {}", r.reproduce);
    }
    out
}

/// The gradebook as a table.
pub fn gradebook_table(rows: &[GradebookRow]) -> String {
    let mut t = crate::play::text::table(["student", "verdict", "score", "W-D-L", "forfeits"]);
    for r in rows {
        t.add_row(vec![
            r.student.clone(),
            r.verdict.clone(),
            format!("{:.1}%", r.score_pct),
            r.wdl.clone(),
            r.forfeits.to_string(),
        ]);
    }
    t.to_string()
}
