//! The Swiss system: a tournament in rounds in which bots of similar score
//! meet, so that a few rounds rank a field far too large for a round-robin
//! (docs/tournaments.md, "Swiss system", states the rule this module
//! implements, step by step).
//!
//! A round's pairings depend on the results of the rounds before, so unlike
//! a [`crate::play::schedule::Schedule`] the games are not a pure function of their
//! id. What is fixed in advance is the shape ([`Swiss`]): the number of
//! rounds, the pairs per round, each game's id, seats and seed. What a round
//! needs is made by [`pair_round`] from the results so far ([`History`]),
//! and from nothing else (no clock, no thread, no finishing order), so the
//! same file and seed give the same pairings at any `--jobs`.

use std::sync::RwLock;

use rand::seq::SliceRandom;

use crate::game::Seat;
use crate::play::record::GameRecord;
use crate::play::schedule::Pairing;
use crate::play::series::Games;
use crate::seed;

/// Tag mixed into the seed that shuffles the bots for round 1.
const SEEDING_TAG: u64 = 0x0073_7769_7373;

/// Most pairing attempts the search for a round without rematches makes
/// before it gives up and pairs greedily (see [`pair_round`]). Thousands of
/// times what a round of 300 bots normally takes; it bounds the rare round
/// (few bots, most of them met already) whose search space is exponential.
pub(crate) const SEARCH_BUDGET: u64 = 200_000;

/// The order of the bots before any game (the "seeding"): ties in score are
/// broken by it, and round 1 pairs by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Seeding {
    /// The file's order shuffled by the tournament seed.
    #[default]
    Shuffle,
    /// The file's order as it is (list the strongest first to seed by
    /// strength).
    File,
}

impl Seeding {
    /// The name used in tournament files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Seeding::Shuffle => "shuffle",
            Seeding::File => "file",
        }
    }
}

/// The shape of a Swiss tournament: everything fixed before the first game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swiss {
    /// Number of bots (at least 2).
    pub bots: usize,
    /// Number of rounds, 1 to [`Swiss::max_rounds`].
    pub rounds: u64,
    /// Games each pairing plays (even: seats alternate).
    pub games_per_pairing: u64,
    /// The tournament seed.
    pub seed: u64,
    /// The order before any game.
    pub seeding: Seeding,
}

/// One round's pairing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// The pairs, as bot indices, the higher-ranked bot first (it is
    /// player 1 in the pairing's even games); pair `k` is the round's
    /// `k`-th pairing in the game ids.
    pub pairs: Vec<[usize; 2]>,
    /// The bot that sits out (an odd number of bots).
    pub bye: Option<usize>,
    /// Pairs of bots that had met before: 0 unless no pairing without a
    /// rematch was found.
    pub rematches: usize,
    /// Whether the search for a pairing without rematches failed (none
    /// exists, or none was found within [`SEARCH_BUDGET`] attempts) and
    /// the round was paired greedily.
    pub greedy: bool,
}

/// What pairing needs to know of the rounds so far.
#[derive(Clone, Debug)]
pub(crate) struct History {
    n: usize,
    /// Each bot's place in the seeding (0 = first).
    seed_rank: Vec<usize>,
    /// Half-points (win 2, draw 1, loss 0) per bot.
    half_points: Vec<u64>,
    /// Games counted per bot.
    games: Vec<u64>,
    /// Rounds in which bots `a` and `b` were paired, at `a * n + b`.
    met: Vec<u32>,
    /// Byes per bot.
    byes: Vec<u32>,
}

fn ceil_log2(n: usize) -> u64 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()) as u64
}

impl Swiss {
    /// The most rounds `bots` bots can play without a forced rematch: as
    /// many as a round-robin has (`bots - 1`, or `bots` when the number is
    /// odd and one bot sits out each round). At least 1.
    pub(crate) fn max_rounds(bots: usize) -> u64 {
        let n = bots.max(2) as u64;
        if n.is_multiple_of(2) {
            n - 1
        } else {
            n
        }
    }

    /// The default number of rounds: ⌈log2(bots)⌉ + 2, at most
    /// [`Swiss::max_rounds`]. (log2 rounds separate the winner from the
    /// field; two more sort the middle.)
    pub(crate) fn default_rounds(bots: usize) -> u64 {
        (ceil_log2(bots.max(2)) + 2).min(Swiss::max_rounds(bots))
    }

    /// Checks a number of rounds for `bots` bots (`None`: the default):
    /// 1 to [`Swiss::max_rounds`], since more rounds would force a rematch.
    pub(crate) fn check_rounds(bots: usize, rounds: Option<i64>) -> Result<u64, String> {
        let max = Swiss::max_rounds(bots);
        match rounds {
            None => Ok(Swiss::default_rounds(bots)),
            Some(r) if r >= 1 && r as u64 <= max => Ok(r as u64),
            Some(r) if r < 1 => Err(format!("must be at least 1, got {r}")),
            Some(r) => Err(format!(
                "must be between 1 and {max}, got {r} ({bots} bots can play at most {max} rounds \
                 without meeting an opponent twice; for more games per opponent raise \
                 games_per_pairing, or play a round-robin)"
            )),
        }
    }

    /// Pairings in every round: ⌊bots / 2⌋.
    pub(crate) fn pairs_per_round(&self) -> u64 {
        (self.bots / 2) as u64
    }

    /// Games in every round.
    pub(crate) fn games_per_round(&self) -> u64 {
        self.pairs_per_round() * self.games_per_pairing
    }

    /// Games in the whole tournament.
    pub(crate) fn total(&self) -> u64 {
        self.rounds * self.games_per_round()
    }

    /// The round (0-based) of game `id`.
    pub(crate) fn round_of(&self, id: u64) -> u64 {
        id / self.games_per_round().max(1)
    }

    /// The index, within its round, of the pairing game `id` belongs to.
    pub(crate) fn pair_index(&self, id: u64) -> usize {
        let local = id - self.round_of(id) * self.games_per_round();
        ((local / 2) % self.pairs_per_round().max(1)) as usize
    }

    /// The bots in seeding order (first = highest seed).
    pub(crate) fn seeded_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.bots).collect();
        if self.seeding == Seeding::Shuffle {
            let mut rng = seed::rng(seed::derive(self.seed, &[SEEDING_TAG]));
            order.shuffle(&mut rng);
        }
        order
    }

    /// Game `id` of round `round` (which must be `id`'s round). Within a
    /// round, ids go couple by couple over the pairs, like a round-robin's:
    /// games `2k` and `2k + 1` are one couple (seats swapped, one opening),
    /// couple `c` of the round is pair `c mod P` (P pairs per round). Every
    /// game's seed comes from (seed, id), every couple's opening seed from
    /// (seed, id / 2), as in a round-robin; the suite opening played by the
    /// `j`-th couple of every pairing of round `r` (0-based) is
    /// `r · G/2 + j` (G games per pairing), so all pairings of a round play
    /// the same openings and later rounds move on through the suite.
    pub(crate) fn pairing(&self, round: &Round, id: u64) -> Pairing {
        let p = self.pairs_per_round().max(1);
        let r = self.round_of(id);
        let couple = (id - r * self.games_per_round()) / 2;
        let pair = round.pairs[self.pair_index(id)];
        crate::play::schedule::paired_game(
            self.seed,
            id,
            pair,
            r * (self.games_per_pairing / 2) + couple / p,
        )
    }
}

impl History {
    /// No rounds yet, for a tournament of shape `swiss`.
    pub(crate) fn new(swiss: &Swiss) -> History {
        let n = swiss.bots;
        let mut seed_rank = vec![0; n];
        for (place, bot) in swiss.seeded_order().into_iter().enumerate() {
            seed_rank[bot] = place;
        }
        History {
            n,
            seed_rank,
            half_points: vec![0; n],
            games: vec![0; n],
            met: vec![0; n * n],
            byes: vec![0; n],
        }
    }

    /// Notes a round's pairing (who met whom, who sat out).
    pub(crate) fn add_round(&mut self, round: &Round) {
        for &[a, b] in &round.pairs {
            self.met[a * self.n + b] += 1;
            self.met[b * self.n + a] += 1;
        }
        if let Some(b) = round.bye {
            self.byes[b] += 1;
        }
    }

    /// Counts one game: `players` by seat, and player 1's points in half
    /// points (2 a win, 1 a draw, 0 a loss).
    pub(crate) fn add_game(&mut self, players: [usize; 2], first_half_points: u64) {
        let first = first_half_points.min(2);
        self.half_points[players[0]] += first;
        self.half_points[players[1]] += 2 - first;
        self.games[players[0]] += 1;
        self.games[players[1]] += 1;
    }

    /// Rounds in which `a` and `b` were paired.
    pub(crate) fn met(&self, a: usize, b: usize) -> u32 {
        self.met[a * self.n + b]
    }

    /// Byes `bot` has had.
    pub(crate) fn byes(&self, bot: usize) -> u32 {
        self.byes[bot]
    }

    /// The score pairing uses, as a fraction (numerator, denominator):
    /// points per game, or ½ for a bot that has not played yet.
    fn score(&self, bot: usize) -> (u64, u64) {
        match self.games[bot] {
            0 => (1, 2),
            g => (self.half_points[bot], 2 * g),
        }
    }

    /// Whether `a` and `b` have exactly the same score.
    fn same_score(&self, a: usize, b: usize) -> bool {
        self.cmp_score(a, b) == std::cmp::Ordering::Equal
    }

    /// Score order, highest first (exact: fractions cross-multiplied).
    fn cmp_score(&self, a: usize, b: usize) -> std::cmp::Ordering {
        let (na, da) = self.score(a);
        let (nb, db) = self.score(b);
        (nb as u128 * da as u128).cmp(&(na as u128 * db as u128))
    }

    /// Every bot in pairing order: score (points per game) highest first,
    /// then seeding order.
    pub(crate) fn ranking(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.n).collect();
        order.sort_by(|&a, &b| {
            self.cmp_score(a, b)
                .then(self.seed_rank[a].cmp(&self.seed_rank[b]))
        });
        order
    }
}

/// Pairs the next round (docs/tournaments.md, "Swiss system"):
///
/// 1. Rank every bot by score (points per game so far; ½ before its first
///    game), then by seeding.
/// 2. With an odd number of bots, the lowest-ranked bot among those with
///    the fewest byes sits out.
/// 3. Search, depth first, for a pairing without rematches: the
///    highest-ranked unpaired bot `x` tries its candidates in order and the
///    rest is paired the same way, backtracking when some unpaired bot is
///    left with no unpaired bot it has not met. `x`'s candidates: when other
///    unpaired bots share its score (its group, `g` bots with `x`, in
///    ranking order `G[0] = x, ..., G[g-1]`), with `m = ⌊g/2⌋`, first
///    `G[m], G[m+1], ..., G[g-1]`, then `G[m-1], ..., G[1]`, then every
///    lower-ranked unpaired bot in ranking order; when none does, every
///    other unpaired bot in ranking order. Without rematches this pairs
///    each group top half against bottom half, and the lowest bot of an odd
///    group floats down to meet the top of the next.
/// 4. If no such pairing exists, or none is found within [`SEARCH_BUDGET`]
///    attempts, pair greedily instead: the highest-ranked unpaired bot takes
///    the first of its candidates (same order) among those it has met the
///    fewest times, and so on down.
pub(crate) fn pair_round(h: &History) -> Round {
    let mut ranking = h.ranking();
    let mut bye = None;
    if ranking.len() % 2 == 1 {
        let fewest = ranking.iter().map(|&b| h.byes(b)).min().unwrap_or(0);
        if let Some(pos) = ranking.iter().rposition(|&b| h.byes(b) == fewest) {
            bye = Some(ranking.remove(pos));
        }
    }
    let mut search = Search::new(h, &ranking);
    let mut pairs = Vec::with_capacity(ranking.len() / 2);
    let found = search.run(&mut pairs) == Outcome::Found;
    if !found {
        pairs = greedy(h, &ranking);
    }
    let rematches = pairs.iter().filter(|&&[a, b]| h.met(a, b) > 0).count();
    Round {
        pairs,
        bye,
        rematches,
        greedy: !found,
    }
}

/// `x`'s candidates (step 3 of [`pair_round`]): `unpaired` in ranking order,
/// `x` first.
fn candidates(h: &History, unpaired: &[usize]) -> Vec<usize> {
    let x = unpaired[0];
    let g = unpaired.iter().take_while(|&&b| h.same_score(x, b)).count();
    if g < 2 {
        return unpaired[1..].to_vec();
    }
    let m = g / 2;
    let mut out = Vec::with_capacity(unpaired.len() - 1);
    out.extend_from_slice(&unpaired[m..g]);
    out.extend(unpaired[1..m].iter().rev());
    out.extend_from_slice(&unpaired[g..]);
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Found,
    Exhausted,
    OutOfBudget,
}

/// The depth-first search of step 3.
struct Search<'a> {
    h: &'a History,
    /// The bots to pair, in ranking order.
    ranking: &'a [usize],
    /// Whether the bot at each ranking position is paired.
    paired: Vec<bool>,
    /// Per bot: unpaired bots (of `ranking`) it has not met.
    open: Vec<u64>,
    steps: u64,
}

impl<'a> Search<'a> {
    fn new(h: &'a History, ranking: &'a [usize]) -> Self {
        let mut open = vec![0; h.n];
        for &a in ranking {
            open[a] = ranking
                .iter()
                .filter(|&&b| b != a && h.met(a, b) == 0)
                .count() as u64;
        }
        Search {
            h,
            ranking,
            paired: vec![false; ranking.len()],
            open,
            steps: 0,
        }
    }

    fn unpaired(&self) -> Vec<usize> {
        self.ranking
            .iter()
            .zip(&self.paired)
            .filter(|(_, &p)| !p)
            .map(|(&b, _)| b)
            .collect()
    }

    /// Marks `a` and `b` paired (`on`) or unpaired, keeping `open` right
    /// for the bots still unpaired; returns whether every unpaired bot
    /// still has an unpaired bot it has not met.
    fn set(&mut self, a: usize, b: usize, on: bool) -> bool {
        for (i, &x) in self.ranking.iter().enumerate() {
            if x == a || x == b {
                self.paired[i] = on;
            }
        }
        let mut ok = true;
        for (i, &u) in self.ranking.iter().enumerate() {
            if self.paired[i] || u == a || u == b {
                continue;
            }
            let lost = (self.h.met(u, a) == 0) as u64 + (self.h.met(u, b) == 0) as u64;
            if on {
                self.open[u] -= lost;
                ok &= self.open[u] > 0;
            } else {
                self.open[u] += lost;
            }
        }
        ok
    }

    fn run(&mut self, out: &mut Vec<[usize; 2]>) -> Outcome {
        let unpaired = self.unpaired();
        let Some(&x) = unpaired.first() else {
            return Outcome::Found;
        };
        for c in candidates(self.h, &unpaired) {
            if self.h.met(x, c) > 0 {
                continue;
            }
            self.steps += 1;
            if self.steps > SEARCH_BUDGET {
                return Outcome::OutOfBudget;
            }
            let ok = self.set(x, c, true);
            if ok {
                out.push([x, c]);
                match self.run(out) {
                    Outcome::Exhausted => {
                        out.pop();
                    }
                    done => return done,
                }
            }
            self.set(x, c, false);
        }
        Outcome::Exhausted
    }
}

/// Step 4 of [`pair_round`]: each highest-ranked unpaired bot takes the
/// first candidate it has met the fewest times.
fn greedy(h: &History, ranking: &[usize]) -> Vec<[usize; 2]> {
    let mut unpaired = ranking.to_vec();
    let mut pairs = Vec::with_capacity(ranking.len() / 2);
    while unpaired.len() >= 2 {
        let x = unpaired[0];
        let cands = candidates(h, &unpaired);
        let fewest = cands.iter().map(|&c| h.met(x, c)).min().unwrap_or(0);
        let Some(&c) = cands.iter().find(|&&c| h.met(x, c) == fewest) else {
            break;
        };
        pairs.push([x, c]);
        unpaired.retain(|&b| b != x && b != c);
    }
    pairs
}

/// The games of a Swiss tournament as a series plays them: round `r`'s
/// games are known once round `r` is paired, which happens when the last
/// game of round `r - 1` is counted ([`Pairer::add`]). Shared with the
/// workers, which wait on a game whose round is not paired yet.
#[derive(Debug)]
pub(crate) struct SwissGames {
    pub(crate) swiss: Swiss,
    rounds: RwLock<Vec<Round>>,
}

impl SwissGames {
    /// The rounds paired so far.
    pub(crate) fn rounds(&self) -> Vec<Round> {
        self.rounds
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Games for SwissGames {
    fn pairing(&self, id: u64) -> Option<Pairing> {
        if id >= self.swiss.total() {
            return None;
        }
        let r = self.swiss.round_of(id) as usize;
        let rounds = self.rounds.read().unwrap_or_else(|p| p.into_inner());
        rounds.get(r).map(|round| self.swiss.pairing(round, id))
    }
}

/// What the counting side of a Swiss series keeps: the results so far, and
/// how many games of each round are counted.
#[derive(Debug)]
pub(crate) struct Pairer {
    history: History,
    counted: Vec<u64>,
}

impl Pairer {
    /// A Swiss tournament's games with round 1 paired, and its pairer.
    pub(crate) fn start(swiss: &Swiss) -> (SwissGames, Pairer) {
        let mut history = History::new(swiss);
        let first = pair_round(&history);
        history.add_round(&first);
        let games = SwissGames {
            swiss: swiss.clone(),
            rounds: RwLock::new(vec![first]),
        };
        let pairer = Pairer {
            history,
            counted: vec![0; swiss.rounds as usize],
        };
        (games, pairer)
    }

    /// Counts one game (in id order; after an interruption some ids may be
    /// missing, and a round with missing games is never followed by the
    /// next). When it completes its round, pairs the next one.
    pub(crate) fn add(&mut self, games: &SwissGames, rec: &GameRecord) {
        let Some(p) = games.pairing(rec.id) else {
            return;
        };
        let half = (2.0 * rec.points(Seat::One)).round() as u64;
        self.history.add_game(p.players, half);
        let s = &games.swiss;
        let r = s.round_of(rec.id) as usize;
        let Some(n) = self.counted.get_mut(r) else {
            return;
        };
        *n += 1;
        if *n < s.games_per_round() || r + 1 >= s.rounds as usize {
            return;
        }
        let mut rounds = games.rounds.write().unwrap_or_else(|p| p.into_inner());
        if rounds.len() == r + 1 {
            let next = pair_round(&self.history);
            self.history.add_round(&next);
            rounds.push(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn swiss(bots: usize, rounds: u64, seeding: Seeding) -> Swiss {
        Swiss {
            bots,
            rounds,
            games_per_pairing: 2,
            seed: 7,
            seeding,
        }
    }

    /// Notes round `r` and plays its games, `result(a, b)` giving the
    /// half-points of `a` in each.
    fn play(h: &mut History, r: &Round, result: &dyn Fn(usize, usize) -> u64) {
        h.add_round(r);
        for &[a, b] in &r.pairs {
            for _ in 0..2 {
                h.add_game([a, b], result(a, b));
            }
        }
    }

    fn stronger_wins(a: usize, b: usize) -> u64 {
        if a < b {
            2
        } else {
            0
        }
    }

    #[test]
    fn shape_ids_and_defaults() {
        assert_eq!(Swiss::default_rounds(2), 1);
        assert_eq!(Swiss::default_rounds(3), 3);
        assert_eq!(Swiss::default_rounds(9), 6);
        assert_eq!(Swiss::default_rounds(16), 6);
        assert_eq!(Swiss::default_rounds(300), 11);
        assert_eq!(Swiss::max_rounds(4), 3);
        assert_eq!(Swiss::max_rounds(5), 5);
        let s = Swiss {
            games_per_pairing: 4,
            ..swiss(5, 3, Seeding::File)
        };
        assert_eq!(
            (s.pairs_per_round(), s.games_per_round(), s.total()),
            (2, 8, 24)
        );
        let r = Round {
            pairs: vec![[0, 2], [1, 3]],
            bye: Some(4),
            ..Round::default()
        };
        let games: Vec<Pairing> = (8..16).map(|id| s.pairing(&r, id)).collect();
        let players: Vec<[usize; 2]> = games.iter().map(|p| p.players).collect();
        assert_eq!(
            players,
            [
                [0, 2],
                [2, 0],
                [1, 3],
                [3, 1],
                [0, 2],
                [2, 0],
                [1, 3],
                [3, 1]
            ]
        );
        // Round 1 (0-based) of 2 couples per pairing: suite openings 2, 3.
        let rounds: Vec<u64> = games.iter().map(|p| p.round).collect();
        assert_eq!(rounds, [2, 2, 2, 2, 3, 3, 3, 3]);
        assert_eq!(games[0].opening_seed, games[1].opening_seed);
        assert_ne!(games[0].seed, games[1].seed);
        assert_eq!(s.round_of(15), 1);
        assert_eq!(s.round_of(16), 2);
    }

    #[test]
    fn round_one_pairs_top_half_against_bottom_half_of_the_seeding() {
        let s = swiss(8, 3, Seeding::File);
        let r = pair_round(&History::new(&s));
        assert_eq!(r.pairs, [[0, 4], [1, 5], [2, 6], [3, 7]]);
        assert_eq!((r.bye, r.rematches, r.greedy), (None, 0, false));
        // Odd: the last seed sits out, the rest pair as above.
        let s = swiss(7, 3, Seeding::File);
        let r = pair_round(&History::new(&s));
        assert_eq!(r.pairs, [[0, 3], [1, 4], [2, 5]]);
        assert_eq!(r.bye, Some(6));
        // Shuffled: a permutation decided by the seed alone.
        let s = swiss(8, 3, Seeding::Shuffle);
        let order = s.seeded_order();
        assert_eq!(order, s.seeded_order());
        assert_ne!(order, (0..8).collect::<Vec<_>>());
        let r = pair_round(&History::new(&s));
        assert_eq!(r.pairs[0], [order[0], order[4]]);
        let other = Swiss { seed: 8, ..s };
        assert_ne!(other.seeded_order(), order);
    }

    #[test]
    fn later_rounds_pair_within_score_groups_and_float_the_odd_one_down() {
        let s = swiss(8, 3, Seeding::File);
        let mut h = History::new(&s);
        let r1 = pair_round(&h);
        play(&mut h, &r1, &stronger_wins);
        // Winners 0 1 2 3 (100 %), losers 4 5 6 7 (0 %): each group top
        // half against bottom half.
        let r2 = pair_round(&h);
        assert_eq!(r2.pairs, [[0, 2], [1, 3], [4, 6], [5, 7]]);
        play(&mut h, &r2, &stronger_wins);
        // 0 1 at 100 %; 2 3 4 5 at 50 %; 6 7 at 0 %. 0-1 and 6-7 never met.
        let r3 = pair_round(&h);
        assert_eq!(r3.pairs, [[0, 1], [2, 4], [3, 5], [6, 7]]);
        assert_eq!(r3.rematches, 0);

        // An odd group: 3 bots at the top score; the lowest of them floats
        // down to meet the top of the next group.
        let s = swiss(6, 3, Seeding::File);
        let mut h = History::new(&s);
        let r1 = pair_round(&h);
        assert_eq!(r1.pairs, [[0, 3], [1, 4], [2, 5]]);
        play(&mut h, &r1, &|a, _| if a == 0 { 2 } else { 0 });
        // 100 %: 0 4 5; 0 %: 1 2 3. In the top group 0 meets 4 (g = 3,
        // m = 1), 5 floats down to meet 1, and 2 meets 3.
        let r2 = pair_round(&h);
        assert_eq!(r2.pairs, [[0, 4], [5, 1], [2, 3]]);
    }

    #[test]
    fn rematches_are_avoided_when_a_pairing_without_them_exists() {
        // Two groups of two whose Dutch pairing would repeat round 1.
        let s = swiss(4, 3, Seeding::File);
        let mut h = History::new(&s);
        let r1 = pair_round(&h);
        assert_eq!(r1.pairs, [[0, 2], [1, 3]]);
        play(&mut h, &r1, &stronger_wins);
        let r2 = pair_round(&h);
        assert_eq!(r2.pairs, [[0, 1], [2, 3]]);
        play(&mut h, &r2, &|_, _| 1);
        // 0 and 1 at 75 %, 2 and 3 at 25 %: 0-1 and 2-3 would be
        // rematches, and so would 0-2; the search goes on to 0-3, 1-2.
        let r3 = pair_round(&h);
        assert_eq!(r3.pairs, [[0, 3], [1, 2]]);
        assert_eq!((r3.rematches, r3.greedy), (0, false));

        // Many bots, many rounds, random results: never a rematch.
        for seed in 0..5 {
            let s = Swiss {
                seed,
                ..swiss(41, 11, Seeding::Shuffle)
            };
            let mut h = History::new(&s);
            let mut seen = HashSet::new();
            for round in 0..s.rounds {
                let r = pair_round(&h);
                assert_eq!((r.rematches, r.greedy), (0, false), "seed {seed}");
                for &[a, b] in &r.pairs {
                    assert!(seen.insert((a.min(b), a.max(b))));
                }
                let result =
                    move |a: usize, b: usize| seed::derive(seed, &[round, a as u64, b as u64]) % 3;
                play(&mut h, &r, &result);
            }
        }
    }

    #[test]
    fn a_forced_rematch_is_paired_greedily_and_counted() {
        // Three rounds used every pairing of four bots: a fourth round
        // cannot avoid repeating one.
        let s = swiss(4, 3, Seeding::File);
        let mut h = History::new(&s);
        let fixed = Round {
            pairs: vec![[0, 1], [2, 3]],
            ..Round::default()
        };
        h.add_round(&fixed);
        h.add_round(&Round {
            pairs: vec![[0, 2], [1, 3]],
            ..Round::default()
        });
        h.add_round(&Round {
            pairs: vec![[0, 3], [1, 2]],
            ..Round::default()
        });
        // All three possible pairings used: a fourth round must repeat.
        let r = pair_round(&h);
        assert!(r.greedy);
        assert_eq!(r.rematches, 2);
        assert_eq!(r.pairs.len(), 2);
        let bots: HashSet<usize> = r.pairs.iter().flatten().copied().collect();
        assert_eq!(bots.len(), 4);
    }

    #[test]
    fn byes_go_to_the_lowest_ranked_bot_without_one_and_rotate() {
        let s = swiss(5, 5, Seeding::File);
        let mut h = History::new(&s);
        let mut byes = Vec::new();
        for _ in 0..s.rounds {
            let r = pair_round(&h);
            let bye = r.bye.expect("odd: a bye");
            // The lowest-ranked bot that has not had one.
            let ranking = h.ranking();
            let expected = ranking.iter().rev().find(|&&b| h.byes(b) == 0);
            assert_eq!(Some(&bye), expected);
            byes.push(bye);
            play(&mut h, &r, &stronger_wins);
        }
        let distinct: HashSet<usize> = byes.iter().copied().collect();
        assert_eq!(distinct.len(), 5, "{byes:?}");
        assert_eq!(byes[0], 4);
    }

    #[test]
    fn pairing_is_a_function_of_the_results_alone() {
        let run = || {
            let s = swiss(13, 6, Seeding::Shuffle);
            let mut h = History::new(&s);
            let mut rounds = Vec::new();
            for round in 0..s.rounds {
                let r = pair_round(&h);
                let result =
                    move |a: usize, b: usize| seed::derive(3, &[round, a as u64, b as u64]) % 3;
                play(&mut h, &r, &result);
                rounds.push(r);
            }
            rounds
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn a_large_class_pairs_quickly_without_rematches() {
        let s = swiss(301, 11, Seeding::Shuffle);
        let mut h = History::new(&s);
        let start = std::time::Instant::now();
        for round in 0..s.rounds {
            let r = pair_round(&h);
            assert_eq!((r.rematches, r.greedy, r.pairs.len()), (0, false, 150));
            // Stronger (lower index) usually wins; some draws.
            let result = move |a: usize, b: usize| match seed::derive(1, &[round, a as u64]) % 4 {
                0 => 1,
                _ => stronger_wins(a, b),
            };
            play(&mut h, &r, &result);
        }
        assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
    }

    #[test]
    fn two_three_and_four_bots() {
        // Two bots: one round, one pairing, nothing else possible.
        let s = swiss(2, Swiss::max_rounds(2), Seeding::File);
        assert_eq!(s.rounds, 1);
        let r = pair_round(&History::new(&s));
        assert_eq!((r.pairs.clone(), r.bye), (vec![[0, 1]], None));

        // Three bots, three rounds: each sits out once, each pair meets
        // once, whatever the results.
        for first in [0, 1, 2] {
            let s = swiss(3, 3, Seeding::File);
            let mut h = History::new(&s);
            let mut met = HashSet::new();
            let mut byes = Vec::new();
            for _ in 0..3 {
                let r = pair_round(&h);
                assert_eq!((r.pairs.len(), r.rematches, r.greedy), (1, 0, false));
                let [a, b] = r.pairs[0];
                assert!(met.insert((a.min(b), a.max(b))));
                byes.push(r.bye.expect("a bye"));
                play(&mut h, &r, &|a, _| if a == first { 2 } else { 0 });
            }
            byes.sort_unstable();
            assert_eq!(byes, [0, 1, 2]);
        }

        // Four bots, three rounds: a round-robin, found without a rematch
        // whatever the results.
        for seed in 0..20 {
            let s = Swiss {
                seed,
                ..swiss(4, 3, Seeding::Shuffle)
            };
            let mut h = History::new(&s);
            let mut met = HashSet::new();
            for round in 0..3 {
                let r = pair_round(&h);
                assert_eq!((r.pairs.len(), r.bye, r.rematches), (2, None, 0));
                for &[a, b] in &r.pairs {
                    assert!(met.insert((a.min(b), a.max(b))), "seed {seed}");
                }
                let result =
                    move |a: usize, b: usize| seed::derive(seed, &[round, a as u64, b as u64]) % 3;
                play(&mut h, &r, &result);
            }
            assert_eq!(met.len(), 6);
        }
    }

    #[test]
    fn rounds_are_checked_against_the_number_of_bots() {
        assert_eq!(Swiss::check_rounds(8, None), Ok(5));
        assert_eq!(Swiss::check_rounds(8, Some(7)), Ok(7));
        assert!(Swiss::check_rounds(8, Some(8))
            .unwrap_err()
            .contains("at most 7"));
        assert_eq!(Swiss::check_rounds(7, Some(7)), Ok(7));
        assert!(Swiss::check_rounds(7, Some(0))
            .unwrap_err()
            .contains("at least 1"));
        assert!(Swiss::check_rounds(2, Some(2)).is_err());
    }

    fn record(p: &Pairing, first_wins: bool) -> GameRecord {
        let winner = if first_wins { Some(Seat::One) } else { None };
        let mut r =
            crate::play::record::sample(crate::game::GameKind::TicTacToe, ["a", "b"], winner, &[]);
        r.id = p.id;
        r
    }

    #[test]
    fn the_next_round_is_paired_when_the_last_game_of_a_round_is_counted() {
        let s = Swiss {
            games_per_pairing: 2,
            ..swiss(5, 3, Seeding::File)
        };
        let (games, mut pairer) = Pairer::start(&s);
        // Round 1 (ids 0..4) is known, round 2 (4..8) not yet.
        assert!((0..4).all(|id| games.pairing(id).is_some()));
        assert_eq!(games.pairing(4), None);
        assert_eq!(games.pairing(s.total()), None);
        for id in 0..3 {
            let p = games.pairing(id).expect("paired");
            pairer.add(&games, &record(&p, true));
            assert_eq!(games.pairing(4), None, "after game {id}");
        }
        let last = games.pairing(3).expect("paired");
        pairer.add(&games, &record(&last, false));
        let r2 = games.pairing(4).expect("round 2 paired");
        assert_eq!(games.rounds().len(), 2);
        // The same as pairing the round directly from the same results.
        let mut h = History::new(&s);
        let r1 = pair_round(&h);
        h.add_round(&r1);
        for id in 0..4 {
            let p = s.pairing(&r1, id);
            h.add_game(p.players, if id < 3 { 2 } else { 1 });
        }
        let expected = pair_round(&h);
        assert_eq!(games.rounds()[1], expected);
        assert_eq!(r2, s.pairing(&expected, 4));
        // Counting the last round pairs nothing more.
        for id in 4..s.total() {
            if id == 8 {
                assert_eq!(games.rounds().len(), 3);
            }
            let p = games.pairing(id).expect("paired");
            pairer.add(&games, &record(&p, true));
        }
        assert_eq!(games.rounds().len(), 3);
    }
}
