//! PowerVR Series 6 (Rogue) USC, as Imagination's public "PowerVR Instruction Set Reference"
//! (revision 1.0; "the reference" in these docs) describes it.
//!
//! Programs are ISR assembly text (the parser and printer live in the facade crate,
//! `src/usc`); this module holds what every engine shares: the program form ([`program`]),
//! the instruction table ([`table`]), the group structure rules ([`check`]), the special
//! constants ([`consts`]), the float operations ([`float`]) and the reference interpreter
//! ([`exec`]) that runs 1 to 16 instances with the per-instance predicate p0 and execution
//! mask. The readings chosen where the reference is silent or contradicts itself are listed in
//! `docs/usc.md`, "Ambiguities".

pub mod check;
pub mod consts;
pub mod exec;
pub mod float;
pub mod program;
pub mod table;

pub use exec::{
    Banks, ExecError, Flow, Outcome, Prepared, State, Status, UscOptions, MAX_INSTANCES,
};
