//! Turns code words plus descriptors into [`Op`]s the run loop can execute without
//! re-reading bit fields: swizzles become lane tables, registers become typed locations.

use crate::isa::{decode, Condition, DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg};
use crate::isa::{CmpOp, WriteMask};
use crate::program::Program;

/// Where a source operand is read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Loc {
    Input(u8),
    Temp(u8),
    /// A float uniform, with the address register added to its index.
    Const(u8, RelIndex),
}

/// A source operand after its descriptor has been applied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Src {
    pub loc: Loc,
    pub swizzle: [u8; 4],
    /// The swizzle is `.xyzw`, so reads can skip the lane shuffle.
    pub identity: bool,
    pub neg: bool,
}

/// A destination register and its lane mask.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Dst {
    pub output: bool,
    pub index: u8,
    pub mask: [bool; 4],
}

/// Arithmetic operations, I-forms folded into their base form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alu {
    Add,
    Dp3,
    Dp4,
    Dph,
    Dst,
    Mul,
    Sge,
    Slt,
    Max,
    Min,
    Ex2,
    Lg2,
    Litp,
    Flr,
    Rcp,
    Rsq,
    Mov,
}

/// One pre-decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    Alu2 {
        alu: Alu,
        dst: Dst,
        a: Src,
        b: Src,
    },
    Alu1 {
        alu: Alu,
        dst: Dst,
        a: Src,
    },
    Mad {
        dst: Dst,
        a: Src,
        b: Src,
        c: Src,
    },
    Mova {
        a: Src,
        mask: [bool; 2],
    },
    Cmp {
        a: Src,
        b: Src,
        x: CmpOp,
        y: CmpOp,
    },
    Nop,
    End,
    Break,
    BreakC(Condition),
    Emit,
    SetEmit {
        vtx: u8,
        primitive: bool,
        winding: bool,
    },
    Call {
        dest: u16,
        num: u8,
    },
    CallC {
        cond: Condition,
        dest: u16,
        num: u8,
    },
    CallU {
        b: u8,
        dest: u16,
        num: u8,
    },
    IfC {
        cond: Condition,
        dest: u16,
        num: u8,
    },
    IfU {
        b: u8,
        dest: u16,
        num: u8,
    },
    Loop {
        i: u8,
        dest: u16,
    },
    JmpC {
        cond: Condition,
        dest: u16,
    },
    JmpU {
        b: u8,
        dest: u16,
        invert: bool,
    },
    Undefined(u32),
}

fn src(reg: SrcReg, rel: RelIndex, desc: OperandDesc, n: usize) -> Src {
    let loc = match reg {
        SrcReg::Input(i) => Loc::Input(i),
        SrcReg::Temp(i) => Loc::Temp(i),
        SrcReg::Const(i) => Loc::Const(i, rel),
    };
    Src {
        loc,
        swizzle: desc.swizzle(n).lanes(),
        identity: desc.swizzle(n) == crate::isa::Swizzle::IDENTITY,
        neg: desc.neg(n),
    }
}

fn dst(reg: DstReg, mask: WriteMask) -> Dst {
    let (output, index) = match reg {
        DstReg::Output(i) => (true, i),
        DstReg::Temp(i) => (false, i),
    };
    Dst {
        output,
        index,
        mask: mask.lanes(),
    }
}

fn alu_of(op: Opcode) -> Alu {
    match op.base() {
        Opcode::Add => Alu::Add,
        Opcode::Dp3 => Alu::Dp3,
        Opcode::Dp4 => Alu::Dp4,
        Opcode::Dph => Alu::Dph,
        Opcode::Dst => Alu::Dst,
        Opcode::Mul => Alu::Mul,
        Opcode::Sge => Alu::Sge,
        Opcode::Slt => Alu::Slt,
        Opcode::Max => Alu::Max,
        Opcode::Min => Alu::Min,
        Opcode::Ex2 => Alu::Ex2,
        Opcode::Lg2 => Alu::Lg2,
        Opcode::Litp => Alu::Litp,
        Opcode::Flr => Alu::Flr,
        Opcode::Rcp => Alu::Rcp,
        Opcode::Rsq => Alu::Rsq,
        _ => Alu::Mov,
    }
}

/// Pre-decode one word.
pub(crate) fn predecode_word(word: u32, program: &Program) -> Op {
    let d = |i: u8| OperandDesc(program.opdesc(i as usize));
    match decode(word) {
        Instruction::Binary {
            op,
            dst: r,
            src1,
            src2,
            rel,
            desc,
        } => {
            let dd = d(desc);
            let (r1, r2) = if op.is_inverted() {
                (RelIndex::None, rel)
            } else {
                (rel, RelIndex::None)
            };
            Op::Alu2 {
                alu: alu_of(op),
                dst: dst(r, dd.mask()),
                a: src(src1, r1, dd, 0),
                b: src(src2, r2, dd, 1),
            }
        }
        Instruction::Unary {
            op,
            dst: r,
            src: s,
            rel,
            desc,
        } => {
            let dd = d(desc);
            Op::Alu1 {
                alu: alu_of(op),
                dst: dst(r, dd.mask()),
                a: src(s, rel, dd, 0),
            }
        }
        Instruction::Mova { src: s, rel, desc } => {
            let dd = d(desc);
            Op::Mova {
                a: src(s, rel, dd, 0),
                mask: [dd.mask().has(0), dd.mask().has(1)],
            }
        }
        Instruction::Cmp {
            src1,
            src2,
            rel,
            x,
            y,
            desc,
        } => {
            let dd = d(desc);
            Op::Cmp {
                a: src(src1, rel, dd, 0),
                b: src(src2, RelIndex::None, dd, 1),
                x,
                y,
            }
        }
        Instruction::Mad {
            op,
            dst: r,
            src1,
            src2,
            src3,
            rel,
            desc,
        } => {
            let dd = d(desc);
            let (r2, r3) = if op == Opcode::Madi {
                (RelIndex::None, rel)
            } else {
                (rel, RelIndex::None)
            };
            Op::Mad {
                dst: dst(r, dd.mask()),
                a: src(src1, RelIndex::None, dd, 0),
                b: src(src2, r2, dd, 1),
                c: src(src3, r3, dd, 2),
            }
        }
        Instruction::Nop => Op::Nop,
        Instruction::End => Op::End,
        Instruction::Break => Op::Break,
        Instruction::Emit => Op::Emit,
        Instruction::BreakC { cond } => Op::BreakC(cond),
        Instruction::Call { dest, num } => Op::Call { dest, num },
        Instruction::CallC { cond, dest, num } => Op::CallC { cond, dest, num },
        Instruction::CallU { b, dest, num } => Op::CallU { b, dest, num },
        Instruction::IfC { cond, dest, num } => Op::IfC { cond, dest, num },
        Instruction::IfU { b, dest, num } => Op::IfU { b, dest, num },
        Instruction::Loop { i, dest } => Op::Loop { i, dest },
        Instruction::JmpC { cond, dest } => Op::JmpC { cond, dest },
        Instruction::JmpU { b, dest, invert } => Op::JmpU { b, dest, invert },
        Instruction::SetEmit {
            vtx,
            primitive,
            winding,
        } => Op::SetEmit {
            vtx,
            primitive,
            winding,
        },
        Instruction::Undefined { word } => Op::Undefined(word),
    }
}
