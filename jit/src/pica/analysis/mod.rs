//! Static analysis: which code is reachable, under which stack contexts, and how it is cut into
//! blocks. See [`regions`] for why control flow is resolved at compile time and [`blocks`] for
//! the node graph; [`usage`] and [`points`] are what the multi-vertex code needs to know about a
//! program before it is lowered.
//!
//! # What compiled code can and cannot do
//!
//! Everything about the CALL/IF/LOOP stacks is resolved here, so compiled code never keeps a
//! stack: it jumps between (address, context) instances and keeps only the loop counters, aL,
//! a0, the cmp flags and the budget at run time. A program is refused
//! ([`crate::error::Error::Unsupported`]) only when the number of instances exceeds
//! [`blocks::MAX_NODES`] (deep recursion through the rings, say).
//!
//! Situations whose outcome is an interpreter error (undefined opcode, BREAK on an empty loop
//! stack, running off the end of the program) are not errors here: they become *deopt exits*
//! at the place they happen, because they may be unreachable at run time. So does running out
//! of instruction budget, which compiled code checks once per block (see `lower/mod.rs`).

pub mod blocks;
pub mod points;
pub mod regions;
pub mod usage;

pub use blocks::{Block, DeoptReason, Exit, Flow, Guard, Node, Target};
pub use regions::StackContext;

use crate::error::CompileResult;
use picajit_interp::pica::isa::{DstReg, Instruction, SrcReg};
use picajit_interp::pica::program::Program;
use std::collections::BTreeSet;
use std::fmt;

/// Upper bounds on one run of a program, from [`Analysis::run_bounds`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBounds {
    /// Instructions executed, END included.
    pub instructions: u64,
    /// EMIT instructions executed.
    pub emits: u32,
}

/// The analysis of one program, as the lowering consumes it and as the API reports it.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Reachable nodes; node 0 is the entry.
    pub nodes: Vec<Node>,
    /// Distinct stack contexts; context 0 is the empty one.
    pub contexts: Vec<StackContext>,
    /// Blocks in layout order.
    pub blocks: Vec<Block>,
    /// For each node, the block it starts (if it is a block leader).
    pub leader_of: Vec<Option<u32>>,
    /// Reachable instruction addresses.
    pub reachable: BTreeSet<u32>,
    /// Operand descriptors the reachable instructions use.
    pub descriptors: BTreeSet<u8>,
}

impl Analysis {
    /// Analyse `program` from its entry point.
    pub fn new(program: &Program) -> CompileResult<Analysis> {
        let g = blocks::build(program)?;
        let reachable = g.nodes.iter().map(|n| n.pc).collect();
        let descriptors = g.nodes.iter().filter_map(|n| n.instr.desc()).collect();
        Ok(Analysis {
            nodes: g.nodes,
            contexts: g.contexts,
            blocks: g.blocks,
            leader_of: g.leader_of,
            reachable,
            descriptors,
        })
    }

    /// Deepest CALL, IF and LOOP nesting any context reaches.
    pub fn max_depths(&self) -> (usize, usize, usize) {
        self.contexts.iter().fold((0, 0, 0), |(c, i, l), x| {
            (
                c.max(x.calls.len()),
                i.max(x.ifs.len()),
                l.max(x.loops.len()),
            )
        })
    }

    /// Places where compiled code hands the invocation back to the interpreter, with reasons.
    pub fn deopt_sites(&self) -> Vec<(u32, DeoptReason)> {
        let mut v: BTreeSet<(u32, String)> = BTreeSet::new();
        let mut out = Vec::new();
        for n in &self.nodes {
            let mut add = |pc: u32, r: DeoptReason| {
                if v.insert((pc, r.to_string())) {
                    out.push((pc, r));
                }
            };
            if let Exit::Deopt(r) = n.exit {
                add(n.pc, r);
            }
            for t in blocks::exit_targets(&n.exit) {
                if let Target::Deopt(r, pc) = t {
                    add(pc, r);
                }
            }
        }
        out.sort_by_key(|x| x.0);
        out
    }

    /// `(temporaries, outputs)` that reachable instructions may write, bit n = r`n` / o`n`:
    /// all that compiled code changes in those banks, so all a deopt has to undo there.
    pub fn written_registers(&self) -> (u16, u16) {
        let (mut temps, mut outputs) = (0u16, 0u16);
        for n in &self.nodes {
            let Some(dst) = n.instr.operands().and_then(|o| o.dst) else {
                continue;
            };
            match dst {
                DstReg::Temp(i) => temps |= 1 << (i & 15),
                DstReg::Output(i) => outputs |= 1 << (i & 15),
            }
        }
        (temps, outputs)
    }

    /// Temporaries some reachable instruction reads (bit n = r`n`): the ones a fresh
    /// invocation must see as +0. The others are written before any read, or never read.
    pub fn read_temps(&self) -> u16 {
        let mut temps = 0u16;
        for n in &self.nodes {
            let Some(o) = n.instr.operands() else {
                continue;
            };
            for (_, s, _) in o.sources() {
                if let SrcReg::Temp(i) = s {
                    temps |= 1 << (i & 15);
                }
            }
        }
        temps
    }

    /// For programs whose every run ends at END without a loop back edge: the most
    /// instructions and the most EMITs any run executes. `None` when some run can deopt for a
    /// reason other than those two limits, or when the node graph has a cycle (a LOOP, whose
    /// trip count comes from the uniforms).
    ///
    /// With a budget and EMIT room at least this large, compiled code always finishes: the
    /// budget check at a block's start fails only when fewer instructions are left than the
    /// block has, and every path still ahead is at least that long.
    pub fn run_bounds(&self) -> Option<RunBounds> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        if !self.deopt_sites().is_empty() {
            return None;
        }
        let n = self.nodes.len();
        let mut state = vec![NEW; n];
        // Longest remaining (instructions, EMITs) from each node, itself included.
        let mut best = vec![(0u64, 0u32); n];
        // Iterative post-order DFS: programs can have thousands of nodes.
        let mut stack: Vec<(usize, bool)> = vec![(0, false)];
        while let Some((id, expanded)) = stack.pop() {
            let node = &self.nodes[id];
            let succ = || {
                blocks::exit_targets(&node.exit)
                    .into_iter()
                    .filter_map(|t| match t {
                        Target::Node(m) => Some(m as usize),
                        Target::Deopt(..) => None,
                    })
            };
            if expanded {
                let (mut instr, mut emits) = (0, 0);
                for m in succ() {
                    instr = instr.max(best[m].0);
                    emits = emits.max(best[m].1);
                }
                let emit = matches!(node.instr, Instruction::Emit) as u32;
                best[id] = (instr + 1, emits + emit);
                state[id] = DONE;
                continue;
            }
            match state[id] {
                DONE => continue,
                OPEN => return None,
                _ => {}
            }
            state[id] = OPEN;
            stack.push((id, true));
            for m in succ() {
                match state[m] {
                    OPEN => return None,
                    NEW => stack.push((m, false)),
                    _ => {}
                }
            }
        }
        let (instructions, emits) = best[0];
        Some(RunBounds {
            instructions,
            emits,
        })
    }

    /// Number of distinct CALL, IF and LOOP instructions reached (the source regions).
    pub fn region_counts(&self) -> (usize, usize, usize) {
        let mut calls = BTreeSet::new();
        let mut ifs = BTreeSet::new();
        let mut loops = BTreeSet::new();
        for n in &self.nodes {
            match n.instr {
                Instruction::Call { .. }
                | Instruction::CallC { .. }
                | Instruction::CallU { .. } => {
                    calls.insert(n.pc);
                }
                Instruction::IfC { .. } | Instruction::IfU { .. } => {
                    ifs.insert(n.pc);
                }
                Instruction::Loop { .. } => {
                    loops.insert(n.pc);
                }
                _ => {}
            }
        }
        (calls.len(), ifs.len(), loops.len())
    }
}

impl fmt::Display for Analysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (c, i, l) = self.region_counts();
        let (dc, di, dl) = self.max_depths();
        write!(
            f,
            "{} reachable instructions, {} instances in {} blocks, {} stack contexts; \
             regions: {c} call, {i} if, {l} loop (max depth {dc}/{di}/{dl})",
            self.reachable.len(),
            self.nodes.len(),
            self.blocks.len(),
            self.contexts.len(),
        )?;
        let d = self.deopt_sites();
        if !d.is_empty() {
            write!(f, "; deopt exits:")?;
            for (pc, r) in d {
                write!(f, " 0x{pc:03x} ({r})")?;
            }
        }
        Ok(())
    }
}

/// Indices of the set bits of `mask`, lowest first.
pub(crate) fn bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}
