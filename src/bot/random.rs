//! `random`: uniform among legal moves, for every game.

use std::marker::PhantomData;

use rand_chacha::ChaCha8Rng;

use super::{no_move_forfeit, Bot};
use crate::game::Game;

/// Plays a uniformly random legal move.
pub(crate) struct RandomBot<G> {
    rng: ChaCha8Rng,
    name: String,
    _game: PhantomData<fn() -> G>,
}

impl<G: Game> RandomBot<G> {
    /// A random bot seeded by `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        RandomBot {
            rng: crate::seed::rng(seed),
            name: "random".into(),
            _game: PhantomData,
        }
    }
}

impl<G: Game> Bot<G> for RandomBot<G> {
    fn name(&self) -> &str {
        &self.name
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, crate::protocol::Forfeit> {
        pos.random_move(&mut self.rng)
            .ok_or_else(|| no_move_forfeit(pos))
    }
}
