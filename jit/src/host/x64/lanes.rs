//! The x86-64 [`Lanes`]: one type, [`X64Lanes`], for both register widths.
//!
//! * [`Y256`]: eight 32-bit lanes of a ymm register, every form VEX.256 (AVX2, FMA); constants
//!   are 32-byte pool entries, or [`Asm::hot32`] slots through `HOT_BASE` (see
//!   [`crate::host::x64::vex`]).
//! * [`X128`]: four lanes of an xmm register, for hosts with SSE4.1 at least. Where AVX is
//!   allowed, the commutative float-domain operations, compares and multiplies take their
//!   VEX three-operand forms (those without an immediate); every other operation is the SSE
//!   form, with a copy where the destination is not the first source. Operations SSE has no
//!   form for (variable shifts, gathers, fused multiply-add, four-operand blends) are VEX.128
//!   and need AVX2 and FMA.
//!
//! Table bases (for [`Lanes::gather32`]) go to rax (slot 0) and rcx (slot 1); nothing else
//! here touches a general-purpose register but the ones a method names.

use super::asm::{Asm, Mem, XOp};
use super::regs::{Gpr, Xmm, RAX, RCX};
use super::vex::{pred, YOp, Yasm, Ymm};
use crate::host::lanes::bits::{INF, QNAN64, SIGN};
use crate::host::lanes::{Lanes, Round, Src};
use std::marker::PhantomData;

/// A register width of [`X64Lanes`].
pub trait Width {
    /// The register type.
    type R: Copy + PartialEq + std::fmt::Debug;
    /// 256 bits (else 128).
    const WIDE: bool;
    /// The register's number.
    fn n(r: Self::R) -> u8;
}

/// 128-bit xmm registers.
#[derive(Clone, Copy, Debug)]
pub struct X128;

/// 256-bit ymm registers.
#[derive(Clone, Copy, Debug)]
pub struct Y256;

impl Width for X128 {
    type R = Xmm;
    const WIDE: bool = false;
    fn n(r: Xmm) -> u8 {
        r.0
    }
}

impl Width for Y256 {
    type R = Ymm;
    const WIDE: bool = true;
    fn n(r: Ymm) -> u8 {
        r.0
    }
}

/// The x86-64 lane operations of width `W` over an [`Asm`].
pub struct X64Lanes<'a, W: Width> {
    a: &'a mut Asm,
    /// VEX encodings allowed (always for [`Y256`]).
    vex: bool,
    w: PhantomData<W>,
}

impl<'a> X64Lanes<'a, X128> {
    /// The 128-bit form; `vex`: AVX may be used.
    pub fn xmm(a: &'a mut Asm, vex: bool) -> Self {
        X64Lanes {
            a,
            vex,
            w: PhantomData,
        }
    }
}

impl<'a> X64Lanes<'a, Y256> {
    /// The 256-bit form.
    pub fn ymm(a: &'a mut Asm) -> Self {
        X64Lanes {
            a,
            vex: true,
            w: PhantomData,
        }
    }
}

/// Two-source operations of the 128-bit form that have a VEX form (see [`X64Lanes::v3`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum V3 {
    And,
    Or,
    AndN,
    Gt,
    Mul,
    Max,
    Min,
    MulPd,
    DivPs,
    DivPd,
}

type S<W> = Src<<W as Width>::R, Mem>;

fn y<W: Width>(r: W::R) -> Ymm {
    Ymm(W::n(r))
}

fn x<W: Width>(r: W::R) -> Xmm {
    Xmm(W::n(r))
}

impl<W: Width> X64Lanes<'_, W> {
    fn y(&mut self) -> Yasm<'_> {
        Yasm::new(self.a)
    }

    /// The second source of a 256-bit form.
    fn yop(&mut self, b: S<W>) -> YOp {
        match b {
            Src::R(r) => YOp::Reg(y::<W>(r)),
            Src::K(k) => YOp::Mem(self.y().splat(k)),
            Src::K64(k) => YOp::Mem(self.y().splat64(k)),
            Src::M(m) => YOp::Mem(m),
        }
    }

    /// The second source of a 128-bit form.
    fn xop(&mut self, b: S<W>) -> XOp {
        match b {
            Src::R(r) => XOp::Reg(x::<W>(r)),
            Src::K(k) => XOp::Mem(self.a.splat(k)),
            Src::K64(k) => XOp::Mem(self.a.splat64(k)),
            Src::M(m) => XOp::Mem(m),
        }
    }

    /// A three-operand VEX.256 form with a general second source.
    fn rrr(&mut self, f: fn(&mut Yasm<'_>, Ymm, Ymm, YOp), d: W::R, a: W::R, b: S<W>) {
        let b = self.yop(b);
        f(&mut self.y(), y::<W>(d), y::<W>(a), b);
    }

    /// `d = a op b` (128 bits): the VEX form with AVX (only forms without an immediate:
    /// dynasm mis-encodes the VEX imm8 ones), else a copy and the SSE form.
    fn v3(&mut self, op: V3, d: W::R, a: W::R, b: XOp) {
        let (d, a) = (x::<W>(d), x::<W>(a));
        let m = &mut *self.a;
        if self.vex {
            match op {
                V3::And => m.vandps(d, a, b),
                V3::Or => m.vorps(d, a, b),
                V3::AndN => m.vandnps(d, a, b),
                V3::Gt => m.vpcmpgtd(d, a, b),
                V3::Mul => m.vmulps(d, a, b),
                V3::Max => m.vmaxps(d, a, b),
                V3::Min => m.vminps(d, a, b),
                V3::MulPd => m.vmulpd(d, a, b),
                V3::DivPs => m.vdivps(d, a, b),
                V3::DivPd => m.vdivpd(d, a, b),
            }
        } else {
            debug_assert!(
                d == a || b != XOp::Reg(d),
                "SSE form would clobber the source"
            );
            if d != a {
                m.movaps(d, a);
            }
            match op {
                V3::And => m.andps(d, b),
                V3::Or => m.orps(d, b),
                V3::AndN => m.andnps(d, b),
                V3::Gt => m.pcmpgtd(d, b),
                V3::Mul => m.mulps(d, b),
                V3::Max => m.maxps(d, b),
                V3::Min => m.minps(d, b),
                V3::MulPd => m.mulpd(d, b),
                V3::DivPs => m.divps(d, b),
                V3::DivPd => m.divpd(d, b),
            }
        }
    }

    /// A commutative 128-bit operation with a VEX form.
    fn c3(&mut self, op: V3, d: W::R, a: W::R, b: S<W>) {
        match b {
            Src::R(r) if r == d && !self.vex => self.v3(op, d, d, XOp::Reg(x::<W>(a))),
            _ => {
                let b = self.xop(b);
                self.v3(op, d, a, b)
            }
        }
    }

    /// A two-operand SSE form `f` as `d = a op b`; `commutes` allows `d = b op a` when `d`
    /// is `b`.
    fn sse(&mut self, f: fn(&mut Asm, Xmm, XOp), d: W::R, a: W::R, b: S<W>, commutes: bool) {
        let b = self.xop(b);
        let (d, a) = (x::<W>(d), x::<W>(a));
        if d != a && b == XOp::Reg(d) {
            assert!(commutes, "SSE form would clobber the source");
            f(self.a, d, XOp::Reg(a));
            return;
        }
        if d != a {
            self.a.movaps(d, a);
        }
        f(self.a, d, b);
    }

    /// A 128-bit shift by an immediate, in place after a copy.
    fn shift(&mut self, f: fn(&mut Asm, Xmm, u8), d: W::R, a: W::R, n: u32) {
        let (d, a) = (x::<W>(d), x::<W>(a));
        if d != a {
            self.a.movaps(d, a);
        }
        f(self.a, d, n as u8);
    }

    /// A 128-bit SSE compare `d = a pred b` (`cmpps` or `cmppd`; no VEX: dynasm mis-encodes
    /// the imm8 forms). `d` must differ from `b`.
    fn cmp_with(&mut self, f: fn(&mut Asm, Xmm, XOp, u8), d: W::R, a: W::R, b: W::R, p: u8) {
        let (d, a, b) = (x::<W>(d), x::<W>(a), x::<W>(b));
        debug_assert!(b != d);
        if d != a {
            self.a.movaps(d, a);
        }
        f(self.a, d, XOp::Reg(b), p);
    }

    /// The dividend of `d = a / b` in a register: a constant is loaded into `d` (which the
    /// division overwrites: it must differ from `b`).
    fn dividend(&mut self, d: W::R, a: S<W>, b: W::R) -> W::R {
        match a {
            Src::R(r) => r,
            k => {
                debug_assert!(d != b, "the quotient would overwrite the divisor");
                self.set(d, k);
                d
            }
        }
    }

    /// `d = a / b` on f64 (`pd`) or f32 lanes.
    fn div(&mut self, pd: bool, d: W::R, a: S<W>, b: W::R) {
        if !W::WIDE {
            debug_assert!(d != b, "the quotient would overwrite the divisor");
        }
        let a = self.dividend(d, a, b);
        if W::WIDE {
            let (d, a, b) = (y::<W>(d), y::<W>(a), y::<W>(b));
            if pd {
                self.y().vdivpd(d, a, b);
            } else {
                self.y().vdivps(d, a, b);
            }
        } else {
            let op = if pd { V3::DivPd } else { V3::DivPs };
            self.v3(op, d, a, XOp::Reg(x::<W>(b)));
        }
    }

    /// `d` = the f64 (`pd`) or f32 lanes of `a` rounded as `r` says, the precision exception
    /// suppressed.
    fn round(&mut self, pd: bool, d: W::R, a: W::R, r: Round) {
        let imm = match r {
            Round::Nearest => 8,
            Round::Floor => 9,
        };
        match (W::WIDE, pd) {
            (true, false) => self.y().vroundps(y::<W>(d), y::<W>(a), imm),
            (true, true) => self.y().vroundpd(y::<W>(d), y::<W>(a), imm),
            (false, false) => self.a.roundps(x::<W>(d), x::<W>(a), imm),
            (false, true) => self.a.roundpd(x::<W>(d), x::<W>(a), imm),
        }
    }

    /// `d = !m & a` in the 128-bit form: the VEX form (float data) or the SSE one with a copy;
    /// when `d` is `a`, the SSE form writes `m`.
    fn andn128(&mut self, int: bool, d: W::R, m: W::R, a: S<W>) {
        let a = self.xop(a);
        if !int && (self.vex || d == m || a != XOp::Reg(x::<W>(d))) {
            self.v3(V3::AndN, d, m, a);
            return;
        }
        let f = if int { Asm::pandn } else { Asm::andnps };
        let (d, m) = (x::<W>(d), x::<W>(m));
        if d == m {
            f(self.a, d, a);
        } else if a != XOp::Reg(d) {
            self.a.movaps(d, m);
            f(self.a, d, a);
        } else {
            f(self.a, m, a);
            self.a.movaps(d, m);
        }
    }

    /// [`Self::v3`] with a general second source.
    fn v3s(&mut self, op: V3, d: W::R, a: W::R, b: S<W>) {
        let b = self.xop(b);
        self.v3(op, d, a, b);
    }

    /// MAXPS/MINPS in the 128-bit form: the SSE form for a register (no copy when `d` is
    /// `a`), the VEX one for a constant.
    fn min_max128(&mut self, op: V3, f: fn(&mut Asm, Xmm, XOp), d: W::R, a: W::R, b: S<W>) {
        match b {
            Src::R(_) => self.sse(f, d, a, b, false),
            _ => self.v3s(op, d, a, b),
        }
    }
}

/// Methods `fn name(d, a, b: Src)`: the VEX.256 form `wide`, or with 128 bits what the
/// closure-like expression does with the lanes `s` and the operands.
macro_rules! two_source {
    ($($name:ident: $wide:ident, |$s:ident, $d:ident, $a:ident, $b:ident| $narrow:expr;)*) => {$(
        fn $name(&mut self, $d: W::R, $a: W::R, $b: S<W>) {
            if W::WIDE {
                self.rrr(|y, d, a, b| y.$wide(d, a, b), $d, $a, $b);
            } else {
                let $s = self;
                $narrow;
            }
        }
    )*};
}

/// Methods `fn name(d, a, n)`, a shift by an immediate: `wide` (VEX.256) or `narrow` (SSE).
macro_rules! shift_imm {
    ($($name:ident: $wide:ident, $narrow:ident;)*) => {$(
        fn $name(&mut self, d: W::R, a: W::R, n: u32) {
            if W::WIDE {
                self.y().$wide(y::<W>(d), y::<W>(a), n as u8);
            } else {
                self.shift(Asm::$narrow, d, a, n);
            }
        }
    )*};
}

/// Methods `fn name(d, a, b)` on registers with one VEX mnemonic for both widths.
macro_rules! three_reg {
    ($($name:ident: $op:ident;)*) => {$(
        fn $name(&mut self, d: W::R, a: W::R, b: W::R) {
            if W::WIDE {
                self.y().$op(y::<W>(d), y::<W>(a), y::<W>(b));
            } else {
                self.a.$op(x::<W>(d), x::<W>(a), x::<W>(b));
            }
        }
    )*};
}

/// Methods `fn name(d, a)`: `wide` (VEX.256) or `narrow` (SSE).
macro_rules! one_source {
    ($($name:ident: $wide:ident, $narrow:ident;)*) => {$(
        fn $name(&mut self, d: W::R, a: W::R) {
            if W::WIDE {
                self.y().$wide(y::<W>(d), y::<W>(a));
            } else {
                self.a.$narrow(x::<W>(d), x::<W>(a));
            }
        }
    )*};
}

/// Float compares `fn name(d, a, b)` with a predicate: the raw VEX.256 form, or the SSE form
/// (dynasm mis-encodes the VEX imm8 ones; `d` must differ from `b`).
macro_rules! compare {
    ($($name:ident: $wide:ident, $narrow:ident, $p:ident;)*) => {$(
        fn $name(&mut self, d: W::R, a: W::R, b: W::R) {
            if W::WIDE {
                self.y().$wide(y::<W>(d), y::<W>(a), y::<W>(b), pred::$p);
            } else {
                self.cmp_with(Asm::$narrow, d, a, b, pred::$p);
            }
        }
    )*};
}

impl<W: Width> Lanes for X64Lanes<'_, W> {
    type R = W::R;
    type Mem = Mem;
    type Gpr = Gpr;
    const TRUNC_SATURATES: bool = false;

    fn three_operand(&self) -> bool {
        W::WIDE || self.vex
    }

    two_source! {
        and: vandps, |s, d, a, b| s.c3(V3::And, d, a, b);
        or: vorps, |s, d, a, b| s.c3(V3::Or, d, a, b);
        xor: vxorps, |s, d, a, b| s.sse(Asm::xorps, d, a, b, true);
        andn: vandnps, |s, d, m, a| s.andn128(false, d, m, a);
        and_int: vpand, |s, d, a, b| s.sse(Asm::pand, d, a, b, true);
        or_int: vpor, |s, d, a, b| s.sse(Asm::por, d, a, b, true);
        xor_int: vpxor, |s, d, a, b| s.sse(Asm::pxor, d, a, b, true);
        andn_int: vpandn, |s, d, m, a| s.andn128(true, d, m, a);
        add32: vpaddd, |s, d, a, b| s.sse(Asm::paddd, d, a, b, true);
        sub32: vpsubd, |s, d, a, b| s.sse(Asm::psubd, d, a, b, false);
        cmpeq32: vpcmpeqd, |s, d, a, b| s.sse(Asm::pcmpeqd, d, a, b, true);
        cmpgt32: vpcmpgtd, |s, d, a, b| s.v3s(V3::Gt, d, a, b);
        max_u32: vpmaxud, |s, d, a, b| s.sse(Asm::pmaxud, d, a, b, true);
        add_f32: vaddps, |s, d, a, b| s.sse(Asm::addps, d, a, b, true);
        mul_f32: vmulps, |s, d, a, b| s.c3(V3::Mul, d, a, b);
        max_f32: vmaxps, |s, d, a, b| s.min_max128(V3::Max, Asm::maxps, d, a, b);
        min_f32: vminps, |s, d, a, b| s.min_max128(V3::Min, Asm::minps, d, a, b);
        add_f64: vaddpd, |s, d, a, b| s.sse(Asm::addpd, d, a, b, true);
        sub_f64: vsubpd, |s, d, a, b| s.sse(Asm::subpd, d, a, b, false);
        mul_f64: vmulpd, |s, d, a, b| s.c3(V3::MulPd, d, a, b);
        add64: vpaddq, |s, d, a, b| s.sse(Asm::paddq, d, a, b, true);
        sub64: vpsubq, |s, d, a, b| s.sse(Asm::psubq, d, a, b, false);
        cmpgt64: vpcmpgtq, |s, d, a, b| s.sse(Asm::pcmpgtq, d, a, b, false);
        cmpeq64: vpcmpeqq, |s, d, a, b| s.sse(Asm::pcmpeqq, d, a, b, true);
    }

    shift_imm! {
        shl32: vpslld, pslld;
        shr32: vpsrld, psrld;
        sar32: vpsrad, psrad;
        shl64: vpsllq, psllq;
        shr64: vpsrlq, psrlq;
    }

    three_reg! {
        shl32_var: vpsllvd;
        shr32_var: vpsrlvd;
        sar32_var: vpsravd;
        shl64_var: vpsllvq;
        shr64_var: vpsrlvq;
        fma_f32: vfmadd231ps;
    }

    one_source! {
        sqrt_f32: vsqrtps, sqrtps;
        sqrt_f64: vsqrtpd, sqrtpd;
        trunc_i32: vcvttps2dq, cvttps2dq;
        cvt_f64_i32: vcvttpd2dq, cvttpd2dq;
        narrow_lo: vcvtpd2ps, cvtpd2ps;
    }

    compare! {
        eq: vcmpps, cmpps, EQ;
        ne: vcmpps, cmpps, NEQ;
        lt: vcmpps, cmpps, LT;
        le: vcmpps, cmpps, LE;
        le64: vcmppd, cmppd, LE;
        lt64: vcmppd, cmppd, LT;
    }

    // ------------------------------------------------------------ constants and moves

    /// Zero is `xorps` and all ones `pcmpeqd`; other constants are loaded from the pool.
    fn set(&mut self, d: W::R, a: S<W>) {
        match a {
            Src::R(r) if r == d => {}
            Src::R(r) if W::WIDE => self.y().vmovaps(y::<W>(d), y::<W>(r)),
            Src::R(r) => self.a.movaps(x::<W>(d), x::<W>(r)),
            Src::K(0) | Src::K64(0) if W::WIDE => {
                let d = y::<W>(d);
                self.y().vxorps(d, d, d)
            }
            Src::K(0) | Src::K64(0) => self.a.xorps(x::<W>(d), x::<W>(d)),
            Src::K(u32::MAX) | Src::K64(u64::MAX) if W::WIDE => {
                let d = y::<W>(d);
                self.y().vpcmpeqd(d, d, d)
            }
            Src::K(u32::MAX) | Src::K64(u64::MAX) => self.a.pcmpeqd(x::<W>(d), x::<W>(d)),
            _ if W::WIDE => {
                let a = self.yop(a);
                self.y().vmovups(y::<W>(d), a)
            }
            Src::M(m) => self.a.movups(x::<W>(d), m),
            _ => {
                let a = self.xop(a);
                self.a.movaps(x::<W>(d), a)
            }
        }
    }

    fn zero(&mut self, d: W::R) {
        if W::WIDE {
            let d = y::<W>(d);
            self.y().vpxor(d, d, d);
        } else {
            self.a.pxor(x::<W>(d), x::<W>(d));
        }
    }

    fn load(&mut self, d: W::R, m: Mem) {
        if W::WIDE {
            self.y().vmovups(y::<W>(d), m);
        } else {
            self.a.movups(x::<W>(d), m);
        }
    }

    fn store(&mut self, m: Mem, s: W::R) {
        if W::WIDE {
            self.y().store(m, y::<W>(s), false);
        } else {
            self.a.store_vec(m, x::<W>(s), false);
        }
    }

    fn broadcast32(&mut self, d: W::R, m: Mem) {
        if W::WIDE {
            self.y().vbroadcastss(y::<W>(d), m);
        } else {
            let d = x::<W>(d);
            self.a.movss(d, m);
            self.a.shufps(d, d, 0);
        }
    }

    // ------------------------------------------------------------ bitwise

    /// A register is `blendvps`-ed in with 256 bits; otherwise `andn`/`and`/`or` with VEX,
    /// and `d ^ ((d ^ a) & m)` without (no copies).
    fn select(&mut self, d: W::R, m: W::R, a: S<W>) {
        if W::WIDE {
            if let Src::R(r) = a {
                self.y()
                    .vblendvps(y::<W>(d), y::<W>(d), y::<W>(r), y::<W>(m));
                return;
            }
            let a = self.yop(a);
            let (d, m) = (y::<W>(d), y::<W>(m));
            let mut yy = self.y();
            yy.vandnps(d, m, d);
            yy.vandps(m, m, a);
            yy.vorps(d, d, m);
            return;
        }
        if a == Src::R(d) {
            return;
        }
        if self.vex {
            self.v3(V3::AndN, d, m, XOp::Reg(x::<W>(d)));
            let a = self.xop(a);
            self.v3(V3::And, m, m, a);
            self.v3(V3::Or, d, d, XOp::Reg(x::<W>(m)));
        } else {
            self.xor(d, d, a);
            self.and(m, m, Src::R(d));
            self.xor(d, d, a);
            self.xor(d, d, Src::R(m));
        }
    }

    fn blend(&mut self, d: W::R, a: W::R, b: W::R, m: W::R) {
        let (d, a, b, m) = (y::<W>(d), y::<W>(a), y::<W>(b), y::<W>(m));
        if W::WIDE {
            self.y().vblendvps(d, a, b, m);
        } else {
            self.y().vblendvps_x(d, a, b, m);
        }
    }

    // ------------------------------------------------------------ 32-bit integer lanes

    /// Flipping both sign bits makes the unsigned compare a signed one (no unsigned compare
    /// before AVX-512, and no `k + 1` to overflow).
    fn gt_u32(&mut self, d: W::R, a: W::R, k: u32) {
        self.xor_int(d, a, Src::K(SIGN));
        self.cmpgt32(d, d, Src::K(k ^ SIGN));
    }

    /// The even lanes' products with `pmuludq`, the odd lanes' from the operands shifted
    /// down (their high halves then sit in the odd words).
    fn mulhi_u32(&mut self, d: W::R, a: W::R, b: W::R, t: [W::R; 3]) {
        let [t0, t1, t2] = t;
        self.mul_u32_64(t0, a, b);
        self.shr64(t0, t0, 32);
        self.shr64(t1, a, 32);
        self.shr64(t2, b, 32);
        self.mul_u32_64(t1, t1, t2);
        self.and_int(t1, t1, Src::K64(0xFFFF_FFFF_0000_0000));
        self.or_int(d, t0, Src::R(t1));
    }

    // ------------------------------------------------------------ f32 lanes

    /// The magnitude bits: keys compare as signed integers.
    fn mag(&mut self, d: W::R, a: W::R) {
        self.and(d, a, Src::K(!SIGN));
    }

    fn key_gt(&mut self, d: W::R, m: W::R, k: u32) {
        self.cmpgt32(d, m, Src::K(k));
    }

    fn div_f32(&mut self, d: W::R, a: S<W>, b: W::R) {
        self.div(false, d, a, b);
    }

    fn round_f32(&mut self, d: W::R, a: W::R, r: Round) {
        self.round(false, d, a, r);
    }

    /// `maxps` is the quickest already.
    fn max_f32_fast(&mut self, d: W::R, a: W::R, b: S<W>) {
        self.max_f32(d, a, b);
    }

    /// `minps` is the quickest already.
    fn min_f32_fast(&mut self, d: W::R, a: W::R, b: S<W>) {
        self.min_f32(d, a, b);
    }

    fn ordered(&mut self, d: W::R, a: W::R, b: W::R) {
        if W::WIDE {
            self.y().vcmpps(y::<W>(d), y::<W>(a), y::<W>(b), pred::ORD);
            return;
        }
        // Symmetric: the operand `d` names goes first, so no copy clobbers the other.
        let (a, b) = if d == b { (b, a) } else { (a, b) };
        let (d, a, b) = (x::<W>(d), x::<W>(a), x::<W>(b));
        if d != a {
            self.a.movaps(d, a);
        }
        self.a.cmpps(d, b, pred::ORD);
    }

    /// `k <= a`: `cmpps` has no "greater" predicate that is false for NaN.
    fn ge_k(&mut self, d: W::R, a: W::R, k: u32) {
        self.set(d, Src::K(k));
        self.le(d, d, a);
    }

    fn is_neg_inf(&mut self, d: W::R, a: W::R) {
        self.cmpeq32(d, a, Src::K(SIGN | INF));
    }

    // ------------------------------------------------------------ f64 lanes

    /// The high half moves down first. With 128 bits `pshufd` writes all of `d` (`movhlps d,
    /// a` would keep d's high half, a false dependency on its last writer: 5-25% slower in
    /// latency-bound chains of f64 steps).
    fn widen(&mut self, d: W::R, a: W::R, hi: bool) {
        let s = if hi {
            self.high_half(d, a);
            d
        } else {
            a
        };
        if W::WIDE {
            self.y().vcvtps2pd(y::<W>(d), y::<W>(s));
        } else {
            self.a.cvtps2pd(x::<W>(d), x::<W>(s));
        }
    }

    fn narrow(&mut self, d: W::R, lo: W::R, hi: W::R) {
        if W::WIDE {
            let (d, lo, hi) = (y::<W>(d), y::<W>(lo), y::<W>(hi));
            let mut yy = self.y();
            yy.vcvtpd2ps(lo, lo);
            yy.vcvtpd2ps(hi, hi);
            yy.vinsertf128_hi(d, lo, hi);
        } else {
            let (d, lo, hi) = (x::<W>(d), x::<W>(lo), x::<W>(hi));
            self.a.cvtpd2ps(d, lo);
            self.a.cvtpd2ps(hi, hi);
            self.a.movlhps(d, hi);
        }
    }

    fn div_f64(&mut self, d: W::R, a: S<W>, b: W::R) {
        self.div(true, d, a, b);
    }

    fn round_f64(&mut self, d: W::R, a: W::R, r: Round) {
        self.round(true, d, a, r);
    }

    fn join32(&mut self, d: W::R, lo: W::R, hi: W::R) {
        debug_assert!(d != hi || d == lo);
        if W::WIDE {
            self.y().vinsertf128_hi(y::<W>(d), y::<W>(lo), y::<W>(hi));
        } else {
            if d != lo {
                self.a.movaps(x::<W>(d), x::<W>(lo));
            }
            self.a.movlhps(x::<W>(d), x::<W>(hi));
        }
    }

    /// With 256 bits the lanes above +inf in magnitude; with 128 the unordered compare.
    fn quiet_nan64(&mut self, d: W::R, t: W::R) {
        if W::WIDE {
            self.and(t, d, Src::K64(u64::MAX >> 1));
            self.cmpgt64(t, t, Src::K64(f64::INFINITY.to_bits()));
        } else {
            self.a.movaps(x::<W>(t), x::<W>(d));
            self.a.cmppd(x::<W>(t), x::<W>(d), 3); // unordered
        }
        self.select(d, t, Src::K64(QNAN64));
    }

    // ------------------------------------------------------------ 64-bit integer lanes

    fn widen32(&mut self, d: W::R, a: W::R, hi: bool, signed: bool) {
        let s = if hi {
            self.high_half(d, a);
            d
        } else {
            a
        };
        if W::WIDE {
            let (d, s) = (y::<W>(d), y::<W>(s));
            if signed {
                self.y().vpmovsxdq(d, s);
            } else {
                self.y().vpmovzxdq(d, s);
            }
        } else if signed {
            self.a.pmovsxdq(x::<W>(d), x::<W>(s));
        } else {
            self.a.pmovzxdq(x::<W>(d), x::<W>(s));
        }
    }

    fn mul_u32_64(&mut self, d: W::R, a: W::R, b: W::R) {
        if W::WIDE {
            self.rrr(|y, d, a, b| y.vpmuludq(d, a, b), d, a, Src::R(b));
        } else {
            self.sse(Asm::pmuludq, d, a, Src::R(b), true);
        }
    }

    fn mul_i32_64(&mut self, d: W::R, a: W::R, b: W::R) {
        if W::WIDE {
            self.rrr(|y, d, a, b| y.vpmuldq(d, a, b), d, a, Src::R(b));
        } else {
            self.sse(Asm::pmuldq, d, a, Src::R(b), true);
        }
    }

    fn mul_wide_u32(&mut self, d: W::R, a: W::R, b: W::R, hi: bool, t: [W::R; 2]) {
        self.widen32(t[0], a, hi, false);
        self.widen32(t[1], b, hi, false);
        self.mul_u32_64(d, t[0], t[1]);
    }

    /// Even lanes through one `pmuludq`, odd lanes through another on the words shifted
    /// down; the low and high words of both are then interleaved.
    fn mul_add_wide_u32(&mut self, d: [W::R; 2], s: [W::R; 3], cin: Option<W::R>, t: [W::R; 3]) {
        let ([lo, hi], [a, b, c]) = (d, s);
        let (low, high) = (Src::K64(0xFFFF_FFFF), Src::K64(0xFFFF_FFFF_0000_0000));
        let [even, k, odd] = t;
        self.mul_u32_64(even, a, b);
        self.and_int(k, c, low);
        self.add64(even, even, Src::R(k));
        if let Some(cin) = cin {
            self.and_int(k, cin, low);
            self.add64(even, even, Src::R(k));
        }
        self.shr64(a, a, 32);
        self.shr64(b, b, 32);
        self.mul_u32_64(odd, a, b);
        self.shr64(a, c, 32);
        self.add64(odd, odd, Src::R(a));
        if let Some(cin) = cin {
            self.shr64(a, cin, 32);
            self.add64(odd, odd, Src::R(a));
        }
        self.and_int(lo, even, low);
        self.shl64(a, odd, 32);
        self.or_int(lo, lo, Src::R(a));
        self.shr64(hi, even, 32);
        self.and_int(a, odd, high);
        self.or_int(hi, hi, Src::R(a));
    }

    /// Both shifts, or-ed: the variable shifts give 0 for the negative count.
    fn shift64(&mut self, d: W::R, a: W::R, left: W::R, right: W::R, t: W::R) {
        self.shr64_var(d, a, right);
        self.shl64_var(t, a, left);
        self.or_int(d, d, Src::R(t));
    }

    // ------------------------------------------------------------ tables, masks

    fn table(&mut self, slot: usize, bytes: Vec<u8>) -> Gpr {
        let base = [RAX, RCX][slot];
        let l = self.a.table(bytes);
        self.a.lea_label(base, l);
        base
    }

    fn gather32(&mut self, d: W::R, table: Gpr, idx: W::R, disp: i32, mask: W::R) {
        let (d, idx, mask) = (y::<W>(d), y::<W>(idx), y::<W>(mask));
        let mut yy = Yasm::new(self.a);
        if W::WIDE {
            yy.vpcmpeqd(mask, mask, mask);
            yy.vpgatherdd(d, table, idx, disp, mask);
        } else {
            yy.a.pcmpeqd(Xmm(mask.0), Xmm(mask.0));
            yy.vpgatherdd_x(d, table, idx, disp, mask);
        }
    }

    fn mask_bits(&mut self, g: Gpr, m: W::R) {
        if W::WIDE {
            self.y().vmovmskps(g, y::<W>(m));
        } else {
            self.a.movmskps(g, x::<W>(m));
        }
    }

    // ------------------------------------------------------------ one vector per register

    fn hadd64(&mut self, d: W::R, a: W::R, b: W::R) {
        if W::WIDE {
            self.rrr(|y, d, a, b| y.vhaddpd(d, a, b), d, a, Src::R(b));
        } else {
            self.sse(Asm::haddpd, d, a, Src::R(b), false);
        }
    }

    fn broadcast0(&mut self, v: W::R) {
        if W::WIDE {
            self.y().vbroadcastss_r(y::<W>(v), y::<W>(v));
        } else {
            self.a.shufps(x::<W>(v), x::<W>(v), 0);
        }
    }

    fn swap_pairs(&mut self, d: W::R, a: W::R) {
        if W::WIDE {
            self.y().vpshufd(y::<W>(d), y::<W>(a), 0xB1);
        } else {
            self.a.pshufd(x::<W>(d), x::<W>(a), 0xB1);
        }
    }

    fn swap_halves(&mut self, d: W::R, a: W::R) {
        if W::WIDE {
            self.y().vpermq(y::<W>(d), y::<W>(a), 0x4E);
        } else {
            self.a.pshufd(x::<W>(d), x::<W>(a), 0x4E);
        }
    }

    fn blend_lanes(&mut self, d: W::R, a: S<W>, lanes: u8) {
        if W::WIDE {
            let a = self.yop(a);
            let d = y::<W>(d);
            self.y().vblendps(d, d, a, lanes);
        } else {
            let a = self.xop(a);
            self.a.blendps(x::<W>(d), a, lanes);
        }
    }
}

impl<W: Width> X64Lanes<'_, W> {
    /// The high half of `a` into the low half of `d`.
    fn high_half(&mut self, d: W::R, a: W::R) {
        if W::WIDE {
            self.y().vextractf128_hi(y::<W>(d), y::<W>(a));
        } else {
            self.a.pshufd(x::<W>(d), x::<W>(a), 0xEE);
        }
    }
}
