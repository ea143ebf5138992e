//! CMP's compare masks (`picajit_interp::pica::isa::CmpOp::eval` on raw operands), written once for
//! every emitter over the [`Arith`] compares.
//!
//! Only four predicates are asked of a host (`==`, `!=`, `<`, `<=`): `a > b` is `b < a` and
//! `a >= b` is `b <= a`, with the same answer for NaN operands (false), so the operand swap
//! lives here rather than in a predicate table per host.

use super::Arith;
use picajit_interp::pica::isa::CmpOp;

/// `d` = all-ones in the lanes where `op(a, b)` holds. Returns false, leaving `d` unwritten,
/// for the operators that always hold (the per-vertex hosts then store the flag as a
/// constant). `d` must differ from `a` and `b`.
pub fn cmp_mask<E: Arith>(e: &mut E, op: CmpOp, d: E::R, a: E::R, b: E::R) -> bool {
    match op {
        CmpOp::Eq => e.eq(d, a, b),
        CmpOp::Ne => e.ne(d, a, b),
        CmpOp::Lt => e.lt(d, a, b),
        CmpOp::Le => e.le(d, a, b),
        CmpOp::Gt => e.lt(d, b, a),
        CmpOp::Ge => e.le(d, b, a),
        CmpOp::True6 | CmpOp::True7 => return false,
    }
    true
}

/// [`cmp_mask`] with the always-true operators as an all-ones mask (lane code stores every
/// mask the same way). `d` must differ from `a` and `b`.
pub fn cmp_mask_lanes<E: Arith>(e: &mut E, op: CmpOp, d: E::R, a: E::R, b: E::R) {
    if !cmp_mask(e, op, d, a, b) {
        e.konst(d, !0);
    }
}
