//! THEIA (seed 003) on top of the interpreter crate's ISA (`picajit_interp::theia`): the
//! assembler for the original project's syntax ([`asm`]), `.mem` files ([`mem`]), the
//! disassembler, the ROM, a program prepared for an engine ([`engine`]), the whole-GPU scene
//! render ([`render`]) and the tool's `--isa theia` commands.

/// An error that is its message alone: the type, its `Display` (the message) and `Error`,
/// for the `.mem` reader and the renderer.
macro_rules! message_error {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name(pub String);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::error::Error for $name {}
    };
}

pub mod asm;
pub(crate) mod cli;
pub mod disasm;
pub mod engine;
pub mod mem;
pub mod render;
pub mod rom;

pub use asm::{assemble, assemble_with, AsmError, Layout, Program, TABLE_LEN};
pub use disasm::disassemble;
pub use mem::{MemError, MemImage};
