//! Random test programs, for tests and fuzzing.
//!
//! [`generate`] builds a valid but arbitrary shader from a seed; [`from_bytes`] builds one from
//! arbitrary bytes used as the random stream (for `cargo fuzz`; the bytes also choose the
//! float mode and shader kind). Programs use every opcode and operand shape: all source
//! register classes, relative addressing, random swizzles, masks and negation, special-value
//! uniforms and inputs, and bounded but unstructured control flow (nested and overlapping
//! CALL/IF/LOOP regions, within and beyond the stack limits, BREAK/BREAKC, JMP into and out of
//! regions, END inside regions, jumps past the end, undefined opcodes).
//!
//! Values are register-representable for the mode: in F24 modes every uniform and input is an
//! f24 value (as the engine's upload paths guarantee); in F32 mode any f32 bit pattern.

use picajit_interp::float::{FloatMode, Rounding, F24};
use picajit_interp::isa::{
    encode, CmpOp, CondOp, Condition, DstReg, Format, Instruction, Opcode, OperandDesc, RelIndex,
    SrcReg, Swizzle, WriteMask,
};
use picajit_interp::program::{Program, ShaderKind};
use picajit_interp::state::Uniforms;

/// A generated test: program, uniforms, v0-v15 and the mode the values were made for.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// The program.
    pub program: Program,
    /// Uniforms (float, int and bool).
    pub uniforms: Uniforms,
    /// Input registers.
    pub inputs: [[f32; 4]; 16],
    /// Float mode the values are representable in.
    pub mode: FloatMode,
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Float mode (decides which values are representable).
    pub mode: FloatMode,
    /// Vertex or geometry (geometry programs also use SETEMIT/EMIT).
    pub kind: ShaderKind,
    /// Maximum number of code words.
    pub max_len: usize,
    /// Generate flow control (otherwise straight-line code ending in END).
    pub flow: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mode: FloatMode::default(),
            kind: ShaderKind::Vertex,
            max_len: 48,
            flow: true,
        }
    }
}

/// The random stream: a seeded xorshift generator, or a byte string (zeros once exhausted).
struct Stream<'a> {
    state: u64,
    bytes: Option<&'a [u8]>,
}

impl Stream<'_> {
    fn u32(&mut self) -> u32 {
        match &mut self.bytes {
            Some(b) => {
                let mut v = [0u8; 4];
                let n = b.len().min(4);
                v[..n].copy_from_slice(&b[..n]);
                *b = &b[n..];
                u32::from_le_bytes(v)
            }
            None => {
                // splitmix64
                self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = self.state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) >> 16) as u32
            }
        }
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u32) -> u32 {
        self.u32() % n.max(1)
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }
}

/// f24 bit patterns worth testing (zeros, subnormal patterns, 1.0 and neighbours, extremes,
/// infinities, NaNs, rounding-sensitive values). Shared with the fuzz targets.
pub const F24_SPECIALS: &[u32] = &[
    0x000000, 0x800000, 0x000001, 0x00FFFF, 0x80FFFF, 0x010000, 0x810000, 0x3F0000, 0xBF0000,
    0x3E0000, 0x400000, 0x408000, 0x7EFFFF, 0xFEFFFF, 0x7F0000, 0xFF0000, 0x7FFFFF, 0x7F8000,
    0xFF0001, 0x3F0001, 0x3FC000, 0x3F5555, 0x2E0000, 0xAD0000, 0x45FFFC, 0xC5FFFC, 0xBB9999,
    0x460000, 0x7E8000, 0x3EFFFF, 0x020000, 0x5E0000,
];

/// f32 bit patterns worth testing in F32 mode (and rounded to f24 in F24 modes).
pub const F32_SPECIALS: &[u32] = &[
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807F_FFFF,
    0x0080_0000,
    0x8080_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x3F00_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0xFFFF_FFFF,
    0x7F80_0001,
    0x4F00_0000,
    0xCF00_0001,
    0x5F80_0000,
    0x2080_0000,
    0x3F80_0001,
    0x3DCC_CCCD,
    0x4B00_0001,
    0x42FF_FE00,
];

fn value(s: &mut Stream, mode: FloatMode) -> f32 {
    let small = |s: &mut Stream| (s.below(17) as f32 - 8.0) * [1.0, 0.5, 0.25][s.below(3) as usize];
    match mode {
        FloatMode::F24(_) => match s.below(10) {
            0..=3 => F24::from_bits(s.pick(F24_SPECIALS)).to_f32(),
            4..=6 => F24::from_f32(small(s), Rounding::TowardZero).to_f32(),
            7 => {
                // Near 1.0 with random low mantissa bits (rounding-sensitive).
                F24::from_bits(0x3F0000 | (s.u32() & 0xFFFF) | (s.u32() & 1) << 23).to_f32()
            }
            _ => F24::from_bits(s.u32()).to_f32(),
        },
        FloatMode::F32 => match s.below(10) {
            0..=3 => f32::from_bits(s.pick(F32_SPECIALS)),
            4..=6 => small(s),
            7 => f32::from_bits(0x3F80_0000 | (s.u32() & 0x7F_FFFF) | (s.u32() & 1) << 31),
            _ => f32::from_bits(s.u32()),
        },
    }
}

fn swizzle(s: &mut Stream) -> Swizzle {
    if s.chance(40) {
        Swizzle::IDENTITY
    } else {
        Swizzle((s.u32() & 0xFF) as u8)
    }
}

fn descriptor(s: &mut Stream) -> u64 {
    let mask = if s.chance(45) {
        WriteMask::XYZW
    } else {
        WriteMask((s.u32() & 0xF) as u8)
    };
    let neg = [s.chance(25), s.chance(25), s.chance(25)];
    OperandDesc::new(mask, neg, [swizzle(s), swizzle(s), swizzle(s)]).0
}

fn wide(s: &mut Stream) -> SrcReg {
    match s.below(10) {
        0..=2 => SrcReg::Input(s.below(16) as u8),
        3..=5 => SrcReg::Temp(s.below(16) as u8),
        // Favour the low constants and the rows relative addressing may reach.
        6..=8 => SrcReg::Const(s.below(12) as u8),
        _ => SrcReg::Const(s.below(96) as u8),
    }
}

fn narrow(s: &mut Stream) -> SrcReg {
    if s.chance(50) {
        SrcReg::Input(s.below(16) as u8)
    } else {
        SrcReg::Temp(s.below(16) as u8)
    }
}

fn dst(s: &mut Stream) -> DstReg {
    if s.chance(40) {
        DstReg::Output(s.below(16) as u8)
    } else {
        DstReg::Temp(s.below(16) as u8)
    }
}

fn rel(s: &mut Stream) -> RelIndex {
    if s.chance(70) {
        RelIndex::None
    } else {
        RelIndex::from_raw(s.below(4) as u8)
    }
}

fn cond(s: &mut Stream) -> Condition {
    Condition {
        op: s.pick(&[CondOp::Or, CondOp::And, CondOp::X, CondOp::Y]),
        ref_x: s.chance(50),
        ref_y: s.chance(50),
    }
}

fn alu(s: &mut Stream) -> Instruction {
    use Opcode::*;
    match s.below(20) {
        0..=8 => {
            // The opcode table's two-source opcodes, ADD and MUL twice as often.
            let ops: Vec<Opcode> = Opcode::with_format(Format::One)
                .chain(Opcode::with_format(Format::OneI))
                .chain([Add, Mul])
                .collect();
            let op = s.pick(&ops);
            let (src1, src2) = if op.is_inverted() {
                (narrow(s), wide(s))
            } else {
                (wide(s), narrow(s))
            };
            Instruction::Binary {
                op,
                dst: dst(s),
                src1,
                src2,
                rel: rel(s),
                desc: s.below(128) as u8,
            }
        }
        9..=13 => Instruction::Unary {
            // One-source opcodes with a destination, MOV three times as often.
            op: s.pick(
                &Opcode::with_format(Format::OneU)
                    .filter(|&op| op != Mova)
                    .chain([Mov, Mov])
                    .collect::<Vec<_>>(),
            ),
            dst: dst(s),
            src: wide(s),
            rel: rel(s),
            desc: s.below(128) as u8,
        },
        14 => Instruction::Mova {
            src: wide(s),
            rel: rel(s),
            desc: s.below(128) as u8,
        },
        15..=16 => Instruction::Cmp {
            src1: wide(s),
            src2: narrow(s),
            rel: rel(s),
            x: CmpOp::from_raw(s.below(8) as u8),
            y: CmpOp::from_raw(s.below(8) as u8),
            desc: s.below(128) as u8,
        },
        _ => {
            let op = s.pick(&[Mad, Madi]);
            let (src2, src3) = if op == Madi {
                (narrow(s), wide(s))
            } else {
                (wide(s), narrow(s))
            };
            Instruction::Mad {
                op,
                dst: dst(s),
                src1: narrow(s),
                src2,
                src3,
                rel: rel(s),
                desc: s.below(32) as u8,
            }
        }
    }
}

fn flow(s: &mut Stream, pc: u32, len: u32, kind: ShaderKind) -> Instruction {
    // Targets: mostly nearby and forward, sometimes anywhere, rarely past the end.
    let near = |s: &mut Stream| (pc + 1 + s.below(6)).min(len + 1) as u16;
    let any = |s: &mut Stream| s.below(len + 2) as u16;
    let num = |s: &mut Stream| s.below(5) as u8;
    match s.below(26) {
        0..=3 => Instruction::IfC {
            cond: cond(s),
            dest: near(s),
            num: num(s),
        },
        4..=5 => Instruction::IfU {
            b: s.below(16) as u8,
            dest: near(s),
            num: num(s),
        },
        6..=8 => Instruction::Loop {
            i: s.below(4) as u8,
            dest: (pc + s.below(5)).min(len) as u16,
        },
        9 => Instruction::Call {
            dest: any(s),
            num: num(s),
        },
        10 => Instruction::CallC {
            cond: cond(s),
            dest: any(s),
            num: num(s),
        },
        11 => Instruction::CallU {
            b: s.below(16) as u8,
            dest: any(s),
            num: num(s),
        },
        12..=13 => Instruction::JmpC {
            cond: cond(s),
            dest: if s.chance(60) { near(s) } else { any(s) },
        },
        14 => Instruction::JmpU {
            b: s.below(16) as u8,
            dest: if s.chance(60) { near(s) } else { any(s) },
            invert: s.chance(50),
        },
        15..=16 => Instruction::BreakC { cond: cond(s) },
        17 => Instruction::Break,
        18 => Instruction::End,
        19 => Instruction::Nop,
        20 if s.chance(30) => Instruction::Undefined {
            word: (s.pick(&[0x10u32, 0x11, 0x14, 0x17, 0x1C, 0x1F]) << 26) | (s.u32() & 0x3FF_FFFF),
        },
        21..=23 if kind == ShaderKind::Geometry => Instruction::SetEmit {
            vtx: s.below(4) as u8,
            primitive: s.chance(50),
            winding: s.chance(50),
        },
        24..=25 if kind == ShaderKind::Geometry => Instruction::Emit,
        _ => alu(s),
    }
}

fn build(s: &mut Stream, cfg: &Config) -> TestCase {
    let mode = cfg.mode;
    let len = 2 + s.below(cfg.max_len.max(3) as u32 - 1);
    let mut code = Vec::with_capacity(len as usize);
    for pc in 0..len {
        let instr = if pc == len - 1 {
            Instruction::End
        } else if cfg.flow && s.chance(30) {
            flow(s, pc, len, cfg.kind)
        } else if cfg.kind == ShaderKind::Geometry && s.chance(10) {
            if s.chance(50) {
                Instruction::Emit
            } else {
                Instruction::SetEmit {
                    vtx: s.below(4) as u8,
                    primitive: s.chance(50),
                    winding: s.chance(50),
                }
            }
        } else {
            alu(s)
        };
        // Every generated instruction is encodable by construction.
        code.push(encode(&instr).unwrap_or(0x8400_0000));
    }
    let ndesc = 1 + s.below(128) as usize;
    let descs = (0..ndesc).map(|_| descriptor(s)).collect();
    let entry = if cfg.flow && s.chance(10) {
        s.below(len)
    } else {
        0
    };
    let program = Program::new(code, descs, entry, cfg.kind).expect("generated program is valid");

    let mut uniforms = Uniforms::default();
    for i in 0..96 {
        let v = [
            value(s, mode),
            value(s, mode),
            value(s, mode),
            value(s, mode),
        ];
        uniforms.set_float_raw(i, v);
    }
    for i in 0..4 {
        let count = if s.chance(80) {
            s.below(4)
        } else {
            s.below(256)
        } as u8;
        let start = if s.chance(50) {
            s.below(8)
        } else {
            s.below(256)
        } as u8;
        let step = if s.chance(60) {
            s.below(3)
        } else {
            s.below(256)
        } as u8;
        uniforms.set_int(i, [count, start, step, s.below(256) as u8]);
    }
    for b in 0..16 {
        uniforms.set_bool(b, s.chance(50));
    }
    let mut inputs = [[0.0; 4]; 16];
    for r in &mut inputs {
        for x in r.iter_mut() {
            *x = value(s, mode);
        }
    }
    TestCase {
        program,
        uniforms,
        inputs,
        mode,
    }
}

/// A random test case from `seed`.
pub fn generate(seed: u64, cfg: &Config) -> TestCase {
    let mut s = Stream {
        state: seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x1234_5678,
        bytes: None,
    };
    build(&mut s, cfg)
}

/// A test case built from arbitrary bytes (the fuzzing entry point). The first bytes choose
/// the float mode and shader kind; the rest drive every other choice.
pub fn from_bytes(bytes: &[u8]) -> TestCase {
    let mut s = Stream {
        state: 0,
        bytes: Some(bytes),
    };
    let head = s.u32();
    let mode = match head % 3 {
        0 => FloatMode::F24(Rounding::TowardZero),
        1 => FloatMode::F24(Rounding::NearestEven),
        _ => FloatMode::F32,
    };
    let kind = if (head >> 2) & 3 == 0 {
        ShaderKind::Geometry
    } else {
        ShaderKind::Vertex
    };
    let cfg = Config {
        mode,
        kind,
        max_len: 64,
        flow: (head >> 4) & 7 != 0,
    };
    build(&mut s, &cfg)
}

/// Shapes of large assembler inputs, for the assembler's memory benchmark and test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsmStress {
    /// One procedure of instruction lines with operands and trailing comments, far past the
    /// program size limit (so most lines become errors, which the assembler caps).
    Code,
    /// A small program followed by comment and blank lines.
    Comments,
    /// Label-only lines (a distinct label each) inside one procedure.
    Labels,
    /// Many units (`.unit`), each a small DVLE with declarations, until the code limit.
    Units,
}

impl AsmStress {
    /// Every shape.
    pub const ALL: [AsmStress; 4] = [
        AsmStress::Code,
        AsmStress::Comments,
        AsmStress::Labels,
        AsmStress::Units,
    ];

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            AsmStress::Code => "code",
            AsmStress::Comments => "comments",
            AsmStress::Labels => "labels",
            AsmStress::Units => "units",
        }
    }
}

/// An assembler source of about `bytes` bytes in `shape`.
pub fn asm_stress_source(shape: AsmStress, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 256);
    let body = [
        "    mov r0, r1",
        "    add r2, c5, r3",
        "    dp4 o0.x, c0, v0 ; a comment after the instruction",
        "    mad r1, r2, c3, r4",
        "    cmp c1, lt, ge, r0.xyzw",
    ];
    match shape {
        AsmStress::Code => {
            s.push_str(".proc main\n");
            let mut k = 0;
            while s.len() < bytes {
                s.push_str(body[k % body.len()]);
                s.push('\n');
                k += 1;
            }
            s.push_str("    end\n.end\n");
        }
        AsmStress::Comments => {
            s.push_str(".out outpos position\n.proc main\n    mov outpos, v0\n    end\n.end\n");
            let mut k = 0u64;
            while s.len() < bytes {
                s.push_str("; ");
                s.push_str(&k.to_string());
                s.push_str(" lighting term: diffuse * albedo + specular\n\n");
                k += 1;
            }
        }
        AsmStress::Labels => {
            s.push_str(".proc main\n");
            let mut k = 0u64;
            while s.len() < bytes {
                s.push('l');
                s.push_str(&k.to_string());
                s.push_str(":\n");
                k += 1;
            }
            s.push_str("    end\n.end\n");
        }
        AsmStress::Units => {
            let mut k = 0u64;
            while s.len() < bytes {
                s.push_str(".unit\n.fvec m");
                s.push_str(&k.to_string());
                s.push_str("[4]\n.constf k(1.0, 0.5, 0.25, 0.0)\n.in pos v0\n.out op position\n");
                s.push_str(".proc main\n    dp4 op.x, m");
                s.push_str(&k.to_string());
                s.push_str("[0], pos\n    mov op.yzw, k\n    end\n.end\n");
                k += 1;
            }
        }
    }
    s
}
