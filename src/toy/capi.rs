//! TOY's C functions (the made-up instruction set, `made-up-isa` feature): parse a program for
//! an engine, run it on sixteen registers, read how the run ended. Every engine (the reference
//! interpreter, the x86-64 and AArch64 JITs of `picajit_jit::toy`) gives the interpreter's
//! results bit for bit. Registered by `src/capi/mod.rs`, whose conventions these follow.

use crate::capi::args;
use crate::capi::engine::{budget_arg, engine_arg, PicajitEngineKind};
use crate::capi::error::{call, Error, PicajitStatus};
use crate::capi::handle::{self, query};
use crate::toy::engine::Shader;
use picajit_interp::toy::exec::{State, Status};
use picajit_interp::toy::REGS;
use std::ffi::c_char;

/// A TOY program prepared for an engine (immutable; usable from any number of threads at
/// once).
#[derive(Debug)]
pub struct PicajitToyProgram {
    shader: Shader,
}

impl handle::Handle for PicajitToyProgram {
    const NAME: &'static str = "TOY program";
}

/// The registers of a TOY run: r0-r15.
pub const PICAJIT_TOY_REGS: usize = 16;

const _: () = assert!(PICAJIT_TOY_REGS == REGS);

/// `PicajitToyResult.status`: HALT at `pc` executed.
pub const PICAJIT_TOY_HALTED: u32 = 0;
/// `PicajitToyResult.status`: the run reached the end of the program.
pub const PICAJIT_TOY_END: u32 = 1;
/// `PicajitToyResult.status`: the budget ran out before the instruction at `pc`.
pub const PICAJIT_TOY_BUDGET: u32 = 2;

/// How `picajit_toy_run` ended.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitToyResult {
    /// `PICAJIT_TOY_HALTED`, `PICAJIT_TOY_END` or `PICAJIT_TOY_BUDGET`.
    pub status: u32,
    /// The HALT's index, or the next instruction's when the budget ran out (0 at the end).
    pub pc: u32,
    /// Instructions executed.
    pub steps: u64,
}

/// Parse a TOY program (NUL-terminated UTF-8 text) and prepare it for `engine` (a
/// `PicajitEngineKind`; 0 is the host's JIT).
///
/// Errors: `PICAJIT_ERR_ASSEMBLY` for text that does not parse (line and column in the
/// message), `PICAJIT_ERR_ENGINE_UNAVAILABLE` when this host cannot run `engine`'s code,
/// `PICAJIT_ERR_INVALID_ARGUMENT` for an unknown engine.
///
/// # Safety
/// `source` must be NULL or a NUL-terminated string; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_toy_program_create(
    source: *const c_char,
    engine: u32,
    out: *mut *mut PicajitToyProgram,
) -> PicajitStatus {
    call("picajit_toy_program_create", || {
        // SAFETY: NULL or NUL-terminated by this function's contract.
        let text = unsafe { args::text(source, "source") }?;
        args::check_ptr(out, "out")?;
        let engine = engine_arg(engine)?;
        let program = crate::toy::parse(text)
            .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, e))?;
        let shader = Shader::new(program, engine)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, PicajitToyProgram { shader }) }
    })
}

/// The engine a TOY program runs on (a `PicajitEngineKind`: INTERP, X64 or A64) in `*out`.
///
/// # Safety
/// `program` must be NULL or a live program; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_toy_program_engine(
    program: *const PicajitToyProgram,
    out: *mut u32,
) -> PicajitStatus {
    let kind = |p: &PicajitToyProgram| Ok(PicajitEngineKind::from(p.shader.engine()) as u32);
    // SAFETY: a live program and a writable `out` (or NULL), by this function's contract.
    unsafe { query!("picajit_toy_program_engine", program => out, kind) }
}

/// Destroy a TOY program (NULL is ignored).
///
/// # Safety
/// No other thread may be using the program.
#[no_mangle]
pub unsafe extern "C" fn picajit_toy_program_destroy(
    program: *mut PicajitToyProgram,
) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_toy_program_destroy", program, "program") }
}

/// Run a program from its first instruction on `regs` (`PICAJIT_TOY_REGS` words, r0 first,
/// read before and written after the run) with at most `budget` instructions (0:
/// `PICAJIT_DEFAULT_BUDGET`); how it ended goes to `*result`. A TOY run cannot fail.
///
/// # Safety
/// `program` must be NULL or a live program; `regs` NULL or valid for reading and writing
/// `PICAJIT_TOY_REGS` words; `result` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_toy_run(
    program: *const PicajitToyProgram,
    regs: *mut u32,
    budget: u64,
    result: *mut PicajitToyResult,
) -> PicajitStatus {
    call("picajit_toy_run", || {
        // SAFETY: checked by the registry.
        let p = unsafe { handle::get(program, "program") }?;
        args::check_ptr(regs, "regs")?;
        args::check_ptr(result, "result")?;
        // SAFETY: non-NULL and aligned (checked), valid for PICAJIT_TOY_REGS words by this
        // function's contract.
        let words = unsafe { std::slice::from_raw_parts_mut(regs, REGS) };
        let mut state = State::default();
        state.regs.copy_from_slice(words);
        let out = p.shader.run(&mut state, budget_arg(budget));
        words.copy_from_slice(&state.regs);
        let (status, pc) = match out.status {
            Status::Halted { pc } => (PICAJIT_TOY_HALTED, pc),
            Status::End => (PICAJIT_TOY_END, 0),
            Status::Budget { pc } => (PICAJIT_TOY_BUDGET, pc),
        };
        let r = PicajitToyResult {
            status,
            pc,
            steps: out.steps,
        };
        // SAFETY: checked above, writable by this function's contract.
        unsafe { args::write_out(result, r, "result") }
    })
}
