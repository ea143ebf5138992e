//! The AArch64 implementation of [`MacroAssembler`]: NEON sequences for every PICA operation.
//!
//! # Float environment
//!
//! The entries save the caller's FPCR (in `JitContext::saved_mxcsr`, the context's "caller's
//! float control" word) and install the mode's; the epilogue restores it:
//!
//! | mode | FPCR | arithmetic |
//! |---|---|---|
//! | F24 RTZ | RMode = RZ, FZ = 0 | f32 ops, then [`A64Masm::fixup_rtz`] (`float::f24_fixup_rtz`) |
//! | F24 RNE | RMode = RN, FZ = 0 | f64 ops, integer RNE to 17 bits, then the range fix-up |
//! | F32 | RMode = RN, FZ = 0 | ADD: f32 ops + `float::f32_fixup`; MUL, RCP: f64 ops, integer RNE to 24 bits |
//!
//! FZ stays 0: with FZ = 1, FCMGT/FCMGE (MAX, MIN, SGE, SLT, CMP, LITP) would see subnormal
//! inputs as zero, and AArch64 detects tininess *before* rounding, so an F32 product whose
//! exact value lies just below 2^-126 would flush where the model rounds it up to 2^-126
//! (`picajit_interp::pica::float`, "What a JIT must do (F32 mode)"). Inputs are flushed explicitly
//! ([`A64Masm::flush`]). Without FZ the same product comes out of FMUL as the subnormal
//! `0x007FFFFF` instead, which the fix-up would flush: so F32 products (and RCP) go through
//! f64, where they are exact (or, for RCP, never near a rounding boundary), and are rounded to
//! 24 bits by integer code, like the F24 RNE path rounds to 17. F32 sums of two normal f32
//! values are exact whenever they are below 2^-126, so FADD + fix-up is exact.
//!
//! MAX/MIN use FCMGT + BSL (`a > b ? a : b`), never FMAX/FMIN (whose NaN rules differ); MAD is
//! FMUL then FADD, never FMLA (fused).
//!
//! # Code shape
//!
//! Offset 0 is the single-invocation entry, followed by the batch entry; both branch into the
//! shader body with [`EXIT_LINK`] (x25) holding their continuation, and every exit of the body
//! sets w0 to a status and `br x25`. The body keeps x30 free, so shared subroutines (the
//! rounding fix-ups, RSQ, EX2, LG2, one copy per register they work on) are plain `bl`/`ret`;
//! subroutines never call each other.

use crate::error::{CompileError, CompileResult};
use crate::host::a64::abi::Frame;
use crate::host::a64::asm::{Asm, Cond};
use crate::host::a64::int::A64Int;
use crate::host::a64::lanes::Neon;
use crate::host::a64::regs::*;
use crate::pica::a64::regs::*;
use crate::pica::a64::rows;
use crate::pica::analysis::Guard;
use crate::pica::layout::*;
use crate::pica::masm::{
    BinaryKind, Dest, DotKind, MacroAssembler, ScalarKind, Source, SrcLoc, StubTable, Val,
};
use crate::pica::recipes::reciprocal::{self, LaneSet};
use crate::pica::recipes::scalar;
use crate::pica::recipes::transcendental_lanes::Halves;
use crate::pica::recipes::{self, Float, Lanes, Src, INF, ONE, SIGN};
use dynasmrt::DynamicLabel;
use picajit_interp::pica::float::precision::{
    F24_GRID_F32, F24_MIN_NORMAL_F32, F24_OVERFLOW_F32, F32_MIN_NORMAL_F32,
};
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding, CANONICAL_NAN_BITS};
use picajit_interp::pica::isa::{CmpOp, CondOp, RelIndex, Swizzle};

/// The frame of both entries: the frame pair (the body calls the shared subroutines) and the
/// pinned registers (`host/a64/regs.rs`; [`PAD`] keeps the pairs whole), the context pointer
/// in [`CTX`].
const ENTRY_FRAME: Frame<'static> = Frame {
    link: true,
    saved: &[CTX, REGS, INPUT, OUTPUT, UNIFORMS, BUDGET, EXIT_LINK, PAD],
    saved_v: &[],
    locals: 0,
    context: Some(CTX),
};

/// The stack pointer (register 31 in the add/sub-immediate forms).
const SP: Gpr = Gpr(31);

/// The batch entry's stack frame holding the working registers: `Registers` from the
/// temporaries to the end (a0, aL, cmp; the output bank in between unused), 16-byte aligned.
const WORK_FRAME: i32 = (REG_A0 + 16 - REG_TEMP + 15) & !15;

/// FPCR.RMode = round toward zero.
const FPCR_RZ: u32 = 0b11 << 22;

/// The f32 bits of the mode's smallest normal.
fn min_normal(mode: FloatMode) -> u32 {
    match mode {
        FloatMode::F32 => F32_MIN_NORMAL_F32,
        FloatMode::F24(_) => F24_MIN_NORMAL_F32,
    }
}

// Constants the entries load into v24-v31 (see `Pinned`).
/// Sign bit.
pub(crate) const K_SIGN: Vreg = Vreg(31);
/// The canonical NaN.
const K_CANON: Vreg = Vreg(30);
/// `|x| << 1` above this is a NaN.
const K_NAN2: Vreg = Vreg(29);
/// The mode's smallest normal, `<< 1`.
const K_MIN2: Vreg = Vreg(28);
/// 1.0.
pub(crate) const K_ONE: Vreg = Vreg(27);
/// +inf.
const K_INF: Vreg = Vreg(26);
/// The 17-bit truncation mask.
const K_TRUNC: Vreg = Vreg(25);
/// 2^64 (the F24 overflow threshold) `<< 1`.
const K_OVF2: Vreg = Vreg(24);

// Scratch registers (see regs.rs): T0-T3 for the fix-ups and rounding, T4-T7 for the f64
// halves and the pairwise sum, SA for the MUL NaN mask, T8/T9 for DST.
const T0: Vreg = SCRATCH[0];
const T1: Vreg = SCRATCH[1];
const T2: Vreg = SCRATCH[2];
const T3: Vreg = SCRATCH[3];
const T4: Vreg = SCRATCH[4];
const T5: Vreg = SCRATCH[5];
const T6: Vreg = SCRATCH[6];
const T7: Vreg = SCRATCH[7];
const SA: Vreg = SCRATCH[8];
const T8: Vreg = SCRATCH[10];
const T9: Vreg = SCRATCH[11];

/// The general-purpose registers of the integer EX2/LG2 (`crate::pica::recipes::scalar`);
/// x17 and x8 are the integer masm's scratch registers.
const SCALAR: [Gpr; 8] = [G9, G10, G11, G12, G13, G14, G15, G16];

/// Out-of-line subroutines (see [`A64Masm::outline`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stub {
    FixupRtz(Vreg),
    FixupF32(Vreg),
    /// Round the two f64 lanes to the mode's precision, nearest-even.
    RoundF64(Vreg),
    /// RSQ of the register in place (its lane 0, or every lane for the NEON lane emitter).
    Rsq(Vreg, LaneSet),
    Ex2(Vreg),
    Lg2(Vreg),
}

/// The NEON emitters' [`Float`] steps for the float recipes (`crate::pica::recipes`), over the
/// host's lane operations (`crate::host::a64::lanes`: four f32 or two f64 lanes of a q
/// register), with the constants the entries keep in v24-v31. The rounding and range steps
/// are shared subroutines, inline in the body of one (`leaf`).
pub(crate) struct QV<'a> {
    m: &'a mut A64Masm,
    /// Scratch register for constants.
    k: Vreg,
    /// Second scratch of the lane operations beside `k`.
    k2: Vreg,
    /// Where [`Halves::pack_half`] keeps its halves.
    pack: Vreg,
    /// Emitting the body of a shared subroutine: x30 holds its return address, so the
    /// rounding and range steps are inline instead of `bl` to their subroutines.
    leaf: bool,
}

impl Float for QV<'_> {
    type R = Vreg;
    type H<'b>
        = Neon<'b>
    where
        Self: 'b;

    fn h(&mut self) -> Neon<'_> {
        let (k, k2) = (self.k, self.k2);
        self.m.neon_with(k, k2)
    }

    fn mode(&self) -> FloatMode {
        self.m.mode
    }

    fn round64(&mut self, d: Vreg) {
        if self.leaf {
            self.m.body_round_f64(d);
        } else {
            self.m.outline(Stub::RoundF64(d));
        }
    }

    fn range(&mut self, v: Vreg) {
        match (self.leaf, self.m.mode) {
            (false, _) => self.m.fixup_out(v),
            (true, FloatMode::F32) => self.m.body_fixup_f32(v),
            (true, FloatMode::F24(_)) => self.m.body_fixup_rtz(v),
        }
    }

    fn rne17(&mut self, v: Vreg) {
        recipes::rne17_f32(&mut self.m.neon(T1), v, [T0, T2]);
        self.m.fixup_rtz(v);
    }

    /// Inline; clobbers T0-T7.
    fn binop64(&mut self, d: Vreg, a: Vreg, b: Vreg, mul: bool) {
        recipes::f64_binop(self, d, a, b, mul, [T4, T5, T6, T7]);
    }

    /// The code runs with FZ = 0 (module docs), where FDIV rounds an F32 quotient below
    /// 2^-126 onto the subnormal grid: F32 quotients take the products' path, f64 and the
    /// integer rounding to 24 bits.
    fn rcp_f32_through_f64(&self) -> bool {
        true
    }
}

/// LG2's halves in `pack`, narrowed into its low and high half (`xtn`, `xtn2`).
impl Halves for QV<'_> {
    fn pack_half(&mut self, hi: bool, a: Vreg, _t: Vreg) {
        if hi {
            self.m.a.xtn2_4s(self.pack, a);
        } else {
            self.m.a.xtn_2s(self.pack, a);
        }
    }

    fn packed(&mut self, d: Vreg) {
        self.m.a.mov_16b(d, self.pack);
    }
}

/// One annotation: code offset, PICA address, text.
pub type Mark = (usize, u32, String);

/// AArch64 code generator for one program.
pub struct A64Masm {
    a: Asm,
    mode: FloatMode,
    /// The MAX reading (`picajit_interp::pica::float::MaxRule`); the default unless set.
    pub max_rule: MaxRule,
    marks: Vec<Mark>,
    exit_done: DynamicLabel,
    exit_deopt: DynamicLabel,
    exit_budget: DynamicLabel,
    epilogue: DynamicLabel,
    batch_entry: usize,
    /// Temporaries and outputs the batch entry clears before each row, and the outputs every
    /// finished row has set (see [`A64Masm::with_batch_zero`]).
    batch_zero: (u16, u16, u16),
    stubs: StubTable<Stub, DynamicLabel>,
    /// The constants the entries keep in registers (see [`Self::load_pinned`]), as the
    /// lane operations look them up: values, and magnitude-key bounds `<< 1`.
    pinned: [(u32, Vreg); 5],
    pinned_keys: [(u32, Vreg); 3],
}

fn val(v: Val) -> Vreg {
    VALS[v.0 as usize]
}

/// `tbl` byte indices implementing a PICA component selector (lane 0 = x).
pub fn swizzle_table(s: Swizzle) -> [u32; 4] {
    s.lanes().map(|l| {
        let b = 4 * l as u32;
        b | (b + 1) << 8 | (b + 2) << 16 | (b + 3) << 24
    })
}

impl A64Masm {
    /// A code generator for `mode`.
    pub fn new(mode: FloatMode) -> A64Masm {
        let mut a = Asm::new();
        let exit_done = a.new_label();
        let exit_deopt = a.new_label();
        let exit_budget = a.new_label();
        let epilogue = a.new_label();
        A64Masm {
            a,
            mode,
            max_rule: MaxRule::default(),
            marks: Vec::new(),
            exit_done,
            exit_deopt,
            exit_budget,
            epilogue,
            batch_entry: 0,
            batch_zero: (0xFFFF, 0xFFFF, 0xFFFF),
            stubs: StubTable::default(),
            pinned: [
                (SIGN, K_SIGN),
                (CANONICAL_NAN_BITS, K_CANON),
                (ONE, K_ONE),
                (INF, K_INF),
                (F24_GRID_F32, K_TRUNC),
            ],
            pinned_keys: [
                (min_normal(mode) << 1, K_MIN2),
                (F24_OVERFLOW_F32 << 1, K_OVF2),
                (INF << 1, K_NAN2),
            ],
        }
    }

    /// Direct access to the assembler (encoding tests).
    pub fn asm(&mut self) -> &mut Asm {
        &mut self.a
    }

    /// Precision (significant bits) of the mode's results.
    fn prec(&self) -> u32 {
        match self.mode {
            FloatMode::F32 => 24,
            FloatMode::F24(_) => 17,
        }
    }

    /// Load the pinned constants (both entries).
    pub(crate) fn load_pinned(&mut self) {
        let min2 = min_normal(self.mode) << 1;
        for (r, v) in [
            (K_SIGN, SIGN),
            (K_CANON, CANONICAL_NAN_BITS),
            (K_NAN2, INF << 1),
            (K_MIN2, min2),
            (K_ONE, ONE),
            (K_INF, INF),
            (K_TRUNC, F24_GRID_F32),
            (K_OVF2, F24_OVERFLOW_F32 << 1),
        ] {
            self.a.load_const(r, [v; 4]);
        }
    }

    /// The host's lane operations on this code, materialising constants that no pinned
    /// register holds in `k` (which is also their second scratch register).
    pub(crate) fn neon(&mut self, k: Vreg) -> Neon<'_> {
        self.neon_with(k, k)
    }

    /// [`Self::neon`] with the second scratch register `k2`.
    fn neon_with(&mut self, k: Vreg, k2: Vreg) -> Neon<'_> {
        Neon::new(&mut self.a, k, k2, &self.pinned, &self.pinned_keys)
    }

    /// The recipes' view of this emitter (`crate::pica::recipes`), its lane operations as
    /// [`Self::neon`] gives them.
    pub(crate) fn qv(&mut self, k: Vreg) -> QV<'_> {
        QV {
            m: self,
            k,
            k2: k,
            pack: k,
            leaf: false,
        }
    }

    /// [`Self::qv`] for the body of a shared subroutine (`QV::leaf`).
    fn qv_leaf(&mut self, k: Vreg) -> QV<'_> {
        QV {
            leaf: true,
            ..self.qv(k)
        }
    }

    /// The lane recipes' view of this emitter (`crate::pica::recipes::transcendental_lanes`, for
    /// the NEON lane emitter): constants in `k[0]`, the lane operations' second scratch in
    /// `k[1]`, packed halves in `k[2]`; the three must differ from the recipe's registers.
    pub(crate) fn lanes(&mut self, k: [Vreg; 3]) -> QV<'_> {
        QV {
            k2: k[1],
            pack: k[2],
            ..self.qv(k[0])
        }
    }

    /// Rule 1 of the float model: lanes below the mode's smallest normal (and -0) become +0.
    /// `|x| << 1 >= min << 1` keeps infinities and NaNs. Clobbers T0.
    pub fn flush(&mut self, v: Vreg) {
        let mode = self.mode;
        recipes::flush(&mut self.neon(T1), mode, v, T0);
    }

    /// `float::f24_fixup_rtz` on four lanes, in place. Clobbers T0-T2.
    fn body_fixup_rtz(&mut self, v: Vreg) {
        recipes::f24_fixup_rtz(&mut self.neon(T3), v, v, [T0, T1, T2]);
    }

    /// `float::f32_fixup` on four lanes, in place. Clobbers T0, T1.
    fn body_fixup_f32(&mut self, v: Vreg) {
        recipes::f32_fixup(&mut self.neon(T2), v, v, [T0, T1]);
    }

    /// Round the two f64 lanes of `d` to the mode's precision, nearest-even, on their bit
    /// patterns (`recipes::round_f64`), and flush rounded magnitudes below the mode's
    /// smallest normal to +0. Clobbers T0, T1.
    fn body_round_f64(&mut self, d: Vreg) {
        let prec = self.prec();
        recipes::round_f64(&mut self.neon(T1), d, prec, T0);
        let min_f64: u64 = match self.mode {
            FloatMode::F32 => (1023 - 126) << 52,
            FloatMode::F24(_) => (1023 - 62) << 52,
        };
        let splat64 = |v: u64| [v as u32, (v >> 32) as u32, v as u32, (v >> 32) as u32];
        // Rule 3 before narrowing: FCVTN would round a value below the smallest normal a
        // second time, onto the subnormal grid (2^-126 - 2^-150 → 2^-126 in F32 mode). The
        // x86-64 paths round only F24 values through f64, whose tiny results the f32 range
        // step after narrowing clears.
        let a = &mut self.a;
        a.shl_2d(T0, d, 1);
        a.load_const(T1, splat64(min_f64 << 1));
        a.cmhs_2d(T0, T0, T1);
        a.and_16b(d, d, T0);
    }

    /// `float::f24_fixup_rtz` (shared subroutine).
    pub fn fixup_rtz(&mut self, v: Vreg) {
        self.outline(Stub::FixupRtz(v));
    }

    /// `float::f32_fixup` (shared subroutine).
    pub fn fixup_f32(&mut self, v: Vreg) {
        self.outline(Stub::FixupF32(v));
    }

    /// The fix-up after an f64 path rounded and narrowed to f32: range rules of the mode.
    fn fixup_out(&mut self, v: Vreg) {
        match self.mode {
            FloatMode::F32 => self.fixup_f32(v),
            FloatMode::F24(_) => self.fixup_rtz(v),
        }
    }

    /// `a = round(a op b)` lane-wise through f64 (`recipes::f64_binop`: exact products; sums
    /// of f24 values), then the mode's range rules. Clobbers T0-T7.
    fn f64_binop(&mut self, a: Vreg, b: Vreg, mul: bool) {
        self.qv(T1).binop64(a, a, b, mul);
    }

    /// Lane-wise add of two flushed operands (or mode results) into `a`.
    fn add_flushed(&mut self, a: Vreg, b: Vreg) {
        recipes::add(&mut self.qv(T1), a, a, b);
    }

    /// `float::mul` lane-wise: `a = mul(a, b)`. Flushes `b` in place.
    fn mul_full(&mut self, a: Vreg, b: Vreg) {
        self.flush(a);
        self.flush(b);
        match self.mode {
            FloatMode::F24(Rounding::TowardZero) => {
                self.a.fmul_4s(T4, a, b);
                let mut q = self.neon(T6);
                q.ordered(T5, a, b);
                recipes::inf_times_zero(&mut q, a, T4, T5, T6);
                self.fixup_rtz(a);
            }
            _ => {
                self.neon(T6).ordered(SA, a, b);
                self.f64_binop(a, b, true);
                recipes::inf_times_zero(&mut self.neon(T6), a, a, SA, T6);
            }
        }
    }

    /// Pairwise sum of the four lanes of `p` (mode results), broadcast: `(p0+p1)+(p2+p3)`
    /// (`recipes::pairwise_sum`).
    fn pairwise_sum(&mut self, p: Vreg) {
        recipes::pairwise_sum(&mut self.qv(T1), p, [T4, T5]);
    }

    /// RSQ of the flushed lanes of `v` in place (`recipes::reciprocal::rsq`; the body of
    /// `Stub::Rsq`). Clobbers T0-T7.
    fn body_rsq(&mut self, v: Vreg, lanes: LaneSet) {
        reciprocal::rsq(&mut self.qv_leaf(T2), lanes, v, v, [T4, T5, T6, T7, T0, T1]);
    }

    /// RCP or RSQ of every lane of `x` (flushed here, in place) into `d`: the NEON lane
    /// emitter's four vertices at once. `d` must not be a scratch register of the recipes.
    pub(crate) fn reciprocal_lanes(&mut self, kind: ScalarKind, d: Vreg, x: Vreg) {
        self.flush(x);
        if kind == ScalarKind::Rcp {
            reciprocal::rcp(&mut self.qv(T1), LaneSet::All, d, x, [T4, T5, T6]);
        } else {
            self.outline(Stub::Rsq(x, LaneSet::All));
            self.a.mov_16b(d, x);
        }
    }

    /// Call the shared subroutine for `stub`, creating it on first use (see [`StubTable`]).
    fn outline(&mut self, stub: Stub) {
        let a = &mut self.a;
        let l = self.stubs.label(stub, || a.new_label());
        self.a.bl(l);
    }

    /// Finish code that another generator emitted through [`Self::asm`] with this masm's
    /// recipes (the NEON lane backend, `batch/a64.rs`): the shared subroutines it requested,
    /// then the literal pool. Returns the code, the instruction bytes and the marks.
    pub(crate) fn finish_code(mut self) -> Result<(Vec<u8>, usize, Vec<Mark>), String> {
        self.emit_stubs();
        let (code, len) = self.a.finish()?;
        Ok((code, len, self.marks))
    }

    /// Emit every requested subroutine.
    fn emit_stubs(&mut self) {
        if self.stubs.has_pending() {
            self.marks
                .push((self.a.offset().0, u32::MAX, "shared subroutines".into()));
        }
        while let Some((stub, l)) = self.stubs.next_pending() {
            self.a.bind(l);
            match stub {
                Stub::FixupRtz(v) => self.body_fixup_rtz(v),
                Stub::FixupF32(v) => self.body_fixup_f32(v),
                Stub::RoundF64(v) => self.body_round_f64(v),
                Stub::Rsq(v, lanes) => self.body_rsq(v, lanes),
                Stub::Ex2(v) | Stub::Lg2(v) => {
                    self.a.fmov_ws(SCALAR[0], v);
                    let e = &mut A64Int::new(&mut self.a, [G17, G8]);
                    if matches!(stub, Stub::Ex2(_)) {
                        scalar::ex2(e, self.mode, SCALAR);
                    } else {
                        scalar::lg2(e, self.mode, SCALAR);
                    }
                    self.a.fmov_sw(v, SCALAR[0]);
                }
            }
            self.a.ret(LR);
        }
    }

    /// Address of a register operand as (base, offset), or for relative constants the
    /// index register set up in x9 (scaled by 16 in the load) with base x10.
    fn load_src(&mut self, d: Vreg, loc: SrcLoc) {
        match loc {
            SrcLoc::Input(i) => self.a.ldr_q(d, INPUT, VEC_SIZE * i as i32),
            SrcLoc::Temp(i) => self.a.ldr_q(d, REGS, REG_TEMP + VEC_SIZE * i as i32),
            SrcLoc::Const {
                index,
                rel: RelIndex::None,
            } => self
                .a
                .ldr_q(d, UNIFORMS, UNI_FLOAT + VEC_SIZE * index as i32),
            SrcLoc::Const { index, rel } => {
                let off = match rel {
                    RelIndex::A0X => REG_A0,
                    RelIndex::A0Y => REG_A0 + 4,
                    _ => REG_AL,
                };
                let a = &mut self.a;
                a.ldr_w(G9, REGS, off);
                rows::rel_row(a, G9, G10, index as u32);
                a.add_xi(G10, UNIFORMS, UNI_FLOAT as u32);
                a.ldr_q_idx(d, G10, G9);
            }
        }
    }

    fn dst_addr(d: &Dest) -> (Gpr, i32) {
        if d.output {
            (OUTPUT, VEC_SIZE * d.index as i32)
        } else {
            (REGS, REG_TEMP + VEC_SIZE * d.index as i32)
        }
    }

    /// Store 0/1 flags from w9 (cmp.x) and w10 (cmp.y): any non-zero low bit counts.
    fn store_flags(&mut self) {
        let a = &mut self.a;
        a.and_wi(G9, G9, 1);
        a.and_wi(G10, G10, 1);
        a.strb_w(G9, REGS, REG_CMP);
        a.strb_w(G10, REGS, REG_CMP + 1);
    }

    /// The FPCR value of the mode.
    pub(crate) fn fpcr(&self) -> u32 {
        match self.mode {
            FloatMode::F24(Rounding::TowardZero) => FPCR_RZ,
            _ => 0,
        }
    }

    /// The batch entry clears, per row, only temporaries `temps` and outputs `outputs`
    /// (x86-64's rule, `pica/x64/mod.rs`); `set` is the outputs a finished row has set.
    pub fn with_batch_zero(mut self, temps: u16, outputs: u16, set: u16) -> A64Masm {
        self.batch_zero = (temps, outputs, set);
        self
    }

    /// Save the callee-saved registers, load the context pointers and the float environment.
    /// The batch entry (`single == false`) keeps its working registers (temporaries, a0, aL,
    /// cmp) in a stack frame of its own ([`WORK_FRAME`]) instead of `ctx.regs`.
    fn entry(&mut self, single: bool) {
        let fpcr = self.fpcr();
        let a = &mut self.a;
        ENTRY_FRAME.enter(a);
        if single {
            a.ldr_x(REGS, CTX, CTX_REGS);
            a.ldr_x(INPUT, CTX, CTX_INPUT);
            a.ldr_x(OUTPUT, CTX, CTX_OUTPUT);
            a.ldr_x(BUDGET, CTX, CTX_BUDGET);
        } else {
            a.sub_xi(SP, SP, WORK_FRAME as u32);
            a.sub_xi(REGS, SP, REG_TEMP as u32);
        }
        a.ldr_x(UNIFORMS, CTX, CTX_UNIFORMS);
        // FPCR holds control bits only (the flags are FPSR's): written only when it differs
        // from the mode's, since MSR FPCR is a serialising write on many cores.
        let skip = a.new_label();
        a.mrs_fpcr(G9);
        a.str_w(G9, CTX, CTX_SAVED_MXCSR);
        a.mov_imm_w(G10, fpcr);
        a.cmp_w(G9, G10);
        a.b_cond(Cond::Eq, skip);
        a.msr_fpcr(G10);
        a.bind(skip);
        self.load_pinned();
    }
}

impl MacroAssembler for A64Masm {
    type Label = DynamicLabel;

    fn new_label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a.bind(l);
    }

    fn mark(&mut self, pc: u32, text: &str) {
        self.marks.push((self.a.offset().0, pc, text.to_string()));
    }

    fn prologue(&mut self) {
        let body = self.a.new_label();
        let epilogue = self.epilogue;
        // Single-invocation entry (offset 0): the body's exits go straight to the epilogue.
        self.entry(true);
        self.a.adr(EXIT_LINK, epilogue);
        self.a.b(body);

        // Batch entry: one vertex-shader invocation per row, each from the reset state.
        self.batch_entry = self.a.offset().0;
        let (top, finished, row_done) =
            (self.a.new_label(), self.a.new_label(), self.a.new_label());
        let stop = self.a.new_label();
        self.entry(false);
        let (temps, outputs, _) = self.batch_zero;
        let a = &mut self.a;
        a.adr(EXIT_LINK, row_done);
        a.bind(top);
        a.ldr_x(G9, CTX, CTX_BATCH_DONE);
        a.ldr_x(G10, CTX, CTX_BATCH_COUNT);
        a.cmp_x(G9, G10);
        a.b_cond(Cond::Hs, finished);
        a.lsl_xi(G9, G9, 8);
        a.ldr_x(INPUT, CTX, CTX_BATCH_INPUT);
        a.add_x(INPUT, INPUT, G9);
        a.ldr_x(OUTPUT, CTX, CTX_BATCH_OUTPUT);
        a.add_x(OUTPUT, OUTPUT, G9);
        a.movi_zero(T0);
        for (mask, base, off) in [(outputs, OUTPUT, 0), (temps, REGS, REG_TEMP)] {
            // Pairs where both rows are cleared, single rows otherwise.
            for i in 0..8 {
                match (mask >> (2 * i)) & 3 {
                    3 => a.stp_q(T0, T0, base, off + 2 * VEC_SIZE * i),
                    1 => a.str_q(T0, base, off + 2 * VEC_SIZE * i),
                    2 => a.str_q(T0, base, off + VEC_SIZE * (2 * i + 1)),
                    _ => {}
                }
            }
        }
        a.str_q(T0, REGS, REG_A0);
        a.ldr_x(BUDGET, CTX, CTX_BUDGET);
        a.b(body);
        a.bind(row_done);
        a.cbnz_w(X0, stop);
        a.ldr_x(G9, CTX, CTX_BUDGET);
        a.sub_x(G9, G9, BUDGET);
        a.ldr_x(G10, CTX, CTX_BATCH_INSTRUCTIONS);
        a.add_x(G10, G10, G9);
        a.str_x(G10, CTX, CTX_BATCH_INSTRUCTIONS);
        a.ldr_x(G9, CTX, CTX_BATCH_DONE);
        a.add_xi(G9, G9, 1);
        a.str_x(G9, CTX, CTX_BATCH_DONE);
        a.b(top);
        a.bind(finished);
        a.movz_w(X0, Status::Done as u32, 0);
        a.bind(stop);
        a.add_xi(SP, SP, WORK_FRAME as u32);
        a.b(epilogue);

        a.bind(body);
    }

    fn charge_budget(&mut self, n: u32) {
        let l = self.exit_budget;
        if n < 4096 {
            self.a.subs_xi(BUDGET, BUDGET, n);
        } else {
            self.a.mov_imm_w(G9, n);
            self.a.subs_x(BUDGET, BUDGET, G9);
        }
        self.a.b_cond(Cond::Lo, l);
    }

    fn jump(&mut self, target: DynamicLabel) {
        self.a.b(target);
    }

    fn branch(&mut self, guard: Guard, target: DynamicLabel) {
        let a = &mut self.a;
        match guard {
            Guard::Cond(c) => match c.op {
                CondOp::X => {
                    a.ldrb_w(G9, REGS, REG_CMP);
                    a.cmp_wi(G9, c.ref_x as u32);
                    a.b_cond(Cond::Eq, target);
                }
                CondOp::Y => {
                    a.ldrb_w(G9, REGS, REG_CMP + 1);
                    a.cmp_wi(G9, c.ref_y as u32);
                    a.b_cond(Cond::Eq, target);
                }
                CondOp::And => {
                    a.ldrh_w(G9, REGS, REG_CMP);
                    a.cmp_wi(G9, c.ref_x as u32 | (c.ref_y as u32) << 8);
                    a.b_cond(Cond::Eq, target);
                }
                CondOp::Or => {
                    a.ldrb_w(G9, REGS, REG_CMP);
                    a.cmp_wi(G9, c.ref_x as u32);
                    a.b_cond(Cond::Eq, target);
                    a.ldrb_w(G9, REGS, REG_CMP + 1);
                    a.cmp_wi(G9, c.ref_y as u32);
                    a.b_cond(Cond::Eq, target);
                }
            },
            Guard::Bool { b, value } => {
                a.ldrh_w(G9, UNIFORMS, UNI_BOOL);
                a.tst_wi(G9, 1 << (b & 15));
                a.b_cond(if value { Cond::Ne } else { Cond::Eq }, target);
            }
        }
    }

    fn loop_init(&mut self, int: u8, slot: u8) {
        let i = UNI_INT + 4 * (int & 3) as i32;
        let a = &mut self.a;
        a.ldrb_w(G9, UNIFORMS, i + 1);
        a.str_w(G9, REGS, REG_AL);
        a.ldrb_w(G9, UNIFORMS, i);
        a.str_w(G9, CTX, CTX_LOOP_COUNTERS + 4 * slot as i32);
    }

    fn loop_step(&mut self, int: u8, slot: u8, again: DynamicLabel) {
        let i = UNI_INT + 4 * (int & 3) as i32;
        let c = CTX_LOOP_COUNTERS + 4 * slot as i32;
        let a = &mut self.a;
        a.ldrb_w(G9, UNIFORMS, i + 2);
        a.ldr_w(G10, REGS, REG_AL);
        a.add_w(G10, G10, G9);
        a.str_w(G10, REGS, REG_AL);
        // No borrow means the counter was at least 1: iterate again (the slot is
        // re-initialised before any reuse, so the wrapped value is never read).
        a.ldr_w(G9, CTX, c);
        a.subs_wi(G9, G9, 1);
        a.str_w(G9, CTX, c);
        a.b_cond(Cond::Hs, again);
    }

    fn exit_end(&mut self) {
        let l = self.exit_done;
        self.a.b(l);
    }

    fn exit_deopt(&mut self, pc: u32) {
        let l = self.exit_deopt;
        self.a.mov_imm_w(G9, pc);
        self.a.str_w(G9, CTX, CTX_DEOPT_PC);
        self.a.b(l);
    }

    fn load(&mut self, dst: Val, src: &Source) {
        let d = val(dst);
        self.load_src(d, src.loc);
        if src.swizzle != Swizzle::IDENTITY {
            let l = src.swizzle.lanes();
            if l.iter().all(|&x| x == l[0]) {
                self.a.dup_4s(d, d, l[0] as u32);
            } else {
                self.a.load_const(T0, swizzle_table(src.swizzle));
                self.a.tbl_16b(d, d, T0);
            }
        }
        if src.negate {
            self.a.eor_16b(d, d, K_SIGN);
        }
    }

    fn store(&mut self, dst: &Dest, v: Val) {
        let s = val(v);
        let (base, off) = Self::dst_addr(dst);
        match dst.mask.0 & 0xF {
            0 => {}
            0xF => self.a.str_q(s, base, off),
            0x8 => self.a.str_s(s, base, off),
            mask => {
                let lanes = [0, 1, 2, 3].map(|l| if mask >> (3 - l) & 1 != 0 { !0 } else { 0 });
                self.a.ldr_q(T0, base, off);
                self.a.load_const(T1, lanes);
                self.a.bit_16b(T0, s, T1);
                self.a.str_q(T0, base, off);
            }
        }
    }

    fn binary(&mut self, kind: BinaryKind, dst: Val, a: Val, b: Val) {
        let (d, x, y) = (val(dst), val(a), val(b));
        match kind {
            BinaryKind::Add => {
                self.flush(x);
                self.flush(y);
                self.add_flushed(x, y);
                self.a.mov_16b(d, x);
            }
            BinaryKind::Mul => {
                self.mul_full(x, y);
                self.a.mov_16b(d, x);
            }
            BinaryKind::Max => {
                let rule = self.max_rule;
                recipes::max(&mut self.neon(T1), rule, T0, x, y, T1);
                self.a.mov_16b(d, T0);
            }
            BinaryKind::Min => {
                self.neon(T1).min_f32(T0, x, Src::R(y));
                self.a.mov_16b(d, T0);
            }
            BinaryKind::Sge | BinaryKind::Slt => {
                let slt = kind == BinaryKind::Slt;
                recipes::set_if(&mut self.neon(T1), slt, d, x, y, T0);
            }
        }
    }

    fn mad(&mut self, dst: Val, a: Val, b: Val, c: Val) {
        let (d, x, y, z) = (val(dst), val(a), val(b), val(c));
        self.mul_full(x, y);
        self.flush(z);
        self.add_flushed(x, z);
        self.a.mov_16b(d, x);
    }

    fn dot(&mut self, kind: DotKind, dst: Val, a: Val, b: Val) {
        let (d, x, y) = (val(dst), val(a), val(b));
        if kind == DotKind::Dph {
            self.a.ins_s(x, 3, K_ONE, 0);
        }
        self.mul_full(x, y);
        if kind == DotKind::Dp3 {
            self.a.ins_s_w(x, 3, ZR);
        }
        self.pairwise_sum(x);
        self.a.mov_16b(d, x);
    }

    fn dst(&mut self, dst: Val, a: Val, b: Val) {
        let (d, x, y) = (val(dst), val(a), val(b));
        self.a.mov_16b(T8, x);
        self.a.mov_16b(T9, y);
        self.mul_full(x, y);
        recipes::dst::dst(&mut self.neon(T0), x, T8, T9);
        self.a.mov_16b(d, x);
    }

    fn flr(&mut self, dst: Val, a: Val) {
        let (d, x) = (val(dst), val(a));
        self.flush(x);
        recipes::flr(&mut self.qv(T1), x, x);
        self.a.mov_16b(d, x);
    }

    fn scalar(&mut self, kind: ScalarKind, dst: Val, a: Val) {
        let (d, x) = (val(dst), val(a));
        self.flush(x);
        match kind {
            ScalarKind::Rcp => {
                reciprocal::rcp(&mut self.qv(T1), LaneSet::First, T7, x, [T4, T5, T6]);
                self.a.mov_16b(x, T7);
            }
            ScalarKind::Rsq => self.outline(Stub::Rsq(x, LaneSet::First)),
            ScalarKind::Ex2 => self.outline(Stub::Ex2(x)),
            ScalarKind::Lg2 => self.outline(Stub::Lg2(x)),
        }
        self.a.dup_4s(x, x, 0);
        self.a.mov_16b(d, x);
    }

    fn litp(&mut self, dst: Val, a: Val) {
        let (d, x) = (val(dst), val(a));
        recipes::lit::litp(&mut self.neon(T2), T1, T0, x, [T3, T0]);
        self.a.umov_w(G9, T0, 0);
        self.a.umov_w(G10, T0, 3);
        self.store_flags();
        self.a.mov_16b(d, T1);
    }

    fn mova(&mut self, a: Val, x: bool, y: bool) {
        let v = val(a);
        recipes::convert::mova(&mut self.neon(T2), T0, v, T1);
        if x {
            self.a.umov_w(G9, T0, 0);
            self.a.str_w(G9, REGS, REG_A0);
        }
        if y {
            self.a.umov_w(G9, T0, 1);
            self.a.str_w(G9, REGS, REG_A0 + 4);
        }
    }

    fn cmp(&mut self, a: Val, b: Val, x: CmpOp, y: CmpOp) {
        let (va, vb) = (val(a), val(b));
        if recipes::compare::cmp_mask(&mut self.neon(T2), x, T0, va, vb) {
            self.a.umov_w(G9, T0, 0);
        } else {
            self.a.movz_w(G9, 1, 0);
        }
        if recipes::compare::cmp_mask(&mut self.neon(T2), y, T1, va, vb) {
            self.a.umov_w(G10, T1, 1);
        } else {
            self.a.movz_w(G10, 1, 0);
        }
        self.store_flags();
    }

    fn set_emit(&mut self, vtx: u8, primitive: bool, winding: bool) {
        let v = vtx as u32 | (primitive as u32) << 8 | (winding as u32) << 16;
        self.a.mov_imm_w(G9, v);
        self.a.str_w(G9, CTX, CTX_SETEMIT);
    }

    fn emit_vertex(&mut self, pc: u32) {
        let ok = self.a.new_label();
        let a = &mut self.a;
        a.ldr_w(G9, CTX, CTX_EMIT_LEN);
        a.ldr_w(G10, CTX, CTX_EMIT_CAP);
        a.cmp_w(G9, G10);
        a.b_cond(Cond::Lo, ok);
        self.exit_deopt(pc);
        let a = &mut self.a;
        a.bind(ok);
        a.mov_imm_w(G10, EMIT_RECORD_SIZE as u32);
        a.ldr_x(G11, CTX, CTX_EMIT_BUF);
        a.madd_x(G11, G9, G10, G11);
        for i in 0..8 {
            a.ldp_q(T0, T1, OUTPUT, 2 * VEC_SIZE * i);
            a.stp_q(T0, T1, G11, EMIT_RECORD_OUTPUTS + 2 * VEC_SIZE * i);
        }
        a.ldrb_w(G12, CTX, CTX_SETEMIT);
        a.and_wi(G12, G12, 3);
        a.strb_w(G12, G11, EMIT_RECORD_FLAGS);
        a.ldrb_w(G12, CTX, CTX_SETEMIT + 1);
        a.strb_w(G12, G11, EMIT_RECORD_FLAGS + 1);
        a.ldrb_w(G12, CTX, CTX_SETEMIT + 2);
        a.strb_w(G12, G11, EMIT_RECORD_FLAGS + 2);
        a.add_wi(G9, G9, 1);
        a.str_w(G9, CTX, CTX_EMIT_LEN);
        // Swap banks by swapping pointers; the Rust side sorts out which buffer is which.
        a.ldr_x(G12, CTX, CTX_OTHER_BANK);
        a.str_x(OUTPUT, CTX, CTX_OTHER_BANK);
        a.mov_x(OUTPUT, G12);
    }

    fn finish(mut self) -> CompileResult<crate::pica::masm::Emitted> {
        let (done, deopt, budget) = (self.exit_done, self.exit_deopt, self.exit_budget);
        let epilogue = self.epilogue;
        let fpcr = self.fpcr();
        // Exits of the body continue in whichever entry started it, status in w0.
        let a = &mut self.a;
        for (l, s) in [
            (done, Status::Done),
            (budget, Status::Budget),
            (deopt, Status::Deopt),
        ] {
            a.bind(l);
            a.movz_w(X0, s as u32, 0);
            a.br(EXIT_LINK);
        }
        a.bind(epilogue);
        a.str_x(BUDGET, CTX, CTX_BUDGET);
        a.str_x(OUTPUT, CTX, CTX_OUTPUT);
        let kept = a.new_label();
        a.ldr_w(G9, CTX, CTX_SAVED_MXCSR);
        a.mov_imm_w(G10, fpcr);
        a.cmp_w(G9, G10);
        a.b_cond(Cond::Eq, kept);
        a.msr_fpcr(G9);
        a.bind(kept);
        ENTRY_FRAME.ret(a);
        self.emit_stubs();
        let (code, code_len) = self.a.finish().map_err(CompileError::Internal)?;
        Ok(crate::pica::masm::Emitted {
            code,
            marks: self.marks,
            code_len,
            batch_entry: self.batch_entry,
            batch_outputs_zeroed: self.batch_zero.2,
        })
    }
}
