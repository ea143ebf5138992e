//! PICA's AArch64 (NEON) emitters, over the host's typed assembler (`crate::host::a64`):
//! [`masm`] (the [`crate::pica::masm::MacroAssembler`] implementation of one invocation per
//! call) and [`lanes`] (the multi-vertex lane code, with [`A64Lanes`] choosing how a group maps
//! onto q registers), both addressing PICA's rows through [`rows`].
//!
//! Code is always generated into a `dynasmrt::VecAssembler` at base address 0, so it can be
//! produced (and disassembled) on any host; it runs natively on AArch64 hosts and under the
//! emulator elsewhere (`crate::host::runtime`).

pub mod lanes;
pub mod masm;
pub mod regs;
pub mod rows;

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
) -> CompileResult<crate::pica::masm::Emitted> {
    // The batch entry clears per row what x86-64's does (`pica/x64/mod.rs`).
    let usage = crate::pica::analysis::usage::usage(program, analysis);
    let mask = |per: [u8; 16]| {
        (0..16)
            .filter(|&i| per[i] != 0)
            .fold(0u16, |m, i| m | 1 << i)
    };
    let written = analysis.written_registers().1;
    let mut masm = masm::A64Masm::new(mode).with_batch_zero(
        mask(usage.zero_temps) & analysis.read_temps(),
        mask(usage.zero_outputs) & written,
        written,
    );
    masm.max_rule = max_rule;
    crate::pica::lower::lower_scalar(masm, program, analysis)
}

/// How the NEON lane code (`pica/a64/lanes.rs`) maps a group of `LANES` vertices onto q
/// registers of four lanes. Both run the same groups, context and runtime and give the same
/// results; they differ only in the instructions executed per vertex and in code size
/// (DEVELOPERS.md, "The multi-vertex (SoA) backend", has the measurements). x86-64 code
/// ignores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum A64Lanes {
    /// The body runs twice per group, once per half of four lanes.
    #[default]
    Four,
    /// The body runs once per group: control flow, budget checks and lane masks are the
    /// group's, and each instruction's lane operations run for lanes 0-3, then for lanes 4-7.
    Eight,
}
