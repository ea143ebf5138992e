//! Architecture-independent lowering: walks the analysed blocks and turns every instruction and
//! every exit into [`MacroAssembler`] calls. No host register is named here, so both backends
//! share every semantic decision (when a write mask makes an instruction a no-op, how stack
//! effects become jumps). Which source is relatively addressed and which descriptor slot a
//! source uses come from the opcode table (`Instruction::operands`); an opcode's lowering is
//! the arm of its unit in `Lowerer::alu`.
//!
//! # Layout and budget
//!
//! Blocks are emitted in analysis order; each starts with `charge_budget(len)`, so the budget
//! check costs one subtract-and-branch per block and is exact: a block always runs to its end
//! (END, deopts and branches only end blocks). Because compiled code deopts *before* starting a
//! block it could not finish within the budget, and a deopted invocation is re-run on the
//! interpreter from its initial state, the budget outcome (and every other error) is the
//! interpreter's by construction.

use crate::analysis::{Analysis, Exit, Flow, Target};
use crate::error::{CompileError, CompileResult};
use crate::masm::{BinaryKind, Dest, DotKind, MacroAssembler, ScalarKind, Source, SrcLoc, Val};
use picajit_interp::isa::{DstReg, Instruction, OperandDesc, Operands, RelIndex, SrcReg, Unit};
use picajit_interp::program::{Program, ShaderKind};

const V0: Val = Val(0);
const V1: Val = Val(1);
const V2: Val = Val(2);

/// Drives one backend over one analysed program.
pub struct Lowerer<'a, M: MacroAssembler> {
    masm: M,
    program: &'a Program,
    analysis: &'a Analysis,
    labels: Vec<M::Label>,
}

impl<'a, M: MacroAssembler> Lowerer<'a, M> {
    /// Prepare to lower `program` (already analysed) with `masm`.
    pub fn new(mut masm: M, program: &'a Program, analysis: &'a Analysis) -> Self {
        let labels = (0..analysis.blocks.len())
            .map(|_| masm.new_label())
            .collect();
        Lowerer {
            masm,
            program,
            analysis,
            labels,
        }
    }

    /// Emit the whole program and hand back the finished masm output.
    pub fn lower(mut self) -> CompileResult<crate::Emitted> {
        self.masm.prologue();
        let nblocks = self.analysis.blocks.len();
        for bi in 0..nblocks {
            let block = &self.analysis.blocks[bi];
            self.masm.bind(self.labels[bi]);
            self.masm.charge_budget(block.nodes.len() as u32);
            let next_block = self.analysis.blocks.get(bi + 1).map(|b| b.nodes[0]);
            let n = block.nodes.len();
            for (k, &id) in block.nodes.iter().enumerate() {
                let node = &self.analysis.nodes[id as usize];
                // The instruction's text is made only when someone disassembles: formatting it
                // here cost a tenth of the compile time.
                self.masm.mark(node.pc, "");
                self.instruction(&node.instr, node.pc, node.loop_slot)?;
                if k + 1 < n {
                    // Interior nodes fall through to the next node of the chain.
                    continue;
                }
                self.exit(&node.exit, node.pc, next_block)?;
            }
        }
        self.masm.finish()
    }

    fn label_of(&self, node: u32) -> CompileResult<M::Label> {
        match self.analysis.leader_of.get(node as usize) {
            Some(Some(b)) => Ok(self.labels[*b as usize]),
            _ => Err(CompileError::Internal(format!(
                "jump to node {node}, which does not start a block"
            ))),
        }
    }

    /// Emit a jump to `t` unless it is the block laid out next.
    fn goto(&mut self, t: Target, fallthrough: Option<u32>) -> CompileResult<()> {
        match t {
            Target::Node(n) if Some(n) == fallthrough => Ok(()),
            Target::Node(n) => {
                let l = self.label_of(n)?;
                self.masm.jump(l);
                Ok(())
            }
            Target::Deopt(_, pc) => {
                self.masm.exit_deopt(pc);
                Ok(())
            }
        }
    }

    fn flow(&mut self, f: &Flow, fallthrough: Option<u32>) -> CompileResult<()> {
        match *f {
            Flow::Goto(t) => self.goto(t, fallthrough),
            Flow::LoopEnd {
                int,
                slot,
                cont,
                exit,
            } => {
                let again = match cont {
                    Target::Node(n) => self.label_of(n)?,
                    Target::Deopt(_, pc) => {
                        // Iterating would run off the program: deopt from a local stub.
                        let stub = self.masm.new_label();
                        self.masm.loop_step(int, slot, stub);
                        self.goto(exit, None)?;
                        self.masm.bind(stub);
                        self.masm.exit_deopt(pc);
                        return Ok(());
                    }
                };
                self.masm.loop_step(int, slot, again);
                self.goto(exit, fallthrough)
            }
        }
    }

    fn exit(&mut self, e: &Exit, pc: u32, fallthrough: Option<u32>) -> CompileResult<()> {
        match e {
            Exit::End => self.masm.exit_end(),
            Exit::Deopt(_) => self.masm.exit_deopt(pc),
            Exit::Flow(f) => self.flow(f, fallthrough)?,
            Exit::Branch {
                guard,
                taken,
                not_taken,
            } => {
                let l = self.masm.new_label();
                self.masm.branch(*guard, l);
                self.flow(not_taken, None)?;
                self.masm.bind(l);
                self.flow(taken, fallthrough)?;
            }
        }
        Ok(())
    }

    fn desc(&self, index: u8) -> OperandDesc {
        OperandDesc(self.program.opdesc(index as usize))
    }

    fn instruction(&mut self, instr: &Instruction, pc: u32, slot: Option<u8>) -> CompileResult<()> {
        if let Some(ops) = instr.operands() {
            return self.alu(instr, &ops);
        }
        let m = &mut self.masm;
        match *instr {
            // EMIT and SETEMIT do nothing in vertex shaders.
            Instruction::Emit if self.program.kind() == ShaderKind::Geometry => {
                m.emit_vertex(pc);
            }
            Instruction::SetEmit {
                vtx,
                primitive,
                winding,
            } if self.program.kind() == ShaderKind::Geometry => {
                m.set_emit(vtx, primitive, winding);
            }
            Instruction::Loop { i, .. } => {
                let slot = slot.ok_or_else(|| {
                    CompileError::Internal(format!("LOOP at 0x{pc:03x} has no counter slot"))
                })?;
                m.loop_init(i, slot);
            }
            // Arithmetic is `alu`; the rest is pure control flow, which the node's exit
            // handles (the analysis gives every other instruction its exit).
            _ => {}
        }
        Ok(())
    }
}

impl<'a, M: MacroAssembler> Lowerer<'a, M> {
    /// One arithmetic instruction: its sources loaded into `V0..`, the unit's operation, the
    /// result stored under the write mask. An instruction that writes nothing is skipped
    /// (LITP still sets the flags, CMP writes only them).
    fn alu(&mut self, instr: &Instruction, ops: &Operands) -> CompileResult<()> {
        let d = self.desc(ops.desc);
        let unit = ops.op.unit();
        let write = match unit {
            Unit::Mova => d.mask().has(0) || d.mask().has(1),
            _ => d.mask().0 & 0xF != 0,
        };
        if !write && !matches!(unit, Unit::Litp | Unit::Cmp) {
            return Ok(());
        }
        let m = &mut self.masm;
        for (n, reg, rel) in ops.sources() {
            m.load(Val(n as u8), &source(reg, rel, d, n));
        }
        match unit {
            Unit::Add => m.binary(BinaryKind::Add, V0, V0, V1),
            Unit::Mul => m.binary(BinaryKind::Mul, V0, V0, V1),
            Unit::Max => m.binary(BinaryKind::Max, V0, V0, V1),
            Unit::Min => m.binary(BinaryKind::Min, V0, V0, V1),
            Unit::Sge => m.binary(BinaryKind::Sge, V0, V0, V1),
            Unit::Slt => m.binary(BinaryKind::Slt, V0, V0, V1),
            Unit::Dp3 => m.dot(DotKind::Dp3, V0, V0, V1),
            Unit::Dp4 => m.dot(DotKind::Dp4, V0, V0, V1),
            Unit::Dph => m.dot(DotKind::Dph, V0, V0, V1),
            Unit::Dst => m.dst(V0, V0, V1),
            Unit::Mad => m.mad(V0, V0, V1, V2),
            Unit::Mov => {}
            Unit::Flr => m.flr(V0, V0),
            Unit::Rcp => m.scalar(ScalarKind::Rcp, V0, V0),
            Unit::Rsq => m.scalar(ScalarKind::Rsq, V0, V0),
            Unit::Ex2 => m.scalar(ScalarKind::Ex2, V0, V0),
            Unit::Lg2 => m.scalar(ScalarKind::Lg2, V0, V0),
            Unit::Litp => m.litp(V0, V0),
            Unit::Mova => {
                m.mova(V0, d.mask().has(0), d.mask().has(1));
                return Ok(());
            }
            Unit::Cmp => {
                if let Instruction::Cmp { x, y, .. } = *instr {
                    m.cmp(V0, V1, x, y);
                }
                return Ok(());
            }
            #[cfg(feature = "made-up-opcode")]
            Unit::Sub => {
                // a - b is a + (-b): negating a register operand is exact, and ADD flushes
                // the negated operand as the float model's SUB does.
                let mut b = source(ops.src[1], ops.rel[1], d, 1);
                b.negate = !b.negate;
                m.load(V1, &b);
                m.binary(BinaryKind::Add, V0, V0, V1)
            }
            other => {
                return Err(CompileError::Internal(format!(
                    "{} ({other:?}) has no lowering",
                    ops.op
                )))
            }
        }
        if let Some(dst) = ops.dst {
            if write {
                m.store(&dest(dst, d), V0);
            }
        }
        Ok(())
    }
}

/// Source operand `n` (0-based descriptor slot) of an instruction.
fn source(reg: SrcReg, rel: RelIndex, d: OperandDesc, n: usize) -> Source {
    let loc = match reg {
        SrcReg::Input(i) => SrcLoc::Input(i & 15),
        SrcReg::Temp(i) => SrcLoc::Temp(i & 15),
        SrcReg::Const(i) => SrcLoc::Const {
            index: i & 0x7F,
            rel,
        },
    };
    Source {
        loc,
        swizzle: d.swizzle(n),
        negate: d.neg(n),
    }
}

fn dest(reg: DstReg, d: OperandDesc) -> Dest {
    let (output, index) = match reg {
        DstReg::Output(i) => (true, i & 15),
        DstReg::Temp(i) => (false, i & 15),
    };
    Dest {
        output,
        index,
        mask: d.mask(),
    }
}
