//! The engines under test, and running one batch on each the same way.

use super::workload::{Workload, DEFAULT_POOL};
use crate::pica::engine::{EngineConfig, Shader};
use crate::Engine;
use picajit_interp::pica::float::{FloatMode, Rounding};
use picajit_interp::pica::program::{GsInputMode, Program, ShaderKind};
use picajit_interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms, UnitState};
use picajit_jit::{
    A64Lanes, Backend, CompileOptions, CompiledShader, Error, HostFeatures, Invocation,
};
use std::fmt;
use std::time::{Duration, Instant};

/// An engine a shader can be measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineKind {
    /// The reference interpreter.
    Interpreter,
    /// The x86-64 JIT.
    X64,
    /// The AArch64 JIT.
    A64,
    /// The AArch64 JIT with eight lanes per run of its multi-vertex body
    /// (`picajit_jit::A64Lanes::Eight`; `A64` is the default, four).
    A64Eight,
}

impl EngineKind {
    /// The engines measured by default, in table order ([`EngineKind::A64Eight`] is asked
    /// for by name, or by `picajit bench --neon-lanes`).
    pub const ALL: [EngineKind; 3] = [EngineKind::Interpreter, EngineKind::X64, EngineKind::A64];

    /// Short name: `interp`, `x64`, `a64`, `a64x8`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Interpreter => "interp",
            EngineKind::X64 => "x64",
            EngineKind::A64 => "a64",
            EngineKind::A64Eight => "a64x8",
        }
    }

    /// Parse a short name (the spellings [`Engine`] parses, but `jit`, and `a64x8`).
    pub fn parse(s: &str) -> Option<EngineKind> {
        if s.eq_ignore_ascii_case("a64x8") {
            return Some(EngineKind::A64Eight);
        }
        Some(match s.parse::<Engine>().ok()? {
            Engine::Interp => EngineKind::Interpreter,
            Engine::X64 => EngineKind::X64,
            Engine::A64 => EngineKind::A64,
            Engine::Jit => return None,
        })
    }

    fn backend(self) -> Option<Backend> {
        match self {
            EngineKind::Interpreter => None,
            EngineKind::X64 => Some(Backend::X64),
            EngineKind::A64 | EngineKind::A64Eight => Some(Backend::A64),
        }
    }

    /// The AArch64 JIT, with four or eight lanes per multi-vertex body run.
    pub fn is_a64(self) -> bool {
        self.backend() == Some(Backend::A64)
    }

    fn options(self) -> CompileOptions {
        CompileOptions::default().with_a64_lanes(if self == EngineKind::A64Eight {
            A64Lanes::Eight
        } else {
            A64Lanes::Four
        })
    }

    /// True when code for this engine can run on this host; a JIT for another architecture is
    /// still measured for compile time and code size ("codegen only").
    pub fn runs_here(self) -> bool {
        match self.backend() {
            None => true,
            b => b == Backend::host(),
        }
    }

    /// Name for tables: the short name, marked when the code cannot run here.
    pub fn label(self) -> String {
        if self.runs_here() {
            self.name().to_string()
        } else {
            format!("{} (codegen only)", self.name())
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The float modes, in table order.
pub const MODES: [FloatMode; 3] = [
    FloatMode::F24(Rounding::TowardZero),
    FloatMode::F24(Rounding::NearestEven),
    FloatMode::F32,
];

/// `f24-rtz`, `f24-rne` or `f32`.
pub fn mode_label(mode: FloatMode) -> &'static str {
    match mode {
        FloatMode::F24(Rounding::TowardZero) => "f24-rtz",
        FloatMode::F24(Rounding::NearestEven) => "f24-rne",
        FloatMode::F32 => "f32",
    }
}

/// Inverse of [`mode_label`] (also `f24` for the default rounding).
pub fn parse_mode(s: &str) -> Option<FloatMode> {
    Some(match s {
        "f24-rtz" | "f24" => FloatMode::F24(Rounding::TowardZero),
        "f24-rne" => FloatMode::F24(Rounding::NearestEven),
        "f32" => FloatMode::F32,
        _ => return None,
    })
}

/// What running one batch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// PICA instructions executed.
    pub instructions: u64,
    /// Invocations compiled code handed to the interpreter.
    pub deopts: usize,
    /// Vertices emitted (geometry shaders).
    pub emitted: usize,
}

enum Exec {
    /// Through the engine API.
    Engine(Box<Shader>),
    /// Straight from the JIT crate, until the engine runs compiled code and exposes its code
    /// size and compile time.
    Jit(Box<CompiledShader>),
    /// Code for another architecture: nothing to run.
    CodegenOnly,
}

/// A workload's program prepared for one engine and float mode.
pub struct Prepared {
    /// The engine.
    pub engine: EngineKind,
    /// The float mode.
    pub mode: FloatMode,
    /// Time to prepare: JIT compilation, or the interpreter's pre-decoding.
    pub compile_time: Duration,
    /// Machine code bytes (JIT engines).
    pub code_size: Option<usize>,
    /// Time to generate the multi-vertex (8-lane) code, which happens at the first batch of
    /// eight or more vertices, and its bytes (JITs that have such code for this shader).
    pub lanes_code: Option<(Duration, usize)>,
    budget: u64,
    kind: ShaderKind,
    /// How a geometry shader receives its input (point mode for vertex shaders).
    gs_mode: GsInputMode,
    /// The output registers the program writes: all a caller reads (the rest stay +0), so
    /// only these are copied out, as an emulator copies the registers its output map names.
    out_mask: u16,
    exec: Exec,
    /// Vertex batches start from this unit state and hand the last vertex's back
    /// ([`Prepared::with_unit_state`]).
    unit_state: Option<UnitState>,
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("engine", &self.engine)
            .field("mode", &self.mode)
            .field("compile_time", &self.compile_time)
            .field("code_size", &self.code_size)
            .finish()
    }
}

/// Prepare `workload` for `engine` in `mode` with an instruction budget per invocation.
pub fn prepare(
    engine: EngineKind,
    workload: &Workload,
    mode: FloatMode,
    budget: u64,
) -> Result<Prepared, String> {
    let program = &workload.program;
    let (exec, compile_time, code_size, lanes_code) = match engine {
        EngineKind::Interpreter => through_engine(program, Engine::Interp, mode, budget)?,
        // The JIT crate directly: its batch entry takes register values, so input conversion
        // stays out of the timing as it does for the interpreter above, and code for another
        // architecture can still be generated and measured.
        EngineKind::X64 | EngineKind::A64 | EngineKind::A64Eight => {
            // Variable- and fixed-mode geometry shaders run one invocation at a time: no
            // multi-vertex code is generated or reported for them.
            let lanes =
                workload.kind() == ShaderKind::Vertex || workload.gs_mode == GsInputMode::Point;
            through_jit(program, engine, mode, lanes)?
        }
    };
    Ok(Prepared {
        engine,
        mode,
        compile_time,
        code_size,
        lanes_code,
        budget,
        kind: workload.kind(),
        gs_mode: workload.gs_mode,
        out_mask: crate::pica::engine::program_output_mask(program),
        exec,
        unit_state: None,
    })
}

type Preparation = (Exec, Duration, Option<usize>, Option<(Duration, usize)>);

fn through_engine(
    program: &Program,
    backend: Engine,
    mode: FloatMode,
    budget: u64,
) -> Result<Preparation, String> {
    let config = EngineConfig::default()
        .with_engine(backend)
        .with_float_mode(mode)
        .with_budget(budget);
    let program = program.clone();
    let start = Instant::now();
    let shader = Shader::new(program, &config).map_err(|e| e.to_string())?;
    Ok((Exec::Engine(Box::new(shader)), start.elapsed(), None, None))
}

fn through_jit(
    program: &Program,
    engine: EngineKind,
    mode: FloatMode,
    lanes: bool,
) -> Result<Preparation, String> {
    let backend = engine
        .backend()
        .ok_or_else(|| format!("{engine} is not a JIT"))?;
    let features = HostFeatures::for_backend(backend);
    let code =
        picajit_jit::compile_with_options(program, mode, backend, features, engine.options())
            .map_err(|e| e.to_string())?;
    let (time, size) = (code.compile_time(), Some(code.code_size()));
    if engine.runs_here() && !lanes {
        Ok((Exec::Jit(Box::new(code)), time, size, None))
    } else if engine.runs_here() {
        // `batch_lanes` generates the multi-vertex code, as the first large batch would.
        let start = Instant::now();
        let lanes = code.batch_lanes();
        let lanes_code = (lanes > 1).then(|| (start.elapsed(), code.batch_code().0.len()));
        Ok((Exec::Jit(Box::new(code)), time, size, lanes_code))
    } else {
        // Code for another host: its multi-vertex code is generated and measured too.
        let lanes_code = if lanes { code.batch_codegen() } else { None };
        Ok((Exec::CodegenOnly, time, size, lanes_code))
    }
}

impl Prepared {
    /// With `on`, vertex batches run as an emulator's persistent unit asks for them: every
    /// vertex starts from a fixed, non-clean unit state (r0-r15 hold distinct small values)
    /// and the last vertex's final state is handed back, as the engine's batches with a state
    /// out do (the JIT: a batch from the state, then the last vertex once more on the
    /// per-vertex code).
    pub fn with_unit_state(mut self, on: bool) -> Prepared {
        self.unit_state = on.then(|| {
            let mut s = UnitState::default();
            for (k, row) in s.temp.iter_mut().enumerate() {
                *row = [0.25 * k as f32, 0.5, -1.0, 2.0];
            }
            s
        });
        self
    }

    /// True when batches can run (the interpreter, or a JIT for this host).
    pub fn runnable(&self) -> bool {
        !matches!(self.exec, Exec::CodegenOnly)
    }

    /// The multi-vertex path's counters so far, for JIT code that has one.
    pub fn lane_stats(&self) -> Option<picajit_jit::BatchStats> {
        match &self.exec {
            Exec::Jit(code) if code.batch_lanes() > 1 => Some(code.batch_stats()),
            _ => None,
        }
    }

    /// One invocation on `regs` as they are: the JIT's code (the interpreter where it stops)
    /// or the interpreter itself; a failure names invocation `index`.
    fn one(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
        index: usize,
    ) -> Result<u64, Error> {
        match &self.exec {
            Exec::Jit(code) => code
                .invoke(
                    Invocation::one(uniforms, regs)
                        .geometry(geometry)
                        .budget(self.budget),
                )
                .map(|o| o.instructions)
                .map_err(|e| at_index(e, index)),
            Exec::Engine(shader) => shader
                .interpreter()
                .run(regs, uniforms, geometry, self.budget)
                .map(|i| i.instructions)
                .map_err(|error| Error::Exec { index, error }),
            Exec::CodegenOnly => Err(Error::Unavailable(format!(
                "{} code cannot run on this host",
                self.engine
            ))),
        }
    }

    /// Run vertex-shader invocations: vertex `k` starts from a clean working state (or the
    /// unit state, see [`Self::with_unit_state`]) with `inputs[k]` (register values) and
    /// leaves the output registers the program writes in `outputs[k]`.
    pub fn run_vertices(
        &self,
        uniforms: &Uniforms,
        inputs: &[[[f32; 4]; 16]],
        outputs: &mut [[[f32; 4]; 16]],
    ) -> Result<BatchStats, String> {
        let state = self.unit_state.as_ref();
        match &self.exec {
            // The JIT's batch: from the clean state, or from the unit state with the last
            // vertex once more on the per-vertex code for the state out (as the engine does).
            Exec::Jit(code) if state.is_none() || inputs.len() >= picajit_jit::LANES => {
                let batch = Invocation::batch(uniforms, inputs, outputs)
                    .mask(self.out_mask)
                    .budget(self.budget);
                let info = match state {
                    None => code.invoke(batch),
                    Some(s) => code.invoke(batch.from_state(s)).and_then(|info| {
                        if let Some(last) = inputs.len().checked_sub(1) {
                            let mut regs = Registers::default();
                            regs.input = inputs[last];
                            regs.set_unit_state(s);
                            self.one(&mut regs, uniforms, None, last)?;
                            std::hint::black_box(regs.unit_state());
                        }
                        Ok(info)
                    }),
                }
                .map_err(|e| e.to_string())?;
                Ok(BatchStats {
                    instructions: info.instructions,
                    deopts: info.deopts,
                    emitted: 0,
                })
            }
            // The interpreter itself, on register values as the JIT's batch takes them (input
            // conversion stays out of both timings); and the JIT's batches shorter than a
            // group from the unit state, one invocation each, the last one's registers the
            // state out.
            _ => {
                let mut regs = Registers::default();
                let mut stats = BatchStats::default();
                for (k, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
                    regs.output = [[0.0; 4]; 16];
                    regs.set_unit_state(state.unwrap_or(&UnitState::default()));
                    regs.input = *input;
                    stats.instructions += self
                        .one(&mut regs, uniforms, None, k)
                        .map_err(|e| e.to_string())?;
                    let mut mask = self.out_mask;
                    while mask != 0 {
                        let o = mask.trailing_zeros() as usize;
                        output[o] = regs.output[o];
                        mask &= mask - 1;
                    }
                }
                if state.is_some() {
                    std::hint::black_box(regs.unit_state());
                }
                Ok(stats)
            }
        }
    }

    /// An empty buffer for the vertices geometry-shader batches emit: it keeps the output
    /// registers the program writes, the same for every engine.
    pub fn emit_buffer(&self) -> EmitBuffer {
        EmitBuffer::new(self.out_mask)
    }

    /// Run geometry-shader invocations, one per input record (register values): in point
    /// mode one point-mode run of the engine (the record is v0-v15); in variable and fixed
    /// mode one invocation at a time, as the engines run them, with the record's rows written
    /// to the float uniforms from the mode's first register (in variable mode after a count
    /// row of 3 to 7, varying from invocation to invocation). Registers and emit state carry
    /// over from invocation to invocation and from call to call as on hardware, b15 is set
    /// after each (like [`crate::pica::engine::GeometryRunner`]), and the emitted vertices are
    /// appended to `out`. On failure: the failing invocation's index and the message.
    pub fn run_points(
        &self,
        uniforms: &mut Uniforms,
        regs: &mut Registers,
        geometry: &mut GeometryState,
        inputs: &[[[f32; 4]; 16]],
        out: &mut EmitBuffer,
    ) -> Result<BatchStats, (usize, String)> {
        let before = out.len();
        let (first, count_row) = match self.gs_mode {
            GsInputMode::Variable { first_uniform, .. } => (usize::from(first_uniform), true),
            GsInputMode::Fixed { first_uniform, .. } => (usize::from(first_uniform), false),
            GsInputMode::Point => (0, false),
        };
        let (instructions, deopts) = match &self.exec {
            Exec::CodegenOnly => {
                return Err((0, format!("{} code cannot run on this host", self.engine)))
            }
            // The interpreter itself: the engine's point run would convert the inputs, which
            // are register values already (conversion stays out of every timing).
            Exec::Engine(shader) if self.gs_mode == GsInputMode::Point => shader
                .interpreter()
                .run_points(regs, uniforms, geometry, inputs, self.budget, out)
                .map(|n| (n, 0))
                .map_err(|(k, e)| (k, e.to_string()))?,
            Exec::Jit(code) if self.gs_mode == GsInputMode::Point => code
                .invoke(
                    Invocation::points(uniforms, regs, geometry, inputs, out).budget(self.budget),
                )
                .map(|i| (i.instructions, i.deopts))
                .map_err(failure)?,
            // Variable and fixed mode: one invocation per input record, as every engine runs
            // them, its rows written to the float uniforms.
            _ => {
                geometry.drain_into(out);
                let mut instructions = 0;
                for (k, input) in inputs.iter().enumerate() {
                    let mut row = first;
                    if count_row {
                        uniforms.set_float_raw(row, [(3 + k % 5) as f32; 4]);
                        row += 1;
                    }
                    for (r, values) in input.iter().enumerate().take(96usize.saturating_sub(row)) {
                        uniforms.set_float_raw(row + r, *values);
                    }
                    let result = self.one(regs, uniforms, Some(geometry), k);
                    uniforms.set_bool(15, true);
                    geometry.drain_into(out);
                    instructions += result.map_err(failure)?;
                }
                (instructions, 0)
            }
        };
        Ok(BatchStats {
            instructions,
            deopts,
            emitted: out.len() - before,
        })
    }
}

/// `e` for invocation `index` of a call.
fn at_index(e: Error, index: usize) -> Error {
    match e {
        Error::Exec { error, .. } => Error::Exec { index, error },
        other => other,
    }
}

/// A failed call: the failing invocation and the message.
fn failure(e: Error) -> (usize, String) {
    match e {
        Error::Exec { index, error } => (index, error.to_string()),
        other => (0, other.to_string()),
    }
}

/// Runs batches of one size over a workload's input pool, each batch on the next vertices, so
/// that repeated small batches do not see the same vertex (and the same branches) every time.
pub struct BatchRunner<'p> {
    prepared: &'p Prepared,
    uniforms: Uniforms,
    inputs: Vec<[[f32; 4]; 16]>,
    outputs: Vec<[[f32; 4]; 16]>,
    regs: Registers,
    geometry: GeometryState,
    /// What geometry-shader batches emit, cleared after each batch.
    emitted: EmitBuffer,
    batch: usize,
    cursor: usize,
}

impl<'p> BatchRunner<'p> {
    /// Batches of `batch` vertices (at least 1) of `workload` on `prepared`.
    pub fn new(prepared: &'p Prepared, workload: &Workload, batch: usize) -> BatchRunner<'p> {
        let batch = batch.max(1);
        let pool = batch.max(DEFAULT_POOL);
        let vertex = prepared.kind == ShaderKind::Vertex;
        BatchRunner {
            prepared,
            uniforms: workload.uniforms(prepared.mode),
            inputs: workload.inputs(prepared.mode, pool),
            outputs: vec![[[0.0; 4]; 16]; if vertex { batch } else { 0 }],
            regs: Registers::default(),
            geometry: GeometryState::default(),
            emitted: prepared.emit_buffer(),
            batch,
            cursor: 0,
        }
    }

    /// Vertices (vertex shaders) or points (geometry shaders) per batch.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Run the next batch.
    pub fn run(&mut self) -> Result<BatchStats, String> {
        if self.cursor + self.batch > self.inputs.len() {
            self.cursor = 0;
        }
        let inputs = &self.inputs[self.cursor..self.cursor + self.batch];
        self.cursor += self.batch;
        match self.prepared.kind {
            ShaderKind::Vertex => {
                self.prepared
                    .run_vertices(&self.uniforms, inputs, &mut self.outputs)
            }
            ShaderKind::Geometry => {
                let stats = self
                    .prepared
                    .run_points(
                        &mut self.uniforms,
                        &mut self.regs,
                        &mut self.geometry,
                        inputs,
                        &mut self.emitted,
                    )
                    .map_err(|(k, e)| format!("point {k}: {e}"));
                self.emitted.clear();
                stats
            }
        }
    }
}

/// Run the first `count` vertices of `workload` on `a` and `b` (same float mode) and compare
/// every output bit; for geometry shaders (run as point-mode runs in a few calls, so that
/// groups of eight, tails and carrying state from call to call are all covered) every
/// emitted vertex with its flags, and the registers, geometry state and bool uniforms left
/// afterwards. `Err` describes the first difference, including one engine failing where the
/// other does not: the timings of an engine that disagrees with the interpreter mean
/// nothing.
pub fn compare(
    a: &Prepared,
    b: &Prepared,
    workload: &Workload,
    count: usize,
) -> Result<(), String> {
    let inputs = workload.inputs(a.mode, count);
    let bits =
        |rows: &[[f32; 4]]| -> Vec<u32> { rows.iter().flatten().map(|x| x.to_bits()).collect() };
    // Output records (per vertex, or per emitted vertex: flags first, then output bits), and
    // the state left afterwards (geometry shaders).
    type Trace = (Vec<Vec<u32>>, Vec<u32>);
    let trace = |p: &Prepared| -> Result<Trace, String> {
        let mut uniforms = workload.uniforms(p.mode);
        match p.kind {
            ShaderKind::Vertex => {
                let mut outputs = vec![[[0.0f32; 4]; 16]; count];
                p.run_vertices(&uniforms, &inputs, &mut outputs)?;
                Ok((outputs.iter().map(|o| bits(o)).collect(), Vec::new()))
            }
            ShaderKind::Geometry => {
                let mut regs = Registers::default();
                let mut geometry = GeometryState::default();
                let mut out = p.emit_buffer();
                let mut start = 0;
                let mut instructions = 0;
                for len in [1, 8, 15, count] {
                    let end = (start + len).min(count);
                    let stats = p
                        .run_points(
                            &mut uniforms,
                            &mut regs,
                            &mut geometry,
                            &inputs[start..end],
                            &mut out,
                        )
                        .map_err(|(k, e)| format!("point {}: {e}", start + k))?;
                    instructions += stats.instructions;
                    start = end;
                }
                let records = (0..out.len())
                    .map(|i| {
                        let (rows, f) = out.vertex(i);
                        let mut r = vec![f.to_bits()];
                        r.extend(bits(rows));
                        r
                    })
                    .collect();
                let mut state = bits(&regs.input);
                state.extend(bits(&regs.temp));
                state.extend(bits(&regs.output));
                state.extend([regs.a0[0], regs.a0[1], regs.al].map(|x| x as u32));
                state.extend(regs.cmp.map(u32::from));
                state.extend(bits(&geometry.other_bank));
                for slot in &geometry.slots {
                    state.extend(bits(slot));
                }
                state.extend([
                    u32::from(geometry.vertex_id),
                    u32::from(geometry.primitive),
                    u32::from(geometry.winding),
                    u32::from(uniforms.bools()),
                ]);
                state.extend([instructions as u32, (instructions >> 32) as u32]);
                Ok((records, state))
            }
        }
    };
    let (ta, tb) = match (trace(a), trace(b)) {
        (Ok(ta), Ok(tb)) => (ta, tb),
        // Failing the same way is agreeing; the measurement reports the failure.
        (Err(x), Err(y)) if x == y => return Ok(()),
        (Err(x), Err(y)) => return Err(format!("{}: {x}; {}: {y}", a.engine, b.engine)),
        (Err(x), Ok(_)) => return Err(format!("{} failed ({x}), {} did not", a.engine, b.engine)),
        (Ok(_), Err(y)) => return Err(format!("{} failed ({y}), {} did not", b.engine, a.engine)),
    };
    if let Some(k) = ta.0.iter().zip(&tb.0).position(|(x, y)| x != y) {
        return Err(format!(
            "output record {k} differs between {} and {}",
            a.engine, b.engine
        ));
    }
    if ta.0.len() != tb.0.len() {
        return Err(format!(
            "{} produced {} output records, {} produced {}",
            a.engine,
            ta.0.len(),
            b.engine,
            tb.0.len()
        ));
    }
    if ta.1 != tb.1 {
        return Err(format!(
            "the state left after the last point (registers, geometry state, b15 or \
             instruction count) differs between {} and {}",
            a.engine, b.engine
        ));
    }
    Ok(())
}
