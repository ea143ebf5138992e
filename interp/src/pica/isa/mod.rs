//! The PICA200 shader instruction set as the PICA200 documentation describes it: opcode table,
//! operands, word codec and a one-line formatter.

mod disasm;
mod instruction;
mod opcode;
mod operand;

pub use disasm::format_instruction;
pub use instruction::{decode, encode, unused_bits, EncodeError, Instruction, Operands};
pub use opcode::{Format, Opcode, Reads, Unit};
pub use operand::{
    CmpOp, CondOp, Condition, DstReg, OperandDesc, RelIndex, SrcReg, Swizzle, WriteMask,
};
