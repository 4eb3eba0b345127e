//! A model of a plain UCT opponent, for the trap choice of `optimal`
//! ([`super::SearchConfig::trap`]): which reply such an opponent would play
//! from a position, and how its visits spread over the replies.
//!
//! The modelled opponent is the most common kind of game bot: UCT with
//! uniformly random playouts, exploration constant 2 on a `[0, 1]` reward
//! scale, a solver, and the most visited move. Its details follow
//! board-game's `MCTSBot` (version 0.8.2), the peer `peers/` measures us
//! against, quirks included, since the quirks are where such a bot errs:
//!
//! - a node is expanded the second time an iteration reaches it, every
//!   child created at once; untried children are tried first, in random
//!   order, each with one playout;
//! - a new child's first playout is counted for the player to move in it,
//!   not the one who moved into it (a sign slip of that implementation:
//!   one result in each node's mean stands for the other side);
//! - a child proven drawn scores 0.5 in selection and a proven loss 0,
//!   with no exploration term, and a proven child's visits stop counting;
//! - the search stops once the root is proven, and the move played is a
//!   proven win if there is one, else the most visited child (the last of
//!   equals), **proven losses included**: a reply that looked good for
//!   many visits before the solver proved it lost can still be played.

use std::time::Instant;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::game::uttt::{Uttt, UtttMove};
use crate::game::{Game, Outcome, Seat};

/// The exploration constant of the modelled UCT.
const EXPLORATION: f32 = 2.0;

/// How many iterations run between two looks at the clock.
const CLOCK_EVERY: u32 = 64;

/// A node of the model's tree. Values are from the point of view of the
/// player who moved into the node.
#[derive(Clone, Copy, Debug)]
struct Node {
    mv: UtttMove,
    /// First child's index; meaningful once `expanded`.
    first: u32,
    /// Number of children.
    len: u8,
    expanded: bool,
    /// The proven result (1 win, 0 draw, -1 loss), if any.
    solved: Option<i8>,
    /// The visits (frozen once the node is proven).
    visits: u32,
    /// Playout results counted: wins minus losses, and their number.
    score: i64,
    count: u32,
}

impl Node {
    fn new(mv: UtttMove, solved: Option<i8>) -> Node {
        Node {
            mv,
            first: 0,
            len: 0,
            expanded: false,
            solved,
            visits: 0,
            score: 0,
            count: 0,
        }
    }

    fn unvisited(&self) -> bool {
        self.solved.is_none() && self.count == 0
    }

    fn increment(&mut self, result: i8) {
        self.visits += 1;
        self.score += i64::from(result);
        self.count += 1;
    }

    fn mark_solved(&mut self, result: i8) {
        self.visits += 1;
        self.solved = Some(result);
    }

    /// The UCT score this child gets from a parent whose visits have the
    /// natural log `ln_parent` (computed once per selection).
    fn uct(&self, ln_parent: f32) -> f32 {
        match self.solved {
            Some(s) => (f32::from(s) + 1.0) / 2.0,
            None => {
                let n = self.count as f32;
                let unit = (self.score as f32 / n + 1.0) / 2.0;
                unit + EXPLORATION * (ln_parent / n).sqrt()
            }
        }
    }
}

// The trap choice's node cap assumes 32 bytes a node.
const _: () = assert!(std::mem::size_of::<Node>() <= 32);

/// The result of a finished game for `mover`: 1 won, 0 drawn, -1 lost.
fn result_for(outcome: Outcome, mover: Seat) -> i8 {
    match outcome {
        Outcome::Draw => 0,
        Outcome::Win(s) if s == mover => 1,
        Outcome::Win(_) => -1,
    }
}

/// The best result a player can prove from its children's proofs (each
/// from that player's point of view): a win if any child is won, unknown
/// while any child is, else a draw if any is drawn, else a loss.
fn best_proven(children: &[Node]) -> Option<i8> {
    let mut unknown = false;
    let mut best = -1;
    for c in children {
        match c.solved {
            Some(1) => return Some(1),
            Some(s) => best = best.max(s),
            None => unknown = true,
        }
    }
    (!unknown).then_some(best)
}

/// What the model's search ended with.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The reply it plays.
    pub mv: UtttMove,
    /// Each root child's move and visits, in move order.
    pub visits: Vec<(UtttMove, u32)>,
    /// The iterations run.
    pub iterations: u32,
    /// Whether the search proved the root.
    pub proven: bool,
}

/// The model's search: a tree kept between calls for its memory only.
#[derive(Debug, Default)]
pub struct UctModel {
    nodes: Vec<Node>,
}

impl UctModel {
    /// Searches `root` (a position with moves) for at most `iterations`
    /// iterations, until `deadline` if one is given, or until the tree holds
    /// `max_nodes` nodes, and returns the reply the modelled opponent plays
    /// with its root's visits. `None` when `root` is over.
    pub fn choose(
        &mut self,
        root: &Uttt,
        iterations: u32,
        deadline: Option<Instant>,
        max_nodes: usize,
        rng: &mut ChaCha8Rng,
    ) -> Option<Choice> {
        if root.is_over() {
            return None;
        }
        self.nodes.clear();
        // The root's move is never read.
        let first = root.legal_moves().first().copied()?;
        self.nodes.push(Node::new(first, None));
        let mut done = 0;
        while done < iterations && self.nodes[0].solved.is_none() {
            if done % CLOCK_EVERY == 0 {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                if self.nodes.len() + 81 > max_nodes {
                    break;
                }
            }
            self.step(0, root, rng);
            done += 1;
        }
        if !self.nodes[0].expanded {
            // Not even one iteration: the root alone, expanded now so that
            // a move can be named.
            self.expand(0, root);
        }
        let root_node = self.nodes[0];
        let children = root_node.first as usize..root_node.first as usize + root_node.len as usize;
        let won = children.clone().find(|&c| self.nodes[c].solved == Some(1));
        // `max_by_key` keeps the last of equals, as the modelled bot does.
        let pick = won.or_else(|| children.clone().max_by_key(|&c| self.nodes[c].visits))?;
        Some(Choice {
            mv: self.nodes[pick].mv,
            visits: children
                .map(|c| (self.nodes[c].mv, self.nodes[c].visits))
                .collect(),
            iterations: done,
            proven: self.nodes[0].solved.is_some(),
        })
    }

    /// Adds `idx`'s children; returns the node's proof if that settles it.
    fn expand(&mut self, idx: usize, pos: &Uttt) -> Option<i8> {
        let mover = pos.to_move();
        let start = self.nodes.len();
        for mv in pos.legal_moves() {
            let mut next = *pos;
            next.play_unchecked(mv);
            let solved = next.outcome().map(|o| result_for(o, mover));
            self.nodes.push(Node::new(mv, solved));
        }
        let len = (self.nodes.len() - start) as u8;
        let node = &mut self.nodes[idx];
        node.first = start as u32;
        node.len = len;
        node.expanded = true;
        best_proven(&self.nodes[start..]).map(|r| -r)
    }

    /// One iteration below `idx` (position `pos`); returns the result for
    /// the player who moved into `idx` and whether it is a proof.
    fn step(&mut self, idx: usize, pos: &Uttt, rng: &mut ChaCha8Rng) -> (i8, bool) {
        if let Some(s) = self.nodes[idx].solved {
            return (s, true);
        }
        if !self.nodes[idx].expanded {
            if let Some(proof) = self.expand(idx, pos) {
                self.nodes[idx].mark_solved(proof);
                return (proof, true);
            }
        }
        let node = self.nodes[idx];
        let range = node.first as usize..node.first as usize + node.len as usize;
        let unvisited = range.clone().filter(|&c| self.nodes[c].unvisited()).count();
        let (child_result, proven) = if unvisited > 0 {
            let k = rng.random_range(0..unvisited);
            let picked = range
                .clone()
                .filter(|&c| self.nodes[c].unvisited())
                .nth(k)
                .unwrap_or(range.start);
            let mut next = *pos;
            next.play_unchecked(self.nodes[picked].mv);
            // The playout's result for the player who moved into `idx`,
            // counted in the new child as the modelled bot counts it (see
            // the module's notes), and returned for the child's mover.
            let r = result_for(next.random_playout(rng), pos.to_move().other());
            self.nodes[picked].increment(r);
            (-r, false)
        } else {
            let ln_parent = (node.visits as f32).ln();
            let mut picked = range.start;
            let mut best = f32::NEG_INFINITY;
            for c in range.clone() {
                let u = self.nodes[c].uct(ln_parent);
                // `>=`: the last of equals, as `max_by_key` picks.
                if u >= best {
                    best = u;
                    picked = c;
                }
            }
            let mut next = *pos;
            next.play_unchecked(self.nodes[picked].mv);
            self.step(picked, &next, rng)
        };
        let result = -child_result;
        if proven {
            let (start, len) = (range.start, range.len());
            if let Some(best) = best_proven(&self.nodes[start..start + len]) {
                self.nodes[idx].mark_solved(-best);
                return (-best, true);
            }
        }
        self.nodes[idx].increment(result);
        (result, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn play(moves: &[(u8, u8)]) -> Uttt {
        let mut p = Uttt::new();
        for &(b, c) in moves {
            p.play(UtttMove::new(b, c).expect("a move")).expect("legal");
        }
        p
    }

    #[test]
    fn the_model_takes_a_win_in_one_and_repeats_for_a_seed() {
        // Positions with a win in one, found by random play and checked
        // against the game itself.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut found = 0;
        for _ in 0..400 {
            let mut p = Uttt::new();
            while !p.is_over() {
                let wins: Vec<UtttMove> = p
                    .legal_moves()
                    .into_iter()
                    .filter(|&mv| {
                        let mut q = p;
                        q.play_unchecked(mv);
                        q.outcome() == Some(Outcome::Win(p.to_move()))
                    })
                    .collect();
                if !wins.is_empty() {
                    let mut model = UctModel::default();
                    let c = model
                        .choose(&p, 200, None, 1 << 20, &mut ChaCha8Rng::seed_from_u64(1))
                        .expect("a move");
                    assert!(wins.contains(&c.mv), "{p}: {} is no win", c.mv);
                    assert!(c.proven);
                    found += 1;
                    break;
                }
                let mv = p.random_move(&mut rng).expect("a move");
                p.play_unchecked(mv);
            }
        }
        assert!(found > 100, "only {found} positions with a win in one");
        let p = play(&[(4, 4), (4, 0)]);
        let run = |seed| {
            UctModel::default()
                .choose(
                    &p,
                    3000,
                    None,
                    1 << 20,
                    &mut ChaCha8Rng::seed_from_u64(seed),
                )
                .expect("a move")
        };
        assert_eq!(run(5), run(5));
        let c = run(5);
        assert_eq!(c.iterations, 3000);
        assert_eq!(c.visits.len(), p.legal_moves().len());
        // Every iteration passes one child, which counts it unless it is
        // proven.
        let total: u32 = c.visits.iter().map(|&(_, v)| v).sum();
        assert!((2900..=3000).contains(&total), "{total}");
        assert_eq!(
            c.mv,
            c.visits
                .iter()
                .rev()
                .max_by_key(|&&(_, v)| v)
                .expect("children")
                .0
        );
    }

    #[test]
    fn the_model_counts_a_new_childs_first_playout_for_the_other_side() {
        // After one iteration per child, each child holds one playout
        // result, counted for the player to move in it: not for the player
        // who moved into it, as its later results are.
        let p = play(&[(4, 4), (4, 0), (0, 4)]);
        let n = p.legal_moves().len() as u32;
        let mut model = UctModel::default();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        model.choose(&p, n, None, 1 << 20, &mut rng);
        let root = model.nodes[0];
        assert_eq!(root.visits, n);
        let children = &model.nodes[root.first as usize..][..root.len as usize];
        // The root sums each playout for the player who moved into it (O);
        // the children sum the same results (for O), not their negation.
        let child_sum: i64 = children.iter().map(|c| c.score).sum();
        assert_eq!(root.score, child_sum);
        assert!(children.iter().all(|c| c.count == 1));
    }

    #[test]
    fn the_model_stops_at_the_deadline_and_the_node_cap() {
        let p = play(&[(4, 4)]);
        let mut model = UctModel::default();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let past = Instant::now();
        let c = model
            .choose(&p, u32::MAX, Some(past), 1 << 20, &mut rng)
            .expect("a move");
        assert_eq!(c.iterations, 0);
        assert!(p.is_legal(c.mv));
        let c = model
            .choose(&p, u32::MAX, None, 5000, &mut rng)
            .expect("a move");
        assert!(c.iterations > 0 && model.nodes.len() <= 5000 + 81 * CLOCK_EVERY as usize);
        assert!(model
            .choose(&play_out(), 10, None, 1000, &mut rng)
            .is_none());
    }

    fn play_out() -> Uttt {
        let mut p = Uttt::new();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        while let Some(mv) = p.random_move(&mut rng) {
            p.play_unchecked(mv);
        }
        p
    }
}
