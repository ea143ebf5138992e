//! Word codec: decode/encode round trips, exhaustive over opcodes and field extremes, plus a
//! seeded random sweep, and golden encodings computed by hand from seed 000's tables.

use picajit_interp::pica::isa::*;

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn roundtrip_word(word: u32) {
    let instr = decode(word);
    let back = encode(&instr).unwrap_or_else(|e| panic!("0x{word:08x}: {e}"));
    assert_eq!(back | unused_bits(word), word, "0x{word:08x} -> {instr:?}");
    assert_eq!(back & unused_bits(word), 0, "encode set an unused bit");
    assert_eq!(decode(back), instr, "canonical word decodes the same");
}

#[test]
fn every_opcode_with_field_extremes_roundtrips() {
    for code in 0u32..64 {
        for low in [
            0u32,
            0x03FF_FFFF,
            0x0155_5555,
            0x02AA_AAAA,
            1,
            0x0200_0000,
            0x0000_FFFF,
        ] {
            roundtrip_word(code << 26 | low);
        }
    }
}

#[test]
fn random_words_roundtrip() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..200_000 {
        roundtrip_word(rng.next() as u32);
    }
}

#[test]
fn undefined_opcodes_decode_to_undefined() {
    let undefined = [0x10, 0x11, 0x14, 0x15, 0x16, 0x17, 0x1C, 0x1D, 0x1E, 0x1F];
    for code in 0u8..64 {
        let word = (code as u32) << 26 | 0x123;
        let is_undef = matches!(decode(word), Instruction::Undefined { .. });
        assert_eq!(is_undef, undefined.contains(&code), "opcode 0x{code:02x}");
        assert_eq!(Opcode::from_code(code).is_none(), is_undef);
    }
    // An Undefined value carrying a defined opcode cannot be encoded.
    assert!(encode(&Instruction::Undefined { word: 0 }).is_err());
}

#[test]
fn every_register_in_every_slot_roundtrips() {
    let srcs: Vec<SrcReg> = (0..16)
        .map(SrcReg::Input)
        .chain((0..16).map(SrcReg::Temp))
        .chain((0..96).map(SrcReg::Const))
        .collect();
    let dsts: Vec<DstReg> = (0..16)
        .map(DstReg::Output)
        .chain((0..16).map(DstReg::Temp))
        .collect();
    let rels = [RelIndex::None, RelIndex::A0X, RelIndex::A0Y, RelIndex::AL];
    for (n, &wide) in srcs.iter().enumerate() {
        let narrow = srcs[n % 32];
        let dst = dsts[n % 32];
        let rel = rels[n % 4];
        let desc = (n % 128) as u8;
        let cases = [
            Instruction::Binary {
                op: Opcode::Add,
                dst,
                src1: wide,
                src2: narrow,
                rel,
                desc,
            },
            Instruction::Binary {
                op: Opcode::Sgei,
                dst,
                src1: narrow,
                src2: wide,
                rel,
                desc,
            },
            Instruction::Unary {
                op: Opcode::Rsq,
                dst,
                src: wide,
                rel,
                desc,
            },
            Instruction::Mova {
                src: wide,
                rel,
                desc,
            },
            Instruction::Cmp {
                src1: wide,
                src2: narrow,
                rel,
                x: CmpOp::from_raw(n as u8),
                y: CmpOp::from_raw(n as u8 >> 3),
                desc,
            },
            Instruction::Mad {
                op: Opcode::Mad,
                dst,
                src1: narrow,
                src2: wide,
                src3: narrow,
                rel,
                desc: desc & 31,
            },
            Instruction::Mad {
                op: Opcode::Madi,
                dst,
                src1: narrow,
                src2: narrow,
                src3: wide,
                rel,
                desc: desc & 31,
            },
        ];
        for c in cases {
            let w = encode(&c).unwrap();
            assert_eq!(decode(w), c);
        }
    }
}

#[test]
fn constants_cannot_go_in_narrow_slots() {
    let c = SrcReg::Const(3);
    let r = SrcReg::Temp(0);
    let bad = [
        Instruction::Binary {
            op: Opcode::Add,
            dst: DstReg::Temp(0),
            src1: r,
            src2: c,
            rel: RelIndex::None,
            desc: 0,
        },
        Instruction::Binary {
            op: Opcode::Dphi,
            dst: DstReg::Temp(0),
            src1: c,
            src2: r,
            rel: RelIndex::None,
            desc: 0,
        },
        Instruction::Mad {
            op: Opcode::Mad,
            dst: DstReg::Temp(0),
            src1: c,
            src2: r,
            src3: r,
            rel: RelIndex::None,
            desc: 0,
        },
    ];
    for b in bad {
        assert!(
            matches!(encode(&b), Err(EncodeError::BadRegister { .. })),
            "{b:?}"
        );
    }
    let wide_desc = Instruction::Mad {
        op: Opcode::Mad,
        dst: DstReg::Temp(0),
        src1: r,
        src2: r,
        src3: r,
        rel: RelIndex::None,
        desc: 32,
    };
    assert!(matches!(
        encode(&wide_desc),
        Err(EncodeError::OutOfRange { .. })
    ));
    assert!(encode(&Instruction::Call { dest: 4096, num: 0 }).is_err());
    assert!(encode(&Instruction::Binary {
        op: Opcode::Mov,
        dst: DstReg::Temp(0),
        src1: r,
        src2: r,
        rel: RelIndex::None,
        desc: 0
    })
    .is_err());
}

#[test]
fn golden_encodings_from_the_seed_tables() {
    // add r1, c5, v2 with desc 3: opcode 0 | dst 0x11<<21 | src1 0x25<<12 | src2 2<<7 | 3
    let w = 0x11 << 21 | 0x25 << 12 | 2 << 7 | 3;
    assert_eq!(
        decode(w),
        Instruction::Binary {
            op: Opcode::Add,
            dst: DstReg::Temp(1),
            src1: SrcReg::Const(5),
            src2: SrcReg::Input(2),
            rel: RelIndex::None,
            desc: 3
        }
    );
    // dphi o0, r3, c10[a0.y], desc 5: 0x18<<26 | 0<<21 | idx 2<<19 | src1 0x13<<14 | src2 0x2A<<7 | 5
    let w = 0x18 << 26 | 2 << 19 | 0x13 << 14 | 0x2A << 7 | 5;
    assert_eq!(
        decode(w),
        Instruction::Binary {
            op: Opcode::Dphi,
            dst: DstReg::Output(0),
            src1: SrcReg::Temp(3),
            src2: SrcReg::Const(10),
            rel: RelIndex::A0Y,
            desc: 5
        }
    );
    // cmp c1, lt, ge, r2 desc 9: opcode 0x2E (5 bits at 27) | cmpx 2<<24 | cmpy 5<<21 | src1 0x21<<12 | src2 0x12<<7
    let w = 0x17 << 27 | 2 << 24 | 5 << 21 | 0x21 << 12 | 0x12 << 7 | 9;
    assert_eq!(
        decode(w),
        Instruction::Cmp {
            src1: SrcReg::Const(1),
            src2: SrcReg::Temp(2),
            rel: RelIndex::None,
            x: CmpOp::Lt,
            y: CmpOp::Ge,
            desc: 9
        }
    );
    // mad r0, v1, c2[aL], r3 desc 7: 0b111<<29 | dst 0x10<<24 | idx 3<<22 | src1 1<<17 | src2 0x22<<10 | src3 0x13<<5 | 7
    let w = 0b111 << 29 | 0x10 << 24 | 3 << 22 | 1 << 17 | 0x22 << 10 | 0x13 << 5 | 7;
    assert_eq!(
        decode(w),
        Instruction::Mad {
            op: Opcode::Mad,
            dst: DstReg::Temp(0),
            src1: SrcReg::Input(1),
            src2: SrcReg::Const(2),
            src3: SrcReg::Temp(3),
            rel: RelIndex::AL,
            desc: 7
        }
    );
    // madi o2, r1, r2, c7 desc 1: 0b110<<29 | 2<<24 | 0x11<<17 | 0x12<<12 | 0x27<<5 | 1
    let w = 0b110u32 << 29 | 2 << 24 | 0x11 << 17 | 0x12 << 12 | 0x27 << 5 | 1;
    assert_eq!(
        decode(w),
        Instruction::Mad {
            op: Opcode::Madi,
            dst: DstReg::Output(2),
            src1: SrcReg::Temp(1),
            src2: SrcReg::Temp(2),
            src3: SrcReg::Const(7),
            rel: RelIndex::None,
            desc: 1
        }
    );
    // ifc cmp.x && !cmp.y, dest 0x20, num 4: 0x28<<26 | refx 1<<25 | refy 0 | condop 1<<22 | 0x20<<10 | 4
    let w = 0x28 << 26 | 1 << 25 | 1 << 22 | 0x20 << 10 | 4;
    let cond = Condition {
        op: CondOp::And,
        ref_x: true,
        ref_y: false,
    };
    assert_eq!(
        decode(w),
        Instruction::IfC {
            cond,
            dest: 0x20,
            num: 4
        }
    );
    assert_eq!(cond.to_string(), "cmp.x && !cmp.y");
    // jmpu !b3, 0x10: 0x2D<<26 | 3<<22 | 0x10<<10 | 1
    let w = 0x2D << 26 | 3 << 22 | 0x10 << 10 | 1;
    assert_eq!(
        decode(w),
        Instruction::JmpU {
            b: 3,
            dest: 0x10,
            invert: true
        }
    );
    // loop i2 to 0x033
    let w = 0x29 << 26 | 2 << 22 | 0x33 << 10;
    assert_eq!(decode(w), Instruction::Loop { i: 2, dest: 0x33 });
    // setemit 2, prim inv
    let w = 0x2B << 26 | 2 << 24 | 1 << 23 | 1 << 22;
    assert_eq!(
        decode(w),
        Instruction::SetEmit {
            vtx: 2,
            primitive: true,
            winding: true
        }
    );
}

#[test]
fn descriptors_roundtrip_and_fields() {
    let mut rng = XorShift(42);
    for _ in 0..50_000 {
        let raw = rng.next() & 0x7FFF_FFFF;
        let d = OperandDesc(raw);
        let rebuilt = OperandDesc::new(
            d.mask(),
            [d.neg(0), d.neg(1), d.neg(2)],
            [d.swizzle(0), d.swizzle(1), d.swizzle(2)],
        );
        assert_eq!(rebuilt, d, "{raw:#x}");
    }
    // .xyzw is 0x1B, .yyyy is 0x55 (seed 000).
    assert_eq!(Swizzle::IDENTITY.lanes(), [0, 1, 2, 3]);
    assert_eq!(Swizzle(0x55).lanes(), [1, 1, 1, 1]);
    assert_eq!(Swizzle::from_lanes([3, 2, 1, 0]).to_string(), "wzyx");
    // Mask bit 3 = x ... bit 0 = w.
    assert_eq!(WriteMask(0b1000).lanes(), [true, false, false, false]);
    assert_eq!(WriteMask(0b0001).to_string(), "w");
    let d = OperandDesc(0x8 | 1 << 4 | 0x1B << 5 | 1 << 13 | 0x55 << 14 | 1 << 22 | 0xE4 << 23);
    assert_eq!(d.mask(), WriteMask(8));
    assert!(d.neg(0) && d.neg(1) && d.neg(2));
    assert_eq!(d.swizzle(1), Swizzle(0x55));
    assert_eq!(d.swizzle(2), Swizzle(0xE4));
    assert_eq!(
        OperandDesc(0xFFFF_FFFF_8000_0000).unused_bits(),
        0xFFFF_FFFF_8000_0000
    );
}

#[test]
fn conditions_evaluate_per_seed_table() {
    for raw in 0u8..16 {
        let c = Condition::from_raw(raw);
        assert_eq!(c.raw(), raw);
        for x in [false, true] {
            for y in [false, true] {
                let tx = x == c.ref_x;
                let ty = y == c.ref_y;
                let want = match raw & 3 {
                    0 => tx || ty,
                    1 => tx && ty,
                    2 => tx,
                    _ => ty,
                };
                assert_eq!(c.eval(x, y), want);
            }
        }
    }
}

#[test]
fn comparison_operators() {
    let nan = f32::NAN;
    assert!(CmpOp::Eq.eval(0.0, -0.0));
    assert!(!CmpOp::Eq.eval(nan, nan));
    assert!(CmpOp::Ne.eval(nan, 0.0));
    assert!(!CmpOp::Lt.eval(nan, 0.0) && !CmpOp::Ge.eval(0.0, nan));
    assert!(CmpOp::True6.eval(nan, nan) && CmpOp::True7.eval(0.0, 1.0));
    // cmp(s, 0) is false: the f24 subnormal pattern 0x00FFFF is a nonzero f32.
    assert!(!CmpOp::Eq.eval(f32::from_bits(0x207F_FF00), 0.0));
}

#[test]
fn opcode_table_is_consistent() {
    for &op in Opcode::ALL {
        assert_eq!(Opcode::from_code(op as u8), Some(op));
        assert_eq!(
            Opcode::from_mnemonic(&op.mnemonic().to_uppercase()),
            Some(op)
        );
        assert_eq!(
            op.defined_bits() >> 26,
            0x3F,
            "{op}: opcode bits are defined"
        );
    }
    assert_eq!(Opcode::from_code(0x2F), Some(Opcode::Cmp));
    assert_eq!(Opcode::from_code(0x37), Some(Opcode::Madi));
    assert_eq!(Opcode::from_code(0x3F), Some(Opcode::Mad));
}

#[test]
fn one_line_formatter() {
    let descs = [OperandDesc::new(
        WriteMask(0b1100),
        [true, false, false],
        [Swizzle(0x55), Swizzle::IDENTITY, Swizzle::IDENTITY],
    )
    .0];
    let i = Instruction::Binary {
        op: Opcode::Add,
        dst: DstReg::Output(1),
        src1: SrcReg::Const(4),
        src2: SrcReg::Temp(2),
        rel: RelIndex::A0X,
        desc: 0,
    };
    assert_eq!(
        format_instruction(&i, &descs),
        "add     o1.xy, -c4[a0.x].yyyy, r2"
    );
}
