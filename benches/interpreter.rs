//! Reference-interpreter speed: nanoseconds per executed PICA instruction on the example
//! shaders, per float mode. Criterion's throughput line reports instructions per second;
//! its reciprocal is the time per instruction (the target: under 8 ns).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::interp::pica::state::{Registers, Uniforms};
use picajit::pica::engine::{program_from_shbin, EngineConfig, Invocation, Shader};
use picajit::Engine;
use std::hint::black_box;

// The tests' reader of `examples/` (the benchmark runs the same programs).
#[path = "../tests/example_files/mod.rs"]
mod example_files;

const EXAMPLES: &[&str] = &[
    "mvp.v.pica",
    "lighting.v.pica",
    "skinning.v.pica",
    "lights_loop.v.pica",
];

/// Plausible uniforms: identity-like matrices, unit light vectors, small bone indices.
fn uniforms_for(base: &Uniforms) -> Uniforms {
    let mut u = base.clone();
    for row in 0..32 {
        let mut v = [0.0f32; 4];
        v[row % 4] = 1.0;
        v[(row + 1) % 4] = 0.25;
        // Keep each file's constants (.constf) intact: they sit at the top of c0-c95.
        if u.float(row) == [0.0; 4] {
            u.set_float_raw(row, v);
        }
    }
    u
}

fn inputs() -> [[f32; 4]; 16] {
    let mut v = [[0.0f32; 4]; 16];
    v[0] = [0.5, -0.25, 2.0, 1.0];
    v[1] = [3.0, 6.0, 0.25, 0.75];
    v[2] = [0.75, 0.25, 0.0, 0.0];
    v
}

fn bench(c: &mut Criterion) {
    let modes = [
        ("f24-rtz", FloatMode::F24(Rounding::TowardZero)),
        ("f24-rne", FloatMode::F24(Rounding::NearestEven)),
        ("f32", FloatMode::F32),
    ];
    let mut group = c.benchmark_group("interpreter");
    for name in EXAMPLES {
        let shbin = example_files::assembled(name);
        let (program, base) = program_from_shbin(&shbin, 0).expect("DVLE 0");
        let uniforms = uniforms_for(&base);
        let inputs = inputs();
        for (label, mode) in modes {
            let config = EngineConfig::default()
                .with_engine(Engine::Interp)
                .with_float_mode(mode);
            let shader = Shader::new(program.clone(), &config).expect("prepares");
            // One invocation from the clean state, as a vertex of a draw starts.
            let run = |uniforms: &Uniforms, inputs: &[[f32; 4]; 16]| {
                let mut regs = Registers::default();
                let outcome = shader.invoke(Invocation::one(uniforms, &mut regs).input(inputs));
                (regs, outcome)
            };
            let info = run(&uniforms, &inputs).1.expect("runs");
            group.throughput(Throughput::Elements(info.instructions));
            group.bench_function(BenchmarkId::new(*name, label), |b| {
                b.iter(|| run(black_box(&uniforms), black_box(&inputs)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
