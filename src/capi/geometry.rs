//! Geometry shaders: the state the hardware keeps across invocations (registers, output
//! banks, vertex buffer, SETEMIT parameters), the input mode, and delivery of emitted
//! vertices to the caller.

use super::error::{self, call, Error, PicajitStatus, Result};
use super::layout::{read_row, Layout, PicajitFormat, PicajitVertexLayout};
use super::program::PicajitShader;
use super::run::{exec_error, PicajitRunStats};
use super::uniforms::PicajitUniforms;
use crate::engine::{GeometryRunner, GsInput};
use picajit_interp::exec::RunInfo;
use picajit_interp::program::{GsInputMode, ShaderKind};
use picajit_interp::state::EmittedVertex;
use std::collections::VecDeque;
use std::ffi::c_void;

/// How a geometry shader receives its input vertices (`picajit_geometry_set_mode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitGsMode {
    /// One invocation per input vertex; its attributes arrive in v0-v15
    /// (`picajit_geometry_run_point`).
    PICAJIT_GS_POINT = 0,
    /// Variable-size primitives: c[first_uniform] holds the vertex count in every component
    /// and the attributes follow in the next float uniforms (`picajit_geometry_run_uniforms`).
    PICAJIT_GS_VARIABLE = 1,
    /// Fixed-size primitives: the attributes are written to the float uniforms from
    /// c[first_uniform] on (`picajit_geometry_run_uniforms`).
    PICAJIT_GS_FIXED = 2,
}

pub(crate) fn gs_mode_fields(mode: GsInputMode) -> (PicajitGsMode, u32, u32) {
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

/// How one emitted vertex relates to primitive assembly.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PicajitEmitInfo {
    /// Vertex-buffer slot the vertex was written to (SETEMIT's vertex id, 0-3; slot 3 is never
    /// part of a primitive).
    pub slot: u32,
    /// This EMIT completed a primitive from buffer slots 0, 1 and 2.
    pub primitive: bool,
    /// Winding flag of that primitive (SETEMIT's `inv` bit).
    pub winding: bool,
}

impl PicajitEmitInfo {
    fn of(v: &EmittedVertex) -> PicajitEmitInfo {
        PicajitEmitInfo {
            slot: u32::from(v.slot),
            primitive: v.primitive,
            winding: v.winding,
        }
    }
}

/// Receives one emitted vertex: `vertex` holds its output registers in the layout given to
/// `picajit_geometry_set_emit_callback`, valid only during the call. Must return normally
/// (no C++ exception or longjmp out of it).
pub type PicajitEmitFn = Option<
    unsafe extern "C" fn(user: *mut c_void, vertex: *const c_void, info: *const PicajitEmitInfo),
>;

#[derive(Debug, Clone, Copy)]
struct Callback {
    layout: Layout,
    func: unsafe extern "C" fn(*mut c_void, *const c_void, *const PicajitEmitInfo),
    user: *mut c_void,
}

/// Geometry-shader state for one shader unit, kept across invocations as on hardware. Use
/// from one thread at a time.
#[derive(Debug)]
pub struct PicajitGeometry {
    runner: GeometryRunner,
    mode: GsInputMode,
    pending: VecDeque<EmittedVertex>,
    callback: Option<Callback>,
}

/// Create geometry-shader state: zeroed registers and vertex buffer, point mode, no emitted
/// vertices, no callback. Release it with `picajit_geometry_destroy`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_create(out: *mut *mut PicajitGeometry) -> PicajitStatus {
    call("picajit_geometry_create", || {
        error::check_ptr(out, "out")?;
        let geometry = error::into_handle(PicajitGeometry {
            runner: GeometryRunner::default(),
            mode: GsInputMode::Point,
            pending: VecDeque::new(),
            callback: None,
        });
        // SAFETY: writable by this function's contract (checked non-NULL above).
        unsafe { error::write_out(out, geometry, "out") }
    })
}

/// Destroy geometry-shader state. NULL is ignored.
///
/// # Safety
/// `geometry` must be NULL or live, and no other thread may be using it.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_destroy(geometry: *mut PicajitGeometry) -> PicajitStatus {
    call("picajit_geometry_destroy", || {
        // SAFETY: a live geometry handle or NULL, by this function's contract.
        unsafe { error::destroy_handle(geometry) };
        Ok(())
    })
}

/// Forget everything the hardware would keep between invocations (registers, output banks,
/// vertex buffer, SETEMIT parameters) and drop emitted vertices not yet taken. The mode and
/// the callback stay. (b15 lives in the uniform set: clear it there.)
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_reset(geometry: *mut PicajitGeometry) -> PicajitStatus {
    call("picajit_geometry_reset", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { error::borrow_mut(geometry, "geometry") }?;
        g.runner = GeometryRunner::default();
        g.pending.clear();
        Ok(())
    })
}

/// Set the input mode (a `PicajitGsMode`). `first_uniform` (0-95) is the first float
/// uniform the input stage writes and `vertices` (0-255) the vertices per primitive (fixed
/// mode) or fully defined vertices (variable mode); both are ignored in point mode.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_set_mode(
    geometry: *mut PicajitGeometry,
    mode: u32,
    first_uniform: u32,
    vertices: u32,
) -> PicajitStatus {
    call("picajit_geometry_set_mode", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { error::borrow_mut(geometry, "geometry") }?;
        let first = u8::try_from(first_uniform)
            .ok()
            .filter(|&f| f < 96)
            .ok_or_else(|| Error::invalid(format!("first uniform {first_uniform} is past c95")))?;
        let count = u8::try_from(vertices)
            .map_err(|_| Error::invalid(format!("vertex count {vertices} is over 255")))?;
        g.mode = match mode {
            0 => GsInputMode::Point,
            1 => GsInputMode::Variable {
                first_uniform: first,
                full_vertices: count,
            },
            2 => GsInputMode::Fixed {
                first_uniform: first,
                vertices: count,
            },
            v => return Err(Error::invalid(format!("unknown geometry-shader mode {v}"))),
        };
        Ok(())
    })
}

/// Deliver emitted vertices to `func` at the end of every invocation, in emission order,
/// with their outputs in `layout` (its stride is not used). Without a callback (`func` NULL,
/// the default; `layout` may then be NULL) emitted vertices accumulate until
/// `picajit_geometry_take`. Vertices already pending when a callback is set stay pending.
///
/// The callback runs on the thread that runs the shader. It may call picajit functions, but
/// must not destroy or reset `geometry`.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `layout`
/// must be NULL or readable; `func` must be NULL or a function of the documented type that
/// may be called with `user` until the callback is replaced or `geometry` destroyed.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_set_emit_callback(
    geometry: *mut PicajitGeometry,
    layout: *const PicajitVertexLayout,
    func: PicajitEmitFn,
    user: *mut c_void,
) -> PicajitStatus {
    call("picajit_geometry_set_emit_callback", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { error::borrow_mut(geometry, "geometry") }?;
        g.callback = match func {
            None => None,
            Some(func) => {
                // SAFETY: readable by this function's contract.
                let raw = unsafe { error::borrow(layout, "layout") }?;
                Some(Callback {
                    layout: Layout::new(raw, "layout")?,
                    func,
                    user,
                })
            }
        };
        Ok(())
    })
}

/// Number of emitted vertices waiting for `picajit_geometry_take`.
///
/// # Safety
/// `geometry` must be NULL or live and not used mutably during the call; `count` must be
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_pending(
    geometry: *const PicajitGeometry,
    count: *mut usize,
) -> PicajitStatus {
    call("picajit_geometry_pending", || {
        // SAFETY: live by this function's contract.
        let g = unsafe { error::borrow(geometry, "geometry") }?;
        // SAFETY: writable by this function's contract.
        unsafe { error::write_out(count, g.pending.len(), "count") }
    })
}

/// Move up to `capacity` pending emitted vertices, oldest first, into caller buffers: the
/// outputs of the k-th to `vertices + k * layout->stride` and its flags to `infos[k]`.
/// `*taken` receives how many were moved; the rest stay pending.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `layout`
/// must be NULL or readable; `vertices` must be NULL or writable for `capacity` vertices of
/// the layout; `infos` NULL or writable for `capacity` entries; `taken` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_take(
    geometry: *mut PicajitGeometry,
    layout: *const PicajitVertexLayout,
    vertices: *mut c_void,
    infos: *mut PicajitEmitInfo,
    capacity: usize,
    taken: *mut usize,
) -> PicajitStatus {
    call("picajit_geometry_take", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { error::borrow_mut(geometry, "geometry") }?;
        // SAFETY: readable by this function's contract.
        let layout = Layout::new(unsafe { error::borrow(layout, "layout") }?, "layout")?;
        let len = layout.span(capacity, "vertices")?;
        // SAFETY: writable for the span of `capacity` vertices by this function's contract.
        let bytes = unsafe { error::bytes_mut(vertices.cast(), len, "vertices") }?;
        error::check_ptr(infos, "infos")?;
        error::check_ptr(taken, "taken")?;
        let n = capacity.min(g.pending.len());
        if n > 0 {
            // SAFETY: non-NULL and aligned (checked above), `capacity >= n` writable
            // entries by this function's contract.
            let infos = unsafe { std::slice::from_raw_parts_mut(infos, n) };
            for (k, (v, info)) in g.pending.drain(..n).zip(infos).enumerate() {
                layout.write(bytes, k, &v.outputs);
                *info = PicajitEmitInfo::of(&v);
            }
        }
        // SAFETY: writable by this function's contract (checked above).
        unsafe { error::write_out(taken, n, "taken") }
    })
}

/// What an invocation needs besides the geometry state.
struct Invocation<'a> {
    shader: &'a PicajitShader,
    uniforms: &'a mut PicajitUniforms,
}

/// Borrow the objects of a run and check that they belong together.
///
/// # Safety
/// Each pointer must be NULL or a live object of its type; `geometry` and `uniforms` must
/// not be used by anyone else during `'a`.
unsafe fn invocation<'a>(
    geometry: *mut PicajitGeometry,
    shader: *const PicajitShader,
    uniforms: *mut PicajitUniforms,
) -> Result<(&'a mut PicajitGeometry, Invocation<'a>)> {
    // SAFETY: this function's precondition.
    let (g, shader, uniforms) = unsafe {
        (
            error::borrow_mut(geometry, "geometry")?,
            error::borrow(shader, "shader")?,
            error::borrow_mut(uniforms, "uniforms")?,
        )
    };
    if shader.kind() != ShaderKind::Geometry {
        return Err(Error::invalid("the shader is a vertex shader"));
    }
    uniforms.check_mode(&shader.shader)?;
    Ok((g, Invocation { shader, uniforms }))
}

/// After an invocation (also a failed one, whose EMITs before the failure did happen):
/// collect its emitted vertices, queue them or hand them over for the callback.
fn collect(g: &mut PicajitGeometry) -> Option<(Callback, Vec<EmittedVertex>)> {
    let (emitted, _primitives) = g.runner.state.take_output();
    match g.callback {
        Some(cb) => Some((cb, emitted)),
        None => {
            g.pending.extend(emitted);
            None
        }
    }
}

/// Call the callback for each vertex. Runs after every borrow of the objects has ended, so
/// the callback may call into the library.
fn deliver(delivery: Option<(Callback, Vec<EmittedVertex>)>) {
    let Some((cb, emitted)) = delivery else {
        return;
    };
    let mut buf = vec![0u8; cb.layout.span(1, "layout").unwrap_or(0)];
    for v in &emitted {
        cb.layout.write(&mut buf, 0, &v.outputs);
        let info = PicajitEmitInfo::of(v);
        // SAFETY: the caller of picajit_geometry_set_emit_callback promised that `func` may
        // be called with `user`; both pointers passed are valid for the call.
        unsafe { (cb.func)(cb.user, buf.as_ptr().cast(), &info) };
    }
}

fn finish(
    result: std::result::Result<RunInfo, picajit_interp::exec::ExecError>,
    delivery: Option<(Callback, Vec<EmittedVertex>)>,
    stats: *mut PicajitRunStats,
) -> Result<()> {
    deliver(delivery);
    let totals = PicajitRunStats {
        instructions: result.as_ref().map_or(0, |i| i.instructions),
        vertices: usize::from(result.is_ok()),
    };
    if !stats.is_null() {
        // SAFETY: NULL or writable by the run functions' contract (alignment is checked).
        unsafe { error::write_out(stats, totals, "stats") }?;
    }
    result.map(drop).map_err(|e| exec_error(&e))
}

/// Run one point-mode invocation: the input vertex (one vertex in `layout`, its stride
/// unused) goes to v0-v15, the registers and vertex buffer carry over from the previous
/// invocation, and b15 of `uniforms` is set afterwards, as on hardware. Emitted vertices go
/// to the callback or become pending. `stats` may be NULL (`vertices` is 1 on success).
///
/// Errors: `PICAJIT_ERR_INVALID_ARGUMENT` if the mode is not point mode, the shader is a
/// vertex shader, or the uniform set is of another float mode; `PICAJIT_ERR_EXEC` when the
/// invocation fails (vertices it emitted before are still delivered).
///
/// # Safety
/// `geometry`, `shader`, `uniforms` must be NULL or live (`geometry` and `uniforms` used by
/// no other thread during the call); `layout` NULL or readable; `vertex` NULL or readable for
/// one vertex of the layout; `stats` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_run_point(
    geometry: *mut PicajitGeometry,
    shader: *const PicajitShader,
    uniforms: *mut PicajitUniforms,
    layout: *const PicajitVertexLayout,
    vertex: *const c_void,
    stats: *mut PicajitRunStats,
) -> PicajitStatus {
    call("picajit_geometry_run_point", || {
        // SAFETY: this function's contract.
        let (g, inv) = unsafe { invocation(geometry, shader, uniforms) }?;
        if g.mode != GsInputMode::Point {
            return Err(Error::invalid(
                "the geometry state is not in point mode; use picajit_geometry_run_uniforms",
            ));
        }
        // SAFETY: readable by this function's contract.
        let layout = Layout::new(unsafe { error::borrow(layout, "layout") }?, "layout")?;
        let len = layout.span(1, "vertex")?;
        // SAFETY: readable for one vertex of the layout by this function's contract.
        let bytes = unsafe { error::slice(vertex.cast::<u8>(), len, "vertex") }?;
        if !stats.is_null() {
            error::check_ptr(stats, "stats")?;
        }
        let input = layout.read(bytes, 0);
        let s = &inv.shader.shader;
        let exact = input
            .iter()
            .all(|row| s.convert_row(*row).map(f32::to_bits) == row.map(f32::to_bits));
        let result = if layout.format == PicajitFormat::PICAJIT_FORMAT_F32 || exact {
            g.runner.invoke(
                s,
                g.mode,
                &mut inv.uniforms.uniforms,
                GsInput::Point(&input),
            )
        } else {
            // f24 patterns that attribute conversion would change (flushed subnormal
            // patterns, NaN payloads) must reach v0-v15 exactly: what `invoke` does, without
            // its conversion.
            g.runner.registers.input = input;
            let r = s.run(
                &mut g.runner.registers,
                &inv.uniforms.uniforms,
                Some(&mut g.runner.state),
            );
            inv.uniforms.uniforms.set_bool(15, true);
            r
        };
        let delivery = collect(g);
        finish(result, delivery, stats)
    })
}

/// Run one invocation in variable or fixed mode: `row_count` rows of 4 values in `format`
/// (a `PicajitFormat`), contiguous, are written to the float uniforms from c[first_uniform]
/// on (in variable mode from c[first_uniform + 1], after a row holding `vertex_count` in
/// every component); then the shader runs with the registers and vertex buffer kept from the
/// previous invocation, and b15 is set afterwards. Emitted vertices go to the callback or
/// become pending. `stats` may be NULL.
///
/// Errors: `PICAJIT_ERR_INVALID_ARGUMENT` in point mode, for rows that would pass c95, a
/// `vertex_count` over 255, an unknown format, a vertex shader or a uniform set of another
/// float mode; `PICAJIT_ERR_EXEC` when the invocation fails.
///
/// # Safety
/// `geometry`, `shader`, `uniforms` must be NULL or live (`geometry` and `uniforms` used by
/// no other thread during the call); `rows` NULL or readable for `16 * row_count` bytes;
/// `stats` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_run_uniforms(
    geometry: *mut PicajitGeometry,
    shader: *const PicajitShader,
    uniforms: *mut PicajitUniforms,
    format: u32,
    rows: *const c_void,
    row_count: u32,
    vertex_count: u32,
    stats: *mut PicajitRunStats,
) -> PicajitStatus {
    call("picajit_geometry_run_uniforms", || {
        // SAFETY: this function's contract.
        let (g, inv) = unsafe { invocation(geometry, shader, uniforms) }?;
        let format = PicajitFormat::from_raw(format)?;
        let first = match g.mode {
            GsInputMode::Point => {
                return Err(Error::invalid(
                    "the geometry state is in point mode; use picajit_geometry_run_point",
                ))
            }
            GsInputMode::Variable { first_uniform, .. } => usize::from(first_uniform) + 1,
            GsInputMode::Fixed { first_uniform, .. } => usize::from(first_uniform),
        };
        if first + row_count as usize > 96 {
            return Err(Error::invalid(format!(
                "{row_count} rows from c{first} do not fit in c0-c95"
            )));
        }
        let count = u8::try_from(vertex_count)
            .map_err(|_| Error::invalid(format!("vertex count {vertex_count} is over 255")))?;
        // SAFETY: `16 * row_count` readable bytes by this function's contract.
        let bytes = unsafe { error::slice(rows.cast::<u8>(), 16 * row_count as usize, "rows") }?;
        if !stats.is_null() {
            error::check_ptr(stats, "stats")?;
        }
        let s = &inv.shader.shader;
        // The rows are written here rather than by `invoke`, which would convert f24
        // patterns like attributes; f32 rows get exactly its conversion.
        for k in 0..row_count as usize {
            let row = read_row(bytes, 16 * k, format);
            let row = match format {
                PicajitFormat::PICAJIT_FORMAT_F32 => s.convert_row(row),
                PicajitFormat::PICAJIT_FORMAT_F24 => row,
            };
            inv.uniforms.uniforms.set_float_raw(first + k, row);
        }
        let input = GsInput::Uniforms { rows: &[], count };
        let result = g
            .runner
            .invoke(s, g.mode, &mut inv.uniforms.uniforms, input);
        let delivery = collect(g);
        finish(result, delivery, stats)
    })
}
