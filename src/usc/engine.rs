//! A USC program prepared for an [`Engine`]: the JIT's code where the engine
//! compiles it, the reference interpreter otherwise, with the crate's budget and error
//! conventions.

use crate::common::{budget_or_default, Engine, Error};
use picajit_interp::usc::{Outcome, Prepared, State};
use picajit_jit::usc::{a64, x64, UscCode};
use picajit_jit::Backend;

/// A prepared USC program and the engine it runs on.
#[derive(Debug)]
pub struct Shader {
    prepared: Prepared,
    code: Option<UscCode>,
}

/// The host's USC JIT where this host runs its code (x86-64 with AVX2 and FMA; AArch64).
fn host_backend() -> Option<Backend> {
    match Backend::host()? {
        Backend::X64 if x64::available() => Some(Backend::X64),
        Backend::A64 if a64::available() => Some(Backend::A64),
        _ => None,
    }
}

impl Shader {
    /// Prepares `prepared` for `engine`: [`Engine::Jit`] compiles for the host where it runs
    /// the USC JIT's code and uses the interpreter elsewhere; [`Engine::X64`] and
    /// [`Engine::A64`] fail with [`Error::Unavailable`] where their code cannot run.
    pub fn new(prepared: Prepared, engine: Engine) -> Result<Shader, Error> {
        let backend = match engine {
            Engine::Jit => host_backend(),
            other => other.backend(),
        };
        let code = Engine::compile(backend, |b| picajit_jit::usc::compile(&prepared, b))?;
        Ok(Shader { prepared, code })
    }

    /// The engine runs use: [`Engine::Interp`], [`Engine::X64`] or [`Engine::A64`].
    pub fn engine(&self) -> Engine {
        Engine::running(self.code.as_ref().map(UscCode::backend))
    }

    /// The program.
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// The compiled code, when a JIT runs the program.
    pub fn compiled(&self) -> Option<&UscCode> {
        self.code.as_ref()
    }

    /// Runs the program from its first group on `state` until it ends or `budget` groups have
    /// executed (0: [`DEFAULT_BUDGET`](crate::DEFAULT_BUDGET)), with the interpreter's result
    /// on every engine.
    pub fn run(&self, state: &mut State, budget: u64) -> Result<Outcome, Error> {
        let budget = budget_or_default(budget);
        match &self.code {
            Some(code) => Ok(code.run(&self.prepared, state, budget)?),
            None => self.prepared.run(state, budget).map_err(Error::Usc),
        }
    }
}
