//! Vertex batches split across threads (`Shader::set_threads`) give exactly what one thread
//! gives: every output bit, the state handed back, the instruction count, and on failure
//! the lowest failing vertex.

use picajit::interp::pica::float::{FloatMode, Rounding, F24};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::UnitState;
use picajit::pica::bench::Workload;
use picajit::pica::engine::{
    batch_threads, max_batch_threads, EngineConfig, Invocation, Shader, PARALLEL_MIN_BATCH,
    PARALLEL_MIN_PER_THREAD,
};
use picajit::{Engine, Error};

type Rows = Vec<[[f32; 4]; 16]>;

fn backends() -> Vec<Engine> {
    let mut b = vec![Engine::Interp];
    if cfg!(target_arch = "x86_64") {
        b.push(Engine::X64);
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

fn shader(program: &Program, backend: Engine, mode: FloatMode, threads: usize) -> Shader {
    let config = EngineConfig::default()
        .with_engine(backend)
        .with_float_mode(mode);
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
    assert_eq!(
        batch_threads(4, 4 * PARALLEL_MIN_PER_THREAD),
        4.min(max_batch_threads())
    );
    // Capped by the pool, however many are asked for.
    assert_eq!(batch_threads(usize::MAX, usize::MAX), max_batch_threads());
    assert_eq!(
        batch_threads(u32::MAX as usize, 1 << 41),
        max_batch_threads()
    );
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
                    let i1 = s
                        .invoke(Invocation::batch(&uniforms, &inputs, &mut out))
                        .map(|o| o.instructions)
                        .expect("batch");
                    let mut out_raw: Rows = vec![[[0.0; 4]; 16]; n];
                    let i2 = s
                        .invoke(Invocation::batch(&uniforms, &raw, &mut out_raw))
                        .map(|o| o.instructions)
                        .expect("f24 batch");
                    let mut out_state: Rows = vec![[[0.0; 4]; 16]; n];
                    let mut state_out = UnitState::default();
                    let i3 = s
                        .invoke(
                            Invocation::batch(&uniforms, &inputs, &mut out_state)
                                .mask(s.output_mask())
                                .from_state(&start)
                                .state_out(&mut state_out),
                        )
                        .map(|o| o.instructions)
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
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile {
        name: "spin.pica",
        text: source,
    }])
    .expect("assembles");
    let (program, uniforms) = picajit::pica::engine::program_from_shbin(&shbin, 0).expect("DVLE 0");
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
            let config = EngineConfig::default()
                .with_engine(backend)
                .with_budget(1000);
            for threads in [1, 2, 4] {
                let mut s = Shader::new(program.clone(), &config).expect("shader");
                s.set_threads(threads);
                let mut out: Rows = vec![[[0.0; 4]; 16]; n];
                let e = s
                    .invoke(Invocation::batch(&uniforms, &inputs, &mut out))
                    .map(|o| o.instructions)
                    .expect_err("a vertex spins");
                assert!(
                    matches!(e, Error::Exec { index, .. } if index == failing),
                    "{backend:?}, {threads} threads: {e}"
                );
                for k in [0, failing.saturating_sub(1)] {
                    if k < failing {
                        assert_eq!(out[k][0], inputs[k][0], "vertex {k} written");
                    }
                }
            }
        }
    }
}

/// The C ABI's `options.threads`: a strided f32 batch on 1 and 3 threads (and through
/// `picajit_shader_run_batch`, automatic) gives the same output bytes and final state, and a
/// caller built against the first options layout (smaller `struct_size`) still runs.
#[test]
fn c_abi_threads_option() {
    use picajit::capi::pica::*;
    use picajit::capi::PicajitStatus;
    use std::ptr::null_mut;
    let w = Workload::examples()
        .expect("examples")
        .into_iter()
        .find(|w| w.name == "lighting.v.pica")
        .expect("lighting example");
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile {
        name: "lighting.v.pica",
        text: picajit::pica::bench::EXAMPLES
            .iter()
            .find(|(n, _)| *n == "lighting.v.pica")
            .expect("source")
            .1,
    }])
    .expect("assembles")
    .to_bytes();
    let n = 9000;
    let inputs: Vec<f32> = w
        .inputs(FloatMode::F32, n)
        .iter()
        .flatten()
        .flatten()
        .copied()
        .collect();
    let uniforms_f32 = w.uniforms(FloatMode::F32);
    // SAFETY (whole block): every pointer passed is a live local of the right size, and every
    // handle comes from the library and is destroyed once.
    unsafe {
        let mut cfg = std::mem::zeroed::<PicajitEngineConfig>();
        assert_eq!(
            picajit_engine_config_init(&mut cfg),
            PicajitStatus::PICAJIT_OK
        );
        let mut engine = null_mut();
        assert_eq!(
            picajit_engine_create(&cfg, &mut engine),
            PicajitStatus::PICAJIT_OK
        );
        let mut shader = null_mut();
        assert_eq!(
            picajit_shader_load_shbin(engine, shbin.as_ptr().cast(), shbin.len(), 0, &mut shader),
            PicajitStatus::PICAJIT_OK
        );
        let mut uniforms = null_mut();
        assert_eq!(
            picajit_uniforms_create(engine, &mut uniforms),
            PicajitStatus::PICAJIT_OK
        );
        let rows: Vec<f32> = (0..96).flat_map(|i| uniforms_f32.float(i)).collect();
        assert_eq!(
            picajit_uniforms_set_float(uniforms, 0, 96, rows.as_ptr()),
            PicajitStatus::PICAJIT_OK
        );
        let layout = PicajitVertexLayout {
            format: PicajitFormat::PICAJIT_FORMAT_F32 as u32,
            flags: 0,
            mask: 0xFFFF,
            stride: 256,
        };
        let mut start = std::mem::zeroed::<PicajitUnitState>();
        start.r[3] = [0.5, -1.0, 2.0, 0.25];
        // Every batch call of this test: `count` vertices from vertex `first` into `out`,
        // through `picajit_shader_run_batch`, or `picajit_shader_run_batch_ex` with options.
        let (s, u, l) = (shader, uniforms, &layout);
        let call = |first: usize,
                    count: usize,
                    output: &PicajitVertexLayout,
                    out: &mut [f32],
                    options: Option<&PicajitRunOptions>,
                    stats: *mut PicajitRunStats| {
            let (ins, outs) = (
                inputs[64 * first..].as_ptr().cast(),
                out.as_mut_ptr().cast(),
            );
            let status = match options {
                None => picajit_shader_run_batch(s, u, l, ins, output, outs, count, stats),
                Some(o) => picajit_shader_run_batch_ex(s, u, l, ins, output, outs, count, o, stats),
            };
            assert_eq!(status, PicajitStatus::PICAJIT_OK);
        };
        // The whole batch: its output bits and instruction count.
        let batch = |options: Option<&PicajitRunOptions>| {
            let mut out = vec![0f32; 64 * n];
            let mut stats = PicajitRunStats::default();
            call(0, n, &layout, &mut out, options, &mut stats);
            assert_eq!(stats.vertices, n);
            let bits: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
            (bits, stats.instructions)
        };
        let run = |threads: Option<u32>, size: Option<u32>| {
            let mut state = std::mem::zeroed::<PicajitUnitState>();
            let (bits, instructions) = match threads {
                None => batch(None),
                Some(t) => {
                    let mut o = std::mem::zeroed::<PicajitRunOptions>();
                    assert_eq!(picajit_run_options_init(&mut o), PicajitStatus::PICAJIT_OK);
                    o.threads = t;
                    o.state_in = &start;
                    o.state_out = &mut state;
                    if let Some(s) = size {
                        o.struct_size = s;
                    }
                    batch(Some(&o))
                }
            };
            let state_bits: Vec<u32> = state.r.iter().flatten().map(|x| x.to_bits()).collect();
            (bits, state_bits, instructions)
        };
        let one = run(Some(1), None);
        assert_eq!(run(Some(3), None), one, "3 threads");
        let v1_size = (std::mem::size_of::<PicajitRunOptions>() - 8) as u32;
        assert_eq!(run(Some(3), Some(v1_size)), one, "first options layout");
        let plain = run(None, None);
        let plain_one = {
            let mut o = std::mem::zeroed::<PicajitRunOptions>();
            assert_eq!(picajit_run_options_init(&mut o), PicajitStatus::PICAJIT_OK);
            assert_eq!(o.threads, 0, "init asks for the automatic setting");
            // Without state: compare with one thread and no state.
            o.threads = 1;
            batch(Some(&o)).0
        };
        assert_eq!(plain.0, plain_one, "automatic threads");
        // One vertex per call on this thread, after the batches above left their values in
        // the thread's reused staging rows, alternating a layout of every register with one of
        // o0 only: each call's bytes equal the batch's for the registers its layout names.
        let o0 = PicajitVertexLayout { mask: 1, ..layout };
        for k in 0..200 {
            let lay = if k % 2 == 0 { &layout } else { &o0 };
            let mut out = [0f32; 64];
            call(k, 1, lay, &mut out, None, null_mut());
            let named = if k % 2 == 0 { 64 } else { 4 };
            let got: Vec<u32> = out[..named].iter().map(|x| x.to_bits()).collect();
            assert_eq!(got, plain.0[64 * k..64 * k + named], "vertex {k} alone");
        }
        picajit_uniforms_destroy(uniforms);
        picajit_shader_destroy(shader);
        picajit_engine_destroy(engine);
    }
}
