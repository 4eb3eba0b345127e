//! `referee report`: one self-contained HTML page from a run directory.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Arguments of `referee report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run directory (the `--out DIR` of a tournament, grading run or
    /// server) holding games.jsonl.
    pub dir: PathBuf,
    /// Where to write the page (default DIR/report.html).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Writes the report and says where.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let out = args.out.unwrap_or_else(|| args.dir.join("report.html"));
    let n = referee::report::write_report(&args.dir, &out, &referee::output::Progress::new(false))?;
    println!("wrote {} ({n} games)", out.display());
    Ok(ExitCode::SUCCESS)
}
