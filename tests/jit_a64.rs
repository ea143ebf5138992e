//! Differential tests of the AArch64 JIT against the interpreter, bit for bit: the shared
//! cases of `tests/jit_common/cases.rs` (every opcode and operand shape, special values,
//! control flow, geometry shaders, batches, cache, disassembly), the example shaders, and named
//! regression tests of mismatches found while bringing the backend up. On x86-64 hosts the code
//! runs under the unicorn emulator (the `emulate-a64` feature, always on for tests), through
//! the same `run`/`try_run`/`run_batch` calls as native code.
#![cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]

#[macro_use]
#[path = "jit_common/cases.rs"]
mod cases;
mod jit_common;

use cases::{full, io_binary as binary, io_mad, program, MODES};
use jit_common::{check_regs, run_compiled, Outcome};
use picajit::interp::pica::exec::Interpreter;
use picajit::interp::pica::float::{FloatMode, F24};
use picajit::interp::pica::isa::{DstReg, Instruction, Opcode, RelIndex, SrcReg};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{Registers, Uniforms};
use picajit_jit::{compile, Backend, CompiledShader, HostFeatures, Invocation};

run_all!(Backend::A64);

/// `instr; END`, a vertex shader with the [`full`] descriptor.
fn single(instr: Instruction) -> Program {
    program(&[instr, Instruction::End], &[full()], ShaderKind::Vertex)
}

/// Run `instr; END` on v0 = `a`, v1 = `b` (f32 bit patterns) in `mode` and compare.
fn check_pair(instr: Instruction, mode: FloatMode, a: [u32; 4], b: [u32; 4]) {
    let p = single(instr);
    let shader = jit(&p, mode);
    let mut r = Registers::default();
    r.input[0] = a.map(f32::from_bits);
    r.input[1] = b.map(f32::from_bits);
    let o = check_regs(&shader, &p, &Uniforms::default(), &r, mode, 10);
    assert_eq!(o, Outcome::Matched);
}

#[test]
fn aarch64_code_runs_here() {
    let p = single(binary(Opcode::Add));
    let shader = jit(&p, FloatMode::default());
    assert!(shader.is_executable());
    assert_eq!(shader.is_emulated(), cfg!(not(target_arch = "aarch64")));
    let mut r = Registers::default();
    r.input[0] = [1.0, 2.0, 3.0, 4.0];
    r.input[1] = [0.5, 0.25, -3.0, 1.0];
    let info = run_compiled(&shader, &mut r, &Uniforms::default(), None, 10)
        .unwrap_or_else(|e| panic!("{e:?}{}", jit_common::emulator_note()));
    assert_eq!(info.instructions, 2);
    assert_eq!(r.output[0], [1.5, 2.25, 0.0, 5.0]);
}

/// Each example shader (`examples/*.pica`, assembled with `picajit::pica::asm::assemble`, with the
/// benchmark's realistic uniforms and inputs) runs compiled, without a single fallback, and
/// equals the interpreter bit for bit, in every mode.
#[test]
fn examples_run_compiled_and_match() {
    use picajit::pica::bench::{Workload, EXAMPLES};
    let on_disk =
        std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "pica"))
            })
            .count();
    assert_eq!(
        EXAMPLES.len(),
        on_disk,
        "every example is in bench::EXAMPLES"
    );
    for w in Workload::examples().unwrap() {
        for mode in MODES {
            let shader = compile(&w.program, mode, Backend::A64, HostFeatures::detect())
                .unwrap_or_else(|e| panic!("{}: {e}", w.name));
            let u = w.uniforms(mode);
            let geometry = w.kind() == ShaderKind::Geometry;
            for input in w.inputs(mode, 6) {
                let mut r1 = Registers::default();
                r1.input = input;
                let mut r2 = r1.clone();
                let mut g1 = picajit::interp::pica::state::GeometryState::default();
                let mut g2 = picajit::interp::pica::state::GeometryState::default();
                let want = Interpreter::new(&w.program, mode)
                    .run(&mut r1, &u, geometry.then_some(&mut g1), 100_000)
                    .unwrap();
                let got = run_compiled(&shader, &mut r2, &u, geometry.then_some(&mut g2), 100_000)
                    .unwrap_or_else(|e| {
                        panic!(
                            "{} {mode:?} fell back: {e:?}{}",
                            w.name,
                            jit_common::emulator_note()
                        )
                    });
                assert_eq!(want, got, "{}", w.name);
                assert!(
                    jit_common::reg_bits(&r1) == jit_common::reg_bits(&r2),
                    "{} {mode:?}",
                    w.name
                );
                assert!(
                    jit_common::gs_bits(&g1) == jit_common::gs_bits(&g2),
                    "{}",
                    w.name
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Regression tests: mismatches found while bringing the backend up.

/// F32 MUL whose exact product, `(2^24 - 1)·2^-150 = 2^-126 - 2^-150`, has 24 significant bits
/// just below the smallest normal: the model keeps it exactly and then flushes it (+0), but
/// narrowing the rounded f64 with FCVTN rounded it again onto the subnormal grid, a tie that
/// went up to 2^-126. Found by `special_value_matrix` (DP3, F32).
#[test]
fn f32_product_just_below_min_normal_is_flushed_not_double_rounded() {
    let (a, b) = (0x3F40_0000u32, 0x00AA_AAAA); // 0.75 · 5592405·2^-148
    for op in [Opcode::Mul, Opcode::Dp3, Opcode::Dp4, Opcode::Dph] {
        check_pair(binary(op), FloatMode::F32, [a; 4], [b; 4]);
        check_pair(binary(op), FloatMode::F32, [b; 4], [a | 0x8000_0000; 4]);
    }
    assert_eq!(f32_mul_compiled(a, b), 0);
}

/// o0.x of `mul o0, v0, v1` with v0 = `a`, v1 = `b` (f32 bit patterns, every component) in
/// F32 mode, on compiled code only.
fn f32_mul_compiled(a: u32, b: u32) -> u32 {
    let p = single(binary(Opcode::Mul));
    let mut r = Registers::default();
    r.input[0] = [f32::from_bits(a); 4];
    r.input[1] = [f32::from_bits(b); 4];
    jit(&p, FloatMode::F32)
        .invoke(
            Invocation::one(&Uniforms::default(), &mut r)
                .budget(10)
                .compiled_only(),
        )
        .unwrap();
    r.output[0][0].to_bits()
}

/// The companion of the above: `(2^25 - 1)·2^-151 = 2^-126 - 2^-151` is a tie at 24 bits that
/// rounds to even, up to 2^-126, which is kept.
#[test]
fn f32_product_tie_below_min_normal_rounds_up_to_it() {
    let (a, b) = (0x3F78_0000u32, 0x0084_2108); // 0.96875 · 1082401·2^-146
    check_pair(binary(Opcode::Mul), FloatMode::F32, [a; 4], [b; 4]);
    assert_eq!(f32_mul_compiled(a, b), 0x0080_0000);
}

/// MAX/MIN return the second operand when either is NaN, unlike FMAX/FMIN; subnormal patterns
/// compare raw (FPCR.FZ stays 0), in every mode.
#[test]
fn max_min_nan_and_subnormal_rules() {
    let nan = 0x7FC0_0000u32;
    let sub = F24::from_bits(0x00FFFF).to_f32().to_bits();
    for mode in MODES {
        for op in [Opcode::Max, Opcode::Min, Opcode::Sge, Opcode::Slt] {
            check_pair(binary(op), mode, [0, nan, sub, 0xFF80_0000], [nan, 0, 0, 0]);
            check_pair(
                binary(op),
                mode,
                [sub, 0x8000_0000, 0, nan],
                [0, 0, 0x8000_0000, nan],
            );
        }
    }
}

/// MAD is not fused: `(1+2^-16)^2 - (1+2^-15)` is +0 unfused, 2^-32 fused (pf §11C).
#[test]
fn mad_is_not_fused() {
    let one_ulp = F24::from_bits(0x3F0001).to_f32().to_bits();
    let minus = F24::from_bits(0xBF0002).to_f32().to_bits();
    let p = single(io_mad());
    for mode in MODES {
        let shader = jit(&p, mode);
        let mut r = Registers::default();
        r.input[0] = [f32::from_bits(one_ulp); 4];
        r.input[1] = [f32::from_bits(one_ulp); 4];
        r.input[2] = [f32::from_bits(minus); 4];
        assert_eq!(
            check_regs(&shader, &p, &Uniforms::default(), &r, mode, 10),
            Outcome::Matched
        );
        run_compiled(&shader, &mut r, &Uniforms::default(), None, 10).unwrap();
        assert_eq!(r.output[0][0].to_bits(), 0, "{mode:?}");
    }
}

/// Generated code installs its own FPCR and restores the caller's (natively: the caller's
/// rounding mode must not leak in; emulated: the emulator starts each call from FPCR = 0, so
/// this checks the RTZ mode is installed by the code itself).
#[test]
fn fpcr_mode_is_installed_by_the_code() {
    let p = single(binary(Opcode::Mul));
    let mut r = Registers::default();
    r.input[0] = [F24::from_bits(0x3F0001).to_f32(); 4];
    r.input[1] = [F24::from_bits(0x3FC000).to_f32(); 4];
    let mut outs = vec![];
    for mode in MODES {
        let mut rr = r.clone();
        jit(&p, mode)
            .invoke(
                Invocation::one(&Uniforms::default(), &mut rr)
                    .budget(10)
                    .compiled_only(),
            )
            .unwrap();
        outs.push(rr.output[0][0].to_bits());
    }
    assert_eq!(
        F24::from_f32_exact(f32::from_bits(outs[0])).unwrap().bits(),
        0x3FC001
    );
    assert_eq!(
        F24::from_f32_exact(f32::from_bits(outs[1])).unwrap().bits(),
        0x3FC002
    );
}

/// Many distinct programs on one thread's emulator: it flushes every translation when new
/// code is loaded and is replaced by a fresh instance every few hundred programs (so that a
/// long run keeps a bounded footprint); results stay the interpreter's across both, also when
/// the same program runs again after a replacement.
#[test]
fn many_programs_through_one_emulator_thread() {
    let mode = FloatMode::default();
    let mut u = Uniforms::default();
    for c in 0..96 {
        u.set_float_raw(c, [c as f32, 0.5, -2.0, 1.0]);
    }
    let shaders: Vec<(Program, CompiledShader)> = (0..600)
        .map(|k| {
            let p = program(
                &[
                    Instruction::Binary {
                        op: if k % 2 == 0 { Opcode::Add } else { Opcode::Mul },
                        dst: DstReg::Output((k % 7) as u8),
                        src1: SrcReg::Const((k % 96) as u8),
                        src2: SrcReg::Input((k % 3) as u8),
                        rel: RelIndex::None,
                        desc: 0,
                    },
                    Instruction::End,
                ],
                &[full()],
                ShaderKind::Vertex,
            );
            let s = jit(&p, mode);
            (p, s)
        })
        .collect();
    let mut init = Registers::default();
    init.input[0] = [1.5, 2.0, 3.0, -4.0];
    init.input[1] = [0.25, -1.0, 8.0, 0.0];
    init.input[2] = [-7.0, 1.0, 0.5, 2.0];
    for round in 0..2 {
        for (k, (p, s)) in shaders.iter().enumerate() {
            if round == 1 && k % 50 != 0 {
                continue;
            }
            check_regs(s, p, &u, &init, mode, 100);
        }
    }
}
