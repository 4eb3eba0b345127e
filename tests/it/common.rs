//! Helpers shared by the integration tests.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `referee` binary under test.
pub fn referee() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_referee"));
    c.current_dir(root());
    c
}

/// The repository root (where `bots/` and `tournaments/` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `referee args...` with `stdin` as its input and returns its output.
pub fn run_with_input(args: &[&str], stdin: &str) -> Output {
    let mut child = referee()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("referee starts");
    {
        let mut sin = child.stdin.take().expect("stdin is piped");
        // A write error only means the program stopped reading early.
        let _ = sin.write_all(stdin.as_bytes());
    }
    child.wait_with_output().expect("referee runs")
}

/// Runs `referee args...` with no input.
pub fn run(args: &[&str]) -> Output {
    run_with_input(args, "")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
