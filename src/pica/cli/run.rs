//! `picajit run`: execute a shader once and print what it produced.

use super::values;
use super::FloatArgs;
use crate::cli::shared::outln;
use crate::cli::shared::{BudgetArg, EngineArg};
use crate::interp::pica::float::{FloatMode, MaxRule, Rounding, F24};
use crate::interp::pica::program::{GsInputMode, Program, ShaderKind};
use crate::interp::pica::state::{EmittedVertex, Registers, Uniforms, UnitState};
use crate::pica::engine::{
    program_from_shbin, Attributes, EngineConfig, GeometryRunner, GsInput, Invocation, Outcome,
    Shader,
};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// A .pica source or a SHBIN file (with --raw: raw little-endian code words).
    input: PathBuf,
    /// Set an input or uniform: v0=1,2,3,4  c5=0x3f0000  i0=3,0,1,0  b2=true  NAME=...
    /// (one value is broadcast to all four components); or the unit state the invocation
    /// starts from: r0-r15 like inputs, a0=X,Y  aL=N  cmp=X,Y (true/false).
    #[arg(long = "set", value_name = "REG=VALUES")]
    set: Vec<String>,
    /// Treat the input as raw little-endian code words, as `disasm --raw` does (and as an
    /// emulator passes them to picajit_shader_create): --opdescs, --entry (an address) and
    /// --kind describe the rest; uniforms are set by register.
    #[arg(long)]
    raw: bool,
    /// With --raw: a file of operand descriptors, 32-bit little-endian words (as the C ABI
    /// takes them) or 64-bit SHBIN entries; up to 4096 (entries past 128 are never read).
    #[arg(long, requires = "raw")]
    opdescs: Option<PathBuf>,
    /// With --opdescs: bytes per descriptor, 4 or 8 (default: 8 when the file's length is a
    /// multiple of 8 and every high half is at most 0xF, else 4).
    #[arg(long, requires = "opdescs")]
    opdesc_size: Option<usize>,
    /// With --raw: the shader kind.
    #[arg(long, default_value = "vertex", value_parser = ["vertex", "geometry"])]
    kind: String,
    /// Also print r0-r15 after the run (with --json: `regs` and `regs_f32`).
    #[arg(long)]
    regs: bool,
    /// The reading of MAX(0, -inf): compare (a > b ? a : b, gives 0; the default) or
    /// neg-inf-second (a -inf second operand is the result). See docs/float-max.md.
    #[arg(long, default_value = "compare")]
    max_rule: String,
    #[command(flatten)]
    engine: EngineArg,
    #[command(flatten)]
    float: FloatArgs,
    /// Which DVLE of the file to run (default 0), or with --entry a label.
    #[arg(long, default_value_t = 0)]
    dvle: usize,
    /// Entry point: a DVLE label name or a word address (overrides the DVLE's main).
    #[arg(long)]
    entry: Option<String>,
    #[command(flatten)]
    budget: BudgetArg,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn f24_hex(v: f32) -> String {
    // F24 registers hold exact f24 values, so this is lossless there; F32-mode results that
    // f24 cannot hold are truncated for this column and shown whole in `outputs_f32`.
    let f = F24::from_f32_exact(v).unwrap_or_else(|| F24::from_f32(v, Rounding::TowardZero));
    format!("0x{:06x}", f.bits())
}

fn regs_json(outputs: &[[f32; 4]; 16], written: u16) -> (Value, Value) {
    let mut f24 = Map::new();
    let mut f32m = Map::new();
    for (n, o) in outputs.iter().enumerate() {
        if written >> n & 1 != 0 {
            f24.insert(format!("o{n}"), json!(o.map(f24_hex)));
            f32m.insert(
                format!("o{n}"),
                json!(o.map(|v| format!("0x{:08x}", v.to_bits()))),
            );
        }
    }
    (Value::Object(f24), Value::Object(f32m))
}

/// r0-r15 as raw f24 bit strings and as f32 bits, like the outputs.
fn temps_json(temps: &[[f32; 4]; 16]) -> (Value, Value) {
    let mut f24 = Map::new();
    let mut f32m = Map::new();
    for (n, r) in temps.iter().enumerate() {
        f24.insert(format!("r{n}"), json!(r.map(f24_hex)));
        f32m.insert(
            format!("r{n}"),
            json!(r.map(|v| format!("0x{:08x}", v.to_bits()))),
        );
    }
    (Value::Object(f24), Value::Object(f32m))
}

fn emit_json(e: &EmittedVertex, written: u16) -> Value {
    let (outputs, outputs_f32) = regs_json(&e.outputs, written);
    json!({
        "slot": e.slot,
        "primitive": e.primitive,
        "winding": e.winding,
        "outputs": outputs,
        "outputs_f32": outputs_f32,
    })
}

/// Output registers the program can write (from its destination fields), so only those
/// are printed.
fn written_outputs(shader: &Shader) -> u16 {
    use crate::interp::pica::isa::{decode, DstReg, Instruction};
    let mut mask = 0u16;
    for &w in shader.program().code() {
        let dst = match decode(w) {
            Instruction::Binary { dst, .. }
            | Instruction::Unary { dst, .. }
            | Instruction::Mad { dst, .. } => dst,
            _ => continue,
        };
        if let DstReg::Output(i) = dst {
            mask |= 1 << (i & 15);
        }
    }
    mask
}

pub fn run(args: RunArgs) -> Result<(), String> {
    let mode = args.float.mode()?;
    let address = |entry: &str| -> Option<u32> {
        match entry.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => entry.parse().ok(),
        }
    };
    let shbin;
    let (program, mut uniforms, dvle, gs_mode) = if args.raw {
        let code = super::read_words(&args.input)?;
        let descs = match &args.opdescs {
            Some(p) => super::read_descs(p, args.opdesc_size)?,
            None => Vec::new(),
        };
        let entry = match &args.entry {
            Some(e) => address(e).ok_or_else(|| format!("bad entry '{e}' (a word address)"))?,
            None => 0,
        };
        let kind = if args.kind == "geometry" {
            ShaderKind::Geometry
        } else {
            ShaderKind::Vertex
        };
        let program = Program::new(code, descs, entry, kind).map_err(|e| e.to_string())?;
        (program, Uniforms::default(), None, GsInputMode::Point)
    } else {
        shbin = super::load_shbin(&args.input)?;
        let (mut program, uniforms) =
            program_from_shbin(&shbin, args.dvle).map_err(|e| e.to_string())?;
        let dvle = &shbin.dvles[args.dvle];
        if let Some(entry) = &args.entry {
            let addr = match dvle.labels.iter().find(|l| &l.name == entry) {
                Some(l) => l.offset,
                None => address(entry).ok_or_else(|| {
                    format!(
                        "entry '{entry}' is neither a label of DVLE #{} nor an address",
                        args.dvle
                    )
                })?,
            };
            program = program.with_entry(addr).map_err(|e| e.to_string())?;
        }
        (program, uniforms, Some(dvle), dvle.gs_mode)
    };
    let mut inputs = [[0.0f32; 4]; 16];
    let mut start = UnitState::default();
    for s in &args.set {
        if let Some(r) = values::parse_unit_state(s, mode, &mut start) {
            r?;
            continue;
        }
        let a = values::parse(s, mode, dvle)?;
        values::apply(&a, &mut inputs, &mut uniforms);
    }
    let max_rule = MaxRule::parse(&args.max_rule).ok_or_else(|| {
        format!(
            "unknown --max-rule '{}' (compare, neg-inf-second)",
            args.max_rule
        )
    })?;
    let config = EngineConfig::default()
        .with_engine(args.engine.engine)
        .with_float_mode(mode)
        .with_budget(args.budget.get())
        .with_max_rule(max_rule);
    let kind = program.kind();
    let shader = Shader::new(program, &config).map_err(|e| e.to_string())?;
    let written = written_outputs(&shader);

    // One invocation: its error is the interpreter's, without an index.
    let failed = |e| match e {
        crate::Error::Exec { error, .. } => format!("execution failed: {error}"),
        e => format!("execution failed: {e}"),
    };
    let (regs, info, emits): (Registers, Outcome, Vec<EmittedVertex>) = match kind {
        ShaderKind::Vertex => {
            // Raw f24 words reach v0-v15 exactly; decimals are converted by the input rule.
            let raw = values::f24_inputs(&inputs, mode);
            let input: Attributes = match &raw {
                Some(raw) => raw.into(),
                None => (&inputs).into(),
            };
            let mut regs = Registers::default();
            let info = shader
                .invoke(
                    Invocation::one(&uniforms, &mut regs)
                        .input(input)
                        .from_state(&start),
                )
                .map_err(failed)?;
            (regs, info, Vec::new())
        }
        ShaderKind::Geometry => {
            let mut runner = GeometryRunner::default();
            runner
                .registers
                .set_unit_state(&shader.convert_state(&start));
            let raw = values::f24_inputs(&inputs, mode);
            let input = match &raw {
                Some(raw) => GsInput::PointF24(raw),
                None => GsInput::Point(&inputs),
            };
            let info = runner
                .invoke(&shader, gs_mode, &mut uniforms, input)
                .map_err(failed)?;
            let (emitted, _) = runner.state.take_output();
            (runner.registers, info, emitted)
        }
    };

    if args.json {
        let (outputs, outputs_f32) = regs_json(&regs.output, written);
        let mut v = json!({
            "engine": shader.engine().to_string(),
            "float": match mode { FloatMode::F32 => "f32", FloatMode::F24(_) => "f24" },
            "outputs": outputs,
            "outputs_f32": outputs_f32,
            "cmp": [regs.cmp[0] != 0, regs.cmp[1] != 0],
            "a0": regs.a0,
            "aL": regs.al,
            "instructions": info.instructions,
        });
        if let Some(reason) = shader.fallback_reason() {
            v["fallback_reason"] = json!(reason);
        }
        if args.regs {
            let (f24, f32m) = temps_json(&regs.temp);
            v["regs"] = f24;
            v["regs_f32"] = f32m;
        }
        if kind == ShaderKind::Geometry {
            v["emits"] = json!(emits
                .iter()
                .map(|e| emit_json(e, written))
                .collect::<Vec<_>>());
        }
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }

    outln!(
        "engine: {}{}{}",
        shader.engine(),
        if shader.compiled().is_some_and(|c| c.is_emulated()) {
            " (emulated)"
        } else {
            ""
        },
        shader
            .fallback_reason()
            .map(|r| format!(" (fallback: {r})"))
            .unwrap_or_default()
    );
    outln!(
        "{:<4} {:>14} {:>14} {:>14} {:>14}",
        "reg",
        "x",
        "y",
        "z",
        "w"
    );
    // A register's four values in decimal, then as f24 words.
    let print_row = |name: String, r: &[f32; 4], indent: &str| {
        outln!(
            "{indent}{name:<4} {:>14} {:>14} {:>14} {:>14}",
            r[0],
            r[1],
            r[2],
            r[3]
        );
        outln!(
            "{indent}{:<4} {:>14} {:>14} {:>14} {:>14}",
            "",
            f24_hex(r[0]),
            f24_hex(r[1]),
            f24_hex(r[2]),
            f24_hex(r[3])
        );
    };
    let print_regs = |outputs: &[[f32; 4]; 16], indent: &str| {
        for (n, o) in outputs.iter().enumerate() {
            if written >> n & 1 != 0 {
                print_row(format!("o{n}"), o, indent);
            }
        }
    };
    print_regs(&regs.output, "");
    if args.regs {
        for (n, r) in regs.temp.iter().enumerate() {
            print_row(format!("r{n}"), r, "");
        }
    }
    outln!(
        "cmp = ({}, {})  a0 = ({}, {})  aL = {}  instructions = {}",
        regs.cmp[0] != 0,
        regs.cmp[1] != 0,
        regs.a0[0],
        regs.a0[1],
        regs.al,
        info.instructions
    );
    for (n, e) in emits.iter().enumerate() {
        outln!(
            "emit #{n}: slot {}{}{}",
            e.slot,
            if e.primitive { ", primitive" } else { "" },
            if e.winding { ", inverted winding" } else { "" }
        );
        print_regs(&e.outputs, "    ");
    }
    Ok(())
}
