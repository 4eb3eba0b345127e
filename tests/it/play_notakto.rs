//! `referee play notakto` reproduces the course assignment's transcripts
//! (the Notakto course assignment) byte for byte.

use crate::common::{root, run_with_input, stderr, stdout};

fn fixture(name: &str) -> String {
    let path = root().join("tests/fixtures").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn seed_game_1_is_reproduced_byte_for_byte() {
    let o = run_with_input(&["play", "notakto"], &fixture("notakto-seed-game1.in"));
    assert_eq!(stdout(&o), fixture("notakto-seed-game1.out"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn seed_game_2_with_invalid_inputs_is_reproduced_byte_for_byte() {
    // The seed's second game stops mid-game: input ends while player 2 is
    // to move, which is a one-line message on stderr and exit code 1.
    let o = run_with_input(&["play", "notakto"], &fixture("notakto-seed-game2.in"));
    assert_eq!(stdout(&o), fixture("notakto-seed-game2.out"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("input ended") && !e.contains("panicked"), "{e}");
}

#[test]
fn a_bot_seat_prints_its_move_after_its_prompt() {
    // Optimal as player 1 on 3 boards wins against any input; feed every
    // move of every board in order, the invalid ones are simply re-prompted.
    let mut input = String::new();
    for b in ["A", "B", "C"] {
        for c in 0..9 {
            input.push_str(&format!("{b}{c}\n"));
        }
    }
    let o = run_with_input(
        &["play", "notakto", "--p1", "optimal", "--seed", "4"],
        &input,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.ends_with("Player 1 wins game\n"), "{out}");
    // The bot's moves appear right after its prompt, then a newline.
    let bot_lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("Player 1: "))
        .collect();
    assert!(!bot_lines.is_empty());
    for l in bot_lines {
        let mv = l.trim_start_matches("Player 1: ");
        assert!(mv.parse::<referee::game::NotaktoMove>().is_ok(), "{l}");
    }
}

#[test]
fn boards_option_changes_the_drawing() {
    let o = run_with_input(&["play", "notakto", "--boards", "1"], "A4\n");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "A\n0 1 2\n3 4 5\n6 7 8\nPlayer 1: A\n0 1 2\n3 X 5\n6 7 8\nPlayer 2: "
    );
}
