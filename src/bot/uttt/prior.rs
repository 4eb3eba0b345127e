//! A one-ply heuristic value of each move, the prior of the search's
//! progressive bias: what the move does on its own board (win it, block the
//! opponent's win there, make a threat) and where it sends the opponent (to a
//! board it wins at once, to a free choice, or somewhere harmless).

use crate::game::grid::{count9, FULL};
use crate::game::uttt::{line, threats, Uttt, UtttMove};
use crate::game::Game;

/// Weights of the move features; a move's prior is their sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PriorWeights {
    /// The move wins its local board.
    pub win_board: f32,
    /// The move takes a cell where the opponent would complete a line.
    pub block: f32,
    /// The move makes a new two-in-a-row with an empty third cell.
    pub threat: f32,
    /// The opponent is sent to a closed board: it may play anywhere.
    pub send_free: f32,
    /// The opponent is sent to a board it can win at once.
    pub send_win: f32,
    /// ... and winning it there wins the opponent the game.
    pub send_loss: f32,
}

impl PriorWeights {
    /// The weights `optimal` uses.
    pub(crate) const DEFAULT: PriorWeights = PriorWeights {
        win_board: 1.0,
        block: 0.6,
        threat: 0.2,
        send_free: -0.6,
        send_win: -0.8,
        send_loss: -2.0,
    };
}

/// Fills `out[i]` with the prior of `moves[i]` in `pos` (whose mover makes
/// them). `out` must be at least as long as `moves`.
pub(super) fn priors(pos: &Uttt, moves: &[UtttMove], w: &PriorWeights, out: &mut [f32]) {
    let me = pos.to_move();
    let them = me.other();
    let closed = pos.closed();
    let their_won = pos.won(them);
    // What sending the opponent to board d means, for every board the move
    // does not change (d != the move's board).
    let mut send = [0f32; 9];
    for (d, s) in send.iter_mut().enumerate() {
        *s = send_value(
            closed & (1 << d) != 0,
            threats(pos.cells(them, d)) & pos.empty(d),
            line(their_won | 1 << d),
            w,
        );
    }
    for (mv, slot) in moves.iter().zip(out.iter_mut()) {
        let b = mv.board() as usize;
        let c = mv.cell() as usize;
        let bit = 1u16 << c;
        let mine = pos.cells(me, b);
        let theirs = pos.cells(them, b);
        let after = mine | bit;
        let empty_after = pos.empty(b) & !bit;
        let mut v = 0.0;
        let wins = line(after);
        if wins {
            v += w.win_board;
        } else {
            if threats(theirs) & bit != 0 {
                v += w.block;
            }
            let before = count9(threats(mine) & pos.empty(b));
            if count9(threats(after) & empty_after) > before {
                v += w.threat;
            }
        }
        v += if c == b {
            // Sent back to the same board, as the move leaves it.
            let closes = wins || (after | theirs) == FULL;
            send_value(
                closes,
                threats(theirs) & empty_after,
                line(their_won | 1 << b),
                w,
            )
        } else {
            send[c]
        };
        *slot = v;
    }
}

fn send_value(closed: bool, their_wins: u16, game_loss: bool, w: &PriorWeights) -> f32 {
    if closed {
        w.send_free
    } else if their_wins != 0 {
        if game_loss {
            w.send_loss
        } else {
            w.send_win
        }
    } else {
        0.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn prior_of(pos: &Uttt, b: u8, c: u8) -> f32 {
        let moves = pos.legal_moves();
        let mut out = [0f32; 81];
        priors(pos, &moves, &PriorWeights::DEFAULT, &mut out);
        let i = moves
            .iter()
            .position(|m| *m == UtttMove::new(b, c).unwrap())
            .expect("a legal move");
        out[i]
    }

    /// X to move in board 4, where X holds 0 and 1 and O holds 3 and 5:
    /// 4-2 wins the board.
    pub(crate) fn board_4_win() -> Uttt {
        let text = [
            ".O..O....",
            ".........",
            ".........",
            ".........",
            "XX.O.O...",
            "X........",
            ".........",
            "X........",
            ".........",
        ]
        .concat()
            + "/4/.........";
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn features_add_up() {
        let p = board_4_win();
        let w = PriorWeights::DEFAULT;
        // 4-2 wins board 4 and sends O to board 2 (harmless).
        assert_eq!(prior_of(&p, 4, 2), w.win_board);
        // 4-4 blocks O's 3-4-5, makes new threats (1-4-7, 0-4-8) and sends
        // O back to board 4, where O has nothing left to complete.
        let v = prior_of(&p, 4, 4);
        assert!((v - (w.block + w.threat)).abs() < 1e-6, "{v}");
        // 4-8 makes the threat 0-4-8; 4-6 makes none (3 is O's).
        assert_eq!(prior_of(&p, 4, 8), w.threat);
        assert_eq!(prior_of(&p, 4, 6), 0.0);
    }

    /// X to move in board 4; O can win board 0 at once, board 8 is X's
    /// (closed).
    pub(crate) fn sends_position() -> Uttt {
        let text = [
            "OO.......",
            "....O....",
            "....O....",
            ".........",
            ".........",
            "X........",
            ".........",
            ".........",
            "XXX......",
        ]
        .concat()
            + "/4/........X";
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn sends_are_judged() {
        let p = sends_position();
        let w = PriorWeights::DEFAULT;
        assert_eq!(prior_of(&p, 4, 0), w.send_win);
        assert_eq!(prior_of(&p, 4, 8), w.send_free);
        assert_eq!(prior_of(&p, 4, 1), 0.0);
    }

    /// The priors of every legal move of many positions are those of the
    /// code they were recorded from, bit for bit.
    #[test]
    fn priors_are_unchanged() {
        use crate::bot::uttt::playout::tests::{mix, sample_positions};
        let mut h = 0xcbf2_9ce4_8422_2325;
        let mut out = [0f32; 81];
        for p in sample_positions(23, 2000) {
            let moves = p.legal_moves();
            priors(&p, &moves, &PriorWeights::DEFAULT, &mut out);
            for (mv, v) in moves.iter().zip(out.iter()) {
                h = mix(h, (mv.board() * 9 + mv.cell()) as u64);
                h = mix(h, v.to_bits() as u64);
            }
        }
        assert_eq!(h, 0x974e_e779_94c1_7f5c);
    }
}
