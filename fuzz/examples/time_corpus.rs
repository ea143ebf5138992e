//! Times `differential` on every file of a corpus directory (slowest first), to keep the
//! fuzz target's executions fast: `cargo run --release --example time_corpus -- DIR`.
use std::time::Instant;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus/differential".into());
    let mut times = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("corpus directory") {
        let path = entry.expect("dir entry").path();
        let bytes = std::fs::read(&path).expect("read input");
        let case = picajit_fuzz::Case::decode(&bytes);
        let start = Instant::now();
        picajit_fuzz::differential(&case);
        times.push((start.elapsed(), path));
    }
    times.sort();
    let total: std::time::Duration = times.iter().map(|t| t.0).sum();
    for (t, p) in times.iter().rev().take(10) {
        println!("{t:>12.3?}  {}", p.display());
    }
    println!(
        "{} inputs, {:.3?} in all, {:.3?} mean",
        times.len(),
        total,
        total / times.len().max(1) as u32
    );
}
