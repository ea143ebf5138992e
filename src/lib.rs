//! picajit: a JIT recompiler and reference interpreter for the PICA200 programmable shader
//! unit of the Nintendo 3DS GPU.
//!
//! * [`interp`] (re-exported `picajit-interp`): ISA codec, float model, the reference
//!   interpreter that defines correct results.
//! * [`jit`] (re-exported `picajit-jit`): control-flow analysis, the x86-64 and AArch64
//!   backends, executable-memory runtime and code cache.
//! * [`engine`]: prepare a program for a backend and run invocations and batches.
//! * [`shbin`]: read and write SHBIN (DVLB) files.
//! * [`asm`]: picasso-syntax assembler and disassembler.
//! * [`bench`](mod@bench): throughput, compile-time and code-size measurement (`picajit bench`).

pub use picajit_interp as interp;
pub use picajit_jit as jit;

mod common;
pub use common::{budget_or_default, Engine, Error, DEFAULT_BUDGET};

pub mod capi;
#[doc(hidden)]
pub mod cli;
pub mod pica;
mod pool;
pub mod theia;
#[cfg(feature = "made-up-isa")]
pub mod toy;
pub mod usc;
