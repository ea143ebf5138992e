//! picajit: JIT recompilers and reference interpreters for three GPU shader instruction sets,
//! with one API for all of them.
//!
//! * [`pica`]: PICA200, the programmable shader unit of the Nintendo 3DS GPU (vertex and
//!   geometry shaders): the picasso-syntax assembler and disassembler, SHBIN files, and the
//!   engine that runs programs one invocation, a vertex batch or a point-mode draw at a time.
//! * [`theia`]: THEIA, the open-source ray-tracing GPU (seed 003): its assembler, `.mem` files,
//!   disassembler, and the whole-GPU scene render.
//! * [`usc`]: the PowerVR Series 6 USC as ISR text (seed 004): its parser, canonical printer
//!   and random program generator.
//!
//! Every ISA runs on the same engines, chosen by one [`Engine`]: the host's JIT (the
//! default: x86-64 or AArch64), the reference interpreter, or either JIT by name. Every
//! engine gives the interpreter's results bit for bit. Each ISA's `engine` module prepares a
//! program for an engine (`pica::engine::Shader`, `theia::engine::Shader`,
//! `usc::engine::Shader`) and runs it under a budget whose default, and the meaning of 0, are
//! the same everywhere ([`DEFAULT_BUDGET`], [`budget_or_default`]); every engine reports
//! failures as one [`Error`].
//!
//! * [`interp`] (re-exported `picajit-interp`): the three ISAs' definitions, arithmetic
//!   models and reference interpreters, which define correct results.
//! * [`jit`] (re-exported `picajit-jit`): the x86-64 and AArch64 code generators over a
//!   guest-blind host layer, the executable-memory runtime and the code cache.
//! * [`capi`]: the C ABI (`include/picajit.h`).
//!
//! The `picajit` tool's commands (`picajit COMMAND --isa pica|theia|usc`) are built from the
//! same modules.

pub use picajit_interp as interp;
pub use picajit_jit as jit;

mod common;
pub use common::{budget_or_default, Engine, Error, DEFAULT_BUDGET};

pub mod capi;
// The README's Rust examples are whole programs: compiling and running them as doctests
// (`cargo test --doc`) keeps them in step with the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
#[doc(hidden)]
pub mod cli;
pub mod pica;
mod pool;
pub mod theia;
#[cfg(feature = "made-up-isa")]
pub mod toy;
pub mod usc;
