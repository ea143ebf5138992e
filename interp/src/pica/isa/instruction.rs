//! Typed instructions and the word codec. [`decode`] is total: every 32-bit word decodes,
//! undefined opcodes to [`Instruction::Undefined`]. [`encode`] is its inverse on the bits an
//! opcode defines; [`unused_bits`] returns the rest so arbitrary words round-trip.

use super::opcode::{Format, Opcode};
use super::operand::{CmpOp, Condition, DstReg, OperandDesc, RelIndex, SrcReg, Swizzle};
use std::fmt;

/// One decoded instruction word. Field names follow the PICA200 documentation. `desc` indexes
/// the operand descriptor table. For the I-forms (DPHI, DSTI, SGEI, SLTI) `src2` is the wide source and
/// `rel` applies to it; otherwise `rel` applies to the wide source of the format (SRC1 for
/// formats 1/1u/1c, SRC2 for MAD, SRC3 for MADI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// Two-source arithmetic: ADD DP3 DP4 DPH DST MUL SGE SLT MAX MIN and the I-forms.
    Binary {
        op: Opcode,
        dst: DstReg,
        src1: SrcReg,
        src2: SrcReg,
        rel: RelIndex,
        desc: u8,
    },
    /// One-source arithmetic: EX2 LG2 LITP FLR RCP RSQ MOV.
    Unary {
        op: Opcode,
        dst: DstReg,
        src: SrcReg,
        rel: RelIndex,
        desc: u8,
    },
    /// MOVA: the descriptor's x/y mask bits select a0.x/a0.y.
    Mova {
        src: SrcReg,
        rel: RelIndex,
        desc: u8,
    },
    /// CMP: sets cmp.x and cmp.y.
    Cmp {
        src1: SrcReg,
        src2: SrcReg,
        rel: RelIndex,
        x: CmpOp,
        y: CmpOp,
        desc: u8,
    },
    /// MAD (`op` = Mad, SRC2 wide) or MADI (`op` = Madi, SRC3 wide). `desc` is 5 bits.
    Mad {
        op: Opcode,
        dst: DstReg,
        src1: SrcReg,
        src2: SrcReg,
        src3: SrcReg,
        rel: RelIndex,
        desc: u8,
    },
    /// NOP
    Nop,
    /// END
    End,
    /// BREAK
    Break,
    /// EMIT (geometry shaders)
    Emit,
    /// BREAKC
    BreakC { cond: Condition },
    /// CALL: run `num` words from `dest`, then return.
    Call { dest: u16, num: u8 },
    /// CALLC
    CallC { cond: Condition, dest: u16, num: u8 },
    /// CALLU: call if bool uniform `b` is set.
    CallU { b: u8, dest: u16, num: u8 },
    /// IFC: if true run to `dest` then jump to `dest + num`, else jump to `dest`.
    IfC { cond: Condition, dest: u16, num: u8 },
    /// IFU
    IfU { b: u8, dest: u16, num: u8 },
    /// LOOP over the words up to and including `dest`, with int uniform `i`.
    Loop { i: u8, dest: u16 },
    /// JMPC
    JmpC { cond: Condition, dest: u16 },
    /// JMPU: jump if bool `b` is set (clear, when `invert`).
    JmpU { b: u8, dest: u16, invert: bool },
    /// SETEMIT: vertex slot, primitive-emit flag and winding flag for the next EMIT.
    SetEmit {
        vtx: u8,
        primitive: bool,
        winding: bool,
    },
    /// A word whose opcode is undefined (0x10, 0x11, 0x14-0x17, 0x1C-0x1F).
    Undefined { word: u32 },
}

/// Why an [`Instruction`] cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A register does not fit the slot it was put in (for example a constant in a
    /// narrow source, or r16).
    BadRegister { slot: &'static str, reg: String },
    /// An operand field is out of range.
    OutOfRange {
        field: &'static str,
        value: u32,
        max: u32,
    },
    /// The opcode does not belong to this instruction shape.
    WrongOpcode(Opcode),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BadRegister { slot, reg } => {
                write!(f, "register {reg} cannot be used as {slot}")
            }
            EncodeError::OutOfRange { field, value, max } => {
                write!(f, "{field} = {value} is out of range (max {max})")
            }
            EncodeError::WrongOpcode(op) => write!(f, "opcode {op} does not fit this instruction"),
        }
    }
}

impl std::error::Error for EncodeError {}

#[inline]
fn bits(word: u32, lo: u32, len: u32) -> u32 {
    (word >> lo) & ((1 << len) - 1)
}

/// Where the operand fields of an arithmetic format (ALU formats, MOVA, CMP) sit in the word:
/// the one description of those words, which [`decode`] reads and [`encode`] writes.
struct Fields {
    format: Format,
    /// Low bit of the destination register (5 bits; MOVA and CMP have none).
    dst: u32,
    /// Low bit of each source, in source order: 7 bits for the format's wide source
    /// ([`Format::wide_source`]), 5 for the others (unused past [`Opcode::sources`]).
    src: [u32; 3],
    /// Low bit of the relative index (2 bits).
    rel: u32,
    /// Bits of the operand-descriptor index, from bit 0.
    desc: u32,
}

impl Fields {
    /// The fields of an arithmetic format; `None` for the others.
    fn of(format: Format) -> Option<Fields> {
        let (dst, src, rel, desc) = match format {
            Format::One | Format::OneU | Format::OneC => (21, [12, 7, 0], 19, 7),
            Format::OneI => (21, [14, 7, 0], 19, 7),
            Format::Five => (24, [17, 10, 5], 22, 5),
            Format::FiveI => (24, [17, 12, 5], 22, 5),
            _ => return None,
        };
        Some(Fields {
            format,
            dst,
            src,
            rel,
            desc,
        })
    }

    fn is_wide(&self, n: usize) -> bool {
        self.format.wide_source() == Some(n)
    }

    /// Source `n` of `word`.
    fn source(&self, word: u32, n: usize) -> SrcReg {
        if self.is_wide(n) {
            SrcReg::from_wide(bits(word, self.src[n], 7) as u8)
        } else {
            SrcReg::from_narrow(bits(word, self.src[n], 5) as u8)
        }
    }

    /// Source `n` (0-based) in its place, or why it does not fit there.
    fn put_source(&self, n: usize, r: SrcReg) -> Result<u32, EncodeError> {
        const SLOTS: [&str; 3] = ["source 1", "source 2", "source 3"];
        let field = if self.is_wide(n) { wide } else { narrow };
        Ok(field(SLOTS[n], r)? << self.src[n])
    }

    /// The destination in its place.
    fn put_dst(&self, r: DstReg) -> Result<u32, EncodeError> {
        Ok(dst_raw(r)? << self.dst)
    }

    /// The relative index and the descriptor index in their places.
    fn put_rel_desc(&self, rel: RelIndex, desc: u8) -> Result<u32, EncodeError> {
        let max = (1 << self.desc) - 1;
        Ok((rel.raw() as u32) << self.rel | check("descriptor", desc as u32, max)?)
    }
}

/// Decode one instruction word.
pub fn decode(word: u32) -> Instruction {
    let Some(op) = Opcode::from_code((word >> 26) as u8) else {
        return Instruction::Undefined { word };
    };
    let b = |lo, len| bits(word, lo, len);
    if let Some(f) = Fields::of(op.format()) {
        let has_dst = op != Opcode::Mova && op.format() != Format::OneC;
        let alu = Alu {
            op,
            desc: b(0, f.desc) as u8,
            dst: has_dst.then(|| DstReg::from_raw(b(f.dst, 5) as u8)),
            src: [0, 1, 2].map(|n| f.source(word, n)),
            rel: RelIndex::from_raw(b(f.rel, 2) as u8),
        };
        let cmp = (
            CmpOp::from_raw(b(24, 3) as u8),
            CmpOp::from_raw(b(21, 3) as u8),
        );
        return Instruction::from_alu(alu, cmp);
    }
    let dest = b(10, 12) as u16;
    let num = b(0, 8) as u8;
    let cond = Condition::from_raw(b(22, 4) as u8);
    match op.format() {
        Format::Zero => match op {
            Opcode::Nop => Instruction::Nop,
            Opcode::End => Instruction::End,
            Opcode::Break => Instruction::Break,
            _ => Instruction::Emit,
        },
        Format::Two => match op {
            Opcode::Breakc => Instruction::BreakC { cond },
            Opcode::Call => Instruction::Call { dest, num },
            Opcode::Callc => Instruction::CallC { cond, dest, num },
            Opcode::Ifc => Instruction::IfC { cond, dest, num },
            _ => Instruction::JmpC { cond, dest },
        },
        Format::Three => {
            let u = b(22, 4) as u8;
            match op {
                Opcode::Callu => Instruction::CallU { b: u, dest, num },
                Opcode::Ifu => Instruction::IfU { b: u, dest, num },
                Opcode::Loop => Instruction::Loop { i: u & 3, dest },
                _ => Instruction::JmpU {
                    b: u,
                    dest,
                    invert: num & 1 != 0,
                },
            }
        }
        Format::Four => Instruction::SetEmit {
            vtx: b(24, 2) as u8,
            primitive: b(23, 1) != 0,
            winding: b(22, 1) != 0,
        },
        _ => unreachable!("{op}: the arithmetic formats are decoded above"),
    }
}

/// Bits of `word` that its opcode ignores (all of them for undefined opcodes are kept by
/// [`Instruction::Undefined`] instead, so this returns 0 there).
pub fn unused_bits(word: u32) -> u32 {
    match Opcode::from_code((word >> 26) as u8) {
        Some(op) => word & !op.defined_bits(),
        None => 0,
    }
}

fn check(field: &'static str, value: u32, max: u32) -> Result<u32, EncodeError> {
    if value > max {
        Err(EncodeError::OutOfRange { field, value, max })
    } else {
        Ok(value)
    }
}

fn wide(slot: &'static str, r: SrcReg) -> Result<u32, EncodeError> {
    r.wide().map(u32::from).ok_or(EncodeError::BadRegister {
        slot,
        reg: r.to_string(),
    })
}

fn narrow(slot: &'static str, r: SrcReg) -> Result<u32, EncodeError> {
    r.narrow().map(u32::from).ok_or(EncodeError::BadRegister {
        slot,
        reg: r.to_string(),
    })
}

fn dst_raw(r: DstReg) -> Result<u32, EncodeError> {
    r.raw().map(u32::from).ok_or(EncodeError::BadRegister {
        slot: "destination",
        reg: r.to_string(),
    })
}

/// The opcode's bits, if its word layout is one of `allowed` (MOVA, though one-source, has
/// its own instruction shape).
fn expect(op: Opcode, allowed: &[Format]) -> Result<u32, EncodeError> {
    if allowed.contains(&op.format()) && op != Opcode::Mova {
        Ok((op as u32) << 26)
    } else {
        Err(EncodeError::WrongOpcode(op))
    }
}

/// Encode an instruction. Bits the opcode ignores are zero; OR in [`unused_bits`] of an
/// original word to reproduce it exactly.
pub fn encode(instr: &Instruction) -> Result<u32, EncodeError> {
    use Opcode::*;
    if let Some(alu) = instr.alu() {
        return encode_alu(instr, alu);
    }
    let flow = |op: Opcode, dest: u16, num: u8, upper: u32| -> Result<u32, EncodeError> {
        Ok((op as u32) << 26 | upper << 22 | check("dest", dest as u32, 0xFFF)? << 10 | num as u32)
    };
    Ok(match *instr {
        Instruction::Nop => (Nop as u32) << 26,
        Instruction::End => (End as u32) << 26,
        Instruction::Break => (Break as u32) << 26,
        Instruction::Emit => (Emit as u32) << 26,
        Instruction::BreakC { cond } => flow(Breakc, 0, 0, cond.raw() as u32)?,
        Instruction::Call { dest, num } => flow(Call, dest, num, 0)?,
        Instruction::CallC { cond, dest, num } => flow(Callc, dest, num, cond.raw() as u32)?,
        Instruction::IfC { cond, dest, num } => flow(Ifc, dest, num, cond.raw() as u32)?,
        Instruction::JmpC { cond, dest } => flow(Jmpc, dest, 0, cond.raw() as u32)?,
        Instruction::CallU { b, dest, num } => {
            flow(Callu, dest, num, check("bool", b as u32, 15)?)?
        }
        Instruction::IfU { b, dest, num } => flow(Ifu, dest, num, check("bool", b as u32, 15)?)?,
        Instruction::Loop { i, dest } => flow(Loop, dest, 0, check("int", i as u32, 3)?)?,
        Instruction::JmpU { b, dest, invert } => {
            flow(Jmpu, dest, invert as u8, check("bool", b as u32, 15)?)?
        }
        Instruction::SetEmit {
            vtx,
            primitive,
            winding,
        } => {
            (Setemit as u32) << 26
                | check("vertex id", vtx as u32, 3)? << 24
                | (primitive as u32) << 23
                | (winding as u32) << 22
        }
        Instruction::Undefined { word } => {
            if Opcode::from_code((word >> 26) as u8).is_some() {
                return Err(EncodeError::OutOfRange {
                    field: "undefined opcode",
                    value: word >> 26,
                    max: 0x3F,
                });
            }
            word
        }
        _ => unreachable!("arithmetic instructions are encoded by encode_alu"),
    })
}

/// [`encode`] for the arithmetic shapes. When several fields do not fit, the one reported is
/// the first in each shape's order below.
fn encode_alu(instr: &Instruction, a: Alu) -> Result<u32, EncodeError> {
    let code = match instr {
        Instruction::Binary { .. } => expect(a.op, &[Format::One, Format::OneI])?,
        Instruction::Unary { .. } => expect(a.op, &[Format::OneU])?,
        Instruction::Mad { .. } => expect(a.op, &[Format::Five, Format::FiveI])?,
        // MOVA and CMP: the shape is the opcode.
        _ => (a.op as u32) << 26,
    };
    let f = Fields::of(a.op.format()).ok_or(EncodeError::WrongOpcode(a.op))?;
    let src = |n| f.put_source(n, a.src[n]);
    let dst = || f.put_dst(a.dst.expect("the shape has a destination"));
    let tail = || f.put_rel_desc(a.rel, a.desc);
    Ok(match *instr {
        Instruction::Binary { .. } => code | src(0)? | src(1)? | dst()? | tail()?,
        Instruction::Unary { .. } => code | dst()? | src(0)? | tail()?,
        Instruction::Mova { .. } => code | src(0)? | tail()?,
        Instruction::Cmp { x, y, .. } => {
            code | (x.raw() as u32) << 24 | (y.raw() as u32) << 21 | src(0)? | src(1)? | tail()?
        }
        _ => {
            let (s2, s3) = (src(1)?, src(2)?);
            code | dst()? | src(0)? | s2 | s3 | tail()?
        }
    })
}

/// The register operands of an arithmetic instruction (ALU formats, MOVA and CMP), laid out
/// by the opcode table: source `n` uses descriptor slot `n`, and relative addressing applies
/// to the wide source only ([`Opcode::wide_source`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operands {
    /// The opcode (I-forms included; [`Opcode::base`] folds them).
    pub op: Opcode,
    /// Operand-descriptor index.
    pub desc: u8,
    /// The destination register; `None` for MOVA (a0) and CMP (the cmp flags).
    pub dst: Option<DstReg>,
    /// Source registers, [`Opcode::sources`] of them.
    pub src: [SrcReg; 3],
    /// The relative index of each source: the instruction's on the wide source,
    /// [`RelIndex::None`] on the others.
    pub rel: [RelIndex; 3],
}

impl Operands {
    /// The sources, with their descriptor slot and relative index.
    pub fn sources(&self) -> impl Iterator<Item = (usize, SrcReg, RelIndex)> + '_ {
        (0..self.op.sources()).map(|n| (n, self.src[n], self.rel[n]))
    }

    /// The register components (after the swizzle of descriptor `d`) source `n` reads, bit c
    /// = component c of the register.
    pub fn reads(&self, n: usize, d: OperandDesc) -> u8 {
        swizzled(self.op.reads(n, d.mask().components()), d.swizzle(n))
    }

    /// Of [`Operands::reads`], the register components read through the input flush.
    pub fn flushed(&self, n: usize, d: OperandDesc) -> u8 {
        swizzled(self.op.flushed(n, d.mask().components()), d.swizzle(n))
    }
}

/// Register components that operand components `m` (bit c = component c) come from.
fn swizzled(m: u8, swizzle: Swizzle) -> u8 {
    (0..4)
        .filter(|&c| m & (1 << c) != 0)
        .fold(0, |r, c| r | 1 << swizzle.lane(c))
}

/// The operand fields of an arithmetic instruction, sources in source order (a one-source
/// shape's source repeated): what [`Instruction::operands`] and [`encode`] read.
struct Alu {
    op: Opcode,
    desc: u8,
    dst: Option<DstReg>,
    src: [SrcReg; 3],
    /// The instruction's relative index (of its wide source).
    rel: RelIndex,
}

impl Instruction {
    fn alu(&self) -> Option<Alu> {
        let (op, desc, dst, src, rel) = match *self {
            Instruction::Binary {
                op,
                dst,
                src1,
                src2,
                rel,
                desc,
            } => (op, desc, Some(dst), [src1, src2, src1], rel),
            Instruction::Unary {
                op,
                dst,
                src,
                rel,
                desc,
            } => (op, desc, Some(dst), [src; 3], rel),
            Instruction::Mova { src, rel, desc } => (Opcode::Mova, desc, None, [src; 3], rel),
            Instruction::Cmp {
                src1,
                src2,
                rel,
                desc,
                ..
            } => (Opcode::Cmp, desc, None, [src1, src2, src1], rel),
            Instruction::Mad {
                op,
                dst,
                src1,
                src2,
                src3,
                rel,
                desc,
            } => (op, desc, Some(dst), [src1, src2, src3], rel),
            _ => return None,
        };
        Some(Alu {
            op,
            desc,
            dst,
            src,
            rel,
        })
    }

    /// The instruction of `a`'s shape (its opcode's format, with or without a destination),
    /// the inverse of [`Instruction::alu`]; `cmp` is CMP's (x, y).
    fn from_alu(a: Alu, cmp: (CmpOp, CmpOp)) -> Instruction {
        let Alu {
            op,
            desc,
            dst,
            src: [s1, s2, s3],
            rel,
        } = a;
        let (x, y) = cmp;
        match dst {
            None if op == Opcode::Mova => Instruction::Mova { src: s1, rel, desc },
            None => Instruction::Cmp {
                src1: s1,
                src2: s2,
                rel,
                x,
                y,
                desc,
            },
            Some(dst) => match op.format() {
                Format::OneU => Instruction::Unary {
                    op,
                    dst,
                    src: s1,
                    rel,
                    desc,
                },
                Format::Five | Format::FiveI => Instruction::Mad {
                    op,
                    dst,
                    src1: s1,
                    src2: s2,
                    src3: s3,
                    rel,
                    desc,
                },
                _ => Instruction::Binary {
                    op,
                    dst,
                    src1: s1,
                    src2: s2,
                    rel,
                    desc,
                },
            },
        }
    }

    /// The register operands, for instructions that have any (see [`Operands`]).
    pub fn operands(&self) -> Option<Operands> {
        let Alu {
            op,
            desc,
            dst,
            src,
            rel,
        } = self.alu()?;
        let mut rels = [RelIndex::None; 3];
        if let Some(w) = op.wide_source() {
            rels[w] = rel;
        }
        Some(Operands {
            op,
            desc,
            dst,
            src,
            rel: rels,
        })
    }

    /// The opcode, or `None` for undefined words.
    pub fn opcode(&self) -> Option<Opcode> {
        Some(match *self {
            Instruction::Binary { op, .. }
            | Instruction::Unary { op, .. }
            | Instruction::Mad { op, .. } => op,
            Instruction::Mova { .. } => Opcode::Mova,
            Instruction::Cmp { .. } => Opcode::Cmp,
            Instruction::Nop => Opcode::Nop,
            Instruction::End => Opcode::End,
            Instruction::Break => Opcode::Break,
            Instruction::Emit => Opcode::Emit,
            Instruction::BreakC { .. } => Opcode::Breakc,
            Instruction::Call { .. } => Opcode::Call,
            Instruction::CallC { .. } => Opcode::Callc,
            Instruction::CallU { .. } => Opcode::Callu,
            Instruction::IfC { .. } => Opcode::Ifc,
            Instruction::IfU { .. } => Opcode::Ifu,
            Instruction::Loop { .. } => Opcode::Loop,
            Instruction::JmpC { .. } => Opcode::Jmpc,
            Instruction::JmpU { .. } => Opcode::Jmpu,
            Instruction::SetEmit { .. } => Opcode::Setemit,
            Instruction::Undefined { .. } => return None,
        })
    }

    /// Operand-descriptor index, for instructions that have one.
    pub fn desc(&self) -> Option<u8> {
        self.operands().map(|o| o.desc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pica::isa::{Swizzle, WriteMask};

    #[test]
    fn operands_put_the_relative_index_on_the_wide_source() {
        let c = SrcReg::Const(4);
        let (r, t) = (SrcReg::Temp(1), SrcReg::Input(2));
        let cases = [
            (
                Instruction::Mad {
                    op: Opcode::Madi,
                    dst: DstReg::Output(0),
                    src1: r,
                    src2: t,
                    src3: c,
                    rel: RelIndex::AL,
                    desc: 0,
                },
                [RelIndex::None, RelIndex::None, RelIndex::AL],
            ),
            (
                Instruction::Binary {
                    op: Opcode::Dphi,
                    dst: DstReg::Temp(0),
                    src1: r,
                    src2: c,
                    rel: RelIndex::A0Y,
                    desc: 0,
                },
                [RelIndex::None, RelIndex::A0Y, RelIndex::None],
            ),
            (
                Instruction::Cmp {
                    src1: c,
                    src2: r,
                    rel: RelIndex::A0X,
                    x: CmpOp::Eq,
                    y: CmpOp::Lt,
                    desc: 0,
                },
                [RelIndex::A0X, RelIndex::None, RelIndex::None],
            ),
        ];
        for (instr, rel) in cases {
            let o = instr.operands().unwrap();
            assert_eq!(o.rel, rel, "{instr:?}");
            // Round trip through the word codec keeps the layout.
            assert_eq!(decode(encode(&instr).unwrap()).operands(), Some(o));
        }
        assert_eq!(Instruction::End.operands(), None);
    }

    #[test]
    fn reads_apply_the_swizzle() {
        let instr = Instruction::Unary {
            op: Opcode::Rcp,
            dst: DstReg::Temp(0),
            src: SrcReg::Temp(3),
            rel: RelIndex::None,
            desc: 0,
        };
        let o = instr.operands().unwrap();
        // RCP reads component x of the operand, which `.wzyx` takes from register w.
        let swz = Swizzle::from_lanes([3, 2, 1, 0]);
        let d = OperandDesc::new(WriteMask::XYZW, [false; 3], [swz; 3]);
        assert_eq!(o.reads(0, d), 0b1000);
        assert_eq!(o.flushed(0, d), 0b1000);
    }
}
