//! The calling convention and entry frame of generated x86-64 code.
//!
//! Generated code is an `extern "sysv64" fn(*mut Ctx) -> u32` ([`EntryFn`]) on every x86-64
//! host: Rust can call the System V convention on Windows too, so there is one convention to
//! generate. The argument arrives in [`ARGS`]`[0]` (rdi), the u32 status leaves in [`RET`]
//! (eax). The function must preserve [`CALLEE_SAVED`] (and the direction flag, MXCSR's
//! control bits and the x87 control word, which the caller expects unchanged); every xmm
//! register is the callee's to clobber.
//!
//! A [`Frame`] is the entry and exit of such a function: it pushes the callee-saved registers
//! the code uses, reserves stack space below them and copies the context pointer into the
//! register the code keeps it in; [`Frame::ret`] undoes that and returns. At entry rsp is
//! 8 mod 16 (the return address was pushed); after [`Frame::enter`] it is
//! `(8 + 8 · saved + locals) mod 16`, which must be 0 where the code calls functions, or 8
//! where it reaches them through a `call` of its own (a body called from the entry):
//!
//! ```text
//! rsp + locals + 8·saved   return address         ← rsp ≡ 8 (mod 16) at entry
//!       …                  saved[0]
//!       …                  …
//! rsp + locals             saved[n - 1]
//! rsp                      locals (scratch the code addresses from rsp)
//! ```

use super::asm::Asm;
use super::regs::*;

/// Signature of generated code taking a context of type `Ctx`. Only x86-64 hosts call it
/// (other targets reject the `sysv64` ABI even in a type, and only generate x86-64 code for
/// inspection).
#[cfg(target_arch = "x86_64")]
pub type EntryFn<Ctx> = unsafe extern "sysv64" fn(*mut Ctx) -> u32;

/// Integer argument registers, in order.
pub const ARGS: [Gpr; 6] = [RDI, RSI, RDX, RCX, R8, R9];

/// The return register (the status, `eax`).
pub const RET: Gpr = RAX;

/// The registers a function must preserve (System V: rbx, rbp, r12-r15; rsp by the frame).
pub const CALLEE_SAVED: [Gpr; 6] = [RBX, RBP, R12, R13, R14, R15];

/// The entry frame of a generated function (see the module documentation for the layout).
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// The callee-saved registers the code uses, in push order (a subset of
    /// [`CALLEE_SAVED`]).
    pub saved: &'a [Gpr],
    /// Bytes reserved below the saved registers, addressed from rsp (a multiple of 8).
    pub locals: i32,
    /// Where the entry copies the first argument (the context pointer), if anywhere.
    pub context: Option<Gpr>,
}

impl Frame<'static> {
    /// The frame of a leaf that keeps to the caller's registers (calls nothing, saves
    /// nothing, the context pointer left in [`ARGS`]`[0]`): no entry code, a bare `ret`.
    pub const LEAF: Frame<'static> = Frame {
        saved: &[],
        locals: 0,
        context: None,
    };
}

impl Frame<'_> {
    /// The entry: pushes [`Frame::saved`], reserves [`Frame::locals`], copies the context
    /// pointer.
    pub fn enter(&self, a: &mut Asm) {
        debug_assert!(self.saved.iter().all(|r| CALLEE_SAVED.contains(r)));
        debug_assert!(self.locals >= 0 && self.locals % 8 == 0);
        for &r in self.saved {
            a.push(r);
        }
        if self.locals != 0 {
            a.sub_ri64(RSP, self.locals);
        }
        if let Some(c) = self.context {
            a.mov_rr64(c, ARGS[0]);
        }
    }

    /// Undoes [`Frame::enter`] (the status already in [`RET`]), without returning: for
    /// code that returns from several places, or ends with a tail.
    pub fn leave(&self, a: &mut Asm) {
        if self.locals != 0 {
            // the entry's instruction form, with the negated size
            a.sub_ri64(RSP, -self.locals);
        }
        for &r in self.saved.iter().rev() {
            a.pop(r);
        }
    }

    /// [`Frame::leave`], then `ret`.
    pub fn ret(&self, a: &mut Asm) {
        self.leave(a);
        a.ret();
    }
}
