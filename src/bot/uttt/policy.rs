//! A learned move prior: a linear softmax policy over one-ply move
//! features, fitted to the root visit shares of `optimal`'s own self-play
//! searches (the `#[ignore]`d `fit_policy_weights` below refits it). Where
//! `prior.rs` sums six hand-set weights, this one weighs more features,
//! macro-board ones among them, by maximum likelihood; a move's prior is its
//! logit.

use crate::game::grid::FULL;
use crate::game::uttt::{line, threats, Uttt, UtttMove};
use crate::game::Game;

/// How many features a move has.
pub const FEATURES: usize = 16;

/// The policy's weights, one per feature (see [`move_features`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolicyWeights(pub [f32; FEATURES]);

impl PolicyWeights {
    /// The weights `optimal` uses, fitted by `fit_policy_weights`.
    pub const DEFAULT: PolicyWeights = PolicyWeights([
        1.7659, 0.9951, 0.4701, -0.7830, 0.2250, -2.0119, 0.8130, -0.0315, -0.6819, -0.1684,
        -0.6146, -0.2817, 0.7327, 1.0952, 0.5433, 0.9513,
    ]);
}

/// The features of a move `mv` in `pos` (whose mover makes it), each 0 or
/// 1 unless said otherwise:
///
/// 0. it wins its local board;
/// 1. it takes a cell where the opponent would complete a line (and does
///    not win the board);
/// 2. it makes a new two-in-a-row with an empty third cell (the number of
///    new ones, not winning the board);
/// 3. it sends the opponent to a closed board: a free choice;
/// 4. it sends the opponent to a board it can win at once (not a game win);
/// 5. ... where winning wins the opponent the game;
/// 6. the board it wins is one the opponent needs for a macro line;
/// 7. the board it wins gives the mover a new macro line with its third
///    board open;
/// 8. it sends the opponent (no free choice, nothing to win at once) to a
///    board the opponent needs for a macro line;
/// 9. it sends the opponent to a board where the mover could complete a
///    line (the opponent has to deal with it);
/// 10. the cell is the centre; 11. a corner;
/// 12. it plays on a board the mover needs for a macro line (not winning
///     it);
/// 13. it plays on a board the opponent needs for a macro line (not
///     winning it);
/// 14. the opponent's marks on the board it is sent to, / 9;
/// 15. the mover's marks on the board the opponent is sent to, / 9.
pub(super) fn move_features(pos: &Uttt, mv: UtttMove) -> [f32; FEATURES] {
    let me = pos.to_move();
    let them = me.other();
    let b = mv.board() as usize;
    let c = mv.cell() as usize;
    let bit = 1u16 << c;
    let mine = pos.cells(me, b);
    let theirs = pos.cells(them, b);
    let after = mine | bit;
    let empty_after = pos.empty(b) & !bit;
    let my_won = pos.won(me);
    let their_won = pos.won(them);
    let mut f = [0f32; FEATURES];
    let wins = line(after);
    let my_macro = threats(my_won);
    let their_macro = threats(their_won);
    if wins {
        f[0] = 1.0;
        if their_macro & (1 << b) != 0 {
            f[6] = 1.0;
        }
        let open = FULL & !pos.closed() & !(1 << b);
        if threats(my_won | 1 << b) & open & !my_macro != 0 {
            f[7] = 1.0;
        }
    } else {
        if threats(theirs) & bit != 0 {
            f[1] = 1.0;
        }
        let before = (threats(mine) & pos.empty(b)).count_ones();
        let now = (threats(after) & empty_after).count_ones();
        f[2] = now.saturating_sub(before) as f32;
        if my_macro & (1 << b) != 0 {
            f[12] = 1.0;
        }
        if their_macro & (1 << b) != 0 {
            f[13] = 1.0;
        }
    }
    // The board the opponent is sent to, as the move leaves it.
    let d = c;
    let (d_closed, d_theirs, d_mine, d_empty) = if d == b {
        (wins || (after | theirs) == FULL, theirs, after, empty_after)
    } else {
        (
            pos.closed() & (1 << d) != 0,
            pos.cells(them, d),
            pos.cells(me, d),
            pos.empty(d),
        )
    };
    if d_closed {
        f[3] = 1.0;
    } else {
        if threats(d_theirs) & d_empty != 0 {
            if line(their_won | 1 << d) {
                f[5] = 1.0;
            } else {
                f[4] = 1.0;
            }
        } else if their_macro & (1 << d) != 0 {
            f[8] = 1.0;
        }
        if threats(d_mine) & d_empty != 0 {
            f[9] = 1.0;
        }
        f[14] = d_theirs.count_ones() as f32 / 9.0;
        f[15] = d_mine.count_ones() as f32 / 9.0;
    }
    if c == 4 {
        f[10] = 1.0;
    } else if c.is_multiple_of(2) {
        f[11] = 1.0;
    }
    f
}

/// Fills `out[i]` with the learned prior (the logit under `w`) of
/// `moves[i]` in `pos`.
pub(super) fn learned_priors(pos: &Uttt, moves: &[UtttMove], w: &PolicyWeights, out: &mut [f32]) {
    for (&mv, slot) in moves.iter().zip(out.iter_mut()) {
        let f = move_features(pos, mv);
        *slot = f.iter().zip(w.0.iter()).map(|(a, w)| a * w).sum();
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // matrix code reads best with indices
mod tests {
    use super::*;
    use crate::bot::uttt::eval::tests::{env, newton_step, self_play_start};
    use crate::bot::uttt::prior::{priors, PriorWeights};
    use crate::bot::uttt::SearchConfig;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn features_of_a_board_win_that_blocks_a_macro_line() {
        // X to move in board 4 (X holds 0 and 1 there); O has won boards 3
        // and 5, so board 4 completes O's macro row: winning it blocks.
        let text = [
            ".........",
            ".........",
            ".........",
            "OOO......",
            "XX.......",
            "...OOO...",
            "X........",
            "X...X....",
            "........X",
        ]
        .concat()
            + "/4/...O.O...";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let f = move_features(&p, UtttMove::new(4, 2).expect("a move"));
        assert_eq!(f[0], 1.0, "wins the board");
        assert_eq!(f[6], 1.0, "blocks O's macro line");
        assert_eq!(f[11], 1.0, "a corner");
        // 4-4 neither wins nor blocks; it plays on a board O needs and
        // sends O back to board 4.
        let f = move_features(&p, UtttMove::new(4, 4).expect("a move"));
        assert_eq!(f[0], 0.0);
        assert_eq!(f[13], 1.0);
        assert_eq!(f[10], 1.0);
        assert_eq!(f[2], 2.0, "makes 0-4-8 and 1-4-7");
        // 4-7 sends O to board 7, where O can complete no line but X
        // can (4-6-8... X holds 0 and 4 there: 8 completes 0-4-8).
        let f = move_features(&p, UtttMove::new(4, 7).expect("a move"));
        assert_eq!(f[9], 1.0);
        assert_eq!((f[4], f[5]), (0.0, 0.0));
    }

    #[test]
    fn features_of_sends() {
        let p = crate::bot::uttt::prior::tests::sends_position();
        let f = move_features(&p, UtttMove::new(4, 0).expect("a move"));
        assert_eq!((f[3], f[4], f[5]), (0.0, 1.0, 0.0));
        assert!((f[14] - 2.0 / 9.0).abs() < 1e-6, "two O marks on board 0");
        let f = move_features(&p, UtttMove::new(4, 8).expect("a move"));
        assert_eq!(f[3], 1.0);
        assert_eq!((f[4], f[14], f[15]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn learned_priors_are_the_weighted_features() {
        let p = Uttt::new();
        let moves = p.legal_moves();
        let mut out = [0f32; 81];
        let w = PolicyWeights::DEFAULT;
        learned_priors(&p, &moves, &w, &mut out);
        for (mv, &h) in moves.iter().zip(out.iter()) {
            let f = move_features(&p, *mv);
            let want: f32 = f.iter().zip(w.0.iter()).map(|(a, w)| a * w).sum();
            assert_eq!(h, want);
        }
    }

    /// One position: each move's features, its share of the root visits
    /// and its hand-set prior.
    type Sample = (Vec<[f32; FEATURES]>, Vec<f64>, Vec<f32>);

    /// Softmax of `logits`.
    fn softmax(logits: &[f64]) -> Vec<f64> {
        let top = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = logits.iter().map(|z| (z - top).exp()).collect();
        let sum: f64 = e.iter().sum();
        e.iter().map(|x| x / sum).collect()
    }

    /// Mean cross-entropy of the softmax of `logit(position, move index)`
    /// against the visit shares.
    fn cross_entropy(data: &[Sample], logit: impl Fn(&Sample, usize) -> f64) -> f64 {
        let mut total = 0.0;
        for d in data {
            let z: Vec<f64> = (0..d.1.len()).map(|j| logit(d, j)).collect();
            let p = softmax(&z);
            total -=
                d.1.iter()
                    .zip(&p)
                    .map(|(t, q)| t * q.max(1e-12).ln())
                    .sum::<f64>();
        }
        total / data.len() as f64
    }

    /// Fits [`PolicyWeights::DEFAULT`] to the root visit shares of self-play searches and
    /// prints them with the held-out cross-entropy of the fit, of the
    /// hand-set prior (as logits, at its best scale) and of uniform play.
    /// Environment: `FIT_GAMES` (default 200), `FIT_ITERS` (iterations a
    /// move, default 20000), `FIT_SEED` (default 4040) and `FIT_LEARNED=1`
    /// (the self-play engines use the current learned prior, for a second
    /// round of fitting).
    #[test]
    #[ignore = "a tool: fits the learned policy's weights (minutes)"]
    fn fit_policy_weights() {
        let games = env("FIT_GAMES", 200);
        let iters = env("FIT_ITERS", 20_000) as u32;
        let mut rng = SmallRng::seed_from_u64(env("FIT_SEED", 4040) as u64);
        let learned = env("FIT_LEARNED", 0) != 0;
        // (game, features per move, visit shares, hand-set prior per move)
        let mut samples = Vec::new();
        for g in 0..games {
            let cfg = SearchConfig {
                iterations: iters,
                learned_prior: learned,
                ..SearchConfig::optimal()
            };
            let (mut engines, mut pos) = self_play_start(cfg, g as u64, &mut rng);
            while !pos.is_over() {
                let engine = &mut engines[pos.to_move().index()];
                let Some(mv) = engine.search(&pos) else {
                    break;
                };
                let visits = engine.root_visits();
                let total: u32 = visits.iter().map(|v| v.1).sum();
                if visits.len() >= 2 && engine.stats().iterations >= iters / 2 && total > 0 {
                    let moves: Vec<UtttMove> = visits.iter().map(|v| v.0).collect();
                    let feats: Vec<[f32; FEATURES]> =
                        moves.iter().map(|&m| move_features(&pos, m)).collect();
                    let shares: Vec<f64> =
                        visits.iter().map(|v| v.1 as f64 / total as f64).collect();
                    let mut hand = vec![0f32; moves.len()];
                    priors(&pos, &moves, &PriorWeights::DEFAULT, &mut hand);
                    samples.push((g, (feats, shares, hand)));
                }
                pos.play_unchecked(mv);
            }
            if g % 20 == 19 {
                eprintln!("{} games, {} positions", g + 1, samples.len());
            }
        }
        let split = games * 4 / 5;
        let train: Vec<_> = samples
            .iter()
            .filter(|s| s.0 < split)
            .map(|s| s.1.clone())
            .collect();
        let test: Vec<_> = samples
            .iter()
            .filter(|s| s.0 >= split)
            .map(|s| s.1.clone())
            .collect();
        let mut w = vec![0f64; FEATURES];
        let lambda = 1.0;
        for step in 0..40 {
            let mut grad = vec![0f64; FEATURES];
            let mut hess = vec![vec![0f64; FEATURES]; FEATURES];
            for (feats, shares, _) in &train {
                let z: Vec<f64> = feats
                    .iter()
                    .map(|f| f.iter().zip(&w).map(|(&a, &b)| a as f64 * b).sum())
                    .collect();
                let p = softmax(&z);
                let mut mean = [0f64; FEATURES];
                for (f, &q) in feats.iter().zip(&p) {
                    for i in 0..FEATURES {
                        mean[i] += q * f[i] as f64;
                    }
                }
                for ((f, &q), &t) in feats.iter().zip(&p).zip(shares) {
                    for i in 0..FEATURES {
                        grad[i] += (q - t) * f[i] as f64;
                        for k in 0..FEATURES {
                            hess[i][k] += q * f[i] as f64 * f[k] as f64;
                        }
                    }
                }
                for i in 0..FEATURES {
                    for k in 0..FEATURES {
                        hess[i][k] -= mean[i] * mean[k];
                    }
                }
            }
            if newton_step(&mut w, grad, hess, lambda) < 1e-9 {
                eprintln!("converged after {} Newton steps", step + 1);
                break;
            }
        }
        let fitted = cross_entropy(&test, |d, j| {
            d.0[j].iter().zip(&w).map(|(&a, &b)| a as f64 * b).sum()
        });
        let hand = [0.5, 1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&s| (s, cross_entropy(&test, |d, j| s * d.2[j] as f64)))
            .fold((0.0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let uniform = cross_entropy(&test, |_, _| 0.0);
        let current = cross_entropy(&test, |d, j| {
            d.0[j]
                .iter()
                .zip(&PolicyWeights::DEFAULT.0)
                .map(|(&a, &b)| (a * b) as f64)
                .sum()
        });
        println!(
            "{} training positions, {} held out; held-out cross-entropy: fitted {fitted:.4}, \
             current weights {current:.4}, hand-set prior {:.4} (scale {}), uniform {uniform:.4}",
            train.len(),
            test.len(),
            hand.1,
            hand.0
        );
        let list: Vec<String> = w.iter().map(|x| format!("{x:.4}")).collect();
        println!("UTTT_POLICY_WEIGHTS={}", list.join(","));
    }
}
