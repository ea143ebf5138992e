//! PICA200 vertex and geometry shaders: control-flow analysis, one lowering for both shapes
//! (one invocation per call, and several vertices per vector register), the per-host
//! emitters of each shape, and the compiled shader with its invocation API.

pub(crate) mod a64;
pub(crate) mod analysis;
pub(crate) mod batch;
pub mod cache;
pub(crate) mod call;
#[cfg(feature = "emulate-a64")]
pub(crate) mod emulated;
pub(crate) mod invocation;
pub(crate) mod invoke;
pub(crate) mod layout;
pub(crate) mod lower;
pub(crate) mod masm;
pub(crate) mod recipes;
pub(crate) mod shader;
pub(crate) mod spare;
pub(crate) mod x64;
