//! The "find the winner" exercise, for every game: a list of moves from
//! the start becomes `A` (player 1 won), `B` (player 2 won), `Draw` or
//! `Pending`, or an error naming the first bad move and its index.

use crate::game::{Game, GameOptions, Outcome, ParseError};

/// The verdict word for a position.
pub(crate) fn verdict<G: Game>(pos: &G) -> &'static str {
    match pos.outcome() {
        Some(Outcome::Win(s)) if s.number() == 1 => "A",
        Some(Outcome::Win(_)) => "B",
        Some(Outcome::Draw) => "Draw",
        None => "Pending",
    }
}

/// Plays the moves (in the game's move-list notation) from the start and
/// returns the verdict and the final position. The first bad move is an
/// error naming it and its index.
///
/// ```
/// use referee::game::judge::judge;
/// use referee::game::{GameOptions, TicTacToe};
///
/// let opts = GameOptions::default();
/// let (verdict, _) = judge::<TicTacToe>(&opts, "[[0,0],[2,0],[1,1],[2,1],[2,2]]")?;
/// assert_eq!(verdict, "A");
/// let (verdict, pos) = judge::<TicTacToe>(&opts, "0 4")?;
/// assert_eq!((verdict, pos.to_string().as_str()), ("Pending", "X...O...."));
/// # Ok::<(), referee::game::ParseError>(())
/// ```
pub fn judge<G: Game>(opts: &GameOptions, text: &str) -> Result<(&'static str, G), ParseError> {
    judge_from(G::start(opts), text)
}

/// [`judge`] from the position `start` instead of the start: a game of an
/// opening suite's position (its record's `start`).
pub fn judge_from<G: Game>(start: G, text: &str) -> Result<(&'static str, G), ParseError> {
    let moves = G::split_moves(text)?;
    let mut pos = start;
    for (i, m) in moves.iter().enumerate() {
        let at = |why: String| ParseError::new(format!("move {} (index {i}) '{m}': {why}", i + 1));
        let mv = G::parse_move(m).map_err(|e| at(e.to_string()))?;
        pos.play(mv).map_err(|e| at(e.reason))?;
    }
    Ok((verdict(&pos), pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Notakto, TicTacToe, Uttt};

    fn ttt(text: &str) -> Result<(&'static str, String), ParseError> {
        judge::<TicTacToe>(&GameOptions::default(), text).map(|(v, p)| (v, p.to_string()))
    }

    #[test]
    fn the_exercises_examples() {
        assert_eq!(ttt("[[0,0],[2,0],[1,1],[2,1],[2,2]]").unwrap().0, "A");
        assert_eq!(ttt("[[0,0],[1,1],[0,1],[0,2],[1,0],[2,0]]").unwrap().0, "B");
        assert_eq!(
            ttt("[[0,0],[1,1],[2,0],[1,0],[1,2],[2,1],[0,1],[0,2],[2,2]]")
                .unwrap()
                .0,
            "Draw"
        );
        assert_eq!(ttt("[[0,0],[1,1]]").unwrap().0, "Pending");
        assert_eq!(ttt("[]").unwrap().0, "Pending");
    }

    #[test]
    fn notation_and_errors() {
        let (v, p) = ttt("0 4, 8").unwrap();
        assert_eq!(v, "Pending");
        assert_eq!(p, "X...O...X");
        let e = ttt("0 4 0").unwrap_err().to_string();
        assert!(
            e.contains("move 3 (index 2)") && e.contains("occupied"),
            "{e}"
        );
        let e = ttt("0 3 1 4 2 5").unwrap_err().to_string();
        assert!(e.contains("index 5") && e.contains("over"), "{e}");
        let e = ttt("[[0,3]]").unwrap_err().to_string();
        assert!(e.contains("index 0"), "{e}");
        let e = judge::<Notakto>(&GameOptions::default(), "[[0,0]]").unwrap_err();
        assert!(e.to_string().contains("for tictactoe"), "{e}");
    }

    #[test]
    fn from_a_position() {
        let start: TicTacToe = "X...O....".parse().unwrap();
        let (v, p) = judge_from(start, "1 7 2").unwrap();
        assert_eq!((v, p.to_string()), ("A", "XXX.O..O.".to_string()));
    }

    #[test]
    fn each_games_move_list_notation() {
        assert_eq!(Uttt::split_moves("4 4 4 0").unwrap(), vec!["4 4", "4 0"]);
        assert_eq!(Uttt::split_moves("4 4, 4 0").unwrap(), vec!["4 4", "4 0"]);
        assert_eq!(
            Notakto::split_moves("A6 A7,A8").unwrap(),
            vec!["A6", "A7", "A8"]
        );
    }
}
