//! What a game leaves behind: the game record, and forfeits carried as data.

use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::bot::FormatFinding;
use crate::game::{Game, GameKind, Outcome, Rules, Seat};
use crate::protocol::{Forfeit, ForfeitReason};

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Termination {
    /// Played to the end on the board.
    Normal,
    /// A forfeit for the given reason.
    #[serde(untagged)]
    Forfeit(ForfeitReason),
}

impl Termination {
    /// The name used in records: `normal` or the forfeit reason.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Forfeit(r) => r.name(),
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One finished game: the unit every later stage (standings, reports) reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Game id within its run (tournament, match, grading).
    pub id: u64,
    /// The game (`tictactoe`, `notakto`, `uttt` in JSON).
    pub game: GameKind,
    /// Bot names by seat: `[player 1, player 2]`.
    pub players: [String; 2],
    /// The seed the game's bots and opening were drawn from.
    pub seed: u64,
    /// Moves of the opening that were forced on both bots (may be empty).
    pub opening: Vec<String>,
    /// The starting position text (before the opening).
    pub start: String,
    /// Every move played, opening included, as move texts.
    pub moves: Vec<String>,
    /// Each bot move's time in µs (one per move after the opening).
    pub times_us: Vec<u64>,
    /// The winner's seat (1 or 2 in JSON), `None` (`null`) for a draw.
    pub winner: Option<Seat>,
    /// How the game ended.
    pub termination: Termination,
    /// Details when a bot forfeited.
    pub forfeit: Option<Forfeit>,
    /// The final position text.
    pub final_position: String,
    /// The network client's address, for rounds played by `referee serve`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client: Option<String>,
    /// How a console program's printed transcript differed from the
    /// assignment's, for each seat whose did (output that did not change
    /// the moves: a format finding, not a forfeit). Absent in older records.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub format: Vec<FormatFinding>,
    /// The rule the game was played under: absent for the standard rules
    /// (and in records written before there was another), `"codingame"`
    /// for UTTT under CodinGame's rule.
    #[serde(skip_serializing_if = "Rules::is_standard", default)]
    pub rules: Rules,
}

impl GameRecord {
    /// The outcome: a win for the recorded winner, else a draw.
    pub(crate) fn outcome(&self) -> Outcome {
        match self.winner {
            Some(s) => Outcome::Win(s),
            None => Outcome::Draw,
        }
    }

    /// Points scored by the named seat: win 1, draw 0.5, loss 0.
    pub(crate) fn points(&self, seat: Seat) -> f64 {
        self.outcome().points(seat)
    }

    /// How the game's rule, not a line on the board, decided a game played
    /// to its end ([`Game::decided_by_rule`] of the final position under
    /// the record's rule: a UTTT game under CodinGame's rule that filled
    /// every board without three in a row, "on boards won, 5 to 3
    /// (CodinGame's rule)"); `None` for every other game.
    pub fn decided_by_rule(&self) -> Option<String> {
        if self.rules.is_standard() || self.termination != Termination::Normal {
            return None;
        }
        crate::with_game!(self.game, G => self
            .final_position
            .parse::<G>()
            .ok()
            .and_then(|p| p.under_rules(self.rules).decided_by_rule()))
    }
}

/// A 64-bit fingerprint of a game up to board symmetry: the smallest hash
/// over the images of its move list under every symmetry. Symmetric games
/// get the same fingerprint; different games collide with probability
/// about 2^-64 per pair. Move texts that do not parse are hashed as they are.
pub(crate) fn fingerprint<G: Game>(moves: &[String]) -> u64 {
    let mut parsed = Vec::with_capacity(moves.len());
    for m in moves {
        match G::parse_move(m) {
            Ok(mv) => parsed.push(mv),
            Err(_) => {
                let mut h = DefaultHasher::new();
                moves.hash(&mut h);
                return h.finish();
            }
        }
    }
    fingerprint_moves::<G>(&parsed)
}

/// [`fingerprint`] of parsed moves. Hashes the moves themselves rather than
/// their text: it runs once per game, and formatting every move under every
/// symmetry cost more than playing the game.
pub(crate) fn fingerprint_moves<G: Game>(moves: &[G::Move]) -> u64 {
    (0..G::symmetry_count())
        .map(|k| {
            let mut h = MixHasher::default();
            moves.len().hash(&mut h);
            for &m in moves {
                G::map_move(m, k).hash(&mut h);
            }
            h.finish()
        })
        .min()
        .unwrap_or(0)
}

/// The fingerprint of a whole game: [`fingerprint`] of its moves when it
/// began at the game's `standard` start (openings from the start are in its
/// moves); a game from another start position (an opening suite's position)
/// is hashed with its start and without symmetry reduction, since the
/// symmetries of its start are not those of the empty board.
pub(crate) fn fingerprint_record<G: Game>(rec: &GameRecord, standard: &str) -> u64 {
    if rec.start == standard {
        return fingerprint::<G>(&rec.moves);
    }
    let mut h = MixHasher::default();
    rec.start.hash(&mut h);
    rec.moves.hash(&mut h);
    h.finish()
}

/// A small fast hasher for fingerprints (multiply-rotate per word, then a
/// SplitMix64 finish): SipHash's resistance to chosen inputs buys nothing
/// here and cost more than playing a tic-tac-toe game.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        crate::seed::splitmix64(self.0)
    }
}

/// A finished game between `p1` and `p2` with these moves, for tests.
#[cfg(test)]
pub(crate) fn sample(
    game: GameKind,
    players: [&str; 2],
    winner: Option<Seat>,
    moves: &[&str],
) -> GameRecord {
    GameRecord {
        id: 0,
        game,
        players: players.map(str::to_string),
        seed: 0,
        opening: vec![],
        start: String::new(),
        moves: moves.iter().map(|m| m.to_string()).collect(),
        times_us: vec![5; moves.len()],
        winner,
        termination: Termination::Normal,
        forfeit: None,
        final_position: String::new(),
        client: None,
        format: Vec::new(),
        rules: Rules::Standard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn termination_serialises_as_one_word() {
        let t = Termination::Forfeit(ForfeitReason::Timeout);
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"timeout\"");
        assert_eq!(
            serde_json::to_string(&Termination::Normal).unwrap(),
            "\"normal\""
        );
        let back: Termination = serde_json::from_str("\"crash\"").unwrap();
        assert_eq!(back, Termination::Forfeit(ForfeitReason::Crash));
    }
}
