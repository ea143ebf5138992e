//! Host register roles of the x86-64 backend. Each reserved register says why it is reserved.
//!
//! | register | role |
//! |---|---|
//! | `rbx` | [`CTX`]: the `JitContext` pointer (callee-saved: the caller keeps it too) |
//! | `r12` | [`REGS`]: `Registers` (temporaries, a0, aL, cmp) |
//! | `r13` | [`INPUT`]: v0-v15 |
//! | `r14` | [`OUTPUT`]: o0-o15 (EMIT swaps it with the other bank) |
//! | `r15` | [`UNIFORMS`]: `Uniforms` |
//! | `rbp` | [`BUDGET`]: instructions left (u64) |
//! | `rax rcx rdx rsi rdi r8-r11` | scratch, never live across a PICA instruction |
//! | `xmm1-xmm4` | value slots [`VALS`] (`Val(0..4)` of the masm trait) |
//! | `xmm0 xmm5-xmm12` | scratch of instruction sequences ([`SCRATCH`]) |
//! | `xmm13-xmm15` | rows of up to three temporaries written since the last join (`TempCache` in `masm.rs`) |
//!
//! All pinned GPRs are callee-saved in the System V ABI; generated code calls nothing outside
//! itself, so only the entry points need to respect the ABI (the shared subroutines document
//! the scratch registers they clobber).

/// A general-purpose register number (dynasm `Rq(n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpr(pub u8);

/// An SSE register number (dynasm `Rx(n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xmm(pub u8);

/// rax
pub const RAX: Gpr = Gpr(0);
/// rcx
pub const RCX: Gpr = Gpr(1);
/// rdx
pub const RDX: Gpr = Gpr(2);
/// rbx
pub const RBX: Gpr = Gpr(3);
/// rbp
pub const RBP: Gpr = Gpr(5);
/// rsi
pub const RSI: Gpr = Gpr(6);
/// rdi
pub const RDI: Gpr = Gpr(7);
/// r8
pub const R8: Gpr = Gpr(8);
/// r9
pub const R9: Gpr = Gpr(9);
/// r10
pub const R10: Gpr = Gpr(10);
/// r11
pub const R11: Gpr = Gpr(11);
/// r12
pub const R12: Gpr = Gpr(12);
/// r13
pub const R13: Gpr = Gpr(13);
/// r14
pub const R14: Gpr = Gpr(14);
/// r15
pub const R15: Gpr = Gpr(15);

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

/// Scratch vector registers.
pub const SCRATCH: [Xmm; 9] = [
    Xmm(0),
    Xmm(5),
    Xmm(6),
    Xmm(7),
    Xmm(8),
    Xmm(9),
    Xmm(10),
    Xmm(11),
    Xmm(12),
];
