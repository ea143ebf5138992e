//! The engine's compiled-code cache budget and its figures.

use super::PicajitEngine;
use crate::capi::error::{call, PicajitStatus};
use crate::capi::handle::{self, query};

/// The compiled-code cache budget of a new engine, in bytes (64 MiB): the code of programs
/// no shader uses is kept up to this size for shaders created again later, the least
/// recently used dropped past it. A game's shaders take well under 1 MiB in all.
pub const PICAJIT_DEFAULT_CACHE_BUDGET: usize = 64 << 20;

const _: () = assert!(PICAJIT_DEFAULT_CACHE_BUDGET == picajit_jit::DEFAULT_CACHE_BUDGET);

/// Figures of an engine's compiled-code cache (`picajit_engine_get_cache_stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PicajitCacheStats {
    /// Shader creations (and first runs at another entry point) that found their code.
    pub hits: u64,
    /// Those that compiled it.
    pub misses: u64,
    /// Entries dropped to stay within the budget.
    pub evictions: u64,
    /// Programs whose code (or compile failure) the cache now holds.
    pub entries: u64,
    /// Bytes the cache now counts: code (whole pages), metadata, keys.
    pub bytes: u64,
    /// The budget in bytes.
    pub budget: u64,
}

/// Set the engine's compiled-code cache budget in bytes (a new engine has
/// `PICAJIT_DEFAULT_CACHE_BUDGET`). Every program a shader is created from is compiled
/// through the cache, its other entry points and its eight-lane code included, and counted
/// against the budget; when a compilation takes the total past it, the least recently used
/// code that no live shader holds is freed until the total is within 7/8 of the budget (this
/// call does so at once). Code that live shaders hold is never dropped and comes on top, and
/// a destroyed shader's code becomes free to drop. So memory stays bounded by the budget
/// plus the shaders in use however many distinct programs a session loads. 0 keeps no code
/// that no shader holds (every creation of a program not in use compiles).
///
/// # Safety
/// `engine` must be NULL or a live engine.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_set_cache_budget(
    engine: *const PicajitEngine,
    bytes: usize,
) -> PicajitStatus {
    call("picajit_engine_set_cache_budget", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        engine.cache.set_budget(bytes);
        Ok(())
    })
}

/// The engine's compiled-code cache figures: hits, misses, evictions, entries, bytes and
/// budget (see `picajit_engine_set_cache_budget`).
///
/// # Safety
/// `engine` must be NULL or a live engine; `stats` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_get_cache_stats(
    engine: *const PicajitEngine,
    stats: *mut PicajitCacheStats,
) -> PicajitStatus {
    let value = |e: &PicajitEngine| {
        let s = e.cache.stats();
        Ok(PicajitCacheStats {
            hits: s.hits,
            misses: s.misses,
            evictions: s.evictions,
            entries: s.entries as u64,
            bytes: s.bytes as u64,
            budget: s.budget as u64,
        })
    };
    // SAFETY: a live engine and a writable `stats` (or NULL), by this function's contract.
    unsafe { query!("picajit_engine_get_cache_stats", engine => stats, value) }
}
