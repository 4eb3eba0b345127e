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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_by_name() {
        assert_eq!("V1".parse::<Protocol>(), Ok(Protocol::V1));
        assert!("v2".parse::<Protocol>().is_err());
    }
}
