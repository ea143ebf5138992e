//! The engine API: pick an execution backend for a program, run invocations and batches.
//!
//! A [`Shader`] is a program prepared for one [`EngineConfig`]. With the JIT selected (the
//! default, [`BackendChoice::Auto`]) it holds compiled code when the analysis proves that
//! compiled code reproduces the hardware, and otherwise runs on the reference interpreter;
//! [`Shader::fallback_reason`] says why. Either way, results are bit-identical to
//! [`picajit_interp::exec::Interpreter`].

use crate::shbin::{Constant, Dvle, Shbin};
use picajit_interp::exec::{ExecError, Interpreter, RunInfo, DEFAULT_BUDGET};
use picajit_interp::float::{FloatMode, F24};
use picajit_interp::program::{GsInputMode, Program, ProgramError};
use picajit_interp::state::{GeometryState, Registers, Uniforms};
use std::fmt;

/// Which engine to run programs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BackendChoice {
    /// The host's JIT when it can reproduce the program, the interpreter otherwise.
    #[default]
    Auto,
    /// Always the reference interpreter.
    Interpreter,
    /// The x86-64 JIT (with interpreter fallback per program).
    X64,
    /// The AArch64 JIT (with interpreter fallback per program).
    A64,
}

impl BackendChoice {
    /// Parse the CLI / C ABI spelling: `auto`, `interp`, `x64`, `a64`.
    pub fn parse(s: &str) -> Option<BackendChoice> {
        Some(match s {
            "auto" => BackendChoice::Auto,
            "interp" | "interpreter" => BackendChoice::Interpreter,
            "x64" | "x86-64" | "x86_64" => BackendChoice::X64,
            "a64" | "aarch64" | "arm64" => BackendChoice::A64,
            _ => return None,
        })
    }
}

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
    /// Backend selection.
    pub backend: BackendChoice,
    /// Float semantics.
    pub float_mode: FloatMode,
    /// Maximum instructions per invocation before [`ExecError::BudgetExhausted`].
    pub budget: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            backend: BackendChoice::Auto,
            float_mode: FloatMode::default(),
            budget: DEFAULT_BUDGET,
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

/// A program prepared for execution.
#[derive(Debug)]
pub struct Shader {
    program: Program,
    interp: Interpreter,
    config: EngineConfig,
    active: ActiveBackend,
    fallback: Option<String>,
}

impl Shader {
    /// Prepare `program` for `config`.
    pub fn new(program: Program, config: &EngineConfig) -> Result<Shader, EngineError> {
        let interp = Interpreter::new(&program, config.float_mode);
        let (active, fallback) = match config.backend {
            BackendChoice::Interpreter => (ActiveBackend::Interpreter, None),
            BackendChoice::Auto => (
                ActiveBackend::Interpreter,
                Some("no JIT backend is available in this build yet".to_string()),
            ),
            BackendChoice::X64 | BackendChoice::A64 => {
                return Err(EngineError::BackendUnavailable(
                    "the JIT backends are not part of this build yet".to_string(),
                ))
            }
        };
        Ok(Shader {
            program,
            interp,
            config: *config,
            active,
            fallback,
        })
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

    /// Run one invocation on caller-owned registers (used as they are: geometry shaders
    /// keep state between invocations). `geometry` receives EMITs.
    pub fn run(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
    ) -> Result<RunInfo, ExecError> {
        self.interp
            .run(regs, uniforms, geometry, self.config.budget)
    }

    /// Convert vertex attributes to register values the way the hardware's input stage does:
    /// in F24 mode every attribute becomes an f24 value (rounded with the mode's rounding),
    /// which is also what lets every engine rely on F24 registers holding f24 values only.
    pub fn convert_inputs(&self, inputs: &[[f32; 4]; 16]) -> [[f32; 4]; 16] {
        inputs.map(|row| self.convert_row(row))
    }

    /// [`Self::convert_inputs`] for one register.
    pub fn convert_row(&self, row: [f32; 4]) -> [f32; 4] {
        match self.config.float_mode {
            FloatMode::F24(r) => row.map(|x| F24::from_f32(x, r).to_f32()),
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
        let mut regs = Registers::default();
        regs.input = self.convert_inputs(inputs);
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
        let mut regs = Registers::default();
        let mut total = 0;
        for (n, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
            regs.input = self.convert_inputs(input);
            regs.reset_working_state();
            let info = self
                .run(&mut regs, uniforms, None)
                .map_err(|error| BatchError { vertex: n, error })?;
            total += info.instructions;
            *output = regs.output;
        }
        Ok(total)
    }
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
    /// Point mode: one vertex's attributes in v0-v15.
    Point(&'a [[f32; 4]; 16]),
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
