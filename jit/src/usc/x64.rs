//! x86-64 AVX2 target of the USC lowering (`lower.rs`): a chunk is eight lanes (one ymm
//! register), so the 16 instances take two chunks; the lane operations are the host's
//! 256-bit ones (`crate::host::x64::lanes`), which the PICA lane code uses too.
//!
//! Registers: `rbx` the context ([`super::UscCtx`]), `r12`-`r15` the r/vi/i/idx banks, `rbp`
//! the shared bank; virtual vector register n is ymm n (ymm0-ymm5 ft0-ft5, ymm6 ftt, ymm7/ymm8
//! W0/W1, ymm9 the execution mask, ymm10-ymm15 temporaries); `esi` accumulates lane
//! reductions. Groups the lowering does not perform call the interpreter's step through the
//! context's helper.
//!
//! # Float environment
//!
//! The lowering's arithmetic needs MXCSR = [`MXCSR_MODE`]: round to nearest even, no
//! flush-to-zero, no denormals-are-zero (denormals are kept, `docs/usc.md`), every exception
//! masked. The prologue saves the caller's MXCSR in the context ([`super::UscCtx`]) and
//! loads the mode, and the single epilogue every exit (done, budget, a failed helper step)
//! passes through loads the saved value back. Both loads are skipped when the caller's
//! control bits are the mode's already (Rust's default: the usual case), as the PICA code
//! does (`crate::pica::x64::masm`, "Float environment"); the exception flags are the
//! caller's to save, so flags the code raises may stay set then. Helper calls run in the
//! mode, which is Rust's default; the interpreter's step does not depend on it anyway (its
//! float operations are integer code, `picajit_interp::usc::float`).

use super::lower::{self, Loc, Lowering, Target, V};
use super::{exit, off, Site, UscCode, FAILED, NEXT};
use crate::host::lanes::Lanes;
use crate::host::x64::abi::{Frame, CALLEE_SAVED};
use crate::host::x64::asm::{Asm, Mem};
use crate::host::x64::lanes::{X64Lanes, Y256};
use crate::host::x64::regs::{R12, R13, R14, R15, RAX, RBP, RBX, RCX, RDI, RSI};
use crate::host::x64::vex::{Yasm, Ymm};
use dynasmrt::{DynamicLabel, DynasmApi};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::Prepared;

macro_rules! x64 {
    ($ops:expr; $($t:tt)*) => {
        dynasm::dynasm!($ops ; .arch x64 ; $($t)*)
    };
}

/// Whether the backend lowers group `gi` itself (otherwise the group calls the interpreter).
pub fn native(p: &Prepared, gi: usize) -> bool {
    lower::native(p, gi)
}

/// The MXCSR the code runs with: round to nearest, no FTZ/DAZ, all exceptions masked.
pub const MXCSR_MODE: u32 = 0x1F80;
/// MXCSR's exception flags: not compared when deciding whether to load it.
const MXCSR_FLAGS: u32 = 0x3F;

/// The entry frame: every callee-saved register (they hold the context and the five bank
/// pointers), the context pointer copied to rbx, and 8 bytes of padding so that rsp is
/// 16-aligned at the helper's `call`.
const FRAME: Frame<'static> = Frame {
    saved: &CALLEE_SAVED,
    locals: 8,
    context: Some(RBX),
};

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

    /// Jumps to `kept` when the control bits of the caller's MXCSR, saved in the context, are
    /// [`MXCSR_MODE`]'s (module documentation). Clobbers rcx.
    fn caller_mxcsr_is_the_mode(&mut self, kept: DynamicLabel) {
        self.a.mov_rm32(RCX, RBX, off::SAVED_MXCSR);
        self.a.and_ri32(RCX, !MXCSR_FLAGS as i32);
        self.a.cmp_ri32(RCX, MXCSR_MODE as i32);
        self.a.je(kept);
    }
}

impl Target for X64Emit {
    type R = Ymm;
    type Mem = Mem;
    type H<'a> = X64Lanes<'a, Y256>;
    const LANES: usize = 8;

    fn h(&mut self) -> X64Lanes<'_, Y256> {
        X64Lanes::ymm(&mut self.a)
    }

    fn v(v: V) -> Ymm {
        Ymm(v)
    }

    fn at(at: Loc) -> Mem {
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

    /// The cf bank's base goes to rax.
    fn shared(&mut self, r: Reg) -> Mem {
        let disp = i32::from(r.index) * 4;
        if r.bank == Bank::Sh {
            Mem::Base(RBP, disp)
        } else {
            self.a.mov_rm64(RAX, RBX, off::CF);
            Mem::Base(RAX, disp)
        }
    }

    fn label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a.bind(l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        self.a.jmp(l);
    }

    fn any_clear(&mut self) {
        self.a.xor_rr32(RSI, RSI);
    }

    fn any_or(&mut self, v: Ymm) {
        self.h().mask_bits(RAX, v);
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

    fn site(&mut self, k: usize, mask: Ymm) {
        let k = k as i32;
        self.h().mask_bits(RAX, mask);
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
        // Entry: the frame, the float environment, then the bank pointers; runs start at
        // group 0.
        FRAME.enter(&mut self.a);
        let mode = self.a.splat(MXCSR_MODE);
        let kept = self.a.new_label();
        self.a.stmxcsr(RBX, off::SAVED_MXCSR);
        self.caller_mxcsr_is_the_mode(kept);
        self.a.ldmxcsr(mode);
        self.a.bind(kept);
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
        // The caller's float environment back (rax holds the exit code).
        let kept = self.a.new_label();
        self.caller_mxcsr_is_the_mode(kept);
        self.a.ldmxcsr(Mem::Base(RBX, off::SAVED_MXCSR));
        self.a.bind(kept);
        self.y().vzeroupper();
        FRAME.ret(&mut self.a);
    }
}

/// Generates the machine code of `p` (for any host; only x86-64 hosts with AVX2 and FMA run
/// it). Returns the code, its length without the constant pool, the write sites and the
/// number of native groups.
pub fn generate(p: &Prepared) -> Result<(Vec<u8>, usize, Vec<Site>, usize), crate::error::Error> {
    let mut e = X64Emit::new();
    let l = Lowering::program(&mut e, p);
    let (code, len) = e.a.finish().map_err(crate::error::Error::Internal)?;
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
pub fn compile(p: &Prepared) -> Result<UscCode, crate::error::Error> {
    if !available() {
        return Err(crate::error::Error::Unavailable(
            "the USC x86-64 backend needs an x86-64 host with AVX2 and FMA".into(),
        ));
    }
    let (code, len, sites, native_groups) = generate(p)?;
    let exec = crate::host::runtime::ExecCode::for_backend(crate::host::Backend::X64, &code)?;
    Ok(UscCode {
        exec,
        backend: crate::host::Backend::X64,
        sites,
        code_bytes: len,
        native_groups,
        groups: p.groups.len(),
    })
}
