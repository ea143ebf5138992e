//! LITP (`picajit_interp::pica::float::litp`) written once: its three per-component steps over
//! [`Arith`], combined with lane blends in the per-vertex shape ([`litp`], [`Horizontal`])
//! and one component at a time in the lane shape ([`lane`], called by `crate::pica::lower::lanes`).
//!
//! The operands are raw (no flush): MAX/MIN rules and compares see subnormals as they are.

use super::{Arith, Horizontal, Src, SIGN};
use picajit_interp::pica::float::precision::LITP_LIMIT_F32;

/// One step of LITP on one component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lit {
    /// The cmp flag of x or w: all-ones where `0 <= a` (false for NaN).
    Flag,
    /// x and w: `max(a, 0)`, `a > 0 ? a : +0` (NaN and -0 give +0).
    Positive,
    /// y: `max(min(a, lim), -lim)` with the model's MIN/MAX rules (NaN gives +lim).
    Clamp,
}

/// `d` = `part` of each lane of `a`. `d` must differ from `a`; `t`, which only
/// [`Lit::Clamp`] uses, from both.
pub fn lane<E: Arith>(e: &mut E, part: Lit, d: E::R, a: E::R, t: E::R) {
    match part {
        Lit::Flag => e.ge_k(d, a, 0),
        Lit::Positive => e.max_k(d, a, 0),
        Lit::Clamp => {
            e.min_k(t, a, LITP_LIMIT_F32);
            e.max_k(d, t, LITP_LIMIT_F32 | SIGN);
        }
    }
}

/// Per vertex: `d` = LITP's result vector of `a`, and `flags` = the [`Lit::Flag`] mask of
/// every lane (lanes x and w are the cmp flags). `d`, `flags` and `t` must differ from `a`
/// and from each other; `flags` may be `t[1]`.
pub fn litp<E: Horizontal>(e: &mut E, d: E::R, flags: E::R, a: E::R, t: [E::R; 2]) {
    let [t0, t1] = t;
    lane(e, Lit::Positive, d, a, t1); // x, w
    lane(e, Lit::Clamp, t0, a, t1); // y
    e.blend(d, Src::R(t0), 0b0010);
    e.blend(d, Src::K(0), 0b0100);
    lane(e, Lit::Flag, flags, a, t1);
}
