//! PICA register-file rows addressed from x86-64 code, shared by the per-vertex and the
//! multi-vertex emitters (which keep aL and the loop counters in different places): LOOP's
//! initialisation and step from an int uniform, and the float uniform row a relative operand
//! reads. The AArch64 twin is `pica/a64/rows.rs`.

use crate::host::x64::asm::Asm;
use crate::host::x64::regs::{Gpr, RAX, RCX, RDX};
use crate::pica::layout::UNI_INT;
use dynasmrt::DynamicLabel;

/// LOOP with int uniform `int` (of the `Uniforms` at `uniforms`): aL (a dword at
/// `[al.0 + al.1]`) := i.y, the counter (a dword at `[counter.0 + counter.1]`) := i.x.
/// Clobbers eax.
pub fn loop_init(a: &mut Asm, uniforms: Gpr, int: u8, al: (Gpr, i32), counter: (Gpr, i32)) {
    let i = UNI_INT + 4 * (int & 3) as i32;
    a.movzx_rm8(RAX, uniforms, i + 1);
    a.mov_mr32(al.0, al.1, RAX);
    a.movzx_rm8(RAX, uniforms, i);
    a.mov_mr32(counter.0, counter.1, RAX);
}

/// `dst` := byte offset of the float uniform row a relative operand reads: `(index + offset)
/// & 0x7F` rows, where the offset is the i32 at `[base + off]` (a0.x, a0.y or aL) when it
/// lies in -128..=127 and 0 otherwise (the hardware ignores such offsets). Clobbers ecx, edx.
pub fn rel_row_offset(a: &mut Asm, dst: Gpr, base: Gpr, off: i32, index: i32) {
    a.mov_rm32(dst, base, off);
    a.lea_r32(RCX, dst, 128);
    a.xor_rr32(RDX, RDX);
    a.cmp_ri32(RCX, 256);
    a.cmovae_rr32(dst, RDX);
    a.add_ri32(dst, index);
    a.and_ri32(dst, 0x7F);
    a.shl_ri32(dst, 4);
}

/// End of a LOOP body: aL += i.z; jump to `again` unless the counter was 0 (it is
/// decremented either way; the slot is re-initialised before any reuse, so the wrapped value
/// is never read). Operands as in [`loop_init`]. Clobbers eax.
pub fn loop_step(
    a: &mut Asm,
    uniforms: Gpr,
    int: u8,
    al: (Gpr, i32),
    counter: (Gpr, i32),
    again: DynamicLabel,
) {
    let i = UNI_INT + 4 * (int & 3) as i32;
    a.movzx_rm8(RAX, uniforms, i + 2);
    a.add_mr32(al.0, al.1, RAX);
    // Borrow means the counter was 0: the loop is done.
    a.sub_mi32(counter.0, counter.1, 1);
    a.jae(again);
}
