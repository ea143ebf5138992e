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

pub mod compare;
pub mod run;
pub mod testgen;
