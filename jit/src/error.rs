//! The crate's one error type, for compiling and running all three ISAs. "Cannot compile this
//! shader" is a value, not a panic: the engine falls back to the interpreter for that shader
//! and reports the reason; a run that fails does so exactly as on the interpreter (for
//! PICA200 with the index of the failing invocation).

use picajit_interp::pica::exec::ExecError;
use picajit_interp::theia::exec::TheiaError;
use picajit_interp::usc::ExecError as UscExecError;
use std::fmt;

/// Why a program was not compiled, or why a run failed: a PICA200
/// [`Invocation`](crate::Invocation), a THEIA or a USC run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The program is valid but compiled code could not provably reproduce the interpreter
    /// (for example its control flow has too many distinct stack contexts). The string is a
    /// human-readable reason; run the program on the interpreter instead.
    Unsupported(String),
    /// A bug in the compiler (an assembler error, an inconsistent analysis). Reported rather than
    /// panicking so that the engine can still fall back.
    Internal(String),
    /// Invocation `index` of the call (0 for a single invocation) failed on the interpreter,
    /// as [`Interpreter::run`](picajit_interp::pica::exec::Interpreter::run) would have failed.
    Exec {
        /// Index of the vertex (or point) in the call's inputs.
        index: usize,
        /// The interpreter's error.
        error: ExecError,
    },
    /// A [`compiled_only`](crate::Invocation::compiled_only) invocation stopped in compiled
    /// code; the registers and geometry state are as they were before the call.
    Stopped(JitExit),
    /// The invocation asked for something its kind does not take (a mask or a start state on
    /// a single invocation, geometry state on a batch, …).
    Invalid(&'static str),
    /// The code was generated but cannot run on this host in this build: another
    /// architecture's code (AArch64 runs under the emulator only with the `emulate-a64`
    /// feature), or USC x86-64 code on a host without AVX2 and FMA.
    Unavailable(String),
    /// A THEIA run failed, as
    /// [`exec::run`](picajit_interp::theia::exec::run) would have failed.
    Theia(TheiaError),
    /// A USC run failed, as [`Prepared::run`](picajit_interp::usc::Prepared::run) would have
    /// failed.
    Usc(UscExecError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unsupported(r) => write!(f, "not compiled: {r}"),
            Error::Internal(r) => write!(f, "internal JIT error: {r}"),
            Error::Exec { index, error } => write!(f, "vertex {index}: {error}"),
            Error::Stopped(exit) => write!(f, "compiled code stopped: {exit:?}"),
            Error::Invalid(what) => write!(f, "invalid invocation: {what}"),
            Error::Unavailable(why) => f.write_str(why),
            Error::Theia(e) => e.fmt(f),
            Error::Usc(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::host::runtime::ExecError> for Error {
    /// Code that cannot run here is [`Error::Unavailable`]; failing to map it or to load it
    /// into the emulator is [`Error::Internal`].
    fn from(e: crate::host::runtime::ExecError) -> Error {
        match e {
            crate::host::runtime::ExecError::NotRunnable(_) => Error::Unavailable(e.to_string()),
            _ => Error::Internal(e.to_string()),
        }
    }
}

/// Compile errors inside the crate are [`Error::Unsupported`] and [`Error::Internal`].
pub(crate) type CompileError = Error;

/// Shorthand used across the crate.
pub(crate) type CompileResult<T> = Result<T, CompileError>;

/// Why compiled code did not finish an invocation (see the crate docs on deopt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitExit {
    /// Generated code asked for the interpreter at PICA address `pc`.
    Deopt {
        /// Address of the instruction that could not run compiled.
        pc: u32,
    },
    /// The budget would have run out.
    Budget,
    /// The code is for another architecture than the host's.
    NotExecutable,
    /// A geometry shader was run without a `GeometryState` (EMIT would be a no-op, which
    /// compiled code does not model).
    NoGeometryState,
}
