//! THEIA on x86-64: the register roles and the entry frame ([`Target`]) over the host's
//! integer macro-assembler (`crate::host::x64::int::X64Int`).
//!
//! The code is an `extern "sysv64" fn(*mut TheiaCtx) -> u32`. Pinned registers: rbx the
//! context, r12 the step count, r13 the budget; scratch 0-7 are r8, r9, r10, r11, rsi, r14,
//! r15, rbp; rcx, rdi and rdx are the result cache's slots (`lower::Cache`). rax is the
//! integer masm's scratch register and, at the exits, the status. The code uses every
//! general-purpose register, so the frame pushes all six callee-saved ones.

use super::lower::{Lowering, Roles, Target};
use crate::host::x64::abi::{Frame, CALLEE_SAVED, RET};
use crate::host::x64::asm::Asm;
use crate::host::x64::int::X64Int;
use crate::host::x64::regs::*;
use picajit_interp::theia::exec::Code;
use picajit_interp::theia::Profile;

impl Target for X64Int<'_> {
    const ROLES: Roles<Gpr> = Roles {
        ctx: RBX,
        steps: R12,
        budget: R13,
        scratch: [R8, R9, R10, R11, RSI, R14, R15, RBP],
        // caller-saved; `udiv` keeps rdx
        cache: [RCX, RDI, RDX],
        status: RET,
    };

    /// Every callee-saved register, no locals, the context pointer in rbx.
    const FRAME: Frame<'static> = Frame {
        saved: &CALLEE_SAVED,
        locals: 0,
        context: Some(RBX),
    };
}

/// x86-64 machine code for `code` (see [`super::generate`]).
pub fn generate(code: &Code, profile: Profile, entries: &[u16]) -> Result<Vec<u8>, String> {
    let mut a = Asm::new();
    Lowering::program(&mut X64Int::new(&mut a, RAX), profile, code, entries);
    let (mut bytes, len) = a.finish().map_err(|e| format!("x86-64 assembly: {e}"))?;
    // no constants: the pool's alignment padding is all that follows the code
    bytes.truncate(len);
    Ok(bytes)
}
