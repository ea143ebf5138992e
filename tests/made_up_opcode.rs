//! Adding an opcode takes three places: its opcode-table row (`interp/src/isa/opcode.rs`), its
//! semantics (`interp/src/exec/mod.rs`, on the float model) and its lowering
//! (`jit/src/lower/ops.rs`). The `made-up-opcode` feature adds SUB (code 0x14, `a - b`) in
//! exactly those three places; this file proves that the assembler, both disassemblers, the
//! interpreter, the analysis and both JITs (per-vertex and multi-vertex code) then handle it
//! with nothing else changed, and
//! that the shared differential cases (which draw their opcodes from the table) cover it.
//!
//! Run with `cargo test --features made-up-opcode --test made_up_opcode` (`scripts/test.sh`
//! does).

#[macro_use]
#[path = "jit_common/cases.rs"]
#[allow(unused_macros)]
mod cases;
mod jit_common;

use picajit::interp::pica::exec::Interpreter;
use picajit::interp::pica::float::{self, FloatMode};
use picajit::interp::pica::isa::{decode, format_instruction, Format, Instruction, Opcode, Unit};
use picajit::interp::pica::program::Program;
use picajit::interp::pica::state::{Registers, Uniforms};
use picajit::pica::asm::{assemble, disassemble, SourceFile};
use picajit::pica::engine::program_from_shbin;
use picajit_jit::{compile, Backend, HostFeatures, Invocation};

use picajit_testkit::testgen::MODES;

const SOURCE: &str = "
.fvec k
.proc main
    mov r0, v1
    sub o0, v0, r0
    sub o1.xz, k, -r0.wzyx
    sub r2.yw, -r0.y, v0
    mov o2, r2
    end
.end
";

fn program() -> Program {
    let shbin = assemble(&[SourceFile {
        name: "sub.vsh",
        text: SOURCE,
    }])
    .unwrap_or_else(|e| panic!("{e}"));
    program_from_shbin(&shbin, 0)
        .unwrap_or_else(|e| panic!("{e}"))
        .0
}

#[test]
fn the_table_row_defines_the_opcode() {
    assert_eq!(Opcode::from_code(0x14), Some(Opcode::Sub));
    assert_eq!(Opcode::from_mnemonic("SUB"), Some(Opcode::Sub));
    assert_eq!(Opcode::Sub.unit(), Unit::Sub);
    assert!(Opcode::with_format(Format::One).any(|op| op == Opcode::Sub));
    assert!(Opcode::arithmetic().any(|op| op == Opcode::Sub));
}

#[test]
fn assembler_and_disassemblers_handle_it() {
    let p = program();
    let first = decode(p.code()[1]);
    assert_eq!(first.opcode(), Some(Opcode::Sub));
    assert!(matches!(first, Instruction::Binary { .. }));
    let line = format_instruction(&first, p.opdescs());
    assert!(line.starts_with("sub"), "{line}");
    // The source-level disassembly re-assembles to the same words.
    let shbin = assemble(&[SourceFile {
        name: "sub.vsh",
        text: SOURCE,
    }])
    .unwrap_or_else(|e| panic!("{e}"));
    let text = disassemble(&shbin);
    assert!(text.contains("sub o0, v0, r0"), "{text}");
    let again = assemble(&[SourceFile {
        name: "again.vsh",
        text: &text,
    }])
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(again.code, shbin.code);
}

fn values(mode: FloatMode) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.1,
        3.25e10,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        2f32.powi(-62),
        2f32.powi(63),
    ];
    v.retain(|x| !matches!(mode, FloatMode::F24(_)) || x.abs() < 2f32.powi(64) || !x.is_finite());
    v.iter()
        .map(|&x| match mode {
            FloatMode::F24(r) => float::F24::from_f32(x, r).to_f32(),
            FloatMode::F32 => x,
        })
        .collect()
}

#[test]
fn the_interpreter_runs_its_semantics() {
    let p = program();
    for mode in MODES {
        let interp = Interpreter::new(&p, mode);
        for &a in &values(mode) {
            for &b in &values(mode) {
                let mut regs = Registers::default();
                regs.input[0] = [a, b, a, b];
                regs.input[1] = [b, a, -b, -a];
                interp
                    .run(&mut regs, &Uniforms::default(), None, 1000)
                    .unwrap();
                for l in 0..4 {
                    let (x, y) = (regs.input[0][l], regs.input[1][l]);
                    let want = float::add(x, -y, mode);
                    let got = regs.output[0][l];
                    assert_eq!(got.to_bits(), want.to_bits(), "{mode:?}: {x} - {y}");
                }
            }
        }
    }
}

fn jit_matches_interpreter(backend: Backend) {
    let p = program();
    for mode in MODES {
        let mut uniforms = Uniforms::default();
        for row in 0..96 {
            uniforms.set_float_f32(row, [0.5, -2.0, f32::INFINITY, 1e-30], mode);
        }
        let shader = compile(&p, mode, backend, HostFeatures::detect())
            .unwrap_or_else(|e| panic!("{backend:?} {mode:?}: {e}"));
        let vals = values(mode);
        for (i, &a) in vals.iter().enumerate() {
            let mut inputs = [[0.0; 4]; 16];
            inputs[0] = [
                a,
                vals[(i + 1) % vals.len()],
                vals[(i + 3) % vals.len()],
                -a,
            ];
            inputs[1] = [
                vals[(i + 5) % vals.len()],
                a,
                -a,
                vals[(i + 7) % vals.len()],
            ];
            let outcome = jit_common::with_backend(backend, || {
                jit_common::check_shader(&shader, &p, &uniforms, &inputs, mode, 1000)
            });
            assert_eq!(
                outcome,
                jit_common::Outcome::Matched,
                "{backend:?} {mode:?}"
            );
        }
    }
}

/// The one lowering (`jit/src/lower/ops.rs`) gives SUB lane code too: batches of it run on
/// the multi-vertex code, every group finishing there, bit-exact with the interpreter per
/// vertex.
fn lanes_match_interpreter(backend: Backend) {
    let p = program();
    for mode in MODES {
        let shader = compile(&p, mode, backend, HostFeatures::detect())
            .unwrap_or_else(|e| panic!("{backend:?} {mode:?}: {e}"));
        if backend == Backend::X64 && !HostFeatures::detect().contains(HostFeatures::AVX2) {
            // No lane code without AVX2: nothing to prove on this host.
            return;
        }
        assert_eq!(shader.batch_ineligibility(), None, "{backend:?} {mode:?}");
        let mut uniforms = Uniforms::default();
        for row in 0..96 {
            uniforms.set_float_f32(row, [0.5, -2.0, f32::INFINITY, 1e-30], mode);
        }
        let vals = values(mode);
        let n = vals.len();
        // Every ordered pair of special values, in groups of eight.
        let mut inputs = Vec::new();
        for i in 0..n {
            for j in 0..n {
                let mut row = [[0.0f32; 4]; 16];
                row[0] = [vals[i], vals[j], vals[(i + j) % n], -vals[i]];
                row[1] = [vals[j], vals[i], -vals[j], vals[(i + 2 * j + 1) % n]];
                inputs.push(row);
            }
        }
        inputs.truncate(inputs.len() / 8 * 8);
        let interp = Interpreter::new(&p, mode);
        let want: Vec<_> = inputs
            .iter()
            .map(|row| {
                let mut regs = Registers::default();
                regs.input = *row;
                interp.run(&mut regs, &uniforms, None, 1000).unwrap();
                regs.output
            })
            .collect();
        let mut got = vec![[[f32::NAN; 4]; 16]; inputs.len()];
        let before = shader.batch_stats();
        shader
            .invoke(Invocation::batch(&uniforms, &inputs, &mut got).budget(1000))
            .unwrap_or_else(|e| panic!("{backend:?} {mode:?}: {e:?}"));
        let after = shader.batch_stats();
        assert_eq!(
            after.groups - before.groups,
            inputs.len() as u64 / 8,
            "{backend:?} {mode:?}: every group finishes on lane code"
        );
        assert_eq!(after.fallbacks, before.fallbacks, "{backend:?} {mode:?}");
        for (k, (w, g)) in want.iter().zip(&got).enumerate() {
            for o in 0..3 {
                let (wb, gb) = (w[o].map(f32::to_bits), g[o].map(f32::to_bits));
                assert_eq!(
                    wb, gb,
                    "{backend:?} {mode:?} vertex {k} o{o}: {:?}",
                    inputs[k]
                );
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x64_jit_matches_the_interpreter() {
    jit_matches_interpreter(Backend::X64);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x64_lane_code_matches_the_interpreter() {
    lanes_match_interpreter(Backend::X64);
}

#[test]
fn a64_jit_matches_the_interpreter() {
    jit_matches_interpreter(Backend::A64);
}

#[test]
fn a64_lane_code_matches_the_interpreter() {
    lanes_match_interpreter(Backend::A64);
}

// The shared differential cases draw their two-source opcodes from the table, so they run
// SUB with every operand shape and every pair of special values on both JITs.
#[cfg(target_arch = "x86_64")]
#[test]
fn shared_cases_cover_it_on_x64() {
    jit_common::with_backend(Backend::X64, cases::every_binary_opcode_every_operand_shape);
    jit_common::with_backend(Backend::X64, cases::special_value_matrix);
}

#[test]
fn shared_cases_cover_it_on_a64() {
    jit_common::with_backend(Backend::A64, cases::every_binary_opcode_every_operand_shape);
    jit_common::with_backend(Backend::A64, cases::special_value_matrix);
}
