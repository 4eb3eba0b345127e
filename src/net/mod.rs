//! Network play: `referee serve` runs a match of N rounds against the
//! server's bot for every client that connects, and `referee connect` plays a
//! local bot against such a server (docs/network.md).
//!
//! Two protocols share one match loop ([`server`]): `text` for a person with
//! `nc` (greeting, boards, prompts, running score) and `v1`, the stdio bot
//! protocol's exact lines over the socket, so any bot that plays `referee
//! match` also plays over TCP. The remote player is a [`crate::bot::Bot`], so
//! each round is played by [`crate::play::referee::play_game`] and recorded in the
//! tournament format.

use std::fmt;
use std::str::FromStr;

pub(crate) mod client;
pub mod line;
mod remote;
pub(crate) mod server;

pub use client::{connect, play_session, play_stream, ClientReport, ConnectConfig};
pub use server::{ServeConfig, Server, ServerHandle};

/// Longest name a client may declare.
pub(crate) const MAX_CLIENT_NAME: usize = 40;

/// Checks a name a client declares (`name NAME`, docs/network.md): 1 to
/// [`MAX_CLIENT_NAME`] characters, letters, digits, spaces and `_-.+@`,
/// so that it can never be mistaken for an address (`127.0.0.1:51234`,
/// how an unnamed client is recorded). Returns it trimmed.
pub(crate) fn check_client_name(text: &str) -> Result<String, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("an empty name".into());
    }
    if t.chars().count() > MAX_CLIENT_NAME {
        return Err(format!("a name of more than {MAX_CLIENT_NAME} characters"));
    }
    match t
        .chars()
        .find(|&c| !(c.is_alphanumeric() || " _-.+@".contains(c)))
    {
        Some(c) => Err(format!(
            "'{}' in a name (letters, digits, spaces and _-.+@ only)",
            c.escape_default()
        )),
        None => Ok(t.to_string()),
    }
}

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
    pub(crate) fn name(self) -> &'static str {
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
    fn client_names() {
        assert_eq!(
            check_client_name("  ada lovelace ").unwrap(),
            "ada lovelace"
        );
        assert_eq!(check_client_name("Zoë_2.b+c@x").unwrap(), "Zoë_2.b+c@x");
        for bad in ["", "   ", "127.0.0.1:5", "a\tb", "<b>", &"x".repeat(41)] {
            assert!(check_client_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn protocols_by_name() {
        assert_eq!("V1".parse::<Protocol>(), Ok(Protocol::V1));
        assert!("v2".parse::<Protocol>().is_err());
    }
}
