//! THEIA: the shader execution unit of the THEIA ray-casting GPU (what it should do: its
//! programming manual; ground truth for arithmetic: the RTL of freecores/theia_gpu at commit
//! 032c448). Registers hold three 32-bit two's-complement Q15.17 components;
//! instructions are 64 bits.
//!
//! * [`table`]: the operation table every other part reads;
//! * [`codec`]: the instruction word;
//! * [`regs`]: register names and addresses;
//! * [`arith`]: the arithmetic units, bit for bit;
//! * [`exec`]: the reference interpreter.
//!
//! Two profiles: [`Profile::Rtl`] (the default) follows the RTL, pipeline effects included;
//! [`Profile::Manual`] follows the programming manual where it says something different.
//! `docs/theia.md` lists every difference with its source lines.

pub mod arith;
pub mod codec;
pub mod exec;
pub mod regs;
pub mod table;

pub use codec::Word;
pub use exec::{run, Code, Io, RecordIo, RunOutcome, State, Status, TheiaError};

/// Which reading of THEIA an engine follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// The RTL: sign-preserving adders, magnitude comparisons, four swizzles, operations that
    /// never complete, 7-bit register addresses, data forwarding of dropped writes.
    #[default]
    Rtl,
    /// The programming manual: wrapping adders, plain signed comparisons, all 22 swizzles,
    /// INTP/RESCALE/XCHANGEY/XCHANGEZ, separate output registers 128-131, read-only
    /// configuration and swap registers, no forwarding effects.
    Manual,
}

impl Profile {
    pub const ALL: [Profile; 2] = [Profile::Rtl, Profile::Manual];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Rtl => "rtl",
            Profile::Manual => "manual",
        }
    }

    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Register rows: the RTL decodes address bits 6:0 (`Unit_MEM.v`, bank mux on bits 6:5);
    /// the manual lists addresses up to 131 (OREG_ADDR_O).
    pub fn register_count(self) -> usize {
        match self {
            Profile::Rtl => 128,
            Profile::Manual => 132,
        }
    }

    /// The register row of an address, if the profile has one.
    pub fn row(self, addr: u16) -> Option<usize> {
        match self {
            Profile::Rtl => Some((addr & 0x7F) as usize),
            Profile::Manual => ((addr as usize) < 132).then_some(addr as usize),
        }
    }

    /// Whether the execution unit may write a row. RTL: bank 0 (rows 0-31) is written only by
    /// the IO unit (`Unit_MEM.v`, the write enables of SMEM, RMEM and XMEM; IMEM's comes from
    /// IO), so writes there are dropped, including writes to OREG_* (128-131 alias rows 0-3).
    /// Manual: configuration (0-43) and swap (44-58) registers are read-only for EXE.
    pub fn writable(self, row: usize) -> bool {
        match self {
            Profile::Rtl => row >= 32,
            Profile::Manual => row >= 59,
        }
    }
}
