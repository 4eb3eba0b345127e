//! Matches: two bots, games in pairs (one opening, seats swapped), and the
//! numbers a bot author needs to decide whether a change helped: W-D-L,
//! Elo with its 95 % interval per game and per pair, normalized Elo, LOS,
//! draw ratio and the pentanomial pair counts ([`crate::play::stats`]), with an
//! optional SPRT that ends the match as soon as it is decided.
//!
//! A match is a [`crate::play::series`] of [`Schedule::two_bots`]: its games are
//! counted in id order, so the running figures, and the pair at which an
//! SPRT stops, are the same at any `--jobs` (docs/statistics.md, "How a
//! match counts"). It keeps no game in memory: a match of any length runs in
//! bounded memory, with its games streamed to `games.jsonl` when it has an
//! output folder.

pub mod output;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bot::BuiltinBots;
use crate::game::Rules;
use crate::play::journal::{BotAbout, RunSettings};
use crate::play::openings::Openings;
use crate::play::record::GameRecord;
use crate::play::runner::{Entrant, RunConfig};
use crate::play::schedule::Schedule;
use crate::play::series::{play_series, Flow, Series, Tally};
use crate::play::standings::{BotStats, Standings, Wdl};
use crate::play::stats::{
    draw_ratio, elo_pentanomial, elo_trinomial, los, nelo_pentanomial, Pentanomial, Sprt,
    SprtReport, SprtStatus,
};
use crate::play::Observer;
use crate::play::RunOptions;
use crate::protocol::{Forfeit, ForfeitReason};
use crate::tournament::report::Distinct;
use crate::tournament::Summary;

/// Forfeits whose details a match keeps (the first ones, by game id); the
/// rest are counted.
pub(crate) const FORFEITS_KEPT: usize = 20;

/// Shortest time between two running summaries sent to the observer's
/// status (a progress bar redraws no faster).
const STATUS_EVERY: Duration = Duration::from_millis(200);

/// Everything that decides a match's games and how they are counted.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Games to play at most (even, at least 2).
    pub games: u64,
    /// The master seed.
    pub seed: u64,
    /// Settings every game shares (game options, time control, random
    /// plies).
    pub run: RunConfig,
    /// The opening suite, if any (`--openings`).
    pub openings: Option<Arc<Openings>>,
    /// Stop as soon as this test is decided.
    pub sprt: Option<Sprt>,
    /// Tell the observer the running figures (a note) every this many
    /// games counted; 0 never.
    pub rating_interval: u64,
}

/// Why a match stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every scheduled game was played.
    Complete,
    /// The SPRT was decided before the games ran out.
    Decided,
    /// Interrupted by a signal.
    Interrupted,
}

/// The running figures of a match, from the first bot's side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchStats {
    /// The first bot's wins, draws and losses.
    pub wdl: Wdl,
    /// The game pairs (one opening, seats swapped), by the first bot's
    /// points in the pair.
    pub pentanomial: Pentanomial,
}

impl MatchStats {
    /// The statistics as JSON: counts, Elo intervals (numbers, or `"+inf"`
    /// and `"-inf"` when unbounded), LOS and draw ratio.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "wins": self.wdl.wins,
            "draws": self.wdl.draws,
            "losses": self.wdl.losses,
            "score": self.wdl.score(),
            "elo": elo_trinomial(&self.wdl),
            "los": los(&self.wdl),
            "draw_ratio": draw_ratio(&self.wdl),
            "pairs": self.pentanomial.pairs(),
            "pentanomial": self.pentanomial,
            "elo_pairs": elo_pentanomial(&self.pentanomial),
            "nelo": nelo_pentanomial(&self.pentanomial),
        })
    }
}

/// A match's state as it goes: what the observer is told every
/// `rating_interval` games (as a note) and a few times a second (as the
/// status beside the progress bar).
///
/// Displays as one line: `40/100 games: 25-5-10 (68.8%), Elo +137 [+60,
/// +229], nElo +156 [+44, +268], LOS 99.1%, draws 12.5%, pairs [1, 2, 6, 5,
/// 6], LLR 1.23 (-2.94, 2.94) continue` (the Elo is the per-pair one; the
/// LLR only with an SPRT). `{:#}` is the short form for a progress bar:
/// `68.8% Elo +137 [+60, +229] LLR 1.23 (-2.94, 2.94)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Interim {
    /// Games counted.
    pub games: u64,
    /// Games scheduled.
    pub scheduled: u64,
    /// The figures.
    pub stats: MatchStats,
    /// The SPRT after the last complete pair.
    pub sprt: Option<SprtReport>,
}

impl fmt::Display for Interim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = &self.stats.wdl;
        let p = &self.stats.pentanomial;
        if f.alternate() {
            write!(f, "{:.1}% Elo {}", 100.0 * w.score(), elo_pentanomial(p))?;
        } else {
            write!(
                f,
                "{}/{} games: {} ({:.1}%), Elo {}, nElo {}, LOS {:.1}%, draws {:.1}%, pairs {p}",
                self.games,
                self.scheduled,
                w.text(),
                100.0 * w.score(),
                elo_pentanomial(p),
                nelo_pentanomial(p),
                100.0 * los(w),
                100.0 * draw_ratio(w),
            )?;
        }
        match &self.sprt {
            Some(r) if f.alternate() => {
                write!(f, " LLR {:.2} ({:.2}, {:.2})", r.llr, r.lower, r.upper)
            }
            Some(r) => write!(f, ", {r}"),
            None => Ok(()),
        }
    }
}

/// A forfeit kept for the report: which game, who, and the details.
#[derive(Clone, Debug, PartialEq)]
pub struct ForfeitNote {
    /// The game's id.
    pub id: u64,
    /// The bot that forfeited.
    pub bot: String,
    /// The details.
    pub forfeit: Forfeit,
}

/// The SPRT's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtOutcome {
    /// The test.
    pub test: Sprt,
    /// LLR, bounds and verdict after the last counted pair.
    pub report: SprtReport,
}

/// What a match did.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// The two bots' names, first bot first.
    pub names: [String; 2],
    /// Standings of the two bots and distinct games (for the tables and
    /// files a tournament writes too).
    pub summary: Summary,
    /// The figures, from the first bot's side.
    pub stats: MatchStats,
    /// The SPRT, if one ran.
    pub sprt: Option<SprtOutcome>,
    /// Why it stopped.
    pub ending: Ending,
    /// The first [`FORFEITS_KEPT`] forfeits, by game id.
    pub forfeits: Vec<ForfeitNote>,
    /// All forfeits counted.
    pub forfeit_count: u64,
    /// Games played by this process.
    pub played: u64,
    /// Games found already played in the output folder.
    pub resumed: u64,
    /// Games that finished after the SPRT was decided: not counted, and
    /// removed from the output folder.
    pub discarded: u64,
    /// Wall time of the games played.
    pub elapsed: Duration,
}

impl MatchReport {
    /// Games counted.
    pub fn games(&self) -> u64 {
        self.stats.wdl.games()
    }

    /// A warning when fewer than half of the games (of 4 or more) are
    /// distinct up to symmetry: the bots replay the same games, and the
    /// figures count them as if they were new.
    pub fn few_distinct(&self) -> Option<String> {
        let games = self.games();
        let distinct = self.summary.distinct;
        (games >= 4 && !self.summary.distinct_capped && distinct * 2 < games).then(|| {
            format!(
                "only {distinct} of {games} games are distinct (up to symmetry): the bots \
                 replay the same games, and repeated games add no information; vary them \
                 with --random-plies or --openings, or with bots whose play varies by seed"
            )
        })
    }

    /// The per-bot standings, first bot first.
    pub(crate) fn bots(&self) -> Vec<&BotStats> {
        self.names
            .iter()
            .filter_map(|n| self.summary.standings.bots.get(n))
            .collect()
    }

    /// The match as JSON (`--json`, and `standings.json` of its folder):
    /// the game, seed, games scheduled and counted, per bot its totals
    /// (`bots`, as before), and `statistics` from the first bot's side:
    /// W-D-L, score, `elo` (per game), `elo_pairs` (per pair), `nelo`,
    /// `los`, `draw_ratio`, `pairs` and `pentanomial`; `sprt` (null without
    /// one) with the test, the LLR, its bounds and `result` (`"H0"`,
    /// `"H1"` or `null` while undecided). An unbounded Elo is the string
    /// `"+inf"` or `"-inf"`.
    pub fn to_json(&self) -> Value {
        let bots: Vec<Value> = self.bots().into_iter().map(bot_json).collect();
        let sprt = self.sprt.map(|s| {
            json!({
                "test": s.test,
                "llr": s.report.llr,
                "lower": s.report.lower,
                "upper": s.report.upper,
                "result": match s.report.status {
                    SprtStatus::AcceptH0 => Value::from("H0"),
                    SprtStatus::AcceptH1 => Value::from("H1"),
                    SprtStatus::Continue => Value::Null,
                },
            })
        });
        let mut out = json!({
            "game": self.summary.game,
            "seed": self.summary.seed,
            "scheduled": self.summary.scheduled,
            "games": self.games(),
            "ending": match self.ending {
                Ending::Complete => "complete",
                Ending::Decided => "sprt",
                Ending::Interrupted => "interrupted",
            },
            "first": self.names[0],
            "second": self.names[1],
            "bots": bots,
            "statistics": self.stats.to_json(),
            "sprt": sprt,
            "distinct_games": self.summary.distinct,
            "distinct_games_capped": self.summary.distinct_capped,
        });
        self.summary.add_rule_json(&mut out);
        out
    }
}

/// One bot's totals as JSON.
fn bot_json(s: &BotStats) -> Value {
    let forfeits: serde_json::Map<String, Value> = ForfeitReason::ALL
        .iter()
        .map(|r| {
            (
                r.name().to_string(),
                json!(s.forfeits.get(r).copied().unwrap_or(0)),
            )
        })
        .collect();
    json!({
        "name": s.name,
        "games": s.total.games(),
        "wins": s.total.wins,
        "draws": s.total.draws,
        "losses": s.total.losses,
        "points": s.total.points(),
        "score": s.total.score(),
        "as_player1": s.by_seat[0],
        "as_player2": s.by_seat[1],
        "avg_move_us": s.avg_move_us(),
        "forfeits": forfeits,
    })
}

/// What a match counts, game by game in id order.
struct MatchTally<'o> {
    scheduled: u64,
    standings: Standings,
    distinct: Distinct,
    stats: MatchStats,
    /// The first game of the pair being counted: its pair number and the
    /// first bot's points in it.
    half: Option<(u64, f64)>,
    sprt: Option<Sprt>,
    sprt_report: Option<SprtReport>,
    forfeits: Vec<ForfeitNote>,
    forfeit_count: u64,
    rating_interval: u64,
    observer: &'o dyn Observer,
    last_status: Instant,
}

impl<'o> MatchTally<'o> {
    fn new(
        names: &[String; 2],
        scheduled: u64,
        sprt: Option<Sprt>,
        rating_interval: u64,
        observer: &'o dyn Observer,
    ) -> Self {
        MatchTally {
            scheduled,
            standings: Standings::with_bots(names.iter().map(String::as_str)),
            distinct: Distinct::default(),
            stats: MatchStats::default(),
            half: None,
            sprt,
            sprt_report: sprt.map(|s| s.report(&Pentanomial::default())),
            forfeits: Vec::new(),
            forfeit_count: 0,
            rating_interval,
            observer,
            last_status: Instant::now(),
        }
    }

    /// The report of what was counted (the counts of games played and read
    /// are the caller's to fill in).
    fn report<G: crate::game::Game>(
        self,
        names: [String; 2],
        seed: u64,
        ending: Ending,
        rules: Rules,
    ) -> MatchReport {
        let summary = Summary {
            game: G::KIND.name().into(),
            seed,
            scheduled: self.scheduled,
            rules: G::KIND.has_rules().then_some(rules),
            standings: self.standings,
            distinct: self.distinct.count(),
            distinct_capped: self.distinct.capped(),
            names: names.to_vec(),
            swiss: None,
        };
        MatchReport {
            names,
            summary,
            stats: self.stats,
            sprt: self
                .sprt
                .zip(self.sprt_report)
                .map(|(test, report)| SprtOutcome { test, report }),
            ending,
            forfeits: self.forfeits,
            forfeit_count: self.forfeit_count,
            played: 0,
            resumed: 0,
            discarded: 0,
            elapsed: Duration::ZERO,
        }
    }

    fn interim(&self) -> Interim {
        Interim {
            games: self.stats.wdl.games(),
            scheduled: self.scheduled,
            stats: self.stats.clone(),
            sprt: self.sprt_report,
        }
    }
}

impl Tally for MatchTally<'_> {
    fn add(&mut self, rec: &GameRecord, fingerprint: u64) -> Flow {
        self.standings.add(rec);
        self.distinct.add(fingerprint);
        // The first bot is player 1 in even ids (Schedule::two_bots).
        let seat = if rec.id.is_multiple_of(2) {
            crate::game::Seat::One
        } else {
            crate::game::Seat::Two
        };
        let points = rec.points(seat);
        self.stats.wdl.add(points);
        let pair = rec.id / 2;
        let mut flow = Flow::Go;
        match self.half.take() {
            Some((p, first)) if p == pair => {
                self.stats.pentanomial.add_pair(first, points);
                if let Some(sprt) = &self.sprt {
                    let report = sprt.report(&self.stats.pentanomial);
                    self.sprt_report = Some(report);
                    if report.status != SprtStatus::Continue {
                        flow = Flow::Stop;
                    }
                }
            }
            // A game whose partner never finished (an interrupted run) is
            // counted in W-D-L but belongs to no pair.
            _ => self.half = Some((pair, points)),
        }
        if let Some(f) = &rec.forfeit {
            self.forfeit_count += 1;
            if self.forfeits.len() < FORFEITS_KEPT {
                self.forfeits.push(ForfeitNote {
                    id: rec.id,
                    bot: rec.players[f.seat.index()].clone(),
                    forfeit: f.clone(),
                });
            }
        }
        let games = self.stats.wdl.games();
        let every = self.rating_interval;
        if flow == Flow::Stop || (every > 0 && games.is_multiple_of(every)) {
            self.observer.note(&self.interim().to_string());
        }
        if flow == Flow::Stop || self.last_status.elapsed() >= STATUS_EVERY {
            self.last_status = Instant::now();
            self.observer.status(&format!("{:#}", self.interim()));
        }
        flow
    }
}

/// The configuration a match's run folder keeps (`tournament.toml`): a
/// resumed folder must hold the same, and the refusal names what differs.
fn folder_config(
    names: &[String; 2],
    cfg: &MatchConfig,
    kind: crate::game::GameKind,
) -> toml::Table {
    let mut t = toml::Table::new();
    let int = |v: u64| toml::Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    t.insert("kind".into(), "match".into());
    t.insert("game".into(), kind.name().into());
    // Only Notakto has a board count (folders written before this kept
    // `boards = 3` for every game; `config_differences` reads that as unset).
    if let Some(b) = kind.boards(&cfg.run.options) {
        t.insert("boards".into(), int(b as u64));
    }
    // Absent is standard, as in folders written before there was another.
    if !cfg.run.options.rules.is_standard() {
        t.insert("rules".into(), cfg.run.options.rules.name().into());
    }
    t.insert("games".into(), int(cfg.games));
    t.insert("seed".into(), int(cfg.seed));
    t.insert("random_plies".into(), int(cfg.run.random_plies as u64));
    t.insert("time_ms".into(), int(cfg.run.time.move_ms));
    t.insert("startup_ms".into(), int(cfg.run.time.startup_ms));
    crate::play::journal::insert_clock(&mut t, &cfg.run.time);
    if let Some(s) = &cfg.sprt {
        t.insert("sprt".into(), s.to_string().into());
    }
    // The suite by its contents, not its path: a resumed match may name
    // the same file another way.
    if let Some(o) = &cfg.openings {
        t.insert("openings_sha256".into(), o.sha256().into());
        t.insert("shuffle_openings".into(), o.shuffled().into());
    }
    t.insert(
        "bots".into(),
        toml::Value::Array(names.iter().map(|n| n.as_str().into()).collect()),
    );
    t
}

/// What the report shows about a match (`run.json`).
fn settings<G: BuiltinBots>(
    entrants: &[Entrant; 2],
    cfg: &MatchConfig,
    title: Option<String>,
) -> RunSettings {
    let mut s = RunSettings::new::<G>("match", &cfg.run.options);
    s.title = title;
    s.games = Some(cfg.games);
    s.time_ms = Some(cfg.run.time.move_ms);
    s.startup_ms = Some(cfg.run.time.startup_ms);
    s.openings = cfg.openings.as_ref().map(|o| o.file_name());
    s.shuffle_openings = cfg.openings.as_ref().is_some_and(|o| o.shuffled());
    s.random_plies = Some(cfg.run.random_plies as u64);
    s.seed = Some(cfg.seed);
    s.sprt = cfg.sprt.as_ref().map(|p| p.to_string());
    s.bots = entrants
        .iter()
        .map(|e| BotAbout::of::<G>(&e.name, &e.spec))
        .collect();
    s
}

/// A match that cannot be played as configured: the data, for the caller
/// to word (the command line names its flags).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum MatchError {
    /// The number of games is zero or odd.
    #[error("the number of games must be a positive even number (games come in pairs, seats swapped), got {0}")]
    OddGames(u64),
    /// More games than a match plays (2^40).
    #[error("the number of games must be at most {MAX_GAMES} (2^40), got {0}")]
    TooManyGames(u64),
    /// No worker to play the games.
    #[error("the number of workers must be at least 1")]
    NoJobs,
}

/// The most games a match plays.
pub(crate) const MAX_GAMES: u64 = 1 << 40;

/// Checks a match's number of games: even (games come in pairs), at least
/// 2 and at most [`MAX_GAMES`] (a match streams its games, so memory does
/// not grow with the count).
///
/// ```
/// use referee::matches::check_games;
///
/// assert!(check_games(100).is_ok());
/// assert!(check_games(7).is_err()); // games come in pairs
/// ```
pub fn check_games(games: u64) -> Result<(), MatchError> {
    if games == 0 || !games.is_multiple_of(2) {
        return Err(MatchError::OddGames(games));
    }
    // The same bound as a tournament's games_per_pairing: far beyond any
    // run, and game ids stay well inside every integer they pass through.
    if games > MAX_GAMES {
        return Err(MatchError::TooManyGames(games));
    }
    Ok(())
}

/// Plays a match between `entrants[0]` (the first bot, whose side every
/// figure takes) and `entrants[1]`, resuming from and writing to
/// `opts.out` when given.
///
/// ```
/// use referee::bot::BotSpec;
/// use referee::game::TicTacToe;
/// use referee::matches::{self, MatchConfig};
/// use referee::play::runner::{Entrant, RunConfig};
/// use referee::play::{RunOptions, Silent};
///
/// let entrants = ["greedy", "random"].map(|n| Entrant {
///     name: n.to_string(),
///     spec: BotSpec::resolve::<TicTacToe>(n).unwrap(),
/// });
/// let cfg = MatchConfig {
///     games: 100,
///     seed: 1,
///     run: RunConfig {
///         options: Default::default(),
///         time: Default::default(),
///         random_plies: 1,
///         affinity: false,
///     },
///     openings: None,
///     sprt: None,
///     rating_interval: 0,
/// };
/// let r = matches::run::<TicTacToe>(&entrants, &cfg, &RunOptions::default(), &Silent)?;
/// assert_eq!(r.games(), 100);
/// assert_eq!(r.stats.pentanomial.pairs(), 50);
/// assert!(r.stats.wdl.score() > 0.8); // greedy beats random
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run<G: BuiltinBots>(
    entrants: &[Entrant; 2],
    cfg: &MatchConfig,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> anyhow::Result<MatchReport> {
    check_games(cfg.games)?;
    if opts.jobs == 0 {
        return Err(MatchError::NoJobs.into());
    }
    let names = [entrants[0].name.clone(), entrants[1].name.clone()];
    let schedule = Schedule::two_bots(cfg.games, cfg.seed);
    if let (Some((k, n)), Some(_)) = (opts.shard, &cfg.sprt) {
        return Err(crate::play::journal::RunError::NoShards {
            k,
            n,
            why: "a match with an SPRT cannot be split into shards: the test must see the games \
                  in order to stop at the right pair",
        }
        .into());
    }
    let series = Series {
        entrants,
        schedule: &schedule,
        ids: crate::tournament::shard_ids(&schedule, opts.shard)?,
        cfg: cfg.run.clone(),
        openings: cfg.openings.as_deref(),
        config: folder_config(&names, cfg, G::KIND),
        settings: settings::<G>(entrants, cfg, opts.title.clone()),
    };
    let mut tally = MatchTally::new(&names, cfg.games, cfg.sprt, cfg.rating_interval, observer);
    let played = play_series::<G>(&series, opts, observer, &mut tally)?;
    let ending = if played.stopped.is_some() {
        Ending::Decided
    } else if crate::play::interrupt::interrupted().is_some() {
        Ending::Interrupted
    } else {
        Ending::Complete
    };
    let mut report = tally.report::<G>(names, cfg.seed, ending, cfg.run.options.rules);
    report.played = played.played;
    report.resumed = played.resumed;
    report.discarded = played.discarded;
    report.elapsed = played.elapsed;
    // An interrupted match's standings would look final: the games on disk
    // are what is kept, and `--resume` writes the standings when done.
    if let (Some(folder), false) = (&played.folder, ending == Ending::Interrupted) {
        write_standings(folder, &report)?;
    }
    Ok(report)
}

/// Writes a match's `standings.json` (its `--json` summary) and
/// `standings.csv` into its folder.
fn write_standings(
    folder: &crate::play::journal::RunFolder,
    report: &MatchReport,
) -> anyhow::Result<()> {
    let json = crate::escape::json::to_string_pretty(&report.to_json())? + "\n";
    folder.write_file("standings.json", json.as_bytes())?;
    folder.write_file(
        "standings.csv",
        crate::tournament::standings::standings_csv(&report.summary).as_bytes(),
    )
}

/// Combines the output folders of a match played in shards (`--shard K/N`)
/// into the match's report, exactly as if it had been played in one go:
/// the games are counted in id order by the match's own tally. With `out`,
/// writes the merged games (in id order), configuration and standings
/// there. Folders of different matches, or of the same match with other
/// bots' programs, are refused, naming the difference.
pub fn merge(
    dirs: &[std::path::PathBuf],
    out: Option<&std::path::Path>,
    title: Option<&str>,
    observer: &dyn Observer,
) -> anyhow::Result<MatchReport> {
    use crate::tournament::merge::{merge_games, open_out, same_run, Expected};
    use anyhow::bail;
    let config = same_run(dirs)?;
    let shown = dirs[0].display();
    let text = |key: &str| config.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let int = |key: &str| -> anyhow::Result<u64> {
        config
            .get(key)
            .and_then(|v| v.as_integer())
            .and_then(|i| u64::try_from(i).ok())
            .ok_or_else(|| anyhow::anyhow!("{shown}: its configuration has no `{key}`"))
    };
    if text("kind").as_deref() != Some("match") {
        bail!("{shown} holds a tournament, not a match");
    }
    if config.contains_key("sprt") {
        bail!("{shown} holds a match with an SPRT, which is never played in shards");
    }
    let names: Vec<String> = config
        .get("bots")
        .and_then(|b| b.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let [first, second]: [String; 2] = names
        .try_into()
        .map_err(|_| anyhow::anyhow!("{shown}: its configuration does not name two bots"))?;
    let names = [first, second];
    let kind: crate::game::GameKind = text("game")
        .ok_or_else(|| anyhow::anyhow!("{shown}: its configuration has no `game`"))?
        .parse()
        .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let (games, seed) = (int("games")?, int("seed")?);
    let boards = match config.get("boards") {
        Some(_) => u8::try_from(int("boards")?).unwrap_or(3),
        None => 3,
    };
    let rules: Rules = match text("rules") {
        Some(r) => r.parse().map_err(|e| anyhow::anyhow!("{shown}: {e}"))?,
        None => Rules::Standard,
    };
    let schedule = Schedule::two_bots(games, seed);
    let check = |r: &GameRecord| -> anyhow::Result<()> {
        let p = schedule.pairing(r.id);
        if r.players != p.players.map(|i| names[i].clone()) || r.seed != p.seed {
            bail!("its players or seed are not the match's");
        }
        Ok(())
    };
    let folder = out.map(|d| open_out(d, &config, dirs, title)).transpose()?;
    let mut tally = MatchTally::new(&names, games, None, 0, observer);
    let report = crate::with_game!(kind, G => {
        let expected = Expected {
            ids: 0..games,
            check: &check,
            standard: <G as crate::game::Game>::start(&crate::game::GameOptions { boards, ..Default::default() })
                .to_string(),
        };
        merge_games::<G>(dirs, &expected, &mut tally, folder.as_ref(), observer)?;
        tally.report::<G>(names.clone(), seed, Ending::Complete, rules)
    });
    if let Some(folder) = &folder {
        write_standings(folder, &report)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::{BotSpec, BuiltinSpec, TimeControl};
    use crate::game::{GameOptions, TicTacToe};
    use crate::play::Silent;

    #[test]
    fn game_counts_are_even_and_bounded() {
        assert!(check_games(2).is_ok() && check_games(MAX_GAMES).is_ok());
        for bad in [0, 3, MAX_GAMES + 2, u64::MAX - 1] {
            let e = check_games(bad).unwrap_err().to_string();
            assert!(e.starts_with("the number of games must be"), "{e}");
        }
    }

    fn entrants(a: &str, b: &str) -> [Entrant; 2] {
        [a, b].map(|n| Entrant {
            name: n.to_string(),
            spec: BotSpec::Builtin(BuiltinSpec::parse(n)),
        })
    }

    fn config(games: u64, sprt: Option<&str>) -> MatchConfig {
        MatchConfig {
            games,
            seed: 3,
            run: RunConfig {
                options: GameOptions::default(),
                time: TimeControl::default(),
                random_plies: 2,
                affinity: false,
            },
            openings: None,
            sprt: sprt.map(|s| s.parse().unwrap()),
            rating_interval: 0,
        }
    }

    fn jobs(n: usize) -> RunOptions {
        RunOptions {
            jobs: n,
            affinity: false,
            ..RunOptions::default()
        }
    }

    #[test]
    fn pairs_and_games_agree_and_do_not_depend_on_jobs() {
        let e = entrants("greedy", "random");
        let a = run::<TicTacToe>(&e, &config(200, None), &jobs(1), &Silent).unwrap();
        let b = run::<TicTacToe>(&e, &config(200, None), &jobs(2), &Silent).unwrap();
        assert_eq!(a.stats, b.stats);
        assert_eq!(a.ending, Ending::Complete);
        assert_eq!(a.stats.wdl.games(), 200);
        assert_eq!(a.stats.pentanomial.pairs(), 100);
        // The pairs hold the same points as the games.
        assert_eq!(a.stats.pentanomial.score(), a.stats.wdl.score());
        assert_eq!(a.summary.standings.bots["greedy"].total, a.stats.wdl);
    }

    #[test]
    fn an_sprt_stops_at_the_same_pair_at_any_jobs() {
        let e = entrants("greedy", "random");
        let cfg = config(100_000, Some("elo0=0,elo1=20,alpha=0.05,beta=0.05"));
        let a = run::<TicTacToe>(&e, &cfg, &jobs(1), &Silent).unwrap();
        let b = run::<TicTacToe>(&e, &cfg, &jobs(2), &Silent).unwrap();
        assert_eq!(a.ending, Ending::Decided);
        assert_eq!(a.sprt.unwrap().report.status, SprtStatus::AcceptH1);
        assert_eq!(a.stats, b.stats);
        assert!(a.games() < 1000, "{}", a.games());
        assert_eq!(a.games() % 2, 0);
        // It stopped at the first pair where the LLR crossed a bound: the
        // same match one pair shorter is still undecided.
        let mut shorter = cfg.clone();
        shorter.games = a.games() - 2;
        let c = run::<TicTacToe>(&e, &shorter, &jobs(2), &Silent).unwrap();
        assert_eq!(c.ending, Ending::Complete);
        assert_eq!(c.sprt.unwrap().report.status, SprtStatus::Continue);
    }

    #[test]
    fn bad_counts_are_one_line_errors() {
        let e = entrants("greedy", "random");
        for games in [0, 3] {
            let err = run::<TicTacToe>(&e, &config(games, None), &jobs(1), &Silent)
                .unwrap_err()
                .to_string();
            assert!(err.contains("positive even number"), "{err}");
        }
        let err = run::<TicTacToe>(&e, &config(2, None), &jobs(0), &Silent).unwrap_err();
        assert_eq!(err.downcast_ref(), Some(&MatchError::NoJobs));
    }
}
