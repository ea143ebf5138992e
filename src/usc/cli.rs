//! `picajit … --isa usc`: the PowerVR USC (seed 004) commands. `cli::main` hands the
//! arguments here when they name `--isa usc`.
//!
//! ```text
//! picajit run --isa usc PROG.usc [--engine jit|interp|x64|a64] [--instances N]
//!             [--set REG=V[,V...]]... [--budget N] [--json]
//! picajit asm --isa usc PROG.usc [-o OUT]      canonical text
//! picajit disasm --isa usc PROG.usc [--jit x64|a64] [-o OUT]
//!                                              canonical text, or the JIT's host code
//! picajit info --isa usc PROG.usc
//! picajit bench --isa usc [PROG.usc...] [--instances N] [--json]
//! ```

use crate::cli::shared::outln;
use crate::cli::shared::{self, AsmArgs, BudgetArg, EngineArg, Isa, JitArg};
use crate::interp::usc::program::{Bank, Program, Reg};
use crate::interp::usc::table::Unit;
use crate::interp::usc::{Prepared, State, Status, UscOptions, MAX_INSTANCES};
use crate::jit::usc::{a64, x64};
use crate::jit::Backend;
use crate::usc::engine::Shader;
use crate::usc::{parse, print, register};
use crate::Engine;
use clap::Subcommand;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The example programs, built into the tool for `bench --isa usc`.
pub const EXAMPLES: [(&str, &str); 3] = [
    (
        "vertex_transform",
        include_str!("../../examples/usc/vertex_transform.usc"),
    ),
    ("lighting", include_str!("../../examples/usc/lighting.usc")),
    (
        "divergent_loop",
        include_str!("../../examples/usc/divergent_loop.usc"),
    ),
];

#[derive(Subcommand)]
enum UscCommand {
    /// Run a program on 1-16 instances and print the registers it wrote or that were set.
    Run(RunArgs),
    /// Parse a program and print it in canonical form (to OUT with -o).
    Asm(AsmArgs),
    /// Parse a program and print it in canonical form, or with --jit the host code the JIT
    /// generates for it.
    Disasm {
        input: PathBuf,
        #[command(flatten)]
        jit: JitArg,
        #[command(flatten)]
        readings: Readings,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Describe a program: groups, units, registers, whether it runs.
    Info { input: PathBuf },
    /// Measure the examples (or the given programs) on every USC engine.
    Bench(BenchArgs),
}

#[derive(clap::Args)]
struct Readings {
    /// FMAD rounding: fused (one rounding) or unfused (docs/usc.md, ambiguity 4).
    #[arg(long, default_value = "fused", value_parser = ["fused", "unfused"])]
    fmad: String,
    /// CNDLT as its comments describe it or as its pseudo-code is written (ambiguity 25).
    #[arg(long, default_value = "comments", value_parser = ["comments", "literal"])]
    cndlt: String,
}

impl Readings {
    fn options(&self) -> UscOptions {
        UscOptions::default()
            .with_fused_fmad(self.fmad == "fused")
            .with_cndlt_literal(self.cndlt == "literal")
    }
}

#[derive(clap::Args)]
struct RunArgs {
    input: PathBuf,
    #[command(flatten)]
    engine: EngineArg,
    /// Number of instances, 1-16.
    #[arg(long, default_value_t = 16)]
    instances: usize,
    /// REG=V[,V...]: r<n>, vi<n>, i<n>, idx<n> take one value or one per instance; sh<n>,
    /// cf<n> one value; p0 0/1 per instance. Values: decimal or 0x hex words, or a float
    /// literal (with '.' or a trailing 'f') for its binary32 bits.
    #[arg(long = "set", value_name = "REG=V[,V...]")]
    set: Vec<String>,
    #[command(flatten)]
    budget: BudgetArg,
    /// One JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    readings: Readings,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Programs (default: the built-in examples).
    inputs: Vec<PathBuf>,
    #[arg(long, default_value_t = 16)]
    instances: usize,
    /// Measuring time per cell in milliseconds.
    #[arg(long, default_value_t = 200)]
    time_ms: u64,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    readings: Readings,
}

/// Parses a value: a 32-bit word in decimal (negative: two's complement) or 0x hex, or a
/// float literal containing '.' or ending in 'f' for its binary32 bits.
pub fn parse_value(t: &str) -> Result<u32, String> {
    let t = t.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u32::from_str_radix(h, 16).map_err(|_| format!("bad hex word '{t}'"));
    }
    match t {
        "inf" | "+inf" => return Ok(f32::INFINITY.to_bits()),
        "-inf" => return Ok(f32::NEG_INFINITY.to_bits()),
        "nan" => return Ok(0x7FC0_0000),
        _ => {}
    }
    if t.contains('.') || t.ends_with('f') {
        let body = t.strip_suffix('f').unwrap_or(t);
        return body
            .parse::<f32>()
            .map(f32::to_bits)
            .map_err(|_| format!("bad float literal '{t}'"));
    }
    if let Ok(v) = t.parse::<u32>() {
        return Ok(v);
    }
    t.parse::<i32>().map(|v| v as u32).map_err(|_| {
        format!("bad value '{t}' (a decimal or 0x hex word, or a float with '.' or 'f')")
    })
}

/// Applies `--set` assignments to a state.
fn apply_sets(st: &mut State, sets: &[String]) -> Result<(), String> {
    let n = st.instances();
    for s in sets {
        let (name, vals) = s
            .split_once('=')
            .ok_or_else(|| format!("--set {s}: expected REG=VALUE[,VALUE...]"))?;
        let vals: Vec<u32> = vals.split(',').map(parse_value).collect::<Result<_, _>>()?;
        let per_instance = |what: &str| -> Result<(), String> {
            if vals.len() != 1 && vals.len() != n {
                return Err(format!(
                    "--set {name}: {what} takes one value or one per instance ({n}), got {}",
                    vals.len()
                ));
            }
            Ok(())
        };
        if name == "p0" {
            per_instance("p0")?;
            for l in 0..n {
                let v = vals[if vals.len() == 1 { 0 } else { l }];
                if v > 1 {
                    return Err(format!("--set p0: values are 0 or 1, got {v}"));
                }
                st.set_p0(l, v == 1);
            }
            continue;
        }
        let reg = register(name).ok_or_else(|| {
            format!("--set {name}: not a register (r0-r247, vi0-vi247, i0-i7, idx0-idx1, sh0-sh4095, cf0-cf255, p0)")
        })?;
        match reg.bank {
            Bank::C => return Err(format!("--set {name}: special constants are read-only")),
            Bank::Sh | Bank::Cf => {
                if vals.len() != 1 {
                    return Err(format!(
                        "--set {name}: shared registers take one value, got {}",
                        vals.len()
                    ));
                }
                st.set(reg, 0, vals[0]);
            }
            _ => {
                per_instance(name)?;
                for l in 0..n {
                    st.set(reg, l, vals[if vals.len() == 1 { 0 } else { l }]);
                }
            }
        }
    }
    Ok(())
}

fn load(path: &Path) -> Result<(String, Program), String> {
    // The parser checks the same limit; the file is refused before it is read.
    let limit = crate::usc::parse::MAX_SOURCE_BYTES;
    let text = shared::read_text(path, limit, "any USC source")?;
    let program = parse(&text).map_err(|e| format!("{}:{e}", path.display()))?;
    Ok((text, program))
}

fn prepare(path: &Path, program: &Program, opts: UscOptions) -> Result<Prepared, String> {
    Prepared::new(program, opts).map_err(|e| format!("{}:{e}", path.display()))
}

fn run(args: RunArgs) -> Result<(), String> {
    if !(1..=MAX_INSTANCES).contains(&args.instances) {
        return Err(format!(
            "--instances {}: 1 to {MAX_INSTANCES}",
            args.instances
        ));
    }
    let (_, program) = load(&args.input)?;
    let prepared = prepare(&args.input, &program, args.readings.options())?;
    let shader = Shader::new(prepared, args.engine.engine)
        .map_err(|e| format!("--engine {}: {e}", args.engine.engine))?;
    let engine = shader.engine();
    let mut st = State::new(args.instances).map_err(|e| e.to_string())?;
    apply_sets(&mut st, &args.set)?;
    let out = shader
        .run(&mut st, args.budget.get())
        .map_err(|e| format!("{}:{e}", args.input.display()))?;
    let n = st.instances();
    let regs: Vec<Reg> = st.touched().collect();
    if args.json {
        let mut s = format!(
            "{{\"isa\":\"usc\",\"engine\":\"{engine}\",\"instances\":{n},\"status\":\"{}\",\"steps\":{},\"regs\":{{",
            out.status.name(),
            out.steps
        );
        for r in &regs {
            let vals: Vec<String> = (0..n).map(|l| st.get(*r, l).to_string()).collect();
            s.push_str(&format!("\"{r}\":[{}],", vals.join(",")));
        }
        let p0: Vec<&str> = (0..n).map(|l| if st.p0[l] { "1" } else { "0" }).collect();
        s.push_str(&format!("\"p0\":[{}]}}}}", p0.join(",")));
        outln!("{s}");
        return Ok(());
    }
    outln!(
        "{} instances, {} ({} groups executed) on {engine}",
        n,
        match out.status {
            Status::Done => "done",
            Status::Budget => "stopped by the budget",
        },
        out.steps
    );
    for r in &regs {
        let vals: Vec<String> = (0..n).map(|l| format!("{:08x}", st.get(*r, l))).collect();
        outln!("{:<6} {}", r.to_string(), vals.join(" "));
    }
    let p0: Vec<&str> = (0..n).map(|l| if st.p0[l] { "1" } else { "0" }).collect();
    outln!("{:<6} {}", "p0", p0.join(" "));
    Ok(())
}

fn info(input: &Path) -> Result<(), String> {
    let (_, program) = load(input)?;
    let instrs: usize = program.groups.iter().map(|g| g.instrs.len()).sum();
    outln!(
        "{}: USC program, {} groups, {} instructions",
        input.display(),
        program.groups.len(),
        instrs
    );
    let mut kinds = std::collections::BTreeMap::new();
    let mut read = std::collections::BTreeSet::new();
    let mut written = std::collections::BTreeSet::new();
    for g in &program.groups {
        let kind = match g.instrs.iter().find_map(|i| i.info).map(|i| i.unit) {
            None => "outside the scope",
            Some(u) if u.is_bitwise() => "bitwise ALU",
            Some(Unit::Cond) => "conditional",
            Some(Unit::Branch) => "flow control",
            Some(_) => "main ALU",
        };
        *kinds.entry(kind).or_insert(0usize) += 1;
        for ins in &g.instrs {
            let Some(info) = ins.info else { continue };
            for (k, o) in ins.operands.iter().enumerate() {
                if let crate::interp::usc::program::Operand::Reg(r, _) = o {
                    let is_dst = k == 0
                        && matches!(
                            info.unit,
                            Unit::Write | Unit::Complex | Unit::MovUnit | Unit::Branch
                        )
                        || (k == 1
                            && info.unit == Unit::Cond
                            && !matches!(info.name, "cndend" | "cndsetl" | "cndlpc"))
                        || (k == 0 && matches!(info.name, "cndend" | "cndsetl" | "cndlpc"));
                    if is_dst {
                        written.insert(*r);
                    } else {
                        read.insert(*r);
                    }
                }
            }
        }
    }
    for (k, n) in kinds {
        outln!("  {n} {k} group(s)");
    }
    let list = |s: &std::collections::BTreeSet<Reg>| {
        s.iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    outln!("  reads:  {}", list(&read));
    outln!("  writes: {}", list(&written));
    match Prepared::new(&program, UscOptions::default()) {
        Ok(p) => {
            let (_, len, _, native) = x64::generate(&p).map_err(|e| e.to_string())?;
            outln!(
                "  runs on: interp, x64 ({native} of {} groups compiled to AVX2 code, the others call the interpreter's step; {len} bytes){}",
                p.groups.len(),
                if x64::available() { "" } else { " (this host lacks AVX2/FMA)" }
            );
            let (_, len, _, native) = a64::generate(&p).map_err(|e| e.to_string())?;
            outln!(
                "  a64: {native} of {} groups compiled to NEON code, the others run the interpreter's step between calls; {len} bytes{}",
                p.groups.len(),
                if a64::available() { "" } else { " (this build runs no AArch64 code: a64-emu feature off)" }
            );
        }
        Err(e) => outln!("  does not run: {e}"),
    }
    Ok(())
}

/// `disasm --jit`: the host code of `program` on `backend`, with how much of it runs natively.
fn host_code(
    path: &Path,
    program: &Program,
    opts: UscOptions,
    backend: Backend,
) -> Result<String, String> {
    let p = prepare(path, program, opts)?;
    let (code, len, _, native) = match backend {
        Backend::X64 => x64::generate(&p),
        Backend::A64 => a64::generate(&p),
    }
    .map_err(|e| e.to_string())?;
    Ok(format!(
        "; {backend}, {len} bytes, {native} of {} groups compiled (the others call the interpreter's step)\n{}",
        p.groups.len(),
        shared::host_code(backend, &code, len)
    ))
}

/// Inputs the benchmark gives each example (per instance l of n).
fn workload(name: &str, st: &mut State) {
    let n = st.instances();
    let set = |st: &mut State, r: &str, l: usize, v: u32| st.set(register(r).unwrap(), l, v);
    let mut seed = 0x2545_F491_u32;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    match name {
        "vertex_transform" => {
            // A perspective projection (fovy 90 degrees, near 1, far 100).
            let m = [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0202, -2.0202, 0.0, 0.0, -1.0,
                0.0f32,
            ];
            for (k, v) in m.iter().enumerate() {
                set(st, &format!("sh{k}"), 0, v.to_bits());
            }
            for l in 0..n {
                set(st, "vi0", l, (rnd() * 2.0 - 1.0).to_bits());
                set(st, "vi1", l, (rnd() * 2.0 - 1.0).to_bits());
                set(st, "vi2", l, (-2.0 - rnd() * 10.0f32).to_bits());
                set(st, "vi3", l, 1.0f32.to_bits());
            }
        }
        "lighting" => {
            let s = 1.0 / 3f32.sqrt();
            let h = [0.0f32, 0.6, 0.8];
            for (k, v) in [
                s, s, s, h[0], h[1], h[2], 1.0, 0.9, 0.8, 32.0, 0.1, 0.1, 0.1,
            ]
            .iter()
            .enumerate()
            {
                set(st, &format!("sh{k}"), 0, v.to_bits());
            }
            for l in 0..n {
                for c in 0..3 {
                    set(st, &format!("vi{c}"), l, (rnd() * 2.0 - 1.0).to_bits());
                }
            }
        }
        "divergent_loop" => {
            for l in 0..n {
                set(st, "vi0", l, 1 + (rnd() * 60.0) as u32);
            }
        }
        _ => {
            for l in 0..n {
                for k in 0..8 {
                    set(st, &format!("vi{k}"), l, rnd().to_bits());
                }
            }
        }
    }
}

fn bench(args: BenchArgs) -> Result<(), String> {
    if !(1..=MAX_INSTANCES).contains(&args.instances) {
        return Err(format!(
            "--instances {}: 1 to {MAX_INSTANCES}",
            args.instances
        ));
    }
    let mut programs: Vec<(String, Program)> = Vec::new();
    if args.inputs.is_empty() {
        for (name, text) in EXAMPLES {
            programs.push((
                name.to_string(),
                parse(text).map_err(|e| format!("{name}:{e}"))?,
            ));
        }
    } else {
        for p in &args.inputs {
            programs.push((p.display().to_string(), load(p)?.1));
        }
    }
    let opts = args.readings.options();
    // (program, engine, groups executed, median ns per run, speed-up over the interpreter)
    let mut rows: Vec<(String, Engine, u64, f64, f64)> = Vec::new();
    for (name, program) in &programs {
        let prepared = Prepared::new(program, opts).map_err(|e| format!("{name}:{e}"))?;
        // The interpreter and the host's JIT, where the host runs it: AArch64 code is timed
        // natively, never under the emulator.
        let jit = Shader::new(prepared.clone(), Engine::Jit).map_err(|e| e.to_string())?;
        let mut engines = vec![Shader::new(prepared, Engine::Interp).map_err(|e| e.to_string())?];
        if jit.engine() != Engine::Interp {
            engines.push(jit);
        }
        let mut base = State::new(args.instances).map_err(|e| e.to_string())?;
        workload(name, &mut base);
        // Every engine must agree with the interpreter before anything is timed.
        let mut reference = base.clone();
        let out = engines[0]
            .run(&mut reference, 1 << 24)
            .map_err(|e| e.to_string())?;
        for e in &engines[1..] {
            let mut st = base.clone();
            let o = e.run(&mut st, 1 << 24).map_err(|e| e.to_string())?;
            if o != out || st != reference {
                return Err(format!(
                    "{name}: the {} JIT disagrees with the interpreter",
                    e.engine()
                ));
            }
        }
        // Cells sampled in turn, so that load on the machine hits both alike.
        let deadline = std::time::Duration::from_millis(args.time_ms);
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
        let start = Instant::now();
        while start.elapsed() < deadline * engines.len() as u32 || samples[0].len() < 5 {
            for (k, e) in engines.iter().enumerate() {
                let mut st = base.clone();
                let t = Instant::now();
                e.run(&mut st, 1 << 24).map_err(|e| e.to_string())?;
                samples[k].push(t.elapsed().as_nanos() as f64);
                std::hint::black_box(&st);
            }
        }
        let medians: Vec<f64> = samples
            .iter_mut()
            .map(|s| {
                s.sort_by(f64::total_cmp);
                s[s.len() / 2]
            })
            .collect();
        for (k, e) in engines.iter().enumerate() {
            rows.push((
                name.clone(),
                e.engine(),
                out.steps,
                medians[k],
                medians[0] / medians[k],
            ));
        }
    }
    if args.json {
        let items: Vec<String> = rows
            .iter()
            .map(|(n, e, steps, ns, speedup)| {
                format!(
                    "{{\"program\":\"{n}\",\"engine\":\"{e}\",\"instances\":{},\"steps\":{steps},\"ns_per_run\":{ns:.0},\"ns_per_instance\":{:.1},\"speedup\":{speedup:.2}}}",
                    args.instances,
                    ns / args.instances as f64
                )
            })
            .collect();
        outln!("[{}]", items.join(","));
        return Ok(());
    }
    outln!(
        "USC, {} instances per run (the host's JIT; AArch64 code is timed only on AArch64 hosts)",
        args.instances
    );
    outln!(
        "{:<20} {:>8} {:>8} {:>14} {:>16} {:>9}",
        "program",
        "engine",
        "groups",
        "ns per run",
        "ns per instance",
        "speed-up"
    );
    for (n, e, steps, ns, speedup) in rows {
        outln!(
            "{:<20} {:>8} {:>8} {:>14.0} {:>16.1} {:>8.1}x",
            n,
            e,
            steps,
            ns,
            ns / args.instances as f64,
            speedup
        );
    }
    Ok(())
}

/// Runs a USC command; `args` are the tool's arguments without `--isa usc`.
pub fn main(args: Vec<OsString>, isas: &[Isa]) -> Result<(), String> {
    let about = "PowerVR USC (seed 004) programs: picajit COMMAND --isa usc ...";
    match shared::parse_command(args, isas, about) {
        UscCommand::Run(a) => run(a),
        UscCommand::Asm(AsmArgs { input, output }) => {
            let (_, p) = load(&input)?;
            crate::cli::shared::write_out(output.as_deref(), &print::program(&p))
        }
        UscCommand::Disasm {
            input,
            jit,
            readings,
            output,
        } => {
            let (_, p) = load(&input)?;
            let text = match jit.backend() {
                None => print::program(&p),
                Some(backend) => host_code(&input, &p, readings.options(), backend)?,
            };
            shared::write_out(output.as_deref(), &text)
        }
        UscCommand::Info { input } => info(&input),
        UscCommand::Bench(a) => bench(a),
    }
}
