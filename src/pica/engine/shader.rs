//! A [`Shader`]: a program prepared for one [`EngineConfig`], the engine it runs on, and the
//! conversions of inputs and state to its register representation.

use super::stage::{batch_threads, map_rows, set_bits};
use crate::common::{budget_or_default, Engine, Error, DEFAULT_BUDGET};
use crate::pica::shbin::{Constant, Dvle, Shbin};
use picajit_interp::pica::exec::Interpreter;
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding, F24};
use picajit_interp::pica::isa::{decode, DstReg, Instruction, SrcReg};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::{Uniforms, UnitState};
use picajit_jit::{A64Lanes, Backend, CodeCache, CompileOptions, CompiledShader, HostFeatures};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Engine settings.
///
/// Start from [`EngineConfig::default`] and change what you need with the `with_*` setters
/// (or assign the public fields of a value you own): the struct is `#[non_exhaustive]`, so
/// settings added later do not break code that builds one.
///
/// ```
/// use picajit::pica::engine::EngineConfig;
/// use picajit::Engine;
/// let config = EngineConfig::default().with_engine(Engine::Interp).with_budget(4096);
/// assert_eq!(config.budget, 4096);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct EngineConfig {
    /// The engine (default: the host's JIT, see [`Engine`]).
    pub engine: Engine,
    /// Float semantics.
    pub float_mode: FloatMode,
    /// Most instructions per invocation before
    /// [`ExecError::BudgetExhausted`](picajit_interp::pica::exec::ExecError::BudgetExhausted); 0 stands for
    /// [`DEFAULT_BUDGET`] ([`budget_or_default`]).
    pub budget: u64,
    /// Which reading of `max(0, -inf)` every engine implements (`docs/float-max.md`).
    pub max_rule: MaxRule,
    /// How the AArch64 JIT's multi-vertex code runs a group of eight vertices: four lanes
    /// per run of its body (the default) or eight. Results are the same; other backends
    /// ignore it.
    pub a64_lanes: A64Lanes,
    /// Threads a vertex batch may use, for every shader prepared with this config (the
    /// initial value of [`Shader::set_threads`], which describes the values): 0, the default
    /// of the Rust API, spreads batches of at least
    /// [`PARALLEL_MIN_BATCH`](super::PARALLEL_MIN_BATCH) vertices over every core; 1 runs
    /// every batch on the calling thread (the C ABI's default, for emulators that run their
    /// own threads). Results are the same for every value.
    pub threads: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            engine: Engine::Jit,
            float_mode: FloatMode::default(),
            budget: DEFAULT_BUDGET,
            max_rule: MaxRule::default(),
            a64_lanes: A64Lanes::default(),
            threads: 0,
        }
    }
}

impl EngineConfig {
    /// This config with [`Self::engine`] set.
    #[must_use]
    pub fn with_engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        self
    }

    /// This config with [`Self::float_mode`] set.
    #[must_use]
    pub fn with_float_mode(mut self, float_mode: FloatMode) -> Self {
        self.float_mode = float_mode;
        self
    }

    /// This config with [`Self::budget`] set.
    #[must_use]
    pub fn with_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }

    /// This config with [`Self::max_rule`] set.
    #[must_use]
    pub fn with_max_rule(mut self, max_rule: MaxRule) -> Self {
        self.max_rule = max_rule;
        self
    }

    /// This config with [`Self::a64_lanes`] set.
    #[must_use]
    pub fn with_a64_lanes(mut self, a64_lanes: A64Lanes) -> Self {
        self.a64_lanes = a64_lanes;
        self
    }

    /// This config with [`Self::threads`] set.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }
}

/// A program prepared for execution.
#[derive(Debug)]
pub struct Shader {
    program: Program,
    pub(super) interp: Interpreter,
    pub(super) jit: Option<Arc<CompiledShader>>,
    pub(super) config: EngineConfig,
    active: Engine,
    fallback: Option<String>,
    input_mask: u16,
    output_mask: u16,
    /// The same program prepared for other entry points and the other shader unit
    /// ([`Shader::at`]), each compiled once, on its first run.
    entries: Mutex<HashMap<(ShaderKind, u16), Arc<Shader>>>,
    /// Threads vertex batches may use (0: automatic, see [`Shader::set_threads`]).
    threads: usize,
    /// The cache it was prepared with ([`Shader::with_cache`]): other entry points are
    /// compiled through it, into the same budget.
    cache: Option<CodeCache>,
}

impl Shader {
    /// Prepare `program` for `config`, compiling it when a JIT is selected.
    pub fn new(program: Program, config: &EngineConfig) -> Result<Shader, Error> {
        Shader::prepare(program, config, None)
    }

    /// [`Shader::new`] reusing compiled code from `cache`: emulators switch between a few
    /// programs many times per frame, and a hit skips code generation (the key covers
    /// everything that changes the code, see [`CodeCache`]). The shader keeps the cache
    /// (clones share it) and compiles its other entry points ([`Shader::at_entry`]) through
    /// it, so all its code counts against the cache's budget; while the shader lives the
    /// cache does not drop its code, and once it is dropped the code is the cache's to drop
    /// when over budget.
    pub fn with_cache(
        program: Program,
        config: &EngineConfig,
        cache: &CodeCache,
    ) -> Result<Shader, Error> {
        Shader::prepare(program, config, Some(cache))
    }

    fn prepare(
        program: Program,
        config: &EngineConfig,
        cache: Option<&CodeCache>,
    ) -> Result<Shader, Error> {
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
            active: Engine::Interp,
            fallback: None,
            entries: Mutex::new(HashMap::new()),
            threads: config.threads,
            cache: cache.cloned(),
        };
        let Some(backend) = target else {
            if config.engine == Engine::Jit {
                shader.fallback = Some("no JIT backend exists for this host architecture".into());
            }
            return Ok(shader);
        };
        let features = HostFeatures::detect();
        let options = CompileOptions::default()
            .with_max_rule(config.max_rule)
            .with_a64_lanes(config.a64_lanes);
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
                shader.active = Engine::from(backend);
                shader.jit = Some(code);
            }
            Ok(_) => {
                return Err(Error::Unavailable(format!(
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

    /// The engine invocations run on: [`Engine::Interp`], [`Engine::X64`] or [`Engine::A64`]
    /// (never [`Engine::Jit`], which is resolved when the shader is prepared).
    pub fn engine(&self) -> Engine {
        self.active
    }

    /// Why a JIT was requested but the interpreter runs this program, if so.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The reference interpreter prepared for this program and float mode: what runs
    /// whatever compiled code cannot finish, and everything when no JIT runs the program. Its entry points take register
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
    /// to [`Invocation::mask`](super::Invocation::mask).
    pub fn output_mask(&self) -> u16 {
        self.output_mask
    }

    /// Threads that vertex batches ([`Invocation::batch`](super::Invocation::batch)) may use
    /// (initially [`EngineConfig::threads`]): `0` (the Rust API's default) uses every core of the host ([`std::thread::available_parallelism`])
    /// for batches of at least [`PARALLEL_MIN_BATCH`](super::PARALLEL_MIN_BATCH) vertices and
    /// one thread below; `1` never splits; `n` splits every batch into up to `n` contiguous
    /// parts of at least [`PARALLEL_MIN_PER_THREAD`](super::PARALLEL_MIN_PER_THREAD)
    /// vertices (and at most [`max_batch_threads`](super::max_batch_threads)), run on the
    /// calling thread and persistent worker threads (one per core,
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

    /// Call `f` with this program prepared for entry point `entry` (see [`Self::at_entry`]).
    pub fn with_entry<R>(&self, entry: u32, f: impl FnOnce(&Shader) -> R) -> Result<R, Error> {
        let shader = self.at_entry(entry)?;
        Ok(f(&shader))
    }

    /// This program prepared for entry point `entry` on its own unit ([`Self::at`]).
    ///
    /// Fails for an entry point outside the program's code words.
    pub fn at_entry(&self, entry: u32) -> Result<ShaderAt<'_>, Error> {
        self.at(entry, self.program.kind())
    }

    /// This program prepared for the `kind` shader unit from its own entry point
    /// ([`Self::at`]): one program, loaded once, runs on the vertex unit and on the geometry
    /// unit, as an emulator's programs do.
    pub fn for_unit(&self, kind: ShaderKind) -> ShaderAt<'_> {
        self.at(u32::from(self.program.entry()), kind)
            .expect("the program's own entry point is inside its code")
    }

    /// This program prepared for entry point `entry` on the `kind` unit: `self` when both
    /// are the program's own, otherwise the shader for that pair, prepared (compiled, on a
    /// JIT) on the first call and kept in `self` for every later one. Emulators pass the
    /// entry point with each draw while the program words stay the same, and may run the
    /// same words on either unit; this costs a map lookup per call, not a compilation. At
    /// most one shader per code word and unit is ever prepared. The settings, thread count
    /// included, are this shader's.
    ///
    /// Fails for an entry point outside the program's code words.
    pub fn at(&self, entry: u32, kind: ShaderKind) -> Result<ShaderAt<'_>, Error> {
        if entry == u32::from(self.program.entry()) && kind == self.program.kind() {
            return Ok(ShaderAt::Own(self));
        }
        let program = self.program.at(entry, kind)?;
        let key = (kind, entry as u16);
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
                let mut fresh = Shader::prepare(program, &self.config, self.cache.as_ref())?;
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

    /// Entry points other than the program's own, and units other than its own, that
    /// [`Self::at`] has prepared (one per pair).
    pub fn prepared_entries(&self) -> usize {
        self.entries.lock().map_or(0, |m| m.len())
    }

    /// Convert f32 vertex attributes to register values, the one rule for f32 input (Rust
    /// API, CLI decimals, C ABI `PICAJIT_FORMAT_F32`): in F24 mode every value becomes
    /// `F24::from_f32(x, rounding)` (17 significant bits with the mode's rounding; a
    /// magnitude below 2^-62 becomes +0, one of 2^64 or more ±inf, an exact ±0 keeps its
    /// sign, NaN becomes 0x7FFFFF), so that F24 registers hold f24 values only; in F32 mode
    /// values are used as they are. Raw f24 words skip this ([`Attributes::F24`](super::Attributes::F24)).
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

    /// Convert only the registers the program reads; the rest are zero.
    pub(super) fn convert_masked(&self, input: &[[f32; 4]; 16]) -> [[f32; 4]; 16] {
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
    pub(super) fn convert_chunk(&self, src: &[[[f32; 4]; 16]], dst: &mut [[[f32; 4]; 16]]) {
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
    pub(super) fn expand_chunk(&self, src: &[[[F24; 4]; 16]], dst: &mut [[[f32; 4]; 16]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            for r in set_bits(self.input_mask) {
                d[r] = s[r].map(F24::to_f32);
            }
        }
    }

    /// Widen only the raw registers the program reads; the rest are zero.
    pub(super) fn expand_masked(&self, input: &[[F24; 4]; 16]) -> [[f32; 4]; 16] {
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
pub(super) const SMALL_BATCH: usize = picajit_jit::LANES;

/// A [`Shader`] for one entry point and unit of a program ([`Shader::at`]): the shader
/// itself or the one prepared for that pair.
#[derive(Debug)]
pub enum ShaderAt<'a> {
    /// The program's own entry point.
    Own(&'a Shader),
    /// Another entry point or unit, prepared once and kept by the shader.
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

/// Build the program of DVLE `index` of a SHBIN, plus uniforms holding its constant table
/// (what a loader applies when it binds the DVLE).
pub fn program_from_shbin(shbin: &Shbin, index: usize) -> Result<(Program, Uniforms), Error> {
    let dvle: &Dvle = shbin.dvles.get(index).ok_or(Error::NoSuchDvle {
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
