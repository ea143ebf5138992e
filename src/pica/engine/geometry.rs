//! Geometry shaders as hardware runs them: a [`GeometryRunner`] keeps the registers, both
//! output banks and the vertex buffer from one invocation to the next, and sets b15 after
//! each.

use super::invocation::{Attributes, Invocation, Outcome};
use super::shader::Shader;
use crate::common::Error;
use picajit_interp::pica::float::F24;
use picajit_interp::pica::program::GsInputMode;
use picajit_interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms};

/// Geometry-shader execution state kept across invocations, as on hardware: registers, the
/// output banks and the vertex buffer. After each invocation b15 is set.
#[derive(Clone, Debug, Default)]
pub struct GeometryRunner {
    /// Registers, kept between invocations.
    pub registers: Registers,
    /// Emit state and emitted vertices.
    pub state: GeometryState,
}

/// Input of one geometry-shader invocation.
#[derive(Clone, Copy, Debug)]
pub enum GsInput<'a> {
    /// Point mode: one vertex's f32 attributes in v0-v15 (converted by
    /// [`Shader::convert_inputs`]).
    Point(&'a [[f32; 4]; 16]),
    /// Point mode: one vertex's raw f24 words in v0-v15, exactly (see [`Attributes::F24`]).
    PointF24(&'a [[F24; 4]; 16]),
    /// Variable and fixed modes: attribute rows written to the float uniforms from the
    /// mode's first register (in variable mode after the vertex-count row, which is
    /// `count` in every lane).
    Uniforms { rows: &'a [[f32; 4]], count: u8 },
}

impl GeometryRunner {
    /// Run one invocation of `shader` in `mode`.
    pub fn invoke(
        &mut self,
        shader: &Shader,
        mode: GsInputMode,
        uniforms: &mut Uniforms,
        input: GsInput<'_>,
    ) -> Result<Outcome, Error> {
        let point: Option<Attributes> = match input {
            GsInput::Point(v) => Some(v.into()),
            GsInput::PointF24(v) => Some(v.into()),
            GsInput::Uniforms { rows, count } => {
                let first = match mode {
                    GsInputMode::Variable { first_uniform, .. } => {
                        let first = first_uniform as usize;
                        uniforms.set_float_raw(first, [count as f32; 4]);
                        first + 1
                    }
                    GsInputMode::Fixed { first_uniform, .. } => first_uniform as usize,
                    GsInputMode::Point => 0,
                };
                for (k, row) in rows.iter().enumerate() {
                    uniforms.set_float_raw(first + k, shader.convert_row(*row));
                }
                None
            }
        };
        let mut invocation =
            Invocation::one(uniforms, &mut self.registers).geometry(Some(&mut self.state));
        if let Some(point) = point {
            invocation = invocation.input(point);
        }
        let outcome = shader.invoke(invocation);
        uniforms.set_bool(15, true);
        outcome
    }

    /// Run one point-mode invocation per input vertex, as [`Self::invoke`] with
    /// [`GsInput::Point`] would one after the other, on [`Invocation::points`]: emitted
    /// vertices (those still pending in [`Self::state`] first) go to `out`, packed to the
    /// registers in `out.mask()`. On the JIT, groups of eight points run together where the
    /// program allows it. An error names the failing point; what it and the points before
    /// it emitted is in `out`.
    pub fn invoke_points<'a>(
        &mut self,
        shader: &Shader,
        uniforms: &mut Uniforms,
        inputs: impl Into<Attributes<'a>>,
        out: &mut EmitBuffer,
    ) -> Result<Outcome, Error> {
        let inputs: Attributes = inputs.into();
        shader.invoke(Invocation::points(
            uniforms,
            &mut self.registers,
            &mut self.state,
            inputs,
            out,
        ))
    }
}
