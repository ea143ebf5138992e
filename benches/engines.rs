//! Engines compared on the example shaders: throughput per engine, float mode and batch size
//! (criterion's throughput line is vertices per second; for geometry shaders, input points),
//! compile time per engine and mode, and code size printed beside them.
//!
//! `cargo bench --bench engines` runs everything (a few minutes); a filter picks a part, for
//! example `cargo bench --bench engines -- 'throughput/lights8'` or `-- compile`.
//! `picajit bench` measures the same things in one table, with ratios taken in the same run.

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use picajit::interp::pica::exec::DEFAULT_BUDGET;
use picajit::pica::bench::{
    mode_label, prepare, BatchRunner, EngineKind, Workload, BATCH_SIZES, MODES,
};
use std::hint::black_box;
use std::time::Duration;

fn workloads() -> Vec<Workload> {
    Workload::examples().expect("the examples assemble")
}

fn throughput(c: &mut Criterion) {
    for w in workloads() {
        let mut group = c.benchmark_group(format!("throughput/{}", w.name));
        for mode in MODES {
            for engine in EngineKind::ALL {
                // Engines that cannot compile a shader (a backend still to come), or whose
                // code is for another architecture, have nothing to run.
                let p = match prepare(engine, &w, mode, DEFAULT_BUDGET) {
                    Ok(p) if p.runnable() => p,
                    _ => continue,
                };
                for batch in BATCH_SIZES {
                    let mut runner = BatchRunner::new(&p, &w, batch);
                    group.throughput(Throughput::Elements(batch as u64));
                    // Large batches of slow shaders take milliseconds per iteration; flat
                    // sampling keeps them within the measurement time.
                    group.sampling_mode(if batch >= 1024 {
                        SamplingMode::Flat
                    } else {
                        SamplingMode::Auto
                    });
                    let id = BenchmarkId::new(format!("{engine}-{}", mode_label(mode)), batch);
                    group.bench_function(id, |b| {
                        b.iter(|| black_box(runner.run().expect("the example runs")))
                    });
                }
            }
        }
        group.finish();
    }
}

fn compile(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    let mut sizes = Vec::new();
    for w in workloads() {
        for mode in MODES {
            for engine in EngineKind::ALL {
                let Ok(p) = prepare(engine, &w, mode, DEFAULT_BUDGET) else {
                    continue;
                };
                if let Some(bytes) = p.code_size {
                    sizes.push(format!(
                        "{:<22} {:<24} {:<8} {bytes:>7} bytes",
                        w.name,
                        engine.label(),
                        mode_label(mode)
                    ));
                }
                let id = BenchmarkId::new(&w.name, format!("{engine}-{}", mode_label(mode)));
                // Unmapping the code is not part of compiling it.
                group.bench_function(id, |b| {
                    b.iter_with_large_drop(|| {
                        prepare(engine, &w, mode, DEFAULT_BUDGET).expect("compiles")
                    })
                });
            }
        }
    }
    group.finish();
    // Criterion has no column for it, so code size is printed after the timings.
    println!("\ncode size (machine code and constant pool):");
    for line in sizes {
        println!("  {line}");
    }
}

criterion_group! {
    name = benches;
    // Short windows: 9 shaders x 2 engines x 3 modes x 3 batch sizes is 162 benchmarks.
    // Pass --measurement-time / --warm-up-time for longer ones.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    targets = throughput, compile
}
criterion_main!(benches);
