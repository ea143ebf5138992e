//! The fuzz targets' case format (`differential` and `engine` in `fuzz/`): the generator's
//! byte front end, which turns any byte string into a case and writes programs back into it
//! for the seed corpus.
//!
//! # Format
//!
//! The bytes are read front to back by an [`Rng`] in byte mode, which yields zeros once they run out, so
//! every byte string is a case and short strings are short programs. A case is:
//!
//! ```text
//! header   u8   bit 0: geometry shader; bit 1: raw program; bit 2: no END appended;
//!               bit 3: small budget; bit 4: SSE-only x64 code; bits 5-6: float mode (F24
//!               round-to-zero, F24 nearest-even, F32, or all three in turn); bit 7: initial
//!               temporaries, a0 and aL from the case (otherwise clean registers)
//! program       structured: count u8 (1 + count % 64 operations), then per operation a
//!                  class byte and that class's operand bytes (see `read_op`): ALU forms,
//!                  flow control with targets relative to the operation's address, raw and
//!                  undefined words;
//!               raw: count u16 (words, % 4200), words u32 each
//! descriptors   count u8 (% 129), then u32 each (raw mode: u64 each)
//! entry         u8: below 0xC0 entry 0, otherwise (b & 0x3F) % length (raw mode: u16)
//! budget        u8 (only with header bit 3)
//! int uniforms  4 x (count, start, step, w) bytes; count below 0xC0 becomes count % 6
//! bool uniforms u16
//! float rows    count u8 (% 16), then per row: index u8, 4 values
//! input rows    count u8 (% 8), then per row: index u8, 4 values
//! temporaries   (header bit 7 only) count u8 (% 8), then index u8 + 4 values;
//!               a0.x, a0.y, aL as i32
//! invocations   u8: geometry shaders run 1 + (b % 3) invocations on persistent registers
//! ```
//!
//! A value is one selector byte: an f24 special value (0x00-0x3F), an f32 special value
//! (0x40-0x7F), a small multiple of 1/4 (0x80-0xDF), or four more bytes of raw bits
//! (0xE0-0xFF). Values are converted per float mode so that F24-mode registers hold f24 values,
//! as the engine's upload paths guarantee (the JIT's input contract). Rows not given take a
//! deterministic mix of small numbers and special values.
//!
//! [`encode_structured`] and [`encode_raw`] write programs in this format; the seed corpus
//! (`fuzz/examples/make_seeds.rs`) uses them for the example shaders and the test programs.

use super::{Rng, F24_SPECIALS, F32_SPECIALS};
use picajit_interp::pica::float::{FloatMode, F24};
use picajit_interp::pica::isa::{
    decode, encode, CmpOp, Condition, DstReg, Format, Instruction, Opcode, RelIndex, SrcReg,
};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::{Registers, Uniforms};

/// Instruction budget of the differential target (small, so that each execution is fast).
pub const DIFF_BUDGET: u64 = 20_000;

/// Budget cap for code that runs under emulation (AArch64 code on other hosts), where every
/// guest instruction costs tens of host instructions: programs that exhaust a 20k budget
/// would make those executions take tens of milliseconds. The interpreter runs with the same
/// cap in those comparisons, so they stay exact.
pub const EMULATED_BUDGET: u64 = 2_000;

pub use super::MODES;

/// A value as the input describes it, before conversion to a float mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// `F24_SPECIALS[i]`.
    F24Special(u8),
    /// `F32_SPECIALS[i]`.
    F32Special(u8),
    /// `(k - 48) / 4`.
    Small(u8),
    /// Raw bits: the low 24 as f24 in F24 modes, all 32 as f32 in F32 mode.
    Raw(u32),
}

impl Value {
    fn read(r: &mut Rng) -> Value {
        match r.u8() {
            s @ 0x00..=0x3F => Value::F24Special(s % F24_SPECIALS.len() as u8),
            s @ 0x40..=0x7F => Value::F32Special((s - 0x40) % F32_SPECIALS.len() as u8),
            s @ 0x80..=0xDF => Value::Small(s - 0x80),
            _ => Value::Raw(r.u32()),
        }
    }

    fn write(self, out: &mut Vec<u8>) {
        match self {
            Value::F24Special(i) => out.push(i),
            Value::F32Special(i) => out.push(0x40 + i),
            Value::Small(k) => out.push(0x80 + k),
            Value::Raw(bits) => {
                out.push(0xFF);
                out.extend_from_slice(&bits.to_le_bytes());
            }
        }
    }

    /// The register contents this value stands for in `mode`.
    pub fn to_f32(self, mode: FloatMode) -> f32 {
        let x = match self {
            Value::F24Special(i) => {
                return F24::from_bits(F24_SPECIALS[i as usize % F24_SPECIALS.len()]).to_f32()
            }
            Value::F32Special(i) => f32::from_bits(F32_SPECIALS[i as usize % F32_SPECIALS.len()]),
            Value::Small(k) => (k as f32 - 48.0) * 0.25,
            Value::Raw(bits) => match mode {
                FloatMode::F24(_) => return F24::from_bits(bits & 0xFF_FFFF).to_f32(),
                FloatMode::F32 => f32::from_bits(bits),
            },
        };
        match mode {
            FloatMode::F24(r) => F24::from_f32(x, r).to_f32(),
            FloatMode::F32 => x,
        }
    }

    /// The default value of lane `lane` of row `row` of a bank (`salt` tells banks apart).
    fn default_for(salt: usize, row: usize, lane: usize) -> Value {
        let k = salt * 131 + row * 4 + lane;
        if k % 5 == 0 {
            Value::F24Special((k * 7 % F24_SPECIALS.len()) as u8)
        } else {
            Value::Small((k * 37 % 96) as u8)
        }
    }
}

/// A row override: register index and four values.
pub type Row = (u8, [Value; 4]);

fn read_row(r: &mut Rng) -> Row {
    let index = r.u8();
    (
        index,
        [
            Value::read(r),
            Value::read(r),
            Value::read(r),
            Value::read(r),
        ],
    )
}

/// One decoded fuzz case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The program, or why `Program::new` rejected it.
    pub program: Result<Program, String>,
    /// Vertex or geometry.
    pub kind: ShaderKind,
    /// Instruction budget per invocation.
    pub budget: u64,
    /// Generate x86-64 code without AVX.
    pub sse_only: bool,
    /// Float modes to run in.
    pub modes: Vec<FloatMode>,
    /// Int uniforms.
    pub ints: [[u8; 4]; 4],
    /// Bool uniforms.
    pub bools: u16,
    /// Float uniform overrides.
    pub floats: Vec<Row>,
    /// Input register overrides.
    pub inputs: Vec<Row>,
    /// Initial temporaries (vertex: before the single invocation; geometry: before the first).
    pub temps: Vec<Row>,
    /// Initial a0.x, a0.y, aL.
    pub addr: [i32; 3],
    /// Geometry-shader invocations in sequence.
    pub invocations: usize,
}

/// Operation classes of the structured program format.
const CLASSES: u8 = 22;

/// Flow target: relative to `pc` (forward or backward), absolute, or at/after the end.
fn target(b: u8, pc: u32, len: u32) -> u16 {
    let t = match b >> 6 {
        0 => pc + 1 + (b as u32 & 7),
        1 => pc.saturating_sub(b as u32 & 15),
        2 => (b as u32 & 63) % (len + 2),
        _ => len + (b as u32 & 3),
    };
    (t & 0xFFF) as u16
}

fn num(b: u8) -> u8 {
    if b >= 0xF0 {
        b
    } else {
        b % 6
    }
}

/// The opcode table's opcodes of one layout, in code order (the selector bytes of the
/// structured input index these lists).
fn ops_of(format: Format) -> Vec<Opcode> {
    Opcode::with_format(format)
        .filter(|&op| op != Opcode::Mova)
        .collect()
}

fn pick(list: &[Opcode], byte: u8) -> Opcode {
    list[byte as usize % list.len()]
}
const UNDEFINED: [u32; 8] = [0x10, 0x11, 0x14, 0x15, 0x16, 0x17, 0x1C, 0x1F];

/// How a source operand is read from its byte: [`SrcReg::from_wide`] or [`SrcReg::from_narrow`].
type SrcOf = fn(u8) -> SrcReg;

/// Read one structured operation at address `pc` of a `len`-word program.
fn read_op(r: &mut Rng, pc: u32, len: u32) -> u32 {
    let class = r.u8() % CLASSES;
    let instr = match class {
        // The two layouts of two-source operations: the wide source first, or second (the
        // I-forms).
        0 | 1 => {
            let (format, src1, src2): (_, SrcOf, SrcOf) = match class {
                0 => (Format::One, SrcReg::from_wide, SrcReg::from_narrow),
                _ => (Format::OneI, SrcReg::from_narrow, SrcReg::from_wide),
            };
            Instruction::Binary {
                op: pick(&ops_of(format), r.u8()),
                dst: DstReg::from_raw(r.u8()),
                src1: src1(r.u8()),
                src2: src2(r.u8()),
                rel: RelIndex::from_raw(r.u8() & 3),
                desc: r.u8() & 0x7F,
            }
        }
        2 => Instruction::Unary {
            op: pick(&ops_of(Format::OneU), r.u8()),
            dst: DstReg::from_raw(r.u8()),
            src: SrcReg::from_wide(r.u8()),
            rel: RelIndex::from_raw(r.u8() & 3),
            desc: r.u8() & 0x7F,
        },
        3 => Instruction::Mova {
            src: SrcReg::from_wide(r.u8()),
            rel: RelIndex::from_raw(r.u8() & 3),
            desc: r.u8() & 0x7F,
        },
        4 => {
            let ops = r.u8();
            Instruction::Cmp {
                src1: SrcReg::from_wide(r.u8()),
                src2: SrcReg::from_narrow(r.u8()),
                rel: RelIndex::from_raw(r.u8() & 3),
                x: CmpOp::from_raw(ops & 7),
                y: CmpOp::from_raw(ops >> 3 & 7),
                desc: r.u8() & 0x7F,
            }
        }
        5 => {
            let inverted = r.u8() & 1 != 0;
            let (dst, s1, s2, s3) = (r.u8(), r.u8(), r.u8(), r.u8());
            Instruction::Mad {
                op: if inverted { Opcode::Madi } else { Opcode::Mad },
                dst: DstReg::from_raw(dst),
                src1: SrcReg::from_narrow(s1),
                src2: if inverted {
                    SrcReg::from_narrow(s2)
                } else {
                    SrcReg::from_wide(s2)
                },
                src3: if inverted {
                    SrcReg::from_wide(s3)
                } else {
                    SrcReg::from_narrow(s3)
                },
                rel: RelIndex::from_raw(r.u8() & 3),
                desc: r.u8() & 0x1F,
            }
        }
        // IFC and CALLC, IFU and CALLU read the same fields: a condition or a boolean, a
        // target and a count.
        6 | 10 => {
            let (cond, dest, num) = (
                Condition::from_raw(r.u8() & 0xF),
                target(r.u8(), pc, len),
                num(r.u8()),
            );
            match class {
                6 => Instruction::IfC { cond, dest, num },
                _ => Instruction::CallC { cond, dest, num },
            }
        }
        7 | 11 => {
            let (b, dest, num) = (r.u8() & 15, target(r.u8(), pc, len), num(r.u8()));
            match class {
                7 => Instruction::IfU { b, dest, num },
                _ => Instruction::CallU { b, dest, num },
            }
        }
        8 => Instruction::Loop {
            i: r.u8() & 3,
            dest: target(r.u8(), pc, len),
        },
        9 => Instruction::Call {
            dest: target(r.u8(), pc, len),
            num: num(r.u8()),
        },
        12 => Instruction::JmpC {
            cond: Condition::from_raw(r.u8() & 0xF),
            dest: target(r.u8(), pc, len),
        },
        13 => {
            let b = r.u8();
            Instruction::JmpU {
                b: b & 15,
                invert: b & 0x10 != 0,
                dest: target(r.u8(), pc, len),
            }
        }
        14 => Instruction::BreakC {
            cond: Condition::from_raw(r.u8() & 0xF),
        },
        15 => Instruction::Break,
        16 => Instruction::End,
        17 => Instruction::Nop,
        18 => Instruction::Emit,
        19 => {
            let b = r.u8();
            Instruction::SetEmit {
                vtx: b & 3,
                primitive: b & 4 != 0,
                winding: b & 8 != 0,
            }
        }
        20 => return r.u32(),
        _ => {
            let w = r.u32();
            return UNDEFINED[(w >> 26) as usize % UNDEFINED.len()] << 26 | (w & 0x03FF_FFFF);
        }
    };
    // Every operation above is encodable by construction; NOP is a harmless stand-in.
    encode(&instr).unwrap_or(0x8400_0000)
}

impl Case {
    /// Decode a case from fuzzer bytes.
    pub fn decode(data: &[u8]) -> Case {
        let mut r = Rng::bytes(data);
        let header = r.u8();
        let kind = if header & 1 != 0 {
            ShaderKind::Geometry
        } else {
            ShaderKind::Vertex
        };
        let raw = header & 2 != 0;
        let mut code = Vec::new();
        let mut descs = Vec::new();
        let entry = if raw {
            let n = r.u16() as usize % 4200;
            for _ in 0..n {
                if r.rest().is_empty() {
                    break;
                }
                code.push(r.u32());
            }
            for _ in 0..r.u8() as usize % 129 {
                descs.push(r.u64());
            }
            r.u16() as u32
        } else {
            // The length is known before the operations so that flow targets can be placed
            // relative to it.
            let n = 1 + r.u8() as u32 % 64;
            let len = n + (header & 4 == 0) as u32;
            for pc in 0..n {
                code.push(read_op(&mut r, pc, len));
            }
            if header & 4 == 0 {
                code.push(encode(&Instruction::End).unwrap_or(0x8800_0000));
            }
            for _ in 0..r.u8() as usize % 129 {
                descs.push(r.u32() as u64);
            }
            let e = r.u8();
            if e < 0xC0 {
                0
            } else {
                (e as u32 & 0x3F) % code.len() as u32
            }
        };
        let budget = if header & 8 != 0 {
            r.u8() as u64
        } else {
            DIFF_BUDGET
        };
        let mut ints = [[0u8; 4]; 4];
        for row in &mut ints {
            for (k, x) in row.iter_mut().enumerate() {
                let b = r.u8();
                *x = if k == 0 && b < 0xC0 { b % 6 } else { b };
            }
        }
        let bools = r.u16();
        let floats = (0..r.u8() % 16).map(|_| read_row(&mut r)).collect();
        let inputs = (0..r.u8() % 8).map(|_| read_row(&mut r)).collect();
        let (temps, addr) = if header & 0x80 != 0 {
            let temps = (0..r.u8() % 8).map(|_| read_row(&mut r)).collect();
            (temps, [r.u32() as i32, r.u32() as i32, r.u32() as i32])
        } else {
            (Vec::new(), [0; 3])
        };
        let invocations = 1 + r.u8() as usize % 3;
        Case {
            program: Program::new(code, descs, entry, kind).map_err(|e| e.to_string()),
            kind,
            budget,
            sse_only: header & 0x10 != 0,
            modes: match header >> 5 & 3 {
                3 => MODES.to_vec(),
                m => vec![MODES[m as usize]],
            },
            ints,
            bools,
            floats,
            inputs,
            temps,
            addr,
            invocations,
        }
    }

    /// Uniforms in `mode`.
    pub fn uniforms(&self, mode: FloatMode) -> Uniforms {
        let mut u = Uniforms::default();
        for i in 0..96 {
            let row = [0, 1, 2, 3].map(|l| Value::default_for(1, i, l).to_f32(mode));
            u.set_float_raw(i, row);
        }
        for (index, row) in &self.floats {
            // Indices 96-127 are refused by the setter (read-only rows); that path is tested too.
            u.set_float_raw(*index as usize & 0x7F, row.map(|v| v.to_f32(mode)));
        }
        for (i, row) in self.ints.iter().enumerate() {
            u.set_int(i, *row);
        }
        for b in 0..16 {
            u.set_bool(b, self.bools >> b & 1 != 0);
        }
        u
    }

    /// Input registers v0-v15 in `mode`.
    pub fn inputs(&self, mode: FloatMode) -> [[f32; 4]; 16] {
        let mut v = [[0.0; 4]; 16];
        for (i, row) in v.iter_mut().enumerate() {
            *row = [0, 1, 2, 3].map(|l| Value::default_for(2, i, l).to_f32(mode));
        }
        for (index, row) in &self.inputs {
            v[*index as usize & 15] = row.map(|x| x.to_f32(mode));
        }
        v
    }

    /// Registers before the first invocation in `mode`.
    pub fn initial_registers(&self, mode: FloatMode) -> Registers {
        let mut regs = Registers::default();
        regs.input = self.inputs(mode);
        for (index, row) in &self.temps {
            regs.temp[*index as usize & 15] = row.map(|x| x.to_f32(mode));
        }
        regs.a0 = [self.addr[0], self.addr[1]];
        regs.al = self.addr[2];
        regs
    }
}

fn write_common_tail(out: &mut Vec<u8>, inputs: &[Row]) {
    // Int uniforms: i0 = 3 iterations from 0 step 1 (count 2), the others small loops.
    out.extend_from_slice(&[2, 0, 1, 0, 3, 4, 2, 0, 1, 8, 1, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&0x00F3u16.to_le_bytes()); // some bools set
    out.push(0); // no float overrides: the deterministic defaults
    out.push(inputs.len() as u8);
    for (index, row) in inputs {
        out.push(*index);
        for v in row {
            v.write(out);
        }
    }
    out.push(1); // two geometry invocations
}

/// Header bits 5-6 selecting float mode `MODES[m]` (3: all modes).
fn mode_bits(m: usize) -> u8 {
    (m.min(3) as u8) << 5
}

/// Encode a program in the raw format (code words and descriptors verbatim), to run in
/// `MODES[mode]` (3: every mode).
pub fn encode_raw(
    code: &[u32],
    opdescs: &[u64],
    entry: u16,
    kind: ShaderKind,
    mode: usize,
) -> Vec<u8> {
    let mut out = vec![2 | (kind == ShaderKind::Geometry) as u8 | mode_bits(mode)];
    out.extend_from_slice(&(code.len() as u16).to_le_bytes());
    for w in code {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.push(opdescs.len().min(128) as u8);
    for d in opdescs.iter().take(128) {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out.extend_from_slice(&entry.to_le_bytes());
    write_common_tail(&mut out, &[(0, [Value::Small(52); 4])]);
    out
}

/// Encode a program in the structured format when it fits (at most 64 words, no END appended,
/// entry 0 or below 64): each word becomes the operation that decodes to it, flow targets as
/// absolute targets where possible, and a raw-word operation otherwise. `mode` as for
/// [`encode_raw`].
pub fn encode_structured(
    code: &[u32],
    opdescs: &[u64],
    entry: u16,
    kind: ShaderKind,
    mode: usize,
) -> Option<Vec<u8>> {
    if code.is_empty() || code.len() > 64 || entry >= 64 || opdescs.len() > 128 {
        return None;
    }
    let len = code.len() as u32;
    let mut out = vec![
        4 | (kind == ShaderKind::Geometry) as u8 | mode_bits(mode),
        (len - 1) as u8,
    ];
    for (pc, &w) in code.iter().enumerate() {
        let mut op = encode_op(decode(w), pc as u32, len);
        // Use the structured form only when it reproduces the word exactly.
        let mut probe = Rng::bytes(op.as_deref().unwrap_or(&[]));
        if op.is_some() && read_op(&mut probe, pc as u32, len) != w {
            op = None;
        }
        match op {
            Some(bytes) => out.extend_from_slice(&bytes),
            None => {
                out.push(20);
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    out.push(opdescs.len() as u8);
    for d in opdescs {
        out.extend_from_slice(&(*d as u32).to_le_bytes());
    }
    out.push(if entry == 0 { 0 } else { 0xC0 | entry as u8 });
    write_common_tail(&mut out, &[(0, [Value::Small(52); 4])]);
    Some(out)
}

fn abs_target(dest: u16, len: u32) -> Option<u8> {
    // Mode 2 is (b & 63) % (len + 2); mode 3 is len + (b & 3).
    if (dest as u32) < 64 && (dest as u32) < len + 2 {
        Some(0x80 | dest as u8)
    } else if (len..len + 4).contains(&(dest as u32)) {
        Some(0xC0 | (dest as u32 - len) as u8)
    } else {
        None
    }
}

fn num_byte(n: u8) -> Option<u8> {
    (!(6..0xF0).contains(&n)).then_some(n)
}

fn src_byte(s: SrcReg) -> Option<u8> {
    s.wide()
}

fn encode_op(instr: Instruction, _pc: u32, len: u32) -> Option<Vec<u8>> {
    let pos = |list: &[Opcode], op: Opcode| list.iter().position(|&o| o == op).map(|p| p as u8);
    Some(match instr {
        Instruction::Binary {
            op,
            dst,
            src1,
            src2,
            rel,
            desc,
        } => {
            let (class, sel) = match pos(&ops_of(Format::One), op) {
                Some(p) => (0, p),
                None => (1, pos(&ops_of(Format::OneI), op)?),
            };
            vec![
                class,
                sel,
                dst.raw()?,
                src_byte(src1)?,
                src_byte(src2)?,
                rel.raw(),
                desc,
            ]
        }
        Instruction::Unary {
            op,
            dst,
            src,
            rel,
            desc,
        } => vec![
            2,
            pos(&ops_of(Format::OneU), op)?,
            dst.raw()?,
            src_byte(src)?,
            rel.raw(),
            desc,
        ],
        Instruction::Mova { src, rel, desc } => vec![3, src_byte(src)?, rel.raw(), desc],
        Instruction::Cmp {
            src1,
            src2,
            rel,
            x,
            y,
            desc,
        } => vec![
            4,
            x.raw() | y.raw() << 3,
            src_byte(src1)?,
            src_byte(src2)?,
            rel.raw(),
            desc,
        ],
        Instruction::Mad {
            op,
            dst,
            src1,
            src2,
            src3,
            rel,
            desc,
        } => vec![
            5,
            op.is_inverted() as u8,
            dst.raw()?,
            src_byte(src1)?,
            src_byte(src2)?,
            src_byte(src3)?,
            rel.raw(),
            desc,
        ],
        Instruction::IfC { cond, dest, num } => {
            vec![6, cond.raw(), abs_target(dest, len)?, num_byte(num)?]
        }
        Instruction::IfU { b, dest, num } => vec![7, b, abs_target(dest, len)?, num_byte(num)?],
        Instruction::Loop { i, dest } => vec![8, i, abs_target(dest, len)?],
        Instruction::Call { dest, num } => vec![9, abs_target(dest, len)?, num_byte(num)?],
        Instruction::CallC { cond, dest, num } => {
            vec![10, cond.raw(), abs_target(dest, len)?, num_byte(num)?]
        }
        Instruction::CallU { b, dest, num } => {
            vec![11, b, abs_target(dest, len)?, num_byte(num)?]
        }
        Instruction::JmpC { cond, dest } => vec![12, cond.raw(), abs_target(dest, len)?],
        Instruction::JmpU { b, dest, invert } => {
            vec![13, b | (invert as u8) << 4, abs_target(dest, len)?]
        }
        Instruction::BreakC { cond } => vec![14, cond.raw()],
        Instruction::Break => vec![15],
        Instruction::End => vec![16],
        Instruction::Nop => vec![17],
        Instruction::Emit => vec![18],
        Instruction::SetEmit {
            vtx,
            primitive,
            winding,
        } => vec![19, vtx | (primitive as u8) << 2 | (winding as u8) << 3],
        Instruction::Undefined { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_encoding_round_trips() {
        let code = [
            encode(&Instruction::Loop { i: 0, dest: 2 }).unwrap(),
            encode(&Instruction::Nop).unwrap(),
            encode(&Instruction::BreakC {
                cond: Condition::from_raw(3),
            })
            .unwrap(),
            0x5000_1234, // undefined opcode: kept as a raw word
            encode(&Instruction::End).unwrap(),
        ];
        let bytes = encode_structured(&code, &[0x1B, 0x2F], 0, ShaderKind::Vertex, 1).unwrap();
        let case = Case::decode(&bytes);
        let p = case.program.unwrap();
        assert_eq!(p.code(), &code);
        assert_eq!(p.opdescs(), &[0x1B, 0x2F]);
        assert_eq!(case.modes, [MODES[1]]);
        let raw = encode_raw(&code, &[0x1B], 4, ShaderKind::Geometry, 3);
        let p = Case::decode(&raw).program.unwrap();
        assert_eq!(
            (p.code(), p.entry(), p.kind()),
            (&code[..], 4, ShaderKind::Geometry)
        );
    }

    #[test]
    fn empty_input_is_a_case() {
        let case = Case::decode(&[]);
        assert!(case.program.is_ok());
        assert_eq!(case.budget, DIFF_BUDGET);
    }
}
