//! A match as people read it: the two bots' table, the statistics of the
//! first against the second, and the forfeits.

use std::fmt::Write as _;

use crate::matches::{Ending, MatchReport};
use crate::play::stats::{draw_ratio, elo_pentanomial, elo_trinomial, los, nelo_pentanomial};

use crate::play::text::{format_points, format_us, table};

/// The tables and lines `referee match` prints at the end.
pub fn match_text(r: &MatchReport) -> String {
    let mut out = String::new();
    let s = &r.stats;
    let _ = writeln!(
        out,
        "{} vs {}: {} of {} games of {}, seed {}{}",
        r.names[0],
        r.names[1],
        r.games(),
        r.summary.scheduled,
        r.summary.game,
        r.summary.seed,
        match r.ending {
            Ending::Complete => "",
            Ending::Decided => " (the SPRT was decided)",
            Ending::Interrupted => " (interrupted)",
        }
    );
    let mut bots = table([
        "bot",
        "games",
        "W-D-L",
        "as player 1",
        "as player 2",
        "points",
        "score",
        "avg move",
        "forfeits",
    ]);
    for b in r.bots() {
        bots.add_row(vec![
            b.name.clone(),
            b.total.games().to_string(),
            b.total.text(),
            b.by_seat[0].text(),
            b.by_seat[1].text(),
            format_points(b.total.points()),
            format!("{:.1}%", 100.0 * b.total.score()),
            format_us(b.avg_move_us()),
            b.forfeit_count().to_string(),
        ]);
    }
    let _ = writeln!(out, "{bots}");

    let mut st = table([
        format!("{} against {}", r.names[0], r.names[1]),
        String::new(),
    ]);
    let mut row = |k: &str, v: String| {
        st.add_row(vec![k.to_string(), v]);
    };
    row(
        "W-D-L (score)",
        format!("{} ({:.1}%)", s.wdl.text(), 100.0 * s.wdl.score()),
    );
    row("Elo (95%), per game", elo_trinomial(&s.wdl).to_string());
    row(
        "Elo (95%), per pair",
        elo_pentanomial(&s.pentanomial).to_string(),
    );
    row("nElo (95%)", nelo_pentanomial(&s.pentanomial).to_string());
    row("LOS", format!("{:.1}%", 100.0 * los(&s.wdl)));
    row("draw ratio", format!("{:.1}%", 100.0 * draw_ratio(&s.wdl)));
    row(
        "pairs LL, LD, DD+WL, WD, WW",
        format!("{} ({} pairs)", s.pentanomial, s.pentanomial.pairs()),
    );
    if let Some(sp) = &r.sprt {
        row("SPRT", sp.test.to_string());
        row("LLR (bounds)", sp.report.to_string());
    }
    let distinct = crate::tournament::standings::distinct_text(&r.summary);
    row("distinct games", format!("{distinct} of {}", r.games()));
    if let Some(rule) = r.summary.rule_text() {
        row("rule", rule);
    }
    let _ = writeln!(out, "{st}");

    for n in &r.forfeits {
        let _ = writeln!(
            out,
            "game {}: {} ({} as player {})",
            n.id, n.forfeit, n.bot, n.forfeit.seat
        );
        // The bot's last words usually say what went wrong.
        if let Some(last) = n
            .forfeit
            .stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
        {
            let _ = writeln!(
                out,
                "  stderr: {}",
                crate::escape::terminal::reply(last.as_bytes())
            );
        }
    }
    let more = r.forfeit_count.saturating_sub(r.forfeits.len() as u64);
    if more > 0 {
        let _ = writeln!(
            out,
            "({more} more forfeits; every game is in games.jsonl with --out DIR)"
        );
    }
    out
}
