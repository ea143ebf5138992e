//! `picajit disasm`: PICA source back from a SHBIN or raw words, or the host code the JIT
//! generates for it (`--jit x64|a64`).

use super::{load_shbin, read_descs, read_words, FloatArgs};
use crate::cli::shared::{write_out, JitArg};
use crate::interp::pica::program::{Program, ShaderKind};
use crate::jit::{compile, Backend, HostFeatures};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DisasmArgs {
    /// Input file: a SHBIN, a source file (assembled first), or raw words with --raw.
    input: PathBuf,
    /// Treat the input as raw little-endian code words.
    #[arg(long)]
    raw: bool,
    /// With --raw: a file of little-endian operand descriptors, 32-bit words (as the C ABI
    /// takes them) or 64-bit SHBIN entries (told apart as `run --opdescs` does).
    #[arg(long)]
    opdescs: Option<PathBuf>,
    /// With --raw: entry point word address.
    #[arg(long, default_value_t = 0)]
    entry: u32,
    /// With --raw: the shader kind (vertex or geometry), which decides how EMIT/SETEMIT read.
    #[arg(long, default_value = "vertex", value_parser = ["vertex", "geometry"])]
    kind: String,
    #[command(flatten)]
    jit: JitArg,
    /// With --jit: which DVLE of a SHBIN (default: all).
    #[arg(long)]
    dvle: Option<usize>,
    /// With --jit x64: print the multi-vertex (AVX2, eight vertices per register) code that
    /// batch runs (vertex shaders) or point-mode draws (geometry shaders) use instead of the
    /// per-vertex code.
    #[arg(long, requires = "jit")]
    batch: bool,
    #[command(flatten)]
    float: FloatArgs,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn disasm(args: DisasmArgs) -> Result<(), String> {
    let kind = if args.kind == "geometry" {
        ShaderKind::Geometry
    } else {
        ShaderKind::Vertex
    };
    let text = match (args.jit.backend(), args.raw) {
        (None, true) => {
            let code = read_words(&args.input)?;
            let descs = match &args.opdescs {
                Some(p) => read_descs(p, None)?,
                None => Vec::new(),
            };
            crate::pica::asm::disassemble_program(&code, &descs, args.entry, kind)
        }
        (None, false) => crate::pica::asm::disassemble(&load_shbin(&args.input)?),
        (Some(backend), _) => {
            let programs = programs(&args, kind)?;
            let mut out = String::new();
            for (title, program) in programs {
                out.push_str(&format!("; ==== {title}\n"));
                out.push_str(&host_code(&program, backend, &args.float, args.batch)?);
            }
            out
        }
    };
    write_out(args.output.as_deref(), &text)
}

/// The programs to compile, each with a heading.
fn programs(args: &DisasmArgs, kind: ShaderKind) -> Result<Vec<(String, Program)>, String> {
    if args.raw {
        let code = read_words(&args.input)?;
        let descs = match &args.opdescs {
            Some(p) => read_descs(p, None)?,
            None => Vec::new(),
        };
        let p = Program::new(code, descs, args.entry, kind).map_err(|e| e.to_string())?;
        return Ok(vec![(format!("entry 0x{:03x}", args.entry), p)]);
    }
    let shbin = load_shbin(&args.input)?;
    let indices: Vec<usize> = match args.dvle {
        Some(n) => vec![n],
        None => (0..shbin.dvles.len()).collect(),
    };
    indices
        .into_iter()
        .map(|n| {
            let (p, _) =
                crate::pica::engine::program_from_shbin(&shbin, n).map_err(|e| e.to_string())?;
            Ok((
                format!("DVLE #{n} ({} shader, entry 0x{:03x})", p.kind(), p.entry()),
                p,
            ))
        })
        .collect()
}

fn host_code(
    program: &Program,
    backend: Backend,
    float: &FloatArgs,
    batch: bool,
) -> Result<String, String> {
    let features = HostFeatures::for_backend(backend);
    if batch && backend != Backend::X64 {
        return Err("--batch: only the x64 JIT has a multi-vertex backend".into());
    }
    match compile(program, float.mode()?, backend, features) {
        Ok(code) if batch => {
            // Vertex shaders: what batches run; geometry shaders: what point-mode draws run.
            let (what, why_not, fallback) = match program.kind() {
                ShaderKind::Vertex => (
                    "vertices",
                    code.batch_ineligibility(),
                    "batches run one vertex per call",
                ),
                ShaderKind::Geometry => (
                    "invocations",
                    code.points_ineligibility(),
                    "point-mode draws run one invocation per call",
                ),
            };
            Ok(match code.disassemble_batch() {
                Some(text) if why_not.is_none() => format!(
                    "; {backend} multi-vertex ({} {what} per group), {} bytes\n{text}",
                    code.batch_lanes(),
                    code.batch_code().0.len()
                ),
                _ => format!(
                    "; {backend}: no multi-vertex code ({}); {fallback}\n",
                    why_not.unwrap_or("none generated")
                ),
            })
        }
        Ok(code) => Ok(format!(
            "; {backend}, {} bytes, features {}; {}\n{}",
            code.code_size(),
            code.features(),
            code.analysis(),
            code.disassemble()
        )),
        Err(e) => Ok(format!("; {backend}: runs on the interpreter ({e})\n")),
    }
}
