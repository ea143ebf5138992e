//! Compile errors. "Cannot compile this shader" is a value, not a panic: the engine falls back to
//! the interpreter for that shader and reports the reason.

use std::fmt;

/// Why a program was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// The program is valid but compiled code could not provably reproduce the interpreter
    /// (for example its control flow has too many distinct stack contexts). The string is a
    /// human-readable reason; run the program on the interpreter instead.
    Unsupported(String),
    /// A bug in the compiler (an assembler error, an inconsistent analysis). Reported rather than
    /// panicking so that the engine can still fall back.
    Internal(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Unsupported(r) => write!(f, "not compiled: {r}"),
            CompileError::Internal(r) => write!(f, "internal JIT error: {r}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// Shorthand used across the crate.
pub type CompileResult<T> = Result<T, CompileError>;
