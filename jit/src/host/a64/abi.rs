//! Entry and exit of generated AArch64 code.
//!
//! Generated code is an AAPCS64 `extern "C" fn(*mut JitContext) -> u32` (the same on Linux,
//! Apple and Windows hosts: x18 is never touched); the returned value is a
//! status (PICA's `Status`, `pica/layout.rs`).
//!
//! Two entry points share one body (see `masm.rs`): offset 0 runs one invocation, the batch
//! entry (offset reported in `Emitted::batch_entry`) loops over `JitContext::batch_*` rows.
//! Both save the frame pair and the callee-saved registers the backend pins (`regs.rs`) in an
//! 80-byte frame, save the caller's FPCR in `JitContext::saved_mxcsr` (the context's "caller
//! float control" word) and install the mode's, load the pinned constants, and branch into the
//! body with x25 holding their continuation:
//!
//! ```text
//! sp+64  saved x25, x26
//! sp+48  saved x23, x24
//! sp+32  saved x21, x22
//! sp+16  saved x19, x20
//! sp+0   saved x29, x30         ← sp ≡ 0 (mod 16) throughout
//! ```
//!
//! The body's exits set w0 and `br x25`. The common epilogue writes the remaining budget and
//! the current output-bank pointer back into the context, restores FPCR and the saved
//! registers, and returns the status.
