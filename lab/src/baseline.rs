//! The `optimal` UTTT engine as it was at commit 352cdeb (before issue 20),
//! frozen here so that the lab's strength bench can play today's engine
//! against it in one process at equal iteration budgets. Not part of the
//! library: a copy of src/bot/uttt.rs's search, with its private helpers
//! inlined. Its random numbers come from `ChaCha8Rng` since the engine
//! cut (`SmallRng` before: the same engine, other draws).

#![allow(dead_code)]

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use referee::game::grid::FULL;
use referee::game::uttt::{line, threats};
use referee::game::{Game, Outcome, Seat, Uttt, UtttMove};

fn nth_set_bit(mut bits: u32, n: u32) -> u32 {
    for _ in 0..n {
        bits &= bits - 1;
    }
    bits.trailing_zeros()
}

fn game_winning_moves(pos: &Uttt) -> Vec<UtttMove> {
    let me = pos.to_move();
    let mut out = Vec::new();
    for mv in pos.legal_moves() {
        let b = mv.board() as usize;
        let after = pos.cells(me, b) | 1 << mv.cell();
        if line(after) && line(pos.won(me) | 1 << b) {
            out.push(mv);
        }
    }
    out
}

/// A proven game value, from the point of view of the player who made the
/// move into a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proof {
    Unknown,
    Win,
    Loss,
    Draw,
}

#[derive(Clone, Debug)]
struct Node {
    mv: UtttMove,
    first_child: u32,
    children: u8,
    expanded: bool,
    visits: u32,
    /// Sum of rewards for the player who moved into this node.
    reward: f32,
    proof: Proof,
}

/// How the search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaselineConfig {
    /// Iterations per move (the default budget: reproducible).
    pub iterations: u32,
    /// Optional wall-time budget per move; the search stops at whichever
    /// budget runs out first.
    pub time: Option<Duration>,
    /// UCB exploration constant.
    pub exploration: f32,
    /// MCTS-Solver: prove wins and losses and play them.
    pub solver: bool,
    /// Informed playouts: take a game-winning or board-winning move when the
    /// playout can; otherwise random.
    pub informed: bool,
    /// Tree reuse: keep the subtree of the position reached two plies
    /// later (our move, then the reply) for the next search.
    pub reuse: bool,
    /// In informed playouts, the share of moves (per mille) played at random
    /// instead, so that playouts do not all follow the same greedy line.
    pub playout_random_permille: u32,
}

impl BaselineConfig {
    /// The `optimal` engine's defaults.
    pub fn optimal() -> Self {
        BaselineConfig {
            iterations: 20_000,
            time: None,
            exploration: 0.5,
            solver: true,
            informed: true,
            reuse: true,
            playout_random_permille: 250,
        }
    }

    /// Plain UCT: random rollouts, no solver.
    pub fn plain_uct() -> Self {
        BaselineConfig {
            iterations: 20_000,
            time: None,
            exploration: std::f32::consts::SQRT_2,
            solver: false,
            informed: false,
            reuse: false,
            playout_random_permille: 0,
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
}

/// A Monte Carlo tree search over UTTT positions.
pub struct BaselineMcts {
    config: BaselineConfig,
    rng: ChaCha8Rng,
    nodes: Vec<Node>,
    /// The position at the root of `nodes`, kept for tree reuse.
    tree_root: Option<Uttt>,
    last: SearchStats,
}

impl BaselineMcts {
    /// A search with `config`, its randomness seeded by `seed`.
    pub fn new(config: BaselineConfig, seed: u64) -> Self {
        BaselineMcts {
            config,
            rng: ChaCha8Rng::seed_from_u64(seed),
            nodes: Vec::new(),
            tree_root: None,
            last: SearchStats::default(),
        }
    }

    /// Statistics of the last search.
    pub fn stats(&self) -> SearchStats {
        self.last
    }

    fn expand(&mut self, idx: usize, pos: &Uttt) {
        let first = self.nodes.len() as u32;
        let moves = pos.legal_moves();
        for &mv in &moves {
            self.nodes.push(Node {
                mv,
                first_child: 0,
                children: 0,
                expanded: false,
                visits: 0,
                reward: 0.0,
                proof: Proof::Unknown,
            });
        }
        let node = &mut self.nodes[idx];
        node.first_child = first;
        node.children = moves.len() as u8;
        node.expanded = true;
    }

    /// Makes the node of `root` the root of the tree when `root` lies one
    /// or two plies below the previous root; returns whether it did.
    fn reroot(&mut self, root: &Uttt) -> bool {
        let Some(prev) = self.tree_root else {
            return false;
        };
        if self.nodes.is_empty() || prev == *root {
            return !self.nodes.is_empty() && prev == *root;
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
        // Copy the subtree breadth first so that children stay contiguous.
        let mut fresh = Vec::with_capacity(self.nodes.len());
        fresh.push(self.nodes[start].clone());
        let mut next = 0;
        while next < fresh.len() {
            let node: &Node = &fresh[next];
            if node.expanded {
                let first = node.first_child as usize;
                let count = node.children as usize;
                let new_first = fresh.len() as u32;
                fresh[next].first_child = new_first;
                fresh.extend_from_slice(&self.nodes[first..first + count]);
            }
            next += 1;
        }
        self.nodes = fresh;
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
        n.first_child as usize..n.first_child as usize + n.children as usize
    }

    /// Picks the child to descend into: an unvisited one first, else UCB1,
    /// never a child already proven lost for the mover.
    fn select(&mut self, idx: usize) -> usize {
        let parent_visits = self.nodes[idx].visits.max(1) as f32;
        let log_n = parent_visits.ln();
        let c = self.config.exploration;
        let mut best = usize::MAX;
        let mut best_score = f32::NEG_INFINITY;
        let range = self.children(idx);
        let unvisited = range.clone().filter(|&i| self.nodes[i].visits == 0).count();
        if unvisited > 0 {
            let k = self.rng.random_range(0..unvisited);
            return range
                .filter(|&i| self.nodes[i].visits == 0)
                .nth(k)
                .unwrap_or(usize::MAX);
        }
        for i in range {
            let n = &self.nodes[i];
            let score = match n.proof {
                Proof::Loss => f32::NEG_INFINITY,
                Proof::Win => f32::INFINITY,
                _ => n.reward / n.visits as f32 + c * (log_n / n.visits as f32).sqrt(),
            };
            if score > best_score || best == usize::MAX {
                best_score = score;
                best = i;
            }
        }
        best
    }

    /// Plays a playout from `pos` and returns its outcome.
    fn playout(&mut self, mut pos: Uttt) -> Outcome {
        loop {
            if let Some(o) = pos.outcome() {
                return o;
            }
            let mv = if self.config.informed {
                self.informed_move(&pos)
            } else {
                pos.random_move(&mut self.rng)
            };
            match mv {
                Some(m) => pos.play_unchecked(m),
                None => return Outcome::Draw,
            }
        }
    }

    /// The informed playout policy. It wins the game when one move does;
    /// else plays a random move with probability `playout_random_permille`
    /// / 1000 (purely greedy playouts all follow the same line and judge
    /// positions worse: 1 in 4 measured best); else wins a local board; else
    /// plays a random cell that does not send the opponent to a board it
    /// can win at once or to a free choice (when such a cell exists); else a
    /// random move.
    fn informed_move(&mut self, pos: &Uttt) -> Option<UtttMove> {
        let boards = pos.playable_boards();
        if boards == 0 {
            return None;
        }
        let me = pos.to_move();
        let them = me.other();
        let my_won = pos.won(me);
        // Local wins: a game win is taken at once; otherwise one board with
        // a local win is chosen uniformly (reservoir sampling).
        let mut win_board = u8::MAX;
        let mut win_cells = 0u16;
        let mut seen = 0u32;
        let mut bs = boards;
        while bs != 0 {
            let b = bs.trailing_zeros() as u8;
            bs &= bs - 1;
            let w = threats(pos.cells(me, b as usize)) & pos.empty(b as usize);
            if w != 0 {
                if line(my_won | 1 << b) {
                    return UtttMove::new(b, w.trailing_zeros() as u8);
                }
                seen += 1;
                if seen == 1 || self.rng.random_range(0..seen) == 0 {
                    win_board = b;
                    win_cells = w;
                }
            }
        }
        // Past the game win, a share of the moves is random, so that
        // playouts do not all follow the same greedy line.
        let eps = self.config.playout_random_permille;
        if eps > 0 && self.rng.random_range(0..1000) < eps {
            return pos.random_move(&mut self.rng);
        }
        if seen > 0 {
            let n = self.rng.random_range(0..win_cells.count_ones());
            return UtttMove::new(win_board, nth_set_bit(win_cells as u32, n) as u8);
        }
        // Boards the opponent must not be sent to: closed ones (a free
        // choice) and open ones where it completes a line at once.
        let closed = pos.closed();
        let mut danger = closed;
        let mut open = FULL & !closed;
        while open != 0 {
            let k = open.trailing_zeros() as usize;
            open &= open - 1;
            if threats(pos.cells(them, k)) & pos.empty(k) != 0 {
                danger |= 1 << k;
            }
        }
        let mut safe_total = 0;
        let mut all_total = 0;
        let mut bs = boards;
        while bs != 0 {
            let b = bs.trailing_zeros() as usize;
            bs &= bs - 1;
            let e = pos.empty(b);
            safe_total += (e & !danger).count_ones();
            all_total += e.count_ones();
        }
        let (mask, total) = if safe_total > 0 {
            (FULL & !danger, safe_total)
        } else {
            (FULL, all_total)
        };
        if total == 0 {
            return None;
        }
        let mut n = self.rng.random_range(0..total);
        let mut bs = boards;
        while bs != 0 {
            let b = bs.trailing_zeros() as u8;
            bs &= bs - 1;
            let e = (pos.empty(b as usize) & mask) as u32;
            let k = e.count_ones();
            if n < k {
                return UtttMove::new(b, nth_set_bit(e, n) as u8);
            }
            n -= k;
        }
        None
    }

    /// Runs the search from `root` and returns the chosen move.
    pub fn search(&mut self, root: &Uttt) -> Option<UtttMove> {
        let moves = root.legal_moves();
        if moves.len() <= 1 {
            self.last = SearchStats::default();
            return moves.first().copied();
        }
        if self.config.solver {
            // A win in one needs no search.
            if let Some(&mv) = game_winning_moves(root).first() {
                self.last = SearchStats {
                    proven: true,
                    ..SearchStats::default()
                };
                return Some(mv);
            }
        }
        if !(self.config.reuse && self.reroot(root)) {
            self.nodes.clear();
            self.nodes.push(Node {
                mv: moves[0],
                first_child: 0,
                children: 0,
                expanded: false,
                visits: 0,
                reward: 0.0,
                proof: Proof::Unknown,
            });
        }
        self.tree_root = Some(*root);
        let started = Instant::now();
        let mut done = 0;
        let mut path: Vec<usize> = Vec::with_capacity(96);
        while done < self.config.iterations {
            if let Some(t) = self.config.time {
                if done % 64 == 0 && started.elapsed() >= t {
                    break;
                }
            }
            done += 1;
            if self.nodes[0].proof != Proof::Unknown {
                break;
            }
            path.clear();
            path.push(0);
            let mut pos = *root;
            let mut idx = 0;
            // Selection down to a leaf.
            while self.nodes[idx].expanded && self.nodes[idx].proof == Proof::Unknown {
                let child = self.select(idx);
                if child == usize::MAX {
                    break;
                }
                pos.play_unchecked(self.nodes[child].mv);
                idx = child;
                path.push(idx);
            }
            // Expansion and simulation.
            let mover = pos.to_move().other();
            let outcome = match pos.outcome() {
                Some(o) => {
                    if self.config.solver {
                        self.nodes[idx].proof = match o {
                            Outcome::Draw => Proof::Draw,
                            Outcome::Win(s) if s == mover => Proof::Win,
                            Outcome::Win(_) => Proof::Loss,
                        };
                    }
                    o
                }
                None => {
                    if self.nodes[idx].proof == Proof::Unknown {
                        self.expand(idx, &pos);
                        // Decisive move: a child that wins the game at once is
                        // played (and so proven) straight away, which proves
                        // this node lost for the player who moved into it.
                        let child = match self.decisive_child(idx, &pos) {
                            Some(c) => c,
                            None => self.select(idx),
                        };
                        if child != usize::MAX {
                            pos.play_unchecked(self.nodes[child].mv);
                            idx = child;
                            path.push(idx);
                            if let Some(o) = pos.outcome() {
                                if self.config.solver {
                                    let m = pos.to_move().other();
                                    self.nodes[idx].proof = match o {
                                        Outcome::Draw => Proof::Draw,
                                        Outcome::Win(s) if s == m => Proof::Win,
                                        Outcome::Win(_) => Proof::Loss,
                                    };
                                }
                            }
                        }
                    }
                    self.playout(pos)
                }
            };
            self.backpropagate(&path, root.to_move(), outcome);
        }
        self.last = SearchStats {
            iterations: done,
            nodes: self.nodes.len(),
            proven: self.nodes[0].proof != Proof::Unknown,
        };
        self.best_root_move()
    }

    /// Adds the outcome to every node on `path` and, with the solver,
    /// proves what can be proven from the leaf up.
    fn backpropagate(&mut self, path: &[usize], root_mover: Seat, outcome: Outcome) {
        for (depth, &idx) in path.iter().enumerate().rev() {
            // The node at depth d was entered by a move of the root's mover
            // when d is odd (the root itself, d = 0, by the other player).
            let mover = if depth % 2 == 1 {
                root_mover
            } else {
                root_mover.other()
            };
            let node = &mut self.nodes[idx];
            node.visits += 1;
            node.reward += outcome.points(mover) as f32;
            if self.config.solver && node.proof == Proof::Unknown && node.expanded {
                let proof = self.prove(idx);
                self.nodes[idx].proof = proof;
            }
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
        let range = self.children(0);
        if let Some(i) = range.clone().find(|&i| self.nodes[i].proof == Proof::Win) {
            return Some(self.nodes[i].mv);
        }
        let pick = range
            .clone()
            .filter(|&i| self.nodes[i].proof != Proof::Loss)
            .max_by_key(|&i| self.nodes[i].visits)
            .or_else(|| range.clone().max_by_key(|&i| self.nodes[i].visits));
        pick.map(|i| self.nodes[i].mv)
    }
}
