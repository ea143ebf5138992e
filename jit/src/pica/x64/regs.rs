//! PICA's register roles on x86-64, shared by the per-vertex code (`masm.rs`) and, where it
//! says so, the lane code. Each reserved register says why it is reserved.
//!
//! | register | role |
//! |---|---|
//! | `rbx` | [`CTX`]: the `JitContext` pointer (callee-saved: the caller keeps it too) |
//! | `r12` | [`REGS`]: `Registers` (temporaries, a0, aL, cmp; the batch entry's own stack frame) |
//! | `r13` | [`INPUT`]: v0-v15 |
//! | `r14` | [`OUTPUT`]: o0-o15 (EMIT swaps it with the other bank) |
//! | `r15` | [`UNIFORMS`]: `Uniforms` |
//! | `rbp` | [`BUDGET`]: instructions left (u64) |
//! | `rax rcx rdx rsi rdi r8-r11` | scratch, never live across a PICA instruction |
//! | `xmm1-xmm4` | value slots [`VALS`] (`Val(0..4)` of the masm trait) |
//! | `xmm0 xmm5-xmm12` | scratch of instruction sequences |
//! | `xmm13-xmm15` | rows of up to three temporaries written since the last join (`TempCache` in `masm.rs`) |
//!
//! All pinned GPRs are callee-saved in the System V ABI; generated code calls nothing outside
//! itself, so only the entry points need to respect the ABI (the shared subroutines document
//! the scratch registers they clobber); the entries' frame is `masm.rs`'s `ENTRY_FRAME`.

use crate::host::x64::regs::{Gpr, Xmm, R12, R13, R14, R15, RBP, RBX};

/// Context pointer.
pub const CTX: Gpr = RBX;
/// `Registers` pointer.
pub const REGS: Gpr = R12;
/// Input registers pointer.
pub const INPUT: Gpr = R13;
/// Output registers pointer.
pub const OUTPUT: Gpr = R14;
/// Uniforms pointer.
pub const UNIFORMS: Gpr = R15;
/// Remaining instruction budget.
pub const BUDGET: Gpr = RBP;

/// Value slots of the masm trait.
pub const VALS: [Xmm; 4] = [Xmm(1), Xmm(2), Xmm(3), Xmm(4)];
