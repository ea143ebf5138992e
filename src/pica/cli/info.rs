//! `picajit info`: what a SHBIN holds, and with `--engine` how each program would run.

use super::{load_shbin, FloatArgs};
use crate::cli::shared::outln;
use crate::interp::pica::float::FloatMode;
use crate::interp::pica::program::ShaderKind;
use crate::jit::{compile, Backend, CompiledShader, HostFeatures};
use crate::pica::engine::program_from_shbin;
use crate::Engine;
use std::fmt;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// SHBIN or source file.
    input: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Also report, per DVLE, whether this engine (jit, interp, x64, a64) compiles the
    /// program or runs it on the interpreter, and why; how vertex batches run, and for
    /// geometry shaders how point-mode draws run. Code for another architecture than the
    /// host's is generated (not run) for this.
    #[arg(long)]
    engine: Option<Engine>,
    #[command(flatten)]
    float: FloatArgs,
}

/// The JIT to ask about, if any (`None`: the interpreter was requested).
struct JitQuery {
    backend: Option<Backend>,
    mode: FloatMode,
}

/// How one program would run.
enum JitReport {
    Interpreter(String),
    Compiled(Compiled),
    Fallback { backend: Backend, reason: String },
}

/// A program the JIT compiles.
struct Compiled {
    backend: Backend,
    code_bytes: usize,
    compile_us: f64,
    analysis: String,
    /// How vertex batches run the program.
    batches: String,
    /// How point-mode draws run a geometry shader (`None` for vertex shaders).
    points: Option<String>,
}

/// How the multi-vertex code runs groups of `what` (vertices or invocations, one of them
/// `one`), or why each runs alone.
fn grouping(code: &CompiledShader, one: &str, what: &str, ineligible: Option<&str>) -> String {
    match ineligible {
        Some(why) => format!("one {one} at a time ({why})"),
        None => format!(
            "{} {what} per group ({} bytes of multi-vertex code{})",
            code.batch_lanes(),
            code.batch_code().1,
            if code.batch_lane_masks() {
                format!("; {what} that disagree at cmp-dependent branches run with lane masks")
            } else {
                String::new()
            }
        ),
    }
}

impl JitQuery {
    fn new(engine: Engine, mode: FloatMode) -> Result<JitQuery, String> {
        let backend = match engine {
            Engine::Jit => Some(Backend::host().ok_or("no JIT exists for this host architecture")?),
            other => other.backend(),
        };
        Ok(JitQuery { backend, mode })
    }

    fn report(&self, shbin: &crate::pica::shbin::Shbin, dvle: usize) -> JitReport {
        let Some(backend) = self.backend else {
            return JitReport::Interpreter("interpreter requested".into());
        };
        let program = match program_from_shbin(shbin, dvle) {
            Ok((p, _)) => p,
            Err(e) => return JitReport::Interpreter(e.to_string()),
        };
        let features = HostFeatures::for_backend(backend);
        match compile(&program, self.mode, backend, features) {
            Ok(code) => JitReport::Compiled(Compiled {
                backend,
                code_bytes: code.code_size(),
                compile_us: code.compile_time().as_secs_f64() * 1e6,
                analysis: code.analysis().to_string(),
                // Vertex batches run vertex shaders only; geometry shaders run per invocation
                // or as point-mode draws (below).
                batches: match program.kind() {
                    ShaderKind::Geometry => "one vertex at a time (not a vertex shader)".into(),
                    ShaderKind::Vertex => {
                        grouping(&code, "vertex", "vertices", code.batch_ineligibility())
                    }
                },
                points: (program.kind() == ShaderKind::Geometry).then(|| {
                    grouping(
                        &code,
                        "invocation",
                        "invocations",
                        code.points_ineligibility(),
                    )
                }),
            }),
            Err(e) => JitReport::Fallback {
                backend,
                reason: e.to_string(),
            },
        }
    }
}

impl JitReport {
    fn to_json(&self) -> serde_json::Value {
        match self {
            JitReport::Interpreter(why) => serde_json::json!({
                "engine": "interpreter", "compiled": false, "reason": why,
            }),
            JitReport::Compiled(c) => {
                let mut v = serde_json::json!({
                    "engine": c.backend.to_string(), "compiled": true, "code_bytes": c.code_bytes,
                    "compile_us": c.compile_us, "analysis": c.analysis, "batches": c.batches,
                });
                if let Some(points) = &c.points {
                    v["points"] = serde_json::Value::from(points.as_str());
                }
                v
            }
            JitReport::Fallback { backend, reason } => serde_json::json!({
                "engine": backend.to_string(), "compiled": false, "reason": reason,
            }),
        }
    }
}

impl fmt::Display for JitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitReport::Interpreter(why) => write!(f, "engine: interpreter ({why})"),
            JitReport::Compiled(c) => {
                write!(
                    f,
                    "engine: {}, compiled: {} bytes in {:.0} us; {}\n  batches: {}",
                    c.backend, c.code_bytes, c.compile_us, c.analysis, c.batches
                )?;
                match &c.points {
                    Some(points) => write!(f, "\n  points: {points}"),
                    None => Ok(()),
                }
            }
            JitReport::Fallback { backend, reason } => {
                write!(
                    f,
                    "engine: {backend} falls back to the interpreter: {reason}"
                )
            }
        }
    }
}

pub fn info(args: InfoArgs) -> Result<(), String> {
    let (input, json) = (args.input.as_path(), args.json);
    let shbin = load_shbin(input)?;
    let jit = match args.engine {
        Some(e) => Some(JitQuery::new(e, args.float.mode()?)?),
        None => None,
    };
    let dvles: Vec<serde_json::Value> = shbin
        .dvles
        .iter()
        .enumerate()
        .map(|(n, d)| {
            let mut v = serde_json::json!({
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
                // `.in` declarations share the uniform table but name input registers.
                "inputs": d.uniforms.iter().filter(|u| is_input(u)).map(|u| serde_json::json!({
                    "name": u.name,
                    "registers": u.register_range(),
                })).collect::<Vec<_>>(),
                "uniforms": d.uniforms.iter().filter(|u| !is_input(u)).map(|u| serde_json::json!({
                    "name": u.name,
                    "registers": u.register_range(),
                })).collect::<Vec<_>>(),
            });
            if let Some(q) = &jit {
                v["jit"] = q.report(&shbin, n).to_json();
            }
            v
        })
        .collect();
    if json {
        let v = serde_json::json!({
            "code_words": shbin.code.len(),
            "opdescs": shbin.opdescs.len(),
            "size_bytes": shbin.to_bytes().len(),
            "dvles": dvles,
        });
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }
    outln!(
        "{}: {} code words, {} operand descriptors, {} DVLE(s)",
        input.display(),
        shbin.code.len(),
        shbin.opdescs.len(),
        shbin.dvles.len()
    );
    for (n, d) in shbin.dvles.iter().enumerate() {
        outln!(
            "DVLE #{n}: {} shader, entry 0x{:03x}..0x{:03x}, {} constants",
            d.kind,
            d.main,
            d.endmain,
            d.constants.len()
        );
        if d.kind == ShaderKind::Geometry {
            outln!("  geometry input mode: {:?}", d.gs_mode);
        }
        if let Some(q) = &jit {
            outln!("  {}", q.report(&shbin, n));
        }
        for o in &d.outputs {
            let sem = o
                .semantic
                .picasso_name()
                .map(str::to_string)
                .unwrap_or_else(|| format!("{:?}", o.semantic));
            outln!("  output o{:<2} {sem} (mask {:#x})", o.reg, o.mask);
        }
        for u in &d.uniforms {
            outln!(
                "  {:<7} {:<20} {}",
                if is_input(u) { "input" } else { "uniform" },
                u.name,
                u.register_range()
                    .unwrap_or_else(|| format!("{}..{}", u.first, u.last))
            );
        }
    }
    Ok(())
}

/// Whether a uniform-table entry names input registers (an `.in` declaration) rather than
/// uniforms.
fn is_input(u: &crate::pica::shbin::Uniform) -> bool {
    matches!(
        crate::pica::shbin::RegisterFile::decode(u.first),
        Some((crate::pica::shbin::RegisterFile::Input, _))
    )
}
