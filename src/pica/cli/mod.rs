//! `picajit COMMAND [--isa pica]`: the PICA200 commands (the tool's default ISA): `asm`,
//! `disasm`, `info`, `run` and `bench`.

mod bench;
mod disasm;
mod info;
mod run;
mod values;

use crate::cli::shared::{self, Isa};
use crate::interp::pica::float::{FloatMode, Rounding};
use crate::pica::shbin::Shbin;
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "picajit",
    version,
    about = "Shader JIT, interpreter and tools for the PICA200 (the default), THEIA and PowerVR USC"
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

/// Reads an input file, refusing one larger than any input the PICA200 commands accept: the
/// assembler's limit ([`crate::pica::asm::MAX_SOURCE_BYTES`]), which is above the SHBIN
/// reader's ([`crate::pica::shbin::MAX_SHBIN_BYTES`], checked by the reader).
fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    let limit = crate::pica::asm::MAX_SOURCE_BYTES.max(crate::pica::shbin::MAX_SHBIN_BYTES);
    shared::read_limited(path, limit, "any input picajit accepts")
}

/// Loads a SHBIN, or assembles a source file into one.
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
    crate::pica::asm::assemble(&[crate::pica::asm::SourceFile {
        name: &name,
        text: &text,
    }])
    .map_err(|e| e.to_string())
}

/// A file of little-endian 32-bit words; `what` follows the length in the error for a
/// length that is not a multiple of 4.
fn le_words(path: &Path, what: &str) -> Result<Vec<u32>, String> {
    let bytes = read_limited(path)?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{}: length {} is not a multiple of 4{what}",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Code words from a file of little-endian words.
pub(crate) fn read_words(path: &Path) -> Result<Vec<u32>, String> {
    le_words(path, "")
}

/// Operand descriptors from a file of little-endian words: 32-bit words as the C ABI and
/// emulators hold them, or 64-bit entries as a SHBIN stores them (the descriptor in the low
/// half). `size` 4 or 8 says which; `None` decides from the file: 64-bit when the length is a
/// multiple of 8 and every high half is at most 0xF (SHBIN entries use only bits 32-35 there),
/// else 32-bit. A 32-bit table whose every odd word is at most 0xF (descriptors that select
/// `.xxxx` everywhere) would read as 64-bit: pass the size for such a table.
pub(crate) fn read_descs(path: &Path, size: Option<usize>) -> Result<Vec<u64>, String> {
    let words = le_words(path, " (32-bit descriptors) or 8 (64-bit)")?;
    let looks_64 =
        words.len() % 2 == 0 && !words.is_empty() && words.chunks_exact(2).all(|p| p[1] <= 0xF);
    let size = match size {
        Some(4) => 4,
        Some(8) => 8,
        Some(n) => return Err(format!("--opdesc-size {n}: use 4 or 8")),
        None if looks_64 => 8,
        None => 4,
    };
    if size == 8 {
        if words.len() % 2 != 0 {
            return Err(format!(
                "{}: length {} is not a multiple of 8",
                path.display(),
                4 * words.len()
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

/// Runs a PICA200 command; `args` is the command line without `--isa pica`.
pub fn main(args: Vec<OsString>, isas: &[Isa]) -> Result<(), String> {
    let cli: Cli = shared::parse(args, isas);
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
                .map(|(n, t)| crate::pica::asm::SourceFile { name: n, text: t })
                .collect();
            let shbin = match crate::pica::asm::assemble_with_warnings(&files) {
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
