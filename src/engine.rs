//! The engine API: pick an execution backend for a program, run invocations and batches.
//!
//! A [`Shader`] is a program prepared for one [`EngineConfig`]. With the JIT selected (the
//! default, [`Engine::Jit`]) it holds compiled code when the analysis proves that
//! compiled code reproduces the hardware, and otherwise runs on the reference interpreter;
//! [`Shader::fallback_reason`] says why. Either way, results are bit-identical to
//! [`picajit_interp::pica::exec::Interpreter`].

use crate::shbin::{Constant, Dvle, Shbin};
use crate::{budget_or_default, Engine, DEFAULT_BUDGET};
use picajit_interp::pica::exec::{ExecError, Interpreter, RunInfo};
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding, F24};
use picajit_interp::pica::isa::{decode, DstReg, Instruction, SrcReg};
use picajit_interp::pica::program::{GsInputMode, Program, ProgramError};
use picajit_interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms, UnitState};
use picajit_jit::{
    A64Lanes, Backend, CodeCache, CompileOptions, CompiledShader, HostFeatures, Invocation,
};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// The engine a [`Shader`] actually runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActiveBackend {
    /// Reference interpreter.
    Interpreter,
    /// x86-64 machine code.
    X64,
    /// AArch64 machine code.
    A64,
}

impl fmt::Display for ActiveBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActiveBackend::Interpreter => "interpreter",
            ActiveBackend::X64 => "x64",
            ActiveBackend::A64 => "a64",
        })
    }
}

/// Engine settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EngineConfig {
    /// The engine (default: the host's JIT, see [`Engine`]).
    pub engine: Engine,
    /// Float semantics.
    pub float_mode: FloatMode,
    /// Most instructions per invocation before [`ExecError::BudgetExhausted`]; 0 stands for
    /// [`DEFAULT_BUDGET`] ([`budget_or_default`]).
    pub budget: u64,
    /// Which reading of `max(0, -inf)` every engine implements (`docs/float-max.md`).
    pub max_rule: MaxRule,
    /// How the AArch64 JIT's multi-vertex code runs a group of eight vertices: four lanes
    /// per run of its body (the default) or eight. Results are the same; other backends
    /// ignore it.
    pub a64_lanes: A64Lanes,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            engine: Engine::Jit,
            float_mode: FloatMode::default(),
            budget: DEFAULT_BUDGET,
            max_rule: MaxRule::default(),
            a64_lanes: A64Lanes::default(),
        }
    }
}

/// Errors from preparing a shader.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineError {
    /// The program is malformed.
    Program(ProgramError),
    /// The requested backend cannot run on this host in this build.
    BackendUnavailable(String),
    /// The SHBIN has no DVLE with that index.
    NoSuchDvle { index: usize, count: usize },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Program(e) => write!(f, "invalid program: {e}"),
            EngineError::BackendUnavailable(why) => write!(f, "backend unavailable: {why}"),
            EngineError::NoSuchDvle { index, count } => {
                write!(f, "DVLE #{index} requested but the SHBIN has {count}")
            }
        }
    }
}

impl std::error::Error for EngineError {}

impl From<ProgramError> for EngineError {
    fn from(e: ProgramError) -> Self {
        EngineError::Program(e)
    }
}

/// A failed vertex in a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    /// Index of the vertex whose invocation failed; earlier outputs are valid.
    pub vertex: usize,
    /// What went wrong.
    pub error: ExecError,
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "vertex {}: {}", self.vertex, self.error)
    }
}

impl std::error::Error for BatchError {}

/// The engine's error for a failed JIT invocation. The invocations the engine builds fail
/// only as the interpreter does ([`picajit_jit::Error::Exec`]): they are never compiled-only
/// and set no option their kind refuses.
fn run_error(e: picajit_jit::Error) -> BatchError {
    match e {
        picajit_jit::Error::Exec { index, error } => BatchError {
            vertex: index,
            error,
        },
        other => unreachable!("a JIT invocation failed other than on the interpreter: {other}"),
    }
}

/// What [`Shader::run_points`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PointsInfo {
    /// Instructions executed over all invocations.
    pub instructions: u64,
    /// Vertices appended to the [`EmitBuffer`] (the records that were pending included).
    pub emitted: usize,
}

/// A program prepared for execution.
#[derive(Debug)]
pub struct Shader {
    program: Program,
    interp: Interpreter,
    jit: Option<Arc<CompiledShader>>,
    config: EngineConfig,
    active: ActiveBackend,
    fallback: Option<String>,
    input_mask: u16,
    output_mask: u16,
    /// The same program prepared for other entry points ([`Shader::with_entry`]), each
    /// compiled once, on its first run.
    entries: Mutex<HashMap<u16, Arc<Shader>>>,
    /// Threads vertex batches may use (0: automatic, see [`Shader::set_threads`]).
    threads: usize,
}

/// Vertices a batch needs before [`Shader::set_threads`]'s automatic setting splits it
/// across the host's cores. A split on the worker pool costs about 5 us of CPU time per
/// call (`benches/split.rs`; README "Results"), and a part of this size of `mvp`, the
/// cheapest example, takes about 100 us, so the split repays its cost many times over; the
/// wall-clock crossover on an idle machine has not been measured, so the threshold is not
/// lowered towards it.
pub const PARALLEL_MIN_BATCH: usize = 8192;

/// Fewest vertices one thread of a split batch takes, whatever the thread count asked for.
pub const PARALLEL_MIN_PER_THREAD: usize = 512;

impl Shader {
    /// Prepare `program` for `config`, compiling it when a JIT is selected.
    pub fn new(program: Program, config: &EngineConfig) -> Result<Shader, EngineError> {
        Shader::prepare(program, config, None)
    }

    /// [`Shader::new`] reusing compiled code from `cache`: emulators switch between a few
    /// programs many times per frame, and a hit skips code generation (the key covers
    /// everything that changes the code, see [`CodeCache`]).
    pub fn with_cache(
        program: Program,
        config: &EngineConfig,
        cache: &CodeCache,
    ) -> Result<Shader, EngineError> {
        Shader::prepare(program, config, Some(cache))
    }

    fn prepare(
        program: Program,
        config: &EngineConfig,
        cache: Option<&CodeCache>,
    ) -> Result<Shader, EngineError> {
        let config = &EngineConfig {
            budget: budget_or_default(config.budget),
            ..*config
        };
        let interp = Interpreter::with_max_rule(&program, config.float_mode, config.max_rule);
        let target = config.engine.backend();
        let mut shader = Shader {
            input_mask: input_mask(&program),
            output_mask: program_output_mask(&program),
            program,
            interp,
            jit: None,
            config: *config,
            active: ActiveBackend::Interpreter,
            fallback: None,
            entries: Mutex::new(HashMap::new()),
            threads: 0,
        };
        let Some(backend) = target else {
            if config.engine == Engine::Jit {
                shader.fallback = Some("no JIT backend exists for this host architecture".into());
            }
            return Ok(shader);
        };
        let features = HostFeatures::detect();
        let options = CompileOptions {
            max_rule: config.max_rule,
            a64_lanes: config.a64_lanes,
        };
        let compiled = match cache {
            Some(c) => c.get_or_compile_with_options(
                &shader.program,
                config.float_mode,
                backend,
                features,
                options,
            ),
            None => picajit_jit::compile_with_options(
                &shader.program,
                config.float_mode,
                backend,
                features,
                options,
            )
            .map(Arc::new),
        };
        match compiled {
            Ok(code) if code.is_executable() => {
                shader.active = match backend {
                    Backend::X64 => ActiveBackend::X64,
                    Backend::A64 => ActiveBackend::A64,
                };
                shader.jit = Some(code);
            }
            Ok(_) => {
                return Err(EngineError::BackendUnavailable(format!(
                    "{backend} code cannot run on this host{}",
                    if backend == Backend::A64 {
                        " (other hosts run it under emulation when built with the `a64-emu` feature)"
                    } else {
                        ""
                    }
                )))
            }
            // A program the JIT cannot reproduce still runs, on the interpreter; the
            // reason is kept for `info` and the C ABI.
            Err(e) => shader.fallback = Some(e.to_string()),
        }
        Ok(shader)
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The configuration it was prepared for.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The engine invocations run on.
    pub fn backend(&self) -> ActiveBackend {
        self.active
    }

    /// Why a JIT was requested but the interpreter runs this program, if so.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The reference interpreter prepared for this program and float mode: what [`Self::run`]
    /// uses, and what runs everything when no JIT does. Its entry points take register
    /// values (no input conversion).
    pub fn interpreter(&self) -> &Interpreter {
        &self.interp
    }

    /// The compiled code, when a JIT runs this program (code size, compile time, analysis,
    /// disassembly).
    pub fn compiled(&self) -> Option<&CompiledShader> {
        self.jit.as_deref()
    }

    /// Bit `n` set when the program reads input register v`n`. Only those registers are
    /// converted on upload; the others cannot influence any result.
    pub fn input_mask(&self) -> u16 {
        self.input_mask
    }

    /// Bit `n` set when some instruction of the program writes output register o`n`; the
    /// others are +0 after every vertex. A caller with no output map of its own can pass this
    /// to [`Self::run_batch_masked`].
    pub fn output_mask(&self) -> u16 {
        self.output_mask
    }

    /// Threads that vertex batches (`run_batch*`) may use: `0` (the default) uses every core
    /// of the host ([`std::thread::available_parallelism`]) for batches of at least
    /// [`PARALLEL_MIN_BATCH`] vertices and one thread below; `1` never splits; `n` splits
    /// every batch into up to `n` contiguous parts of at least [`PARALLEL_MIN_PER_THREAD`]
    /// vertices, run on the calling thread and persistent worker threads (one per core,
    /// started by the first split batch and reused, with their staging rows and registers, by
    /// later ones). Vertices are independent of each other (every one starts from the same
    /// state), so the outputs and the state handed back are the same
    /// for every setting; a failing batch reports the lowest failing vertex, as one thread
    /// does, but parts after it may have written their outputs. Geometry shaders carry state
    /// from invocation to invocation and always run on one thread.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    /// The setting of [`Self::set_threads`].
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Threads a vertex batch of `n` vertices runs on under the current setting.
    pub fn batch_threads(&self, n: usize) -> usize {
        batch_threads(self.threads, n)
    }

    /// Run `run(range, outputs of the range)` over `0..n` on [`Self::batch_threads`]
    /// threads, in contiguous parts (the calling thread takes the first), and add up the
    /// instructions. The error of the lowest failing vertex wins, with its batch index.
    fn split_batch(
        &self,
        n: usize,
        outputs: &mut [[[f32; 4]; 16]],
        run: impl Fn(std::ops::Range<usize>, &mut [[[f32; 4]; 16]]) -> Result<u64, BatchError> + Sync,
    ) -> Result<u64, BatchError> {
        split_rows(self.batch_threads(n), n, &mut outputs[..n], |range, out| {
            let lo = range.start;
            run(range, out).map_err(|e| BatchError {
                vertex: lo + e.vertex,
                error: e.error,
            })
        })
    }

    /// Run one invocation on caller-owned registers (used as they are: geometry shaders
    /// keep state between invocations). `geometry` receives EMITs. Compiled code runs it
    /// when a JIT took the program (the interpreter where that code deopts), the
    /// interpreter otherwise: the results are the same bit for bit.
    pub fn run(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
    ) -> Result<RunInfo, ExecError> {
        match &self.jit {
            Some(code) => code
                .invoke(
                    Invocation::one(uniforms, regs)
                        .geometry(geometry)
                        .budget(self.config.budget),
                )
                .map(|o| RunInfo {
                    instructions: o.instructions,
                })
                .map_err(|e| run_error(e).error),
            None => self
                .interp
                .run(regs, uniforms, geometry, self.config.budget),
        }
    }

    /// Convert f32 vertex attributes to register values, the one rule for f32 input (Rust
    /// API, CLI decimals, C ABI `PICAJIT_FORMAT_F32`): in F24 mode every value becomes
    /// `F24::from_f32(x, rounding)` (17 significant bits with the mode's rounding; a
    /// magnitude below 2^-62 becomes +0, one of 2^64 or more ±inf, an exact ±0 keeps its
    /// sign, NaN becomes 0x7FFFFF), so that F24 registers hold f24 values only; in F32 mode
    /// values are used as they are. Raw f24 words skip this (the `*_f24` entry points).
    pub fn convert_inputs(&self, inputs: &[[f32; 4]; 16]) -> [[f32; 4]; 16] {
        inputs.map(|row| self.convert_row(row))
    }

    /// [`Self::convert_inputs`] for one register.
    pub fn convert_row(&self, row: [f32; 4]) -> [f32; 4] {
        match self.config.float_mode {
            FloatMode::F24(r) => row.map(|x| f32::from_bits(F24::upload_f32_bits(x.to_bits(), r))),
            FloatMode::F32 => row,
        }
    }

    /// Run one vertex-shader invocation from a clean register state with `inputs` (f32
    /// attributes, converted by [`Self::convert_inputs`]) in v0-v15.
    pub fn run_vertex(
        &self,
        uniforms: &Uniforms,
        inputs: &[[f32; 4]; 16],
    ) -> Result<(Registers, RunInfo), ExecError> {
        self.run_vertex_from(uniforms, inputs, &UnitState::default())
    }

    /// [`Self::run_vertex`] from the unit state `state` (converted by
    /// [`Self::convert_state`]) instead of the clean one: one invocation of an emulator's
    /// persistent shader unit. The final state is `regs.unit_state()` of the result.
    pub fn run_vertex_from(
        &self,
        uniforms: &Uniforms,
        inputs: &[[f32; 4]; 16],
        state: &UnitState,
    ) -> Result<(Registers, RunInfo), ExecError> {
        let mut regs = Registers::default();
        regs.input = self.convert_inputs(inputs);
        regs.set_unit_state(&self.convert_state(state));
        let info = self.run(&mut regs, uniforms, None)?;
        Ok((regs, info))
    }

    /// [`Self::run_vertex`] with raw f24 words in v0-v15, as the hardware's input stage
    /// delivers attributes to the shader unit: every pattern reaches the registers exactly
    /// (subnormal patterns, -0, NaN payloads, infinities), so a MOV outputs what it read.
    /// In F32 mode the words are widened to the f32 of the same value (exact).
    pub fn run_vertex_f24(
        &self,
        uniforms: &Uniforms,
        inputs: &[[F24; 4]; 16],
    ) -> Result<(Registers, RunInfo), ExecError> {
        let mut regs = Registers::default();
        regs.input = expand_f24(inputs);
        let info = self.run(&mut regs, uniforms, None)?;
        Ok((regs, info))
    }

    /// Run a batch: vertex `n` reads `inputs[n]` (f32 attributes, converted by
    /// [`Self::convert_inputs`]) and writes `outputs[n]`. Every invocation
    /// starts from a clean working state, so vertices are independent of each other (and of
    /// how a backend groups them). Returns the instructions executed in total.
    pub fn run_batch(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
    ) -> Result<u64, BatchError> {
        self.run_batch_masked(uniforms, inputs, outputs, 0xFFFF)
    }

    /// [`Self::run_batch`] for a caller that reads only the output registers in `out_mask`
    /// (bit n = o`n`, for example the registers an output map names). Those are written
    /// exactly as `run_batch` writes them; the other registers of each output row either keep
    /// their contents or receive the vertex's values. The multi-vertex JIT skips them, which
    /// for short shaders saves a good part of the time (see
    /// `picajit_jit::Invocation::mask`).
    pub fn run_batch_masked(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
    ) -> Result<u64, BatchError> {
        let n = inputs.len().min(outputs.len());
        self.split_batch(n, outputs, |range, outputs| {
            let inputs = &inputs[range];
            match self.config.float_mode {
                FloatMode::F32 => self.run_batch_registers(uniforms, inputs, outputs, out_mask),
                FloatMode::F24(_) => {
                    self.run_batch_staged(uniforms, inputs, outputs, out_mask, |src, dst| {
                        self.convert_chunk(src, dst)
                    })
                }
            }
        })
    }

    /// [`Self::run_batch_masked`] with raw f24 words as inputs (see [`Self::run_vertex_f24`]):
    /// every pattern reaches v0-v15 exactly, on every backend and on the multi-vertex path.
    pub fn run_batch_f24(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[F24; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
    ) -> Result<u64, BatchError> {
        let n = inputs.len().min(outputs.len());
        self.split_batch(n, outputs, |range, outputs| {
            self.run_batch_staged(uniforms, &inputs[range], outputs, out_mask, |src, dst| {
                self.expand_chunk(src, dst)
            })
        })
    }

    /// Stage the inputs as register values in chunks (bounded memory, the rows stay in
    /// cache between conversion and execution) and run them. `load` converts a chunk into
    /// rows whose registers outside [`Self::input_mask`] are zero and stay untouched.
    fn run_batch_staged<T>(
        &self,
        uniforms: &Uniforms,
        inputs: &[T],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        load: impl Fn(&[T], &mut [[[f32; 4]; 16]]),
    ) -> Result<u64, BatchError> {
        stage_chunks(inputs, outputs, self.input_mask, load, |rows, outputs| {
            self.run_batch_registers(uniforms, rows, outputs, out_mask)
        })
    }

    /// Run a batch whose inputs are register values already (converted f32 attributes, or
    /// raw f24 words widened by `F24::to_f32`; in F24 mode nothing else).
    pub(crate) fn run_batch_registers(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
    ) -> Result<u64, BatchError> {
        let n = inputs.len().min(outputs.len());
        let Some(code) = &self.jit else {
            let mut regs = Registers::default();
            let mut total = 0;
            for (k, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
                regs.input = *input;
                regs.reset_working_state();
                let info = self
                    .interp
                    .run(&mut regs, uniforms, None, self.config.budget)
                    .map_err(|error| BatchError { vertex: k, error })?;
                total += info.instructions;
                *output = regs.output;
            }
            return Ok(total);
        };
        code.invoke(
            Invocation::batch(uniforms, &inputs[..n], &mut outputs[..n])
                .mask(out_mask)
                .budget(self.config.budget),
        )
        .map(|o| o.instructions)
        .map_err(run_error)
    }

    /// Run a point-mode geometry shader over many input points, as a GPU does for a draw:
    /// invocation `k` gets `inputs[k]` (f32 attributes, converted by
    /// [`Self::convert_inputs`]) in v0-v15 and everything else (registers, both output banks,
    /// the vertex buffer, SETEMIT state) from invocation `k - 1`; b15 of `uniforms` is set
    /// after each invocation, also after one that fails. The records `geometry` has pending
    /// in [`GeometryState::emitted`] are moved into `out` first, then every EMIT is appended
    /// to `out` (the registers in `out.mask()` only). Afterwards `regs`, `geometry` and
    /// `uniforms` are exactly what one [`Self::run`] per point (inputs converted, b15 set
    /// after each) leaves, with the EMITs drained by [`GeometryState::drain_into`].
    ///
    /// On the JIT, runs of eight invocations execute together on the multi-vertex backend
    /// where the program allows it (`CompiledShader::points_ineligibility`) and `out.mask()`
    /// names only registers the program writes ([`Self::output_mask`] or a subset): an
    /// emulator passes the registers its output map reads. Results are the interpreter's bit
    /// for bit either way.
    ///
    /// Meant for geometry shaders (a vertex shader's invocations would run on carried-over
    /// registers and emit nothing). Fails at the first invocation that fails, with its index
    /// in [`BatchError::vertex`]; the vertices it and the earlier invocations emitted are in
    /// `out`.
    pub fn run_points(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[[[f32; 4]; 16]],
        out: &mut EmitBuffer,
    ) -> Result<PointsInfo, BatchError> {
        match self.config.float_mode {
            FloatMode::F32 => self.run_points_registers(regs, uniforms, geometry, inputs, out),
            FloatMode::F24(_) => self.run_points_staged(
                regs,
                uniforms,
                geometry,
                inputs,
                out,
                |v| self.convert_masked(v),
                |v| self.convert_inputs(v),
            ),
        }
    }

    /// [`Self::run_points`] with raw f24 words as inputs (see [`Self::run_vertex_f24`]).
    pub fn run_points_f24(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[[[F24; 4]; 16]],
        out: &mut EmitBuffer,
    ) -> Result<PointsInfo, BatchError> {
        self.run_points_staged(
            regs,
            uniforms,
            geometry,
            inputs,
            out,
            |v| self.expand_masked(v),
            expand_f24,
        )
    }

    /// Stage the points as register values in chunks, as in [`Self::run_batch_staged`].
    /// Only the registers the program reads are staged (`load`): the others cannot influence
    /// anything but the final v0-v15, which are set to `load_all` of the last point run.
    #[allow(clippy::too_many_arguments)]
    fn run_points_staged<T>(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[T],
        out: &mut EmitBuffer,
        load: impl Fn(&T) -> [[f32; 4]; 16],
        load_all: impl Fn(&T) -> [[f32; 4]; 16],
    ) -> Result<PointsInfo, BatchError> {
        const CHUNK: usize = 256;
        let emitted_before = out.len();
        let mut scratch = vec![[[0.0f32; 4]; 16]; CHUNK.min(inputs.len())];
        let mut total = 0;
        let mut base = 0;
        let mut result = Ok(());
        while base < inputs.len() {
            let len = CHUNK.min(inputs.len() - base);
            for (dst, src) in scratch[..len].iter_mut().zip(&inputs[base..base + len]) {
                *dst = load(src);
            }
            match self.run_points_registers(regs, uniforms, geometry, &scratch[..len], out) {
                Ok(info) => total += info.instructions,
                Err(e) => {
                    result = Err(BatchError {
                        vertex: base + e.vertex,
                        error: e.error,
                    });
                    break;
                }
            }
            base += len;
        }
        let last = match &result {
            Ok(()) => inputs.len().checked_sub(1),
            Err(e) => Some(e.vertex),
        };
        if let Some(k) = last {
            regs.input = load_all(&inputs[k]);
        }
        result?;
        Ok(PointsInfo {
            instructions: total,
            emitted: out.len() - emitted_before,
        })
    }

    /// [`Self::run_points`] on inputs that are register values already (see
    /// [`Self::run_batch_registers`]).
    pub(crate) fn run_points_registers(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[[[f32; 4]; 16]],
        out: &mut EmitBuffer,
    ) -> Result<PointsInfo, BatchError> {
        let emitted_before = out.len();
        let budget = self.config.budget;
        let r = match &self.jit {
            Some(code) => code
                .invoke(Invocation::points(uniforms, regs, geometry, inputs, out).budget(budget))
                .map(|o| o.instructions)
                .map_err(|e| {
                    let e = run_error(e);
                    (e.vertex, e.error)
                }),
            None => self
                .interp
                .run_points(regs, uniforms, geometry, inputs, budget, out),
        };
        let instructions = r.map_err(|(vertex, error)| BatchError { vertex, error })?;
        Ok(PointsInfo {
            instructions,
            emitted: out.len() - emitted_before,
        })
    }

    /// Call `f` with this program prepared for entry point `entry` (see [`Self::at_entry`]).
    pub fn with_entry<R>(
        &self,
        entry: u32,
        f: impl FnOnce(&Shader) -> R,
    ) -> Result<R, EngineError> {
        let shader = self.at_entry(entry)?;
        Ok(f(&shader))
    }

    /// This program prepared for entry point `entry`: `self` when it is the program's own
    /// entry, otherwise the shader for that entry, prepared (compiled, on a JIT) on the first
    /// call and kept in `self` for every later one. Emulators pass the entry point with each
    /// draw while the program words stay the same; this costs a map lookup per call, not a
    /// compilation. At most one shader per code word is ever prepared.
    ///
    /// Fails for an entry point outside the program's code words.
    pub fn at_entry(&self, entry: u32) -> Result<ShaderAt<'_>, EngineError> {
        if entry == u32::from(self.program.entry()) {
            return Ok(ShaderAt::Own(self));
        }
        let program = self.program.with_entry(entry)?;
        let key = entry as u16;
        // A poisoned lock only means another thread panicked while inserting; the map is
        // still a valid cache.
        let found = self
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let shader = match found {
            Some(s) => s,
            None => {
                let mut fresh = Shader::new(program, &self.config)?;
                fresh.threads = self.threads;
                let fresh = Arc::new(fresh);
                self.entries
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(key)
                    .or_insert(fresh)
                    .clone()
            }
        };
        Ok(ShaderAt::Other(shader))
    }

    /// Entry points other than the program's own that [`Self::with_entry`] has prepared.
    pub fn prepared_entries(&self) -> usize {
        self.entries.lock().map_or(0, |m| m.len())
    }

    /// `state` in this shader's register representation: in F24 modes, a value that is
    /// exactly an f24 value (every value a run hands back) is kept bit for bit, any other
    /// f32 is rounded to f24 with the mode's rounding, as float uniforms are on upload; in
    /// F32 mode values are kept. a0, aL and cmp are taken as they are.
    pub fn convert_state(&self, state: &UnitState) -> UnitState {
        let mut s = *state;
        if let FloatMode::F24(r) = self.config.float_mode {
            for row in &mut s.temp {
                *row = row.map(|x| match F24::from_f32_exact(x) {
                    Some(_) => x,
                    None => F24::from_f32(x, r).to_f32(),
                });
            }
        }
        s
    }

    /// [`Self::run_batch_masked`] with unit state in and out.
    ///
    /// * `state_in`: every vertex of the batch starts from this state (r0-r15, a0, aL, cmp;
    ///   converted by [`Self::convert_state`]) instead of the clean one. Vertices stay
    ///   independent of each other, as on hardware, where the four vertex units take
    ///   vertices in no order a program could rely on: a batch gives the same results
    ///   however it is split or grouped, and the eight-vertex path runs it too.
    /// * `state_out`: receives the state the *last* vertex ended with, exactly what one
    ///   [`Self::run`] of that vertex from `state_in` leaves (for an empty batch,
    ///   `state_in` converted, or the clean state). Not written when the batch fails.
    ///
    /// So a batch of one vertex is one invocation with state in and out, and an emulator
    /// that keeps a persistent unit passes its state in and stores what comes out. With
    /// neither (or a clean `state_in` and no `state_out`) this is `run_batch_masked`, at its
    /// cost.
    pub fn run_batch_state(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        state_in: Option<&UnitState>,
        state_out: Option<&mut UnitState>,
    ) -> Result<u64, BatchError> {
        let load = |v: &[[f32; 4]; 16]| match self.config.float_mode {
            FloatMode::F24(_) => self.convert_masked(v),
            FloatMode::F32 => *v,
        };
        self.run_state_with(
            uniforms,
            inputs,
            outputs,
            out_mask,
            state_in,
            state_out,
            load,
            |inputs, outputs| self.run_batch_masked(uniforms, inputs, outputs, out_mask),
        )
    }

    /// [`Self::run_batch_state`] with raw f24 words as inputs ([`Self::run_batch_f24`]).
    pub fn run_batch_f24_state(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[F24; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        state_in: Option<&UnitState>,
        state_out: Option<&mut UnitState>,
    ) -> Result<u64, BatchError> {
        let load = |v: &[[F24; 4]; 16]| self.expand_masked(v);
        self.run_state_with(
            uniforms,
            inputs,
            outputs,
            out_mask,
            state_in,
            state_out,
            load,
            |inputs, outputs| self.run_batch_f24(uniforms, inputs, outputs, out_mask),
        )
    }

    /// The body of [`Self::run_batch_state`] and [`Self::run_batch_f24_state`]: `load` turns
    /// an input into register rows, `plain` runs a batch from the clean state.
    #[allow(clippy::too_many_arguments)]
    fn run_state_with<T>(
        &self,
        uniforms: &Uniforms,
        inputs: &[T],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        state_in: Option<&UnitState>,
        state_out: Option<&mut UnitState>,
        load: impl Fn(&T) -> [[f32; 4]; 16] + Copy + Sync,
        plain: impl FnOnce(&[T], &mut [[[f32; 4]; 16]]) -> Result<u64, BatchError>,
    ) -> Result<u64, BatchError>
    where
        T: Sync,
    {
        let n = inputs.len().min(outputs.len());
        let (inputs, outputs) = (&inputs[..n], &mut outputs[..n]);
        let start = self.start_state(state_in);
        let mut state_out = state_out;
        if n < SMALL_BATCH {
            if let Some(out) = state_out.take() {
                return self.run_small_state(uniforms, inputs, outputs, start, out, load);
            }
        }
        let total = match &start {
            None => plain(inputs, outputs)?,
            Some(s) => self.split_batch(n, outputs, |range, outputs| {
                self.run_staged_from(uniforms, &inputs[range], outputs, out_mask, s, load)
            })?,
        };
        self.final_state(
            uniforms,
            inputs.len(),
            inputs.last().map(load),
            start,
            state_out,
        )?;
        Ok(total)
    }

    /// [`Self::run_batch_state`] on inputs that are register values already (see
    /// [`Self::run_batch_registers`]).
    pub(crate) fn run_batch_registers_state(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        state_in: Option<&UnitState>,
        state_out: Option<&mut UnitState>,
    ) -> Result<u64, BatchError> {
        let n = inputs.len().min(outputs.len());
        let (inputs, outputs) = (&inputs[..n], &mut outputs[..n]);
        let start = self.start_state(state_in);
        let mut state_out = state_out;
        if n < SMALL_BATCH {
            if let Some(out) = state_out.take() {
                return self.run_small_state(uniforms, inputs, outputs, start, out, |v| *v);
            }
        }
        let total = match &start {
            None => self.run_batch_registers(uniforms, inputs, outputs, out_mask)?,
            Some(s) => self.run_registers_from(uniforms, inputs, outputs, out_mask, s)?,
        };
        self.final_state(
            uniforms,
            inputs.len(),
            inputs.last().copied(),
            start,
            state_out,
        )?;
        Ok(total)
    }

    /// A batch shorter than one eight-lane group with the state out asked for: one
    /// [`Self::run`] per vertex (what such a batch runs anyway), the last vertex's registers
    /// giving the state, so a persistent unit's one-vertex batches cost one invocation, not
    /// two.
    fn run_small_state<T>(
        &self,
        uniforms: &Uniforms,
        inputs: &[T],
        outputs: &mut [[[f32; 4]; 16]],
        start: Option<UnitState>,
        state_out: &mut UnitState,
        load: impl Fn(&T) -> [[f32; 4]; 16],
    ) -> Result<u64, BatchError> {
        let start = start.unwrap_or_default();
        let mut regs = Registers::default();
        let mut total = 0;
        let mut last = start;
        for (k, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
            regs.input = load(input);
            regs.output = [[0.0; 4]; 16];
            regs.set_unit_state(&start);
            let info = self
                .run(&mut regs, uniforms, None)
                .map_err(|error| BatchError { vertex: k, error })?;
            total += info.instructions;
            *output = regs.output;
            last = regs.unit_state();
        }
        *state_out = last;
        Ok(total)
    }

    /// The converted start state of a batch; `None` for the clean state (the plain batch).
    fn start_state(&self, state_in: Option<&UnitState>) -> Option<UnitState> {
        state_in
            .map(|s| self.convert_state(s))
            .filter(|s| !s.is_clean())
    }

    /// `state_out` of a batch of `n` vertices whose last had `last` in v0-v15 (register
    /// values).
    fn final_state(
        &self,
        uniforms: &Uniforms,
        n: usize,
        last: Option<[[f32; 4]; 16]>,
        start: Option<UnitState>,
        state_out: Option<&mut UnitState>,
    ) -> Result<(), BatchError> {
        let Some(out) = state_out else {
            return Ok(());
        };
        let start = start.unwrap_or_default();
        *out = match last {
            None => start,
            Some(input) => {
                // The last vertex once more, on the per-invocation path: batches keep no
                // per-vertex state, and this costs one vertex only when asked for.
                let mut regs = Registers::default();
                regs.input = input;
                regs.set_unit_state(&start);
                // It succeeded in the batch, so it succeeds here (the same engine, inputs
                // and state); the error arm only keeps this total.
                self.run(&mut regs, uniforms, None)
                    .map_err(|error| BatchError {
                        vertex: n - 1,
                        error,
                    })?;
                regs.unit_state()
            }
        };
        Ok(())
    }

    /// A batch from a non-clean, converted state: inputs staged as register values in
    /// chunks by `load`, as [`Self::run_batch_masked`] stages them.
    fn run_staged_from<T>(
        &self,
        uniforms: &Uniforms,
        inputs: &[T],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        start: &UnitState,
        load: impl Fn(&T) -> [[f32; 4]; 16],
    ) -> Result<u64, BatchError> {
        let load_chunk = |src: &[T], dst: &mut [[[f32; 4]; 16]]| {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = load(s);
            }
        };
        stage_chunks(inputs, outputs, 0xFFFF, load_chunk, |rows, outputs| {
            self.run_registers_from(uniforms, rows, outputs, out_mask, start)
        })
    }

    /// A batch of register values from a non-clean, converted state.
    fn run_registers_from(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
        out_mask: u16,
        start: &UnitState,
    ) -> Result<u64, BatchError> {
        let Some(code) = &self.jit else {
            let mut regs = Registers::default();
            let mut total = 0;
            for (k, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
                regs.input = *input;
                regs.output = [[0.0; 4]; 16];
                regs.set_unit_state(start);
                let info = self
                    .interp
                    .run(&mut regs, uniforms, None, self.config.budget)
                    .map_err(|error| BatchError { vertex: k, error })?;
                total += info.instructions;
                *output = regs.output;
            }
            return Ok(total);
        };
        code.invoke(
            Invocation::batch(uniforms, inputs, outputs)
                .mask(out_mask)
                .from_state(start)
                .budget(self.config.budget),
        )
        .map(|o| o.instructions)
        .map_err(run_error)
    }

    /// Convert only the registers the program reads; the rest are zero.
    fn convert_masked(&self, input: &[[f32; 4]; 16]) -> [[f32; 4]; 16] {
        let mut out = [[0.0f32; 4]; 16];
        let mut mask = self.input_mask;
        while mask != 0 {
            let r = mask.trailing_zeros() as usize;
            out[r] = self.convert_row(input[r]);
            mask &= mask - 1;
        }
        out
    }

    /// [`Self::convert_masked`] for a chunk of vertices, into rows whose other registers are
    /// left as they are: the float mode is matched once per chunk, so that the upload
    /// rounding (`F24::upload_f32_bits`, branch-free) runs as vector code over each register
    /// instead of through `F24::from_f32` and back per value.
    fn convert_chunk(&self, src: &[[[f32; 4]; 16]], dst: &mut [[[f32; 4]; 16]]) {
        let mask = self.input_mask;
        match self.config.float_mode {
            FloatMode::F24(Rounding::TowardZero) => map_rows(src, dst, mask, |b| {
                F24::upload_f32_bits(b, Rounding::TowardZero)
            }),
            FloatMode::F24(Rounding::NearestEven) => map_rows(src, dst, mask, |b| {
                F24::upload_f32_bits(b, Rounding::NearestEven)
            }),
            FloatMode::F32 => map_rows(src, dst, mask, |b| b),
        }
    }

    /// [`Self::expand_masked`] for a chunk of vertices (see [`Self::convert_chunk`]).
    fn expand_chunk(&self, src: &[[[F24; 4]; 16]], dst: &mut [[[f32; 4]; 16]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            for r in set_bits(self.input_mask) {
                d[r] = s[r].map(F24::to_f32);
            }
        }
    }

    /// Widen only the raw registers the program reads; the rest are zero.
    fn expand_masked(&self, input: &[[F24; 4]; 16]) -> [[f32; 4]; 16] {
        let mut out = [[0.0f32; 4]; 16];
        let mut mask = self.input_mask;
        while mask != 0 {
            let r = mask.trailing_zeros() as usize;
            out[r] = input[r].map(F24::to_f32);
            mask &= mask - 1;
        }
        out
    }
}

/// Raw f24 words as register values (lossless: `F24::to_f32` is injective).
pub fn expand_f24(inputs: &[[F24; 4]; 16]) -> [[f32; 4]; 16] {
    inputs.map(|row| row.map(F24::to_f32))
}

/// Batches shorter than this (one eight-lane group) with a state out run per vertex in
/// [`Shader::run_small_state`].
const SMALL_BATCH: usize = picajit_jit::LANES;

/// A [`Shader`] for one entry point of a program ([`Shader::at_entry`]): the shader itself
/// or the one prepared for that entry.
#[derive(Debug)]
pub enum ShaderAt<'a> {
    /// The program's own entry point.
    Own(&'a Shader),
    /// Another entry point, prepared once and kept by the shader.
    Other(Arc<Shader>),
}

impl std::ops::Deref for ShaderAt<'_> {
    type Target = Shader;
    fn deref(&self) -> &Shader {
        match self {
            ShaderAt::Own(s) => s,
            ShaderAt::Other(s) => s,
        }
    }
}

/// Input registers any instruction of `program` reads (reachable or not: a superset is
/// harmless, and relative addressing only ever indexes float uniforms).
fn input_mask(program: &Program) -> u16 {
    let mut mask = 0u16;
    let mut add = |r: &SrcReg| {
        if let SrcReg::Input(i) = r {
            mask |= 1 << (i & 15);
        }
    };
    for &w in program.code() {
        match decode(w) {
            Instruction::Binary { src1, src2, .. } | Instruction::Cmp { src1, src2, .. } => {
                add(&src1);
                add(&src2);
            }
            Instruction::Unary { src, .. } | Instruction::Mova { src, .. } => add(&src),
            Instruction::Mad {
                src1, src2, src3, ..
            } => {
                add(&src1);
                add(&src2);
                add(&src3);
            }
            _ => {}
        }
    }
    mask
}

/// Output registers any instruction of `program` writes (reachable or not: a superset); the
/// others are +0 after every vertex (see [`Shader::output_mask`]).
pub fn program_output_mask(program: &Program) -> u16 {
    let mut mask = 0u16;
    for &w in program.code() {
        match decode(w) {
            Instruction::Binary { dst, .. }
            | Instruction::Unary { dst, .. }
            | Instruction::Mad { dst, .. } => {
                if let DstReg::Output(o) = dst {
                    mask |= 1 << (o & 15);
                }
            }
            _ => {}
        }
    }
    mask
}

/// Geometry-shader execution state kept across invocations, as on hardware: registers, the
/// output banks and the vertex buffer. After each invocation b15 is set.
#[derive(Clone, Debug, Default)]
pub struct GeometryRunner {
    /// Registers, kept between invocations.
    pub registers: Registers,
    /// Emit state and emitted vertices.
    pub state: GeometryState,
}

/// Input of one geometry-shader invocation.
#[derive(Clone, Copy, Debug)]
pub enum GsInput<'a> {
    /// Point mode: one vertex's f32 attributes in v0-v15 (converted by
    /// [`Shader::convert_inputs`]).
    Point(&'a [[f32; 4]; 16]),
    /// Point mode: one vertex's raw f24 words in v0-v15, exactly (see
    /// [`Shader::run_vertex_f24`]).
    PointF24(&'a [[F24; 4]; 16]),
    /// Variable and fixed modes: attribute rows written to the float uniforms from the
    /// mode's first register (in variable mode after the vertex-count row, which is
    /// `count` in every lane).
    Uniforms { rows: &'a [[f32; 4]], count: u8 },
}

impl GeometryRunner {
    /// Run one invocation of `shader` in `mode`.
    pub fn invoke(
        &mut self,
        shader: &Shader,
        mode: GsInputMode,
        uniforms: &mut Uniforms,
        input: GsInput<'_>,
    ) -> Result<RunInfo, ExecError> {
        match input {
            GsInput::Point(v) => self.registers.input = shader.convert_inputs(v),
            GsInput::PointF24(v) => self.registers.input = expand_f24(v),
            GsInput::Uniforms { rows, count } => {
                let first = match mode {
                    GsInputMode::Variable { first_uniform, .. } => {
                        let first = first_uniform as usize;
                        uniforms.set_float_raw(first, [count as f32; 4]);
                        first + 1
                    }
                    GsInputMode::Fixed { first_uniform, .. } => first_uniform as usize,
                    GsInputMode::Point => 0,
                };
                for (k, row) in rows.iter().enumerate() {
                    uniforms.set_float_raw(first + k, shader.convert_row(*row));
                }
            }
        }
        let info = shader.run(&mut self.registers, uniforms, Some(&mut self.state));
        uniforms.set_bool(15, true);
        info
    }

    /// Run one point-mode invocation per row of `inputs`, as [`Self::invoke`] with
    /// [`GsInput::Point`] would one after the other, on [`Shader::run_points`]: emitted
    /// vertices (those still pending in [`Self::state`] first) go to `out`, packed to the
    /// registers in `out.mask()`. On the JIT, groups of eight points run together where the
    /// program allows it. An error names the failing point in [`BatchError::vertex`]; what
    /// it and the points before it emitted is in `out`.
    pub fn invoke_points(
        &mut self,
        shader: &Shader,
        uniforms: &mut Uniforms,
        inputs: &[[[f32; 4]; 16]],
        out: &mut EmitBuffer,
    ) -> Result<PointsInfo, BatchError> {
        shader.run_points(&mut self.registers, uniforms, &mut self.state, inputs, out)
    }

    /// [`Self::invoke_points`] with raw f24 words as inputs ([`Shader::run_points_f24`]).
    pub fn invoke_points_f24(
        &mut self,
        shader: &Shader,
        uniforms: &mut Uniforms,
        inputs: &[[[F24; 4]; 16]],
        out: &mut EmitBuffer,
    ) -> Result<PointsInfo, BatchError> {
        shader.run_points_f24(&mut self.registers, uniforms, &mut self.state, inputs, out)
    }
}

/// Build the program of DVLE `index` of a SHBIN, plus uniforms holding its constant table
/// (what a loader applies when it binds the DVLE).
pub fn program_from_shbin(shbin: &Shbin, index: usize) -> Result<(Program, Uniforms), EngineError> {
    let dvle: &Dvle = shbin.dvles.get(index).ok_or(EngineError::NoSuchDvle {
        index,
        count: shbin.dvles.len(),
    })?;
    let program = Program::new(
        shbin.code.clone(),
        shbin.opdescs.clone(),
        dvle.main,
        dvle.kind,
    )?;
    let mut uniforms = Uniforms::default();
    apply_constants(dvle, &mut uniforms);
    Ok((program, uniforms))
}

/// Write a DVLE's constant table into `uniforms`.
pub fn apply_constants(dvle: &Dvle, uniforms: &mut Uniforms) {
    for c in &dvle.constants {
        match *c {
            Constant::Bool { reg, value } => {
                uniforms.set_bool(reg as usize, value);
            }
            Constant::IVec { reg, value } => {
                uniforms.set_int(reg as usize, value);
            }
            Constant::FVec { reg, value } => {
                uniforms.set_float_f24(reg as usize, value);
            }
            Constant::Unknown { .. } => {}
        }
    }
}

/// Threads for a batch of `n` vertices under the setting `threads` (see
/// [`Shader::set_threads`]).
pub fn batch_threads(threads: usize, n: usize) -> usize {
    let wanted = match threads {
        0 if n < PARALLEL_MIN_BATCH => 1,
        0 => std::thread::available_parallelism().map_or(1, |c| c.get()),
        t => t,
    };
    wanted.min(n / PARALLEL_MIN_PER_THREAD).max(1)
}

/// Split `0..n` (`n == rows.len()`) into `threads` contiguous parts and run `run(range,
/// rows of the range)` on each, the first on the calling thread and the others on the
/// process's persistent workers (`src/pool.rs`: no thread is started per call, and each
/// worker's thread-local staging rows and JIT registers are reused from batch to batch). Returns the sum of the parts' results, or the first error in part order (the
/// parts' errors carry whatever indices `run` gives them). A panic in a part is resumed
/// here.
pub(crate) fn split_rows<R: Send, E: Send>(
    threads: usize,
    n: usize,
    rows: &mut [R],
    run: impl Fn(std::ops::Range<usize>, &mut [R]) -> Result<u64, E> + Sync,
) -> Result<u64, E> {
    if threads <= 1 || n < 2 {
        return run(0..n, rows);
    }
    let per = n.div_ceil(threads);
    let run = &run;
    let jobs: Vec<_> = rows
        .chunks_mut(per)
        .enumerate()
        .map(|(k, part)| {
            let lo = k * per;
            move || run(lo..lo + part.len(), part)
        })
        .collect();
    let results = crate::pool::run_parts(jobs);
    let mut total = 0;
    for r in results {
        total += r?;
    }
    Ok(total)
}

/// Indices of the set bits of `mask`, lowest first.
fn set_bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// `dst[k][r] = f(src[k][r])` (on f32 bits) for the registers `r` in `mask`, the others left
/// as they are. Inlined into each caller with its `f`, so the per-register loop is vector code.
#[inline(always)]
fn map_rows(
    src: &[[[f32; 4]; 16]],
    dst: &mut [[[f32; 4]; 16]],
    mask: u16,
    f: impl Fn(u32) -> u32 + Copy,
) {
    let conv = |row: &[f32; 4]| row.map(|x| f32::from_bits(f(x.to_bits())));
    // One pass per vertex over its registers: each source row is read once, in address order.
    if mask == 0xFFFF {
        for (d, s) in dst.iter_mut().zip(src) {
            for (dr, sr) in d.iter_mut().zip(s) {
                *dr = conv(sr);
            }
        }
        return;
    }
    let mut regs = [0usize; 16];
    let mut count = 0;
    for r in set_bits(mask) {
        regs[count] = r;
        count += 1;
    }
    let regs = &regs[..count];
    // One register per 64-byte line the converted registers occupy.
    let mut lines = [0usize; 4];
    let mut nlines = 0;
    for &r in regs {
        if nlines == 0 || lines[nlines - 1] / 4 != r / 4 {
            lines[nlines] = r;
            nlines += 1;
        }
    }
    let lines = &lines[..nlines];
    // Reading each row's lines `PREFETCH` vertices before converting it starts those cache
    // misses early (a batch of 65,536 vertices is 16 MiB of rows, mostly not in cache); the
    // values only feed `touched`, which nothing waits for until the end.
    let mut touched = 0u32;
    for (k, (d, s)) in dst.iter_mut().zip(src).enumerate() {
        if let Some(ahead) = src.get(k + PREFETCH) {
            for &r in lines {
                touched |= ahead[r][0].to_bits();
            }
        }
        for &r in regs {
            d[r] = conv(&s[r]);
        }
    }
    std::hint::black_box(touched);
}

/// How far ahead [`map_rows`] reads input rows.
const PREFETCH: usize = 16;

/// Vertices converted per chunk of a staged batch: 256 rows are 64 KiB, which stay in the
/// L2 cache between their conversion and the code that reads them.
const STAGE_CHUNK: usize = 256;

/// A thread's staging rows, kept between batches (a fresh 64 KiB buffer per call, allocated
/// and zeroed, cost more than converting a 64-vertex batch): `dirty` has a bit for each
/// register that some row may hold a non-zero value in.
struct Staging {
    rows: Vec<[[f32; 4]; 16]>,
    dirty: u16,
}

thread_local! {
    static STAGING: std::cell::Cell<Option<Staging>> = const { std::cell::Cell::new(None) };
}

impl Staging {
    /// The calling thread's rows (or new ones): at least `len`, zero outside `mask`.
    fn take(len: usize, mask: u16) -> Staging {
        let mut s = STAGING
            .try_with(|c| c.take())
            .ok()
            .flatten()
            .unwrap_or(Staging {
                rows: Vec::new(),
                dirty: 0,
            });
        let stale = s.dirty & !mask;
        if stale != 0 {
            for row in &mut s.rows {
                for r in set_bits(stale) {
                    row[r] = [0.0; 4];
                }
            }
        }
        s.dirty = mask;
        if s.rows.len() < len {
            s.rows.resize(len, [[0.0; 4]; 16]);
        }
        s
    }

    /// Hand the rows back to the thread for its next batch.
    fn give_back(self) {
        // During thread teardown the slot may be gone: the rows are then just freed.
        let _ = STAGING.try_with(|c| c.set(Some(self)));
    }
}

/// Converts `inputs` to register rows with `load` in chunks of [`STAGE_CHUNK`] (bounded
/// memory; the rows stay in cache between conversion and execution) and hands each chunk to
/// `run`, which reports failing vertices relative to the chunk. `load` writes only the
/// registers in `mask` of the rows it is given; the others are zero.
fn stage_chunks<T>(
    inputs: &[T],
    outputs: &mut [[[f32; 4]; 16]],
    mask: u16,
    load: impl Fn(&[T], &mut [[[f32; 4]; 16]]),
    mut run: impl FnMut(&[[[f32; 4]; 16]], &mut [[[f32; 4]; 16]]) -> Result<u64, BatchError>,
) -> Result<u64, BatchError> {
    let n = inputs.len().min(outputs.len());
    let mut staging = Staging::take(STAGE_CHUNK.min(n), mask);
    let mut total = 0;
    let mut base = 0;
    let mut result = Ok(());
    while base < n {
        let len = STAGE_CHUNK.min(n - base);
        let rows = &mut staging.rows[..len];
        load(&inputs[base..base + len], rows);
        match run(rows, &mut outputs[base..base + len]) {
            Ok(t) => total += t,
            Err(e) => {
                result = Err(BatchError {
                    vertex: base + e.vertex,
                    error: e.error,
                });
                break;
            }
        }
        base += len;
    }
    staging.give_back();
    result.map(|()| total)
}
