//! The guest-blind host layer: per host the typed assembler, register roles, frame
//! conventions and the implementations of the integer macro-assembler ([`int`]) and of the
//! lane operations ([`lanes`]); the host's features; and the runtime through which every
//! executable mapping of the crate goes, which also chooses between native and emulated
//! execution. Nothing here names a PICA, THEIA or USC type.

pub mod a64;
pub mod features;
pub mod int;
pub mod lanes;
pub mod runtime;
pub mod x64;

use std::fmt;

/// Target instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// x86-64 with SSE4.1.
    X64,
    /// AArch64 with NEON.
    A64,
}

impl Backend {
    /// The backend matching the host, if there is one.
    pub fn host() -> Option<Backend> {
        if cfg!(target_arch = "x86_64") {
            Some(Backend::X64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Backend::A64)
        } else {
            None
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::X64 => "x64",
            Backend::A64 => "a64",
        })
    }
}
