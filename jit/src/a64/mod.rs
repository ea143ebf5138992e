//! The AArch64 (NEON) backend: [`asm`] (typed dynasm layer), [`regs`] (register roles), [`abi`]
//! (entry signature and frame), [`masm`] (the [`crate::masm::MacroAssembler`] implementation,
//! where every PICA operation is lowered), and `emulator` (running the code under unicorn
//! on other hosts, feature `emulate-a64`).
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; it runs natively on AArch64 hosts and under the
//! emulator elsewhere.

pub mod abi;
pub mod asm;
#[cfg(feature = "emulate-a64")]
pub mod emulator;
pub mod masm;
pub mod regs;

use crate::analysis::Analysis;
use crate::error::CompileResult;
use crate::features::HostFeatures;
use picajit_interp::float::{FloatMode, MaxRule};
use picajit_interp::program::Program;

/// Generate AArch64 machine code for an analysed program. NEON is part of the AArch64 base
/// architecture, so no feature is required (`features` is in the cache key only).
pub fn generate(
    program: &Program,
    analysis: &Analysis,
    mode: FloatMode,
    max_rule: MaxRule,
    _features: HostFeatures,
) -> CompileResult<crate::Emitted> {
    let mut masm = masm::A64Masm::new(mode);
    masm.max_rule = max_rule;
    crate::lower::lower_scalar(masm, program, analysis)
}
