//! Reference interpreters for the three GPU shader instruction sets picajit runs: PICA200
//! ([`pica`], the Nintendo 3DS vertex and geometry shader unit), THEIA ([`theia`], a
//! fixed-point ray-tracing GPU) and the PowerVR Series 6 USC ([`usc`]).
//!
//! This crate defines correct execution for picajit: each ISA's codec, arithmetic model and
//! interpreter. It depends on nothing else in the workspace, so it can never share a bug with
//! the JIT.

pub mod pica;
pub mod theia;
#[cfg(feature = "made-up-isa")]
pub mod toy;
pub mod usc;
