//! picajit: a JIT recompiler and reference interpreter for the PICA200 programmable shader
//! unit of the Nintendo 3DS GPU.
//!
//! * [`interp`] (re-exported `picajit-interp`): ISA codec, float model, the reference
//!   interpreter that defines correct results.
//! * [`engine`]: prepare a program for a backend and run invocations and batches.
//! * [`shbin`]: read and write SHBIN (DVLB) files.
//! * [`asm`]: picasso-syntax assembler and disassembler.
//! * [`bench`]: throughput, compile-time and code-size measurement (`picajit bench`).

pub use picajit_interp as interp;

pub mod asm;
pub mod bench;
pub mod engine;
pub mod shbin;
pub mod testgen;
