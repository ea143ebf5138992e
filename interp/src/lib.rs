//! Reference implementation of the PICA200 programmable shader unit.
//!
//! This crate is the definition of correct execution for picajit: the ISA codec ([`isa`]), the
//! float model every engine follows ([`float`]), the program container ([`program`]), the register
//! file layout shared with the JIT ([`state`]) and the hardware-exact interpreter ([`exec`]).
//! It depends on nothing else in the workspace so that it can never share a bug with the JIT.

pub mod exec;
pub mod float;
pub mod isa;
pub mod program;
pub mod state;
pub mod theia;
pub mod usc;
