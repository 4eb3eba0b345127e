//! The `referee` command: all logic lives in the library's `cli` module.
fn main() -> std::process::ExitCode {
    referee::cli::main()
}
