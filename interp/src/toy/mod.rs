//! TOY, a made-up instruction set that exists to show what adding an ISA to picajit takes:
//! sixteen 32-bit integer registers, fifteen operations (arithmetic, shifts, conditional
//! branches, a counted loop, HALT) and no memory. Everything it has lives in `toy/` folders
//! (this one, `picajit-jit`'s and the facade's) behind the `made-up-isa` feature; the README's
//! Architecture section lists the few registration lines it needs elsewhere.
//!
//! * [`isa`]: the operation table, instructions and programs;
//! * [`exec`]: the reference interpreter, which defines every engine's results.

pub mod exec;
pub mod isa;

pub use exec::{run, Cursor, RunOutcome, State, Status};
pub use isa::{AluOp, Cond, Instr, Opcode, Program, ProgramError, Reg, Shape, ShiftOp, REGS};
