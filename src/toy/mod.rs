//! TOY, the made-up instruction set (`picajit_interp::toy`), in the facade: its text syntax
//! ([`asm`]), a program prepared for an [`Engine`] ([`Prepared`]) and the `picajit … --isa toy`
//! commands ([`cli`]).
//!
//! ```
//! use picajit::toy::{parse, Prepared};
//! use picajit::interp::toy::exec::{State, Status};
//! use picajit::Engine;
//!
//! let program = parse("li r1, 10\nl: add r2, r2, r1\nloop r1, l\nhalt").unwrap();
//! let prepared = Prepared::new(&program, Engine::Jit).unwrap();
//! let mut state = State::default();
//! let out = prepared.run(&mut state, 0);
//! assert_eq!(out.status, Status::Halted { pc: 3 });
//! assert_eq!(state.regs[2], 55);
//! ```

pub mod asm;
pub mod cli;

pub use asm::{parse, print, ParseError};

use crate::{budget_or_default, Engine, Error};
use picajit_interp::toy::exec::{self, RunOutcome, State};
use picajit_interp::toy::Program;
use picajit_jit::toy::{compile, ToyCompiled};
use picajit_jit::Backend;

/// A program prepared for an engine.
#[derive(Debug)]
pub struct Prepared {
    program: Program,
    compiled: Option<ToyCompiled>,
    fallback: Option<String>,
}

impl Prepared {
    /// Prepares `program` for `engine`: [`Engine::Jit`] compiles for the host's JIT, or uses
    /// the interpreter on a host without one ([`Self::fallback_reason`] says so);
    /// [`Engine::X64`] and [`Engine::A64`] compile for that JIT, an error where its code
    /// cannot run.
    pub fn new(program: &Program, engine: Engine) -> Result<Prepared, Error> {
        let mut fallback = None;
        let backend = match engine {
            Engine::Interp => None,
            Engine::Jit => {
                let host = Backend::host();
                if host.is_none() {
                    fallback = Some("this host has no JIT backend".to_string());
                }
                host
            }
            Engine::X64 => Some(Backend::X64),
            Engine::A64 => Some(Backend::A64),
        };
        let compiled = backend.map(|b| compile(program, b)).transpose()?;
        Ok(Prepared {
            program: program.clone(),
            compiled,
            fallback,
        })
    }

    /// The engine that runs the program: the interpreter, or the JIT compiled for.
    pub fn engine(&self) -> Engine {
        self.compiled
            .as_ref()
            .map_or(Engine::Interp, |c| c.backend().into())
    }

    /// Why [`Engine::Jit`] runs on the interpreter, if it does.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The compiled code's size in bytes (`None` on the interpreter).
    pub fn code_size(&self) -> Option<usize> {
        self.compiled.as_ref().map(ToyCompiled::code_size)
    }

    /// Runs the program from its first instruction on `state` with at most `budget`
    /// instructions (0: [`crate::DEFAULT_BUDGET`]). Every engine gives the interpreter's
    /// outcome and state.
    pub fn run(&self, state: &mut State, budget: u64) -> RunOutcome {
        let budget = budget_or_default(budget);
        match &self.compiled {
            Some(c) => c.run(state, budget),
            None => exec::run(&self.program, state, budget),
        }
    }
}
