//! MOVA's conversion (`picajit_interp::pica::float::mova`: Rust's `as i32`, which truncates toward
//! zero, saturates and maps NaN to 0), written once over the host's raw truncation
//! [`Lanes::trunc_i32`].

use super::{Lanes, Src};

/// f32 bits of 2^31, the smallest value above the i32 range.
pub const TWO31: u32 = 0x4F00_0000;

/// `d` = `float::mova` of every f32 lane of `a`. `t` is clobbered on hosts whose truncation
/// does not saturate; `d`, `a` and `t` must differ.
///
/// A non-saturating truncation gives `i32::MIN` for NaN and for every lane out of range. That
/// is already right below -2^31; at or above 2^31 the answer is `i32::MAX`, its complement,
/// and NaN lanes are cleared last.
pub fn mova<H: Lanes>(h: &mut H, d: H::R, a: H::R, t: H::R) {
    h.trunc_i32(d, a);
    if H::TRUNC_SATURATES {
        return;
    }
    h.ge_k(t, a, TWO31);
    h.xor_int(d, d, Src::R(t));
    h.ordered(t, a, a);
    h.and_int(d, d, Src::R(t));
}
