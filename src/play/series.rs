//! A series: a slice of a schedule's games, played on worker threads into
//! an optional run folder ([`crate::play::journal`]) and counted **in id order**.
//! Tournaments and matches are both series; this is the one loop they run.
//!
//! The games come from [`Games`]: a fixed [`Schedule`], or a schedule that
//! grows as games are counted (a Swiss tournament pairs round *r + 1* when
//! the last game of round *r* is counted). A game not yet known makes the
//! workers wait; since counting is in id order, what becomes known is a
//! function of the games alone, like everything else counted.
//!
//! Games finish in any order, but a [`Tally`] sees them in id order: a
//! finished game waits until every game before it has finished (or was
//! read from the run folder). Whatever is computed as games are counted,
//! running statistics or the point where an SPRT stops, is therefore a
//! function of the games alone, never of `--jobs` or timing.
//!
//! Memory does not grow with the number of games: the games to play are
//! generated from the schedule as workers ask for them, the games already
//! in a run folder are read one at a time, and workers never start a game
//! more than [`WINDOW`] ids past the first game not yet counted, which
//! bounds the games waiting to be counted.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::bot::BuiltinBots;
use crate::play::journal::{self, BotPrint, RunFolder};
use crate::play::openings::Openings;
use crate::play::record::fingerprint_record;
use crate::play::record::GameRecord;
use crate::play::runner::{run_games_with, Entrant, Feed, Next, RunConfig};
use crate::play::schedule::{Pairing, Schedule};
use crate::play::Observer;

/// How to run a series of games (a tournament, a match, a class league):
/// everything that is not in its configuration.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Games played at once.
    pub jobs: usize,
    /// Output folder.
    pub out: Option<PathBuf>,
    /// Continue the games in `out`.
    pub resume: bool,
    /// Play only shard `K` of `N`.
    pub shard: Option<(u64, u64)>,
    /// Pin each worker and its bots to one CPU.
    pub affinity: bool,
    /// The report's title (`run.json`); a tournament file's `title` when
    /// not given.
    pub title: Option<String>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: 1,
            out: None,
            resume: false,
            shard: None,
            affinity: true,
            title: None,
        }
    }
}

/// Most ids a worker may start past the first game not yet counted. Far
/// more than the games in flight of any sensible `--jobs` (each worker
/// hands over at most 256 games at a time), so workers wait only when one
/// game takes far longer than thousands of others.
pub(crate) const WINDOW: u64 = 1 << 14;

/// The games of a series, by id.
pub(crate) trait Games: Sync {
    /// Game `id`, or `None` while it is not decided yet: it depends on
    /// games not yet counted (a Swiss round not yet paired). Once decided,
    /// a game never changes.
    fn pairing(&self, id: u64) -> Option<Pairing>;
}

impl Games for Schedule {
    fn pairing(&self, id: u64) -> Option<Pairing> {
        Some(Schedule::pairing(self, id))
    }
}

/// What a series plays.
pub(crate) struct Series<'a> {
    /// The bots; schedule indices refer to this list.
    pub(crate) entrants: &'a [Entrant],
    /// Where the games come from.
    pub(crate) schedule: &'a dyn Games,
    /// The ids played (the whole schedule, or a shard of it).
    pub(crate) ids: Range<u64>,
    /// Settings every game shares.
    pub(crate) cfg: RunConfig,
    /// The opening suite, if any.
    pub(crate) openings: Option<&'a Openings>,
    /// What the run folder keeps to recognise the run (`tournament.toml`):
    /// a resumed folder must hold the same.
    pub(crate) config: toml::Table,
    /// What the report shows about the run (`run.json`).
    pub(crate) settings: journal::RunSettings,
}

/// Whether counting goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Count the next game.
    Go,
    /// This game is the last that counts (a concluded SPRT): start no more
    /// games, and discard those that finish after it.
    Stop,
}

/// What a series counts as its games come in.
pub(crate) trait Tally {
    /// Counts the next game, in id order. After an interruption, ids that
    /// never finished are skipped (the games after them still count).
    fn add(&mut self, rec: &GameRecord, fingerprint: u64) -> Flow;
}

/// What a series did.
#[derive(Debug)]
pub(crate) struct Played {
    /// Games played by this process.
    pub(crate) played: u64,
    /// Games read from the run folder.
    pub(crate) resumed: u64,
    /// Wall time of the games played.
    pub(crate) elapsed: Duration,
    /// The id of the last counted game, when the tally stopped the series.
    pub(crate) stopped: Option<u64>,
    /// Games finished (or read) past that point, not counted, and removed
    /// from the run folder.
    pub(crate) discarded: u64,
    /// The run folder, still locked, for the files written at the end.
    pub(crate) folder: Option<RunFolder>,
}

/// Checks that a stored game belongs to this series at its id.
fn check_record(s: &Series, r: &GameRecord) -> anyhow::Result<()> {
    if !s.ids.contains(&r.id) {
        bail!(
            "game {} is not part of this run (ids {}..{})",
            r.id,
            s.ids.start,
            s.ids.end
        );
    }
    // In a run folder, every game of a round comes before the first game
    // of the next round (which is paired only once they are all counted).
    let Some(p) = s.schedule.pairing(r.id) else {
        bail!(
            "game {} comes before the games its pairing depends on (a Swiss round that is not \
             finished)",
            r.id
        );
    };
    if r.rules != s.cfg.options.rules {
        bail!(
            "game {} was played under the {} rules, and this run plays under the {} rules",
            r.id,
            r.rules,
            s.cfg.options.rules
        );
    }
    let names = p.players.map(|i| s.entrants[i].name.as_str());
    if r.players[0] != names[0] || r.players[1] != names[1] || r.seed != p.seed {
        bail!(
            "game {} has players {:?} and seed {}, but the schedule says {:?} and seed {}",
            r.id,
            r.players,
            r.seed,
            names,
            p.seed
        );
    }
    Ok(())
}

/// Plays the series, resuming from and writing to `opts.out` when given,
/// and counts every game in id order with `tally`. Progress goes to
/// `observer` as games finish.
pub(crate) fn play_series<G: BuiltinBots>(
    s: &Series,
    opts: &RunOptions,
    observer: &dyn Observer,
    tally: &mut dyn Tally,
) -> anyhow::Result<Played> {
    if opts.resume && opts.out.is_none() {
        return Err(journal::RunError::ResumeWithoutFolder.into());
    }
    let elsewhere = if s.openings.is_some() {
        Some("openings")
    } else if s.cfg.random_plies > 0 {
        Some("random-plies")
    } else {
        None
    };
    if let Some(setting) = elsewhere {
        if let Some(why) = s.entrants.iter().find_map(|e| e.spec.empty_board_only()) {
            return Err(
                crate::play::SettingError::new(setting, format!("cannot be used: {why}")).into(),
            );
        }
    }
    let standard = G::start(&s.cfg.options).to_string();
    let mut seq = Sequencer::new(s.ids.start, tally);
    let mut done = IdSet::default();
    let mut resumed = 0u64;
    let mut folder = match &opts.out {
        Some(dir) => {
            let bots: Vec<BotPrint> = s
                .entrants
                .iter()
                .map(|e| BotPrint::of(&e.name, &e.spec))
                .collect();
            let (folder, games) = RunFolder::start_with(dir, &s.config, &bots, opts.resume, |r| {
                check_record(s, &r).with_context(|| {
                    format!(
                        "{} does not match this run",
                        journal::games_path(dir).display()
                    )
                })?;
                if !done.insert(r.id) {
                    bail!(
                        "game {} appears twice in {}",
                        r.id,
                        journal::games_path(dir).display()
                    );
                }
                resumed += 1;
                let fp = fingerprint_record::<G>(&r, &standard);
                seq.put(r, fp);
                Ok(())
            })?;
            for n in &games.notes {
                observer.note(n);
            }
            folder.write_settings(&s.settings)?;
            Some(folder)
        }
        None => None,
    };

    let feed = ScheduleFeed {
        schedule: s.schedule,
        cursor: Mutex::new(s.ids.start),
        end: s.ids.end,
        skip: &done,
        counted: AtomicU64::new(seq.next),
        stop: AtomicBool::new(seq.stopped.is_some()),
    };
    let writer = folder.as_ref();
    observer.begin("games", Some(s.ids.end - s.ids.start), resumed);
    // The first failed write: no game is started after it (each would be
    // played for nothing, as none can be written), the games file ends on
    // its last whole record, and the run ends with this error.
    let write_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let started = Instant::now();
    let mut played = 0u64;
    run_games_with::<G, _>(
        s.entrants,
        &s.cfg,
        s.openings,
        &feed,
        opts.jobs,
        |rec| {
            // On the worker that played the game: its line goes to the
            // kernel now, before the next game starts; fingerprinting here
            // keeps the calling thread free for counting.
            if let Some(w) = &writer {
                if let Err(e) = w.append(&rec) {
                    feed.stop.store(true, Ordering::Relaxed);
                    if let Ok(mut slot) = write_error.lock() {
                        slot.get_or_insert(e);
                    }
                }
            }
            let fp = fingerprint_record::<G>(&rec, &standard);
            (rec, fp)
        },
        |(rec, fp)| {
            seq.put(rec, fp);
            feed.counted.store(seq.next, Ordering::Release);
            if seq.stopped.is_some() {
                feed.stop.store(true, Ordering::Relaxed);
            }
            played += 1;
            observer.advance(1);
        },
    );
    let elapsed = started.elapsed();
    // Interrupted: count what finished, skipping the games that did not.
    seq.flush();
    observer.end();
    if let Some(e) = write_error.into_inner().ok().flatten() {
        return Err(match e.downcast_ref::<journal::AppendFailed>() {
            // The folder ends on a whole game: resuming it is safe.
            Some(_) => journal::RunError::Unfinished {
                cause: format!("{e:#}"),
            }
            .into(),
            None => e,
        });
    }
    let (stopped, discarded) = (seq.stopped, seq.discarded);
    if let (Some(last), Some(f)) = (stopped, folder.as_mut()) {
        if discarded > 0 {
            f.retain_games(|id| id <= last)?;
        }
    }
    Ok(Played {
        played,
        resumed,
        elapsed,
        stopped,
        discarded,
        folder,
    })
}

/// Hands games to a [`Tally`] in id order, keeping those that finish early
/// until every game before them is in.
pub(crate) struct Sequencer<'t> {
    /// The first id not yet counted.
    next: u64,
    /// Finished games with ids `next`, `next + 1`, ... (`None`: not yet
    /// in), for ids less than [`RING`] past `next`: every game a worker
    /// plays, since workers stay within [`WINDOW`].
    ring: VecDeque<Option<(GameRecord, u64)>>,
    /// Finished games further ahead (read from a folder whose run had a
    /// longer gap), by id.
    far: BTreeMap<u64, (GameRecord, u64)>,
    tally: &'t mut dyn Tally,
    /// The last counted id, once the tally stopped.
    stopped: Option<u64>,
    /// Games not counted because they came after the stop.
    discarded: u64,
}

/// Ids past the first uncounted one kept in the ring.
const RING: u64 = 2 * WINDOW;

impl<'t> Sequencer<'t> {
    pub(crate) fn new(first: u64, tally: &'t mut dyn Tally) -> Self {
        Sequencer {
            next: first,
            ring: VecDeque::new(),
            far: BTreeMap::new(),
            tally,
            stopped: None,
            discarded: 0,
        }
    }

    /// One finished game, in any order.
    pub(crate) fn put(&mut self, rec: GameRecord, fp: u64) {
        if self.stopped.is_some() {
            self.discarded += 1;
            return;
        }
        let Some(ahead) = rec.id.checked_sub(self.next) else {
            return;
        };
        if ahead < RING {
            let slot = ahead as usize;
            if self.ring.len() <= slot {
                self.ring.resize_with(slot + 1, || None);
            }
            self.ring[slot] = Some((rec, fp));
            self.drain();
        } else {
            self.far.insert(rec.id, (rec, fp));
        }
    }

    /// The first id not yet counted: every game before it was.
    pub(crate) fn next_uncounted(&self) -> u64 {
        self.next
    }

    /// Counts the games that are next in line.
    fn drain(&mut self) {
        while self.stopped.is_none() {
            let game = match self.ring.front_mut() {
                Some(slot @ Some(_)) => slot.take(),
                _ => match self.far.first_key_value() {
                    Some((&id, _)) if id == self.next => self.far.pop_first().map(|(_, g)| g),
                    _ => None,
                },
            };
            let Some((rec, fp)) = game else { break };
            self.ring.pop_front();
            self.count(rec, fp);
        }
    }

    fn count(&mut self, rec: GameRecord, fp: u64) {
        self.next = rec.id + 1;
        if self.tally.add(&rec, fp) == Flow::Stop {
            self.stopped = Some(rec.id);
            let waiting = self.ring.iter().flatten().count() + self.far.len();
            self.discarded += waiting as u64;
            self.ring.clear();
            self.far.clear();
        }
    }

    /// Counts every waiting game, in id order, skipping the ids that never
    /// came (an interrupted run).
    fn flush(&mut self) {
        let first = self.next;
        for (i, slot) in std::mem::take(&mut self.ring).into_iter().enumerate() {
            if let Some(game) = slot {
                self.far.insert(first + i as u64, game);
            }
        }
        while let Some((_, (rec, fp))) = self.far.pop_first() {
            if self.stopped.is_some() {
                self.discarded += 1;
            } else {
                self.count(rec, fp);
            }
        }
    }
}

/// The games of a series still to play, generated in id order as workers
/// ask: never a list of them, whatever their number.
struct ScheduleFeed<'a> {
    schedule: &'a dyn Games,
    /// The next id to consider.
    cursor: Mutex<u64>,
    end: u64,
    /// Ids already played (read from the run folder).
    skip: &'a IdSet,
    /// Every id below this is counted (published by the counting thread).
    counted: AtomicU64,
    /// Set when the tally stopped the series.
    stop: AtomicBool,
}

impl Feed for ScheduleFeed<'_> {
    fn next(&self) -> Next {
        if self.stop.load(Ordering::Relaxed) {
            return Next::Done;
        }
        let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        let id = self.skip.next_absent(*cursor);
        if id >= self.end {
            return Next::Done;
        }
        if id >= self.counted.load(Ordering::Acquire).saturating_add(WINDOW) {
            return Next::Wait;
        }
        // Not decided yet: it will be once the games before it are counted.
        let Some(p) = self.schedule.pairing(id) else {
            return Next::Wait;
        };
        *cursor = id + 1;
        Next::Play(p)
    }

    fn remaining(&self) -> u64 {
        let cursor = *self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        self.end.saturating_sub(cursor)
    }
}

/// A set of game ids kept as disjoint intervals: a run's ids come nearly
/// in order, so it stays a handful of intervals however many ids it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct IdSet {
    /// start -> end (exclusive); disjoint, never adjacent.
    spans: BTreeMap<u64, u64>,
}

impl IdSet {
    /// Whether `id` is in the set.
    pub(crate) fn contains(&self, id: u64) -> bool {
        self.spans
            .range(..=id)
            .next_back()
            .is_some_and(|(_, &end)| id < end)
    }

    /// Adds `id`; false if it was there already.
    pub(crate) fn insert(&mut self, id: u64) -> bool {
        if self.contains(id) {
            return false;
        }
        let mut start = id;
        let mut end = id + 1;
        if let Some((&s, &e)) = self.spans.range(..id).next_back() {
            if e == id {
                start = s;
            }
        }
        if let Some(&e) = self.spans.get(&(id + 1)) {
            self.spans.remove(&(id + 1));
            end = e;
        }
        self.spans.insert(start, end);
        true
    }

    /// The first id at or after `from` that is not in the set.
    pub(crate) fn next_absent(&self, from: u64) -> u64 {
        match self.spans.range(..=from).next_back() {
            Some((_, &end)) if from < end => end,
            _ => from,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;

    fn fp<G: Game>(rec: &GameRecord) -> u64 {
        fingerprint_record::<G>(rec, &G::start(&Default::default()).to_string())
    }

    #[test]
    fn id_sets_merge_neighbours_and_find_gaps() {
        let mut s = IdSet::default();
        for id in [5, 3, 4, 9, 0, 1] {
            assert!(s.insert(id));
        }
        assert!(!s.insert(4));
        assert_eq!(s.spans.len(), 3, "{s:?}");
        assert!(s.contains(3) && s.contains(5) && !s.contains(6) && !s.contains(2));
        assert_eq!(s.next_absent(0), 2);
        assert_eq!(s.next_absent(3), 6);
        assert_eq!(s.next_absent(7), 7);
        assert_eq!(s.next_absent(9), 10);
        assert!(s.insert(2));
        assert_eq!(s.next_absent(0), 6);
        assert_eq!(s.spans.len(), 2);
    }

    struct Ids(Vec<u64>, Option<u64>);

    impl Tally for Ids {
        fn add(&mut self, rec: &GameRecord, _: u64) -> Flow {
            self.0.push(rec.id);
            if Some(rec.id) == self.1 {
                Flow::Stop
            } else {
                Flow::Go
            }
        }
    }

    fn rec(id: u64) -> GameRecord {
        GameRecord {
            id,
            game: crate::game::GameKind::TicTacToe,
            players: ["a".into(), "b".into()],
            seed: id,
            opening: vec![],
            start: ".........".into(),
            moves: vec![],
            times_us: vec![],
            winner: None,
            termination: crate::play::record::Termination::Normal,
            forfeit: None,
            final_position: String::new(),
            client: None,
            format: Vec::new(),
            rules: Default::default(),
        }
    }

    #[test]
    fn games_are_counted_in_id_order_and_nothing_after_a_stop() {
        let mut t = Ids(vec![], Some(4));
        let mut q = Sequencer::new(0, &mut t);
        for id in [1, 2, 0, 5, 3, 7, 4, 6, 8] {
            q.put(rec(id), fp::<crate::game::TicTacToe>(&rec(id)));
        }
        assert_eq!((q.stopped, q.discarded), (Some(4), 4));
        assert_eq!(t.0, [0, 1, 2, 3, 4]);

        // An interrupted run: 2 never came; the rest still count, in order.
        let mut t = Ids(vec![], None);
        let mut q = Sequencer::new(0, &mut t);
        for id in [4, 0, 3, 1] {
            q.put(rec(id), 0);
        }
        assert_eq!(q.next, 2);
        q.flush();
        assert_eq!(t.0, [0, 1, 3, 4]);

        // A game far ahead (a resumed folder with a long gap) waits aside
        // and is counted in its turn.
        let mut t = Ids(vec![], None);
        let mut q = Sequencer::new(0, &mut t);
        q.put(rec(RING + 3), 0);
        for id in (1..RING + 3).rev() {
            q.put(rec(id), 0);
        }
        assert_eq!(q.next, 0);
        q.put(rec(0), 0);
        assert_eq!(q.next, RING + 4);
        assert_eq!(t.0, (0..RING + 4).collect::<Vec<_>>());
    }
}
