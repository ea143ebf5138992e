//! Running generated code: executable memory, the typed entry wrapper and the code cache.

pub mod cache;
pub mod code_buffer;
