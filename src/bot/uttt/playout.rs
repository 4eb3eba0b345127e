//! The informed playout policy of `optimal`: cheap one-ply rules that make
//! playouts judge positions better than uniform random moves do.

use rand::Rng;

use crate::game::grid::{cell_list, count9, FULL};
use crate::game::uttt::{random_cell, threats, Uttt, UtttMove};
use crate::game::{Game, Outcome, Seat};

use super::eval::{evaluate, macro_lines};
use super::SearchConfig;

/// Plays `pos` with [`informed_move`] under `cfg`'s playout settings
/// (`playout_random_permille`, `playout_block`) to the end, or for
/// `cfg.cutoff_plies` plies when that is not 0, and returns X's points: 1,
/// 0.5 or 0 for a finished game, the evaluation of the position reached
/// otherwise: [`evaluate`] (the fitted model) when `cfg.fitted_eval`, else
/// [`macro_lines`]; `cfg.eval_weight` is its steepness.
pub(super) fn informed_playout<R: Rng>(pos: Uttt, cfg: &SearchConfig, rng: &mut R) -> f32 {
    if let Some(o) = pos.outcome() {
        return o.points(Seat::One) as f32;
    }
    let mut run = Playout {
        pos,
        wins: local_wins(&pos),
        plies: 0,
        threshold: random_threshold(cfg.playout_random_permille),
    };
    // The players' moves alternate, each player's in its own copy of
    // `step`, where the mover is a constant.
    if pos.to_move() == Seat::Two {
        if let Some(v) = run.step::<1, R>(cfg, rng) {
            return v;
        }
    }
    loop {
        if let Some(v) = run.step::<0, R>(cfg, rng) {
            return v;
        }
        if let Some(v) = run.step::<1, R>(cfg, rng) {
            return v;
        }
    }
}

/// X's chances in the unfinished `pos` by the evaluation `cfg` names:
/// [`evaluate`] (the fitted model) when `cfg.fitted_eval`, else
/// [`macro_lines`]; `cfg.eval_weight` is its steepness.
pub(super) fn position_value(pos: &Uttt, cfg: &SearchConfig) -> f32 {
    if cfg.fitted_eval {
        evaluate(pos, cfg.eval_weight)
    } else {
        macro_lines(pos, cfg.eval_weight)
    }
}

/// The state of an informed playout.
struct Playout {
    pos: Uttt,
    /// Which open boards each player can win at once, kept up to date move
    /// by move: only the board of the move changes.
    wins: [u16; 2],
    /// Plies played.
    plies: u32,
    /// The random moves' threshold (see [`random_threshold`]).
    threshold: u64,
}

impl Playout {
    /// One move of player `ME` (0 for X, 1 for O; the player to move), or
    /// the playout's result (X's points) when it ends before or with it.
    #[inline(always)]
    fn step<const ME: usize, R: Rng>(&mut self, cfg: &SearchConfig, rng: &mut R) -> Option<f32> {
        let pos = &mut self.pos;
        let max_plies = cfg.cutoff_plies;
        if self.plies == max_plies && max_plies != 0 {
            return Some(position_value(pos, cfg));
        }
        // The game is not over here (checked before the first move and
        // after every move that closes a board), so a forced board is open
        // and some board is playable.
        let boards = match pos.forced() {
            Some(f) => 1 << f,
            None => FULL & !pos.closed(),
        };
        let wins = &mut self.wins;
        let Some(mv) = choose::<ME, R>(pos, boards, wins, self.threshold, cfg.playout_block, rng)
        else {
            return Some(Outcome::Draw.points(Seat::One) as f32);
        };
        let closed = pos.closed();
        pos.play_unchecked(mv);
        let b = mv.board() as usize;
        if pos.closed() != closed {
            wins[0] &= !(1 << b);
            wins[1] &= !(1 << b);
            // The game can only end when a board closes.
            if let Some(o) = pos.outcome() {
                return Some(o.points(Seat::One) as f32);
            }
        } else {
            let e = pos.empty(b);
            for (seat, w) in [Seat::One, Seat::Two].into_iter().zip(wins.iter_mut()) {
                let can = (threats(pos.cells(seat, b)) & e != 0) as u16;
                *w = (*w & !(1 << b)) | can << b;
            }
        }
        self.plies += 1;
        None
    }
}

/// The open boards where each player (X, O) completes a local line at once.
fn local_wins(pos: &Uttt) -> [u16; 2] {
    let mut wins = [0u16; 2];
    let open = !pos.closed();
    for b in 0..9 {
        let e = pos.empty(b);
        for (seat, w) in [Seat::One, Seat::Two].into_iter().zip(wins.iter_mut()) {
            let can = (threats(pos.cells(seat, b)) & e != 0) as u16;
            *w |= (can & open >> b) << b;
        }
    }
    wins
}

/// `permille` / 1000 as a threshold for a uniform 32-bit draw.
fn random_threshold(permille: u32) -> u64 {
    (permille.min(1000) as u64) * (1u64 << 32) / 1000
}

/// The informed playout policy. It wins the game when one move does; else
/// plays a random move with probability `random_permille` / 1000 (purely
/// greedy playouts all follow the same line and judge positions worse);
/// else wins a local board; else plays a random cell that does not send the
/// opponent to a board it can win at once or to a free choice (when such a
/// cell exists); else a random move.
#[cfg(test)]
pub(super) fn informed_move<R: Rng>(
    pos: &Uttt,
    random_permille: u32,
    block: bool,
    rng: &mut R,
) -> Option<UtttMove> {
    let boards = pos.playable_boards();
    if boards == 0 {
        return None;
    }
    let wins = local_wins(pos);
    let threshold = random_threshold(random_permille);
    match pos.to_move() {
        Seat::One => choose::<0, R>(pos, boards, &wins, threshold, block, rng),
        Seat::Two => choose::<1, R>(pos, boards, &wins, threshold, block, rng),
    }
}

/// [`informed_move`] for the mover `ME` (0 for X, 1 for O) given
/// `boards`, the boards the mover may play in (not 0), and `wins`, the open
/// boards where each player can complete a line at once.
#[inline(always)]
fn choose<const ME: usize, R: Rng>(
    pos: &Uttt,
    boards: u16,
    wins: &[u16; 2],
    threshold: u64,
    block: bool,
    rng: &mut R,
) -> Option<UtttMove> {
    let me = if ME == 0 { Seat::One } else { Seat::Two };
    let them = me.other();
    let mine = wins[ME & 1] & boards;
    if mine != 0 {
        // A local win on a board that completes a macro line wins the game.
        let game = mine & threats(pos.won(me));
        if game != 0 {
            let b = game.trailing_zeros() as usize;
            let cells = threats(pos.cells(me, b)) & pos.empty(b);
            return UtttMove::new(b as u8, cells.trailing_zeros() as u8);
        }
    }
    // Past the game win, a share of the moves is random, so that playouts
    // do not all follow the same greedy line.
    if (rng.next_u32() as u64) < threshold {
        return pos.random_move(rng);
    }
    if mine != 0 {
        let b = random_cell(mine, rng) as usize;
        let cells = threats(pos.cells(me, b)) & pos.empty(b);
        return UtttMove::new(b as u8, random_cell(cells, rng));
    }
    // Boards the opponent must not be sent to: closed ones (a free choice)
    // and open ones where it completes a line at once.
    let danger = pos.closed() | wins[(ME + 1) & 1];
    if boards & (boards - 1) == 0 {
        let b = boards.trailing_zeros() as usize;
        let e = pos.empty(b);
        let safe = e & !danger;
        if block && wins[(ME + 1) & 1] & boards != 0 {
            // Take a cell where the opponent would complete a line, when
            // that does not send it somewhere worse.
            let blocks = threats(pos.cells(them, b)) & safe;
            if blocks != 0 {
                return UtttMove::new(b as u8, random_cell(blocks, rng));
            }
        }
        let cells = if safe != 0 { safe } else { e };
        return UtttMove::new(b as u8, random_cell(cells, rng));
    }
    let mut safe_total = 0;
    let mut all_total = 0;
    let mut bs = boards;
    while bs != 0 {
        let b = bs.trailing_zeros() as usize;
        bs &= bs - 1;
        let e = pos.empty(b);
        safe_total += count9(e & !danger);
        all_total += count9(e);
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
        let list = cell_list(pos.empty(b as usize) & mask);
        let k = (list & 15) as u32;
        if n < k {
            return UtttMove::new(b, (list >> (4 + 4 * n.min(8)) & 15) as u8);
        }
        n -= k;
    }
    None
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{RngCore, SeedableRng};

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
            assert_eq!(informed_move(&p, 250, false, &mut rng), UtttMove::new(2, 2));
        }
    }

    #[test]
    fn playouts_block_when_asked() {
        // X to move in board 4 (sent by O's 0-4), where O threatens cell 2;
        // board 2 is harmless for O, so blocking at 4-2 is safe.
        let text = [
            "....O....",
            ".........",
            ".........",
            ".........",
            "OO.......",
            ".........",
            "X........",
            "X........",
            "X........",
        ]
        .concat()
            + "/4/.........";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut rng = SmallRng::seed_from_u64(5);
        for _ in 0..50 {
            assert_eq!(informed_move(&p, 0, true, &mut rng), UtttMove::new(4, 2));
        }
        // Without blocking, other cells come up.
        let others = (0..200)
            .filter(|_| informed_move(&p, 0, false, &mut rng) != UtttMove::new(4, 2))
            .count();
        assert!(others > 100, "{others} of 200");
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
            let mv = informed_move(&p, 0, false, &mut rng).unwrap();
            assert_eq!(mv.board(), 4);
            assert!(![0, 2, 8].contains(&mv.cell()), "{mv}");
        }
        // With 1 move in 4 random, a random cell of board 4 is one of the 3
        // avoided ones 1 time in 12.
        let avoided = (0..4000)
            .filter(|_| {
                let mv = informed_move(&p, 250, false, &mut rng).unwrap();
                assert_eq!(mv.board(), 4);
                [0, 2, 8].contains(&mv.cell())
            })
            .count();
        assert!((200..500).contains(&avoided), "{avoided} of 4000");
    }

    /// A hash of `x` into `h` (FNV-1a on its bytes), for fingerprints.
    pub(in crate::bot::uttt) fn mix(h: u64, x: u64) -> u64 {
        x.to_le_bytes()
            .iter()
            .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    }

    /// Positions of random games with `seed`, one every few plies.
    pub(in crate::bot::uttt) fn sample_positions(seed: u64, n: usize) -> Vec<Uttt> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut out = vec![Uttt::new()];
        while out.len() < n {
            let mut p = Uttt::new();
            let plies = rng.random_range(0..70);
            for _ in 0..plies {
                match p.random_move(&mut rng) {
                    Some(mv) => p.play_unchecked(mv),
                    None => break,
                }
            }
            if p.outcome().is_none() {
                out.push(p);
            }
        }
        out
    }

    /// Informed playouts draw the same random numbers and reach the same
    /// results as the code they were recorded from (a speed change must not
    /// change play): a hash of every result and of the generator's state
    /// after each playout, for the playout settings the engine and the
    /// bench use.
    #[test]
    fn playouts_are_unchanged() {
        let positions = sample_positions(17, 300);
        let base = SearchConfig::optimal();
        let configs = [
            base,
            SearchConfig {
                playout_block: true,
                ..base
            },
            SearchConfig {
                playout_random_permille: 0,
                ..base
            },
            SearchConfig {
                cutoff_plies: 10,
                ..base
            },
            SearchConfig {
                cutoff_plies: 6,
                fitted_eval: true,
                eval_weight: 1.0,
                ..base
            },
        ];
        let mut got = Vec::new();
        for cfg in &configs {
            let mut rng = SmallRng::seed_from_u64(99);
            let mut h = 0xcbf2_9ce4_8422_2325;
            for p in &positions {
                for _ in 0..20 {
                    let v = informed_playout(*p, cfg, &mut rng);
                    h = mix(h, v.to_bits() as u64);
                }
                h = mix(h, rng.next_u64());
            }
            got.push(h);
        }
        let want: [u64; 5] = [
            0x2cccbcf9617b5be1,
            0xaa2224d857c57833,
            0x5bde52a23216e79f,
            0xd2d27a7adce02311,
            0x48016067925f0f37,
        ];
        assert_eq!(got, want);
    }
}
