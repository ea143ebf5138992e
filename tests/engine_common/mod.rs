//! What the engine tests share: one vertex from the clean state, on the registers the test
//! then reads.

use picajit::interp::pica::state::{Registers, Uniforms};
use picajit::pica::engine::{Attributes, Invocation, Outcome, Shader};
use picajit::Error;

/// One invocation of `shader` from the clean state with `input` in v0-v15 (converted as
/// [`Attributes`] says): the registers it leaves and what it did.
pub fn run_vertex<'a>(
    shader: &Shader,
    uniforms: &Uniforms,
    input: impl Into<Attributes<'a>>,
) -> Result<(Registers, Outcome), Error> {
    let input: Attributes = input.into();
    let mut regs = Registers::default();
    let outcome = shader.invoke(Invocation::one(uniforms, &mut regs).input(input))?;
    Ok((regs, outcome))
}
