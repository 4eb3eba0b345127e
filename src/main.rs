//! The `referee` command: a thin layer over the library. Each command
//! turns its arguments into a library configuration, makes one library
//! call and renders the result (`cli`).
mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
