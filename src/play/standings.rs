//! Standings: per-bot totals computed from game records, and nothing else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::game::Seat;
use crate::play::record::GameRecord;
use crate::protocol::ForfeitReason;

/// Wins, draws and losses.
///
/// ```
/// use referee::play::standings::Wdl;
///
/// let mut w = Wdl::default();
/// for points in [1.0, 0.5, 0.0, 1.0] {
///     w.add(points);
/// }
/// assert_eq!((w.wins, w.draws, w.losses), (2, 1, 1));
/// assert_eq!(w.points(), 2.5);
/// assert_eq!(w.score(), 0.625);
/// ```
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
    pub(crate) fn record(&mut self, result: crate::protocol::BotResult) {
        match result {
            crate::protocol::BotResult::Win => self.wins += 1,
            crate::protocol::BotResult::Draw => self.draws += 1,
            crate::protocol::BotResult::Loss => self.losses += 1,
        }
    }

    /// The other side's points.
    pub fn opponent_points(&self) -> f64 {
        self.losses as f64 + 0.5 * self.draws as f64
    }

    /// `W-D-L` text.
    pub(crate) fn text(&self) -> String {
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
    pub(crate) fn avg_move_us(&self) -> f64 {
        if self.moves == 0 {
            0.0
        } else {
            self.move_time_us as f64 / self.moves as f64
        }
    }

    /// Total forfeits.
    pub(crate) fn forfeit_count(&self) -> u64 {
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
    /// Games the rule decided rather than a line on the board (UTTT under
    /// CodinGame's rule: a full board, won on boards won or drawn on equal
    /// counts; [`GameRecord::decided_by_rule`]).
    #[serde(default)]
    pub decided_by_rule: u64,
    /// Whether each start position seen has an odd number of moves on it.
    #[serde(skip)]
    odd_starts: StartParity,
}

/// Which start positions (by text) have an odd number of moves played on
/// them, remembered so that each is read once: in all three games player 1
/// moves at even plies, so that says who made a record's first timed move.
/// Holds the last start seen (nearly every game of a run shares it) and a
/// bounded map of the others (an opening suite's positions).
#[derive(Clone, Debug, Default)]
struct StartParity {
    last: Option<(String, bool)>,
    others: std::collections::HashMap<String, bool>,
}

impl StartParity {
    /// Most start positions remembered besides the last one.
    const MAX: usize = 4096;

    fn odd(&mut self, rec: &GameRecord) -> bool {
        if let Some((text, odd)) = &self.last {
            if *text == rec.start {
                return *odd;
            }
        }
        let odd = match self.others.get(&rec.start) {
            Some(&odd) => odd,
            None => {
                let odd = crate::game::start_ply(rec.game, &rec.start) % 2 == 1;
                if self.others.len() < Self::MAX {
                    self.others.insert(rec.start.clone(), odd);
                }
                odd
            }
        };
        self.last = Some((rec.start.clone(), odd));
        odd
    }
}

/// A cache: standings are equal whatever it holds.
impl PartialEq for StartParity {
    fn eq(&self, _: &Self) -> bool {
        true
    }
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
    pub(crate) fn add(&mut self, rec: &GameRecord) {
        self.games += 1;
        if rec.decided_by_rule().is_some() {
            self.decided_by_rule += 1;
        }
        match self.terminations.get_mut(rec.termination.name()) {
            Some(n) => *n += 1,
            None => {
                self.terminations
                    .insert(rec.termination.name().to_string(), 1);
            }
        }
        // Times alternate between the seats, starting with whoever moved
        // first after the opening (player 1 moves at even plies).
        let odd = self.odd_starts.odd(rec) ^ (rec.opening.len() % 2 == 1);
        let first_mover = if odd { Seat::Two } else { Seat::One };
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

    /// Bots best first (the leaderboard's order): by score (points per
    /// game), then by games played (the same score over more games is
    /// better established), then by wins (the more decisive record), then
    /// by name. A total order, so ties never depend on insertion order;
    /// scores are compared exactly (as fractions), never as rounded floats.
    /// A bot that has not played ranks below every bot that has.
    pub fn ranked(&self) -> Vec<&BotStats> {
        let mut v: Vec<&BotStats> = self.bots.values().collect();
        v.sort_by(|a, b| rank_order(&a.total, &b.total).then(a.name.cmp(&b.name)));
        v
    }
}

/// The leaderboard order of two records (best first, names aside): see
/// [`Standings::ranked`].
fn rank_order(a: &Wdl, b: &Wdl) -> std::cmp::Ordering {
    let (ga, gb) = (a.games(), b.games());
    score_order(a, b)
        .then(gb.cmp(&ga))
        .then(b.wins.cmp(&a.wins))
}

/// Score order, highest first: points per game compared exactly, as
/// (2W + D) / 2G cross-multiplied in u128 (no rounding, no overflow). No
/// games sorts last.
pub(crate) fn score_order(a: &Wdl, b: &Wdl) -> std::cmp::Ordering {
    let (ga, gb) = (a.games(), b.games());
    let half = |w: &Wdl| 2 * w.wins as u128 + w.draws as u128;
    match (ga, gb) {
        (0, 0) => std::cmp::Ordering::Equal,
        (0, _) => std::cmp::Ordering::Greater,
        (_, 0) => std::cmp::Ordering::Less,
        _ => (half(b) * ga as u128).cmp(&(half(a) * gb as u128)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::record::Termination;
    use crate::protocol::Forfeit;

    fn rec(p1: &str, p2: &str, winner: Option<u8>, times: Vec<u64>) -> GameRecord {
        let winner = winner.and_then(crate::game::Seat::from_number);
        let mut r =
            crate::play::record::sample(crate::game::GameKind::TicTacToe, [p1, p2], winner, &[]);
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
    fn move_times_go_to_the_seat_that_moved_after_a_suite_position() {
        // One X on the board: player 2 makes the first timed move.
        let mut r = rec("a", "b", None, vec![10, 20, 30]);
        r.start = "X........".into();
        let s = Standings::from_records([&r]);
        assert_eq!(
            (s.bots["a"].move_time_us, s.bots["b"].move_time_us),
            (20, 40)
        );
        // The usual start and one opening move: the same.
        let mut r = rec("a", "b", None, vec![10, 20, 30]);
        r.opening = vec!["4".into()];
        let s = Standings::from_records([&r]);
        assert_eq!(
            (s.bots["a"].move_time_us, s.bots["b"].move_time_us),
            (20, 40)
        );
        // A position with one move and one opening move: player 1 again.
        let mut r = rec("a", "b", None, vec![10, 20, 30]);
        r.start = "X........".into();
        r.opening = vec!["4".into()];
        let s = Standings::from_records([&r]);
        assert_eq!(
            (s.bots["a"].move_time_us, s.bots["b"].move_time_us),
            (40, 20)
        );
    }

    #[test]
    fn ranks_by_score_then_games_then_wins_then_name() {
        let recs = |p1: &str, p2: &str, n: usize, winner: Option<u8>| {
            (0..n)
                .map(|_| rec(p1, p2, winner, vec![]))
                .collect::<Vec<_>>()
        };
        // A gauntlet: the challenger `c` scores about a third over many
        // games, the field bot `f` 100 % over two; `g` has not played.
        let mut all = Vec::new();
        all.extend(recs("c", "e", 7, Some(1)));
        all.extend(recs("c", "e", 13, Some(2)));
        all.extend(recs("c", "f", 2, Some(2)));
        let mut s = Standings::with_bots(["c", "e", "f", "g"]);
        for r in &all {
            s.add(r);
        }
        let order: Vec<&str> = s.ranked().iter().map(|b| b.name.as_str()).collect();
        // f 2/2, e 13/20, c 7/22, g no games.
        assert_eq!(order, ["f", "e", "c", "g"]);
        // Same score: more games first, then more wins.
        let w = |wins, draws, losses| Wdl {
            wins,
            draws,
            losses,
        };
        use std::cmp::Ordering::*;
        assert_eq!(rank_order(&w(2, 0, 2), &w(1, 0, 1)), Less);
        assert_eq!(rank_order(&w(1, 0, 1), &w(0, 2, 0)), Less);
        assert_eq!(rank_order(&w(1, 1, 1), &w(1, 1, 1)), Equal);
        // 1/3 and 2/6 are the same score, exactly: more games first; at
        // the same games, more wins.
        assert_eq!(rank_order(&w(2, 0, 4), &w(1, 0, 2)), Less);
        assert_eq!(rank_order(&w(0, 2, 1), &w(1, 0, 2)), Greater);
    }
}
