//! The one way to run a [`Shader`]: an [`Invocation`] says what runs (one invocation, a vertex
//! batch or a point-mode geometry run), on which inputs and state; [`Shader::invoke`] runs it
//! on the shader's engine and returns one [`Outcome`] or one [`Error`]. The interpreter's
//! per-vertex loop, the JIT's invocations and the conversions of every input form are written
//! once here for all of them.

use super::shader::{expand_f24, Shader, SMALL_BATCH};
use super::stage::{chunked, split_rows, stage_chunks};
use crate::common::Error;
use picajit_interp::pica::float::{FloatMode, F24};
use picajit_interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms, UnitState};

/// A register bank row set: v0-v15 of one vertex, or o0-o15.
type Bank = [[f32; 4]; 16];

/// Vertex attributes in one of the forms the engine takes, for one vertex or many. `From`
/// makes one from a vertex (`&[[f32; 4]; 16]`, `&[[F24; 4]; 16]`) or from a slice, array or
/// vector of them.
#[derive(Clone, Copy, Debug)]
pub enum Attributes<'a> {
    /// f32 attributes, converted by [`Shader::convert_inputs`], the one rule for f32 input
    /// (used as they are in F32 mode).
    F32(&'a [Bank]),
    /// Raw f24 words as the hardware's input stage delivers them: every pattern reaches
    /// v0-v15 exactly (subnormal patterns, -0, NaN payloads, infinities), so a MOV outputs
    /// what it read. In F32 mode the words are widened to the f32 of the same value.
    F24(&'a [[[F24; 4]; 16]]),
    /// Register values already, taken as they are: what [`Shader::convert_inputs`] or
    /// [`expand_f24`] produce (in F24 modes f24 values only).
    Registers(&'a [Bank]),
}

impl<'a> From<&'a Bank> for Attributes<'a> {
    fn from(v: &'a Bank) -> Attributes<'a> {
        Attributes::F32(std::slice::from_ref(v))
    }
}

impl<'a> From<&'a [[F24; 4]; 16]> for Attributes<'a> {
    fn from(v: &'a [[F24; 4]; 16]) -> Attributes<'a> {
        Attributes::F24(std::slice::from_ref(v))
    }
}

impl<'a> From<&'a [Bank]> for Attributes<'a> {
    fn from(v: &'a [Bank]) -> Attributes<'a> {
        Attributes::F32(v)
    }
}

impl<'a> From<&'a [[[F24; 4]; 16]]> for Attributes<'a> {
    fn from(v: &'a [[[F24; 4]; 16]]) -> Attributes<'a> {
        Attributes::F24(v)
    }
}

impl<'a> From<&'a Vec<Bank>> for Attributes<'a> {
    fn from(v: &'a Vec<Bank>) -> Attributes<'a> {
        Attributes::F32(v)
    }
}

impl<'a> From<&'a Vec<[[F24; 4]; 16]>> for Attributes<'a> {
    fn from(v: &'a Vec<[[F24; 4]; 16]>) -> Attributes<'a> {
        Attributes::F24(v)
    }
}

impl<'a, const N: usize> From<&'a [Bank; N]> for Attributes<'a> {
    fn from(v: &'a [Bank; N]) -> Attributes<'a> {
        Attributes::F32(v)
    }
}

impl<'a, const N: usize> From<&'a [[[F24; 4]; 16]; N]> for Attributes<'a> {
    fn from(v: &'a [[[F24; 4]; 16]; N]) -> Attributes<'a> {
        Attributes::F24(v)
    }
}

impl<'a> Attributes<'a> {
    /// Vertices.
    pub fn len(&self) -> usize {
        match self {
            Attributes::F32(v) | Attributes::Registers(v) => v.len(),
            Attributes::F24(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vertices in `range`.
    fn slice(self, range: std::ops::Range<usize>) -> Attributes<'a> {
        match self {
            Attributes::F32(v) => Attributes::F32(&v[range]),
            Attributes::F24(v) => Attributes::F24(&v[range]),
            Attributes::Registers(v) => Attributes::Registers(&v[range]),
        }
    }

    /// The vertices as register values with no conversion, when they are that already.
    fn as_registers(self, mode: FloatMode) -> Option<&'a [Bank]> {
        match (self, mode) {
            (Attributes::Registers(v), _) | (Attributes::F32(v), FloatMode::F32) => Some(v),
            _ => None,
        }
    }
}

/// What a finished [`Invocation`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Instructions executed over all invocations of the call.
    pub instructions: u64,
    /// Vertices a point-mode run appended to its [`EmitBuffer`] (the records that were
    /// pending included); 0 for the other kinds.
    pub emitted: usize,
}

/// One call of a [`Shader`]. Built with [`Invocation::one`], [`Invocation::batch`] or
/// [`Invocation::points`], then refined with the setters; each setter applies to the kinds
/// its docs name, and [`Shader::invoke`] refuses ([`Error::Invalid`]) the others rather
/// than ignoring them. Every engine gives the interpreter's results bit for bit; a failing
/// invocation is [`Error::Exec`] with its index in the call (0 for a single invocation).
#[derive(Debug)]
pub struct Invocation<'a> {
    work: Work<'a>,
    input: Option<Attributes<'a>>,
    geometry: Option<&'a mut GeometryState>,
    mask: Option<u16>,
    from: Option<&'a UnitState>,
    state_out: Option<&'a mut UnitState>,
}

#[derive(Debug)]
enum Work<'a> {
    One {
        uniforms: &'a Uniforms,
        regs: &'a mut Registers,
    },
    Batch {
        uniforms: &'a Uniforms,
        inputs: Attributes<'a>,
        outputs: &'a mut [Bank],
    },
    Points {
        uniforms: &'a mut Uniforms,
        regs: &'a mut Registers,
        geometry: &'a mut GeometryState,
        inputs: Attributes<'a>,
        out: &'a mut EmitBuffer,
    },
}

impl<'a> Invocation<'a> {
    fn new(work: Work<'a>) -> Invocation<'a> {
        Invocation {
            work,
            input: None,
            geometry: None,
            mask: None,
            from: None,
            state_out: None,
        }
    }

    /// One invocation on caller-owned registers, used as they are (geometry shaders keep
    /// state between invocations; [`Self::input`] and [`Self::from_state`] load a vertex and
    /// a unit state first). Geometry shaders need [`Self::geometry`] for their EMITs.
    pub fn one(uniforms: &'a Uniforms, regs: &'a mut Registers) -> Invocation<'a> {
        Invocation::new(Work::One { uniforms, regs })
    }

    /// A vertex batch: vertex `k` reads `inputs[k]` and writes its o0-o15 to `outputs[k]`
    /// (the shorter of the two decides the count). Every vertex starts from the clean working
    /// state (or [`Self::from_state`]), so vertices are independent of each other and of how
    /// an engine groups them or how many threads share the batch
    /// ([`Shader::set_threads`]). [`Outcome::instructions`] counts all of them; a failing
    /// vertex stops the batch, the outputs before it valid.
    pub fn batch(
        uniforms: &'a Uniforms,
        inputs: impl Into<Attributes<'a>>,
        outputs: &'a mut [Bank],
    ) -> Invocation<'a> {
        Invocation::new(Work::Batch {
            uniforms,
            inputs: inputs.into(),
            outputs,
        })
    }

    /// A point-mode geometry shader over many input points, as a GPU runs it for a draw:
    /// invocation `k` gets `inputs[k]` in v0-v15 and everything else (registers, both output
    /// banks, the vertex buffer, SETEMIT state) from invocation `k - 1`; b15 of `uniforms` is
    /// set after each invocation, also after one that fails. The records `geometry` has
    /// pending are moved into `out` first, then every EMIT is appended to `out` (the registers
    /// in `out.mask()` only). Afterwards `regs`, `geometry` and `uniforms` are exactly what
    /// one [`Self::one`] per point (input loaded, b15 set after each) leaves, with the EMITs
    /// drained by [`GeometryState::drain_into`].
    ///
    /// On the JIT, runs of eight invocations execute together on the multi-vertex backend
    /// where the program allows it
    /// ([`CompiledShader::points_ineligibility`](picajit_jit::CompiledShader::points_ineligibility))
    /// and `out.mask()` names only registers the program writes ([`Shader::output_mask`] or a
    /// subset). A failing invocation stops the run; what it and the earlier ones emitted is in
    /// `out`.
    pub fn points(
        uniforms: &'a mut Uniforms,
        regs: &'a mut Registers,
        geometry: &'a mut GeometryState,
        inputs: impl Into<Attributes<'a>>,
        out: &'a mut EmitBuffer,
    ) -> Invocation<'a> {
        Invocation::new(Work::Points {
            uniforms,
            regs,
            geometry,
            inputs: inputs.into(),
            out,
        })
    }

    /// Load one vertex's attributes (the first of `input`) into v0-v15 before the run, in the
    /// register representation ([`Attributes`]). [`Self::one`] only.
    pub fn input(mut self, input: impl Into<Attributes<'a>>) -> Invocation<'a> {
        self.input = Some(input.into());
        self
    }

    /// The geometry state of a single geometry-shader invocation (EMIT, SETEMIT and the other
    /// output bank); `None` leaves it out. [`Self::one`] only.
    pub fn geometry(mut self, geometry: Option<&'a mut GeometryState>) -> Invocation<'a> {
        self.geometry = geometry;
        self
    }

    /// The output registers the caller reads (bit n = o`n`), for example those an output
    /// map names: those are written exactly as without a mask; every other register of an
    /// output row either keeps its contents or receives the vertex's value. The multi-vertex
    /// JIT skips them, which for short shaders saves a good part of the time.
    /// [`Self::batch`] only.
    pub fn mask(mut self, out_mask: u16) -> Invocation<'a> {
        self.mask = Some(out_mask);
        self
    }

    /// Start from the unit state `state` (r0-r15, a0, aL, cmp; converted by
    /// [`Shader::convert_state`]) instead of the clean one: for [`Self::one`] it is loaded
    /// into the registers before the run; in a [`Self::batch`] every vertex starts from it
    /// (vertices stay independent of each other, as on hardware, where the four vertex units
    /// take vertices in no order a program could rely on).
    ///
    /// Takes a `&UnitState` or an `Option` of one (`None`: the clean state).
    pub fn from_state(mut self, state: impl Into<Option<&'a UnitState>>) -> Invocation<'a> {
        self.from = state.into();
        self
    }

    /// Receive the unit state the *last* vertex of a batch ended with: exactly what one
    /// [`Self::one`] of that vertex from the same start leaves (for an empty batch the start
    /// state, converted). Not written when the batch fails. A batch of one vertex with both
    /// states is one invocation of an emulator's persistent shader unit. [`Self::batch`] only.
    ///
    /// Takes a `&mut UnitState` or an `Option` of one (`None`: no state out).
    pub fn state_out(mut self, state: impl Into<Option<&'a mut UnitState>>) -> Invocation<'a> {
        self.state_out = state.into();
        self
    }
}

impl Shader {
    /// Run `invocation` (see [`Invocation`]) on this shader's engine: compiled code where a
    /// JIT took the program (the interpreter for whatever it cannot finish), the interpreter
    /// otherwise. The results are the interpreter's bit for bit either way.
    pub fn invoke(&self, invocation: Invocation<'_>) -> Result<Outcome, Error> {
        let Invocation {
            work,
            input,
            geometry,
            mask,
            from,
            state_out,
        } = invocation;
        match work {
            Work::One { uniforms, regs } => {
                if mask.is_some() || state_out.is_some() {
                    return Err(Error::Invalid(
                        "a single invocation takes no output mask or state out (its registers hold the state)",
                    ));
                }
                if let Some(input) = input {
                    if input.is_empty() {
                        return Err(Error::Invalid("an input with no vertex"));
                    }
                    regs.input = self.load_all(input, 0);
                }
                if let Some(state) = from {
                    regs.set_unit_state(&self.convert_state(state));
                }
                let instructions = self
                    .run_one(regs, uniforms, geometry)
                    .map_err(|e| e.offset(0))?;
                Ok(Outcome {
                    instructions,
                    emitted: 0,
                })
            }
            Work::Batch {
                uniforms,
                inputs,
                outputs,
            } => {
                if input.is_some() || geometry.is_some() {
                    return Err(Error::Invalid(
                        "a batch takes its inputs in `batch` and no geometry state",
                    ));
                }
                let instructions = self.batch(
                    uniforms,
                    inputs,
                    outputs,
                    mask.unwrap_or(0xFFFF),
                    from,
                    state_out,
                )?;
                Ok(Outcome {
                    instructions,
                    emitted: 0,
                })
            }
            Work::Points {
                uniforms,
                regs,
                geometry: state,
                inputs,
                out,
            } => {
                if input.is_some()
                    || geometry.is_some()
                    || mask.is_some()
                    || from.is_some()
                    || state_out.is_some()
                {
                    return Err(Error::Invalid(
                        "a point run takes its inputs and geometry state in `points`, its output registers from the EmitBuffer, and no unit state",
                    ));
                }
                let before = out.len();
                let instructions = self.points(regs, uniforms, state, inputs, out)?;
                Ok(Outcome {
                    instructions,
                    emitted: out.len() - before,
                })
            }
        }
    }

    /// One invocation on `regs` as they are: the JIT's (which runs the interpreter where its
    /// code stops) or the interpreter's.
    fn run_one(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
    ) -> Result<u64, Error> {
        let budget = self.config.budget;
        match &self.jit {
            Some(code) => Ok(code
                .invoke(
                    picajit_jit::Invocation::one(uniforms, regs)
                        .geometry(geometry)
                        .budget(budget),
                )?
                .instructions),
            None => Ok(self
                .interp
                .run(regs, uniforms, geometry, budget)
                .map_err(|error| Error::Exec { index: 0, error })?
                .instructions),
        }
    }

    /// Vertex `k` of `inputs` as register values, only the registers the program reads
    /// (the others zero): what a batch stages.
    fn load(&self, inputs: Attributes<'_>, k: usize) -> Bank {
        match inputs {
            Attributes::F32(v) => match self.config.float_mode {
                FloatMode::F24(_) => self.convert_masked(&v[k]),
                FloatMode::F32 => v[k],
            },
            Attributes::F24(v) => self.expand_masked(&v[k]),
            Attributes::Registers(v) => v[k],
        }
    }

    /// Vertex `k` of `inputs` as register values, every register.
    fn load_all(&self, inputs: Attributes<'_>, k: usize) -> Bank {
        match inputs {
            Attributes::F32(v) => self.convert_inputs(&v[k]),
            Attributes::F24(v) => expand_f24(&v[k]),
            Attributes::Registers(v) => v[k],
        }
    }

    /// [`Invocation::batch`].
    fn batch(
        &self,
        uniforms: &Uniforms,
        inputs: Attributes<'_>,
        outputs: &mut [Bank],
        mask: u16,
        from: Option<&UnitState>,
        state_out: Option<&mut UnitState>,
    ) -> Result<u64, Error> {
        let n = inputs.len().min(outputs.len());
        let (inputs, outputs) = (inputs.slice(0..n), &mut outputs[..n]);
        // The clean state is the plain batch, at its cost.
        let start = from
            .map(|s| self.convert_state(s))
            .filter(|s| !s.is_clean());
        if n < SMALL_BATCH {
            if let Some(out) = state_out {
                // Shorter than one eight-lane group: one invocation per vertex (what such a
                // batch runs anyway), the last one's registers giving the state, so a
                // persistent unit's one-vertex batches cost one invocation, not two.
                let (total, last) = self.per_vertex(
                    outputs,
                    &start.unwrap_or_default(),
                    |k| self.load(inputs, k),
                    |regs| self.run_one(regs, uniforms, None),
                )?;
                *out = last;
                return Ok(total);
            }
        }
        let budget = self.config.budget;
        // A chunk of register values: the JIT's batch (with the interpreter for the vertices
        // its code does not finish) or the interpreter, one vertex at a time.
        let rows = |rows: &[Bank], outputs: &mut [Bank]| match &self.jit {
            Some(code) => {
                let invocation = picajit_jit::Invocation::batch(uniforms, rows, outputs)
                    .mask(mask)
                    .budget(budget);
                let invocation = match &start {
                    Some(s) => invocation.from_state(s),
                    None => invocation,
                };
                Ok(code.invoke(invocation)?.instructions)
            }
            None => self
                .per_vertex(
                    outputs,
                    &start.unwrap_or_default(),
                    |k| rows[k],
                    |regs| {
                        self.interp
                            .run(regs, uniforms, None, budget)
                            .map(|info| info.instructions)
                            .map_err(|error| Error::Exec { index: 0, error })
                    },
                )
                .map(|(total, _)| total),
        };
        // Each thread's part: inputs that are register values already run as they are; the
        // others are staged in chunks (bounded memory, the rows stay in cache between
        // conversion and execution), only the registers the program reads converted.
        let mask_in = self.input_mask();
        let total = split_rows(self.batch_threads(n), n, outputs, |range, outputs| {
            let lo = range.start;
            match (inputs.slice(range), self.config.float_mode) {
                (Attributes::F24(v), _) => {
                    stage_chunks(v, outputs, mask_in, |s, d| self.expand_chunk(s, d), rows)
                }
                (Attributes::F32(v), FloatMode::F24(_)) => {
                    stage_chunks(v, outputs, mask_in, |s, d| self.convert_chunk(s, d), rows)
                }
                (Attributes::F32(v) | Attributes::Registers(v), _) => rows(v, outputs),
            }
            .map_err(|e| e.offset(lo))
        })?;
        if let Some(out) = state_out {
            let start = start.unwrap_or_default();
            // The last vertex once more, on the per-invocation path: batches keep no
            // per-vertex state, and this costs one vertex only when asked for. It succeeded
            // in the batch, so it succeeds here.
            *out = match n.checked_sub(1) {
                None => start,
                Some(last) => {
                    let mut one = [[[0.0; 4]; 16]];
                    self.per_vertex(
                        &mut one,
                        &start,
                        |_| self.load(inputs, last),
                        |regs| self.run_one(regs, uniforms, None),
                    )
                    .map_err(|e| e.offset(last))?
                    .1
                }
            };
        }
        Ok(total)
    }

    /// One invocation per output row from `start`, with `load(k)` in v0-v15 and its o0-o15
    /// written to `outputs[k]`, on the per-invocation path `run` (which fails as invocation
    /// 0): the interpreter's loop over a batch, and the JIT's per-vertex runs. Returns the
    /// instructions and the unit state the last invocation ended with.
    fn per_vertex(
        &self,
        outputs: &mut [Bank],
        start: &UnitState,
        load: impl Fn(usize) -> Bank,
        mut run: impl FnMut(&mut Registers) -> Result<u64, Error>,
    ) -> Result<(u64, UnitState), Error> {
        let mut regs = Registers::default();
        let mut total = 0;
        for (k, output) in outputs.iter_mut().enumerate() {
            regs.input = load(k);
            regs.output = [[0.0; 4]; 16];
            regs.set_unit_state(start);
            total += run(&mut regs).map_err(|e| e.offset(k))?;
            *output = regs.output;
        }
        let last = match outputs.is_empty() {
            true => *start,
            false => regs.unit_state(),
        };
        Ok((total, last))
    }

    /// [`Invocation::points`]. Inputs that are not register values already are staged in
    /// chunks, only the registers the program reads: the others cannot influence anything but
    /// the final v0-v15, which are set to the last point run, whole.
    fn points(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: Attributes<'_>,
        out: &mut EmitBuffer,
    ) -> Result<u64, Error> {
        if let Some(rows) = inputs.as_registers(self.config.float_mode) {
            return self.points_rows(regs, uniforms, geometry, rows, out);
        }
        let n = inputs.len();
        let mut scratch = Vec::new();
        let mut last = n.checked_sub(1);
        let result = chunked(n, |range| {
            scratch.clear();
            scratch.extend(range.clone().map(|k| self.load(inputs, k)));
            self.points_rows(regs, uniforms, geometry, &scratch, out)
                .inspect_err(|e| {
                    if let Error::Exec { index, .. } = e {
                        last = Some(range.start + index);
                    }
                })
        });
        if let Some(k) = last {
            regs.input = self.load_all(inputs, k);
        }
        result
    }

    /// A point run on register values: the JIT's or the interpreter's.
    fn points_rows(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[Bank],
        out: &mut EmitBuffer,
    ) -> Result<u64, Error> {
        let budget = self.config.budget;
        match &self.jit {
            Some(code) => Ok(code
                .invoke(
                    picajit_jit::Invocation::points(uniforms, regs, geometry, inputs, out)
                        .budget(budget),
                )?
                .instructions),
            None => self
                .interp
                .run_points(regs, uniforms, geometry, inputs, budget, out)
                .map_err(|(index, error)| Error::Exec { index, error }),
        }
    }
}
