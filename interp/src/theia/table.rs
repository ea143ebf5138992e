//! The THEIA operation table: one row per operation code that any source defines.
//!
//! The codec, the assembler, the disassembler, the interpreter and the JITs all read this table;
//! nothing else lists opcodes. Codes and spellings follow the RTL's definitions file
//! (`rtl/aDefinitions.v` of freecores/theia_gpu at commit 032c448, the lines quoted in
//! `docs/theia.md`); [`OpInfo::manual`] says whether the programming manual documents
//! the operation and [`OpInfo::rtl`] what the RTL's ALU does with it.

/// The component a conditional jump compares: opcode bits 4:3 (`01` x, `10` y, `11` z).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    X = 0,
    Y = 1,
    Z = 2,
}

/// The test of a conditional jump: opcode bits 2:0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    /// `000` JG*
    Greater,
    /// `001` JL*
    Less,
    /// `010` JEQ*
    Equal,
    /// `011` JNE*
    NotEqual,
    /// `100` JGE*
    GreaterEqual,
    /// `101` JLE*
    LessEqual,
}

/// What an operation does. Operand roles: `a` is the register at bits 31:16 (or, for operations
/// with opcode bit 6 set, the 32-bit immediate at bits 31:0 in x and zeros in y and z), `b` the
/// register at bits 15:0 (for immediate operations: the destination's current value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sem {
    Nop,
    Add,
    Sub,
    Div,
    Mul,
    Mag,
    Copy,
    Jump(Component, Test),
    Inc,
    IncX,
    IncY,
    IncZ,
    Dec,
    Zero,
    Cross,
    Dot,
    /// Code 30, only defined when the RTL is built with `DEBUG` (a logging NOP).
    DebugPrint,
    MulP,
    Mod,
    Frac,
    IntP,
    Neg,
    XchangeX,
    XchangeY,
    XchangeZ,
    IMul,
    Unscale,
    Rescale,
    /// O-memory write: address `a`, data `b` (the IO unit's output memory).
    OmWrite,
    /// T-memory (texture) read at address `a`.
    TmRead,
    /// Load effective address: the instruction pointer in every component.
    Lea,
    Return,
    SetX,
    SetY,
    SetZ,
    Swizzle3D,
    Jmp,
    Call,
    Ret,
}

/// What the RTL's execution unit does with an operation (`rtl/Module_VectorALU.v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtlSupport {
    /// The ALU computes a result and raises OutputReady.
    Completes,
    /// The ALU's OutputReady mux has no case for it: the execution FSM waits forever
    /// (`Module_VectorALU.v` lines 1203-1275, `Module_ExecutionFSM.v` lines 320-333).
    Stalls,
}

/// How the assembler and disassembler see the operand fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// `OP DST SRC1 SRC2` (registers; unused fields are VOID).
    Reg3,
    /// `OP TARGET SRC1 SRC2`: the destination field is a code address.
    CondJump,
    /// `OP DST IMM32` (opcode bit 6 set).
    Imm,
    /// `OP TARGET VOID VOID` with opcode bit 6 set: JMP and CALL.
    ImmJump,
    /// `OP RT_TRUE|RT_FALSE`: RETURN.
    Return,
    /// `OP DST SWIZZLE_*`.
    Swizzle,
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The spelling of the RTL's definitions file, which the original assembler reads.
    pub name: &'static str,
    /// The 16-bit operation field (instruction bits 63:48).
    pub code: u16,
    pub sem: Sem,
    pub form: Form,
    pub rtl: RtlSupport,
    /// Documented in the programming manual.
    pub manual: bool,
}

/// Opcode bit 6: the decoder takes bits 31:0 as an immediate operand
/// (`Module_InstructionDecode.v` line 57, `aDefinitions.v` `INSTRUCTION_IMM_BITPOS`).
pub const IMM_BIT: u16 = 1 << 6;

const fn row(
    name: &'static str,
    code: u16,
    sem: Sem,
    form: Form,
    rtl: RtlSupport,
    manual: bool,
) -> OpInfo {
    OpInfo {
        name,
        code,
        sem,
        form,
        rtl,
        manual,
    }
}

use Component::{X, Y, Z};
use Form::*;
use RtlSupport::{Completes as C, Stalls as S};
use Test::*;

/// Every operation, in code order.
pub const OPS: &[OpInfo] = &[
    row("NOP", 0, Sem::Nop, Reg3, C, true),
    row("ADD", 1, Sem::Add, Reg3, C, true),
    row("SUB", 2, Sem::Sub, Reg3, C, true),
    row("DIV", 3, Sem::Div, Reg3, C, true),
    row("MUL", 4, Sem::Mul, Reg3, C, true),
    row("MAG", 5, Sem::Mag, Reg3, C, true),
    row("COPY", 7, Sem::Copy, Reg3, C, true),
    row("JGX", 8, Sem::Jump(X, Greater), CondJump, C, true),
    row("JLX", 9, Sem::Jump(X, Less), CondJump, C, true),
    row("JEQX", 10, Sem::Jump(X, Equal), CondJump, C, true),
    row("JNEX", 11, Sem::Jump(X, NotEqual), CondJump, C, true),
    row("JGEX", 12, Sem::Jump(X, GreaterEqual), CondJump, C, true),
    row("JLEX", 13, Sem::Jump(X, LessEqual), CondJump, C, true),
    row("INC", 14, Sem::Inc, Reg3, C, true),
    row("ZERO", 15, Sem::Zero, Reg3, C, true),
    row("JGY", 16, Sem::Jump(Y, Greater), CondJump, C, true),
    row("JLY", 17, Sem::Jump(Y, Less), CondJump, C, true),
    row("JEQY", 18, Sem::Jump(Y, Equal), CondJump, C, true),
    row("JNEY", 19, Sem::Jump(Y, NotEqual), CondJump, C, true),
    row("JGEY", 20, Sem::Jump(Y, GreaterEqual), CondJump, C, true),
    row("JLEY", 21, Sem::Jump(Y, LessEqual), CondJump, C, true),
    row("CROSS", 22, Sem::Cross, Reg3, C, true),
    row("DOT", 23, Sem::Dot, Reg3, C, true),
    row("JGZ", 24, Sem::Jump(Z, Greater), CondJump, C, true),
    row("JLZ", 25, Sem::Jump(Z, Less), CondJump, C, true),
    row("JEQZ", 26, Sem::Jump(Z, Equal), CondJump, C, true),
    row("JNEZ", 27, Sem::Jump(Z, NotEqual), CondJump, C, true),
    row("JGEZ", 28, Sem::Jump(Z, GreaterEqual), CondJump, C, true),
    row("JLEZ", 29, Sem::Jump(Z, LessEqual), CondJump, C, true),
    row("DEBUG_PRINT", 30, Sem::DebugPrint, Reg3, S, false),
    row("MULP", 31, Sem::MulP, Reg3, C, true),
    row("MOD", 32, Sem::Mod, Reg3, C, true),
    row("FRAC", 33, Sem::Frac, Reg3, C, true),
    row("INTP", 34, Sem::IntP, Reg3, S, true),
    row("NEG", 35, Sem::Neg, Reg3, C, true),
    row("DEC", 36, Sem::Dec, Reg3, C, true),
    row("XCHANGEX", 37, Sem::XchangeX, Reg3, C, true),
    row("XCHANGEY", 38, Sem::XchangeY, Reg3, S, true),
    row("XCHANGEZ", 39, Sem::XchangeZ, Reg3, S, true),
    row("IMUL", 40, Sem::IMul, Reg3, C, true),
    row("UNSCALE", 41, Sem::Unscale, Reg3, C, true),
    row("RESCALE", 42, Sem::Rescale, Reg3, S, true),
    row("INCX", 43, Sem::IncX, Reg3, C, true),
    row("INCY", 44, Sem::IncY, Reg3, C, true),
    row("INCZ", 45, Sem::IncZ, Reg3, C, true),
    row("OMWRITE", 47, Sem::OmWrite, Reg3, C, false),
    row("TMREAD", 48, Sem::TmRead, Reg3, C, false),
    row("LEA", 49, Sem::Lea, Reg3, C, false),
    row("RETURN", 0x40, Sem::Return, Return, C, true),
    row("SETX", 0x41, Sem::SetX, Imm, C, true),
    row("SETY", 0x42, Sem::SetY, Imm, C, true),
    row("SETZ", 0x43, Sem::SetZ, Imm, C, true),
    row("SWIZZLE3D", 0x44, Sem::Swizzle3D, Swizzle, C, true),
    row("JMP", 0x58, Sem::Jmp, ImmJump, C, true),
    row("CALL", 0x59, Sem::Call, ImmJump, C, false),
    row("RET", 0x5A, Sem::Ret, Imm, C, false),
];

/// The row of an operation code, if any source defines it.
pub fn by_code(code: u16) -> Option<&'static OpInfo> {
    OPS.iter().find(|o| o.code == code)
}

/// The row of an operation name (exact spelling, as the original assembler matches it).
pub fn by_name(name: &str) -> Option<&'static OpInfo> {
    OPS.iter().find(|o| o.name == name)
}

/// The swizzle patterns of SWIZZLE3D, by immediate value (`aDefinitions.v` `SWIZZLE_*`): the
/// source component of x, y and z. The manual lists all 22; the RTL's swizzle unit
/// (`Module_Swizzle.v`) implements only XXX, YYY, ZZZ and YXZ and gives zeros otherwise.
pub const SWIZZLES: [(&str, [Component; 3]); 22] = [
    ("SWIZZLE_XXX", [X, X, X]),
    ("SWIZZLE_YYY", [Y, Y, Y]),
    ("SWIZZLE_ZZZ", [Z, Z, Z]),
    ("SWIZZLE_XYY", [X, Y, Y]),
    ("SWIZZLE_XXY", [X, X, Y]),
    ("SWIZZLE_XZZ", [X, Z, Z]),
    ("SWIZZLE_XXZ", [X, X, Z]),
    ("SWIZZLE_YXX", [Y, X, X]),
    ("SWIZZLE_YYX", [Y, Y, X]),
    ("SWIZZLE_YZZ", [Y, Z, Z]),
    ("SWIZZLE_YYZ", [Y, Y, Z]),
    ("SWIZZLE_ZXX", [Z, X, X]),
    ("SWIZZLE_ZZX", [Z, Z, X]),
    ("SWIZZLE_ZYY", [Z, Y, Y]),
    ("SWIZZLE_ZZY", [Z, Z, Y]),
    ("SWIZZLE_XZX", [X, Z, X]),
    ("SWIZZLE_XYX", [X, Y, X]),
    ("SWIZZLE_YXY", [Y, X, Y]),
    ("SWIZZLE_YZY", [Y, Z, Y]),
    ("SWIZZLE_ZXZ", [Z, X, Z]),
    ("SWIZZLE_ZYZ", [Z, Y, Z]),
    ("SWIZZLE_YXZ", [Y, X, Z]),
];

/// The entry-point table of a `.mem` file, in the order of the definitions file
/// (`rtl/aDefinitions.v`, `ENTRYPOINT_ADRR_*`), with each routine's default ROM address. The
/// original assembler writes one row per name: the ROM address, or the file's own routine
/// when the source defines `NAME:`.
pub const ENTRY_POINTS: [(&str, u16); 12] = [
    ("ENTRYPOINT_ADRR_INITIAL", 0),
    ("ENTRYPOINT_ADRR_CPPU", 44),
    ("ENTRYPOINT_ADRR_RGU", 47),
    ("ENTRYPOINT_ADRR_AABBIU", 69),
    ("ENTRYPOINT_ADRR_BIU", 157),
    ("ENTRYPOINT_ADRR_PSU", 232),
    ("ENTRYPOINT_ADRR_PSU2", 248),
    ("ENTRYPOINT_ADRR_TCC", 190),
    ("ENTRYPOINT_ADRR_NPG", 55),
    ("ENTRYPOINT_ADRR_USERCONSTANTS", 276),
    ("ENTRYPOINT_ADRR_PIXELSHADER", 278),
    ("ENTRYPOINT_ADRR_MAIN", 37),
];

/// The SWIZZLE3D immediates the RTL's swizzle unit implements (`Module_Swizzle.v` lines 20-50).
pub const RTL_SWIZZLES: [u32; 4] = [0, 1, 2, 21];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_sorted() {
        for w in OPS.windows(2) {
            assert!(w[0].code < w[1].code, "{} / {}", w[0].name, w[1].name);
        }
        for o in OPS {
            assert_eq!(OPS.iter().filter(|p| p.name == o.name).count(), 1);
        }
    }

    #[test]
    fn jump_encodings_follow_component_and_test_bits() {
        for o in OPS {
            if let Sem::Jump(c, t) = o.sem {
                assert_eq!((o.code >> 3) & 3, c as u16 + 1, "{}", o.name);
                let tb = match t {
                    Greater => 0,
                    Less => 1,
                    Equal => 2,
                    NotEqual => 3,
                    GreaterEqual => 4,
                    LessEqual => 5,
                };
                assert_eq!(o.code & 7, tb, "{}", o.name);
                assert_eq!(o.code & IMM_BIT, 0);
            }
        }
    }

    #[test]
    fn immediate_forms_have_bit_6() {
        for o in OPS {
            let imm = matches!(
                o.form,
                Form::Imm | Form::ImmJump | Form::Return | Form::Swizzle
            );
            assert_eq!(o.code & IMM_BIT != 0, imm, "{}", o.name);
        }
    }
}
