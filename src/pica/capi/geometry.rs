//! Geometry shaders: the state the hardware keeps across invocations (registers, output
//! banks, vertex buffer, SETEMIT parameters), the input mode, and delivery of emitted
//! vertices to the caller.

use super::layout::{read_row, Layout, PicajitFormat, PicajitVertexLayout};
use super::run::{failed_invocation, PicajitRunStats};
use super::shader::{PicajitGsMode, PicajitShader};
use super::state::{entry_shader, PicajitEmitState, PicajitUnitState, PICAJIT_ENTRY_DEFAULT};
use super::uniforms::PicajitUniforms;
use crate::capi::args;
use crate::capi::cenum::CEnum;
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle::{self, query};
use crate::pica::engine::Shader;
use crate::pica::engine::{self, Attributes, GeometryRunner, GsInput, Outcome};
use picajit_interp::pica::program::{GsInputMode, ShaderKind};
use picajit_interp::pica::state::{EmitBuffer, EmittedVertex, UnitState};
use std::collections::VecDeque;
use std::ffi::c_void;

/// Points run per engine call by `picajit_geometry_run_points`, and the most whose emitted
/// vertices are held at once: a multiple of the multi-vertex group size (eight), small enough
/// that memory stays bounded for any `count`.
const POINTS_CHUNK: usize = 256;

impl PicajitEmitState {
    fn of(v: &EmittedVertex) -> PicajitEmitState {
        PicajitEmitState {
            slot: u32::from(v.slot),
            primitive: u8::from(v.primitive),
            winding: u8::from(v.winding),
            reserved: [0; 2],
        }
    }
}

/// Everything a geometry unit keeps from one invocation to the next, for save states
/// (`picajit_geometry_get_state`, `picajit_geometry_set_state`): a unit restored from it
/// continues exactly as the one it was taken from, mid-primitive included. Versioned by
/// `struct_size` (the rule at the top of this header).
///
/// Register values are f32 as the unit holds them (in f24 modes, f24 values). Emitted
/// vertices not yet taken (`picajit_geometry_take`) are not part of it, nor are the
/// object's settings (input mode, entry point, callback).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitGeometryState {
    /// `sizeof(PicajitGeometryState)` as the caller compiled it.
    pub struct_size: u32,
    /// The SETEMIT state the next EMIT uses.
    pub emit: PicajitEmitState,
    /// r0-r15, a0, aL, cmp (as `picajit_geometry_get_unit_state`).
    pub unit: PicajitUnitState,
    /// v0-v15 as the last invocation left them (point-mode runs replace them per
    /// invocation; in variable and fixed modes they keep their values).
    pub inputs: [[f32; 4]; 16],
    /// The output bank being written: o0-o15 as the program left them, including values
    /// written since the last EMIT (not emitted yet).
    pub outputs: [[f32; 4]; 16],
    /// The other output bank (EMIT swaps the two, so a component not rewritten since the
    /// last EMIT holds the value of two EMITs ago).
    pub other_outputs: [[f32; 4]; 16],
    /// The vertex buffer: the vertex each slot holds (slot 3 is never part of a primitive).
    pub buffer: [[[f32; 4]; 16]; 4],
}

/// Receives one emitted vertex: `vertex` holds its output registers in the layout given to
/// `picajit_geometry_set_emit_callback`, valid only during the call. Must return normally
/// (no C++ exception or longjmp out of it).
pub type PicajitEmitFn = Option<
    unsafe extern "C" fn(user: *mut c_void, vertex: *const c_void, info: *const PicajitEmitState),
>;

#[derive(Debug, Clone, Copy)]
struct Callback {
    layout: Layout,
    func: unsafe extern "C" fn(*mut c_void, *const c_void, *const PicajitEmitState),
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
    /// Entry point the runs use (`picajit_geometry_set_entry`).
    entry: u32,
    /// r0-r15 and v0-v15 were set without a shader (`picajit_geometry_set_unit_state`,
    /// `picajit_geometry_set_state`) and are converted for the float mode of the next run.
    unconverted: bool,
}

impl PicajitGeometry {
    /// Convert registers set without a shader for `shader`'s float mode, as
    /// `picajit_shader_run_batch_ex` takes `state_in` (f24 values bit for bit).
    fn settle(&mut self, shader: &Shader) {
        if !std::mem::take(&mut self.unconverted) {
            return;
        }
        let regs = &mut self.runner.registers;
        regs.set_unit_state(&shader.convert_state(&regs.unit_state()));
        let inputs = UnitState {
            temp: regs.input,
            ..UnitState::default()
        };
        regs.input = shader.convert_state(&inputs).temp;
    }
}

impl handle::Handle for PicajitGeometry {
    const NAME: &'static str = "geometry";
}

/// Create geometry-shader state: zeroed registers and vertex buffer, point mode, no emitted
/// vertices, no callback. Release it with `picajit_geometry_destroy`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_create(out: *mut *mut PicajitGeometry) -> PicajitStatus {
    call("picajit_geometry_create", || {
        let geometry = PicajitGeometry {
            runner: GeometryRunner::default(),
            mode: GsInputMode::Point,
            pending: VecDeque::new(),
            callback: None,
            entry: PICAJIT_ENTRY_DEFAULT,
            unconverted: false,
        };
        // SAFETY: writable by this function's contract.
        unsafe { handle::create_out(out, geometry) }
    })
}

/// Destroy geometry-shader state. NULL is ignored; a handle that is not live geometry state
/// (destroyed already, of another kind) is `PICAJIT_ERR_INVALID_HANDLE` and frees nothing.
///
/// # Safety
/// No other thread may be using it.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_destroy(geometry: *mut PicajitGeometry) -> PicajitStatus {
    // SAFETY: no concurrent user by this function's contract.
    unsafe { handle::destroy_entry("picajit_geometry_destroy", geometry, "geometry") }
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
        let g = unsafe { handle::get_mut(geometry, "geometry") }?;
        g.runner = GeometryRunner::default();
        g.pending.clear();
        g.unconverted = false;
        Ok(())
    })
}

/// The unit state the next invocation starts from (what the last one left): r0-r15, a0,
/// aL, cmp. Geometry invocations carry it over, as on hardware.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `state`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_get_unit_state(
    geometry: *const PicajitGeometry,
    state: *mut PicajitUnitState,
) -> PicajitStatus {
    let value = |g: &PicajitGeometry| Ok(PicajitUnitState::of(&g.runner.registers.unit_state()));
    // SAFETY: live geometry state and a writable `state` (or NULL), by this function's
    // contract.
    unsafe { query!("picajit_geometry_get_unit_state", geometry => state, value) }
}

/// Set the unit state the next invocation starts from (r0-r15, a0, aL, cmp; the output
/// banks, vertex buffer and SETEMIT state are kept). r0-r15 are taken for a float mode as
/// `picajit_shader_run_batch_ex` takes `state_in`: f24 values bit for bit, other f32 values
/// rounded like float uniforms (in F32 mode, as given). The float mode is `shader`'s; with
/// `shader` NULL (a save state restored before any program is bound) the values are stored
/// as given and taken for the float mode of the shader of the next run, with the same
/// result. Values read back before that run are those given.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `shader`
/// NULL or live; `state` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_set_unit_state(
    geometry: *mut PicajitGeometry,
    shader: *const PicajitShader,
    state: *const PicajitUnitState,
) -> PicajitStatus {
    call("picajit_geometry_set_unit_state", || {
        // SAFETY: live, exclusive and readable by this function's contract.
        let (g, shader, state) = unsafe {
            (
                handle::get_mut(geometry, "geometry")?,
                if shader.is_null() {
                    None
                } else {
                    Some(handle::get(shader, "shader")?)
                },
                args::borrow(state, "state")?,
            )
        };
        g.runner.registers.set_unit_state(&state.to_state());
        g.unconverted = true;
        if let Some(shader) = shader {
            g.settle(&shader.shader);
        }
        Ok(())
    })
}

/// The SETEMIT state the next EMIT uses (vertex id, primitive and winding flags), as the
/// last SETEMIT left it (all 0 after `picajit_geometry_create` and `_reset`).
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `state`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_get_emit_state(
    geometry: *const PicajitGeometry,
    state: *mut PicajitEmitState,
) -> PicajitStatus {
    let value = |g: &PicajitGeometry| Ok(g.emit_state());
    // SAFETY: live geometry state and a writable `state` (or NULL), by this function's
    // contract.
    unsafe { query!("picajit_geometry_get_emit_state", geometry => state, value) }
}

/// Set the SETEMIT state the next EMIT uses, as a SETEMIT instruction would.
///
/// Errors: `PICAJIT_ERR_INVALID_ARGUMENT` for a slot (vertex id) over 3 (SETEMIT's field is
/// two bits) or a flag other than 0 or 1.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `state`
/// NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_set_emit_state(
    geometry: *mut PicajitGeometry,
    state: *const PicajitEmitState,
) -> PicajitStatus {
    call("picajit_geometry_set_emit_state", || {
        // SAFETY: live, exclusive and readable by this function's contract.
        let (g, state) = unsafe {
            (
                handle::get_mut(geometry, "geometry")?,
                args::borrow(state, "state")?,
            )
        };
        state.check()?;
        g.set_emit_state(state);
        Ok(())
    })
}

impl PicajitGeometry {
    fn emit_state(&self) -> PicajitEmitState {
        let st = &self.runner.state;
        PicajitEmitState {
            slot: u32::from(st.vertex_id),
            primitive: u8::from(st.primitive),
            winding: u8::from(st.winding),
            reserved: [0; 2],
        }
    }

    /// Set from a checked state.
    fn set_emit_state(&mut self, state: &PicajitEmitState) {
        let st = &mut self.runner.state;
        st.vertex_id = state.slot as u8;
        st.primitive = state.primitive == 1;
        st.winding = state.winding == 1;
    }

    fn state(&self, struct_size: u32) -> PicajitGeometryState {
        let regs = &self.runner.registers;
        let st = &self.runner.state;
        PicajitGeometryState {
            struct_size,
            emit: self.emit_state(),
            unit: PicajitUnitState::of(&regs.unit_state()),
            inputs: regs.input,
            outputs: regs.output,
            other_outputs: st.other_bank,
            buffer: st.slots,
        }
    }
}

/// Save the whole state of a geometry unit (see `PicajitGeometryState`) into `*state`,
/// whose `struct_size` the caller sets. Taken between runs, it holds a unit mid-primitive:
/// restoring it with `picajit_geometry_set_state` into this or a fresh geometry object
/// continues bit for bit, on every engine.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `state`
/// NULL or writable for `state->struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_get_state(
    geometry: *const PicajitGeometry,
    state: *mut PicajitGeometryState,
) -> PicajitStatus {
    call("picajit_geometry_get_state", || {
        // SAFETY: live by this function's contract.
        let g = unsafe { handle::get(geometry, "geometry") }?;
        args::check_ptr(state, "state")?;
        // SAFETY: non-NULL and aligned (checked above); `struct_size` is the first field.
        let struct_size = unsafe { state.cast::<u32>().read() };
        let value = g.state(struct_size);
        let hint = "set it to sizeof(PicajitGeometryState)";
        // SAFETY: `struct_size` writable bytes by this function's contract.
        unsafe { args::write_versioned(state, "state", &[], hint, value) }
    })
}

/// Restore the whole state of a geometry unit from `*state` (taken by
/// `picajit_geometry_get_state`, possibly from another object or process). No shader is
/// needed: r0-r15 and v0-v15 are taken for the float mode of the next run's shader as
/// `picajit_geometry_set_unit_state` with a NULL shader takes them (values a unit of that
/// mode saved are kept bit for bit); the output banks and the vertex buffer are taken as
/// given (they reach only emitted vertices). Vertices pending for `picajit_geometry_take`
/// stay pending; the input mode, entry point and callback are kept.
///
/// Errors: `PICAJIT_ERR_INVALID_ARGUMENT` for a bad `struct_size` or an emit state out of
/// range (as `picajit_geometry_set_emit_state`); nothing is changed then.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call; `state`
/// NULL or readable for `state->struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_set_state(
    geometry: *mut PicajitGeometry,
    state: *const PicajitGeometryState,
) -> PicajitStatus {
    call("picajit_geometry_set_state", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { handle::get_mut(geometry, "geometry") }?;
        let base = g.state(0);
        let hint = "set it to sizeof(PicajitGeometryState)";
        // SAFETY: `struct_size` readable bytes by this function's contract.
        let st = unsafe { args::read_versioned(state, "state", &[], hint, base) }?;
        st.emit.check()?;
        g.set_emit_state(&st.emit);
        let regs = &mut g.runner.registers;
        regs.set_unit_state(&st.unit.to_state());
        regs.input = st.inputs;
        regs.output = st.outputs;
        let gs = &mut g.runner.state;
        gs.other_bank = st.other_outputs;
        gs.slots = st.buffer;
        // Emitted records are collected after every run, so none are held here; the replay
        // point of primitive assembly is the restored buffer.
        gs.emitted.clear();
        gs.mark_drained();
        g.unconverted = true;
        Ok(())
    })
}

/// The entry point (in words) the following runs on `geometry` start the geometry shader
/// at, or `PICAJIT_ENTRY_DEFAULT` (the initial setting) for the shader's own. The code for
/// each entry point is prepared once per shader, on its first run. An entry outside the
/// shader's code fails the run with `PICAJIT_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `geometry` must be NULL or live and used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_set_entry(
    geometry: *mut PicajitGeometry,
    entry: u32,
) -> PicajitStatus {
    call("picajit_geometry_set_entry", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { handle::get_mut(geometry, "geometry") }?;
        g.entry = entry;
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
        let g = unsafe { handle::get_mut(geometry, "geometry") }?;
        g.mode = PicajitGsMode::input_mode(mode, first_uniform, vertices)?;
        Ok(())
    })
}

/// Deliver emitted vertices to `func` at the end of every invocation (with
/// `picajit_geometry_run_points`: after every few hundred invocations), in emission order,
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
        let g = unsafe { handle::get_mut(geometry, "geometry") }?;
        g.callback = match func {
            None => None,
            Some(func) => {
                // SAFETY: readable by this function's contract.
                let raw = unsafe { args::borrow(layout, "layout") }?;
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
    // SAFETY: live geometry state and a writable `count` (or NULL), by this function's
    // contract.
    unsafe { query!("picajit_geometry_pending", geometry => count, |g| Ok(g.pending.len())) }
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
    infos: *mut PicajitEmitState,
    capacity: usize,
    taken: *mut usize,
) -> PicajitStatus {
    call("picajit_geometry_take", || {
        // SAFETY: live and exclusive by this function's contract.
        let g = unsafe { handle::get_mut(geometry, "geometry") }?;
        // SAFETY: readable by this function's contract.
        let layout = Layout::new(unsafe { args::borrow(layout, "layout") }?, "layout")?;
        let len = layout.span(capacity, "vertices")?;
        // SAFETY: writable for the span of `capacity` vertices by this function's contract.
        let bytes = unsafe { args::bytes_mut(vertices.cast(), len, "vertices") }?;
        args::check_ptr(infos, "infos")?;
        args::check_ptr(taken, "taken")?;
        let n = capacity.min(g.pending.len());
        if n > 0 {
            // SAFETY: non-NULL and aligned (checked above), `capacity >= n` writable
            // entries by this function's contract.
            let infos = unsafe { std::slice::from_raw_parts_mut(infos, n) };
            for (k, (v, info)) in g.pending.drain(..n).zip(infos).enumerate() {
                layout.write(bytes, k, &v.outputs);
                *info = PicajitEmitState::of(&v);
            }
        }
        // SAFETY: writable by this function's contract (checked above).
        unsafe { args::write_out(taken, n, "taken") }
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
            handle::get_mut(geometry, "geometry")?,
            handle::get(shader, "shader")?,
            handle::get_mut(uniforms, "uniforms")?,
        )
    };
    uniforms.check_mode(&shader.shader)?;
    Ok((g, Invocation { shader, uniforms }))
}

fn point_mode(g: &PicajitGeometry) -> Result<()> {
    if g.mode != GsInputMode::Point {
        return Err(Error::invalid(
            "the geometry state is not in point mode; use picajit_geometry_run_uniforms",
        ));
    }
    Ok(())
}

/// The input of point-mode invocations: the layout and the bytes of `count` vertices in it
/// (`what` names them), after checking `stats` too.
///
/// # Safety
/// `layout` NULL or readable; `vertices` NULL or readable for `count` vertices of the layout,
/// and not written during `'a`.
unsafe fn points<'a>(
    layout: *const PicajitVertexLayout,
    vertices: *const c_void,
    count: usize,
    what: &str,
    stats: *mut PicajitRunStats,
) -> Result<(Layout, &'a [u8])> {
    // SAFETY: readable by this function's contract.
    let layout = Layout::new(unsafe { args::borrow(layout, "layout") }?, "layout")?;
    super::layout::check_count(count, "count")?;
    let len = layout.span(count, what)?;
    // SAFETY: readable for `count` vertices of the layout by this function's contract.
    let bytes = unsafe { args::slice(vertices.cast::<u8>(), len, what) }?;
    args::check_optional(stats, "stats")?;
    Ok((layout, bytes))
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
        let info = PicajitEmitState::of(v);
        // SAFETY: the caller of picajit_geometry_set_emit_callback promised that `func` may
        // be called with `user`; both pointers passed are valid for the call.
        unsafe { (cb.func)(cb.user, buf.as_ptr().cast(), &info) };
    }
}

fn finish(
    result: std::result::Result<Outcome, crate::Error>,
    delivery: Option<(Callback, Vec<EmittedVertex>)>,
    stats: *mut PicajitRunStats,
) -> Result<()> {
    deliver(delivery);
    let totals = PicajitRunStats {
        instructions: result.as_ref().map_or(0, |i| i.instructions),
        vertices: usize::from(result.is_ok()),
    };
    // SAFETY: NULL or writable by the run functions' contract.
    unsafe { args::write_optional(stats, totals, "stats") }?;
    result
        .map(drop)
        .map_err(|e| Error::new(PicajitStatus::PICAJIT_ERR_EXEC, failed_invocation(e).1))
}

/// Run one point-mode invocation: the input vertex (one vertex in `layout`, its stride
/// unused) goes to v0-v15, the registers and vertex buffer carry over from the previous
/// invocation, and b15 of `uniforms` is set afterwards, as on hardware. Emitted vertices go
/// to the callback or become pending. `stats` may be NULL (`vertices` is 1 on success).
///
/// Any shader runs here, whatever unit it was created for (`PicajitShaderKind`).
///
/// Errors: `PICAJIT_ERR_INVALID_ARGUMENT` if the mode is not point mode or the uniform set
/// is of another float mode; `PICAJIT_ERR_EXEC` when the
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
        point_mode(g)?;
        // SAFETY: this function's contract.
        let (layout, bytes) = unsafe { points(layout, vertex, 1, "vertex", stats) }?;
        let input = layout.read(bytes, 0);
        let s = &*entry_shader(&inv.shader.shader, g.entry, ShaderKind::Geometry)?;
        g.settle(s);
        let result = match layout.format {
            PicajitFormat::PICAJIT_FORMAT_F32 => g.runner.invoke(
                s,
                g.mode,
                &mut inv.uniforms.uniforms,
                GsInput::Point(&input),
            ),
            PicajitFormat::PICAJIT_FORMAT_F24 => {
                // Raw f24 words reach v0-v15 exactly: what `invoke` does with
                // `GsInput::PointF24`, on the words `Layout::read` widened already.
                let r = s.invoke(
                    engine::Invocation::one(&inv.uniforms.uniforms, &mut g.runner.registers)
                        .geometry(Some(&mut g.runner.state))
                        .input(Attributes::Registers(std::slice::from_ref(&input))),
                );
                inv.uniforms.uniforms.set_bool(15, true);
                r
            }
        };
        let delivery = collect(g);
        finish(result, delivery, stats)
    })
}

/// Emitted vertices of a chunk of `picajit_geometry_run_points` as whole records, rebuilt
/// from the packed buffer the engine fills.
///
/// The engine keeps only the registers the emit layout names that the program writes (so
/// that the JIT can run eight invocations per group). No other output register is written
/// while a chunk of points runs, so at each EMIT it holds what it held in the output bank
/// current then; EMIT records the current bank and swaps the two, so EMIT `j` of a chunk
/// (counted from 0) records bank `j % 2` of the banks as they were when the chunk started.
struct Rebuild {
    /// `Registers::output` and `GeometryState::other_bank` at the start of the chunk.
    banks: [[[f32; 4]; 16]; 2],
    /// EMITs since the start of the chunk.
    emits: usize,
}

impl Rebuild {
    /// Append the vertices of `buf` to `records`.
    fn unpack(&mut self, buf: &EmitBuffer, records: &mut Vec<EmittedVertex>) {
        records.reserve(buf.len());
        for i in 0..buf.len() {
            let (rows, flags) = buf.vertex(i);
            let mut outputs = self.banks[self.emits % 2];
            let mut mask = buf.mask();
            for row in rows {
                let r = mask.trailing_zeros() as usize;
                outputs[r] = *row;
                mask &= mask - 1;
            }
            records.push(EmittedVertex {
                outputs,
                slot: flags.slot,
                primitive: flags.primitive,
                winding: flags.winding,
            });
            self.emits += 1;
        }
    }
}

/// Runs `picajit_geometry_run_points` chunk by chunk; see there.
struct PointsRun<'a> {
    geometry: *mut PicajitGeometry,
    shader: *const PicajitShader,
    uniforms: *mut PicajitUniforms,
    layout: Layout,
    vertices: &'a [u8],
    count: usize,
}

impl PointsRun<'_> {
    /// Run every point; `stats` counts what completed even when a point fails.
    ///
    /// # Safety
    /// The object pointers must be NULL or live, and `geometry` and `uniforms` used by
    /// nothing else during the call except the emit callback, which must not destroy or
    /// reset them (the contract of `picajit_geometry_run_points`).
    unsafe fn run(&self, stats: &mut PicajitRunStats) -> Result<()> {
        let mut staged = vec![[[0.0f32; 4]; 16]; POINTS_CHUNK.min(self.count)];
        let mut buf = EmitBuffer::new(0);
        let mut start = 0;
        loop {
            // The objects are borrowed again for every chunk: the emit callback, called
            // between chunks, may call into the library with them.
            // SAFETY: this function's precondition; the borrows end before `deliver`.
            let (g, inv) = unsafe { invocation(self.geometry, self.shader, self.uniforms) }?;
            point_mode(g)?;
            if start == self.count {
                return Ok(());
            }
            let at = entry_shader(&inv.shader.shader, g.entry, ShaderKind::Geometry)?;
            let s = &*at;
            g.settle(s);
            let uniforms = &mut inv.uniforms.uniforms;
            let mut rebuild = Rebuild {
                banks: [g.runner.registers.output, g.runner.state.other_bank],
                emits: 0,
            };
            // Vertices emitted before this call and not yet collected (none, normally).
            let mut records = g.runner.state.take_output().0;
            let n = POINTS_CHUNK.min(self.count - start);
            for (k, v) in staged[..n].iter_mut().enumerate() {
                *v = self.layout.read(self.vertices, start + k);
            }
            // What the consumer reads: the callback's layout, or everything for
            // `picajit_geometry_take`; of it, the engine keeps what the program writes.
            let wanted = g.callback.map_or(0xFFFF, |cb| cb.layout.mask());
            let mask = wanted & s.output_mask();
            if buf.mask() != mask {
                buf = EmitBuffer::new(mask);
            }
            // f32 attributes are converted by the input rule; raw f24 words reach v0-v15
            // exactly (on the same multi-vertex path).
            buf.clear();
            let r = match self.layout.format {
                PicajitFormat::PICAJIT_FORMAT_F32 => {
                    g.runner.invoke_points(s, uniforms, &staged[..n], &mut buf)
                }
                PicajitFormat::PICAJIT_FORMAT_F24 => g.runner.invoke_points(
                    s,
                    uniforms,
                    Attributes::Registers(&staged[..n]),
                    &mut buf,
                ),
            };
            rebuild.unpack(&buf, &mut records);
            let failed = match r {
                Ok(info) => {
                    stats.instructions += info.instructions;
                    None
                }
                Err(e) => Some(failed_invocation(e)),
            };
            stats.vertices = start + failed.as_ref().map_or(n, |(k, _)| *k);
            let delivery = match g.callback {
                Some(cb) => Some((cb, records)),
                None => {
                    g.pending.extend(records);
                    None
                }
            };
            deliver(delivery);
            if let Some((k, e)) = failed {
                stats.instructions = 0;
                return Err(Error::new(
                    PicajitStatus::PICAJIT_ERR_EXEC,
                    format!("point {}: {e}", start + k),
                ));
            }
            start += n;
        }
    }
}

/// Run `count` point-mode invocations, one per input vertex, as a GPU runs a draw and as
/// `count` calls of `picajit_geometry_run_point` would: vertex k (at `vertices + k *
/// layout->stride`, read as `layout` describes) goes to v0-v15 of invocation k, everything
/// else (registers, output banks, vertex buffer, SETEMIT state) carries over from the
/// previous invocation, and b15 of `uniforms` is set after each invocation. Emitted vertices
/// go to the callback or become pending, exactly as `picajit_geometry_run_point` delivers
/// them, in emission order; with a callback they are delivered after every few hundred
/// invocations rather than after each. `count` may be 0. `stats` may be NULL
/// (`instructions` in total, `vertices` = `count` on success).
///
/// This is the fast way to run a point-mode draw: on the x86-64 (AVX2) and AArch64 (NEON)
/// JITs, groups of eight invocations run together on the multi-vertex backend where the
/// program allows it (`picajit info --engine x64|a64` says whether). Results are the
/// interpreter's, bit for bit.
///
/// Errors: as `picajit_geometry_run_point` (`PICAJIT_ERR_INVALID_ARGUMENT` if the mode is not
/// point mode, the uniform set is of another float mode, the layout is bad or `count` is over
/// `PICAJIT_MAX_BATCH`); `PICAJIT_ERR_EXEC` when an invocation fails: the message names the
/// point, `stats->vertices` is the number of invocations completed before it,
/// `stats->instructions` 0, and the vertices emitted before the failure (its own included)
/// are delivered.
///
/// The callback may call picajit functions, but must not reset `geometry` or write
/// `vertices` (destroying `geometry`, `shader` or `uniforms` ends the call with
/// `PICAJIT_ERR_INVALID_HANDLE` before the next chunk); if it sets another callback or
/// writes the uniforms, which of the remaining invocations see the change is unspecified (if
/// it leaves point mode, the call stops with `PICAJIT_ERR_INVALID_ARGUMENT`).
///
/// # Safety
/// `geometry`, `shader`, `uniforms` must be NULL or live (`geometry` and `uniforms` used by
/// no other thread during the call); `layout` NULL or readable; `vertices` NULL or readable
/// for `count` vertices of the layout, and not written during the call; `stats` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_geometry_run_points(
    geometry: *mut PicajitGeometry,
    shader: *const PicajitShader,
    uniforms: *mut PicajitUniforms,
    layout: *const PicajitVertexLayout,
    vertices: *const c_void,
    count: usize,
    stats: *mut PicajitRunStats,
) -> PicajitStatus {
    call("picajit_geometry_run_points", || {
        // Argument checks in `picajit_geometry_run_point`'s order; the run borrows the
        // objects again.
        // SAFETY: this function's contract.
        point_mode(unsafe { invocation(geometry, shader, uniforms) }?.0)?;
        // SAFETY: this function's contract; `vertices` is not written during the call.
        let (layout, bytes) = unsafe { points(layout, vertices, count, "vertices", stats) }?;
        let run = PointsRun {
            geometry,
            shader,
            uniforms,
            layout,
            vertices: bytes,
            count,
        };
        let mut totals = PicajitRunStats::default();
        // SAFETY: this function's contract, which includes the run's.
        let result = unsafe { run.run(&mut totals) };
        // SAFETY: NULL or writable by this function's contract.
        unsafe { args::write_optional(stats, totals, "stats") }?;
        result
    })
}

/// Run one invocation in variable or fixed mode: `row_count` rows of 4 values in `format`
/// (a `PicajitFormat`), contiguous, are written to the float uniforms from `c[first_uniform]`
/// on (in variable mode from `c[first_uniform + 1]`, after a row holding `vertex_count` in
/// every component); then the shader runs with the registers and vertex buffer kept from the
/// previous invocation, and b15 is set afterwards. Emitted vertices go to the callback or
/// become pending. `stats` may be NULL.
///
/// Errors: `PICAJIT_ERR_INVALID_ARGUMENT` in point mode, for rows that would pass c95, a
/// `vertex_count` over 255, an unknown format or a uniform set of another float mode; `PICAJIT_ERR_EXEC` when the invocation fails.
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
        let format = PicajitFormat::from_raw(format, "value format")?;
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
        let bytes = unsafe { args::slice(rows.cast::<u8>(), 16 * row_count as usize, "rows") }?;
        args::check_optional(stats, "stats")?;
        let s = &*entry_shader(&inv.shader.shader, g.entry, ShaderKind::Geometry)?;
        g.settle(s);
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

#[cfg(test)]
mod tests {
    use super::super::{
        picajit_engine_config_init, picajit_engine_create, picajit_engine_destroy,
        picajit_shader_apply_constants, picajit_shader_destroy, picajit_shader_load_source,
        picajit_uniforms_create, picajit_uniforms_destroy, picajit_uniforms_set_float,
        PicajitEngine, PicajitEngineConfig, PICAJIT_LAYOUT_PACKED,
    };
    use super::*;
    use std::ffi::CString;

    unsafe extern "C" fn count(user: *mut c_void, _: *const c_void, _: *const PicajitEmitState) {
        // SAFETY: `user` is the `usize` counter the test registered with the callback.
        unsafe { *user.cast::<usize>() += 1 };
    }

    /// `picajit_geometry_run_points` keeps the registers the emit layout names that the
    /// program writes, so that the JIT runs groups of eight invocations: with a layout of
    /// exactly those registers, with one naming a register the program never writes, and
    /// without a callback (every register kept for `picajit_geometry_take`).
    #[test]
    fn run_points_takes_the_multi_vertex_path_whatever_the_delivery() {
        let source =
            CString::new(include_str!("../../../examples/point_to_quad.g.pica")).expect("no NUL");
        let mut cfg = std::mem::MaybeUninit::<PicajitEngineConfig>::uninit();
        let (mut engine, mut shader, mut uniforms, mut geometry): (
            *mut PicajitEngine,
            *mut PicajitShader,
            *mut PicajitUniforms,
            *mut PicajitGeometry,
        ) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        let ok = PicajitStatus::PICAJIT_OK;
        // SAFETY: every pointer passed is valid for the call: locals, the handles the create
        // functions returned, and a NUL-terminated source.
        unsafe {
            assert_eq!(picajit_engine_config_init(cfg.as_mut_ptr()), ok);
            assert_eq!(picajit_engine_create(cfg.as_ptr(), &mut engine), ok);
            assert_eq!(
                picajit_shader_load_source(engine, source.as_ptr(), 0, &mut shader),
                ok
            );
            assert_eq!(picajit_uniforms_create(engine, &mut uniforms), ok);
            assert_eq!(picajit_shader_apply_constants(shader, uniforms), ok);
            let halfsize = [0.25f32, 0.5, 0.0, 0.0];
            assert_eq!(
                picajit_uniforms_set_float(uniforms, 0, 1, halfsize.as_ptr()),
                ok
            );
            assert_eq!(picajit_geometry_create(&mut geometry), ok);
        }
        // SAFETY: a live shader handle, not destroyed before the end of the test.
        let code = unsafe { handle::get(shader, "shader") }
            .expect("live shader")
            .shader
            .compiled();
        let lanes = code.is_some_and(|c| c.points_ineligibility().is_none());
        let groups = || code.map_or(0, |c| c.batch_stats().groups);
        let points: Vec<[[f32; 4]; 2]> = (0..64)
            .map(|k| [[k as f32, 1.0, 2.0, 1.0], [0.5, 0.25, 1.0, 1.0]])
            .collect();
        let input = PicajitVertexLayout {
            format: 0,
            flags: PICAJIT_LAYOUT_PACKED,
            mask: 0x3,
            stride: 0,
        };
        let mut calls = 0usize;
        for (mask, callback) in [(0x3u32, true), (0x7, true), (0xFFFF, false)] {
            let layout = PicajitVertexLayout {
                format: 0,
                flags: 0,
                mask,
                stride: 0,
            };
            let before = groups();
            let mut stats = PicajitRunStats::default();
            // SAFETY: live handles; `layout` and `input` are locals; `points` holds 64 points
            // of the input layout; `calls` outlives the callback's registration.
            unsafe {
                let (func, user): (PicajitEmitFn, *mut c_void) = if callback {
                    (Some(count), (&raw mut calls).cast())
                } else {
                    (None, std::ptr::null_mut())
                };
                assert_eq!(
                    picajit_geometry_set_emit_callback(geometry, &layout, func, user),
                    ok
                );
                assert_eq!(
                    picajit_geometry_run_points(
                        geometry,
                        shader,
                        uniforms,
                        &input,
                        points.as_ptr().cast(),
                        points.len(),
                        &mut stats,
                    ),
                    ok
                );
            }
            assert_eq!(stats.vertices, 64);
            if lanes {
                assert!(groups() > before, "mask {mask:#x}: no group of eight ran");
            }
        }
        assert_eq!(calls, 2 * 64 * 4);
        let mut pending = 0;
        // SAFETY: live handles, a local output.
        unsafe {
            assert_eq!(picajit_geometry_pending(geometry, &mut pending), ok);
            assert_eq!(picajit_geometry_destroy(geometry), ok);
            assert_eq!(picajit_uniforms_destroy(uniforms), ok);
            assert_eq!(picajit_shader_destroy(shader), ok);
            assert_eq!(picajit_engine_destroy(engine), ok);
        }
        assert_eq!(pending, 64 * 4);
    }
}
