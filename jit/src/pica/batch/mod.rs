//! Multi-vertex ("structure of arrays") batch backend for x86-64 with AVX2: eight vertices per
//! call of the generated code's body, each PICA register component (`r0.x`, `r0.y`, …) of the
//! eight vertices in one 256-bit register. The AArch64 emitter (`pica/a64/lanes.rs`, NEON) runs the same
//! groups, context and runtime as two halves of four lanes, or with [`A64Lanes::Eight`] as one
//! body run whose arithmetic covers the halves one after the other.
//!
//! # Why
//!
//! The per-vertex backend keeps one PICA vec4 in one SSE register, so the float model's
//! fix-ups (input flush, truncation to 17 bits, overflow to inf, NaN rules, `inf × 0`), which
//! are per-lane work, run on four lanes of which a masked instruction often needs one, and
//! dot products need horizontal shuffles. Here every host instruction works on eight
//! vertices, dot products are plain vertical adds, swizzles are free (they only choose which
//! component array is read) and write masks skip whole components.
//!
//! # Eligibility ([`eligibility`])
//!
//! A program runs here when the host has AVX2 (x86-64; NEON is part of AArch64), [`Analysis`]
//! built it (every program the
//! per-vertex backend compiles), and it is a vertex shader, or a geometry shader for which
//! [`points::plan`] proves that eight consecutive point-mode invocations can run together
//! ([`Invocation::points`](crate::Invocation::points); `analysis/points.rs` has the proof, [`geometry`] how
//! EMIT writes vertices). Control flow that depends only on
//! uniforms (CALL/CALLU/IFU/JMPU/LOOP, resolved statically by the analysis) is compiled as
//! usual. Conditions on the per-vertex cmp flags (IFC/CALLC/JMPC/BREAKC) test the eight
//! flags with `vmovmskps`: if the running lanes agree, the branch is taken or not as a whole;
//! if they disagree, the group continues with lane masks (see "Divergence" in `pica/x64/lanes.rs`): each
//! set of lanes runs its own path, the lowest waiting block first, so that the paths meet
//! again where they join. a0-relative uniform reads load one row per lane (the
//! interpreter's offset rule, applied per lane with vector compares) and transpose them.
//!
//! # Correctness: whole-group fallback
//!
//! A group that cannot finish compiled — a lane needs an aL or loop counter of its own (the
//! group keeps one of each: see `pica/x64/lanes.rs`), it would exceed the instruction budget (charged
//! once per block run, whichever lanes run it, so at least any one lane's count), or it
//! reached a deopt site (undefined opcode, BREAK on an empty loop stack, running past the
//! end) — is simply run again by the per-vertex batch entry (which
//! itself falls back to the interpreter); where groups keep stopping, the following ones run
//! per vertex without a SoA attempt for a while (`run`). Vertex shader invocations are pure functions of
//! their inputs and the uniforms, and the SoA code writes only its own context until the group
//! is finished, so the rerun sees exactly what a per-vertex run would: results and errors
//! are identical by construction. The tail of a batch (`len % 8` rows) also runs per vertex.
//!
//! # Arithmetic
//!
//! Every float result uses the recipes of the per-vertex backend (`x64/masm.rs`) and the float
//! model's "What a JIT must do", lane for lane: MXCSR rounding control (RZ for F24-RTZ, nearest
//! for F24-RNE, nearest + FTZ for F32, never DAZ), explicit input flushes (skipped where the
//! value is known to be flushed already: flushed copies of inputs and uniforms, tiny-free
//! temporaries), integer-domain fix-ups with their rare cases (overflow, inf, NaN, `inf × 0`)
//! in out-of-line cold code, f64 arithmetic with integer round-to-17-bits for F24-RNE, the f64
//! RSQ recipes with exact square tests. EX2 and LG2 are the float model's integer algorithms
//! on eight lanes (64-bit steps four lanes at a time; `crate::pica::recipes::transcendental_lanes`,
//! shared with the NEON lane emitter), checked against it on every f24 input.
//!
//! # One lowering, two shapes
//!
//! [`crate::pica::masm::MacroAssembler`] works on whole vec4 values (`load` applies a swizzle to one
//! register, `binary` computes four lanes, `store` applies the mask), which is the right shape
//! for one invocation. In SoA a component that is not written costs a full 8-lane
//! computation, so results are composed component by component, from only the source
//! components the swizzle selects. Both shapes are driven by the same walker and the same
//! per-unit lowering (`pica/lower/`); the lane shape (`lower/lanes.rs`) composes each unit
//! from the lane operations of its `LaneEmitter` trait, which `pica/x64/lanes.rs` and `pica/a64/lanes.rs`
//! implement.

pub mod geometry;

pub use crate::pica::a64::A64Lanes;
pub use crate::pica::layout::{
    LANES, SOA_GS_CURSOR, SOA_GS_EMITS, SOA_GS_FLAGS_NEXT, SOA_GS_FLAG_CURSOR, SOA_GS_FLAG_STRIDE,
    SOA_GS_LANE_FLAGS, SOA_GS_LANE_ROWS, SOA_GS_LAST6, SOA_GS_LAST7, SOA_GS_LEFT, SOA_GS_PREV7,
    SOA_GS_ROWS_NEXT, SOA_GS_ROW_OFF, SOA_GS_ROW_STRIDE, SOA_GS_SLOT7, SOA_GS_SLOTS_HIT,
    SOA_GS_VSIZE,
};

use crate::error::CompileResult;
use crate::host::features::HostFeatures;
use crate::host::runtime::{can_run, ExecCode, ExecError};
use crate::host::Backend;
use crate::pica::analysis::points::{self, GsPlan};
use crate::pica::analysis::{Analysis, Exit, Guard};
use crate::pica::layout::{Generated, Mark, SoaContext, UniformUse, WholeFlush, REL_ROWS};
use crate::pica::lower::LaneProgram;
use crate::pica::shader::CompiledShader;
use crate::pica::spare::Spare;
use picajit_interp::pica::float::FloatMode;
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::{Uniforms, UnitState, FLOAT_UNIFORM_ROWS};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a program does not run on the SoA path of `backend` (`None` from [`eligibility`]
/// means it does).
pub fn eligibility(
    program: &Program,
    analysis: &Analysis,
    features: HostFeatures,
    backend: Backend,
) -> Option<&'static str> {
    // NEON is part of AArch64; x86-64 needs AVX2.
    if backend == Backend::X64 && !features.contains(HostFeatures::AVX2.union(HostFeatures::AVX)) {
        return Some("the host has no AVX2");
    }
    if program.kind() == ShaderKind::Geometry {
        return points::plan(program, analysis).err();
    }
    // Everything else compiles: uniform control flow as is, cmp-dependent branches as uniform
    // checks, deopt sites as whole-group fallbacks. Listed so that a new guard kind is a
    // conscious decision here.
    for n in &analysis.nodes {
        if let Exit::Branch { guard, .. } = n.exit {
            match guard {
                Guard::Cond(_) | Guard::Bool { .. } => {}
            }
        }
    }
    None
}

/// Compiled SoA code of one program, plus how often it was used.
pub struct SoaCode {
    exec: ExecCode,
    code: Vec<u8>,
    code_len: usize,
    marks: Vec<Mark>,
    /// What the code reads of the per-call uniform copies.
    uniform_use: UniformUse,
    groups: AtomicU64,
    fallbacks: AtomicU64,
    skipped: AtomicU64,
    splits: AtomicU64,
    /// Geometry shaders: what [`points::plan`] proved.
    gs: Option<GsPlan>,
    /// Geometry shaders: the vertices an invocation emitted when last counted (the E the
    /// code is told to expect).
    gs_emits: std::sync::atomic::AtomicU32,
}

impl std::fmt::Debug for SoaCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SoaCode({} bytes)", self.code.len())
    }
}

/// Counters of the SoA path of one
/// [`CompiledShader`](crate::pica::shader::CompiledShader).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Groups of [`LANES`] vertices that finished on SoA code.
    pub groups: u64,
    /// Groups that stopped (per-lane aL or loop counters, budget, deopt) and were re-run per
    /// vertex.
    pub fallbacks: u64,
    /// Groups run per vertex without trying SoA code, after runs of stopped groups (see
    /// `run`).
    pub skipped: u64,
    /// Divergent branches (the active lanes disagreed) that finished groups ran with lane
    /// masks.
    pub splits: u64,
}

/// Generate the SoA code of `shader`'s backend for its program, with the float mode and
/// settings it was compiled with, if it is eligible (whether or not this host can run it).
/// `from_state`: groups start from a given unit state (`CompiledShader::run_batch_from`).
pub(crate) fn codegen(
    shader: &CompiledShader,
    from_state: bool,
) -> CompileResult<Option<(Generated, Option<GsPlan>)>> {
    let (program, analysis) = (&shader.program, &shader.analysis);
    if eligibility(program, analysis, shader.features, shader.backend).is_some() {
        return Ok(None);
    }
    let gs = match program.kind() {
        ShaderKind::Geometry => points::plan(program, analysis).ok(),
        ShaderKind::Vertex => None,
    };
    if from_state && program.kind() != ShaderKind::Vertex {
        return Ok(None);
    }
    let job = LaneProgram {
        program,
        analysis,
        mode: shader.mode,
        max_rule: shader.max_rule,
        gs: gs.as_ref(),
        from_state,
    };
    let generated = match shader.backend {
        Backend::X64 => crate::pica::x64::lanes::generate(job)?,
        Backend::A64 => match crate::pica::a64::lanes::generate(job, shader.a64_lanes)? {
            Some(generated) => generated,
            None => return Ok(None),
        },
    };
    Ok(Some((generated, gs)))
}

/// Build [`codegen`]'s code if it is eligible and runnable on this host (natively, or under
/// the emulator for AArch64 code with the `emulate-a64` feature).
pub(crate) fn compile(shader: &CompiledShader, from_state: bool) -> CompileResult<Option<SoaCode>> {
    if !can_run(shader.backend) {
        return Ok(None);
    }
    let Some(((code, code_len, marks, uniform_use), gs)) = codegen(shader, from_state)? else {
        return Ok(None);
    };
    let gs_emits = shader.analysis.run_bounds().map_or(0, |b| b.emits);
    let exec = match ExecCode::for_backend(shader.backend, &code) {
        Ok(exec) => exec,
        Err(ExecError::NotRunnable(_)) => return Ok(None),
        Err(e) => return Err(crate::error::Error::Internal(e.to_string())),
    };
    Ok(Some(SoaCode {
        exec,
        code,
        code_len,
        marks,
        uniform_use,
        groups: AtomicU64::new(0),
        fallbacks: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        splits: AtomicU64::new(0),
        gs,
        gs_emits: std::sync::atomic::AtomicU32::new(gs_emits),
    }))
}

impl SoaCode {
    /// Bytes this code holds: its mapping, its copy of the bytes and its annotations.
    pub(crate) fn footprint(&self) -> usize {
        std::mem::size_of::<SoaCode>()
            + self.exec.mapped_bytes()
            + self.code.capacity()
            + crate::pica::shader::marks_bytes(&self.marks)
            + self
                .gs
                .as_ref()
                .map_or(0, |g| std::mem::size_of_val(g.emit_flags.as_slice()))
    }

    /// The usage counters.
    pub(crate) fn stats(&self) -> BatchStats {
        BatchStats {
            groups: self.groups.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
            splits: self.splits.load(Ordering::Relaxed),
        }
    }

    /// The machine code, its instruction bytes and its annotations.
    pub(crate) fn code(&self) -> (&[u8], usize, &[Mark]) {
        (&self.code, self.code_len, &self.marks)
    }
}

thread_local! {
    /// The calling thread's [`SoaContext`] (about 30 KiB), kept between `Invocation::batch`
    /// calls: allocating and zeroing it per call cost as much as running a 64-vertex batch of a
    /// short shader. What is read across groups and calls keeps an invariant: `waiting` and
    /// `pending` are all zero between groups, `whole_flush` describes what the flushed tables
    /// hold; nothing else is read before the generated code or [`run`] writes it for the
    /// current group.
    static CONTEXT: std::cell::Cell<Option<Box<SoaContext>>> =
        const { std::cell::Cell::new(None) };
}

/// The calling thread's [`CONTEXT`], given back when dropped.
fn context() -> Spare<SoaContext> {
    Spare::take(&CONTEXT)
}

/// Fill the context's flushed uniform copies for one call. Only the rows the code can read:
/// a short shader reads a handful of the 128, and for 64-vertex batches flushing all of them
/// cost a tenth of the call. The float mode is matched once, outside the loop, so that the
/// float model's `flush_input` is inlined with a constant mode and the loop vectorises.
fn flush_uniforms(
    ctx: &mut SoaContext,
    table: &[[f32; 4]; FLOAT_UNIFORM_ROWS],
    usage: UniformUse,
    mode: FloatMode,
) {
    use picajit_interp::pica::float::{flush_input, Rounding};
    #[inline(always)]
    fn fill(
        dst: &mut [[f32; 4]; FLOAT_UNIFORM_ROWS],
        src: &[[f32; 4]; FLOAT_UNIFORM_ROWS],
        rows: u128,
        flush: impl Fn(f32) -> f32,
    ) {
        if rows == u128::MAX {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = s.map(&flush);
            }
            return;
        }
        let mut rows = rows;
        while rows != 0 {
            let k = rows.trailing_zeros() as usize;
            dst[k] = src[k].map(&flush);
            rows &= rows - 1;
        }
    }
    // Programs with relative reads may read any row, so every row is flushed (and, for
    // a0-relative reads by flushing arithmetic, tripled: 8 KiB of writes). For 64-vertex
    // batches that was a third of the call: skipped when the uniforms are those of the last
    // whole fill.
    let whole = usage.flushed_rows == u128::MAX;
    if let (true, Some(cached)) = (whole, &mut ctx.whole_flush) {
        let same = cached.mode == mode
            && table
                .iter()
                .zip(&cached.bits)
                .all(|(row, bits)| row.map(f32::to_bits) == *bits);
        if same {
            if usage.rel && !cached.rel {
                triple(&mut ctx.uniforms_rel, &ctx.uniforms_flushed);
                cached.rel = true;
            }
            return;
        }
    }
    ctx.whole_flush = None;
    let (dst, rows) = (&mut ctx.uniforms_flushed, usage.flushed_rows);
    match mode {
        FloatMode::F24(Rounding::TowardZero) => fill(dst, table, rows, |x| {
            flush_input(x, FloatMode::F24(Rounding::TowardZero))
        }),
        FloatMode::F24(Rounding::NearestEven) => fill(dst, table, rows, |x| {
            flush_input(x, FloatMode::F24(Rounding::NearestEven))
        }),
        FloatMode::F32 => fill(dst, table, rows, |x| flush_input(x, FloatMode::F32)),
    }
    if whole {
        if usage.rel {
            triple(&mut ctx.uniforms_rel, &ctx.uniforms_flushed);
        }
        ctx.whole_flush = Some(WholeFlush {
            mode,
            bits: table.map(|row| row.map(f32::to_bits)),
            rel: usage.rel,
        });
    }
}

/// `SoaContext::uniforms_rel` from the flushed rows.
fn triple(rel: &mut [[f32; 4]; REL_ROWS], flushed: &[[f32; 4]; FLOAT_UNIFORM_ROWS]) {
    for chunk in rel.chunks_exact_mut(FLOAT_UNIFORM_ROWS) {
        chunk.copy_from_slice(flushed);
    }
}

/// Add the result of running part of a batch, from row `lo` on, to `info` (or give its error
/// with the row index in the whole batch).
fn add_part(
    info: &mut BatchInfo,
    part: Result<BatchInfo, BatchError>,
    lo: usize,
) -> Result<(), BatchError> {
    let r = part.map_err(|e| BatchError {
        index: e.index + lo,
        error: e.error,
    })?;
    info.instructions += r.instructions;
    info.deopts += r.deopts;
    Ok(())
}

/// `Invocation::batch` on the SoA path: full groups compiled, stopped groups and the tail per
/// vertex through `per_vertex` (the same batch one vertex per call of the per-vertex code, on
/// the rows it is given), the groups starting from `from` when given.
#[allow(clippy::too_many_arguments, reason = "one batch call's parameters")]
pub(crate) fn run(
    soa: &SoaCode,
    mode: FloatMode,
    inputs: &[[[f32; 4]; 16]],
    outputs: &mut [[[f32; 4]; 16]],
    uniforms: &Uniforms,
    budget: u64,
    out_mask: u16,
    from: Option<&UnitState>,
    per_vertex: impl Fn(&[[[f32; 4]; 16]], &mut [[[f32; 4]; 16]]) -> Result<BatchInfo, BatchError>,
) -> Result<BatchInfo, BatchError> {
    let n = inputs.len().min(outputs.len());
    let full = n - n % LANES;
    let mut info = BatchInfo::default();
    let mut ctx = context();
    ctx.uniforms = uniforms;
    ctx.budget = budget;
    ctx.out_mask = u32::from(out_mask);
    if let Some(s) = from {
        fill_start(&mut ctx, s);
    }
    flush_uniforms(&mut ctx, uniforms.float_table(), soa.uniform_use, mode);
    let mut start = 0;
    let per_vertex = |lo: usize,
                      hi: usize,
                      outputs: &mut [[[f32; 4]; 16]],
                      info: &mut BatchInfo|
     -> Result<(), BatchError> {
        add_part(info, per_vertex(&inputs[lo..hi], &mut outputs[lo..hi]), lo)
    };
    // Where nearly every group stops (vertices taking different branches), starting each on
    // SoA code and re-running it costs more than running per vertex from the start. After
    // two stopped groups in a row, the next `skip` groups run per vertex, then SoA code is
    // tried again; `skip` doubles while that keeps failing (up to 64 groups, so at most ~3%
    // of the work goes to probing) and resets when a group finishes on SoA code.
    let (mut streak, mut skip) = (0u32, 4usize);
    while start < full {
        if streak >= 2 {
            let hi = (start + skip * LANES).min(full);
            soa.skipped
                .fetch_add(((hi - start) / LANES) as u64, Ordering::Relaxed);
            per_vertex(start, hi, outputs, &mut info)?;
            start = hi;
            streak = 0;
            skip = (skip * 2).min(64);
            continue;
        }
        ctx.batch_input = inputs[start..].as_ptr();
        ctx.batch_output = outputs[start..].as_mut_ptr();
        ctx.batch_count = (full - start) as u64;
        ctx.batch_done = 0;
        ctx.batch_instructions = 0;
        ctx.batch_splits = 0;
        // SAFETY: the SoA entry reads `batch_count` input rows and writes as many output
        // rows (both slices hold at least `full - start` rows from `start`, and are distinct
        // since one is `&` and the other `&mut`), reads `*uniforms` (borrowed for the call)
        // and writes only `ctx` (exclusively borrowed). `soa.exec` is the vertex code
        // `compile` generated for this program.
        let status = unsafe { crate::pica::call::lanes(&soa.exec, &mut ctx, false) };
        let done = ctx.batch_done as usize;
        info.instructions += ctx.batch_instructions;
        soa.splits.fetch_add(ctx.batch_splits, Ordering::Relaxed);
        soa.groups
            .fetch_add((done / LANES) as u64, Ordering::Relaxed);
        start += done;
        if done > 0 {
            (streak, skip) = (0, 4);
        }
        if status != 0 {
            soa.fallbacks.fetch_add(1, Ordering::Relaxed);
            per_vertex(start, start + LANES, outputs, &mut info)?;
            start += LANES;
            streak += 1;
        }
    }
    if full < n {
        per_vertex(full, n, outputs, &mut info)?;
    }
    Ok(info)
}

/// The `start_*` fields of the context from a unit state, broadcast to every lane.
fn fill_start(ctx: &mut SoaContext, s: &UnitState) {
    for (bank, row) in ctx.start_temp.iter_mut().zip(&s.temp) {
        for (lanes, &v) in bank.iter_mut().zip(row) {
            *lanes = [v; LANES];
        }
    }
    for k in 0..2 {
        let a0 = s.a0[k];
        ctx.start_a0[k] = [a0; LANES];
        // As MOVA keeps it: `16 · (128 + (a0 in -128..=127 ? a0 : 0))` (see `a0_rel`).
        let off = if (-128..=127).contains(&a0) { a0 } else { 0 };
        ctx.start_a0_rel[k] = [(16 * (128 + off)) as u32; LANES];
        ctx.start_cmp[k] = [if s.cmp[k] { u32::MAX } else { 0 }; LANES];
    }
    ctx.start_al = s.al;
}

/// What a batch or point run did (the public form is [`Outcome`](crate::Outcome)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BatchInfo {
    /// Instructions executed over all invocations.
    pub instructions: u64,
    /// Invocations that deopted and ran on the interpreter.
    pub deopts: usize,
}

impl BatchInfo {
    /// Adds invocation `index`'s instructions, or turns its error into the batch's error:
    /// the one accounting of every per-invocation batch loop.
    pub(crate) fn count(
        &mut self,
        index: usize,
        run: Result<picajit_interp::pica::exec::RunInfo, picajit_interp::pica::exec::ExecError>,
    ) -> Result<(), BatchError> {
        match run {
            Ok(r) => {
                self.instructions += r.instructions;
                Ok(())
            }
            Err(error) => Err(BatchError { index, error }),
        }
    }
}

/// An invocation of a batch that failed on the interpreter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BatchError {
    /// Index of the vertex.
    pub index: usize,
    /// The interpreter's error.
    pub error: picajit_interp::pica::exec::ExecError,
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vertex {}: {}", self.index, self.error)
    }
}

impl std::error::Error for BatchError {}
