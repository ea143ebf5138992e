//! PICA's x86-64 emitters, over the host's typed assemblers (`crate::host::x64`): [`masm`]
//! (the [`crate::pica::masm::MacroAssembler`] implementation of one invocation per call, SSE4.1)
//! and [`lanes`] (the multi-vertex lane code, AVX2), both addressing PICA's rows through
//! [`rows`].
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; only running it needs an x86-64 host.

pub mod lanes;
pub mod masm;
pub mod regs;
pub mod rows;

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
) -> CompileResult<crate::pica::masm::Emitted> {
    if !features.contains(HostFeatures::SSE41) {
        return Err(crate::error::Error::Unsupported(
            "the x86-64 backend needs SSE4.1".into(),
        ));
    }
    // The batch entry clears, per row, only the temporaries some instruction may read before
    // the entry block wrote them, and the written outputs the entry block does not write
    // whole (the multi-vertex code's rule, `analysis::usage::Usage`): the others are written
    // before any read, or never read.
    let usage = crate::pica::analysis::usage::usage(program, analysis);
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
