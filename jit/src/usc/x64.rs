//! x86-64 AVX2 code generation for USC programs (see the module docs of [`super`]).
//!
//! Registers: `rbx` the context, `r12`-`r15` the r/vi/i/idx banks, `rbp` the shared bank;
//! ymm0-ymm5 hold ft0-ft5 of the half being computed, ymm6 ftt, ymm7/ymm8 W0/W1, ymm9 the
//! execution mask, ymm10-ymm15 temporaries. Every group starts with the budget check, as the
//! interpreter's loop does.

use super::{exit, off, Site, UscCode, FAILED, NEXT};
use crate::batch::asm::{pred, Yasm, Ymm};
use crate::x64::asm::{Asm, Mem};
use crate::x64::regs::{Gpr, R12, R13, R14, R15, RAX, RBP, RBX, RCX, RDI, RSI};
use dynasmrt::{DynamicLabel, DynasmApi};
use picajit_interp::usc::program::{
    Bank, BranchMode, Group, Instr, Operand, Pred, Reg, SignPos, TestType,
};
use picajit_interp::usc::table::{Op, Unit};
use picajit_interp::usc::{consts, Prepared};

macro_rules! x64 {
    ($ops:expr; $($t:tt)*) => {
        dynasm::dynasm!($ops ; .arch x64 ; $($t)*)
    };
}

const FTT: Ymm = Ymm(6);
const W0: Ymm = Ymm(7);
const W1: Ymm = Ymm(8);
const M: Ymm = Ymm(9);
const T: [Ymm; 6] = [Ymm(10), Ymm(11), Ymm(12), Ymm(13), Ymm(14), Ymm(15)];

fn ft(n: u8) -> Ymm {
    Ymm(n)
}

/// Whether the backend lowers `g` itself (otherwise the group calls the interpreter).
pub fn native(p: &Prepared, gi: usize) -> bool {
    let g = &p.groups[gi];
    let shared_dst = |o: &Operand| matches!(o, Operand::Reg(r, _) if !r.bank.per_instance());
    g.instrs.iter().all(|ins| {
        let info = ins.info.expect("prepared programs are in scope");
        let o = &ins.operands;
        match info.op {
            Op::Fmad | Op::Fadd | Op::Fmul | Op::Mbyp | Op::Mov | Op::Movc => true,
            Op::Frcp | Op::Fsqrt | Op::Frsq | Op::Flog | Op::Fexp => !shared_dst(&o[0]),
            // The unsigned 32-bit multiply-add without modifiers (its carry is never set).
            Op::Umadd32 => o[1..4].iter().all(|x| x.mods().is_empty()),
            Op::Write | Op::MovcWrite => !shared_dst(&o[0]),
            Op::Tstz
            | Op::Tstgz
            | Op::Tstgez
            | Op::Tste
            | Op::Tstg
            | Op::Tstge
            | Op::Tstne
            | Op::Tstl
            | Op::Tstle
            | Op::Tstmin
            | Op::Tstmax => true,
            Op::Byp
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Nand
            | Op::Nor
            | Op::Xnor
            | Op::Lsl
            | Op::Shr
            | Op::Rol
            | Op::Cps
            | Op::Tz
            | Op::Tnz => true,
            Op::Asr => ins.mods.signpos == Some(SignPos::Twb),
            Op::Cndst | Op::Cndef | Op::Cndlt => !shared_dst(&o[1]),
            Op::Cndend => !shared_dst(&o[0]),
            Op::Ba | Op::Br => true,
            _ => false,
        }
    })
}

struct Gen<'p> {
    a: Asm,
    p: &'p Prepared,
    labels: Vec<DynamicLabel>,
    budget_exit: DynamicLabel,
    failed_exit: DynamicLabel,
    done_exit: DynamicLabel,
    sites: Vec<Site>,
}

impl<'p> Gen<'p> {
    fn y(&mut self) -> Yasm<'_> {
        Yasm::new(&mut self.a)
    }

    fn splat(&mut self, v: u32) -> Mem {
        self.y().splat(v)
    }

    /// Address of a per-instance register's half `h`.
    fn lane_mem(r: Reg, h: usize) -> Mem {
        let base = match r.bank {
            Bank::R => R12,
            Bank::Vi => R13,
            Bank::I => R14,
            _ => R15,
        };
        Mem::Base(base, i32::from(r.index) * 64 + h as i32 * 32)
    }

    /// The raw value of `o` for half `h` in `d`, or the feed-through register holding it.
    fn raw(&mut self, o: &Operand, h: usize, d: Ymm) -> Ymm {
        match o {
            Operand::Ft(n, _) => ft(*n),
            Operand::Reg(r, _) => {
                match r.bank {
                    Bank::R | Bank::Vi | Bank::I | Bank::Idx => {
                        let m = Self::lane_mem(*r, h);
                        self.y().vmovups(d, m);
                    }
                    Bank::Sh => {
                        self.y()
                            .vbroadcastss(d, Mem::Base(RBP, i32::from(r.index) * 4));
                    }
                    Bank::Cf => {
                        self.a.mov_rm64(RAX, RBX, off::CF);
                        self.y()
                            .vbroadcastss(d, Mem::Base(RAX, i32::from(r.index) * 4));
                    }
                    Bank::C => {
                        let m = self.splat(consts::special(r.index).unwrap_or(0));
                        self.y().vmovups(d, m);
                    }
                }
                d
            }
            Operand::Imm(v) => {
                let m = self.splat(*v as u32);
                self.y().vmovups(d, m);
                d
            }
            _ => {
                self.y().vpxor(d, d, d);
                d
            }
        }
    }

    /// `o` with its float modifiers (.flr, .abs, .neg) applied, in `d` (or a feed-through
    /// register when it has none).
    fn fsrc(&mut self, o: &Operand, h: usize, d: Ymm) -> Ymm {
        let m = o.mods();
        let v = self.raw(o, h, d);
        if !(m.flr || m.abs || m.neg) {
            return v;
        }
        if v != d {
            self.y().vmovaps(d, v);
        }
        if m.flr {
            self.y().vroundps(d, d, 9);
        }
        if m.abs {
            let c = self.splat(0x7FFF_FFFF);
            self.y().vandps(d, d, c);
        }
        if m.neg {
            let c = self.splat(0x8000_0000);
            self.y().vxorps(d, d, c);
        }
        d
    }

    /// NaN results become the canonical NaN; `.sat` clamps to [+0, 1].
    fn finish_float(&mut self, d: Ymm, sat: bool) {
        let abs = self.splat(0x7FFF_FFFF);
        let inf = self.splat(0x7F80_0000);
        let nan = self.splat(0x7FC0_0000);
        self.y().vandps(T[4], d, abs);
        self.y().vpcmpgtd(T[4], T[4], inf);
        self.y().vmovups(T[5], nan);
        self.y().vblendvps(d, d, T[5], T[4]);
        if sat {
            let zero = self.splat(0);
            let one = self.splat(0x3F80_0000);
            self.y().vmaxps(d, d, zero);
            self.y().vminps(d, d, one);
        }
    }

    /// A byte mask from `.eN` bits (all bytes when none or all are named).
    fn byte_mask(elems: u8) -> u32 {
        if elems == 0 || elems == 0xF {
            return u32::MAX;
        }
        (0..4)
            .filter(|k| elems >> k & 1 != 0)
            .fold(0, |m, k| m | 0xFF << (8 * k))
    }

    /// `d = (v & bytes) | (rest & !bytes)`.
    fn merge(&mut self, d: Ymm, v: Ymm, elems: u8, rest: Ymm) {
        let bm = Self::byte_mask(elems);
        if bm == u32::MAX {
            if d != v {
                self.y().vmovaps(d, v);
            }
            return;
        }
        let c = self.splat(bm);
        self.y().vmovups(T[5], c);
        self.y().vpand(T[4], v, T[5]);
        self.y().vpandn(d, T[5], rest);
        self.y().vpor(d, d, T[4]);
    }

    /// Records the lanes of `mask` as having written `site`.
    fn site(&mut self, s: Site, mask: Ymm) {
        // One word per distinct register: the run marks each written register once.
        let k = match self.sites.iter().position(|x| *x == s) {
            Some(k) => k as i32,
            None => {
                self.sites.push(s);
                self.sites.len() as i32 - 1
            }
        };
        self.y().vmovmskps(RAX, mask);
        self.a.mov_rm64(RCX, RBX, off::SITES);
        x64!(self.a.ops; or DWORD [rcx + 4 * k], eax);
    }

    /// Stores `v` into per-instance register `r` (half `h`) in the lanes of `mask` (and the
    /// bytes of `elems`).
    fn store_lanes(&mut self, r: Reg, h: usize, v: Ymm, mask: Ymm, elems: u8) {
        let mem = Self::lane_mem(r, h);
        let bm = Self::byte_mask(elems);
        let sel = if bm == u32::MAX {
            mask
        } else {
            let c = self.splat(bm);
            self.y().vpand(T[5], mask, c);
            T[5]
        };
        self.y().vmovups(T[4], mem);
        // Byte-granular blend: and/andn/or.
        self.y().vpand(T[3], v, sel);
        self.y().vpandn(T[4], sel, T[4]);
        self.y().vpor(T[3], T[3], T[4]);
        self.y().store(mem, T[3], false);
        self.site(Site::Reg(r), mask);
    }

    /// The execution mask of a group for half `h` into `M`.
    fn exec_mask(&mut self, g: &Group, h: usize) {
        let hs = h as i32 * 32;
        self.y().vmovups(M, Mem::Base(RBX, off::LANES + hs));
        if !g.ignore_pe {
            self.y().vpand(M, M, Mem::Base(RBX, off::PE + hs));
        }
        match g.pred {
            Pred::Always => {}
            Pred::P0 => self.y().vpand(M, M, Mem::Base(RBX, off::P0 + hs)),
            Pred::NotP0 => {
                self.y().vmovups(T[0], Mem::Base(RBX, off::P0 + hs));
                self.y().vpandn(M, T[0], M);
            }
        }
    }

    fn budget_check(&mut self) {
        self.a.mov_rm64(RAX, RBX, off::STEPS);
        self.a.cmp_rm64(RAX, RBX, off::BUDGET);
        let l = self.budget_exit;
        self.a.jae(l);
        self.a.add_mi64(RBX, off::STEPS, 1);
    }

    fn helper_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        self.y().vzeroupper();
        self.a.mov_rr64(RDI, RBX);
        self.a.mov_ri32(RSI, gi as i32);
        self.a.mov_rm64(RAX, RBX, off::HELPER);
        self.a.call_r(RAX);
        self.a.cmp_ri32(RAX, NEXT as i32);
        let next = self.a.new_label();
        self.a.je(next);
        self.a.cmp_ri32(RAX, FAILED as i32);
        let f = self.failed_exit;
        self.a.je(f);
        // A jump: to the static target of a branch, or any group (LAPC).
        let op = g.instrs[0].op();
        let targets: Vec<usize> = match (op, self.p.targets[gi]) {
            (Some(Op::Bal | Op::Brl | Op::Ba | Op::Br), Some(t)) => vec![t],
            _ => (0..self.p.groups.len()).collect(),
        };
        for t in targets {
            self.a.cmp_ri32(RAX, t as i32);
            let l = self.labels[t];
            self.a.je(l);
        }
        // Past the last group: done.
        let d = self.done_exit;
        self.a.jmp(d);
        self.a.bind(next);
    }

    /// FRSQ, FLOG, FEXP: both halves' sources into the scratch area, one call of the float
    /// model's function per lane, then masked stores.
    fn complex_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        let ins = &g.instrs[0];
        let op = ins.op().unwrap();
        for h in 0..2 {
            let v = self.fsrc(&ins.operands[1], h, T[0]);
            self.y()
                .store(Mem::Base(RBX, off::SCRATCH + 32 * h as i32), v, false);
        }
        self.y().vzeroupper();
        let code = match op {
            Op::Frsq => 0,
            Op::Flog => 1,
            _ => 2,
        };
        self.a.mov_ri32(RDI, code);
        x64!(self.a.ops; lea rsi, [rbx + off::SCRATCH]);
        self.a.mov_ri64(RAX, super::complex_fn() as i64);
        self.a.call_r(RAX);
        for h in 0..2 {
            self.exec_mask(g, h);
            self.y()
                .vmovups(T[0], Mem::Base(RBX, off::SCRATCH + 32 * h as i32));
            if let Operand::Reg(r, _) = ins.operands[0] {
                self.store_lanes(r, h, T[0], M, 0);
            }
        }
    }

    fn alu_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        let drivers = self.p.drivers[gi];
        let fused = self.p.options.fused_fmad;
        for h in 0..2 {
            let hs = h as i32 * 32;
            self.exec_mask(g, h);
            let mut p0_pending = false;
            let mut w_ready = false;
            // Writes wait in the scratch area until every value of the group is computed: a
            // group reads the registers as they were before it.
            let mut writes: Vec<(Reg, u8, i32)> = Vec::new();
            for ins in &g.instrs {
                let info = ins.info.unwrap();
                let o = &ins.operands;
                let sat = ins.mods.sat;
                if !w_ready && matches!(info.unit, Unit::MovUnit | Unit::Write) {
                    for (w, d) in [(W0, drivers[0]), (W1, drivers[1])] {
                        match d {
                            Some(n) => self.y().vmovaps(w, ft(n)),
                            None => self.y().vpxor(w, w, w),
                        }
                    }
                    w_ready = true;
                }
                let dst_ft = match o.first() {
                    Some(Operand::Ft(n, _)) => ft(*n),
                    _ => T[0],
                };
                match info.op {
                    Op::Fadd | Op::Fmul => {
                        let a = self.fsrc(&o[1], h, T[0]);
                        let b = self.fsrc(&o[2], h, T[1]);
                        if info.op == Op::Fadd {
                            self.y().vaddps(dst_ft, a, b);
                        } else {
                            self.y().vmulps(dst_ft, a, b);
                        }
                        self.finish_float(dst_ft, sat);
                    }
                    Op::Fmad => {
                        let a = self.fsrc(&o[1], h, T[0]);
                        let b = self.fsrc(&o[2], h, T[1]);
                        let c = self.fsrc(&o[3], h, T[2]);
                        if fused {
                            self.y().vmovaps(T[3], c);
                            self.y().vfmadd231ps(T[3], a, b);
                            self.y().vmovaps(dst_ft, T[3]);
                        } else {
                            self.y().vmulps(T[3], a, b);
                            self.y().vaddps(dst_ft, T[3], c);
                        }
                        self.finish_float(dst_ft, sat);
                    }
                    Op::Mbyp => {
                        let v = self.fsrc(&o[1], h, T[0]);
                        self.y().vmovaps(dst_ft, v);
                    }
                    Op::Umadd32 => {
                        // 64-bit S0 * S1 + S2 (+ p0) per lane: even lanes through one
                        // vpmuludq, odd lanes through another on the words shifted down.
                        let a = self.raw(&o[1], h, T[0]);
                        if a != T[0] {
                            self.y().vmovaps(T[0], a);
                        }
                        let b = self.raw(&o[2], h, T[1]);
                        if b != T[1] {
                            self.y().vmovaps(T[1], b);
                        }
                        let c = self.raw(&o[3], h, T[2]);
                        if c != T[2] {
                            self.y().vmovaps(T[2], c);
                        }
                        let cin = o[4] == Operand::P0;
                        if cin {
                            let one = self.splat(1);
                            self.y().vmovups(W1, Mem::Base(RBX, off::P0 + hs));
                            self.y().vpand(W1, W1, one);
                        }
                        let lo = self.y().splat64(0xFFFF_FFFF);
                        let hi = self.y().splat64(0xFFFF_FFFF_0000_0000);
                        self.y().vpmuludq(T[3], T[0], T[1]);
                        self.y().vpand(T[4], T[2], lo);
                        self.y().vpaddq(T[3], T[3], T[4]);
                        if cin {
                            self.y().vpand(T[4], W1, lo);
                            self.y().vpaddq(T[3], T[3], T[4]);
                        }
                        self.y().vpsrlq(T[0], T[0], 32);
                        self.y().vpsrlq(T[1], T[1], 32);
                        self.y().vpmuludq(T[5], T[0], T[1]);
                        self.y().vpsrlq(T[0], T[2], 32);
                        self.y().vpaddq(T[5], T[5], T[0]);
                        if cin {
                            self.y().vpsrlq(T[0], W1, 32);
                            self.y().vpaddq(T[5], T[5], T[0]);
                        }
                        // ft0 = low words, ft1 = high words.
                        self.y().vpand(ft(0), T[3], lo);
                        self.y().vpsllq(T[0], T[5], 32);
                        self.y().vpor(ft(0), ft(0), T[0]);
                        self.y().vpsrlq(ft(1), T[3], 32);
                        self.y().vpand(T[0], T[5], hi);
                        self.y().vpor(ft(1), ft(1), T[0]);
                    }
                    Op::Frcp | Op::Fsqrt => {
                        let v = self.fsrc(&o[1], h, T[0]);
                        if info.op == Op::Frcp {
                            let one = self.splat(0x3F80_0000);
                            self.y().vmovups(T[1], one);
                            self.y().vdivps(T[1], T[1], v);
                        } else {
                            self.y().vsqrtps(T[1], v);
                        }
                        self.finish_float(T[1], false);
                        if let Operand::Reg(r, _) = o[0] {
                            self.store_lanes(r, h, T[1], M, 0);
                        }
                    }
                    Op::Tstz
                    | Op::Tstgz
                    | Op::Tstgez
                    | Op::Tste
                    | Op::Tstg
                    | Op::Tstge
                    | Op::Tstne
                    | Op::Tstl
                    | Op::Tstle
                    | Op::Tstmin
                    | Op::Tstmax => {
                        self.test(ins, h);
                        if o[1] == Operand::P0 {
                            self.y().store(Mem::Base(RBX, off::SCRATCH), FTT, false);
                            p0_pending = true;
                        }
                    }
                    Op::Mov => {
                        let v = self.raw(&o[1], h, T[0]);
                        self.merge(W0, v, o[0].mods().elems, W0);
                    }
                    Op::Movc => {
                        let t0 = self.raw(&o[3], h, T[0]);
                        self.merge(T[1], t0, o[0].mods().elems, W0);
                        self.y().vblendvps(W0, W0, T[1], FTT);
                        if matches!(o[1], Operand::W(1, _)) {
                            let t1 = self.raw(&o[4], h, T[2]);
                            self.y().vblendvps(W1, W1, t1, FTT);
                        }
                    }
                    Op::MovcWrite => {
                        let e = self.wsrc(&o[1], h, T[0]);
                        if e != T[0] {
                            self.y().vmovaps(T[0], e);
                        }
                        let t0 = self.raw(&o[3], h, T[1]);
                        self.merge(T[2], t0, o[0].mods().elems, T[0]);
                        self.y().vblendvps(W0, T[0], T[2], FTT);
                        let t1 = self.raw(&o[4], h, T[1]);
                        self.y().vblendvps(W1, W1, t1, FTT);
                        if let Operand::Reg(r, _) = o[0] {
                            let slot = off::SCRATCH + 64 + 32 * writes.len() as i32;
                            self.y().store(Mem::Base(RBX, slot), W0, false);
                            writes.push((r, 0, slot));
                        }
                    }
                    Op::Write => {
                        let v = self.wsrc(&o[1], h, T[0]);
                        if let Operand::Reg(r, m) = o[0] {
                            let slot = off::SCRATCH + 64 + 32 * writes.len() as i32;
                            self.y().store(Mem::Base(RBX, slot), v, false);
                            writes.push((r, m.elems, slot));
                        }
                    }
                    Op::Byp => match info.unit {
                        Unit::BitMask => {
                            let a = self.raw(&o[2], h, T[0]);
                            self.y().vmovaps(ft(0), a);
                            let b = self.raw(&o[3], h, T[1]);
                            self.y().vmovaps(ft(1), b);
                        }
                        _ => {
                            let v = self.raw(&o[1], h, T[0]);
                            self.y().vmovaps(dst_ft, v);
                        }
                    },
                    Op::And | Op::Or | Op::Xor | Op::Nand | Op::Nor | Op::Xnor => {
                        self.y().vmovaps(T[0], ft(2));
                        if o[1] != Operand::Blank {
                            self.y().vpand(T[0], T[0], ft(1));
                        }
                        let b = self.raw(&o[4], h, T[1]);
                        if o[3] != Operand::Blank {
                            self.y().vpandn(T[1], ft(1), b);
                        } else if b != T[1] {
                            self.y().vmovaps(T[1], b);
                        }
                        match info.op {
                            Op::And | Op::Nand => self.y().vpand(ft(4), T[0], T[1]),
                            Op::Or | Op::Nor => self.y().vpor(ft(4), T[0], T[1]),
                            _ => self.y().vpxor(ft(4), T[0], T[1]),
                        }
                        if matches!(info.op, Op::Nand | Op::Nor | Op::Xnor) {
                            self.y().vpcmpeqd(T[2], T[2], T[2]);
                            self.y().vpxor(ft(4), ft(4), T[2]);
                        }
                    }
                    Op::Lsl | Op::Shr | Op::Rol | Op::Asr => {
                        let x = self.raw(&o[1], h, T[0]);
                        let n = self.raw(&o[2], h, T[1]);
                        let m31 = self.splat(31);
                        self.y().vpand(T[1], n, m31);
                        match info.op {
                            Op::Lsl => self.y().vpsllvd(dst_ft, x, T[1]),
                            Op::Shr => self.y().vpsrlvd(dst_ft, x, T[1]),
                            Op::Asr => self.y().vpsravd(dst_ft, x, T[1]),
                            _ => {
                                let c32 = self.splat(32);
                                self.y().vmovups(T[2], c32);
                                self.y().vpsubd(T[2], T[2], T[1]);
                                self.y().vpsrlvd(T[2], x, T[2]);
                                self.y().vpsllvd(T[3], x, T[1]);
                                self.y().vpor(dst_ft, T[3], T[2]);
                            }
                        }
                    }
                    Op::Cps => {
                        let s4 = self.raw(&o[3], h, T[0]);
                        self.y().vpandn(T[1], ft(4), s4);
                        self.y().vpand(T[2], ft(4), Mem::Base(RBX, off::P0 + hs));
                        self.y().vpor(ft(5), T[1], T[2]);
                    }
                    Op::Tz | Op::Tnz => {
                        let v = self.raw(&o[1], h, T[0]);
                        self.y().vpxor(T[1], T[1], T[1]);
                        self.y().vpcmpeqd(T[1], T[1], v);
                        if info.op == Op::Tnz {
                            self.y().vpcmpeqd(T[2], T[2], T[2]);
                            self.y().vpxor(T[1], T[1], T[2]);
                        }
                        self.y().store(Mem::Base(RBX, off::SCRATCH), T[1], false);
                        p0_pending = true;
                    }
                    _ => unreachable!("native() admits only the forms above"),
                }
            }
            for (r, elems, slot) in writes {
                self.y().vmovups(T[0], Mem::Base(RBX, slot));
                self.store_lanes(r, h, T[0], M, elems);
            }
            if p0_pending {
                // p0 = (p0 & !M) | (new & M), written after the group's reads.
                self.y().vmovups(T[0], Mem::Base(RBX, off::SCRATCH));
                self.y().vmovups(T[1], Mem::Base(RBX, off::P0 + hs));
                self.y().vblendvps(T[1], T[1], T[0], M);
                self.y().store(Mem::Base(RBX, off::P0 + hs), T[1], false);
                self.site(Site::P0, M);
            }
        }
    }

    /// A write source's value (feed-through, W0/W1 or register) for half `h`.
    fn wsrc(&mut self, o: &Operand, h: usize, d: Ymm) -> Ymm {
        match o {
            Operand::W(0, _) => W0,
            Operand::W(_, _) => W1,
            _ => self.raw(o, h, d),
        }
    }

    /// An element of the test's type: `(v >> 8e) & 0xFF`, sign-extended for signed types.
    fn element(&mut self, d: Ymm, v: Ymm, ty: TestType, e: u8) {
        let (width, signed) = match ty {
            TestType::U8 => (8, false),
            TestType::S8 => (8, true),
            TestType::U16 => (16, false),
            TestType::S16 => (16, true),
            _ => {
                if d != v {
                    self.y().vmovaps(d, v);
                }
                return;
            }
        };
        let top = 32 - width * (u32::from(e) + 1);
        self.y().vpslld(d, v, top as u8);
        if signed {
            self.y().vpsrad(d, d, (32 - width) as u8);
        } else {
            self.y().vpsrld(d, d, (32 - width) as u8);
        }
    }

    /// A test's result mask into FTT.
    fn test(&mut self, ins: &Instr, h: usize) {
        let op = ins.op().unwrap();
        let o = &ins.operands;
        let ty = ins.mods.ty.unwrap_or(TestType::F32);
        let one_operand = matches!(op, Op::Tstz | Op::Tstgz | Op::Tstgez);
        let a0 = self.raw(&o[2], h, T[0]);
        self.element(T[0], a0, ty, o[2].mods().element());
        if one_operand {
            self.y().vpxor(T[1], T[1], T[1]);
        } else {
            let b0 = self.raw(&o[3], h, T[1]);
            self.element(T[1], b0, ty, o[3].mods().element());
        }
        let (a, b) = (T[0], T[1]);
        if ty == TestType::F32 {
            // a OP b with IEEE unordered semantics.
            let (x, y, p) = match op {
                Op::Tstz | Op::Tste => (a, b, pred::EQ),
                Op::Tstne => (a, b, pred::NEQ),
                Op::Tstgz | Op::Tstg => (b, a, pred::LT),
                Op::Tstgez | Op::Tstge | Op::Tstmax => (b, a, pred::LE),
                Op::Tstl | Op::Tstmin => (a, b, pred::LT),
                _ => (a, b, pred::LE),
            };
            self.y().vcmpps(FTT, x, y, p);
            return;
        }
        let unsigned = matches!(ty, TestType::U32 | TestType::U16 | TestType::U8);
        if unsigned && ty == TestType::U32 {
            // Unsigned order through the signed compare: flip the sign bits.
            let c = self.splat(0x8000_0000);
            self.y().vpxor(a, a, c);
            self.y().vpxor(b, b, c);
        }
        // eq, gt(a,b), lt = gt(b,a); the others are their complements.
        let (base, invert) = match op {
            Op::Tstz | Op::Tste => (0, false),
            Op::Tstne => (0, true),
            Op::Tstgz | Op::Tstg => (1, false),
            Op::Tstle => (1, true),
            Op::Tstl | Op::Tstmin => (2, false),
            _ => (2, true), // >= : not <
        };
        match base {
            0 => self.y().vpcmpeqd(FTT, a, b),
            1 => self.y().vpcmpgtd(FTT, a, b),
            _ => self.y().vpcmpgtd(FTT, b, a),
        }
        if invert {
            self.y().vpcmpeqd(T[2], T[2], T[2]);
            self.y().vpxor(FTT, FTT, T[2]);
        }
    }

    /// The lanes whose condition (0 p0, 1 !p0, 2 true, 3 false) holds, into `d`.
    fn cond_mask(&mut self, d: Ymm, c: i64, h: usize) {
        let m = Mem::Base(RBX, off::P0 + h as i32 * 32);
        match c {
            0 => self.y().vmovups(d, m),
            1 => {
                self.y().vmovups(d, m);
                self.y().vpcmpeqd(T[5], T[5], T[5]);
                self.y().vpxor(d, d, T[5]);
            }
            2 => self.y().vpcmpeqd(d, d, d),
            _ => self.y().vpxor(d, d, d),
        }
    }

    /// Unsigned `a > k` for a small constant k (lanes all ones when true).
    fn gt_const(&mut self, d: Ymm, a: Ymm, k: u32) {
        let bias = self.splat(0x8000_0000);
        let kb = self.splat(k ^ 0x8000_0000);
        self.y().vpxor(d, a, bias);
        self.y().vmovups(T[5], kb);
        self.y().vpcmpgtd(d, d, T[5]);
    }

    fn cond_group(&mut self, gi: usize) {
        let ins = &self.p.groups[gi].instrs[0];
        let op = ins.op().unwrap();
        let o = &ins.operands;
        let imm = |k: usize| match o[k] {
            Operand::Imm(v) => v,
            _ => 0,
        };
        let literal = self.p.options.cndlt_literal;
        // CNDLT: any running lane whose condition holds, over both halves (in rdx... eax).
        if op == Op::Cndlt {
            self.a.xor_rr32(RSI, RSI);
            for h in 0..2 {
                self.cond_mask(T[0], imm(0), h);
                self.y()
                    .vpand(T[0], T[0], Mem::Base(RBX, off::PE + h as i32 * 32));
                self.y()
                    .vpand(T[0], T[0], Mem::Base(RBX, off::LANES + h as i32 * 32));
                self.y().vmovmskps(RAX, T[0]);
                self.a.or_rr32(RSI, RAX);
            }
        }
        for h in 0..2 {
            let hs = h as i32 * 32;
            self.y().vmovups(M, Mem::Base(RBX, off::LANES + hs));
            let (dst, src) = match op {
                Op::Cndend => (o[0].clone(), o[1].clone()),
                Op::Cndlt => (o[1].clone(), o[3].clone()),
                _ => (o[1].clone(), o[2].clone()),
            };
            let s = self.raw(&src, h, T[0]);
            if s != T[0] {
                self.y().vmovaps(T[0], s);
            }
            // T1 = (S0 == 0)
            self.y().vpxor(T[1], T[1], T[1]);
            self.y().vpcmpeqd(T[1], T[1], T[0]);
            // ft(0) = new W0, ft(1) = new Pe (feed-throughs are free here).
            match op {
                Op::Cndst => {
                    let adj = imm(3) as u32;
                    self.cond_mask(T[2], imm(0), h);
                    self.y().vpand(T[2], T[2], T[1]); // run
                    let c = self.splat(adj);
                    self.y().vpaddd(ft(0), T[0], c);
                    self.y().vpandn(ft(0), T[2], ft(0)); // run ? 0 : S0 + adj
                    self.y().vmovaps(ft(1), T[2]);
                }
                Op::Cndef => {
                    let adj = imm(3) as u32;
                    self.cond_mask(T[2], imm(0), h);
                    let one = self.splat(1);
                    self.y().vpcmpeqd(T[3], T[0], one); // S0 == 1
                    self.y().vpand(T[2], T[2], T[3]); // b = cond && S0 == 1 (S0 != 0 then)
                    let c = self.splat(adj);
                    self.y().vpaddd(T[3], T[0], c); // S0 + adj
                    self.y().vpandn(ft(0), T[2], T[0]); // b ? 0 : S0
                    self.y().vblendvps(ft(0), ft(0), T[3], T[1]); // z ? S0 + adj : ...
                    if adj == 0 {
                        self.y().vpor(ft(1), T[1], T[2]);
                    } else {
                        self.y().vpandn(ft(1), T[1], T[2]);
                    }
                }
                Op::Cndend => {
                    let adj = imm(2) as u32;
                    self.gt_const(T[2], T[0], adj);
                    let c = self.splat(adj);
                    self.y().vpsubd(T[3], T[0], c);
                    self.y().vpand(ft(0), T[3], T[2]);
                    self.y().vpcmpeqd(T[4], T[4], T[4]);
                    self.y().vpxor(ft(1), T[2], T[4]);
                }
                Op::Cndlt => {
                    let adj = imm(4) as u32;
                    let exit = self.a.new_label();
                    let join = self.a.new_label();
                    self.a.test_rr32(RSI, RSI);
                    self.a.je(exit);
                    // Some running lane's condition holds: lanes (cond == literal) at S0 == 0 stop.
                    self.cond_mask(T[2], imm(0), h);
                    if !literal {
                        self.y().vpcmpeqd(T[4], T[4], T[4]);
                        self.y().vpxor(T[2], T[2], T[4]);
                    }
                    self.y().vpand(T[2], T[2], T[1]); // stop
                    let c = self.splat(adj);
                    self.y().vmovups(T[3], c);
                    self.y().vblendvps(ft(0), T[0], T[3], T[2]);
                    self.y().vpandn(ft(1), T[2], T[1]);
                    self.y().vpcmpeqd(ft(2), ft(2), ft(2)); // P0 = 1
                    self.a.jmp(join);
                    self.a.bind(exit);
                    self.gt_const(T[2], T[0], adj);
                    self.y().vpsubd(T[3], T[0], c);
                    self.y().vpand(ft(0), T[3], T[2]);
                    self.y().vpcmpeqd(T[4], T[4], T[4]);
                    self.y().vpxor(ft(1), T[2], T[4]);
                    self.y().vpxor(ft(2), ft(2), ft(2)); // P0 = 0
                    self.a.bind(join);
                    let pm = Mem::Base(RBX, off::P0 + hs);
                    self.y().vmovups(T[4], pm);
                    self.y().vblendvps(T[4], T[4], ft(2), M);
                    self.y().store(pm, T[4], false);
                    self.site(Site::P0, M);
                }
                _ => unreachable!("native() admits only these conditionals"),
            }
            if let Operand::Reg(r, _) = dst {
                self.store_lanes(r, h, ft(0), M, 0);
            }
            let pm = Mem::Base(RBX, off::PE + hs);
            self.y().vmovups(T[4], pm);
            self.y().vblendvps(T[4], T[4], ft(1), M);
            self.y().store(pm, T[4], false);
        }
    }

    fn branch_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        let target = self.labels[self.p.targets[gi].expect("resolved branch")];
        let ins = &g.instrs[0];
        if g.pred == Pred::Always {
            self.a.jmp(target);
            return;
        }
        let all = ins.mods.branch == Some(BranchMode::AllInst);
        self.a.xor_rr32(RSI, RSI);
        for h in 0..2i32 {
            let hs = h * 32;
            self.y().vmovups(T[0], Mem::Base(RBX, off::LANES + hs));
            if !g.ignore_pe {
                self.y().vpand(T[0], T[0], Mem::Base(RBX, off::PE + hs));
            }
            self.y().vmovups(T[1], Mem::Base(RBX, off::P0 + hs));
            // Lanes considered whose predicate holds (any) or fails (all).
            let holds_is_p0 = g.pred == Pred::P0;
            if holds_is_p0 != all {
                self.y().vpand(T[0], T[0], T[1]);
            } else {
                self.y().vpandn(T[0], T[1], T[0]);
            }
            self.y().vmovmskps(RAX, T[0]);
            if h == 1 {
                self.a.shl_ri32(RAX, 8);
            }
            self.a.or_rr32(RSI, RAX);
        }
        self.a.test_rr32(RSI, RSI);
        if all {
            self.a.je(target);
        } else {
            self.a.jne(target);
        }
    }

    fn program(&mut self) -> usize {
        // Entry: callee-saved registers, context and bank pointers.
        for r in [RBX, RBP, R12, R13, R14, R15] {
            self.a.push(r);
        }
        self.a.sub_ri64(Gpr(4), 8);
        self.a.mov_rr64(RBX, RDI);
        for (r, o) in [
            (R12, off::R),
            (R13, off::VI),
            (R14, off::I),
            (R15, off::IDX),
            (RBP, off::SH),
        ] {
            self.a.mov_rm64(r, RBX, o);
        }
        let mut native_groups = 0;
        for gi in 0..self.p.groups.len() {
            let l = self.labels[gi];
            self.a.bind(l);
            self.budget_check();
            if !native(self.p, gi) {
                self.helper_group(gi);
                continue;
            }
            native_groups += 1;
            let first = self.p.groups[gi].instrs[0].info.unwrap();
            match first.unit {
                Unit::Complex if matches!(first.op, Op::Frsq | Op::Flog | Op::Fexp) => {
                    self.complex_group(gi)
                }
                Unit::Cond => self.cond_group(gi),
                Unit::Branch => self.branch_group(gi),
                _ => self.alu_group(gi),
            }
        }
        let done = self.done_exit;
        self.a.bind(done);
        self.a.mov_ri32(RAX, exit::DONE as i32);
        let epilogue = self.a.new_label();
        self.a.jmp(epilogue);
        let b = self.budget_exit;
        self.a.bind(b);
        self.a.mov_ri32(RAX, exit::BUDGET as i32);
        self.a.jmp(epilogue);
        let f = self.failed_exit;
        self.a.bind(f);
        self.a.mov_ri32(RAX, exit::FAILED as i32);
        self.a.bind(epilogue);
        self.y().vzeroupper();
        self.a.sub_ri64(Gpr(4), -8);
        for r in [R15, R14, R13, R12, RBP, RBX] {
            self.a.pop(r);
        }
        self.a.ret();
        native_groups
    }
}

/// Generates the machine code of `p` (for any host; only x86-64 hosts with AVX2 and FMA run
/// it). Returns the code, its length without the constant pool, the write sites and the
/// number of native groups.
pub fn generate(p: &Prepared) -> Result<(Vec<u8>, usize, Vec<Site>, usize), String> {
    let mut a = Asm::new();
    let labels = (0..p.groups.len()).map(|_| a.new_label()).collect();
    let budget_exit = a.new_label();
    let failed_exit = a.new_label();
    let done_exit = a.new_label();
    let mut g = Gen {
        a,
        p,
        labels,
        budget_exit,
        failed_exit,
        done_exit,
        sites: Vec::new(),
    };
    let native = g.program();
    let sites = std::mem::take(&mut g.sites);
    let (code, len) = g.a.finish()?;
    Ok((code, len, sites, native))
}

/// Whether this host runs the USC x86-64 code (AVX2 and FMA).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Compiles `p` for this host.
pub fn compile(p: &Prepared) -> Result<UscCode, String> {
    if !available() {
        return Err("the USC x86-64 backend needs an x86-64 host with AVX2 and FMA".into());
    }
    let (code, len, sites, native_groups) = generate(p)?;
    #[cfg(target_arch = "x86_64")]
    {
        let exec = crate::runtime::code_buffer::ExecCode::new(&code).map_err(|e| e.to_string())?;
        Ok(UscCode {
            code: exec,
            sites,
            code_bytes: len,
            native_groups,
            groups: p.groups.len(),
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (code, len, sites, native_groups);
        unreachable!("available() is false off x86-64")
    }
}
