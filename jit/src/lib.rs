//! JIT compilers for PICA200 shaders: an x86-64 backend and an AArch64 backend, both behind one
//! [`masm::MacroAssembler`] trait driven by one shared [`lower`]ing.
//!
//! # Pipeline
//!
//! ```text
//! Program ──analysis──► nodes/blocks ──lower + masm──► machine code ──runtime──► CompiledShader
//! ```
//!
//! * [`analysis`] explores everything reachable from the entry point under the hardware's
//!   CALL/IF/LOOP stack rules, resolved statically (see [`analysis::regions`]).
//! * [`lower`] turns each block into masm calls; [`x64`] implements them with SSE4.1, [`a64`]
//!   with NEON.
//! * [`runtime`] maps the code W^X, calls it, and caches compiled shaders. AArch64 code runs
//!   natively on AArch64 hosts and, with the `emulate-a64` feature, under the unicorn
//!   emulator elsewhere (`a64::emulator`), through the same `run`/`try_run`/`run_batch`.
//!
//! # Correctness contract: deopt
//!
//! Compiled code reproduces the interpreter bit for bit on every invocation it finishes.
//! Whatever it cannot reproduce (running out of budget, an undefined opcode, BREAK with an
//! empty loop stack, running past the end of the program, a full EMIT buffer) makes it stop
//! with a *deopt* status instead. [`CompiledShader::run`] then restores the registers (and
//! geometry state) it was given and re-runs that invocation on
//! [`picajit_interp::exec::Interpreter`], so results, errors included, are identical by
//! construction. Only the rows the program can write are saved for that (see
//! [`Analysis::written_registers`]), and nothing when [`Analysis::run_bounds`] proves the run
//! cannot stop early, which keeps short geometry shaders cheap. [`CompiledShader::try_run`]
//! exposes the raw outcome for tests and statistics.
//!
//! # Input contract (F24 modes)
//!
//! As in the float model (`picajit_interp::float`, "What a JIT must do"), F24-mode register
//! contents are expected to be f24 values (`F24::to_f32` images), which every upload path of
//! the engine guarantees. Under RTZ the generated code equals the interpreter for *any* f32
//! contents; under RNE the f64 sums and the RSQ recipe are proven only for f24 inputs.
//! F32 mode has no such restriction.
//!
//! # Performance notes
//!
//! One PICA instruction costs a few SSE instructions for operands plus the float model's
//! rounding fix-ups (input flush, truncation, range and NaN rules), which dominate: per vertex
//! about 0.5 ns for MOV/MAX, 2 ns for ADD/MUL, 4 ns for MAD, 5.3 ns for DP4 and 18 ns for RSQ
//! (divider-bound) on the development machine (AMD EPYC, IPC-bound at roughly 3.5). The next
//! big step is a backend that runs several vertices per SIMD register
//! ([`CompiledShader::run_batch`] is shaped for it).
//!
//! # API
//!
//! ```no_run
//! use picajit_jit::{compile, Backend, HostFeatures};
//! # fn f(program: &picajit_interp::program::Program, uniforms: &picajit_interp::state::Uniforms) {
//! let mode = picajit_interp::float::FloatMode::default();
//! let shader = compile(program, mode, Backend::X64, HostFeatures::detect()).unwrap();
//! println!("{} bytes; {}", shader.code_size(), shader.analysis());
//! let mut regs = picajit_interp::state::Registers::default();
//! let info = shader.run(&mut regs, uniforms, None, 1 << 20);
//! # }
//! ```

pub mod a64;
pub mod analysis;
pub mod batch;
pub mod error;
pub mod features;
pub mod layout;
pub mod lower;
pub mod masm;
pub mod runtime;
pub mod theia;
pub mod usc;
pub mod x64;

/// The x86-64 disassembler behind [`CompiledShader::disassemble`], re-exported for tests and
/// tools.
#[cfg(feature = "disasm")]
pub use iced_x86;
/// yaxpeax's decoder traits, which [`yaxpeax_arm`] needs to be used.
#[cfg(feature = "disasm")]
pub use yaxpeax_arch;
/// The AArch64 disassembler behind [`CompiledShader::disassemble`], re-exported for tests and
/// tools.
#[cfg(feature = "disasm")]
pub use yaxpeax_arm;

pub use analysis::Analysis;
pub use error::CompileError;
pub use features::HostFeatures;
pub use runtime::cache::{CacheKey, CodeCache};

use layout::{EmitRecord, JitContext};
use picajit_interp::exec::{ExecError, Interpreter, RunInfo};
use picajit_interp::float::{FloatMode, MaxRule};
use picajit_interp::program::{Program, ShaderKind};
use picajit_interp::state::{EmitBuffer, GeometryState, Registers, Uniforms, UnitState};
use runtime::code_buffer::{ExecCode, Status};
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Target instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// x86-64 with SSE4.1.
    X64,
    /// AArch64 with NEON.
    A64,
}

impl Backend {
    /// The backend matching the host, if there is one.
    pub fn host() -> Option<Backend> {
        if cfg!(target_arch = "x86_64") {
            Some(Backend::X64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Backend::A64)
        } else {
            None
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::X64 => "x64",
            Backend::A64 => "a64",
        })
    }
}

/// What a masm produces: machine code plus `(code offset, PICA address, text)` marks.
#[derive(Clone, Debug, Default)]
pub struct Emitted {
    /// Machine code (position independent: no absolute addresses), base address 0.
    pub code: Vec<u8>,
    /// Where each PICA instruction instance starts.
    pub marks: Vec<(usize, u32, String)>,
    /// Length of the instruction stream; the constant pool follows it.
    pub code_len: usize,
    /// Offset of the batch entry point (the single-invocation entry is at 0).
    pub batch_entry: usize,
    /// Output registers the batch entry clears in each row before running it; the caller
    /// clears the others it needs.
    pub batch_outputs_zeroed: u16,
}

/// Why compiled code did not finish an invocation (see the crate docs on deopt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitExit {
    /// Generated code asked for the interpreter at PICA address `pc`.
    Deopt {
        /// Address of the instruction that could not run compiled.
        pc: u32,
    },
    /// The budget would have run out.
    Budget,
    /// The code is for another architecture than the host's.
    NotExecutable,
    /// A geometry shader was run without a `GeometryState` (EMIT would be a no-op, which
    /// compiled code does not model).
    NoGeometryState,
}

/// EMIT records `run` makes room for before an invocation: the spare capacity of
/// `GeometryState::emitted` it ensures. More EMITs deopt while the capacity lacks room.
const EMIT_CAPACITY: usize = 64;

/// A program compiled for one float mode and backend.
pub struct CompiledShader {
    code: Vec<u8>,
    code_len: usize,
    batch_entry: usize,
    /// `Emitted::batch_outputs_zeroed`.
    batch_outputs_zeroed: u16,
    exec: Option<ExecCode>,
    marks: Vec<(usize, u32, String)>,
    analysis: Analysis,
    interp: Interpreter,
    program: Program,
    mode: FloatMode,
    max_rule: MaxRule,
    backend: Backend,
    features: HostFeatures,
    compile_time: Duration,
    /// Temporaries and outputs compiled code may write (bit n = r`n` / o`n`): the rows
    /// `run_compiled` saves so that a deopt can put them back.
    written: (u16, u16),
    /// How many rows that is (outputs count twice for geometry shaders: both banks).
    undo_rows: u32,
    /// Bounds of a run when the program cannot deopt but on budget or EMIT room: within them
    /// nothing needs saving.
    bounds: Option<analysis::RunBounds>,
    /// Multi-vertex code for `run_batch` (x86-64 hosts with AVX2, vertex shaders), generated
    /// on first use: it costs more to compile than the per-vertex code, and single
    /// invocations (geometry shaders, `run`) never need it.
    soa: OnceLock<Option<batch::SoaCode>>,
    /// Multi-vertex code whose groups start from a given unit state (`run_batch_from`):
    /// generated on the first such batch, so runs that never ask for one never pay for it.
    soa_from: OnceLock<Option<batch::SoaCode>>,
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

/// [`compile`] for the MAX reading `max_rule` (`picajit_interp::float::MaxRule`): the
/// per-vertex code, the multi-vertex code and the interpreter the code falls back to all
/// implement it.
pub fn compile_with(
    program: &Program,
    mode: FloatMode,
    max_rule: MaxRule,
    backend: Backend,
    features: HostFeatures,
) -> Result<CompiledShader, CompileError> {
    let start = Instant::now();
    let analysis = Analysis::new(program)?;
    let emitted = match backend {
        Backend::X64 => x64::generate(program, &analysis, mode, max_rule, features)?,
        Backend::A64 => a64::generate(program, &analysis, mode, max_rule, features)?,
    };
    let written @ (temps, outputs) = analysis.written_registers();
    let exec =
        if Backend::host() == Some(backend) {
            Some(ExecCode::new(&emitted.code).map_err(|e| {
                CompileError::Internal(format!("cannot map executable memory: {e}"))
            })?)
        } else {
            emulated(backend, &emitted.code)?
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
        backend,
        features,
        compile_time: start.elapsed(),
    })
}

/// Result of [`CompiledShader::run_batch`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchInfo {
    /// Instructions executed over all invocations.
    pub instructions: u64,
    /// Invocations that deopted and ran on the interpreter.
    pub deopts: usize,
}

/// An invocation of a batch that failed on the interpreter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    /// Index of the vertex.
    pub index: usize,
    /// The interpreter's error.
    pub error: ExecError,
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "vertex {}: {}", self.index, self.error)
    }
}

impl std::error::Error for BatchError {}

impl CompiledShader {
    /// Machine code size in bytes (constants included).
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
                        picajit_interp::isa::format_instruction(
                            &picajit_interp::isa::decode(word),
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

    /// Run one invocation, exactly like [`Interpreter::run`] (same registers, same results, same
    /// errors): compiled code first, the interpreter when compiled code deopts.
    pub fn run(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        mut geometry: Option<&mut GeometryState>,
        budget: u64,
    ) -> Result<RunInfo, ExecError> {
        if self.exec.is_none() {
            return self.interp.run(regs, uniforms, geometry, budget);
        }
        match self.try_run(regs, uniforms, geometry.as_deref_mut(), budget) {
            Ok(info) => Ok(info),
            // `try_run` left everything as it was, so the interpreter starts from the same state.
            Err(_) => self.interp.run(regs, uniforms, geometry, budget),
        }
    }

    /// Run one invocation on compiled code only. On `Err` the registers and the geometry state
    /// are as they were before the call (`emitted` may have more spare capacity), so callers
    /// that need the interpreter's result re-run it directly, as [`Self::run`] does.
    pub fn try_run(
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
    /// [`Interpreter::run_points`] does (one invocation per row of `inputs`, registers and
    /// geometry state carried over, b15 set after each invocation, emitted vertices into
    /// `out`), and with the same results bit for bit. Stops at the first invocation that fails
    /// on the interpreter (its index in the error; its earlier EMITs are in `out`).
    ///
    /// Where the program allows it (see [`Self::points_ineligibility`]), runs of eight
    /// invocations execute together on the multi-vertex backend, one per SIMD lane, writing
    /// their vertices straight into `out`.
    pub fn run_points(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[[[f32; 4]; 16]],
        budget: u64,
        out: &mut EmitBuffer,
    ) -> Result<BatchInfo, BatchError> {
        geometry.drain_into(out);
        if self.program.kind() == ShaderKind::Geometry && inputs.len() >= batch::LANES {
            if let Some(soa) = self.soa() {
                return batch::geometry::run(
                    self, soa, regs, uniforms, geometry, inputs, budget, out,
                );
            }
        }
        self.run_points_each(regs, uniforms, geometry, inputs, budget, out)
    }

    /// [`Self::run_points`] one invocation at a time (compiled code per invocation, the
    /// interpreter for those that deopt).
    pub(crate) fn run_points_each(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[[[f32; 4]; 16]],
        budget: u64,
        out: &mut EmitBuffer,
    ) -> Result<BatchInfo, BatchError> {
        let mut info = BatchInfo::default();
        for (index, input) in inputs.iter().enumerate() {
            regs.input = *input;
            let r = match self.try_run(regs, uniforms, Some(geometry), budget) {
                Ok(r) => Ok(r),
                Err(JitExit::NotExecutable) => {
                    self.interp.run(regs, uniforms, Some(geometry), budget)
                }
                Err(_) => {
                    info.deopts += 1;
                    self.interp.run(regs, uniforms, Some(geometry), budget)
                }
            };
            uniforms.set_bool(15, true);
            geometry.drain_into(out);
            match r {
                Ok(r) => info.instructions += r.instructions,
                Err(error) => return Err(BatchError { index, error }),
            }
        }
        Ok(info)
    }

    /// Run a vertex shader over many vertices: vertex `k` starts from
    /// [`Registers::reset_working_state`] with inputs `inputs[k]` and leaves its o0-o15 in
    /// `outputs[k]`. Invocations that deopt run on the interpreter. Stops at the first
    /// interpreter error.
    ///
    /// The interface fixes only what each vertex sees, so a backend that processes several
    /// vertices per call (one per SIMD lane) can implement it unchanged.
    pub fn run_batch(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
    ) -> Result<BatchInfo, BatchError> {
        self.run_batch_masked(inputs, outputs, uniforms, budget, 0xFFFF)
    }

    /// [`Self::run_batch`] for a caller that reads only the output registers in `out_mask`
    /// (bit n = o`n`), as an emulator reads only the registers its output map names. Those
    /// are written exactly as `run_batch` writes them; every other register of an output row
    /// either keeps its previous contents or receives the vertex's value, whichever the
    /// backend finds cheaper (the multi-vertex backend skips them: storing sixteen registers
    /// per vertex costs more than a short shader).
    pub fn run_batch_masked(
        &self,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        uniforms: &Uniforms,
        budget: u64,
        out_mask: u16,
    ) -> Result<BatchInfo, BatchError> {
        // Fewer vertices than one group would all be the per-vertex tail anyway; skipping the
        // group driver's setup keeps single-vertex batches as fast as they were.
        if inputs.len().min(outputs.len()) < batch::LANES {
            return self.run_batch_rows(inputs, outputs, uniforms, budget, out_mask);
        }
        match self.soa() {
            Some(soa) if self.program.kind() == ShaderKind::Vertex => {
                batch::run(self, soa, inputs, outputs, uniforms, budget, out_mask, None)
            }
            _ => self.run_batch_rows(inputs, outputs, uniforms, budget, out_mask),
        }
    }

    /// [`Self::run_batch_masked`] with every vertex starting from `start` (r0-r15, a0, aL,
    /// cmp; outputs +0) instead of [`Registers::reset_working_state`]. Vertices stay
    /// independent of each other, so the multi-vertex path takes these batches as well: its
    /// groups start from `start` in every lane. Returns the last vertex's final registers
    /// with the batch info (`None` for an empty batch).
    pub fn run_batch_from(
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
                    self,
                    soa,
                    &inputs[..n],
                    &mut outputs[..n],
                    uniforms,
                    budget,
                    out_mask,
                    Some(start),
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
            let r = match self.try_run(&mut regs, uniforms, None, budget) {
                Ok(r) => Ok(r),
                Err(JitExit::NotExecutable) => self.interp.run(&mut regs, uniforms, None, budget),
                Err(_) => {
                    info.deopts += 1;
                    self.interp.run(&mut regs, uniforms, None, budget)
                }
            };
            match r {
                Ok(r) => info.instructions += r.instructions,
                Err(error) => return Err(BatchError { index, error }),
            }
            *output = regs.output;
        }
        Ok(info)
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

    fn compile_soa(&self, from_state: bool) -> Option<batch::SoaCode> {
        if self.exec.is_some() {
            batch::compile(
                &self.program,
                &self.analysis,
                self.mode,
                self.max_rule,
                self.features,
                from_state,
                self.backend,
            )
            .ok()
            .flatten()
        } else {
            None
        }
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
        let mut regs = Registers::default();
        let mut start = 0;
        while start < n {
            let (finished, stopped) = match &self.exec {
                Some(exec) if self.program.kind() == ShaderKind::Vertex => {
                    // Outputs the caller reads that the batch entry does not clear: the
                    // program never writes them, so they are +0 after every vertex.
                    let clear = out_mask & !self.batch_outputs_zeroed;
                    if clear != 0 {
                        for row in &mut outputs[start..n] {
                            for i in bits(clear) {
                                row[i] = [0.0; 4];
                            }
                        }
                    }
                    let r = run_batch_compiled(
                        exec,
                        self.batch_entry,
                        &mut regs,
                        &inputs[start..n],
                        &mut outputs[start..n],
                        uniforms,
                        budget,
                    );
                    info.instructions += r.0;
                    (r.1, r.2)
                }
                _ => (0, true),
            };
            if !stopped {
                break;
            }
            // Row `start + finished` could not run compiled: the interpreter decides.
            let index = start + finished;
            info.deopts += 1;
            regs.reset_working_state();
            regs.input = inputs[index];
            match self.interp.run(&mut regs, uniforms, None, budget) {
                Ok(r) => info.instructions += r.instructions,
                Err(error) => return Err(BatchError { index, error }),
            }
            outputs[index] = regs.output;
            start = index + 1;
        }
        Ok(info)
    }

    /// Disassembly (x86-64 with iced-x86, AArch64 with yaxpeax-arm) interleaved with the PICA
    /// instructions each part implements.
    #[cfg(feature = "disasm")]
    pub fn disassemble(&self) -> String {
        let end = self.code_end();
        let marks = self.marks();
        let mut out = match self.backend {
            Backend::X64 => disassemble_x64(&self.code, end, &marks),
            Backend::A64 => disassemble_a64(&self.code, end, &marks),
        };
        out.push_str(&format!(
            "; constant pool: {} bytes\n",
            self.code.len().saturating_sub(end)
        ));
        out
    }

    /// Disassembly of the multi-vertex (SoA) code `run_batch` uses, generating it if needed;
    /// `None` when the program has none (see [`Self::batch_lanes`]).
    #[cfg(feature = "disasm")]
    pub fn disassemble_batch(&self) -> Option<String> {
        let (code, end, marks) = self.batch_code();
        if end == 0 {
            return None;
        }
        let mut out = disassemble_x64(code, end, marks);
        out.push_str(&format!(
            "; constant pool: {} bytes\n",
            code.len().saturating_sub(end)
        ));
        Some(out)
    }

    fn code_end(&self) -> usize {
        self.code_len
    }
}

/// Print `code[..end]` as x86-64, each annotation of `marks` above the instruction it marks.
#[cfg(feature = "disasm")]
fn disassemble_x64(code: &[u8], end: usize, marks: &[(usize, u32, String)]) -> String {
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    let mut out = String::new();
    let mut marks = marks.iter().peekable();
    let mut dec = Decoder::with_ip(64, &code[..end.min(code.len())], 0, DecoderOptions::NONE);
    let mut fmt = IntelFormatter::new();
    let mut text = String::new();
    while dec.can_decode() {
        let ip = dec.ip() as usize;
        while let Some((_, _, t)) = marks.next_if(|(off, _, _)| *off <= ip) {
            out.push_str(&format!("; {t}\n"));
        }
        let ins = dec.decode();
        text.clear();
        fmt.format(&ins, &mut text);
        out.push_str(&format!("  {ip:05x}  {text}\n"));
    }
    out
}

/// Print `code[..end]` as AArch64 (undecodable words as `.word`), annotated like
/// [`disassemble_x64`].
#[cfg(feature = "disasm")]
fn disassemble_a64(code: &[u8], end: usize, marks: &[(usize, u32, String)]) -> String {
    use yaxpeax_arch::{Decoder, U8Reader};
    use yaxpeax_arm::armv8::a64::InstDecoder;
    let mut out = String::new();
    let mut marks = marks.iter().peekable();
    let dec = InstDecoder::default();
    for ip in (0..end.min(code.len())).step_by(4) {
        while let Some((_, _, t)) = marks.next_if(|(off, _, _)| *off <= ip) {
            out.push_str(&format!("; {t}\n"));
        }
        let word = &code[ip..ip + 4];
        let mut reader = U8Reader::new(word);
        let text = match dec.decode(&mut reader) {
            Ok(ins) => ins.to_string(),
            Err(_) => format!(
                ".word {:#010x}",
                u32::from_le_bytes([word[0], word[1], word[2], word[3]])
            ),
        };
        out.push_str(&format!("  {ip:05x}  {text}\n"));
    }
    out
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

/// Indices of the set bits of `mask`, lowest first.
pub(crate) fn bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
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
    // Input/output point into `*regs`, as `call` allows.
    let status = unsafe { call.exec.call(&mut ctx) };
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
    regs: &mut Registers,
    inputs: &[[[f32; 4]; 16]],
    outputs: &mut [[[f32; 4]; 16]],
    uniforms: &Uniforms,
    budget: u64,
) -> (u64, usize, bool) {
    let mut ctx = JitContext::default();
    ctx.regs = regs;
    ctx.uniforms = uniforms;
    ctx.budget = budget;
    ctx.batch_input = inputs.as_ptr();
    ctx.batch_output = outputs.as_mut_ptr();
    ctx.batch_count = inputs.len().min(outputs.len()) as u64;
    // SAFETY: `regs` is exclusively borrowed for the call, `uniforms` only read; the batch rows
    // are `batch_count` valid input rows (read) and output rows (written, disjoint from the
    // inputs since one is `&` and the other `&mut`). The batch entry never touches the
    // geometry fields.
    let status = unsafe { exec.call_at(entry, &mut ctx) };
    (
        ctx.batch_instructions,
        ctx.batch_done as usize,
        status != Status::Done,
    )
}

/// Executable form of AArch64 code on a host that cannot run it natively: the emulator when
/// the `emulate-a64` feature is on, else none.
fn emulated(backend: Backend, code: &[u8]) -> Result<Option<ExecCode>, CompileError> {
    #[cfg(feature = "emulate-a64")]
    if backend == Backend::A64 {
        return ExecCode::emulated(code)
            .map(Some)
            .map_err(CompileError::Unsupported);
    }
    let _ = (backend, code);
    Ok(None)
}
