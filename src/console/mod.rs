//! Students' console programs as they are (the Notakto course assignment): checking a
//! human-vs-human game program against referee's own `play` transcript.

pub mod check;
pub mod transcript;
