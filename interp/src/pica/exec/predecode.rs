//! Turns code words plus descriptors into [`Op`]s the run loop can execute without
//! re-reading bit fields: swizzles become lane tables, registers become typed locations.

use crate::pica::isa::{decode, Condition, DstReg, Instruction, OperandDesc, RelIndex, SrcReg};
use crate::pica::isa::{CmpOp, WriteMask};
use crate::pica::program::Program;

/// Register banks a source reads, as indices of the table the run loop builds.
pub(crate) const BANK_INPUT: u8 = 0;
pub(crate) const BANK_TEMP: u8 = 1;
pub(crate) const BANK_CONST: u8 = 2;

/// A source operand after its descriptor has been applied, in a form the run loop reads
/// without branching on the operand's kind (the kinds mix from one instruction to the next,
/// so such branches are mispredicted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Src {
    /// [`BANK_INPUT`], [`BANK_TEMP`] or [`BANK_CONST`].
    pub bank: u8,
    pub index: u8,
    /// Which address register is added to `index`: 0 none, 1 a0.x, 2 a0.y, 3 aL (always 0
    /// for inputs and temporaries).
    pub rel: u8,
    /// Mask applied to the sum: 15 for inputs and temporaries, 0x7F for uniforms.
    pub wrap: u8,
    pub swizzle: [u8; 4],
    /// `1 << 31` when the operand is negated, else 0: xored into each lane's bits.
    pub neg: u32,
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
pub(crate) use crate::pica::isa::Unit as Alu;

/// One pre-decoded instruction. The frequent arithmetic opcodes have their own variants, so
/// that the run loop dispatches once per instruction instead of on the form and then on the
/// unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    Add {
        dst: Dst,
        a: Src,
        b: Src,
    },
    Mul {
        dst: Dst,
        a: Src,
        b: Src,
    },
    Dp3 {
        dst: Dst,
        a: Src,
        b: Src,
    },
    Dp4 {
        dst: Dst,
        a: Src,
        b: Src,
    },
    Dph {
        dst: Dst,
        a: Src,
        b: Src,
    },
    Mad {
        dst: Dst,
        a: Src,
        b: Src,
        c: Src,
    },
    Mov {
        dst: Dst,
        a: Src,
    },
    /// Any other two-source unit.
    Alu2 {
        alu: Alu,
        dst: Dst,
        a: Src,
        b: Src,
    },
    /// Any other one-source unit.
    Alu1 {
        alu: Alu,
        dst: Dst,
        a: Src,
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
    let (bank, index, rel, wrap) = match reg {
        SrcReg::Input(i) => (BANK_INPUT, i, 0, 15),
        SrcReg::Temp(i) => (BANK_TEMP, i, 0, 15),
        SrcReg::Const(i) => {
            let rel = match rel {
                RelIndex::None => 0,
                RelIndex::A0X => 1,
                RelIndex::A0Y => 2,
                RelIndex::AL => 3,
            };
            (BANK_CONST, i, rel, 0x7F)
        }
    };
    Src {
        bank,
        index,
        rel,
        wrap,
        swizzle: desc.swizzle(n).lanes(),
        neg: (desc.neg(n) as u32) << 31,
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
                let (a, b) = (s(0), s(1));
                match (alu, ops.op.sources()) {
                    (Alu::Add, 2) => Op::Add { dst, a, b },
                    (Alu::Mul, 2) => Op::Mul { dst, a, b },
                    (Alu::Dp3, 2) => Op::Dp3 { dst, a, b },
                    (Alu::Dp4, 2) => Op::Dp4 { dst, a, b },
                    (Alu::Dph, 2) => Op::Dph { dst, a, b },
                    (Alu::Mov, 1) => Op::Mov { dst, a },
                    (_, 1) => Op::Alu1 { alu, dst, a },
                    (_, 2) => Op::Alu2 { alu, dst, a, b },
                    // Only MAD has three sources.
                    _ => Op::Mad { dst, a, b, c: s(2) },
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
