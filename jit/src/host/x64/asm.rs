//! A thin typed layer over dynasm for x86-64: the `.arch x64` wrapper macro, memory operands,
//! the constant pool, and one method per instruction form the backend emits, named after the
//! mnemonic (`addps(dst, src)` accepts a register, memory or constant-pool source).
//!
//! Every `dynasm!` invocation goes through the local `x64!` macro, which pins `.arch x64`: the macro would
//! otherwise assemble for the build host, which is wrong when generating x86-64 code elsewhere.
//!
//! Only SSE encodings are used for instructions with an 8-bit immediate: dynasm 5.1.0 swaps the
//! sources (register forms) or drops the memory operand (memory forms) of `vshufps`, `vblendps`,
//! `vcmpps` and friends. `tests/jit_x64_encoding.rs` decodes every form emitted here.

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use super::regs::{Gpr, Xmm};
use dynasmrt::x64::X64Relocation;
use dynasmrt::{AssemblyOffset, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

/// `dynasm!` with the architecture pinned to x86-64.
macro_rules! x64 {
    ($ops:expr; $($t:tt)*) => {
        dynasm::dynasm!($ops ; .arch x64 ; $($t)*)
    };
}
/// For emitters that write dynasm directly.
pub(crate) use x64;

/// A memory operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    /// `[base + disp]`
    Base(Gpr, i32),
    /// `[base + index + disp]`
    Index(Gpr, Gpr, i32),
    /// A 16-byte constant-pool entry (RIP-relative).
    Const(DynamicLabel),
}

/// Source operand of a vector instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XOp {
    /// A register.
    Reg(Xmm),
    /// Memory (aligned to 16 for SSE forms).
    Mem(Mem),
}

impl From<Xmm> for XOp {
    fn from(x: Xmm) -> XOp {
        XOp::Reg(x)
    }
}

impl From<Mem> for XOp {
    fn from(m: Mem) -> XOp {
        XOp::Mem(m)
    }
}

/// The assembler: a `VecAssembler` (code for any host, at base address 0; everything is
/// position independent except helper-call addresses) plus a deduplicated constant pool.
pub struct Asm {
    /// The underlying dynasm assembler.
    pub ops: VecAssembler<X64Relocation>,
    pool: Vec<([u32; 4], DynamicLabel)>,
    /// 32-byte constants (the AVX2 emitter's splats), 32-aligned.
    pool32: Vec<([u32; 8], DynamicLabel)>,
    tables: Vec<(Vec<u8>, DynamicLabel)>,
    /// Up to eight 32-byte constants placed first in the 32-byte pool, with `hot_label`
    /// bound 128 bytes into them, so that code holding that address in a register reaches
    /// each with an 8-bit displacement (-128, -96, …, 96): a lane emitter's most used constants
    /// (see `crate::host::x64::vex::HOT_BASE`).
    pub hot32: Vec<[u32; 8]>,
    /// See `hot32`.
    pub hot_label: Option<DynamicLabel>,
}

impl Default for Asm {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! sse_rr_rm {
    ($($m:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($m), " dst, src`")]
                pub fn $m(&mut self, d: Xmm, s: impl Into<XOp>) {
                    match s.into() {
                        XOp::Reg(r) => x64!(self.ops; $m Rx(d.0), Rx(r.0)),
                        XOp::Mem(Mem::Base(b, o)) => x64!(self.ops; $m Rx(d.0), [Rq(b.0) + o]),
                        XOp::Mem(Mem::Index(b, i, o)) => {
                            x64!(self.ops; $m Rx(d.0), [Rq(b.0) + Rq(i.0) + o])
                        }
                        XOp::Mem(Mem::Const(l)) => x64!(self.ops; $m Rx(d.0), [=>l]),
                    }
                }
            )*
        }
    };
}

macro_rules! sse_rri {
    ($($m:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($m), " dst, src, imm8` (SSE encoding)")]
                pub fn $m(&mut self, d: Xmm, s: impl Into<XOp>, imm: u8) {
                    match s.into() {
                        XOp::Reg(r) => x64!(self.ops; $m Rx(d.0), Rx(r.0), imm as i8),
                        XOp::Mem(Mem::Base(b, o)) => {
                            x64!(self.ops; $m Rx(d.0), [Rq(b.0) + o], imm as i8)
                        }
                        XOp::Mem(Mem::Index(b, i, o)) => {
                            x64!(self.ops; $m Rx(d.0), [Rq(b.0) + Rq(i.0) + o], imm as i8)
                        }
                        XOp::Mem(Mem::Const(l)) => x64!(self.ops; $m Rx(d.0), [=>l], imm as i8),
                    }
                }
            )*
        }
    };
}

sse_rr_rm!(
    movaps, movups, addps, subps, mulps, divps, maxps, minps, andps, andnps, orps, xorps, haddps,
    cvttps2dq, cvtps2pd, cvtpd2ps, addpd, mulpd, haddpd, divsd, sqrtsd, mulsd, addsd, cvtss2sd,
    cvtsd2ss, divss, pand, pandn, por, pxor, paddd, psubd, pcmpgtd, pcmpeqd, paddq, psubq, movss,
    movsd, unpcklpd, movq, pmulld, movapd, divpd, sqrtpd, pmaxud, pmuludq, pmuldq, sqrtps, subpd,
    cvttpd2dq, pcmpgtq, pcmpeqq, pmovsxdq, pmovzxdq,
);
macro_rules! avx_rrr {
    ($($m:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($m), " dst, a, b` (VEX.128; no immediate)")]
                pub fn $m(&mut self, d: Xmm, a: Xmm, s: impl Into<XOp>) {
                    match s.into() {
                        XOp::Reg(r) => x64!(self.ops; $m Rx(d.0), Rx(a.0), Rx(r.0)),
                        XOp::Mem(Mem::Base(b, o)) => {
                            x64!(self.ops; $m Rx(d.0), Rx(a.0), [Rq(b.0) + o])
                        }
                        XOp::Mem(Mem::Index(b, i, o)) => {
                            x64!(self.ops; $m Rx(d.0), Rx(a.0), [Rq(b.0) + Rq(i.0) + o])
                        }
                        XOp::Mem(Mem::Const(l)) => x64!(self.ops; $m Rx(d.0), Rx(a.0), [=>l]),
                    }
                }
            )*
        }
    };
}

avx_rrr!(
    vandps,
    vandnps,
    vorps,
    vpcmpgtd,
    vmulps,
    vaddps,
    vmaxps,
    vminps,
    vmulpd,
    vdivps,
    vdivpd,
    vpsllvd,
    vpsrlvd,
    vpsravd,
    vpsllvq,
    vpsrlvq,
    vfmadd231ps,
);

sse_rri!(shufps, blendps, cmpps, cmppd, roundps, roundpd, roundss, pshufd, cmpss, cmpsd, insertps);

impl Asm {
    /// An empty assembler.
    pub fn new() -> Asm {
        Asm {
            ops: VecAssembler::new(0),
            pool: Vec::new(),
            pool32: Vec::new(),
            tables: Vec::new(),
            hot32: Vec::new(),
            hot_label: None,
        }
    }

    /// Current code offset.
    pub fn offset(&self) -> AssemblyOffset {
        self.ops.offset()
    }

    /// A constant-pool entry holding `v` (16 bytes, 16-aligned).
    pub fn constant(&mut self, v: [u32; 4]) -> Mem {
        // A program uses a few dozen distinct constants at most: a linear search beats hashing.
        if let Some((_, l)) = self.pool.iter().find(|(c, _)| *c == v) {
            return Mem::Const(*l);
        }
        let l = self.ops.new_dynamic_label();
        self.pool.push((v, l));
        Mem::Const(l)
    }

    /// A 32-byte constant-pool entry holding `v` (32-aligned: see [`Self::finish`]).
    pub fn constant32(&mut self, v: [u32; 8]) -> DynamicLabel {
        // Looked up without building a byte vector: lane code asks for its constants
        // several thousand times.
        if let Some((_, l)) = self.pool32.iter().find(|(c, _)| *c == v) {
            return *l;
        }
        let l = self.ops.new_dynamic_label();
        self.pool32.push((v, l));
        l
    }

    /// A read-only table in the constant pool (16-aligned), e.g. the EX2/LG2 tables.
    pub fn table(&mut self, bytes: Vec<u8>) -> DynamicLabel {
        if let Some((_, l)) = self.tables.iter().find(|(b, _)| *b == bytes) {
            return *l;
        }
        let l = self.ops.new_dynamic_label();
        self.tables.push((bytes, l));
        l
    }

    /// `v` in all four lanes.
    pub fn splat(&mut self, v: u32) -> Mem {
        self.constant([v; 4])
    }

    /// A 64-bit value in both lanes.
    pub fn splat64(&mut self, v: u64) -> Mem {
        self.constant([v as u32, (v >> 32) as u32, v as u32, (v >> 32) as u32])
    }

    /// Emit the constant pool and return the finished code and the length of the instruction
    /// stream before the pool.
    pub fn finish(mut self) -> Result<(Vec<u8>, usize), String> {
        let code_len = self.offset().0;
        x64!(self.ops; .align 16, 0xCC);
        for (v, l) in std::mem::take(&mut self.pool) {
            x64!(self.ops; =>l ; .u32 v[0], v[1], v[2], v[3]);
        }
        if !self.hot32.is_empty() || !self.pool32.is_empty() {
            // Code is mapped at a page boundary (`crate::host::runtime`), so 32-byte
            // constants at 32-byte offsets never straddle a cache line. At 16 mod 32, half of
            // them did: lane code that shrank by 80 bytes ran 4-5% slower (the `skinning`
            // example, F32, batch 4096) until the pool was aligned.
            x64!(self.ops; .align 32, 0xCC);
        }
        for (i, v) in std::mem::take(&mut self.hot32).into_iter().enumerate() {
            if i == 4 {
                if let Some(l) = self.hot_label {
                    x64!(self.ops; =>l);
                }
            }
            x64!(self.ops; .u32 v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        }
        for (v, l) in std::mem::take(&mut self.pool32) {
            x64!(self.ops; =>l ; .u32 v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        }
        for (bytes, l) in std::mem::take(&mut self.tables) {
            x64!(self.ops; .align 16, 0xCC ; =>l);
            self.ops.extend(bytes);
        }
        let code = self.ops.finalize().map_err(|e| e.to_string())?;
        Ok((code, code_len))
    }

    /// `movaps [mem], src` / `movups` when `aligned` is false.
    pub fn store_vec(&mut self, m: Mem, s: Xmm, aligned: bool) {
        match (m, aligned) {
            (Mem::Base(b, o), true) => x64!(self.ops; movaps [Rq(b.0) + o], Rx(s.0)),
            (Mem::Base(b, o), false) => x64!(self.ops; movups [Rq(b.0) + o], Rx(s.0)),
            (Mem::Index(b, i, o), true) => x64!(self.ops; movaps [Rq(b.0) + Rq(i.0) + o], Rx(s.0)),
            (Mem::Index(b, i, o), false) => {
                x64!(self.ops; movups [Rq(b.0) + Rq(i.0) + o], Rx(s.0))
            }
            (Mem::Const(_), _) => unreachable!("the constant pool is read-only"),
        }
    }

    /// `movss [mem], src` (lane 0 only).
    pub fn store_ss(&mut self, m: Mem, s: Xmm) {
        match m {
            Mem::Base(b, o) => x64!(self.ops; movss [Rq(b.0) + o], Rx(s.0)),
            Mem::Index(b, i, o) => x64!(self.ops; movss [Rq(b.0) + Rq(i.0) + o], Rx(s.0)),
            Mem::Const(_) => unreachable!("the constant pool is read-only"),
        }
    }

    /// `movlps [base + o], src` (lanes 0 and 1).
    pub fn store_lo64(&mut self, b: Gpr, o: i32, s: Xmm) {
        x64!(self.ops; movlps [Rq(b.0) + o], Rx(s.0));
    }

    /// `movhps [base + o], src` (lanes 2 and 3).
    pub fn store_hi64(&mut self, b: Gpr, o: i32, s: Xmm) {
        x64!(self.ops; movhps [Rq(b.0) + o], Rx(s.0));
    }

    /// `extractps [base + o], src, lane` (SSE4.1).
    pub fn store_lane(&mut self, b: Gpr, o: i32, s: Xmm, lane: u8) {
        x64!(self.ops; extractps [Rq(b.0) + o], Rx(s.0), lane as i8);
    }

    /// `movmskps dst32, src`
    pub fn movmskps(&mut self, d: Gpr, s: Xmm) {
        x64!(self.ops; movmskps Rd(d.0), Rx(s.0));
    }

    /// `movd dst32, src`
    pub fn movd_rx(&mut self, d: Gpr, s: Xmm) {
        x64!(self.ops; movd Rd(d.0), Rx(s.0));
    }

    /// `movd dst, src32`
    pub fn movd_xr(&mut self, d: Xmm, s: Gpr) {
        x64!(self.ops; movd Rx(d.0), Rd(s.0));
    }

    /// `pextrd dst32, src, lane`
    pub fn pextrd(&mut self, d: Gpr, s: Xmm, lane: u8) {
        x64!(self.ops; pextrd Rd(d.0), Rx(s.0), lane as i8);
    }

    /// `psrld dst, imm`
    pub fn psrld(&mut self, d: Xmm, imm: u8) {
        x64!(self.ops; psrld Rx(d.0), imm as i8);
    }

    /// `pslld dst, imm`
    pub fn pslld(&mut self, d: Xmm, imm: u8) {
        x64!(self.ops; pslld Rx(d.0), imm as i8);
    }

    /// `psrlq dst, imm`
    pub fn psrlq(&mut self, d: Xmm, imm: u8) {
        x64!(self.ops; psrlq Rx(d.0), imm as i8);
    }

    /// `psrad dst, imm`
    pub fn psrad(&mut self, d: Xmm, imm: u8) {
        x64!(self.ops; psrad Rx(d.0), imm as i8);
    }

    /// `psllq dst, imm`
    pub fn psllq(&mut self, d: Xmm, imm: u8) {
        x64!(self.ops; psllq Rx(d.0), imm as i8);
    }

    /// `ldmxcsr [mem]`
    pub fn ldmxcsr(&mut self, m: Mem) {
        match m {
            Mem::Base(b, o) => x64!(self.ops; ldmxcsr [Rq(b.0) + o]),
            Mem::Index(b, i, o) => x64!(self.ops; ldmxcsr [Rq(b.0) + Rq(i.0) + o]),
            Mem::Const(l) => x64!(self.ops; ldmxcsr [=>l]),
        }
    }

    /// `prefetcht0 [base + disp]`: a hint that never faults, whatever the address.
    pub fn prefetcht0(&mut self, b: Gpr, o: i32) {
        x64!(self.ops; prefetcht0 [Rq(b.0) + o]);
    }

    /// `lfence`
    pub fn lfence(&mut self) {
        x64!(self.ops; lfence);
    }

    /// `stmxcsr [base + disp]`
    pub fn stmxcsr(&mut self, b: Gpr, o: i32) {
        x64!(self.ops; stmxcsr [Rq(b.0) + o]);
    }

    /// `mov dst64, [base + disp]`
    pub fn mov_rm64(&mut self, d: Gpr, b: Gpr, o: i32) {
        x64!(self.ops; mov Rq(d.0), QWORD [Rq(b.0) + o]);
    }

    /// `mov dst32, [base + disp]`
    pub fn mov_rm32(&mut self, d: Gpr, b: Gpr, o: i32) {
        x64!(self.ops; mov Rd(d.0), DWORD [Rq(b.0) + o]);
    }

    /// `movzx dst32, byte [base + disp]`
    pub fn movzx_rm8(&mut self, d: Gpr, b: Gpr, o: i32) {
        x64!(self.ops; movzx Rd(d.0), BYTE [Rq(b.0) + o]);
    }

    /// `mov dst32, imm32`
    pub fn mov_ri32(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; mov Rd(d.0), imm);
    }

    /// `mov dst64, imm64`
    pub fn mov_ri64(&mut self, d: Gpr, imm: i64) {
        x64!(self.ops; mov Rq(d.0), QWORD imm);
    }

    /// `mov dst64, src64`
    pub fn mov_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; mov Rq(d.0), Rq(s.0));
    }

    /// `lea dst32, [src + disp]`
    pub fn lea_r32(&mut self, d: Gpr, s: Gpr, o: i32) {
        x64!(self.ops; lea Rd(d.0), [Rq(s.0) + o]);
    }

    /// `add dst32, imm32`
    pub fn add_ri32(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; add Rd(d.0), imm);
    }

    /// `and dst32, imm32`
    pub fn and_ri32(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; and Rd(d.0), imm);
    }

    /// `shl dst32, imm`
    pub fn shl_ri32(&mut self, d: Gpr, imm: u8) {
        x64!(self.ops; shl Rd(d.0), imm as i8);
    }

    /// `shr dst32, imm`
    pub fn shr_ri32(&mut self, d: Gpr, imm: u8) {
        x64!(self.ops; shr Rd(d.0), imm as i8);
    }

    /// `xor dst32, src32`
    pub fn xor_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; xor Rd(d.0), Rd(s.0));
    }

    /// `cmp dst32, imm32`
    pub fn cmp_ri32(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; cmp Rd(d.0), imm);
    }

    /// `cmp dst32, [base + disp]`
    pub fn cmp_rm32(&mut self, d: Gpr, b: Gpr, o: i32) {
        x64!(self.ops; cmp Rd(d.0), DWORD [Rq(b.0) + o]);
    }

    /// `cmp dst64, [base + disp]`
    pub fn cmp_rm64(&mut self, d: Gpr, b: Gpr, o: i32) {
        x64!(self.ops; cmp Rq(d.0), QWORD [Rq(b.0) + o]);
    }

    /// `shl dst64, imm`
    pub fn shl_ri64(&mut self, d: Gpr, imm: u8) {
        x64!(self.ops; shl Rq(d.0), imm as i8);
    }

    /// `add dst64, src64`
    pub fn add_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; add Rq(d.0), Rq(s.0));
    }

    /// `sub dst64, src64`
    pub fn sub_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; sub Rq(d.0), Rq(s.0));
    }

    /// `add qword [base + disp], imm8`
    pub fn add_mi64(&mut self, b: Gpr, o: i32, imm: i8) {
        x64!(self.ops; add QWORD [Rq(b.0) + o], imm as i32);
    }

    /// Pad with `int3` to a 16-byte boundary.
    pub fn align16(&mut self) {
        x64!(self.ops; .align 16, 0xCC);
    }

    /// `test dst32, src32`
    pub fn test_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; test Rd(d.0), Rd(s.0));
    }

    /// `cmove dst32, src32`
    pub fn cmove_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; cmove Rd(d.0), Rd(s.0));
    }

    /// `cmovae dst32, src32`
    pub fn cmovae_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; cmovae Rd(d.0), Rd(s.0));
    }

    /// `cmp byte [base + disp], imm8`
    pub fn cmp_mi8(&mut self, b: Gpr, o: i32, imm: u8) {
        x64!(self.ops; cmp BYTE [Rq(b.0) + o], imm as i8);
    }

    /// `cmp word [base + disp], imm16`
    pub fn cmp_mi16(&mut self, b: Gpr, o: i32, imm: u16) {
        x64!(self.ops; cmp WORD [Rq(b.0) + o], imm as i16);
    }

    /// `test word [base + disp], imm16`
    pub fn test_mi16(&mut self, b: Gpr, o: i32, imm: u16) {
        x64!(self.ops; test WORD [Rq(b.0) + o], imm as i16);
    }

    /// `sub dword [base + disp], imm8`
    pub fn sub_mi32(&mut self, b: Gpr, o: i32, imm: i8) {
        x64!(self.ops; sub DWORD [Rq(b.0) + o], imm as i32);
    }

    /// `add dword [base + disp], imm8`
    pub fn add_mi32(&mut self, b: Gpr, o: i32, imm: i8) {
        x64!(self.ops; add DWORD [Rq(b.0) + o], imm as i32);
    }

    /// `sub dst64, imm32`
    pub fn sub_ri64(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; sub Rq(d.0), imm);
    }

    /// `imul dst32, src32, imm32`
    pub fn imul_rri32(&mut self, d: Gpr, s: Gpr, imm: i32) {
        x64!(self.ops; imul Rd(d.0), Rd(s.0), imm);
    }

    /// `add dst64, [base + disp]`
    pub fn add_rm64(&mut self, d: Gpr, b: Gpr, o: i32) {
        x64!(self.ops; add Rq(d.0), QWORD [Rq(b.0) + o]);
    }

    /// `push src64`
    pub fn push(&mut self, r: Gpr) {
        x64!(self.ops; push Rq(r.0));
    }

    /// `pop dst64`
    pub fn pop(&mut self, r: Gpr) {
        x64!(self.ops; pop Rq(r.0));
    }

    /// `call src64`
    pub fn call_r(&mut self, r: Gpr) {
        x64!(self.ops; call Rq(r.0));
    }

    /// `call label`
    pub fn call_label(&mut self, l: DynamicLabel) {
        x64!(self.ops; call =>l);
    }

    /// `ret`
    pub fn ret(&mut self) {
        x64!(self.ops; ret);
    }

    /// `jmp label`
    pub fn jmp(&mut self, l: DynamicLabel) {
        x64!(self.ops; jmp =>l);
    }

    /// `jb label` (unsigned below / carry)
    pub fn jb(&mut self, l: DynamicLabel) {
        x64!(self.ops; jb =>l);
    }

    /// `jae label` (no carry)
    pub fn jae(&mut self, l: DynamicLabel) {
        x64!(self.ops; jae =>l);
    }

    /// `je label`
    pub fn je(&mut self, l: DynamicLabel) {
        x64!(self.ops; je =>l);
    }

    /// `jne label`
    pub fn jne(&mut self, l: DynamicLabel) {
        x64!(self.ops; jne =>l);
    }

    /// Bind `l` here.
    pub fn bind(&mut self, l: DynamicLabel) {
        x64!(self.ops; =>l);
    }

    /// A fresh label.
    pub fn new_label(&mut self) -> DynamicLabel {
        self.ops.new_dynamic_label()
    }
}

impl Asm {
    /// `or dst32, src32`
    pub fn or_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; or Rd(d.0), Rd(s.0));
    }

    /// `movd [base + disp], src` (lane 0, 32 bits)
    pub fn movd_mx(&mut self, b: Gpr, o: i32, s: Xmm) {
        x64!(self.ops; movd DWORD [Rq(b.0) + o], Rx(s.0));
    }
}

impl Asm {
    /// `movhlps dst, src`
    pub fn movhlps(&mut self, d: Xmm, s: Xmm) {
        x64!(self.ops; movhlps Rx(d.0), Rx(s.0));
    }

    /// `movlhps dst, src`
    pub fn movlhps(&mut self, d: Xmm, s: Xmm) {
        x64!(self.ops; movlhps Rx(d.0), Rx(s.0));
    }
}

impl Asm {
    /// `mov dst32, src32`
    pub fn mov_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; mov Rd(d.0), Rd(s.0));
    }

    /// `shr dst64, imm`
    pub fn shr_ri64(&mut self, d: Gpr, imm: u8) {
        x64!(self.ops; shr Rq(d.0), imm as i8);
    }

    /// `sar dst64, imm`
    pub fn sar_ri64(&mut self, d: Gpr, imm: u8) {
        x64!(self.ops; sar Rq(d.0), imm as i8);
    }

    /// `shl dst64, cl`
    pub fn shl_rcl64(&mut self, d: Gpr) {
        x64!(self.ops; shl Rq(d.0), cl);
    }

    /// `sar dst64, cl`
    pub fn sar_rcl64(&mut self, d: Gpr) {
        x64!(self.ops; sar Rq(d.0), cl);
    }

    /// `imul dst64, src64`
    pub fn imul_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; imul Rq(d.0), Rq(s.0));
    }

    /// `cmp dst64, src64`
    pub fn cmp_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; cmp Rq(d.0), Rq(s.0));
    }

    /// `cmp dst64, imm32` (sign-extended)
    pub fn cmp_ri64(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; cmp Rq(d.0), imm);
    }

    /// `cmova dst64, src64`
    pub fn cmova_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; cmova Rq(d.0), Rq(s.0));
    }

    /// `cmova dst32, src32`
    pub fn cmova_rr32(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; cmova Rd(d.0), Rd(s.0));
    }

    /// `neg dst64`
    pub fn neg_r64(&mut self, d: Gpr) {
        x64!(self.ops; neg Rq(d.0));
    }

    /// `neg dst32`
    pub fn neg_r32(&mut self, d: Gpr) {
        x64!(self.ops; neg Rd(d.0));
    }

    /// `bsr dst64, src64`
    pub fn bsr_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; bsr Rq(d.0), Rq(s.0));
    }

    /// `test dst64, src64`
    pub fn test_rr64(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; test Rq(d.0), Rq(s.0));
    }

    /// `add dst64, src64` where src is an imm32 (sign-extended)
    pub fn add_ri64(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; add Rq(d.0), imm);
    }

    /// `lea dst64, [rip + label]`
    pub fn lea_label(&mut self, d: Gpr, l: DynamicLabel) {
        x64!(self.ops; lea Rq(d.0), [=>l]);
    }

    /// `mov dst32, [base + index*4]`
    pub fn mov_r32_idx4(&mut self, d: Gpr, b: Gpr, i: Gpr) {
        x64!(self.ops; mov Rd(d.0), DWORD [Rq(b.0) + Rq(i.0) * 4]);
    }

    /// `add dst64, [base + index*8]`
    pub fn add_r64_idx8(&mut self, d: Gpr, b: Gpr, i: Gpr) {
        x64!(self.ops; add Rq(d.0), QWORD [Rq(b.0) + Rq(i.0) * 8]);
    }

    /// `lea dst32, [base + index + disp]`
    pub fn lea_r32_idx(&mut self, d: Gpr, b: Gpr, i: Gpr, o: i32) {
        x64!(self.ops; lea Rd(d.0), [Rq(b.0) + Rq(i.0) + o]);
    }

    /// `or dst32, imm32`
    pub fn or_ri32(&mut self, d: Gpr, imm: i32) {
        x64!(self.ops; or Rd(d.0), imm);
    }

    /// `js label`
    pub fn js(&mut self, l: DynamicLabel) {
        x64!(self.ops; js =>l);
    }

    /// `jns label`
    pub fn jns(&mut self, l: DynamicLabel) {
        x64!(self.ops; jns =>l);
    }

    /// `ja label`
    pub fn ja(&mut self, l: DynamicLabel) {
        x64!(self.ops; ja =>l);
    }

    /// `jl label` (signed less)
    pub fn jl(&mut self, l: DynamicLabel) {
        x64!(self.ops; jl =>l);
    }

    /// `jge label` (signed greater or equal)
    pub fn jge(&mut self, l: DynamicLabel) {
        x64!(self.ops; jge =>l);
    }
}

/// `op dst, src` on two general-purpose registers (`Rq`: 64-bit, `Rd`: 32-bit).
macro_rules! gpr_rr {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " dst, src` (", stringify!($r), ")")]
                pub fn $name(&mut self, d: Gpr, s: Gpr) {
                    x64!(self.ops; $mn $r(d.0), $r(s.0));
                }
            )*
        }
    };
}

/// `op dst, imm32` (sign-extended for 64-bit forms).
macro_rules! gpr_ri {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " dst, imm32` (", stringify!($r), ")")]
                pub fn $name(&mut self, d: Gpr, imm: i32) {
                    x64!(self.ops; $mn $r(d.0), imm);
                }
            )*
        }
    };
}

/// `op dst, cl` (variable shifts).
macro_rules! gpr_rcl {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " dst, cl` (", stringify!($r), ")")]
                pub fn $name(&mut self, d: Gpr) {
                    x64!(self.ops; $mn $r(d.0), cl);
                }
            )*
        }
    };
}

// The forms of the integer macro-assembler (`crate::host::x64::int`) beyond those above.
gpr_rr!(
    and_rr64 => and Rq, or_rr64 => or Rq, xor_rr64 => xor Rq,
    add_rr32 => add Rd, sub_rr32 => sub Rd, and_rr32 => and Rd, imul_rr32 => imul Rd,
    cmp_rr32 => cmp Rd,
);
gpr_ri!(
    and_ri64 => and Rq, or_ri64 => or Rq, xor_ri64 => xor Rq,
    sub_ri32 => sub Rd, xor_ri32 => xor Rd, test_ri64 => test Rq, test_ri32 => test Rd,
);
gpr_rcl!(shr_rcl64 => shr Rq, shl_rcl32 => shl Rd, shr_rcl32 => shr Rd, sar_rcl32 => sar Rd);

/// `op dst` (one register operand).
macro_rules! gpr_r {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " dst` (", stringify!($r), ")")]
                pub fn $name(&mut self, d: Gpr) {
                    x64!(self.ops; $mn $r(d.0));
                }
            )*
        }
    };
}

/// `op size [base + disp], imm32`
macro_rules! gpr_mi {
    ($($name:ident => $mn:ident $size:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($size), " [base + disp], imm32`")]
                pub fn $name(&mut self, b: Gpr, o: i32, imm: i32) {
                    x64!(self.ops; $mn $size [Rq(b.0) + o], imm);
                }
            )*
        }
    };
}

/// `op size [base + disp], src`
macro_rules! gpr_mr {
    ($($name:ident => $mn:ident $size:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($size), " [base + disp], src`")]
                pub fn $name(&mut self, b: Gpr, o: i32, s: Gpr) {
                    x64!(self.ops; $mn $size [Rq(b.0) + o], $r(s.0));
                }
            )*
        }
    };
}

/// `op size [base + index + disp], src`
macro_rules! gpr_mr_idx {
    ($($name:ident => $mn:ident $size:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($size), " [base + index + disp], src`")]
                pub fn $name(&mut self, b: Gpr, i: Gpr, o: i32, s: Gpr) {
                    x64!(self.ops; $mn $size [Rq(b.0) + Rq(i.0) + o], $r(s.0));
                }
            )*
        }
    };
}

/// `jcc label`
macro_rules! jcc {
    ($($mn:ident: $what:literal),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " label` (", $what, ")")]
                pub fn $mn(&mut self, l: DynamicLabel) {
                    x64!(self.ops; $mn =>l);
                }
            )*
        }
    };
}

gpr_r!(div_r64 => div Rq, div_r32 => div Rd);
gpr_mi!(
    mov_mi32 => mov DWORD, mov_mi64 => mov QWORD, cmp_mi32 => cmp DWORD, cmp_mi64 => cmp QWORD,
);
gpr_mr!(
    mov_mr8 => mov BYTE Rb, mov_mr16 => mov WORD Rw, mov_mr32 => mov DWORD Rd,
    mov_mr64 => mov QWORD Rq, add_mr32 => add DWORD Rd, add_mr64 => add QWORD Rq,
    cmp_mr32 => cmp DWORD Rd, cmp_mr64 => cmp QWORD Rq,
);
gpr_mr_idx!(mov_mr32_idx => mov DWORD Rd, mov_mr64_idx => mov QWORD Rq);
jcc!(
    jbe: "unsigned below or equal", jle: "signed less or equal", jg: "signed greater",
    jno: "no signed overflow",
);

impl Asm {
    /// `sar dst32, imm`
    pub fn sar_ri32(&mut self, d: Gpr, imm: u8) {
        x64!(self.ops; sar Rd(d.0), imm as i8);
    }

    /// `imul dst64, src64, imm32`
    pub fn imul_rri64(&mut self, d: Gpr, s: Gpr, imm: i32) {
        x64!(self.ops; imul Rq(d.0), Rq(s.0), imm);
    }

    /// `movsxd dst64, src32`
    pub fn movsxd(&mut self, d: Gpr, s: Gpr) {
        x64!(self.ops; movsxd Rq(d.0), Rd(s.0));
    }

    /// `mov dst64, [base + index*8]`
    pub fn mov_r64_idx8(&mut self, d: Gpr, b: Gpr, i: Gpr) {
        x64!(self.ops; mov Rq(d.0), QWORD [Rq(b.0) + Rq(i.0) * 8]);
    }

    /// `add dst32, [base + index*4]`
    pub fn add_r32_idx4(&mut self, d: Gpr, b: Gpr, i: Gpr) {
        x64!(self.ops; add Rd(d.0), DWORD [Rq(b.0) + Rq(i.0) * 4]);
    }

    /// `sub dst64, imm8` (sign-extended)
    pub fn sub_ri64_8(&mut self, d: Gpr, imm: i8) {
        x64!(self.ops; sub Rq(d.0), BYTE imm);
    }

    /// `sub dst32, imm8` (sign-extended)
    pub fn sub_ri32_8(&mut self, d: Gpr, imm: i8) {
        x64!(self.ops; sub Rd(d.0), BYTE imm);
    }
}
