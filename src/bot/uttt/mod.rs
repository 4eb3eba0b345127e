//! UTTT bots: `greedy` (one-ply rules), `optimal` (MCTS-Solver with a
//! value network at the leaves and PUCT selection by a policy network's
//! prior; `puct=0` gives the engine of before, UCB1 with the policy's
//! fading progressive bias, and `value=0,prior=learned,bias=0.75,puct=0`
//! the one of before the networks, informed playouts and a linear prior)
//! and `uct` (plain UCT with random rollouts, the baseline the engine is
//! measured against).
//!
//! The search is reproducible: with an iteration budget and a seed it makes
//! the same moves on every run. A time budget (`time_ms`) is optional.

use std::time::Duration;

use super::{
    maker, no_move_forfeit, plain, Bot, BotError, Builtin, BuiltinBots, Params, RandomBot, RuleBot,
    TimeControl,
};
use crate::game::grid::winning_cells;
use crate::game::uttt::{line, Uttt, UtttMove};
use crate::game::{Game, MoveList, Seat};
use crate::record::Forfeit;

mod eval;
#[cfg(test)]
mod forced_wins;
pub mod net;
#[cfg(test)]
mod net_tools;
#[cfg(test)]
mod pinned;
mod playout;
mod policy;
mod prior;
mod search;
mod uct_model;

pub use net::{PolicyNet, ValueNet};
pub use policy::{PolicyWeights, FEATURES as POLICY_FEATURES};
pub use prior::PriorWeights;
pub use search::{Mcts, SearchConfig, SearchStats, MAX_NODES};
pub use uct_model::{Choice as UctChoice, UctModel};

/// Moves of `pos` that win the game at once.
fn game_winning_moves(pos: &Uttt) -> MoveList<UtttMove> {
    let me = pos.to_move();
    let mut out = MoveList::new();
    for mv in pos.legal_moves() {
        let b = mv.board() as usize;
        let after = pos.cells(me, b) | 1 << mv.cell();
        if line(after) && line(pos.won(me) | 1 << b) {
            out.push(mv);
        }
    }
    out
}

/// Moves of `pos` that win a local board.
fn board_winning_moves(pos: &Uttt) -> MoveList<UtttMove> {
    let me = pos.to_move();
    pos.legal_moves()
        .into_iter()
        .filter(|mv| line(pos.cells(me, mv.board() as usize) | 1 << mv.cell()))
        .collect()
}

/// Whether the player to move in `pos` can win a local board at once.
fn mover_can_win_a_board(pos: &Uttt) -> bool {
    let me = pos.to_move();
    let mut bs = pos.playable_boards();
    while bs != 0 {
        let b = bs.trailing_zeros() as usize;
        bs &= bs - 1;
        if winning_cells(pos.cells(me, b), pos.empty(b)) != 0 {
            return true;
        }
    }
    false
}

/// One-ply rules a beginner would write: win the game, else win a local
/// board, else block the opponent's local win, else avoid sending the
/// opponent to a board where they can win at once or to a free choice;
/// random among equals.
pub(crate) struct Greedy;

impl Greedy {
    /// A greedy bot seeded by `seed`.
    pub(crate) fn bot(seed: u64) -> RuleBot<Uttt> {
        RuleBot::new("greedy", Self::candidates, seed)
    }

    /// The moves the rules allow in `pos`, all equally good to them.
    pub(crate) fn candidates(pos: &Uttt) -> MoveList<UtttMove> {
        let wins = game_winning_moves(pos);
        if !wins.is_empty() {
            return wins;
        }
        let local = board_winning_moves(pos);
        if !local.is_empty() {
            return local;
        }
        let me = pos.to_move();
        let them = me.other();
        let moves = pos.legal_moves();
        let blocks: MoveList<UtttMove> = moves
            .iter()
            .copied()
            .filter(|mv| {
                let b = mv.board() as usize;
                line(pos.cells(them, b) | 1 << mv.cell())
            })
            .collect();
        if !blocks.is_empty() {
            return blocks;
        }
        let safe: MoveList<UtttMove> = moves
            .iter()
            .copied()
            .filter(|&mv| {
                let mut next = *pos;
                next.play_unchecked(mv);
                next.forced().is_some() && !mover_can_win_a_board(&next)
            })
            .collect();
        if safe.is_empty() {
            moves
        } else {
            safe
        }
    }
}

/// A bot that runs an [`Mcts`] search for every move.
pub(crate) struct SearchBot {
    name: &'static str,
    search: Mcts,
}

impl SearchBot {
    /// A bot named `name` searching with `config`, seeded by `seed`.
    pub(crate) fn new(name: &'static str, config: SearchConfig, seed: u64) -> Self {
        SearchBot {
            name,
            search: Mcts::new(config, seed),
        }
    }
}

impl Bot<Uttt> for SearchBot {
    fn name(&self) -> &str {
        self.name
    }

    fn begin(&mut self, _seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        self.search
            .set_move_limit(Some(Duration::from_millis(time.move_ms)));
        Ok(())
    }

    fn select_move(&mut self, pos: &Uttt) -> Result<UtttMove, Forfeit> {
        self.search.search(pos).ok_or_else(|| no_move_forfeit(pos))
    }
}

/// An on/off parameter: `name=0` or `name=1`, `default` when absent.
fn switch(params: &Params, name: &str, default: bool) -> Result<bool, BotError> {
    match params.opt::<u8>(name)? {
        None => Ok(default),
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        Some(_) => Err(BotError(format!("parameter '{name}' must be 0 or 1"))),
    }
}

/// The search's settings from a bot's parameters; `prior` (the learned or
/// the hand-set prior) is accepted only when `with_prior`.
fn search_config(
    base: SearchConfig,
    params: &Params,
    with_prior: bool,
) -> Result<SearchConfig, BotError> {
    let known: &[&str] = if with_prior {
        &[
            "iters", "time_ms", "c", "draw", "prior", "fade", "minimax", "value", "bias",
            "swindle", "puct", "fpu", "temp", "opp", "model", "trap",
        ]
    } else {
        &["iters", "time_ms", "c", "draw"]
    };
    params.only(known)?;
    let mut cfg = base;
    if with_prior {
        (cfg.net_policy, cfg.learned_prior) = match params.opt::<String>("prior")?.as_deref() {
            None => (cfg.net_policy, cfg.learned_prior),
            Some("net") => (true, cfg.learned_prior),
            Some("learned") => (false, true),
            Some("hand") => (false, false),
            Some(other) => {
                return Err(BotError(format!(
                    "parameter 'prior' must be net, learned or hand, not '{other}'"
                )))
            }
        };
        cfg.prior_weight = params.get("bias", cfg.prior_weight)?;
        if !(cfg.prior_weight.is_finite() && (0.0..=10.0).contains(&cfg.prior_weight)) {
            return Err(BotError(
                "parameter 'bias' must be a number from 0 to 10".into(),
            ));
        }
        if let Some(v) = params.opt::<f32>("value")? {
            if !(0.0..=1.0).contains(&v) {
                return Err(BotError(
                    "parameter 'value' must be a number from 0 to 1".into(),
                ));
            }
            cfg.value_mix = v;
            cfg.net_eval = v > 0.0;
        }
        cfg.prior_fade = params.get("fade", cfg.prior_fade)?;
        if !(cfg.prior_fade.is_finite() && (0.0..=2.0).contains(&cfg.prior_fade)) {
            return Err(BotError(
                "parameter 'fade' must be a number from 0 to 2".into(),
            ));
        }
        cfg.swindle = switch(params, "swindle", cfg.swindle)?;
        cfg.trap = switch(params, "trap", cfg.trap)?;
        cfg.puct = params.get("puct", cfg.puct)?;
        if !(cfg.puct.is_finite() && (0.0..=10.0).contains(&cfg.puct)) {
            return Err(BotError(
                "parameter 'puct' must be a number from 0 to 10".into(),
            ));
        }
        cfg.puct_fpu = params.get("fpu", cfg.puct_fpu)?;
        if !(cfg.puct_fpu.is_finite() && (-1.0..=1.0).contains(&cfg.puct_fpu)) {
            return Err(BotError(
                "parameter 'fpu' must be a number from -1 to 1".into(),
            ));
        }
        cfg.puct_temperature = params.get("temp", cfg.puct_temperature)?;
        if !(cfg.puct_temperature.is_finite() && (0.1..=10.0).contains(&cfg.puct_temperature)) {
            return Err(BotError(
                "parameter 'temp' must be a number from 0.1 to 10".into(),
            ));
        }
        cfg.puct_opponent = params.get("opp", cfg.puct_opponent)?;
        if !(cfg.puct_opponent.is_finite() && (0.1..=10.0).contains(&cfg.puct_opponent)) {
            return Err(BotError(
                "parameter 'opp' must be a number from 0.1 to 10".into(),
            ));
        }
        cfg.opponent_model = params.get("model", cfg.opponent_model)?;
        if !(0.0..=1.0).contains(&cfg.opponent_model) {
            return Err(BotError(
                "parameter 'model' must be a number from 0 to 1".into(),
            ));
        }
        cfg.minimax_weight = params.get("minimax", cfg.minimax_weight)?;
        if !(0.0..=1.0).contains(&cfg.minimax_weight) {
            return Err(BotError(
                "parameter 'minimax' must be a number from 0 to 1".into(),
            ));
        }
    }
    cfg.iterations = params.get("iters", cfg.iterations)?;
    if cfg.iterations == 0 {
        return Err(BotError("parameter 'iters' must be at least 1".into()));
    }
    if let Some(ms) = params.opt::<u64>("time_ms")? {
        if ms == 0 {
            return Err(BotError("parameter 'time_ms' must be at least 1".into()));
        }
        cfg.time = Some(Duration::from_millis(ms));
        // With a time budget the iteration cap is lifted unless given.
        if params.opt::<u32>("iters")?.is_none() {
            cfg.iterations = u32::MAX;
        }
    }
    cfg.exploration = params.get("c", cfg.exploration)?;
    if !(cfg.exploration.is_finite() && cfg.exploration >= 0.0) {
        return Err(BotError("parameter 'c' must be a number >= 0".into()));
    }
    cfg.draw_value = params.get("draw", cfg.draw_value)?;
    if !(0.0..=1.0).contains(&cfg.draw_value) {
        return Err(BotError(
            "parameter 'draw' must be a number from 0 to 1".into(),
        ));
    }
    Ok(cfg)
}

impl BuiltinBots for Uttt {
    const BUILTINS: &'static [Builtin<Self>] = &[
        Builtin {
            name: "random",
            description: "uniform among legal moves",
            params: &[],
            prepare: |p| plain(p, RandomBot::<Uttt>::new),
        },
        Builtin {
            name: "greedy",
            description: "win, else win a board, else block, else a safe send",
            params: &[],
            prepare: |p| plain(p, Greedy::bot),
        },
        Builtin {
            name: "optimal",
            description: "MCTS-Solver with a value network at the leaves and a policy network's prior (the strongest engine here)",
            params: &[
                "iters=20000: iterations per move (reproducible)",
                "time_ms=N: wall-time budget per move instead (stops 2 % before it, 20 ms at most, and inside the harness limit)",
                "c=0.4: exploration constant",
                "draw=0.5: what a draw is worth to the bot (below 0.5: draw contempt)",
                "prior=net: the move prior: net (the policy network), learned (a linear policy over 16 move features, the prior of before 2026-11-26) or hand (hand-set feature weights)",
                "bias=0.5: the prior's weight in selection (its progressive bias; 0.75 suits prior=learned)",
                "fade=0.5: how fast the prior fades, as the power of (visits + 1) that divides it (1: the engine of before 2026-11-24)",
                "minimax=0: weight of implicit minimax backups of a leaf evaluation in selection (0: off)",
                "swindle=0: 1: at a root proven a draw (or a loss), the move of that value the value network likes most instead of the most visited",
                "trap=0: 1: at a root proven a draw (or a loss), the move of that value after which a plain UCT opponent with random playouts (a model of board-game's MCTSBot) most likely plays a losing reply",
                "value=1: the value network's share of a leaf's value, the rest from an informed playout (0: playouts only, the engine of before 2026-11-26)",
            ],
            prepare: |p| {
                let cfg = search_config(SearchConfig::optimal(), p, true)?;
                Ok(maker(move |seed| SearchBot::new("optimal", cfg, seed)))
            },
        },
        Builtin {
            name: "uct",
            description: "plain UCT with random rollouts (the baseline)",
            params: &[
                "iters=20000: iterations per move",
                "time_ms=N: wall-time budget per move",
                "c=1.414: exploration constant",
                "draw=0.5: what a draw is worth to the bot",
            ],
            prepare: |p| {
                let cfg = search_config(SearchConfig::plain_uct(), p, false)?;
                Ok(maker(move |seed| SearchBot::new("uct", cfg, seed)))
            },
        },
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(moves: &[(u8, u8)]) -> Uttt {
        let mut p = Uttt::new();
        for &(b, c) in moves {
            p.play(UtttMove::new(b, c).unwrap()).unwrap();
        }
        p
    }

    fn bot(name: &str, params: &str, seed: u64) -> Box<dyn Bot<Uttt>> {
        crate::bot::BuiltinSpec::parse(&format!("{name}:{params}"))
            .prepare::<Uttt>()
            .unwrap()
            .make::<Uttt>(seed)
            .unwrap()
    }

    #[test]
    fn search_is_reproducible_with_a_seed() {
        let p = play(&[(4, 4), (4, 0)]);
        let a: Vec<UtttMove> = (0..3)
            .map(|_| bot("optimal", "iters=2000", 7).select_move(&p).unwrap())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]), "{a:?}");
    }

    #[test]
    fn optimal_takes_an_immediate_global_win() {
        // X has boards 0 and 1, and two in a row in board 2, where it is sent.
        let text = [
            "XXX.OO...",
            "XXXOO....",
            "XX.......",
            "..O......",
            ".........",
            "O........",
            "........O",
            "....O....",
            ".........",
        ]
        .concat()
            + "/2/XX.......";
        let p: Uttt = match text.parse() {
            Ok(p) => p,
            Err(e) => panic!("{text}: {e}"),
        };
        let mv = bot("optimal", "iters=200", 1).select_move(&p).unwrap();
        assert_eq!(mv, UtttMove::new(2, 2).unwrap());
    }

    #[test]
    fn bots_only_play_legal_moves() {
        let mut rng = crate::seed::rng(3);
        for name in ["random", "greedy", "optimal", "uct"] {
            let mut b = bot(
                name,
                if name == "optimal" || name == "uct" {
                    "iters=300"
                } else {
                    ""
                },
                2,
            );
            for _ in 0..6 {
                let mut p = Uttt::new();
                while !p.is_over() {
                    let mv = if p.ply().is_multiple_of(2) {
                        b.select_move(&p).unwrap()
                    } else {
                        p.random_move(&mut rng).unwrap()
                    };
                    assert!(p.is_legal(mv), "{name} played {mv} in {p}");
                    p.play_unchecked(mv);
                }
            }
        }
    }

    #[test]
    fn greedy_follows_its_rules() {
        // X to move in board 0 with two in a row there: the local win.
        let text = [
            "XX..O....",
            "O........",
            ".........",
            "X........",
            ".........",
            "...O.....",
            ".........",
            ".........",
            ".........",
        ]
        .concat()
            + "/0/.........";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            Greedy::candidates(&p).as_slice(),
            &[UtttMove::new(0, 2).unwrap()]
        );
        // With no win or block, greedy never sends the opponent to a free
        // choice or to a board the opponent wins at once.
        let p = play(&[(4, 4)]);
        for mv in Greedy::candidates(&p) {
            let mut n = p;
            n.play_unchecked(mv);
            assert!(n.forced().is_some());
            assert!(!mover_can_win_a_board(&n));
        }
    }

    #[test]
    fn optimal_beats_random_and_greedy() {
        let mut score = 0.0;
        let games = 10;
        for g in 0..games {
            let mut opt = bot("optimal", "iters=1500", g);
            let mut other = bot(if g % 4 < 2 { "random" } else { "greedy" }, "", g);
            let seat = if g % 2 == 0 { Seat::One } else { Seat::Two };
            let mut p = Uttt::new();
            while !p.is_over() {
                let mv = if p.to_move() == seat {
                    opt.select_move(&p).unwrap()
                } else {
                    other.select_move(&p).unwrap()
                };
                p.play_unchecked(mv);
            }
            score += p.outcome().unwrap().points(seat);
        }
        assert!(score >= 9.0, "optimal scored {score}/{games}");
    }

    #[test]
    fn games_with_tree_reuse_replay_exactly() {
        // A harness time limit (here a tiny one) does not touch an
        // iteration budget: the games replay exactly with or without it.
        let game = |seed: u64, limit: Option<u64>| {
            let mut a = bot("optimal", "iters=400", seed);
            let mut b = bot("optimal", "iters=400", seed + 1);
            if let Some(ms) = limit {
                let time = TimeControl {
                    move_ms: ms,
                    startup_ms: 0,
                };
                a.begin(Seat::One, &time).unwrap();
                b.begin(Seat::Two, &time).unwrap();
            }
            let mut p = Uttt::new();
            let mut moves = Vec::new();
            while !p.is_over() {
                let bot = if p.ply().is_multiple_of(2) {
                    &mut a
                } else {
                    &mut b
                };
                let mv = bot.select_move(&p).unwrap();
                moves.push(mv);
                p.play_unchecked(mv);
            }
            moves
        };
        assert_eq!(game(9, None), game(9, None));
        assert_eq!(game(9, None), game(9, Some(1)));
    }

    #[test]
    fn parameters_choose_the_evaluation_and_the_prior() {
        let cfg = |text: &str| {
            let params = crate::bot::Params::parse("optimal", text).expect("parameters");
            search_config(SearchConfig::optimal(), &params, true).expect("a configuration")
        };
        let d = cfg("");
        assert!(d.net_eval && d.value_mix == 1.0 && d.net_policy);
        assert_eq!((d.puct, d.puct_fpu, d.puct_temperature), (1.0, 0.2, 1.0));
        let ucb = cfg("puct=0");
        assert_eq!(ucb, SearchConfig { puct: 0.0, ..d });
        let old = cfg("value=0,prior=learned,bias=0.75,puct=0");
        assert!(!old.net_eval && old.value_mix == 0.0);
        assert!(!old.net_policy && old.learned_prior);
        assert_eq!(old.prior_weight, 0.75);
        assert_eq!(old, SearchConfig::playout_engine());
        assert!(!cfg("").swindle && cfg("swindle=1").swindle);
        assert!(!cfg("trap=0").trap && cfg("trap=1").trap);
        let mixed = cfg("value=0.5,prior=hand");
        assert!(mixed.net_eval && mixed.value_mix == 0.5);
        assert!(!mixed.net_policy && !mixed.learned_prior);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = |p: &str| {
            crate::bot::BuiltinSpec::parse(&format!("optimal:{p}"))
                .prepare::<Uttt>()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(e("iters=0").contains("iters"));
        assert!(e("depth=3").contains("unknown parameter 'depth'"));
        assert!(e("c=x").contains("'c'"));
        assert!(e("time_ms=0").contains("time_ms"));
        assert!(e("draw=1.5").contains("'draw'"));
        assert!(e("draw=0.45").is_empty());
        assert!(e("swindle=2").contains("'swindle' must be 0 or 1"));
        assert!(e("swindle=1").is_empty());
        assert!(e("trap=2").contains("'trap' must be 0 or 1"));
        assert!(e("trap=x").contains("'trap'"));
        assert!(e("prior=hand").is_empty());
        assert!(e("prior=learned").is_empty());
        assert!(e("prior=net").is_empty());
        assert!(e("prior=best").contains("net, learned or hand, not 'best'"));
        assert!(e("value=0").is_empty());
        assert!(e("value=0.5").is_empty());
        assert!(e("value=1.5").contains("'value' must be a number from 0 to 1"));
        assert!(e("value=x").contains("'value'"));
        assert!(e("bias=0.75").is_empty());
        assert!(e("bias=-1").contains("'bias' must be a number from 0 to 10"));
        assert!(e("fade=1").is_empty());
        assert!(e("fade=-1").contains("'fade' must be a number from 0 to 2"));
        assert!(e("fade=x").contains("fade"));
        assert!(e("minimax=0").is_empty());
        assert!(e("minimax=0.3").is_empty());
        assert!(e("minimax=1.5").contains("'minimax' must be a number from 0 to 1"));
        assert!(e("minimax=nan").contains("'minimax'"));
        assert!(e("puct=0").is_empty());
        assert!(e("puct=1.5,fpu=0.1,temp=2").is_empty());
        assert!(e("puct=11").contains("'puct' must be a number from 0 to 10"));
        assert!(e("puct=x").contains("'puct'"));
        assert!(e("fpu=2").contains("'fpu' must be a number from -1 to 1"));
        assert!(e("temp=0").contains("'temp' must be a number from 0.1 to 10"));
        assert!(e("opp=4").is_empty());
        assert!(e("opp=0").contains("'opp' must be a number from 0.1 to 10"));
        assert!(e("opp=inf").contains("'opp'"));
        assert!(e("model=0.5").is_empty());
        assert!(e("model=2").contains("'model' must be a number from 0 to 1"));
        assert!(e("model=NaN").contains("'model'"));
        // uct has no prior to choose.
        let uct = crate::bot::BuiltinSpec::parse("uct:prior=hand")
            .prepare::<Uttt>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(uct.contains("unknown parameter 'prior'"), "{uct}");
    }

    fn assert_fingerprint(got: Vec<(String, u32, usize)>, want: &[(&str, u32, usize)]) {
        let want: Vec<(String, u32, usize)> = want
            .iter()
            .map(|&(mv, i, n)| (mv.to_string(), i, n))
            .collect();
        assert_eq!(got, want);
    }

    /// Positions of random games with `seed`, one every few plies.
    fn sample_positions(seed: u64, n: usize) -> Vec<Uttt> {
        use rand::Rng;
        let mut rng = crate::seed::rng(seed);
        let mut out = vec![Uttt::new()];
        while out.len() < n {
            let mut p = Uttt::new();
            let plies = rng.random_range(0..70);
            for _ in 0..plies {
                match p.random_move(&mut rng) {
                    Some(mv) => p.play_unchecked(mv),
                    None => break,
                }
            }
            if p.outcome().is_none() {
                out.push(p);
            }
        }
        out
    }

    fn fingerprint_of(cfg: SearchConfig) -> Vec<(String, u32, usize)> {
        let mut got = Vec::new();
        for (k, p) in sample_positions(31, 6).into_iter().enumerate() {
            let mut m = Mcts::new(
                SearchConfig {
                    iterations: 3000,
                    ..cfg
                },
                k as u64,
            );
            let mut p = p;
            for _ in 0..3 {
                let Some(mv) = m.search(&p) else { break };
                let s = m.stats();
                got.push((mv.to_string(), s.iterations, s.nodes));
                p.play_unchecked(mv);
                match p.legal_moves().first() {
                    Some(&reply) => p.play_unchecked(reply),
                    None => break,
                }
                if p.is_over() {
                    break;
                }
            }
        }
        got
    }

    /// The move, the iterations and the tree's size after each search of a
    /// few positions at 3000 iterations, with tree reuse across moves, at
    /// today's defaults, PUCT with the built-in networks (a new network
    /// file changes these values; record them again with it).
    #[test]
    fn searches_at_the_defaults_are_unchanged() {
        let got = fingerprint_of(SearchConfig::optimal());
        let want = [
            ("4 6", 3000, 25924),
            ("0 5", 3000, 26222),
            ("0 8", 3000, 25532),
            ("4 2", 3000, 20745),
            ("0 2", 3000, 21509),
            ("1 2", 3000, 22873),
            ("0 5", 3000, 13511),
            ("2 0", 3000, 12145),
            ("0 2", 3000, 5018),
            ("6 5", 3000, 22772),
            ("0 5", 3000, 24184),
            ("1 5", 3000, 25607),
            ("2 6", 3000, 21168),
            ("0 6", 3000, 21475),
            ("1 3", 3000, 21933),
            ("5 3", 3000, 24270),
            ("0 7", 3000, 24808),
            ("0 8", 3000, 23362),
        ];
        assert_fingerprint(got, &want);
    }
}
