//! Plays one game between two bots into a [`GameRecord`].
//!
//! Every way a game can end is data: a bot that fails to move, or moves
//! illegally, forfeits and the record says why. Nothing here returns `Err`.

use std::time::Instant;

use crate::bot::{Bot, TimeControl};
use crate::game::{Game, Outcome, Seat};
use crate::play::record::{GameRecord, Termination};
use crate::protocol::BotResult;
use crate::protocol::{Forfeit, ForfeitReason};

/// Everything that fixes one game before it is played.
#[derive(Clone, Debug)]
pub struct GameSetup<G: Game> {
    /// Id within the run.
    pub id: u64,
    /// The game's seed (recorded; bots were made from seeds derived from it).
    pub seed: u64,
    /// The starting position.
    pub start: G,
    /// Moves played before the bots take over (a shared opening).
    pub opening: Vec<G::Move>,
    /// The time control given to both bots.
    pub time: TimeControl,
}

impl<G: Game> GameSetup<G> {
    /// A game from `start` with no opening and the default time control.
    pub fn new(id: u64, seed: u64, start: G) -> Self {
        GameSetup {
            id,
            seed,
            start,
            opening: Vec::new(),
            time: TimeControl::default(),
        }
    }
}

/// Plays the game to its end. `bots[0]` is player 1.
///
/// `names` are the names recorded for the two seats.
pub fn play_game<G: Game>(
    setup: &GameSetup<G>,
    bots: [&mut dyn Bot<G>; 2],
    names: [String; 2],
) -> GameRecord {
    let mut pos = setup.start.clone();
    // Sized for a whole tic-tac-toe game: tournaments play millions of games,
    // and regrowing these was a visible part of the cost of each.
    let mut moves: Vec<String> = Vec::with_capacity(16);
    let mut times_us = Vec::with_capacity(16);
    let mut forfeit: Option<Forfeit> = None;

    for &mv in &setup.opening {
        // An opening comes from our own generator; an illegal one is a bug there,
        // and stopping the opening early keeps the game playable.
        if pos.play(mv).is_err() {
            break;
        }
        moves.push(mv.to_string());
    }
    let opening: Vec<String> = moves.clone();

    for seat in Seat::BOTH {
        if forfeit.is_some() {
            break;
        }
        if let Err(f) = bots[seat.index()].begin(seat, &setup.time) {
            forfeit = Some(f.located(seat, pos.ply() + 1, &pos.to_string()));
        }
    }

    // One clock read per move: a move's time runs from the end of the
    // previous one (the referee's bookkeeping in between is well under a
    // microsecond). External bots report their own, more exact, time.
    let mut clock = Instant::now();
    while forfeit.is_none() && !pos.is_over() {
        let seat = pos.to_move();
        let bot = &mut *bots[seat.index()];
        let reply = bot.select_move(&pos);
        let now = Instant::now();
        let elapsed = now.duration_since(clock).as_micros() as u64;
        clock = now;
        let time_us = bot.last_move_time_us().unwrap_or(elapsed);
        match reply {
            Ok(mv) => {
                if let Some(reason) = pos.illegality(mv) {
                    let mut f = Forfeit::new(ForfeitReason::Illegal, reason);
                    f.line = Some(crate::escape::terminal::reply(mv.to_string().as_bytes()));
                    f.time_us = time_us;
                    forfeit = Some(f.located(seat, pos.ply() + 1, &pos.to_string()));
                } else {
                    pos.play_unchecked(mv);
                    moves.push(mv.to_string());
                    times_us.push(time_us);
                }
            }
            Err(mut f) => {
                if f.time_us == 0 {
                    f.time_us = time_us;
                }
                forfeit = Some(f.located(seat, pos.ply() + 1, &pos.to_string()));
            }
        }
    }

    if forfeit.is_none() {
        if let Some(o) = pos.outcome() {
            for seat in Seat::BOTH {
                if let Err(f) = bots[seat.index()].confirm_end(&pos, o) {
                    forfeit = Some(f.located(seat, pos.ply(), &pos.to_string()));
                    break;
                }
            }
        }
    }

    let (outcome, termination) = match &forfeit {
        Some(f) => (Outcome::Win(f.seat.other()), Termination::Forfeit(f.reason)),
        None => (pos.outcome().unwrap_or(Outcome::Draw), Termination::Normal),
    };
    let mut format = Vec::new();
    for seat in Seat::BOTH {
        bots[seat.index()].end(BotResult::for_seat(outcome, seat));
        format.extend(bots[seat.index()].format_finding());
    }

    GameRecord {
        id: setup.id,
        game: G::KIND,
        players: names,
        seed: setup.seed,
        opening,
        start: setup.start.to_string(),
        moves,
        times_us,
        winner: outcome.winner(),
        termination,
        forfeit,
        final_position: pos.to_string(),
        client: None,
        format,
        rules: pos.options().rules,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::BuiltinSpec;
    use crate::game::tictactoe::Cell;
    use crate::game::{GameOptions, TicTacToe};

    /// A bot that always plays cell 0: illegal from its second move on.
    struct Stubborn;
    impl Bot<TicTacToe> for Stubborn {
        fn name(&self) -> &str {
            "stubborn"
        }
        fn select_move(&mut self, _pos: &TicTacToe) -> Result<Cell, Forfeit> {
            Ok(Cell::new(0).expect("0 is a cell"))
        }
    }

    #[test]
    fn optimal_self_play_is_a_draw() {
        let mut a = BuiltinSpec::parse("optimal").make::<TicTacToe>(1).unwrap();
        let mut b = BuiltinSpec::parse("optimal").make::<TicTacToe>(2).unwrap();
        let setup = GameSetup::new(0, 7, TicTacToe::start(&GameOptions::default()));
        let r = play_game(&setup, [&mut a, &mut b], ["a".into(), "b".into()]);
        assert_eq!(r.winner, None);
        assert_eq!(r.termination, Termination::Normal);
        assert_eq!(r.moves.len(), 9);
        assert_eq!(r.times_us.len(), 9);
    }

    #[test]
    fn illegal_move_is_a_forfeit_with_details() {
        let mut a = Stubborn;
        let mut b = Stubborn;
        let setup = GameSetup::new(3, 7, TicTacToe::new());
        let r = play_game(&setup, [&mut a, &mut b], ["a".into(), "b".into()]);
        assert_eq!(r.winner, Some(Seat::One));
        assert_eq!(r.termination, Termination::Forfeit(ForfeitReason::Illegal));
        let f = r.forfeit.unwrap();
        assert_eq!(f.seat, Seat::Two);
        assert_eq!(f.move_number, 2);
        assert_eq!(f.position, "X........");
        assert_eq!(f.line.as_deref(), Some("0"));
        assert!(f.detail.contains("occupied"), "{}", f.detail);
    }

    #[test]
    fn opening_is_recorded_and_played() {
        let mut a = BuiltinSpec::parse("random").make::<TicTacToe>(1).unwrap();
        let mut b = BuiltinSpec::parse("random").make::<TicTacToe>(2).unwrap();
        let mut setup = GameSetup::new(0, 7, TicTacToe::new());
        setup.opening = vec![Cell::new(4).unwrap(), Cell::new(0).unwrap()];
        let r = play_game(&setup, [&mut a, &mut b], ["a".into(), "b".into()]);
        assert_eq!(r.opening, vec!["4", "0"]);
        assert_eq!(&r.moves[..2], &["4", "0"]);
        assert_eq!(r.times_us.len(), r.moves.len() - 2);
    }
}
