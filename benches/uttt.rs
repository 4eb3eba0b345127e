//! UTTT speed: random playouts per second on one core (target >= 1.5 M/s),
//! perft (asserted, so a fast wrong generator cannot pass), and MCTS
//! iterations per second of `optimal` and of the plain `uct` baseline.
//! Run: `cargo bench --bench uttt`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use referee::bot::BuiltinSpec;
use referee::game::{perft, Game, Uttt};

fn speed(c: &mut Criterion) {
    let mut g = c.benchmark_group("uttt");
    const BATCH: u64 = 10_000;
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("random_playouts_x10k", |b| {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
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
    // The engines through the built-in bots, as users run them: a fresh
    // bot each time, so that tree reuse cannot skip work. The networks'
    // own speed is measured in the lab (`cargo bench -p referee-lab`).
    const ITERS: u32 = 20_000;
    g.throughput(Throughput::Elements(ITERS as u64));
    for name in ["optimal", "uct"] {
        let spec = BuiltinSpec::parse(&format!("{name}:iters={ITERS}"));
        g.bench_function(format!("{name}_iterations_x20k"), |b| {
            let root = Uttt::new();
            let mut seed = 0;
            b.iter(|| {
                seed += 1;
                let mut bot = spec.make::<Uttt>(seed).expect("a built-in bot");
                bot.select_move(&root).expect("a move")
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
