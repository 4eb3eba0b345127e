//! `referee-lab strength`: UTTT strength, `optimal` against an opponent
//! at fixed iteration budgets per move, in paired games (random opening
//! plies per pair, each engine playing both seats from them). Iteration
//! budgets make the results independent of speed and machine load; to
//! compare at equal time, give each engine the iterations it runs in that
//! time (`--opp-iters`, measured with `--speed`), or give both a time
//! budget (`--time-ms`, load-dependent).
//!
//! Opponents (`--opponent`): `baseline` (the default), the engine as it
//! was before issue 20 (baseline.rs, frozen); `today`, the engine as it
//! was when issue 65 began (today.rs, frozen); `self`, the current
//! `optimal` with its default settings (the flags for optimal then
//! measure a change against the current engine); and `uct`, plain UCT
//! with random rollouts. `--rules codingame` plays and scores the games
//! under CodinGame's rule (a full board goes to more boards won), and
//! `--plies 0` plays them from the empty board, where only the engines'
//! seeds (`optimal`'s variety of the first plies) make them differ. `--sprt elo0=0,elo1=10` (fastchess's syntax) stops the match
//! when a sequential probability ratio test on the game pairs decides
//! (exact with `--threads 1`; with more threads pairs are counted as they
//! finish). After a match it prints each engine's iterations per second
//! inside the games played (tree reuse and its copy included). The
//! results do not depend on the number of threads.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use comfy_table::Table;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use referee::bot::uttt::lab::{Mcts, PolicyNet, SearchConfig, ValueNet, MAX_NODES};
use referee::game::{Game, Rules, Seat, Uttt, UtttMove};
use referee::play::standings::Wdl;
use referee::play::stats::{elo_pentanomial, elo_trinomial, Pentanomial, Sprt, SprtStatus};

use crate::baseline::{BaselineConfig, BaselineMcts};
use crate::today::{TodayConfig, TodayMcts};

/// The opponent of `optimal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Opponent {
    /// The engine as it was before issue 20 (frozen, baseline.rs).
    Baseline,
    /// The engine as it was when issue 65 began (frozen, today.rs).
    Today,
    /// Today's `optimal` at its defaults (its own `--opp-*` networks).
    #[value(name = "self")]
    Itself,
    /// Plain UCT with random rollouts.
    Uct,
}

/// Arguments of `referee-lab strength`.
#[derive(Args, Debug)]
pub struct StrengthArgs {
    /// The opponent.
    #[arg(long, value_enum, default_value_t = Opponent::Baseline)]
    opponent: Opponent,
    /// Optimal's iterations per move (default 2000, unlimited with --time-ms).
    #[arg(long)]
    iters: Option<u32>,
    /// The opponent's iterations per move (default: optimal's).
    #[arg(long)]
    opp_iters: Option<u32>,
    /// Games (even: pairs of games from one opening).
    #[arg(long, default_value_t = 200)]
    games: u64,
    /// Random opening plies of each pair.
    #[arg(long, default_value_t = 2)]
    plies: u64,
    /// The first pair's seed (the pair's opening and engines' seeds).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Games played at once (default: the number of cores).
    #[arg(long)]
    threads: Option<u64>,
    /// Stop when a sequential probability ratio test decides, e.g.
    /// elo0=0,elo1=10.
    #[arg(long, value_parser = parse_sprt)]
    sprt: Option<Sprt>,
    /// A wall-time budget per move for both engines instead of iterations.
    #[arg(long)]
    time_ms: Option<u64>,
    /// Measure iterations per second of both engines instead (in turns,
    /// over positions of 0 to 46 random plies, so that load falls on both
    /// alike); the ratio converts equal time to iteration budgets.
    #[arg(long)]
    speed: bool,
    /// The node cap of both referee engines (a small cap at a small budget
    /// stands for the default cap at 1 s).
    #[arg(long, default_value_t = MAX_NODES)]
    max_nodes: usize,
    /// The `self` opponent's node cap (default: --max-nodes).
    #[arg(long)]
    opp_max_nodes: Option<usize>,
    /// Optimal's PUCT constant.
    #[arg(long)]
    puct: Option<f32>,
    /// Optimal's PUCT first-play reduction.
    #[arg(long)]
    fpu: Option<f32>,
    /// Optimal's value network file (default: the built-in one).
    #[arg(long)]
    value_net: Option<PathBuf>,
    /// Optimal's policy network file (default: the built-in one).
    #[arg(long)]
    policy_net: Option<PathBuf>,
    /// The `self` opponent's value network file.
    #[arg(long)]
    opp_value_net: Option<PathBuf>,
    /// The `self` opponent's policy network file.
    #[arg(long)]
    opp_policy_net: Option<PathBuf>,
    /// Optimal's plies of variety from the start (default: its default).
    #[arg(long)]
    vary: Option<u32>,
    /// The rule the games are played and scored under.
    #[arg(long, default_value = "standard", value_parser = crate::net_tools::parse_rules)]
    rules: Rules,
}

fn parse_sprt(text: &str) -> Result<Sprt, String> {
    text.parse().map_err(|e| format!("{e}"))
}

/// A network file loaded for the rest of the run, or the built-in one.
fn network<N>(
    path: &Option<PathBuf>,
    builtin: fn() -> &'static N,
    load: fn(&str) -> Result<N, String>,
) -> anyhow::Result<&'static N> {
    match path {
        None => Ok(builtin()),
        Some(p) => {
            let net = load(&p.to_string_lossy()).map_err(anyhow::Error::msg)?;
            Ok(Box::leak(Box::new(net)))
        }
    }
}

/// What a match needs, checked once.
struct Setup {
    opponent: Opponent,
    ours: SearchConfig,
    theirs: SearchConfig,
    baseline: BaselineConfig,
    today: TodayConfig,
    nets: (&'static ValueNet, &'static PolicyNet),
    opp_nets: (&'static ValueNet, &'static PolicyNet),
    rules: Rules,
}

impl Setup {
    fn new(a: &StrengthArgs) -> anyhow::Result<Setup> {
        let time = a.time_ms.map(Duration::from_millis);
        let iters = a
            .iters
            .unwrap_or(if time.is_some() { u32::MAX } else { 2000 })
            .max(1);
        let opp_iters = a.opp_iters.unwrap_or(iters).max(1);
        let base = SearchConfig::optimal();
        let max_nodes = a.max_nodes.clamp(1000, MAX_NODES);
        let ours = SearchConfig {
            iterations: iters,
            time,
            max_nodes,
            puct: a.puct.unwrap_or(base.puct),
            puct_fpu: a.fpu.unwrap_or(base.puct_fpu),
            vary_plies: a.vary.unwrap_or(base.vary_plies),
            ..base
        };
        let theirs = match a.opponent {
            Opponent::Uct => SearchConfig {
                iterations: opp_iters,
                ..SearchConfig::plain_uct()
            },
            _ => SearchConfig {
                iterations: opp_iters,
                time,
                max_nodes: a.opp_max_nodes.unwrap_or(max_nodes).clamp(1000, MAX_NODES),
                ..base
            },
        };
        let baseline = BaselineConfig {
            iterations: opp_iters,
            time,
            ..BaselineConfig::optimal()
        };
        let today = TodayConfig {
            iterations: opp_iters,
            time,
            max_nodes: a.opp_max_nodes.unwrap_or(max_nodes).clamp(1000, MAX_NODES),
            ..TodayConfig::optimal()
        };
        let value = |p| network(p, ValueNet::builtin, ValueNet::load);
        let policy = |p| network(p, PolicyNet::builtin, PolicyNet::load);
        Ok(Setup {
            opponent: a.opponent,
            ours,
            theirs,
            baseline,
            today,
            rules: a.rules,
            nets: (
                value(&a.value_net).context("--value-net")?,
                policy(&a.policy_net).context("--policy-net")?,
            ),
            opp_nets: (
                value(&a.opp_value_net).context("--opp-value-net")?,
                policy(&a.opp_policy_net).context("--opp-policy-net")?,
            ),
        })
    }

    fn ours(&self, seed: u64) -> Engine {
        let mut m = Mcts::new(self.ours, seed);
        m.set_value_net(self.nets.0);
        m.set_policy_net(self.nets.1);
        Engine::Ours(Box::new(m))
    }

    fn opponent(&self, seed: u64) -> Engine {
        match self.opponent {
            Opponent::Baseline => {
                Engine::Baseline(Box::new(BaselineMcts::new(self.baseline, seed)))
            }
            Opponent::Today => Engine::Today(Box::new(TodayMcts::new(self.today, seed))),
            Opponent::Uct => Engine::Ours(Box::new(Mcts::new(self.theirs, seed))),
            Opponent::Itself => {
                let mut m = Mcts::new(self.theirs, seed);
                m.set_value_net(self.opp_nets.0);
                m.set_policy_net(self.opp_nets.1);
                Engine::Ours(Box::new(m))
            }
        }
    }

    fn name(&self) -> &'static str {
        match self.opponent {
            Opponent::Baseline => "baseline",
            Opponent::Today => "today",
            Opponent::Itself => "self",
            Opponent::Uct => "uct",
        }
    }
}

enum Engine {
    Ours(Box<Mcts>),
    Baseline(Box<BaselineMcts>),
    Today(Box<TodayMcts>),
}

impl Engine {
    fn search(&mut self, pos: &Uttt) -> Option<UtttMove> {
        match self {
            Engine::Ours(m) => m.search(pos),
            Engine::Baseline(m) => m.search(pos),
            Engine::Today(m) => m.search(pos),
        }
    }

    /// Optimal's time before its first iteration (tree reuse) and tree
    /// size after the search; zero for the baseline.
    fn setup(&self) -> (u64, u64) {
        match self {
            Engine::Ours(m) => (m.stats().setup.as_nanos() as u64, m.stats().nodes as u64),
            Engine::Baseline(_) | Engine::Today(_) => (0, 0),
        }
    }

    fn iterations(&self) -> u32 {
        match self {
            Engine::Ours(m) => m.stats().iterations,
            Engine::Baseline(m) => m.stats().iterations,
            Engine::Today(m) => m.stats().iterations,
        }
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

/// One game from `opening`; returns optimal's points and whether the
/// rule decided the game (a full board, on boards won).
fn game(setup: &Setup, opening: &[UtttMove], optimal_seat: Seat, seed: u64) -> (f64, bool) {
    let mut pos = Uttt::new().under_rules(setup.rules);
    for &mv in opening {
        pos.play_unchecked(mv);
    }
    let mut optimal = setup.ours(seed);
    let mut other = setup.opponent(seed ^ 0x9e37_79b9);
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
    (
        pos.outcome().map_or(0.5, |o| o.points(optimal_seat)),
        pos.decided_by_rule().is_some(),
    )
}

/// What a match counts: optimal's results, its pairs, its results by
/// seat (as X, as O) and the games the rule decided.
#[derive(Default)]
struct Counts {
    wdl: Wdl,
    penta: Pentanomial,
    by_seat: [Wdl; 2],
    by_rule: u64,
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

/// Iterations per second of optimal (with its flags) and of the opponent,
/// over positions from 0 to 46 random plies, measured in turns so that
/// machine load falls on both alike.
fn speed(setup: &Setup) {
    let kind = setup.name();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
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
    let (mut t_ours, mut t_opp) = (0f64, 0f64);
    let (mut n_ours, mut n_opp) = (0f64, 0f64);
    for round in 0..3u64 {
        for (k, p) in positions.iter().enumerate() {
            let seed = round * 100 + k as u64;
            let start = std::time::Instant::now();
            let mut e = setup.ours(seed);
            std::hint::black_box(e.search(p));
            t_ours += start.elapsed().as_secs_f64();
            n_ours += e.iterations() as f64;
            let start = std::time::Instant::now();
            let mut e = setup.opponent(seed);
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

/// Runs `referee-lab strength`.
pub fn run(a: &StrengthArgs) -> anyhow::Result<()> {
    let setup = Setup::new(a)?;
    if a.speed {
        speed(&setup);
        return Ok(());
    }
    let kind = setup.name();
    let sprt = a.sprt;
    let stop = AtomicBool::new(false);
    let games = a.games.max(2) / 2 * 2;
    let (plies, first_seed) = (a.plies, a.seed);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let threads = a.threads.unwrap_or(cores).max(1);
    let next_pair = AtomicU64::new(0);
    let results = Mutex::new(Counts::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let pair = next_pair.fetch_add(1, Ordering::Relaxed);
                if pair >= games / 2 || stop.load(Ordering::Relaxed) {
                    break;
                }
                let seed = first_seed + pair;
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut p = Uttt::new();
                let mut opening = Vec::new();
                for _ in 0..plies {
                    if let Some(mv) = p.random_move(&mut rng) {
                        opening.push(mv);
                        p.play_unchecked(mv);
                    }
                }
                let (a, a_rule) = game(&setup, &opening, Seat::One, seed * 2);
                let (b, b_rule) = game(&setup, &opening, Seat::Two, seed * 2 + 1);
                if let Ok(mut guard) = results.lock() {
                    let c = &mut *guard;
                    c.wdl.add(a);
                    c.wdl.add(b);
                    c.by_seat[0].add(a);
                    c.by_seat[1].add(b);
                    c.by_rule += u64::from(a_rule) + u64::from(b_rule);
                    c.penta.add_pair(a, b);
                    let (r, penta) = (&c.wdl, &c.penta);
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
    let counts = results.into_inner().unwrap_or_default();
    let (wdl, penta) = (counts.wdl, counts.penta);
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
        match setup.opponent {
            Opponent::Uct => "uct (plain UCT, random rollouts)".to_string(),
            Opponent::Itself => "self (optimal, default settings)".to_string(),
            Opponent::Baseline => "baseline (optimal before issue 20)".to_string(),
            Opponent::Today => "today (optimal before issue 65)".to_string(),
        },
        format!(
            "{} vs {}",
            setup.ours.iterations,
            match setup.opponent {
                Opponent::Baseline => setup.baseline.iterations,
                Opponent::Today => setup.today.iterations,
                _ => setup.theirs.iterations,
            }
        ),
        wdl.games().to_string(),
        format!("{} / {} / {}", wdl.wins, wdl.draws, wdl.losses),
        format!("{:.1} %", 100.0 * wdl.score()),
        elo.to_string(),
        penta.to_string(),
        elo_pentanomial(&penta).to_string(),
    ]);
    println!("{table}");
    println!(
        "rule {}: optimal as X {}-{}-{}, as O {}-{}-{}; {} of {} games decided on boards won",
        setup.rules,
        counts.by_seat[0].wins,
        counts.by_seat[0].draws,
        counts.by_seat[0].losses,
        counts.by_seat[1].wins,
        counts.by_seat[1].draws,
        counts.by_seat[1].losses,
        counts.by_rule,
        wdl.games()
    );
    if let Some(t) = sprt {
        let report = t.report(&penta);
        println!("SPRT {t}: {report}");
        if report.status == SprtStatus::Continue {
            println!("SPRT undecided: the cap of {games} games was reached");
        }
    }
    print_in_games(kind);
    Ok(())
}
