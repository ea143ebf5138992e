//! The lane walker: the architecture-independent half of the SoA backends.
//!
//! [`Walker`] walks the analysed blocks of a program (the same [`Analysis`] blocks and exits as
//! `lower.rs`, with the same budget charging and flow shapes) and decides everything that does
//! not depend on the host: per instruction, which result components to compute (the write
//! mask), which source component each one reads (the swizzle), which sources go through the
//! input flush, how a dot product, MAD or DST is composed from lane multiplies and adds, which
//! results are known tiny-free; per exit, jumps, loop steps, uniform and per-lane branches,
//! and with lane masks (see "Divergence" in `x64.rs`) where lanes wait and in which order the
//! two arms of a split run. It names no host register: it drives a [`LaneEmitter`], which owns
//! the host vocabulary (loading a component array, the float recipes on a vector of lanes,
//! compares into lane masks, masked stores, budget charges, exits, the scheduler).
//!
//! Each host has one emitter: `x64.rs` (AVX2, eight lanes per ymm register) and `a64.rs`
//! (NEON, four lanes per q register). A new lane operation is a [`LaneEmitter`] method that
//! both implement; a new opcode is lowered once, in [`Walker::instruction`].

#![allow(
    clippy::needless_range_loop,
    reason = "component indices address masks, swizzles and register arrays in parallel"
)]

use super::geometry::alu_parts;
use crate::analysis::{Analysis, Exit, Flow, Guard, Target};
use crate::error::{CompileError, CompileResult};
use picajit_interp::isa::{
    CmpOp, Condition, DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg, Unit,
};
use picajit_interp::program::Program;

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

/// The host half of an SoA backend: the lane operations [`Walker`] composes.
///
/// Every arithmetic method follows the float model (`picajit_interp::float`) lane for lane;
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
    /// Lanes may diverge: stores are masked, splits park lanes (see "Divergence" in `x64.rs`).
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

    /// Prepare source `n` (descriptor slot) of the current instruction; `flushing`: the
    /// instruction reads it through the input flush only.
    fn operand(
        &mut self,
        reg: SrcReg,
        rel: RelIndex,
        d: OperandDesc,
        n: usize,
        flushing: bool,
    ) -> Self::Operand;
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
    /// LITP of `op`: the flags always, results in `Res` for the masked components.
    fn litp(&mut self, s: &Self::Operand, mask: [bool; 4]);
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
}

/// Which sources of an instruction are read through the input flush (rule 1): those the
/// opcode table's flush column gives a flushed component. A source not listed is read as it
/// is. EX2 and LG2 flush in their own lane code, so their operand is read as it is here.
pub fn flushed_sources(instr: &Instruction) -> [bool; 3] {
    let Some(op) = instr.opcode() else {
        return [false; 3];
    };
    let self_flushing = matches!(op.unit(), Unit::Ex2 | Unit::Lg2);
    [0, 1, 2].map(|n| op.flushed(n, 0xF) != 0 && !self_flushing)
}

/// The components of source `n` (0-2) of `instr` it reads, per the operand descriptor `d`
/// (bit c = component c of the register, after the swizzle).
pub fn read_components(instr: &Instruction, d: OperandDesc, n: usize) -> u8 {
    instr.operands().map_or(0, |o| o.reads(n, d))
}

/// The units the lane walker has lane code for: a program using another one (an opcode added
/// with only its per-vertex lowering) is not eligible, and its batches run per vertex.
pub fn has_lane_code(unit: Unit) -> bool {
    matches!(
        unit,
        Unit::Add
            | Unit::Mul
            | Unit::Max
            | Unit::Min
            | Unit::Sge
            | Unit::Slt
            | Unit::Dp3
            | Unit::Dp4
            | Unit::Dph
            | Unit::Dst
            | Unit::Mad
            | Unit::Mov
            | Unit::Flr
            | Unit::Rcp
            | Unit::Rsq
            | Unit::Ex2
            | Unit::Lg2
            | Unit::Litp
            | Unit::Mova
            | Unit::Cmp
            | Unit::Emit
            | Unit::Flow
    )
}

/// Which sources of an instruction also have components read as they are (DST's z and w).
fn partly_raw(instr: &Instruction) -> [bool; 3] {
    let Some(op) = instr.opcode() else {
        return [false; 3];
    };
    [0, 1, 2].map(|n| op.reads(n, 0xF) & !op.flushed(n, 0xF) != 0)
}

/// Registers a program uses, for the per-group transposes and clears.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// Inputs read as they are (MOV, MIN/MAX, comparisons, …).
    pub inputs_raw: u16,
    /// Inputs read by arithmetic that flushes its operands (rule 1).
    pub inputs_flushed: u16,
    /// Temporaries read or written.
    pub temps: u16,
    /// Outputs written.
    pub outputs: u16,
    /// Per temporary register, the components a group must start at +0: those some
    /// instruction may read before the group wrote them.
    pub zero_temps: [u8; 16],
    /// Per output register, the components not written by the entry block (which every
    /// group runs in full), so that a path leaving them unwritten finds +0.
    pub zero_outputs: [u8; 16],
}

/// The registers `program` uses ([`Usage`]).
pub fn usage(program: &Program, analysis: &Analysis) -> Usage {
    let desc = |index: u8| OperandDesc(program.opdesc(index as usize));
    let mut u = Usage::default();
    let mut temps_read_flushing = 0u16;
    for node in &analysis.nodes {
        let fl = flushed_sources(&node.instr);
        if let Some((_, srcs, _, _)) = alu_parts(&node.instr) {
            for (k, r) in srcs.into_iter().enumerate() {
                if let (SrcReg::Temp(t), true) = (r, fl[k]) {
                    temps_read_flushing |= 1 << (t & 15);
                }
            }
        }
    }
    for node in &analysis.nodes {
        let instr = &node.instr;
        let (srcs, dst) = match alu_parts(instr) {
            Some((_, srcs, _, dst)) => (srcs, dst),
            None => (Vec::new(), None),
        };
        let flushed = flushed_sources(instr);
        // A MOV of an input into a temporary that flushing arithmetic reads gets the
        // input's flushed bank too, which those reads may then load (`LaneEmitter::note_mov`).
        if let Instruction::Unary {
            op: Opcode::Mov,
            src: SrcReg::Input(i),
            dst: DstReg::Temp(t),
            ..
        } = *instr
        {
            if temps_read_flushing & (1 << (t & 15)) != 0 {
                u.inputs_flushed |= 1 << (i & 15);
            }
        }
        // DST also reads components z and w of its sources as they are.
        let raw_too = partly_raw(instr);
        for (k, r) in srcs.into_iter().enumerate() {
            match r {
                SrcReg::Input(i) => {
                    if flushed[k] {
                        u.inputs_flushed |= 1 << (i & 15);
                    }
                    if !flushed[k] || raw_too[k] {
                        u.inputs_raw |= 1 << (i & 15);
                    }
                }
                SrcReg::Temp(i) => u.temps |= 1 << (i & 15),
                SrcReg::Const(_) => {}
            }
        }
        match dst {
            Some(DstReg::Output(i)) => u.outputs |= 1 << (i & 15),
            Some(DstReg::Temp(i)) => u.temps |= 1 << (i & 15),
            None => {}
        }
    }
    zero_masks(analysis, &desc, &mut u);
    u
}

/// [`Usage::zero_temps`] and [`Usage::zero_outputs`]: a temporary component needs its +0
/// start unless the entry block writes it before anything reads it; an output component
/// unless the entry block writes it.
fn zero_masks(analysis: &Analysis, desc: &impl Fn(u8) -> OperandDesc, u: &mut Usage) {
    let (mut safe, mut read_first, mut written_out) = ([0u8; 16], [0u8; 16], [0u8; 16]);
    let mut read_anywhere = [0u8; 16];
    let entry: Vec<u32> = analysis
        .blocks
        .first()
        .map_or(Vec::new(), |b| b.nodes.clone());
    let parts = |instr: &Instruction| -> Option<(OperandDesc, Vec<SrcReg>, Option<DstReg>)> {
        let (d, srcs, _, dst) = alu_parts(instr)?;
        Some((desc(d), srcs, dst))
    };
    for node in &analysis.nodes {
        if let Some((d, srcs, _)) = parts(&node.instr) {
            for (n, r) in srcs.into_iter().enumerate() {
                if let SrcReg::Temp(i) = r {
                    read_anywhere[(i & 15) as usize] |= read_components(&node.instr, d, n);
                }
            }
        }
    }
    for id in entry {
        let instr = analysis.nodes[id as usize].instr;
        let Some((d, srcs, dst)) = parts(&instr) else {
            continue;
        };
        for (n, r) in srcs.into_iter().enumerate() {
            if let SrcReg::Temp(i) = r {
                let i = (i & 15) as usize;
                read_first[i] |= read_components(&instr, d, n) & !safe[i];
            }
        }
        // Bit c = component c (the descriptor's own mask bits run w, z, y, x).
        let m = (0..4)
            .filter(|&c| d.mask().has(c))
            .fold(0u8, |m, c| m | 1 << c);
        match dst {
            Some(DstReg::Temp(i)) => {
                let i = (i & 15) as usize;
                safe[i] |= m & !read_first[i];
            }
            Some(DstReg::Output(i)) => written_out[(i & 15) as usize] |= m,
            None => {}
        }
    }
    for i in 0..16 {
        u.zero_temps[i] = read_anywhere[i] & !safe[i];
        u.zero_outputs[i] = 0xF & !written_out[i];
    }
}

/// The program has cmp-dependent branches, so the lanes of a group may take different paths.
pub fn has_lane_branches(analysis: &Analysis) -> bool {
    analysis.nodes.iter().any(|n| {
        matches!(
            n.exit,
            Exit::Branch {
                guard: Guard::Cond(_),
                ..
            }
        )
    })
}

/// A divergent-branch stub: (stub, block, pc, taken, not taken).
type Split<L> = (L, usize, u32, Flow, Flow);

/// Drives one [`LaneEmitter`] over one analysed program.
pub struct Walker<'a, E: LaneEmitter> {
    e: &'a mut E,
    program: &'a Program,
    analysis: &'a Analysis,
    labels: Vec<E::Label>,
    cur_block: usize,
    splits: Vec<Split<E::Label>>,
    /// Stubs that park the running lanes at a block and schedule: (stub, block).
    parks: Vec<(E::Label, usize)>,
}

impl<'a, E: LaneEmitter> Walker<'a, E> {
    /// Prepare to walk `program` (already analysed) with `e`.
    pub fn new(e: &'a mut E, program: &'a Program, analysis: &'a Analysis) -> Self {
        let labels = (0..analysis.blocks.len()).map(|_| e.new_label()).collect();
        Walker {
            e,
            program,
            analysis,
            labels,
            cur_block: 0,
            splits: Vec::new(),
            parks: Vec::new(),
        }
    }

    /// Emit every block (block 0 first, where the emitter's body entry must be bound), then
    /// (with lane masks) the split and park stubs and the scheduler.
    pub fn walk(mut self) -> CompileResult<()> {
        self.body()?;
        self.masked_routines()
    }

    fn body(&mut self) -> CompileResult<()> {
        let nblocks = self.analysis.blocks.len();
        for bi in 0..nblocks {
            let block = &self.analysis.blocks[bi];
            self.e.bind(self.labels[bi]);
            self.cur_block = bi;
            self.e.block_start(bi, block.nodes.len() as u32);
            let next_block = self.analysis.blocks.get(bi + 1).map(|b| b.nodes[0]);
            let nodes = block.nodes.clone();
            let n = nodes.len();
            for (k, &id) in nodes.iter().enumerate() {
                let node = &self.analysis.nodes[id as usize];
                let (pc, instr, slot, exit) = (node.pc, node.instr, node.loop_slot, node.exit);
                let text = format!(
                    "{pc:03x}: {}",
                    picajit_interp::isa::format_instruction(&instr, self.program.opdescs())
                );
                self.e.mark(pc, text);
                self.e.begin_instruction(id as usize, pc, &instr);
                if self.e.supports(&instr) {
                    self.instruction(&instr, pc, slot)?;
                } else {
                    self.e.exit_deopt(pc);
                }
                self.e.end_instruction(&instr);
                if k + 1 == n {
                    self.exit(&exit, pc, next_block)?;
                }
            }
        }
        Ok(())
    }

    fn block_of(&self, node: u32) -> CompileResult<usize> {
        match self.analysis.leader_of.get(node as usize) {
            Some(Some(b)) => Ok(*b as usize),
            _ => Err(CompileError::Internal(format!(
                "jump to node {node}, which does not start a block"
            ))),
        }
    }

    fn park_stub(&mut self, b: usize) -> E::Label {
        if let Some(&(l, _)) = self.parks.iter().find(|p| p.1 == b) {
            return l;
        }
        let l = self.e.new_label();
        self.parks.push((l, b));
        l
    }

    fn goto(&mut self, t: Target, fallthrough: Option<u32>) -> CompileResult<()> {
        match t {
            Target::Node(n) => {
                let b = self.block_of(n)?;
                // The scheduler runs the lowest block any lane waits at, so that lanes meet
                // again where paths join. A jump goes straight on when that would be its
                // target anyway: no lane waits at the target or before it (always true for a
                // backward jump: every waiting lane waits after the current block, which was
                // the lowest).
                if self.e.lane_masks() && b > self.cur_block {
                    let stub = self.park_stub(b);
                    self.e.unless_lowest(b, stub);
                }
                if Some(n) != fallthrough {
                    self.e.jump(self.labels[b]);
                }
            }
            Target::Deopt(_, pc) => self.e.exit_deopt(pc),
        }
        Ok(())
    }

    fn flow(&mut self, f: &Flow, fallthrough: Option<u32>, pc: u32) -> CompileResult<()> {
        match *f {
            Flow::Goto(t) => self.goto(t, fallthrough),
            Flow::LoopEnd {
                int,
                slot,
                cont,
                exit,
            } => {
                if self.e.lane_masks() {
                    self.e.step_owned(slot, pc);
                }
                let again = match cont {
                    Target::Node(n) => self.labels[self.block_of(n)?],
                    Target::Deopt(_, pc) => {
                        // Iterating would run off the program: deopt from a local stub.
                        let stub = self.e.new_label();
                        self.e.loop_step(int, slot, stub);
                        self.goto(exit, None)?;
                        self.e.bind(stub);
                        self.e.exit_deopt(pc);
                        return Ok(());
                    }
                };
                self.e.loop_step(int, slot, again);
                self.goto(exit, fallthrough)
            }
        }
    }

    fn exit(&mut self, x: &Exit, pc: u32, fallthrough: Option<u32>) -> CompileResult<()> {
        match x {
            Exit::End => self.e.exit_end(),
            Exit::Deopt(_) => self.e.exit_deopt(pc),
            Exit::Flow(f) => self.flow(f, fallthrough, pc)?,
            Exit::Branch {
                guard,
                taken,
                not_taken,
            } => {
                let l = self.e.new_label();
                match *guard {
                    Guard::Bool { b, value } => self.e.branch_bool(b, value, l),
                    Guard::Cond(c) => {
                        let stub = self.e.new_label();
                        if self.e.lane_masks() {
                            self.splits
                                .push((stub, self.cur_block, pc, *taken, *not_taken));
                        }
                        self.e.branch_cond(c, l, stub, pc);
                    }
                }
                self.flow(not_taken, None, pc)?;
                self.e.bind(l);
                self.flow(taken, fallthrough, pc)?;
            }
        }
        Ok(())
    }

    /// Lane masks: the running lanes continue at `t`. They wait there, unless `direct_from`
    /// is the block of a split whose other lanes already wait and `t` is the lowest block
    /// anyone waits at (always when it is not after the split): then `t` runs at once.
    fn target_masked(&mut self, t: Target, direct_from: Option<usize>) -> CompileResult<()> {
        match t {
            Target::Node(n) => {
                let b = self.block_of(n)?;
                let l = self.labels[b];
                match direct_from {
                    Some(from) if b <= from => self.e.activate_and_jump(l),
                    Some(_) => {
                        let wait = self.e.new_label();
                        self.e.unless_lowest(b, wait);
                        self.e.activate_and_jump(l);
                        self.e.bind(wait);
                        self.e.park(b);
                    }
                    None => self.e.park(b),
                }
            }
            Target::Deopt(_, pc) => self.e.exit_deopt(pc),
        }
        Ok(())
    }

    /// Lane masks: `f` for the running lanes, recording where they continue (see
    /// [`Self::target_masked`] for `direct_from`).
    fn flow_masked(&mut self, f: &Flow, pc: u32, direct_from: Option<usize>) -> CompileResult<()> {
        match *f {
            Flow::Goto(t) => self.target_masked(t, direct_from),
            Flow::LoopEnd {
                int,
                slot,
                cont,
                exit,
            } => {
                self.e.step_owned(slot, pc);
                let (again, done) = (self.e.new_label(), self.e.new_label());
                self.e.loop_step(int, slot, again);
                self.target_masked(exit, direct_from)?;
                self.e.jump(done);
                self.e.bind(again);
                self.target_masked(cont, direct_from)?;
                self.e.bind(done);
                Ok(())
            }
        }
    }

    /// The block `f` continues at, if that does not depend on run-time state.
    fn static_block(&self, f: &Flow) -> Option<usize> {
        match *f {
            Flow::Goto(Target::Node(n)) => self.block_of(n).ok(),
            _ => None,
        }
    }

    /// `f` may continue at or before block `from` (a loop's next iteration, a jump back).
    fn may_go_back(&self, f: &Flow, from: usize) -> bool {
        match *f {
            Flow::LoopEnd { .. } => true,
            Flow::Goto(Target::Node(n)) => self.block_of(n).is_ok_and(|b| b <= from),
            Flow::Goto(Target::Deopt(..)) => false,
        }
    }

    /// The code of masked execution that blocks share: divergent-branch splits, parking,
    /// the scheduler and its jump table.
    fn masked_routines(&mut self) -> CompileResult<()> {
        if !self.e.lane_masks() {
            return Ok(());
        }
        let table = self.e.new_label();
        for (stub, b) in std::mem::take(&mut self.parks) {
            self.e.bind(stub);
            self.e.park(b);
            self.e.dispatch(table);
        }
        // The arm likely to continue at the lowest block (the nearer of two jumps, a
        // BREAKC's next iteration) is handled last, so that it can run at once instead of
        // through the scheduler.
        for (stub, from, pc, taken, not_taken) in std::mem::take(&mut self.splits) {
            self.e.bind(stub);
            self.e.split_enter();
            let taken_last = match (self.static_block(&taken), self.static_block(&not_taken)) {
                (Some(t), Some(n)) => t < n,
                _ => self.may_go_back(&taken, from) && !self.may_go_back(&not_taken, from),
            };
            let order = if taken_last {
                [(false, not_taken), (true, taken)]
            } else {
                [(true, taken), (false, not_taken)]
            };
            for (k, (is_taken, f)) in order.into_iter().enumerate() {
                self.e.split_lanes(is_taken);
                self.flow_masked(&f, pc, (k == 1).then_some(from))?;
            }
            self.e.dispatch(table);
        }
        let labels = self.labels.clone();
        self.e.masked_tail(table, &labels)
    }

    /// One instruction, component by component: only the components the write mask keeps
    /// are computed, each from the source components its swizzle selects.
    fn instruction(&mut self, instr: &Instruction, pc: u32, slot: Option<u8>) -> CompileResult<()> {
        const RES: [V; 4] = [V::Res(0), V::Res(1), V::Res(2), V::Res(3)];
        let program = self.program;
        let desc_of = |index: u8| OperandDesc(program.opdesc(index as usize));
        let e = &mut *self.e;
        match *instr {
            Instruction::Binary {
                op,
                dst,
                src1,
                src2,
                rel,
                desc,
            } => {
                let d = desc_of(desc);
                let mask = d.mask().lanes();
                if d.mask().0 & 0xF == 0 {
                    return Ok(());
                }
                let [r1, r2, _] = instr.operands().map_or([rel; 3], |o| o.rel);
                let fl = flushed_sources(instr);
                // DST reads components z and w as they are.
                let fl = [0, 1].map(|k| fl[k] && op.base() != Opcode::Dst);
                let s1 = e.operand(src1, r1, d, 0, fl[0]);
                let s2 = e.operand(src2, r2, d, 1, fl[1]);
                match op.base() {
                    Opcode::Dp3 | Opcode::Dp4 | Opcode::Dph => {
                        dot(e, op.base(), &s1, &s2);
                        e.store_results(dst, mask, [V::P(0); 4], [true; 4]);
                    }
                    Opcode::Dst => {
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
                        let tiny_free = [true, true, e.tiny_free(&s1, 2), e.tiny_free(&s2, 3)];
                        e.store_results(dst, mask, RES, tiny_free);
                    }
                    base => {
                        for c in 0..4 {
                            if !mask[c] {
                                continue;
                            }
                            let res = V::Res(c as u8);
                            match base {
                                Opcode::Add | Opcode::Mul => {
                                    e.load_flushed(V::A, &s1, c);
                                    e.load_flushed(V::B, &s2, c);
                                    if base == Opcode::Add {
                                        e.add(res, V::A, V::B);
                                    } else {
                                        e.mul(res, V::A, V::B);
                                    }
                                }
                                _ => {
                                    let sel = match base {
                                        Opcode::Max => Select::Max,
                                        Opcode::Min => Select::Min,
                                        Opcode::Sge => Select::Sge,
                                        Opcode::Slt => Select::Slt,
                                        other => {
                                            return Err(CompileError::Internal(format!(
                                                "{other} decoded as a binary instruction"
                                            )))
                                        }
                                    };
                                    e.load(V::A, &s1, c);
                                    e.load(V::B, &s2, c);
                                    e.select(sel, res, V::A, V::B);
                                }
                            }
                        }
                        // MIN/MAX return an operand as it is.
                        let fixed = !matches!(base, Opcode::Min | Opcode::Max);
                        e.store_results(dst, mask, RES, [fixed; 4]);
                    }
                }
            }
            Instruction::Unary {
                op,
                dst,
                src,
                rel,
                desc,
            } => {
                let d = desc_of(desc);
                let mask = d.mask().lanes();
                let write = d.mask().0 & 0xF != 0;
                // LITP sets the flags even when it writes no lane.
                if !write && op != Opcode::Litp {
                    return Ok(());
                }
                let s = e.operand(src, rel, d, 0, flushed_sources(instr)[0]);
                match op {
                    Opcode::Mov => {
                        for c in 0..4 {
                            if mask[c] {
                                e.load(V::Res(c as u8), &s, c);
                            }
                        }
                        let tiny_free = [0, 1, 2, 3].map(|c| e.tiny_free(&s, c));
                        e.store_results(dst, mask, RES, tiny_free);
                        e.note_mov(dst, src, &s, mask);
                    }
                    Opcode::Flr => {
                        for c in 0..4 {
                            if mask[c] {
                                e.load_flushed(V::A, &s, c);
                                e.flr(V::Res(c as u8), V::A);
                            }
                        }
                        e.store_results(dst, mask, RES, [true; 4]);
                    }
                    Opcode::Rcp | Opcode::Rsq | Opcode::Ex2 | Opcode::Lg2 => {
                        e.scalar(op, &s);
                        // Every result is rounded by the mode (EX2/LG2 too): tiny-free.
                        e.store_results(dst, mask, [V::P(0); 4], [true; 4]);
                    }
                    Opcode::Litp => {
                        e.litp(&s, mask);
                        if write {
                            e.store_results(dst, mask, RES, [false; 4]);
                        }
                    }
                    other => {
                        return Err(CompileError::Internal(format!(
                            "{other} decoded as a unary instruction"
                        )))
                    }
                }
            }
            Instruction::Mova { src, rel, desc } => {
                let d = desc_of(desc);
                let (x, y) = (d.mask().has(0), d.mask().has(1));
                if x || y {
                    let s = e.operand(src, rel, d, 0, false);
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
            }
            Instruction::Cmp {
                src1,
                src2,
                rel,
                x,
                y,
                desc,
            } => {
                let d = desc_of(desc);
                let s1 = e.operand(src1, rel, d, 0, false);
                let s2 = e.operand(src2, RelIndex::None, d, 1, false);
                for (c, op) in [(0usize, x), (1, y)] {
                    e.load(V::A, &s1, c);
                    e.load(V::B, &s2, c);
                    e.cmp_mask(V::Res(c as u8), op, V::A, V::B);
                }
                for c in 0..2 {
                    e.store_cmp(c, V::Res(c as u8));
                }
            }
            Instruction::Mad {
                op: _,
                dst,
                src1,
                src2,
                src3,
                rel,
                desc,
            } => {
                let d = desc_of(desc);
                let mask = d.mask().lanes();
                if d.mask().0 & 0xF == 0 {
                    return Ok(());
                }
                let [r1, r2, r3] = instr.operands().map_or([rel; 3], |o| o.rel);
                let s1 = e.operand(src1, r1, d, 0, true);
                let s2 = e.operand(src2, r2, d, 1, true);
                let s3 = e.operand(src3, r3, d, 2, true);
                for c in 0..4 {
                    if mask[c] {
                        e.load_flushed(V::A, &s1, c);
                        e.load_flushed(V::B, &s2, c);
                        e.mul(V::P(0), V::A, V::B);
                        e.load_flushed(V::C, &s3, c);
                        e.add(V::Res(c as u8), V::P(0), V::C);
                    }
                }
                e.store_results(dst, mask, RES, [true; 4]);
            }
            Instruction::Loop { i, .. } => {
                let slot = slot.ok_or_else(|| {
                    CompileError::Internal(format!("LOOP at 0x{pc:03x} has no counter slot"))
                })?;
                e.loop_init(i, slot);
                if e.lane_masks() {
                    e.own_loop(slot);
                }
            }
            Instruction::Emit => e.emit(pc)?,
            // SETEMIT's parameters are constants of each EMIT site (`GsPlan::emit_flags`).
            // The rest is the node's exit.
            Instruction::SetEmit { .. }
            | Instruction::Nop
            | Instruction::End
            | Instruction::Break
            | Instruction::BreakC { .. }
            | Instruction::Call { .. }
            | Instruction::CallC { .. }
            | Instruction::CallU { .. }
            | Instruction::IfC { .. }
            | Instruction::IfU { .. }
            | Instruction::JmpC { .. }
            | Instruction::JmpU { .. }
            | Instruction::Undefined { .. } => {}
        }
        Ok(())
    }
}

/// DP3/DP4/DPH into `P(0)`: products `mul(a_i, b_i)`, then `(p0 + p1) + (p2 + p3)`.
fn dot<E: LaneEmitter>(e: &mut E, op: Opcode, s1: &E::Operand, s2: &E::Operand) {
    let n = if op == Opcode::Dp3 { 3 } else { 4 };
    for i in 0..n {
        if op == Opcode::Dph && i == 3 {
            e.one(V::A);
        } else {
            e.load_flushed(V::A, s1, i);
        }
        e.load_flushed(V::B, s2, i);
        e.mul(V::P(i as u8), V::A, V::B);
    }
    e.add(V::P(0), V::P(0), V::P(1));
    if n == 4 {
        e.add(V::P(2), V::P(2), V::P(3));
    }
    // DP3: add(p2, +0) is p2 (a mode result), so the second pair is p2 alone.
    e.add(V::P(0), V::P(0), V::P(2));
}
