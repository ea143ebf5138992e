//! The block TOY code runs on: the sixteen registers, the step count, the budget and the exit
//! address, with no pointers in it, so that the same bytes serve native code and the AArch64
//! emulator's guest memory. It is kept as bytes (little-endian, the byte order of both hosts)
//! so that handing it to the code needs no cast.

use picajit_interp::toy::REGS;

/// Byte offset of register `r` (4 bytes each).
pub const fn reg(r: usize) -> i32 {
    (r * 4) as i32
}

/// Executed instructions (8 bytes).
pub const STEPS: i32 = reg(REGS);
/// The run's budget (8 bytes).
pub const BUDGET: i32 = STEPS + 8;
/// At an exit: the address the run stopped at (4 bytes).
pub const PC: i32 = BUDGET + 8;
/// The block's size.
pub const SIZE: usize = PC as usize + 8;

/// Exit codes the code returns: HALT at `PC` executed.
pub const EXIT_HALTED: u32 = 0;
/// Execution reached the end of the program.
pub const EXIT_END: u32 = 1;
/// The block at `PC` would run past the budget: the interpreter goes on from there.
pub const EXIT_BUDGET: u32 = 2;

/// The context block.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToyCtx {
    pub bytes: [u8; SIZE],
}

impl Default for ToyCtx {
    fn default() -> Self {
        ToyCtx { bytes: [0; SIZE] }
    }
}

impl ToyCtx {
    /// The `N` bytes at `off`.
    fn field<const N: usize>(&self, off: i32) -> [u8; N] {
        let o = off as usize;
        self.bytes[o..o + N].try_into().expect("N bytes")
    }

    fn set_field<const N: usize>(&mut self, off: i32, v: [u8; N]) {
        let o = off as usize;
        self.bytes[o..o + N].copy_from_slice(&v);
    }

    fn word(&self, off: i32) -> u32 {
        u32::from_le_bytes(self.field(off))
    }

    fn set_word(&mut self, off: i32, v: u32) {
        self.set_field(off, v.to_le_bytes());
    }

    fn dword(&self, off: i32) -> u64 {
        u64::from_le_bytes(self.field(off))
    }

    fn set_dword(&mut self, off: i32, v: u64) {
        self.set_field(off, v.to_le_bytes());
    }

    pub fn regs(&self) -> [u32; REGS] {
        std::array::from_fn(|r| self.word(reg(r)))
    }

    pub fn set_regs(&mut self, regs: &[u32; REGS]) {
        for (r, &v) in regs.iter().enumerate() {
            self.set_word(reg(r), v);
        }
    }

    pub fn steps(&self) -> u64 {
        self.dword(STEPS)
    }

    pub fn set_steps(&mut self, v: u64) {
        self.set_dword(STEPS, v);
    }

    pub fn set_budget(&mut self, v: u64) {
        self.set_dword(BUDGET, v);
    }

    pub fn pc(&self) -> u32 {
        self.word(PC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_overlap() {
        let mut c = ToyCtx::default();
        let regs: [u32; REGS] = std::array::from_fn(|r| 0x0101_0101 * r as u32 + 1);
        c.set_regs(&regs);
        c.set_steps(u64::MAX - 1);
        c.set_budget(0x0102_0304_0506_0708);
        c.set_word(PC, 0xDEAD_BEEF);
        assert_eq!(c.regs(), regs);
        assert_eq!(c.steps(), u64::MAX - 1);
        assert_eq!(c.dword(BUDGET), 0x0102_0304_0506_0708);
        assert_eq!(c.pc(), 0xDEAD_BEEF);
        assert_eq!(std::mem::align_of::<ToyCtx>(), 8);
        assert_eq!(STEPS % 8, 0);
    }
}
