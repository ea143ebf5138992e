//! PICA's register roles on AArch64, shared by the per-vertex code (`masm.rs`) and, where it
//! says so, the lane code. Each reserved register says why it is reserved.
//!
//! | register | role |
//! |---|---|
//! | `x19` | [`CTX`]: the `JitContext` pointer |
//! | `x20` | [`REGS`]: `Registers` (temporaries, a0, aL, cmp; the batch entry's own stack frame) |
//! | `x21` | [`INPUT`]: v0-v15 |
//! | `x22` | [`OUTPUT`]: o0-o15 (EMIT swaps it with the other bank) |
//! | `x23` | [`UNIFORMS`]: `Uniforms` |
//! | `x24` | [`BUDGET`]: instructions left (u64) |
//! | `x25` | [`EXIT_LINK`]: where the body's exits return to (the calling entry's continuation) |
//! | `x30` | link register of the shared subroutines (`bl`/`ret`) |
//! | `x8-x17` | scratch, never live across a PICA instruction |
//! | `v0-v3` | value slots [`VALS`] (`Val(0..4)` of the masm trait) |
//! | `v4-v7 v16-v23` | scratch of instruction sequences |
//! | `v24-v31` | constants loaded by the entries (see `masm.rs`, `Pinned`) |
//!
//! `x19-x25` are callee-saved in AAPCS64 (and in Apple's variant), so the entries save them;
//! `v8-v15` (whose low halves are callee-saved) are never touched, so no vector register needs
//! saving. `x18` (the platform register on Apple and Windows) is never used. The entries'
//! frame is `masm.rs`'s `ENTRY_FRAME`.

use crate::host::a64::regs::{Gpr, Vreg};

/// Context pointer.
pub const CTX: Gpr = Gpr(19);
/// `Registers` pointer.
pub const REGS: Gpr = Gpr(20);
/// Input registers pointer.
pub const INPUT: Gpr = Gpr(21);
/// Output registers pointer.
pub const OUTPUT: Gpr = Gpr(22);
/// Uniforms pointer.
pub const UNIFORMS: Gpr = Gpr(23);
/// Remaining instruction budget.
pub const BUDGET: Gpr = Gpr(24);
/// Continuation of the entry that started the body; exits `br` to it with a status in w0.
pub const EXIT_LINK: Gpr = Gpr(25);
/// Saved with [`EXIT_LINK`] to keep the stack pair-aligned; otherwise unused.
pub const PAD: Gpr = Gpr(26);

/// Value slots of the masm trait.
pub const VALS: [Vreg; 4] = [Vreg(0), Vreg(1), Vreg(2), Vreg(3)];

/// Scratch vector registers.
pub const SCRATCH: [Vreg; 12] = [
    Vreg(4),
    Vreg(5),
    Vreg(6),
    Vreg(7),
    Vreg(16),
    Vreg(17),
    Vreg(18),
    Vreg(19),
    Vreg(20),
    Vreg(21),
    Vreg(22),
    Vreg(23),
];
