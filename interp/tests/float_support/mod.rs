//! Shared helpers of the `float_*` tests: a PRNG and an exact reference model written
//! independently of `picajit_interp::pica::float` (integer arithmetic on u128/i128 only, no f64 tricks).

#![allow(dead_code)]

use picajit_interp::pica::float::{FloatMode, Rounding, CANONICAL_NAN};

pub const RTZ: FloatMode = FloatMode::F24(Rounding::TowardZero);
pub const RNE: FloatMode = FloatMode::F24(Rounding::NearestEven);
pub const F32: FloatMode = FloatMode::F32;
pub const MODES: [FloatMode; 3] = [RTZ, RNE, F32];

/// xorshift64*.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next_u32() as u64 * n as u64) >> 32) as u32
    }
    /// A random f24 value as f32, biased toward interesting exponents and edge patterns.
    pub fn f24(&mut self) -> f32 {
        let s = self.below(2) << 23;
        let e = match self.below(8) {
            0 => self.below(128),
            1 => [0, 1, 2, 125, 126, 127][self.below(6) as usize],
            _ => 55 + self.below(17),
        };
        let m = match self.below(6) {
            0 => [0, 1, 0xFFFF, 0x8000, 0x7FFF, 0xFFFE][self.below(6) as usize],
            _ => self.below(1 << 16),
        };
        f24_bits(s | (e << 16) | m)
    }
    /// A random finite f24 value whose magnitude is in `[2^-62, 2^64)` (no flush, no specials).
    pub fn f24_normal(&mut self) -> f32 {
        loop {
            let x = self.f24();
            let e = (x.to_bits() >> 23) & 0xFF;
            if (65..=190).contains(&e) {
                return x;
            }
        }
    }
    /// A random f32 bit pattern (any class), biased toward moderate exponents.
    pub fn f32_any(&mut self) -> f32 {
        let b = self.next_u32();
        match self.below(4) {
            0 => f32::from_bits(b),
            _ => f32::from_bits((b & 0x807F_FFFF) | ((100 + self.below(56)) << 23)),
        }
    }
}

/// The f32 value of an f24 pattern, computed here independently of the crate.
pub fn f24_bits(p: u32) -> f32 {
    let s = if p & 0x80_0000 != 0 { -1.0f64 } else { 1.0 };
    let e = ((p >> 16) & 0x7F) as i32;
    let m = (p & 0xFFFF) as f64;
    match e {
        127 if m == 0.0 => (s * f64::INFINITY) as f32,
        127 => f32::from_bits(0x7F80_0000 | ((p & 0x80_0000) << 8) | ((p & 0xFFFF) << 7)),
        0 => (s * m * 2f64.powi(-78)) as f32,
        _ => (s * (1.0 + m / 65536.0) * 2f64.powi(e - 63)) as f32,
    }
}

pub fn is_canon_nan(x: f32) -> bool {
    x.to_bits() == CANONICAL_NAN.to_bits()
}

/// Bitwise equality (distinguishes -0/+0 and NaN payloads).
#[track_caller]
pub fn assert_bits(got: f32, want: f32, what: &str) {
    assert_eq!(
        got.to_bits(),
        want.to_bits(),
        "{what}: got {got:e} ({:#010X}), want {want:e} ({:#010X})",
        got.to_bits(),
        want.to_bits()
    );
}

pub struct ModeSpec {
    pub prec: u32,
    pub nearest: bool,
    pub min_exp: i32,
    pub max_exp: i32,
}

pub fn spec(m: FloatMode) -> ModeSpec {
    match m {
        FloatMode::F24(r) => ModeSpec {
            prec: 17,
            nearest: r == Rounding::NearestEven,
            min_exp: -62,
            max_exp: 64,
        },
        FloatMode::F32 => ModeSpec {
            prec: 24,
            nearest: true,
            min_exp: -126,
            max_exp: 128,
        },
    }
}

/// Rounds `n·2^e` (+ a positive amount below `2^e` if `sticky`) to `prec` bits; unbounded
/// exponent. Returns `(kept, exp)` with `kept < 2^prec`, value `kept·2^exp`. `n > 0`.
pub fn round_raw(n: u128, e: i32, sticky: bool, prec: u32, nearest: bool) -> (u128, i32) {
    assert!(n > 0);
    assert!(
        !sticky || 128 - n.leading_zeros() >= prec + 2,
        "sticky needs spare bits"
    );
    // Make room so that the sticky amount is strictly below every dropped bit.
    let (n, e) = if 128 - n.leading_zeros() < prec + 2 {
        let s = prec + 2 - (128 - n.leading_zeros());
        (n << s, e - s as i32)
    } else {
        (n, e)
    };
    let bits = 128 - n.leading_zeros();
    let shift = bits - prec;
    let mut kept = n >> shift;
    let rem = n & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let mut exp = e + shift as i32;
    if nearest && (rem > half || (rem == half && (sticky || kept & 1 == 1))) {
        kept += 1;
        if kept >> prec != 0 {
            kept >>= 1;
            exp += 1;
        }
    }
    (kept, exp)
}

/// Reference: the mode result of `±(n·2^e + sticky)`, with the output rules 3-5.
pub fn ref_result(neg: bool, n: u128, e: i32, sticky: bool, m: FloatMode) -> f32 {
    if n == 0 {
        return 0.0;
    }
    let sp = spec(m);
    let (kept, exp) = round_raw(n, e, sticky, sp.prec, sp.nearest);
    // kept·2^exp in [2^(exp+prec-1), 2^(exp+prec)).
    let top = exp + sp.prec as i32 - 1;
    let mag = if top >= sp.max_exp {
        f64::INFINITY
    } else if top < sp.min_exp {
        return 0.0;
    } else {
        kept as f64 * 2f64.powi(exp)
    };
    (if neg { -mag } else { mag }) as f32
}

/// A finite nonzero f32 as `(neg, sig, exp)`, value `sig·2^exp`, `sig < 2^24`.
pub fn decode(x: f32) -> (bool, u128, i32) {
    let b = x.to_bits();
    let e = ((b >> 23) & 0xFF) as i32;
    let f = (b & 0x7F_FFFF) as u128;
    if e == 0 {
        (b >> 31 != 0, f, -149)
    } else {
        (b >> 31 != 0, f | 0x80_0000, e - 150)
    }
}

pub fn ref_flush(x: f32, m: FloatMode) -> f32 {
    let lim = if matches!(m, FloatMode::F32) {
        2f32.powi(-126)
    } else {
        2f32.powi(-62)
    };
    if x.abs() < lim {
        0.0
    } else {
        x
    }
}

/// Reference ADD.
pub fn ref_add(a: f32, b: f32, m: FloatMode) -> f32 {
    let (a, b) = (ref_flush(a, m), ref_flush(b, m));
    if a.is_nan() || b.is_nan() {
        return CANONICAL_NAN;
    }
    if a.is_infinite() || b.is_infinite() {
        let s = a as f64 + b as f64;
        return if s.is_nan() { CANONICAL_NAN } else { s as f32 };
    }
    exact_sum(&[a, b], m, false, 24)
}

/// The mode result of the exact sum of finite values (`raw`: only round to `prec` bits with the
/// mode's direction, no range rules; used to emulate host f32 ops).
pub fn exact_sum(vals: &[f32], m: FloatMode, raw: bool, prec: u32) -> f32 {
    let terms: Vec<(bool, u128, i32)> = vals
        .iter()
        .filter(|v| **v != 0.0)
        .map(|v| decode(*v))
        .collect();
    if terms.is_empty() {
        return 0.0;
    }
    // Leading-bit exponent of the largest term; terms far below it are replaced by a same-signed
    // power of two far below every rounding decision point (keeps the sum in i128).
    let top = terms
        .iter()
        .map(|(_, s, e)| e + 127 - s.leading_zeros() as i32)
        .max()
        .unwrap();
    let floor = top - 100;
    let terms: Vec<(bool, u128, i32)> = terms
        .into_iter()
        .map(|(n, s, e)| {
            if e + 127 - (s.leading_zeros() as i32) < top - 60 {
                (n, 1, floor)
            } else {
                (n, s, e)
            }
        })
        .collect();
    let emin = terms.iter().map(|t| t.2).min().unwrap();
    let mut acc: i128 = 0;
    for (n, s, e) in terms {
        let v = (s << (e - emin)) as i128;
        acc += if n { -v } else { v };
    }
    if acc == 0 {
        return 0.0;
    }
    if raw {
        let sp = spec(m);
        let (kept, exp) = round_raw(acc.unsigned_abs(), emin, false, prec, sp.nearest);
        let v = kept as f64 * 2f64.powi(exp);
        return (if acc < 0 { -v } else { v }) as f32;
    }
    ref_result(acc < 0, acc.unsigned_abs(), emin, false, m)
}

/// Reference MUL (with `inf × 0 = 0`, `NaN × 0 = NaN`).
pub fn ref_mul(a: f32, b: f32, m: FloatMode) -> f32 {
    let (a, b) = (ref_flush(a, m), ref_flush(b, m));
    if a.is_nan() || b.is_nan() {
        return CANONICAL_NAN;
    }
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let neg = (a < 0.0) != (b < 0.0);
    if a.is_infinite() || b.is_infinite() {
        return if neg {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        };
    }
    let (_, sa, ea) = decode(a);
    let (_, sb, eb) = decode(b);
    ref_result(neg, sa * sb, ea + eb, false, m)
}

/// Exact product rounded toward zero to 24 bits: what a host f32 multiply in RZ returns for
/// finite operands whose product is in the f32 normal range.
pub fn host_mul_rz(a: f32, b: f32) -> f32 {
    if a == 0.0 || b == 0.0 || !a.is_finite() || !b.is_finite() {
        return a * b;
    }
    let (na, sa, ea) = decode(a);
    let (nb, sb, eb) = decode(b);
    let (kept, exp) = round_raw(sa * sb, ea + eb, false, 24, false);
    let v = (kept as f64 * 2f64.powi(exp)) as f32;
    if na != nb {
        -v
    } else {
        v
    }
}

/// Exact sum rounded toward zero to 24 bits (host f32 add in RZ, no overflow possible here).
pub fn host_add_rz(a: f32, b: f32) -> f32 {
    if !a.is_finite() || !b.is_finite() {
        return a + b;
    }
    exact_sum(&[a, b], RTZ, true, 24)
}

/// Integer square root (floor).
pub fn isqrt(v: u128) -> u128 {
    if v == 0 {
        return 0;
    }
    let mut s = (v as f64).sqrt() as u128;
    while s * s > v {
        s -= 1;
    }
    while (s + 1) * (s + 1) <= v {
        s += 1;
    }
    s
}

/// Reference RCP for a positive normal finite f32 (sign handled by the caller).
pub fn ref_rcp_pos(x: f32, m: FloatMode) -> f32 {
    let (_, sig, e) = decode(x);
    // 1/x = 2^-e / sig = floor(2^K / sig)·2^(-e-K) + remainder.
    let k: u32 = 60;
    let num = 1u128 << k;
    ref_result(false, num / sig, -e - k as i32, num % sig != 0, m)
}

/// Reference RSQ for a positive normal finite f32.
pub fn ref_rsq_pos(x: f32, m: FloatMode) -> f32 {
    let (_, mut sig, mut e) = decode(x);
    if e % 2 != 0 {
        sig <<= 1;
        e -= 1;
    }
    // 1/sqrt(sig·2^e) = 2^(-e/2) · 2^-k · sqrt(2^2k / sig).
    let k: u32 = 52;
    let q = (1u128 << (2 * k)) / sig;
    let s = isqrt(q);
    let exact = s * s * sig == 1u128 << (2 * k);
    ref_result(false, s, -e / 2 - k as i32, !exact, m)
}
