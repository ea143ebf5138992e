//! The 64-bit THEIA instruction word (`rtl/aDefinitions.v`, "Next are the constants that define
//! the size of the instructions"): bits 63:48 the operation, 47:32 the destination (or jump
//! target), 31:16 source 1, 15:0 source 2. Operations with opcode bit 6 set read bits 31:0 as
//! one 32-bit immediate. Decoding is total: every word has fields; whether its operation exists
//! is [`super::table::by_code`]'s answer.

use super::table::{self, OpInfo, IMM_BIT};

/// The four fields of an instruction word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Word {
    pub op: u16,
    pub dst: u16,
    pub src1: u16,
    pub src2: u16,
}

impl Word {
    pub const fn new(op: u16, dst: u16, src1: u16, src2: u16) -> Self {
        Word {
            op,
            dst,
            src1,
            src2,
        }
    }

    /// An immediate-form word: `imm` fills source 1 (high half) and source 2 (low half).
    pub const fn with_imm(op: u16, dst: u16, imm: u32) -> Self {
        Word::new(op, dst, (imm >> 16) as u16, imm as u16)
    }

    pub const fn decode(raw: u64) -> Self {
        Word {
            op: (raw >> 48) as u16,
            dst: (raw >> 32) as u16,
            src1: (raw >> 16) as u16,
            src2: raw as u16,
        }
    }

    pub const fn encode(self) -> u64 {
        (self.op as u64) << 48
            | (self.dst as u64) << 32
            | (self.src1 as u64) << 16
            | self.src2 as u64
    }

    /// Bits 31:0, the immediate of operations with opcode bit 6 set.
    pub const fn imm(self) -> u32 {
        (self.src1 as u32) << 16 | self.src2 as u32
    }

    /// Whether the decoder treats bits 31:0 as an immediate (opcode bit 6,
    /// `Module_InstructionDecode.v` line 57), whatever the operation.
    pub const fn is_imm(self) -> bool {
        self.op & IMM_BIT != 0
    }

    /// The table row of the operation, if it is defined.
    pub fn info(self) -> Option<&'static OpInfo> {
        table::by_code(self.op)
    }
}

/// The `.mem` text of one word, as the original assembler prints it: two 8-digit upper-case hex
/// halves separated by a space.
pub fn mem_halves(raw: u64) -> String {
    format!("{:08X} {:08X}", (raw >> 32) as u32, raw as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_field() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = Word::decode(x);
            assert_eq!(w.encode(), x);
            assert_eq!(Word::with_imm(w.op, w.dst, w.imm()), w);
        }
    }

    #[test]
    fn field_positions() {
        let w = Word::decode(0x0001_0047_0048_0049);
        assert_eq!(w, Word::new(1, 71, 72, 73));
        assert_eq!(mem_halves(w.encode()), "00010047 00480049");
        let s = Word::with_imm(0x41, 95, 0x01F4_0000);
        assert_eq!(s.encode(), 0x0041_005F_01F4_0000);
        assert!(s.is_imm());
    }
}
