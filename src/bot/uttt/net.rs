#![cfg_attr(not(feature = "lab"), allow(dead_code))]
//! The networks of `optimal`: a value network (the chances of the player
//! to move) and a policy network (a logit for each move), both
//! multilayer perceptrons over the same sparse binary features of a
//! position (stones on the open boards, the macro board, the forced board,
//! and the boards each player can win at once or would win the game with).
//!
//! The first layer is a sum of the weight rows of the features that are
//! on (20-80 in a position), in 16-bit fixed point; with the code compiled
//! for AVX2 where the CPU has it, a value costs about 0.4 microseconds
//! and a policy 0.2 (`cargo bench --bench uttt -- network`), less than an
//! informed playout. The AVX2 code computes exactly what the
//! portable code does (no fused multiply-adds, the same order of sums), so
//! that searches are the same on every machine. The weights ship with
//! the crate as data (`value_net.bin`, `policy_net.bin`), made by the tools
//! in the lab crate (lab/src/net_tools.rs): self-play data, then training
//! (lab/NOTEBOOK.md gives the commands and the figures). Only the `lab`
//! feature uses the functions that build, save and load networks.

use std::sync::OnceLock;

use crate::game::grid::{FULL, SYMMETRIES};
use crate::game::uttt::{threats, Uttt, UtttMove};
use crate::game::Game;

/// Features: the mover's and the opponent's stones on open boards (81
/// each), boards won by the mover, by the opponent and drawn (9 each), the
/// forced board (9, and one for a free choice), open boards the mover and
/// the opponent can win at once (9 each), open boards whose win would win
/// the game for the mover and for the opponent (9 each).
pub const INPUTS: usize = 235;
/// The first hidden layer's width.
pub const H1: usize = 128;
/// The second hidden layer's width.
pub const H2: usize = 32;

const MINE: usize = 0;
const THEIRS: usize = 81;
const WON_MINE: usize = 162;
const WON_THEIRS: usize = 171;
const DRAWN: usize = 180;
const FORCED: usize = 189;
const CAN_WIN_MINE: usize = 199;
const CAN_WIN_THEIRS: usize = 208;
const GAME_MINE: usize = 217;
const GAME_THEIRS: usize = 226;
const _: () = assert!(GAME_THEIRS + 9 == INPUTS);

/// The most features a position can have on.
pub const MAX_ACTIVE: usize = 81 + 27 + 1 + 36;

/// The value network's file starts with these bytes.
const VALUE_MAGIC: &[u8; 8] = b"UTTTNET1";
/// The policy network's file starts with these bytes.
const POLICY_MAGIC: &[u8; 8] = b"UTTTPOL1";

/// The fixed-point scale of the first layer: a weight of 1 is 256. The
/// weights stay below 3 and a position's sums below 20 or so, far from
/// the 128 where an `i16` would overflow; a test checks the fixed-point
/// evaluation against the floating-point one.
const SCALE: f32 = 256.0;

/// The features of `pos` that are on, from the mover's side, written to
/// `out`; returns how many.
pub fn features(pos: &Uttt, out: &mut [u16; MAX_ACTIVE]) -> usize {
    let me = pos.to_move();
    let them = me.other();
    let closed = pos.closed();
    let open = FULL & !closed;
    let (won_me, won_them) = (pos.won(me), pos.won(them));
    let mut n = 0;
    let mut push = |f: usize| {
        out[n] = f as u16;
        n += 1;
    };
    let mut can_me = 0u16;
    let mut can_them = 0u16;
    let mut bs = open;
    while bs != 0 {
        let b = bs.trailing_zeros() as usize;
        bs &= bs - 1;
        let (m, t) = (pos.cells(me, b), pos.cells(them, b));
        let empty = FULL & !(m | t);
        for (base, mut bits) in [(MINE, m), (THEIRS, t)] {
            while bits != 0 {
                push(base + b * 9 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        if threats(m) & empty != 0 {
            can_me |= 1 << b;
        }
        if threats(t) & empty != 0 {
            can_them |= 1 << b;
        }
    }
    let drawn = closed & !(won_me | won_them);
    let game_me = threats(won_me) & open;
    let game_them = threats(won_them) & open;
    for (base, mut bits) in [
        (WON_MINE, won_me),
        (WON_THEIRS, won_them),
        (DRAWN, drawn),
        (CAN_WIN_MINE, can_me),
        (CAN_WIN_THEIRS, can_them),
        (GAME_MINE, game_me),
        (GAME_THEIRS, game_them),
    ] {
        while bits != 0 {
            push(base + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
    push(FORCED + pos.forced().map_or(9, usize::from));
    n
}

/// Where symmetry `k` (of `grid::SYMMETRIES`, applied to the macro board
/// and every local board at once) takes feature `f`.
pub fn map_feature(f: usize, k: usize) -> usize {
    let s = &SYMMETRIES[k % 8];
    match f {
        _ if f < WON_MINE => {
            let (base, rest) = (f / 81 * 81, f % 81);
            base + map_cell(rest, k)
        }
        _ if (FORCED..FORCED + 10).contains(&f) => {
            let b = f - FORCED;
            FORCED + if b < 9 { s[b] as usize } else { 9 }
        }
        _ => {
            // Blocks of nine boards, from WON_MINE to FORCED and from
            // CAN_WIN_MINE on.
            let start = if f < FORCED { WON_MINE } else { CAN_WIN_MINE };
            let base = start + (f - start) / 9 * 9;
            base + s[(f - start) % 9] as usize
        }
    }
}

/// Where symmetry `k` takes the cell `board * 9 + cell` (a move's index in
/// the policy).
pub fn map_cell(i: usize, k: usize) -> usize {
    let s = &SYMMETRIES[k % 8];
    s[i / 9 % 9] as usize * 9 + s[i % 9] as usize
}

/// Whether the CPU has AVX2, for the networks' AVX2 code.
fn cpu_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[inline]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// A network's file: `magic`, the widths as little-endian `u32`, then
/// the parameters as little-endian `f32`, in the order of the network's
/// `flatten`.
fn file_bytes(magic: &[u8; 8], widths: &[usize], params: &[f32]) -> Vec<u8> {
    let mut out = magic.to_vec();
    for &d in widths {
        out.extend_from_slice(&(d as u32).to_le_bytes());
    }
    for x in params {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// The parameters of a file written by [`file_bytes`], if it has `magic`,
/// `widths` and `count` parameters.
fn file_params(
    bytes: &[u8],
    magic: &[u8; 8],
    widths: &[usize],
    count: usize,
) -> Result<Vec<f32>, String> {
    let head = 8 + 4 * widths.len();
    let what = String::from_utf8_lossy(magic);
    if bytes.len() < head || &bytes[..8] != magic {
        return Err(format!("not a {what} network file"));
    }
    let got: Vec<usize> = bytes[8..head]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    if got != widths {
        return Err(format!(
            "{what} network of widths {got:?}, this build has {widths:?}"
        ));
    }
    if bytes.len() != head + 4 * count {
        return Err(format!(
            "{what} network file of {} bytes, expected {}",
            bytes.len(),
            head + 4 * count
        ));
    }
    Ok(bytes[head..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Reads the file at `path` with `read`; the error names the file.
fn load_file<N>(path: &str, read: fn(&[u8]) -> Result<N, String>) -> Result<N, String> {
    std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| read(&b))
        .map_err(|e| format!("{path}: {e}"))
}

/// The first layer, common to both networks: one row of `H1` weights per
/// feature and the biases, in floating point (the model, as trained) and
/// in fixed point (times [`SCALE`]; what the evaluation sums: half the
/// memory and twice the lanes of `f32`).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Layer1 {
    pub(super) w: Vec<[f32; H1]>,
    pub(super) b: [f32; H1],
    q: Vec<[i16; H1]>,
    qb: [i16; H1],
}

impl Layer1 {
    /// The flat parameters' count: `w` by feature, then `b`.
    pub(super) const PARAMS: usize = INPUTS * H1 + H1;

    fn from_flat(p: &[f32]) -> Layer1 {
        let mut l = Layer1 {
            w: p[..INPUTS * H1]
                .chunks_exact(H1)
                .map(|c| c.try_into().unwrap_or([0.0; H1]))
                .collect(),
            b: p[INPUTS * H1..Self::PARAMS].try_into().unwrap_or([0.0; H1]),
            q: Vec::new(),
            qb: [0; H1],
        };
        let q = |x: f32| (x * SCALE).round().clamp(-32767.0, 32767.0) as i16;
        l.q = l.w.iter().map(|row| row.map(q)).collect();
        l.qb = l.b.map(q);
        l
    }

    fn flatten_into(&self, p: &mut Vec<f32>) {
        for row in &self.w {
            p.extend_from_slice(row);
        }
        p.extend_from_slice(&self.b);
    }

    /// The layer's sums for the features `active`, in fixed point.
    #[inline(always)]
    fn sums(&self, active: &[u16]) -> [i16; H1] {
        let mut h = self.qb;
        for &f in active {
            let row = &self.q[f as usize];
            for k in 0..H1 {
                h[k] = h[k].wrapping_add(row[k]);
            }
        }
        h
    }
}

/// The first-layer unit `k`'s activation: its sum after the ReLU, in
/// floating point.
#[inline(always)]
fn unit(h: &[i16; H1], k: usize) -> f32 {
    h[k].max(0) as f32 * (1.0 / SCALE)
}

/// The value network: the chances of the player to move.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueNet {
    pub(super) l1: Layer1,
    /// Second-layer weights, one row per unit of the first layer:
    /// `w2[k][j]` weighs first-layer unit `k` in second-layer unit `j`.
    pub(super) w2: Vec<[f32; H2]>,
    pub(super) b2: [f32; H2],
    pub(super) w3: [f32; H2],
    pub(super) b3: f32,
    /// Whether this CPU has AVX2.
    avx2: bool,
}

impl ValueNet {
    /// The flat parameters' count: the first layer, then the second's
    /// weights by second-layer unit (`H1` each) and biases, then the
    /// output's weights and bias.
    pub const PARAMS: usize = Layer1::PARAMS + H2 * H1 + H2 + H2 + 1;

    /// A network of zeros (its value is 0.5 everywhere).
    pub fn zeros() -> ValueNet {
        ValueNet::from_flat(&[0.0; ValueNet::PARAMS])
    }

    /// The network of the flat parameters `p` (see [`ValueNet::PARAMS`];
    /// `p` must hold that many).
    pub fn from_flat(p: &[f32]) -> ValueNet {
        let mut at = Layer1::PARAMS;
        let l1 = Layer1::from_flat(&p[..at]);
        let mut w2 = vec![[0f32; H2]; H1];
        for j in 0..H2 {
            for (k, row) in w2.iter_mut().enumerate() {
                row[j] = p[at + k];
            }
            at += H1;
        }
        let b2 = p[at..at + H2].try_into().unwrap_or([0.0; H2]);
        let w3 = p[at + H2..at + 2 * H2].try_into().unwrap_or([0.0; H2]);
        ValueNet {
            l1,
            w2,
            b2,
            w3,
            b3: p[at + 2 * H2],
            avx2: cpu_has_avx2(),
        }
    }

    /// The flat parameters (see [`ValueNet::PARAMS`]).
    pub fn flatten(&self) -> Vec<f32> {
        let mut p = Vec::with_capacity(Self::PARAMS);
        self.l1.flatten_into(&mut p);
        for j in 0..H2 {
            p.extend(self.w2.iter().map(|row| row[j]));
        }
        p.extend_from_slice(&self.b2);
        p.extend_from_slice(&self.w3);
        p.push(self.b3);
        p
    }

    /// The network built into the crate.
    pub fn builtin() -> &'static ValueNet {
        static NET: OnceLock<ValueNet> = OnceLock::new();
        NET.get_or_init(
            || match ValueNet::from_bytes(include_bytes!("value_net.bin")) {
                Ok(net) => net,
                // The file is part of the crate; a test checks that it loads.
                Err(e) => panic!("the built-in value network does not load: {e}"),
            },
        )
    }

    /// The output's logit for the features `active`.
    #[inline]
    pub fn logit(&self, active: &[u16]) -> f32 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { self.logit_avx2(active) };
        }
        self.forward(active)
    }

    /// [`ValueNet::logit`] compiled for AVX2, twice the vector width of
    /// the baseline x86-64 build (the same arithmetic in the same order).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn logit_avx2(&self, active: &[u16]) -> f32 {
        self.forward(active)
    }

    /// The forward pass: the first layer sums the rows of the features
    /// that are on; the second adds each first-layer unit's row scaled by
    /// its activation, so that no step needs a sum across a vector.
    #[inline(always)]
    fn forward(&self, active: &[u16]) -> f32 {
        let h = self.l1.sums(active);
        // Two running sums, over the even and the odd first-layer units,
        // so that consecutive multiply-adds do not wait on each other.
        let (mut even, mut odd) = (self.b2, [0f32; H2]);
        for k in (0..H1).step_by(2) {
            let (x0, x1) = (unit(&h, k), unit(&h, k + 1));
            let (r0, r1) = (&self.w2[k], &self.w2[k + 1]);
            for j in 0..H2 {
                even[j] += x0 * r0[j];
                odd[j] += x1 * r1[j];
            }
        }
        let mut out = self.b3;
        for j in 0..H2 {
            out += self.w3[j] * (even[j] + odd[j]).max(0.0);
        }
        out
    }

    /// The expected score (a win 1, a draw 0.5) of the player to move in
    /// the unfinished `pos`.
    pub fn value(&self, pos: &Uttt) -> f32 {
        let mut f = [0u16; MAX_ACTIVE];
        let n = features(pos, &mut f);
        sigmoid(self.logit(&f[..n]))
    }

    /// The network as a file: `UTTTNET1`, the widths (inputs, first and
    /// second layer) as little-endian `u32`, then the flat parameters as
    /// little-endian `f32`.
    pub fn to_bytes(&self) -> Vec<u8> {
        file_bytes(VALUE_MAGIC, &[INPUTS, H1, H2], &self.flatten())
    }

    /// Reads a network written by [`ValueNet::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<ValueNet, String> {
        file_params(bytes, VALUE_MAGIC, &[INPUTS, H1, H2], Self::PARAMS)
            .map(|p| ValueNet::from_flat(&p))
    }

    /// Reads the network file at `path`; the error names the file.
    pub fn load(path: &str) -> Result<ValueNet, String> {
        load_file(path, ValueNet::from_bytes)
    }
}

/// The policy network: a logit for each move of a position, from the
/// first layer's activations (one row of `H1` weights and a bias per cell
/// of the 81).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyNet {
    pub(super) l1: Layer1,
    pub(super) wp: Vec<[f32; H1]>,
    pub(super) bp: [f32; 81],
    avx2: bool,
}

impl PolicyNet {
    /// The flat parameters' count: the first layer, then the move rows by
    /// cell (`board * 9 + cell`) and their biases.
    pub const PARAMS: usize = Layer1::PARAMS + 81 * H1 + 81;

    /// A network of zeros (every move alike).
    pub fn zeros() -> PolicyNet {
        PolicyNet::from_flat(&[0.0; PolicyNet::PARAMS])
    }

    /// The network of the flat parameters `p` (see [`PolicyNet::PARAMS`];
    /// `p` must hold that many).
    pub fn from_flat(p: &[f32]) -> PolicyNet {
        let at = Layer1::PARAMS;
        PolicyNet {
            l1: Layer1::from_flat(&p[..at]),
            wp: p[at..at + 81 * H1]
                .chunks_exact(H1)
                .map(|c| c.try_into().unwrap_or([0.0; H1]))
                .collect(),
            bp: p[at + 81 * H1..Self::PARAMS]
                .try_into()
                .unwrap_or([0.0; 81]),
            avx2: cpu_has_avx2(),
        }
    }

    /// The flat parameters (see [`PolicyNet::PARAMS`]).
    pub fn flatten(&self) -> Vec<f32> {
        let mut p = Vec::with_capacity(Self::PARAMS);
        self.l1.flatten_into(&mut p);
        for row in &self.wp {
            p.extend_from_slice(row);
        }
        p.extend_from_slice(&self.bp);
        p
    }

    /// The network built into the crate.
    pub fn builtin() -> &'static PolicyNet {
        static NET: OnceLock<PolicyNet> = OnceLock::new();
        NET.get_or_init(
            || match PolicyNet::from_bytes(include_bytes!("policy_net.bin")) {
                Ok(net) => net,
                // The file is part of the crate; a test checks that it loads.
                Err(e) => panic!("the built-in policy network does not load: {e}"),
            },
        )
    }

    /// Fills `out[i]` with the logit of `moves[i]`, moves of `pos`.
    pub fn logits(&self, pos: &Uttt, moves: &[UtttMove], out: &mut [f32]) {
        let mut f = [0u16; MAX_ACTIVE];
        let n = features(pos, &mut f);
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has the features the function is compiled for.
            unsafe { self.logits_avx2(&f[..n], moves, out) };
            return;
        }
        self.forward(&f[..n], moves, out);
    }

    /// [`PolicyNet::logits`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn logits_avx2(&self, active: &[u16], moves: &[UtttMove], out: &mut [f32]) {
        self.forward(active, moves, out);
    }

    #[inline(always)]
    fn forward(&self, active: &[u16], moves: &[UtttMove], out: &mut [f32]) {
        let sums = self.l1.sums(active);
        let mut h = [0f32; H1];
        for (k, x) in h.iter_mut().enumerate() {
            *x = unit(&sums, k);
        }
        for (&mv, slot) in moves.iter().zip(out.iter_mut()) {
            let i = (mv.board() as usize * 9 + mv.cell() as usize).min(80);
            let row = &self.wp[i];
            // Eight running sums, so that the multiply-adds overlap.
            let mut acc = [0f32; 8];
            for (x, w) in h.chunks_exact(8).zip(row.chunks_exact(8)) {
                for l in 0..8 {
                    acc[l] += x[l] * w[l];
                }
            }
            *slot = self.bp[i] + acc.iter().sum::<f32>();
        }
    }

    /// The network as a file: `UTTTPOL1`, the widths (inputs, first layer,
    /// moves) as little-endian `u32`, then the flat parameters as
    /// little-endian `f32`.
    pub fn to_bytes(&self) -> Vec<u8> {
        file_bytes(POLICY_MAGIC, &[INPUTS, H1, 81], &self.flatten())
    }

    /// Reads a network written by [`PolicyNet::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<PolicyNet, String> {
        file_params(bytes, POLICY_MAGIC, &[INPUTS, H1, 81], Self::PARAMS)
            .map(|p| PolicyNet::from_flat(&p))
    }

    /// Reads the network file at `path`; the error names the file.
    pub fn load(path: &str) -> Result<PolicyNet, String> {
        load_file(path, PolicyNet::from_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::uttt::tests::sample_positions;
    use crate::game::uttt::map_position_text;
    use crate::game::Game;

    fn sorted(mut v: Vec<u16>) -> Vec<u16> {
        v.sort_unstable();
        v
    }

    fn active(pos: &Uttt) -> Vec<u16> {
        let mut f = [0u16; MAX_ACTIVE];
        let n = features(pos, &mut f);
        f[..n].to_vec()
    }

    #[test]
    fn features_follow_the_symmetries() {
        for pos in sample_positions(21, 60) {
            let text = pos.to_string();
            for k in 0..8 {
                let image: Uttt = map_position_text(&text, k as u8)
                    .parse()
                    .expect("a symmetric image is a position");
                let mapped: Vec<u16> = active(&pos)
                    .iter()
                    .map(|&f| map_feature(f as usize, k) as u16)
                    .collect();
                assert_eq!(sorted(mapped), sorted(active(&image)), "{text} under {k}");
            }
        }
    }

    #[test]
    fn features_are_the_movers() {
        for pos in sample_positions(22, 40) {
            let f = active(&pos);
            assert_eq!(sorted(f.clone()), sorted(active(&pos.swapped())), "{pos}");
            assert!(f.iter().all(|&x| (x as usize) < INPUTS));
            let mut distinct = sorted(f.clone());
            distinct.dedup();
            assert_eq!(distinct.len(), f.len(), "{pos}: a feature twice");
        }
    }

    #[test]
    fn features_of_a_known_position() {
        // X won board 0; O to move is sent to board 4, where X has two in
        // a row (cells 0 and 1) and O one stone (cell 8).
        let mut cells = [b'.'; 81];
        for c in [0, 4, 8] {
            cells[c] = b'X';
        }
        cells[36] = b'X';
        cells[37] = b'X';
        cells[44] = b'O';
        for c in [9, 18, 27] {
            cells[c] = b'O';
        }
        let text = format!("{}/4/X........", String::from_utf8_lossy(&cells));
        let pos: Uttt = text.parse().expect("a position");
        let f = sorted(active(&pos));
        // O (the mover): stones 9, 18, 27 and 44; X: 36, 37 (board 0 is
        // closed, so its stones are not features).
        let want = sorted(vec![
            9,
            18,
            27,
            44,
            THEIRS as u16 + 36,
            THEIRS as u16 + 37,
            WON_THEIRS as u16,
            FORCED as u16 + 4,
            CAN_WIN_THEIRS as u16 + 4,
        ]);
        assert_eq!(f, want);
    }

    #[test]
    fn networks_round_trip_and_bad_files_are_refused() {
        let numbers =
            |n: usize| -> Vec<f32> { (0..n).map(|i| (i % 97) as f32 / 50.0 - 1.0).collect() };
        let value = ValueNet::from_flat(&numbers(ValueNet::PARAMS));
        assert_eq!(value.flatten(), numbers(ValueNet::PARAMS));
        let bytes = value.to_bytes();
        assert_eq!(ValueNet::from_bytes(&bytes), Ok(value));
        assert!(ValueNet::from_bytes(&bytes[..bytes.len() - 4]).is_err());
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        assert!(ValueNet::from_bytes(&wrong).is_err());
        let mut widths = bytes;
        widths[12] = 7;
        let err = ValueNet::from_bytes(&widths).expect_err("other widths");
        assert!(err.contains("widths"), "{err}");
        let policy = PolicyNet::from_flat(&numbers(PolicyNet::PARAMS));
        assert_eq!(policy.flatten(), numbers(PolicyNet::PARAMS));
        let bytes = policy.to_bytes();
        assert_eq!(PolicyNet::from_bytes(&bytes), Ok(policy));
        // Each network's file is refused as the other's.
        assert!(ValueNet::from_bytes(&bytes).is_err());
    }

    #[test]
    fn the_built_in_networks_load_and_their_fixed_point_sums_hold() {
        // A first-layer sum past the `i16` range would wrap around: the
        // fixed-point sums must stay with the floating-point ones.
        for l1 in [&ValueNet::builtin().l1, &PolicyNet::builtin().l1] {
            for pos in sample_positions(25, 300) {
                let f = active(&pos);
                let fixed = l1.sums(&f);
                for (k, &sum) in fixed.iter().enumerate() {
                    let exact: f32 = l1.b[k] + f.iter().map(|&x| l1.w[x as usize][k]).sum::<f32>();
                    let got = sum as f32 / SCALE;
                    assert!(
                        (got - exact).abs() < 0.05,
                        "{pos}: unit {k}: {got} against {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_avx2_code_computes_what_the_portable_code_does() {
        let numbers = |n: usize, m: usize| -> Vec<f32> {
            (0..n)
                .map(|i| ((i * m) % 101) as f32 / 200.0 - 0.25)
                .collect()
        };
        let value = ValueNet::from_flat(&numbers(ValueNet::PARAMS, 7));
        let policy = PolicyNet::from_flat(&numbers(PolicyNet::PARAMS, 13));
        for pos in sample_positions(24, 30) {
            let f = active(&pos);
            let portable = value.forward(&f);
            let moves = pos.legal_moves();
            let mut a = vec![0f32; moves.len()];
            let mut b = vec![0f32; moves.len()];
            policy.forward(&f, &moves, &mut a);
            policy.logits(&pos, &moves, &mut b);
            // `logit` and `logits` take the AVX2 code where the CPU has it.
            let fast = value.logit(&f);
            assert!(
                (portable - fast).abs() < 1e-3 * (1.0 + portable.abs()),
                "{pos}"
            );
            for (x, y) in a.iter().zip(&b) {
                assert!(
                    (x - y).abs() < 1e-3 * (1.0 + x.abs()),
                    "{pos}: {x} against {y}"
                );
            }
        }
    }

    #[test]
    fn a_network_of_zeros_is_undecided() {
        let net = ValueNet::zeros();
        for pos in sample_positions(23, 10) {
            assert_eq!(net.value(&pos), 0.5);
        }
    }
}
