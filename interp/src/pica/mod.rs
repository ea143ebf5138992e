//! PICA200, the programmable vertex and geometry shader unit of the Nintendo 3DS GPU (seed
//! 000): the instruction codec ([`isa`]), the float model every engine follows ([`float`]),
//! the program container ([`program`]), the register file layout shared with the JIT
//! ([`state`]) and the hardware-exact interpreter ([`exec`]).

pub mod exec;
pub mod float;
pub mod isa;
pub mod program;
pub mod state;
