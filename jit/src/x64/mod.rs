//! The x86-64 backend: [`asm`] (typed dynasm layer), [`regs`] (register roles), [`abi`] (entry
//! signature and frame), [`masm`] (the [`crate::masm::MacroAssembler`] implementation).
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; only running it needs an x86-64 host.

pub mod abi;
pub mod asm;
pub mod masm;
pub mod regs;

use crate::analysis::Analysis;
use crate::error::CompileResult;
use crate::features::HostFeatures;
use crate::lower::Lowerer;
use picajit_interp::float::{FloatMode, MaxRule};
use picajit_interp::program::Program;

/// Generate x86-64 machine code for an analysed program.
pub fn generate(
    program: &Program,
    analysis: &Analysis,
    mode: FloatMode,
    max_rule: MaxRule,
    features: HostFeatures,
) -> CompileResult<crate::Emitted> {
    if !features.contains(HostFeatures::SSE41) {
        return Err(crate::Error::Unsupported(
            "the x86-64 backend needs SSE4.1".into(),
        ));
    }
    let mut masm = masm::X64Masm::new(mode, features)
        .with_batch_zero(analysis.read_temps(), analysis.written_registers().1);
    masm.max_rule = max_rule;
    Lowerer::new(masm, program, analysis).lower()
}
