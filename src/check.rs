//! The compliance check (`referee check`): an external bot, run exactly as
//! a tournament runs it, through a set of positions of every kind in both
//! seats, the end of a game, the reuse contract when it declares it, and a
//! full game against the random bot in each seat. Each check passes or
//! fails with its reason.

use anyhow::{bail, Context};

use crate::bot::external::{ExternalBot, ProcessPool};
use crate::bot::manifest::ExternalSpec;
use crate::bot::{Bot, BuiltinBots, BuiltinSpec, TimeControl};
use crate::game::{Game, Seat};
use crate::play::referee::{play_game, GameSetup};
use crate::play::text::format_us;
use crate::protocol::Forfeit;
use crate::protocol::{BotProtocol, BotResult};

/// Plays `moves` from the start of `G` with these options.
pub(crate) fn position_from_moves<G: Game>(
    opts: &crate::game::GameOptions,
    moves: &[&str],
) -> anyhow::Result<G> {
    let mut pos = G::start(opts);
    for (i, m) in moves.iter().enumerate() {
        let mv = G::parse_move(m).map_err(|e| anyhow::anyhow!("check position move {i}: {e}"))?;
        pos.play(mv)
            .map_err(|e| anyhow::anyhow!("check position move {i}: {e}"))?;
    }
    Ok(pos)
}

/// The outcome of one check.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// What was checked.
    pub name: String,
    /// Whether it passed.
    pub pass: bool,
    /// What happened (the move and its time, or why it failed).
    pub detail: String,
}

/// Everything `check` measured.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Every check in order.
    pub results: Vec<CheckResult>,
    /// Start-up time per process started (spawn to first reply), in µs.
    pub startup_us: Vec<u64>,
    /// Every later move's time in µs.
    pub move_us: Vec<u64>,
    /// The protocol the bot was checked in.
    pub protocol: BotProtocol,
    /// Whether that protocol was found by trying (the bot did not say).
    pub detected: bool,
}

impl CheckReport {
    fn add(&mut self, name: String, pass: bool, detail: String) {
        self.results.push(CheckResult { name, pass, detail });
    }

    /// Whether every check passed.
    pub fn all_pass(&self) -> bool {
        self.results.iter().all(|r| r.pass)
    }
}

fn forfeit_text(f: &Forfeit) -> String {
    let mut s = format!("forfeit by {}: {}", f.reason, f.detail);
    if let Some(l) = &f.line {
        s.push_str(&format!("; received \"{l}\""));
    }
    if f.time_us > 0 {
        s.push_str(&format!("; after {}", format_us(f.time_us as f64)));
    }
    if let Some(st) = &f.exit_status {
        s.push_str(&format!("; {st}"));
    }
    let tail = f.stderr_tail.trim();
    if !tail.is_empty() {
        let last: Vec<&str> = tail.lines().rev().take(3).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        s.push_str(&format!("; stderr ends: {}", last.join(" | ")));
    }
    s
}

/// The protocol `spec` speaks: the one it declares, or for a bot that
/// does not say, v1 unless it fails its first v1 turn and then plays a
/// whole game from the empty board in CodinGame's protocol (for games that
/// CodinGame has). Returns it and whether it was found by trying.
fn protocol_of<G: BuiltinBots>(
    spec: &ExternalSpec,
    opts: &crate::game::GameOptions,
    time: &TimeControl,
) -> (BotProtocol, bool) {
    if let Some(p) = spec.protocol {
        return (p, false);
    }
    if !G::KIND.has_codingame_grid() {
        return (BotProtocol::V1, false);
    }
    let mut v1 = ExternalBot::<G>::new(spec.clone(), *time, 1);
    let speaks_v1 = v1.begin(Seat::One, time).is_ok() && v1.select_move(&G::start(opts)).is_ok();
    v1.end(BotResult::Draw);
    drop(v1);
    if speaks_v1 {
        return (BotProtocol::V1, true);
    }
    let cg_spec = ExternalSpec {
        protocol: Some(BotProtocol::CodinGame),
        ..spec.clone()
    };
    let mut me: Box<dyn Bot<G>> = Box::new(ExternalBot::<G>::new(cg_spec, *time, 1));
    let Ok(mut random) = BuiltinSpec::parse("random").make::<G>(1) else {
        return (BotProtocol::V1, true);
    };
    let mut setup = GameSetup::new(0, 0, G::start(opts));
    setup.time = *time;
    let names = ["bot".to_string(), "random".to_string()];
    let rec = play_game(&setup, [&mut me, &mut random], names);
    if rec.forfeit.is_none() {
        (BotProtocol::CodinGame, true)
    } else {
        (BotProtocol::V1, true)
    }
}

/// Plays a whole game from the empty board against the built-in
/// `opponent` in each seat, adding a check for each.
#[allow(clippy::too_many_arguments)]
fn full_games<G: BuiltinBots>(
    spec: &ExternalSpec,
    opts: &crate::game::GameOptions,
    time: &TimeControl,
    pool: &ProcessPool,
    seed: &mut u64,
    opponent: &str,
    report: &mut CheckReport,
) -> anyhow::Result<()> {
    for seat in Seat::BOTH {
        *seed += 1;
        let me = ExternalBot::<G>::new(spec.clone(), *time, *seed).keeping(pool, 0);
        let mut me: Box<dyn Bot<G>> = Box::new(me);
        let mut other = BuiltinSpec::parse(opponent)
            .prepare::<G>()?
            .make::<G>(*seed + seat.number() as u64)?;
        let mut setup = GameSetup::new(seat.index() as u64, 0, G::start(opts));
        setup.time = *time;
        let names = ["bot".to_string(), opponent.to_string()];
        let rec = match seat {
            Seat::One => play_game(&setup, [&mut me, &mut other], names),
            Seat::Two => {
                let [a, b] = names;
                play_game(&setup, [&mut other, &mut me], [b, a])
            }
        };
        let name = format!("full game as player {seat} against {opponent}");
        match &rec.forfeit {
            Some(f) if f.seat == seat => report.add(name, false, forfeit_text(f)),
            _ => {
                let result = match rec.winner {
                    None => "draw",
                    Some(w) if w == seat => "win",
                    Some(_) => "loss",
                };
                let mine: Vec<u64> = rec
                    .times_us
                    .iter()
                    .skip(seat.index())
                    .step_by(2)
                    .copied()
                    .collect();
                report.move_us.extend(mine.iter().skip(1));
                if spec.speaks() == BotProtocol::CodinGame {
                    // A fresh process each game: its first turn includes its start-up.
                    report.startup_us.extend(mine.first());
                }
                report.add(name, true, format!("{result} in {} moves", rec.moves.len()));
            }
        }
    }
    Ok(())
}

/// Runs every check of `spec` for game `G`. A bot that speaks CodinGame's
/// protocol (declared, or found by trying when it does not say) plays only
/// whole games from the empty board, which is all it can: against the
/// random bot and the greedy bot, in each seat.
pub fn run_checks<G: BuiltinBots>(
    spec: &ExternalSpec,
    opts: &crate::game::GameOptions,
    time: &TimeControl,
) -> anyhow::Result<CheckReport> {
    let mut report = CheckReport::default();
    let (protocol, detected) = protocol_of::<G>(spec, opts, time);
    report.protocol = protocol;
    report.detected = detected;
    if protocol == BotProtocol::CodinGame {
        let spec = ExternalSpec {
            protocol: Some(protocol),
            ..spec.clone()
        };
        let pool = ProcessPool::new(1);
        let mut seed = 0u64;
        for opponent in ["random", "greedy"] {
            full_games::<G>(&spec, opts, time, &pool, &mut seed, opponent, &mut report)?;
        }
        return Ok(report);
    }
    let mut by_seat: [Vec<(&str, G)>; 2] = [Vec::new(), Vec::new()];
    for &(label, moves) in G::COMPLIANCE {
        let pos = position_from_moves::<G>(opts, moves)
            .with_context(|| format!("building check position '{label}'"))?;
        if pos.is_over() {
            bail!("check position '{label}' is already over");
        }
        by_seat[pos.to_move().index()].push((label, pos));
    }
    // A bot that declares `reuse` plays everything below in one process
    // when it keeps to the contract: player 2's turns come after player 1's
    // `end`, in a new `begin`, from unrelated games.
    let pool = ProcessPool::new(1);
    let mut seed = 0u64;
    for seat in Seat::BOTH {
        let mut bot: Option<ExternalBot<G>> = None;
        for (label, pos) in &by_seat[seat.index()] {
            let b = match bot.as_mut() {
                Some(b) => b,
                None => {
                    seed += 1;
                    let mut b = ExternalBot::<G>::new(spec.clone(), *time, seed).keeping(&pool, 0);
                    if let Err(f) = b.begin(seat, time) {
                        report.add(format!("player {seat}: start"), false, forfeit_text(&f));
                        continue;
                    }
                    bot.insert(b)
                }
            };
            let first = b.startup_us().is_none();
            let name = format!("player {seat}, {label} ({pos})");
            match b.select_move(pos) {
                Ok(mv) => {
                    let us = b.last_move_time_us().unwrap_or(0);
                    if first {
                        if let Some(s) = b.startup_us() {
                            report.startup_us.push(s);
                        }
                    } else {
                        report.move_us.push(us);
                    }
                    report.add(name, true, format!("{mv} in {}", format_us(us as f64)));
                }
                Err(f) => {
                    report.add(name, false, forfeit_text(&f));
                    // The process is dead; the next position gets a fresh one.
                    bot = None;
                }
            }
        }
        if let Some(mut b) = bot {
            b.end(BotResult::Draw);
            if spec.reuse {
                // The process stays for the next game; its exit is checked
                // when the pool closes its stdin below.
                continue;
            }
            let ok = b.exited_cleanly() == Some(true);
            let status = b.exit_status().unwrap_or("no exit status").to_string();
            let detail = if ok {
                status
            } else {
                format!("still running 1 s after `end` ({status})")
            };
            report.add(format!("player {seat}: exits after end"), ok, detail);
        }
    }
    full_games::<G>(spec, opts, time, &pool, &mut seed, "random", &mut report)?;
    if spec.reuse {
        // Player 2's positions and the two full games could each have been
        // played by the process kept from before.
        let want = 3;
        let got = pool.reused();
        let detail = if got >= want {
            format!("one process played all {} parts", want + 1)
        } else {
            format!(
                "only {got} of {want} later parts found the process still running: it declares \
                 `reuse` but exits after `end` (keep reading stdin after `end`, or drop `reuse`)"
            )
        };
        report.add("reuse: plays on after end".into(), got >= want, detail);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameOptions, Notakto, TicTacToe, Uttt};

    /// Checks the compliance positions of game `G`: none is over, both
    /// seats are covered, and "one legal move" means exactly that.
    fn positions_are_as_labelled<G: Game>() {
        let opts = GameOptions::default();
        let mut seats = [0, 0];
        for &(label, moves) in G::COMPLIANCE {
            let pos = position_from_moves::<G>(&opts, moves).unwrap();
            assert!(!pos.is_over(), "{}: {label}", G::KIND);
            seats[pos.to_move().index()] += 1;
            if label == "one legal move" {
                assert_eq!(pos.legal_moves().len(), 1, "{}: {pos}", G::KIND);
            }
        }
        assert!(seats[0] > 0 && seats[1] > 0, "{}: both seats", G::KIND);
    }

    #[test]
    fn every_games_positions_are_as_labelled() {
        positions_are_as_labelled::<TicTacToe>();
        positions_are_as_labelled::<Notakto>();
        positions_are_as_labelled::<Uttt>();
    }
}
