//! The guest-blind host layer: per host the typed assembler, register roles, frame
//! conventions and the implementation of the integer macro-assembler ([`int`]); the host's
//! features; and the runtime through which every executable mapping of the crate goes.
//! Nothing here names a PICA, THEIA or USC type.

pub mod a64;
pub mod features;
pub mod int;
pub mod runtime;
pub mod x64;
