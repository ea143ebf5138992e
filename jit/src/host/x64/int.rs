//! The x86-64 implementation of the integer macro-assembler ([`IntMasm`]).
//!
//! x86-64 has two-operand forms: `d = a op b` is `op d, b` when `d` is `a`, a copy of `a`
//! into `d` first when `d` is neither source, and `op d, a` for commutative operations when
//! `d` is `b`; a non-commutative operation whose destination is its second source goes
//! through the scratch register. Immediates that do not fit the sign-extended imm32 fields
//! go through the scratch register too, as do a few sequences that need a temporary
//! ([`IntMasm::add32_sign_exact`]).
//!
//! Every general-purpose register may be pinned by some client, so the scratch register is
//! the client's choice (`X64Int::new`; see the conventions in `crate::host::int`).

use super::abi::Frame;
use super::asm::Asm;
use super::regs::{Gpr, RAX, RCX, RDX};
use crate::host::int::{by_size, delegate_to_asm, Alu, Cond, IntMasm, RegImm, Shift, Size};
use dynasmrt::DynamicLabel;

/// The integer macro-assembler over an x86-64 [`Asm`].
pub struct X64Int<'a> {
    /// The assembler the code goes to.
    pub a: &'a mut Asm,
    /// The register the sequences clobber (see the module documentation).
    tmp: Gpr,
}

impl<'a> X64Int<'a> {
    /// A masm emitting into `a`, clobbering `tmp` where a sequence needs a register.
    pub fn new(a: &'a mut Asm, tmp: Gpr) -> Self {
        X64Int { a, tmp }
    }

    /// `d = a` ahead of a two-operand `op d, b` (nothing when `d` is `a`).
    fn first(&mut self, size: Size, d: Gpr, a: Gpr) {
        if d != a {
            self.mov(size, d, a);
        }
    }

    /// `op d, s` on registers.
    fn op_rr(&mut self, op: Alu, size: Size, d: Gpr, s: Gpr) {
        let a = &mut *self.a;
        match op {
            Alu::Add => by_size!(size, a, add_rr64 / add_rr32(d, s)),
            Alu::Sub => by_size!(size, a, sub_rr64 / sub_rr32(d, s)),
            Alu::And => by_size!(size, a, and_rr64 / and_rr32(d, s)),
            Alu::Or => by_size!(size, a, or_rr64 / or_rr32(d, s)),
            Alu::Xor => by_size!(size, a, xor_rr64 / xor_rr32(d, s)),
            Alu::Mul => by_size!(size, a, imul_rr64 / imul_rr32(d, s)),
        }
    }

    /// `op d, k` (`op` not [`Alu::Mul`]).
    fn op_ri(&mut self, op: Alu, size: Size, d: Gpr, k: i32) {
        let a = &mut *self.a;
        match op {
            Alu::Add => by_size!(size, a, add_ri64 / add_ri32(d, k)),
            Alu::Sub => by_size!(size, a, sub_ri64 / sub_ri32(d, k)),
            Alu::And => by_size!(size, a, and_ri64 / and_ri32(d, k)),
            Alu::Or => by_size!(size, a, or_ri64 / or_ri32(d, k)),
            Alu::Xor => by_size!(size, a, xor_ri64 / xor_ri32(d, k)),
            Alu::Mul => unreachable!("multiplications by a constant use imul's three-operand form"),
        }
    }

    /// The imm32 field's value for `k` at `size`: the low 32 bits of a 32-bit operation's
    /// constant, a 64-bit constant when sign-extending 32 bits gives it back.
    fn imm32(size: Size, k: i64) -> Option<i32> {
        match size {
            Size::S32 => Some(k as i32),
            Size::S64 => i32::try_from(k).ok(),
        }
    }
}

impl IntMasm for X64Int<'_> {
    delegate_to_asm!(jmp);

    fn jcc(&mut self, c: Cond, l: DynamicLabel) {
        let a = &mut *self.a;
        match c {
            Cond::Eq => a.je(l),
            Cond::Ne => a.jne(l),
            Cond::Lo => a.jb(l),
            Cond::Ls => a.jbe(l),
            Cond::Hi => a.ja(l),
            Cond::Hs => a.jae(l),
            Cond::Lt => a.jl(l),
            Cond::Le => a.jle(l),
            Cond::Gt => a.jg(l),
            Cond::Ge => a.jge(l),
        }
    }

    fn cmp(&mut self, size: Size, a: Gpr, b: RegImm<Gpr>) {
        match (size, b) {
            // `test r, r` sets every flag a comparison with zero sets, in fewer bytes.
            (Size::S32, RegImm::I(k)) if k as i32 == 0 => self.a.test_rr32(a, a),
            (Size::S64, RegImm::I(0)) => self.a.test_rr64(a, a),
            (Size::S32, RegImm::I(k)) => self.a.cmp_ri32(a, k as i32),
            (Size::S64, RegImm::I(k)) => match i32::try_from(k) {
                Ok(k) => self.a.cmp_ri64(a, k),
                Err(_) => {
                    self.mov_imm(self.tmp, k);
                    self.a.cmp_rr64(a, self.tmp);
                }
            },
            (Size::S32, RegImm::R(b)) => self.a.cmp_rr32(a, b),
            (Size::S64, RegImm::R(b)) => self.a.cmp_rr64(a, b),
        }
    }

    fn cmp_mem(&mut self, size: Size, base: Gpr, off: i32, b: RegImm<Gpr>) {
        let b = match b {
            RegImm::I(k) => match (size, Self::imm32(size, k)) {
                (Size::S32, Some(k)) => return self.a.cmp_mi32(base, off, k),
                (Size::S64, Some(k)) => return self.a.cmp_mi64(base, off, k),
                (_, None) => {
                    self.mov_imm(self.tmp, k);
                    self.tmp
                }
            },
            RegImm::R(b) => b,
        };
        match size {
            Size::S32 => self.a.cmp_mr32(base, off, b),
            Size::S64 => self.a.cmp_mr64(base, off, b),
        }
    }

    fn test_bit(&mut self, a: Gpr, bit: u32) {
        if bit < 31 {
            self.a.test_ri64(a, 1 << bit);
        } else {
            self.mov_imm(self.tmp, 1 << bit);
            self.a.test_rr64(a, self.tmp);
        }
    }

    fn dec_branch_nz(&mut self, size: Size, r: Gpr, l: DynamicLabel) {
        by_size!(size, self.a, sub_ri64_8 / sub_ri32_8(r, 1));
        self.a.jne(l);
    }

    fn mov_imm(&mut self, d: Gpr, k: i64) {
        match u32::try_from(k) {
            // `mov r32, imm32` zero-extends and leaves the flags alone (unlike `xor`).
            Ok(k) => self.a.mov_ri32(d, k as i32),
            Err(_) => self.a.mov_ri64(d, k),
        }
    }

    fn mov(&mut self, size: Size, d: Gpr, a: Gpr) {
        match size {
            Size::S32 => self.a.mov_rr32(d, a),
            Size::S64 if d != a => self.a.mov_rr64(d, a),
            Size::S64 => {}
        }
    }

    fn sext32(&mut self, d: Gpr, a: Gpr) {
        self.a.movsxd(d, a);
    }

    fn alu(&mut self, op: Alu, size: Size, d: Gpr, a: Gpr, b: RegImm<Gpr>) {
        let b = match b {
            RegImm::R(b) => b,
            RegImm::I(k) => match Self::imm32(size, k) {
                Some(k) if op == Alu::Mul => {
                    return by_size!(size, self.a, imul_rri64 / imul_rri32(d, a, k));
                }
                Some(k) => {
                    self.first(size, d, a);
                    self.op_ri(op, size, d, k);
                    return;
                }
                None => {
                    self.mov_imm(self.tmp, k);
                    self.tmp
                }
            },
        };
        let commutes = op != Alu::Sub;
        if d == a {
            self.op_rr(op, size, d, b);
        } else if d != b {
            self.mov(size, d, a);
            self.op_rr(op, size, d, b);
        } else if commutes {
            self.op_rr(op, size, d, a);
        } else {
            let t = self.tmp;
            self.mov(size, t, a);
            self.op_rr(op, size, t, b);
            self.mov(size, d, t);
        }
    }

    fn neg(&mut self, size: Size, d: Gpr, a: Gpr) {
        self.first(size, d, a);
        by_size!(size, self.a, neg_r64 / neg_r32(d));
    }

    fn shift(&mut self, op: Shift, size: Size, d: Gpr, a: Gpr, n: u32) {
        self.first(size, d, a);
        let (x, n) = (&mut *self.a, n as u8);
        match op {
            Shift::Shl => by_size!(size, x, shl_ri64 / shl_ri32(d, n)),
            Shift::Shr => by_size!(size, x, shr_ri64 / shr_ri32(d, n)),
            Shift::Sar => by_size!(size, x, sar_ri64 / sar_ri32(d, n)),
        }
    }

    fn shift_var(&mut self, op: Shift, size: Size, d: Gpr, a: Gpr, n: Gpr) {
        assert!(n == RCX && d != RCX, "x86-64 shifts by cl only");
        self.first(size, d, a);
        let x = &mut *self.a;
        match op {
            Shift::Shl => by_size!(size, x, shl_rcl64 / shl_rcl32(d)),
            Shift::Shr => by_size!(size, x, shr_rcl64 / shr_rcl32(d)),
            Shift::Sar => by_size!(size, x, sar_rcl64 / sar_rcl32(d)),
        }
    }

    fn ubfx(&mut self, size: Size, d: Gpr, a: Gpr, lsb: u32, width: u32) {
        let bits = match size {
            Size::S32 => 32,
            Size::S64 => 64,
        };
        debug_assert!(width > 0 && lsb + width <= bits);
        self.shift(Shift::Shr, size, d, a, lsb);
        if lsb + width < bits {
            match width {
                // `and r32` clears the upper half too
                1..=31 => self.a.and_ri32(d, ((1u32 << width) - 1) as i32),
                32 => self.a.mov_rr32(d, d),
                _ => {
                    self.mov_imm(self.tmp, ((1u64 << width) - 1) as i64);
                    self.a.and_rr64(d, self.tmp);
                }
            }
        }
    }

    fn clz(&mut self, d: Gpr, h: Gpr, a: Gpr) {
        // From the highest set bit (`lzcnt` would need a feature test).
        self.a.bsr_rr64(h, a);
        self.a.mov_ri32(d, 63);
        self.a.sub_rr64(d, h);
    }

    fn umin(&mut self, size: Size, d: Gpr, a: Gpr, b: Gpr) {
        // `min` commutes: keep whichever source `d` is.
        let (a, b) = if d == b { (b, a) } else { (a, b) };
        self.first(size, d, a);
        by_size!(size, self.a, cmp_rr64 / cmp_rr32(d, b));
        by_size!(size, self.a, cmova_rr64 / cmova_rr32(d, b));
    }

    fn udiv(&mut self, size: Size, d: Gpr, a: Gpr, b: Gpr) {
        // `div` divides rdx:rax and writes both: save them unless `d` or the scratch register
        // is the one written.
        assert!(
            b != RAX && b != RDX,
            "the divisor must survive rax and rdx being set"
        );
        let save: Vec<Gpr> = [RAX, RDX]
            .into_iter()
            .filter(|&r| r != d && r != self.tmp)
            .collect();
        for &r in &save {
            self.a.push(r);
        }
        by_size!(size, self.a, mov_rr64 / mov_rr32(RAX, a));
        self.a.xor_rr32(RDX, RDX);
        by_size!(size, self.a, div_r64 / div_r32(b));
        by_size!(size, self.a, mov_rr64 / mov_rr32(d, RAX));
        for &r in save.iter().rev() {
            self.a.pop(r);
        }
    }

    fn add32_sign_exact(&mut self, sub: bool, d: Gpr, a: Gpr, b: Gpr) {
        let t = self.tmp;
        self.a.mov_rr32(t, a);
        if sub {
            self.a.sub_rr32(t, b);
        } else {
            self.a.add_rr32(t, b);
        }
        // overflow is rare: a branch costs less than materialising the flag
        let ok = self.a.new_label();
        self.a.jno(ok);
        self.a.xor_ri32(t, i32::MIN);
        self.a.bind(ok);
        self.a.mov_rr32(d, t);
    }

    fn load(&mut self, size: Size, d: Gpr, base: Gpr, off: i32) {
        by_size!(size, self.a, mov_rm64 / mov_rm32(d, base, off));
    }

    fn store(&mut self, size: Size, base: Gpr, off: i32, s: Gpr) {
        by_size!(size, self.a, mov_mr64 / mov_mr32(base, off, s));
    }

    fn store_imm(&mut self, size: Size, base: Gpr, off: i32, k: i64) {
        match (size, Self::imm32(size, k)) {
            (Size::S32, Some(k)) => self.a.mov_mi32(base, off, k),
            (Size::S64, Some(k)) => self.a.mov_mi64(base, off, k),
            (_, None) => {
                self.mov_imm(self.tmp, k);
                self.a.mov_mr64(base, off, self.tmp);
            }
        }
    }

    fn store_idx(&mut self, size: Size, base: Gpr, index: Gpr, off: i32, s: Gpr) {
        by_size!(
            size,
            self.a,
            mov_mr64_idx / mov_mr32_idx(base, index, off, s)
        );
    }

    fn load_table(&mut self, size: Size, d: Gpr, table: DynamicLabel, idx: Gpr) {
        self.a.lea_label(self.tmp, table);
        by_size!(size, self.a, mov_r64_idx8 / mov_r32_idx4(d, self.tmp, idx));
    }

    fn add_table(&mut self, size: Size, d: Gpr, table: DynamicLabel, idx: Gpr) {
        self.a.lea_label(self.tmp, table);
        by_size!(size, self.a, add_r64_idx8 / add_r32_idx4(d, self.tmp, idx));
    }
}
