//! THEIA's fixed-point arithmetic, bit for bit. Values are 32-bit two's-complement Q15.17
//! (`rtl/aDefinitions.v` `SCALE` 17). Each function states which RTL lines it reproduces; the
//! interpreter's profiles choose among them (see `docs/theia.md`, "Arithmetic").

/// The fixed-point scale: 17 fraction bits.
pub const SCALE: u32 = 17;
/// 1.0 in Q15.17.
pub const ONE: u32 = 1 << SCALE;

/// The RTL's conversion of a 64-bit adder result to a register component: bit 63 (the sign of
/// the exact sum of sign-extended operands) over bits 30:0 (`Module_VectorALU.v` lines 926-947,
/// 970-992, 1015-1037). An overflowing sum keeps its true sign, unlike a wrapping add.
pub const fn sign_low31(sum: u64) -> u32 {
    ((sum >> 63) as u32) << 31 | (sum as u32 & 0x7FFF_FFFF)
}

/// A 32-bit value sign-extended to the adders' 64 bits (`Module_VectorALU.v` line 687).
pub const fn sext(a: u32) -> u64 {
    a as i32 as i64 as u64
}

/// ADD, RTL: `FixedAddSub` on sign-extended operands, then [`sign_low31`].
pub const fn add_rtl(a: u32, b: u32) -> u32 {
    sign_low31(sext(a).wrapping_add(sext(b)))
}

/// SUB, RTL: A + (~B + 1) (`Module_FixedPointAddtionSubstraction.v` line 37), then [`sign_low31`].
pub const fn sub_rtl(a: u32, b: u32) -> u32 {
    sign_low31(sext(a).wrapping_sub(sext(b)))
}

/// The 32-bit magnitude the multiplier and divider take: `~x + 1` when bit 31 is set, so
/// 0x80000000 stays 0x80000000 (`Module_RadixRMul.v` lines 119-120).
pub const fn magnitude(x: u32) -> u32 {
    if x >> 31 != 0 {
        x.wrapping_neg()
    } else {
        x
    }
}

/// `RADIX_R_MUL_32_FULL_PARALLEL` (`Module_RadixRMul.v`): radix-4 partial products of the
/// magnitudes, where 2|A| and 3|A| are 32-bit wires (lines 122-123, so they wrap when |A| is
/// large), summed in 64 bits, shifted right by 17 unless `unscaled` (IMUL), and negated in 64
/// bits when exactly one operand has bit 31 set (lines 317-319). The 64-bit result feeds DOT,
/// MAG and CROSS; MUL, IMUL and MULP keep bits 31:0.
pub const fn mul_rtl(a: u32, b: u32, unscaled: bool) -> u64 {
    let wa = magnitude(a);
    let wb = magnitude(b);
    let w2a = wa << 1;
    let w3a = w2a.wrapping_add(wa);
    let mut sum = 0u64;
    let mut i = 0;
    while i < 16 {
        let digit = (wb >> (2 * i)) & 3;
        let p = match digit {
            0 => 0,
            1 => wa,
            2 => w2a,
            _ => w3a,
        };
        sum = sum.wrapping_add((p as u64) << (2 * i));
        i += 1;
    }
    let pre = if unscaled { sum } else { sum >> SCALE };
    if (a >> 31) ^ (b >> 31) != 0 {
        pre.wrapping_neg()
    } else {
        pre
    }
}

/// [`mul_rtl`] in closed form, the recipe the JITs implement: the exact product of the
/// magnitudes minus what the wrapping 2|A| and 3|A| wires lose, 2^32·(k2·M2 + k3·M3), where
/// k2 = bit 31 of |A| and k3 = (3|A|) >> 32 are the lost carries and M2, M3 collect 4^i for the
/// radix-4 digits of |B| equal to 2 and 3.
pub const fn mul_rtl_closed(a: u32, b: u32, unscaled: bool) -> u64 {
    let wa = magnitude(a) as u64;
    let wb = magnitude(b) as u64;
    let lo = wb & 0x5555_5555;
    let hi = (wb >> 1) & 0x5555_5555;
    let m3 = lo & hi;
    let m2 = hi ^ m3;
    let k2 = wa >> 31;
    let k3 = (wa * 3) >> 32;
    let sum = (wa * wb).wrapping_sub((k2 * m2 + k3 * m3) << 32);
    let pre = if unscaled { sum } else { sum >> SCALE };
    if (a >> 31) ^ (b >> 31) != 0 {
        pre.wrapping_neg()
    } else {
        pre
    }
}

/// `SignedIntegerDivision` (`Module_FixedPointDivision.v`): the magnitudes' quotient
/// floor(|a|·2^17 / |b|) from the 64-bit restoring divider, 0x0FFFFFFF when |b| = 0 (line 228),
/// cut to 32 bits (line 302) and then to 31 (line 116), negated when the operands' bit 31
/// differ (lines 126-129).
pub const fn div_rtl(a: u32, b: u32) -> u32 {
    let negative = (a >> 31) ^ (b >> 31) != 0;
    let dividend = (magnitude(a) as u64) << SCALE;
    let divisor = magnitude(b) as u64;
    let q = match dividend.checked_div(divisor) {
        Some(q) => q,
        None => 0x0FFF_FFFF,
    };
    let abs = q as u32 & 0x7FFF_FFFF;
    if negative {
        abs.wrapping_neg()
    } else {
        abs
    }
}

/// `FixedPointSquareRoot` (`Module_FixedPointSquareRoot.v`): the digit-by-digit square root of
/// `operand << 17` (64 bits, line 61) with 32-bit `sum`/`diff`/`Result` registers and 33
/// iterations (group 32 down to 0; `1 << 32` is 0 in the 32-bit context of line 80).
pub const fn sqrt_rtl(operand: u64) -> u32 {
    let x = operand << SCALE;
    let mut sum = 0u32;
    let mut diff = 0u32;
    let mut result = 0u32;
    let mut group = 32u32;
    loop {
        sum = (sum << 1).wrapping_add(1);
        let temp1 = diff << 2;
        let temp2 = group << 1;
        let bits = if temp2 >= 64 { 0 } else { (x >> temp2) & 3 };
        diff = temp1.wrapping_add(bits as u32);
        if sum > diff {
            sum = sum.wrapping_sub(1);
        } else {
            result = result.wrapping_add(if group >= 32 { 0 } else { 1 << group });
            diff = diff.wrapping_sub(sum);
            sum = sum.wrapping_add(1);
        }
        if group != 0 {
            group -= 1;
        } else {
            break;
        }
    }
    result
}

/// DOT, RTL: the three 64-bit products summed by two adders, then [`sign_low31`]
/// (`Module_VectorALU.v` lines 665-667, 779-781, 932).
pub const fn dot_rtl(a: [u32; 3], b: [u32; 3]) -> u32 {
    sign_low31(dot_sum(a, b))
}

/// The 64-bit sum of the three scaled products (DOT and MAG).
pub const fn dot_sum(a: [u32; 3], b: [u32; 3]) -> u64 {
    mul_rtl(a[0], b[0], false)
        .wrapping_add(mul_rtl(a[1], b[1], false))
        .wrapping_add(mul_rtl(a[2], b[2], false))
}

/// MAG, RTL: [`sqrt_rtl`] of the sum of the squares (`Module_VectorALU.v` lines 897-905).
pub const fn mag_rtl(a: [u32; 3]) -> u32 {
    sqrt_rtl(dot_sum(a, a))
}

/// CROSS, RTL: each component one subtraction of two 64-bit products
/// (`Module_VectorALU.v` multipliers A-F, adders A-C), then [`sign_low31`].
pub const fn cross_sums(a: [u32; 3], b: [u32; 3]) -> [u64; 3] {
    [
        mul_rtl(a[1], b[2], false).wrapping_sub(mul_rtl(a[2], b[1], false)),
        mul_rtl(a[2], b[0], false).wrapping_sub(mul_rtl(a[0], b[2], false)),
        mul_rtl(a[0], b[1], false).wrapping_sub(mul_rtl(a[1], b[0], false)),
    ]
}

/// The RTL's comparison unit (`Module_ArithmeticComparison.v`): "greater" is a signed
/// comparison done on sign and magnitude, "equal" compares magnitudes (so 5 == -5), and the
/// other tests are built from those two: less is not-greater, `>=` is greater or
/// equal-magnitude, `<=` is not-greater or equal-magnitude.
pub const fn compare_rtl(x: u32, y: u32, test: super::table::Test) -> bool {
    use super::table::Test::*;
    let sx = x != 0 && x >> 31 != 0;
    let sy = y != 0 && y >> 31 != 0;
    let mx = if sx { x.wrapping_neg() } else { x };
    let my = if sy { y.wrapping_neg() } else { y };
    let gt = match (sx, sy) {
        (false, false) => mx > my,
        (false, true) => true,
        (true, false) => false,
        (true, true) => mx < my,
    };
    let eq = mx == my;
    match test {
        Greater => gt,
        Less => !gt,
        Equal => eq,
        NotEqual => !eq,
        GreaterEqual => gt || eq,
        LessEqual => !gt || eq,
    }
}

/// The manual's comparisons: plain signed comparisons of the components.
pub const fn compare_manual(x: u32, y: u32, test: super::table::Test) -> bool {
    use super::table::Test::*;
    let (x, y) = (x as i32, y as i32);
    match test {
        Greater => x > y,
        Less => x < y,
        Equal => x == y,
        NotEqual => x != y,
        GreaterEqual => x >= y,
        LessEqual => x <= y,
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::Test;
    use super::*;

    fn q(v: f64) -> u32 {
        (v * ONE as f64) as i64 as i32 as u32
    }

    #[test]
    fn add_keeps_the_true_sign_on_overflow() {
        assert_eq!(add_rtl(q(1.5), q(2.25)), q(3.75));
        assert_eq!(add_rtl(0x7FFF_FFFF, 1), 0);
        assert_eq!(add_rtl(0x8000_0000, 0xFFFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(sub_rtl(0, 0x8000_0000), 0);
        assert_eq!(sub_rtl(q(1.0), q(3.0)), q(-2.0));
    }

    #[test]
    fn mul_truncates_magnitudes_toward_zero() {
        assert_eq!(mul_rtl(q(1.5), q(2.0), false) as u32, q(3.0));
        assert_eq!(mul_rtl(q(-1.5), q(2.0), false) as u32, q(-3.0));
        // 1/2^17 * 0.5 truncates to 0 for both signs (an arithmetic shift would give -1).
        assert_eq!(mul_rtl(0xFFFF_FFFF, q(0.5), false) as u32, 0);
        assert_eq!(mul_rtl(1, q(0.5), false) as u32, 0);
        assert_eq!(mul_rtl(7, 6, true) as u32, 42);
        assert_eq!(
            mul_rtl(7u32.wrapping_neg(), 6, true) as u32,
            42u32.wrapping_neg()
        );
    }

    #[test]
    fn mul_partial_products_wrap_at_32_bits() {
        // |A| = 0x60000000: 3|A| = 0x120000000 loses bit 32 in the 32-bit w3A wire.
        let a = 0x6000_0000u32;
        let exact = (a as u64 * 3) >> SCALE;
        let got = mul_rtl(a, 3, false);
        assert_ne!(got, exact);
        assert_eq!(got, (a.wrapping_mul(3) as u64) >> SCALE);
    }

    #[test]
    fn closed_form_multiplier_matches_the_partial_products() {
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        for i in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, b) = match i % 4 {
                0 => (x as u32, (x >> 32) as u32),
                1 => (x as u32 | 0x4000_0000, (x >> 32) as u32 | 0xAAAA_AAAA),
                2 => ((x as u32) >> (i % 31), (x >> 32) as u32),
                _ => (
                    [0, 1, 0x8000_0000, 0xFFFF_FFFF, 0x5555_5556][i as usize % 5],
                    x as u32,
                ),
            };
            for unscaled in [false, true] {
                assert_eq!(
                    mul_rtl_closed(a, b, unscaled),
                    mul_rtl(a, b, unscaled),
                    "{a:#x} {b:#x}"
                );
            }
        }
    }

    #[test]
    fn div_rounds_toward_zero_and_has_a_zero_pattern() {
        assert_eq!(div_rtl(q(3.0), q(2.0)), q(1.5));
        assert_eq!(div_rtl(q(-3.0), q(2.0)), q(-1.5));
        assert_eq!(div_rtl(q(1.0), q(3.0)), 0xAAAA);
        assert_eq!(div_rtl(q(-1.0), q(3.0)), 0xAAAAu32.wrapping_neg());
        assert_eq!(div_rtl(q(5.0), 0), 0x0FFF_FFFF);
        assert_eq!(div_rtl(q(-5.0), 0), 0x0FFF_FFFFu32.wrapping_neg());
        assert_eq!(div_rtl(0, 0), 0x0FFF_FFFF);
        // a quotient above 2^31 keeps its low 31 bits
        let big = (q(10000.0) as u64) << SCALE;
        assert_eq!(div_rtl(q(10000.0), 3), ((big / 3) as u32) & 0x7FFF_FFFF);
    }

    #[test]
    fn sqrt_is_the_floor_root_of_the_scaled_operand() {
        for v in [
            0u64,
            1,
            2,
            3,
            4,
            15,
            16,
            17,
            1 << 17,
            3 << 17,
            12345678,
            1 << 40,
        ] {
            let x = (v << SCALE) as u128;
            let mut r = (x as f64).sqrt() as u128;
            while r * r > x {
                r -= 1;
            }
            while (r + 1) * (r + 1) <= x {
                r += 1;
            }
            assert_eq!(sqrt_rtl(v) as u128, r & 0xFFFF_FFFF, "{v}");
        }
        assert_eq!(mag_rtl([q(3.0), q(4.0), 0]), q(5.0));
    }

    #[test]
    fn comparisons_use_magnitudes_for_equality() {
        let (five, m5) = (q(5.0), q(-5.0));
        assert!(compare_rtl(five, m5, Test::Equal));
        assert!(!compare_manual(five, m5, Test::Equal));
        assert!(compare_rtl(five, five, Test::Less));
        assert!(!compare_manual(five, five, Test::Less));
        assert!(compare_rtl(five, m5, Test::LessEqual));
        assert!(compare_rtl(m5, five, Test::GreaterEqual));
        assert!(compare_rtl(m5, five, Test::Less));
        assert!(compare_rtl(0x8000_0000, m5, Test::Less));
        assert!(compare_rtl(five, 0, Test::Greater));
        assert!(!compare_rtl(0, 0, Test::Greater));
    }

    #[test]
    fn cross_and_dot() {
        let x = [q(1.0), 0, 0];
        let y = [0, q(1.0), 0];
        let c = cross_sums(x, y).map(sign_low31);
        assert_eq!(c, [0, 0, q(1.0)]);
        assert_eq!(
            dot_rtl([q(1.0), q(2.0), q(3.0)], [q(4.0), q(5.0), q(6.0)]),
            q(32.0)
        );
    }
}
