//! The networks' speed: value and policy evaluations of 1000 positions of
//! random games. Run: `cargo bench -p referee-lab --bench networks`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use referee::bot::uttt::lab::{PolicyNet, ValueNet};
use referee::game::{Game, Uttt};

fn networks(c: &mut Criterion) {
    let mut g = c.benchmark_group("uttt");
    // Positions of random games, one every few plies.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
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
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = networks
}
criterion_main!(benches);
