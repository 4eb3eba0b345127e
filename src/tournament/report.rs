//! Everything a tournament prints or writes at the end: the leaderboard,
//! the crosstable, how games ended, and the number of distinct games; as
//! tables, JSON and CSV. All of it is computed from records only.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::{json, Value};

use crate::game::Game;
use crate::record::{ForfeitReason, GameRecord};
use crate::standings::{elo_interval, Standings};

/// A 64-bit fingerprint of a game up to board symmetry: the smallest hash
/// over the images of its move list under every symmetry. Symmetric games
/// get the same fingerprint; different games collide with probability
/// about 2^-64 per pair. Move texts that do not parse are hashed as they are.
pub fn fingerprint<G: Game>(moves: &[String]) -> u64 {
    let mut parsed = Vec::with_capacity(moves.len());
    for m in moves {
        match G::parse_move(m) {
            Ok(mv) => parsed.push(mv),
            Err(_) => {
                let mut h = DefaultHasher::new();
                moves.hash(&mut h);
                return h.finish();
            }
        }
    }
    fingerprint_moves::<G>(&parsed)
}

/// A small fast hasher for fingerprints (multiply-rotate per word, then a
/// SplitMix64 finish): SipHash's resistance to chosen inputs buys nothing
/// here and cost more than playing a tic-tac-toe game.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        crate::seed::splitmix64(self.0)
    }
}

/// [`fingerprint`] of parsed moves. Hashes the moves themselves rather than
/// their text: it runs once per game, and formatting every move under every
/// symmetry cost more than playing the game.
pub fn fingerprint_moves<G: Game>(moves: &[G::Move]) -> u64 {
    (0..G::symmetry_count())
        .map(|k| {
            let mut h = MixHasher::default();
            moves.len().hash(&mut h);
            for &m in moves {
                G::map_move(m, k).hash(&mut h);
            }
            h.finish()
        })
        .min()
        .unwrap_or(0)
}

/// Final results of a tournament.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The game's name.
    pub game: String,
    /// The tournament seed.
    pub seed: u64,
    /// Games in the full schedule.
    pub scheduled: u64,
    /// Standings over the games played.
    pub standings: Standings,
    /// Distinct games up to board symmetry.
    pub distinct: u64,
    /// Bot names in file order (so bots with no games are listed too).
    pub names: Vec<String>,
}

/// Counts distinct games up to symmetry while games arrive.
#[derive(Default, Debug)]
pub struct Distinct(HashSet<u64>);

impl Distinct {
    /// Adds one game's fingerprint.
    pub fn add(&mut self, fp: u64) {
        self.0.insert(fp);
    }
    /// The count.
    pub fn count(&self) -> u64 {
        self.0.len() as u64
    }
}

impl Summary {
    /// A summary of `records` (in any order).
    pub fn from_records<'a, G: Game>(
        seed: u64,
        scheduled: u64,
        names: &[String],
        records: impl IntoIterator<Item = &'a GameRecord>,
    ) -> Summary {
        let mut standings = Standings::with_bots(names.iter().map(String::as_str));
        let mut distinct = Distinct::default();
        for r in records {
            standings.add(r);
            distinct.add(fingerprint::<G>(&r.moves));
        }
        Summary {
            game: G::KIND.name().into(),
            seed,
            scheduled,
            standings,
            distinct: distinct.count(),
            names: names.to_vec(),
        }
    }

    /// The standings as JSON (`standings.json`, `--json`). Timing fields are
    /// `avg_move_us` and `max_move_us`; everything else is a pure function
    /// of the games.
    pub fn to_json(&self) -> Value {
        let s = &self.standings;
        let bots: Vec<Value> = s
            .ranked()
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (elo, lo, hi) = elo_interval(&b.total);
                let forfeits: serde_json::Map<String, Value> = ForfeitReason::ALL
                    .iter()
                    .map(|r| {
                        (
                            r.name().into(),
                            json!(b.forfeits.get(r).copied().unwrap_or(0)),
                        )
                    })
                    .collect();
                json!({
                    "rank": i + 1,
                    "name": b.name,
                    "games": b.total.games(),
                    "points": b.total.points(),
                    "score": b.total.score(),
                    "wins": b.total.wins,
                    "draws": b.total.draws,
                    "losses": b.total.losses,
                    "elo": round1(elo),
                    "elo_low": round1(lo),
                    "elo_high": round1(hi),
                    "as_player1": b.by_seat[0],
                    "as_player2": b.by_seat[1],
                    "forfeits": forfeits,
                    "avg_move_us": b.avg_move_us(),
                    "max_move_us": b.max_move_us,
                })
            })
            .collect();
        let crosstable: serde_json::Map<String, Value> = s
            .pairs
            .iter()
            .map(|(a, row)| {
                let r: serde_json::Map<String, Value> =
                    row.iter().map(|(b, w)| (b.clone(), json!(w))).collect();
                (a.clone(), Value::Object(r))
            })
            .collect();
        json!({
            "game": self.game,
            "seed": self.seed,
            "scheduled": self.scheduled,
            "games": s.games,
            "distinct_games": self.distinct,
            "terminations": s.terminations,
            "bots": bots,
            "crosstable": crosstable,
        })
    }

    /// The leaderboard as CSV (`standings.csv`).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "rank,bot,games,points,score,wins,draws,losses,elo,elo_low,elo_high,forfeits",
        );
        for r in ForfeitReason::ALL {
            let _ = write!(out, ",{r}");
        }
        out.push_str(",avg_move_us\n");
        for (i, b) in self.standings.ranked().iter().enumerate() {
            let (elo, lo, hi) = elo_interval(&b.total);
            let _ = write!(
                out,
                "{},{},{},{},{:.4},{},{},{},{:.1},{:.1},{:.1},{}",
                i + 1,
                csv_field(&b.name),
                b.total.games(),
                b.total.points(),
                b.total.score(),
                b.total.wins,
                b.total.draws,
                b.total.losses,
                elo,
                lo,
                hi,
                b.forfeit_count()
            );
            for r in ForfeitReason::ALL {
                let _ = write!(out, ",{}", b.forfeits.get(&r).copied().unwrap_or(0));
            }
            let _ = writeln!(out, ",{:.1}", b.avg_move_us());
        }
        out
    }

    /// The tables printed at the end of a run.
    pub fn tables(&self) -> String {
        let s = &self.standings;
        let ranked = s.ranked();
        let mut lead = Table::new();
        lead.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
            "rank",
            "bot",
            "games",
            "points",
            "score",
            "W-D-L",
            "Elo (95%)",
            "forfeits",
        ]);
        for (i, b) in ranked.iter().enumerate() {
            let (elo, lo, hi) = elo_interval(&b.total);
            lead.add_row(vec![
                (i + 1).to_string(),
                b.name.clone(),
                b.total.games().to_string(),
                format!("{}", b.total.points()),
                format!("{:.1}%", 100.0 * b.total.score()),
                b.total.text(),
                format!("{elo:+.0} [{lo:+.0}, {hi:+.0}]"),
                b.forfeit_count().to_string(),
            ]);
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
        format!(
            "Leaderboard ({} games of {}, seed {})\n{lead}\n\nCrosstable (row's W-D-L against column)\n{cross}\n\n\
             How games ended (forfeits are the ones the bot committed; {})\n{ends}\n\n\
             Distinct games up to board symmetry: {} of {}\n",
            s.games,
            self.game,
            self.seed,
            if terms.is_empty() { "none".into() } else { terms.join(", ") },
            self.distinct,
            s.games
        )
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    #[test]
    fn symmetric_games_share_a_fingerprint() {
        let m = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = fingerprint::<TicTacToe>(&m(&["0", "1"]));
        let b = fingerprint::<TicTacToe>(&m(&["2", "1"]));
        let c = fingerprint::<TicTacToe>(&m(&["0", "4"]));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
