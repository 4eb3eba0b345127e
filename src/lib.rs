//! referee: a bot tournament harness for the tic-tac-toe family.
//!
//! Data flows one way: [`game`] (rules) -> [`bot`] (players) -> [`referee`]
//! (plays one game into a [`record::GameRecord`]) -> standings -> reports.
#![deny(missing_docs)]
// Forfeits are returned in `Err` and carry diagnostics; they happen at most
// once per game, so their size costs nothing that matters.
#![allow(clippy::result_large_err)]

pub mod bot;
pub mod check;
pub mod console;
pub mod game;
pub mod grade;
pub mod head_to_head;
pub mod interrupt;
pub mod journal;
pub mod judge;
pub mod net;
pub mod openings;
pub mod output;
pub mod protocol;
pub mod record;
pub mod referee;
pub mod report;
pub mod runner;
pub mod schedule;
pub mod seed;
mod series;
pub mod standings;
pub mod stats;
pub mod tournament;
