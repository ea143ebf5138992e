//! The float model's vector recipes, written once for every emitter.
//!
//! Each recipe here is one of the float model's "What a JIT must do" steps
//! (`picajit_interp::pica::float`, module docs) expressed over a few primitive vector operations, the
//! [`VecOps`] trait. Three hosts implement the trait:
//!
//! * the per-vertex x86-64 masm (`crate::pica::x64::masm`: four components in an xmm register, VEX
//!   three-operand forms where AVX is present, the SSE fallback otherwise),
//! * the AVX2 lane emitter (`crate::pica::x64::lanes`: eight vertices in a ymm register),
//! * the AArch64 masm (`crate::pica::a64::masm`: a q register, which the NEON lane emitter
//!   `crate::pica::a64::lanes` also uses, four vertices at a time).
//!
//! A host implements only what it encodes differently (a magnitude compare is `and` + signed
//! compare on x86-64 and shift + unsigned compare on AArch64; a select is `bit` on AArch64
//! and an xor sequence on x86-64); the order of the steps, the constants and the special
//! cases are decided here. Where a host keeps a step of its own (AArch64's flush of rounded
//! f64 values before narrowing; x86-64's branch to a shared slow path) the host's module says
//! why.
//!
//! RCP and RSQ are in [`reciprocal`] (f64 division, square root and compares; every lane or
//! lane 0, for all four emitters). EX2 and LG2 are written once per shape: [`scalar`] (one
//! lane, in general-purpose registers, for the per-vertex code of both hosts) and
//! [`transcendental_lanes`] (every lane of a vector, for the AVX2 and NEON lane emitters).
//!
//! Registers are chosen by the caller: every recipe names its scratch registers in its
//! arguments, so the hosts' register conventions (which scratch registers a sequence may
//! clobber) stay where they are documented.

pub mod address;
pub mod compare;
pub mod convert;
pub mod dst;
pub mod lit;
pub mod reciprocal;
pub mod scalar;
pub mod transcendental_lanes;

use picajit_interp::pica::float::precision::{
    F24_F64_DROP, F24_GRID_F32, F24_GRID_F64, F24_MIN_NORMAL_F32, F24_OVERFLOW_F32, F24_SIG_BITS,
    F32_MIN_NORMAL_F32,
};
use picajit_interp::pica::float::{FloatMode, MaxRule, CANONICAL_NAN_BITS};

/// Magnitude bits of an f32.
pub const ABS: u32 = 0x7FFF_FFFF;
/// Sign bit of an f32.
pub const SIGN: u32 = 0x8000_0000;
/// +inf.
pub const INF: u32 = 0x7F80_0000;
/// Mantissa bits of an f32.
pub const MANT: u32 = 0x007F_FFFF;
/// 1.0.
pub const ONE: u32 = 0x3F80_0000;
/// f64 bits of 1.0.
pub const ONE64: u64 = 0x3FF0_0000_0000_0000;
/// The 17-bit truncation mask of f24 values held as f32.
pub const TRUNC17: u32 = F24_GRID_F32;
/// f32 bits of 2^64 minus one: magnitudes above are F24 overflow.
pub const F24_OVF_M1: u32 = F24_OVERFLOW_F32 - 1;
/// f32 bits of 2^-62 minus one: magnitudes above are normal f24 values.
pub const F24_MIN_M1: u32 = F24_MIN_NORMAL_F32 - 1;
/// f32 bits of 2^-126 minus one.
pub const F32_MIN_M1: u32 = F32_MIN_NORMAL_F32 - 1;
/// The quiet NaN an f64 NaN lane becomes before rounding (so the increment cannot carry out
/// of it).
pub const QNAN64: u64 = 0x7FF8_0000_0000_0000;

/// The bits of the largest magnitude the mode flushes to +0 (rule 1 of the float model):
/// lanes whose magnitude is above it are kept.
pub fn min_m1(mode: FloatMode) -> u32 {
    match mode {
        FloatMode::F32 => F32_MIN_M1,
        FloatMode::F24(_) => F24_MIN_M1,
    }
}

/// The mode's result format for `float::round_scaled` (the last step of EX2 and LG2, in both
/// shapes): significant bits kept, the unbiased exponents of the smallest normal and of the
/// overflow threshold, and whether it rounds to nearest-even (else toward zero).
pub fn result_format(mode: FloatMode) -> (u32, i32, i32, bool) {
    match mode {
        FloatMode::F24(r) => (
            F24_SIG_BITS,
            -62,
            64,
            r == picajit_interp::pica::float::Rounding::NearestEven,
        ),
        FloatMode::F32 => (24, -126, 128, true),
    }
}

/// Second source of a primitive: a register or a constant in every lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src<R> {
    /// A register.
    R(R),
    /// A 32-bit constant in every 32-bit lane.
    K(u32),
    /// A 64-bit constant in every 64-bit lane.
    K64(u64),
}

/// The primitive vector operations the recipes are composed of (bitwise operations on whole
/// registers, lane-wise integer arithmetic, compares to all-ones masks). `d` may name any
/// source unless a method says otherwise.
pub trait VecOps {
    /// A vector register.
    type R: Copy + PartialEq;

    /// `d = a & b`
    fn and(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a & b` on integer data (a host with separate integer and float bypass domains
    /// keeps integer chains in the integer one).
    fn and_int(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>) {
        self.and(d, a, b);
    }
    /// `d = a | b`
    fn or(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a ^ b`
    fn xor(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = !m & a`. May clobber `m` when `d` is `a` (the SSE form writes its first
    /// operand).
    fn andn(&mut self, d: Self::R, m: Self::R, a: Src<Self::R>);
    /// `d = a + b` in each 32-bit lane.
    fn add32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a + b` in each 64-bit lane.
    fn add64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a >> n` (logical) in each 32-bit lane.
    fn shr32(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d = a >> n` (logical) in each 64-bit lane.
    fn shr64(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d` = the host's magnitude key of the f32 lanes of `a`, which [`Self::key_gt`]
    /// compares (the key of one value may be compared several times).
    fn mag(&mut self, d: Self::R, a: Self::R);
    /// `d` = all-ones in the lanes whose magnitude (key `m`, from [`Self::mag`]) is above the
    /// non-negative f32 bit pattern `k`.
    fn key_gt(&mut self, d: Self::R, m: Self::R, k: u32);
    /// `d` = all-ones in the f32 lanes where neither `a` nor `b` is a NaN.
    fn ordered(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Make the NaN lanes of the f64 lanes of `d` the quiet NaN [`QNAN64`]. Clobbers `t`.
    fn quiet_nan64(&mut self, d: Self::R, t: Self::R);
    /// `d = k`: a copy of a register, or a constant in every lane.
    fn set(&mut self, d: Self::R, k: Src<Self::R>);

    /// `d = m ? a : d` bitwise. May clobber `m`; `a` must not be `m`.
    fn select(&mut self, d: Self::R, m: Self::R, a: Src<Self::R>) {
        if a == Src::R(d) {
            return;
        }
        // d ^ ((d ^ a) & m), with the masked difference built in `m`.
        self.xor(d, d, a);
        self.and(m, m, Src::R(d));
        self.xor(d, d, a);
        self.xor(d, d, Src::R(m));
    }

    /// `d` = all-ones in the lanes of `a` whose magnitude is above `k`.
    fn mag_gt(&mut self, d: Self::R, a: Self::R, k: u32) {
        self.mag(d, a);
        self.key_gt(d, d, k);
    }

    /// `d = k` in every 32-bit lane.
    fn konst(&mut self, d: Self::R, k: u32);
    /// `d = a ^ b` on integer data (see [`Self::and_int`]).
    fn xor_int(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>) {
        self.xor(d, a, b);
    }
    /// `d = a << n` in each 32-bit lane.
    fn shl32(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d` = all-ones in the 32-bit lanes where `a`, unsigned, is above `k`. `d` must differ
    /// from `a`.
    fn gt_u32(&mut self, d: Self::R, a: Self::R, k: u32);
}

/// A host whose recipes branch to out-of-line code for rare lanes (x86-64: a mask's sign
/// bits tested in a general register).
pub trait Branching: VecOps {
    /// A code label.
    type Label: Copy;
    /// Jump to `l` if any lane of the mask `m` is set.
    fn branch_any(&mut self, m: Self::R, l: Self::Label);
    /// Whether `and` writes a register other than its first source without a copy (VEX): it
    /// decides which of two equivalent orders is shorter.
    fn three_operand(&self) -> bool;
}

/// Rule 1 of the float model: lanes below the mode's smallest normal (and -0) become +0;
/// infinities and NaNs are kept. In place on `v`; clobbers `t`.
pub fn flush<E: VecOps>(e: &mut E, mode: FloatMode, v: E::R, t: E::R) {
    e.mag_gt(t, v, min_m1(mode));
    e.and(v, v, Src::R(t));
}

/// `float::f24_fixup_rtz` on every lane: `v` = `src` truncated to the 17-bit grid, magnitudes
/// below 2^-62 (and -0) +0, at or above 2^64 ±inf, NaN the canonical NaN. `t[0]` may be
/// `src` (read before `t[0]` is written); the others must differ from `v` and `src`.
///
/// The NaN lanes are found before truncating, so a NaN whose payload lies only in the low
/// bits is still one.
pub fn f24_fixup_rtz<E: VecOps>(e: &mut E, v: E::R, src: E::R, t: [E::R; 3]) {
    let [t0, t1, t2] = t;
    e.mag_gt(t1, src, INF); // NaN lanes
    e.and(v, src, Src::K(TRUNC17));
    e.mag(t0, v);
    e.key_gt(t2, t0, F24_OVF_M1); // |t| >= 2^64
    e.key_gt(t0, t0, F24_MIN_M1); // |t| >= 2^-62
    e.and(v, v, Src::R(t0));
    e.and(t0, v, Src::K(SIGN));
    e.or(t0, t0, Src::K(INF));
    e.select(v, t2, Src::R(t0));
    e.select(v, t1, Src::K(CANONICAL_NAN_BITS));
}

/// `float::f32_fixup` on every lane: `v` = `src` with magnitudes below 2^-126 (and -0) +0
/// and NaN the canonical NaN (the mode's arithmetic rounded already; overflow to inf is
/// right as it is). `t` must differ from `v` and `src`.
pub fn f32_fixup<E: VecOps>(e: &mut E, v: E::R, src: E::R, t: [E::R; 2]) {
    let [t0, t1] = t;
    e.mag(t0, src);
    e.key_gt(t1, t0, INF); // NaN lanes
    e.key_gt(t0, t0, F32_MIN_M1);
    e.and(v, src, Src::R(t0));
    e.select(v, t1, Src::K(CANONICAL_NAN_BITS));
}

/// The mode's range rules after rounding (F24, both roundings: [`f24_fixup_rtz`]; F32:
/// [`f32_fixup`]), from `src` into `v`. `t` as for [`f24_fixup_rtz`].
pub fn fixup<E: VecOps>(e: &mut E, mode: FloatMode, v: E::R, src: E::R, t: [E::R; 3]) {
    match mode {
        FloatMode::F32 => f32_fixup(e, v, src, [t[1], t[2]]),
        FloatMode::F24(_) => f24_fixup_rtz(e, v, src, t),
    }
}

/// Rule 6 of the float model, after the product `p` of operands whose ordered mask
/// ([`VecOps::ordered`]) is `ord_in`: a NaN product of non-NaN operands is inf × 0 and
/// becomes +0. Result in `out` (may be `p`); clobbers `t` and `ord_in`.
pub fn inf_times_zero<E: VecOps>(e: &mut E, out: E::R, p: E::R, ord_in: E::R, t: E::R) {
    e.ordered(t, p, p);
    e.andn(t, t, Src::R(ord_in)); // NaN product, ordered operands
    e.andn(out, t, Src::R(p));
}

/// Integer round-to-nearest-even of the f32 lanes of `v` (exact values) to the 17-bit grid,
/// NaN lanes made canonical (the increment may carry out of a NaN); the range rules
/// ([`f24_fixup_rtz`]) come after. `t` must differ from `v`.
pub fn rne17_f32<E: VecOps>(e: &mut E, v: E::R, t: [E::R; 2]) {
    let [t0, t1] = t;
    e.mag_gt(t1, v, INF); // NaN lanes
    e.shr32(t0, v, 7);
    e.and_int(t0, t0, Src::K(1));
    e.add32(t0, t0, Src::K(0x3F));
    e.add32(v, v, Src::R(t0));
    e.and_int(v, v, Src::K(TRUNC17));
    e.select(v, t1, Src::K(CANONICAL_NAN_BITS));
}

/// Round the f64 lanes of `d` to `prec` significant bits, nearest-even, on their bit
/// patterns, NaN lanes made quiet first. `t` must differ from `d`.
pub fn round_f64<E: VecOps>(e: &mut E, d: E::R, prec: u32, t: E::R) {
    let drop = 53 - prec;
    e.quiet_nan64(d, t);
    e.shr64(t, d, drop);
    e.and_int(t, t, Src::K64(1));
    e.add64(t, t, Src::K64((1 << (drop - 1)) - 1));
    e.add64(d, d, Src::R(t));
    e.and_int(d, d, Src::K64(!((1u64 << drop) - 1)));
}

/// [`round_f64`] to the f24 grid (17 bits).
pub fn round_f64_rne17<E: VecOps>(e: &mut E, d: E::R, t: E::R) {
    debug_assert_eq!(!((1u64 << F24_F64_DROP) - 1), F24_GRID_F64);
    round_f64(e, d, 53 - F24_F64_DROP, t);
}

/// The fast path of the mode's fix-up for hosts that keep rare lanes out of line: `v` =
/// `src` truncated to the mode's grid with tiny lanes and -0 made +0, unless a lane is an
/// overflow, inf or NaN (F24) or a NaN (F32), which jumps to `slow` first with `v` and `src`
/// untouched ([`fixup_slow`] then does the whole fix-up). Truncating after the compares is
/// right: both bounds plus one are multiples of 128, so truncation keeps every lane on its
/// side of them. `t` must differ from `v` and `src`.
pub fn fixup_fast<E: Branching>(
    e: &mut E,
    mode: FloatMode,
    v: E::R,
    src: E::R,
    t: [E::R; 2],
    slow: E::Label,
) {
    let [t0, t1] = t;
    let (high, trunc) = match mode {
        FloatMode::F32 => (INF, !0),
        FloatMode::F24(_) => (F24_OVF_M1, TRUNC17),
    };
    e.mag(t1, src);
    e.key_gt(t0, t1, high);
    e.key_gt(t1, t1, min_m1(mode));
    e.branch_any(t0, slow);
    if trunc == !0 {
        e.and(v, src, Src::R(t1));
    } else if e.three_operand() {
        // `src & trunc` does not wait for the compare: one dependent operation fewer between
        // `src` and `v` on the path every DP, MUL and ADD result takes.
        e.and(t0, src, Src::K(trunc));
        e.and(v, t0, Src::R(t1));
    } else {
        // Without VEX, `v = v & t1` is one instruction when `src` is `v`.
        e.and(v, src, Src::R(t1));
        e.and(v, v, Src::K(trunc));
    }
}

/// The slow path of [`fixup_fast`]: the whole fix-up of `src` into `v`, with
/// `mul = Some((a, b))` when `src` is the product of `a` and `b` (rule 6 repairs inf × 0).
/// `a` and `b` are read before `v` is written, so `v` may be `a`. `t` must differ from `v`,
/// `src`, `a` and `b`.
pub fn fixup_slow<E: VecOps>(
    e: &mut E,
    mode: FloatMode,
    v: E::R,
    src: E::R,
    mul: Option<(E::R, E::R)>,
    t: [E::R; 3],
) {
    let [t0, t1, t2] = t;
    if let Some((a, b)) = mul {
        e.ordered(t1, a, b);
        inf_times_zero(e, t0, src, t1, t2);
        fixup(e, mode, v, t0, t);
    } else {
        fixup(e, mode, v, src, t);
    }
}

/// What the rounded arithmetic recipes need beyond [`VecOps`]: f32 and f64 arithmetic,
/// conversion between f32 lanes and f64 halves, and the host's way of reaching the rounding
/// and range steps (a shared subroutine on some hosts, inline code on others; each is one of
/// the recipes above).
pub trait Arith: VecOps {
    /// The float mode of the code.
    fn mode(&self) -> FloatMode;
    /// `d` = the low (`hi` false) or high half of the f32 lanes of `a`, as f64.
    fn widen(&mut self, d: Self::R, a: Self::R, hi: bool);
    /// `d` = the f64 lanes of `lo` then `hi`, as f32 (rounded by the float environment:
    /// exact here, the values are on the mode's grid). May clobber `lo` and `hi`.
    fn narrow(&mut self, d: Self::R, lo: Self::R, hi: Self::R);
    /// The low half of the f32 lanes of `d` = the f64 lanes of `a` as f32 (the rest of `d`
    /// unspecified).
    fn narrow_lo(&mut self, d: Self::R, a: Self::R);
    /// `d = a + b` (`mul` false) or `a · b` on f64 lanes.
    fn op64(&mut self, d: Self::R, a: Self::R, b: Self::R, mul: bool);
    /// `d = a + b` on f32 lanes, rounded by the mode's float environment.
    fn add32f(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// [`round_f64`] of `d` to the mode's precision.
    fn round64(&mut self, d: Self::R);
    /// The mode's range rules ([`fixup`]) of `v` in place.
    fn range(&mut self, v: Self::R);
    /// [`rne17_f32`] then [`f24_fixup_rtz`] of `v` in place (F24 RNE).
    fn rne17(&mut self, v: Self::R);
    /// [`f64_binop`] with the host's temporaries (inline or in a shared subroutine).
    fn binop64(&mut self, d: Self::R, a: Self::R, b: Self::R, mul: bool);
    /// `d` = the f32 lanes of `a` rounded toward -inf (exact).
    fn floor(&mut self, d: Self::R, a: Self::R);
    /// `d = a > b ? a : b` on f32 lanes (the second operand when either is NaN).
    fn fmax(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d = a < b ? a : b` on f32 lanes (the second operand when either is NaN).
    fn fmin(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = all-ones where `a <= b` (false when either is NaN).
    fn le(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = all-ones where `a < b` (false when either is NaN).
    fn lt(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = all-ones in the lanes of `a` that are -inf.
    fn is_neg_inf(&mut self, d: Self::R, a: Self::R);

    /// `d` = all-ones where `a == b` (false when either is NaN).
    fn eq(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = all-ones where `a != b` (true when either is NaN).
    fn ne(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = all-ones where `a >= k`, `k` the bits of an f32 (false when `a` is NaN). `d`
    /// must differ from `a`.
    fn ge_k(&mut self, d: Self::R, a: Self::R, k: u32);
    /// `d = a > k ? a : k` on f32 lanes, `k` the bits of an f32 (`k` when `a` is NaN). `d`
    /// must differ from `a`.
    fn max_k(&mut self, d: Self::R, a: Self::R, k: u32);
    /// `d = a < k ? a : k` on f32 lanes (`k` when `a` is NaN). `d` must differ from `a`.
    fn min_k(&mut self, d: Self::R, a: Self::R, k: u32);
    /// Whether [`Self::trunc_i32`] is Rust's `as i32` already (saturating, NaN 0). When false
    /// it gives `i32::MIN` for NaN and for every lane out of the i32 range (x86-64's
    /// "integer indefinite").
    const TRUNC_SATURATES: bool;
    /// `d` = the f32 lanes of `a` as i32, truncated toward zero (out-of-range lanes: see
    /// [`Self::TRUNC_SATURATES`]).
    fn trunc_i32(&mut self, d: Self::R, a: Self::R);
    /// `d = a / b` on f32 lanes, rounded by the mode's float environment. `d` must differ
    /// from `b`.
    fn div32f(&mut self, d: Self::R, a: Src<Self::R>, b: Self::R);
    /// `d = a / b` on f64 lanes, rounded by the mode's float environment. `d` must differ
    /// from `b`.
    fn div64(&mut self, d: Self::R, a: Src<Self::R>, b: Self::R);
    /// `d = sqrt(a)` on f64 lanes, rounded by the mode's float environment.
    fn sqrt64(&mut self, d: Self::R, a: Self::R);
    /// `d` = all-ones in the f64 lanes where `a <= b` (false when either is NaN). `d` must
    /// differ from `b`.
    fn le64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = all-ones in the f64 lanes where `a < b` (false when either is NaN). `d` must
    /// differ from `b`.
    fn lt64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Whether F32-mode RCP divides in f64 and rounds to 24 bits ([`round64`](Self::round64))
    /// instead of dividing in f32 ([`reciprocal::rcp`]).
    fn rcp_f32_through_f64(&self) -> bool;
}

/// `d = round(a op b)` lane-wise through f64 (`op`: true = multiply, false = add; exact
/// products and sums of f24 values), then the mode's range rules. `d` may be `a` or `b`; `t`
/// (`a`'s low and high halves, then `b`'s) must differ from them. Both halves are computed
/// before either is rounded: the per-vertex code is latency-bound.
pub fn f64_binop<E: Arith>(e: &mut E, d: E::R, a: E::R, b: E::R, mul: bool, t: [E::R; 4]) {
    let [alo, ahi, blo, bhi] = t;
    e.widen(alo, a, false);
    e.widen(ahi, a, true);
    e.widen(blo, b, false);
    e.widen(bhi, b, true);
    e.op64(alo, alo, blo, mul);
    e.op64(ahi, ahi, bhi, mul);
    e.round64(alo);
    e.round64(ahi);
    e.narrow(d, alo, ahi);
    e.range(d);
}

/// The mode's rounding of an f32 result computed on flushed inputs with the mode's float
/// environment (F24 RTZ, F32) or exactly (F24 RNE: FLR, where the integer RNE rounds it).
pub fn fixup_mode<E: Arith>(e: &mut E, v: E::R) {
    match e.mode() {
        FloatMode::F24(picajit_interp::pica::float::Rounding::NearestEven) => e.rne17(v),
        _ => e.range(v),
    }
}

/// `d = float::add(a, b)` lane-wise for flushed operands (or mode results): through f64 in
/// F24 RNE ([`f64_binop`]), else the f32 sum and the mode's fix-up.
pub fn add<E: Arith>(e: &mut E, d: E::R, a: E::R, b: E::R) {
    if e.mode() == FloatMode::F24(picajit_interp::pica::float::Rounding::NearestEven) {
        e.binop64(d, a, b, false);
    } else {
        e.add32f(d, a, b);
        fixup_mode(e, d);
    }
}

/// Horizontal steps of the per-vertex code (one vertex's four components in a register).
pub trait Horizontal: Arith {
    /// `d` = the pairwise sums of the f64 lanes: (a0 + a1, b0 + b1).
    fn hadd64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Every f32 lane of `v` = lane 0.
    fn broadcast0(&mut self, v: Self::R);
    /// `d` = `a` with neighbouring f32 lanes swapped (1, 0, 3, 2).
    fn swap_pairs(&mut self, d: Self::R, a: Self::R);
    /// `d` = `a` with its halves swapped (2, 3, 0, 1).
    fn swap_halves(&mut self, d: Self::R, a: Self::R);

    /// The f32 lanes of `d` whose bit is set in `lanes` (bit 0: lane 0, x) = those of `a`;
    /// the others keep `d`'s.
    fn blend(&mut self, d: Self::R, a: Src<Self::R>, lanes: u8);
}

/// The sum of the four f32 lanes of `p` (mode results) as the float model adds them,
/// `(p0 + p1) + (p2 + p3)`, in every lane (DP3/DP4/DPH). Clobbers `t`.
pub fn pairwise_sum<E: Horizontal>(e: &mut E, p: E::R, t: [E::R; 2]) {
    let [t0, t1] = t;
    if e.mode() == FloatMode::F24(picajit_interp::pica::float::Rounding::NearestEven) {
        e.widen(t0, p, false);
        e.widen(t1, p, true);
        e.hadd64(t0, t0, t1); // (p0+p1, p2+p3)
        e.round64(t0);
        e.narrow_lo(p, t0);
        e.range(p);
        e.widen(t0, p, false);
        e.hadd64(t0, t0, t0);
        e.round64(t0);
        e.narrow_lo(p, t0);
        e.range(p);
        e.broadcast0(p);
    } else {
        // Every lane computes the same sums (IEEE addition commutes); lane 0 adds p0 + p1 in
        // that operand order, as the model does.
        e.swap_pairs(t0, p);
        e.add32f(p, p, t0); // (p0+p1, p1+p0, p2+p3, p3+p2)
        fixup_mode(e, p);
        e.swap_halves(t0, p);
        e.add32f(p, p, t0); // every lane: (p0+p1) + (p2+p3)
        fixup_mode(e, p);
    }
}

/// FLR of the flushed `a` into `d`: the floor (exact) and the mode's rounding of it.
pub fn flr<E: Arith>(e: &mut E, d: E::R, a: E::R) {
    e.floor(d, a);
    fixup_mode(e, d);
}

/// MAX: `a > b ? a : b` on raw operands (NaN: `b`), and under
/// [`MaxRule::NegInfSecond`] (`docs/float-max.md`) a -inf `b` is the result. Clobbers `t`,
/// which must differ from `d` and `b`.
pub fn max<E: Arith>(e: &mut E, rule: MaxRule, d: E::R, a: E::R, b: E::R, t: E::R) {
    e.fmax(d, a, b);
    if rule == MaxRule::NegInfSecond {
        e.is_neg_inf(t, b);
        e.select(d, t, Src::R(b));
    }
}

/// SGE (`slt` false) or SLT on raw operands: 1.0 where `a >= b` (`a < b`), else +0, NaN
/// comparing false. `t` may be `d` when `d` may be written before the operands are read.
pub fn set_if<E: Arith>(e: &mut E, slt: bool, d: E::R, a: E::R, b: E::R, t: E::R) {
    if slt {
        e.lt(t, a, b);
    } else {
        e.le(t, b, a);
    }
    e.and(d, t, Src::K(ONE));
}

/// The tables of the EX2 and LG2 algorithms (`picajit_interp::pica::float::transcendental`) as the
/// little-endian bytes every host's constant pool takes: EX2's 2^(i/64), LG2's reciprocals
/// and LG2's logarithms.
pub fn transcendental_tables() -> [Vec<u8>; 3] {
    use picajit_interp::pica::float::transcendental::{EX2_TABLE, LG2_LOG, LG2_RECIP};
    [
        EX2_TABLE.iter().flat_map(|x| x.to_le_bytes()).collect(),
        LG2_RECIP.iter().flat_map(|x| x.to_le_bytes()).collect(),
        LG2_LOG.iter().flat_map(|x| x.to_le_bytes()).collect(),
    ]
}
