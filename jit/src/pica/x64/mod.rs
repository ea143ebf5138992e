//! The x86-64 backend: [`asm`] (typed dynasm layer), [`regs`] (register roles), [`abi`] (entry
//! signature and frame), [`masm`] (the [`crate::pica::masm::MacroAssembler`] implementation).
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; only running it needs an x86-64 host.

pub mod lanes;
pub mod masm;

use crate::error::CompileResult;
use crate::host::features::HostFeatures;
use crate::pica::analysis::Analysis;
use picajit_interp::pica::float::{FloatMode, MaxRule};
use picajit_interp::pica::program::Program;

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
    // The batch entry clears, per row, only the temporaries some instruction may read before
    // the entry block wrote them, and the written outputs the entry block does not write
    // whole (the multi-vertex code's rule, `batch::usage::Usage`): the others are written
    // before any read, or never read.
    let usage = crate::pica::batch::usage::usage(program, analysis);
    let mask = |per: [u8; 16]| {
        (0..16)
            .filter(|&i| per[i] != 0)
            .fold(0u16, |m, i| m | 1 << i)
    };
    let written = analysis.written_registers().1;
    let mut masm = masm::X64Masm::new(mode, features).with_batch_zero(
        mask(usage.zero_temps) & analysis.read_temps(),
        mask(usage.zero_outputs) & written,
        written,
    );
    masm.max_rule = max_rule;
    crate::pica::lower::lower_scalar(masm, program, analysis)
}
