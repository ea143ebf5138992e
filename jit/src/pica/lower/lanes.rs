//! The lane shape: a group of invocations, one host vector per register component.
//!
//! [`Lanes`] is the [`Emitter`] of lane code: it composes every unit's result component by
//! component (only the components the write mask keeps, each from the source components its
//! swizzle selects) from the primitive lane operations of a [`LaneEmitter`], decides which
//! results are known tiny-free, and forwards control flow and the divergence hooks.
//!
//! Each host has one lane emitter: `batch/x64.rs` (AVX2, eight lanes per ymm register) and
//! `batch/a64.rs` (NEON, four lanes per q register). A new lane operation is a
//! [`LaneEmitter`] method that both implement.

#![allow(
    clippy::needless_range_loop,
    reason = "component indices address masks, swizzles and register arrays in parallel"
)]

use super::{Emitter, SourceOperand};
use crate::error::CompileResult;
use crate::pica::analysis::Guard;
use crate::pica::masm::{BinaryKind, DotKind, ScalarKind};
use crate::pica::recipes::lit::Lit;
use picajit_interp::pica::isa::{CmpOp, Condition, DstReg, Instruction, Opcode, SrcReg, WriteMask};
use picajit_interp::pica::program::Program;

/// A vector value slot of the lowering (one PICA register component of every lane of the
/// group). Each emitter maps the slots to host registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum V {
    /// First source component.
    A,
    /// Second source component.
    B,
    /// Third source component (MAD), working value.
    C,
    /// Products and partial sums (0-3); `P(0)` is also where RCP, RSQ, EX2, LG2 and dot
    /// products leave their result.
    P(u8),
    /// Result components (0-3, x-w), stored after all are computed, because a destination
    /// may also be a source read by a later component.
    Res(u8),
}

/// The two-source operations that return or compare their operands as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    /// `a > b ? a : b` (with the MAX reading of `float::MaxRule`).
    Max,
    /// `a < b ? a : b`.
    Min,
    /// `a >= b ? 1.0 : 0.0`.
    Sge,
    /// `a < b ? 1.0 : 0.0`.
    Slt,
}

/// The host half of lane code: the lane operations [`Lanes`] composes.
///
/// Every arithmetic method follows the float model (`picajit_interp::pica::float`) lane for lane;
/// `load_flushed` gives a component with the input flush (rule 1) applied as far as a
/// flushing operation can tell.
pub trait LaneEmitter {
    /// A code label.
    type Label: Copy;
    /// A prepared source operand (where its components are read, swizzle, negation).
    type Operand: Copy;

    /// A fresh label.
    fn new_label(&mut self) -> Self::Label;
    /// Bind `l` here.
    fn bind(&mut self, l: Self::Label);
    /// Jump to `l`.
    fn jump(&mut self, l: Self::Label);
    /// Lanes may diverge: stores are masked, splits park lanes (see "Divergence" in
    /// `batch/x64.rs`).
    /// Emitters without lane masks return false, and a branch whose lanes disagree stops the
    /// group ([`LaneEmitter::branch_cond`]).
    fn lane_masks(&self) -> bool;

    /// Start block `index` of `len` instructions: charge the budget (leave with status
    /// budget when it would be exceeded), count instructions, forget per-block knowledge.
    fn block_start(&mut self, index: usize, len: u32);
    /// Annotate the code that follows.
    fn mark(&mut self, pc: u32, text: String);
    /// Before each instruction (node `node` of the analysis at `pc`).
    fn begin_instruction(&mut self, node: usize, pc: u32, instr: &Instruction);
    /// After each instruction.
    fn end_instruction(&mut self, instr: &Instruction);
    /// The emitter has code for `instr`; otherwise the walker makes it a deopt site, so that
    /// groups reaching it rerun per vertex.
    fn supports(&self, instr: &Instruction) -> bool;

    /// END (all running lanes).
    fn exit_end(&mut self);
    /// Leave with status deopt, reporting `pc`.
    fn exit_deopt(&mut self, pc: u32);
    /// Jump to `target` if boolean uniform `b` equals `value`.
    fn branch_bool(&mut self, b: u8, value: bool, target: Self::Label);
    /// Jump to `target` if `cond` holds in every running lane, fall through if it holds in
    /// none; otherwise (lanes disagree) jump to `split` with the lanes that take the branch
    /// recorded for [`LaneEmitter::split_lanes`] (emitters without lane masks leave the group
    /// instead and never bind `split`).
    fn branch_cond(&mut self, cond: Condition, target: Self::Label, split: Self::Label, pc: u32);
    /// LOOP: aL and loop counter `slot` from integer uniform `int`.
    fn loop_init(&mut self, int: u8, slot: u8);
    /// End of a loop body: step aL and counter `slot`, jump to `again` while it runs.
    fn loop_step(&mut self, int: u8, slot: u8, again: Self::Label);

    // Lane masks only (never called when `lane_masks` is false).

    /// aL and loop counter `slot` are the running lanes' from here on.
    fn own_loop(&mut self, slot: u8);
    /// Before stepping a loop: the running lanes must own aL and counter `slot` (else leave
    /// with "diverged" at `pc`); they own both after.
    fn step_owned(&mut self, slot: u8, pc: u32);
    /// Jump to `otherwise` unless `block` is the lowest block any lane waits at.
    fn unless_lowest(&mut self, block: usize, otherwise: Self::Label);
    /// The running lanes wait at `block`.
    fn park(&mut self, block: usize);
    /// Make the running lanes' vector mask current (after choosing them), then jump to `l`.
    fn activate_and_jump(&mut self, l: Self::Label);
    /// Start of a split stub: record the branch's lane sets, count the split.
    fn split_enter(&mut self);
    /// The running lanes become those of a split that take (`taken`) or do not take it.
    fn split_lanes(&mut self, taken: bool);
    /// Run the lowest waiting block with its lanes (every lane at END: done). `table` is the
    /// label of the block jump table ([`LaneEmitter::masked_tail`]).
    fn dispatch(&mut self, table: Self::Label);
    /// The shared routines of masked execution after the split stubs: END for some lanes,
    /// the vector mask routine, and the jump table at `table` with one entry per block label.
    fn masked_tail(&mut self, table: Self::Label, blocks: &[Self::Label]) -> CompileResult<()>;

    // Operands and results.

    /// How many parts of the group each arithmetic instruction is lowered for (see
    /// [`Emitter::passes`]): 1 when one vector holds every lane.
    fn passes(&self) -> usize {
        1
    }
    /// The next instruction's lane operations are those of part `p`.
    fn pass(&mut self, _p: usize) {}

    /// Prepare a source of the current instruction.
    fn operand(&mut self, src: SourceOperand) -> Self::Operand;
    /// Component `c` of `op` (swizzle and negation applied) into `d`.
    fn load(&mut self, d: V, op: &Self::Operand, c: usize);
    /// As [`LaneEmitter::load`], with the input flush applied.
    fn load_flushed(&mut self, d: V, op: &Self::Operand, c: usize);
    /// Component `c` of `op` is known tiny-free (the flush could change only a zero's sign).
    fn tiny_free(&self, op: &Self::Operand, c: usize) -> bool;
    /// `d` = 1.0 in every lane.
    fn one(&mut self, d: V);
    /// Store the components of `res` that `mask` selects to `dst` (masked to the running
    /// lanes); `tiny_free[c]`: component c is known tiny-free.
    fn store_results(&mut self, dst: DstReg, mask: [bool; 4], res: [V; 4], tiny_free: [bool; 4]);
    /// A MOV from `src` (prepared as `op`) into `dst` was stored: the emitter may remember
    /// where a flushed copy of the value is.
    fn note_mov(&mut self, dst: DstReg, src: SrcReg, op: &Self::Operand, mask: [bool; 4]);

    // Lane arithmetic (float model).

    /// `d = float::add(a, b)` on flushed inputs or mode results. `d` may be `a` or `b`.
    fn add(&mut self, d: V, a: V, b: V);
    /// `d = float::mul(a, b)` on inputs from `load_flushed`. `d` must differ from both.
    fn mul(&mut self, d: V, a: V, b: V);
    /// MAX, MIN, SGE, SLT: `d = op(a, b)` on the components as they are.
    fn select(&mut self, op: Select, d: V, a: V, b: V);
    /// FLR of the flushed `a` into `d`, rounded by the mode.
    fn flr(&mut self, d: V, a: V);
    /// RCP, RSQ, EX2 or LG2 of component x of `op` into `P(0)` (the emitter loads and, for
    /// RCP and RSQ, flushes the source: EX2 and LG2 flush it themselves).
    fn scalar(&mut self, op: Opcode, s: &Self::Operand);
    /// One step of LITP (`recipes::lit::lane`) on the component in `a`, into `d` (which
    /// differs from `a`).
    fn litp(&mut self, part: Lit, d: V, a: V);
    /// MOVA of component `c` of `a` into `d` (i32 lanes), then a0 component `c` := `d`.
    fn mova(&mut self, c: usize, d: V, a: V);
    /// Store the converted a0 component `c` (after all were converted).
    fn store_a0(&mut self, c: usize, v: V);
    /// `d` = all-ones in the lanes where `op(a, b)` holds.
    fn cmp_mask(&mut self, d: V, op: CmpOp, a: V, b: V);
    /// Store cmp component `c` (after both were computed).
    fn store_cmp(&mut self, c: usize, v: V);
    /// EMIT of a geometry shader.
    fn emit(&mut self, pc: u32) -> CompileResult<()>;
    /// `d` = +0 in every lane.
    fn zero(&mut self, d: V);
}

/// Result components in `Res(0..4)`, stored after all are computed, because a destination
/// may also be a source read by a later component.
const RES: [V; 4] = [V::Res(0), V::Res(1), V::Res(2), V::Res(3)];

/// A [`LaneEmitter`] seen as an [`Emitter`].
pub struct Lanes<'a, E: LaneEmitter> {
    e: &'a mut E,
    program: &'a Program,
}

impl<'a, E: LaneEmitter> Lanes<'a, E> {
    /// Wrap `e`, which lowers `program`.
    pub fn new(e: &'a mut E, program: &'a Program) -> Self {
        Lanes { e, program }
    }
}

/// A lane result: the vector of each component, and whether each is known tiny-free (the
/// input flush could change only a zero's sign).
#[derive(Clone, Copy, Debug)]
pub struct LaneValue {
    res: [V; 4],
    tiny_free: [bool; 4],
}

impl<E: LaneEmitter> Emitter for Lanes<'_, E> {
    type Label = E::Label;
    type Operand = E::Operand;
    type Value = LaneValue;
    const PREPARES_FLUSH: bool = true;

    forward_control!(e);

    fn block_start(&mut self, index: usize, len: u32) {
        self.e.block_start(index, len)
    }

    fn begin_instruction(&mut self, node: usize, pc: u32, instr: &Instruction) {
        let text = format!(
            "{pc:03x}: {}",
            picajit_interp::pica::isa::format_instruction(instr, self.program.opdescs())
        );
        self.e.mark(pc, text);
        self.e.begin_instruction(node, pc, instr)
    }

    fn end_instruction(&mut self, instr: &Instruction) {
        self.e.end_instruction(instr)
    }

    fn supports(&self, instr: &Instruction) -> bool {
        self.e.supports(instr)
    }

    fn branch(&mut self, guard: Guard, target: E::Label, split: Option<E::Label>, pc: u32) {
        match guard {
            Guard::Bool { b, value } => self.e.branch_bool(b, value, target),
            Guard::Cond(c) => {
                // Without lane masks the emitter leaves the group instead of splitting and
                // never binds `split`.
                let split = split.unwrap_or_else(|| self.e.new_label());
                self.e.branch_cond(c, target, split, pc)
            }
        }
    }

    fn lane_masks(&self) -> bool {
        self.e.lane_masks()
    }

    fn own_loop(&mut self, slot: u8) {
        self.e.own_loop(slot)
    }

    fn step_owned(&mut self, slot: u8, pc: u32) {
        self.e.step_owned(slot, pc)
    }

    fn unless_lowest(&mut self, block: usize, otherwise: E::Label) {
        self.e.unless_lowest(block, otherwise)
    }

    fn park(&mut self, block: usize) {
        self.e.park(block)
    }

    fn activate_and_jump(&mut self, l: E::Label) {
        self.e.activate_and_jump(l)
    }

    fn split_enter(&mut self) {
        self.e.split_enter()
    }

    fn split_lanes(&mut self, taken: bool) {
        self.e.split_lanes(taken)
    }

    fn dispatch(&mut self, table: E::Label) {
        self.e.dispatch(table)
    }

    fn masked_tail(&mut self, table: E::Label, blocks: &[E::Label]) -> CompileResult<()> {
        self.e.masked_tail(table, blocks)
    }

    fn passes(&self) -> usize {
        self.e.passes()
    }

    fn pass(&mut self, p: usize) {
        self.e.pass(p)
    }

    fn operand(&mut self, src: SourceOperand) -> E::Operand {
        self.e.operand(src)
    }

    fn binary(
        &mut self,
        kind: BinaryKind,
        s1: E::Operand,
        s2: E::Operand,
        mask: WriteMask,
    ) -> LaneValue {
        let e = &mut *self.e;
        let mask = mask.lanes();
        for c in 0..4 {
            if !mask[c] {
                continue;
            }
            let res = V::Res(c as u8);
            let sel = match kind {
                BinaryKind::Add | BinaryKind::Mul => {
                    e.load_flushed(V::A, &s1, c);
                    e.load_flushed(V::B, &s2, c);
                    if kind == BinaryKind::Add {
                        e.add(res, V::A, V::B);
                    } else {
                        e.mul(res, V::A, V::B);
                    }
                    continue;
                }
                BinaryKind::Max => Select::Max,
                BinaryKind::Min => Select::Min,
                BinaryKind::Sge => Select::Sge,
                BinaryKind::Slt => Select::Slt,
            };
            e.load(V::A, &s1, c);
            e.load(V::B, &s2, c);
            e.select(sel, res, V::A, V::B);
        }
        // MIN/MAX return an operand as it is.
        let fixed = !matches!(kind, BinaryKind::Min | BinaryKind::Max);
        LaneValue {
            res: RES,
            tiny_free: [fixed; 4],
        }
    }

    /// Products `mul(a_i, b_i)` into `P(i)`, then `(p0 + p1) + (p2 + p3)` into `P(0)`.
    fn dot(&mut self, kind: DotKind, s1: E::Operand, s2: E::Operand) -> LaneValue {
        let e = &mut *self.e;
        let n = if kind == DotKind::Dp3 { 3 } else { 4 };
        for i in 0..n {
            if kind == DotKind::Dph && i == 3 {
                e.one(V::A);
            } else {
                e.load_flushed(V::A, &s1, i);
            }
            e.load_flushed(V::B, &s2, i);
            e.mul(V::P(i as u8), V::A, V::B);
        }
        e.add(V::P(0), V::P(0), V::P(1));
        if n == 4 {
            e.add(V::P(2), V::P(2), V::P(3));
        }
        // DP3: add(p2, +0) is p2 (a mode result), so the second pair is p2 alone.
        e.add(V::P(0), V::P(0), V::P(2));
        LaneValue {
            res: [V::P(0); 4],
            tiny_free: [true; 4],
        }
    }

    fn dst(&mut self, s1: E::Operand, s2: E::Operand, mask: WriteMask) -> LaneValue {
        let e = &mut *self.e;
        let mask = mask.lanes();
        for c in 0..4 {
            if !mask[c] {
                continue;
            }
            match c {
                0 => e.one(V::Res(0)),
                1 => {
                    e.load_flushed(V::A, &s1, 1);
                    e.load_flushed(V::B, &s2, 1);
                    e.mul(V::Res(1), V::A, V::B);
                }
                2 => e.load(V::Res(2), &s1, 2),
                _ => e.load(V::Res(3), &s2, 3),
            }
        }
        LaneValue {
            res: RES,
            tiny_free: [true, true, e.tiny_free(&s1, 2), e.tiny_free(&s2, 3)],
        }
    }

    fn mad(
        &mut self,
        s1: E::Operand,
        s2: E::Operand,
        s3: E::Operand,
        mask: WriteMask,
    ) -> LaneValue {
        let e = &mut *self.e;
        let mask = mask.lanes();
        for c in 0..4 {
            if mask[c] {
                e.load_flushed(V::A, &s1, c);
                e.load_flushed(V::B, &s2, c);
                e.mul(V::P(0), V::A, V::B);
                e.load_flushed(V::C, &s3, c);
                e.add(V::Res(c as u8), V::P(0), V::C);
            }
        }
        LaneValue {
            res: RES,
            tiny_free: [true; 4],
        }
    }

    fn mov(&mut self, s: E::Operand, mask: WriteMask) -> LaneValue {
        let e = &mut *self.e;
        let mask = mask.lanes();
        for c in 0..4 {
            if mask[c] {
                e.load(V::Res(c as u8), &s, c);
            }
        }
        LaneValue {
            res: RES,
            tiny_free: [0, 1, 2, 3].map(|c| e.tiny_free(&s, c)),
        }
    }

    fn flr(&mut self, s: E::Operand, mask: WriteMask) -> LaneValue {
        let e = &mut *self.e;
        let mask = mask.lanes();
        for c in 0..4 {
            if mask[c] {
                e.load_flushed(V::A, &s, c);
                e.flr(V::Res(c as u8), V::A);
            }
        }
        LaneValue {
            res: RES,
            tiny_free: [true; 4],
        }
    }

    fn scalar(&mut self, kind: ScalarKind, s: E::Operand) -> LaneValue {
        let op = match kind {
            ScalarKind::Rcp => Opcode::Rcp,
            ScalarKind::Rsq => Opcode::Rsq,
            ScalarKind::Ex2 => Opcode::Ex2,
            ScalarKind::Lg2 => Opcode::Lg2,
        };
        self.e.scalar(op, &s);
        // Every result is rounded by the mode (EX2/LG2 too): tiny-free.
        LaneValue {
            res: [V::P(0); 4],
            tiny_free: [true; 4],
        }
    }

    /// The flags of x and w whatever the write mask, then the masked components.
    fn litp(&mut self, s: E::Operand, mask: WriteMask) -> LaneValue {
        let e = &mut *self.e;
        let mask = mask.lanes();
        e.load(V::A, &s, 0);
        e.load(V::B, &s, 3);
        e.litp(Lit::Flag, V::Res(0), V::A);
        e.litp(Lit::Flag, V::Res(3), V::B);
        e.store_cmp(0, V::Res(0));
        e.store_cmp(1, V::Res(3));
        if mask[0] {
            e.litp(Lit::Positive, V::Res(0), V::A);
        }
        if mask[1] {
            e.load(V::C, &s, 1);
            e.litp(Lit::Clamp, V::Res(1), V::C);
        }
        if mask[2] {
            e.zero(V::Res(2));
        }
        if mask[3] {
            e.litp(Lit::Positive, V::Res(3), V::B);
        }
        LaneValue {
            res: RES,
            tiny_free: [false; 4],
        }
    }

    fn mova(&mut self, s: E::Operand, x: bool, y: bool) {
        let e = &mut *self.e;
        // Both components are converted before either is stored.
        for (c, on) in [(0usize, x), (1, y)] {
            if on {
                e.load(V::A, &s, c);
                e.mova(c, V::Res(c as u8), V::A);
            }
        }
        for (c, on) in [(0usize, x), (1, y)] {
            if on {
                e.store_a0(c, V::Res(c as u8));
            }
        }
    }

    fn cmp(&mut self, s1: E::Operand, s2: E::Operand, x: CmpOp, y: CmpOp) {
        let e = &mut *self.e;
        for (c, op) in [(0usize, x), (1, y)] {
            e.load(V::A, &s1, c);
            e.load(V::B, &s2, c);
            e.cmp_mask(V::Res(c as u8), op, V::A, V::B);
        }
        for c in 0..2 {
            e.store_cmp(c, V::Res(c as u8));
        }
    }

    fn store(&mut self, dst: DstReg, mask: WriteMask, v: LaneValue) {
        self.e.store_results(dst, mask.lanes(), v.res, v.tiny_free)
    }

    fn note_mov(&mut self, dst: DstReg, src: SrcReg, s: E::Operand, mask: WriteMask) {
        self.e.note_mov(dst, src, &s, mask.lanes())
    }

    fn emit(&mut self, pc: u32) -> CompileResult<()> {
        self.e.emit(pc)
    }

    fn set_emit(&mut self, _vtx: u8, _primitive: bool, _winding: bool) {
        // Lane code reads SETEMIT's parameters as constants of each EMIT site
        // (`GsPlan::emit_flags` in `batch/geometry.rs`).
    }
}
