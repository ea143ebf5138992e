//! Reachable code as a graph of *nodes*, one per (PC, static stack context) pair that execution
//! can reach from the entry point, and the straight-line *blocks* generated code is laid out in.
//!
//! A node executes one instruction and then leaves through an [`Exit`]: END, a deopt, or a
//! [`Flow`] (possibly behind a runtime [`Guard`]). Flows are either a plain goto or a loop end
//! (a runtime decision between iterating again and leaving). A block is a chain of nodes linked
//! by plain gotos, entered only at its first node; generated code charges the instruction
//! budget once per block.

use super::regions::{next_pc, CallFrame, IfFrame, NextPc, StackContext};
use crate::error::{CompileError, CompileResult};
use picajit_interp::pica::isa::{decode, Condition, Instruction};
use picajit_interp::pica::program::Program;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// Nodes beyond this make the program [`Error::Unsupported`](crate::error::Error::Unsupported).
pub const MAX_NODES: usize = 8192;

/// Why compiled code hands an invocation back to the interpreter at a given place. The
/// interpreter then reports the matching [`picajit_interp::pica::exec::ExecError`] itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeoptReason {
    /// An undefined opcode would execute.
    UndefinedOpcode,
    /// BREAK/BREAKC taken with an empty LOOP stack.
    BreakWithoutLoop,
    /// Execution would continue past the last code word.
    PcOutOfRange,
}

impl fmt::Display for DeoptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeoptReason::UndefinedOpcode => "undefined opcode",
            DeoptReason::BreakWithoutLoop => "break with an empty loop stack",
            DeoptReason::PcOutOfRange => "pc out of range",
        })
    }
}

/// A runtime test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// A condition on the cmp flags.
    Cond(Condition),
    /// Bool uniform `b` equals `value`.
    Bool {
        /// Uniform index.
        b: u8,
        /// Value that makes the guard true.
        value: bool,
    },
}

/// Where a flow edge leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Another node.
    Node(u32),
    /// Back to the interpreter; `pc` is where the problem is.
    Deopt(DeoptReason, u32),
}

/// A control transfer after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Unconditional.
    Goto(Target),
    /// End of a loop body: aL += i`int`.z; then if `loop_counters[slot] > 0`, decrement it and go
    /// to `cont`, else go to `exit`.
    LoopEnd {
        /// Int uniform of the loop.
        int: u8,
        /// Counter slot.
        slot: u8,
        /// Next iteration.
        cont: Target,
        /// After the loop.
        exit: Target,
    },
}

/// How a node is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// END: the invocation is done.
    End,
    /// The instruction itself cannot run compiled.
    Deopt(DeoptReason),
    /// One flow.
    Flow(Flow),
    /// `taken` if the guard holds, else `not_taken`.
    Branch {
        /// The test.
        guard: Guard,
        /// Flow when it holds.
        taken: Flow,
        /// Flow otherwise.
        not_taken: Flow,
    },
}

/// One instruction under one stack context.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// PICA address.
    pub pc: u32,
    /// Index into [`super::Analysis::contexts`].
    pub ctx: u32,
    /// The decoded instruction.
    pub instr: Instruction,
    /// For LOOP: the counter slot of the frame it pushes.
    pub loop_slot: Option<u8>,
    /// How it is left.
    pub exit: Exit,
}

/// A straight-line run of nodes, entered only at the first one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Node indices in execution order.
    pub nodes: Vec<u32>,
}

/// The node graph and its blocks.
#[derive(Clone, Debug)]
pub struct Graph {
    /// All reachable nodes; node 0 is the entry.
    pub nodes: Vec<Node>,
    /// The distinct stack contexts.
    pub contexts: Vec<StackContext>,
    /// Blocks in layout order (the entry block first).
    pub blocks: Vec<Block>,
    /// For each node, the block it starts, if it is a leader.
    pub leader_of: Vec<Option<u32>>,
}

/// A multiply-rotate hasher for the builder's small integer keys. The default SipHash guards
/// against adversarial keys, which addresses and stack contexts derived from one program are
/// not (the node count is capped anyway), and cost a tenth of the compile time.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FastHash = BuildHasherDefault<FxHasher>;

struct Builder<'p> {
    program: &'p Program,
    nodes: Vec<Node>,
    contexts: Vec<StackContext>,
    ctx_ids: HashMap<StackContext, u32, FastHash>,
    node_ids: HashMap<(u32, u32), u32, FastHash>,
    work: Vec<u32>,
}

impl Builder<'_> {
    fn ctx_id(&mut self, c: StackContext) -> u32 {
        if let Some(&id) = self.ctx_ids.get(&c) {
            return id;
        }
        let id = self.contexts.len() as u32;
        self.contexts.push(c.clone());
        self.ctx_ids.insert(c, id);
        id
    }

    fn target(&mut self, pc: u32, c: StackContext) -> CompileResult<Target> {
        if pc as usize >= self.program.code().len() {
            return Ok(Target::Deopt(DeoptReason::PcOutOfRange, pc));
        }
        let ctx = self.ctx_id(c);
        if let Some(&id) = self.node_ids.get(&(pc, ctx)) {
            return Ok(Target::Node(id));
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(CompileError::Unsupported(format!(
                "control flow reaches more than {MAX_NODES} (address, stack context) pairs \
                 ({} distinct stack contexts so far)",
                self.contexts.len()
            )));
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            pc,
            ctx,
            instr: decode(self.program.code()[pc as usize]),
            loop_slot: None,
            exit: Exit::End,
        });
        self.node_ids.insert((pc, ctx), id);
        self.work.push(id);
        Ok(Target::Node(id))
    }

    fn flow(&mut self, c: &StackContext, pc: u32, jump: Option<u32>) -> CompileResult<Flow> {
        self.flow_with(c, pc, jump, false)
    }

    fn flow_with(
        &mut self,
        c: &StackContext,
        pc: u32,
        jump: Option<u32>,
        broke: bool,
    ) -> CompileResult<Flow> {
        Ok(match next_pc(c, pc, jump, broke) {
            NextPc::Static(pc, c) => Flow::Goto(self.target(pc, c)?),
            NextPc::LoopEnd {
                int,
                slot,
                cont,
                exit,
            } => Flow::LoopEnd {
                int,
                slot,
                cont: self.target(cont.0, cont.1)?,
                exit: self.target(exit.0, exit.1)?,
            },
        })
    }

    fn call_flow(&mut self, c: &StackContext, pc: u32, dest: u16, num: u8) -> CompileResult<Flow> {
        let mut c = c.clone();
        c.push_call(CallFrame {
            end: dest as u32 + num as u32,
            ret: pc + 1,
        });
        self.flow(&c, pc, Some(dest as u32))
    }

    fn break_flow(&mut self, c: &StackContext, pc: u32) -> CompileResult<Flow> {
        let mut c = c.clone();
        match c.loops.pop() {
            Some(f) => self.flow_with(&c, pc, Some(f.end), true),
            None => Ok(Flow::Goto(Target::Deopt(DeoptReason::BreakWithoutLoop, pc))),
        }
    }

    fn visit(&mut self, id: u32) -> CompileResult<()> {
        let node = &self.nodes[id as usize];
        let (pc, instr) = (node.pc, node.instr);
        let c = self.contexts[node.ctx as usize].clone();
        let mut loop_slot = None;
        let branch = |guard, taken, not_taken| Exit::Branch {
            guard,
            taken,
            not_taken,
        };
        let exit = match instr {
            Instruction::End => Exit::End,
            Instruction::Undefined { .. } => Exit::Deopt(DeoptReason::UndefinedOpcode),
            Instruction::Break => {
                if c.loops.is_empty() {
                    Exit::Deopt(DeoptReason::BreakWithoutLoop)
                } else {
                    Exit::Flow(self.break_flow(&c, pc)?)
                }
            }
            Instruction::BreakC { cond } => {
                let taken = self.break_flow(&c, pc)?;
                let not_taken = self.flow(&c, pc, None)?;
                branch(Guard::Cond(cond), taken, not_taken)
            }
            Instruction::Call { dest, num } => Exit::Flow(self.call_flow(&c, pc, dest, num)?),
            Instruction::CallC { cond, dest, num } => {
                let taken = self.call_flow(&c, pc, dest, num)?;
                let not_taken = self.flow(&c, pc, None)?;
                branch(Guard::Cond(cond), taken, not_taken)
            }
            Instruction::CallU { b, dest, num } => {
                let taken = self.call_flow(&c, pc, dest, num)?;
                let not_taken = self.flow(&c, pc, None)?;
                branch(Guard::Bool { b, value: true }, taken, not_taken)
            }
            Instruction::IfC { cond, dest, num } => {
                let (taken, not_taken) = self.if_flows(&c, pc, dest, num)?;
                branch(Guard::Cond(cond), taken, not_taken)
            }
            Instruction::IfU { b, dest, num } => {
                let (taken, not_taken) = self.if_flows(&c, pc, dest, num)?;
                branch(Guard::Bool { b, value: true }, taken, not_taken)
            }
            Instruction::Loop { i, dest } => {
                let mut c2 = c.clone();
                loop_slot = Some(c2.push_loop(dest as u32 + 1, pc + 1, i));
                Exit::Flow(self.flow(&c2, pc, None)?)
            }
            Instruction::JmpC { cond, dest } => {
                let taken = self.flow(&c, pc, Some(dest as u32))?;
                let not_taken = self.flow(&c, pc, None)?;
                branch(Guard::Cond(cond), taken, not_taken)
            }
            Instruction::JmpU { b, dest, invert } => {
                let taken = self.flow(&c, pc, Some(dest as u32))?;
                let not_taken = self.flow(&c, pc, None)?;
                branch(Guard::Bool { b, value: !invert }, taken, not_taken)
            }
            Instruction::Binary { .. }
            | Instruction::Unary { .. }
            | Instruction::Mova { .. }
            | Instruction::Cmp { .. }
            | Instruction::Mad { .. }
            | Instruction::Nop
            | Instruction::Emit
            | Instruction::SetEmit { .. } => Exit::Flow(self.flow(&c, pc, None)?),
        };
        let node = &mut self.nodes[id as usize];
        node.exit = exit;
        node.loop_slot = loop_slot;
        Ok(())
    }

    fn if_flows(
        &mut self,
        c: &StackContext,
        pc: u32,
        dest: u16,
        num: u8,
    ) -> CompileResult<(Flow, Flow)> {
        let mut t = c.clone();
        t.push_if(IfFrame {
            end: dest as u32,
            target: dest as u32 + num as u32,
        });
        let taken = self.flow(&t, pc, None)?;
        let not_taken = self.flow(c, pc, Some(dest as u32))?;
        Ok((taken, not_taken))
    }
}

fn flow_targets(f: &Flow, out: &mut Vec<Target>) {
    match *f {
        Flow::Goto(t) => out.push(t),
        Flow::LoopEnd { cont, exit, .. } => {
            out.push(cont);
            out.push(exit);
        }
    }
}

/// Every target an exit can lead to.
pub fn exit_targets(e: &Exit) -> Vec<Target> {
    let mut v = Vec::new();
    match e {
        Exit::End | Exit::Deopt(_) => {}
        Exit::Flow(f) => flow_targets(f, &mut v),
        Exit::Branch {
            taken, not_taken, ..
        } => {
            flow_targets(taken, &mut v);
            flow_targets(not_taken, &mut v);
        }
    }
    v
}

/// Explore everything reachable from the entry point and cut it into blocks.
pub fn build(program: &Program) -> CompileResult<Graph> {
    let mut b = Builder {
        program,
        nodes: Vec::new(),
        contexts: Vec::new(),
        ctx_ids: HashMap::default(),
        node_ids: HashMap::default(),
        work: Vec::new(),
    };
    match b.target(program.entry() as u32, StackContext::default())? {
        Target::Node(0) => {}
        _ => return Err(CompileError::Internal("entry point is not node 0".into())),
    }
    while let Some(id) = b.work.pop() {
        b.visit(id)?;
    }
    let nodes = b.nodes;

    // Leaders: the entry, and every node not reached by exactly one plain goto from another node.
    let mut preds = vec![0u32; nodes.len()];
    let mut goto_pred: Vec<Option<u32>> = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for t in exit_targets(&n.exit) {
            if let Target::Node(d) = t {
                preds[d as usize] += 1;
            }
        }
        if let Exit::Flow(Flow::Goto(Target::Node(d))) = n.exit {
            goto_pred[d as usize] = Some(i as u32);
        }
    }
    let is_leader: Vec<bool> = (0..nodes.len())
        .map(|i| {
            i == 0
                || preds[i] != 1
                || match goto_pred[i] {
                    Some(p) => p as usize == i,
                    None => true,
                }
        })
        .collect();

    let mut order: Vec<u32> = (0..nodes.len() as u32)
        .filter(|&i| is_leader[i as usize])
        .collect();
    // Entry first, then by address, so the layout reads like the source.
    order[1..].sort_by_key(|&i| (nodes[i as usize].pc, nodes[i as usize].ctx));

    let mut leader_of = vec![None; nodes.len()];
    let mut blocks = Vec::with_capacity(order.len());
    for &l in &order {
        leader_of[l as usize] = Some(blocks.len() as u32);
        let mut chain = vec![l];
        let mut cur = l;
        while let Exit::Flow(Flow::Goto(Target::Node(d))) = nodes[cur as usize].exit {
            if is_leader[d as usize] {
                break;
            }
            chain.push(d);
            cur = d;
        }
        blocks.push(Block { nodes: chain });
    }
    let covered: usize = blocks.iter().map(|b| b.nodes.len()).sum();
    if covered != nodes.len() {
        return Err(CompileError::Internal(format!(
            "blocks cover {covered} of {} nodes",
            nodes.len()
        )));
    }
    Ok(Graph {
        nodes,
        contexts: b.contexts,
        blocks,
        leader_of,
    })
}
