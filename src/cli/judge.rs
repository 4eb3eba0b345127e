//! `referee judge`: the "find the winner" exercise, for every game.
//!
//! Prints `A` (player 1 won), `B` (player 2 won), `Draw` or `Pending`.

use std::process::ExitCode;

use anyhow::{anyhow, bail};
use clap::Args;

use referee::game::tictactoe::Cell;
use referee::game::{Game, GameKind, GameOptions, Outcome, TicTacToe};
use referee::with_game;

/// Arguments of `referee judge`.
#[derive(Args, Debug)]
pub struct JudgeArgs {
    #[command(flatten)]
    game: super::GameArgs,
    /// The moves: a JSON list of [row, col] pairs (tictactoe), or move texts
    /// separated by spaces or commas (`0 4 8`, `A6 A7`, `4 4, 4 0`).
    moves: String,
    /// Also print the final position text (on a second line).
    #[arg(long)]
    position: bool,
}

/// Judges the moves.
pub fn run(args: JudgeArgs) -> anyhow::Result<ExitCode> {
    let kind = args.game.game;
    let opts = args.game.options();
    let (verdict, position) = with_game!(kind, G => judge::<G>(&opts, &args.moves)?);
    println!("{verdict}");
    if args.position {
        println!("{position}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The verdict word for a position.
pub fn verdict<G: Game>(pos: &G) -> &'static str {
    match pos.outcome() {
        Some(Outcome::Win(s)) if s.number() == 1 => "A",
        Some(Outcome::Win(_)) => "B",
        Some(Outcome::Draw) => "Draw",
        None => "Pending",
    }
}

/// Splits a move list into move texts. UTTT moves contain a space, so there
/// the numbers are paired up unless commas separate the moves.
pub fn split_moves(kind: GameKind, text: &str) -> Vec<String> {
    let t = text.trim();
    if t.is_empty() {
        return Vec::new();
    }
    if kind == GameKind::Uttt {
        if t.contains(',') {
            return t.split(',').map(|m| m.trim().to_string()).collect();
        }
        let nums: Vec<&str> = t.split_whitespace().collect();
        return nums.chunks(2).map(|c| c.join(" ")).collect();
    }
    t.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

/// Reads the exercise's JSON list of [row, col] pairs.
fn json_moves(text: &str) -> anyhow::Result<Vec<String>> {
    let pairs: Vec<Vec<i64>> = serde_json::from_str(text)
        .map_err(|e| anyhow!("moves are not a JSON list of [row, col] pairs: {e}"))?;
    pairs
        .iter()
        .enumerate()
        .map(|(i, p)| match p.as_slice() {
            [r, c] => u8::try_from(*r)
                .ok()
                .zip(u8::try_from(*c).ok())
                .and_then(|(r, c)| Cell::from_row_col(r, c))
                .map(|c| c.to_string())
                .ok_or_else(|| {
                    anyhow!(
                        "move {} (index {i}) [{r}, {c}]: row and column must be 0-2",
                        i + 1
                    )
                }),
            _ => Err(anyhow!(
                "move {} (index {i}): expected a [row, col] pair, got {p:?}",
                i + 1
            )),
        })
        .collect()
}

/// Plays the moves from the start and returns the verdict and final position.
/// The first bad move is an error naming it and its index.
pub fn judge<G: Game>(opts: &GameOptions, text: &str) -> anyhow::Result<(&'static str, String)> {
    let moves = if text.trim_start().starts_with('[') {
        if G::KIND != TicTacToe::KIND {
            bail!(
                "the JSON [row, col] form is for tictactoe; use move texts for {}",
                G::KIND
            );
        }
        json_moves(text)?
    } else {
        split_moves(G::KIND, text)
    };
    let mut pos = G::start(opts);
    for (i, m) in moves.iter().enumerate() {
        let mv = G::parse_move(m).map_err(|e| anyhow!("move {} (index {i}) '{m}': {e}", i + 1))?;
        pos.play(mv)
            .map_err(|e| anyhow!("move {} (index {i}) '{m}': {}", i + 1, e.reason))?;
    }
    Ok((verdict(&pos), pos.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ttt(text: &str) -> anyhow::Result<(&'static str, String)> {
        judge::<TicTacToe>(&GameOptions::default(), text)
    }

    #[test]
    fn seed_002_examples() {
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
    }

    #[test]
    fn uttt_moves_pair_up() {
        assert_eq!(split_moves(GameKind::Uttt, "4 4 4 0"), vec!["4 4", "4 0"]);
        assert_eq!(split_moves(GameKind::Uttt, "4 4, 4 0"), vec!["4 4", "4 0"]);
        assert_eq!(
            split_moves(GameKind::Notakto, "A6 A7,A8"),
            vec!["A6", "A7", "A8"]
        );
    }
}
