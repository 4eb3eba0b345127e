//! The HTML report: one self-contained page (inline CSS, JS and data) built
//! from a run's game records, with standings, charts, a game list and replays.
//!
//! The page draws everything itself from one JSON block ([`ReportData`]); the
//! Rust side only computes the numbers, so they can be unit-tested here.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

use crate::play::record::GameRecord;
use crate::play::standings::Standings;
use crate::play::stats::{elo_trinomial, Elo};
use crate::play::Observer;

mod settings;
pub use settings::Settings;

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// Most points drawn per bot in the score chart: enough for a smooth line,
/// few enough that 10,000 games stay small.
pub(crate) const SERIES_POINTS: usize = 400;

/// One leaderboard row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BotRow {
    /// Bot name.
    pub name: String,
    /// Games played.
    pub games: u64,
    /// Wins, draws, losses.
    pub wdl: [u64; 3],
    /// Points (win 1, draw 0.5).
    pub points: f64,
    /// Elo relative to an even score, with the 95 % interval `[elo, lo, hi]`,
    /// rounded to whole points; an unbounded value is the string `"+inf"`
    /// or `"-inf"` (a perfect or a null score), never a clamped number.
    pub elo: [Elo; 3],
    /// Mean move time in µs.
    pub avg_us: u64,
    /// Forfeits this bot committed.
    pub forfeits: u64,
}

/// A forfeit's details as the page shows them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForfeitInfo {
    /// Reason name.
    pub reason: String,
    /// Seat (1 or 2) that forfeited.
    pub seat: u8,
    /// Ply asked for.
    pub move_number: usize,
    /// Measured time in µs.
    pub time_us: u64,
    /// Overrun past the limit in µs.
    pub overrun_us: u64,
    /// The line received, if any.
    pub line: Option<String>,
    /// Exit status, if the bot exited.
    pub exit_status: Option<String>,
    /// Last stderr lines.
    pub stderr_tail: String,
    /// Human explanation.
    pub detail: String,
}

/// One game in the compact list: indexes into the report's tables instead of
/// repeated strings, moves without inner spaces joined by `,`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameRow {
    /// Game id.
    pub id: u64,
    /// Index into [`ReportData::kinds`].
    pub g: usize,
    /// Indexes into [`ReportData::bots`] for player 1 and player 2.
    pub p: [usize; 2],
    /// 1, 2, or 0 for a draw.
    pub w: u8,
    /// Index into [`ReportData::terms`].
    pub t: usize,
    /// Index into [`ReportData::starts`].
    pub s: usize,
    /// Number of opening moves (forced on both bots, untimed).
    pub o: usize,
    /// Moves, each with whitespace removed, joined by `,`.
    pub m: String,
    /// Move times in µs, one per move after the opening.
    pub ms: Vec<u64>,
    /// Forfeit details, when a bot forfeited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f: Option<ForfeitInfo>,
    /// The line that won the game (from [`crate::game::Game::winning_line`]
    /// on its final position): cells of a tictactoe board, local boards of
    /// an uttt one; absent when no line won.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wl: Vec<u8>,
    /// How the result was decided when the game's rules decided it (UTTT
    /// under CodinGame's rule: "on boards won, 5 to 3 (CodinGame's rule)").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rd: Option<String>,
}

/// Everything the page shows, computed once from the records.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportData {
    /// Page title: the run's (`--title`), or its folder's name.
    pub title: String,
    /// The run folder's name (shown under a title given by the run).
    pub folder: String,
    /// The run's settings and bots, as the folder keeps them.
    pub settings: Settings,
    /// Games counted.
    pub games_total: u64,
    /// Leaderboard, best first; other tables index into it.
    pub bots: Vec<BotRow>,
    /// `cross[i][j]` = `[w, d, l]` of bot i against bot j (zeros if unplayed).
    pub cross: Vec<Vec<[u64; 3]>>,
    /// Per bot: `[game ordinal, points so far]` samples, at most
    /// [`SERIES_POINTS`] plus the last, in game-id order.
    pub series: Vec<Vec<[f64; 2]>>,
    /// Termination names with counts, most frequent first.
    pub terminations: Vec<(String, u64)>,
    /// Game names used by the rows.
    pub kinds: Vec<String>,
    /// Termination names used by the rows.
    pub terms: Vec<String>,
    /// Start positions used by the rows.
    pub starts: Vec<String>,
    /// For each start position, the seat (1 or 2) to move there, from its
    /// game's rules (0 when it does not read), so the page can name who
    /// played each move.
    pub movers: Vec<u8>,
    /// Every game, by id.
    pub games: Vec<GameRow>,
}

fn intern(table: &mut Vec<String>, index: &mut BTreeMap<String, usize>, s: &str) -> usize {
    if let Some(&i) = index.get(s) {
        return i;
    }
    table.push(s.to_string());
    index.insert(s.to_string(), table.len() - 1);
    table.len() - 1
}

impl ReportData {
    /// Builds the page's data from records in any order.
    pub fn from_records(title: &str, records: &[GameRecord]) -> Self {
        let standings = Standings::from_records(records);
        let ranked = standings.ranked();
        let rank: BTreeMap<&str, usize> = ranked
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.as_str(), i))
            .collect();
        let bots: Vec<BotRow> = ranked
            .iter()
            .map(|b| {
                let e = elo_trinomial(&b.total);
                BotRow {
                    name: b.name.clone(),
                    games: b.total.games(),
                    wdl: [b.total.wins, b.total.draws, b.total.losses],
                    points: b.total.points(),
                    elo: [e.estimate, e.lower, e.upper].map(|x| Elo(x.0.round())),
                    avg_us: b.avg_move_us().round() as u64,
                    forfeits: b.forfeit_count(),
                }
            })
            .collect();
        let n = bots.len();
        let mut cross = vec![vec![[0u64; 3]; n]; n];
        for (a, opps) in &standings.pairs {
            for (b, w) in opps {
                if let (Some(&i), Some(&j)) = (rank.get(a.as_str()), rank.get(b.as_str())) {
                    cross[i][j] = [w.wins, w.draws, w.losses];
                }
            }
        }
        let mut terminations: Vec<(String, u64)> = standings
            .terminations
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        terminations.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));

        let mut order: Vec<&GameRecord> = records.iter().collect();
        order.sort_by_key(|r| r.id);
        let mut full: Vec<Vec<[f64; 2]>> = vec![Vec::new(); n];
        let mut pts = vec![0.0f64; n];
        let (mut kinds, mut kind_ix) = (Vec::new(), BTreeMap::new());
        let (mut terms, mut term_ix) = (Vec::new(), BTreeMap::new());
        let (mut starts, mut start_ix) = (Vec::new(), BTreeMap::new());
        let mut movers = Vec::new();
        let mut games = Vec::with_capacity(order.len());
        for (ord, r) in order.iter().enumerate() {
            let mut p = [0usize; 2];
            for seat in crate::game::Seat::BOTH {
                // Every player is in `rank`: standings were built from these records.
                let i = rank
                    .get(r.players[seat.index()].as_str())
                    .copied()
                    .unwrap_or(0);
                p[seat.index()] = i;
                pts[i] += r.points(seat);
                full[i].push([ord as f64 + 1.0, pts[i]]);
            }
            games.push(GameRow {
                id: r.id,
                g: intern(&mut kinds, &mut kind_ix, r.game.name()),
                p,
                w: r.winner.map_or(0, |s| s.number()),
                t: intern(&mut terms, &mut term_ix, r.termination.name()),
                s: {
                    let known = starts.len();
                    let i = intern(&mut starts, &mut start_ix, &r.start);
                    if i == known {
                        movers.push(mover(r.game, &r.start));
                    }
                    i
                },
                o: r.opening.len(),
                m: r.moves
                    .iter()
                    .map(|m| m.split_whitespace().collect::<String>())
                    .collect::<Vec<_>>()
                    .join(","),
                ms: r.times_us.clone(),
                f: r.forfeit.as_ref().map(|f| ForfeitInfo {
                    reason: f.reason.name().to_string(),
                    seat: f.seat.number(),
                    move_number: f.move_number,
                    time_us: f.time_us,
                    overrun_us: f.overrun_us,
                    line: f.line.clone(),
                    exit_status: f.exit_status.clone(),
                    stderr_tail: f.stderr_tail.clone(),
                    detail: f.detail.clone(),
                }),
                wl: winning_line(r),
                rd: r.decided_by_rule(),
            });
        }
        let series = full.into_iter().map(sample).collect();
        ReportData {
            title: title.to_string(),
            folder: title.to_string(),
            settings: Settings::default(),
            games_total: standings.games,
            bots,
            cross,
            series,
            terminations,
            kinds,
            terms,
            starts,
            movers,
            games,
        }
    }

    /// The data as JSON for the page's `<script type="application/json">`
    /// element ([`crate::escape::html::script_json`]): no bot-controlled
    /// string can close the element, and none shows a control character or
    /// a bidi override raw.
    pub(crate) fn to_script_json(&self) -> String {
        crate::escape::html::script_json(self)
    }

    /// The whole page.
    pub fn to_html(&self) -> String {
        let title = crate::escape::html::text(&self.title);
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width\">\
             <title>referee report: {title}</title><style>{CSS}</style></head>\
             <body>\
             <div id=\"app\"></div>\
             <script type=\"application/json\" id=\"data\">{}</script>\
             <script>{JS}</script></body></html>\n",
            self.to_script_json()
        )
    }
}

/// The seat number to move in position `start` of game `kind`; 0 when the
/// text is not a position.
fn mover(kind: crate::game::GameKind, start: &str) -> u8 {
    use crate::game::Game;
    crate::with_game!(kind, G => start.parse::<G>().map_or(0, |p| p.to_move().number()))
}

/// The line that won game `r`, from its game's rules applied to its final
/// position; empty when none did or the position does not read.
fn winning_line(r: &GameRecord) -> Vec<u8> {
    use crate::game::Game;
    crate::with_game!(r.game, G => r
        .final_position
        .parse::<G>()
        .map(|p| p.winning_line())
        .unwrap_or_default())
}

/// Keeps at most [`SERIES_POINTS`] evenly spaced samples, always the last.
fn sample(v: Vec<[f64; 2]>) -> Vec<[f64; 2]> {
    if v.len() <= SERIES_POINTS {
        return v;
    }
    let step = v.len().div_ceil(SERIES_POINTS);
    let mut out: Vec<[f64; 2]> = v.iter().step_by(step).copied().collect();
    if let Some(last) = v.last() {
        if out.last() != Some(last) {
            out.push(*last);
        }
    }
    out
}

/// Reads `dir/games.jsonl` with the run's settings (`run.json`, or the
/// configuration of an older folder) and writes the page to `out`, titled
/// `title`, or the run's title, or the folder's name. Returns the number of
/// games in the report.
pub fn write_report(
    dir: &Path,
    out: &Path,
    title: Option<&str>,
    observer: &dyn Observer,
) -> anyhow::Result<usize> {
    let games = crate::play::journal::read_existing_games(dir)?;
    for n in &games.notes {
        observer.note(n);
    }
    let records = games.records;
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let (settings, run_title) = settings::load(dir, observer);
    let mut data = ReportData::from_records(&folder, &records);
    if let Some(t) = title.map(str::to_string).or(run_title) {
        data.title = t;
    }
    data.settings = settings;
    fs::write(out, data.to_html()).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(records.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::record::Termination;
    use crate::protocol::{Forfeit, ForfeitReason};

    fn rec(id: u64, p1: &str, p2: &str, winner: Option<u8>, moves: &[&str]) -> GameRecord {
        let winner = winner.and_then(crate::game::Seat::from_number);
        let mut r =
            crate::play::record::sample(crate::game::GameKind::Uttt, [p1, p2], winner, moves);
        r.id = id;
        r.seed = id;
        r.start = "x".into();
        r
    }

    #[test]
    fn standings_crosstable_series_and_rows() {
        let recs = vec![
            rec(2, "b", "a", None, &["4 4"]),
            rec(1, "a", "b", Some(1), &["4 4", "4 0"]),
            rec(3, "a", "c", Some(2), &[]),
        ];
        let d = ReportData::from_records("t", &recs);
        let names: Vec<&str> = d.bots.iter().map(|b| b.name.as_str()).collect();
        // By score: c 1/1, a 1.5/3, b 0.5/2.
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(d.bots[1].wdl, [1, 1, 1]);
        assert_eq!(d.bots[1].points, 1.5);
        assert_eq!(d.cross[1][2], [1, 1, 0]);
        assert_eq!(d.cross[2][1], [0, 1, 1]);
        assert_eq!(d.cross[0][1], [1, 0, 0]);
        assert_eq!(d.cross[0][2], [0, 0, 0]);
        // a: win (game 1), draw (game 2), loss (game 3).
        assert_eq!(d.series[1], vec![[1.0, 1.0], [2.0, 1.5], [3.0, 1.5]]);
        assert_eq!(d.games[0].id, 1);
        assert_eq!(d.games[0].m, "44,40");
        assert_eq!(d.games[0].p, [1, 2]);
        assert_eq!(d.games[1].w, 0);
        assert_eq!(d.starts, ["x"]);
        assert_eq!(d.terminations, vec![("normal".to_string(), 3)]);
        // a's 1-1-1 is +0 with a finite interval; c's one win has no upper
        // bound, and the page gets the string "+inf", not a clamped number.
        let e = elo_trinomial(&crate::play::standings::Wdl {
            wins: 1,
            draws: 1,
            losses: 1,
        });
        assert_eq!(d.bots[1].elo[0], Elo(0.0));
        assert_eq!(d.bots[1].elo[1], Elo(e.lower.0.round()));
        assert_eq!(d.bots[0].elo[2], Elo(f64::INFINITY));
        let json = d.to_script_json();
        assert!(json.contains("\"elo\":[\"+inf\","), "{json}");
    }

    #[test]
    fn rows_carry_the_winning_line_and_who_moves_first() {
        let mut won = crate::play::record::sample(
            crate::game::GameKind::TicTacToe,
            ["a", "b"],
            crate::game::Seat::from_number(1),
            &["0", "3", "1", "4", "2"],
        );
        won.start = ".........".into();
        won.final_position = "XXXOO....".into();
        let mut from_opening = won.clone();
        from_opening.id = 2;
        from_opening.start = "X........".into();
        from_opening.final_position = "XOXXOOOXX".into();
        let d = ReportData::from_records("t", &[won, from_opening]);
        assert_eq!(d.games[0].wl, [0, 1, 2]);
        assert!(d.games[1].wl.is_empty());
        // Player 1 moves at the empty board, player 2 after one X.
        assert_eq!(d.movers, [1, 2]);
        assert!(!d.to_script_json().contains("\"wl\":[]"));
    }

    #[test]
    fn a_run_s_title_and_settings_reach_the_page() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let r = rec(1, "a", "b", Some(1), &["4 4"]);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            crate::play::journal::games_path(&dir),
            serde_json::to_string(&r).unwrap() + "\n",
        )
        .unwrap();
        let out = dir.join("r.html");
        write_report(&dir, &out, None, &crate::play::Silent).unwrap();
        let html = fs::read_to_string(&out).unwrap();
        // No settings kept: the folder's name, and a note.
        assert!(html.contains("<title>referee report: run</title>"));
        assert!(html.contains("keeps no settings"), "{html}");
        crate::play::journal::save_title(&dir, "Week 3 <ladder>").unwrap();
        write_report(&dir, &out, None, &crate::play::Silent).unwrap();
        let html = fs::read_to_string(&out).unwrap();
        assert!(html.contains("<title>referee report: Week 3 &lt;ladder&gt;</title>"));
        write_report(&dir, &out, Some("Other"), &crate::play::Silent).unwrap();
        let html = fs::read_to_string(&out).unwrap();
        assert!(html.contains("<title>referee report: Other</title>"));
        assert!(html.contains("\"folder\":\"run\""));
    }

    #[test]
    fn series_is_sampled_but_keeps_the_last_point() {
        let v: Vec<[f64; 2]> = (0..1000).map(|i| [i as f64, i as f64]).collect();
        let s = sample(v);
        assert!(s.len() <= SERIES_POINTS + 1);
        assert_eq!(s[0], [0.0, 0.0]);
        assert_eq!(*s.last().unwrap(), [999.0, 999.0]);
    }

    #[test]
    fn bot_strings_cannot_escape_the_script_element() {
        let mut r = rec(1, "</script><b>x", "a&b", Some(2), &["4 4"]);
        r.termination = Termination::Forfeit(ForfeitReason::Malformed);
        let mut f = Forfeit::new(ForfeitReason::Malformed, "<!-- detail");
        f.seat = crate::game::Seat::One;
        f.line = Some("</script><script>alert(1)</script>".into());
        f.stderr_tail = "</SCRIPT >\n<img src=x onerror=alert(2)>".into();
        r.forfeit = Some(f);
        let d = ReportData::from_records("</title>", &[r]);
        let html = d.to_html();
        let start = html.find("id=\"data\">").unwrap() + "id=\"data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let json = &html[start..end];
        assert!(!json.contains('<') && !json.contains('>'));
        // The block still parses back to the same strings.
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(
            v["games"][0]["f"]["line"],
            "</script><script>alert(1)</script>"
        );
        assert_eq!(v["bots"][1]["name"], "</script><b>x");
        assert_eq!(v["title"], "</title>");
        assert!(html.contains("<title>referee report: &lt;/title&gt;</title>"));
        // Exactly the page's own two script elements (data and code).
        assert_eq!(html.matches("</script>").count(), 2);
    }

    #[test]
    fn reads_records_skipping_a_torn_last_line_and_unknown_fields() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let r = rec(7, "a", "b", Some(1), &["4 4"]);
        let mut v = serde_json::to_value(&r).unwrap();
        v["extra"] = serde_json::json!({"x": 1});
        let line = v.to_string();
        let p = crate::play::journal::games_path(dir);
        fs::write(&p, format!("{line}\n\n{line}\n{}", &line[..20])).unwrap();
        let got = crate::play::journal::read_games(dir).unwrap();
        assert_eq!(got.records, vec![r.clone(), r]);
        assert_eq!(got.torn.map(|t| t.line), Some(4));
        fs::write(&p, format!("{}\n{line}\n", &line[..20])).unwrap();
        let err = crate::play::journal::read_games(dir)
            .unwrap_err()
            .to_string();
        assert!(err.contains(":1: not a game record"), "{err}");
        assert!(write_report(dir, &dir.join("r.html"), None, &crate::play::Silent).is_err());
    }
}
