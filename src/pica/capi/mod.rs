//! PICA200's C functions: engines (settings and a code cache), shaders (programs prepared for
//! an engine), uniform sets, vertex batches over caller buffers, geometry-shader state, and
//! the unit state an emulator keeps. Registered by `src/capi/mod.rs` (the C ABI's module
//! tree, from which the header is generated); the shared conventions are described there.

mod cache;
mod engine;
mod geometry;
mod layout;
mod run;
mod shader;
mod state;
mod uniforms;

pub use cache::{
    picajit_engine_get_cache_stats, picajit_engine_set_cache_budget, PicajitCacheStats,
    PICAJIT_DEFAULT_CACHE_BUDGET,
};
pub use engine::{
    picajit_engine_cache_size, picajit_engine_clear_cache, picajit_engine_config_init,
    picajit_engine_create, picajit_engine_destroy, picajit_engine_kind, PicajitEngine,
    PicajitEngineConfig, PicajitFloatMode, PicajitMaxRule, PicajitRounding,
};
pub use geometry::{
    picajit_geometry_create, picajit_geometry_destroy, picajit_geometry_get_emit_state,
    picajit_geometry_get_state, picajit_geometry_get_unit_state, picajit_geometry_pending,
    picajit_geometry_reset, picajit_geometry_run_point, picajit_geometry_run_points,
    picajit_geometry_run_uniforms, picajit_geometry_set_emit_callback,
    picajit_geometry_set_emit_state, picajit_geometry_set_entry, picajit_geometry_set_mode,
    picajit_geometry_set_state, picajit_geometry_set_unit_state, picajit_geometry_take,
    PicajitEmitFn, PicajitGeometry, PicajitGeometryState,
};
pub use layout::{PicajitFormat, PicajitVertexLayout, PICAJIT_LAYOUT_PACKED, PICAJIT_MAX_BATCH};
pub use run::{picajit_shader_run_batch, picajit_shader_run_batch_ex, PicajitRunStats};
pub use shader::{
    picajit_shader_apply_constants, picajit_shader_create, picajit_shader_destroy,
    picajit_shader_fallback_reason, picajit_shader_get_info, picajit_shader_load_shbin,
    picajit_shader_load_source, picajit_shader_prepare_batches, picajit_shbin_dvle_count,
    PicajitBatchPath, PicajitGsMode, PicajitShader, PicajitShaderInfo, PicajitShaderKind,
};
pub use state::{
    picajit_run_options_init, picajit_shader_prepared_entries, PicajitEmitInfo, PicajitEmitState,
    PicajitRunOptions, PicajitUnitState, PICAJIT_ENTRY_DEFAULT,
};
pub use uniforms::{
    picajit_uniforms_create, picajit_uniforms_destroy, picajit_uniforms_get_bools,
    picajit_uniforms_get_float, picajit_uniforms_set_bool, picajit_uniforms_set_bools,
    picajit_uniforms_set_float, picajit_uniforms_set_float_f24, picajit_uniforms_set_int,
    PicajitUniforms,
};

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

/// The thread-safety section of the conventions (and the header) promises that engines,
/// shaders and uniform sets can be shared between threads; this fails to compile if a change
/// to the engine makes that untrue.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<PicajitEngine>();
    shareable::<PicajitShader>();
    shareable::<PicajitUniforms>();
};
