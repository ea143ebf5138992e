//! Subcommands of the `picajit` tool.

/// `println!` for the tool's results: when standard output is closed early
/// (`picajit info … | head`), the process ends quietly instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($t)*) {
            $crate::cli::output_failed(e);
        }
    }};
}

/// `print!` with the handling of [`outln!`].
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($t)*) {
            $crate::cli::output_failed(e);
        }
    }};
}

/// Standard output failed: a reader that went away (a closed pipe) ends the tool as the
/// default SIGPIPE action would, without a message; any other error is reported.
pub fn output_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("picajit: error: cannot write the output: {e}");
    std::process::exit(1);
}

mod bench;
mod disasm;
mod info;
mod run;
mod theia;
mod usc;
mod values;

use clap::{Parser, Subcommand};
use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::shbin::Shbin;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "picajit",
    version,
    about = "Shader JIT, interpreter and tools for the PICA200 (the default), THEIA and PowerVR USC",
    after_help = "Every command takes --isa pica (the default), --isa theia (THEIA, seed 003) or --isa usc (PowerVR USC ISR text, seed 004): `picajit run --isa usc --help`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Float-model options shared by the executing subcommands.
#[derive(clap::Args, Clone, Debug)]
pub struct FloatArgs {
    /// Float semantics: f24 (hardware precision) or f32 (faster, peer-compatible).
    #[arg(long = "float", default_value = "f24", value_parser = ["f24", "f32"])]
    pub float: String,
    /// Rounding of f24 results: rtz (toward zero) or rne (nearest even). Only for --float f24.
    #[arg(long, default_value = "rtz", value_parser = ["rtz", "rne"])]
    pub rounding: String,
}

impl FloatArgs {
    pub fn mode(&self) -> Result<FloatMode, String> {
        let rounding = match self.rounding.as_str() {
            "rne" => Rounding::NearestEven,
            _ => Rounding::TowardZero,
        };
        match self.float.as_str() {
            "f32" if rounding == Rounding::NearestEven => Err(
                "--rounding applies to --float f24 only (f32 mode rounds to nearest even)".into(),
            ),
            "f32" => Ok(FloatMode::F32),
            _ => Ok(FloatMode::F24(rounding)),
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Assemble picasso-syntax sources into a SHBIN (one DVLE per source file).
    Asm {
        /// Source files (.pica / .v.pica / .g.pica).
        #[arg(required = true)]
        sources: Vec<PathBuf>,
        /// Output SHBIN path.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Disassemble a SHBIN (or raw little-endian code words with --raw) to source, or with
    /// --jit show the host code the JIT generates for it.
    Disasm(disasm::DisasmArgs),
    /// Describe a SHBIN or source: entry points, uniforms, outputs, sizes; with --engine, whether
    /// each program is compiled or falls back to the interpreter, and why.
    Info(info::InfoArgs),
    /// Run a shader on given inputs and print its outputs.
    Run(run::RunArgs),
    /// Measure throughput, compile time and code size on every engine.
    Bench(bench::BenchArgs),
}

/// Load a SHBIN, or assemble a source file into one.
/// Read an input file, refusing one larger than any input the tool accepts (checked before
/// reading, so a huge file costs nothing): the assembler's limit
/// ([`picajit::asm::MAX_SOURCE_BYTES`]), which is above the SHBIN reader's
/// ([`picajit::shbin::MAX_SHBIN_BYTES`], checked by the reader).
pub(crate) fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    let limit = picajit::asm::MAX_SOURCE_BYTES.max(picajit::shbin::MAX_SHBIN_BYTES);
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if len > limit as u64 {
        return Err(format!(
            "{}: {len} bytes is larger than any input picajit accepts (at most {limit})",
            path.display()
        ));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn load_shbin(path: &Path) -> Result<Shbin, String> {
    let bytes = read_limited(path)?;
    if bytes.len() < 4 {
        return Err(format!(
            "{}: {} byte(s): too short for a SHBIN (which starts with the 4-byte magic DVLB) \
             or a shader source",
            path.display(),
            bytes.len()
        ));
    }
    if bytes.starts_with(b"DVLB") {
        return Shbin::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{}: neither a SHBIN nor UTF-8 source text", path.display()))?;
    let name = path.display().to_string();
    picajit::asm::assemble(&[picajit::asm::SourceFile {
        name: &name,
        text: &text,
    }])
    .map_err(|e| e.to_string())
}

pub(crate) fn read_words(path: &Path) -> Result<Vec<u32>, String> {
    let bytes = read_limited(path)?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{}: length {} is not a multiple of 4",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Operand descriptors from a file of little-endian words: 32-bit words as the C ABI and
/// emulators hold them, or 64-bit entries as a SHBIN stores them (the descriptor in the low
/// half). `size` 4 or 8 says which; `None` decides from the file: 64-bit when the length is a
/// multiple of 8 and every high half is at most 0xF (SHBIN entries use only bits 32-35 there),
/// else 32-bit. A 32-bit table whose every odd word is at most 0xF (descriptors that select
/// `.xxxx` everywhere) would read as 64-bit: pass the size for such a table.
pub(crate) fn read_descs(path: &Path, size: Option<usize>) -> Result<Vec<u64>, String> {
    let bytes = read_limited(path)?;
    let words: Vec<u32> = if bytes.len() % 4 == 0 {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    } else {
        return Err(format!(
            "{}: length {} is not a multiple of 4 (32-bit descriptors) or 8 (64-bit)",
            path.display(),
            bytes.len()
        ));
    };
    let looks_64 =
        bytes.len() % 8 == 0 && !words.is_empty() && words.chunks_exact(2).all(|p| p[1] <= 0xF);
    let size = match size {
        Some(4) => 4,
        Some(8) => 8,
        Some(n) => return Err(format!("--opdesc-size {n}: use 4 or 8")),
        None if looks_64 => 8,
        None => 4,
    };
    if size == 8 {
        if bytes.len() % 8 != 0 {
            return Err(format!(
                "{}: length {} is not a multiple of 8",
                path.display(),
                bytes.len()
            ));
        }
        Ok(words
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
            .collect())
    } else {
        Ok(words.into_iter().map(u64::from).collect())
    }
}

pub(crate) fn write_out(path: Option<&Path>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Asm { sources, output } => {
            let texts = sources
                .iter()
                .map(|p| {
                    let bytes = read_limited(p)?;
                    String::from_utf8(bytes)
                        .map(|t| (p.display().to_string(), t))
                        .map_err(|_| format!("{}: not UTF-8 text", p.display()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let files: Vec<_> = texts
                .iter()
                .map(|(n, t)| picajit::asm::SourceFile { name: n, text: t })
                .collect();
            let shbin = match picajit::asm::assemble_with_warnings(&files) {
                Ok((shbin, warnings)) => {
                    for w in warnings {
                        eprintln!("{w}");
                    }
                    shbin
                }
                Err(errors) => {
                    // Every error, not only the first: fixing a file takes fewer rounds.
                    let n = errors.len();
                    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                    return Err(format!("{}\n{n} error(s)", text.join("\n")));
                }
            };
            std::fs::write(&output, shbin.to_bytes())
                .map_err(|e| format!("{}: {e}", output.display()))
        }
        Command::Disasm(args) => disasm::disasm(args),
        Command::Info(args) => info::info(args),
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::bench(args),
    }
}

/// Takes `--isa NAME` (or `--isa=NAME`) out of the arguments: every subcommand accepts it,
/// `pica` (the default) is the PICA200 tool above, other instruction sets have their own
/// modules.
fn take_isa(args: Vec<std::ffi::OsString>) -> Result<(String, Vec<std::ffi::OsString>), String> {
    let mut isa = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = if a == "--isa" {
            Some(
                it.next()
                    .ok_or("--isa needs a value: pica, theia or usc")?
                    .to_string_lossy()
                    .into_owned(),
            )
        } else {
            a.to_str()
                .and_then(|s| s.strip_prefix("--isa="))
                .map(str::to_string)
        };
        match value {
            Some(v) if isa.is_some() => return Err(format!("--isa given twice ({v})")),
            Some(v) => isa = Some(v),
            None => rest.push(a),
        }
    }
    Ok((isa.unwrap_or_else(|| "pica".into()), rest))
}

/// How a failure is printed: `picajit: error: MESSAGE`, except that messages which are already
/// located diagnostics (`file:line:col: error: …`, from the assembler) are printed as they are,
/// so that no line reads "error: … error:".
fn error_text(e: &str) -> String {
    let first = e.lines().next().unwrap_or("");
    if first.contains(": error: ") {
        e.to_string()
    } else {
        format!("picajit: error: {e}")
    }
}

pub fn main() -> ExitCode {
    let result = match take_isa(std::env::args_os().collect()) {
        Ok((isa, args)) => match isa.as_str() {
            "pica" => dispatch(Cli::parse_from(args)),
            "theia" => theia::main(args),
            "usc" => usc::main(args),
            other => Err(format!(
                "unknown --isa '{other}': expected pica (the default), theia or usc"
            )),
        },
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", error_text(&e));
            ExitCode::FAILURE
        }
    }
}
