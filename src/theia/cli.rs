//! `picajit … --isa theia`: the THEIA subcommands (asm, disasm, run, info, bench).
//!
//! The shared entry point strips `--isa theia` and hands the remaining arguments here; this
//! module has its own argument parser because THEIA's options (profiles, integer registers,
//! `.mem` files) have nothing in common with PICA200's.

use crate::cli::shared::outln;
use crate::cli::shared::{self, BudgetArg, EngineArg, Isa, JitArg};
use crate::interp::theia::exec::{self, Code, RecordIo, State, Status};
use crate::interp::theia::table::{self, RtlSupport};
use crate::interp::theia::{regs, Profile, Word};
use crate::theia::engine::Shader;
use crate::theia::{asm, disassemble, MemImage};
use crate::{Engine, DEFAULT_BUDGET};
use clap::Subcommand;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Subcommand)]
enum Cmd {
    /// Assemble a THEIA source (the original assembler's syntax) into a .mem file.
    Asm {
        input: PathBuf,
        /// Output .mem path (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Disassemble a .mem file (or a source) to source that re-assembles to the same words,
    /// or with --jit show the host code the JIT generates for it.
    Disasm(DisasmArgs),
    /// Run a program from an instruction index until RETURN, the budget or a stall.
    Run(RunArgs),
    /// Without a file: the operation table. With one: its entry points and operations.
    Info {
        input: Option<PathBuf>,
        #[arg(long, default_value = "rtl", value_parser = ["rtl", "manual"])]
        profile: String,
    },
    /// Measure the engines on the examples (or given programs).
    Bench(BenchArgs),
    /// Render a scene of the original project (Params/Vertex/Textures/Instructions.mem) as
    /// the whole GPU does: control unit, host broadcast, swap memory, output memory.
    Render(RenderArgs),
}

#[derive(clap::Args)]
struct DisasmArgs {
    /// A .mem file, or with --jit also a .theia source.
    input: PathBuf,
    #[command(flatten)]
    jit: JitArg,
    /// With --jit: the profile the code is generated for.
    #[arg(long, default_value = "rtl", value_parser = ["rtl", "manual"])]
    profile: String,
    /// With --jit: the entry point the code is compiled for (as `run --entry`).
    #[arg(long, default_value = "0")]
    entry: String,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
struct RenderArgs {
    /// Scene directory (Params.mem, Vertex.mem, Textures.mem, Instructions.mem).
    scene: PathBuf,
    /// User shader sources (.theia/.shdr, concatenated and assembled) replacing the scene's
    /// Instructions.mem.
    #[arg(long = "shader", value_name = "FILE.theia")]
    shader: Vec<PathBuf>,
    #[command(flatten)]
    engine: EngineArg,
    /// GPU cores (the RTL's MAX_CORES): how many initial/final position pairs the host takes
    /// from Params.mem and how the image is split (default: the pairs up to the one ending
    /// at the last row).
    #[arg(long)]
    cores: Option<usize>,
    /// Host threads over the GPU cores (default: all host CPUs).
    #[arg(long)]
    threads: Option<usize>,
    /// A checkout of the original project, for the ROM's default code (default:
    /// PICAJIT_THEIA_DIR, else the checkout the scene directory lies in).
    #[arg(long)]
    rtl: Option<PathBuf>,
    /// Compare with this PPM and print the differing-pixel count and largest difference.
    #[arg(long)]
    compare: Option<PathBuf>,
    /// The ROM's default code as the checkout has it (032c448), or as the older reference
    /// images need it (early-2010: no colour for a missed pixel, the commented-out texel
    /// pairing, the test bench's texture read of that time; see the README).
    #[arg(long, default_value = "032c448", value_parser = ["032c448", "early-2010"])]
    rom_reading: String,
    /// Output PPM.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(clap::Args)]
struct RunArgs {
    /// A .theia source or a .mem file.
    input: PathBuf,
    #[command(flatten)]
    engine: EngineArg,
    /// Profile: rtl (the RTL's behaviour) or manual (the programming manual's).
    #[arg(long, default_value = "rtl", value_parser = ["rtl", "manual"])]
    profile: String,
    /// Set a register before the run: REG=X,Y,Z with REG a decimal address or a name as the
    /// RTL's definitions spell it, X,Y,Z signed 32-bit integers (decimal or 0x hex).
    #[arg(long = "set", value_name = "REG=X,Y,Z")]
    set: Vec<String>,
    /// First instruction: an index of the source's instructions (0 is the first), or a label
    /// or entry-point name of a source file.
    #[arg(long, default_value = "0")]
    entry: String,
    #[command(flatten)]
    budget: BudgetArg,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Programs (.theia or .mem) with their entry index; default: the built-in examples.
    programs: Vec<PathBuf>,
    /// Milliseconds per program (split over the rounds and engines).
    #[arg(long, default_value_t = 600)]
    time_ms: u64,
    /// Measuring rounds; each engine reports its median.
    #[arg(long, default_value_t = 10)]
    rounds: u32,
    #[arg(long, default_value = "rtl", value_parser = ["rtl", "manual"])]
    profile: String,
    /// Also time whole frames of these scene directories (as `render`, rtl profile):
    /// interpreter and the host's JIT on 1..N host threads, images compared first.
    #[arg(long = "scene", value_name = "DIR")]
    scenes: Vec<PathBuf>,
    /// Frames per scene, engine and thread count; the median is reported.
    #[arg(long, default_value_t = 1)]
    frames: u32,
    /// Most host threads for `--scene` (each count from 1 is timed; at most the scene's
    /// GPU cores; default: the host's CPUs).
    #[arg(long)]
    threads: Option<usize>,
}

/// Runs a THEIA subcommand; `args` is the command line without `--isa theia`.
pub fn main(args: Vec<OsString>, isas: &[Isa]) -> Result<(), String> {
    match shared::parse_command(args, isas, "THEIA tools (--isa theia)") {
        Cmd::Asm { input, output } => {
            let p = assemble_file(&input)?;
            crate::cli::shared::write_out(output.as_deref(), &p.to_mem())
        }
        Cmd::Disasm(a) => disasm(a),
        Cmd::Run(a) => run(a),
        Cmd::Info { input, profile } => info(input.as_deref(), profile_of(&profile)),
        Cmd::Bench(a) => bench(a),
        Cmd::Render(a) => render(a),
    }
}

/// The original project's checkout that holds the ROM: `--rtl`, PICAJIT_THEIA_DIR, or an
/// ancestor of the scene directory with `rtl/Module_ROM.v`; None when there is none (then only
/// programs whose entry points all lie in the instruction memory render).
fn rtl_checkout(rtl: Option<&Path>, scene: &Path) -> Option<PathBuf> {
    if let Some(p) = rtl {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("PICAJIT_THEIA_DIR") {
        return Some(PathBuf::from(p));
    }
    let scene = scene.canonicalize().ok()?;
    scene
        .ancestors()
        .find(|d| d.join("rtl/Module_ROM.v").is_file())
        .map(Path::to_path_buf)
}

fn render(a: RenderArgs) -> Result<(), String> {
    use crate::theia::render::{self, Image, Scene};
    let reading = render::RomReading::from_name(&a.rom_reading).expect("clap checked");
    let rom = match rtl_checkout(a.rtl.as_deref(), &a.scene) {
        Some(dir) => reading
            .apply(&crate::theia::rom::load(&dir)?.words)
            .map_err(|e| e.to_string())?,
        None if reading != render::RomReading::AsCommitted => {
            return Err(format!(
                "--rom-reading {} needs the ROM: a checkout of the original project (--rtl DIR or PICAJIT_THEIA_DIR)",
                a.rom_reading
            ))
        }
        None => {
            eprintln!("note: no checkout of the original project (--rtl DIR or PICAJIT_THEIA_DIR): the ROM's default code is absent, so every entry point must lie in the instruction memory");
            Vec::new()
        }
    };
    let imem = if a.shader.is_empty() {
        None
    } else {
        let mut src = String::new();
        for p in &a.shader {
            src.push_str(&read_text(p)?);
            src.push('\n');
        }
        let p = asm::assemble(&src).map_err(|e| format!("--shader: {e}"))?;
        Some(p.imem())
    };
    let mut scene = Scene::load(&a.scene, imem).map_err(|e| e.to_string())?;
    scene.core_count = a.cores;
    scene.texture_bus = reading.texture_bus();
    let engine = a.engine.engine;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let t = Instant::now();
    let (img, stats) = render::render(&scene, &rom, engine, threads).map_err(|e| e.to_string())?;
    // The engine that rendered: the host's JIT for `jit`, the interpreter on a host without.
    let engine = engine
        .backend()
        .map_or(crate::Engine::Interp, crate::Engine::from);
    let secs = t.elapsed().as_secs_f64();
    std::fs::write(&a.output, img.to_ppm()).map_err(|e| format!("{}: {e}", a.output.display()))?;
    println!(
        "rendered {}x{} on {engine} ({} GPU cores, {threads} threads): {:.3} s per frame, {} pixels, {} hits, {} runs, {} steps",
        img.width,
        img.height,
        scene.cores(),
        secs,
        stats.pixels,
        stats.hits,
        stats.runs,
        stats.steps
    );
    if let Some(r) = &a.compare {
        let reference =
            Image::from_ppm(&read_text(r)?).map_err(|e| format!("{}: {e}", r.display()))?;
        match img.compare(&reference) {
            Some((px, max)) => println!(
                "compared with {}: {px} differing pixels, largest channel difference {max}",
                r.display()
            ),
            None => println!(
                "compared with {}: sizes differ ({}x{} vs {}x{})",
                r.display(),
                img.width,
                img.height,
                reference.width,
                reference.height
            ),
        }
    }
    Ok(())
}

fn profile_of(name: &str) -> Profile {
    Profile::from_name(name).unwrap_or_default()
}

/// Reads a source or `.mem` file, refusing one over the assembler's and `.mem` reader's limit
/// before reading it.
fn read_text(path: &Path) -> Result<String, String> {
    let limit = asm::MAX_SOURCE_BYTES.max(crate::theia::mem::MAX_TEXT_BYTES);
    shared::read_text(path, limit, "any THEIA source or .mem file")
}

fn assemble_file(path: &Path) -> Result<asm::Program, String> {
    asm::assemble(&read_text(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_mem(path: &Path) -> Result<MemImage, String> {
    MemImage::parse(&read_text(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

fn is_mem(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mem"))
}

/// A loaded program: the instruction-memory image and, for sources, the assembled form.
struct Loaded {
    imem: Vec<u64>,
    source: Option<asm::Program>,
}

fn load_program(path: &Path) -> Result<Loaded, String> {
    if is_mem(path) {
        Ok(Loaded {
            imem: load_mem(path)?.words,
            source: None,
        })
    } else {
        let p = assemble_file(path)?;
        Ok(Loaded {
            imem: p.imem(),
            source: Some(p),
        })
    }
}

fn code_len(l: &Loaded) -> usize {
    l.imem.len() - asm::TABLE_LEN
}

/// `--entry`: an instruction index, or a label / entry-point name of a source.
fn entry_address(l: &Loaded, entry: &str) -> Result<u16, String> {
    let idx = if let Some(i) = parse_int(entry).filter(|&i| i >= 0) {
        i as usize
    } else if let Some(p) = &l.source {
        if let Some((_, i)) = p.labels.iter().find(|(n, _)| n == entry) {
            *i
        } else if let Some(k) = table::ENTRY_POINTS.iter().position(|(n, _)| *n == entry) {
            let v = p.entries[k];
            if v & 0x8000 == 0 {
                return Err(format!(
                    "{entry} is not defined in this file (its ROM routine is not loaded)"
                ));
            }
            (v as usize & 0x7FFF) - asm::TABLE_LEN
        } else {
            return Err(format!(
                "--entry {entry}: not an index, label or entry point"
            ));
        }
    } else {
        return Err(format!(
            "--entry {entry}: a .mem file takes an instruction index"
        ));
    };
    if idx >= code_len(l) {
        return Err(format!(
            "--entry {idx}: the program has {} instructions",
            code_len(l)
        ));
    }
    Ok(asm::imem_address(idx))
}

/// A signed 32-bit integer in decimal or `0x` hex (hex may give any bit pattern).
fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) if !h.is_empty() && h.len() <= 15 => i64::from_str_radix(h, 16).ok()?,
        Some(_) => return None,
        None if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) => {
            body.parse().ok()?
        }
        None => return None,
    };
    Some(if neg { -v } else { v })
}

fn component(s: &str) -> Result<u32, String> {
    let v = parse_int(s.trim()).ok_or_else(|| format!("'{s}' is not an integer"))?;
    if !(i32::MIN as i64..=u32::MAX as i64).contains(&v) {
        return Err(format!("'{s}' does not fit 32 bits"));
    }
    Ok(v as u32)
}

fn register_address(s: &str) -> Result<u16, String> {
    if let Some(a) = regs::by_name(s) {
        return Ok(a);
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u16>()
            .map_err(|_| format!("register address {s} does not fit 16 bits"));
    }
    Err(format!(
        "unknown register '{s}' (a decimal address or a name such as R1)"
    ))
}

fn apply_set(profile: Profile, state: &mut State, spec: &str) -> Result<(), String> {
    let (reg, vals) = spec
        .split_once('=')
        .ok_or_else(|| format!("--set {spec}: expected REG=X,Y,Z"))?;
    let addr = register_address(reg.trim())?;
    let row = profile.row(addr).ok_or_else(|| {
        format!(
            "--set {spec}: the {} profile has registers 0-{}",
            profile.name(),
            profile.register_count() - 1
        )
    })?;
    let parts: Vec<&str> = vals.split(',').collect();
    if parts.len() != 3 {
        return Err(format!("--set {spec}: give three values X,Y,Z"));
    }
    let mut v = [0u32; 3];
    for (k, p) in parts.iter().enumerate() {
        v[k] = component(p).map_err(|e| format!("--set {spec}: {e}"))?;
    }
    state.regs[row] = v;
    Ok(())
}

fn real(v: u32) -> f64 {
    v as i32 as f64 / 131072.0
}

fn run(a: RunArgs) -> Result<(), String> {
    let profile = profile_of(&a.profile);
    let l = load_program(&a.input)?;
    let entry = entry_address(&l, &a.entry)?;
    let mut state = State::new(profile);
    for s in &a.set {
        apply_set(profile, &mut state, s)?;
    }
    let mut io = RecordIo::default();
    let shader = Shader::new(
        Code::imem(l.imem.clone()),
        profile,
        &[entry],
        a.engine.engine,
    )
    .map_err(|e| format!("--engine {}: {e}", a.engine.engine))?;
    let engine = shader.engine();
    let budget = a.budget.get();
    let out = shader
        .run(&mut state, &mut io, entry, budget)
        .map_err(|e| format!("{}: {e}", a.input.display()))?;
    let (status, ret) = match out.status {
        Status::Returned(r) => ("returned", Some(r)),
        Status::Budget { .. } => ("budget", None),
        Status::Stalled { .. } => ("stalled", None),
    };
    if a.json {
        let mut s = String::new();
        write!(
            s,
            "{{\"isa\":\"theia\",\"engine\":\"{engine}\",\"profile\":\"{}\",\"status\":\"{status}\",\"return_value\":{},\"steps\":{},\"regs\":{{",
            profile.name(),
            ret.map_or("null".to_string(), |r| r.to_string()),
            out.steps
        )
        .unwrap();
        for (i, r) in state.regs.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            write!(
                s,
                "\"{i}\":[{},{},{}]",
                r[0] as i32, r[1] as i32, r[2] as i32
            )
            .unwrap();
        }
        s.push_str("}}");
        outln!("{s}");
        return Ok(());
    }
    let detail = match out.status {
        Status::Returned(r) => format!("returned {}", if r { "RT_TRUE" } else { "RT_FALSE" }),
        Status::Budget { pc } => format!("budget of {budget} steps ran out before {pc:#06x}"),
        Status::Stalled { pc, op } => format!(
            "stalled at {pc:#06x}: {} never completes in the {} profile",
            table::by_code(op).map_or("?", |o| o.name),
            profile.name()
        ),
    };
    outln!(
        "engine {engine}, profile {}: {detail} after {} steps",
        profile.name(),
        out.steps
    );
    for (addr, data) in &io.omem_writes {
        outln!(
            "OMWRITE address ({}, {}, {}) data ({}, {}, {})",
            addr[0] as i32,
            addr[1] as i32,
            addr[2] as i32,
            data[0] as i32,
            data[1] as i32,
            data[2] as i32
        );
    }
    outln!(
        "{:>4}  {:<30} {:>12} {:>12} {:>12}   {:>14} {:>14} {:>14}",
        "reg",
        "name",
        "x",
        "y",
        "z",
        "x (Q15.17)",
        "y",
        "z"
    );
    let mut zero = 0;
    for (i, r) in state.regs.iter().enumerate() {
        if *r == [0; 3] {
            zero += 1;
            continue;
        }
        outln!(
            "{i:>4}  {:<30} {:>12} {:>12} {:>12}   {:>14.6} {:>14.6} {:>14.6}",
            regs::name_of(i as u16).unwrap_or(""),
            r[0] as i32,
            r[1] as i32,
            r[2] as i32,
            real(r[0]),
            real(r[1]),
            real(r[2])
        );
    }
    outln!("({zero} other registers are zero)");
    Ok(())
}

fn disasm(a: DisasmArgs) -> Result<(), String> {
    let Some(backend) = a.jit.backend() else {
        let img = load_mem(&a.input)?;
        let text = disassemble(&img).map_err(|e| format!("{}: {e}", a.input.display()))?;
        return shared::write_out(a.output.as_deref(), &text);
    };
    let profile = profile_of(&a.profile);
    let l = load_program(&a.input)?;
    let entry = entry_address(&l, &a.entry)?;
    let code = crate::jit::theia::generate(&Code::imem(l.imem), profile, backend, &[entry])
        .map_err(|e| format!("{}: {e}", a.input.display()))?;
    let text = format!(
        "; {backend}, {} bytes, profile {}, entry {entry:#06x}\n{}",
        code.len(),
        profile.name(),
        shared::host_code(backend, &code, code.len())
    );
    shared::write_out(a.output.as_deref(), &text)
}

fn info(input: Option<&Path>, profile: Profile) -> Result<(), String> {
    let Some(path) = input else {
        outln!(
            "THEIA operations (code, name, in the manual, in the {} profile):",
            profile.name()
        );
        for o in table::OPS {
            let done = exec::completes(profile, o.sem, o.rtl);
            outln!(
                "  {:#06x} {:<12} {:<7} {}",
                o.code,
                o.name,
                if o.manual { "manual" } else { "RTL" },
                if done {
                    "completes"
                } else {
                    "never completes (stalls)"
                }
            );
        }
        outln!(
            "registers: {} rows in the {} profile",
            profile.register_count(),
            profile.name()
        );
        return Ok(());
    };
    let l = load_program(path)?;
    outln!(
        "{}: {} instructions after the {}-row entry table",
        path.display(),
        code_len(&l),
        asm::TABLE_LEN
    );
    for (k, &(name, rom)) in table::ENTRY_POINTS.iter().enumerate() {
        let v = l.imem[k];
        if v & 0x8000 != 0 {
            outln!(
                "  {name}: instruction {}",
                (v as usize & 0x7FFF) - asm::TABLE_LEN
            );
        } else if v != rom as u64 {
            outln!("  {name}: ROM address {v} (default {rom})");
        }
    }
    let mut counts: Vec<(&str, usize, RtlSupport)> = Vec::new();
    for &raw in &l.imem[asm::TABLE_LEN..] {
        let w = Word::decode(raw);
        match table::by_code(w.op) {
            Some(o) => match counts.iter_mut().find(|c| c.0 == o.name) {
                Some(c) => c.1 += 1,
                None => counts.push((o.name, 1, o.rtl)),
            },
            None => outln!("  undefined operation {:#06x}", w.op),
        }
    }
    counts.sort_by_key(|c| c.0);
    for (name, n, rtl) in counts {
        let o = table::by_name(name).expect("from the table");
        let note = if exec::completes(profile, o.sem, rtl) {
            ""
        } else {
            "  (never completes in this profile)"
        };
        outln!("  {name:<12} x{n}{note}");
    }
    Ok(())
}

/// A built-in bench program: its source, entry name and register setup.
/// The timed runs' I/O: a checksum of what is written and read (the engines were compared
/// with [`RecordIo`] before timing). Cheaper than recording, so that the harness's share of a
/// run is small for both engines.
#[derive(Default)]
struct SumIo {
    sum: u32,
}

impl exec::Io for SumIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        for v in addr.into_iter().chain(data) {
            self.sum = self.sum.rotate_left(5) ^ v;
        }
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        for v in addr {
            self.sum = self.sum.rotate_left(5) ^ v;
        }
        [0; 3]
    }
}

struct BenchProgram {
    name: &'static str,
    source: &'static str,
    entry: &'static str,
    init: Vec<(u16, [u32; 3])>,
}

fn bench_programs() -> Vec<BenchProgram> {
    let q = |v: f64| (v * 131072.0).round() as i64 as i32 as u32;
    let r = |n: &str| regs::by_name(n).expect("register name");
    vec![
        BenchProgram {
            name: "ray_triangle",
            source: include_str!("../../examples/theia/ray_triangle.theia"),
            entry: "ENTRYPOINT_ADRR_MAIN",
            init: vec![
                (r("CREG_CAMERA_POSITION"), [0; 3]),
                (r("CREG_RAY_DIRECTION"), [q(0.1), q(0.05), q(1.0)]),
                (r("CREG_V0"), [q(-1.0), q(-1.0), q(5.0)]),
                (r("CREG_V1"), [q(2.0), q(-1.0), q(5.0)]),
                (r("CREG_V2"), [q(-1.0), q(2.0), q(5.0)]),
            ],
        },
        BenchProgram {
            name: "grayscale",
            source: include_str!("../../examples/theia/grayscale.theia"),
            entry: "ENTRYPOINT_ADRR_PIXELSHADER",
            init: vec![(r("CREG_TEXTURE_COLOR"), [q(0.5), q(0.25), q(0.75)])],
        },
    ]
}

/// `bench --scene`: median seconds per frame on the interpreter and the host's JIT, on 1..N
/// host threads over the scene's GPU cores.
fn bench_scenes(a: &BenchArgs) -> Result<(), String> {
    use crate::theia::render::{self, Scene};
    let max_threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    outln!(
        "THEIA frames (rtl profile, compilation included, images compared first): median of {} frame(s); speed-up against the interpreter on one thread",
        a.frames.max(1)
    );
    outln!(
        "{:<40} {:>9} {:>6} {:>12} {:>7} {:>8} {:>12} {:>9}",
        "scene",
        "size",
        "cores",
        "steps",
        "engine",
        "threads",
        "s/frame",
        "speed-up"
    );
    // The host's own JIT: frames are timed natively, never under emulation.
    let jit = crate::jit::Backend::host().ok_or("no JIT backend runs on this host")?;
    for dir in &a.scenes {
        let rom = match rtl_checkout(None, dir) {
            Some(d) => crate::theia::rom::load(&d)?.words,
            None => Vec::new(),
        };
        let scene = Scene::load(dir, None).map_err(|e| e.to_string())?;
        let cores = scene.cores();
        let mut reference: Option<render::Image> = None;
        let mut base = f64::NAN;
        for engine in [Engine::Interp, Engine::from(jit)] {
            let name = engine.to_string();
            for threads in 1..=max_threads.min(cores.max(1)) {
                let mut times = Vec::new();
                let mut steps = 0;
                for _ in 0..a.frames.max(1) {
                    let t = Instant::now();
                    let (img, st) =
                        render::render(&scene, &rom, engine, threads).map_err(|e| e.to_string())?;
                    times.push(t.elapsed().as_secs_f64());
                    steps = st.steps;
                    match &reference {
                        None => reference = Some(img),
                        Some(r) if *r != img => {
                            return Err(format!(
                                "{}: the {name} image on {threads} thread(s) differs from the interpreter's",
                                dir.display()
                            ))
                        }
                        Some(_) => {}
                    }
                }
                times.sort_by(f64::total_cmp);
                let t = times[times.len() / 2];
                if base.is_nan() {
                    base = t;
                }
                let img = reference.as_ref().expect("rendered");
                outln!(
                    "{:<40} {:>9} {:>6} {:>12} {:>7} {:>8} {:>12.4} {:>8.1}x",
                    dir.display(),
                    format!("{}x{}", img.width, img.height),
                    cores,
                    steps,
                    name,
                    threads,
                    t,
                    base / t
                );
            }
        }
    }
    Ok(())
}

fn bench(a: BenchArgs) -> Result<(), String> {
    if !a.scenes.is_empty() {
        bench_scenes(&a)?;
    }
    let profile = profile_of(&a.profile);
    let mut progs = Vec::new();
    if a.programs.is_empty() {
        for b in bench_programs() {
            let p = asm::assemble(b.source).map_err(|e| format!("{}: {e}", b.name))?;
            let l = Loaded {
                imem: p.imem(),
                source: Some(p),
            };
            let e = entry_address(&l, b.entry)?;
            progs.push((b.name.to_string(), l.imem, e, b.init));
        }
    } else {
        for path in &a.programs {
            let l = load_program(path)?;
            let e = entry_address(&l, "0")?;
            progs.push((path.display().to_string(), l.imem, e, Vec::new()));
        }
    }
    outln!(
        "THEIA bench, profile {}: median ns per run over {} rounds (interpreter, x86-64 JIT where it runs natively; AArch64: code generation only)",
        profile.name(),
        a.rounds
    );
    outln!(
        "{:<16} {:>6} {:>12} {:>12} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "program",
        "steps",
        "interp ns",
        "x64 ns",
        "speed-up",
        "x64 bytes",
        "x64 us",
        "a64 bytes",
        "a64 us"
    );
    for (name, imem, entry, init) in progs {
        let code = Code::imem(imem);
        let mut base = State::new(profile);
        for &(addr, v) in &init {
            base.regs[addr as usize] = v;
        }
        let a64 = crate::jit::theia::generate(&code, profile, crate::jit::Backend::A64, &[entry]);
        let a64_start = Instant::now();
        let a64_bytes = a64.map(|b| b.len()).unwrap_or(0);
        let _ = crate::jit::theia::generate(&code, profile, crate::jit::Backend::A64, &[entry]);
        let a64_us = a64_start.elapsed().as_secs_f64() * 1e6;
        let jit =
            crate::jit::theia::compile(&code, profile, crate::jit::Backend::X64, &[entry]).ok();
        // Bit-exact check before timing.
        let mut si = base.clone();
        let mut ioi = RecordIo::default();
        let want = exec::run(profile, &code, &mut si, &mut ioi, entry, DEFAULT_BUDGET)
            .map_err(|e| format!("{name}: {e}"))?;
        if let Some(j) = &jit {
            let mut sj = base.clone();
            let mut ioj = RecordIo::default();
            let got = j
                .run(&mut sj, &mut ioj, entry, DEFAULT_BUDGET)
                .map_err(|e| format!("{name}: {e}"))?;
            if got != want || sj != si || ioj != ioi {
                return Err(format!(
                    "{name}: the x86-64 JIT differs from the interpreter"
                ));
            }
        }
        let mut interp_ns = Vec::new();
        let mut jit_ns = Vec::new();
        let per = (a.time_ms as u128 * 1_000_000 / a.rounds.max(1) as u128 / 2).max(1);
        for _ in 0..a.rounds {
            for which in 0..2 {
                if which == 1 && jit.is_none() {
                    continue;
                }
                let mut io = SumIo::default();
                let mut s = base.clone();
                // The JIT runs on state kept in its context block, as an embedder would.
                let mut base_ctx = crate::jit::theia::ctx::TheiaCtx::default();
                crate::jit::theia::ctx_from_state(&mut base_ctx, &base);
                let mut ctx = base_ctx;
                let start = Instant::now();
                let mut runs = 0u64;
                while start.elapsed().as_nanos() < per {
                    for _ in 0..32 {
                        // Only the inputs are reset between runs (the examples write every
                        // other register before reading it), as an embedder that keeps the
                        // unit's state would; copying the whole register file would add the
                        // same harness time to both engines.
                        let r = if which == 0 {
                            for &(addr, v) in &init {
                                s.regs[addr as usize] = v;
                            }
                            s.last_result = base.last_result;
                            exec::run(profile, &code, &mut s, &mut io, entry, DEFAULT_BUDGET)
                                .map_err(crate::jit::Error::Theia)
                        } else {
                            for &(addr, v) in &init {
                                ctx.regs[addr as usize] = v;
                            }
                            ctx.last_result = base_ctx.last_result;
                            let j = jit.as_ref().expect("checked");
                            j.run_ctx(&mut ctx, &mut io, entry, DEFAULT_BUDGET)
                        };
                        // By reference: copying the outcome out would add a store-forwarding
                        // stall of the harness to both engines.
                        if let Err(e) = std::hint::black_box(&r) {
                            return Err(e.to_string());
                        }
                    }
                    runs += 32;
                }
                let ns = start.elapsed().as_nanos() as f64 / runs as f64;
                std::hint::black_box(io.sum);
                if which == 0 {
                    interp_ns.push(ns);
                } else {
                    jit_ns.push(ns);
                }
            }
        }
        let median = |v: &mut Vec<f64>| -> f64 {
            if v.is_empty() {
                return f64::NAN;
            }
            v.sort_by(|a, b| a.total_cmp(b));
            v[v.len() / 2]
        };
        let (i_ns, j_ns) = (median(&mut interp_ns), median(&mut jit_ns));
        outln!(
            "{name:<16} {:>6} {:>12.1} {:>12.1} {:>8.1}x {:>10} {:>10.1} {:>10} {:>10.1}",
            want.steps,
            i_ns,
            j_ns,
            i_ns / j_ns,
            jit.as_ref().map_or(0, |j| j.code_size()),
            jit.as_ref()
                .map_or(0.0, |j| j.compile_time().as_secs_f64() * 1e6),
            a64_bytes,
            a64_us
        );
    }
    Ok(())
}
