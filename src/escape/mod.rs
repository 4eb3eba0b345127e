//! Escaping for where text is shown: one module per target.
//!
//! Everything a bot or a student controls (a reply, a stderr tail, a file
//! or folder name, a student's name, a manifest's name or description, a
//! network client's name) is data. It is escaped for the place it is
//! shown, by the one module for that place, and nowhere by hand:
//!
//! | shown in | module | what survives |
//! |---|---|---|
//! | a terminal, a log, plain text | [`terminal`] | printable text; control bytes, ESC/OSC sequences, C1 controls and bidi overrides as visible `\x1b`, `\u{202e}` |
//! | an HTML page | [`html`] | text and quoted attribute values: `& < > " '` as entities; JSON inside `<script>` with `< > &` as `\u` escapes |
//! | Markdown (feedback pages, Gradescope and the other graders) | [`markdown`] | no link, image, emphasis, heading, table cell break or raw HTML: text with every ASCII punctuation backslash-escaped, code spans and blocks fenced longer than any backtick run inside |
//! | CSV | [`csv`] | one record per line (written by the `csv` crate), no cell a spreadsheet runs as a formula |
//! | JSON | [`json`] | serde's escaping, plus `\u` escapes for the characters a terminal acts on, for JSON a person reads on a terminal |
//!
//! Each target's escaping includes the terminal's: what a browser, a
//! Markdown renderer or a spreadsheet shows, a person may also `cat`.
//! This module is the lowest layer with [`crate::game`] and
//! [`crate::seed`]: every writer can use it.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;
