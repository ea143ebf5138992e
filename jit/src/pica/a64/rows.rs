//! PICA register-file rows addressed from AArch64 code, shared by the per-vertex and the
//! multi-vertex emitters: the float uniform row a relative operand reads. The x86-64 twin is
//! `pica/x64/rows.rs`.

use crate::host::a64::asm::{Asm, Cond};
use crate::host::a64::regs::{Gpr, ZR};

/// `d` := the float uniform row a relative operand reads, `(index + offset) & 0x7F`, from
/// the offset in `d` (a0.x, a0.y or aL as i32), which counts only when it lies in
/// -128..=127 (the hardware ignores other offsets). Clobbers `t`.
pub fn rel_row(a: &mut Asm, d: Gpr, t: Gpr, index: u32) {
    a.add_wi(t, d, 128);
    a.cmp_wi(t, 256);
    a.csel_w(d, d, ZR, Cond::Lo);
    a.add_wi(d, d, index);
    a.and_wi(d, d, 0x7F);
}
