//! Vertex-shader batches over caller-owned input and output buffers.

use super::layout::{Layout, PicajitFormat, PicajitVertexLayout};
use super::shader::PicajitShader;
use super::state::{self, PicajitRunOptions, RunOptions};
use super::uniforms::PicajitUniforms;
use crate::capi::args;
use crate::capi::error::{call, Error, PicajitStatus, Result};
use crate::capi::handle;
use crate::pica::engine::{Attributes, Invocation, Shader};
use picajit_interp::pica::program::ShaderKind;
use picajit_interp::pica::state::UnitState;
use std::ffi::c_void;

/// What a run did. Written on success and on `PICAJIT_ERR_EXEC`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PicajitRunStats {
    /// Shader instructions executed in total (END included); 0 after `PICAJIT_ERR_EXEC`
    /// (a failed batch does not report how far each engine got).
    pub instructions: u64,
    /// Vertices (or geometry-shader invocations) completed. After `PICAJIT_ERR_EXEC` this is
    /// the index of the vertex that failed; the outputs of the vertices before it are
    /// written; those from it on are not, except that a batch split across threads (see
    /// `PicajitRunOptions::threads`) may have written the outputs of later parts.
    pub vertices: usize,
}

/// Vertices converted and run per engine call: large enough to amortise the call, small
/// enough that the staging buffers stay in cache.
const CHUNK: usize = 64;

/// The failing invocation of an engine call and its message (the invocations the C ABI
/// builds fail only as the interpreter does).
pub(crate) fn failed_invocation(e: crate::Error) -> (usize, String) {
    match e {
        crate::Error::Exec { index, error } => (index, error.to_string()),
        other => (0, other.to_string()),
    }
}

/// Overlapping input and output ranges would alias a `&[u8]` with a `&mut [u8]`.
fn check_disjoint(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> Result<()> {
    let (a, b) = (a as usize, b as usize);
    if a_len > 0 && b_len > 0 && a < b.saturating_add(b_len) && b < a.saturating_add(a_len) {
        return Err(Error::invalid("the input and output buffers overlap"));
    }
    Ok(())
}

/// A thread's staging rows for [`Batch::run`], kept between calls: a C caller that runs one
/// vertex per call would otherwise pay two allocations per call. Stale contents never reach
/// a caller: every input row is overwritten whole by `Layout::read` before it is used, and
/// `Layout::write` reads only the output registers of the layout's mask, which the batch
/// writes for every vertex it reports.
struct StageRows {
    input: Rows,
    output: Rows,
}

type Rows = Vec<[[f32; 4]; 16]>;

thread_local! {
    // Plain vectors, not `StageRows`, so that replacing them runs no `Drop` of ours.
    static STAGE_ROWS: std::cell::Cell<(Rows, Rows)> =
        const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

impl StageRows {
    /// The calling thread's rows (or new ones), at least `len` of each.
    fn take(len: usize) -> StageRows {
        let (mut input, mut output) = STAGE_ROWS.try_with(|c| c.take()).unwrap_or_default();
        for v in [&mut input, &mut output] {
            if v.len() < len {
                v.resize(len, [[0.0; 4]; 16]);
            }
        }
        StageRows { input, output }
    }
}

impl Drop for StageRows {
    fn drop(&mut self) {
        // Hand the rows back for the thread's next call (on every return path); during
        // thread teardown the slot may be gone and they are simply freed.
        let rows = (
            std::mem::take(&mut self.input),
            std::mem::take(&mut self.output),
        );
        let _ = STAGE_ROWS.try_with(|c| c.set(rows));
    }
}

struct Batch<'a> {
    shader: &'a Shader,
    uniforms: &'a PicajitUniforms,
    input: Layout,
    output: Layout,
    /// Every vertex starts from this state (`None`: the clean state).
    state_in: Option<UnitState>,
    /// Hand back the last vertex's state.
    state_out: bool,
    /// Index of this batch's first vertex in the caller's (error messages).
    base: usize,
}

impl Batch<'_> {
    /// Run every vertex; `stats` counts what completed even when a vertex fails. Returns the
    /// last vertex's final state when `state_out` asks for it.
    fn run(
        &self,
        inputs: &[u8],
        outputs: &mut [u8],
        count: usize,
        stats: &mut PicajitRunStats,
    ) -> Result<Option<UnitState>> {
        let shader = self.shader;
        let mut rows = StageRows::take(CHUNK.min(count));
        let StageRows {
            input: staged_in,
            output: staged_out,
        } = &mut rows;
        // For `count` = 0: the state in, converted (the clean state without one).
        let mut last_state = self.state_out.then(|| {
            self.state_in
                .map(|s| shader.convert_state(&s))
                .unwrap_or_default()
        });
        for start in (0..count).step_by(CHUNK) {
            let n = CHUNK.min(count - start);
            for (k, row) in staged_in[..n].iter_mut().enumerate() {
                *row = self.input.read(inputs, start + k);
            }
            // f32 attributes are converted by the input rule (`Shader::convert_inputs`);
            // raw f24 words (read exactly by `Layout::read`) reach v0-v15 unchanged, subnormal
            // patterns, -0 and NaN payloads included, on the same batch path.
            let (ins, outs) = (&staged_in[..n], &mut staged_out[..n]);
            let uniforms = &self.uniforms.uniforms;
            let (mask, state_in) = (self.output.mask(), self.state_in.as_ref());
            // Only the last chunk's last vertex hands its state back.
            let mut chunk_state = UnitState::default();
            let want = (self.state_out && start + n == count).then_some(&mut chunk_state);
            let wanted = want.is_some();
            let inputs = match self.input.format {
                PicajitFormat::PICAJIT_FORMAT_F32 => Attributes::F32(ins),
                PicajitFormat::PICAJIT_FORMAT_F24 => Attributes::Registers(ins),
            };
            let result = shader
                .invoke(
                    Invocation::batch(uniforms, inputs, outs)
                        .mask(mask)
                        .from_state(state_in)
                        .state_out(want),
                )
                .map(|o| stats.instructions += o.instructions)
                .map_err(failed_invocation);
            if wanted && result.is_ok() {
                last_state = Some(chunk_state);
            }
            let done = match &result {
                Ok(()) => n,
                Err((k, _)) => *k,
            };
            for (k, row) in staged_out[..done].iter().enumerate() {
                self.output.write(outputs, start + k, row);
            }
            stats.vertices = start + done;
            if let Err((k, e)) = result {
                stats.instructions = 0;
                return Err(Error::new(
                    PicajitStatus::PICAJIT_ERR_EXEC,
                    format!("vertex {}: {e}", self.base + start + k),
                ));
            }
        }
        Ok(last_state)
    }
}

impl Batch<'_> {
    /// [`Batch::run`] over `threads` contiguous parts of the batch at once (the calling thread
    /// and the persistent workers of `src/pool.rs`; vertices are independent, so the outputs
    /// are those of one run). Only the last part
    /// hands a state back. On failure the lowest failing vertex is reported, as one run
    /// reports it, and its stats are those of the vertices before it; parts after it may
    /// have written their outputs.
    fn run_split(
        &self,
        inputs: &[u8],
        outputs: &mut [u8],
        count: usize,
        threads: usize,
        stats: &mut PicajitRunStats,
    ) -> Result<Option<UnitState>> {
        let per = count.div_ceil(threads);
        // Part k's output bytes start at vertex k * per; the last part keeps the rest.
        let mut parts = Vec::with_capacity(threads);
        let mut rest = outputs;
        let mut lo = 0;
        while lo < count {
            let hi = (lo + per).min(count);
            let (part, tail) = if hi < count {
                rest.split_at_mut((hi - lo) * self.output.stride)
            } else {
                (rest, &mut [][..])
            };
            parts.push((lo, hi, part));
            rest = tail;
            lo = hi;
        }
        type PartResult = (PicajitRunStats, Result<Option<UnitState>>);
        let jobs: Vec<_> = parts
            .into_iter()
            .map(|(lo, hi, out)| {
                let input = &inputs[lo * self.input.stride..];
                let part = Batch {
                    state_out: self.state_out && hi == count,
                    base: self.base + lo,
                    ..*self
                };
                move || {
                    let mut s = PicajitRunStats::default();
                    let r = part.run(input, out, hi - lo, &mut s);
                    (s, r)
                }
            })
            .collect();
        let results: Vec<PartResult> = crate::pool::run_parts(jobs);
        let mut last = None;
        for (k, (s, r)) in results.into_iter().enumerate() {
            let lo = k * per;
            match r {
                Ok(state) => {
                    stats.instructions += s.instructions;
                    stats.vertices = lo + s.vertices;
                    last = state.or(last);
                }
                Err(e) => {
                    stats.instructions = 0;
                    stats.vertices = lo + s.vertices;
                    return Err(e);
                }
            }
        }
        Ok(last)
    }
}

/// Run a program on the vertex unit for `count` vertices. Vertex k reads its inputs v0-v15
/// from `inputs + k * input_layout->stride` and writes o0-o15 to `outputs + k *
/// output_layout->stride`, as the layouts describe; every vertex starts from a clean
/// register state. `count` may be 0. `stats` may be NULL.
///
/// Any shader runs here, whatever `PicajitShaderKind` it was created with: one program runs
/// on both units (a shader created for the geometry unit prepares its vertex-unit code on
/// its first batch, once; SETEMIT and EMIT do nothing on the vertex unit).
///
/// Threads: the batch runs on the calling thread only unless the engine was created with
/// `PicajitEngineConfig::threads` other than 1 (or `picajit_shader_run_batch_ex` asks for
/// threads); the library then splits it across its own worker threads.
///
/// Errors: `PICAJIT_ERR_EXEC` when a vertex fails (the message and `stats->vertices` say
/// which: the lowest failing vertex; earlier outputs are written, and when the batch was
/// split, later parts may have written theirs); `PICAJIT_ERR_INVALID_ARGUMENT` for a uniform
/// set of another float mode, a bad layout, overlapping buffers, or a `count` over
/// `PICAJIT_MAX_BATCH` (whatever the layouts).
///
/// # Safety
/// `shader` and `uniforms` must be NULL or live objects (`uniforms` not written during the
/// call); the layouts must be NULL or readable; `inputs` must be NULL or readable and
/// `outputs` NULL or writable for the bytes the layouts and `count` describe; `stats` must be
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_run_batch(
    shader: *const PicajitShader,
    uniforms: *const PicajitUniforms,
    input_layout: *const PicajitVertexLayout,
    inputs: *const c_void,
    output_layout: *const PicajitVertexLayout,
    outputs: *mut c_void,
    count: usize,
    stats: *mut PicajitRunStats,
) -> PicajitStatus {
    call("picajit_shader_run_batch", || {
        let buffers = (input_layout, inputs, output_layout, outputs);
        // SAFETY: this function's contract is `run_batch`'s with no options.
        unsafe { run_batch(shader, uniforms, buffers, count, std::ptr::null(), stats) }
    })
}

/// `picajit_shader_run_batch` with per-run options (`options` may be NULL: no options):
///
/// * `options->entry`: run the program from this entry point (in words) instead of the
///   shader's own; `PICAJIT_ENTRY_DEFAULT` for the shader's own. The code for each entry
///   point is prepared (compiled, on a JIT) on its first use and kept in the shader, so an
///   emulator passes the entry point of each draw without recompiling.
/// * `options->state_in`: when not NULL, *every* vertex of the batch starts from this unit
///   state (r0-r15, a0, aL, cmp) instead of the clean one (all zero, flags clear). Vertices
///   stay independent of each other, as on hardware, where the vertex units take vertices in
///   no order a program could rely on; the batch gives the same results however it is
///   split, and keeps its fast paths (eight vertices per group on the x86-64 JIT).
/// * `options->state_out`: when not NULL, receives the state the *last* vertex ended with:
///   exactly what a batch of that one vertex leaves. A batch of one vertex is therefore one
///   invocation with the unit state in and out: an emulator that keeps a persistent shader
///   unit passes its state in and stores what comes out (for `count` = 0, `state_in` as
///   converted, or the clean state). Not written when the call fails. May be the same
///   object as `state_in`.
///
/// In F24 modes each r0-r15 value of `state_in` that is exactly an f24 value (every value a
/// `state_out` holds) is used bit for bit; another f32 value is rounded to f24 like a float
/// uniform (`picajit_uniforms_set_float`). a0 and aL may hold any value (relative addressing
/// ignores offsets outside -128..127); a cmp byte that is not 0 reads as 1. Without
/// `state_in` and `state_out` this costs what `picajit_shader_run_batch` costs.
///
/// * `options->threads`: threads the batch may use. 0, the value
///   `picajit_run_options_init` sets (and what `picajit_shader_run_batch` uses), is the
///   engine's setting (`PicajitEngineConfig::threads`, by default 1: the calling thread
///   only); N splits into up to N contiguous parts of at least 512 vertices, and at most one
///   part per worker thread plus the calling thread (one more than the host's cores: any
///   larger value, UINT32_MAX included, means that many). Outputs and `state_out` are the
///   same for every value. A struct without the field (an older `struct_size`) gets one
///   thread.
///
/// Errors: those of `picajit_shader_run_batch`; `PICAJIT_ERR_INVALID_ARGUMENT` for an entry
/// point outside the code or an `options->struct_size` the versioning rule rejects.
///
/// # Safety
/// As `picajit_shader_run_batch`; `options` NULL or readable, its `state_in` NULL or
/// readable and `state_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn picajit_shader_run_batch_ex(
    shader: *const PicajitShader,
    uniforms: *const PicajitUniforms,
    input_layout: *const PicajitVertexLayout,
    inputs: *const c_void,
    output_layout: *const PicajitVertexLayout,
    outputs: *mut c_void,
    count: usize,
    options: *const PicajitRunOptions,
    stats: *mut PicajitRunStats,
) -> PicajitStatus {
    call("picajit_shader_run_batch_ex", || {
        let buffers = (input_layout, inputs, output_layout, outputs);
        // SAFETY: this function's contract.
        unsafe { run_batch(shader, uniforms, buffers, count, options, stats) }
    })
}

/// A batch's layouts and buffers: input layout, inputs, output layout, outputs.
type Buffers = (
    *const PicajitVertexLayout,
    *const c_void,
    *const PicajitVertexLayout,
    *mut c_void,
);

/// The body of both batch functions.
///
/// # Safety
/// `picajit_shader_run_batch_ex`'s contract.
unsafe fn run_batch(
    shader: *const PicajitShader,
    uniforms: *const PicajitUniforms,
    (input_layout, inputs, output_layout, outputs): Buffers,
    count: usize,
    options: *const PicajitRunOptions,
    stats: *mut PicajitRunStats,
) -> Result<()> {
    let options = if options.is_null() {
        RunOptions::default()
    } else {
        // SAFETY: readable by this function's contract.
        unsafe { state::read_options(options) }?
    };
    // SAFETY: live objects and readable layouts, by this function's contract.
    let (shader, uniforms, input_layout, output_layout) = unsafe {
        (
            handle::get(shader, "shader")?,
            handle::get(uniforms, "uniforms")?,
            args::borrow(input_layout, "input_layout")?,
            args::borrow(output_layout, "output_layout")?,
        )
    };
    uniforms.check_mode(&shader.shader)?;
    super::layout::check_count(count, "count")?;
    let input = Layout::new(input_layout, "input_layout")?;
    let output = Layout::new(output_layout, "output_layout")?;
    let in_len = input.span(count, "inputs")?;
    let out_len = output.span(count, "outputs")?;
    check_disjoint(inputs.cast(), in_len, outputs.cast(), out_len)?;
    let at = state::entry_shader(&shader.shader, options.entry, ShaderKind::Vertex)?;
    // SAFETY: `in_len` readable bytes by this function's contract; disjoint from the
    // output range (checked above).
    let in_bytes = unsafe { args::slice(inputs.cast::<u8>(), in_len, "inputs") }?;
    // SAFETY: `out_len` writable bytes by this function's contract, disjoint from the
    // input range, so this is the only reference to them.
    let out_bytes = unsafe { args::bytes_mut(outputs.cast(), out_len, "outputs") }?;
    args::check_optional(stats, "stats")?;
    let mut totals = PicajitRunStats::default();
    let batch = Batch {
        shader: &at,
        uniforms,
        input,
        output,
        state_in: options.state_in,
        state_out: !options.state_out.is_null(),
        base: 0,
    };
    let threads = match options.threads {
        0 => at.batch_threads(count),
        n => crate::pica::engine::batch_threads(n, count),
    };
    let result = if threads > 1 {
        batch.run_split(in_bytes, out_bytes, count, threads, &mut totals)
    } else {
        batch.run(in_bytes, out_bytes, count, &mut totals)
    };
    // SAFETY: NULL or writable by this function's contract.
    unsafe { args::write_optional(stats, totals, "stats") }?;
    if let Some(state) = result? {
        // SAFETY: writable by this function's contract (checked when the options were read).
        unsafe { state::write_state(options.state_out, &state) }?;
    }
    Ok(())
}
