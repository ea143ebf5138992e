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
//! * **One test per rounding.** The rounding is `ops::finish`'s formula; its NaN, infinity,
//!   overflow and underflow exits become one range test on the rounded magnitude (a NaN or
//!   infinite value rounds to at least the overflow threshold, so it fails it too), and
//!   whatever fails it (zeros, tiny and huge results, infinities, NaNs, `inf × 0`) goes to the
//!   definition's own code, out of line. Shader data almost never takes that path, so the
//!   branch is predicted.
//!
//! `interp/tests/float_fast.rs` compares every function here with its definition: all of one
//! operand's f24 patterns (and a sweep of f32 patterns) against a structured set of the other,
//! and random pairs (hundreds of millions with `PICAJIT_FAST_FLOAT_PAIRS`).

use super::ops::{finish, mul_p, params, Params, F64_SIGN};
use super::FloatMode;

/// Rule 1 on an operand, widened to f64 (exact).
#[inline(always)]
fn flush64(x: f32, p: Params) -> f64 {
    let b = x.to_bits();
    let b = if b & 0x7FFF_FFFF < p.min_f32 { 0 } else { b };
    f32::from_bits(b) as f64
}

/// Rules 2-5 on `x + err` (see `ops::finish`) when the rounded magnitude is a normal of the
/// mode, else `None`. `exact` says `err` is zero, so that products skip the remainder's tests.
///
/// This is `finish`'s rounding with its three exits merged into one range test: a NaN or
/// infinite `x` rounds to at least the overflow threshold, so it fails the test too.
#[inline(always)]
fn round_normal(x: f64, err: f64, exact: bool, p: Params) -> Option<f64> {
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
    if t.wrapping_sub(p.min_f64) < p.ovf_f64 - p.min_f64 {
        Some(f64::from_bits(sign | t))
    } else {
        None
    }
}

/// The rounded product of two flushed operands, as an f64.
#[inline(always)]
fn mul64(a: f64, b: f64, p: Params) -> f64 {
    match round_normal(a * b, 0.0, true, p) {
        Some(r) => r,
        None => mul_rare(a, b, p),
    }
}

/// Products that are zero, tiny, huge, infinite or NaN: the definition's own steps.
#[cold]
#[inline(never)]
fn mul_rare(a: f64, b: f64, p: Params) -> f64 {
    // a and b are flushed f32 values, so the definition sees the same operands.
    mul_p(a as f32, b as f32, p) as f64
}

/// The rounded sum of two flushed operands (or rounded results), as an f64.
#[inline(always)]
fn add64(a: f64, b: f64, p: Params) -> f64 {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    match round_normal(s, err, false, p) {
        Some(r) => r,
        None => add_rare(s, err, p),
    }
}

/// Sums that round to zero, below the smallest normal, to infinity or NaN.
#[cold]
#[inline(never)]
fn add_rare(s: f64, err: f64, p: Params) -> f64 {
    finish(s, err, p) as f64
}

#[inline(always)]
fn narrow(x: f64) -> f32 {
    // Every value the rounding returns is exact in f32 (NaN: the canonical payload survives).
    x as f32
}

/// [`super::add`].
#[inline(always)]
pub fn add(a: f32, b: f32, m: FloatMode) -> f32 {
    let p = params(m);
    narrow(add64(flush64(a, p), flush64(b, p), p))
}

/// [`super::mul`].
#[inline(always)]
pub fn mul(a: f32, b: f32, m: FloatMode) -> f32 {
    let p = params(m);
    narrow(mul64(flush64(a, p), flush64(b, p), p))
}

/// [`super::mad`].
#[inline(always)]
pub fn mad(a: f32, b: f32, c: f32, m: FloatMode) -> f32 {
    let p = params(m);
    let prod = mul64(flush64(a, p), flush64(b, p), p);
    narrow(add64(prod, flush64(c, p), p))
}

#[inline(always)]
fn products(a: [f32; 4], b: [f32; 4], p: Params) -> [f64; 4] {
    // Written out: `array::map` with a closure was left as an out-of-line call per lane.
    [
        mul64(flush64(a[0], p), flush64(b[0], p), p),
        mul64(flush64(a[1], p), flush64(b[1], p), p),
        mul64(flush64(a[2], p), flush64(b[2], p), p),
        mul64(flush64(a[3], p), flush64(b[3], p), p),
    ]
}

/// [`super::dp4`].
#[inline(always)]
pub fn dp4(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    let p = params(m);
    let [p0, p1, p2, p3] = products(a, b, p);
    narrow(add64(add64(p0, p1, p), add64(p2, p3, p), p))
}

/// [`super::dp3`].
#[inline(always)]
pub fn dp3(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    let p = params(m);
    let p0 = mul64(flush64(a[0], p), flush64(b[0], p), p);
    let p1 = mul64(flush64(a[1], p), flush64(b[1], p), p);
    let p2 = mul64(flush64(a[2], p), flush64(b[2], p), p);
    narrow(add64(add64(p0, p1, p), p2, p))
}

/// [`super::dph`].
#[inline(always)]
pub fn dph(a: [f32; 4], b: [f32; 4], m: FloatMode) -> f32 {
    dp4([a[0], a[1], a[2], 1.0], b, m)
}

/// [`super::round_to_mode`] for values already exact in f64: what the other operations'
/// results go through.
#[inline(always)]
pub fn round_to_mode(x: f64, m: FloatMode) -> f32 {
    let p = params(m);
    match round_normal(x, 0.0, true, p) {
        Some(r) => narrow(r),
        None => finish(x, 0.0, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::float::{Rounding, CANONICAL_NAN};

    #[test]
    fn canonical_nan_round_trips_through_f64() {
        assert_eq!(
            ((CANONICAL_NAN as f64) as f32).to_bits(),
            CANONICAL_NAN.to_bits()
        );
        let m = FloatMode::F24(Rounding::TowardZero);
        assert_eq!(
            add(f32::INFINITY, f32::NEG_INFINITY, m).to_bits(),
            CANONICAL_NAN.to_bits()
        );
    }
}
