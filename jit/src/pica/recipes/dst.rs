//! DST's result (`picajit_interp::pica::float::dst`: `(1.0, mul(a.y, b.y), a.z, b.w)`) in the
//! per-vertex shape, written once over [`Horizontal::blend`]. The lane shape needs no blend:
//! `crate::pica::lower::lanes` computes each component on its own.

use super::{Horizontal, Src, ONE};

/// `d` = DST of `a` and `b`, from `d` = their product (the mode's `mul`, of which lane y is
/// kept) and the operands as they were read.
pub fn dst<E: Horizontal>(e: &mut E, d: E::R, a: E::R, b: E::R) {
    e.blend(d, Src::K(ONE), 0b0001);
    e.blend(d, Src::R(a), 0b0100);
    e.blend(d, Src::R(b), 0b1000);
}
