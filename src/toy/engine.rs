//! A TOY program prepared for an [`Engine`]: the JIT's code where the engine
//! compiles it, the reference interpreter otherwise, with the crate's budget and error
//! conventions.

use crate::common::{budget_or_default, Engine, Error};
use picajit_interp::toy::exec::{self, RunOutcome, State};
use picajit_interp::toy::Program;
use picajit_jit::toy::ToyCompiled;

/// A TOY program and the engine it runs on.
#[derive(Debug)]
pub struct Shader {
    program: Program,
    compiled: Option<ToyCompiled>,
}

impl Shader {
    /// Prepares `program` for `engine`: [`Engine::Jit`] compiles for the host (the
    /// interpreter runs on a host without a JIT); [`Engine::X64`] and [`Engine::A64`] fail
    /// with [`Error::Unavailable`] where their code cannot run.
    pub fn new(program: Program, engine: Engine) -> Result<Shader, Error> {
        let compiled =
            Engine::compile(engine.backend(), |b| picajit_jit::toy::compile(&program, b))?;
        Ok(Shader { program, compiled })
    }

    /// The engine runs use: [`Engine::Interp`], [`Engine::X64`] or [`Engine::A64`].
    pub fn engine(&self) -> Engine {
        Engine::running(self.compiled.as_ref().map(ToyCompiled::backend))
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The compiled code, when a JIT runs the program.
    pub fn compiled(&self) -> Option<&ToyCompiled> {
        self.compiled.as_ref()
    }

    /// Runs from the first instruction until HALT, the end of the program or `budget`
    /// instructions (0: [`DEFAULT_BUDGET`](crate::DEFAULT_BUDGET)), with the interpreter's
    /// outcome and state on every engine. A TOY run cannot fail.
    pub fn run(&self, state: &mut State, budget: u64) -> RunOutcome {
        let budget = budget_or_default(budget);
        match &self.compiled {
            Some(c) => c.run(state, budget),
            None => exec::run(&self.program, state, budget),
        }
    }
}
