//! The tournament file: TOML read into a raw form that keeps every value's
//! place in the file, then checked and resolved into a [`Tournament`] before
//! any game starts. Every error names `file:line:column` and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use crate::bot::manifest::{BotManifest, CommandText, ExternalKind, ResourceLimits, SandboxMode};
use crate::bot::{BotSpec, BuiltinBots, BuiltinSpec, TimeControl, TimeProfile};
use crate::game::{GameKind, GameOptions, Rules};
use crate::play::journal::{BotAbout, RunSettings};
use crate::play::openings::Openings;
use crate::play::runner::{Entrant, RunConfig};
use crate::protocol::BotProtocol;

use crate::play::schedule::{Format, Schedule};
use crate::tournament::swiss::{Seeding, Swiss};

/// A configuration error, already worded as `file:line:column: key: what`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The file as written, with the place of every value that can be wrong.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    game: Spanned<String>,
    #[serde(default)]
    title: Option<Spanned<String>>,
    #[serde(default)]
    boards: Option<Spanned<i64>>,
    #[serde(default)]
    format: Option<Spanned<String>>,
    #[serde(default)]
    challengers: Vec<Spanned<String>>,
    #[serde(default)]
    games_per_pairing: Option<Spanned<i64>>,
    #[serde(default)]
    rounds: Option<Spanned<i64>>,
    #[serde(default)]
    seeding: Option<Spanned<String>>,
    #[serde(default)]
    random_plies: Option<Spanned<i64>>,
    #[serde(default)]
    time_ms: Option<Spanned<i64>>,
    #[serde(default)]
    startup_ms: Option<Spanned<i64>>,
    #[serde(default)]
    time: Option<Spanned<String>>,
    #[serde(default)]
    rules: Option<Spanned<String>>,
    #[serde(default)]
    seed: Option<Spanned<i64>>,
    #[serde(default)]
    openings: Option<Spanned<String>>,
    #[serde(default)]
    shuffle_openings: Option<Spanned<bool>>,
    /// Written by referee into a run folder's copy of the file.
    #[serde(default)]
    openings_sha256: Option<Spanned<String>>,
    #[serde(default)]
    bots: Vec<Spanned<RawBot>>,
}

/// One `[[bots]]` table as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBot {
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    builtin: Option<Spanned<String>>,
    #[serde(default)]
    command: Option<Spanned<CommandText>>,
    #[serde(default)]
    manifest: Option<Spanned<String>>,
    #[serde(default)]
    cwd: Option<Spanned<PathBuf>>,
    #[serde(default)]
    env: Option<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    games: Option<Spanned<Vec<GameKind>>>,
    #[serde(default)]
    description: Option<Spanned<String>>,
    #[serde(default)]
    kind: Option<Spanned<ExternalKind>>,
    #[serde(default)]
    limits: Option<Spanned<ResourceLimits>>,
    #[serde(default)]
    reuse: Option<Spanned<bool>>,
    #[serde(default)]
    inherit_env: Option<Spanned<bool>>,
    #[serde(default)]
    sandbox: Option<Spanned<SandboxMode>>,
    #[serde(default)]
    sandbox_read: Option<Spanned<Vec<PathBuf>>>,
    #[serde(default)]
    protocol: Option<Spanned<BotProtocol>>,
    #[serde(default)]
    time: Option<Spanned<TimeProfile>>,
}

/// How one bot entry names its bot, before it is resolved for a game.
#[derive(Clone, Debug)]
enum BotSource {
    Builtin(Spanned<String>),
    Command(Box<BotManifest>),
    Manifest(Spanned<String>),
}

/// A bot entry whose shape is checked but not yet resolved.
#[derive(Clone, Debug)]
struct BotEntry {
    name: Spanned<String>,
    source: BotSource,
    span: std::ops::Range<usize>,
    /// `reuse`, `inherit_env`, `sandbox` and `sandbox_read` when the entry
    /// sets them (they override a manifest's).
    reuse: Option<bool>,
    inherit_env: Option<bool>,
    sandbox: Option<SandboxMode>,
    sandbox_read: Option<Vec<PathBuf>>,
    /// `protocol` and `time` when the entry sets them (over a manifest's).
    protocol: Option<BotProtocol>,
    time: Option<TimeProfile>,
}

/// Who plays whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// A fixed schedule: a round-robin or a gauntlet.
    Fixed {
        /// Which.
        format: Format,
        /// Its games.
        schedule: Schedule,
    },
    /// A Swiss tournament: rounds paired as the results come in.
    Swiss(Swiss),
}

impl Plan {
    fn fixed(bots: usize, format: Format, games_per_pairing: u64, seed: u64) -> Plan {
        Plan::Fixed {
            schedule: Schedule::new(bots, format.clone(), games_per_pairing, seed),
            format,
        }
    }

    /// The format's name, as in tournament files.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Plan::Fixed {
                format: Format::RoundRobin,
                ..
            } => "round-robin",
            Plan::Fixed {
                format: Format::Gauntlet(_),
                ..
            } => "gauntlet",
            Plan::Swiss(_) => "swiss",
        }
    }

    /// A round-robin of `bots` bots: every bot plays every other bot
    /// `games_per_pairing` games (even: seats alternate).
    pub fn round_robin(bots: usize, games_per_pairing: u64, seed: u64) -> Result<Plan, String> {
        check_shape(bots, games_per_pairing)?;
        let pairs = (bots * (bots - 1) / 2) as u64;
        check_total(pairs, games_per_pairing)?;
        Ok(Plan::fixed(
            bots,
            Format::RoundRobin,
            games_per_pairing,
            seed,
        ))
    }

    /// A gauntlet: the `challengers` (bot indices) each play every other
    /// bot.
    pub fn gauntlet(
        bots: usize,
        challengers: Vec<usize>,
        games_per_pairing: u64,
        seed: u64,
    ) -> Result<Plan, String> {
        check_shape(bots, games_per_pairing)?;
        let mut seen = challengers.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != challengers.len() || seen.iter().any(|&c| c >= bots) {
            return Err(format!(
                "challengers must be distinct bot indices below {bots}, got {challengers:?}"
            ));
        }
        if challengers.is_empty() || challengers.len() == bots {
            return Err(
                "a gauntlet needs at least one challenger and at least one other bot".into(),
            );
        }
        check_total(
            (challengers.len() * (bots - challengers.len())) as u64,
            games_per_pairing,
        )?;
        Ok(Plan::fixed(
            bots,
            Format::Gauntlet(challengers),
            games_per_pairing,
            seed,
        ))
    }

    /// A gauntlet whose `challengers` always play `seat` (console programs,
    /// which play only the seat their assignment gives them): every game of
    /// a pair has the same seats.
    pub fn seated_gauntlet(
        bots: usize,
        challengers: Vec<usize>,
        seat: crate::game::Seat,
        games_per_pairing: u64,
        seed: u64,
    ) -> Result<Plan, String> {
        let mut plan = Plan::gauntlet(bots, challengers, games_per_pairing, seed)?;
        if let Plan::Fixed { schedule, .. } = &mut plan {
            schedule.fixed_seats = true;
            if seat == crate::game::Seat::Two {
                for p in &mut schedule.pairs {
                    p.swap(0, 1);
                }
            }
        }
        Ok(plan)
    }

    /// A Swiss tournament of `bots` bots: `rounds` rounds (`None`: the
    /// default, ⌈log2(bots)⌉ + 2), each pairing playing `games_per_pairing`
    /// games (docs/tournaments.md, "Swiss system").
    pub fn swiss(
        bots: usize,
        rounds: Option<u64>,
        games_per_pairing: u64,
        seed: u64,
        seeding: Seeding,
    ) -> Result<Plan, String> {
        check_shape(bots, games_per_pairing)?;
        let given = rounds.map(|r| i64::try_from(r).unwrap_or(i64::MAX));
        let rounds = Swiss::check_rounds(bots, given).map_err(|e| format!("rounds: {e}"))?;
        check_total((bots / 2) as u64 * rounds, games_per_pairing)?;
        Ok(Plan::Swiss(Swiss {
            bots,
            rounds,
            games_per_pairing,
            seed,
            seeding,
        }))
    }

    /// Whether the plan fits `bots` bots: every index it uses is below.
    pub(crate) fn fits(&self, bots: usize) -> bool {
        match self {
            Plan::Fixed { schedule: s, .. } => s.pairs.iter().flatten().all(|&i| i < bots),
            Plan::Swiss(s) => s.bots == bots,
        }
    }

    /// The tournament seed.
    pub(crate) fn seed(&self) -> u64 {
        match self {
            Plan::Fixed { schedule: s, .. } => s.seed,
            Plan::Swiss(s) => s.seed,
        }
    }

    /// Games in the whole tournament.
    pub(crate) fn total(&self) -> u64 {
        match self {
            Plan::Fixed { schedule: s, .. } => s.total(),
            Plan::Swiss(s) => s.total(),
        }
    }

    /// Games each pairing plays.
    pub(crate) fn games_per_pairing(&self) -> u64 {
        match self {
            Plan::Fixed { schedule: s, .. } => s.games_per_pairing,
            Plan::Swiss(s) => s.games_per_pairing,
        }
    }
}

/// What the report shows about a tournament of `plan` between `entrants`
/// (`run.json`): the format, its settings and the bots.
pub(crate) fn run_settings<G: BuiltinBots>(
    entrants: &[Entrant],
    plan: &Plan,
    names: &[String],
    cfg: &RunConfig,
) -> RunSettings {
    let mut s = RunSettings::new::<G>(plan.name(), &cfg.options);
    if let Plan::Fixed {
        format: Format::Gauntlet(c),
        ..
    } = plan
    {
        s.challengers = c.iter().filter_map(|&i| names.get(i).cloned()).collect();
    }
    s.games_per_pairing = Some(plan.games_per_pairing());
    s.time_ms = Some(cfg.time.move_ms);
    s.startup_ms = Some(cfg.time.startup_ms);
    s.random_plies = Some(cfg.random_plies as u64);
    s.seed = Some(plan.seed());
    s.bots = entrants
        .iter()
        .map(|e| BotAbout::of::<G>(&e.name, &e.spec))
        .collect();
    s
}

/// Checks what every plan needs: two bots, an even number of games.
fn check_shape(bots: usize, games_per_pairing: u64) -> Result<(), String> {
    if bots < 2 {
        return Err(format!("a tournament needs at least 2 bots, got {bots}"));
    }
    if games_per_pairing < 2 || !games_per_pairing.is_multiple_of(2) {
        return Err(format!(
            "games_per_pairing must be even and at least 2 (each opening is played twice, seats \
             swapped), got {games_per_pairing}"
        ));
    }
    Ok(())
}

/// Checks that every game can be numbered.
fn check_total(pairs: u64, games_per_pairing: u64) -> Result<(), String> {
    match pairs.checked_mul(games_per_pairing) {
        Some(_) => Ok(()),
        None => Err(format!(
            "{pairs} pairings of {games_per_pairing} games is more games than can be numbered"
        )),
    }
}

/// A tournament file checked for everything that does not depend on the
/// game's bots: keys, values, names, the schedule's shape.
#[derive(Clone, Debug)]
pub struct TournamentFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The game.
    pub game: GameKind,
    /// Game options (`boards`).
    pub options: GameOptions,
    /// Who plays whom: the schedule's shape and seed.
    pub plan: Plan,
    /// Random plies shared by both games of a pair.
    pub random_plies: usize,
    /// Time control for external bots.
    pub time: TimeControl,
    /// The opening suite (`openings`), checked; `None` without one, and in
    /// a run folder's copy of the file, which `merge` reads.
    pub openings: Option<Arc<Openings>>,
    /// Bot names in file order.
    pub names: Vec<String>,
    /// The report's title (`title`), if the file gives one.
    pub title: Option<String>,
    bots: Vec<BotEntry>,
}

/// A tournament ready to run: the file plus every bot resolved and checked.
#[derive(Clone, Debug)]
pub struct Tournament {
    /// The checked file.
    pub file: TournamentFile,
    /// The bots, in file order (schedule indices refer to this list).
    pub entrants: Vec<Entrant>,
}

impl Tournament {
    /// The settings every game shares.
    pub(crate) fn run_config(&self) -> RunConfig {
        RunConfig {
            options: self.file.options,
            time: self.file.time,
            random_plies: self.file.random_plies,
            affinity: true,
        }
    }

    /// What the report shows about the tournament (`run.json`), with the
    /// title `title`, or the file's.
    pub(crate) fn settings<G: BuiltinBots>(&self, title: Option<String>) -> RunSettings {
        let f = &self.file;
        let mut s = run_settings::<G>(&self.entrants, &f.plan, &f.names, &self.run_config());
        s.title = title.or_else(|| f.title.clone());
        s.startup_ms = Some(f.time.startup_ms);
        s.openings = f.openings.as_ref().map(|o| o.file_name());
        s.shuffle_openings = f.openings.as_ref().is_some_and(|o| o.shuffled());
        s
    }

    /// Whether any bot is an external program (whose moves are timed).
    pub fn has_external(&self) -> bool {
        self.entrants.iter().any(|e| !e.spec.is_in_process())
    }
}

/// The folder that paths in the file at `path` are relative to.
fn base_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// 1-based line and column of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl TournamentFile {
    /// Reads and checks a tournament file. `seed` overrides the file's seed.
    pub fn load(path: &Path, seed: Option<u64>) -> Result<TournamentFile, ConfigError> {
        // Capped, like every file a run reads whole.
        let text = crate::bot::manifest::read_small_text(path).map_err(|e| {
            ConfigError(match e.downcast_ref::<std::io::Error>() {
                Some(io) => format!("{}: {io}", path.display()),
                None => format!("{e:#}"),
            })
        })?;
        Self::parse(path, text, seed)
    }

    /// Checks a tournament file's `text`; `path` is used in messages and to
    /// resolve relative paths.
    ///
    /// ```
    /// use referee::tournament::TournamentFile;
    ///
    /// let text = "game = \"notakto\"\ngames_per_pairing = 3\n";
    /// let e = TournamentFile::parse("week3.toml".as_ref(), text.into(), None).unwrap_err();
    /// // Every error names the file and the line.
    /// assert!(e.to_string().starts_with("week3.toml:2"), "{e}");
    /// ```
    pub fn parse(
        path: &Path,
        text: String,
        seed: Option<u64>,
    ) -> Result<TournamentFile, ConfigError> {
        Self::parse_with(path, text, seed, true)
    }

    /// Reads the copy of a tournament file that a run folder keeps
    /// (`tournament.toml`, with `openings_sha256` written in): everything
    /// but the opening suite, which is not loaded (its path is relative to
    /// the original file).
    pub(crate) fn parse_copy(path: &Path, text: String) -> Result<TournamentFile, ConfigError> {
        Self::parse_with(path, text, None, false)
    }

    fn parse_with(
        path: &Path,
        text: String,
        seed: Option<u64>,
        original: bool,
    ) -> Result<TournamentFile, ConfigError> {
        let at = |offset: usize, key: &str, msg: &str| {
            let (l, c) = line_col(&text, offset);
            ConfigError(format!("{}:{l}:{c}: {key}: {msg}", path.display()))
        };
        let raw: RawConfig = toml::from_str(&text).map_err(|e| {
            let (l, c) = line_col(&text, e.span().map_or(0, |s| s.start));
            ConfigError(format!(
                "{}:{l}:{c}: {}",
                path.display(),
                e.message().trim()
            ))
        })?;
        let game: GameKind = raw
            .game
            .get_ref()
            .parse()
            .map_err(|e: crate::game::ParseError| {
                at(raw.game.span().start, "game", &e.to_string())
            })?;

        let int = |v: &Option<Spanned<i64>>, key: &str, default: i64, lo: i64, hi: i64| match v {
            None => Ok(default),
            Some(s) if (lo..=hi).contains(s.get_ref()) => Ok(*s.get_ref()),
            Some(s) => Err(at(
                s.span().start,
                key,
                &format!("must be between {lo} and {hi}, got {}", s.get_ref()),
            )),
        };
        let boards = int(&raw.boards, "boards", 3, 1, 26)? as u8;
        let games_per_pairing = int(&raw.games_per_pairing, "games_per_pairing", 2, 2, 1 << 40)?;
        if games_per_pairing % 2 != 0 {
            let s = raw.games_per_pairing.as_ref().map_or(0, |s| s.span().start);
            return Err(at(
                s,
                "games_per_pairing",
                &format!(
                    "must be even (each opening is played twice, seats swapped), got {games_per_pairing}"
                ),
            ));
        }
        let random_plies = int(&raw.random_plies, "random_plies", 0, 0, 80)? as usize;
        let time_ms = int(&raw.time_ms, "time_ms", 1000, 1, 3_600_000)? as u64;
        let startup_ms = int(&raw.startup_ms, "startup_ms", 2000, 0, 3_600_000)? as u64;
        let mut time = TimeControl::new(time_ms, startup_ms);
        if let Some(t) = &raw.time {
            if let Some(other) = raw.time_ms.as_ref().or(raw.startup_ms.as_ref()) {
                return Err(at(
                    other.span().start,
                    "time",
                    "`time` names the limits: give it or `time_ms`/`startup_ms`, not both",
                ));
            }
            let profile: TimeProfile = t
                .get_ref()
                .parse()
                .map_err(|e: String| at(t.span().start, "time", &e))?;
            time = profile.control();
        }
        let rules = match &raw.rules {
            None => Rules::Standard,
            Some(r) => {
                let rules: Rules = r.get_ref().parse().map_err(|e: crate::game::ParseError| {
                    at(r.span().start, "rules", &e.to_string())
                })?;
                if !rules.is_standard() && !game.has_rules() {
                    return Err(at(
                        r.span().start,
                        "rules",
                        &format!("{game} has one rule; `rules = \"codingame\"` is for uttt"),
                    ));
                }
                rules
            }
        };
        let file_seed = int(&raw.seed, "seed", 1, 0, i64::MAX)? as u64;

        let mut bots = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for (i, b) in raw.bots.iter().enumerate() {
            let key = format!("bots[{i}]");
            let span = b.span();
            let b = b.get_ref();
            let given = [
                b.builtin.is_some(),
                b.command.is_some(),
                b.manifest.is_some(),
            ];
            if given.iter().filter(|&&g| g).count() != 1 {
                return Err(at(
                    span.start,
                    &key,
                    "give exactly one of `builtin`, `command` or `manifest`",
                ));
            }
            if b.command.is_none() {
                let extra = [
                    ("cwd", b.cwd.as_ref().map(|s| s.span().start)),
                    ("env", b.env.as_ref().map(|s| s.span().start)),
                    ("games", b.games.as_ref().map(|s| s.span().start)),
                    (
                        "description",
                        b.description.as_ref().map(|s| s.span().start),
                    ),
                    ("kind", b.kind.as_ref().map(|s| s.span().start)),
                    ("limits", b.limits.as_ref().map(|s| s.span().start)),
                ];
                if let Some((k, Some(pos))) = extra.iter().find(|(_, p)| p.is_some()) {
                    return Err(at(
                        *pos,
                        &format!("{key}.{k}"),
                        "only a `command` bot takes this key",
                    ));
                }
            }
            if b.builtin.is_some() {
                let process_keys = [
                    ("reuse", b.reuse.as_ref().map(|s| s.span().start)),
                    ("protocol", b.protocol.as_ref().map(|s| s.span().start)),
                    ("time", b.time.as_ref().map(|s| s.span().start)),
                    (
                        "inherit_env",
                        b.inherit_env.as_ref().map(|s| s.span().start),
                    ),
                ];
                if let Some((k, Some(pos))) = process_keys.iter().find(|(_, p)| p.is_some()) {
                    return Err(at(
                        *pos,
                        &format!("{key}.{k}"),
                        "only an external bot (`command` or `manifest`) takes this key",
                    ));
                }
            }
            let Some(name) = b.name.clone() else {
                return Err(at(span.start, &key, "missing `name`"));
            };
            if name.get_ref().trim().is_empty() || name.get_ref().contains(['\n', '\r', ',']) {
                return Err(at(
                    name.span().start,
                    &format!("{key}.name"),
                    "a name must be non-empty, on one line, without commas",
                ));
            }
            if names.contains(name.get_ref()) {
                return Err(at(
                    name.span().start,
                    &format!("{key}.name"),
                    &format!("duplicate bot name '{}'", name.get_ref()),
                ));
            }
            names.push(name.get_ref().clone());
            let source = if let Some(s) = &b.builtin {
                BotSource::Builtin(s.clone())
            } else if let Some(m) = &b.manifest {
                BotSource::Manifest(m.clone())
            } else if let Some(c) = &b.command {
                BotSource::Command(Box::new(BotManifest {
                    name: name.get_ref().clone(),
                    command: c.get_ref().clone(),
                    cwd: b.cwd.as_ref().map(|s| s.get_ref().clone()),
                    env: b
                        .env
                        .as_ref()
                        .map(|s| s.get_ref().clone())
                        .unwrap_or_default(),
                    games: b
                        .games
                        .as_ref()
                        .map(|s| s.get_ref().clone())
                        .unwrap_or_default(),
                    description: b
                        .description
                        .as_ref()
                        .map(|s| s.get_ref().clone())
                        .unwrap_or_default(),
                    kind: b.kind.as_ref().map(|s| *s.get_ref()).unwrap_or_default(),
                    limits: b.limits.as_ref().map(|s| *s.get_ref()).unwrap_or_default(),
                    reuse: false,
                    inherit_env: false,
                    sandbox: SandboxMode::Off,
                    sandbox_read: Vec::new(),
                    protocol: None,
                    time: None,
                }))
            } else {
                unreachable!("exactly one source was checked above")
            };
            bots.push(BotEntry {
                name,
                source,
                span,
                reuse: b.reuse.as_ref().map(|s| *s.get_ref()),
                inherit_env: b.inherit_env.as_ref().map(|s| *s.get_ref()),
                sandbox: b.sandbox.as_ref().map(|s| *s.get_ref()),
                sandbox_read: b.sandbox_read.as_ref().map(|s| s.get_ref().clone()),
                protocol: b.protocol.as_ref().map(|s| *s.get_ref()),
                time: b.time.as_ref().map(|s| *s.get_ref()),
            });
        }
        if bots.len() < 2 {
            return Err(at(
                text.len(),
                "bots",
                &format!("a tournament needs at least 2 bots, got {}", bots.len()),
            ));
        }

        let format_name = raw
            .format
            .as_ref()
            .map_or("round-robin", |f| f.get_ref().as_str());
        if format_name != "gauntlet" {
            if let Some(c) = raw.challengers.first() {
                return Err(at(
                    c.span().start,
                    "challengers",
                    "only a gauntlet has challengers",
                ));
            }
        }
        if format_name != "swiss" {
            let swiss_only = [
                ("rounds", raw.rounds.as_ref().map(|s| s.span().start)),
                ("seeding", raw.seeding.as_ref().map(|s| s.span().start)),
            ];
            if let Some((k, Some(pos))) = swiss_only.iter().find(|(_, p)| p.is_some()) {
                return Err(at(
                    *pos,
                    k,
                    "only a Swiss tournament (format = \"swiss\") takes this key",
                ));
            }
        }
        // `None`: a Swiss tournament, checked below.
        let format = match format_name {
            "round-robin" => Some(Format::RoundRobin),
            "swiss" => None,
            "gauntlet" => {
                let mut idx = Vec::new();
                for c in &raw.challengers {
                    match names.iter().position(|n| n == c.get_ref()) {
                        Some(i) if !idx.contains(&i) => idx.push(i),
                        Some(_) => {
                            return Err(at(
                                c.span().start,
                                "challengers",
                                &format!("'{}' is listed twice", c.get_ref()),
                            ))
                        }
                        None => {
                            return Err(at(
                                c.span().start,
                                "challengers",
                                &format!("no bot is named '{}'", c.get_ref()),
                            ))
                        }
                    }
                }
                if idx.is_empty() || idx.len() == names.len() {
                    let s = raw.format.as_ref().map_or(0, |f| f.span().start);
                    return Err(at(
                        s,
                        "challengers",
                        "a gauntlet needs at least one challenger and at least one other bot",
                    ));
                }
                Some(Format::Gauntlet(idx))
            }
            other => {
                let s = raw.format.as_ref().map_or(0, |f| f.span().start);
                return Err(at(
                    s,
                    "format",
                    &format!(
                        "unknown format '{other}' (expected \"round-robin\", \"gauntlet\" or \"swiss\")"
                    ),
                ));
            }
        };

        let options = GameOptions { boards, rules };
        let seed = seed.unwrap_or(file_seed);
        if let (Some(h), true) = (&raw.openings_sha256, original) {
            return Err(at(
                h.span().start,
                "openings_sha256",
                "referee writes this key in a run folder's copy of the file; it is not a key of a \
                 tournament file",
            ));
        }
        if let (Some(sh), None) = (&raw.shuffle_openings, &raw.openings) {
            return Err(at(
                sh.span().start,
                "shuffle_openings",
                "there is no `openings` suite to shuffle",
            ));
        }
        let shuffle = raw.shuffle_openings.as_ref().is_some_and(|s| *s.get_ref());
        let openings = match (&raw.openings, original) {
            (Some(o), true) => {
                let file = base_dir(path).join(o.get_ref());
                if let Err(e) = std::fs::metadata(&file) {
                    return Err(at(
                        o.span().start,
                        "openings",
                        &format!("cannot read {}: {e}", file.display()),
                    ));
                }
                // A bad line is named by the suite's own file:line.
                let suite = Openings::load(game, &options, &file, shuffle, seed)
                    .map_err(|e| ConfigError(e.0))?;
                Some(Arc::new(suite))
            }
            _ => None,
        };
        let rounds = if format.is_none() {
            let given = raw.rounds.as_ref().map(|r| *r.get_ref());
            Swiss::check_rounds(names.len(), given).map_err(|e| {
                let pos = raw.rounds.as_ref().map_or(0, |r| r.span().start);
                at(pos, "rounds", &e)
            })?
        } else {
            1
        };
        let seeding = match raw
            .seeding
            .as_ref()
            .map(|s| (s.get_ref().as_str(), s.span().start))
        {
            None | Some(("shuffle", _)) => Seeding::Shuffle,
            Some(("file", _)) => Seeding::File,
            Some((other, pos)) => {
                return Err(at(
                    pos,
                    "seeding",
                    &format!("unknown seeding '{other}' (expected \"shuffle\" or \"file\")"),
                ))
            }
        };
        let pairs = match &format {
            None => (names.len() / 2) as u64 * rounds,
            Some(Format::RoundRobin) => (names.len() * (names.len() - 1) / 2) as u64,
            Some(Format::Gauntlet(c)) => (c.len() * (names.len() - c.len())) as u64,
        };
        if pairs.checked_mul(games_per_pairing as u64).is_none() {
            let s = raw.games_per_pairing.as_ref().map_or(0, |s| s.span().start);
            return Err(at(
                s,
                "games_per_pairing",
                &format!("{pairs} pairings of {games_per_pairing} games is more games than can be numbered"),
            ));
        }
        let plan = match format {
            None => Plan::Swiss(Swiss {
                bots: names.len(),
                rounds,
                games_per_pairing: games_per_pairing as u64,
                seed,
                seeding,
            }),
            Some(format) => Plan::fixed(names.len(), format, games_per_pairing as u64, seed),
        };
        Ok(TournamentFile {
            path: path.to_path_buf(),
            text,
            game,
            options,
            plan,
            random_plies,
            time,
            openings,
            names,
            title: raw.title.map(Spanned::into_inner),
            bots,
        })
    }

    /// The file as a TOML table with the effective seed written in, and
    /// the opening suite's SHA-256: what an output folder keeps so that
    /// resume and merge can check they continue the same tournament.
    pub(crate) fn canonical(&self) -> toml::Table {
        let mut t: toml::Table = toml::from_str(&self.text).unwrap_or_default();
        // The title decides no game: a resumed run may change it.
        t.remove("title");
        // Absent is standard: a file that says so is the same run.
        if t.get("rules").and_then(|r| r.as_str()) == Some("standard") {
            t.remove("rules");
        }
        t.insert("seed".into(), toml::Value::Integer(self.plan.seed() as i64));
        if let Some(o) = &self.openings {
            t.insert("openings_sha256".into(), o.sha256().into());
        }
        t
    }

    /// Resolves every bot for game `G`; a bot that cannot be made or whose
    /// program cannot be started is an error naming its place in the file.
    pub fn resolve<G: BuiltinBots>(self) -> Result<Tournament, ConfigError> {
        let base = base_dir(&self.path);
        let at = |offset: usize, key: &str, msg: &str| {
            let (l, c) = line_col(&self.text, offset);
            ConfigError(format!("{}:{l}:{c}: {key}: {msg}", self.path.display()))
        };
        let mut entrants = Vec::new();
        for (i, b) in self.bots.iter().enumerate() {
            let key = format!("bots[{i}]");
            let spec = match &b.source {
                BotSource::Builtin(s) => {
                    let spec = BuiltinSpec::parse(s.get_ref());
                    if !spec.is_builtin::<G>() {
                        return Err(at(
                            s.span().start,
                            &format!("{key}.builtin"),
                            &format!(
                                "no built-in bot '{}' for {} (built-ins: {})",
                                spec.name,
                                G::KIND,
                                G::builtin_names()
                            ),
                        ));
                    }
                    let spec = spec
                        .prepare::<G>()
                        .map_err(|e| at(s.span().start, &format!("{key}.builtin"), &e.0))?;
                    BotSpec::Builtin(spec)
                }
                BotSource::Manifest(m) => {
                    let p = base.join(m.get_ref());
                    BotSpec::resolve::<G>(&p.to_string_lossy())
                        .map_err(|e| at(m.span().start, &format!("{key}.manifest"), &e.0))?
                }
                BotSource::Command(manifest) => {
                    BotSpec::from_manifest((**manifest).clone(), &base, G::KIND)
                        .map_err(|e| at(b.span.start, &format!("{key}.command"), &e.0))?
                }
            };
            let mut spec = spec;
            if let BotSpec::External(e) = &mut spec {
                e.reuse = b.reuse.unwrap_or(e.reuse);
                e.inherit_env = b.inherit_env.unwrap_or(e.inherit_env);
                e.sandbox = b.sandbox.unwrap_or(e.sandbox);
                e.protocol = b.protocol.or(e.protocol);
                e.time = b.time.or(e.time);
                if let Err(why) = e.check_game(G::KIND) {
                    return Err(at(b.span.start, &key, &why.0));
                }
                if let Some(dirs) = &b.sandbox_read {
                    e.sandbox_read.extend(dirs.iter().map(|d| base.join(d)));
                }
            }
            let start = if self.openings.is_some() {
                Some("openings")
            } else if self.random_plies > 0 {
                Some("random_plies")
            } else {
                None
            };
            if let (Some(setting), Some(why)) = (start, spec.empty_board_only()) {
                return Err(at(
                    b.span.start,
                    &key,
                    &format!("{why}, so `{setting}` cannot be used"),
                ));
            }
            entrants.push(Entrant {
                name: b.name.get_ref().clone(),
                spec,
            });
        }
        Ok(Tournament {
            file: self,
            entrants,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    fn parse(text: &str) -> Result<TournamentFile, ConfigError> {
        TournamentFile::parse(Path::new("t.toml"), text.to_string(), None)
    }

    const GOOD: &str = "game = \"tictactoe\"\ngames_per_pairing = 4\n\
        [[bots]]\nname = \"r\"\nbuiltin = \"random\"\n\
        [[bots]]\nname = \"g\"\nbuiltin = \"greedy\"\n";

    #[test]
    fn reads_a_good_file() {
        let f = parse(GOOD).unwrap();
        assert_eq!(f.game, GameKind::TicTacToe);
        assert_eq!(f.names, vec!["r", "g"]);
        assert_eq!(f.plan.total(), 4);
        let t = f.resolve::<TicTacToe>().unwrap();
        assert_eq!(t.entrants.len(), 2);
        assert!(!t.has_external());
    }

    #[test]
    fn unknown_key_names_line_column_and_key() {
        let e = parse(&format!("{GOOD}colour = 3\n")).unwrap_err().0;
        assert!(e.starts_with("t.toml:"), "{e}");
        assert!(e.contains("colour"), "{e}");
        let e = parse(&format!(
            "{GOOD}\n[[bots]]\nname = \"x\"\nbuiltin = \"random\"\nspeed = 1\n"
        ))
        .unwrap_err()
        .0;
        assert!(e.contains("t.toml:13:1") && e.contains("speed"), "{e}");
    }

    #[test]
    fn duplicate_names_and_bad_values_are_placed() {
        let e = parse(&GOOD.replace("name = \"g\"", "name = \"r\""))
            .unwrap_err()
            .0;
        assert_eq!(e, "t.toml:7:8: bots[1].name: duplicate bot name 'r'");
        let e = parse(&GOOD.replace("= 4", "= 3")).unwrap_err().0;
        assert!(
            e.starts_with("t.toml:2:21: games_per_pairing: must be even"),
            "{e}"
        );
        let e = parse(&GOOD.replace("\"greedy\"", "\"optimal:iters=abc\""))
            .unwrap()
            .resolve::<TicTacToe>()
            .unwrap_err()
            .0;
        assert!(e.starts_with("t.toml:8:11: bots[1].builtin:"), "{e}");
        let e = parse(&GOOD.replace("\"greedy\"", "\"nobody\""))
            .unwrap()
            .resolve::<TicTacToe>()
            .unwrap_err()
            .0;
        assert!(e.contains("no built-in bot 'nobody'"), "{e}");
        let e = parse(&GOOD.replace("tictactoe", "chess")).unwrap_err().0;
        assert!(e.starts_with("t.toml:1:8: game:"), "{e}");
    }

    #[test]
    fn a_command_that_cannot_start_is_an_error() {
        let text = format!("{GOOD}[[bots]]\nname = \"x\"\ncommand = \"./no-such-bot-program\"\n");
        let e = parse(&text).unwrap().resolve::<TicTacToe>().unwrap_err().0;
        assert!(
            e.contains("bots[2].command") && e.contains("cannot start"),
            "{e}"
        );
    }

    #[test]
    fn gauntlet_checks_challengers() {
        let g = format!("format = \"gauntlet\"\nchallengers = [\"zz\"]\n{GOOD}");
        let e = parse(&g).unwrap_err().0;
        assert!(e.contains("no bot is named 'zz'"), "{e}");
        let g = format!("format = \"gauntlet\"\nchallengers = [\"r\"]\n{GOOD}");
        assert_eq!(parse(&g).unwrap().plan.total(), 4);
    }

    #[test]
    fn openings_are_read_relative_to_the_file_and_checked() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("t.toml");
        std::fs::write(tmp.path().join("s.txt"), "# two\n4\n\n0 8\n").unwrap();
        let with = |extra: &str| {
            TournamentFile::parse(&file, format!("openings = \"s.txt\"\n{extra}{GOOD}"), None)
        };
        let f = with("").unwrap();
        assert_eq!(f.openings.as_ref().map(|o| o.len()), Some(2));
        assert!(f.canonical().contains_key("openings_sha256"));
        // The run folder's copy names the suite but does not load it.
        let copy = toml::to_string(&f.canonical()).unwrap();
        let c = TournamentFile::parse_copy(&tmp.path().join("out/tournament.toml"), copy).unwrap();
        assert!(c.openings.is_none());
        assert_eq!(c.plan, f.plan);

        std::fs::write(tmp.path().join("s.txt"), "4\n4 4\n").unwrap();
        let e = with("").unwrap_err().0;
        assert!(e.contains("s.txt:2: move 2 (index 1) '4'"), "{e}");
        let e = TournamentFile::parse(&file, format!("openings = \"nope.txt\"\n{GOOD}"), None)
            .unwrap_err()
            .0;
        assert!(e.contains("t.toml:1:12: openings: cannot read"), "{e}");
        let e = parse(&format!("shuffle_openings = true\n{GOOD}"))
            .unwrap_err()
            .0;
        assert!(e.starts_with("t.toml:1:20: shuffle_openings:"), "{e}");
        let e = parse(&format!("openings_sha256 = \"x\"\n{GOOD}"))
            .unwrap_err()
            .0;
        assert!(e.starts_with("t.toml:1:19: openings_sha256:"), "{e}");
    }

    #[test]
    fn swiss_takes_rounds_and_seeding_and_checks_them() {
        let four = format!(
            "{GOOD}[[bots]]\nname = \"o\"\nbuiltin = \"optimal\"\n\
             [[bots]]\nname = \"o2\"\nbuiltin = \"optimal\"\n"
        );
        let f = parse(&format!(
            "format = \"swiss\"\nrounds = 3\nseeding = \"file\"\n{four}"
        ))
        .unwrap();
        let Plan::Swiss(s) = &f.plan else {
            panic!("a Swiss plan: {:?}", f.plan)
        };
        assert_eq!((s.bots, s.rounds, s.seeding), (4, 3, Seeding::File));
        // 2 pairs a round, 4 games a pairing, 3 rounds.
        assert_eq!(f.plan.total(), 24);
        // Defaults: ceil(log2 4) + 2 = 4 rounds, capped at 3 (4 bots);
        // the file order shuffled.
        let f = parse(&format!("format = \"swiss\"\n{four}")).unwrap();
        let Plan::Swiss(s) = &f.plan else { panic!() };
        assert_eq!((s.rounds, s.seeding), (3, Seeding::Shuffle));

        let e = parse(&format!("format = \"swiss\"\nrounds = 4\n{four}"))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("t.toml:2:10: rounds: must be between 1 and 3, got 4"),
            "{e}"
        );
        let e = parse(&format!("format = \"swiss\"\nrounds = 0\n{four}"))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("t.toml:2:10: rounds: must be at least 1"),
            "{e}"
        );
        let e = parse(&format!("format = \"swiss\"\nseeding = \"elo\"\n{four}"))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("t.toml:2:11: seeding: unknown seeding 'elo'"),
            "{e}"
        );
        let e = parse(&format!("rounds = 2\n{four}")).unwrap_err().0;
        assert!(e.starts_with("t.toml:1:10: rounds: only a Swiss"), "{e}");
        let e = parse(&format!("format = \"swis\"\n{four}")).unwrap_err().0;
        assert!(e.contains("\"swiss\""), "{e}");
        let e = parse(&format!(
            "format = \"swiss\"\nchallengers = [\"r\"]\n{four}"
        ))
        .unwrap_err()
        .0;
        assert!(e.contains("only a gauntlet has challengers"), "{e}");
        // The run folder's copy reads back as the same plan.
        let f = parse(&format!("format = \"swiss\"\nrounds = 2\n{four}")).unwrap();
        let copy = toml::to_string(&f.canonical()).unwrap();
        let c = TournamentFile::parse_copy(Path::new("out/tournament.toml"), copy).unwrap();
        assert_eq!(c.plan, f.plan);
    }

    #[test]
    fn plans_made_in_code_are_checked() {
        assert_eq!(Plan::round_robin(3, 4, 1).unwrap().total(), 12);
        assert!(Plan::round_robin(1, 4, 1)
            .unwrap_err()
            .contains("at least 2 bots"));
        assert!(Plan::round_robin(3, 3, 1).unwrap_err().contains("even"));
        assert_eq!(Plan::gauntlet(4, vec![0], 2, 1).unwrap().total(), 6);
        assert!(Plan::gauntlet(4, vec![0, 0], 2, 1).is_err());
        assert!(Plan::gauntlet(4, vec![4], 2, 1).is_err());
        assert!(Plan::gauntlet(2, vec![0, 1], 2, 1).is_err());
        let p = Plan::swiss(9, None, 2, 1, Seeding::Shuffle).unwrap();
        // ceil(log2 9) + 2 = 6 rounds of 4 pairings of 2 games.
        assert_eq!((p.total(), p.games_per_pairing(), p.seed()), (48, 2, 1));
        assert!(p.fits(9) && !p.fits(8));
        assert!(Plan::swiss(9, Some(10), 2, 1, Seeding::File)
            .unwrap_err()
            .starts_with("rounds: must be between 1 and 9"));
        assert!(Plan::round_robin(3, 2, 1).unwrap().fits(3));
    }
}

#[cfg(test)]
mod props {
    //! Property tests of the tournament file reader: no text makes it
    //! panic, and every error names the file.
    use super::*;
    use proptest::prelude::*;

    const GOOD: &str = "game = \"uttt\"\ngames_per_pairing = 4\nseed = 3\n\
        random_plies = 2\ntime_ms = 500\nformat = \"round-robin\"\n\
        [[bots]]\nname = \"r\"\nbuiltin = \"random\"\n\
        [[bots]]\nname = \"o\"\nbuiltin = \"optimal:iters=100\"\n\
        [[bots]]\nname = \"e\"\ncommand = \"python3 bot.py\"\nreuse = true\n";

    fn check(text: String) {
        let path = Path::new("dir/t.toml");
        if let Err(e) = TournamentFile::parse(path, text, None) {
            assert!(
                e.0.contains("t.toml"),
                "an error that names no file: {}",
                e.0
            );
            assert!(!e.0.contains('\n') || e.0.lines().count() < 20, "{}", e.0);
        }
    }

    proptest! {
        #[test]
        fn any_text_is_read_or_refused(text in any::<String>()) {
            check(text);
        }

        #[test]
        fn a_damaged_good_file_is_read_or_refused(
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, "[\\[\\]=\"\n a-z0-9.,-]{0,3}"), 1..6)
        ) {
            let mut text: Vec<char> = GOOD.chars().collect();
            for (at, cut, insert) in edits {
                let i = at.index(text.len() + 1);
                let end = (i + cut).min(text.len());
                text.splice(i..end, insert.chars());
            }
            check(text.into_iter().collect());
        }
    }
}
