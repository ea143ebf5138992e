//! Encoding checks of the AArch64 emitter: every instruction form `a64::asm` can produce is
//! emitted into a `VecAssembler` with chosen registers (high and low numbers, the zero
//! register, sp) and decoded with yaxpeax-arm; mnemonic and operands must be the intended
//! ones. This guards against dynasm encoding surprises (operand order, element indices,
//! shifted immediates, the system-register number of FPCR). Also decodes whole generated
//! programs: every word up to the literal pool is a valid instruction.
//!
//! Code generation works on any host, so this test runs everywhere.

use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit_jit::testing::a64::asm::{Asm, Cond};
use picajit_jit::testing::a64::regs::*;
use picajit_jit::yaxpeax_arch::{Decoder, U8Reader};
use picajit_jit::yaxpeax_arm::armv8::a64::InstDecoder;
use picajit_jit::{compile, Backend, HostFeatures};
use picajit_testkit::testgen::{generate, Options};

/// Decode `code` word by word into text.
fn decode_words(code: &[u8]) -> Vec<String> {
    let dec = InstDecoder::default();
    code.chunks(4)
        .map(|w| {
            let mut r = U8Reader::new(w);
            match dec.decode(&mut r) {
                Ok(i) => i.to_string(),
                Err(e) => panic!("invalid encoding {w:02x?}: {e}"),
            }
        })
        .collect()
}

/// The instruction stream of `a` (without the pool), decoded.
fn decode(a: Asm) -> Vec<String> {
    let (code, len) = a.finish().expect("assembles");
    decode_words(&code[..len])
}

fn one(f: impl FnOnce(&mut Asm)) -> String {
    let mut a = Asm::new();
    f(&mut a);
    let v = decode(a);
    assert_eq!(v.len(), 1, "{v:?}");
    v[0].clone()
}

const V: Vreg = Vreg(0);
const VA: Vreg = Vreg(17);
const VB: Vreg = Vreg(31);
const X: Gpr = Gpr(9);
const XA: Gpr = Gpr(20);
const XB: Gpr = Gpr(30);

/// The conditions the branch and select forms are checked with.
const CONDS: [Cond; 12] = [
    Cond::Eq,
    Cond::Ne,
    Cond::Hs,
    Cond::Lo,
    Cond::Hi,
    Cond::Ls,
    Cond::Ge,
    Cond::Lt,
    Cond::Gt,
    Cond::Le,
    Cond::Mi,
    Cond::Vs,
];

/// A condition as yaxpeax prints it.
fn cond_name(c: Cond) -> String {
    format!("{c:?}").to_lowercase()
}

macro_rules! check {
    ($($f:expr => $want:expr),* $(,)?) => {
        $(
            assert_eq!(one($f), $want, "{}", stringify!($f));
        )*
    };
}

#[test]
fn vector_three_register_forms() {
    check!(
        |a: &mut Asm| a.fadd_4s(V, VA, VB) => "fadd v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fmul_4s(V, VA, VB) => "fmul v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fcmeq_4s(V, VA, VB) => "fcmeq v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fcmge_4s(V, VA, VB) => "fcmge v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fcmgt_4s(V, VA, VB) => "fcmgt v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.add_4s(V, VA, VB) => "add v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.cmhi_4s(V, VA, VB) => "cmhi v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.cmhs_4s(V, VA, VB) => "cmhs v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fadd_2d(V, VA, VB) => "fadd v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.fmul_2d(V, VA, VB) => "fmul v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.faddp_2d(V, VA, VB) => "faddp v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.fcmeq_2d(V, VA, VB) => "fcmeq v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.add_2d(V, VA, VB) => "add v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.cmhs_2d(V, VA, VB) => "cmhs v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.and_16b(V, VA, VB) => "and v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.orr_16b(V, VA, VB) => "orr v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.eor_16b(V, VA, VB) => "eor v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.bic_16b(V, VA, VB) => "bic v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.bsl_16b(V, VA, VB) => "bsl v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.bit_16b(V, VA, VB) => "bit v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.bif_16b(V, VA, VB) => "bif v0.16b, v17.16b, v31.16b",
        |a: &mut Asm| a.ext_16b(V, VA, VB, 8) => "ext v0.16b, v17.16b, v31.16b, #0x8",
        |a: &mut Asm| a.tbl_16b(V, VA, VB) => "tbl v0.16b, {v17.16b}, v31.16b",
        |a: &mut Asm| a.trn1_4s(V, VA, VB) => "trn1 v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.trn2_4s(V, VA, VB) => "trn2 v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.trn1_2d(V, VA, VB) => "trn1 v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.trn2_2d(V, VA, VB) => "trn2 v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.fdiv_4s(V, VA, VB) => "fdiv v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fdiv_2d(V, VA, VB) => "fdiv v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.fcmge_2d(V, VA, VB) => "fcmge v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.fcmgt_2d(V, VA, VB) => "fcmgt v0.2d, v17.2d, v31.2d",
    );
}

/// The integer and f64 forms of the EX2/LG2 lane primitives (`Lanes for QV` in
/// `jit/src/a64/masm.rs`). SXTL and UXTL print as the SSHLL/USHLL #0 they alias.
#[test]
fn lane_integer_forms() {
    check!(
        |a: &mut Asm| a.sub_4s(V, VA, VB) => "sub v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.sub_2d(V, VA, VB) => "sub v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.cmgt_4s(V, VA, VB) => "cmgt v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.cmeq_4s(V, VA, VB) => "cmeq v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.cmgt_2d(V, VA, VB) => "cmgt v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.cmeq_2d(V, VA, VB) => "cmeq v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.umax_4s(V, VA, VB) => "umax v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fmin_4s(V, VA, VB) => "fmin v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fmax_4s(V, VA, VB) => "fmax v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fsub_2d(V, VA, VB) => "fsub v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.ushl_4s(V, VA, VB) => "ushl v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.ushl_2d(V, VA, VB) => "ushl v0.2d, v17.2d, v31.2d",
        |a: &mut Asm| a.uzp2_4s(V, VA, VB) => "uzp2 v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.umull_2d(V, VA, VB) => "umull v0.2d, v17.2s, v31.2s",
        |a: &mut Asm| a.umull2_2d(V, VA, VB) => "umull2 v0.2d, v17.4s, v31.4s",
        |a: &mut Asm| a.smull_2d(V, VA, VB) => "smull v0.2d, v17.2s, v31.2s",
        |a: &mut Asm| a.frintm_2d(V, VA) => "frintm v0.2d, v17.2d",
        |a: &mut Asm| a.fcvtzs_2d(V, VA) => "fcvtzs v0.2d, v17.2d",
        |a: &mut Asm| a.xtn_2s(V, VA) => "xtn v0.2s, v17.2d",
        |a: &mut Asm| a.xtn2_4s(V, VA) => "xtn2 v0.4s, v17.2d",
        |a: &mut Asm| a.sxtl_2d(V, VA) => "sshll v0.2d, v17.2s, #0x0",
        |a: &mut Asm| a.sxtl2_2d(V, VA) => "sshll2 v0.2d, v17.4s, #0x0",
        |a: &mut Asm| a.uxtl_2d(V, VA) => "ushll v0.2d, v17.2s, #0x0",
        |a: &mut Asm| a.uxtl2_2d(V, VA) => "ushll2 v0.2d, v17.4s, #0x0",
        |a: &mut Asm| a.neg_4s(V, VA) => "neg v0.4s, v17.4s",
        |a: &mut Asm| a.neg_2d(V, VA) => "neg v0.2d, v17.2d",
        |a: &mut Asm| a.shl_2d(V, VA, 0) => "shl v0.2d, v17.2d, #0x0",
        |a: &mut Asm| a.shl_4s(V, VA, 0) => "shl v0.4s, v17.4s, #0x0",
        // The rest of the host lane operations (`jit/src/host/a64/lanes.rs`).
        |a: &mut Asm| a.uzp1_4s(V, VA, VB) => "uzp1 v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.sshl_4s(V, VA, VB) => "sshl v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.fmla_4s(V, VA, VB) => "fmla v0.4s, v17.4s, v31.4s",
        |a: &mut Asm| a.uaddw_2d(V, VA, VB) => "uaddw v0.2d, v17.2d, v31.2s",
        |a: &mut Asm| a.uaddw2_2d(V, VA, VB) => "uaddw2 v0.2d, v17.2d, v31.4s",
        |a: &mut Asm| a.fsqrt_4s(V, VA) => "fsqrt v0.4s, v17.4s",
        |a: &mut Asm| a.frintn_4s(V, VA) => "frintn v0.4s, v17.4s",
        |a: &mut Asm| a.frintn_2d(V, VA) => "frintn v0.2d, v17.2d",
        |a: &mut Asm| a.sshr_4s(V, VA, 24) => "sshr v0.4s, v17.4s, #0x18",
    );
}

#[test]
fn vector_two_register_and_shift_forms() {
    check!(
        |a: &mut Asm| a.fcvtl_2d(V, VA) => "fcvtl v0.2d, v17.2s",
        |a: &mut Asm| a.fcvtl2_2d(V, VA) => "fcvtl2 v0.2d, v17.4s",
        |a: &mut Asm| a.fcvtn_2s(V, VA) => "fcvtn v0.2s, v17.2d",
        |a: &mut Asm| a.fcvtn2_4s(V, VA) => "fcvtn2 v0.4s, v17.2d",
        |a: &mut Asm| a.frintm_4s(V, VA) => "frintm v0.4s, v17.4s",
        |a: &mut Asm| a.fcvtzs_4s(V, VA) => "fcvtzs v0.4s, v17.4s",
        |a: &mut Asm| a.rev64_4s(V, VA) => "rev64 v0.4s, v17.4s",
        |a: &mut Asm| a.not_16b(V, VA) => "mvn v0.16b, v17.16b",
        |a: &mut Asm| a.mov_16b(V, VA) => "mov v0.16b, v17.16b",
        |a: &mut Asm| a.shl_4s(V, VA, 1) => "shl v0.4s, v17.4s, #0x1",
        |a: &mut Asm| a.ushr_4s(V, VA, 7) => "ushr v0.4s, v17.4s, #0x7",
        |a: &mut Asm| a.shl_2d(V, VA, 1) => "shl v0.2d, v17.2d, #0x1",
        |a: &mut Asm| a.ushr_2d(V, VA, 36) => "ushr v0.2d, v17.2d, #0x24",
        |a: &mut Asm| a.ushr_2d(V, VA, 29) => "ushr v0.2d, v17.2d, #0x1d",
        |a: &mut Asm| a.fcmgt_4s_zero(V, VA) => "fcmgt v0.4s, v17.4s, #0.0",
        |a: &mut Asm| a.fcmge_4s_zero(V, VA) => "fcmge v0.4s, v17.4s, #0.0",
        // DUP (element), printed by yaxpeax as its MOV alias.
        |a: &mut Asm| a.dup_4s(V, VA, 3) => "mov v0.4s, v17.s[3]",
        |a: &mut Asm| a.ins_s(V, 3, VB, 0) => "mov v0.s[3], v31.s[0]",
        |a: &mut Asm| a.ins_s(VA, 0, V, 2) => "mov v17.s[0], v0.s[2]",
        |a: &mut Asm| a.ins_s_w(V, 2, ZR) => "mov v0.s[2], wzr",
        |a: &mut Asm| a.umov_w(X, VA, 3) => "mov w9, v17.s[3]",
        |a: &mut Asm| a.movi_zero(V) => "movi v0.2d, #0x0",
        |a: &mut Asm| a.movi_4s(V, 0x3F, 0) => "movi v0.4s, #0x3f",
        |a: &mut Asm| a.fmov_4s_one(V) => "fmov v0.4s, #1.0",
        |a: &mut Asm| a.fmov_2d_one(VA) => "fmov v17.2d, #1.0",
        |a: &mut Asm| a.fsqrt_2d(V, VA) => "fsqrt v0.2d, v17.2d",
        |a: &mut Asm| a.uminv_4s(V, VA) => "uminv s0, v17.4s",
        |a: &mut Asm| a.umaxv_4s(V, VA) => "umaxv s0, v17.4s",
        |a: &mut Asm| a.addv_4s(V, VA) => "addv s0, v17.4s",
        |a: &mut Asm| a.dup_4s_w(VA, XA) => "dup v17.4s, w20",
        |a: &mut Asm| a.cmeq_4s_zero(V, VA) => "cmeq v0.4s, v17.4s, #0x0",
    );
}

#[test]
fn scalar_float_forms() {
    check!(
        |a: &mut Asm| a.fdiv_s(V, VA, VB) => "fdiv s0, s17, s31",
        |a: &mut Asm| a.fdiv_d(V, VA, VB) => "fdiv d0, d17, d31",
        |a: &mut Asm| a.fmul_d(V, VA, VB) => "fmul d0, d17, d31",
        |a: &mut Asm| a.fsqrt_d(V, VA) => "fsqrt d0, d17",
        |a: &mut Asm| a.fcvt_ds(V, VA) => "fcvt d0, s17",
        |a: &mut Asm| a.fcvt_sd(V, VA) => "fcvt s0, d17",
        |a: &mut Asm| a.fcmp_d(V, VA) => "fcmp d0, d17",
        |a: &mut Asm| a.fmov_d_one(V) => "fmov d0, #1.0",
        |a: &mut Asm| a.fmov_ws(X, VA) => "fmov w9, s17",
        |a: &mut Asm| a.fmov_sw(VA, X) => "fmov s17, w9",
        |a: &mut Asm| a.fmov_xd(X, VA) => "fmov x9, d17",
        |a: &mut Asm| a.fmov_dx(VA, X) => "fmov d17, x9",
    );
}

#[test]
fn integer_forms() {
    check!(
        |a: &mut Asm| a.add_x(X, XA, XB) => "add x9, x20, x30",
        |a: &mut Asm| a.sub_x(X, XA, XB) => "sub x9, x20, x30",
        |a: &mut Asm| a.add_w(X, XA, XB) => "add w9, w20, w30",
        |a: &mut Asm| a.sub_w(X, XA, XB) => "sub w9, w20, w30",
        |a: &mut Asm| a.subs_x(X, XA, XB) => "subs x9, x20, x30",
        |a: &mut Asm| a.mul_x(X, XA, XB) => "mul x9, x20, x30",
        |a: &mut Asm| a.orr_w(X, XA, XB) => "orr w9, w20, w30",
        |a: &mut Asm| a.lsl_x(X, XA, XB) => "lsl x9, x20, x30",
        |a: &mut Asm| a.asr_x(X, XA, XB) => "asr x9, x20, x30",
        |a: &mut Asm| a.madd_x(X, XA, XB, Gpr(11)) => "madd x9, x20, x30, x11",
        |a: &mut Asm| a.lsl_xi(X, XA, 55) => "lsl x9, x20, #0x37",
        |a: &mut Asm| a.lsr_xi(X, XA, 32) => "lsr x9, x20, #0x20",
        |a: &mut Asm| a.asr_xi(X, XA, 9) => "asr x9, x20, #0x9",
        |a: &mut Asm| a.lsl_wi(X, XA, 23) => "lsl w9, w20, #0x17",
        |a: &mut Asm| a.lsr_wi(X, XA, 26) => "lsr w9, w20, #0x1a",
        |a: &mut Asm| a.add_xi(X, XA, 1) => "add x9, x20, #0x1",
        |a: &mut Asm| a.sub_xi(X, XA, 127) => "sub x9, x20, #0x7f",
        |a: &mut Asm| a.add_wi(X, XA, 128) => "add w9, w20, #0x80",
        |a: &mut Asm| a.sub_wi(X, XA, 1) => "sub w9, w20, #0x1",
        |a: &mut Asm| a.subs_wi(X, XA, 118) => "subs w9, w20, #0x76",
        |a: &mut Asm| a.subs_xi(Gpr(24), Gpr(24), 4095) => "subs x24, x24, #0xfff",
        |a: &mut Asm| a.and_wi(X, XA, 0x7F_FFFF) => "and w9, w20, #0x7fffff",
        |a: &mut Asm| a.orr_wi(X, XA, 0x80_0000) => "orr w9, w20, #0x800000",
        |a: &mut Asm| a.and_xi(X, XA, 0xFFFF_FFF0_0000_0000) => "and x9, x20, #0xfffffff000000000",
        |a: &mut Asm| a.tst_wi(X, 1 << 15) => "tst w9, #0x8000",
        |a: &mut Asm| a.cmp_wi(X, 256) => "cmp w9, #0x100",
        |a: &mut Asm| a.cmp_xi(X, 64) => "cmp x9, #0x40",
        |a: &mut Asm| a.cmn_xi(X, 126) => "cmn x9, #0x7e",
        |a: &mut Asm| a.cmp_w(X, XA) => "cmp w9, w20",
        |a: &mut Asm| a.cmp_x(X, XA) => "cmp x9, x20",
        |a: &mut Asm| a.cneg_x_lt(X, XA) => "cneg x9, x20, lt",
        |a: &mut Asm| a.clz_x(X, XA) => "clz x9, x20",
        |a: &mut Asm| a.rbit_x(X, XA) => "rbit x9, x20",
        |a: &mut Asm| a.orr_x(X, XA, XB) => "orr x9, x20, x30",
        |a: &mut Asm| a.and_x(X, XA, XB) => "and x9, x20, x30",
        |a: &mut Asm| a.bic_w(X, XA, XB) => "bic w9, w20, w30",
        |a: &mut Asm| a.ubfx_w(X, XA, 23, 8) => "ubfx w9, w20, #0x17, #0x8",
        |a: &mut Asm| a.neg_w(X, XA) => "neg w9, w20",
        |a: &mut Asm| a.mov_x(Gpr(19), X0) => "mov x19, x0",
        |a: &mut Asm| a.mov_w(X, XA) => "mov w9, w20",
        |a: &mut Asm| a.movz_w(X, 0x1234, 16) => "mov w9, #0x12340000",
        |a: &mut Asm| a.movk_w(X, 0x5F7F, 16) => "movk w9, #0x5f7f, lsl #16",
        |a: &mut Asm| a.movn_w(X, 0x7F, 0) => "mov w9, #0xffffff80",
        |a: &mut Asm| a.movz_x(X, 0x10, 32) => "mov x9, #0x1000000000",
        |a: &mut Asm| a.movk_x(X, 0xB172, 48) => "movk x9, #0xb172, lsl #48",
        |a: &mut Asm| a.movn_x(X, 0, 0) => "mov x9, #0xffffffffffffffff",
        // yaxpeax prints system registers by encoding: S3_3_C4_C4_0 is FPCR.
        // The forms of the integer macro-assembler.
        |a: &mut Asm| a.and_w(X, XA, XB) => "and w9, w20, w30",
        |a: &mut Asm| a.eor_w(X, XA, XB) => "eor w9, w20, w30",
        |a: &mut Asm| a.eor_x(X, XA, XB) => "eor x9, x20, x30",
        |a: &mut Asm| a.mul_w(X, XA, XB) => "mul w9, w20, w30",
        |a: &mut Asm| a.lsr_x(X, XA, XB) => "lsr x9, x20, x30",
        |a: &mut Asm| a.lsl_w(X, XA, XB) => "lsl w9, w20, w30",
        |a: &mut Asm| a.lsr_w(X, XA, XB) => "lsr w9, w20, w30",
        |a: &mut Asm| a.asr_w(X, XA, XB) => "asr w9, w20, w30",
        |a: &mut Asm| a.udiv_x(X, XA, XB) => "udiv x9, x20, x30",
        |a: &mut Asm| a.udiv_w(X, XA, XB) => "udiv w9, w20, w30",
        |a: &mut Asm| a.adds_w(X, XA, XB) => "adds w9, w20, w30",
        |a: &mut Asm| a.subs_w(X, XA, XB) => "subs w9, w20, w30",
        |a: &mut Asm| a.asr_wi(X, XA, 17) => "asr w9, w20, #0x11",
        |a: &mut Asm| a.eor_wi(X, XA, 0x8000_0000) => "eor w9, w20, #0x80000000",
        |a: &mut Asm| a.orr_xi(X, XA, 0xFF00) => "orr x9, x20, #0xff00",
        |a: &mut Asm| a.eor_xi(X, XA, 1 << 63) => "eor x9, x20, #0x8000000000000000",
        |a: &mut Asm| a.tst_xi(X, 1 << 40) => "tst x9, #0x10000000000",
        |a: &mut Asm| a.cmn_wi(X, 5) => "cmn w9, #0x5",
        |a: &mut Asm| a.eor_w_lsl(X, X, Gpr(17), 31) => "eor w9, w9, w17, lsl #31",
        |a: &mut Asm| a.ubfx_x(X, XA, 40, 20) => "ubfx x9, x20, #0x28, #0x14",
        |a: &mut Asm| a.sxtw(X, XA) => "sxtw x9, w20",
        |a: &mut Asm| a.mrs_fpcr(X) => "mrs x9, s3_3_c4_c4_0",
        |a: &mut Asm| a.msr_fpcr(X) => "msr s3_3_c4_c4_0, x9",
    );
    for c in CONDS {
        let name = cond_name(c);
        assert_eq!(
            one(|a| a.csel_w(X, XA, ZR, c)),
            format!("csel w9, w20, wzr, {name}")
        );
        assert_eq!(
            one(|a| a.csel_x(X, XA, XB, c)),
            format!("csel x9, x20, x30, {name}")
        );
        assert_eq!(one(|a| a.cset_w(X, c)), format!("cset w9, {name}"));
    }
}

#[test]
fn memory_forms() {
    check!(
        |a: &mut Asm| a.ldr_q(V, Gpr(21), 240) => "ldr q0, [x21, #0xf0]",
        |a: &mut Asm| a.str_q(VB, Gpr(20), 0x300) => "str q31, [x20, #0x300]",
        |a: &mut Asm| a.str_s(VA, Gpr(22), 0xF0) => "str s17, [x22, #0xf0]",
        |a: &mut Asm| a.ldr_w(X, Gpr(20), 0x308) => "ldr w9, [x20, #0x308]",
        |a: &mut Asm| a.str_w(X, Gpr(19), 0x2C) => "str w9, [x19, #0x2c]",
        |a: &mut Asm| a.ldr_x(Gpr(24), Gpr(19), 0x20) => "ldr x24, [x19, #0x20]",
        |a: &mut Asm| a.str_x(Gpr(22), Gpr(19), 0x10) => "str x22, [x19, #0x10]",
        |a: &mut Asm| a.ldrb_w(X, Gpr(23), 0x803) => "ldrb w9, [x23, #0x803]",
        |a: &mut Asm| a.strb_w(X, Gpr(20), 0x30D) => "strb w9, [x20, #0x30d]",
        |a: &mut Asm| a.ldrh_w(X, Gpr(23), 0x810) => "ldrh w9, [x23, #0x810]",
        |a: &mut Asm| a.ldr_q_idx(V, Gpr(10), X) => "ldr q0, [x10, x9, lsl #4]",
        |a: &mut Asm| a.ldr_w_idx(Gpr(17), Gpr(17), Gpr(13)) => "ldr w17, [x17, x13, lsl #2]",
        |a: &mut Asm| a.ldr_x_idx(Gpr(14), Gpr(14), Gpr(12)) => "ldr x14, [x14, x12, lsl #3]",
        |a: &mut Asm| a.stp_x_pre_sp(FP, LR, 80) => "stp x29, x30, [sp, #-0x50]!",
        |a: &mut Asm| a.stp_x_sp(Gpr(19), Gpr(20), 16) => "stp x19, x20, [sp, #0x10]",
        |a: &mut Asm| a.ldp_x_sp(Gpr(25), Gpr(26), 64) => "ldp x25, x26, [sp, #0x40]",
        |a: &mut Asm| a.ldp_x_post_sp(FP, LR, 80) => "ldp x29, x30, [sp], #0x50",
        |a: &mut Asm| a.stp_q(V, VA, Gpr(11), 0xE0) => "stp q0, q17, [x11, #0xe0]",
        |a: &mut Asm| a.ldp_q(V, VA, Gpr(22), 0x20) => "ldp q0, q17, [x22, #0x20]",
        |a: &mut Asm| a.ldr_s(VA, Gpr(16), 0x1FC) => "ldr s17, [x16, #0x1fc]",
        |a: &mut Asm| a.ldr_q_reg(VB, Gpr(12), X) => "ldr q31, [x12, x9]",
        |a: &mut Asm| a.stp_d_sp(Vreg(8), Vreg(9), 96) => "stp d8, d9, [sp, #0x60]",
        |a: &mut Asm| a.ldp_d_sp(Vreg(14), Vreg(15), 144) => "ldp d14, d15, [sp, #0x90]",
        |a: &mut Asm| a.add_xi(Gpr(16), Gpr(31), 0) => "mov x16, sp",
        |a: &mut Asm| a.ldr_w_reg(X, Gpr(19), Gpr(17)) => "ldr w9, [x19, x17]",
        |a: &mut Asm| a.ldr_x_reg(X, Gpr(19), Gpr(17)) => "ldr x9, [x19, x17]",
        |a: &mut Asm| a.str_w_reg(X, Gpr(19), Gpr(17)) => "str w9, [x19, x17]",
        |a: &mut Asm| a.str_x_reg(ZR, Gpr(19), Gpr(17)) => "str xzr, [x19, x17]",
        |a: &mut Asm| a.str_w(ZR, Gpr(19), 0x630) => "str wzr, [x19, #0x630]",
        // the frame forms (`host::a64::abi::Frame`)
        |a: &mut Asm| a.str_x_pre_sp(Gpr(19), 32) => "str x19, [sp, #-0x20]!",
        |a: &mut Asm| a.ldr_x_post_sp(Gpr(19), 32) => "ldr x19, [sp], #0x20",
        |a: &mut Asm| a.str_x_sp(Gpr(21), 16) => "str x21, [sp, #0x10]",
        |a: &mut Asm| a.ldr_x_sp(Gpr(21), 16) => "ldr x21, [sp, #0x10]",
        |a: &mut Asm| a.stp_d_pre_sp(Vreg(8), Vreg(9), 48) => "stp d8, d9, [sp, #-0x30]!",
        |a: &mut Asm| a.ldp_d_post_sp(Vreg(8), Vreg(9), 48) => "ldp d8, d9, [sp], #0x30",
        |a: &mut Asm| a.str_d_pre_sp(Vreg(15), 16) => "str d15, [sp, #-0x10]!",
        |a: &mut Asm| a.ldr_d_post_sp(Vreg(15), 16) => "ldr d15, [sp], #0x10",
        |a: &mut Asm| a.str_d_sp(Vreg(10), 64) => "str d10, [sp, #0x40]",
        |a: &mut Asm| a.ldr_d_sp(Vreg(10), 64) => "ldr d10, [sp, #0x40]",
        |a: &mut Asm| a.sub_xi(Gpr(31), Gpr(31), 32) => "sub sp, sp, #0x20",
    );
}

/// PC-relative forms: branches, ADR and literal loads reach the intended targets.
#[test]
fn pc_relative_forms() {
    let mut a = Asm::new();
    let fwd = a.new_label();
    let back = a.new_label();
    a.bind(back);
    for c in CONDS {
        a.b_cond(c, fwd);
    }
    a.b(fwd);
    a.bl(back);
    a.cbz_w(X, fwd);
    a.cbnz_w(X0, fwd);
    a.cbz_x(Gpr(14), back);
    a.tbnz_w(X, 31, fwd);
    a.adr(Gpr(25), fwd);
    a.bind(fwd);
    a.br(Gpr(25));
    a.ret(LR);
    a.load_const(VB, [1, 2, 3, 4]);
    let got = decode(a);
    let mut want: Vec<String> = CONDS
        .into_iter()
        .enumerate()
        .map(|(k, c)| format!("b.{} $+{:#x}", cond_name(c), 4 * (19 - k)))
        .collect();
    want.extend([
        "b $+0x1c".to_string(),
        "bl $-0x34".to_string(),
        "cbz w9, $+0x14".to_string(),
        "cbnz w0, $+0x10".to_string(),
        "cbz x14, $-0x40".to_string(),
        "tbnz w9, #0x1f, $+0x8".to_string(),
        "adr x25, $+0x4".to_string(),
        "br x25".to_string(),
        "ret".to_string(),
    ]);
    assert_eq!(got[..want.len()], want[..]);
    // The literal load points at the 16-aligned pool entry holding the constant.
    let mut a = Asm::new();
    a.movz_w(X, 0, 0);
    a.load_const(VB, [1, 2, 3, 4]);
    let (code, len) = a.finish().unwrap();
    let word = u32::from_le_bytes(code[4..8].try_into().unwrap());
    assert_eq!(word & 0xFF00_001F, 0x9C00_001F, "ldr q31, literal");
    let target = 4 + (((word >> 5) & 0x7_FFFF) as usize) * 4;
    assert_eq!(target % 16, 0);
    assert!(target >= len);
    assert_eq!(
        &code[target..target + 16],
        &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]
    );
}

/// Materialised constants decode to MOVZ/MOVN/MOVK sequences whose value is the constant.
#[test]
fn wide_immediates_hold_their_value() {
    fn value(lines: &[String]) -> u64 {
        let mut v = 0u64;
        for l in lines {
            let parts: Vec<&str> = l.split([' ', ',']).filter(|s| !s.is_empty()).collect();
            let imm = |s: &str| u64::from_str_radix(s.trim_start_matches("#0x"), 16).unwrap();
            match parts[0] {
                "mov" => {
                    v = imm(parts[2]);
                    if parts[1].starts_with('w') {
                        v &= 0xFFFF_FFFF;
                    }
                }
                "movk" => {
                    let sh = parts
                        .get(4)
                        .map(|s| imm(&s.replace('#', "#0x")))
                        .unwrap_or(0);
                    let sh = if parts.len() > 4 {
                        parts[4].trim_start_matches('#').parse::<u64>().unwrap()
                    } else {
                        sh
                    };
                    v = (v & !(0xFFFF << sh)) | imm(parts[2]) << sh;
                }
                other => panic!("unexpected {other} in {lines:?}"),
            }
        }
        v
    }
    for v in [
        0u32,
        1,
        0x7F80_0000,
        0x7FFF_FF80,
        0x7F7F_FFFF,
        0xFFFF_FF80,
        0x8000_0000,
        0x1_0000,
        0xC0_0000,
        0xFF80_0000,
    ] {
        let mut a = Asm::new();
        a.mov_imm_w(X, v);
        let lines = decode(a);
        assert!(lines.len() <= 2, "{lines:?}");
        assert_eq!(value(&lines), v as u64, "{v:#x}: {lines:?}");
    }
    for v in [
        0u64,
        1 << 63,
        1 << 40,
        (1u64 << 40).wrapping_neg(),
        0xFFFF_FFFF,
        0xb172_17f8,
        (-55i64) as u64,
        1549082005,
        (-774541002i64) as u64,
        1 << 39,
        !0,
    ] {
        let mut a = Asm::new();
        a.mov_imm_x(X, v);
        let lines = decode(a);
        assert_eq!(value(&lines), v, "{v:#x}: {lines:?}");
    }
}

/// The branches the NEON lane code adds (`batch/a64.rs`) reach their targets.
#[test]
fn lane_code_pc_relative_forms() {
    let mut a = Asm::new();
    let fwd = a.new_label();
    let back = a.new_label();
    a.bind(back);
    a.tbz_w(Gpr(12), 15, fwd);
    a.cbnz_x(X, back);
    a.bind(fwd);
    a.ret(LR);
    let got = decode(a);
    assert_eq!(
        got[..3],
        [
            "tbz w12, #0xf, $+0x8".to_string(),
            "cbnz x9, $-0x4".to_string(),
            "ret".to_string()
        ]
    );
}

/// Whole programs: every word before the literal pool decodes, in every mode.
#[test]
fn generated_programs_decode_completely() {
    let mut lane_programs = 0;
    for mode in [
        FloatMode::F24(Rounding::TowardZero),
        FloatMode::F24(Rounding::NearestEven),
        FloatMode::F32,
    ] {
        for seed in 0..60 {
            let case = generate(
                seed,
                &Options {
                    mode,
                    ..Options::default()
                },
            );
            let Ok(s) = compile(&case.program, mode, Backend::A64, HostFeatures::detect()) else {
                continue;
            };
            let n = decode_words(&s.code()[..s.instruction_bytes()]).len();
            assert_eq!(n * 4, s.instruction_bytes());
            let d = s.disassemble();
            assert!(!d.contains(".word"), "{d}");
            // The NEON multi-vertex code (generated here under the emulator), with lane
            // masks for programs with cmp-dependent branches.
            let (lanes, lanes_len, _) = s.batch_code();
            let n = decode_words(&lanes[..lanes_len]).len();
            assert_eq!(n * 4, lanes_len);
            lane_programs += usize::from(lanes_len > 0);
        }
    }
    assert!(
        lane_programs > 90,
        "{lane_programs} programs with lane code"
    );
}
