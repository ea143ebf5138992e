//! The float model's precision constants, in the bit forms the reference code and every
//! backend use. Defined once here; the interpreter, the per-vertex fix-ups of both hosts and
//! the lane code read these instead of writing the numbers again.

/// Significant bits of an F24-mode result, the implicit one included (16 stored).
pub const F24_SIG_BITS: u32 = 17;

/// f64 fraction bits below the last bit an F24 result keeps: `52 - 16`.
pub const F24_F64_DROP: u32 = 52 - (F24_SIG_BITS - 1);
/// f64 fraction bits below the last bit an F32-mode result keeps: `52 - 23`.
pub const F32_F64_DROP: u32 = 52 - 23;
/// One unit in the 17th significant bit, at the f64 fraction's scale (`1 << 36`).
pub const F24_ULP_F64: u64 = 1 << F24_F64_DROP;
/// f64 bits with the fraction bits below the 17-bit grid cleared: `bits & F24_GRID_F64`
/// truncates an f64 to F24 precision.
pub const F24_GRID_F64: u64 = !(F24_ULP_F64 - 1);

/// f32 fraction bits below the last bit an F24 result keeps: `23 - 16`.
pub const F24_F32_DROP: u32 = 23 - (F24_SIG_BITS - 1);
/// f32 bits with the fraction bits below the 17-bit grid cleared (`0xFFFF_FF80`): `bits &
/// F24_GRID_F32` truncates an f32 to F24 precision.
pub const F24_GRID_F32: u32 = !((1 << F24_F32_DROP) - 1);

/// f32 bits of `2^-62`, the smallest normal F24 magnitude (rule 1 and rule 3).
pub const F24_MIN_NORMAL_F32: u32 = 0x2080_0000;
/// f32 bits of `2^64`, the first magnitude F24 mode turns into infinity (rule 3).
pub const F24_OVERFLOW_F32: u32 = 0x5F80_0000;
/// f32 bits of `2^-126`, the smallest normal F32-mode magnitude.
pub const F32_MIN_NORMAL_F32: u32 = 0x0080_0000;

/// f32 bits of 127.99609375 (`0x7FFF / 256`, f24 `0x45FFFC`), the LITP clamp of y.
pub const LITP_LIMIT_F32: u32 = 0x42FF_FE00;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_documented_values() {
        assert_eq!(F24_F64_DROP, 36);
        assert_eq!(F32_F64_DROP, 29);
        assert_eq!(F24_GRID_F32, 0xFFFF_FF80);
        assert_eq!(f32::from_bits(F24_MIN_NORMAL_F32), 2f32.powi(-62));
        assert_eq!(f32::from_bits(F24_OVERFLOW_F32), 2f32.powi(64));
        assert_eq!(f32::from_bits(F32_MIN_NORMAL_F32), f32::MIN_POSITIVE);
        assert_eq!(f32::from_bits(LITP_LIMIT_F32), 127.996_09);
        assert_eq!(f32::from_bits(LITP_LIMIT_F32) as f64, 32767.0 / 256.0);
        // 1.0 + one 17-bit ulp is the next F24 value after 1.0.
        let one = 1.0f64.to_bits();
        assert_eq!(f64::from_bits(one + F24_ULP_F64), 1.0 + 2f64.powi(-16));
        assert_eq!((one + F24_ULP_F64 / 2) & F24_GRID_F64, one);
    }
}
