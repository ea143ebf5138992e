//! AArch64: [`asm`] (typed dynasm layer), [`regs`] (register roles), [`abi`] (entry signature
//! and frame), [`int`] (the integer macro-assembler), [`lanes`] (the NEON lane operations)
//! and `emulator` (running code under unicorn on other hosts, feature `emulate-a64`).
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; it runs natively on AArch64 hosts and under the
//! emulator elsewhere.

pub mod abi;
pub mod asm;
#[cfg(feature = "emulate-a64")]
pub mod emulator;
pub mod int;
pub mod lanes;
pub mod regs;
