//! CMP's compare masks (`picajit_interp::pica::isa::CmpOp::eval` on raw operands), written once for
//! every emitter over the host's compares ([`Lanes`]).
//!
//! Only four predicates are asked of a host (`==`, `!=`, `<`, `<=`): `a > b` is `b < a` and
//! `a >= b` is `b <= a`, with the same answer for NaN operands (false), so the operand swap
//! lives here rather than in a predicate table per host.

use super::{Lanes, Src};
use picajit_interp::pica::isa::CmpOp;

/// `d` = all-ones in the lanes where `op(a, b)` holds. Returns false, leaving `d` unwritten,
/// for the operators that always hold (the per-vertex hosts then store the flag as a
/// constant). `d` must differ from `a` and `b`.
pub fn cmp_mask<H: Lanes>(h: &mut H, op: CmpOp, d: H::R, a: H::R, b: H::R) -> bool {
    match op {
        CmpOp::Eq => h.eq(d, a, b),
        CmpOp::Ne => h.ne(d, a, b),
        CmpOp::Lt => h.lt(d, a, b),
        CmpOp::Le => h.le(d, a, b),
        CmpOp::Gt => h.lt(d, b, a),
        CmpOp::Ge => h.le(d, b, a),
        CmpOp::True6 | CmpOp::True7 => return false,
    }
    true
}

/// [`cmp_mask`] with the always-true operators as an all-ones mask (lane code stores every
/// mask the same way). `d` must differ from `a` and `b`.
pub fn cmp_mask_lanes<H: Lanes>(h: &mut H, op: CmpOp, d: H::R, a: H::R, b: H::R) {
    if !cmp_mask(h, op, d, a, b) {
        h.set(d, Src::K(!0));
    }
}
