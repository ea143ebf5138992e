//! Shared helpers of the JIT differential tests: run a program on the interpreter and on
//! compiled code and compare everything bit for bit.

#![allow(dead_code)]

use picajit::interp::pica::exec::{ExecError, Interpreter, RunInfo};
use picajit::interp::pica::float::FloatMode;
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{GeometryState, Registers, Uniforms};
use picajit_jit::{compile, Backend, CompiledShader, Error, HostFeatures, JitExit};
use picajit_testkit::testgen::TestCase;
use std::cell::Cell;

thread_local! {
    static BACKEND: Cell<Backend> = const { Cell::new(Backend::X64) };
}

/// The backend the shared cases of this thread compile for (each test runs on its own
/// thread; [`with_backend`] sets it).
pub fn backend() -> Backend {
    BACKEND.with(|b| b.get())
}

/// Run `f` with [`backend`] returning `b`.
pub fn with_backend<R>(b: Backend, f: impl FnOnce() -> R) -> R {
    let old = BACKEND.with(|c| c.replace(b));
    let r = f();
    BACKEND.with(|c| c.set(old));
    r
}

/// A compiled shader with the program and float mode it was compiled from: what the batch
/// and point-run checks run on the interpreter beside it.
pub struct Compiled<'p> {
    pub shader: CompiledShader,
    pub program: &'p Program,
    pub mode: FloatMode,
}

impl std::ops::Deref for Compiled<'_> {
    type Target = CompiledShader;
    fn deref(&self) -> &CompiledShader {
        &self.shader
    }
}

/// How one differential run went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled code finished and matched the interpreter.
    Matched,
    /// Compiled code deopted and the interpreter reported an error (as it must).
    Deopted,
    /// The program was not compiled.
    Unsupported,
}

// Not every test binary that includes this module uses each of these.
#[allow(unused_imports)]
pub use picajit_testkit::compare::{assert_same_state, gs_bits, listing, reg_bits};
pub use picajit_testkit::run::{run_compiled, run_one};

/// Compile for [`backend`] with `features` and compare against the interpreter.
pub fn check_with(
    program: &Program,
    uniforms: &Uniforms,
    inputs: &[[f32; 4]; 16],
    mode: FloatMode,
    budget: u64,
    features: HostFeatures,
) -> Outcome {
    let shader = match compile(program, mode, backend(), features) {
        Ok(s) => s,
        Err(Error::Unsupported(_)) => return Outcome::Unsupported,
        Err(e) => panic!("{e}\n{}", listing(program)),
    };
    check_shader(&shader, program, uniforms, inputs, mode, budget)
}

/// Compare an already compiled shader against the interpreter.
pub fn check_shader(
    shader: &CompiledShader,
    program: &Program,
    uniforms: &Uniforms,
    inputs: &[[f32; 4]; 16],
    mode: FloatMode,
    budget: u64,
) -> Outcome {
    let mut init = Registers::default();
    init.input = *inputs;
    check_regs(shader, program, uniforms, &init, mode, budget)
}

/// Compare from arbitrary initial registers (a0, aL, temporaries…).
pub fn check_regs(
    shader: &CompiledShader,
    program: &Program,
    uniforms: &Uniforms,
    init: &Registers,
    mode: FloatMode,
    budget: u64,
) -> Outcome {
    let interp = Interpreter::new(program, mode);
    let geometry = program.kind() == ShaderKind::Geometry;
    let mut r1 = init.clone();
    let mut r2 = r1.clone();
    let mut g1 = GeometryState::default();
    let mut g2 = GeometryState::default();
    let e1: Result<RunInfo, ExecError> =
        interp.run(&mut r1, uniforms, geometry.then_some(&mut g1), budget);
    let gs2 = geometry.then_some(&mut g2);
    let e2 = run_compiled(shader, &mut r2, uniforms, gs2, budget);
    let ctx = || {
        format!(
            "{} mode {mode:?}, budget {budget}\n{}\n{}{}",
            shader.backend(),
            listing(program),
            shader.analysis(),
            emulator_note()
        )
    };
    match e2 {
        Ok(info2) => {
            let info1 = match &e1 {
                Ok(i) => *i,
                Err(e) => panic!("jit finished but interpreter failed: {e}\n{}", ctx()),
            };
            assert_eq!(info1, info2, "instruction counts differ\n{}", ctx());
            // (Without geometry, both geometry states stay the default.)
            assert_same_state("jit", (&r1, &g1), (&r2, &g2), &ctx);
            Outcome::Matched
        }
        Err(JitExit::Deopt { .. }) | Err(JitExit::Budget) => {
            let emit_full = g1.emitted.len() >= 64;
            assert!(
                e1.is_err() || emit_full,
                "jit deopted ({e2:?}) but the interpreter finished\n{}",
                ctx()
            );
            // A stopped run leaves everything as it found it, which is what lets `run` hand
            // the same state to the interpreter without a snapshot of its own.
            let what = format!("not restored after {e2:?}");
            assert_same_state(&what, (init, &GeometryState::default()), (&r2, &g2), &ctx);
            // The fallback path must reproduce the interpreter exactly.
            let mut r3 = init.clone();
            let mut g3 = GeometryState::default();
            let gs3 = geometry.then_some(&mut g3);
            let e3 = run_one(shader, &mut r3, uniforms, gs3, budget);
            assert_eq!(e1, e3, "fallback result differs\n{}", ctx());
            assert_same_state("fallback", (&r1, &g1), (&r3, &g3), &ctx);
            Outcome::Deopted
        }
        Err(other) => panic!("unexpected jit exit {other:?}\n{}", ctx()),
    }
}

/// [`check_case_with`] with the detected host features.
pub fn check_case(case: &TestCase, budget: u64) -> Outcome {
    check_case_with(case, budget, HostFeatures::detect())
}

/// [`check_case`] with explicit CPU features (to test the lower tiers on a capable host).
pub fn check_case_with(case: &TestCase, budget: u64, features: HostFeatures) -> Outcome {
    check_with(
        &case.program,
        &case.uniforms,
        &case.inputs,
        case.mode,
        budget,
        features,
    )
}

/// The emulator's last failure on this thread, for failure messages.
#[cfg(not(target_arch = "aarch64"))]
pub fn emulator_note() -> String {
    match picajit_jit::testing::a64::last_error() {
        Some(e) => format!("\nlast emulator error: {e}"),
        None => String::new(),
    }
}

/// AArch64 hosts run AArch64 code natively: there is no emulator to report on.
#[cfg(target_arch = "aarch64")]
pub fn emulator_note() -> String {
    String::new()
}
