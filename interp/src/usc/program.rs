//! The parsed form of a USC program: groups of instructions with their operands, each with
//! the line and column it came from (validation and "not supported" errors point there).

use super::table::{Op, OpInfo};
use std::fmt;

/// A position in the source text (1-based).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Register banks the in-scope instructions read and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bank {
    /// Temporaries `r<n>` (per instance).
    R,
    /// Vertex inputs `vi<n>` (per instance).
    Vi,
    /// Internal registers `i<n>` (per instance).
    I,
    /// Shared registers `sh<n>` (one for all instances).
    Sh,
    /// Coefficient registers `cf<n>` (one for all instances).
    Cf,
    /// Special constants `c<n>` of the reference's appendix (read-only).
    C,
    /// Index registers `idx0`, `idx1` (per instance).
    Idx,
}

impl Bank {
    /// Text prefix of the bank's registers.
    pub fn prefix(self) -> &'static str {
        match self {
            Bank::R => "r",
            Bank::Vi => "vi",
            Bank::I => "i",
            Bank::Sh => "sh",
            Bank::Cf => "cf",
            Bank::C => "c",
            Bank::Idx => "idx",
        }
    }

    /// Number of registers of the bank (the reference, "Types of Registers"; see `docs/usc.md`).
    pub fn count(self) -> u16 {
        match self {
            Bank::R | Bank::Vi => 248,
            Bank::I => 8,
            Bank::Sh => 4096,
            Bank::Cf => 256,
            Bank::C => 160,
            Bank::Idx => 2,
        }
    }

    /// Whether every instance has its own copy.
    pub fn per_instance(self) -> bool {
        matches!(self, Bank::R | Bank::Vi | Bank::I | Bank::Idx)
    }

    /// All banks, in the order the JSON output lists them.
    pub const ALL: [Bank; 7] = [
        Bank::R,
        Bank::Vi,
        Bank::I,
        Bank::Sh,
        Bank::Cf,
        Bank::C,
        Bank::Idx,
    ];
}

/// One register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    pub bank: Bank,
    pub index: u16,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.bank.prefix(), self.index)
    }
}

/// Operand modifiers (the dotted suffixes of an operand).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mods {
    pub abs: bool,
    pub neg: bool,
    pub flr: bool,
    pub invert: bool,
    /// `.e0`-`.e3`: bit n set for `.en`. On a source it selects one element, on a
    /// destination it is a byte mask.
    pub elems: u8,
}

impl Mods {
    pub fn is_empty(&self) -> bool {
        *self == Mods::default()
    }

    /// The element a source selects (`.e0` when none is named).
    pub fn element(&self) -> u8 {
        if self.elems == 0 {
            0
        } else {
            self.elems.trailing_zeros() as u8
        }
    }
}

impl fmt::Display for Mods {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for n in 0..4 {
            if self.elems >> n & 1 != 0 {
                write!(f, ".e{n}")?;
            }
        }
        if self.flr {
            f.write_str(".flr")?;
        }
        if self.abs {
            f.write_str(".abs")?;
        }
        if self.neg {
            f.write_str(".neg")?;
        }
        if self.invert {
            f.write_str(".invert")?;
        }
        Ok(())
    }
}

/// What an operand names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// `_`, or an operand left out at the end of the list.
    Blank,
    /// A register of a bank.
    Reg(Reg, Mods),
    /// Feed-through `ft0`-`ft5`.
    Ft(u8, Mods),
    /// The test feed-through `ftt`.
    Ftt,
    /// The predicate `p0`.
    P0,
    /// The group outputs `w0`, `w1`.
    W(u8, Mods),
    /// A source slot: `s0`-`s5` (`is == false`) or `is0`-`is5`.
    Slot { is: bool, n: u8, mods: Mods },
    /// An integer immediate.
    Imm(i64),
    /// Text of an operand of an instruction outside the scope, kept for printing.
    Raw(String),
}

impl Operand {
    pub fn mods(&self) -> Mods {
        match self {
            Operand::Reg(_, m) | Operand::Ft(_, m) | Operand::W(_, m) => *m,
            Operand::Slot { mods, .. } => *mods,
            _ => Mods::default(),
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Blank => f.write_str("_"),
            Operand::Reg(r, m) => write!(f, "{r}{m}"),
            Operand::Ft(n, m) => write!(f, "ft{n}{m}"),
            Operand::Ftt => f.write_str("ftt"),
            Operand::P0 => f.write_str("p0"),
            Operand::W(n, m) => write!(f, "w{n}{m}"),
            Operand::Slot { is, n, mods } => {
                write!(f, "{}{n}{mods}", if *is { "is" } else { "s" })
            }
            Operand::Imm(v) => write!(f, "{v}"),
            Operand::Raw(s) => f.write_str(s),
        }
    }
}

/// Instruction modifiers (the dotted suffixes of the mnemonic) the scope defines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstrMods {
    /// `.sat`: clamp the float result to [+0, 1], or an integer result to its type's range.
    pub sat: bool,
    /// Data type of a test (`.f32`, `.u32`, `.s32`, `.u16`, `.s16`, `.u8`, `.s8`).
    pub ty: Option<TestType>,
    /// Format of PCK/UNPCK.
    pub format: Option<PackFormat>,
    /// `.scale`: normalised PCK/UNPCK.
    pub scale: bool,
    /// `.roundzero` (the reference's example spells it `.rndzero`).
    pub roundzero: bool,
    /// Sign position of ASR.
    pub signpos: Option<SignPos>,
    /// `.a` / `.b` part of CNDSETL.
    pub part_b: Option<bool>,
    /// `.allinst` / `.anyinst` of a branch.
    pub branch: Option<BranchMode>,
}

/// An instruction modifier's values, each with its spelling: the enum, `ALL` (every value
/// with its name, in order) and `name`; written `Value: "spelling",`.
macro_rules! spelled {
    ($(#[$meta:meta])* $ty:ident { $($(#[$vmeta:meta])* $v:ident: $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $ty {
            $($(#[$vmeta])* $v,)*
        }

        impl $ty {
            pub const ALL: [($ty, &'static str); [$($text),*].len()] = [$(($ty::$v, $text)),*];

            pub fn name(self) -> &'static str {
                $ty::ALL.iter().find(|t| t.0 == self).unwrap().1
            }
        }
    };
}

spelled! {
    /// Type of a test instruction's comparison.
    TestType {
        F32: "f32",
        U32: "u32",
        S32: "s32",
        U16: "u16",
        S16: "s16",
        U8: "u8",
        S8: "s8",
    }
}

spelled! {
    /// PCK/UNPCK formats inside the scope (the reference names more; they stop with "not
    /// supported").
    PackFormat {
        U8888: "u8888",
        S8888: "s8888",
        U1616: "u1616",
        S1616: "s1616",
        U32: "u32",
        S32: "s32",
        F32: "f32",
    }
}

impl PackFormat {
    /// Every format name the reference lists for PCK or UNPCK.
    pub const SEED_NAMES: [&'static str; 26] = [
        "u8888",
        "s8888",
        "s8888ogl",
        "o8888",
        "u1616",
        "s1616",
        "s1616ogl",
        "o1616",
        "f16f16",
        "u32",
        "s32",
        "f32",
        "f32mask",
        "u1010102",
        "s1010102",
        "2f102f10f10",
        "u111110",
        "s111110",
        "f111110",
        "se9995",
        "u565u565",
        "coveragemask",
        "s8d24",
        "d24s8",
        "const0",
        "const1",
    ];
}

spelled! {
    /// ASR's sign position (the reference, ASR).
    SignPos {
        /// Bit 31.
        Twb: "twb",
        /// Bit 15.
        Pwb: "pwb",
        /// `FT0 & 0x1F`.
        Mtb: "mtb",
        /// `FT3 & 0x1F`.
        Ftb: "ftb",
    }
}

/// Which instances decide a predicated branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchMode {
    AllInst,
    AnyInst,
}

/// One instruction as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    /// What the instruction is, or `None` for an instruction outside the scope.
    pub info: Option<&'static OpInfo>,
    /// The mnemonic as written, lower case, with its dotted modifiers (for messages and for
    /// printing instructions outside the scope).
    pub text: String,
    pub mods: InstrMods,
    pub operands: Vec<Operand>,
    pub span: Span,
}

impl Instr {
    pub fn op(&self) -> Option<Op> {
        self.info.map(|i| i.op)
    }
}

/// The execution predicate of a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pred {
    #[default]
    Always,
    P0,
    NotP0,
}

/// One instruction group (`N : ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub number: u32,
    pub pred: Pred,
    /// `(ignorepe)`: run on every instance whatever its execution mask.
    pub ignore_pe: bool,
    pub instrs: Vec<Instr>,
    pub span: Span,
}

/// A parsed program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub groups: Vec<Group>,
}

impl Program {
    /// Index of the group numbered `n`.
    pub fn group_index(&self, n: u32) -> Option<usize> {
        self.groups.binary_search_by_key(&n, |g| g.number).ok()
    }
}
