//! `picajit bench`: throughput, compile time and code size of shaders on every engine, as a
//! table, JSON, a Markdown summary or an SVG bar chart.

use super::values::{self, Assignment};
use crate::cli::shared::{out, outln};
use crate::interp::pica::exec::DEFAULT_BUDGET;
use crate::interp::pica::float::{FloatMode, Rounding};
use crate::interp::pica::program::ShaderKind;
use crate::pica::bench::{
    self, mode_label, parse_mode, EngineKind, Progress, Report, RunResult, Settings, Workload,
};
use crate::Engine;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest batch accepted: 4 MiB of inputs per cell already.
const MAX_BATCH: usize = 1 << 14;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Shader sources or SHBIN files (every DVLE is measured). Default: the bundled examples.
    shaders: Vec<PathBuf>,
    /// Engines, comma separated: interp, x64, a64 (a64x8: the AArch64 JIT with eight lanes
    /// per multi-vertex body run). A JIT for another architecture is measured for compile
    /// time and code size only.
    #[arg(long, value_delimiter = ',', default_value = "interp,x64,a64")]
    engine: Vec<String>,
    /// Lanes per run of the AArch64 JIT's multi-vertex body, comma separated: 4 (the
    /// default), 8, or both (each a64 engine becomes one per count: `a64` and `a64x8`).
    #[arg(long, value_delimiter = ',', default_value = "4")]
    neon_lanes: Vec<u32>,
    /// Float modes, comma separated: f24-rtz, f24-rne, f32 (f24 means f24-rtz).
    #[arg(
        long = "float",
        value_delimiter = ',',
        default_value = "f24-rtz,f24-rne,f32"
    )]
    float: Vec<String>,
    /// Batch sizes (vertices per call, input points for geometry shaders), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,64,4096")]
    batch: Vec<usize>,
    /// Measuring time per shader, engine, mode and batch size, in milliseconds.
    #[arg(long, default_value_t = 200)]
    time_ms: u64,
    /// Samples per measurement; the median is reported. Short samples taken in turn keep
    /// the cells of one shader close in time, so load affects them alike.
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// Compilations per shader, engine and mode; the median is reported.
    #[arg(long, default_value_t = 21)]
    compile_samples: usize,
    /// Set an input (same in every vertex) or uniform in every shader: v0=1,2,3,4  c5=0.5
    /// i0=3,0,1,0  b2=true  NAME=...
    #[arg(long = "set", value_name = "REG=VALUES")]
    set: Vec<String>,
    /// Instruction budget per invocation; 0 means the default (2^20), as in the C ABI.
    #[arg(long, default_value_t = DEFAULT_BUDGET)]
    budget: u64,
    /// Print JSON instead of the table.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print a Markdown summary (largest batch, per shader) instead of the table.
    #[arg(long)]
    markdown: bool,
    /// Also draw ns per vertex per engine and shader as an SVG bar chart.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// No progress on standard error.
    #[arg(long, short)]
    quiet: bool,
    /// Vertex batches with unit state in and out, as an emulator's persistent unit runs them:
    /// every vertex starts from a given (non-clean) state, the last one's is handed back.
    #[arg(long)]
    unit_state: bool,
    /// Also measure vertex batches of 65,536 vertices split across 1..=N threads
    /// (`Shader::set_threads`) on the host's JIT in the headline float mode, and print the
    /// scaling. 0 means the host's core count.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// What sample times are read from: `wall` (elapsed time) or `cpu` (the measuring
    /// thread's CPU time, Linux: comparable on a machine shared with other work, since time
    /// spent preempted is left out). Thread scaling is always measured on wall time.
    #[arg(long, default_value = "wall")]
    clock: String,
    /// Also compile N distinct programs (variants of the shaders' descriptor tables), twice
    /// over, through one code cache of `--cache-budget` bytes on the host's JIT, as an
    /// emulator loading many games' shaders does, and report the cache's hit rate and the
    /// cost of its evictions.
    #[arg(long, value_name = "N")]
    cache_churn: Option<usize>,
    /// The code cache's budget for `--cache-churn`, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 20)]
    cache_budget: usize,
}

fn settings(args: &BenchArgs) -> Result<Settings, String> {
    let mut neon = Vec::new();
    for &l in &args.neon_lanes {
        neon.push(match l {
            4 => EngineKind::A64,
            8 => EngineKind::A64Eight,
            _ => return Err(format!("--neon-lanes {l}: 4 or 8")),
        });
    }
    let mut engines = Vec::new();
    for e in &args.engine {
        let engine = EngineKind::parse(e.trim())
            .ok_or_else(|| format!("unknown engine '{e}' (interp, x64, a64, a64x8)"))?;
        let each = if engine == EngineKind::A64 {
            neon.clone()
        } else {
            vec![engine]
        };
        for engine in each {
            if !engines.contains(&engine) {
                engines.push(engine);
            }
        }
    }
    let mut modes = Vec::new();
    for m in &args.float {
        let mode = parse_mode(m.trim())
            .ok_or_else(|| format!("unknown float mode '{m}' (f24-rtz, f24-rne, f32)"))?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    let mut batches = Vec::new();
    for &b in &args.batch {
        if b == 0 || b > MAX_BATCH {
            return Err(format!("batch size {b} out of range (1-{MAX_BATCH})"));
        }
        if !batches.contains(&b) {
            batches.push(b);
        }
    }
    if engines.is_empty() || modes.is_empty() || batches.is_empty() {
        return Err("nothing to measure: no engine, float mode or batch size".into());
    }
    let clock = bench::Clock::parse(args.clock.trim())
        .ok_or_else(|| format!("unknown clock '{}' (wall, cpu)", args.clock))?;
    if !clock.available() {
        return Err(format!(
            "the {} clock cannot be read on this host",
            clock.name()
        ));
    }
    if args.samples == 0 || args.compile_samples == 0 {
        return Err("--samples and --compile-samples must be at least 1".into());
    }
    Ok(Settings {
        engines,
        modes,
        batches,
        time_per_cell: Duration::from_millis(args.time_ms),
        samples: args.samples,
        compile_samples: args.compile_samples,
        budget: crate::budget_or_default(args.budget),
        unit_state: args.unit_state,
        clock,
    })
}

fn workloads(args: &BenchArgs) -> Result<Vec<Workload>, String> {
    let mut all = if args.shaders.is_empty() {
        Workload::examples()?
    } else {
        let mut all = Vec::new();
        for path in &args.shaders {
            let shbin = super::load_shbin(path)?;
            all.extend(Workload::from_shbin(&path.display().to_string(), &shbin)?);
        }
        all
    };
    for w in &mut all {
        for s in &args.set {
            // Parsed as f32: the workload converts values per measured float mode.
            let assignment = values::parse(s, FloatMode::F32, Some(&w.dvle))
                .map_err(|e| format!("{}: {e}", w.name))?;
            match assignment {
                Assignment::Input(i, v) => w.set_input(i, v),
                Assignment::Float(i, v) => w.set_float(i, v),
                Assignment::Int(i, v) => w.set_int(i, v),
                Assignment::Bool(i, v) => w.set_bool(i, v),
            }
        }
    }
    Ok(all)
}

/// Progress on standard error: one rewritten line on a terminal, one line per step otherwise.
struct ProgressLine {
    enabled: bool,
    terminal: bool,
    dirty: bool,
}

impl ProgressLine {
    fn show(&mut self, p: Progress<'_>) {
        if !self.enabled {
            return;
        }
        let text = match p {
            Progress::Preparing {
                index,
                total,
                workload,
            } => format!(
                "[shader {}/{total}] {workload}: compiling and checking",
                index + 1
            ),
            Progress::Sampling {
                step,
                total,
                workload,
                batch,
                eta_seconds,
            } => format!(
                "[{:>3}%] {workload}, batch {batch}: sampling (about {:.0} s left)",
                step * 100 / total.max(1),
                eta_seconds.ceil()
            ),
        };
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{text}");
            self.dirty = true;
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    fn finish(&mut self) {
        if self.dirty {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

pub fn bench(args: BenchArgs) -> Result<(), String> {
    let settings = settings(&args)?;
    let workloads = workloads(&args)?;
    if let Some(plot) = &args.plot {
        // Fail before measuring, not after.
        check_writable(plot)?;
    }
    let mut line = ProgressLine {
        enabled: !args.quiet,
        terminal: std::io::stderr().is_terminal(),
        dirty: false,
    };
    let report = bench::measure(&workloads, &settings, &mut |p| line.show(p));
    line.finish();

    let scaling = match args.threads {
        Some(n) => {
            let n = if n == 0 {
                std::thread::available_parallelism().map_or(1, |c| c.get())
            } else {
                n
            };
            let (mode, _) = headline(&report);
            if !args.quiet {
                eprintln!("thread scaling: {SCALING_BATCH} vertices on 1..={n} threads");
            }
            thread_scaling(&workloads, mode, n, &settings)?
        }
        None => Vec::new(),
    };
    let churn = match args.cache_churn {
        Some(n) => Some(cache_churn(&workloads, n, args.cache_budget)?),
        None => None,
    };
    if args.json {
        let mut v = to_json(&report);
        if args.threads.is_some() {
            v["thread_scaling"] = scaling_json(&scaling);
        }
        if let Some(c) = &churn {
            v["cache_churn"] = c.json();
        }
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        if args.markdown {
            out!("{}", markdown(&report));
        } else {
            out!("{}", table(&report));
        }
        if args.threads.is_some() {
            out!("\n{}", scaling_markdown(&scaling));
        }
        if let Some(c) = &churn {
            out!("\n{}", c.text());
        }
    }
    if let Some(path) = &args.plot {
        let svg = plot(&report)?;
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        if !args.quiet {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

fn check_writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("{}: is a directory", path.display()));
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The mode and batch size the summary and the chart show: f24-rtz (the hardware-exact
/// default the targets are stated for) when measured, and the largest batch.
/// What `--cache-churn` measured.
struct Churn {
    programs: usize,
    stats: crate::jit::CacheStats,
    compile: Duration,
}

impl Churn {
    fn text(&self) -> String {
        let s = &self.stats;
        let lookups = s.hits + s.misses;
        // Measuring runs on every compilation, evictions or not: per eviction only when
        // there were any.
        let upkeep = s.eviction_time.as_secs_f64() * 1e6;
        let evictions = match s.evictions {
            0 => format!("0 evictions (upkeep {upkeep:.0} us in all)"),
            e => format!(
                "{e} evictions ({:.2} us each, measuring and dropping)",
                upkeep / e as f64
            ),
        };
        format!(
            "Code cache: {} distinct programs twice over, budget {} bytes: {} lookups, hit rate \
             {:.1} %, {evictions}, {:.1} us per compilation, {} entries and {} bytes held at \
             the end\n",
            self.programs,
            s.budget,
            lookups,
            100.0 * s.hits as f64 / lookups.max(1) as f64,
            self.compile.as_secs_f64() * 1e6 / s.misses.max(1) as f64,
            s.entries,
            s.bytes,
        )
    }

    fn json(&self) -> Value {
        let s = &self.stats;
        json!({
            "programs": self.programs,
            "budget": s.budget,
            "hits": s.hits,
            "misses": s.misses,
            "evictions": s.evictions,
            "eviction_ns": s.eviction_time.as_nanos() as u64,
            "compile_ns": self.compile.as_nanos() as u64,
            "entries": s.entries,
            "bytes": s.bytes,
        })
    }
}

/// Compile `n` distinct programs twice over through one cache of `budget` bytes: the second
/// pass hits what the budget kept. Program `i` is shader `i % len` with every descriptor's
/// source swizzles changed by `i / len`, so each is a different key that compiles like a
/// real shader.
fn cache_churn(workloads: &[Workload], n: usize, budget: usize) -> Result<Churn, String> {
    use crate::interp::pica::program::Program;
    use crate::jit::{Backend, CodeCache, HostFeatures};
    let backend = Backend::host().ok_or("--cache-churn: this host has no JIT")?;
    if workloads.is_empty() {
        return Err("--cache-churn: no shaders".into());
    }
    let variant = |i: usize| {
        let w = &workloads[i % workloads.len()];
        let k = (i / workloads.len()) as u64;
        let mut descs = w.program.opdescs().to_vec();
        descs.resize(descs.len().max(1), 0);
        for d in &mut descs {
            // Bits 5-12 and 14-21: the first and second source's swizzles.
            *d ^= ((k & 0xFF) << 5) | (((k >> 8) & 0xFF) << 14);
        }
        Program::new(
            w.program.code().to_vec(),
            descs,
            u32::from(w.program.entry()),
            w.program.kind(),
        )
        .map_err(|e| e.to_string())
    };
    let programs = (0..n).map(variant).collect::<Result<Vec<_>, _>>()?;
    let cache = CodeCache::with_budget(budget);
    let features = HostFeatures::detect();
    let mode = FloatMode::F24(Rounding::TowardZero);
    let mut compile = Duration::ZERO;
    for _ in 0..2 {
        for p in &programs {
            let misses = cache.stats().misses;
            let start = std::time::Instant::now();
            // A program the JIT does not take is cached as such: that is a lookup too.
            let _ = cache.get_or_compile(p, mode, backend, features);
            if cache.stats().misses > misses {
                compile += start.elapsed();
            }
        }
    }
    Ok(Churn {
        programs: n,
        stats: cache.stats(),
        compile,
    })
}

/// Vertices per batch in the thread-scaling measurement.
const SCALING_BATCH: usize = 65_536;

/// One shader's thread scaling: median ns per vertex at 1, 2, ... threads.
struct Scaling {
    shader: String,
    ns: Vec<f64>,
}

/// Batches of [`SCALING_BATCH`] vertices of every vertex shader through the engine API
/// (host JIT, f32 attributes converted as an emulator's are), on 1..=`max` threads; the
/// thread counts are sampled in turn, round after round, so load hits them alike.
fn thread_scaling(
    workloads: &[Workload],
    mode: FloatMode,
    max: usize,
    settings: &Settings,
) -> Result<Vec<Scaling>, String> {
    use crate::pica::engine::{EngineConfig, Invocation, Shader};
    let mut all = Vec::new();
    for w in workloads.iter().filter(|w| w.kind() == ShaderKind::Vertex) {
        let config = EngineConfig::default()
            .with_engine(Engine::Jit)
            .with_float_mode(mode)
            .with_budget(settings.budget);
        let mut shader = Shader::new(w.program.clone(), &config).map_err(|e| e.to_string())?;
        let uniforms = w.uniforms(mode);
        let inputs = w.inputs(FloatMode::F32, SCALING_BATCH);
        let mut outputs = vec![[[0.0f32; 4]; 16]; SCALING_BATCH];
        let mask = shader.output_mask();
        let mut samples = vec![Vec::new(); max];
        // One untimed batch per count first: threads, code and caches warm.
        for round in 0..=settings.samples.max(3) {
            for t in 1..=max {
                shader.set_threads(t);
                let start = std::time::Instant::now();
                shader
                    .invoke(Invocation::batch(&uniforms, &inputs, &mut outputs).mask(mask))
                    .map_err(|e| format!("{}: {e}", w.name))?;
                if round > 0 {
                    samples[t - 1].push(start.elapsed().as_secs_f64() * 1e9 / SCALING_BATCH as f64);
                }
            }
        }
        let ns = samples
            .into_iter()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
            .collect();
        all.push(Scaling {
            shader: w.name.clone(),
            ns,
        });
    }
    Ok(all)
}

fn scaling_markdown(scaling: &[Scaling]) -> String {
    let max = scaling.iter().map(|s| s.ns.len()).max().unwrap_or(0);
    let mut out = format!(
        "Thread scaling: batches of {SCALING_BATCH} vertices, ns per vertex (speed-up over \
         one thread)\n\n| shader |"
    );
    for t in 1..=max {
        out.push_str(&format!(" {t} thread{} |", if t == 1 { "" } else { "s" }));
    }
    out.push_str(&format!("\n|{}\n", "---|".repeat(max + 1)));
    for s in scaling {
        out.push_str(&format!("| `{}` |", s.shader));
        for (k, ns) in s.ns.iter().enumerate() {
            if k == 0 {
                out.push_str(&format!(" {ns:.2} |"));
            } else {
                out.push_str(&format!(" {ns:.2} ({:.2}x) |", s.ns[0] / ns));
            }
        }
        out.push('\n');
    }
    out
}

fn scaling_json(scaling: &[Scaling]) -> Value {
    Value::Array(
        scaling
            .iter()
            .map(|s| {
                json!({
                    "shader": s.shader,
                    "batch": SCALING_BATCH,
                    "ns_per_vertex": s.ns,
                    "speedup": s.ns.iter().map(|n| s.ns[0] / n).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

fn headline(report: &Report) -> (FloatMode, usize) {
    let rtz = FloatMode::F24(Rounding::TowardZero);
    let s = &report.settings;
    let mode = if s.modes.contains(&rtz) {
        rtz
    } else {
        s.modes[0]
    };
    let batch = s.batches.iter().copied().max().unwrap_or(1);
    (mode, batch)
}

fn si(v: f64) -> String {
    match v {
        v if v >= 1e9 => format!("{:.2}G", v / 1e9),
        v if v >= 1e6 => format!("{:.2}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

fn opt(v: Option<f64>, digits: usize, suffix: &str) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}{suffix}"))
}

/// How the header names the clock (nothing for the default, wall-clock time).
fn clock_note(clock: bench::Clock) -> &'static str {
    match clock {
        bench::Clock::Wall => "",
        bench::Clock::ThreadCpu => "; times are the thread's CPU time",
    }
}

fn header(report: &Report) -> String {
    let s = &report.settings;
    let load = |l: Option<f64>| opt(l, 2, "");
    format!(
        "picajit bench on {} ({} CPUs); load average {} -> {}; {} samples in {} ms per cell{}\n",
        report.cpu,
        report.cpus,
        load(report.load.0),
        load(report.load.1),
        s.samples,
        s.time_per_cell.as_millis(),
        clock_note(s.clock)
    )
}

fn notes(
    report: &Report,
    r: Option<&RunResult>,
    workload: &str,
    engine: EngineKind,
    mode: FloatMode,
) -> String {
    let mut notes = Vec::new();
    if let Some(c) = report.compile(workload, engine, mode) {
        if let Some(e) = &c.error {
            notes.push(format!("unavailable: {e}"));
        }
        if let Some(m) = &c.mismatch {
            notes.push(format!("MISMATCH with interp: {m}"));
        }
    }
    if let Some(r) = r {
        if let Some(e) = &r.error {
            notes.push(format!("failed: {e}"));
        }
        if r.deopt_fraction > 0.0 {
            notes.push(format!(
                "{:.0}% of invocations deopted",
                r.deopt_fraction * 100.0
            ));
        }
        if let Some(l) = r.lanes {
            let all = l.groups + l.reruns;
            if all > 0 && (l.splits > 0 || l.reruns > 0) {
                notes.push(format!(
                    "8-lane groups: {:.1} divergent branches per group, {:.0}% rerun per vertex",
                    l.splits as f64 / l.groups.max(1) as f64,
                    100.0 * l.reruns as f64 / all as f64
                ));
            }
        }
    }
    notes.join("; ")
}

/// The full table: one row per shader, engine, mode and batch size.
fn table(report: &Report) -> String {
    let mut out = header(report);
    out.push_str(&format!(
        "\n{:<22} {:<20} {:<8} {:>5} {:>10} {:>11} {:>9} {:>7} {:>10} {:>10}  notes\n",
        "shader",
        "engine",
        "float",
        "batch",
        "ns/vertex",
        "vertices/s",
        "vs interp",
        "vs f32",
        "compile us",
        "code bytes"
    ));
    for w in &report.workloads {
        for &mode in &report.settings.modes {
            for &engine in &report.settings.engines {
                let compile = report.compile(&w.name, engine, mode);
                let compile_us = opt(compile.and_then(|c| c.micros), 1, "");
                let code = compile
                    .and_then(|c| c.code_bytes)
                    .map_or_else(|| "-".to_string(), |b| b.to_string());
                let runs: Vec<&RunResult> = report
                    .runs
                    .iter()
                    .filter(|r| r.workload == w.name && r.engine == engine && r.mode == mode)
                    .collect();
                if runs.is_empty() {
                    if compile.is_some_and(|c| c.error.is_some()) && engine.is_a64() {
                        // A backend that does not exist yet is one line at the end, not
                        // a row per shader.
                        continue;
                    }
                    out.push_str(&format!(
                        "{:<22} {:<20} {:<8} {:>5} {:>10} {:>11} {:>9} {:>7} {:>10} {:>10}  {}\n",
                        w.name,
                        engine.label(),
                        mode_label(mode),
                        "-",
                        "-",
                        "-",
                        "-",
                        "-",
                        compile_us,
                        code,
                        notes(report, None, &w.name, engine, mode)
                    ));
                }
                for r in runs {
                    let ok = r.error.is_none();
                    out.push_str(&format!(
                        "{:<22} {:<20} {:<8} {:>5} {:>10} {:>11} {:>9} {:>7} {:>10} {:>10}  {}\n",
                        w.name,
                        engine.label(),
                        mode_label(mode),
                        r.batch,
                        if ok {
                            format!("{:.1}", r.ns_per_vertex)
                        } else {
                            "-".into()
                        },
                        if ok {
                            si(r.vertices_per_second())
                        } else {
                            "-".into()
                        },
                        opt(report.speedup(r), 2, "x"),
                        opt(report.vs_f32(r), 2, "x"),
                        compile_us,
                        code,
                        notes(report, Some(r), &w.name, engine, mode)
                    ));
                }
            }
        }
    }
    out.push('\n');
    for w in &report.workloads {
        let kind = match w.kind {
            ShaderKind::Vertex => "vertex shader".to_string(),
            ShaderKind::Geometry => format!(
                "geometry shader, 'vertex' = one invocation (input point or primitive), {} \
                 vertices emitted per invocation",
                opt(w.emitted_per_invocation, 1, "")
            ),
        };
        let mut lanes = String::new();
        for c in report.compiles.iter().filter(|c| c.workload == w.name) {
            if let (Some(bytes), Some(us)) = (c.lane_code_bytes, c.lane_micros) {
                if c.mode == report.settings.modes[0] {
                    lanes.push_str(&format!(
                        "; {} 8-lane code ({}): {bytes} bytes in {us:.0} us",
                        c.engine.label(),
                        mode_label(c.mode)
                    ));
                }
            }
        }
        out.push_str(&format!(
            "{}: {kind}, {} words, {} instructions per vertex{lanes}\n",
            w.name,
            w.words,
            opt(w.instructions_per_vertex, 1, "")
        ));
    }
    for &engine in &report.settings.engines {
        let errors: Vec<&str> = report
            .compiles
            .iter()
            .filter(|c| c.engine == engine)
            .filter_map(|c| c.error.as_deref())
            .collect();
        if engine.is_a64()
            && !errors.is_empty()
            && errors.len()
                == report
                    .compiles
                    .iter()
                    .filter(|c| c.engine == engine)
                    .count()
        {
            out.push_str(&format!("{}: {}\n", engine.label(), errors[0]));
        }
    }
    out.push_str(
        "vs interp: interpreter time / this time (same shader, mode, batch); vs f32: this time / \
         f32 time (same engine, batch); compile us: JIT compile, or interpreter pre-decode\n",
    );
    out
}

/// A Markdown summary at the headline mode and batch: one row per shader, with each JIT's
/// time, speed-up at every batch size, f24 cost over f32, compile time and code size.
fn markdown(report: &Report) -> String {
    let (mode, batch) = headline(report);
    let s = &report.settings;
    let jits: Vec<EngineKind> = s
        .engines
        .iter()
        .copied()
        .filter(|&e| e != EngineKind::Interpreter && e.runs_here())
        .filter(|&e| {
            report
                .runs
                .iter()
                .any(|r| r.engine == e && r.error.is_none())
        })
        .collect();
    // JITs for another architecture: their compile time and code sizes, per-vertex and 8-lane.
    let codegen: Vec<EngineKind> = s
        .engines
        .iter()
        .copied()
        .filter(|&e| e != EngineKind::Interpreter && !e.runs_here())
        .collect();
    let load = |l: Option<f64>| opt(l, 2, "");
    let mut out = format!(
        "{} ({} CPUs, load average {} -> {}); {} mode, batch {batch}; ns per vertex \
         (geometry shaders: per input point){}\n\n",
        report.cpu,
        report.cpus,
        load(report.load.0),
        load(report.load.1),
        mode_label(mode),
        clock_note(report.settings.clock)
    );
    let mut head = vec![
        "shader".to_string(),
        "instr./vertex".into(),
        "interp ns/instr".into(),
        "interp ns".into(),
    ];
    let small = s.batches.iter().copied().min().filter(|&b| b != batch);
    for e in &jits {
        if let Some(b) = small {
            head.push(format!("{e} ns (batch {b})"));
        }
        head.push(format!("{e} ns (batch {batch})"));
        head.push(format!("{e} ns/instr"));
        for b in &s.batches {
            head.push(format!("{e} speed-up (batch {b})"));
        }
        if s.modes.contains(&FloatMode::F32) && mode != FloatMode::F32 {
            head.push(format!("{e} f32 ns"));
        }
        head.push(format!("{e} compile us"));
        head.push(format!("{e} code bytes"));
        head.push(format!("{e} 8-lane compile us"));
        head.push(format!("{e} 8-lane code bytes"));
    }
    for e in &codegen {
        head.push(format!("{e} compile us (codegen only)"));
        head.push(format!("{e} code bytes"));
        head.push(format!("{e} 8-lane compile us"));
        head.push(format!("{e} 8-lane code bytes"));
    }
    head.push("peer JIT ns (one vertex per call, reference)".into());
    if let Some(&e) = jits.first() {
        if let Some(b) = small {
            head.push(format!("{e} batch {b} / peer (time; goal <= 0.8)"));
        }
        head.push(format!("peer / {e} batch {batch} (speed; goal >= 8)"));
    }
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
    for w in &report.workloads {
        let ns = |e, m, b| report.run(&w.name, e, m, b).map(|r| r.ns_per_vertex);
        // Compile time and code size, per-vertex and 8-lane.
        let code_cells = |e| {
            let c = report.compile(&w.name, e, mode);
            let bytes = |b: Option<usize>| b.map_or_else(|| "-".into(), |b| b.to_string());
            [
                opt(c.and_then(|c| c.micros), 0, ""),
                bytes(c.and_then(|c| c.code_bytes)),
                opt(c.and_then(|c| c.lane_micros), 0, ""),
                bytes(c.and_then(|c| c.lane_code_bytes)),
            ]
        };
        let mut row = vec![
            format!("`{}`", w.name),
            opt(w.instructions_per_vertex, 0, ""),
            opt(
                ns(EngineKind::Interpreter, mode, batch)
                    .zip(w.instructions_per_vertex)
                    .map(|(t, n)| t / n),
                1,
                "",
            ),
            opt(ns(EngineKind::Interpreter, mode, batch), 0, ""),
        ];
        for &e in &jits {
            if let Some(b) = small {
                row.push(opt(ns(e, mode, b), 1, ""));
            }
            row.push(opt(ns(e, mode, batch), 1, ""));
            row.push(opt(
                ns(e, mode, batch)
                    .zip(w.instructions_per_vertex)
                    .map(|(t, n)| t / n),
                2,
                "",
            ));
            for &b in &s.batches {
                row.push(opt(
                    report
                        .run(&w.name, e, mode, b)
                        .and_then(|r| report.speedup(r)),
                    1,
                    "x",
                ));
            }
            if s.modes.contains(&FloatMode::F32) && mode != FloatMode::F32 {
                row.push(opt(ns(e, FloatMode::F32, batch), 1, ""));
            }
            row.extend(code_cells(e));
        }
        for &e in &codegen {
            row.extend(code_cells(e));
        }
        let peer = peer_reference(&w.name);
        row.push(peer.map_or_else(|| "-".into(), |(lo, hi)| peer_text(lo, hi)));
        if let Some(&e) = jits.first() {
            // A range is compared at its middle.
            let mid = peer.map(|(lo, hi)| (lo + hi) / 2.0);
            if let Some(b) = small {
                row.push(opt(ns(e, mode, b).zip(mid).map(|(t, p)| t / p), 2, ""));
            }
            row.push(opt(ns(e, mode, batch).zip(mid).map(|(t, p)| p / t), 1, "x"));
        }
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out.push_str(PEER_NOTE);
    out
}

/// Azahar's x86-64 shader JIT, one vertex per call, f24, ns per vertex, as measured side by
/// side with picajit on an AMD EPYC with 2 vCPUs, shown beside ours as a reference: Azahar is
/// GPL and not built here, so these are quoted, not measured by this tool.
fn peer_reference(shader: &str) -> Option<(f64, f64)> {
    match shader {
        "mvp.v.pica" => Some((19.0, 20.0)),
        "lights8.v.pica" => Some((466.0, 466.0)),
        _ => None,
    }
}

/// A quoted peer figure: one number, or a range.
fn peer_text(lo: f64, hi: f64) -> String {
    if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo}-{hi}")
    }
}

const PEER_NOTE: &str = "\nReference column: Azahar's shader JIT with one vertex per call, ns per \
     vertex, measured side by side on an AMD EPYC with 2 vCPUs and quoted here (not measured by \
     this tool; mvp and lights8 only). Azahar has no batch path, so both ratio columns divide \
     by the same figure (a range at its middle): our batch-1 time over it (the goal is at most \
     0.8), and it over our time at the large batch (the goal is at least 8).\n";

fn to_json(report: &Report) -> Value {
    let s = &report.settings;
    let runs: Vec<Value> = report
        .runs
        .iter()
        .map(|r| {
            let c = report.compile(&r.workload, r.engine, r.mode);
            let ok = r.error.is_none();
            let per_instr = report
                .workloads
                .iter()
                .find(|w| w.name == r.workload)
                .and_then(|w| w.instructions_per_vertex)
                .filter(|&n| ok && n > 0.0)
                .map(|n| r.ns_per_vertex / n);
            json!({
                "shader": r.workload,
                "engine": r.engine.name(),
                "float": mode_label(r.mode),
                "batch": r.batch,
                "ns_per_vertex": ok.then_some(r.ns_per_vertex),
                "ns_per_vertex_min": ok.then_some(r.ns_range.0),
                "ns_per_vertex_max": ok.then_some(r.ns_range.1),
                // Per PICA instruction executed, for geometry shaders per input point's
                // instructions: the unit the interpreter and JIT targets are stated in.
                "ns_per_instruction": per_instr,
                "vertices_per_second": ok.then(|| r.vertices_per_second()),
                "speedup_vs_interp": report.speedup(r),
                "time_vs_f32": report.vs_f32(r),
                "deopt_fraction": r.deopt_fraction,
                // The 8-lane path's counters during this cell (null without that path).
                "lane_groups": r.lanes.map(|l| l.groups),
                "lane_reruns": r.lanes.map(|l| l.reruns),
                "lane_splits": r.lanes.map(|l| l.splits),
                "compile_us": c.and_then(|c| c.micros),
                "code_bytes": c.and_then(|c| c.code_bytes),
                "error": r.error,
            })
        })
        .collect();
    let compiles: Vec<Value> = report
        .compiles
        .iter()
        .map(|c| {
            json!({
                "shader": c.workload,
                "engine": c.engine.name(),
                "codegen_only": !c.engine.runs_here(),
                "float": mode_label(c.mode),
                "compile_us": c.micros,
                "code_bytes": c.code_bytes,
                // The multi-vertex (8-lane) code, generated at the first batch of eight or
                // more (null where there is none).
                "lane_compile_us": c.lane_micros,
                "lane_code_bytes": c.lane_code_bytes,
                "error": c.error,
                "mismatch": c.mismatch,
            })
        })
        .collect();
    let shaders: Vec<Value> = report
        .workloads
        .iter()
        .map(|w| {
            json!({
                "name": w.name,
                "kind": w.kind.to_string(),
                "words": w.words,
                "instructions_per_vertex": w.instructions_per_vertex,
                "emitted_per_invocation": w.emitted_per_invocation,
            })
        })
        .collect();
    json!({
        "cpu": report.cpu,
        "cpus": report.cpus,
        "load_average": { "before": report.load.0, "after": report.load.1 },
        "settings": {
            "engines": s.engines.iter().map(|e| e.name()).collect::<Vec<_>>(),
            "float": s.modes.iter().map(|&m| mode_label(m)).collect::<Vec<_>>(),
            "batches": s.batches,
            "time_per_cell_ms": s.time_per_cell.as_millis() as u64,
            "samples": s.samples,
            "compile_samples": s.compile_samples,
            "budget": s.budget,
            "clock": s.clock.name(),
        },
        "shaders": shaders,
        "compile": compiles,
        "results": runs,
    })
}

/// Horizontal bars, one per shader and engine, on a log axis: interpreter and JIT differ by
/// more than an order of magnitude, so a linear axis would flatten the JIT bars to nothing.
fn plot(report: &Report) -> Result<String, String> {
    use plotters::prelude::*;

    let (mode, batch) = headline(report);
    let engines: Vec<EngineKind> = report
        .settings
        .engines
        .iter()
        .copied()
        .filter(|&e| ran(report, e, mode, batch))
        .collect();
    let mut bars: Vec<(String, usize, f64)> = Vec::new();
    for w in &report.workloads {
        for (k, &e) in engines.iter().enumerate() {
            if let Some(r) = report.run(&w.name, e, mode, batch) {
                bars.push((format!("{} {}", w.name, e.name()), k, r.ns_per_vertex));
            }
        }
    }
    if bars.is_empty() {
        return Err("nothing to plot: no engine ran at the plotted mode and batch size".into());
    }
    let lo = bars
        .iter()
        .map(|b| b.2)
        .fold(f64::INFINITY, f64::min)
        .max(1e-3);
    let hi = bars.iter().map(|b| b.2).fold(0.0, f64::max).max(lo * 10.0);
    // From a power of ten below the shortest bar, with room right of the longest bar for
    // its value label.
    let (x0, x1) = (10f64.powf(lo.log10().floor()), hi * 2.0);

    // Bars fill segments bottom-up in reverse table order, so the table's first row is on
    // top; the segments above them stay empty for the legend.
    let count = bars.len() as i32;
    let slots = count + engines.len() as i32;
    let height = (110 + 22 * slots) as u32;
    let mut svg = String::new();
    {
        let err = |e: &dyn std::fmt::Display| format!("drawing the chart: {e}");
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let caption = format!(
            "ns per vertex, {} mode, batch {batch} (log scale; shorter is faster) - {}",
            mode_label(mode),
            report.cpu
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 16))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(36)
            .y_label_area_size(230)
            .build_cartesian_2d((x0..x1).log_scale(), (0..slots).into_segmented())
            .map_err(|e| err(&e))?;
        let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        let name_of = |y: i32| -> String {
            usize::try_from(count - 1 - y)
                .ok()
                .and_then(|i| names.get(i).cloned())
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(slots as usize + 1)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(y) | SegmentValue::Exact(y) => name_of(*y),
                SegmentValue::Last => String::new(),
            })
            .x_label_formatter(&|v| {
                if *v >= 1.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v}")
                }
            })
            .x_desc("ns per vertex")
            .draw()
            .map_err(|e| err(&e))?;
        let palette = [
            RGBColor(0x88, 0x88, 0x88),
            RGBColor(0x1f, 0x77, 0xb4),
            RGBColor(0xd6, 0x27, 0x28),
        ];
        let y_of = |i: usize| count - 1 - i as i32;
        for (k, &engine) in engines.iter().enumerate() {
            let colour = palette[k % palette.len()];
            let series = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.1 == k)
                .map(|(i, b)| {
                    let y = y_of(i);
                    let mut r = Rectangle::new(
                        [
                            (x0, SegmentValue::Exact(y)),
                            (b.2, SegmentValue::Exact(y + 1)),
                        ],
                        colour.filled(),
                    );
                    r.set_margin(3, 3, 0, 0);
                    r
                });
            chart
                .draw_series(series)
                .map_err(|e| err(&e))?
                .label(engine.label())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        let value_style = TextStyle::from(("sans-serif", 11).into_font()).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            ),
        );
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let text = if b.2 >= 100.0 {
                    format!("{:.0}", b.2)
                } else {
                    format!("{:.1}", b.2)
                };
                Text::new(
                    text,
                    (b.2 * 1.05, SegmentValue::CenterOf(y_of(i))),
                    value_style.clone(),
                )
            }))
            .map_err(|e| err(&e))?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

fn ran(report: &Report, engine: EngineKind, mode: FloatMode, batch: usize) -> bool {
    report
        .runs
        .iter()
        .any(|r| r.engine == engine && r.mode == mode && r.batch == batch && r.error.is_none())
}
