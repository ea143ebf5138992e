//! RCP and RSQ, written once for every emitter over the host's lane operations and the
//! emitter's [`Float`] steps.
//!
//! The steps are the float model's JIT recipes (`picajit_interp::pica::float::transcendental`,
//! module docs "RCP" and "RSQ", and its reference functions `rcp_jit_recipe_rz`,
//! `rcp_jit_recipe_rne`, `rcp_jit_recipe_f32`, `rsq_jit_recipe_rz`, `rsq_jit_recipe_rne` and,
//! for F32 mode, `rsq` itself), on the flushed operand:
//!
//! * **RCP**, F24 RTZ: the f32 quotient with the host rounding toward zero, then the f24
//!   fix-up (a directed 24-bit rounding truncated to 17 bits is the 17-bit truncation). F24
//!   RNE: the f64 quotient in round-to-nearest, rounded to 17 bits (an f32 quotient would
//!   round twice). F32: the f32 quotient and the f32 fix-up on x86-64; through f64 like F24
//!   RNE (rounded to 24 bits) on AArch64, a host choice ([`Float::rcp_f32_through_f64`]).
//! * **RSQ**, F24 RTZ: `r = sqrt(1/x)`, both rounded down (`r <= 1/sqrt(x)`, within
//!   `2^-51` of it); `t` = `r` truncated to the 17-bit grid; `u = t + ulp17`; `u` when
//!   `u·u·x <= 1` (exact in f64 for f24 inputs), else `t`. F24 RNE: `q = 1/sqrt(x)`, `t` = `q`
//!   truncated, and `t + ulp17` when `h·h·x < 1` for the midpoint `h = t + ulp17/2` (the
//!   model's own exact midpoint test, `rsq_f24_exact`, never needed on f24 inputs but as
//!   cheap). F32: `1/sqrt(x)` in f64, narrowed once.
//!
//! # Special values
//!
//! After the flush the operand is a positive or negative normal, +0, ±inf or a NaN, and
//! IEEE division and square root give the model's specials without a separate path:
//! `1/+0 = +inf`, `1/±inf = ±0` (the range step makes -0 +0), `sqrt` of a negative value or
//! of -inf is a NaN, NaN stays NaN (made canonical by the range step), `1/sqrt(+0) = +inf`,
//! `1/sqrt(+inf) = +0`. The grid steps keep them: an infinite `t` plus an ulp is a NaN bit
//! pattern and a zero `t` plus an ulp a subnormal whose square times the operand is a NaN
//! (`0 · inf`), so neither compare holds and `t` stays. The one exception is RTZ RSQ's
//! `sqrt(1/-inf) = sqrt(-0) = -0`, where the model wants a NaN: -inf lanes are made a NaN
//! first. Being branch-free, the same code runs one vertex's lane 0 (per-vertex code) and
//! every lane of the lane emitters.

use super::{Float, Lanes, Src, ONE, ONE64};
use picajit_interp::pica::float::precision::{F24_GRID_F64, F24_ULP_F64};
use picajit_interp::pica::float::{FloatMode, Rounding};

/// Which lanes a recipe computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneSet {
    /// Every f32 lane (the lane emitters: one vertex per lane).
    All,
    /// Lane 0 (the per-vertex code, which broadcasts it): of the f64 work only the low half
    /// is done; the other lanes of the result are unspecified.
    First,
}

/// RCP of the flushed f32 lanes of `x` into `d`, rounded and range-checked by the mode.
/// `t` is `[lo, hi, k]` (`hi` unused for [`LaneSet::First`]); all must differ from `d` and
/// `x`, and `d` from `x`.
pub fn rcp<E: Float>(e: &mut E, lanes: LaneSet, d: E::R, x: E::R, t: [E::R; 3]) {
    let f32_division = match e.mode() {
        FloatMode::F24(Rounding::TowardZero) => true,
        FloatMode::F24(Rounding::NearestEven) => false,
        FloatMode::F32 => !e.rcp_f32_through_f64(),
    };
    if f32_division {
        e.h().div_f32(d, Src::K(ONE), x);
    } else {
        // The f64 quotient is never near a rounding boundary of the mode (module docs of
        // `picajit_interp::pica::float::transcendental`), so rounding it once is exact. Both halves
        // are divided before either is rounded.
        let [lo, hi, k] = t;
        {
            let h = &mut e.h();
            h.widen(k, x, false);
            h.div_f64(lo, Src::K64(ONE64), k);
            if lanes == LaneSet::All {
                h.widen(k, x, true);
                h.div_f64(hi, Src::K64(ONE64), k);
            }
        }
        e.round64(lo);
        if lanes == LaneSet::All {
            e.round64(hi);
            e.h().narrow(d, lo, hi);
        } else {
            e.h().narrow_lo(d, lo);
        }
    }
    e.range(d);
}

/// RSQ of the flushed f32 lanes of `x` into `d`, rounded and range-checked by the mode. `t`
/// is `[h, r, u, m, one, lo]` (`lo` unused for [`LaneSet::First`]); all must differ from `d`
/// and `x`. `d` may be `x`. In F24 RTZ the -inf lanes of `x` are made NaN in place.
pub fn rsq<E: Float>(e: &mut E, lanes: LaneSet, d: E::R, x: E::R, t: [E::R; 6]) {
    let [h, r, u, m, one, lo] = t;
    let mode = e.mode();
    {
        let q = &mut e.h();
        if mode == FloatMode::F24(Rounding::TowardZero) {
            // sqrt(1/-inf) is -0, which the range step would make +0: the model's -inf is a
            // NaN.
            q.is_neg_inf(m, x);
            q.or(x, x, Src::R(m));
        }
        q.set(one, Src::K64(ONE64));
        match lanes {
            LaneSet::First => {
                rsq_half(q, mode, r, x, false, [h, u, m, one]);
                q.narrow_lo(d, r);
            }
            LaneSet::All => {
                rsq_half(q, mode, lo, x, false, [h, u, m, one]);
                rsq_half(q, mode, r, x, true, [h, u, m, one]);
                q.narrow(d, lo, r);
            }
        }
    }
    e.range(d);
}

/// RSQ of the low (`hi` false) or high half of the f32 lanes of `x`, on the mode's grid, as
/// f64 lanes in `y` (before narrowing and the range step). `one` holds f64 1.0.
fn rsq_half<H: Lanes>(q: &mut H, mode: FloatMode, y: H::R, x: H::R, hi: bool, t: [H::R; 4]) {
    let [h, u, m, one] = t;
    q.widen(h, x, hi);
    match mode {
        FloatMode::F24(Rounding::TowardZero) => {
            // Both rounded down: y <= 1/sqrt(x), and within 2^-51 of it.
            q.div_f64(y, Src::R(one), h);
            q.sqrt_f64(y, y);
            q.and_int(y, y, Src::K64(F24_GRID_F64)); // t
            q.add64(u, y, Src::K64(F24_ULP_F64)); // u = t + ulp17
            q.mul_f64(m, u, Src::R(u));
            q.mul_f64(m, m, Src::R(h)); // u·u·x, exact
            q.le64(m, m, one); // u is still at or below the root
            q.select(y, m, Src::R(u));
        }
        FloatMode::F24(Rounding::NearestEven) => {
            q.sqrt_f64(u, h);
            q.div_f64(y, Src::R(one), u); // q
            q.and_int(y, y, Src::K64(F24_GRID_F64)); // t
            q.add64(u, y, Src::K64(F24_ULP_F64 / 2)); // the midpoint above t
            q.mul_f64(m, u, Src::R(u));
            q.mul_f64(m, m, Src::R(h)); // its square times x, exact
            q.lt64(m, m, one); // the root is above the midpoint
            q.add64(u, y, Src::K64(F24_ULP_F64));
            q.select(y, m, Src::R(u));
        }
        FloatMode::F32 => {
            q.sqrt_f64(u, h);
            q.div_f64(y, Src::R(one), u);
        }
    }
}
