//! Encoding checks of the x86-64 emitter: every instruction form `x64::asm` can produce is
//! emitted into a `VecAssembler` with chosen registers (including REX-extended ones and the
//! base registers that need SIB/displacement bytes) and decoded with iced-x86; mnemonic and
//! operands must be the intended ones. This is what guards against dynasm encoding bugs (5.1.0
//! mis-encodes several AVX imm8 forms; only SSE forms are emitted). Also decodes whole
//! generated programs: every byte up to the constant pool is a valid instruction.
//!
//! Code generation works on any host, so this test runs everywhere.

use picajit::interp::pica::float::{FloatMode, MaxRule, Rounding};
use picajit_jit::iced_x86::{Code, Decoder, DecoderOptions, Formatter, IntelFormatter};
use picajit_jit::testing::x64::asm::{Asm, Mem, XOp};
use picajit_jit::testing::x64::regs::*;
use picajit_jit::{compile_with, Backend, HostFeatures};
use picajit_testkit::testgen::{generate, Options};

/// Decode the instruction stream of `a` (without the pool) into Intel syntax, one line each.
fn decode(a: Asm) -> (Vec<String>, Vec<u8>, usize) {
    let (code, len) = a.finish().expect("assembles");
    let mut d = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
    let mut f = IntelFormatter::new();
    f.options_mut().set_rip_relative_addresses(true);
    let mut out = Vec::new();
    while d.can_decode() {
        let i = d.decode();
        assert_ne!(i.code(), Code::INVALID, "invalid encoding in {code:02x?}");
        let mut s = String::new();
        f.format(&i, &mut s);
        out.push(
            s.replace("xmmword ptr ", "")
                .replace("qword ptr ", "")
                .replace("dword ptr ", ""),
        );
    }
    (out, code, len)
}

fn one(f: impl FnOnce(&mut Asm)) -> String {
    let mut a = Asm::new();
    f(&mut a);
    let (v, _, _) = decode(a);
    assert_eq!(v.len(), 1, "{v:?}");
    v[0].clone()
}

macro_rules! check_rr_rm {
    ($($m:ident),* $(,)?) => {
        $(
            {
                let name = stringify!($m);
                assert_eq!(one(|a| a.$m(Xmm(9), Xmm(12))), format!("{name} xmm9,xmm12"));
                assert_eq!(one(|a| a.$m(Xmm(1), Xmm(0))), format!("{name} xmm1,xmm0"));
                assert_eq!(
                    one(|a| a.$m(Xmm(2), Mem::Base(R12, 0x40))),
                    format!("{name} xmm2,[r12+40h]")
                );
                assert_eq!(
                    one(|a| a.$m(Xmm(10), Mem::Base(R13, 0))),
                    format!("{name} xmm10,[r13]")
                );
                assert_eq!(
                    one(|a| a.$m(Xmm(3), Mem::Index(R15, RAX, 0x800))),
                    format!("{name} xmm3,[r15+rax+800h]")
                );
                // Constant-pool form: RIP-relative, pointing at the 16-aligned constant.
                let mut a = Asm::new();
                let c = a.constant([1, 2, 3, 4]);
                a.$m(Xmm(4), c);
                let (code, len) = a.finish().unwrap();
                let mut d = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
                let i = d.decode();
                assert!(i.is_ip_rel_memory_operand(), "{name}");
                let target = i.ip_rel_memory_address() as usize;
                assert_eq!(target % 16, 0, "{name}");
                assert_eq!(&code[target..target + 16], &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
            }
        )*
    };
}

macro_rules! check_rri {
    ($($m:ident),* $(,)?) => {
        $(
            {
                let name = stringify!($m);
                assert_eq!(one(|a| a.$m(Xmm(9), Xmm(12), 0x1B)), format!("{name} xmm9,xmm12,1Bh"));
                assert_eq!(one(|a| a.$m(Xmm(1), Xmm(4), 2)), format!("{name} xmm1,xmm4,2"));
                assert_eq!(
                    one(|a| a.$m(Xmm(6), Mem::Base(R12, 0x30), 5)),
                    format!("{name} xmm6,[r12+30h],5")
                );
                assert_eq!(
                    one(|a| a.$m(Xmm(11), Mem::Index(R15, RAX, 0x800), 7)),
                    format!("{name} xmm11,[r15+rax+800h],7")
                );
            }
        )*
    };
}

#[test]
fn vector_forms() {
    check_rr_rm!(
        movaps, movups, addps, subps, mulps, divps, maxps, minps, andps, andnps, orps, xorps,
        haddps, cvttps2dq, cvtps2pd, cvtpd2ps, addpd, mulpd, haddpd, divsd, sqrtsd, mulsd, addsd,
        cvtss2sd, cvtsd2ss, divss, pand, pandn, por, pxor, paddd, psubd, pcmpgtd, pcmpeqd, paddq,
        psubq, movss, movsd, unpcklpd, movq, pmulld, movapd, divpd, sqrtpd, pmaxud, pmuludq,
        pmuldq, sqrtps, subpd, cvttpd2dq, pcmpgtq, pcmpeqq, pmovsxdq, pmovzxdq,
    );
    check_rri!(shufps, blendps, roundps, roundpd, roundss, pshufd, insertps);
    for (name, f) in [
        ("vandps", Asm::vandps as fn(&mut Asm, Xmm, Xmm, XOp)),
        ("vandnps", Asm::vandnps),
        ("vorps", Asm::vorps),
        ("vpcmpgtd", Asm::vpcmpgtd),
        ("vmulps", Asm::vmulps),
        ("vaddps", Asm::vaddps),
        ("vmaxps", Asm::vmaxps),
        ("vminps", Asm::vminps),
        ("vmulpd", Asm::vmulpd),
        ("vdivps", Asm::vdivps),
        ("vdivpd", Asm::vdivpd),
        // The host lane operations' 128-bit forms that SSE has no encoding for.
        ("vpsllvd", Asm::vpsllvd),
        ("vpsrlvd", Asm::vpsrlvd),
        ("vpsravd", Asm::vpsravd),
        ("vpsllvq", Asm::vpsllvq),
        ("vpsrlvq", Asm::vpsrlvq),
        ("vfmadd231ps", Asm::vfmadd231ps),
    ] {
        assert_eq!(
            one(|a| f(a, Xmm(9), Xmm(1), XOp::Reg(Xmm(12)))),
            format!("{name} xmm9,xmm1,xmm12")
        );
        assert_eq!(
            one(|a| f(a, Xmm(0), Xmm(10), XOp::Mem(Mem::Base(R12, 0x40)))),
            format!("{name} xmm0,xmm10,[r12+40h]")
        );
        assert_eq!(
            one(|a| f(a, Xmm(3), Xmm(4), XOp::Mem(Mem::Index(R15, RAX, 0x800)))),
            format!("{name} xmm3,xmm4,[r15+rax+800h]")
        );
    }
    // cmpps/cmppd/cmpss/cmpsd print their predicate as a pseudo-op mnemonic.
    assert_eq!(
        one(|a| a.cmpps(Xmm(9), Xmm(12), 3)),
        "cmpunordps xmm9,xmm12"
    );
    assert_eq!(one(|a| a.cmpps(Xmm(1), Xmm(2), 1)), "cmpltps xmm1,xmm2");
    assert_eq!(one(|a| a.cmpps(Xmm(1), Xmm(2), 2)), "cmpleps xmm1,xmm2");
    assert_eq!(one(|a| a.cmpps(Xmm(1), Xmm(2), 0)), "cmpeqps xmm1,xmm2");
    assert_eq!(one(|a| a.cmpps(Xmm(1), Xmm(2), 4)), "cmpneqps xmm1,xmm2");
    assert_eq!(one(|a| a.cmpps(Xmm(1), Xmm(2), 7)), "cmpordps xmm1,xmm2");
    assert_eq!(
        one(|a| a.cmpps(Xmm(5), Mem::Base(R12, 0x10), 2)),
        "cmpleps xmm5,[r12+10h]"
    );
    assert_eq!(
        one(|a| a.cmppd(Xmm(9), Xmm(10), 3)),
        "cmpunordpd xmm9,xmm10"
    );
    // RSQ's grid tests (`recipes::reciprocal`).
    assert_eq!(one(|a| a.cmppd(Xmm(8), Xmm(9), 1)), "cmpltpd xmm8,xmm9");
    assert_eq!(one(|a| a.cmppd(Xmm(1), Xmm(7), 2)), "cmplepd xmm1,xmm7");
    assert_eq!(one(|a| a.cmpss(Xmm(1), Xmm(2), 1)), "cmpltss xmm1,xmm2");
    assert_eq!(one(|a| a.cmpsd(Xmm(1), Xmm(2), 2)), "cmplesd xmm1,xmm2");
    assert_eq!(one(|a| a.movhlps(Xmm(0), Xmm(9))), "movhlps xmm0,xmm9");
    assert_eq!(one(|a| a.movlhps(Xmm(10), Xmm(1))), "movlhps xmm10,xmm1");
    assert_eq!(one(|a| a.psrld(Xmm(9), 7)), "psrld xmm9,7");
    assert_eq!(one(|a| a.pslld(Xmm(1), 3)), "pslld xmm1,3");
    assert_eq!(one(|a| a.psrlq(Xmm(10), 36)), "psrlq xmm10,24h");
    assert_eq!(one(|a| a.psrad(Xmm(2), 31)), "psrad xmm2,1Fh");
    assert_eq!(one(|a| a.psllq(Xmm(10), 32)), "psllq xmm10,20h");
    assert_eq!(one(|a| a.psllq(Xmm(1), 7)), "psllq xmm1,7");
    assert_eq!(one(|a| a.movmskps(RCX, Xmm(9))), "movmskps ecx,xmm9");
    assert_eq!(one(|a| a.movd_rx(RAX, Xmm(2))), "movd eax,xmm2");
    assert_eq!(one(|a| a.movd_xr(Xmm(11), RDX)), "movd xmm11,edx");
    assert_eq!(one(|a| a.pextrd(RAX, Xmm(5), 1)), "pextrd eax,xmm5,1");
    assert_eq!(
        one(|a| a.movd_mx(R12, 0x200, Xmm(9))),
        "movd [r12+200h],xmm9"
    );
    assert_eq!(
        one(|a| a.store_vec(Mem::Base(R14, 0x20), Xmm(9), false)),
        "movups [r14+20h],xmm9"
    );
    assert_eq!(
        one(|a| a.store_vec(Mem::Base(R12, 0x120), Xmm(1), true)),
        "movaps [r12+120h],xmm1"
    );
    assert_eq!(
        one(|a| a.store_vec(Mem::Index(RAX, RCX, 0x10), Xmm(0), true)),
        "movaps [rax+rcx+10h],xmm0"
    );
    assert_eq!(
        one(|a| a.store_ss(Mem::Base(R13, 0x30), Xmm(12))),
        "movss [r13+30h],xmm12"
    );
    assert_eq!(
        one(|a| a.store_lo64(R14, 0x30, Xmm(1))),
        "movlps [r14+30h],xmm1"
    );
    assert_eq!(
        one(|a| a.store_hi64(R12, 0x108, Xmm(9))),
        "movhps [r12+108h],xmm9"
    );
    assert_eq!(
        one(|a| a.store_lane(R12, 0x104, Xmm(1), 1)),
        "extractps [r12+104h],xmm1,1"
    );
    assert_eq!(
        one(|a| a.store_lane(R14, 0xC, Xmm(12), 3)),
        "extractps [r14+0Ch],xmm12,3"
    );
    assert_eq!(
        one(|a| a.ldmxcsr(Mem::Base(RBX, 0x44))),
        "ldmxcsr [rbx+44h]"
    );
    assert_eq!(one(|a| a.stmxcsr(RBX, 0x44)), "stmxcsr [rbx+44h]");
    assert_eq!(one(|a| a.lfence()), "lfence");
}

#[test]
fn integer_and_flow_forms() {
    assert_eq!(one(|a| a.mov_rm64(R12, RBX, 8)), "mov r12,[rbx+8]");
    assert_eq!(one(|a| a.mov_mr64(RBX, 0x20, RBP)), "mov [rbx+20h],rbp");
    assert_eq!(one(|a| a.mov_rm32(RAX, R12, 0x300)), "mov eax,[r12+300h]");
    assert_eq!(one(|a| a.mov_mr32(R12, 0x308, RAX)), "mov [r12+308h],eax");
    assert_eq!(one(|a| a.mov_mi32(RBX, 0x38, 0x123)), "mov [rbx+38h],123h");
    assert_eq!(one(|a| a.mov_mr8(RAX, 0x100, RCX)), "mov [rax+100h],cl");
    assert_eq!(one(|a| a.mov_mr16(R12, 0x30C, RAX)), "mov [r12+30Ch],ax");
    assert_eq!(
        one(|a| a.movzx_rm8(RAX, R15, 0x801)),
        "movzx eax,byte ptr [r15+801h]"
    );
    assert_eq!(one(|a| a.mov_ri32(RDI, 2)), "mov edi,2");
    assert_eq!(
        one(|a| a.mov_ri64(RAX, 0x1122_3344_5566_7788)),
        "mov rax,1122334455667788h"
    );
    assert_eq!(one(|a| a.mov_rr64(RBX, RDI)), "mov rbx,rdi");
    assert_eq!(one(|a| a.prefetcht0(R9, 0x1010)), "prefetcht0 [r9+1010h]");
    assert_eq!(one(|a| a.prefetcht0(R13, 0x800)), "prefetcht0 [r13+800h]");
    assert_eq!(one(|a| a.lea_r32(RCX, RAX, 128)), "lea ecx,[rax+80h]");
    assert_eq!(one(|a| a.add_ri32(RAX, 5)), "add eax,5");
    assert_eq!(one(|a| a.and_ri32(RAX, 0x7F)), "and eax,7Fh");
    assert_eq!(one(|a| a.shl_ri32(RAX, 4)), "shl eax,4");
    assert_eq!(one(|a| a.shr_ri32(RCX, 3)), "shr ecx,3");
    assert_eq!(one(|a| a.xor_rr32(RDX, RDX)), "xor edx,edx");
    assert_eq!(one(|a| a.or_rr32(RAX, RCX)), "or eax,ecx");
    assert_eq!(one(|a| a.cmp_ri32(RCX, 256)), "cmp ecx,100h");
    assert_eq!(one(|a| a.cmp_rm32(RAX, RBX, 0x50)), "cmp eax,[rbx+50h]");
    assert_eq!(one(|a| a.cmovae_rr32(RAX, RDX)), "cmovae eax,edx");
    assert_eq!(one(|a| a.test_rr32(RAX, RAX)), "test eax,eax");
    assert_eq!(one(|a| a.cmove_rr32(RCX, RDX)), "cmove ecx,edx");
    assert_eq!(one(|a| a.cmp_rm64(RAX, RBX, 0x70)), "cmp rax,[rbx+70h]");
    assert_eq!(one(|a| a.shl_ri64(RAX, 8)), "shl rax,8");
    assert_eq!(one(|a| a.add_rr64(R13, RAX)), "add r13,rax");
    assert_eq!(one(|a| a.sub_rr64(RAX, RBP)), "sub rax,rbp");
    assert_eq!(one(|a| a.add_mr64(RBX, 0x80, RAX)), "add [rbx+80h],rax");
    assert_eq!(
        one(|a| a.add_mi64(RBX, 0x78, 1)),
        "add qword ptr [rbx+78h],1".replace("qword ptr ", "")
    );
    assert_eq!(
        one(|a| a.cmp_mi8(R12, 0x30C, 1)),
        "cmp byte ptr [r12+30Ch],1"
    );
    assert_eq!(
        one(|a| a.cmp_mi16(R12, 0x30C, 0x101)),
        "cmp word ptr [r12+30Ch],101h"
    );
    assert_eq!(
        one(|a| a.test_mi16(R15, 0x810, 0x80)),
        "test word ptr [r15+810h],80h"
    );
    assert_eq!(one(|a| a.add_mr32(R12, 0x308, RAX)), "add [r12+308h],eax");
    assert_eq!(
        one(|a| a.sub_mi32(RBX, 0x28, 1)),
        "sub dword ptr [rbx+28h],1".replace("dword ptr ", "")
    );
    assert_eq!(one(|a| a.add_mi32(RBX, 0x54, 1)), "add [rbx+54h],1");
    assert_eq!(one(|a| a.sub_ri64(RBP, 12)), "sub rbp,0Ch");
    assert_eq!(one(|a| a.imul_rri32(RCX, RAX, 272)), "imul ecx,eax,110h");
    assert_eq!(one(|a| a.add_rm64(RAX, RBX, 0x48)), "add rax,[rbx+48h]");
    // The forms of the integer macro-assembler.
    assert_eq!(one(|a| a.mov_rr32(R8, RAX)), "mov r8d,eax");
    assert_eq!(one(|a| a.add_rr32(RAX, R9)), "add eax,r9d");
    assert_eq!(one(|a| a.sub_rr32(R10, RCX)), "sub r10d,ecx");
    assert_eq!(one(|a| a.and_rr32(RSI, R15)), "and esi,r15d");
    assert_eq!(one(|a| a.imul_rr32(R14, RDX)), "imul r14d,edx");
    assert_eq!(one(|a| a.cmp_rr32(RBP, R11)), "cmp ebp,r11d");
    assert_eq!(one(|a| a.and_rr64(R8, R9)), "and r8,r9");
    assert_eq!(one(|a| a.or_rr64(RAX, R12)), "or rax,r12");
    assert_eq!(one(|a| a.xor_rr64(R13, RDI)), "xor r13,rdi");
    assert_eq!(one(|a| a.imul_rr64(RDX, R10)), "imul rdx,r10");
    assert_eq!(one(|a| a.cmp_rr64(R9, RBP)), "cmp r9,rbp");
    assert_eq!(one(|a| a.add_ri64(R12, 0x10)), "add r12,10h");
    assert_eq!(one(|a| a.and_ri64(R8, -16)), "and r8,0FFFFFFFFFFFFFFF0h");
    assert_eq!(one(|a| a.or_ri64(RSI, 0x40)), "or rsi,40h");
    assert_eq!(one(|a| a.xor_ri64(RAX, 1)), "xor rax,1");
    assert_eq!(one(|a| a.cmp_ri64(R10, -5)), "cmp r10,0FFFFFFFFFFFFFFFBh");
    assert_eq!(one(|a| a.sub_ri32(R9, 0x20000)), "sub r9d,20000h");
    assert_eq!(one(|a| a.or_ri32(RCX, 0x80_0000)), "or ecx,800000h");
    assert_eq!(one(|a| a.xor_ri32(RAX, i32::MIN)), "xor eax,80000000h");
    assert_eq!(one(|a| a.test_ri64(R8, 1)), "test r8,1");
    assert_eq!(one(|a| a.test_ri32(RDX, 0x100)), "test edx,100h");
    assert_eq!(one(|a| a.test_rr64(R11, R11)), "test r11,r11");
    assert_eq!(one(|a| a.shr_ri64(RDX, 32)), "shr rdx,20h");
    assert_eq!(one(|a| a.sar_ri64(R14, 63)), "sar r14,3Fh");
    assert_eq!(one(|a| a.sar_ri32(R9, 17)), "sar r9d,11h");
    assert_eq!(one(|a| a.shl_rcl64(R8)), "shl r8,cl");
    assert_eq!(one(|a| a.shr_rcl64(RAX)), "shr rax,cl");
    assert_eq!(one(|a| a.sar_rcl64(RDX)), "sar rdx,cl");
    assert_eq!(one(|a| a.shl_rcl32(R10)), "shl r10d,cl");
    assert_eq!(one(|a| a.shr_rcl32(RSI)), "shr esi,cl");
    assert_eq!(one(|a| a.sar_rcl32(RDI)), "sar edi,cl");
    assert_eq!(one(|a| a.imul_rri64(R10, R8, 24)), "imul r10,r8,18h");
    assert_eq!(
        one(|a| a.imul_rri32(R9, RSI, -3)),
        "imul r9d,esi,0FFFFFFFDh"
    );
    assert_eq!(one(|a| a.neg_r64(R15)), "neg r15");
    assert_eq!(one(|a| a.neg_r32(RCX)), "neg ecx");
    assert_eq!(one(|a| a.bsr_rr64(R8, RDX)), "bsr r8,rdx");
    assert_eq!(one(|a| a.cmova_rr64(RCX, R8)), "cmova rcx,r8");
    assert_eq!(one(|a| a.cmova_rr32(R9, RAX)), "cmova r9d,eax");
    assert_eq!(one(|a| a.movsxd(R10, R9)), "movsxd r10,r9d");
    assert_eq!(one(|a| a.div_r64(R9)), "div r9");
    assert_eq!(one(|a| a.div_r32(RSI)), "div esi");
    assert_eq!(
        one(|a| a.mov_mi64(RBX, 0x38, -1)),
        "mov qword ptr [rbx+38h],0FFFFFFFFFFFFFFFFh".replace("qword ptr ", "")
    );
    assert_eq!(
        one(|a| a.mov_mr32_idx(RBX, R14, 0x690, R8)),
        "mov [rbx+r14+690h],r8d"
    );
    assert_eq!(
        one(|a| a.mov_mr64_idx(R12, RAX, 0x688, RBP)),
        "mov [r12+rax+688h],rbp"
    );
    assert_eq!(
        one(|a| a.cmp_mi32(RBX, 0x63C, 0x8001)),
        "cmp dword ptr [rbx+63Ch],8001h".replace("dword ptr ", "")
    );
    assert_eq!(
        one(|a| a.cmp_mi64(R13, 0x10, -2)),
        "cmp qword ptr [r13+10h],0FFFFFFFFFFFFFFFEh".replace("qword ptr ", "")
    );
    assert_eq!(one(|a| a.cmp_mr32(RBX, 0x40, R9)), "cmp [rbx+40h],r9d");
    assert_eq!(one(|a| a.cmp_mr64(RBP, 0, RAX)), "cmp [rbp],rax");
    assert_eq!(one(|a| a.mov_r32_idx4(R8, R11, RCX)), "mov r8d,[r11+rcx*4]");
    assert_eq!(
        one(|a| a.mov_r64_idx8(RAX, R11, RDX)),
        "mov rax,[r11+rdx*8]"
    );
    assert_eq!(one(|a| a.add_r64_idx8(RAX, R11, R8)), "add rax,[r11+r8*8]");
    assert_eq!(
        one(|a| a.add_r32_idx4(RSI, R11, RDI)),
        "add esi,[r11+rdi*4]"
    );
    assert_eq!(one(|a| a.sub_ri64_8(R13, 1)), "sub r13,1");
    assert_eq!(one(|a| a.sub_ri32_8(R10, -1)), "sub r10d,0FFFFFFFFh");
    // the imm8 forms: REX, opcode, ModRM, one immediate byte
    let mut a = Asm::new();
    a.sub_ri64_8(R13, 1);
    let (_, code, len) = decode(a);
    assert_eq!(&code[..len], &[0x49, 0x83, 0xED, 0x01]);
    assert_eq!(one(|a| a.push(R15)), "push r15");
    assert_eq!(one(|a| a.pop(RBX)), "pop rbx");
    assert_eq!(one(|a| a.call_r(RAX)), "call rax");
    assert_eq!(one(|a| a.ret()), "ret");
    // Jumps: a forward and a backward label.
    let mut a = Asm::new();
    let back = a.new_label();
    let fwd = a.new_label();
    a.bind(back);
    a.jb(fwd);
    a.jae(back);
    a.je(fwd);
    a.jne(back);
    a.jmp(fwd);
    a.call_label(back);
    a.jbe(fwd);
    a.ja(back);
    a.jl(fwd);
    a.jle(back);
    a.jg(fwd);
    a.jge(back);
    a.js(fwd);
    a.jns(back);
    a.jno(fwd);
    a.bind(fwd);
    let (v, _, len) = decode(a);
    assert_eq!(v.len(), 15);
    let mnemonics = [
        "jb", "jae", "je", "jne", "jmp", "call", "jbe", "ja", "jl", "jle", "jg", "jge", "js",
        "jns", "jno",
    ];
    for (line, m) in v.iter().zip(mnemonics) {
        assert!(line.starts_with(m), "{line}");
    }
    assert!(
        v[0].ends_with(&format!("{len:X}h")) || v[0].ends_with(&format!("{len:016X}h")),
        "{v:?}"
    );
}

/// Whole programs in every mode decode to valid instructions up to the constant pool, and the
/// AVX imm8 forms dynasm mis-encodes never appear.
#[test]
fn generated_programs_decode_cleanly() {
    for (k, mode) in [
        FloatMode::F24(Rounding::TowardZero),
        FloatMode::F24(Rounding::NearestEven),
        FloatMode::F32,
    ]
    .into_iter()
    .enumerate()
    {
        for seed in 0..150u64 {
            let case = generate(
                seed + 1000 * k as u64,
                &Options {
                    mode,
                    ..Options::default()
                },
            );
            // Odd seeds with the other MAX reading, whose MAX adds a compare and a select.
            let rule = if seed % 2 == 1 {
                MaxRule::NegInfSecond
            } else {
                MaxRule::Compare
            };
            let Ok(s) = compile_with(&case.program, mode, rule, Backend::X64, HostFeatures::all())
            else {
                continue;
            };
            let len = s.instruction_bytes();
            let mut dec = Decoder::with_ip(64, &s.code()[..len], 0, DecoderOptions::NONE);
            while dec.can_decode() {
                assert_ne!(dec.decode().code(), Code::INVALID);
            }
            assert_eq!(
                dec.ip() as usize,
                len,
                "decoding must end exactly at the pool"
            );
            let d = s.disassemble();
            for line in d.lines().filter(|l| !l.starts_with(';')) {
                assert!(!line.contains("(bad)"), "{line}");
                for bad in [
                    "vshufps", "vblendps", "vcmpps", "vdpps", "vpblend", "vpalignr",
                ] {
                    assert!(!line.contains(bad), "{line}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------- SoA batch emitter (AVX2)

mod soa {
    use super::decode;
    use picajit_jit::iced_x86::{Decoder, DecoderOptions};
    use picajit_jit::testing::batch::asm::{pred, YOp, Yasm, Ymm, HOT_BASE, THREE_OPERAND_FORMS};
    use picajit_jit::testing::x64::asm::{Asm, Mem};
    use picajit_jit::testing::x64::regs::*;

    /// Emit one instruction through [`Yasm`] and decode it.
    fn yone(f: impl FnOnce(&mut Yasm)) -> String {
        let mut a = Asm::new();
        f(&mut Yasm::new(&mut a));
        let (v, _, _) = decode(a);
        assert_eq!(v.len(), 1, "{v:?}");
        v[0].replace("ymmword ptr ", "")
    }

    #[test]
    fn three_operand_forms() {
        for &(name, f) in THREE_OPERAND_FORMS {
            assert_eq!(
                yone(|y| f(y, Ymm(9), Ymm(1), YOp::Reg(Ymm(12)))),
                format!("{name} ymm9,ymm1,ymm12")
            );
            assert_eq!(
                yone(|y| f(y, Ymm(0), Ymm(15), YOp::Reg(Ymm(7)))),
                format!("{name} ymm0,ymm15,ymm7")
            );
            assert_eq!(
                yone(|y| f(y, Ymm(3), Ymm(10), YOp::Mem(Mem::Base(RBX, 0x1040)))),
                format!("{name} ymm3,ymm10,[rbx+1040h]")
            );
            assert_eq!(
                yone(|y| f(y, Ymm(14), Ymm(4), YOp::Mem(Mem::Index(R15, R11, 0x800)))),
                format!("{name} ymm14,ymm4,[r15+r11+800h]")
            );
            // Hot constants through HOT_BASE (rbp): each of the eight slots with a literal
            // 8-bit displacement, so the whole instruction is 5 bytes (two-byte VEX) for
            // low registers.
            for k in 0..8 {
                let o = 32 * k - 128;
                let want = if o < 0 {
                    format!("{name} ymm3,ymm2,[rbp-{:X}h]", -o)
                } else if o == 0 {
                    format!("{name} ymm3,ymm2,[rbp]")
                } else {
                    format!("{name} ymm3,ymm2,[rbp+{o:X}h]")
                };
                let mut a = Asm::new();
                f(
                    &mut Yasm::new(&mut a),
                    Ymm(3),
                    Ymm(2),
                    YOp::Mem(Mem::Base(HOT_BASE, o)),
                );
                let (v, code, len) = decode(a);
                assert_eq!(v[0].replace("ymmword ptr ", ""), want);
                let short = matches!(
                    name,
                    "vpcmpgtq"
                        | "vpmuldq"
                        | "vpermd"
                        | "vpsrlvd"
                        | "vpsllvd"
                        | "vpsravd"
                        | "vfmadd231ps"
                        | "vpsrlvq"
                        | "vpsllvq"
                        | "vpcmpeqq"
                        | "vpmaxud"
                );
                // 0F38-map forms need the three-byte VEX prefix.
                assert_eq!(len, if short { 6 } else { 5 }, "{name} {code:02x?}");
            }
            // Constant-pool form: RIP-relative, pointing at the 32-byte constant.
            let mut a = Asm::new();
            let mut y = Yasm::new(&mut a);
            let c = y.constant([1, 2, 3, 4, 5, 6, 7, 8]);
            f(&mut y, Ymm(11), Ymm(2), YOp::Mem(c));
            let (code, len) = a.finish().unwrap();
            let mut d = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
            let i = d.decode();
            assert!(i.is_ip_rel_memory_operand(), "{name}");
            let target = i.ip_rel_memory_address() as usize;
            let want: Vec<u8> = (1u32..=8).flat_map(|x| x.to_le_bytes()).collect();
            assert_eq!(&code[target..target + 32], &want[..], "{name}");
        }
    }

    /// `Yasm::constant` of a value in `Asm::hot32` is a `HOT_BASE` slot, and the finished
    /// pool holds that value at `hot_label` + the slot's displacement.
    #[test]
    fn hot_constants_resolve_to_their_bytes() {
        let mut a = Asm::new();
        a.hot32 = (0..8u32).map(|k| [k * 0x1111_1111 + 1; 8]).collect();
        let hot = a.new_label();
        a.hot_label = Some(hot);
        let mut y = Yasm::new(&mut a);
        // An ordinary constant stays RIP-relative.
        assert!(matches!(y.constant([9; 8]), Mem::Const(_)));
        let mut disps = Vec::new();
        for k in 0..8u32 {
            match y.constant([k * 0x1111_1111 + 1; 8]) {
                Mem::Base(b, o) if b == HOT_BASE => disps.push(o),
                other => panic!("slot {k}: {other:?}"),
            }
        }
        assert_eq!(disps, [-128, -96, -64, -32, 0, 32, 64, 96]);
        // `lea rbp, [hot]` is how the SoA entry gets the base: check the layout through it.
        let mut a = Asm::new();
        a.hot32 = (0..8u32).map(|k| [k * 0x1111_1111 + 1; 8]).collect();
        let hot = a.new_label();
        a.hot_label = Some(hot);
        a.lea_label(RBP, hot);
        let (code, len) = a.finish().unwrap();
        let mut d = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
        let i = d.decode();
        let at = i.ip_rel_memory_address() as usize;
        for (k, o) in disps.iter().enumerate() {
            let slot = (at as i64 + *o as i64) as usize;
            let want: Vec<u8> = [k as u32 * 0x1111_1111 + 1; 8]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            assert_eq!(&code[slot..slot + 32], &want[..], "slot {k}");
        }
    }

    #[test]
    fn two_operand_and_move_forms() {
        for (name, f) in [
            (
                "vmovaps",
                (|y: &mut Yasm, d, s| y.vmovaps(d, s)) as fn(&mut Yasm, Ymm, YOp),
            ),
            ("vmovups", |y, d, s| y.vmovups(d, s)),
            ("vcvttps2dq", |y, d, s| y.vcvttps2dq(d, s)),
            ("vsqrtpd", |y, d, s| y.vsqrtpd(d, s)),
            ("vsqrtps", |y, d, s| y.vsqrtps(d, s)),
        ] {
            assert_eq!(
                yone(|y| f(y, Ymm(9), YOp::Reg(Ymm(2)))),
                format!("{name} ymm9,ymm2")
            );
            assert_eq!(
                yone(|y| f(y, Ymm(1), YOp::Reg(Ymm(13)))),
                format!("{name} ymm1,ymm13")
            );
            assert_eq!(
                yone(|y| f(y, Ymm(12), YOp::Mem(Mem::Base(RBX, 0x20)))),
                format!("{name} ymm12,[rbx+20h]")
            );
            assert_eq!(
                yone(|y| f(y, Ymm(0), YOp::Mem(Mem::Index(R15, RAX, 0x810)))),
                format!("{name} ymm0,[r15+rax+810h]")
            );
        }
        assert_eq!(
            yone(|y| y.vmovaps(Ymm(7), Mem::Base(HOT_BASE, -96))),
            "vmovaps ymm7,[rbp-60h]"
        );
        assert_eq!(
            yone(|y| y.vmovups(Ymm(12), Mem::Base(HOT_BASE, 96))),
            "vmovups ymm12,[rbp+60h]"
        );
        assert_eq!(
            yone(|y| y.store(Mem::Base(RBX, 0x1A0), Ymm(13), true)),
            "vmovaps [rbx+1A0h],ymm13"
        );
        assert_eq!(
            yone(|y| y.store(Mem::Base(R14, 0x120), Ymm(7), false)),
            "vmovups [r14+120h],ymm7"
        );
        assert_eq!(
            yone(|y| y.store(Mem::Index(RAX, RCX, 0x10), Ymm(10), true)),
            "vmovaps [rax+rcx+10h],ymm10"
        );
        assert_eq!(
            yone(|y| y.store(Mem::Index(RAX, R9, 0x10), Ymm(1), false)),
            "vmovups [rax+r9+10h],ymm1"
        );
        assert_eq!(
            yone(|y| y.load_x(Ymm(4), Mem::Base(R13, 0x710))),
            "vmovups xmm4,[r13+710h]"
        );
        assert_eq!(
            yone(|y| y.load_x(Ymm(9), Mem::Index(R15, R10, 0x800))),
            "vmovups xmm9,[r15+r10+800h]"
        );
        assert_eq!(
            yone(|y| y.store_x(Mem::Base(R14, 0x4F0), Ymm(12))),
            "vmovups [r14+4F0h],xmm12"
        );
        assert_eq!(
            yone(|y| y.store_x(Mem::Index(R14, RAX, 0x10), Ymm(3))),
            "vmovups [r14+rax+10h],xmm3"
        );
        assert_eq!(
            yone(|y| y.vbroadcastss(Ymm(1), Mem::Base(R15, 0x80C))),
            "vbroadcastss ymm1,[r15+80Ch]"
        );
        assert_eq!(
            yone(|y| y.vbroadcastss(Ymm(10), Mem::Index(R15, R11, 0x804))),
            "vbroadcastss ymm10,[r15+r11+804h]"
        );
        // Every base/index class of the raw memory encoder (SIB for rsp/r12, disp32 for
        // rbp/r13, REX-extended fields).
        for (d, m, text) in [
            (0u8, Mem::Base(RAX, 4), "[rax+4]"),
            (8, Mem::Base(RBX, -8), "[rbx-8]"),
            (3, Mem::Base(Gpr(4), 0x10), "[rsp+10h]"),
            (12, Mem::Base(R12, 0x10), "[r12+10h]"),
            (5, Mem::Base(RBP, 0), "[rbp]"),
            (6, Mem::Base(R13, 0), "[r13]"),
            (15, Mem::Index(R15, RAX, 0x800), "[r15+rax+800h]"),
            (2, Mem::Index(RAX, R12, 0x8), "[rax+r12+8]"),
            (9, Mem::Index(R13, R9, 0x8), "[r13+r9+8]"),
            (7, Mem::Index(RBP, RCX, 0), "[rbp+rcx]"),
        ] {
            assert_eq!(
                yone(|y| y.vbroadcastss(Ymm(d), m)),
                format!("vbroadcastss ymm{d},{text}")
            );
        }
        assert_eq!(
            yone(|y| y.vcvtps2pd(Ymm(7), Ymm(10))),
            "vcvtps2pd ymm7,xmm10"
        );
        assert_eq!(
            yone(|y| y.vcvtps2pd(Ymm(11), Ymm(0))),
            "vcvtps2pd ymm11,xmm0"
        );
        assert_eq!(
            yone(|y| y.vcvtpd2ps(Ymm(7), Ymm(10))),
            "vcvtpd2ps xmm7,ymm10"
        );
        assert_eq!(
            yone(|y| y.vcvtpd2ps(Ymm(12), Ymm(3))),
            "vcvtpd2ps xmm12,ymm3"
        );
        assert_eq!(yone(|y| y.vzeroupper()), "vzeroupper");
    }

    /// The raw VEX encodings: every register combination class (low/high in each field).
    #[test]
    fn raw_vex_forms() {
        let regs = [
            (1u8, 2u8, 3u8),
            (9, 2, 3),
            (1, 10, 3),
            (1, 2, 11),
            (15, 14, 13),
            (0, 8, 7),
        ];
        for (d, a, b) in regs {
            let (yd, ya, yb) = (Ymm(d), Ymm(a), Ymm(b));
            for (p, name) in [
                (pred::EQ, "vcmpeqps"),
                (pred::LT, "vcmpltps"),
                (pred::LE, "vcmpleps"),
                (pred::NEQ, "vcmpneqps"),
                (pred::ORD, "vcmpordps"),
            ] {
                assert_eq!(
                    yone(|y| y.vcmpps(yd, ya, yb, p)),
                    format!("{name} ymm{d},ymm{a},ymm{b}")
                );
            }
            assert_eq!(
                yone(|y| y.vcmppd(yd, ya, yb, pred::LE)),
                format!("vcmplepd ymm{d},ymm{a},ymm{b}")
            );
            assert_eq!(
                yone(|y| y.vcmppd(yd, ya, yb, pred::LT)),
                format!("vcmpltpd ymm{d},ymm{a},ymm{b}")
            );
            assert_eq!(
                yone(|y| y.vroundps(yd, yb, 9)),
                format!("vroundps ymm{d},ymm{b},9"),
            );
            assert_eq!(
                yone(|y| y.vroundpd(yd, yb, 9)),
                format!("vroundpd ymm{d},ymm{b},9")
            );
            assert_eq!(
                yone(|y| y.vcvttpd2dq(yd, yb)),
                format!("vcvttpd2dq xmm{d},ymm{b}")
            );
            assert_eq!(
                yone(|y| y.vinsertf128_hi(yd, ya, yb)),
                format!("vinsertf128 ymm{d},ymm{a},xmm{b},1")
            );
            assert_eq!(
                yone(|y| y.vextractf128_hi(yd, yb)),
                format!("vextractf128 xmm{d},ymm{b},1")
            );
            for m in [0u8, 5, 12] {
                assert_eq!(
                    yone(|y| y.vblendvps(yd, ya, yb, Ymm(m))),
                    format!("vblendvps ymm{d},ymm{a},ymm{b},ymm{m}")
                );
            }
            assert_eq!(
                yone(|y| y.vpsrld(yd, yb, 7)),
                format!("vpsrld ymm{d},ymm{b},7")
            );
            assert_eq!(
                yone(|y| y.vpslld(yd, yb, 4)),
                format!("vpslld ymm{d},ymm{b},4")
            );
            assert_eq!(
                yone(|y| y.vpsrad(yd, yb, 24)),
                format!("vpsrad ymm{d},ymm{b},18h")
            );
            assert_eq!(
                yone(|y| y.vpsrlq(yd, yb, 36)),
                format!("vpsrlq ymm{d},ymm{b},24h")
            );
            assert_eq!(
                yone(|y| y.vpsllq(yd, yb, 50)),
                format!("vpsllq ymm{d},ymm{b},32h")
            );
            assert_eq!(
                yone(|y| y.vpgatherdd(yd, R13, ya, 0x40, Ymm(15 - d))),
                format!("vpgatherdd ymm{d},[r13+ymm{a}*4+40h],ymm{}", 15 - d)
            );
            assert_eq!(
                yone(|y| y.vpgatherdd(yd, RAX, ya, -8, Ymm(15 - d))),
                format!("vpgatherdd ymm{d},[rax+ymm{a}*4-8],ymm{}", 15 - d)
            );
            assert_eq!(
                yone(|y| y.vpmovzxdq(yd, yb)),
                format!("vpmovzxdq ymm{d},xmm{b}")
            );
            // Forms of the host lane operations (`jit/src/host/x64/lanes.rs`): the 128-bit
            // four-operand blend and gather, and the one-vector-per-register steps in 256
            // bits.
            for m in [0u8, 5, 12] {
                assert_eq!(
                    yone(|y| y.vblendvps_x(yd, ya, yb, Ymm(m))),
                    format!("vblendvps xmm{d},xmm{a},xmm{b},xmm{m}")
                );
            }
            assert_eq!(
                yone(|y| y.vpgatherdd_x(yd, R13, ya, 0x40, Ymm(15 - d))),
                format!("vpgatherdd xmm{d},[r13+xmm{a}*4+40h],xmm{}", 15 - d)
            );
            assert_eq!(
                yone(|y| y.vbroadcastss_r(yd, yb)),
                format!("vbroadcastss ymm{d},xmm{b}")
            );
            assert_eq!(
                yone(|y| y.vpshufd(yd, yb, 0xB1)),
                format!("vpshufd ymm{d},ymm{b},0B1h")
            );
            assert_eq!(
                yone(|y| y.vpermq(yd, yb, 0x4E)),
                format!("vpermq ymm{d},ymm{b},4Eh")
            );
            assert_eq!(
                yone(|y| y.vblendps(yd, ya, YOp::Reg(yb), 0x5)),
                format!("vblendps ymm{d},ymm{a},ymm{b},5")
            );
            assert_eq!(
                yone(|y| y.vblendps(yd, ya, YOp::Mem(Mem::Base(R12, 0x30)), 0x9)),
                format!("vblendps ymm{d},ymm{a},[r12+30h],9")
            );
            assert_eq!(
                yone(|y| y.vblendps(yd, ya, YOp::Mem(Mem::Index(R15, RCX, 0x800)), 0x81)),
                format!("vblendps ymm{d},ymm{a},[r15+rcx+800h],81h")
            );
            assert_eq!(
                yone(|y| y.vpmovsxdq(yd, yb)),
                format!("vpmovsxdq ymm{d},xmm{b}")
            );
        }
        for (g, name) in [(RAX, "eax"), (RCX, "ecx"), (R9, "r9d"), (R12, "r12d")] {
            for m in [0u8, 7, 12] {
                assert_eq!(
                    yone(|y| y.vmovmskps(g, Ymm(m))),
                    format!("vmovmskps {name},ymm{m}")
                );
                assert_eq!(
                    yone(|y| y.vmovd_from(Ymm(m), g)),
                    format!("vmovd xmm{m},{name}")
                );
            }
        }
        for (d, s) in [(0u8, 0u8), (1, 9), (10, 2), (15, 14)] {
            assert_eq!(
                yone(|y| y.vpbroadcastd(Ymm(d), Ymm(s))),
                format!("vpbroadcastd ymm{d},xmm{s}")
            );
        }
    }

    /// The raw VEX encoder's pool operands (RIP-relative, an immediate after the
    /// displacement): the relocation points at the constant whatever follows.
    #[test]
    fn raw_vex_pool_operands() {
        let want: Vec<u8> = (1u32..=8).flat_map(|x| x.to_le_bytes()).collect();
        for (imm, form) in [
            (Some(0x3u8), "vblendps ymm9,ymm2,"),
            (None, "vbroadcastss ymm9,"),
        ] {
            let mut a = Asm::new();
            let mut y = Yasm::new(&mut a);
            let c = y.constant([1, 2, 3, 4, 5, 6, 7, 8]);
            match imm {
                Some(i) => y.vblendps(Ymm(9), Ymm(2), YOp::Mem(c), i),
                None => y.vbroadcastss(Ymm(9), c),
            }
            let (code, len) = a.finish().unwrap();
            let mut d = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
            let i = d.decode();
            assert_eq!(d.ip() as usize, len, "{form}: one instruction");
            assert!(i.is_ip_rel_memory_operand(), "{form}");
            let target = i.ip_rel_memory_address() as usize;
            assert_eq!(&code[target..target + 32], &want[..], "{form}");
            if let Some(k) = imm {
                assert_eq!(i.immediate8(), k, "{form}");
            }
            let (text, _, _) = decode({
                let mut b = Asm::new();
                b.ops.extend(code[..len].iter().copied());
                b
            });
            assert!(text[0].starts_with(form), "{}", text[0]);
        }
    }

    /// The lane-mask sequences of masked execution (divergent branches), written inline
    /// with dynasm in `batch/x64.rs`, decode to the intended forms in generated code.
    #[test]
    fn masked_execution_forms() {
        use picajit::interp::pica::float::{FloatMode, Rounding};
        use picajit::pica::bench::Workload;
        use picajit_jit::{compile, Backend, HostFeatures};
        if !HostFeatures::detect().contains(HostFeatures::AVX2) {
            return;
        }
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/branches.v.pica"
        ))
        .unwrap();
        let w = Workload::from_source("branches.v.pica", &src).unwrap();
        let mode = FloatMode::F24(Rounding::TowardZero);
        let s = compile(&w.program, mode, Backend::X64, HostFeatures::detect()).unwrap();
        let (code, len, _) = s.batch_code();
        let mut a = Asm::new();
        a.ops.extend(code[..len].iter().copied());
        let (lines, _, _) = decode(a);
        let lines: Vec<String> = lines
            .iter()
            .map(|l| l.replace("ymmword ptr ", ""))
            .collect();
        let has = |want: &str| {
            assert!(
                lines.iter().any(|l| l.starts_with(want)),
                "no `{want}…` in the masked code"
            )
        };
        // Per-lane instruction counts, the split and converged tests, parking, the
        // scheduler and the lane mask.
        for want in [
            "popcnt eax,r12d",
            "add [rbx+",
            "and eax,r12d",
            "cmp eax,r12d",
            "cmp r12d,[rbx+",
            "test [rbx+",
            "or [rbx+",
            "bts [rbx+",
            "not r12d",
            "and r12d,[rbx+",
            "mov r12d,[rbx+",
            "mov [rbx+",
            "bsf rdx,rax",
            "lea rsi,[rax-1]",
            "and rax,rsi",
            "mov [rbx+rcx*8+",
            "movzx r12d,byte ptr [rbx+rdx+",
            "mov byte ptr [rbx+rdx+",
            "lea rcx,[rcx+rdx*8]",
            "jmp rcx",
            "vmovd xmm0,r12d",
            "vpbroadcastd ymm0,xmm0",
            "vblendvps ymm12,ymm12,ymm5,ymm6",
            "vmovaps [rdi],ymm0",
        ] {
            has(want);
        }
        assert!(
            lines.iter().any(|l| l.contains(",r12b")),
            "parking ORs the lane byte"
        );
    }

    /// The geometry-shader EMIT sequence of the SoA code (lane bases, the EMIT count check,
    /// row stores through a per-register offset, flags words, the history rows and the slot
    /// bits), decoded from the code of `point_to_quad.g.pica` with its exact operands.
    #[test]
    fn geometry_emit_forms() {
        use picajit::interp::pica::float::{FloatMode, Rounding};
        use picajit::pica::bench::Workload;
        use picajit_jit::testing::batch::*;
        use picajit_jit::{compile, Backend, HostFeatures};
        if !HostFeatures::detect().contains(HostFeatures::AVX2) {
            return;
        }
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/point_to_quad.g.pica"
        ))
        .unwrap();
        let w = Workload::from_source("point_to_quad.g.pica", &src).unwrap();
        let mode = FloatMode::F24(Rounding::TowardZero);
        let s = compile(&w.program, mode, Backend::X64, HostFeatures::detect()).unwrap();
        assert_eq!(s.points_ineligibility(), None);
        let (code, len, _) = s.batch_code();
        let mut a = Asm::new();
        a.ops.extend(code[..len].iter().copied());
        let (lines, _, _) = decode(a);
        // iced's hex: upper case, `h` suffix, a leading 0 before a letter.
        let h = |v: i32| {
            let t = format!("{v:X}h");
            if t.starts_with(|c: char| c.is_ascii_alphabetic()) {
                format!("0{t}")
            } else {
                t
            }
        };
        let m = |base: &str, off: i32| format!("[{base}+{}]", h(off));
        let mut want = vec![
            format!("mov rax,{}", m("rbx", SOA_GS_ROWS_NEXT)),
            format!("mov rcx,{}", m("rbx", SOA_GS_ROW_STRIDE)),
            format!("mov rdx,{}", m("rbx", SOA_GS_FLAGS_NEXT)),
            format!("mov rsi,{}", m("rbx", SOA_GS_FLAG_STRIDE)),
            "add rax,rcx".to_string(),
            "add rdx,rsi".to_string(),
            format!("mov {},rdx", m("rbx", SOA_GS_FLAGS_NEXT)),
            format!("mov {},rax", m("rbx", SOA_GS_CURSOR)),
            format!("mov eax,{}", m("rbx", SOA_GS_EMITS)),
            format!("mov {},eax", m("rbx", SOA_GS_LEFT)),
            format!("mov eax,{}", m("rbx", SOA_GS_LEFT)),
            "sub eax,1".to_string(),
            format!("mov rdx,{}", m("rbx", SOA_GS_CURSOR)),
            format!("movsxd rax,{}", m("rbx", SOA_GS_ROW_OFF)),
            format!("movsxd rax,{}", m("rbx", SOA_GS_ROW_OFF + 4)),
            "test rax,rax".to_string(),
            "add rax,rdx".to_string(),
            "vmovups [rsi+rax],xmm7".to_string(),
            "vextractf128 xmm7,ymm3,1".to_string(),
            format!("vmovups xmm8,{}", m("rbx", SOA_GS_LAST7)),
            format!("vmovups {},xmm8", m("rbx", SOA_GS_PREV7)),
            format!("vmovups {},xmm7", m("rbx", SOA_GS_LAST7)),
            format!("vmovups {},xmm6", m("rbx", SOA_GS_LAST6)),
            // setemit 2 then emit: lane 7's o0 row into slot 2's history.
            format!("vmovups {},xmm7", m("rbx", SOA_GS_SLOT7 + 2 * 256)),
            format!("add rdx,{}", m("rbx", SOA_GS_VSIZE)),
            format!("mov rax,{}", m("rbx", SOA_GS_FLAG_CURSOR)),
            "add rax,4".to_string(),
            // Flags words: slot | primitive << 8 | winding << 16.
            "mov [rsi+rax],0".to_string(),
            "mov [rsi+rax],102h".to_string(),
            "mov [rsi+rax],10100h".to_string(),
            format!("or {},4", m("rbx", SOA_GS_SLOTS_HIT)),
            format!("cmp {},0", m("rbx", SOA_GS_LEFT)),
        ];
        for k in 0..8 {
            want.push(format!("mov rsi,{}", m("rbx", SOA_GS_LANE_ROWS + 8 * k)));
            want.push(format!("mov rsi,{}", m("rbx", SOA_GS_LANE_FLAGS + 8 * k)));
            want.push(format!("vmovups [rsi+rax],xmm{k}"));
        }
        for w in &want {
            assert!(
                lines.iter().any(|l| l == w),
                "no `{w}` in the geometry SoA code"
            );
        }
        assert!(
            lines.iter().any(|l| l.starts_with("jb "))
                && lines.iter().any(|l| l.starts_with("js ")),
            "EMIT count and row-offset branches"
        );
    }

    /// Whole SoA programs decode to valid instructions up to the constant pool.
    #[test]
    fn generated_soa_code_decodes_cleanly() {
        use picajit::interp::pica::float::{FloatMode, MaxRule, Rounding};
        use picajit_jit::iced_x86::Code;
        use picajit_jit::{compile_with, Backend, HostFeatures};
        use picajit_testkit::testgen::{generate, Options};
        if !HostFeatures::detect().contains(HostFeatures::AVX2) {
            return;
        }
        for (k, mode) in [
            FloatMode::F24(Rounding::TowardZero),
            FloatMode::F24(Rounding::NearestEven),
            FloatMode::F32,
        ]
        .into_iter()
        .enumerate()
        {
            for seed in 0..100u64 {
                let case = generate(
                    seed + 5000 + 1000 * k as u64,
                    &Options {
                        mode,
                        ..Options::default()
                    },
                );
                let rule = if seed % 2 == 1 {
                    MaxRule::NegInfSecond
                } else {
                    MaxRule::Compare
                };
                let Ok(s) = compile_with(
                    &case.program,
                    mode,
                    rule,
                    Backend::X64,
                    HostFeatures::detect(),
                ) else {
                    continue;
                };
                let (code, len, _) = s.batch_code();
                assert!(len > 0);
                let mut dec = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
                while dec.can_decode() {
                    assert_ne!(dec.decode().code(), Code::INVALID);
                }
                assert_eq!(dec.ip() as usize, len);
            }
        }
    }
}
