//! Matchmaking: which pairs of bots play in a cycle (docs/league.md).
//!
//! - Every pair plays two games from one opening, seats swapped.
//! - The ladder's bots, sorted by rating, are joined by a `degree`-regular
//!   graph of near neighbours: the "zigzag" cycle (ranks 0, 2, 4, ..., then
//!   the odd ranks back down) with each bot joined to the `degree / 2` next
//!   on it, so that every bot plays the same number of pairs per cycle and
//!   every pair is at most `degree` places apart. A small ladder plays a
//!   round robin.
//! - A version still being placed also plays `placement_pairs` more pairs
//!   against opponents spread evenly over the whole ladder, first.
//!
//! The graph does not depend on how uncertain a rating is, so a bot that
//! keeps forfeiting is not picked more often. Everything random comes from
//! the cycle's seed: the same database and seed give the same pairs.

use rand::Rng;

/// One bot as matchmaking sees it.
#[derive(Clone, Debug)]
pub struct Seat {
    /// The entry.
    pub entry: i64,
    /// Its rating, when it has one.
    pub rating: Option<f64>,
    /// Whether it is still being placed.
    pub placing: bool,
}

/// The pairs of a cycle, placement pairs first; each pair is
/// `[entry, entry]`, unordered (both play each seat once).
pub fn cycle_pairs(
    bots: &[Seat],
    degree: usize,
    placement_pairs: usize,
    seed: u64,
) -> Vec<[i64; 2]> {
    let n = bots.len();
    if n < 2 {
        return Vec::new();
    }
    let mut rng = crate::seed::rng(seed);
    // The ladder: by rating, unrated in the middle (at 0 after the pin), ties
    // in a seeded order.
    let mut order: Vec<(f64, u64, usize)> = bots
        .iter()
        .enumerate()
        .map(|(i, b)| (b.rating.unwrap_or(0.0), rng.random::<u64>(), i))
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let ladder: Vec<usize> = order.iter().map(|o| o.2).collect();
    let mut pairs: Vec<[usize; 2]> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |a: usize, b: usize, pairs: &mut Vec<[usize; 2]>| {
        if a != b && seen.insert((a.min(b), a.max(b))) {
            pairs.push([a, b]);
        }
    };
    // Placement: opponents at evenly spaced places of the ladder.
    let mut placement = Vec::new();
    for (rank, &i) in ladder.iter().enumerate() {
        if !bots[i].placing {
            continue;
        }
        let k = placement_pairs.min(n - 1);
        let offset: f64 = rng.random();
        for j in 0..k {
            let mut place = (((j as f64 + offset) * n as f64) / k as f64) as usize % n;
            if place == rank {
                place = (place + 1) % n;
            }
            add(i, ladder[place], &mut placement);
        }
    }
    // The regular graph.
    let mut regular = Vec::new();
    if n <= degree + 1 {
        for a in 0..n {
            for b in a + 1..n {
                add(ladder[a], ladder[b], &mut regular);
            }
        }
    } else {
        let zig: Vec<usize> = (0..n)
            .step_by(2)
            .chain((1..n).step_by(2).rev())
            .map(|r| ladder[r])
            .collect();
        for p in 0..n {
            for step in 1..=degree / 2 {
                add(zig[p], zig[(p + step) % n], &mut regular);
            }
        }
    }
    pairs.extend(placement);
    pairs.extend(regular);
    pairs
        .into_iter()
        .map(|[a, b]| [bots[a].entry, bots[b].entry])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder(n: usize) -> Vec<Seat> {
        (0..n)
            .map(|i| Seat {
                entry: i as i64 + 100,
                rating: Some(1000.0 - 10.0 * i as f64),
                placing: false,
            })
            .collect()
    }

    #[test]
    fn every_bot_gets_the_same_number_of_near_neighbours() {
        for n in [6, 7, 10, 25, 50] {
            for degree in [2, 4, 6] {
                let pairs = cycle_pairs(&ladder(n), degree, 4, 9);
                let mut count = vec![0; n];
                for [a, b] in &pairs {
                    let (a, b) = ((a - 100) as usize, (b - 100) as usize);
                    count[a] += 1;
                    count[b] += 1;
                    assert!(a.abs_diff(b) <= degree, "n {n}: {a} vs {b}");
                }
                let want = if n <= degree + 1 { n - 1 } else { degree };
                assert!(
                    count.iter().all(|&c| c == want),
                    "n {n} d {degree}: {count:?}"
                );
            }
        }
    }

    #[test]
    fn placement_spreads_over_the_ladder_and_comes_first() {
        let mut bots = ladder(40);
        bots[20].placing = true;
        bots[20].rating = None;
        let pairs = cycle_pairs(&bots, 4, 4, 3);
        let first: Vec<i64> = pairs[..4]
            .iter()
            .map(|p| if p[0] == 120 { p[1] } else { p[0] })
            .collect();
        assert!(pairs[..4].iter().all(|p| p.contains(&120)));
        let (lo, hi) = (first.iter().min().unwrap(), first.iter().max().unwrap());
        assert!(hi - lo >= 20, "{first:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_pairs() {
        let mut bots = ladder(12);
        bots[3].rating = bots[4].rating;
        bots[7].placing = true;
        assert_eq!(cycle_pairs(&bots, 4, 4, 5), cycle_pairs(&bots, 4, 4, 5));
    }
}
