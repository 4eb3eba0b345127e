//! `referee-lab`: the UTTT engine's lab. The tools that made and measured
//! referee's `optimal` for UTTT, kept out of the library: self-play data
//! for the networks and their training (`data`, `train`), and the strength
//! bench against a frozen baseline (`strength`). What was learned, and the
//! commands of each round, are in NOTEBOOK.md beside this crate. Run with
//! `cargo run --release -p referee-lab -- <command> --help`.

mod baseline;
mod net_tools;
mod strength;
mod today;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "referee-lab",
    about = "The UTTT engine's lab: data, training, strength"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// `optimal` against the frozen baseline, itself or plain UCT, in
    /// paired games at fixed iterations (or a time budget).
    Strength(strength::StrengthArgs),
    /// Self-play games of `optimal` as training data for the networks.
    Data(net_tools::DataArgs),
    /// Trains a value or policy network on data of `data`.
    Train(net_tools::TrainArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Strength(a) => strength::run(a),
        Command::Data(a) => net_tools::data(a),
        Command::Train(a) => net_tools::train_network(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("referee-lab: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
