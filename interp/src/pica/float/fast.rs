//! The interpreter's forms of ADD, MUL, MAD and the dot products: the same results as
//! [`super::ops`] (which stays the definition), computed with fewer steps.
//!
//! Where they differ from the definition, and why the results cannot:
//!
//! * **Every sum goes through TwoSum.** [`super::add`] skips it when the exponents show the
//!   f64 sum is exact; TwoSum's remainder is then exactly zero (it is the exact error of a
//!   round-to-nearest f64 addition of finite values, which cannot overflow for f32 inputs),
//!   so the rounding sees the same `err`. When the sum is infinite or NaN the remainder may
//!   be NaN, but the rounding of an infinite or NaN sum never reads it (an infinite sum with
//!   a borrowed unit is still at or above the overflow threshold). No branch on exponents.
//! * **Intermediate results stay f64.** A rounded product or partial sum is an exact f64
//!   value on the mode's grid, `+0`, an infinity or the canonical NaN; the definition narrows
//!   it to f32 and widens it again before the next step, and flushes it as the next step's
//!   input, which changes nothing for such values (none is below the smallest normal).
//! * **One test per operation.** Each rounding is `ops::finish`'s formula, with the underflow
//!   to `+0` as a select and its NaN, infinity and overflow exits merged into one test (a NaN
//!   or infinite value rounds to at least the overflow threshold, so it fails it too). An
//!   operation computes every step as if none failed, then checks them all at once; if any
//!   did (infinities, NaNs, `inf × 0`, overflow) the definition computes the result, out of
//!   line. Shader data almost never goes there, so the one branch is predicted.
//!
//! `interp/tests/float_fast.rs` compares every function here with its definition: all of one
//! operand's f24 patterns (and a sweep of f32 patterns) against a structured set of the other,
//! and random pairs (hundreds of millions with `PICAJIT_FAST_FLOAT_PAIRS`).

use super::ops::{finish, params, Params, F64_SIGN};
use super::FloatMode;

/// Rule 1 on an operand, widened to f64 (exact).
#[inline(always)]
fn flush64(x: f32, p: Params) -> f64 {
    let b = x.to_bits();
    let b = if b & 0x7FFF_FFFF < p.min_f32 { 0 } else { b };
    f32::from_bits(b) as f64
}

/// Rules 2-5 on `x + err` (see `ops::finish`), and whether that was all there was to do:
/// false for an infinite or NaN `x` and for results that overflow, whose value here is not the
/// definition's. `exact` says `err` is zero, so that products skip the remainder's tests.
///
/// This is `finish`'s rounding with its NaN, infinity and overflow exits merged into one test
/// (a NaN or infinite `x` rounds to at least the overflow threshold, so it fails it too) and
/// the underflow to `+0` as a select.
#[inline(always)]
fn round(x: f64, err: f64, exact: bool, p: Params) -> (f64, bool) {
    let bits = x.to_bits();
    let sign = bits & F64_SIGN;
    let mag = bits & !F64_SIGN;
    let unit = 1u64 << p.drop;
    let (nonzero, opposite) = if exact {
        (false, false)
    } else {
        (err != 0.0, ((err.to_bits() ^ bits) & F64_SIGN) != 0)
    };
    let bias = if p.nearest {
        let odd = (mag >> p.drop) & 1;
        let up = if nonzero { !opposite as u64 } else { odd };
        (unit >> 1) - 1 + up
    } else {
        ((nonzero & opposite & (mag != 0)) as u64).wrapping_neg()
    };
    let t = mag.wrapping_add(bias) & !(unit - 1);
    let r = if t < p.min_f64 { 0 } else { sign | t };
    (f64::from_bits(r), t < p.ovf_f64)
}

/// The rounded product of two flushed operands, as an f64, and whether it is the
/// definition's (not for infinite or NaN products, `inf × 0` among them, and overflows).
#[inline(always)]
fn mul64(a: f64, b: f64, p: Params) -> (f64, bool) {
    round(a * b, 0.0, true, p)
}

/// The rounded sum of two flushed operands (or rounded results), as [`mul64`].
#[inline(always)]
fn add64(a: f64, b: f64, p: Params) -> (f64, bool) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    round(s, err, false, p)
}

#[inline(always)]
fn narrow(x: f64) -> f32 {
    // Every value the rounding returns is exact in f32.
    x as f32
}

// Each operation computes its result as if no rounding met an infinity, a NaN or an
// overflow, then checks that once; otherwise the definition computes it, out of line.

/// `op` of two flushed operands, or `definition` where it meets an infinity, a NaN or an
/// overflow.
#[inline(always)]
fn binary(
    a: f32,
    b: f32,
    m: FloatMode,
    op: impl Fn(f64, f64, Params) -> (f64, bool),
    definition: impl Fn(f32, f32, FloatMode) -> f32,
) -> f32 {
    let p = params(m);
    match op(flush64(a, p), flush64(b, p), p) {
        (r, true) => narrow(r),
        _ => definition(a, b, m),
    }
}

/// [`super::add`].
#[inline(always)]
pub fn add(a: f32, b: f32, m: FloatMode) -> f32 {
    binary(a, b, m, add64, rare::add)
}

/// [`super::mul`].
#[inline(always)]
pub fn mul(a: f32, b: f32, m: FloatMode) -> f32 {
    binary(a, b, m, mul64, rare::mul)
}

/// [`super::mad`].
#[inline(always)]
pub fn mad(a: f32, b: f32, c: f32, m: FloatMode) -> f32 {
    let p = params(m);
    let (prod, ok0) = mul64(flush64(a, p), flush64(b, p), p);
    match add64(prod, flush64(c, p), p) {
        (r, true) if ok0 => narrow(r),
        _ => rare::mad(a, b, c, m),
    }
}

/// Rule 1 on four operands at once (a form the compiler turns into vector operations).
#[inline(always)]
fn flush4(x: [f32; 4], p: Params) -> [f64; 4] {
    let mut out = [0.0; 4];
    for (o, x) in out.iter_mut().zip(x) {
        let b = x.to_bits();
        *o = f32::from_bits(if b & 0x7FFF_FFFF < p.min_f32 { 0 } else { b }) as f64;
    }
    out
}

/// [`super::mul`] on four lanes at once; lanes `mask` leaves out hold unspecified values.
/// All four are computed (no branch per lane on the mask, which changes from one instruction
/// to the next); only a selected lane's infinity, NaN or overflow sends the work to the
/// definition.
#[inline(always)]
pub fn mul4(a: [f32; 4], b: [f32; 4], mask: [bool; 4], m: FloatMode) -> [f32; 4] {
    binary4(a, b, mask, m, mul64, super::mul)
}

/// [`super::add`] on four lanes at once, as [`mul4`].
#[inline(always)]
pub fn add4(a: [f32; 4], b: [f32; 4], mask: [bool; 4], m: FloatMode) -> [f32; 4] {
    binary4(a, b, mask, m, add64, super::add)
}

/// [`binary`] on four lanes at once, as [`mul4`] describes.
#[inline(always)]
fn binary4(
    a: [f32; 4],
    b: [f32; 4],
    mask: [bool; 4],
    m: FloatMode,
    op: impl Fn(f64, f64, Params) -> (f64, bool),
    definition: impl Fn(f32, f32, FloatMode) -> f32,
) -> [f32; 4] {
    let p = params(m);
    let (fa, fb) = (flush4(a, p), flush4(b, p));
    let mut r = [0.0; 4];
    let mut ok = true;
    for l in 0..4 {
        let (v, o) = op(fa[l], fb[l], p);
        r[l] = narrow(v);
        ok &= o | !mask[l];
    }
    if ok {
        r
    } else {
        rare::lanes(mask, |l| definition(a[l], b[l], m))
    }
}

/// [`super::mad`] on four lanes at once, as [`mul4`].
#[inline(always)]
pub fn mad4(a: [f32; 4], b: [f32; 4], c: [f32; 4], mask: [bool; 4], m: FloatMode) -> [f32; 4] {
    let p = params(m);
    let (fa, fb, fc) = (flush4(a, p), flush4(b, p), flush4(c, p));
    let mut r = [0.0; 4];
    let mut ok = true;
    for l in 0..4 {
        let (prod, o0) = mul64(fa[l], fb[l], p);
        let (v, o1) = add64(prod, fc[l], p);
        r[l] = narrow(v);
        ok &= (o0 & o1) | !mask[l];
    }
    if ok {
        r
    } else {
        rare::lanes(mask, |l| super::mad(a[l], b[l], c[l], m))
    }
}

/// The first three products of a dot product of flushed operands, and whether all three are
/// the definition's.
#[inline(always)]
fn products3(fa: &[f64; 4], fb: &[f64; 4], p: Params) -> ([f64; 3], bool) {
    let (p0, ok0) = mul64(fa[0], fb[0], p);
    let (p1, ok1) = mul64(fa[1], fb[1], p);
    let (p2, ok2) = mul64(fa[2], fb[2], p);
    ([p0, p1, p2], ok0 & ok1 & ok2)
}

/// [`super::dp4`].
#[inline(always)]
pub fn dp4(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    let p = params(m);
    let (fa, fb) = (flush4(a, p), flush4(b, p));
    let ([p0, p1, p2], ok012) = products3(&fa, &fb, p);
    let (p3, ok3) = mul64(fa[3], fb[3], p);
    let (s01, ok4) = add64(p0, p1, p);
    let (s23, ok5) = add64(p2, p3, p);
    match add64(s01, s23, p) {
        (r, true) if ok012 & ok3 & ok4 & ok5 => narrow(r),
        _ => rare::dp4(a, b, m),
    }
}

/// [`super::dp3`].
#[inline(always)]
pub fn dp3(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    let p = params(m);
    let (fa, fb) = (flush4(a, p), flush4(b, p));
    let ([p0, p1, p2], ok012) = products3(&fa, &fb, p);
    let (s01, ok3) = add64(p0, p1, p);
    match add64(s01, p2, p) {
        (r, true) if ok012 & ok3 => narrow(r),
        _ => rare::dp3(a, b, m),
    }
}

/// [`super::dph`].
#[inline(always)]
pub fn dph(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    dp4([a[0], a[1], a[2], 1.0], b, m)
}

/// The definitions, kept out of line so that the fast paths stay small.
mod rare {
    use crate::pica::float::{ops, FloatMode};

    #[cold]
    #[inline(never)]
    pub fn add(a: f32, b: f32, m: FloatMode) -> f32 {
        ops::add(a, b, m)
    }

    #[cold]
    #[inline(never)]
    pub fn mul(a: f32, b: f32, m: FloatMode) -> f32 {
        ops::mul(a, b, m)
    }

    #[cold]
    #[inline(never)]
    pub fn mad(a: f32, b: f32, c: f32, m: FloatMode) -> f32 {
        ops::mad(a, b, c, m)
    }

    #[cold]
    #[inline(never)]
    pub fn dp4(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
        ops::dp4(a, b, m)
    }

    /// The selected lanes through `f` (the definition), the others `+0`.
    #[cold]
    #[inline(never)]
    pub fn lanes(mask: [bool; 4], f: impl Fn(usize) -> f32) -> [f32; 4] {
        let mut r = [0.0; 4];
        for l in 0..4 {
            if mask[l] {
                r[l] = f(l);
            }
        }
        r
    }

    #[cold]
    #[inline(never)]
    pub fn dp3(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
        ops::dp3(a, b, m)
    }
}

/// [`super::round_to_mode`] for values already exact in f64: what the other operations'
/// results go through.
#[inline(always)]
pub fn round_to_mode(x: f64, m: FloatMode) -> f32 {
    let p = params(m);
    match round(x, 0.0, true, p) {
        (r, true) => narrow(r),
        _ => finish(x, 0.0, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pica::float::{Rounding, CANONICAL_NAN};

    // A NaN never leaves through `narrow`: every NaN or infinite intermediate fails the
    // range test and the definition computes the result. That matters on AArch64, where
    // narrowing a NaN f64 gave the default NaN 0x7FC0_0000 instead of keeping the canonical
    // NaN's payload (seen natively under qemu-user, scripts/test-aarch64.sh), so this test
    // checks the results, not the round trip.
    #[test]
    fn nan_results_are_the_canonical_nan() {
        let quiet = f32::from_bits(0x7FC0_0000);
        let n = CANONICAL_NAN.to_bits();
        for m in [
            FloatMode::F24(Rounding::TowardZero),
            FloatMode::F24(Rounding::NearestEven),
            FloatMode::F32,
        ] {
            assert_eq!(add(f32::INFINITY, f32::NEG_INFINITY, m).to_bits(), n);
            assert_eq!(add(quiet, 1.0, m).to_bits(), n);
            assert_eq!(mul(quiet, 2.0, m).to_bits(), n);
            assert_eq!(mad(2.0, 3.0, quiet, m).to_bits(), n);
            assert_eq!(mad(f32::INFINITY, 1.0, f32::NEG_INFINITY, m).to_bits(), n);
            assert_eq!(dp4([1.0, quiet, 0.0, 0.0], [1.0; 4], m).to_bits(), n);
            assert_eq!(
                dp3([f32::INFINITY, f32::NEG_INFINITY, 0.0, 0.0], [1.0; 4], m).to_bits(),
                n
            );
            assert_eq!(
                dph([0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, quiet], m).to_bits(),
                n
            );
            let r = mul4(
                [quiet, 1.0, quiet, 1.0],
                [1.0; 4],
                [true, true, false, false],
                m,
            );
            assert_eq!(r[0].to_bits(), n);
            assert_eq!(r[1], 1.0);
            // PICA's inf * 0 is +0, not a NaN.
            assert_eq!(mul(f32::INFINITY, 0.0, m).to_bits(), 0);
        }
    }
}
