//! A league: a competition over a semester (`referee league`, docs/league.md).
//!
//! A league folder holds `league.toml` (the settings), `league.db` (the
//! database: versions, pairings, games, ratings; [`db`]), `submissions/`
//! (every submitted bot, content-addressed and read-only) and, once played,
//! `final/` (the final's run folder). Students submit versions whenever they
//! like; `run` admits them ([`admission`]), pairs the ladder
//! ([`pairing`]), plays and stores games until stopped, and rates them with
//! one order-independent fit ([`rating`]); `serve` shows it ([`web`]);
//! `freeze`, `final` and `export` end it.

pub mod admission;
pub mod db;
pub mod http;
pub mod pairing;
pub mod rating;
pub mod settings;
pub mod submit;
pub mod web;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;

pub use db::{Db, Entry, Status};
pub use settings::LeagueSettings;

use crate::bot::{BotSpec, BuiltinBots};
use crate::play::runner::{Entrant, RunConfig};

/// The phase of ladder games.
pub const LADDER: &str = "ladder";
/// The phase of admission games.
pub const ADMISSION: &str = "admission";

/// An open league folder.
pub struct League {
    /// The folder.
    pub dir: PathBuf,
    /// Its settings.
    pub settings: LeagueSettings,
    /// Its database.
    pub db: Db,
}

impl League {
    /// Creates a league in `dir` (new, or empty) with `settings`.
    pub fn init(dir: &Path, settings: LeagueSettings) -> anyhow::Result<League> {
        if dir.exists()
            && std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .next()
                .is_some()
        {
            anyhow::bail!(
                "{}: not empty (a league starts in a new or empty folder)",
                dir.display()
            );
        }
        std::fs::create_dir_all(dir.join("submissions"))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        // Checked the way every later read checks it.
        let text = settings.to_text();
        let path = dir.join(settings::SETTINGS);
        LeagueSettings::parse(&path, &text)?;
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        let db = Db::create(&dir.join(db::DB_FILE))?;
        for a in &settings.anchors {
            db.add_anchor(a, a)?;
        }
        db.set_state("created", &db::now().to_string())?;
        Ok(League {
            dir: dir.to_path_buf(),
            settings,
            db,
        })
    }

    /// Opens the league in `dir`: its settings (checked) and database. New
    /// anchors in `league.toml` join the ladder.
    pub fn open(dir: &Path) -> anyhow::Result<League> {
        let settings = LeagueSettings::load(dir)?;
        let db = Db::open(&dir.join(db::DB_FILE))?;
        let known: Vec<String> = db
            .entries()?
            .into_iter()
            .filter(|e| e.anchor)
            .map(|e| e.name)
            .collect();
        for a in settings.anchors.iter().filter(|a| !known.contains(a)) {
            db.add_anchor(a, a)?;
        }
        Ok(League {
            dir: dir.to_path_buf(),
            settings,
            db,
        })
    }

    /// When the league was frozen (unix seconds), if it was.
    pub fn frozen(&self) -> anyhow::Result<Option<i64>> {
        Ok(self
            .db
            .state("frozen_at")?
            .and_then(|v| v.parse::<i64>().ok()))
    }

    /// Freezes the league: no more admissions.
    pub fn freeze(&self) -> anyhow::Result<i64> {
        if let Some(t) = self.frozen()? {
            return Ok(t);
        }
        let t = db::now();
        self.db.set_state("frozen_at", &t.to_string())?;
        Ok(t)
    }

    /// The bots that play now: the anchors of the settings and each
    /// student's newest admitted version.
    pub fn active(&self) -> anyhow::Result<Vec<Entry>> {
        let entries = self.db.entries()?;
        Ok(active_of(&entries, &self.settings))
    }

    /// The live ladder.
    pub fn ladder(&self) -> anyhow::Result<Ladder> {
        let entries = self.db.entries()?;
        let active = active_of(&entries, &self.settings);
        let games = self.db.games(LADDER, 0)?;
        Ok(build_ladder(&entries, &active, &games, &self.settings))
    }

    /// A bot's spec for game `G`, with the league's process settings.
    pub(crate) fn spec_of<G: BuiltinBots>(&self, e: &Entry) -> anyhow::Result<BotSpec> {
        if e.anchor {
            let text = e.spec.as_deref().unwrap_or(&e.name);
            return BotSpec::resolve::<G>(text)
                .map_err(|err| anyhow::anyhow!("anchor {text}: {err}"));
        }
        let folder = self.dir.join(e.folder.as_deref().unwrap_or_default());
        let text = crate::grade::class::submission_bot(
            &folder,
            crate::grade::rubric::Form::Protocol,
            None,
        )
        .map_err(anyhow::Error::msg)?;
        let mut spec = BotSpec::resolve::<G>(&text).map_err(|err| anyhow::anyhow!("{err}"))?;
        spec.adjust(&self.process());
        Ok(spec)
    }

    /// How students' bots run: in the league's sandbox; a bot whose
    /// manifest declares `reuse` keeps its process across games.
    pub fn process(&self) -> crate::bot::spec::ProcessSettings {
        crate::bot::spec::ProcessSettings {
            sandbox: Some(self.settings.sandbox),
            ..Default::default()
        }
    }

    /// The run configuration of every game.
    pub(crate) fn run_config(&self) -> RunConfig {
        RunConfig {
            options: self.settings.options(),
            time: self.settings.time(),
            random_plies: self.settings.random_plies,
            affinity: true,
        }
    }

    /// The opening suite, when the settings name one.
    pub(crate) fn openings(&self) -> anyhow::Result<Option<crate::play::openings::Openings>> {
        match &self.settings.openings {
            None => Ok(None),
            Some(p) => {
                let path = self.dir.join(p);
                crate::play::openings::Openings::load(
                    self.settings.game,
                    &self.settings.options(),
                    &path,
                    false,
                    self.settings.seed,
                )
                .map(Some)
                .map_err(|e| anyhow::anyhow!("{}: openings: {}", settings::SETTINGS, e.0))
            }
        }
    }
}

/// A fitted ladder and the entries it was fitted with.
pub type Snapshot = (std::sync::Arc<Ladder>, std::sync::Arc<Vec<Entry>>);

/// The ladder kept up to date by reading only the games stored since the
/// last read (`run` between cycles, `serve`'s refresher), and refitted only
/// when games or versions changed.
#[derive(Default)]
pub struct LadderCache {
    games: Vec<db::GameRow>,
    last: i64,
    seen: Option<(i64, Vec<(i64, &'static str)>)>,
    current: Option<Snapshot>,
}

impl LadderCache {
    /// Reads what changed in `db`; returns the ladder, and whether it was
    /// refitted.
    pub fn refresh(
        &mut self,
        db: &Db,
        settings: &LeagueSettings,
    ) -> anyhow::Result<(Snapshot, bool)> {
        let new = db.games(LADDER, self.last)?;
        if let Some(g) = new.last() {
            self.last = g.id;
        }
        self.games.extend(new);
        let entries = db.entries()?;
        let seen = (
            self.last,
            entries
                .iter()
                .map(|e| (e.id, e.status.name()))
                .collect::<Vec<_>>(),
        );
        if let (Some(current), true) = (&self.current, self.seen.as_ref() == Some(&seen)) {
            return Ok((current.clone(), false));
        }
        self.seen = Some(seen);
        let active = active_of(&entries, settings);
        let ladder = build_ladder(&entries, &active, &self.games, settings);
        let snap: Snapshot = (std::sync::Arc::new(ladder), std::sync::Arc::new(entries));
        self.current = Some(snap.clone());
        Ok((snap, true))
    }
}

/// The anchors of `settings` and each student's newest admitted version.
fn active_of(entries: &[Entry], settings: &LeagueSettings) -> Vec<Entry> {
    let mut newest: HashMap<&str, &Entry> = HashMap::new();
    for e in entries
        .iter()
        .filter(|e| !e.anchor && e.status == Status::Admitted)
    {
        match newest.get(e.name.as_str()) {
            Some(old) if old.version > e.version => {}
            _ => {
                newest.insert(&e.name, e);
            }
        }
    }
    let mut out: Vec<Entry> = entries
        .iter()
        .filter(|e| e.anchor && settings.anchors.contains(&e.name))
        .cloned()
        .collect();
    // The settings' order: the first anchor is the pinned one.
    out.sort_by_key(|e| settings.anchors.iter().position(|a| a == &e.name));
    let mut students: Vec<Entry> = newest.into_values().cloned().collect();
    students.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(students);
    out
}

/// One line of the ladder.
#[derive(Clone, Debug, Serialize)]
pub struct LadderRow {
    /// Place, from 1 (rated bots first).
    pub rank: usize,
    /// The entry.
    pub entry: i64,
    /// The student's or anchor's name.
    pub name: String,
    /// The version (0: an anchor).
    pub version: u32,
    /// Whether it is an anchor.
    pub anchor: bool,
    /// Rating in Elo (`None`: not connected to the pinned anchor yet).
    pub rating: Option<f64>,
    /// The rating's 95 % interval.
    pub low: Option<f64>,
    /// The rating's 95 % interval.
    pub high: Option<f64>,
    /// The likelihood that it is stronger than the bot below it.
    pub los_next: Option<f64>,
    /// Ladder games of this version against the bots playing now.
    pub games: u64,
    /// Wins.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses.
    pub losses: u64,
    /// Games it lost by forfeit.
    pub forfeits: u64,
    /// Still being placed (fewer ladder games than `placement_games`).
    pub placing: bool,
    /// When the student last submitted (unix seconds).
    pub last_submission: Option<i64>,
}

/// The ladder: the fit and its rows, best first.
#[derive(Clone, Debug, Serialize)]
pub struct Ladder {
    /// Rows, best first.
    pub rows: Vec<LadderRow>,
    /// The first move's worth in Elo.
    pub first_move: f64,
    /// The draw parameter ν.
    pub draw_nu: f64,
    /// Games the fit read.
    pub games: u64,
    /// When some bots cannot be rated.
    pub warning: Option<String>,
    /// UTTT's rule (`standard` or `codingame`); absent for the other
    /// games.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<crate::game::Rules>,
    /// Of the games the fit read, those the rule decided on boards won
    /// (UTTT only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by_rule: Option<u64>,
}

/// The ladder's rule in words with the games it decided, for UTTT:
/// `rule: codingame, 12 of 40 games decided on boards won`.
pub fn rule_line(ladder: &Ladder) -> Option<String> {
    Some(match ladder.rules? {
        crate::game::Rules::Standard => {
            "rule: standard (a full board without three in a row is a draw)".to_string()
        }
        crate::game::Rules::CodinGame => format!(
            "rule: codingame, {} of {} games decided on boards won",
            ladder.decided_by_rule.unwrap_or(0),
            ladder.games
        ),
    })
}

/// Rates `games` between the `active` entries and builds the ladder.
pub(crate) fn build_ladder(
    entries: &[Entry],
    active: &[Entry],
    games: &[db::GameRow],
    settings: &LeagueSettings,
) -> Ladder {
    let index: HashMap<i64, usize> = active.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    let mut tally = rating::Tally::default();
    let n = active.len();
    let mut wdl = vec![[0u64; 4]; n];
    let mut by_rule = 0u64;
    for g in games {
        let (Some(&a), Some(&b)) = (index.get(&g.players[0]), index.get(&g.players[1])) else {
            continue;
        };
        if a == b {
            continue;
        }
        by_rule += u64::from(g.by_rule);
        let score = match g.winner {
            Some(1) => 1,
            Some(_) => -1,
            None => 0,
        };
        tally.add(rating::Result3 {
            white: a,
            black: b,
            score,
        });
        for (i, seat) in [(a, 1u8), (b, 2u8)] {
            match g.winner {
                None => wdl[i][1] += 1,
                Some(w) if w == seat => wdl[i][0] += 1,
                Some(_) => wdl[i][2] += 1,
            }
            if g.forfeit_seat == Some(seat) {
                wdl[i][3] += 1;
            }
        }
    }
    let fit = rating::fit(
        &tally,
        &rating::FitSettings {
            bots: n,
            pin: 0,
            pin_rating: settings.pin_rating,
            prior_games: settings.prior_games,
        },
    );
    let last_sub = |name: &str| {
        entries
            .iter()
            .filter(|e| !e.anchor && e.name == name)
            .map(|e| e.submitted_at)
            .max()
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| match (fit.ratings[a], fit.ratings[b]) {
        (Some(x), Some(y)) => y.total_cmp(&x).then(a.cmp(&b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(&b),
    });
    let rows = order
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let e = &active[i];
            let games = wdl[i][0] + wdl[i][1] + wdl[i][2];
            let (low, high) = fit
                .interval(i)
                .map_or((None, None), |(l, h)| (Some(l), Some(h)));
            LadderRow {
                rank: rank + 1,
                entry: e.id,
                name: e.name.clone(),
                version: e.version,
                anchor: e.anchor,
                rating: fit.ratings[i],
                low,
                high,
                los_next: order.get(rank + 1).and_then(|&j| fit.superiority(i, j)),
                games,
                wins: wdl[i][0],
                draws: wdl[i][1],
                losses: wdl[i][2],
                forfeits: wdl[i][3],
                placing: !e.anchor && games < settings.placement_games,
                last_submission: if e.anchor { None } else { last_sub(&e.name) },
            }
        })
        .collect();
    Ladder {
        rows,
        first_move: fit.first_move,
        draw_nu: fit.draw_nu,
        games: tally.games(),
        warning: fit.warning(|i| active[i].label()),
        rules: settings.game.has_rules().then_some(settings.rules),
        decided_by_rule: settings.game.has_rules().then_some(by_rule),
    }
}

/// What `league run` is told.
#[derive(Clone, Debug, Default)]
pub struct RunLeague {
    /// Worker threads.
    pub jobs: usize,
    /// Stop after this many more ladder games.
    pub games: Option<u64>,
    /// A folder of `<name>/` subfolders watched for new versions.
    pub inbox: Option<PathBuf>,
}

/// What `league run` reports as it goes.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Ladder games played by this run.
    pub played: u64,
    /// Games per second of this run.
    pub per_second: f64,
    /// The leader and its rating.
    pub leader: Option<(String, f64)>,
    /// Versions waiting for admission.
    pub pending: usize,
    /// A line to tell (an admission's verdict, a new version, a wait).
    pub message: Option<String>,
}

/// What a finished `league run` did.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Ladder games played.
    pub played: u64,
    /// Versions admitted.
    pub admitted: u64,
    /// Versions rejected.
    pub rejected: u64,
    /// The signal that stopped it, if one did.
    pub interrupted: Option<i32>,
}

/// Plays the league in `dir` until interrupted or `opts.games` more games
/// are played; one run at a time (the folder's lock).
pub fn run(
    dir: &Path,
    opts: &RunLeague,
    progress: &dyn Fn(&Progress),
) -> anyhow::Result<RunSummary> {
    let league = League::open(dir)?;
    let _lock = crate::play::journal::lock(dir)?;
    crate::with_game!(league.settings.game, G => run_game::<G>(&league, opts, progress))
}

/// Sleeps `ms` in small steps, waking early when interrupted.
fn nap(ms: u64) {
    let until = Instant::now() + std::time::Duration::from_millis(ms);
    while Instant::now() < until && crate::play::interrupt::interrupted().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn run_game<G: BuiltinBots>(
    league: &League,
    opts: &RunLeague,
    progress: &dyn Fn(&Progress),
) -> anyhow::Result<RunSummary> {
    let mut summary = RunSummary::default();
    let started = Instant::now();
    let mut inbox = opts.inbox.as_ref().map(|p| submit::Inbox::new(p.clone()));
    let mut cache = LadderCache::default();
    let openings = league.openings()?;
    let cfg = league.run_config();
    let tell = |summary: &RunSummary,
                pending: usize,
                leader: Option<(String, f64)>,
                msg: Option<String>| {
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        progress(&Progress {
            played: summary.played,
            per_second: summary.played as f64 / secs,
            leader,
            pending,
            message: msg,
        });
    };
    loop {
        if let Some(sig) = crate::play::interrupt::interrupted() {
            summary.interrupted = Some(sig);
            break;
        }
        if opts.games.is_some_and(|g| summary.played >= g) {
            break;
        }
        // New versions from the inbox.
        if let Some(inbox) = inbox.as_mut() {
            for (name, outcome) in inbox.scan(league) {
                let msg = match outcome {
                    Ok(s) if s.new => format!("inbox: {name}: version {} submitted", s.version),
                    Ok(_) => continue,
                    Err(e) => format!("inbox: {name}: {e:#}"),
                };
                tell(&summary, 0, None, Some(msg));
            }
        }
        // Admissions.
        if league.frozen()?.is_none() {
            let pending: Vec<Entry> = league
                .db
                .entries()?
                .into_iter()
                .filter(|e| e.status == Status::Pending)
                .collect();
            for (k, e) in pending.iter().enumerate() {
                if crate::play::interrupt::interrupted().is_some() {
                    break;
                }
                let verdict = admission::admit::<G>(league, e, opts.jobs)?;
                let msg = match &verdict {
                    Ok(()) => {
                        summary.admitted += 1;
                        format!("{}: admitted", e.label())
                    }
                    Err(why) => {
                        summary.rejected += 1;
                        format!(
                            "{}: rejected: {}",
                            e.label(),
                            why.lines().next().unwrap_or("")
                        )
                    }
                };
                tell(&summary, pending.len() - k - 1, None, Some(msg));
            }
        }
        if crate::play::interrupt::interrupted().is_some() {
            continue;
        }
        // The cycle: the games left over, or new pairs.
        let active = league.active()?;
        let ids: Vec<i64> = active.iter().map(|e| e.id).collect();
        let (keep, stale): (Vec<db::Scheduled>, Vec<db::Scheduled>) = league
            .db
            .unplayed(LADDER)?
            .into_iter()
            .partition(|s| s.players.iter().all(|p| ids.contains(p)));
        if !stale.is_empty() {
            league
                .db
                .unschedule(&stale.iter().map(|s| s.id).collect::<Vec<_>>())?;
        }
        let mut todo = keep;
        let (ladder, _) = cache.refresh(&league.db, &league.settings)?.0;
        let leader = ladder
            .rows
            .iter()
            .find_map(|r| r.rating.map(|x| (label_of(r), x)));
        if todo.is_empty() {
            if active.len() < 2 {
                if opts.games.is_some() && inbox.is_none() {
                    anyhow::bail!(
                        "the league has {} bot{} to play: it needs two (an anchor and an \
                         admitted submission, or two anchors)",
                        active.len(),
                        if active.len() == 1 { "" } else { "s" }
                    );
                }
                tell(
                    &summary,
                    0,
                    leader.clone(),
                    Some("waiting for submissions".into()),
                );
                nap(2000);
                continue;
            }
            let cycle = league.db.last_cycle()? + 1;
            todo = schedule_cycle(league, &ladder, &active, cycle)?;
            let rated: Vec<(i64, f64, f64, f64, u64)> = ladder
                .rows
                .iter()
                .filter_map(|r| Some((r.entry, r.rating?, r.low?, r.high?, r.games)))
                .collect();
            league.db.record_ratings(cycle, &rated)?;
        }
        if let Some(g) = opts.games {
            todo.truncate((g - summary.played) as usize);
        }
        let (done, before) = (std::cell::Cell::new(0u64), summary.played);
        let played = play_scheduled::<G>(
            league,
            &active,
            &todo,
            &cfg,
            openings.as_ref(),
            opts.jobs,
            &|_| {
                // The progress line as games end, not only between cycles.
                done.set(done.get() + 1);
                let played = before + done.get();
                progress(&Progress {
                    played,
                    per_second: played as f64 / started.elapsed().as_secs_f64().max(1e-9),
                    leader: leader.clone(),
                    pending: 0,
                    message: None,
                });
            },
        )?;
        summary.played += played;
        tell(&summary, 0, leader, None);
    }
    Ok(summary)
}

/// A ladder row's label: `alice#3`, or the anchor's name.
fn label_of(r: &LadderRow) -> String {
    if r.anchor {
        r.name.clone()
    } else {
        format!("{}#{}", r.name, r.version)
    }
}

/// Schedules cycle `cycle`'s games from the ladder.
fn schedule_cycle(
    league: &League,
    ladder: &Ladder,
    active: &[Entry],
    cycle: i64,
) -> anyhow::Result<Vec<db::Scheduled>> {
    let seats: Vec<pairing::Seat> = active
        .iter()
        .map(|e| {
            let row = ladder.rows.iter().find(|r| r.entry == e.id);
            pairing::Seat {
                entry: e.id,
                rating: row.and_then(|r| r.rating),
                placing: row.is_some_and(|r| r.placing),
            }
        })
        .collect();
    let s = &league.settings;
    let seed = crate::seed::derive(s.seed, &[1, cycle as u64]);
    let pairs = pairing::cycle_pairs(&seats, s.degree, s.placement_pairs, seed);
    let first_round = league
        .db
        .state("pairs")?
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let mut games = Vec::with_capacity(pairs.len() * 2);
    for (k, [a, b]) in pairs.iter().enumerate() {
        let round = first_round + k as u64;
        let opening_seed = crate::seed::derive(s.seed, &[2, round]);
        for (g, players) in [[*a, *b], [*b, *a]].into_iter().enumerate() {
            let game_seed = crate::seed::derive(s.seed, &[3, round, g as u64]);
            games.push(db::Scheduled {
                id: 0,
                phase: LADDER.to_string(),
                cycle,
                players,
                seed: game_seed,
                opening_seed,
                round,
            });
        }
    }
    let out = league.db.schedule(&games)?;
    league
        .db
        .set_state("pairs", &(first_round + pairs.len() as u64).to_string())?;
    Ok(out)
}

/// Plays scheduled games between `entries` and stores each as it ends;
/// returns how many were played.
pub(crate) fn play_scheduled<G: BuiltinBots>(
    league: &League,
    entries: &[Entry],
    todo: &[db::Scheduled],
    cfg: &RunConfig,
    openings: Option<&crate::play::openings::Openings>,
    jobs: usize,
    on_game: &dyn Fn(&crate::play::record::GameRecord),
) -> anyhow::Result<u64> {
    if todo.is_empty() {
        return Ok(0);
    }
    let mut entrants = Vec::with_capacity(entries.len());
    let mut at: HashMap<i64, usize> = HashMap::new();
    for e in entries {
        at.insert(e.id, entrants.len());
        entrants.push(Entrant {
            name: e.label(),
            spec: league.spec_of::<G>(e)?,
        });
    }
    let mut pairings = Vec::with_capacity(todo.len());
    let mut by_id = HashMap::new();
    for s in todo {
        let (Some(&a), Some(&b)) = (at.get(&s.players[0]), at.get(&s.players[1])) else {
            continue;
        };
        by_id.insert(s.id as u64, s.clone());
        pairings.push(crate::play::runner::Pairing {
            id: s.id as u64,
            players: [a, b],
            seed: s.seed,
            opening_seed: s.opening_seed,
            round: s.round,
        });
    }
    // A connection of the workers' own (a connection is not shared
    // between threads).
    let db = Mutex::new(Db::open(league.db.path())?);
    let mut stored = 0u64;
    let mut failure: Option<anyhow::Error> = None;
    let feed = crate::play::runner::SliceFeed::new(&pairings);
    crate::play::runner::run_games_with::<G, _>(
        &entrants,
        cfg,
        openings,
        &feed,
        jobs.max(1),
        |rec| {
            // Stored on the worker at once: a killed run loses no finished game.
            let s = &by_id[&rec.id];
            let res = db
                .lock()
                .map_err(|_| anyhow::anyhow!("database lock poisoned"))
                .and_then(|db| db.store_game(s, &rec));
            (rec, res)
        },
        |(rec, res)| match res {
            Ok(()) => {
                stored += 1;
                on_game(&rec);
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        },
    );
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(stored)
}

pub mod finals;
pub use finals::{export, final_round, FinalOptions};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_database_and_seed_give_the_same_next_pairings() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let mut s = LeagueSettings::new(
            crate::game::GameKind::TicTacToe,
            vec!["random".into(), "greedy".into(), "optimal".into()],
        );
        s.degree = 2;
        let league = League::init(&a, s).unwrap();
        for (i, name) in ["ann", "bob", "cid"].iter().enumerate() {
            let (_, _) = league
                .db
                .add_version(name, &format!("{i:064}"), "submissions/x", Status::Pending)
                .unwrap();
        }
        for e in league.db.entries().unwrap() {
            league.db.decide(e.id, Status::Admitted, "").unwrap();
        }
        drop(league);
        let b = tmp.path().join("b");
        std::fs::create_dir_all(&b).unwrap();
        for f in [settings::SETTINGS, db::DB_FILE] {
            std::fs::copy(a.join(f), b.join(f)).unwrap();
        }
        let next = |dir: &Path| {
            let l = League::open(dir).unwrap();
            let ladder = l.ladder().unwrap();
            let active = l.active().unwrap();
            schedule_cycle(&l, &ladder, &active, 1)
                .unwrap()
                .into_iter()
                .map(|s| (s.players, s.seed, s.opening_seed))
                .collect::<Vec<_>>()
        };
        let (x, y) = (next(&a), next(&b));
        assert_eq!(x, y);
        // Everyone is placing: each plays its placement pairs and its two
        // neighbours, as a pair of games.
        assert!(x.len() >= 2 * 6, "{}", x.len());
        assert!(x
            .chunks(2)
            .all(|p| p[0].0 == [p[1].0[1], p[1].0[0]] && p[0].2 == p[1].2));
    }
}
