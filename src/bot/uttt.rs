//! UTTT bots: `greedy` (one-ply rules), `optimal` (MCTS-Solver with informed
//! playouts) and `uct` (plain UCT with random rollouts, the baseline the
//! engine is measured against).
//!
//! The search is reproducible: with an iteration budget and a seed it makes
//! the same moves on every run. A time budget (`time_ms`) is optional.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{
    maker, no_move_forfeit, plain, Bot, BotError, Builtin, BuiltinBots, Params, RandomBot, RuleBot,
};
use crate::game::grid::{nth_set_bit, winning_cells, FULL};
use crate::game::uttt::{line, threats, Uttt, UtttMove};
use crate::game::{Game, MoveList, Outcome, Seat};
use crate::record::Forfeit;

/// Moves of `pos` that win the game at once.
fn game_winning_moves(pos: &Uttt) -> MoveList<UtttMove> {
    let me = pos.to_move();
    let mut out = MoveList::new();
    for mv in pos.legal_moves() {
        let b = mv.board() as usize;
        let after = pos.cells(me, b) | 1 << mv.cell();
        if line(after) && line(pos.won(me) | 1 << b) {
            out.push(mv);
        }
    }
    out
}

/// Moves of `pos` that win a local board.
fn board_winning_moves(pos: &Uttt) -> MoveList<UtttMove> {
    let me = pos.to_move();
    pos.legal_moves()
        .into_iter()
        .filter(|mv| line(pos.cells(me, mv.board() as usize) | 1 << mv.cell()))
        .collect()
}

/// Whether the player to move in `pos` can win a local board at once.
fn mover_can_win_a_board(pos: &Uttt) -> bool {
    let me = pos.to_move();
    let mut bs = pos.playable_boards();
    while bs != 0 {
        let b = bs.trailing_zeros() as usize;
        bs &= bs - 1;
        if winning_cells(pos.cells(me, b), pos.empty(b)) != 0 {
            return true;
        }
    }
    false
}

/// One-ply rules a beginner would write: win the game, else win a local
/// board, else block the opponent's local win, else avoid sending the
/// opponent to a board where they can win at once or to a free choice;
/// random among equals.
pub struct Greedy;

impl Greedy {
    /// A greedy bot seeded by `seed`.
    pub fn bot(seed: u64) -> RuleBot<Uttt> {
        RuleBot::new("greedy", Self::candidates, seed)
    }

    /// The moves the rules allow in `pos`, all equally good to them.
    pub fn candidates(pos: &Uttt) -> MoveList<UtttMove> {
        let wins = game_winning_moves(pos);
        if !wins.is_empty() {
            return wins;
        }
        let local = board_winning_moves(pos);
        if !local.is_empty() {
            return local;
        }
        let me = pos.to_move();
        let them = me.other();
        let moves = pos.legal_moves();
        let blocks: MoveList<UtttMove> = moves
            .iter()
            .copied()
            .filter(|mv| {
                let b = mv.board() as usize;
                line(pos.cells(them, b) | 1 << mv.cell())
            })
            .collect();
        if !blocks.is_empty() {
            return blocks;
        }
        let safe: MoveList<UtttMove> = moves
            .iter()
            .copied()
            .filter(|&mv| {
                let mut next = *pos;
                next.play_unchecked(mv);
                next.forced().is_some() && !mover_can_win_a_board(&next)
            })
            .collect();
        if safe.is_empty() {
            moves
        } else {
            safe
        }
    }
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
pub struct SearchConfig {
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

impl SearchConfig {
    /// The `optimal` engine's defaults.
    pub fn optimal() -> Self {
        SearchConfig {
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
        SearchConfig {
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
pub struct Mcts {
    config: SearchConfig,
    rng: SmallRng,
    nodes: Vec<Node>,
    /// The position at the root of `nodes`, kept for tree reuse.
    tree_root: Option<Uttt>,
    last: SearchStats,
}

impl Mcts {
    /// A search with `config`, its randomness seeded by `seed`.
    pub fn new(config: SearchConfig, seed: u64) -> Self {
        Mcts {
            config,
            rng: SmallRng::seed_from_u64(seed),
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

/// A bot that runs an [`Mcts`] search for every move.
pub struct SearchBot {
    name: &'static str,
    search: Mcts,
}

impl SearchBot {
    /// A bot named `name` searching with `config`, seeded by `seed`.
    pub fn new(name: &'static str, config: SearchConfig, seed: u64) -> Self {
        SearchBot {
            name,
            search: Mcts::new(config, seed),
        }
    }

    /// Statistics of the last search.
    pub fn stats(&self) -> SearchStats {
        self.search.stats()
    }
}

impl Bot<Uttt> for SearchBot {
    fn name(&self) -> &str {
        self.name
    }

    fn select_move(&mut self, pos: &Uttt) -> Result<UtttMove, Forfeit> {
        self.search.search(pos).ok_or_else(|| no_move_forfeit(pos))
    }
}

fn search_config(base: SearchConfig, params: &Params) -> Result<SearchConfig, BotError> {
    params.only(&["iters", "time_ms", "c"])?;
    let mut cfg = base;
    cfg.iterations = params.get("iters", cfg.iterations)?;
    if cfg.iterations == 0 {
        return Err(BotError("parameter 'iters' must be at least 1".into()));
    }
    if let Some(ms) = params.opt::<u64>("time_ms")? {
        if ms == 0 {
            return Err(BotError("parameter 'time_ms' must be at least 1".into()));
        }
        cfg.time = Some(Duration::from_millis(ms));
        // With a time budget the iteration cap is lifted unless given.
        if params.opt::<u32>("iters")?.is_none() {
            cfg.iterations = u32::MAX;
        }
    }
    cfg.exploration = params.get("c", cfg.exploration)?;
    if !(cfg.exploration.is_finite() && cfg.exploration >= 0.0) {
        return Err(BotError("parameter 'c' must be a number >= 0".into()));
    }
    Ok(cfg)
}

impl BuiltinBots for Uttt {
    const BUILTINS: &'static [Builtin<Self>] = &[
        Builtin {
            name: "random",
            description: "uniform among legal moves",
            params: &[],
            prepare: |p| plain(p, RandomBot::<Uttt>::new),
        },
        Builtin {
            name: "greedy",
            description: "win, else win a board, else block, else a safe send",
            params: &[],
            prepare: |p| plain(p, Greedy::bot),
        },
        Builtin {
            name: "optimal",
            description: "MCTS-Solver with informed playouts (the strongest engine here)",
            params: &[
                "iters=20000: iterations per move (reproducible)",
                "time_ms=N: wall-time budget per move instead (never overruns it)",
                "c=0.5: exploration constant",
            ],
            prepare: |p| {
                let cfg = search_config(SearchConfig::optimal(), p)?;
                Ok(maker(move |seed| SearchBot::new("optimal", cfg, seed)))
            },
        },
        Builtin {
            name: "uct",
            description: "plain UCT with random rollouts (the baseline)",
            params: &[
                "iters=20000: iterations per move",
                "time_ms=N: wall-time budget per move",
                "c=1.414: exploration constant",
            ],
            prepare: |p| {
                let cfg = search_config(SearchConfig::plain_uct(), p)?;
                Ok(maker(move |seed| SearchBot::new("uct", cfg, seed)))
            },
        },
    ];
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

    fn bot(name: &str, params: &str, seed: u64) -> Box<dyn Bot<Uttt>> {
        crate::bot::BuiltinSpec::parse(&format!("{name}:{params}"))
            .prepare::<Uttt>()
            .unwrap()
            .make::<Uttt>(seed)
            .unwrap()
    }

    #[test]
    fn search_is_reproducible_with_a_seed() {
        let p = play(&[(4, 4), (4, 0)]);
        let a: Vec<UtttMove> = (0..3)
            .map(|_| bot("optimal", "iters=2000", 7).select_move(&p).unwrap())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]), "{a:?}");
    }

    #[test]
    fn optimal_takes_an_immediate_global_win() {
        // X has boards 0 and 1, and two in a row in board 2, where it is sent.
        let text = [
            "XXX.OO...",
            "XXXOO....",
            "XX.......",
            "..O......",
            ".........",
            "O........",
            "........O",
            "....O....",
            ".........",
        ]
        .concat()
            + "/2/XX.......";
        let p: Uttt = match text.parse() {
            Ok(p) => p,
            Err(e) => panic!("{text}: {e}"),
        };
        let mv = bot("optimal", "iters=200", 1).select_move(&p).unwrap();
        assert_eq!(mv, UtttMove::new(2, 2).unwrap());
    }

    #[test]
    fn bots_only_play_legal_moves() {
        let mut rng = crate::seed::rng(3);
        for name in ["random", "greedy", "optimal", "uct"] {
            let mut b = bot(
                name,
                if name == "optimal" || name == "uct" {
                    "iters=300"
                } else {
                    ""
                },
                2,
            );
            for _ in 0..6 {
                let mut p = Uttt::new();
                while !p.is_over() {
                    let mv = if p.ply().is_multiple_of(2) {
                        b.select_move(&p).unwrap()
                    } else {
                        p.random_move(&mut rng).unwrap()
                    };
                    assert!(p.is_legal(mv), "{name} played {mv} in {p}");
                    p.play_unchecked(mv);
                }
            }
        }
    }

    #[test]
    fn greedy_follows_its_rules() {
        // X to move in board 0 with two in a row there: the local win.
        let text = [
            "XX..O....",
            "O........",
            ".........",
            "X........",
            ".........",
            "...O.....",
            ".........",
            ".........",
            ".........",
        ]
        .concat()
            + "/0/.........";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            Greedy::candidates(&p).as_slice(),
            &[UtttMove::new(0, 2).unwrap()]
        );
        // With no win or block, greedy never sends the opponent to a free
        // choice or to a board the opponent wins at once.
        let p = play(&[(4, 4)]);
        for mv in Greedy::candidates(&p) {
            let mut n = p;
            n.play_unchecked(mv);
            assert!(n.forced().is_some());
            assert!(!mover_can_win_a_board(&n));
        }
    }

    #[test]
    fn optimal_beats_random_and_greedy() {
        let mut score = 0.0;
        let games = 10;
        for g in 0..games {
            let mut opt = bot("optimal", "iters=1500", g);
            let mut other = bot(if g % 4 < 2 { "random" } else { "greedy" }, "", g);
            let seat = if g % 2 == 0 { Seat::One } else { Seat::Two };
            let mut p = Uttt::new();
            while !p.is_over() {
                let mv = if p.to_move() == seat {
                    opt.select_move(&p).unwrap()
                } else {
                    other.select_move(&p).unwrap()
                };
                p.play_unchecked(mv);
            }
            score += p.outcome().unwrap().points(seat);
        }
        assert!(score >= 9.0, "optimal scored {score}/{games}");
    }

    #[test]
    fn tree_reuse_keeps_the_subtree_two_plies_down() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(SearchConfig::optimal(), 5);
        m.config.iterations = 3000;
        let mv = m.search(&p).unwrap();
        let child = m
            .children(0)
            .find(|&i| m.nodes[i].mv == mv)
            .expect("the chosen move is a root child");
        let reply = m
            .children(child)
            .max_by_key(|&i| m.nodes[i].visits)
            .expect("the chosen move was expanded");
        let (reply_mv, reply_visits) = (m.nodes[reply].mv, m.nodes[reply].visits);
        let mut next = p;
        next.play_unchecked(mv);
        next.play_unchecked(reply_mv);
        assert!(m.reroot(&next));
        assert_eq!(m.nodes[0].visits, reply_visits);
        // Every kept child is a legal move of the new root.
        for i in m.children(0) {
            assert!(next.is_legal(m.nodes[i].mv));
        }
        // A position not below the old root starts a fresh tree.
        assert!(!m.reroot(&play(&[(0, 0)])));
    }

    #[test]
    fn games_with_tree_reuse_replay_exactly() {
        let game = |seed: u64| {
            let mut a = bot("optimal", "iters=400", seed);
            let mut b = bot("optimal", "iters=400", seed + 1);
            let mut p = Uttt::new();
            let mut moves = Vec::new();
            while !p.is_over() {
                let bot = if p.ply().is_multiple_of(2) {
                    &mut a
                } else {
                    &mut b
                };
                let mv = bot.select_move(&p).unwrap();
                moves.push(mv);
                p.play_unchecked(mv);
            }
            moves
        };
        assert_eq!(game(9), game(9));
    }

    #[test]
    fn playouts_take_a_game_win_on_a_free_move() {
        // X has boards 0 and 1 and two in a row on board 2; the move is free
        // (board 5, where the last move sent X, is full).
        let text = [
            "XXX.OO...",
            "XXXOO....",
            "XX.......",
            "..O......",
            ".........",
            "XOXXOOOXX",
            "........O",
            "O...O....",
            "O........",
        ]
        .concat()
            + "/9/XX...=...";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut m = Mcts::new(SearchConfig::optimal(), 3);
        for _ in 0..20 {
            assert_eq!(m.informed_move(&p), UtttMove::new(2, 2));
        }
    }

    #[test]
    fn playouts_avoid_sending_to_an_opponent_win() {
        // X to move in board 4; O threatens a win on boards 0 and 2, and
        // board 8 is closed: cells 0, 2 and 8 are avoided.
        let text = [
            "OO.......",
            ".........",
            "O.O.O....",
            "X........",
            ".........",
            "X........",
            ".........",
            ".........",
            "XXX......",
        ]
        .concat()
            + "/4/........X";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let greedy_only = SearchConfig {
            playout_random_permille: 0,
            ..SearchConfig::optimal()
        };
        let mut m = Mcts::new(greedy_only, 4);
        for _ in 0..200 {
            let mv = m.informed_move(&p).unwrap();
            assert_eq!(mv.board(), 4);
            assert!(![0, 2, 8].contains(&mv.cell()), "{mv}");
        }
        // With the default share of random moves (1 in 4), a random cell of
        // board 4 is one of the 3 avoided ones 1 time in 12.
        let mut m = Mcts::new(SearchConfig::optimal(), 4);
        let avoided = (0..4000)
            .filter(|_| {
                let mv = m.informed_move(&p).unwrap();
                assert_eq!(mv.board(), 4);
                [0, 2, 8].contains(&mv.cell())
            })
            .count();
        assert!((200..500).contains(&avoided), "{avoided} of 4000");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = |p: &str| {
            crate::bot::BuiltinSpec::parse(&format!("optimal:{p}"))
                .prepare::<Uttt>()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(e("iters=0").contains("iters"));
        assert!(e("depth=3").contains("unknown parameter 'depth'"));
        assert!(e("c=x").contains("'c'"));
        assert!(e("time_ms=0").contains("time_ms"));
    }
}
