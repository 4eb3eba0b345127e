//! UTTT bots: `greedy` (one-ply rules), `optimal` (MCTS-Solver with a
//! value network at the leaves and PUCT selection by a policy network's
//! prior) and `uct` (plain UCT with random rollouts, the baseline the
//! engine is measured against).
//!
//! The search is reproducible: with an iteration budget and a seed it makes
//! the same moves on every run and every platform (its random numbers come
//! from `ChaCha8Rng`). A time budget (`time_ms`) is optional. The tools
//! that trained the networks and measured the engine are in the `lab/`
//! crate, which reads the engine through the `lab` module (the `lab`
//! feature).

use super::plain_builtin;
use std::time::Duration;

use super::{
    maker, no_move_forfeit, Bot, BotError, Builtin, BuiltinBots, Param, Params, RandomBot, RuleBot,
    TimeControl,
};
use crate::game::grid::winning_cells;
use crate::game::uttt::{line, Uttt, UtttMove};
use crate::game::{Game, MoveList, Seat};
use crate::protocol::Forfeit;

#[cfg(test)]
mod forced_wins;
#[cfg(feature = "lab")]
pub mod lab;
mod net;
#[cfg(test)]
mod pinned;
mod search;

use search::{Mcts, SearchConfig};

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

/// `optimal`'s parameters.
const OPTIMAL_PARAMS: &[Param] = &[
    Param {
        key: "iters",
        default: "20000",
        meaning: "iterations per move (reproducible)",
    },
    Param {
        key: "time_ms",
        default: "none",
        meaning: "wall-time budget per move instead (stops 2 % before it, 20 ms at most, and inside the harness limit)",
    },
    Param {
        key: "puct",
        default: "1",
        meaning: "PUCT's exploration constant, above 0 and at most 10",
    },
    Param {
        key: "fpu",
        default: "0.2",
        meaning: "first-play reduction: an untried move counts as its parent's value minus this, from -1 to 1",
    },
    Param {
        key: "vary",
        default: "12",
        meaning: "plies from the start in which the move is drawn by the seed among those within 0.02 of the best (0: always the best)",
    },
];

/// `uct`'s parameters.
const UCT_PARAMS: &[Param] = &[
    Param {
        key: "iters",
        default: "20000",
        meaning: "iterations per move",
    },
    Param {
        key: "time_ms",
        default: "none",
        meaning: "wall-time budget per move",
    },
    Param {
        key: "c",
        default: "1.414",
        meaning: "UCB1's exploration constant, at least 0",
    },
];

/// A number parameter in `range`, `default` when absent.
fn number(
    params: &Params,
    key: &str,
    default: f32,
    range: std::ops::RangeInclusive<f32>,
) -> Result<f32, BotError> {
    let v = params.get(key, default)?;
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(BotError(format!(
            "parameter '{key}' must be a number from {} to {}",
            range.start(),
            range.end()
        )))
    }
}

/// The search's settings from a bot's parameters (checked against its
/// table before).
fn search_config(base: SearchConfig, params: &Params) -> Result<SearchConfig, BotError> {
    let mut cfg = base;
    if cfg.networks {
        cfg.puct = number(params, "puct", cfg.puct, 0.0..=10.0)?;
        if cfg.puct == 0.0 {
            return Err(BotError("parameter 'puct' must be above 0".into()));
        }
        cfg.puct_fpu = number(params, "fpu", cfg.puct_fpu, -1.0..=1.0)?;
        cfg.vary_plies = params.get("vary", cfg.vary_plies)?;
        if cfg.vary_plies > 81 {
            return Err(BotError(
                "parameter 'vary' must be a number of plies from 0 to 81".into(),
            ));
        }
    } else {
        cfg.exploration = params.get("c", cfg.exploration)?;
        if !(cfg.exploration.is_finite() && cfg.exploration >= 0.0) {
            return Err(BotError("parameter 'c' must be a number >= 0".into()));
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
    Ok(cfg)
}

impl BuiltinBots for Uttt {
    const BUILTINS: &'static [Builtin<Self>] = &[
        plain_builtin!("random", super::RANDOM, RandomBot::<Uttt>::new),
        plain_builtin!(
            "greedy",
            "win, else win a board, else block, else a safe send",
            Greedy::bot
        ),
        Builtin {
            name: "optimal",
            description: "MCTS-Solver with a value network at the leaves and a policy network's prior (the strongest engine here)",
            params: OPTIMAL_PARAMS,
            prepare: |p| {
                let cfg = search_config(SearchConfig::optimal(), p)?;
                Ok(maker(move |seed| SearchBot::new("optimal", cfg, seed)))
            },
        },
        Builtin {
            name: "uct",
            description: "plain UCT with random rollouts (the baseline)",
            params: UCT_PARAMS,
            prepare: |p| {
                let cfg = search_config(SearchConfig::plain_uct(), p)?;
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

    /// The moves of a game from the empty board between `a` and `b`.
    fn game_between(mut a: Box<dyn Bot<Uttt>>, mut b: Box<dyn Bot<Uttt>>) -> Vec<UtttMove> {
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
    }

    #[test]
    fn optimal_and_greedy_vary_their_games_by_seed() {
        // Against one fixed opponent (the same bot and seed each game),
        // from the empty board: the same seed replays the game, other
        // seeds play others.
        for (name, params) in [("optimal", "iters=400"), ("greedy", "")] {
            let game = |seed: u64| {
                game_between(
                    bot(name, params, seed),
                    bot("optimal", "iters=400,vary=0", 99),
                )
            };
            assert_eq!(game(1), game(1), "{name}: one seed, one game");
            let games: std::collections::HashSet<Vec<UtttMove>> = (0..6).map(game).collect();
            assert!(games.len() >= 4, "{name}: {} distinct of 6", games.len());
        }
        // Without variety, optimal's seed only orders equal moves: six
        // seeds give at most a couple of games.
        let fixed: std::collections::HashSet<Vec<UtttMove>> = (0..6)
            .map(|seed| {
                game_between(
                    bot("optimal", "iters=400,vary=0", seed),
                    bot("optimal", "iters=400,vary=0", 99),
                )
            })
            .collect();
        assert!(fixed.len() <= 2, "{} distinct of 6", fixed.len());
    }

    #[test]
    fn variety_draws_only_moves_close_to_the_best() {
        // In the first plies the move is one of the close ones, and where
        // one move wins at once it is always that one.
        let p = play(&[(4, 4), (4, 0)]);
        let mut m = Mcts::new(
            SearchConfig {
                iterations: 3000,
                ..SearchConfig::optimal()
            },
            3,
        );
        let mut seen = std::collections::HashSet::new();
        for seed in 0..12 {
            let mut m2 = Mcts::new(
                SearchConfig {
                    iterations: 3000,
                    ..SearchConfig::optimal()
                },
                seed,
            );
            let mv = m2.search(&p).unwrap();
            // The move drawn had at least half the visits of the most
            // visited move, and a mean within the margin.
            let visits = m2.root_visits();
            let top = visits.iter().map(|v| v.1).max().unwrap();
            let mine = visits.iter().find(|v| v.0 == mv).unwrap().1;
            assert!(2 * mine >= top, "{mv}: {mine} visits of {top}");
            seen.insert(mv);
        }
        assert!(seen.len() >= 2, "12 seeds drew one move: {seen:?}");
        assert!(m.search(&p).is_some());
    }

    #[test]
    fn games_with_tree_reuse_replay_exactly() {
        // A harness time limit (here a tiny one) does not touch an
        // iteration budget: the games replay exactly with or without it.
        let game = |seed: u64, limit: Option<u64>| {
            let mut a = bot("optimal", "iters=400", seed);
            let mut b = bot("optimal", "iters=400", seed + 1);
            if let Some(ms) = limit {
                let time = TimeControl::new(ms, 0);
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
    fn parameters_set_the_search() {
        let cfg = |name: &str, text: &str| {
            let spec = crate::bot::BuiltinSpec::parse(&format!("{name}:{text}"));
            let params = crate::bot::Params::parse(name, &spec.params).expect("parameters");
            let base = if name == "uct" {
                SearchConfig::plain_uct()
            } else {
                SearchConfig::optimal()
            };
            search_config(base, &params).expect("a configuration")
        };
        let d = cfg("optimal", "");
        assert_eq!(d, SearchConfig::optimal());
        assert!(d.networks && d.solver && d.reuse);
        assert_eq!((d.puct, d.puct_fpu), (1.0, 0.2));
        assert_eq!(
            cfg("optimal", "puct=1.5,fpu=0.1"),
            SearchConfig {
                puct: 1.5,
                puct_fpu: 0.1,
                ..d
            }
        );
        let timed = cfg("optimal", "time_ms=100");
        assert_eq!(timed.time, Some(Duration::from_millis(100)));
        assert_eq!(timed.iterations, u32::MAX);
        assert_eq!(cfg("optimal", "time_ms=100,iters=5").iterations, 5);
        let u = cfg("uct", "c=0.7");
        assert!(!u.networks && !u.solver && !u.reuse);
        assert_eq!(u.exploration, 0.7);
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
        assert!(e("depth=3").contains("accepted: iters, time_ms, puct, fpu, vary"));
        assert!(e("vary=82").contains("'vary' must be a number of plies from 0 to 81"));
        assert!(e("vary=x").contains("'vary'"));
        assert!(e("vary=0").is_empty());
        assert!(e("time_ms=0").contains("time_ms"));
        assert!(e("puct=1.5,fpu=0.1").is_empty());
        assert!(e("puct=0").contains("'puct' must be above 0"));
        assert!(e("puct=11").contains("'puct' must be a number from 0 to 10"));
        assert!(e("puct=x").contains("'puct'"));
        assert!(e("puct=NaN").contains("'puct'"));
        assert!(e("fpu=2").contains("'fpu' must be a number from -1 to 1"));
        // Deleted levers are unknown parameters now.
        for gone in [
            "c=1",
            "draw=0.4",
            "prior=hand",
            "trap=1",
            "model=0.5",
            "value=0",
        ] {
            assert!(e(gone).contains("unknown parameter"), "{gone}");
        }
        // uct has no prior, and optimal no UCB1 constant.
        let uct = |p: &str| {
            crate::bot::BuiltinSpec::parse(&format!("uct:{p}"))
                .prepare::<Uttt>()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(uct("puct=1").contains("unknown parameter 'puct'"));
        assert!(uct("c=1.0").is_empty());
        assert!(uct("c=-1").contains("'c' must be a number >= 0"));
    }

    fn assert_fingerprint(got: Vec<(String, u32, usize)>, want: &[(&str, u32, usize)]) {
        let want: Vec<(String, u32, usize)> = want
            .iter()
            .map(|&(mv, i, n)| (mv.to_string(), i, n))
            .collect();
        assert_eq!(got, want);
    }

    /// Positions of random games with `seed`, one every few plies.
    pub(super) fn sample_positions(seed: u64, n: usize) -> Vec<Uttt> {
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
    /// today's defaults without the variety of the first plies, PUCT with
    /// the built-in networks (a new network file changes these values;
    /// record them again with it).
    #[test]
    fn searches_at_the_defaults_are_unchanged() {
        let got = fingerprint_of(SearchConfig {
            vary_plies: 0,
            ..SearchConfig::optimal()
        });
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

#[cfg(test)]
mod rules {
    //! `optimal` plays to win under the rule it is given: the rule is part
    //! of the position, so its search scores the ends of games by it.
    use super::*;
    use crate::game::{Outcome, Rules};

    /// X to move; boards won X 4, O 3; board 5 open with cells 0 and 3
    /// empty. `5 0` wins board 5 and closes the last board without three
    /// boards in a row: a draw under the standard rules, X's win on boards
    /// won (5 to 3) under CodinGame's.
    const NEAR_END: &str = "O.XXX.XX.X.OOX.O.XOXOOOXXOXXXXO...O.OO.OOOX...OO.XOOOXOOO..X..O..XXX.XO.OXXXOXXXO/9/XX=XO.OXO";

    #[test]
    fn optimal_takes_the_win_on_boards_won_under_codingame_s_rule() {
        let standard: Uttt = NEAR_END.parse().unwrap();
        let codingame = standard.under_rules(Rules::CodinGame);
        let ending = UtttMove::new(5, 0).unwrap();
        let mut a = standard;
        a.play(ending).unwrap();
        let mut b = codingame;
        b.play(ending).unwrap();
        assert_eq!(a.to_string(), b.to_string(), "the same board");
        assert_eq!(a.outcome(), Some(Outcome::Draw));
        assert_eq!(b.outcome(), Some(Outcome::Win(Seat::One)));
        assert_eq!(
            b.decided_by_rule().as_deref(),
            Some("on boards won, 5 to 3 (CodinGame's rule)")
        );
        assert_eq!(a.decided_by_rule(), None);
        for seed in 0..3 {
            let mut bot = crate::bot::BuiltinSpec::parse("optimal:iters=2000")
                .prepare::<Uttt>()
                .unwrap()
                .make::<Uttt>(seed)
                .unwrap();
            assert_eq!(bot.select_move(&codingame).unwrap(), ending, "seed {seed}");
        }
    }
}
