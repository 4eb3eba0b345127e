//! The console game, as the Notakto course assignment prints it: the
//! board, `Player N: ` prompts, `Invalid move, please input again` for bad
//! input, and `Player N wins game` at the end. `referee play` plays it, and
//! `check-console` compares students' programs with it byte for byte.

use std::io::{BufRead, Write};

use crate::bot::Bot;
use crate::game::{Game, Outcome, Seat};
use crate::protocol::BotResult;

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
    use crate::bot::console::expected_transcript;
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
    fn the_expected_transcript_is_what_play_prints() {
        // A bot in seat 1 against typed moves: the same bytes as the
        // console game, with the typed moves unechoed.
        use crate::bot::BuiltinSpec;
        let bot = BuiltinSpec::parse("optimal").make::<TicTacToe>(3).unwrap();
        let mut ps = [Player::Bot(bot), Player::Human];
        let (out, end) = run_console("0\n1\n2\n3\n5\n6\n7\n8\n", &mut ps);
        assert!(matches!(end, ConsoleEnd::Finished(_)), "{out}");
        let mut pos = TicTacToe::new();
        let mut moves = Vec::new();
        for line in out.lines() {
            if let Some(m) = line.strip_prefix("Player 1: ") {
                let m: String = m.chars().take_while(|c| c.is_ascii_digit()).collect();
                moves.push(m);
            }
        }
        // Rebuild the move list from the transcript: the bot's moves, and
        // the typed moves that were legal in turn.
        let typed = ["0", "1", "2", "3", "5", "6", "7", "8"];
        let mut t = typed.iter();
        let mut list = Vec::new();
        let mut b = moves.iter();
        while !pos.is_over() {
            let text = if pos.to_move() == Seat::One {
                b.next().unwrap().clone()
            } else {
                loop {
                    let m = t.next().unwrap();
                    if pos.is_legal(TicTacToe::parse_move(m).unwrap()) {
                        break m.to_string();
                    }
                }
            };
            let mv = TicTacToe::parse_move(&text).unwrap();
            list.push(mv);
            pos.play_unchecked(mv);
        }
        let want = expected_transcript(&TicTacToe::new(), &list, Seat::One);
        assert_eq!(
            want,
            out.replace("Player 2: Invalid move, please input again\n", "")
        );
    }

    #[test]
    fn end_of_input_is_exit_1() {
        let mut ps = [Player::Human, Player::Human];
        let (out, code) = run_console("4\n", &mut ps);
        assert_eq!(code, ConsoleEnd::InputEnded(Seat::Two));
        assert!(out.ends_with("Player 2: "));
    }
}
