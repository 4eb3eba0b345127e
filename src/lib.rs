//! referee: a bot tournament harness for the tic-tac-toe family (classic
//! tic-tac-toe, Notakto, Ultimate tic-tac-toe).
//!
//! The modules are layers, and each uses only the layers below it (a test,
//! `tests/it/layers.rs`, fails on any dependency circle): [`escape`],
//! [`game`] and [`seed`] (escaping for where text is shown, rules, derived
//! randomness) -> [`protocol`] (the bot protocol,
//! and a forfeit as data) -> [`bot`] (players) -> [`play`] (one game into a
//! [`play::record::GameRecord`], schedules, the run folder, standings and
//! statistics) -> [`tournament`] -> [`matches`](mod@matches); [`check`], [`console`],
//! [`net`] and [`report`] use the play layer too; [`grade`] is on top.
//! ARCHITECTURE.md (next to the README) is the map: the modules, the main
//! flows and the rules that hold everywhere.
//!
//! A position's text is the bot protocol's wire format; parse one and list
//! its moves:
//!
//! ```
//! use referee::game::{Game, TicTacToe};
//!
//! let pos: TicTacToe = "XO.......".parse()?;
//! let moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
//! assert_eq!(moves, ["2", "3", "4", "5", "6", "7", "8"]);
//! # Ok::<(), referee::game::ParseError>(())
//! ```
//!
//! Resolve bots as a user names them and play one game into a record:
//!
//! ```
//! use referee::bot::BotSpec;
//! use referee::game::{Game, GameOptions, Notakto};
//! use referee::play::{play_game, GameSetup};
//!
//! let optimal = BotSpec::resolve::<Notakto>("optimal")?;
//! let random = BotSpec::resolve::<Notakto>("random")?;
//! let time = Default::default();
//! let mut a = optimal.instantiate::<Notakto>(1, &time, None)?;
//! let mut b = random.instantiate::<Notakto>(2, &time, None)?;
//! let setup = GameSetup::new(0, 7, Notakto::start(&GameOptions { boards: 3, ..Default::default() }));
//! let record = play_game(&setup, [&mut a, &mut b], ["optimal".into(), "random".into()]);
//! // With 3 boards the first player wins with perfect play.
//! assert_eq!(record.winner, Some(referee::game::Seat::One));
//! # Ok::<(), referee::bot::BotError>(())
//! ```
//!
//! An unknown name is a clear error, before any game is played:
//!
//! ```
//! use referee::bot::BotSpec;
//! use referee::game::Uttt;
//!
//! let e = BotSpec::resolve::<Uttt>("optimal:iters=0").unwrap_err();
//! assert!(e.to_string().contains("'iters' must be at least 1"));
//! ```
//!
//! Run a tiny tournament from its TOML text:
//!
//! ```
//! use referee::game::TicTacToe;
//! use referee::play::{RunOptions, Silent};
//! use referee::tournament::{self, TournamentFile};
//!
//! let text = r#"
//!     game = "tictactoe"
//!     games_per_pairing = 4
//!     [[bots]]
//!     name = "optimal"
//!     builtin = "optimal"
//!     [[bots]]
//!     name = "random"
//!     builtin = "random"
//! "#;
//! let file = TournamentFile::parse("t.toml".as_ref(), text.into(), Some(1))?;
//! let t = file.resolve::<TicTacToe>()?;
//! let run = tournament::run::<TicTacToe>(&t, &RunOptions::default(), &Silent)?;
//! let best = run.summary.standings.ranked()[0].name.clone();
//! assert_eq!(best, "optimal");
//! # Ok::<(), anyhow::Error>(())
//! ```
#![deny(missing_docs)]
// Forfeits are returned in `Err` and carry diagnostics; they happen at most
// once per game, so their size costs nothing that matters.
#![allow(clippy::result_large_err)]

pub mod bot;
pub mod check;
pub mod console;
pub mod escape;
pub mod game;
pub mod grade;
pub mod league;
pub mod matches;
pub mod net;
pub mod play;
pub mod protocol;
pub mod report;
pub mod seed;
pub mod tournament;

// benches/uttt_strength.rs reads standings and statistics by their old
// paths; it moves to the lab crate, and this line goes with it.
