//! Shaders: loading programs from raw code words, SHBIN files or picasso source, and asking
//! how they run.

use super::engine::PicajitEngine;
use super::uniforms::PicajitUniforms;
use crate::capi::args;
use crate::capi::cenum::{c_enum, CEnum};
use crate::capi::engine::PicajitEngineKind;
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle::{self, query};
use crate::pica::asm::{assemble, SourceFile};
use crate::pica::engine::{apply_constants, program_from_shbin, Shader};
use crate::pica::shbin::{Dvle, Shbin};
use picajit_interp::pica::program::{GsInputMode, Program, ShaderKind};
use std::ffi::{c_char, c_void, CString};

/// The shader unit a program is prepared for when it is created. Every shader runs on
/// either unit: `picajit_shader_run_batch*` runs it on the vertex unit,
/// `picajit_geometry_run_*` on the geometry unit; the code for the unit it was not created
/// for is prepared on its first run there, once, and kept in the shader.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitShaderKind {
    /// Vertex unit (`picajit_shader_run_batch`).
    PICAJIT_SHADER_VERTEX = 0,
    /// Geometry unit (`picajit_geometry_run_point`, `_run_points`, `_run_uniforms`).
    PICAJIT_SHADER_GEOMETRY = 1,
}

c_enum!(PicajitShaderKind: PICAJIT_SHADER_VERTEX, PICAJIT_SHADER_GEOMETRY);

/// How a geometry shader receives its input vertices (`picajit_geometry_set_mode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitGsMode {
    /// One invocation per input vertex; its attributes arrive in v0-v15
    /// (`picajit_geometry_run_point`, `picajit_geometry_run_points`).
    PICAJIT_GS_POINT = 0,
    /// Variable-size primitives: `c[first_uniform]` holds the vertex count in every component
    /// and the attributes follow in the next float uniforms (`picajit_geometry_run_uniforms`).
    PICAJIT_GS_VARIABLE = 1,
    /// Fixed-size primitives: the attributes are written to the float uniforms from
    /// `c[first_uniform]` on (`picajit_geometry_run_uniforms`).
    PICAJIT_GS_FIXED = 2,
}

c_enum!(PicajitGsMode: PICAJIT_GS_POINT, PICAJIT_GS_VARIABLE, PICAJIT_GS_FIXED);

impl PicajitGsMode {
    /// The input mode as C describes it: the mode, the first uniform and the vertex count.
    pub(crate) fn fields(mode: GsInputMode) -> (PicajitGsMode, u32, u32) {
        match mode {
            GsInputMode::Point => (PicajitGsMode::PICAJIT_GS_POINT, 0, 0),
            GsInputMode::Variable {
                first_uniform,
                full_vertices,
            } => (
                PicajitGsMode::PICAJIT_GS_VARIABLE,
                u32::from(first_uniform),
                u32::from(full_vertices),
            ),
            GsInputMode::Fixed {
                first_uniform,
                vertices,
            } => (
                PicajitGsMode::PICAJIT_GS_FIXED,
                u32::from(first_uniform),
                u32::from(vertices),
            ),
        }
    }

    /// The input mode C describes (the inverse of [`PicajitGsMode::fields`]), checked.
    pub(crate) fn input_mode(mode: u32, first_uniform: u32, vertices: u32) -> Result<GsInputMode> {
        let first = u8::try_from(first_uniform)
            .ok()
            .filter(|&f| f < 96)
            .ok_or_else(|| Error::invalid(format!("first uniform {first_uniform} is past c95")))?;
        let count = u8::try_from(vertices)
            .map_err(|_| Error::invalid(format!("vertex count {vertices} is over 255")))?;
        Ok(
            match PicajitGsMode::from_raw(mode, "geometry-shader mode")? {
                PicajitGsMode::PICAJIT_GS_POINT => GsInputMode::Point,
                PicajitGsMode::PICAJIT_GS_VARIABLE => GsInputMode::Variable {
                    first_uniform: first,
                    full_vertices: count,
                },
                PicajitGsMode::PICAJIT_GS_FIXED => GsInputMode::Fixed {
                    first_uniform: first,
                    vertices: count,
                },
            },
        )
    }
}

/// A program prepared for execution on one engine's settings. Immutable after creation.
#[derive(Debug)]
pub struct PicajitShader {
    pub(crate) shader: Shader,
    /// The DVLE it was loaded from, for its constants, register masks and GS mode.
    dvle: Option<Dvle>,
    fallback: Option<CString>,
}

impl handle::Handle for PicajitShader {
    const NAME: &'static str = "shader";
}

impl PicajitShader {
    fn new(shader: Shader, dvle: Option<Dvle>) -> PicajitShader {
        let fallback = shader
            .fallback_reason()
            .map(|r| CString::new(r.replace('\0', "\\0")).unwrap_or_default());
        PicajitShader {
            shader,
            dvle,
            fallback,
        }
    }

    pub(crate) fn kind(&self) -> ShaderKind {
        self.shader.program().kind()
    }
}

/// What a shader is and how it runs. Set `struct_size` to `sizeof(PicajitShaderInfo)`
/// before calling `picajit_shader_get_info` (the versioning rule is at the top of this
/// header).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitShaderInfo {
    /// `sizeof(PicajitShaderInfo)` as the caller compiled it (set by the caller).
    pub struct_size: u32,
    /// The unit the shader was created for (the fields below describe it on that unit).
    pub kind: PicajitShaderKind,
    /// The engine the shader runs on (never `PICAJIT_ENGINE_JIT`).
    pub engine: PicajitEngineKind,
    /// 1 if a JIT was requested but this program runs on the interpreter
    /// (`picajit_shader_fallback_reason` says why), else 0.
    pub fallback: u32,
    /// Entry point, in words.
    pub entry: u32,
    /// Number of code words.
    pub code_words: u32,
    /// Number of operand descriptors kept: as given, at most 128 (the entries instructions
    /// can address).
    pub opdesc_count: u32,
    /// Input registers the program reads, bit n = v`n`: from the DVLE when loaded from a
    /// SHBIN or source, 0xFFFF (unknown: all) for raw programs.
    pub input_mask: u32,
    /// Output registers the program writes, bit n = o`n`: from the DVLE, or 0xFFFF.
    pub output_mask: u32,
    /// The DVLE's geometry-shader input mode (`PICAJIT_GS_POINT` for raw programs and vertex
    /// shaders).
    pub gs_mode: PicajitGsMode,
    /// The DVLE's first input uniform for variable and fixed modes.
    pub gs_first_uniform: u32,
    /// The DVLE's vertices per primitive (fixed mode) or fully defined vertices (variable).
    pub gs_vertices: u32,
    /// Bytes of machine code when a JIT runs the shader, else 0.
    pub code_bytes: usize,
    /// How many vertices run at once: for a vertex shader, `picajit_shader_run_batch`; for a
    /// geometry shader, `picajit_geometry_run_points`. Asking is cheap: it never generates
    /// code, so a program that qualifies for the eight-lane code before that code exists
    /// (it is generated by the first run, or by `picajit_shader_prepare_batches`) reports
    /// `PICAJIT_BATCH_NOT_GENERATED`. (Added in API 1.3; a caller built against 1.2 or
    /// earlier gets the fields up to `code_bytes`.)
    pub batch_path: PicajitBatchPath,
    /// Vertices (geometry shaders: points) per group on that path: 8 or 1 (0 for
    /// `PICAJIT_BATCH_NOT_GENERATED`).
    pub batch_lanes: u32,
}

/// How batches of vertices (and point-mode draws of a geometry shader) run
/// (`PicajitShaderInfo::batch_path`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitBatchPath {
    /// On the reference interpreter, one vertex at a time.
    PICAJIT_BATCH_INTERPRETER = 0,
    /// On the JIT's per-vertex code, one vertex per call.
    PICAJIT_BATCH_PER_VERTEX = 1,
    /// On the JIT's eight-lane code (x86-64 with AVX2; AArch64 NEON, two halves of four
    /// lanes): eight vertices per group, the batch tail and groups that must stop (per-lane
    /// loop state, budget, undefined opcodes) on the per-vertex code. Results are the same on
    /// every path, bit for bit.
    PICAJIT_BATCH_EIGHT_LANE = 2,
    /// The program qualifies for the eight-lane code, which has not been generated yet
    /// (`picajit_shader_prepare_batches` generates it; the first run does otherwise). Added in
    /// API 3.0.
    PICAJIT_BATCH_NOT_GENERATED = 3,
}

fn shader_from_program(
    engine: &PicajitEngine,
    program: Program,
    dvle: Option<Dvle>,
) -> Result<PicajitShader> {
    let shader = Shader::with_cache(program, &engine.config, &engine.cache)?;
    Ok(PicajitShader::new(shader, dvle))
}

fn shader_from_shbin(engine: &PicajitEngine, shbin: &Shbin, index: u32) -> Result<PicajitShader> {
    let (program, _constants) = program_from_shbin(shbin, index as usize)?;
    shader_from_program(engine, program, Some(shbin.dvles[index as usize].clone()))
}

/// Create a shader from raw program memory, as an emulator finds it in GPU registers:
/// `code_words` code words, `opdesc_count` operand descriptors (32-bit words, entries past the
/// count read as 0), the entry point in words, and a `PicajitShaderKind`. The data is copied.
/// Release the shader with `picajit_shader_destroy`.
///
/// The descriptor table may be passed whole, as emulators keep it (up to 4096 entries):
/// instructions address only the first 128 (a 7-bit field; MAD's 5-bit field the first 32),
/// so entries past 128 are never read and not kept (`PicajitShaderInfo::opdesc_count` is at
/// most 128). Runs may use other entry points of the same words (`picajit_shader_run_batch_ex`,
/// `picajit_geometry_set_entry`) without creating another shader.
///
/// Errors: `PICAJIT_ERR_PROGRAM` for more than 4096 words, more than 4096 descriptors (any
/// larger count, `SIZE_MAX` included) or an entry point outside the code;
/// `PICAJIT_ERR_INVALID_ARGUMENT` for an unknown kind.
///
/// # Safety
/// `engine` must be NULL or a live engine; `code` must be NULL or point to `code_words`
/// readable words, `opdescs` to `opdesc_count` words (it may be NULL when `opdesc_count` is
/// 0); `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_create(
    engine: *const PicajitEngine,
    code: *const u32,
    code_words: usize,
    opdescs: *const u32,
    opdesc_count: usize,
    entry: u32,
    kind: u32,
    out: *mut *mut PicajitShader,
) -> PicajitStatus {
    call("picajit_shader_create", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        args::check_ptr(code, "code")?;
        program_sizes(code_words, opdesc_count)?;
        // SAFETY: `code_words` readable words by this function's contract.
        let code = unsafe { args::slice(code, code_words, "code") }?;
        let opdescs = if opdesc_count == 0 {
            &[]
        } else {
            // SAFETY: `opdesc_count` readable words by this function's contract.
            unsafe { args::slice(opdescs, opdesc_count, "opdescs") }?
        };
        args::check_ptr(out, "out")?;
        let kind = match PicajitShaderKind::from_raw(kind, "shader kind")? {
            PicajitShaderKind::PICAJIT_SHADER_VERTEX => ShaderKind::Vertex,
            PicajitShaderKind::PICAJIT_SHADER_GEOMETRY => ShaderKind::Geometry,
        };
        let descriptors = opdescs.iter().map(|&d| u64::from(d)).collect();
        let program =
            Program::new(code.to_vec(), descriptors, entry, kind).map_err(crate::Error::from)?;
        let shader = shader_from_program(engine, program, None)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, shader) }
    })
}

/// The sizes of a raw program, checked before its arrays are borrowed: any count past the
/// limits, `SIZE_MAX` included, is `PICAJIT_ERR_PROGRAM` as documented (not an argument
/// error about the array's byte size).
fn program_sizes(code_words: usize, opdesc_count: usize) -> Result<()> {
    use picajit_interp::pica::program::{CODE_WORDS, MAX_OPDESC_TABLE};
    let error = |m: String| Err(Error::new(PicajitStatus::PICAJIT_ERR_PROGRAM, m));
    if code_words > CODE_WORDS {
        return error(format!(
            "{code_words} code words; a program has at most {CODE_WORDS}"
        ));
    }
    if opdesc_count > MAX_OPDESC_TABLE {
        return error(format!(
            "{opdesc_count} operand descriptors; at most {MAX_OPDESC_TABLE} are accepted"
        ));
    }
    Ok(())
}

/// A SHBIN image's size, checked before the bytes are borrowed: past
/// `PICAJIT_MAX_SHBIN_BYTES` (`SIZE_MAX` included) is `PICAJIT_ERR_SHBIN`, as documented.
fn shbin_size(data: *const c_void, size: usize) -> Result<()> {
    args::check_ptr(data, "data")?;
    if size > crate::pica::shbin::MAX_SHBIN_BYTES {
        return Err(Error::new(
            PicajitStatus::PICAJIT_ERR_SHBIN,
            crate::pica::shbin::ShbinError::FileTooLarge { file_len: size },
        ));
    }
    Ok(())
}

fn parse_shbin(data: &[u8]) -> Result<Shbin> {
    Shbin::parse(data).map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_SHBIN, e))
}

/// Create a shader from DVLE number `dvle_index` of a SHBIN file image of `size` bytes
/// (the bytes are copied; the buffer may be freed afterwards). The DVLE's constants are not
/// applied to any uniform set until `picajit_shader_apply_constants`.
///
/// Errors: `PICAJIT_ERR_SHBIN` for a malformed file, a `size` over `PICAJIT_MAX_SHBIN_BYTES`
/// (`SIZE_MAX` included) or an index past the last DVLE,
/// `PICAJIT_ERR_PROGRAM` for a DVLE whose entry point is outside the code.
///
/// # Safety
/// `engine` must be NULL or a live engine; `data` must be NULL or point to `size` readable
/// bytes; `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_load_shbin(
    engine: *const PicajitEngine,
    data: *const c_void,
    size: usize,
    dvle_index: u32,
    out: *mut *mut PicajitShader,
) -> PicajitStatus {
    call("picajit_shader_load_shbin", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        shbin_size(data, size)?;
        // SAFETY: `size` readable bytes by this function's contract.
        let data = unsafe { args::slice(data.cast::<u8>(), size, "data") }?;
        args::check_ptr(out, "out")?;
        let shader = shader_from_shbin(engine, &parse_shbin(data)?, dvle_index)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, shader) }
    })
}

/// The number of DVLEs (shaders) in a SHBIN file image of `size` bytes.
///
/// Errors: `PICAJIT_ERR_SHBIN` for a malformed file or a `size` over
/// `PICAJIT_MAX_SHBIN_BYTES` (`SIZE_MAX` included).
///
/// # Safety
/// `data` must be NULL or point to `size` readable bytes; `count` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shbin_dvle_count(
    data: *const c_void,
    size: usize,
    count: *mut u32,
) -> PicajitStatus {
    call("picajit_shbin_dvle_count", || {
        shbin_size(data, size)?;
        // SAFETY: `size` readable bytes by this function's contract.
        let data = unsafe { args::slice(data.cast::<u8>(), size, "data") }?;
        let n = parse_shbin(data)?.dvles.len();
        // SAFETY: writable by this function's contract.
        unsafe { args::write_out(count, n as u32, "count") }
    })
}

/// Assemble picasso-syntax `source` (NUL-terminated UTF-8; one source file, so one DVLE
/// unless it says `.nodvle`) and create a shader from DVLE `dvle_index`, as
/// `picajit_shader_load_shbin` would from the assembled file.
///
/// Errors: `PICAJIT_ERR_ASSEMBLY` with the line and column in the message,
/// `PICAJIT_ERR_SHBIN` for an index past the last DVLE, `PICAJIT_ERR_INVALID_ARGUMENT` for
/// text that is not UTF-8.
///
/// # Safety
/// `engine` must be NULL or a live engine; `source` must be NULL or a NUL-terminated string;
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_load_source(
    engine: *const PicajitEngine,
    source: *const c_char,
    dvle_index: u32,
    out: *mut *mut PicajitShader,
) -> PicajitStatus {
    call("picajit_shader_load_source", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        // SAFETY: NULL or NUL-terminated by this function's contract.
        let text = unsafe { args::text(source, "source") }?;
        args::check_ptr(out, "out")?;
        let file = SourceFile {
            name: "source",
            text,
        };
        let shbin =
            assemble(&[file]).map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_ASSEMBLY, e))?;
        let shader = shader_from_shbin(engine, &shbin, dvle_index)?;
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, shader) }
    })
}

/// Destroy a shader. NULL is ignored; a handle that is not a live shader (destroyed already,
/// of another kind) is `PICAJIT_ERR_INVALID_HANDLE` and frees nothing.
///
/// # Safety
/// No other thread may be using the shader.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_destroy(shader: *mut PicajitShader) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_shader_destroy", shader, "shader") }
}

/// Describe a shader, cheaply: nothing is compiled or generated to answer.
/// `info->struct_size` must be set by the caller (the versioning rule is at the top of this
/// header; an older, smaller struct receives the fields it has).
///
/// # Safety
/// `shader` must be NULL or a live shader; `info` must be NULL or point to
/// `info->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_get_info(
    shader: *const PicajitShader,
    info: *mut PicajitShaderInfo,
) -> PicajitStatus {
    call("picajit_shader_get_info", || {
        // SAFETY: a live shader by this function's contract.
        let shader = unsafe { handle::get(shader, "shader") }?;
        args::check_ptr(info, "info")?;
        // SAFETY: non-NULL and aligned (checked above); `struct_size` is the first field of
        // every version of the struct.
        let struct_size = unsafe { info.cast::<u32>().read() };
        let value = shader.info(struct_size);
        // Up to API 1.2 the struct ended after `code_bytes`; such callers get that much.
        let first = std::mem::offset_of!(PicajitShaderInfo, batch_path);
        let hint = "set it to sizeof(PicajitShaderInfo)";
        // SAFETY: `struct_size` writable bytes by this function's contract.
        unsafe { args::write_versioned(info, "info", &[first], hint, value) }
    })
}

impl PicajitShader {
    fn info(&self, struct_size: u32) -> PicajitShaderInfo {
        let program = self.shader.program();
        let dvle = self.dvle.as_ref();
        let gs = match (self.kind(), dvle) {
            (ShaderKind::Geometry, Some(d)) => d.gs_mode,
            _ => GsInputMode::Point,
        };
        let (gs_mode, gs_first_uniform, gs_vertices) = PicajitGsMode::fields(gs);
        let (batch_path, batch_lanes) = batch_path(&self.shader);
        PicajitShaderInfo {
            struct_size,
            kind: match self.kind() {
                ShaderKind::Vertex => PicajitShaderKind::PICAJIT_SHADER_VERTEX,
                ShaderKind::Geometry => PicajitShaderKind::PICAJIT_SHADER_GEOMETRY,
            },
            engine: PicajitEngineKind::from(self.shader.engine()),
            fallback: u32::from(self.fallback.is_some()),
            entry: u32::from(program.entry()),
            code_words: program.code().len() as u32,
            opdesc_count: program.opdescs().len() as u32,
            input_mask: dvle.map_or(0xFFFF, |d| u32::from(d.input_mask)),
            output_mask: dvle.map_or(0xFFFF, |d| u32::from(d.output_mask)),
            gs_mode,
            gs_first_uniform,
            gs_vertices,
            code_bytes: self.shader.compiled().map_or(0, |c| c.code_size()),
            batch_path,
            batch_lanes,
        }
    }
}

fn batch_path(shader: &Shader) -> (PicajitBatchPath, u32) {
    let Some(code) = shader.compiled() else {
        return (PicajitBatchPath::PICAJIT_BATCH_INTERPRETER, 1);
    };
    match code.batch_generated() {
        Some(true) => (PicajitBatchPath::PICAJIT_BATCH_EIGHT_LANE, 8),
        Some(false) => (PicajitBatchPath::PICAJIT_BATCH_PER_VERTEX, 1),
        None => (PicajitBatchPath::PICAJIT_BATCH_NOT_GENERATED, 0),
    }
}

/// Generate the eight-lane code of `shader` now, if the program qualifies and it does not
/// exist yet (on its unit; otherwise nothing happens), so that a loader takes that cost up
/// front instead of in the first run. `picajit_shader_get_info` then reports the path.
///
/// # Safety
/// `shader` must be NULL or a live shader.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_prepare_batches(
    shader: *const PicajitShader,
) -> PicajitStatus {
    call("picajit_shader_prepare_batches", || {
        // SAFETY: a live shader by this function's contract.
        let shader = unsafe { handle::get(shader, "shader") }?;
        if let Some(code) = shader.shader.compiled() {
            code.batch_lanes();
        }
        Ok(())
    })
}

/// Why a JIT was requested but this shader runs on the interpreter: `*reason` is set to a
/// NUL-terminated message owned by the shader (valid until it is destroyed), or to NULL when
/// the shader runs on the requested engine.
///
/// # Safety
/// `shader` must be NULL or a live shader; `reason` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_fallback_reason(
    shader: *const PicajitShader,
    reason: *mut *const c_char,
) -> PicajitStatus {
    let value =
        |s: &PicajitShader| Ok(s.fallback.as_ref().map_or(std::ptr::null(), |r| r.as_ptr()));
    // SAFETY: a live shader and a writable `reason` (or NULL), by this function's contract.
    unsafe { query!("picajit_shader_fallback_reason", shader => reason, value) }
}

/// Write the constants of the shader's DVLE (`.constf`, `.consti`, `.constb`) into
/// `uniforms`, as a loader does when it binds the shader. Shaders created from raw code
/// have no constants; the call then changes nothing.
///
/// # Safety
/// `shader` must be NULL or a live shader; `uniforms` must be NULL or a live uniform set that
/// no other thread uses during the call.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_apply_constants(
    shader: *const PicajitShader,
    uniforms: *mut PicajitUniforms,
) -> PicajitStatus {
    call("picajit_shader_apply_constants", || {
        // SAFETY: a live shader by this function's contract.
        let shader = unsafe { handle::get(shader, "shader") }?;
        // SAFETY: a live uniform set used by no one else, by this function's contract.
        let uniforms = unsafe { handle::get_mut(uniforms, "uniforms") }?;
        uniforms.check_mode(&shader.shader)?;
        if let Some(dvle) = &shader.dvle {
            apply_constants(dvle, &mut uniforms.uniforms);
        }
        Ok(())
    })
}
