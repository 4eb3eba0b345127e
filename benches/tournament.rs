//! Harness throughput: a round-robin of the built-in random and greedy bots
//! on tic-tac-toe, written to games.jsonl, at 1 and 2 jobs. Prints games per
//! second (the target is >= 200,000 per core).
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
        let start = Instant::now();
        let r = tournament::run::<TicTacToe>(&t, &opts).expect("tournament runs");
        let secs = start.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(dir.join("games.jsonl")).map_or(0, |m| m.len());
        assert_eq!(r.played, games);
        println!(
            "tournament/tictactoe random vs greedy, --out, jobs {jobs}: {games} games in {secs:.3} s = {:.0} games/s ({:.1} MB of JSONL)",
            games as f64 / secs,
            bytes as f64 / 1e6
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
