//! Dev-only support for picajit's tests, benches and fuzz targets; not part of the library
//! an emulator links. [`testgen`] is the one random-program generator: valid but arbitrary
//! shaders with their uniforms and inputs, or point-mode geometry programs built to be
//! eligible for the eight-lane path, drawn from a seed or from fuzzer bytes
//! ([`testgen::Options`], [`testgen::Rng`]), the fuzz targets' case format
//! ([`testgen::bytes`]) and assembler stress sources. [`compare`] turns results into bit
//! patterns and names the first difference; [`run`] runs single invocations through the JIT
//! facade with results in the interpreter's types; [`XorShift`] is the small generator of the
//! tests' hand-written sweeps.

pub mod compare;
pub mod run;
pub mod testgen;
mod xorshift;

pub use xorshift::XorShift;
