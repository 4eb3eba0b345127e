//! referee: a bot tournament harness for the tic-tac-toe family.
//!
//! Data flows one way: [`game`] (rules) -> [`bot`] (players) -> [`referee`]
//! (plays one game into a [`record::GameRecord`]) -> standings -> reports.
#![deny(missing_docs)]

pub mod bot;
pub mod game;
pub mod record;
pub mod referee;
pub mod seed;
