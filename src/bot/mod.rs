//! Bots: one [`Bot`] trait (state in, move out), the built-in bots of every
//! game, and bot specifications such as `optimal:iters=20000`.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::game::{Game, MoveList, Outcome, Seat};
use crate::protocol::{BotResult, Forfeit};

pub mod affinity;
pub(crate) mod console;
pub mod external;
pub(crate) mod groups;
pub mod manifest;
pub mod notakto;
pub mod process;
pub mod random;
#[cfg(target_os = "linux")]
pub mod sandbox;
pub mod spec;
pub(crate) mod tictactoe;
pub mod uttt;

pub use console::FormatFinding;

pub(crate) use random::RandomBot;
pub use spec::BotSpec;

/// Time allowed to a bot: per move, and once more for start-up on the first turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// The per-move limit in milliseconds.
    pub move_ms: u64,
    /// Extra time on the first turn only, for interpreter start-up.
    pub startup_ms: u64,
    /// CodinGame's clock when above 0: the time a freshly started process
    /// may take before it takes its first input line, not counted in its
    /// first turn, whose `move_ms + startup_ms` then run from that read
    /// (CodinGame's referee times a turn from the input it writes). 0 (the
    /// default): the first turn is timed from when its line is written,
    /// start-up included.
    pub launch_ms: u64,
    /// Tolerance added to every limit, for the pipe's round trip and the
    /// scheduling of a loaded machine (CodinGame's profile: 10 ms); 0 by
    /// default.
    pub slack_ms: u64,
}

impl TimeControl {
    /// Limits of `move_ms` a move and `startup_ms` more on the first turn,
    /// timed from the turn line, with no tolerance: referee's own clock.
    pub const fn new(move_ms: u64, startup_ms: u64) -> TimeControl {
        TimeControl {
            move_ms,
            startup_ms,
            launch_ms: 0,
            slack_ms: 0,
        }
    }

    /// CodinGame's limits: 1000 ms for the first turn, 100 ms for each
    /// later one, each timed from when the bot takes its input (a fresh
    /// process per game: the process may take 1000 ms to start before it
    /// reads its first line), with 10 ms of tolerance on each.
    pub const CODINGAME: TimeControl = TimeControl {
        move_ms: 100,
        startup_ms: 900,
        launch_ms: 1000,
        slack_ms: 10,
    };
}

/// A named set of time limits (`time = "codingame"` in a manifest or a
/// tournament file, `--time-profile codingame`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeProfile {
    /// [`TimeControl::CODINGAME`].
    CodinGame,
}

impl TimeProfile {
    /// The limits it stands for.
    pub fn control(self) -> TimeControl {
        match self {
            TimeProfile::CodinGame => TimeControl::CODINGAME,
        }
    }
}

impl std::str::FromStr for TimeProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "codingame" => Ok(TimeProfile::CodinGame),
            other => Err(format!(
                "unknown time profile '{other}' (expected codingame)"
            )),
        }
    }
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl::new(1000, 2000)
    }
}

/// A player. The referee calls `begin` once, `select_move` on each of the
/// bot's turns, and `end` once. A bot that misbehaves returns a [`Forfeit`]:
/// a result, not a crash.
pub trait Bot<G: Game>: Send {
    /// The bot's display name.
    fn name(&self) -> &str;

    /// Called once before the first move.
    fn begin(&mut self, _seat: Seat, _time: &TimeControl) -> Result<(), Forfeit> {
        Ok(())
    }

    /// The bot's move in `pos`, where it is to move. Bots choose from the
    /// position alone: calls may come from unrelated lines of play.
    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit>;

    /// The bot's own measurement of its last move's time in µs, when it has a
    /// more exact one than the caller's stopwatch (external bots do).
    fn last_move_time_us(&self) -> Option<u64> {
        None
    }

    /// Called once when the game ended on the board, before the result is
    /// final: a bot that must confirm the end (a console program printing
    /// its end line) forfeits here when it gets it wrong.
    fn confirm_end(&mut self, _final_pos: &G, _outcome: Outcome) -> Result<(), Forfeit> {
        Ok(())
    }

    /// Called once when the game is over, from this bot's point of view.
    fn end(&mut self, _result: BotResult) {}

    /// After [`Bot::end`]: how the bot's printed transcript differed from
    /// the assignment's, for a console program whose output did (its
    /// format, apart from its play).
    fn format_finding(&mut self) -> Option<crate::bot::FormatFinding> {
        None
    }
}

impl<G: Game> Bot<G> for Box<dyn Bot<G>> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn begin(&mut self, seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        (**self).begin(seat, time)
    }
    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        (**self).select_move(pos)
    }
    fn last_move_time_us(&self) -> Option<u64> {
        (**self).last_move_time_us()
    }
    fn confirm_end(&mut self, final_pos: &G, outcome: Outcome) -> Result<(), Forfeit> {
        (**self).confirm_end(final_pos, outcome)
    }
    fn end(&mut self, result: BotResult) {
        (**self).end(result)
    }
    fn format_finding(&mut self) -> Option<crate::bot::FormatFinding> {
        (**self).format_finding()
    }
}

/// A bad bot name, parameter or value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BotError(pub String);

/// `key=value` parameters of a built-in bot, as in `optimal:iters=20000,puct=1.2`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params {
    bot: String,
    values: BTreeMap<String, String>,
    /// The bot's table, once checked against it: a key the bot reads
    /// must be in it (debug builds assert it).
    listed: Option<&'static [Param]>,
}

impl Params {
    /// Parses `k=v,k=v` for the bot named `bot` (used in error messages).
    pub(crate) fn parse(bot: &str, text: &str) -> Result<Params, BotError> {
        let mut values = BTreeMap::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                BotError(format!(
                    "bot '{bot}': parameter '{part}' must be written key=value"
                ))
            })?;
            let k = k.trim().to_string();
            if values.insert(k.clone(), v.trim().to_string()).is_some() {
                return Err(BotError(format!(
                    "bot '{bot}': parameter '{k}' given twice"
                )));
            }
        }
        Ok(Params {
            bot: bot.to_string(),
            values,
            listed: None,
        })
    }

    /// Fails on any key not in the bot's table `listed`, and keeps the
    /// table, so that a parameter cannot be accepted without being listed.
    fn check(&mut self, listed: &'static [Param]) -> Result<(), BotError> {
        let keys: Vec<&str> = listed.iter().map(|p| p.key).collect();
        self.only(&keys)?;
        self.listed = Some(listed);
        Ok(())
    }

    /// Asserts (in debug builds) that `key` is in the checked table.
    fn assert_listed(&self, key: &str) {
        debug_assert!(
            self.listed.is_none_or(|t| t.iter().any(|p| p.key == key)),
            "bot '{}' reads parameter '{key}', which its table does not list",
            self.bot
        );
    }

    /// Fails on any key not in `known`, naming it and the accepted keys.
    pub(crate) fn only(&self, known: &[&str]) -> Result<(), BotError> {
        for k in self.values.keys() {
            if !known.contains(&k.as_str()) {
                let accepted = if known.is_empty() {
                    "it takes no parameters".to_string()
                } else {
                    format!("accepted: {}", known.join(", "))
                };
                return Err(BotError(format!(
                    "bot '{}': unknown parameter '{k}' ({accepted})",
                    self.bot
                )));
            }
        }
        Ok(())
    }

    /// A typed parameter, or `default` when absent.
    pub(crate) fn get<T: FromStr>(&self, key: &str, default: T) -> Result<T, BotError> {
        self.assert_listed(key);
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| {
                BotError(format!(
                    "bot '{}': bad value '{v}' for parameter '{key}'",
                    self.bot
                ))
            }),
        }
    }

    /// A typed parameter if present.
    pub(crate) fn opt<T: FromStr>(&self, key: &str) -> Result<Option<T>, BotError> {
        self.assert_listed(key);
        match self.values.get(key) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                BotError(format!(
                    "bot '{}': bad value '{v}' for parameter '{key}'",
                    self.bot
                ))
            }),
        }
    }
}

/// Makes one built-in bot, seeded, for a game: what a built-in's checked
/// parameters turn into, once per run.
pub(crate) type Maker<G> = Arc<dyn Fn(u64) -> Box<dyn Bot<G>> + Send + Sync>;

/// A [`Maker`] from a function that makes the bot from its seed.
pub(crate) fn maker<G: Game, B: Bot<G> + 'static>(
    make: impl Fn(u64) -> B + Send + Sync + 'static,
) -> Maker<G> {
    Arc::new(move |seed| Box::new(make(seed)))
}

/// One parameter of a built-in bot, as `referee bots` lists it. The
/// resolver accepts exactly the keys of a bot's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// The key, as in `iters=5000`.
    pub key: &'static str,
    /// The value when it is not given, as text.
    pub default: &'static str,
    /// What it does, with the values it takes.
    pub meaning: &'static str,
}

/// One built-in bot of game `G`: its line in the game's table.
pub struct Builtin<G: Game> {
    /// Its name.
    pub name: &'static str,
    /// One line on how it plays.
    pub description: &'static str,
    /// Its parameters: the only ones it accepts.
    pub params: &'static [Param],
    /// Checks the parameters and returns what makes the bot for each game.
    pub prepare: fn(&Params) -> Result<Maker<G>, BotError>,
}

/// How every game's `random` plays.
pub(crate) const RANDOM: &str = "uniform among legal moves";

/// The table line of a built-in without parameters: its name, how it
/// plays, and what makes it from its seed.
macro_rules! plain_builtin {
    ($name:expr, $description:expr, $make:expr) => {
        $crate::bot::Builtin {
            name: $name,
            description: $description,
            params: &[],
            prepare: |p| $crate::bot::plain(p, $make),
        }
    };
}
pub(crate) use plain_builtin;

/// A built-in without parameters (its table is empty), made by `make`
/// from its seed.
pub(crate) fn plain<G: Game, B: Bot<G> + 'static>(
    _params: &Params,
    make: fn(u64) -> B,
) -> Result<Maker<G>, BotError> {
    Ok(maker(make))
}

/// Games whose built-in bots can be made by name.
pub trait BuiltinBots: Game {
    /// The built-in bots of this game: the one table that `referee bots`,
    /// name resolution and error messages read.
    const BUILTINS: &'static [Builtin<Self>];

    /// The built-in named `name`, if there is one.
    fn builtin(name: &str) -> Option<&'static Builtin<Self>> {
        Self::BUILTINS.iter().find(|b| b.name == name)
    }

    /// The names of the built-ins, for messages: `random, greedy, optimal`.
    fn builtin_names() -> String {
        Self::BUILTINS
            .iter()
            .map(|b| b.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A built-in bot as named by a user (`optimal:iters=5000`), with its
/// parameters checked once (by [`BuiltinSpec::prepare`]) for the game it
/// plays.
#[derive(Clone)]
pub struct BuiltinSpec {
    /// The built-in's name.
    pub name: String,
    /// The parameter text after the colon.
    pub params: String,
    /// The prepared [`Maker`] of the game it was prepared for.
    prepared: Option<Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for BuiltinSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BuiltinSpec({self})")
    }
}

impl PartialEq for BuiltinSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.params == other.params
    }
}

impl Eq for BuiltinSpec {}

impl fmt::Display for BuiltinSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.params.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}:{}", self.name, self.params)
        }
    }
}

impl BuiltinSpec {
    /// Splits `name[:k=v,...]`; nothing is checked yet.
    pub fn parse(text: &str) -> BuiltinSpec {
        let t = text.trim();
        let (name, params) = match t.split_once(':') {
            Some((n, p)) => (n.trim(), p.trim()),
            None => (t, ""),
        };
        BuiltinSpec {
            name: name.to_string(),
            params: params.to_string(),
            prepared: None,
        }
    }

    /// A bot made in code rather than named: `make` makes each game's bot
    /// from its seed; `name` is what it is shown as.
    pub(crate) fn custom<G: Game, B: Bot<G> + 'static>(
        name: &str,
        make: impl Fn(u64) -> B + Send + Sync + 'static,
    ) -> BuiltinSpec {
        BuiltinSpec {
            name: name.to_string(),
            params: String::new(),
            prepared: Some(Arc::new(maker::<G, B>(make))),
        }
    }

    /// Whether `name` is a built-in bot of game `G`.
    pub(crate) fn is_builtin<G: BuiltinBots>(&self) -> bool {
        G::builtin(&self.name).is_some()
    }

    /// Checks the name and the parameters for game `G` and keeps what makes
    /// the bot, so that each game's bot is made without parsing anything.
    pub(crate) fn prepare<G: BuiltinBots>(mut self) -> Result<BuiltinSpec, BotError> {
        let maker = self.maker::<G>()?;
        self.prepared = Some(Arc::new(maker));
        Ok(self)
    }

    fn maker<G: BuiltinBots>(&self) -> Result<Maker<G>, BotError> {
        let b = G::builtin(&self.name).ok_or_else(|| {
            BotError(format!(
                "unknown bot '{}' for {} (built-ins: {})",
                self.name,
                G::KIND,
                G::builtin_names()
            ))
        })?;
        let mut params = Params::parse(&self.name, &self.params)?;
        params.check(b.params)?;
        (b.prepare)(&params)
    }

    /// Makes the bot for game `G`, seeded by `seed`.
    pub fn make<G: BuiltinBots>(&self, seed: u64) -> Result<Box<dyn Bot<G>>, BotError> {
        match self
            .prepared
            .as_ref()
            .and_then(|p| p.downcast_ref::<Maker<G>>())
        {
            Some(make) => Ok(make(seed)),
            None => Ok(self.maker::<G>()?(seed)),
        }
    }
}

/// Picks uniformly among `best`, a helper shared by bots that break ties at random.
pub(crate) fn pick<T: Copy, R: rand::Rng + ?Sized>(best: &[T], rng: &mut R) -> Option<T> {
    if best.is_empty() {
        None
    } else {
        Some(best[rng.random_range(0..best.len())])
    }
}

/// A bot that picks uniformly, with its own seeded generator, among the
/// moves a rule allows: the shape of every rule-based built-in (`greedy`,
/// and `optimal` where a solver gives the set of best moves).
pub struct RuleBot<G: Game> {
    name: &'static str,
    rule: fn(&G) -> MoveList<G::Move>,
    rng: rand_chacha::ChaCha8Rng,
}

impl<G: Game> RuleBot<G> {
    /// A bot named `name` that plays one of `rule(pos)`, seeded by `seed`.
    pub fn new(name: &'static str, rule: fn(&G) -> MoveList<G::Move>, seed: u64) -> Self {
        RuleBot {
            name,
            rule,
            rng: crate::seed::rng(seed),
        }
    }
}

impl<G: Game> Bot<G> for RuleBot<G> {
    fn name(&self) -> &str {
        self.name
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        if pos.is_over() {
            return Err(no_move_forfeit(pos));
        }
        pick(&(self.rule)(pos), &mut self.rng).ok_or_else(|| no_move_forfeit(pos))
    }
}

/// A forfeit for an in-process bot asked to move where it cannot.
pub(crate) fn no_move_forfeit<G: Game>(pos: &G) -> Forfeit {
    let mut f = Forfeit::new(
        crate::protocol::ForfeitReason::Illegal,
        "asked to move in a finished position",
    );
    f.position = pos.to_string();
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_and_validate() {
        let p = Params::parse("optimal", "iters=200, c=1.5").unwrap();
        assert_eq!(p.get("iters", 0u32).unwrap(), 200);
        assert_eq!(p.get("c", 0.0f64).unwrap(), 1.5);
        assert!(p.only(&["iters", "c"]).is_ok());
        let e = p.only(&["iters"]).unwrap_err().to_string();
        assert!(e.contains("unknown parameter 'c'"), "{e}");
        assert!(Params::parse("x", "iters").is_err());
        assert!(Params::parse("x", "a=1,a=2").is_err());
        assert!(p.get::<u32>("c", 0).is_err());
    }

    #[test]
    fn spec_splits_name_and_params() {
        let s = BuiltinSpec::parse("optimal:iters=5");
        assert_eq!(s.name, "optimal");
        assert_eq!(s.params, "iters=5");
        assert_eq!(s.to_string(), "optimal:iters=5");
    }

    #[test]
    fn a_prepared_builtin_makes_bots_and_bad_parameters_fail_once() {
        use crate::game::{TicTacToe, Uttt};
        let s = BuiltinSpec::parse("greedy").prepare::<TicTacToe>().unwrap();
        assert_eq!(s.make::<TicTacToe>(3).unwrap().name(), "greedy");
        let e = BuiltinSpec::parse("greedy:x=1")
            .prepare::<TicTacToe>()
            .unwrap_err();
        assert!(e.0.contains("unknown parameter 'x'"), "{e}");
        let e = BuiltinSpec::parse("nope").prepare::<Uttt>().unwrap_err();
        assert!(
            e.0.contains("built-ins: random, greedy, optimal, uct"),
            "{e}"
        );
    }
}
