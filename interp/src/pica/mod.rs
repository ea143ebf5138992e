//! PICA200, the programmable vertex and geometry shader unit of the Nintendo 3DS GPU: the
//! instruction codec ([`isa`]), the float model every engine follows ([`float`]),
//! the program container ([`program`]), the register file layout shared with the JIT
//! ([`state`]) and the hardware-exact interpreter ([`exec`]).
//!
//! "The PICA200 documentation" in these docs is the public shader instruction-set page
//! (3dbrew's "Shader Instruction Set"); where its revisions disagree, the newest is followed.

pub mod exec;
pub mod float;
pub mod isa;
pub mod program;
pub mod state;
