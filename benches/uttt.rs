//! UTTT speed: random playouts per second on one core (target >= 1.5 M/s),
//! perft (asserted, so a fast wrong generator cannot pass), the value and
//! policy networks' evaluations, and MCTS iterations per second of
//! `optimal` (with its networks, and as the playout engine of before) and
//! of the plain `uct` baseline.
//! Run: `cargo bench --bench uttt`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use referee::bot::uttt::{Mcts, PolicyNet, SearchConfig, ValueNet};
use referee::game::{perft, Game, Uttt};

fn speed(c: &mut Criterion) {
    let mut g = c.benchmark_group("uttt");
    const BATCH: u64 = 10_000;
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("random_playouts_x10k", |b| {
        let mut rng = SmallRng::seed_from_u64(1);
        b.iter(|| {
            let mut decided = 0u32;
            for _ in 0..BATCH {
                let mut p = Uttt::new();
                if p.random_playout(&mut rng).winner().is_some() {
                    decided += 1;
                }
            }
            std::hint::black_box(decided)
        })
    });
    g.throughput(Throughput::Elements(55_080));
    g.bench_function("perft_4_leaves", |b| {
        b.iter(|| {
            let n = perft(&Uttt::new(), 4);
            assert_eq!(n, 55_080);
            n
        })
    });
    // Positions of random games, one every few plies, for the networks.
    let mut rng = SmallRng::seed_from_u64(2);
    let mut positions = Vec::new();
    while positions.len() < 1000 {
        let mut p = Uttt::new();
        while let Some(mv) = p.random_move(&mut rng) {
            p.play_unchecked(mv);
            if p.is_over() {
                break;
            }
            if p.ply().is_multiple_of(5) {
                positions.push(p);
            }
        }
    }
    positions.truncate(1000);
    g.throughput(Throughput::Elements(positions.len() as u64));
    g.bench_function("value_network_x1000", |b| {
        let net = ValueNet::builtin();
        b.iter(|| positions.iter().map(|p| net.value(p)).sum::<f32>())
    });
    g.bench_function("policy_network_x1000", |b| {
        let net = PolicyNet::builtin();
        let mut out = [0f32; 81];
        b.iter(|| {
            let mut total = 0.0;
            for p in &positions {
                let moves = p.legal_moves();
                net.logits(p, &moves, &mut out);
                total += out[0];
            }
            total
        })
    });
    const ITERS: u32 = 20_000;
    g.throughput(Throughput::Elements(ITERS as u64));
    for (name, cfg) in [
        ("optimal_iterations_x20k", SearchConfig::optimal()),
        (
            "playout_engine_iterations_x20k",
            SearchConfig::playout_engine(),
        ),
        ("uct_iterations_x20k", SearchConfig::plain_uct()),
    ] {
        g.bench_function(name, |b| {
            let root = Uttt::new();
            let mut seed = 0;
            b.iter(|| {
                // A fresh search each time, so tree reuse cannot skip work.
                seed += 1;
                let mut m = Mcts::new(
                    SearchConfig {
                        iterations: ITERS,
                        ..cfg
                    },
                    seed,
                );
                m.search(&root)
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = speed
}
criterion_main!(benches);
