//! The search of `optimal` and `uct`: MCTS on the bitboard [`Uttt`], with
//! tree reuse between moves and a time policy that never overruns its
//! budget. `optimal` ([`SearchConfig::optimal`]) is an MCTS-Solver with
//! PUCT selection by the policy network's prior and leaves valued by the
//! value network (net.rs); `uct` ([`SearchConfig::plain_uct`]) is plain
//! UCT with uniformly random playouts.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::game_winning_moves;
use super::net::{PolicyNet, ValueNet};
use crate::game::uttt::{line, Uttt, UtttMove};
use crate::game::{Game, Outcome, Seat};

/// A proven game value, from the point of view of the player who made the
/// move into a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proof {
    Unknown,
    Win,
    Loss,
    Draw,
}

impl Proof {
    /// The proof of a finished position for the player who moved into it.
    fn of(outcome: Outcome, mover: Seat) -> Proof {
        match outcome {
            Outcome::Draw => Proof::Draw,
            Outcome::Win(s) if s == mover => Proof::Win,
            Outcome::Win(_) => Proof::Loss,
        }
    }

    /// The outcome a proven node stands for, given who moved into it.
    fn outcome(self, mover: Seat) -> Option<Outcome> {
        match self {
            Proof::Unknown => None,
            Proof::Win => Some(Outcome::Win(mover)),
            Proof::Loss => Some(Outcome::Win(mover.other())),
            Proof::Draw => Some(Outcome::Draw),
        }
    }
}

/// The part of a node that selection reads for every child: 16 bytes, so
/// that scanning a node's children touches half the memory the whole node
/// would (selection is mostly waiting on memory). What only the path's
/// nodes need is in [`Stats`], a parallel array.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The mean reward for the player who moved into the node, kept up to
    /// date by backpropagation so that selection is one multiply-add per
    /// child; NaN (PUCT) or 0 (UCB1) before the first visit.
    base: f32,
    /// The exploration term's factor: with PUCT `P / (1 + n)` for the
    /// prior `P` and the visits `n`; with UCB1 `1 / sqrt(n)`, and
    /// [`UNVISITED`] before the first visit.
    explore: f32,
    /// The first child's index (low 24 bits) and the number of children
    /// (high 8 bits).
    link: u32,
    mv: UtttMove,
    proof: Proof,
    expanded: bool,
}

/// `explore` of a node never visited under UCB1 (a visited one has at
/// most 1).
const UNVISITED: f32 = 2.0;

/// The part of a node that only the nodes on an iteration's path need.
#[derive(Clone, Copy, Debug)]
struct Stats {
    visits: u32,
    /// Sum of rewards for the player who moved into this node, in `f64`:
    /// an `f32` sum loses the values it adds once it is large (at 2^19,
    /// half a million, its step is 1/16, and a 1 s search's root children
    /// get there; at 2^22 every value added rounds to 0, 0.5 or 1), which
    /// flattened the means the search's choices compare exactly where the
    /// values crowd around 0.5.
    reward: f64,
    /// With PUCT, the move's prior probability `P`.
    prior: f32,
}

impl Node {
    fn leaf(mv: UtttMove, base: f32) -> Node {
        Node {
            base,
            explore: UNVISITED,
            link: 0,
            mv,
            proof: Proof::Unknown,
            expanded: false,
        }
    }

    fn first_child(&self) -> usize {
        (self.link & LINK_INDEX) as usize
    }

    fn children(&self) -> usize {
        (self.link >> 24) as usize
    }

    fn set_children(&mut self, first: usize, count: usize) {
        debug_assert!(first <= LINK_INDEX as usize && count <= 81);
        self.link = first as u32 | (count as u32) << 24;
    }
}

impl Stats {
    fn leaf(prior: f32) -> Stats {
        Stats {
            visits: 0,
            reward: 0.0,
            prior,
        }
    }

    /// The mean reward for the player who moved into the node (0 before
    /// the first visit), in `f64`: callers narrow their result.
    fn mean(&self) -> f64 {
        self.reward / f64::from(self.visits.max(1))
    }
}

/// The mask of a child index in [`Node::link`].
const LINK_INDEX: u32 = (1 << 24) - 1;

/// No child (a node whose children are all proven lost, or none).
const NONE: usize = usize::MAX;

/// The default cap on the tree's nodes (32 bytes each with their
/// statistics, so about 268 MB, and as much again in the buffer kept for
/// the next tree reuse). A fresh 1 s search makes about 4 million; with the
/// subtree that tree reuse keeps, 1 s searches in the middle game reach
/// the cap.
pub const MAX_NODES: usize = 8 << 20;

const _: () = assert!(MAX_NODES <= LINK_INDEX as usize + 1);
const _: () = assert!(std::mem::size_of::<Node>() == 16);
const _: () = assert!(std::mem::size_of::<Stats>() == 16);

/// How many iterations run between two looks at the clock.
const CLOCK_EVERY: u32 = 32;

/// How the search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchConfig {
    /// Iterations per move (the default budget: reproducible).
    pub iterations: u32,
    /// Optional wall-time budget per move; the search stops at whichever
    /// budget runs out first, a little before the time (see
    /// [`Mcts::time_target`]).
    pub time: Option<Duration>,
    /// The networks: leaves valued by the value network and selection by
    /// PUCT with the policy network's prior (`optimal`). Without them,
    /// leaves are valued by a uniformly random playout and selection is
    /// UCB1 with `exploration`, untried children first (`uct`).
    pub networks: bool,
    /// PUCT's constant `C`: a child scores `Q + C * P * sqrt(N) / (1 + n)`,
    /// where `P` is the softmax of the policy network's logits over the
    /// node's moves, `N` the parent's visits and `n` the child's; an
    /// unvisited child's `Q` is its parent's mean for its mover minus
    /// `puct_fpu`. 1: C from 0.5 to 1.4 all beat UCB1, 2 did not (lab
    /// notebook, fifteenth round).
    pub puct: f32,
    /// PUCT's first-play reduction (0.2: 0.1-0.3 measured alike, 0 worse;
    /// fifteenth round).
    pub puct_fpu: f32,
    /// UCB1's exploration constant (without the networks).
    pub exploration: f32,
    /// MCTS-Solver: prove wins, losses and draws, play a proven win and
    /// never a proven loss when another move is left.
    pub solver: bool,
    /// Tree reuse: keep the subtree of the position reached two plies
    /// later (our move, then the reply) for the next search.
    pub reuse: bool,
    /// The tree stops growing at this many nodes (at most [`MAX_NODES`]);
    /// iterations then end at the leaves they reach.
    pub max_nodes: usize,
    /// Variety: in positions before this ply, the move is drawn (by the
    /// search's seed) among the root's moves close to the best (see
    /// [`VARY_MARGIN`]), so that games from the empty board differ by
    /// seed; 0 always plays the best.
    pub vary_plies: u32,
}

/// How close to the best a move must be to be drawn in the first
/// [`SearchConfig::vary_plies`] plies: a mean at most this far below the
/// most visited move's (in expected score, 0 to 1), and at least half its
/// visits, so that a move the search barely looked at is never drawn.
pub const VARY_MARGIN: f64 = 0.02;

impl SearchConfig {
    /// The tree's node cap: `max_nodes`, at most [`MAX_NODES`].
    #[inline]
    pub fn node_cap(&self) -> usize {
        self.max_nodes.min(MAX_NODES)
    }

    /// The `optimal` engine's defaults.
    pub fn optimal() -> Self {
        SearchConfig {
            iterations: 20_000,
            time: None,
            networks: true,
            puct: 1.0,
            puct_fpu: 0.2,
            exploration: 0.4,
            solver: true,
            reuse: true,
            max_nodes: MAX_NODES,
            vary_plies: 12,
        }
    }

    /// Plain UCT: random rollouts, no solver, no tree reuse.
    pub fn plain_uct() -> Self {
        SearchConfig {
            iterations: 20_000,
            time: None,
            networks: false,
            puct: 1.0,
            puct_fpu: 0.2,
            exploration: std::f32::consts::SQRT_2,
            solver: false,
            reuse: false,
            max_nodes: MAX_NODES,
            vary_plies: 0,
        }
    }
}

/// Statistics of the last search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Iterations run.
    pub iterations: u32,
    /// Nodes in the tree.
    pub nodes: usize,
    /// Whether the root's value was proven.
    pub proven: bool,
    /// Wall time of the search, from the call to its answer.
    pub elapsed: Duration,
    /// Of that, the time before the first iteration: mostly tree reuse's
    /// copy of the kept subtree.
    pub setup: Duration,
}

/// The reward for `mover` of a result worth `x_points` to X.
#[inline]
fn mover_reward(mover: Seat, x_points: f32) -> f32 {
    if mover == Seat::One {
        x_points
    } else {
        1.0 - x_points
    }
}

/// A Monte Carlo tree search over UTTT positions.
pub struct Mcts {
    config: SearchConfig,
    rng: ChaCha8Rng,
    nodes: Vec<Node>,
    /// Each node's [`Stats`], at the node's index.
    stats: Vec<Stats>,
    /// The previous tree's buffers, reused by the next tree reuse's copy.
    spare: (Vec<Node>, Vec<Stats>),
    /// The position at the root of `nodes`, kept for tree reuse.
    tree_root: Option<Uttt>,
    /// The harness's per-move limit, when the bot was told it.
    move_limit: Option<Duration>,
    path: Vec<usize>,
    last: SearchStats,
    /// The value network of `networks`.
    net: &'static ValueNet,
    /// The policy network of `networks`.
    policy_net: &'static PolicyNet,
}

/// Turns `logits` into their softmax, in place.
#[inline]
fn softmax(logits: &mut [f32]) {
    let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for h in logits.iter_mut() {
        *h = (*h - top).exp();
        sum += *h;
    }
    for h in logits.iter_mut() {
        *h /= sum;
    }
}

impl Mcts {
    /// A search with `config`, its randomness seeded by `seed`.
    pub fn new(config: SearchConfig, seed: u64) -> Self {
        Mcts {
            config,
            rng: ChaCha8Rng::seed_from_u64(seed),
            nodes: Vec::new(),
            stats: Vec::new(),
            spare: (Vec::new(), Vec::new()),
            tree_root: None,
            move_limit: None,
            path: Vec::with_capacity(96),
            last: SearchStats::default(),
            net: ValueNet::builtin(),
            policy_net: PolicyNet::builtin(),
        }
    }

    /// Evaluates leaves with `net` instead of the built-in network: for
    /// tools that compare networks.
    #[cfg_attr(not(feature = "lab"), allow(dead_code))]
    pub fn set_value_net(&mut self, net: &'static ValueNet) {
        self.net = net;
    }

    /// Takes priors from `net` instead of the built-in policy network: for
    /// tools that compare networks.
    #[cfg_attr(not(feature = "lab"), allow(dead_code))]
    pub fn set_policy_net(&mut self, net: &'static PolicyNet) {
        self.policy_net = net;
    }

    /// Statistics of the last search.
    #[cfg_attr(not(feature = "lab"), allow(dead_code))]
    pub fn stats(&self) -> SearchStats {
        self.last
    }

    /// The root's moves and their visits after the last search.
    #[cfg_attr(not(feature = "lab"), allow(dead_code))]
    pub fn root_visits(&self) -> Vec<(UtttMove, u32)> {
        if !self.nodes.first().is_some_and(|n| n.expanded) {
            return Vec::new();
        }
        self.children(0)
            .map(|i| (self.nodes[i].mv, self.stats[i].visits))
            .collect()
    }

    /// The expected score of the player to move in `root` after the last
    /// search, which was of `root` (1 for a proven win, 0.5 for a proven
    /// draw), or `None` when that search built no tree (one legal move).
    #[cfg_attr(not(feature = "lab"), allow(dead_code))]
    pub fn root_value(&self, root: &Uttt) -> Option<f32> {
        if self.config.solver && !game_winning_moves(root).is_empty() {
            return Some(1.0);
        }
        if self.tree_root != Some(*root) || !self.nodes.first()?.expanded {
            return None;
        }
        // The root's statistics are for the player who moved into it.
        Some(match self.nodes[0].proof {
            Proof::Win => 0.0,
            Proof::Loss => 1.0,
            Proof::Draw => 0.5,
            Proof::Unknown => (1.0 - self.stats[0].mean()) as f32,
        })
    }

    /// Tells the search the harness's per-move limit, which a timed search
    /// then stays well inside (see [`Mcts::time_target`]).
    pub(crate) fn set_move_limit(&mut self, limit: Option<Duration>) {
        self.move_limit = limit;
    }

    /// The time policy: how long a timed search may run, from the call to
    /// the answer. A budget `T` gets `T - min(T / 50, 20 ms)` (98 ms of
    /// 100, 980 ms of 1 s); a known harness limit `L` caps that at
    /// `L - L / 10` (900 ms of a 1 s limit, 90 ms of CodinGame's 100 ms),
    /// room for process scheduling and the protocol's round trip on a
    /// loaded machine. `None` without a time budget.
    pub(crate) fn time_target(&self) -> Option<Duration> {
        let t = self.config.time?;
        let mut target = t.saturating_sub((t / 50).min(Duration::from_millis(20)));
        if let Some(limit) = self.move_limit {
            let margin = limit / 10;
            target = target.min(limit.saturating_sub(margin));
        }
        Some(target.max(Duration::from_micros(200)))
    }

    /// Adds the children of `idx` (at position `pos`). With the networks
    /// each gets its prior, the softmax of the policy network's logits
    /// with a tiny random part that orders equal moves at random, as
    /// `explore` (`P / (1 + n)` at n = 0), and NaN as `base` until its
    /// first visit. Without them, untried children are tried in move
    /// order; each still draws its number, part of the random stream
    /// that `uct`'s pinned games follow.
    fn expand(&mut self, idx: usize, pos: &Uttt) {
        let first = self.nodes.len();
        let moves = pos.legal_moves();
        if self.config.networks {
            let mut values = [0f32; 81];
            self.policy_net.logits(pos, &moves, &mut values);
            let logits = &mut values[..moves.len()];
            for h in logits.iter_mut() {
                *h += self.rng.random::<f32>() * 1e-3;
            }
            softmax(logits);
            for (&mv, &p) in moves.iter().zip(logits.iter()) {
                let mut node = Node::leaf(mv, f32::NAN);
                node.explore = p;
                self.nodes.push(node);
                self.stats.push(Stats::leaf(p));
            }
        } else {
            for &mv in &moves {
                self.rng.random::<f32>();
                self.nodes.push(Node::leaf(mv, 0.0));
                self.stats.push(Stats::leaf(0.0));
            }
        }
        let node = &mut self.nodes[idx];
        node.set_children(first, moves.len());
        node.expanded = true;
    }

    /// Makes the node of `root` the root of the tree when `root` lies one
    /// or two plies below the previous root; returns whether it did.
    fn reroot(&mut self, root: &Uttt) -> bool {
        let Some(prev) = self.tree_root else {
            return false;
        };
        if self.nodes.is_empty() {
            return false;
        }
        if prev == *root {
            return true;
        }
        let mut found = None;
        'outer: for c in self.children(0) {
            let mut p1 = prev;
            p1.play_unchecked(self.nodes[c].mv);
            if p1 == *root {
                found = Some(c);
                break;
            }
            if p1.ply() >= root.ply() {
                continue;
            }
            for g in self.children(c) {
                let mut p2 = p1;
                p2.play_unchecked(self.nodes[g].mv);
                if p2 == *root {
                    found = Some(g);
                    break 'outer;
                }
            }
        }
        let Some(start) = found else {
            return false;
        };
        // Copy the subtree breadth first so that children stay contiguous,
        // into the spare buffer: both buffers keep their memory from move to
        // move, so the copy and the tree's growth touch pages already mapped
        // instead of fresh ones (whose page faults cost a few ms a move).
        let (mut fresh, mut fresh_stats) = std::mem::take(&mut self.spare);
        fresh.clear();
        fresh_stats.clear();
        fresh.push(self.nodes[start]);
        fresh_stats.push(self.stats[start]);
        let mut next = 0;
        while next < fresh.len() {
            let node = fresh[next];
            if node.expanded {
                let (first, count) = (node.first_child(), node.children());
                let at = fresh.len();
                fresh[next].set_children(at, count);
                fresh.extend_from_slice(&self.nodes[first..first + count]);
                fresh_stats.extend_from_slice(&self.stats[first..first + count]);
            }
            next += 1;
        }
        let nodes = std::mem::replace(&mut self.nodes, fresh);
        let stats = std::mem::replace(&mut self.stats, fresh_stats);
        self.spare = (nodes, stats);
        true
    }

    /// With the solver, the first child of the freshly expanded `idx` (at
    /// position `pos`) whose move wins the game at once.
    fn decisive_child(&self, idx: usize, pos: &Uttt) -> Option<usize> {
        if !self.config.solver {
            return None;
        }
        let me = pos.to_move();
        self.children(idx).find(|&i| {
            let mv = self.nodes[i].mv;
            let b = mv.board() as usize;
            line(pos.cells(me, b) | 1 << mv.cell()) && line(pos.won(me) | 1 << b)
        })
    }

    fn children(&self, idx: usize) -> std::ops::Range<usize> {
        let n = &self.nodes[idx];
        n.first_child()..n.first_child() + n.children()
    }

    /// Counts one more visit of `idx` with `reward`.
    #[inline]
    fn add(&mut self, idx: usize, reward: f32) {
        let s = &mut self.stats[idx];
        s.visits += 1;
        s.reward += f64::from(reward);
        let v = s.visits as f32;
        let (prior, mean) = (s.prior, s.mean() as f32);
        let node = &mut self.nodes[idx];
        node.base = mean;
        node.explore = if self.config.networks {
            prior / (v + 1.0)
        } else {
            (1.0 / v).sqrt()
        };
    }

    /// Picks the child to descend into (see [`Mcts::best_child`]): by
    /// PUCT with the networks, else by UCB1 with the untried children
    /// first.
    fn select(&self, idx: usize) -> usize {
        if self.config.networks {
            let visits = self.stats[idx].visits.max(1) as f32;
            let scale = self.config.puct * visits.sqrt();
            let fpu = self.first_play(idx, self.config.puct_fpu);
            return self.best_child(idx, |n| {
                let q = if n.base.is_nan() { fpu } else { n.base };
                q + scale * n.explore
            });
        }
        let parent = &self.stats[idx];
        let c_log = self.config.exploration * (parent.visits.max(1) as f32).ln().sqrt();
        self.best_child(idx, |n| {
            if n.explore == UNVISITED {
                1e9
            } else {
                n.base + c_log * n.explore
            }
        })
    }

    /// The child of `idx` that selection descends into, by `score`: a
    /// proven win at once; never a child proven lost for the mover, unless
    /// all are (then the node is proven lost and any will do); else the
    /// best score, the first of equals.
    #[inline]
    fn best_child(&self, idx: usize, score: impl Fn(&Node) -> f32) -> usize {
        let range = self.children(idx);
        let mut best = NONE;
        let mut best_score = f32::NEG_INFINITY;
        for i in range.clone() {
            let n = &self.nodes[i];
            match n.proof {
                Proof::Loss => continue,
                Proof::Win => return i,
                _ => {}
            }
            let s = score(n);
            if s > best_score {
                best_score = s;
                best = i;
            }
        }
        if best == NONE && !range.is_empty() {
            return range.start;
        }
        best
    }

    /// First-play urgency: the value of an unvisited child of `idx`, its
    /// parent's mean for the child's mover (the parent's mean is for the
    /// player who moved into it, its children are the other player's
    /// moves) minus `reduction`.
    #[inline]
    fn first_play(&self, idx: usize, reduction: f32) -> f32 {
        let parent = &self.stats[idx];
        if parent.visits > 0 {
            (1.0 - parent.mean()) as f32 - reduction
        } else {
            0.5 - reduction
        }
    }

    /// X's value of the unfinished `pos`: the value network's with the
    /// networks, else a uniformly random playout's result.
    fn leaf_value(&mut self, mut pos: Uttt) -> f32 {
        if self.config.networks {
            let v = self.net.value(&pos);
            if pos.to_move() == Seat::One {
                v
            } else {
                1.0 - v
            }
        } else {
            pos.random_playout(&mut self.rng).points(Seat::One) as f32
        }
    }

    /// One iteration from `root`: selection, expansion, the leaf's value
    /// (or a proven one) and backpropagation.
    fn iterate(&mut self, root: &Uttt) {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        path.push(0);
        let mut pos = *root;
        let mut idx = 0;
        while self.nodes[idx].expanded && self.nodes[idx].proof == Proof::Unknown {
            let child = self.select(idx);
            if child == NONE {
                break;
            }
            pos.play_unchecked(self.nodes[child].mv);
            idx = child;
            path.push(idx);
        }
        let solver = self.config.solver;
        if solver && !self.nodes[idx].expanded && self.nodes[idx].proof == Proof::Unknown {
            if let Some(o) = pos.outcome() {
                self.nodes[idx].proof = Proof::of(o, pos.to_move().other());
            }
        }
        let x_points = match self.nodes[idx].proof.outcome(pos.to_move().other()) {
            Some(o) => o.points(Seat::One) as f32,
            None => {
                if let Some(o) = pos.outcome() {
                    o.points(Seat::One) as f32
                } else {
                    if !self.nodes[idx].expanded && self.nodes.len() + 81 <= self.config.node_cap()
                    {
                        self.expand(idx, &pos);
                        // Decisive move: a child that wins the game at once
                        // is played (and so proven) straight away.
                        let child = match self.decisive_child(idx, &pos) {
                            Some(c) => c,
                            None => self.select(idx),
                        };
                        if child != NONE {
                            pos.play_unchecked(self.nodes[child].mv);
                            idx = child;
                            path.push(idx);
                            if solver {
                                if let Some(o) = pos.outcome() {
                                    self.nodes[idx].proof = Proof::of(o, pos.to_move().other());
                                }
                            }
                        }
                    }
                    match pos.outcome() {
                        Some(o) => o.points(Seat::One) as f32,
                        None => self.leaf_value(pos),
                    }
                }
            }
        };
        self.backpropagate(&path, root.to_move(), x_points);
        self.path = path;
    }

    /// Runs the search from `root` and returns the chosen move.
    pub fn search(&mut self, root: &Uttt) -> Option<UtttMove> {
        let started = Instant::now();
        let moves = root.legal_moves();
        if moves.len() <= 1 {
            self.last = SearchStats {
                elapsed: started.elapsed(),
                ..SearchStats::default()
            };
            return moves.first().copied();
        }
        if self.config.solver {
            // A win in one needs no search.
            if let Some(&mv) = game_winning_moves(root).first() {
                self.last = SearchStats {
                    proven: true,
                    elapsed: started.elapsed(),
                    ..SearchStats::default()
                };
                return Some(mv);
            }
        }
        let deadline = self.time_target().map(|t| started + t);
        if !(self.config.reuse && self.reroot(root)) {
            self.nodes.clear();
            self.stats.clear();
            self.nodes.push(Node::leaf(moves[0], 0.0));
            self.stats.push(Stats::leaf(0.0));
        }
        self.tree_root = Some(*root);
        let looping = Instant::now();
        let mut done = 0;
        while done < self.config.iterations && self.nodes[0].proof == Proof::Unknown {
            if done % CLOCK_EVERY == 0 {
                if let Some(d) = deadline {
                    if Instant::now() >= d || (done >= 256 && self.settled()) {
                        break;
                    }
                }
            }
            self.iterate(root);
            done += 1;
        }
        self.last = SearchStats {
            iterations: done,
            nodes: self.nodes.len(),
            proven: self.nodes[0].proof != Proof::Unknown,
            elapsed: started.elapsed(),
            setup: looping.duration_since(started),
        };
        let best = self.best_root_move()?;
        Some(if (root.ply() as u32) < self.config.vary_plies {
            self.varied_root_move(best)
        } else {
            best
        })
    }

    /// A move drawn by the search's generator among the root's moves as
    /// good as `best` within [`VARY_MARGIN`] and with at least half its
    /// visits (`best` itself included); `best` when it is a proven win or
    /// nothing else qualifies.
    fn varied_root_move(&mut self, best: UtttMove) -> UtttMove {
        let Some(b) = self.children(0).find(|&i| self.nodes[i].mv == best) else {
            return best;
        };
        if self.nodes[b].proof == Proof::Win {
            return best;
        }
        let (top_visits, top_mean) = (self.stats[b].visits, self.stats[b].mean());
        let close: Vec<UtttMove> = self
            .children(0)
            .filter(|&i| {
                let s = &self.stats[i];
                i == b
                    || (self.nodes[i].proof != Proof::Loss
                        && s.visits > 0
                        && 2 * s.visits >= top_visits
                        && s.mean() >= top_mean - VARY_MARGIN)
            })
            .map(|i| self.nodes[i].mv)
            .collect();
        close[self.rng.random_range(0..close.len())]
    }

    /// Whether the move to play can no longer change: a move is proven
    /// won, or one move is left that is not proven lost. (A stop when the
    /// most visited move can no longer be overtaken in the time left lost
    /// strength: the lab notebook, "the engine after the strength work".)
    fn settled(&self) -> bool {
        if !self.nodes[0].expanded {
            return false;
        }
        let mut alive = 0;
        for i in self.children(0) {
            match self.nodes[i].proof {
                Proof::Loss => continue,
                Proof::Win => return true,
                _ => alive += 1,
            }
        }
        alive <= 1
    }

    /// Adds the leaf's value (X's points) to every node on `path` and,
    /// with the solver, proves what can be proven from the leaf up (a
    /// node's proof can only change when one of its children's did).
    fn backpropagate(&mut self, path: &[usize], root_mover: Seat, x_points: f32) {
        let Some((&leaf, above)) = path.split_last() else {
            return;
        };
        let win = mover_reward(root_mover, x_points);
        // The node at depth d was entered by a move of the root's mover when
        // d is odd (the root itself, d = 0, by the other player).
        let reward = |depth: usize| if depth % 2 == 1 { win } else { 1.0 - win };
        self.add(leaf, reward(above.len()));
        let mut changed = self.config.solver && self.nodes[leaf].proof != Proof::Unknown;
        for (depth, &idx) in above.iter().enumerate().rev() {
            if changed && self.nodes[idx].proof == Proof::Unknown {
                let proof = self.prove(idx);
                self.nodes[idx].proof = proof;
                changed = proof != Proof::Unknown;
            } else {
                changed = false;
            }
            self.add(idx, reward(depth));
        }
    }

    /// A node's value from its children's proofs (children are moves by the
    /// other player): any child won by them loses the node; all children
    /// lost by them wins it; all proven with a draw at best draws it.
    fn prove(&self, idx: usize) -> Proof {
        let mut all_proven = true;
        let mut any_draw = false;
        for i in self.children(idx) {
            match self.nodes[i].proof {
                Proof::Win => return Proof::Loss,
                Proof::Draw => any_draw = true,
                Proof::Loss => {}
                Proof::Unknown => all_proven = false,
            }
        }
        match (all_proven, any_draw) {
            (true, true) => Proof::Draw,
            (true, false) => Proof::Win,
            _ => Proof::Unknown,
        }
    }

    /// A proven win if there is one, else the most visited child that is not
    /// proven lost (a proven draw counts as its visits).
    fn best_root_move(&self) -> Option<UtttMove> {
        if !self.nodes.first().is_some_and(|n| n.expanded) {
            return None;
        }
        let range = self.children(0);
        if let Some(i) = range.clone().find(|&i| self.nodes[i].proof == Proof::Win) {
            return Some(self.nodes[i].mv);
        }
        let key = |i: &usize| {
            let s = &self.stats[*i];
            (s.visits, (s.reward * 2.0) as u64)
        };
        let pick = range
            .clone()
            .filter(|&i| self.nodes[i].proof != Proof::Loss)
            .max_by_key(key)
            .or_else(|| range.clone().max_by_key(key));
        pick.map(|i| self.nodes[i].mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(moves: &[(u8, u8)]) -> Uttt {
        let mut p = Uttt::new();
        for &(b, c) in moves {
            p.play(UtttMove::new(b, c).unwrap()).unwrap();
        }
        p
    }

    #[test]
    fn tree_reuse_keeps_the_subtree_two_plies_down() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 3000,
                ..SearchConfig::optimal()
            },
            5,
        );
        let mv = m.search(&p).unwrap();
        let child = m
            .children(0)
            .find(|&i| m.nodes[i].mv == mv)
            .expect("the chosen move is a root child");
        let reply = m
            .children(child)
            .max_by_key(|&i| m.stats[i].visits)
            .expect("the chosen move was expanded");
        let (reply_mv, reply_visits) = (m.nodes[reply].mv, m.stats[reply].visits);
        let mut next = p;
        next.play_unchecked(mv);
        next.play_unchecked(reply_mv);
        assert!(m.reroot(&next));
        assert_eq!(m.stats[0].visits, reply_visits);
        // Every kept child is a legal move of the new root.
        for i in m.children(0) {
            assert!(next.is_legal(m.nodes[i].mv));
        }
        // A position not below the old root starts a fresh tree.
        assert!(!m.reroot(&play(&[(0, 0)])));
    }

    #[test]
    fn tree_reuse_recycles_the_previous_buffer() {
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 2000,
                ..SearchConfig::optimal()
            },
            3,
        );
        let mut p = play(&[(4, 4), (4, 0)]);
        for _ in 0..3 {
            let mv = m.search(&p).unwrap();
            p.play_unchecked(mv);
            let reply = m.search(&p).unwrap();
            p.play_unchecked(reply);
        }
        // The old tree's memory is kept as the spare, and the next copy
        // goes into it.
        let mv = m.search(&p).unwrap();
        let spare = (m.spare.0.as_ptr(), m.spare.1.as_ptr());
        let before = (m.nodes.as_ptr(), m.stats.as_ptr());
        let mut next = p;
        next.play_unchecked(mv);
        let reply = next.legal_moves()[0];
        next.play_unchecked(reply);
        assert!(m.reroot(&next));
        assert_eq!((m.nodes.as_ptr(), m.stats.as_ptr()), spare);
        assert_eq!((m.spare.0.as_ptr(), m.spare.1.as_ptr()), before);
    }

    #[test]
    fn the_time_policy_keeps_a_margin() {
        let timed = |ms: u64| {
            Mcts::new(
                SearchConfig {
                    time: Some(Duration::from_millis(ms)),
                    ..SearchConfig::optimal()
                },
                1,
            )
        };
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis());
        assert_eq!(ms(timed(100).time_target()), Some(98));
        assert_eq!(ms(timed(1000).time_target()), Some(980));
        assert_eq!(ms(timed(5000).time_target()), Some(4980));
        let mut m = timed(1000);
        m.set_move_limit(Some(Duration::from_millis(1000)));
        assert_eq!(ms(m.time_target()), Some(900));
        m.set_move_limit(Some(Duration::from_millis(100)));
        assert_eq!(ms(m.time_target()), Some(90));
        // CodinGame's limit does not cut a 90 ms budget (it was cut to 70
        // ms by a 30 ms floor on the margin).
        let mut m = timed(90);
        m.set_move_limit(Some(Duration::from_millis(100)));
        assert_eq!(m.time_target(), Some(Duration::from_micros(88_200)));
        assert_eq!(Mcts::new(SearchConfig::optimal(), 1).time_target(), None);
    }

    #[test]
    fn a_timed_search_answers_within_its_budget() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(
            SearchConfig {
                iterations: u32::MAX,
                time: Some(Duration::from_millis(100)),
                ..SearchConfig::optimal()
            },
            2,
        );
        assert!(m.search(&p).is_some());
        let s = m.stats();
        // The search stops at 98 ms; the wide margin is for a loaded 2-core
        // machine, where the thread can be descheduled past that. With no
        // time budget it would run its 4 billion iterations.
        assert!(s.elapsed <= Duration::from_millis(1500), "{s:?}");
        assert!(s.iterations > 100, "{s:?}");
    }

    #[test]
    fn proofs_combine_children() {
        let p = Uttt::new();
        let mut m = expanded_root(SearchConfig::optimal(), &p);
        let kids: Vec<usize> = m.children(0).collect();
        assert_eq!(m.prove(0), Proof::Unknown);
        for &k in &kids {
            m.nodes[k].proof = Proof::Loss;
        }
        assert_eq!(m.prove(0), Proof::Win);
        m.nodes[kids[3]].proof = Proof::Draw;
        assert_eq!(m.prove(0), Proof::Draw);
        m.nodes[kids[5]].proof = Proof::Win;
        assert_eq!(m.prove(0), Proof::Loss);
        m.nodes[kids[5]].proof = Proof::Unknown;
        assert_eq!(m.prove(0), Proof::Unknown);
    }

    #[test]
    fn the_tree_stops_at_its_cap() {
        let p = play(&[(4, 4), (4, 0)]);
        let cap = 20_000;
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 30_000,
                reuse: false,
                max_nodes: cap,
                ..SearchConfig::optimal()
            },
            3,
        );
        let mv = m.search(&p).unwrap();
        assert!(p.is_legal(mv));
        assert!(m.nodes.len() <= cap && m.nodes.len() + 81 > cap);
        // Leaves are expanded on their second visit right up to the cap.
        assert!(m
            .nodes
            .iter()
            .zip(&m.stats)
            .any(|(n, s)| n.expanded && n.first_child() >= cap / 2 && s.visits < 4));
    }

    #[test]
    fn a_node_with_millions_of_visits_keeps_its_mean() {
        // A 4 s search's root children pass 2^22 in their reward sums,
        // where an f32 sum rounds every value added to 0, 0.5 or 1: values
        // of 0.47 and 0.53 then averaged 0.5, values of 0.2 averaged 0.
        let p = play(&[(4, 4), (4, 0)]);
        for config in [SearchConfig::optimal(), SearchConfig::plain_uct()] {
            let mut m = expanded_root(config, &p);
            let child = m.children(0).next().unwrap();
            let n = 10_000_000u32;
            for i in 0..n {
                m.add(child, if i % 2 == 0 { 0.44 } else { 0.5 });
                m.add(0, 0.2);
            }
            assert_eq!(m.stats[child].visits, n);
            let mean = m.stats[child].mean();
            assert!((mean - 0.47).abs() < 1e-6, "{mean}");
            assert!((m.nodes[child].base - 0.47).abs() < 1e-5);
            // The root's children see their parent's mean, 0.2 for the
            // root's mover's opponent, as 0.8 before the reduction.
            assert!((m.first_play(0, 0.0) - 0.8).abs() < 1e-5);
            m.tree_root = Some(p);
            assert!((m.root_value(&p).unwrap() - 0.8).abs() < 1e-5);
        }
    }

    /// A search with `cfg` (seed 1) whose tree is a root at `p` with its
    /// children added.
    fn expanded_root(cfg: SearchConfig, p: &Uttt) -> Mcts {
        let mut m = Mcts::new(cfg, 1);
        m.nodes.push(Node::leaf(UtttMove::new(0, 0).unwrap(), 0.0));
        m.stats.push(Stats::leaf(0.0));
        m.expand(0, p);
        m
    }

    /// The moves `m` plays against itself from `p` to the game's end,
    /// each checked legal.
    fn play_out(m: &mut Mcts, mut p: Uttt) -> Vec<UtttMove> {
        let mut moves = Vec::new();
        while p.outcome().is_none() {
            let mv = m.search(&p).unwrap();
            assert!(p.legal_moves().contains(&mv));
            moves.push(mv);
            p.play_unchecked(mv);
        }
        moves
    }

    fn puct(c: f32) -> SearchConfig {
        SearchConfig {
            puct: c,
            ..SearchConfig::optimal()
        }
    }

    #[test]
    fn puct_priors_are_the_softmax_of_the_policy_logits() {
        let p = play(&[(4, 4), (4, 0)]);
        let moves = p.legal_moves();
        let m = expanded_root(puct(1.0), &p);
        let mut logits = [0f32; 81];
        m.policy_net.logits(&p, &moves, &mut logits);
        let kids: Vec<usize> = m.children(0).collect();
        assert_eq!(kids.len(), moves.len());
        let sum: f32 = kids.iter().map(|&i| m.stats[i].prior).sum();
        assert!((sum - 1.0).abs() < 1e-4, "{sum}");
        let z: f32 = logits[..moves.len()].iter().map(|l| l.exp()).sum();
        for (k, &i) in kids.iter().enumerate() {
            // Unvisited: no mean yet, the whole prior as the exploration
            // share, and the softmax of the logit (the tie-breaking noise
            // moves it by 0.1 % at most).
            assert!(m.nodes[i].base.is_nan());
            assert_eq!(m.nodes[i].explore, m.stats[i].prior);
            let want = logits[k].exp() / z;
            assert!((m.stats[i].prior - want).abs() <= 2e-3 * want, "move {k}");
        }
    }

    #[test]
    fn puct_backups_keep_the_mean_and_a_fading_prior_share() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = expanded_root(puct(1.0), &p);
        let kid = m.children(0).start;
        let prior = m.stats[kid].prior;
        // X to move at the root and X lost: the child X entered has 0.
        m.backpropagate(&[0, kid], Seat::One, 0.0);
        assert_eq!(m.nodes[kid].base, 0.0);
        assert!((m.nodes[kid].explore - prior / 2.0).abs() < 1e-7);
        m.backpropagate(&[0, kid], Seat::One, 1.0);
        assert_eq!(m.nodes[kid].base, 0.5);
        assert!((m.nodes[kid].explore - prior / 3.0).abs() < 1e-7);
    }

    #[test]
    fn puct_selection_tries_the_likeliest_move_and_leaves_a_refuted_one() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = expanded_root(puct(1.0), &p);
        let mut by_prior: Vec<usize> = m.children(0).collect();
        by_prior.sort_by(|&a, &b| m.stats[b].prior.total_cmp(&m.stats[a].prior));
        let (first, second) = (by_prior[0], by_prior[1]);
        assert_eq!(m.select(0), first);
        // The likeliest move keeps losing for X: after a few visits the
        // next likeliest, untried, goes first.
        let mut losses = 0;
        while m.select(0) == first {
            m.backpropagate(&[0, first], Seat::One, 0.0);
            losses += 1;
            assert!(losses < 100, "a refuted move kept its visits");
        }
        assert_eq!(m.select(0), second);
        // A child proven lost for its mover is never chosen, a proven win
        // at once.
        m.nodes[second].proof = Proof::Loss;
        assert_ne!(m.select(0), second);
        let last = by_prior[by_prior.len() - 1];
        m.nodes[last].proof = Proof::Win;
        assert_eq!(m.select(0), last);
    }

    #[test]
    fn searches_are_deterministic_legal_and_differ_by_the_puct_constant() {
        let game = |cfg: SearchConfig| {
            let cfg = SearchConfig {
                iterations: 2000,
                ..cfg
            };
            play_out(&mut Mcts::new(cfg, 5), play(&[(4, 4), (4, 0)]))
        };
        let a = game(puct(1.0));
        assert_eq!(a, game(puct(1.0)));
        assert_ne!(a, game(puct(2.0)));
        let uct = game(SearchConfig::plain_uct());
        assert_eq!(uct, game(SearchConfig::plain_uct()));
    }
}

#[cfg(test)]
mod transpositions {
    use super::*;
    use std::collections::HashSet;

    #[test]
    #[ignore]
    fn transpositions() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for plies in [0, 2, 10, 20, 30] {
            let (mut expanded, mut repeated) = (0u64, 0u64);
            for seed in 0..8 {
                let mut p = Uttt::new();
                for _ in 0..plies {
                    if let Some(mv) = p.random_move(&mut rng) {
                        p.play_unchecked(mv);
                    }
                }
                if p.is_over() {
                    continue;
                }
                let mut m = Mcts::new(
                    SearchConfig {
                        iterations: 30_000,
                        ..SearchConfig::optimal()
                    },
                    seed,
                );
                m.search(&p);
                let mut seen = HashSet::new();
                let mut stack = vec![(0usize, p)];
                while let Some((idx, pos)) = stack.pop() {
                    if !m.nodes[idx].expanded {
                        continue;
                    }
                    expanded += 1;
                    if !seen.insert(pos) {
                        repeated += 1;
                    }
                    for c in m.children(idx) {
                        let mut next = pos;
                        next.play_unchecked(m.nodes[c].mv);
                        stack.push((c, next));
                    }
                }
            }
            println!(
                "after {plies} random plies: {repeated} of {expanded} expanded nodes repeat a position ({:.2} %)",
                100.0 * repeated as f64 / expanded.max(1) as f64
            );
        }
    }
}
