//! The one lowering of an analysed PICA program, for both code shapes and both hosts.
//!
//! * [`walk`]: the block walker. Blocks in analysis order, the budget charged once per block,
//!   gotos, loop steps, exits, uniform and cmp-dependent branches, and (for lane code whose
//!   lanes may diverge) where lanes wait and in which order a split's arms run.
//! * [`ops`]: the per-instruction decisions, one arm per [`Unit`](picajit_interp::pica::isa::Unit):
//!   when a write mask makes an instruction a no-op, which sources it reads and which of those
//!   go through the input flush (from the opcode table), which operation computes the result,
//!   where it is stored.
//!
//! Both drive an [`Emitter`], the vocabulary every code shape provides. Two shapes implement
//! it, each as a thin adapter over its host emitters:
//!
//! * [`scalar`]: one invocation per call, the four components of a register in one host
//!   vector. It forwards to a [`MacroAssembler`] (`x64/masm.rs`, `a64/masm.rs`); a branch is
//!   a plain branch.
//! * [`lanes`]: a group of invocations, one host vector per register component (eight lanes
//!   per ymm register with AVX2, four per q register with NEON). It composes every unit's
//!   result component by component from the primitive lane operations of a [`LaneEmitter`]
//!   (`batch/x64.rs`, `batch/a64.rs`), and implements the divergence hooks (park, split,
//!   dispatch, the masked tail).
//!
//! # Why the two shapes compose results differently
//!
//! A unit's *decisions* are made once, in [`ops`]. How a result is *composed* from host
//! operations depends on the vector shape, and that difference is exactly the [`Emitter`]
//! method of the unit: a dot product in the scalar shape is one four-lane multiply followed by
//! horizontal pair sums (shuffles within one register), in the lane shape four multiplies of
//! component vectors and vertical adds; DST and LITP blend lanes of one register in one shape
//! and pick component vectors in the other. The rounding points are the float model's in both
//! (`picajit_interp::pica::float`: products, `p0 + p1`, `p2 + p3`, their sum; MAD's product, then
//! the add), and the differential tests hold each shape to the interpreter.
//!
//! # Budget
//!
//! Each block starts with [`Emitter::block_start`], which charges its length: the check costs
//! one subtract-and-branch per block and is exact, because a block always runs to its end
//! (END, deopts and branches only end blocks). Compiled code deopts *before* starting a block
//! it could not finish within the budget, and a deopted invocation (or group) is re-run from
//! its initial state by code that can, so the budget outcome (and every other error) is the
//! interpreter's by construction.

/// The control methods of [`Emitter`] that both host traits spell alike, forwarded to the
/// adapter's host emitter in field `$host`.
macro_rules! forward_control {
    ($host:ident) => {
        fn new_label(&mut self) -> Self::Label {
            self.$host.new_label()
        }

        fn bind(&mut self, l: Self::Label) {
            self.$host.bind(l)
        }

        fn jump(&mut self, l: Self::Label) {
            self.$host.jump(l)
        }

        fn exit_end(&mut self) {
            self.$host.exit_end()
        }

        fn exit_deopt(&mut self, pc: u32) {
            self.$host.exit_deopt(pc)
        }

        fn loop_init(&mut self, int: u8, slot: u8) {
            self.$host.loop_init(int, slot)
        }

        fn loop_step(&mut self, int: u8, slot: u8, again: Self::Label) {
            self.$host.loop_step(int, slot, again)
        }
    };
}

pub(crate) mod lanes;
pub(crate) mod ops;
pub(crate) mod scalar;
pub(crate) mod walk;

pub use lanes::{LaneEmitter, Select, V};

use crate::error::CompileResult;
use crate::pica::analysis::points::GsPlan;
use crate::pica::analysis::{Analysis, Guard};
use crate::pica::masm::{BinaryKind, DotKind, MacroAssembler, ScalarKind};
use picajit_interp::pica::float::{FloatMode, MaxRule};
use picajit_interp::pica::isa::{
    CmpOp, DstReg, Instruction, OperandDesc, RelIndex, SrcReg, WriteMask,
};
use picajit_interp::pica::program::Program;

/// Lower `program` (already analysed) to one-invocation code with `masm`: entry points, every
/// block, then the masm's finish (labels resolved, constants appended).
pub fn lower_scalar<M: MacroAssembler>(
    masm: M,
    program: &Program,
    analysis: &Analysis,
) -> CompileResult<crate::pica::masm::Emitted> {
    let mut s = scalar::Scalar::new(masm);
    s.masm().prologue();
    walk::Walker::new(&mut s, program, analysis).walk()?;
    s.into_masm().finish()
}

/// A program for the lane code generators (`x64/lanes.rs`, `a64/lanes.rs`) and what they
/// generate it for: the same for both hosts, so it is one argument.
#[derive(Clone, Copy)]
pub struct LaneProgram<'a> {
    pub program: &'a Program,
    pub analysis: &'a Analysis,
    pub mode: FloatMode,
    pub max_rule: MaxRule,
    /// Geometry shaders: what `analysis::points::plan` proved.
    pub gs: Option<&'a GsPlan>,
    /// Groups start from `SoaContext::start_*` (`CompiledShader::run_batch_from`) instead
    /// of the clean state.
    pub from_state: bool,
}

/// Lower `program` (already analysed) to lane code with `e`: every block (block 0 first,
/// where the emitter's body entry must be bound), then with lane masks the split and park
/// stubs and the scheduler. The emitter's own entry and exits are its caller's.
pub fn lower_lanes<E: LaneEmitter>(
    e: &mut E,
    program: &Program,
    analysis: &Analysis,
) -> CompileResult<()> {
    let mut l = lanes::Lanes::new(e, program);
    walk::Walker::new(&mut l, program, analysis).walk()
}

/// One source of the current instruction as the lowering hands it to a code shape and the
/// lane shape to its host emitter: both take the same fields, so they travel together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceOperand {
    /// Source number, which is also the descriptor slot.
    pub n: usize,
    /// The register.
    pub reg: SrcReg,
    /// Its relative index.
    pub rel: RelIndex,
    /// The instruction's operand descriptor.
    pub d: OperandDesc,
    /// The instruction reads it through the input flush only (float model rule 1).
    pub flushing: bool,
}

/// What [`walk`] and [`ops`] ask of a code shape.
///
/// Control flow, block and instruction boundaries, and one method per kind of unit result.
/// Divergence hooks (`own_loop` … `masked_tail`) are called only when
/// [`Emitter::lane_masks`] is true; their defaults are right for code whose lanes never
/// disagree (one invocation, or lane code that leaves the group at a divergent branch).
pub trait Emitter {
    /// A code position that can be bound once and jumped to.
    type Label: Copy;
    /// A prepared source operand.
    type Operand: Copy;
    /// A unit's result, as [`Emitter::store`] takes it.
    type Value: Copy;
    /// [`Emitter::operand`] reads its `flushing` argument (otherwise the lowering does not
    /// look the flush column up and passes false).
    const PREPARES_FLUSH: bool;

    /// A new unbound label.
    fn new_label(&mut self) -> Self::Label;
    /// Bind `l` at the current position.
    fn bind(&mut self, l: Self::Label);
    /// Unconditional jump.
    fn jump(&mut self, l: Self::Label);
    /// Start block `index` of `len` instructions: charge the budget (leave with status budget
    /// when fewer than `len` instructions are left).
    fn block_start(&mut self, index: usize, len: u32);
    /// Before each instruction (node `node` of the analysis, at `pc`): annotate the code.
    fn begin_instruction(&mut self, node: usize, pc: u32, instr: &Instruction);
    /// After each instruction.
    fn end_instruction(&mut self, instr: &Instruction);
    /// The shape has code for `instr`; otherwise the walker makes it a deopt site.
    fn supports(&self, instr: &Instruction) -> bool;

    /// END.
    fn exit_end(&mut self);
    /// Leave with status deopt, reporting `pc`.
    fn exit_deopt(&mut self, pc: u32);
    /// Jump to `target` if `guard` holds, fall through otherwise. With lane masks a cmp guard
    /// gets `split`: where the lanes go when they disagree (see [`LaneEmitter::branch_cond`]).
    fn branch(&mut self, guard: Guard, target: Self::Label, split: Option<Self::Label>, pc: u32);
    /// LOOP: aL = i`int`.y, loop counter `slot` = i`int`.x.
    fn loop_init(&mut self, int: u8, slot: u8);
    /// End of a loop body: aL += i`int`.z; while counter `slot` runs, count it down and jump
    /// to `again`, else fall through.
    fn loop_step(&mut self, int: u8, slot: u8, again: Self::Label);

    /// Lanes may diverge: stores are masked, splits park lanes.
    fn lane_masks(&self) -> bool {
        false
    }
    /// aL and loop counter `slot` are the running lanes' from here on.
    fn own_loop(&mut self, _slot: u8) {}
    /// Before stepping a loop: the running lanes must own aL and counter `slot`.
    fn step_owned(&mut self, _slot: u8, _pc: u32) {}
    /// Jump to `otherwise` unless `block` is the lowest block any lane waits at.
    fn unless_lowest(&mut self, _block: usize, _otherwise: Self::Label) {}
    /// The running lanes wait at `block`.
    fn park(&mut self, _block: usize) {}
    /// Make the running lanes current, then jump to `l`.
    fn activate_and_jump(&mut self, l: Self::Label) {
        self.jump(l)
    }
    /// Start of a split stub.
    fn split_enter(&mut self) {}
    /// The running lanes become those of a split that take (`taken`) or do not take it.
    fn split_lanes(&mut self, _taken: bool) {}
    /// Run the lowest waiting block with its lanes.
    fn dispatch(&mut self, _table: Self::Label) {}
    /// The shared routines of masked execution and the block jump table at `table`.
    fn masked_tail(&mut self, _table: Self::Label, _blocks: &[Self::Label]) -> CompileResult<()> {
        Ok(())
    }

    /// How many times [`ops`] lowers each arithmetic instruction (its operands, result and
    /// store), each after [`Emitter::pass`]: lane code whose vectors hold part of the group
    /// (NEON with eight lanes per body run) computes one part per pass; everything else is
    /// one pass. Control flow, the budget and EMIT are lowered once either way.
    fn passes(&self) -> usize {
        1
    }
    /// The next arithmetic instruction's pass `p` (of [`Emitter::passes`]) starts.
    fn pass(&mut self, _p: usize) {}

    /// Prepare a source of the current instruction.
    fn operand(&mut self, src: SourceOperand) -> Self::Operand;
    /// ADD, MUL, MAX, MIN, SGE, SLT of the components `mask` keeps.
    fn binary(
        &mut self,
        kind: BinaryKind,
        a: Self::Operand,
        b: Self::Operand,
        mask: WriteMask,
    ) -> Self::Value;
    /// DP3, DP4, DPH, broadcast.
    fn dot(&mut self, kind: DotKind, a: Self::Operand, b: Self::Operand) -> Self::Value;
    /// DST.
    fn dst(&mut self, a: Self::Operand, b: Self::Operand, mask: WriteMask) -> Self::Value;
    /// MAD (unfused: the product is rounded).
    fn mad(
        &mut self,
        a: Self::Operand,
        b: Self::Operand,
        c: Self::Operand,
        mask: WriteMask,
    ) -> Self::Value;
    /// MOV.
    fn mov(&mut self, a: Self::Operand, mask: WriteMask) -> Self::Value;
    /// FLR.
    fn flr(&mut self, a: Self::Operand, mask: WriteMask) -> Self::Value;
    /// RCP, RSQ, EX2, LG2 of component x, broadcast.
    fn scalar(&mut self, kind: ScalarKind, a: Self::Operand) -> Self::Value;
    /// LITP: the cmp flags always, the result for the components `mask` keeps.
    fn litp(&mut self, a: Self::Operand, mask: WriteMask) -> Self::Value;
    /// MOVA: a0.x if `x`, a0.y if `y` (both converted before either is stored).
    fn mova(&mut self, a: Self::Operand, x: bool, y: bool);
    /// CMP: cmp.x = `x(a.x, b.x)`, cmp.y = `y(a.y, b.y)`.
    fn cmp(&mut self, a: Self::Operand, b: Self::Operand, x: CmpOp, y: CmpOp);
    /// Store the components of `v` that `mask` selects (never empty) to `dst`.
    fn store(&mut self, dst: DstReg, mask: WriteMask, v: Self::Value);
    /// A MOV of `src` (prepared as `a`) into `dst` was stored: the shape may remember where a
    /// flushed copy of the value is.
    fn note_mov(&mut self, _dst: DstReg, _src: SrcReg, _a: Self::Operand, _mask: WriteMask) {}
    /// EMIT (geometry shaders).
    fn emit(&mut self, pc: u32) -> CompileResult<()>;
    /// SETEMIT (geometry shaders).
    fn set_emit(&mut self, vtx: u8, primitive: bool, winding: bool);
}
