//! THEIA (seed 003) on top of the interpreter crate's ISA (`picajit_interp::theia`): the
//! assembler for the original project's syntax ([`asm`]), `.mem` files ([`mem`]), the
//! disassembler, the ROM, a program prepared for an engine ([`engine`]), the whole-GPU scene
//! render ([`render`]) and the tool's `--isa theia` commands.

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
