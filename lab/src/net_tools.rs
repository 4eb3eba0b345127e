//! The networks' tools: self-play data (`referee-lab data`) and training
//! (`referee-lab train`). Both print what they do; the commands and the
//! settings of the shipped networks are in NOTEBOOK.md.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use referee::bot::uttt::lab::{
    features, map_cell, map_feature, Mcts, PolicyNet, SearchConfig, ValueNet, H1, H2, INPUTS,
    MAX_ACTIVE,
};
use referee::game::{Game, Outcome, Rules, Seat, Uttt, UtttMove};

/// FNV-1a over the bytes of `x`, from `h`: a game's seed from the run's.
fn mix(h: u64, x: u64) -> u64 {
    x.to_le_bytes()
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// A network file loaded for the rest of the run, if one is named.
fn net_file<N>(
    path: &Option<PathBuf>,
    load: fn(&str) -> Result<N, String>,
) -> anyhow::Result<Option<&'static N>> {
    match path {
        None => Ok(None),
        Some(p) => {
            let net = load(&p.to_string_lossy()).map_err(anyhow::Error::msg)?;
            Ok(Some(Box::leak(Box::new(net))))
        }
    }
}

/// A searched position of a data game: the search's value of it for the
/// mover and the root's moves with their visits.
type Seen = (Uttt, f32, Vec<(UtttMove, u32)>);

/// One self-play game for the data: positions with the searching
/// engine's value of them for the mover and its visits, and the game's
/// outcome.
fn data_game(
    cfg: SearchConfig,
    nets: (Option<&'static ValueNet>, Option<&'static PolicyNet>),
    seed: u64,
    max_plies: u32,
    sample_before: usize,
    rules: Rules,
) -> (Vec<Seen>, Option<Outcome>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    let mut engines = [Mcts::new(cfg, rng.random()), Mcts::new(cfg, rng.random())];
    for e in engines.iter_mut() {
        if let Some(net) = nets.0 {
            e.set_value_net(net);
        }
        if let Some(net) = nets.1 {
            e.set_policy_net(net);
        }
    }
    let mut pos = Uttt::new().under_rules(rules);
    for _ in 0..rng.random_range(0..=max_plies) {
        if let Some(mv) = pos.random_move(&mut rng) {
            pos.play_unchecked(mv);
        }
    }
    let mut seen = Vec::new();
    while !pos.is_over() {
        let engine = &mut engines[usize::from(pos.to_move() == Seat::Two)];
        let Some(best) = engine.search(&pos) else {
            break;
        };
        // A search settled without iterations (a win in one) has no tree
        // of this position.
        let visits = if engine.stats().iterations > 0 {
            engine.root_visits()
        } else {
            Vec::new()
        };
        if let Some(q) = engine.root_value(&pos) {
            seen.push((pos, q, visits.clone()));
        }
        let mut mv = best;
        // Early in the game, one move in four is drawn by the root's
        // visits, so that the games spread out.
        if pos.ply() < sample_before && rng.random_bool(0.25) {
            let total: u64 = visits.iter().map(|v| v.1 as u64).sum();
            if total > 0 {
                let mut r = rng.random_range(0..total);
                for &(m, v) in &visits {
                    if r < v as u64 {
                        mv = m;
                        break;
                    }
                    r -= v as u64;
                }
            }
        }
        pos.play_unchecked(mv);
    }
    (seen, pos.outcome())
}

/// Arguments of `referee-lab data`: self-play data for the networks, one
/// line per searched position, `<game> <position> <z> <q> <visits>`, z
/// the game's result for the mover (1, 0.5, 0), q the search's value of
/// the position for the mover and visits the root's moves and their
/// visits, `<board><cell>:<visits>` comma separated (`-` when the search
/// was settled without a tree). The engines are `optimal` at its defaults
/// but for the iterations and the networks.
#[derive(Args, Debug)]
pub struct DataArgs {
    /// Games to play.
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// Iterations a move.
    #[arg(long, default_value_t = 3000)]
    iters: u32,
    /// The run's seed.
    #[arg(long, default_value_t = 7070)]
    seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Random opening plies, from 0 to this.
    #[arg(long, default_value_t = 6)]
    plies: u32,
    /// Before this ply, one move in four is drawn by the root's visits.
    #[arg(long, default_value_t = 20)]
    sample: usize,
    /// The data file.
    #[arg(long, default_value = "target/uttt-net-data.txt")]
    out: PathBuf,
    /// The engines' value network file (default: the built-in one).
    #[arg(long)]
    value_net: Option<PathBuf>,
    /// The engines' policy network file (default: the built-in one).
    #[arg(long)]
    policy_net: Option<PathBuf>,
    /// The rule the games are played and scored under (`codingame`: a
    /// full board without a line goes to the player with more boards).
    #[arg(long, default_value = "standard", value_parser = parse_rules)]
    rules: Rules,
}

/// A rule's name (`standard` or `codingame`).
pub fn parse_rules(text: &str) -> Result<Rules, String> {
    text.parse().map_err(|e| format!("{e}"))
}

/// Runs `referee-lab data`.
pub fn data(a: &DataArgs) -> anyhow::Result<()> {
    let (games, seed, max_plies, sample_before) = (a.games, a.seed, a.plies, a.sample);
    let threads = a.threads.max(1);
    let net = net_file(&a.value_net, ValueNet::load).context("--value-net")?;
    let policy = net_file(&a.policy_net, PolicyNet::load).context("--policy-net")?;
    // The data's own sampling spreads the games; the engine's variety
    // stays off so that every move recorded is the search's choice.
    let cfg = SearchConfig {
        iterations: a.iters.max(1),
        vary_plies: 0,
        ..SearchConfig::optimal()
    };
    let out = a.out.display().to_string();
    let file = File::create(&a.out).with_context(|| out.clone())?;
    let writer = Mutex::new(BufWriter::new(file));
    let next = AtomicUsize::new(0);
    let lines = AtomicUsize::new(0);
    let failed = Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let g = next.fetch_add(1, Ordering::Relaxed);
                if g >= games {
                    break;
                }
                let (seen, outcome) = data_game(
                    cfg,
                    (net, policy),
                    mix(seed, g as u64),
                    max_plies,
                    sample_before,
                    a.rules,
                );
                let Some(outcome) = outcome else {
                    continue;
                };
                let mut text = String::new();
                for (pos, q, visits) in &seen {
                    let z = outcome.points(pos.to_move());
                    let v: Vec<String> = visits
                        .iter()
                        .map(|(m, n)| format!("{}{}:{n}", m.board(), m.cell()))
                        .collect();
                    let v = if v.is_empty() {
                        "-".into()
                    } else {
                        v.join(",")
                    };
                    text += &format!("{g} {pos} {z} {q:.4} {v}\n");
                }
                let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = w.write_all(text.as_bytes()) {
                    *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    next.store(games, Ordering::Relaxed);
                    break;
                }
                let n = lines.fetch_add(seen.len(), Ordering::Relaxed) + seen.len();
                if g % 100 == 99 {
                    eprintln!(
                        "{} games, {n} positions, {:.0} s",
                        g + 1,
                        started.elapsed().as_secs_f64()
                    );
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e).context(out);
    }
    writer
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .flush()
        .with_context(|| out.clone())?;
    println!(
        "{games} games, {} positions in {out}, {:.0} s",
        lines.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Offsets of the layers in the flat parameters of the value network
/// (`ValueNet::PARAMS`).
const W1: usize = 0;
const B1: usize = W1 + INPUTS * H1;
const W2: usize = B1 + H1;
const B2: usize = W2 + H2 * H1;
const W3: usize = B2 + H2;
const B3: usize = W3 + H2;
const PARAMS: usize = B3 + 1;
const _: () = assert!(PARAMS == ValueNet::PARAMS);

/// The first layer's sums (before the ReLU) of the flat network `p` for
/// the features `active`.
fn layer1_forward(p: &[f32], active: &[u16]) -> [f32; H1] {
    let mut a1 = [0f32; H1];
    a1.copy_from_slice(&p[B1..B1 + H1]);
    for &f in active {
        let row = &p[W1 + f as usize * H1..W1 + (f as usize + 1) * H1];
        for k in 0..H1 {
            a1[k] += row[k];
        }
    }
    a1
}

/// Adds to `g` the first layer's gradient, given the gradient `dh` of the
/// loss by its activations and its sums `a1` (the ReLU passes the
/// gradient where the sum is positive).
fn layer1_backward(g: &mut [f32], active: &[u16], a1: &[f32; H1], mut dh: [f32; H1]) {
    for k in 0..H1 {
        if a1[k] <= 0.0 {
            dh[k] = 0.0;
        }
        g[B1 + k] += dh[k];
    }
    for &f in active {
        let grow = &mut g[W1 + f as usize * H1..W1 + (f as usize + 1) * H1];
        for k in 0..H1 {
            grow[k] += dh[k];
        }
    }
}

/// The gradient through a unit that weighs the first layer's activations
/// `h` by the row of `p` at `at`, given the gradient `d` of its sum: adds
/// to the row's weights in `g` and to the activations' gradient `dh`.
fn row_backward(p: &[f32], g: &mut [f32], at: usize, d: f32, h: &[f32; H1], dh: &mut [f32; H1]) {
    let row = &p[at..at + H1];
    let grow = &mut g[at..at + H1];
    for k in 0..H1 {
        grow[k] += d * h[k];
        dh[k] += d * row[k];
    }
}

/// The logit of the flat network `p` for the features `active`, and with
/// `grad` the gradient of the cross-entropy against `target` (scaled by
/// `scale`) added to it; returns the logit.
fn forward_backward(
    p: &[f32],
    active: &[u16],
    target: f32,
    scale: f32,
    grad: Option<&mut [f32]>,
) -> f32 {
    let a1 = layer1_forward(p, active);
    let mut h1 = [0f32; H1];
    for k in 0..H1 {
        h1[k] = a1[k].max(0.0);
    }
    let mut a2 = [0f32; H2];
    let mut out = p[B3];
    for j in 0..H2 {
        let row = &p[W2 + j * H1..W2 + (j + 1) * H1];
        let mut s = p[B2 + j];
        for k in 0..H1 {
            s += row[k] * h1[k];
        }
        a2[j] = s;
        out += p[W3 + j] * s.max(0.0);
    }
    let Some(g) = grad else {
        return out;
    };
    let d = (1.0 / (1.0 + (-out).exp()) - target) * scale;
    g[B3] += d;
    let mut dh1 = [0f32; H1];
    for j in 0..H2 {
        if a2[j] <= 0.0 {
            continue;
        }
        g[W3 + j] += d * a2[j];
        let da2 = d * p[W3 + j];
        g[B2 + j] += da2;
        row_backward(p, g, W2 + j * H1, da2, &h1, &mut dh1);
    }
    layer1_backward(g, active, &a1, dh1);
    out
}

/// Cross-entropy of the prediction `p` against the soft label `y`.
fn cross_entropy(p: f32, y: f32) -> f64 {
    let p = (p as f64).clamp(1e-7, 1.0 - 1e-7);
    let y = y as f64;
    -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
}

/// Offsets in the flat parameters of the policy network
/// (`PolicyNet::PARAMS`): the first layer as the value network's, then the
/// move rows and their biases.
const WP: usize = B1 + H1;
const BP: usize = WP + 81 * H1;
const _: () = assert!(BP + 81 == PolicyNet::PARAMS);

/// The policy network's logits of the moves `moves` (cells, `board * 9 +
/// cell`) for the features `active`, written to `logits`, and with `grad`
/// the gradient of the cross-entropy against the move shares `shares`
/// (scaled by `scale`) added to it; returns the cross-entropy.
#[allow(clippy::too_many_arguments)]
fn policy_forward_backward(
    p: &[f32],
    active: &[u16],
    moves: &[u8],
    shares: &[f32],
    logits: &mut [f32],
    scale: f32,
    grad: Option<&mut [f32]>,
) -> f64 {
    let a1 = layer1_forward(p, active);
    let h = a1.map(|x| x.max(0.0));
    let mut top = f32::NEG_INFINITY;
    for (i, &m) in moves.iter().enumerate() {
        let row = &p[WP + m as usize * H1..WP + (m as usize + 1) * H1];
        let z = p[BP + m as usize] + row.iter().zip(&h).map(|(w, x)| w * x).sum::<f32>();
        logits[i] = z;
        top = top.max(z);
    }
    let n = moves.len();
    let total: f32 = logits[..n].iter().map(|&z| (z - top).exp()).sum();
    let log_total = total.ln() + top;
    let loss: f64 = shares
        .iter()
        .zip(&logits[..n])
        .map(|(&t, &z)| -(t as f64) * (z - log_total) as f64)
        .sum();
    let Some(g) = grad else {
        return loss;
    };
    let mut dh = [0f32; H1];
    for (i, &m) in moves.iter().enumerate() {
        let d = ((logits[i] - log_total).exp() - shares[i]) * scale;
        let m = m as usize;
        g[BP + m] += d;
        row_backward(p, g, WP + m * H1, d, &h, &mut dh);
    }
    layer1_backward(g, active, &a1, dh);
    loss
}

/// Training samples: features (flat, with offsets), the value's target,
/// the game's result and the search's value, and the root's moves (cells)
/// with their shares of the visits (flat, with offsets).
#[derive(Default)]
struct Samples {
    feats: Vec<u16>,
    start: Vec<u32>,
    target: Vec<f32>,
    z: Vec<f32>,
    q: Vec<f32>,
    moves: Vec<u8>,
    shares: Vec<f32>,
    move_start: Vec<u32>,
}

/// The index of the largest of `xs` (the first of equals).
fn argmax(xs: &[f32]) -> usize {
    (0..xs.len()).fold(0, |b, k| if xs[k] > xs[b] { k } else { b })
}

impl Samples {
    fn push(&mut self, pos: &Uttt, target: (f32, f32, f32), visits: &[(UtttMove, u32)]) {
        let mut f = [0u16; MAX_ACTIVE];
        let n = features(pos, &mut f);
        self.start.push(self.feats.len() as u32);
        self.feats.extend_from_slice(&f[..n]);
        self.target.push(target.0);
        self.z.push(target.1);
        self.q.push(target.2);
        self.move_start.push(self.moves.len() as u32);
        let total: u32 = visits.iter().map(|v| v.1).sum();
        for &(m, v) in visits {
            self.moves.push(m.board() * 9 + m.cell());
            self.shares.push(v as f32 / total.max(1) as f32);
        }
    }

    fn len(&self) -> usize {
        self.target.len()
    }

    fn active(&self, i: usize) -> &[u16] {
        let end = self
            .start
            .get(i + 1)
            .map_or(self.feats.len(), |&e| e as usize);
        &self.feats[self.start[i] as usize..end]
    }

    /// The root's moves and their shares of sample `i` (none when the
    /// data has no visits).
    fn policy(&self, i: usize) -> (&[u8], &[f32]) {
        let end = self
            .move_start
            .get(i + 1)
            .map_or(self.moves.len(), |&e| e as usize);
        let r = self.move_start[i] as usize..end;
        (&self.moves[r.clone()], &self.shares[r])
    }
}

/// The data files of `referee-lab data`, read into
/// training and held-out samples (one game in ten held out); the value's
/// target is `z_share` of the game's result and the rest of the search's
/// value.
fn load_samples(data: &[PathBuf], z_share: f32) -> anyhow::Result<(Samples, Samples)> {
    let (mut train, mut test) = (Samples::default(), Samples::default());
    for (file_no, path) in data.iter().enumerate() {
        let path = path.display();
        let file = File::open(path.to_string()).with_context(|| path.to_string())?;
        for (n, line) in BufReader::new(file).lines().enumerate() {
            let line = line.with_context(|| path.to_string())?;
            let w: Vec<&str> = line.split_whitespace().collect();
            if !(4..=5).contains(&w.len()) {
                bail!("{path}:{}: expected 4 or 5 fields: '{line}'", n + 1);
            }
            let bad = |k: usize| anyhow::anyhow!("{path}:{}: bad field {k}: '{line}'", n + 1);
            let g: u64 = w[0].parse().map_err(|_| bad(0))?;
            let pos: Uttt = w[1].parse().map_err(|_| bad(1))?;
            let z: f32 = w[2].parse().map_err(|_| bad(2))?;
            let q: f32 = w[3].parse().map_err(|_| bad(3))?;
            let mut visits = Vec::new();
            if let Some(list) = w.get(4).filter(|&&v| v != "-") {
                for item in list.split(',') {
                    let b = item.as_bytes();
                    let mv = (b.len() > 3 && b[2] == b':')
                        .then(|| UtttMove::new(b[0].wrapping_sub(b'0'), b[1].wrapping_sub(b'0')))
                        .flatten();
                    let v = item.get(3..).and_then(|v| v.parse::<u32>().ok());
                    match (mv, v) {
                        (Some(mv), Some(v)) => visits.push((mv, v)),
                        _ => return Err(bad(4)),
                    }
                }
            }
            let target = z_share * z + (1.0 - z_share) * q;
            let set = if mix(file_no as u64, g).is_multiple_of(10) {
                &mut test
            } else {
                &mut train
            };
            set.push(&pos, (target, z, q), &visits);
        }
    }
    eprintln!(
        "{} training positions, {} held out",
        train.len(),
        test.len()
    );
    Ok((train, test))
}

/// The network being trained.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Value,
    Policy,
}

impl Kind {
    fn params(self) -> usize {
        match self {
            Kind::Value => ValueNet::PARAMS,
            Kind::Policy => PolicyNet::PARAMS,
        }
    }

    /// The loss of sample `i` of `set` under a symmetry (`map`: features,
    /// `cells`: moves), with `grad` its gradient times `scale` added.
    fn loss(
        self,
        p: &[f32],
        set: &Samples,
        i: usize,
        (map, cells): (&[u16], &[u8]),
        scale: f32,
        grad: Option<&mut [f32]>,
    ) -> f64 {
        let mut active = [0u16; MAX_ACTIVE];
        let feats = set.active(i);
        for (a, &f) in active.iter_mut().zip(feats) {
            *a = map[f as usize];
        }
        let active = &active[..feats.len()];
        match self {
            Kind::Value => {
                let t = set.target[i];
                let o = forward_backward(p, active, t, scale, grad);
                cross_entropy(1.0 / (1.0 + (-o).exp()), t)
            }
            Kind::Policy => {
                let (moves, shares) = set.policy(i);
                let mut mapped = [0u8; 81];
                for (a, &m) in mapped.iter_mut().zip(moves) {
                    *a = cells[m as usize];
                }
                let mut logits = [0f32; 81];
                policy_forward_backward(
                    p,
                    active,
                    &mapped[..moves.len()],
                    shares,
                    &mut logits,
                    scale,
                    grad,
                )
            }
        }
    }

    /// Prints the held-out figures of the network `p`.
    fn report(self, p: &[f32], test: &Samples) {
        let n = test.len().max(1) as f64;
        match self {
            Kind::Value => {
                let (mut target_loss, mut z_loss, mut mean_loss) = (0.0, 0.0, 0.0);
                let mean = test.target.iter().map(|&t| t as f64).sum::<f64>() / n;
                for i in 0..test.len() {
                    let o = forward_backward(p, test.active(i), 0.0, 0.0, None);
                    let pr = 1.0 / (1.0 + (-o).exp());
                    target_loss += cross_entropy(pr, test.target[i]);
                    z_loss += cross_entropy(pr, test.z[i]);
                    mean_loss += cross_entropy(mean as f32, test.target[i]);
                }
                eprintln!(
                    "held out: {:.4} against the targets ({:.4} for their mean), {:.4} against \
                     the results",
                    target_loss / n,
                    mean_loss / n,
                    z_loss / n
                );
            }
            Kind::Policy => {
                let (mut loss, mut uniform) = (0.0, 0.0);
                let (mut top, mut count) = (0usize, 0usize);
                for i in 0..test.len() {
                    let (moves, shares) = test.policy(i);
                    if moves.len() < 2 {
                        continue;
                    }
                    count += 1;
                    let mut logits = [0f32; 81];
                    loss += policy_forward_backward(
                        p,
                        test.active(i),
                        moves,
                        shares,
                        &mut logits,
                        0.0,
                        None,
                    );
                    uniform += (moves.len() as f64).ln();
                    if argmax(&logits[..moves.len()]) == argmax(shares) {
                        top += 1;
                    }
                }
                let c = count.max(1) as f64;
                eprintln!(
                    "held out ({count} positions of 2 moves or more): cross-entropy {:.4} \
                     against the visit shares ({:.4} uniform); the most visited move \
                     first {:.1} %",
                    loss / c,
                    uniform / c,
                    100.0 * top as f64 / c
                );
            }
        }
    }

    /// The trained network's file.
    fn file(self, p: &[f32]) -> Vec<u8> {
        match self {
            Kind::Value => ValueNet::from_flat(p).to_bytes(),
            Kind::Policy => PolicyNet::from_flat(p).to_bytes(),
        }
    }
}

/// Trains a network of `kind` with Adam on `train` (each sample under a
/// random symmetry each epoch), printing the held-out figures after every
/// epoch; returns the parameters.
fn train(
    kind: Kind,
    a: &TrainArgs,
    train: &Samples,
    test: &Samples,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<Vec<f32>> {
    let epochs = a.epochs;
    let batch = a.batch.max(1);
    let lr0 = a.lr;
    let threads = a.threads.max(1);
    let params = kind.params();
    // Every feature's and every cell's image under every symmetry.
    let maps: Vec<Vec<u16>> = (0..8)
        .map(|k| (0..INPUTS).map(|f| map_feature(f, k) as u16).collect())
        .collect();
    let cells: Vec<Vec<u8>> = (0..8)
        .map(|k| (0..81).map(|i| map_cell(i, k) as u8).collect())
        .collect();
    // He initialisation of the weights, zero biases.
    let mut p = vec![0f32; params];
    let normal = |n: usize, fan_in: usize, rng: &mut ChaCha8Rng| -> Vec<f32> {
        let sd = (2.0 / fan_in as f32).sqrt();
        (0..n)
            .map(|_| {
                // Box-Muller.
                let (u, v): (f32, f32) = (rng.random::<f32>().max(1e-9), rng.random());
                sd * (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
            })
            .collect()
    };
    // About 40 features are on in a position.
    p[W1..B1].copy_from_slice(&normal(INPUTS * H1, 40, rng));
    match kind {
        Kind::Value => {
            p[W2..B2].copy_from_slice(&normal(H2 * H1, H1, rng));
            p[W3..B3].copy_from_slice(&normal(H2, H2, rng));
        }
        Kind::Policy => p[WP..BP].copy_from_slice(&normal(81 * H1, H1, rng)),
    }
    // Fine-tuning: a network's parameters to start from.
    if let Some(init) = &a.init {
        p = init_params(kind, init).context("--init")?;
    }
    let (mut m, mut v) = (vec![0f32; params], vec![0f32; params]);
    let (beta1, beta2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let mut step = 0i32;
    let started = Instant::now();
    let mut order: Vec<u32> = (0..train.len() as u32)
        .filter(|&i| kind == Kind::Value || train.policy(i as usize).0.len() >= 2)
        .collect();
    let total_steps = (epochs * order.len().div_ceil(batch)) as f32;
    kind.report(&p, test);
    for epoch in 0..epochs {
        order.shuffle(rng);
        let syms: Vec<u8> = (0..train.len()).map(|_| rng.random_range(0..8)).collect();
        let mut train_loss = 0.0;
        for chunk in order.chunks(batch) {
            let scale = 1.0 / chunk.len() as f32;
            let per = chunk.len().div_ceil(threads);
            let grads: Vec<(Vec<f32>, f64)> = std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .chunks(per)
                    .map(|part| {
                        let (p, maps, cells, syms) = (&p, &maps, &cells, &syms);
                        s.spawn(move || {
                            let mut g = vec![0f32; params];
                            let mut loss = 0.0;
                            for &i in part {
                                let i = i as usize;
                                let k = syms[i] as usize;
                                let sym = (maps[k].as_slice(), cells[k].as_slice());
                                loss += kind.loss(p, train, i, sym, scale, Some(&mut g));
                            }
                            (g, loss)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a training thread"))
                    .collect()
            });
            let mut g = vec![0f32; params];
            for (part, loss) in &grads {
                train_loss += loss;
                for (a, b) in g.iter_mut().zip(part) {
                    *a += b;
                }
            }
            step += 1;
            let lr = lr0 * (1.0 - 0.9 * step as f32 / total_steps);
            let (c1, c2) = (1.0 - beta1.powi(step), 1.0 - beta2.powi(step));
            for k in 0..params {
                m[k] = beta1 * m[k] + (1.0 - beta1) * g[k];
                v[k] = beta2 * v[k] + (1.0 - beta2) * g[k] * g[k];
                p[k] -= lr * (m[k] / c1) / ((v[k] / c2).sqrt() + eps);
            }
        }
        eprintln!(
            "epoch {}: training loss {:.4}; {:.0} s",
            epoch + 1,
            train_loss / order.len().max(1) as f64,
            started.elapsed().as_secs_f64()
        );
        kind.report(&p, test);
    }
    Ok(p)
}

/// The network `referee-lab train` trains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NetKind {
    /// The value network.
    Value,
    /// The policy network (needs data with the root's visits).
    Policy,
}

/// Arguments of `referee-lab train`: trains a network on the data of
/// `referee-lab data` with Adam (each sample under a random symmetry each
/// epoch) and writes it. One game in ten is held out; the held-out
/// figures are printed after every epoch.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// The network to train.
    #[arg(long, value_enum, default_value_t = NetKind::Value)]
    kind: NetKind,
    /// Data files of `referee-lab data`.
    #[arg(long, num_args = 1.., default_value = "target/uttt-net-data.txt")]
    data: Vec<PathBuf>,
    /// The value's target: this share of the game's result, the rest the
    /// search's value.
    #[arg(long, default_value_t = 0.5)]
    z_share: f32,
    /// Epochs.
    #[arg(long, default_value_t = 12)]
    epochs: usize,
    /// Batch size.
    #[arg(long, default_value_t = 512)]
    batch: usize,
    /// The first learning rate; it falls linearly to a tenth.
    #[arg(long, default_value_t = 0.002)]
    lr: f32,
    /// A network file of the kind, or `builtin`, to fine-tune instead of
    /// starting from random weights.
    #[arg(long)]
    init: Option<String>,
    /// With --init, give the fine-tuned value network back the first
    /// one's mean level, keeping what it learned beyond it.
    #[arg(long)]
    recenter: bool,
    /// The seed of the initial weights and of the batches.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads computing the gradients.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// The network's file (default: target/uttt-<kind>-net.bin).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `referee-lab train`.
pub fn train_network(a: &TrainArgs) -> anyhow::Result<()> {
    let (kind, name) = match a.kind {
        NetKind::Value => (Kind::Value, "value"),
        NetKind::Policy => (Kind::Policy, "policy"),
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("target/uttt-{name}-net.bin")));
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    // The network to recentre on, checked before the data is read and
    // the network trained.
    let recenter = match (a.recenter, &a.init) {
        (false, _) => None,
        (true, _) if kind != Kind::Value => bail!("--recenter is for value networks"),
        (true, None) => bail!("--recenter needs --init"),
        (true, Some(init)) => Some(init_params(kind, init).context("--init")?),
    };
    let (train_set, test_set) = load_samples(&a.data, a.z_share)?;
    if kind == Kind::Value {
        let search_z_loss = (0..test_set.len())
            .map(|i| cross_entropy(test_set.q[i], test_set.z[i]))
            .sum::<f64>()
            / test_set.len().max(1) as f64;
        eprintln!("held out: the searches' values against the results: {search_z_loss:.4}");
    }
    let mut p = train(kind, a, &train_set, &test_set, &mut rng)?;
    if let Some(init) = recenter {
        let shift = recentre(&mut p, &init, &train_set);
        eprintln!("recentred: the output's bias moved by {:.4}", -shift);
        kind.report(&p, &test_set);
    }
    std::fs::write(&out, kind.file(&p)).with_context(|| out.display().to_string())?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The parameters of the network of `kind` that `init` names: a file, or
/// `builtin`.
fn init_params(kind: Kind, init: &str) -> anyhow::Result<Vec<f32>> {
    Ok(match (kind, init) {
        (Kind::Value, "builtin") => ValueNet::builtin().flatten(),
        (Kind::Value, file) => ValueNet::load(file).map_err(anyhow::Error::msg)?.flatten(),
        (Kind::Policy, "builtin") => PolicyNet::builtin().flatten(),
        (Kind::Policy, file) => PolicyNet::load(file).map_err(anyhow::Error::msg)?.flatten(),
    })
}

/// Takes from the fine-tuned value network `p` its mean shift in logit
/// over `samples` from the network `p0` it was fine-tuned from (through
/// the output's bias), so that it keeps the deviations it learned and
/// `p0`'s level; returns the shift.
fn recentre(p: &mut [f32], p0: &[f32], samples: &Samples) -> f32 {
    let n = samples.len().max(1);
    let shift = (0..samples.len())
        .map(|i| {
            let f = samples.active(i);
            (forward_backward(p, f, 0.0, 0.0, None) - forward_backward(p0, f, 0.0, 0.0, None))
                as f64
        })
        .sum::<f64>()
        / n as f64;
    p[B3] -= shift as f32;
    shift as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions of random games with `seed`, one every few plies.
    fn sample_positions(seed: u64, n: usize) -> Vec<Uttt> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = vec![Uttt::new()];
        while out.len() < n {
            let mut p = Uttt::new();
            let plies = rng.random_range(0..70);
            for _ in 0..plies {
                match p.random_move(&mut rng) {
                    Some(mv) => p.play_unchecked(mv),
                    None => break,
                }
            }
            if p.outcome().is_none() {
                out.push(p);
            }
        }
        out
    }

    /// Checks the gradient `g` of `loss` at `p` against central differences,
    /// at the parameters `at`.
    fn check_gradient(
        p: &[f32],
        g: &[f32],
        at: impl Iterator<Item = usize>,
        loss: impl Fn(&[f32]) -> f64,
    ) {
        for k in at {
            let h = 1e-3f32;
            let (mut up, mut down) = (p.to_vec(), p.to_vec());
            up[k] += h;
            down[k] -= h;
            let numeric = (loss(&up) - loss(&down)) / (2.0 * h as f64);
            assert!(
                (numeric - g[k] as f64).abs() < 2e-3 + 0.02 * numeric.abs(),
                "parameter {k}: {numeric} against {}",
                g[k]
            );
        }
    }

    #[test]
    fn the_trainers_network_is_the_engines() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let p: Vec<f32> = (0..PARAMS).map(|_| rng.random_range(-0.3..0.3)).collect();
        let net = ValueNet::from_flat(&p);
        assert_eq!(net.flatten(), p);
        for pos in sample_positions(11, 40) {
            let mut f = [0u16; MAX_ACTIVE];
            let n = features(&pos, &mut f);
            let a = forward_backward(&p, &f[..n], 0.0, 0.0, None);
            let b = net.logit(&f[..n]);
            // The engine's first layer is in fixed point.
            assert!((a - b).abs() < 0.02, "{pos}: {a} against {b}");
        }
    }

    #[test]
    fn recentring_restores_the_first_networks_mean_level() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let p0: Vec<f32> = (0..PARAMS).map(|_| rng.random_range(-0.2..0.2)).collect();
        let mut samples = Samples::default();
        for pos in sample_positions(13, 30) {
            samples.push(&pos, (0.5, 0.5, 0.5), &[]);
        }
        // A "fine-tuned" network: a level shift and a change of its own.
        let mut p = p0.clone();
        p[B3] += 2.0;
        p[W3 + 4] += 0.3;
        let logit = |p: &[f32], i: usize| forward_backward(p, samples.active(i), 0.0, 0.0, None);
        let shift = recentre(&mut p, &p0, &samples);
        assert!(shift > 1.5, "{shift}");
        let mean: f32 = (0..samples.len())
            .map(|i| logit(&p, i) - logit(&p0, i))
            .sum::<f32>()
            / samples.len() as f32;
        assert!(mean.abs() < 1e-4, "{mean}");
        // What it learned beyond the level stays: not every position moved alike.
        assert!((0..samples.len()).any(|i| (logit(&p, i) - logit(&p0, i)).abs() > 1e-3));
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let p: Vec<f32> = (0..PARAMS).map(|_| rng.random_range(-0.2..0.2)).collect();
        let pos = sample_positions(12, 5)[3];
        let mut f = [0u16; MAX_ACTIVE];
        let n = features(&pos, &mut f);
        let active = &f[..n];
        let target = 0.7;
        let loss = |p: &[f32]| {
            let o = forward_backward(p, active, 0.0, 0.0, None) as f64;
            let pr = 1.0 / (1.0 + (-o).exp());
            -(target * pr.ln() + (1.0 - target) * (1.0 - pr).ln())
        };
        let mut g = vec![0f32; PARAMS];
        forward_backward(&p, active, target as f32, 1.0, Some(&mut g));
        // A spread of parameters of every layer, an active row of the first
        // layer among them.
        let first = active[0] as usize * H1;
        check_gradient(
            &p,
            &g,
            (first..first + H1).chain([B1 + 5, W2 + 77, B2 + 3, W3 + 1, B3]),
            loss,
        );
    }

    #[test]
    fn data_games_record_searched_positions_and_results() {
        let cfg = SearchConfig {
            iterations: 200,
            ..SearchConfig::optimal()
        };
        let (seen, outcome) = data_game(cfg, (None, None), 5, 4, 20, Rules::Standard);
        assert!(outcome.is_some());
        assert!(seen.len() > 10);
        for (pos, q, visits) in &seen {
            assert!(!pos.is_over() && (0.0..=1.0).contains(q), "{pos} {q}");
            let legal = pos.legal_moves();
            assert!(visits.iter().all(|(m, _)| legal.contains(m)), "{pos}");
        }
        // The same seed, the same game.
        let again = data_game(cfg, (None, None), 5, 4, 20, Rules::Standard);
        assert_eq!(again.0, seen);
        // Under CodinGame's rule every position searched is under it (so
        // the games end and are scored by it).
        let (seen, outcome) = data_game(cfg, (None, None), 5, 4, 20, Rules::CodinGame);
        assert!(outcome.is_some());
        assert!(seen
            .iter()
            .all(|(pos, _, _)| pos.options().rules == Rules::CodinGame));
    }

    #[test]
    fn the_policy_gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let p: Vec<f32> = (0..PolicyNet::PARAMS)
            .map(|_| rng.random_range(-0.2..0.2))
            .collect();
        let pos = sample_positions(13, 5)[2];
        let mut f = [0u16; MAX_ACTIVE];
        let n = features(&pos, &mut f);
        let active = &f[..n];
        let moves: Vec<u8> = pos
            .legal_moves()
            .iter()
            .map(|m| m.board() * 9 + m.cell())
            .collect();
        assert!(moves.len() >= 3, "{pos}");
        let mut shares = vec![0f32; moves.len()];
        shares[0] = 0.6;
        shares[2] = 0.4;
        let mut logits = [0f32; 81];
        let loss = |p: &[f32]| {
            let mut l = [0f32; 81];
            policy_forward_backward(p, active, &moves, &shares, &mut l, 0.0, None)
        };
        let mut g = vec![0f32; PolicyNet::PARAMS];
        policy_forward_backward(&p, active, &moves, &shares, &mut logits, 1.0, Some(&mut g));
        let first = W1 + active[0] as usize * H1;
        let m = moves[2] as usize;
        let at =
            (first..first + 16).chain([B1 + 9, WP + m * H1 + 3, BP + m, BP + moves[1] as usize]);
        check_gradient(&p, &g, at, loss);
    }

    #[test]
    fn the_trainers_policy_is_the_engines() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let p: Vec<f32> = (0..PolicyNet::PARAMS)
            .map(|_| rng.random_range(-0.3..0.3))
            .collect();
        let net = PolicyNet::from_flat(&p);
        for pos in sample_positions(14, 20) {
            let mut f = [0u16; MAX_ACTIVE];
            let n = features(&pos, &mut f);
            let legal = pos.legal_moves();
            let cells: Vec<u8> = legal.iter().map(|m| m.board() * 9 + m.cell()).collect();
            let shares = vec![0f32; cells.len()];
            let mut a = [0f32; 81];
            policy_forward_backward(&p, &f[..n], &cells, &shares, &mut a, 0.0, None);
            let mut b = vec![0f32; legal.len()];
            net.logits(&pos, &legal, &mut b);
            for (x, y) in a.iter().zip(&b) {
                // The engine's first layer is in fixed point.
                assert!(
                    (x - y).abs() < 0.02 * (1.0 + x.abs()),
                    "{pos}: {x} against {y}"
                );
            }
        }
    }
}
