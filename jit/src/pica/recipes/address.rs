//! The row offsets the lane code keeps beside each a0 component (`SoaContext::a0_rel`, read by
//! every a0-relative uniform load), written once over the host's lane operations
//! ([`Lanes`]).
//!
//! A relative uniform read uses a0 only when it lies in -128..=127 (`crate::pica::masm::SrcLoc`,
//! seed 000 relative addressing). The lane code folds that test into the offset it stores
//! with a0, `16 · (128 + (a0 in -128..=127 ? a0 : 0))`, so that a lane's row address is one
//! add (`SoaContext::uniforms_rel` holds the table three times over).

use super::{Lanes, Src};

/// `d` = the row byte offset of each i32 lane of `a0`. `t` must differ from `d` and `a0`;
/// `d` may be `a0`.
pub fn a0_row_offset<H: Lanes>(h: &mut H, d: H::R, a0: H::R, t: [H::R; 2]) {
    let [t0, t1] = t;
    h.set(t1, Src::K(128));
    h.add32(d, a0, Src::R(t1));
    // a0 + 128 (wrapping) is below 256 exactly when a0 is in range.
    h.gt_u32(t0, d, 255);
    h.select(d, t0, Src::R(t1));
    h.shl32(d, d, 4);
}
