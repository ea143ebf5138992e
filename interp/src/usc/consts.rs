//! The special constants `c<n>` of the reference's appendix ("Special Constants").
//!
//! The appendix lists indices 0-31, 64-95 and 128-159 ("interleaved 32 values each"); other
//! indices are not defined and do not parse. Two entries are malformed in the reference and are
//! resolved here (`docs/usc.md`, "Ambiguities"):
//! * 148 "0x7F7FFFFFFF Max Float" has nine hex digits; the largest finite binary32 value is
//!   0x7F7FFFFF, which is what the definition column names.
//! * 153 "0x3E2AAAAAB 1/6" has nine hex digits; binary32 1/6 rounded to nearest is
//!   0x3E2AAAAB (the entry with its doubled `A` removed).
//!
//! 143 and 144 have no definition in the reference; their values are taken as printed.

/// Values of c64-c95 (c64 = 1.0, then 2^1..2^10, 2^-1..2^-14, e, 1/e, ...).
const C64: [u32; 32] = [
    0x3F80_0000,
    0x4000_0000,
    0x4080_0000,
    0x4100_0000,
    0x4180_0000,
    0x4200_0000,
    0x4280_0000,
    0x4300_0000,
    0x4380_0000,
    0x4400_0000,
    0x4480_0000,
    0x3F00_0000,
    0x3E80_0000,
    0x3E00_0000,
    0x3D80_0000,
    0x3D00_0000,
    0x3C80_0000,
    0x3C00_0000,
    0x3B80_0000,
    0x3B00_0000,
    0x3A80_0000,
    0x3A00_0000,
    0x3980_0000,
    0x3900_0000,
    0x3880_0000,
    0x402D_F854,
    0x3EBC_5AB2,
    0x3FB5_04F3,
    0x3F35_04F3,
    0x3F49_0FDB,
    0x3FC9_0FDB,
    0x4049_0FDB,
];

/// Values of c128-c159.
const C128: [u32; 32] = [
    0x3EA2_F983,
    0x3F22_F983,
    0x3FA2_F983,
    0x40C9_0FDB,
    0x4149_0FDB,
    0x41C9_0FDB,
    0x3780_0000,
    0x3800_0000,
    0x3B4D_2E1C,
    0x414E_B852,
    0x3ED5_5555,
    0x3F87_0A3D,
    0x3D61_47AE,
    0x8000_0000,
    0x7F80_0000,
    0xFFFF_FFFF,
    0x7FFF_7FFF,
    0x3E9A_209B,
    0x3F31_7218,
    0x0000_007F,
    0x7F7F_FFFF, // 148: see the module docs
    0x4B00_0000,
    0x4B80_0000,
    0x3F86_0A92,
    0x3EAA_AAAB,
    0x3E2A_AAAB, // 153: see the module docs
    0x4054_9A78,
    0x3FB8_AA3B,
    0x3D25_AEE6,
    0x3D9E_8391,
    0x3F72_A76F,
    0x4019_999A,
];

/// The value of special constant `c<n>`, or `None` where the appendix defines none.
pub fn special(n: u16) -> Option<u32> {
    match n {
        0..=31 => Some(u32::from(n)),
        64..=95 => Some(C64[usize::from(n - 64)]),
        128..=159 => Some(C128[usize::from(n - 128)]),
        _ => None,
    }
}
