//! THEIA lowering shared by both hosts: every instruction becomes a sequence of
//! [`Emit`] calls (integer operations on eight 64-bit scratch registers, loads and stores
//! of the context, branches), and each backend (`x64.rs`, `a64.rs`) encodes those.
//!
//! Per instruction: the budget check, the operands staged into the context (`OPA`, `OPB`;
//! the forwarding rule of the rtl profile decided statically where the previous instruction
//! is known, at run time at leaders), the result components computed one by one into `RES`,
//! then the commit (result flops, last destination, register write if the profile allows
//! it) and the step count. Operations the generated code does not perform (I/O, stalls,
//! undefined codes, register errors) leave to the host, which runs the interpreter there.

use super::ctx::*;
use picajit_interp::theia::arith::ONE;
use picajit_interp::theia::exec::{completes, Code, IMEM_BIT};
use picajit_interp::theia::table::{Component, Sem, Test, RTL_SWIZZLES, SWIZZLES};
use picajit_interp::theia::{Profile, Word};
use std::collections::{BTreeMap, BTreeSet};

/// A scratch register, 0..8.
pub type R = u8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alu {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Mul,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    Shl,
    Shr,
    Sar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    Ugt,
    Slt,
    Sgt,
    Sle,
    Sge,
}

/// What a backend provides. `wide` selects 64-bit operations; 32-bit ones zero-extend their
/// result to 64 bits.
pub trait Emit {
    type Label: Copy;
    fn label(&mut self) -> Self::Label;
    fn bind(&mut self, l: Self::Label);
    fn jump(&mut self, l: Self::Label);
    /// `d` = the zero-extended 32-bit word at context offset `off`.
    fn load32(&mut self, d: R, off: u32);
    fn store32(&mut self, off: u32, s: R);
    fn store32_imm(&mut self, off: u32, v: u32);
    fn imm(&mut self, d: R, v: u64);
    fn alu(&mut self, op: Alu, wide: bool, d: R, a: R, b: R);
    fn shift(&mut self, op: Shift, wide: bool, d: R, a: R, n: u8);
    /// `d` = the low 32 bits of `a`, sign-extended.
    fn sext32(&mut self, d: R, a: R);
    /// `d` = `a / b` (64-bit unsigned; `b` is not zero).
    fn udiv(&mut self, d: R, a: R, b: R);
    fn branch(&mut self, c: Cond, wide: bool, a: R, b: R, l: Self::Label);
    /// Branch when the 32-bit context word at `off` differs from `v`.
    fn branch_mem32_ne(&mut self, off: u32, v: u32, l: Self::Label);
    /// `r -= 1`, branch when not zero (64-bit).
    fn dec_branch_nz(&mut self, r: R, l: Self::Label);
    /// Branch when the step count has reached the budget.
    fn branch_budget(&mut self, l: Self::Label);
    fn count_step(&mut self);
    /// Store the step count and return `kind` (see [`super::ctx`]).
    fn exit(&mut self, kind: u32);
    /// The prologue: set up, load the entry address into scratch 0, jump to `dispatch`.
    fn prologue(&mut self, dispatch: Self::Label);
    /// The shared epilogue every [`Emit::exit`] jumps to.
    fn epilogue(&mut self);
}

/// Where the code goes after one instruction, seen statically.
fn branch_target(w: Word, sem: Sem) -> Option<u16> {
    match sem {
        Sem::Jump(..) | Sem::Jmp | Sem::Call => Some(w.dst),
        _ => None,
    }
}

/// Operations the host performs with the interpreter, one instruction at a time.
fn is_io(sem: Sem) -> bool {
    matches!(sem, Sem::OmWrite | Sem::TmRead)
}

/// Which operands an operation reads: (A from source 1, B).
fn reads(sem: Sem) -> (bool, bool) {
    match sem {
        Sem::Nop | Sem::DebugPrint | Sem::Zero | Sem::Lea | Sem::Jmp | Sem::Call | Sem::Return => {
            (false, false)
        }
        Sem::SetX | Sem::SetY | Sem::SetZ | Sem::Swizzle3D | Sem::Ret => (false, true),
        Sem::Copy
        | Sem::Mag
        | Sem::Inc
        | Sem::IncX
        | Sem::IncY
        | Sem::IncZ
        | Sem::Dec
        | Sem::MulP
        | Sem::Frac
        | Sem::IntP
        | Sem::Neg
        | Sem::Unscale
        | Sem::Rescale
        | Sem::OmWrite
        | Sem::TmRead => (true, false),
        _ => (true, true),
    }
}

/// rtl: whether `next`, run right after `w`, reads a row `w` writes through another address
/// than `w`'s destination field, and so sees the row's old value (`exec::Cursor::stale`).
/// The code leaves to the interpreter before such a `w` (conservatively: any operation that
/// may write), which tracks the old value; ordinary programs never alias addresses.
pub fn reads_stale(profile: Profile, w: Word, next: Word) -> bool {
    if profile != Profile::Rtl {
        return false;
    }
    let Some(info) = w.info() else { return false };
    let Some(next_info) = next.info() else {
        return false;
    };
    let row = (w.dst & 0x7F) as usize;
    if matches!(info.sem, Sem::Jump(..) | Sem::Jmp | Sem::Call | Sem::Ret) || !profile.writable(row)
    {
        return false;
    }
    let (ra, rb) = match next_info.sem {
        // the host's interpreter reads OMWRITE's data too
        Sem::OmWrite => (true, true),
        s => reads(s),
    };
    let mut srcs = Vec::new();
    if ra && !next.is_imm() {
        srcs.push(next.src1);
    }
    if rb {
        srcs.push(if next.is_imm() { next.dst } else { next.src2 });
    }
    srcs.iter()
        .any(|&a| a != w.dst && (a & 0x7F) as usize == row)
}

/// One compiled code region (instruction memory or ROM).
struct Region {
    base: u16,
    words: Vec<u64>,
}

/// The instructions the dispatcher may enter and the ones that start with an unknown
/// previous instruction.
pub fn leaders(code: &Code, entries: &[u16]) -> BTreeSet<u16> {
    let mut l: BTreeSet<u16> = entries.iter().copied().collect();
    for (base, words) in [(IMEM_BIT, &code.imem), (0u16, &code.rom)] {
        for (i, &raw) in words.iter().enumerate() {
            let pc = base.wrapping_add(i as u16);
            let w = Word::decode(raw);
            let Some(info) = w.info() else { continue };
            if let Some(t) = branch_target(w, info.sem) {
                l.insert(t);
            }
            if info.sem == Sem::Call || is_io(info.sem) {
                l.insert(pc.wrapping_add(1));
            }
        }
    }
    l
}

/// Lowers a whole program.
pub struct Lowering<'a, E: Emit> {
    e: &'a mut E,
    profile: Profile,
    labels: BTreeMap<u16, E::Label>,
    leaders: BTreeSet<u16>,
    /// rtl: the leaders that hold RETURN. Reached from a RET (or as a run's first
    /// instruction) such a RETURN never reports done (`exec::step`): entered from the
    /// dispatcher or a RET, the interpreter runs it.
    return_leaders: Vec<u16>,
    /// rtl: the addresses that hold CALL.
    call_words: BTreeSet<u16>,
    dispatch: E::Label,
}

impl<'a, E: Emit> Lowering<'a, E> {
    pub fn program(e: &'a mut E, profile: Profile, code: &Code, entries: &[u16]) {
        let regions = [
            Region {
                base: IMEM_BIT,
                words: code.imem.clone(),
            },
            Region {
                base: 0,
                words: code.rom.clone(),
            },
        ];
        let mut labels = BTreeMap::new();
        for r in &regions {
            for i in 0..r.words.len() {
                labels.insert(r.base.wrapping_add(i as u16), e.label());
            }
        }
        let leaders = leaders(code, entries);
        let return_leaders = if profile == Profile::Rtl {
            leaders
                .iter()
                .copied()
                .filter(|&a| {
                    code.fetch(a)
                        .and_then(|raw| Word::decode(raw).info())
                        .is_some_and(|i| i.sem == Sem::Return)
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut call_words = BTreeSet::new();
        if profile == Profile::Rtl {
            for r in &regions {
                for (i, &raw) in r.words.iter().enumerate() {
                    if Word::decode(raw).info().is_some_and(|i| i.sem == Sem::Call) {
                        call_words.insert(r.base.wrapping_add(i as u16));
                    }
                }
            }
        }
        let dispatch = e.label();
        let mut lw = Lowering {
            e,
            profile,
            labels,
            leaders,
            return_leaders,
            call_words,
            dispatch,
        };
        lw.e.prologue(dispatch);
        for r in &regions {
            let mut prev_dst: Option<u16> = None;
            for (i, &raw) in r.words.iter().enumerate() {
                let pc = r.base.wrapping_add(i as u16);
                let w = Word::decode(raw);
                let known = if lw.leaders.contains(&pc) {
                    None
                } else {
                    prev_dst
                };
                let l = lw.labels[&pc];
                lw.e.bind(l);
                let next = r.words.get(i + 1).map(|&n| Word::decode(n));
                let ret_then = profile == Profile::Rtl
                    && w.info().is_some_and(|i| i.sem == Sem::Ret)
                    && next
                        .and_then(|n| n.info())
                        .is_some_and(|i| matches!(i.sem, Sem::Return | Sem::Call));
                match next {
                    // the interpreter tracks the old value of the row (`reads_stale`), ends
                    // the run at a RET followed by RETURN and takes the return address from
                    // a CALL after a RET (`exec::step`)
                    Some(n) if reads_stale(profile, w, n) || ret_then => {
                        lw.exit_at(pc, EXIT_TO_END)
                    }
                    _ => lw.instruction(pc, w, known),
                }
                prev_dst = Some(w.dst);
            }
            if !r.words.is_empty() {
                // Falling off the end: the interpreter reports it.
                let end = r.base.wrapping_add(r.words.len() as u16);
                lw.exit_at(end, EXIT_TO_END);
            }
        }
        // The dispatcher: scratch 0 holds a code address.
        lw.e.bind(dispatch);
        // A RETURN at an entry starts the run here: the interpreter reports that it never
        // reports done (`exec::step`). (RETs to a RETURN leave before the dispatcher; a
        // RETURN after I/O resumes a run, with steps counted.)
        let entry_returns: Vec<u16> = lw
            .return_leaders
            .iter()
            .copied()
            .filter(|a| entries.contains(a))
            .collect();
        let leaders: Vec<u16> = lw.leaders.iter().copied().collect();
        let mut return_exits = Vec::new();
        for a in leaders {
            if let Some(&l) = lw.labels.get(&a) {
                let l = if entry_returns.contains(&a) {
                    let x = lw.e.label();
                    return_exits.push((a, x));
                    x
                } else {
                    l
                };
                lw.e.imm(1, a as u64);
                lw.e.branch(Cond::Eq, false, 0, 1, l);
            }
        }
        // Not a leader or not loaded: the interpreter goes on from there.
        lw.e.store32(PC, 0);
        lw.e.exit(EXIT_TO_END);
        for (a, x) in return_exits {
            lw.e.bind(x);
            lw.e.store32_imm(PC, a as u32);
            lw.e.exit(EXIT_TO_END);
        }
        lw.e.epilogue();
    }

    /// Leaves to the host at `pc` (jumped_from: none).
    fn exit_at(&mut self, pc: u16, kind: u32) {
        self.e.store32_imm(PC, pc as u32);
        self.e.store32_imm(JUMPED_FROM, NO_JUMP);
        self.e.exit(kind);
    }

    fn instruction(&mut self, pc: u16, w: Word, known: Option<u16>) {
        let Some(info) = w.info() else {
            return self.exit_at(pc, EXIT_TO_END);
        };
        let sem = info.sem;
        if !completes(self.profile, sem, info.rtl) {
            return self.exit_at(pc, EXIT_TO_END);
        }
        if is_io(sem) {
            return self.exit_at(pc, EXIT_ONE);
        }
        // Register addresses the manual profile does not have: the interpreter reports them.
        let (ra, rb) = reads(sem);
        if self.profile == Profile::Manual {
            let mut used = Vec::new();
            if ra && !w.is_imm() {
                used.push(w.src1);
            }
            if rb {
                used.push(if w.is_imm() { w.dst } else { w.src2 });
            }
            let writes = !matches!(
                sem,
                Sem::Nop | Sem::Jump(..) | Sem::Jmp | Sem::Call | Sem::Ret | Sem::Return
            );
            if writes || sem == Sem::MulP {
                used.push(w.dst);
            }
            if used.iter().any(|&a| a >= 132) {
                return self.exit_at(pc, EXIT_TO_END);
            }
        }
        let target = branch_target(w, sem);
        // rtl: a CALL that a taken jump presents takes the jump's address + 2 as its return
        // address (`exec::step`); the interpreter runs such jumps
        let target_label = target
            .filter(|t| !self.call_words.contains(t))
            .and_then(|t| self.labels.get(&t).copied());
        let budget_exit = self.e.label();
        let start = self.e.label();
        self.e.branch_budget(budget_exit);
        self.e.jump(start);
        self.e.bind(budget_exit);
        self.exit_at(pc, EXIT_TO_END);
        self.e.bind(start);

        // Where the operands are read from.
        let abase = if ra && !w.is_imm() {
            self.stage(OPA, w.src1, known)
        } else {
            OPA
        };
        let bbase = if rb {
            self.stage(OPB, if w.is_imm() { w.dst } else { w.src2 }, known)
        } else {
            OPB
        };
        let imm = w.imm();
        match sem {
            Sem::Jump(c, t) => {
                let taken = self.e.label();
                let not_taken = self.e.label();
                self.decide(c, t, abase, bbase, taken, not_taken);
                self.e.bind(taken);
                match target_label {
                    None => self.exit_at(pc, EXIT_TO_END),
                    Some(tl) => {
                        self.commit_zero(w.dst);
                        self.e.count_step();
                        self.e.jump(tl);
                    }
                }
                self.e.bind(not_taken);
                self.commit_zero(w.dst);
                self.e.count_step();
                return;
            }
            Sem::Jmp | Sem::Call => {
                let Some(tl) = target_label else {
                    return self.exit_at(pc, EXIT_TO_END);
                };
                if sem == Sem::Call {
                    self.e.store32_imm(RETURN_ADDR, pc.wrapping_add(1) as u32);
                }
                self.commit_zero(w.dst);
                self.e.count_step();
                self.e.jump(tl);
                return;
            }
            _ => {}
        }
        self.compute(sem, w, pc, imm, abase, bbase);
        let writes = match sem {
            Sem::Nop | Sem::Ret => false,
            Sem::Return => self.profile == Profile::Rtl,
            _ => true,
        };
        self.commit(w.dst, writes);
        self.e.count_step();
        match sem {
            Sem::Return => {
                self.e.store32_imm(EXIT_ARG, imm & 1);
                self.e.exit(EXIT_RETURNED);
            }
            Sem::Ret => {
                self.e.load32(0, RETURN_ADDR);
                self.e.store32_imm(JUMPED_FROM, pc as u32);
                // returning to a RETURN: the interpreter reports the stall
                let exits: Vec<(u16, E::Label)> = self
                    .return_leaders
                    .clone()
                    .into_iter()
                    .map(|a| (a, self.e.label()))
                    .collect();
                let d = self.dispatch;
                for &(a, l) in &exits {
                    self.e.imm(1, a as u64);
                    self.e.branch(Cond::Eq, false, 0, 1, l);
                }
                self.e.jump(d);
                for (a, l) in exits {
                    self.e.bind(l);
                    self.e.store32_imm(PC, a as u32);
                    self.e.exit(EXIT_TO_END);
                }
            }
            _ => {}
        }
    }

    /// Where a register operand's three components are read from: straight from the register
    /// row or the result flops when that is known at compile time, otherwise (a leader in the
    /// rtl profile) copied into the context at `stage_off` by a run-time forwarding test.
    fn stage(&mut self, stage_off: u32, addr: u16, known: Option<u16>) -> u32 {
        match self.profile {
            Profile::Manual => REGS + addr as u32 * 12,
            Profile::Rtl => {
                let row = (addr & 0x7F) as u32;
                match known {
                    Some(prev) if prev == addr => LAST_RESULT,
                    Some(_) => REGS + row * 12,
                    None => {
                        let not_fwd = self.e.label();
                        let done = self.e.label();
                        self.e.branch_mem32_ne(LAST_DST, addr as u32, not_fwd);
                        for c in 0..3 {
                            self.e.load32(0, LAST_RESULT + c * 4);
                            self.e.store32(stage_off + c * 4, 0);
                        }
                        self.e.jump(done);
                        self.e.bind(not_fwd);
                        for c in 0..3 {
                            self.e.load32(0, REGS + row * 12 + c * 4);
                            self.e.store32(stage_off + c * 4, 0);
                        }
                        self.e.bind(done);
                        stage_off
                    }
                }
            }
        }
    }

    /// Result flops, last destination and (if `writes` and the profile allows) the register.
    fn commit(&mut self, dst: u16, writes: bool) {
        let row = self.profile.row(dst);
        let write_row = row.filter(|&r| writes && self.profile.writable(r));
        for c in 0..3 {
            self.e.load32(0, RES + c * 4);
            self.e.store32(LAST_RESULT + c * 4, 0);
            if let Some(r) = write_row {
                self.e.store32(REGS + r as u32 * 12 + c * 4, 0);
            }
        }
        self.e.store32_imm(LAST_DST, dst as u32);
    }

    fn commit_zero(&mut self, dst: u16) {
        for c in 0..3 {
            self.e.store32_imm(LAST_RESULT + c * 4, 0);
        }
        self.e.store32_imm(LAST_DST, dst as u32);
    }

    /// Branches to `taken` or `not_taken` for a conditional jump on staged A and B.
    fn decide(
        &mut self,
        c: Component,
        t: Test,
        abase: u32,
        bbase: u32,
        taken: E::Label,
        not_taken: E::Label,
    ) {
        let c = c as u32;
        self.e.load32(0, abase + c * 4);
        self.e.load32(1, bbase + c * 4);
        let e = &mut *self.e;
        if self.profile == Profile::Manual {
            let cond = match t {
                Test::Greater => Cond::Sgt,
                Test::Less => Cond::Slt,
                Test::Equal => Cond::Eq,
                Test::NotEqual => Cond::Ne,
                Test::GreaterEqual => Cond::Sge,
                Test::LessEqual => Cond::Sle,
            };
            e.branch(cond, false, 0, 1, taken);
            e.jump(not_taken);
            return;
        }
        // rtl: greater is signed; equal compares magnitudes: x == y or x == -y.
        e.imm(2, 0);
        e.alu(Alu::Sub, false, 2, 2, 1); // -y
        match t {
            Test::Greater => e.branch(Cond::Sgt, false, 0, 1, taken),
            Test::Less => e.branch(Cond::Sle, false, 0, 1, taken),
            Test::Equal => {
                e.branch(Cond::Eq, false, 0, 1, taken);
                e.branch(Cond::Eq, false, 0, 2, taken);
            }
            Test::NotEqual => {
                e.branch(Cond::Eq, false, 0, 1, not_taken);
                e.branch(Cond::Eq, false, 0, 2, not_taken);
                e.jump(taken);
            }
            Test::GreaterEqual => {
                e.branch(Cond::Sgt, false, 0, 1, taken);
                e.branch(Cond::Eq, false, 0, 1, taken);
                e.branch(Cond::Eq, false, 0, 2, taken);
            }
            Test::LessEqual => {
                e.branch(Cond::Sle, false, 0, 1, taken);
                e.branch(Cond::Eq, false, 0, 2, taken);
            }
        }
        e.jump(not_taken);
    }

    /// Computes the result components into `RES`.
    fn compute(&mut self, sem: Sem, w: Word, pc: u16, imm: u32, abase: u32, bbase: u32) {
        let rtl = self.profile == Profile::Rtl;
        let e = &mut *self.e;
        let a = |c: u32| abase + c * 4;
        let b = |c: u32| bbase + c * 4;
        let res = |c: u32| RES + c * 4;
        match sem {
            Sem::Nop | Sem::DebugPrint | Sem::Zero => {
                for c in 0..3 {
                    e.store32_imm(res(c), 0);
                }
            }
            Sem::Add | Sem::Sub => {
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.load32(1, b(c));
                    add_sub(e, rtl, sem == Sem::Sub, 0, 0, 1);
                    e.store32(res(c), 0);
                }
            }
            Sem::Inc | Sem::Dec | Sem::IncX | Sem::IncY | Sem::IncZ => {
                for c in 0..3 {
                    let inc = match sem {
                        Sem::Inc | Sem::Dec => ONE,
                        Sem::IncX if c == 0 => ONE,
                        Sem::IncY if c == 1 => ONE,
                        Sem::IncZ if c == 2 => ONE,
                        _ => 0,
                    };
                    e.load32(0, a(c));
                    e.imm(1, inc as u64);
                    add_sub(e, rtl, sem == Sem::Dec, 0, 0, 1);
                    e.store32(res(c), 0);
                }
            }
            Sem::Div => {
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.load32(1, b(c));
                    div(e, 0, 0, 1);
                    e.store32(res(c), 0);
                }
            }
            Sem::Mul | Sem::IMul => {
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.load32(1, b(c));
                    mul(e, 0, 0, 1, sem == Sem::IMul);
                    e.store32(res(c), 0);
                }
            }
            Sem::Dot | Sem::Mag => {
                // 64-bit sum of the three products in scratch 7
                e.imm(7, 0);
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.load32(1, if sem == Sem::Mag { a(c) } else { b(c) });
                    mul(e, 0, 0, 1, false);
                    e.alu(Alu::Add, true, 7, 7, 0);
                }
                if sem == Sem::Mag {
                    sqrt(e, 0, 7);
                } else {
                    narrow(e, rtl, 0, 7);
                }
                for c in 0..3 {
                    e.store32(res(c), 0);
                }
            }
            Sem::Cross => {
                for (c, (p, q)) in [((1, 2), (2, 1)), ((2, 0), (0, 2)), ((0, 1), (1, 0))]
                    .into_iter()
                    .enumerate()
                {
                    e.load32(0, a(p.0));
                    e.load32(1, b(p.1));
                    mul(e, 7, 0, 1, false);
                    e.load32(0, a(q.0));
                    e.load32(1, b(q.1));
                    mul(e, 0, 0, 1, false);
                    e.alu(Alu::Sub, true, 7, 7, 0);
                    narrow(e, rtl, 0, 7);
                    e.store32(res(c as u32), 0);
                }
            }
            Sem::Copy => {
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.store32(res(c), 0);
                }
            }
            Sem::MulP => {
                e.load32(0, a(0));
                e.load32(1, a(1));
                mul(e, 7, 0, 1, false);
                e.store32(res(2), 7);
                if rtl {
                    for c in 0..2 {
                        e.load32(0, a(c));
                        e.store32(res(c), 0);
                    }
                } else {
                    for c in 0..2 {
                        e.load32(0, REGS + w.dst as u32 * 12 + c * 4);
                        e.store32(res(c), 0);
                    }
                }
            }
            Sem::Mod => {
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.load32(1, b(c));
                    e.imm(2, ONE as u64);
                    e.alu(Alu::Sub, false, 1, 1, 2);
                    e.alu(Alu::And, false, 0, 0, 1);
                    e.store32(res(c), 0);
                }
            }
            Sem::Frac | Sem::IntP => {
                let m = if sem == Sem::Frac {
                    ONE - 1
                } else {
                    !(ONE - 1)
                };
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.imm(1, m as u64);
                    e.alu(Alu::And, false, 0, 0, 1);
                    e.store32(res(c), 0);
                }
            }
            Sem::Neg => {
                for c in 0..3 {
                    e.load32(1, a(c));
                    e.imm(0, 0);
                    e.alu(Alu::Sub, false, 0, 0, 1);
                    e.store32(res(c), 0);
                }
            }
            Sem::Unscale | Sem::Rescale => {
                let op = match (sem, rtl) {
                    (Sem::Rescale, _) => Shift::Shl,
                    (_, true) => Shift::Shr,
                    _ => Shift::Sar,
                };
                for c in 0..3 {
                    e.load32(0, a(c));
                    e.shift(op, false, 0, 0, 17);
                    e.store32(res(c), 0);
                }
            }
            Sem::XchangeX | Sem::XchangeY | Sem::XchangeZ => {
                let k = match sem {
                    Sem::XchangeX => 0,
                    Sem::XchangeY => 1,
                    _ => 2,
                };
                for c in 0..3 {
                    e.load32(0, if c == k { b(c) } else { a(c) });
                    e.store32(res(c), 0);
                }
            }
            Sem::Lea => {
                // the interpreter's reading: the fetch unit's pointer, address + 1
                for c in 0..3 {
                    e.store32_imm(res(c), u32::from(pc.wrapping_add(1)));
                }
            }
            Sem::Return => {
                for c in 0..3 {
                    e.store32_imm(res(c), imm);
                }
            }
            Sem::SetX | Sem::SetY | Sem::SetZ | Sem::Ret => {
                let k = match sem {
                    Sem::SetY => 1,
                    Sem::SetZ => 2,
                    _ => 0,
                };
                for c in 0..3 {
                    if c == k {
                        e.store32_imm(res(c), imm);
                    } else {
                        e.load32(0, b(c));
                        e.store32(res(c), 0);
                    }
                }
            }
            Sem::Swizzle3D => {
                let known = if rtl {
                    RTL_SWIZZLES.contains(&imm)
                } else {
                    (imm as usize) < SWIZZLES.len()
                };
                for c in 0..3 {
                    if known {
                        let src = SWIZZLES[imm as usize].1[c as usize] as u32;
                        e.load32(0, b(src));
                        e.store32(res(c), 0);
                    } else {
                        e.store32_imm(res(c), 0);
                    }
                }
            }
            Sem::Jump(..) | Sem::Jmp | Sem::Call | Sem::OmWrite | Sem::TmRead => {
                unreachable!("handled by the caller")
            }
        }
    }
}

/// `d` = ADD/SUB of 32-bit `x`, `y` (rtl: exact 64-bit sum, sign over low 31 bits).
/// Uses scratch 0-3.
fn add_sub<E: Emit>(e: &mut E, rtl: bool, sub: bool, d: R, x: R, y: R) {
    let op = if sub { Alu::Sub } else { Alu::Add };
    if rtl {
        e.sext32(2, x);
        e.sext32(3, y);
        e.alu(op, true, 2, 2, 3);
        narrow(e, true, d, 2);
    } else {
        e.alu(op, false, d, x, y);
    }
}

/// `d` = the 64-bit sum `s` narrowed to a component: rtl bit 63 over bits 30:0, manual the
/// low 32 bits. Clobbers scratch 4 and 5 (and `s` is kept).
fn narrow<E: Emit>(e: &mut E, rtl: bool, d: R, s: R) {
    if rtl {
        e.shift(Shift::Shr, true, 4, s, 63);
        e.shift(Shift::Shl, false, 4, 4, 31);
        e.imm(5, 0x7FFF_FFFF);
        e.alu(Alu::And, false, 5, s, 5);
        e.alu(Alu::Or, false, d, 4, 5);
    } else {
        e.imm(5, 0xFFFF_FFFF);
        e.alu(Alu::And, true, d, s, 5);
    }
}

/// `d` = |x| as the RTL's units take it (32-bit two's-complement negation when bit 31 is set).
/// Clobbers scratch 6.
fn magnitude<E: Emit>(e: &mut E, d: R, x: R) {
    e.sext32(6, x);
    e.shift(Shift::Sar, true, 6, 6, 63); // 0 or all ones
    e.alu(Alu::Xor, false, d, x, 6);
    e.alu(Alu::Sub, false, d, d, 6);
}

/// `d` (64-bit) = `mul_rtl(x, y, unscaled)`, the closed form of
/// `picajit_interp::theia::arith::mul_rtl_closed`. `x`, `y` are clobbered; uses scratch 2-6.
fn mul<E: Emit>(e: &mut E, d: R, x: R, y: R, unscaled: bool) {
    // sign: bit 31 of x ^ y, as 0 or all ones in scratch 2
    e.alu(Alu::Xor, false, 2, x, y);
    e.sext32(2, 2);
    e.shift(Shift::Sar, true, 2, 2, 63);
    magnitude(e, x, x);
    magnitude(e, y, y);
    e.alu(Alu::Mul, true, 3, x, y); // exact product of the magnitudes
    e.imm(6, 0x5555_5555);
    e.alu(Alu::And, true, 4, y, 6); // lo
    e.shift(Shift::Shr, true, 5, y, 1);
    e.alu(Alu::And, true, 5, 5, 6); // hi
    e.alu(Alu::And, true, 4, 4, 5); // m3 = lo & hi
    e.alu(Alu::Xor, true, 5, 5, 4); // m2 = hi ^ m3
    e.shift(Shift::Shr, true, 6, x, 31); // k2
    e.alu(Alu::Mul, true, 5, 5, 6);
    e.shift(Shift::Shl, true, 6, x, 1);
    e.alu(Alu::Add, true, 6, 6, x);
    e.shift(Shift::Shr, true, 6, 6, 32); // k3
    e.alu(Alu::Mul, true, 4, 4, 6);
    e.alu(Alu::Add, true, 4, 4, 5);
    e.shift(Shift::Shl, true, 4, 4, 32);
    e.alu(Alu::Sub, true, 3, 3, 4);
    if !unscaled {
        e.shift(Shift::Shr, true, 3, 3, 17);
    }
    // conditional negation: (p ^ s) - s
    e.alu(Alu::Xor, true, 3, 3, 2);
    e.alu(Alu::Sub, true, d, 3, 2);
}

/// `d` = `div_rtl(x, y)`; clobbers `x`, `y`, scratch 2-6.
fn div<E: Emit>(e: &mut E, d: R, x: R, y: R) {
    e.alu(Alu::Xor, false, 2, x, y);
    e.sext32(2, 2);
    e.shift(Shift::Sar, true, 2, 2, 63); // sign mask
    magnitude(e, x, x);
    magnitude(e, y, y);
    e.shift(Shift::Shl, true, x, x, 17);
    let zero = e.label();
    let done = e.label();
    e.imm(3, 0);
    e.branch(Cond::Eq, true, y, 3, zero);
    e.udiv(3, x, y);
    e.jump(done);
    e.bind(zero);
    e.imm(3, 0x0FFF_FFFF);
    e.bind(done);
    e.imm(4, 0x7FFF_FFFF);
    e.alu(Alu::And, false, 3, 3, 4);
    e.alu(Alu::Xor, false, 3, 3, 2);
    e.alu(Alu::Sub, false, d, 3, 2);
}

/// `d` = `sqrt_rtl(s)` (`s` 64-bit, kept in scratch 7 and clobbered). The first of the RTL's
/// 33 iterations (group 32, whose operand bits are x >> 64 = 0) leaves every register at 0, so
/// the loop runs the remaining 32, taking the operand's bits two at a time from the top.
/// Uses scratch 0-6.
fn sqrt<E: Emit>(e: &mut E, d: R, s: R) {
    // 7: y = s << 17; 1: sum; 2: diff; 3: result; 4: bit; 5: counter; 6: temp
    e.shift(Shift::Shl, true, s, s, 17);
    e.imm(1, 0);
    e.imm(2, 0);
    e.imm(3, 0);
    e.imm(4, 0x8000_0000);
    e.imm(5, 32);
    let top = e.label();
    let keep = e.label();
    let next = e.label();
    e.bind(top);
    e.shift(Shift::Shl, false, 1, 1, 1);
    e.imm(6, 1);
    e.alu(Alu::Add, false, 1, 1, 6); // sum = (sum << 1) + 1
    e.shift(Shift::Shr, true, 6, s, 62);
    e.shift(Shift::Shl, true, s, s, 2);
    e.shift(Shift::Shl, false, 2, 2, 2);
    e.alu(Alu::Add, false, 2, 2, 6); // diff = (diff << 2) + bits
    e.branch(Cond::Ugt, false, 1, 2, keep);
    e.alu(Alu::Add, false, 3, 3, 4); // result += 1 << group
    e.alu(Alu::Sub, false, 2, 2, 1); // diff -= sum
    e.imm(6, 1);
    e.alu(Alu::Add, false, 1, 1, 6); // sum += 1
    e.jump(next);
    e.bind(keep);
    e.imm(6, 1);
    e.alu(Alu::Sub, false, 1, 1, 6); // sum -= 1
    e.bind(next);
    e.shift(Shift::Shr, false, 4, 4, 1);
    e.dec_branch_nz(5, top);
    e.alu(Alu::Or, false, d, 3, 3);
}
