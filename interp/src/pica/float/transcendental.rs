//! RCP, RSQ, EX2 and LG2, with the exact step lists a JIT backend must reproduce.
//!
//! # RCP
//!
//! Interpreter: `round_to_mode(1.0f64 / flush(x) as f64)`. This is the correctly rounded `1/x` in
//! both modes: for a 24-bit significand `x` that is not a power of two, `1/x` is at relative
//! distance `>= 2^-49` from every 25-bit grid point (`|2^k - H·X| >= 1` for integers `H`, `X`),
//! far more than the `2^-53` error of the f64 division, so the f64 quotient never lands on (or
//! across) a 17/18/24/25-bit rounding boundary. The specials fall out of IEEE division after the
//! flush: `1/+0 = +inf`, `1/±inf = ±0 → +0`, NaN stays NaN.
//!
//! JIT recipes (exhaustively tested over every f24 significand in
//! `interp/tests/float_exhaustive.rs`):
//! * **F24 RTZ** ([`rcp_jit_recipe_rz`]): flush, `divss 1.0, x` with the host in round-toward-zero,
//!   [`f24_fixup_rtz`]. Truncating a directed 24-bit rounding to 17 bits is the 17-bit truncation.
//! * **F24 RNE** ([`rcp_jit_recipe_rne`]): flush, `cvtss2sd`, `divsd 1.0, x` in round-to-nearest,
//!   [`f24_fixup_rne_from_f64`]. (`divss` in round-to-nearest then RNE to 17 bits double-rounds.)
//! * **F32**: flush, `divss` in round-to-nearest, [`f32_fixup`] (x86 with FTZ: exact).
//!
//! # RSQ
//!
//! F24 interpreter: `q = 1 / sqrt(x)` in f64 is within `2^-52` of `y = 1/sqrt(x)` but can land on
//! the wrong side of a 17-bit boundary (truncating it is wrong for 1542 of the 393216 f24
//! significand/parity/range combinations tested), so the candidate is corrected with exact integer
//! comparisons: a grid value `g` with `<= 18` significant bits satisfies
//! `g <= y` iff `g²·x <= 1`, and `G²·X` (`G < 2^18`, `X < 2^24`) fits in a u64. `y` is never an
//! 18-bit midpoint (that would need `x = 1/h²` with `h` an odd multiple of a power of two), so
//! nearest-even never meets a tie. F32 mode: `(1.0f64 / (x as f64).sqrt()) as f32`, by definition.
//!
//! JIT recipes for F24 (f24 inputs, so `x` has at most 17 significant bits; both exhaustively tested):
//! * **RTZ** ([`rsq_jit_recipe_rz`]), host in round-toward-zero: specials first, then
//!   `r = sqrtsd(divsd(1.0, x))` (both rounded down, so `r <= y` and `y - r < 2^-51·y`);
//!   `t = r` with the low 36 f64 fraction bits cleared; `u = t + ulp17` (integer add of `1 << 36`
//!   to the f64 bits); if `u·u·x <= 1.0` (f64 `mulsd` twice: exact, 17+17+17 bits) then `t = u`;
//!   `cvtsd2ss` (exact); [`f24_fixup_rtz`].
//!   Without the `u` step the result is wrong for 1542 of 393216 inputs (either operation order).
//! * **RNE** ([`rsq_jit_recipe_rne`]), host in round-to-nearest: specials first, then
//!   `q = divsd(1.0, sqrtsd(x))`, [`f24_fixup_rne_from_f64`]. No correction is needed: the sweep
//!   over every f24 significand with both exponent parities finds no input where the two f64
//!   roundings move `q` across an 18-bit midpoint (and scaling `x` by 4 scales every step exactly).
//!   Should a backend ever feed non-f24 inputs, the exact midpoint test is `h·h·x < 1.0` with
//!   `h = trunc17(q) + ulp17/2`.
//!
//! Specials (same in every mode, after the flush): NaN or `x < 0` (including `-inf`) → NaN,
//! `+0` → `+inf`, `+inf` → `+0`.
//!
//! # EX2 (integer-only algorithm)
//!
//! All arithmetic below is two's-complement integer arithmetic on i64/u64 (every product is
//! bounded so that it fits in 64 bits), `>>` on signed values is arithmetic (floor). `P` is the
//! kept precision (17 for F24, 24 for F32).
//!
//! 1. `x = flush_input(x, mode)`; NaN → [`CANONICAL_NAN`].
//! 2. [`ex2_fixed_input`]: `X = floor(x · 2^32)` as i64, saturated. With `b` = f32 bits,
//!    `E = (b >> 23) & 0xFF`, `M = (b & 0x7FFFFF) | 0x800000`, `S = b < 0 ? -M : M`:
//!    `E == 0` → `X = 0`; `E >= 135` (`|x| >= 256`, infinities) → `X = ±2^40`;
//!    otherwise `sh = E - 118`, `X = sh >= 0 ? S << sh : S >> min(-sh, 63)`.
//! 3. `n = X >> 32` (i32), `f = X & 0xFFFF_FFFF` (the fraction, Q32).
//! 4. `i = f >> 26` (0..63), `r = f & 0x03FF_FFFF` (u64, `r/2^32 < 2^-6`).
//! 5. [`ex2_poly`]: with `B = EX2_POLY` (Q32 `ln2^k/k!`, k = 1..4):
//!    `t = B[3]; t = B[2] + (r·t >> 32); t = B[1] + (r·t >> 32); t = B[0] + (r·t >> 32);
//!    p = r·t >> 32` (u64; `p/2^32 ≈ 2^(r/2^32) - 1`).
//! 6. [`ex2_mantissa`]: `T = EX2_TABLE[i]` (Q31 `2^(i/64)`), `mant = min(T + (T·p >> 32), 2^32 - 1)`
//!    (the clamp keeps the result below `2^(n+1)` when rounding errors add up for `f → 1`).
//! 7. `result = round_scaled(false, mant, n - 31, mode)` (see below).
//!
//! Exact cases: `f = 0` gives `mant = 2^31`, so `ex2(k) = 2^k` for every integer `k` in range and
//! `ex2(0) = 1`. `ex2(+inf) = +inf` and `ex2(-inf) = +0` come from the saturation.
//!
//! # LG2 (integer-only algorithm)
//!
//! 1. `x = flush_input(x, mode)`; NaN or `x < 0` → NaN; `x == 0` → `-inf`; `x == +inf` → `+inf`.
//! 2. `e = ((b >> 23) & 0xFF) - 127`, `F = b & 0x7FFFFF`, `M = F | 0x800000` (all i64).
//! 3. `j = (F + 2^16) >> 17` (0..=64: the nearest `1 + j/64` to the significand),
//!    `R = LG2_RECIP[j]` (`≈ 2^16 / (1 + j/64)`, with `R[0] = 2^16`, `R[64] = 2^15` exact).
//! 4. `z = M·R - 2^39` (exact; `z/2^39 = significand·R/2^16 - 1`, `|z| <= 2^32 + 2^23`).
//! 5. [`lg2_poly`]: `zq = z >> 9`; with `A = LG2_POLY` (Q30 `(-1)^k / ((k+1)·ln2)`, k = 0..4):
//!    `t = A[4]; t = A[3] + (zq·t >> 30); t = A[2] + (zq·t >> 30); t = A[1] + (zq·t >> 30);
//!    t = A[0] + (zq·t >> 30)`. (`t/2^30 ≈ log2(1 + z/2^39) / (z/2^39)`.)
//! 6. `lp = (z·t) >> 14` (Q55; `|z·t| < 2^62.6`).
//! 7. [`lg2_fixed`]: `s = (e << 55) + LG2_LOG[j] + lp` (Q55; `LG2_LOG[j] = -log2(R/2^16)·2^55`
//!    rounded, exactly `0` and `2^55` at the ends).
//! 8. `result = round_scaled(s < 0, |s|, -55, mode)`.
//!
//! Exact cases: `lg2(2^k) = k` (`F = 0` gives `z = 0`) and `lg2(1) = +0`. Near `x = 1` the integer
//! part `e + LG2_LOG[j]` is exactly zero on both sides (j = 0 above 1, j = 64 with e = -1 below),
//! and `z` is exact, so the result keeps full relative precision (Q55 resolves `2^-24·log2(e)`
//! to 31 bits).
//!
//! # Final rounding [`round_scaled`]`(neg, sig, exp, mode)`
//!
//! 1. `sig == 0` → `+0`. 2. `lz = clz64(sig)`, `top = sig << lz`, `e = exp + 63 - lz`.
//! 3. `kept = top >> (64 - P)`. 4. Nearest modes (F24 RNE, F32): `rem = top << P`; if
//!    `rem > 2^63` or (`rem == 2^63` and `kept` odd) then `kept += 1`, and if `kept == 2^P` then
//!    `kept >>= 1, e += 1`. 5. `e >= 64` (F24) / `128` (F32) → `±inf`; `e < -62` / `-126` → `+0`.
//! 6. f32 bits: `neg << 31 | (e + 127) << 23 | ((kept << (24 - P)) & 0x7FFFFF)`.
//!
//! # Accuracy (measured by `interp/tests/float_exhaustive.rs` against f64 `exp2`/`log2`)
//!
//! Before the final rounding, EX2 is within `2^-30.1` relative of `2^x` and LG2 within `2^-31`
//! relative of `log2(x)` (the test asserts `2^-29`). After it, results are within 1 ulp of the
//! mode's precision under RTZ and within `0.5 + 2^-5` ulp (measured: 0.51) in the nearest modes.
//! Neither is correctly rounded in general (the hardware's precision is unknown, pf §4), but at
//! f24 precision they nearly are: over every f24 input, LG2 matches the correctly rounded result
//! for all positive inputs and EX2 differs for 21 (RTZ) / 78 (RNE) inputs with
//! `2^-20 <= |x| < 128`. Both are monotonic over the tested f24 sweeps, and both are
//! deterministic and host-independent.

use super::ops::{f24_fixup_rne_from_f64, f24_fixup_rtz, f32_fixup, finish, params, round_scaled};
use super::precision::F24_ULP_F64;
use super::{FloatMode, Rounding, CANONICAL_NAN};
use core::cmp::Ordering;

/// `round(2^(i/64) · 2^31)`, i = 0..63 (Q31 in a u32).
pub static EX2_TABLE: [u32; 64] = [
    0x80000000, 0x8164d1f4, 0x82cd8699, 0x843a28c4, 0x85aac368, 0x871f6197, 0x88980e81, 0x8a14d575,
    0x8b95c1e4, 0x8d1adf5b, 0x8ea4398b, 0x9031dc43, 0x91c3d374, 0x935a2b2f, 0x94f4efa9, 0x96942d37,
    0x9837f052, 0x99e04593, 0x9b8d39ba, 0x9d3ed9a7, 0x9ef53261, 0xa0b05110, 0xa2704303, 0xa43515ae,
    0xa5fed6aa, 0xa7cd93b5, 0xa9a15ab5, 0xab7a39b6, 0xad583eea, 0xaf3b78ad, 0xb123f582, 0xb311c413,
    0xb504f334, 0xb6fd91e3, 0xb8fbaf47, 0xbaff5ab2, 0xbd08a39f, 0xbf1799b6, 0xc12c4cca, 0xc346ccda,
    0xc5672a11, 0xc78d74c9, 0xc9b9bd86, 0xcbec14ff, 0xce248c15, 0xd06333db, 0xd2a81d92, 0xd4f35aac,
    0xd744fccb, 0xd99d15c2, 0xdbfbb798, 0xde60f482, 0xe0ccdeec, 0xe33f8973, 0xe5b906e7, 0xe8396a50,
    0xeac0c6e8, 0xed4f301f, 0xefe4b99c, 0xf281773c, 0xf5257d15, 0xf7d0df73, 0xfa83b2db, 0xfd3e0c0d,
];

/// `round(ln2^k / k! · 2^32)`, k = 1..4 (Taylor coefficients of `2^r - 1`, Q32).
pub static EX2_POLY: [u32; 4] = [0xb17217f8, 0x3d7f7bff, 0x0e35846c, 0x0276556e];

/// `round(2^22 / (64 + j))`, j = 0..64: `≈ 2^16 / (1 + j/64)` (Q16).
pub static LG2_RECIP: [u32; 65] = [
    65536, 64528, 63550, 62602, 61681, 60787, 59919, 59075, 58254, 57456, 56680, 55924, 55188,
    54471, 53773, 53092, 52429, 51782, 51150, 50534, 49932, 49345, 48771, 48210, 47663, 47127,
    46603, 46091, 45590, 45100, 44620, 44151, 43691, 43240, 42799, 42367, 41943, 41528, 41121,
    40721, 40330, 39946, 39569, 39199, 38836, 38480, 38130, 37787, 37449, 37118, 36792, 36472,
    36158, 35849, 35545, 35246, 34953, 34664, 34380, 34100, 33825, 33554, 33288, 33026, 32768,
];

/// `round((16 - log2(LG2_RECIP[j])) · 2^55)` (Q55), so `-log2(R/2^16)` exactly as tabulated `R`.
pub static LG2_LOG: [i64; 65] = [
    0,
    805687113241919,
    1599516285849165,
    2380742249799192,
    3151131383509835,
    3910018017511496,
    4657589367451166,
    5394948327683440,
    6122391668287025,
    6839348783977309,
    7546154513065870,
    8244111724669019,
    8932728340150196,
    9612456652384019,
    10282822538857982,
    10945301051873815,
    11598483703280144,
    12243915852028277,
    12882218168756392,
    13511996478776001,
    14134923075173819,
    14749602694383607,
    15357781538194188,
    15959142654817205,
    16552272828099445,
    17140115612081167,
    17721296722823845,
    18295515050907035,
    18863604866225687,
    19425292937044985,
    19981466590669749,
    20530703946259775,
    21075098638707669,
    21614435444825625,
    22147280984503803,
    22674602531606812,
    23197413541444887,
    23714270484721750,
    24226205237502261,
    24734296248676857,
    25235802146807337,
    25733084569639266,
    26225974376996844,
    26714299868705008,
    27197886870475125,
    27676558828419367,
    28151500088023583,
    28621191190752148,
    29088224891949687,
    29549689577729733,
    30008223542338296,
    30462286851624237,
    30911725696686044,
    31357834428555309,
    31800492909774132,
    32239579344195958,
    32673483203481387,
    33105041360076691,
    33532652628918914,
    33957713370944491,
    34378594753820854,
    34796715163929573,
    35210418277361919,
    35621144680790318,
    36028797018963968,
];

/// `round((-1)^k / ((k + 1)·ln2) · 2^30)`, k = 0..4 (Q30): `log2(1+z)/z` as a series in `z`.
pub static LG2_POLY: [i64; 5] = [1549082005, -774541002, 516360668, -387270501, 309816401];

/// EX2 step 2: `floor(x · 2^32)` as i64, saturated to `±2^40` for `|x| >= 256`; `+0` for `E == 0`.
#[inline]
pub fn ex2_fixed_input(x: f32) -> i64 {
    let b = x.to_bits();
    let e = ((b >> 23) & 0xFF) as i32;
    let neg = b >> 31 != 0;
    if e == 0 {
        return 0;
    }
    if e >= 135 {
        return if neg { -(1 << 40) } else { 1 << 40 };
    }
    let m = ((b & 0x7F_FFFF) | 0x80_0000) as i64;
    let s = if neg { -m } else { m };
    let sh = e - 118;
    if sh >= 0 {
        s << sh
    } else {
        s >> (-sh).min(63)
    }
}

/// EX2 step 5: `p ≈ (2^(r/2^32) - 1) · 2^32` for `r < 2^26`.
#[inline]
pub fn ex2_poly(r: u64) -> u64 {
    let [b1, b2, b3, b4] = EX2_POLY;
    let mut t = b4 as u64;
    t = b3 as u64 + ((r * t) >> 32);
    t = b2 as u64 + ((r * t) >> 32);
    t = b1 as u64 + ((r * t) >> 32);
    (r * t) >> 32
}

/// EX2 steps 4-6: `≈ 2^(f/2^32) · 2^31`, in `[2^31, 2^32)`.
#[inline]
pub fn ex2_mantissa(f: u32) -> u32 {
    let i = (f >> 26) as usize;
    let r = (f & 0x03FF_FFFF) as u64;
    let p = ex2_poly(r);
    let t = EX2_TABLE[i] as u64;
    (t + ((t * p) >> 32)).min(0xFFFF_FFFF) as u32
}

/// EX2: `2^x`; see the step list in the module docs.
#[inline]
pub fn ex2(x: f32, m: FloatMode) -> f32 {
    let x = super::ops::flush_input(x, m);
    if x.is_nan() {
        return CANONICAL_NAN;
    }
    let xf = ex2_fixed_input(x);
    let n = (xf >> 32) as i32;
    let mant = ex2_mantissa(xf as u32);
    round_scaled(false, mant as u64, n - 31, m)
}

/// LG2 step 5: `t ≈ log2(1 + z/2^39) / (z/2^39) · 2^30`.
#[inline]
pub fn lg2_poly(z: i64) -> i64 {
    let zq = z >> 9;
    let mut t = LG2_POLY[4];
    t = LG2_POLY[3] + ((zq * t) >> 30);
    t = LG2_POLY[2] + ((zq * t) >> 30);
    t = LG2_POLY[1] + ((zq * t) >> 30);
    LG2_POLY[0] + ((zq * t) >> 30)
}

/// LG2 steps 2-7: `log2(x) · 2^55` for a positive, finite, normal `x`.
#[inline]
pub fn lg2_fixed(x: f32) -> i64 {
    let b = x.to_bits();
    let e = ((b >> 23) & 0xFF) as i64 - 127;
    let frac = b & 0x7F_FFFF;
    let mant = (frac | 0x80_0000) as i64;
    let j = ((frac + (1 << 16)) >> 17) as usize;
    let z = mant * LG2_RECIP[j] as i64 - (1 << 39);
    let lp = (z * lg2_poly(z)) >> 14;
    (e << 55) + LG2_LOG[j] + lp
}

/// LG2: `log2(x)`; see the step list in the module docs.
#[inline]
pub fn lg2(x: f32, m: FloatMode) -> f32 {
    let x = super::ops::flush_input(x, m);
    if x.is_nan() || x < 0.0 {
        return CANONICAL_NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x == f32::INFINITY {
        return f32::INFINITY;
    }
    let s = lg2_fixed(x);
    round_scaled(s < 0, s.unsigned_abs(), -55, m)
}

/// RCP: correctly rounded `1/x` (see the module docs); `rcp(±0) = +inf`, `rcp(±inf) = +0`.
#[inline]
pub fn rcp(x: f32, m: FloatMode) -> f32 {
    let p = params(m);
    let x = super::ops::flush_input(x, m);
    finish(1.0 / x as f64, 0.0, p)
}

/// Compares `g²·x` with 1 exactly, for a positive f64 `g` with at most 18 significant bits and a
/// positive normal finite f32 `x`.
#[inline]
fn sq_times_cmp_one(g_bits: u64, x: f32) -> Ordering {
    let g_sig = ((g_bits & 0x000F_FFFF_FFFF_FFFF) | (1 << 52)) >> 35;
    let g_exp = (g_bits >> 52) as i32 - 1075 + 35;
    let xb = x.to_bits();
    let x_sig = ((xb & 0x7F_FFFF) | 0x80_0000) as u64;
    let x_exp = ((xb >> 23) & 0xFF) as i32 - 150;
    // < 2^36 · 2^24: no overflow.
    let n = g_sig * g_sig * x_sig;
    let k = -(2 * g_exp + x_exp);
    if k < 0 {
        Ordering::Greater
    } else if k > 62 {
        Ordering::Less
    } else {
        n.cmp(&(1u64 << k))
    }
}

/// Correctly rounded F24 `1/sqrt(x)` for a positive normal finite `x`, as f64 on the 17-bit grid.
#[inline]
fn rsq_f24_exact(x: f32, r: Rounding) -> f64 {
    let q = 1.0 / (x as f64).sqrt();
    let mut t = q.to_bits() & !(F24_ULP_F64 - 1);
    // `q` is within 2^-52 of the exact value, so the truncation is off by at most one ulp.
    if sq_times_cmp_one(t, x) == Ordering::Greater {
        t -= F24_ULP_F64;
    } else if sq_times_cmp_one(t + F24_ULP_F64, x) != Ordering::Greater {
        t += F24_ULP_F64;
    }
    if r == Rounding::NearestEven && sq_times_cmp_one(t + F24_ULP_F64 / 2, x) == Ordering::Less {
        t += F24_ULP_F64;
    }
    f64::from_bits(t)
}

/// RSQ: `1/sqrt(x)`, correctly rounded in F24 mode, `(1.0f64 / sqrt(x as f64)) as f32` in F32
/// mode; `rsq(±0) = +inf`, `rsq(+inf) = +0`, `rsq(x < 0) = NaN`.
#[inline]
pub fn rsq(x: f32, m: FloatMode) -> f32 {
    let x = super::ops::flush_input(x, m);
    if x.is_nan() || x <= 0.0 {
        return if x == 0.0 {
            f32::INFINITY
        } else {
            CANONICAL_NAN
        };
    }
    if x == f32::INFINITY {
        return 0.0;
    }
    let y = match m {
        FloatMode::F24(r) => rsq_f24_exact(x, r),
        FloatMode::F32 => 1.0 / (x as f64).sqrt(),
    };
    finish(y, 0.0, params(m))
}

/// F24-RTZ JIT recipe for RCP. `div_f32_rz` is the host's f32 division in round-toward-zero
/// (`divss` with MXCSR.RC = 11); the tests pass an exact emulation.
#[inline]
pub fn rcp_jit_recipe_rz(x: f32, div_f32_rz: impl Fn(f32, f32) -> f32) -> f32 {
    let x = super::ops::flush_input(x, FloatMode::F24(Rounding::TowardZero));
    f24_fixup_rtz(div_f32_rz(1.0, x))
}

/// F24-RNE JIT recipe for RCP: f64 division in round-to-nearest (Rust's), then the RNE fix-up.
#[inline]
pub fn rcp_jit_recipe_rne(x: f32) -> f32 {
    let x = super::ops::flush_input(x, FloatMode::F24(Rounding::NearestEven));
    f24_fixup_rne_from_f64(1.0 / x as f64)
}

/// F32-mode JIT recipe for RCP: f32 division in round-to-nearest, then [`f32_fixup`].
#[inline]
pub fn rcp_jit_recipe_f32(x: f32) -> f32 {
    f32_fixup(1.0 / super::ops::flush_input(x, FloatMode::F32))
}

#[inline]
fn rsq_special(x: f32) -> Option<f32> {
    if x.is_nan() || x <= 0.0 {
        Some(if x == 0.0 {
            f32::INFINITY
        } else {
            CANONICAL_NAN
        })
    } else if x == f32::INFINITY {
        Some(0.0)
    } else {
        None
    }
}

/// F24-RTZ JIT recipe for RSQ, for f24 inputs. `div_f64_rz` / `sqrt_f64_rz` are the host's f64
/// division and square root in round-toward-zero (`divsd` / `sqrtsd` with MXCSR.RC = 11); the
/// multiplications are exact, so their rounding mode does not matter.
#[inline]
pub fn rsq_jit_recipe_rz(
    x: f32,
    div_f64_rz: impl Fn(f64, f64) -> f64,
    sqrt_f64_rz: impl Fn(f64) -> f64,
) -> f32 {
    let x = super::ops::flush_input(x, FloatMode::F24(Rounding::TowardZero));
    if let Some(s) = rsq_special(x) {
        return s;
    }
    let xd = x as f64;
    let r = sqrt_f64_rz(div_f64_rz(1.0, xd));
    let t = r.to_bits() & !(F24_ULP_F64 - 1);
    let u = f64::from_bits(t + F24_ULP_F64);
    let y = if u * u * xd <= 1.0 {
        u
    } else {
        f64::from_bits(t)
    };
    f24_fixup_rtz(y as f32)
}

/// F24-RNE JIT recipe for RSQ, for f24 inputs, with f64 operations in round-to-nearest (Rust's).
#[inline]
pub fn rsq_jit_recipe_rne(x: f32) -> f32 {
    let x = super::ops::flush_input(x, FloatMode::F24(Rounding::NearestEven));
    if let Some(s) = rsq_special(x) {
        return s;
    }
    f24_fixup_rne_from_f64(1.0 / (x as f64).sqrt())
}
