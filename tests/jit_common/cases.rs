//! The systematic differential cases of the JIT backends, shared by `tests/jit_x64.rs` and
//! `tests/jit_a64.rs`: every opcode × source-register class × relative-address mode ×
//! swizzle/mask/negation shape, special-value operands in every float mode, every control-flow
//! shape, geometry shaders, batches, the code cache and disassembly. Each `pub fn` is one test
//! body; it compiles for [`backend()`], which the calling test sets ([`run_all!`] generates the
//! `#[test]` wrappers).

#![allow(dead_code)]

use crate::jit_common::{
    backend, check_regs, check_shader, emulator_note, listing, run_compiled, run_one, Outcome,
};
use picajit::interp::pica::exec::{ExecError, Interpreter};
use picajit::interp::pica::float::{FloatMode, F24};
use picajit::interp::pica::isa::{
    encode, CmpOp, CondOp, Condition, DstReg, Format, Instruction, Opcode, OperandDesc, RelIndex,
    SrcReg, Swizzle, WriteMask,
};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{GeometryState, Registers, Uniforms};
use picajit_jit::{compile, Backend, CodeCache, CompiledShader, HostFeatures, Invocation, JitExit};

/// `#[test]` wrappers running every shared case for one backend, and `jit`, which compiles
/// for that backend with the host's features (for the file's own tests).
macro_rules! run_all {
    ($backend:expr) => {
        fn jit(
            p: &picajit::interp::pica::program::Program,
            mode: picajit::interp::pica::float::FloatMode,
        ) -> picajit_jit::CompiledShader {
            $crate::cases::jit_for($backend, p, mode)
        }

        run_all!(@each $backend; every_binary_opcode_every_operand_shape, every_unary_opcode_every_operand_shape, mova_cmp_mad_every_operand_shape, special_value_matrix, mova_cmp_litp_boundaries, scalar_functions_sweep, flow_if_else_shapes, flow_if_ring_overflow, flow_loops, flow_calls, flow_jumps_and_ends, flow_errors_deopt_to_the_interpreter, budget_boundary_is_exact, geometry_emit_and_banks, geometry_runs_in_place_and_restores_on_deopt, batch_matches_per_vertex_interpreter, cache_reuses_identical_code_only, disassembly_interleaves_pica_instructions, harness_sees_mode_differences);
    };
    (@each $backend:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                $crate::jit_common::with_backend($backend, $crate::cases::$name);
            }
        )*
    };
}

pub use picajit_testkit::testgen::MODES;

pub fn program(instrs: &[Instruction], descs: &[u64], kind: ShaderKind) -> Program {
    let code = instrs
        .iter()
        .map(|i| encode(i).expect("encodable"))
        .collect();
    Program::new(code, descs.to_vec(), 0, kind).expect("valid program")
}

fn jit(p: &Program, mode: FloatMode) -> CompiledShader {
    jit_with(p, mode, HostFeatures::detect())
}

/// `p` compiled for `backend` with the host's features.
pub fn jit_for(backend: Backend, p: &Program, mode: FloatMode) -> CompiledShader {
    compile(p, mode, backend, HostFeatures::detect())
        .unwrap_or_else(|e| panic!("{e}\n{}", listing(p)))
}

fn jit_with(p: &Program, mode: FloatMode, f: HostFeatures) -> CompiledShader {
    compile(p, mode, backend(), f).unwrap_or_else(|e| panic!("{e}\n{}", listing(p)))
}

/// The host's features, and for x64 the same without AVX (the SSE-only encodings).
fn feature_tiers() -> Vec<HostFeatures> {
    let f = HostFeatures::detect();
    match backend() {
        Backend::X64 => vec![f, f.without(HostFeatures::AVX)],
        Backend::A64 => vec![f],
    }
}

pub fn desc(mask: u8, neg: [bool; 3], swz: [u8; 3]) -> u64 {
    OperandDesc::new(WriteMask(mask), neg, swz.map(Swizzle)).0
}

/// The descriptor that writes every component, unnegated and unswizzled.
pub fn full() -> u64 {
    desc(0xF, [false; 3], [0x1B; 3])
}

/// `op o0, v0, v1` (descriptor 0).
pub fn io_binary(op: Opcode) -> Instruction {
    Instruction::Binary {
        op,
        dst: DstReg::Output(0),
        src1: SrcReg::Input(0),
        src2: SrcReg::Input(1),
        rel: RelIndex::None,
        desc: 0,
    }
}

/// `op o0, v0` (descriptor 0).
pub fn io_unary(op: Opcode) -> Instruction {
    Instruction::Unary {
        op,
        dst: DstReg::Output(0),
        src: SrcReg::Input(0),
        rel: RelIndex::None,
        desc: 0,
    }
}

/// `mad o0, v0, v1, v2` (descriptor 0).
pub fn io_mad() -> Instruction {
    Instruction::Mad {
        op: Opcode::Mad,
        dst: DstReg::Output(0),
        src1: SrcReg::Input(0),
        src2: SrcReg::Input(1),
        src3: SrcReg::Input(2),
        rel: RelIndex::None,
        desc: 0,
    }
}

/// Special values of a mode, as register contents.
fn specials(mode: FloatMode) -> Vec<f32> {
    match mode {
        FloatMode::F24(_) => [
            0x000000u32,
            0x800000,
            0x000001,
            0x00FFFF,
            0x80FFFF,
            0x010000,
            0x810000,
            0x3F0000,
            0xBF0000,
            0x3E0000,
            0x400000,
            0x408000,
            0x3F5555,
            0x3F0001,
            0x3FC000,
            0x7EFFFF,
            0xFEFFFF,
            0x7E8000,
            0x7F0000,
            0xFF0000,
            0x7FFFFF,
            0x7F8000,
            0xFF0001,
            0x2E0000,
            0xAD0000,
            0xA10000,
            0x45FFFC,
            0xBB9999,
            0x460000,
            0x3EFFFF,
            0x5F0000,
            0x020000,
        ]
        .iter()
        .map(|&b| F24::from_bits(b).to_f32())
        .collect(),
        FloatMode::F32 => [
            0x0000_0000u32,
            0x8000_0000,
            0x0000_0001,
            0x807F_FFFF,
            0x0080_0000,
            0x8080_0000,
            0x0080_0001,
            0x3F80_0000,
            0xBF80_0000,
            0x3F00_0000,
            0x4040_0000,
            0x3EAA_AAAB,
            0x7F7F_FFFF,
            0xFF7F_FFFF,
            0x7F00_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0xFFFF_FFFF,
            0x7F80_0001,
            0x4F00_0000,
            0xCF00_0001,
            0x4EFF_FFFF,
            0x5F80_0000,
            0x2080_0000,
            0x3F80_0001,
            0x3DCC_CCCD,
            0x4B00_0001,
            0xC2FF_FE00,
            0x3F7F_FFFF,
            0x0100_0000,
            0x8100_0001,
        ]
        .iter()
        .map(|&b| f32::from_bits(b))
        .collect(),
    }
}

/// Registers and uniforms filled with special values, shifted by `k`.
fn fill(mode: FloatMode, k: usize) -> (Registers, Uniforms) {
    let s = specials(mode);
    let n = s.len();
    let mut r = Registers::default();
    for i in 0..16 {
        for l in 0..4 {
            r.input[i][l] = s[(k + i * 4 + l) % n];
            r.temp[i][l] = s[(k * 7 + i * 5 + l * 3 + 1) % n];
        }
    }
    let mut u = Uniforms::default();
    for i in 0..96 {
        let row = [0, 1, 2, 3].map(|l| s[(k * 3 + i * 4 + l + 2) % n]);
        u.set_float_raw(i, row);
    }
    (r, u)
}

/// Two-source opcodes from the opcode table: the wide-first ones, then the I-forms.
fn binary() -> Vec<Opcode> {
    Opcode::with_format(Format::One)
        .chain(Opcode::with_format(Format::OneI))
        .collect()
}

/// One-source opcodes with a destination register (MOVA writes a0).
fn unary() -> Vec<Opcode> {
    Opcode::with_format(Format::OneU)
        .filter(|&op| op != Opcode::Mova)
        .collect()
}

/// Wide-slot sources: every class, and every relative-address mode on constants.
fn wide_sources() -> Vec<(SrcReg, RelIndex)> {
    vec![
        (SrcReg::Input(3), RelIndex::None),
        (SrcReg::Input(5), RelIndex::A0X),
        (SrcReg::Temp(2), RelIndex::None),
        (SrcReg::Temp(7), RelIndex::AL),
        (SrcReg::Const(4), RelIndex::None),
        (SrcReg::Const(95), RelIndex::None),
        (SrcReg::Const(10), RelIndex::A0X),
        (SrcReg::Const(40), RelIndex::A0Y),
        (SrcReg::Const(90), RelIndex::AL),
    ]
}

/// Operand-descriptor shapes: masks, swizzles, negations.
fn shapes() -> Vec<u64> {
    vec![
        desc(0xF, [false; 3], [0x1B; 3]),
        desc(0xF, [true, false, true], [0x1B, 0xE4, 0x00]),
        desc(0x8, [false, true, false], [0x55, 0x1B, 0xAA]),
        desc(0x5, [true, true, false], [0xFF, 0x39, 0x1B]),
        desc(0xA, [false, false, true], [0x1B, 0x00, 0x93]),
        desc(0x0, [false; 3], [0x1B; 3]),
        desc(0x7, [true; 3], [0x4E, 0xB1, 0x6C]),
        desc(0x1, [false; 3], [0xD8, 0x27, 0x1B]),
    ]
}

/// a0/aL values exercising the relative-addressing rules (in range, masked wrap, ignored).
const OFFSETS: [(i32, i32, i32); 4] = [(0, 0, 0), (13, -42, 5), (128, -129, 90), (-127, 60, 200)];

fn run_single(instr: Instruction, descs: &[u64], mode: FloatMode, cases: usize) {
    let p = program(&[instr, Instruction::End], descs, ShaderKind::Vertex);
    let shader = jit(&p, mode);
    for k in 0..cases {
        let (mut r, u) = fill(mode, k * 5);
        let (x, y, l) = OFFSETS[k % OFFSETS.len()];
        r.a0 = [x, y];
        r.al = l;
        r.cmp = [(k & 1) as u8, (k >> 1 & 1) as u8];
        let o = check_regs(&shader, &p, &u, &r, mode, 100);
        assert_eq!(o, Outcome::Matched);
    }
}

/// `make(op, wide source, its relative index, descriptor index)` for every opcode of `ops`,
/// wide source and relative index, and descriptor shape, in every mode ([`run_single`]).
fn every_operand_shape(
    ops: Vec<Opcode>,
    make: impl Fn(Opcode, SrcReg, RelIndex, usize) -> Instruction,
) {
    for mode in MODES {
        for &op in &ops {
            for (wide, rel) in wide_sources() {
                for di in 0..shapes().len() {
                    run_single(make(op, wide, rel, di), &shapes(), mode, 4);
                }
            }
        }
    }
}

pub fn every_binary_opcode_every_operand_shape() {
    every_operand_shape(binary(), |op, wide, rel, di| {
        let narrow = SrcReg::Temp((di * 3 % 16) as u8);
        let (first, second) = if op.is_inverted() {
            (narrow, wide)
        } else {
            (wide, narrow)
        };
        Instruction::Binary {
            op,
            dst: if di % 2 == 0 {
                DstReg::Output(di as u8)
            } else {
                DstReg::Temp(di as u8)
            },
            src1: first,
            src2: second,
            rel,
            desc: di as u8,
        }
    });
}

pub fn every_unary_opcode_every_operand_shape() {
    every_operand_shape(unary(), |op, src, rel, di| Instruction::Unary {
        op,
        dst: DstReg::Temp(di as u8 + 3),
        src,
        rel,
        desc: di as u8,
    });
}

pub fn mova_cmp_mad_every_operand_shape() {
    for mode in MODES {
        for (wide, rel) in wide_sources() {
            for di in 0..shapes().len() {
                run_single(
                    Instruction::Mova {
                        src: wide,
                        rel,
                        desc: di as u8,
                    },
                    &shapes(),
                    mode,
                    4,
                );
                for (x, y) in [(0, 1), (2, 3), (4, 5), (6, 7), (1, 0), (3, 5)] {
                    run_single(
                        Instruction::Cmp {
                            src1: wide,
                            src2: SrcReg::Input(di as u8),
                            rel,
                            x: CmpOp::from_raw(x),
                            y: CmpOp::from_raw(y),
                            desc: di as u8,
                        },
                        &shapes(),
                        mode,
                        4,
                    );
                }
                let three: Vec<Opcode> = Opcode::with_format(Format::Five)
                    .chain(Opcode::with_format(Format::FiveI))
                    .collect();
                for op in three {
                    let narrow = SrcReg::Input(di as u8 + 1);
                    let (src2, src3) = if op.is_inverted() {
                        (narrow, wide)
                    } else {
                        (wide, narrow)
                    };
                    run_single(
                        Instruction::Mad {
                            op,
                            dst: DstReg::Output(di as u8),
                            src1: SrcReg::Temp(di as u8 + 2),
                            src2,
                            src3,
                            rel,
                            desc: di as u8,
                        },
                        &shapes(),
                        mode,
                        4,
                    );
                }
            }
        }
    }
}

/// Every pair of special values through every float operation, in every mode.
pub fn special_value_matrix() {
    let full = full();
    for mode in MODES {
        let s = specials(mode);
        let ops: Vec<Instruction> = Opcode::with_format(Format::One)
            .map(io_binary)
            .chain(unary().into_iter().map(io_unary))
            .chain([
                io_mad(),
                Instruction::Mova {
                    src: SrcReg::Input(0),
                    rel: RelIndex::None,
                    desc: 0,
                },
            ])
            .chain((0..8).map(|c| Instruction::Cmp {
                src1: SrcReg::Input(0),
                src2: SrcReg::Input(1),
                rel: RelIndex::None,
                x: CmpOp::from_raw(c),
                y: CmpOp::from_raw(7 - c),
                desc: 0,
            }))
            .collect();
        for instr in ops {
            let p = program(&[instr, Instruction::End], &[full], ShaderKind::Vertex);
            for features in feature_tiers() {
                let shader = jit_with(&p, mode, features);
                let u = Uniforms::default();
                for (i, &a) in s.iter().enumerate() {
                    for j in (0..s.len()).step_by(4) {
                        let mut r = Registers::default();
                        r.input[0] = [a; 4];
                        r.input[1] = [0, 1, 2, 3].map(|l| s[(j + l) % s.len()]);
                        r.input[2] = [0, 1, 2, 3].map(|l| s[(i + j + l * 7) % s.len()]);
                        assert_eq!(check_regs(&shader, &p, &u, &r, mode, 10), Outcome::Matched);
                        // And with the operands swapped.
                        r.input.swap(0, 1);
                        assert_eq!(check_regs(&shader, &p, &u, &r, mode, 10), Outcome::Matched);
                    }
                }
            }
        }
    }
}

/// MOVA (a0 compared), LITP (result and flags) and CMP with every operator pair (flags
/// compared) over `testgen::MOVA_LITP_CMP_EDGES`, in every mode and feature tier.
pub fn mova_cmp_litp_boundaries() {
    let full = full();
    let e: Vec<f32> = picajit_testkit::testgen::MOVA_LITP_CMP_EDGES
        .iter()
        .map(|&b| f32::from_bits(b))
        .collect();
    let n = e.len();
    let lanes = |i: usize, step: usize| [0, 1, 2, 3].map(|l| e[(i + l * step) % n]);
    let mut ops = vec![
        Instruction::Mova {
            src: SrcReg::Input(0),
            rel: RelIndex::None,
            desc: 0,
        },
        io_unary(Opcode::Litp),
    ];
    for x in 0..8 {
        for y in 0..8 {
            ops.push(Instruction::Cmp {
                src1: SrcReg::Input(0),
                src2: SrcReg::Input(1),
                rel: RelIndex::None,
                x: CmpOp::from_raw(x),
                y: CmpOp::from_raw(y),
                desc: 0,
            });
        }
    }
    for mode in MODES {
        for instr in &ops {
            let p = program(&[*instr, Instruction::End], &[full], ShaderKind::Vertex);
            for features in feature_tiers() {
                let shader = jit_with(&p, mode, features);
                let u = Uniforms::default();
                for i in 0..n {
                    // Each value in every lane against its neighbours and against values
                    // far away in the list.
                    for (step, k) in [(1, 0), (7, 1), (11, 13)] {
                        let mut r = Registers::default();
                        r.input[0] = lanes(i, step);
                        r.input[1] = lanes(i + k, step + 2);
                        assert_eq!(check_regs(&shader, &p, &u, &r, mode, 10), Outcome::Matched);
                    }
                }
            }
        }
    }
}

/// Every 7th f24 mantissa at many exponents, both signs, through RCP/RSQ/EX2/LG2/FLR (the
/// recipes' and the integer algorithms' hard cases).
pub fn scalar_functions_sweep() {
    // Descriptor l broadcasts lane l, so each instruction reads a different lane as its x.
    let descs: Vec<u64> = (0..4u8)
        .map(|l| desc(0xF, [false; 3], [l * 0x55, 0x1B, 0x1B]))
        .collect();
    let exps = [
        0x3Fu32, 0x40, 0x25, 0x5A, 0x43, 0x46, 0x47, 0x3A, 0x01, 0x7E, 0x36, 0x48,
    ];
    // `PICAJIT_EX2_STRIDE=n`: every n-th significand with every exponent (twelve per run, one
    // per lane), instead of the chosen twelve at a fixed stride.
    let full: Option<usize> = std::env::var("PICAJIT_EX2_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok());
    let exp_sets: Vec<[u32; 12]> = match full {
        Some(_) => (0..128u32)
            .step_by(12)
            .map(|b| std::array::from_fn(|k| (b + k as u32) % 128))
            .collect(),
        None => vec![exps],
    };
    for mode in MODES {
        for op in [
            Opcode::Rcp,
            Opcode::Rsq,
            Opcode::Ex2,
            Opcode::Lg2,
            Opcode::Flr,
        ] {
            let mut code: Vec<Instruction> = (0..12u8)
                .map(|k| Instruction::Unary {
                    op,
                    dst: DstReg::Output(k),
                    src: SrcReg::Input(k / 4),
                    rel: RelIndex::None,
                    desc: k % 4,
                })
                .collect();
            code.push(Instruction::End);
            let p = program(&code, &descs, ShaderKind::Vertex);
            let shader = jit(&p, mode);
            let u = Uniforms::default();
            // Emulated AArch64 code costs ~100x more per run: a coarser (still odd) stride.
            let stride = full.unwrap_or(if backend() == Backend::X64 { 7 } else { 29 });
            for (exps, m) in exp_sets
                .iter()
                .flat_map(|e| (0..0x10000u32).step_by(stride).map(move |m| (e, m)))
            {
                for sign in [0, 1u32] {
                    let mut r = Registers::default();
                    for (k, e) in exps.iter().enumerate() {
                        let bits = (sign ^ (k as u32 & 1)) << 23 | e << 16 | m;
                        r.input[k / 4][k % 4] = F24::from_bits(bits).to_f32();
                    }
                    if mode == FloatMode::F32 {
                        // Full f32 mantissas in F32 mode.
                        for x in r.input[..3].iter_mut().flatten() {
                            *x = f32::from_bits(x.to_bits() ^ (m * 0x9E37) & 0x7F);
                        }
                    }
                    assert_eq!(check_regs(&shader, &p, &u, &r, mode, 20), Outcome::Matched);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Control flow

pub fn alu_mark(k: u8) -> Instruction {
    // o0 += c(k): leaves a trace of which instructions ran, in order-sensitive float arithmetic.
    Instruction::Mad {
        op: Opcode::Mad,
        dst: DstReg::Output(0),
        src1: SrcReg::Temp(0),
        src2: SrcReg::Const(k),
        src3: SrcReg::Input(0),
        rel: RelIndex::None,
        desc: 0,
    }
}

fn trace_step() -> [Instruction; 1] {
    [Instruction::Binary {
        op: Opcode::Add,
        dst: DstReg::Temp(0),
        src1: SrcReg::Const(1),
        src2: SrcReg::Temp(0),
        rel: RelIndex::None,
        desc: 0,
    }]
}

fn flow_uniforms() -> Uniforms {
    let mut u = Uniforms::default();
    for i in 0..96 {
        u.set_float_raw(
            i,
            [i as f32 + 0.5, 1.0 / (i as f32 + 1.0), 2.0, -(i as f32)],
        );
    }
    u.set_int(0, [3, 1, 2, 0]);
    u.set_int(1, [2, 10, 255, 0]);
    u.set_int(2, [0, 200, 7, 0]);
    u.set_int(3, [255, 0, 1, 0]);
    for b in [0, 2, 5, 7] {
        u.set_bool(b, true);
    }
    u
}

/// Run `code` with every cmp-flag combination and budgets around the exact instruction count.
fn check_flow(code: &[Instruction]) {
    check_flow_kind(code, ShaderKind::Vertex)
}

fn check_flow_kind(code: &[Instruction], kind: ShaderKind) {
    let full = full();
    let p = program(code, &[full], kind);
    let mode = FloatMode::default();
    let shader = jit(&p, mode);
    let u = flow_uniforms();
    let interp = Interpreter::new(&p, mode);
    for flags in 0..4u8 {
        let mut r = Registers::default();
        r.input[0] = [0.25, -1.5, 3.0, 0.0];
        r.temp[0] = [1.0, 2.0, 0.5, -0.5];
        r.cmp = [flags & 1, flags >> 1];
        let mut probe = r.clone();
        let n = match interp.run(&mut probe, &u, None, 100_000) {
            Ok(info) => info.instructions,
            Err(_) => 50,
        };
        for budget in [n.saturating_sub(1), n, n + 1, 100_000] {
            check_regs(&shader, &p, &u, &r, mode, budget);
        }
    }
}

fn nop() -> Instruction {
    Instruction::Nop
}

fn cond(op: CondOp, x: bool, y: bool) -> Condition {
    Condition {
        op,
        ref_x: x,
        ref_y: y,
    }
}

pub fn flow_if_else_shapes() {
    let t = trace_step()[0];
    for c in [
        cond(CondOp::X, true, false),
        cond(CondOp::Y, false, true),
        cond(CondOp::And, true, true),
        cond(CondOp::Or, false, false),
    ] {
        // ifc: then = 1..3, else = 3..5
        check_flow(&[
            Instruction::IfC {
                cond: c,
                dest: 3,
                num: 2,
            },
            alu_mark(1),
            t,
            alu_mark(2),
            alu_mark(3),
            alu_mark(4),
            Instruction::End,
        ]);
        // No else part, and an empty then part.
        check_flow(&[
            Instruction::IfC {
                cond: c,
                dest: 1,
                num: 0,
            },
            alu_mark(1),
            Instruction::IfU {
                b: 2,
                dest: 4,
                num: 0,
            },
            alu_mark(2),
            alu_mark(3),
            Instruction::End,
        ]);
    }
    // IFU on set and clear bools, nested three deep.
    for b in [0, 1] {
        check_flow(&[
            Instruction::IfU { b, dest: 6, num: 2 },
            Instruction::IfU {
                b: 5,
                dest: 5,
                num: 1,
            },
            Instruction::IfC {
                cond: cond(CondOp::X, true, true),
                dest: 4,
                num: 1,
            },
            alu_mark(1),
            alu_mark(2),
            alu_mark(3),
            alu_mark(4),
            alu_mark(5),
            Instruction::End,
        ]);
    }
}

pub fn flow_if_ring_overflow() {
    // Nine nested IFs ending at the same place: the ring keeps eight.
    let mut code: Vec<Instruction> = (0..9)
        .map(|k| Instruction::IfU {
            b: 0,
            dest: 12 - k as u16,
            num: 1 + k as u8,
        })
        .collect();
    code.extend([alu_mark(1), alu_mark(2), alu_mark(3), alu_mark(4)]);
    code.extend((0..12).map(|k| alu_mark(5 + k)));
    code.push(Instruction::End);
    check_flow(&code);
}

pub fn flow_loops() {
    let t = trace_step()[0];
    // Simple loop with aL-relative reads, body of one instruction (dest == start).
    for i in 0..4 {
        check_flow(&[
            Instruction::Loop { i, dest: 1 },
            Instruction::Binary {
                op: Opcode::Add,
                dst: DstReg::Output(1),
                src1: SrcReg::Const(2),
                src2: SrcReg::Temp(1),
                rel: RelIndex::AL,
                desc: 0,
            },
            t,
            Instruction::End,
        ]);
    }
    // LOOP whose body is the LOOP instruction's successor only and ends at itself.
    check_flow(&[
        Instruction::Loop { i: 0, dest: 0 },
        alu_mark(1),
        Instruction::End,
    ]);
    // Nested loops: aL is overwritten by the inner loop and not restored.
    check_flow(&[
        Instruction::Loop { i: 0, dest: 4 },
        alu_mark(1),
        Instruction::Loop { i: 1, dest: 3 },
        Instruction::Unary {
            op: Opcode::Mov,
            dst: DstReg::Output(2),
            src: SrcReg::Const(0),
            rel: RelIndex::AL,
            desc: 0,
        },
        t,
        alu_mark(2),
        Instruction::End,
    ]);
    // BREAK and BREAKC out of a loop, from inside an IF.
    check_flow(&[
        Instruction::Loop { i: 3, dest: 4 },
        t,
        Instruction::IfU {
            b: 0,
            dest: 4,
            num: 0,
        },
        Instruction::BreakC {
            cond: cond(CondOp::X, true, true),
        },
        Instruction::Cmp {
            src1: SrcReg::Temp(0),
            src2: SrcReg::Input(0),
            rel: RelIndex::None,
            x: CmpOp::Gt,
            y: CmpOp::Lt,
            desc: 0,
        },
        alu_mark(3),
        Instruction::Break,
        alu_mark(4),
        Instruction::End,
    ]);
    // BREAK on the last word of the loop below the one it leaves: the BREAK is the LOOP
    // stack's only action there (interp/tests/exec_flow.rs has the trace).
    check_flow(&[
        Instruction::Loop { i: 0, dest: 3 },
        Instruction::Loop { i: 1, dest: 5 },
        alu_mark(1),
        Instruction::BreakC {
            cond: cond(CondOp::Or, true, true),
        },
        alu_mark(2),
        alu_mark(3),
        alu_mark(4),
        Instruction::End,
    ]);
    // BREAK ending an IF arm: its target (LOOP) outranks the IF pop.
    check_flow(&[
        Instruction::Loop { i: 0, dest: 5 },
        Instruction::IfU {
            b: 0,
            dest: 3,
            num: 1,
        },
        Instruction::BreakC {
            cond: cond(CondOp::X, true, false),
        },
        alu_mark(1),
        alu_mark(2),
        alu_mark(3),
        alu_mark(4),
        Instruction::End,
    ]);
    // Five nested loops overflow the four-deep ring.
    let mut code: Vec<Instruction> = (0..5)
        .map(|k| Instruction::Loop {
            i: (k % 3) as u8,
            dest: 9 - k as u16,
        })
        .collect();
    code.extend((0..6).map(|k| alu_mark(k + 1)));
    code.push(Instruction::End);
    check_flow(&code);
}

pub fn flow_calls() {
    let t = trace_step()[0];
    // Subroutine after END, called unconditionally, conditionally and on a bool.
    check_flow(&[
        Instruction::Call { dest: 6, num: 2 },
        Instruction::CallC {
            cond: cond(CondOp::Y, true, true),
            dest: 6,
            num: 2,
        },
        Instruction::CallU {
            b: 2,
            dest: 6,
            num: 1,
        },
        Instruction::CallU {
            b: 3,
            dest: 6,
            num: 1,
        },
        alu_mark(1),
        Instruction::End,
        t,
        alu_mark(2),
        Instruction::End,
    ]);
    // Chained returns: four frames ending where the previous returns (the fourth pop bug).
    check_flow(&[
        Instruction::Call { dest: 4, num: 4 },
        alu_mark(1),
        Instruction::End,
        nop(),
        Instruction::Call { dest: 7, num: 1 },
        nop(),
        nop(),
        Instruction::Call { dest: 9, num: 1 },
        Instruction::End,
        Instruction::Call { dest: 11, num: 1 },
        Instruction::End,
        alu_mark(2),
        Instruction::End,
    ]);
    // Five nested calls: the ring drops the oldest return address.
    let mut code: Vec<Instruction> = [(3, 3), (6, 3), (9, 3), (12, 3), (15, 1)]
        .into_iter()
        .zip(1..)
        .flat_map(|((dest, num), k)| {
            [
                Instruction::Call { dest, num },
                alu_mark(k),
                Instruction::End,
            ]
        })
        .collect();
    code.extend([t, Instruction::End]);
    check_flow(&code);
    // Recursion bounded by a loop counter and a jump out of the called range.
    check_flow(&[
        Instruction::Loop { i: 0, dest: 1 },
        Instruction::Call { dest: 4, num: 2 },
        alu_mark(1),
        Instruction::End,
        t,
        Instruction::JmpC {
            cond: cond(CondOp::X, true, true),
            dest: 2,
        },
        Instruction::End,
    ]);
}

pub fn flow_jumps_and_ends() {
    let t = trace_step()[0];
    check_flow(&[
        Instruction::JmpU {
            b: 0,
            dest: 3,
            invert: false,
        },
        alu_mark(1),
        Instruction::End,
        Instruction::JmpU {
            b: 0,
            dest: 6,
            invert: true,
        },
        alu_mark(2),
        Instruction::End,
        alu_mark(3),
        Instruction::End,
    ]);
    // A jump out of a loop body, END inside a loop, a jump at the end of an IF (suppressed by
    // neither), a jump at a loop end (suppressed when the loop finishes).
    check_flow(&[
        Instruction::Loop { i: 0, dest: 3 },
        t,
        Instruction::JmpC {
            cond: cond(CondOp::X, true, true),
            dest: 6,
        },
        Instruction::JmpC {
            cond: cond(CondOp::Y, true, true),
            dest: 7,
        },
        alu_mark(1),
        Instruction::End,
        alu_mark(2),
        Instruction::IfU {
            b: 0,
            dest: 9,
            num: 1,
        },
        Instruction::End,
        alu_mark(3),
        Instruction::End,
    ]);
    // Infinite loop: only the budget stops it.
    check_flow(&[
        t,
        Instruction::JmpU {
            b: 0,
            dest: 0,
            invert: false,
        },
        Instruction::End,
    ]);
}

pub fn flow_errors_deopt_to_the_interpreter() {
    let full = full();
    type Case = (Vec<Instruction>, fn(&ExecError) -> bool);
    let cases: Vec<Case> = vec![
        (
            vec![alu_mark(1), Instruction::Break, Instruction::End],
            |e| matches!(e, ExecError::BreakWithoutLoop { .. }),
        ),
        (
            vec![alu_mark(1), Instruction::Undefined { word: 0x4000_0000 }],
            |e| matches!(e, ExecError::UndefinedOpcode { .. }),
        ),
        (vec![alu_mark(1), Instruction::Nop], |e| {
            matches!(e, ExecError::PcOutOfRange { .. })
        }),
        (
            vec![
                Instruction::JmpU {
                    b: 0,
                    dest: 0,
                    invert: false,
                },
                Instruction::End,
            ],
            |e| matches!(e, ExecError::BudgetExhausted { .. }),
        ),
    ];
    for (code, want) in cases {
        let p = program(&code, &[full], ShaderKind::Vertex);
        let shader = jit(&p, FloatMode::default());
        let u = flow_uniforms();
        let mut r = Registers::default();
        let e = run_one(&shader, &mut r, &u, None, 1000).unwrap_err();
        assert!(want(&e), "{e:?}");
        let mut r = Registers::default();
        assert!(matches!(
            run_compiled(&shader, &mut r, &u, None, 1000),
            Err(JitExit::Deopt { .. }) | Err(JitExit::Budget)
        ));
        check_flow(&code);
    }
}

pub fn budget_boundary_is_exact() {
    let t = trace_step()[0];
    let code = [
        Instruction::Loop { i: 0, dest: 2 },
        t,
        alu_mark(1),
        Instruction::End,
    ];
    let full = full();
    let p = program(&code, &[full], ShaderKind::Vertex);
    let shader = jit(&p, FloatMode::default());
    let u = flow_uniforms();
    let n = {
        let mut r = Registers::default();
        run_one(&shader, &mut r, &u, None, 1000)
            .unwrap()
            .instructions
    };
    let mut r = Registers::default();
    assert_eq!(
        run_compiled(&shader, &mut r, &u, None, n)
            .unwrap()
            .instructions,
        n
    );
    let mut r = Registers::default();
    assert_eq!(
        run_compiled(&shader, &mut r, &u, None, n - 1),
        Err(JitExit::Budget)
    );
    for b in 0..=n + 1 {
        let r = Registers::default();
        check_regs(&shader, &p, &u, &r, FloatMode::default(), b);
    }
}

// ---------------------------------------------------------------------------------------------
// Geometry shaders

pub fn geometry_emit_and_banks() {
    let t = trace_step()[0];
    let mov = |o: u8, c: u8| Instruction::Unary {
        op: Opcode::Mov,
        dst: DstReg::Output(o),
        src: SrcReg::Const(c),
        rel: RelIndex::None,
        desc: 0,
    };
    for n in 1..4u8 {
        let mut code = vec![];
        for k in 0..n {
            code.extend([
                Instruction::SetEmit {
                    vtx: k,
                    primitive: k == 2,
                    winding: k == 1,
                },
                mov(0, k),
                mov(k + 1, 10 + k),
                t,
                Instruction::Emit,
            ]);
        }
        code.push(Instruction::End);
        check_flow_kind(&code, ShaderKind::Geometry);
    }
    // Emits in a loop (many records), and more than the record buffer holds (deopt).
    for i in [0, 3] {
        check_flow_kind(
            &[
                Instruction::Loop { i, dest: 2 },
                mov(0, 1),
                Instruction::Emit,
                Instruction::End,
            ],
            ShaderKind::Geometry,
        );
    }
    // A geometry program run without geometry state: EMIT is a no-op, via the interpreter.
    let full = full();
    let p = program(
        &[mov(0, 1), Instruction::Emit, Instruction::End],
        &[full],
        ShaderKind::Geometry,
    );
    let shader = jit(&p, FloatMode::default());
    let mut r = Registers::default();
    let u = flow_uniforms();
    run_one(&shader, &mut r, &u, None, 100).unwrap();
    assert_eq!(r.output[0], u.float(1));
    // The state carries across invocations.
    let mut g = GeometryState::default();
    let mut g2 = GeometryState::default();
    let interp = Interpreter::new(&p, FloatMode::default());
    for _ in 0..3 {
        let mut r1 = Registers::default();
        let mut r2 = Registers::default();
        interp.run(&mut r1, &u, Some(&mut g), 100).unwrap();
        run_compiled(&shader, &mut r2, &u, Some(&mut g2), 100).unwrap();
        assert_eq!(
            crate::jit_common::reg_bits(&r1),
            crate::jit_common::reg_bits(&r2)
        );
        assert_eq!(
            crate::jit_common::gs_bits(&g),
            crate::jit_common::gs_bits(&g2)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Runtime

/// Compiled geometry code works on the caller's state in place (output banks, EMIT records
/// appended to `emitted`) and saves only the rows it can write: every way of stopping early
/// must leave registers and geometry state bit for bit as they were, from a state where every
/// row, slot and flag holds something distinct, and `run` must then match the interpreter.
pub fn geometry_runs_in_place_and_restores_on_deopt() {
    use crate::jit_common::assert_same_state;
    let unary = |dst: DstReg, c: u8| Instruction::Unary {
        op: Opcode::Mov,
        dst,
        src: SrcReg::Const(c),
        rel: RelIndex::None,
        desc: 0,
    };
    let setemit = |vtx: u8, primitive: bool, winding: bool| Instruction::SetEmit {
        vtx,
        primitive,
        winding,
    };
    // Writes temporaries and both banks; three EMITs leave the banks swapped, two of them to
    // the same slot.
    let prefix = vec![
        setemit(1, true, false),
        unary(DstReg::Temp(3), 5),
        unary(DstReg::Output(2), 6),
        Instruction::Emit,
        unary(DstReg::Output(2), 7),
        unary(DstReg::Output(5), 8),
        setemit(0, false, true),
        Instruction::Emit,
        unary(DstReg::Temp(9), 9),
        unary(DstReg::Output(5), 10),
        setemit(1, false, false),
        Instruction::Emit,
        unary(DstReg::Output(7), 11),
    ];
    let n = prefix.len() as u16;
    let endings: Vec<Vec<Instruction>> = vec![
        vec![Instruction::End],
        vec![Instruction::Emit, Instruction::End],
        vec![Instruction::Undefined { word: 0x4000_0000 }],
        vec![Instruction::Break, Instruction::End],
        vec![Instruction::Nop],
        // 256 EMITs: more than the room `run` makes by itself.
        vec![
            Instruction::Loop { i: 3, dest: n + 2 },
            unary(DstReg::Output(7), 12),
            Instruction::Emit,
            Instruction::End,
        ],
    ];
    let mut init = Registers::default();
    for k in 0..16 {
        let f = k as f32;
        init.temp[k] = [f + 0.25, -f, 3.0 * f, 0.5];
        init.output[k] = [-f - 0.75, f, 7.0, -0.5];
    }
    init.a0 = [3, -2];
    init.al = 17;
    init.cmp = [1, 0];
    let mut g_init = GeometryState::default();
    g_init.vertex_id = 2;
    g_init.primitive = true;
    g_init.winding = true;
    for k in 0..16 {
        let f = k as f32;
        g_init.other_bank[k] = [f * 1.5, -2.0 * f, 0.125, f - 9.0];
    }
    for (s, slot) in g_init.slots.iter_mut().enumerate() {
        for (k, row) in slot.iter_mut().enumerate() {
            *row = [s as f32, k as f32, -(s as f32), 100.0];
        }
    }
    let mut earlier = init.output;
    earlier[0] = [42.0; 4];
    g_init.emit(&earlier);
    g_init.emit(&init.output);
    let u = flow_uniforms();
    let mode = FloatMode::default();
    let full = full();
    for ending in endings {
        let mut code = prefix.clone();
        code.extend(ending);
        let p = program(&code, &[full], ShaderKind::Geometry);
        let shader = jit(&p, mode);
        let interp = Interpreter::new(&p, mode);
        let ctx = || {
            format!(
                "{}\n{}\n{}",
                listing(&p),
                shader.analysis(),
                emulator_note()
            )
        };
        let count = {
            let (mut r, mut g) = (init.clone(), g_init.clone());
            match interp.run(&mut r, &u, Some(&mut g), 100_000) {
                Ok(info) => info.instructions,
                Err(_) => 8,
            }
        };
        for budget in [0, 1, 4, count - 1, count, count + 1, 100_000] {
            let (mut r1, mut g1) = (init.clone(), g_init.clone());
            let e1 = interp.run(&mut r1, &u, Some(&mut g1), budget);
            let (mut r2, mut g2) = (init.clone(), g_init.clone());
            match run_compiled(&shader, &mut r2, &u, Some(&mut g2), budget) {
                Ok(info) => {
                    assert_eq!(e1, Ok(info), "budget {budget}\n{}", ctx());
                    let what = format!("budget {budget}");
                    assert_same_state(&what, (&r1, &g1), (&r2, &g2), &ctx);
                }
                Err(exit) => {
                    let what = format!("not restored after {exit:?}, budget {budget}");
                    assert_same_state(&what, (&init, &g_init), (&r2, &g2), &ctx);
                }
            }
            let (mut r3, mut g3) = (init.clone(), g_init.clone());
            let e3 = run_one(&shader, &mut r3, &u, Some(&mut g3), budget);
            assert_eq!(e1, e3, "budget {budget}\n{}", ctx());
            let what = format!("budget {budget}, with the fallback");
            assert_same_state(&what, (&r1, &g1), (&r3, &g3), &ctx);
        }
        // With room in `emitted`, any number of EMITs runs compiled (natively: the emulator
        // has a fixed guest buffer).
        if count > 256 && !shader.is_emulated() {
            let (mut r, mut g) = (init.clone(), g_init.clone());
            g.emitted.reserve(400);
            let info = run_compiled(&shader, &mut r, &u, Some(&mut g), 100_000);
            assert_eq!(info.map(|i| i.instructions), Ok(count), "{}", ctx());
            let (mut r1, mut g1) = (init.clone(), g_init.clone());
            interp.run(&mut r1, &u, Some(&mut g1), 100_000).unwrap();
            assert_same_state("room for every EMIT", (&r1, &g1), (&r, &g), &ctx);
        }
    }
}

pub fn batch_matches_per_vertex_interpreter() {
    use picajit_testkit::testgen::{generate, Options};
    for seed in 0..40 {
        let case = generate(
            seed,
            &Options {
                flow: seed % 2 == 0,
                ..Options::default()
            },
        );
        let Ok(shader) = compile(&case.program, case.mode, backend(), HostFeatures::detect())
        else {
            continue;
        };
        let interp = Interpreter::new(&case.program, case.mode);
        let inputs: Vec<[[f32; 4]; 16]> = (0..7)
            .map(|k| {
                let mut v = case.inputs;
                v.rotate_left(k);
                v
            })
            .collect();
        let mut outputs = vec![[[0.0f32; 4]; 16]; inputs.len()];
        let got =
            shader.invoke(Invocation::batch(&case.uniforms, &inputs, &mut outputs).budget(3000));
        let mut total = 0;
        for (k, input) in inputs.iter().enumerate() {
            let mut r = Registers::default();
            r.input = *input;
            match interp.run(&mut r, &case.uniforms, None, 3000) {
                Ok(i) => total += i.instructions,
                Err(e) => {
                    let err = got.clone().unwrap_err();
                    assert_eq!(err, picajit_jit::Error::Exec { index: k, error: e });
                    break;
                }
            }
            let a: Vec<u32> = r.output.iter().flatten().map(|x| x.to_bits()).collect();
            let b: Vec<u32> = outputs[k].iter().flatten().map(|x| x.to_bits()).collect();
            assert_eq!(a, b, "seed {seed} vertex {k}");
        }
        if let Ok(info) = got {
            assert_eq!(info.instructions, total);
        }
    }
}

pub fn cache_reuses_identical_code_only() {
    use picajit_testkit::testgen::{generate, Options};
    let case = generate(7, &Options::default());
    let cache = CodeCache::new();
    let f = HostFeatures::detect();
    let a = cache.get_or_compile(&case.program, case.mode, backend(), f);
    let b = cache.get_or_compile(&case.program, case.mode, backend(), f);
    if let (Ok(a), Ok(b)) = (&a, &b) {
        assert!(std::sync::Arc::ptr_eq(a, b));
    }
    let _ = cache.get_or_compile(&case.program, FloatMode::F32, backend(), f);
    assert_eq!(cache.len(), 2);
    // Unreachable words do not change the key.
    let mut code = case.program.code().to_vec();
    code.push(0xFFFF_FFFF);
    let p2 = Program::new(code, case.program.opdescs().to_vec(), 0, ShaderKind::Vertex).unwrap();
    let k1 = picajit_jit::CacheKey::new(&case.program, case.mode, backend(), f).unwrap();
    let k2 = picajit_jit::CacheKey::new(&p2, case.mode, backend(), f).unwrap();
    if case.program.entry() == 0 {
        assert_eq!(k1.words, k2.words);
    }
}

pub fn disassembly_interleaves_pica_instructions() {
    let full = full();
    let p = program(
        &[alu_mark(1), trace_step()[0], Instruction::End],
        &[full],
        ShaderKind::Vertex,
    );
    let shader = jit(&p, FloatMode::default());
    let d = shader.disassemble();
    assert!(d.contains("; 000: mad"), "{d}");
    assert!(d.contains("; 001: add"), "{d}");
    assert!(d.contains("ret"), "{d}");
    assert!(shader.code_size() > 0);
}

// ---------------------------------------------------------------------------------------------
// Sanity check of the harness itself: a program whose result differs between modes.

pub fn harness_sees_mode_differences() {
    let p = program(
        &[io_binary(Opcode::Mul), Instruction::End],
        &[full()],
        ShaderKind::Vertex,
    );
    let mut r = Registers::default();
    r.input[0] = [F24::from_bits(0x3F0001).to_f32(); 4];
    r.input[1] = [F24::from_bits(0x3FC000).to_f32(); 4];
    let u = Uniforms::default();
    let mut outs = vec![];
    for mode in MODES {
        let s = jit(&p, mode);
        let mut rr = r.clone();
        run_compiled(&s, &mut rr, &u, None, 10).unwrap();
        outs.push(rr.output[0][0].to_bits());
        assert_eq!(
            check_shader(&s, &p, &u, &r.input, mode, 10),
            Outcome::Matched
        );
    }
    assert_ne!(outs[0], outs[1], "RTZ and RNE differ on (1+2^-16)·1.75");
}
