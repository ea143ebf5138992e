//! Single invocations of a compiled shader through the JIT facade
//! (`picajit_jit::Invocation`), with results in the interpreter's types, so that the
//! differential tests and fuzz targets compare them with `Interpreter::run` directly.

use picajit_interp::pica::exec::{ExecError, RunInfo};
use picajit_interp::pica::state::{GeometryState, Registers, Uniforms};
use picajit_jit::{CompiledShader, Error, Invocation, JitExit};

/// One invocation with the interpreter fallback: the interpreter's result, errors included.
pub fn run_one(
    shader: &CompiledShader,
    regs: &mut Registers,
    uniforms: &Uniforms,
    geometry: Option<&mut GeometryState>,
    budget: u64,
) -> Result<RunInfo, ExecError> {
    let inv = Invocation::one(uniforms, regs).geometry(geometry);
    invoke(shader, inv.budget(budget)).map_err(|e| match e {
        Error::Exec { error, .. } => error,
        other => panic!("a single invocation failed other than on the interpreter: {other}"),
    })
}

/// Compiled code only ([`Invocation::compiled_only`]): the raw stop instead of the
/// interpreter's result.
pub fn run_compiled(
    shader: &CompiledShader,
    regs: &mut Registers,
    uniforms: &Uniforms,
    geometry: Option<&mut GeometryState>,
    budget: u64,
) -> Result<RunInfo, JitExit> {
    let inv = Invocation::one(uniforms, regs).geometry(geometry);
    invoke(shader, inv.budget(budget).compiled_only()).map_err(|e| match e {
        Error::Stopped(exit) => exit,
        other => panic!("a compiled-only invocation failed other than by stopping: {other}"),
    })
}

fn invoke(shader: &CompiledShader, inv: Invocation) -> Result<RunInfo, Error> {
    shader.invoke(inv).map(|o| RunInfo {
        instructions: o.instructions,
    })
}
