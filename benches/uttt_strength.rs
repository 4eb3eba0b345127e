//! UTTT strength: `optimal` against an opponent at fixed iteration budgets
//! per move, in paired games (random opening plies per pair, each engine
//! playing both seats from them). Iteration budgets make the results
//! independent of speed and machine load; to compare at equal time, give
//! each engine the iterations it runs in that time (`UTTT_OPP_ITERS`).
//!
//! Opponents (`UTTT_OPPONENT`): `baseline` (default), the engine as it was
//! before issue 20 (benches/support/uttt_baseline.rs); `self`, today's
//! `optimal` with its default settings (the knobs below then measure a
//! change against the current engine); and `uct`, plain UCT with random
//! rollouts. `UTTT_SPRT` (for example `elo0=0,elo1=10`, fastchess's syntax)
//! stops the match when a sequential probability ratio test on the game
//! pairs decides (exact with `UTTT_THREADS=1`; with more threads pairs are
//! counted as they finish).
//!
//! Run: `cargo bench --bench uttt_strength`; environment variables
//! `UTTT_ITERS` (optimal's iterations per move, default 2000),
//! `UTTT_OPP_ITERS` (the opponent's, default the same), `UTTT_GAMES` (even,
//! default 200), `UTTT_PLIES` (random opening plies, default 2),
//! `UTTT_SEED` (first pair's seed, default 0) and `UTTT_THREADS` (default:
//! the number of cores). Tuning knobs for optimal: `UTTT_C_PERCENT`
//! (exploration constant x 100), `UTTT_PLAYOUT_RANDOM` (random playout moves
//! per mille), `UTTT_PRIOR_PERCENT` (progressive-bias weight x 100),
//! `UTTT_FPU_PERCENT` (first-play urgency reduction x 100, or `none`),
//! `UTTT_EVAL_PERCENT` (weight of the evaluation in the playout cut-off x 100)
//! (default 50, or 100 with the fitted evaluation), `UTTT_CUTOFF` (playout
//! plies before the cut-off, 0 for none) and `UTTT_FITTED_EVAL=1` (the
//! cut-off scores with the fitted evaluation instead of the macro-line one),
//! `UTTT_PRIOR_WEIGHTS` (the six feature weights of the prior, comma
//! separated), `UTTT_DRAW_PERCENT` (what a draw is worth to optimal x 100:
//! draw contempt below 50), `UTTT_PLAYOUT_BLOCK=1` (playouts block the
//! opponent's local line on a forced board), `UTTT_EXPAND` (a leaf is
//! expanded on this visit, default 1) and `UTTT_LEARNED_PRIOR` (1, the
//! default: the prior is the learned policy's logit,
//! src/bot/uttt/policy.rs; 0: the hand-set feature weights) and
//! `UTTT_POLICY_WEIGHTS` (that policy's weights, comma separated, as the
//! fitting tool prints them), `UTTT_TAPER=1` (tapered expansion as the tree
//! fills). `UTTT_MAX_NODES` caps the tree of both referee engines (`self`
//! included, unless `UTTT_OPP_MAX_NODES` gives its own; default and maximum
//! 8 M nodes): a small cap at a small budget stands for the default cap at
//! 1 s. `UTTT_PRIOR_FADE_PERCENT` is the exponent of the prior's fading
//! x 100 (default 50, the engine's since the seventh round).
//! `UTTT_VALUE_MIX_PERCENT` mixes the leaf's evaluation into each playout's
//! result (x 100) and `UTTT_MINIMAX_PERCENT` weights implicit minimax
//! backups of it (x 100); both use the cut-off's evaluation
//! (`UTTT_FITTED_EVAL`, `UTTT_EVAL_PERCENT`), default 0 (off), or the value
//! network with `UTTT_NET=1` (the built-in one, or the file
//! `UTTT_NET_WEIGHTS`; with `UTTT_VALUE_MIX_PERCENT=100` it replaces the
//! playouts). `UTTT_NET_POLICY=1` takes the prior from the policy network
//! (the built-in one, or the file `UTTT_POLICY_NET_WEIGHTS`). The `self`
//! opponent takes the networks' knobs of its own: `UTTT_OPP_VALUE_PERCENT`
//! (the value network's share of a leaf's value x 100; 0, playouts only,
//! unless the defaults say otherwise), `UTTT_OPP_NET_WEIGHTS`,
//! `UTTT_OPP_NET_POLICY` and `UTTT_OPP_POLICY_NET_WEIGHTS`. `UTTT_SPEED=1`
//! measures iterations per second of both engines instead (the ratio
//! converts equal time to iteration budgets).
//! `UTTT_TIME_MS` gives both engines a wall-time budget per move instead of
//! iterations (load-dependent; for speed measurements in real games). After
//! a match the bench prints each engine's iterations per second inside the
//! games played (tree reuse and its copy included).
//! The results do not depend on the number of threads.
//! A benchmark, not a test: it takes a minute or more.

#[path = "support/uttt_baseline.rs"]
mod baseline;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use baseline::{BaselineConfig, BaselineMcts};
use comfy_table::Table;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use referee::bot::uttt::net::network_from_env;
use referee::bot::uttt::{
    Mcts, PolicyNet, PolicyWeights, PriorWeights, SearchConfig, ValueNet, POLICY_FEATURES,
};
use referee::game::{Game, Seat, Uttt, UtttMove};
use referee::standings::Wdl;
use referee::stats::{elo_pentanomial, elo_trinomial, Pentanomial, Sprt, SprtStatus};

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Err(_) => default,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("{name}='{v}' is not a whole number");
            std::process::exit(2)
        }),
    }
}

fn env_percent(name: &str, default: f32) -> f32 {
    env_u64(name, (default * 100.0).round() as u64) as f32 / 100.0
}

/// The learned prior's weights: `UTTT_POLICY_WEIGHTS` (comma separated,
/// as `fit_policy_weights` prints them) or `default`.
fn policy_weights(default: PolicyWeights) -> PolicyWeights {
    let Ok(v) = std::env::var("UTTT_POLICY_WEIGHTS") else {
        return default;
    };
    let w: Vec<f32> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
    match <[f32; POLICY_FEATURES]>::try_from(w.as_slice()) {
        Ok(a) => PolicyWeights(a),
        Err(_) => {
            eprintln!("UTTT_POLICY_WEIGHTS='{v}': expected {POLICY_FEATURES} numbers");
            std::process::exit(2);
        }
    }
}

/// Optimal's configuration: the defaults with the knobs of the environment.
/// The tree's node cap of both engines of referee (`UTTT_MAX_NODES`): a
/// small cap at a small budget stands for the default cap at a large one.
fn max_nodes() -> usize {
    let default = referee::bot::uttt::MAX_NODES;
    (env_u64("UTTT_MAX_NODES", default as u64) as usize).clamp(1000, default)
}

/// The `self` opponent's cap (`UTTT_OPP_MAX_NODES`, default the same).
fn opp_max_nodes() -> usize {
    let default = referee::bot::uttt::MAX_NODES;
    (env_u64("UTTT_OPP_MAX_NODES", max_nodes() as u64) as usize).clamp(1000, default)
}

fn ours(iters: u32) -> SearchConfig {
    let base = SearchConfig::optimal();
    let fpu = match std::env::var("UTTT_FPU_PERCENT").as_deref() {
        Err(_) => base.fpu_reduction,
        Ok("none") => None,
        Ok(_) => Some(env_percent("UTTT_FPU_PERCENT", 0.0)),
    };
    let mut prior = base.prior;
    if let Ok(v) = std::env::var("UTTT_PRIOR_WEIGHTS") {
        let w: Vec<f32> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
        if let [a, b, c, d, e, f] = w[..] {
            prior = PriorWeights {
                win_board: a,
                block: b,
                threat: c,
                send_free: d,
                send_win: e,
                send_loss: f,
            };
        } else {
            eprintln!("UTTT_PRIOR_WEIGHTS='{v}': expected 6 numbers");
            std::process::exit(2);
        }
    }
    let fitted = env_u64("UTTT_FITTED_EVAL", 0) != 0;
    SearchConfig {
        iterations: iters,
        time: time_budget(),
        prior,
        exploration: env_percent("UTTT_C_PERCENT", base.exploration),
        playout_random_permille: env_u64("UTTT_PLAYOUT_RANDOM", base.playout_random_permille as u64)
            as u32,
        prior_weight: env_percent("UTTT_PRIOR_PERCENT", base.prior_weight),
        fpu_reduction: fpu,
        eval_weight: env_percent(
            "UTTT_EVAL_PERCENT",
            if fitted { 1.0 } else { base.eval_weight },
        ),
        fitted_eval: fitted,
        prior_fade: env_percent("UTTT_PRIOR_FADE_PERCENT", base.prior_fade),
        cutoff_plies: env_u64("UTTT_CUTOFF", base.cutoff_plies as u64) as u32,
        expand_visits: env_u64("UTTT_EXPAND", base.expand_visits as u64) as u32,
        playout_block: env_u64("UTTT_PLAYOUT_BLOCK", base.playout_block as u64) != 0,
        learned_prior: env_u64("UTTT_LEARNED_PRIOR", base.learned_prior as u64) != 0,
        policy: policy_weights(base.policy),
        draw_value: env_percent("UTTT_DRAW_PERCENT", base.draw_value),
        max_nodes: max_nodes(),
        taper_expansion: env_u64("UTTT_TAPER", base.taper_expansion as u64) != 0,
        value_mix: env_percent("UTTT_VALUE_MIX_PERCENT", base.value_mix),
        minimax_weight: env_percent("UTTT_MINIMAX_PERCENT", base.minimax_weight),
        net_eval: env_u64("UTTT_NET", base.net_eval as u64) != 0,
        net_policy: env_u64("UTTT_NET_POLICY", base.net_policy as u64) != 0,
        ..base
    }
}

/// [`network_from_env`], or the end of the run with its error.
fn network<N: Send + Sync>(
    cell: &'static OnceLock<N>,
    var: &str,
    builtin: fn() -> &'static N,
    load: fn(&str) -> Result<N, String>,
) -> &'static N {
    network_from_env(cell, var, builtin, load).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    })
}

/// Optimal with the environment's knobs and networks (`UTTT_NET_WEIGHTS`,
/// `UTTT_POLICY_NET_WEIGHTS`).
fn ours_engine(iters: u32, seed: u64) -> Engine {
    static VALUE: OnceLock<ValueNet> = OnceLock::new();
    static POLICY: OnceLock<PolicyNet> = OnceLock::new();
    let mut m = Mcts::new(ours(iters), seed);
    m.set_value_net(network(
        &VALUE,
        "UTTT_NET_WEIGHTS",
        ValueNet::builtin,
        ValueNet::load,
    ));
    m.set_policy_net(network(
        &POLICY,
        "UTTT_POLICY_NET_WEIGHTS",
        PolicyNet::builtin,
        PolicyNet::load,
    ));
    Engine::Ours(Box::new(m))
}

enum Engine {
    Ours(Box<Mcts>),
    Baseline(BaselineMcts),
}

impl Engine {
    fn search(&mut self, pos: &Uttt) -> Option<UtttMove> {
        match self {
            Engine::Ours(m) => m.search(pos),
            Engine::Baseline(m) => m.search(pos),
        }
    }

    /// Optimal's time before its first iteration (tree reuse) and tree
    /// size after the search; zero for the baseline.
    fn setup(&self) -> (u64, u64) {
        match self {
            Engine::Ours(m) => (m.stats().setup.as_nanos() as u64, m.stats().nodes as u64),
            Engine::Baseline(_) => (0, 0),
        }
    }

    fn iterations(&self) -> u32 {
        match self {
            Engine::Ours(m) => m.stats().iterations,
            Engine::Baseline(m) => m.stats().iterations,
        }
    }
}

fn opponent(kind: &str, iters: u32, seed: u64) -> Engine {
    match kind {
        "self" => {
            let base = SearchConfig::optimal();
            let value = env_percent("UTTT_OPP_VALUE_PERCENT", base.value_mix);
            let mut m = Mcts::new(
                SearchConfig {
                    iterations: iters,
                    time: time_budget(),
                    max_nodes: opp_max_nodes(),
                    value_mix: value,
                    net_eval: value > 0.0,
                    net_policy: env_u64("UTTT_OPP_NET_POLICY", base.net_policy as u64) != 0,
                    ..base
                },
                seed,
            );
            static VALUE: OnceLock<ValueNet> = OnceLock::new();
            static POLICY: OnceLock<PolicyNet> = OnceLock::new();
            let (v, p) = ("UTTT_OPP_NET_WEIGHTS", "UTTT_OPP_POLICY_NET_WEIGHTS");
            m.set_value_net(network(&VALUE, v, ValueNet::builtin, ValueNet::load));
            m.set_policy_net(network(&POLICY, p, PolicyNet::builtin, PolicyNet::load));
            Engine::Ours(Box::new(m))
        }
        "uct" => Engine::Ours(Box::new(Mcts::new(
            SearchConfig {
                iterations: iters,
                ..SearchConfig::plain_uct()
            },
            seed,
        ))),
        _ => Engine::Baseline(BaselineMcts::new(
            BaselineConfig {
                iterations: iters,
                time: time_budget(),
                ..BaselineConfig::optimal()
            },
            seed,
        )),
    }
}

/// Wall time (ns), iterations and searched moves of each engine in the
/// games played (optimal first): their speed inside real games, with tree
/// reuse, mid-game positions and the reuse's copy counted.
/// Optimal's also counts its setup time (ns) and its tree nodes.
static IN_GAMES: [[AtomicU64; 5]; 2] = [
    [const { AtomicU64::new(0) }; 5],
    [const { AtomicU64::new(0) }; 5],
];

/// The wall-time budget per move of both engines (`UTTT_TIME_MS`), if any.
fn time_budget() -> Option<std::time::Duration> {
    match env_u64("UTTT_TIME_MS", 0) {
        0 => None,
        ms => Some(std::time::Duration::from_millis(ms)),
    }
}

/// One game from `opening`; returns optimal's points.
fn game(opening: &[UtttMove], optimal_seat: Seat, cfg: (&str, u32, u32), seed: u64) -> f64 {
    let (kind, iters, opp_iters) = cfg;
    let mut pos = Uttt::new();
    for &mv in opening {
        pos.play_unchecked(mv);
    }
    let mut optimal = ours_engine(iters, seed);
    let mut other = opponent(kind, opp_iters, seed ^ 0x9e37_79b9);
    while pos.outcome().is_none() {
        let (engine, k) = if pos.to_move() == optimal_seat {
            (&mut optimal, 0)
        } else {
            (&mut other, 1)
        };
        let start = std::time::Instant::now();
        let mv = engine.search(&pos);
        let ns = start.elapsed().as_nanos() as u64;
        let it = engine.iterations() as u64;
        if it > 0 {
            IN_GAMES[k][0].fetch_add(ns, Ordering::Relaxed);
            IN_GAMES[k][1].fetch_add(it, Ordering::Relaxed);
            IN_GAMES[k][2].fetch_add(1, Ordering::Relaxed);
            let (setup, nodes) = engine.setup();
            IN_GAMES[k][3].fetch_add(setup, Ordering::Relaxed);
            IN_GAMES[k][4].fetch_add(nodes, Ordering::Relaxed);
        }
        match mv {
            Some(mv) => pos.play_unchecked(mv),
            None => break,
        }
    }
    pos.outcome().map_or(0.5, |o| o.points(optimal_seat))
}

/// Prints the engines' speed inside the games played.
fn print_in_games(kind: &str) {
    let mut rates = [0f64; 2];
    for (k, name) in [(0, "optimal"), (1, kind)] {
        let ns = IN_GAMES[k][0].load(Ordering::Relaxed) as f64;
        let it = IN_GAMES[k][1].load(Ordering::Relaxed) as f64;
        let moves = IN_GAMES[k][2].load(Ordering::Relaxed).max(1) as f64;
        rates[k] = it / (ns / 1e9).max(1e-9);
        println!(
            "in games, {name}: {:.0} iterations/s, {:.0} iterations and {:.1} ms per searched move ({moves} moves)",
            rates[k],
            it / moves,
            ns / 1e6 / moves
        );
    }
    let moves = IN_GAMES[0][2].load(Ordering::Relaxed).max(1) as f64;
    println!(
        "in games, optimal's setup (tree reuse): {:.2} ms per searched move; {:.0} nodes per tree",
        IN_GAMES[0][3].load(Ordering::Relaxed) as f64 / 1e6 / moves,
        IN_GAMES[0][4].load(Ordering::Relaxed) as f64 / moves
    );
    println!("in games, ratio {:.3}", rates[0] / rates[1].max(1e-9));
}

/// Iterations per second of optimal (with the environment's knobs) and of
/// the opponent, over positions from 0 to 50 random plies, measured in
/// turns so that machine load falls on both alike.
fn speed(kind: &str) {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut positions = Vec::new();
    while positions.len() < 24 {
        let mut p = Uttt::new();
        let plies = 2 * positions.len();
        for _ in 0..plies {
            if let Some(mv) = p.random_move(&mut rng) {
                p.play_unchecked(mv);
            }
        }
        if !p.is_over() {
            positions.push(p);
        }
    }
    let iters = env_u64("UTTT_ITERS", 20_000) as u32;
    let (mut t_ours, mut t_opp) = (0f64, 0f64);
    let (mut n_ours, mut n_opp) = (0f64, 0f64);
    for round in 0..3u64 {
        for (k, p) in positions.iter().enumerate() {
            let seed = round * 100 + k as u64;
            let start = std::time::Instant::now();
            let mut e = ours_engine(iters, seed);
            std::hint::black_box(e.search(p));
            t_ours += start.elapsed().as_secs_f64();
            n_ours += e.iterations() as f64;
            let start = std::time::Instant::now();
            let mut e = opponent(kind, iters, seed);
            std::hint::black_box(e.search(p));
            t_opp += start.elapsed().as_secs_f64();
            n_opp += e.iterations() as f64;
        }
    }
    let (r_ours, r_opp) = (n_ours / t_ours, n_opp / t_opp);
    println!(
        "iterations/s: optimal {r_ours:.0}, {kind} {r_opp:.0}, ratio {:.3}",
        r_ours / r_opp
    );
}

fn main() {
    if std::env::var("UTTT_SPEED").is_ok() {
        let kind = std::env::var("UTTT_OPPONENT").unwrap_or_else(|_| "baseline".into());
        speed(&kind);
        return;
    }
    let default_iters = if time_budget().is_some() {
        u32::MAX
    } else {
        2000
    };
    let iters = env_u64("UTTT_ITERS", default_iters as u64).clamp(1, u32::MAX as u64) as u32;
    let opp_iters = env_u64("UTTT_OPP_ITERS", iters as u64).clamp(1, u32::MAX as u64) as u32;
    let kind = std::env::var("UTTT_OPPONENT").unwrap_or_else(|_| "baseline".into());
    if !["baseline", "self", "uct"].contains(&kind.as_str()) {
        eprintln!("UTTT_OPPONENT='{kind}': expected baseline, self or uct");
        std::process::exit(2);
    }
    let sprt: Option<Sprt> = match std::env::var("UTTT_SPRT") {
        Err(_) => None,
        Ok(v) => match v.parse() {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("UTTT_SPRT='{v}': {e}");
                std::process::exit(2);
            }
        },
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let games = env_u64("UTTT_GAMES", 200).max(2) / 2 * 2;
    let plies = env_u64("UTTT_PLIES", 2);
    let first_seed = env_u64("UTTT_SEED", 0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let threads = env_u64("UTTT_THREADS", cores).max(1);
    let next_pair = AtomicU64::new(0);
    let results = Mutex::new((Wdl::default(), Pentanomial::default()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let pair = next_pair.fetch_add(1, Ordering::Relaxed);
                if pair >= games / 2 || stop.load(Ordering::Relaxed) {
                    break;
                }
                let seed = first_seed + pair;
                let mut rng = SmallRng::seed_from_u64(seed);
                let mut p = Uttt::new();
                let mut opening = Vec::new();
                for _ in 0..plies {
                    if let Some(mv) = p.random_move(&mut rng) {
                        opening.push(mv);
                        p.play_unchecked(mv);
                    }
                }
                let cfg = (kind.as_str(), iters, opp_iters);
                let a = game(&opening, Seat::One, cfg, seed * 2);
                let b = game(&opening, Seat::Two, cfg, seed * 2 + 1);
                if let Ok(mut guard) = results.lock() {
                    let (r, penta) = &mut *guard;
                    r.add(a);
                    r.add(b);
                    penta.add_pair(a, b);
                    let verdict = match sprt {
                        Some(t) => {
                            let report = t.report(penta);
                            if report.status != SprtStatus::Continue {
                                stop.store(true, Ordering::Relaxed);
                            }
                            format!(", {report}")
                        }
                        None => String::new(),
                    };
                    eprint!(
                        "\r{} games: +{} ={} -{}, score {:.3}{verdict}   ",
                        r.games(),
                        r.wins,
                        r.draws,
                        r.losses,
                        r.score()
                    );
                }
            });
        }
    });
    eprintln!();
    let (wdl, penta) = results.into_inner().unwrap_or_default();
    let elo = elo_trinomial(&wdl);
    let mut table = Table::new();
    table.set_header(vec![
        "opponent",
        "iterations per move",
        "games",
        "W / D / L",
        "score",
        "Elo (95 % interval)",
        "pairs LL, LD, DD+WL, WD, WW",
        "Elo by pairs",
    ]);
    table.add_row(vec![
        match kind.as_str() {
            "uct" => "uct (plain UCT, random rollouts)".to_string(),
            "self" => "self (optimal, default settings)".to_string(),
            _ => "baseline (optimal before issue 20)".to_string(),
        },
        format!("{iters} vs {opp_iters}"),
        wdl.games().to_string(),
        format!("{} / {} / {}", wdl.wins, wdl.draws, wdl.losses),
        format!("{:.1} %", 100.0 * wdl.score()),
        elo.to_string(),
        penta.to_string(),
        elo_pentanomial(&penta).to_string(),
    ]);
    println!("{table}");
    if let Some(t) = sprt {
        println!("SPRT {t}: {}", t.report(&penta));
    }
    print_in_games(&kind);
}
