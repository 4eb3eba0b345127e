//! The informed playout policy of `optimal`: cheap one-ply rules that make
//! playouts judge positions better than uniform random moves do.

use rand::Rng;

use crate::game::tictactoe::{nth_set_bit, FULL};
use crate::game::uttt::{line, threats, Uttt, UtttMove};
use crate::game::{Game, Outcome};

/// Plays `pos` to the end with [`informed_move`] and returns the outcome.
pub(super) fn informed_playout<R: Rng>(
    mut pos: Uttt,
    random_permille: u32,
    rng: &mut R,
) -> Outcome {
    loop {
        if let Some(o) = pos.outcome() {
            return o;
        }
        match informed_move(&pos, random_permille, rng) {
            Some(m) => pos.play_unchecked(m),
            None => return Outcome::Draw,
        }
    }
}

/// The informed playout policy. It wins the game when one move does; else
/// plays a random move with probability `random_permille` / 1000 (purely
/// greedy playouts all follow the same line and judge positions worse);
/// else wins a local board; else plays a random cell that does not send the
/// opponent to a board it can win at once or to a free choice (when such a
/// cell exists); else a random move.
pub(super) fn informed_move<R: Rng>(
    pos: &Uttt,
    random_permille: u32,
    rng: &mut R,
) -> Option<UtttMove> {
    let boards = pos.playable_boards();
    if boards == 0 {
        return None;
    }
    let me = pos.to_move();
    let them = me.other();
    let my_won = pos.won(me);
    // Local wins: a game win is taken at once; otherwise one board with a
    // local win is chosen uniformly (reservoir sampling).
    let mut win_board = u8::MAX;
    let mut win_cells = 0u16;
    let mut seen = 0u32;
    let mut bs = boards;
    while bs != 0 {
        let b = bs.trailing_zeros() as u8;
        bs &= bs - 1;
        let w = threats(pos.cells(me, b as usize)) & pos.empty(b as usize);
        if w != 0 {
            if line(my_won | 1 << b) {
                return UtttMove::new(b, w.trailing_zeros() as u8);
            }
            seen += 1;
            if seen == 1 || rng.random_range(0..seen) == 0 {
                win_board = b;
                win_cells = w;
            }
        }
    }
    // Past the game win, a share of the moves is random, so that playouts
    // do not all follow the same greedy line.
    if random_permille > 0 && rng.random_range(0..1000) < random_permille {
        return pos.random_move(rng);
    }
    if seen > 0 {
        let n = rng.random_range(0..win_cells.count_ones());
        return UtttMove::new(win_board, nth_set_bit(win_cells as u32, n) as u8);
    }
    // Boards the opponent must not be sent to: closed ones (a free choice)
    // and open ones where it completes a line at once.
    let closed = pos.closed();
    let mut danger = closed;
    let mut open = FULL & !closed;
    while open != 0 {
        let k = open.trailing_zeros() as usize;
        open &= open - 1;
        if threats(pos.cells(them, k)) & pos.empty(k) != 0 {
            danger |= 1 << k;
        }
    }
    let mut safe_total = 0;
    let mut all_total = 0;
    let mut bs = boards;
    while bs != 0 {
        let b = bs.trailing_zeros() as usize;
        bs &= bs - 1;
        let e = pos.empty(b);
        safe_total += (e & !danger).count_ones();
        all_total += e.count_ones();
    }
    let (mask, total) = if safe_total > 0 {
        (FULL & !danger, safe_total)
    } else {
        (FULL, all_total)
    };
    if total == 0 {
        return None;
    }
    let mut n = rng.random_range(0..total);
    let mut bs = boards;
    while bs != 0 {
        let b = bs.trailing_zeros() as u8;
        bs &= bs - 1;
        let e = (pos.empty(b as usize) & mask) as u32;
        let k = e.count_ones();
        if n < k {
            return UtttMove::new(b, nth_set_bit(e, n) as u8);
        }
        n -= k;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn playouts_take_a_game_win_on_a_free_move() {
        // X has boards 0 and 1 and two in a row on board 2; the move is free
        // (board 5, where the last move sent X, is full).
        let text = [
            "XXX.OO...",
            "XXXOO....",
            "XX.......",
            "..O......",
            ".........",
            "XOXXOOOXX",
            "........O",
            "O...O....",
            "O........",
        ]
        .concat()
            + "/9/XX...=...";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..20 {
            assert_eq!(informed_move(&p, 250, &mut rng), UtttMove::new(2, 2));
        }
    }

    #[test]
    fn playouts_avoid_sending_to_an_opponent_win() {
        // X to move in board 4; O threatens a win on boards 0 and 2, and
        // board 8 is closed: cells 0, 2 and 8 are avoided.
        let text = [
            "OO.......",
            ".........",
            "O.O.O....",
            "X........",
            ".........",
            "X........",
            ".........",
            ".........",
            "XXX......",
        ]
        .concat()
            + "/4/........X";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut rng = SmallRng::seed_from_u64(4);
        for _ in 0..200 {
            let mv = informed_move(&p, 0, &mut rng).unwrap();
            assert_eq!(mv.board(), 4);
            assert!(![0, 2, 8].contains(&mv.cell()), "{mv}");
        }
        // With 1 move in 4 random, a random cell of board 4 is one of the 3
        // avoided ones 1 time in 12.
        let avoided = (0..4000)
            .filter(|_| {
                let mv = informed_move(&p, 250, &mut rng).unwrap();
                assert_eq!(mv.board(), 4);
                [0, 2, 8].contains(&mv.cell())
            })
            .count();
        assert!((200..500).contains(&avoided), "{avoided} of 4000");
    }
}
