//! Network play: `referee serve` runs a match of N rounds against the
//! server's bot for every client that connects, and `referee connect` plays a
//! local bot against such a server (docs/network.md).
//!
//! Two protocols share one match loop ([`server`]): `text` for a person with
//! `nc` (greeting, boards, prompts, running score) and `v1`, the stdio bot
//! protocol's exact lines over the socket, so any bot that plays `referee
//! match` also plays over TCP. The remote player is a [`crate::bot::Bot`], so
//! each round is played by [`crate::referee::play_game`] and recorded in the
//! tournament format.

use std::fmt;
use std::str::FromStr;

use crate::bot::BotResult;

pub mod client;
pub mod line;
mod remote;
pub mod server;

pub use client::{connect, play_session, play_stream, ClientReport, ConnectConfig};
pub use server::{ServeConfig, Server, ServerHandle};

/// The address `referee serve` listens on when `--listen` is not given.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7777";

/// How a server talks to its clients.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// For people with `nc`: prompts, boards and scores in plain English.
    #[default]
    Text,
    /// The stdio bot protocol v1 (`begin`, `turn`, `end`) over the socket.
    V1,
}

impl Protocol {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Text => "text",
            Protocol::V1 => "v1",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(Protocol::Text),
            "v1" => Ok(Protocol::V1),
            other => Err(format!("unknown protocol '{other}' (expected text or v1)")),
        }
    }
}

/// A match score from one side's point of view: win 1, draw 0.5, loss 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    /// Rounds won.
    pub wins: u32,
    /// Rounds drawn.
    pub draws: u32,
    /// Rounds lost.
    pub losses: u32,
}

impl Score {
    /// Counts one finished round.
    pub fn add(&mut self, result: BotResult) {
        match result {
            BotResult::Win => self.wins += 1,
            BotResult::Draw => self.draws += 1,
            BotResult::Loss => self.losses += 1,
        }
    }

    /// Rounds finished.
    pub fn rounds(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// This side's points.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// The other side's points.
    pub fn opponent_points(&self) -> f64 {
        self.losses as f64 + 0.5 * self.draws as f64
    }
}

/// Points as people write them: `250`, `249.5`.
pub fn format_points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_counts_points_for_both_sides() {
        let mut s = Score::default();
        for r in [
            BotResult::Win,
            BotResult::Draw,
            BotResult::Loss,
            BotResult::Draw,
        ] {
            s.add(r);
        }
        assert_eq!(s.rounds(), 4);
        assert_eq!(format_points(s.points()), "2");
        assert_eq!(format_points(s.opponent_points()), "2");
        s.add(BotResult::Draw);
        assert_eq!(format_points(s.points()), "2.5");
        assert_eq!("V1".parse::<Protocol>(), Ok(Protocol::V1));
        assert!("v2".parse::<Protocol>().is_err());
    }
}
