//! A thin typed layer over dynasm for AArch64: the `.arch aarch64` wrapper macro, the literal
//! pool, and one method per instruction form the backend emits, named after the mnemonic and
//! its arrangement (`fadd_4s(d, a, b)`, `ldr_q(d, base, off)`).
//!
//! Every `dynasm!` invocation goes through the local `a64!` macro, which pins `.arch aarch64`:
//! the proc macro would otherwise assemble for the build host (x86-64 here), whatever the
//! backend. `tests/jit_a64_encoding.rs` decodes every form emitted here with yaxpeax-arm.
//!
//! Immediates are range-checked by dynasm at run time (it panics on an unencodable value), so
//! the wide-immediate helpers ([`Asm::mov_w`], [`Asm::mov_x`]) split constants into
//! MOVZ/MOVN/MOVK pieces and callers pass only offsets the scaled forms accept.

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use super::regs::{Gpr, Vreg};
use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{AssemblyOffset, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

/// `dynasm!` with the architecture pinned to AArch64.
macro_rules! a64 {
    ($ops:expr; $($t:tt)*) => {
        dynasm::dynasm!($ops ; .arch aarch64 ; $($t)*)
    };
}
/// For emitters that write dynasm directly.
pub(crate) use a64;

/// Condition codes used by the backend (`b.cond`, `csel`, `cneg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Unsigned higher or same (carry set).
    Hs,
    /// Unsigned lower (carry clear).
    Lo,
    /// Unsigned higher.
    Hi,
    /// Unsigned lower or same.
    Ls,
    /// Signed greater or equal.
    Ge,
    /// Signed less than.
    Lt,
    /// Signed greater than.
    Gt,
    /// Signed less than or equal.
    Le,
    /// Negative (FCMP: less than).
    Mi,
    /// Signed overflow.
    Vs,
}

/// The assembler: a `VecAssembler` at base address 0 (the code is position independent:
/// branches, ADR and literal loads are PC-relative) plus a deduplicated literal pool.
pub struct Asm {
    /// The underlying dynasm assembler.
    pub ops: VecAssembler<Aarch64Relocation>,
    pool: Vec<([u32; 4], DynamicLabel)>,
    tables: Vec<(Vec<u8>, DynamicLabel)>,
}

impl Default for Asm {
    fn default() -> Self {
        Self::new()
    }
}

/// `op Vd.4S, Vn.4S, Vm.4S`
macro_rules! v3 {
    ($($name:ident => $mn:ident . $arr:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " d.", stringify!($arr), ", a, b`")]
                pub fn $name(&mut self, d: Vreg, a: Vreg, b: Vreg) {
                    a64!(self.ops; $mn V(d.0).$arr, V(a.0).$arr, V(b.0).$arr);
                }
            )*
        }
    };
}

/// `op Vd.T, Vn.T`
macro_rules! v2 {
    ($($name:ident => $mn:ident . $da:ident . $sa:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " d.", stringify!($da), ", s.", stringify!($sa), "`")]
                pub fn $name(&mut self, d: Vreg, s: Vreg) {
                    a64!(self.ops; $mn V(d.0).$da, V(s.0).$sa);
                }
            )*
        }
    };
}

/// `op Vd.T, Vn.T, #imm` (vector shifts)
macro_rules! vshift {
    ($($name:ident => $mn:ident . $arr:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " d.", stringify!($arr), ", s, #imm`")]
                pub fn $name(&mut self, d: Vreg, s: Vreg, imm: u32) {
                    a64!(self.ops; $mn V(d.0).$arr, V(s.0).$arr, imm);
                }
            )*
        }
    };
}

/// Scalar `op Dd, Dn, Dm` / `op Sd, Sn, Sm`
macro_rules! s3 {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "d, ", stringify!($r), "n, ", stringify!($r), "m`")]
                pub fn $name(&mut self, d: Vreg, a: Vreg, b: Vreg) {
                    a64!(self.ops; $mn $r(d.0), $r(a.0), $r(b.0));
                }
            )*
        }
    };
}

/// `op Xd, Xn, Xm` / `op Wd, Wn, Wm`
macro_rules! g3 {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "d, ", stringify!($r), "n, ", stringify!($r), "m`")]
                pub fn $name(&mut self, d: Gpr, a: Gpr, b: Gpr) {
                    a64!(self.ops; $mn $r(d.0), $r(a.0), $r(b.0));
                }
            )*
        }
    };
}

/// `op Rd, Rn, #imm` (shifts and arithmetic immediates)
macro_rules! gimm {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "d, ", stringify!($r), "n, #imm`")]
                pub fn $name(&mut self, d: Gpr, a: Gpr, imm: u32) {
                    a64!(self.ops; $mn $r(d.0), $r(a.0), imm);
                }
            )*
        }
    };
}

/// Loads and stores `op Rt, [Xn, #off]` (unsigned scaled offset).
macro_rules! mem {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "t, [Xn, #off]`")]
                pub fn $name(&mut self, t: impl Into<u8>, base: Gpr, off: i32) {
                    let t: u8 = t.into();
                    let off = off as u32;
                    a64!(self.ops; $mn $r(t), [X(base.0), off]);
                }
            )*
        }
    };
}

v3!(
    fadd_4s => fadd.S4, fmul_4s => fmul.S4, fcmeq_4s => fcmeq.S4, fcmge_4s => fcmge.S4,
    fcmgt_4s => fcmgt.S4, add_4s => add.S4, cmhi_4s => cmhi.S4, cmhs_4s => cmhs.S4,
    fadd_2d => fadd.D2, fmul_2d => fmul.D2, faddp_2d => faddp.D2, fcmeq_2d => fcmeq.D2,
    add_2d => add.D2, cmhs_2d => cmhs.D2, and_16b => and.B16, orr_16b => orr.B16, eor_16b => eor.B16,
    bic_16b => bic.B16, bsl_16b => bsl.B16, bit_16b => bit.B16, bif_16b => bif.B16,
    trn1_4s => trn1.S4, trn2_4s => trn2.S4, trn1_2d => trn1.D2, trn2_2d => trn2.D2,
    sub_4s => sub.S4, sub_2d => sub.D2, cmgt_4s => cmgt.S4, cmeq_4s => cmeq.S4,
    cmgt_2d => cmgt.D2, cmeq_2d => cmeq.D2, umax_4s => umax.S4, fmin_4s => fmin.S4,
    fmax_4s => fmax.S4, fsub_2d => fsub.D2, ushl_4s => ushl.S4, ushl_2d => ushl.D2,
    uzp2_4s => uzp2.S4, uzp1_4s => uzp1.S4, sshl_4s => sshl.S4, fmla_4s => fmla.S4,
    fdiv_4s => fdiv.S4, fdiv_2d => fdiv.D2, fcmge_2d => fcmge.D2, fcmgt_2d => fcmgt.D2,
);
v2!(
    fcvtl_2d => fcvtl.D2.S2, fcvtl2_2d => fcvtl2.D2.S4, fcvtn_2s => fcvtn.S2.D2,
    fcvtn2_4s => fcvtn2.S4.D2, frintm_4s => frintm.S4.S4, fcvtzs_4s => fcvtzs.S4.S4,
    rev64_4s => rev64.S4.S4, not_16b => not.B16.B16,
    frintm_2d => frintm.D2.D2, fcvtzs_2d => fcvtzs.D2.D2, xtn_2s => xtn.S2.D2,
    xtn2_4s => xtn2.S4.D2, sxtl_2d => sxtl.D2.S2, sxtl2_2d => sxtl2.D2.S4,
    uxtl_2d => uxtl.D2.S2, uxtl2_2d => uxtl2.D2.S4, neg_4s => neg.S4.S4, neg_2d => neg.D2.D2,
    fsqrt_2d => fsqrt.D2.D2, fsqrt_4s => fsqrt.S4.S4, frintn_4s => frintn.S4.S4,
    frintn_2d => frintn.D2.D2,
);
vshift!(
    shl_4s => shl.S4, ushr_4s => ushr.S4, sshr_4s => sshr.S4, shl_2d => shl.D2, ushr_2d => ushr.D2,
);
s3!(fdiv_s => fdiv S, fdiv_d => fdiv D, fmul_d => fmul D);
g3!(
    add_x => add X, sub_x => sub X, add_w => add W, sub_w => sub W, mul_x => mul X,
    orr_w => orr W, lsl_x => lsl X, asr_x => asr X, subs_x => subs X,
    orr_x => orr X, and_x => and X, bic_w => bic W,
    and_w => and W, eor_w => eor W, eor_x => eor X, mul_w => mul W, lsr_x => lsr X,
    lsl_w => lsl W, lsr_w => lsr W, asr_w => asr W, udiv_x => udiv X, udiv_w => udiv W,
    adds_w => adds W, subs_w => subs W,
);
gimm!(
    lsl_xi => lsl X, lsr_xi => lsr X, asr_xi => asr X, lsl_wi => lsl W, lsr_wi => lsr W,
    asr_wi => asr W,
);
mem!(
    ldr_q => ldr Q, str_q => str Q, str_s => str S, ldr_s => ldr S, ldr_w => ldr W, str_w => str W,
    ldr_x => ldr X, str_x => str X, ldrb_w => ldrb W, strb_w => strb W, ldrh_w => ldrh W,
);

/// Loads and stores `op Rt, [Xn, Xm]` (unscaled register offset).
macro_rules! mem_reg {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "t, [Xn, Xm]` (unscaled register offset)")]
                pub fn $name(&mut self, t: impl Into<u8>, base: Gpr, idx: Gpr) {
                    let t: u8 = t.into();
                    a64!(self.ops; $mn $r(t), [X(base.0), X(idx.0)]);
                }
            )*
        }
    };
}

/// Stack forms of the frames (`crate::host::a64::abi`): `op Rt, [sp, #off]`.
macro_rules! sp_mem {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "t, [sp, #off]`")]
                pub fn $name(&mut self, t: impl Into<u8>, off: i32) {
                    let (t, off): (u8, u32) = (t.into(), off as u32);
                    a64!(self.ops; $mn $r(t), [sp, off]);
                }
            )*
        }
    };
}

/// Stack pair forms: `op Ra, Rb, [sp, #off]`.
macro_rules! sp_pair {
    ($($name:ident => $mn:ident $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "a, ", stringify!($r), "b, [sp, #off]`")]
                pub fn $name(&mut self, a: impl Into<u8>, b: impl Into<u8>, off: i32) {
                    let (a, b): (u8, u8) = (a.into(), b.into());
                    a64!(self.ops; $mn $r(a), $r(b), [sp, off]);
                }
            )*
        }
    };
}

/// The first store of a frame, allocating it: `str Rt, [sp, #-size]!` or `stp Ra, Rb, ...`.
macro_rules! sp_alloc {
    ($($one:ident, $two:ident => $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`str ", stringify!($r), "t, [sp, #-size]!`")]
                pub fn $one(&mut self, t: impl Into<u8>, size: i32) {
                    let (t, off): (u8, i32) = (t.into(), -size);
                    a64!(self.ops; str $r(t), [sp, off]!);
                }

                #[doc = concat!("`stp ", stringify!($r), "a, ", stringify!($r), "b, [sp, #-size]!`")]
                pub fn $two(&mut self, a: impl Into<u8>, b: impl Into<u8>, size: i32) {
                    let (a, b, off): (u8, u8, i32) = (a.into(), b.into(), -size);
                    a64!(self.ops; stp $r(a), $r(b), [sp, off]!);
                }
            )*
        }
    };
}

/// The last load of a frame, freeing it: `ldr Rt, [sp], #size` or `ldp Ra, Rb, ...`.
macro_rules! sp_free {
    ($($one:ident, $two:ident => $r:ident),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`ldr ", stringify!($r), "t, [sp], #size`")]
                pub fn $one(&mut self, t: impl Into<u8>, size: i32) {
                    let t: u8 = t.into();
                    a64!(self.ops; ldr $r(t), [sp], size);
                }

                #[doc = concat!("`ldp ", stringify!($r), "a, ", stringify!($r), "b, [sp], #size`")]
                pub fn $two(&mut self, a: impl Into<u8>, b: impl Into<u8>, size: i32) {
                    let (a, b): (u8, u8) = (a.into(), b.into());
                    a64!(self.ops; ldp $r(a), $r(b), [sp], size);
                }
            )*
        }
    };
}

/// Logical immediates `op Rd, Rn, #imm` (`imm` must be a valid bitmask immediate; the
/// destination may be sp).
macro_rules! logical_imm {
    ($($name:ident => $mn:ident $d:ident $r:ident $t:ty),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "d, ", stringify!($r), "n, #imm` (a valid logical immediate)")]
                pub fn $name(&mut self, d: Gpr, a: Gpr, imm: $t) {
                    a64!(self.ops; $mn $d(d.0), $r(a.0), imm);
                }
            )*
        }
    };
}

/// Flag-setting forms without a destination: `op Rn, #imm`.
macro_rules! compare_imm {
    ($($name:ident => $mn:ident $r:ident $t:ty),* $(,)?) => {
        impl Asm {
            $(
                #[doc = concat!("`", stringify!($mn), " ", stringify!($r), "n, #imm`")]
                pub fn $name(&mut self, a: Gpr, imm: $t) {
                    a64!(self.ops; $mn $r(a.0), imm);
                }
            )*
        }
    };
}

mem_reg!(
    ldr_q_reg => ldr Q, str_q_reg => str Q, ldr_w_reg => ldr W, str_w_reg => str W,
    ldr_x_reg => ldr X, str_x_reg => str X,
);
sp_mem!(str_x_sp => str X, ldr_x_sp => ldr X, str_d_sp => str D, ldr_d_sp => ldr D);
sp_pair!(stp_x_sp => stp X, ldp_x_sp => ldp X, stp_d_sp => stp D, ldp_d_sp => ldp D);
sp_alloc!(str_x_pre_sp, stp_x_pre_sp => X, str_d_pre_sp, stp_d_pre_sp => D);
sp_free!(ldr_x_post_sp, ldp_x_post_sp => X, ldr_d_post_sp, ldp_d_post_sp => D);
logical_imm!(
    and_wi => and WSP W u32, orr_wi => orr WSP W u32, eor_wi => eor WSP W u32,
    and_xi => and XSP X u64, orr_xi => orr XSP X u64, eor_xi => eor XSP X u64,
);
compare_imm!(
    tst_wi => tst W u32, tst_xi => tst X u64, cmp_wi => cmp WSP u32, cmp_xi => cmp XSP u32,
    cmn_wi => cmn WSP u32, cmn_xi => cmn XSP u32,
);

impl From<Vreg> for u8 {
    fn from(v: Vreg) -> u8 {
        v.0
    }
}

impl From<Gpr> for u8 {
    fn from(g: Gpr) -> u8 {
        g.0
    }
}

impl Asm {
    /// An empty assembler.
    pub fn new() -> Asm {
        Asm {
            ops: VecAssembler::new(0),
            pool: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// Current code offset.
    pub fn offset(&self) -> AssemblyOffset {
        self.ops.offset()
    }

    /// A fresh label.
    pub fn new_label(&mut self) -> DynamicLabel {
        self.ops.new_dynamic_label()
    }

    /// Bind `l` here.
    pub fn bind(&mut self, l: DynamicLabel) {
        a64!(self.ops; =>l);
    }

    /// A 16-byte literal-pool entry holding `v` (lane 0 first).
    pub fn constant(&mut self, v: [u32; 4]) -> DynamicLabel {
        // A program uses a few dozen distinct constants at most: a linear search beats hashing.
        if let Some((_, l)) = self.pool.iter().find(|(c, _)| *c == v) {
            return *l;
        }
        let l = self.ops.new_dynamic_label();
        self.pool.push((v, l));
        l
    }

    /// A read-only table after the code (16-aligned), e.g. the EX2/LG2 tables.
    pub fn table(&mut self, bytes: Vec<u8>) -> DynamicLabel {
        if let Some((_, l)) = self.tables.iter().find(|(b, _)| *b == bytes) {
            return *l;
        }
        let l = self.ops.new_dynamic_label();
        self.tables.push((bytes, l));
        l
    }

    /// Emit the literal pool and tables; returns the code and the length of the instruction
    /// stream before them.
    pub fn finish(mut self) -> Result<(Vec<u8>, usize), String> {
        let code_len = self.offset().0;
        a64!(self.ops; .align 16);
        for (v, l) in std::mem::take(&mut self.pool) {
            a64!(self.ops; =>l ; .u32 v[0], v[1], v[2], v[3]);
        }
        for (bytes, l) in std::mem::take(&mut self.tables) {
            a64!(self.ops; .align 16 ; =>l);
            self.ops.extend(bytes);
        }
        let code = self.ops.finalize().map_err(|e| e.to_string())?;
        Ok((code, code_len))
    }

    /// `ldr Qd, =>label` (PC-relative literal load, ±1 MiB).
    pub fn ldr_q_lit(&mut self, d: Vreg, l: DynamicLabel) {
        a64!(self.ops; ldr Q(d.0), =>l);
    }

    /// Load a 16-byte constant into `d` through the literal pool.
    pub fn load_const(&mut self, d: Vreg, v: [u32; 4]) {
        let l = self.constant(v);
        self.ldr_q_lit(d, l);
    }

    /// `ldr Qt, [Xn, Xm, lsl #4]`
    pub fn ldr_q_idx(&mut self, t: Vreg, base: Gpr, idx: Gpr) {
        a64!(self.ops; ldr Q(t.0), [X(base.0), X(idx.0), LSL #4]);
    }

    /// `addv Sd, Vs.4S` (the sum of the lanes)
    pub fn addv_4s(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; addv S(d.0), V(s.0).S4);
    }

    /// `dup Vd.4S, Wn`
    pub fn dup_4s_w(&mut self, d: Vreg, s: Gpr) {
        a64!(self.ops; dup V(d.0).S4, W(s.0));
    }

    /// `cmeq Vd.4S, Vn.4S, #0`
    pub fn cmeq_4s_zero(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; cmeq V(d.0).S4, V(s.0).S4, 0);
    }

    /// `uminv Sd, Vs.4S` (the smallest lane, unsigned)
    pub fn uminv_4s(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; uminv S(d.0), V(s.0).S4);
    }

    /// `uaddw Vd.2D, Vn.2D, Vm.2S` (the low two lanes of `b` widened and added)
    pub fn uaddw_2d(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        a64!(self.ops; uaddw V(d.0).D2, V(a.0).D2, V(b.0).S2);
    }

    /// `uaddw2 Vd.2D, Vn.2D, Vm.4S` (the high two lanes of `b` widened and added)
    pub fn uaddw2_2d(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        a64!(self.ops; uaddw2 V(d.0).D2, V(a.0).D2, V(b.0).S4);
    }

    /// `umaxv Sd, Vs.4S` (the largest lane, unsigned)
    pub fn umaxv_4s(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; umaxv S(d.0), V(s.0).S4);
    }

    /// `ldr Wt, [Xn, Xm, lsl #2]`
    pub fn ldr_w_idx(&mut self, t: Gpr, base: Gpr, idx: Gpr) {
        a64!(self.ops; ldr W(t.0), [X(base.0), X(idx.0), LSL #2]);
    }

    /// `ldr Xt, [Xn, Xm, lsl #3]`
    pub fn ldr_x_idx(&mut self, t: Gpr, base: Gpr, idx: Gpr) {
        a64!(self.ops; ldr X(t.0), [X(base.0), X(idx.0), LSL #3]);
    }

    /// `stp Qa, Qb, [Xn, #off]`
    pub fn stp_q(&mut self, a: Vreg, b: Vreg, base: Gpr, off: i32) {
        a64!(self.ops; stp Q(a.0), Q(b.0), [X(base.0), off]);
    }

    /// `ldp Qa, Qb, [Xn, #off]`
    pub fn ldp_q(&mut self, a: Vreg, b: Vreg, base: Gpr, off: i32) {
        a64!(self.ops; ldp Q(a.0), Q(b.0), [X(base.0), off]);
    }

    /// `mov Xd, Xn`
    pub fn mov_x(&mut self, d: Gpr, s: Gpr) {
        a64!(self.ops; mov X(d.0), X(s.0));
    }

    /// `mov Wd, Wn`
    pub fn mov_w(&mut self, d: Gpr, s: Gpr) {
        a64!(self.ops; mov W(d.0), W(s.0));
    }

    /// `movz Wd, #imm16, lsl #shift`
    pub fn movz_w(&mut self, d: Gpr, imm: u32, shift: u32) {
        a64!(self.ops; movz W(d.0), imm, LSL shift);
    }

    /// `movk Wd, #imm16, lsl #shift`
    pub fn movk_w(&mut self, d: Gpr, imm: u32, shift: u32) {
        a64!(self.ops; movk W(d.0), imm, LSL shift);
    }

    /// `movn Wd, #imm16, lsl #shift`
    pub fn movn_w(&mut self, d: Gpr, imm: u32, shift: u32) {
        a64!(self.ops; movn W(d.0), imm, LSL shift);
    }

    /// `movz Xd, #imm16, lsl #shift`
    pub fn movz_x(&mut self, d: Gpr, imm: u32, shift: u32) {
        a64!(self.ops; movz X(d.0), imm, LSL shift);
    }

    /// `movk Xd, #imm16, lsl #shift`
    pub fn movk_x(&mut self, d: Gpr, imm: u32, shift: u32) {
        a64!(self.ops; movk X(d.0), imm, LSL shift);
    }

    /// `movn Xd, #imm16, lsl #shift`
    pub fn movn_x(&mut self, d: Gpr, imm: u32, shift: u32) {
        a64!(self.ops; movn X(d.0), imm, LSL shift);
    }

    /// Materialise a 32-bit constant in `Wd` (one or two instructions).
    pub fn mov_imm_w(&mut self, d: Gpr, v: u32) {
        let (lo, hi) = (v & 0xFFFF, v >> 16);
        if hi == 0 {
            self.movz_w(d, lo, 0);
        } else if lo == 0 {
            self.movz_w(d, hi, 16);
        } else if hi == 0xFFFF {
            self.movn_w(d, !v & 0xFFFF, 0);
        } else {
            self.movz_w(d, lo, 0);
            self.movk_w(d, hi, 16);
        }
    }

    /// Materialise a 64-bit constant in `Xd` (MOVZ or MOVN, then MOVK for the other pieces).
    pub fn mov_imm_x(&mut self, d: Gpr, v: u64) {
        let pieces: Vec<u32> = (0..4).map(|k| ((v >> (16 * k)) & 0xFFFF) as u32).collect();
        let ones = pieces.iter().filter(|&&p| p == 0xFFFF).count();
        let zeros = pieces.iter().filter(|&&p| p == 0).count();
        let inverted = ones > zeros;
        let fill = if inverted { 0xFFFF } else { 0 };
        let mut first = true;
        for (k, &p) in pieces.iter().enumerate() {
            if p == fill {
                continue;
            }
            let shift = 16 * k as u32;
            if first {
                if inverted {
                    self.movn_x(d, !p & 0xFFFF, shift);
                } else {
                    self.movz_x(d, p, shift);
                }
                first = false;
            } else {
                self.movk_x(d, p, shift);
            }
        }
        if first {
            // All pieces equal the fill: 0 or !0.
            if inverted {
                self.movn_x(d, 0, 0);
            } else {
                self.movz_x(d, 0, 0);
            }
        }
    }

    /// `add Xd, Xn, #imm12`
    pub fn add_xi(&mut self, d: Gpr, a: Gpr, imm: u32) {
        a64!(self.ops; add XSP(d.0), XSP(a.0), imm);
    }

    /// `sub Xd, Xn, #imm12`
    pub fn sub_xi(&mut self, d: Gpr, a: Gpr, imm: u32) {
        a64!(self.ops; sub XSP(d.0), XSP(a.0), imm);
    }

    /// `add Wd, Wn, #imm12`
    pub fn add_wi(&mut self, d: Gpr, a: Gpr, imm: u32) {
        a64!(self.ops; add WSP(d.0), WSP(a.0), imm);
    }

    /// `sub Wd, Wn, #imm12`
    pub fn sub_wi(&mut self, d: Gpr, a: Gpr, imm: u32) {
        a64!(self.ops; sub WSP(d.0), WSP(a.0), imm);
    }

    /// `subs Wd, Wn, #imm12`
    pub fn subs_wi(&mut self, d: Gpr, a: Gpr, imm: u32) {
        a64!(self.ops; subs W(d.0), WSP(a.0), imm);
    }

    /// `subs Xd, Xn, #imm12`
    pub fn subs_xi(&mut self, d: Gpr, a: Gpr, imm: u32) {
        a64!(self.ops; subs X(d.0), XSP(a.0), imm);
    }

    /// `cset Wd, cond`
    pub fn cset_w(&mut self, d: Gpr, c: Cond) {
        match c {
            Cond::Eq => a64!(self.ops; cset W(d.0), eq),
            Cond::Ne => a64!(self.ops; cset W(d.0), ne),
            Cond::Hs => a64!(self.ops; cset W(d.0), hs),
            Cond::Lo => a64!(self.ops; cset W(d.0), lo),
            Cond::Hi => a64!(self.ops; cset W(d.0), hi),
            Cond::Ls => a64!(self.ops; cset W(d.0), ls),
            Cond::Ge => a64!(self.ops; cset W(d.0), ge),
            Cond::Lt => a64!(self.ops; cset W(d.0), lt),
            Cond::Gt => a64!(self.ops; cset W(d.0), gt),
            Cond::Le => a64!(self.ops; cset W(d.0), le),
            Cond::Mi => a64!(self.ops; cset W(d.0), mi),
            Cond::Vs => a64!(self.ops; cset W(d.0), vs),
        }
    }

    /// `eor Wd, Wn, Wm, lsl #shift`
    pub fn eor_w_lsl(&mut self, d: Gpr, a: Gpr, b: Gpr, shift: u32) {
        a64!(self.ops; eor W(d.0), W(a.0), W(b.0), LSL shift);
    }

    /// `ubfx Xd, Xn, #lsb, #width`
    pub fn ubfx_x(&mut self, d: Gpr, a: Gpr, lsb: u32, width: u32) {
        a64!(self.ops; ubfx X(d.0), X(a.0), lsb, width);
    }

    /// `sxtw Xd, Wn`
    pub fn sxtw(&mut self, d: Gpr, a: Gpr) {
        a64!(self.ops; sxtw X(d.0), W(a.0));
    }

    /// `cmp Wn, Wm`
    pub fn cmp_w(&mut self, a: Gpr, b: Gpr) {
        a64!(self.ops; cmp W(a.0), W(b.0));
    }

    /// `cmp Xn, Xm`
    pub fn cmp_x(&mut self, a: Gpr, b: Gpr) {
        a64!(self.ops; cmp X(a.0), X(b.0));
    }

    /// `csel Wd, Wn, Wm, cond` (Wn = 31 is wzr)
    pub fn csel_w(&mut self, d: Gpr, a: Gpr, b: Gpr, c: Cond) {
        match c {
            Cond::Eq => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), eq),
            Cond::Ne => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), ne),
            Cond::Hs => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), hs),
            Cond::Lo => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), lo),
            Cond::Hi => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), hi),
            Cond::Ls => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), ls),
            Cond::Ge => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), ge),
            Cond::Lt => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), lt),
            Cond::Gt => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), gt),
            Cond::Le => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), le),
            Cond::Mi => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), mi),
            Cond::Vs => a64!(self.ops; csel W(d.0), W(a.0), W(b.0), vs),
        }
    }

    /// `csel Xd, Xn, Xm, cond`
    pub fn csel_x(&mut self, d: Gpr, a: Gpr, b: Gpr, c: Cond) {
        match c {
            Cond::Eq => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), eq),
            Cond::Ne => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), ne),
            Cond::Hs => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), hs),
            Cond::Lo => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), lo),
            Cond::Hi => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), hi),
            Cond::Ls => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), ls),
            Cond::Ge => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), ge),
            Cond::Lt => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), lt),
            Cond::Gt => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), gt),
            Cond::Le => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), le),
            Cond::Mi => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), mi),
            Cond::Vs => a64!(self.ops; csel X(d.0), X(a.0), X(b.0), vs),
        }
    }

    /// `cneg Xd, Xn, lt` (negate when the last compare was signed less-than)
    pub fn cneg_x_lt(&mut self, d: Gpr, a: Gpr) {
        a64!(self.ops; cneg X(d.0), X(a.0), lt);
    }

    /// `rbit Xd, Xn`
    pub fn rbit_x(&mut self, d: Gpr, a: Gpr) {
        a64!(self.ops; rbit X(d.0), X(a.0));
    }

    /// `clz Xd, Xn`
    pub fn clz_x(&mut self, d: Gpr, a: Gpr) {
        a64!(self.ops; clz X(d.0), X(a.0));
    }

    /// `ubfx Wd, Wn, #lsb, #width`
    pub fn ubfx_w(&mut self, d: Gpr, a: Gpr, lsb: u32, width: u32) {
        a64!(self.ops; ubfx W(d.0), W(a.0), lsb, width);
    }

    /// `neg Wd, Wn`
    pub fn neg_w(&mut self, d: Gpr, a: Gpr) {
        a64!(self.ops; neg W(d.0), W(a.0));
    }

    /// `madd Xd, Xn, Xm, Xa`
    pub fn madd_x(&mut self, d: Gpr, n: Gpr, m: Gpr, acc: Gpr) {
        a64!(self.ops; madd X(d.0), X(n.0), X(m.0), X(acc.0));
    }

    /// `b.cond =>l`
    pub fn b_cond(&mut self, c: Cond, l: DynamicLabel) {
        match c {
            Cond::Eq => a64!(self.ops; b.eq =>l),
            Cond::Ne => a64!(self.ops; b.ne =>l),
            Cond::Hs => a64!(self.ops; b.hs =>l),
            Cond::Lo => a64!(self.ops; b.lo =>l),
            Cond::Hi => a64!(self.ops; b.hi =>l),
            Cond::Ls => a64!(self.ops; b.ls =>l),
            Cond::Ge => a64!(self.ops; b.ge =>l),
            Cond::Lt => a64!(self.ops; b.lt =>l),
            Cond::Gt => a64!(self.ops; b.gt =>l),
            Cond::Le => a64!(self.ops; b.le =>l),
            Cond::Mi => a64!(self.ops; b.mi =>l),
            Cond::Vs => a64!(self.ops; b.vs =>l),
        }
    }

    /// `b =>l`
    pub fn b(&mut self, l: DynamicLabel) {
        a64!(self.ops; b =>l);
    }

    /// `bl =>l`
    pub fn bl(&mut self, l: DynamicLabel) {
        a64!(self.ops; bl =>l);
    }

    /// `cbz Wn, =>l`
    pub fn cbz_w(&mut self, a: Gpr, l: DynamicLabel) {
        a64!(self.ops; cbz W(a.0), =>l);
    }

    /// `cbnz Wn, =>l`
    pub fn cbnz_w(&mut self, a: Gpr, l: DynamicLabel) {
        a64!(self.ops; cbnz W(a.0), =>l);
    }

    /// `cbz Xn, =>l`
    pub fn cbz_x(&mut self, a: Gpr, l: DynamicLabel) {
        a64!(self.ops; cbz X(a.0), =>l);
    }

    /// `cbnz Xn, =>l`
    pub fn cbnz_x(&mut self, a: Gpr, l: DynamicLabel) {
        a64!(self.ops; cbnz X(a.0), =>l);
    }

    /// `tbz Wn, #bit, =>l` (±32 KiB: only for short forward skips)
    pub fn tbz_w(&mut self, a: Gpr, bit: u32, l: DynamicLabel) {
        a64!(self.ops; tbz W(a.0), bit, =>l);
    }

    /// `tbnz Wn, #bit, =>l` (±32 KiB: only for branches inside one subroutine)
    pub fn tbnz_w(&mut self, a: Gpr, bit: u32, l: DynamicLabel) {
        a64!(self.ops; tbnz W(a.0), bit, =>l);
    }

    /// `br Xn`
    pub fn br(&mut self, a: Gpr) {
        a64!(self.ops; br X(a.0));
    }

    /// `ret Xn`
    pub fn ret(&mut self, a: Gpr) {
        a64!(self.ops; ret X(a.0));
    }

    /// `adr Xd, =>l`
    pub fn adr(&mut self, d: Gpr, l: DynamicLabel) {
        a64!(self.ops; adr X(d.0), =>l);
    }

    /// `mrs Xd, fpcr`
    pub fn mrs_fpcr(&mut self, d: Gpr) {
        a64!(self.ops; mrs X(d.0), 0x5A20);
    }

    /// `msr fpcr, Xn`
    pub fn msr_fpcr(&mut self, s: Gpr) {
        a64!(self.ops; msr 0x5A20, X(s.0));
    }

    /// `ext Vd.16B, Vn.16B, Vm.16B, #imm`
    pub fn ext_16b(&mut self, d: Vreg, a: Vreg, b: Vreg, imm: u32) {
        a64!(self.ops; ext V(d.0).B16, V(a.0).B16, V(b.0).B16, imm);
    }

    /// `umull Vd.2D, Vn.2S, Vm.2S`
    pub fn umull_2d(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        a64!(self.ops; umull V(d.0).D2, V(a.0).S2, V(b.0).S2);
    }

    /// `umull2 Vd.2D, Vn.4S, Vm.4S`
    pub fn umull2_2d(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        a64!(self.ops; umull2 V(d.0).D2, V(a.0).S4, V(b.0).S4);
    }

    /// `smull Vd.2D, Vn.2S, Vm.2S`
    pub fn smull_2d(&mut self, d: Vreg, a: Vreg, b: Vreg) {
        a64!(self.ops; smull V(d.0).D2, V(a.0).S2, V(b.0).S2);
    }

    /// `tbl Vd.16B, {Vn.16B}, Vm.16B`
    pub fn tbl_16b(&mut self, d: Vreg, table: Vreg, idx: Vreg) {
        a64!(self.ops; tbl V(d.0).B16, {V(table.0).B16 * 1}, V(idx.0).B16);
    }

    /// `dup Vd.4S, Vn.S[lane]`
    pub fn dup_4s(&mut self, d: Vreg, s: Vreg, lane: u32) {
        a64!(self.ops; dup V(d.0).S4, V(s.0).S[lane]);
    }

    /// `mov Vd.S[dl], Vn.S[sl]` (INS element)
    pub fn ins_s(&mut self, d: Vreg, dl: u32, s: Vreg, sl: u32) {
        a64!(self.ops; mov V(d.0).S[dl], V(s.0).S[sl]);
    }

    /// `mov Vd.S[lane], Wn` (INS general; Wn = 31 is wzr)
    pub fn ins_s_w(&mut self, d: Vreg, lane: u32, s: Gpr) {
        a64!(self.ops; mov V(d.0).S[lane], W(s.0));
    }

    /// `umov Wd, Vn.S[lane]`
    pub fn umov_w(&mut self, d: Gpr, s: Vreg, lane: u32) {
        a64!(self.ops; umov W(d.0), V(s.0).S[lane]);
    }

    /// `mov Vd.16B, Vn.16B`
    pub fn mov_16b(&mut self, d: Vreg, s: Vreg) {
        if d != s {
            a64!(self.ops; mov V(d.0).B16, V(s.0).B16);
        }
    }

    /// `movi Vd.2D, #0`
    pub fn movi_zero(&mut self, d: Vreg) {
        a64!(self.ops; movi V(d.0).D2, 0);
    }

    /// `movi Vd.4S, #imm8, lsl #shift`
    pub fn movi_4s(&mut self, d: Vreg, imm: u32, shift: u32) {
        a64!(self.ops; movi V(d.0).S4, imm, LSL shift);
    }

    /// `fmov Vd.4S, #1.0`
    pub fn fmov_4s_one(&mut self, d: Vreg) {
        a64!(self.ops; fmov V(d.0).S4, 1.0);
    }

    /// `fmov Vd.2D, #1.0`
    pub fn fmov_2d_one(&mut self, d: Vreg) {
        a64!(self.ops; fmov V(d.0).D2, 1.0);
    }

    /// `fmov Dd, #1.0`
    pub fn fmov_d_one(&mut self, d: Vreg) {
        a64!(self.ops; fmov D(d.0), 1.0);
    }

    /// `fcmgt Vd.4S, Vn.4S, #0.0`
    pub fn fcmgt_4s_zero(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; fcmgt V(d.0).S4, V(s.0).S4, 0.0);
    }

    /// `fcmge Vd.4S, Vn.4S, #0.0`
    pub fn fcmge_4s_zero(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; fcmge V(d.0).S4, V(s.0).S4, 0.0);
    }

    /// `fsqrt Dd, Dn`
    pub fn fsqrt_d(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; fsqrt D(d.0), D(s.0));
    }

    /// `fcvt Dd, Sn`
    pub fn fcvt_ds(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; fcvt D(d.0), S(s.0));
    }

    /// `fcvt Sd, Dn`
    pub fn fcvt_sd(&mut self, d: Vreg, s: Vreg) {
        a64!(self.ops; fcvt S(d.0), D(s.0));
    }

    /// `fcmp Dn, Dm`
    pub fn fcmp_d(&mut self, a: Vreg, b: Vreg) {
        a64!(self.ops; fcmp D(a.0), D(b.0));
    }

    /// `fmov Wd, Sn`
    pub fn fmov_ws(&mut self, d: Gpr, s: Vreg) {
        a64!(self.ops; fmov W(d.0), S(s.0));
    }

    /// `fmov Sd, Wn` (clears the other lanes)
    pub fn fmov_sw(&mut self, d: Vreg, s: Gpr) {
        a64!(self.ops; fmov S(d.0), W(s.0));
    }

    /// `fmov Xd, Dn`
    pub fn fmov_xd(&mut self, d: Gpr, s: Vreg) {
        a64!(self.ops; fmov X(d.0), D(s.0));
    }

    /// `fmov Dd, Xn` (clears the upper half)
    pub fn fmov_dx(&mut self, d: Vreg, s: Gpr) {
        a64!(self.ops; fmov D(d.0), X(s.0));
    }
}
