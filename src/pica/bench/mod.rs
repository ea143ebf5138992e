//! Performance measurement shared by `picajit bench` and the criterion benches
//! (`benches/engines.rs`): throughput in vertices per second per engine, float mode and batch
//! size, compile time and code size.
//!
//! # Method
//!
//! Ratios are what users compare (JIT against interpreter, f24 against f32), and on a shared
//! machine the load changes during a run. So for one shader and batch size every engine and
//! mode is sampled in turn, round after round, and each cell reports the median of its
//! samples: a burst of load hits all cells of a round alike instead of one cell's whole
//! measurement. Inputs are converted to register values before timing (for every engine
//! alike), and every JIT is first checked bit for bit against the interpreter on a few hundred
//! vertices, so a fast wrong engine shows up as a mismatch rather than a win.
//!
//! For geometry shaders a "vertex" is one invocation: an input point, or in variable and
//! fixed mode an input primitive written to the float uniforms; what they emit is reported
//! beside it. A batch of points is one point-mode run per engine, emitting into a packed
//! buffer of the output registers the shader writes; primitives run one invocation at a time
//! (as every engine runs those modes).

mod runner;
mod workload;

pub use runner::{
    compare, mode_label, parse_mode, prepare, BatchRunner, BatchStats, EngineKind, Prepared, MODES,
};
pub use workload::{InputGen, Rng, Workload, DEFAULT_POOL, EXAMPLES};

use picajit_interp::pica::exec::DEFAULT_BUDGET;
use picajit_interp::pica::float::FloatMode;
use picajit_interp::pica::program::ShaderKind;
use std::time::{Duration, Instant};

/// The standard batch sizes: one vertex (call overhead dominates), a small draw, a large one.
pub const BATCH_SIZES: [usize; 3] = [1, 64, 4096];

/// Vertices compared bit for bit between each JIT and the interpreter before timing.
const CHECK_VERTICES: usize = 256;

/// What to measure and for how long.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Engines; ones that cannot run here are measured for compile time and code size only.
    pub engines: Vec<EngineKind>,
    /// Float modes.
    pub modes: Vec<FloatMode>,
    /// Batch sizes.
    pub batches: Vec<usize>,
    /// Measuring time per engine, mode and batch size (spread over the samples).
    pub time_per_cell: Duration,
    /// Samples per cell; the median is reported.
    pub samples: usize,
    /// Compilations per engine and mode; the median is reported.
    pub compile_samples: usize,
    /// Instruction budget per invocation.
    pub budget: u64,
    /// Vertex-shader batches start every vertex from a given unit state and hand the last
    /// vertex's state back (`Invocation::from_state` and `state_out`), to measure what that costs.
    pub unit_state: bool,
    /// What a sample's time is read from.
    pub clock: Clock,
}

/// What the time of a sample is read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// Elapsed time: what a caller waits, including time the thread spends preempted.
    #[default]
    Wall,
    /// CPU time of the measuring thread (Linux).
    /// On a machine shared with other work, a preempted thread's wall-clock samples grow by
    /// whole time slices; its CPU time does not, so ratios stay comparable under load
    /// (caches and a busy sibling hyperthread still slow it down).
    ThreadCpu,
}

impl Clock {
    /// `wall` or `cpu`.
    pub fn name(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::ThreadCpu => "cpu",
        }
    }

    /// Inverse of [`Self::name`].
    pub fn parse(s: &str) -> Option<Clock> {
        match s {
            "wall" => Some(Clock::Wall),
            "cpu" => Some(Clock::ThreadCpu),
            _ => None,
        }
    }

    /// True when this clock can be read on this host.
    pub fn available(self) -> bool {
        match self {
            Clock::Wall => true,
            Clock::ThreadCpu => thread_cpu_ns().is_some(),
        }
    }

    /// Nanoseconds since some fixed point of this clock (the thread's start for CPU time).
    fn now(self, wall_origin: Instant) -> f64 {
        match self {
            Clock::Wall => wall_origin.elapsed().as_secs_f64() * 1e9,
            Clock::ThreadCpu => thread_cpu_ns().unwrap_or(0) as f64,
        }
    }
}

/// CPU time of the calling thread in nanoseconds (Linux: `CLOCK_THREAD_CPUTIME_ID`).
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> Option<u64> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

/// CPU time of the calling thread: not read on this host.
#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            engines: EngineKind::ALL.to_vec(),
            modes: MODES.to_vec(),
            batches: BATCH_SIZES.to_vec(),
            time_per_cell: Duration::from_millis(200),
            samples: 20,
            compile_samples: 21,
            budget: DEFAULT_BUDGET,
            unit_state: false,
            clock: Clock::Wall,
        }
    }
}

/// One workload's static facts.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadInfo {
    /// Name.
    pub name: String,
    /// Vertex or geometry shader.
    pub kind: ShaderKind,
    /// Program size in words.
    pub words: usize,
    /// Mean PICA instructions per vertex (per invocation for geometry shaders) on the
    /// interpreter, first measured mode.
    pub instructions_per_vertex: Option<f64>,
    /// Mean vertices emitted per invocation (geometry shaders).
    pub emitted_per_invocation: Option<f64>,
}

/// Preparing one workload for one engine and mode.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileResult {
    /// Workload name.
    pub workload: String,
    /// Engine.
    pub engine: EngineKind,
    /// Float mode.
    pub mode: FloatMode,
    /// Median time to compile (JIT) or pre-decode (interpreter), microseconds.
    pub micros: Option<f64>,
    /// Machine code bytes (JIT).
    pub code_bytes: Option<usize>,
    /// Median time to generate the multi-vertex (8-lane) code, microseconds, where the JIT
    /// has such code for this shader (generated at the first batch of eight or more).
    pub lane_micros: Option<f64>,
    /// Bytes of the multi-vertex code.
    pub lane_code_bytes: Option<usize>,
    /// Why the engine could not prepare this workload.
    pub error: Option<String>,
    /// The first difference from the interpreter's results, if any.
    pub mismatch: Option<String>,
}

/// Throughput of one workload on one engine, mode and batch size.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// Workload name.
    pub workload: String,
    /// Engine.
    pub engine: EngineKind,
    /// Float mode.
    pub mode: FloatMode,
    /// Vertices (points, for geometry shaders) per batch.
    pub batch: usize,
    /// Median nanoseconds per vertex.
    pub ns_per_vertex: f64,
    /// Fastest and slowest sample, nanoseconds per vertex.
    pub ns_range: (f64, f64),
    /// Fraction of invocations that compiled code handed to the interpreter.
    pub deopt_fraction: f64,
    /// The multi-vertex path's counters over this cell's batches, when it has one.
    pub lanes: Option<LaneStats>,
    /// Why this cell could not be measured (the others still are).
    pub error: Option<String>,
}

/// What the multi-vertex (8-lane) path did during one cell's batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneStats {
    /// Groups of eight vertices that finished on it.
    pub groups: u64,
    /// Groups that stopped and reran per vertex, or ran per vertex without an attempt.
    pub reruns: u64,
    /// Divergent branches (lanes disagreeing) the finished groups ran with lane masks.
    pub splits: u64,
}

impl RunResult {
    /// Vertices per second.
    pub fn vertices_per_second(&self) -> f64 {
        if self.ns_per_vertex > 0.0 {
            1e9 / self.ns_per_vertex
        } else {
            0.0
        }
    }
}

/// Everything one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// CPU model (from /proc/cpuinfo where there is one).
    pub cpu: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// 1-minute load average before and after the run (Linux), a hint of how noisy it was.
    pub load: (Option<f64>, Option<f64>),
    /// The settings used.
    pub settings: Settings,
    /// Per workload.
    pub workloads: Vec<WorkloadInfo>,
    /// Per workload, engine and mode.
    pub compiles: Vec<CompileResult>,
    /// Per workload, engine, mode and batch size (runnable engines only).
    pub runs: Vec<RunResult>,
}

impl Report {
    /// The measurement of a cell.
    pub fn run(
        &self,
        workload: &str,
        engine: EngineKind,
        mode: FloatMode,
        batch: usize,
    ) -> Option<&RunResult> {
        self.runs.iter().find(|r| {
            r.workload == workload
                && r.engine == engine
                && r.mode == mode
                && r.batch == batch
                && r.error.is_none()
        })
    }

    /// The compile measurement of a workload on an engine and mode.
    pub fn compile(
        &self,
        workload: &str,
        engine: EngineKind,
        mode: FloatMode,
    ) -> Option<&CompileResult> {
        self.compiles
            .iter()
            .find(|c| c.workload == workload && c.engine == engine && c.mode == mode)
    }

    /// How many times faster than the interpreter `r` ran (same workload, mode and batch).
    pub fn speedup(&self, r: &RunResult) -> Option<f64> {
        let base = self.run(&r.workload, EngineKind::Interpreter, r.mode, r.batch)?;
        (r.ns_per_vertex > 0.0).then(|| base.ns_per_vertex / r.ns_per_vertex)
    }

    /// Time per vertex of `r` relative to f32 mode on the same engine and batch (1.5 = f24
    /// costs 50% more).
    pub fn vs_f32(&self, r: &RunResult) -> Option<f64> {
        let base = self.run(&r.workload, r.engine, FloatMode::F32, r.batch)?;
        (base.ns_per_vertex > 0.0).then(|| r.ns_per_vertex / base.ns_per_vertex)
    }
}

/// Progress of [`measure`], for display.
#[derive(Clone, Debug)]
pub enum Progress<'a> {
    /// Compiling and checking a workload's engines.
    Preparing {
        /// 0-based workload index.
        index: usize,
        /// Workloads in total.
        total: usize,
        /// Its name.
        workload: &'a str,
    },
    /// Sampling one workload at one batch size.
    Sampling {
        /// 0-based step over all workloads and batch sizes.
        step: usize,
        /// Steps in total.
        total: usize,
        /// Workload name.
        workload: &'a str,
        /// Batch size.
        batch: usize,
        /// Estimated seconds left for the whole run.
        eta_seconds: f64,
    },
}

/// The CPU model name, with family and model numbers where /proc/cpuinfo has them (a
/// virtual machine may show only "AMD EPYC"), or the architecture when unknown.
pub fn cpu_model() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_string())
    };
    match (
        field("model name").or_else(|| field("Model")),
        field("cpu family"),
        field("model"),
    ) {
        (Some(name), Some(family), Some(model)) => {
            format!("{name} (family {family}, model {model})")
        }
        (Some(name), _, _) => name,
        _ => std::env::consts::ARCH.to_string(),
    }
}

/// 1-minute load average (Linux).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// A cell being sampled.
struct Cell<'p> {
    runner: BatchRunner<'p>,
    /// The multi-vertex counters when the cell started.
    lanes_at_start: Option<picajit_jit::BatchStats>,
    iterations: u64,
    samples: Vec<f64>,
    deopts: usize,
    vertices: usize,
    error: Option<String>,
}

impl Cell<'_> {
    /// Time `iterations` batches on `clock`; per-vertex nanoseconds.
    fn sample(&mut self, clock: Clock) -> Result<f64, String> {
        let origin = Instant::now();
        let start = clock.now(origin);
        for _ in 0..self.iterations {
            let stats = self.runner.run()?;
            self.deopts += stats.deopts;
            self.vertices += self.runner.batch();
        }
        let elapsed = clock.now(origin) - start;
        Ok(elapsed / (self.iterations as f64 * self.runner.batch() as f64))
    }
}

/// Measure `workloads` as `settings` say, reporting progress to `progress`.
///
/// Failures are results, not errors: an engine that cannot compile a shader, or a shader
/// that fails on some input, is recorded and the rest is still measured.
pub fn measure(
    workloads: &[Workload],
    settings: &Settings,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Report {
    let load_before = load_average();
    let mut report = Report {
        cpu: cpu_model(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        load: (load_before, None),
        settings: settings.clone(),
        workloads: Vec::new(),
        compiles: Vec::new(),
        runs: Vec::new(),
    };
    let samples = settings.samples.max(1);
    let sample_time = settings.time_per_cell.as_secs_f64() / samples as f64;
    let total_steps = workloads.len() * settings.batches.len();
    let run_start = Instant::now();
    let mut step = 0;

    for (index, w) in workloads.iter().enumerate() {
        progress(Progress::Preparing {
            index,
            total: workloads.len(),
            workload: &w.name,
        });
        let mut prepared: Vec<Prepared> = Vec::new();
        for &mode in &settings.modes {
            let reference = prepare(EngineKind::Interpreter, w, mode, settings.budget)
                .ok()
                .map(|p| p.with_unit_state(settings.unit_state));
            for &engine in &settings.engines {
                let (result, p) = prepare_cell(w, engine, mode, settings, reference.as_ref());
                report.compiles.push(result);
                if let Some(p) = p {
                    prepared.push(p);
                }
            }
        }

        let mut info = WorkloadInfo {
            name: w.name.clone(),
            kind: w.kind(),
            words: w.words,
            instructions_per_vertex: None,
            emitted_per_invocation: None,
        };
        if let Some(p) = prepared
            .iter()
            .find(|p| p.engine == EngineKind::Interpreter)
        {
            let mut r = BatchRunner::new(p, w, 256);
            if let Ok(stats) = r.run() {
                info.instructions_per_vertex = Some(stats.instructions as f64 / 256.0);
                if w.kind() == ShaderKind::Geometry {
                    info.emitted_per_invocation = Some(stats.emitted as f64 / 256.0);
                }
            }
        }
        report.workloads.push(info);

        for &batch in &settings.batches {
            let elapsed = run_start.elapsed().as_secs_f64();
            let eta = if step == 0 {
                total_steps as f64 * prepared.len() as f64 * settings.time_per_cell.as_secs_f64()
            } else {
                elapsed / step as f64 * (total_steps - step) as f64
            };
            progress(Progress::Sampling {
                step,
                total: total_steps,
                workload: &w.name,
                batch,
                eta_seconds: eta,
            });
            step += 1;
            let mut cells: Vec<Cell<'_>> = prepared
                .iter()
                .map(|p| {
                    let start = p.lane_stats();
                    let mut cell = calibrate(BatchRunner::new(p, w, batch), sample_time);
                    cell.lanes_at_start = start;
                    cell
                })
                .collect();
            for _ in 0..samples {
                for cell in cells.iter_mut().filter(|c| c.error.is_none()) {
                    match cell.sample(settings.clock) {
                        Ok(ns) => cell.samples.push(ns),
                        Err(e) => cell.error = Some(e),
                    }
                }
            }
            for (p, mut cell) in prepared.iter().zip(cells) {
                let (lo, hi) = cell
                    .samples
                    .iter()
                    .fold((f64::INFINITY, 0.0f64), |(lo, hi), &s| {
                        (lo.min(s), hi.max(s))
                    });
                report.runs.push(RunResult {
                    workload: w.name.clone(),
                    engine: p.engine,
                    mode: p.mode,
                    batch,
                    ns_per_vertex: median(&mut cell.samples),
                    ns_range: if cell.samples.is_empty() {
                        (0.0, 0.0)
                    } else {
                        (lo, hi)
                    },
                    deopt_fraction: if cell.vertices > 0 {
                        cell.deopts as f64 / cell.vertices as f64
                    } else {
                        0.0
                    },
                    lanes: cell
                        .lanes_at_start
                        .zip(p.lane_stats())
                        .map(|(a, b)| LaneStats {
                            groups: b.groups - a.groups,
                            reruns: (b.fallbacks - a.fallbacks) + (b.skipped - a.skipped),
                            splits: b.splits - a.splits,
                        }),
                    error: cell.error,
                });
            }
        }
    }
    report.load.1 = load_average();
    report
}

/// Compile (repeatedly, for a stable median) and check one engine; returns the runnable
/// preparation when there is one.
fn prepare_cell(
    w: &Workload,
    engine: EngineKind,
    mode: FloatMode,
    settings: &Settings,
    reference: Option<&Prepared>,
) -> (CompileResult, Option<Prepared>) {
    let mut result = CompileResult {
        workload: w.name.clone(),
        engine,
        mode,
        micros: None,
        code_bytes: None,
        lane_micros: None,
        lane_code_bytes: None,
        error: None,
        mismatch: None,
    };
    let mut times = Vec::new();
    let mut lane_times = Vec::new();
    let mut last = None;
    let deadline = Instant::now() + Duration::from_millis(500);
    for n in 0..settings.compile_samples.max(1) {
        match prepare(engine, w, mode, settings.budget) {
            Ok(p) => {
                times.push(p.compile_time.as_secs_f64() * 1e6);
                result.code_bytes = p.code_size;
                if let Some((t, bytes)) = p.lanes_code {
                    lane_times.push(t.as_secs_f64() * 1e6);
                    result.lane_code_bytes = Some(bytes);
                }
                last = Some(p);
            }
            Err(e) => {
                result.error = Some(e);
                return (result, None);
            }
        }
        // A slow compiler gets fewer samples rather than a slow benchmark.
        if n >= 2 && Instant::now() > deadline {
            break;
        }
    }
    result.micros = Some(median(&mut times));
    if !lane_times.is_empty() {
        result.lane_micros = Some(median(&mut lane_times));
    }
    let p = last
        .filter(|p| p.runnable())
        .map(|p| p.with_unit_state(settings.unit_state));
    if let (Some(p), Some(r)) = (&p, reference) {
        if engine != EngineKind::Interpreter {
            if let Err(e) = compare(r, p, w, CHECK_VERTICES) {
                result.mismatch = Some(e);
            }
        }
    }
    (result, p)
}

/// Warm a cell up and pick how many batches one sample runs, so that a sample takes about
/// `sample_time` seconds.
fn calibrate(runner: BatchRunner<'_>, sample_time: f64) -> Cell<'_> {
    let mut cell = Cell {
        runner,
        lanes_at_start: None,
        iterations: 1,
        samples: Vec::new(),
        deopts: 0,
        vertices: 0,
        error: None,
    };
    let start = Instant::now();
    let mut runs = 0u64;
    // Warm-up doubles as calibration: at least one run, then until half a sample has passed.
    loop {
        if let Err(e) = cell.runner.run() {
            cell.error = Some(e);
            return cell;
        }
        runs += 1;
        if start.elapsed().as_secs_f64() >= sample_time / 2.0 || runs >= 1 << 20 {
            break;
        }
    }
    let per_run = start.elapsed().as_secs_f64() / runs as f64;
    cell.iterations = ((sample_time / per_run.max(1e-9)) as u64).max(1);
    cell
}
