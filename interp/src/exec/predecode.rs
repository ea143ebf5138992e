//! Turns code words plus descriptors into [`Op`]s the run loop can execute without
//! re-reading bit fields: swizzles become lane tables, registers become typed locations.

use crate::isa::{decode, Condition, DstReg, Instruction, OperandDesc, RelIndex, SrcReg};
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

/// What an arithmetic instruction computes: the opcode table's unit (I-forms share their
/// twin's).
pub(crate) use crate::isa::Unit as Alu;

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
    Alu3 {
        alu: Alu,
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

/// Pre-decode one word.
pub(crate) fn predecode_word(word: u32, program: &Program) -> Op {
    let d = |i: u8| OperandDesc(program.opdesc(i as usize));
    let instr = decode(word);
    if let Some(ops) = instr.operands() {
        let dd = d(ops.desc);
        let s = |n: usize| src(ops.src[n], ops.rel[n], dd, n);
        return match (instr, ops.dst) {
            (Instruction::Cmp { x, y, .. }, _) => Op::Cmp {
                a: s(0),
                b: s(1),
                x,
                y,
            },
            (_, Some(r)) => {
                let (alu, dst) = (ops.op.unit(), dst(r, dd.mask()));
                match ops.op.sources() {
                    1 => Op::Alu1 { alu, dst, a: s(0) },
                    2 => Op::Alu2 {
                        alu,
                        dst,
                        a: s(0),
                        b: s(1),
                    },
                    _ => Op::Alu3 {
                        alu,
                        dst,
                        a: s(0),
                        b: s(1),
                        c: s(2),
                    },
                }
            }
            // MOVA: the only instruction writing a0.
            (_, None) => Op::Mova {
                a: s(0),
                mask: [dd.mask().has(0), dd.mask().has(1)],
            },
        };
    }
    match instr {
        Instruction::Binary { .. }
        | Instruction::Unary { .. }
        | Instruction::Mova { .. }
        | Instruction::Cmp { .. }
        | Instruction::Mad { .. } => Op::Undefined(word),
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
