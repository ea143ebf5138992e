//! TOY, the made-up instruction set (`picajit_interp::toy`), in the facade: its text syntax
//! ([`asm`]).

pub mod asm;

pub use asm::{parse, print, ParseError};
