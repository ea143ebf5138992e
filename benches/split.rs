//! What splitting a vertex batch across two threads costs and gains, by batch size: the basis
//! of `PARALLEL_MIN_BATCH` in `src/engine.rs`. For `mvp` (the cheapest example, so the one
//! where a fixed cost per split weighs most) and `lights8`, each batch size runs on one
//! thread, split on the persistent worker pool (`Shader::set_threads(2)`), and split on two
//! scoped threads started for the call (how splits ran before the pool; each new thread also
//! allocates its staging rows and registers afresh). Reported per call: median wall time and
//! median CPU time of the whole process (Linux; all threads), so the CPU column shows the cost
//! of a split even on a machine whose other load makes wall-clock scaling meaningless.
//!
//! `cargo bench --bench split` (about a minute); `PICAJIT_SPLIT_MS` sets the time per cell
//! (default 300).

use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::pica::bench::Workload;
use picajit::pica::engine::{EngineConfig, Invocation, Shader};
use picajit::Engine;
use std::time::{Duration, Instant};

type Rows = Vec<[[f32; 4]; 16]>;

#[cfg(target_os = "linux")]
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(not(target_os = "linux"))]
fn cpu_now() -> Duration {
    Duration::ZERO
}

/// Median wall and CPU time per call of `f`, from samples of a few calls each.
fn measure(ms: u64, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let calls = {
        let t = Instant::now();
        f();
        let one = t.elapsed().as_secs_f64().max(1e-7);
        ((0.002 / one) as usize).clamp(1, 10_000)
    };
    let end = Instant::now() + Duration::from_millis(ms);
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    while Instant::now() < end || wall.len() < 5 {
        let (t, c) = (Instant::now(), cpu_now());
        for _ in 0..calls {
            f();
        }
        wall.push(t.elapsed().as_secs_f64() * 1e6 / calls as f64);
        cpu.push((cpu_now() - c).as_secs_f64() * 1e6 / calls as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut wall), median(&mut cpu))
}

fn main() {
    let ms = std::env::var("PICAJIT_SPLIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mode = FloatMode::F24(Rounding::TowardZero);
    let backend = if cfg!(target_arch = "x86_64") {
        Engine::X64
    } else {
        Engine::Jit
    };
    let config = EngineConfig::default()
        .with_engine(backend)
        .with_float_mode(mode);
    println!("| shader | vertices | 1 thread wall us | 1 thread CPU us | pool x2 wall us | pool x2 CPU us | spawn x2 wall us | spawn x2 CPU us |");
    println!("|---|---|---|---|---|---|---|---|");
    for w in Workload::examples().expect("examples") {
        if w.name != "mvp.v.pica" && w.name != "lights8.v.pica" {
            continue;
        }
        let uniforms = w.uniforms(mode);
        let mut one = Shader::new(w.program.clone(), &config).expect("shader");
        one.set_threads(1);
        let mut two = Shader::new(w.program.clone(), &config).expect("shader");
        two.set_threads(2);
        for n in [1024, 2048, 4096, 8192, 16384, 65536] {
            let inputs = w.inputs(mode, n);
            let mut out: Rows = vec![[[0.0; 4]; 16]; n];
            let single = measure(ms, || {
                one.invoke(Invocation::batch(&uniforms, &inputs, &mut out))
                    .expect("batch");
            });
            let pool = measure(ms, || {
                two.invoke(Invocation::batch(&uniforms, &inputs, &mut out))
                    .expect("batch");
            });
            let half = n / 2;
            let spawn = measure(ms, || {
                let (a, b) = out.split_at_mut(half);
                std::thread::scope(|s| {
                    let h =
                        s.spawn(|| one.invoke(Invocation::batch(&uniforms, &inputs[half..], b)));
                    one.invoke(Invocation::batch(&uniforms, &inputs[..half], a))
                        .expect("batch");
                    h.join().expect("join").expect("batch");
                });
            });
            println!(
                "| `{}` | {n} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                w.name, single.0, single.1, pool.0, pool.1, spawn.0, spawn.1
            );
        }
    }
}
