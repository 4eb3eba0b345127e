//! The standings of a run as people read them: the tables printed at the
//! end, and `standings.csv`.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use crate::escape::csv;
use crate::play::stats::elo_trinomial;
use crate::protocol::ForfeitReason;
use crate::tournament::Summary;

/// The leaderboard as CSV (`standings.csv`).
pub(crate) fn standings_csv(summary: &Summary) -> String {
    let mut header: Vec<String> = [
        "rank", "bot", "games", "points", "score", "wins", "draws", "losses", "elo", "elo_low",
        "elo_high", "forfeits",
    ]
    .map(String::from)
    .to_vec();
    header.extend(ForfeitReason::ALL.iter().map(|r| r.to_string()));
    header.push("avg_move_us".into());
    // A Swiss tournament's tiebreak and byes, as the last columns.
    if summary.swiss.is_some() {
        header.extend(["buchholz".into(), "byes".into()]);
    }
    let mut out = csv::line(header);
    for (i, row) in summary.ranked().iter().enumerate() {
        let b = row.bot;
        // f64's own text for an unbounded end: `inf` / `-inf`, which CSV
        // readers (spreadsheets, pandas, Python's float) take as numbers.
        let elo = elo_trinomial(&b.total);
        let mut cells = vec![
            (i + 1).to_string(),
            b.name.clone(),
            b.total.games().to_string(),
            b.total.points().to_string(),
            format!("{:.4}", b.total.score()),
            b.total.wins.to_string(),
            b.total.draws.to_string(),
            b.total.losses.to_string(),
            format!("{:.1}", elo.estimate.0),
            format!("{:.1}", elo.lower.0),
            format!("{:.1}", elo.upper.0),
            b.forfeit_count().to_string(),
        ];
        for r in ForfeitReason::ALL {
            cells.push(b.forfeits.get(&r).copied().unwrap_or(0).to_string());
        }
        cells.push(format!("{:.1}", b.avg_move_us()));
        if let (Some(buchholz), Some(byes)) = (row.buchholz, row.byes) {
            cells.extend([format!("{buchholz:.4}"), byes.to_string()]);
        }
        out.push_str(&csv::line(cells));
    }
    out
}

/// The tables printed at the end of a run.
pub fn standings_tables(summary: &Summary) -> String {
    let s = &summary.standings;
    let rows = summary.ranked();
    let ranked: Vec<_> = rows.iter().map(|r| r.bot).collect();
    let swiss = summary.swiss.is_some();
    let mut lead = Table::new();
    let mut header = vec!["rank", "bot", "games", "points", "score"];
    if swiss {
        header.push("Buchholz");
    }
    header.extend(["W-D-L", "Elo (95%)", "forfeits"]);
    lead.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    for (i, row) in rows.iter().enumerate() {
        let b = row.bot;
        let mut cells = vec![
            (i + 1).to_string(),
            b.name.clone(),
            b.total.games().to_string(),
            format!("{}", b.total.points()),
            format!("{:.1}%", 100.0 * b.total.score()),
        ];
        if let Some(buchholz) = row.buchholz {
            cells.push(format!("{buchholz:.2}"));
        }
        cells.extend([
            b.total.text(),
            elo_trinomial(&b.total).to_string(),
            b.forfeit_count().to_string(),
        ]);
        lead.add_row(cells);
    }

    let mut cross = Table::new();
    let mut header = vec![String::from("W-D-L")];
    header.extend(ranked.iter().map(|b| b.name.clone()));
    cross.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    for a in &ranked {
        let mut row = vec![a.name.clone()];
        for b in &ranked {
            let cell = if a.name == b.name {
                "-".to_string()
            } else {
                s.pairs
                    .get(&a.name)
                    .and_then(|r| r.get(&b.name))
                    .map_or(String::new(), |w| w.text())
            };
            row.push(cell);
        }
        cross.add_row(row);
    }

    let mut ends = Table::new();
    let mut header = vec!["bot", "wins", "draws", "losses"];
    header.extend(ForfeitReason::ALL.iter().map(|r| r.name()));
    ends.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    for b in &ranked {
        let mut row = vec![
            b.name.clone(),
            b.total.wins.to_string(),
            b.total.draws.to_string(),
            b.total.losses.to_string(),
        ];
        row.extend(
            ForfeitReason::ALL
                .iter()
                .map(|r| b.forfeits.get(r).copied().unwrap_or(0).to_string()),
        );
        ends.add_row(row);
    }
    let terms: Vec<String> = s
        .terminations
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let format = match &summary.swiss {
        Some(sw) => format!(
            ", Swiss system: {} of {} rounds, ties broken by Buchholz",
            sw.paired.len(),
            sw.rounds
        ),
        None => String::new(),
    };
    format!(
        "Leaderboard ({} games of {}, seed {}{format})\n{lead}\n\nCrosstable (row's W-D-L against column)\n{cross}\n\n\
         How games ended (forfeits are the ones the bot committed; {})\n{ends}\n\n\
         Distinct games up to board symmetry: {} of {}\n{}",
        s.games,
        summary.game,
        summary.seed,
        if terms.is_empty() { "none".into() } else { terms.join(", ") },
        distinct_text(summary),
        s.games,
        summary
            .rule_text()
            .map_or_else(String::new, |r| format!("Rule: {r}\n"))
    )
}

/// The distinct-games count: `at least N` once counting stopped at its cap.
pub(crate) fn distinct_text(summary: &Summary) -> String {
    if summary.distinct_capped {
        format!("at least {} (counting stops there)", summary.distinct)
    } else {
        summary.distinct.to_string()
    }
}
