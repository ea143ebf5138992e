//! What every ISA's commands share: output that survives a closed pipe, reading inputs under
//! a size limit, writing results, and the flags that mean the same whatever `--isa`
//! (`--engine`, `--budget`).

use crate::{Engine, DEFAULT_BUDGET};
use picajit_jit::Backend;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `println!` for the tool's results: when standard output is closed early
/// (`picajit info … | head`), the process ends quietly instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($t)*) {
            $crate::cli::shared::output_failed(e);
        }
    }};
}
pub(crate) use outln;

/// `print!` with the handling of [`outln!`].
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($t)*) {
            $crate::cli::shared::output_failed(e);
        }
    }};
}
pub(crate) use out;

/// Standard output failed: a reader that went away (a closed pipe) ends the tool as the
/// default SIGPIPE action would, without a message; any other error is reported.
pub fn output_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("picajit: error: cannot write the output: {e}");
    std::process::exit(1);
}

/// One instruction set of the tool: `picajit COMMAND --isa NAME ...` hands the command line
/// without `--isa NAME` to `main`, with the table of every ISA (for help texts).
pub struct Isa {
    /// The `--isa` value.
    pub name: &'static str,
    /// One line for `--help`.
    pub help: &'static str,
    /// Parses and runs a command line of this ISA.
    pub main: fn(Vec<OsString>, &[Isa]) -> Result<(), String>,
}

/// The `--help` epilogue of every ISA's commands: the `--isa` values.
pub fn isa_help(isas: &[Isa]) -> String {
    let mut s = String::from("Every command takes --isa NAME (the first is the default):");
    for isa in isas {
        s.push_str(&format!("\n  --isa {:<7} {}", isa.name, isa.help));
    }
    s.push_str("\nThe help of another ISA's command: `picajit run --isa usc --help`.");
    s
}

/// Parses an ISA's command line with its clap parser `C`, whose `--help` ends with the
/// `--isa` values; on a parse error (or `--help`) the tool exits as clap does.
pub fn parse<C: clap::CommandFactory + clap::FromArgMatches>(
    args: Vec<OsString>,
    isas: &[Isa],
) -> C {
    parse_with(C::command(), args, isas)
}

/// The command line of an ISA other than the PICA200: `picajit COMMAND --isa NAME ...` with
/// the ISA's subcommands `C`.
#[derive(clap::Parser)]
#[command(name = "picajit")]
struct IsaCli<C: clap::Subcommand> {
    #[command(subcommand)]
    command: C,
}

/// [`parse`] for an ISA whose parser is its subcommands `C` alone, `about` heading its
/// `--help`.
pub fn parse_command<C: clap::Subcommand>(
    args: Vec<OsString>,
    isas: &[Isa],
    about: &'static str,
) -> C {
    use clap::CommandFactory;
    let cli: IsaCli<C> = parse_with(IsaCli::<C>::command().about(about), args, isas);
    cli.command
}

fn parse_with<C: clap::FromArgMatches>(
    command: clap::Command,
    args: Vec<OsString>,
    isas: &[Isa],
) -> C {
    let matches = command.after_help(isa_help(isas)).get_matches_from(args);
    C::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// `asm INPUT [-o OUT]` of an ISA whose `asm` prints a program's canonical text.
#[derive(clap::Args)]
pub struct AsmArgs {
    pub input: PathBuf,
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// `--engine`, the same for every ISA and command that runs a program.
#[derive(clap::Args, Clone, Debug)]
pub struct EngineArg {
    /// Engine: jit (the host's JIT, falling back to the interpreter where it cannot run
    /// the program; also `auto`), interp, x64 or a64 (natively on AArch64 hosts, under the
    /// emulator in builds with the a64-emu feature). Every engine gives the interpreter's
    /// results bit for bit.
    #[arg(long, default_value_t = Engine::Jit)]
    pub engine: Engine,
}

/// `--budget`, the same for every ISA and command that runs a program.
#[derive(clap::Args, Clone, Debug)]
pub struct BudgetArg {
    /// Most steps of one run (PICA200: instructions per invocation; THEIA: instructions;
    /// USC: instruction groups); 0 means the default, 2^20.
    #[arg(long, default_value_t = DEFAULT_BUDGET)]
    pub budget: u64,
}

impl BudgetArg {
    /// The budget with 0 read as the default ([`crate::budget_or_default`]).
    pub fn get(&self) -> u64 {
        crate::budget_or_default(self.budget)
    }
}

/// `disasm --jit`, the same for every ISA: the host code the JIT generates.
#[derive(clap::Args, Clone, Debug)]
pub struct JitArg {
    /// Print the host code the JIT generates for the program, x64 or a64 (either on any
    /// host), instead of the program's source.
    #[arg(long, value_parser = ["x64", "a64"])]
    pub jit: Option<String>,
}

impl JitArg {
    /// The backend asked for, if any.
    pub fn backend(&self) -> Option<Backend> {
        match self.jit.as_deref()? {
            "a64" => Some(Backend::A64),
            _ => Some(Backend::X64),
        }
    }
}

/// `code[..end]` of `backend` as text, the one disassembly of every ISA's `disasm --jit`
/// ([`picajit_jit::disassemble`], no annotations).
pub fn host_code(backend: Backend, code: &[u8], end: usize) -> String {
    picajit_jit::disassemble(backend, code, end, &[])
}

/// Reads an input file, refusing one larger than `limit` bytes before reading it (so a huge
/// file costs nothing); `what` names the inputs the limit is for.
pub fn read_limited(path: &Path, limit: usize, what: &str) -> Result<Vec<u8>, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if len > limit as u64 {
        return Err(format!(
            "{}: {len} bytes is larger than {what} (at most {limit})",
            path.display()
        ));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// [`read_limited`] for a text file.
pub fn read_text(path: &Path, limit: usize, what: &str) -> Result<String, String> {
    String::from_utf8(read_limited(path, limit, what)?)
        .map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

/// Writes `text` to `path`, or to standard output without one (`-o/--output`).
pub fn write_out(path: Option<&Path>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}
