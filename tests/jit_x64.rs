//! Systematic differential tests of the x86-64 JIT against the interpreter, bit for bit: the
//! shared cases of `tests/jit_common/cases.rs` (every opcode and operand shape, special
//! values, control flow, geometry shaders, batches, cache, disassembly) plus what only x86-64
//! has (W^X mapping, MXCSR handling, the SSE-only tier).
#![cfg(target_arch = "x86_64")]
// `jit` (from `run_all!`) serves only the Linux-only mapping test below.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

#[macro_use]
#[path = "jit_common/cases.rs"]
mod cases;
mod jit_common;

use jit_common::listing;
use picajit::interp::pica::exec::Interpreter;
use picajit::interp::pica::float::FloatMode;
use picajit::interp::pica::program::ShaderKind;
use picajit::interp::pica::state::Registers;
use picajit_jit::{compile, Backend, CodeCache, CompiledShader, HostFeatures, Invocation};
use picajit_testkit::testgen::{generate, Options, TestCase};

run_all!(Backend::X64);

#[cfg(target_os = "linux")]
#[test]
fn code_is_never_writable_and_executable() {
    use cases::{alu_mark, full, program};
    use picajit::interp::pica::isa::Instruction;
    let full = full();
    let p = program(
        &[alu_mark(1), Instruction::End],
        &[full],
        ShaderKind::Vertex,
    );
    let shader = jit(&p, FloatMode::default());
    let addr = shader.exec_address().unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let line = maps
        .lines()
        .find(|l| {
            let range = l.split(' ').next().unwrap();
            let (lo, hi) = range.split_once('-').unwrap();
            let (lo, hi) = (
                usize::from_str_radix(lo, 16).unwrap(),
                usize::from_str_radix(hi, 16).unwrap(),
            );
            (lo..hi).contains(&addr)
        })
        .expect("mapping of the code");
    let perms = line.split(' ').nth(1).unwrap();
    assert!(perms.starts_with("r-x"), "{line}");
}

#[test]
fn compiled_shaders_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<CompiledShader>();
    check::<CodeCache>();
}

/// The random programs of seeds `0..n` (default options) that compile for x86-64.
fn generated_x64(n: u64) -> impl Iterator<Item = (u64, TestCase, CompiledShader)> {
    (0..n).filter_map(|seed| {
        let case = generate(seed, &Options::default());
        let features = HostFeatures::detect();
        let shader = compile(&case.program, case.mode, Backend::X64, features).ok()?;
        Some((seed, case, shader))
    })
}

/// A caller whose MXCSR control bits are the mode's already (the generated code then loads
/// nothing, `jit/src/x64/masm.rs` "Float environment"), with exception flags set or not,
/// gets the interpreter's results on both entries and its control bits back.
#[test]
#[allow(deprecated)]
fn caller_mxcsr_equal_to_the_mode_is_kept() {
    use picajit::interp::pica::float::Rounding;
    use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
    for (seed, case, shader) in generated_x64(60) {
        let control = match case.mode {
            FloatMode::F24(Rounding::TowardZero) => 0x7F80,
            FloatMode::F24(Rounding::NearestEven) => 0x1F80,
            FloatMode::F32 => 0x9F80,
        };
        let mut want = Registers::default();
        want.input = case.inputs;
        let expected = Interpreter::new(&case.program, case.mode)
            .run(&mut want, &case.uniforms, None, 4000)
            .is_ok();
        for flags in [0u32, 0x21, 0x3F] {
            // SAFETY: changes only this thread's SSE control register; restored below.
            let saved = unsafe { _mm_getcsr() };
            unsafe { _mm_setcsr(control | flags) };
            let mut r = Registers::default();
            r.input = case.inputs;
            let got = jit_common::run_compiled(&shader, &mut r, &case.uniforms, None, 4000);
            let mut out = [[[0.0f32; 4]; 16]; 3];
            let batch = shader.invoke(
                Invocation::batch(&case.uniforms, &[case.inputs; 3], &mut out).budget(4000),
            );
            let after = unsafe { _mm_getcsr() };
            unsafe { _mm_setcsr(saved) };
            assert_eq!(
                after & 0xFFC0,
                control,
                "seed {seed}: MXCSR control bits kept"
            );
            if got.is_ok() && expected {
                assert_eq!(
                    jit_common::reg_bits(&r),
                    jit_common::reg_bits(&want),
                    "seed {seed}, flags {flags:#x}"
                );
            }
            if batch.is_ok() && expected && case.program.kind() == ShaderKind::Vertex {
                for row in &out {
                    assert_eq!(
                        row.map(|l| l.map(f32::to_bits)),
                        want.output.map(|l| l.map(f32::to_bits)),
                        "seed {seed}, flags {flags:#x}: batch entry"
                    );
                }
            }
        }
    }
}

/// Generated code installs its own float environment and gives the caller's back.
#[test]
#[allow(deprecated)]
fn caller_mxcsr_is_ignored_and_restored() {
    use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
    for (seed, case, shader) in generated_x64(30) {
        // Round up, flush-to-zero and denormals-are-zero: everything a careless caller could set.
        let hostile = 0x1F80 | 0x4000 | 0x8000 | 0x0040;
        // SAFETY: changes only this thread's SSE control register; restored below.
        let saved = unsafe { _mm_getcsr() };
        unsafe { _mm_setcsr(hostile) };
        let mut r = Registers::default();
        r.input = case.inputs;
        let got = jit_common::run_compiled(&shader, &mut r, &case.uniforms, None, 4000);
        let after = unsafe { _mm_getcsr() };
        unsafe { _mm_setcsr(saved) };
        assert_eq!(
            after & 0xFFC0,
            hostile & 0xFFC0,
            "MXCSR control bits restored"
        );
        if got.is_ok() {
            let mut r2 = Registers::default();
            r2.input = case.inputs;
            Interpreter::new(&case.program, case.mode)
                .run(&mut r2, &case.uniforms, None, 4000)
                .unwrap();
            assert_eq!(
                jit_common::reg_bits(&r),
                jit_common::reg_bits(&r2),
                "seed {seed}"
            );
        }
    }
}

/// The batch entry (which keeps its working registers in its own stack frame) under hostile
/// MXCSR values, with sticky exception flags set: every row equals the interpreter's result
/// bit for bit, and the caller's control bits come back.
#[test]
#[allow(deprecated)]
fn caller_mxcsr_is_ignored_and_restored_by_the_batch_entry() {
    use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
    // Toward zero + DAZ + every flag; round down + FTZ + flags; round up + FTZ + DAZ.
    let hostile = [
        0x7FC0 | 0x3F,
        0x1F80 | 0x2000 | 0x8000 | 0x21,
        0x1F80 | 0x4000 | 0x8040,
    ];
    for (seed, case, shader) in generated_x64(40) {
        if case.program.kind() != ShaderKind::Vertex {
            continue;
        }
        let mut want = Registers::default();
        want.input = case.inputs;
        if Interpreter::new(&case.program, case.mode)
            .run(&mut want, &case.uniforms, None, 4000)
            .is_err()
        {
            continue;
        }
        for &csr in &hostile {
            let mut out = [[[0.0f32; 4]; 16]; 3];
            // SAFETY: changes only this thread's SSE control register; restored below.
            let saved = unsafe { _mm_getcsr() };
            unsafe { _mm_setcsr(csr) };
            let batch = shader.invoke(
                Invocation::batch(&case.uniforms, &[case.inputs; 3], &mut out).budget(4000),
            );
            let after = unsafe { _mm_getcsr() };
            unsafe { _mm_setcsr(saved) };
            assert_eq!(
                after & 0xFFC0,
                csr & 0xFFC0,
                "seed {seed}, MXCSR {csr:#x}: control bits restored"
            );
            assert!(batch.is_ok(), "seed {seed}: {batch:?}");
            for row in &out {
                assert_eq!(
                    row.map(|l| l.map(f32::to_bits)),
                    want.output.map(|l| l.map(f32::to_bits)),
                    "seed {seed}, MXCSR {csr:#x}: batch entry"
                );
            }
        }
    }
}

/// The SSE4.1 tier (no VEX forms: the float recipes' copy-and-operate and xor-select
/// sequences of `jit/src/x64/masm.rs`) against the interpreter on random programs in every
/// float mode; the shared cases run with the detected features (AVX on the test machines).
#[test]
fn sse_only_tier_matches_the_interpreter() {
    use picajit_testkit::testgen::{generate, Options};
    let mut compared = 0;
    for seed in 0..500 {
        let case = generate(seed, &Options::default());
        let Ok(shader) = compile(&case.program, case.mode, Backend::X64, HostFeatures::SSE41)
        else {
            continue;
        };
        let mut got = Registers::default();
        got.input = case.inputs;
        let ran = jit_common::run_compiled(&shader, &mut got, &case.uniforms, None, 4000);
        let mut want = Registers::default();
        want.input = case.inputs;
        let expected =
            Interpreter::new(&case.program, case.mode).run(&mut want, &case.uniforms, None, 4000);
        assert_eq!(ran.is_ok(), expected.is_ok(), "seed {seed}");
        if ran.is_ok() {
            assert_eq!(
                jit_common::reg_bits(&got),
                jit_common::reg_bits(&want),
                "seed {seed}\n{}",
                listing(&case.program)
            );
            compared += 1;
        }
    }
    assert!(compared > 250, "only {compared} programs ran");
}
