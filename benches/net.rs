//! Network play throughput: C clients (default 200) each play R rounds
//! (default 50) of tic-tac-toe against an in-process v1 server on loopback,
//! all connections open at once. Prints rounds per second and the move
//! latency (client sends a move -> server's next line) p50/p99.
//!
//! Run: `cargo bench --bench net [-- --clients 200 --rounds 50 --bot optimal]`.

use std::net::TcpStream;
use std::time::Instant;

use referee::bot::BotSpec;
use referee::game::TicTacToe;
use referee::net::{play_stream, ConnectConfig, Protocol, ServeConfig, Server};

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn run(clients: usize, rounds: u32, bot: &str) -> anyhow::Result<()> {
    let spec = BotSpec::resolve::<TicTacToe>(bot)?;
    let cfg = ServeConfig {
        rounds,
        protocol: Protocol::V1,
        max_clients: clients.max(1),
        max_per_address: clients.max(1),
        ..ServeConfig::default()
    };
    let server = Server::<TicTacToe>::bind("127.0.0.1:0", spec, bot, cfg)?.spawn()?;
    let addr = server.addr();
    let streams = (0..clients)
        .map(|_| TcpStream::connect(addr))
        .collect::<Result<Vec<_>, _>>()?;
    let clock = Instant::now();
    let handles: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let bot = bot.to_string();
            std::thread::spawn(move || {
                let mut cfg = ConnectConfig::new(&bot);
                cfg.seed = i as u64;
                play_stream(s, &cfg)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut played = 0u64;
    let mut forfeits = 0u32;
    for h in handles {
        let report = h
            .join()
            .map_err(|_| anyhow::anyhow!("a client thread panicked"))??;
        played += report.score.games();
        forfeits += report.local_forfeits;
        latencies.extend(report.latencies_us);
    }
    let secs = clock.elapsed().as_secs_f64();
    server.shutdown();
    latencies.sort_unstable();
    anyhow::ensure!(
        played == clients as u64 * u64::from(rounds),
        "only {played} rounds were played"
    );
    anyhow::ensure!(forfeits == 0, "{forfeits} forfeits");
    println!(
        "net/{bot}: {clients} clients x {rounds} rounds = {played} rounds in {secs:.2} s: \
         {:.0} rounds/s; {} moves, latency p50 {} us, p99 {} us, max {} us",
        played as f64 / secs,
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0)
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let clients: usize = arg(&args, "--clients", "200").parse()?;
    let rounds: u32 = arg(&args, "--rounds", "50").parse()?;
    let bot = arg(&args, "--bot", "optimal");
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`)
    // this is only a smoke test, so keep it tiny.
    if !args.iter().any(|a| a == "--bench") {
        return run(4, 2, &bot);
    }
    run(1, rounds * 4, &bot)?;
    run(clients, rounds, &bot)
}
