//! The float model's vector recipes, written once for every emitter.
//!
//! Each recipe here is one of the float model's "What a JIT must do" steps
//! (`picajit_interp::pica::float`, module docs) expressed over the host's lane operations,
//! [`Lanes`] (`crate::host::lanes`), which both hosts implement once:
//!
//! * the per-vertex x86-64 masm (`crate::pica::x64::masm`: four components in an xmm register,
//!   the 128-bit form of `crate::host::x64::lanes`, VEX three-operand forms where AVX is
//!   present, the SSE fallback otherwise),
//! * the AVX2 lane emitter (`crate::pica::x64::lanes`: eight vertices in a ymm register),
//! * the AArch64 masm (`crate::pica::a64::masm`: a q register, which the NEON lane emitter
//!   `crate::pica::a64::lanes` also uses, four vertices at a time).
//!
//! The order of the steps, the constants and the special cases are decided here; the hosts
//! encode the steps (a magnitude compare is `and` + signed compare on x86-64 and shift +
//! unsigned compare on AArch64; a select is `bit` on AArch64 and an xor sequence on x86-64).
//! What an emitter decides beyond the host's operations, the float mode and where the
//! rounding and range steps run (a shared subroutine or inline), is [`Float`]. Where a host
//! keeps a step of its own (AArch64's flush of rounded f64 values before narrowing; x86-64's
//! branch to a shared slow path) the emitter's module says why.
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

pub use crate::host::lanes::bits::{INF, ONE64, QNAN64, SIGN};
pub use crate::host::lanes::{Lanes, Src};

/// Magnitude bits of an f32.
pub const ABS: u32 = 0x7FFF_FFFF;
/// Mantissa bits of an f32.
pub const MANT: u32 = 0x007F_FFFF;
/// 1.0.
pub const ONE: u32 = 0x3F80_0000;

/// The 17-bit truncation mask of f24 values held as f32.
pub const TRUNC17: u32 = F24_GRID_F32;
/// f32 bits of 2^64 minus one: magnitudes above are F24 overflow.
pub const F24_OVF_M1: u32 = F24_OVERFLOW_F32 - 1;
/// f32 bits of 2^-62 minus one: magnitudes above are normal f24 values.
pub const F24_MIN_M1: u32 = F24_MIN_NORMAL_F32 - 1;
/// f32 bits of 2^-126 minus one.
pub const F32_MIN_M1: u32 = F32_MIN_NORMAL_F32 - 1;
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

/// Rule 1 of the float model: lanes below the mode's smallest normal (and -0) become +0;
/// infinities and NaNs are kept. In place on `v`; clobbers `t`.
pub fn flush<H: Lanes>(h: &mut H, mode: FloatMode, v: H::R, t: H::R) {
    h.mag_gt(t, v, min_m1(mode));
    h.and(v, v, Src::R(t));
}

/// `float::f24_fixup_rtz` on every lane: `v` = `src` truncated to the 17-bit grid, magnitudes
/// below 2^-62 (and -0) +0, at or above 2^64 ±inf, NaN the canonical NaN. `t[0]` may be
/// `src` (read before `t[0]` is written); the others must differ from `v` and `src`.
///
/// The NaN lanes are found before truncating, so a NaN whose payload lies only in the low
/// bits is still one.
pub fn f24_fixup_rtz<H: Lanes>(h: &mut H, v: H::R, src: H::R, t: [H::R; 3]) {
    let [t0, t1, t2] = t;
    h.mag_gt(t1, src, INF); // NaN lanes
    h.and(v, src, Src::K(TRUNC17));
    h.mag(t0, v);
    h.key_gt(t2, t0, F24_OVF_M1); // |t| >= 2^64
    h.key_gt(t0, t0, F24_MIN_M1); // |t| >= 2^-62
    h.and(v, v, Src::R(t0));
    h.and(t0, v, Src::K(SIGN));
    h.or(t0, t0, Src::K(INF));
    h.select(v, t2, Src::R(t0));
    h.select(v, t1, Src::K(CANONICAL_NAN_BITS));
}

/// `float::f32_fixup` on every lane: `v` = `src` with magnitudes below 2^-126 (and -0) +0
/// and NaN the canonical NaN (the mode's arithmetic rounded already; overflow to inf is
/// right as it is). `t` must differ from `v` and `src`.
pub fn f32_fixup<H: Lanes>(h: &mut H, v: H::R, src: H::R, t: [H::R; 2]) {
    let [t0, t1] = t;
    h.mag(t0, src);
    h.key_gt(t1, t0, INF); // NaN lanes
    h.key_gt(t0, t0, F32_MIN_M1);
    h.and(v, src, Src::R(t0));
    h.select(v, t1, Src::K(CANONICAL_NAN_BITS));
}

/// The mode's range rules after rounding (F24, both roundings: [`f24_fixup_rtz`]; F32:
/// [`f32_fixup`]), from `src` into `v`. `t` as for [`f24_fixup_rtz`].
pub fn fixup<H: Lanes>(h: &mut H, mode: FloatMode, v: H::R, src: H::R, t: [H::R; 3]) {
    match mode {
        FloatMode::F32 => f32_fixup(h, v, src, [t[1], t[2]]),
        FloatMode::F24(_) => f24_fixup_rtz(h, v, src, t),
    }
}

/// Rule 6 of the float model, after the product `p` of operands whose ordered mask
/// ([`Lanes::ordered`]) is `ord_in`: a NaN product of non-NaN operands is inf × 0 and
/// becomes +0. Result in `out` (may be `p`); clobbers `t` and `ord_in`.
pub fn inf_times_zero<H: Lanes>(h: &mut H, out: H::R, p: H::R, ord_in: H::R, t: H::R) {
    h.ordered(t, p, p);
    h.andn(t, t, Src::R(ord_in)); // NaN product, ordered operands
    h.andn(out, t, Src::R(p));
}

/// Integer round-to-nearest-even of the f32 lanes of `v` (exact values) to the 17-bit grid,
/// NaN lanes made canonical (the increment may carry out of a NaN); the range rules
/// ([`f24_fixup_rtz`]) come after. `t` must differ from `v`.
pub fn rne17_f32<H: Lanes>(h: &mut H, v: H::R, t: [H::R; 2]) {
    let [t0, t1] = t;
    h.mag_gt(t1, v, INF); // NaN lanes
    h.shr32(t0, v, 7);
    h.and_int(t0, t0, Src::K(1));
    h.add32(t0, t0, Src::K(0x3F));
    h.add32(v, v, Src::R(t0));
    h.and_int(v, v, Src::K(TRUNC17));
    h.select(v, t1, Src::K(CANONICAL_NAN_BITS));
}

/// Round the f64 lanes of `d` to `prec` significant bits, nearest-even, on their bit
/// patterns, NaN lanes made quiet first. `t` must differ from `d`.
pub fn round_f64<H: Lanes>(h: &mut H, d: H::R, prec: u32, t: H::R) {
    let drop = 53 - prec;
    h.quiet_nan64(d, t);
    h.shr64(t, d, drop);
    h.and_int(t, t, Src::K64(1));
    h.add64(t, t, Src::K64((1 << (drop - 1)) - 1));
    h.add64(d, d, Src::R(t));
    h.and_int(d, d, Src::K64(!((1u64 << drop) - 1)));
}

/// [`round_f64`] to the f24 grid (17 bits).
pub fn round_f64_rne17<H: Lanes>(h: &mut H, d: H::R, t: H::R) {
    debug_assert_eq!(!((1u64 << F24_F64_DROP) - 1), F24_GRID_F64);
    round_f64(h, d, 53 - F24_F64_DROP, t);
}

/// The test of the fast path of the mode's fix-up, for hosts that keep rare lanes out of
/// line: `t[0]` = the mask of the lanes of `src` that need the whole fix-up (F24: an overflow,
/// inf or NaN; F32: a NaN), `t[1]` the mask of the lanes [`fixup_fast`] keeps. The caller
/// branches to its slow path ([`fixup_slow`]) when `t[0]` has a lane set, with `src`
/// untouched, and continues with [`fixup_fast`] otherwise. `t` must differ from `src`.
pub fn fixup_fast_test<H: Lanes>(h: &mut H, mode: FloatMode, src: H::R, t: [H::R; 2]) {
    let [t0, t1] = t;
    let high = match mode {
        FloatMode::F32 => INF,
        FloatMode::F24(_) => F24_OVF_M1,
    };
    h.mag(t1, src);
    h.key_gt(t0, t1, high);
    h.key_gt(t1, t1, min_m1(mode));
}

/// The fast path of the mode's fix-up, after [`fixup_fast_test`] with the same `t`: `v` =
/// `src` truncated to the mode's grid with tiny lanes and -0 made +0. Truncating after the
/// compares is right: both bounds plus one are multiples of 128, so truncation keeps every
/// lane on its side of them. `t` must differ from `v` and `src`.
pub fn fixup_fast<H: Lanes>(h: &mut H, mode: FloatMode, v: H::R, src: H::R, t: [H::R; 2]) {
    let [t0, t1] = t;
    let trunc = match mode {
        FloatMode::F32 => !0,
        FloatMode::F24(_) => TRUNC17,
    };
    if trunc == !0 {
        h.and(v, src, Src::R(t1));
    } else if h.three_operand() {
        // `src & trunc` does not wait for the compare: one dependent operation fewer between
        // `src` and `v` on the path every DP, MUL and ADD result takes.
        h.and(t0, src, Src::K(trunc));
        h.and(v, t0, Src::R(t1));
    } else {
        // Without VEX, `v = v & t1` is one instruction when `src` is `v`.
        h.and(v, src, Src::R(t1));
        h.and(v, v, Src::K(trunc));
    }
}

/// The slow path of [`fixup_fast`]: the whole fix-up of `src` into `v`, with
/// `mul = Some((a, b))` when `src` is the product of `a` and `b` (rule 6 repairs inf × 0).
/// `a` and `b` are read before `v` is written, so `v` may be `a`. `t` must differ from `v`,
/// `src`, `a` and `b`.
pub fn fixup_slow<H: Lanes>(
    h: &mut H,
    mode: FloatMode,
    v: H::R,
    src: H::R,
    mul: Option<(H::R, H::R)>,
    t: [H::R; 3],
) {
    let [t0, t1, t2] = t;
    if let Some((a, b)) = mul {
        h.ordered(t1, a, b);
        inf_times_zero(h, t0, src, t1, t2);
        fixup(h, mode, v, t0, t);
    } else {
        fixup(h, mode, v, src, t);
    }
}

/// What an emitter decides beyond the host's lane operations: the float mode, and how the
/// rounding and range steps are reached (a shared subroutine on some emitters, inline code on
/// others; each is one of the recipes here).
pub trait Float {
    /// A vector register.
    type R: Copy + PartialEq + std::fmt::Debug;
    /// The host's lane operations.
    type H<'a>: Lanes<R = Self::R>
    where
        Self: 'a;

    /// The lane operations, on the emitter's code.
    fn h(&mut self) -> Self::H<'_>;
    /// The float mode of the code.
    fn mode(&self) -> FloatMode;
    /// [`round_f64`] of `d` to the mode's precision.
    fn round64(&mut self, d: Self::R);
    /// The mode's range rules ([`fixup`]) of `v` in place.
    fn range(&mut self, v: Self::R);
    /// [`rne17_f32`] then [`f24_fixup_rtz`] of `v` in place (F24 RNE).
    fn rne17(&mut self, v: Self::R);
    /// [`f64_binop`] of `a` and `b` (`mul`: product, else sum) into `d`, with the emitter's
    /// temporaries (inline or in a shared subroutine).
    fn binop64(&mut self, d: Self::R, a: Self::R, b: Self::R, mul: bool);
    /// Whether F32-mode RCP divides in f64 and rounds to 24 bits ([`round64`](Self::round64))
    /// instead of dividing in f32 ([`reciprocal::rcp`]).
    fn rcp_f32_through_f64(&self) -> bool;
}

/// `d = round(a op b)` lane-wise through f64 (`op`: true = multiply, false = add; exact
/// products and sums of f24 values), then the mode's range rules. `d` may be `a` or `b`; `t`
/// (`a`'s low and high halves, then `b`'s) must differ from them. Both halves are computed
/// before either is rounded: the per-vertex code is latency-bound.
pub fn f64_binop<E: Float>(e: &mut E, d: E::R, a: E::R, b: E::R, mul: bool, t: [E::R; 4]) {
    let [alo, ahi, blo, bhi] = t;
    {
        let mut h = e.h();
        h.widen(alo, a, false);
        h.widen(ahi, a, true);
        h.widen(blo, b, false);
        h.widen(bhi, b, true);
        op64(&mut h, alo, alo, blo, mul);
        op64(&mut h, ahi, ahi, bhi, mul);
    }
    e.round64(alo);
    e.round64(ahi);
    e.h().narrow(d, alo, ahi);
    e.range(d);
}

/// `d = a · b` (`mul`) or `a + b` on f64 lanes.
fn op64<H: Lanes>(h: &mut H, d: H::R, a: H::R, b: H::R, mul: bool) {
    if mul {
        h.mul_f64(d, a, Src::R(b));
    } else {
        h.add_f64(d, a, Src::R(b));
    }
}

/// The mode's rounding of an f32 result computed on flushed inputs with the mode's float
/// environment (F24 RTZ, F32) or exactly (F24 RNE: FLR, where the integer RNE rounds it).
pub fn fixup_mode<E: Float>(e: &mut E, v: E::R) {
    match e.mode() {
        FloatMode::F24(picajit_interp::pica::float::Rounding::NearestEven) => e.rne17(v),
        _ => e.range(v),
    }
}

/// `d = float::add(a, b)` lane-wise for flushed operands (or mode results): through f64 in
/// F24 RNE ([`f64_binop`]), else the f32 sum and the mode's fix-up.
pub fn add<E: Float>(e: &mut E, d: E::R, a: E::R, b: E::R) {
    if e.mode() == FloatMode::F24(picajit_interp::pica::float::Rounding::NearestEven) {
        e.binop64(d, a, b, false);
    } else {
        e.h().add_f32(d, a, Src::R(b));
        fixup_mode(e, d);
    }
}

/// The sum of the four f32 lanes of `p` (mode results) as the float model adds them,
/// `(p0 + p1) + (p2 + p3)`, in every lane (DP3/DP4/DPH; one vector per register). Clobbers
/// `t`.
pub fn pairwise_sum<E: Float>(e: &mut E, p: E::R, t: [E::R; 2]) {
    let [t0, t1] = t;
    if e.mode() == FloatMode::F24(picajit_interp::pica::float::Rounding::NearestEven) {
        {
            let mut h = e.h();
            h.widen(t0, p, false);
            h.widen(t1, p, true);
            h.hadd64(t0, t0, t1); // (p0+p1, p2+p3)
        }
        e.round64(t0);
        e.h().narrow_lo(p, t0);
        e.range(p);
        {
            let mut h = e.h();
            h.widen(t0, p, false);
            h.hadd64(t0, t0, t0);
        }
        e.round64(t0);
        e.h().narrow_lo(p, t0);
        e.range(p);
        e.h().broadcast0(p);
    } else {
        // Every lane computes the same sums (IEEE addition commutes); lane 0 adds p0 + p1 in
        // that operand order, as the model does.
        {
            let mut h = e.h();
            h.swap_pairs(t0, p);
            h.add_f32(p, p, Src::R(t0)); // (p0+p1, p1+p0, p2+p3, p3+p2)
        }
        fixup_mode(e, p);
        {
            let mut h = e.h();
            h.swap_halves(t0, p);
            h.add_f32(p, p, Src::R(t0)); // every lane: (p0+p1) + (p2+p3)
        }
        fixup_mode(e, p);
    }
}

/// FLR of the flushed `a` into `d`: the floor (exact) and the mode's rounding of it.
pub fn flr<E: Float>(e: &mut E, d: E::R, a: E::R) {
    e.h().round_f32(d, a, crate::host::lanes::Round::Floor);
    fixup_mode(e, d);
}

/// MAX: `a > b ? a : b` on raw operands (NaN: `b`), and under
/// [`MaxRule::NegInfSecond`] (`docs/float-max.md`) a -inf `b` is the result. Clobbers `t`,
/// which must differ from `d` and `b`.
pub fn max<H: Lanes>(h: &mut H, rule: MaxRule, d: H::R, a: H::R, b: H::R, t: H::R) {
    h.max_f32(d, a, Src::R(b));
    if rule == MaxRule::NegInfSecond {
        h.is_neg_inf(t, b);
        h.select(d, t, Src::R(b));
    }
}

/// SGE (`slt` false) or SLT on raw operands: 1.0 where `a >= b` (`a < b`), else +0, NaN
/// comparing false. `t` may be `d` when `d` may be written before the operands are read.
pub fn set_if<H: Lanes>(h: &mut H, slt: bool, d: H::R, a: H::R, b: H::R, t: H::R) {
    if slt {
        h.lt(t, a, b);
    } else {
        h.le(t, b, a);
    }
    h.and(d, t, Src::K(ONE));
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
