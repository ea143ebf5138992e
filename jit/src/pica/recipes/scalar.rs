//! The float model's integer-only EX2 and LG2 algorithms
//! (`picajit_interp::pica::float::transcendental`, steps 1-8) and its `round_scaled`, written once
//! over a few general-purpose-register primitives, the [`Gprs`] trait, which the x86-64 and
//! AArch64 masms implement (`crate::pica::x64::masm`, `crate::pica::a64::masm`).
//!
//! The values are 64-bit integers; 32-bit operations say so and zero-extend their result (as
//! both hosts do). Registers are the host's [`Gprs::R`] scratch registers, named by index so
//! that the algorithm, not the host, decides which value lives where.

use super::{CANONICAL_NAN_BITS, INF, SIGN};
use picajit_interp::pica::float::transcendental::{EX2_POLY, LG2_POLY};
use picajit_interp::pica::float::FloatMode;

/// Second operand of a primitive: a register or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<G> {
    /// A register.
    R(G),
    /// A constant (sign-extended to the operation's width).
    I(i64),
}

/// Conditions after [`Gprs::cmp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// Equal.
    Eq,
    /// Unsigned lower.
    Lo,
    /// Unsigned higher.
    Hi,
    /// Signed less than.
    Lt,
    /// Signed greater or equal.
    Ge,
}

/// General-purpose-register primitives. `d` may name a source unless a method says otherwise.
/// Nothing but [`Gprs::cmp`] changes the flags a [`Gprs::jcc`] reads.
pub trait Gprs {
    /// A general-purpose register.
    type G: Copy + PartialEq;
    /// A vector register (lane 0 holds the f32 operand and result).
    type V: Copy;
    /// A code label.
    type Label: Copy;
    /// The scratch registers the algorithms use; index 1 is the register a variable shift
    /// takes its count from (x86-64: rcx).
    const R: [Self::G; 8];

    /// A new unbound label.
    fn label(&mut self) -> Self::Label;
    /// Bind `l` here.
    fn bind(&mut self, l: Self::Label);
    /// Jump to `l`.
    fn jump(&mut self, l: Self::Label);
    /// Jump to `l` if `c` holds after the last [`Self::cmp`].
    fn jcc(&mut self, c: Cond, l: Self::Label);
    /// Compare `a` with `b` (64-bit, or the low 32 bits when `wide` is false).
    fn cmp(&mut self, wide: bool, a: Self::G, b: Op<Self::G>);
    /// A read-only table of the little-endian `bytes` in the code's constant area.
    fn table(&mut self, bytes: Vec<u8>) -> Self::Label;

    /// `d` = the bits of lane 0 of `v`.
    fn lane0_to_gpr(&mut self, d: Self::G, v: Self::V);
    /// Lane 0 of `v` = the low 32 bits of `s`.
    fn gpr_to_lane0(&mut self, v: Self::V, s: Self::G);
    /// `d = k`.
    fn imm(&mut self, d: Self::G, k: i64);
    /// `d = a`.
    fn mov(&mut self, d: Self::G, a: Self::G);
    /// `d = a & 0xFFFF_FFFF`.
    fn zext32(&mut self, d: Self::G, a: Self::G);
    /// `d = a + b`.
    fn add(&mut self, d: Self::G, a: Self::G, b: Op<Self::G>);
    /// `d = a · b` (the low 64 bits).
    fn mul(&mut self, d: Self::G, a: Self::G, b: Self::G);
    /// `d = -a`.
    fn neg(&mut self, d: Self::G, a: Self::G);
    /// `d = (a & k)` on the low 32 bits; `k` a contiguous run of ones.
    fn and32(&mut self, d: Self::G, a: Self::G, k: u32);
    /// `d = a | b` on the low 32 bits (`b` a constant: one contiguous run of ones).
    fn or32(&mut self, d: Self::G, a: Self::G, b: Op<Self::G>);
    /// `d` = `width` bits of the low 32 bits of `a` from bit `lsb`.
    fn ubfx32(&mut self, d: Self::G, a: Self::G, lsb: u32, width: u32);
    /// `d = a << n`.
    fn shl(&mut self, d: Self::G, a: Self::G, n: u32);
    /// `d = a >> n` (logical).
    fn shr(&mut self, d: Self::G, a: Self::G, n: u32);
    /// `d = a >> n` (arithmetic).
    fn sar(&mut self, d: Self::G, a: Self::G, n: u32);
    /// `d = d << R[1]` (the count below 64); `d` must not be `R[1]`.
    fn shl_var(&mut self, d: Self::G);
    /// `d = d >> R[1]` (arithmetic, the count below 64); `d` must not be `R[1]`.
    fn sar_var(&mut self, d: Self::G);
    /// `d` = the number of leading zero bits of the non-zero `a` and `h = 63 - d` (the index
    /// of its highest set bit); `d`, `h` and `a` differ.
    fn clz(&mut self, d: Self::G, h: Self::G, a: Self::G);
    /// Set the flags for [`Cond::Eq`] to mean bit 0 of `a` is clear.
    fn test1(&mut self, a: Self::G);
    /// `d = min(d, k)`, unsigned.
    fn min_u(&mut self, d: Self::G, k: Self::G);
    /// `d = table32[idx]` (zero-extended).
    fn load32(&mut self, d: Self::G, table: Self::Label, idx: Self::G);
    /// `d += table64[idx]`.
    fn add_load64(&mut self, d: Self::G, table: Self::Label, idx: Self::G);
}

/// `d = -d` when the 32-bit value `s` is negative.
fn neg_if_negative<E: Gprs>(e: &mut E, d: E::G, s: E::G) {
    let pos = e.label();
    e.cmp(false, s, Op::I(0));
    e.jcc(Cond::Ge, pos);
    e.neg(d, d);
    e.bind(pos);
}

/// `float::round_scaled` of sign `R[7]` (0 or `SIGN`), significand `R[5]` (u64) and exponent
/// `R[6]` (i64) in the mode's format: the result bits in `R[0]`, then a jump to `end`.
/// Clobbers `R[1]`-`R[4]`.
pub fn round_scaled<E: Gprs>(e: &mut E, mode: FloatMode, end: E::Label) {
    let [x0, x1, x2, x3, x4, sig, exp, sign] = E::R;
    let (prec, min_exp, max_exp, nearest) = super::result_format(mode);
    let (zero, inf) = (e.label(), e.label());
    e.cmp(true, sig, Op::I(0));
    e.jcc(Cond::Eq, zero);
    e.clz(x1, x4, sig);
    e.mov(x2, sig);
    e.shl_var(x2); // top: the leading one at bit 63
    e.add(x0, exp, Op::R(x4)); // e: the value is in [2^e, 2^(e+1))
    e.shr(x3, x2, 64 - prec); // kept
    if nearest {
        let (up, done) = (e.label(), e.label());
        e.shl(x4, x2, prec); // rem
        e.imm(x1, i64::MIN);
        e.cmp(true, x4, Op::R(x1));
        e.jcc(Cond::Hi, up);
        e.jcc(Cond::Lo, done);
        e.test1(x3);
        e.jcc(Cond::Eq, done); // a tie, kept even
        e.bind(up);
        e.add(x3, x3, Op::I(1));
        e.cmp(true, x3, Op::I(1 << prec));
        e.jcc(Cond::Lo, done); // no carry out of the kept bits
        e.shr(x3, x3, 1);
        e.add(x0, x0, Op::I(1));
        e.bind(done);
    }
    e.cmp(true, x0, Op::I(max_exp.into()));
    e.jcc(Cond::Ge, inf);
    e.cmp(true, x0, Op::I(min_exp.into()));
    e.jcc(Cond::Lt, zero);
    e.add(x0, x0, Op::I(127));
    e.shl(x0, x0, 23);
    if prec < 24 {
        e.shl(x3, x3, 24 - prec);
    }
    e.and32(x3, x3, 0x7F_FFFF);
    e.or32(x0, x0, Op::R(x3));
    e.or32(x0, x0, Op::R(sign));
    e.jump(end);
    e.bind(inf);
    e.imm(x0, INF as i64);
    e.or32(x0, x0, Op::R(sign));
    e.jump(end);
    e.bind(zero);
    e.imm(x0, 0);
    e.jump(end);
}

/// EX2 of the flushed lane 0 of `v` into lane 0: the integer-only algorithm of
/// `picajit_interp::pica::float::transcendental` step by step. Clobbers every [`Gprs::R`].
pub fn ex2<E: Gprs>(e: &mut E, mode: FloatMode, v: E::V) {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = E::R;
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
    e.lane0_to_gpr(x0, v);
    // Step 1: NaN.
    e.and32(x1, x0, 0x7FFF_FFFF);
    e.cmp(false, x1, Op::I(INF as i64));
    e.jcc(Cond::Hi, nan);
    // Step 2: X = floor(x · 2^32), saturated.
    e.ubfx32(x1, x0, 23, 8);
    e.cmp(false, x1, Op::I(0));
    e.jcc(Cond::Eq, zero_x);
    e.cmp(false, x1, Op::I(135));
    e.jcc(Cond::Ge, sat);
    e.and32(x2, x0, 0x7F_FFFF);
    e.or32(x2, x2, Op::I(0x80_0000));
    neg_if_negative(e, x2, x0);
    e.cmp(false, x1, Op::I(118));
    e.jcc(Cond::Lo, right);
    e.add(x1, x1, Op::I(-118));
    e.shl_var(x2);
    e.jump(have_x);
    e.bind(right);
    e.add(x1, x1, Op::I(-118));
    e.neg(x1, x1);
    e.imm(x3, 63);
    e.min_u(x1, x3);
    e.sar_var(x2);
    e.jump(have_x);
    e.bind(sat);
    e.imm(x2, 1 << 40);
    neg_if_negative(e, x2, x0);
    e.jump(have_x);
    e.bind(zero_x);
    e.imm(x2, 0);
    e.bind(have_x);
    // Steps 3-4: n, i, r.
    e.sar(x6, x2, 32); // n
    e.zext32(x0, x2);
    e.shr(x1, x0, 26); // i
    e.and32(x0, x0, 0x03FF_FFFF); // r

    // Step 5: the polynomial.
    e.imm(x3, b4 as i64);
    for b in [b3, b2, b1] {
        e.mul(x3, x3, x0);
        e.shr(x3, x3, 32);
        e.add(x3, x3, Op::I(b as i64));
    }
    e.mul(x3, x3, x0);
    e.shr(x3, x3, 32); // p

    // Step 6: the mantissa.
    e.load32(x4, table, x1); // T
    e.mul(x5, x4, x3);
    e.shr(x5, x5, 32);
    e.add(x5, x5, Op::R(x4));
    e.imm(x3, 0xFFFF_FFFF);
    e.min_u(x5, x3);
    // Step 7.
    e.add(x6, x6, Op::I(-31));
    e.imm(x7, 0);
    round_scaled(e, mode, back);
    e.bind(nan);
    e.imm(x0, CANONICAL_NAN_BITS as i64);
    e.bind(back);
    e.gpr_to_lane0(v, x0);
}

/// LG2 of the flushed lane 0 of `v` into lane 0: the integer-only algorithm of
/// `picajit_interp::pica::float::transcendental` step by step. Clobbers every [`Gprs::R`].
pub fn lg2<E: Gprs>(e: &mut E, mode: FloatMode, v: E::V) {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = E::R;
    let [_, recip, logs] = super::transcendental_tables();
    let recip = e.table(recip);
    let logs = e.table(logs);
    let (nan, pinf, ninf, pos, back) = (e.label(), e.label(), e.label(), e.label(), e.label());
    e.lane0_to_gpr(x0, v);
    // Step 1 (the input is flushed, so a set sign bit means a negative non-zero value).
    e.cmp(false, x0, Op::I(0));
    e.jcc(Cond::Lt, nan);
    e.jcc(Cond::Eq, ninf);
    e.cmp(false, x0, Op::I(INF as i64));
    e.jcc(Cond::Hi, nan);
    e.jcc(Cond::Eq, pinf);
    // Step 2.
    e.ubfx32(x1, x0, 23, 8);
    e.add(x1, x1, Op::I(-127)); // e
    e.and32(x2, x0, 0x7F_FFFF); // F

    // Step 3.
    e.add(x3, x2, Op::I(1 << 16));
    e.shr(x3, x3, 17); // j
    e.or32(x4, x2, Op::I(0x80_0000)); // M
    e.load32(x5, recip, x3); // R

    // Step 4.
    e.mul(x4, x4, x5);
    e.add(x4, x4, Op::I(-(1 << 39))); // z

    // Step 5.
    e.sar(x6, x4, 9); // zq
    e.imm(x0, LG2_POLY[4]);
    for k in (0..4).rev() {
        e.mul(x0, x0, x6);
        e.sar(x0, x0, 30);
        e.add(x0, x0, Op::I(LG2_POLY[k]));
    }
    // Step 6.
    e.mul(x0, x0, x4);
    e.sar(x0, x0, 14); // lp

    // Step 7.
    e.shl(x1, x1, 55);
    e.add(x0, x0, Op::R(x1));
    e.add_load64(x0, logs, x3); // s

    // Step 8: sign and magnitude.
    e.imm(x7, 0);
    e.mov(x5, x0);
    e.cmp(true, x0, Op::I(0));
    e.jcc(Cond::Ge, pos);
    e.neg(x5, x5);
    e.imm(x7, SIGN as i64);
    e.bind(pos);
    e.imm(x6, -55);
    round_scaled(e, mode, back);
    e.bind(nan);
    e.imm(x0, CANONICAL_NAN_BITS as i64);
    e.jump(back);
    e.bind(pinf);
    e.imm(x0, INF as i64);
    e.jump(back);
    e.bind(ninf);
    e.imm(x0, (INF | SIGN) as i64);
    e.bind(back);
    e.gpr_to_lane0(v, x0);
}
