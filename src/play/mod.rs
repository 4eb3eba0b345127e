//! The play layer: everything that turns bots into finished games, for
//! every kind of run (tournaments, matches, grading, the network server).
//!
//! [`referee`] plays one game between two bots into a [`record::GameRecord`];
//! [`schedule`] says which games a run plays (seats, seeds, openings from
//! [`openings`]); [`runner`] plays them on worker threads; the series loop
//! streams them through the run folder ([`journal`]) and counts them into
//! [`standings`] ([`stats`] rates them); an [`Observer`] hears how far a run
//! is, and [`interrupt`] stops it cleanly. [`text`] holds the text forms
//! every writer above shares (CSV fields, durations, points, tables).
//!
//! This layer uses [`crate::game`], [`crate::bot`], [`crate::protocol`] and
//! [`crate::seed`] below it, and nothing above it.

pub mod interrupt;
pub mod journal;
pub mod observer;
pub mod openings;
pub mod record;
pub mod referee;
pub mod runner;
pub mod schedule;
pub(crate) mod series;
pub mod standings;
pub mod stats;
pub mod text;

pub use observer::{Log, Observer, Silent};
pub use referee::{play_game, GameSetup};
pub use series::RunOptions;

/// A setting whose value cannot be used, by the setting's name (`rounds`,
/// `builtins`, ...) and the problem: the command line words it with its
/// option (`--rounds must be at least 1`), a file with its key.
#[derive(Debug, thiserror::Error)]
#[error("{setting}: {problem}")]
pub struct SettingError {
    /// The setting's name, as the command line's option without its dashes.
    pub setting: &'static str,
    /// What is wrong with its value, to follow the option's name.
    pub problem: String,
}

impl SettingError {
    /// Setting `setting` cannot be used: `problem`.
    pub fn new(setting: &'static str, problem: impl Into<String>) -> Self {
        SettingError {
            setting,
            problem: problem.into(),
        }
    }
}
