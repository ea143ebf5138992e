//! What every instruction set's engine takes and gives, defined once: the [`Engine`] choice,
//! the [`DEFAULT_BUDGET`] and the meaning of a budget of 0 ([`budget_or_default`]), and the
//! crate's one [`Error`] type. The Rust API, the `picajit` tool (`--engine`, `--budget`) and
//! the C ABI all use these, for PICA200, THEIA and USC alike.

use picajit_jit::Backend;
use std::fmt;
use std::str::FromStr;

/// Which engine runs a program. Every engine gives the reference interpreter's results bit
/// for bit; they differ in speed and in where they run.
///
/// The names ([`Display`](fmt::Display) and [`FromStr`]) are those of the tool's `--engine`:
/// `jit` (also `auto`), `interp` (also `interpreter`), `x64`, `a64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The host's JIT (x86-64 on x86-64 hosts, AArch64 on AArch64 hosts) where it can run the
    /// program, the interpreter otherwise (another host architecture, a program the PICA200
    /// JIT cannot reproduce, an x86-64 host without the AVX2 and FMA the USC JIT needs). The
    /// engine actually used and the reason for a fallback are reported by each ISA's prepared
    /// program.
    #[default]
    Jit,
    /// The reference interpreter.
    Interp,
    /// The x86-64 JIT; an error where its code cannot run.
    X64,
    /// The AArch64 JIT: natively on AArch64 hosts, under the emulator elsewhere in builds with
    /// the `a64-emu` feature; an error otherwise.
    A64,
}

impl Engine {
    /// Every engine, the default first.
    pub const ALL: [Engine; 4] = [Engine::Jit, Engine::Interp, Engine::X64, Engine::A64];

    /// The names [`FromStr`] takes, for messages and help texts.
    pub const NAMES: &'static str =
        "jit (the host's JIT, the default; also auto), interp, x64 or a64";

    /// The JIT backend this choice compiles for: the host's for [`Engine::Jit`] (`None` on a
    /// host without one), none for [`Engine::Interp`].
    pub fn backend(self) -> Option<Backend> {
        match self {
            Engine::Jit => Backend::host(),
            Engine::Interp => None,
            Engine::X64 => Some(Backend::X64),
            Engine::A64 => Some(Backend::A64),
        }
    }

    /// Code for this choice's backend from `compile`, or none where the interpreter runs
    /// the program: how the THEIA, USC and TOY `Shader::new` prepare a program.
    pub(crate) fn compile<C>(
        backend: Option<Backend>,
        compile: impl FnOnce(Backend) -> Result<C, picajit_jit::Error>,
    ) -> Result<Option<C>, Error> {
        Ok(backend.map(compile).transpose()?)
    }

    /// The engine that runs code compiled for `backend`, the interpreter without code: what
    /// the THEIA, USC and TOY `Shader::engine` report.
    pub(crate) fn running(backend: Option<Backend>) -> Engine {
        backend.map_or(Engine::Interp, Engine::from)
    }

    /// The name [`Display`](fmt::Display) prints.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Jit => "jit",
            Engine::Interp => "interp",
            Engine::X64 => "x64",
            Engine::A64 => "a64",
        }
    }
}

impl From<Backend> for Engine {
    fn from(b: Backend) -> Engine {
        match b {
            Backend::X64 => Engine::X64,
            Backend::A64 => Engine::A64,
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;

    /// `jit` or `auto`, `interp` or `interpreter`, `x64` (`x86-64`, `x86_64`), `a64`
    /// (`aarch64`, `arm64`).
    fn from_str(s: &str) -> Result<Engine, String> {
        Ok(match s {
            "jit" | "auto" => Engine::Jit,
            "interp" | "interpreter" => Engine::Interp,
            "x64" | "x86-64" | "x86_64" => Engine::X64,
            "a64" | "aarch64" | "arm64" => Engine::A64,
            _ => return Err(format!("unknown engine '{s}': expected {}", Engine::NAMES)),
        })
    }
}

/// The budget of a run that does not set one, the same for every ISA: 2^20 PICA200
/// instructions per invocation, THEIA instructions per run, or USC instruction groups per
/// run. A run that reaches its budget stops: PICA200 with
/// [`ExecError::BudgetExhausted`](picajit_interp::pica::exec::ExecError::BudgetExhausted),
/// THEIA and USC with their `Budget` status.
pub const DEFAULT_BUDGET: u64 = picajit_jit::DEFAULT_BUDGET;

/// The one meaning of a budget, in the Rust API, the tool's `--budget` and the C ABI: 0
/// stands for [`DEFAULT_BUDGET`], any other value for itself.
pub fn budget_or_default(budget: u64) -> u64 {
    if budget == 0 {
        DEFAULT_BUDGET
    } else {
        budget
    }
}

/// The error of every engine of the crate: preparing and running a program of any ISA on
/// any [`Engine`]. (Reading files and assembling sources report located diagnostics of their
/// own: [`pica::shbin::ShbinError`](crate::pica::shbin::ShbinError),
/// [`pica::asm::AsmError`](crate::pica::asm::AsmError), [`theia::AsmError`](crate::theia::AsmError),
/// [`usc::UscError`](crate::usc::UscError) and the like.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The engine asked for cannot run on this host in this build (see [`Engine`]).
    Unavailable(String),
    /// The JIT failed for a reason other than running the program (see
    /// [`picajit_jit::Error`]).
    Jit(picajit_jit::Error),
    /// A PICA200 program is malformed.
    Program(picajit_interp::pica::program::ProgramError),
    /// A SHBIN has no DVLE with that index.
    NoSuchDvle {
        /// The index asked for.
        index: usize,
        /// The DVLEs the SHBIN has.
        count: usize,
    },
    /// PICA200 invocation `index` of a call (0 for a single invocation, else the vertex or
    /// point) failed, exactly as on the interpreter; the earlier ones' results are valid.
    Exec {
        /// Index of the failing invocation in the call's inputs.
        index: usize,
        /// The interpreter's error.
        error: picajit_interp::pica::exec::ExecError,
    },
    /// A call asked for something its kind does not take (see
    /// [`pica::engine::Invocation`](crate::pica::engine::Invocation)).
    Invalid(&'static str),
    /// A THEIA run failed (as on the interpreter).
    Theia(picajit_interp::theia::exec::TheiaError),
    /// A USC program cannot be prepared, or a USC run failed (as on the interpreter).
    Usc(picajit_interp::usc::ExecError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(why) => write!(f, "backend unavailable: {why}"),
            Error::Jit(e) => e.fmt(f),
            Error::Program(e) => write!(f, "invalid program: {e}"),
            Error::NoSuchDvle { index, count } => {
                write!(f, "DVLE #{index} requested but the SHBIN has {count}")
            }
            Error::Exec { index, error } => write!(f, "vertex {index}: {error}"),
            Error::Invalid(what) => write!(f, "invalid invocation: {what}"),
            Error::Theia(e) => e.fmt(f),
            Error::Usc(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The error of a part of a call that starts at invocation `base` of the whole call: a
    /// failing invocation's index counted from the call's start.
    pub(crate) fn offset(self, base: usize) -> Error {
        match self {
            Error::Exec { index, error } => Error::Exec {
                index: base + index,
                error,
            },
            other => other,
        }
    }
}

impl From<picajit_jit::Error> for Error {
    fn from(e: picajit_jit::Error) -> Error {
        match e {
            picajit_jit::Error::Exec { index, error } => Error::Exec { index, error },
            picajit_jit::Error::Unavailable(why) => Error::Unavailable(why),
            picajit_jit::Error::Theia(e) => Error::Theia(e),
            picajit_jit::Error::Usc(e) => Error::Usc(e),
            picajit_jit::Error::Invalid(what) => Error::Invalid(what),
            other => Error::Jit(other),
        }
    }
}

impl From<picajit_interp::pica::program::ProgramError> for Error {
    fn from(e: picajit_interp::pica::program::ProgramError) -> Error {
        Error::Program(e)
    }
}
