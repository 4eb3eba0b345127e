//! Default play, pinned: what `optimal` and `uct` play at their defaults
//! with a fixed iteration budget, as fingerprints (a hash of whole seeded
//! games, and the moves chosen in a few positions). A change that is meant
//! to keep play (a speed change, a cleanup, a deletion of a lever that is
//! off by default) must keep them. A change that is meant to change play
//! records them again, once, in the commit that changes it.

use super::*;

/// Makes a built-in bot by name, as the resolver does for users.
fn bot(spec: &str, seed: u64) -> Box<dyn Bot<Uttt>> {
    crate::bot::BuiltinSpec::parse(spec)
        .prepare::<Uttt>()
        .expect("a built-in bot")
        .make::<Uttt>(seed)
        .expect("a bot")
}

/// FNV-1a's step over 64-bit words: the same on every platform.
fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3)
}

/// A whole game between `a` (first) and `b`, seeded by `seed` and
/// `seed + 1`, from the position after `opening` random plies drawn
/// from `seed`: its length and the hash of its moves.
fn game(a: &str, b: &str, seed: u64, opening: usize) -> (usize, u64) {
    let mut rng = crate::seed::rng(seed);
    let mut p = Uttt::new();
    for _ in 0..opening {
        if let Some(mv) = p.random_move(&mut rng) {
            p.play_unchecked(mv);
        }
    }
    let mut bots = [bot(a, seed), bot(b, seed + 1)];
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut plies = 0;
    while !p.is_over() {
        let mv = bots[plies % 2].select_move(&p).expect("a move");
        h = mix(h, u64::from(mv.board() * 9 + mv.cell()));
        p.play_unchecked(mv);
        plies += 1;
    }
    (plies, h)
}

/// Positions reached by `plies` random plies from `seed`.
fn position(seed: u64, plies: usize) -> Uttt {
    let mut rng = crate::seed::rng(seed);
    let mut p = Uttt::new();
    for _ in 0..plies {
        match p.random_move(&mut rng) {
            Some(mv) if !p.is_over() => p.play_unchecked(mv),
            _ => break,
        }
    }
    p
}

/// The move `spec` chooses, seeded by 1, in each of the test positions.
fn choices(spec: &str) -> Vec<String> {
    [(0, 0), (1, 9), (2, 17), (3, 25), (4, 33), (5, 41)]
        .iter()
        .map(|&(seed, plies)| {
            let p = position(seed, plies);
            bot(spec, 1)
                .select_move(&p)
                .map(|mv| mv.to_string())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn optimal_plays_as_pinned() {
    let games = |spec: &str| -> Vec<(usize, u64)> {
        [(1, 0), (2, 2), (3, 4)]
            .iter()
            .map(|&(seed, opening)| game(spec, spec, seed, opening))
            .collect()
    };
    let (varied, fixed) = (
        games("optimal:iters=300"),
        games("optimal:iters=300,vary=0"),
    );
    let moves = choices("optimal:iters=3000");
    let fixed_moves = choices("optimal:iters=3000,vary=0");
    println!("optimal games {varied:?}\nwithout variety {fixed:?}\noptimal moves {moves:?}");
    assert_eq!(varied, OPTIMAL_GAMES);
    assert_eq!(moves, OPTIMAL_MOVES);
    // Without the variety of the first plies (issue 65), the games and
    // moves of before it.
    assert_eq!(fixed, FIXED_GAMES);
    assert_eq!(fixed_moves, FIXED_MOVES);
}

#[test]
fn uct_plays_as_pinned() {
    let games: Vec<(usize, u64)> = [(1, 0), (2, 2), (3, 4)]
        .iter()
        .map(|&(seed, opening)| game("uct:iters=500", "uct:iters=500", seed, opening))
        .collect();
    let mixed = game("optimal:iters=200", "uct:iters=2000", 4, 2);
    let fixed_mixed = game("optimal:iters=200,vary=0", "uct:iters=2000", 4, 2);
    let moves = choices("uct:iters=3000");
    println!("uct games {games:?}\nmixed game {mixed:?}\nuct moves {moves:?}");
    assert_eq!(games, UCT_GAMES);
    assert_eq!(mixed, MIXED_GAME);
    assert_eq!(fixed_mixed, FIXED_MIXED_GAME);
    assert_eq!(moves, UCT_MOVES);
}

const OPTIMAL_GAMES: [(usize, u64); 3] = [
    (43, 14920738663346713971),
    (48, 15182949670414640347),
    (43, 13143802433920684316),
];
const OPTIMAL_MOVES: [&str; 6] = ["4 2", "7 7", "2 2", "3 0", "5 6", "2 8"];
const FIXED_GAMES: [(usize, u64); 3] = [
    (41, 12029583920942090625),
    (45, 8176262173377920904),
    (43, 104468984774716173),
];
const FIXED_MOVES: [&str; 6] = ["4 6", "7 7", "2 2", "3 0", "5 6", "2 8"];
const FIXED_MIXED_GAME: (usize, u64) = (33, 17250805018188841849);
const UCT_GAMES: [(usize, u64); 3] = [
    (48, 2583219110491059055),
    (50, 7749362795893375815),
    (48, 16256308605127472395),
];
const MIXED_GAME: (usize, u64) = (39, 17795737223707745191);
const UCT_MOVES: [&str; 6] = ["2 1", "7 8", "2 2", "3 6", "2 2", "2 8"];
