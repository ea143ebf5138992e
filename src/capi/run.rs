//! Vertex-shader batches over caller-owned input and output buffers.

use super::error::{self, call, Error, PicajitStatus, Result};
use super::handle;
use super::layout::{Layout, PicajitFormat, PicajitVertexLayout};
use super::program::PicajitShader;
use super::uniforms::PicajitUniforms;
use picajit_interp::exec::ExecError;
use picajit_interp::program::ShaderKind;
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
    /// written, those from it on are not.
    pub vertices: usize,
}

/// Vertices converted and run per engine call: large enough to amortise the call, small
/// enough that the staging buffers stay in cache.
const CHUNK: usize = 64;

pub(crate) fn exec_error(e: &ExecError) -> Error {
    Error::new(PicajitStatus::PICAJIT_ERR_EXEC, e)
}

/// Overlapping input and output ranges would alias a `&[u8]` with a `&mut [u8]`.
fn check_disjoint(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> Result<()> {
    let (a, b) = (a as usize, b as usize);
    if a_len > 0 && b_len > 0 && a < b.saturating_add(b_len) && b < a.saturating_add(a_len) {
        return Err(Error::invalid("the input and output buffers overlap"));
    }
    Ok(())
}

struct Batch<'a> {
    shader: &'a PicajitShader,
    uniforms: &'a PicajitUniforms,
    input: Layout,
    output: Layout,
}

impl Batch<'_> {
    /// Run every vertex; `stats` counts what completed even when a vertex fails.
    fn run(
        &self,
        inputs: &[u8],
        outputs: &mut [u8],
        count: usize,
        stats: &mut PicajitRunStats,
    ) -> Result<()> {
        let shader = &self.shader.shader;
        let mut staged_in = vec![[[0.0f32; 4]; 16]; CHUNK.min(count)];
        let mut staged_out = staged_in.clone();
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
            let result = match self.input.format {
                PicajitFormat::PICAJIT_FORMAT_F32 => {
                    shader.run_batch_masked(uniforms, ins, outs, self.output.mask())
                }
                PicajitFormat::PICAJIT_FORMAT_F24 => {
                    shader.run_batch_registers(uniforms, ins, outs, self.output.mask())
                }
            }
            .map(|instructions| stats.instructions += instructions)
            .map_err(|e| (e.vertex, e.error));
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
                    format!("vertex {}: {e}", start + k),
                ));
            }
        }
        Ok(())
    }
}

/// Run a vertex shader on `count` vertices. Vertex k reads its inputs v0-v15 from
/// `inputs + k * input_layout->stride` and writes o0-o15 to `outputs + k *
/// output_layout->stride`, as the layouts describe; every vertex starts from a clean
/// register state. `count` may be 0. `stats` may be NULL.
///
/// Errors: `PICAJIT_ERR_EXEC` when a vertex fails (the message and `stats->vertices` say
/// which; earlier outputs are written); `PICAJIT_ERR_INVALID_ARGUMENT` for a geometry shader,
/// a uniform set of another float mode, a bad layout, or overlapping buffers.
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
        // SAFETY: live objects and readable layouts, by this function's contract.
        let (shader, uniforms, input_layout, output_layout) = unsafe {
            (
                handle::get(shader, "shader")?,
                handle::get(uniforms, "uniforms")?,
                error::borrow(input_layout, "input_layout")?,
                error::borrow(output_layout, "output_layout")?,
            )
        };
        if shader.kind() != ShaderKind::Vertex {
            return Err(Error::invalid(
                "a geometry shader runs through picajit_geometry_run_*, not in batches",
            ));
        }
        uniforms.check_mode(&shader.shader)?;
        let input = Layout::new(input_layout, "input_layout")?;
        let output = Layout::new(output_layout, "output_layout")?;
        let in_len = input.span(count, "inputs")?;
        let out_len = output.span(count, "outputs")?;
        check_disjoint(inputs.cast(), in_len, outputs.cast(), out_len)?;
        // SAFETY: `in_len` readable bytes by this function's contract; disjoint from the
        // output range (checked above).
        let in_bytes = unsafe { error::slice(inputs.cast::<u8>(), in_len, "inputs") }?;
        // SAFETY: `out_len` writable bytes by this function's contract, disjoint from the
        // input range, so this is the only reference to them.
        let out_bytes = unsafe { error::bytes_mut(outputs.cast(), out_len, "outputs") }?;
        if !stats.is_null() {
            error::check_ptr(stats, "stats")?;
        }
        let mut totals = PicajitRunStats::default();
        let batch = Batch {
            shader,
            uniforms,
            input,
            output,
        };
        let result = batch.run(in_bytes, out_bytes, count, &mut totals);
        if !stats.is_null() {
            // SAFETY: writable by this function's contract (alignment checked above).
            unsafe { error::write_out(stats, totals, "stats") }?;
        }
        result
    })
}
