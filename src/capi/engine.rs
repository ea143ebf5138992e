//! The engine choice and the budget as every ISA's C functions take them: one enum,
//! [`PicajitEngineKind`] (0, `PICAJIT_ENGINE_JIT`, the default), and one meaning of a budget
//! of 0 (`PICAJIT_DEFAULT_BUDGET`): the C faces of [`crate::Engine`] and
//! [`crate::budget_or_default`].

use super::cenum::{c_enum, CEnum};
use super::error::Result;
use crate::Engine;

/// Which engine runs a program: what every ISA's create function takes (PICA200:
/// `PicajitEngineConfig::engine`; THEIA: `picajit_theia_program_create`; USC:
/// `picajit_usc_program_create`), and what they report as the engine a program runs on
/// (never `PICAJIT_ENGINE_JIT` there). Every engine gives the reference interpreter's results
/// bit for bit.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitEngineKind {
    /// The default (0): the host's JIT where it can run the program, the interpreter
    /// otherwise (a host without a JIT, a PICA200 program the JIT cannot reproduce exactly,
    /// an x86-64 host without the AVX2 and FMA the USC JIT needs).
    PICAJIT_ENGINE_JIT = 0,
    /// The reference interpreter.
    PICAJIT_ENGINE_INTERP = 1,
    /// The x86-64 JIT; `PICAJIT_ERR_ENGINE_UNAVAILABLE` where its code cannot run (PICA200
    /// programs it cannot reproduce still fall back to the interpreter).
    PICAJIT_ENGINE_X64 = 2,
    /// The AArch64 JIT: natively on AArch64 hosts, under the emulator elsewhere in builds
    /// with the `a64-emu` feature, `PICAJIT_ERR_ENGINE_UNAVAILABLE` otherwise.
    PICAJIT_ENGINE_A64 = 3,
}

c_enum!(
    PicajitEngineKind: PICAJIT_ENGINE_JIT,
    PICAJIT_ENGINE_INTERP,
    PICAJIT_ENGINE_X64,
    PICAJIT_ENGINE_A64,
);

/// The budget a budget of 0 stands for, for every ISA: 2^20 PICA200 instructions per
/// invocation, THEIA instructions per run, USC instruction groups per run.
pub const PICAJIT_DEFAULT_BUDGET: u64 = 1 << 20;

const _: () = assert!(PICAJIT_DEFAULT_BUDGET == crate::DEFAULT_BUDGET);

impl From<Engine> for PicajitEngineKind {
    fn from(engine: Engine) -> PicajitEngineKind {
        match engine {
            Engine::Jit => PicajitEngineKind::PICAJIT_ENGINE_JIT,
            Engine::Interp => PicajitEngineKind::PICAJIT_ENGINE_INTERP,
            Engine::X64 => PicajitEngineKind::PICAJIT_ENGINE_X64,
            Engine::A64 => PicajitEngineKind::PICAJIT_ENGINE_A64,
        }
    }
}

/// The engine a `PicajitEngineKind` argument (or field) named `engine` asks for.
pub(crate) fn engine_arg(raw: u32) -> Result<Engine> {
    Ok(match PicajitEngineKind::from_raw(raw, "engine")? {
        PicajitEngineKind::PICAJIT_ENGINE_JIT => Engine::Jit,
        PicajitEngineKind::PICAJIT_ENGINE_INTERP => Engine::Interp,
        PicajitEngineKind::PICAJIT_ENGINE_X64 => Engine::X64,
        PicajitEngineKind::PICAJIT_ENGINE_A64 => Engine::A64,
    })
}

/// A budget argument: 0 stands for `PICAJIT_DEFAULT_BUDGET`, any other value for itself.
pub(crate) fn budget_arg(raw: u64) -> u64 {
    crate::budget_or_default(raw)
}
