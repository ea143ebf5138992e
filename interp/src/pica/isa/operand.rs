//! Operands: registers, swizzles, write masks, operand descriptors, relative-address indices,
//! comparison operators and flow-control conditions.

use std::fmt;

/// A source register. Which classes a source slot can name depends on its width: the 7-bit
/// ("wide") slot reaches v, r and c registers, the 5-bit ("narrow") slot only v and r.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SrcReg {
    /// v0-v15, input attributes.
    Input(u8),
    /// r0-r15, temporaries.
    Temp(u8),
    /// c0-c95, float uniforms.
    Const(u8),
}

impl SrcReg {
    /// Decode a 7-bit source field: 0x00-0x0F v, 0x10-0x1F r, 0x20-0x7F c.
    pub fn from_wide(raw: u8) -> SrcReg {
        match raw & 0x7F {
            r @ 0x00..=0x0F => SrcReg::Input(r),
            r @ 0x10..=0x1F => SrcReg::Temp(r - 0x10),
            r => SrcReg::Const(r - 0x20),
        }
    }

    /// Decode a 5-bit source field: 0x00-0x0F v, 0x10-0x1F r.
    pub fn from_narrow(raw: u8) -> SrcReg {
        SrcReg::from_wide(raw & 0x1F)
    }

    /// The 7-bit field value, or `None` if the index is out of range.
    pub fn wide(self) -> Option<u8> {
        match self {
            SrcReg::Input(i) if i < 16 => Some(i),
            SrcReg::Temp(i) if i < 16 => Some(0x10 + i),
            SrcReg::Const(i) if i < 96 => Some(0x20 + i),
            _ => None,
        }
    }

    /// The 5-bit field value, or `None` for constants and out-of-range indices.
    pub fn narrow(self) -> Option<u8> {
        match self {
            SrcReg::Const(_) => None,
            r => r.wide(),
        }
    }

    /// True for c registers, the only class relative addressing applies to.
    pub fn is_const(self) -> bool {
        matches!(self, SrcReg::Const(_))
    }
}

impl fmt::Display for SrcReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SrcReg::Input(i) => write!(f, "v{i}"),
            SrcReg::Temp(i) => write!(f, "r{i}"),
            SrcReg::Const(i) => write!(f, "c{i}"),
        }
    }
}

/// A destination register (5-bit field): 0x00-0x0F o, 0x10-0x1F r.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DstReg {
    /// o0-o15, outputs.
    Output(u8),
    /// r0-r15, temporaries.
    Temp(u8),
}

impl DstReg {
    /// Decode the 5-bit destination field.
    pub fn from_raw(raw: u8) -> DstReg {
        match raw & 0x1F {
            r @ 0x00..=0x0F => DstReg::Output(r),
            r => DstReg::Temp(r - 0x10),
        }
    }

    /// The 5-bit field value, or `None` if the index is out of range.
    pub fn raw(self) -> Option<u8> {
        match self {
            DstReg::Output(i) if i < 16 => Some(i),
            DstReg::Temp(i) if i < 16 => Some(0x10 + i),
            _ => None,
        }
    }
}

impl fmt::Display for DstReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DstReg::Output(i) => write!(f, "o{i}"),
            DstReg::Temp(i) => write!(f, "r{i}"),
        }
    }
}

/// The address register added to the wide source (the IDX field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RelIndex {
    /// No relative addressing.
    #[default]
    None,
    /// a0.x
    A0X,
    /// a0.y
    A0Y,
    /// aL, the loop counter.
    AL,
}

impl RelIndex {
    /// Decode the 2-bit IDX field.
    pub fn from_raw(raw: u8) -> RelIndex {
        match raw & 3 {
            0 => RelIndex::None,
            1 => RelIndex::A0X,
            2 => RelIndex::A0Y,
            _ => RelIndex::AL,
        }
    }

    /// The 2-bit IDX field value.
    pub fn raw(self) -> u8 {
        self as u8
    }

    /// Assembly name (`a0.x`, `a0.y`, `aL`), `None` for no index.
    pub fn name(self) -> Option<&'static str> {
        match self {
            RelIndex::None => None,
            RelIndex::A0X => Some("a0.x"),
            RelIndex::A0Y => Some("a0.y"),
            RelIndex::AL => Some("aL"),
        }
    }
}

/// A component selector: for each destination lane, which source component it reads.
/// Lane 0 (x) sits in the top two bits, so `.xyzw` is 0x1B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle(pub u8);

impl Swizzle {
    /// `.xyzw`
    pub const IDENTITY: Swizzle = Swizzle(0x1B);

    /// Build from the component index (0-3) each lane reads.
    pub fn from_lanes(lanes: [u8; 4]) -> Swizzle {
        Swizzle(
            ((lanes[0] & 3) << 6) | ((lanes[1] & 3) << 4) | ((lanes[2] & 3) << 2) | (lanes[3] & 3),
        )
    }

    /// Source component (0-3) read by destination lane `lane`.
    pub fn lane(self, lane: usize) -> u8 {
        (self.0 >> (6 - 2 * (lane & 3))) & 3
    }

    /// All four lanes.
    pub fn lanes(self) -> [u8; 4] {
        [self.lane(0), self.lane(1), self.lane(2), self.lane(3)]
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.lanes() {
            f.write_str(["x", "y", "z", "w"][c as usize])?;
        }
        Ok(())
    }
}

/// Destination write mask as stored in a descriptor: bit 3 = x, 2 = y, 1 = z, 0 = w.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WriteMask(pub u8);

impl WriteMask {
    /// All four lanes.
    pub const XYZW: WriteMask = WriteMask(0xF);

    /// True if destination lane `lane` (0 = x) is written.
    pub fn has(self, lane: usize) -> bool {
        self.0 & (8 >> (lane & 3)) != 0
    }

    /// The lanes as booleans, x first.
    pub fn lanes(self) -> [bool; 4] {
        [self.has(0), self.has(1), self.has(2), self.has(3)]
    }

    /// The written components as a bit set, bit c = component c (x = bit 0): the form
    /// [`crate::pica::isa::Reads`] and [`crate::pica::isa::Opcode::reads`] take.
    pub fn components(self) -> u8 {
        (0..4).filter(|&c| self.has(c)).fold(0, |m, c| m | 1 << c)
    }

    /// Build from per-lane booleans, x first.
    pub fn from_lanes(lanes: [bool; 4]) -> WriteMask {
        WriteMask(
            (lanes[0] as u8) << 3 | (lanes[1] as u8) << 2 | (lanes[2] as u8) << 1 | lanes[3] as u8,
        )
    }
}

impl fmt::Display for WriteMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (lane, name) in ["x", "y", "z", "w"].iter().enumerate() {
            if self.has(lane) {
                f.write_str(name)?;
            }
        }
        Ok(())
    }
}

/// One 64-bit operand-descriptor table entry. Only the low 31 bits have a known meaning;
/// the rest is kept so that tables round-trip unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct OperandDesc(pub u64);

impl OperandDesc {
    /// Assemble a descriptor from its fields. `neg` and `swizzle` are indexed by source
    /// (0 = SRC1, 1 = SRC2, 2 = SRC3).
    pub fn new(mask: WriteMask, neg: [bool; 3], swizzle: [Swizzle; 3]) -> OperandDesc {
        let mut v = (mask.0 & 0xF) as u64;
        for s in 0..3 {
            let base = 4 + 9 * s;
            v |= (neg[s] as u64) << base;
            v |= (swizzle[s].0 as u64) << (base + 1);
        }
        OperandDesc(v)
    }

    /// Destination write mask.
    pub fn mask(self) -> WriteMask {
        WriteMask((self.0 & 0xF) as u8)
    }

    /// Negation bit of source `src` (0-based).
    pub fn neg(self, src: usize) -> bool {
        self.0 >> (4 + 9 * src) & 1 != 0
    }

    /// Component selector of source `src` (0-based).
    pub fn swizzle(self, src: usize) -> Swizzle {
        Swizzle((self.0 >> (5 + 9 * src)) as u8)
    }

    /// Bits with no known meaning (bit 31 and the high word).
    pub fn unused_bits(self) -> u64 {
        self.0 & !0x7FFF_FFFF
    }
}

/// Comparison operator of CMP (CMPX/CMPY fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// ==
    Eq,
    /// !=
    Ne,
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
    /// Raw value 6: always true.
    True6,
    /// Raw value 7: always true.
    True7,
}

impl CmpOp {
    /// Decode the 3-bit operator field.
    pub fn from_raw(raw: u8) -> CmpOp {
        [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
            CmpOp::True6,
            CmpOp::True7,
        ][(raw & 7) as usize]
    }

    /// The 3-bit field value.
    pub fn raw(self) -> u8 {
        self as u8
    }

    /// Assembly name (`eq` … `ge`; `true6`/`true7` for the undocumented always-true values).
    pub fn name(self) -> &'static str {
        ["eq", "ne", "lt", "le", "gt", "ge", "true6", "true7"][self as usize]
    }

    /// Evaluate on two register values. Comparisons see the stored values unflushed, and
    /// follow IEEE rules: ordered comparisons with NaN are false, NE with NaN is true.
    pub fn eval(self, a: f32, b: f32) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::True6 | CmpOp::True7 => true,
        }
    }
}

/// How the two flag tests of a condition combine (CONDOP field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CondOp {
    /// cmp.x == REFX || cmp.y == REFY
    Or,
    /// cmp.x == REFX && cmp.y == REFY
    And,
    /// cmp.x == REFX
    X,
    /// cmp.y == REFY
    Y,
}

/// A condition on the cmp flags (format 2 CONDOP/REFX/REFY).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Condition {
    /// How the two tests combine.
    pub op: CondOp,
    /// Value cmp.x is tested against.
    pub ref_x: bool,
    /// Value cmp.y is tested against.
    pub ref_y: bool,
}

impl Condition {
    /// Decode bits 22-25 of a format 2 word (already shifted down).
    pub fn from_raw(raw: u8) -> Condition {
        Condition {
            op: [CondOp::Or, CondOp::And, CondOp::X, CondOp::Y][(raw & 3) as usize],
            ref_y: raw & 4 != 0,
            ref_x: raw & 8 != 0,
        }
    }

    /// The 4-bit value of bits 22-25.
    pub fn raw(self) -> u8 {
        (self.op as u8) | (self.ref_y as u8) << 2 | (self.ref_x as u8) << 3
    }

    /// Evaluate against the flags.
    pub fn eval(self, cmp_x: bool, cmp_y: bool) -> bool {
        let x = cmp_x == self.ref_x;
        let y = cmp_y == self.ref_y;
        match self.op {
            CondOp::Or => x || y,
            CondOp::And => x && y,
            CondOp::X => x,
            CondOp::Y => y,
        }
    }
}

impl fmt::Display for Condition {
    /// picasso syntax: `cmp.x`, `!cmp.y`, `cmp.x && !cmp.y`, `cmp.x || cmp.y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = if self.ref_x { "cmp.x" } else { "!cmp.x" };
        let y = if self.ref_y { "cmp.y" } else { "!cmp.y" };
        match self.op {
            CondOp::Or => write!(f, "{x} || {y}"),
            CondOp::And => write!(f, "{x} && {y}"),
            CondOp::X => f.write_str(x),
            CondOp::Y => f.write_str(y),
        }
    }
}
