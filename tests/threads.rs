//! Vertex batches split across threads (`Shader::set_threads`) give exactly what one thread
//! gives: every output bit, the state handed back, the instruction count, and on failure
//! the lowest failing vertex.

use picajit::bench::Workload;
use picajit::engine::{
    batch_threads, BackendChoice, EngineConfig, Shader, PARALLEL_MIN_BATCH, PARALLEL_MIN_PER_THREAD,
};
use picajit::interp::float::{FloatMode, Rounding, F24};
use picajit::interp::program::{Program, ShaderKind};
use picajit::interp::state::UnitState;

type Rows = Vec<[[f32; 4]; 16]>;

fn backends() -> Vec<BackendChoice> {
    let mut b = vec![BackendChoice::Interpreter];
    if cfg!(target_arch = "x86_64") {
        b.push(BackendChoice::X64);
    }
    b
}

fn modes() -> [FloatMode; 3] {
    [
        FloatMode::F24(Rounding::TowardZero),
        FloatMode::F24(Rounding::NearestEven),
        FloatMode::F32,
    ]
}

fn shader(program: &Program, backend: BackendChoice, mode: FloatMode, threads: usize) -> Shader {
    let config = EngineConfig {
        backend,
        float_mode: mode,
        ..EngineConfig::default()
    };
    let mut s = Shader::new(program.clone(), &config).expect("backend available");
    s.set_threads(threads);
    s
}

fn bits(rows: &[[[f32; 4]; 16]]) -> Vec<u32> {
    rows.iter()
        .flatten()
        .flatten()
        .map(|x| x.to_bits())
        .collect()
}

#[test]
fn thread_counts_resolve_as_documented() {
    assert_eq!(batch_threads(1, 1 << 20), 1);
    assert_eq!(batch_threads(0, PARALLEL_MIN_BATCH - 1), 1);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    assert_eq!(
        batch_threads(0, 64 * PARALLEL_MIN_BATCH),
        cores.min(64 * PARALLEL_MIN_BATCH / PARALLEL_MIN_PER_THREAD)
    );
    assert_eq!(batch_threads(4, 4 * PARALLEL_MIN_PER_THREAD), 4);
    assert_eq!(batch_threads(4, 2 * PARALLEL_MIN_PER_THREAD + 1), 2);
    assert_eq!(batch_threads(8, 10), 1);
}

/// Every vertex example, every float mode, interpreter and host JIT: f32 batches, raw f24
/// batches and unit-state batches on 1, 2, 3 and 5 threads agree bit for bit.
#[test]
fn split_batches_equal_one_thread() {
    // Not a multiple of the group size or of any thread count, so parts end mid-group.
    let n = 5 * PARALLEL_MIN_PER_THREAD + 13;
    let mut start = UnitState::default();
    for (k, row) in start.temp.iter_mut().enumerate() {
        *row = [0.25 * k as f32, -0.5, 1.0, 2.0];
    }
    start.a0 = [1, -1];
    start.cmp = [true, false];
    for w in Workload::examples().expect("examples") {
        if w.kind() != ShaderKind::Vertex {
            continue;
        }
        for mode in modes() {
            let uniforms = w.uniforms(mode);
            let inputs = w.inputs(mode, n);
            let raw: Vec<[[F24; 4]; 16]> = inputs
                .iter()
                .map(|v| v.map(|r| r.map(|x| F24::from_f32(x, Rounding::TowardZero))))
                .collect();
            for backend in backends() {
                let run = |threads: usize| {
                    let s = shader(&w.program, backend, mode, threads);
                    let mut out: Rows = vec![[[0.0; 4]; 16]; n];
                    let i1 = s.run_batch(&uniforms, &inputs, &mut out).expect("batch");
                    let mut out_raw: Rows = vec![[[0.0; 4]; 16]; n];
                    let i2 = s
                        .run_batch_f24(&uniforms, &raw, &mut out_raw, 0xFFFF)
                        .expect("f24 batch");
                    let mut out_state: Rows = vec![[[0.0; 4]; 16]; n];
                    let mut state_out = UnitState::default();
                    let i3 = s
                        .run_batch_state(
                            &uniforms,
                            &inputs,
                            &mut out_state,
                            s.output_mask(),
                            Some(&start),
                            Some(&mut state_out),
                        )
                        .expect("state batch");
                    (
                        (i1, i2, i3),
                        bits(&out),
                        bits(&out_raw),
                        bits(&out_state),
                        format!("{state_out:?}"),
                    )
                };
                let one = run(1);
                for threads in [2, 3, 5] {
                    let got = run(threads);
                    assert!(
                        got == one,
                        "{} {mode:?} {backend:?}: {threads} threads differ from one",
                        w.name
                    );
                }
            }
        }
    }
}

/// Vertices whose v0.x is negative loop until the budget runs out: the error names the
/// first of them whichever part it falls in, and the vertices before it are written.
#[test]
fn split_batch_reports_the_lowest_failing_vertex() {
    let source = "
.out o position
.constf zero(0.0, 0.0, 0.0, 0.0)
.proc main
    cmp zero, gt, gt, v0
spin:
    jmpc cmp.x, spin
    mov o, v0
    end
.end
";
    let shbin = picajit::asm::assemble(&[picajit::asm::SourceFile {
        name: "spin.pica",
        text: source,
    }])
    .expect("assembles");
    let (program, uniforms) = picajit::engine::program_from_shbin(&shbin, 0).expect("DVLE 0");
    let n = 4 * PARALLEL_MIN_PER_THREAD;
    for failing in [n - 1, 3 * PARALLEL_MIN_PER_THREAD + 7, 700] {
        let mut inputs: Rows = (0..n)
            .map(|k| {
                let mut v = [[0.0; 4]; 16];
                v[0] = [k as f32, 1.0, 2.0, 3.0];
                v
            })
            .collect();
        inputs[failing][0][0] = -1.0;
        // A second failing vertex in a later part must not win.
        if failing + 1 < n {
            inputs[n - 1][0][0] = -2.0;
        }
        for backend in backends() {
            let config = EngineConfig {
                backend,
                budget: 1000,
                ..EngineConfig::default()
            };
            for threads in [1, 2, 4] {
                let mut s = Shader::new(program.clone(), &config).expect("shader");
                s.set_threads(threads);
                let mut out: Rows = vec![[[0.0; 4]; 16]; n];
                let e = s
                    .run_batch(&uniforms, &inputs, &mut out)
                    .expect_err("a vertex spins");
                assert_eq!(e.vertex, failing, "{backend:?}, {threads} threads");
                for k in [0, failing.saturating_sub(1)] {
                    if k < failing {
                        assert_eq!(out[k][0], inputs[k][0], "vertex {k} written");
                    }
                }
            }
        }
    }
}
