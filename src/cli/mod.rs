//! Subcommands of the `picajit` tool.

mod bench;
mod run;
mod values;

use clap::{Parser, Subcommand};
use picajit::interp::float::{FloatMode, Rounding};
use picajit::shbin::Shbin;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "picajit",
    version,
    about = "PICA200 shader JIT, interpreter and tools"
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
    /// Disassemble a SHBIN (or raw little-endian code words with --raw) to source.
    Disasm {
        /// Input file.
        input: PathBuf,
        /// Treat the input as raw code words.
        #[arg(long)]
        raw: bool,
        /// With --raw: a file of raw 64-bit little-endian operand descriptors.
        #[arg(long)]
        opdescs: Option<PathBuf>,
        /// With --raw: entry point word address.
        #[arg(long, default_value_t = 0)]
        entry: u32,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Describe a SHBIN or source: entry points, uniforms, outputs, sizes.
    Info {
        /// SHBIN or source file.
        input: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a shader on given inputs and print its outputs.
    Run(run::RunArgs),
    /// Measure throughput, compile time and code size on every engine.
    Bench(bench::BenchArgs),
}

/// Load a SHBIN, or assemble a source file into one.
pub fn load_shbin(path: &Path) -> Result<Shbin, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
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

fn read_words(path: &Path) -> Result<Vec<u32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
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

fn read_descs(path: &Path) -> Result<Vec<u64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() % 8 != 0 {
        return Err(format!(
            "{}: length {} is not a multiple of 8",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

fn write_out(path: Option<&Path>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn info(input: &Path, json: bool) -> Result<(), String> {
    let shbin = load_shbin(input)?;
    let dvles: Vec<serde_json::Value> = shbin
        .dvles
        .iter()
        .enumerate()
        .map(|(n, d)| {
            serde_json::json!({
                "index": n,
                "kind": d.kind.to_string(),
                "main": d.main,
                "endmain": d.endmain,
                "input_mask": d.input_mask,
                "output_mask": d.output_mask,
                "gs_mode": format!("{:?}", d.gs_mode),
                "constants": d.constants.len(),
                "outputs": d.outputs.iter().map(|o| serde_json::json!({
                    "register": format!("o{}", o.reg),
                    "semantic": o.semantic.picasso_name().map(str::to_string).unwrap_or_else(|| format!("{:?}", o.semantic)),
                    "mask": o.mask,
                })).collect::<Vec<_>>(),
                "uniforms": d.uniforms.iter().map(|u| serde_json::json!({
                    "name": u.name,
                    "registers": u.register_range(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    if json {
        let v = serde_json::json!({
            "code_words": shbin.code.len(),
            "opdescs": shbin.opdescs.len(),
            "size_bytes": shbin.to_bytes().len(),
            "dvles": dvles,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }
    println!(
        "{}: {} code words, {} operand descriptors, {} DVLE(s)",
        input.display(),
        shbin.code.len(),
        shbin.opdescs.len(),
        shbin.dvles.len()
    );
    for (n, d) in shbin.dvles.iter().enumerate() {
        println!(
            "DVLE #{n}: {} shader, entry 0x{:03x}..0x{:03x}, {} constants",
            d.kind,
            d.main,
            d.endmain,
            d.constants.len()
        );
        if d.kind == picajit::interp::program::ShaderKind::Geometry {
            println!("  geometry input mode: {:?}", d.gs_mode);
        }
        for o in &d.outputs {
            let sem = o
                .semantic
                .picasso_name()
                .map(str::to_string)
                .unwrap_or_else(|| format!("{:?}", o.semantic));
            println!("  output o{:<2} {sem} (mask {:#x})", o.reg, o.mask);
        }
        for u in &d.uniforms {
            println!(
                "  uniform {:<20} {}",
                u.name,
                u.register_range()
                    .unwrap_or_else(|| format!("{}..{}", u.first, u.last))
            );
        }
    }
    Ok(())
}

fn dispatch(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Asm { sources, output } => {
            let texts = sources
                .iter()
                .map(|p| {
                    std::fs::read_to_string(p)
                        .map(|t| (p.display().to_string(), t))
                        .map_err(|e| format!("{}: {e}", p.display()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let files: Vec<_> = texts
                .iter()
                .map(|(n, t)| picajit::asm::SourceFile { name: n, text: t })
                .collect();
            let shbin = picajit::asm::assemble(&files).map_err(|e| e.to_string())?;
            std::fs::write(&output, shbin.to_bytes())
                .map_err(|e| format!("{}: {e}", output.display()))
        }
        Command::Disasm {
            input,
            raw,
            opdescs,
            entry,
            output,
        } => {
            let text = if raw {
                let code = read_words(&input)?;
                let descs = match opdescs {
                    Some(p) => read_descs(&p)?,
                    None => Vec::new(),
                };
                picajit::asm::disassemble_program(
                    &code,
                    &descs,
                    entry,
                    picajit::interp::program::ShaderKind::Vertex,
                )
            } else {
                picajit::asm::disassemble(&load_shbin(&input)?)
            };
            write_out(output.as_deref(), &text)
        }
        Command::Info { input, json } => info(&input, json),
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::bench(args),
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("picajit: error: {e}");
            ExitCode::FAILURE
        }
    }
}
