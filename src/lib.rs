//! referee: a bot tournament harness for the tic-tac-toe family (classic
//! tic-tac-toe, Notakto, Ultimate tic-tac-toe).
//!
//! Data flows one way: [`game`] (rules) -> [`bot`] (players) -> [`referee`]
//! (plays one game into a [`record::GameRecord`]) -> [`standings`] ->
//! [`output`] and [`report`]. ARCHITECTURE.md (next to the README) is the
//! map: the modules, the main flows and the rules that hold everywhere.
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
//! use referee::referee::{play_game, GameSetup};
//!
//! let optimal = BotSpec::resolve::<Notakto>("optimal")?;
//! let random = BotSpec::resolve::<Notakto>("random")?;
//! let time = Default::default();
//! let mut a = optimal.instantiate::<Notakto>(1, &time, None)?;
//! let mut b = random.instantiate::<Notakto>(2, &time, None)?;
//! let setup = GameSetup::new(0, 7, Notakto::start(&GameOptions { boards: 3 }));
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
//! use referee::output::Silent;
//! use referee::tournament::{self, RunOptions, TournamentFile};
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
pub mod game;
pub mod grade;
pub mod head_to_head;
pub mod interrupt;
pub mod journal;
pub mod judge;
pub mod net;
pub mod openings;
pub mod output;
pub mod protocol;
pub mod record;
pub mod referee;
pub mod report;
pub mod runner;
pub mod schedule;
pub mod seed;
mod series;
pub mod standings;
pub mod stats;
pub mod swiss;
pub mod tournament;
