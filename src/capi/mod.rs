//! The C ABI (`include/picajit.h`, generated from this module by cbindgen; see
//! `cbindgen.toml` and `tests/capi.rs`).
//!
//! # Conventions
//!
//! * Every function that can fail returns a `PicajitStatus`; `picajit_last_error()` gives a
//!   message for the calling thread's most recent call (empty after a success). Only
//!   `picajit_version`, `picajit_api_version`, `picajit_last_error` and `picajit_status_name`
//!   return something else, and they cannot fail.
//! * Objects are opaque handles: `PicajitEngine` (settings), `PicajitShader` (a program
//!   prepared for an engine), `PicajitUniforms` (one shader unit's uniform registers, shared
//!   by the programs it runs), `PicajitGeometry` (geometry-shader state kept across
//!   invocations). Each `*_create`/`*_load_*` has a `*_destroy` that accepts NULL. Objects do
//!   not reference each other after creation, so they can be destroyed in any order.
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
//! * `PicajitEngine` and `PicajitShader` may be used by any number of threads at the same
//!   time: shaders are immutable after creation, and an engine's only mutable part, its
//!   compiled-code cache, is internally locked (for example, create shaders on several
//!   threads, or run batches of one shader in parallel, each with its own output buffer).
//! * `PicajitUniforms`: any number of concurrent runs may read one set, but a call that
//!   writes it (`picajit_uniforms_set_*`, `picajit_shader_apply_constants`,
//!   `picajit_geometry_run_*`, which set b15 and write input rows) needs it exclusively.
//! * `PicajitGeometry`: one thread at a time.
//! * The last-error message is per thread.
//! * Destroying an object while another thread is inside a call that uses it is undefined
//!   behaviour (using it after the destroy has returned is `PICAJIT_ERR_INVALID_HANDLE`).

mod engine;
mod error;
mod geometry;
mod handle;
mod layout;
mod program;
mod run;
mod state;
mod theia;
mod uniforms;
mod usc;

pub use engine::{
    picajit_engine_backend, picajit_engine_cache_size, picajit_engine_clear_cache,
    picajit_engine_config_init, picajit_engine_create, picajit_engine_destroy, PicajitBackend,
    PicajitEngine, PicajitEngineConfig, PicajitFloatMode, PicajitMaxRule, PicajitRounding,
};
pub use error::PicajitStatus;
pub use geometry::{
    picajit_geometry_create, picajit_geometry_destroy, picajit_geometry_get_emit_state,
    picajit_geometry_get_unit_state, picajit_geometry_pending, picajit_geometry_reset,
    picajit_geometry_run_point, picajit_geometry_run_points, picajit_geometry_run_uniforms,
    picajit_geometry_set_emit_callback, picajit_geometry_set_emit_state,
    picajit_geometry_set_entry, picajit_geometry_set_mode, picajit_geometry_set_unit_state,
    picajit_geometry_take, PicajitEmitFn, PicajitEmitInfo, PicajitGeometry, PicajitGsMode,
};
pub use layout::{PicajitFormat, PicajitVertexLayout, PICAJIT_LAYOUT_PACKED};
pub use program::{
    picajit_shader_apply_constants, picajit_shader_create, picajit_shader_destroy,
    picajit_shader_fallback_reason, picajit_shader_get_info, picajit_shader_load_shbin,
    picajit_shader_load_source, picajit_shbin_dvle_count, PicajitBatchPath, PicajitShader,
    PicajitShaderInfo, PicajitShaderKind,
};
pub use run::{picajit_shader_run_batch, picajit_shader_run_batch_ex, PicajitRunStats};
pub use state::{
    picajit_run_options_init, picajit_shader_prepared_entries, PicajitEmitState, PicajitRunOptions,
    PicajitUnitState, PICAJIT_ENTRY_DEFAULT,
};
pub use theia::{
    picajit_theia_program_create, picajit_theia_program_destroy, picajit_theia_program_length,
    picajit_theia_render, picajit_theia_run, picajit_theia_scene_create,
    picajit_theia_scene_destroy, picajit_theia_scene_info, picajit_theia_scene_load,
    PicajitTheiaIo, PicajitTheiaProfile, PicajitTheiaProgram, PicajitTheiaRenderStats,
    PicajitTheiaResult, PicajitTheiaScene, PicajitTheiaState, PicajitTheiaStatus,
    PICAJIT_THEIA_ROWS,
};
pub use uniforms::{
    picajit_uniforms_create, picajit_uniforms_destroy, picajit_uniforms_get_bools,
    picajit_uniforms_get_float, picajit_uniforms_set_bool, picajit_uniforms_set_bools,
    picajit_uniforms_set_float, picajit_uniforms_set_float_f24, picajit_uniforms_set_int,
    PicajitUniforms,
};
pub use usc::{
    picajit_usc_options_init, picajit_usc_program_backend, picajit_usc_program_create,
    picajit_usc_program_create_for, picajit_usc_program_destroy, picajit_usc_run,
    picajit_usc_state_create, picajit_usc_state_destroy, picajit_usc_state_get,
    picajit_usc_state_get_p0, picajit_usc_state_set, picajit_usc_state_set_p0, PicajitUscBank,
    PicajitUscOptions, PicajitUscProgram, PicajitUscRunInfo, PicajitUscState,
};

use std::ffi::c_char;

/// Major version of the C API: changes when a program built against an older header may
/// no longer work with this library.
pub const PICAJIT_API_VERSION_MAJOR: u32 = 1;

/// Minor version of the C API: changes when functions, enum values or trailing struct
/// fields are added.
pub const PICAJIT_API_VERSION_MINOR: u32 = 6;

/// The largest SHBIN image `picajit_shader_load_shbin` and `picajit_shbin_dvle_count` accept,
/// in bytes (16 MiB; a real SHBIN is a few tens of kilobytes).
pub const PICAJIT_MAX_SHBIN_BYTES: usize = 16 << 20;

/// The longest source text `picajit_shader_load_source` accepts, in bytes (64 MiB; a real
/// program's source is a few hundred kilobytes at most).
pub const PICAJIT_MAX_SOURCE_BYTES: usize = 64 << 20;

const _: () = assert!(
    PICAJIT_MAX_SHBIN_BYTES == crate::pica::shbin::MAX_SHBIN_BYTES
        && PICAJIT_MAX_SOURCE_BYTES == crate::pica::asm::MAX_SOURCE_BYTES
);

/// The C API version this header describes: major in bits 16-31, minor in bits 0-15.
/// Compare with `picajit_api_version()` at run time when linking dynamically.
pub const PICAJIT_API_VERSION: u32 = (PICAJIT_API_VERSION_MAJOR << 16) | PICAJIT_API_VERSION_MINOR;

/// The C API version of the library (`PICAJIT_API_VERSION` as the library was built). A
/// program should refuse a library whose major version (bits 16-31) differs from the
/// header's, or whose minor version is lower.
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
    PicajitStatus::name(status).as_ptr()
}

/// The thread-safety section of the module docs (and the header) promises that engines,
/// shaders and uniform sets can be shared between threads; this fails to compile if a change
/// to the engine makes that untrue.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<PicajitEngine>();
    shareable::<PicajitShader>();
    shareable::<PicajitUniforms>();
};
