//! The console game, as the Notakto course assignment prints it: the
//! board, `Player N: ` prompts, `Invalid move, please input again` for bad
//! input, and `Player N wins game` at the end. `referee play` plays it, and
//! `check-console` compares students' programs with it byte for byte.

use std::io::{BufRead, Write};

use crate::bot::{Bot, BotResult};
use crate::game::{Game, Outcome, Seat};

/// Who sits in a seat of a console game.
pub enum Player<G: Game> {
    /// A person typing moves on stdin.
    Human,
    /// A bot, whose moves are printed after its prompt.
    Bot(Box<dyn Bot<G>>),
}

/// How a console game stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsoleEnd {
    /// Played to the end (or to a bot's forfeit) with this result.
    Finished(Outcome),
    /// Input ended while this seat was to move.
    InputEnded(Seat),
}

/// Plays one console game reading human moves from `input` and writing the
/// transcript to `out`: the reference transcript that `check-console`
/// compares students' programs with.
pub fn console_game<G: Game>(
    mut pos: G,
    players: &mut [Player<G>],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<ConsoleEnd> {
    // The board drawing of each game already ends with a newline.
    write!(out, "{}", pos.render())?;
    let outcome = loop {
        let seat = pos.to_move();
        write!(out, "Player {}: ", seat.number())?;
        out.flush()?;
        let mv = match &mut players[seat.index()] {
            Player::Bot(bot) => match bot.select_move(&pos) {
                Ok(mv) if pos.is_legal(mv) => {
                    writeln!(out, "{mv}")?;
                    mv
                }
                Ok(mv) => {
                    writeln!(out, "{mv}")?;
                    writeln!(out, "Player {} forfeits: illegal move {mv}", seat.number())?;
                    break Outcome::Win(seat.other());
                }
                Err(f) => {
                    writeln!(out)?;
                    writeln!(out, "Player {} forfeits: {f}", seat.number())?;
                    break Outcome::Win(seat.other());
                }
            },
            Player::Human => {
                let mut line = String::new();
                if input.read_line(&mut line)? == 0 {
                    out.flush()?;
                    return Ok(ConsoleEnd::InputEnded(seat));
                }
                match G::parse_move(line.trim_end_matches(['\n', '\r'])) {
                    Ok(mv) if pos.is_legal(mv) => mv,
                    _ => {
                        writeln!(out, "Invalid move, please input again")?;
                        continue;
                    }
                }
            }
        };
        pos.play_unchecked(mv);
        if let Some(o) = pos.outcome() {
            break o;
        }
        write!(out, "{}", pos.render())?;
    };
    if let (true, Some(board)) = (pos.is_over(), pos.final_render()) {
        write!(out, "{board}")?;
    }
    match outcome {
        Outcome::Win(s) => writeln!(out, "Player {} wins game", s.number())?,
        Outcome::Draw => writeln!(out, "Draw game")?,
    }
    out.flush()?;
    for (i, p) in players.iter_mut().enumerate() {
        if let Player::Bot(b) = p {
            let seat = if i == 0 { Seat::One } else { Seat::Two };
            b.end(BotResult::for_seat(outcome, seat));
        }
    }
    Ok(ConsoleEnd::Finished(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    fn run_console(input: &str, players: &mut [Player<TicTacToe>]) -> (String, ConsoleEnd) {
        let mut out = Vec::new();
        let mut inp = input.as_bytes();
        let end = console_game(TicTacToe::new(), players, &mut inp, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), end)
    }

    #[test]
    fn human_game_with_invalid_input() {
        let mut ps = [Player::Human, Player::Human];
        let (out, code) = run_console("0\n0\nx\n3\n1\n4\n2\n", &mut ps);
        assert_eq!(code, ConsoleEnd::Finished(Outcome::Win(Seat::One)));
        assert_eq!(out.matches("Invalid move, please input again").count(), 2);
        assert!(out.ends_with("Player 1 wins game\n"), "{out}");
    }

    #[test]
    fn end_of_input_is_exit_1() {
        let mut ps = [Player::Human, Player::Human];
        let (out, code) = run_console("4\n", &mut ps);
        assert_eq!(code, ConsoleEnd::InputEnded(Seat::Two));
        assert!(out.ends_with("Player 2: "));
    }
}
