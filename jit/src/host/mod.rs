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
