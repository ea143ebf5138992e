//! The one way to run a compiled shader: an [`Invocation`] says what runs (one invocation, a
//! vertex batch, or a point-mode geometry run), on which state and under which limits;
//! [`CompiledShader::invoke`] runs it and returns one [`Outcome`] or one [`Error`]. The
//! drivers behind it (per-invocation code with the undo log, the multi-vertex groups) are in
//! `invoke.rs` and `batch/`.

use crate::error::Error;
use crate::pica::batch::geometry::Points;
use crate::pica::batch::{BatchError, BatchInfo};
use crate::pica::shader::CompiledShader;
use picajit_interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms, UnitState};

/// The instruction budget of an [`Invocation`] that does not set one: 2^20 per invocation,
/// the engine's default.
pub const DEFAULT_BUDGET: u64 = 1 << 20;

/// A register bank row set: v0-v15 of one vertex, or o0-o15.
type Bank = [[f32; 4]; 16];

/// One call of a compiled shader (see the module docs). Built with [`Invocation::one`],
/// [`Invocation::batch`] or [`Invocation::points`], then refined with the setters; each
/// setter applies to the kinds its docs name, and [`CompiledShader::invoke`] refuses
/// ([`Error::Invalid`]) the others rather than ignoring them.
#[derive(Debug)]
pub struct Invocation<'a> {
    work: Work<'a>,
    budget: u64,
    geometry: Option<&'a mut GeometryState>,
    mask: Option<u16>,
    from: Option<&'a UnitState>,
    compiled_only: bool,
}

#[derive(Debug)]
enum Work<'a> {
    One {
        uniforms: &'a Uniforms,
        regs: &'a mut Registers,
    },
    Batch {
        uniforms: &'a Uniforms,
        inputs: &'a [Bank],
        outputs: &'a mut [Bank],
    },
    Points {
        uniforms: &'a mut Uniforms,
        regs: &'a mut Registers,
        geometry: &'a mut GeometryState,
        inputs: &'a [Bank],
        out: &'a mut EmitBuffer,
    },
}

/// What a finished [`Invocation`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Instructions executed over all invocations of the call.
    pub instructions: u64,
    /// Invocations that compiled code could not finish and the interpreter ran.
    pub deopts: usize,
}

impl From<BatchInfo> for Outcome {
    fn from(b: BatchInfo) -> Outcome {
        Outcome {
            instructions: b.instructions,
            deopts: b.deopts,
        }
    }
}

impl From<BatchError> for Error {
    fn from(e: BatchError) -> Error {
        Error::Exec {
            index: e.index,
            error: e.error,
        }
    }
}

impl<'a> Invocation<'a> {
    #[inline]
    fn new(work: Work<'a>) -> Invocation<'a> {
        Invocation {
            work,
            budget: DEFAULT_BUDGET,
            geometry: None,
            mask: None,
            from: None,
            compiled_only: false,
        }
    }

    /// One invocation on `regs`, exactly like
    /// [`Interpreter::run`](picajit_interp::pica::exec::Interpreter::run): same registers, same
    /// results, same errors (as [`Error::Exec`] with index 0). Geometry shaders need
    /// [`Self::geometry`].
    #[inline]
    pub fn one(uniforms: &'a Uniforms, regs: &'a mut Registers) -> Invocation<'a> {
        Invocation::new(Work::One { uniforms, regs })
    }

    /// A vertex-shader batch: vertex `k` starts from
    /// [`Registers::reset_working_state`] (or [`Self::from_state`]) with inputs `inputs[k]`
    /// and leaves its o0-o15 in `outputs[k]` (the shorter of the two slices decides the
    /// count). Vertices that deopt run on the interpreter; the first interpreter error stops
    /// the batch with that vertex's index. Groups of eight run on the multi-vertex backend
    /// where the host and the program allow it.
    #[inline]
    pub fn batch(
        uniforms: &'a Uniforms,
        inputs: &'a [Bank],
        outputs: &'a mut [Bank],
    ) -> Invocation<'a> {
        Invocation::new(Work::Batch {
            uniforms,
            inputs,
            outputs,
        })
    }

    /// A point-mode geometry shader over many input vertices, exactly as
    /// [`Interpreter::run_points`](picajit_interp::pica::exec::Interpreter::run_points) does: one
    /// invocation per row of `inputs`, registers and geometry state carried over, b15 set
    /// after each invocation, emitted vertices into `out`. Stops at the first invocation that
    /// fails on the interpreter (its index in the error; its earlier EMITs are in `out`).
    /// Runs of eight invocations execute together on the multi-vertex backend where the
    /// program allows it (see [`CompiledShader::points_ineligibility`]).
    #[inline]
    pub fn points(
        uniforms: &'a mut Uniforms,
        regs: &'a mut Registers,
        geometry: &'a mut GeometryState,
        inputs: &'a [Bank],
        out: &'a mut EmitBuffer,
    ) -> Invocation<'a> {
        Invocation::new(Work::Points {
            uniforms,
            regs,
            geometry,
            inputs,
            out,
        })
    }

    /// Instruction budget per invocation (default [`DEFAULT_BUDGET`]). Every kind.
    #[inline]
    pub fn budget(mut self, budget: u64) -> Invocation<'a> {
        self.budget = budget;
        self
    }

    /// The geometry state of a single geometry-shader invocation (EMIT, SETEMIT and the
    /// other output bank); `None` leaves it out. [`Self::one`] only.
    #[inline]
    pub fn geometry(mut self, geometry: Option<&'a mut GeometryState>) -> Invocation<'a> {
        self.geometry = geometry;
        self
    }

    /// The output registers the caller reads (bit n = o`n`): those are written exactly as
    /// without a mask; every other register of an output row either keeps its previous
    /// contents or receives the vertex's value, whichever the backend finds cheaper.
    /// [`Self::batch`] only.
    #[inline]
    pub fn mask(mut self, out_mask: u16) -> Invocation<'a> {
        self.mask = Some(out_mask);
        self
    }

    /// Every vertex of the batch starts from `start` (r0-r15, a0, aL, cmp; outputs +0)
    /// instead of [`Registers::reset_working_state`]. [`Self::batch`] only.
    #[inline]
    pub fn from_state(mut self, start: &'a UnitState) -> Invocation<'a> {
        self.from = Some(start);
        self
    }

    /// Run compiled code only, without the interpreter fallback: a stop is
    /// [`Error::Stopped`] with the registers and geometry state as they were before the call
    /// (`emitted` may have more spare capacity). For tests and statistics that need the raw
    /// outcome. [`Self::one`] only.
    #[inline]
    pub fn compiled_only(mut self) -> Invocation<'a> {
        self.compiled_only = true;
        self
    }
}

impl CompiledShader {
    /// Run `invocation` (see [`Invocation`]): compiled code first, the interpreter for
    /// whatever compiled code cannot finish, so results and errors are the interpreter's.
    // Always inlined: a caller builds one kind of invocation, so the other arms and the
    // option checks fold away; as a call, building and matching the invocation cost one-vertex
    // batches a few ns per vertex (`picajit bench --batch 1 --clock cpu`, `mvp`).
    #[inline(always)]
    pub fn invoke(&self, invocation: Invocation<'_>) -> Result<Outcome, Error> {
        let Invocation {
            work,
            budget,
            geometry,
            mask,
            from,
            compiled_only,
        } = invocation;
        let only_one = |what| match (geometry.is_some(), compiled_only) {
            (false, false) => Ok(()),
            _ => Err(Error::Invalid(what)),
        };
        match work {
            Work::One { uniforms, regs } => {
                if mask.is_some() || from.is_some() {
                    return Err(Error::Invalid(
                        "a single invocation takes no output mask or start state",
                    ));
                }
                if compiled_only {
                    return self
                        .try_run(regs, uniforms, geometry, budget)
                        .map(|info| Outcome {
                            instructions: info.instructions,
                            deopts: 0,
                        })
                        .map_err(Error::Stopped);
                }
                self.run(regs, uniforms, geometry, budget)
                    .map(|info| Outcome {
                        instructions: info.instructions,
                        deopts: 0,
                    })
                    .map_err(|error| Error::Exec { index: 0, error })
            }
            Work::Batch {
                uniforms,
                inputs,
                outputs,
            } => {
                only_one(
                    "a batch takes no geometry state and always has the interpreter fallback",
                )?;
                let mask = mask.unwrap_or(0xFFFF);
                let r = match from {
                    Some(start) => {
                        self.run_batch_from(inputs, outputs, uniforms, budget, mask, start)
                    }
                    None => self.run_batch_masked(inputs, outputs, uniforms, budget, mask),
                };
                Ok(r?.into())
            }
            Work::Points {
                uniforms,
                regs,
                geometry: state,
                inputs,
                out,
            } => {
                only_one("a point run takes its geometry state in `points` and always has the interpreter fallback")?;
                if mask.is_some() || from.is_some() {
                    return Err(Error::Invalid(
                        "a point run takes no output mask (the EmitBuffer's) or start state",
                    ));
                }
                let mut points = Points {
                    regs,
                    uniforms,
                    geometry: state,
                    out,
                };
                Ok(self.run_points(&mut points, inputs, budget)?.into())
            }
        }
    }
}
