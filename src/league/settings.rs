//! `league.toml`: a league's settings, written by `league init`, editable
//! by hand, checked with `file:line:column` errors on every read.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bot::manifest::SandboxMode;
use crate::bot::{BotSpec, TimeControl};
use crate::game::{GameKind, GameOptions, Rules};

/// The settings file's name in a league folder.
pub const SETTINGS: &str = "league.toml";

/// A league's settings (docs/league.md lists every key).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LeagueSettings {
    /// The league's name, shown on its page.
    #[serde(default = "default_title")]
    pub title: String,
    /// The game.
    pub game: GameKind,
    /// Notakto's boards.
    #[serde(default = "default_boards")]
    pub boards: u8,
    /// UTTT's rule for a game without three boards in a row: `standard` (a
    /// draw) or `codingame` (more small boards won wins).
    #[serde(default)]
    pub rules: Rules,
    /// The per-move limit in ms.
    #[serde(default = "default_time_ms")]
    pub time_ms: u64,
    /// Extra time on a bot's first turn (interpreter start-up), in ms.
    #[serde(default = "default_startup_ms")]
    pub startup_ms: u64,
    /// The built-in bots that play in the ladder from the start; the first
    /// is pinned at `pin_rating`.
    pub anchors: Vec<String>,
    /// The first anchor's rating in Elo.
    #[serde(default)]
    pub pin_rating: f64,
    /// The rating's prior: virtual games per bot, half won and half lost.
    #[serde(default = "default_prior")]
    pub prior_games: f64,
    /// The master seed of every pairing and game.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Ladder games a new version plays with priority ("being placed").
    #[serde(default = "default_placement")]
    pub placement_games: u64,
    /// Extra pairs per cycle of a version being placed.
    #[serde(default = "default_placement_pairs")]
    pub placement_pairs: usize,
    /// Pairs per bot and cycle among ladder neighbours (even).
    #[serde(default = "default_degree")]
    pub degree: usize,
    /// Random plies before the bots take over (both games of a pair share
    /// them).
    #[serde(default)]
    pub random_plies: usize,
    /// An opening suite (a file of positions or move lists, relative to the
    /// league folder); pairs go through it in turn.
    #[serde(default)]
    pub openings: Option<PathBuf>,
    /// How students' bots are confined: `on`, `best-effort` or `off`.
    #[serde(default = "default_sandbox")]
    pub sandbox: SandboxMode,
    /// Games per pair of bots in the final (even: seats swapped).
    #[serde(default = "default_final_games")]
    pub final_games_per_pair: u64,
    /// Above this many bots, the final is a Swiss system, not a round robin.
    #[serde(default = "default_final_swiss")]
    pub final_swiss_above: usize,
}

fn default_title() -> String {
    "League".into()
}
fn default_boards() -> u8 {
    3
}
fn default_time_ms() -> u64 {
    TimeControl::default().move_ms
}
fn default_startup_ms() -> u64 {
    TimeControl::default().startup_ms
}
fn default_prior() -> f64 {
    2.0
}
fn default_seed() -> u64 {
    1
}
fn default_placement() -> u64 {
    48
}
fn default_placement_pairs() -> usize {
    4
}
fn default_degree() -> usize {
    4
}
fn default_sandbox() -> SandboxMode {
    SandboxMode::On
}
fn default_final_games() -> u64 {
    10
}
fn default_final_swiss() -> usize {
    40
}

impl LeagueSettings {
    /// New settings with the defaults.
    pub fn new(game: GameKind, anchors: Vec<String>) -> LeagueSettings {
        LeagueSettings {
            title: default_title(),
            game,
            boards: default_boards(),
            rules: Rules::Standard,
            time_ms: default_time_ms(),
            startup_ms: default_startup_ms(),
            anchors,
            pin_rating: 0.0,
            prior_games: default_prior(),
            seed: default_seed(),
            placement_games: default_placement(),
            placement_pairs: default_placement_pairs(),
            degree: default_degree(),
            random_plies: 0,
            openings: None,
            sandbox: default_sandbox(),
            final_games_per_pair: default_final_games(),
            final_swiss_above: default_final_swiss(),
        }
    }

    /// The game options.
    pub fn options(&self) -> GameOptions {
        GameOptions {
            boards: self.boards,
            rules: self.rules,
        }
    }

    /// The time control of every game.
    pub fn time(&self) -> TimeControl {
        TimeControl::new(self.time_ms, self.startup_ms)
    }

    /// Reads and checks `dir/league.toml`.
    pub fn load(dir: &Path) -> anyhow::Result<LeagueSettings> {
        let path = dir.join(SETTINGS);
        let text = crate::bot::manifest::read_small_text(&path).map_err(|e| {
            anyhow::anyhow!(
                "{}: {} (is {} a league folder? `referee league init` makes one)",
                path.display(),
                e.downcast_ref::<std::io::Error>()
                    .map_or_else(|| format!("{e:#}"), |io| io.to_string()),
                dir.display()
            )
        })?;
        Self::parse(&path, &text)
    }

    /// Checks a settings file's `text` (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> anyhow::Result<LeagueSettings> {
        let s: LeagueSettings = toml::from_str(text).map_err(|e| {
            let (l, c) = crate::tournament::config::line_col(text, e.span().map_or(0, |s| s.start));
            anyhow::anyhow!("{}:{l}:{c}: {}", path.display(), e.message().trim())
        })?;
        let at = |key: &str, msg: String| {
            let line = key_line(text, key);
            anyhow::anyhow!("{}:{line}: {key}: {msg}", path.display())
        };
        if s.anchors.is_empty() {
            return Err(at(
                "anchors",
                "name at least one built-in bot (the first is pinned at pin_rating)".into(),
            ));
        }
        for (i, a) in s.anchors.iter().enumerate() {
            crate::with_game!(s.game, G => match BotSpec::resolve::<G>(a) {
                Ok(BotSpec::Builtin(_)) => {}
                Ok(BotSpec::External(_)) | Err(_) => {
                    return Err(at(
                        "anchors",
                        format!(
                            "'{a}' is not a built-in bot of {} (see `referee bots`)",
                            s.game
                        ),
                    ))
                }
            });
            if s.anchors[..i].contains(a) {
                return Err(at("anchors", format!("'{a}' is listed twice")));
            }
        }
        if s.game == GameKind::Notakto && !(1..=26).contains(&s.boards) {
            return Err(at("boards", format!("{} is not in 1..=26", s.boards)));
        }
        if !s.rules.is_standard() && s.game != GameKind::Uttt {
            return Err(at(
                "rules",
                format!(
                    "\"{}\" is a rule of uttt, not of {}",
                    s.rules.name(),
                    s.game
                ),
            ));
        }
        if s.time_ms == 0 || s.time_ms > 600_000 {
            return Err(at("time_ms", format!("{} is not in 1..=600000", s.time_ms)));
        }
        if !(s.prior_games >= 0.0 && s.prior_games <= 1000.0) {
            return Err(at("prior_games", "must be in 0..=1000".into()));
        }
        if !s.pin_rating.is_finite() {
            return Err(at("pin_rating", "must be a number".into()));
        }
        if s.degree == 0 || s.degree % 2 == 1 || s.degree > 64 {
            return Err(at(
                "degree",
                format!("{} must be even, from 2 to 64", s.degree),
            ));
        }
        if s.placement_pairs > 64 {
            return Err(at("placement_pairs", "at most 64".into()));
        }
        if s.final_games_per_pair == 0 || s.final_games_per_pair % 2 == 1 {
            return Err(at(
                "final_games_per_pair",
                "must be even and positive (each opening with seats swapped)".into(),
            ));
        }
        if s.final_swiss_above < 2 {
            return Err(at("final_swiss_above", "must be at least 2".into()));
        }
        Ok(s)
    }

    /// The file's text (what `init` writes), with a comment per key.
    pub fn to_text(&self) -> String {
        // A game's file holds only the settings of that game: `boards` is
        // Notakto's, `rules` UTTT's (both read back as their defaults).
        let other_game = |line: &str| {
            (!self.game.has_boards() && line.starts_with("boards = "))
                || (!self.game.has_rules() && line.starts_with("rules = "))
        };
        let mut top = true;
        let body: String = toml::to_string(self)
            .unwrap_or_default()
            .lines()
            .filter(|l| {
                top &= !l.starts_with('[');
                !(top && other_game(l))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        format!(
            "# A referee league (docs/league.md). Edit and restart `referee league run`;\n\
             # every key is checked with its line on each read.\n{body}"
        )
    }
}

/// The 1-based line where `key` is set in `text` (1 when it is not).
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip() {
        for game in GameKind::ALL {
            let s = LeagueSettings::new(game, vec!["random".into(), "greedy".into()]);
            let text = s.to_text();
            let back = LeagueSettings::parse(Path::new("league.toml"), &text).unwrap();
            assert_eq!(back, s);
            // Each game's file holds its own settings only.
            let has = |key: &str| text.lines().any(|l| l.starts_with(&format!("{key} = ")));
            assert_eq!(has("boards"), game == GameKind::Notakto, "{game}:\n{text}");
            assert_eq!(has("rules"), game == GameKind::Uttt, "{game}:\n{text}");
        }
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let text = "game = \"uttt\"\nanchors = [\"random\"]\ndegree = 3\n";
        let e = LeagueSettings::parse(Path::new("l/league.toml"), text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "l/league.toml:3: degree: 3 must be even, from 2 to 64"
        );
        let text = "game = \"uttt\"\nanchors = [\"nobody\"]\n";
        let e = LeagueSettings::parse(Path::new("league.toml"), text).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("league.toml:2: anchors: 'nobody'"),
            "{e}"
        );
        let text = "game = \"tictactoe\"\nanchors = [\"random\"]\nrules = \"codingame\"\n";
        let e = LeagueSettings::parse(Path::new("league.toml"), text).unwrap_err();
        assert!(e.to_string().starts_with("league.toml:3: rules:"), "{e}");
        let text = "game = \"uttt\"\nanchors = [\"random\"]\nrules = \"codingame\"\n";
        let s = LeagueSettings::parse(Path::new("league.toml"), text).unwrap();
        assert_eq!(s.options().rules, Rules::CodinGame);
        let text = "game = \"uttt\"\nanchors = [\"random\"]\ncolour = 1\n";
        let e = LeagueSettings::parse(Path::new("league.toml"), text).unwrap_err();
        assert!(
            e.to_string().starts_with("league.toml:3:1: unknown field"),
            "{e}"
        );
    }
}
