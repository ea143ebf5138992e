//! The shader unit's state as an emulator keeps it: registers that persist between
//! invocations (r0-r15, a0, aL, cmp), the SETEMIT state of a geometry unit, and per-run
//! options (entry point, unit state in and out).

use super::shader::PicajitShader;
use crate::capi::args;
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle::query;
use crate::pica::engine::{Shader, ShaderAt};
use picajit_interp::pica::program::ShaderKind;
use picajit_interp::pica::state::UnitState;

/// `PicajitRunOptions::entry` (and `picajit_geometry_set_entry`) for "the shader's own entry
/// point".
pub const PICAJIT_ENTRY_DEFAULT: u32 = 0xFFFF_FFFF;

/// The registers of a shader unit that persist between invocations on hardware: an
/// emulator sets them before a run and reads them after END.
///
/// r0-r15 hold register values as f32 (in F24 modes, f24 values: see
/// `picajit_shader_run_batch_ex` for how other values are taken). a0 and aL may hold any
/// value: MOVA saturates to the int32 range, a LOOP's aL steps without bound, and relative
/// addressing ignores an offset outside -128..127 (seed 000's rule).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PicajitUnitState {
    /// r0-r15, components x, y, z, w.
    pub r: [[f32; 4]; 16],
    /// a0.x, a0.y.
    pub a0: [i32; 2],
    /// aL.
    pub al: i32,
    /// cmp.x, cmp.y: 0 or 1 (written as 0 or 1; any value but 0 reads as 1).
    pub cmp: [u8; 2],
    /// Zero; ignored.
    pub reserved: [u8; 2],
}

impl PicajitUnitState {
    pub(crate) fn to_state(self) -> UnitState {
        UnitState {
            temp: self.r,
            a0: self.a0,
            al: self.al,
            cmp: self.cmp.map(|c| c != 0),
        }
    }

    pub(crate) fn of(s: &UnitState) -> PicajitUnitState {
        PicajitUnitState {
            r: s.temp,
            a0: s.a0,
            al: s.al,
            cmp: s.cmp.map(u8::from),
            reserved: [0; 2],
        }
    }
}

/// Per-run options of `picajit_shader_run_batch_ex`. Initialise with
/// `picajit_run_options_init` (which sets `struct_size`), then set what the run needs.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitRunOptions {
    /// `sizeof(PicajitRunOptions)` as the caller compiled it; lets later versions append
    /// fields.
    pub struct_size: u32,
    /// Entry point in words, or `PICAJIT_ENTRY_DEFAULT` for the shader's own.
    pub entry: u32,
    /// Unit state every vertex starts from, or NULL for the clean state.
    pub state_in: *const PicajitUnitState,
    /// Receives the last vertex's final unit state, or NULL.
    pub state_out: *mut PicajitUnitState,
    /// Threads the batch may use: 0 (what `picajit_run_options_init` sets) uses the
    /// engine's setting (`PicajitEngineConfig::threads`, by default 1: the calling thread
    /// only); N splits into up to N parts of at least 512 vertices. Results are the same for
    /// every value.
    pub threads: u32,
}

/// The SETEMIT parameters of a geometry unit, one type for both of their uses: the state
/// the next EMIT uses (`picajit_geometry_get_emit_state`, `PicajitGeometryState::emit`),
/// and, for an emitted vertex (emit callback, `picajit_geometry_take`), the state its EMIT
/// used.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PicajitEmitState {
    /// Vertex-buffer slot (SETEMIT's vertex id, 0-3; slot 3 is never part of a primitive).
    pub slot: u32,
    /// The EMIT completes a primitive from buffer slots 0, 1 and 2 (SETEMIT's `prim` flag):
    /// 0 or 1.
    pub primitive: u8,
    /// Winding flag of that primitive (SETEMIT's `inv` flag): 0 or 1.
    pub winding: u8,
    /// Zero.
    pub reserved: [u8; 2],
}

/// The name `PicajitEmitState` had as the emit callback's argument before API 3.0; the same
/// type (same layout as then, flags as 0/1 bytes).
pub type PicajitEmitInfo = PicajitEmitState;

impl PicajitEmitState {
    /// Checked: the slot is 0-3 and the flags 0 or 1.
    pub(crate) fn check(&self) -> Result<()> {
        if self.slot > 3 || self.primitive > 1 || self.winding > 1 {
            return Err(Error::invalid(format!(
                "emit state {self:?}: the vertex id (slot) is 0-3 and the flags 0 or 1"
            )));
        }
        Ok(())
    }
}

/// The options of a run, read from C.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunOptions {
    pub(crate) entry: u32,
    pub(crate) state_in: Option<UnitState>,
    pub(crate) state_out: *mut PicajitUnitState,
    /// `PicajitRunOptions::threads` (0: the engine's setting).
    pub(crate) threads: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            entry: PICAJIT_ENTRY_DEFAULT,
            state_in: None,
            state_out: std::ptr::null_mut(),
            threads: 0,
        }
    }
}

impl PicajitRunOptions {
    /// What `picajit_run_options_init` sets.
    fn defaults() -> PicajitRunOptions {
        PicajitRunOptions {
            struct_size: std::mem::size_of::<PicajitRunOptions>() as u32,
            entry: PICAJIT_ENTRY_DEFAULT,
            state_in: std::ptr::null(),
            state_out: std::ptr::null_mut(),
            threads: 0,
        }
    }
}

/// Read and check `*options` (`state_in` copied, `state_out` checked for alignment).
///
/// # Safety
/// `options` must be non-NULL and readable, its `state_in` NULL or readable.
pub(crate) unsafe fn read_options(options: *const PicajitRunOptions) -> Result<RunOptions> {
    // The first version (API minor 3 and 4) ended at `state_out`; its callers get one thread.
    let first = std::mem::offset_of!(PicajitRunOptions, threads);
    let old = PicajitRunOptions {
        threads: 1,
        ..PicajitRunOptions::defaults()
    };
    let hint = "call picajit_run_options_init";
    // SAFETY: readable by this function's contract.
    let o = unsafe { args::read_versioned(options, "options", &[first], hint, old) }?;
    // SAFETY: readable by this function's contract.
    let state_in = unsafe { args::borrow_optional(o.state_in, "options->state_in") }?;
    args::check_optional(o.state_out, "options->state_out")?;
    Ok(RunOptions {
        entry: o.entry,
        state_in: state_in.map(|s| s.to_state()),
        state_out: o.state_out,
        threads: o.threads as usize,
    })
}

/// Write `state` to `out` (non-NULL, checked for alignment).
///
/// # Safety
/// `out` must be writable.
pub(crate) unsafe fn write_state(out: *mut PicajitUnitState, state: &UnitState) -> Result<()> {
    // SAFETY: this function's contract.
    unsafe { args::write_out(out, PicajitUnitState::of(state), "state_out") }
}

/// The shader for `entry` (`PICAJIT_ENTRY_DEFAULT`: its own) on the `unit` shader unit.
pub(crate) fn entry_shader(shader: &Shader, entry: u32, unit: ShaderKind) -> Result<ShaderAt<'_>> {
    let entry = if entry == PICAJIT_ENTRY_DEFAULT {
        u32::from(shader.program().entry())
    } else {
        entry
    };
    shader
        .at(entry, unit)
        .map_err(|e| Error::invalid(format!("entry point: {e}")))
}

/// Fill `*options` with the defaults: `struct_size` set, the shader's own entry point, no
/// state in or out.
///
/// # Safety
/// `options` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_run_options_init(
    options: *mut PicajitRunOptions,
) -> PicajitStatus {
    call("picajit_run_options_init", || {
        // SAFETY: writable by this function's contract.
        unsafe { args::write_out(options, PicajitRunOptions::defaults(), "options") }
    })
}

/// How many entry points other than its own the runs of `shader` have prepared code for
/// (each is prepared once, on its first run; for tests and diagnostics).
///
/// # Safety
/// `shader` must be NULL or a live shader; `prepared` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_prepared_entries(
    shader: *const PicajitShader,
    prepared: *mut u32,
) -> PicajitStatus {
    let value = |s: &PicajitShader| Ok(s.shader.prepared_entries() as u32);
    // SAFETY: a live shader and a writable `prepared` (or NULL), by this function's contract.
    unsafe { query!("picajit_shader_prepared_entries", shader => prepared, value) }
}
