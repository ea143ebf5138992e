//! [`Shape::Points`](super::Shape::Points) of the generator: random point-mode geometry
//! programs for `tests/jit_points.rs`, built to be eligible for
//! the eight-invocation (SoA) path, and an independent checker of that eligibility.
//!
//! Programs are generated as a structured tree ([`Node`]) and laid out into code words by
//! [`Gen::program`]: IFU with and without .else, LOOP, CALL/CALLU of subroutines placed after
//! `main`, JMPU over a block, BREAK inside an IFU/JMPU arm of a loop, early END inside an arm.
//! Every block ends with a plain instruction, so that no region ends where an enclosing one
//! does and no jump is the last word of a region (hardware quirks the interpreter
//! reproduces), and BREAK is only used outside IFU blocks (a BREAK inside one leaves the IF
//! frame on the stack). `Shape::Points { quirks: true }` drops both restrictions for some blocks: those
//! programs do not always mean what the tree says, so [`Sim`]'s verdict on them is only
//! approximate.
//!
//! [`Sim`] is the eligibility rule of the eight-lane geometry path (`plan` in
//! `jit/src/pica/batch/geometry.rs`), written down independently of the JIT: an
//! abstract interpretation over the tree (subroutines analysed per call site, loops to a
//! fixed point, at least one iteration) that tracks, per path, the temporary components and
//! a0 components written in this invocation, whether a LOOP has set aL, the output
//! components written since the last EMIT (must and may), and the SETEMIT state (carried
//! over, one known constant, or differing between paths). The generator consults the same
//! state while it builds, so that what it builds passes; mutations ([`Mutation`]) break one
//! rule each.

// Register files are indexed by register number throughout.
#![allow(clippy::needless_range_loop)]

use super::{Options, Rng, Values};
use crate::testgen;
use picajit_interp::pica::float::FloatMode;
use picajit_interp::pica::isa::{
    encode, CmpOp, CondOp, Condition, DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg,
    Swizzle, WriteMask,
};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::Uniforms;

/// A register value for `mode` ([`Values::AddressLike`]).
pub fn value(r: &mut Rng, mode: FloatMode) -> f32 {
    testgen::value(r, mode, Values::AddressLike)
}

/// Four [`value`]s.
pub fn vec4(r: &mut Rng, mode: FloatMode) -> [f32; 4] {
    testgen::vec4(r, mode, Values::AddressLike)
}

/// Uniforms for a generated program ([`testgen::uniforms`] with [`Values::AddressLike`]).
pub fn uniforms(r: &mut Rng, mode: FloatMode) -> Uniforms {
    testgen::uniforms(r, mode, Values::AddressLike)
}

// ---------------------------------------------------------------- program tree

/// One node of a generated program.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A word that does not change the control flow (arithmetic, MOVA, CMP, NOP, SETEMIT,
    /// EMIT).
    Op(Instruction),
    /// IFU b: `then`, `.else` `els` (no .else when empty).
    IfU {
        b: u8,
        then: Vec<Node>,
        els: Vec<Node>,
    },
    /// IFC on cmp (mutations only: makes a program ineligible).
    IfC {
        cond: Condition,
        then: Vec<Node>,
        els: Vec<Node>,
    },
    /// LOOP over `body` with int uniform `i`.
    Loop { i: u8, body: Vec<Node> },
    /// CALL (or CALLU `b`) of subroutine `sub`.
    Call { sub: usize, b: Option<u8> },
    /// CALLC (mutations only).
    CallC { sub: usize, cond: Condition },
    /// JMPU over `skip`.
    JmpU {
        b: u8,
        invert: bool,
        skip: Vec<Node>,
    },
    /// JMPC over `skip` (mutations only).
    JmpC { cond: Condition, skip: Vec<Node> },
    /// BREAK out of the innermost loop.
    Break,
    /// BREAKC (mutations only).
    BreakC(Condition),
    /// END.
    End,
}

/// A generated program: `main` at address 0, then the subroutines in order, and the
/// operand descriptor table (128 entries; 0-31 usable by MAD).
#[derive(Clone, Debug, PartialEq)]
pub struct Gen {
    pub main: Vec<Node>,
    pub subs: Vec<Vec<Node>>,
    pub descs: Vec<u64>,
}

fn size(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => 1 + size(then) + size(els),
            Node::Loop { body, .. } => 1 + size(body),
            Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => 1 + size(skip),
            _ => 1,
        })
        .sum()
}

fn enc(i: &Instruction) -> u32 {
    encode(i).unwrap_or_else(|e| panic!("{i:?} not encodable: {e}"))
}

fn lay(nodes: &[Node], code: &mut Vec<u32>, subs: &[(u16, u8)]) {
    for n in nodes {
        let pc = code.len();
        match n {
            Node::Op(i) => code.push(enc(i)),
            Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
                code.push(0);
                lay(then, code, subs);
                let dest = code.len() as u16;
                lay(els, code, subs);
                let num = (code.len() - dest as usize) as u8;
                code[pc] = enc(&match n {
                    Node::IfU { b, .. } => Instruction::IfU { b: *b, dest, num },
                    Node::IfC { cond, .. } => Instruction::IfC {
                        cond: *cond,
                        dest,
                        num,
                    },
                    _ => unreachable!(),
                });
            }
            Node::Loop { i, body } => {
                code.push(0);
                lay(body, code, subs);
                let dest = (code.len() - 1) as u16;
                code[pc] = enc(&Instruction::Loop { i: *i, dest });
            }
            Node::Call { sub, b } => {
                let (dest, num) = subs[*sub];
                code.push(enc(&match b {
                    None => Instruction::Call { dest, num },
                    Some(b) => Instruction::CallU { b: *b, dest, num },
                }));
            }
            Node::CallC { sub, cond } => {
                let (dest, num) = subs[*sub];
                code.push(enc(&Instruction::CallC {
                    cond: *cond,
                    dest,
                    num,
                }));
            }
            Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => {
                code.push(0);
                lay(skip, code, subs);
                let dest = code.len() as u16;
                code[pc] = enc(&match n {
                    Node::JmpU { b, invert, .. } => Instruction::JmpU {
                        b: *b,
                        dest,
                        invert: *invert,
                    },
                    Node::JmpC { cond, .. } => Instruction::JmpC { cond: *cond, dest },
                    _ => unreachable!(),
                });
            }
            Node::Break => code.push(enc(&Instruction::Break)),
            Node::BreakC(c) => code.push(enc(&Instruction::BreakC { cond: *c })),
            Node::End => code.push(enc(&Instruction::End)),
        }
    }
}

/// Visit every instruction of a block (nested ones included).
fn each_op(nodes: &[Node], f: &mut dyn FnMut(&Instruction)) {
    each_node(nodes, &mut |n| {
        if let Node::Op(i) = n {
            f(i)
        }
    });
}

/// `f` on every node of `nodes` and of the blocks nested in them, in program order (a node
/// before the blocks it holds).
fn each_node(nodes: &[Node], f: &mut dyn FnMut(&Node)) {
    for n in nodes {
        f(n);
        match n {
            Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
                each_node(then, f);
                each_node(els, f);
            }
            Node::Loop { body, .. } => each_node(body, f),
            Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => each_node(skip, f),
            _ => {}
        }
    }
}

fn has_loop(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Loop { .. } => true,
        Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
            has_loop(then) || has_loop(els)
        }
        Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => has_loop(skip),
        _ => false,
    })
}

impl Gen {
    /// The code words.
    pub fn code(&self) -> Vec<u32> {
        let mut at = size(&self.main);
        let mut subs = Vec::new();
        for s in &self.subs {
            let n = size(s);
            assert!(n <= 255, "subroutine too long");
            subs.push((at as u16, n as u8));
            at += n;
        }
        let mut code = Vec::with_capacity(at);
        lay(&self.main, &mut code, &subs);
        for s in &self.subs {
            lay(s, &mut code, &subs);
        }
        code
    }

    pub fn program(&self) -> Program {
        Program::new(self.code(), self.descs.clone(), 0, ShaderKind::Geometry)
            .expect("generated program is valid")
    }

    /// Number of code words.
    pub fn words(&self) -> usize {
        size(&self.main) + self.subs.iter().map(|s| size(s)).sum::<usize>()
    }

    /// Every instruction (main and subroutines).
    pub fn each_op(&self, f: &mut dyn FnMut(&Instruction)) {
        each_op(&self.main, f);
        for s in &self.subs {
            each_op(s, f);
        }
    }

    /// What the program writes anywhere (reachable or not).
    pub fn facts(&self) -> Facts {
        let mut f = Facts::default();
        let descs = &self.descs;
        self.each_op(&mut |i| match *i {
            Instruction::Binary { dst, desc, .. }
            | Instruction::Unary { dst, desc, .. }
            | Instruction::Mad { dst, desc, .. } => {
                let m = lanes(OperandDesc(descs[desc as usize]).mask());
                match dst {
                    DstReg::Temp(t) => f.temps[t as usize & 15] |= m,
                    DstReg::Output(o) => f.outputs[o as usize & 15] |= m,
                }
            }
            Instruction::Mova { desc, .. } => {
                f.a0 |= lanes(OperandDesc(descs[desc as usize]).mask()) & 3;
            }
            _ => {}
        });
        f.has_loop = has_loop(&self.main) || self.subs.iter().any(|s| has_loop(s));
        f
    }
}

/// Write mask as a lane bit set (bit 0 = x).
pub fn lanes(m: WriteMask) -> u8 {
    (0..4).filter(|&l| m.has(l)).fold(0, |a, l| a | 1 << l)
}

fn mask_of(lanes: u8) -> WriteMask {
    WriteMask::from_lanes([
        lanes & 1 != 0,
        lanes & 2 != 0,
        lanes & 4 != 0,
        lanes & 8 != 0,
    ])
}

/// Components the program writes anywhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub temps: [u8; 16],
    pub outputs: [u8; 16],
    pub a0: u8,
    pub has_loop: bool,
}

impl Facts {
    /// Output registers written (bit n = o`n`).
    pub fn output_regs(&self) -> u16 {
        (0..16)
            .filter(|&o| self.outputs[o] != 0)
            .fold(0, |a, o| a | 1 << o)
    }
}

// ---------------------------------------------------------------- the eligibility rule

/// SETEMIT state along a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitParams {
    /// Not set in this invocation: whatever the previous one left.
    Carried,
    /// One constant on every path.
    Known(u8, bool, bool),
    /// Differs between paths.
    Mixed,
}

/// Abstract state at a program point (over all paths reaching it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abs {
    /// Temporary components written on every path in this invocation.
    pub temps: [u8; 16],
    /// a0 components (bit 0 = x) written by MOVA on every path.
    pub a0: u8,
    /// A LOOP has set aL on every path.
    pub al: bool,
    /// Output components written since the last EMIT on every path …
    pub w: [u8; 16],
    /// … and on some path.
    pub m: [u8; 16],
    pub setemit: EmitParams,
}

impl Abs {
    pub const START: Abs = Abs {
        temps: [0; 16],
        a0: 0,
        al: false,
        w: [0; 16],
        m: [0; 16],
        setemit: EmitParams::Carried,
    };
}

/// Join of two path sets (`None` = unreachable).
pub fn merge(a: Option<Abs>, b: Option<Abs>) -> Option<Abs> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => {
            let mut r = a;
            for k in 0..16 {
                r.temps[k] &= b.temps[k];
                r.w[k] &= b.w[k];
                r.m[k] |= b.m[k];
            }
            r.a0 &= b.a0;
            r.al &= b.al;
            if a.setemit != b.setemit {
                r.setemit = EmitParams::Mixed;
            }
            Some(r)
        }
    }
}

/// The eligibility checker: [`Sim::block`] transfers a state over a block and collects the
/// rule violations in `errors`.
pub struct Sim<'a> {
    pub gen: &'a Gen,
    /// What the program writes (on reachable paths: what the rule calls "anywhere").
    pub facts: Facts,
    pub errors: Vec<String>,
    breaks: Vec<Vec<Abs>>,
    /// Output components written since the last EMIT and SETEMIT state at the first END
    /// reached: every END must leave the same.
    end: Option<([u8; 16], EmitParams)>,
    /// When set, collects the writes of every instruction reached.
    record: Option<Facts>,
}

/// The lanes (bit l = lane l, before the swizzle) any source of an instruction reads, with
/// write mask `m` (lane bits): the union of the opcode table's read masks
/// ([`Opcode::reads`] gives them per source).
pub fn read_lanes(op: Opcode, m: u8) -> u8 {
    (0..op.sources()).fold(0, |a, n| a | op.reads(n, m))
}

/// Components a source with swizzle `s` reads in `lanes`.
fn swizzle_comps(s: Swizzle, lanes: u8) -> u8 {
    (0..4)
        .filter(|&l| lanes & 1 << l != 0)
        .fold(0, |a, l| a | 1 << s.lane(l))
}

impl<'a> Sim<'a> {
    pub fn new(gen: &'a Gen) -> Sim<'a> {
        Sim {
            gen,
            facts: gen.facts(),
            errors: Vec::new(),
            breaks: Vec::new(),
            end: None,
            record: None,
        }
    }

    /// What the instructions reachable from the entry write (unreachable code does not
    /// count for the rule: the JIT's analysis never sees it). Reachability does not depend
    /// on the facts, so one pass with any facts finds it.
    pub fn reachable_facts(gen: &Gen) -> Facts {
        let mut s = Sim::new(gen);
        s.record = Some(Facts::default());
        s.block(&gen.main, Some(Abs::START));
        s.record.unwrap()
    }

    /// Check the whole program; the violations (empty: eligible).
    pub fn check(gen: &Gen) -> Vec<String> {
        let mut s = Sim::new(gen);
        s.facts = Sim::reachable_facts(gen);
        let end = s.block(&gen.main, Some(Abs::START));
        if end.is_some() {
            s.err("main falls off its end".into());
        }
        s.errors
    }

    fn err(&mut self, e: String) {
        if !self.errors.contains(&e) {
            self.errors.push(e);
        }
    }

    pub fn block(&mut self, nodes: &[Node], mut st: Option<Abs>) -> Option<Abs> {
        for n in nodes {
            st = self.node(n, st);
        }
        st
    }

    fn read(&mut self, st: &Abs, reg: SrcReg, rel: RelIndex, swz: Swizzle, lanes: u8) {
        match reg {
            SrcReg::Temp(t) => {
                let t = t as usize & 15;
                let bad = swizzle_comps(swz, lanes) & !st.temps[t] & self.facts.temps[t];
                if bad != 0 {
                    self.err(format!("r{t} components {bad:#x} read before written"));
                }
            }
            SrcReg::Const(_) => match rel {
                RelIndex::A0X if self.facts.a0 & 1 != 0 && st.a0 & 1 == 0 => {
                    self.err("a0.x read before MOVA".into())
                }
                RelIndex::A0Y if self.facts.a0 & 2 != 0 && st.a0 & 2 == 0 => {
                    self.err("a0.y read before MOVA".into())
                }
                RelIndex::AL if self.facts.has_loop && !st.al => {
                    self.err("aL read before LOOP".into())
                }
                _ => {}
            },
            SrcReg::Input(_) => {}
        }
    }

    fn write(&mut self, st: &mut Abs, dst: DstReg, mask: u8) {
        if let Some(f) = &mut self.record {
            match dst {
                DstReg::Temp(t) => f.temps[t as usize & 15] |= mask,
                DstReg::Output(o) => f.outputs[o as usize & 15] |= mask,
            }
        }
        match dst {
            DstReg::Temp(t) => st.temps[t as usize & 15] |= mask,
            DstReg::Output(o) => {
                st.w[o as usize & 15] |= mask;
                st.m[o as usize & 15] |= mask;
            }
        }
    }

    fn instr(&mut self, i: &Instruction, mut st: Abs) -> Option<Abs> {
        let d = |k: u8| OperandDesc(self.gen.descs[k as usize]);
        if let Some(o) = i.operands() {
            let dd = d(o.desc);
            let m = lanes(dd.mask());
            for (n, reg, rel) in o.sources() {
                self.read(&st, reg, rel, dd.swizzle(n), o.op.reads(n, m));
            }
            match (o.dst, o.op) {
                (Some(dst), _) => self.write(&mut st, dst, m),
                (None, Opcode::Mova) => {
                    st.a0 |= m & 3;
                    if let Some(f) = &mut self.record {
                        f.a0 |= m & 3;
                    }
                }
                (None, _) => {}
            }
            return Some(st);
        }
        match *i {
            Instruction::SetEmit {
                vtx,
                primitive,
                winding,
            } => st.setemit = EmitParams::Known(vtx, primitive, winding),
            Instruction::Emit => {
                for o in 0..16 {
                    let missing = self.facts.outputs[o] & !st.w[o];
                    if missing != 0 {
                        self.err(format!(
                            "o{o} components {missing:#x} not rewritten before an EMIT"
                        ));
                    }
                }
                if !matches!(st.setemit, EmitParams::Known(..)) {
                    self.err(format!("SETEMIT state {:?} at an EMIT", st.setemit));
                }
                st.w = [0; 16];
                st.m = [0; 16];
            }
            Instruction::End => {
                self.end(&st);
                return None;
            }
            Instruction::Nop => {}
            _ => self.err(format!("unexpected {i:?} in an Op node")),
        }
        Some(st)
    }

    fn end(&mut self, st: &Abs) {
        for o in 0..16 {
            if st.w[o] != st.m[o] {
                self.err(format!(
                    "o{o} components {:#x} maybe written at an END",
                    st.m[o] & !st.w[o]
                ));
            }
        }
        if st.setemit == EmitParams::Mixed {
            self.err("SETEMIT state differs between paths at an END".into());
        }
        // Over all paths means over all ENDs too.
        let mut w = st.w;
        for (o, x) in w.iter_mut().enumerate() {
            *x &= self.facts.outputs[o];
        }
        match self.end {
            None => self.end = Some((w, st.setemit)),
            Some(e) if e == (w, st.setemit) => {}
            Some(_) => self.err("ENDs leave different outputs or SETEMIT state".into()),
        }
    }

    fn node(&mut self, n: &Node, st: Option<Abs>) -> Option<Abs> {
        let s = st?;
        match n {
            Node::Op(i) => self.instr(i, s),
            Node::IfU { then, els, .. } => {
                let a = self.block(then, st);
                let b = self.block(els, st);
                merge(a, b)
            }
            Node::IfC { then, els, .. } => {
                self.err("IFC (cmp-dependent branch)".into());
                let a = self.block(then, st);
                let b = self.block(els, st);
                merge(a, b)
            }
            Node::JmpU { skip, .. } => {
                let a = self.block(skip, st);
                merge(st, a)
            }
            Node::JmpC { skip, .. } => {
                self.err("JMPC (cmp-dependent branch)".into());
                let a = self.block(skip, st);
                merge(st, a)
            }
            Node::Call { sub, b } => {
                let saved = std::mem::take(&mut self.breaks);
                let gen = self.gen;
                let a = self.block(&gen.subs[*sub], st);
                self.breaks = saved;
                if b.is_some() {
                    merge(st, a)
                } else {
                    a
                }
            }
            Node::CallC { sub, .. } => {
                self.err("CALLC (cmp-dependent branch)".into());
                let saved = std::mem::take(&mut self.breaks);
                let gen = self.gen;
                let a = self.block(&gen.subs[*sub], st);
                self.breaks = saved;
                merge(st, a)
            }
            Node::Loop { body, .. } => {
                if let Some(f) = &mut self.record {
                    f.has_loop = true;
                }
                let mut entry = s;
                entry.al = true;
                let mut head = entry;
                for _ in 0..20 {
                    let before = self.errors.len();
                    self.breaks.push(Vec::new());
                    let end = self.block(body, Some(head));
                    let breaks = self.breaks.pop().unwrap();
                    let next = merge(Some(entry), end).unwrap();
                    if next == head {
                        return breaks.into_iter().fold(end, |a, b| merge(a, Some(b)));
                    }
                    self.errors.truncate(before);
                    head = next;
                }
                panic!("loop state does not converge");
            }
            Node::Break => {
                match self.breaks.last_mut() {
                    Some(b) => b.push(s),
                    None => self.err("BREAK outside a loop".into()),
                }
                None
            }
            Node::BreakC(_) => {
                self.err("BREAKC (cmp-dependent branch)".into());
                match self.breaks.last_mut() {
                    Some(b) => b.push(s),
                    None => self.err("BREAKC outside a loop".into()),
                }
                st
            }
            Node::End => {
                self.end(&s);
                None
            }
        }
    }
}

// ---------------------------------------------------------------- generation

/// What a block being generated may contain.
#[derive(Clone, Copy, Debug)]
struct Cx {
    /// Nesting of IFU/JMPU/LOOP (bounded: the hardware stacks are 8 and 4 deep).
    depth: u32,
    loops: u32,
    calls: u32,
    /// Inside a loop body of this routine (BREAK allowed inside an arm).
    in_loop: bool,
    /// Inside an IFU/JMPU arm (END allowed).
    in_arm: bool,
    /// Inside a JMPU-skipped block of the innermost loop's body with no IFU open since
    /// the loop (BREAK allowed: a BREAK inside an IFU leaves the IF frame on the stack, and
    /// the stale frames of loops that iterate multiply the stack contexts the JIT's
    /// analysis enumerates beyond its limit).
    can_break: bool,
    allow_emit: bool,
    allow_setemit: bool,
    allow_end: bool,
}

/// Flags of a generated subroutine (what callers must allow).
#[derive(Clone, Copy, Debug)]
struct SubInfo {
    /// Generated (not a placeholder whose body is being built).
    ready: bool,
    emits: bool,
    setemits: bool,
    ends: bool,
}

/// A generated case: the program tree, its uniforms and what it was generated with.
#[derive(Clone, Debug)]
pub struct Case {
    pub gen: Gen,
    pub uniforms: Uniforms,
    /// Output components designated for writing (a superset of what is written).
    pub designated: [u8; 16],
    /// What every END leaves: outputs written since the last EMIT, SETEMIT parameters
    /// (`None`: the program never sets them).
    pub end_w: [u8; 16],
    pub end_p: Option<(u8, bool, bool)>,
}

const CARRY_TEMPS: u8 = 12; // r12-r15 are never written: they carry their initial values.
const MAD_DESCS: usize = 32;
/// Descriptors 32-46: identity swizzles, no negation, masks 1-15 (used by fix-up writes).
const FIXUP_DESCS: usize = 32;

struct Builder<'r, 'b> {
    r: &'r mut Rng<'b>,
    gen: Gen,
    sub_info: Vec<SubInfo>,
    mad_len: usize,
    other_len: usize,
    /// Per scratch temporary, the components it may be written in (0 for r12-r15).
    temp_allowed: [u8; 16],
    designated: [u8; 16],
    use_mova: bool,
    /// No MOVA anywhere, relative reads of the carried-over a0 anyway.
    a0_carried: bool,
    flow: bool,
    /// Remaining nodes to generate, all blocks together.
    left: i32,
    /// What every END leaves: outputs written since the last EMIT, SETEMIT parameters
    /// (`None`: programs without SETEMIT, whose ENDs leave the carried-over state).
    end_w: [u8; 16],
    end_p: Option<(u8, bool, bool)>,
    /// No LOOP anywhere, aL-relative reads of the carried-over aL anyway.
    al_carried: bool,
    quirks: bool,
}

/// Every opcode with register sources, from the opcode table.
fn all_ops() -> Vec<Opcode> {
    Opcode::arithmetic().collect()
}

impl Builder<'_, '_> {
    fn sim_node(&self, n: &Node, st: Option<Abs>) -> Option<Abs> {
        let mut s = Sim::new(&self.gen);
        // Generation-time transfer: checks need the final facts, so they are ignored here.
        s.facts.has_loop = true;
        s.facts.a0 = 3;
        s.facts.temps = [0xF; 16];
        s.facts.outputs = self.designated;
        s.node(n, st)
    }

    fn sim_check_sub(&self, sub: usize, st: Abs) -> bool {
        let mut s = Sim::new(&self.gen);
        s.facts.outputs = self.designated;
        s.facts.temps = self.temp_allowed;
        if self.use_mova {
            s.facts.a0 = 3;
        }
        s.facts.has_loop = !self.al_carried;
        s.end = Some((self.end_w, self.end_target()));
        s.block(&self.gen.subs[sub], Some(st));
        s.errors.is_empty()
    }

    /// Index of descriptor `d`: an existing equal one, or a new entry (MAD can only reach
    /// entries 0-31, which are filled last by the other instructions).
    fn desc(&mut self, d: OperandDesc, mad: bool) -> Option<u8> {
        let v = d.0;
        if let Some(k) = self.gen.descs[..self.mad_len].iter().position(|&x| x == v) {
            return Some(k as u8);
        }
        if !mad {
            let other = &self.gen.descs[MAD_DESCS..MAD_DESCS + self.other_len];
            if let Some(k) = other.iter().position(|&x| x == v) {
                return Some((MAD_DESCS + k) as u8);
            }
            if self.other_len < 128 - MAD_DESCS {
                let k = MAD_DESCS + self.other_len;
                self.gen.descs[k] = v;
                self.other_len += 1;
                return Some(k as u8);
            }
        }
        if self.mad_len < MAD_DESCS {
            self.gen.descs[self.mad_len] = v;
            self.mad_len += 1;
            return Some(self.mad_len as u8 - 1);
        }
        None
    }

    /// Readable components of temporary `t` now.
    fn readable(&self, st: &Abs, t: usize) -> u8 {
        if t >= CARRY_TEMPS as usize {
            0xF
        } else {
            (st.temps[t] | !self.temp_allowed[t]) & 0xF
        }
    }

    fn temp_src(&mut self, st: &Abs) -> (SrcReg, u8) {
        // Written temporaries most of the time, the carried-over ones sometimes.
        let written: Vec<usize> = (0..CARRY_TEMPS as usize)
            .filter(|&t| self.readable(st, t) != 0)
            .collect();
        if !written.is_empty() && self.r.chance(75) {
            let t = self.r.pick(&written);
            (SrcReg::Temp(t as u8), self.readable(st, t))
        } else {
            (SrcReg::Temp(CARRY_TEMPS + self.r.below(4) as u8), 0xF)
        }
    }

    fn narrow(&mut self, st: &Abs) -> (SrcReg, u8) {
        if self.r.chance(50) {
            (SrcReg::Input(self.r.below(16) as u8), 0xF)
        } else {
            self.temp_src(st)
        }
    }

    /// A wide source and, for constants, its relative index.
    fn wide(&mut self, st: &Abs) -> (SrcReg, u8, RelIndex) {
        match self.r.below(10) {
            0..=2 => (SrcReg::Input(self.r.below(16) as u8), 0xF, RelIndex::None),
            3..=5 => {
                let (s, c) = self.temp_src(st);
                (s, c, RelIndex::None)
            }
            _ => {
                let mut rels = vec![RelIndex::None, RelIndex::None];
                if (self.use_mova && st.a0 & 1 != 0) || self.a0_carried {
                    rels.push(RelIndex::A0X);
                }
                if (self.use_mova && st.a0 & 2 != 0) || self.a0_carried {
                    rels.push(RelIndex::A0Y);
                }
                if st.al || self.al_carried {
                    rels.push(RelIndex::AL);
                    rels.push(RelIndex::AL);
                }
                let rel = self.r.pick(&rels);
                let c = if rel == RelIndex::None || self.r.chance(30) {
                    self.r.below(96)
                } else {
                    self.r.below(12)
                };
                (SrcReg::Const(c as u8), 0xF, rel)
            }
        }
    }

    /// A swizzle whose lanes in `lanes` (those the instruction reads) select components in
    /// `comps` (the readable ones); the other lanes select anything, often a component not
    /// written yet (it must not matter).
    fn swizzle(&mut self, comps: u8, lanes: u8) -> Swizzle {
        if comps == 0xF && self.r.chance(40) {
            return Swizzle::IDENTITY;
        }
        let c: Vec<u8> = (0..4).filter(|&k| comps & 1 << k != 0).collect();
        let mut sel = [0u8; 4];
        for (l, x) in sel.iter_mut().enumerate() {
            *x = if lanes & 1 << l != 0 || self.r.chance(40) {
                self.r.pick(&c)
            } else {
                self.r.below(4) as u8
            };
        }
        Swizzle::from_lanes(sel)
    }

    /// Destination: a scratch temporary or a designated output, with a mask inside what it
    /// may be written in.
    fn dst(&mut self) -> (DstReg, u8) {
        let outs: Vec<usize> = (0..16).filter(|&o| self.designated[o] != 0).collect();
        if !outs.is_empty() && self.r.chance(30) {
            let o = self.r.pick(&outs);
            let m = if self.r.chance(50) {
                self.designated[o]
            } else {
                self.r.subset(self.designated[o])
            };
            return (DstReg::Output(o as u8), m);
        }
        let t = self.r.below(CARRY_TEMPS as u32) as usize;
        let m = if self.r.chance(50) {
            self.temp_allowed[t]
        } else {
            self.r.subset(self.temp_allowed[t])
        };
        (DstReg::Temp(t as u8), m)
    }

    /// A random arithmetic instruction; `dst` forces the destination and mask.
    fn alu(&mut self, st: &Abs, dst: Option<(DstReg, u8)>) -> Option<Instruction> {
        use Opcode::*;
        let mut op = self.r.pick(&all_ops());
        if dst.is_some() && matches!(op, Mova | Cmp) {
            op = Mov;
        }
        if op == Mova && !self.use_mova {
            op = Mov;
        }
        let (d, mask) = dst.unwrap_or_else(|| self.dst());
        let neg = [self.r.chance(25), self.r.chance(25), self.r.chance(25)];
        match op {
            Mad | Madi => {
                let (s1, c1) = self.narrow(st);
                let (s2, c2, rel2, s3, c3) = if op == Mad {
                    let (s2, c2, rel) = self.wide(st);
                    let (s3, c3) = self.narrow(st);
                    (s2, c2, rel, s3, c3)
                } else {
                    let (s2, c2) = self.narrow(st);
                    let (s3, c3, rel) = self.wide(st);
                    (s2, c2, rel, s3, c3)
                };
                let l = read_lanes(op, mask);
                let swz = [
                    self.swizzle(c1, l),
                    self.swizzle(c2, l),
                    self.swizzle(c3, l),
                ];
                let desc = self.desc(OperandDesc::new(mask_of(mask), neg, swz), true)?;
                Some(Instruction::Mad {
                    op,
                    dst: d,
                    src1: s1,
                    src2: s2,
                    src3: s3,
                    rel: rel2,
                    desc,
                })
            }
            Ex2 | Lg2 | Litp | Flr | Rcp | Rsq | Mov | Mova => {
                let (s, c, rel) = self.wide(st);
                let m = if op == Mova {
                    let m = self.r.subset(3);
                    if self.r.chance(30) {
                        m | (self.r.u32() as u8 & 0xC)
                    } else {
                        m
                    }
                } else {
                    mask
                };
                let l = read_lanes(op, m);
                let swz = [self.swizzle(c, l), Swizzle::IDENTITY, Swizzle::IDENTITY];
                let desc = self.desc(OperandDesc::new(mask_of(m), neg, swz), false)?;
                Some(if op == Mova {
                    Instruction::Mova { src: s, rel, desc }
                } else {
                    Instruction::Unary {
                        op,
                        dst: d,
                        src: s,
                        rel,
                        desc,
                    }
                })
            }
            Cmp => {
                let (s1, c1, rel) = self.wide(st);
                let (s2, c2) = self.narrow(st);
                let l = read_lanes(op, 0);
                let swz = [self.swizzle(c1, l), self.swizzle(c2, l), Swizzle::IDENTITY];
                let m = self.r.below(16) as u8;
                let desc = self.desc(OperandDesc::new(mask_of(m), neg, swz), false)?;
                Some(Instruction::Cmp {
                    src1: s1,
                    src2: s2,
                    rel,
                    x: CmpOp::from_raw(self.r.below(8) as u8),
                    y: CmpOp::from_raw(self.r.below(8) as u8),
                    desc,
                })
            }
            _ => {
                let ((s1, c1, rel), (s2, c2)) = if op.is_inverted() {
                    let n = self.narrow(st);
                    let w = self.wide(st);
                    ((n.0, n.1, w.2), (w.0, w.1))
                } else {
                    let w = self.wide(st);
                    let n = self.narrow(st);
                    (w, n)
                };
                let l = read_lanes(op, mask);
                let swz = [self.swizzle(c1, l), self.swizzle(c2, l), Swizzle::IDENTITY];
                let desc = self.desc(OperandDesc::new(mask_of(mask), neg, swz), false)?;
                Some(Instruction::Binary {
                    op,
                    dst: d,
                    src1: s1,
                    src2: s2,
                    rel,
                    desc,
                })
            }
        }
    }

    /// Write `mask` of `dst`: a random instruction, or a MOV from an input with a fix-up
    /// descriptor when the descriptor table is full.
    fn write(&mut self, st: &Abs, dst: DstReg, mask: u8) -> Node {
        for _ in 0..4 {
            if let Some(i) = self.alu(st, Some((dst, mask))) {
                return Node::Op(i);
            }
        }
        Node::Op(Instruction::Unary {
            op: Opcode::Mov,
            dst,
            src: SrcReg::Input(self.r.below(16) as u8),
            rel: RelIndex::None,
            desc: (FIXUP_DESCS + mask as usize - 1) as u8,
        })
    }

    fn push(&self, out: &mut Vec<Node>, st: &mut Option<Abs>, n: Node) {
        *st = self.sim_node(&n, *st);
        out.push(n);
    }

    /// Write every component in `need`, in one or two instructions per register.
    fn write_all(&mut self, out: &mut Vec<Node>, st: &mut Option<Abs>, need: [u8; 16]) {
        let mut regs: Vec<usize> = (0..16).filter(|&o| need[o] != 0).collect();
        // Any order.
        for k in (1..regs.len()).rev() {
            let j = self.r.below(k as u32 + 1) as usize;
            regs.swap(k, j);
        }
        for o in regs {
            let mut m = need[o];
            if m.count_ones() > 1 && self.r.chance(25) {
                let part = self.r.subset(m);
                let n = self.write(&st.unwrap(), DstReg::Output(o as u8), part);
                self.push(out, st, n);
                m &= !part;
                if m == 0 {
                    continue;
                }
            }
            let n = self.write(&st.unwrap(), DstReg::Output(o as u8), m);
            self.push(out, st, n);
        }
    }

    fn setemit(&mut self) -> Node {
        Node::Op(Instruction::SetEmit {
            vtx: self.r.below(4) as u8,
            primitive: self.r.chance(50),
            winding: self.r.chance(50),
        })
    }

    /// Rewrite the designated outputs, maybe SETEMIT, EMIT.
    fn emit_sequence(&mut self, out: &mut Vec<Node>, st: &mut Option<Abs>, cx: Cx) {
        let s = st.unwrap();
        let known = matches!(s.setemit, EmitParams::Known(..));
        if !known && !cx.allow_setemit {
            return;
        }
        let mut need = [0u8; 16];
        for o in 0..16 {
            need[o] = self.designated[o] & !s.w[o];
        }
        // Sometimes more than needed (outputs written twice between EMITs).
        if self.r.chance(20) {
            for o in 0..16 {
                if self.designated[o] != 0 && self.r.chance(50) {
                    need[o] = self.designated[o];
                }
            }
        }
        self.write_all(out, st, need);
        if cx.allow_setemit && (!known || self.r.chance(35)) {
            let n = self.setemit();
            self.push(out, st, n);
        }
        self.push(out, st, Node::Op(Instruction::Emit));
    }

    fn end_target(&self) -> EmitParams {
        match self.end_p {
            Some((v, p, w)) => EmitParams::Known(v, p, w),
            None => EmitParams::Carried,
        }
    }

    /// Make the END rule hold here (every END leaves the outputs `end_w` written since the
    /// last EMIT and the SETEMIT state `end_p`), then END. False when this block cannot.
    fn end_sequence(&mut self, out: &mut Vec<Node>, st: &mut Option<Abs>, cx: Cx) -> bool {
        let s = st.unwrap();
        let target = self.end_target();
        if s.setemit != target && !(cx.allow_setemit && self.end_p.is_some()) {
            return false;
        }
        if (0..16).any(|o| s.m[o] & !self.end_w[o] != 0) {
            // Outputs (maybe) written that the profile does not have: EMIT them first.
            if !(cx.allow_emit && cx.allow_setemit) {
                return false;
            }
            self.emit_sequence(out, st, cx);
        }
        let s = st.unwrap();
        let mut need = [0u8; 16];
        for o in 0..16 {
            need[o] = self.end_w[o] & !s.w[o];
        }
        self.write_all(out, st, need);
        if let Some((vtx, primitive, winding)) = self.end_p {
            if st.unwrap().setemit != target || (cx.allow_setemit && self.r.chance(10)) {
                let n = Node::Op(Instruction::SetEmit {
                    vtx,
                    primitive,
                    winding,
                });
                self.push(out, st, n);
            }
        }
        self.push(out, st, Node::End);
        true
    }

    fn bool_reg(&mut self) -> u8 {
        // b15 changes after the first invocation of a batch: favour it.
        if self.r.chance(30) {
            15
        } else {
            self.r.below(16) as u8
        }
    }

    /// A block of about `len` nodes from `st`; ends with a plain instruction unless the
    /// state is unreachable at its end (after END).
    fn block(&mut self, mut st: Option<Abs>, cx: Cx, len: u32) -> (Vec<Node>, Option<Abs>) {
        let mut out = Vec::new();
        let mut k = 0;
        while k < len && self.left > 0 && st.is_some() {
            k += 1;
            self.left -= 1;
            let s = st.unwrap();
            let roll = self.r.below(100);
            let flow = self.flow;
            if roll < 12 && cx.allow_emit {
                self.emit_sequence(&mut out, &mut st, cx);
            } else if roll < 16 && cx.allow_setemit {
                let n = self.setemit();
                self.push(&mut out, &mut st, n);
            } else if roll < 24 && flow && cx.depth < 3 {
                let b = self.bool_reg();
                let inner = Cx {
                    depth: cx.depth + 1,
                    in_arm: true,
                    can_break: self.quirks && cx.in_loop,
                    ..cx
                };
                let (then, _) = {
                    let len = 1 + self.r.below(6);
                    self.block(st, inner, len)
                };
                let els = if self.r.chance(50) {
                    {
                        let len = 1 + self.r.below(6);
                        self.block(st, inner, len)
                    }
                    .0
                } else {
                    Vec::new()
                };
                self.push(&mut out, &mut st, Node::IfU { b, then, els });
            } else if roll < 29 && flow && cx.depth < 3 {
                let b = self.bool_reg();
                let inner = Cx {
                    depth: cx.depth + 1,
                    in_arm: true,
                    can_break: cx.in_loop && (cx.can_break || !cx.in_arm),
                    ..cx
                };
                let (skip, _) = {
                    let len = 1 + self.r.below(5);
                    self.block(st, inner, len)
                };
                let invert = self.r.chance(50);
                self.push(&mut out, &mut st, Node::JmpU { b, invert, skip });
            } else if roll < 36 && flow && cx.depth < 3 && cx.loops < 2 && !self.al_carried {
                let may_emit = cx.allow_emit && self.r.chance(60);
                let may_set = cx.allow_setemit && self.r.chance(50);
                let mut head = s;
                head.al = true;
                if may_set {
                    head.setemit = EmitParams::Mixed;
                }
                for o in 0..16 {
                    if may_emit {
                        head.w[o] = 0;
                    }
                    head.m[o] |= self.designated[o];
                }
                let inner = Cx {
                    depth: cx.depth + 1,
                    loops: cx.loops + 1,
                    in_loop: true,
                    in_arm: false,
                    can_break: false,
                    allow_emit: may_emit,
                    allow_setemit: may_set,
                    ..cx
                };
                let (body, _) = {
                    let len = 1 + self.r.below(8);
                    self.block(Some(head), inner, len)
                };
                let i = self.r.below(4) as u8;
                self.push(&mut out, &mut st, Node::Loop { i, body });
            } else if roll < 41 && flow && cx.calls < 2 {
                self.call(&mut out, &mut st, cx);
            } else if roll < 43 && flow && cx.can_break {
                self.push(&mut out, &mut st, Node::Break);
            } else if roll < 44 && flow && cx.in_arm && cx.allow_end {
                self.end_sequence(&mut out, &mut st, cx);
            } else if let Some(i) = self.alu(&s, None) {
                self.push(&mut out, &mut st, Node::Op(i));
            }
        }
        if st.is_none() && matches!(out.last(), Some(Node::End)) {
            return (out, st);
        }
        if self.quirks && !out.is_empty() && self.r.chance(40) {
            return (out, st);
        }
        // Every block ends with a plain instruction (see the module docs).
        match out.last() {
            Some(Node::Op(i)) if !matches!(i, Instruction::End) => {}
            _ => {
                let n = match st {
                    Some(s) if self.r.chance(50) => match self.alu(&s, None) {
                        Some(i) => Node::Op(i),
                        None => Node::Op(Instruction::Nop),
                    },
                    _ => Node::Op(Instruction::Nop),
                };
                self.push(&mut out, &mut st, n);
            }
        }
        (out, st)
    }

    fn call(&mut self, out: &mut Vec<Node>, st: &mut Option<Abs>, cx: Cx) {
        let s = st.unwrap();
        let b = if self.r.chance(40) {
            Some(self.bool_reg())
        } else {
            None
        };
        // An existing subroutine if one fits here, else a new one.
        let fits: Vec<usize> = (0..self.gen.subs.len())
            .filter(|&k| {
                let f = self.sub_info[k];
                f.ready
                    && (cx.allow_emit || !f.emits)
                    && (cx.allow_setemit || !f.setemits)
                    && (cx.allow_end || !f.ends)
                    && self.sim_check_sub(k, s)
            })
            .collect();
        let sub = if !fits.is_empty() && (self.gen.subs.len() >= 4 || self.r.chance(50)) {
            self.r.pick(&fits)
        } else if self.gen.subs.len() < 4 {
            let inner = Cx {
                depth: cx.depth,
                loops: cx.loops,
                calls: cx.calls + 1,
                in_loop: false,
                in_arm: false,
                can_break: false,
                allow_emit: cx.allow_emit && self.r.chance(70),
                allow_setemit: cx.allow_setemit && self.r.chance(60),
                allow_end: cx.allow_end,
            };
            let k = self.gen.subs.len();
            // Reserve the index (nested calls create later subroutines).
            self.gen.subs.push(vec![Node::Op(Instruction::Nop)]);
            self.sub_info.push(SubInfo {
                ready: false,
                emits: false,
                setemits: false,
                ends: false,
            });
            let (body, _) = {
                let len = 2 + self.r.below(8);
                self.block(Some(s), inner, len)
            };
            let mut info = SubInfo {
                ready: true,
                emits: false,
                setemits: false,
                ends: false,
            };
            each_op(&body, &mut |i| match i {
                Instruction::Emit => info.emits = true,
                Instruction::SetEmit { .. } => info.setemits = true,
                _ => {}
            });
            info.ends = contains_end(&body);
            // Nested calls count too.
            each_call(&body, &mut |c| {
                let f = self.sub_info[c];
                info.emits |= f.emits;
                info.setemits |= f.setemits;
                info.ends |= f.ends;
            });
            self.gen.subs[k] = body;
            self.sub_info[k] = info;
            k
        } else {
            return;
        };
        self.push(out, st, Node::Call { sub, b });
    }
}

fn contains_end(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::End => true,
        Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
            contains_end(then) || contains_end(els)
        }
        Node::Loop { body, .. } => contains_end(body),
        Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => contains_end(skip),
        _ => false,
    })
}

fn each_call(nodes: &[Node], f: &mut dyn FnMut(usize)) {
    each_node(nodes, &mut |n| {
        if let Node::Call { sub, .. } | Node::CallC { sub, .. } = n {
            f(*sub)
        }
    });
}

/// A random eligible program (by [`Sim`]) with uniforms.
pub fn generate(r: &mut Rng, opts: &Options) -> Case {
    let mut designated = [0u8; 16];
    // Usually a few output registers, sometimes most of the sixteen.
    let nout = if r.chance(8) {
        8 + r.below(16)
    } else {
        1 + r.below(4)
    };
    for _ in 0..nout {
        let o = if r.chance(50) {
            r.below(4)
        } else {
            r.below(16)
        } as usize;
        designated[o] = if r.chance(70) { 0xF } else { r.subset(0xF) };
    }
    let mut temp_allowed = [0u8; 16];
    for t in temp_allowed.iter_mut().take(CARRY_TEMPS as usize) {
        *t = if r.chance(75) { 0xF } else { r.subset(0xF) };
    }
    let mut descs = vec![0u64; 128];
    for m in 1..16u8 {
        descs[FIXUP_DESCS + m as usize - 1] =
            OperandDesc::new(mask_of(m), [false; 3], [Swizzle::IDENTITY; 3]).0;
    }
    let use_mova = r.chance(60);
    let a0_carried = !use_mova && r.chance(40);
    let mut end_w = [0u8; 16];
    if r.chance(50) {
        for o in 0..16 {
            if designated[o] != 0 && r.chance(50) {
                end_w[o] = r.subset(designated[o]);
            }
        }
    }
    let mut end_p = Some((r.below(4) as u8, r.chance(50), r.chance(50)));
    // Some programs never SETEMIT or EMIT: every END leaves the outputs they write
    // (`end_w`, which is then all they write) and the carried-over SETEMIT state.
    let no_emit = r.chance(6);
    if no_emit {
        end_p = None;
        if end_w == [0; 16] {
            let o = r.below(16) as usize;
            end_w[o] = r.subset(0xF);
        }
        designated = end_w;
    }
    let al_carried = r.chance(if opts.flow { 10 } else { 40 });
    let mut b = Builder {
        r,
        gen: Gen {
            main: Vec::new(),
            subs: Vec::new(),
            descs,
        },
        sub_info: Vec::new(),
        mad_len: 0,
        other_len: 15,
        temp_allowed,
        designated,
        use_mova,
        a0_carried,
        flow: opts.flow,
        left: opts.max_len as i32 * 2,
        end_w,
        end_p,
        al_carried,
        quirks: matches!(opts.shape, super::Shape::Points { quirks: true }),
    };
    let cx = Cx {
        depth: 0,
        loops: 0,
        calls: 0,
        in_loop: false,
        in_arm: false,
        can_break: false,
        allow_emit: !no_emit,
        allow_setemit: !no_emit,
        allow_end: true,
    };
    let mut st = Some(Abs::START);
    let mut main = Vec::new();
    // Most programs start with a SETEMIT; the others rely on the first EMIT sequence.
    if !no_emit && b.r.chance(60) {
        let n = b.setemit();
        b.push(&mut main, &mut st, n);
    }
    let (body, s) = b.block(st, cx, opts.max_len as u32);
    main.extend(body);
    st = s;
    if st.is_some() {
        // At least one EMIT in most programs.
        if !no_emit && b.r.chance(80) {
            b.emit_sequence(&mut main, &mut st, cx);
        }
        let ended = b.end_sequence(&mut main, &mut st, cx);
        assert!(ended, "main can always END");
    } else {
        // Every path ended already (an unreachable END keeps main from running on into the
        // subroutines, and keeps the layout rule "main ends with END").
        main.push(Node::End);
    }
    b.gen.main = main;
    let u = uniforms(b.r, opts.mode);
    Case {
        gen: b.gen,
        uniforms: u,
        designated,
        end_w,
        end_p,
    }
}

// ---------------------------------------------------------------- mutations

/// One way to break eligibility.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// A temporary component the program writes is read at the start, in one lane of a
    /// random instruction that reads that lane (the other components were just written).
    TempReadBeforeWrite,
    /// An output component the program writes is not rewritten before an EMIT (a write
    /// between two EMITs removed, or the second EMIT duplicated).
    OutputNotRewritten,
    /// SETEMIT differs between the arms of an IFU followed by an EMIT.
    SetEmitDiffers,
    /// An output written in one arm of an IFU just before END.
    MaybeWriteAtEnd,
    /// An IFC on cmp around a block.
    IfcOnCmp,
    /// An aL-relative read at the start of a program with a LOOP.
    AlBeforeLoop,
    /// An a0-relative read at the start of a program with a MOVA.
    A0BeforeMova,
    /// JMPC over a block.
    JmpcOnCmp,
    /// BREAKC in a loop.
    BreakcInLoop,
    /// CALLC of a subroutine.
    CallcOnCmp,
    /// SETEMIT differs between paths at END.
    SetEmitDiffersAtEnd,
    /// An EMIT (every output written first) before any SETEMIT: the parameters are the
    /// previous invocation's.
    EmitBeforeSetEmit,
    /// An END in an IFU arm at the start leaves other SETEMIT parameters than the others.
    EndsDifferInSetEmit,
    /// An END in an IFU arm at the start leaves an output written that the others do not.
    EndsDifferInOutputs,
}

pub const MUTATIONS: [Mutation; 14] = [
    Mutation::TempReadBeforeWrite,
    Mutation::OutputNotRewritten,
    Mutation::SetEmitDiffers,
    Mutation::MaybeWriteAtEnd,
    Mutation::IfcOnCmp,
    Mutation::AlBeforeLoop,
    Mutation::A0BeforeMova,
    Mutation::JmpcOnCmp,
    Mutation::BreakcInLoop,
    Mutation::CallcOnCmp,
    Mutation::SetEmitDiffersAtEnd,
    Mutation::EmitBeforeSetEmit,
    Mutation::EndsDifferInSetEmit,
    Mutation::EndsDifferInOutputs,
];

fn free_desc(g: &mut Gen, d: OperandDesc) -> u8 {
    if let Some(k) = g.descs[MAD_DESCS..].iter().position(|&x| x == d.0) {
        return (MAD_DESCS + k) as u8;
    }
    // Overwrite the last descriptor if unused, else fail loudly (the generator leaves room
    // in most programs; callers skip the mutation otherwise).
    let used = used_descs(g);
    for k in (MAD_DESCS..128).rev() {
        if !used.contains(&(k as u8)) {
            g.descs[k] = d.0;
            return k as u8;
        }
    }
    panic!("no free descriptor");
}

fn used_descs(g: &Gen) -> Vec<u8> {
    let mut v = Vec::new();
    g.each_op(&mut |i| match *i {
        Instruction::Binary { desc, .. }
        | Instruction::Unary { desc, .. }
        | Instruction::Mova { desc, .. }
        | Instruction::Cmp { desc, .. }
        | Instruction::Mad { desc, .. } => v.push(desc),
        _ => {}
    });
    v
}

fn mov(g: &mut Gen, dst: DstReg, mask: u8, src: SrcReg, rel: RelIndex, swz: Swizzle) -> Node {
    let desc = free_desc(g, OperandDesc::new(mask_of(mask), [false; 3], [swz; 3]));
    Node::Op(Instruction::Unary {
        op: Opcode::Mov,
        dst,
        src,
        rel,
        desc,
    })
}

/// [`mov`] of a random input register, unrelative and unswizzled.
fn mov_input(g: &mut Gen, r: &mut Rng, dst: DstReg, mask: u8) -> Node {
    let src = SrcReg::Input(r.below(16) as u8);
    mov(g, dst, mask, src, RelIndex::None, Swizzle::IDENTITY)
}

/// The outputs `outs` written from random inputs (the components `written` names of each),
/// then EMIT.
fn write_and_emit(g: &mut Gen, r: &mut Rng, outs: &[usize], written: &[u8; 16]) -> Vec<Node> {
    let mut seq: Vec<Node> = (outs.iter())
        .map(|&o| mov_input(g, r, DstReg::Output(o as u8), written[o]))
        .collect();
    seq.push(Node::Op(Instruction::Emit));
    seq
}

/// Position of the final END of `main` (the generator always ends it with one).
fn final_end(g: &Gen) -> usize {
    g.main
        .iter()
        .rposition(|n| *n == Node::End)
        .expect("main ends with END")
}

fn cmp_node(g: &mut Gen) -> Node {
    let desc = free_desc(
        g,
        OperandDesc::new(WriteMask::XYZW, [false; 3], [Swizzle::IDENTITY; 3]),
    );
    Node::Op(Instruction::Cmp {
        src1: SrcReg::Input(0),
        src2: SrcReg::Input(1),
        rel: RelIndex::None,
        x: CmpOp::Lt,
        y: CmpOp::Ge,
        desc,
    })
}

/// CMP reading `src` (with `rel`): a read that writes only cmp.
fn cmp_read(g: &mut Gen, src: SrcReg, rel: RelIndex) -> Node {
    let desc = free_desc(
        g,
        OperandDesc::new(WriteMask::XYZW, [false; 3], [Swizzle::IDENTITY; 3]),
    );
    Node::Op(Instruction::Cmp {
        src1: src,
        src2: SrcReg::Input(3),
        rel,
        x: CmpOp::Le,
        y: CmpOp::Ne,
        desc,
    })
}

fn first_loop(nodes: &mut [Node]) -> Option<&mut Vec<Node>> {
    for n in nodes {
        match n {
            Node::Loop { body, .. } => return Some(body),
            Node::IfU { then, els, .. } => {
                if let Some(b) = first_loop(then) {
                    return Some(b);
                }
                if let Some(b) = first_loop(els) {
                    return Some(b);
                }
            }
            Node::JmpU { skip, .. } => {
                if let Some(b) = first_loop(skip) {
                    return Some(b);
                }
            }
            _ => {}
        }
    }
    None
}

/// Apply `m` to an eligible program; `None` when it does not apply (e.g. no temporary
/// written, no LOOP). The result is ineligible by [`Sim`] (the caller checks).
pub fn mutate(case: &Case, m: Mutation, r: &mut Rng) -> Option<Gen> {
    let g = mutate_unchecked(case, m, r)?;
    // A mutation in code no path reaches changes nothing.
    if Sim::check(&g).is_empty() {
        return None;
    }
    Some(g)
}

fn mutate_unchecked(case: &Case, m: Mutation, r: &mut Rng) -> Option<Gen> {
    let mut g = case.gen.clone();
    let facts = Sim::reachable_facts(&g);
    let out_regs: Vec<usize> = (0..16).filter(|&o| facts.outputs[o] != 0).collect();
    match m {
        Mutation::TempReadBeforeWrite => {
            let temps: Vec<usize> = (0..16).filter(|&t| facts.temps[t] != 0).collect();
            if temps.is_empty() {
                return None;
            }
            let t = r.pick(&temps);
            let w = facts.temps[t];
            let c = r.pick(&(0..4u8).filter(|&c| w & 1 << c != 0).collect::<Vec<_>>());
            // The other components the program writes are written first …
            let mut seq = Vec::new();
            if w & !(1 << c) != 0 {
                seq.push(mov_input(&mut g, r, DstReg::Temp(t as u8), w & !(1 << c)));
            }
            // … then an instruction reads component c in one lane it reads, the others in
            // the rest (writing only components the program writes anyway).
            use Opcode::*;
            let ops: Vec<Opcode> = Opcode::arithmetic().filter(|&op| op != Mova).collect();
            let op = r.pick(&ops);
            let m = r.subset(w);
            // The temporary is the first source.
            let read = op.reads(0, m);
            let lane = r.pick(&(0..4u8).filter(|&l| read & 1 << l != 0).collect::<Vec<_>>());
            let ok = (w & !(1 << c)) | (!w & 0xF);
            let sel = (0..4u8).map(|l| {
                if l == lane || ok == 0 {
                    c
                } else {
                    r.pick(&(0..4u8).filter(|&k| ok & 1 << k != 0).collect::<Vec<_>>())
                }
            });
            let sel: Vec<u8> = sel.collect();
            let swz = Swizzle::from_lanes([sel[0], sel[1], sel[2], sel[3]]);
            let temp = SrcReg::Temp(t as u8);
            let input = SrcReg::Input(r.below(16) as u8);
            // The temporary as the first source, identity swizzles elsewhere.
            let mut swizzles = [Swizzle::IDENTITY; 3];
            swizzles[0] = swz;
            let d = OperandDesc::new(mask_of(m), [false; 3], swizzles);
            let dst = DstReg::Temp(t as u8);
            let rel = RelIndex::None;
            let instr = match op {
                Mad | Madi => {
                    let desc = g.descs[..MAD_DESCS].iter().position(|&x| x == d.0);
                    let used = used_descs(&g);
                    let desc =
                        desc.or_else(|| (0..MAD_DESCS).find(|k| !used.contains(&(*k as u8))))?;
                    g.descs[desc] = d.0;
                    Instruction::Mad {
                        op,
                        dst,
                        src1: temp,
                        src2: input,
                        src3: input,
                        rel,
                        desc: desc as u8,
                    }
                }
                Ex2 | Lg2 | Litp | Flr | Rcp | Rsq | Mov => Instruction::Unary {
                    op,
                    dst,
                    src: temp,
                    rel,
                    desc: free_desc(&mut g, d),
                },
                Cmp => Instruction::Cmp {
                    src1: temp,
                    src2: input,
                    rel,
                    x: CmpOp::Lt,
                    y: CmpOp::Ge,
                    desc: free_desc(&mut g, d),
                },
                _ => Instruction::Binary {
                    op,
                    dst,
                    src1: temp,
                    src2: input,
                    rel,
                    desc: free_desc(&mut g, d),
                },
            };
            seq.push(Node::Op(instr));
            g.main.splice(0..0, seq);
        }
        Mutation::EndsDifferInSetEmit | Mutation::EndsDifferInOutputs => {
            // IFU b: [write the outputs every END leaves, SETEMIT, END], at the start: a
            // valid END on its own, but unlike the others.
            let (vtx, primitive, winding) = case.end_p?;
            let mut arm = Vec::new();
            for &o in &out_regs {
                let mut w = case.end_w[o] & facts.outputs[o];
                if m == Mutation::EndsDifferInOutputs && o == out_regs[0] {
                    let extra = facts.outputs[o] & !w;
                    if extra == 0 {
                        return None;
                    }
                    w |= r.subset(extra);
                }
                if w != 0 {
                    arm.push(mov_input(&mut g, r, DstReg::Output(o as u8), w));
                }
            }
            if m == Mutation::EndsDifferInOutputs && out_regs.is_empty() {
                return None;
            }
            let vtx = if m == Mutation::EndsDifferInSetEmit {
                (vtx + 1) & 3
            } else {
                vtx
            };
            arm.push(Node::Op(Instruction::SetEmit {
                vtx,
                primitive,
                winding,
            }));
            arm.push(Node::End);
            let n = Node::IfU {
                b: r.below(16) as u8,
                then: arm,
                els: Vec::new(),
            };
            g.main.splice(0..0, [n, Node::Op(Instruction::Nop)]);
        }
        Mutation::OutputNotRewritten => {
            if out_regs.is_empty() {
                return None;
            }
            // EMIT twice in a row before the final END, with nothing written in between.
            let at = final_end(&g);
            let pos = g.main[..at]
                .iter()
                .rposition(|n| *n == Node::Op(Instruction::Emit))?;
            g.main.insert(pos + 1, Node::Op(Instruction::Emit));
        }
        Mutation::SetEmitDiffers | Mutation::MaybeWriteAtEnd => {
            // Before the final END: rewrite every output, EMIT, then restore what every
            // END leaves (the outputs `end_w`, SETEMIT `end_p`).
            let at = final_end(&g);
            let (vtx, primitive, winding) = case.end_p?;
            let restore = Node::Op(Instruction::SetEmit {
                vtx,
                primitive,
                winding,
            });
            let mut seq = Vec::new();
            if m == Mutation::SetEmitDiffers {
                // … with SETEMIT set differently in the two arms of an IFU before the EMIT.
                let v = r.below(4) as u8;
                let arm = |vtx: u8, primitive: bool| {
                    vec![Node::Op(Instruction::SetEmit {
                        vtx,
                        primitive,
                        winding: false,
                    })]
                };
                seq.push(Node::IfU {
                    b: r.below(16) as u8,
                    then: arm(v, false),
                    els: arm((v + 1) & 3, true),
                });
            } else {
                seq.push(restore.clone());
            }
            seq.extend(write_and_emit(&mut g, r, &out_regs, &facts.outputs));
            for &o in &out_regs {
                let w = case.end_w[o] & facts.outputs[o];
                if w != 0 {
                    seq.push(mov_input(&mut g, r, DstReg::Output(o as u8), w));
                }
            }
            if m == Mutation::MaybeWriteAtEnd {
                // … and one more component written in one arm of an IFU only.
                let free: Vec<usize> = out_regs
                    .iter()
                    .copied()
                    .filter(|&o| facts.outputs[o] & !case.end_w[o] != 0)
                    .collect();
                if free.is_empty() {
                    return None;
                }
                let o = r.pick(&free);
                let c = r.subset(facts.outputs[o] & !case.end_w[o]);
                let w = mov_input(&mut g, r, DstReg::Output(o as u8), c);
                seq.push(Node::IfU {
                    b: r.below(16) as u8,
                    then: vec![w],
                    els: Vec::new(),
                });
            }
            seq.push(restore);
            g.main.splice(at..at, seq);
        }
        Mutation::IfcOnCmp | Mutation::JmpcOnCmp => {
            // CMP, then a branch on cmp over a CMP (which changes nothing else the rule
            // looks at).
            let cmp = cmp_node(&mut g);
            let body = vec![cmp_node(&mut g)];
            let cond = Condition::from_raw(r.below(16) as u8);
            let n = if m == Mutation::IfcOnCmp {
                Node::IfC {
                    cond,
                    then: body,
                    els: vec![Node::Op(Instruction::Nop)],
                }
            } else {
                Node::JmpC { cond, skip: body }
            };
            g.main.splice(0..0, [cmp, n, Node::Op(Instruction::Nop)]);
        }
        Mutation::AlBeforeLoop => {
            if !facts.has_loop {
                return None;
            }
            let n = cmp_read(&mut g, SrcReg::Const(r.below(8) as u8), RelIndex::AL);
            g.main.insert(0, n);
        }
        Mutation::A0BeforeMova => {
            if facts.a0 == 0 {
                return None;
            }
            let rel = if facts.a0 & 1 != 0 {
                RelIndex::A0X
            } else {
                RelIndex::A0Y
            };
            let n = cmp_read(&mut g, SrcReg::Const(r.below(8) as u8), rel);
            g.main.insert(0, n);
        }
        Mutation::BreakcInLoop => {
            let cmp = cmp_node(&mut g);
            let cond = Condition::from_raw(r.below(16) as u8);
            let body = first_loop(&mut g.main)?;
            body.insert(0, Node::BreakC(cond));
            g.main.insert(0, cmp);
        }
        Mutation::CallcOnCmp => {
            if g.subs.is_empty() {
                return None;
            }
            // Replace the first CALL by CALLC.
            fn swap(nodes: &mut [Node], cond: Condition) -> bool {
                for n in nodes {
                    let done = match n {
                        Node::Call { sub, .. } => {
                            *n = Node::CallC { sub: *sub, cond };
                            true
                        }
                        Node::IfU { then, els, .. } => swap(then, cond) || swap(els, cond),
                        Node::Loop { body, .. } => swap(body, cond),
                        Node::JmpU { skip, .. } => swap(skip, cond),
                        _ => false,
                    };
                    if done {
                        return true;
                    }
                }
                false
            }
            let cond = Condition::from_raw(r.below(16) as u8);
            if !swap(&mut g.main, cond) {
                return None;
            }
            let cmp = cmp_node(&mut g);
            g.main.insert(0, cmp);
        }
        Mutation::EmitBeforeSetEmit => {
            let seq = write_and_emit(&mut g, r, &out_regs, &facts.outputs);
            g.main.splice(0..0, seq);
        }
        Mutation::SetEmitDiffersAtEnd => {
            let at = final_end(&g);
            let b = r.below(16) as u8;
            g.main.splice(
                at..at,
                [
                    Node::IfU {
                        b,
                        then: vec![Node::Op(Instruction::SetEmit {
                            vtx: 2,
                            primitive: true,
                            winding: true,
                        })],
                        els: vec![Node::Op(Instruction::SetEmit {
                            vtx: 2,
                            primitive: true,
                            winding: false,
                        })],
                    },
                    Node::Op(Instruction::Nop),
                ],
            );
        }
    }
    Some(g)
}

// ---------------------------------------------------------------- shrinking

/// Candidate simplifications of `g`, each one node removed (or a structured node replaced
/// by its contents), for shrinking failing programs.
pub fn shrink_candidates(g: &Gen) -> Vec<Gen> {
    let mut out = Vec::new();
    let n = count_nodes(&g.main) + g.subs.iter().map(|s| count_nodes(s)).sum::<usize>();
    for k in 0..n {
        for how in 0..2 {
            let mut h = g.clone();
            let mut idx = k;
            let mut done = edit(&mut h.main, &mut idx, how);
            for s in h.subs.iter_mut() {
                if done {
                    break;
                }
                done = edit(s, &mut idx, how);
            }
            if done && h != *g && blocks_ok(&h) {
                out.push(h);
            }
        }
    }
    out
}

fn count_nodes(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| {
            1 + match n {
                Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
                    count_nodes(then) + count_nodes(els)
                }
                Node::Loop { body, .. } => count_nodes(body),
                Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => count_nodes(skip),
                _ => 0,
            }
        })
        .sum()
}

/// Remove (how 0) or flatten (how 1) the `idx`-th node in pre-order.
fn edit(nodes: &mut Vec<Node>, idx: &mut usize, how: u32) -> bool {
    let mut i = 0;
    while i < nodes.len() {
        if *idx == 0 {
            if how == 0 {
                nodes.remove(i);
            } else {
                let inner = match &nodes[i] {
                    Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
                        let mut v = then.clone();
                        v.extend(els.iter().cloned());
                        v
                    }
                    Node::Loop { body, .. } => body.clone(),
                    Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => skip.clone(),
                    _ => return false,
                };
                nodes.splice(i..=i, inner);
            }
            return true;
        }
        *idx -= 1;
        let done = match &mut nodes[i] {
            Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
                edit(then, idx, how) || edit(els, idx, how)
            }
            Node::Loop { body, .. } => edit(body, idx, how),
            Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => edit(skip, idx, how),
            _ => false,
        };
        if done {
            return true;
        }
        i += 1;
    }
    false
}

/// The layout rules still hold: non-empty blocks ending in a plain instruction (END allowed),
/// main ending in END.
fn blocks_ok(g: &Gen) -> bool {
    fn ok(nodes: &[Node], top: bool) -> bool {
        let last_ok = matches!(nodes.last(), Some(Node::Op(_) | Node::End));
        if !last_ok || (top && nodes.last() != Some(&Node::End)) {
            return false;
        }
        nodes.iter().all(|n| match n {
            Node::IfU { then, els, .. } | Node::IfC { then, els, .. } => {
                ok(then, false) && (els.is_empty() || ok(els, false))
            }
            Node::Loop { body, .. } => ok(body, false),
            Node::JmpU { skip, .. } | Node::JmpC { skip, .. } => ok(skip, false),
            _ => true,
        })
    }
    ok(&g.main, true) && g.subs.iter().all(|s| ok(s, false))
}

/// The condition-free variants of `Condition` for hand-written cases.
pub fn cond_x() -> Condition {
    Condition {
        op: CondOp::X,
        ref_x: true,
        ref_y: false,
    }
}
