//! Engines: a configuration (backend, float model, budget) that shaders and uniform sets are
//! created from.

use super::error::{self, call, Error, PicajitStatus, Result};
use super::handle;
use crate::pica::engine::{EngineConfig, Shader};
use crate::Engine;
use picajit_interp::pica::exec::DEFAULT_BUDGET;
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding};
use picajit_interp::pica::isa::{encode, Instruction};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_jit::CodeCache;

/// Which engine runs shaders (`PicajitEngineConfig::backend`), and which one a shader or
/// engine actually uses (`picajit_engine_backend`, `PicajitShaderInfo::backend`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitBackend {
    /// Request only: the host's JIT for every program it can reproduce exactly, the
    /// interpreter for the others.
    PICAJIT_BACKEND_AUTO = 0,
    /// The reference interpreter.
    PICAJIT_BACKEND_INTERPRETER = 1,
    /// The x86-64 JIT (programs it cannot reproduce fall back to the interpreter).
    PICAJIT_BACKEND_X64 = 2,
    /// The AArch64 JIT (programs it cannot reproduce fall back to the interpreter).
    PICAJIT_BACKEND_A64 = 3,
}

impl PicajitBackend {
    pub(crate) fn of(active: Engine) -> PicajitBackend {
        match active {
            Engine::Jit => PicajitBackend::PICAJIT_BACKEND_AUTO,
            Engine::Interp => PicajitBackend::PICAJIT_BACKEND_INTERPRETER,
            Engine::X64 => PicajitBackend::PICAJIT_BACKEND_X64,
            Engine::A64 => PicajitBackend::PICAJIT_BACKEND_A64,
        }
    }
}

/// Float semantics (`PicajitEngineConfig::float_mode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
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
#[allow(non_camel_case_types)]
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
    /// `picajit_engine_config_init`. Lets later library versions add fields at the end and
    /// still accept structs from programs built against this header.
    pub struct_size: u32,
    /// A `PicajitBackend` value.
    pub backend: u32,
    /// A `PicajitFloatMode` value.
    pub float_mode: u32,
    /// A `PicajitRounding` value (used in f24 mode only, but checked in both).
    pub rounding: u32,
    /// Maximum instructions per invocation before `PICAJIT_ERR_EXEC`; 0 means the default
    /// (2^20, far above any real shader).
    pub budget: u64,
    /// A `PicajitMaxRule` value: which reading of MAX(0, -inf) every engine implements
    /// (default `PICAJIT_MAX_COMPARE`; docs/float-max.md). Added in API 1.3: a struct from an
    /// older header (ending at `budget`) gets the default.
    pub max_rule: u32,
}

/// The reading of MAX with a -inf second operand (`PicajitEngineConfig::max_rule`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitMaxRule {
    /// `a > b ? a : b`: MAX(0, -inf) = 0, as the hardware test suite expects.
    PICAJIT_MAX_COMPARE = 0,
    /// The hardware table's row: a -inf second operand is the result, MAX(0, -inf) = -inf.
    PICAJIT_MAX_NEG_INF_SECOND = 1,
}

const CONFIG_SIZE: u32 = std::mem::size_of::<PicajitEngineConfig>() as u32;
/// The size of the struct up to API 1.2 (it ended at `budget`).
const CONFIG_SIZE_1_2: u32 = std::mem::offset_of!(PicajitEngineConfig, max_rule) as u32;

impl PicajitEngineConfig {
    fn default_config() -> PicajitEngineConfig {
        PicajitEngineConfig {
            struct_size: CONFIG_SIZE,
            backend: PicajitBackend::PICAJIT_BACKEND_AUTO as u32,
            float_mode: PicajitFloatMode::PICAJIT_FLOAT_F24 as u32,
            rounding: PicajitRounding::PICAJIT_ROUNDING_TOWARD_ZERO as u32,
            budget: DEFAULT_BUDGET,
            max_rule: PicajitMaxRule::PICAJIT_MAX_COMPARE as u32,
        }
    }

    fn to_engine_config(self) -> Result<EngineConfig> {
        let backend = match self.backend {
            0 => Engine::Jit,
            1 => Engine::Interp,
            2 => Engine::X64,
            3 => Engine::A64,
            v => return Err(Error::invalid(format!("unknown backend {v}"))),
        };
        let rounding = match self.rounding {
            0 => Rounding::TowardZero,
            1 => Rounding::NearestEven,
            v => return Err(Error::invalid(format!("unknown rounding {v}"))),
        };
        let float_mode = match self.float_mode {
            0 => FloatMode::F24(rounding),
            1 => FloatMode::F32,
            v => return Err(Error::invalid(format!("unknown float mode {v}"))),
        };
        let budget = crate::budget_or_default(self.budget);
        let max_rule = match self.max_rule {
            0 => MaxRule::Compare,
            1 => MaxRule::NegInfSecond,
            v => return Err(Error::invalid(format!("unknown max rule {v}"))),
        };
        Ok(EngineConfig {
            engine: backend,
            float_mode,
            budget,
            max_rule,
            ..EngineConfig::default()
        })
    }
}

/// An engine: the settings every shader and uniform set created from it shares, and a cache
/// of compiled code (internally synchronised) so that loading a program again is cheap.
pub struct PicajitEngine {
    pub(crate) config: EngineConfig,
    backend: Engine,
    pub(crate) cache: CodeCache,
}

impl handle::Handle for PicajitEngine {
    const KIND: usize = 1;
    const NAME: &'static str = "engine";
}

pub(crate) fn engine_error(e: crate::Error) -> Error {
    let status = match e {
        crate::Error::Unavailable(_) => PicajitStatus::PICAJIT_ERR_BACKEND_UNAVAILABLE,
        crate::Error::NoSuchDvle { .. } => PicajitStatus::PICAJIT_ERR_SHBIN,
        _ => PicajitStatus::PICAJIT_ERR_PROGRAM,
    };
    Error::new(status, e)
}

/// Fill `config` with the defaults (auto backend, f24 with rounding toward zero, default
/// budget) and set `struct_size`.
///
/// # Safety
/// `config` must be NULL or point to writable memory for one `PicajitEngineConfig`.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_config_init(
    config: *mut PicajitEngineConfig,
) -> PicajitStatus {
    call("picajit_engine_config_init", || {
        // SAFETY: writable by this function's contract.
        unsafe { error::write_out(config, PicajitEngineConfig::default_config(), "config") }
    })
}

/// Create an engine. Fails with `PICAJIT_ERR_BACKEND_UNAVAILABLE` when the config names a
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
        error::check_ptr(config, "config")?;
        // SAFETY: non-NULL and aligned (checked above); `struct_size` is the first field of
        // every version of the struct, so reading it alone is in bounds.
        let struct_size = unsafe { config.cast::<u32>().read() };
        if struct_size < CONFIG_SIZE_1_2 {
            return Err(Error::invalid(format!(
                "config->struct_size is {struct_size} but this library needs at least \
                 {CONFIG_SIZE_1_2} (call picajit_engine_config_init)"
            )));
        }
        // Fields the caller's struct does not have keep their defaults.
        let mut raw = PicajitEngineConfig::default_config();
        // SAFETY: `struct_size` readable bytes by this function's contract, of which the
        // first min(struct_size, CONFIG_SIZE) are copied into a local of CONFIG_SIZE bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                config.cast::<u8>(),
                (&mut raw as *mut PicajitEngineConfig).cast::<u8>(),
                struct_size.min(CONFIG_SIZE) as usize,
            )
        };
        error::check_ptr(out, "out")?;
        let config = raw.to_engine_config()?;
        // A one-instruction program asks the engine which backend this config resolves to
        // (and whether it exists), since the engine decides per shader.
        let end = encode(&Instruction::End).expect("END encodes");
        let probe = Program::new(vec![end], Vec::new(), 0, ShaderKind::Vertex)
            .expect("a one-word program is valid");
        let backend = Shader::new(probe, &config).map_err(engine_error)?.engine();
        let engine = handle::create(PicajitEngine {
            config,
            backend,
            cache: CodeCache::new(),
        })?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { error::write_out(out, engine, "out") }
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
    call("picajit_engine_destroy", || {
        // SAFETY: checked by the registry; no concurrent user by this function's contract.
        unsafe { handle::destroy(engine, "engine") }
    })
}

/// The backend that the engine's config resolves to on this host: the JIT for `AUTO` when
/// one exists for the host, the interpreter otherwise (never `PICAJIT_BACKEND_AUTO`). A
/// particular shader may still fall back to the interpreter; see `PicajitShaderInfo`.
///
/// # Safety
/// `engine` must be NULL or a live engine; `backend` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_engine_backend(
    engine: *const PicajitEngine,
    backend: *mut u32,
) -> PicajitStatus {
    call("picajit_engine_backend", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        // SAFETY: writable by this function's contract.
        unsafe {
            error::write_out(
                backend,
                PicajitBackend::of(engine.backend) as u32,
                "backend",
            )
        }
    })
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
    call("picajit_engine_cache_size", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        // SAFETY: writable by this function's contract.
        unsafe { error::write_out(count, engine.cache.len(), "count") }
    })
}
