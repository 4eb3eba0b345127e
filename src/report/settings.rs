//! The run's settings as the page shows them: read from the folder's
//! `run.json` ([`RunSettings`]), or pieced together from its
//! `tournament.toml` (a folder written before `run.json` existed, or
//! merged from shards that had none), or nothing at all (a folder with only
//! `games.jsonl`, from `grade --out` or an older `serve`).

use std::path::Path;

use serde::Serialize;

use crate::play::journal::{self, BotAbout, RunSettings};
use crate::play::Observer;

/// The settings block of the page.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Settings {
    /// `[label, value]` rows, in the order shown.
    pub rows: Vec<[String; 2]>,
    /// The run's bots with what they are.
    pub bots: Vec<BotAbout>,
    /// Said instead of the rows when the folder keeps no settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The settings of run folder `dir`, and the title they give. A
/// `run.json` that cannot be read is a note, and the configuration is used
/// instead.
pub(crate) fn load(dir: &Path, observer: &dyn Observer) -> (Settings, Option<String>) {
    let file = match journal::read_settings(dir) {
        Ok(s) => s,
        Err(e) => {
            observer.note(&format!("{e:#}; the report shows no settings from it"));
            None
        }
    };
    let title = file.as_ref().and_then(|s| s.title.clone());
    let from_config = || {
        journal::read_config(dir)
            .ok()
            .map(|t| from_config(&t))
            .filter(|s| !s.game.is_empty())
    };
    let settings = match file {
        Some(s) if !s.game.is_empty() => Some(s),
        _ => from_config(),
    };
    let shown = match settings {
        Some(s) => Settings {
            rows: rows(&s),
            bots: s.bots,
            note: None,
        },
        None => Settings {
            note: Some(format!(
                "{} keeps no settings (no {} or {}): only the games are known.",
                dir.display(),
                journal::SETTINGS,
                journal::CONFIG
            )),
            ..Settings::default()
        },
    };
    (shown, title)
}

/// What a run folder's configuration copy (`tournament.toml` of a
/// tournament or a match) says, as settings; missing keys take the
/// tournament file's defaults.
pub(crate) fn from_config(t: &toml::Table) -> RunSettings {
    let int = |k: &str| t.get(k).and_then(toml::Value::as_integer).map(|v| v as u64);
    let text = |k: &str| t.get(k).and_then(toml::Value::as_str).map(str::to_string);
    let game = text("game").unwrap_or_default();
    let mut s = RunSettings {
        boards: game
            .parse::<crate::game::GameKind>()
            .ok()
            .filter(|k| k.has_boards())
            .map(|_| int("boards").map_or(3, |b| b as u8)),
        game,
        rules: text("rules"),
        time_ms: int("time_ms").or(Some(1000)),
        startup_ms: int("startup_ms").or(Some(2000)),
        random_plies: int("random_plies").or(Some(0)),
        seed: int("seed"),
        shuffle_openings: t
            .get("shuffle_openings")
            .and_then(toml::Value::as_bool)
            .unwrap_or(false),
        ..RunSettings::default()
    };
    let bots = t
        .get("bots")
        .and_then(toml::Value::as_array)
        .cloned()
        .unwrap_or_default();
    if text("kind").as_deref() == Some("match") {
        s.format = "match".into();
        s.games = int("games");
        s.sprt = text("sprt");
        // A match keeps its suite by checksum only.
        s.openings = text("openings_sha256")
            .map(|h| format!("a suite (SHA-256 {}…)", h.get(..12).unwrap_or(&h)));
        s.bots = bots
            .iter()
            .filter_map(|b| b.as_str())
            .map(|b| BotAbout {
                name: b.to_string(),
                bot: b.to_string(),
                description: String::new(),
            })
            .collect();
        return s;
    }
    s.format = text("format").unwrap_or_else(|| "round-robin".into());
    s.games_per_pairing = int("games_per_pairing").or(Some(2));
    s.openings = text("openings").map(|o| file_name(&o));
    s.challengers = t
        .get("challengers")
        .and_then(toml::Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    s.bots = bots
        .iter()
        .filter_map(|b| b.as_table())
        .map(|b| {
            let field = |k: &str| b.get(k).and_then(toml::Value::as_str).map(str::to_string);
            let command = match b.get("command") {
                Some(toml::Value::Array(words)) => Some(
                    words
                        .iter()
                        .filter_map(|w| w.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                other => other.and_then(toml::Value::as_str).map(str::to_string),
            };
            let bot = field("builtin")
                .or(command)
                .or_else(|| field("manifest").map(|m| format!("manifest {m}")))
                .unwrap_or_default();
            let description = match (field("description"), field("builtin")) {
                (Some(d), _) => d,
                (None, Some(b)) => builtin_description(&s.game, &b),
                (None, None) => String::new(),
            };
            BotAbout {
                name: field("name").unwrap_or_default(),
                bot,
                description,
            }
        })
        .collect();
    s
}

/// The description of built-in `spec` (`optimal:iters=5`) of game `game`
/// from the game's table; empty when there is no such game or bot.
fn builtin_description(game: &str, spec: &str) -> String {
    use crate::bot::BuiltinBots;
    let Ok(kind) = game.parse::<crate::game::GameKind>() else {
        return String::new();
    };
    let name = crate::bot::BuiltinSpec::parse(spec).name;
    crate::with_game!(kind, G => G::builtin(&name).map(|b| b.description.to_string()))
        .unwrap_or_default()
}

/// The last part of a path as written in a file.
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// `2025-06-01T14:03:07Z` as `2025-06-01 14:03 UTC`; anything else as is.
fn date_text(s: &str) -> String {
    match (s.get(..10), s.get(11..16), s.ends_with('Z')) {
        (Some(d), Some(t), true) if s.as_bytes().get(10) == Some(&b'T') => format!("{d} {t} UTC"),
        _ => s.to_string(),
    }
}

/// The rows of the settings block, in words.
pub(crate) fn rows(s: &RunSettings) -> Vec<[String; 2]> {
    let mut out: Vec<[String; 2]> = Vec::new();
    let mut row = |k: &str, v: String| out.push([k.to_string(), v]);
    row(
        "Game",
        match s.boards {
            Some(1) => format!("{}, 1 board", s.game),
            Some(n) => format!("{}, {n} boards", s.game),
            None => s.game.clone(),
        },
    );
    let format = match s.format.as_str() {
        "gauntlet" if !s.challengers.is_empty() => {
            format!("gauntlet (challengers: {})", s.challengers.join(", "))
        }
        "server" => match &s.protocol {
            Some(p) => format!("server ({p} protocol)"),
            None => "server".into(),
        },
        "" => "not recorded".into(),
        f => f.to_string(),
    };
    row("Format", format);
    if let Some(r) = &s.rules {
        row(
            "Rules",
            format!("{r} (a game that fills every board is won on boards won)"),
        );
    }
    if let Some(n) = s.games_per_pairing {
        row("Games per pairing", n.to_string());
    }
    if let Some(n) = s.games {
        row(
            "Games",
            if s.sprt.is_some() {
                format!("at most {n}")
            } else {
                n.to_string()
            },
        );
    }
    if let Some(n) = s.rounds {
        row("Rounds per connection", n.to_string());
    }
    if let Some(t) = &s.sprt {
        row("SPRT", t.clone());
    }
    if let Some(ms) = s.time_ms {
        let who = if s.format == "server" {
            "clients and the server's external bot"
        } else {
            "external bots; built-ins are not timed"
        };
        let startup = match s.startup_ms {
            Some(st) if st > 0 => format!(", +{st} ms on a first turn"),
            _ => String::new(),
        };
        row("Time limit", format!("{ms} ms a move{startup} ({who})"));
    }
    let plies = s.random_plies.filter(|&p| p > 0).map(|p| match p {
        1 => "1 random ply".to_string(),
        p => format!("{p} random plies"),
    });
    let suite = s.openings.as_ref().map(|o| {
        if s.shuffle_openings {
            format!("{o} (shuffled)")
        } else {
            o.clone()
        }
    });
    let openings = match (suite, plies) {
        (Some(o), Some(p)) => Some(format!("{o}, then {p}")),
        (Some(o), None) => Some(o),
        (None, Some(p)) => Some(p),
        (None, None) if s.random_plies.is_some() => Some("none (the usual start)".into()),
        (None, None) => None,
    };
    if let Some(o) = openings {
        row("Openings", o);
    }
    if let Some(seed) = s.seed {
        row("Seed", seed.to_string());
    }
    if let Some(d) = &s.created {
        row("Made", date_text(d));
    }
    if let Some(v) = &s.referee_version {
        row("Referee", format!("version {v}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(rows: &'a [[String; 2]], k: &str) -> Option<&'a str> {
        rows.iter().find(|r| r[0] == k).map(|r| r[1].as_str())
    }

    #[test]
    fn an_old_tournament_folder_reads_from_its_configuration() {
        let t: toml::Table = toml::from_str(
            "game = \"notakto\"\nboards = 2\nformat = \"gauntlet\"\nchallengers = [\"me\"]\n\
             openings = \"../openings/n.txt\"\nrandom_plies = 1\nseed = 9\n\
             [[bots]]\nname = \"me\"\ncommand = [\"python3\", \"b.py\"]\ndescription = \"mine\"\n\
             [[bots]]\nname = \"o\"\nbuiltin = \"optimal\"\n",
        )
        .unwrap();
        let s = from_config(&t);
        let r = rows(&s);
        assert_eq!(row(&r, "Game"), Some("notakto, 2 boards"));
        assert_eq!(row(&r, "Format"), Some("gauntlet (challengers: me)"));
        assert_eq!(row(&r, "Games per pairing"), Some("2"));
        assert_eq!(row(&r, "Openings"), Some("n.txt, then 1 random ply"));
        assert_eq!(row(&r, "Seed"), Some("9"));
        assert_eq!(
            row(&r, "Time limit"),
            Some(
                "1000 ms a move, +2000 ms on a first turn (external bots; built-ins are not timed)"
            )
        );
        assert_eq!(s.bots[0].bot, "python3 b.py");
        assert_eq!(s.bots[0].description, "mine");
        assert!(
            s.bots[1].description.starts_with("perfect play"),
            "{:?}",
            s.bots[1]
        );
        assert_eq!(row(&r, "Made"), None);
    }

    #[test]
    fn a_match_configuration_and_dates() {
        let t: toml::Table = toml::from_str(
            "kind = \"match\"\ngame = \"uttt\"\ngames = 40\nseed = 3\nrandom_plies = 0\n\
             sprt = \"elo0=0,elo1=5\"\nbots = [\"a\", \"b\"]\n",
        )
        .unwrap();
        let mut s = from_config(&t);
        s.created = Some("2025-06-01T14:03:07Z".into());
        let r = rows(&s);
        assert_eq!(row(&r, "Format"), Some("match"));
        assert_eq!(row(&r, "Games"), Some("at most 40"));
        assert_eq!(row(&r, "Openings"), Some("none (the usual start)"));
        assert_eq!(row(&r, "Made"), Some("2025-06-01 14:03 UTC"));
        assert_eq!(s.bots.len(), 2);
    }
}
