//! The context block THEIA code runs on: one self-contained `repr(C)` block (no pointers),
//! so that the same bytes work natively and in the AArch64 emulator's guest memory.

/// Register rows the block holds (the manual profile's 132; the rtl profile uses 128).
pub const ROWS: usize = 132;

/// The context. Offsets below are checked against the struct by a test.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TheiaCtx {
    pub regs: [[u32; 3]; ROWS],
    pub last_result: [u32; 3],
    pub last_dst: u32,
    pub return_addr: u32,
    /// Entry address in; at an exit, the address the host goes on from.
    pub pc: u32,
    pub steps: u64,
    pub budget: u64,
    /// RETURN's value at [`EXIT_RETURNED`].
    pub exit_arg: u32,
    /// The address of the jump, call or return that led to `pc`, or [`NO_JUMP`].
    pub jumped_from: u32,
    /// Staged operands and results of the current instruction.
    pub opa: [u32; 3],
    pub opb: [u32; 3],
    pub res: [u32; 3],
    /// OMWRITE requests the code queued; the host hands them to the I/O side, in order,
    /// whenever the code returns.
    pub oq_len: u32,
    pub oq: [OmWrite; OQ_CAP],
}

/// One queued OMWRITE. The code stores each vector as 8 bytes (x, y) and 4 bytes (z), the
/// widths at which Rust copies a `[u32; 3]`: a load spanning two smaller stores still in the
/// store buffer stalls, and perf showed such stalls (4-byte stores read back 8 or 16 bytes
/// at a time) taking most of the host's time per run.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OmWrite {
    pub addr: [u32; 3],
    pub data: [u32; 3],
}

/// Capacity of the OMWRITE queue; the code returns to the host when it is full.
pub const OQ_CAP: usize = 32;

pub const REGS: u32 = 0;
pub const LAST_RESULT: u32 = (ROWS * 12) as u32;
pub const LAST_DST: u32 = LAST_RESULT + 12;
pub const RETURN_ADDR: u32 = LAST_DST + 4;
pub const PC: u32 = RETURN_ADDR + 4;
pub const STEPS: u32 = PC + 4;
pub const BUDGET: u32 = STEPS + 8;
pub const EXIT_ARG: u32 = BUDGET + 8;
pub const JUMPED_FROM: u32 = EXIT_ARG + 4;
pub const OPA: u32 = JUMPED_FROM + 4;
pub const OPB: u32 = OPA + 12;
pub const RES: u32 = OPB + 12;
pub const OQ_LEN: u32 = RES + 12;
pub const OQ: u32 = OQ_LEN + 4;

/// `jumped_from` when execution did not arrive by a jump.
pub const NO_JUMP: u32 = u32::MAX;

/// Exit codes: RETURN executed (value in `exit_arg`).
pub const EXIT_RETURNED: u32 = 0;
/// TMREAD at `pc`: its address vector is staged in `opa`; the host reads the texture,
/// commits the instruction and calls the code again at `pc + 1`.
pub const EXIT_TMREAD: u32 = 1;
/// The host goes on with the interpreter from `pc` until the run ends.
pub const EXIT_TO_END: u32 = 2;
/// The OMWRITE queue is full: the host empties it and calls the code again at `pc`.
pub const EXIT_FLUSH: u32 = 3;

impl Default for TheiaCtx {
    fn default() -> Self {
        TheiaCtx {
            regs: [[0; 3]; ROWS],
            last_result: [0; 3],
            last_dst: 0,
            return_addr: 0,
            pc: 0,
            steps: 0,
            budget: 0,
            exit_arg: 0,
            jumped_from: NO_JUMP,
            opa: [0; 3],
            opb: [0; 3],
            res: [0; 3],
            oq_len: 0,
            oq: [OmWrite::default(); OQ_CAP],
        }
    }
}

impl TheiaCtx {
    /// The block as bytes (it is plain `repr(C)` data of `u32`/`u64` fields).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `TheiaCtx` is `repr(C)` with only integer fields and explicit padding, so
        // every byte is initialised and every bit pattern is a valid value.
        unsafe {
            std::slice::from_raw_parts_mut(
                (self as *mut TheiaCtx).cast::<u8>(),
                std::mem::size_of::<TheiaCtx>(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn offsets_match_the_struct() {
        assert_eq!(offset_of!(TheiaCtx, regs) as u32, REGS);
        assert_eq!(offset_of!(TheiaCtx, last_result) as u32, LAST_RESULT);
        assert_eq!(offset_of!(TheiaCtx, last_dst) as u32, LAST_DST);
        assert_eq!(offset_of!(TheiaCtx, return_addr) as u32, RETURN_ADDR);
        assert_eq!(offset_of!(TheiaCtx, pc) as u32, PC);
        assert_eq!(offset_of!(TheiaCtx, steps) as u32, STEPS);
        assert_eq!(offset_of!(TheiaCtx, budget) as u32, BUDGET);
        assert_eq!(offset_of!(TheiaCtx, exit_arg) as u32, EXIT_ARG);
        assert_eq!(offset_of!(TheiaCtx, jumped_from) as u32, JUMPED_FROM);
        assert_eq!(offset_of!(TheiaCtx, opa) as u32, OPA);
        assert_eq!(offset_of!(TheiaCtx, opb) as u32, OPB);
        assert_eq!(offset_of!(TheiaCtx, res) as u32, RES);
        assert_eq!(offset_of!(TheiaCtx, oq_len) as u32, OQ_LEN);
        assert_eq!(offset_of!(TheiaCtx, oq) as u32, OQ);
        assert_eq!(std::mem::size_of::<TheiaCtx>() % 8, 0);
        assert_eq!(STEPS % 8, 0);
    }
}
