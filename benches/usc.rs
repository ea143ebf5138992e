//! PowerVR USC examples at 16 instances: the reference interpreter against the x86-64 JIT
//! (criterion's throughput line is instances per second). `picajit bench --isa usc` measures
//! the same with the CLI's realistic inputs and prints the ratios of one run.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use picajit::interp::usc::program::{Bank, Reg};
use picajit::interp::usc::UscOptions;
use picajit::usc::compile;
use picajit::usc::testgen::random_state;
use std::hint::black_box;

const EXAMPLES: [(&str, &str); 3] = [
    (
        "vertex_transform",
        include_str!("../examples/usc/vertex_transform.usc"),
    ),
    ("lighting", include_str!("../examples/usc/lighting.usc")),
    (
        "divergent_loop",
        include_str!("../examples/usc/divergent_loop.usc"),
    ),
];

fn usc(c: &mut Criterion) {
    for (name, text) in EXAMPLES {
        let p = compile(text, UscOptions::default()).expect("the examples compile");
        let mut base = random_state(16, 42);
        if name == "divergent_loop" {
            let vi0 = Reg {
                bank: Bank::Vi,
                index: 0,
            };
            for l in 0..16 {
                base.set(vi0, l, 1 + base.get(vi0, l) % 60);
            }
        }
        let mut group = c.benchmark_group(format!("usc/{name}"));
        group.throughput(Throughput::Elements(16));
        group.bench_function(BenchmarkId::new("interp", 16), |b| {
            b.iter(|| {
                let mut st = base.clone();
                black_box(p.run(&mut st, 1 << 24).unwrap());
                st
            })
        });
        if picajit::jit::usc::x64::available() {
            let code = picajit::jit::usc::x64::compile(&p).unwrap();
            group.bench_function(BenchmarkId::new("x64", 16), |b| {
                b.iter(|| {
                    let mut st = base.clone();
                    black_box(code.run(&p, &mut st, 1 << 24).unwrap());
                    st
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, usc);
criterion_main!(benches);
