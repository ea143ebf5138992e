//! The calling convention and entry frame of generated AArch64 code.
//!
//! Generated code is an AAPCS64 `extern "C" fn(*mut Ctx) -> u32` ([`EntryFn`]), the same on
//! Linux, Apple and Windows hosts: the argument arrives in [`ARGS`]`[0]` (x0), the u32 status
//! leaves in [`RET`] (w0). The function must preserve [`CALLEE_SAVED`], the frame and link
//! registers when it changes them, the low 64 bits of [`CALLEE_SAVED_V`] (d8-d15) and FPCR;
//! x16-x17 (intra-procedure-call scratch) and x8 are free; x18 (the platform register on
//! Apple and Windows) is never touched.
//!
//! A [`Frame`] is the entry and exit of such a function: one 16-aligned block below the
//! caller's sp holding, from the bottom, the frame pair x29/x30 (when the code calls
//! subroutines with `bl`), the saved general registers in pairs, the saved vector registers
//! (their low 64 bits) in pairs, then the locals:
//!
//! ```text
//! sp + size                caller's frame           ← sp ≡ 0 (mod 16) throughout
//! sp + locals_offset()     locals
//!       …                  d pairs
//!       …                  x pairs (a last odd register alone)
//! sp + 0                   x29, x30 (if `link`)
//! ```
//!
//! The first store allocates the block (pre-indexed by its size), the last load of the exit
//! frees it (post-indexed), so a frame costs no separate sp adjustment.

use super::asm::Asm;
use super::regs::{Gpr, Vreg, FP, LR, X0};

/// Signature of generated code taking a context of type `Ctx` (called natively on AArch64
/// hosts, `crate::host::runtime`).
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
pub type EntryFn<Ctx> = unsafe extern "C" fn(*mut Ctx) -> u32;

/// Integer argument registers, in order.
pub const ARGS: [Gpr; 8] = [X0, Gpr(1), Gpr(2), Gpr(3), Gpr(4), Gpr(5), Gpr(6), Gpr(7)];

/// The return register (the status, `w0`).
pub const RET: Gpr = X0;

/// The general registers a function must preserve (x19-x28; x29 and x30 are the frame pair).
pub const CALLEE_SAVED: [Gpr; 10] = [
    Gpr(19),
    Gpr(20),
    Gpr(21),
    Gpr(22),
    Gpr(23),
    Gpr(24),
    Gpr(25),
    Gpr(26),
    Gpr(27),
    Gpr(28),
];

/// The vector registers whose low 64 bits a function must preserve (v8-v15).
pub const CALLEE_SAVED_V: [Vreg; 8] = [
    Vreg(8),
    Vreg(9),
    Vreg(10),
    Vreg(11),
    Vreg(12),
    Vreg(13),
    Vreg(14),
    Vreg(15),
];

/// The stack pointer (in the forms that take it as register 31).
const SP: Gpr = Gpr(31);

/// One saved slot group of a frame: 16 bytes at `off` holding one or two registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    X(Gpr, Option<Gpr>),
    D(Vreg, Option<Vreg>),
}

/// The entry frame of a generated function (see the module documentation for the layout).
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// Save the frame pair x29/x30: the code calls subroutines (`bl`), which write x30.
    pub link: bool,
    /// The callee-saved general registers the code uses (from [`CALLEE_SAVED`]), saved in
    /// pairs in this order.
    pub saved: &'a [Gpr],
    /// The callee-saved vector registers whose low halves the code uses (from
    /// [`CALLEE_SAVED_V`]), saved in pairs in this order.
    pub saved_v: &'a [Vreg],
    /// Bytes reserved above the saved registers, addressed from sp at
    /// [`Frame::locals_offset`].
    pub locals: i32,
    /// Where the entry copies the first argument (the context pointer), if anywhere.
    pub context: Option<Gpr>,
}

impl Frame<'static> {
    /// The frame of a leaf that keeps to the caller's registers (no `bl`, saves nothing, the
    /// context pointer left in [`ARGS`]`[0]`): no entry code, a bare `ret`.
    pub const LEAF: Frame<'static> = Frame {
        link: false,
        saved: &[],
        saved_v: &[],
        locals: 0,
        context: None,
    };
}

impl Frame<'_> {
    /// The saved slots from the bottom of the block, each 16 bytes.
    fn slots(&self) -> Vec<Slot> {
        let mut v = Vec::new();
        if self.link {
            v.push(Slot::X(FP, Some(LR)));
        }
        v.extend(
            self.saved
                .chunks(2)
                .map(|p| Slot::X(p[0], p.get(1).copied())),
        );
        v.extend(
            self.saved_v
                .chunks(2)
                .map(|p| Slot::D(p[0], p.get(1).copied())),
        );
        v
    }

    /// Offset of the locals from sp inside the frame.
    pub fn locals_offset(&self) -> i32 {
        16 * self.slots().len() as i32
    }

    /// The block's size: slots and locals, rounded up to 16.
    pub fn size(&self) -> i32 {
        (self.locals_offset() + self.locals + 15) & !15
    }

    /// The entry: allocates the block, saves the slots, copies the context pointer.
    pub fn enter(&self, a: &mut Asm) {
        debug_assert!(self.saved.iter().all(|r| CALLEE_SAVED.contains(r)));
        debug_assert!(self.saved_v.iter().all(|r| CALLEE_SAVED_V.contains(r)));
        let size = self.size();
        let slots = self.slots();
        match slots.first() {
            Some(&Slot::X(r, Some(s))) => a.stp_x_pre_sp(r, s, size),
            Some(&Slot::X(r, None)) => a.str_x_pre_sp(r, size),
            Some(&Slot::D(r, Some(s))) => a.stp_d_pre_sp(r, s, size),
            Some(&Slot::D(r, None)) => a.str_d_pre_sp(r, size),
            None if size != 0 => a.sub_xi(SP, SP, size as u32),
            None => {}
        }
        for (k, &slot) in slots.iter().enumerate().skip(1) {
            let off = 16 * k as i32;
            match slot {
                Slot::X(r, Some(s)) => a.stp_x_sp(r, s, off),
                Slot::X(r, None) => a.str_x_sp(r, off),
                Slot::D(r, Some(s)) => a.stp_d_sp(r, s, off),
                Slot::D(r, None) => a.str_d_sp(r, off),
            }
        }
        if let Some(c) = self.context {
            a.mov_x(c, ARGS[0]);
        }
    }

    /// Undoes [`Frame::enter`] (the status already in [`RET`]) in the reverse order,
    /// without returning.
    pub fn leave(&self, a: &mut Asm) {
        let size = self.size();
        let slots = self.slots();
        for (k, &slot) in slots.iter().enumerate().skip(1).rev() {
            let off = 16 * k as i32;
            match slot {
                Slot::X(r, Some(s)) => a.ldp_x_sp(r, s, off),
                Slot::X(r, None) => a.ldr_x_sp(r, off),
                Slot::D(r, Some(s)) => a.ldp_d_sp(r, s, off),
                Slot::D(r, None) => a.ldr_d_sp(r, off),
            }
        }
        match slots.first() {
            Some(&Slot::X(r, Some(s))) => a.ldp_x_post_sp(r, s, size),
            Some(&Slot::X(r, None)) => a.ldr_x_post_sp(r, size),
            Some(&Slot::D(r, Some(s))) => a.ldp_d_post_sp(r, s, size),
            Some(&Slot::D(r, None)) => a.ldr_d_post_sp(r, size),
            None if size != 0 => a.add_xi(SP, SP, size as u32),
            None => {}
        }
    }

    /// [`Frame::leave`], then `ret`.
    pub fn ret(&self, a: &mut Asm) {
        self.leave(a);
        a.ret(LR);
    }
}
