//! The AArch64 implementation of the integer macro-assembler ([`IntMasm`]).
//!
//! AArch64 has three-operand forms, so `d = a op b` is one instruction whatever the
//! registers. Constants take the instruction's immediate field where one fits (12-bit
//! add/sub/cmp, logical bitmask immediates, scaled load/store offsets) and go through the
//! first scratch register otherwise; the second holds the loaded value of
//! [`IntMasm::cmp_mem`] and the constant of [`IntMasm::store_imm`] (whose offset may need the
//! first). Both are the client's choice (`A64Int::new`; usually x17 and x8, which AAPCS64
//! lets a function clobber; see the conventions in `crate::host::int`).

use super::abi::Frame;
use super::asm::{Asm, Cond as A64Cond};
use super::regs::{Gpr, ZR};
use crate::host::int::{by_size, delegate_to_asm, Alu, Cond, IntMasm, RegImm, Shift, Size};
use dynasmrt::aarch64::{encode_logical_immediate_32bit, encode_logical_immediate_64bit};
use dynasmrt::DynamicLabel;

/// The integer macro-assembler over an AArch64 [`Asm`].
pub struct A64Int<'a> {
    /// The assembler the code goes to.
    pub a: &'a mut Asm,
    /// The registers the sequences clobber (see the module documentation).
    tmp: [Gpr; 2],
}

impl<'a> A64Int<'a> {
    /// A masm emitting into `a`, clobbering `tmp` where a sequence needs registers.
    pub fn new(a: &'a mut Asm, tmp: [Gpr; 2]) -> Self {
        A64Int { a, tmp }
    }

    /// `k` in the first scratch register (a 32-bit operation's constant zero-extended).
    fn materialise(&mut self, size: Size, k: i64) -> Gpr {
        let t = self.tmp[0];
        self.a.mov_imm_x(t, trunc(size, k));
        t
    }

    /// Whether `k` is a logical (bitmask) immediate at `size`.
    fn logical(size: Size, k: i64) -> bool {
        match size {
            Size::S32 => encode_logical_immediate_32bit(k as u32).is_some(),
            Size::S64 => encode_logical_immediate_64bit(k as u64).is_some(),
        }
    }

    /// `k` as the operation's signed value (a 32-bit operation's low 32 bits).
    fn value(size: Size, k: i64) -> i64 {
        match size {
            Size::S32 => k as i32 as i64,
            Size::S64 => k,
        }
    }

    /// `op d, a, b` on registers.
    fn op_rrr(&mut self, op: Alu, size: Size, d: Gpr, a: Gpr, b: Gpr) {
        let x = &mut *self.a;
        match op {
            Alu::Add => by_size!(size, x, add_x / add_w(d, a, b)),
            Alu::Sub => by_size!(size, x, sub_x / sub_w(d, a, b)),
            Alu::And => by_size!(size, x, and_x / and_w(d, a, b)),
            Alu::Or => by_size!(size, x, orr_x / orr_w(d, a, b)),
            Alu::Xor => by_size!(size, x, eor_x / eor_w(d, a, b)),
            Alu::Mul => by_size!(size, x, mul_x / mul_w(d, a, b)),
        }
    }

    /// The register offset `off` for a load or store whose scaled immediate offset cannot
    /// hold it, in the first scratch register.
    fn offset(&mut self, size: Size, off: i32) -> Option<Gpr> {
        let scale = match size {
            Size::S32 => 4,
            Size::S64 => 8,
        };
        if off >= 0 && off % scale == 0 && off / scale < 4096 {
            None
        } else {
            let t = self.tmp[0];
            self.a.mov_imm_x(t, off as i64 as u64);
            Some(t)
        }
    }
}

/// The bits of `k` a `size` operation uses, zero-extended.
fn trunc(size: Size, k: i64) -> u64 {
    match size {
        Size::S32 => k as u32 as u64,
        Size::S64 => k as u64,
    }
}

impl From<Cond> for A64Cond {
    fn from(c: Cond) -> A64Cond {
        match c {
            Cond::Eq => A64Cond::Eq,
            Cond::Ne => A64Cond::Ne,
            Cond::Lo => A64Cond::Lo,
            Cond::Ls => A64Cond::Ls,
            Cond::Hi => A64Cond::Hi,
            Cond::Hs => A64Cond::Hs,
            Cond::Lt => A64Cond::Lt,
            Cond::Le => A64Cond::Le,
            Cond::Gt => A64Cond::Gt,
            Cond::Ge => A64Cond::Ge,
        }
    }
}

impl IntMasm for A64Int<'_> {
    delegate_to_asm!(b);

    fn jcc(&mut self, c: Cond, l: DynamicLabel) {
        self.a.b_cond(c.into(), l);
    }

    fn cmp(&mut self, size: Size, a: Gpr, b: RegImm<Gpr>) {
        let b = match b {
            RegImm::R(b) => b,
            RegImm::I(k) => match (size, Self::value(size, k)) {
                (Size::S32, k @ 0..4096) => return self.a.cmp_wi(a, k as u32),
                (Size::S64, k @ 0..4096) => return self.a.cmp_xi(a, k as u32),
                (Size::S32, k @ -4095..0) => return self.a.cmn_wi(a, (-k) as u32),
                (Size::S64, k @ -4095..0) => return self.a.cmn_xi(a, (-k) as u32),
                _ => self.materialise(size, k),
            },
        };
        by_size!(size, self.a, cmp_x / cmp_w(a, b));
    }

    fn cmp_mem(&mut self, size: Size, base: Gpr, off: i32, b: RegImm<Gpr>) {
        let v = self.tmp[1];
        self.load(size, v, base, off);
        self.cmp(size, v, b);
    }

    fn test_bit(&mut self, a: Gpr, bit: u32) {
        if bit < 32 {
            self.a.tst_wi(a, 1 << bit);
        } else {
            self.a.tst_xi(a, 1 << bit);
        }
    }

    fn dec_branch_nz(&mut self, size: Size, r: Gpr, l: DynamicLabel) {
        by_size!(size, self.a, subs_xi / subs_wi(r, r, 1));
        self.a.b_cond(A64Cond::Ne, l);
    }

    fn mov_imm(&mut self, d: Gpr, k: i64) {
        self.a.mov_imm_x(d, k as u64);
    }

    fn mov(&mut self, size: Size, d: Gpr, a: Gpr) {
        match size {
            Size::S32 => self.a.mov_w(d, a),
            Size::S64 if d != a => self.a.mov_x(d, a),
            Size::S64 => {}
        }
    }

    fn sext32(&mut self, d: Gpr, a: Gpr) {
        self.a.sxtw(d, a);
    }

    fn alu(&mut self, op: Alu, size: Size, d: Gpr, a: Gpr, b: RegImm<Gpr>) {
        let b = match b {
            RegImm::R(b) => b,
            RegImm::I(k) => {
                let v = Self::value(size, k);
                match op {
                    Alu::Add | Alu::Sub if (-4095..4096).contains(&v) => {
                        // a negative constant is the other operation's positive one
                        let (x, n) = (&mut *self.a, v.unsigned_abs() as u32);
                        return if (op == Alu::Sub) == (v >= 0) {
                            by_size!(size, x, sub_xi / sub_wi(d, a, n))
                        } else {
                            by_size!(size, x, add_xi / add_wi(d, a, n))
                        };
                    }
                    Alu::And | Alu::Or | Alu::Xor if Self::logical(size, k) => {
                        let (x, k64, k32) = (&mut *self.a, k as u64, k as u32);
                        return match (size, op) {
                            (Size::S64, Alu::And) => x.and_xi(d, a, k64),
                            (Size::S64, Alu::Or) => x.orr_xi(d, a, k64),
                            (Size::S64, _) => x.eor_xi(d, a, k64),
                            (Size::S32, Alu::And) => x.and_wi(d, a, k32),
                            (Size::S32, Alu::Or) => x.orr_wi(d, a, k32),
                            (Size::S32, _) => x.eor_wi(d, a, k32),
                        };
                    }
                    _ if v == 0 => ZR,
                    _ => self.materialise(size, k),
                }
            }
        };
        self.op_rrr(op, size, d, a, b);
    }

    fn neg(&mut self, size: Size, d: Gpr, a: Gpr) {
        match size {
            Size::S32 => self.a.sub_w(d, ZR, a),
            Size::S64 => self.a.sub_x(d, ZR, a),
        }
    }

    fn shift(&mut self, op: Shift, size: Size, d: Gpr, a: Gpr, n: u32) {
        let x = &mut *self.a;
        match op {
            Shift::Shl => by_size!(size, x, lsl_xi / lsl_wi(d, a, n)),
            Shift::Shr => by_size!(size, x, lsr_xi / lsr_wi(d, a, n)),
            Shift::Sar => by_size!(size, x, asr_xi / asr_wi(d, a, n)),
        }
    }

    fn shift_var(&mut self, op: Shift, size: Size, d: Gpr, a: Gpr, n: Gpr) {
        let x = &mut *self.a;
        match op {
            Shift::Shl => by_size!(size, x, lsl_x / lsl_w(d, a, n)),
            Shift::Shr => by_size!(size, x, lsr_x / lsr_w(d, a, n)),
            Shift::Sar => by_size!(size, x, asr_x / asr_w(d, a, n)),
        }
    }

    fn ubfx(&mut self, size: Size, d: Gpr, a: Gpr, lsb: u32, width: u32) {
        by_size!(size, self.a, ubfx_x / ubfx_w(d, a, lsb, width));
    }

    fn clz(&mut self, d: Gpr, h: Gpr, a: Gpr) {
        self.a.clz_x(d, a);
        self.a.mov_imm_w(h, 63);
        self.a.sub_x(h, h, d);
    }

    fn umin(&mut self, size: Size, d: Gpr, a: Gpr, b: Gpr) {
        by_size!(size, self.a, cmp_x / cmp_w(a, b));
        by_size!(size, self.a, csel_x / csel_w(d, a, b, A64Cond::Ls));
    }

    fn udiv(&mut self, size: Size, d: Gpr, a: Gpr, b: Gpr) {
        by_size!(size, self.a, udiv_x / udiv_w(d, a, b));
    }

    fn add32_sign_exact(&mut self, sub: bool, d: Gpr, a: Gpr, b: Gpr) {
        let t = self.tmp[0];
        if sub {
            self.a.subs_w(d, a, b);
        } else {
            self.a.adds_w(d, a, b);
        }
        self.a.cset_w(t, A64Cond::Vs);
        self.a.eor_w_lsl(d, d, t, 31);
    }

    fn load(&mut self, size: Size, d: Gpr, base: Gpr, off: i32) {
        match self.offset(size, off) {
            None => by_size!(size, self.a, ldr_x / ldr_w(d, base, off)),
            Some(o) => by_size!(size, self.a, ldr_x_reg / ldr_w_reg(d, base, o)),
        }
    }

    fn store(&mut self, size: Size, base: Gpr, off: i32, s: Gpr) {
        match self.offset(size, off) {
            None => by_size!(size, self.a, str_x / str_w(s, base, off)),
            Some(o) => by_size!(size, self.a, str_x_reg / str_w_reg(s, base, o)),
        }
    }

    fn store_imm(&mut self, size: Size, base: Gpr, off: i32, k: i64) {
        // the constant in the second scratch register: the first may hold the offset
        let s = if Self::value(size, k) == 0 {
            ZR
        } else {
            let t = self.tmp[1];
            self.a.mov_imm_x(t, trunc(size, k));
            t
        };
        self.store(size, base, off, s);
    }

    fn store_idx(&mut self, size: Size, base: Gpr, index: Gpr, off: i32, s: Gpr) {
        // register-offset form: no alignment requirement on `off`
        let t = self.tmp[0];
        match off {
            0..4096 => self.a.add_xi(t, index, off as u32),
            _ => {
                self.a.mov_imm_x(t, off as i64 as u64);
                self.a.add_x(t, t, index);
            }
        }
        by_size!(size, self.a, str_x_reg / str_w_reg(s, base, t));
    }

    fn load_table(&mut self, size: Size, d: Gpr, table: DynamicLabel, idx: Gpr) {
        let t = self.tmp[0];
        self.a.adr(t, table);
        by_size!(size, self.a, ldr_x_idx / ldr_w_idx(d, t, idx));
    }

    fn add_table(&mut self, size: Size, d: Gpr, table: DynamicLabel, idx: Gpr) {
        let t = self.tmp[0];
        self.a.adr(t, table);
        by_size!(size, self.a, ldr_x_idx / ldr_w_idx(t, t, idx));
        by_size!(size, self.a, add_x / add_w(d, d, t));
    }
}
