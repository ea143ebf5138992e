//! TOY's operations, instructions and programs.
//!
//! Every operation is one row of [`Opcode`]: its mnemonic and its operand [`Shape`], which the
//! parser, the printer and the test generators read. An [`Instr`] carries its operands;
//! branch targets are instruction indices, resolved from labels by the parser.

use std::fmt;

/// Registers: r0-r15, 32 bits each, all general-purpose.
pub const REGS: usize = 16;

/// The most instructions a program may have.
pub const MAX_INSTRS: usize = 1 << 16;

/// A register number, 0..[`REGS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(u8);

impl Reg {
    /// Register `n`, if it exists.
    pub const fn new(n: u8) -> Option<Reg> {
        if (n as usize) < REGS {
            Some(Reg(n))
        } else {
            None
        }
    }

    /// The register's number.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Every register, r0 first.
    pub fn all() -> impl Iterator<Item = Reg> {
        (0..REGS as u8).map(Reg)
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// Three-register operations: `rd = ra OP rb`, wrapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// The low 32 bits of the product.
    Mul,
}

impl AluOp {
    /// The operation on two register values.
    pub fn apply(self, a: u32, b: u32) -> u32 {
        match self {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::And => a & b,
            AluOp::Or => a | b,
            AluOp::Xor => a ^ b,
            AluOp::Mul => a.wrapping_mul(b),
        }
    }
}

/// Shifts by an immediate amount (0-31): `rd = ra OP n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftOp {
    /// Left, zeros in.
    Shl,
    /// Right, zeros in.
    Shr,
    /// Right, copies of the sign bit in.
    Sar,
}

impl ShiftOp {
    /// The shift of `a` by `n` (0-31).
    pub fn apply(self, a: u32, n: u8) -> u32 {
        let n = u32::from(n & 31);
        match self {
            ShiftOp::Shl => a << n,
            ShiftOp::Shr => a >> n,
            ShiftOp::Sar => ((a as i32) >> n) as u32,
        }
    }
}

/// The condition of a conditional branch on one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// The register is zero.
    Zero,
    /// The register is not zero.
    NonZero,
}

impl Cond {
    /// Whether a register holding `v` takes the branch.
    pub fn holds(self, v: u32) -> bool {
        match self {
            Cond::Zero => v == 0,
            Cond::NonZero => v != 0,
        }
    }
}

/// What an operation's operands are, in source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `rd, imm`: a 32-bit immediate (-2^31 to 2^32 - 1; negative values are two's
    /// complement).
    RegImm,
    /// `rd, ra, rb`.
    ThreeRegs,
    /// `rd, ra, n`: a shift amount 0-31.
    RegRegShift,
    /// `ra, label`.
    RegLabel,
    /// `label`.
    Label,
    /// No operands.
    Nothing,
}

/// The operation table: one row per operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// `LI rd, imm`: rd = imm.
    Li,
    /// `ADD rd, ra, rb`.
    Add,
    /// `SUB rd, ra, rb`: ra - rb.
    Sub,
    /// `AND rd, ra, rb`.
    And,
    /// `OR rd, ra, rb`.
    Or,
    /// `XOR rd, ra, rb`.
    Xor,
    /// `MUL rd, ra, rb`: the low 32 bits of the product.
    Mul,
    /// `SHL rd, ra, n`.
    Shl,
    /// `SHR rd, ra, n`: logical.
    Shr,
    /// `SAR rd, ra, n`: arithmetic.
    Sar,
    /// `BZ ra, label`: branch when ra is zero.
    Bz,
    /// `BNZ ra, label`: branch when ra is not zero.
    Bnz,
    /// `LOOP ra, label`: ra = ra - 1 (wrapping); branch when the result is not zero. A
    /// counted loop whose body runs ra times (2^32 times for ra = 0).
    Loop,
    /// `JMP label`.
    Jmp,
    /// `HALT`: the run ends.
    Halt,
}

impl Opcode {
    /// Every operation, in table order.
    pub const ALL: [Opcode; 15] = [
        Opcode::Li,
        Opcode::Add,
        Opcode::Sub,
        Opcode::And,
        Opcode::Or,
        Opcode::Xor,
        Opcode::Mul,
        Opcode::Shl,
        Opcode::Shr,
        Opcode::Sar,
        Opcode::Bz,
        Opcode::Bnz,
        Opcode::Loop,
        Opcode::Jmp,
        Opcode::Halt,
    ];

    /// The row: mnemonic (as printed; the parser takes any case) and operand shape.
    pub const fn row(self) -> (&'static str, Shape) {
        match self {
            Opcode::Li => ("li", Shape::RegImm),
            Opcode::Add => ("add", Shape::ThreeRegs),
            Opcode::Sub => ("sub", Shape::ThreeRegs),
            Opcode::And => ("and", Shape::ThreeRegs),
            Opcode::Or => ("or", Shape::ThreeRegs),
            Opcode::Xor => ("xor", Shape::ThreeRegs),
            Opcode::Mul => ("mul", Shape::ThreeRegs),
            Opcode::Shl => ("shl", Shape::RegRegShift),
            Opcode::Shr => ("shr", Shape::RegRegShift),
            Opcode::Sar => ("sar", Shape::RegRegShift),
            Opcode::Bz => ("bz", Shape::RegLabel),
            Opcode::Bnz => ("bnz", Shape::RegLabel),
            Opcode::Loop => ("loop", Shape::RegLabel),
            Opcode::Jmp => ("jmp", Shape::Label),
            Opcode::Halt => ("halt", Shape::Nothing),
        }
    }

    pub const fn mnemonic(self) -> &'static str {
        self.row().0
    }

    pub const fn shape(self) -> Shape {
        self.row().1
    }

    /// The operation of a mnemonic, in any case.
    pub fn from_mnemonic(m: &str) -> Option<Opcode> {
        Opcode::ALL
            .into_iter()
            .find(|op| op.mnemonic().eq_ignore_ascii_case(m))
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// One instruction. Branch targets are instruction indices; the program's length is a valid
/// target (the run ends there, as when execution runs past the last instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    Li {
        rd: Reg,
        imm: u32,
    },
    Alu {
        op: AluOp,
        rd: Reg,
        ra: Reg,
        rb: Reg,
    },
    Shift {
        op: ShiftOp,
        rd: Reg,
        ra: Reg,
        n: u8,
    },
    Branch {
        cond: Cond,
        ra: Reg,
        target: u32,
    },
    Loop {
        ra: Reg,
        target: u32,
    },
    Jmp {
        target: u32,
    },
    Halt,
}

impl Instr {
    /// The instruction's row in the operation table.
    pub fn opcode(&self) -> Opcode {
        match *self {
            Instr::Li { .. } => Opcode::Li,
            Instr::Alu { op, .. } => match op {
                AluOp::Add => Opcode::Add,
                AluOp::Sub => Opcode::Sub,
                AluOp::And => Opcode::And,
                AluOp::Or => Opcode::Or,
                AluOp::Xor => Opcode::Xor,
                AluOp::Mul => Opcode::Mul,
            },
            Instr::Shift { op, .. } => match op {
                ShiftOp::Shl => Opcode::Shl,
                ShiftOp::Shr => Opcode::Shr,
                ShiftOp::Sar => Opcode::Sar,
            },
            Instr::Branch { cond, .. } => match cond {
                Cond::Zero => Opcode::Bz,
                Cond::NonZero => Opcode::Bnz,
            },
            Instr::Loop { .. } => Opcode::Loop,
            Instr::Jmp { .. } => Opcode::Jmp,
            Instr::Halt => Opcode::Halt,
        }
    }

    /// The branch target, for the operations that have one.
    pub fn target(&self) -> Option<u32> {
        match *self {
            Instr::Branch { target, .. } | Instr::Loop { target, .. } | Instr::Jmp { target } => {
                Some(target)
            }
            _ => None,
        }
    }

    /// Whether execution may go on anywhere but the next instruction (a branch or HALT).
    pub fn ends_block(&self) -> bool {
        self.target().is_some() || matches!(self, Instr::Halt)
    }
}

/// Why a list of instructions is not a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramError {
    /// More than [`MAX_INSTRS`] instructions.
    TooLong { len: usize },
    /// A branch at `at` targets an index past the end.
    TargetOutOfRange { at: usize, target: u32 },
    /// A shift amount above 31.
    ShiftAmount { at: usize, n: u8 },
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProgramError::TooLong { len } => write!(
                f,
                "{len} instructions: a TOY program has at most {MAX_INSTRS}"
            ),
            ProgramError::TargetOutOfRange { at, target } => write!(
                f,
                "instruction {at} branches to {target}, past the end of the program"
            ),
            ProgramError::ShiftAmount { at, n } => {
                write!(f, "instruction {at} shifts by {n}: amounts are 0-31")
            }
        }
    }
}

impl std::error::Error for ProgramError {}

/// A checked program: every branch target is an index of it or its length, every shift
/// amount is at most 31.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Program {
    instrs: Vec<Instr>,
}

impl Program {
    pub fn new(instrs: Vec<Instr>) -> Result<Program, ProgramError> {
        if instrs.len() > MAX_INSTRS {
            return Err(ProgramError::TooLong { len: instrs.len() });
        }
        for (at, i) in instrs.iter().enumerate() {
            if let Some(target) = i.target() {
                if target as usize > instrs.len() {
                    return Err(ProgramError::TargetOutOfRange { at, target });
                }
            }
            if let Instr::Shift { n, .. } = *i {
                if n > 31 {
                    return Err(ProgramError::ShiftAmount { at, n });
                }
            }
        }
        Ok(Program { instrs })
    }

    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::from_mnemonic(op.mnemonic()), Some(op));
            assert_eq!(
                Opcode::from_mnemonic(&op.mnemonic().to_uppercase()),
                Some(op)
            );
        }
        let mut names: Vec<_> = Opcode::ALL.iter().map(|o| o.mnemonic()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Opcode::ALL.len());
        assert_eq!(Opcode::from_mnemonic("nop"), None);
    }

    #[test]
    fn registers_stop_at_fifteen() {
        assert_eq!(Reg::new(15).map(Reg::index), Some(15));
        assert_eq!(Reg::new(16), None);
        assert_eq!(Reg::all().count(), REGS);
        assert_eq!(Reg::new(7).unwrap().to_string(), "r7");
    }

    #[test]
    fn operations_wrap_and_shift_as_documented() {
        assert_eq!(AluOp::Add.apply(u32::MAX, 2), 1);
        assert_eq!(AluOp::Sub.apply(1, 2), u32::MAX);
        assert_eq!(AluOp::Mul.apply(0x1_0001, 0x1_0001), 0x2_0001);
        assert_eq!(AluOp::And.apply(0b1100, 0b1010), 0b1000);
        assert_eq!(AluOp::Or.apply(0b1100, 0b1010), 0b1110);
        assert_eq!(AluOp::Xor.apply(0b1100, 0b1010), 0b0110);
        assert_eq!(ShiftOp::Shl.apply(0x8000_0001, 1), 2);
        assert_eq!(ShiftOp::Shr.apply(0x8000_0000, 31), 1);
        assert_eq!(ShiftOp::Sar.apply(0x8000_0000, 31), u32::MAX);
        assert_eq!(ShiftOp::Sar.apply(0x4000_0000, 30), 1);
        assert!(Cond::Zero.holds(0) && !Cond::Zero.holds(1));
        assert!(Cond::NonZero.holds(5) && !Cond::NonZero.holds(0));
    }

    #[test]
    fn programs_are_checked() {
        let r0 = Reg::new(0).unwrap();
        assert!(Program::new(vec![Instr::Jmp { target: 1 }]).is_ok());
        assert_eq!(
            Program::new(vec![Instr::Jmp { target: 2 }]),
            Err(ProgramError::TargetOutOfRange { at: 0, target: 2 })
        );
        let shift = Instr::Shift {
            op: ShiftOp::Shl,
            rd: r0,
            ra: r0,
            n: 32,
        };
        assert_eq!(
            Program::new(vec![Instr::Halt, shift]),
            Err(ProgramError::ShiftAmount { at: 1, n: 32 })
        );
        assert!(matches!(
            Program::new(vec![Instr::Halt; MAX_INSTRS + 1]),
            Err(ProgramError::TooLong { .. })
        ));
    }
}
