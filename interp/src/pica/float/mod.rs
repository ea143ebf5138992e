//! The PICA200 shader-unit float model: the single definition of every float result that the
//! interpreter and both JIT backends must reproduce bit for bit.
//!
//! Evidence tags follow the project's float research notes, "PICA200 shader-unit floating
//! point: a developer spec" (kept with the project's shared notes, not in this repository;
//! cited as "pf §n"): **HW** = measured on hardware
//! (3dbrew "Floating-Point Behavior" table or the aroulin/yuriks `fp-tests` suite), **HW-indirect**
//! = implied by a hardware result, **DOC** = community documentation, **CHOSEN** = no public evidence;
//! the value here is our decision and may be revisited once the pf §11C vectors are run on hardware.
//!
//! # Storage
//!
//! Register values are `f32`. Every f24 bit pattern (`s:1 e:7 m:16`, bias 63) is exactly an f32,
//! including the `e = 0` "subnormal" patterns (`m·2^-78`) and the `0x800000` pattern (`-0.0`), so
//! storage is lossless and moves (MOV, swizzles, negation) never touch the value ([`F24`] converts).
//! Nothing is flushed on load, because MAX/MIN/CMP must see subnormal patterns unchanged
//! (pf §1, §4; HW: `max(s,0) = s`, `cmp(s,0)` false).
//!
//! # Modes
//!
//! [`FloatMode::F24`] is the hardware model; its [`Rounding`] is **CHOSEN** and configurable because
//! the hardware rounding mode is unknown (pf §3.7). [`FloatMode::F32`] is the "what other emulators
//! do" mode: IEEE binary32 round-to-nearest-even with the same special-value rules.
//!
//! # Rules of every arithmetic result (ADD, MUL, MAD, DP3, DP4, DPH, DST.y, FLR, RCP, RSQ, EX2, LG2)
//!
//! 1. **Input flush.** An input whose magnitude is below the smallest normal (`2^-62` in F24 mode,
//!    `2^-126` in F32 mode) is replaced by `+0` before the operation, including `-0` and the f24
//!    `e = 0` patterns. HW for MUL (`mul(s,2) = 0`, pf §3.1); HW-indirect for the others.
//! 2. **Exact result, rounded once.** The result is the exact mathematical result of the operation on
//!    the flushed inputs, rounded to the mode's precision: F24 = 17 significant bits (16 stored) with
//!    the mode's [`Rounding`]; F32 = 24 bits round-to-nearest-even. The exponent is unbounded during
//!    rounding (no gradual underflow). Precision ~16 bits is HW-indirect (pf §3.6); the rounding
//!    direction is CHOSEN (pf §3.7). Exception: EX2/LG2 are not correctly rounded (see
//!    [`transcendental`]) and RSQ in F32 mode is the double-rounded `f64` formula of [`rsq`].
//! 3. **Output range.** After rounding, a magnitude `>= 2^64` (F24) / `>= 2^128` (F32) becomes
//!    `±inf`, also under truncation (CHOSEN: pf §3.7 lists saturation as the alternative; the
//!    evidence that inf is a real infinity is HW, pf §3.4). A magnitude below the smallest normal
//!    becomes `+0` (HW: `mul(n,0.5) = 0`, pf §3.2; A26: 62 halvings of 1.0 give `n`, 63 give 0).
//!    The test is on the *rounded* value ("tininess after rounding", as x86 SSE with FTZ).
//! 4. **No negative zero.** Every zero result is `+0.0` (bits 0). HW-indirect (pf §1: `rcp(-0)`,
//!    `rsq(rcp(-inf))` are `+inf`).
//! 5. **One NaN.** Every NaN result is [`CANONICAL_NAN`] (f32 `0x7FFF_FF80`, f24 `0x7FFFFF`).
//!    CHOSEN (pf §5: payloads are unobservable). Any NaN input pattern counts as NaN.
//! 6. **`inf × 0 = +0`, `0 × inf = +0`, but `NaN × 0 = NaN`**, in MUL, MAD, DP3, DP4, DPH and the
//!    y product of DST (HW, pf §3.3 and vectors A1, A2, A4-A7; DST is CHOSEN to follow it).
//!    `inf × finite` and `inf × inf` follow IEEE signs.
//! 7. **`inf - inf = NaN`** (HW, pf §3.4).
//!
//! # Per operation
//!
//! * [`mad`] = `add(mul(a, b), c)`: not fused (DOC, pf §3.5).
//! * [`dp4`] = `add(add(p0, p1), add(p2, p3))` with `pi = mul(ai, bi)`: every product and every
//!   partial sum is rounded, pairwise order. CHOSEN (pf §3.8: order unknown); pairwise because a
//!   SIMD backend gets it with two shuffle+add steps. [`dp3`] is [`dp4`] with `p3 = +0`;
//!   [`dph`] is [`dp4`] with `a.w = 1.0` (HW, pf §3.8).
//! * [`max`] = `a > b ? a : b`, [`min`] = `a < b ? a : b` on the raw values: no flush, no
//!   canonicalisation, the NaN asymmetry included (HW, pf §4). `max(0, -inf) = 0` follows the
//!   fp-tests suite over the conflicting row of the hardware table; the evidence for both
//!   readings is in `docs/float-max.md` of this repository.
//! * [`sge`]/[`slt`]: `1.0`/`0.0` from an IEEE compare of the raw values; NaN gives `0.0`
//!   (HW, fp-tests #28-35); no flush (CHOSEN, like CMP).
//! * [`flr`]: rules 1-5 around `floor` (toward -inf). `flr(-0.1) = -1` is HW (A18);
//!   `flr(±inf) = ±inf`, `flr(NaN) = NaN` and the input flush (`flr(-s) = +0`) are CHOSEN.
//! * [`rcp`]/[`rsq`]: exact `1/x` and `1/sqrt(x)`, correctly rounded; `rcp(±0) = +inf`,
//!   `rcp(±inf) = +0`, `rsq(±0) = +inf`, `rsq(x < 0) = NaN` (also `-inf`), `rsq(+inf) = +0`,
//!   `rsq(1) = 1` exactly (specials HW, pf §4 and A8-A14; precision CHOSEN).
//!   In F32 mode RSQ is defined as `(1.0f64 / sqrt(x as f64)) as f32` (two f64 roundings, then one
//!   to f32), which any backend reproduces with scalar f64 instructions in round-to-nearest.
//! * [`ex2`]/[`lg2`]: a fixed-point algorithm made of integer operations only, so the result does
//!   not depend on any host float unit; step list in [`transcendental`]. Specials: `ex2(-inf) = +0`
//!   (HW, A19), `lg2(0) = -inf` (HW, A20), `lg2(x < 0) = NaN` (HW, A21); the rest CHOSEN.
//! * [`mova`]: truncation toward zero, saturating, NaN gives 0 (Rust `as i32`). Positive truncation
//!   is HW (A28); negative, NaN and out-of-range are CHOSEN.
//! * [`litp`]: `(max(x,0), max(min(y, 127.99609375), -127.99609375), +0, max(w,0))` with the
//!   [`max`]/[`min`] rules, flags `x >= 0` and `w >= 0` (DOC + HW for non-boundary values, A30/A31).
//! * [`dst`]: `(1.0, mul(a.y, b.y), a.z, b.w)`, z and w copied bit for bit (DOC).
//! * Upload conversion [`F24::from_f32`]: round to 17 bits with the given rounding, then rule 3 on
//!   the rounded value (so an f32 just below `2^-62` that RNE rounds up becomes `2^-62`); an exact
//!   `±0` keeps its sign (a register may legitimately hold `-0`), any other zero result is `+0`,
//!   NaN becomes `0x7FFFFF` (all CHOSEN, pf §2). Except for `-0`, `F24::from_f32(x, r).to_f32()`
//!   equals `round_to_mode(x as f64, F24(r))`, so uploads and arithmetic share one fix-up.
//!
//! # What a JIT must do (F24 mode)
//!
//! * **RTZ, any f32 inputs:** flush the inputs (rule 1), run the f32 operation with the host in
//!   round-toward-zero (MXCSR.RC = 11 / FPCR.RMode = 11), repair `inf × 0` for products (a NaN
//!   product from non-NaN inputs becomes +0), then [`f24_fixup_rtz`]. This equals [`add`]/[`mul`]
//!   because a directed rounding to 24 bits followed by truncation to 17 bits is the truncation to
//!   17 bits (tested in `interp/tests/float_vectors.rs`).
//! * **RNE, f24 inputs:** convert the inputs to f64, run the f64 operation in round-to-nearest,
//!   then [`f24_fixup_rne_from_f64`]. Products are exact in f64; a sum of two 17-bit values is
//!   either exact or so far from every 18-bit midpoint that the f64 rounding cannot create a tie.
//!   (With 24-bit inputs the f64 sum can double-round; F24-mode registers hold f24 values only if
//!   every entry path converts, which is the interpreter's contract.) Do not use f32 ops for RNE.
//! * **RCP / RSQ:** see the proven recipes in [`transcendental`].
//! * **MAX/MIN/SGE/SLT/CMP must compare raw values.** With x86 DAZ or AArch64 FZ set, `maxss` /
//!   `fcmp` see subnormal inputs as zero, which breaks `max(s, 0) = s`.
//!
//! # What a JIT must do (F32 mode)
//!
//! F32-mode arithmetic is exactly x86 SSE with MXCSR.RC = nearest and FTZ = 1 (x86 tests tininess
//! after rounding, as rule 3 does), inputs flushed by [`flush_input`] (or DAZ = 1, but then not
//! for MAX/MIN/compares), the `inf × 0` repair before and [`f32_fixup`] (`-0 → +0`, NaN
//! canonicalisation) after. AArch64 FPCR.FZ tests tininess *before* rounding: it
//! flushes a result whose exact value lies in `[2^-126·(1 - 2^-25), 2^-126)` that this model rounds
//! up to `2^-126`; an AArch64 backend must run with FZ = 0 and flush explicitly (or use FEAT_AFP
//! with FPCR.AH = 1), and then only an exact result in `[2^-126 - 2^-150, 2^-126 - 2^-151)` (which
//! gradual underflow rounds to `2^-126`) still needs a slow path.

pub mod f24;
pub mod fast;
pub mod ops;
pub mod precision;
pub mod transcendental;

pub use f24::F24;
pub use ops::{
    add, dp3, dp4, dph, dst, f24_fixup_rne_from_f64, f24_fixup_rtz, f32_fixup, flr, flush_input,
    litp, mad, max, max_rule, min, mova, mul, round_scaled, round_to_mode, sge, slt, MaxRule,
};
pub use transcendental::{ex2, lg2, rcp, rsq};

/// Rounding of F24-mode results (and of f32 → f24 uploads). The hardware's is unknown (pf §3.7);
/// truncation is the default because the toolchain encoders and the Citra fix that matched a game
/// truncate (pf §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// Truncation of the exact result.
    #[default]
    TowardZero,
    /// Round to nearest, ties to even, of the exact result.
    NearestEven,
}

/// Which float unit the engines model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatMode {
    /// Hardware model: 17-bit significands, exponent range `[2^-62, 2^64)`.
    F24(Rounding),
    /// IEEE binary32 round-to-nearest-even with flush-to-zero and the PICA special-value rules.
    F32,
}

impl Default for FloatMode {
    fn default() -> Self {
        FloatMode::F24(Rounding::TowardZero)
    }
}

/// The only NaN any operation produces: f32 bits `0x7FFF_FF80`, which is f24 `0x7FFFFF`.
// `f32::from_bits` is const only since Rust 1.83; the workspace's rust-version (1.80) needs a bump.
#[allow(clippy::incompatible_msrv)]
pub const CANONICAL_NAN: f32 = f32::from_bits(CANONICAL_NAN_BITS);

/// Bit pattern of [`CANONICAL_NAN`].
pub const CANONICAL_NAN_BITS: u32 = 0x7FFF_FF80;
