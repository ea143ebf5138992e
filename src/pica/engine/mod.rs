//! The engine API: prepare a PICA200 program for an [`Engine`](crate::Engine) and run it.
//!
//! A [`Shader`] is a program prepared for one [`EngineConfig`]. With the JIT selected (the
//! default, [`Engine::Jit`](crate::Engine::Jit)) it holds compiled code when the analysis
//! proves that compiled code reproduces the hardware, and otherwise runs on the reference
//! interpreter; [`Shader::fallback_reason`] says why. Every run is one [`Invocation`] passed
//! to [`Shader::invoke`] (one invocation, a vertex batch or a point-mode geometry run, on
//! f32 attributes, raw f24 words or register values: [`Attributes`]); either way, results
//! are bit-identical to [`picajit_interp::pica::exec::Interpreter`].
//!
//! ```no_run
//! use picajit::pica::engine::{program_from_shbin, EngineConfig, Invocation, Shader};
//! # fn f(shbin: &picajit::pica::shbin::Shbin) -> Result<(), picajit::Error> {
//! let (program, uniforms) = program_from_shbin(shbin, 0)?;
//! let shader = Shader::new(program, &EngineConfig::default())?;
//! let inputs = vec![[[0.0f32; 4]; 16]; 1000];
//! let mut outputs = vec![[[0.0f32; 4]; 16]; 1000];
//! let outcome = shader.invoke(Invocation::batch(&uniforms, &inputs, &mut outputs))?;
//! println!("{} instructions on {}", outcome.instructions, shader.engine());
//! # Ok(())
//! # }
//! ```

mod geometry;
mod invocation;
mod shader;
mod stage;

pub use geometry::{GeometryRunner, GsInput};
pub use invocation::{Attributes, Invocation, Outcome};
pub use shader::{
    apply_constants, expand_f24, program_from_shbin, program_output_mask, EngineConfig, Shader,
    ShaderAt,
};
pub use stage::{batch_threads, max_batch_threads, PARALLEL_MIN_BATCH, PARALLEL_MIN_PER_THREAD};
