//! The block walker: the analysed blocks in order, each charged to the budget once, every
//! instruction through [`super::ops`], every block's exit as jumps, loop steps and branches.
//!
//! With lane masks ([`Emitter::lane_masks`]; "Divergence" in `batch/x64.rs`) a branch whose
//! lanes disagree parks each set of lanes at its target block, and a jump forward checks
//! whether lanes wait at or before its target; the walker decides where lanes wait and in
//! which order a split's arms run, and emits the split and park stubs after the blocks.
//! Without lane masks these hooks are never called and every branch is a plain branch.

use super::{ops, Emitter};
use crate::error::{CompileError, CompileResult};
use crate::pica::analysis::{Analysis, Exit, Flow, Guard, Target};
use picajit_interp::pica::isa::Instruction;
use picajit_interp::pica::program::Program;

/// A divergent-branch stub: (stub, block, pc, taken, not taken).
type Split<L> = (L, usize, u32, Flow, Flow);

/// Drives one [`Emitter`] over one analysed program.
pub struct Walker<'a, E: Emitter> {
    e: &'a mut E,
    program: &'a Program,
    analysis: &'a Analysis,
    labels: Vec<E::Label>,
    cur_block: usize,
    splits: Vec<Split<E::Label>>,
    /// Stubs that park the running lanes at a block and schedule: (stub, block).
    parks: Vec<(E::Label, usize)>,
}

impl<'a, E: Emitter> Walker<'a, E> {
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

    /// Emit every block, then (with lane masks) the split and park stubs and the scheduler.
    pub fn walk(mut self) -> CompileResult<()> {
        self.body()?;
        self.masked_routines()
    }

    fn body(&mut self) -> CompileResult<()> {
        let analysis = self.analysis;
        for (bi, block) in analysis.blocks.iter().enumerate() {
            self.e.bind(self.labels[bi]);
            self.cur_block = bi;
            self.e.block_start(bi, block.nodes.len() as u32);
            let next_block = analysis.blocks.get(bi + 1).map(|b| b.nodes[0]);
            let n = block.nodes.len();
            for (k, &id) in block.nodes.iter().enumerate() {
                let node = &analysis.nodes[id as usize];
                let (pc, instr) = (node.pc, &node.instr);
                self.e.begin_instruction(id as usize, pc, instr);
                if self.e.supports(instr) {
                    self.instruction(instr, pc, node.loop_slot)?;
                } else {
                    self.e.exit_deopt(pc);
                }
                self.e.end_instruction(instr);
                // Interior nodes fall through to the next node of the chain.
                if k + 1 == n {
                    self.exit(&node.exit, pc, next_block)?;
                }
            }
        }
        Ok(())
    }

    fn instruction(&mut self, instr: &Instruction, pc: u32, slot: Option<u8>) -> CompileResult<()> {
        if let Instruction::Loop { i, .. } = *instr {
            let slot = slot.ok_or_else(|| {
                CompileError::Internal(format!("LOOP at 0x{pc:03x} has no counter slot"))
            })?;
            self.e.loop_init(i, slot);
            if self.e.lane_masks() {
                self.e.own_loop(slot);
            }
            return Ok(());
        }
        // The other control-flow instructions are the node's exit (the analysis gives every
        // instruction its exit).
        ops::instruction(self.e, self.program, instr, pc)
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

    /// Continue at `t`: a jump unless it is the block laid out next (`fallthrough`).
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
                let split = match guard {
                    Guard::Cond(_) if self.e.lane_masks() => {
                        let stub = self.e.new_label();
                        self.splits
                            .push((stub, self.cur_block, pc, *taken, *not_taken));
                        Some(stub)
                    }
                    _ => None,
                };
                self.e.branch(*guard, l, split, pc);
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
}
