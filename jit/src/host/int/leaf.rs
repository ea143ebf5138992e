//! Leaf functions: a whole `fn(*mut Ctx) -> u32` (the host's `abi::EntryFn`) around a body
//! written once over [`IntMasm`], for code generators that need no more than a context
//! pointer, a few free registers and the status. The host picks the registers: the body names
//! none, so it has no per-host lines.

use super::IntMasm;
use crate::host::Backend;

/// The registers of a leaf [`function`]; all of them are the caller's to lose, and none is
/// the masm's scratch.
#[derive(Clone, Copy, Debug)]
pub struct Regs<R> {
    /// The context pointer (the first argument).
    pub ctx: R,
    /// Free registers.
    pub scratch: [R; 4],
    /// The return register, for the status.
    pub status: R,
}

/// The body of a leaf [`function`] (a trait rather than a closure, which cannot be generic
/// over the host's masm).
pub trait Body {
    /// Emits the body: every path puts the status in `regs.status` and jumps to `exit`.
    fn emit<M: IntMasm>(self, m: &mut M, regs: &Regs<M::Reg>, exit: M::Label);
}

/// Machine code for `backend` of a leaf function around `body`: it calls nothing and uses
/// only registers the caller expects to lose, so its frame is `abi::Frame::LEAF`. Returns the
/// code and its length without the tables (`Asm::finish`).
pub fn function(backend: Backend, body: impl Body) -> Result<(Vec<u8>, usize), String> {
    match backend {
        Backend::X64 => {
            use crate::host::x64::abi::{Frame, ARGS, RET};
            use crate::host::x64::{asm::Asm, int::X64Int, regs::*};
            let regs = Regs {
                ctx: ARGS[0],
                // not rcx or rdx, which variable shifts and division need
                scratch: [R8, R9, R10, RSI],
                status: RET,
            };
            let mut a = Asm::new();
            wrap(&mut X64Int::new(&mut a, R11), &Frame::LEAF, &regs, body);
            a.finish()
        }
        Backend::A64 => {
            use crate::host::a64::abi::{Frame, RET};
            use crate::host::a64::{asm::Asm, int::A64Int, regs::*};
            let regs = Regs {
                // out of x0, which is also the return register
                ctx: G9,
                scratch: [G10, G11, G12, G13],
                status: RET,
            };
            let frame = Frame {
                context: Some(regs.ctx),
                ..Frame::LEAF
            };
            let mut a = Asm::new();
            wrap(&mut A64Int::new(&mut a, [G17, G16]), &frame, &regs, body);
            a.finish()
        }
    }
}

/// `body` between the frame's entry and its return, which every exit jumps to.
fn wrap<M: IntMasm>(m: &mut M, frame: &M::Frame, regs: &Regs<M::Reg>, body: impl Body) {
    let exit = m.label();
    m.enter(frame);
    body.emit(m, regs, exit);
    m.bind(exit);
    m.ret(frame);
}
