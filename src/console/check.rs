//! `referee check-console`: checks a student's console game program (seed
//! 000, part 1) against referee's own `play` as the reference.
//!
//! Each check is one seeded game's worth of input lines, a mix of legal moves
//! and invalid inputs of every kind the assignment names. The student's
//! program and the reference read the same bytes on stdin; their stdout must
//! match byte for byte.

use std::time::{Duration, Instant};

use rand::Rng;

use super::transcript::{console_game, Player};
use crate::bot::manifest::{ExternalSpec, SandboxMode};
use crate::bot::process::{BotProcess, Reply};
use crate::game::{Game, GameOptions};
use crate::seed;

/// The kinds of input line a generated game contains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputKind {
    /// A legal move.
    Legal,
    /// A move whose cell or board is out of range (`B9`, or a board letter
    /// past the last board).
    OutOfRange,
    /// A well-formed move on a taken cell or a dead board.
    Taken,
    /// Text that is not a move at all (`fds`).
    Garbage,
    /// An empty line.
    Empty,
}

/// Garbage lines: none of them is a move in any game.
const GARBAGE: [&str; 8] = ["fds", "hello", "?", "66", "XX", "move", "-1", "!A"];

/// Generates one game's input: lines ending in `\n`, and whether the input
/// stops before the game ends (early end of input).
pub(crate) fn generate_input<G: Game>(opts: &GameOptions, game_seed: u64) -> (String, bool) {
    let mut rng = seed::rng(game_seed);
    let mut pos = G::start(opts);
    // Every move text of the empty position: the well-formed moves, some of
    // which become taken as the game goes on.
    let all_moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
    // About one game in five ends its input early, at a random ply.
    let early_stop = if rng.random_bool(0.2) {
        Some(rng.random_range(0..12usize))
    } else {
        None
    };
    let mut out = String::new();
    let mut legal_played = 0usize;
    while !pos.is_over() {
        if Some(legal_played) == early_stop {
            return (out, true);
        }
        let kind = match rng.random_range(0..10u32) {
            0 => InputKind::OutOfRange,
            1 => InputKind::Taken,
            2 => InputKind::Garbage,
            3 => InputKind::Empty,
            _ => InputKind::Legal,
        };
        match kind {
            InputKind::Legal => {
                let Some(mv) = pos.random_move(&mut rng) else {
                    break;
                };
                out.push_str(&mv.to_string());
                pos.play_unchecked(mv);
                legal_played += 1;
            }
            InputKind::OutOfRange => {
                let base = &all_moves[rng.random_range(0..all_moves.len())];
                out.push_str(&out_of_range(base, opts, rng.random_bool(0.5)));
            }
            InputKind::Taken => {
                let taken: Vec<&String> = all_moves
                    .iter()
                    .filter(|t| G::parse_move(t).is_ok_and(|m| !pos.is_legal(m)))
                    .collect();
                match taken.is_empty() {
                    true => continue,
                    false => out.push_str(taken[rng.random_range(0..taken.len())]),
                }
            }
            InputKind::Garbage => out.push_str(GARBAGE[rng.random_range(0..GARBAGE.len())]),
            InputKind::Empty => {}
        }
        out.push('\n');
    }
    (out, false)
}

/// A move text made out of range: its last digit becomes 9, or (for games
/// whose moves start with a board letter) the letter moves past the last board.
fn out_of_range(base: &str, opts: &GameOptions, letter: bool) -> String {
    let bytes = base.as_bytes();
    if letter && bytes.first().is_some_and(u8::is_ascii_uppercase) && opts.boards < 26 {
        let past = (b'A' + opts.boards) as char;
        return format!("{past}{}", &base[1..]);
    }
    match base.char_indices().rev().find(|(_, c)| c.is_ascii_digit()) {
        Some((i, _)) => format!("{}9{}", &base[..i], &base[i + 1..]),
        None => format!("{base}9"),
    }
}

/// The reference transcript: what `referee play` prints for this input.
pub(crate) fn reference_output<G: Game>(opts: &GameOptions, input: &str) -> Vec<u8> {
    let mut players: [Player<G>; 2] = [Player::Human, Player::Human];
    let mut out = Vec::new();
    let mut inp = input.as_bytes();
    // Writing to a Vec cannot fail, and the early-end-of-input message goes
    // to stderr, which is not compared.
    let _ = console_game(G::start(opts), &mut players, &mut inp, &mut out);
    out
}

/// What a student's program did with one input.
#[derive(Clone, Debug)]
pub(crate) struct ProgramRun {
    /// Its standard output (cut after 64 KiB: a transcript is a few KiB,
    /// so more is a runaway program).
    pub stdout: Vec<u8>,
    /// The last part of its standard error.
    pub stderr_tail: String,
    /// How it ended: `exited with code 0`, `killed by signal SIGSEGV`,
    /// `killed after 10.0 s`.
    pub status: String,
}

/// Runs `command` (in `cwd`) with `input` on stdin, under the same
/// supervision as every bot ([`BotProcess`]: its own process group, a clean
/// environment, limits), and kills what is left of it after `timeout`.
#[cfg(test)]
pub(crate) fn run_program(
    command: &[String],
    cwd: Option<&std::path::Path>,
    input: &str,
    timeout: Duration,
    sandbox: SandboxMode,
    sandbox_read: &[std::path::PathBuf],
) -> std::io::Result<ProgramRun> {
    let mut spec =
        ExternalSpec::from_command_line("program").map_err(|e| std::io::Error::other(e.0))?;
    spec.command = command.to_vec();
    spec.cwd = cwd.map(std::path::Path::to_path_buf);
    spec.sandbox = sandbox;
    spec.sandbox_read = sandbox_read.to_vec();
    run_spec(&spec, input, timeout)
}

/// Runs the program of `spec` with `input` on stdin, then closes its stdin
/// (a program that reads on sees the end of its input at once, as at a
/// terminal after Ctrl-D), and kills what is left of it after `timeout`.
pub(crate) fn run_spec(
    spec: &ExternalSpec,
    input: &str,
    timeout: Duration,
) -> std::io::Result<ProgramRun> {
    let deadline = Instant::now() + timeout;
    let mut p = BotProcess::spawn(spec, 0)?;
    // A program that stops reading early is not an error here: its output
    // is what is judged.
    let _ = p.send(input.as_bytes(), deadline);
    p.close_stdin();
    // Everything it writes until it closes its output (or the deadline).
    let (stdout, timed_out) = match p.read_until(|_| None, deadline)? {
        Reply::Closed(out) => (out, false),
        Reply::Timeout(out) => (out, true),
        Reply::TooLong(out) | Reply::Line(out, _) => (out, false),
    };
    p.send_end(b"", deadline.saturating_duration_since(Instant::now()));
    let exited = p.wait_exit();
    let status = if timed_out || !exited {
        format!("killed after {:.1} s", timeout.as_secs_f64())
    } else {
        p.exit_status().unwrap_or_else(|| "unknown exit".into())
    };
    Ok(ProgramRun {
        stdout,
        stderr_tail: p.stderr_tail(2000),
        status,
    })
}

/// One generated game whose transcripts differ.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// 1-based number of the generated game.
    pub game: usize,
    /// The input both programs read.
    pub input: String,
    /// Unified diff from the reference's output to the program's, with
    /// whitespace made visible.
    pub diff: String,
    /// Whether the transcripts differ in whitespace only.
    pub whitespace_only: bool,
    /// How the program ended.
    pub status: String,
    /// The program's stderr tail (a traceback, usually).
    pub stderr_tail: String,
}

/// The result of a check.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Games generated and run.
    pub games: usize,
    /// Games whose transcripts matched byte for byte.
    pub matched: usize,
    /// Games whose transcripts differ in whitespace only.
    pub whitespace_only: usize,
    /// Games whose transcripts differ (whitespace-only ones included).
    pub mismatches: Vec<Mismatch>,
}

impl CheckReport {
    /// Games that pass: byte for byte, and with `accept_whitespace` those
    /// that differ in whitespace only.
    pub fn passed(&self, accept_whitespace: bool) -> usize {
        self.matched
            + if accept_whitespace {
                self.whitespace_only
            } else {
                0
            }
    }
}

/// A unified diff of two transcripts (expected `-`, the program's `+`),
/// whitespace made visible (`·` a trailing space, `⏎` a missing newline).
pub(crate) fn transcript_diff(reference: &[u8], program: &[u8]) -> String {
    let a = String::from_utf8_lossy(reference);
    let b = String::from_utf8_lossy(program);
    crate::bot::console::visible_diff(&a, &b, 60)
        .replacen("--- expected", "--- expected (referee play)", 1)
        .replacen("+++ printed", "+++ program", 1)
}

/// Whether two transcripts differ in whitespace only (spaces, tabs, blank
/// lines, line ends).
pub(crate) fn whitespace_only(reference: &[u8], program: &[u8]) -> bool {
    let strip = |t: &[u8]| -> Vec<u8> {
        t.iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect()
    };
    strip(reference) == strip(program)
}

/// Runs `games` generated games through `command` and the reference.
pub fn check_console<G: Game>(
    command: &[String],
    opts: &GameOptions,
    games: usize,
    master_seed: u64,
    timeout: Duration,
    sandbox: SandboxMode,
    sandbox_read: &[std::path::PathBuf],
) -> std::io::Result<CheckReport> {
    let mut spec =
        ExternalSpec::from_command_line("program").map_err(|e| std::io::Error::other(e.0))?;
    spec.command = command.to_vec();
    spec.sandbox = sandbox;
    spec.sandbox_read = sandbox_read.to_vec();
    check_program::<G>(&spec, opts, games, master_seed, timeout, || {})
}

/// Runs `games` generated games through the program of `spec` and the
/// reference, calling `on_game` after each.
pub fn check_program<G: Game>(
    spec: &ExternalSpec,
    opts: &GameOptions,
    games: usize,
    master_seed: u64,
    timeout: Duration,
    on_game: impl Fn(),
) -> std::io::Result<CheckReport> {
    let mut report = CheckReport::default();
    for g in 0..games {
        let (input, _) = generate_input::<G>(opts, seed::derive(master_seed, &[g as u64]));
        let expected = reference_output::<G>(opts, &input);
        let run = run_spec(spec, &input, timeout)?;
        report.games += 1;
        if run.stdout == expected {
            report.matched += 1;
        } else {
            let ws = whitespace_only(&expected, &run.stdout);
            if ws {
                report.whitespace_only += 1;
            }
            report.mismatches.push(Mismatch {
                game: g + 1,
                input,
                diff: transcript_diff(&expected, &run.stdout),
                whitespace_only: ws,
                status: run.status,
                stderr_tail: run.stderr_tail,
            });
        }
        on_game();
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    #[test]
    fn inputs_mix_every_kind_and_are_seeded() {
        let opts = GameOptions::default();
        let (a, _) = generate_input::<TicTacToe>(&opts, 7);
        let (b, _) = generate_input::<TicTacToe>(&opts, 7);
        assert_eq!(a, b);
        let mut all = String::new();
        let mut early = 0;
        for s in 0..200 {
            let (t, e) = generate_input::<TicTacToe>(&opts, s);
            all.push_str(&t);
            early += e as usize;
        }
        assert!(all.contains("\n\n"), "an empty line");
        assert!(all.lines().any(|l| l == "9"), "an out-of-range cell");
        assert!(all.lines().any(|l| GARBAGE.contains(&l)), "garbage");
        assert!(early > 10 && early < 100, "{early} early ends");
    }

    #[test]
    fn out_of_range_moves_are_not_moves() {
        let opts = GameOptions {
            boards: 3,
            ..Default::default()
        };
        assert_eq!(out_of_range("A6", &opts, false), "A9");
        assert_eq!(out_of_range("A6", &opts, true), "D6");
        assert_eq!(out_of_range("4", &opts, true), "9");
        assert_eq!(out_of_range("4 4", &opts, false), "4 9");
    }

    #[test]
    fn reference_matches_itself_and_diff_shows_an_extra_space() {
        let opts = GameOptions::default();
        let (input, _) = generate_input::<TicTacToe>(&opts, 3);
        let out = reference_output::<TicTacToe>(&opts, &input);
        assert!(!out.is_empty());
        let mut bad = out.clone();
        bad.insert(1, b' ');
        let d = transcript_diff(&out, &bad);
        assert!(d.contains("+++ program") && d.contains("\n+"), "{d}");
        assert!(whitespace_only(&out, &bad));
        let mut worse = out.clone();
        worse[0] = b'#';
        assert!(!whitespace_only(&out, &worse));
    }

    #[test]
    fn a_program_is_run_with_a_timeout() {
        let cmd: Vec<String> = ["sh", "-c", "cat; sleep 30"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = Instant::now();
        let r = run_program(
            &cmd,
            None,
            "abc\n",
            Duration::from_millis(300),
            SandboxMode::Off,
            &[],
        )
        .unwrap();
        assert_eq!(r.stdout, b"abc\n");
        assert!(r.status.starts_with("killed"), "{}", r.status);
        // A program that reads to the end of its input ends at once: stdin
        // is closed after the last line.
        let cmd: Vec<String> = ["sh", "-c", "cat; echo done"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let r = run_program(
            &cmd,
            None,
            "abc\n",
            Duration::from_secs(30),
            SandboxMode::Off,
            &[],
        )
        .unwrap();
        assert_eq!(r.stdout, b"abc\ndone\n");
        assert_eq!(r.status, "exited with code 0");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
