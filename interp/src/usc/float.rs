//! Float operations of the USC main ALU, as the interpreter defines them and every JIT must
//! reproduce them (`docs/usc.md`, "Float model"):
//!
//! * binary32 with IEEE 754 round-to-nearest-even, denormals kept (the reference names no flush);
//! * every float arithmetic result that is a NaN is the canonical quiet NaN 0x7FC00000
//!   (the reference: "FRCP(NaN) = +NaN", "FRSQ (Any NaN) = +NaN", "log2 (Any NaN) = +NaN", ...);
//!   moves (MBYP, MOV) keep bits as they are;
//! * FRCP, FRSQ, FSQRT, FLOG, FEXP are correctly rounded (the reference states special values and
//!   no accuracy; FRCP and FSQRT are IEEE division and square root, FRSQ is an integer square
//!   root with its remainder, FLOG and FEXP are evaluated in fixed point with an
//!   error bound and re-evaluated with 116 fraction bits when the 60-bit result is too close to
//!   a rounding boundary; `tests/usc_interp.rs` checks with `PICAJIT_USC_EXHAUSTIVE=1` that the
//!   116-bit evaluation is never too close, over every input).
//!
//! # No host float arithmetic
//!
//! Every function here works on bit patterns with integer operations only: the exact result
//! (a product of two significands, a sum aligned in 128 bits, an integer quotient or square
//! root with its remainder) is rounded once by `round_bits`. Host float instructions obey
//! the calling thread's float environment (x86-64 MXCSR, AArch64 FPCR: rounding mode,
//! flush-to-zero, denormals-are-zero), and `f32::mul_add` calls the platform's `fmaf`, which
//! is not correctly rounded everywhere (mingw's, UCRT's without FMA3). Integer code gives the
//! same bits on every host, under any environment the caller has set, also for the JIT's
//! interpreter steps (`tests/float_env.rs`).

use std::cmp::Ordering;

/// The canonical NaN every float arithmetic result that is a NaN becomes.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;

const SIGN: u32 = 0x8000_0000;
const ABS: u32 = 0x7FFF_FFFF;
const INF: u32 = 0x7F80_0000;
const ONE: u32 = 0x3F80_0000;
/// The largest finite binary32 value (an overflow's result under rounding toward zero).
const MAX_FINITE: u32 = 0x7F7F_FFFF;

#[inline]
fn is_nan(b: u32) -> bool {
    b & ABS > INF
}

#[inline]
fn is_inf(b: u32) -> bool {
    b & ABS == INF
}

#[inline]
fn is_zero(b: u32) -> bool {
    b & ABS == 0
}

/// `|x| = m * 2^e` for a finite nonzero `x`, with `m < 2^24` (below 2^23 for denormals).
#[inline]
fn unpack(b: u32) -> (u32, i32) {
    let exp = (b >> 23) & 0xFF;
    let frac = b & 0x7F_FFFF;
    if exp == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, exp as i32 - 150)
    }
}

/// [`unpack`] with `m` in `[2^23, 2^24)` (denormals normalised).
#[inline]
fn unpack_normalized(b: u32) -> (u32, i32) {
    let (m, e) = unpack(b);
    let s = m.leading_zeros() - 8;
    (m << s, e - s as i32)
}

/// The direction [`round_bits`] rounds in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    /// To nearest, ties to even: every arithmetic result.
    NearestEven,
    /// Toward zero: PCK/UNPCK's `.roundzero`.
    TowardZero,
}

/// Rounds `(m + t) * 2^e` to binary32 with the sign `neg`, where `t = 0` when `inexact` is
/// false and `0 < t < 1` otherwise (`t` stands for nonzero bits below `2^e` that the caller
/// dropped). Denormal results are kept (the last place never goes below 2^-149); magnitudes
/// that round to 2^128 or above overflow (to infinity, or to the largest finite value toward
/// zero). When `inexact`, `2^e` must lie at least two places below the result's last place
/// (the callers keep at least 26 significant bits), so that the dropped bits cannot reach
/// the rounding bit.
#[inline]
fn round_bits(neg: bool, m: u128, e: i32, inexact: bool, mode: Rounding) -> u32 {
    let sign = if neg { SIGN } else { 0 };
    if m == 0 {
        debug_assert!(!inexact, "a dropped part needs a significand above it");
        return sign;
    }
    // Exponent of the leading bit.
    let top = e + 127 - m.leading_zeros() as i32;
    if top > 127 {
        return sign
            | if mode == Rounding::NearestEven {
                INF
            } else {
                MAX_FINITE
            };
    }
    let lsb = (top - 23).max(-149);
    if lsb <= e {
        debug_assert!(!inexact, "dropped bits must lie below the last place");
        // Exact: at most 24 significant bits, at or above the last place.
        let q = (m << (e - lsb) as u32) as u32;
        return sign | ((((lsb + 149) as u32) << 23) + q);
    }
    let shift = (lsb - e) as u32;
    debug_assert!(
        !inexact || shift >= 2,
        "dropped bits must lie below the rounding bit"
    );
    let (q, up) = if shift > 128 {
        // Below half the smallest denormal.
        (0, false)
    } else if shift == 128 {
        let half = 1u128 << 127;
        (0, m > half || (m == half && inexact))
    } else {
        let q = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        (q, rem > half || (rem == half && (inexact || q & 1 == 1)))
    };
    let up = up && mode == Rounding::NearestEven;
    // The significand's carry into the exponent field is the right result (up to infinity).
    sign | ((((lsb + 149) as u32) << 23) + q as u32 + u32::from(up))
}

/// Canonical bits of an arithmetic result.
#[inline]
pub fn canon(x: f32) -> u32 {
    let b = x.to_bits();
    if is_nan(b) {
        CANONICAL_NAN
    } else {
        b
    }
}

/// `.sat`: clamp to [+0, 1]; NaN becomes +0 (the reference, .CLAMP: "Clamps value to range
/// [+0,1]").
#[inline]
pub fn saturate(bits: u32) -> u32 {
    if is_nan(bits) || bits & SIGN != 0 || bits == 0 {
        0
    } else if bits >= ONE {
        ONE
    } else {
        bits
    }
}

/// `.flr`: floor, keeping NaNs, infinities and signed zeros (the reference, .FLR).
#[inline]
pub fn floor_bits(bits: u32) -> u32 {
    if is_nan(bits) || is_inf(bits) || is_zero(bits) {
        return bits;
    }
    let neg = bits & SIGN != 0;
    let exp = (bits >> 23) & 0xFF;
    if exp >= 150 {
        // An integer already.
        return bits;
    }
    if exp < 127 {
        // 0 < |x| < 1.
        return if neg { SIGN | ONE } else { 0 };
    }
    // 1 <= |x| < 2^23: the low 150 - exp bits are the fraction.
    let mask = (1u32 << (150 - exp)) - 1;
    if bits & mask == 0 {
        bits
    } else if neg {
        // One unit more in magnitude at the integer's place (a carry moves the exponent).
        (bits & !mask) + mask + 1
    } else {
        bits & !mask
    }
}

/// Applies a source's `.flr`, `.abs` and `.neg` in the reference's order (floor "before
/// absolute/negate"; absolute before negation, as for .CLAMP).
#[inline]
pub fn source_mods(bits: u32, flr: bool, abs: bool, neg: bool) -> u32 {
    let mut b = bits;
    if flr {
        b = floor_bits(b);
    }
    if abs {
        b &= 0x7FFF_FFFF;
    }
    if neg {
        b ^= 0x8000_0000;
    }
    b
}

/// IEEE comparison of two binary32 values: `None` when either is a NaN, `-0 == +0`,
/// denormals compared as they are.
#[inline]
pub fn compare(a: u32, b: u32) -> Option<Ordering> {
    if is_nan(a) || is_nan(b) {
        return None;
    }
    let key = |x: u32| {
        let m = i64::from(x & ABS);
        if x & SIGN != 0 {
            -m
        } else {
            m
        }
    };
    Some(key(a).cmp(&key(b)))
}

/// `a * b + c` with one rounding to nearest even (IEEE 754 fusedMultiplyAdd), NaN results
/// canonical: the product of the significands is exact in 48 bits, the sum is exact in 128
/// bits or, when the addend lies more than 64 places below the larger term, the larger term
/// with a sticky part (`add_exact`); `round_bits` rounds once.
pub fn fma(a: u32, b: u32, c: u32) -> u32 {
    if is_nan(a) || is_nan(b) || is_nan(c) {
        return CANONICAL_NAN;
    }
    let sp = (a ^ b) & SIGN != 0;
    let sc = c & SIGN != 0;
    if is_inf(a) || is_inf(b) {
        if is_zero(a) || is_zero(b) || (is_inf(c) && sc != sp) {
            // inf * 0, inf - inf.
            return CANONICAL_NAN;
        }
        return if sp { SIGN | INF } else { INF };
    }
    if is_inf(c) {
        return c;
    }
    if is_zero(a) || is_zero(b) {
        if is_zero(c) {
            // (±0) + (±0): -0 only when both are -0.
            return if sp && sc { SIGN } else { 0 };
        }
        return c;
    }
    let (ma, ea) = unpack(a);
    let (mb, eb) = unpack(b);
    let pm = u128::from(ma) * u128::from(mb);
    let pe = ea + eb;
    if is_zero(c) {
        return round_bits(sp, pm, pe, false, Rounding::NearestEven);
    }
    let (mc, ec) = unpack(c);
    add_exact((sp, pm, pe), (sc, u128::from(mc), ec))
}

/// The sum of two nonzero terms `±m * 2^e` (`m < 2^48`), rounded to nearest even. The terms
/// are aligned at `ef`, at most 64 places below the larger term's last bit: every bit of both
/// is kept unless the smaller one reaches below `ef`; then it is below 2^-16 of the larger
/// one, the bits it has below `ef` become a sticky part (an addend `t` in (0, 1) units of
/// `2^ef`; a subtrahend `t` is written as `-1 + (1 - t)`), and `2^ef` lies more than 40
/// places below the result's last place, so the rounding sees the exact sum's direction.
fn add_exact(x: (bool, u128, i32), y: (bool, u128, i32)) -> u32 {
    let top = |(_, m, e): (bool, u128, i32)| e + 127 - m.leading_zeros() as i32;
    let (l, s) = if top(x) >= top(y) { (x, y) } else { (y, x) };
    let (sl, ml, el) = l;
    let (ss, ms, es) = s;
    let ef = el.min(es).max(el - 64);
    // Both shifted values stay below 2^112: each term has at most 48 bits and the smaller one's
    // leading bit is not above the larger one's.
    let ml = ml << (el - ef) as u32;
    let (ms, low) = if es >= ef {
        (ms << (es - ef) as u32, false)
    } else {
        let sh = (ef - es) as u32;
        if sh >= 128 {
            (0, true)
        } else {
            (ms >> sh, ms & ((1u128 << sh) - 1) != 0)
        }
    };
    let n = Rounding::NearestEven;
    if sl == ss {
        round_bits(sl, ml + ms, ef, low, n)
    } else if low {
        round_bits(sl, ml - ms - 1, ef, true, n)
    } else {
        match ml.cmp(&ms) {
            // x - x = +0 when rounding to nearest.
            Ordering::Equal => 0,
            Ordering::Greater => round_bits(sl, ml - ms, ef, false, n),
            Ordering::Less => round_bits(ss, ms - ml, ef, false, n),
        }
    }
}

/// FMAD: `a * b + c`, fused (one rounding) or with the product rounded first.
#[inline]
pub fn fmad(a: u32, b: u32, c: u32, fused: bool) -> u32 {
    if fused {
        fma(a, b, c)
    } else {
        fadd(fmul(a, b), c)
    }
}

/// FADD: `a + b` rounded to nearest even (`a * 1 + b`: the product is exact).
#[inline]
pub fn fadd(a: u32, b: u32) -> u32 {
    fma(a, ONE, b)
}

/// FMUL: `a * b` rounded to nearest even (`a * b + (-0)`: adding -0 changes no product,
/// +0 and -0 included).
#[inline]
pub fn fmul(a: u32, b: u32) -> u32 {
    fma(a, b, SIGN)
}

/// FRCP: IEEE division `1 / x` (seed: NaN → +NaN, ±inf → ±0, ±0 → ±inf, ±1 → ±1 exactly):
/// a 27-bit integer quotient and its remainder, rounded once.
pub fn frcp(a: u32) -> u32 {
    if is_nan(a) {
        return CANONICAL_NAN;
    }
    let sign = a & SIGN;
    if is_inf(a) {
        return sign;
    }
    if is_zero(a) {
        return sign | INF;
    }
    // 1 / (m * 2^e) = (2^50 / m) * 2^(-50 - e), the quotient in (2^26, 2^27].
    let (m, e) = unpack_normalized(a);
    let num = 1u64 << 50;
    let q = num / u64::from(m);
    let r = num % u64::from(m);
    round_bits(
        sign != 0,
        u128::from(q),
        -50 - e,
        r != 0,
        Rounding::NearestEven,
    )
}

/// FSQRT: IEEE square root (−0 → −0, negative → +NaN): the integer square root of the
/// significand scaled to 54 or 55 bits (27 bits of root) and whether it was exact.
pub fn fsqrt(a: u32) -> u32 {
    if is_nan(a) || (a & SIGN != 0 && !is_zero(a)) {
        return CANONICAL_NAN;
    }
    if is_zero(a) || is_inf(a) {
        return a;
    }
    let (m, e) = unpack_normalized(a);
    // An even exponent: sqrt(m * 2^s * 2^(e - s)) = sqrt(m * 2^s) * 2^((e - s) / 2).
    let s = if e & 1 == 0 { 30 } else { 31 };
    let big = u64::from(m) << s;
    let r = big.isqrt();
    round_bits(
        false,
        u128::from(r),
        (e - s) / 2,
        r * r != big,
        Rounding::NearestEven,
    )
}

/// FRSQ: correctly rounded 1/sqrt(x) (seed: NaN → +NaN, +inf → +0, ±0 → ±inf, −x → +NaN,
/// 1 → 1 exactly): `floor(sqrt(2^80 / M))` for the significand `M` with an even exponent is
/// `floor(2^40 / sqrt(M))` (the floor inside a square root's floor changes nothing), 28 or
/// 29 bits, exact exactly when its square times `M` is 2^80.
pub fn frsq(a: u32) -> u32 {
    if is_nan(a) || (a & SIGN != 0 && !is_zero(a)) {
        return CANONICAL_NAN;
    }
    if is_zero(a) {
        return (a & SIGN) | INF;
    }
    if is_inf(a) {
        return 0;
    }
    // x is positive and finite: the result is normal (between 2^-64 and 2^75).
    let (m, e) = unpack_normalized(a);
    let odd = (e & 1) as u32;
    let big_m = u128::from(m) << odd;
    let e = e - odd as i32;
    let q = ((1u128 << 80) / big_m).isqrt();
    // 1/sqrt(M * 2^e) = (2^40 / sqrt(M)) * 2^(-40 - e/2).
    round_bits(
        false,
        q,
        -40 - e / 2,
        q * q * big_m != 1u128 << 80,
        Rounding::NearestEven,
    )
}

// ---- FEXP / FLOG: fixed-point evaluation with an error bound ----

/// ln 2 with 116 fraction bits (truncated).
const LN2_Q116: u128 = 0xb17217f7d1cf79abc9e3b39803f2f;
/// 2/ln 2 with 116 fraction bits (truncated).
const K_Q116: u128 = 0x2e2a8eca5705fc2eefa1ffb41a474f;

/// `(a * b) >> f` with a 256-bit intermediate product.
fn mulshr(a: u128, b: u128, f: u32) -> u128 {
    if a >> 64 == 0 && b >> 64 == 0 {
        // The 60-bit evaluation: one 64x64 -> 128 multiply.
        return (a * b) >> f;
    }
    let (a1, a0) = (a >> 64, a & u128::from(u64::MAX));
    let (b1, b0) = (b >> 64, b & u128::from(u64::MAX));
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & u128::from(u64::MAX)) + (p10 & u128::from(u64::MAX));
    let lo = (p00 & u128::from(u64::MAX)) | ((mid & u128::from(u64::MAX)) << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    if f == 0 {
        lo
    } else if f < 128 {
        (hi << (128 - f)) | (lo >> f)
    } else {
        hi >> (f - 128)
    }
}

const TERMS: usize = 34;

/// `2^f / n!` for n in 0..TERMS (truncated), at compile time.
const fn inv_factorials(f: u32) -> [u128; TERMS] {
    let mut out = [0u128; TERMS];
    let mut fact: u128 = 1;
    let mut n = 0;
    while n < TERMS {
        if n > 0 {
            fact *= n as u128;
        }
        out[n] = (1u128 << f) / fact;
        n += 1;
    }
    out
}

/// `2^f / (2n+1)` for n in 0..TERMS.
const fn inv_odds(f: u32) -> [u128; TERMS] {
    let mut out = [0u128; TERMS];
    let mut n = 0;
    while n < TERMS {
        out[n] = (1u128 << f) / (2 * n as u128 + 1);
        n += 1;
    }
    out
}

/// A fixed-point precision: fraction bits, terms used and the error bound (in units of the
/// last fraction bit) of the two evaluations below. The bounds are generous: each Horner step
/// truncates twice (product and coefficient) and the reduced argument carries at most two
/// units; the first multiplier is below 1 (exp) or below 0.03 (log), so errors do not grow.
struct Precision {
    f: u32,
    terms: usize,
    fact: &'static [u128; TERMS],
    odd: &'static [u128; TERMS],
    err: u128,
}

static FACT60: [u128; TERMS] = inv_factorials(60);
static FACT116: [u128; TERMS] = inv_factorials(116);
static ODD60: [u128; TERMS] = inv_odds(60);
static ODD116: [u128; TERMS] = inv_odds(116);

const P60: Precision = Precision {
    f: 60,
    terms: 20,
    fact: &FACT60,
    odd: &ODD60,
    err: 256,
};
const P116: Precision = Precision {
    f: 116,
    terms: 34,
    fact: &FACT116,
    odd: &ODD116,
    err: 256,
};

/// Rounds the positive value `s * 2^e2`, known to within `err` units of 2^e2, to binary32
/// (round to nearest even, denormals, overflow to infinity). `None` when a rounding boundary
/// lies within the error.
fn round_f32(s: u128, e2: i32, err: u128) -> Option<u32> {
    if s == 0 {
        return Some(0);
    }
    let top = 127 - s.leading_zeros() as i32 + e2; // exponent of the leading bit
    if top > 128 {
        return Some(0x7F80_0000);
    }
    let lsb = (top - 23).max(-149);
    let shift = lsb - e2;
    if shift <= 0 {
        // Exactly representable in the kept bits (within the error, which is below half an ulp).
        let m = s << (-shift) as u32;
        let bits = ((lsb + 149) as u128) << 23;
        return Some((bits + m).min(0x7F80_0000) as u32);
    }
    let shift = shift as u32;
    if shift >= 127 {
        return Some(0);
    }
    let m = s >> shift;
    let r = s & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if r.abs_diff(half) <= err {
        return None;
    }
    let m = m + u128::from(r > half);
    let bits = (((lsb + 149) as u128) << 23) + m;
    Some(bits.min(0x7F80_0000) as u32)
}

/// FEXP: correctly rounded 2^x (seed: NaN → +NaN, +inf → +inf, ±0 → 1).
pub fn fexp(a: u32) -> u32 {
    fexp_checked(a).0
}

/// FEXP and whether the 116-bit evaluation was needed and itself too close to a boundary
/// (never, as the exhaustive test checks; the rounded approximation is returned then).
pub fn fexp_checked(a: u32) -> (u32, bool) {
    if is_nan(a) {
        return (CANONICAL_NAN, false);
    }
    let neg = a & SIGN != 0;
    let mag = a & ABS;
    // x >= 128 (+inf included): +inf.
    if !neg && mag >= 0x4300_0000 {
        return (INF, false);
    }
    // x < -151 (-inf included): +0.
    if neg && mag > 0x4317_0000 {
        return (0, false);
    }
    // |x| < 2^-26: 2^x lies within 2^-26 of 1, nearer 1 than any midpoint.
    if mag < 0x3280_0000 {
        return (ONE, false);
    }
    // x * 2^49 is an integer: |x| >= 2^-26, so its last place is at least 2^-49; below 2^57
    // in magnitude as |x| < 152. k = floor(x) and frac = x - k in [0, 1) as a 49-bit fraction.
    let (m, e) = unpack(a);
    let xq = i64::from(m) << (e + 49) as u32;
    let xq = if neg { -xq } else { xq };
    let k = (xq >> 49) as i32;
    let fq49 = (xq & ((1i64 << 49) - 1)) as u128;
    if fq49 == 0 {
        // 2^k exactly (k >= -151): 2^-150 is a tie between 0 and the smallest denormal (even: 0).
        return (
            if k >= -126 {
                ((k + 127) as u32) << 23
            } else if k >= -149 {
                1u32 << (k + 149)
            } else {
                0
            },
            false,
        );
    }
    for p in [&P60, &P116] {
        let fq = fq49 << (p.f - 49);
        let ln2 = LN2_Q116 >> (116 - p.f);
        let t = mulshr(fq, ln2, p.f);
        let mut acc = p.fact[p.terms - 1];
        for n in (0..p.terms - 1).rev() {
            acc = p.fact[n] + mulshr(acc, t, p.f);
        }
        if let Some(bits) = round_f32(acc, k - p.f as i32, p.err) {
            return (bits, false);
        }
        if p.f == 116 {
            let bits = round_f32(acc, k - p.f as i32, 0).unwrap_or(0);
            return (bits, true);
        }
    }
    unreachable!("the 116-bit precision returns")
}

/// FLOG: correctly rounded log2(x) (seed: NaN → +NaN, +inf → +inf, ±0 → −inf, −x → +NaN,
/// 1 → +0).
pub fn flog(a: u32) -> u32 {
    flog_checked(a).0
}

/// FLOG and whether the 116-bit evaluation was too close to a boundary (see [`fexp_checked`]).
pub fn flog_checked(a: u32) -> (u32, bool) {
    if is_nan(a) || (a & SIGN != 0 && !is_zero(a)) {
        return (CANONICAL_NAN, false);
    }
    if is_zero(a) {
        return (SIGN | INF, false);
    }
    if is_inf(a) {
        return (INF, false);
    }
    // x = mant * 2^(e - 23) with mant in [2^23, 2^24).
    let bits = a & 0x7FFF_FFFF;
    let (mant, mut e) = if bits >> 23 == 0 {
        let lz = bits.leading_zeros() - 8;
        (bits << lz, -126 - lz as i32)
    } else {
        ((bits & 0x7F_FFFF) | 0x80_0000, (bits >> 23) as i32 - 127)
    };
    if mant == 0x80_0000 {
        // A power of two: log2 is the integer e, exactly.
        return (int_to_float(i64::from(e), false), false);
    }
    // Reduce to m in [sqrt(1/2), sqrt(2)): m = mant / d with d = 2^23 or 2^24.
    let mut d: u64 = 1 << 23;
    if u64::from(mant) * u64::from(mant) > 2u64 << 46 {
        d <<= 1;
        e += 1;
    }
    let num = i64::from(mant) - d as i64; // m - 1, scaled by d
    let den = u64::from(mant) + d; // m + 1, scaled by d
    let negative = num < 0;
    let num = num.unsigned_abs();
    for p in [&P60, &P116] {
        // |z| = |m - 1| / (m + 1) in fixed point, by two long-division steps.
        let q1 = (u128::from(num) << 64) / u128::from(den);
        let r1 = (u128::from(num) << 64) % u128::from(den);
        let q2 = (r1 << 64) / u128::from(den);
        let z128 = (q1 << 64) | q2; // |z| * 2^128
        let z = z128 >> (128 - p.f);
        let w = mulshr(z, z, p.f);
        let mut acc = p.odd[p.terms - 1];
        for n in (0..p.terms - 1).rev() {
            acc = p.odd[n] + mulshr(acc, w, p.f);
        }
        let k = K_Q116 >> (116 - p.f);
        let l = mulshr(mulshr(acc, z, p.f), k, p.f); // |log2 m| * 2^f
                                                     // total = e + sign * l
        let one = 1u128 << p.f;
        let eabs = u128::from(e.unsigned_abs()) * one;
        let (mag, neg) = match (e >= 0, negative) {
            (true, false) => (eabs + l, false),
            (false, true) => (eabs + l, true),
            (true, true) => {
                if eabs >= l {
                    (eabs - l, false)
                } else {
                    (l - eabs, true)
                }
            }
            (false, false) => {
                if eabs >= l {
                    (eabs - l, true)
                } else {
                    (l - eabs, false)
                }
            }
        };
        let sign = if neg { 0x8000_0000 } else { 0 };
        if let Some(b) = round_f32(mag, -(p.f as i32), p.err) {
            return (b | sign, false);
        }
        if p.f == 116 {
            let b = round_f32(mag, -(p.f as i32), 0).unwrap_or(0);
            return (b | sign, true);
        }
    }
    unreachable!("the 116-bit precision returns")
}

// ---- PCK / UNPCK conversions ----

fn mode(toward_zero: bool) -> Rounding {
    if toward_zero {
        Rounding::TowardZero
    } else {
        Rounding::NearestEven
    }
}

/// Float to integer in [lo, hi]: `x * scale` (exact: an integer of at most 41 bits times a
/// power of two) rounded to an integer to nearest even or toward zero; NaN → 0, out of range
/// → the nearer bound.
pub fn float_to_int(bits: u32, lo: i64, hi: i64, scale: u32, toward_zero: bool) -> i64 {
    if is_nan(bits) {
        return 0;
    }
    let neg = bits & SIGN != 0;
    if is_inf(bits) {
        return if neg { lo } else { hi };
    }
    if is_zero(bits) {
        return 0.clamp(lo, hi);
    }
    let (m, e) = unpack(bits);
    let v = u128::from(m) * u128::from(scale);
    let n: u128 = if e >= 0 {
        // At least 2^e: beyond every bound from e = 64 on (the bounds are below 2^33).
        if e >= 64 {
            1 << 64
        } else {
            v << e as u32
        }
    } else {
        let sh = (-e) as u32;
        if sh >= 64 {
            // Below 2^-23 (v < 2^41): rounds to 0 either way.
            0
        } else {
            let q = v >> sh;
            let rem = v & ((1u128 << sh) - 1);
            let half = 1u128 << (sh - 1);
            let up = !toward_zero && (rem > half || (rem == half && q & 1 == 1));
            q + u128::from(up)
        }
    };
    let n = n as i128;
    let r = if neg { -n } else { n };
    r.clamp(i128::from(lo), i128::from(hi)) as i64
}

/// An integer (|v| < 2^63) to binary32: to nearest even, or toward zero.
pub fn int_to_float(v: i64, toward_zero: bool) -> u32 {
    round_bits(
        v < 0,
        u128::from(v.unsigned_abs()),
        0,
        false,
        mode(toward_zero),
    )
}

/// `v / d` (|v| <= d < 2^17, exact integers, d > 0) to binary32, to nearest even or toward
/// zero: a quotient of at least 28 bits and its remainder, rounded once.
pub fn ratio_to_float(v: i64, d: i64, toward_zero: bool) -> u32 {
    debug_assert!(d > 0 && v.unsigned_abs() <= d as u64 && d < 1 << 17);
    if v == 0 {
        return 0;
    }
    let num = u128::from(v.unsigned_abs()) << 44;
    let d = d as u128;
    round_bits(v < 0, num / d, -44, num % d != 0, mode(toward_zero))
}

#[cfg(test)]
mod tests {
    //! The integer float operations against references that share no code with them: FMA
    //! against exact big-integer arithmetic, the rest against the host's IEEE instructions
    //! (division and square root are correctly rounded instructions; the test thread runs in
    //! the default environment) or exact integer conditions.

    use super::*;

    /// A nonnegative integer of 64-bit limbs, least significant first (at most 640 bits:
    /// enough for `|a * b| + |c|` scaled by 2^298).
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Big([u64; 10]);

    impl Big {
        /// `m * 2^s`.
        fn shifted(m: u64, s: u32) -> Big {
            let mut v = [0u64; 10];
            let (limb, bit) = ((s / 64) as usize, s % 64);
            v[limb] = m << bit;
            if bit != 0 {
                v[limb + 1] = m >> (64 - bit);
            }
            Big(v)
        }

        fn add(&self, o: &Big) -> Big {
            let mut v = [0u64; 10];
            let mut carry = 0u128;
            for (k, out) in v.iter_mut().enumerate() {
                let s = u128::from(self.0[k]) + u128::from(o.0[k]) + carry;
                *out = s as u64;
                carry = s >> 64;
            }
            assert_eq!(carry, 0);
            Big(v)
        }

        /// `self - o` for `self >= o`.
        fn sub(&self, o: &Big) -> Big {
            let mut v = [0u64; 10];
            let mut borrow = 0i128;
            for (k, out) in v.iter_mut().enumerate() {
                let d = i128::from(self.0[k]) - i128::from(o.0[k]) - borrow;
                borrow = i128::from(d < 0);
                *out = d.rem_euclid(1 << 64) as u64;
            }
            assert_eq!(borrow, 0);
            Big(v)
        }

        fn cmp(&self, o: &Big) -> Ordering {
            self.0.iter().rev().cmp(o.0.iter().rev())
        }

        fn bit(&self, i: i32) -> bool {
            i >= 0 && (self.0[(i / 64) as usize] >> (i % 64)) & 1 == 1
        }

        /// Index of the highest set bit (None for zero).
        fn top(&self) -> Option<i32> {
            let k = self.0.iter().rposition(|&l| l != 0)?;
            Some(64 * k as i32 + 63 - self.0[k].leading_zeros() as i32)
        }

        /// Whether a bit below index `i` is set.
        fn any_below(&self, i: i32) -> bool {
            (0..i.clamp(0, 640)).step_by(64).any(|k| {
                let limb = self.0[(k / 64) as usize];
                let n = (i - k).min(64);
                n > 0 && (if n == 64 { limb } else { limb & ((1 << n) - 1) }) != 0
            })
        }
    }

    /// `n * 2^-298` rounded to nearest even to binary32, written from the definition:
    /// 24 significant bits, denormals with their fixed last place 2^-149, overflow to inf.
    fn reference_round(neg: bool, n: &Big) -> u32 {
        let sign = if neg { SIGN } else { 0 };
        let Some(t) = n.top() else {
            return sign;
        };
        let exp = t - 298; // of the leading bit
        let last = (exp - 23).max(-149) + 298; // bit index of the last kept place
        let mut q: u64 = 0;
        for i in (last..=t).rev() {
            q = (q << 1) | u64::from(n.bit(i));
        }
        let round = n.bit(last - 1);
        let sticky = n.any_below(last - 1);
        if round && (sticky || q & 1 == 1) {
            q += 1;
        }
        let mut lexp = last - 298; // exponent of the last place
        if q == 1 << 24 {
            q >>= 1;
            lexp += 1;
        }
        if q < 1 << 23 {
            // Denormal (lexp == -149), or zero.
            assert_eq!(lexp, -149);
            return sign | q as u32;
        }
        let biased = lexp + 23 + 127;
        if biased >= 255 {
            return sign | INF;
        }
        sign | ((biased as u32) << 23) | (q as u32 & 0x7F_FFFF)
    }

    /// The exact `a * b + c` for finite nonzero-product inputs, rounded by
    /// [`reference_round`]; special values from IEEE 754's rules via f64 (exact there: a
    /// product of two binary32 values never rounds in f64, and a special result has no
    /// rounding).
    fn reference_fma(a: u32, b: u32, c: u32) -> u32 {
        let special = |x: u32| is_nan(x) || is_inf(x) || is_zero(x);
        if special(a) || special(b) || is_nan(c) || is_inf(c) {
            let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            let r = f64::from(x) * f64::from(y) + f64::from(z);
            return canon(r as f32);
        }
        let (ma, ea) = unpack(a);
        let (mb, eb) = unpack(b);
        let p = Big::shifted(u64::from(ma) * u64::from(mb), (ea + eb + 298) as u32);
        let sp = (a ^ b) & SIGN != 0;
        if is_zero(c) {
            return reference_round(sp, &p);
        }
        let (mc, ec) = unpack(c);
        let q = Big::shifted(u64::from(mc), (ec + 298) as u32);
        let sc = c & SIGN != 0;
        if sp == sc {
            return reference_round(sp, &p.add(&q));
        }
        match p.cmp(&q) {
            Ordering::Equal => 0,
            Ordering::Greater => reference_round(sp, &p.sub(&q)),
            Ordering::Less => reference_round(sc, &q.sub(&p)),
        }
    }

    /// xorshift64.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    const EDGES: [u32; 22] = [
        0,
        SIGN,
        INF,
        SIGN | INF,
        CANONICAL_NAN,
        0xFFC0_1234,
        0x7F80_0001,
        ONE,
        SIGN | ONE,
        1,
        SIGN | 1,
        0x007F_FFFF,
        0x8040_0000,
        0x0080_0000,
        0x0080_0001,
        MAX_FINITE,
        SIGN | MAX_FINITE,
        0x7F00_0000,
        0x3F80_0001,
        0x3F7F_FFFF,
        0x3400_0000,
        0x4B80_0000,
    ];

    /// A binary32 pattern of a random kind: edge values, denormals, tiny and huge
    /// magnitudes, values near 1, short significands (exact products, ties), any pattern.
    fn value(r: &mut Rng) -> u32 {
        let w = r.next();
        let sign = ((w >> 40) as u32 & 1) << 31;
        let mant = (w >> 8) as u32 & 0x7F_FFFF;
        let exp = |lo: u32, n: u32| (lo + (w >> 16) as u32 % n) << 23;
        match w % 9 {
            0 => EDGES[(w >> 20) as usize % EDGES.len()],
            1 => sign | mant,
            2 => sign | exp(1, 40) | mant,
            3 => sign | exp(215, 40) | mant,
            4 => sign | exp(120, 16) | (mant & 0x7F_F000),
            5 => sign | exp(124, 8) | (mant & 0x7F_0000),
            6 => w as u32,
            _ => sign | exp(90, 80) | mant,
        }
    }

    fn check_fma(a: u32, b: u32, c: u32) {
        assert_eq!(
            fma(a, b, c),
            reference_fma(a, b, c),
            "fma({a:#010x}, {b:#010x}, {c:#010x})"
        );
    }

    #[test]
    fn fma_matches_exact_arithmetic_on_edge_values() {
        for a in EDGES {
            for b in EDGES {
                for c in EDGES {
                    check_fma(a, b, c);
                }
            }
        }
    }

    #[test]
    fn fma_matches_exact_arithmetic_on_random_values() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200_000 {
            let (a, b) = (value(&mut r), value(&mut r));
            let c = match r.next() % 4 {
                // Cancellation: the negated product, rounded, a few units away.
                0 => fmul(a, b) ^ SIGN ^ (r.next() as u32 & 7),
                // A term far below or far above the product.
                1 => {
                    let p = fmul(a, b);
                    let e = ((p >> 23) & 0xFF) as i32 + (r.next() % 120) as i32 - 60;
                    (r.next() as u32 & (SIGN | 0x7F_FFFF)) | ((e.clamp(0, 254) as u32) << 23)
                }
                _ => value(&mut r),
            };
            check_fma(a, b, c);
            check_fma(c, b, a);
        }
    }

    #[test]
    fn fma_rounds_ties_to_even_and_keeps_the_sticky_part() {
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1 (and 1 + 2^-22 from
        // 1 + 2^-23); a product just above 2^-24 rounds up, just below down, the bits that
        // decide it 23 places below the rounding bit.
        assert_eq!(fma(0x3380_0000, ONE, ONE), ONE);
        assert_eq!(fma(0x3380_0000, ONE, 0x3F80_0001), 0x3F80_0002);
        assert_eq!(fma(0x3380_0001, ONE, ONE), 0x3F80_0001);
        assert_eq!(fma(0x337F_FFFF, ONE, ONE), ONE);
        // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: exact only when fused.
        assert_eq!(fma(0x3F80_0800, 0x3F80_0800, SIGN | ONE), 0x3A00_0400);
        assert_eq!(
            fmad(0x3F80_0800, 0x3F80_0800, SIGN | ONE, false),
            0x3A00_0000
        );
        assert_eq!(fma(ONE, ONE, SIGN | ONE), 0, "x - x = +0");
        assert_eq!(fma(SIGN, ONE, SIGN), SIGN, "-0 + -0 = -0");
        assert_eq!(fma(MAX_FINITE, 0x4000_0000, SIGN | MAX_FINITE), MAX_FINITE);
        assert_eq!(fma(MAX_FINITE, ONE, MAX_FINITE), INF);
        assert_eq!(fma(1, 1, 0), 0, "2^-298 rounds to +0");
        assert_eq!(fma(SIGN | 1, 1, 0), SIGN, "-2^-298 rounds to -0");
        assert_eq!(
            fma(1, 1, SIGN | 1),
            SIGN | 1,
            "-2^-149 + 2^-298 rounds back"
        );
        assert_eq!(fma(INF, 0, ONE), CANONICAL_NAN);
        assert_eq!(fma(INF, ONE, SIGN | INF), CANONICAL_NAN);
    }

    #[test]
    fn fadd_fmul_match_the_host_in_the_default_environment() {
        let mut r = Rng(77);
        for _ in 0..100_000 {
            let (a, b) = (value(&mut r), value(&mut r));
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            assert_eq!(fadd(a, b), canon(x + y), "{a:#x} + {b:#x}");
            assert_eq!(fmul(a, b), canon(x * y), "{a:#x} * {b:#x}");
            assert_eq!(compare(a, b), x.partial_cmp(&y), "{a:#x} <> {b:#x}");
            assert_eq!(fmad(a, b, a, false), canon(x * y + x), "unfused");
        }
    }

    /// Every 65521st pattern and every edge value with its neighbours.
    fn patterns() -> impl Iterator<Item = u32> {
        (0..=u32::MAX).step_by(65_521).chain(
            EDGES
                .iter()
                .flat_map(|&e| [e.wrapping_sub(1), e, e.wrapping_add(1)]),
        )
    }

    #[test]
    fn frcp_fsqrt_match_ieee_division_and_square_root() {
        for a in patterns() {
            let x = f32::from_bits(a);
            assert_eq!(frcp(a), canon(1.0 / x), "frcp {a:#x}");
            assert_eq!(fsqrt(a), canon(x.sqrt()), "fsqrt {a:#x}");
        }
    }

    #[test]
    fn frsq_lies_between_its_midpoints() {
        for a in patterns() {
            let y = frsq(a);
            let x = f32::from_bits(a);
            if x.is_nan() || x < 0.0 || x == 0.0 || x.is_infinite() {
                continue;
            }
            // The midpoints around y as m * 2^e (m odd after doubling), and x = xm * 2^xe:
            // y is correct when lo^2 * x < 1 < hi^2 * x, compared exactly.
            let (ym, ye) = unpack(y);
            let (xm, xe) = unpack(a);
            let side = |mid: u64| {
                // (mid * 2^(ye - 1))^2 * xm * 2^xe against 1.
                let v = u128::from(mid) * u128::from(mid) * u128::from(xm);
                let e = 2 * (ye - 1) + xe;
                let bits = 128 - v.leading_zeros() as i32;
                if bits + e > 1 {
                    Ordering::Greater
                } else if e >= 0 {
                    (v << e).cmp(&1)
                } else {
                    v.cmp(&(1u128 << -e))
                }
            };
            let m = 2 * u64::from(ym);
            assert_eq!(side(m - 1), Ordering::Less, "frsq {a:#x} too small");
            assert_eq!(side(m + 1), Ordering::Greater, "frsq {a:#x} too large");
        }
    }

    #[test]
    fn conversions_match_their_definitions() {
        let mut r = Rng(5);
        for _ in 0..100_000 {
            let v = (r.next() as i64) >> (r.next() % 64);
            let v = v.clamp(-(1 << 33), 1 << 33);
            assert_eq!(int_to_float(v, false), (v as f32).to_bits(), "{v}");
            let z = f32::from_bits(int_to_float(v, true));
            assert!(f64::from(z).abs() <= (v as f64).abs(), "{v} toward zero");
            let next = f64::from(f32::from_bits(z.abs().to_bits() + 1));
            assert!(
                next > (v as f64).abs(),
                "{v} toward zero is the nearest below"
            );
        }
        for d in [127, 255, 32767, 65535] {
            for v in -d..=d {
                let q = f32::from_bits(ratio_to_float(v, d, false));
                assert_eq!(q, v as f32 / d as f32, "{v}/{d}");
            }
        }
        assert_eq!(float_to_int(0x3F00_0000, 0, 255, 255, false), 128); // 127.5: even
        assert_eq!(float_to_int(0x3F00_0000, 0, 255, 255, true), 127);
        assert_eq!(float_to_int(0xC020_0000, -128, 127, 1, false), -2); // -2.5: even
        assert_eq!(float_to_int(0x7F80_0000, -128, 127, 1, false), 127);
        assert_eq!(float_to_int(0x8000_0001, -128, 127, 1, true), 0);
        assert_eq!(floor_bits(0xBFC0_0000), 0xC000_0000); // floor(-1.5) = -2
        assert_eq!(floor_bits(0x8000_0001), SIGN | ONE);
        assert_eq!(floor_bits(0x0000_0001), 0);
        assert_eq!(saturate(0x0000_0001), 1, "a denormal is kept");
    }
}
