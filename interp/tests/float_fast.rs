//! `float::fast` (what the interpreter runs) against the float model's definitions in
//! `float::ops`, bit for bit, in every mode.
//!
//! All f24 pairs are 2^48, too many; instead every f24 pattern of one operand (every 1021st by
//! default, all with `PICAJIT_FAST_FLOAT=full`) meets a structured set of the other (the
//! special values, the flush and overflow edges, and patterns of every exponent: sums of
//! every exponent distance, cancellation and carries), in both orders; f32 patterns outside
//! the f24 grid (registers may hold any f32) are swept the same way with a stride; then random
//! pairs and triples (`PICAJIT_FAST_FLOAT_PAIRS=N` per mode and operation, default 200,000)
//! and random dot products biased toward cancellation.
//!
//! `PICAJIT_FAST_FLOAT=full PICAJIT_FAST_FLOAT_PAIRS=300000000 cargo test --release -p
//! picajit-interp --test float_fast` is the long run.

mod float_support;

use float_support::*;
use picajit_interp::pica::float::{self, fast, FloatMode, CANONICAL_NAN, F24};

fn full() -> bool {
    std::env::var("PICAJIT_FAST_FLOAT").is_ok_and(|v| v == "full")
}

fn pairs() -> u64 {
    std::env::var("PICAJIT_FAST_FLOAT_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

/// The structured operand set: specials, edges, and a spread of every exponent.
fn structured() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        CANONICAL_NAN,
        f32::from_bits(0xFFC0_0001),
        f32::from_bits(0x7F80_0001), // signalling NaN pattern
        1.0,
        -1.0,
        F24::MAX.to_f32(),
        -F24::MAX.to_f32(),
        F24::MIN_POSITIVE.to_f32(),
        -F24::MIN_POSITIVE.to_f32(),
        f32::from_bits(0x2080_0080), // 2^-62 + one f24 ulp
        f32::from_bits(0x207F_FFFF), // just below the f24 flush threshold (not on the grid)
        f32::from_bits(0x5F7F_FFFF), // just below 2^64, off the grid
        f32::from_bits(0x5F80_0000), // 2^64
        f32::MIN_POSITIVE,
        f32::from_bits(0x0000_0001), // f32 subnormal
        f32::MAX,
        f32::from_bits(0x3F80_0001), // 1 + one f32 ulp (off the f24 grid)
        f32::from_bits(0x3F80_0040), // 1 + half an f24 ulp
        f32::from_bits(0x3F80_00C0), // 1 + 1.5 f24 ulps
        f32::from_bits(0x3FFF_FF80), // 2 - one f24 ulp
    ];
    let stride: u32 = if full() { 4 } else { 13 };
    for e in (0..128).step_by(stride as usize) {
        for m in [0u32, 1, 0x8000, 0xFFFF, 0x5555] {
            for s in [0, 1] {
                v.push(F24::from_bits((s << 23) | (e << 16) | m).to_f32());
            }
        }
    }
    v
}

#[track_caller]
fn same(got: f32, want: f32, what: impl Fn() -> String) {
    if got.to_bits() != want.to_bits() {
        panic!(
            "{}: fast {got:e} ({:#010X}), model {want:e} ({:#010X})",
            what(),
            got.to_bits(),
            want.to_bits()
        );
    }
}

fn check_add_mul(a: f32, b: f32, m: FloatMode) {
    let what = |op: &'static str| {
        move || {
            format!(
                "{op}({:#010X}, {:#010X}) in {m:?}",
                a.to_bits(),
                b.to_bits()
            )
        }
    };
    same(fast::add(a, b, m), float::add(a, b, m), what("add"));
    same(fast::mul(a, b, m), float::mul(a, b, m), what("mul"));
}

/// One operand over a sweep of patterns (`next` gives them), the other from `set`, both orders.
fn sweep_against(set: &[f32], patterns: impl Iterator<Item = f32> + Clone) {
    for m in MODES {
        for a in patterns.clone() {
            for &b in set {
                check_add_mul(a, b, m);
                check_add_mul(b, a, m);
            }
        }
    }
}

#[test]
fn every_f24_pattern_against_the_structured_set() {
    let set = structured();
    let stride = if full() { 1 } else { 1021 };
    sweep_against(
        &set,
        (0..1u32 << 24)
            .step_by(stride)
            .map(|p| F24::from_bits(p).to_f32()),
    );
}

#[test]
fn f32_patterns_against_the_structured_set() {
    let set = structured();
    // An odd stride walks every low-bit residue, so patterns off the f24 grid come up.
    let stride = if full() { 4093 } else { 262_147 };
    sweep_against(&set, (0..=u32::MAX).step_by(stride).map(f32::from_bits));
}

#[test]
fn structured_pairs_and_triples() {
    let set = structured();
    for m in MODES {
        for &a in &set {
            for &b in &set {
                check_add_mul(a, b, m);
                for &c in set.iter().step_by(7) {
                    same(fast::mad(a, b, c, m), float::mad(a, b, c, m), || {
                        format!("mad({a:e}, {b:e}, {c:e}) in {m:?}")
                    });
                }
            }
        }
    }
}

#[test]
fn random_pairs_and_triples() {
    let n = pairs();
    for (k, m) in MODES.into_iter().enumerate() {
        let mut rng = Rng::new(0xFA57 + k as u64);
        for _ in 0..n {
            let pick = |rng: &mut Rng| match rng.below(3) {
                0 => rng.f32_any(),
                _ => rng.f24(),
            };
            let (a, b, c) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
            check_add_mul(a, b, m);
            // Near-cancelling sums: b close to -a.
            let near = f32::from_bits((a.to_bits() ^ 0x8000_0000).wrapping_add(rng.below(512)));
            check_add_mul(a, near, m);
            same(fast::mad(a, b, c, m), float::mad(a, b, c, m), || {
                format!("mad({a:e}, {b:e}, {c:e}) in {m:?}")
            });
            let prod = float::mul(a, b, m);
            let cancel = -prod;
            same(
                fast::mad(a, b, cancel, m),
                float::mad(a, b, cancel, m),
                || format!("mad({a:e}, {b:e}, {cancel:e}) in {m:?}"),
            );
        }
    }
}

#[test]
fn random_dot_products() {
    let n = pairs() / 4;
    for (k, m) in MODES.into_iter().enumerate() {
        let mut rng = Rng::new(0xD07 + k as u64);
        for _ in 0..n {
            let mut a = [0.0; 4];
            let mut b = [0.0; 4];
            for l in 0..4 {
                a[l] = if rng.below(8) == 0 {
                    rng.f32_any()
                } else {
                    rng.f24()
                };
                b[l] = rng.f24_normal();
            }
            if rng.below(2) == 0 {
                // Make the last products cancel the first ones (up to a few ulps).
                a[2] = -a[0];
                b[2] = f32::from_bits(b[0].to_bits().wrapping_add(rng.below(3) << 7));
                a[3] = -a[1];
                b[3] = b[1];
            }
            same_dot_products(a, b, m);
        }
    }
}

/// DP4, DP3 and DPH of `a` and `b` in `m`: the fast paths equal the model.
fn same_dot_products(a: [f32; 4], b: [f32; 4], m: FloatMode) {
    let what = |op: &'static str| move || format!("{op}({a:?}, {b:?}) in {m:?}");
    same(fast::dp4(a, b, m), float::dp4(a, b, m), what("dp4"));
    same(fast::dp3(a, b, m), float::dp3(a, b, m), what("dp3"));
    same(fast::dph(a, b, m), float::dph(a, b, m), what("dph"));
}

#[test]
fn structured_dot_products() {
    let set = structured();
    for m in MODES {
        for (i, &x) in set.iter().enumerate() {
            for (j, &y) in set.iter().enumerate() {
                let a = [x, y, set[(i + j) % set.len()], 1.0];
                let b = [y, x, 2.0, set[(i * 7 + j) % set.len()]];
                same_dot_products(a, b, m);
            }
        }
    }
}

#[test]
fn round_to_mode_of_exact_values() {
    let mut rng = Rng::new(0x2A);
    for m in MODES {
        for _ in 0..pairs() {
            // Products of two f32 values: the exact values the rounding sees.
            let x = rng.f32_any() as f64 * rng.f32_any() as f64;
            same(
                fast::round_to_mode(x, m),
                float::round_to_mode(x, m),
                || format!("round_to_mode({x:e}) in {m:?}"),
            );
        }
    }
}

#[test]
fn four_lane_forms_on_the_selected_lanes() {
    let n = pairs() / 4;
    let set = structured();
    for (k, m) in MODES.into_iter().enumerate() {
        let mut rng = Rng::new(0x4444 + k as u64);
        for i in 0..n {
            let mut v = [[0.0f32; 4]; 3];
            for x in v.iter_mut().flatten() {
                *x = match rng.below(4) {
                    0 => set[rng.below(set.len() as u32) as usize],
                    1 => rng.f32_any(),
                    _ => rng.f24(),
                };
            }
            let [a, b, c] = v;
            let mask = [0, 1, 2, 3].map(|l| (i >> l) & 1 != 0 || rng.below(2) == 0);
            let got = [
                fast::mul4(a, b, mask, m),
                fast::add4(a, b, mask, m),
                fast::mad4(a, b, c, mask, m),
            ];
            for l in (0..4).filter(|&l| mask[l]) {
                let what = |op: &'static str| {
                    move || format!("{op} lane {l} of {a:?}, {b:?}, {c:?} in {m:?}")
                };
                same(got[0][l], float::mul(a[l], b[l], m), what("mul4"));
                same(got[1][l], float::add(a[l], b[l], m), what("add4"));
                same(got[2][l], float::mad(a[l], b[l], c[l], m), what("mad4"));
            }
        }
    }
}
