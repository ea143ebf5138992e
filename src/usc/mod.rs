//! PowerVR Series 6 USC programs as ISR text (seed 004): the parser ([`parse`](fn@parse)), the
//! canonical printer ([`print`](mod@print)), [`compile`], which parses and prepares a program
//! for the reference interpreter ([`picajit_interp::usc`]), a prepared program on an engine
//! ([`engine`]), the random program generator ([`testgen`]) and the tool's `--isa usc`
//! commands.

pub(crate) mod cli;
pub mod engine;
pub mod parse;
pub mod print;
pub mod testgen;

pub use parse::{parse, ParseError};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::{ExecError, Prepared, UscOptions};
use std::fmt;

/// A program that cannot be parsed or prepared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UscError {
    /// The text does not parse.
    Parse(ParseError),
    /// The program parses but cannot be prepared for running.
    Prepare(ExecError),
}

impl fmt::Display for UscError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UscError::Parse(e) => e.fmt(f),
            UscError::Prepare(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for UscError {}

/// Parses `text` and prepares it for running.
pub fn compile(text: &str, options: UscOptions) -> Result<Prepared, UscError> {
    let program = parse(text).map_err(UscError::Parse)?;
    Prepared::new(&program, options).map_err(UscError::Prepare)
}

/// A register by name (`r3`, `vi0`, `i1`, `sh12`, `cf4`, `idx0`, `c64`), or `None`.
pub fn register(name: &str) -> Option<Reg> {
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (prefix, digits) = name.split_at(split);
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    let index: u16 = digits.parse().ok()?;
    let bank = Bank::ALL.into_iter().find(|b| b.prefix() == prefix)?;
    if index >= bank.count()
        || (bank == Bank::C && picajit_interp::usc::consts::special(index).is_none())
    {
        return None;
    }
    Some(Reg { bank, index })
}
