//! The AArch64 (NEON) backend: [`asm`] (typed dynasm layer), [`regs`] (register roles), [`abi`]
//! (entry signature and frame), [`masm`] (the [`crate::pica::masm::MacroAssembler`] implementation,
//! where every PICA operation is lowered), and `emulator` (running the code under unicorn
//! on other hosts, feature `emulate-a64`).
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; it runs natively on AArch64 hosts and under the
//! emulator elsewhere.

pub mod lanes;
pub mod masm;

use crate::error::CompileResult;
use crate::host::features::HostFeatures;
use crate::pica::analysis::Analysis;
use picajit_interp::pica::float::{FloatMode, MaxRule};
use picajit_interp::pica::program::Program;

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
    crate::pica::lower::lower_scalar(masm, program, analysis)
}
