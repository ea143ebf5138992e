//! A THEIA program prepared for an [`Engine`]: the JIT's code where the engine
//! compiles it, the reference interpreter otherwise, with the crate's budget and error
//! conventions.

use crate::common::{budget_or_default, Engine, Error};
use picajit_interp::theia::exec::{self, Code, Io, RunOutcome, State};
use picajit_interp::theia::Profile;
use picajit_jit::theia::TheiaCompiled;

/// A THEIA program (instruction memory and ROM) in one profile and the engine it runs on.
#[derive(Debug)]
pub struct Shader {
    code: Code,
    profile: Profile,
    compiled: Option<TheiaCompiled>,
}

impl Shader {
    /// Prepares `code` for `engine` in `profile`, with `entries` (the code addresses runs
    /// start at) as the compiled code's entry points: [`Engine::Jit`] compiles for the host
    /// (the interpreter runs on a host without a JIT); [`Engine::X64`] and [`Engine::A64`]
    /// fail with [`Error::Unavailable`] where their code cannot run.
    pub fn new(
        code: Code,
        profile: Profile,
        entries: &[u16],
        engine: Engine,
    ) -> Result<Shader, Error> {
        let compiled = Engine::compile(engine.backend(), |b| {
            picajit_jit::theia::compile(&code, profile, b, entries)
        })?;
        Ok(Shader {
            code,
            profile,
            compiled,
        })
    }

    /// The engine runs use: [`Engine::Interp`], [`Engine::X64`] or [`Engine::A64`].
    pub fn engine(&self) -> Engine {
        Engine::running(self.compiled.as_ref().map(TheiaCompiled::backend))
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The instruction memory and ROM.
    pub fn code(&self) -> &Code {
        &self.code
    }

    /// The compiled code, when a JIT runs the program.
    pub fn compiled(&self) -> Option<&TheiaCompiled> {
        self.compiled.as_ref()
    }

    /// Runs from `entry` until RETURN, a stall or `budget` instructions (0:
    /// [`DEFAULT_BUDGET`](crate::DEFAULT_BUDGET)), with the interpreter's result, state and
    /// I/O calls on every engine.
    pub fn run(
        &self,
        state: &mut State,
        io: &mut dyn Io,
        entry: u16,
        budget: u64,
    ) -> Result<RunOutcome, Error> {
        let budget = budget_or_default(budget);
        match &self.compiled {
            Some(c) => Ok(c.run(state, io, entry, budget)?),
            None => {
                exec::run(self.profile, &self.code, state, io, entry, budget).map_err(Error::Theia)
            }
        }
    }
}
