//! JIT compilers for three GPU shader instruction sets: the PICA200 ([`pica`], the Nintendo 3DS
//! vertex and geometry shader unit), THEIA ([`theia`], a fixed-point ray-tracing GPU's shader
//! unit) and the PowerVR Series 6 USC ([`usc`]). Each generates x86-64 and AArch64 code that
//! reproduces its reference interpreter in `picajit-interp` bit for bit, and hands the
//! interpreter whatever the code cannot reproduce.
//!
//! # Layout
//!
//! * `host/` knows no guest ISA: per host (x86-64, AArch64) the typed assembler, register
//!   roles, frames and calling convention; the host's features ([`HostFeatures`]); and the
//!   executable-memory runtime through which every mapping of generated code goes (never
//!   writable and executable at once; instruction-cache maintenance on AArch64). AArch64 code
//!   runs natively on AArch64 hosts and, with the `emulate-a64` feature, under the unicorn
//!   emulator elsewhere.
//! * [`pica`], [`theia`], [`usc`]: one front-end per ISA over that layer; each lowers its
//!   program once for both hosts.
//! * This file, `error.rs` and `disasm.rs`: the facade, [`Backend`], [`HostFeatures`], one
//!   [`Error`] for every ISA's compiling and running, the one disassembler of every ISA's
//!   host code (`disassemble`, feature `disasm`), and PICA200's compiled-shader API
//!   re-exported (below).
//!
//! # PICA200 pipeline
//!
//! ```text
//! Program ──analysis──► nodes/blocks ──lower + masm──► machine code ──runtime──► CompiledShader
//! ```
//!
//! * `pica/analysis/` explores everything reachable from the entry point under the hardware's
//!   CALL/IF/LOOP stack rules, resolved statically (see `pica/analysis/regions.rs`).
//! * `pica/lower/` walks the blocks and lowers each instruction once, through an emitter of
//!   either shape: masm calls for one invocation (`pica/x64/masm.rs` with SSE4.1,
//!   `pica/a64/masm.rs` with NEON), or lane operations for a group of eight vertices or
//!   geometry invocations (`pica/x64/lanes.rs` with AVX2, `pica/a64/lanes.rs` with NEON).
//! * The compiled code is mapped by the host runtime and shared through a [`CodeCache`]; it
//!   runs through [`CompiledShader::invoke`] on either host.
//!
//! # Correctness contract: deopt
//!
//! Compiled code reproduces the interpreter bit for bit on every invocation it finishes.
//! Whatever it cannot reproduce (running out of budget, an undefined opcode, BREAK with an
//! empty loop stack, running past the end of the program, a full EMIT buffer) makes it stop
//! with a *deopt* status instead. [`CompiledShader::invoke`] then restores the registers (and
//! geometry state) it was given and re-runs that invocation on
//! [`picajit_interp::pica::exec::Interpreter`], so results, errors included, are identical by
//! construction. Only the rows the program can write are saved for that (see
//! [`Analysis::written_registers`]), and nothing when [`Analysis::run_bounds`] proves the run
//! cannot stop early, which keeps short geometry shaders cheap.
//! [`Invocation::compiled_only`] exposes the raw outcome for tests and statistics.
//!
//! # Input contract (F24 modes)
//!
//! As in the float model (`picajit_interp::pica::float`, "What a JIT must do"), F24-mode register
//! contents are expected to be f24 values (`F24::to_f32` images), which every upload path of
//! the engine guarantees. Under RTZ the generated code equals the interpreter for *any* f32
//! contents; under RNE the f64 sums and the RSQ recipe are proven only for f24 inputs.
//! F32 mode has no such restriction.
//!
//! # The PICA200 facade
//!
//! What a user of the crate needs for PICA200 is re-exported here: compiling ([`compile`],
//! [`compile_with`], [`CodeCache`]) into a [`CompiledShader`], running it through one
//! [`Invocation`] type that returns one [`Outcome`], and one [`Error`] type for both. This
//! file also names the outcomes of generated code ([`JitExit`], `Emitted`); the compiled
//! shader is in `pica/shader.rs`, the invocation in `pica/invocation.rs` and its drivers in
//! `pica/invoke.rs`. THEIA's and USC's compilers are [`theia::compile`] and the `compile` of
//! [`usc::x64`] and [`usc::a64`].
//!
//! # API
//!
//! ```no_run
//! use picajit_jit::{compile, Backend, HostFeatures, Invocation};
//! # fn f(program: &picajit_interp::pica::program::Program, uniforms: &picajit_interp::pica::state::Uniforms) {
//! let mode = picajit_interp::pica::float::FloatMode::default();
//! let shader = compile(program, mode, Backend::X64, HostFeatures::detect()).unwrap();
//! println!("{} bytes; {}", shader.code_size(), shader.analysis());
//! let mut regs = picajit_interp::pica::state::Registers::default();
//! let outcome = shader.invoke(Invocation::one(uniforms, &mut regs).budget(1 << 20));
//! # }
//! ```

// The crate's internals: the facade below re-exports what callers use; `testing` gives the
// encoding tests the assemblers they decode.
#[cfg(feature = "disasm")]
mod disasm;
pub(crate) mod error;
pub(crate) mod host;
pub mod pica;
pub mod theia;
#[cfg(feature = "made-up-isa")]
pub mod toy;
pub mod usc;

/// Internals that tests need and callers do not: the x86-64, AVX2 and AArch64 assemblers
/// and register names, which `tests/jit_x64_encoding.rs` and `tests/jit_a64_encoding.rs`
/// decode form by form (with the multi-vertex context offsets the geometry forms carry),
/// and the emulator's last error for failure messages. Not part of the API.
#[doc(hidden)]
pub mod testing {
    /// The per-vertex x86-64 assembler and its registers.
    pub mod x64 {
        pub use crate::host::x64::{asm, regs};
    }
    /// The per-vertex AArch64 assembler, its registers and (under emulation) the emulator's
    /// last error.
    pub mod a64 {
        #[cfg(feature = "emulate-a64")]
        pub use crate::host::a64::emulator::{count_instructions, last_error, InstructionCounts};
        pub use crate::host::a64::{asm, regs};
    }
    /// The AVX2 encoder of the multi-vertex code and the geometry fields of its context,
    /// whose offsets the geometry EMIT forms carry.
    pub mod batch {
        pub use crate::host::x64::vex as asm;
        pub use crate::pica::batch::{
            SOA_GS_CURSOR, SOA_GS_EMITS, SOA_GS_FLAGS_NEXT, SOA_GS_FLAG_CURSOR, SOA_GS_FLAG_STRIDE,
            SOA_GS_LANE_FLAGS, SOA_GS_LANE_ROWS, SOA_GS_LAST6, SOA_GS_LAST7, SOA_GS_LEFT,
            SOA_GS_PREV7, SOA_GS_ROWS_NEXT, SOA_GS_ROW_OFF, SOA_GS_ROW_STRIDE, SOA_GS_SLOT7,
            SOA_GS_SLOTS_HIT, SOA_GS_VSIZE,
        };
    }
}

/// The x86-64 disassembler behind [`CompiledShader::disassemble`], re-exported for tests and
/// tools.
#[cfg(feature = "disasm")]
pub use iced_x86;
/// yaxpeax's decoder traits, which [`yaxpeax_arm`] needs to be used.
#[cfg(feature = "disasm")]
pub use yaxpeax_arch;
/// The AArch64 disassembler behind [`CompiledShader::disassemble`], re-exported for tests and
/// tools.
#[cfg(feature = "disasm")]
pub use yaxpeax_arm;

#[cfg(feature = "disasm")]
pub use disasm::disassemble;
pub use error::{Error, JitExit};
pub use host::features::HostFeatures;
pub use host::Backend;
pub use pica::analysis::{Analysis, DeoptReason, RunBounds};
pub use pica::batch::{A64Lanes, BatchStats, LANES};
pub use pica::cache::{CacheKey, CacheStats, CodeCache, DEFAULT_CACHE_BUDGET};
pub use pica::invocation::{Invocation, Outcome, DEFAULT_BUDGET};
pub use pica::shader::{
    compile, compile_with, compile_with_options, CompileOptions, CompiledShader,
};
