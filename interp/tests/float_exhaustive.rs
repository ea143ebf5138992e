//! Exhaustive and large sweeps: every f24 bit pattern's encoding, RCP/RSQ over every f24
//! significand (both exponent parities) against an exact integer reference, proofs of the JIT
//! recipes documented in `float::transcendental`, and the measured accuracy of EX2/LG2.
//!
//! Host directed rounding cannot be switched from safe Rust, so the host's round-toward-zero f32/f64
//! division and square root are emulated exactly with u128 integer arithmetic.

mod float_support;

use float_support::*;
use picajit_interp::pica::float::{self, transcendental as tr, FloatMode, CANONICAL_NAN, F24};

/// `f` on the f32 value of an f24 pattern built from its fields.
fn f24v(sign: u32, e: u32, m: u32) -> f32 {
    F24::from_bits((sign << 23) | (e << 16) | m).to_f32()
}

/// Exact significand/exponent of a finite positive f64: `(sig, exp)`, value `sig·2^exp`.
fn decode64(x: f64) -> (u128, i32) {
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7FF) as i32;
    assert!(e != 0 && e != 0x7FF && b >> 63 == 0, "decode64({x:e})");
    (((b & ((1 << 52) - 1)) | (1 << 52)) as u128, e - 1075)
}

fn encode(kept: u128, exp: i32) -> f64 {
    kept as f64 * 2f64.powi(exp)
}

/// Host f64 division `a / b` in round-toward-zero (positive finite operands).
fn div_f64_rz(a: f64, b: f64) -> f64 {
    let (sa, ea) = decode64(a);
    let (sb, eb) = decode64(b);
    let k: u32 = 58;
    let (kept, exp) = round_raw((sa << k) / sb, ea - eb - k as i32, false, 53, false);
    encode(kept, exp)
}

/// Host f64 square root in round-toward-zero (positive finite operand).
fn sqrt_f64_rz(v: f64) -> f64 {
    let (mut s, mut e) = decode64(v);
    if e % 2 != 0 {
        s <<= 1;
        e -= 1;
    }
    let k: u32 = 28;
    let (kept, exp) = round_raw(isqrt(s << (2 * k)), e / 2 - k as i32, false, 53, false);
    encode(kept, exp)
}

/// Host f32 division `1 / x` in round-toward-zero, IEEE specials.
fn rcp_f32_rz(one: f32, x: f32) -> f32 {
    assert_eq!(one, 1.0);
    if x == 0.0 || !x.is_finite() {
        return 1.0 / x;
    }
    let (neg, sig, e) = decode(x);
    let (kept, exp) = round_raw((1u128 << 60) / sig, -e - 60, false, 24, false);
    let v = encode(kept, exp) as f32;
    if neg {
        -v
    } else {
        v
    }
}

/// Every f24 significand with the exponent fields `exps`, both signs.
fn sweep(exps: &[u32], mut f: impl FnMut(f32)) {
    for &e in exps {
        for m in 0..1u32 << 16 {
            f(f24v(0, e, m));
            f(f24v(1, e, m));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding

#[test]
fn every_f24_pattern_round_trips() {
    // Stride 1 would be 2^24 patterns; a stride coprime to 2^24 still visits every field value.
    let stride = if cfg!(debug_assertions) { 7 } else { 1 };
    let mut p = 0u32;
    while p < 1 << 24 {
        let v = F24::from_bits(p);
        let x = v.to_f32();
        assert_eq!(F24::from_f32_exact(x), Some(v), "{p:#08X}");
        if !v.is_nan() {
            assert_eq!(x.to_bits(), f24_bits(p).to_bits(), "{p:#08X}");
        }
        // Values that are already f24 pass through the upload unchanged (except subnormal patterns,
        // which are flushed).
        let up = F24::from_f32(x, picajit_interp::pica::float::Rounding::TowardZero);
        if v.is_nan() {
            assert_eq!(up, F24::NAN);
        } else if v.is_subnormal_pattern() {
            assert_eq!(up, F24::ZERO);
        } else {
            assert_eq!(up, v, "{p:#08X}");
        }
        p += stride;
    }
}

#[test]
#[ignore = "full 2^24 sweep; the default run strides"]
fn every_f24_pattern_round_trips_full() {
    for p in 0..1u32 << 24 {
        let v = F24::from_bits(p);
        assert_eq!(F24::from_f32_exact(v.to_f32()), Some(v), "{p:#08X}");
    }
}

/// `F24::upload_f32_bits` (the branch-free upload batches use) against `F24::from_f32` on
/// f32 patterns: every one in release builds, every 257th plus the boundaries otherwise.
#[test]
fn upload_bits_match_from_f32() {
    use picajit_interp::pica::float::Rounding;
    let check = |b: u32| {
        for r in [Rounding::TowardZero, Rounding::NearestEven] {
            let want = F24::from_f32(f32::from_bits(b), r).to_f32_bits();
            assert_eq!(F24::upload_f32_bits(b, r), want, "{b:#010X} {r:?}");
        }
    };
    for base in [0u32, 0x2080_0000, 0x5F80_0000, 0x7F80_0000] {
        for d in 0..0x200u32 {
            for s in [0, 0x8000_0000] {
                check(s | base.wrapping_add(d));
                check(s | base.wrapping_sub(d));
            }
        }
    }
    let stride = if cfg!(debug_assertions) { 257 } else { 1 };
    let mut b = 0u64;
    while b <= u64::from(u32::MAX) {
        check(b as u32);
        b += stride;
    }
}

// ---------------------------------------------------------------------------------------------
// RCP

/// Exponent fields covering both ends of the range (rcp of [2^63, 2^64) flushes to +0).
const RCP_EXPS: [u32; 6] = [1, 2, 63, 64, 125, 126];

#[test]
fn rcp_exhaustive_f24() {
    let mut f32_rn_double_rounding = 0u32;
    sweep(&RCP_EXPS, |x| {
        let mag = x.abs();
        for m in [RTZ, RNE] {
            let r = ref_rcp_pos(mag, m);
            let want = if x < 0.0 { -r } else { r };
            let want = if want == 0.0 { 0.0 } else { want };
            assert_bits(float::rcp(x, m), want, &format!("rcp {m:?} {x:e}"));
        }
        assert_bits(
            tr::rcp_jit_recipe_rz(x, rcp_f32_rz),
            float::rcp(x, RTZ),
            &format!("rcp RZ recipe {x:e}"),
        );
        assert_bits(
            tr::rcp_jit_recipe_rne(x),
            float::rcp(x, RNE),
            &format!("rcp RNE recipe {x:e}"),
        );
        // The tempting shortcut: f32 division in round-to-nearest, then RNE to 17 bits.
        if float::f24_fixup_rne_from_f64((1.0 / x) as f64).to_bits() != float::rcp(x, RNE).to_bits()
        {
            f32_rn_double_rounding += 1;
        }
    });
    // Documented in `transcendental`: the shortcut double-rounds for some significands.
    assert!(f32_rn_double_rounding > 0);
    eprintln!(
        "rcp: f32-RN + RNE17 shortcut wrong for {f32_rn_double_rounding} of {} inputs",
        12 << 16
    );
    for (x, want) in [
        (0.0, f32::INFINITY),
        (-0.0, f32::INFINITY),
        (f32::INFINITY, 0.0),
        (-f32::INFINITY, 0.0),
    ] {
        assert_bits(tr::rcp_jit_recipe_rz(x, rcp_f32_rz), want, "rcp RZ special");
        assert_bits(tr::rcp_jit_recipe_rne(x), want, "rcp RNE special");
    }
    assert_bits(
        tr::rcp_jit_recipe_rz(f32::NAN, rcp_f32_rz),
        CANONICAL_NAN,
        "rcp RZ NaN",
    );
    assert_bits(
        tr::rcp_jit_recipe_rne(f32::NAN),
        CANONICAL_NAN,
        "rcp RNE NaN",
    );
}

/// RCP's and RSQ's reference on `x` flushed for `m`: NaN for NaN, infinity for zero, zero for
/// infinity, `finite` of the flushed value otherwise.
fn ref_reciprocal_like(x: f32, m: FloatMode, finite: impl FnOnce(f32) -> f32) -> f32 {
    let xf = ref_flush(x, m);
    if xf.is_nan() {
        CANONICAL_NAN
    } else if xf == 0.0 {
        f32::INFINITY
    } else if xf.is_infinite() {
        0.0
    } else {
        finite(xf)
    }
}

#[test]
fn rcp_random_wide_inputs() {
    // Non-f24 inputs (24-bit significands) in every mode, and the F32 JIT recipe.
    let mut rng = Rng::new(0x0DC9);
    for _ in 0..100_000 {
        let x = rng.f32_any();
        for m in MODES {
            let want = ref_reciprocal_like(x, m, |xf| {
                let r = ref_rcp_pos(xf.abs(), m);
                if xf < 0.0 && r != 0.0 {
                    -r
                } else {
                    r
                }
            });
            assert_bits(float::rcp(x, m), want, &format!("rcp {m:?} {x:e}"));
        }
        assert_bits(
            tr::rcp_jit_recipe_f32(x),
            float::rcp(x, F32),
            &format!("rcp f32 recipe {x:e}"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// RSQ

#[test]
fn rsq_exhaustive_f24() {
    // Exponent fields 63 and 64 are [1, 2) and [2, 4): every significand with both parities. The
    // result only scales by powers of two with the exponent; the range ends are checked as well.
    let exps = [1, 2, 63, 64, 125, 126];
    let (mut plain_rz, mut plain_rz_alt, mut plain_rne, mut rn_trunc) = (0u32, 0u32, 0u32, 0u32);
    sweep(&exps, |x| {
        if x < 0.0 {
            for m in MODES {
                assert_bits(float::rsq(x, m), CANONICAL_NAN, "rsq negative");
            }
            return;
        }
        for m in [RTZ, RNE] {
            assert_bits(
                float::rsq(x, m),
                ref_rsq_pos(x, m),
                &format!("rsq {m:?} {x:e}"),
            );
        }
        let rz = float::rsq(x, RTZ);
        let rne = float::rsq(x, RNE);
        assert_bits(
            tr::rsq_jit_recipe_rz(x, div_f64_rz, sqrt_f64_rz),
            rz,
            &format!("rsq RZ recipe {x:e}"),
        );
        assert_bits(
            tr::rsq_jit_recipe_rne(x),
            rne,
            &format!("rsq RNE recipe {x:e}"),
        );
        // Without the exact correction step:
        let xd = x as f64;
        if float::f24_fixup_rtz(sqrt_f64_rz(div_f64_rz(1.0, xd)) as f32).to_bits() != rz.to_bits() {
            plain_rz += 1;
        }
        if float::f24_fixup_rtz(div_f64_rz(1.0, sqrt_f64_rz(xd)) as f32).to_bits() != rz.to_bits() {
            plain_rz_alt += 1;
        }
        if float::f24_fixup_rne_from_f64(1.0 / xd.sqrt()).to_bits() != rne.to_bits() {
            plain_rne += 1;
        }
        // The interpreter's starting point (round-to-nearest q, truncated) before its correction.
        let q = 1.0 / xd.sqrt();
        if float::f24_fixup_rtz(f64::from_bits(q.to_bits() & !((1 << 36) - 1)) as f32).to_bits()
            != rz.to_bits()
        {
            rn_trunc += 1;
        }
    });
    eprintln!(
        "rsq without correction, wrong results of {} inputs: RZ sqrt(1/x) {plain_rz}, RZ 1/sqrt(x) {plain_rz_alt}, RN 1/sqrt(x) {plain_rne}, RN q truncated {rn_trunc}",
        6 << 16
    );
    // The RZ correction step is needed; the RNE recipe is the plain sequence.
    assert_eq!((plain_rz, plain_rz_alt, plain_rne), (1542, 1542, 0));
    for (x, want) in [
        (0.0, f32::INFINITY),
        (-0.0, f32::INFINITY),
        (f32::INFINITY, 0.0),
    ] {
        assert_bits(
            tr::rsq_jit_recipe_rz(x, div_f64_rz, sqrt_f64_rz),
            want,
            "rsq RZ special",
        );
        assert_bits(tr::rsq_jit_recipe_rne(x), want, "rsq RNE special");
    }
    for x in [f32::NAN, -1.0, f32::NEG_INFINITY] {
        assert_bits(
            tr::rsq_jit_recipe_rz(x, div_f64_rz, sqrt_f64_rz),
            CANONICAL_NAN,
            "rsq RZ NaN",
        );
        assert_bits(tr::rsq_jit_recipe_rne(x), CANONICAL_NAN, "rsq RNE NaN");
    }
}

#[test]
fn rsq_random_wide_inputs() {
    // The interpreter's RSQ is exact for 24-bit significands too (F24 mode with non-f24 inputs).
    let mut rng = Rng::new(0x2507);
    let mut plain = [0u32; 2];
    for _ in 0..100_000 {
        let x = rng.f32_any().abs();
        if x.is_finite() && x >= 2f32.powi(-62) {
            let q = 1.0 / (x as f64).sqrt();
            let t = float::f24_fixup_rtz(f64::from_bits(q.to_bits() & !((1 << 36) - 1)) as f32);
            plain[0] += (t.to_bits() != float::rsq(x, RTZ).to_bits()) as u32;
            plain[1] +=
                (float::f24_fixup_rne_from_f64(q).to_bits() != float::rsq(x, RNE).to_bits()) as u32;
        }
        for m in [RTZ, RNE] {
            let want = ref_reciprocal_like(x, m, |xf| ref_rsq_pos(xf, m));
            assert_bits(float::rsq(x, m), want, &format!("rsq {m:?} {x:e}"));
        }
    }
    eprintln!(
        "rsq, 24-bit inputs: plain f64 q wrong for {} (RTZ) / {} (RNE) of 100000",
        plain[0], plain[1]
    );
}

// ---------------------------------------------------------------------------------------------
// EX2 / LG2 accuracy

/// Error of `got` against the exact `want`, in units of the mode's last place at `want`.
fn ulps(got: f32, want: f64, m: FloatMode) -> f64 {
    let prec = spec(m).prec as i32;
    let ulp = 2f64.powi(want.abs().log2().floor() as i32 - (prec - 1));
    (got as f64 - want).abs() / ulp
}

#[derive(Default)]
struct Stats {
    max_rel_internal: f64,
    max_ulps: [f64; 3],
}

impl Stats {
    /// Prints the largest errors of `op` and checks them against the bounds EX2 and LG2
    /// share: 2^-29 relative before the final rounding, and in ulps per mode.
    fn report_and_check(&self, op: &str) {
        eprintln!(
            "{op}: internal max rel err 2^{:.2}; max ulps RTZ {:.4} RNE {:.4} F32 {:.4}",
            self.max_rel_internal.log2(),
            self.max_ulps[0],
            self.max_ulps[1],
            self.max_ulps[2]
        );
        assert!(self.max_rel_internal < 2f64.powi(-29));
        assert!(self.max_ulps[0] < 1.0 + 2f64.powi(-10));
        assert!(self.max_ulps[1] < 0.5 + 2f64.powi(-10));
        assert!(self.max_ulps[2] < 0.5 + 2f64.powi(-5));
    }
}

#[test]
fn ex2_accuracy_and_monotonicity() {
    let mut st = Stats::default();
    let check = |x: f32, st: &mut Stats| {
        let want = (x as f64).exp2();
        // Internal value before the final rounding (steps 2-6).
        let xf = tr::ex2_fixed_input(x);
        let internal = tr::ex2_mantissa(xf as u32) as f64 * 2f64.powi((xf >> 32) as i32 - 31);
        st.max_rel_internal = st.max_rel_internal.max(((internal - want) / want).abs());
        for (i, m) in MODES.into_iter().enumerate() {
            let got = float::ex2(x, m);
            let sp = spec(m);
            if want >= 2f64.powi(sp.max_exp) || want < 2f64.powi(sp.min_exp) {
                continue;
            }
            st.max_ulps[i] = st.max_ulps[i].max(ulps(got, want, m));
        }
    };
    // Every f24 value with |x| in [2^-24, 64), plus the ends of the F32 range.
    for e in 39..69 {
        for mm in 0..1u32 << 16 {
            check(f24v(0, e, mm), &mut st);
            check(f24v(1, e, mm), &mut st);
        }
    }
    let mut rng = Rng::new(0xE2);
    for _ in 0..200_000 {
        let x = (rng.next_u32() as f32 / 4294967296.0 - 0.5) * 254.0;
        check(x, &mut st);
    }
    st.report_and_check("ex2");

    // Monotonic over every f24 input in [-64, 64), in every mode.
    for m in MODES {
        let mut xs: Vec<f32> = Vec::new();
        for e in (0..69).rev() {
            for mm in (0..1u32 << 16).rev().step_by(if e < 60 { 61 } else { 1 }) {
                xs.push(f24v(1, e, mm));
            }
        }
        for e in 0..69 {
            for mm in (0..1u32 << 16).step_by(if e < 60 { 61 } else { 1 }) {
                xs.push(f24v(0, e, mm));
            }
        }
        assert_monotonic("ex2", float::ex2, m, xs, 0.0);
    }
}

#[test]
fn lg2_accuracy_and_monotonicity() {
    let mut st = Stats::default();
    let check = |x: f32, st: &mut Stats| {
        let want = (x as f64).log2();
        if want == 0.0 {
            assert_eq!(tr::lg2_fixed(x), 0);
            return;
        }
        let internal = tr::lg2_fixed(x) as f64 * 2f64.powi(-55);
        st.max_rel_internal = st.max_rel_internal.max(((internal - want) / want).abs());
        for (i, m) in MODES.into_iter().enumerate() {
            if x < 2f32.powi(spec(m).min_exp) {
                continue; // flushed input: -inf
            }
            st.max_ulps[i] = st.max_ulps[i].max(ulps(float::lg2(x, m), want, m));
        }
    };
    // Every f24 value in [2^-3, 2^4), and a stride over the whole positive range.
    for e in 1..127 {
        let step = if (60..67).contains(&e) { 1 } else { 97 };
        for mm in (0..1u32 << 16).step_by(step) {
            check(f24v(0, e, mm), &mut st);
        }
    }
    // F32 mode near 1, where the result is tiny and needs full relative precision.
    for k in 1..1u32 << 16 {
        check(1.0 + k as f32 * 2f32.powi(-23), &mut st);
        check(1.0 - k as f32 * 2f32.powi(-24), &mut st);
    }
    let mut rng = Rng::new(0x162);
    for _ in 0..200_000 {
        let x = f32::from_bits(rng.next_u32() & 0x7FFF_FFFF);
        if x.is_finite() && x >= f32::MIN_POSITIVE {
            check(x, &mut st);
        }
    }
    st.report_and_check("lg2");

    // Monotonic over every positive f24 in [2^-4, 2^4) and a stride elsewhere, in every mode.
    for m in MODES {
        let xs = (1..127).flat_map(|e| {
            let step = if (59..67).contains(&e) { 1 } else { 31 };
            (0..1u32 << 16).step_by(step).map(move |mm| f24v(0, e, mm))
        });
        assert_monotonic("lg2", float::lg2, m, xs, f32::NEG_INFINITY);
    }
}

/// `f` (the float model's `op`) never decreases over `xs` in `m`, the first result at least
/// `prev`.
fn assert_monotonic(
    op: &str,
    f: fn(f32, FloatMode) -> f32,
    m: FloatMode,
    xs: impl IntoIterator<Item = f32>,
    mut prev: f32,
) {
    for x in xs {
        let y = f(x, m);
        assert!(
            y >= prev,
            "{op} not monotonic at {x:e} in {m:?}: {y:e} < {prev:e}"
        );
        prev = y;
    }
}

#[test]
fn transcendental_tables_match_their_definitions() {
    for (i, &t) in tr::EX2_TABLE.iter().enumerate() {
        let exact = (i as f64 / 64.0).exp2() * 2f64.powi(31);
        assert!((t as f64 - exact).abs() <= 0.5 + 1e-6, "EX2_TABLE[{i}]");
    }
    let ln2 = std::f64::consts::LN_2;
    let mut fact = 1.0;
    for (k, &c) in tr::EX2_POLY.iter().enumerate() {
        fact *= (k + 1) as f64;
        let exact = ln2.powi(k as i32 + 1) / fact * 2f64.powi(32);
        assert!((c as f64 - exact).abs() <= 0.5 + 1e-3, "EX2_POLY[{k}]");
    }
    for (j, (&r, &l)) in tr::LG2_RECIP.iter().zip(tr::LG2_LOG.iter()).enumerate() {
        let exact_r = 4194304.0 / (64 + j) as f64;
        assert!((r as f64 - exact_r).abs() <= 0.5, "LG2_RECIP[{j}]");
        let exact_l = 16.0 - (r as f64).log2();
        assert!(
            (l as f64 * 2f64.powi(-55) - exact_l).abs() < 2f64.powi(-45),
            "LG2_LOG[{j}]"
        );
    }
    assert_eq!((tr::LG2_LOG[0], tr::LG2_LOG[64]), (0, 1 << 55));
    for (k, &a) in tr::LG2_POLY.iter().enumerate() {
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        let exact = sign / ((k + 1) as f64 * ln2) * 2f64.powi(30);
        assert!((a as f64 - exact).abs() <= 0.5 + 1e-3, "LG2_POLY[{k}]");
    }
}
