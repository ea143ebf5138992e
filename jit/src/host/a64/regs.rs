//! Register names of the AArch64 host: general-purpose and SIMD&FP registers by number, the
//! zero, frame and link registers, and x8-x17 (not preserved across calls, free to use as
//! scratch). What a register is for is the emitter's choice (its own `regs.rs`); the calling
//! convention's fixed roles are in `abi.rs`.

/// A general-purpose register number (dynasm `X(n)` / `W(n)`; 31 is xzr/wzr, or sp where the
/// instruction form takes sp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpr(pub u8);

/// A SIMD&FP register number (dynasm `V(n)`, `Q(n)`, `D(n)`, `S(n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vreg(pub u8);

/// The zero register (in forms that read xzr/wzr).
pub const ZR: Gpr = Gpr(31);
/// First argument / return value.
pub const X0: Gpr = Gpr(0);
/// Frame pointer (saved with the link register).
pub const FP: Gpr = Gpr(29);
/// Link register.
pub const LR: Gpr = Gpr(30);

/// Scratch general-purpose registers (`x8-x17`).
pub const G8: Gpr = Gpr(8);
/// Scratch.
pub const G9: Gpr = Gpr(9);
/// Scratch.
pub const G10: Gpr = Gpr(10);
/// Scratch.
pub const G11: Gpr = Gpr(11);
/// Scratch.
pub const G12: Gpr = Gpr(12);
/// Scratch.
pub const G13: Gpr = Gpr(13);
/// Scratch.
pub const G14: Gpr = Gpr(14);
/// Scratch.
pub const G15: Gpr = Gpr(15);
/// Scratch.
pub const G16: Gpr = Gpr(16);
/// Scratch.
pub const G17: Gpr = Gpr(17);
