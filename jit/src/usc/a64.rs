//! AArch64 NEON encoding of the USC lowering (`lower.rs`): a chunk is four lanes (one q
//! register), so the 16 instances take four chunks.
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
//! x12 the budget, w1 lane reductions, x2-x4 and v0-v3 temporaries; virtual vector register n
//! is v(16+n) (v16-v31 are caller-saved, so nothing needs saving).

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use super::lower::{self, Bin, Bin64, Loc, Lowering, ShImm, Src, Src64, Un, Un64, VEmit, V};
use super::{exit, Site};
use crate::host::a64::asm::{a64, Asm};
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

fn q(v: V) -> u8 {
    16 + v
}

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

    /// The vector register holding `s` (materialised into v0 unless a register).
    fn src(&mut self, s: Src) -> u8 {
        match s {
            Src::V(v) => q(v),
            Src::K(c) => {
                self.splat_raw(0, c);
                0
            }
            Src::At(l) => {
                let o = Self::off(l) as u32;
                a64!(self.a.ops; ldr Q(0), [x0, o]);
                0
            }
        }
    }

    fn splat_raw(&mut self, d: u8, v: u32) {
        match v {
            0 => a64!(self.a.ops; movi V(d).D2, 0),
            u32::MAX => a64!(self.a.ops; cmeq V(d).S4, V(d).S4, V(d).S4),
            _ => {
                let l = self.a.constant([v; 4]);
                a64!(self.a.ops; ldr Q(d), =>l);
            }
        }
    }

    /// Leaves with `code`, storing the step count.
    fn leave(&mut self, code: u32) {
        a64!(self.a.ops
            ; str x11, [x0, blk::STEPS as u32]
            ; movz w0, code
            ; ret
        );
    }
}

impl VEmit for A64Emit {
    const LANES: usize = 4;

    fn label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a.bind(l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        a64!(self.a.ops; b =>l);
    }

    fn load(&mut self, d: V, at: Loc) {
        let o = Self::off(at) as u32;
        a64!(self.a.ops; ldr Q(q(d)), [x0, o]);
    }

    fn store(&mut self, at: Loc, s: V) {
        let o = Self::off(at) as u32;
        a64!(self.a.ops; str Q(q(s)), [x0, o]);
    }

    fn bcast(&mut self, d: V, r: Reg) {
        let o = u32::from(r.index) * 4;
        if r.bank == Bank::Sh {
            a64!(self.a.ops; ldr S(0), [x9, o]);
        } else {
            a64!(self.a.ops; ldr S(0), [x10, o]);
        }
        a64!(self.a.ops; dup V(q(d)).S4, V(0).S[0]);
    }

    fn splat(&mut self, d: V, v: u32) {
        self.splat_raw(q(d), v);
    }

    fn zero(&mut self, d: V) {
        a64!(self.a.ops; movi V(q(d)).D2, 0);
    }

    fn ones(&mut self, d: V) {
        let d = q(d);
        a64!(self.a.ops; cmeq V(d).S4, V(d).S4, V(d).S4);
    }

    fn bin(&mut self, op: Bin, d: V, a: V, b: Src) {
        let (d, a) = (q(d), q(a));
        let b = self.src(b);
        let ops = &mut self.a.ops;
        match op {
            Bin::Fadd => a64!(ops; fadd V(d).S4, V(a).S4, V(b).S4),
            Bin::Fmul => a64!(ops; fmul V(d).S4, V(a).S4, V(b).S4),
            Bin::Fdiv => a64!(ops; fdiv V(d).S4, V(a).S4, V(b).S4),
            // x86's MAXPS/MINPS rule (second operand unless strictly ordered) by compare and
            // select: FMAX/FMIN differ on NaN and on signed zeros.
            Bin::Fmax => a64!(ops
                ; fcmgt V(1).S4, V(a).S4, V(b).S4
                ; bsl V(1).B16, V(a).B16, V(b).B16
                ; mov V(d).B16, V(1).B16
            ),
            Bin::Fmin => a64!(ops
                ; fcmgt V(1).S4, V(b).S4, V(a).S4
                ; bsl V(1).B16, V(a).B16, V(b).B16
                ; mov V(d).B16, V(1).B16
            ),
            Bin::And => a64!(ops; and V(d).B16, V(a).B16, V(b).B16),
            Bin::AndNot => a64!(ops; bic V(d).B16, V(b).B16, V(a).B16),
            Bin::Or => a64!(ops; orr V(d).B16, V(a).B16, V(b).B16),
            Bin::Xor => a64!(ops; eor V(d).B16, V(a).B16, V(b).B16),
            Bin::Add => a64!(ops; add V(d).S4, V(a).S4, V(b).S4),
            Bin::Sub => a64!(ops; sub V(d).S4, V(a).S4, V(b).S4),
            Bin::CmpEq => a64!(ops; cmeq V(d).S4, V(a).S4, V(b).S4),
            Bin::CmpGt => a64!(ops; cmgt V(d).S4, V(a).S4, V(b).S4),
            // USHL/SSHL shift by the signed low byte of each lane: a negative count shifts
            // right, and 32 either way gives 0 (as VPSLLVD/VPSRLVD do).
            Bin::Sllv => a64!(ops; ushl V(d).S4, V(a).S4, V(b).S4),
            Bin::Srlv => a64!(ops
                ; neg V(1).S4, V(b).S4
                ; ushl V(d).S4, V(a).S4, V(1).S4
            ),
            Bin::Srav => a64!(ops
                ; neg V(1).S4, V(b).S4
                ; sshl V(d).S4, V(a).S4, V(1).S4
            ),
            Bin::FcmpEq => a64!(ops; fcmeq V(d).S4, V(a).S4, V(b).S4),
            Bin::FcmpNe => a64!(ops
                ; fcmeq V(d).S4, V(a).S4, V(b).S4
                ; not V(d).B16, V(d).B16
            ),
            Bin::FcmpLt => a64!(ops; fcmgt V(d).S4, V(b).S4, V(a).S4),
            Bin::FcmpLe => a64!(ops; fcmge V(d).S4, V(b).S4, V(a).S4),
        }
    }

    fn un(&mut self, op: Un, d: V, s: V) {
        let (d, s) = (q(d), q(s));
        match op {
            Un::Mov => {
                if d != s {
                    a64!(self.a.ops; mov V(d).B16, V(s).B16);
                }
            }
            Un::Floor => a64!(self.a.ops; frintm V(d).S4, V(s).S4),
            Un::Sqrt => a64!(self.a.ops; fsqrt V(d).S4, V(s).S4),
        }
    }

    fn shift_imm(&mut self, op: ShImm, d: V, s: V, n: u8) {
        if n == 0 && op != ShImm::Sll {
            // Right shifts by 0 are not encodable (the immediate is 1..=32).
            self.un(Un::Mov, d, s);
            return;
        }
        let (d, s, n) = (q(d), q(s), u32::from(n));
        match op {
            ShImm::Sll => a64!(self.a.ops; shl V(d).S4, V(s).S4, n),
            ShImm::Srl => a64!(self.a.ops; ushr V(d).S4, V(s).S4, n),
            ShImm::Sra => a64!(self.a.ops; sshr V(d).S4, V(s).S4, n),
        }
    }

    fn blend(&mut self, d: V, a: V, b: V, mask: V) {
        let (d, a, b, m) = (q(d), q(a), q(b), q(mask));
        a64!(self.a.ops
            ; mov V(1).B16, V(m).B16
            ; bsl V(1).B16, V(b).B16, V(a).B16
            ; mov V(d).B16, V(1).B16
        );
    }

    fn fma(&mut self, d: V, a: V, b: V) {
        let (d, a, b) = (q(d), q(a), q(b));
        a64!(self.a.ops; fmla V(d).S4, V(a).S4, V(b).S4);
    }

    fn widen(&mut self, lo: V, hi: V, s: V) {
        let (lo, hi, s) = (q(lo), q(hi), q(s));
        a64!(self.a.ops
            ; fcvtl V(lo).D2, V(s).S2
            ; fcvtl2 V(hi).D2, V(s).S4
        );
    }

    fn narrow(&mut self, d: V, lo: V, hi: V) {
        let (d, lo, hi) = (q(d), q(lo), q(hi));
        a64!(self.a.ops
            ; fcvtn V(d).S2, V(lo).D2
            ; fcvtn2 V(d).S4, V(hi).D2
        );
    }

    fn bin64(&mut self, op: Bin64, d: V, a: V, b: Src64) {
        let (d, a) = (q(d), q(a));
        let b = match b {
            Src64::V(v) => q(v),
            Src64::K(c) => {
                let l = self
                    .a
                    .constant([c as u32, (c >> 32) as u32, c as u32, (c >> 32) as u32]);
                a64!(self.a.ops; ldr Q(0), =>l);
                0
            }
        };
        let ops = &mut self.a.ops;
        match op {
            Bin64::Fadd => a64!(ops; fadd V(d).D2, V(a).D2, V(b).D2),
            Bin64::Fsub => a64!(ops; fsub V(d).D2, V(a).D2, V(b).D2),
            Bin64::Fmul => a64!(ops; fmul V(d).D2, V(a).D2, V(b).D2),
            Bin64::Fdiv => a64!(ops; fdiv V(d).D2, V(a).D2, V(b).D2),
            Bin64::FcmpLt => a64!(ops; fcmgt V(d).D2, V(b).D2, V(a).D2),
            Bin64::And => a64!(ops; and V(d).B16, V(a).B16, V(b).B16),
            Bin64::Or => a64!(ops; orr V(d).B16, V(a).B16, V(b).B16),
            Bin64::Add => a64!(ops; add V(d).D2, V(a).D2, V(b).D2),
            Bin64::Sub => a64!(ops; sub V(d).D2, V(a).D2, V(b).D2),
            Bin64::CmpGt => a64!(ops; cmgt V(d).D2, V(a).D2, V(b).D2),
        }
    }

    fn un64(&mut self, op: Un64, d: V, s: V) {
        let (d, s) = (q(d), q(s));
        let ops = &mut self.a.ops;
        match op {
            Un64::Sqrt => a64!(ops; fsqrt V(d).D2, V(s).D2),
            Un64::Round => a64!(ops; frintn V(d).D2, V(s).D2),
            Un64::Shl(n) => {
                let n = u32::from(n);
                a64!(ops; shl V(d).D2, V(s).D2, n)
            }
            Un64::Shr(n) => {
                let n = u32::from(n);
                a64!(ops; ushr V(d).D2, V(s).D2, n)
            }
        }
    }

    fn splat64(&mut self, d: V, v: u64) {
        let l = self
            .a
            .constant([v as u32, (v >> 32) as u32, v as u32, (v >> 32) as u32]);
        let d = q(d);
        a64!(self.a.ops; ldr Q(d), =>l);
    }

    fn umadd32(&mut self, cin: Option<V>) {
        // 64-bit products of lanes 0-1 (v2) and 2-3 (v3), widened sums, then the low and the
        // high words unzipped into ft0 and ft1.
        let t = lower::T.map(q);
        let (a, b, c) = (t[0], t[1], t[2]);
        a64!(self.a.ops
            ; umull V(2).D2, V(a).S2, V(b).S2
            ; umull2 V(3).D2, V(a).S4, V(b).S4
            ; uaddw V(2).D2, V(2).D2, V(c).S2
            ; uaddw2 V(3).D2, V(3).D2, V(c).S4
        );
        if let Some(k) = cin {
            let k = q(k);
            a64!(self.a.ops
                ; uaddw V(2).D2, V(2).D2, V(k).S2
                ; uaddw2 V(3).D2, V(3).D2, V(k).S4
            );
        }
        let (f0, f1) = (q(0), q(1));
        a64!(self.a.ops
            ; uzp1 V(f0).S4, V(2).S4, V(3).S4
            ; uzp2 V(f1).S4, V(2).S4, V(3).S4
        );
    }

    fn any_clear(&mut self) {
        a64!(self.a.ops; movz w1, 0);
    }

    fn any_or(&mut self, v: V) {
        let v = q(v);
        a64!(self.a.ops
            ; umaxv S(0), V(v).S4
            ; fmov w2, S(0)
            ; orr w1, w1, w2
        );
    }

    fn branch_any(&mut self, l: DynamicLabel, nonzero: bool) {
        if nonzero {
            a64!(self.a.ops; cbnz w1, =>l);
        } else {
            a64!(self.a.ops; cbz w1, =>l);
        }
    }

    fn site(&mut self, k: usize, mask: V) {
        let m = q(mask);
        a64!(self.a.ops
            ; umaxv S(0), V(m).S4
            ; fmov w2, S(0)
        );
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
pub fn generate(p: &Prepared) -> Result<(Vec<u8>, usize, Vec<Site>, usize), crate::Error> {
    let mut e = A64Emit::new();
    let l = Lowering::program(&mut e, p);
    let (code, len) = e.a.finish().map_err(crate::Error::Internal)?;
    Ok((code, len, l.sites, l.native_groups))
}

/// Whether this build runs USC AArch64 code: natively on AArch64 hosts, elsewhere under the
/// emulator (feature `emulate-a64`).
pub fn available() -> bool {
    cfg!(any(target_arch = "aarch64", feature = "emulate-a64"))
}

/// Compiles `p` to AArch64 code (run natively on AArch64 hosts, under the emulator elsewhere).
pub fn compile(p: &Prepared) -> Result<super::UscCode, crate::Error> {
    let (code, len, sites, native_groups) = generate(p)?;
    let exec = if crate::Backend::host() == Some(crate::Backend::A64) {
        crate::host::runtime::ExecCode::new(&code)
            .map_err(|e| crate::Error::Internal(e.to_string()))?
    } else {
        #[cfg(feature = "emulate-a64")]
        {
            crate::host::runtime::ExecCode::emulated(&code).map_err(crate::Error::Internal)?
        }
        #[cfg(not(feature = "emulate-a64"))]
        return Err(crate::Error::Unavailable(
            "USC AArch64 code cannot run on this host (build with the emulate-a64 feature)".into(),
        ));
    };
    Ok(super::UscCode {
        exec,
        backend: crate::Backend::A64,
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
