//! The 256-bit (AVX/AVX2) instruction forms on top of the x86-64 backend's [`Asm`] (same code
//! buffer type, same constant pool), and the few 128-bit VEX forms SSE has no encoding for.
//!
//! Two encoders are used, each only where it is correct:
//!
//! * **dynasm** for every VEX form *without* an immediate (`vaddps ymm, ymm, ymm/m256`,
//!   `vpcmpgtd`, `vbroadcastss`, moves, conversions, unpacks…). Every `dynasm!` call goes through
//!   the local `x64!` macro, which pins `.arch x64`.
//! * **[`Yasm::vex_rr`] / [`Yasm::vex_rm`]**, a small VEX encoder, for every form with an
//!   8-bit immediate or an is4 register operand (`vcmpps`, `vcmppd`, `vroundps`, `vinsertf128`,
//!   `vextractf128`, `vblendvps`, `vblendps`, `vpshufd`, `vpermq`, the shift-by-immediate
//!   group) and for the 256-bit forms dynasm 5.1.0 gets wrong or lacks (`vbroadcastss ymm, m32`
//!   comes out as the xmm form, `vmovmskps r32, ymm` is refused). dynasm also mis-encodes
//!   several AVX imm8 forms (register forms swap their sources, memory forms drop the memory
//!   operand); writing the few bytes ourselves is simpler than proving which forms are safe.
//!   The memory encoder handles `[base + disp32]`, `[base + index + disp32]` and pool
//!   constants (RIP-relative, through a dynasm relocation).
//!
//! `tests/jit_x64_encoding.rs` decodes every form this file can emit with iced-x86 and checks
//! mnemonic and operands, with low and REX-extended registers.

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use crate::host::x64::asm::{Asm, Mem};
use crate::host::x64::regs::Gpr;
use dynasmrt::relocations::{Relocation, RelocationKind, RelocationSize};
use dynasmrt::x64::X64Relocation;
use dynasmrt::{DynasmApi, DynasmLabelApi};

use crate::host::x64::asm::x64;

/// The opcode fields of a raw VEX encoding, the same in its register and memory forms
/// ([`Yasm::vex_rr`], [`Yasm::vex_rm`]): `map` 1 = 0F, 2 = 0F38, 3 = 0F3A; `pp` 0 = none,
/// 1 = 66, 2 = F3, 3 = F2; `l256` VEX.L (256-bit); `w` VEX.W; `op` the opcode byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VexOp {
    pub map: u8,
    pub pp: u8,
    pub l256: bool,
    pub w: bool,
    pub op: u8,
}

impl VexOp {
    pub const fn new(map: u8, pp: u8, l256: bool, w: bool, op: u8) -> VexOp {
        VexOp {
            map,
            pp,
            l256,
            w,
            op,
        }
    }
}

/// A 256-bit register (its low half is the xmm register of the same number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ymm(pub u8);

/// Second source of a three-operand VEX instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YOp {
    /// A register.
    Reg(Ymm),
    /// Memory (no alignment requirement: VEX arithmetic forms do not fault on it).
    Mem(Mem),
}

impl From<Ymm> for YOp {
    fn from(y: Ymm) -> YOp {
        YOp::Reg(y)
    }
}

impl From<Mem> for YOp {
    fn from(m: Mem) -> YOp {
        YOp::Mem(m)
    }
}

/// `cmpps`/`cmppd` predicates used by the emitter (the SSE-compatible subset, exceptions
/// masked so signalling vs quiet does not matter).
pub mod pred {
    /// `a == b` (false if unordered).
    pub const EQ: u8 = 0;
    /// `a < b` (false if unordered).
    pub const LT: u8 = 1;
    /// `a <= b` (false if unordered).
    pub const LE: u8 = 2;
    /// `a != b` (true if unordered).
    pub const NEQ: u8 = 4;
    /// Neither is NaN.
    pub const ORD: u8 = 7;
}

/// Three-operand VEX.256 forms without an immediate: `op dst, a, b` (`b` register or memory).
macro_rules! vex_rrr {
    ($($m:ident),* $(,)?) => {
        impl Yasm<'_> {
            $(
                #[doc = concat!("`", stringify!($m), " ymm, ymm, ymm/m256`")]
                pub fn $m(&mut self, d: Ymm, a: Ymm, b: impl Into<YOp>) {
                    let ops = &mut self.a.ops;
                    match b.into() {
                        YOp::Reg(r) => x64!(ops; $m Ry(d.0), Ry(a.0), Ry(r.0)),
                        // Literal displacements: dynasm encodes a run-time one in 32 bits.
                        YOp::Mem(Mem::Base(base, o)) if base == HOT_BASE => match o {
                            -128 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp - 128]),
                            -96 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp - 96]),
                            -64 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp - 64]),
                            -32 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp - 32]),
                            0 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp]),
                            32 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp + 32]),
                            64 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp + 64]),
                            96 => x64!(ops; $m Ry(d.0), Ry(a.0), [rbp + 96]),
                            _ => x64!(ops; $m Ry(d.0), Ry(a.0), [Rq(base.0) + o]),
                        },
                        YOp::Mem(Mem::Base(base, o)) => {
                            x64!(ops; $m Ry(d.0), Ry(a.0), [Rq(base.0) + o])
                        }
                        YOp::Mem(Mem::Index(base, i, o)) => {
                            x64!(ops; $m Ry(d.0), Ry(a.0), [Rq(base.0) + Rq(i.0) + o])
                        }
                        YOp::Mem(Mem::Const(l)) => x64!(ops; $m Ry(d.0), Ry(a.0), [=>l]),
                    }
                }
            )*
        }

        /// Every three-operand form above, by mnemonic: the encoding test
        /// (`tests/jit_x64_encoding.rs`) decodes each, so a form added here is checked
        /// without a second list to keep in step.
        pub const THREE_OPERAND_FORMS: &[(&str, fn(&mut Yasm<'_>, Ymm, Ymm, YOp))] =
            &[$((stringify!($m), |y, d, a, b| y.$m(d, a, b))),*];
    };
}

/// Two-operand VEX.256 forms without an immediate: `op dst, src` (register or memory).
macro_rules! vex_rr {
    ($($m:ident),* $(,)?) => {
        impl Yasm<'_> {
            $(
                #[doc = concat!("`", stringify!($m), " ymm, ymm/m256`")]
                pub fn $m(&mut self, d: Ymm, s: impl Into<YOp>) {
                    let ops = &mut self.a.ops;
                    match s.into() {
                        YOp::Reg(r) => x64!(ops; $m Ry(d.0), Ry(r.0)),
                        YOp::Mem(Mem::Base(base, o)) if base == HOT_BASE => match o {
                            -128 => x64!(ops; $m Ry(d.0), [rbp - 128]),
                            -96 => x64!(ops; $m Ry(d.0), [rbp - 96]),
                            -64 => x64!(ops; $m Ry(d.0), [rbp - 64]),
                            -32 => x64!(ops; $m Ry(d.0), [rbp - 32]),
                            0 => x64!(ops; $m Ry(d.0), [rbp]),
                            32 => x64!(ops; $m Ry(d.0), [rbp + 32]),
                            64 => x64!(ops; $m Ry(d.0), [rbp + 64]),
                            96 => x64!(ops; $m Ry(d.0), [rbp + 96]),
                            _ => x64!(ops; $m Ry(d.0), [Rq(base.0) + o]),
                        },
                        YOp::Mem(Mem::Base(base, o)) => x64!(ops; $m Ry(d.0), [Rq(base.0) + o]),
                        YOp::Mem(Mem::Index(base, i, o)) => {
                            x64!(ops; $m Ry(d.0), [Rq(base.0) + Rq(i.0) + o])
                        }
                        YOp::Mem(Mem::Const(l)) => x64!(ops; $m Ry(d.0), [=>l]),
                    }
                }
            )*
        }
    };
}

/// The register code that uses [`Asm::hot32`] keeps `Asm::hot_label` in (set once at its
/// entry), so that its most used constants take an 8-bit displacement instead of a
/// RIP-relative 32-bit one (and a low register keeps the two-byte VEX prefix): two bytes less
/// in each instruction that reads one.
pub const HOT_BASE: Gpr = crate::host::x64::regs::RBP;

/// A view of an [`Asm`] for 256-bit forms and 32-byte constants.
pub struct Yasm<'a> {
    /// The underlying assembler (labels, GPR forms, pool).
    pub a: &'a mut Asm,
}

vex_rrr!(
    vaddps,
    vmulps,
    vdivps,
    vmaxps,
    vminps,
    vandps,
    vandnps,
    vorps,
    vxorps,
    vpand,
    vpandn,
    vpor,
    vpxor,
    vpaddd,
    vpsubd,
    vpcmpgtd,
    vpcmpeqd,
    vpaddq,
    vpcmpgtq,
    vaddpd,
    vmulpd,
    vdivpd,
    vunpcklps,
    vunpckhps,
    vunpcklpd,
    vunpckhpd,
    vsubpd,
    vpmuludq,
    vpmaxud,
    vpsrlvd,
    vpermd,
    vpmuldq,
    vpsrlvq,
    vpsllvq,
    vpcmpeqq,
    vpsubq,
    vpsllvd,
    vpsravd,
    vfmadd231ps,
    vsubps,
    vhaddpd,
);

vex_rr!(vmovaps, vmovups, vcvttps2dq, vsqrtpd, vsqrtps);

impl<'a> Yasm<'a> {
    /// Wrap `a`.
    pub fn new(a: &'a mut Asm) -> Yasm<'a> {
        Yasm { a }
    }

    /// `v` in all eight lanes: a 32-byte constant (32-aligned in the pool, so that no load of
    /// it straddles a cache line).
    pub fn splat(&mut self, v: u32) -> Mem {
        self.constant([v; 8])
    }

    /// A 64-bit value in all four qword lanes.
    pub fn splat64(&mut self, v: u64) -> Mem {
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        self.constant([lo, hi, lo, hi, lo, hi, lo, hi])
    }

    /// A 32-byte constant: one of [`Asm::hot32`] through [`HOT_BASE`], any other in the pool.
    pub fn constant(&mut self, v: [u32; 8]) -> Mem {
        match self.a.hot32.iter().position(|h| *h == v) {
            Some(i) => Mem::Base(HOT_BASE, 32 * i as i32 - 128),
            None => Mem::Const(self.a.constant32(v)),
        }
    }

    /// `vmovaps m256, ymm` / `vmovups` when `aligned` is false.
    pub fn store(&mut self, m: Mem, s: Ymm, aligned: bool) {
        let ops = &mut self.a.ops;
        match (m, aligned) {
            (Mem::Base(b, o), true) => x64!(ops; vmovaps [Rq(b.0) + o], Ry(s.0)),
            (Mem::Base(b, o), false) => x64!(ops; vmovups [Rq(b.0) + o], Ry(s.0)),
            (Mem::Index(b, i, o), true) => x64!(ops; vmovaps [Rq(b.0) + Rq(i.0) + o], Ry(s.0)),
            (Mem::Index(b, i, o), false) => {
                x64!(ops; vmovups [Rq(b.0) + Rq(i.0) + o], Ry(s.0))
            }
            (Mem::Const(_), _) => unreachable!("the constant pool is read-only"),
        }
    }

    /// `vmovups xmm, m128` (the low half of `d`; the upper half is zeroed).
    pub fn load_x(&mut self, d: Ymm, m: Mem) {
        let ops = &mut self.a.ops;
        match m {
            Mem::Base(b, o) => x64!(ops; vmovups Rx(d.0), [Rq(b.0) + o]),
            Mem::Index(b, i, o) => x64!(ops; vmovups Rx(d.0), [Rq(b.0) + Rq(i.0) + o]),
            Mem::Const(l) => x64!(ops; vmovups Rx(d.0), [=>l]),
        }
    }

    /// `vmovups m128, xmm` (the low half of `s`).
    pub fn store_x(&mut self, m: Mem, s: Ymm) {
        let ops = &mut self.a.ops;
        match m {
            Mem::Base(b, o) => x64!(ops; vmovups [Rq(b.0) + o], Rx(s.0)),
            Mem::Index(b, i, o) => x64!(ops; vmovups [Rq(b.0) + Rq(i.0) + o], Rx(s.0)),
            Mem::Const(_) => unreachable!("the constant pool is read-only"),
        }
    }

    /// `vbroadcastss ymm, m32` (raw encoding: dynasm 5.1.0 emits the 128-bit form). Only
    /// `[base + disp]` and `[base + index + disp]` operands.
    pub fn vbroadcastss(&mut self, d: Ymm, m: Mem) {
        self.vex_rm(VexOp::new(2, 1, true, false, 0x18), d.0, 0, m, None);
    }

    /// `vbroadcastss ymm, xmm`: lane 0 of `s` into all eight lanes (raw encoding).
    pub fn vbroadcastss_r(&mut self, d: Ymm, s: Ymm) {
        self.vex_rr(VexOp::new(2, 1, true, false, 0x18), d.0, 0, s.0);
    }

    /// `vcvtps2pd ymm, xmm` (the low four lanes of `s`).
    pub fn vcvtps2pd(&mut self, d: Ymm, s: Ymm) {
        x64!(self.a.ops; vcvtps2pd Ry(d.0), Rx(s.0));
    }

    /// `vcvtpd2ps xmm, ymm` (four doubles into the low half of `d`, upper half zeroed).
    pub fn vcvtpd2ps(&mut self, d: Ymm, s: Ymm) {
        x64!(self.a.ops; vcvtpd2ps Rx(d.0), Ry(s.0));
    }

    /// `vmovmskps r32, ymm` (raw encoding: dynasm 5.1.0 has no 256-bit form).
    pub fn vmovmskps(&mut self, d: Gpr, s: Ymm) {
        self.vex_rr(VexOp::new(1, 0, true, false, 0x50), d.0, 0, s.0);
    }

    /// `vzeroupper` (before returning to or calling SSE code).
    pub fn vzeroupper(&mut self) {
        x64!(self.a.ops; vzeroupper);
    }

    /// The 3-byte VEX prefix (`C4`) and the opcode byte: VEX.R from `reg` (ModRM.reg), VEX.X
    /// from `index` and VEX.B from `base` (each the register whose bit 3 extends the field; 0
    /// where the form has none), VEX.vvvv from `vvvv`.
    fn vex_prefix(&mut self, v: VexOp, reg: u8, index: u8, base: u8, vvvv: u8) {
        let r = (!reg >> 3) & 1;
        let x = (!index >> 3) & 1;
        let b = (!base >> 3) & 1;
        let byte1 = (r << 7) | (x << 6) | (b << 5) | v.map;
        let byte2 = ((v.w as u8) << 7) | ((!vvvv & 0xF) << 3) | ((v.l256 as u8) << 2) | v.pp;
        self.a.ops.extend([0xC4, byte1, byte2, v.op]);
    }

    /// Raw register-only VEX encoding (3-byte `C4` form): `reg` is ModRM.reg (a register or
    /// an opcode extension), `vvvv` the extra source, `rm` ModRM.rm.
    pub fn vex_rr(&mut self, v: VexOp, reg: u8, vvvv: u8, rm: u8) {
        self.vex_prefix(v, reg, 0, rm, vvvv);
        self.byte(0xC0 | ((reg & 7) << 3) | (rm & 7));
    }

    /// Raw VEX encoding with a memory operand `[base + disp32]`, `[base + index + disp32]`
    /// or a pool constant (RIP-relative), followed by the immediate `imm` if any (always a
    /// 32-bit displacement, so no special cases for rbp/r13 bases; a SIB byte for rsp/r12
    /// bases and for indexed forms). Fields as in [`Self::vex_rr`].
    pub fn vex_rm(&mut self, v: VexOp, reg: u8, vvvv: u8, m: Mem, imm: Option<u8>) {
        let (base, index, disp) = match m {
            Mem::Base(b, o) => (b.0, None, o),
            Mem::Index(b, i, o) => (b.0, Some(i.0), o),
            Mem::Const(l) => {
                self.vex_prefix(v, reg, 0, 0, vvvv);
                self.byte(((reg & 7) << 3) | 5);
                self.a.ops.extend(0i32.to_le_bytes());
                let tail = imm.map_or(0, |i| {
                    self.byte(i);
                    1
                });
                // The displacement is relative to the end of the instruction.
                let rel = X64Relocation::from_size(RelocationKind::Relative, RelocationSize::DWord);
                self.a.ops.dynamic_relocation(l, 0, 4 + tail, 0, rel);
                return;
            }
        };
        assert!(index != Some(4), "rsp cannot be an index");
        self.vex_prefix(v, reg, index.unwrap_or(0), base, vvvv);
        match index {
            None if base & 7 != 4 => self.byte(0x80 | ((reg & 7) << 3) | (base & 7)),
            None => {
                self.byte(0x80 | ((reg & 7) << 3) | 4);
                self.byte((4 << 3) | (base & 7)); // no index
            }
            Some(i) => {
                self.byte(0x80 | ((reg & 7) << 3) | 4);
                self.byte(((i & 7) << 3) | (base & 7)); // scale 1
            }
        }
        self.a.ops.extend(disp.to_le_bytes());
        if let Some(i) = imm {
            self.byte(i);
        }
    }

    fn byte(&mut self, b: u8) {
        self.a.ops.push(b);
    }

    /// `vcmpps ymm, ymm, ymm, pred` (raw encoding).
    pub fn vcmpps(&mut self, d: Ymm, a: Ymm, b: Ymm, pred: u8) {
        self.vex_rr(VexOp::new(1, 0, true, false, 0xC2), d.0, a.0, b.0);
        self.byte(pred);
    }

    /// `vcmppd ymm, ymm, ymm, pred` (raw encoding).
    pub fn vcmppd(&mut self, d: Ymm, a: Ymm, b: Ymm, pred: u8) {
        self.vex_rr(VexOp::new(1, 1, true, false, 0xC2), d.0, a.0, b.0);
        self.byte(pred);
    }

    /// `vroundps ymm, ymm, imm` (raw encoding).
    pub fn vroundps(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.rri(3, false, 0x08, d, s, imm);
    }

    /// `vroundpd ymm, ymm, imm` (raw encoding).
    pub fn vroundpd(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.rri(3, false, 0x09, d, s, imm);
    }

    /// A 256-bit 66-prefixed form `op d, s, imm` (raw encoding; fields as in
    /// [`Self::vex_rr`]).
    fn rri(&mut self, map: u8, w: bool, op: u8, d: Ymm, s: Ymm, imm: u8) {
        self.vex_rr(VexOp::new(map, 1, true, w, op), d.0, 0, s.0);
        self.byte(imm);
    }

    /// `vcvttpd2dq xmm, ymm`: four doubles truncated to i32 in the low half of `d` (upper
    /// half zeroed; raw encoding).
    pub fn vcvttpd2dq(&mut self, d: Ymm, s: Ymm) {
        self.vex_rr(VexOp::new(1, 1, true, false, 0xE6), d.0, 0, s.0);
    }

    /// `vinsertf128 ymm, ymm, xmm, 1`: `d` = (low half of `a`, low half of `b`).
    pub fn vinsertf128_hi(&mut self, d: Ymm, a: Ymm, b: Ymm) {
        self.vex_rr(VexOp::new(3, 1, true, false, 0x18), d.0, a.0, b.0);
        self.byte(1);
    }

    /// `vextractf128 xmm, ymm, 1`: the upper half of `s` into `d` (upper half of `d` zeroed).
    pub fn vextractf128_hi(&mut self, d: Ymm, s: Ymm) {
        self.vex_rr(VexOp::new(3, 1, true, false, 0x19), s.0, 0, d.0);
        self.byte(1);
    }

    /// `vblendvps ymm, ymm, ymm, ymm`: per lane `mask < 0 ? b : a` (raw encoding).
    pub fn vblendvps(&mut self, d: Ymm, a: Ymm, b: Ymm, mask: Ymm) {
        self.blendv(true, [d, a, b, mask]);
    }

    /// `vblendvps xmm, xmm, xmm, xmm` (the low halves; raw encoding).
    pub fn vblendvps_x(&mut self, d: Ymm, a: Ymm, b: Ymm, mask: Ymm) {
        self.blendv(false, [d, a, b, mask]);
    }

    fn blendv(&mut self, l256: bool, [d, a, b, mask]: [Ymm; 4]) {
        self.vex_rr(VexOp::new(3, 1, l256, false, 0x4A), d.0, a.0, b.0);
        self.byte(mask.0 << 4);
    }

    /// `vblendps ymm, ymm, ymm/m256, imm`: the lanes whose bit is set in `imm` from `b`,
    /// the others from `a` (raw encoding).
    pub fn vblendps(&mut self, d: Ymm, a: Ymm, b: YOp, imm: u8) {
        match b {
            YOp::Reg(b) => {
                self.vex_rr(VexOp::new(3, 1, true, false, 0x0C), d.0, a.0, b.0);
                self.byte(imm);
            }
            YOp::Mem(m) => self.vex_rm(VexOp::new(3, 1, true, false, 0x0C), d.0, a.0, m, Some(imm)),
        }
    }

    /// `vpshufd ymm, ymm, imm`: the dwords of each 128-bit half of `s` in the order `imm`
    /// gives (raw encoding).
    pub fn vpshufd(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.rri(1, false, 0x70, d, s, imm);
    }

    /// `vpermq ymm, ymm, imm`: the qwords of `s` in the order `imm` gives (raw encoding).
    pub fn vpermq(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.rri(3, true, 0x00, d, s, imm);
    }

    fn shift(&mut self, op: u8, ext: u8, d: Ymm, s: Ymm, imm: u8) {
        self.vex_rr(VexOp::new(1, 1, true, false, op), ext, d.0, s.0);
        self.byte(imm);
    }

    /// `vpsrld ymm, ymm, imm` (raw encoding).
    pub fn vpsrld(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.shift(0x72, 2, d, s, imm);
    }

    /// `vpslld ymm, ymm, imm` (raw encoding).
    pub fn vpslld(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.shift(0x72, 6, d, s, imm);
    }

    /// `vpsrad ymm, ymm, imm` (raw encoding).
    pub fn vpsrad(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.shift(0x72, 4, d, s, imm);
    }

    /// `vpsrlq ymm, ymm, imm` (raw encoding).
    pub fn vpsrlq(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.shift(0x73, 2, d, s, imm);
    }

    /// `vpsllq ymm, ymm, imm` (raw encoding).
    pub fn vpsllq(&mut self, d: Ymm, s: Ymm, imm: u8) {
        self.shift(0x73, 6, d, s, imm);
    }

    /// `vpgatherdd ymm, [base + idx·4 + disp], mask` (raw VSIB encoding): the dwords at the
    /// eight lane addresses whose mask lane has its sign bit set; `mask` is cleared. `d`,
    /// `idx` and `mask` must be distinct.
    pub fn vpgatherdd(&mut self, d: Ymm, base: Gpr, idx: Ymm, disp: i32, mask: Ymm) {
        self.gather(true, d, base, idx, disp, mask);
    }

    /// `vpgatherdd xmm, [base + idx·4 + disp], mask`: [`Self::vpgatherdd`] on four lanes.
    pub fn vpgatherdd_x(&mut self, d: Ymm, base: Gpr, idx: Ymm, disp: i32, mask: Ymm) {
        self.gather(false, d, base, idx, disp, mask);
    }

    fn gather(&mut self, l256: bool, d: Ymm, base: Gpr, idx: Ymm, disp: i32, mask: Ymm) {
        assert!(
            d != idx && d != mask && idx != mask,
            "vpgatherdd operands must differ"
        );
        let r = (!d.0 >> 3) & 1;
        let x = (!idx.0 >> 3) & 1;
        let b = (!base.0 >> 3) & 1;
        let byte1 = (r << 7) | (x << 6) | (b << 5) | 2; // 0F38
        let byte2 = ((!mask.0 & 0xF) << 3) | ((l256 as u8) << 2) | 1; // W0, 66
        self.a.ops.extend([0xC4, byte1, byte2, 0x90]);
        self.byte(0x80 | ((d.0 & 7) << 3) | 4); // disp32, SIB
        self.byte((2 << 6) | ((idx.0 & 7) << 3) | (base.0 & 7)); // scale 4
        self.a.ops.extend(disp.to_le_bytes());
    }

    /// `vmovd xmm, r32` (the upper lanes of `d` zeroed; raw encoding).
    pub fn vmovd_from(&mut self, d: Ymm, s: Gpr) {
        self.vex_rr(VexOp::new(1, 1, false, false, 0x6E), d.0, 0, s.0);
    }

    /// `vpbroadcastd ymm, xmm`: lane 0 of `s` into all eight lanes (raw encoding).
    pub fn vpbroadcastd(&mut self, d: Ymm, s: Ymm) {
        self.vex_rr(VexOp::new(2, 1, true, false, 0x58), d.0, 0, s.0);
    }

    /// `vpmovzxdq ymm, xmm`: the four low dwords of `s` zero-extended to qwords (raw).
    pub fn vpmovzxdq(&mut self, d: Ymm, s: Ymm) {
        self.vex_rr(VexOp::new(2, 1, true, false, 0x35), d.0, 0, s.0);
    }

    /// `vpmovsxdq ymm, xmm`: the four low dwords of `s` sign-extended to qwords (raw).
    pub fn vpmovsxdq(&mut self, d: Ymm, s: Ymm) {
        self.vex_rr(VexOp::new(2, 1, true, false, 0x25), d.0, 0, s.0);
    }
}
