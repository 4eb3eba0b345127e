//! The engine against positions with a known forced win: every line of
//! `forced_wins.txt` is a position and the number of plies within which the
//! player to move wins against any defence (1, 3, 5, 7 or 9: a win in 1 to 5
//! moves), found by the exhaustive search below from the ends of greedy
//! self-play games (`cargo test --release -- --ignored print_forced_wins`
//! prints a fresh set). The engine must prove the win and play a move that
//! keeps it (within two more moves of the fastest: the solver proves wins,
//! it does not look for the shortest).

use super::{Greedy, Mcts, SearchConfig};
use crate::bot::Bot;
use crate::game::uttt::{Uttt, UtttMove};
use crate::game::{Game, Outcome};

/// Whether the player to move in `pos` wins within `plies` plies against any
/// defence; `None` when the search would visit more than `budget` nodes.
fn wins_within(pos: &Uttt, plies: u32, budget: &mut u64) -> Option<bool> {
    if plies == 0 {
        return Some(false);
    }
    let me = pos.to_move();
    let moves = pos.legal_moves();
    for &mv in &moves {
        let mut next = *pos;
        next.play_unchecked(mv);
        if next.outcome() == Some(Outcome::Win(me)) {
            return Some(true);
        }
    }
    if plies < 3 {
        return Some(false);
    }
    for &mv in &moves {
        let mut next = *pos;
        next.play_unchecked(mv);
        if next.outcome().is_none() && loses_within(&next, plies - 1, budget)? {
            return Some(true);
        }
    }
    Some(false)
}

/// Whether the player to move in `pos` (unfinished) loses within `plies`
/// plies whatever it plays.
fn loses_within(pos: &Uttt, plies: u32, budget: &mut u64) -> Option<bool> {
    *budget = budget.checked_sub(1)?;
    for mv in pos.legal_moves() {
        let mut next = *pos;
        next.play_unchecked(mv);
        if next.outcome().is_some() || !wins_within(&next, plies - 1, budget)? {
            return Some(false);
        }
    }
    Some(true)
}

/// The exact distance (odd plies, at most `max`) of the mover's forced win,
/// if it has one within `max`.
fn win_distance(pos: &Uttt, max: u32, budget: &mut u64) -> Option<u32> {
    let mut d = 1;
    while d <= max {
        if wins_within(pos, d, budget)? {
            return Some(d);
        }
        d += 2;
    }
    None
}

fn positions() -> Vec<(Uttt, u32)> {
    include_str!("forced_wins.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (text, plies) = l.rsplit_once(' ').unwrap_or_else(|| panic!("bad line {l}"));
            let pos: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            (
                pos,
                plies.parse().unwrap_or_else(|_| panic!("bad line {l}")),
            )
        })
        .collect()
}

#[test]
fn the_positions_have_the_stated_distance() {
    let list = positions();
    assert!(list.len() >= 30, "{} positions", list.len());
    for (pos, plies) in list {
        let mut budget = 50_000_000;
        assert_eq!(win_distance(&pos, plies, &mut budget), Some(plies), "{pos}");
    }
}

#[test]
fn optimal_keeps_every_forced_win() {
    // The defaults, and `uct`'s search with the solver on.
    let configs = [
        SearchConfig::optimal(),
        SearchConfig {
            solver: true,
            ..SearchConfig::plain_uct()
        },
    ];
    for base in configs {
        for (i, (pos, plies)) in positions().into_iter().enumerate() {
            let cfg = SearchConfig {
                // The search stops once the root is proven: the hardest of
                // these takes about 11 000 iterations.
                iterations: 50_000,
                ..base
            };
            let mut m = Mcts::new(cfg, i as u64);
            let mv = m.search(&pos).expect("a move");
            assert!(pos.is_legal(mv), "{pos}: {mv}");
            let mut next = pos;
            next.play_unchecked(mv);
            let me = pos.to_move();
            // The solver proves wins, not the shortest: a win two moves
            // longer than the fastest one is kept too.
            let mut budget = 50_000_000;
            let kept = next.outcome() == Some(Outcome::Win(me))
                || loses_within(&next, plies + 3, &mut budget) == Some(true);
            assert!(
                kept,
                "{pos} (win in {plies} plies, networks {}): {mv} lets it go",
                base.networks
            );
            assert!(m.stats().proven, "{pos}: the win was not proven");
        }
    }
}

/// Prints forced-win positions from the ends of greedy self-play games, up
/// to 4 per distance and side to move.
#[test]
#[ignore]
fn print_forced_wins() {
    let mut found = [[0u32; 2]; 5];
    let mut game = 0u64;
    while found.iter().flatten().any(|&n| n < 4) && game < 5000 {
        game += 1;
        let mut a = Greedy::bot(game);
        let mut b = Greedy::bot(game + 1);
        let mut p = Uttt::new();
        let mut line = vec![p];
        while !p.is_over() {
            let mv: UtttMove = if p.ply().is_multiple_of(2) {
                a.select_move(&p)
            } else {
                b.select_move(&p)
            }
            .expect("a move");
            p.play_unchecked(mv);
            line.push(p);
        }
        // From the end backwards: late positions have few moves.
        for pos in line.iter().rev().skip(1).take(14) {
            let mut budget = 2_000_000;
            if let Some(d) = win_distance(pos, 9, &mut budget) {
                let slot = &mut found[(d / 2) as usize][pos.to_move().index()];
                if *slot < 4 {
                    *slot += 1;
                    println!("{pos} {d}");
                }
            }
        }
    }
}

#[test]
fn a_timed_search_stops_once_the_win_is_proven() {
    let (pos, _) = positions()
        .into_iter()
        .find(|(_, plies)| *plies == 3)
        .expect("a win in 3 plies");
    let cfg = SearchConfig {
        iterations: u32::MAX,
        time: Some(std::time::Duration::from_millis(2000)),
        ..SearchConfig::optimal()
    };
    let mut m = Mcts::new(cfg, 1);
    assert!(m.search(&pos).is_some());
    let s = m.stats();
    assert!(s.proven, "{s:?}");
    assert!(s.elapsed < std::time::Duration::from_millis(500), "{s:?}");
}
