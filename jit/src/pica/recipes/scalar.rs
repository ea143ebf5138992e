//! The float model's integer-only EX2 and LG2 algorithms
//! (`picajit_interp::pica::float::transcendental`, steps 1-8) and its `round_scaled`, written once
//! over the host's integer macro-assembler ([`IntMasm`]); the x86-64 and AArch64 masms call
//! them with the f32 bits moved out of and back into the vector register
//! (`crate::pica::x64::masm`, `crate::pica::a64::masm`).
//!
//! The values are 64-bit integers; 32-bit operations say so. Registers are eight scratch
//! registers the masm passes in, named by index so that the algorithm, not the host, decides
//! which value lives where; index 1 holds the count of variable shifts (on x86-64 it must be
//! rcx).

use super::{CANONICAL_NAN_BITS, INF, SIGN};
use crate::host::int::RegImm::{I, R};
use crate::host::int::Size::{S32, S64};
use crate::host::int::{Alu, Cond, IntMasm, Shift};
use picajit_interp::pica::float::transcendental::{EX2_POLY, LG2_POLY};
use picajit_interp::pica::float::FloatMode;

/// `d = -d` when the 32-bit value `s` is negative.
fn neg_if_negative<E: IntMasm>(e: &mut E, d: E::Reg, s: E::Reg) {
    let pos = e.label();
    e.cmp(S32, s, I(0));
    e.jcc(Cond::Ge, pos);
    e.neg(S64, d, d);
    e.bind(pos);
}

/// `float::round_scaled` of sign `r[7]` (0 or `SIGN`), significand `r[5]` (u64) and exponent
/// `r[6]` (i64) in the mode's format: the result bits in `r[0]`, then a jump to `end`.
/// Clobbers `r[1]`-`r[4]`.
pub fn round_scaled<E: IntMasm>(e: &mut E, mode: FloatMode, r: [E::Reg; 8], end: E::Label) {
    let [x0, x1, x2, x3, x4, sig, exp, sign] = r;
    let (prec, min_exp, max_exp, nearest) = super::result_format(mode);
    let (zero, inf) = (e.label(), e.label());
    e.cmp(S64, sig, I(0));
    e.jcc(Cond::Eq, zero);
    e.clz(x1, x4, sig);
    e.mov(S64, x2, sig);
    e.shift_var(Shift::Shl, S64, x2, x2, x1); // top: the leading one at bit 63
    e.alu(Alu::Add, S64, x0, exp, R(x4)); // e: the value is in [2^e, 2^(e+1))
    e.shift(Shift::Shr, S64, x3, x2, 64 - prec); // kept
    if nearest {
        let (up, done) = (e.label(), e.label());
        e.shift(Shift::Shl, S64, x4, x2, prec); // rem
        e.mov_imm(x1, i64::MIN);
        e.cmp(S64, x4, R(x1));
        e.jcc(Cond::Hi, up);
        e.jcc(Cond::Lo, done);
        e.test_bit(x3, 0);
        e.jcc(Cond::Eq, done); // a tie, kept even
        e.bind(up);
        e.alu(Alu::Add, S64, x3, x3, I(1));
        e.cmp(S64, x3, I(1 << prec));
        e.jcc(Cond::Lo, done); // no carry out of the kept bits
        e.shift(Shift::Shr, S64, x3, x3, 1);
        e.alu(Alu::Add, S64, x0, x0, I(1));
        e.bind(done);
    }
    e.cmp(S64, x0, I(max_exp.into()));
    e.jcc(Cond::Ge, inf);
    e.cmp(S64, x0, I(min_exp.into()));
    e.jcc(Cond::Lt, zero);
    e.alu(Alu::Add, S64, x0, x0, I(127));
    e.shift(Shift::Shl, S64, x0, x0, 23);
    if prec < 24 {
        e.shift(Shift::Shl, S64, x3, x3, 24 - prec);
    }
    e.alu(Alu::And, S32, x3, x3, I(0x7F_FFFF));
    e.alu(Alu::Or, S32, x0, x0, R(x3));
    e.alu(Alu::Or, S32, x0, x0, R(sign));
    e.jump(end);
    e.bind(inf);
    e.mov_imm(x0, INF as i64);
    e.alu(Alu::Or, S32, x0, x0, R(sign));
    e.jump(end);
    e.bind(zero);
    e.mov_imm(x0, 0);
    e.jump(end);
}

/// EX2 of the flushed f32 bits in `r[0]` into `r[0]`: the integer-only algorithm of
/// `picajit_interp::pica::float::transcendental` step by step. Clobbers every register of `r`.
pub fn ex2<E: IntMasm>(e: &mut E, mode: FloatMode, r: [E::Reg; 8]) {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = r;
    let [table, _, _] = super::transcendental_tables();
    let table = e.table(table);
    let [b1, b2, b3, b4] = EX2_POLY;
    let (nan, sat, zero_x, right, have_x, back) = (
        e.label(),
        e.label(),
        e.label(),
        e.label(),
        e.label(),
        e.label(),
    );
    // Step 1: NaN.
    e.alu(Alu::And, S32, x1, x0, I(0x7FFF_FFFF));
    e.cmp(S32, x1, I(INF as i64));
    e.jcc(Cond::Hi, nan);
    // Step 2: X = floor(x · 2^32), saturated.
    e.ubfx(S32, x1, x0, 23, 8);
    e.cmp(S32, x1, I(0));
    e.jcc(Cond::Eq, zero_x);
    e.cmp(S32, x1, I(135));
    e.jcc(Cond::Ge, sat);
    e.alu(Alu::And, S32, x2, x0, I(0x7F_FFFF));
    e.alu(Alu::Or, S32, x2, x2, I(0x80_0000));
    neg_if_negative(e, x2, x0);
    e.cmp(S32, x1, I(118));
    e.jcc(Cond::Lo, right);
    e.alu(Alu::Add, S64, x1, x1, I(-118));
    e.shift_var(Shift::Shl, S64, x2, x2, x1);
    e.jump(have_x);
    e.bind(right);
    e.alu(Alu::Add, S64, x1, x1, I(-118));
    e.neg(S64, x1, x1);
    e.mov_imm(x3, 63);
    e.umin(S64, x1, x1, x3);
    e.shift_var(Shift::Sar, S64, x2, x2, x1);
    e.jump(have_x);
    e.bind(sat);
    e.mov_imm(x2, 1 << 40);
    neg_if_negative(e, x2, x0);
    e.jump(have_x);
    e.bind(zero_x);
    e.mov_imm(x2, 0);
    e.bind(have_x);
    // Steps 3-4: n, i, r.
    e.shift(Shift::Sar, S64, x6, x2, 32); // n
    e.mov(S32, x0, x2);
    e.shift(Shift::Shr, S64, x1, x0, 26); // i
    e.alu(Alu::And, S32, x0, x0, I(0x03FF_FFFF)); // r

    // Step 5: the polynomial.
    e.mov_imm(x3, b4 as i64);
    for b in [b3, b2, b1] {
        e.alu(Alu::Mul, S64, x3, x3, R(x0));
        e.shift(Shift::Shr, S64, x3, x3, 32);
        e.alu(Alu::Add, S64, x3, x3, I(b as i64));
    }
    e.alu(Alu::Mul, S64, x3, x3, R(x0));
    e.shift(Shift::Shr, S64, x3, x3, 32); // p

    // Step 6: the mantissa.
    e.load_table(S32, x4, table, x1); // T
    e.alu(Alu::Mul, S64, x5, x4, R(x3));
    e.shift(Shift::Shr, S64, x5, x5, 32);
    e.alu(Alu::Add, S64, x5, x5, R(x4));
    e.mov_imm(x3, 0xFFFF_FFFF);
    e.umin(S64, x5, x5, x3);
    // Step 7.
    e.alu(Alu::Add, S64, x6, x6, I(-31));
    e.mov_imm(x7, 0);
    round_scaled(e, mode, r, back);
    e.bind(nan);
    e.mov_imm(x0, CANONICAL_NAN_BITS as i64);
    e.bind(back);
}

/// LG2 of the flushed f32 bits in `r[0]` into `r[0]`: the integer-only algorithm of
/// `picajit_interp::pica::float::transcendental` step by step. Clobbers every register of `r`.
pub fn lg2<E: IntMasm>(e: &mut E, mode: FloatMode, r: [E::Reg; 8]) {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = r;
    let [_, recip, logs] = super::transcendental_tables();
    let recip = e.table(recip);
    let logs = e.table(logs);
    let (nan, pinf, ninf, pos, back) = (e.label(), e.label(), e.label(), e.label(), e.label());
    // Step 1 (the input is flushed, so a set sign bit means a negative non-zero value).
    e.cmp(S32, x0, I(0));
    e.jcc(Cond::Lt, nan);
    e.jcc(Cond::Eq, ninf);
    e.cmp(S32, x0, I(INF as i64));
    e.jcc(Cond::Hi, nan);
    e.jcc(Cond::Eq, pinf);
    // Step 2.
    e.ubfx(S32, x1, x0, 23, 8);
    e.alu(Alu::Add, S64, x1, x1, I(-127)); // e
    e.alu(Alu::And, S32, x2, x0, I(0x7F_FFFF)); // F

    // Step 3.
    e.alu(Alu::Add, S64, x3, x2, I(1 << 16));
    e.shift(Shift::Shr, S64, x3, x3, 17); // j
    e.alu(Alu::Or, S32, x4, x2, I(0x80_0000)); // M
    e.load_table(S32, x5, recip, x3); // R

    // Step 4.
    e.alu(Alu::Mul, S64, x4, x4, R(x5));
    e.alu(Alu::Add, S64, x4, x4, I(-(1 << 39))); // z

    // Step 5.
    e.shift(Shift::Sar, S64, x6, x4, 9); // zq
    e.mov_imm(x0, LG2_POLY[4]);
    for k in (0..4).rev() {
        e.alu(Alu::Mul, S64, x0, x0, R(x6));
        e.shift(Shift::Sar, S64, x0, x0, 30);
        e.alu(Alu::Add, S64, x0, x0, I(LG2_POLY[k]));
    }
    // Step 6.
    e.alu(Alu::Mul, S64, x0, x0, R(x4));
    e.shift(Shift::Sar, S64, x0, x0, 14); // lp

    // Step 7.
    e.shift(Shift::Shl, S64, x1, x1, 55);
    e.alu(Alu::Add, S64, x0, x0, R(x1));
    e.add_table(S64, x0, logs, x3); // s

    // Step 8: sign and magnitude.
    e.mov_imm(x7, 0);
    e.mov(S64, x5, x0);
    e.cmp(S64, x0, I(0));
    e.jcc(Cond::Ge, pos);
    e.neg(S64, x5, x5);
    e.mov_imm(x7, SIGN as i64);
    e.bind(pos);
    e.mov_imm(x6, -55);
    round_scaled(e, mode, r, back);
    e.bind(nan);
    e.mov_imm(x0, CANONICAL_NAN_BITS as i64);
    e.jump(back);
    e.bind(pinf);
    e.mov_imm(x0, INF as i64);
    e.jump(back);
    e.bind(ninf);
    e.mov_imm(x0, (INF | SIGN) as i64);
    e.bind(back);
}
