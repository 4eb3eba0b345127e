//! Tournaments: a TOML file ([`config`]) becomes a pure schedule
//! ([`schedule`]) whose games are played in parallel, appended to a run
//! folder as they finish ([`crate::play::journal`]) and summed up at the end
//! ([`report`]).

pub(crate) mod config;
pub(crate) mod merge;
pub(crate) mod report;
pub mod standings;
pub mod swiss;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;

use crate::bot::BuiltinBots;
use crate::play::journal::{self, RunFolder};
use crate::play::record::GameRecord;
use crate::play::runner::{Entrant, RunConfig};
use crate::play::series::{play_series, Flow, Games, Series, Tally};
use crate::play::standings::Standings;
use crate::play::{Observer, RunOptions};
use crate::tournament::swiss::{Pairer, SwissGames};

pub use config::{Plan, Tournament, TournamentFile};
pub use report::{Ranked, Summary, SwissSummary};

/// What a run did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The results over every game of the run's slice, resumed games included.
    pub summary: Summary,
    /// Games played by this process.
    pub played: u64,
    /// Games found already played in the output folder.
    pub resumed: u64,
    /// Wall time of the games played.
    pub elapsed: Duration,
    /// Games in the run's slice of the schedule (the whole schedule
    /// without `--shard`).
    pub slice_games: u64,
}

/// A tournament's tally: standings and distinct games, and a Swiss
/// tournament's pairer, which pairs each round when the last game of the
/// round before is counted.
struct TournamentTally<'a> {
    standings: Standings,
    distinct: report::Distinct,
    swiss: Option<(&'a SwissGames, Pairer)>,
}

impl Tally for TournamentTally<'_> {
    fn add(&mut self, rec: &GameRecord, fingerprint: u64) -> Flow {
        self.standings.add(rec);
        self.distinct.add(fingerprint);
        if let Some((games, pairer)) = &mut self.swiss {
            pairer.add(games, rec);
        }
        Flow::Go
    }
}

/// The ids of shard `K/N` of `sched`, or every id; a shard count beyond the
/// schedule's pairs of games (some shards would be empty) is an error.
pub(crate) fn shard_ids(
    sched: &crate::play::schedule::Schedule,
    shard: Option<(u64, u64)>,
) -> anyhow::Result<std::ops::Range<u64>> {
    Ok(match shard {
        Some((k, n)) => {
            let couples = sched.total() / 2;
            if n > couples {
                return Err(journal::RunError::TooManyShards { k, n, couples }.into());
            }
            sched.shard(k, n)
        }
        None => 0..sched.total(),
    })
}

/// Runs the tournament (or its shard), resuming from and writing to the
/// output folder when one is given.
pub fn run<G: BuiltinBots>(
    t: &Tournament,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> anyhow::Result<RunReport> {
    let mut cfg = t.run_config();
    cfg.affinity = opts.affinity;
    let what = What {
        entrants: &t.entrants,
        names: t.file.names.clone(),
        plan: &t.file.plan,
        cfg,
        openings: t.file.openings.as_deref(),
        config: t.file.canonical(),
        settings: t.settings::<G>(opts.title.clone()),
    };
    play::<G>(&what, opts, observer)
}

/// Runs a tournament between bots made in code, without a tournament file:
/// a round-robin, a gauntlet or a Swiss tournament as `plan` says
/// ([`Plan::round_robin`], [`Plan::gauntlet`], [`Plan::swiss`]; the
/// plan's bot indices refer to `entrants`), every game under `cfg`.
/// `opts` works as for [`run`]: `jobs` games at once, and with `out` a run
/// folder that `resume` continues; the folder's `tournament.toml` records
/// the plan and settings, with the bots' names, to recognise the run.
/// `opts.affinity` overrides `cfg.affinity`. The results, standings and
/// (Swiss) Buchholz tiebreaks are a function of the entrants, the plan and
/// the settings, never of `jobs`.
///
/// ```
/// use referee::bot::BotSpec;
/// use referee::game::TicTacToe;
/// use referee::play::Silent;
/// use referee::play::runner::{Entrant, RunConfig};
/// use referee::tournament::swiss::Seeding;
/// use referee::play::RunOptions;
/// use referee::tournament::{self, Plan};
///
/// let entrants: Vec<Entrant> = ["optimal", "greedy", "random"]
///     .iter()
///     .map(|n| Ok(Entrant { name: n.to_string(), spec: BotSpec::resolve::<TicTacToe>(n)? }))
///     .collect::<Result<_, referee::bot::BotError>>()?;
/// let plan = Plan::swiss(entrants.len(), Some(3), 2, 1, Seeding::Shuffle).map_err(anyhow::Error::msg)?;
/// let cfg = RunConfig {
///     options: Default::default(),
///     time: Default::default(),
///     random_plies: 1,
///     affinity: false,
/// };
/// let run = tournament::run_entrants::<TicTacToe>(&entrants, &plan, &cfg, &RunOptions::default(), &Silent)?;
/// // Three rounds of one pairing (one bot sits out each round) of 2 games.
/// assert_eq!(run.summary.standings.games, 6);
/// for row in run.summary.ranked() {
///     println!("{} {:.3} {:?} byes {:?}", row.bot.name, row.bot.total.score(), row.buchholz, row.byes);
///     assert_eq!(row.byes, Some(1));
/// }
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run_entrants<G: BuiltinBots>(
    entrants: &[Entrant],
    plan: &Plan,
    cfg: &RunConfig,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> anyhow::Result<RunReport> {
    if !plan.fits(entrants.len()) {
        bail!(
            "the plan does not fit {} entrants (make it with that number of bots)",
            entrants.len()
        );
    }
    let names: Vec<String> = entrants.iter().map(|e| e.name.clone()).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            bail!("two entrants are named '{n}': names must be unique");
        }
    }
    let mut cfg = cfg.clone();
    cfg.affinity = opts.affinity;
    let mut settings = config::run_settings::<G>(entrants, plan, &names, &cfg);
    settings.title = opts.title.clone();
    let what = What {
        entrants,
        names: names.clone(),
        plan,
        config: code_config(G::KIND, &names, plan, &cfg),
        settings,
        cfg,
        openings: None,
    };
    play::<G>(&what, opts, observer)
}

/// What a tournament run from code keeps in its run folder to be
/// recognised when resumed: the plan and settings, with the bots' names
/// (the bots themselves are checked by the folder's fingerprints).
fn code_config(
    game: crate::game::GameKind,
    names: &[String],
    plan: &Plan,
    cfg: &RunConfig,
) -> toml::Table {
    let int = |x: u64| toml::Value::Integer(i64::try_from(x).unwrap_or(i64::MAX));
    let mut t = toml::Table::new();
    t.insert("game".into(), game.name().into());
    if let Some(b) = game.boards(&cfg.options) {
        t.insert("boards".into(), int(b as u64));
    }
    t.insert("random_plies".into(), int(cfg.random_plies as u64));
    t.insert("time_ms".into(), int(cfg.time.move_ms));
    t.insert("startup_ms".into(), int(cfg.time.startup_ms));
    crate::play::journal::insert_clock(&mut t, &cfg.time);
    t.insert("seed".into(), int(plan.seed()));
    t.insert("games_per_pairing".into(), int(plan.games_per_pairing()));
    match plan {
        Plan::Fixed { schedule: s, .. } => {
            t.insert("format".into(), "fixed".into());
            let pairs: Vec<toml::Value> = s
                .pairs
                .iter()
                .map(|p| toml::Value::Array(p.iter().map(|&i| int(i as u64)).collect()))
                .collect();
            t.insert("pairs".into(), toml::Value::Array(pairs));
            if s.fixed_seats {
                t.insert("fixed_seats".into(), true.into());
            }
        }
        Plan::Swiss(s) => {
            t.insert("format".into(), "swiss".into());
            t.insert("rounds".into(), int(s.rounds));
            t.insert("seeding".into(), s.seeding.name().into());
        }
    }
    t.insert(
        "entrants".into(),
        toml::Value::Array(names.iter().map(|n| n.as_str().into()).collect()),
    );
    t
}

/// Everything a tournament run needs, from a file or from code.
struct What<'a> {
    entrants: &'a [Entrant],
    names: Vec<String>,
    plan: &'a Plan,
    cfg: RunConfig,
    openings: Option<&'a crate::play::openings::Openings>,
    config: toml::Table,
    settings: crate::play::journal::RunSettings,
}

fn play<G: BuiltinBots>(
    w: &What,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> anyhow::Result<RunReport> {
    let (ids, swiss) = match w.plan {
        Plan::Fixed { schedule: s, .. } => (shard_ids(s, opts.shard)?, None),
        Plan::Swiss(s) => {
            if let Some((k, n)) = opts.shard {
                return Err(journal::RunError::NoShards {
                    k,
                    n,
                    why: "a Swiss tournament cannot be split into shards (each round is paired \
                          from the results of the rounds before); run it whole",
                }
                .into());
            }
            (0..s.total(), Some(Pairer::start(s)))
        }
    };
    let (swiss_games, pairer) = match swiss {
        Some((g, p)) => (Some(g), Some(p)),
        None => (None, None),
    };
    let games: &dyn Games = match (w.plan, &swiss_games) {
        (_, Some(g)) => g,
        (Plan::Fixed { schedule: s, .. }, None) => s,
        (Plan::Swiss(_), None) => unreachable!("a Swiss plan has its games"),
    };
    let series = Series {
        entrants: w.entrants,
        schedule: games,
        ids: ids.clone(),
        cfg: w.cfg.clone(),
        openings: w.openings,
        config: w.config.clone(),
        settings: w.settings.clone(),
    };
    let mut tally = TournamentTally {
        standings: Standings::with_bots(w.names.iter().map(String::as_str)),
        distinct: report::Distinct::default(),
        swiss: swiss_games.as_ref().zip(pairer),
    };
    let played = play_series::<G>(&series, opts, observer, &mut tally)?;
    let summary = Summary {
        game: G::KIND.name().into(),
        seed: w.plan.seed(),
        scheduled: w.plan.total(),
        rules: G::KIND.has_rules().then_some(w.cfg.options.rules),
        standings: tally.standings,
        distinct: tally.distinct.count(),
        distinct_capped: tally.distinct.capped(),
        names: w.names.clone(),
        swiss: swiss_games.as_ref().map(|g| SwissSummary {
            rounds: g.swiss.rounds,
            games_per_pairing: g.swiss.games_per_pairing,
            paired: g.rounds(),
        }),
    };
    // An interrupted run's standings would look final; the games on disk
    // are what is kept, and `--resume` writes the standings when done.
    if let (Some(folder), None) = (&played.folder, crate::play::interrupt::interrupted()) {
        write_standings(folder, &summary)?;
    }
    Ok(RunReport {
        summary,
        played: played.played,
        resumed: played.resumed,
        elapsed: played.elapsed,
        slice_games: ids.end - ids.start,
    })
}

/// Writes `standings.json` and `standings.csv` into the run folder.
pub fn write_standings(folder: &RunFolder, summary: &Summary) -> anyhow::Result<()> {
    let json = crate::escape::json::to_string_pretty(&summary.to_json())? + "\n";
    folder.write_file("standings.json", json.as_bytes())?;
    folder.write_file(
        "standings.csv",
        crate::tournament::standings::standings_csv(summary).as_bytes(),
    )?;
    Ok(())
}

/// Combines the output folders of the shards of one tournament into the
/// standings of the whole, reading the games one at a time; with `out`,
/// writes them (in id order) and the configuration into that new run
/// folder. Every folder must hold the same configuration and bots'
/// programs, and together they must hold every game of the schedule
/// exactly once.
pub fn merge(
    dirs: &[PathBuf],
    out: Option<&Path>,
    title: Option<&str>,
    observer: &dyn Observer,
) -> anyhow::Result<(toml::Table, Summary)> {
    let config = merge::same_run(dirs)?;
    if config.get("kind").and_then(|k| k.as_str()) == Some("match") {
        bail!(
            "{} holds a match, not a tournament",
            dirs.first()
                .map_or_else(String::new, |d| d.display().to_string())
        );
    }
    let first = &dirs[0];
    let text = toml::to_string(&config)?;
    let file = TournamentFile::parse_copy(&first.join(journal::CONFIG), text)?;
    let schedule = match &file.plan {
        Plan::Fixed { schedule: s, .. } => s,
        Plan::Swiss(_) => bail!(
            "{} holds a Swiss tournament, which is never split into shards: there is nothing to \
             merge",
            first.display()
        ),
    };
    let folder = out
        .map(|d| merge::open_out(d, &config, dirs, title))
        .transpose()?;
    let total = schedule.total();
    let names = &file.names;
    let check = |r: &GameRecord| -> anyhow::Result<()> {
        let p = schedule.pairing(r.id);
        if r.players != p.players.map(|i| names[i].clone()) || r.seed != p.seed {
            bail!("its players or seed are not the schedule's");
        }
        Ok(())
    };
    let mut tally = TournamentTally {
        standings: Standings::with_bots(names.iter().map(String::as_str)),
        distinct: report::Distinct::default(),
        swiss: None,
    };
    let kind = file.game;
    crate::with_game!(kind, G => {
        let expected = merge::Expected {
            ids: 0..total,
            check: &check,
            standard: <G as crate::game::Game>::start(&file.options).to_string(),
        };
        merge::merge_games::<G>(dirs, &expected, &mut tally, folder.as_ref(), observer)
    })?;
    let summary = Summary {
        game: kind.name().into(),
        seed: schedule.seed,
        scheduled: total,
        rules: kind.has_rules().then_some(file.options.rules),
        distinct: tally.distinct.count(),
        distinct_capped: tally.distinct.capped(),
        standings: tally.standings,
        names: names.clone(),
        swiss: None,
    };
    if let Some(folder) = &folder {
        write_standings(folder, &summary)?;
    }
    Ok((config, summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;
    use crate::play::Silent;
    use std::path::Path;

    fn tournament(seed: u64) -> Tournament {
        let text = "game = \"tictactoe\"\ngames_per_pairing = 20\nrandom_plies = 1\n\
            [[bots]]\nname = \"r\"\nbuiltin = \"random\"\n\
            [[bots]]\nname = \"g\"\nbuiltin = \"greedy\"\n\
            [[bots]]\nname = \"o\"\nbuiltin = \"optimal\"\n";
        TournamentFile::parse(Path::new("t.toml"), text.into(), Some(seed))
            .unwrap()
            .resolve::<TicTacToe>()
            .unwrap()
    }

    /// A run folder inside a temporary directory removed when `guard` drops.
    fn tmp(guard: &tempfile::TempDir, tag: &str) -> PathBuf {
        guard.path().join(tag)
    }

    fn games_without_times(dir: &Path) -> Vec<GameRecord> {
        let mut v = journal::read_games(dir).unwrap().records;
        v.sort_by_key(|r| r.id);
        for r in &mut v {
            r.times_us.clear();
        }
        v
    }

    fn untimed(s: &Summary) -> serde_json::Value {
        let mut j = s.to_json();
        for b in j["bots"].as_array_mut().unwrap() {
            let o = b.as_object_mut().unwrap();
            o.remove("avg_move_us");
            o.remove("max_move_us");
        }
        j
    }

    #[test]
    fn same_games_at_one_and_two_jobs_and_shards_merge_exactly() {
        let t = tournament(5);
        let guard = tempfile::tempdir().unwrap();
        let (d1, d2) = (tmp(&guard, "j1"), tmp(&guard, "j2"));
        let run_in = |dir: &Path, jobs, shard| {
            run::<TicTacToe>(
                &t,
                &RunOptions {
                    jobs,
                    out: Some(dir.to_path_buf()),
                    shard,
                    ..RunOptions::default()
                },
                &Silent,
            )
            .unwrap()
        };
        let a = run_in(&d1, 1, None);
        let b = run_in(&d2, 2, None);
        assert_eq!(a.played, 60);
        assert_eq!(games_without_times(&d1), games_without_times(&d2));
        assert_eq!(untimed(&a.summary), untimed(&b.summary));
        // A different seed gives different games.
        let c = run::<TicTacToe>(
            &tournament(6),
            &RunOptions {
                jobs: 2,
                ..RunOptions::default()
            },
            &Silent,
        )
        .unwrap();
        assert_ne!(untimed(&a.summary)["crosstable"], serde_json::Value::Null);
        assert_ne!(a.summary.standings.pairs, c.summary.standings.pairs);

        let shards: Vec<PathBuf> = (1..=3).map(|k| tmp(&guard, &format!("s{k}"))).collect();
        for (k, d) in shards.iter().enumerate() {
            run_in(d, 2, Some((k as u64 + 1, 3)));
        }
        let out = tmp(&guard, "merged");
        let (_, merged) = merge(&shards, Some(&out), None, &Silent).unwrap();
        assert_eq!(untimed(&merged), untimed(&a.summary));
        // The merged folder holds every game once, in id order.
        let ids: Vec<u64> = journal::read_games(&out)
            .unwrap()
            .records
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, (0..60).collect::<Vec<u64>>());
        // A shard given twice is refused, naming the folder.
        let twice = [shards[0].clone(), shards[0].clone()];
        let e = merge(&twice, None, None, &Silent).unwrap_err().to_string();
        assert!(e.contains("also in another folder"), "{e}");
        assert!(merge(&shards[..2], None, None, &Silent)
            .unwrap_err()
            .to_string()
            .contains("missing"));
    }

    #[test]
    fn resume_plays_only_missing_games() {
        let t = tournament(9);
        let guard = tempfile::tempdir().unwrap();
        let d = tmp(&guard, "resume");
        let full = run::<TicTacToe>(
            &t,
            &RunOptions {
                jobs: 1,
                out: Some(d.clone()),
                ..RunOptions::default()
            },
            &Silent,
        )
        .unwrap();
        // Keep the first 25 lines plus a torn one, as a kill would.
        let p = journal::games_path(&d);
        let text = std::fs::read_to_string(&p).unwrap();
        let mut kept: String = text.lines().take(25).map(|l| format!("{l}\n")).collect();
        kept.push_str("{\"id\":");
        std::fs::write(&p, kept).unwrap();
        let opts = RunOptions {
            jobs: 2,
            out: Some(d.clone()),
            resume: true,
            ..RunOptions::default()
        };
        let again = run::<TicTacToe>(&t, &opts, &Silent).unwrap();
        assert_eq!((again.resumed, again.played), (25, 35));
        assert_eq!(untimed(&again.summary), untimed(&full.summary));
        assert_eq!(journal::read_games(&d).unwrap().records.len(), 60);
    }

    fn swiss_entrants() -> Vec<Entrant> {
        let bots = ["optimal", "greedy", "random", "greedy", "random"];
        bots.iter()
            .enumerate()
            .map(|(i, b)| Entrant {
                name: format!("{b}-{i}"),
                spec: crate::bot::BotSpec::resolve::<TicTacToe>(b).unwrap(),
            })
            .collect()
    }

    fn swiss_cfg() -> RunConfig {
        RunConfig {
            options: Default::default(),
            time: Default::default(),
            random_plies: 1,
            affinity: false,
        }
    }

    #[test]
    fn swiss_from_code_same_at_any_jobs_resumes_and_refuses_shards() {
        let e = swiss_entrants();
        let plan =
            Plan::swiss(5, Some(4), 4, 3, crate::tournament::swiss::Seeding::Shuffle).unwrap();
        let guard = tempfile::tempdir().unwrap();
        let run_in = |dir: &Path, jobs, resume| {
            let opts = RunOptions {
                jobs,
                out: Some(dir.to_path_buf()),
                resume,
                ..RunOptions::default()
            };
            run_entrants::<TicTacToe>(&e, &plan, &swiss_cfg(), &opts, &Silent)
        };
        let (d1, d2) = (tmp(&guard, "j1"), tmp(&guard, "j2"));
        let a = run_in(&d1, 1, false).unwrap();
        let b = run_in(&d2, 2, false).unwrap();
        // 4 rounds of 2 pairings of 4 games; one bye a round.
        assert_eq!(a.played, 32);
        assert_eq!(games_without_times(&d1), games_without_times(&d2));
        assert_eq!(untimed(&a.summary), untimed(&b.summary));
        let sw = a.summary.swiss.as_ref().unwrap();
        assert_eq!(sw.paired.len(), 4);
        assert!(sw
            .paired
            .iter()
            .all(|r| r.bye.is_some() && r.rematches == 0));
        let j = a.summary.to_json();
        assert_eq!(j["format"], "swiss");
        let byes: u64 = j["bots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["byes"].as_u64().unwrap())
            .sum();
        assert_eq!(byes, 4);
        // Leaderboard: score first, then Buchholz.
        let rows = a.summary.ranked();
        for w in rows.windows(2) {
            let (x, y) = (&w[0], &w[1]);
            assert!(x.bot.total.score() >= y.bot.total.score());
            if x.bot.total.score() == y.bot.total.score() {
                assert!(x.buchholz.unwrap() >= y.buchholz.unwrap() - 1e-9);
            }
        }

        // Cut in the middle of round 2 (ids 8..16), then resume.
        let p = journal::games_path(&d2);
        let text = std::fs::read_to_string(&p).unwrap();
        let kept: String = text.lines().take(11).map(|l| format!("{l}\n")).collect();
        std::fs::write(&p, kept).unwrap();
        let again = run_in(&d2, 2, true).unwrap();
        assert_eq!((again.resumed, again.played), (11, 21));
        assert_eq!(untimed(&again.summary), untimed(&a.summary));

        // A Swiss tournament has no shards, and its folder nothing to merge.
        let opts = RunOptions {
            shard: Some((1, 2)),
            ..RunOptions::default()
        };
        let err = run_entrants::<TicTacToe>(&e, &plan, &swiss_cfg(), &opts, &Silent).unwrap_err();
        assert!(
            err.to_string().contains("cannot be split into shards"),
            "{err}"
        );
        // A plan for another number of bots is refused.
        let err = run_entrants::<TicTacToe>(
            &e[..4],
            &plan,
            &swiss_cfg(),
            &RunOptions::default(),
            &Silent,
        )
        .unwrap_err();
        assert!(err.to_string().contains("does not fit 4 entrants"), "{err}");
    }

    #[test]
    fn a_swiss_file_runs_and_its_folder_is_not_merged() {
        let text = "game = \"tictactoe\"\nformat = \"swiss\"\nrounds = 2\ngames_per_pairing = 2\n\
            [[bots]]\nname = \"r\"\nbuiltin = \"random\"\n\
            [[bots]]\nname = \"g\"\nbuiltin = \"greedy\"\n\
            [[bots]]\nname = \"o\"\nbuiltin = \"optimal\"\n\
            [[bots]]\nname = \"o2\"\nbuiltin = \"optimal\"\n";
        let t = TournamentFile::parse(Path::new("t.toml"), text.into(), None)
            .unwrap()
            .resolve::<TicTacToe>()
            .unwrap();
        let guard = tempfile::tempdir().unwrap();
        let d = tmp(&guard, "swiss");
        let opts = RunOptions {
            out: Some(d.clone()),
            ..RunOptions::default()
        };
        let r = run::<TicTacToe>(&t, &opts, &Silent).unwrap();
        assert_eq!((r.played, r.summary.scheduled), (8, 8));
        let e = merge(&[d], None, None, &Silent).unwrap_err().to_string();
        assert!(e.contains("Swiss"), "{e}");
    }
}
