//! Instruction-level behaviour of the reference interpreter: pf §11A vectors (the float
//! research notes cited in `interp/src/float/mod.rs`) that
//! need whole instructions (relative addressing, MOVA, LITP flags, broadcasts, DP/MAD
//! specials), operand descriptors, and geometry-shader emission with output banking.

mod common;
use common::*;
use picajit_interp::pica::float::F24;
use picajit_interp::pica::isa::*;
use picajit_interp::pica::program::ShaderKind;
use picajit_interp::pica::state::{GeometryState, Registers, Uniforms};

fn desc(mask: u8, neg: [bool; 3], swz: [u8; 3]) -> u64 {
    OperandDesc::new(WriteMask(mask), neg, swz.map(Swizzle)).0
}

/// A descriptor writing `mask`, unnegated and unswizzled.
fn mask_desc(mask: u8) -> u64 {
    desc(mask, [false; 3], [0x1B; 3])
}

fn f24(bits: u32) -> f32 {
    F24::from_bits(bits).to_f32()
}

fn bits24(v: f32) -> u32 {
    F24::from_f32(v, picajit_interp::pica::float::Rounding::TowardZero).bits()
}

fn run_inputs(code: &[Instruction], descs: &[u64], u: &Uniforms, inputs: &[[f32; 4]]) -> Registers {
    let placed: Vec<_> = code.iter().copied().enumerate().collect();
    let p = program_at(&placed, descs, ShaderKind::Vertex);
    let interp = picajit_interp::pica::exec::Interpreter::new(&p, Default::default());
    let mut regs = Registers::default();
    regs.input[..inputs.len()].copy_from_slice(inputs);
    interp.run(&mut regs, u, None, 1000).expect("runs");
    regs
}

/// `op dst, src[0], src[1], src[2]` (MAD or MADI) with descriptor 0.
fn mad(op: Opcode, dst: DstReg, src: [SrcReg; 3], rel: RelIndex) -> Instruction {
    Instruction::Mad {
        op,
        dst,
        src1: src[0],
        src2: src[1],
        src3: src[2],
        rel,
        desc: 0,
    }
}

/// `mova a0, SRC` with descriptor `desc`.
fn mova(src: SrcReg, desc: u8) -> Instruction {
    Instruction::Mova {
        src,
        rel: RelIndex::None,
        desc,
    }
}

/// `setemit VTX` with the primitive and winding flags.
fn setemit(vtx: u8, primitive: bool, winding: bool) -> Instruction {
    Instruction::SetEmit {
        vtx,
        primitive,
        winding,
    }
}

/// [`run_inputs`] with the default uniforms.
fn run_plain(code: &[Instruction], descs: &[u64], inputs: &[[f32; 4]]) -> Registers {
    run_inputs(code, descs, &Uniforms::default(), inputs)
}

fn mov(dst: DstReg, src: SrcReg, rel: RelIndex, desc: u8) -> Instruction {
    Instruction::Unary {
        op: Opcode::Mov,
        dst,
        src,
        rel,
        desc,
    }
}

#[test]
fn relative_addressing_matches_vector_a29() {
    let mut u = Uniforms::default();
    for k in 0..96 {
        u.set_float_raw(k, [k as f32; 4]);
    }
    let cases: [(i32, Option<f32>); 14] = [
        (0, Some(40.0)),
        (13, Some(53.0)),
        (50, Some(90.0)),
        (60, None),
        (74, None),
        (87, None),
        (88, Some(0.0)),
        (128, Some(40.0)),
        (-40, Some(0.0)),
        (-42, None),
        (-70, None),
        (-73, Some(95.0)),
        (-127, Some(41.0)),
        (-129, Some(40.0)),
    ];
    for (offset, want) in cases {
        for rel in [RelIndex::A0X, RelIndex::A0Y] {
            let code = [
                Instruction::Mova {
                    src: SrcReg::Input(0),
                    rel: RelIndex::None,
                    desc: 0,
                },
                mov(DstReg::Output(0), SrcReg::Const(40), rel, 0),
                END,
            ];
            let regs = run_inputs(&code, &[], &u, &[[offset as f32; 4]]);
            let want = want.unwrap_or(1.0);
            assert_eq!(regs.output[0], [want; 4], "c40[{rel:?} = {offset}]");
            if want == 1.0 {
                // Out of range rows read (1,1,1,1), not c1.
                assert_ne!(offset + 40, 1);
            }
        }
    }
}

#[test]
fn relative_addressing_ignores_v_and_r_registers() {
    let mut u = Uniforms::default();
    u.set_float_raw(5, [5.0; 4]);
    let code = [
        Instruction::Mova {
            src: SrcReg::Input(0),
            rel: RelIndex::None,
            desc: 0,
        },
        mov(DstReg::Output(0), SrcReg::Input(1), RelIndex::A0X, 0),
        mov(DstReg::Output(1), SrcReg::Const(3), RelIndex::A0X, 0),
        END,
    ];
    let regs = run_inputs(&code, &[], &u, &[[2.0; 4], [7.0; 4], [9.0; 4]]);
    assert_eq!(regs.output[0], [7.0; 4], "v1[a0.x] reads v1");
    assert_eq!(regs.output[1], [5.0; 4], "c3[a0.x=2] reads c5");
}

#[test]
fn relative_addressing_with_al_and_i_forms() {
    let mut u = Uniforms::default();
    for k in 0..96 {
        u.set_float_raw(k, [k as f32; 4]);
    }
    u.set_int(0, [0, 7, 0, 0]);
    // loop once with aL = 7: dphi o0, v0, c10[aL] (wide second source gets the index);
    // madi o1, v1, v1, c20[aL].
    let code = [
        Instruction::Loop { i: 0, dest: 2 },
        Instruction::Binary {
            op: Opcode::Dphi,
            dst: DstReg::Output(0),
            src1: SrcReg::Input(0),
            src2: SrcReg::Const(10),
            rel: RelIndex::AL,
            desc: 0,
        },
        mad(
            Opcode::Madi,
            DstReg::Output(1),
            [SrcReg::Input(1), SrcReg::Input(1), SrcReg::Const(20)],
            RelIndex::AL,
        ),
        END,
    ];
    let regs = run_inputs(&code, &[], &u, &[[1.0; 4], [2.0; 4]]);
    // dph((1,1,1,·), (17,17,17,17)) = 17*3 + 17 = 68
    assert_eq!(regs.output[0], [68.0; 4]);
    // 2*2 + 27 = 31
    assert_eq!(regs.output[1], [31.0; 4]);
}

#[test]
fn mova_truncates_toward_zero_per_mask() {
    // a0.x from 0.9 (A28), a0.y from -1.5; then only a0.y from 5.7.
    let code = [mova(SrcReg::Input(0), 0), mova(SrcReg::Input(1), 1), END];
    let regs = run_plain(
        &code,
        &[mask_desc(0b0100)],
        &[[0.9, -1.5, 0.0, 0.0], [5.7, 5.7, 5.7, 5.7]],
    );
    assert_eq!(regs.a0, [0, 5]);
}

#[test]
fn litp_sets_flags_per_vectors_a30_a31() {
    let code = [
        Instruction::Unary {
            op: Opcode::Litp,
            dst: DstReg::Output(0),
            src: SrcReg::Input(0),
            rel: RelIndex::None,
            desc: 0,
        },
        END,
    ];
    // (input, expected cmp flags, expected output or None for "NaN lanes")
    type LitpCase = ([f32; 4], [u8; 2], Option<[f32; 4]>);
    let cases: [LitpCase; 6] = [
        ([1.0, 0.0, 0.0, 1.0], [1, 1], None),
        ([-0.5, 1.0, 0.0, 1.0], [0, 1], None),
        ([0.5, 0.0, 1.0, -1.0], [1, 0], None),
        ([-1.0, 64.0, 0.0, -1.0], [0, 0], Some([0.0, 64.0, 0.0, 0.0])),
        (
            [-1.0, 256.0, 1.0, -1.0],
            [0, 0],
            Some([0.0, f24(0x45FFFC), 0.0, 0.0]),
        ),
        ([-1.0, 0.0, 0.5, -1.0], [0, 0], Some([0.0; 4])),
    ];
    for (input, flags, out) in cases {
        let regs = run_plain(&code, &[], &[input]);
        assert_eq!(regs.cmp, flags, "litp{input:?}");
        if let Some(o) = out {
            assert_eq!(regs.output[0], o, "litp{input:?}");
        }
    }
}

#[test]
fn scalar_ops_broadcast_source_x_to_the_mask_a27() {
    for (op, want) in [
        (Opcode::Rcp, 0.5),
        (Opcode::Rsq, f32::sqrt(0.5)),
        (Opcode::Ex2, 4.0),
        (Opcode::Lg2, 1.0),
    ] {
        let code = [
            Instruction::Unary {
                op,
                dst: DstReg::Output(0),
                src: SrcReg::Input(0),
                rel: RelIndex::None,
                desc: 1,
            },
            END,
        ];
        let regs = run_plain(&code, &[mask_desc(0b1011)], &[[2.0, 4.0, 8.0, 16.0]]);
        let o = regs.output[0];
        assert_eq!(o[1], 0.0, "{op}: y is masked off");
        for l in [0, 2, 3] {
            assert!(
                (o[l] - want).abs() <= want * 1e-4,
                "{op} lane {l}: {} vs {want}",
                o[l]
            );
            assert_eq!(o[l].to_bits(), o[0].to_bits());
        }
    }
}

#[test]
fn dot_products_and_mad_specials_a4_to_a7_and_a33() {
    let inf = f32::INFINITY;
    let u = Uniforms::default();
    let bin = |op, d| Instruction::Binary {
        op,
        dst: DstReg::Output(d),
        src1: SrcReg::Input(0),
        src2: SrcReg::Input(1),
        rel: RelIndex::None,
        desc: 0,
    };
    let code = [bin(Opcode::Dp4, 0), END];
    let regs = run_inputs(
        &code,
        &[],
        &u,
        &[[inf, 1.0, 0.0, 1.0], [0.0, 1.0, inf, 1.0]],
    );
    assert_eq!(regs.output[0], [2.0; 4], "A5");
    let code = [bin(Opcode::Dp3, 0), END];
    let regs = run_inputs(
        &code,
        &[],
        &u,
        &[[inf, inf, 0.0, 0.0], [0.0, 0.0, inf, 0.0]],
    );
    assert_eq!(regs.output[0].map(f32::to_bits), [0; 4], "A6: +0");
    let code = [bin(Opcode::Dph, 0), END];
    let regs = run_inputs(
        &code,
        &[],
        &u,
        &[[inf, inf, inf, 5.0], [0.0, 0.0, 0.0, 1.0]],
    );
    assert_eq!(regs.output[0], [1.0; 4], "A7");
    let regs = run_inputs(&code, &[], &u, &[[0.0; 4], [0.0, 0.0, 0.0, 1.0]]);
    assert_eq!(regs.output[0], [1.0; 4], "A33: src1.w is ignored");
    let v012 = [0, 1, 2].map(SrcReg::Input);
    let code = [
        mad(Opcode::Mad, DstReg::Output(0), v012, RelIndex::None),
        END,
    ];
    let regs = run_inputs(&code, &[], &u, &[[inf; 4], [0.0; 4], [1.0; 4]]);
    assert_eq!(regs.output[0].map(bits24), [0x3F0000; 4], "A4");
}

#[test]
fn descriptor_negation_swizzle_and_mask() {
    let u = Uniforms::default();
    // o0.xz = -v0.wzyx
    let code = [
        mov(DstReg::Output(0), SrcReg::Input(0), RelIndex::None, 1),
        END,
    ];
    let regs = run_inputs(
        &code,
        &[desc(0b1010, [true, false, false], [0xE4, 0x1B, 0x1B])],
        &u,
        &[[1.0, 2.0, 3.0, 4.0]],
    );
    assert_eq!(regs.output[0], [-4.0, 0.0, -2.0, 0.0]);
    // MOV of a zero through negation yields the -0 pattern (MOV copies bits).
    let regs = run_inputs(
        &code,
        &[desc(0b1111, [true, false, false], [0x1B; 3])],
        &u,
        &[],
    );
    assert_eq!(regs.output[0][0].to_bits(), 0x8000_0000);
}

#[test]
fn cmp_sets_both_flags_whatever_the_mask() {
    let code = [
        Instruction::Cmp {
            src1: SrcReg::Input(0),
            src2: SrcReg::Input(1),
            rel: RelIndex::None,
            x: CmpOp::Lt,
            y: CmpOp::Gt,
            desc: 1,
        },
        END,
    ];
    let regs = run_plain(
        &code,
        &[mask_desc(0)],
        &[[1.0, 3.0, 0.0, 0.0], [2.0, 2.0, 0.0, 0.0]],
    );
    assert_eq!(regs.cmp, [1, 1]);
}

#[test]
fn setemit_emit_and_output_banking() {
    let o = |k| DstReg::Output(k);
    let emit_code = [
        setemit(0, false, false),
        mov(o(0), SrcReg::Input(0), RelIndex::None, 0),
        mov(o(1), SrcReg::Input(0), RelIndex::None, 0),
        Instruction::Emit,
        setemit(1, false, false),
        mov(o(1), SrcReg::Input(1), RelIndex::None, 0),
        Instruction::Emit,
        setemit(2, true, true),
        Instruction::Emit,
        END,
    ];
    let placed: Vec<_> = emit_code.iter().copied().enumerate().collect();
    let p = program_at(&placed, &[], ShaderKind::Geometry);
    let u = Uniforms::default();
    let mut regs = Registers::default();
    regs.input[0] = [1.0; 4];
    regs.input[1] = [2.0; 4];
    let mut gs = GeometryState::default();
    run_gs(&p, &u, &mut regs, &mut gs);
    let (emitted, prims) = gs.take_output();
    assert_eq!(emitted.len(), 3);
    // First EMIT: bank A with o0 = o1 = 1.
    assert_eq!(
        (emitted[0].outputs[0], emitted[0].outputs[1]),
        ([1.0; 4], [1.0; 4])
    );
    // Second EMIT: bank B, only o1 written; o0 is bank B's old value (0).
    assert_eq!(
        (emitted[1].outputs[0], emitted[1].outputs[1]),
        ([0.0; 4], [2.0; 4])
    );
    // Third EMIT: back to bank A, nothing rewritten: the values of two EMITs ago.
    assert_eq!(
        (emitted[2].outputs[0], emitted[2].outputs[1]),
        ([1.0; 4], [1.0; 4])
    );
    assert_eq!(prims.len(), 1);
    assert!(prims[0].winding);
    assert_eq!(prims[0].vertices[1][1], [2.0; 4]);

    // A second invocation keeps the slots: emitting only slot 2 again with the primitive
    // flag forms a primitive from slots 0 and 1 of the previous invocation.
    let again = [
        setemit(2, true, false),
        mov(o(0), SrcReg::Input(1), RelIndex::None, 0),
        Instruction::Emit,
        END,
    ];
    let placed: Vec<_> = again.iter().copied().enumerate().collect();
    let p2 = program_at(&placed, &[], ShaderKind::Geometry);
    run_gs(&p2, &u, &mut regs, &mut gs);
    let (emitted, prims) = gs.take_output();
    assert_eq!(emitted.len(), 1);
    assert_eq!(
        prims[0].vertices[0][0], [1.0; 4],
        "slot 0 from the previous invocation"
    );
    assert_eq!(
        prims[0].vertices[1][1], [2.0; 4],
        "slot 1 from the previous invocation"
    );
    assert!(!prims[0].winding);
}

#[test]
fn emit_in_a_vertex_shader_does_nothing() {
    let p = program(&[setemit(1, true, false), Instruction::Emit, END]);
    let interp = picajit_interp::pica::exec::Interpreter::new(&p, Default::default());
    let mut regs = Registers::default();
    let mut gs = GeometryState::default();
    interp
        .run(&mut regs, &Uniforms::default(), Some(&mut gs), 10)
        .unwrap();
    assert!(gs.emitted.is_empty());
    assert_eq!(gs.vertex_id, 0);
}
