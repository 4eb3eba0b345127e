//! Harness throughput: a round-robin of the built-in random and greedy bots
//! on tic-tac-toe, written to games.jsonl, at 1 and 2 jobs. Prints games per
//! wall-clock second and games per CPU second of the whole process (every
//! thread: workers, writer, standings), the "per core" figure; the target is
//! at least 200,000 games per core-second. CPU time is the figure to trust on
//! a shared machine, where wall time also measures the other tenants.
//!
//! `cargo bench --bench tournament` (optionally `-- GAMES`, default 400000).

use std::path::Path;
use std::time::Instant;

use referee::game::TicTacToe;
use referee::tournament::{self, RunOptions, TournamentFile};

fn main() {
    let games: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(400_000);
    let text = format!(
        "game = \"tictactoe\"\ngames_per_pairing = {games}\nseed = 1\n\
         [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n"
    );
    let t = TournamentFile::parse(Path::new("bench.toml"), text, None)
        .expect("bench tournament parses")
        .resolve::<TicTacToe>()
        .expect("built-in bots resolve");
    for jobs in [1, 2] {
        let dir =
            std::env::temp_dir().join(format!("referee-bench-tour-{}-{jobs}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = RunOptions {
            jobs,
            out: Some(dir.clone()),
            ..RunOptions::default()
        };
        let cpu0 = cpu_seconds();
        let start = Instant::now();
        let r = tournament::run::<TicTacToe>(&t, &opts, &referee::output::Silent)
            .expect("tournament runs");
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let bytes = std::fs::metadata(dir.join("games.jsonl")).map_or(0, |m| m.len());
        assert_eq!(r.played, games);
        println!(
            "tournament/tictactoe random vs greedy, --out, jobs {jobs}: {games} games in {secs:.3} s \
             = {:.0} games/s wall; {cpu:.3} s CPU = {:.0} games per core-second ({:.1} MB of JSONL)",
            games as f64 / secs,
            games as f64 / cpu,
            bytes as f64 / 1e6
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// User + system CPU time of this process so far, in seconds.
fn cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage on self");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    t(u.user_time()) + t(u.system_time())
}
