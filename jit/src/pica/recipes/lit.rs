//! LITP (`picajit_interp::pica::float::litp`) written once: its three per-component steps over
//! the host's lane operations ([`Lanes`]), combined with lane blends in the per-vertex shape
//! ([`litp`]) and one component at a time in the lane shape ([`lane`], called by
//! `crate::pica::lower::lanes`).
//!
//! The operands are raw (no flush): MAX/MIN rules and compares see subnormals as they are.

use super::{Lanes, Src, SIGN};
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
pub fn lane<H: Lanes>(h: &mut H, part: Lit, d: H::R, a: H::R, t: H::R) {
    match part {
        Lit::Flag => h.ge_k(d, a, 0),
        Lit::Positive => h.max_f32(d, a, Src::K(0)),
        Lit::Clamp => {
            h.min_f32(t, a, Src::K(LITP_LIMIT_F32));
            h.max_f32(d, t, Src::K(LITP_LIMIT_F32 | SIGN));
        }
    }
}

/// Per vertex: `d` = LITP's result vector of `a`, and `flags` = the [`Lit::Flag`] mask of
/// every lane (lanes x and w are the cmp flags). `d`, `flags` and `t` must differ from `a`
/// and from each other; `flags` may be `t[1]`.
pub fn litp<H: Lanes>(h: &mut H, d: H::R, flags: H::R, a: H::R, t: [H::R; 2]) {
    let [t0, t1] = t;
    lane(h, Lit::Positive, d, a, t1); // x, w
    lane(h, Lit::Clamp, t0, a, t1); // y
    h.blend_lanes(d, Src::R(t0), 0b0010);
    h.blend_lanes(d, Src::K(0), 0b0100);
    lane(h, Lit::Flag, flags, a, t1);
}
