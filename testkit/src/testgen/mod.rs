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

pub mod bytes;
pub mod points;

use picajit_interp::pica::float::{FloatMode, Rounding, F24};
use picajit_interp::pica::isa::{
    encode, CmpOp, CondOp, Condition, DstReg, Format, Instruction, Opcode, OperandDesc, RelIndex,
    SrcReg, Swizzle, WriteMask,
};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::Uniforms;

/// Every float mode the engines implement, in the order the tests run them.
pub const MODES: [FloatMode; 3] = [
    FloatMode::F24(Rounding::TowardZero),
    FloatMode::F24(Rounding::NearestEven),
    FloatMode::F32,
];

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
    /// The program tree and what it was built to do, for [`Shape::Points`] cases.
    pub points: Option<Box<points::Case>>,
}

/// What to generate: one options struct for every shape the tests, benches and fuzz targets
/// use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Float mode (decides which values are representable).
    pub mode: FloatMode,
    /// Vertex or geometry (geometry programs also use SETEMIT/EMIT). [`Shape::Points`]
    /// programs are always geometry shaders.
    pub kind: ShaderKind,
    /// [`Shape::Arbitrary`]: maximum number of code words. [`Shape::Points`]: about how many
    /// operations `main` has.
    pub max_len: usize,
    /// Generate flow control (otherwise straight-line code ending in END).
    pub flow: bool,
    /// Which kind of program.
    pub shape: Shape,
}

/// The program shapes of [`Options`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Any instruction of the opcode table with any operand shape, and unstructured control
    /// flow (see the module docs): what the differential tests and fuzzing run.
    Arbitrary,
    /// Point-mode geometry programs built to be eligible for the eight-invocation path, as a
    /// tree that [`points::mutate`] can break one eligibility rule at a time (see [`points`]).
    /// `quirks` lets some blocks end in a structured node or a jump.
    Points {
        /// See [`points`]' module docs.
        quirks: bool,
    },
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: FloatMode::default(),
            kind: ShaderKind::Vertex,
            max_len: 48,
            flow: true,
            shape: Shape::Arbitrary,
        }
    }
}

/// The random stream every shape draws from: a seeded splitmix64 generator, or a byte string
/// read front to back (zeros once it is exhausted), which is how fuzzer bytes drive the same
/// choices. The fuzz targets' case format ([`bytes`]) reads its bytes through it too.
#[derive(Clone, Debug)]
pub struct Rng<'a> {
    state: u64,
    bytes: Option<&'a [u8]>,
}

impl<'a> Rng<'a> {
    /// splitmix64 starting from `state` as it is.
    pub fn new(state: u64) -> Rng<'static> {
        Rng { state, bytes: None }
    }

    /// splitmix64 from a test seed, mixed so that small consecutive seeds start far apart
    /// (what [`generate`] uses).
    pub fn seeded(seed: u64) -> Rng<'static> {
        Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x1234_5678)
    }

    /// The bytes of `data` as the random stream.
    pub fn bytes(data: &'a [u8]) -> Rng<'a> {
        Rng {
            state: 0,
            bytes: Some(data),
        }
    }

    /// The next 32 random bits (four bytes, little-endian, in byte mode).
    pub fn u32(&mut self) -> u32 {
        match &mut self.bytes {
            Some(b) => {
                let mut v = [0u8; 4];
                let n = b.len().min(4);
                v[..n].copy_from_slice(&b[..n]);
                *b = &b[n..];
                u32::from_le_bytes(v)
            }
            None => {
                self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = self.state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) >> 16) as u32
            }
        }
    }

    /// The next byte (the low byte of [`Self::u32`] when seeded).
    pub fn u8(&mut self) -> u8 {
        match &mut self.bytes {
            Some(b) => match b.split_first() {
                Some((&x, rest)) => {
                    *b = rest;
                    x
                }
                None => 0,
            },
            None => self.u32() as u8,
        }
    }

    /// Little-endian u16 of two [`Self::u8`]s.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// Little-endian u64 of two [`Self::u32`]s.
    pub fn u64(&mut self) -> u64 {
        self.u32() as u64 | (self.u32() as u64) << 32
    }

    /// The bytes not read yet (empty when seeded).
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.unwrap_or(&[])
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.u32() % n.max(1)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }

    /// A random non-empty subset of the bits of `set` (which must be non-zero).
    pub fn subset(&mut self, set: u8) -> u8 {
        loop {
            let s = set & (self.u32() as u8);
            if s != 0 {
                return s;
            }
        }
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

fn arbitrary_value(s: &mut Rng, mode: FloatMode) -> f32 {
    let small = |s: &mut Rng| (s.below(17) as f32 - 8.0) * [1.0, 0.5, 0.25][s.below(3) as usize];
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

fn swizzle(s: &mut Rng) -> Swizzle {
    if s.chance(40) {
        Swizzle::IDENTITY
    } else {
        Swizzle((s.u32() & 0xFF) as u8)
    }
}

fn descriptor(s: &mut Rng) -> u64 {
    let mask = if s.chance(45) {
        WriteMask::XYZW
    } else {
        WriteMask((s.u32() & 0xF) as u8)
    };
    let neg = [s.chance(25), s.chance(25), s.chance(25)];
    OperandDesc::new(mask, neg, [swizzle(s), swizzle(s), swizzle(s)]).0
}

fn wide(s: &mut Rng) -> SrcReg {
    match s.below(10) {
        0..=2 => SrcReg::Input(s.below(16) as u8),
        3..=5 => SrcReg::Temp(s.below(16) as u8),
        // Favour the low constants and the rows relative addressing may reach.
        6..=8 => SrcReg::Const(s.below(12) as u8),
        _ => SrcReg::Const(s.below(96) as u8),
    }
}

fn narrow(s: &mut Rng) -> SrcReg {
    if s.chance(50) {
        SrcReg::Input(s.below(16) as u8)
    } else {
        SrcReg::Temp(s.below(16) as u8)
    }
}

/// The two register sources of an instruction whose wide source comes second when
/// `inverted` (the I-forms, MADI), drawn first to second.
fn sources(s: &mut Rng, inverted: bool) -> (SrcReg, SrcReg) {
    if inverted {
        (narrow(s), wide(s))
    } else {
        (wide(s), narrow(s))
    }
}

fn dst(s: &mut Rng) -> DstReg {
    if s.chance(40) {
        DstReg::Output(s.below(16) as u8)
    } else {
        DstReg::Temp(s.below(16) as u8)
    }
}

fn rel(s: &mut Rng) -> RelIndex {
    if s.chance(70) {
        RelIndex::None
    } else {
        RelIndex::from_raw(s.below(4) as u8)
    }
}

fn cond(s: &mut Rng) -> Condition {
    Condition {
        op: s.pick(&[CondOp::Or, CondOp::And, CondOp::X, CondOp::Y]),
        ref_x: s.chance(50),
        ref_y: s.chance(50),
    }
}

fn alu(s: &mut Rng) -> Instruction {
    use Opcode::*;
    match s.below(20) {
        0..=8 => {
            // The opcode table's two-source opcodes, ADD and MUL twice as often.
            let ops: Vec<Opcode> = Opcode::with_format(Format::One)
                .chain(Opcode::with_format(Format::OneI))
                .chain([Add, Mul])
                .collect();
            let op = s.pick(&ops);
            let (src1, src2) = sources(s, op.is_inverted());
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
            let (src2, src3) = sources(s, op == Madi);
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

fn flow(s: &mut Rng, pc: u32, len: u32, kind: ShaderKind) -> Instruction {
    // Targets: mostly nearby and forward, sometimes anywhere, rarely past the end.
    let near = |s: &mut Rng| (pc + 1 + s.below(6)).min(len + 1) as u16;
    let any = |s: &mut Rng| s.below(len + 2) as u16;
    let num = |s: &mut Rng| s.below(5) as u8;
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

fn build(s: &mut Rng, cfg: &Options) -> TestCase {
    if let Shape::Points { .. } = cfg.shape {
        let case = points::generate(s, cfg);
        return TestCase {
            program: case.gen.program(),
            uniforms: case.uniforms.clone(),
            inputs: vec4s(s, cfg.mode, Values::AddressLike),
            mode: cfg.mode,
            points: Some(Box::new(case)),
        };
    }
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
    let uniforms = uniforms(s, mode, Values::Arbitrary);
    let inputs = vec4s(s, mode, Values::Arbitrary);
    TestCase {
        program,
        uniforms,
        inputs,
        mode,
        points: None,
    }
}

/// Which value distribution [`value`] draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Special values 40% of the time, small multiples of 1/4, values near 1.0 with random
    /// low mantissa bits (rounding-sensitive), any bit pattern; loop counts up to 255.
    Arbitrary,
    /// Special values 40% of the time, small numbers and address-like integers often, random
    /// mantissas within a moderate exponent range; loop counts mostly short (below 24).
    AddressLike,
    /// What the vertices of a batch get ([`batch_inputs`]): special values half of the time
    /// (the lists above and [`MORE_F24_SPECIALS`]/[`MORE_F32_SPECIALS`]), small integers (bone
    /// indices, loop-ish values) sometimes, otherwise random mantissas (f24: moderate
    /// exponents; f32: any pattern).
    Batch,
}

/// More f24 patterns [`Values::Batch`] draws besides [`F24_SPECIALS`]: values near 0.5, 1, 2
/// and 8 that the multi-vertex EX2/LG2 and rounding paths treat specially.
pub const MORE_F24_SPECIALS: &[u32] = &[0x3D0000, 0x410000, 0x450000, 0x3E8000];

/// More f32 patterns [`Values::Batch`] draws besides [`F32_SPECIALS`] (2.0, 2^23, -2^31 and
/// the largest value below 2.0).
pub const MORE_F32_SPECIALS: &[u32] = &[0x4000_0000, 0x4B00_0000, 0xCF00_0000, 0x3FFF_FFFF];

/// The edges of MOVA, LITP and CMP as raw f32 bits (the same in every mode: none of the
/// three flushes or rounds). `tests/jit_common/cases.rs` runs them through the per-vertex
/// code, `tests/jit_batch.rs` through the lane code.
pub const MOVA_LITP_CMP_EDGES: [u32; 42] = [
    // Zeros, subnormals, the smallest normal.
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x0080_0000,
    // ±0.5, ±1, ±1.5: truncation toward zero.
    0x3F00_0000,
    0xBF00_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x3FC0_0000,
    0xBFC0_0000,
    // 127 and just below 128; ±the LITP limit, one ulp either side, and beyond it.
    0x42FE_0000,
    0x42FE_FFFF,
    0x42FF_FDFF,
    0x42FF_FE00,
    0x42FF_FE01,
    0x42FF_FF00,
    0xC2FF_FDFF,
    0xC2FF_FE00,
    0xC2FF_FE01,
    0xC2FF_FF00,
    // The a0 range: 128, -128, -128.5, -129.
    0x4300_0000,
    0xC300_0000,
    0xC300_8000,
    0xC301_0000,
    // The i32 range: below, at and above ±2^31.
    0x4EFF_FFFF,
    0x4F00_0000,
    0x4F00_0001,
    0xCEFF_FFFF,
    0xCF00_0000,
    0xCF00_0001,
    // ±2^64 (F24 overflow), the largest finite values, infinities.
    0x5F80_0000,
    0xDF80_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x7F80_0000,
    0xFF80_0000,
    // NaNs: quiet, negative, signalling, all ones.
    0x7FC0_0000,
    0xFFC0_0000,
    0x7F80_0001,
    0x7FBF_FFFF,
    0xFFFF_FFFF,
];

/// Per-vertex inputs of a batch of `n`: vertex 0 keeps `base`, the others mix it with fresh
/// [`Values::Batch`] values component by component.
pub fn batch_inputs(
    base: &[[f32; 4]; 16],
    n: usize,
    mode: FloatMode,
    s: &mut Rng,
) -> Vec<[[f32; 4]; 16]> {
    (0..n)
        .map(|k| {
            let mut row = *base;
            if k > 0 {
                for reg in row.iter_mut() {
                    for x in reg.iter_mut() {
                        if s.below(3) != 0 {
                            *x = value(s, mode, Values::Batch);
                        }
                    }
                }
            }
            row
        })
        .collect()
}

/// A register value for `mode` from distribution `dist`: an f24 value in F24 modes (the
/// input contract), any f32 pattern in F32 mode.
pub fn value(s: &mut Rng, mode: FloatMode, dist: Values) -> f32 {
    let f24 = matches!(mode, FloatMode::F24(_));
    match dist {
        Values::Arbitrary => arbitrary_value(s, mode),
        Values::AddressLike => match s.below(10) {
            0..=3 => {
                if f24 {
                    F24::from_bits(s.pick(F24_SPECIALS)).to_f32()
                } else {
                    f32::from_bits(s.pick(F32_SPECIALS))
                }
            }
            4..=5 => (s.below(33) as f32 - 16.0) * [1.0, 0.5, 0.25][s.below(3) as usize],
            6 => s.below(300) as f32 - 150.0,
            _ => {
                if f24 {
                    let e = 40 + s.below(48);
                    F24::from_bits((s.u32() & 0x80_FFFF) | (e << 16)).to_f32()
                } else if s.chance(50) {
                    f32::from_bits(s.u32() ^ (s.u32() << 16))
                } else {
                    let e = 100 + s.below(56);
                    f32::from_bits((s.u32() & 0x807F_FFFF) | (e << 23))
                }
            }
        },
        Values::Batch => match s.below(10) {
            0..=4 => {
                let (a, b) = if f24 {
                    (F24_SPECIALS, MORE_F24_SPECIALS)
                } else {
                    (F32_SPECIALS, MORE_F32_SPECIALS)
                };
                let k = s.below((a.len() + b.len()) as u32) as usize;
                let bits = if k < a.len() { a[k] } else { b[k - a.len()] };
                if f24 {
                    F24::from_bits(bits).to_f32()
                } else {
                    f32::from_bits(bits)
                }
            }
            5 => s.below(200) as f32 - 100.0,
            _ => {
                if f24 {
                    let e = 40 + s.below(48);
                    F24::from_bits((s.u32() & 0x80_FFFF) | (e << 16)).to_f32()
                } else {
                    f32::from_bits(s.u32() ^ (s.u32() << 16))
                }
            }
        },
    }
}

/// Four [`value`]s.
pub fn vec4(s: &mut Rng, mode: FloatMode, dist: Values) -> [f32; 4] {
    [
        value(s, mode, dist),
        value(s, mode, dist),
        value(s, mode, dist),
        value(s, mode, dist),
    ]
}

/// Sixteen [`vec4`]s: a register bank (inputs v0-v15).
pub fn vec4s(s: &mut Rng, mode: FloatMode, dist: Values) -> [[f32; 4]; 16] {
    let mut bank = [[0.0; 4]; 16];
    for r in &mut bank {
        *r = vec4(s, mode, dist);
    }
    bank
}

/// Uniforms: [`value`]s in the 96 float rows, loop counts mostly below 4 (sometimes long
/// ones, how long depending on `dist`), starts and steps mostly small, random bools.
pub fn uniforms(s: &mut Rng, mode: FloatMode, dist: Values) -> Uniforms {
    let (short_counts, long_counts, small_starts) = match dist {
        Values::Arbitrary | Values::Batch => (80, 256, 50),
        Values::AddressLike => (85, 24, 60),
    };
    let mut u = Uniforms::default();
    for i in 0..96 {
        let v = vec4(s, mode, dist);
        u.set_float_raw(i, v);
    }
    for i in 0..4 {
        let count = if s.chance(short_counts) {
            s.below(4)
        } else {
            s.below(long_counts)
        } as u8;
        let start = if s.chance(small_starts) {
            s.below(8)
        } else {
            s.below(256)
        } as u8;
        let step = if s.chance(60) {
            s.below(3)
        } else {
            s.below(256)
        } as u8;
        u.set_int(i, [count, start, step, s.below(256) as u8]);
    }
    for b in 0..16 {
        u.set_bool(b, s.chance(50));
    }
    u
}

/// Round to what a register of `mode` holds (for values written as f32 literals).
pub fn to_mode(x: f32, mode: FloatMode) -> f32 {
    match mode {
        FloatMode::F24(_) => F24::from_f32(x, Rounding::TowardZero).to_f32(),
        FloatMode::F32 => x,
    }
}

/// A random test case from `seed`.
pub fn generate(seed: u64, cfg: &Options) -> TestCase {
    build(&mut Rng::seeded(seed), cfg)
}

/// A random test case drawn from `rng` (for callers that keep drawing from the same stream).
pub fn generate_from(rng: &mut Rng, cfg: &Options) -> TestCase {
    build(rng, cfg)
}

/// A test case built from arbitrary bytes (the fuzzing entry point). The first bytes choose
/// the float mode and shader kind; the rest drive every other choice.
pub fn from_bytes(bytes: &[u8]) -> TestCase {
    let mut s = Rng::bytes(bytes);
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
    let cfg = Options {
        mode,
        kind,
        max_len: 64,
        flow: (head >> 4) & 7 != 0,
        shape: Shape::Arbitrary,
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
    // Appends piece k, k = 0, 1, ..., until the source holds `bytes` bytes.
    let fill = |s: &mut String, piece: &dyn Fn(usize) -> String| {
        let mut k = 0;
        while s.len() < bytes {
            s.push_str(&piece(k));
            k += 1;
        }
    };
    match shape {
        AsmStress::Code => {
            s.push_str(".proc main\n");
            fill(&mut s, &|k| format!("{}\n", body[k % body.len()]));
            s.push_str("    end\n.end\n");
        }
        AsmStress::Comments => {
            s.push_str(".out outpos position\n.proc main\n    mov outpos, v0\n    end\n.end\n");
            fill(&mut s, &|k| {
                format!("; {k} lighting term: diffuse * albedo + specular\n\n")
            });
        }
        AsmStress::Labels => {
            s.push_str(".proc main\n");
            fill(&mut s, &|k| format!("l{k}:\n"));
            s.push_str("    end\n.end\n");
        }
        AsmStress::Units => fill(&mut s, &|k| {
            format!(
                ".unit\n.fvec m{k}[4]\n.constf k(1.0, 0.5, 0.25, 0.0)\n.in pos v0\n.out op position\n\
                 .proc main\n    dp4 op.x, m{k}[0], pos\n    mov op.yzw, k\n    end\n.end\n"
            )
        }),
    }
    s
}
