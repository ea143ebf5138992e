//! The compiled shader: a program's per-vertex code for one backend and float mode, the
//! interpreter it falls back to, and the multi-vertex code it generates on first use. The
//! calls that run it (one invocation, vertex batches, geometry point runs) are in
//! `invoke.rs`.

use crate::error::CompileError;
use crate::host::features::HostFeatures;
use crate::host::runtime::{ExecCode, ExecError};
use crate::host::Backend;
use crate::pica::analysis::usage::has_lane_branches;
use crate::pica::analysis::{self, Analysis};
use crate::pica::batch::{self, BatchStats, LANES};
use crate::pica::layout::Mark;
use crate::pica::{a64, x64};
use picajit_interp::pica::exec::Interpreter;
use picajit_interp::pica::float::{FloatMode, MaxRule};
use picajit_interp::pica::program::{Program, ShaderKind};
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A program compiled for one float mode and backend.
pub struct CompiledShader {
    pub(crate) code: Vec<u8>,
    pub(crate) code_len: usize,
    pub(crate) batch_entry: usize,
    /// `Emitted::batch_outputs_zeroed`.
    pub(crate) batch_outputs_zeroed: u16,
    pub(crate) exec: Option<ExecCode>,
    pub(crate) marks: Vec<(usize, u32, String)>,
    pub(crate) analysis: Analysis,
    pub(crate) interp: Interpreter,
    pub(crate) program: Program,
    pub(crate) mode: FloatMode,
    pub(crate) max_rule: MaxRule,
    /// How the NEON multi-vertex code maps a group onto q registers.
    pub(crate) a64_lanes: a64::A64Lanes,
    pub(crate) backend: Backend,
    pub(crate) features: HostFeatures,
    pub(crate) compile_time: Duration,
    /// Temporaries and outputs compiled code may write (bit n = r`n` / o`n`): the rows
    /// `run_compiled` saves so that a deopt can put them back.
    pub(crate) written: (u16, u16),
    /// How many rows that is (outputs count twice for geometry shaders: both banks).
    pub(crate) undo_rows: u32,
    /// Bounds of a run when the program cannot deopt but on budget or EMIT room: within them
    /// nothing needs saving.
    pub(crate) bounds: Option<analysis::RunBounds>,
    /// Multi-vertex code for `Invocation::batch` (x86-64 hosts with AVX2, vertex shaders),
    /// generated on first use: it costs more to compile than the per-vertex code, and single
    /// invocations (geometry shaders, `run`) never need it.
    pub(crate) soa: OnceLock<Option<batch::SoaCode>>,
    /// Multi-vertex code whose groups start from a given unit state (`run_batch_from`):
    /// generated on the first such batch, so runs that never ask for one never pay for it.
    pub(crate) soa_from: OnceLock<Option<batch::SoaCode>>,
}

impl fmt::Debug for CompiledShader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledShader")
            .field("backend", &self.backend)
            .field("mode", &self.mode)
            .field("code_size", &self.code.len())
            .field("analysis", &self.analysis.to_string())
            .finish()
    }
}

/// Compile `program` for `backend`, generating code that uses only `features`.
///
/// Code for a backend other than the host's is generated (for inspection and tests) but not
/// executable: its `run` always uses the interpreter. The exception is AArch64 code with the
/// `emulate-a64` feature, which runs under the emulator.
pub fn compile(
    program: &Program,
    mode: FloatMode,
    backend: Backend,
    features: HostFeatures,
) -> Result<CompiledShader, CompileError> {
    compile_with(program, mode, MaxRule::default(), backend, features)
}

/// [`compile`] for the MAX reading `max_rule` (`picajit_interp::pica::float::MaxRule`): the
/// per-vertex code, the multi-vertex code and the interpreter the code falls back to all
/// implement it.
pub fn compile_with(
    program: &Program,
    mode: FloatMode,
    max_rule: MaxRule,
    backend: Backend,
    features: HostFeatures,
) -> Result<CompiledShader, CompileError> {
    let options = CompileOptions {
        max_rule,
        ..CompileOptions::default()
    };
    compile_with_options(program, mode, backend, features, options)
}

/// The settings of [`compile_with_options`] beyond float mode, backend and features. Start
/// from `CompileOptions::default()` and use the `with_*` setters: the struct is
/// `#[non_exhaustive]`, so options added later do not break callers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CompileOptions {
    /// The MAX reading (see [`compile_with`]).
    pub max_rule: MaxRule,
    /// How the NEON multi-vertex code runs a group (AArch64 only: four lanes per body run
    /// by default, or eight).
    pub a64_lanes: a64::A64Lanes,
}

impl CompileOptions {
    /// These options with [`Self::max_rule`] set.
    #[must_use]
    pub fn with_max_rule(mut self, max_rule: MaxRule) -> Self {
        self.max_rule = max_rule;
        self
    }

    /// These options with [`Self::a64_lanes`] set.
    #[must_use]
    pub fn with_a64_lanes(mut self, a64_lanes: a64::A64Lanes) -> Self {
        self.a64_lanes = a64_lanes;
        self
    }
}

/// [`compile`] with every setting in `options`.
pub fn compile_with_options(
    program: &Program,
    mode: FloatMode,
    backend: Backend,
    features: HostFeatures,
    options: CompileOptions,
) -> Result<CompiledShader, CompileError> {
    let CompileOptions {
        max_rule,
        a64_lanes,
    } = options;
    let start = Instant::now();
    let analysis = Analysis::new(program)?;
    let emitted = match backend {
        Backend::X64 => x64::generate(program, &analysis, mode, max_rule, features)?,
        Backend::A64 => a64::generate(program, &analysis, mode, max_rule, features)?,
    };
    let written @ (temps, outputs) = analysis.written_registers();
    let exec = match ExecCode::for_backend(backend, &emitted.code) {
        Ok(exec) => Some(exec),
        // Code for another machine is still compiled: for inspection, and its size.
        Err(ExecError::NotRunnable(_)) => None,
        Err(e @ ExecError::Map(_)) => return Err(CompileError::Internal(e.to_string())),
        Err(e @ ExecError::Emulator(_)) => return Err(CompileError::Unsupported(e.to_string())),
    };
    Ok(CompiledShader {
        soa: OnceLock::new(),
        soa_from: OnceLock::new(),
        written,
        undo_rows: temps.count_ones()
            + outputs.count_ones() * (1 + (program.kind() == ShaderKind::Geometry) as u32),
        bounds: analysis.run_bounds(),
        code_len: emitted.code_len,
        batch_entry: emitted.batch_entry,
        batch_outputs_zeroed: emitted.batch_outputs_zeroed,
        code: emitted.code,
        exec,
        marks: emitted.marks,
        analysis,
        interp: Interpreter::with_max_rule(program, mode, max_rule),
        program: program.clone(),
        mode,
        max_rule,
        a64_lanes,
        backend,
        features,
        compile_time: start.elapsed(),
    })
}

/// Heap bytes of code annotations.
pub(crate) fn marks_bytes(marks: &[Mark]) -> usize {
    marks
        .iter()
        .map(|m| std::mem::size_of_val(m) + m.2.capacity())
        .sum()
}

impl CompiledShader {
    /// Machine code size in bytes (constants included).
    /// Bytes of memory this compiled shader holds, by its own count: the mapped code (whole
    /// pages), the copy of its bytes and annotations, the analysis, the program and the
    /// interpreter it falls back to, and the multi-vertex code once generated (so the figure
    /// can grow after the first batch). What [`CodeCache`](crate::CodeCache) counts against
    /// its budget; allocator overhead comes on top.
    pub fn footprint(&self) -> usize {
        self.fixed_footprint() + self.lane_footprint()
    }

    /// The part of [`Self::footprint`] fixed at compilation (all but the multi-vertex code).
    pub(crate) fn fixed_footprint(&self) -> usize {
        use std::mem::size_of;
        let a = &self.analysis;
        let analysis = a.nodes.capacity() * size_of::<crate::pica::analysis::blocks::Node>()
            + a.contexts.iter().map(|c| {
                size_of_val(c)
                    + size_of_val(c.calls.as_slice())
                    + size_of_val(c.ifs.as_slice())
                    + size_of_val(c.loops.as_slice())
            }).sum::<usize>()
            + a.blocks.iter().map(|b| size_of_val(b) + b.nodes.capacity() * 4).sum::<usize>()
            + a.leader_of.capacity() * size_of::<Option<u32>>()
            // BTreeSet nodes: the value plus about as much again of node overhead.
            + a.reachable.len() * 8
            + a.descriptors.len() * 2;
        size_of::<CompiledShader>()
            + self.exec.as_ref().map_or(0, ExecCode::mapped_bytes)
            + self.code.capacity()
            + marks_bytes(&self.marks)
            + analysis
            + self.interp.heap_bytes()
            + self.program.code().len() * 4
            + self.program.opdescs().len() * 8
    }

    /// The multi-vertex code generated so far: the part of [`Self::footprint`] that grows
    /// after compilation, cheap to ask for.
    pub(crate) fn lane_footprint(&self) -> usize {
        let lanes = |c: &OnceLock<Option<batch::SoaCode>>| {
            c.get()
                .and_then(Option::as_ref)
                .map_or(0, batch::SoaCode::footprint)
        };
        lanes(&self.soa) + lanes(&self.soa_from)
    }

    pub fn code_size(&self) -> usize {
        self.code.len()
    }

    /// Bytes of instructions before the constant pool.
    pub fn instruction_bytes(&self) -> usize {
        self.code_len
    }

    /// The machine code (base address 0).
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// `(code offset, PICA address, instruction text)` for each compiled instruction instance
    /// (and for the out-of-line parts, with PICA address `u32::MAX`).
    pub fn marks(&self) -> Vec<(usize, u32, String)> {
        self.marks
            .iter()
            .map(|(off, pc, text)| {
                let text = if text.is_empty() {
                    let word = self.program.code().get(*pc as usize).copied().unwrap_or(0);
                    format!(
                        "{pc:03x}: {}",
                        picajit_interp::pica::isa::format_instruction(
                            &picajit_interp::pica::isa::decode(word),
                            self.program.opdescs()
                        )
                    )
                } else {
                    text.clone()
                };
                (*off, *pc, text)
            })
            .collect()
    }

    /// The control-flow analysis this code was generated from.
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// Wall time `compile` took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// Float mode.
    pub fn mode(&self) -> FloatMode {
        self.mode
    }

    /// Target backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Features the code may use.
    pub fn features(&self) -> HostFeatures {
        self.features
    }

    /// Address of the executable mapping (diagnostics: perf maps, W^X checks); `None` when the
    /// code is not executable here or runs under the emulator.
    pub fn exec_address(&self) -> Option<usize> {
        self.exec.as_ref().and_then(|e| e.address())
    }

    /// True when the code can run on this host (natively or emulated).
    pub fn is_executable(&self) -> bool {
        self.exec.is_some()
    }

    /// True when the code runs under the AArch64 emulator.
    pub fn is_emulated(&self) -> bool {
        self.exec.as_ref().is_some_and(|e| e.is_emulated())
    }

    /// The program this was compiled from.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The multi-vertex code, generated on the first call. A program the multi-vertex
    /// generator cannot take (or an error in it) keeps the per-vertex batch path, which gives
    /// the same results.
    pub(crate) fn soa(&self) -> Option<&batch::SoaCode> {
        self.soa.get_or_init(|| self.compile_soa(false)).as_ref()
    }

    /// The multi-vertex code for [`Self::run_batch_from`], generated on its first call.
    pub(crate) fn soa_from(&self) -> Option<&batch::SoaCode> {
        self.soa_from
            .get_or_init(|| self.compile_soa(true))
            .as_ref()
    }

    pub(crate) fn compile_soa(&self, from_state: bool) -> Option<batch::SoaCode> {
        if self.exec.is_some() {
            batch::compile(self, from_state).ok().flatten()
        } else {
            None
        }
    }

    /// Disassembly (x86-64 with iced-x86, AArch64 with yaxpeax-arm) interleaved with the PICA
    /// instructions each part implements.
    #[cfg(feature = "disasm")]
    pub fn disassemble(&self) -> String {
        crate::disasm::disassemble(
            self.backend,
            &self.code,
            self.code_end(),
            &text_marks(&self.marks()),
        )
    }

    /// Disassembly of the multi-vertex (SoA) code `Invocation::batch` uses, generating it if
    /// needed; `None` when the program has none (see [`Self::batch_lanes`]).
    #[cfg(feature = "disasm")]
    pub fn disassemble_batch(&self) -> Option<String> {
        let (code, end, marks) = self.batch_code();
        if end == 0 {
            return None;
        }
        Some(crate::disasm::disassemble(
            Backend::X64,
            code,
            end,
            &text_marks(marks),
        ))
    }

    pub(crate) fn code_end(&self) -> usize {
        self.code_len
    }
}

impl CompiledShader {
    /// Vertices `Invocation::batch` (geometry shaders: invocations `run_points`) processes per SoA
    /// group: [`LANES`] when the program runs on the multi-vertex backend, 1 otherwise. Generates
    /// the multi-vertex code if `Invocation::batch` has not yet, so a loader can call it to take
    /// that cost up front.
    pub fn batch_lanes(&self) -> usize {
        if self.soa().is_some() {
            LANES
        } else {
            1
        }
    }

    /// The multi-vertex code runs with lane masks, so that vertices of a group may take
    /// different paths at cmp-dependent branches (false without multi-vertex code).
    pub fn batch_lane_masks(&self) -> bool {
        self.soa().is_some() && has_lane_branches(&self.analysis)
    }

    /// Why `Invocation::batch` runs one vertex per call of the compiled code (`None` when it runs
    /// [`LANES`] vertices per group on the multi-vertex backend).
    pub fn batch_ineligibility(&self) -> Option<&'static str> {
        if self.program.kind() != ShaderKind::Vertex {
            return Some("not a vertex shader");
        }
        self.soa_ineligibility()
    }

    /// Why the program has no multi-vertex code on this host (`None` when it has).
    fn soa_ineligibility(&self) -> Option<&'static str> {
        if let Some(why) =
            batch::eligibility(&self.program, &self.analysis, self.features, self.backend())
        {
            return Some(why);
        }
        if self.soa().is_none() {
            return Some("this host cannot run the code");
        }
        None
    }

    /// Why a point run ([`Invocation::points`](crate::Invocation::points)) runs one
    /// invocation at a time (`None` when it runs [`LANES`] invocations per group on the
    /// multi-vertex backend; `analysis/points.rs` has the proof).
    pub fn points_ineligibility(&self) -> Option<&'static str> {
        if self.program.kind() != ShaderKind::Geometry {
            return Some("not a geometry shader");
        }
        self.soa_ineligibility()
    }

    /// The batch path without generating anything: `Some(true)` when the multi-vertex code
    /// exists, `Some(false)` when the program (or host) has none, `None` when the program
    /// qualifies for it but it has not been generated yet (the first batch, point run or
    /// [`Self::batch_lanes`] generates it). For loaders that want to report the path
    /// cheaply.
    pub fn batch_generated(&self) -> Option<bool> {
        if batch::eligibility(&self.program, &self.analysis, self.features, self.backend())
            .is_some()
        {
            return Some(false);
        }
        self.soa.get().map(Option::is_some)
    }

    /// SoA usage counters (zero when [`Self::batch_lanes`] is 1).
    pub fn batch_stats(&self) -> BatchStats {
        self.soa().map(batch::SoaCode::stats).unwrap_or_default()
    }

    /// [`Self::batch_stats`] of the multi-vertex code that batches starting from a given unit state
    /// run on ([`Invocation::from_state`](crate::Invocation::from_state); zero until the first such
    /// batch).
    pub fn batch_from_stats(&self) -> BatchStats {
        self.soa_from
            .get()
            .and_then(Option::as_ref)
            .map(batch::SoaCode::stats)
            .unwrap_or_default()
    }

    /// Generate the multi-vertex code of this shader's backend without making it runnable,
    /// for code-size and compile-time reports of code this host may not run: the time it
    /// took and its size in bytes (`None` when the program has no multi-vertex code).
    pub fn batch_codegen(&self) -> Option<(std::time::Duration, usize)> {
        let start = std::time::Instant::now();
        let ((code, ..), _) = batch::codegen(self, false).ok()??;
        Some((start.elapsed(), code.len()))
    }

    /// The SoA machine code (empty when there is none) and its annotations.
    pub fn batch_code(&self) -> (&[u8], usize, &[Mark]) {
        match self.soa() {
            Some(s) => s.code(),
            None => (&[], 0, &[]),
        }
    }
}

/// The disassembly's annotations of `marks`: each instruction instance's text at its offset.
#[cfg(feature = "disasm")]
fn text_marks(marks: &[(usize, u32, String)]) -> Vec<(usize, String)> {
    marks.iter().map(|(off, _, t)| (*off, t.clone())).collect()
}
