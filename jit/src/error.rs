//! The crate's one error type. "Cannot compile this shader" is a value, not a panic: the
//! engine falls back to the interpreter for that shader and reports the reason; an invocation
//! that fails does so exactly as on the interpreter, with the index of the failing one.

use crate::JitExit;
use picajit_interp::pica::exec::ExecError;
use std::fmt;

/// Why a program was not compiled, or why an [`Invocation`](crate::Invocation) failed.
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unsupported(r) => write!(f, "not compiled: {r}"),
            Error::Internal(r) => write!(f, "internal JIT error: {r}"),
            Error::Exec { index, error } => write!(f, "vertex {index}: {error}"),
            Error::Stopped(exit) => write!(f, "compiled code stopped: {exit:?}"),
            Error::Invalid(what) => write!(f, "invalid invocation: {what}"),
        }
    }
}

impl std::error::Error for Error {}

/// Compile errors inside the crate are [`Error::Unsupported`] and [`Error::Internal`].
pub(crate) type CompileError = Error;

/// Shorthand used across the crate.
pub(crate) type CompileResult<T> = Result<T, CompileError>;
