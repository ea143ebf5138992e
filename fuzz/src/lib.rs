//! The checks the picajit fuzz targets run. The inputs come from the one program generator,
//! `picajit-testkit` (`testkit/src/testgen/bytes.rs` defines the case format of
//! `differential` and `engine`, re-exported here), and results are compared with its
//! `compare` helpers.

pub mod theia;

use picajit::pica::asm::{assemble, AsmError, SourceFile};
use picajit::pica::shbin::Shbin;

use picajit::interp::pica::exec::{ExecError, Interpreter, RunInfo};
use picajit::interp::pica::float::FloatMode;
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms};
use picajit_jit::{
    compile_with_options, A64Lanes, Backend, CompileOptions, CompiledShader, Error, HostFeatures,
    Invocation, JitExit,
};
pub use picajit_testkit::compare::{
    assert_same_state, bank_bits, first_diff, gs_bits, listing, reg_bits,
};
pub use picajit_testkit::run::{run_compiled, run_one};
pub use picajit_testkit::testgen::bytes::{
    encode_raw, encode_structured, Case, Row, Value, DIFF_BUDGET, EMULATED_BUDGET, MODES,
};
pub use picajit_testkit::testgen::{Rng, F24_SPECIALS, F32_SPECIALS};

/// `text`, a disassembly, assembled again as one source file.
pub fn assemble_disassembly(text: &str) -> Result<Shbin, AsmError> {
    assemble(&[SourceFile {
        name: "disassembled.pica",
        text,
    }])
}

/// The backends to compare against the interpreter, with the CPU features to compile for:
/// x86-64 on x86-64 hosts, AArch64 on AArch64 hosts and, with this crate's `a64` feature
/// (on by default: `picajit-jit/emulate-a64`), under emulation anywhere. Code for a backend
/// that cannot run here is not generated at all (it would only cost time).
pub fn backends(sse_only: bool) -> Vec<(Backend, HostFeatures)> {
    let mut v = Vec::new();
    if cfg!(target_arch = "x86_64") {
        let mut x64 = HostFeatures::detect();
        if sse_only {
            x64 = x64.without(HostFeatures::AVX).without(HostFeatures::AVX2);
        }
        v.push((Backend::X64, x64));
    }
    if cfg!(any(feature = "a64", target_arch = "aarch64")) {
        v.push((Backend::A64, HostFeatures::NEON));
    }
    v
}

/// Compile `program`; `None` when the backend declines the program (or is not built), and
/// when the code cannot run here. An internal compiler error is a bug: panic.
pub fn compile_runnable(
    program: &Program,
    mode: FloatMode,
    backend: Backend,
    features: HostFeatures,
) -> Option<CompiledShader> {
    compile_runnable_with(program, mode, backend, features, CompileOptions::default())
}

/// [`compile_runnable`] with compile options (the NEON lane count).
pub fn compile_runnable_with(
    program: &Program,
    mode: FloatMode,
    backend: Backend,
    features: HostFeatures,
    options: CompileOptions,
) -> Option<CompiledShader> {
    match compile_with_options(program, mode, backend, features, options) {
        Ok(s) if s.is_executable() => Some(s),
        Ok(_) | Err(Error::Unsupported(_)) => None,
        Err(e) => panic!(
            "{backend} compile failed in {mode:?}: {e}\n{}",
            listing(program)
        ),
    }
}

/// Run `case` on the interpreter and on every runnable JIT backend in every float mode and
/// panic on any difference (registers, flags, address registers, instruction counts,
/// emitted vertices, errors; batches for vertex shaders).
pub fn differential(case: &Case) {
    let Ok(program) = &case.program else {
        return;
    };
    for &mode in &case.modes {
        let uniforms = case.uniforms(mode);
        let interp = Interpreter::new(program, mode);
        for (backend, features) in backends(case.sse_only) {
            let Some(shader) = compile_runnable(program, mode, backend, features) else {
                continue;
            };
            let budget = if Backend::host() == Some(backend) {
                case.budget
            } else {
                case.budget.min(EMULATED_BUDGET)
            };
            let ctx = || {
                format!(
                    "backend {backend} ({features}), mode {mode:?}, budget {budget}\n{}\n{}",
                    listing(program),
                    shader.analysis()
                )
            };
            let run = Run {
                case,
                interp: &interp,
                shader: &shader,
                uniforms: &uniforms,
                mode,
                budget,
                ctx: &ctx,
            };
            compare_invocations(&run);
            compare_lanes(&run);
            // The NEON multi-vertex code with eight lanes per body run (an option; the
            // per-vertex code is the same, so only the multi-vertex comparisons run again).
            if backend == Backend::A64 {
                let eight = CompileOptions::default().with_a64_lanes(A64Lanes::Eight);
                let Some(shader) = compile_runnable_with(program, mode, backend, features, eight)
                else {
                    continue;
                };
                let ctx = || format!("{} (eight NEON lanes per body run)", ctx());
                compare_lanes(&Run {
                    shader: &shader,
                    ctx: &ctx,
                    ..run
                });
            }
        }
    }
}

/// One compiled shader of a case against the interpreter, in one float mode: what each
/// comparison reads.
#[derive(Clone, Copy)]
struct Run<'a> {
    case: &'a Case,
    interp: &'a Interpreter,
    shader: &'a CompiledShader,
    uniforms: &'a Uniforms,
    mode: FloatMode,
    budget: u64,
    ctx: &'a dyn Fn() -> String,
}

impl Run<'_> {
    fn ctx(&self) -> String {
        (self.ctx)()
    }
}

/// The multi-vertex comparison of the shader's kind: batches for vertex shaders, point runs
/// for geometry shaders.
fn compare_lanes(run: &Run) {
    if run.case.kind == ShaderKind::Vertex {
        compare_batch(run);
    } else {
        compare_points(run);
    }
}

fn compare_invocations(run: &Run) {
    let geometry = run.case.kind == ShaderKind::Geometry;
    let mut uniforms = run.uniforms.clone();
    let mut regs = run.case.initial_registers(run.mode);
    let mut gs = GeometryState::default();
    let rounds = if geometry { run.case.invocations } else { 1 };
    for round in 0..rounds {
        // Reference.
        let mut r1 = regs.clone();
        let mut g1 = gs.clone();
        let e1: Result<RunInfo, ExecError> =
            run.interp
                .run(&mut r1, &uniforms, geometry.then_some(&mut g1), run.budget);
        // Compiled code only.
        let mut r2 = regs.clone();
        let mut g2 = gs.clone();
        let gs2 = geometry.then_some(&mut g2);
        let e2 = run_compiled(run.shader, &mut r2, &uniforms, gs2, run.budget);
        match &e2 {
            Ok(info) => {
                assert!(
                    e1.as_ref() == Ok(info),
                    "invocation {round}: compiled code finished ({info:?}) but the interpreter gave {e1:?}\n{}",
                    run.ctx()
                );
                let what = format!("invocation {round}");
                assert_same_state(&what, (&r1, &g1), (&r2, &g2), run.ctx);
            }
            Err(JitExit::Deopt { .. }) | Err(JitExit::Budget) => {
                let emits = g1.emitted.len() - gs.emitted.len();
                assert!(
                    e1.is_err() || emits >= 64,
                    "invocation {round}: compiled code stopped ({e2:?}) but the interpreter finished ({e1:?})\n{}",
                    run.ctx()
                );
                assert!(
                    gs_bits(&g2) == gs_bits(&gs),
                    "invocation {round}: a stopped invocation changed the geometry state\n{}",
                    run.ctx()
                );
            }
            Err(other) => panic!(
                "invocation {round}: unexpected exit {other:?}\n{}",
                run.ctx()
            ),
        }
        // Compiled code with the interpreter fallback: identical in every case.
        let mut r3 = regs.clone();
        let mut g3 = gs.clone();
        let gs3 = geometry.then_some(&mut g3);
        let e3 = run_one(run.shader, &mut r3, &uniforms, gs3, run.budget);
        assert!(
            e1 == e3,
            "invocation {round}: run gave {e3:?}, the interpreter {e1:?}\n{}",
            run.ctx()
        );
        let what = format!("invocation {round}, run");
        assert_same_state(&what, (&r1, &g1), (&r3, &g3), run.ctx);
        if e1.is_err() {
            break;
        }
        regs = r1;
        gs = g1;
        // As the engine's GeometryRunner does between invocations.
        uniforms.set_bool(15, true);
    }
}

/// Nine vertices: the case's inputs and the same rotated by some registers, so that one full
/// group of eight runs on the multi-vertex code (where there is one), its vertices taking
/// different branches, and one vertex runs alone.
fn nine_inputs(case: &Case, mode: FloatMode) -> Vec<[[f32; 4]; 16]> {
    nine_rows(&case.inputs(mode))
}

/// Nine input banks: `base` and `base` rotated by some registers (see [`nine_inputs`]).
pub fn nine_rows(base: &[[f32; 4]; 16]) -> Vec<[[f32; 4]; 16]> {
    [0, 1, 5, 2, 11, 3, 7, 14, 9]
        .iter()
        .map(|&k| std::array::from_fn(|i| base[(i + k) % 16]))
        .collect()
}

/// Nine point-mode invocations in one `run_points` call (one group of eight on the
/// multi-vertex code where the program allows it), against the interpreter's, from the
/// case's registers: every emitted vertex, the registers, the geometry state, b15 and the
/// error.
fn compare_points(run: &Run) {
    let inputs = nine_inputs(run.case, run.mode);
    // The registers the program writes: what an emulator's output map would name.
    let mask = run.shader.analysis().written_registers().1;
    let run_on = |jit: bool| {
        let mut regs = run.case.initial_registers(run.mode);
        let mut u = run.uniforms.clone();
        let mut gs = GeometryState::default();
        let mut out = EmitBuffer::new(mask);
        let r = if jit {
            run.shader
                .invoke(
                    Invocation::points(&mut u, &mut regs, &mut gs, &inputs, &mut out)
                        .budget(run.budget),
                )
                .map(|o| o.instructions)
                .map_err(|e| match e {
                    Error::Exec { index, error } => (index, error),
                    other => panic!("run_points failed other than on the interpreter: {other}"),
                })
        } else {
            run.interp
                .run_points(&mut regs, &mut u, &mut gs, &inputs, run.budget, &mut out)
        };
        let rows: Vec<u32> = out.rows.iter().flatten().map(|x| x.to_bits()).collect();
        (r, reg_bits(&regs), gs_bits(&gs), u.bools(), rows, out.flags)
    };
    let (want, got) = (run_on(false), run_on(true));
    assert!(
        want.0 == got.0,
        "run_points: {:?}, the interpreter {:?}\n{}",
        got.0,
        want.0,
        run.ctx()
    );
    assert!(
        want.1 == got.1,
        "run_points: registers differ: {}\n{}",
        first_diff(&want.1, &got.1),
        run.ctx()
    );
    assert!(
        want.2 == got.2,
        "run_points: geometry state differs\n{}",
        run.ctx()
    );
    assert!(
        want.3 == got.3,
        "run_points: bool uniforms differ\n{}",
        run.ctx()
    );
    assert!(
        want.4 == got.4 && want.5 == got.5,
        "run_points: emitted vertices differ ({} vs {} vertices)\n{}",
        got.5.len(),
        want.5.len(),
        run.ctx()
    );
}

fn compare_batch(run: &Run) {
    let inputs = nine_inputs(run.case, run.mode);
    let mut expected = Vec::new();
    let mut expected_result = Ok(0u64);
    for (index, input) in inputs.iter().enumerate() {
        let mut regs = Registers::default();
        regs.input = *input;
        match run.interp.run(&mut regs, run.uniforms, None, run.budget) {
            Ok(info) => {
                expected.push(regs.output);
                if let Ok(total) = &mut expected_result {
                    *total += info.instructions;
                }
            }
            Err(error) => {
                expected_result = Err((index, error));
                break;
            }
        }
    }
    let mut outputs = vec![[[f32::from_bits(0x7F80_1234); 4]; 16]; inputs.len()];
    let got = run
        .shader
        .invoke(Invocation::batch(run.uniforms, &inputs, &mut outputs).budget(run.budget));
    match (&expected_result, &got) {
        (Ok(total), Ok(info)) => assert!(
            *total == info.instructions,
            "batch: {} instructions, the interpreter {total}\n{}",
            info.instructions,
            run.ctx()
        ),
        (Err((index, error)), Err(e)) => assert!(
            *e == Error::Exec {
                index: *index,
                error: error.clone()
            },
            "batch: error {e}, the interpreter: vertex {index}: {error}\n{}",
            run.ctx()
        ),
        _ => panic!(
            "batch: {got:?}, the interpreter {expected_result:?}\n{}",
            run.ctx()
        ),
    }
    for (k, (want, have)) in expected.iter().zip(&outputs).enumerate() {
        let (a, b): (Vec<u32>, Vec<u32>) = (bank_bits(want).collect(), bank_bits(have).collect());
        assert!(
            a == b,
            "batch: outputs of vertex {k} differ at o{}.{}\n{}",
            a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0) / 4,
            a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0) % 4,
            run.ctx()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_is_a_case() {
        let case = Case::decode(&[]);
        differential(&case);
    }
}
