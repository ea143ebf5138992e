//! `picajit … --isa toy`: the TOY commands. `cli::main` hands the arguments here when they
//! name `--isa toy`; the table of ISAs there registers [`ISA`].
//!
//! ```text
//! picajit run --isa toy PROG.toy [--engine jit|interp|x64|a64] [--budget N] [--set rN=V]... [--json]
//! picajit asm --isa toy PROG.toy [-o OUT]      canonical text
//! picajit disasm --isa toy PROG.toy [--jit x64|a64] [-o OUT]
//! picajit info --isa toy PROG.toy
//! ```

use super::asm;
use super::engine::Shader;
use crate::cli::shared::{self, outln, AsmArgs, BudgetArg, EngineArg, Isa, JitArg};
use crate::interp::toy::exec::{State, Status};
use crate::interp::toy::{Opcode, Program, REGS};
use crate::jit::Backend;
use clap::Subcommand;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// TOY's row of the tool's table of instruction sets.
pub const ISA: Isa = Isa {
    name: "toy",
    help: "TOY, a made-up instruction set (the made-up-isa feature)",
    main,
};

#[derive(Subcommand)]
enum Cmd {
    /// Run a program from its first instruction until HALT, its end or the budget.
    Run(RunArgs),
    /// Parse a program and print it in canonical form (to OUT with -o).
    Asm(AsmArgs),
    /// Parse a program and print it in canonical form, or with --jit the host code.
    Disasm(DisasmArgs),
    /// Count a program's instructions, blocks and operations, and its code size per JIT.
    Info { input: PathBuf },
}

#[derive(clap::Args)]
struct DisasmArgs {
    input: PathBuf,
    #[command(flatten)]
    jit: JitArg,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
struct RunArgs {
    /// A TOY source file.
    input: PathBuf,
    #[command(flatten)]
    engine: EngineArg,
    #[command(flatten)]
    budget: BudgetArg,
    /// Set a register before the run: rN=V with V a 32-bit integer (decimal, optionally
    /// negative, or 0x hexadecimal). Registers start at 0.
    #[arg(long = "set", value_name = "rN=V")]
    set: Vec<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs a TOY command; `args` is the command line without `--isa toy`.
pub fn main(args: Vec<OsString>, isas: &[Isa]) -> Result<(), String> {
    let about = "TOY, the made-up instruction set: picajit COMMAND --isa toy ...";
    match shared::parse_command(args, isas, about) {
        Cmd::Run(a) => run(a),
        Cmd::Asm(AsmArgs { input, output }) => {
            shared::write_out(output.as_deref(), &asm::print(&load(&input)?))
        }
        Cmd::Disasm(DisasmArgs { input, jit, output }) => {
            let program = load(&input)?;
            let text = match jit.backend() {
                None => asm::print(&program),
                Some(backend) => {
                    let code = crate::jit::toy::generate(&program, backend)
                        .map_err(|e| format!("{}: {e}", input.display()))?;
                    format!(
                        "; {backend}, {} bytes\n{}",
                        code.len(),
                        shared::host_code(backend, &code, code.len())
                    )
                }
            };
            shared::write_out(output.as_deref(), &text)
        }
        Cmd::Info { input } => info(&input),
    }
}

fn load(path: &Path) -> Result<Program, String> {
    let text = shared::read_text(path, asm::MAX_SOURCE_BYTES, "any TOY source")?;
    asm::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `rN=V`.
fn apply_set(state: &mut State, spec: &str) -> Result<(), String> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("--set {spec}: expected rN=V"))?;
    let r = asm::register(name.trim()).ok_or_else(|| {
        format!(
            "--set {spec}: '{name}' is not a register (r0-r{})",
            REGS - 1
        )
    })?;
    let v = value.trim();
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => v
            .parse::<u32>()
            .ok()
            .or_else(|| v.parse::<i32>().ok().map(|x| x as u32)),
    };
    state.regs[r.index()] =
        parsed.ok_or_else(|| format!("--set {spec}: '{v}' is not a 32-bit integer"))?;
    Ok(())
}

fn run(a: RunArgs) -> Result<(), String> {
    let engine = a.engine.engine;
    let program = load(&a.input)?;
    let mut state = State::default();
    for s in &a.set {
        apply_set(&mut state, s)?;
    }
    let shader = Shader::new(program, engine).map_err(|e| format!("--engine {engine}: {e}"))?;
    let budget = a.budget.get();
    let outcome = shader.run(&mut state, budget);
    let (status, pc) = match outcome.status {
        Status::Halted { pc } => ("halted", Some(pc)),
        Status::End => ("end", None),
        Status::Budget { pc } => ("budget", Some(pc)),
    };
    if a.json {
        let v = serde_json::json!({
            "isa": "toy",
            "engine": shader.engine().to_string(),
            "status": status,
            "pc": pc,
            "steps": outcome.steps,
            "regs": state.regs,
        });
        outln!("{v}");
        return Ok(());
    }
    outln!("engine: {}", shader.engine());
    match outcome.status {
        Status::Halted { pc } => outln!("status: HALT at {pc}"),
        Status::End => outln!("status: ran to the end"),
        Status::Budget { pc } => {
            outln!("status: the budget of {budget} steps ran out before {pc}")
        }
    }
    outln!("steps: {}", outcome.steps);
    for (r, v) in state.regs.iter().enumerate() {
        outln!("r{r:<2} = {v:#010x} {}", *v as i32);
    }
    Ok(())
}

fn info(input: &Path) -> Result<(), String> {
    let program = load(input)?;
    outln!(
        "{}: {} instructions, {} blocks",
        input.display(),
        program.len(),
        crate::jit::toy::lower::blocks(&program).len()
    );
    for op in Opcode::ALL {
        let n = program.instrs().iter().filter(|i| i.opcode() == op).count();
        if n > 0 {
            outln!("  {:<5} {n}", op.mnemonic());
        }
    }
    for backend in [Backend::X64, Backend::A64] {
        let size = crate::jit::toy::generate(&program, backend)
            .map_err(|e| format!("{backend} code: {e}"))?
            .len();
        outln!("{backend} code: {size} bytes");
    }
    Ok(())
}
