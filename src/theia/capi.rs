//! THEIA's C functions: create a program from assembler source or a `.mem` image for an
//! engine and profile, run it from an instruction index with the register state in a
//! caller-owned struct, read the outcome; load and render whole scenes. Registered by
//! `src/capi/mod.rs` (the C ABI's module tree, from which the header is generated), whose
//! conventions these follow.

use crate::capi::args;
use crate::capi::cenum::{c_enum, CEnum};
use crate::capi::engine::{budget_arg, engine_arg, PicajitEngineKind};
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle::{self, query};
use crate::theia::engine::Shader;
use crate::theia::render::{readmemh, render, Scene, TextureBus, MAX_CORES};
use crate::theia::{asm, MemImage};
use picajit_interp::theia::exec::{Code, Io, State, Status};
use picajit_interp::theia::table::ENTRY_POINTS;
use picajit_interp::theia::Profile;
use picajit_jit::theia::ctx::TheiaCtx;
use picajit_jit::theia::{compile, ctx_from_state, state_from_ctx};
use std::ffi::{c_char, c_void};

/// Which reading of THEIA a program follows (see docs/theia.md).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitTheiaProfile {
    /// The RTL of the original project (the default).
    PICAJIT_THEIA_PROFILE_RTL = 0,
    /// The programming manual.
    PICAJIT_THEIA_PROFILE_MANUAL = 1,
}

c_enum!(
    PicajitTheiaProfile: PICAJIT_THEIA_PROFILE_RTL,
    PICAJIT_THEIA_PROFILE_MANUAL
);

/// How a run ended.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug)]
pub struct PicajitTheiaResult {
    /// How the run ended.
    pub status: PicajitTheiaStatus,
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
    shader: Shader,
}

impl handle::Handle for PicajitTheiaProgram {
    const NAME: &'static str = "THEIA program";
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

impl PicajitTheiaState {
    /// The state as the context block compiled code runs on (rows past the profile's stay 0).
    fn ctx(&self, rows: usize) -> TheiaCtx {
        let mut ctx = TheiaCtx::default();
        ctx.regs[..rows].copy_from_slice(&self.regs[..rows]);
        ctx.last_result = self.last_result;
        ctx.return_addr = u32::from(self.return_addr as u16);
        ctx
    }

    /// Store a context block's state (the profile's rows; the others stay as they are).
    fn store(&mut self, ctx: &TheiaCtx, rows: usize) {
        self.regs[..rows].copy_from_slice(&ctx.regs[..rows]);
        self.last_result = ctx.last_result;
        self.return_addr = u32::from(ctx.return_addr as u16);
    }
}

/// Reads a NUL-terminated text argument of at most the THEIA readers' limit.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    // SAFETY: forwarded precondition.
    let s = unsafe { args::text(p, what) }?;
    // The Rust entries check their own limits too; checking here first keeps the status
    // INVALID_ARGUMENT for every over-long text.
    let limit = asm::MAX_SOURCE_BYTES.max(crate::theia::mem::MAX_TEXT_BYTES);
    if s.len() > limit {
        return Err(Error::invalid(format!(
            "{what} is longer than {limit} bytes"
        )));
    }
    Ok(s)
}

/// Creates a THEIA program from assembler source (the original assembler's syntax) or, with
/// `is_mem` non-zero, from the text of a `.mem` file, for `engine` (a `PicajitEngineKind`:
/// 0, `PICAJIT_ENGINE_JIT`, the host's JIT where there is one, the interpreter elsewhere) and
/// `profile` (a `PicajitTheiaProfile`). Errors: PICAJIT_ERR_ASSEMBLY (source or `.mem` text
/// rejected), PICAJIT_ERR_ENGINE_UNAVAILABLE, PICAJIT_ERR_INVALID_ARGUMENT, PICAJIT_ERR_NULL.
///
/// # Safety
/// `text` must be NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_create(
    text_ptr: *const c_char,
    is_mem: u32,
    engine: u32,
    profile: u32,
    out: *mut *mut PicajitTheiaProgram,
) -> PicajitStatus {
    call("picajit_theia_program_create", || {
        args::check_ptr(out, "out")?;
        // SAFETY: forwarded precondition.
        let src = unsafe { text(text_ptr, "text") }?;
        let profile = match PicajitTheiaProfile::from_raw(profile, "profile")? {
            PicajitTheiaProfile::PICAJIT_THEIA_PROFILE_RTL => Profile::Rtl,
            PicajitTheiaProfile::PICAJIT_THEIA_PROFILE_MANUAL => Profile::Manual,
        };
        let assembly =
            |e: &dyn std::fmt::Display| Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, e);
        let imem = if is_mem != 0 {
            MemImage::parse(src).map_err(|e| assembly(&e))?.words
        } else {
            asm::assemble(src).map_err(|e| assembly(&e))?.imem()
        };
        let code = Code::imem(imem);
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
        let shader = Shader::new(code, profile, &entries, engine_arg(engine)?)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, PicajitTheiaProgram { shader }) }
    })
}

/// The engine a program runs on (a `PicajitEngineKind`: INTERP, X64 or A64) in `*out`.
///
/// # Safety
/// `program` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_engine(
    program: *const PicajitTheiaProgram,
    out: *mut u32,
) -> PicajitStatus {
    let kind = |p: &PicajitTheiaProgram| Ok(PicajitEngineKind::from(p.shader.engine()) as u32);
    // SAFETY: a live program and a writable `out` (or NULL), by this function's contract.
    unsafe { query!("picajit_theia_program_engine", program => out, kind) }
}

/// Releases a program; NULL is accepted (PICAJIT_OK). A destroyed or foreign handle is
/// PICAJIT_ERR_INVALID_HANDLE.
///
/// # Safety
/// No other thread may be using `program`.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_destroy(
    program: *mut PicajitTheiaProgram,
) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_theia_program_destroy", program, "program") }
}

/// The number of instructions of a program (after the `.mem` entry table) in `*out`.
///
/// # Safety
/// `program` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_program_length(
    program: *const PicajitTheiaProgram,
    out: *mut u32,
) -> PicajitStatus {
    // SAFETY: a live program and a writable `out` (or NULL), by this function's contract.
    unsafe { query!("picajit_theia_program_length", program => out, |p| Ok(p.length() as u32)) }
}

impl PicajitTheiaProgram {
    /// Instructions after the `.mem` entry table.
    fn length(&self) -> usize {
        self.shader.code().imem.len().saturating_sub(asm::TABLE_LEN)
    }
}

/// Runs a program from instruction `entry_index` (0 is the first instruction of the source)
/// with at most `budget` steps (0: `PICAJIT_DEFAULT_BUDGET`), on `state` (read, then written
/// back whatever happens, except on PICAJIT_ERR_NULL/INVALID_ARGUMENT). `io` may be NULL.
/// PICAJIT_ERR_EXEC: an undefined operation, a jump to an address with no code, running past
/// the end, or (manual profile) a register address above 131; the message says which and
/// where.
///
/// # Safety
/// `program` NULL or live; `state` and `result` NULL or valid for reading and writing; `io` NULL
/// or readable, with callbacks that are safe to call with its `user` pointer.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_run(
    program: *const PicajitTheiaProgram,
    state: *mut PicajitTheiaState,
    entry_index: u32,
    budget: u64,
    io: *const PicajitTheiaIo,
    result: *mut PicajitTheiaResult,
) -> PicajitStatus {
    call("picajit_theia_run", || {
        // SAFETY: checked by the registry.
        let p = unsafe { handle::get(program, "program") }?;
        args::check_ptr(state, "state")?;
        args::check_ptr(result, "result")?;
        // SAFETY: NULL or readable by this function's contract.
        let io = unsafe { args::borrow_optional(io, "io") }?;
        let len = p.length();
        if entry_index as usize >= len {
            return Err(Error::invalid(format!(
                "entry_index {entry_index}: the program has {len} instructions"
            )));
        }
        let entry = asm::imem_address(entry_index as usize);
        // SAFETY: non-NULL, aligned, readable and writable by precondition.
        let st = unsafe { &mut *state };
        let profile = p.shader.profile();
        let rows = profile.register_count();
        let mut cio = CIo(io.copied().unwrap_or(PicajitTheiaIo {
            user: std::ptr::null_mut(),
            omem_write: None,
            tmem_read: None,
        }));
        // One copy in, one out: compiled code runs on the context block itself.
        let mut ctx = st.ctx(rows);
        let r = match p.shader.compiled() {
            Some(c) => c
                .run_ctx(&mut ctx, &mut cio, entry, budget_arg(budget))
                .map_err(crate::Error::from),
            None => {
                let mut s = State::new(profile);
                state_from_ctx(&mut s, &ctx);
                let r = p.shader.run(&mut s, &mut cio, entry, budget);
                ctx_from_state(&mut ctx, &s);
                r
            }
        };
        st.store(&ctx, rows);
        let out = r?;
        let (status, return_value, pc) = match out.status {
            Status::Returned(v) => (PicajitTheiaStatus::PICAJIT_THEIA_RETURNED, v as u32, 0),
            Status::Budget { pc } => (PicajitTheiaStatus::PICAJIT_THEIA_BUDGET, 0, pc as u32),
            Status::Stalled { pc, .. } => (PicajitTheiaStatus::PICAJIT_THEIA_STALLED, 0, pc as u32),
        };
        let res = PicajitTheiaResult {
            status,
            return_value,
            steps: out.steps,
            pc,
        };
        // SAFETY: checked non-NULL and aligned; writable by precondition.
        unsafe { args::write_out(result, res, "result") }
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
    const NAME: &'static str = "THEIA scene";
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

/// A scene that does not read or cannot be rendered (`PICAJIT_ERR_PROGRAM`).
fn bad_scene(e: impl std::fmt::Display) -> Error {
    Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, e)
}

/// # Safety
/// `out` NULL or writable.
unsafe fn scene_handle(
    scene: Scene,
    rom: Vec<u64>,
    out: *mut *mut PicajitTheiaScene,
) -> Result<()> {
    // Reject what no render could use now, not at render time.
    scene.size().map_err(bad_scene)?;
    scene.entries().map_err(bad_scene)?;
    // SAFETY: this function's contract.
    unsafe { handle::create_out(out, PicajitTheiaScene { scene, rom }) }
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
        args::check_ptr(out, "out")?;
        // SAFETY: forwarded preconditions.
        let dir = unsafe { text(dir, "dir") }?;
        // SAFETY: forwarded precondition.
        let rom = unsafe { rom_of(rtl_dir) }?;
        let scene = Scene::load(std::path::Path::new(dir), None).map_err(bad_scene)?;
        // SAFETY: forwarded precondition.
        unsafe { scene_handle(scene, rom, out) }
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
        args::check_ptr(out, "out")?;
        let words = |p: *const c_char, what: &str| -> Result<Vec<u32>> {
            // SAFETY: forwarded precondition.
            let t = unsafe { text(p, what) }?;
            readmemh(t).map_err(|e| bad_scene(format!("{what}: {e}")))
        };
        let params = words(params, "params")?;
        let vertex = words(vertex, "vertex")?;
        let textures = words(textures, "textures")?;
        // SAFETY: forwarded precondition.
        let imem = unsafe { text(instructions, "instructions") }?;
        let imem = MemImage::parse(imem)
            .map_err(|e| bad_scene(format!("instructions: {e}")))?
            .words;
        // SAFETY: forwarded precondition.
        let rom = unsafe { rom_of(rtl_dir) }?;
        let scene = Scene {
            params,
            vertex,
            textures,
            imem,
            core_count: None,
            texture_bus: TextureBus::Direct,
        };
        // SAFETY: forwarded precondition.
        unsafe { scene_handle(scene, rom, out) }
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
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_theia_scene_destroy", scene, "scene") }
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
        args::check_ptr(width, "width")?;
        args::check_ptr(height, "height")?;
        args::check_ptr(cores, "cores")?;
        let (w, h) = s.scene.size().map_err(bad_scene)?;
        // SAFETY: checked non-NULL and aligned; writable by precondition.
        unsafe {
            args::write_out(width, w, "width")?;
            args::write_out(height, h, "height")?;
            args::write_out(cores, s.scene.cores() as u32, "cores")
        }
    })
}

/// Renders one frame as the RTL's control and IO units run the scene (the rtl profile; see
/// docs/theia.md): `engine` a `PicajitEngineKind` (0, `PICAJIT_ENGINE_JIT`: the host's JIT
/// where there is one, else the interpreter), `cores` the GPU's core count (0: the scene's;
/// at most 64 and at most the position pairs Params.mem holds), `threads` host threads over
/// the cores (0: one per host CPU). The image goes to `rgb` as `width * height` pixels of
/// three bytes, rows top to bottom; `rgb_len` must be at least that. `stats` may be NULL.
/// Errors: PICAJIT_ERR_EXEC (a run failed: an undefined operation, a jump without code, a
/// stall, the per-run budget of `PICAJIT_DEFAULT_BUDGET` steps; the message names the core,
/// pixel and entry point), PICAJIT_ERR_ENGINE_UNAVAILABLE, PICAJIT_ERR_INVALID_ARGUMENT,
/// PICAJIT_ERR_NULL, PICAJIT_ERR_INVALID_HANDLE.
///
/// # Safety
/// `scene` NULL or live; `rgb` NULL or writable for `rgb_len` bytes; `stats` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_theia_render(
    scene: *const PicajitTheiaScene,
    engine: u32,
    cores: u32,
    threads: u32,
    rgb: *mut u8,
    rgb_len: usize,
    stats: *mut PicajitTheiaRenderStats,
) -> PicajitStatus {
    call("picajit_theia_render", || {
        // SAFETY: checked by the registry.
        let s = unsafe { handle::get(scene, "scene") }?;
        args::check_ptr(rgb, "rgb")?;
        args::check_optional(stats, "stats")?;
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
        let (w, h) = sc.size().map_err(bad_scene)?;
        let need = w as usize * h as usize * 3;
        if rgb_len < need {
            return Err(Error::invalid(format!(
                "rgb_len {rgb_len}: a {w}x{h} image needs {need} bytes"
            )));
        }
        let engine = engine_arg(engine)?;
        let code = Code {
            imem: sc.imem.clone(),
            rom: s.rom.clone(),
        };
        if let Some(b) = engine.backend() {
            // The render compiles per thread; an engine this build cannot run is reported
            // as such rather than as a failed render.
            let entries = sc.entries().map_err(bad_scene)?;
            compile(&code, Profile::Rtl, b, &entries)?;
        }
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            t => t as usize,
        };
        let (img, st) = render(&sc, &code.rom, engine, threads)
            .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_EXEC, e))?;
        // SAFETY: `need` writable bytes by this function's contract (`rgb_len` >= `need`).
        let out = unsafe { args::bytes_mut(rgb, need, "rgb") }?;
        out.copy_from_slice(&img.rgb[..need]);
        let r = PicajitTheiaRenderStats {
            width: w,
            height: h,
            cores: sc.cores() as u32,
            pixels: st.pixels,
            runs: st.runs,
            steps: st.steps,
            hits: st.hits,
        };
        // SAFETY: NULL or writable by this function's contract.
        unsafe { args::write_optional(stats, r, "stats") }
    })
}

/// The thread-safety section of the conventions (`src/capi/mod.rs`) promises that programs
/// and scenes can be shared between threads; this fails to compile if that becomes untrue.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<PicajitTheiaProgram>();
    shareable::<PicajitTheiaScene>();
};
