//! AArch64 NEON target of the USC lowering (`lower.rs`): a chunk is four lanes (one q
//! register), so the 16 instances take four chunks; the lane operations are the host's
//! (`crate::host::a64::lanes`), which the PICA NEON code uses too.
//!
//! The code is an `extern "C" fn(*mut u8) -> u32` over one self-contained block (layout in
//! [`blk`]: counters, lane masks and scratch, then the banks and the write sites), so it runs
//! natively or under the emulator (which copies the block in and out) unchanged. It makes
//! no calls: a group the lowering does not perform ends the call with [`EXIT_HELPER`] and
//! the group's index; the host runs
//! the interpreter's step on the same state and calls again, resuming at the group the step
//! continues with (the prologue's jump table).
//!
//! Registers: x0 the block, x9/x10 the sh/cf banks, x13 the write sites, x11 the step count,
//! x12 the budget, w1 lane reductions, x2-x4 temporaries, v0 and v1 the lane operations'
//! scratch; virtual vector register n is v(16+n) (v16-v31 are caller-saved, so nothing needs
//! saving).
//!
//! Float environment: the lowering's arithmetic needs FPCR = 0 (round to nearest even, no
//! flush-to-zero, no default NaN, no alternate handling, traps disabled). The prologue saves
//! the caller's FPCR in the block ([`blk::SAVED_FPCR`]) and clears it, every exit writes the
//! saved value back; both writes are skipped when the caller's FPCR is 0 already (the usual
//! case, and always under the emulator, which starts each call from 0). The interpreter's
//! steps between calls run in the caller's environment, on which they do not depend (integer
//! code, `picajit_interp::usc::float`).

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use super::lower::{self, Loc, Lowering, Target, V};
use super::{exit, Site};
use crate::host::a64::abi::Frame;
use crate::host::a64::asm::{a64, Asm};
use crate::host::a64::lanes::{Mem, Neon};
use crate::host::a64::regs::{Gpr, Vreg, X0};
use crate::host::lanes::Lanes;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::{Prepared, MAX_INSTANCES};

/// Exit code: run group [`blk::GROUP`] on the interpreter, then call again.
pub const EXIT_HELPER: u32 = 4;

/// Byte offsets in the block generated code runs on.
pub mod blk {
    use picajit_interp::usc::program::Bank;
    /// Groups executed (u64).
    pub const STEPS: usize = 0;
    /// Most groups to execute (u64).
    pub const BUDGET: usize = 8;
    /// In: the group to start at; out (helper exit): the group to interpret (u32).
    pub const GROUP: usize = 16;
    /// The caller's FPCR while the code runs (u64, written by the code).
    pub const SAVED_FPCR: usize = 24;
    /// p0 per lane: 0 or all ones.
    pub const P0: usize = 64;
    /// Pe per lane.
    pub const PE: usize = 128;
    /// Lanes that exist.
    pub const LANES: usize = 192;
    /// Scratch chunks.
    pub const SCRATCH: usize = 256;
    // Bank sizes as `Bank::count` gives them (checked in `sizes_match`).
    pub const R: usize = 512;
    pub const VI: usize = R + 248 * 64;
    pub const I: usize = VI + 248 * 64;
    pub const IDX: usize = I + 8 * 64;
    pub const SH: usize = IDX + 2 * 64;
    pub const CF: usize = SH + 4096 * 4;
    /// One u32 per write site: non-zero when some lane wrote it.
    pub const SITES: usize = CF + 256 * 4;

    #[test]
    fn sizes_match() {
        assert_eq!(VI - R, usize::from(Bank::R.count()) * 64);
        assert_eq!(I - VI, usize::from(Bank::Vi.count()) * 64);
        assert_eq!(IDX - I, usize::from(Bank::I.count()) * 64);
        assert_eq!(SH - IDX, usize::from(Bank::Idx.count()) * 64);
        assert_eq!(CF - SH, usize::from(Bank::Sh.count()) * 4);
        assert_eq!(SITES - CF, usize::from(Bank::Cf.count()) * 4);
    }

    /// Offset of the 16 lanes of a per-instance register.
    pub fn lane(bank: Bank, index: u16) -> usize {
        let base = match bank {
            Bank::R => R,
            Bank::Vi => VI,
            Bank::I => I,
            _ => IDX,
        };
        base + usize::from(index) * 64
    }
}

// Every chunk load is an unsigned scaled `ldr q` off x0 (at most 4095 * 16 bytes).
const _: () = assert!(blk::SH <= 4095 * 16);
const _: () = assert!(blk::SCRATCH + 4 * 16 <= blk::R);
const _: () = assert!(blk::GROUP + 4 <= blk::SAVED_FPCR && blk::SAVED_FPCR + 8 <= blk::P0);

/// Whether the backend lowers group `gi` itself.
pub fn native(p: &Prepared, gi: usize) -> bool {
    lower::native(p, gi)
}

/// The AArch64 emitter.
pub struct A64Emit {
    a: Asm,
    budget_exit: DynamicLabel,
    helper_exit: DynamicLabel,
}

impl A64Emit {
    fn new() -> A64Emit {
        let mut a = Asm::new();
        let budget_exit = a.new_label();
        let helper_exit = a.new_label();
        A64Emit {
            a,
            budget_exit,
            helper_exit,
        }
    }

    /// `w` = a 32-bit constant.
    fn mov_w(&mut self, w: u8, v: u32) {
        a64!(self.a.ops; movz W(w), v & 0xFFFF);
        if v >> 16 != 0 {
            a64!(self.a.ops; movk W(w), v >> 16, LSL 16);
        }
    }

    fn off(at: Loc) -> usize {
        match at {
            Loc::Lane(r, h) => blk::lane(r.bank, r.index) + 16 * h,
            Loc::P0(h) => blk::P0 + 16 * h,
            Loc::Pe(h) => blk::PE + 16 * h,
            Loc::Lanes(h) => blk::LANES + 16 * h,
            Loc::Scratch(k) => blk::SCRATCH + 16 * k,
        }
    }

    /// Leaves with `code`, storing the step count and giving the caller its FPCR back.
    fn leave(&mut self, code: u32) {
        let kept = self.a.new_label();
        a64!(self.a.ops
            ; str x11, [x0, blk::STEPS as u32]
            ; ldr x2, [x0, blk::SAVED_FPCR as u32]
            ; cbz x2, =>kept
        );
        self.a.msr_fpcr(Gpr(2));
        a64!(self.a.ops
            ; =>kept
            ; movz w0, code
        );
        Frame::LEAF.ret(&mut self.a);
    }
}

impl Target for A64Emit {
    type R = Vreg;
    type Mem = Mem;
    type H<'a> = Neon<'a>;
    const LANES: usize = 4;

    /// Scratch v0 (constants, loaded operands) and v1.
    fn h(&mut self) -> Neon<'_> {
        Neon::new(&mut self.a, Vreg(0), Vreg(1), &[], &[])
    }

    fn v(v: V) -> Vreg {
        Vreg(16 + v)
    }

    fn at(at: Loc) -> Mem {
        Mem {
            base: X0,
            off: Self::off(at) as u32,
        }
    }

    fn shared(&mut self, r: Reg) -> Mem {
        Mem {
            base: if r.bank == Bank::Sh { Gpr(9) } else { Gpr(10) },
            off: u32::from(r.index) * 4,
        }
    }

    fn label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a.bind(l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        a64!(self.a.ops; b =>l);
    }

    fn any_clear(&mut self) {
        a64!(self.a.ops; movz w1, 0);
    }

    fn any_or(&mut self, v: Vreg) {
        self.h().mask_bits(Gpr(2), v);
        a64!(self.a.ops; orr w1, w1, w2);
    }

    fn branch_any(&mut self, l: DynamicLabel, nonzero: bool) {
        if nonzero {
            a64!(self.a.ops; cbnz w1, =>l);
        } else {
            a64!(self.a.ops; cbz w1, =>l);
        }
    }

    fn site(&mut self, k: usize, mask: Vreg) {
        self.h().mask_bits(Gpr(2), mask);
        let o = 4 * k as u32;
        if k < 4096 {
            a64!(self.a.ops
                ; ldr w3, [x13, o]
                ; orr w3, w3, w2
                ; str w3, [x13, o]
            );
        } else {
            self.mov_w(4, o);
            a64!(self.a.ops
                ; add x4, x13, x4
                ; ldr w3, [x4]
                ; orr w3, w3, w2
                ; str w3, [x4]
            );
        }
    }

    fn budget_check(&mut self) {
        let l = self.budget_exit;
        a64!(self.a.ops
            ; cmp x11, x12
            ; b.hs =>l
            ; add x11, x11, 1
        );
    }

    fn helper(&mut self, gi: usize, _: &[usize], _: &[DynamicLabel], _: DynamicLabel) {
        self.mov_w(2, gi as u32);
        let l = self.helper_exit;
        a64!(self.a.ops; b =>l);
    }

    fn prologue(&mut self, labels: &[DynamicLabel], done: DynamicLabel) {
        // A leaf on caller-saved registers (module documentation): nothing to save.
        Frame::LEAF.enter(&mut self.a);
        // The float environment (module documentation).
        let kept = self.a.new_label();
        self.a.mrs_fpcr(Gpr(2));
        a64!(self.a.ops
            ; str x2, [x0, blk::SAVED_FPCR as u32]
            ; cbz x2, =>kept
            ; movz x2, 0
        );
        self.a.msr_fpcr(Gpr(2));
        self.a.bind(kept);
        let table = self.a.new_label();
        a64!(self.a.ops
            ; ldr x11, [x0, blk::STEPS as u32]
            ; ldr x12, [x0, blk::BUDGET as u32]
        );
        for (reg, o) in [(9u8, blk::SH), (10, blk::CF), (13, blk::SITES)] {
            self.mov_w(2, o as u32);
            a64!(self.a.ops; add X(reg), x0, x2);
        }
        // Resume at group GROUP (== the group count: done) through a table of branches.
        a64!(self.a.ops
            ; ldr w2, [x0, blk::GROUP as u32]
            ; adr x3, =>table
            ; add x3, x3, x2, LSL 2
            ; br x3
            ; =>table
        );
        for &l in labels.iter().chain([&done]) {
            a64!(self.a.ops; b =>l);
        }
    }

    fn epilogue(&mut self, done: DynamicLabel) {
        self.a.bind(done);
        self.leave(exit::DONE);
        let b = self.budget_exit;
        self.a.bind(b);
        self.leave(exit::BUDGET);
        let h = self.helper_exit;
        self.a.bind(h);
        a64!(self.a.ops; str w2, [x0, blk::GROUP as u32]);
        self.leave(EXIT_HELPER);
    }
}

/// Generates the AArch64 code of `p` (on any host). Returns the code, its length without the
/// constant pool, the write sites and the number of native groups.
pub fn generate(p: &Prepared) -> Result<(Vec<u8>, usize, Vec<Site>, usize), crate::error::Error> {
    let mut e = A64Emit::new();
    let l = Lowering::program(&mut e, p);
    let (code, len) = e.a.finish().map_err(crate::error::Error::Internal)?;
    Ok((code, len, l.sites, l.native_groups))
}

/// Whether this build runs USC AArch64 code: natively on AArch64 hosts, elsewhere under the
/// emulator (feature `emulate-a64`).
pub fn available() -> bool {
    crate::host::runtime::can_run(crate::host::Backend::A64)
}

/// Compiles `p` to AArch64 code (run natively on AArch64 hosts, under the emulator elsewhere).
pub fn compile(p: &Prepared) -> Result<super::UscCode, crate::error::Error> {
    let (code, len, sites, native_groups) = generate(p)?;
    let exec = crate::host::runtime::ExecCode::for_backend(crate::host::Backend::A64, &code)?;
    Ok(super::UscCode {
        exec,
        backend: crate::host::Backend::A64,
        sites,
        code_bytes: len,
        native_groups,
        groups: p.groups.len(),
    })
}

/// Copies `st` into a block for `sites` write sites.
pub(super) fn block_from_state(st: &mut super::State, sites: usize) -> Vec<u8> {
    let mut b = vec![0u8; blk::SITES + 4 * sites];
    let n = st.instances();
    let put = |b: &mut [u8], o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    for l in 0..MAX_INSTANCES {
        put(&mut b, blk::LANES + 4 * l, if l < n { !0 } else { 0 });
    }
    masks_to_block(&mut b, st);
    banks_to_block(&mut b, st);
    b
}

pub(super) fn masks_to_block(b: &mut [u8], st: &super::State) {
    for l in 0..MAX_INSTANCES {
        let m = |x: bool| if x { u32::MAX } else { 0 };
        b[blk::P0 + 4 * l..][..4].copy_from_slice(&m(st.p0[l]).to_le_bytes());
        b[blk::PE + 4 * l..][..4].copy_from_slice(&m(st.pe[l]).to_le_bytes());
    }
}

fn word(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("four bytes"))
}

fn banks_to_block(b: &mut [u8], st: &mut super::State) {
    let banks = st.banks_mut();
    for (base, rows) in [
        (blk::R, &*banks.r),
        (blk::VI, &*banks.vi),
        (blk::I, &*banks.i),
        (blk::IDX, &*banks.idx),
    ] {
        for (k, row) in rows.iter().enumerate() {
            for (l, v) in row.iter().enumerate() {
                b[base + 64 * k + 4 * l..][..4].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    for (base, words) in [(blk::SH, &*banks.sh), (blk::CF, &*banks.cf)] {
        for (k, v) in words.iter().enumerate() {
            b[base + 4 * k..][..4].copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// Copies a block's banks and masks back into `st`.
pub(super) fn state_from_block(st: &mut super::State, b: &[u8]) {
    for l in 0..MAX_INSTANCES {
        st.p0[l] = word(b, blk::P0 + 4 * l) != 0;
        st.pe[l] = word(b, blk::PE + 4 * l) != 0;
    }
    let banks = st.banks_mut();
    for (base, rows) in [
        (blk::R, banks.r),
        (blk::VI, banks.vi),
        (blk::I, banks.i),
        (blk::IDX, banks.idx),
    ] {
        for (k, row) in rows.iter_mut().enumerate() {
            for (l, v) in row.iter_mut().enumerate() {
                *v = word(b, base + 64 * k + 4 * l);
            }
        }
    }
    for (base, words) in [(blk::SH, banks.sh), (blk::CF, banks.cf)] {
        for (k, v) in words.iter_mut().enumerate() {
            *v = word(b, base + 4 * k);
        }
    }
}

/// Copies `st` (banks and masks) into an existing block.
pub(super) fn state_to_block(b: &mut [u8], st: &mut super::State) {
    masks_to_block(b, st);
    banks_to_block(b, st);
}
