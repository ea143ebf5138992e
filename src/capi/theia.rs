//! THEIA programs through the C ABI: create a program from assembler source or a `.mem`
//! image for an engine and profile, run it from an instruction index with the register state
//! in a caller-owned struct, read the outcome. Same conventions as the PICA200 functions
//! (status codes, `picajit_last_error`, NULL and range checks, no panic across the boundary).

use super::engine::PicajitBackend;
use super::error::{self, call, check_ptr, Error, PicajitStatus, Result};
use super::handle;
use crate::theia::render::{readmemh, render, Scene, MAX_CORES};
use crate::theia::{asm, MemImage};
use crate::Engine;
use picajit_interp::theia::exec::{self, Code, Io, State, Status};
use picajit_interp::theia::table::ENTRY_POINTS;
use picajit_interp::theia::Profile;
use picajit_jit::theia::ctx::TheiaCtx;
use picajit_jit::theia::{compile, TheiaCompiled};
use picajit_jit::Backend;
use std::ffi::{c_char, c_void, CStr};

/// Which reading of THEIA a program follows (see docs/theia.md).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitTheiaProfile {
    /// The RTL of the original project (the default).
    PICAJIT_THEIA_PROFILE_RTL = 0,
    /// The programming manual.
    PICAJIT_THEIA_PROFILE_MANUAL = 1,
}

/// How a run ended.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitTheiaStatus {
    /// RETURN executed; `return_value` holds its value.
    PICAJIT_THEIA_RETURNED = 0,
    /// The step budget ran out before the instruction at `pc`.
    PICAJIT_THEIA_BUDGET = 1,
    /// The instruction at `pc` never completes in this profile (the unit hangs).
    PICAJIT_THEIA_STALLED = 2,
}

/// Register rows of [`PicajitTheiaState`] (the manual profile's 132; the rtl profile uses
/// rows 0-127 and leaves the others untouched).
pub const PICAJIT_THEIA_ROWS: usize = 132;

/// The execution unit's state, owned by the caller, read and written by
/// `picajit_theia_run`: registers as `regs[address][x, y, z]` (signed Q15.17 or integers,
/// as raw 32-bit patterns), the ALU's result flops and the CALL/RET return address. Zero it
/// for a unit after reset.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitTheiaState {
    pub regs: [[u32; 3]; PICAJIT_THEIA_ROWS],
    pub last_result: [u32; 3],
    pub return_addr: u32,
}

/// The outcome of `picajit_theia_run`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PicajitTheiaResult {
    /// A `PicajitTheiaStatus` value.
    pub status: u32,
    /// RETURN's value (bit 0 of the instruction), 0 or 1; 0 unless returned.
    pub return_value: u32,
    /// Instructions executed, RETURN included.
    pub steps: u64,
    /// For BUDGET and STALLED: the code address of the instruction not executed.
    pub pc: u32,
}

/// Output-memory writes (OMWRITE) and texture reads (TMREAD) of a run. Either callback may
/// be NULL: writes are then dropped and reads give zeros.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitTheiaIo {
    pub user: *mut c_void,
    /// OMWRITE: address vector (source 1) and data (source 2).
    pub omem_write:
        Option<unsafe extern "C" fn(user: *mut c_void, addr: *const u32, data: *const u32)>,
    /// TMREAD: fill `out` (three words) with the texel at the address vector.
    pub tmem_read: Option<unsafe extern "C" fn(user: *mut c_void, addr: *const u32, out: *mut u32)>,
}

/// A THEIA program prepared for an engine. Immutable after creation; may be run from
/// several threads at once, each with its own state.
pub struct PicajitTheiaProgram {
    code: Code,
    profile: Profile,
    compiled: Option<TheiaCompiled>,
}

impl handle::Handle for PicajitTheiaProgram {
    const KIND: usize = 12;
    const NAME: &'static str = "THEIA program";
}

impl std::fmt::Debug for PicajitTheiaProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PicajitTheiaProgram({:?})", self.compiled)
    }
}

struct CIo(PicajitTheiaIo);

impl Io for CIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        if let Some(f) = self.0.omem_write {
            // SAFETY: the caller of picajit_theia_run promised a callable function taking
            // `user` and two readable 3-word arrays; both live for the call.
            unsafe { f(self.0.user, addr.as_ptr(), data.as_ptr()) }
        }
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        let mut out = [0u32; 3];
        if let Some(f) = self.0.tmem_read {
            // SAFETY: as above; `out` is a writable 3-word array.
            unsafe { f(self.0.user, addr.as_ptr(), out.as_mut_ptr()) }
        }
        out
    }
}

fn profile_of(raw: u32) -> Result<Profile> {
    match raw {
        0 => Ok(Profile::Rtl),
        1 => Ok(Profile::Manual),
        _ => Err(Error::invalid(format!(
            "profile {raw} is not a PicajitTheiaProfile"
        ))),
    }
}

/// Reads a NUL-terminated string argument.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    check_ptr(p, what)?;
    // SAFETY: non-NULL, NUL-terminated by precondition.
    let s = unsafe { CStr::from_ptr(p) };
    // The Rust entries check their own limits too; checking here first keeps the status
    // INVALID_ARGUMENT for every over-long text, as it was before those limits existed.
    let limit = asm::MAX_SOURCE_BYTES.max(crate::theia::mem::MAX_TEXT_BYTES);
    if s.to_bytes().len() > limit {
        return Err(Error::invalid(format!(
            "{what} is longer than {limit} bytes"
        )));
    }
    s.to_str()
        .map_err(|_| Error::invalid(format!("{what} is not UTF-8")))
}

/// Creates a THEIA program from assembler source (the original assembler's syntax) or, with
/// `is_mem` non-zero, from the text of a `.mem` file, for `backend` (a `PicajitBackend`:
/// AUTO picks the host's JIT, INTERPRETER the reference interpreter) and `profile` (a
/// `PicajitTheiaProfile`). Errors: PICAJIT_ERR_ASSEMBLY (source or `.mem` text rejected),
/// PICAJIT_ERR_BACKEND_UNAVAILABLE, PICAJIT_ERR_INVALID_ARGUMENT, PICAJIT_ERR_NULL.
///
/// # Safety
/// `text` must be NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_create(
    text_ptr: *const c_char,
    is_mem: u32,
    backend: u32,
    profile: u32,
    out: *mut *mut PicajitTheiaProgram,
) -> PicajitStatus {
    call("picajit_theia_program_create", || {
        check_ptr(out, "out")?;
        // SAFETY: forwarded precondition.
        let src = unsafe { text(text_ptr, "text") }?;
        let profile = profile_of(profile)?;
        let imem = if is_mem != 0 {
            MemImage::parse(src)
                .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, e))?
                .words
        } else {
            asm::assemble(src)
                .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, e))?
                .imem()
        };
        let code = Code::imem(imem);
        let backend = match backend {
            b if b == PicajitBackend::PICAJIT_BACKEND_INTERPRETER as u32 => None,
            b if b == PicajitBackend::PICAJIT_BACKEND_AUTO as u32 => Backend::host(),
            b if b == PicajitBackend::PICAJIT_BACKEND_X64 as u32 => Some(Backend::X64),
            b if b == PicajitBackend::PICAJIT_BACKEND_A64 as u32 => Some(Backend::A64),
            b => {
                return Err(Error::invalid(format!(
                    "backend {b} is not a PicajitBackend"
                )))
            }
        };
        // Entry points: every routine of the table that is in this file, and the first
        // instruction; runs may start elsewhere (the interpreter then takes them).
        let mut entries: Vec<u16> = code
            .imem
            .iter()
            .take(ENTRY_POINTS.len())
            .filter(|&&v| v & 0x8000 != 0 && v <= 0xFFFF)
            .map(|&v| v as u16)
            .collect();
        entries.push(asm::imem_address(0));
        let compiled = match backend {
            None => None,
            Some(b) => Some(
                compile(&code, profile, b, &entries)
                    .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_BACKEND_UNAVAILABLE, e))?,
            ),
        };
        let p = PicajitTheiaProgram {
            code,
            profile,
            compiled,
        };
        let h = handle::create(p)?;
        // SAFETY: `out` checked (non-NULL, aligned), writable by precondition.
        unsafe { error::write_out(out, h, "out") }
    })
}

/// Releases a program; NULL is accepted (PICAJIT_OK). A destroyed or foreign handle is
/// PICAJIT_ERR_INVALID_HANDLE.
///
/// # Safety
/// No other thread may be using `p`.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_destroy(
    p: *mut PicajitTheiaProgram,
) -> PicajitStatus {
    call("picajit_theia_program_destroy", || {
        // SAFETY: checked by the registry; no concurrent user by this function's contract.
        unsafe { handle::destroy(p, "program") }
    })
}

/// The number of instructions of a program (after the `.mem` entry table) in `*out`.
///
/// # Safety
/// `p` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_length(
    p: *const PicajitTheiaProgram,
    out: *mut u32,
) -> PicajitStatus {
    call("picajit_theia_program_length", || {
        // SAFETY: checked by the registry.
        let p = unsafe { handle::get(p, "program") }?;
        let n = p.code.imem.len().saturating_sub(asm::TABLE_LEN) as u32;
        // SAFETY: forwarded precondition.
        unsafe { error::write_out(out, n, "out") }
    })
}

/// Runs a program from instruction `entry_index` (0 is the first instruction of the source)
/// with at most `budget` steps, on `state` (read, then written back whatever happens, except
/// on PICAJIT_ERR_NULL/INVALID_ARGUMENT). `io` may be NULL. PICAJIT_ERR_EXEC: an undefined
/// operation, a jump to an address with no code, running past the end, or (manual profile)
/// a register address above 131; the message says which and where.
///
/// # Safety
/// `p` NULL or live; `state` and `result` NULL or valid for reading and writing; `io` NULL
/// or readable, with callbacks that are safe to call with its `user` pointer.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_run(
    p: *const PicajitTheiaProgram,
    state: *mut PicajitTheiaState,
    entry_index: u32,
    budget: u64,
    io: *const PicajitTheiaIo,
    result: *mut PicajitTheiaResult,
) -> PicajitStatus {
    call("picajit_theia_run", || {
        // SAFETY: checked by the registry.
        let p = unsafe { handle::get(p, "program") }?;
        check_ptr(state, "state")?;
        check_ptr(result, "result")?;
        if !io.is_null() {
            check_ptr(io, "io")?;
        }
        let len = p.code.imem.len().saturating_sub(asm::TABLE_LEN);
        if entry_index as usize >= len {
            return Err(Error::invalid(format!(
                "entry_index {entry_index}: the program has {len} instructions"
            )));
        }
        let entry = asm::imem_address(entry_index as usize);
        // SAFETY: non-NULL, aligned, readable and writable by precondition.
        let st = unsafe { &mut *state };
        let rows = p.profile.register_count();
        let mut cio = CIo(if io.is_null() {
            PicajitTheiaIo {
                user: std::ptr::null_mut(),
                omem_write: None,
                tmem_read: None,
            }
        } else {
            // SAFETY: non-NULL, aligned, readable by precondition.
            unsafe { *io }
        });
        let r = match &p.compiled {
            // The code runs on a context block filled from the caller's struct (one copy in,
            // one out; no `State` in between).
            Some(c) => {
                let mut ctx = TheiaCtx::default();
                ctx.regs[..rows].copy_from_slice(&st.regs[..rows]);
                ctx.last_result = st.last_result;
                ctx.return_addr = u32::from(st.return_addr as u16);
                let r = c.run_ctx(&mut ctx, &mut cio, entry, budget);
                st.regs[..rows].copy_from_slice(&ctx.regs[..rows]);
                st.last_result = ctx.last_result;
                st.return_addr = u32::from(ctx.return_addr as u16);
                r
            }
            None => {
                let mut s = State::new(p.profile);
                s.regs.copy_from_slice(&st.regs[..rows]);
                s.last_result = st.last_result;
                s.return_addr = st.return_addr as u16;
                let r = exec::run(p.profile, &p.code, &mut s, &mut cio, entry, budget)
                    .map_err(picajit_jit::Error::Theia);
                st.regs[..rows].copy_from_slice(&s.regs);
                st.last_result = s.last_result;
                st.return_addr = s.return_addr as u32;
                r
            }
        };
        let out = r.map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_EXEC, e))?;
        let res = match out.status {
            Status::Returned(v) => PicajitTheiaResult {
                status: PicajitTheiaStatus::PICAJIT_THEIA_RETURNED as u32,
                return_value: v as u32,
                steps: out.steps,
                pc: 0,
            },
            Status::Budget { pc } => PicajitTheiaResult {
                status: PicajitTheiaStatus::PICAJIT_THEIA_BUDGET as u32,
                return_value: 0,
                steps: out.steps,
                pc: pc as u32,
            },
            Status::Stalled { pc, .. } => PicajitTheiaResult {
                status: PicajitTheiaStatus::PICAJIT_THEIA_STALLED as u32,
                return_value: 0,
                steps: out.steps,
                pc: pc as u32,
            },
        };
        // SAFETY: checked non-NULL and aligned; writable by precondition.
        unsafe { error::write_out(result, res, "result") }
    })
}

/// A THEIA scene for whole-GPU rendering (`picajit render --isa theia`): the original
/// project's scene files (Params.mem, Vertex.mem, Textures.mem, Instructions.mem with the
/// entry-point table) and, optionally, the ROM's default code read from a checkout of the
/// original project. Immutable after creation; may be rendered from several threads at once.
pub struct PicajitTheiaScene {
    scene: Scene,
    rom: Vec<u64>,
}

impl handle::Handle for PicajitTheiaScene {
    const KIND: usize = 13;
    const NAME: &'static str = "THEIA scene";
}

impl std::fmt::Debug for PicajitTheiaScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PicajitTheiaScene({} instruction rows, {} ROM rows)",
            self.scene.imem.len(),
            self.rom.len()
        )
    }
}

/// Counters of one `picajit_theia_render`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PicajitTheiaRenderStats {
    pub width: u32,
    pub height: u32,
    /// GPU cores the frame was split over.
    pub cores: u32,
    pub pixels: u64,
    /// Program runs (entry points triggered) and instructions executed, over all cores.
    pub runs: u64,
    pub steps: u64,
    /// Pixels whose MAIN reported a hit.
    pub hits: u64,
}

/// The ROM of the checkout at `rtl_dir` (NULL: no ROM).
///
/// # Safety
/// `rtl_dir` must be NULL or NUL-terminated.
unsafe fn rom_of(rtl_dir: *const c_char) -> Result<Vec<u64>> {
    if rtl_dir.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: forwarded precondition.
    let dir = unsafe { text(rtl_dir, "rtl_dir") }?;
    Ok(crate::theia::rom::load(std::path::Path::new(dir))
        .map_err(|e| Error::invalid(format!("rtl_dir {dir}: {e}")))?
        .words)
}

fn scene_handle(scene: Scene, rom: Vec<u64>, out: *mut *mut PicajitTheiaScene) -> Result<()> {
    // Reject what no render could use now, not at render time.
    scene
        .size()
        .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e))?;
    scene
        .entries()
        .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e))?;
    let h = handle::create(PicajitTheiaScene { scene, rom })?;
    // SAFETY: `out` checked by the caller (non-NULL, aligned), writable by precondition.
    unsafe { error::write_out(out, h, "out") }
}

/// Loads a scene directory (`Params.mem`, `Vertex.mem`, `Textures.mem`, `Instructions.mem`,
/// each at most 64 MiB). `rtl_dir`, if not NULL, is a checkout of the original project whose
/// ROM (`rtl/Module_ROM.v` with `rtl/aDefinitions.v`) supplies the default code; with NULL,
/// every entry point the scene uses must lie in its instruction memory. Errors:
/// PICAJIT_ERR_PROGRAM (a file missing, unreadable or malformed, a resolution outside
/// 1..4096, an entry-point table too short), PICAJIT_ERR_INVALID_ARGUMENT (the ROM could not
/// be read), PICAJIT_ERR_NULL.
///
/// # Safety
/// `dir` NULL or NUL-terminated; `rtl_dir` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_scene_load(
    dir: *const c_char,
    rtl_dir: *const c_char,
    out: *mut *mut PicajitTheiaScene,
) -> PicajitStatus {
    call("picajit_theia_scene_load", || {
        check_ptr(out, "out")?;
        // SAFETY: forwarded preconditions.
        let dir = unsafe { text(dir, "dir") }?;
        // SAFETY: forwarded precondition.
        let rom = unsafe { rom_of(rtl_dir) }?;
        let scene = Scene::load(std::path::Path::new(dir), None)
            .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e))?;
        scene_handle(scene, rom, out)
    })
}

/// Creates a scene from the texts of its four files (NUL-terminated, each at most 16 MiB:
/// `$readmemh` words for Params, Vertex and Textures, the `.mem` format for Instructions).
/// `rtl_dir` and the errors as for `picajit_theia_scene_load`.
///
/// # Safety
/// Every text NULL or NUL-terminated; `rtl_dir` NULL or NUL-terminated; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_scene_create(
    params: *const c_char,
    vertex: *const c_char,
    textures: *const c_char,
    instructions: *const c_char,
    rtl_dir: *const c_char,
    out: *mut *mut PicajitTheiaScene,
) -> PicajitStatus {
    call("picajit_theia_scene_create", || {
        check_ptr(out, "out")?;
        let words = |p: *const c_char, what: &str| -> Result<Vec<u32>> {
            // SAFETY: forwarded precondition.
            let t = unsafe { text(p, what) }?;
            readmemh(t)
                .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, format!("{what}: {e}")))
        };
        let params = words(params, "params")?;
        let vertex = words(vertex, "vertex")?;
        let textures = words(textures, "textures")?;
        // SAFETY: forwarded precondition.
        let imem = unsafe { text(instructions, "instructions") }?;
        let imem = MemImage::parse(imem)
            .map_err(|e| {
                Error::new(
                    PicajitStatus::PICAJIT_ERR_PROGRAM,
                    format!("instructions: {e}"),
                )
            })?
            .words;
        // SAFETY: forwarded precondition.
        let rom = unsafe { rom_of(rtl_dir) }?;
        let scene = Scene {
            params,
            vertex,
            textures,
            imem,
            core_count: None,
        };
        scene_handle(scene, rom, out)
    })
}

/// Releases a scene; NULL is accepted (PICAJIT_OK). A destroyed or foreign handle is
/// PICAJIT_ERR_INVALID_HANDLE.
///
/// # Safety
/// No other thread may be using `scene`.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_scene_destroy(
    scene: *mut PicajitTheiaScene,
) -> PicajitStatus {
    call("picajit_theia_scene_destroy", || {
        // SAFETY: checked by the registry; no concurrent user by this function's contract.
        unsafe { handle::destroy(scene, "scene") }
    })
}

/// The image size of a scene (its `CREG_RESOLUTION`) and its GPU core count (the initial and
/// final position pairs of Params.mem up to the one ending at the last row). A render writes
/// `width * height * 3` bytes.
///
/// # Safety
/// `scene` NULL or live; the outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_scene_info(
    scene: *const PicajitTheiaScene,
    width: *mut u32,
    height: *mut u32,
    cores: *mut u32,
) -> PicajitStatus {
    call("picajit_theia_scene_info", || {
        // SAFETY: checked by the registry.
        let s = unsafe { handle::get(scene, "scene") }?;
        check_ptr(width, "width")?;
        check_ptr(height, "height")?;
        check_ptr(cores, "cores")?;
        let (w, h) = s
            .scene
            .size()
            .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e))?;
        // SAFETY: checked non-NULL and aligned; writable by precondition.
        unsafe {
            error::write_out(width, w, "width")?;
            error::write_out(height, h, "height")?;
            error::write_out(cores, s.scene.cores() as u32, "cores")
        }
    })
}

/// Renders one frame as the RTL's control and IO units run the scene (the rtl profile; see
/// docs/theia.md): `backend` a `PicajitBackend` (AUTO: the host's JIT; INTERPRETER: the
/// reference interpreter; X64/A64: that JIT, A64 only where it runs), `cores` the GPU's core
/// count (0: the scene's; at most 64 and at most the position pairs Params.mem holds),
/// `threads` host threads over the cores (0: one per host CPU). The image goes to `rgb` as
/// `width * height` pixels of three bytes, rows top to bottom; `rgb_len` must be at least
/// that. `stats` may be NULL. Errors: PICAJIT_ERR_EXEC (a run failed: an undefined
/// operation, a jump without code, a stall, the per-run budget of 1,000,000 steps; the
/// message names the core, pixel and entry point), PICAJIT_ERR_BACKEND_UNAVAILABLE,
/// PICAJIT_ERR_INVALID_ARGUMENT, PICAJIT_ERR_NULL, PICAJIT_ERR_INVALID_HANDLE.
///
/// # Safety
/// `scene` NULL or live; `rgb` NULL or writable for `rgb_len` bytes; `stats` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_render(
    scene: *const PicajitTheiaScene,
    backend: u32,
    cores: u32,
    threads: u32,
    rgb: *mut u8,
    rgb_len: usize,
    stats: *mut PicajitTheiaRenderStats,
) -> PicajitStatus {
    call("picajit_theia_render", || {
        // SAFETY: checked by the registry.
        let s = unsafe { handle::get(scene, "scene") }?;
        check_ptr(rgb, "rgb")?;
        if !stats.is_null() {
            check_ptr(stats, "stats")?;
        }
        let mut sc = s.scene.clone();
        if cores != 0 {
            let pairs = sc.params.len().saturating_sub(19) / 6;
            if cores as usize > MAX_CORES || cores as usize > pairs {
                return Err(Error::invalid(format!(
                    "cores {cores}: at most {MAX_CORES} and at most the {pairs} position pairs of Params.mem"
                )));
            }
            sc.core_count = Some(cores as usize);
        }
        let (w, h) = sc
            .size()
            .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e))?;
        let need = w as usize * h as usize * 3;
        if rgb_len < need {
            return Err(Error::invalid(format!(
                "rgb_len {rgb_len}: a {w}x{h} image needs {need} bytes"
            )));
        }
        let engine = match backend {
            b if b == PicajitBackend::PICAJIT_BACKEND_INTERPRETER as u32 => Engine::Interp,
            b if b == PicajitBackend::PICAJIT_BACKEND_AUTO as u32 => Engine::Jit,
            b if b == PicajitBackend::PICAJIT_BACKEND_X64 as u32 => Engine::X64,
            b if b == PicajitBackend::PICAJIT_BACKEND_A64 as u32 => Engine::A64,
            b => {
                return Err(Error::invalid(format!(
                    "backend {b} is not a PicajitBackend"
                )))
            }
        };
        let code = Code {
            imem: sc.imem.clone(),
            rom: s.rom.clone(),
        };
        if let Some(b) = engine.backend() {
            // The render compiles per thread; a backend this build cannot run is reported
            // as such rather than as a failed render.
            let entries = sc
                .entries()
                .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e))?;
            compile(&code, Profile::Rtl, b, &entries)
                .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_BACKEND_UNAVAILABLE, e))?;
        }
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            t => t as usize,
        };
        let (img, st) = render(&sc, &code.rom, engine, threads)
            .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_EXEC, e))?;
        // SAFETY: non-NULL by the check above, writable for `rgb_len` >= `need` bytes by
        // precondition; `img.rgb` has exactly `need` bytes (compose makes w * h * 3).
        let out = unsafe { std::slice::from_raw_parts_mut(rgb, need) };
        out.copy_from_slice(&img.rgb[..need]);
        if !stats.is_null() {
            let r = PicajitTheiaRenderStats {
                width: w,
                height: h,
                cores: sc.cores() as u32,
                pixels: st.pixels,
                runs: st.runs,
                steps: st.steps,
                hits: st.hits,
            };
            // SAFETY: checked non-NULL and aligned; writable by precondition.
            unsafe { error::write_out(stats, r, "stats") }?;
        }
        Ok(())
    })
}
