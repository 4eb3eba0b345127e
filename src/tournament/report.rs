//! Everything a tournament prints or writes at the end: the leaderboard,
//! the crosstable, how games ended, and the number of distinct games; as
//! tables, JSON and CSV. All of it is computed from records only.

use std::collections::HashSet;

use serde_json::{json, Value};

#[cfg(test)]
use crate::game::Game;
use crate::game::Rules;
#[cfg(test)]
use crate::play::record::{fingerprint_record, GameRecord};
use crate::play::standings::{score_order, BotStats, Standings};
use crate::play::stats::{elo_trinomial, Elo};
use crate::protocol::ForfeitReason;
use crate::tournament::swiss::Round;

/// Final results of a tournament.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The game's name.
    pub game: String,
    /// The tournament seed.
    pub seed: u64,
    /// Games in the full schedule.
    pub scheduled: u64,
    /// The rule of a game that has more than one (UTTT), `None` for the
    /// others; [`Standings::decided_by_rule`] counts the games it decided.
    pub rules: Option<Rules>,
    /// Standings over the games played.
    pub standings: Standings,
    /// Distinct games up to board symmetry (at most [`Distinct::CAP`]).
    pub distinct: u64,
    /// Whether the count stopped at [`Distinct::CAP`]: there are at least
    /// that many.
    pub distinct_capped: bool,
    /// Bot names in file order (so bots with no games are listed too).
    pub names: Vec<String>,
    /// A Swiss tournament's rounds (`None` for a round-robin or gauntlet).
    pub swiss: Option<SwissSummary>,
}

/// What a Swiss tournament adds to its summary: its rounds, from which
/// the Buchholz tiebreak is computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissSummary {
    /// Rounds planned.
    pub rounds: u64,
    /// Games each pairing plays.
    pub games_per_pairing: u64,
    /// The rounds paired, in order; bot indices refer to
    /// [`Summary::names`]. The last may be unfinished when the run was
    /// interrupted.
    pub paired: Vec<Round>,
}

/// One line of the leaderboard.
#[derive(Clone, Debug)]
pub struct Ranked<'a> {
    /// The bot's totals.
    pub bot: &'a BotStats,
    /// Swiss only: the sum of the scores (points per game, 0 to 1) of the
    /// opponents the bot was paired with, one per pairing, plus its own
    /// score for each bye.
    pub buchholz: Option<f64>,
    /// Swiss only: rounds in which the bot sat out.
    pub byes: Option<u64>,
}

/// Buchholz compared to 9 decimals: a sum of floats that is mathematically
/// tied must compare equal whatever the order of its terms.
fn buchholz_key(b: Option<f64>) -> i64 {
    b.map_or(0, |b| (b * 1e9).round() as i64)
}

/// Counts distinct games up to symmetry while games arrive, up to
/// [`Distinct::CAP`] of them: the set of fingerprints is the one thing a
/// run keeps per game, so it stops growing there.
#[derive(Default, Debug)]
pub(crate) struct Distinct {
    seen: HashSet<u64>,
    capped: bool,
}

impl Distinct {
    /// Most distinct games counted (about 16 MB of fingerprints).
    pub(crate) const CAP: usize = 1 << 20;

    /// Adds one game's fingerprint.
    pub(crate) fn add(&mut self, fp: u64) {
        if self.seen.len() < Self::CAP {
            self.seen.insert(fp);
        } else if !self.seen.contains(&fp) {
            self.capped = true;
        }
    }

    /// The count (at most [`Distinct::CAP`]).
    pub(crate) fn count(&self) -> u64 {
        self.seen.len() as u64
    }

    /// Whether a new game came after the count reached [`Distinct::CAP`].
    pub(crate) fn capped(&self) -> bool {
        self.capped
    }
}

impl Summary {
    /// Adds the rule and the games it decided to a summary's JSON, for a
    /// game that has more than one rule: `"rules"` (`"standard"` or
    /// `"codingame"`) and `"decided_by_rule"` (games that filled every
    /// board without three in a row, decided on boards won).
    pub(crate) fn add_rule_json(&self, out: &mut Value) {
        if let Some(r) = self.rules {
            out["rules"] = json!(r.name());
            out["decided_by_rule"] = json!(self.standings.decided_by_rule);
        }
    }

    /// The rule in words with the games it decided, for a game that has
    /// more than one rule.
    pub(crate) fn rule_text(&self) -> Option<String> {
        Some(match self.rules? {
            Rules::Standard => "standard (a full board without three in a row is a draw)".into(),
            Rules::CodinGame => format!(
                "codingame, {} of {} games decided on boards won",
                self.standings.decided_by_rule, self.standings.games
            ),
        })
    }

    /// A summary of `records` (in any order).
    #[cfg(test)]
    pub(crate) fn from_records<'a, G: Game>(
        options: &crate::game::GameOptions,
        seed: u64,
        scheduled: u64,
        names: &[String],
        records: impl IntoIterator<Item = &'a GameRecord>,
    ) -> Summary {
        let mut standings = Standings::with_bots(names.iter().map(String::as_str));
        let mut distinct = Distinct::default();
        let standard = G::start(options).to_string();
        for r in records {
            standings.add(r);
            distinct.add(fingerprint_record::<G>(r, &standard));
        }
        Summary {
            game: G::KIND.name().into(),
            seed,
            scheduled,
            rules: G::KIND.has_rules().then_some(options.rules),
            standings,
            distinct: distinct.count(),
            distinct_capped: distinct.capped(),
            names: names.to_vec(),
            swiss: None,
        }
    }

    /// The leaderboard, best first: [`Standings::ranked`]'s order (score,
    /// then games, wins and name); in a Swiss tournament, bots with the
    /// same score are ordered by Buchholz first (higher is better: the
    /// same score against stronger opposition), then as before.
    pub fn ranked(&self) -> Vec<Ranked<'_>> {
        let ranked = self.standings.ranked();
        let Some(sw) = &self.swiss else {
            return ranked
                .into_iter()
                .map(|bot| Ranked {
                    bot,
                    buchholz: None,
                    byes: None,
                })
                .collect();
        };
        let score = |i: usize| {
            self.names
                .get(i)
                .and_then(|n| self.standings.bots.get(n))
                .map_or(0.0, |b| b.total.score())
        };
        let mut buchholz = vec![0.0f64; self.names.len()];
        let mut byes = vec![0u64; self.names.len()];
        for round in &sw.paired {
            for &[a, b] in &round.pairs {
                if a < buchholz.len() && b < buchholz.len() {
                    buchholz[a] += score(b);
                    buchholz[b] += score(a);
                }
            }
            if let Some(x) = round.bye.filter(|&x| x < buchholz.len()) {
                buchholz[x] += score(x);
                byes[x] += 1;
            }
        }
        let index: std::collections::HashMap<&str, usize> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let mut rows: Vec<Ranked> = ranked
            .into_iter()
            .map(|bot| {
                let i = index.get(bot.name.as_str()).copied();
                Ranked {
                    bot,
                    buchholz: Some(i.map_or(0.0, |i| buchholz[i])),
                    byes: Some(i.map_or(0, |i| byes[i])),
                }
            })
            .collect();
        // Stable: within equal score and Buchholz, the order above stays.
        rows.sort_by(|x, y| {
            score_order(&x.bot.total, &y.bot.total)
                .then(buchholz_key(y.buchholz).cmp(&buchholz_key(x.buchholz)))
        });
        rows
    }

    /// The standings as JSON (`standings.json`, `--json`). Timing fields are
    /// `avg_move_us` and `max_move_us`; everything else is a pure function
    /// of the games.
    pub fn to_json(&self) -> Value {
        let s = &self.standings;
        let bots: Vec<Value> = self
            .ranked()
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let b = row.bot;
                let elo = elo_trinomial(&b.total);
                let forfeits: serde_json::Map<String, Value> = ForfeitReason::ALL
                    .iter()
                    .map(|r| {
                        (
                            r.name().into(),
                            json!(b.forfeits.get(r).copied().unwrap_or(0)),
                        )
                    })
                    .collect();
                let mut v = json!({
                    "rank": i + 1,
                    "name": b.name,
                    "games": b.total.games(),
                    "points": b.total.points(),
                    "score": b.total.score(),
                    "wins": b.total.wins,
                    "draws": b.total.draws,
                    "losses": b.total.losses,
                    "elo": round1(elo.estimate),
                    "elo_low": round1(elo.lower),
                    "elo_high": round1(elo.upper),
                    "as_player1": b.by_seat[0],
                    "as_player2": b.by_seat[1],
                    "forfeits": forfeits,
                    "avg_move_us": b.avg_move_us(),
                    "max_move_us": b.max_move_us,
                });
                if let (Some(buchholz), Some(byes)) = (row.buchholz, row.byes) {
                    v["buchholz"] = json!((buchholz * 1e6).round() / 1e6);
                    v["byes"] = json!(byes);
                }
                v
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
        let mut out = json!({
            "game": self.game,
            "seed": self.seed,
            "scheduled": self.scheduled,
            "games": s.games,
            "distinct_games": self.distinct,
            "distinct_games_capped": self.distinct_capped,
            "terminations": s.terminations,
            "bots": bots,
            "crosstable": crosstable,
        });
        self.add_rule_json(&mut out);
        if let Some(sw) = &self.swiss {
            let name = |i: usize| self.names.get(i).cloned().unwrap_or_default();
            let rounds: Vec<Value> = sw
                .paired
                .iter()
                .enumerate()
                .map(|(r, round)| {
                    let pairs: Vec<[String; 2]> = round.pairs.iter().map(|p| p.map(name)).collect();
                    json!({
                        "round": r + 1,
                        "pairs": pairs,
                        "bye": round.bye.map(name),
                        "rematches": round.rematches,
                    })
                })
                .collect();
            out["format"] = json!("swiss");
            out["swiss"] = json!({
                "rounds": sw.rounds,
                "games_per_pairing": sw.games_per_pairing,
                "paired": rounds,
            });
        }
        out
    }
}

/// An Elo to one decimal, for JSON: still `"+inf"`/`"-inf"` when unbounded.
fn round1(e: Elo) -> Elo {
    Elo((e.0 * 10.0).round() / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;
    use crate::play::record::fingerprint;

    #[test]
    fn symmetric_games_share_a_fingerprint() {
        let m = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = fingerprint::<TicTacToe>(&m(&["0", "1"]));
        let b = fingerprint::<TicTacToe>(&m(&["2", "1"]));
        let c = fingerprint::<TicTacToe>(&m(&["0", "4"]));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn a_perfect_score_has_an_open_elo_in_json_csv_and_tables() {
        let rec = |id: u64| GameRecord {
            id,
            game: crate::game::GameKind::TicTacToe,
            players: ["a".into(), "b".into()],
            seed: id,
            opening: vec![],
            start: ".........".into(),
            moves: vec![],
            times_us: vec![],
            winner: Some(crate::game::Seat::One),
            termination: crate::play::record::Termination::Normal,
            forfeit: None,
            final_position: String::new(),
            client: None,
            format: Vec::new(),
            rules: Default::default(),
        };
        let recs: Vec<GameRecord> = (0..10).map(rec).collect();
        let names = ["a".to_string(), "b".to_string()];
        let s = Summary::from_records::<TicTacToe>(&Default::default(), 1, 10, &names, &recs);
        let j = s.to_json();
        assert_eq!(j["bots"][0]["elo"], "+inf");
        assert_eq!(j["bots"][0]["elo_low"], 166.2);
        assert_eq!(j["bots"][0]["elo_high"], "+inf");
        assert_eq!(j["bots"][1]["elo"], "-inf");
        let csv = crate::tournament::standings::standings_csv(&s);
        assert!(csv.contains(",inf,166.2,inf,"), "{csv}");
        assert!(csv.contains(",-inf,-inf,-166.2,"), "{csv}");
        let tables = crate::tournament::standings::standings_tables(&s);
        assert!(tables.contains("+inf [+166, +inf]"), "{tables}");
        assert!(!tables.contains("2000"), "{tables}");
    }
}
