//! Differential fuzzing in CI: thousands of random programs (`picajit_testkit::testgen`), each run on
//! the interpreter and on compiled code (x86-64 natively; AArch64 natively or under the
//! emulator), compared bit for bit (registers, flags, address registers, instruction counts,
//! errors, emitted vertices).
//!
//! `PICAJIT_DIFF_CASES` overrides the number of cases per configuration (the AArch64 variants
//! use a tenth of it: emulated code costs far more per run).
#![cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]

mod jit_common;

#[cfg(target_arch = "x86_64")]
use jit_common::check_case_with;
use jit_common::{check_case, with_backend, Outcome};
use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::interp::pica::program::ShaderKind;
use picajit_jit::Backend;
#[cfg(target_arch = "x86_64")]
use picajit_jit::HostFeatures;
use picajit_testkit::env_count;
use picajit_testkit::testgen::{from_bytes, generate, Options};

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn cases(default: u64) -> u64 {
    env_count("PICAJIT_DIFF_CASES").unwrap_or(default)
}

/// The A64 count for an x64 default: a tenth, unless overridden.
fn cases_a64(default: u64) -> u64 {
    env_count("PICAJIT_DIFF_CASES")
        .map(|n| n.div_ceil(10))
        .unwrap_or(default)
}

fn run(mode: FloatMode, kind: ShaderKind, flow: bool, seed0: u64, n: u64) {
    let cfg = Options {
        mode,
        kind,
        max_len: 48,
        flow,
        ..Options::default()
    };
    let mut counts = [0u64; 3];
    for seed in seed0..seed0 + n {
        let case = generate(seed, &cfg);
        let o = check_case(&case, 4000);
        counts[o as usize] += 1;
    }
    eprintln!(
        "{} {mode:?} {kind} flow={flow}: matched/deopted/unsupported = {counts:?}",
        jit_common::backend()
    );
    assert!(
        counts[Outcome::Matched as usize] > n / 4,
        "too few compiled runs finished"
    );
}

const F24Z: FloatMode = FloatMode::F24(Rounding::TowardZero);
const F24N: FloatMode = FloatMode::F24(Rounding::NearestEven);

/// One x86-64 test per configuration: the float mode, the shader kind, whether programs
/// have control flow, the first seed and the default number of cases ([`cases`]).
macro_rules! x64_random_tests {
    ($($name:ident: $mode:expr, $kind:ident, flow $flow:expr, from $seed0:expr, $n:expr;)*) => {$(
        #[cfg(target_arch = "x86_64")]
        #[test]
        fn $name() {
            run($mode, ShaderKind::$kind, $flow, $seed0, cases($n));
        }
    )*};
}

x64_random_tests! {
    random_straight_line_f24_rtz: F24Z, Vertex, flow false, from 0, 6000;
    random_straight_line_f24_rne: F24N, Vertex, flow false, from 10_000, 3000;
    random_straight_line_f32: FloatMode::F32, Vertex, flow false, from 20_000, 3000;
    random_flow_f24_rtz: F24Z, Vertex, flow true, from 30_000, 10000;
    random_flow_f32: FloatMode::F32, Vertex, flow true, from 40_000, 4000;
    random_flow_f24_rne: F24N, Vertex, flow true, from 50_000, 4000;
    random_geometry: F24Z, Geometry, flow true, from 60_000, 4000;
}

/// 2048 bytes from an LCG started at `x`: they stand in for a fuzzer's input.
fn lcg_bytes(mut x: u64) -> Vec<u8> {
    (0..2048)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            (x >> 56) as u8
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn random_from_bytes() {
    let mut counts = [0u64; 3];
    for seed in 0..cases(4000) {
        let x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let case = from_bytes(&lcg_bytes(x));
        counts[check_case(&case, 4000) as usize] += 1;
    }
    eprintln!("from_bytes: {counts:?}");
}

/// The SSE-only code paths (no VEX encodings), on hosts that have AVX.
#[cfg(target_arch = "x86_64")]
#[test]
fn random_sse_only() {
    let features = HostFeatures::detect().without(HostFeatures::AVX);
    let mut counts = [0u64; 3];
    for (k, mode) in [F24Z, F24N, FloatMode::F32].into_iter().enumerate() {
        let cfg = Options {
            mode,
            ..Options::default()
        };
        for seed in 0..cases(1500) {
            let case = generate(seed + 70_000 + 10_000 * k as u64, &cfg);
            counts[check_case_with(&case, 4000, features) as usize] += 1;
        }
    }
    eprintln!("sse only: {counts:?}");
}

/// The AArch64 backend over every configuration: straight-line and flow programs in each float
/// mode, and geometry shaders (natively on AArch64, else under the emulator).
#[test]
fn random_a64_straight_line() {
    with_backend(Backend::A64, || {
        for (mode, seed0, n) in [
            (F24Z, 100_000, 600),
            (F24N, 110_000, 300),
            (FloatMode::F32, 120_000, 300),
        ] {
            run(mode, ShaderKind::Vertex, false, seed0, cases_a64(n));
        }
    });
}

/// See [`random_a64_straight_line`].
#[test]
fn random_a64_flow() {
    with_backend(Backend::A64, || {
        for (mode, kind, seed0, n) in [
            (F24Z, ShaderKind::Vertex, 130_000, 800),
            (F24N, ShaderKind::Vertex, 140_000, 300),
            (FloatMode::F32, ShaderKind::Vertex, 150_000, 300),
            (F24Z, ShaderKind::Geometry, 160_000, 400),
        ] {
            run(mode, kind, true, seed0, cases_a64(n));
        }
    });
}

/// Programs built from raw bytes (the fuzzer's input format), on the AArch64 backend.
#[test]
fn random_a64_from_bytes() {
    with_backend(Backend::A64, || {
        let mut counts = [0u64; 3];
        for seed in 0..cases_a64(400) {
            let x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0xA64);
            counts[check_case(&from_bytes(&lcg_bytes(x)), 4000) as usize] += 1;
        }
        eprintln!("a64 from_bytes: {counts:?}");
    });
}
