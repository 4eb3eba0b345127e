//! `referee check-console`: a student's console game program against
//! referee's own `play` transcript, byte for byte.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;

use super::GameArgs;
use referee::console::check::{check_console, CheckReport};
use referee::with_game;

/// Arguments of `referee check-console`.
#[derive(Args, Debug)]
pub struct CheckConsoleArgs {
    #[command(flatten)]
    game: GameArgs,
    /// The program to check, as a command line (`"python3 notakto.py"`).
    command: String,
    /// Number of generated games.
    #[arg(long, default_value_t = 50)]
    games: usize,
    /// Seed of the generated inputs: same seed, same inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seconds one run of the program may take before it is killed.
    #[arg(long, default_value_t = 10)]
    timeout_s: u64,
    /// Accept transcripts that differ from the reference in whitespace
    /// only (trailing spaces, blank lines, spacing): they are still
    /// counted and shown, but do not fail the check.
    #[arg(long)]
    accept_whitespace: bool,
    /// Most differences printed in full (all are counted).
    #[arg(long, default_value_t = 3)]
    show: usize,
    /// Run the program in the sandbox (docs/sandbox.md): `on` or `best-effort`.
    #[arg(long, num_args = 0..=1, default_missing_value = "on", value_name = "MODE")]
    sandbox: Option<referee::bot::manifest::SandboxMode>,
    /// With --sandbox: a folder the program may read besides its own and
    /// its interpreter's (repeatable).
    #[arg(long, value_name = "DIR", requires = "sandbox")]
    sandbox_read: Vec<std::path::PathBuf>,
}

/// Runs the check: exit 0 only when every transcript matches.
pub fn run(args: CheckConsoleArgs) -> anyhow::Result<ExitCode> {
    let command = shell_words::split(&args.command)
        .with_context(|| format!("command '{}' cannot be split into words", args.command))?;
    if command.is_empty() {
        bail!("the command is empty");
    }
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let opts = args.game.options();
    let started = Instant::now();
    let timeout = Duration::from_secs(args.timeout_s.max(1));
    let kind = args.game.game;
    let sandbox = args.sandbox.unwrap_or_default();
    for lack in referee::bot::spec::sandbox_check(sandbox).map_err(anyhow::Error::msg)? {
        super::tell(&format!("warning: best-effort sandbox without {lack}"));
    }
    let report: CheckReport = with_game!(kind, G => check_console::<G>(
        &command, &opts, args.games, args.seed, timeout, sandbox, &args.sandbox_read,
    ))
    .with_context(|| format!("cannot run '{}'", args.command))?;
    print_report(&args, &report, started.elapsed());
    Ok(if report.passed(args.accept_whitespace) == report.games {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_report(args: &CheckConsoleArgs, r: &CheckReport, took: Duration) {
    // Real differences first: they are what a student must fix.
    let mut shown: Vec<_> = r.mismatches.iter().collect();
    shown.sort_by_key(|m| (m.whitespace_only, m.game));
    for m in shown.into_iter().take(args.show) {
        let what = if m.whitespace_only {
            "transcript differs in whitespace only"
        } else {
            "transcript differs"
        };
        outln!("== game {}: {what} ({})", m.game, m.status);
        outln!("-- input (one line each, as typed):");
        for line in m.input.lines() {
            outln!("   {line:?}");
        }
        outln!("-- diff (· a trailing space, → a tab, ⏎ a missing newline):");
        outln!("{}", m.diff);
        if !m.stderr_tail.trim().is_empty() {
            outln!("-- program stderr (tail):");
            for line in m.stderr_tail.lines() {
                outln!("   {line}");
            }
        }
        outln!();
    }
    if r.mismatches.len() > args.show {
        outln!(
            "({} more differing games not shown; --show N prints more)",
            r.mismatches.len() - args.show
        );
    }
    let verdict = if r.passed(args.accept_whitespace) == r.games {
        "PASS"
    } else {
        "FAIL"
    };
    let real = r.mismatches.len() - r.whitespace_only;
    let whitespace = if r.whitespace_only == 0 {
        String::new()
    } else if args.accept_whitespace {
        format!(
            ", {} more differ in whitespace only (accepted)",
            r.whitespace_only
        )
    } else {
        format!(
            ", {} differ in whitespace only (--accept-whitespace accepts them), {real} differ \
             otherwise",
            r.whitespace_only
        )
    };
    outln!(
        "{verdict}: {}/{} transcripts match byte for byte{whitespace} ({} {}, seed {}, {:.1} s)",
        r.matched,
        r.games,
        args.game.game,
        game_note(args),
        args.seed,
        took.as_secs_f64()
    );
}

fn game_note(args: &CheckConsoleArgs) -> String {
    let opts = args.game.options();
    referee::with_game!(args.game.game, G => <G as referee::game::Game>::describe_options(&opts))
}
