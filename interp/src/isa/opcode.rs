//! The one opcode table. Decode, encode, disassembly, the interpreter's pre-decoder and the JIT
//! all derive from [`Opcode`] and [`Format`], so an opcode is described in exactly one place.

use std::fmt;

/// Instruction word layouts of seed 000 ("Instruction formats").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// No operands (NOP, END, BREAK, EMIT).
    Zero,
    /// Two sources, the first one wide (7-bit, may be a constant).
    One,
    /// Two sources, the second one wide ("inverted" I-forms).
    OneI,
    /// One wide source.
    OneU,
    /// Comparison: two sources plus two comparison operators.
    OneC,
    /// Flow control with a condition on the cmp flags.
    Two,
    /// Flow control on a bool (or int, for LOOP) uniform.
    Three,
    /// SETEMIT.
    Four,
    /// MAD: three sources, the second one wide.
    Five,
    /// MADI: three sources, the third one wide.
    FiveI,
}

macro_rules! opcode_table {
    ($( $variant:ident = $code:literal, $mnemonic:literal, $format:ident; )*) => {
        /// A defined PICA200 shader opcode. CMP, MAD and MADI occupy several 6-bit codes
        /// (their low opcode bits carry operands); the value here is the lowest code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", $mnemonic, "`")]
                $variant = $code,
            )*
        }

        impl Opcode {
            /// Every defined opcode, in code order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant),*];

            /// Lower-case mnemonic as picasso spells it.
            pub fn mnemonic(self) -> &'static str {
                match self { $(Opcode::$variant => $mnemonic,)* }
            }

            /// Word layout of this opcode.
            pub fn format(self) -> Format {
                match self { $(Opcode::$variant => Format::$format,)* }
            }

            /// Look an opcode up by mnemonic (case-insensitive, as picasso does).
            pub fn from_mnemonic(name: &str) -> Option<Opcode> {
                $( if name.eq_ignore_ascii_case($mnemonic) { return Some(Opcode::$variant); } )*
                None
            }
        }
    };
}

opcode_table! {
    Add = 0x00, "add", One;
    Dp3 = 0x01, "dp3", One;
    Dp4 = 0x02, "dp4", One;
    Dph = 0x03, "dph", One;
    Dst = 0x04, "dst", One;
    Ex2 = 0x05, "ex2", OneU;
    Lg2 = 0x06, "lg2", OneU;
    Litp = 0x07, "litp", OneU;
    Mul = 0x08, "mul", One;
    Sge = 0x09, "sge", One;
    Slt = 0x0A, "slt", One;
    Flr = 0x0B, "flr", OneU;
    Max = 0x0C, "max", One;
    Min = 0x0D, "min", One;
    Rcp = 0x0E, "rcp", OneU;
    Rsq = 0x0F, "rsq", OneU;
    Mova = 0x12, "mova", OneU;
    Mov = 0x13, "mov", OneU;
    Dphi = 0x18, "dphi", OneI;
    Dsti = 0x19, "dsti", OneI;
    Sgei = 0x1A, "sgei", OneI;
    Slti = 0x1B, "slti", OneI;
    Break = 0x20, "break", Zero;
    Nop = 0x21, "nop", Zero;
    End = 0x22, "end", Zero;
    Breakc = 0x23, "breakc", Two;
    Call = 0x24, "call", Two;
    Callc = 0x25, "callc", Two;
    Callu = 0x26, "callu", Three;
    Ifu = 0x27, "ifu", Three;
    Ifc = 0x28, "ifc", Two;
    Loop = 0x29, "loop", Three;
    Emit = 0x2A, "emit", Zero;
    Setemit = 0x2B, "setemit", Four;
    Jmpc = 0x2C, "jmpc", Two;
    Jmpu = 0x2D, "jmpu", Three;
    Cmp = 0x2E, "cmp", OneC;
    Madi = 0x30, "madi", FiveI;
    Mad = 0x38, "mad", Five;
}

impl Opcode {
    /// Decode the top six bits of an instruction word. `None` for the undefined codes
    /// 0x10, 0x11, 0x14-0x17 and 0x1C-0x1F.
    pub fn from_code(code: u8) -> Option<Opcode> {
        Some(match code & 0x3F {
            0x00 => Opcode::Add,
            0x01 => Opcode::Dp3,
            0x02 => Opcode::Dp4,
            0x03 => Opcode::Dph,
            0x04 => Opcode::Dst,
            0x05 => Opcode::Ex2,
            0x06 => Opcode::Lg2,
            0x07 => Opcode::Litp,
            0x08 => Opcode::Mul,
            0x09 => Opcode::Sge,
            0x0A => Opcode::Slt,
            0x0B => Opcode::Flr,
            0x0C => Opcode::Max,
            0x0D => Opcode::Min,
            0x0E => Opcode::Rcp,
            0x0F => Opcode::Rsq,
            0x12 => Opcode::Mova,
            0x13 => Opcode::Mov,
            0x18 => Opcode::Dphi,
            0x19 => Opcode::Dsti,
            0x1A => Opcode::Sgei,
            0x1B => Opcode::Slti,
            0x20 => Opcode::Break,
            0x21 => Opcode::Nop,
            0x22 => Opcode::End,
            0x23 => Opcode::Breakc,
            0x24 => Opcode::Call,
            0x25 => Opcode::Callc,
            0x26 => Opcode::Callu,
            0x27 => Opcode::Ifu,
            0x28 => Opcode::Ifc,
            0x29 => Opcode::Loop,
            0x2A => Opcode::Emit,
            0x2B => Opcode::Setemit,
            0x2C => Opcode::Jmpc,
            0x2D => Opcode::Jmpu,
            0x2E | 0x2F => Opcode::Cmp,
            0x30..=0x37 => Opcode::Madi,
            0x38..=0x3F => Opcode::Mad,
            _ => return None,
        })
    }

    /// Bits of an instruction word that this opcode gives a meaning to. The others are
    /// ignored on execution; decoding drops them and [`crate::isa::unused_bits`] recovers them.
    pub fn defined_bits(self) -> u32 {
        const TOP6: u32 = 0xFC00_0000;
        const NUM: u32 = 0xFF;
        const DEST: u32 = 0xFFF << 10;
        const COND: u32 = 0xF << 22;
        match self.format() {
            Format::One | Format::OneI | Format::OneC | Format::Five | Format::FiveI => u32::MAX,
            Format::OneU if self == Opcode::Mova => TOP6 | 0x7F | (0x7F << 12) | (0x3 << 19),
            Format::OneU => TOP6 | 0x7F | (0x7F << 12) | (0x3 << 19) | (0x1F << 21),
            Format::Zero => TOP6,
            Format::Four => TOP6 | (0xF << 22),
            Format::Two => match self {
                Opcode::Breakc => TOP6 | COND,
                Opcode::Call => TOP6 | NUM | DEST,
                Opcode::Jmpc => TOP6 | DEST | COND,
                _ => TOP6 | NUM | DEST | COND,
            },
            Format::Three => match self {
                Opcode::Loop => TOP6 | DEST | (0x3 << 22),
                Opcode::Jmpu => TOP6 | 1 | DEST | COND,
                _ => TOP6 | NUM | DEST | COND,
            },
        }
    }

    /// True for opcodes whose wide source is the second one (the I-forms and MADI).
    pub fn is_inverted(self) -> bool {
        matches!(
            self,
            Opcode::Dphi | Opcode::Dsti | Opcode::Sgei | Opcode::Slti | Opcode::Madi
        )
    }

    /// The non-inverted twin of an I-form (DPHI → DPH, MADI → MAD); other opcodes map to
    /// themselves. Both forms compute the same thing.
    pub fn base(self) -> Opcode {
        match self {
            Opcode::Dphi => Opcode::Dph,
            Opcode::Dsti => Opcode::Dst,
            Opcode::Sgei => Opcode::Sge,
            Opcode::Slti => Opcode::Slt,
            Opcode::Madi => Opcode::Mad,
            op => op,
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}
