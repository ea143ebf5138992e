//! Engines: a configuration (engine kind, float model, budget) that shaders and uniform sets
//! are created from.

use crate::capi::args;
use crate::capi::cenum::{c_enum, CEnum};
use crate::capi::engine::{budget_arg, engine_arg, PicajitEngineKind};
use crate::capi::error::{call, PicajitStatus, Result};
use crate::capi::handle::{self, query};
use crate::pica::engine::{EngineConfig, Shader};
use crate::Engine;
use crate::DEFAULT_BUDGET;
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding};
use picajit_interp::pica::isa::{encode, Instruction};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_jit::CodeCache;

/// Float semantics (`PicajitEngineConfig::float_mode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitFloatMode {
    /// The hardware's 24-bit floats (17-bit significands), rounded per
    /// `PicajitEngineConfig::rounding`.
    PICAJIT_FLOAT_F24 = 0,
    /// IEEE binary32 with the PICA's special-value rules (what most emulators do).
    PICAJIT_FLOAT_F32 = 1,
}

/// Rounding of f24 results and f32-to-f24 conversions (`PicajitEngineConfig::rounding`).
/// The hardware's is unknown; toward zero matches the official toolchain.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitRounding {
    /// Truncation.
    PICAJIT_ROUNDING_TOWARD_ZERO = 0,
    /// Round to nearest, ties to even.
    PICAJIT_ROUNDING_NEAREST_EVEN = 1,
}

/// Engine settings. Fill it with `picajit_engine_config_init`, then change fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitEngineConfig {
    /// `sizeof(PicajitEngineConfig)` as the caller compiled it; set by
    /// `picajit_engine_config_init` (the versioning rule is at the top of this header).
    pub struct_size: u32,
    /// A `PicajitEngineKind` value (0: `PICAJIT_ENGINE_JIT`, the default).
    pub engine: u32,
    /// A `PicajitFloatMode` value.
    pub float_mode: u32,
    /// A `PicajitRounding` value (used in f24 mode only, but checked in both).
    pub rounding: u32,
    /// Maximum instructions per invocation before `PICAJIT_ERR_EXEC`; 0 means
    /// `PICAJIT_DEFAULT_BUDGET` (2^20, far above any real shader).
    pub budget: u64,
    /// A `PicajitMaxRule` value: which reading of MAX(0, -inf) every engine implements
    /// (default `PICAJIT_MAX_COMPARE`; docs/float-max.md). Added in API 1.3: a struct from an
    /// older header (ending at `budget`) gets the default.
    pub max_rule: u32,
    /// Ignored (padding up to API 2.0, so never read: older callers left it undefined).
    pub reserved0: u32,
    /// Threads a vertex batch may use, for every shader of this engine and every run that
    /// does not ask otherwise (`PicajitRunOptions::threads` 0): 1, the default, runs every
    /// batch on the calling thread only (an emulator runs its own threads); 0 spreads batches
    /// of at least 8192 vertices over every core on the library's worker threads; N splits a
    /// batch into up to N parts of at least 512 vertices. Results are the same for every
    /// value. Geometry runs always use the calling thread. Added in API 3.0 (structs of 2.x
    /// and earlier get 1).
    pub threads: u32,
    /// Zero.
    pub reserved1: u32,
}

/// The reading of MAX with a -inf second operand (`PicajitEngineConfig::max_rule`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitMaxRule {
    /// `a > b ? a : b`: MAX(0, -inf) = 0, as the hardware test suite expects.
    PICAJIT_MAX_COMPARE = 0,
    /// The hardware table's row: a -inf second operand is the result, MAX(0, -inf) = -inf.
    PICAJIT_MAX_NEG_INF_SECOND = 1,
}

c_enum!(PicajitFloatMode: PICAJIT_FLOAT_F24, PICAJIT_FLOAT_F32);
c_enum!(
    PicajitRounding: PICAJIT_ROUNDING_TOWARD_ZERO,
    PICAJIT_ROUNDING_NEAREST_EVEN
);
c_enum!(PicajitMaxRule: PICAJIT_MAX_COMPARE, PICAJIT_MAX_NEG_INF_SECOND);

/// The size of the struct up to API 1.2 (it ended at `budget`).
const CONFIG_SIZE_1_2: usize = std::mem::offset_of!(PicajitEngineConfig, max_rule);

/// The size of the struct from API 1.3 to 2.x (it ended at `max_rule`, padded to 8 bytes).
const CONFIG_SIZE_2_0: usize = std::mem::offset_of!(PicajitEngineConfig, threads);

const _: () = assert!(CONFIG_SIZE_1_2 == 24 && CONFIG_SIZE_2_0 == 32);

impl PicajitEngineConfig {
    fn default_config() -> PicajitEngineConfig {
        PicajitEngineConfig {
            struct_size: std::mem::size_of::<PicajitEngineConfig>() as u32,
            engine: PicajitEngineKind::PICAJIT_ENGINE_JIT as u32,
            float_mode: PicajitFloatMode::PICAJIT_FLOAT_F24 as u32,
            rounding: PicajitRounding::PICAJIT_ROUNDING_TOWARD_ZERO as u32,
            budget: DEFAULT_BUDGET,
            max_rule: PicajitMaxRule::PICAJIT_MAX_COMPARE as u32,
            reserved0: 0,
            threads: 1,
            reserved1: 0,
        }
    }

    fn to_engine_config(self) -> Result<EngineConfig> {
        let rounding = match PicajitRounding::from_raw(self.rounding, "rounding")? {
            PicajitRounding::PICAJIT_ROUNDING_TOWARD_ZERO => Rounding::TowardZero,
            PicajitRounding::PICAJIT_ROUNDING_NEAREST_EVEN => Rounding::NearestEven,
        };
        let float_mode = match PicajitFloatMode::from_raw(self.float_mode, "float mode")? {
            PicajitFloatMode::PICAJIT_FLOAT_F24 => FloatMode::F24(rounding),
            PicajitFloatMode::PICAJIT_FLOAT_F32 => FloatMode::F32,
        };
        let max_rule = match PicajitMaxRule::from_raw(self.max_rule, "max rule")? {
            PicajitMaxRule::PICAJIT_MAX_COMPARE => MaxRule::Compare,
            PicajitMaxRule::PICAJIT_MAX_NEG_INF_SECOND => MaxRule::NegInfSecond,
        };
        Ok(EngineConfig {
            engine: engine_arg(self.engine)?,
            float_mode,
            budget: budget_arg(self.budget),
            max_rule,
            threads: self.threads as usize,
            ..EngineConfig::default()
        })
    }
}

/// An engine: the settings every shader and uniform set created from it shares, and a cache
/// of compiled code (internally synchronised) so that loading a program again is cheap.
pub struct PicajitEngine {
    pub(crate) config: EngineConfig,
    /// The engine the config resolves to on this host (never `Engine::Jit`).
    engine: Engine,
    pub(crate) cache: CodeCache,
}

impl handle::Handle for PicajitEngine {
    const NAME: &'static str = "engine";
}

/// Fill `config` with the defaults (`PICAJIT_ENGINE_JIT`, f24 with rounding toward zero,
/// `PICAJIT_DEFAULT_BUDGET`, `PICAJIT_MAX_COMPARE`, 1 thread) and set `struct_size`.
///
/// # Safety
/// `config` must be NULL or point to writable memory for one `PicajitEngineConfig`.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_config_init(
    config: *mut PicajitEngineConfig,
) -> PicajitStatus {
    call("picajit_engine_config_init", || {
        // SAFETY: writable by this function's contract.
        unsafe { args::write_out(config, PicajitEngineConfig::default_config(), "config") }
    })
}

/// Create an engine. Fails with `PICAJIT_ERR_ENGINE_UNAVAILABLE` when the config names a
/// JIT that this build or host cannot run. On success `*out` owns the engine; release it
/// with `picajit_engine_destroy`.
///
/// # Safety
/// `config` must be NULL or point to a `PicajitEngineConfig` of at least
/// `config->struct_size` readable bytes; `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_create(
    config: *const PicajitEngineConfig,
    out: *mut *mut PicajitEngine,
) -> PicajitStatus {
    call("picajit_engine_create", || {
        // Fields the caller's struct does not have keep their defaults.
        // SAFETY: `struct_size` readable bytes by this function's contract.
        let raw = unsafe {
            args::read_versioned(
                config,
                "config",
                &[CONFIG_SIZE_1_2, CONFIG_SIZE_2_0],
                "call picajit_engine_config_init",
                PicajitEngineConfig::default_config(),
            )
        }?;
        args::check_ptr(out, "out")?;
        let config = raw.to_engine_config()?;
        // A one-instruction program asks the engine which engine kind this config resolves
        // to (and whether it exists), since the engine decides per shader.
        let end = encode(&Instruction::End).expect("END encodes");
        let probe = Program::new(vec![end], Vec::new(), 0, ShaderKind::Vertex)
            .expect("a one-word program is valid");
        let engine = PicajitEngine {
            engine: Shader::new(probe, &config)?.engine(),
            config,
            cache: CodeCache::new(),
        };
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, engine) }
    })
}

/// Destroy an engine. NULL is ignored; a handle that is not a live engine (destroyed
/// already, of another kind) is `PICAJIT_ERR_INVALID_HANDLE` and frees nothing. Shaders and
/// uniform sets created from it stay valid (they keep their own copy of the settings).
///
/// # Safety
/// No other thread may be using the engine.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_destroy(engine: *mut PicajitEngine) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_engine_destroy", engine, "engine") }
}

/// The engine kind the engine's config resolves to on this host: the JIT for
/// `PICAJIT_ENGINE_JIT` when one exists for the host, the interpreter otherwise (never
/// `PICAJIT_ENGINE_JIT` itself). A particular shader may still fall back to the interpreter;
/// see `PicajitShaderInfo::engine`.
///
/// # Safety
/// `engine` must be NULL or a live engine; `kind` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_kind(
    engine: *const PicajitEngine,
    kind: *mut u32,
) -> PicajitStatus {
    let value = |e: &PicajitEngine| Ok(PicajitEngineKind::from(e.engine) as u32);
    // SAFETY: a live engine and a writable `kind` (or NULL), by this function's contract.
    unsafe { query!("picajit_engine_kind", engine => kind, value) }
}

/// Drop the engine's compiled-code cache. Emulators load the same few programs many times per
/// frame, so the engine keeps the code of every program it compiled (failures included) and
/// reuses it when a shader with the same reachable code and settings is created again; call
/// this when those programs will not come back (a new game), to free the memory. Shaders
/// that exist keep their code.
///
/// # Safety
/// `engine` must be NULL or a live engine.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_clear_cache(engine: *const PicajitEngine) -> PicajitStatus {
    call("picajit_engine_clear_cache", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        engine.cache.clear();
        Ok(())
    })
}

/// The number of programs in the engine's compiled-code cache (see
/// `picajit_engine_clear_cache`).
///
/// # Safety
/// `engine` must be NULL or a live engine; `count` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_cache_size(
    engine: *const PicajitEngine,
    count: *mut usize,
) -> PicajitStatus {
    // SAFETY: a live engine and a writable `count` (or NULL), by this function's contract.
    unsafe { query!("picajit_engine_cache_size", engine => count, |e| Ok(e.cache.len())) }
}
