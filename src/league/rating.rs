//! The league's rating: one maximum-likelihood fit over every game of the
//! bots rated, which does not depend on the order the games were played.
//!
//! The model is Davidson's extension of Bradley-Terry to draws, with a
//! first-move advantage. Bot `i` (player 1) against bot `j` (player 2):
//! with `Δ = s_i − s_j + h`,
//!
//! ```text
//! P(i wins) = e^(Δ/2) / Z,   P(draw) = ν / Z,   P(j wins) = e^(−Δ/2) / Z,
//! Z = e^(Δ/2) + e^(−Δ/2) + ν
//! ```
//!
//! so that wins over losses is `e^Δ`, as in Elo's logistic curve (a rating
//! in Elo is `s · 400 / ln 10`). `h` (the first move's worth) and `ln ν` (how
//! drawish the game is) are fitted with the ratings. The log-likelihood is
//! concave, and Newton's method with a backtracking line search finds its
//! maximum in a handful of steps. A weak prior keeps every rating finite: each
//! bot gets `prior_games` virtual games, half won and half lost, spread
//! evenly over the opponents it met and over both seats. The first anchor is pinned at its configured
//! rating; intervals come from the likelihood's curvature (the inverse of
//! the negative Hessian), and so does the likelihood of superiority between
//! two bots. Only bots whose games connect them to the pinned anchor can be
//! rated: the others are reported, not guessed.

use std::collections::BTreeMap;

/// Elo points per unit of the model's log-strength.
pub const ELO_PER_UNIT: f64 = 400.0 / std::f64::consts::LN_10;

/// One game's result for the fit: `white` moved first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Result3 {
    /// The bot that moved first (index into the fit's bots).
    pub white: usize,
    /// The bot that moved second.
    pub black: usize,
    /// 1: `white` won, 0: a draw, −1: `black` won.
    pub score: i8,
}

/// Game counts by ordered pair (first mover, second mover): wins of the
/// first mover, draws, losses. Integer counts, so the fit reads them the
/// same whatever order the games came in.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pairs: BTreeMap<(usize, usize), [u64; 3]>,
}

impl Tally {
    /// Counts one game.
    pub fn add(&mut self, r: Result3) {
        if r.white == r.black {
            return;
        }
        let c = self.pairs.entry((r.white, r.black)).or_default();
        match r.score {
            1 => c[0] += 1,
            0 => c[1] += 1,
            _ => c[2] += 1,
        }
    }

    /// Games counted.
    pub fn games(&self) -> u64 {
        self.pairs.values().map(|c| c.iter().sum::<u64>()).sum()
    }
}

/// What the fit is told besides the games.
#[derive(Clone, Debug)]
pub struct FitSettings {
    /// Number of bots (indices `0..bots`).
    pub bots: usize,
    /// The bot pinned at `pin_rating`.
    pub pin: usize,
    /// Its rating in Elo.
    pub pin_rating: f64,
    /// Virtual games per bot (the prior), half won and half lost; 0 for a
    /// plain maximum likelihood.
    pub prior_games: f64,
}

/// The fitted ladder.
#[derive(Clone, Debug)]
pub struct Fit {
    /// Each bot's rating in Elo, `None` when its games do not connect it to
    /// the pinned bot.
    pub ratings: Vec<Option<f64>>,
    /// Each rated bot's standard error in Elo (0 for the pinned bot).
    pub sd: Vec<f64>,
    /// The first move's worth in Elo.
    pub first_move: f64,
    /// ν: how drawish the games are (a draw is as likely as a win between
    /// equals when ν = 1).
    pub draw_nu: f64,
    /// The bots the games do not connect to the pinned one.
    pub unconnected: Vec<usize>,
    /// Covariances between fitted bots (Elo²), row-major over `index`.
    cov: Vec<f64>,
    /// Each bot's row in `cov` (`None`: pinned or unrated).
    index: Vec<Option<usize>>,
    /// Newton steps taken.
    pub steps: usize,
}

impl Fit {
    /// The 95 % interval of bot `i`'s rating.
    pub fn interval(&self, i: usize) -> Option<(f64, f64)> {
        let r = self.ratings[i]?;
        Some((r - 1.96 * self.sd[i], r + 1.96 * self.sd[i]))
    }

    /// The likelihood that bot `a` is stronger than bot `b` (from the
    /// ratings' joint normal approximation), when both are rated.
    pub fn superiority(&self, a: usize, b: usize) -> Option<f64> {
        let (ra, rb) = (self.ratings[a]?, self.ratings[b]?);
        let var = |i: usize, j: usize| match (self.index[i], self.index[j]) {
            (Some(x), Some(y)) => self.cov[x * self.k() + y],
            _ => 0.0,
        };
        let v = var(a, a) + var(b, b) - 2.0 * var(a, b);
        if v <= 0.0 {
            return Some(if ra > rb {
                1.0
            } else if ra < rb {
                0.0
            } else {
                0.5
            });
        }
        Some(normal_cdf((ra - rb) / v.sqrt()))
    }

    fn k(&self) -> usize {
        (self.cov.len() as f64).sqrt().round() as usize
    }

    /// A warning when some bots cannot be rated, naming them through `name`.
    pub fn warning(&self, name: impl Fn(usize) -> String) -> Option<String> {
        if self.unconnected.is_empty() {
            return None;
        }
        let names: Vec<String> = self.unconnected.iter().map(|&i| name(i)).collect();
        Some(format!(
            "the games do not connect {} to the rest of the ladder: {} not rated until {} \
             a game against a rated bot",
            names.join(", "),
            if names.len() == 1 {
                "it is"
            } else {
                "they are"
            },
            if names.len() == 1 {
                "it plays"
            } else {
                "they play"
            },
        ))
    }
}

/// The standard normal distribution function.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit,
/// relative error under 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Union-find root with path halving.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The counts the fit reads: the real games plus the prior's virtual
/// draws, over the bots connected to the pinned one.
/// (first, second, wins, draws, losses) with indices into the free
/// parameters (`None`: the pinned bot).
type Row = (Option<usize>, Option<usize>, f64, f64, f64);

struct Data {
    /// The counts, by ordered pair.
    rows: Vec<Row>,
    /// Whether any game was drawn: if none was (Notakto has no draws), ν is
    /// held at (nearly) 0 rather than fitted, which would run off to −∞.
    draws: bool,
}

/// ln ν when no game was drawn.
const NO_DRAWS: f64 = -40.0;

/// Fits the ratings to `tally`.
pub fn fit(tally: &Tally, s: &FitSettings) -> Fit {
    let n = s.bots;
    // Who is connected to the pinned bot.
    let mut parent: Vec<usize> = (0..n).collect();
    let mut opponents: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); n];
    for (&(a, b), c) in &tally.pairs {
        if a >= n || b >= n || c.iter().sum::<u64>() == 0 {
            continue;
        }
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
        opponents[a].insert(b);
        opponents[b].insert(a);
    }
    let pin_root = if s.pin < n {
        Some(root(&mut parent, s.pin))
    } else {
        None
    };
    let connected: Vec<bool> = (0..n)
        .map(|i| pin_root.is_some_and(|r| root(&mut parent, i) == r))
        .collect();
    let unconnected: Vec<usize> = (0..n).filter(|&i| !connected[i]).collect();
    // Free parameters: every connected bot but the pinned one, then h, ln ν.
    let mut index = vec![None; n];
    let mut k = 0;
    for i in 0..n {
        if connected[i] && i != s.pin {
            index[i] = Some(k);
            k += 1;
        }
    }
    let mut rows = Vec::new();
    for (&(a, b), c) in &tally.pairs {
        if a < n && b < n && connected[a] && connected[b] {
            rows.push((index[a], index[b], c[0] as f64, c[1] as f64, c[2] as f64));
        }
    }
    if s.prior_games > 0.0 {
        for a in 0..n {
            if !connected[a] || opponents[a].is_empty() {
                continue;
            }
            let each = s.prior_games / opponents[a].len() as f64 / 2.0;
            for &b in &opponents[a] {
                // Half won, half lost: as many virtual wins as losses. (Virtual
                // draws would not do: with ν free, a perfect record could still
                // run off to infinity with ν.)
                rows.push((index[a], index[b], each / 2.0, 0.0, each / 2.0));
                rows.push((index[b], index[a], each / 2.0, 0.0, each / 2.0));
            }
        }
    }
    let draws = rows.iter().any(|r| r.3 > 0.0);
    let data = Data { rows, draws };
    let pin_units = s.pin_rating / ELO_PER_UNIT;
    let dim = k + 2;
    let mut x = vec![0.0; dim];
    // Start ν at 1 (or hold it at nearly 0), the first move at nothing.
    if !data.draws {
        x[k + 1] = NO_DRAWS;
    }
    let mut f = log_likelihood(&data, &x, k);
    let mut steps = 0;
    let mut neg_h = vec![0.0; dim * dim];
    for _ in 0..100 {
        let g = gradient_and_hessian(&data, &x, k, &mut neg_h);
        let Some(chol) = cholesky(&neg_h, dim) else {
            break;
        };
        let step = chol_solve(&chol, dim, &g);
        let mut t = 1.0;
        let mut moved = false;
        for _ in 0..40 {
            let trial: Vec<f64> = x.iter().zip(&step).map(|(a, d)| a + t * d).collect();
            let ft = log_likelihood(&data, &trial, k);
            if ft.is_finite() && ft >= f - 1e-12 {
                x = trial;
                f = ft;
                moved = true;
                break;
            }
            t /= 2.0;
        }
        steps += 1;
        let size = step.iter().fold(0.0f64, |m, d| m.max((t * d).abs()));
        if !moved || size < 1e-10 {
            break;
        }
    }
    // The covariance of the free parameters.
    gradient_and_hessian(&data, &x, k, &mut neg_h);
    let cov = cholesky(&neg_h, dim)
        .map(|c| chol_inverse(&c, dim))
        .unwrap_or_else(|| vec![0.0; dim * dim]);
    let mut ratings = vec![None; n];
    let mut sd = vec![0.0; n];
    for i in 0..n {
        if !connected[i] {
            continue;
        }
        match index[i] {
            Some(p) => {
                ratings[i] = Some((x[p] + pin_units) * ELO_PER_UNIT);
                sd[i] = cov[p * dim + p].max(0.0).sqrt() * ELO_PER_UNIT;
            }
            None => ratings[i] = Some(s.pin_rating),
        }
    }
    // Keep the bots' block of the covariance, in Elo².
    let mut bots_cov = vec![0.0; k * k];
    for a in 0..k {
        for b in 0..k {
            bots_cov[a * k + b] = cov[a * dim + b] * ELO_PER_UNIT * ELO_PER_UNIT;
        }
    }
    Fit {
        ratings,
        sd,
        first_move: x[k] * ELO_PER_UNIT,
        draw_nu: x[k + 1].exp(),
        unconnected,
        cov: bots_cov,
        index,
        steps,
    }
}

/// Δ and the three probabilities of one row at parameters `x`.
fn probabilities(x: &[f64], k: usize, a: Option<usize>, b: Option<usize>) -> (f64, f64, f64) {
    let sa = a.map_or(0.0, |i| x[i]);
    let sb = b.map_or(0.0, |i| x[i]);
    let delta = sa - sb + x[k];
    let theta = x[k + 1];
    // Stable: divide through by the largest term.
    let (w, l, d) = (delta / 2.0, -delta / 2.0, theta);
    let m = w.max(l).max(d);
    let (ew, el, ed) = ((w - m).exp(), (l - m).exp(), (d - m).exp());
    let z = ew + el + ed;
    (ew / z, ed / z, el / z)
}

fn log_likelihood(data: &Data, x: &[f64], k: usize) -> f64 {
    let mut f = 0.0;
    for &(a, b, w, d, l) in &data.rows {
        let (pw, pd, pl) = probabilities(x, k, a, b);
        if w > 0.0 {
            f += w * pw.ln();
        }
        if d > 0.0 {
            f += d * pd.ln();
        }
        if l > 0.0 {
            f += l * pl.ln();
        }
    }
    f
}

/// The gradient of the log-likelihood, and its negative Hessian into `neg_h`.
fn gradient_and_hessian(data: &Data, x: &[f64], k: usize, neg_h: &mut [f64]) -> Vec<f64> {
    let dim = k + 2;
    let mut g = vec![0.0; dim];
    neg_h.iter_mut().for_each(|v| *v = 0.0);
    let (h, t) = (k, k + 1);
    for &(a, b, w, d, l) in &data.rows {
        let n = w + d + l;
        if n == 0.0 {
            continue;
        }
        let (pw, pd, pl) = probabilities(x, k, a, b);
        // Derivatives in Δ and θ; Δ moves with s_a (+1), s_b (−1) and h (+1).
        let g_delta = (w - l) / 2.0 - n * (pw - pl) / 2.0;
        let g_theta = d - n * pd;
        let c_dd = n * ((pw + pl) / 4.0 - (pw - pl).powi(2) / 4.0);
        let c_tt = n * pd * (1.0 - pd);
        let c_dt = -n * pd * (pw - pl) / 2.0;
        let coef: [(Option<usize>, f64); 3] = [(a, 1.0), (b, -1.0), (Some(h), 1.0)];
        for &(p, sign) in &coef {
            let Some(p) = p else { continue };
            g[p] += sign * g_delta;
            for &(q, sq) in &coef {
                let Some(q) = q else { continue };
                neg_h[p * dim + q] += sign * sq * c_dd;
            }
            neg_h[p * dim + t] += sign * c_dt;
            neg_h[t * dim + p] += sign * c_dt;
        }
        g[t] += g_theta;
        neg_h[t * dim + t] += c_tt;
    }
    if !data.draws {
        // ν is held: its row and column are the identity's.
        for p in 0..dim {
            neg_h[p * dim + t] = 0.0;
            neg_h[t * dim + p] = 0.0;
        }
        neg_h[t * dim + t] = 1.0;
        g[t] = 0.0;
    }
    g
}

/// The lower Cholesky factor of the symmetric matrix `m` (`dim`²), or
/// `None` when it is not positive definite.
fn cholesky(m: &[f64], dim: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; dim * dim];
    for j in 0..dim {
        let mut s = m[j * dim + j];
        for p in 0..j {
            s -= l[j * dim + p] * l[j * dim + p];
        }
        if s <= 1e-300 || !s.is_finite() {
            return None;
        }
        let d = s.sqrt();
        l[j * dim + j] = d;
        for i in j + 1..dim {
            let mut s = m[i * dim + j];
            let (ri, rj) = (&l[i * dim..i * dim + j], &l[j * dim..j * dim + j]);
            for (a, b) in ri.iter().zip(rj) {
                s -= a * b;
            }
            l[i * dim + j] = s / d;
        }
    }
    Some(l)
}

/// Solves `L Lᵀ x = b`.
fn chol_solve(l: &[f64], dim: usize, b: &[f64]) -> Vec<f64> {
    let mut y = b.to_vec();
    for i in 0..dim {
        for p in 0..i {
            y[i] -= l[i * dim + p] * y[p];
        }
        y[i] /= l[i * dim + i];
    }
    for i in (0..dim).rev() {
        for p in i + 1..dim {
            y[i] -= l[p * dim + i] * y[p];
        }
        y[i] /= l[i * dim + i];
    }
    y
}

/// `(L Lᵀ)⁻¹`.
fn chol_inverse(l: &[f64], dim: usize) -> Vec<f64> {
    let mut inv = vec![0.0; dim * dim];
    let mut e = vec![0.0; dim];
    for c in 0..dim {
        e.iter_mut().for_each(|v| *v = 0.0);
        e[c] = 1.0;
        let col = chol_solve(l, dim, &e);
        for r in 0..dim {
            inv[r * dim + c] = col[r];
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn settings(bots: usize, prior: f64) -> FitSettings {
        FitSettings {
            bots,
            pin: 0,
            pin_rating: 0.0,
            prior_games: prior,
        }
    }

    #[test]
    fn two_bots_match_the_closed_form() {
        // With seats balanced and no prior, the maximum-likelihood estimate
        // of Davidson's model is Δ = ln(W / L), ν = D / √(W L), h = 0.
        let mut t = Tally::default();
        for (white, black, score, times) in [
            (1, 0, 1, 6),
            (1, 0, 0, 4),
            (1, 0, -1, 2),
            (0, 1, -1, 6),
            (0, 1, 0, 4),
            (0, 1, 1, 2),
        ] {
            for _ in 0..times {
                t.add(Result3 {
                    white,
                    black,
                    score,
                });
            }
        }
        let f = fit(&t, &settings(2, 0.0));
        let want = (12.0f64 / 4.0).ln() * ELO_PER_UNIT; // 190.85 Elo
        let got = f.ratings[1].unwrap();
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        assert!((got - 190.848).abs() < 1e-3);
        assert!(f.first_move.abs() < 1e-6);
        assert!((f.draw_nu - 8.0 / (12.0f64 * 4.0).sqrt()).abs() < 1e-6);
        assert_eq!(f.ratings[0], Some(0.0));
        // The curvature at the optimum: var(Δ) = 1 / (N (pw + pl)/4 − ...),
        // positive and a few tens of Elo wide for 24 games.
        assert!(f.sd[1] > 40.0 && f.sd[1] < 200.0, "{}", f.sd[1]);
        assert!(f.superiority(1, 0).unwrap() > 0.9);
    }

    #[test]
    fn a_game_without_draws_is_fitted_as_bradley_terry() {
        // 30 wins to 10 with seats balanced and no draws: Δ = ln 3.
        let mut t = Tally::default();
        for (white, black, score, times) in
            [(1, 0, 1, 15), (1, 0, -1, 5), (0, 1, -1, 15), (0, 1, 1, 5)]
        {
            for _ in 0..times {
                t.add(Result3 {
                    white,
                    black,
                    score,
                });
            }
        }
        let f = fit(&t, &settings(2, 0.0));
        let want = 3.0f64.ln() * ELO_PER_UNIT;
        assert!(
            (f.ratings[1].unwrap() - want).abs() < 1e-6,
            "{:?}",
            f.ratings
        );
        assert!(f.draw_nu < 1e-10);
        assert!(f.sd[1] > 0.0 && f.sd[1].is_finite());
    }

    #[test]
    fn a_perfect_record_stays_finite_with_the_prior() {
        let mut t = Tally::default();
        for _ in 0..20 {
            t.add(Result3 {
                white: 1,
                black: 0,
                score: 1,
            });
            t.add(Result3 {
                white: 0,
                black: 1,
                score: -1,
            });
        }
        let f = fit(&t, &settings(2, 2.0));
        let r = f.ratings[1].unwrap();
        assert!(r.is_finite() && r > 300.0 && r < 2000.0, "{r}");
    }

    /// A synthetic league with known strengths: games drawn from the model.
    fn synthetic(strengths: &[f64], h: f64, nu: f64, games_per_pair: usize, seed: u64) -> Tally {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut t = Tally::default();
        let n = strengths.len();
        for a in 0..n {
            for b in 0..n {
                if a == b {
                    continue;
                }
                let delta = (strengths[a] - strengths[b] + h) / ELO_PER_UNIT;
                let (w, l) = ((delta / 2.0).exp(), (-delta / 2.0).exp());
                let z = w + l + nu;
                for _ in 0..games_per_pair {
                    let u: f64 = rng.random();
                    let score = if u < w / z {
                        1
                    } else if u < (w + nu) / z {
                        0
                    } else {
                        -1
                    };
                    t.add(Result3 {
                        white: a,
                        black: b,
                        score,
                    });
                }
            }
        }
        t
    }

    #[test]
    fn the_fit_recovers_known_strengths_within_its_intervals() {
        let strengths: Vec<f64> = (0..16).map(|i| -300.0 + 45.0 * i as f64).collect();
        let t = synthetic(&strengths, 35.0, 0.6, 30, 7);
        let f = fit(&t, &settings(strengths.len(), 2.0));
        let mut inside = 0;
        for (i, s) in strengths.iter().enumerate() {
            let truth = s - strengths[0];
            let (lo, hi) = f.interval(i).unwrap();
            if (lo..=hi).contains(&truth) {
                inside += 1;
            }
            // Never far outside: within four standard errors.
            let r = f.ratings[i].unwrap();
            assert!(
                (r - truth).abs() <= 4.0 * f.sd[i] + 1e-9,
                "bot {i}: {r} vs {truth} ± {}",
                f.sd[i]
            );
        }
        assert!(
            inside >= 13,
            "only {inside} of 16 inside their 95 % intervals"
        );
        assert!((f.first_move - 35.0).abs() < 20.0, "{}", f.first_move);
        assert!((f.draw_nu - 0.6).abs() < 0.15, "{}", f.draw_nu);
        assert!(f.superiority(15, 0).unwrap() > 0.999);
    }

    #[test]
    fn the_order_of_games_does_not_change_the_fit() {
        let strengths = [0.0, 100.0, 250.0, -80.0];
        let t = synthetic(&strengths, 20.0, 0.4, 10, 3);
        let mut games = Vec::new();
        for (&(a, b), c) in &t.pairs {
            for (score, count) in [(1i8, c[0]), (0, c[1]), (-1, c[2])] {
                for _ in 0..count {
                    games.push(Result3 {
                        white: a,
                        black: b,
                        score,
                    });
                }
            }
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut shuffled = games.clone();
        for i in (1..shuffled.len()).rev() {
            let j = rng.random_range(0..=i);
            shuffled.swap(i, j);
        }
        let (mut t1, mut t2) = (Tally::default(), Tally::default());
        games.iter().for_each(|&g| t1.add(g));
        shuffled.iter().for_each(|&g| t2.add(g));
        let (f1, f2) = (fit(&t1, &settings(4, 2.0)), fit(&t2, &settings(4, 2.0)));
        assert_eq!(f1.ratings, f2.ratings);
        assert_eq!(f1.sd, f2.sd);
    }

    #[test]
    fn unconnected_bots_are_named_not_rated() {
        let mut t = Tally::default();
        t.add(Result3 {
            white: 0,
            black: 1,
            score: 1,
        });
        t.add(Result3 {
            white: 2,
            black: 3,
            score: 0,
        });
        let f = fit(&t, &settings(5, 2.0));
        assert!(f.ratings[1].is_some());
        assert_eq!(f.ratings[2], None);
        assert_eq!(f.unconnected, vec![2, 3, 4]);
        let w = f.warning(|i| format!("bot{i}")).unwrap();
        assert!(w.contains("bot2, bot3, bot4"), "{w}");
    }

    #[test]
    fn normal_cdf_is_right() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }
}
