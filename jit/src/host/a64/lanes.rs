//! The AArch64 [`Lanes`]: four 32-bit (or two 64-bit) lanes of a NEON q register, [`Neon`].
//!
//! NEON has what AVX2 lacks (64-bit compares, widening multiplies of whole registers, one
//! shift in either direction by a signed count) and lacks what AVX2 has (gathers, right
//! shifts by a register, products of the low words of 64-bit lanes, a per-lane blend that
//! keeps its mask), so some methods are short sequences here:
//!
//! * constants come from a register the caller keeps them in where one does (the `consts`
//!   of [`Neon::new`]), else `movi` for small ones and a literal load otherwise, into the
//!   scratch register `k` (or straight into the destination of [`Lanes::set`]);
//! * magnitude keys are `|x| << 1`, compared unsigned against `bound << 1`, which the caller
//!   may keep in registers too (`keys`);
//! * right shifts by a register are `ushl`/`sshl` by the negated count (in the second scratch
//!   register `k2`);
//! * tables are read lane by lane through x8-x11 (base in x16 or x17, x15 for a displaced
//!   one).

use super::asm::Asm;
use super::regs::{Gpr, Vreg, G10, G11, G15, G16, G17, G8, G9, ZR};
use crate::host::lanes::bits::{INF, ONE64, QNAN64, SIGN};
use crate::host::lanes::{Lanes, Round, Src};

/// A memory operand: `[base + off]`, `off` a multiple of the access size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    /// Base register.
    pub base: Gpr,
    /// Byte offset.
    pub off: u32,
}

/// The NEON lane operations over an [`Asm`].
pub struct Neon<'a> {
    a: &'a mut Asm,
    /// Scratch for constants and loaded operands.
    k: Vreg,
    /// Second scratch (negated shift counts, compare-and-select results).
    k2: Vreg,
    /// Registers holding a 32-bit constant in every lane.
    consts: &'a [(u32, Vreg)],
    /// Registers holding `bound << 1` in every lane, for [`Lanes::key_gt`].
    keys: &'a [(u32, Vreg)],
}

impl<'a> Neon<'a> {
    /// Lane operations over `a`, with scratch registers `k` and `k2` (which may be the same
    /// register when no method that needs both is used) and the constant registers the code
    /// keeps (`consts`: value, register; `keys`: `bound << 1`, register).
    pub fn new(
        a: &'a mut Asm,
        k: Vreg,
        k2: Vreg,
        consts: &'a [(u32, Vreg)],
        keys: &'a [(u32, Vreg)],
    ) -> Self {
        Neon {
            a,
            k,
            k2,
            consts,
            keys,
        }
    }

    /// `b` in a register: itself, a kept constant, or the constant (or memory) loaded into `k`.
    fn reg(&mut self, b: Src<Vreg, Mem>) -> Vreg {
        let v = match b {
            Src::R(r) => return r,
            Src::K(v) => v,
            Src::K64(ONE64) => {
                self.a.fmov_2d_one(self.k);
                return self.k;
            }
            Src::K64(v) => {
                self.a.load_const(
                    self.k,
                    [v as u32, (v >> 32) as u32, v as u32, (v >> 32) as u32],
                );
                return self.k;
            }
            Src::M(m) => {
                self.a.ldr_q(self.k, m.base, m.off as i32);
                return self.k;
            }
        };
        if let Some(r) = kept(self.consts, v) {
            return r;
        }
        if v == 0 {
            self.a.movi_zero(self.k);
        } else if v < 256 {
            self.a.movi_4s(self.k, v, 0);
        } else {
            self.a.load_const(self.k, [v; 4]);
        }
        self.k
    }
}

impl Neon<'_> {
    /// `d = a >> n` by the right shift `f`; a shift by 0 is a copy (the right shifts'
    /// immediates are 1..=32 or 1..=64).
    fn right_shift(&mut self, f: fn(&mut Asm, Vreg, Vreg, u32), d: Vreg, a: Vreg, n: u32) {
        if n == 0 {
            self.a.mov_16b(d, a);
        } else {
            f(self.a, d, a, n);
        }
    }

    /// `d = a > b ? a : b` (`max`) or `d = a < b ? a : b`, `b` when either is NaN: a compare
    /// and `bsl`, in place through `k2` when `d` is a source.
    fn compare_select(&mut self, max: bool, d: Vreg, a: Vreg, b: S) {
        if max && b == Src::K(0) && d != a {
            // Selecting +0 where the mask is clear is clearing those lanes.
            self.a.fcmgt_4s_zero(d, a);
            self.a.and_16b(d, a, d);
            return;
        }
        let in_place = d == a || b == Src::R(d);
        let b = self.reg(b);
        let m = if in_place {
            debug_assert!(self.k != self.k2);
            self.k2
        } else {
            d
        };
        if max {
            self.a.fcmgt_4s(m, a, b); // NaN: false, b
        } else {
            self.a.fcmgt_4s(m, b, a);
        }
        self.a.bsl_16b(m, a, b);
        self.a.mov_16b(d, m);
    }
}

/// The register of `list` that holds `v`.
fn kept(list: &[(u32, Vreg)], v: u32) -> Option<Vreg> {
    list.iter().find(|(c, _)| *c == v).map(|(_, r)| *r)
}

type S = Src<Vreg, Mem>;

/// Methods `fn name(d, a, b: Src)`: `b` in a register, then `op d, a, b`.
macro_rules! reg_op {
    ($($name:ident: $op:ident;)*) => {$(
        fn $name(&mut self, d: Vreg, a: Vreg, b: S) {
            let b = self.reg(b);
            self.a.$op(d, a, b);
        }
    )*};
}

/// Methods `fn name(d, a, b)` on registers: `op d, a, b`, or with `swapped` `op d, b, a`
/// (the compares that have only the greater forms).
macro_rules! three_reg {
    ($($name:ident: $op:ident;)*) => {$(
        fn $name(&mut self, d: Vreg, a: Vreg, b: Vreg) {
            self.a.$op(d, a, b);
        }
    )*};
    (swapped $($name:ident: $op:ident;)*) => {$(
        fn $name(&mut self, d: Vreg, a: Vreg, b: Vreg) {
            self.a.$op(d, b, a);
        }
    )*};
}

/// Methods `fn name(d, a)`: `op d, a`.
macro_rules! one_source {
    ($($name:ident: $op:ident;)*) => {$(
        fn $name(&mut self, d: Vreg, a: Vreg) {
            self.a.$op(d, a);
        }
    )*};
}

impl Lanes for Neon<'_> {
    type R = Vreg;
    type Mem = Mem;
    type Gpr = Gpr;
    const TRUNC_SATURATES: bool = true;

    fn three_operand(&self) -> bool {
        true
    }

    reg_op! {
        and: and_16b;
        or: orr_16b;
        xor: eor_16b;
        add32: add_4s;
        sub32: sub_4s;
        cmpeq32: cmeq_4s;
        cmpgt32: cmgt_4s;
        max_u32: umax_4s;
        add_f32: fadd_4s;
        mul_f32: fmul_4s;
        max_f32_fast: fmax_4s;
        min_f32_fast: fmin_4s;
        add_f64: fadd_2d;
        sub_f64: fsub_2d;
        mul_f64: fmul_2d;
        add64: add_2d;
        sub64: sub_2d;
        cmpgt64: cmgt_2d;
        cmpeq64: cmeq_2d;
    }

    one_source! {
        sqrt_f32: fsqrt_4s;
        trunc_i32: fcvtzs_4s;
        narrow_lo: fcvtn_2s;
        sqrt_f64: fsqrt_2d;
        cvt_f64_i32: fcvtzs_2d;
        swap_pairs: rev64_4s;
    }

    three_reg! {
        eq: fcmeq_4s;
        fma_f32: fmla_4s;
        shl32_var: ushl_4s;
        shl64_var: ushl_2d;
        hadd64: faddp_2d;
    }

    three_reg! {
        swapped
        lt: fcmgt_4s;
        le: fcmge_4s;
        lt64: fcmgt_2d;
        le64: fcmge_2d;
    }

    // ------------------------------------------------------------ constants and moves

    /// Constants go straight into `d`.
    fn set(&mut self, d: Vreg, a: S) {
        match a {
            Src::R(r) => self.a.mov_16b(d, r),
            Src::K(0) | Src::K64(0) => self.a.movi_zero(d),
            Src::K(u32::MAX) | Src::K64(u64::MAX) => {
                self.a.movi_zero(d);
                self.a.not_16b(d, d);
            }
            _ => {
                let k = self.k;
                self.k = d;
                let r = self.reg(a);
                self.k = k;
                self.a.mov_16b(d, r);
            }
        }
    }

    fn zero(&mut self, d: Vreg) {
        self.a.movi_zero(d);
    }

    fn load(&mut self, d: Vreg, m: Mem) {
        self.a.ldr_q(d, m.base, m.off as i32);
    }

    fn store(&mut self, m: Mem, s: Vreg) {
        self.a.str_q(s, m.base, m.off as i32);
    }

    fn broadcast32(&mut self, d: Vreg, m: Mem) {
        self.a.ldr_s(self.k, m.base, m.off as i32);
        self.a.dup_4s(d, self.k, 0);
    }

    // ------------------------------------------------------------ bitwise

    fn andn(&mut self, d: Vreg, m: Vreg, a: S) {
        let a = self.reg(a);
        self.a.bic_16b(d, a, m);
    }

    fn and_int(&mut self, d: Vreg, a: Vreg, b: S) {
        self.and(d, a, b);
    }

    fn or_int(&mut self, d: Vreg, a: Vreg, b: S) {
        self.or(d, a, b);
    }

    fn xor_int(&mut self, d: Vreg, a: Vreg, b: S) {
        self.xor(d, a, b);
    }

    fn andn_int(&mut self, d: Vreg, m: Vreg, a: S) {
        self.andn(d, m, a);
    }

    fn select(&mut self, d: Vreg, m: Vreg, a: S) {
        let a = self.reg(a);
        self.a.bit_16b(d, a, m);
    }

    /// `bsl` in `k2` (it overwrites the mask operand).
    fn blend(&mut self, d: Vreg, a: Vreg, b: Vreg, m: Vreg) {
        self.a.mov_16b(self.k2, m);
        self.a.bsl_16b(self.k2, b, a);
        self.a.mov_16b(d, self.k2);
    }

    // ------------------------------------------------------------ 32-bit integer lanes

    fn gt_u32(&mut self, d: Vreg, a: Vreg, k: u32) {
        let k = self.reg(Src::K(k));
        self.a.cmhi_4s(d, a, k);
    }

    fn mulhi_u32(&mut self, d: Vreg, a: Vreg, b: Vreg, t: [Vreg; 3]) {
        self.a.umull_2d(t[0], a, b);
        self.a.umull2_2d(t[1], a, b);
        self.a.uzp2_4s(d, t[0], t[1]);
    }

    fn shl32(&mut self, d: Vreg, a: Vreg, n: u32) {
        self.a.shl_4s(d, a, n);
    }

    fn shr32(&mut self, d: Vreg, a: Vreg, n: u32) {
        self.right_shift(Asm::ushr_4s, d, a, n);
    }

    fn sar32(&mut self, d: Vreg, a: Vreg, n: u32) {
        self.right_shift(Asm::sshr_4s, d, a, n);
    }

    fn shr32_var(&mut self, d: Vreg, a: Vreg, n: Vreg) {
        self.a.neg_4s(self.k2, n);
        self.a.ushl_4s(d, a, self.k2);
    }

    fn sar32_var(&mut self, d: Vreg, a: Vreg, n: Vreg) {
        self.a.neg_4s(self.k2, n);
        self.a.sshl_4s(d, a, self.k2);
    }

    // ------------------------------------------------------------ f32 lanes

    fn mag(&mut self, d: Vreg, a: Vreg) {
        self.a.shl_4s(d, a, 1);
    }

    /// `|x| << 1 > k << 1` is `|x| << 1 >= (k + 1) << 1` (keys are even): whichever bound a
    /// kept register holds.
    fn key_gt(&mut self, d: Vreg, m: Vreg, k: u32) {
        if let Some(r) = kept(self.keys, (k + 1) << 1) {
            self.a.cmhs_4s(d, m, r);
            return;
        }
        let r = match kept(self.keys, k << 1) {
            Some(r) => r,
            None => {
                self.a.load_const(self.k, [k << 1; 4]);
                self.k
            }
        };
        self.a.cmhi_4s(d, m, r);
    }

    fn div_f32(&mut self, d: Vreg, a: S, b: Vreg) {
        let a = self.reg(a);
        self.a.fdiv_4s(d, a, b);
    }

    fn round_f32(&mut self, d: Vreg, a: Vreg, r: Round) {
        match r {
            Round::Nearest => self.a.frintn_4s(d, a),
            Round::Floor => self.a.frintm_4s(d, a),
        }
    }

    /// Compare and select (`fmax` differs on NaN and on signed zeros).
    fn max_f32(&mut self, d: Vreg, a: Vreg, b: S) {
        self.compare_select(true, d, a, b);
    }

    fn min_f32(&mut self, d: Vreg, a: Vreg, b: S) {
        self.compare_select(false, d, a, b);
    }

    fn ne(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        self.a.fcmeq_4s(d, a, b);
        self.a.not_16b(d, d);
    }

    fn ordered(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        if a == b {
            self.a.fcmeq_4s(d, a, a);
        } else {
            self.a.fcmeq_4s(self.k, b, b);
            self.a.fcmeq_4s(d, a, a);
            self.a.and_16b(d, d, self.k);
        }
    }

    fn ge_k(&mut self, d: Vreg, a: Vreg, k: u32) {
        if k == 0 {
            self.a.fcmge_4s_zero(d, a);
        } else {
            let k = self.reg(Src::K(k));
            self.a.fcmge_4s(d, a, k);
        }
    }

    /// -inf from kept +inf and sign registers when there are both.
    fn is_neg_inf(&mut self, d: Vreg, a: Vreg) {
        let k = match (kept(self.consts, INF), kept(self.consts, SIGN)) {
            (Some(inf), Some(sign)) => {
                self.a.orr_16b(self.k, inf, sign);
                self.k
            }
            _ => self.reg(Src::K(SIGN | INF)),
        };
        self.a.fcmeq_4s(d, a, k);
    }

    // ------------------------------------------------------------ f64 lanes

    fn widen(&mut self, d: Vreg, a: Vreg, hi: bool) {
        if hi {
            self.a.fcvtl2_2d(d, a);
        } else {
            self.a.fcvtl_2d(d, a);
        }
    }

    fn narrow(&mut self, d: Vreg, lo: Vreg, hi: Vreg) {
        self.a.fcvtn_2s(d, lo);
        self.a.fcvtn2_4s(d, hi);
    }

    fn div_f64(&mut self, d: Vreg, a: S, b: Vreg) {
        let a = self.reg(a);
        self.a.fdiv_2d(d, a, b);
    }

    fn round_f64(&mut self, d: Vreg, a: Vreg, r: Round) {
        match r {
            Round::Nearest => self.a.frintn_2d(d, a),
            Round::Floor => self.a.frintm_2d(d, a),
        }
    }

    fn join32(&mut self, d: Vreg, lo: Vreg, hi: Vreg) {
        let t = if d == hi { self.k2 } else { d };
        self.a.xtn_2s(t, lo);
        self.a.xtn2_4s(t, hi);
        self.a.mov_16b(d, t);
    }

    fn quiet_nan64(&mut self, d: Vreg, t: Vreg) {
        self.a.fcmeq_2d(t, d, d);
        let q = self.reg(Src::K64(QNAN64));
        self.a.bif_16b(d, q, t);
    }

    // ------------------------------------------------------------ 64-bit integer lanes

    fn widen32(&mut self, d: Vreg, a: Vreg, hi: bool, signed: bool) {
        match (hi, signed) {
            (false, false) => self.a.uxtl_2d(d, a),
            (true, false) => self.a.uxtl2_2d(d, a),
            (false, true) => self.a.sxtl_2d(d, a),
            (true, true) => self.a.sxtl2_2d(d, a),
        }
    }

    fn shl64(&mut self, d: Vreg, a: Vreg, n: u32) {
        self.a.shl_2d(d, a, n);
    }

    fn shr64(&mut self, d: Vreg, a: Vreg, n: u32) {
        self.right_shift(Asm::ushr_2d, d, a, n);
    }

    /// The operands narrowed first (`umull` takes 32-bit lanes).
    fn mul_u32_64(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        self.a.xtn_2s(self.k, a);
        self.a.xtn_2s(self.k2, b);
        self.a.umull_2d(d, self.k, self.k2);
    }

    fn mul_i32_64(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        self.a.xtn_2s(self.k, a);
        self.a.xtn_2s(self.k2, b);
        self.a.smull_2d(d, self.k, self.k2);
    }

    fn mul_wide_u32(&mut self, d: Vreg, a: Vreg, b: Vreg, hi: bool, _t: [Vreg; 2]) {
        if hi {
            self.a.umull2_2d(d, a, b);
        } else {
            self.a.umull_2d(d, a, b);
        }
    }

    /// Products of lanes 0-1 and 2-3 with the widened addends, then the low and the high
    /// words unzipped.
    fn mul_add_wide_u32(&mut self, d: [Vreg; 2], s: [Vreg; 3], cin: Option<Vreg>, t: [Vreg; 3]) {
        let ([lo, hi], [a, b, c]) = (d, s);
        let [p, q, _] = t;
        self.a.umull_2d(p, a, b);
        self.a.umull2_2d(q, a, b);
        self.a.uaddw_2d(p, p, c);
        self.a.uaddw2_2d(q, q, c);
        if let Some(k) = cin {
            self.a.uaddw_2d(p, p, k);
            self.a.uaddw2_2d(q, q, k);
        }
        self.a.uzp1_4s(lo, p, q);
        self.a.uzp2_4s(hi, p, q);
    }

    fn shr64_var(&mut self, d: Vreg, a: Vreg, n: Vreg) {
        self.a.neg_2d(self.k2, n);
        self.a.ushl_2d(d, a, self.k2);
    }

    /// `ushl` shifts right for a negative count: one shift by `left`.
    fn shift64(&mut self, d: Vreg, a: Vreg, left: Vreg, _right: Vreg, _t: Vreg) {
        self.a.ushl_2d(d, a, left);
    }

    // ------------------------------------------------------------ tables, masks

    fn table(&mut self, slot: usize, bytes: Vec<u8>) -> Gpr {
        let base = [G16, G17][slot];
        let l = self.a.table(bytes);
        self.a.adr(base, l);
        base
    }

    /// Four independent loads: no lane waits for another's.
    fn gather32(&mut self, d: Vreg, table: Gpr, idx: Vreg, disp: i32, _mask: Vreg) {
        let base = if disp == 0 {
            table
        } else {
            self.a.add_xi(G15, table, disp as u32);
            G15
        };
        let g = [G8, G9, G10, G11];
        for (k, &r) in g.iter().enumerate() {
            self.a.umov_w(r, idx, k as u32);
        }
        for &r in &g {
            self.a.ldr_w_idx(r, base, r);
        }
        for (k, &r) in g.iter().enumerate() {
            self.a.ins_s_w(d, k as u32, r);
        }
    }

    /// The largest lane.
    fn mask_bits(&mut self, g: Gpr, m: Vreg) {
        self.a.umaxv_4s(self.k, m);
        self.a.fmov_ws(g, self.k);
    }

    // ------------------------------------------------------------ one vector per register

    fn broadcast0(&mut self, v: Vreg) {
        self.a.dup_4s(v, v, 0);
    }

    fn swap_halves(&mut self, d: Vreg, a: Vreg) {
        self.a.ext_16b(d, a, a, 8);
    }

    /// Lane by lane (`ins`; zero from the zero register).
    fn blend_lanes(&mut self, d: Vreg, a: S, lanes: u8) {
        let a = if a == Src::K(0) {
            None
        } else {
            Some(self.reg(a))
        };
        for lane in (0..4).filter(|l| lanes >> l & 1 != 0) {
            match a {
                Some(r) => self.a.ins_s(d, lane, r, lane),
                None => self.a.ins_s_w(d, lane, ZR),
            }
        }
    }
}
