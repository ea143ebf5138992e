//! Dev-only support for picajit's tests, benches and fuzz targets; not part of the library
//! an emulator links.
//!
//! It serves the PICA200 front-end, whose differential tests, benches and fuzz targets share
//! one generator. THEIA and USC need less: their random programs come from small generators
//! beside their tests and front-ends (`tests/theia_jit.rs`, `fuzz/src/theia.rs`,
//! `src/usc/testgen.rs`), and their interpreters' states compare directly.
//!
//! * [`testgen`] is the one PICA200 random-program generator: valid but arbitrary shaders with
//!   their uniforms and inputs, or point-mode geometry programs built to be eligible for the
//!   eight-lane path, drawn from a seed or from fuzzer bytes ([`testgen::Options`],
//!   [`testgen::Rng`]), the fuzz targets' case format ([`testgen::bytes`]) and assembler
//!   stress sources.
//! * [`compare`] turns results into bit patterns and names the first difference.
//! * [`run`] runs single invocations through the JIT facade with results in the
//!   interpreter's types.
//! * [`XorShift`] is the small generator of the tests' hand-written sweeps, [`env_count`] reads
//!   the case counts a run asks for, [`theia_checkout`] finds the original THEIA project for
//!   the tests that read it, and [`THEIA_SPECIALS`] are THEIA register components worth
//!   testing.

pub mod compare;
pub mod run;
pub mod testgen;
mod xorshift;

pub use xorshift::XorShift;

use std::path::PathBuf;

/// The number the environment variable `var` holds, if it is set to one: how the tests let
/// a run ask for more or fewer random cases than their default.
pub fn env_count(var: &str) -> Option<u64> {
    std::env::var(var).ok()?.parse().ok()
}

/// THEIA register components (Q15.17 fixed point) worth testing: 0, the smallest step, all
/// ones (-1 step), the extremes, 1.0, -1.0 and the largest value below 1.0.
pub const THEIA_SPECIALS: [u32; 8] = [
    0,
    1,
    0xFFFF_FFFF,
    0x7FFF_FFFF,
    0x8000_0000,
    0x2_0000,
    0xFFFE_0000,
    0x1_FFFF,
];

/// The checkout of the original THEIA project (freecores/theia_gpu, commit 032c448) that
/// `PICAJIT_THEIA_DIR` names, for the tests that read its programs, scenes or RTL. Without
/// it they are skipped: this prints so, with `purpose`, what the checkout would be used for.
pub fn theia_checkout(purpose: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PICAJIT_THEIA_DIR").map(PathBuf::from);
    if dir.is_none() {
        eprintln!(
            "SKIPPED: set PICAJIT_THEIA_DIR to a checkout of freecores/theia_gpu (commit \
             032c448) {purpose}"
        );
    }
    dir
}
