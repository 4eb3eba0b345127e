//! The evaluation of an unfinished position that scores a playout cut off
//! early (`SearchConfig::cutoff_plies`): a logistic model over cheap
//! features of the position, with weights fitted by logistic regression.
//!
//! How the weights were made (`fit_evaluation_weights` below, an ignored
//! test: `cargo test --release --lib -- --ignored fit_evaluation_weights
//! --nocapture` prints them): positions from `optimal` self-play games
//! (2000 iterations a move, 2 random opening plies), each advanced by 0 to
//! 20 informed playout plies, as a cut-off playout would reach them; each
//! labelled with the mean of 64 informed playouts to the end from it (X's
//! points); weights fitted by Newton's method on the cross-entropy with a
//! small L2 penalty, the last fifth of the games held out. Held-out
//! cross-entropy against those labels: 0.642 for the fit, 0.919 for the
//! macro-line evaluation ([`macro_lines`]), 0.691 for a constant, 0.588 the
//! labels' own entropy. Yet in play the macro-line evaluation did better
//! (see `SearchConfig::fitted_eval`), so it stays the cut-off's default.

use crate::game::grid::FULL;
use crate::game::uttt::{threats, Uttt};
use crate::game::{Game, Seat};

/// The number of features.
pub(super) const FEATURES: usize = 13;

/// The macro lines (rows, columns, diagonals) as 9-bit masks of boards.
const LINES: [u16; 8] = [0o007, 0o070, 0o700, 0o111, 0o222, 0o444, 0o421, 0o124];

/// Corner boards.
const CORNERS: u16 = 0o505;

/// Fitted weights of [`features`] (see the module's documentation).
pub(super) const WEIGHTS: [f32; FEATURES] = [
    -0.2542, -0.1779, -0.1069, -0.0213, 0.2647, 0.5512, 0.2680, -0.0288, 1.4702, 0.0506, -0.0071,
    0.1560, 3.5087,
];

/// One player's features, in the order of [`features`]' first nine.
fn player_features(pos: &Uttt, p: Seat) -> ([f32; 9], u16, u16) {
    let q = p.other();
    let closed = pos.closed();
    let won = pos.won(p);
    // Boards no line of p can use: the opponent's and the drawn ones.
    let dead = pos.won(q) | (closed & !won);
    let open = FULL & !closed;
    // Open boards where p completes a local line at once, and how many
    // such cells p has in all.
    let mut can_win = 0u16;
    let mut cells = 0u32;
    let mut bs = open;
    while bs != 0 {
        let b = bs.trailing_zeros() as usize;
        bs &= bs - 1;
        let t = threats(pos.cells(p, b)) & pos.empty(b);
        if t != 0 {
            can_win |= 1 << b;
            cells += t.count_ones();
        }
    }
    // Macro lines still open to p with 1 and 2 boards won on them, and the
    // open boards on some line still open to p.
    let mut lines = [0f32; 3];
    let mut alive = 0u16;
    for l in LINES {
        if l & dead == 0 {
            let k = (l & won).count_ones() as usize;
            lines[k.min(2)] += 1.0;
            alive |= l & open;
        }
    }
    // Boards whose local win wins p the game, and p can win them at once.
    let game = threats(won) & can_win;
    (
        [
            won.count_ones() as f32,
            (won >> 4 & 1) as f32,
            (won & CORNERS).count_ones() as f32,
            alive.count_ones() as f32,
            lines[1],
            lines[2],
            can_win.count_ones() as f32,
            cells as f32,
            game.count_ones() as f32,
        ],
        can_win,
        game,
    )
}

/// The features of `pos`, from X's side: nine differences of X's and O's
/// (boards won, the centre board won, corner boards won, the open boards
/// on a macro line still open to the player, the macro lines still open to
/// the player with 1 and 2 boards won on them, open boards
/// the player can win at once, the cells that do so, boards whose win at
/// once wins the game), then four of the mover, signed +1 when X moves and
/// -1 when O does (the move itself, a free choice of board, a board the
/// mover can win now, the game the mover can win now). Swapping the players
/// negates every feature.
pub(super) fn features(pos: &Uttt) -> [f32; FEATURES] {
    let (x, x_win, x_game) = player_features(pos, Seat::One);
    let (o, o_win, o_game) = player_features(pos, Seat::Two);
    let mut f = [0f32; FEATURES];
    for i in 0..9 {
        f[i] = x[i] - o[i];
    }
    let me = pos.to_move();
    let (sign, win, game) = if me == Seat::One {
        (1.0, x_win, x_game)
    } else {
        (-1.0, o_win, o_game)
    };
    let boards = pos.playable_boards();
    f[9] = sign;
    f[10] = sign * (boards.count_ones() > 1) as u8 as f32;
    f[11] = sign * (boards & win != 0) as u8 as f32;
    f[12] = sign * (boards & game != 0) as u8 as f32;
    f
}

/// X's chances in an unfinished position, in (0, 1): the logistic of the
/// fitted weights times [`features`], the sum scaled by `steepness` (1 for
/// the fitted model).
pub(super) fn evaluate(pos: &Uttt, steepness: f32) -> f32 {
    let f = features(pos);
    let z: f32 = f.iter().zip(WEIGHTS.iter()).map(|(a, w)| a * w).sum();
    1.0 / (1.0 + (-steepness * z).exp())
}

/// The cut-off's first evaluation, kept as the default (it played better
/// than the fitted one at equal time, see `SearchConfig::fitted_eval`):
/// X's chances as a logistic, of steepness `weight`, of the difference of
/// the players' macro potentials. A player's potential sums, over the macro
/// lines still open to it (no board won by the opponent or drawn), the
/// square of its progress on the line: 1 for a won board, 0.4 for an open
/// board where it can complete a line at once, 0.15 for one where it has
/// stones, 0.05 for an empty one.
pub(super) fn macro_lines(pos: &Uttt, weight: f32) -> f32 {
    let potential = |p: Seat| -> f32 {
        let q = p.other();
        let dead = pos.won(q) | (pos.closed() & !pos.won(p));
        let mut value = [0f32; 9];
        for (b, v) in value.iter_mut().enumerate() {
            *v = if pos.won(p) & (1 << b) != 0 {
                1.0
            } else if dead & (1 << b) != 0 {
                0.0
            } else if threats(pos.cells(p, b)) & pos.empty(b) != 0 {
                0.4
            } else if pos.cells(p, b) != 0 {
                0.15
            } else {
                0.05
            };
        }
        let mut total = 0.0;
        for l in LINES {
            if l & dead != 0 {
                continue;
            }
            let s: f32 = (0..9).filter(|b| l & 1 << b != 0).map(|b| value[b]).sum();
            total += s * s;
        }
        total
    };
    let diff = potential(Seat::One) - potential(Seat::Two);
    1.0 / (1.0 + (-weight * diff).exp())
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // matrix code reads best with indices
pub(super) mod tests {
    use super::*;
    use crate::bot::uttt::playout::{informed_move, informed_playout};
    use crate::bot::uttt::search::{Mcts, SearchConfig};
    use crate::game::uttt::UtttMove;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn parse(rows: [&str; 9], rest: &str) -> Uttt {
        let text = rows.concat() + rest;
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// Positions from random games, 0 to 50 plies in.
    fn random_positions(n: usize) -> Vec<Uttt> {
        let mut rng = SmallRng::seed_from_u64(11);
        let mut out = Vec::new();
        while out.len() < n {
            let mut p = Uttt::new();
            let plies = rng.random_range(0..50);
            for _ in 0..plies {
                if let Some(mv) = p.random_move(&mut rng) {
                    p.play_unchecked(mv);
                }
            }
            if !p.is_over() {
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn evaluation_is_a_probability_and_symmetric() {
        for p in random_positions(300) {
            let v = evaluate(&p, 1.0);
            assert!(v > 0.0 && v < 1.0, "{p}: {v}");
            let s = p.swapped();
            assert_eq!(s.to_move(), p.to_move().other(), "{p} / {s}");
            let f = features(&p);
            let g = features(&s);
            for i in 0..FEATURES {
                assert_eq!(f[i], -g[i], "feature {i} of {p} / {s}");
            }
            let w = evaluate(&s, 1.0);
            assert!((v + w - 1.0).abs() < 1e-5, "{p}: {v} and {w}");
            let (a, b) = (macro_lines(&p, 0.5), macro_lines(&s, 0.5));
            assert!(
                a > 0.0 && a < 1.0 && (a + b - 1.0).abs() < 1e-5,
                "{p}: {a} and {b}"
            );
        }
    }

    #[test]
    fn evaluation_ranks_obvious_positions() {
        // X has won boards 0 and 4 and threatens board 8 (a game win);
        // O has nothing. X is far ahead, whoever moves.
        let ahead = parse(
            [
                "XXX......",
                "O........",
                ".........",
                "O........",
                "XXX......",
                "O....O...",
                ".O.......",
                "O....O...",
                "XX.......",
            ],
            "/1/X...X....",
        );
        assert_eq!(ahead.to_move(), Seat::Two);
        let v = evaluate(&ahead, 1.0);
        eprintln!("ahead: {v}");
        assert!(v > 0.75, "{v}");
        assert!(evaluate(&ahead.swapped(), 1.0) < 0.25);
        // The empty board's first move: about even, a little for X.
        let mut start = Uttt::new();
        start.play_unchecked(UtttMove::new(4, 4).unwrap());
        let v = evaluate(&start, 1.0);
        eprintln!("start: {v}");
        assert!((0.4..0.65).contains(&v), "{v}");
    }

    /// Cross-entropy of predictions against soft labels, per sample.
    fn log_loss(pred: impl Iterator<Item = f64>, labels: &[f64]) -> f64 {
        let mut total = 0.0;
        for (p, &y) in pred.zip(labels) {
            let p = p.clamp(1e-6, 1.0 - 1e-6);
            total -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
        }
        total / labels.len() as f64
    }

    /// The start of self-play game `g` for a fitting tool: one engine a
    /// player, both with `cfg`, and the position after two random plies.
    pub(in crate::bot::uttt) fn self_play_start(
        cfg: SearchConfig,
        g: u64,
        rng: &mut SmallRng,
    ) -> ([Mcts; 2], Uttt) {
        let engines = [Mcts::new(cfg, 2 * g), Mcts::new(cfg, 2 * g + 1)];
        let mut pos = Uttt::new();
        for _ in 0..2 {
            if let Some(mv) = pos.random_move(rng) {
                pos.play_unchecked(mv);
            }
        }
        (engines, pos)
    }

    /// A fitting tool's setting: the environment variable `name` as a
    /// whole number, or `default`.
    pub(in crate::bot::uttt) fn env(name: &str, default: usize) -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// One Newton step of a fit with an L2 penalty `lambda / 2 |w|^2`:
    /// adds the penalty to the loss's gradient and Hessian at `w`, moves
    /// `w` and returns the step's length.
    pub(in crate::bot::uttt) fn newton_step(
        w: &mut [f64],
        mut grad: Vec<f64>,
        mut hess: Vec<Vec<f64>>,
        lambda: f64,
    ) -> f64 {
        for i in 0..w.len() {
            grad[i] += lambda * w[i];
            hess[i][i] += lambda;
        }
        let d = solve(hess, grad);
        for (wi, di) in w.iter_mut().zip(&d) {
            *wi -= di;
        }
        d.iter().map(|x| x * x).sum::<f64>().sqrt()
    }

    /// Solves `a x = b` (a symmetric positive definite) by Gaussian
    /// elimination with partial pivoting.
    pub(in crate::bot::uttt) fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
        let n = b.len();
        for col in 0..n {
            let piv = (col..n)
                .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
                .unwrap_or(col);
            a.swap(col, piv);
            b.swap(col, piv);
            for row in col + 1..n {
                let f = a[row][col] / a[col][col];
                for k in col..n {
                    a[row][k] -= f * a[col][k];
                }
                b[row] -= f * b[col];
            }
        }
        let mut x = vec![0.0; n];
        for row in (0..n).rev() {
            let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
            x[row] = (b[row] - s) / a[row][row];
        }
        x
    }

    /// Fits [`WEIGHTS`] (see the module's documentation) and prints them
    /// with the held-out cross-entropy of the fit, of the old macro-line
    /// evaluation and of a constant. Environment: `FIT_GAMES` (self-play
    /// games, default 400), `FIT_ITERS` (iterations a move, default 2000),
    /// `FIT_PLAYOUTS` (playouts per label, default 64).
    #[test]
    #[ignore = "a tool: fits the evaluation's weights (minutes)"]
    fn fit_evaluation_weights() {
        let games = env("FIT_GAMES", 400);
        let iters = env("FIT_ITERS", 2000) as u32;
        let playouts = env("FIT_PLAYOUTS", 64);
        // The labels: informed playouts to the end (no cut-off).
        let full_playouts = SearchConfig::optimal();
        let mut rng = SmallRng::seed_from_u64(2020);
        // (game, features, label, the position)
        let mut samples: Vec<(usize, [f32; FEATURES], f64, Uttt)> = Vec::new();
        let mut results = Vec::new();
        for g in 0..games {
            let cfg = SearchConfig {
                iterations: iters,
                ..SearchConfig::optimal()
            };
            let (mut engines, mut pos) = self_play_start(cfg, g as u64, &mut rng);
            let mut seen = Vec::new();
            while !pos.is_over() {
                seen.push(pos);
                let Some(mv) = engines[pos.to_move().index()].search(&pos) else {
                    break;
                };
                pos.play_unchecked(mv);
            }
            results.push(pos.outcome().map_or(0.5, |o| o.points(Seat::One)));
            for p in seen {
                // As a cut-off playout reaches it: some informed plies on.
                let mut q = p;
                for _ in 0..rng.random_range(0..=20) {
                    match informed_move(&q, 250, false, &mut rng) {
                        Some(mv) if !q.is_over() => q.play_unchecked(mv),
                        _ => break,
                    }
                }
                if q.is_over() {
                    continue;
                }
                let total: f64 = (0..playouts)
                    .map(|_| informed_playout(q, &full_playouts, &mut rng) as f64)
                    .sum();
                samples.push((g, features(&q), total / playouts as f64, q));
            }
            if g % 50 == 49 {
                eprintln!("{} games, {} samples", g + 1, samples.len());
            }
        }
        let x_score: f64 = results.iter().sum::<f64>() / results.len() as f64;
        eprintln!("self-play: X scored {x_score:.3} over {games} games");
        let split = games * 4 / 5;
        let (train, test): (Vec<_>, Vec<_>) = samples.iter().partition(|s| s.0 < split);
        let mut w = vec![0f64; FEATURES];
        let lambda = 1.0;
        for step in 0..30 {
            let mut grad = vec![0f64; FEATURES];
            let mut hess = vec![vec![0f64; FEATURES]; FEATURES];
            for (_, f, y, _) in &train {
                let z: f64 = f.iter().zip(&w).map(|(&a, &b)| a as f64 * b).sum();
                let p = 1.0 / (1.0 + (-z).exp());
                for i in 0..FEATURES {
                    grad[i] += (p - y) * f[i] as f64;
                    for j in 0..FEATURES {
                        hess[i][j] += p * (1.0 - p) * f[i] as f64 * f[j] as f64;
                    }
                }
            }
            if newton_step(&mut w, grad, hess, lambda) < 1e-9 {
                eprintln!("converged after {} Newton steps", step + 1);
                break;
            }
        }
        let labels: Vec<f64> = test.iter().map(|s| s.2).collect();
        let fitted = log_loss(
            test.iter().map(|s| {
                let z: f64 = s.1.iter().zip(&w).map(|(&a, &b)| a as f64 * b).sum();
                1.0 / (1.0 + (-z).exp())
            }),
            &labels,
        );
        let old = log_loss(test.iter().map(|s| macro_lines(&s.3, 0.5) as f64), &labels);
        let mean = train.iter().map(|s| s.2).sum::<f64>() / train.len() as f64;
        let constant = log_loss(test.iter().map(|_| mean), &labels);
        // The labels' own entropy: the least cross-entropy possible.
        let floor = log_loss(labels.iter().copied(), &labels);
        println!(
            "{} training samples, {} held out; held-out cross-entropy: fitted {fitted:.4}, \
             old macro-line evaluation {old:.4}, constant {constant:.4}, labels' entropy {floor:.4}",
            train.len(),
            test.len()
        );
        let list: Vec<String> = w.iter().map(|x| format!("{x:.4}")).collect();
        println!(
            "pub(super) const WEIGHTS: [f32; FEATURES] = [{}];",
            list.join(", ")
        );
    }
}
