//! What the engine lab (the `lab/` crate: the network trainer, the
//! strength bench, the comparison with other engines) reads of the
//! engine, behind the `lab` feature; nothing here is part of referee's
//! interface for users.
//!
//! - [`Mcts`] and [`SearchConfig`]: the search of `optimal`
//!   ([`SearchConfig::optimal`]) and `uct` ([`SearchConfig::plain_uct`]),
//!   with the networks swappable ([`Mcts::set_value_net`],
//!   [`Mcts::set_policy_net`]) and its root's statistics after a search;
//! - [`ValueNet`] and [`PolicyNet`]: the networks, their files and their
//!   parameters as flat vectors (what the trainer fits), and the
//!   [`features`] of a position they read.

pub use super::net::{
    features, map_cell, map_feature, PolicyNet, ValueNet, H1, H2, INPUTS, MAX_ACTIVE,
};
pub use super::search::{Mcts, SearchConfig, SearchStats, MAX_NODES};
