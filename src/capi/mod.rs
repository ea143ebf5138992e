//! The C ABI (`include/picajit.h`, generated from this module tree by cbindgen; see
//! `cbindgen.toml` and `tests/capi.rs`). This folder holds what every ISA's C functions share:
//! statuses, the last error and the panic barrier (`error.rs`), checked arguments (`args.rs`)
//! and enum values (`cenum.rs`), handles (`handle.rs`), the engine choice and budget
//! (`engine.rs`). Each ISA's functions
//! live in its own folder and are registered below, one module each.
//!
//! # Conventions (every ISA)
//!
//! * Names: `picajit_<object>_<verb>`. THEIA's and USC's objects carry their ISA
//!   (`picajit_theia_program_create`, `picajit_usc_state_set`) and each runs with
//!   `picajit_<isa>_run`; PICA200's objects are `engine`, `shader`, `uniforms` and `geometry`
//!   (`picajit_shader_run_batch`). Types are `Picajit<Name>`, constants `PICAJIT_<NAME>`.
//! * Engines: every create function takes a `PicajitEngineKind` (PICA200 in
//!   `PicajitEngineConfig::engine`), 0 being `PICAJIT_ENGINE_JIT`, the host's JIT, the
//!   default; and reports the engine a program runs on (`PicajitShaderInfo::engine`,
//!   `picajit_theia_program_engine`, `picajit_usc_program_engine`).
//! * Budgets: a budget of 0 means `PICAJIT_DEFAULT_BUDGET` (2^20 PICA200 instructions per
//!   invocation, THEIA instructions or USC instruction groups per run).
//! * Every function that can fail returns a `PicajitStatus`; `picajit_last_error()` gives a
//!   message for the calling thread's most recent call (empty after a success). Only
//!   `picajit_version`, `picajit_api_version`, `picajit_last_error` and `picajit_status_name`
//!   return something else, and they cannot fail.
//! * Objects are opaque handles: PICA200's `PicajitEngine` (settings), `PicajitShader` (a
//!   program prepared for an engine), `PicajitUniforms` (one shader unit's uniform registers,
//!   shared by the programs it runs), `PicajitGeometry` (geometry-shader state kept across
//!   invocations); THEIA's `PicajitTheiaProgram` and `PicajitTheiaScene`; USC's
//!   `PicajitUscProgram` and `PicajitUscState`. Each `*_create`/`*_load*` has a `*_destroy`
//!   that accepts NULL. Objects do not reference each other after creation, so they can be
//!   destroyed in any order.
//! * Handles are checked (`handle.rs`): a destroyed handle (also a second destroy), a
//!   pointer the library never returned, or a handle of another kind (a shader passed as an
//!   engine) is `PICAJIT_ERR_INVALID_HANDLE`, and nothing is read through it or freed.
//! * NULL for a required pointer is `PICAJIT_ERR_NULL`; sizes, indices and enum values are
//!   checked (`PICAJIT_ERR_INVALID_ARGUMENT`). On failure no output is written and nothing
//!   is created, except where a function says otherwise.
//! * Inputs have size limits, each an error that says so: SHBIN images up to
//!   `PICAJIT_MAX_SHBIN_BYTES` (`PICAJIT_ERR_SHBIN`), source text up to
//!   `PICAJIT_MAX_SOURCE_BYTES` (`PICAJIT_ERR_ASSEMBLY`), raw programs up to 4096 code words
//!   and 128 descriptors (`PICAJIT_ERR_PROGRAM`).
//! * No Rust panic crosses the boundary: each entry point catches it and returns
//!   `PICAJIT_ERR_PANIC` (the library is built with `panic = "unwind"`, the default).
//!
//! # Thread safety
//!
//! * `PicajitEngine`, `PicajitShader`, `PicajitTheiaProgram`, `PicajitTheiaScene` and
//!   `PicajitUscProgram` may be used by any number of threads at the same time: programs are
//!   immutable after creation, and an engine's only mutable part, its compiled-code cache, is
//!   internally locked (for example, create shaders on several threads, or run batches of
//!   one shader in parallel, each with its own output buffer).
//! * `PicajitUniforms`: any number of concurrent runs may read one set, but a call that
//!   writes it (`picajit_uniforms_set_*`, `picajit_shader_apply_constants`,
//!   `picajit_geometry_run_*`, which set b15 and write input rows) needs it exclusively.
//! * `PicajitGeometry` and `PicajitUscState`: one thread at a time.
//! * The last-error message is per thread.
//! * Destroying an object while another thread is inside a call that uses it is undefined
//!   behaviour (using it after the destroy has returned is `PICAJIT_ERR_INVALID_HANDLE`).
//! * `tests/c/test_stress.c` (in CI, and under ThreadSanitizer with `scripts/tsan.sh`) checks
//!   the above against a single-threaded reference; `tests/c/test_hostile.c` checks that every
//!   entry point answers extreme arguments with its documented status in bounded time.

// The C enums' variants are C constants (PICAJIT_ENGINE_JIT), in every ISA's module.
#![allow(non_camel_case_types)]

pub(crate) mod args;
pub(crate) mod cenum;
mod engine;
mod error;
pub(crate) mod handle;

// The ISAs, one declaration each. Their C functions live in their own folders; they are
// declared here so that the header comes from one module tree (cbindgen follows these
// declarations) and so that the shared files above never need to name them.
#[path = "../pica/capi/mod.rs"]
pub mod pica;
#[path = "../theia/capi.rs"]
pub mod theia;
#[cfg(feature = "made-up-isa")]
#[path = "../toy/capi.rs"]
pub mod toy;
#[path = "../usc/capi.rs"]
pub mod usc;

pub use engine::{PicajitEngineKind, PICAJIT_DEFAULT_BUDGET};
pub use error::PicajitStatus;

use std::ffi::c_char;

/// Major version of the C API: changes when a program built against an older header may
/// no longer work with this library.
pub const PICAJIT_API_VERSION_MAJOR: u32 = 3;

/// Minor version of the C API: changes when functions, enum values or trailing struct
/// fields are added.
pub const PICAJIT_API_VERSION_MINOR: u32 = 0;

/// The C API version this header describes: major in bits 16-31, minor in bits 0-15.
/// Compare with `picajit_api_version()` at run time when linking dynamically.
pub const PICAJIT_API_VERSION: u32 = (PICAJIT_API_VERSION_MAJOR << 16) | PICAJIT_API_VERSION_MINOR;

/// The C API version of the library (`PICAJIT_API_VERSION` as the library was built). A
/// program should refuse a library whose major version (bits 16-31) differs from the
/// header's, or whose minor version is lower: `v >> 16 != PICAJIT_API_VERSION_MAJOR ||
/// v < PICAJIT_API_VERSION`.
#[no_mangle]
pub extern "C" fn picajit_api_version() -> u32 {
    PICAJIT_API_VERSION
}

/// The library's version as a NUL-terminated string ("0.1.0"); static, never freed.
#[no_mangle]
pub extern "C" fn picajit_version() -> *const c_char {
    const VERSION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(v) => v,
        Err(_) => panic!("the package version contains a NUL"),
    };
    VERSION.as_ptr()
}

/// The message for the calling thread's most recent failed call, or "" if its most recent
/// call succeeded. Never NULL. The string belongs to the library and stays valid until the
/// thread's next picajit call (other than this one and `picajit_status_name`).
#[no_mangle]
pub extern "C" fn picajit_last_error() -> *const c_char {
    error::last_error_ptr()
}

/// The name of a status value ("PICAJIT_ERR_NULL"), or "unknown status". Static, never
/// NULL.
#[no_mangle]
pub extern "C" fn picajit_status_name(status: i32) -> *const c_char {
    error::status_name(status).as_ptr()
}
