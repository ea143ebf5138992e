//! Entry and exit of generated x86-64 code.
//!
//! Generated code is an `extern "sysv64" fn(*mut JitContext) -> u32` on every x86-64 host
//! (Rust can call the System V convention on Windows too, so there is one calling convention
//! to generate). The returned value is a status (PICA's `Status`, `pica/layout.rs`).
//!
//! Two entry points share one body (see `masm.rs`): offset 0 runs one invocation, the batch
//! entry (offset reported in `Emitted::batch_entry`) loops over `JitContext::batch_*` rows.
//! Both push the six callee-saved registers the backend pins (`regs.rs`), save the caller's
//! MXCSR in `JitContext::saved_mxcsr` and load the float mode's, then `call` the body:
//!
//! ```text
//! rsp+56  return address            ← rsp ≡ 8 (mod 16) at entry
//! rsp+48  saved rbx
//!  ...    saved rbp, r12, r13, r14
//! rsp+8   saved r15
//! rsp+0   return address into the entry   (inside the body rsp ≡ 0 (mod 16): helper
//!                                          calls are correctly aligned)
//! ```
//!
//! The body's exits return a status (PICA's `Status`, `pica/layout.rs`) in `eax`. The common
//! epilogue writes the remaining budget and the current output-bank pointer back into the
//! context, restores MXCSR and the saved registers, and returns the status.
