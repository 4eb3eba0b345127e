//! The misère quotient of Notakto and the value of every board.
//!
//! Plambeck and Whitehead ("The secrets of notakto: winning at X-only
//! tic-tac-toe", 2013) show that every 3x3 Notakto board has a value in the
//! commutative monoid
//!
//! ```text
//! Q = < a, b, c, d | a^2 = 1, b^3 = b, b^2 c = c, c^3 = a c^2,
//!                    b^2 d = d, c d = a d, d^2 = c^2 >        (18 elements)
//! ```
//!
//! and that a sum of boards is lost for the player to move iff the product of
//! its boards' values is one of the P-positions `a`, `b^2`, `b c`, `c^2`.
//!
//! Only the monoid is taken from the paper. Which value each board has is
//! derived here: a brute-force [`Solver`] gives the outcome of every one-,
//! two- and three-board position, and a backtracking search finds values
//! that explain all of them; they are unique up to the automorphisms of the
//! monoid. This is how the optimal bot's constant tables (`MUL`, `VALUE`,
//! `P_SET` in the parent module) are reproduced: the tests derive the values
//! again, check that the constants are the same monoid and the same values
//! under a renaming of the elements, and check the verdicts against the
//! solver on every sum of up to four boards and on sampled larger ones.

use super::solver::{canonical_board, is_dead_board, live_classes, Solver};

/// The number of elements of the quotient.
pub(crate) const ORDER: usize = 18;

/// An element of the quotient, as an index into its normal forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Element(u8);

impl Element {
    /// The index 0..18 (the identity is 0).
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// Exponents of a, b, c, d in a word.
type Word = [u32; 4];

/// The normal form of `a^i b^j c^k d^l`, by the relations: every step below
/// rewrites the word into an equal one, and the forms left over are the 18
/// distinct elements.
fn normal_form([i, j, k, l]: Word) -> Word {
    let (mut a, mut b, mut c, mut d) = (i, j, k, l);
    if d > 0 {
        // c d = a d turns every c into an a while a d is present; then
        // d^3 = d^2 d = c^2 d = c (a d) = a (a d) = d, and d^2 = c^2.
        a += c;
        c = 0;
        if d % 2 == 0 {
            d = 0;
            c = 2;
        } else {
            d = 1;
        }
    }
    if d == 1 {
        // b^2 d = d.
        b %= 2;
    } else if c > 0 {
        // c^3 = a c^2 (so c^4 = c^2) and b^2 c = c.
        if c > 2 {
            a += c - 2;
            c = 2;
        }
        b %= 2;
    } else if b > 2 {
        // b^3 = b.
        b = 2 - b % 2;
    }
    [a % 2, b, c, d]
}

/// The monoid with its multiplication table and P-positions.
#[derive(Clone, Debug)]
pub(crate) struct Quotient {
    words: Vec<Word>,
    mul: [[u8; ORDER]; ORDER],
    p_mask: u32,
}

impl Default for Quotient {
    fn default() -> Self {
        Self::new()
    }
}

impl Quotient {
    /// Builds the monoid from its presentation.
    pub(crate) fn new() -> Quotient {
        let mut words: Vec<Word> = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..3 {
                    for l in 0..2 {
                        let w = normal_form([i, j, k, l]);
                        if !words.contains(&w) {
                            words.push(w);
                        }
                    }
                }
            }
        }
        // Identity first, then by total degree, for readable tables.
        words.sort_by_key(|w| (w[1] + w[2] + w[3], w[3], w[2], w[1], w[0]));
        debug_assert_eq!(words.len(), ORDER);
        let index = |w: Word| words.iter().position(|&x| x == w);
        let mut mul = [[0u8; ORDER]; ORDER];
        for (x, wx) in words.iter().enumerate() {
            for (y, wy) in words.iter().enumerate() {
                let w = normal_form([wx[0] + wy[0], wx[1] + wy[1], wx[2] + wy[2], wx[3] + wy[3]]);
                mul[x][y] = index(w).unwrap_or(0) as u8;
            }
        }
        let mut p_mask = 0;
        for p in [[1, 0, 0, 0], [0, 2, 0, 0], [0, 1, 1, 0], [0, 0, 2, 0]] {
            if let Some(i) = index(p) {
                p_mask |= 1 << i;
            }
        }
        Quotient { words, mul, p_mask }
    }

    /// Every element, identity first.
    pub(crate) fn elements(&self) -> impl Iterator<Item = Element> {
        (0..self.words.len() as u8).map(Element)
    }

    /// The identity: the value of a dead board (a game with no moves).
    pub(crate) fn identity(&self) -> Element {
        Element(0)
    }

    /// The product `x y`.
    #[inline]
    pub(crate) fn mul(&self, x: Element, y: Element) -> Element {
        Element(self.mul[x.index()][y.index()])
    }

    /// Whether a sum with product `x` is lost for the player to move.
    #[inline]
    pub(crate) fn is_p(&self, x: Element) -> bool {
        self.p_mask & (1 << x.0) != 0
    }

    /// The element's normal form, e.g. `ab^2`, `c^2`, `1`.
    pub(crate) fn name(&self, x: Element) -> String {
        let w = self.words[x.index()];
        let mut s = String::new();
        for (g, &e) in ['a', 'b', 'c', 'd'].iter().zip(w.iter()) {
            match e {
                0 => {}
                1 => s.push(*g),
                _ => s.push_str(&format!("{g}^{e}")),
            }
        }
        if s.is_empty() {
            s.push('1');
        }
        s
    }

    /// The element with this name (as [`Quotient::name`] writes it).
    pub(crate) fn by_name(&self, name: &str) -> Option<Element> {
        self.elements().find(|&x| self.name(x) == name)
    }
}

/// Derives the value of every one of the 512 board states (dead boards are
/// the identity) from the brute-force solver, as described in the module
/// docs. Fails only if no assignment explains the solver's outcomes, which
/// would mean the presentation is wrong.
pub(crate) fn derive_values(q: &Quotient) -> Result<Vec<Element>, String> {
    let mut solver = Solver::new();
    let classes = live_classes();
    let fitted = fit_values(q, &mut solver, &classes, 1)?;
    let values = fitted
        .into_iter()
        .next()
        .ok_or("no board values fit the solver's outcomes")?;
    (0..512u16)
        .map(|s| {
            if is_dead_board(s) {
                return Ok(q.identity());
            }
            classes
                .binary_search(&canonical_board(s))
                .map(|i| values[i])
                .map_err(|_| format!("board {s:09b} has no class"))
        })
        .collect()
}

/// Finds up to `limit` assignments of values to `classes` (live boards up to
/// symmetry) such that for every sum of one, two or three boards, the
/// product is a P-position exactly when the solver says the player to move
/// loses. Backtracking in class order, elements in index order.
pub(crate) fn fit_values(
    q: &Quotient,
    solver: &mut Solver,
    classes: &[u16],
    limit: usize,
) -> Result<Vec<Vec<Element>>, String> {
    let n = classes.len();
    // alone[i]: the player to move loses board i alone; lost[i][j]: loses
    // boards i + j (the diagonal is two copies of one board).
    let alone: Vec<bool> = classes.iter().map(|&b| !solver.mover_wins(&[b])).collect();
    let mut lost = vec![vec![false; n]; n];
    for i in 0..n {
        for j in i..n {
            let l = !solver.mover_wins(&[classes[i], classes[j]]);
            lost[i][j] = l;
            lost[j][i] = l;
        }
    }
    // lost3[(i * n + j) * n + k]: the player to move loses boards i + j + k.
    let mut lost3 = vec![false; n * n * n];
    for i in 0..n {
        for j in i..n {
            for k in j..n {
                let l = !solver.mover_wins(&[classes[i], classes[j], classes[k]]);
                for (x, y, z) in [
                    (i, j, k),
                    (i, k, j),
                    (j, i, k),
                    (j, k, i),
                    (k, i, j),
                    (k, j, i),
                ] {
                    lost3[(x * n + y) * n + z] = l;
                }
            }
        }
    }
    let elements: Vec<Element> = q.elements().collect();
    let is_p = |x: Element| q.is_p(x);
    let fits = |i: usize, x: Element, chosen: &[Element]| {
        let xx = q.mul(x, x);
        if is_p(x) != alone[i]
            || is_p(xx) != lost[i][i]
            || is_p(q.mul(xx, x)) != lost3[(i * n + i) * n + i]
        {
            return false;
        }
        for (j, &y) in chosen.iter().enumerate() {
            let xy = q.mul(x, y);
            if is_p(xy) != lost[i][j] || is_p(q.mul(xx, y)) != lost3[(i * n + i) * n + j] {
                return false;
            }
            for (k, &z) in chosen.iter().enumerate().skip(j) {
                if is_p(q.mul(xy, z)) != lost3[(i * n + j) * n + k] {
                    return false;
                }
            }
        }
        true
    };
    let mut found = Vec::new();
    // Iterative backtracking: next[i] is the next element index to try at depth i.
    let mut chosen: Vec<Element> = Vec::with_capacity(n);
    let mut next = vec![0usize; n + 1];
    loop {
        let depth = chosen.len();
        if depth == n {
            found.push(chosen.clone());
            if found.len() >= limit {
                break;
            }
            chosen.pop();
            continue;
        }
        let start = next[depth];
        match (start..elements.len()).find(|&e| fits(depth, elements[e], &chosen)) {
            Some(e) => {
                next[depth] = e + 1;
                next[depth + 1] = 0;
                chosen.push(elements[e]);
            }
            None => {
                if depth == 0 {
                    break;
                }
                chosen.pop();
            }
        }
    }
    if found.is_empty() {
        Err("no assignment of quotient elements explains every 1- to 3-board outcome".into())
    } else {
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_presentation_gives_an_18_element_commutative_monoid() {
        let q = Quotient::new();
        let all: Vec<Element> = q.elements().collect();
        assert_eq!(all.len(), ORDER);
        let one = q.identity();
        assert_eq!(q.name(one), "1");
        for &x in &all {
            assert_eq!(q.mul(one, x), x);
            for &y in &all {
                assert_eq!(q.mul(x, y), q.mul(y, x));
                for &z in &all {
                    assert_eq!(q.mul(q.mul(x, y), z), q.mul(x, q.mul(y, z)));
                }
            }
        }
        let e = |s: &str| q.by_name(s).unwrap_or_else(|| panic!("no element {s}"));
        let (a, b, c, d) = (e("a"), e("b"), e("c"), e("d"));
        let m = |x, y| q.mul(x, y);
        // The defining relations hold.
        assert_eq!(m(a, a), one);
        assert_eq!(m(m(b, b), b), b);
        assert_eq!(m(m(b, b), c), c);
        assert_eq!(m(m(c, c), c), m(a, m(c, c)));
        assert_eq!(m(m(b, b), d), d);
        assert_eq!(m(c, d), m(a, d));
        assert_eq!(m(d, d), m(c, c));
        // Four P-positions, and 1 (no boards left) is not one: the player
        // to move there has already won.
        let p: Vec<String> = all
            .iter()
            .filter(|&&x| q.is_p(x))
            .map(|&x| q.name(x))
            .collect();
        assert_eq!(p, ["a", "b^2", "bc", "c^2"]);
        // The quotient is reduced: no two elements behave the same in every sum.
        for &x in &all {
            for &y in &all {
                if x != y {
                    assert!(
                        all.iter().any(|&z| q.is_p(m(x, z)) != q.is_p(m(y, z))),
                        "{} and {} are indistinguishable",
                        q.name(x),
                        q.name(y)
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod brute_force {
    use super::super::mover_wins;
    use super::*;
    use crate::game::Notakto;
    use rand::SeedableRng;

    /// Every automorphism of the monoid that keeps the P-positions, as a
    /// permutation of element indices. Generators a, b, c, d fix it.
    fn automorphisms(q: &Quotient) -> Vec<Vec<Element>> {
        let all: Vec<Element> = q.elements().collect();
        let gens: Vec<Element> = ["a", "b", "c", "d"]
            .iter()
            .map(|g| q.by_name(g).unwrap())
            .collect();
        let mut out = Vec::new();
        for img in 0..ORDER.pow(4) {
            let images = [img % 18, img / 18 % 18, img / 324 % 18, img / 5832].map(|i| all[i]);
            let mut sigma = vec![None; ORDER];
            // Map each element's normal form word through the generator images.
            for &x in &all {
                let w = q.words[x.index()];
                let mut y = q.identity();
                for (g, &e) in images.iter().zip(w.iter()) {
                    for _ in 0..e {
                        y = q.mul(y, *g);
                    }
                }
                sigma[x.index()] = Some(y);
            }
            let sigma: Vec<Element> = sigma.into_iter().flatten().collect();
            let bijective = all.iter().all(|x| sigma.contains(x));
            let hom = all.iter().all(|&x| {
                all.iter().all(|&y| {
                    sigma[q.mul(x, y).index()] == q.mul(sigma[x.index()], sigma[y.index()])
                })
            });
            let keeps_p = all.iter().all(|&x| q.is_p(x) == q.is_p(sigma[x.index()]));
            if bijective && hom && keeps_p {
                out.push(sigma);
            }
        }
        assert!(out.iter().any(|s| (0..ORDER).all(|i| s[i].index() == i)));
        let _ = gens;
        out
    }

    #[test]
    fn values_are_unique_up_to_automorphism() {
        let q = Quotient::new();
        let classes = live_classes();
        assert_eq!(classes.len(), 46, "live boards up to symmetry");
        let fits = fit_values(&q, &mut Solver::new(), &classes, 1000).unwrap();
        let autos = automorphisms(&q);
        assert!(
            fits.len() > 1 && fits.len() <= autos.len(),
            "{} fits",
            fits.len()
        );
        for f in &fits {
            assert!(
                autos
                    .iter()
                    .any(|s| f.iter().zip(&fits[0]).all(|(x, y)| *x == s[y.index()])),
                "two fits that no automorphism relates"
            );
        }
    }

    #[test]
    fn known_boards_have_the_papers_values() {
        let q = Quotient::new();
        let v = derive_values(&q).unwrap();
        // The empty board is c, a centre X is c^2 (a P-position: the first
        // player wins one board by taking the centre), and a board whose every
        // move kills it is a (like a single-move heap).
        assert_eq!(q.name(v[0]), "c");
        assert_eq!(q.name(v[0b000_010_000]), "c^2");
        assert_eq!(v[0b000_000_111], q.identity());
        let mut forced = 0;
        for s in 0..512u16 {
            let mut empty = (0..9).filter(|c| s & (1 << c) == 0);
            if !is_dead_board(s) && empty.all(|c| is_dead_board(s | 1 << c)) {
                forced += 1;
                assert_eq!(q.name(v[s as usize]), "a", "{s:09b}");
            }
        }
        assert!(forced > 0);
    }

    #[test]
    fn the_bots_constant_tables_are_the_derived_quotient() {
        use super::super::{MUL, P_SET, VALUE};
        let q = Quotient::new();
        let derived = derive_values(&q).unwrap();
        // Rename the constants' elements to ours: first through the board
        // values, then through products, checking that every step agrees.
        let mut phi: Vec<Option<Element>> = vec![None; ORDER];
        phi[0] = Some(q.identity());
        let assign = |phi: &mut Vec<Option<Element>>, k: usize, e: Element| match phi[k] {
            None => phi[k] = Some(e),
            Some(old) => assert_eq!(
                old,
                e,
                "constant element {k} is both {} and {}",
                q.name(old),
                q.name(e)
            ),
        };
        for s in 0..512 {
            assign(&mut phi, VALUE[s] as usize, derived[s]);
        }
        for _ in 0..ORDER {
            for x in 0..ORDER {
                for y in 0..ORDER {
                    if let (Some(ex), Some(ey)) = (phi[x], phi[y]) {
                        assign(&mut phi, MUL[x][y] as usize, q.mul(ex, ey));
                    }
                }
            }
        }
        let phi: Vec<Element> = phi
            .into_iter()
            .map(|e| e.expect("every element is a product of board values"))
            .collect();
        let mut image = phi.clone();
        image.sort();
        image.dedup();
        assert_eq!(image.len(), ORDER, "the renaming is a bijection");
        for x in 0..ORDER {
            assert_eq!(P_SET & (1 << x) != 0, q.is_p(phi[x]), "P-position {x}");
            for y in 0..ORDER {
                assert_eq!(phi[MUL[x][y] as usize], q.mul(phi[x], phi[y]));
            }
        }
    }

    /// Checks the bot's verdict on every multiset of `size` live boards up
    /// to symmetry; returns how many there were.
    fn check_all_sums(solver: &mut Solver, classes: &[u16], size: usize) -> usize {
        let n = classes.len();
        let mut idx = vec![0usize; size];
        let mut checked = 0;
        loop {
            let boards: Vec<u16> = idx.iter().map(|&i| classes[i]).collect();
            let pos = Notakto::from_boards(&boards).unwrap();
            assert_eq!(mover_wins(&pos), solver.mover_wins(&boards), "{pos}");
            checked += 1;
            // Next non-decreasing index tuple.
            let Some(p) = (0..size).rev().find(|&p| idx[p] + 1 < n) else {
                return checked;
            };
            idx[p] += 1;
            for r in p + 1..size {
                idx[r] = idx[p];
            }
        }
    }

    #[test]
    fn verdicts_agree_with_brute_force_on_every_sum_of_up_to_four_boards() {
        let classes = live_classes();
        let mut solver = Solver::new();
        let mut total = 0;
        for size in 1..=4 {
            total += check_all_sums(&mut solver, &classes, size);
        }
        // C(46,1) + C(47,2) + C(48,3) + C(49,4) multisets.
        assert_eq!(total, 46 + 1081 + 17296 + 211876);
    }

    #[test]
    fn verdicts_agree_with_brute_force_on_sampled_sums_of_five_and_six_boards() {
        // The boards are partly filled so that the brute force stays a
        // matter of seconds.
        let mut solver = Solver::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let classes = live_classes();
        for (size, min_x) in [(5usize, 2u32), (6, 3)] {
            let pool: Vec<u16> = classes
                .iter()
                .copied()
                .filter(|b| b.count_ones() >= min_x)
                .collect();
            for _ in 0..1000 {
                let boards: Vec<u16> = (0..size)
                    .map(|_| pool[rand::Rng::random_range(&mut rng, 0..pool.len())])
                    .collect();
                let pos = Notakto::from_boards(&boards).unwrap();
                assert_eq!(mover_wins(&pos), solver.mover_wins(&boards), "{pos}");
            }
        }
    }
}
