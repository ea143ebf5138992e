//! Arithmetic of the float model and the rounding primitives it shares with
//! [`super::transcendental`] and the JIT fix-ups. Rules are numbered as in the [`super`] docs.
//!
//! Rounding is done on integer bit patterns, never by host float rounding: an `f64` carries the
//! exact result (products of two 24-bit significands always fit; sums carry their lost low part
//! separately, from TwoSum), and [`round_to_mode`]'s integer code rounds it once.

use super::precision::{
    F24_F64_DROP, F24_GRID_F32, F24_MIN_NORMAL_F32, F24_OVERFLOW_F32, F24_SIG_BITS, F32_F64_DROP,
    F32_MIN_NORMAL_F32, LITP_LIMIT_F32,
};
use super::{FloatMode, Rounding, CANONICAL_NAN};

pub(crate) const F64_SIGN: u64 = 1 << 63;
pub(crate) const F64_INF: u64 = 0x7FF0_0000_0000_0000;

/// A mode's rounding parameters, resolved once per operation.
#[derive(Clone, Copy)]
pub(crate) struct Params {
    /// f64 fraction bits below the mode's last kept bit (36 for F24, 29 for F32).
    pub(crate) drop: u32,
    pub(crate) nearest: bool,
    /// f64 bits of the smallest normal: rounded magnitudes below it become +0 (rule 3).
    pub(crate) min_f64: u64,
    /// f64 bits of the overflow threshold: rounded magnitudes at or above it become inf (rule 3).
    pub(crate) ovf_f64: u64,
    /// f32 bits of the smallest normal: inputs below it are flushed (rule 1).
    pub(crate) min_f32: u32,
    /// Significant bits kept, implicit one included (17 or 24).
    prec: u32,
    /// Unbiased exponent of the smallest normal (-62 or -126).
    min_exp: i32,
    /// Unbiased exponent of the overflow threshold (64 or 128).
    max_exp: i32,
}

impl Params {
    /// The parameters of a format with `prec` significant bits and normal exponents from
    /// `min_exp` up to below `max_exp`; the f64 thresholds follow from the exponents.
    const fn new(drop: u32, nearest: bool, min_f32: u32, prec: u32, exps: (i32, i32)) -> Params {
        let (min_exp, max_exp) = exps;
        Params {
            drop,
            nearest,
            min_f64: ((1023 + min_exp) as u64) << 52,
            ovf_f64: ((1023 + max_exp) as u64) << 52,
            min_f32,
            prec,
            min_exp,
            max_exp,
        }
    }
}

const F24_RTZ: Params = Params::new(
    F24_F64_DROP,
    false,
    F24_MIN_NORMAL_F32,
    F24_SIG_BITS,
    (-62, 64),
);
const F24_RNE: Params = Params {
    nearest: true,
    ..F24_RTZ
};
const F32_RNE: Params = Params::new(F32_F64_DROP, true, F32_MIN_NORMAL_F32, 24, (-126, 128));

#[inline(always)]
pub(crate) fn params(m: FloatMode) -> Params {
    match m {
        FloatMode::F24(Rounding::TowardZero) => F24_RTZ,
        FloatMode::F24(Rounding::NearestEven) => F24_RNE,
        FloatMode::F32 => F32_RNE,
    }
}

#[inline(always)]
fn flush_p(x: f32, p: Params) -> f32 {
    if x.to_bits() & 0x7FFF_FFFF < p.min_f32 {
        0.0
    } else {
        x
    }
}

/// Rule 1: an input below the mode's smallest normal (`2^-62` / `2^-126`), `-0` included, is `+0`.
/// Infinities and NaNs pass.
#[inline]
pub fn flush_input(x: f32, m: FloatMode) -> f32 {
    flush_p(x, params(m))
}

/// Rounds `x + err` to the mode and applies rules 3-5, where `x` is an f64 and `err` is either 0
/// or the exact remainder of an addition whose rounded sum is `x` (`|err| <= ulp(x)/2`).
///
/// Only `err`'s sign matters. With RTZ it matters only when `x` is on the 17/24-bit grid (the exact
/// value is then just below or above a representable value); with RNE only when `x` is exactly a
/// midpoint. Otherwise rounding `x` and rounding `x + err` agree because `err` is smaller than the
/// distance from `x` to the nearest decision point.
#[inline(always)]
pub(crate) fn finish(x: f64, err: f64, p: Params) -> f32 {
    let bits = x.to_bits();
    let sign = bits & F64_SIGN;
    let mag = bits & !F64_SIGN;
    if mag >= F64_INF {
        return if mag == F64_INF {
            f32::from_bits(((sign >> 32) as u32) | 0x7F80_0000)
        } else {
            CANONICAL_NAN
        };
    }
    let unit = 1u64 << p.drop;
    let err_nonzero = err != 0.0;
    let err_opposite = ((err.to_bits() ^ bits) & F64_SIGN) != 0;
    // Branch-free (the decisions are data-dependent): the rounding is `(mag + bias) & !(unit - 1)`.
    // Nearest: bias = half - 1 + x, which carries iff the dropped part is above half, or exactly
    // half and x = 1, where x is the sign of the lost remainder if any, else the kept lsb (ties to
    // even). Truncation: bias = -1 iff the exact value is just below `mag` (remainder of opposite
    // sign), which borrows one unit exactly when the dropped part is zero.
    let bias = if p.nearest {
        let odd = (mag >> p.drop) & 1 != 0;
        let x = (err_nonzero & !err_opposite) | (!err_nonzero & odd);
        (unit >> 1) - 1 + x as u64
    } else {
        ((err_nonzero & err_opposite & (mag != 0)) as u64).wrapping_neg()
    };
    let t = mag.wrapping_add(bias) & !(unit - 1);
    if t >= p.ovf_f64 {
        f32::from_bits(((sign >> 32) as u32) | 0x7F80_0000)
    } else if t < p.min_f64 {
        0.0
    } else {
        // At most 24 significant bits inside the f32 normal range: the conversion is exact.
        f64::from_bits(sign | t) as f32
    }
}

/// Rounds an exact (or already mode-representable) `f64` to the mode with rules 3-5: rounding to
/// 17 bits (F24, with its [`Rounding`]) or 24 bits (F32, nearest-even), unbounded exponent, then
/// overflow to `±inf`, underflow to `+0`, `-0` to `+0`, NaN to [`CANONICAL_NAN`].
#[inline]
pub fn round_to_mode(x: f64, m: FloatMode) -> f32 {
    finish(x, 0.0, params(m))
}

/// Rounds `(-1)^negative · sig · 2^exp` (exact, `sig` any u64) to the mode with rules 3-5, using
/// integer operations only (the final step of EX2 and LG2). `sig = 0` gives `+0`.
#[inline]
pub fn round_scaled(negative: bool, sig: u64, exp: i32, m: FloatMode) -> f32 {
    round_scaled_p(negative, sig, exp, params(m))
}

#[inline]
pub(crate) fn round_scaled_p(negative: bool, sig: u64, exp: i32, p: Params) -> f32 {
    if sig == 0 {
        return 0.0;
    }
    let sign = if negative { 0x8000_0000u32 } else { 0 };
    let lz = sig.leading_zeros();
    let top = sig << lz;
    // The value is in [2^e, 2^(e+1)).
    let mut e = exp + 63 - lz as i32;
    let mut kept = top >> (64 - p.prec);
    if p.nearest {
        let rem = top << p.prec;
        const HALF: u64 = 1 << 63;
        if rem > HALF || (rem == HALF && kept & 1 == 1) {
            kept += 1;
            if kept >> p.prec != 0 {
                kept >>= 1;
                e += 1;
            }
        }
    }
    if e >= p.max_exp {
        f32::from_bits(sign | 0x7F80_0000)
    } else if e < p.min_exp {
        0.0
    } else {
        let frac = ((kept as u32) << (24 - p.prec)) & 0x7F_FFFF;
        f32::from_bits(sign | (((e + 127) as u32) << 23) | frac)
    }
}

/// ADD: `round(flush(a) + flush(b))`. `inf + -inf` is NaN.
#[inline(always)]
pub fn add(a: f32, b: f32, m: FloatMode) -> f32 {
    let p = params(m);
    add_p(a, b, p)
}

#[inline(always)]
fn add_p(a: f32, b: f32, p: Params) -> f32 {
    let a = flush_p(a, p);
    let b = flush_p(b, p);
    let ea = (a.to_bits() >> 23) & 0xFF;
    let eb = (b.to_bits() >> 23) & 0xFF;
    let (a, b) = (a as f64, b as f64);
    let s = a + b;
    // Two 24-bit significands whose exponents differ by at most 28 add exactly in 53 bits (and a
    // zero operand always does). Otherwise TwoSum recovers the lost part, whose sign is what RTZ
    // and RNE need (1.0 - 2^-60 truncates to 0x3EFFFF, not 1.0); shader sums rarely go there.
    if ea.abs_diff(eb) <= 28 || ea.min(eb) == 0 {
        finish(s, 0.0, p)
    } else {
        let bb = s - a;
        let err = (a - (s - bb)) + (b - bb);
        finish(s, err, p)
    }
}

#[inline(always)]
fn mul_exact(a: f32, b: f32, p: Params) -> f64 {
    let a = flush_p(a, p);
    let b = flush_p(b, p);
    // Exact: 24x24-bit significands fit in 53 bits, and f32 exponents cannot leave f64's range.
    let prod = a as f64 * b as f64;
    if prod.is_nan() && !a.is_nan() && !b.is_nan() {
        // inf × 0 (rule 6).
        0.0
    } else {
        prod
    }
}

#[inline(always)]
fn mul_p(a: f32, b: f32, p: Params) -> f32 {
    finish(mul_exact(a, b, p), 0.0, p)
}

/// MUL: `round(flush(a) · flush(b))` with `inf × 0 = +0` and `NaN × 0 = NaN`.
#[inline(always)]
pub fn mul(a: f32, b: f32, m: FloatMode) -> f32 {
    mul_p(a, b, params(m))
}

/// MAD: `add(mul(a, b), c)`; the product is rounded first (not fused).
#[inline(always)]
pub fn mad(a: f32, b: f32, c: f32, m: FloatMode) -> f32 {
    let p = params(m);
    add_p(mul_p(a, b, p), c, p)
}

/// DP4: `add(add(p0, p1), add(p2, p3))` with `pi = mul(a[i], b[i])`.
#[inline(always)]
pub fn dp4(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    let p = params(m);
    let [p0, p1, p2] = products3(a, b, p);
    let p3 = mul_p(a[3], b[3], p);
    add_p(add_p(p0, p1, p), add_p(p2, p3, p), p)
}

/// The products of the first three components, each rounded as MUL rounds it.
#[inline(always)]
fn products3(a: [f32; 4], b: [f32; 4], p: Params) -> [f32; 3] {
    [0, 1, 2].map(|i| mul_p(a[i], b[i], p))
}

/// DP3: [`dp4`] with `p3 = +0`; only `a[0..3]`, `b[0..3]` are read.
#[inline(always)]
pub fn dp3(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    let p = params(m);
    let [p0, p1, p2] = products3(a, b, p);
    // add(p2, +0) == p2: p2 is already a mode result (rounded, no -0, canonical NaN).
    add_p(add_p(p0, p1, p), p2, p)
}

/// DPH: [`dp4`] with `a[3]` replaced by `1.0`.
#[inline(always)]
pub fn dph(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    dp4([a[0], a[1], a[2], 1.0], b, m)
}

/// MAX: `a > b ? a : b` on the raw values (no flush, NaN in either operand gives `b`).
///
/// Compared and chosen on the bit patterns (`ieee_gt`): written as a float select, an
/// optimised AArch64 build turned `a > b ? a : b` with a constant non-NaN `b` (LITP's
/// `max(x, 0)`) into `fmaxnm`, which returns a signalling-NaN `a` quieted instead of `b` (the
/// AArch64 build's tests found it, `scripts/test-aarch64.sh`; x86-64 has no such instruction).
#[inline]
pub fn max(a: f32, b: f32) -> f32 {
    let (a, b) = (a.to_bits(), b.to_bits());
    f32::from_bits(if ieee_gt(a, b) { a } else { b })
}

/// Which reading of MAX with a -inf second operand (`max(0, -inf)`) an engine implements;
/// `docs/float-max.md` gives the evidence for both. The default follows the hardware test
/// suite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MaxRule {
    /// `a > b ? a : b` for every operand: `max(0, -inf) = 0`.
    #[default]
    Compare,
    /// The hardware table's row: a -inf second operand is the result
    /// (`b == -inf ? b : (a > b ? a : b)`), so `max(0, -inf) = -inf`. Only MAX changes (not
    /// MIN, and not LITP, whose internal max has a finite second operand).
    NegInfSecond,
}

impl MaxRule {
    /// The CLI / C ABI spelling: `compare`, `neg-inf-second`.
    pub fn parse(s: &str) -> Option<MaxRule> {
        match s {
            "compare" => Some(MaxRule::Compare),
            "neg-inf-second" | "table" => Some(MaxRule::NegInfSecond),
            _ => None,
        }
    }
}

/// MAX under `rule` (see [`MaxRule`]).
#[inline]
pub fn max_rule(a: f32, b: f32, rule: MaxRule) -> f32 {
    if rule == MaxRule::NegInfSecond && b == f32::NEG_INFINITY {
        b
    } else {
        max(a, b)
    }
}

/// MIN: `a < b ? a : b` on the raw values (no flush, NaN in either operand gives `b`); on
/// the bit patterns for the reason given at [`max`] (`fminnm`).
#[inline]
pub fn min(a: f32, b: f32) -> f32 {
    let (a, b) = (a.to_bits(), b.to_bits());
    f32::from_bits(if ieee_gt(b, a) { a } else { b })
}

/// IEEE `a > b` on f32 bit patterns: false when either is NaN, `+0` equal to `-0`.
#[inline]
fn ieee_gt(a: u32, b: u32) -> bool {
    let is_nan = |x: u32| x & 0x7FFF_FFFF > 0x7F80_0000;
    // Sign and magnitude to a signed integer of the same order (both zeros map to 0).
    let key = |x: u32| {
        let m = (x & 0x7FFF_FFFF) as i32;
        if x >> 31 != 0 {
            -m
        } else {
            m
        }
    };
    !is_nan(a) && !is_nan(b) && key(a) > key(b)
}

/// SGE: `1.0` if `a >= b` (IEEE, raw values) else `0.0`; NaN gives `0.0`.
#[inline]
pub fn sge(a: f32, b: f32) -> f32 {
    if a >= b {
        1.0
    } else {
        0.0
    }
}

/// SLT: `1.0` if `a < b` (IEEE, raw values) else `0.0`; NaN gives `0.0`.
#[inline]
pub fn slt(a: f32, b: f32) -> f32 {
    if a < b {
        1.0
    } else {
        0.0
    }
}

/// FLR: `round(floor(flush(x)))`: toward -inf, `±inf` kept, NaN canonical, zero is `+0`.
#[inline]
pub fn flr(x: f32, m: FloatMode) -> f32 {
    let p = params(m);
    let x = flush_p(x, p);
    // Below 2^23 an f32 may have a fraction; `as i32` truncates exactly, and truncation is one
    // above the floor for negative non-integers. Larger magnitudes, inf and NaN are integral.
    let fl = if x.abs() < 8_388_608.0 {
        let t = (x as i32) as f32;
        t - (t > x) as i32 as f32
    } else {
        x
    };
    finish(fl as f64, 0.0, p)
}

/// MOVA conversion: truncation toward zero, saturating to the i32 range, NaN gives 0.
#[inline]
pub fn mova(x: f32) -> i32 {
    x as i32
}

/// LITP: `(max(x,0), max(min(y, 127.99609375), -127.99609375), +0, max(w,0))` with the [`max`]/
/// [`min`] rules, and the flags `(x >= 0, w >= 0)` (raw compares, NaN gives false).
#[inline]
pub fn litp(src: [f32; 4]) -> ([f32; 4], bool, bool) {
    const LIM: f32 = f32::from_bits(LITP_LIMIT_F32);
    let [x, y, _, w] = src;
    let out = [max(x, 0.0), max(min(y, LIM), -LIM), 0.0, max(w, 0.0)];
    (out, x >= 0.0, w >= 0.0)
}

/// DST: `(1.0, mul(a.y, b.y), a.z, b.w)`; z and w are copied bit for bit.
#[inline]
pub fn dst(a: [f32; 4], b: [f32; 4], m: FloatMode) -> [f32; 4] {
    [1.0, mul(a[1], b[1], m), a[2], b[3]]
}

/// F24-RTZ JIT fix-up: turns the f32 result of an operation computed by the host in
/// round-toward-zero (on flushed inputs, `inf × 0` already repaired) into the model's result:
/// NaN → canonical, mantissa truncated to 16 bits (`& 0xFFFF_FF80`), magnitude `>= 2^64` → `±inf`,
/// `< 2^-62` → `+0`.
#[inline]
pub fn f24_fixup_rtz(x_rz: f32) -> f32 {
    let b = x_rz.to_bits();
    if b & 0x7FFF_FFFF > 0x7F80_0000 {
        return CANONICAL_NAN;
    }
    let t = b & F24_GRID_F32;
    let mag = t & 0x7FFF_FFFF;
    if mag >= F24_OVERFLOW_F32 {
        f32::from_bits((t & 0x8000_0000) | 0x7F80_0000)
    } else if mag < F24_MIN_NORMAL_F32 {
        0.0
    } else {
        f32::from_bits(t)
    }
}

/// F24-RNE JIT fix-up: rounds the f64 result of an operation computed by the host in
/// round-to-nearest to 17 bits (nearest-even, on the f64 bits), then the range, zero and NaN rules.
/// Identical to `round_to_mode(x, FloatMode::F24(Rounding::NearestEven))`.
#[inline]
pub fn f24_fixup_rne_from_f64(x: f64) -> f32 {
    finish(x, 0.0, F24_RNE)
}

/// F32-mode fix-up after a host f32 operation: NaN → canonical, magnitude below `2^-126` (so `-0`
/// and subnormals) → `+0`.
#[inline]
pub fn f32_fixup(x: f32) -> f32 {
    let b = x.to_bits() & 0x7FFF_FFFF;
    if b > 0x7F80_0000 {
        CANONICAL_NAN
    } else if b < 0x0080_0000 {
        0.0
    } else {
        x
    }
}
