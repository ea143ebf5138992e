//! The one opcode/operand table. Every row of [`opcode_table!`] gives an opcode's codes,
//! mnemonic, word layout, the [`Unit`] that executes it, its twin form, and per source the
//! components it reads ([`Reads`]) and which of those reads go through the input flush
//! ([`Opcode::flushed`], float model rule 1). Decode, encode, the disassemblers, the
//! interpreter's pre-decoder, the assembler's descriptor sharing, the JIT's analysis and
//! lowerings and the test generators read these columns instead of matching on opcodes.
//!
//! Adding an opcode takes its row here, its semantics (`Unit` arm of the interpreter's ALU in
//! `interp/src/exec/mod.rs`, on the float model) and its lowering (`jit/src/lower/ops.rs`); the
//! `made-up-opcode` feature adds such an opcode (`SUB`) and `tests/made_up_opcode.rs` runs it
//! through the assembler, disassembler, interpreter and both JITs.

use std::fmt;

/// Instruction word layouts of the PICA200 documentation ("Instruction formats").
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

impl Format {
    /// The source (0-based) in the wide 7-bit field: the only one that can name a constant,
    /// and so the one relative addressing (a0.x, a0.y, aL) applies to. `None` for formats
    /// without register sources.
    pub const fn wide_source(self) -> Option<usize> {
        match self {
            Format::One | Format::OneU | Format::OneC => Some(0),
            Format::OneI | Format::Five => Some(1),
            Format::FiveI => Some(2),
            Format::Zero | Format::Two | Format::Three | Format::Four => None,
        }
    }
}

/// What executes an opcode: the operation the float model defines and every engine
/// dispatches on (the interpreter's ALU, the per-vertex and the lane lowerings). I-forms
/// share their twin's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unit {
    /// Lane-wise `a + b`.
    Add,
    /// Lane-wise `a × b`.
    Mul,
    /// Lane-wise maximum (with the selectable MAX reading).
    Max,
    /// Lane-wise minimum.
    Min,
    /// Lane-wise `a >= b ? 1 : 0`.
    Sge,
    /// Lane-wise `a < b ? 1 : 0`.
    Slt,
    /// Three-component dot product, broadcast.
    Dp3,
    /// Four-component dot product, broadcast.
    Dp4,
    /// Homogeneous dot product (`a.w` = 1), broadcast.
    Dph,
    /// Distance vector `(1, a.y·b.y, a.z, b.w)`.
    Dst,
    /// `a × b + c`, not fused.
    Mad,
    /// Copy.
    Mov,
    /// Lane-wise floor.
    Flr,
    /// Reciprocal of `x`, broadcast.
    Rcp,
    /// Reciprocal square root of `x`, broadcast.
    Rsq,
    /// `2^x`, broadcast.
    Ex2,
    /// `log2(x)`, broadcast.
    Lg2,
    /// Lighting clamp; also sets the cmp flags.
    Litp,
    /// Float to a0.x/a0.y.
    Mova,
    /// Comparison into the cmp flags.
    Cmp,
    /// Geometry-shader vertex emission (EMIT) and its parameters (SETEMIT).
    Emit,
    /// Control flow only (NOP, END, BREAK and the branches, calls and loops).
    Flow,
    /// Lane-wise `a - b` (a made-up opcode: see the module docs).
    #[cfg(feature = "made-up-opcode")]
    Sub,
}

/// The components of one source an instruction reads, given its write mask: bit c stands for
/// component c of the swizzled operand (x = bit 0). `masked` components are read when the
/// write mask writes that component, `always` components whenever the instruction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reads {
    /// Components read where the write mask has them.
    pub masked: u8,
    /// Components read whatever the write mask.
    pub always: u8,
}

impl Reads {
    const LANES: Reads = Reads::masked(0xF);
    const X: Reads = Reads::always(0b0001);
    const XY: Reads = Reads::always(0b0011);
    const XYZ: Reads = Reads::always(0b0111);
    const XYZW: Reads = Reads::always(0xF);
    const XYW: Reads = Reads::always(0b1011);
    const YZ: Reads = Reads::always(0b0110);
    const YW: Reads = Reads::always(0b1010);
    const MASK_XY: Reads = Reads::masked(0b0011);

    const fn masked(m: u8) -> Reads {
        Reads {
            masked: m,
            always: 0,
        }
    }

    const fn always(m: u8) -> Reads {
        Reads {
            masked: 0,
            always: m,
        }
    }

    /// The components read under write mask `write` (bit c = component c, see
    /// [`super::WriteMask::components`]).
    pub const fn of(self, write: u8) -> u8 {
        (write & self.masked) | self.always
    }
}

/// Components of every source read through the input flush: all of them.
const ALL: u8 = 0xF;
/// No flushed reads (moves, comparisons, selections, flow control).
const NONE: u8 = 0;
/// DST: only the y product flushes; z and w are copied bit for bit.
const Y: u8 = 0b0010;

macro_rules! opcode_table {
    ($( $(#[$attr:meta])* $variant:ident = $code:literal ..= $last:literal, $mnemonic:literal,
        $format:ident, $unit:ident, $base:ident, [$($reads:ident),*], $flush:ident; )*) => {
        /// A defined PICA200 shader opcode. CMP, MAD and MADI occupy several 6-bit codes
        /// (their low opcode bits carry operands); the value here is the lowest code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", $mnemonic, "`")]
                $(#[$attr])*
                $variant = $code,
            )*
        }

        /// One row of the table.
        struct Row {
            mnemonic: &'static str,
            format: Format,
            unit: Unit,
            base: Opcode,
            reads: &'static [Reads],
            flush: u8,
        }

        impl Opcode {
            /// Every defined opcode, in code order.
            pub const ALL: &'static [Opcode] = &[$($(#[$attr])* Opcode::$variant),*];

            const fn row(self) -> &'static Row {
                match self {
                    $($(#[$attr])* Opcode::$variant => &Row {
                        mnemonic: $mnemonic,
                        format: Format::$format,
                        unit: Unit::$unit,
                        base: Opcode::$base,
                        reads: &[$(Reads::$reads),*],
                        flush: $flush,
                    },)*
                }
            }
        }

        /// Opcode of each 6-bit code.
        const BY_CODE: [Option<Opcode>; 64] = {
            let mut t = [None; 64];
            $(
                $(#[$attr])*
                {
                    let mut c = $code;
                    while c <= $last {
                        t[c] = Some(Opcode::$variant);
                        c += 1;
                    }
                }
            )*
            t
        };
    };
}

// Columns: codes, mnemonic, format, unit, the non-inverted twin, per source what it reads,
// which read components the input flush applies to.
#[rustfmt::skip]
opcode_table! {
    Add = 0x00..=0x00, "add", One, Add, Add, [LANES, LANES], ALL;
    Dp3 = 0x01..=0x01, "dp3", One, Dp3, Dp3, [XYZ, XYZ], ALL;
    Dp4 = 0x02..=0x02, "dp4", One, Dp4, Dp4, [XYZW, XYZW], ALL;
    Dph = 0x03..=0x03, "dph", One, Dph, Dph, [XYZ, XYZW], ALL;
    Dst = 0x04..=0x04, "dst", One, Dst, Dst, [YZ, YW], Y;
    Ex2 = 0x05..=0x05, "ex2", OneU, Ex2, Ex2, [X], ALL;
    Lg2 = 0x06..=0x06, "lg2", OneU, Lg2, Lg2, [X], ALL;
    Litp = 0x07..=0x07, "litp", OneU, Litp, Litp, [XYW], NONE;
    Mul = 0x08..=0x08, "mul", One, Mul, Mul, [LANES, LANES], ALL;
    Sge = 0x09..=0x09, "sge", One, Sge, Sge, [LANES, LANES], NONE;
    Slt = 0x0A..=0x0A, "slt", One, Slt, Slt, [LANES, LANES], NONE;
    Flr = 0x0B..=0x0B, "flr", OneU, Flr, Flr, [LANES], ALL;
    Max = 0x0C..=0x0C, "max", One, Max, Max, [LANES, LANES], NONE;
    Min = 0x0D..=0x0D, "min", One, Min, Min, [LANES, LANES], NONE;
    Rcp = 0x0E..=0x0E, "rcp", OneU, Rcp, Rcp, [X], ALL;
    Rsq = 0x0F..=0x0F, "rsq", OneU, Rsq, Rsq, [X], ALL;
    Mova = 0x12..=0x12, "mova", OneU, Mova, Mova, [MASK_XY], NONE;
    Mov = 0x13..=0x13, "mov", OneU, Mov, Mov, [LANES], NONE;
    #[cfg(feature = "made-up-opcode")]
    Sub = 0x14..=0x14, "sub", One, Sub, Sub, [LANES, LANES], ALL;
    Dphi = 0x18..=0x18, "dphi", OneI, Dph, Dph, [XYZ, XYZW], ALL;
    Dsti = 0x19..=0x19, "dsti", OneI, Dst, Dst, [YZ, YW], Y;
    Sgei = 0x1A..=0x1A, "sgei", OneI, Sge, Sge, [LANES, LANES], NONE;
    Slti = 0x1B..=0x1B, "slti", OneI, Slt, Slt, [LANES, LANES], NONE;
    Break = 0x20..=0x20, "break", Zero, Flow, Break, [], NONE;
    Nop = 0x21..=0x21, "nop", Zero, Flow, Nop, [], NONE;
    End = 0x22..=0x22, "end", Zero, Flow, End, [], NONE;
    Breakc = 0x23..=0x23, "breakc", Two, Flow, Breakc, [], NONE;
    Call = 0x24..=0x24, "call", Two, Flow, Call, [], NONE;
    Callc = 0x25..=0x25, "callc", Two, Flow, Callc, [], NONE;
    Callu = 0x26..=0x26, "callu", Three, Flow, Callu, [], NONE;
    Ifu = 0x27..=0x27, "ifu", Three, Flow, Ifu, [], NONE;
    Ifc = 0x28..=0x28, "ifc", Two, Flow, Ifc, [], NONE;
    Loop = 0x29..=0x29, "loop", Three, Flow, Loop, [], NONE;
    Emit = 0x2A..=0x2A, "emit", Zero, Emit, Emit, [], NONE;
    Setemit = 0x2B..=0x2B, "setemit", Four, Emit, Setemit, [], NONE;
    Jmpc = 0x2C..=0x2C, "jmpc", Two, Flow, Jmpc, [], NONE;
    Jmpu = 0x2D..=0x2D, "jmpu", Three, Flow, Jmpu, [], NONE;
    Cmp = 0x2E..=0x2F, "cmp", OneC, Cmp, Cmp, [XY, XY], NONE;
    Madi = 0x30..=0x37, "madi", FiveI, Mad, Mad, [LANES, LANES, LANES], ALL;
    Mad = 0x38..=0x3F, "mad", Five, Mad, Mad, [LANES, LANES, LANES], ALL;
}

impl Opcode {
    /// Lower-case mnemonic as picasso spells it.
    pub const fn mnemonic(self) -> &'static str {
        self.row().mnemonic
    }

    /// Word layout of this opcode.
    pub const fn format(self) -> Format {
        self.row().format
    }

    /// What executes this opcode.
    pub const fn unit(self) -> Unit {
        self.row().unit
    }

    /// How many register sources the opcode has (0 to 3).
    pub const fn sources(self) -> usize {
        self.row().reads.len()
    }

    /// The components source `n` (0-based) reads under write mask `write` (bit c =
    /// component c of the swizzled operand); 0 for a source the opcode does not have.
    pub fn reads(self, n: usize, write: u8) -> u8 {
        self.row().reads.get(n).map_or(0, |r| r.of(write))
    }

    /// Of the components source `n` reads under write mask `write`, those read through the
    /// input flush (float model rule 1: `interp/src/float/mod.rs`).
    pub fn flushed(self, n: usize, write: u8) -> u8 {
        self.reads(n, write) & self.row().flush
    }

    /// True when every component source `n` reads goes through the input flush (false for
    /// sources read as they are, and for DST, whose z and w are copied bit for bit).
    pub fn flushes_all(self, n: usize) -> bool {
        n < self.sources() && self.row().flush == ALL
    }

    /// The source in the wide field, which relative addressing applies to.
    pub const fn wide_source(self) -> Option<usize> {
        self.format().wide_source()
    }

    /// The defined opcodes of word layout `format`, in code order: what test generators draw
    /// from, so that a new row is generated with no change to them.
    pub fn with_format(format: Format) -> impl Iterator<Item = Opcode> {
        Opcode::ALL
            .iter()
            .copied()
            .filter(move |op| op.format() == format)
    }

    /// The opcodes with register sources (arithmetic, MOVA, CMP), in code order.
    pub fn arithmetic() -> impl Iterator<Item = Opcode> {
        Opcode::ALL.iter().copied().filter(|op| op.sources() > 0)
    }

    /// Look an opcode up by mnemonic (case-insensitive, as picasso does).
    pub fn from_mnemonic(name: &str) -> Option<Opcode> {
        Opcode::ALL
            .iter()
            .copied()
            .find(|op| name.eq_ignore_ascii_case(op.mnemonic()))
    }

    /// Decode the top six bits of an instruction word. `None` for the undefined codes
    /// 0x10, 0x11, 0x14-0x17 and 0x1C-0x1F.
    pub const fn from_code(code: u8) -> Option<Opcode> {
        BY_CODE[(code & 0x3F) as usize]
    }

    /// Bits of an instruction word that this opcode gives a meaning to. The others are
    /// ignored on execution; decoding drops them and [`crate::pica::isa::unused_bits`] recovers them.
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

    /// True for opcodes whose wide source is not the first one (the I-forms and MADI).
    pub fn is_inverted(self) -> bool {
        matches!(self.format(), Format::OneI | Format::FiveI)
    }

    /// The non-inverted twin of an I-form (DPHI → DPH, MADI → MAD); other opcodes map to
    /// themselves. Both forms compute the same thing.
    pub const fn base(self) -> Opcode {
        self.row().base
    }

    /// The inverted twin (DPH → DPHI, MAD → MADI), if the opcode has one.
    pub fn inverted(self) -> Option<Opcode> {
        Opcode::ALL
            .iter()
            .copied()
            .find(|&op| op != self && op.base() == self)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_back_to_their_rows() {
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_code(op as u8), Some(op), "{op}");
            assert_eq!(Opcode::from_mnemonic(op.mnemonic()), Some(op));
            assert_eq!(op.base().unit(), op.unit(), "{op} and its twin");
            assert_eq!(op.base().sources(), op.sources(), "{op} and its twin");
        }
        let defined = (0..64u8)
            .filter(|&c| Opcode::from_code(c).is_some())
            .count();
        // 39 rows, CMP taking 2 codes and MAD/MADI 8 each (plus the made-up SUB's).
        let made_up = usize::from(cfg!(feature = "made-up-opcode"));
        assert_eq!(defined, Opcode::ALL.len() + 1 + 7 + 7);
        assert_eq!(Opcode::ALL.len(), 39 + made_up);
    }

    #[test]
    fn every_wide_source_exists_and_twins_swap_it() {
        for &op in Opcode::ALL {
            match op.wide_source() {
                Some(w) => assert!(w < op.sources(), "{op}"),
                None => assert_eq!(op.sources(), 0, "{op}"),
            }
            if let Some(i) = op.inverted() {
                assert!(i.is_inverted() && !op.is_inverted(), "{op}");
                assert_ne!(i.wide_source(), op.wide_source(), "{op}");
            }
        }
        assert_eq!(Opcode::Dph.inverted(), Some(Opcode::Dphi));
        assert_eq!(Opcode::Mad.inverted(), Some(Opcode::Madi));
        assert_eq!(Opcode::Add.inverted(), None);
    }

    #[test]
    fn read_masks_follow_the_float_model() {
        // Lane-wise: what the mask writes; dot products: fixed; DPH ignores a.w; DST reads
        // (a.y, a.z) and (b.y, b.w); scalar functions read x; LITP x, y, w; MOVA x/y by its
        // mask; CMP x and y whatever the mask.
        assert_eq!(Opcode::Add.reads(1, 0b0101), 0b0101);
        assert_eq!(Opcode::Dp3.reads(0, 0b0001), 0b0111);
        assert_eq!(Opcode::Dph.reads(0, 0b0001), 0b0111);
        assert_eq!(Opcode::Dphi.reads(1, 0b0001), 0xF);
        assert_eq!(Opcode::Dst.reads(0, 0), 0b0110);
        assert_eq!(Opcode::Dst.reads(1, 0), 0b1010);
        assert_eq!(Opcode::Rsq.reads(0, 0xF), 0b0001);
        assert_eq!(Opcode::Litp.reads(0, 0), 0b1011);
        assert_eq!(Opcode::Mova.reads(0, 0b1110), 0b0010);
        assert_eq!(Opcode::Cmp.reads(1, 0), 0b0011);
        assert_eq!(Opcode::Mad.reads(2, 0b1000), 0b1000);
        assert_eq!(Opcode::Mad.reads(3, 0xF), 0);
        // Rule 1: arithmetic flushes what it reads; DST only the y product; moves,
        // selections and comparisons nothing.
        assert_eq!(Opcode::Mul.flushed(0, 0b0011), 0b0011);
        assert_eq!(Opcode::Dst.flushed(1, 0xF), 0b0010);
        assert_eq!(Opcode::Ex2.flushed(0, 0xF), 0b0001);
        for op in [
            Opcode::Mov,
            Opcode::Max,
            Opcode::Min,
            Opcode::Sge,
            Opcode::Cmp,
        ] {
            assert_eq!(op.flushed(0, 0xF), 0, "{op}");
        }
        assert!(Opcode::Madi.flushes_all(2) && !Opcode::Dst.flushes_all(0));
    }
}
