//! THEIA lowering shared by both hosts: every instruction becomes a sequence of calls of the
//! host's integer macro-assembler (`crate::host::int`: operations on eight 64-bit scratch
//! registers, loads and stores of the context, branches), over THEIA's register roles and
//! entry frame on that host ([`Target`], implemented in `x64.rs` and `a64.rs`).
//!
//! Per instruction: the operands read from their register rows or the result flops (the
//! forwarding rule of the rtl profile decided statically where the previous instruction is
//! known, by a run-time test at leaders, which stages them into `OPA`/`OPB`), then the result
//! components computed one by one and stored straight to the destination row (when the
//! profile lets the unit write it) and to the result flops (where something reads them, see
//! [`Lowering`]). The budget check and the step count are per block. OMWRITE is queued in
//! the context for the host; TMREAD and operations the generated code does not perform
//! (stalls, undefined codes, register errors) leave to the host.

use super::ctx::*;
use crate::host::int::RegImm::{I, R};
use crate::host::int::Size::{S32, S64};
use crate::host::int::{Alu, Cond, IntMasm, Shift};
use picajit_interp::theia::arith::ONE;
use picajit_interp::theia::exec::{completes, Code, IMEM_BIT};
use picajit_interp::theia::table::{Sem, Test, RTL_SWIZZLES, SWIZZLES};
use picajit_interp::theia::{Profile, Word};
use std::collections::{BTreeMap, BTreeSet};

/// THEIA's registers on one host.
pub struct Roles<G> {
    /// The context block (`super::ctx`); callee-saved.
    pub ctx: G,
    /// The step count (u64); callee-saved.
    pub steps: G,
    /// The budget (u64); callee-saved.
    pub budget: G,
    /// Scratch 0-7 of the instruction sequences.
    pub scratch: [G; 8],
    /// The result cache's slots (`Cache`): registers that nothing but `put_cached` writes.
    pub cache: [G; 3],
    /// The exit code the code returns (the host ABI's return register).
    pub status: G,
}

/// A host THEIA code is generated for: its integer macro-assembler, THEIA's register roles
/// there and the entry frame of the code, an `fn(*mut TheiaCtx) -> u32`.
pub trait Target: IntMasm {
    /// The register roles.
    const ROLES: Roles<Self::Reg>;
    /// The frame: saves the callee-saved registers the roles use and copies the context
    /// pointer to [`Roles::ctx`].
    const FRAME: Self::Frame;
}

/// `d` = the zero-extended 32-bit context word at `off`.
fn load32<E: Target>(e: &mut E, d: E::Reg, off: u32) {
    e.load(S32, d, E::ROLES.ctx, off as i32);
}

/// Stores the low 32 bits of `s` to the context word at `off`.
fn store32<E: Target>(e: &mut E, off: u32, s: E::Reg) {
    e.store(S32, E::ROLES.ctx, off as i32, s);
}

/// Stores `v` to the context word at `off`.
fn store32_imm<E: Target>(e: &mut E, off: u32, v: u32) {
    e.store_imm(S32, E::ROLES.ctx, off as i32, v.into());
}

/// The result cache: which context words (offset) hold the value of which cache slot. The
/// context is always written too; an entry only says that a load of that word may read the
/// slot instead, which saves the store-forwarding latency on chains of dependent instructions.
type Cache = Vec<(u32, u8)>;

/// `d` = the context word at `off`, from its cache slot when one holds it.
fn ld<E: Target>(e: &mut E, cache: &Cache, d: E::Reg, off: u32) {
    match cache.iter().find(|&&(o, _)| o == off) {
        Some(&(_, k)) => e.mov(S32, d, E::ROLES.cache[k as usize]),
        None => load32(e, d, off),
    }
}

/// Forgets the cache entries of the context words a store other than [`put_cached`] writes.
fn stored(cache: &mut Cache, off: u32) {
    cache.retain(|&(o, _)| o != off);
}

/// Stores `s` to the words `offs` and keeps it in slot `k` for later loads of them.
fn put_cached<E: Target>(e: &mut E, cache: &mut Cache, k: u8, s: E::Reg, offs: &[u32]) {
    for &o in offs {
        store32(e, o, s);
    }
    // the slot's old value is no longer any word's value
    cache.retain(|&(o, slot)| slot != k && !offs.contains(&o));
    e.mov(S32, E::ROLES.cache[k as usize], s);
    cache.extend(offs.iter().map(|&o| (o, k)));
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

/// How the code treats one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Compiled.
    Code,
    /// TMREAD: staged and handed to the host ([`EXIT_TMREAD`]).
    TmRead,
    /// Left to the interpreter from here on ([`EXIT_TO_END`]): undefined codes, operations
    /// that stall, register errors of the manual profile, jumps to addresses without code.
    Exit,
}

/// The previous instruction as a straight-line successor sees it (rtl forwarding).
#[derive(Clone, Copy, Debug)]
struct Prev {
    dst: u16,
    /// It wrote its result to the destination row, so the row holds the result flops' value.
    wrote: bool,
}

/// Lowers a whole program.
///
/// Code is emitted in blocks: straight-line runs of compiled instructions that start at a
/// leader or after a transfer and end at a transfer (jump, CALL, RET, RETURN), an OMWRITE,
/// or before a leader or an instruction the code does not perform. At every block boundary
/// the context holds the complete state (registers, result flops, last destination); inside
/// a block the result flops and the last destination are only stored where something reads
/// them, registers are written as the profile allows, and the budget is checked once, for the
/// whole block, at its start (so a block either runs completely or the interpreter runs
/// from its first instruction).
pub struct Lowering<'a, E: Target> {
    e: &'a mut E,
    profile: Profile,
    labels: BTreeMap<u16, E::Label>,
    leaders: BTreeSet<u16>,
    /// rtl: the leaders that hold RETURN. Reached from a RET (or as a run's first
    /// instruction) such a RETURN never reports done (`exec::step`): entered from the
    /// dispatcher at an entry or from a RET, the interpreter runs it.
    return_leaders: Vec<u16>,
    /// rtl: the addresses that hold CALL.
    call_words: BTreeSet<u16>,
    dispatch: E::Label,
    /// The common return every exit jumps to.
    epilogue: E::Label,
    /// Out-of-line exits to the interpreter: (label, address).
    stubs: Vec<(E::Label, u16)>,
    /// Out-of-line full multiplier forms.
    cold: Vec<ColdMul<E::Reg, E::Label>>,
    /// Per register row: known, at this point of straight-line code, to hold the same value
    /// in x, y and z (DOT, MAG and broadcast swizzles produce such rows, and per-component
    /// operations keep them). Forgotten at every leader. Per-component operations on such
    /// operands compute one component and store it three times: exact, since every
    /// component would compute the same function of the same values.
    bcast: Vec<bool>,
    /// The same for the result flops.
    last_bcast: bool,
    /// Result cache (see [`Cache`]): results of the block so far, kept in three host
    /// registers per component. Emptied at the start of every block (a block is entered from
    /// the dispatcher, jumps or after the host, none of which keep the slots); inside a block
    /// every store to a cached word goes through [`put_cached`] or [`stored`].
    cache: Cache,
}

/// A multiplication's full form, emitted after the program: entered at `full` with the
/// operands in `x`, `y`; continues at `done` with the product in `d`.
struct ColdMul<G, L> {
    full: L,
    done: L,
    d: G,
    x: G,
    y: G,
    unscaled: bool,
}

impl<'a, E: Target> Lowering<'a, E> {
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
        let is = |raw: u64, sem: Sem| Word::decode(raw).info().is_some_and(|i| i.sem == sem);
        let return_leaders = if profile == Profile::Rtl {
            leaders
                .iter()
                .copied()
                .filter(|&a| code.fetch(a).is_some_and(|raw| is(raw, Sem::Return)))
                .collect()
        } else {
            Vec::new()
        };
        let mut call_words = BTreeSet::new();
        if profile == Profile::Rtl {
            for r in &regions {
                for (i, &raw) in r.words.iter().enumerate() {
                    if is(raw, Sem::Call) {
                        call_words.insert(r.base.wrapping_add(i as u16));
                    }
                }
            }
        }
        let dispatch = e.label();
        let epilogue = e.label();
        let mut lw = Lowering {
            e,
            profile,
            labels,
            leaders,
            return_leaders,
            call_words,
            dispatch,
            epilogue,
            stubs: Vec::new(),
            cold: Vec::new(),
            bcast: vec![false; ROWS],
            last_bcast: false,
            cache: Vec::new(),
        };
        lw.prologue();
        for r in &regions {
            lw.region(r);
        }
        // Exits of blocks whose budget check failed: the interpreter runs from the block's
        // first instruction, with the state complete in the context.
        for (l, pc) in std::mem::take(&mut lw.stubs) {
            lw.e.bind(l);
            lw.exit_at(pc, EXIT_TO_END);
        }
        for c in std::mem::take(&mut lw.cold) {
            lw.e.bind(c.full);
            mul_full(lw.e, c.d, c.x, c.y, c.unscaled);
            lw.e.jump(c.done);
        }
        // The dispatcher: scratch 0 holds a code address; a binary search over the leaders
        // (the ROM has dozens of jump targets, and every run enters here).
        lw.e.bind(dispatch);
        // A RETURN at an entry starts the run here: the interpreter reports that it never
        // reports done (`exec::step`). (RETs to a RETURN leave before the dispatcher; a
        // RETURN after I/O resumes a run, with steps counted.)
        let mut return_exits = Vec::new();
        let mut targets: Vec<(u16, E::Label)> = Vec::new();
        for &a in &lw.leaders {
            if let Some(&l) = lw.labels.get(&a) {
                if lw.return_leaders.contains(&a) && entries.contains(&a) {
                    let x = lw.e.label();
                    return_exits.push((a, x));
                    targets.push((a, x));
                } else {
                    targets.push((a, l));
                }
            }
        }
        let miss = lw.e.label();
        lw.dispatch_search(&targets, miss);
        // Not a leader or not loaded: the interpreter goes on from there.
        lw.e.bind(miss);
        store32(lw.e, PC, E::ROLES.scratch[0]);
        lw.exit(EXIT_TO_END);
        for (a, x) in return_exits {
            lw.e.bind(x);
            store32_imm(lw.e, PC, a as u32);
            lw.exit(EXIT_TO_END);
        }
        lw.e.bind(epilogue);
        lw.e.ret(&E::FRAME);
    }

    /// The entry: the frame, the step count and budget from the context, the entry address
    /// into scratch 0 for the dispatcher.
    fn prologue(&mut self) {
        let Roles {
            ctx,
            steps,
            budget,
            scratch,
            ..
        } = E::ROLES;
        self.e.enter(&E::FRAME);
        self.e.load(S64, steps, ctx, STEPS as i32);
        self.e.load(S64, budget, ctx, BUDGET as i32);
        load32(self.e, scratch[0], PC);
        self.e.jump(self.dispatch);
    }

    /// Stores the step count and returns `kind` (see [`super::ctx`]).
    fn exit(&mut self, kind: u32) {
        let Roles {
            ctx, steps, status, ..
        } = E::ROLES;
        self.e.store(S64, ctx, STEPS as i32, steps);
        self.e.mov_imm(status, kind.into());
        self.e.jump(self.epilogue);
    }

    fn kind(&self, w: Word) -> Kind {
        let Some(info) = w.info() else {
            return Kind::Exit;
        };
        let sem = info.sem;
        if !completes(self.profile, sem, info.rtl) {
            return Kind::Exit;
        }
        // Register addresses the manual profile does not have: the interpreter reports them.
        if self.profile == Profile::Manual {
            let (ra, rb) = reads(sem);
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
                return Kind::Exit;
            }
        }
        if let Some(t) = branch_target(w, sem) {
            // rtl: a CALL that a taken jump presents takes the jump's address + 2 as its
            // return address (`exec::step`); the interpreter runs such jumps
            if !self.labels.contains_key(&t) || self.call_words.contains(&t) {
                return Kind::Exit;
            }
        }
        if sem == Sem::TmRead {
            return Kind::TmRead;
        }
        Kind::Code
    }

    fn region(&mut self, r: &Region) {
        let words: Vec<Word> = r.words.iter().map(|&raw| Word::decode(raw)).collect();
        let mut kinds: Vec<Kind> = words.iter().map(|&w| self.kind(w)).collect();
        // The interpreter tracks the old value of a row the next instruction reads through
        // another address (`reads_stale`), ends the run at a RET followed by RETURN and takes
        // the return address from a CALL after a RET (`exec::step`).
        for i in 0..words.len().saturating_sub(1) {
            let (w, next) = (words[i], words[i + 1]);
            let ret_then = self.profile == Profile::Rtl
                && w.info().is_some_and(|i| i.sem == Sem::Ret)
                && next
                    .info()
                    .is_some_and(|i| matches!(i.sem, Sem::Return | Sem::Call));
            if ret_then || reads_stale(self.profile, w, next) {
                kinds[i] = Kind::Exit;
            }
        }
        let pc_of = |i: usize| r.base.wrapping_add(i as u16);
        let ends: Vec<bool> = (0..words.len())
            .map(|i| {
                let sem = words[i].info().map(|i| i.sem);
                matches!(
                    sem,
                    Some(
                        Sem::Jump(..)
                            | Sem::Jmp
                            | Sem::Call
                            | Sem::Ret
                            | Sem::Return
                            | Sem::OmWrite
                    )
                ) || i + 1 == words.len()
                    || kinds[i + 1] != Kind::Code
                    || self.leaders.contains(&pc_of(i + 1))
            })
            .collect();
        let mut prev: Option<Prev> = None;
        let mut i = 0;
        while i < words.len() {
            let pc = pc_of(i);
            let l = self.labels[&pc];
            self.e.bind(l);
            let known = if self.leaders.contains(&pc) || i == 0 {
                None
            } else {
                prev
            };
            if known.is_none() {
                self.forget();
            }
            match kinds[i] {
                Kind::Exit => {
                    self.exit_at(pc, EXIT_TO_END);
                    self.forget();
                    prev = None;
                    i += 1;
                }
                Kind::TmRead => {
                    self.budget_check(1, pc);
                    let w = words[i];
                    let base = self.stage(OPA, w.src1, known);
                    if base != OPA {
                        let s0 = E::ROLES.scratch[0];
                        for c in 0..3 {
                            load32(self.e, s0, base + c * 4);
                            store32(self.e, OPA + c * 4, s0);
                        }
                    }
                    store32_imm(self.e, PC, pc as u32);
                    store32_imm(self.e, JUMPED_FROM, NO_JUMP);
                    self.exit(EXIT_TMREAD);
                    self.forget();
                    prev = None;
                    i += 1;
                }
                Kind::Code => {
                    let mut n = 1;
                    while !ends[i + n - 1] {
                        n += 1;
                    }
                    self.budget_check(n as u32, pc);
                    self.cache.clear();
                    let mut known = known;
                    for k in 0..n {
                        let pc = pc_of(i + k);
                        if k > 0 {
                            let l = self.labels[&pc];
                            self.e.bind(l);
                        }
                        let last = k + 1 == n;
                        let p = self.instruction(pc, words[i + k], known, last, n as u32);
                        known = Some(p);
                    }
                    prev = known;
                    if !ends_block_with_transfer(words[i + n - 1]) && i + n == words.len() {
                        // Falling off the end: the interpreter reports it.
                        let end = pc_of(i + n);
                        self.exit_at(end, EXIT_TO_END);
                    }
                    i += n;
                }
            }
        }
    }

    /// Jumps to the label of the address in scratch 0 among `targets` (sorted), else to `miss`.
    fn dispatch_search(&mut self, targets: &[(u16, E::Label)], miss: E::Label) {
        let s0 = E::ROLES.scratch[0];
        if targets.len() <= 4 {
            for &(a, l) in targets {
                self.e.branch(Cond::Eq, S32, s0, I(a.into()), l);
            }
            self.e.jump(miss);
            return;
        }
        let mid = targets.len() / 2;
        let upper = self.e.label();
        // addresses are 16-bit, zero-extended: unsigned order is address order
        let k = targets[mid - 1].0.into();
        self.e.branch(Cond::Hi, S32, s0, I(k), upper);
        self.dispatch_search(&targets[..mid], miss);
        self.e.bind(upper);
        self.dispatch_search(&targets[mid..], miss);
    }

    /// Nothing known about register contents (at leaders).
    fn forget(&mut self) {
        self.bcast.iter_mut().for_each(|b| *b = false);
        self.last_bcast = false;
        self.cache.clear();
    }

    /// Whether an operand read as [`Self::stage`] reads it is known to be a broadcast.
    fn src_bcast(&self, addr: u16, known: Option<Prev>) -> bool {
        match self.profile {
            Profile::Manual => self.bcast.get(addr as usize).copied().unwrap_or(false),
            Profile::Rtl => match known {
                Some(p) if p.dst == addr && !p.wrote => self.last_bcast,
                Some(_) => self.bcast[(addr & 0x7F) as usize],
                None => false,
            },
        }
    }

    /// The block of `n` instructions at `pc` runs only if all of them fit in the budget.
    fn budget_check(&mut self, n: u32, pc: u16) {
        // `n` >= 1: the next `n` instructions do not all run before the interpreter's
        // `steps >= budget` test stops when the step count plus `n` exceeds the budget
        let Roles {
            steps,
            budget,
            scratch,
            ..
        } = E::ROLES;
        let l = self.e.label();
        self.e.alu(Alu::Add, S64, scratch[0], steps, I(n.into()));
        self.e.branch(Cond::Hi, S64, scratch[0], R(budget), l);
        self.stubs.push((l, pc));
    }

    /// Adds `n` to the step count.
    fn count_steps(&mut self, n: u32) {
        let steps = E::ROLES.steps;
        self.e.alu(Alu::Add, S64, steps, steps, I(n.into()));
    }

    /// Leaves to the host at `pc` (jumped_from: none).
    fn exit_at(&mut self, pc: u16, kind: u32) {
        store32_imm(self.e, PC, pc as u32);
        store32_imm(self.e, JUMPED_FROM, NO_JUMP);
        self.exit(kind);
    }

    /// One compiled instruction; `last` when it ends its block of `n` (which then stores the
    /// result flops and last destination, counts the block's steps and transfers).
    fn instruction(&mut self, pc: u16, w: Word, known: Option<Prev>, last: bool, n: u32) -> Prev {
        let sem = w.info().expect("compiled instructions are defined").sem;
        let (ra, rb) = reads(sem);
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
        let a_bcast =
            !ra || (!w.is_imm() && self.src_bcast(w.src1, known)) || (w.is_imm() && imm == 0);
        let b_bcast = !rb || self.src_bcast(if w.is_imm() { w.dst } else { w.src2 }, known);
        let per_component = matches!(
            sem,
            Sem::Add
                | Sem::Sub
                | Sem::Inc
                | Sem::Dec
                | Sem::Div
                | Sem::Mul
                | Sem::IMul
                | Sem::Mod
                | Sem::Frac
                | Sem::IntP
                | Sem::Neg
                | Sem::Unscale
                | Sem::Rescale
                | Sem::Copy
        );
        let uniform = per_component && a_bcast && b_bcast;
        let result_bcast = uniform
            || match sem {
                Sem::Dot | Sem::Mag | Sem::Zero | Sem::Lea | Sem::Return | Sem::OmWrite => true,
                Sem::Nop | Sem::DebugPrint => true,
                Sem::Jump(..) | Sem::Jmp | Sem::Call => true,
                Sem::Swizzle3D => {
                    let known_pattern = if self.profile == Profile::Rtl {
                        RTL_SWIZZLES.contains(&imm)
                    } else {
                        (imm as usize) < SWIZZLES.len()
                    };
                    !known_pattern || {
                        let p = SWIZZLES[imm as usize].1;
                        p[0] == p[1] && p[1] == p[2]
                    }
                }
                _ => false,
            };
        match sem {
            Sem::Jump(c, t) => {
                let c = c as u32;
                let [s0, s1, ..] = E::ROLES.scratch;
                ld(self.e, &self.cache, s0, abase + c * 4);
                ld(self.e, &self.cache, s1, bbase + c * 4);
                self.commit_zero(w.dst);
                self.count_steps(n);
                let tl = self.labels[&w.dst];
                let fall = self.e.label();
                self.decide(t, tl, fall);
                self.e.bind(fall);
                self.last_bcast = true;
                return Prev {
                    dst: w.dst,
                    wrote: false,
                };
            }
            Sem::Jmp | Sem::Call => {
                if sem == Sem::Call {
                    store32_imm(self.e, RETURN_ADDR, pc.wrapping_add(1) as u32);
                }
                self.commit_zero(w.dst);
                self.count_steps(n);
                let tl = self.labels[&w.dst];
                self.e.jump(tl);
                self.last_bcast = true;
                return Prev {
                    dst: w.dst,
                    wrote: false,
                };
            }
            _ => {}
        }
        let writes = match sem {
            Sem::Nop | Sem::DebugPrint | Sem::Ret => false,
            Sem::Return => self.profile == Profile::Rtl,
            _ => true,
        };
        let row = self
            .profile
            .row(w.dst)
            .filter(|&r| writes && self.profile.writable(r));
        let mut targets = Vec::new();
        if let Some(r) = row {
            targets.push(REGS + r as u32 * 12);
        }
        // The result flops: read at block boundaries, and by the next instruction when the
        // destination row does not hold the result.
        if last || row.is_none() {
            targets.push(LAST_RESULT);
        }
        if sem == Sem::OmWrite {
            self.omwrite(abase, bbase);
        }
        self.compute(sem, w, pc, imm, abase, bbase, &targets, uniform);
        self.last_bcast = result_bcast;
        if let Some(r) = row {
            self.bcast[r] = result_bcast;
        }
        if last {
            store32_imm(self.e, LAST_DST, w.dst as u32);
            self.count_steps(n);
        }
        match sem {
            Sem::Return => {
                store32_imm(self.e, EXIT_ARG, imm & 1);
                self.exit(EXIT_RETURNED);
            }
            Sem::Ret => {
                let s0 = E::ROLES.scratch[0];
                load32(self.e, s0, RETURN_ADDR);
                store32_imm(self.e, JUMPED_FROM, pc as u32);
                // returning to a RETURN: the interpreter reports that it never reports done
                let exits: Vec<(u16, E::Label)> = self
                    .return_leaders
                    .clone()
                    .into_iter()
                    .map(|a| (a, self.e.label()))
                    .collect();
                let d = self.dispatch;
                for &(a, l) in &exits {
                    self.e.branch(Cond::Eq, S32, s0, I(a.into()), l);
                }
                self.e.jump(d);
                for (a, l) in exits {
                    self.e.bind(l);
                    store32_imm(self.e, PC, a as u32);
                    self.exit(EXIT_TO_END);
                }
            }
            Sem::OmWrite => {
                // A full queue: the host empties it and the code goes on at the next
                // instruction (a leader).
                let go_on = self.e.label();
                let s0 = E::ROLES.scratch[0];
                load32(self.e, s0, OQ_LEN);
                self.e.branch(Cond::Ne, S32, s0, I(OQ_CAP as i64), go_on);
                self.exit_at(pc.wrapping_add(1), EXIT_FLUSH);
                self.e.bind(go_on);
            }
            _ => {}
        }
        Prev {
            dst: w.dst,
            wrote: row.is_some(),
        }
    }

    /// Appends (A, B) to the OMWRITE queue (the code returns when it fills, so there is room).
    fn omwrite(&mut self, abase: u32, bbase: u32) {
        let e = &mut *self.e;
        let Roles { ctx, scratch, .. } = E::ROLES;
        let [s0, s1, _, _, _, _, at, len] = scratch;
        load32(e, len, OQ_LEN);
        e.alu(Alu::Mul, S64, at, len, I(24));
        for (base, off) in [(abase, OQ), (bbase, OQ + 12)] {
            load32(e, s0, base);
            load32(e, s1, base + 4);
            e.shift(Shift::Shl, S64, s1, s1, 32);
            e.alu(Alu::Or, S64, s0, s0, R(s1));
            e.store_idx(S64, ctx, at, off as i32, s0);
            load32(e, s0, base + 8);
            e.store_idx(S32, ctx, at, off as i32 + 8, s0);
        }
        e.alu(Alu::Add, S32, len, len, I(1));
        store32(e, OQ_LEN, len);
    }

    /// Where a register operand's three components are read from: the register row or the
    /// result flops when that is known at compile time, otherwise (a leader in the rtl
    /// profile) copied into the context at `stage_off` by a run-time forwarding test.
    fn stage(&mut self, stage_off: u32, addr: u16, known: Option<Prev>) -> u32 {
        match self.profile {
            Profile::Manual => REGS + addr as u32 * 12,
            Profile::Rtl => {
                let row = (addr & 0x7F) as u32;
                match known {
                    // The previous result, in the row when it was written there.
                    Some(p) if p.dst == addr && !p.wrote => LAST_RESULT,
                    Some(_) => REGS + row * 12,
                    None => {
                        let not_fwd = self.e.label();
                        let done = self.e.label();
                        let Roles { ctx, scratch, .. } = E::ROLES;
                        self.e.cmp_mem(S32, ctx, LAST_DST as i32, I(addr.into()));
                        self.e.jcc(Cond::Ne, not_fwd);
                        for c in 0..3 {
                            load32(self.e, scratch[0], LAST_RESULT + c * 4);
                            store32(self.e, stage_off + c * 4, scratch[0]);
                        }
                        self.e.jump(done);
                        self.e.bind(not_fwd);
                        for c in 0..3 {
                            load32(self.e, scratch[0], REGS + row * 12 + c * 4);
                            store32(self.e, stage_off + c * 4, scratch[0]);
                        }
                        self.e.bind(done);
                        stage_off
                    }
                }
            }
        }
    }

    /// A transfer's commit: result (0, 0, 0), no register write.
    fn commit_zero(&mut self, dst: u16) {
        for c in 0..3 {
            store32_imm(self.e, LAST_RESULT + c * 4, 0);
            stored(&mut self.cache, LAST_RESULT + c * 4);
        }
        store32_imm(self.e, LAST_DST, dst as u32);
    }

    /// Branches to `taken` or `not_taken` for a conditional jump on the component values in
    /// scratch 0 (A) and 1 (B).
    fn decide(&mut self, t: Test, taken: E::Label, not_taken: E::Label) {
        let e = &mut *self.e;
        let [a, b, neg_b, ..] = E::ROLES.scratch;
        if self.profile == Profile::Manual {
            let cond = match t {
                Test::Greater => Cond::Gt,
                Test::Less => Cond::Lt,
                Test::Equal => Cond::Eq,
                Test::NotEqual => Cond::Ne,
                Test::GreaterEqual => Cond::Ge,
                Test::LessEqual => Cond::Le,
            };
            e.branch(cond, S32, a, R(b), taken);
            e.jump(not_taken);
            return;
        }
        // rtl: greater is signed; equal compares magnitudes: x == y or x == -y. NOTEQUAL
        // leaves on either equality and is taken otherwise.
        e.mov_imm(neg_b, 0);
        e.alu(Alu::Sub, S32, neg_b, neg_b, R(b));
        let branches: &[(Cond, E::Reg)] = match t {
            Test::Greater => &[(Cond::Gt, b)],
            Test::Less => &[(Cond::Le, b)],
            Test::Equal | Test::NotEqual => &[(Cond::Eq, b), (Cond::Eq, neg_b)],
            Test::GreaterEqual => &[(Cond::Gt, b), (Cond::Eq, b), (Cond::Eq, neg_b)],
            Test::LessEqual => &[(Cond::Le, b), (Cond::Eq, neg_b)],
        };
        let to = if t == Test::NotEqual {
            not_taken
        } else {
            taken
        };
        for &(c, rhs) in branches {
            e.branch(c, S32, a, R(rhs), to);
        }
        if t == Test::NotEqual {
            e.jump(taken);
        }
        e.jump(not_taken);
    }

    /// Computes the result components and stores each to every base offset in `targets`.
    /// Component `c` of a result is stored before component `c + 1` is computed; the
    /// operations whose components read other components of their operands (CROSS,
    /// SWIZZLE3D) compute all three first.
    #[allow(clippy::too_many_arguments)]
    fn compute(
        &mut self,
        sem: Sem,
        w: Word,
        pc: u16,
        imm: u32,
        abase: u32,
        bbase: u32,
        targets: &[u32],
        uniform: bool,
    ) {
        let rtl = self.profile == Profile::Rtl;
        let [s0, s1, _, _, _, _, _, s7] = E::ROLES.scratch;
        let e = &mut *self.e;
        let cold = &mut self.cold;
        let cache = &mut self.cache;
        let a = |c: u32| abase + c * 4;
        let b = |c: u32| bbase + c * 4;
        // A uniform operation computes component 0 only and stores it to all three.
        let comps = if uniform { 1 } else { 3 };
        // Component c of the result goes to slot c; a uniform result's three words to slot 0.
        let put = |e: &mut E, cache: &mut Cache, c: u32, s: E::Reg| {
            let mut offs = Vec::with_capacity(6);
            for &t in targets {
                if uniform {
                    offs.extend((0..3).map(|k| t + k * 4));
                } else {
                    offs.push(t + c * 4);
                }
            }
            let slot = if uniform { 0 } else { c as u8 };
            put_cached(e, cache, slot, s, &offs);
        };
        let put_imm = |e: &mut E, cache: &mut Cache, c: u32, v: u32| {
            for &t in targets {
                store32_imm(e, t + c * 4, v);
                stored(cache, t + c * 4);
            }
        };
        match sem {
            Sem::Nop | Sem::DebugPrint | Sem::Zero | Sem::OmWrite => {
                for c in 0..3 {
                    put_imm(e, cache, c, 0);
                }
            }
            Sem::Add | Sem::Sub => {
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    ld(e, cache, s1, b(c));
                    add_sub(e, rtl, sem == Sem::Sub, s0, s0, s1);
                    put(e, cache, c, s0);
                }
            }
            Sem::Inc | Sem::Dec | Sem::IncX | Sem::IncY | Sem::IncZ => {
                for c in 0..comps {
                    let inc = match sem {
                        Sem::Inc | Sem::Dec => ONE,
                        Sem::IncX if c == 0 => ONE,
                        Sem::IncY if c == 1 => ONE,
                        Sem::IncZ if c == 2 => ONE,
                        _ => 0,
                    };
                    ld(e, cache, s0, a(c));
                    e.mov_imm(s1, inc.into());
                    add_sub(e, rtl, sem == Sem::Dec, s0, s0, s1);
                    put(e, cache, c, s0);
                }
            }
            Sem::Div => {
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    ld(e, cache, s1, b(c));
                    div(e, s0, s0, s1);
                    put(e, cache, c, s0);
                }
            }
            Sem::Mul | Sem::IMul => {
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    ld(e, cache, s1, b(c));
                    mul(e, cold, s0, s0, s1, sem == Sem::IMul);
                    put(e, cache, c, s0);
                }
            }
            Sem::Dot | Sem::Mag => {
                // 64-bit sum of the three products in scratch 7
                e.mov_imm(s7, 0);
                for c in 0..3 {
                    ld(e, cache, s0, a(c));
                    ld(e, cache, s1, if sem == Sem::Mag { a(c) } else { b(c) });
                    mul(e, cold, s0, s0, s1, false);
                    e.alu(Alu::Add, S64, s7, s7, R(s0));
                }
                if sem == Sem::Mag {
                    sqrt(e, s0, s7);
                } else {
                    narrow(e, rtl, s0, s7);
                }
                for c in 0..3 {
                    put(e, cache, c, s0);
                }
            }
            Sem::Cross => {
                for (c, (p, q)) in [((1, 2), (2, 1)), ((2, 0), (0, 2)), ((0, 1), (1, 0))]
                    .into_iter()
                    .enumerate()
                {
                    ld(e, cache, s0, a(p.0));
                    ld(e, cache, s1, b(p.1));
                    mul(e, cold, s7, s0, s1, false);
                    ld(e, cache, s0, a(q.0));
                    ld(e, cache, s1, b(q.1));
                    mul(e, cold, s0, s0, s1, false);
                    e.alu(Alu::Sub, S64, s7, s7, R(s0));
                    narrow(e, rtl, s0, s7);
                    store32(e, RES + c as u32 * 4, s0);
                }
                for c in 0..3 {
                    ld(e, cache, s0, RES + c * 4);
                    put(e, cache, c, s0);
                }
            }
            Sem::Copy => {
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    put(e, cache, c, s0);
                }
            }
            Sem::MulP => {
                // z first: it reads x and y, which the stores of z leave alone.
                ld(e, cache, s0, a(0));
                ld(e, cache, s1, a(1));
                mul(e, cold, s7, s0, s1, false);
                put(e, cache, 2, s7);
                for c in 0..2 {
                    let from = if rtl {
                        a(c)
                    } else {
                        REGS + w.dst as u32 * 12 + c * 4
                    };
                    ld(e, cache, s0, from);
                    put(e, cache, c, s0);
                }
            }
            Sem::Mod => {
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    ld(e, cache, s1, b(c));
                    e.alu(Alu::Sub, S32, s1, s1, I(ONE.into()));
                    e.alu(Alu::And, S32, s0, s0, R(s1));
                    put(e, cache, c, s0);
                }
            }
            Sem::Frac | Sem::IntP => {
                let m = if sem == Sem::Frac {
                    ONE - 1
                } else {
                    !(ONE - 1)
                };
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    e.alu(Alu::And, S32, s0, s0, I(m.into()));
                    put(e, cache, c, s0);
                }
            }
            Sem::Neg => {
                for c in 0..comps {
                    ld(e, cache, s1, a(c));
                    e.mov_imm(s0, 0);
                    e.alu(Alu::Sub, S32, s0, s0, R(s1));
                    put(e, cache, c, s0);
                }
            }
            Sem::Unscale | Sem::Rescale => {
                let op = match (sem, rtl) {
                    (Sem::Rescale, _) => Shift::Shl,
                    (_, true) => Shift::Shr,
                    _ => Shift::Sar,
                };
                for c in 0..comps {
                    ld(e, cache, s0, a(c));
                    e.shift(op, S32, s0, s0, 17);
                    put(e, cache, c, s0);
                }
            }
            Sem::XchangeX | Sem::XchangeY | Sem::XchangeZ => {
                let k = match sem {
                    Sem::XchangeX => 0,
                    Sem::XchangeY => 1,
                    _ => 2,
                };
                for c in 0..3 {
                    ld(e, cache, s0, if c == k { b(c) } else { a(c) });
                    put(e, cache, c, s0);
                }
            }
            Sem::Lea => {
                // the interpreter's reading: the fetch unit's pointer, address + 1
                for c in 0..3 {
                    put_imm(e, cache, c, u32::from(pc.wrapping_add(1)));
                }
            }
            Sem::Return => {
                for c in 0..3 {
                    put_imm(e, cache, c, imm);
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
                        put_imm(e, cache, c, imm);
                    } else {
                        ld(e, cache, s0, b(c));
                        put(e, cache, c, s0);
                    }
                }
            }
            Sem::Swizzle3D => {
                let known = if rtl {
                    RTL_SWIZZLES.contains(&imm)
                } else {
                    (imm as usize) < SWIZZLES.len()
                };
                if known {
                    for c in 0..3u8 {
                        let src = SWIZZLES[imm as usize].1[c as usize] as u32;
                        ld(e, cache, E::ROLES.scratch[c as usize], b(src));
                    }
                    for c in 0..3u8 {
                        put(e, cache, c as u32, E::ROLES.scratch[c as usize]);
                    }
                } else {
                    for c in 0..3 {
                        put_imm(e, cache, c, 0);
                    }
                }
            }
            Sem::Jump(..) | Sem::Jmp | Sem::Call | Sem::TmRead => {
                unreachable!("handled by the caller")
            }
        }
    }
}

/// Whether a block's last instruction leaves it by itself (no fall-through to the next
/// address). Conditional jumps fall through when not taken.
fn ends_block_with_transfer(w: Word) -> bool {
    matches!(
        w.info().map(|i| i.sem),
        Some(Sem::Jmp | Sem::Call | Sem::Ret | Sem::Return)
    )
}

/// `d` = ADD/SUB of 32-bit `x`, `y` (rtl: exact sum, its sign over its low 31 bits, which is
/// the wrapped sum with bit 31 flipped when the signed operation overflows).
fn add_sub<E: Target>(e: &mut E, rtl: bool, sub: bool, d: E::Reg, x: E::Reg, y: E::Reg) {
    if rtl {
        e.add32_sign_exact(sub, d, x, y);
    } else {
        let op = if sub { Alu::Sub } else { Alu::Add };
        e.alu(op, S32, d, x, R(y));
    }
}

/// `d` = the 64-bit sum `s` narrowed to a component: rtl bit 63 over bits 30:0, manual the
/// low 32 bits. Clobbers scratch 4 and 5 (and `s` is kept).
fn narrow<E: Target>(e: &mut E, rtl: bool, d: E::Reg, s: E::Reg) {
    let [_, _, _, _, s4, s5, _, _] = E::ROLES.scratch;
    if rtl {
        e.shift(Shift::Shr, S64, s4, s, 63);
        e.shift(Shift::Shl, S32, s4, s4, 31);
        e.alu(Alu::And, S32, s5, s, I(0x7FFF_FFFF));
        e.alu(Alu::Or, S32, d, s4, R(s5));
    } else {
        // a 32-bit operation keeps the low 32 bits
        e.alu(Alu::Or, S32, d, s, R(s));
    }
}

/// `d` = |x| as the RTL's units take it (32-bit two's-complement negation when bit 31 is set).
/// Clobbers scratch 6.
fn magnitude<E: Target>(e: &mut E, d: E::Reg, x: E::Reg) {
    let s6 = E::ROLES.scratch[6];
    e.sext32(s6, x);
    e.shift(Shift::Sar, S64, s6, s6, 63); // 0 or all ones
    e.alu(Alu::Xor, S32, d, x, R(s6));
    e.alu(Alu::Sub, S32, d, d, R(s6));
}

/// `d` (64-bit) = `mul_rtl(x, y, unscaled)`, the closed form of
/// `picajit_interp::theia::arith::mul_rtl_closed`. `x`, `y` are clobbered; uses scratch 2-6.
///
/// The closed form's correction for the wrapped 2|A| and 3|A| partial products is zero
/// when |x| <= 0x55555555 (then 3|x| < 2^32 and bit 31 of |x| is clear); the product is
/// then the signed 64-bit product of x and y, and the RTL's magnitude shift with the sign
/// applied afterwards is that product divided by 2^17 rounding toward zero. Only the other
/// x values take the full form, emitted out of line after the program.
fn mul<E: Target>(
    e: &mut E,
    cold: &mut Vec<ColdMul<E::Reg, E::Label>>,
    d: E::Reg,
    x: E::Reg,
    y: E::Reg,
    unscaled: bool,
) {
    let [_, _, s2, s3, _, _, _, _] = E::ROLES.scratch;
    let full = e.label();
    let done = e.label();
    e.alu(Alu::Add, S32, s2, x, I(0x5555_5555));
    e.branch(Cond::Hi, S32, s2, I(0xAAAA_AAAA), full);
    e.sext32(s2, x);
    e.sext32(s3, y);
    e.alu(Alu::Mul, S64, s2, s2, R(s3));
    if unscaled {
        e.alu(Alu::Or, S64, d, s2, R(s2));
    } else {
        // toward zero: add 2^17 - 1 to negative products before the arithmetic shift
        e.shift(Shift::Sar, S64, s3, s2, 63);
        e.shift(Shift::Shr, S64, s3, s3, 64 - 17);
        e.alu(Alu::Add, S64, s2, s2, R(s3));
        e.shift(Shift::Sar, S64, d, s2, 17);
    }
    e.bind(done);
    cold.push(ColdMul {
        full,
        done,
        d,
        x,
        y,
        unscaled,
    });
}

/// The closed form for every `x`.
fn mul_full<E: Target>(e: &mut E, d: E::Reg, x: E::Reg, y: E::Reg, unscaled: bool) {
    let [_, _, s2, s3, s4, s5, s6, _] = E::ROLES.scratch;
    // sign: bit 31 of x ^ y, as 0 or all ones in scratch 2
    e.alu(Alu::Xor, S32, s2, x, R(y));
    e.sext32(s2, s2);
    e.shift(Shift::Sar, S64, s2, s2, 63);
    magnitude(e, x, x);
    magnitude(e, y, y);
    e.alu(Alu::Mul, S64, s3, x, R(y)); // exact product of the magnitudes
    e.mov_imm(s6, 0x5555_5555);
    e.alu(Alu::And, S64, s4, y, R(s6)); // lo
    e.shift(Shift::Shr, S64, s5, y, 1);
    e.alu(Alu::And, S64, s5, s5, R(s6)); // hi
    e.alu(Alu::And, S64, s4, s4, R(s5)); // m3 = lo & hi
    e.alu(Alu::Xor, S64, s5, s5, R(s4)); // m2 = hi ^ m3
    e.shift(Shift::Shr, S64, s6, x, 31); // k2
    e.alu(Alu::Mul, S64, s5, s5, R(s6));
    e.shift(Shift::Shl, S64, s6, x, 1);
    e.alu(Alu::Add, S64, s6, s6, R(x));
    e.shift(Shift::Shr, S64, s6, s6, 32); // k3
    e.alu(Alu::Mul, S64, s4, s4, R(s6));
    e.alu(Alu::Add, S64, s4, s4, R(s5));
    e.shift(Shift::Shl, S64, s4, s4, 32);
    e.alu(Alu::Sub, S64, s3, s3, R(s4));
    if !unscaled {
        e.shift(Shift::Shr, S64, s3, s3, 17);
    }
    // conditional negation: (p ^ s) - s
    e.alu(Alu::Xor, S64, s3, s3, R(s2));
    e.alu(Alu::Sub, S64, d, s3, R(s2));
}

/// `d` = `div_rtl(x, y)`; clobbers `x`, `y`, scratch 2-6.
fn div<E: Target>(e: &mut E, d: E::Reg, x: E::Reg, y: E::Reg) {
    let [_, _, s2, s3, _, _, _, _] = E::ROLES.scratch;
    e.alu(Alu::Xor, S32, s2, x, R(y));
    e.sext32(s2, s2);
    e.shift(Shift::Sar, S64, s2, s2, 63); // sign mask
    magnitude(e, x, x);
    magnitude(e, y, y);
    e.shift(Shift::Shl, S64, x, x, 17);
    let zero = e.label();
    let done = e.label();
    e.branch(Cond::Eq, S64, y, I(0), zero);
    e.udiv(S64, s3, x, y);
    e.jump(done);
    e.bind(zero);
    e.mov_imm(s3, 0x0FFF_FFFF);
    e.bind(done);
    e.alu(Alu::And, S32, s3, s3, I(0x7FFF_FFFF));
    e.alu(Alu::Xor, S32, s3, s3, R(s2));
    e.alu(Alu::Sub, S32, d, s3, R(s2));
}

/// `d` = `sqrt_rtl(s)` (`s` 64-bit, kept in scratch 7 and clobbered). The first of the RTL's
/// 33 iterations (group 32, whose operand bits are x >> 64 = 0) leaves every register at 0, so
/// the loop runs the remaining 32, taking the operand's bits two at a time from the top.
/// Uses scratch 0-6.
fn sqrt<E: Target>(e: &mut E, d: E::Reg, s: E::Reg) {
    // s: y = s << 17; sum, diff, result, bit, counter, temp
    let [_, sum, diff, result, bit, counter, temp, _] = E::ROLES.scratch;
    e.shift(Shift::Shl, S64, s, s, 17);
    e.mov_imm(sum, 0);
    e.mov_imm(diff, 0);
    e.mov_imm(result, 0);
    e.mov_imm(bit, 0x8000_0000);
    e.mov_imm(counter, 32);
    let top = e.label();
    let keep = e.label();
    let next = e.label();
    e.bind(top);
    e.shift(Shift::Shl, S32, sum, sum, 1);
    e.alu(Alu::Add, S32, sum, sum, I(1)); // sum = (sum << 1) + 1
    e.shift(Shift::Shr, S64, temp, s, 62);
    e.shift(Shift::Shl, S64, s, s, 2);
    e.shift(Shift::Shl, S32, diff, diff, 2);
    e.alu(Alu::Add, S32, diff, diff, R(temp)); // diff = (diff << 2) + bits
    e.branch(Cond::Hi, S32, sum, R(diff), keep);
    e.alu(Alu::Add, S32, result, result, R(bit)); // result += 1 << group
    e.alu(Alu::Sub, S32, diff, diff, R(sum)); // diff -= sum
    e.alu(Alu::Add, S32, sum, sum, I(1)); // sum += 1
    e.jump(next);
    e.bind(keep);
    e.alu(Alu::Sub, S32, sum, sum, I(1)); // sum -= 1
    e.bind(next);
    e.shift(Shift::Shr, S32, bit, bit, 1);
    e.dec_branch_nz(S64, counter, top);
    e.alu(Alu::Or, S32, d, result, R(result));
}
