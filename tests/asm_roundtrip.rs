//! Round trips through the disassembler: realistic sources (`assemble(disassemble(assemble(s)))
//! == assemble(s)`, byte for byte), random programs (`disassemble_program` → `assemble` gives the
//! same words and descriptors) and random DVLE metadata.

use picajit::interp::pica::isa::{decode, encode, Instruction, Opcode};
use picajit::pica::asm::{assemble, disassemble, disassemble_program, SourceFile};
use picajit::pica::shbin::{
    Constant, Dvle, DvlpInfo, GsInputMode, Label, Output, OutputSemantic, ShaderKind, Shbin,
    Uniform,
};
use picajit_testkit::XorShift;

fn asm(files: &[(&str, &str)]) -> Shbin {
    let srcs: Vec<SourceFile> = files
        .iter()
        .map(|(n, t)| SourceFile { name: n, text: t })
        .collect();
    match assemble(&srcs) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn reassemble(text: &str) -> Shbin {
    match assemble(&[SourceFile {
        name: "disassembly",
        text,
    }]) {
        Ok(s) => s,
        Err(e) => panic!("{e}\n---\n{text}"),
    }
}

/// Assemble, disassemble, reassemble: identical bytes. Returns the disassembly.
fn round_trip(files: &[(&str, &str)]) -> String {
    let a = asm(files);
    let text = disassemble(&a);
    let b = reassemble(&text);
    assert_eq!(b, a, "round trip changed the SHBIN:\n{text}");
    assert_eq!(b.to_bytes(), a.to_bytes());
    // The bytes parse back to the same value, and disassembling the parsed file agrees.
    let parsed = Shbin::parse(&a.to_bytes()).expect("our output parses");
    assert_eq!(parsed, a);
    text
}

// ---------------------------------------------------------------------------------------------
// Corpus

/// `outpos = projection × REG`: the last step of the transforms in the sources below.
macro_rules! project {
    ($reg:literal) => {
        concat!(
            "    dp4 outpos.x, projection[0], ",
            $reg,
            "\n",
            "    dp4 outpos.y, projection[1], ",
            $reg,
            "\n",
            "    dp4 outpos.z, projection[2], ",
            $reg,
            "\n",
            "    dp4 outpos.w, projection[3], ",
            $reg,
            "\n",
        )
    };
}

/// `r0.xyz = modelview × inpos`.
macro_rules! modelview {
    () => {
        concat!(
            "    dph r0.x, inpos, modelview[0]\n",
            "    dph r0.y, inpos, modelview[1]\n",
            "    dph r0.z, inpos, modelview[2]\n",
        )
    };
}

const MVP: &str = concat!(
    "
; model-view-projection
.fvec projection[4], modelview[4]
.constf ones(1.0, 1.0, 1.0, 1.0)
.in inpos v0
.in inclr v1
.out outpos position
.out outclr color
.proc main
",
    modelview!(),
    "    mov r0.w, ones
",
    project!("r0"),
    "    mov outclr, inclr
    end
.end
"
);

const LIGHTING: &str = concat!(
    "
.fvec projection[4], modelview[4]
.fvec lightdir, halfvec, lightclr, ambient, material
.constf consts(0.0, 1.0, 0.5, -2.5e-3)
.in inpos
.in innrm
.in intex
.out outpos position
.out outclr color
.out outtex texcoord0.xy
.alias zero consts.xxxx
.alias one consts.yyyy
.proc main
",
    modelview!(),
    "    mov r0.w, one
",
    project!("r0"),
    "    dp3 r1.x, modelview[0], innrm
    dp3 r1.y, modelview[1], innrm
    dp3 r1.z, modelview[2], innrm
    dp3 r2.x, r1, r1
    rsq r2.x, r2.x
    mul r1.xyz, r2.xxxx, r1
    dp3 r3.x, lightdir, r1
    max r3.x, zero, r3
    dp3 r3.y, halfvec, r1
    max r3.y, zero, r3
    lg2 r4.x, r3.y
    mul r4.x, material.xxxx, r4
    ex2 r3.z, r4.x
    mov r5, ambient
    mad r5.xyz, r3.xxxx, lightclr, r5
    add outclr.xyz, r3.zzzz, r5
    mov outclr.w, one
    mov outtex.xy, intex
    end
.end
"
);

const SKINNING: &str = concat!(
    "
.fvec projection[4]
.fvec bones[24]
.constf consts(1.0, 0.0, 3.0, 0.0)
.in inpos v0
.in inidx v1
.in inwgt v2
.out outpos position
.out outclr color
.proc main
    mov r0.xyz, inpos
    mov r0.w, consts.x
    mova a0.xy, inidx
    dp4 r1.x, bones[a0.x], r0
    dp4 r1.y, bones[a0.x+1], r0
    dp4 r1.z, bones[a0.x+2], r0
    dp4 r2.x, bones[a0.y], r0
    dp4 r2.y, bones[a0.y+1], r0
    dp4 r2.z, bones[a0.y+2], r0
    mul r3.xyz, inwgt.xxxx, r1
    mad r3.xyz, r2, inwgt.yyyy, r3
    mov r3.w, consts.x
",
    project!("r3"),
    "    mov outclr, inwgt
    end
.end
"
);

const LOOPS: &str = "
.fvec projection[4]
.fvec lights[16]
.consti lightloop(3, 0, 2, 0)
.consti inner(1, 4, 1, 0)
.constf consts(0.0, 1.0, 0.0, 0.0)
.in inpos v0
.in innrm v1
.out outpos position
.out outclr color
.proc main
    mov r0.xyz, inpos
    mov r0.w, consts.y
    dp4 outpos.x, projection[0], r0
    dp4 outpos.y, projection[1], r0
    dp4 outpos.z, projection[2], r0
    dp4 outpos.w, projection[3], r0
    mov r5, consts.xxxx
    for lightloop
        dp3 r4.x, lights[aL], innrm
        max r4.x, consts.xxxx, r4
        mov r6, lights[aL+1]
        mad r5.xyz, r4.xxxx, r6, r5
        for inner
            add r5, consts.xxxx, r5
        .end
    .end
    for inner
        cmp r5, gt, lt, r0
        breakc cmp.x && !cmp.y
    .end
    for inner
        break
    .end
    mov outclr.xyz, r5
    mov outclr.w, consts.y
    end
.end
";

const NESTED_IFS: &str = "
.fvec params
.bool usefog, uselight
.constf k(0.5, 1.0, 2.0, 4.0)
.in inpos v0
.out outpos position
.out outclr color
.proc main
    mov outpos, inpos
    cmp params, ge, lt, inpos
    ifc cmp.x
        ifc !cmp.y
            mov r0, k.xxxx
        .else
            mov r0, k.yyyy
            ifu usefog
                mul r0, k.zzzz, r0
            .end
        .end
    .else
        ifu uselight
            mov r0, k.wwww
        .else
            ifc cmp.x || cmp.y
                mov r0, -k
            .end
        .end
    .end
    ifc cmp.x & cmp.y
        nop
    .end
    mov outclr, r0
    end
.end
";

const PROCS: &str = concat!(
    "
.fvec projection[4], tint
.bool dotint
.in inpos v0
.in inclr v1
.out outpos position
.out outclr color
.proc transform
",
    project!("inpos"),
    ".end
.proc applytint
    mul r0, tint, r0
.end
.proc main
    call transform
    mov r0, inclr
    callu dotint, applytint
    cmp tint, gt, gt, r0
    callc cmp.x && cmp.y, applytint
    mov outclr, r0
    end
.end
"
);

const JUMPS: &str = "
.fvec limit
.bool skip
.setb b1 true
.in inpos v0
.out outpos position
.proc main
    mov r0, inpos
    jmpu skip, done
    cmp limit, lt, lt, r0
    jmpc !cmp.x, done
    mov r0, limit
done:
    mov outpos, r0
    jmpu !b1, tail
    end
tail:
    end
.end
";

const GSH_POINT: &str = "
.gsh point c0
.fvec halfsize
.constf corner0(-1.0, -1.0, 0.0, 0.0)
.constf corner1(1.0, -1.0, 0.0, 0.0)
.constf corner2(-1.0, 1.0, 0.0, 0.0)
.constf corner3(1.0, 1.0, 0.0, 0.0)
.in inpos v0
.in inclr v1
.out outpos position
.out outclr color
.proc main
    setemit 0
    mov r2, corner0
    mad outpos, r2, halfsize, inpos
    mov outclr, inclr
    emit
    setemit 1
    mov r2, corner1
    mad outpos, r2, halfsize, inpos
    mov outclr, inclr
    emit
    setemit 2, prim
    mov r2, corner2
    mad outpos, r2, halfsize, inpos
    mov outclr, inclr
    emit
    setemit 0, prim inv
    mov r2, corner3
    mad outpos, r2, halfsize, inpos
    mov outclr, inclr
    emit
    end
.end
";

const GSH_VARIABLE: &str = "
.gsh variable c0 3
.fvec scale
.constf half(0.5, 0.5, 0.5, 0.5)
.out outpos position
.out outclr color
.out - dummy o6
.proc main
    mov r0, c1
    mul r0, half, r0
    setemit 0
    mov outpos, r0
    mov outclr, c2
    emit
    setemit 1
    add outpos, c3, r0
    mov outclr, c4
    emit
    setemit 2, primitive
    mad outpos, r0, scale, r0
    mov outclr, c6
    emit
    end
.end
";

const GSH_FIXED: &str = "
.gsh fixed c20 c0 3
.fvec mvp[4]
.in inpos v0
.out outpos position
.proc main
    setemit 0
    mov r0, c0
    dp4 outpos.x, mvp[0], r0
    dp4 outpos.y, mvp[1], r0
    dp4 outpos.z, mvp[2], r0
    dp4 outpos.w, mvp[3], r0
    emit
    setemit 1
    mov outpos, c1
    emit
    setemit 2, prim invert
    mov outpos, c2
    emit
    end
.end
";

const CONST_ARRAY: &str = "
.constfa table[4]
.constfa (1.0, 2.0, 3.0, 4.0)
.constfa (0.25, -0.5, 1e3, 7.5)
.end
.constfa other[]
.constfa (inf, -inf, -0.0, 0.1)
.end
.setf c10(3.0, 2.0, 1.0, 0.0)
.seti i0(10, 20, 30, 255)
.setb b3 on
.in inidx v0
.out outpos position
.proc main
    mova a0.x, inidx.x
    mov outpos, table[a0.x]
    mov r0, c10
    add outpos.w, other[0], r0
    end
.end
";

const MISC: &str = "
; various instruction forms
.fvec u[8]
.in a v0
.in b v1
.out outpos position
.out outt texcoord0
.out outv view.xyz
.out outq normalquat
.proc main
    mov r0, a
    add r1, -u[0].wzyx, r0.yyxx
    sge r2, r0, u[1]
    slt r3, u[2], r0
    sgei r4, r0, u[3]
    dst r5, r0, u[4]
    dst r5, u[4], r0
    litp r6, r0
    flr r7, r0
    rcp r8.x, r0.w
    rsq r8.y, r0.z
    min r9, u[5], r0
    max r9, r0, r9
    mad r10, r0, r1, u[6]
    mad r10, r0, u[7], r1
    mad r11, r0, r1, u[a0.y]
    mova a0.y, r0
    mova a0.xy, r0.zw
    cmp r0, eq, ne, r1
    cmp u[1], le, ge, a
    mov outpos, r0
    mov outt.xy, r1
    mov outv.xyz, r2
    mov outq, r3
    end
.end
";

const TWO_FILES_VSH: &str = concat!(
    "
.fvec projection[4]
.in inpos v0
.out outpos position
.out - dummy o7
.proc main
    call common
    mov o7, inpos
    end
.end
.proc common
",
    project!("inpos"),
    ".end
"
);

const TWO_FILES_GSH: &str = "
.gsh point c8
.fvec size
.out outpos position
.entry gmain
.proc gmain
    setemit 0
    mov outpos, v0
    emit
    setemit 1
    add outpos, size, v0
    emit
    setemit 2, prim
    add outpos, -size, v0
    emit
    end
.end
";

const LIBRARY: &str = "
.nodvle
.proc shared_normalize
    dp3 r15.w, r8, r8
    rsq r15.w, r15.w
    mul r8.xyz, r15.wwww, r8
.end
";

const USES_LIBRARY: &str = "
.in n v0
.out o position
.proc main
    mov r8, n
    call shared_normalize
    mov o, r8
    end
.end
";

#[test]
fn corpus_round_trips() {
    for (name, src) in [
        ("mvp", MVP),
        ("lighting", LIGHTING),
        ("skinning", SKINNING),
        ("loops", LOOPS),
        ("nested_ifs", NESTED_IFS),
        ("procs", PROCS),
        ("jumps", JUMPS),
        ("gsh_point", GSH_POINT),
        ("gsh_variable", GSH_VARIABLE),
        ("gsh_fixed", GSH_FIXED),
        ("const_array", CONST_ARRAY),
        ("misc", MISC),
    ] {
        let text = round_trip(&[(name, src)]);
        // The corpus only uses picasso features, so the disassembly must stay in plain picasso
        // syntax (no explicit descriptor table, no raw forms).
        assert!(!text.contains(".opdesc"), "{name}:\n{text}");
        assert!(!text.contains(".word"), "{name}:\n{text}");
        assert!(!text.contains('@'), "{name}:\n{text}");
        assert!(!text.contains(".uniform"), "{name}:\n{text}");
        assert!(!text.contains(".output"), "{name}:\n{text}");
    }
}

#[test]
fn multi_file_round_trips() {
    let text = round_trip(&[("a.vsh", TWO_FILES_VSH), ("b.gsh", TWO_FILES_GSH)]);
    assert!(text.contains(".unit"), "{text}");
    round_trip(&[("lib.vsh", LIBRARY), ("main.vsh", USES_LIBRARY)]);
    round_trip(&[
        ("main.vsh", USES_LIBRARY),
        ("lib.vsh", LIBRARY),
        (
            "mvp.vsh",
            &MVP.replace("main", "main2")
                .replace(".proc main2", ".entry main2\n.proc main2"),
        ),
    ]);
}

#[test]
fn disassembly_is_stable() {
    // Disassembling the reassembled file gives the same text.
    for src in [MVP, NESTED_IFS, LOOPS, PROCS, JUMPS] {
        let a = asm(&[("x", src)]);
        let t1 = disassemble(&a);
        let t2 = disassemble(&reassemble(&t1));
        assert_eq!(t1, t2);
    }
}

// ---------------------------------------------------------------------------------------------
// Random programs

/// A random word: fully random, or a valid instruction (unused bits clear), sometimes with
/// flow targets and descriptor indices kept in range.
fn random_word(rng: &mut XorShift, len: usize, ndesc: usize) -> u32 {
    let w = rng.next() as u32;
    if rng.chance(15) {
        return w;
    }
    let Ok(mut w) = encode(&decode(w)) else {
        return w;
    };
    let op = Opcode::from_code((w >> 26) as u8);
    if rng.chance(70) && len > 0 {
        match decode(w) {
            Instruction::Call { .. }
            | Instruction::CallC { .. }
            | Instruction::CallU { .. }
            | Instruction::IfC { .. }
            | Instruction::IfU { .. }
            | Instruction::Loop { .. }
            | Instruction::JmpC { .. }
            | Instruction::JmpU { .. } => {
                let dest = rng.below(len as u64 + 1) as u32;
                w = (w & !(0xFFF << 10)) | dest << 10;
                if !matches!(op, Some(Opcode::Loop | Opcode::Jmpc | Opcode::Jmpu)) {
                    let num = rng.below(8) as u32;
                    w = (w & !0xFF) | num;
                }
            }
            _ => {}
        }
    }
    if ndesc > 0 && rng.chance(80) {
        match op {
            Some(Opcode::Mad | Opcode::Madi) => {
                w = (w & !0x1F) | rng.below(ndesc.min(32) as u64) as u32;
            }
            Some(o) if decode(w).desc().is_some() && o != Opcode::Mad => {
                w = (w & !0x7F) | rng.below(ndesc as u64) as u32;
            }
            _ => {}
        }
    }
    w
}

fn random_desc(rng: &mut XorShift) -> u64 {
    match rng.below(10) {
        0 => rng.next(),
        1 => rng.next() & 0xFFFF_FFFF,
        _ => rng.next() & 0x7FFF_FFFF,
    }
}

#[test]
fn random_programs_round_trip() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for iter in 0..400 {
        let len = match rng.below(4) {
            0 => rng.below(4) as usize,
            1 => rng.below(40) as usize,
            2 => rng.below(200) as usize,
            _ => rng.below(700) as usize,
        };
        let ndesc = rng.below(129) as usize;
        let descs: Vec<u64> = (0..ndesc).map(|_| random_desc(&mut rng)).collect();
        let code: Vec<u32> = (0..len)
            .map(|_| random_word(&mut rng, len, ndesc))
            .collect();
        let entry = rng.below(len as u64 + 1) as u32;
        let kind = if rng.chance(50) {
            ShaderKind::Vertex
        } else {
            ShaderKind::Geometry
        };
        let text = disassemble_program(&code, &descs, entry, kind);
        let back = reassemble(&text);
        assert_eq!(back.code, code, "iteration {iter}:\n{text}");
        assert_eq!(back.opdescs, descs, "iteration {iter}:\n{text}");
        assert_eq!(back.dvles.len(), 1);
        assert_eq!(back.dvles[0].main, entry);
        assert_eq!(back.dvles[0].kind, kind);
        assert!(!text.starts_with("; WARNING"), "iteration {iter}:\n{text}");
    }
}

/// Structured random programs: random but well-nested blocks, so that the structured levels
/// (not only the raw fallback) get exercised.
#[test]
fn random_structured_programs_round_trip() {
    let mut rng = XorShift(0x1234_5678_9ABC_DEF1);
    for iter in 0..200 {
        let mut src = String::from(
            ".fvec u[8]\n.bool f[4]\n.ivec n[2]\n.in a v0\n.in b v1\n.out o position\n",
        );
        let nprocs = 1 + rng.below(3);
        let mut labels = 0;
        for p in 0..nprocs {
            src.push_str(&format!(".proc p{p}\n"));
            gen_block(&mut rng, &mut src, 0, p, &mut labels);
            src.push_str(".end\n");
        }
        src.push_str(".proc main\n");
        for p in 0..nprocs {
            if rng.chance(60) {
                src.push_str(&format!("call p{p}\n"));
            }
        }
        src.push_str("mov o, r0\nend\n");
        if rng.chance(30) {
            src.push_str(&format!("lbl{labels}:\n"));
        }
        src.push_str(".end\n");
        let a = match assemble(&[SourceFile {
            name: "gen",
            text: &src,
        }]) {
            Ok(a) => a,
            Err(e) => panic!("iteration {iter}: {e}\n{src}"),
        };
        let text = disassemble(&a);
        let b = reassemble(&text);
        assert_eq!(b, a, "iteration {iter}:\n{src}\n---\n{text}");
        assert!(
            !text.contains(".opdesc"),
            "iteration {iter}:\n{src}\n---\n{text}"
        );
    }
}

fn gen_block(rng: &mut XorShift, src: &mut String, depth: u32, proc_id: u64, labels: &mut u64) {
    let n = rng.below(5);
    for _ in 0..n {
        // Labels anywhere (also right before `.else`/`.end`, where padding NOPs go) and jumps
        // back to them.
        if rng.chance(15) {
            src.push_str(&format!("lbl{}:\n", *labels));
            *labels += 1;
        }
        if *labels > 0 && rng.chance(15) {
            let l = rng.below(*labels);
            if rng.chance(50) {
                src.push_str(&format!("jmpc !cmp.y, lbl{l}\n"));
            } else {
                src.push_str(&format!("jmpu !f[2], lbl{l}\n"));
            }
        }
        match rng.below(12) {
            0 if depth < 4 => {
                src.push_str("ifc cmp.x && !cmp.y\n");
                gen_block(rng, src, depth + 1, proc_id, labels);
                if rng.chance(50) {
                    src.push_str(".else\n");
                    gen_block(rng, src, depth + 1, proc_id, labels);
                }
                src.push_str(".end\n");
            }
            1 if depth < 4 => {
                src.push_str(&format!("ifu f[{}]\n", rng.below(4)));
                gen_block(rng, src, depth + 1, proc_id, labels);
                src.push_str(".end\n");
            }
            2 if depth < 4 => {
                src.push_str(&format!("for n[{}]\n", rng.below(2)));
                gen_block(rng, src, depth + 1, proc_id, labels);
                if rng.chance(30) {
                    src.push_str("breakc cmp.y\n");
                }
                src.push_str(".end\n");
            }
            3 if proc_id > 0 => src.push_str(&format!("call p{}\n", rng.below(proc_id))),
            4 => src.push_str("cmp r1, lt, ge, r2\n"),
            5 => src.push_str(&format!(
                "mad r{}.xy, r1, u[{}], r2.zw\n",
                rng.below(8),
                rng.below(8)
            )),
            6 => src.push_str(&format!(
                "add r{}, -u[{}].yx, r3\n",
                rng.below(8),
                rng.below(8)
            )),
            7 => src.push_str("nop\n"),
            8 => src.push_str(&format!(
                "dp4 r{}.{}, u[aL+{}], a\n",
                rng.below(8),
                ["x", "y", "zw"][rng.below(3) as usize],
                rng.below(4)
            )),
            9 if proc_id > 0 => src.push_str(&format!("callu f[1], p{}\n", rng.below(proc_id))),
            _ => src.push_str(&format!(
                "mul r{}.{}, b.wzyx, r{}\n",
                rng.below(8),
                ["x", "yz", "w"][rng.below(3) as usize],
                rng.below(8)
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random metadata (what official tools may write and picasso never does)

#[test]
fn random_metadata_round_trips() {
    let mut rng = XorShift(0xDEAD_BEEF_CAFE_F00D);
    for iter in 0..150 {
        let len = rng.below(30) as usize;
        let ndesc = rng.below(20) as usize;
        let descs: Vec<u64> = (0..ndesc).map(|_| random_desc(&mut rng)).collect();
        let code: Vec<u32> = (0..len)
            .map(|_| random_word(&mut rng, len, ndesc))
            .collect();
        let ndvle = rng.below(4) as usize;
        let mut dvles = Vec::new();
        for _ in 0..ndvle {
            let kind = if rng.chance(50) {
                ShaderKind::Vertex
            } else {
                ShaderKind::Geometry
            };
            let mut d = Dvle::new(kind);
            if rng.chance(30) {
                d.version = rng.below(0x10000) as u16;
            }
            d.merge_outmaps = rng.chance(20);
            d.main = rng.below(len as u64 + 3) as u32;
            d.endmain = rng.below(len as u64 + 3) as u32;
            d.input_mask = rng.next() as u16;
            d.output_mask = rng.next() as u16;
            let mode = match rng.below(3) {
                0 => GsInputMode::Point,
                1 => GsInputMode::Variable {
                    first_uniform: rng.next() as u8,
                    full_vertices: rng.next() as u8,
                },
                _ => GsInputMode::Fixed {
                    first_uniform: rng.next() as u8,
                    vertices: rng.next() as u8,
                },
            };
            d.set_gs_mode(mode);
            if rng.chance(50) {
                d.gs_raw = (rng.next() as u32).to_le_bytes();
                if kind == ShaderKind::Geometry {
                    d.gs_raw[0] = rng.below(3) as u8;
                    d.gs_mode = picajit::pica::shbin::decode_gs_mode(d.gs_raw).unwrap();
                } else {
                    d.gs_mode = picajit::pica::shbin::decode_gs_mode(d.gs_raw).unwrap_or_default();
                }
            }
            for _ in 0..rng.below(6) {
                let mut payload = [0u8; 16];
                for b in payload.iter_mut() {
                    *b = if rng.chance(70) { 0 } else { rng.next() as u8 };
                }
                let ty = rng.below(4) as u16;
                let reg = if rng.chance(80) {
                    rng.below(20) as u16
                } else {
                    rng.next() as u16
                };
                d.constants.push(Constant::from_raw(ty, reg, payload));
            }
            for _ in 0..rng.below(3) {
                d.labels.push(Label {
                    id: rng.next() as u16,
                    unknown: rng.next() as u16,
                    offset: rng.next() as u32,
                    size: rng.next() as u32,
                    name: format!("lbl{}", rng.below(100)),
                });
            }
            for _ in 0..rng.below(8) {
                let mut o = Output::from_raw(rng.next() & 0x0000_000F_001F_000F);
                if rng.chance(10) {
                    o = Output::from_raw(rng.next());
                }
                d.outputs.push(o);
            }
            let names = [
                "pos", "mvp", "a.b", "_hidden", "x y", "c5", "light$", "weird\"q", "v",
            ];
            for _ in 0..rng.below(6) {
                let first = rng.below(0x90) as u16;
                let last = first + rng.below(4) as u16;
                d.uniforms.push(Uniform {
                    name: names[rng.below(names.len() as u64) as usize].to_string(),
                    first,
                    last,
                });
            }
            if rng.chance(50) {
                d.uniforms.sort_by_key(|u| u.first);
            }
            dvles.push(d);
        }
        let dvlp = DvlpInfo {
            version: if rng.chance(30) { rng.next() as u32 } else { 0 },
            field_18: if rng.chance(20) {
                Some(rng.next() as u32)
            } else {
                None
            },
            field_1c: if rng.chance(20) { rng.next() as u32 } else { 0 },
            filename_symbols: if rng.chance(20) {
                (0..rng.below(9)).map(|_| rng.next() as u8).collect()
            } else {
                Vec::new()
            },
        };
        let shbin = Shbin {
            code,
            opdescs: descs,
            dvlp,
            dvles,
        };
        // Normalise through the binary format first (e.g. field_18 equal to picasso's value).
        let shbin = Shbin::parse(&shbin.to_bytes()).expect("valid file");
        let text = disassemble(&shbin);
        if shbin.dvles.is_empty() {
            // No shader in the file: its source is a .nodvle library, which the assembler
            // refuses (as picasso does) instead of writing a SHBIN without a DVLE.
            let e = assemble(&[SourceFile {
                name: "disassembly",
                text: &text,
            }])
            .unwrap_err();
            assert!(e.message.contains("no DVLE"), "iteration {iter}: {e}");
            continue;
        }
        let back = reassemble(&text);
        assert_eq!(back, shbin, "iteration {iter}:\n{text}");
        assert_eq!(back.to_bytes(), shbin.to_bytes());
    }
}

#[test]
fn output_semantics_are_named() {
    // Sanity check on the corpus: every picasso semantic survives.
    let a = asm(&[("misc", MISC)]);
    let sems: Vec<OutputSemantic> = a.dvles[0].outputs.iter().map(|o| o.semantic).collect();
    assert_eq!(
        sems,
        vec![
            OutputSemantic::Position,
            OutputSemantic::TexCoord0,
            OutputSemantic::View,
            OutputSemantic::NormalQuat
        ]
    );
}

#[test]
fn deeply_nested_unclosable_blocks_are_fast() {
    // 1000 nested IFCs whose bodies all end in a CALL with no padding NOP after it: none can be
    // written as a block (the assembler would pad), so each is re-read word by word by its
    // parent. This must not take exponential time.
    let n = 2000u32;
    let mut code = Vec::new();
    for i in 0..n / 2 {
        code.push(0x28 << 26 | 0b1110 << 22 | (n - i) << 10);
    }
    for _ in 0..n / 2 {
        code.push(0x24 << 26 | 1);
    }
    let text = disassemble_program(&code, &[], 0, ShaderKind::Geometry);
    let back = reassemble(&text);
    assert_eq!(back.code, code);
}

#[test]
fn disassembler_fallbacks() {
    // A descriptor table with an unused entry cannot come from picasso's sharing: the table is
    // written out and instructions are pinned, but the structure stays.
    let mut s = asm(&[("x", NESTED_IFS)]);
    s.opdescs.push(0x1234);
    let text = disassemble(&s);
    assert!(text.contains(".opdesc 0x00001234"), "{text}");
    assert!(text.contains("desc="), "{text}");
    assert!(text.contains(".else"), "{text}");
    assert_eq!(reassemble(&text), s);

    // Unused bits and undefined opcodes become .word; everything else stays readable.
    let code = vec![
        0x4C00_0000 | 0x10 << 21 | 0x11 << 12, // mov r0, r1 (desc 0)
        0x8800_0001,                           // end with a stray bit
        0x4000_0000,                           // undefined opcode 0x10
        0x8800_0000,                           // end
    ];
    let text = disassemble_program(&code, &[0x36F], 0, ShaderKind::Vertex);
    assert!(text.contains(".word 0x88000001"), "{text}");
    assert!(text.contains(".word 0x40000000"), "{text}");
    assert!(text.contains("mov r0, r1"), "{text}");
    assert_eq!(reassemble(&text).code, code);

    // A call whose range overlaps another procedure is written with a raw target; a loop whose
    // end lies outside its procedure is written raw too.
    let code = vec![
        0x9000_0000 | 1 << 10 | 2, // call 0x001, 2
        0x8800_0000,               // end
        0x9000_0000 | 2 << 10 | 2, // call 0x002, 2 (overlaps the first call's range)
        0xA400_0000 | 9 << 10,     // loop i0 to 0x009, beyond the code
        0x8800_0000,
    ];
    let text = disassemble_program(&code, &[], 0, ShaderKind::Vertex);
    assert!(text.contains("@0x"), "{text}");
    assert_eq!(reassemble(&text).code, code);

    // Conditions picasso cannot spell use the raw number.
    let code = vec![0xB000_0000 | 0b1010 << 22 | 1 << 10, 0x8800_0000]; // jmpc x-only, refy=0
    let text = disassemble_program(&code, &[], 0, ShaderKind::Vertex);
    assert!(text.contains("jmpc 10, l_001"), "{text}");
    assert_eq!(reassemble(&text).code, code);
}

#[test]
fn long_vertex_programs_go_to_a_geometry_unit() {
    // More than 512 words cannot sit in a vertex unit: the code goes into a .nodvle unit
    // marked as a geometry shader, and the vertex DVLE refers to it.
    let code: Vec<u32> = (0..700)
        .map(|i| if i == 699 { 0x8800_0000 } else { 0x8400_0000 })
        .collect();
    let text = disassemble_program(&code, &[], 0, ShaderKind::Vertex);
    assert!(text.contains(".nodvle"), "{text}");
    let back = reassemble(&text);
    assert_eq!(back.code, code);
    assert_eq!(back.dvles.len(), 1);
    assert_eq!(back.dvles[0].kind, ShaderKind::Vertex);
}
