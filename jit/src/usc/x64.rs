//! x86-64 AVX2 encoding of the USC lowering (`lower.rs`): a chunk is eight lanes (one ymm
//! register), so the 16 instances take two chunks.
//!
//! Registers: `rbx` the context ([`super::UscCtx`]), `r12`-`r15` the r/vi/i/idx banks, `rbp`
//! the shared bank; virtual vector register n is ymm n (ymm0-ymm5 ft0-ft5, ymm6 ftt, ymm7/ymm8
//! W0/W1, ymm9 the execution mask, ymm10-ymm15 temporaries); `esi` accumulates lane
//! reductions. Groups the lowering does not perform call the interpreter's step through the
//! context's helper.

use super::lower::{self, Bin, Bin64, Loc, Lowering, ShImm, Src, Src64, Un, Un64, VEmit, V};
use super::{exit, off, Site, UscCode, FAILED, NEXT};
use crate::host::x64::asm::{Asm, Mem};
use crate::host::x64::regs::{Gpr, R12, R13, R14, R15, RAX, RBP, RBX, RCX, RDI, RSI};
use crate::host::x64::vex::{pred, Yasm, Ymm};
use dynasmrt::{DynamicLabel, DynasmApi};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::Prepared;

macro_rules! x64 {
    ($ops:expr; $($t:tt)*) => {
        dynasm::dynasm!($ops ; .arch x64 ; $($t)*)
    };
}

fn y(v: V) -> Ymm {
    Ymm(v)
}

/// Whether the backend lowers group `gi` itself (otherwise the group calls the interpreter).
pub fn native(p: &Prepared, gi: usize) -> bool {
    lower::native(p, gi)
}

/// The x86-64 emitter.
pub struct X64Emit {
    a: Asm,
    budget_exit: DynamicLabel,
    failed_exit: DynamicLabel,
}

impl X64Emit {
    fn new() -> X64Emit {
        let mut a = Asm::new();
        let budget_exit = a.new_label();
        let failed_exit = a.new_label();
        X64Emit {
            a,
            budget_exit,
            failed_exit,
        }
    }

    fn y(&mut self) -> Yasm<'_> {
        Yasm::new(&mut self.a)
    }

    fn mem(&mut self, at: Loc) -> Mem {
        match at {
            Loc::Lane(r, h) => {
                let base = match r.bank {
                    Bank::R => R12,
                    Bank::Vi => R13,
                    Bank::I => R14,
                    _ => R15,
                };
                Mem::Base(base, i32::from(r.index) * 64 + h as i32 * 32)
            }
            Loc::P0(h) => Mem::Base(RBX, off::P0 + 32 * h as i32),
            Loc::Pe(h) => Mem::Base(RBX, off::PE + 32 * h as i32),
            Loc::Lanes(h) => Mem::Base(RBX, off::LANES + 32 * h as i32),
            Loc::Scratch(k) => {
                debug_assert!(k < 4, "the context has four scratch chunks");
                Mem::Base(RBX, off::SCRATCH + 32 * k as i32)
            }
        }
    }

    fn src(&mut self, s: Src) -> crate::host::x64::vex::YOp {
        match s {
            Src::V(v) => y(v).into(),
            Src::K(c) => self.y().splat(c).into(),
            Src::At(l) => self.mem(l).into(),
        }
    }

    fn reg(s: Src) -> Ymm {
        match s {
            Src::V(v) => y(v),
            _ => unreachable!("the lowering compares registers only"),
        }
    }
}

impl VEmit for X64Emit {
    const LANES: usize = 8;

    fn label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a.bind(l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        self.a.jmp(l);
    }

    fn load(&mut self, d: V, at: Loc) {
        let m = self.mem(at);
        self.y().vmovups(y(d), m);
    }

    fn store(&mut self, at: Loc, s: V) {
        let m = self.mem(at);
        self.y().store(m, y(s), false);
    }

    fn bcast(&mut self, d: V, r: Reg) {
        let disp = i32::from(r.index) * 4;
        if r.bank == Bank::Sh {
            self.y().vbroadcastss(y(d), Mem::Base(RBP, disp));
        } else {
            self.a.mov_rm64(RAX, RBX, off::CF);
            self.y().vbroadcastss(y(d), Mem::Base(RAX, disp));
        }
    }

    fn splat(&mut self, d: V, v: u32) {
        let m = self.y().splat(v);
        self.y().vmovups(y(d), m);
    }

    fn zero(&mut self, d: V) {
        self.y().vpxor(y(d), y(d), y(d));
    }

    fn ones(&mut self, d: V) {
        self.y().vpcmpeqd(y(d), y(d), y(d));
    }

    fn bin(&mut self, op: Bin, d: V, a: V, b: Src) {
        let (d, a) = (y(d), y(a));
        let fcmp = |p| (p, Self::reg(b));
        match op {
            Bin::FcmpEq | Bin::FcmpNe | Bin::FcmpLt | Bin::FcmpLe => {
                let (p, b) = fcmp(match op {
                    Bin::FcmpEq => pred::EQ,
                    Bin::FcmpNe => pred::NEQ,
                    Bin::FcmpLt => pred::LT,
                    _ => pred::LE,
                });
                self.y().vcmpps(d, a, b, p);
                return;
            }
            _ => {}
        }
        let b = self.src(b);
        let mut yy = self.y();
        match op {
            Bin::Fadd => yy.vaddps(d, a, b),
            Bin::Fmul => yy.vmulps(d, a, b),
            Bin::Fdiv => yy.vdivps(d, a, b),
            Bin::Fmax => yy.vmaxps(d, a, b),
            Bin::Fmin => yy.vminps(d, a, b),
            Bin::And => yy.vpand(d, a, b),
            Bin::AndNot => yy.vpandn(d, a, b),
            Bin::Or => yy.vpor(d, a, b),
            Bin::Xor => yy.vpxor(d, a, b),
            Bin::Add => yy.vpaddd(d, a, b),
            Bin::Sub => yy.vpsubd(d, a, b),
            Bin::CmpEq => yy.vpcmpeqd(d, a, b),
            Bin::CmpGt => yy.vpcmpgtd(d, a, b),
            Bin::Sllv => yy.vpsllvd(d, a, b),
            Bin::Srlv => yy.vpsrlvd(d, a, b),
            Bin::Srav => yy.vpsravd(d, a, b),
            Bin::FcmpEq | Bin::FcmpNe | Bin::FcmpLt | Bin::FcmpLe => unreachable!(),
        }
    }

    fn un(&mut self, op: Un, d: V, s: V) {
        match op {
            Un::Mov => self.y().vmovaps(y(d), y(s)),
            Un::Floor => self.y().vroundps(y(d), y(s), 9),
            Un::Sqrt => self.y().vsqrtps(y(d), y(s)),
        }
    }

    fn shift_imm(&mut self, op: ShImm, d: V, s: V, n: u8) {
        match op {
            ShImm::Sll => self.y().vpslld(y(d), y(s), n),
            ShImm::Srl => self.y().vpsrld(y(d), y(s), n),
            ShImm::Sra => self.y().vpsrad(y(d), y(s), n),
        }
    }

    fn blend(&mut self, d: V, a: V, b: V, mask: V) {
        self.y().vblendvps(y(d), y(a), y(b), y(mask));
    }

    fn fma(&mut self, d: V, a: V, b: V) {
        self.y().vfmadd231ps(y(d), y(a), y(b));
    }

    fn widen(&mut self, lo: V, hi: V, s: V) {
        self.y().vextractf128_hi(y(hi), y(s));
        self.y().vcvtps2pd(y(lo), y(s));
        self.y().vcvtps2pd(y(hi), y(hi));
    }

    fn narrow(&mut self, d: V, lo: V, hi: V) {
        self.y().vcvtpd2ps(y(lo), y(lo));
        self.y().vcvtpd2ps(y(hi), y(hi));
        self.y().vinsertf128_hi(y(d), y(lo), y(hi));
    }

    fn bin64(&mut self, op: Bin64, d: V, a: V, b: Src64) {
        let (d, a) = (y(d), y(a));
        if op == Bin64::FcmpLt {
            let Src64::V(b) = b else {
                unreachable!("the lowering compares registers only")
            };
            self.y().vcmppd(d, a, y(b), pred::LT);
            return;
        }
        let b: crate::host::x64::vex::YOp = match b {
            Src64::V(v) => y(v).into(),
            Src64::K(c) => self.y().splat64(c).into(),
        };
        let mut yy = self.y();
        match op {
            Bin64::Fadd => yy.vaddpd(d, a, b),
            Bin64::Fsub => yy.vsubpd(d, a, b),
            Bin64::Fmul => yy.vmulpd(d, a, b),
            Bin64::Fdiv => yy.vdivpd(d, a, b),
            Bin64::And => yy.vpand(d, a, b),
            Bin64::Or => yy.vpor(d, a, b),
            Bin64::Add => yy.vpaddq(d, a, b),
            Bin64::Sub => yy.vpsubq(d, a, b),
            Bin64::CmpGt => yy.vpcmpgtq(d, a, b),
            Bin64::FcmpLt => unreachable!(),
        }
    }

    fn un64(&mut self, op: Un64, d: V, s: V) {
        let (d, s) = (y(d), y(s));
        match op {
            Un64::Sqrt => self.y().vsqrtpd(d, s),
            Un64::Round => self.y().vroundpd(d, s, 8),
            Un64::Shl(n) => self.y().vpsllq(d, s, n),
            Un64::Shr(n) => self.y().vpsrlq(d, s, n),
        }
    }

    fn splat64(&mut self, d: V, v: u64) {
        let m = self.y().splat64(v);
        self.y().vmovups(y(d), m);
    }

    fn umadd32(&mut self, cin: Option<V>) {
        // 64-bit S0 * S1 + S2 (+ cin) per lane: even lanes through one vpmuludq, odd lanes
        // through another on the words shifted down.
        let t = lower::T.map(y);
        let (f0, f1) = (Ymm(0), Ymm(1));
        let lo = self.y().splat64(0xFFFF_FFFF);
        let hi = self.y().splat64(0xFFFF_FFFF_0000_0000);
        self.y().vpmuludq(t[3], t[0], t[1]);
        self.y().vpand(t[4], t[2], lo);
        self.y().vpaddq(t[3], t[3], t[4]);
        if let Some(c) = cin {
            self.y().vpand(t[4], y(c), lo);
            self.y().vpaddq(t[3], t[3], t[4]);
        }
        self.y().vpsrlq(t[0], t[0], 32);
        self.y().vpsrlq(t[1], t[1], 32);
        self.y().vpmuludq(t[5], t[0], t[1]);
        self.y().vpsrlq(t[0], t[2], 32);
        self.y().vpaddq(t[5], t[5], t[0]);
        if let Some(c) = cin {
            self.y().vpsrlq(t[0], y(c), 32);
            self.y().vpaddq(t[5], t[5], t[0]);
        }
        // ft0 = low words, ft1 = high words.
        self.y().vpand(f0, t[3], lo);
        self.y().vpsllq(t[0], t[5], 32);
        self.y().vpor(f0, f0, t[0]);
        self.y().vpsrlq(f1, t[3], 32);
        self.y().vpand(t[0], t[5], hi);
        self.y().vpor(f1, f1, t[0]);
    }

    fn any_clear(&mut self) {
        self.a.xor_rr32(RSI, RSI);
    }

    fn any_or(&mut self, v: V) {
        self.y().vmovmskps(RAX, y(v));
        self.a.or_rr32(RSI, RAX);
    }

    fn branch_any(&mut self, l: DynamicLabel, nonzero: bool) {
        self.a.test_rr32(RSI, RSI);
        if nonzero {
            self.a.jne(l);
        } else {
            self.a.je(l);
        }
    }

    fn site(&mut self, k: usize, mask: V) {
        let k = k as i32;
        self.y().vmovmskps(RAX, y(mask));
        self.a.mov_rm64(RCX, RBX, off::SITES);
        x64!(self.a.ops; or DWORD [rcx + 4 * k], eax);
    }

    fn budget_check(&mut self) {
        self.a.mov_rm64(RAX, RBX, off::STEPS);
        self.a.cmp_rm64(RAX, RBX, off::BUDGET);
        let l = self.budget_exit;
        self.a.jae(l);
        self.a.add_mi64(RBX, off::STEPS, 1);
    }

    fn helper(
        &mut self,
        gi: usize,
        targets: &[usize],
        labels: &[DynamicLabel],
        done: DynamicLabel,
    ) {
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
        for &t in targets {
            self.a.cmp_ri32(RAX, t as i32);
            self.a.je(labels[t]);
        }
        // Past the last group: done.
        self.a.jmp(done);
        self.a.bind(next);
    }

    fn prologue(&mut self, _labels: &[DynamicLabel], _done: DynamicLabel) {
        // Entry: callee-saved registers, context and bank pointers; runs start at group 0.
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
    }

    fn epilogue(&mut self, done: DynamicLabel) {
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
    }
}

/// Generates the machine code of `p` (for any host; only x86-64 hosts with AVX2 and FMA run
/// it). Returns the code, its length without the constant pool, the write sites and the
/// number of native groups.
pub fn generate(p: &Prepared) -> Result<(Vec<u8>, usize, Vec<Site>, usize), crate::Error> {
    let mut e = X64Emit::new();
    let l = Lowering::program(&mut e, p);
    let (code, len) = e.a.finish().map_err(crate::Error::Internal)?;
    Ok((code, len, l.sites, l.native_groups))
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
pub fn compile(p: &Prepared) -> Result<UscCode, crate::Error> {
    if !available() {
        return Err(crate::Error::Unavailable(
            "the USC x86-64 backend needs an x86-64 host with AVX2 and FMA".into(),
        ));
    }
    let (code, len, sites, native_groups) = generate(p)?;
    let exec = crate::host::runtime::ExecCode::new(&code)
        .map_err(|e| crate::Error::Internal(e.to_string()))?;
    Ok(UscCode {
        exec,
        backend: crate::Backend::X64,
        sites,
        code_bytes: len,
        native_groups,
        groups: p.groups.len(),
    })
}
