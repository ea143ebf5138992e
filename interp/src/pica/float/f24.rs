//! The f24 bit format (`s:1 e:7 m:16`, bias 63) and its lossless f32 embedding.

use super::precision::{F24_MIN_NORMAL_F32, F24_OVERFLOW_F32};
use super::Rounding;
use core::fmt;

/// A raw 24-bit PICA float pattern. All 2^24 patterns are valid and distinct; [`F24::to_f32`] maps
/// them injectively into f32 (NaN payloads included), so registers can store f32 without loss.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct F24(u32);

impl F24 {
    /// `+0`.
    pub const ZERO: F24 = F24(0);
    /// `-0`: not produced by arithmetic, but a register can hold it (negation, uploads).
    pub const NEG_ZERO: F24 = F24(0x80_0000);
    /// `1.0`.
    pub const ONE: F24 = F24(0x3F_0000);
    /// `-1.0`.
    pub const NEG_ONE: F24 = F24(0xBF_0000);
    /// `+inf`.
    pub const INFINITY: F24 = F24(0x7F_0000);
    /// `-inf`.
    pub const NEG_INFINITY: F24 = F24(0xFF_0000);
    /// The canonical NaN, the f24 image of [`super::CANONICAL_NAN`].
    pub const NAN: F24 = F24(0x7F_FFFF);
    /// Largest finite value, `(2 - 2^-16)·2^63`.
    pub const MAX: F24 = F24(0x7E_FFFF);
    /// Smallest normal magnitude, `2^-62`.
    pub const MIN_POSITIVE: F24 = F24(0x01_0000);

    /// Wraps a raw pattern; bits above 23 are ignored.
    #[inline]
    pub const fn from_bits(bits: u32) -> F24 {
        F24(bits & 0xFF_FFFF)
    }

    /// The raw 24-bit pattern.
    #[inline]
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Sign bit.
    #[inline]
    pub const fn is_sign_negative(self) -> bool {
        self.0 & 0x80_0000 != 0
    }

    /// Biased exponent field (0..=127).
    #[inline]
    pub const fn exponent_field(self) -> u32 {
        (self.0 >> 16) & 0x7F
    }

    /// Mantissa field (16 bits).
    #[inline]
    pub const fn mantissa_field(self) -> u32 {
        self.0 & 0xFFFF
    }

    /// `e = 127, m != 0`.
    #[inline]
    pub const fn is_nan(self) -> bool {
        self.exponent_field() == 127 && self.mantissa_field() != 0
    }

    /// `e = 0, m != 0`: a pattern that arithmetic flushes to +0 but MOV/MAX/MIN/CMP keep.
    #[inline]
    pub const fn is_subnormal_pattern(self) -> bool {
        self.exponent_field() == 0 && self.mantissa_field() != 0
    }

    /// The f32 bits of the exact value (integer-only, so a JIT can copy it).
    ///
    /// `e = 127` maps to f32 `e = 255` with payload `m << 7` (so `0x7FFFFF` is [`super::CANONICAL_NAN`]);
    /// `e = 0` maps to the exact value `m·2^-78`, a normal f32; the sign is always kept.
    #[inline]
    pub const fn to_f32_bits(self) -> u32 {
        let sign = (self.0 >> 23) << 31;
        let e = self.exponent_field();
        let m = self.mantissa_field();
        match e {
            127 => sign | 0x7F80_0000 | (m << 7),
            0 if m == 0 => sign,
            0 => {
                // m·2^-78 with m's top set bit at position p is 2^(p-78)·1.xxx: renormalise.
                let p = 31 - m.leading_zeros();
                sign | ((p + 49) << 23) | ((m << (23 - p)) & 0x7F_FFFF)
            }
            _ => sign | ((e + 64) << 23) | (m << 7),
        }
    }

    /// The exact value as f32 (lossless).
    #[inline]
    pub fn to_f32(self) -> f32 {
        f32::from_bits(self.to_f32_bits())
    }

    /// Upload conversion of an f32 (f32-mode uniform transfer, float attributes, host APIs).
    ///
    /// Rounds to 17 significant bits with `r`, then: rounded magnitude `>= 2^64` → `±inf`, below
    /// `2^-62` → `+0`; an exact `±0` keeps its sign; any NaN → [`F24::NAN`]. (The hardware behaviour
    /// is unknown, pf §2; these match the arithmetic output rules so one fix-up serves both.)
    #[inline]
    pub fn from_f32(x: f32, r: Rounding) -> F24 {
        let b = x.to_bits();
        let sign = (b >> 31) << 23;
        let mag = b & 0x7FFF_FFFF;
        if mag > 0x7F80_0000 {
            return F24::NAN;
        }
        if mag == 0 {
            return F24(sign);
        }
        let t = match r {
            Rounding::TowardZero => mag & !0x7F,
            // Adding 0x3F plus the kept lsb rounds half to even; a carry into the exponent is the
            // correct next binade, and inf cannot overflow the u32.
            Rounding::NearestEven => (mag + 0x3F + ((mag >> 7) & 1)) & !0x7F,
        };
        if t >= F24_OVERFLOW_F32 {
            F24(sign | 0x7F_0000)
        } else if t < F24_MIN_NORMAL_F32 {
            F24::ZERO
        } else {
            F24(sign | (((t >> 23) - 64) << 16) | ((t >> 7) & 0xFFFF))
        }
    }

    /// `F24::from_f32(f32::from_bits(b), r).to_f32_bits()` without branches: the register
    /// value (f32 bits) an f32 upload leaves. Written with selects only, so that a loop over
    /// many values (a batch's attributes) compiles to vector code;
    /// `interp/tests/float_exhaustive.rs` compares it with [`F24::from_f32`] on every f32
    /// pattern in both roundings.
    #[inline(always)]
    pub const fn upload_f32_bits(b: u32, r: Rounding) -> u32 {
        let sign = b & 0x8000_0000;
        let mag = b & 0x7FFF_FFFF;
        // As in `from_f32`: the rounded magnitude, whose f24 image maps back to `sign | t`.
        let t = match r {
            Rounding::TowardZero => mag & !0x7F,
            Rounding::NearestEven => (mag + 0x3F + ((mag >> 7) & 1)) & !0x7F,
        };
        let v = if t >= F24_OVERFLOW_F32 {
            sign | 0x7F80_0000
        } else if t < F24_MIN_NORMAL_F32 {
            0
        } else {
            sign | t
        };
        let v = if mag == 0 { sign } else { v };
        if mag > 0x7F80_0000 {
            super::CANONICAL_NAN_BITS
        } else {
            v
        }
    }

    /// The f24 whose [`F24::to_f32`] is exactly `x` (bit for bit), if there is one.
    pub fn from_f32_exact(x: f32) -> Option<F24> {
        let b = x.to_bits();
        let sign = (b >> 31) << 23;
        let mag = b & 0x7FFF_FFFF;
        let e = mag >> 23;
        let candidate = if e == 255 {
            F24(sign | 0x7F_0000 | ((mag >> 7) & 0xFFFF))
        } else if mag == 0 {
            F24(sign)
        } else if (65..=190).contains(&e) {
            F24(sign | ((e - 64) << 16) | ((mag >> 7) & 0xFFFF))
        } else if (49..65).contains(&e) {
            // Subnormal pattern: value is m·2^-78 with m < 2^16.
            let sig = (mag & 0x7F_FFFF) | 0x80_0000;
            let shift = 23 - (e - 49);
            F24(sign | (sig >> shift))
        } else {
            return None;
        };
        (candidate.to_f32_bits() == b).then_some(candidate)
    }
}

impl fmt::Debug for F24 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F24({:#08X} = {:?})", self.0, self.to_f32())
    }
}

impl fmt::Display for F24 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

impl fmt::UpperHex for F24 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::UpperHex::fmt(&self.0, f)
    }
}

impl fmt::LowerHex for F24 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl From<F24> for f32 {
    #[inline]
    fn from(v: F24) -> f32 {
        v.to_f32()
    }
}
