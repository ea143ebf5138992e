//! THEIA on AArch64: the register roles and the entry frame ([`Target`]) over the host's
//! integer macro-assembler (`crate::host::a64::int::A64Int`).
//!
//! The code is an `extern "C" fn(*mut TheiaCtx) -> u32`. Pinned registers: x19 the context,
//! x20 the step count, x21 the budget (callee-saved, stored by the frame); scratch 0-7 are
//! x9-x16; x17 and x8 are the integer masm's scratch registers; x1-x3 are the result
//! cache's slots (`lower::Cache`). The code makes no calls, so x29 and x30 stay in place.

use super::lower::{Lowering, Roles, Target};
use crate::host::a64::abi::{Frame, RET};
use crate::host::a64::asm::Asm;
use crate::host::a64::int::A64Int;
use crate::host::a64::regs::Gpr;
use picajit_interp::theia::exec::Code;
use picajit_interp::theia::Profile;

impl Target for A64Int<'_> {
    const ROLES: Roles<Gpr> = Roles {
        ctx: Gpr(19),
        steps: Gpr(20),
        budget: Gpr(21),
        scratch: [
            Gpr(9),
            Gpr(10),
            Gpr(11),
            Gpr(12),
            Gpr(13),
            Gpr(14),
            Gpr(15),
            Gpr(16),
        ],
        // nothing else uses them
        cache: [Gpr(1), Gpr(2), Gpr(3)],
        status: RET,
    };

    /// The three pinned registers, the context pointer in x19; no calls, so no frame pair.
    const FRAME: Frame<'static> = Frame {
        link: false,
        saved: &[Gpr(19), Gpr(20), Gpr(21)],
        saved_v: &[],
        locals: 0,
        context: Some(Gpr(19)),
    };
}

/// AArch64 machine code for `code` (see [`super::generate`]).
pub fn generate(code: &Code, profile: Profile, entries: &[u16]) -> Result<Vec<u8>, String> {
    let mut a = Asm::new();
    Lowering::program(
        &mut A64Int::new(&mut a, [Gpr(17), Gpr(8)]),
        profile,
        code,
        entries,
    );
    let (mut bytes, len) = a.finish().map_err(|e| format!("AArch64 assembly: {e}"))?;
    // no constants: the pool's alignment padding is all that follows the code
    bytes.truncate(len);
    Ok(bytes)
}
