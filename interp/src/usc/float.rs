//! Float operations of the USC main ALU, as the interpreter defines them and every JIT must
//! reproduce them (`docs/usc.md`, "Float model"):
//!
//! * binary32 with IEEE 754 round-to-nearest-even, denormals kept (the reference names no flush);
//! * every float arithmetic result that is a NaN is the canonical quiet NaN 0x7FC00000
//!   (the reference: "FRCP(NaN) = +NaN", "FRSQ (Any NaN) = +NaN", "log2 (Any NaN) = +NaN", ...);
//!   moves (MBYP, MOV) keep bits as they are;
//! * FRCP, FRSQ, FSQRT, FLOG, FEXP are correctly rounded (the reference states special values and
//!   no accuracy; FRCP and FSQRT are IEEE division and square root, FRSQ is checked against
//!   midpoints in exact integer arithmetic, FLOG and FEXP are evaluated in fixed point with an
//!   error bound and re-evaluated with 116 fraction bits when the 60-bit result is too close to
//!   a rounding boundary; `tests/usc_interp.rs` checks with `PICAJIT_USC_EXHAUSTIVE=1` that the
//!   116-bit evaluation is never too close, over every input).

/// The canonical NaN every float arithmetic result that is a NaN becomes.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;

/// Canonical bits of an arithmetic result.
#[inline]
pub fn canon(x: f32) -> u32 {
    if x.is_nan() {
        CANONICAL_NAN
    } else {
        x.to_bits()
    }
}

/// `.sat`: clamp to [+0, 1]; NaN becomes +0 (the reference, .CLAMP: "Clamps value to range
/// [+0,1]").
#[inline]
pub fn saturate(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        0x3F80_0000
    } else {
        bits
    }
}

/// `.flr`: floor, keeping NaNs, infinities and signed zeros (the reference, .FLR).
#[inline]
pub fn floor_bits(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        bits
    } else {
        x.floor().to_bits()
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

/// FMAD: `a * b + c`, fused (one rounding) or with the product rounded first.
#[inline]
pub fn fmad(a: u32, b: u32, c: u32, fused: bool) -> u32 {
    let (a, b, c) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
    canon(if fused { a.mul_add(b, c) } else { a * b + c })
}

#[inline]
pub fn fadd(a: u32, b: u32) -> u32 {
    canon(f32::from_bits(a) + f32::from_bits(b))
}

#[inline]
pub fn fmul(a: u32, b: u32) -> u32 {
    canon(f32::from_bits(a) * f32::from_bits(b))
}

/// FRCP: IEEE division (seed: NaN → +NaN, ±inf → ±0, ±0 → ±inf, ±1 → ±1 exactly).
pub fn frcp(a: u32) -> u32 {
    canon(1.0 / f32::from_bits(a))
}

/// FSQRT: IEEE square root (−0 → −0, negative → +NaN).
pub fn fsqrt(a: u32) -> u32 {
    canon(f32::from_bits(a).sqrt())
}

/// FRSQ: correctly rounded 1/sqrt(x) (seed: NaN → +NaN, +inf → +0, ±0 → ±inf, −x → +NaN,
/// 1 → 1 exactly).
pub fn frsq(a: u32) -> u32 {
    let x = f32::from_bits(a);
    if x.is_nan() || (x < 0.0) {
        return CANONICAL_NAN;
    }
    if x == 0.0 {
        return (a & 0x8000_0000) | 0x7F80_0000;
    }
    if x.is_infinite() {
        return 0;
    }
    // x is positive and finite: the result is normal (between 2^-64 and 2^75).
    let mut y = (1.0 / f64::from(x).sqrt()) as f32;
    // Move y until 1/sqrt(x) lies between the midpoints around it. No midpoint is ever hit
    // exactly: that would need x = 1/m^2 for a midpoint m, whose significand is odd.
    for _ in 0..4 {
        let yb = y.to_bits();
        let lo = (f64::from(y) + f64::from(f32::from_bits(yb - 1))) / 2.0;
        let hi = (f64::from(y) + f64::from(f32::from_bits(yb + 1))) / 2.0;
        if below_rsqrt(lo, x) {
            // lo > 1/sqrt(x): too big.
            y = f32::from_bits(yb - 1);
        } else if !below_rsqrt(hi, x) {
            y = f32::from_bits(yb + 1);
        } else {
            break;
        }
    }
    y.to_bits()
}

/// Whether `m > 1/sqrt(x)`, i.e. `m*m*x > 1`, in exact integer arithmetic (m has at most 25
/// significant bits, x at most 24).
fn below_rsqrt(m: f64, x: f32) -> bool {
    let (mm, me) = split_f64(m);
    let (xm, xe) = split_f64(f64::from(x));
    // m*m*x = mm^2 * xm * 2^(2me + xe).
    let p = u128::from(mm) * u128::from(mm) * u128::from(xm);
    let e = 2 * me + xe;
    // Compare p * 2^e with 1.
    let bits = 128 - p.leading_zeros() as i32;
    if bits + e > 1 {
        // p * 2^e >= 2^(bits-1+e) >= 2 > 1, or equal to 2^0 handled below.
        return true;
    }
    if e >= 0 {
        return p > 1 || (p == 1 && e > 0);
    }
    let shift = -e;
    if shift >= 128 {
        return false;
    }
    p > (1u128 << shift)
}

/// `v = m * 2^e` with m an odd integer (v positive, finite, nonzero).
fn split_f64(v: f64) -> (u64, i32) {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7FF) as i32;
    let (mut m, mut e) = if exp == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), exp - 1075)
    };
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    (m, e)
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
    let x = f32::from_bits(a);
    if x.is_nan() {
        return (CANONICAL_NAN, false);
    }
    if x == f32::INFINITY || x >= 128.0 {
        return (0x7F80_0000, false);
    }
    if x == f32::NEG_INFINITY || x < -151.0 {
        return (0, false);
    }
    // |x| < 2^-26: 2^x lies within 2^-26 of 1, nearer 1 than any midpoint.
    if x.abs() < 1.0 / 67_108_864.0 {
        return (0x3F80_0000, false);
    }
    let k = x.floor();
    let frac = f64::from(x) - f64::from(k); // exact: |x| < 152 and ulp(x) >= 2^-49
    let k = k as i32;
    if frac == 0.0 {
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
        // frac * 2^f is an integer: frac's ulp is at least 2^-49.
        let fq = (frac * (1u64 << 49) as f64) as u128;
        let fq = fq << (p.f - 49);
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
    let x = f32::from_bits(a);
    if x.is_nan() || (x < 0.0) {
        return (CANONICAL_NAN, false);
    }
    if x == 0.0 {
        return (0xFF80_0000, false);
    }
    if x.is_infinite() {
        return (0x7F80_0000, false);
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
        return ((e as f32).to_bits(), false);
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

/// Rounds a finite f64 to an integer: to nearest even, or toward zero.
fn round_int(v: f64, toward_zero: bool) -> f64 {
    if toward_zero {
        v.trunc()
    } else {
        let r = v.round();
        // `round` rounds halves away from zero; make ties even.
        if (r - v).abs() == 0.5 && r % 2.0 != 0.0 {
            r - (r - v).signum()
        } else {
            r
        }
    }
}

/// Float to integer in [lo, hi]: NaN → 0, out of range → the nearer bound.
pub fn float_to_int(bits: u32, lo: i64, hi: i64, scale: f64, toward_zero: bool) -> i64 {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        return 0;
    }
    let v = f64::from(x) * scale; // exact: scale has at most 16 significant bits
    let r = round_int(v, toward_zero);
    if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as i64
    }
}

/// An integer (|v| < 2^33) to binary32: to nearest even, or toward zero.
pub fn int_to_float(v: i64, toward_zero: bool) -> u32 {
    let f = v as f32; // round to nearest even
    if toward_zero && (f64::from(f)).abs() > (v as f64).abs() {
        // One ulp toward zero.
        return f.to_bits() - 1;
    }
    f.to_bits()
}

/// `v / d` (|v| <= d < 2^17, exact integers) to binary32, to nearest even or toward zero.
pub fn ratio_to_float(v: i64, d: i64, toward_zero: bool) -> u32 {
    let q = (v as f32) / (d as f32); // IEEE division of exact operands: correctly rounded
    if toward_zero && q != 0.0 {
        // The exact quotient's magnitude is below |q| when q*d overshoots |v|: compare in f64
        // (q has 24 significant bits and d at most 17, so the product is exact).
        if (f64::from(q) * d as f64).abs() > (v as f64).abs() {
            return q.to_bits() - 1;
        }
    }
    q.to_bits()
}
