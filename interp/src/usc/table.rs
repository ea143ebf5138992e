//! The instruction table: every instruction form inside the scope, with the unit (phase) it
//! occupies, its operand shapes and the modifiers each operand takes (the reference, sections
//! 6-13).
//! The parser picks a row by mnemonic and operands, the printer prints the row's mnemonic,
//! the validator checks phase order and feed-throughs with the row's unit and operands, and
//! the interpreter dispatches on [`Op`].

/// What an instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    // Main ALU, floating point.
    Fmad,
    Fadd,
    Fmul,
    Mbyp,
    Frcp,
    Frsq,
    Fsqrt,
    Flog,
    Fexp,
    // Data movement.
    /// Phase-2 MOV: overrides W0 (masked).
    Mov,
    /// MOVC: conditional W0/W1 (masked W0).
    Movc,
    /// The reference's `mov ft0.e0.e1.e2.e3, ft0` (Table 1): a MOV whose destination is
    /// a feed-through. The seed does not say what it does; it parses and stops with "not
    /// supported".
    MovToFt,
    /// The reference's five-operand `mov D, ELSE, ftt, T0, T1`: a MOVC whose W0 goes to D.
    MovcWrite,
    Pck,
    Unpck,
    // Integer.
    Uadd8,
    Umul8,
    Umad8,
    Iadd8,
    Imul8,
    Imad8,
    Uadd16,
    Umul16,
    Umad16,
    Iadd16,
    Imul16,
    Imad16,
    Add64,
    Uadd6432,
    Sadd6432,
    Umadd32,
    Smadd32,
    Umadd64,
    Smadd64,
    // Tests.
    Tstz,
    Tstgz,
    Tstgez,
    Tstc,
    Tste,
    Tstg,
    Tstge,
    Tstne,
    Tstl,
    Tstle,
    Tstmin,
    Tstmax,
    // Bitwise group.
    And,
    Or,
    Xor,
    Nand,
    Nor,
    Xnor,
    Shfl,
    Rev,
    Lsl,
    Cps,
    Shr,
    Asr,
    Rol,
    Tz,
    Tnz,
    Byp,
    Msk,
    Cbs,
    Ftb,
    FtbShi,
    FtbMsb,
    // Conditionals (section 13).
    Cndst,
    Cndef,
    Cndsm,
    Cndlt,
    Cndend,
    Cndsetl,
    Cndlpc,
    // Flow control (section 12).
    Ba,
    Bal,
    Br,
    Brl,
    Lapc,
    Savl,
    // Group structure.
    /// Destination declaration `mov REG{.mask}, SRC`: one of the group's two writes.
    Write,
    /// Source declaration `mov s0, REG` / `mov is0, REG`.
    Decl,
}

/// The tests (section 9) as a pattern, the one list of them: `match op { usc_tests!() => .. }`
/// keeps a match exhaustive where a guard on [`Op::is_test`] would not.
#[macro_export]
macro_rules! usc_tests {
    () => {
        $crate::usc::table::Op::Tstz
            | $crate::usc::table::Op::Tstgz
            | $crate::usc::table::Op::Tstgez
            | $crate::usc::table::Op::Tstc
            | $crate::usc::table::Op::Tste
            | $crate::usc::table::Op::Tstg
            | $crate::usc::table::Op::Tstge
            | $crate::usc::table::Op::Tstne
            | $crate::usc::table::Op::Tstl
            | $crate::usc::table::Op::Tstle
            | $crate::usc::table::Op::Tstmin
            | $crate::usc::table::Op::Tstmax
    };
}

impl Op {
    /// A test: writes `ftt` (and `p0` when named) from a comparison or, for TSTC, the carry.
    pub fn is_test(self) -> bool {
        matches!(self, usc_tests!())
    }

    /// A test that compares its operands: every test but TSTC, which reads the integer carry.
    pub fn is_comparison(self) -> bool {
        self.is_test() && self != Op::Tstc
    }
}

/// The functional unit a row occupies. Within a group, units appear in this order (the
/// declaration first, the writes last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    Decl,
    // Main ALU.
    Phase0,
    Phase1,
    /// A phase-0 instruction with a 64-bit result: occupies phases 0 and 1.
    Phase01,
    Phase2Alu,
    Test,
    MovUnit,
    /// An instruction that uses the whole main ALU (FRCP ... FEXP).
    Complex,
    // Bitwise ALU.
    BitMask,
    Shift1,
    Count,
    Logical,
    Shift2,
    BitTest,
    // Control.
    Cond,
    Branch,
    Write,
}

impl Unit {
    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            Unit::BitMask
                | Unit::Shift1
                | Unit::Count
                | Unit::Logical
                | Unit::Shift2
                | Unit::BitTest
        )
    }

    pub fn is_main(self) -> bool {
        matches!(
            self,
            Unit::Phase0
                | Unit::Phase1
                | Unit::Phase01
                | Unit::Phase2Alu
                | Unit::Test
                | Unit::MovUnit
                | Unit::Complex
        )
    }

    /// Text for messages.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Decl => "source declaration",
            Unit::Phase0 => "phase 0",
            Unit::Phase1 => "phase 1",
            Unit::Phase01 => "phases 0 and 1",
            Unit::Phase2Alu => "phase 2",
            Unit::Test => "test",
            Unit::MovUnit => "mov",
            Unit::Complex => "complex (whole main ALU)",
            Unit::BitMask => "bitmask",
            Unit::Shift1 => "shift 1",
            Unit::Count => "count",
            Unit::Logical => "logical",
            Unit::Shift2 => "shift 2",
            Unit::BitTest => "bit test",
            Unit::Cond => "conditional",
            Unit::Branch => "branch",
            Unit::Write => "destination declaration",
        }
    }
}

/// Operand modifier sets (bit flags).
pub mod m {
    pub const NONE: u8 = 0;
    pub const ABS: u8 = 1;
    pub const NEG: u8 = 2;
    pub const FLR: u8 = 4;
    /// One element `.e0`-`.e3`.
    pub const E: u8 = 8;
    /// One element `.e0` or `.e1` (16-bit types).
    pub const E01: u8 = 16;
    pub const INVERT: u8 = 32;
    /// A destination byte mask `.e0.e1...`.
    pub const MASK: u8 = 64;
}

/// Feed-through sets (bit n = ftn).
pub mod ft {
    pub const FT0: u8 = 1;
    pub const FT1: u8 = 2;
    pub const FT2: u8 = 4;
    pub const FT3: u8 = 8;
    pub const FT4: u8 = 16;
    pub const FT5: u8 = 32;
    /// The reference's FTE: ft0 or ft1.
    pub const FTE: u8 = FT0 | FT1;
}

/// Operand shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A feed-through destination (the value is its number).
    DstFt(u8),
    /// A register destination (`r`, `vi`, `i`, `sh`, `cf`, `idx`), with the allowed modifiers.
    DstReg(u8),
    /// `w0` (a MOV/MOVC output), with a byte mask allowed.
    DstW0,
    /// A feed-through destination with a byte mask.
    DstFtMask,
    /// `w1`, `_` or a register: MOVC's second output.
    DstW1,
    /// A slot name being declared.
    DstSlot,
    /// An external source: a register, a special constant or a source slot.
    Src(u8),
    /// A phase-2 source: an external source or ft0/ft1.
    Is(u8),
    /// A feed-through of the set, with the modifiers.
    Ft(u8, u8),
    /// An external source or a feed-through of the set.
    SrcOrFt(u8, u8),
    /// An external source or an immediate.
    SrcOrImm,
    /// `p0` or `_`.
    P0Opt,
    /// `p0`.
    P0,
    /// `ftt`.
    Ftt,
    /// `ft1` or `_` (a logical instruction's mask).
    Ft1Opt,
    /// `ft1.invert` or `_`.
    Ft1InvOpt,
    /// A write source: any feed-through, `w0`, `w1` or an external source.
    WSrc,
    /// An immediate in the range.
    Imm(i64, i64),
    /// A conditional's predicate condition: 0-3 or `p0`, `!p0`, `true`, `false`.
    Pcnd,
    /// A branch target (a group number, or a relative offset for BR/BRL).
    Target,
}

/// Instruction modifier sets (bit flags).
pub mod im {
    pub const NONE: u16 = 0;
    pub const SAT: u16 = 1;
    pub const TYPE: u16 = 2;
    pub const FORMAT: u16 = 4;
    pub const SCALE: u16 = 8;
    pub const ROUNDZERO: u16 = 16;
    pub const SIGNPOS: u16 = 32;
    pub const PART: u16 = 64;
    pub const BRANCH: u16 = 128;
}

/// One instruction form.
#[derive(Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub op: Op,
    /// Mnemonic (lower case) this form is written and printed with.
    pub name: &'static str,
    pub unit: Unit,
    pub args: &'static [Arg],
    /// Instruction modifiers the form accepts.
    pub imods: u16,
}

use m::*;
use Arg::*;
use Op::*;
use Unit::*;

macro_rules! row {
    ($op:expr, $name:expr, $unit:expr, [$($a:expr),*], $im:expr) => {
        OpInfo { op: $op, name: $name, unit: $unit, args: &[$($a),*], imods: $im }
    };
}

const AN: u8 = ABS | NEG;
const ANF: u8 = ABS | NEG | FLR;
const ANE: u8 = ABS | NEG | E;
const AE: u8 = ABS | E;
const ANE01: u8 = ABS | NEG | E01;
const AE01: u8 = ABS | E01;

/// Every instruction form inside the scope.
pub static TABLE: &[OpInfo] = &[
    // Source declarations (`docs/usc.md`: the seed names the slots but shows no syntax).
    row!(Op::Decl, "mov", Unit::Decl, [DstSlot, Src(NONE)], im::NONE),
    // FMAD (section 6): phase 0 reads S0-S2, phase 1 S3-S5; .flr only on the addend.
    row!(
        Fmad,
        "fmad",
        Phase0,
        [DstFt(0), Src(AN), Src(AN), Src(ANF)],
        im::SAT
    ),
    row!(
        Fmad,
        "fmad",
        Phase1,
        [DstFt(1), Src(AN), Src(AN), Src(ANF)],
        im::SAT
    ),
    row!(
        Fmad,
        "mad",
        Phase0,
        [DstFt(0), Src(AN), Src(AN), Src(ANF)],
        im::SAT
    ),
    row!(
        Fmad,
        "mad",
        Phase1,
        [DstFt(1), Src(AN), Src(AN), Src(ANF)],
        im::SAT
    ),
    // FADD / FMUL: phases 0 and 1 from external sources, phase 2 from IS and FTE.
    row!(
        Fadd,
        "fadd",
        Phase0,
        [DstFt(0), Src(ANF), Src(ABS)],
        im::SAT
    ),
    row!(
        Fadd,
        "fadd",
        Phase1,
        [DstFt(1), Src(ANF), Src(ABS)],
        im::SAT
    ),
    row!(
        Fadd,
        "fadd",
        Phase2Alu,
        [DstFt(2), Is(AN), Ft(ft::FTE, ABS)],
        im::SAT
    ),
    row!(
        Fmul,
        "fmul",
        Phase0,
        [DstFt(0), Src(ANF), Src(ABS)],
        im::SAT
    ),
    row!(
        Fmul,
        "fmul",
        Phase1,
        [DstFt(1), Src(ANF), Src(ABS)],
        im::SAT
    ),
    row!(
        Fmul,
        "fmul",
        Phase2Alu,
        [DstFt(2), Is(AN), Ft(ft::FTE, ABS)],
        im::SAT
    ),
    row!(Fmul, "mul", Phase0, [DstFt(0), Src(ANF), Src(ABS)], im::SAT),
    row!(Fmul, "mul", Phase1, [DstFt(1), Src(ANF), Src(ABS)], im::SAT),
    row!(
        Fmul,
        "mul",
        Phase2Alu,
        [DstFt(2), Is(AN), Ft(ft::FTE, ABS)],
        im::SAT
    ),
    // MBYP, also written `mov ftN, SRC` in the seed's examples.
    row!(Mbyp, "mbyp", Phase0, [DstFt(0), Src(AN)], im::NONE),
    row!(Mbyp, "mbyp", Phase1, [DstFt(1), Src(AN)], im::NONE),
    row!(Mbyp, "mov", Phase0, [DstFt(0), Src(AN)], im::NONE),
    row!(Mbyp, "mov", Phase1, [DstFt(1), Src(AN)], im::NONE),
    // Complex instructions: the whole main ALU, result to a register (W0).
    row!(Frcp, "frcp", Complex, [DstReg(NONE), Src(AN)], im::NONE),
    row!(Frsq, "frsq", Complex, [DstReg(NONE), Src(AN)], im::NONE),
    row!(Fsqrt, "fsqrt", Complex, [DstReg(NONE), Src(AN)], im::NONE),
    row!(Flog, "flog", Complex, [DstReg(NONE), Src(AN)], im::NONE),
    row!(Fexp, "fexp", Complex, [DstReg(NONE), Src(AN)], im::NONE),
    // Data movement (section 7).
    row!(
        Mov,
        "mov",
        MovUnit,
        [DstW0, Ft(ft::FT0 | ft::FT1 | ft::FT2, NONE)],
        im::NONE
    ),
    row!(
        MovToFt,
        "mov",
        MovUnit,
        [DstFtMask, Ft(ft::FT0 | ft::FT1 | ft::FT2, NONE)],
        im::NONE
    ),
    row!(
        Movc,
        "movc",
        MovUnit,
        [
            DstW0,
            DstW1,
            Ftt,
            Ft(ft::FT0 | ft::FT1 | ft::FT2, NONE),
            Ft(ft::FT0 | ft::FT1 | ft::FT2, NONE)
        ],
        im::NONE
    ),
    row!(
        MovcWrite,
        "mov",
        MovUnit,
        [
            DstReg(MASK),
            WSrc,
            Ftt,
            Ft(ft::FT0 | ft::FT1 | ft::FT2, NONE),
            Ft(ft::FT0 | ft::FT1 | ft::FT2, NONE)
        ],
        im::NONE
    ),
    row!(
        Pck,
        "pck",
        Phase2Alu,
        [DstFt(2), Is(NONE)],
        im::FORMAT | im::SCALE | im::ROUNDZERO
    ),
    row!(
        Unpck,
        "unpck",
        Phase0,
        [DstFt(0), Src(E)],
        im::FORMAT | im::SCALE | im::ROUNDZERO
    ),
    // Integer (section 8).
    row!(
        Uadd8,
        "uadd8",
        Phase0,
        [DstFt(0), Src(ANE), Src(AE)],
        im::SAT
    ),
    row!(
        Umul8,
        "umul8",
        Phase0,
        [DstFt(0), Src(ANE), Src(AE)],
        im::SAT
    ),
    row!(
        Umad8,
        "umad8",
        Phase0,
        [DstFt(0), Src(ANE), Src(AE), Src(ANE)],
        im::SAT
    ),
    row!(
        Iadd8,
        "iadd8",
        Phase0,
        [DstFt(0), Src(ANE), Src(AE)],
        im::SAT
    ),
    row!(
        Imul8,
        "imul8",
        Phase0,
        [DstFt(0), Src(ANE), Src(AE)],
        im::SAT
    ),
    row!(
        Imad8,
        "imad8",
        Phase0,
        [DstFt(0), Src(ANE), Src(AE), Src(ANE)],
        im::SAT
    ),
    row!(
        Uadd16,
        "uadd16",
        Phase0,
        [DstFt(0), Src(ANE01), Src(AE01)],
        im::SAT
    ),
    row!(
        Umul16,
        "umul16",
        Phase0,
        [DstFt(0), Src(ANE01), Src(AE01)],
        im::SAT
    ),
    row!(
        Umad16,
        "umad16",
        Phase0,
        [DstFt(0), Src(ANE01), Src(AE01), Src(ANE01)],
        im::SAT
    ),
    row!(
        Iadd16,
        "iadd16",
        Phase0,
        [DstFt(0), Src(ANE01), Src(AE01)],
        im::SAT
    ),
    row!(
        Imul16,
        "imul16",
        Phase0,
        [DstFt(0), Src(ANE01), Src(AE01)],
        im::SAT
    ),
    row!(
        Imad16,
        "imad16",
        Phase0,
        [DstFt(0), Src(ANE01), Src(AE01), Src(ANE01)],
        im::SAT
    ),
    row!(
        Add64,
        "add64",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    row!(
        Uadd6432,
        "uadd6432",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    row!(
        Sadd6432,
        "sadd6432",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    row!(
        Umadd32,
        "umadd32",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    row!(
        Smadd32,
        "smadd32",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    row!(
        Umadd64,
        "umadd64",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    row!(
        Smadd64,
        "smadd64",
        Phase01,
        [DstFt(0), Src(AN), Src(AN), Src(AN), Src(AN), P0Opt],
        im::NONE
    ),
    // Tests (section 9): one or two IS operands; `tstes32` is the seed's spelling of tste.s32.
    row!(Tstz, "tstz", Test, [Ftt, P0Opt, Is(E)], im::TYPE),
    row!(Tstgz, "tstgz", Test, [Ftt, P0Opt, Is(E)], im::TYPE),
    row!(Tstgez, "tstgez", Test, [Ftt, P0Opt, Is(E)], im::TYPE),
    row!(Tstc, "tstc", Test, [Ftt, P0Opt], im::TYPE),
    row!(Tste, "tste", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tste, "tstes32", Test, [Ftt, P0Opt, Is(E), Is(E)], im::NONE),
    row!(Tstg, "tstg", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tstge, "tstge", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tstne, "tstne", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tstl, "tstl", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tstle, "tstle", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tstmin, "tstmin", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    row!(Tstmax, "tstmax", Test, [Ftt, P0Opt, Is(E), Is(E)], im::TYPE),
    // Bitwise (section 10). Logical instructions: full form and the seed's short form.
    row!(
        And,
        "and",
        Logical,
        [DstFt(4), Ft1Opt, Ft(ft::FT2, NONE), Ft1InvOpt, Src(NONE)],
        im::NONE
    ),
    row!(
        Or,
        "or",
        Logical,
        [DstFt(4), Ft1Opt, Ft(ft::FT2, NONE), Ft1InvOpt, Src(NONE)],
        im::NONE
    ),
    row!(
        Xor,
        "xor",
        Logical,
        [DstFt(4), Ft1Opt, Ft(ft::FT2, NONE), Ft1InvOpt, Src(NONE)],
        im::NONE
    ),
    row!(
        Nand,
        "nand",
        Logical,
        [DstFt(4), Ft1Opt, Ft(ft::FT2, NONE), Ft1InvOpt, Src(NONE)],
        im::NONE
    ),
    row!(
        Nor,
        "nor",
        Logical,
        [DstFt(4), Ft1Opt, Ft(ft::FT2, NONE), Ft1InvOpt, Src(NONE)],
        im::NONE
    ),
    row!(
        Xnor,
        "xnor",
        Logical,
        [DstFt(4), Ft1Opt, Ft(ft::FT2, NONE), Ft1InvOpt, Src(NONE)],
        im::NONE
    ),
    row!(
        Shfl,
        "shfl",
        Shift1,
        [DstFt(2), Src(NONE), Src(NONE)],
        im::NONE
    ),
    row!(Rev, "rev", Shift1, [DstFt(2), Src(NONE)], im::NONE),
    row!(
        Lsl,
        "lsl",
        Shift1,
        [DstFt(2), Src(NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Lsl,
        "lsl",
        Shift2,
        [DstFt(5), Ft(ft::FT4, NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Cps,
        "cps",
        Shift2,
        [DstFt(5), P0, Ft(ft::FT4, NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Shr,
        "shr",
        Shift2,
        [DstFt(5), Ft(ft::FT4, NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Asr,
        "asr",
        Shift2,
        [DstFt(5), Ft(ft::FT4, NONE), Src(NONE)],
        im::SIGNPOS
    ),
    row!(
        Rol,
        "rol",
        Shift2,
        [DstFt(5), Ft(ft::FT4, NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Tz,
        "tz",
        BitTest,
        [P0, Ft(ft::FT3 | ft::FT5, NONE)],
        im::NONE
    ),
    row!(
        Tnz,
        "tnz",
        BitTest,
        [P0, Ft(ft::FT3 | ft::FT5, NONE)],
        im::NONE
    ),
    row!(
        Byp,
        "byp",
        BitMask,
        [DstFt(0), DstFt(1), Src(NONE), SrcOrImm],
        im::NONE
    ),
    row!(Byp, "byp", Shift1, [DstFt(2), Src(NONE)], im::NONE),
    row!(
        Byp,
        "byp",
        Count,
        [DstFt(3), SrcOrFt(ft::FT2, NONE)],
        im::NONE
    ),
    row!(
        Byp,
        "byp",
        Logical,
        [DstFt(4), SrcOrFt(ft::FT1, NONE)],
        im::NONE
    ),
    row!(
        Byp,
        "mov",
        BitMask,
        [DstFt(0), DstFt(1), Src(NONE), SrcOrImm],
        im::NONE
    ),
    row!(Byp, "mov", Shift1, [DstFt(2), Src(NONE)], im::NONE),
    row!(
        Byp,
        "mov",
        Count,
        [DstFt(3), SrcOrFt(ft::FT2, NONE)],
        im::NONE
    ),
    row!(
        Byp,
        "mov",
        Logical,
        [DstFt(4), SrcOrFt(ft::FT1, NONE)],
        im::NONE
    ),
    row!(
        Msk,
        "msk",
        BitMask,
        [DstFt(0), DstFt(1), Src(NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Cbs,
        "cbs",
        Count,
        [DstFt(3), SrcOrFt(ft::FT2, NONE)],
        im::NONE
    ),
    row!(
        Ftb,
        "ftb",
        Count,
        [DstFt(3), SrcOrFt(ft::FT2, NONE)],
        im::NONE
    ),
    row!(FtbShi, "ftb_shi", Count, [DstFt(3), Src(NONE)], im::NONE),
    row!(
        FtbMsb,
        "ftb_msb",
        Count,
        [DstFt(3), Ft(ft::FT2, NONE)],
        im::NONE
    ),
    // Conditionals (section 13).
    row!(
        Cndst,
        "cndst",
        Cond,
        [Pcnd, DstReg(NONE), Src(NONE), Imm(0, 2)],
        im::NONE
    ),
    row!(
        Cndef,
        "cndef",
        Cond,
        [Pcnd, DstReg(NONE), Src(NONE), Imm(0, 2)],
        im::NONE
    ),
    row!(
        Cndsm,
        "cndsm",
        Cond,
        [Pcnd, DstReg(NONE), Src(NONE), Src(NONE)],
        im::NONE
    ),
    row!(
        Cndlt,
        "cndlt",
        Cond,
        [Pcnd, DstReg(NONE), P0, Src(NONE), Imm(1, 2)],
        im::NONE
    ),
    row!(
        Cndend,
        "cndend",
        Cond,
        [DstReg(NONE), Src(NONE), Imm(1, 2)],
        im::NONE
    ),
    row!(
        Cndsetl,
        "cndsetl",
        Cond,
        [DstReg(NONE), Src(NONE), Src(NONE)],
        im::PART
    ),
    row!(Cndlpc, "cndlpc", Cond, [DstReg(NONE), Src(NONE)], im::NONE),
    // Flow control (section 12).
    row!(Ba, "ba", Branch, [Target], im::BRANCH),
    row!(Bal, "bal", Branch, [Target], im::BRANCH),
    row!(Br, "br", Branch, [Target], im::BRANCH),
    row!(Brl, "brl", Branch, [Target], im::BRANCH),
    row!(Lapc, "lapc", Branch, [], im::NONE),
    row!(Savl, "savl", Branch, [DstReg(NONE)], im::NONE),
    // Destination declarations: the group's writes.
    row!(
        Op::Write,
        "mov",
        Unit::Write,
        [DstReg(MASK), WSrc],
        im::NONE
    ),
];

/// Mnemonics of the reference outside the scope: they parse (operands kept as text) and stop with
/// "not supported: NAME" when the program is prepared for running.
pub const UNSUPPORTED: &[&str] = &[
    "gcmp",
    "gexp",
    "f16sop",
    "sop",
    "sopmov",
    "sopu8madmov",
    "fdsx",
    "fdsy",
    "fdsxf",
    "fdsyf",
    "converttof64",
    "convertfromf64",
    "fsinc",
    "farctanc",
    "fred",
    "gta",
    "uvsw",
    "tessw",
    "atst",
    "depthf",
    "fitr",
    "fitrp",
    "idf",
    "ld",
    "st",
    "smp1d",
    "smp2d",
    "smp3d",
    "atom",
    "bpret",
    "wdf",
    "itrsmp1d",
    "itrsmp2d",
    "itrsmp3d",
    "itrsm2d",
    "sbo",
    "ditr",
];

/// Whether `name` (lower case, without modifiers) starts an instruction.
pub fn is_mnemonic(name: &str) -> bool {
    TABLE.iter().any(|r| r.name == name) || UNSUPPORTED.contains(&name)
}

/// The forms written with `name`.
pub fn rows(name: &str) -> impl Iterator<Item = &'static OpInfo> + '_ {
    TABLE.iter().filter(move |r| r.name == name)
}
