//! Tic-tac-toe speed: random playouts per second on one core (target >= 20 M/s),
//! perft, and the optimal bot's move time. Run: `cargo bench --bench tictactoe`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use referee::bot::{Bot, BuiltinSpec};
use referee::game::{perft, Game, TicTacToe};

fn playouts(c: &mut Criterion) {
    let mut g = c.benchmark_group("tictactoe");
    const BATCH: u64 = 10_000;
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("random_playouts_x10k", |b| {
        let mut rng = SmallRng::seed_from_u64(1);
        b.iter(|| {
            let mut x_wins = 0u32;
            for _ in 0..BATCH {
                let mut p = TicTacToe::new();
                if p.random_playout(&mut rng).winner().is_some() {
                    x_wins += 1;
                }
            }
            std::hint::black_box(x_wins)
        })
    });
    g.throughput(Throughput::Elements(549_946));
    g.bench_function("perft_9_total_nodes", |b| {
        b.iter(|| {
            let n: u64 = (0..=9).map(|d| perft(&TicTacToe::new(), d)).sum();
            // The table is asserted here too, so a fast wrong generator cannot pass.
            assert_eq!(perft(&TicTacToe::new(), 9), 127_872);
            n
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("optimal_move_empty_board", |b| {
        let mut bot = BuiltinSpec::parse("optimal")
            .make::<TicTacToe>(1)
            .expect("built-in");
        let p = TicTacToe::new();
        b.iter(|| bot.select_move(&p).expect("a move"))
    });
    g.finish();
}

criterion_group!(benches, playouts);
criterion_main!(benches);
