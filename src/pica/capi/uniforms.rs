//! Uniform sets: c0-c95, i0-i3, b0-b15. The 3DS has one set per shader unit, shared by every
//! program that unit runs, so a set is its own object rather than part of a shader.

use super::engine::PicajitEngine;
use crate::capi::args;
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle::{self, query};
use crate::pica::engine::Shader;
use picajit_interp::pica::float::FloatMode;
use picajit_interp::pica::state::Uniforms;

/// Float uniform rows the caller can set (c0-c95).
const FLOAT_ROWS: u32 = 96;

/// A uniform set, tied to the float mode of the engine it was created from (values set as
/// f32 are converted with it).
#[derive(Debug)]
pub struct PicajitUniforms {
    pub(crate) uniforms: Uniforms,
    mode: FloatMode,
}

impl handle::Handle for PicajitUniforms {
    const NAME: &'static str = "uniform set";
}

impl PicajitUniforms {
    /// Reject a shader prepared for another float model: in f24 mode engines may assume
    /// every uniform holds an f24 value, which an f32-mode set does not guarantee.
    pub(crate) fn check_mode(&self, shader: &Shader) -> Result<()> {
        let wanted = shader.config().float_mode;
        if self.mode != wanted {
            return Err(Error::invalid(format!(
                "the uniform set was created for float mode {:?} but the shader for {wanted:?}",
                self.mode
            )));
        }
        Ok(())
    }
}

/// Register `index` of a file of `len` registers named `prefix`0.. (`kind` in the message).
fn register(index: u32, len: u32, kind: &str, prefix: char) -> Result<usize> {
    if index < len {
        Ok(index as usize)
    } else {
        Err(Error::invalid(format!(
            "{kind} uniform index {index} is past {prefix}{}",
            len - 1
        )))
    }
}

/// Create a uniform set with every float uniform 0.0, every int uniform (0,0,0,0) and every
/// bool false. Release it with `picajit_uniforms_destroy`.
///
/// # Safety
/// `engine` must be NULL or a live engine; `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_create(
    engine: *const PicajitEngine,
    out: *mut *mut PicajitUniforms,
) -> PicajitStatus {
    call("picajit_uniforms_create", || {
        // SAFETY: a live engine by this function's contract.
        let engine = unsafe { handle::get(engine, "engine") }?;
        let set = PicajitUniforms {
            uniforms: Uniforms::default(),
            mode: engine.config.float_mode,
        };
        // SAFETY: `out` is writable by this function's contract.
        unsafe { handle::create_out(out, set) }
    })
}

/// Destroy a uniform set. NULL is ignored; a handle that is not a live uniform set
/// (destroyed already, of another kind) is `PICAJIT_ERR_INVALID_HANDLE` and frees nothing.
///
/// # Safety
/// No other thread may be using the uniform set.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_destroy(uniforms: *mut PicajitUniforms) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_uniforms_destroy", uniforms, "uniforms") }
}

/// Set float uniforms c`first` .. c`first + count - 1` from `count` rows of 4 floats
/// (x, y, z, w). In f24 mode each value is rounded to f24 with the engine's rounding, as the
/// GPU's f32 upload path does. `count` 0 does nothing (`values` may then be NULL).
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set that no other thread uses during the call;
/// `values` must be NULL or point to `4 * count` readable floats.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_set_float(
    uniforms: *mut PicajitUniforms,
    first: u32,
    count: u32,
    values: *const f32,
) -> PicajitStatus {
    call("picajit_uniforms_set_float", || {
        // SAFETY: this function's contract.
        unsafe {
            set_rows(uniforms, first, count, values, "values", |set, row, v| {
                set.uniforms.set_float_f32(row, v, set.mode);
            })
        }
    })
}

/// Set float uniforms c`first` .. c`first + count - 1` from `count` rows of 4 raw f24
/// patterns (bits 0-23 of each word; the rest is ignored), taken exactly. `count` 0 does
/// nothing (`bits` may then be NULL).
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set that no other thread uses during the call;
/// `bits` must be NULL or point to `4 * count` readable words.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_set_float_f24(
    uniforms: *mut PicajitUniforms,
    first: u32,
    count: u32,
    bits: *const u32,
) -> PicajitStatus {
    call("picajit_uniforms_set_float_f24", || {
        // SAFETY: this function's contract.
        unsafe {
            set_rows(uniforms, first, count, bits, "bits", |set, row, v| {
                set.uniforms.set_float_f24(row, v);
            })
        }
    })
}

/// The body of both `picajit_uniforms_set_float*`: `count` rows of 4 values from `values`
/// stored from c`first` on by `store`.
///
/// # Safety
/// `uniforms` NULL or live and used by no one else; `values` NULL or `4 * count` readable
/// values.
unsafe fn set_rows<T: Copy>(
    uniforms: *mut PicajitUniforms,
    first: u32,
    count: u32,
    values: *const T,
    what: &str,
    store: impl Fn(&mut PicajitUniforms, usize, [T; 4]),
) -> Result<()> {
    // SAFETY: a live uniform set used by no one else, by this function's contract.
    let set = unsafe { handle::get_mut(uniforms, "uniforms") }?;
    let Some(rows) = float_rows(first, count)? else {
        return Ok(());
    };
    // SAFETY: `4 * count` readable values by this function's contract.
    let values = unsafe { args::slice(values, 4 * count as usize, what) }?;
    for (k, row) in values.chunks_exact(4).enumerate() {
        store(set, rows + k, [row[0], row[1], row[2], row[3]]);
    }
    Ok(())
}

/// The first row to write, or `None` for `count` 0: setting no uniforms is a no-op (the
/// pointer is not read and may be NULL), as long as `first` is at most 96.
fn float_rows(first: u32, count: u32) -> Result<Option<usize>> {
    let first_index = if count == 0 && first == FLOAT_ROWS {
        first as usize
    } else {
        register(first, FLOAT_ROWS, "float", 'c')?
    };
    if first.checked_add(count).is_none_or(|end| end > FLOAT_ROWS) {
        return Err(Error::invalid(format!(
            "{count} float uniforms from c{first} do not fit in c0-c95"
        )));
    }
    Ok((count > 0).then_some(first_index))
}

/// Read float uniform c`index` (0-127; c96-c127 read 1.0 as on hardware) into `value[4]`
/// as f32.
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set not being written during the call; `value`
/// must be NULL or point to 4 writable floats.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_get_float(
    uniforms: *const PicajitUniforms,
    index: u32,
    value: *mut f32,
) -> PicajitStatus {
    // c96-c127 read 1.0, as on hardware.
    let row = |s: &PicajitUniforms| Ok(s.uniforms.float(register(index, 128, "float", 'c')?));
    // `[f32; 4]` has the alignment of f32.
    let value = value.cast::<[f32; 4]>();
    // SAFETY: a live uniform set and 4 writable floats (or NULL), by this function's contract.
    unsafe { query!("picajit_uniforms_get_float", uniforms => value, row) }
}

/// Set int uniform i`index` (0-3) to `value[4]` = (x, y, z, w): x = loop count - 1,
/// y = initial aL, z = aL step, w unused.
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set that no other thread uses during the call;
/// `value` must be NULL or point to 4 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_set_int(
    uniforms: *mut PicajitUniforms,
    index: u32,
    value: *const u8,
) -> PicajitStatus {
    call("picajit_uniforms_set_int", || {
        // SAFETY: a live uniform set used by no one else, by this function's contract.
        let set = unsafe { handle::get_mut(uniforms, "uniforms") }?;
        let index = register(index, 4, "int", 'i')?;
        // SAFETY: 4 readable bytes by this function's contract.
        let v = unsafe { args::slice(value, 4, "value") }?;
        set.uniforms.set_int(index, [v[0], v[1], v[2], v[3]]);
        Ok(())
    })
}

/// Set bool uniform b`index` (0-15).
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set that no other thread uses during the call.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_set_bool(
    uniforms: *mut PicajitUniforms,
    index: u32,
    value: bool,
) -> PicajitStatus {
    call("picajit_uniforms_set_bool", || {
        // SAFETY: a live uniform set used by no one else, by this function's contract.
        let set = unsafe { handle::get_mut(uniforms, "uniforms") }?;
        set.uniforms
            .set_bool(register(index, 16, "bool", 'b')?, value);
        Ok(())
    })
}

/// Set all bool uniforms at once from `bits` (bit n = b`n`), the layout of the GPU's bool
/// uniform register.
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set that no other thread uses during the call.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_set_bools(
    uniforms: *mut PicajitUniforms,
    bits: u16,
) -> PicajitStatus {
    call("picajit_uniforms_set_bools", || {
        // SAFETY: a live uniform set used by no one else, by this function's contract.
        let set = unsafe { handle::get_mut(uniforms, "uniforms") }?;
        for n in 0..16 {
            set.uniforms.set_bool(n, bits >> n & 1 != 0);
        }
        Ok(())
    })
}

/// Read all bool uniforms (bit n = b`n`). Geometry-shader runs set b15 after each
/// invocation, as the hardware does.
///
/// # Safety
/// `uniforms` must be NULL or a live uniform set not being written during the call; `bits`
/// must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_uniforms_get_bools(
    uniforms: *const PicajitUniforms,
    bits: *mut u16,
) -> PicajitStatus {
    // SAFETY: a live uniform set and a writable `bits` (or NULL), by this function's
    // contract.
    unsafe { query!("picajit_uniforms_get_bools", uniforms => bits, |s| Ok(s.uniforms.bools())) }
}
