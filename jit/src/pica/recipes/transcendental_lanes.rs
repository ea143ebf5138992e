//! The float model's integer-only EX2 and LG2 algorithms (`picajit_interp::pica::float::transcendental`,
//! module docs, steps 1-8) on every lane of a vector register at once, written once over the
//! [`Lanes`] primitives, which the AVX2 lane emitter (`crate::pica::x64::lanes`: eight lanes of a ymm
//! register) and the NEON lane emitter (`crate::pica::a64::masm`'s `QV`, used by `crate::pica::a64::lanes`:
//! four lanes of a q register) implement.
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
//!   signed count of step 8), the step is one primitive.
//!
//! A "half" is the host's: four 64-bit lanes (AVX2) or two (NEON); both hosts have exactly two
//! halves per register.

use super::{flush, Arith, Src, INF, MANT, SIGN};
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

/// The integer lane primitives the EX2 and LG2 recipes need beyond
/// [`VecOps`](super::VecOps) and [`Arith`]. `d` may name any source unless a method says
/// otherwise. 32-bit operations work on every 32-bit lane, 64-bit ones on every 64-bit lane;
/// f64 operations on the f64 lanes a [`Arith::widen`] made.
pub trait Lanes: Arith {
    /// A table's base, as [`Self::gather32`] takes it.
    type Table: Copy;

    /// The read-only table `bytes` (little-endian) in the code's constant area, its base
    /// made ready for [`Self::gather32`] in the host's table register number `slot` (0 or 1;
    /// both stay valid until the recipe ends).
    fn table(&mut self, slot: usize, bytes: Vec<u8>) -> Self::Table;
    /// `d[k]` = the 32-bit word at byte `4 · idx[k] + disp` of `table`, in every lane.
    /// Clobbers `mask`, which must differ from `d` and `idx`.
    fn gather32(&mut self, d: Self::R, table: Self::Table, idx: Self::R, disp: i32, mask: Self::R);

    /// `d = a` (a register or a constant).
    fn mov(&mut self, d: Self::R, a: Src<Self::R>);
    /// `d = 0`.
    fn zero(&mut self, d: Self::R);
    /// `d = a | b` on integer data.
    fn or_int(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = !m & a` on integer data.
    fn andn_int(&mut self, d: Self::R, m: Self::R, a: Src<Self::R>);

    /// `d = a - b` in each 32-bit lane.
    fn sub32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a >> n` (logical) in each 32-bit lane, the counts `n` below 32.
    fn shr32_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d` = all-ones where `a > b` (signed) in each 32-bit lane.
    fn cmpgt32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d` = all-ones where `a == b` in each 32-bit lane.
    fn cmpeq32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = max(a, b)` (unsigned) in each 32-bit lane.
    fn max_u32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = (a · b) >> 32` (unsigned) in each 32-bit lane. May clobber `t`, which must differ
    /// from `d`, `a` and `b`.
    fn mulhi_u32(&mut self, d: Self::R, a: Self::R, b: Self::R, t: [Self::R; 3]);
    /// `d = min(a, b)` on f32 lanes (NaN lanes: unspecified).
    fn min_f32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = max(a, b)` on f32 lanes (NaN lanes: unspecified).
    fn max_f32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);

    /// `d = a · b` on f64 lanes.
    fn mul_f64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a - b` on f64 lanes.
    fn sub_f64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = floor(a)` on f64 lanes.
    fn floor_f64(&mut self, d: Self::R, a: Self::R);
    /// `d` = the f64 lanes of `a` (integral, within i32) as i32, in the form
    /// [`Self::join32`] takes.
    fn cvt_f64_i32(&mut self, d: Self::R, a: Self::R);
    /// `d` = the 32-bit lanes [`Self::cvt_f64_i32`] made of the low half (`lo`), then of the
    /// high half (`hi`).
    fn join32(&mut self, d: Self::R, lo: Self::R, hi: Self::R);

    /// `d` = the low (`hi` false) or high half of the 32-bit lanes of `a`, sign-extended
    /// (`signed`) or zero-extended to 64-bit lanes.
    fn widen32(&mut self, d: Self::R, a: Self::R, hi: bool, signed: bool);
    /// `d = a - b` in each 64-bit lane.
    fn sub64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d = a << n` in each 64-bit lane.
    fn shl64(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d` = all-ones where `a > b` (signed) in each 64-bit lane.
    fn cmpgt64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d` = all-ones where `a == b` in each 64-bit lane.
    fn cmpeq64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R>);
    /// `d` = the product of the low 32 bits of each 64-bit lane of `a` and `b`, unsigned, as
    /// 64 bits.
    fn mul_u32_64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// The same, signed.
    fn mul_i32_64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = the 64-bit products of the low (`hi` false) or high half of the 32-bit lanes of
    /// `a` and `b`, unsigned. May clobber `t`, which must differ from `d`, `a` and `b`.
    fn mul_wide_u32(&mut self, d: Self::R, a: Self::R, b: Self::R, hi: bool, t: [Self::R; 2]);
    /// `d = a << n` in each 64-bit lane for counts below 64; a lane whose count is 64 or
    /// more (or negative) gets an unspecified value (the recipes mask such lanes).
    fn shl64_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d = a >> n` (logical) in each 64-bit lane, counts as for [`Self::shl64_var`].
    fn shr64_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d = a << left` where `left >= 0`, `d = a >> right` where `right >= 0`, in each 64-bit
    /// lane, with `right = -left` and `|left| < 64` in every lane where `a` is not zero (a
    /// zero lane gives zero). May clobber `t`, which may be `left`; `d` must differ from `a`
    /// and `left`.
    fn shift64(&mut self, d: Self::R, a: Self::R, left: Self::R, right: Self::R, t: Self::R);
    /// Keep the low 32 bits of the 64-bit lanes of `a`, the low (`hi` false) or high half of
    /// the result [`Self::packed`] gives. May clobber `a` and `t`; every other register
    /// (the recipe's result register too) may be written before [`Self::packed`].
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
pub fn ex2<E: Lanes>(e: &mut E, mode: FloatMode, r: Regs<E::R>) {
    let (prec, min_exp, max_exp, nearest) = super::result_format(mode);
    let Regs { x, out, s } = r;
    let [b, c, p1, p2, p3, t0, t1, t2, t3, t4, r0, r1, r2, r3] = s;
    let (nan, n, f, rm, idx) = (t4, r0, r1, r2, r3);
    // Step 1.
    flush(e, mode, x, t0);
    e.mag_gt(nan, x, INF);
    // Step 2: |x| >= 256 saturates, so clamping first keeps x · 2^32 within ±2^40.
    e.min_f32(b, x, Src::K(F256));
    e.max_f32(b, b, Src::K(F256 | SIGN));
    for (hi, (nd, fd)) in [(false, (p1, p2)), (true, (p3, c))] {
        e.widen(t3, b, hi);
        e.mul_f64(t3, t3, Src::K64(TWO32_F64));
        e.floor_f64(t3, t3); // X = floor(x · 2^32), exact
        e.mul_f64(nd, t3, Src::K64(TWO_M32_F64));
        e.floor_f64(nd, nd); // n = floor(X / 2^32)
        e.mul_f64(fd, nd, Src::K64(TWO32_F64));
        e.sub_f64(fd, t3, Src::R(fd)); // X - n · 2^32, in [0, 2^32)
        e.sub_f64(fd, fd, Src::K64(TWO31_F64)); // into i32 range for the conversion
        e.cvt_f64_i32(nd, nd);
        e.cvt_f64_i32(fd, fd);
    }
    e.join32(n, p1, p3);
    e.join32(f, p2, c);
    e.xor_int(f, f, Src::K(SIGN)); // the fraction bits as u32

    // Steps 3-5: i, r and the polynomial.
    let [b1, b2, b3, b4] = EX2_POLY;
    let t = [t0, t1, t2];
    e.shr32(idx, f, 26);
    e.and_int(rm, f, Src::K(0x03FF_FFFF));
    e.mov(p1, Src::K(b4));
    for b in [b3, b2, b1] {
        e.mulhi_u32(p1, rm, p1, t);
        e.add32(p1, p1, Src::K(b));
    }
    e.mulhi_u32(p2, rm, p1, t); // p

    // Step 6: T = EX2_TABLE[i], then mant = min(T + (T · p >> 32), 2^32 - 1).
    let [table, _, _] = super::transcendental_tables();
    let table = e.table(0, table);
    e.gather32(p3, table, idx, 0, c);
    e.mulhi_u32(b, p3, p2, t);
    e.add32(b, b, Src::R(p3));
    e.max_u32(c, b, Src::R(p3));
    e.cmpeq32(c, c, Src::R(b)); // no carry out of the add
    e.xor_int(c, c, Src::K(u32::MAX));
    e.or_int(f, b, Src::R(c)); // mant

    // Step 7: round_scaled(+, mant, n - 31): the value is mant · 2^(n-31) with mant's top
    // bit at 31, so its exponent is n.
    let sh = 32 - prec;
    e.shr32(rm, f, sh); // kept
    if nearest {
        e.and_int(b, f, Src::K((1 << sh) - 1));
        e.and_int(c, rm, Src::K(1));
        e.add32(b, b, Src::R(c));
        e.cmpgt32(b, b, Src::K(1 << (sh - 1))); // round up: above half, or at half with kept odd
        e.sub32(rm, rm, Src::R(b));
        e.cmpeq32(b, rm, Src::K(1 << prec)); // carried into a new bit
        e.sub32(n, n, Src::R(b));
        e.and_int(b, b, Src::K(1));
        e.shr32_var(rm, rm, b);
    }
    e.shl32(rm, rm, 24 - prec);
    e.and_int(rm, rm, Src::K(MANT));
    e.add32(b, n, Src::K(127));
    e.shl32(b, b, 23);
    e.or_int(b, b, Src::R(rm));
    e.mov(c, Src::K(min_exp as u32));
    e.cmpgt32(c, c, Src::R(n)); // n < min_exp: +0
    e.andn_int(b, c, Src::R(b));
    e.cmpgt32(c, n, Src::K((max_exp - 1) as u32)); // n >= max_exp: +inf
    e.andn_int(b, c, Src::R(b));
    e.and_int(c, c, Src::K(INF));
    e.or_int(b, b, Src::R(c));
    e.andn_int(b, nan, Src::R(b));
    e.and_int(c, nan, Src::K(CANONICAL_NAN_BITS));
    e.or_int(out, b, Src::R(c));
}

/// LG2 of every lane of `r.x` into `r.out`: `picajit_interp::pica::float::transcendental`'s LG2
/// steps 1-8 (see the module docs for the 64-bit steps).
pub fn lg2<E: Lanes>(e: &mut E, mode: FloatMode, r: Regs<E::R>) {
    let (prec, _, _, nearest) = super::result_format(mode);
    let Regs { x, out, s } = r;
    let [b, c, r_tab, lo_tab, hi_tab, t0, t1, t2, t3, t4, spec_mask, spec_val, e32, m] = s;
    flush(e, mode, x, t0);
    // Step 1, decided now and applied last: NaN and negative lanes (a set sign bit after the
    // flush) give NaN, +0 gives -inf, +inf gives +inf.
    e.mag_gt(t4, x, INF);
    e.zero(t3);
    e.cmpgt32(t2, t3, Src::R(x));
    e.or_int(t4, t4, Src::R(t2));
    e.cmpeq32(t1, x, Src::R(t3));
    e.cmpeq32(t2, x, Src::K(INF));
    e.and_int(spec_val, t1, Src::K(INF | SIGN));
    e.andn_int(t0, t1, Src::K(INF));
    e.or_int(spec_val, spec_val, Src::R(t0));
    e.andn_int(spec_val, t4, Src::R(spec_val));
    e.and_int(t0, t4, Src::K(CANONICAL_NAN_BITS));
    e.or_int(spec_val, spec_val, Src::R(t0));
    e.or_int(spec_mask, t4, Src::R(t1));
    e.or_int(spec_mask, spec_mask, Src::R(t2));
    // Steps 2-3 on every lane: e, M, j and the table reads (R, and LG2_LOG's low and high
    // words, at 8·j and 8·j + 4).
    e.shr32(e32, x, 23);
    e.sub32(e32, e32, Src::K(127));
    e.and_int(b, x, Src::K(MANT));
    e.add32(t3, b, Src::K(1 << 16));
    e.shr32(t3, t3, 17); // j
    e.or_int(m, b, Src::K(1 << 23));
    let [_, recip, logs] = super::transcendental_tables();
    let recip = e.table(0, recip);
    let logs = e.table(1, logs);
    e.gather32(r_tab, recip, t3, 0, c);
    e.shl32(t4, t3, 1); // 2j: the word index of LG2_LOG[j]'s low half
    e.gather32(lo_tab, logs, t4, 0, c);
    e.gather32(hi_tab, logs, t4, 4, c);
    let one = Src::K64(1);
    let prec_m1 = Src::K64(u64::from(prec - 1));
    for hi in [false, true] {
        // Step 4: z = M·R - 2^39 (|z| <= 2^32 + 2^23).
        e.mul_wide_u32(t0, m, r_tab, hi, [b, c]);
        e.sub64(t0, t0, Src::K64(1 << 39));
        // Step 5: zq = z >> 9 fits an i32, as does every t: the low words carry them.
        e.shr64(t1, t0, 9);
        e.mov(t2, Src::K64(LG2_POLY[4] as i32 as u32 as u64));
        for k in (0..4).rev() {
            e.mul_i32_64(x, t1, t2);
            e.shr64(x, x, 30); // low word: (zq·t) >> 30, arithmetic (it fits)
            e.add32(t2, x, Src::K64(LG2_POLY[k] as i32 as u32 as u64));
        }
        // Step 6: lp = (z·t) >> 14 with z = zh·2^32 + zl, zl unsigned.
        e.zero(c);
        e.mul_u32_64(x, t0, t2); // zl · (t mod 2^32)
        e.shl64(b, t2, 32);
        e.cmpgt64(b, c, Src::R(b)); // t < 0
        e.shl64(t1, t0, 32);
        e.and_int(t1, t1, Src::R(b));
        e.sub64(x, x, Src::R(t1)); // zl · t
        e.shr64(t1, t0, 32);
        e.mul_i32_64(t1, t1, t2);
        e.shl64(t1, t1, 32);
        e.add64(x, x, Src::R(t1)); // z · t
        e.cmpgt64(b, c, Src::R(x));
        e.shr64(x, x, 14);
        e.shl64(b, b, 50);
        e.or_int(x, x, Src::R(b)); // lp

        // Step 7: s = (e << 55) + LG2_LOG[j] + lp.
        e.widen32(b, e32, hi, true);
        e.shl64(b, b, 55);
        e.add64(x, x, Src::R(b));
        e.widen32(t1, lo_tab, hi, false);
        e.widen32(t2, hi_tab, hi, false);
        e.shl64(t2, t2, 32);
        e.or_int(t1, t1, Src::R(t2));
        e.add64(x, x, Src::R(t1));
        // Step 8: round_scaled(s < 0, |s|, -55).
        e.cmpgt64(t4, c, Src::R(x)); // sign
        e.xor_int(x, x, Src::R(t4));
        e.sub64(x, x, Src::R(t4)); // a = |s|

        // E = floor(log2 a) from the exponents of a >> 52 and a mod 2^52 as f64 (exact).
        e.and_int(t1, x, Src::K64((1 << 52) - 1));
        e.or_int(t1, t1, Src::K64(MAGIC52));
        e.sub_f64(t1, t1, Src::K64(MAGIC52));
        e.shr64(t1, t1, 52);
        e.shr64(t2, x, 52);
        e.or_int(t2, t2, Src::K64(MAGIC52));
        e.sub_f64(t2, t2, Src::K64(MAGIC52));
        e.shr64(t2, t2, 52);
        e.cmpgt64(t0, t2, Src::R(c)); // the high part is not zero
        e.add64(t2, t2, Src::K64(52));
        e.andn_int(t1, t0, Src::R(t1));
        e.and_int(t2, t0, Src::R(t2));
        e.or_int(t1, t1, Src::R(t2));
        e.sub64(t1, t1, Src::K64(1023)); // E

        // kept = a >> (E + 1 - P), or a << (P - 1 - E).
        e.sub64(t2, t1, prec_m1); // sh
        e.mov(t0, prec_m1);
        e.sub64(t0, t0, Src::R(t1));
        e.shift64(b, x, t0, t2, t0); // kept
        if nearest {
            // Lanes with sh <= 0 do not round: c masks what their shifts give.
            e.cmpgt64(c, t2, Src::R(c)); // sh > 0 (c is zero before this)
            e.mov(t0, one);
            e.shl64_var(t0, t0, t2);
            e.sub64(t0, t0, one);
            e.and_int(t0, t0, Src::R(c));
            e.and_int(t0, t0, Src::R(x)); // rem
            e.and_int(t3, b, one);
            e.add64(t0, t0, Src::R(t3));
            e.sub64(t3, t2, one);
            e.mov(out, one);
            e.shl64_var(t3, out, t3); // half
            e.and_int(t3, t3, Src::R(c));
            e.andn_int(c, c, Src::K64(i64::MAX as u64));
            e.or_int(t3, t3, Src::R(c)); // no rounding when sh <= 0
            e.cmpgt64(t0, t0, Src::R(t3)); // round up
            e.sub64(b, b, Src::R(t0));
            e.cmpeq64(t0, b, Src::K64(1 << prec)); // carried into a new bit
            e.sub64(t1, t1, Src::R(t0));
            e.and_int(t0, t0, one);
            e.shr64_var(b, b, t0);
        }
        e.add64(t1, t1, Src::K64((127 - 55) as u64));
        e.shl64(t1, t1, 23);
        e.shl64(b, b, 24 - prec);
        e.and_int(b, b, Src::K64(u64::from(MANT)));
        e.or_int(t1, t1, Src::R(b));
        e.and_int(t4, t4, Src::K64(u64::from(SIGN)));
        e.or_int(t1, t1, Src::R(t4));
        e.zero(t3);
        e.cmpeq64(t0, x, Src::R(t3)); // s = 0: +0
        e.andn_int(t1, t0, Src::R(t1));
        e.pack_half(hi, t1, t0);
    }
    e.packed(out);
    e.andn_int(out, spec_mask, Src::R(out));
    e.and_int(t0, spec_mask, Src::R(spec_val));
    e.or_int(out, out, Src::R(t0));
}
