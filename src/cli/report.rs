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
    /// The page's title (default: the run's, or the folder's name); kept in
    /// DIR/run.json, so later reports of DIR show it too.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

/// Writes the report and says where.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let out = args.out.unwrap_or_else(|| args.dir.join("report.html"));
    let progress = crate::cli::progress::Progress::new(false);
    if let Some(t) = &args.title {
        // Only a folder holding a run is given a title.
        if referee::play::journal::games_path(&args.dir).exists() {
            referee::play::journal::save_title(&args.dir, t)?;
        }
    }
    let n = referee::report::write_report(&args.dir, &out, args.title.as_deref(), &progress)?;
    outln!("wrote {} ({n} games)", out.display());
    Ok(ExitCode::SUCCESS)
}
