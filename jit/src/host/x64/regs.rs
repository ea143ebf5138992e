//! Register names of the x86-64 host: general-purpose and SSE registers by number, with the
//! System V names of the general ones. What a register is for is the emitter's choice (its
//! own `regs.rs`); the calling convention's fixed roles are in `abi.rs`.

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
/// rsp (the stack pointer: for code that keeps a frame of its own)
pub const RSP: Gpr = Gpr(4);
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
