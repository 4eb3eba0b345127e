//! The search of `optimal`: MCTS-Solver on the bitboard [`Uttt`], with a
//! fading prior (progressive bias) from the policy network, leaves valued
//! by the value network (net.rs) or by informed playouts, tree reuse
//! between moves and a time policy that never overruns its budget.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::game_winning_moves;
use super::net::{PolicyNet, ValueNet};
use super::playout::{informed_playout, position_value};
use super::policy::{learned_priors, PolicyWeights};
use super::prior::{priors, PriorWeights};
use super::uct_model::UctModel;
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
    /// The visit-dependent part of the selection score, kept up to date by
    /// backpropagation so that selection is one multiply-add per child:
    /// the mean reward plus the faded prior bias. For an unvisited node,
    /// the prior's bias alone (`w h`).
    base: f32,
    /// `1 / sqrt(visits)`, the exploration term's factor; [`UNVISITED`]
    /// before the first visit.
    explore: f32,
    /// The first child's index (low 24 bits) and the number of children
    /// (high 8 bits).
    link: u32,
    mv: UtttMove,
    proof: Proof,
    expanded: bool,
}

/// `explore` of a node never visited (a visited one has at most 1).
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
    /// The heuristic value of the move into this node (see `prior`), with a
    /// tiny random part that orders equal moves at random.
    prior: f32,
}

impl Node {
    fn leaf(mv: UtttMove, bias: f32) -> Node {
        Node {
            base: bias,
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

/// The node cap of the trap choice's model search (32 bytes a node:
/// 96 MB).
const TRAP_NODES: usize = 3_000_000;

/// How the search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchConfig {
    /// Iterations per move (the default budget: reproducible).
    pub iterations: u32,
    /// Optional wall-time budget per move; the search stops at whichever
    /// budget runs out first, a little before the time (see
    /// [`Mcts::time_target`]).
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
    /// In informed playouts, when the move is forced to one board where
    /// the opponent could complete a line, take such a cell (if it does
    /// not send the opponent to a board it wins at once or a free choice).
    pub playout_block: bool,
    /// The prior is the learned policy's logit (policy.rs) instead of the
    /// hand-set feature weights (`prior`).
    pub learned_prior: bool,
    /// The learned prior's weights.
    pub policy: PolicyWeights,
    /// A leaf is expanded (its children added) when an iteration reaches
    /// it with at least this many visits before; until then iterations
    /// play out from the leaf itself. 1 expands a node the second time it
    /// is reached (its first visit is the playout that created it).
    pub expand_visits: u32,
    /// Progressive bias: a child's score gets `prior_weight * h / (n +
    /// 1)^prior_fade` for its heuristic value `h` and its visits `n`, so the
    /// heuristic steers the first visits and fades as results come in. 0
    /// turns it off. 0.5 with the policy network (its logits are steeper
    /// than the linear prior's, which played best at 0.75).
    pub prior_weight: f32,
    /// First-play urgency. `None`: every child is tried once before any is
    /// tried twice (the best prior first). `Some(r)`: an unvisited child
    /// scores as if visited once with its parent's mean for its mover minus
    /// `r` (plus its bias), so that a good child can be revisited before
    /// poor ones are ever tried.
    pub fpu_reduction: Option<f32>,
    /// The heuristic's feature weights.
    pub prior: PriorWeights,
    /// With a time budget, stop as soon as the most visited move can no
    /// longer be overtaken in the time left. Off in `optimal`: the time
    /// saved is not carried over, and the iterations it skips would have
    /// grown the subtree that the next move reuses (with it on, 100 ms moves
    /// took 55 ms on average and the engine lost strength). A timed search
    /// always stops when the root is proven or one move is left that is not
    /// proven lost.
    pub early_stop: bool,
    /// Informed playouts stop after this many plies and score the position
    /// with a macro-board evaluation; 0 plays them to the end.
    pub cutoff_plies: u32,
    /// Steepness of that evaluation's logistic: the macro-line
    /// evaluation's (0.5), or a multiplier of the fitted model's sum (1 for
    /// the fitted weights).
    pub eval_weight: f32,
    /// Draw contempt: what a drawn playout or a proven draw is worth to the
    /// player to move at the root (a win 1, a loss 0); to the other player
    /// a draw is worth `1 - draw_value`. 0.5 is neutral. Only the rewards
    /// averaged in the tree change: proofs (a proven draw) stay exact.
    pub draw_value: f32,
    /// With draw contempt, the plies over which it fades: a search from a
    /// position at ply `k` uses `0.5 - (0.5 - draw_value) * (1 - k / n)`
    /// (neutral from ply `n` on), so that early moves steer away from
    /// drawish play while late ones keep a draw in hand rather than
    /// gamble it. 0: the same contempt all game.
    pub draw_fade_plies: u32,
    /// Draw contempt only for the draws the draw network foresees at the
    /// leaves ([`Mcts::set_draw_net`]): finished and proven draws stay
    /// worth 0.5, so that a search never gives up a draw in hand for a
    /// line it only hopes is better.
    pub contempt_unproven_only: bool,
    /// Draw contempt for the root mover's own choices only: the nodes its
    /// moves enter average the rewards with contempt, the other player's
    /// nodes without, so that the search still looks for the opponent's
    /// best replies instead of modelling an opponent that seeks draws
    /// (with symmetric contempt a reply that steers to a draw scores for
    /// the opponent as if it won `0.5 - draw_value` more, and its sharpest
    /// replies get fewer visits).
    pub contempt_ours_only: bool,
    /// When every root move is proven and none wins (the root is a proven
    /// draw or loss), play the move of the best proof whose position the
    /// leaf evaluation (the value network with `net_eval`) likes most for
    /// the mover, instead of the most visited: against a fallible
    /// opponent, the drawn line that still asks it to find good moves.
    /// Proofs stay exact: a proven draw is never given up for a loss.
    pub swindle: bool,
    /// The evaluation of an unfinished position (the cut-off's, and the
    /// leaf's for `value_mix` and `minimax_weight`): the fitted logistic
    /// model (eval.rs) when true, the macro-line potentials when false. At 10 plies and equal
    /// time (32 700 vs 22 000 iterations, 200 games) the fitted one scored
    /// 54.0 % against the baseline, the macro-line one 62.5 %.
    pub fitted_eval: bool,
    /// The tree stops growing at this many nodes (at most [`MAX_NODES`]);
    /// iterations then end in playouts from the leaves they reach.
    pub max_nodes: usize,
    /// Tapered expansion: once the tree holds half of `max_nodes`, a leaf
    /// needs more visits before it is expanded, twice as many for each
    /// further sixteenth of the cap filled, so that the last nodes go to
    /// the most visited leaves instead of the first ones reached. Off, the
    /// tree grows at full rate until it is full, then stops.
    pub taper_expansion: bool,
    /// How fast the progressive bias fades: a child's bias is
    /// `prior_weight * h / (n + 1)^prior_fade` (1: Chaslot's progressive
    /// bias; below 1 the prior keeps its say for more visits).
    pub prior_fade: f32,
    /// Leaf evaluation mixed into every playout's result: an iteration
    /// backs up `(1 - value_mix) * playout + value_mix * eval(leaf)`, with
    /// the value network (`net_eval`) or the cut-off's evaluation
    /// (`fitted_eval`, `eval_weight`). 1, the default: the value network
    /// alone, no playout (docs/performance.md, tenth round). 0: playouts
    /// alone, the engine of before (the cut-off's evaluation at 0.3 scored
    /// +18 [-4, +40] in self-play, ninth round).
    pub value_mix: f32,
    /// Implicit minimax backups (Lanctot, Winands, Pepels and Sturtevant,
    /// 2014): each node also keeps the minimax value of the evaluations of
    /// the leaves below it (the evaluation as for `value_mix`, exact
    /// values for proven and finished positions), and selection reads
    /// `(1 - minimax_weight) * mean + minimax_weight * minimax` instead of
    /// the mean. 0: off, the default: at 0.3 it won +25 to +45 Elo in
    /// self-play at 40 000 iterations but did no better against MCTSBot
    /// (docs/performance.md, ninth round).
    pub minimax_weight: f32,
    /// The leaf evaluation of `value_mix` and `minimax_weight` is the value
    /// network (net.rs) instead of the cut-off's evaluation. With
    /// `value_mix` 1 (the default) the network replaces the playouts.
    pub net_eval: bool,
    /// The prior is the policy network's logit (net.rs) instead of the
    /// learned linear policy's or the hand-set one's.
    pub net_policy: bool,
    /// PUCT selection (AlphaZero's) instead of UCB1 with a progressive
    /// bias, with this constant; 0: off. A child scores
    /// `Q + puct * P * sqrt(N) / (1 + n)`, where `P` is the softmax of the
    /// prior's logits (at `puct_temperature`) over the node's moves, `N`
    /// the parent's visits and `n` the child's; an unvisited child's `Q`
    /// is its parent's mean for its mover minus `puct_fpu`.
    /// `exploration`, `prior_weight`, `prior_fade` and `fpu_reduction`
    /// are unused. 1 in `optimal` since the fifteenth round (+70 [+54, +86]
    /// Elo over UCB1 with the progressive bias at 100 ms, 400 games; the
    /// same score against MCTSBot at 1 s; docs/performance.md); 0 gives
    /// the engine of before (`optimal:puct=0`).
    pub puct: f32,
    /// PUCT's first-play urgency: an unvisited child's value is its
    /// parent's mean for its mover minus this.
    pub puct_fpu: f32,
    /// The softmax temperature of PUCT's prior (1: the logits as they
    /// are; above 1 flatter).
    pub puct_temperature: f32,
    /// PUCT's constant at the nodes where the root's opponent moves is
    /// `puct` times this (1: the same as ours). Above 1 the search
    /// spreads the opponent's visits over more replies, so that a move
    /// of ours is valued by what a fallible opponent is likely to answer
    /// rather than by its best answer alone: it favours positions where
    /// the opponent has many ways to go wrong.
    pub puct_opponent: f32,
    /// A model of a playout-driven opponent (plain UCT with uniformly
    /// random playouts, as board-game's MCTSBot is), from 0 (off, the
    /// default) to 1. Each iteration also plays a uniformly random
    /// playout from its leaf, and each node sums those results apart
    /// from its rewards; at the nodes the root's opponent's moves enter,
    /// selection reads `(1 - m) * mean + m * playout_mean` instead of the
    /// mean, so that the opponent's visits go where its random playouts
    /// would send them. Our own moves are still chosen by the true means:
    /// the search favours moves whose replies a playout-driven opponent
    /// misjudges. Proofs stay exact for both sides. With `minimax_weight`
    /// too, the mean mixed here is the one already mixed with the minimax
    /// value.
    pub opponent_model: f32,
    /// The weight `m` of a reply network's expectation (see
    /// [`Mcts::set_reply_net`]; nothing without one), from 0 (off, the
    /// default) to 1. At the nodes where the root's opponent is to move,
    /// our selection reads `(1 - m) * mean + m * e` instead of the mean,
    /// where `e` is our expected value over the node's visited replies
    /// weighed by the network's probabilities of them (a proven reply at
    /// its exact value). The opponent's visits still follow our own
    /// prior and means, so its refutations are searched as before; only
    /// our choice between moves counts the replies it is likely to play.
    pub reply_weight: f32,
    /// The trap choice: at a root proven a draw (or a loss) with no
    /// winning move, play the drawn (lost) move after which a plain UCT
    /// opponent (uct_model.rs: random playouts, as board-game's MCTSBot
    /// plays) is most likely to choose a reply our proofs show losing
    /// (or not winning): each such move's position is searched by that
    /// model in turn, on an equal share of the time left (of
    /// `iterations` with no time budget), and scored by whether the
    /// model plays a losing reply plus the share of its visits such
    /// replies got. Proofs stay exact: a proven draw is never given up.
    /// Ahead of `swindle`; the most visited move when no candidate
    /// scores.
    pub trap: bool,
}

impl SearchConfig {
    /// The tree's node cap: `max_nodes`, at most [`MAX_NODES`].
    #[inline]
    pub fn node_cap(&self) -> usize {
        self.max_nodes.min(MAX_NODES)
    }

    /// The draw's value for the root's mover in a search from ply `ply`:
    /// `draw_value`, faded over `draw_fade_plies`.
    pub fn draw_value_at(&self, ply: usize) -> f32 {
        let n = self.draw_fade_plies as usize;
        if n == 0 {
            return self.draw_value;
        }
        let left = 1.0 - (ply.min(n) as f32 / n as f32);
        0.5 - (0.5 - self.draw_value) * left
    }

    /// The `optimal` engine's defaults.
    pub fn optimal() -> Self {
        SearchConfig {
            iterations: 20_000,
            time: None,
            exploration: 0.4,
            solver: true,
            informed: true,
            reuse: true,
            playout_random_permille: 250,
            playout_block: false,
            learned_prior: true,
            policy: PolicyWeights::DEFAULT,
            expand_visits: 1,
            prior_weight: 0.5,
            fpu_reduction: Some(0.0),
            prior: PriorWeights::DEFAULT,
            early_stop: false,
            cutoff_plies: 0,
            eval_weight: 0.5,
            draw_value: 0.5,
            draw_fade_plies: 0,
            contempt_unproven_only: false,
            contempt_ours_only: false,
            swindle: false,
            fitted_eval: false,
            max_nodes: MAX_NODES,
            taper_expansion: false,
            prior_fade: 0.5,
            value_mix: 1.0,
            minimax_weight: 0.0,
            net_eval: true,
            net_policy: true,
            puct: 1.0,
            puct_fpu: 0.2,
            puct_temperature: 1.0,
            puct_opponent: 1.0,
            opponent_model: 0.0,
            reply_weight: 0.0,
            trap: false,
        }
    }

    /// The `optimal` engine of before the networks (until 2026-11-26):
    /// informed playouts at the leaves and the learned linear prior at
    /// weight 0.75, selection by UCB1 and the progressive bias, what
    /// `optimal:value=0,prior=learned,bias=0.75,puct=0` gives.
    pub fn playout_engine() -> Self {
        SearchConfig {
            puct: 0.0,
            value_mix: 0.0,
            net_eval: false,
            net_policy: false,
            prior_weight: 0.75,
            ..SearchConfig::optimal()
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
            playout_block: false,
            learned_prior: false,
            policy: PolicyWeights::DEFAULT,
            expand_visits: 1,
            prior_weight: 0.0,
            fpu_reduction: None,
            prior: PriorWeights::DEFAULT,
            early_stop: false,
            cutoff_plies: 0,
            eval_weight: 0.5,
            draw_value: 0.5,
            draw_fade_plies: 0,
            contempt_unproven_only: false,
            contempt_ours_only: false,
            swindle: false,
            fitted_eval: false,
            max_nodes: MAX_NODES,
            taper_expansion: false,
            prior_fade: 1.0,
            value_mix: 0.0,
            minimax_weight: 0.0,
            net_eval: false,
            net_policy: false,
            puct: 0.0,
            puct_fpu: 0.2,
            puct_temperature: 1.0,
            puct_opponent: 1.0,
            opponent_model: 0.0,
            reply_weight: 0.0,
            trap: false,
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

/// The reward for `mover` of a result worth `x_points` to X: `draw` for a
/// draw (exactly 0.5, a cut-off's evaluation of 0.5 included), else its
/// points.
#[inline]
fn mover_reward(mover: Seat, x_points: f32, draw: f32) -> f32 {
    if x_points == 0.5 {
        draw
    } else if mover == Seat::One {
        x_points
    } else {
        1.0 - x_points
    }
}

/// The buffers of a tree: nodes, statistics, minimax values, playout sums.
type Spare = (Vec<Node>, Vec<Stats>, Vec<f32>, Vec<f64>, Vec<Reply>);

/// With a reply network (see [`Mcts::set_reply_net`]), what a node adds
/// to the expectation: the network's probability of the move into it, for
/// the moves of the root's opponent, and, for the nodes where the
/// opponent is to move, the weighed sum of its visited replies' values
/// for us and the sum of their weights.
#[derive(Clone, Copy, Debug, Default)]
struct Reply {
    p: f32,
    weights: f32,
    sum: f64,
}

impl Reply {
    /// Our expected value over the visited replies (NaN: none yet).
    fn expectation(&self) -> f32 {
        if self.weights > 0.0 {
            (self.sum / f64::from(self.weights)) as f32
        } else {
            f32::NAN
        }
    }
}

/// A Monte Carlo tree search over UTTT positions.
pub struct Mcts {
    config: SearchConfig,
    rng: ChaCha8Rng,
    nodes: Vec<Node>,
    /// Each node's [`Stats`], at the node's index.
    stats: Vec<Stats>,
    /// With implicit minimax backups (`SearchConfig::minimax_weight`; empty
    /// without): each node's minimax value for the player who moved into
    /// it, from the leaf evaluations below it, at the node's index; NaN
    /// until an iteration has reached the node. A separate array, so that
    /// the default search's nodes stay as small as they were.
    values: Vec<f32>,
    /// With the opponent model (`SearchConfig::opponent_model`; empty
    /// without): each node's sum of uniformly random playout results for
    /// the player who moved into it, at the node's index (its mean is
    /// over the node's visits).
    model: Vec<f64>,
    /// With a reply network (see [`Mcts::set_reply_net`]; empty without
    /// one or with `reply_weight` 0): each node's [`Reply`], at the
    /// node's index.
    replies: Vec<Reply>,
    /// The previous tree's buffers, reused by the next tree reuse's copy.
    spare: Spare,
    /// The position at the root of `nodes`, kept for tree reuse.
    tree_root: Option<Uttt>,
    /// The harness's per-move limit, when the bot was told it.
    move_limit: Option<Duration>,
    path: Vec<usize>,
    /// The node this iteration expanded, with its minimax value before.
    expanded: (usize, f32),
    last: SearchStats,
    /// The value network of `net_eval`.
    net: &'static ValueNet,
    /// The policy network of `net_policy`.
    policy_net: &'static PolicyNet,
    /// The draw's value for the root's mover in this search: `draw_value`
    /// faded by the root's ply (`draw_fade_plies`).
    draw_now: f32,
    /// A network of the value network's shape giving the chance that the
    /// game ends drawn, for draw contempt at the leaves (see
    /// [`Mcts::set_draw_net`]); none by default.
    draw_net: Option<&'static ValueNet>,
    /// A value network for the leaves where the root's opponent is to
    /// move (see [`Mcts::set_opponent_value_net`]); none by default.
    opponent_net: Option<&'static ValueNet>,
    /// A policy network for the priors of the opponent's moves (see
    /// [`Mcts::set_opponent_policy_net`]); none by default.
    opponent_policy: Option<&'static PolicyNet>,
    /// A policy network of the opponent's replies for the expectation of
    /// `reply_weight` (see [`Mcts::set_reply_net`]); none by default.
    reply_net: Option<&'static PolicyNet>,
    /// The plain UCT opponent of the trap choice (`SearchConfig::trap`),
    /// kept for its buffer.
    trap_model: UctModel,
    /// The trap choice's randomness, apart from the search's so that
    /// the search draws the same numbers with or without it.
    trap_rng: ChaCha8Rng,
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

/// X's chances in the unfinished `pos` by the value network `net` (which
/// gives the mover's).
#[inline]
fn x_value(net: &ValueNet, pos: &Uttt) -> f32 {
    let v = net.value(pos);
    if pos.to_move() == Seat::One {
        v
    } else {
        1.0 - v
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
            values: Vec::new(),
            model: Vec::new(),
            replies: Vec::new(),
            spare: (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            tree_root: None,
            move_limit: None,
            path: Vec::with_capacity(96),
            expanded: (NONE, f32::NAN),
            last: SearchStats::default(),
            net: ValueNet::builtin(),
            policy_net: PolicyNet::builtin(),
            draw_net: None,
            opponent_net: None,
            opponent_policy: None,
            reply_net: None,
            draw_now: config.draw_value,
            trap_model: UctModel::default(),
            trap_rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7a5a_7a5a_7a5a_7a5a),
        }
    }

    /// Evaluates leaves with `net` instead of the built-in network (with
    /// `net_eval`): for tools that compare networks.
    pub fn set_value_net(&mut self, net: &'static ValueNet) {
        self.net = net;
    }

    /// Takes priors from `net` instead of the built-in policy network
    /// (with `net_policy`): for tools that compare networks.
    pub fn set_policy_net(&mut self, net: &'static PolicyNet) {
        self.policy_net = net;
    }

    /// Draw contempt for the draws the value network foresees, not only
    /// the finished and proven ones: with `net_eval` and a `draw_value`
    /// other than 0.5, a leaf's value for the root's mover becomes the
    /// network's expected score minus `(0.5 - draw_value) * p`, where `p`
    /// is `net`'s chance that the game ends drawn (a network trained with
    /// `NET_KIND=draw`). A finished or proven draw (`p` = 1) is worth
    /// `draw_value`, as without it (0.5 with `contempt_unproven_only`).
    /// Off by default: docs/performance.md, fourteenth round.
    pub fn set_draw_net(&mut self, net: &'static ValueNet) {
        self.draw_net = Some(net);
    }

    /// Values the leaves where the root's opponent is to move with `net`
    /// (with `net_eval`), the others with the value network as before: a
    /// pair of networks trained on games against one kind of opponent,
    /// each from its side, gives the search that opponent's chances
    /// where it moves and ours where we do. Off by default:
    /// docs/performance.md, twenty-first round.
    pub fn set_opponent_value_net(&mut self, net: &'static ValueNet) {
        self.opponent_net = Some(net);
    }

    /// Takes the priors of the root's opponent's moves from `net` (with
    /// `net_policy`), ours from the policy network as before: a network
    /// trained on one opponent's own move choices steers the search's
    /// visits among that opponent's replies to the ones it plays. Off by
    /// default: docs/performance.md, twenty-fifth round.
    pub fn set_opponent_policy_net(&mut self, net: &'static PolicyNet) {
        self.opponent_policy = Some(net);
    }

    /// Weighs the values of the root's opponent's replies by `net`'s
    /// probabilities of them where our choices read them, at the weight
    /// `SearchConfig::reply_weight` (see there); the opponent's own
    /// choices, and so where its visits go, stay as before. Off by
    /// default: docs/performance.md, twenty-sixth round.
    pub fn set_reply_net(&mut self, net: &'static PolicyNet) {
        self.reply_net = Some(net);
    }

    /// Whether this search weighs replies by a reply network.
    #[inline]
    fn replies_on(&self) -> bool {
        self.reply_net.is_some() && self.config.reply_weight != 0.0
    }

    /// Statistics of the last search.
    pub fn stats(&self) -> SearchStats {
        self.last
    }

    /// The root's moves and their visits after the last search.
    #[cfg(test)]
    pub(super) fn root_visits(&self) -> Vec<(UtttMove, u32)> {
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
    /// `L - max(L / 10, 30 ms)` (900 ms of a 1 s limit), room for process
    /// scheduling and the protocol's round trip on a loaded machine. `None`
    /// without a time budget.
    pub(crate) fn time_target(&self) -> Option<Duration> {
        let t = self.config.time?;
        let mut target = t.saturating_sub((t / 50).min(Duration::from_millis(20)));
        if let Some(limit) = self.move_limit {
            let margin = (limit / 10).max(Duration::from_millis(30));
            target = target.min(limit.saturating_sub(margin));
        }
        Some(target.max(Duration::from_micros(200)))
    }

    /// Adds the children of `idx` (at position `pos`), with their priors;
    /// `ours`: whether they are the root mover's moves.
    fn expand(&mut self, idx: usize, pos: &Uttt, ours: bool) {
        let first = self.nodes.len();
        let moves = pos.legal_moves();
        let mut values = [0f32; 81];
        if self.config.prior_weight != 0.0
            || self.config.puct > 0.0
            || self.config.fpu_reduction.is_none()
        {
            if self.config.net_policy {
                let net = match self.opponent_policy {
                    Some(net) if !ours => net,
                    _ => self.policy_net,
                };
                net.logits(pos, &moves, &mut values);
            } else if self.config.learned_prior {
                learned_priors(pos, &moves, &self.config.policy, &mut values);
            } else {
                priors(pos, &moves, &self.config.prior, &mut values);
            }
        }
        let w = self.config.prior_weight;
        if self.config.puct > 0.0 {
            // PUCT: the softmax of the logits, its probability as
            // `explore` (`P / (1 + n)` at n = 0) and NaN as `base` until
            // the first visit.
            let t = self.config.puct_temperature.max(1e-3);
            let logits = &mut values[..moves.len()];
            for h in logits.iter_mut() {
                *h = (*h + self.rng.random::<f32>() * 1e-3) / t;
            }
            softmax(logits);
            for (&mv, &p) in moves.iter().zip(logits.iter()) {
                let mut node = Node::leaf(mv, f32::NAN);
                node.explore = p;
                self.nodes.push(node);
                self.stats.push(Stats::leaf(p));
            }
        } else {
            for (&mv, &h) in moves.iter().zip(values.iter()) {
                // The random part only breaks ties between equal moves.
                let prior = h + self.rng.random::<f32>() * 1e-3;
                self.nodes.push(Node::leaf(mv, w * prior));
                self.stats.push(Stats::leaf(prior));
            }
        }
        if self.config.minimax_weight != 0.0 {
            self.values.resize(self.nodes.len(), f32::NAN);
        }
        if self.config.opponent_model != 0.0 {
            self.model.resize(self.nodes.len(), 0.0);
        }
        if self.replies_on() {
            self.replies.resize(self.nodes.len(), Reply::default());
            if let (Some(net), false) = (self.reply_net, ours) {
                net.logits(pos, &moves, &mut values);
                let probabilities = &mut values[..moves.len()];
                softmax(probabilities);
                for (r, &p) in self.replies[first..].iter_mut().zip(probabilities.iter()) {
                    r.p = p;
                }
            }
        }
        let node = &mut self.nodes[idx];
        node.set_children(first, moves.len());
        node.expanded = true;
        // An expanded node's minimax value comes from its children (the
        // iteration that expands it evaluates one of them); backpropagation
        // needs the value it had as a leaf.
        if let Some(v) = self.values.get_mut(idx) {
            self.expanded = (idx, *v);
            *v = f32::NAN;
        }
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
        // With draw contempt the rewards in the tree are for the root's
        // mover: a tree searched for the other player cannot be kept.
        // Nor can one whose reply probabilities are for the other
        // player's moves.
        if (self.config.draw_value != 0.5 || self.replies_on()) && prev.to_move() != root.to_move()
        {
            return false;
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
        let (mut fresh, mut fresh_stats, mut fresh_values, mut fresh_model, mut fresh_replies) =
            std::mem::take(&mut self.spare);
        let values = !self.values.is_empty();
        let model = !self.model.is_empty();
        let replies = !self.replies.is_empty();
        fresh.clear();
        fresh_stats.clear();
        fresh_values.clear();
        fresh_model.clear();
        fresh_replies.clear();
        if replies {
            fresh_replies.push(self.replies[start]);
        }
        fresh.push(self.nodes[start]);
        fresh_stats.push(self.stats[start]);
        if values {
            fresh_values.push(self.values[start]);
        }
        if model {
            fresh_model.push(self.model[start]);
        }
        let mut next = 0;
        while next < fresh.len() {
            let node = fresh[next];
            if node.expanded {
                let (first, count) = (node.first_child(), node.children());
                let at = fresh.len();
                fresh[next].set_children(at, count);
                fresh.extend_from_slice(&self.nodes[first..first + count]);
                fresh_stats.extend_from_slice(&self.stats[first..first + count]);
                if values {
                    fresh_values.extend_from_slice(&self.values[first..first + count]);
                }
                if model {
                    fresh_model.extend_from_slice(&self.model[first..first + count]);
                }
                if replies {
                    fresh_replies.extend_from_slice(&self.replies[first..first + count]);
                }
            }
            next += 1;
        }
        let nodes = std::mem::replace(&mut self.nodes, fresh);
        let stats = std::mem::replace(&mut self.stats, fresh_stats);
        let values = std::mem::replace(&mut self.values, fresh_values);
        let model = std::mem::replace(&mut self.model, fresh_model);
        let replies = std::mem::replace(&mut self.replies, fresh_replies);
        self.spare = (nodes, stats, values, model, replies);
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

    /// Counts one more visit of `idx` with `reward`; `w` is the prior's
    /// weight.
    #[inline]
    fn add(&mut self, idx: usize, reward: f32, w: f32, (played, theirs): (f32, bool)) {
        let s = &mut self.stats[idx];
        s.visits += 1;
        s.reward += f64::from(reward);
        let v = s.visits as f32;
        let inv = 1.0 / v;
        let (prior, mut mean) = (s.prior, s.mean() as f32);
        let a = self.config.minimax_weight;
        if a != 0.0 {
            let m = self.values[idx];
            if !m.is_nan() {
                mean = (1.0 - a) * mean + a * m;
            }
        }
        let b = self.config.opponent_model;
        if b != 0.0 {
            let sum = &mut self.model[idx];
            *sum += f64::from(played);
            if theirs {
                let m = (*sum / f64::from(v)) as f32;
                mean = (1.0 - b) * mean + b * m;
            }
        }
        if !theirs && !self.replies.is_empty() {
            let e = self.replies[idx].expectation();
            if !e.is_nan() {
                let m = self.config.reply_weight;
                mean = (1.0 - m) * mean + m * e;
            }
        }
        let node = &mut self.nodes[idx];
        if self.config.puct > 0.0 {
            node.base = mean;
            node.explore = prior / (v + 1.0);
            return;
        }
        let fade = self.config.prior_fade;
        let fade = if fade == 1.0 {
            v + 1.0
        } else if fade == 0.5 {
            (v + 1.0).sqrt()
        } else {
            (v + 1.0).powf(fade)
        };
        node.base = mean + w * prior / fade;
        node.explore = inv.sqrt();
    }

    #[inline]
    fn node_cap(&self) -> usize {
        self.config.node_cap()
    }

    /// The visits (this one included) a leaf needs before it is expanded:
    /// `expand_visits`, raised as the tree fills with `taper_expansion`.
    #[inline]
    fn expand_threshold(&self) -> u32 {
        let k = self.config.expand_visits;
        let half = self.node_cap() / 2;
        let len = self.nodes.len();
        if !self.config.taper_expansion || len < half {
            return k;
        }
        let steps = ((len - half) * 8 / half.max(1)).min(7) as u32;
        k.max(1).saturating_mul(2 << steps)
    }

    /// Picks the child to descend into (see [`Mcts::best_child`]) by PUCT
    /// with `puct`, else by UCB1 plus the fading prior, unvisited children
    /// scored by the first-play urgency. `ours`: the children are the root
    /// mover's moves (else PUCT's constant is `puct * puct_opponent`).
    fn select(&self, idx: usize, ours: bool) -> usize {
        if self.config.puct > 0.0 {
            let c = if ours {
                self.config.puct
            } else {
                self.config.puct * self.config.puct_opponent
            };
            return self.select_puct(idx, c);
        }
        let parent = &self.stats[idx];
        let c_log = self.config.exploration * (parent.visits.max(1) as f32).ln().sqrt();
        let fpu = self.config.fpu_reduction.map(|r| self.first_play(idx, r));
        self.best_child(idx, |i, n| {
            if n.explore == UNVISITED {
                match fpu {
                    None => 1e9 + self.stats[i].prior,
                    // Exploration as for one visit, so that an untried
                    // child's turn comes as the parent's visits grow
                    // (`base` is the bias `w h` until the first visit).
                    Some(f) => f + c_log + n.base,
                }
            } else {
                n.base + c_log * n.explore
            }
        })
    }

    /// The child of `idx` that selection descends into, by `score` (of
    /// the child's index and node): a proven win at once; never a child
    /// proven lost for the mover, unless all are (then the node is proven
    /// lost and any will do); else the best score, the first of equals.
    #[inline]
    fn best_child(&self, idx: usize, score: impl Fn(usize, &Node) -> f32) -> usize {
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
            let s = score(i, n);
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

    /// [`Mcts::select`] by PUCT (see [`SearchConfig::puct`]): `base` is a
    /// visited child's mean (NaN before its first visit) and `explore` its
    /// `P / (1 + n)`; `c` is the constant for this node's mover.
    fn select_puct(&self, idx: usize, c: f32) -> usize {
        let visits = self.stats[idx].visits.max(1) as f32;
        let scale = c * visits.sqrt();
        let fpu = self.first_play(idx, self.config.puct_fpu);
        self.best_child(idx, |_, n| {
            let q = if n.base.is_nan() { fpu } else { n.base };
            q + scale * n.explore
        })
    }

    /// X's points from a playout from `pos`.
    fn playout(&mut self, mut pos: Uttt) -> f32 {
        let cfg = &self.config;
        if cfg.informed {
            informed_playout(pos, cfg, &mut self.rng)
        } else {
            pos.random_playout(&mut self.rng).points(Seat::One) as f32
        }
    }

    /// X's chances in the unfinished `pos` by the leaf evaluation: the
    /// value network with `net_eval`, else the cut-off's evaluation.
    #[inline]
    fn leaf_value(&self, pos: &Uttt) -> f32 {
        if self.config.net_eval {
            x_value(self.net, pos)
        } else {
            position_value(pos, &self.config)
        }
    }

    /// [`Mcts::leaf_value`] in a search whose root's mover is
    /// `root_mover`: the opponent's network (if any) where the other side
    /// is to move.
    #[inline]
    fn leaf_value_from(&self, pos: &Uttt, root_mover: Seat) -> f32 {
        match self.opponent_net {
            Some(net) if self.config.net_eval && pos.to_move() != root_mover => x_value(net, pos),
            _ => self.leaf_value(pos),
        }
    }

    /// X's leaf value `x` for `pos` with the draw network's contempt (see
    /// [`Mcts::set_draw_net`]) for the root's mover `root_mover`: `x` as it
    /// is without a draw network or contempt.
    #[inline]
    fn with_draw_contempt(&self, pos: &Uttt, root_mover: Seat, x: f32) -> f32 {
        let shift = 0.5 - self.draw_now;
        match self.draw_net {
            Some(net) if shift != 0.0 && self.config.net_eval => {
                let cost = shift * net.value(pos);
                let v = if root_mover == Seat::One {
                    x - cost
                } else {
                    x + cost
                };
                v.clamp(0.0, 1.0)
            }
            _ => x,
        }
    }

    /// One iteration from `root`: selection, expansion, playout (or a proven
    /// value) and backpropagation.
    fn iterate(&mut self, root: &Uttt) {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        self.expanded.0 = NONE;
        path.push(0);
        let mut pos = *root;
        let mut idx = 0;
        // Whether the children of `idx` are the root mover's moves.
        let mut ours = true;
        while self.nodes[idx].expanded && self.nodes[idx].proof == Proof::Unknown {
            let child = self.select(idx, ours);
            if child == NONE {
                break;
            }
            ours = !ours;
            pos.play_unchecked(self.nodes[child].mv);
            idx = child;
            path.push(idx);
        }
        let solver = self.config.solver;
        // X's value of the leaf for implicit minimax: its evaluation, or
        // the exact result when it is proven or finished.
        let mut leaf_x = f32::NAN;
        // What the draw network's contempt took off X's value of the leaf.
        let mut contempt_x = 0.0;
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
                    if !self.nodes[idx].expanded
                        && self.stats[idx].visits + 1 >= self.expand_threshold()
                        && self.nodes.len() + 81 <= self.node_cap()
                    {
                        self.expand(idx, &pos, ours);
                        // Decisive move: a child that wins the game at once
                        // is played (and so proven) straight away.
                        let child = match self.decisive_child(idx, &pos) {
                            Some(c) => c,
                            None => self.select(idx, ours),
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
                    let cfg = &self.config;
                    if (cfg.value_mix != 0.0 || cfg.minimax_weight != 0.0)
                        && pos.outcome().is_none()
                    {
                        let v = self.leaf_value_from(&pos, root.to_move());
                        let e = self.with_draw_contempt(&pos, root.to_move(), v);
                        leaf_x = e;
                        let mix = self.config.value_mix;
                        contempt_x = mix.min(1.0) * (v - e);
                        if mix >= 1.0 {
                            e
                        } else {
                            (1.0 - mix) * self.playout(pos) + mix * e
                        }
                    } else {
                        self.playout(pos)
                    }
                }
            }
        };
        if leaf_x.is_nan() {
            leaf_x = x_points;
        }
        let x_neutral = x_points + contempt_x;
        // The opponent model's view of the leaf: a uniformly random
        // playout, or the exact result of a finished or proven leaf.
        let model_x = if self.config.opponent_model == 0.0
            || pos.outcome().is_some()
            || self.nodes[idx].proof != Proof::Unknown
        {
            x_points
        } else {
            let mut p = pos;
            p.random_playout(&mut self.rng).points(Seat::One) as f32
        };
        self.backpropagate(
            &path,
            root.to_move(),
            (x_points, x_neutral, model_x),
            leaf_x,
        );
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
        self.draw_now = self.config.draw_value_at(root.ply());
        if !(self.config.reuse && self.reroot(root)) {
            self.nodes.clear();
            self.stats.clear();
            self.values.clear();
            self.model.clear();
            self.replies.clear();
            self.nodes.push(Node::leaf(moves[0], 0.0));
            self.stats.push(Stats::leaf(0.0));
            if self.config.minimax_weight != 0.0 {
                self.values.push(f32::NAN);
            }
            if self.config.opponent_model != 0.0 {
                self.model.push(0.0);
            }
            if self.replies_on() {
                self.replies.push(Reply::default());
            }
        }
        self.tree_root = Some(*root);
        // The iteration rate for the early stop is measured from here, past
        // the tree reuse's copy.
        let looping = Instant::now();
        let mut done = 0;
        while done < self.config.iterations && self.nodes[0].proof == Proof::Unknown {
            if done % CLOCK_EVERY == 0 {
                if let Some(d) = deadline {
                    let now = Instant::now();
                    if now >= d {
                        break;
                    }
                    if done >= 256 && self.settled(done, now, looping, d) {
                        break;
                    }
                }
            }
            self.iterate(root);
            done += 1;
        }
        let proven = self.nodes[0].proof != Proof::Unknown;
        let trap = if self.config.trap && proven {
            self.trap_move(root, deadline)
        } else {
            None
        };
        self.last = SearchStats {
            iterations: done,
            nodes: self.nodes.len(),
            proven,
            elapsed: started.elapsed(),
            setup: looping.duration_since(started),
        };
        trap.or_else(|| self.best_root_move())
    }

    /// The trap choice (`SearchConfig::trap`) at a proven root: the
    /// candidate of the best score ([`Mcts::trap_scores`]; the first of
    /// equals); `None` when a move wins or no candidate scores above 0.
    fn trap_move(&mut self, root: &Uttt, deadline: Option<Instant>) -> Option<UtttMove> {
        if self.children(0).any(|i| self.nodes[i].proof == Proof::Win) {
            return None;
        }
        let mut best: Option<(f64, usize)> = None;
        for (i, score) in self.trap_scores(root, deadline) {
            if score > 0.0 && best.is_none_or(|(s, _)| score > s) {
                best = Some((score, i));
            }
        }
        best.map(|(_, i)| self.nodes[i].mv)
    }

    /// The trap choice's candidates at a proven root with their scores:
    /// the root's children of the best proof (a draw, else a loss) with a
    /// reply that does worse for the opponent than that proof (a loss
    /// after a drawn move, anything but a win after a lost one), each
    /// scored by the plain UCT model searching its position: 1 if the
    /// model plays such a reply, plus the share of its root visits they
    /// got. The model gets an equal share of the time left before
    /// `deadline`, or of `iterations` without one; a candidate whose
    /// search ran fewer iterations than the opponent has replies gets no
    /// score.
    fn trap_scores(&mut self, root: &Uttt, deadline: Option<Instant>) -> Vec<(usize, f64)> {
        let range = self.children(0);
        let target = if range.clone().any(|i| self.nodes[i].proof == Proof::Draw) {
            Proof::Draw
        } else {
            Proof::Loss
        };
        let blunder = |p: Proof| match target {
            Proof::Draw => p == Proof::Loss,
            _ => p != Proof::Win,
        };
        let candidates: Vec<(usize, Vec<UtttMove>)> = range
            .filter(|&i| self.nodes[i].proof == target && self.nodes[i].expanded)
            .map(|i| {
                let bad = self
                    .children(i)
                    .filter(|&j| blunder(self.nodes[j].proof))
                    .map(|j| self.nodes[j].mv)
                    .collect();
                (i, bad)
            })
            .filter(|(_, bad): &(usize, Vec<UtttMove>)| !bad.is_empty())
            .collect();
        let n = candidates.len();
        let per = (self.config.iterations / n.max(1) as u32).max(1);
        let mut scores = Vec::with_capacity(n);
        for (k, (i, bad)) in candidates.iter().enumerate() {
            let mut pos = *root;
            pos.play_unchecked(self.nodes[*i].mv);
            let share = deadline.map(|d| {
                let now = Instant::now();
                now + d.saturating_duration_since(now) / (n - k) as u32
            });
            let Some(c) = self
                .trap_model
                .choose(&pos, per, share, TRAP_NODES, &mut self.trap_rng)
            else {
                continue;
            };
            // A search that did not try every reply once picked by
            // order, not by what it saw: no score.
            if (c.iterations as usize) < c.visits.len() {
                continue;
            }
            let total: u32 = c.visits.iter().map(|&(_, v)| v).sum();
            let on_bad: u32 = c
                .visits
                .iter()
                .filter(|(m, _)| bad.contains(m))
                .map(|&(_, v)| v)
                .sum();
            let score = f64::from(u8::from(bad.contains(&c.mv)))
                + f64::from(on_bad) / f64::from(total.max(1));
            scores.push((*i, score));
        }
        scores
    }

    /// Whether the move to play can no longer change before `deadline`:
    /// one move is left that is not proven lost, or, with `early_stop`, the
    /// most visited move leads the next by more visits than the iterations
    /// left at the rate since `looping` (the loop's start).
    fn settled(&self, done: u32, now: Instant, looping: Instant, deadline: Instant) -> bool {
        if !self.nodes[0].expanded {
            return false;
        }
        let mut first = 0u32;
        let mut second = 0u32;
        let mut alive = 0;
        for i in self.children(0) {
            let n = &self.nodes[i];
            if n.proof == Proof::Loss {
                continue;
            }
            if n.proof == Proof::Win {
                return true;
            }
            alive += 1;
            let visits = self.stats[i].visits;
            if visits > first {
                second = first;
                first = visits;
            } else if visits > second {
                second = visits;
            }
        }
        if alive <= 1 {
            return true;
        }
        if !self.config.early_stop {
            return false;
        }
        let spent = now.duration_since(looping).as_secs_f64();
        let left = deadline.duration_since(now).as_secs_f64();
        let rate = done as f64 / spent.max(1e-6);
        (first - second) as f64 > rate * left
    }

    /// Adds the playout's result (X's points: with contempt, then without,
    /// then the opponent model's random playout) to every node on `path`
    /// and, with the solver,
    /// proves what can be proven from the leaf up (a node's proof can only
    /// change when one of its children's did).
    fn backpropagate(
        &mut self,
        path: &[usize],
        root_mover: Seat,
        (x_points, x_neutral, model_x): (f32, f32, f32),
        leaf_x: f32,
    ) {
        let Some((&leaf, above)) = path.split_last() else {
            return;
        };
        let win = self.root_reward(root_mover, x_points);
        // With contempt for our choices only, the other player's nodes
        // count the result without it: they play to win, not to draw.
        let theirs = if self.config.contempt_ours_only {
            mover_reward(root_mover, x_neutral, 0.5)
        } else {
            win
        };
        // The node at depth d was entered by a move of the root's mover when
        // d is odd (the root itself, d = 0, by the other player).
        let reward = |depth: usize| if depth % 2 == 1 { win } else { 1.0 - theirs };
        // The random playout's result for the player who moved into the
        // node at `depth`, and whether that player is the opponent.
        let model_root = mover_reward(root_mover, model_x, 0.5);
        let played = |depth: usize| {
            if depth % 2 == 1 {
                (model_root, false)
            } else {
                (1.0 - model_root, true)
            }
        };
        let w = self.config.prior_weight;
        let minimax = self.config.minimax_weight != 0.0;
        // The minimax value of the node below, before and after this
        // backup (NaN: none); `below` whether it changed.
        let (mut old, mut new) = (f32::NAN, f32::NAN);
        let mut below = false;
        if minimax {
            old = self.minimax_value(leaf);
            let root_x = if root_mover == Seat::One {
                leaf_x
            } else {
                1.0 - leaf_x
            };
            self.values[leaf] = if above.len() % 2 == 1 {
                root_x
            } else {
                1.0 - root_x
            };
            new = self.minimax_value(leaf);
            below = old.to_bits() != new.to_bits();
        }
        // With a reply network: the node below and its value for its
        // parent's mover before this backup (`None`: unvisited).
        let replies = !self.replies.is_empty();
        // Only the opponent's replies (even depths) count in an expectation.
        let counted = |depth: usize| depth > 0 && depth.is_multiple_of(2);
        let mut reply = (leaf, None);
        if replies && counted(above.len()) && self.stats[leaf].visits > 0 {
            reply.1 = Some(self.reply_value(leaf));
        }
        self.add(leaf, reward(above.len()), w, played(above.len()));
        let mut changed = self.config.solver && self.nodes[leaf].proof != Proof::Unknown;
        for (depth, &idx) in above.iter().enumerate().rev() {
            if replies {
                // The node at an odd depth was entered by our move: its
                // children are the opponent's replies.
                if depth % 2 == 1 {
                    self.count_reply(idx, reply);
                }
                reply = (idx, None);
                if counted(depth) && self.stats[idx].visits > 0 {
                    reply.1 = Some(self.reply_value(idx));
                }
            }
            let before = match self.expanded {
                _ if !below => 0.0,
                (i, v) if i == idx => v,
                _ => self.minimax_value(idx),
            };
            if changed && self.nodes[idx].proof == Proof::Unknown {
                let proof = self.prove(idx);
                self.nodes[idx].proof = proof;
                changed = proof != Proof::Unknown;
            } else {
                changed = false;
            }
            if below {
                self.back_up_minimax(idx, old, new);
                (old, new) = (before, self.minimax_value(idx));
                below = old.to_bits() != new.to_bits();
            }
            self.add(idx, reward(depth), w, played(depth));
        }
    }

    /// The value of node `i` for its parent's mover, as the reply
    /// expectation counts it: its proof's when it is proven, else the
    /// complement of its mean.
    #[inline]
    fn reply_value(&self, i: usize) -> f64 {
        match self.nodes[i].proof {
            Proof::Win => 0.0,
            Proof::Loss => 1.0,
            Proof::Draw => 0.5,
            Proof::Unknown => 1.0 - self.stats[i].mean(),
        }
    }

    /// Counts the change of the reply `child` (its value before this
    /// backup; `None`: it was unvisited) in the expectation of `parent`.
    #[inline]
    fn count_reply(&mut self, parent: usize, (child, before): (usize, Option<f64>)) {
        let p = self.replies[child].p;
        let after = self.reply_value(child);
        let r = &mut self.replies[parent];
        match before {
            None => {
                r.weights += p;
                r.sum += f64::from(p) * after;
            }
            Some(b) => r.sum += f64::from(p) * (after - b),
        }
    }

    /// What a parent's minimax value reads for node `i`: its proof when it
    /// is proven, else its minimax value (NaN: none yet).
    #[inline]
    fn minimax_value(&self, i: usize) -> f32 {
        match self.nodes[i].proof {
            Proof::Win => 1.0,
            Proof::Loss => 0.0,
            Proof::Draw => 0.5,
            Proof::Unknown => self.values[i],
        }
    }

    /// Updates the minimax value of `idx` after one child's value went
    /// from `old` to `new` (NaN: none): the complement of its best child's
    /// value, rescanning the children only when the best child got worse
    /// (or the node has no value from its children yet).
    fn back_up_minimax(&mut self, idx: usize, old: f32, new: f32) {
        let current = self.values[idx];
        if current.is_nan() {
            self.rescan_minimax(idx);
            return;
        }
        // `1 - (1 - v)` need not be `v` to the last bit: the best child's
        // value is matched with a tolerance (a needless rescan costs only
        // time).
        let best = 1.0 - current;
        if new > best {
            self.values[idx] = 1.0 - new;
        } else if old >= best - 1e-6 && (new < old || new.is_nan()) {
            self.rescan_minimax(idx);
        }
    }

    /// Sets the minimax value of `idx` from all its children: the
    /// complement of the best child's value, over the children that have
    /// one; NaN when none has.
    fn rescan_minimax(&mut self, idx: usize) {
        let mut best = f32::NAN;
        for i in self.children(idx) {
            let v = self.minimax_value(i);
            // NaN (no value yet) never wins the comparison.
            if v > best || best.is_nan() {
                best = v;
            }
        }
        self.values[idx] = 1.0 - best;
    }

    /// The root mover's reward for a playout or proven result worth
    /// `x_points` to X: 1 for a win, 0 for a loss, `draw_value` for a draw
    /// (a playout cut-off's evaluation of exactly 0.5 counts as one; other
    /// evaluations are left as they are).
    fn root_reward(&self, root_mover: Seat, x_points: f32) -> f32 {
        let draw = if self.config.contempt_unproven_only {
            0.5
        } else {
            self.draw_now
        };
        mover_reward(root_mover, x_points, draw)
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
        if self.config.swindle && self.nodes[0].proof != Proof::Unknown {
            if let Some(i) = self.swindle_move() {
                return Some(self.nodes[i].mv);
            }
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

    /// At a proven root with no winning move, the child of the best proof
    /// (a draw, else a loss) whose position the leaf evaluation values
    /// highest for the root's mover (a finished position: its result);
    /// ties go to the first such child. `None` when the tree has no root.
    fn swindle_move(&self) -> Option<usize> {
        let root = self.tree_root?;
        let range = self.children(0);
        let best = if range.clone().any(|i| self.nodes[i].proof == Proof::Draw) {
            Proof::Draw
        } else {
            Proof::Loss
        };
        let mut pick: Option<(usize, f32)> = None;
        for i in range.filter(|&i| self.nodes[i].proof == best) {
            let v = self.child_value_for_mover(&root, i);
            if pick.is_none_or(|(_, b)| v > b) {
                pick = Some((i, v));
            }
        }
        pick.map(|(i, _)| i)
    }

    /// The position after `root`'s child `i`, valued for `root`'s mover:
    /// its result if the game is over, else the leaf evaluation.
    fn child_value_for_mover(&self, root: &Uttt, i: usize) -> f32 {
        let mut pos = *root;
        pos.play_unchecked(self.nodes[i].mv);
        let x = match pos.outcome() {
            Some(o) => o.points(Seat::One) as f32,
            None => self.leaf_value(&pos),
        };
        if root.to_move() == Seat::One {
            x
        } else {
            1.0 - x
        }
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
        assert_eq!(ms(m.time_target()), Some(70));
        assert_eq!(Mcts::new(SearchConfig::optimal(), 1).time_target(), None);
    }

    #[test]
    fn a_timed_search_answers_within_its_budget() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(
            SearchConfig {
                iterations: u32::MAX,
                time: Some(Duration::from_millis(30)),
                early_stop: false,
                ..SearchConfig::optimal()
            },
            2,
        );
        assert!(m.search(&p).is_some());
        let s = m.stats();
        // The search stops at 29.4 ms; on a loaded machine the thread can
        // be descheduled past that, hence the slack.
        assert!(s.elapsed <= Duration::from_millis(90), "{s:?}");
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
    fn delayed_expansion_expands_only_visited_leaves() {
        let p = play(&[(4, 4), (4, 0)]);
        let search = |k: u32, seed: u64| {
            let mut m = Mcts::new(
                SearchConfig {
                    iterations: 4000,
                    expand_visits: k,
                    reuse: false,
                    ..SearchConfig::optimal()
                },
                seed,
            );
            let mv = m.search(&p).unwrap();
            (mv, m)
        };
        let (_, eager) = search(1, 7);
        let (mv, lazy) = search(4, 7);
        assert!(p.is_legal(mv));
        // Every expanded node below the root had been reached 3 times
        // before its expansion, and the 4th visit expanded it.
        for (n, s) in lazy.nodes.iter().zip(&lazy.stats).skip(1) {
            if n.expanded {
                assert!(s.visits >= 4, "{n:?} {s:?}");
            }
        }
        assert!(
            lazy.nodes.len() * 2 < eager.nodes.len(),
            "{} nodes against {}",
            lazy.nodes.len(),
            eager.nodes.len()
        );
        // Reproducible for a seed.
        let (again, twin) = search(4, 7);
        assert_eq!(again, mv);
        assert_eq!(twin.nodes.len(), lazy.nodes.len());
    }

    #[test]
    fn the_tree_stops_at_its_cap_and_tapers_expansion_before_it() {
        let p = play(&[(4, 4), (4, 0)]);
        let cap = 20_000;
        let search = |taper: bool, iterations: u32| {
            let mut m = Mcts::new(
                SearchConfig {
                    iterations,
                    reuse: false,
                    max_nodes: cap,
                    taper_expansion: taper,
                    ..SearchConfig::optimal()
                },
                3,
            );
            let mv = m.search(&p).unwrap();
            assert!(p.is_legal(mv));
            m
        };
        let hard = search(false, 30_000);
        assert!(hard.nodes.len() <= cap && hard.nodes.len() + 81 > cap);
        // Without the taper, leaves are expanded on their second visit
        // right up to the cap.
        let late = |m: &Mcts| -> Vec<(usize, u32)> {
            m.nodes
                .iter()
                .zip(&m.stats)
                .filter(|(n, _)| n.expanded && n.first_child() >= cap / 2)
                .map(|(n, s)| (n.first_child(), s.visits))
                .collect()
        };
        assert!(late(&hard).iter().any(|&(_, v)| v < 4));
        let tapered = search(true, 30_000);
        assert!(tapered.nodes.len() <= cap);
        let expanded_late = late(&tapered);
        assert!(!expanded_late.is_empty());
        for (first, visits) in expanded_late {
            // The node was expanded when the tree held `first` nodes.
            let steps = ((first - cap / 2) * 8 / (cap / 2)).min(7);
            assert!(visits >= 2 << steps, "{visits} visits at {first} nodes");
        }
        // Below half the cap the taper changes nothing.
        let small = |taper: bool| {
            let m = search(taper, 1000);
            (m.best_root_move(), m.nodes.len())
        };
        assert!(small(false).1 < cap / 2);
        assert_eq!(small(false), small(true));
    }

    #[test]
    fn draw_value_sets_the_root_movers_reward_for_a_draw() {
        let cfg = |d: f32| SearchConfig {
            draw_value: d,
            ..SearchConfig::optimal()
        };
        let neutral = Mcts::new(cfg(0.5), 1);
        let contempt = Mcts::new(cfg(0.4), 1);
        for root_mover in [Seat::One, Seat::Two] {
            assert_eq!(neutral.root_reward(root_mover, 0.5), 0.5);
            assert_eq!(contempt.root_reward(root_mover, 0.5), 0.4);
        }
        // Wins and losses are untouched.
        assert_eq!(contempt.root_reward(Seat::One, 1.0), 1.0);
        assert_eq!(contempt.root_reward(Seat::Two, 1.0), 0.0);
        assert_eq!(contempt.root_reward(Seat::Two, 0.0), 1.0);
        // In the tree, the root mover's moves get the draw's value, the
        // other player's moves 1 minus it.
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = expanded_root(cfg(0.4), &p);
        let child = m.children(0).next().unwrap();
        let mut after = p;
        after.play_unchecked(m.nodes[child].mv);
        m.expand(child, &after, false);
        let grandchild = m.children(child).next().unwrap();
        m.backpropagate(&[0, child, grandchild], p.to_move(), (0.5, 0.5, 0.5), 0.5);
        assert!((m.stats[child].reward - 0.4).abs() < 1e-6);
        assert!((m.stats[grandchild].reward - 0.6).abs() < 1e-6);
        assert!((m.stats[0].reward - 0.6).abs() < 1e-6);
        // With contempt for our choices only, the other player's nodes
        // count the draw at 0.5.
        let ours_only = SearchConfig {
            contempt_ours_only: true,
            ..cfg(0.4)
        };
        let mut m = expanded_root(ours_only, &p);
        m.expand(child, &after, false);
        m.backpropagate(&[0, child, grandchild], p.to_move(), (0.5, 0.5, 0.5), 0.5);
        assert!((m.stats[child].reward - 0.4).abs() < 1e-6);
        assert!((m.stats[grandchild].reward - 0.5).abs() < 1e-6);
        assert!((m.stats[0].reward - 0.5).abs() < 1e-6);
        // A leaf the draw network marked down: ours see the marked-down
        // value, theirs the network's own (X is the root's mover).
        m.backpropagate(
            &[0, child, grandchild],
            p.to_move(),
            (0.52, 0.6, 0.52),
            0.52,
        );
        assert!((m.stats[child].reward - 0.92).abs() < 1e-6);
        assert!((m.stats[grandchild].reward - 0.9).abs() < 1e-6);
    }

    #[test]
    fn a_node_with_millions_of_visits_keeps_its_mean() {
        // A 4 s search's root children pass 2^22 in their reward sums,
        // where an f32 sum rounds every value added to 0, 0.5 or 1: values
        // of 0.47 and 0.53 then averaged 0.5, values of 0.2 averaged 0.
        let p = play(&[(4, 4), (4, 0)]);
        for config in [
            SearchConfig::optimal(),
            SearchConfig {
                puct: 0.0,
                ..SearchConfig::optimal()
            },
        ] {
            let mut m = expanded_root(config, &p);
            let child = m.children(0).next().unwrap();
            let n = 10_000_000u32;
            for i in 0..n {
                m.add(
                    child,
                    if i % 2 == 0 { 0.44 } else { 0.5 },
                    0.0,
                    (0.5, false),
                );
                m.add(0, 0.2, 0.0, (0.5, false));
            }
            assert_eq!(m.stats[child].visits, n);
            let mean = m.stats[child].mean();
            assert!((mean - 0.47).abs() < 1e-6, "{mean}");
            if config.puct > 0.0 {
                assert!((m.nodes[child].base - 0.47).abs() < 1e-5);
            }
            // The root's children see their parent's mean, 0.2 for the
            // root's mover's opponent, as 0.8 before the reduction.
            assert!((m.first_play(0, 0.0) - 0.8).abs() < 1e-5);
            m.tree_root = Some(p);
            assert!((m.root_value(&p).unwrap() - 0.8).abs() < 1e-5);
        }
    }

    /// A network that gives every position the chance `p`: all weights
    /// zero, the output's bias (the last parameter) `logit(p)`.
    fn constant_net(p: f32) -> &'static ValueNet {
        let mut flat = vec![0.0; ValueNet::PARAMS];
        flat[ValueNet::PARAMS - 1] = (p / (1.0 - p)).ln();
        Box::leak(Box::new(ValueNet::from_flat(&flat)))
    }

    #[test]
    fn draw_contempt_fades_over_the_plies_asked() {
        let cfg = |n: u32| SearchConfig {
            draw_value: 0.4,
            draw_fade_plies: n,
            ..SearchConfig::optimal()
        };
        assert_eq!(cfg(0).draw_value_at(0), 0.4);
        assert_eq!(cfg(0).draw_value_at(70), 0.4);
        assert!((cfg(40).draw_value_at(0) - 0.4).abs() < 1e-6);
        assert!((cfg(40).draw_value_at(20) - 0.45).abs() < 1e-6);
        assert_eq!(cfg(40).draw_value_at(40), 0.5);
        assert_eq!(cfg(40).draw_value_at(60), 0.5);
        // A search takes the value at its root's ply.
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 200,
                ..cfg(4)
            },
            1,
        );
        m.search(&p);
        assert!((m.root_reward(Seat::One, 0.5) - 0.45).abs() < 1e-6);
    }

    #[test]
    fn the_opponents_network_values_the_leaves_where_the_opponent_moves() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut q = p;
        q.play_unchecked(q.legal_moves()[0]);
        let mut m = Mcts::new(SearchConfig::optimal(), 1);
        let (own, theirs) = (m.leaf_value(&p), m.leaf_value(&q));
        // Without a second network both sides' leaves are the value
        // network's.
        assert_eq!(m.leaf_value_from(&p, Seat::One), own);
        assert_eq!(m.leaf_value_from(&q, Seat::One), theirs);
        m.set_opponent_value_net(constant_net(0.8));
        // X (the root's mover) to move in `p`: the value network still.
        assert_eq!(m.leaf_value_from(&p, Seat::One), own);
        // O to move in `q`: the opponent's network, 0.8 for O, 0.2 for X.
        assert!((m.leaf_value_from(&q, Seat::One) - 0.2).abs() < 1e-3);
        // With O at the root, X's leaves are the opponent's.
        assert!((m.leaf_value_from(&p, Seat::Two) - 0.8).abs() < 1e-3);
        assert_eq!(m.leaf_value_from(&q, Seat::Two), theirs);
        // The search runs with it and plays a legal move.
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 500,
                ..SearchConfig::optimal()
            },
            2,
        );
        m.set_opponent_value_net(constant_net(0.3));
        let mv = m.search(&p).expect("a move");
        assert!(p.legal_moves().contains(&mv));
    }

    #[test]
    fn the_draw_network_moves_leaf_values_away_from_foreseen_draws() {
        let cfg = |d: f32| SearchConfig {
            draw_value: d,
            ..SearchConfig::optimal()
        };
        let pos = play(&[(4, 4), (4, 0)]);
        let x = 0.6;
        // Without a draw network, or without contempt, values stay.
        assert_eq!(
            Mcts::new(cfg(0.4), 1).with_draw_contempt(&pos, Seat::One, x),
            x
        );
        let mut neutral = Mcts::new(cfg(0.5), 1);
        neutral.set_draw_net(constant_net(0.8));
        assert_eq!(neutral.with_draw_contempt(&pos, Seat::One, x), x);
        // A draw foreseen at 0.8 costs the root's mover 0.8 x (0.5 - 0.4):
        // X's value falls when X is the root's mover and rises when O is.
        let mut m = Mcts::new(cfg(0.4), 1);
        m.set_draw_net(constant_net(0.8));
        assert!((m.with_draw_contempt(&pos, Seat::One, x) - 0.52).abs() < 1e-3);
        assert!((m.with_draw_contempt(&pos, Seat::Two, x) - 0.68).abs() < 1e-3);
        // A certain draw is worth the draw's value, as a proven one is.
        m.set_draw_net(constant_net(0.999_99));
        assert!((m.with_draw_contempt(&pos, Seat::One, 0.5) - 0.4).abs() < 1e-3);
        // Values stay in [0, 1].
        assert_eq!(m.with_draw_contempt(&pos, Seat::One, 0.01), 0.0);
        // With contempt for unproven draws only, a finished or proven draw
        // is worth 0.5 and the leaves still pay for foreseen draws.
        let mut unproven = Mcts::new(
            SearchConfig {
                contempt_unproven_only: true,
                ..cfg(0.4)
            },
            1,
        );
        unproven.set_draw_net(constant_net(0.8));
        assert_eq!(unproven.root_reward(Seat::One, 0.5), 0.5);
        assert_eq!(m.root_reward(Seat::One, 0.5), 0.4);
        assert!((unproven.with_draw_contempt(&pos, Seat::One, x) - 0.52).abs() < 1e-3);
        // A search with it plays legal moves, the same ones for a seed.
        let searched = |seed: u64| {
            let mut m = Mcts::new(
                SearchConfig {
                    iterations: 3000,
                    ..cfg(0.4)
                },
                seed,
            );
            m.set_draw_net(constant_net(0.7));
            let mut p = pos;
            let mut moves = Vec::new();
            for _ in 0..6 {
                let mv = m.search(&p).expect("a move");
                assert!(p.is_legal(mv), "{mv} in {p}");
                p.play_unchecked(mv);
                moves.push(mv);
            }
            moves
        };
        assert_eq!(searched(3), searched(3));
    }

    /// Positions near the end of seeded random games whose root a search
    /// proves a draw with more than one drawn move: at each, the swindle
    /// picks a drawn move (never a lost one) of the highest evaluation,
    /// while the default keeps the most visited drawn move.
    #[test]
    fn swindle_plays_the_drawn_move_the_evaluation_likes_most() {
        use rand::seq::IndexedRandom;
        let cfg = |swindle: bool| SearchConfig {
            iterations: 4000,
            swindle,
            ..SearchConfig::optimal()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        let (mut found, mut differs) = (0, 0);
        for _ in 0..400 {
            let mut p = Uttt::new();
            while p.outcome().is_none() && p.ply() < 81 {
                let moves = p.legal_moves();
                if p.ply() >= 30 && moves.len() > 1 {
                    let mut plain = Mcts::new(cfg(false), 1);
                    let mut sw = Mcts::new(cfg(true), 1);
                    let mv = plain.search(&p);
                    let smv = sw.search(&p);
                    // A win in one is played without a tree.
                    let root = sw.nodes.first().map_or(Proof::Unknown, |n| n.proof);
                    let drawn: Vec<usize> = match root {
                        Proof::Unknown => Vec::new(),
                        _ => sw
                            .children(0)
                            .filter(|&i| sw.nodes[i].proof == Proof::Draw)
                            .collect(),
                    };
                    if drawn.len() > 1 {
                        found += 1;
                        let value = |i: usize| sw.child_value_for_mover(&p, i);
                        let top = drawn.iter().map(|&i| value(i)).fold(f32::MIN, f32::max);
                        let i = drawn
                            .iter()
                            .copied()
                            .find(|&i| Some(sw.nodes[i].mv) == smv)
                            .expect("the swindle plays a drawn move");
                        assert_eq!(value(i), top);
                        // Without it, the same tree's most visited drawn move.
                        assert_eq!(plain.nodes.len(), sw.nodes.len());
                        differs += usize::from(mv != smv);
                        break;
                    }
                }
                let Some(&mv) = moves.choose(&mut rng) else {
                    break;
                };
                p.play_unchecked(mv);
            }
            if found >= 8 {
                break;
            }
        }
        assert!(found >= 8, "only {found} proven-draw roots found");
        assert!(differs >= 1, "the swindle never changed the move");
    }

    /// At proven-draw roots the trap choice plays a drawn move, the one
    /// its model scores best (recomputed from the same generator state),
    /// and when it departs from the most visited move, a move after which
    /// the opponent has a losing reply; the tree is the same with or
    /// without it.
    #[test]
    fn the_trap_choice_plays_the_drawn_move_the_model_most_likely_blunders_after() {
        use rand::seq::IndexedRandom;
        let cfg = |trap: bool| SearchConfig {
            iterations: 4000,
            trap,
            ..SearchConfig::optimal()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(37);
        let (mut found, mut differs) = (0, 0);
        for _ in 0..1000 {
            let mut p = Uttt::new();
            while p.outcome().is_none() && p.ply() < 81 {
                let moves = p.legal_moves();
                if p.ply() >= 40 && moves.len() > 1 {
                    let mut plain = Mcts::new(cfg(false), 1);
                    let mut trap = Mcts::new(cfg(true), 1);
                    let saved = trap.trap_rng.clone();
                    let mv = plain.search(&p);
                    let tmv = trap.search(&p);
                    assert_eq!(plain.nodes.len(), trap.nodes.len());
                    let root = trap.nodes.first().map_or(Proof::Unknown, |n| n.proof);
                    let kids = if trap.nodes.is_empty() {
                        0..0
                    } else {
                        trap.children(0)
                    };
                    let drawn = kids
                        .clone()
                        .filter(|&i| trap.nodes[i].proof == Proof::Draw)
                        .count();
                    let wins = kids.clone().any(|i| trap.nodes[i].proof == Proof::Win);
                    if root != Proof::Unknown && !wins {
                        // The best proof among the moves, and the replies
                        // that do worse for the opponent than it.
                        let target = if drawn > 0 { Proof::Draw } else { Proof::Loss };
                        let blunder = |q: Proof| match target {
                            Proof::Draw => q == Proof::Loss,
                            _ => q != Proof::Win,
                        };
                        trap.trap_rng = saved;
                        let scores = trap.trap_scores(&p, None);
                        if scores.iter().any(|&(_, s)| s > 0.0) {
                            found += usize::from(drawn > 1);
                            let top = scores.iter().map(|&(_, s)| s).fold(0.0, f64::max);
                            let (i, _) = *scores
                                .iter()
                                .find(|&&(_, s)| s == top)
                                .expect("a best candidate");
                            assert_eq!(Some(trap.nodes[i].mv), tmv);
                            assert_eq!(trap.nodes[i].proof, target);
                            assert!(trap.children(i).any(|j| blunder(trap.nodes[j].proof)));
                            differs += usize::from(mv != tmv);
                        } else {
                            assert_eq!(mv, tmv);
                        }
                        break;
                    }
                    assert_eq!(mv, tmv);
                }
                let Some(&mv) = moves.choose(&mut rng) else {
                    break;
                };
                p.play_unchecked(mv);
            }
            if found >= 5 {
                break;
            }
        }
        assert!(
            found >= 5,
            "only {found} proven-draw roots with a trap found"
        );
        assert!(differs >= 1, "the trap choice never changed the move");
    }

    #[test]
    fn an_iteration_budget_search_with_contempt_is_deterministic() {
        let run = || {
            let mut m = Mcts::new(
                SearchConfig {
                    iterations: 3000,
                    draw_value: 0.4,
                    ..SearchConfig::optimal()
                },
                9,
            );
            let mut p = play(&[(4, 4), (4, 0)]);
            let mut moves = Vec::new();
            for _ in 0..6 {
                let mv = m.search(&p).unwrap();
                moves.push(mv);
                p.play_unchecked(mv);
                let reply = p.legal_moves()[0];
                p.play_unchecked(reply);
            }
            (moves, m.stats().nodes)
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn contempt_keeps_no_tree_searched_for_the_other_player() {
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 1000,
                draw_value: 0.4,
                ..SearchConfig::optimal()
            },
            2,
        );
        let p = play(&[(4, 4), (4, 0)]);
        let mv = m.search(&p).unwrap();
        let mut next = p;
        next.play_unchecked(mv);
        assert!(!m.reroot(&next));
    }

    /// A search with `cfg` (seed 1) whose tree is a root at `p` with its
    /// children added.
    fn expanded_root(cfg: SearchConfig, p: &Uttt) -> Mcts {
        let mut m = Mcts::new(cfg, 1);
        m.nodes.push(Node::leaf(UtttMove::new(0, 0).unwrap(), 0.0));
        m.stats.push(Stats::leaf(0.0));
        m.expand(0, p, true);
        m
    }

    #[test]
    fn implicit_minimax_backs_up_the_best_evaluation() {
        let p = play(&[(4, 4), (4, 0)]);
        let cfg = SearchConfig {
            minimax_weight: 0.5,
            ..SearchConfig::optimal()
        };
        let mut m = expanded_root(cfg, &p);
        let kids: Vec<usize> = m.children(0).collect();
        assert!(kids.len() >= 3);
        // No child has a value yet: neither has the parent.
        m.rescan_minimax(0);
        assert!(m.values[0].is_nan());
        // The parent's value is the complement of its best child's.
        m.values[kids[0]] = 0.3;
        m.values[kids[1]] = 0.8;
        m.rescan_minimax(0);
        assert!((m.values[0] - 0.2).abs() < 1e-6);
        // One child's change: a better child takes over without a rescan,
        // a worse one that was not the best changes nothing, the best one
        // getting worse rescans.
        m.values[kids[0]] = 0.9;
        m.back_up_minimax(0, 0.3, 0.9);
        assert!((m.values[0] - 0.1).abs() < 1e-6);
        m.values[kids[1]] = 0.1;
        m.back_up_minimax(0, 0.8, 0.1);
        assert!((m.values[0] - 0.1).abs() < 1e-6);
        m.values[kids[0]] = 0.2;
        m.back_up_minimax(0, 0.9, 0.2);
        assert!((m.values[0] - 0.8).abs() < 1e-6);
        // A proven child counts its proof, not its evaluation.
        m.nodes[kids[2]].proof = Proof::Win;
        m.back_up_minimax(0, f32::NAN, 1.0);
        assert_eq!(m.values[0], 0.0);
        m.nodes[kids[2]].proof = Proof::Loss;
        m.nodes[kids[1]].proof = Proof::Draw;
        m.rescan_minimax(0);
        assert!((m.values[0] - 0.5).abs() < 1e-6);
    }

    /// Every expanded node's minimax value is what a full rescan of its
    /// children gives, after searches with tree reuse.
    #[test]
    fn incremental_minimax_backups_match_a_full_rescan() {
        let cfg = SearchConfig {
            iterations: 4000,
            minimax_weight: 0.3,
            fitted_eval: true,
            eval_weight: 1.0,
            ..SearchConfig::optimal()
        };
        let mut m = Mcts::new(cfg, 5);
        let mut p = play(&[(4, 4), (4, 0)]);
        let mut checked = 0;
        for _ in 0..6 {
            let Some(mv) = m.search(&p) else { break };
            for idx in 0..m.nodes.len() {
                if !m.nodes[idx].expanded {
                    continue;
                }
                let kept = m.values[idx];
                m.rescan_minimax(idx);
                let full = m.values[idx];
                assert_eq!(
                    kept.to_bits(),
                    full.to_bits(),
                    "node {idx}: {kept} against {full}"
                );
                checked += 1;
            }
            p.play_unchecked(mv);
            let Some(&reply) = p.legal_moves().first() else {
                break;
            };
            p.play_unchecked(reply);
            if p.is_over() {
                break;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn backpropagation_gives_the_leaf_its_evaluation_for_its_mover() {
        // X to move at the root: the child at depth 1 was entered by X.
        let p = play(&[(4, 4), (4, 0)]);
        assert_eq!(p.to_move(), Seat::One);
        let w = 0.75;
        // UCB1's progressive bias (PUCT keeps no bias in `base`).
        let cfg = SearchConfig {
            minimax_weight: 0.5,
            prior_weight: w,
            puct: 0.0,
            ..SearchConfig::optimal()
        };
        let mut m = expanded_root(cfg, &p);
        let kid = m.children(0).start;
        // A playout X lost, from a leaf X's evaluation gives 0.9.
        m.backpropagate(&[0, kid], Seat::One, (0.0, 0.0, 0.0), 0.9);
        assert!((m.values[kid] - 0.9).abs() < 1e-6);
        assert!((m.values[0] - 0.1).abs() < 1e-6);
        // Selection reads the mean (0) and the minimax value half each.
        let prior = m.stats[kid].prior;
        let expected = 0.5 * 0.0 + 0.5 * 0.9 + w * prior / 2f32.sqrt();
        assert!((m.nodes[kid].base - expected).abs() < 1e-5);
        // Off, the same backup leaves the values alone and the mean alone
        // is read.
        let mut off = expanded_root(
            SearchConfig {
                prior_weight: w,
                puct: 0.0,
                ..SearchConfig::optimal()
            },
            &p,
        );
        off.backpropagate(&[0, kid], Seat::One, (0.0, 0.0, 0.0), 0.9);
        assert!(off.values.is_empty());
        let prior = off.stats[kid].prior;
        assert!((off.nodes[kid].base - w * prior / 2f32.sqrt()).abs() < 1e-5);
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

    #[test]
    fn searches_with_leaf_evaluations_are_deterministic_and_legal() {
        for (mix, minimax) in [(0.3, 0.0), (0.0, 0.3), (0.2, 0.2)] {
            let run = || {
                let cfg = SearchConfig {
                    iterations: 3000,
                    value_mix: mix,
                    minimax_weight: minimax,
                    fitted_eval: true,
                    eval_weight: 1.0,
                    ..SearchConfig::optimal()
                };
                let mut m = Mcts::new(cfg, 9);
                let moves = play_out(&mut m, play(&[(4, 4), (4, 0)]));
                (moves, m.stats().nodes)
            };
            assert_eq!(run(), run(), "mix {mix}, minimax {minimax}");
        }
    }

    #[test]
    fn selection_follows_the_prior_first() {
        // X to move in board 4, where 4-2 wins the board.
        let p = super::super::prior::tests::board_4_win();
        for learned in [false, true] {
            let cfg = SearchConfig {
                prior_weight: 1.0,
                fpu_reduction: Some(0.1),
                learned_prior: learned,
                puct: 0.0,
                ..SearchConfig::optimal()
            };
            let m = expanded_root(cfg, &p);
            let c = m.select(0, true);
            let best = m
                .children(0)
                .max_by(|&a, &b| m.stats[a].prior.total_cmp(&m.stats[b].prior))
                .unwrap();
            assert_eq!(c, best, "learned prior: {learned}");
            if !learned {
                assert_eq!(m.nodes[c].mv, UtttMove::new(4, 2).unwrap());
            }
        }
    }

    #[test]
    fn the_prior_fades_with_visits_at_its_exponent() {
        for (fade, expected) in [(1.0f32, 0.6 / 4.0), (0.5, 0.6 / 2.0)] {
            let mut m = Mcts::new(
                SearchConfig {
                    prior_weight: 0.6,
                    prior_fade: fade,
                    puct: 0.0,
                    ..SearchConfig::optimal()
                },
                1,
            );
            m.nodes.push(Node::leaf(UtttMove::new(0, 0).unwrap(), 0.6));
            m.stats.push(Stats::leaf(1.0));
            for _ in 0..3 {
                m.add(0, 0.5, 0.6, (0.5, false));
            }
            // Three visits, mean 0.5: the bias is 0.6 / (3 + 1)^fade.
            let bias = m.nodes[0].base - 0.5;
            assert!((bias - expected).abs() < 1e-6, "fade {fade}: {bias}");
        }
    }

    fn puct(c: f32, temperature: f32) -> SearchConfig {
        SearchConfig {
            puct: c,
            puct_temperature: temperature,
            ..SearchConfig::optimal()
        }
    }

    #[test]
    fn puct_priors_are_the_softmax_of_the_policy_logits() {
        let p = play(&[(4, 4), (4, 0)]);
        let moves = p.legal_moves();
        let m = expanded_root(puct(1.0, 1.0), &p);
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
        // A higher temperature flattens the prior.
        let flat = expanded_root(puct(1.0, 3.0), &p);
        let top = |m: &Mcts| m.children(0).map(|i| m.stats[i].prior).fold(0.0, f32::max);
        assert!(top(&flat) < top(&m));
    }

    #[test]
    fn puct_backups_keep_the_mean_and_a_fading_prior_share() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = expanded_root(puct(1.0, 1.0), &p);
        let kid = m.children(0).start;
        let prior = m.stats[kid].prior;
        // X to move at the root and X lost: the child X entered has 0.
        m.backpropagate(&[0, kid], Seat::One, (0.0, 0.0, 0.0), 0.0);
        assert_eq!(m.nodes[kid].base, 0.0);
        assert!((m.nodes[kid].explore - prior / 2.0).abs() < 1e-7);
        m.backpropagate(&[0, kid], Seat::One, (1.0, 1.0, 1.0), 1.0);
        assert_eq!(m.nodes[kid].base, 0.5);
        assert!((m.nodes[kid].explore - prior / 3.0).abs() < 1e-7);
    }

    #[test]
    fn puct_selection_tries_the_likeliest_move_and_leaves_a_refuted_one() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = expanded_root(puct(1.0, 1.0), &p);
        let mut by_prior: Vec<usize> = m.children(0).collect();
        by_prior.sort_by(|&a, &b| m.stats[b].prior.total_cmp(&m.stats[a].prior));
        let (first, second) = (by_prior[0], by_prior[1]);
        assert_eq!(m.select(0, true), first);
        // The likeliest move keeps losing for X: after a few visits the
        // next likeliest, untried, goes first.
        let mut losses = 0;
        while m.select(0, true) == first {
            m.backpropagate(&[0, first], Seat::One, (0.0, 0.0, 0.0), 0.0);
            losses += 1;
            assert!(losses < 100, "a refuted move kept its visits");
        }
        assert_eq!(m.select(0, true), second);
        // A child proven lost for its mover is never chosen, a proven win
        // at once.
        m.nodes[second].proof = Proof::Loss;
        assert_ne!(m.select(0, true), second);
        let last = by_prior[by_prior.len() - 1];
        m.nodes[last].proof = Proof::Win;
        assert_eq!(m.select(0, true), last);
    }

    #[test]
    fn puct_opponent_constant_widens_only_the_opponents_replies() {
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = expanded_root(puct(1.0, 1.0), &p);
        m.config.puct_opponent = 8.0;
        // The likeliest move keeps winning for its mover: at the root
        // mover's nodes (`ours`) PUCT keeps choosing it for longer than at
        // the opponent's, whose constant is eight times larger.
        let mut by_prior: Vec<usize> = m.children(0).collect();
        by_prior.sort_by(|&a, &b| m.stats[b].prior.total_cmp(&m.stats[a].prior));
        let first = by_prior[0];
        let streak = |m: &mut Mcts, ours: bool| {
            let mut n = 0;
            while m.select(0, ours) == first && n < 10_000 {
                m.backpropagate(&[0, first], Seat::One, (1.0, 1.0, 1.0), 1.0);
                n += 1;
            }
            n
        };
        let mut theirs = expanded_root(m.config, &p);
        let (ours_n, theirs_n) = (streak(&mut m, true), streak(&mut theirs, false));
        assert!(ours_n > theirs_n, "{ours_n} against {theirs_n}");
        assert!(theirs_n >= 1);
        // In a search the opponent's replies to the root's most visited
        // move get more even visits.
        let spread = |opp: f32| {
            let mut m = Mcts::new(
                SearchConfig {
                    iterations: 4000,
                    puct_opponent: opp,
                    ..puct(1.0, 1.0)
                },
                9,
            );
            m.search(&p).expect("a move");
            let best = m
                .children(0)
                .max_by_key(|&i| m.stats[i].visits)
                .expect("children");
            let replies: Vec<u32> = m.children(best).map(|i| m.stats[i].visits).collect();
            let total: u32 = replies.iter().sum();
            let top = replies.iter().copied().max().unwrap_or(0);
            top as f64 / total.max(1) as f64
        };
        let (narrow, wide) = (spread(1.0), spread(4.0));
        assert!(wide < narrow, "top reply's share {wide} against {narrow}");
    }

    #[test]
    fn the_opponent_policy_gives_the_priors_of_the_opponents_moves_only() {
        // A network with every logit 0: a uniform prior where it applies.
        let flat: &'static PolicyNet = Box::leak(Box::new(PolicyNet::zeros()));
        let p = play(&[(4, 4), (4, 0)]);
        let priors = |m: &Mcts, idx: usize| -> Vec<f32> {
            m.children(idx).map(|i| m.nodes[i].explore).collect()
        };
        let spread = |ps: &[f32]| {
            let (lo, hi) = ps
                .iter()
                .fold((1f32, 0f32), |(a, b), &x| (a.min(x), b.max(x)));
            hi - lo
        };
        let grow = |with: bool| {
            let mut m = Mcts::new(SearchConfig::optimal(), 1);
            if with {
                m.set_opponent_policy_net(flat);
            }
            m.nodes.push(Node::leaf(UtttMove::new(0, 0).unwrap(), 0.0));
            m.stats.push(Stats::leaf(0.0));
            m.expand(0, &p, true);
            let kid = m.children(0).next().expect("a child");
            let mut q = p;
            q.play_unchecked(m.nodes[kid].mv);
            m.expand(kid, &q, false);
            (priors(&m, 0), priors(&m, kid))
        };
        let (ours_off, theirs_off) = grow(false);
        let (ours_on, theirs_on) = grow(true);
        // Our moves keep the built-in network's priors.
        assert_eq!(ours_on, ours_off);
        assert!(spread(&ours_on) > 0.05, "{ours_on:?}");
        // The opponent's come from the other network: uniform, up to the
        // tie-breaking noise, where the built-in one is not.
        assert!(spread(&theirs_off) > 0.05, "{theirs_off:?}");
        assert!(spread(&theirs_on) < 1e-3, "{theirs_on:?}");
        let n = theirs_on.len() as f32;
        assert!(theirs_on.iter().all(|&x| (x - 1.0 / n).abs() < 1e-3));
    }

    #[test]
    fn searches_with_an_opponent_policy_are_deterministic_legal_and_differ() {
        let flat: &'static PolicyNet = Box::leak(Box::new(PolicyNet::zeros()));
        let cfg = SearchConfig {
            iterations: 3000,
            ..SearchConfig::optimal()
        };
        let game = |with: bool| -> Vec<UtttMove> {
            let mut m = Mcts::new(cfg, 7);
            if with {
                m.set_opponent_policy_net(flat);
            }
            let mut pos = Uttt::new();
            let mut moves = Vec::new();
            while !pos.is_over() && moves.len() < 30 {
                let mv = m.search(&pos).expect("a move");
                assert!(pos.is_legal(mv), "{mv} in {pos}");
                pos.play_unchecked(mv);
                moves.push(mv);
            }
            moves
        };
        let first = game(true);
        assert_eq!(first, game(true));
        assert_ne!(first, game(false));
    }

    /// A root with one of our moves expanded below it, `m`'s reply
    /// weight `weight` and a uniform reply network: the root, that child
    /// and the child's children (the opponent's replies).
    fn reply_tree(weight: f32) -> (Mcts, usize, Vec<usize>) {
        let flat: &'static PolicyNet = Box::leak(Box::new(PolicyNet::zeros()));
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(
            SearchConfig {
                reply_weight: weight,
                ..SearchConfig::optimal()
            },
            1,
        );
        m.set_reply_net(flat);
        m.nodes.push(Node::leaf(UtttMove::new(0, 0).unwrap(), 0.0));
        m.stats.push(Stats::leaf(0.0));
        if m.replies_on() {
            m.replies.push(Reply::default());
        }
        m.expand(0, &p, true);
        let kid = m.children(0).next().expect("a child");
        let mut q = p;
        q.play_unchecked(m.nodes[kid].mv);
        m.expand(kid, &q, false);
        let replies = m.children(kid).collect();
        (m, kid, replies)
    }

    #[test]
    fn the_reply_expectation_weighs_the_opponents_replies_by_the_network() {
        let (m, kid, replies) = reply_tree(1.0);
        // The opponent's replies get the network's (uniform) probabilities,
        // our moves none.
        let n = replies.len() as f32;
        assert!(replies
            .iter()
            .all(|&r| (m.replies[r].p - 1.0 / n).abs() < 1e-6));
        assert!(m.children(0).all(|i| m.replies[i].p == 0.0));
        // X (the root's mover) wins three times after the first reply and
        // loses once after the second: our child's mean is 0.75, the
        // expectation over the two replies, equally likely, 0.5.
        let (a, b) = (replies[0], replies[1]);
        let bases = |weight: f32| {
            let (mut m, kid, _) = reply_tree(weight);
            for _ in 0..3 {
                m.backpropagate(&[0, kid, a], Seat::One, (1.0, 1.0, 1.0), 1.0);
            }
            m.backpropagate(&[0, kid, b], Seat::One, (0.0, 0.0, 0.0), 0.0);
            assert!((m.stats[kid].mean() - 0.75).abs() < 1e-9);
            assert!((m.replies[kid].expectation() - 0.5).abs() < 1e-6);
            // The opponent's nodes and the root keep their means.
            assert_eq!((m.nodes[a].base, m.nodes[b].base), (0.0, 1.0));
            (m.nodes[kid].base, m)
        };
        assert!((bases(1.0).0 - 0.5).abs() < 1e-6);
        assert!((bases(0.5).0 - 0.625).abs() < 1e-6);
        // Weight 0: no expectation kept, the mean alone.
        let (off, _, _) = reply_tree(0.0);
        assert!(off.replies.is_empty());
        // A reply proven counts at its exact value, not at its mean: a
        // third reply, proven lost for the opponent when first reached
        // (as a finished game is), is worth 1 to us whatever it backs up.
        let (_, mut m) = bases(1.0);
        let c = replies[2];
        m.nodes[c].proof = Proof::Loss;
        m.backpropagate(&[0, kid, c], Seat::One, (0.0, 0.0, 0.0), 0.0);
        assert!((m.replies[kid].expectation() - 2.0 / 3.0).abs() < 1e-6);
        assert!((m.nodes[kid].base - 2.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn the_opponent_model_steers_only_the_opponents_choices() {
        let p = play(&[(4, 4), (4, 0)]);
        let model = |b: f32| SearchConfig {
            opponent_model: b,
            ..SearchConfig::optimal()
        };
        let mut m = expanded_root(model(1.0), &p);
        let kid = m.children(0).next().expect("a child");
        let mut q = p;
        q.play_unchecked(m.nodes[kid].mv);
        m.expand(kid, &q, false);
        let grandkid = m.children(kid).next().expect("a grandchild");
        assert_eq!(m.model.len(), m.nodes.len());
        // X (the root's mover) loses by the network's value but wins the
        // random playout: the opponent's node reads the playout's view,
        // ours the true value.
        for _ in 0..10 {
            m.backpropagate(&[0, kid, grandkid], Seat::One, (0.0, 0.0, 1.0), 0.0);
        }
        assert_eq!(m.stats[grandkid].mean(), 1.0);
        assert_eq!(m.model[grandkid], 0.0);
        assert_eq!(m.nodes[grandkid].base, 0.0);
        assert_eq!(m.stats[kid].mean(), 0.0);
        assert_eq!(m.model[kid], 10.0);
        assert_eq!(m.nodes[kid].base, 0.0);
        // Half weight: the opponent's node reads the average of both views.
        let mut h = expanded_root(model(0.5), &p);
        h.expand(kid, &q, false);
        for _ in 0..4 {
            h.backpropagate(&[0, kid, grandkid], Seat::One, (0.0, 0.0, 1.0), 0.0);
        }
        assert_eq!(h.nodes[grandkid].base, 0.5);
        assert_eq!(h.nodes[kid].base, 0.0);
        // Off, no playouts are summed and the node reads its mean.
        let mut off = expanded_root(model(0.0), &p);
        off.expand(kid, &q, false);
        off.backpropagate(&[0, kid, grandkid], Seat::One, (0.0, 0.0, 1.0), 0.0);
        assert!(off.model.is_empty());
        assert_eq!(off.nodes[grandkid].base, 1.0);
        // So the opponent's choice follows the playouts: of two replies,
        // the one the network likes for them loses to the one playouts
        // like; at our own nodes the network's choice stands.
        let pick = |theirs: bool| {
            let mut c = expanded_root(model(1.0), &p);
            let kids: Vec<usize> = c.children(0).collect();
            let (good, liked) = (kids[0], kids[1]);
            for _ in 0..200 {
                for i in kids.iter().copied() {
                    let (true_v, playout_v) = match i {
                        _ if i == good => (0.9, 0.1),
                        _ if i == liked => (0.1, 0.9),
                        _ => (0.0, 0.0),
                    };
                    c.add(i, true_v, 0.0, (playout_v, theirs));
                }
                c.stats[0].visits += kids.len() as u32;
            }
            let chosen = c.select(0, !theirs);
            (chosen == liked, chosen == good)
        };
        assert_eq!(pick(true), (true, false));
        assert_eq!(pick(false), (false, true));
    }

    #[test]
    fn searches_with_the_opponent_model_are_deterministic_legal_and_keep_their_sums() {
        let game = |b: f32| {
            let cfg = SearchConfig {
                iterations: 2000,
                opponent_model: b,
                ..SearchConfig::optimal()
            };
            let mut m = Mcts::new(cfg, 5);
            let moves = play_out(&mut m, play(&[(4, 4), (4, 0)]));
            // Tree reuse carried the playout sums along with the nodes.
            if b != 0.0 {
                assert_eq!(m.model.len(), m.nodes.len());
            }
            moves
        };
        let a = game(0.5);
        assert_eq!(a, game(0.5));
        assert_ne!(a, game(0.0));
    }

    #[test]
    fn puct_searches_are_deterministic_legal_and_differ_from_ucb() {
        let game = |cfg: SearchConfig| {
            let cfg = SearchConfig {
                iterations: 2000,
                ..cfg
            };
            play_out(&mut Mcts::new(cfg, 5), play(&[(4, 4), (4, 0)]))
        };
        let a = game(puct(1.0, 1.0));
        assert_eq!(a, game(puct(1.0, 1.0)));
        assert_ne!(a, game(puct(0.0, 1.0)));
    }
}
/// How often the tree holds one position at two nodes: the case for a
/// transposition table. `cargo test --release -- --ignored transpositions
/// --nocapture` prints the share of expanded nodes whose position another
/// expanded node already holds, after searches of 30 000 iterations from
/// positions of random openings.
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
