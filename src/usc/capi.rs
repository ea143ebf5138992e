//! USC's C functions (PowerVR USC, seed 004): compile ISR text for an engine, create a
//! register state for 1-16 instances, set registers per instance, run, read back. Every
//! engine (the reference interpreter, the x86-64 and AArch64 JITs of `picajit_jit::usc`) gives
//! the interpreter's results bit for bit. Registered by `src/capi/mod.rs` (the C ABI's module
//! tree, from which the header is generated), whose conventions these follow.

use crate::capi::args;
use crate::capi::cenum::{c_enum, CEnum};
use crate::capi::engine::{engine_arg, PicajitEngineKind};
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle::{self, query};
use crate::usc::engine::Shader;
use crate::usc::{compile, UscError};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::{State, Status, UscOptions, MAX_INSTANCES};
use std::ffi::c_char;

/// A USC program parsed and checked for the scope, with its machine code when it runs on a
/// JIT (immutable; usable from any number of threads at once).
#[derive(Debug)]
pub struct PicajitUscProgram {
    shader: Shader,
}

/// The registers of 1-16 USC instances: per-instance r, vi, i, idx, p0 and execution mask;
/// shared sh and cf. One thread at a time.
#[derive(Debug)]
pub struct PicajitUscState {
    state: State,
}

impl handle::Handle for PicajitUscProgram {
    const NAME: &'static str = "USC program";
}

impl handle::Handle for PicajitUscState {
    const NAME: &'static str = "USC state";
}

/// USC register banks a caller can set and read.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitUscBank {
    /// Temporaries r0-r247 (per instance).
    PICAJIT_USC_R = 0,
    /// Vertex inputs vi0-vi247 (per instance).
    PICAJIT_USC_VI = 1,
    /// Internal registers i0-i7 (per instance).
    PICAJIT_USC_I = 2,
    /// Shared registers sh0-sh4095 (one for all instances; the instance argument is ignored).
    PICAJIT_USC_SH = 3,
    /// Coefficient registers cf0-cf255 (one for all instances; the instance is ignored).
    PICAJIT_USC_CF = 4,
    /// Index registers idx0-idx1 (per instance).
    PICAJIT_USC_IDX = 5,
}

c_enum!(
    PicajitUscBank: PICAJIT_USC_R,
    PICAJIT_USC_VI,
    PICAJIT_USC_I,
    PICAJIT_USC_SH,
    PICAJIT_USC_CF,
    PICAJIT_USC_IDX,
);

/// Options of `picajit_usc_program_create`: the readings of seed 004 that are selectable
/// (docs/usc.md, "Ambiguities").
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitUscOptions {
    /// Nonzero: FMAD rounds once (fused, the default). Zero: the product is rounded first.
    pub fused_fmad: u32,
    /// Nonzero: CNDLT as its pseudo-code is written; zero (default): as its comments say.
    pub cndlt_literal: u32,
}

/// How `picajit_usc_run` ended.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitUscRunInfo {
    /// 1 when the program ran past its last group, 0 when the budget ran out first.
    pub done: u32,
    /// Groups executed.
    pub steps: u64,
}

/// The register `index` of `bank` (a `PicajitUscBank`) of `instance`: its lane, or 0 for the
/// shared banks (whose instance argument is ignored).
fn register(state: &State, bank: u32, index: u32, instance: u32) -> Result<(Reg, usize)> {
    let bank = match PicajitUscBank::from_raw(bank, "bank")? {
        PicajitUscBank::PICAJIT_USC_R => Bank::R,
        PicajitUscBank::PICAJIT_USC_VI => Bank::Vi,
        PicajitUscBank::PICAJIT_USC_I => Bank::I,
        PicajitUscBank::PICAJIT_USC_SH => Bank::Sh,
        PicajitUscBank::PICAJIT_USC_CF => Bank::Cf,
        PicajitUscBank::PICAJIT_USC_IDX => Bank::Idx,
    };
    if index >= u32::from(bank.count()) {
        return Err(Error::invalid(format!(
            "register {}{index} does not exist ({0}0-{0}{1})",
            bank.prefix(),
            bank.count() - 1
        )));
    }
    let reg = Reg {
        bank,
        index: index as u16,
    };
    let lane = if bank.per_instance() {
        lane(state, instance)?
    } else {
        0
    };
    Ok((reg, lane))
}

fn lane(state: &State, instance: u32) -> Result<usize> {
    if (instance as usize) < state.instances() {
        Ok(instance as usize)
    } else {
        Err(Error::invalid(format!(
            "instance {instance} is past the state's {} instances",
            state.instances()
        )))
    }
}

/// Parse and check a USC program (ISR text, NUL-terminated UTF-8) and prepare it for `engine`
/// (a `PicajitEngineKind`): 0, `PICAJIT_ENGINE_JIT`, is the host's JIT where this host runs
/// it (x86-64 with AVX2 and FMA, AArch64), else the interpreter; INTERP the reference
/// interpreter; X64 and A64 that JIT (A64 on other hosts only in builds with the `a64-emu`
/// feature, under the emulator). `options` may be NULL for the defaults.
///
/// Errors: `PICAJIT_ERR_ASSEMBLY` for text that does not parse (line and column in the
/// message), `PICAJIT_ERR_PROGRAM` for a program outside the scope ("not supported: NAME")
/// or with a branch to a missing group, `PICAJIT_ERR_ENGINE_UNAVAILABLE` when this host
/// cannot run `engine`'s code, `PICAJIT_ERR_INVALID_ARGUMENT` for an unknown engine.
///
/// # Safety
/// `source` must be NULL or a NUL-terminated string; `options` NULL or readable; `out` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_program_create(
    source: *const c_char,
    options: *const PicajitUscOptions,
    engine: u32,
    out: *mut *mut PicajitUscProgram,
) -> PicajitStatus {
    call("picajit_usc_program_create", || {
        // SAFETY: NULL or NUL-terminated by this function's contract.
        let text = unsafe { args::text(source, "source") }?;
        // SAFETY: NULL or readable by this function's contract.
        let opts = match unsafe { args::borrow_optional(options, "options") }? {
            None => UscOptions::default(),
            Some(o) => UscOptions::default()
                .with_fused_fmad(o.fused_fmad != 0)
                .with_cndlt_literal(o.cndlt_literal != 0),
        };
        args::check_ptr(out, "out")?;
        let engine = engine_arg(engine)?;
        let prepared = compile(text, opts).map_err(|e| match e {
            UscError::Parse(e) => Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, e),
            UscError::Prepare(e) => Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e),
        })?;
        let shader = Shader::new(prepared, engine)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, PicajitUscProgram { shader }) }
    })
}

/// The engine a USC program runs on (a `PicajitEngineKind`: INTERP, X64 or A64) in `*out`.
///
/// # Safety
/// `program` must be NULL or a live program; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_program_engine(
    program: *const PicajitUscProgram,
    out: *mut u32,
) -> PicajitStatus {
    let kind = |p: &PicajitUscProgram| Ok(PicajitEngineKind::from(p.shader.engine()) as u32);
    // SAFETY: a live program and a writable `out` (or NULL), by this function's contract.
    unsafe { query!("picajit_usc_program_engine", program => out, kind) }
}

/// Fill `options` with the defaults (fused FMAD, CNDLT as commented).
///
/// # Safety
/// `options` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_options_init(
    options: *mut PicajitUscOptions,
) -> PicajitStatus {
    call("picajit_usc_options_init", || {
        let d = UscOptions::default();
        let o = PicajitUscOptions {
            fused_fmad: u32::from(d.fused_fmad),
            cndlt_literal: u32::from(d.cndlt_literal),
        };
        // SAFETY: writable by this function's contract.
        unsafe { args::write_out(options, o, "options") }
    })
}

/// Destroy a USC program (NULL is ignored).
///
/// # Safety
/// No other thread may be using the program.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_program_destroy(
    program: *mut PicajitUscProgram,
) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_usc_program_destroy", program, "program") }
}

/// Create the registers of `instances` (1-16) instances: all zero, p0 clear, every
/// instance running.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_create(
    instances: u32,
    out: *mut *mut PicajitUscState,
) -> PicajitStatus {
    call("picajit_usc_state_create", || {
        args::check_ptr(out, "out")?;
        if !(1..=MAX_INSTANCES as u32).contains(&instances) {
            return Err(Error::invalid(format!(
                "{instances} instances: 1 to {MAX_INSTANCES}"
            )));
        }
        let state = State::new(instances as usize).map_err(Error::invalid)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, PicajitUscState { state }) }
    })
}

/// Destroy a USC state (NULL is ignored).
///
/// # Safety
/// No other thread may be using the state.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_destroy(state: *mut PicajitUscState) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_usc_state_destroy", state, "state") }
}

/// Set register `index` of `bank` (a `PicajitUscBank`) for one instance (shared banks: for
/// all).
///
/// # Safety
/// `state` must be NULL or a live state no other thread uses.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_set(
    state: *mut PicajitUscState,
    bank: u32,
    index: u32,
    instance: u32,
    value: u32,
) -> PicajitStatus {
    call("picajit_usc_state_set", || {
        // SAFETY: a live state used by this thread only, by this function's contract.
        let s = unsafe { handle::get_mut(state, "state") }?;
        let (r, l) = register(&s.state, bank, index, instance)?;
        s.state.set(r, l, value);
        Ok(())
    })
}

/// Read register `index` of `bank` for one instance into `*value`.
///
/// # Safety
/// `state` must be NULL or a live state no other thread writes; `value` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_get(
    state: *const PicajitUscState,
    bank: u32,
    index: u32,
    instance: u32,
    value: *mut u32,
) -> PicajitStatus {
    let read = |s: &PicajitUscState| {
        let (r, l) = register(&s.state, bank, index, instance)?;
        Ok(s.state.get(r, l))
    };
    // SAFETY: a live state and a writable `value` (or NULL), by this function's contract.
    unsafe { query!("picajit_usc_state_get", state => value, read) }
}

/// Set p0 of one instance (nonzero: set).
///
/// # Safety
/// `state` must be NULL or a live state no other thread uses.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_set_p0(
    state: *mut PicajitUscState,
    instance: u32,
    value: u32,
) -> PicajitStatus {
    call("picajit_usc_state_set_p0", || {
        // SAFETY: a live state used by this thread only, by this function's contract.
        let s = unsafe { handle::get_mut(state, "state") }?;
        let l = lane(&s.state, instance)?;
        s.state.set_p0(l, value != 0);
        Ok(())
    })
}

/// Read p0 of one instance (0 or 1) into `*value`.
///
/// # Safety
/// `state` must be NULL or a live state no other thread writes; `value` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_get_p0(
    state: *const PicajitUscState,
    instance: u32,
    value: *mut u32,
) -> PicajitStatus {
    let read = |s: &PicajitUscState| Ok(u32::from(s.state.p0[lane(&s.state, instance)?]));
    // SAFETY: a live state and a writable `value` (or NULL), by this function's contract.
    unsafe { query!("picajit_usc_state_get_p0", state => value, read) }
}

/// Run `program` from its first group on `state` until it runs past its last group or
/// `budget` groups have executed (0: `PICAJIT_DEFAULT_BUDGET`; `info->done` says which).
/// `info` may be NULL.
///
/// Errors: `PICAJIT_ERR_EXEC` when a link address names no group (CNDSETL, LAPC).
///
/// # Safety
/// `program` must be NULL or a live program; `state` NULL or a live state no other thread
/// uses; `info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_run(
    program: *const PicajitUscProgram,
    state: *mut PicajitUscState,
    budget: u64,
    info: *mut PicajitUscRunInfo,
) -> PicajitStatus {
    call("picajit_usc_run", || {
        // SAFETY: a live program by this function's contract.
        let p = unsafe { handle::get(program, "program") }?;
        // SAFETY: a live state used by this thread only, by this function's contract.
        let s = unsafe { handle::get_mut(state, "state") }?;
        args::check_optional(info, "info")?;
        // The budget: 0 stands for the default here as everywhere.
        let out = p.shader.run(&mut s.state, budget)?;
        let i = PicajitUscRunInfo {
            done: u32::from(out.status == Status::Done),
            steps: out.steps,
        };
        // SAFETY: NULL or writable by this function's contract.
        unsafe { args::write_optional(info, i, "info") }
    })
}

/// The thread-safety section of the conventions (`src/capi/mod.rs`) promises that programs
/// can be shared between threads; this fails to compile if that becomes untrue.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<PicajitUscProgram>();
};
