//! PICA200, the programmable shader unit of the Nintendo 3DS GPU (vertex and geometry
//! shaders): the picasso-syntax assembler and disassembler ([`asm`]), SHBIN files
//! ([`shbin`]), the engine that runs programs on the interpreter or a JIT ([`engine`]), the
//! measurements behind `picajit bench` ([`bench`](mod@bench)) and the tool's commands.
//! The ISA itself, its float model and the reference interpreter are in
//! [`picajit_interp::pica`]; the JIT in [`picajit_jit::pica`].

pub mod asm;
pub mod bench;
pub(crate) mod cli;
pub mod engine;
pub mod shbin;
