//! The scalar shape: one invocation, a register's four components in one host vector. Every
//! [`Emitter`] method is one [`MacroAssembler`] call; sources are loaded into value slot `n`
//! as they are prepared (in source order, before the unit's operation), and every result is
//! left in slot 0.

use super::{Emitter, SourceOperand};
use crate::pica::analysis::Guard;
use crate::pica::masm::{
    BinaryKind, Dest, DotKind, MacroAssembler, ScalarKind, Source, SrcLoc, Val,
};
use picajit_interp::pica::isa::{CmpOp, DstReg, Instruction, SrcReg, WriteMask};

/// A [`MacroAssembler`] seen as an [`Emitter`].
pub struct Scalar<M: MacroAssembler> {
    m: M,
}

impl<M: MacroAssembler> Scalar<M> {
    /// Wrap `m`.
    pub fn new(m: M) -> Self {
        Scalar { m }
    }

    /// The masm, for what happens outside the walk (prologue).
    pub fn masm(&mut self) -> &mut M {
        &mut self.m
    }

    /// The masm back, to finish.
    pub fn into_masm(self) -> M {
        self.m
    }
}

impl<M: MacroAssembler> Emitter for Scalar<M> {
    type Label = M::Label;
    type Operand = Val;
    type Value = Val;
    // The masm's arithmetic flushes its own operands.
    const PREPARES_FLUSH: bool = false;

    forward_control!(m);

    fn block_start(&mut self, _index: usize, len: u32) {
        self.m.charge_budget(len)
    }

    fn begin_instruction(&mut self, _node: usize, pc: u32, _instr: &Instruction) {
        // The instruction's text is made only when someone disassembles: formatting it here
        // cost a tenth of the compile time.
        self.m.mark(pc, "")
    }

    fn end_instruction(&mut self, _instr: &Instruction) {}

    fn supports(&self, _instr: &Instruction) -> bool {
        true
    }

    fn branch(&mut self, guard: Guard, target: M::Label, _split: Option<M::Label>, _pc: u32) {
        self.m.branch(guard, target)
    }

    fn operand(&mut self, src: SourceOperand) -> Val {
        let SourceOperand { n, reg, rel, d, .. } = src;
        let loc = match reg {
            SrcReg::Input(i) => SrcLoc::Input(i & 15),
            SrcReg::Temp(i) => SrcLoc::Temp(i & 15),
            SrcReg::Const(i) => SrcLoc::Const {
                index: i & 0x7F,
                rel,
            },
        };
        let v = Val(n as u8);
        let src = Source {
            loc,
            swizzle: d.swizzle(n),
            negate: d.neg(n),
        };
        self.m.load(v, &src);
        v
    }

    fn binary(&mut self, kind: BinaryKind, a: Val, b: Val, _mask: WriteMask) -> Val {
        self.m.binary(kind, a, a, b);
        a
    }

    fn dot(&mut self, kind: DotKind, a: Val, b: Val) -> Val {
        self.m.dot(kind, a, a, b);
        a
    }

    fn dst(&mut self, a: Val, b: Val, _mask: WriteMask) -> Val {
        self.m.dst(a, a, b);
        a
    }

    fn mad(&mut self, a: Val, b: Val, c: Val, _mask: WriteMask) -> Val {
        self.m.mad(a, a, b, c);
        a
    }

    fn mov(&mut self, a: Val, _mask: WriteMask) -> Val {
        a
    }

    fn flr(&mut self, a: Val, _mask: WriteMask) -> Val {
        self.m.flr(a, a);
        a
    }

    fn scalar(&mut self, kind: ScalarKind, a: Val) -> Val {
        self.m.scalar(kind, a, a);
        a
    }

    fn litp(&mut self, a: Val, _mask: WriteMask) -> Val {
        self.m.litp(a, a);
        a
    }

    fn mova(&mut self, a: Val, x: bool, y: bool) {
        self.m.mova(a, x, y)
    }

    fn cmp(&mut self, a: Val, b: Val, x: CmpOp, y: CmpOp) {
        self.m.cmp(a, b, x, y)
    }

    fn store(&mut self, dst: DstReg, mask: WriteMask, v: Val) {
        let (output, index) = match dst {
            DstReg::Output(i) => (true, i & 15),
            DstReg::Temp(i) => (false, i & 15),
        };
        self.m.store(
            &Dest {
                output,
                index,
                mask,
            },
            v,
        )
    }

    fn emit(&mut self, pc: u32) -> crate::error::CompileResult<()> {
        self.m.emit_vertex(pc);
        Ok(())
    }

    fn set_emit(&mut self, vtx: u8, primitive: bool, winding: bool) {
        self.m.set_emit(vtx, primitive, winding)
    }
}
