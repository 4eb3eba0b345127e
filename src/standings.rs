//! Standings: per-bot totals computed from game records, and nothing else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::game::Seat;
use crate::record::{ForfeitReason, GameRecord};

/// Wins, draws and losses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Wdl {
    /// Games counted.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Points: win 1, draw 0.5, loss 0.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Points over games, 0..=1 (0 for no games).
    pub fn score(&self) -> f64 {
        if self.games() == 0 {
            0.0
        } else {
            self.points() / self.games() as f64
        }
    }

    /// Counts one game's result.
    pub fn add(&mut self, points: f64) {
        if points >= 1.0 {
            self.wins += 1;
        } else if points > 0.0 {
            self.draws += 1;
        } else {
            self.losses += 1;
        }
    }

    /// Counts one result of this side's.
    pub fn record(&mut self, result: crate::bot::BotResult) {
        match result {
            crate::bot::BotResult::Win => self.wins += 1,
            crate::bot::BotResult::Draw => self.draws += 1,
            crate::bot::BotResult::Loss => self.losses += 1,
        }
    }

    /// The other side's points.
    pub fn opponent_points(&self) -> f64 {
        self.losses as f64 + 0.5 * self.draws as f64
    }

    /// `W-D-L` text.
    pub fn text(&self) -> String {
        format!("{}-{}-{}", self.wins, self.draws, self.losses)
    }
}

/// One bot's totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BotStats {
    /// The bot's name.
    pub name: String,
    /// All games.
    pub total: Wdl,
    /// Games as player 1 and as player 2.
    pub by_seat: [Wdl; 2],
    /// Forfeits this bot committed, by reason.
    pub forfeits: BTreeMap<ForfeitReason, u64>,
    /// Sum of this bot's move times in µs.
    pub move_time_us: u64,
    /// Number of timed moves.
    pub moves: u64,
    /// Longest move in µs.
    pub max_move_us: u64,
}

impl BotStats {
    /// Mean move time in µs (0 with no moves).
    pub fn avg_move_us(&self) -> f64 {
        if self.moves == 0 {
            0.0
        } else {
            self.move_time_us as f64 / self.moves as f64
        }
    }

    /// Total forfeits.
    pub fn forfeit_count(&self) -> u64 {
        self.forfeits.values().sum()
    }
}

/// Totals for every bot and every pair, built from records in any order:
/// the result never depends on the order games finished in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Standings {
    /// Per bot, keyed by name.
    pub bots: BTreeMap<String, BotStats>,
    /// Per ordered pair (bot, opponent): the bot's results against the opponent.
    pub pairs: BTreeMap<String, BTreeMap<String, Wdl>>,
    /// Games counted.
    pub games: u64,
    /// How games ended: termination name -> count.
    pub terminations: BTreeMap<String, u64>,
}

impl Standings {
    /// Standings with these bots listed even before they play.
    pub(crate) fn with_bots<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut s = Standings::default();
        for n in names {
            s.entry(n);
        }
        s
    }

    fn entry(&mut self, name: &str) -> &mut BotStats {
        // Look up before inserting: `entry` would allocate the key for every
        // game, and standings are updated once per game of a tournament.
        if !self.bots.contains_key(name) {
            let stats = BotStats {
                name: name.to_string(),
                ..BotStats::default()
            };
            self.bots.insert(name.to_string(), stats);
        }
        self.bots.get_mut(name).expect("inserted above")
    }

    fn pair(&mut self, name: &str, opp: &str) -> &mut Wdl {
        if !self.pairs.contains_key(name) {
            self.pairs.insert(name.to_string(), BTreeMap::new());
        }
        let row = self.pairs.get_mut(name).expect("inserted above");
        if !row.contains_key(opp) {
            row.insert(opp.to_string(), Wdl::default());
        }
        row.get_mut(opp).expect("inserted above")
    }

    /// Counts one finished game.
    pub fn add(&mut self, rec: &GameRecord) {
        self.games += 1;
        match self.terminations.get_mut(rec.termination.name()) {
            Some(n) => *n += 1,
            None => {
                self.terminations
                    .insert(rec.termination.name().to_string(), 1);
            }
        }
        // Times alternate between the seats, starting with whoever moved
        // first after the opening.
        let first_mover = if rec.opening.len().is_multiple_of(2) {
            Seat::One
        } else {
            Seat::Two
        };
        for seat in Seat::BOTH {
            let name = &rec.players[seat.index()];
            let opp = &rec.players[seat.other().index()];
            let pts = rec.points(seat);
            let st = self.entry(name);
            st.total.add(pts);
            st.by_seat[seat.index()].add(pts);
            for (i, &t) in rec.times_us.iter().enumerate() {
                let mover = if i % 2 == 0 {
                    first_mover
                } else {
                    first_mover.other()
                };
                if mover == seat {
                    st.move_time_us += t;
                    st.moves += 1;
                    st.max_move_us = st.max_move_us.max(t);
                }
            }
            if let Some(f) = &rec.forfeit {
                if f.seat == seat {
                    *st.forfeits.entry(f.reason).or_default() += 1;
                }
            }
            self.pair(name, opp).add(pts);
        }
    }

    /// Standings of a set of records.
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a GameRecord>) -> Self {
        let mut s = Standings::default();
        for r in records {
            s.add(r);
        }
        s
    }

    /// Bots best first: by points, then wins, then name (a total order, so
    /// ties never depend on insertion order).
    pub fn ranked(&self) -> Vec<&BotStats> {
        let mut v: Vec<&BotStats> = self.bots.values().collect();
        v.sort_by(|a, b| {
            b.total
                .points()
                .total_cmp(&a.total.points())
                .then(b.total.wins.cmp(&a.total.wins))
                .then(a.name.cmp(&b.name))
        });
        v
    }
}

/// Elo difference implied by a score, with its 95 % interval, from the
/// trinomial (W/D/L) variance. Returns `(elo, lower, upper)`; infinite scores
/// are clamped to ±2000 so tables stay readable.
pub fn elo_interval(w: &Wdl) -> (f64, f64, f64) {
    let n = w.games() as f64;
    if n == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let s = w.score();
    let var = (w.wins as f64 * (1.0 - s).powi(2)
        + w.draws as f64 * (0.5 - s).powi(2)
        + w.losses as f64 * (0.0 - s).powi(2))
        / n;
    let se = (var / n).sqrt();
    let to_elo = |p: f64| {
        let p = p.clamp(1e-9, 1.0 - 1e-9);
        (-400.0 * (1.0 / p - 1.0).log10()).clamp(-2000.0, 2000.0)
    };
    (to_elo(s), to_elo(s - 1.96 * se), to_elo(s + 1.96 * se))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Forfeit, Termination};

    fn rec(p1: &str, p2: &str, winner: Option<u8>, times: Vec<u64>) -> GameRecord {
        let winner = winner.and_then(crate::game::Seat::from_number);
        let mut r = crate::record::sample(crate::game::GameKind::TicTacToe, [p1, p2], winner, &[]);
        r.start = ".........".into();
        r.times_us = times;
        r
    }

    #[test]
    fn counts_points_seats_and_times() {
        let mut f = rec("a", "b", Some(2), vec![10, 20, 30]);
        f.termination = Termination::Forfeit(ForfeitReason::Timeout);
        let mut ff = Forfeit::new(ForfeitReason::Timeout, "");
        ff.seat = crate::game::Seat::One;
        f.forfeit = Some(ff);
        let recs = [
            rec("a", "b", Some(1), vec![]),
            rec("b", "a", None, vec![]),
            f,
        ];
        let s = Standings::from_records(&recs);
        let a = &s.bots["a"];
        assert_eq!(
            a.total,
            Wdl {
                wins: 1,
                draws: 1,
                losses: 1
            }
        );
        assert_eq!(
            a.by_seat[0],
            Wdl {
                wins: 1,
                draws: 0,
                losses: 1
            }
        );
        assert_eq!(a.total.points(), 1.5);
        assert_eq!(a.forfeits[&ForfeitReason::Timeout], 1);
        assert_eq!(a.moves, 2);
        assert_eq!(a.move_time_us, 40);
        assert_eq!(s.bots["b"].moves, 1);
        assert_eq!(s.pairs["a"]["b"].text(), "1-1-1");
        assert_eq!(s.ranked()[0].name, "a");
        assert_eq!(s.terminations["timeout"], 1);
    }

    #[test]
    fn order_of_records_does_not_matter() {
        let recs = vec![
            rec("a", "b", Some(1), vec![1]),
            rec("b", "c", None, vec![2]),
            rec("c", "a", Some(2), vec![3]),
        ];
        let mut rev = recs.clone();
        rev.reverse();
        assert_eq!(
            Standings::from_records(&recs),
            Standings::from_records(&rev)
        );
    }

    #[test]
    fn elo_is_zero_at_half_and_interval_contains_it() {
        let (e, lo, hi) = elo_interval(&Wdl {
            wins: 10,
            draws: 0,
            losses: 10,
        });
        assert!(e.abs() < 1e-9);
        assert!(lo < 0.0 && hi > 0.0);
        let (e, _, _) = elo_interval(&Wdl {
            wins: 76,
            draws: 0,
            losses: 24,
        });
        assert!((e - 200.0).abs() < 2.0, "{e}");
    }
}
