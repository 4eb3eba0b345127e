//! Notakto speed: the optimal bot's move time with 3 boards (target <= 1 us),
//! random playouts and perft. Run: `cargo bench --bench notakto`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use referee::bot::notakto::Optimal;
use referee::bot::Bot;
use referee::game::{perft, Game, Notakto};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("notakto");
    g.throughput(Throughput::Elements(1));
    // A winning first move, a midgame won position and a lost position
    // (the lost one counts every reply of every move).
    for (name, text) in [
        (
            "optimal_move_start_3_boards",
            "........./........./.........",
        ),
        ("optimal_move_midgame_lost", "X...X..../.X......./........."),
        ("optimal_move_midgame_won", "X...X..../.X......./....X...."),
    ] {
        let pos: Notakto = text.parse().expect("valid position");
        let mut bot = Optimal::bot(1);
        g.bench_function(name, |b| b.iter(|| bot.select_move(&pos).expect("a move")));
    }
    const BATCH: u64 = 10_000;
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("random_playouts_3_boards_x10k", |b| {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        b.iter(|| {
            let mut ones = 0u32;
            for _ in 0..BATCH {
                let mut p = Notakto::new(3);
                if p.random_playout(&mut rng).winner().map(|s| s.number()) == Some(1) {
                    ones += 1;
                }
            }
            std::hint::black_box(ones)
        })
    });
    g.throughput(Throughput::Elements(420_336));
    g.bench_function("perft_4_three_boards", |b| {
        b.iter(|| {
            let n = perft(&Notakto::new(3), 4);
            assert_eq!(n, 420_336);
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
