//! The reference interpreter of USC programs: the definition of correct execution for every
//! USC engine.
//!
//! A program runs as 1 to 16 *instances* that execute the same groups, each with its own
//! per-instance registers (`r`, `vi`, `i`, `idx`), predicate `p0` and execution-mask bit `Pe`
//! (the reference, section 13: the conditional instructions set `Pe`; an instance whose `Pe` is 0
//! does not execute ALU groups unless the group says `(ignorepe)`). Shared (`sh`) and
//! coefficient (`cf`) registers exist once. A group reads the state as it was before the group
//! and writes at its end; when several instances write the same shared register in one group,
//! the highest-numbered instance's value remains. Every group executed counts one step
//! against the budget. Readings of the reference are in `docs/usc.md`.

use super::check::drivers;
use super::consts;
use super::float as fl;
use super::program::{
    Bank, BranchMode, Group, Instr, Mods, Operand, PackFormat, Pred, Program, Reg, SignPos, Span,
    TestType,
};
use super::table::{Op, Unit};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Most instances one run executes (one USC task: "There are 16 instances in a group").
pub const MAX_INSTANCES: usize = 16;

/// Choices where the reference allows more than one reading (`docs/usc.md`). Start from
/// `UscOptions::default()` and use the `with_*` setters: the struct is `#[non_exhaustive]`,
/// so readings added later do not break callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UscOptions {
    /// FMAD rounds once (fused multiply-add, the default) or rounds the product first.
    pub fused_fmad: bool,
    /// CNDLT as its pseudo-code is written (`elseif (cond && S0 == 0)` stops instances whose
    /// condition holds) instead of as its comments describe it (the default: "if current
    /// instance is running and the test fails, increment mask count", i.e. instances whose
    /// condition does not hold stop). See `docs/usc.md`.
    pub cndlt_literal: bool,
}

impl Default for UscOptions {
    fn default() -> Self {
        UscOptions {
            fused_fmad: true,
            cndlt_literal: false,
        }
    }
}

impl UscOptions {
    /// These options with [`Self::fused_fmad`] set.
    #[must_use]
    pub fn with_fused_fmad(mut self, fused_fmad: bool) -> Self {
        self.fused_fmad = fused_fmad;
        self
    }

    /// These options with [`Self::cndlt_literal`] set.
    #[must_use]
    pub fn with_cndlt_literal(mut self, cndlt_literal: bool) -> Self {
        self.cndlt_literal = cndlt_literal;
        self
    }
}

/// Why a program cannot be prepared or run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// An instruction or form outside the scope.
    NotSupported { name: String, span: Span },
    /// A program that is well-formed text but cannot run (a branch to a missing group, an
    /// element a format does not have).
    Invalid { message: String, span: Span },
    /// A link address (CNDSETL, LAPC) that names no group.
    BadLink { value: u32, span: Span },
    /// Instance count outside 1..=16.
    Instances(usize),
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::NotSupported { name, span } => write!(f, "{span}: not supported: {name}"),
            ExecError::Invalid { message, span } => write!(f, "{span}: {message}"),
            ExecError::BadLink { value, span } => write!(
                f,
                "{span}: link address {value} is not the number of a group of the program"
            ),
            ExecError::Instances(n) => write!(f, "{n} instances: 1 to {MAX_INSTANCES} run"),
        }
    }
}

impl std::error::Error for ExecError {}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Ran past the last group.
    Done,
    /// The step budget ran out first.
    Budget,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Budget => "budget",
        }
    }
}

/// Result of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: Status,
    /// Groups executed.
    pub steps: u64,
}

/// Register state of a task of up to 16 instances.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    instances: usize,
    r: Vec<[u32; MAX_INSTANCES]>,
    vi: Vec<[u32; MAX_INSTANCES]>,
    i: Vec<[u32; MAX_INSTANCES]>,
    idx: Vec<[u32; MAX_INSTANCES]>,
    sh: Vec<u32>,
    cf: Vec<u32>,
    /// Per-instance predicate p0.
    pub p0: [bool; MAX_INSTANCES],
    /// Per-instance execution-mask bit (the reference's `Pe`).
    pub pe: [bool; MAX_INSTANCES],
    touched: BTreeSet<Reg>,
    p0_touched: bool,
}

impl State {
    /// All registers zero (the reference calls temporaries "uninitialised"; zero is the
    /// interpreter's choice), p0 clear, every instance running.
    pub fn new(instances: usize) -> Result<State, ExecError> {
        if !(1..=MAX_INSTANCES).contains(&instances) {
            return Err(ExecError::Instances(instances));
        }
        let lanes = |b: Bank| vec![[0u32; MAX_INSTANCES]; usize::from(b.count())];
        Ok(State {
            instances,
            r: lanes(Bank::R),
            vi: lanes(Bank::Vi),
            i: lanes(Bank::I),
            idx: lanes(Bank::Idx),
            sh: vec![0; usize::from(Bank::Sh.count())],
            cf: vec![0; usize::from(Bank::Cf.count())],
            p0: [false; MAX_INSTANCES],
            pe: [true; MAX_INSTANCES],
            touched: BTreeSet::new(),
            p0_touched: false,
        })
    }

    pub fn instances(&self) -> usize {
        self.instances
    }

    /// The value instance `lane` reads from `reg`.
    pub fn get(&self, reg: Reg, lane: usize) -> u32 {
        let n = usize::from(reg.index);
        match reg.bank {
            Bank::R => self.r[n][lane],
            Bank::Vi => self.vi[n][lane],
            Bank::I => self.i[n][lane],
            Bank::Idx => self.idx[n][lane],
            Bank::Sh => self.sh[n],
            Bank::Cf => self.cf[n],
            Bank::C => consts::special(reg.index).unwrap_or(0),
        }
    }

    /// Sets `reg` for instance `lane` (a shared register for all). Special constants are
    /// read-only: setting one does nothing.
    pub fn set(&mut self, reg: Reg, lane: usize, v: u32) {
        let n = usize::from(reg.index);
        match reg.bank {
            Bank::R => self.r[n][lane] = v,
            Bank::Vi => self.vi[n][lane] = v,
            Bank::I => self.i[n][lane] = v,
            Bank::Idx => self.idx[n][lane] = v,
            Bank::Sh => self.sh[n] = v,
            Bank::Cf => self.cf[n] = v,
            Bank::C => return,
        }
        self.touched.insert(reg);
    }

    /// Sets p0 of one instance.
    pub fn set_p0(&mut self, lane: usize, v: bool) {
        self.p0[lane] = v;
        self.p0_touched = true;
    }

    /// Registers set by the caller or written by the program, in bank order.
    pub fn touched(&self) -> impl Iterator<Item = Reg> + '_ {
        self.touched.iter().copied()
    }

    /// Whether p0 was set or written.
    pub fn p0_touched(&self) -> bool {
        self.p0_touched
    }

    /// Records that `reg` was written (what an engine that writes the banks directly, through
    /// [`State::banks_mut`], reports afterwards).
    pub fn mark_touched(&mut self, reg: Reg) {
        if reg.bank != Bank::C {
            self.touched.insert(reg);
        }
    }

    /// Records that p0 was written.
    pub fn mark_p0_touched(&mut self) {
        self.p0_touched = true;
    }

    /// The register banks as arrays: per-instance banks hold 16 lanes per register.
    pub fn banks_mut(&mut self) -> Banks<'_> {
        Banks {
            r: &mut self.r,
            vi: &mut self.vi,
            i: &mut self.i,
            idx: &mut self.idx,
            sh: &mut self.sh,
            cf: &mut self.cf,
        }
    }
}

/// Mutable views of a [`State`]'s banks (for engines that run on them directly).
pub struct Banks<'a> {
    pub r: &'a mut [[u32; MAX_INSTANCES]],
    pub vi: &'a mut [[u32; MAX_INSTANCES]],
    pub i: &'a mut [[u32; MAX_INSTANCES]],
    pub idx: &'a mut [[u32; MAX_INSTANCES]],
    pub sh: &'a mut [u32],
    pub cf: &'a mut [u32],
}

/// Where a group sends control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The next group.
    Next,
    /// The group at this index.
    Jump(usize),
}

/// A program checked for the scope and with its source slots and branch targets resolved.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub groups: Vec<Group>,
    /// Per group: the default W0/W1 drivers.
    pub drivers: Vec<[Option<u8>; 2]>,
    /// Per group: the target group index of a BA/BAL/BR/BRL.
    pub targets: Vec<Option<usize>>,
    pub options: UscOptions,
}

fn invalid(span: Span, message: impl Into<String>) -> ExecError {
    ExecError::Invalid {
        message: message.into(),
        span,
    }
}

impl Prepared {
    /// Checks that every instruction is inside the scope (the first one that is not is the
    /// error) and resolves source slots and branch targets.
    pub fn new(program: &Program, options: UscOptions) -> Result<Prepared, ExecError> {
        for g in &program.groups {
            for ins in &g.instrs {
                let Some(info) = ins.info else {
                    let name = ins.text.split('.').next().unwrap_or("").to_string();
                    let name = if name == ins.text {
                        name
                    } else {
                        ins.text.clone()
                    };
                    return Err(ExecError::NotSupported {
                        name,
                        span: ins.span,
                    });
                };
                if info.op == Op::MovToFt {
                    return Err(ExecError::NotSupported {
                        name: "mov to a feed-through (seed 004 does not say what it does)".into(),
                        span: ins.span,
                    });
                }
            }
        }
        let mut groups = Vec::with_capacity(program.groups.len());
        let mut drv = Vec::new();
        let mut targets = Vec::new();
        for g in &program.groups {
            let mut slots: BTreeMap<(bool, u8), Reg> = BTreeMap::new();
            let mut instrs = Vec::new();
            for ins in &g.instrs {
                let info = ins.info.expect("checked above");
                if info.op == Op::Decl {
                    let (Operand::Slot { is, n, .. }, Operand::Reg(r, _)) =
                        (&ins.operands[0], &ins.operands[1])
                    else {
                        unreachable!("the table's declaration form")
                    };
                    if slots.insert((*is, *n), *r).is_some() {
                        return Err(invalid(ins.span, "source slot declared twice"));
                    }
                    continue;
                }
                let mut ins = ins.clone();
                for o in &mut ins.operands {
                    if let Operand::Slot { is, n, mods } = *o {
                        let Some(r) = slots.get(&(is, n)) else {
                            return Err(ExecError::NotSupported {
                                name: format!(
                                    "source slot {}{n} without a declaration (`mov {0}{n}, REG` before the instructions)",
                                    if is { "is" } else { "s" }
                                ),
                                span: ins.span,
                            });
                        };
                        *o = Operand::Reg(*r, mods);
                    }
                }
                check_elements(&ins)?;
                instrs.push(ins);
            }
            let units: Vec<Unit> = instrs.iter().map(|i| i.info.unwrap().unit).collect();
            drv.push(drivers(&units));
            let mut target = None;
            if let Some(ins) = instrs.first() {
                let op = ins.op().unwrap();
                if matches!(op, Op::Ba | Op::Bal | Op::Br | Op::Brl) {
                    let Operand::Imm(v) = ins.operands[0] else {
                        unreachable!()
                    };
                    let number = if matches!(op, Op::Br | Op::Brl) {
                        i64::from(g.number) + v
                    } else {
                        v
                    };
                    let idx = u32::try_from(number)
                        .ok()
                        .and_then(|n| program.group_index(n))
                        .ok_or_else(|| {
                            invalid(
                                ins.span,
                                format!(
                                    "branch to group {number}, which the program does not have"
                                ),
                            )
                        })?;
                    target = Some(idx);
                }
            }
            targets.push(target);
            groups.push(Group {
                instrs,
                ..g.clone()
            });
        }
        Ok(Prepared {
            groups,
            drivers: drv,
            targets,
            options,
        })
    }

    /// Runs the program from its first group on `state` until it ends or `budget` groups
    /// have executed.
    pub fn run(&self, state: &mut State, budget: u64) -> Result<Outcome, ExecError> {
        let mut pc = 0usize;
        let mut steps = 0u64;
        let mut link: Option<usize> = None;
        while pc < self.groups.len() {
            if steps >= budget {
                return Ok(Outcome {
                    status: Status::Budget,
                    steps,
                });
            }
            steps += 1;
            match self.step(pc, state, &mut link)? {
                Flow::Next => pc += 1,
                Flow::Jump(t) => pc = t,
            }
        }
        Ok(Outcome {
            status: Status::Done,
            steps,
        })
    }

    fn link_index(&self, value: u32, span: Span) -> Result<usize, ExecError> {
        if self.groups.last().is_some_and(|g| g.number + 1 == value) {
            return Ok(self.groups.len());
        }
        self.groups
            .binary_search_by_key(&value, |g| g.number)
            .map_err(|_| ExecError::BadLink { value, span })
    }

    fn link_value(&self, link: Option<usize>) -> u32 {
        match link {
            Some(i) if i < self.groups.len() => self.groups[i].number,
            _ => self.groups.last().map_or(0, |g| g.number + 1),
        }
    }

    /// Executes group `pc` on `st` (the interpreter's step, which the JIT calls for the
    /// groups it does not compile); `link` is the run's link address.
    pub fn step(
        &self,
        pc: usize,
        st: &mut State,
        link: &mut Option<usize>,
    ) -> Result<Flow, ExecError> {
        let g = &self.groups[pc];
        let first = &g.instrs[0];
        let unit = first.info.unwrap().unit;
        let n = st.instances;
        let runs = |st: &State, l: usize| {
            (g.ignore_pe || st.pe[l])
                && match g.pred {
                    Pred::Always => true,
                    Pred::P0 => st.p0[l],
                    Pred::NotP0 => !st.p0[l],
                }
        };
        match unit {
            Unit::Cond => {
                self.cond(first, st, link)?;
                Ok(Flow::Next)
            }
            Unit::Branch => {
                let op = first.op().unwrap();
                if op == Op::Savl {
                    let Operand::Reg(r, _) = first.operands[0] else {
                        unreachable!()
                    };
                    let v = self.link_value(*link);
                    for l in 0..n {
                        if runs(st, l) {
                            st.set(r, l, v);
                        }
                    }
                    return Ok(Flow::Next);
                }
                let considered: Vec<usize> = (0..n).filter(|&l| g.ignore_pe || st.pe[l]).collect();
                let holds = |l: usize| match g.pred {
                    Pred::Always => true,
                    Pred::P0 => st.p0[l],
                    Pred::NotP0 => !st.p0[l],
                };
                let taken = match (g.pred, first.mods.branch) {
                    (Pred::Always, _) => true,
                    (_, Some(BranchMode::AllInst)) => considered.iter().all(|&l| holds(l)),
                    _ => considered.iter().any(|&l| holds(l)),
                };
                if !taken {
                    return Ok(Flow::Next);
                }
                match op {
                    Op::Ba | Op::Br => Ok(Flow::Jump(self.targets[pc].unwrap())),
                    Op::Bal | Op::Brl => {
                        *link = Some(pc + 1);
                        Ok(Flow::Jump(self.targets[pc].unwrap()))
                    }
                    Op::Lapc => Ok(Flow::Jump(link.unwrap_or(self.groups.len()))),
                    _ => unreachable!("branch unit"),
                }
            }
            _ => {
                let mut results = Vec::new();
                for l in 0..n {
                    if runs(st, l) {
                        results.push((l, self.alu_lane(pc, st, l)));
                    }
                }
                for (l, r) in results {
                    for (reg, v) in r.writes.into_iter().flatten() {
                        st.set(reg, l, v);
                    }
                    if let Some(p) = r.p0 {
                        st.set_p0(l, p);
                    }
                }
                Ok(Flow::Next)
            }
        }
    }

    fn cond(&self, ins: &Instr, st: &mut State, link: &mut Option<usize>) -> Result<(), ExecError> {
        let n = st.instances;
        let op = ins.op().unwrap();
        let o = &ins.operands;
        let imm = |k: usize| match o[k] {
            Operand::Imm(v) => v as u32,
            _ => unreachable!("table: immediate"),
        };
        let reg = |k: usize| match o[k] {
            Operand::Reg(r, _) => r,
            _ => unreachable!("table: register"),
        };
        let cond = |st: &State, l: usize| match imm(0) {
            0 => st.p0[l],
            1 => !st.p0[l],
            2 => true,
            _ => false,
        };
        let mut out: Vec<(usize, u32, bool, Option<bool>)> = Vec::with_capacity(n);
        match op {
            Op::Cndst => {
                let (d, s, adj) = (reg(1), reg(2), imm(3));
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let r = if cond(st, l) && s0 == 0 {
                        (0, true)
                    } else {
                        (s0.wrapping_add(adj), false)
                    };
                    out.push((l, r.0, r.1, None));
                    let _ = d;
                }
            }
            Op::Cndef => {
                let (s, adj) = (reg(2), imm(3));
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let r = if s0 == 0 {
                        (adj, adj == 0)
                    } else if cond(st, l) && s0 == 1 {
                        (0, true)
                    } else {
                        (s0, false)
                    };
                    out.push((l, r.0, r.1, None));
                }
            }
            Op::Cndsm => {
                let (s, s2) = (reg(2), reg(3));
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let v = if cond(st, l) && s0 == 0 {
                        st.get(s2, l)
                    } else {
                        s0
                    };
                    out.push((l, v, v == 0, None));
                }
            }
            Op::Cndlt => {
                let (s, adj) = (reg(3), imm(4));
                let any = (0..n).any(|l| cond(st, l) && st.pe[l]);
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let r = if !any {
                        if s0 > adj {
                            (s0 - adj, false, false)
                        } else {
                            (0, true, false)
                        }
                    } else if cond(st, l) == self.options.cndlt_literal && s0 == 0 {
                        (adj, false, true)
                    } else {
                        (s0, s0 == 0, true)
                    };
                    out.push((l, r.0, r.1, Some(r.2)));
                }
            }
            Op::Cndend => {
                let (s, adj) = (reg(1), imm(2));
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let r = if s0 > adj {
                        (s0 - adj, false)
                    } else {
                        (0, true)
                    };
                    out.push((l, r.0, r.1, None));
                }
            }
            Op::Cndsetl => {
                if ins.mods.part_b != Some(true) {
                    // Part A: "does not update Dest or Pe, performing only internal operations".
                    return Ok(());
                }
                let (s, s2) = (reg(1), reg(2));
                let first = (0..n).find(|&l| st.pe[l]);
                if let Some(f) = first {
                    let addr = st.get(s2, f);
                    *link = Some(self.link_index(addr, ins.span)?);
                }
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let other = first.is_some_and(|f| st.get(s2, l) != st.get(s2, f));
                    let r = if s0 == 0 && other {
                        (1, false)
                    } else {
                        (s0, s0 == 0)
                    };
                    out.push((l, r.0, r.1, None));
                }
            }
            Op::Cndlpc => {
                let s = reg(1);
                for l in 0..n {
                    let s0 = st.get(s, l);
                    let r = match s0 {
                        0 => (2, false),
                        1 => (0, true),
                        _ => (s0, false),
                    };
                    out.push((l, r.0, r.1, None));
                }
            }
            _ => unreachable!("conditional unit"),
        }
        let dst = match op {
            Op::Cndend | Op::Cndsetl | Op::Cndlpc => reg(0),
            _ => reg(1),
        };
        for (l, w, pe, p0) in out {
            st.set(dst, l, w);
            st.pe[l] = pe;
            if let Some(p) = p0 {
                st.set_p0(l, p);
            }
        }
        Ok(())
    }

    /// One instance's work in a main or bitwise group: its writes and p0.
    fn alu_lane(&self, pc: usize, st: &State, l: usize) -> LaneResult {
        let g = &self.groups[pc];
        let fused = self.options.fused_fmad;
        let mut ft = [0u32; 6];
        let mut ftt = false;
        let mut carry = false;
        let mut p0 = None;
        let mut w: [Option<u32>; 2] = [None, None];
        let mut writes: [Option<(Reg, u32)>; 2] = [None, None];
        let mut nw = 0;
        let raw = |o: &Operand, ft: &[u32; 6]| -> u32 {
            match o {
                Operand::Reg(r, _) => st.get(*r, l),
                Operand::Ft(n, _) => ft[usize::from(*n)],
                Operand::Imm(v) => *v as u32,
                _ => 0,
            }
        };
        let fsrc = |o: &Operand, ft: &[u32; 6]| -> u32 {
            let m = o.mods();
            fl::source_mods(raw(o, ft), m.flr, m.abs, m.neg)
        };
        for ins in &g.instrs {
            let info = ins.info.unwrap();
            let o = &ins.operands;
            let sat = |v: u32| if ins.mods.sat { fl::saturate(v) } else { v };
            let dst_ft = || match o[0] {
                Operand::Ft(n, _) => usize::from(n),
                _ => 0,
            };
            match info.op {
                Op::Fmad => {
                    ft[dst_ft()] = sat(fl::fmad(
                        fsrc(&o[1], &ft),
                        fsrc(&o[2], &ft),
                        fsrc(&o[3], &ft),
                        fused,
                    ))
                }
                Op::Fadd => ft[dst_ft()] = sat(fl::fadd(fsrc(&o[1], &ft), fsrc(&o[2], &ft))),
                Op::Fmul => ft[dst_ft()] = sat(fl::fmul(fsrc(&o[1], &ft), fsrc(&o[2], &ft))),
                Op::Mbyp => ft[dst_ft()] = fsrc(&o[1], &ft),
                Op::Frcp | Op::Frsq | Op::Fsqrt | Op::Flog | Op::Fexp => {
                    let a = fsrc(&o[1], &ft);
                    let v = match info.op {
                        Op::Frcp => fl::frcp(a),
                        Op::Frsq => fl::frsq(a),
                        Op::Fsqrt => fl::fsqrt(a),
                        Op::Flog => fl::flog(a),
                        _ => fl::fexp(a),
                    };
                    if let Operand::Reg(r, _) = o[0] {
                        writes[0] = Some((r, v));
                    }
                }
                Op::Pck => ft[2] = pack(ins, raw(&o[1], &ft)),
                Op::Unpck => ft[0] = unpack(ins, raw(&o[1], &ft), o[1].mods()),
                Op::Uadd8 | Op::Umul8 | Op::Umad8 | Op::Iadd8 | Op::Imul8 | Op::Imad8 => {
                    let signed = matches!(info.op, Op::Iadd8 | Op::Imul8 | Op::Imad8);
                    ft[0] = small_int(info.op, o, &|k| raw(&o[k], &ft), 8, signed, ins.mods.sat);
                }
                Op::Uadd16 | Op::Umul16 | Op::Umad16 | Op::Iadd16 | Op::Imul16 | Op::Imad16 => {
                    let signed = matches!(info.op, Op::Iadd16 | Op::Imul16 | Op::Imad16);
                    ft[0] = small_int(info.op, o, &|k| raw(&o[k], &ft), 16, signed, ins.mods.sat);
                }
                Op::Add64
                | Op::Uadd6432
                | Op::Sadd6432
                | Op::Umadd32
                | Op::Smadd32
                | Op::Umadd64
                | Op::Smadd64 => {
                    let cin = matches!(o.last(), Some(Operand::P0)) && st.p0[l];
                    let (lo, hi, c) = wide_int(info.op, o, &|k| raw(&o[k], &ft), cin);
                    ft[0] = lo;
                    ft[1] = hi;
                    carry = c;
                }
                crate::usc_tests!() => {
                    ftt = if info.op == Op::Tstc {
                        carry
                    } else {
                        let ty = ins.mods.ty.unwrap_or(TestType::F32);
                        let a = o.get(2).map(|x| raw(x, &ft)).unwrap_or(0);
                        let b = o.get(3).map(|x| raw(x, &ft)).unwrap_or(0);
                        let ea = o.get(2).map(|x| x.mods().element()).unwrap_or(0);
                        let eb = o.get(3).map(|x| x.mods().element()).unwrap_or(0);
                        test(info.op, ty, a, ea, b, eb)
                    };
                    if o[1] == Operand::P0 {
                        p0 = Some(ftt);
                    }
                }
                Op::Mov => {
                    let def = self.drivers[pc][0].map_or(0, |n| ft[usize::from(n)]);
                    w[0] = Some(merge(raw(&o[1], &ft), o[0].mods().elems, def));
                }
                Op::Movc => {
                    let d = self.drivers[pc];
                    let def0 = d[0].map_or(0, |n| ft[usize::from(n)]);
                    let def1 = d[1].map_or(0, |n| ft[usize::from(n)]);
                    if ftt {
                        w[0] = Some(merge(raw(&o[3], &ft), o[0].mods().elems, def0));
                        if matches!(o[1], Operand::W(1, _)) {
                            w[1] = Some(raw(&o[4], &ft));
                        }
                    } else {
                        w[0] = Some(def0);
                        w[1] = Some(def1);
                    }
                }
                Op::MovcWrite => {
                    let e = wsrc(&o[1], &ft, &w, &self.drivers[pc], st, l);
                    let v = if ftt {
                        merge(raw(&o[3], &ft), o[0].mods().elems, e)
                    } else {
                        e
                    };
                    w[0] = Some(v);
                    if ftt {
                        w[1] = Some(raw(&o[4], &ft));
                    }
                    if let Operand::Reg(r, _) = o[0] {
                        writes[nw] = Some((r, v));
                        nw += 1;
                    }
                }
                Op::Write => {
                    let v = wsrc(&o[1], &ft, &w, &self.drivers[pc], st, l);
                    if let Operand::Reg(r, m) = o[0] {
                        let v = merge(v, m.elems, st.get(r, l));
                        writes[nw] = Some((r, v));
                        nw += 1;
                    }
                }
                // Bitwise ALU.
                Op::Byp => match info.unit {
                    Unit::BitMask => {
                        ft[0] = raw(&o[2], &ft);
                        ft[1] = raw(&o[3], &ft);
                    }
                    Unit::Shift1 => ft[2] = raw(&o[1], &ft),
                    Unit::Count => ft[3] = raw(&o[1], &ft),
                    _ => ft[4] = raw(&o[1], &ft),
                },
                Op::Msk => {
                    let width = raw(&o[2], &ft) & 63;
                    let pos = raw(&o[3], &ft) & 63;
                    ft[0] = (width + pos).wrapping_sub(1) & 63;
                    ft[1] = ((((1u128 << width) - 1) << pos) & 0xFFFF_FFFF) as u32;
                }
                Op::Shfl => {
                    let (s2, s1) = (raw(&o[1], &ft), raw(&o[2], &ft));
                    let mut v = 0u32;
                    for k in 0..16 {
                        v |= (s2 >> k & 1) << (2 * k);
                        v |= (s1 >> k & 1) << (2 * k + 1);
                    }
                    ft[2] = v;
                }
                Op::Rev => ft[2] = raw(&o[1], &ft).reverse_bits(),
                Op::Lsl => {
                    let a = raw(&o[1], &ft);
                    let s = raw(&o[2], &ft) % 32;
                    ft[dst_ft()] = a << s;
                }
                Op::Shr => ft[5] = raw(&o[1], &ft) >> (raw(&o[2], &ft) % 32),
                Op::Rol => ft[5] = raw(&o[1], &ft).rotate_left(raw(&o[2], &ft) % 32),
                Op::Asr => {
                    let sb = match ins.mods.signpos.unwrap_or(SignPos::Twb) {
                        SignPos::Twb => 31,
                        SignPos::Pwb => 15,
                        SignPos::Mtb => ft[0] & 0x1F,
                        SignPos::Ftb => ft[3] & 0x1F,
                    };
                    let s = raw(&o[2], &ft) % 32;
                    let v = (raw(&o[1], &ft) << (31 - sb)) as i32;
                    ft[5] = (v >> (31 + s - sb).min(31)) as u32;
                }
                Op::Cps => {
                    let f4 = raw(&o[2], &ft);
                    let s4 = raw(&o[3], &ft);
                    ft[5] = (s4 & !f4) | if st.p0[l] { f4 } else { 0 };
                }
                Op::Cbs => ft[3] = raw(&o[1], &ft).count_ones(),
                Op::Ftb => ft[3] = top_bit(raw(&o[1], &ft)),
                Op::FtbShi => {
                    let v = raw(&o[1], &ft);
                    ft[3] = top_bit(v ^ ((v as i32 >> 31) as u32));
                }
                Op::FtbMsb => {
                    let v = raw(&o[1], &ft);
                    ft[3] = if v == 0 { u32::MAX } else { v.leading_zeros() };
                }
                Op::And | Op::Or | Op::Xor | Op::Nand | Op::Nor | Op::Xnor => {
                    let m1 = ft[1];
                    let a = raw(&o[2], &ft) & if o[1] == Operand::Blank { !0 } else { m1 };
                    let b = raw(&o[4], &ft) & if o[3] == Operand::Blank { !0 } else { !m1 };
                    ft[4] = match info.op {
                        Op::And => a & b,
                        Op::Or => a | b,
                        Op::Xor => a ^ b,
                        Op::Nand => !(a & b),
                        Op::Nor => !(a | b),
                        _ => !(a ^ b),
                    };
                }
                Op::Tz | Op::Tnz => {
                    let v = raw(&o[1], &ft);
                    p0 = Some((v == 0) == (info.op == Op::Tz));
                }
                Op::Cndst
                | Op::Cndef
                | Op::Cndsm
                | Op::Cndlt
                | Op::Cndend
                | Op::Cndsetl
                | Op::Cndlpc
                | Op::Ba
                | Op::Bal
                | Op::Br
                | Op::Brl
                | Op::Lapc
                | Op::Savl
                | Op::Decl
                | Op::MovToFt => unreachable!("not an ALU instruction after preparation"),
            }
        }
        LaneResult { writes, p0 }
    }
}

struct LaneResult {
    writes: [Option<(Reg, u32)>; 2],
    p0: Option<bool>,
}

/// A write source's value.
fn wsrc(
    o: &Operand,
    ft: &[u32; 6],
    w: &[Option<u32>; 2],
    drivers: &[Option<u8>; 2],
    st: &State,
    l: usize,
) -> u32 {
    match o {
        Operand::Ft(n, _) => ft[usize::from(*n)],
        Operand::W(n, _) => {
            let n = usize::from(*n);
            w[n].unwrap_or_else(|| drivers[n].map_or(0, |d| ft[usize::from(d)]))
        }
        Operand::Reg(r, _) => st.get(*r, l),
        _ => 0,
    }
}

/// Bytes of `v` where `mask` has a bit (all four when `mask` is 0), `rest` elsewhere.
fn merge(v: u32, mask: u8, rest: u32) -> u32 {
    if mask == 0 || mask == 0xF {
        return v;
    }
    let mut m = 0u32;
    for k in 0..4 {
        if mask >> k & 1 != 0 {
            m |= 0xFF << (8 * k);
        }
    }
    (v & m) | (rest & !m)
}

fn top_bit(v: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        31 - v.leading_zeros()
    }
}

/// An element of `width` bits, as a signed or unsigned integer.
fn element(v: u32, e: u8, width: u32, signed: bool) -> i64 {
    let x = (u64::from(v) >> (u32::from(e) * width)) & ((1u64 << width) - 1);
    if signed && x >> (width - 1) != 0 {
        x as i64 - (1i64 << width)
    } else {
        x as i64
    }
}

/// 8- and 16-bit integer instructions: exact result, `.sat` clamps to the type's range, the
/// low 32 bits of the exact result otherwise (`docs/usc.md`).
fn small_int(
    op: Op,
    o: &[Operand],
    raw: &dyn Fn(usize) -> u32,
    width: u32,
    signed: bool,
    sat: bool,
) -> u32 {
    let src = |k: usize| {
        let m: Mods = o[k].mods();
        let mut x = element(raw(k), m.element(), width, signed);
        if m.abs {
            x = x.abs();
        }
        if m.neg {
            x = -x;
        }
        x
    };
    let r = match op {
        Op::Uadd8 | Op::Iadd8 | Op::Uadd16 | Op::Iadd16 => src(1) + src(2),
        Op::Umul8 | Op::Imul8 | Op::Umul16 | Op::Imul16 => src(1) * src(2),
        _ => src(1) * src(2) + src(3),
    };
    let r = if sat {
        let (lo, hi) = if signed {
            (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1)
        } else {
            (0, (1i64 << width) - 1)
        };
        r.clamp(lo, hi)
    } else {
        r
    };
    r as u32
}

/// The 32/64-bit integer instructions: (low word, high word, carry-out).
fn wide_int(op: Op, o: &[Operand], raw: &dyn Fn(usize) -> u32, cin: bool) -> (u32, u32, bool) {
    let signed = matches!(op, Op::Sadd6432 | Op::Smadd32 | Op::Smadd64);
    let word = |k: usize| -> i128 {
        let m = o[k].mods();
        let v = raw(k);
        let mut x = if signed {
            i128::from(v as i32)
        } else {
            i128::from(v)
        };
        if m.abs {
            x = x.abs();
        }
        if m.neg {
            x = -x;
        }
        x
    };
    let pair = |hi: usize, lo: usize| -> i128 {
        let v = ((word(hi) as u32 as u64) << 32) | u64::from(word(lo) as u32);
        if signed {
            i128::from(v as i64)
        } else {
            i128::from(v)
        }
    };
    let c = i128::from(cin);
    let r = match op {
        Op::Add64 => pair(2, 1) + pair(4, 3) + c,
        Op::Uadd6432 | Op::Sadd6432 => pair(2, 1) + word(3) + c,
        Op::Umadd32 | Op::Smadd32 => word(1) * word(2) + word(3) + c,
        _ => word(1) * word(2) + pair(4, 3) + c,
    };
    let carry = if signed {
        r < i128::from(i64::MIN) || r > i128::from(i64::MAX)
    } else {
        r < 0 || r > i128::from(u64::MAX)
    };
    (r as u32, (r >> 32) as u32, carry)
}

fn test(op: Op, ty: TestType, a: u32, ea: u8, b: u32, eb: u8) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match ty {
        TestType::F32 => {
            let y = if matches!(op, Op::Tstz | Op::Tstgz | Op::Tstgez) {
                0
            } else {
                b
            };
            fl::compare(a, y)
        }
        _ => {
            let (w, s) = match ty {
                TestType::U32 => (32, false),
                TestType::S32 => (32, true),
                TestType::U16 => (16, false),
                TestType::S16 => (16, true),
                TestType::U8 => (8, false),
                _ => (8, true),
            };
            let x = element(a, ea, w, s);
            let y = if matches!(op, Op::Tstz | Op::Tstgz | Op::Tstgez) {
                0
            } else {
                element(b, eb, w, s)
            };
            Some(x.cmp(&y))
        }
    };
    match (op, ord) {
        (Op::Tstne, None) => true,
        (_, None) => false,
        (Op::Tstz | Op::Tste, Some(o)) => o == Ordering::Equal,
        (Op::Tstgz | Op::Tstg, Some(o)) => o == Ordering::Greater,
        (Op::Tstgez | Op::Tstge | Op::Tstmax, Some(o)) => o != Ordering::Less,
        (Op::Tstne, Some(o)) => o != Ordering::Equal,
        (Op::Tstl | Op::Tstmin, Some(o)) => o == Ordering::Less,
        (Op::Tstle, Some(o)) => o != Ordering::Greater,
        _ => false,
    }
}

fn format_width(f: PackFormat) -> (u32, bool) {
    match f {
        PackFormat::U8888 => (8, false),
        PackFormat::S8888 => (8, true),
        PackFormat::U1616 => (16, false),
        PackFormat::S1616 => (16, true),
        PackFormat::U32 => (32, false),
        PackFormat::S32 => (32, true),
        PackFormat::F32 => (32, false),
    }
}

/// PCK: float to the format; an 8- or 16-bit result is repeated in every element of the word
/// (the reference, .E0: a destination element mask "broadcasts the result to these elements").
fn pack(ins: &Instr, v: u32) -> u32 {
    let f = ins.mods.format.unwrap();
    let rz = ins.mods.roundzero;
    let (width, signed) = format_width(f);
    if f == PackFormat::F32 {
        return v;
    }
    let (lo, hi, scale) = match (width, signed, ins.mods.scale) {
        (32, false, _) => (0, i64::from(u32::MAX), 1),
        (32, true, _) => (i64::from(i32::MIN), i64::from(i32::MAX), 1),
        (w, false, true) => (0, (1 << w) - 1, (1 << w) - 1),
        (w, false, false) => (0, (1 << w) - 1, 1),
        (w, true, true) => (
            -((1 << (w - 1)) - 1),
            (1 << (w - 1)) - 1,
            (1 << (w - 1)) - 1,
        ),
        (w, true, false) => (-(1 << (w - 1)), (1 << (w - 1)) - 1, 1),
    };
    let x = fl::float_to_int(v, lo, hi, scale, rz) as u32;
    match width {
        8 => (x & 0xFF) * 0x0101_0101,
        16 => (x & 0xFFFF) * 0x0001_0001,
        _ => x,
    }
}

/// UNPCK: the selected element of the format to float.
fn unpack(ins: &Instr, v: u32, m: Mods) -> u32 {
    let f = ins.mods.format.unwrap();
    let rz = ins.mods.roundzero;
    let (width, signed) = format_width(f);
    if f == PackFormat::F32 {
        return v;
    }
    let x = element(v, m.element(), width, signed);
    if width == 32 || !ins.mods.scale {
        return fl::int_to_float(x, rz);
    }
    let d = if signed {
        (1i64 << (width - 1)) - 1
    } else {
        (1i64 << width) - 1
    };
    fl::ratio_to_float(x.max(-d), d, rz)
}

/// Element selections an instruction's formats or types do not have, and the scope's limits
/// of PCK/UNPCK (`.scale` on 32-bit formats).
fn check_elements(ins: &Instr) -> Result<(), ExecError> {
    let info = ins.info.unwrap();
    match info.op {
        Op::Pck | Op::Unpck => {
            let f = ins.mods.format.unwrap();
            let (width, _) = format_width(f);
            if width == 32 && ins.mods.scale {
                return Err(ExecError::NotSupported {
                    name: format!("{}.{}.scale", info.name, f.name()),
                    span: ins.span,
                });
            }
            if info.op == Op::Unpck {
                let e = ins.operands[1].mods().element();
                if u32::from(e) * width >= 32 {
                    return Err(invalid(
                        ins.span,
                        format!("unpck.{} has no element e{e}", f.name()),
                    ));
                }
            }
        }
        _ if info.unit == Unit::Test => {
            let width = match ins.mods.ty {
                Some(TestType::U8 | TestType::S8) => 8,
                Some(TestType::U16 | TestType::S16) => 16,
                _ => 32,
            };
            for o in ins.operands.iter().skip(2) {
                let e = o.mods().element();
                if u32::from(e) * width >= 32 {
                    return Err(invalid(
                        ins.span,
                        format!("a {width}-bit test has no element e{e}"),
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}
