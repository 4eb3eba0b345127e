//! The output folder: `games.jsonl` appended one complete line per finished
//! game, `tournament.toml` (the configuration with its seed) so that resume
//! and merge can check they continue the same tournament.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::record::GameRecord;

/// The file of finished games in an output folder.
pub const GAMES: &str = "games.jsonl";
/// The configuration copy in an output folder.
pub const CONFIG: &str = "tournament.toml";

/// Reads the games of `DIR/games.jsonl`. A last line without its newline
/// (the process was killed while writing it) is ignored, and with
/// `truncate` cut off the file so appends start on a clean line; any other
/// bad line is an error naming it.
pub fn read_games(dir: &Path, truncate: bool) -> anyhow::Result<Vec<GameRecord>> {
    let path = dir.join(GAMES);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("{}", path.display())),
    };
    let mut reader = BufReader::new(file);
    let mut records = Vec::new();
    let mut good_len = 0u64;
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("{}", path.display()))?;
        if n == 0 {
            break;
        }
        number += 1;
        if line.last() != Some(&b'\n') {
            // Torn: the writer died mid-line. Only the last line can be.
            break;
        }
        let rec: GameRecord = serde_json::from_slice(&line)
            .with_context(|| format!("{}:{number}: not a game record", path.display()))?;
        records.push(rec);
        good_len += n as u64;
    }
    if truncate {
        let len = std::fs::metadata(&path)?.len();
        if len != good_len {
            let f = OpenOptions::new().write(true).open(&path)?;
            f.set_len(good_len)
                .with_context(|| format!("cutting the torn last line of {}", path.display()))?;
        }
    }
    Ok(records)
}

/// Appends finished games to `games.jsonl`, each the moment it finishes:
/// the worker thread that played a game hands its line to the kernel with
/// one `write` on an append-mode file, before it starts the next game. A
/// kill, even `kill -9`, therefore loses no finished game (at most the line
/// being written at that instant is torn, and readers drop a torn last
/// line). Shared by reference between the workers: appends of whole lines
/// to a regular file do not interleave.
pub struct GamesWriter {
    file: File,
    path: PathBuf,
}

impl GamesWriter {
    /// Opens `DIR/games.jsonl` for appending.
    pub fn open(dir: &Path) -> anyhow::Result<GamesWriter> {
        let path = dir.join(GAMES);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.seek(SeekFrom::End(0))?;
        Ok(GamesWriter { file, path })
    }

    /// Appends one game: `line` is its JSON without the newline, which is
    /// added here so that the line goes out in one `write`.
    pub fn append(&self, line: &mut Vec<u8>) -> anyhow::Result<()> {
        line.push(b'\n');
        let result = (&self.file).write_all(line);
        line.pop();
        result.with_context(|| format!("writing {}", self.path.display()))
    }
}

/// Prepares `dir` for a run: creates it, refuses to overwrite games without
/// `resume`, and checks a resumed folder holds the same tournament. Returns
/// the games already there.
pub fn prepare(dir: &Path, config: &toml::Table, resume: bool) -> anyhow::Result<Vec<GameRecord>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let games = dir.join(GAMES);
    let has_games = std::fs::metadata(&games)
        .map(|m| m.len() > 0)
        .unwrap_or(false);
    if has_games && !resume {
        bail!(
            "{} already holds games; pass --resume to finish that tournament, or choose another --out",
            games.display()
        );
    }
    let cfg_path = dir.join(CONFIG);
    if resume && cfg_path.exists() {
        let old = read_config(dir)?;
        if &old != config {
            bail!(
                "{} is a different tournament (file or seed differ); resume with the same file and --seed",
                cfg_path.display()
            );
        }
    } else if resume && has_games {
        bail!(
            "{} is missing, so the games in {} cannot be checked against this tournament",
            cfg_path.display(),
            games.display()
        );
    }
    let text = toml::to_string(config).context("writing the configuration")?;
    std::fs::write(&cfg_path, text).with_context(|| format!("writing {}", cfg_path.display()))?;
    read_games(dir, true)
}

/// Reads the configuration copy of an output folder.
pub fn read_config(dir: &Path) -> anyhow::Result<toml::Table> {
    let p = dir.join(CONFIG);
    let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
    toml::from_str(&text).with_context(|| format!("{}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Termination;

    fn rec(id: u64) -> GameRecord {
        GameRecord {
            id,
            game: "tictactoe".into(),
            players: ["a".into(), "b".into()],
            seed: id,
            opening: vec![],
            start: ".........".into(),
            moves: vec!["a1".into()],
            times_us: vec![3],
            winner: None,
            termination: Termination::Normal,
            forfeit: None,
            final_position: String::new(),
            client: None,
        }
    }

    #[test]
    fn torn_last_line_is_dropped_and_cut() {
        let dir = std::env::temp_dir().join(format!("referee-results-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cfg: toml::Table = toml::from_str("seed = 1").unwrap();
        assert!(prepare(&dir, &cfg, false).unwrap().is_empty());
        let w = GamesWriter::open(&dir).unwrap();
        for id in 0..3 {
            w.append(&mut serde_json::to_vec(&rec(id)).unwrap())
                .unwrap();
        }
        w.append(&mut b"{\"id\": 3, \"gam".to_vec()).unwrap();
        // The torn line got a newline from `append`; cut it to simulate a kill.
        let p = dir.join(GAMES);
        let len = std::fs::metadata(&p).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(len - 1)
            .unwrap();
        let e = prepare(&dir, &cfg, false).unwrap_err().to_string();
        assert!(e.contains("--resume"), "{e}");
        let other: toml::Table = toml::from_str("seed = 2").unwrap();
        assert!(prepare(&dir, &other, true).is_err());
        let got = prepare(&dir, &cfg, true).unwrap();
        assert_eq!(got, (0..3).map(rec).collect::<Vec<_>>());
        let w = GamesWriter::open(&dir).unwrap();
        w.append(&mut serde_json::to_vec(&rec(3)).unwrap()).unwrap();
        assert_eq!(read_games(&dir, false).unwrap().len(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
