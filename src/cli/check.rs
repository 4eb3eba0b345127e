//! `referee check <game> <BOT>`: a compliance self-test for an external bot,
//! to run before submitting it (the checks are [`referee::check`]).

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;

use super::{GameArgs, TimeArgs};
use referee::bot::{BotSpec, BuiltinBots};
use referee::check::run_checks;
use referee::play::text::format_us;
use referee::protocol::BotProtocol;
use referee::with_game;

/// Arguments of `referee check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    game: GameArgs,
    /// The bot: a manifest (.toml) or a command line.
    bot: String,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Runs the checks and prints the report.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let kind = args.game.game;
    with_game!(kind, G => check::<G>(&args))
}

fn stats(label: &str, v: &[u64]) -> String {
    if v.is_empty() {
        return format!("{label}: no measurements");
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let med = s[s.len() / 2];
    format!(
        "{label}: min {}, median {}, max {} over {} moves",
        format_us(s[0] as f64),
        format_us(med as f64),
        format_us(s[s.len() - 1] as f64),
        s.len()
    )
}

fn check<G: BuiltinBots>(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let mut spec = BotSpec::resolve::<G>(&args.bot)?;
    args.process.apply(&mut spec, G::KIND)?;
    let spec = match spec {
        BotSpec::External(e) => e,
        BotSpec::Builtin(b) => bail!("'{b}' is a built-in bot; check tests external bots"),
    };
    let time = args.time.control();
    outln!(
        "checking {} for {} (limit {} ms per move, +{} ms start-up on the first turn)",
        spec.name,
        G::KIND,
        time.move_ms,
        time.startup_ms
    );
    let report = run_checks::<G>(&spec, &args.game.options(), &time)?;
    outln!(
        "protocol: {}",
        match (report.protocol, report.detected) {
            (BotProtocol::V1, false) => "v1".to_string(),
            (BotProtocol::V1, true) => "v1 (the bot does not say; found by trying)".to_string(),
            (BotProtocol::CodinGame, detected) => format!(
                "codingame ({}; CodinGame's bots play whole games from the empty board, so \
                 it plays whole games instead of the sample positions)",
                if detected {
                    "the bot does not say; found by trying: give it `--protocol codingame` or \
                     `protocol = \"codingame\"` in its manifest"
                } else {
                    "as it says"
                }
            ),
        }
    );
    for r in &report.results {
        outln!(
            "{}  {}: {}",
            if r.pass { "PASS" } else { "FAIL" },
            r.name,
            r.detail
        );
    }
    let startups: Vec<String> = report
        .startup_us
        .iter()
        .map(|&u| format_us(u as f64))
        .collect();
    outln!(
        "start-up (process start to first reply): {}",
        if startups.is_empty() {
            "none measured".to_string()
        } else {
            startups.join(", ")
        }
    );
    outln!("{}", stats("move time", &report.move_us));
    let passed = report.results.iter().filter(|r| r.pass).count();
    outln!("{passed} of {} checks passed", report.results.len());
    Ok(if report.all_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
