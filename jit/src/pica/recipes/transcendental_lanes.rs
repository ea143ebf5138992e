//! The float model's integer-only EX2 and LG2 algorithms (`picajit_interp::pica::float::transcendental`,
//! module docs, steps 1-8) on every lane of a vector register at once, written once over the
//! host's lane operations ([`Lanes`]), for the AVX2 lane emitter (`crate::pica::x64::lanes`:
//! eight lanes of a ymm register) and the NEON lane emitter (`crate::pica::a64::lanes`, through
//! `crate::pica::a64::masm`: four lanes of a q register), which say where LG2 keeps its first
//! half's results ([`Halves`]).
//!
//! [`crate::pica::recipes::scalar`] is the one-lane form of the same algorithms (general-purpose
//! registers, branches per special case); here every lane takes every path and masks decide,
//! at the end, which lanes are specials.
//!
//! Two steps are written for a lane vector rather than transcribed from the model:
//!
//! * EX2 step 2, `X = floor(x · 2^32)`, goes through exact f64 arithmetic on the clamped input
//!   (`|x| <= 256` keeps `x · 2^32` within `±2^40`, where f64 is exact and saturation agrees),
//!   split into `n = floor(X / 2^32)` and the fraction bits `X - n · 2^32`, both converted to
//!   32-bit lanes. Step 7's `round_scaled` needs no normalising: the significand is always in
//!   `[2^31, 2^32)`.
//! * LG2's 64-bit steps (4-8) run on the two halves of the register in turn, each half's lanes
//!   widened to 64 bits; the hosts' 64-bit primitives are the subset AVX2 has (no 64-bit
//!   multiply or arithmetic shift: products of low dwords, a sign correction for the unsigned
//!   half of z, shifts with a sign fill), and `floor(log2 |s|)` comes from the exponents of
//!   exact f64 conversions of `|s| >> 52` and `|s| mod 2^52`. Where NEON does a step in one
//!   instruction that AVX2 needs several for (the widening multiply of step 4, the shift by a
//!   signed count of step 8), the step is one lane operation.
//!
//! A "half" is the host's: four 64-bit lanes (AVX2) or two (NEON); both hosts have exactly two
//! halves per register.

use super::{flush, Float, Lanes, Src, INF, MANT, SIGN};
use crate::host::lanes::Round;
use picajit_interp::pica::float::transcendental::{EX2_POLY, LG2_POLY};
use picajit_interp::pica::float::{FloatMode, CANONICAL_NAN_BITS};

/// 2^32 as f64 bits.
const TWO32_F64: u64 = 0x41F0_0000_0000_0000;
/// 2^-32 as f64 bits.
const TWO_M32_F64: u64 = 0x3DF0_0000_0000_0000;
/// 2^31 as f64 bits.
const TWO31_F64: u64 = 0x41E0_0000_0000_0000;
/// 256.0 as f32 bits: EX2 saturates from there on.
const F256: u32 = 0x4380_0000;
/// 2^52 as f64 bits: or-ed into a 52-bit integer, the f64 `2^52 + integer`.
const MAGIC52: u64 = 0x4330_0000_0000_0000;

/// Where a lane emitter keeps LG2's results of the first half of the lanes while the second
/// half is computed (on some hosts every vector register is in use then).
pub trait Halves: Float {
    /// Keep the low 32 bits of the 64-bit lanes of `a`, the low (`hi` false) or high half of
    /// the result [`Self::packed`] gives. May clobber `a` and `t`; every other register (the
    /// recipe's result register too) may be written before [`Self::packed`].
    fn pack_half(&mut self, hi: bool, a: Self::R, t: Self::R);
    /// `d` = the two halves [`Self::pack_half`] kept.
    fn packed(&mut self, d: Self::R);
}

/// The registers of a lane recipe: the operand `x` (clobbered), the result `out` and 14
/// scratch registers, all distinct.
#[derive(Clone, Copy, Debug)]
pub struct Regs<R> {
    /// The operand, as the program reads it (the recipe flushes it).
    pub x: R,
    /// The result.
    pub out: R,
    /// Scratch.
    pub s: [R; 14],
}

/// EX2 of every lane of `r.x` into `r.out`: `picajit_interp::pica::float::transcendental`'s EX2
/// steps 1-7 (see the module docs for step 2).
pub fn ex2<H: Lanes>(h: &mut H, mode: FloatMode, r: Regs<H::R>) {
    let (prec, min_exp, max_exp, nearest) = super::result_format(mode);
    let Regs { x, out, s } = r;
    let [b, c, p1, p2, p3, t0, t1, t2, t3, t4, r0, r1, r2, r3] = s;
    let (nan, n, f, rm, idx) = (t4, r0, r1, r2, r3);
    // Step 1.
    flush(h, mode, x, t0);
    h.mag_gt(nan, x, INF);
    // Step 2: |x| >= 256 saturates, so clamping first keeps x · 2^32 within ±2^40.
    h.min_f32_fast(b, x, Src::K(F256));
    h.max_f32_fast(b, b, Src::K(F256 | SIGN));
    for (hi, (nd, fd)) in [(false, (p1, p2)), (true, (p3, c))] {
        h.widen(t3, b, hi);
        h.mul_f64(t3, t3, Src::K64(TWO32_F64));
        h.round_f64(t3, t3, Round::Floor); // X = floor(x · 2^32), exact
        h.mul_f64(nd, t3, Src::K64(TWO_M32_F64));
        h.round_f64(nd, nd, Round::Floor); // n = floor(X / 2^32)
        h.mul_f64(fd, nd, Src::K64(TWO32_F64));
        h.sub_f64(fd, t3, Src::R(fd)); // X - n · 2^32, in [0, 2^32)
        h.sub_f64(fd, fd, Src::K64(TWO31_F64)); // into i32 range for the conversion
        h.cvt_f64_i32(nd, nd);
        h.cvt_f64_i32(fd, fd);
    }
    h.join32(n, p1, p3);
    h.join32(f, p2, c);
    h.xor_int(f, f, Src::K(SIGN)); // the fraction bits as u32

    // Steps 3-5: i, r and the polynomial.
    let [b1, b2, b3, b4] = EX2_POLY;
    let t = [t0, t1, t2];
    h.shr32(idx, f, 26);
    h.and_int(rm, f, Src::K(0x03FF_FFFF));
    h.set(p1, Src::K(b4));
    for b in [b3, b2, b1] {
        h.mulhi_u32(p1, rm, p1, t);
        h.add32(p1, p1, Src::K(b));
    }
    h.mulhi_u32(p2, rm, p1, t); // p

    // Step 6: T = EX2_TABLE[i], then mant = min(T + (T · p >> 32), 2^32 - 1).
    let [table, _, _] = super::transcendental_tables();
    let table = h.table(0, table);
    h.gather32(p3, table, idx, 0, c);
    h.mulhi_u32(b, p3, p2, t);
    h.add32(b, b, Src::R(p3));
    h.max_u32(c, b, Src::R(p3));
    h.cmpeq32(c, c, Src::R(b)); // no carry out of the add
    h.xor_int(c, c, Src::K(u32::MAX));
    h.or_int(f, b, Src::R(c)); // mant

    // Step 7: round_scaled(+, mant, n - 31): the value is mant · 2^(n-31) with mant's top
    // bit at 31, so its exponent is n.
    let sh = 32 - prec;
    h.shr32(rm, f, sh); // kept
    if nearest {
        h.and_int(b, f, Src::K((1 << sh) - 1));
        h.and_int(c, rm, Src::K(1));
        h.add32(b, b, Src::R(c));
        h.cmpgt32(b, b, Src::K(1 << (sh - 1))); // round up: above half, or at half with kept odd
        h.sub32(rm, rm, Src::R(b));
        h.cmpeq32(b, rm, Src::K(1 << prec)); // carried into a new bit
        h.sub32(n, n, Src::R(b));
        h.and_int(b, b, Src::K(1));
        h.shr32_var(rm, rm, b);
    }
    h.shl32(rm, rm, 24 - prec);
    h.and_int(rm, rm, Src::K(MANT));
    h.add32(b, n, Src::K(127));
    h.shl32(b, b, 23);
    h.or_int(b, b, Src::R(rm));
    h.set(c, Src::K(min_exp as u32));
    h.cmpgt32(c, c, Src::R(n)); // n < min_exp: +0
    h.andn_int(b, c, Src::R(b));
    h.cmpgt32(c, n, Src::K((max_exp - 1) as u32)); // n >= max_exp: +inf
    pick(h, b, c, Src::K(INF), b, c);
    pick(h, out, nan, Src::K(CANONICAL_NAN_BITS), b, c);
}

/// LG2 of every lane of `r.x` into `r.out`: `picajit_interp::pica::float::transcendental`'s LG2
/// steps 1-8 (see the module docs for the 64-bit steps).
pub fn lg2<E: Halves>(e: &mut E, mode: FloatMode, r: Regs<E::R>) {
    let (prec, _, _, nearest) = super::result_format(mode);
    let Regs { x, out, s } = r;
    let [b, c, r_tab, lo_tab, hi_tab, t0, t1, t2, t3, t4, spec_mask, spec_val, e32, m] = s;
    {
        let h = &mut e.h();
        flush(h, mode, x, t0);
        // Step 1, decided now and applied last: NaN and negative lanes (a set sign bit after
        // the flush) give NaN, +0 gives -inf, +inf gives +inf.
        h.mag_gt(t4, x, INF);
        h.zero(t3);
        h.cmpgt32(t2, t3, Src::R(x));
        h.or_int(t4, t4, Src::R(t2));
        h.cmpeq32(t1, x, Src::R(t3));
        h.cmpeq32(t2, x, Src::K(INF));
        h.and_int(spec_val, t1, Src::K(INF | SIGN));
        h.andn_int(t0, t1, Src::K(INF));
        h.or_int(spec_val, spec_val, Src::R(t0));
        pick(h, spec_val, t4, Src::K(CANONICAL_NAN_BITS), spec_val, t0);
        h.or_int(spec_mask, t4, Src::R(t1));
        h.or_int(spec_mask, spec_mask, Src::R(t2));
        // Steps 2-3 on every lane: e, M, j and the table reads (R, and LG2_LOG's low and
        // high words, at 8·j and 8·j + 4).
        h.shr32(e32, x, 23);
        h.sub32(e32, e32, Src::K(127));
        h.and_int(b, x, Src::K(MANT));
        h.add32(t3, b, Src::K(1 << 16));
        h.shr32(t3, t3, 17); // j
        h.or_int(m, b, Src::K(1 << 23));
        let [_, recip, logs] = super::transcendental_tables();
        let recip = h.table(0, recip);
        let logs = h.table(1, logs);
        h.gather32(r_tab, recip, t3, 0, c);
        h.shl32(t4, t3, 1); // 2j: the word index of LG2_LOG[j]'s low half
        h.gather32(lo_tab, logs, t4, 0, c);
        h.gather32(hi_tab, logs, t4, 4, c);
    }
    for hi in [false, true] {
        {
            let h = &mut e.h();
            let one = Src::K64(1);
            let prec_m1 = Src::K64(u64::from(prec - 1));
            // Step 4: z = M·R - 2^39 (|z| <= 2^32 + 2^23).
            h.mul_wide_u32(t0, m, r_tab, hi, [b, c]);
            h.sub64(t0, t0, Src::K64(1 << 39));
            // Step 5: zq = z >> 9 fits an i32, as does every t: the low words carry them.
            h.shr64(t1, t0, 9);
            h.set(t2, Src::K64(LG2_POLY[4] as i32 as u32 as u64));
            for k in (0..4).rev() {
                h.mul_i32_64(x, t1, t2);
                h.shr64(x, x, 30); // low word: (zq·t) >> 30, arithmetic (it fits)
                h.add32(t2, x, Src::K64(LG2_POLY[k] as i32 as u32 as u64));
            }
            // Step 6: lp = (z·t) >> 14 with z = zh·2^32 + zl, zl unsigned.
            h.zero(c);
            h.mul_u32_64(x, t0, t2); // zl · (t mod 2^32)
            h.shl64(b, t2, 32);
            h.cmpgt64(b, c, Src::R(b)); // t < 0
            h.shl64(t1, t0, 32);
            h.and_int(t1, t1, Src::R(b));
            h.sub64(x, x, Src::R(t1)); // zl · t
            h.shr64(t1, t0, 32);
            h.mul_i32_64(t1, t1, t2);
            h.shl64(t1, t1, 32);
            h.add64(x, x, Src::R(t1)); // z · t
            h.cmpgt64(b, c, Src::R(x));
            h.shr64(x, x, 14);
            h.shl64(b, b, 50);
            h.or_int(x, x, Src::R(b)); // lp

            // Step 7: s = (e << 55) + LG2_LOG[j] + lp.
            h.widen32(b, e32, hi, true);
            h.shl64(b, b, 55);
            h.add64(x, x, Src::R(b));
            h.widen32(t1, lo_tab, hi, false);
            h.widen32(t2, hi_tab, hi, false);
            h.shl64(t2, t2, 32);
            h.or_int(t1, t1, Src::R(t2));
            h.add64(x, x, Src::R(t1));
            // Step 8: round_scaled(s < 0, |s|, -55).
            h.cmpgt64(t4, c, Src::R(x)); // sign
            h.xor_int(x, x, Src::R(t4));
            h.sub64(x, x, Src::R(t4)); // a = |s|

            // E = floor(log2 a) from the exponents of a >> 52 and a mod 2^52 as f64 (exact).
            h.and_int(t1, x, Src::K64((1 << 52) - 1));
            h.or_int(t1, t1, Src::K64(MAGIC52));
            h.sub_f64(t1, t1, Src::K64(MAGIC52));
            h.shr64(t1, t1, 52);
            h.shr64(t2, x, 52);
            h.or_int(t2, t2, Src::K64(MAGIC52));
            h.sub_f64(t2, t2, Src::K64(MAGIC52));
            h.shr64(t2, t2, 52);
            h.cmpgt64(t0, t2, Src::R(c)); // the high part is not zero
            h.add64(t2, t2, Src::K64(52));
            pick(h, t1, t0, Src::R(t2), t1, t2);
            h.sub64(t1, t1, Src::K64(1023)); // E

            // kept = a >> (E + 1 - P), or a << (P - 1 - E).
            h.sub64(t2, t1, prec_m1); // sh
            h.set(t0, prec_m1);
            h.sub64(t0, t0, Src::R(t1));
            h.shift64(b, x, t0, t2, t0); // kept
            if nearest {
                // Lanes with sh <= 0 do not round: c masks what their shifts give.
                h.cmpgt64(c, t2, Src::R(c)); // sh > 0 (c is zero before this)
                h.set(t0, one);
                h.shl64_var(t0, t0, t2);
                h.sub64(t0, t0, one);
                h.and_int(t0, t0, Src::R(c));
                h.and_int(t0, t0, Src::R(x)); // rem
                h.and_int(t3, b, one);
                h.add64(t0, t0, Src::R(t3));
                h.sub64(t3, t2, one);
                h.set(out, one);
                h.shl64_var(t3, out, t3); // half
                h.and_int(t3, t3, Src::R(c));
                h.andn_int(c, c, Src::K64(i64::MAX as u64));
                h.or_int(t3, t3, Src::R(c)); // no rounding when sh <= 0
                h.cmpgt64(t0, t0, Src::R(t3)); // round up
                h.sub64(b, b, Src::R(t0));
                h.cmpeq64(t0, b, Src::K64(1 << prec)); // carried into a new bit
                h.sub64(t1, t1, Src::R(t0));
                h.and_int(t0, t0, one);
                h.shr64_var(b, b, t0);
            }
            h.add64(t1, t1, Src::K64((127 - 55) as u64));
            h.shl64(t1, t1, 23);
            h.shl64(b, b, 24 - prec);
            h.and_int(b, b, Src::K64(u64::from(MANT)));
            h.or_int(t1, t1, Src::R(b));
            h.and_int(t4, t4, Src::K64(u64::from(SIGN)));
            h.or_int(t1, t1, Src::R(t4));
            h.zero(t3);
            h.cmpeq64(t0, x, Src::R(t3)); // s = 0: +0
            h.andn_int(t1, t0, Src::R(t1));
        }
        e.pack_half(hi, t1, t0);
    }
    e.packed(out);
    let h = &mut e.h();
    pick(h, out, spec_mask, Src::R(spec_val), out, t0);
}

/// `d = m ? k : a` on integer data (`m` a mask): `a` is cleared in place where `m` is set,
/// `k`'s lanes go through `t`, which may be `m` (or `k`, a register).
fn pick<H: Lanes>(h: &mut H, d: H::R, m: H::R, k: Src<H::R, H::Mem>, a: H::R, t: H::R) {
    h.andn_int(a, m, Src::R(a));
    h.and_int(t, m, k);
    h.or_int(d, a, Src::R(t));
}
