//! UTTT speed: random playouts per second on one core (target >= 1.5 M/s),
//! perft (asserted, so a fast wrong generator cannot pass), and MCTS
//! iterations per second of `optimal` and of the plain `uct` baseline.
//! Run: `cargo bench --bench uttt`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use referee::bot::uttt::{Mcts, SearchConfig};
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
    const ITERS: u32 = 20_000;
    g.throughput(Throughput::Elements(ITERS as u64));
    for (name, cfg) in [
        ("optimal_iterations_x20k", SearchConfig::optimal()),
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
