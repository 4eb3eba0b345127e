//! Merging the run folders of a sharded run (a tournament's or a match's)
//! into the run's results, as if it had been played in one go.
//!
//! The games are read one at a time, shard after shard (in the order of
//! their first game), and counted **in id order** by the same [`Tally`] the
//! run itself counts with, so the merged standings and statistics are the
//! unsharded run's exactly. Memory does not grow with the number of games:
//! a shard's games come nearly in id order (they were written as they
//! finished), and only those that came early wait to be counted.

use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::game::Game;
use crate::play::journal::{self, RunFolder};
use crate::play::record::fingerprint_record;
use crate::play::record::GameRecord;
use crate::play::series::{Flow, IdSet, Sequencer, Tally};
use crate::play::Observer;

/// Checks that the folders hold the same run (same configuration, same
/// bots' programs), naming the first difference; returns the configuration.
pub(crate) fn same_run(dirs: &[PathBuf]) -> anyhow::Result<toml::Table> {
    let Some(first) = dirs.first() else {
        bail!("merge needs at least one folder");
    };
    let config = journal::read_config(first)?;
    for d in &dirs[1..] {
        let diffs = journal::config_differences(&config, &journal::read_config(d)?);
        if !diffs.is_empty() {
            bail!(
                "{} and {} hold different runs: {}",
                first.display(),
                d.display(),
                diffs.join("; ")
            );
        }
        let diffs = journal::fingerprint_differences(first, d)?;
        if !diffs.is_empty() {
            bail!(
                "{} and {} were played by other bots: {}; merging would mix two programs under \
                 one name",
                first.display(),
                d.display(),
                diffs.join("; ")
            );
        }
    }
    Ok(config)
}

/// The id of the first game in `dir`'s games file, if any (to order the
/// shards): reads one line.
fn first_id(dir: &Path) -> anyhow::Result<Option<u64>> {
    /// Stops the scan after the first record.
    #[derive(Debug)]
    struct Found;
    impl std::fmt::Display for Found {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("found")
        }
    }
    impl std::error::Error for Found {}
    let mut id = None;
    let scanned = journal::scan_games(dir, |r| {
        id = Some(r.id);
        Err(Found.into())
    });
    match scanned {
        Ok(_) => Ok(id),
        Err(e) if e.downcast_ref::<Found>().is_some() => Ok(id),
        Err(e) => Err(e),
    }
}

/// Counts each game into `inner` and appends it to `out`, in id order.
struct Writing<'a> {
    inner: &'a mut dyn Tally,
    out: Option<&'a RunFolder>,
    error: Option<anyhow::Error>,
}

impl Tally for Writing<'_> {
    fn add(&mut self, rec: &GameRecord, fingerprint: u64) -> Flow {
        if self.error.is_none() {
            if let Some(out) = self.out {
                if let Err(e) = out.append(rec) {
                    self.error = Some(e);
                }
            }
        }
        self.inner.add(rec, fingerprint)
    }
}

/// What [`merge_games`] needs to know of the run.
pub(crate) struct Expected<'a> {
    /// Every id of the run.
    pub(crate) ids: Range<u64>,
    /// Checks that a game is the run's game at its id (its players, seed).
    pub(crate) check: &'a dyn Fn(&GameRecord) -> anyhow::Result<()>,
    /// The game's standard start position's text (for fingerprints).
    pub(crate) standard: String,
}

/// Reads the games of `dirs` (a run's shard folders, in any order) and
/// counts them into `tally` in id order, appending each to `out` when
/// given. Fails when a game is not the run's, appears in two folders, or is
/// missing, naming the folder.
pub(crate) fn merge_games<G: Game>(
    dirs: &[PathBuf],
    expected: &Expected,
    tally: &mut dyn Tally,
    out: Option<&RunFolder>,
    observer: &dyn Observer,
) -> anyhow::Result<()> {
    let mut order = Vec::with_capacity(dirs.len());
    for d in dirs {
        if !journal::games_path(d).is_file() {
            bail!(
                "cannot open {}: no such file (is {} the output folder of a run?)",
                journal::games_path(d).display(),
                d.display()
            );
        }
        order.push((first_id(d)?.unwrap_or(u64::MAX), d));
    }
    order.sort_by_key(|(id, _)| *id);
    let total = expected.ids.end - expected.ids.start;
    let mut writing = Writing {
        inner: tally,
        out,
        error: None,
    };
    let mut seen = IdSet::default();
    let mut count = 0u64;
    {
        let mut seq = Sequencer::new(expected.ids.start, &mut writing);
        for (_, d) in &order {
            let games = journal::scan_games(d, |r| {
                if !expected.ids.contains(&r.id) {
                    bail!(
                        "{}: game {} is beyond the run ({total} games)",
                        d.display(),
                        r.id
                    );
                }
                (expected.check)(&r).with_context(|| {
                    format!("{}: game {} does not match the run", d.display(), r.id)
                })?;
                if !seen.insert(r.id) {
                    bail!(
                        "{}: game {} is also in another folder: give each shard's folder once",
                        d.display(),
                        r.id
                    );
                }
                count += 1;
                let fp = fingerprint_record::<G>(&r, &expected.standard);
                seq.put(r, fp);
                Ok(())
            })?;
            for n in &games.notes {
                observer.note(n);
            }
        }
        if seq.next_uncounted() < expected.ids.end {
            return Err(journal::RunError::MissingGames {
                missing: (total - count) as usize,
                total,
            }
            .into());
        }
    }
    if let Some(e) = writing.error {
        return Err(e);
    }
    Ok(())
}

/// Opens `dir` as the merged run's folder (it must hold no games yet) and
/// writes the run's configuration and settings there: the shards'
/// settings (the first that has them, with its date), titled `title` when
/// given.
pub(crate) fn open_out(
    dir: &Path,
    config: &toml::Table,
    shards: &[PathBuf],
    title: Option<&str>,
) -> anyhow::Result<RunFolder> {
    let (folder, games) = RunFolder::open(dir)?;
    if !games.records.is_empty() {
        return Err(journal::RunError::MergeIntoRun {
            games: journal::games_path(dir),
        }
        .into());
    }
    folder.write_file(journal::CONFIG, toml::to_string(config)?.as_bytes())?;
    let settings = shards
        .iter()
        .find_map(|d| journal::read_settings(d).ok().flatten());
    if let Some(mut settings) = settings.or_else(|| title.map(|_| Default::default())) {
        if let Some(t) = title {
            settings.title = Some(t.to_string());
        }
        folder.write_settings(&settings)?;
    }
    Ok(folder)
}
