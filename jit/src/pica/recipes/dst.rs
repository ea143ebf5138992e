//! DST's result (`picajit_interp::pica::float::dst`: `(1.0, mul(a.y, b.y), a.z, b.w)`) in the
//! per-vertex shape, written once over [`Lanes::blend_lanes`]. The lane shape needs no blend:
//! `crate::pica::lower::lanes` computes each component on its own.

use super::{Lanes, Src, ONE};

/// `d` = DST of `a` and `b`, from `d` = their product (the mode's `mul`, of which lane y is
/// kept) and the operands as they were read.
pub fn dst<H: Lanes>(h: &mut H, d: H::R, a: H::R, b: H::R) {
    h.blend_lanes(d, Src::K(ONE), 0b0001);
    h.blend_lanes(d, Src::R(a), 0b0100);
    h.blend_lanes(d, Src::R(b), 0b1000);
}
