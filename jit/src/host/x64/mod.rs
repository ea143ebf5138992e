//! x86-64: [`asm`] (typed dynasm layer, SSE forms), [`vex`] (the AVX/AVX2 forms), [`regs`]
//! (register roles), [`abi`] (entry signature and frame), [`int`] (the integer
//! macro-assembler), [`lanes`] (the lane operations of both register widths).
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; only running it needs an x86-64 host.

pub mod abi;
pub mod asm;
pub mod int;
pub mod lanes;
pub mod regs;
pub mod vex;
