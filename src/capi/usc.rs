//! PowerVR USC programs (seed 004) through the C ABI: compile ISR text, create a register
//! state for 1-16 instances, set registers per instance, run, read back. Same conventions as
//! the PICA200 functions (statuses, last error, checked handles, no panic across the
//! boundary). A program runs on the reference interpreter (`picajit_usc_program_create`) or
//! on the engine `picajit_usc_program_create_for` picks: the x86-64 or AArch64 JIT
//! (`picajit_jit::usc`), bit-exact with the interpreter.

use super::engine::PicajitBackend;
use super::error::{self, call, Error, PicajitStatus, Result};
use super::handle;
use crate::usc::{compile, UscError};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::{Prepared, State, Status, UscOptions, MAX_INSTANCES};
use picajit_jit::usc::UscCode;
use picajit_jit::Backend;
use std::ffi::{c_char, CStr};

/// A USC program parsed and checked for the scope, with its machine code when it runs on a
/// JIT (immutable; usable from any number of threads at once).
#[derive(Debug)]
pub struct PicajitUscProgram {
    prepared: Prepared,
    code: Option<UscCode>,
}

/// The registers of 1-16 USC instances: per-instance r, vi, i, idx, p0 and execution mask;
/// shared sh and cf. One thread at a time.
#[derive(Debug)]
pub struct PicajitUscState {
    state: State,
}

impl handle::Handle for PicajitUscProgram {
    const KIND: usize = 10;
    const NAME: &'static str = "USC program";
}

impl handle::Handle for PicajitUscState {
    const KIND: usize = 11;
    const NAME: &'static str = "USC state";
}

/// USC register banks a caller can set and read.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
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

fn reg(bank: u32, index: u32) -> Result<Reg> {
    let bank = match bank {
        0 => Bank::R,
        1 => Bank::Vi,
        2 => Bank::I,
        3 => Bank::Sh,
        4 => Bank::Cf,
        5 => Bank::Idx,
        _ => {
            return Err(Error::invalid(format!(
                "bank {bank} is not a PicajitUscBank"
            )))
        }
    };
    if index >= u32::from(bank.count()) {
        return Err(Error::invalid(format!(
            "register {}{index} does not exist ({0}0-{0}{1})",
            bank.prefix(),
            bank.count() - 1
        )));
    }
    Ok(Reg {
        bank,
        index: index as u16,
    })
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

/// Parse and check a USC program (ISR text, NUL-terminated UTF-8) to run on the reference
/// interpreter. `options` may be NULL for the defaults. The same as
/// `picajit_usc_program_create_for` with `PICAJIT_BACKEND_INTERPRETER`.
///
/// Errors: `PICAJIT_ERR_ASSEMBLY` for text that does not parse (line and column in the
/// message), `PICAJIT_ERR_PROGRAM` for a program outside the scope ("not supported: NAME")
/// or with a branch to a missing group.
///
/// # Safety
/// `source` must be NULL or a NUL-terminated string; `options` NULL or readable; `out` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_program_create(
    source: *const c_char,
    options: *const PicajitUscOptions,
    out: *mut *mut PicajitUscProgram,
) -> PicajitStatus {
    call("picajit_usc_program_create", || {
        // SAFETY: forwarded contract.
        unsafe {
            create(
                source,
                options,
                PicajitBackend::PICAJIT_BACKEND_INTERPRETER as u32,
                out,
            )
        }
    })
}

/// Parse and check a USC program as `picajit_usc_program_create` does and compile it for
/// `backend` (a `PicajitBackend`): AUTO is the host's JIT where this host runs it (x86-64
/// with AVX2 and FMA, AArch64), else the interpreter; INTERPRETER the reference interpreter;
/// X64 and A64 that JIT (A64 on other hosts only in builds with the `a64-emu` feature, under
/// the emulator). Every engine gives the interpreter's results bit for bit. Added in API 1.6.
///
/// Errors: as `picajit_usc_program_create`; `PICAJIT_ERR_BACKEND_UNAVAILABLE` when this
/// host cannot run `backend`'s code; `PICAJIT_ERR_INVALID_ARGUMENT` for an unknown value.
///
/// # Safety
/// `source` must be NULL or a NUL-terminated string; `options` NULL or readable; `out` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_program_create_for(
    source: *const c_char,
    options: *const PicajitUscOptions,
    backend: u32,
    out: *mut *mut PicajitUscProgram,
) -> PicajitStatus {
    call("picajit_usc_program_create_for", || {
        // SAFETY: forwarded contract.
        unsafe { create(source, options, backend, out) }
    })
}

/// The engine a USC program runs on (a `PicajitBackend`: INTERPRETER, X64 or A64) in
/// `*out`. Added in API 1.6.
///
/// # Safety
/// `program` must be NULL or a live program; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_program_backend(
    program: *const PicajitUscProgram,
    out: *mut u32,
) -> PicajitStatus {
    call("picajit_usc_program_backend", || {
        // SAFETY: a live program by this function's contract.
        let p = unsafe { handle::get(program, "program") }?;
        let b = match p.code.as_ref().map(UscCode::backend) {
            None => PicajitBackend::PICAJIT_BACKEND_INTERPRETER,
            Some(Backend::X64) => PicajitBackend::PICAJIT_BACKEND_X64,
            Some(Backend::A64) => PicajitBackend::PICAJIT_BACKEND_A64,
        };
        // SAFETY: writable by this function's contract.
        unsafe { error::write_out(out, b as u32, "out") }
    })
}

/// The host's USC JIT, where this host runs it.
fn host_backend() -> Option<Backend> {
    match Backend::host()? {
        Backend::X64 if picajit_jit::usc::x64::available() => Some(Backend::X64),
        Backend::A64 if picajit_jit::usc::a64::available() => Some(Backend::A64),
        _ => None,
    }
}

/// # Safety
/// As `picajit_usc_program_create_for`.
unsafe fn create(
    source: *const c_char,
    options: *const PicajitUscOptions,
    backend: u32,
    out: *mut *mut PicajitUscProgram,
) -> Result<()> {
    error::check_ptr(source, "source")?;
    // SAFETY: non-NULL (checked above) and NUL-terminated by the caller's contract.
    let text = unsafe { CStr::from_ptr(source) }
        .to_str()
        .map_err(|e| Error::invalid(format!("source is not UTF-8: {e}")))?;
    let opts = if options.is_null() {
        UscOptions::default()
    } else {
        // SAFETY: non-NULL and readable by the caller's contract.
        let o = unsafe { error::borrow(options, "options") }?;
        UscOptions {
            fused_fmad: o.fused_fmad != 0,
            cndlt_literal: o.cndlt_literal != 0,
        }
    };
    error::check_ptr(out, "out")?;
    let backend = match backend {
        b if b == PicajitBackend::PICAJIT_BACKEND_INTERPRETER as u32 => None,
        b if b == PicajitBackend::PICAJIT_BACKEND_AUTO as u32 => host_backend(),
        b if b == PicajitBackend::PICAJIT_BACKEND_X64 as u32 => Some(Backend::X64),
        b if b == PicajitBackend::PICAJIT_BACKEND_A64 as u32 => Some(Backend::A64),
        b => {
            return Err(Error::invalid(format!(
                "backend {b} is not a PicajitBackend"
            )))
        }
    };
    let prepared = compile(text, opts).map_err(|e| match e {
        UscError::Parse(p) => Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, p),
        UscError::Prepare(p) => Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, p),
    })?;
    let code = match backend {
        None => None,
        Some(b) => Some(
            picajit_jit::usc::compile(&prepared, b)
                .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_BACKEND_UNAVAILABLE, e))?,
        ),
    };
    let h = handle::create(PicajitUscProgram { prepared, code })?;
    // SAFETY: `out` is writable by the caller's contract (checked non-NULL above).
    unsafe { error::write_out(out, h, "out") }
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
        unsafe { error::write_out(options, o, "options") }
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
    call("picajit_usc_program_destroy", || {
        // SAFETY: checked by the registry; no concurrent user by this function's contract.
        unsafe { handle::destroy(program, "program") }
    })
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
        error::check_ptr(out, "out")?;
        if !(1..=MAX_INSTANCES as u32).contains(&instances) {
            return Err(Error::invalid(format!(
                "{instances} instances: 1 to {MAX_INSTANCES}"
            )));
        }
        let state = State::new(instances as usize).map_err(Error::invalid)?;
        let h = handle::create(PicajitUscState { state })?;
        // SAFETY: `out` is writable by this function's contract (checked non-NULL above).
        unsafe { error::write_out(out, h, "out") }
    })
}

/// Destroy a USC state (NULL is ignored).
///
/// # Safety
/// No other thread may be using the state.
#[no_mangle]
pub unsafe extern "C" fn picajit_usc_state_destroy(state: *mut PicajitUscState) -> PicajitStatus {
    call("picajit_usc_state_destroy", || {
        // SAFETY: checked by the registry; no concurrent user by this function's contract.
        unsafe { handle::destroy(state, "state") }
    })
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
        let r = reg(bank, index)?;
        let l = if r.bank.per_instance() {
            lane(&s.state, instance)?
        } else {
            0
        };
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
    call("picajit_usc_state_get", || {
        // SAFETY: a live state by this function's contract.
        let s = unsafe { handle::get(state, "state") }?;
        let r = reg(bank, index)?;
        let l = if r.bank.per_instance() {
            lane(&s.state, instance)?
        } else {
            0
        };
        // SAFETY: writable by this function's contract.
        unsafe { error::write_out(value, s.state.get(r, l), "value") }
    })
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
    call("picajit_usc_state_get_p0", || {
        // SAFETY: a live state by this function's contract.
        let s = unsafe { handle::get(state, "state") }?;
        let l = lane(&s.state, instance)?;
        // SAFETY: writable by this function's contract.
        unsafe { error::write_out(value, u32::from(s.state.p0[l]), "value") }
    })
}

/// Run `program` from its first group on `state` until it runs past its last group or
/// `budget` groups have executed (`info->done` says which). `info` may be NULL.
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
        if !info.is_null() {
            error::check_ptr(info, "info")?;
        }
        let out = match &p.code {
            Some(code) => code.run(&p.prepared, &mut s.state, budget),
            None => p
                .prepared
                .run(&mut s.state, budget)
                .map_err(picajit_jit::Error::Usc),
        }
        .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_EXEC, e))?;
        if !info.is_null() {
            let i = PicajitUscRunInfo {
                done: u32::from(out.status == Status::Done),
                steps: out.steps,
            };
            // SAFETY: non-NULL and writable by this function's contract.
            unsafe { error::write_out(info, i, "info") }?;
        }
        Ok(())
    })
}
