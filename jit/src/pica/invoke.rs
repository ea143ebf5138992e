//! The drivers behind [`CompiledShader::invoke`](crate::Invocation): one invocation (`run`,
//! `try_run`), vertex batches (`run_batch_masked`, `run_batch_from`) and geometry point runs
//! (`run_points`), their crate-internal result and error types, and the undo log that lets a
//! deopted invocation re-run on the interpreter.

use crate::error::JitExit;
use crate::host::runtime::ExecCode;
use crate::pica::analysis::bits;
use crate::pica::batch::geometry::Points;
use crate::pica::batch::{self, BatchError, BatchInfo};
use crate::pica::call::vertex;
use crate::pica::layout::{EmitRecord, JitContext, Status, EMIT_CAPACITY};
use crate::pica::shader::CompiledShader;
use picajit_interp::pica::exec::{ExecError, RunInfo};
use picajit_interp::pica::program::ShaderKind;
use picajit_interp::pica::state::{GeometryState, Registers, Uniforms, UnitState};

impl CompiledShader {
    /// Run one invocation, exactly like [`Interpreter::run`](picajit_interp::pica::exec::Interpreter::run) (same registers, same results, same
    /// errors): compiled code first, the interpreter when compiled code deopts.
    pub(crate) fn run(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
        budget: u64,
    ) -> Result<RunInfo, ExecError> {
        if self.exec.is_none() {
            return self.interp.run(regs, uniforms, geometry, budget);
        }
        self.run_counted(regs, uniforms, geometry, budget, &mut 0)
    }

    /// [`Self::run`], counting in `deopts` an invocation that compiled code began and the
    /// interpreter finished: the one fallback of every per-invocation driver.
    #[inline]
    fn run_counted(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        mut geometry: Option<&mut GeometryState>,
        budget: u64,
        deopts: &mut usize,
    ) -> Result<RunInfo, ExecError> {
        match self.try_run(regs, uniforms, geometry.as_deref_mut(), budget) {
            Ok(info) => Ok(info),
            Err(exit) => {
                if exit != JitExit::NotExecutable {
                    *deopts += 1;
                }
                // `try_run` left everything as it was, so the interpreter starts from the
                // same state.
                self.interp.run(regs, uniforms, geometry, budget)
            }
        }
    }

    /// Run one invocation on compiled code only. On `Err` the registers and the geometry state
    /// are as they were before the call (`emitted` may have more spare capacity), so callers
    /// that need the interpreter's result re-run it directly, as [`Self::run`] does.
    pub(crate) fn try_run(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
        budget: u64,
    ) -> Result<RunInfo, JitExit> {
        let Some(exec) = &self.exec else {
            return Err(JitExit::NotExecutable);
        };
        let geometry = match (self.program.kind(), geometry) {
            (ShaderKind::Geometry, None) => return Err(JitExit::NoGeometryState),
            (ShaderKind::Geometry, Some(g)) => Some(g),
            (ShaderKind::Vertex, _) => None,
        };
        let mut geometry = geometry;
        let mut can_deopt = true;
        if let Some(bounds) = self.bounds {
            if let Some(g) = geometry.as_deref_mut() {
                g.emitted.reserve(EMIT_CAPACITY.max(bounds.emits as usize));
            }
            // The emulator can also fail by itself, which it reports as a deopt.
            can_deopt = budget < bounds.instructions || exec.is_emulated();
        }
        let (temps, outputs) = self.written;
        let call = Call {
            exec,
            uniforms,
            budget,
            temps,
            outputs,
        };
        // The undo buffer is a zeroed local; sizing it to the program keeps the common case
        // (a handful of rows) from clearing the worst case's 768 bytes on every call.
        match (can_deopt, self.undo_rows) {
            (false, _) => run_compiled::<0>(call, regs, geometry),
            (true, 0..=8) => run_compiled::<8>(call, regs, geometry),
            (true, 9..=16) => run_compiled::<16>(call, regs, geometry),
            (true, _) => run_compiled::<48>(call, regs, geometry),
        }
    }

    /// Run a point-mode geometry shader over many input vertices, exactly as
    /// [`Interpreter::run_points`](picajit_interp::pica::exec::Interpreter::run_points) does (one invocation per row of `inputs`, registers and
    /// geometry state carried over, b15 set after each invocation, emitted vertices into
    /// `out`), and with the same results bit for bit. Stops at the first invocation that fails
    /// on the interpreter (its index in the error; its earlier EMITs are in `out`).
    ///
    /// Where the program allows it (see [`Self::points_ineligibility`]), runs of eight
    /// invocations execute together on the multi-vertex backend, one per SIMD lane, writing
    /// their vertices straight into `out`.
    pub(crate) fn run_points(
        &self,
        p: &mut Points,
        inputs: &[[[f32; 4]; 16]],
        budget: u64,
    ) -> Result<BatchInfo, BatchError> {
        if self.program.kind() == ShaderKind::Geometry && inputs.len() >= batch::LANES {
            if let Some(soa) = self.soa() {
                p.geometry.drain_into(p.out);
                return batch::geometry::run(soa, self.mode, p, inputs, budget, |p, inputs| {
                    self.run_points_each(p, inputs, budget)
                });
            }
        }
        // Records pending from before this run come first in `emitted`, so the drain at the
        // end of `run_points_each` delivers them in order.
        self.run_points_each(p, inputs, budget)
    }

    /// [`Self::run_points`] one invocation at a time (compiled code per invocation, the
    /// interpreter for those that deopt). Every record in `emitted` (also those pending from
    /// before the call) is in `out` when it returns, in order, and the slots are the replay
    /// point, as after a drain.
    ///
    /// The records are drained once at the end (and whenever [`EMIT_CAPACITY`] of them have
    /// collected), not after every invocation: a drain also copies the four slots (1 KiB), which
    /// was most of the host-side work of a one-point call.
    pub(crate) fn run_points_each(
        &self,
        p: &mut Points,
        inputs: &[[[f32; 4]; 16]],
        budget: u64,
    ) -> Result<BatchInfo, BatchError> {
        let mut info = BatchInfo::default();
        for (index, input) in inputs.iter().enumerate() {
            p.regs.input = *input;
            let geometry = Some(&mut *p.geometry);
            let r = self.run_counted(p.regs, p.uniforms, geometry, budget, &mut info.deopts);
            p.uniforms.set_bool(15, true);
            if let Err(e) = info.count(index, r) {
                // The failed invocation's earlier EMITs are in `out` too.
                p.geometry.drain_into(p.out);
                return Err(e);
            }
            if p.geometry.emitted.len() >= EMIT_CAPACITY {
                p.geometry.drain_into(p.out);
            }
        }
        p.geometry.drain_into(p.out);
        Ok(info)
    }

    /// A vertex batch ([`Invocation::batch`](crate::Invocation::batch)) for a caller that reads
    /// only the output registers in `out_mask` (bit n = o`n`), as an emulator reads only the
    /// registers its output map names. Those are written exactly as with mask 0xFFFF; every other
    /// register of an output row either keeps its previous contents or receives the vertex's value,
    /// whichever the backend finds cheaper (the multi-vertex backend skips them: storing sixteen
    /// registers per vertex costs more than a short shader).
    #[inline]
    pub(crate) fn run_batch_masked(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
        out_mask: u16,
    ) -> Result<BatchInfo, BatchError> {
        // Fewer vertices than one group would all be the per-vertex tail anyway; skipping the
        // group driver's setup keeps single-vertex batches as fast as they were. Inlined, so
        // that a one-vertex call goes straight to `run_batch_rows` (the group path's frame
        // and argument shuffling were 32 instructions of every such call).
        if inputs.len().min(outputs.len()) < batch::LANES {
            return self.run_batch_rows(inputs, outputs, uniforms, budget, out_mask);
        }
        self.run_batch_groups(inputs, outputs, uniforms, budget, out_mask)
    }

    /// [`Self::run_batch_masked`] from one group of vertices on.
    #[inline(never)]
    fn run_batch_groups(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
        out_mask: u16,
    ) -> Result<BatchInfo, BatchError> {
        match self.soa() {
            Some(soa) if self.program.kind() == ShaderKind::Vertex => batch::run(
                soa,
                self.mode,
                inputs,
                outputs,
                uniforms,
                budget,
                out_mask,
                None,
                |inputs, outputs| self.run_batch_rows(inputs, outputs, uniforms, budget, out_mask),
            ),
            _ => self.run_batch_rows(inputs, outputs, uniforms, budget, out_mask),
        }
    }

    /// [`Self::run_batch_masked`] with every vertex starting from `start` (r0-r15, a0, aL,
    /// cmp; outputs +0) instead of [`Registers::reset_working_state`]. Vertices stay
    /// independent of each other, so the multi-vertex path takes these batches as well: its
    /// groups start from `start` in every lane. Returns the last vertex's final registers
    /// with the batch info (`None` for an empty batch).
    pub(crate) fn run_batch_from(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
        out_mask: u16,
        start: &UnitState,
    ) -> Result<BatchInfo, BatchError> {
        let n = inputs.len().min(outputs.len());
        if n >= batch::LANES && self.program.kind() == ShaderKind::Vertex {
            if let Some(soa) = self.soa_from() {
                return batch::run(
                    soa,
                    self.mode,
                    &inputs[..n],
                    &mut outputs[..n],
                    uniforms,
                    budget,
                    out_mask,
                    Some(start),
                    |inputs, outputs| self.run_rows_from(inputs, outputs, uniforms, budget, start),
                );
            }
        }
        self.run_rows_from(&inputs[..n], &mut outputs[..n], uniforms, budget, start)
    }

    /// [`Self::run_batch_from`] one invocation at a time: compiled code, the interpreter for
    /// invocations that deopt.
    pub(crate) fn run_rows_from(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
        start: &UnitState,
    ) -> Result<BatchInfo, BatchError> {
        let mut info = BatchInfo::default();
        let mut regs = Registers::default();
        for (index, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
            regs.input = *input;
            regs.output = [[0.0; 4]; 16];
            regs.set_unit_state(start);
            let r = self.run_counted(&mut regs, uniforms, None, budget, &mut info.deopts);
            info.count(index, r)?;
            *output = regs.output;
        }
        Ok(info)
    }

    /// [`Self::run_batch_masked`] one vertex per call of the compiled code (the per-vertex
    /// batch entry), with the interpreter for invocations that deopt.
    pub(crate) fn run_batch_rows(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
        out_mask: u16,
    ) -> Result<BatchInfo, BatchError> {
        let n = inputs.len().min(outputs.len());
        let mut info = BatchInfo::default();
        let exec = match &self.exec {
            Some(exec) if self.program.kind() == ShaderKind::Vertex => exec,
            _ => {
                for index in 0..n {
                    self.row_on_interpreter(inputs, outputs, index, uniforms, budget, &mut info)?;
                }
                return Ok(info);
            }
        };
        // Outputs the caller reads that the batch entry does not clear: the program never
        // writes them, so they are +0 after every vertex.
        let clear = out_mask & !self.batch_outputs_zeroed;
        if clear != 0 {
            for row in &mut outputs[..n] {
                for i in bits(clear) {
                    row[i] = [0.0; 4];
                }
            }
        }
        let mut start = 0;
        while start < n {
            let (instructions, finished, stopped) = run_batch_compiled(
                exec,
                self.batch_entry,
                &inputs[start..n],
                &mut outputs[start..n],
                uniforms,
                budget,
            );
            info.instructions += instructions;
            if !stopped {
                break;
            }
            let index = start + finished;
            self.row_on_interpreter(inputs, outputs, index, uniforms, budget, &mut info)?;
            start = index + 1;
        }
        Ok(info)
    }

    /// Row `index` of a batch that compiled code could not run: the interpreter decides,
    /// from the reset state (counted as a deopt). Kept out of line: rare, and its register
    /// block would otherwise be in every call's frame.
    #[cold]
    #[inline(never)]
    fn row_on_interpreter(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        index: usize,
        uniforms: &Uniforms,
        budget: u64,
        info: &mut BatchInfo,
    ) -> Result<(), BatchError> {
        info.deopts += 1;
        let mut regs = Registers::default();
        regs.input = inputs[index];
        info.count(index, self.interp.run(&mut regs, uniforms, None, budget))?;
        outputs[index] = regs.output;
        Ok(())
    }
}

/// What [`run_compiled`] needs besides the state it updates.
struct Call<'a> {
    exec: &'a ExecCode,
    uniforms: &'a Uniforms,
    budget: u64,
    /// Temporaries the code may write (see `CompiledShader::written`).
    temps: u16,
    /// Outputs the code may write, in either bank.
    outputs: u16,
}

/// Rows of the register banks compiled code may overwrite before it deopts: `N` rows of
/// storage, filled in a fixed order (temporaries, current bank, other bank) so that restoring
/// walks the same order.
struct Undo<const N: usize> {
    rows: [[f32; 4]; N],
    a0: [i32; 2],
    al: i32,
    cmp: [u8; 2],
}

impl<const N: usize> Undo<N> {
    fn save(call: &Call, regs: &Registers, other_bank: Option<&[[f32; 4]; 16]>) -> Undo<N> {
        let mut rows = [[0.0; 4]; N];
        let mut k = 0;
        let banks = [Some(&regs.output), other_bank];
        for i in bits(call.temps) {
            rows[k] = regs.temp[i];
            k += 1;
        }
        for bank in banks.into_iter().flatten() {
            for i in bits(call.outputs) {
                rows[k] = bank[i];
                k += 1;
            }
        }
        Undo {
            rows,
            a0: regs.a0,
            al: regs.al,
            cmp: regs.cmp,
        }
    }

    fn restore(&self, call: &Call, regs: &mut Registers, other_bank: Option<&mut [[f32; 4]; 16]>) {
        let mut k = 0;
        for i in bits(call.temps) {
            regs.temp[i] = self.rows[k];
            k += 1;
        }
        for bank in [Some(&mut regs.output), other_bank].into_iter().flatten() {
            for i in bits(call.outputs) {
                bank[i] = self.rows[k];
                k += 1;
            }
        }
        regs.a0 = self.a0;
        regs.al = self.al;
        regs.cmp = self.cmp;
    }
}

/// Run the single-invocation entry on `regs` and `geometry` in place: the output banks are
/// `regs.output` and the state's own `other_bank`, and EMIT appends straight into the spare
/// capacity of `emitted`, so nothing is copied in or out but the rows a deopt may have to
/// undo. On `Err` everything is restored (`emitted` keeps its length).
///
/// `N` must hold the rows [`Undo`] saves (`CompiledShader::try_run` picks it); `N == 0`
/// saves nothing, for runs [`analysis::RunBounds`] proves cannot stop early.
fn run_compiled<const N: usize>(
    call: Call,
    regs: &mut Registers,
    geometry: Option<&mut GeometryState>,
) -> Result<RunInfo, JitExit> {
    let undo =
        (N > 0).then(|| Undo::<N>::save(&call, regs, geometry.as_deref().map(|g| &g.other_bank)));
    let rp: *mut Registers = regs;
    let mut ctx = JitContext::default();
    ctx.regs = rp;
    // SAFETY: `rp` comes from a live `&mut Registers`; taking field addresses does not create
    // references.
    ctx.input = unsafe { std::ptr::addr_of!((*rp).input) };
    // SAFETY: as above.
    ctx.output = unsafe { std::ptr::addr_of_mut!((*rp).output) };
    ctx.uniforms = call.uniforms;
    ctx.budget = call.budget;
    let out_ptr = ctx.output;
    let mut geometry = geometry;
    let emitted_before = if let Some(g) = geometry.as_deref_mut() {
        // Room for the usual number of EMITs (`try_run` reserved what a bounded program
        // needs); a program that emits more deopts the first time, after which the
        // interpreter's pushes have grown the capacity.
        g.emitted.reserve(EMIT_CAPACITY);
        let before = g.emitted.len();
        let spare = g.emitted.spare_capacity_mut();
        ctx.emit_cap = spare.len().min(u32::MAX as usize) as u32;
        ctx.emit_buf = spare.as_mut_ptr().cast::<EmitRecord>();
        ctx.other_bank = &mut g.other_bank;
        ctx.setemit = [g.vertex_id, g.primitive as u8, g.winding as u8, 0];
        before
    } else {
        0
    };
    // SAFETY: every pointer in `ctx` refers to memory borrowed for the duration of the call:
    // `regs` (exclusive), `uniforms` (shared, only read), and for geometry shaders
    // `other_bank` (exclusive, a different object than `regs`) and `emit_buf`, the spare
    // capacity of `emitted`: `emit_cap` records, which the code only writes (never reads).
    // Input/output point into `*regs`, as `vertex` allows.
    let status = unsafe { vertex(call.exec, 0, &mut ctx) };
    let exit = match status {
        Status::Done => None,
        Status::Budget => Some(JitExit::Budget),
        Status::Deopt => Some(JitExit::Deopt { pc: ctx.deopt_pc }),
    };
    if let Some(exit) = exit {
        let Some(undo) = undo else {
            // Nothing was saved, so the caller's state cannot be put back: better to stop
            // than to let the interpreter re-run from half-updated registers.
            panic!("compiled code stopped ({exit:?}) where the analysis bounds say it cannot");
        };
        undo.restore(&call, regs, geometry.map(|g| &mut g.other_bank));
        return Err(exit);
    }
    if let Some(g) = geometry {
        // An odd number of EMITs leaves the current bank in `other_bank`.
        if ctx.output != out_ptr {
            std::mem::swap(&mut regs.output, &mut g.other_bank);
        }
        g.vertex_id = ctx.setemit[0];
        g.primitive = ctx.setemit[1] != 0;
        g.winding = ctx.setemit[2] != 0;
        let new = ctx.emit_len as usize;
        assert!(
            new <= ctx.emit_cap as usize,
            "compiled code wrote more EMIT records than it had room for"
        );
        // SAFETY: the code finished, and it wrote one complete record (outputs, slot masked
        // to 0..=3, primitive and winding as 0/1, i.e. valid `bool`s) at each of the first
        // `emit_len` positions of the spare capacity, which `emit_cap` bounds (checked above).
        unsafe { g.emitted.set_len(emitted_before + new) };
        // Each slot keeps the last vertex sent to it: walking backwards copies each at most
        // once.
        let mut seen = 0u8;
        for e in g.emitted[emitted_before..].iter().rev() {
            let bit = 1 << (e.slot & 3);
            if seen & bit == 0 {
                seen |= bit;
                g.slots[(e.slot & 3) as usize] = e.outputs;
                if seen == 0xF {
                    break;
                }
            }
        }
    }
    Ok(RunInfo {
        instructions: call.budget - ctx.budget,
    })
}

/// Run rows through the batch entry until one does not finish: returns (instructions of the
/// finished rows, rows finished, whether a row stopped).
fn run_batch_compiled(
    exec: &ExecCode,
    entry: usize,
    inputs: &[[[f32; 4]; 16]],
    outputs: &mut [[[f32; 4]; 16]],
    uniforms: &Uniforms,
    budget: u64,
) -> (u64, usize, bool) {
    // The batch entry keeps its working registers in its own stack frame: `ctx.regs` stays
    // null.
    let mut ctx = JitContext::default();
    ctx.uniforms = uniforms;
    ctx.budget = budget;
    ctx.batch_input = inputs.as_ptr();
    ctx.batch_output = outputs.as_mut_ptr();
    ctx.batch_count = inputs.len().min(outputs.len()) as u64;
    // SAFETY: `uniforms` is only read; the batch rows
    // are `batch_count` valid input rows (read) and output rows (written, disjoint from the
    // inputs since one is `&` and the other `&mut`). The batch entry never touches the
    // geometry fields.
    let status = unsafe { vertex(exec, entry, &mut ctx) };
    (
        ctx.batch_instructions,
        ctx.batch_done as usize,
        status != Status::Done,
    )
}
