//! The schedule: a pure function from game id to [`Pairing`], with a known
//! total, so any slice of it (a shard, the games a resume still needs) can
//! be made without playing or storing the rest. Tournaments, matches
//! ([`Schedule::two_bots`]), grading and tests all use it, so one rule
//! fixes every game's seat, seed and opening.

use crate::game::Seat;
use crate::seed;

/// One scheduled game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Game id: unique in the run, and the key for resuming.
    pub id: u64,
    /// Indices into the bot list, by seat.
    pub players: [usize; 2],
    /// The game's seed.
    pub seed: u64,
    /// Seed of the opening; both games of a pair share it.
    pub opening_seed: u64,
    /// The round: which opening of a suite the game plays (every pair of
    /// bots plays each round once, as a pair of games; a match's round is
    /// its pair number).
    pub round: u64,
}

/// Game `id` of a tournament seeded `seed` between the bots of `pair`:
/// games `2k` and `2k+1` are a couple, with the seats swapped and one
/// opening seed; every game has its own seed. Shared by every plan
/// (round-robin, gauntlet, Swiss), so a game's seeds depend only on the
/// tournament seed and its id.
pub(crate) fn paired_game(seed: u64, id: u64, pair: [usize; 2], round: u64) -> Pairing {
    let players = if id.is_multiple_of(2) {
        pair
    } else {
        [pair[1], pair[0]]
    };
    Pairing {
        id,
        players,
        seed: seed::derive(seed, &[id]),
        opening_seed: seed::derive(seed, &[id / 2, OPENING_TAG]),
        round,
    }
}

/// Who plays whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Every bot plays every other bot.
    RoundRobin,
    /// The listed bots (indices) play every bot that is not listed.
    Gauntlet(Vec<usize>),
}

/// Tag mixed into opening seeds so they never equal a game seed.
pub(crate) const OPENING_TAG: u64 = 0x6f70_656e_696e_6773;

/// The whole schedule of a tournament.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Unordered pairs of bot indices, in a fixed order.
    pub pairs: Vec<[usize; 2]>,
    /// Games per pair (even).
    pub games_per_pairing: u64,
    /// The tournament seed.
    pub seed: u64,
    /// Whether each pair's first bot is always player 1 (a console program
    /// plays only the seat its assignment gives it); else seats alternate.
    pub fixed_seats: bool,
}

impl Schedule {
    /// The schedule of `bots` bots in `format`.
    pub fn new(bots: usize, format: Format, games_per_pairing: u64, seed: u64) -> Schedule {
        let mut pairs = Vec::new();
        match format {
            Format::RoundRobin => {
                for a in 0..bots {
                    for b in a + 1..bots {
                        pairs.push([a, b]);
                    }
                }
            }
            Format::Gauntlet(challengers) => {
                for &c in &challengers {
                    for o in (0..bots).filter(|o| !challengers.contains(o)) {
                        pairs.push([c, o]);
                    }
                }
            }
        }
        Schedule {
            pairs,
            games_per_pairing,
            seed,
            fixed_seats: false,
        }
    }

    /// Two bots (0 and 1) playing `games` games (even: seats alternate,
    /// bot 0 is player 1 in even-numbered games): a match, or grading.
    ///
    /// ```
    /// use referee::play::schedule::Schedule;
    ///
    /// let s = Schedule::two_bots(4, 7);
    /// let seats: Vec<[usize; 2]> = s.pairings().map(|p| p.players).collect();
    /// assert_eq!(seats, [[0, 1], [1, 0], [0, 1], [1, 0]]);
    /// // A pure function of the seed: the same games on every machine.
    /// let again: Vec<u64> = Schedule::two_bots(4, 7).pairings().map(|p| p.seed).collect();
    /// assert_eq!(s.pairings().map(|p| p.seed).collect::<Vec<_>>(), again);
    /// ```
    pub fn two_bots(games: u64, seed: u64) -> Schedule {
        Schedule::new(2, Format::RoundRobin, games, seed)
    }

    /// Every game, in id order.
    pub fn pairings(&self) -> impl Iterator<Item = Pairing> + '_ {
        (0..self.total()).map(|id| self.pairing(id))
    }

    /// The games in which bot `bot` plays `seat`, in id order.
    pub(crate) fn pairings_in_seat(
        &self,
        bot: usize,
        seat: Seat,
    ) -> impl Iterator<Item = Pairing> + '_ {
        self.pairings()
            .filter(move |p| p.players[seat.index()] == bot)
    }

    /// Number of games.
    pub(crate) fn total(&self) -> u64 {
        self.pairs.len() as u64 * self.games_per_pairing
    }

    /// Game `id` (< total). Ids go round by round over all pairs, so a
    /// partial run (or shard) still has every pair play; games `2k` and
    /// `2k+1` share an opening with the seats swapped.
    pub(crate) fn pairing(&self, id: u64) -> Pairing {
        let n = self.pairs.len() as u64;
        let couple = id / 2;
        let pair = self.pairs[(couple % n) as usize];
        let mut p = paired_game(self.seed, id, pair, couple / n);
        if self.fixed_seats {
            p.players = pair;
        }
        p
    }

    /// The ids of shard `k` of `n` (1-based `k`): a contiguous block of
    /// whole pairs of games, the blocks together covering every id once.
    pub(crate) fn shard(&self, k: u64, n: u64) -> std::ops::Range<u64> {
        let couples = self.total() / 2;
        let lo = couples * (k - 1) / n;
        let hi = couples * k / n;
        lo * 2..hi * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_seats_keep_each_pairs_first_bot_as_player_one() {
        let mut s = Schedule::new(3, Format::Gauntlet(vec![0]), 4, 9);
        s.fixed_seats = true;
        let games: Vec<Pairing> = s.pairings().collect();
        assert_eq!(games.len(), 8);
        assert!(games.iter().all(|p| p.players[0] == 0), "{games:?}");
        // The seeds are those of the alternating schedule.
        let alt = Schedule::new(3, Format::Gauntlet(vec![0]), 4, 9);
        let seeds: Vec<u64> = alt.pairings().map(|p| p.seed).collect();
        assert_eq!(games.iter().map(|p| p.seed).collect::<Vec<_>>(), seeds);
    }

    #[test]
    fn round_robin_covers_every_pair_with_seats_swapped() {
        let s = Schedule::new(4, Format::RoundRobin, 4, 7);
        assert_eq!(s.total(), 6 * 4);
        let mut seen = std::collections::HashMap::new();
        for id in 0..s.total() {
            let p = s.pairing(id);
            *seen.entry(p.players).or_insert(0) += 1;
            if id % 2 == 1 {
                let q = s.pairing(id - 1);
                assert_eq!(p.players, [q.players[1], q.players[0]]);
                assert_eq!(p.opening_seed, q.opening_seed);
                assert_ne!(p.seed, q.seed);
            }
        }
        assert_eq!(seen.len(), 12);
        assert!(seen.values().all(|&c| c == 2));
        // Pure: asking twice gives the same game.
        assert_eq!(s.pairing(5), s.pairing(5));
    }

    #[test]
    fn two_bots_alternate_seats_and_share_openings_in_pairs() {
        let s = Schedule::two_bots(6, 3);
        let all: Vec<Pairing> = s.pairings().collect();
        assert_eq!(all.len(), 6);
        assert_eq!(all[0].players, [0, 1]);
        assert_eq!(all[1].players, [1, 0]);
        assert_eq!(all[0].opening_seed, all[1].opening_seed);
        assert_ne!(all[0].opening_seed, all[2].opening_seed);
        let rounds: Vec<u64> = all.iter().map(|p| p.round).collect();
        assert_eq!(rounds, [0, 0, 1, 1, 2, 2]);
        let firsts: Vec<u64> = s.pairings_in_seat(0, Seat::One).map(|p| p.id).collect();
        assert_eq!(firsts, [0, 2, 4]);
    }

    #[test]
    fn gauntlet_plays_challengers_against_the_rest() {
        let s = Schedule::new(4, Format::Gauntlet(vec![0, 3]), 4, 1);
        assert_eq!(s.pairs, vec![[0, 1], [0, 2], [3, 1], [3, 2]]);
        // Every pair plays round 0, then round 1: one opening per round.
        let rounds: Vec<u64> = s.pairings().map(|p| p.round).collect();
        assert_eq!(rounds, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn shards_partition_the_ids_into_whole_pairs() {
        let s = Schedule::new(3, Format::RoundRobin, 6, 1);
        for n in 1..=7 {
            let mut all = Vec::new();
            for k in 1..=n {
                let r = s.shard(k, n);
                assert!(r.start.is_multiple_of(2) && r.end.is_multiple_of(2));
                all.extend(r);
            }
            assert_eq!(all, (0..s.total()).collect::<Vec<_>>());
        }
    }
}
