//! Assembler tests. Expected words are built here from the documented bit layouts of the
//! instruction words and operand descriptors (not with the ISA crate's encoder), so the
//! assembler is checked against the documentation rather than against itself.

use picajit::pica::asm::{assemble, assemble_with_warnings, AsmError, SourceFile};
use picajit::pica::shbin::{
    Constant, GsInputMode, Output, OutputSemantic, ShaderKind, Shbin, Uniform,
};
use picajit_testkit::XorShift;

// ---------------------------------------------------------------------------------------------
// Helpers

fn asm_files(files: &[(&str, &str)]) -> Result<Shbin, AsmError> {
    let srcs: Vec<SourceFile> = files
        .iter()
        .map(|(n, t)| SourceFile { name: n, text: t })
        .collect();
    assemble(&srcs)
}

fn asm(src: &str) -> Shbin {
    match asm_files(&[("test.vsh", src)]) {
        Ok(s) => s,
        Err(e) => panic!("{e}\n{src}"),
    }
}

/// Assemble instructions inside `.proc main` with some useful declarations.
fn body(lines: &str) -> Shbin {
    asm(&format!(".proc main\n{lines}\n.end\n"))
}

fn err(src: &str) -> AsmError {
    match asm_files(&[("bad.vsh", src)]) {
        Ok(_) => panic!("expected an error:\n{src}"),
        Err(e) => e,
    }
}

fn warnings(src: &str) -> Vec<String> {
    match assemble_with_warnings(&[SourceFile {
        name: "w.vsh",
        text: src,
    }]) {
        Ok((_, w)) => w.iter().map(|w| w.to_string()).collect(),
        Err(e) => panic!("{e:?}"),
    }
}

// Register fields.
fn v(n: u32) -> u32 {
    n
}
fn r(n: u32) -> u32 {
    0x10 + n
}
fn c(n: u32) -> u32 {
    0x20 + n
}
fn o(n: u32) -> u32 {
    n
}

/// Component selector: lane x in bits 7-6 … lane w in bits 1-0.
fn sel(s: &str) -> u64 {
    let comp = |ch: char| match ch {
        'x' => 0,
        'y' => 1,
        'z' => 2,
        _ => 3,
    };
    s.chars()
        .enumerate()
        .fold(0, |acc, (i, ch)| acc | comp(ch) << (6 - 2 * i))
}
const ID: &str = "xyzw";

/// Operand descriptor: mask (bit 3 = x), then (negate, selector) per source.
fn desc(mask: u64, srcs: &[(bool, &str)]) -> u64 {
    let mut d = mask;
    for (i, (neg, s)) in srcs.iter().enumerate() {
        d |= (*neg as u64) << (4 + 9 * i);
        d |= sel(s) << (5 + 9 * i);
    }
    d
}

fn fmt1(op: u32, dst: u32, src1: u32, idx: u32, src2: u32, d: u32) -> u32 {
    op << 26 | dst << 21 | idx << 19 | src1 << 12 | src2 << 7 | d
}
fn fmt1i(op: u32, dst: u32, src1: u32, idx: u32, src2: u32, d: u32) -> u32 {
    op << 26 | dst << 21 | idx << 19 | src1 << 14 | src2 << 7 | d
}
fn fmt1c(src1: u32, idx: u32, cmpx: u32, cmpy: u32, src2: u32, d: u32) -> u32 {
    0x2E << 26 | cmpx << 24 | cmpy << 21 | idx << 19 | src1 << 12 | src2 << 7 | d
}
fn mad(dst: u32, s1: u32, s2: u32, s3: u32, idx: u32, d: u32) -> u32 {
    0b111 << 29 | dst << 24 | idx << 22 | s1 << 17 | s2 << 10 | s3 << 5 | d
}
fn madi(dst: u32, s1: u32, s2: u32, s3: u32, idx: u32, d: u32) -> u32 {
    0b110 << 29 | dst << 24 | idx << 22 | s1 << 17 | s2 << 12 | s3 << 5 | d
}
fn flow(op: u32, cond: u32, dest: u32, num: u32) -> u32 {
    op << 26 | cond << 22 | dest << 10 | num
}
const NOP: u32 = 0x21 << 26;
const END: u32 = 0x22 << 26;

// ---------------------------------------------------------------------------------------------
// Instruction forms

#[test]
fn format1_words() {
    let s =
        body("add r1, c2, r3\nmul o2.xy, -v4.yxzw, r5.w\ndp4 r0.x, c10[a0.x], v1\nmax r2, r1, v0");
    assert_eq!(
        s.code,
        vec![
            fmt1(0x00, r(1), c(2), 0, r(3), 0),
            fmt1(0x08, o(2), v(4), 0, r(5), 1),
            fmt1(0x02, r(0), c(10), 1, v(1), 2),
            fmt1(0x0C, r(2), r(1), 0, v(0), 0),
        ]
    );
    assert_eq!(
        s.opdescs,
        vec![
            desc(0xF, &[(false, ID), (false, ID)]),
            desc(0b1100, &[(true, "yxzw"), (false, "wwww")]),
            desc(0b1000, &[(false, ID), (false, ID)]),
        ]
    );
}

#[test]
fn every_arithmetic_opcode() {
    // Fields only (descriptor index masked off): opcode, destination, sources, index.
    let s = body(
        "dp3 r2.xyz, c1, v3\ndph r0, c1, r2\ndst r1, v0, r2\nmin o1, v2, r1\nsge r0, c3, v0\nslt r0, v1, c2\nex2 r0, r1.y\nlg2 r0.w, c2\nrsq r3, r4\nlitp r5, v5\nflr r6, c7[aL]\nmova a0.x, c9",
    );
    let fields: Vec<u32> = s.code.iter().map(|w| w & !0x7F).collect();
    assert_eq!(
        fields,
        vec![
            fmt1(0x01, r(2), c(1), 0, v(3), 0),
            fmt1(0x03, r(0), c(1), 0, r(2), 0),
            fmt1(0x04, r(1), v(0), 0, r(2), 0),
            fmt1(0x0D, o(1), v(2), 0, r(1), 0),
            fmt1(0x09, r(0), c(3), 0, v(0), 0),
            fmt1i(0x1B, r(0), v(1), 0, c(2), 0),
            fmt1(0x05, r(0), r(1), 0, 0, 0),
            fmt1(0x06, r(0), c(2), 0, 0, 0),
            fmt1(0x0F, r(3), r(4), 0, 0, 0),
            fmt1(0x07, r(5), v(5), 0, 0, 0),
            fmt1(0x0B, r(6), c(7), 3, 0, 0),
            fmt1(0x12, 0, c(9), 0, 0, 0),
        ]
    );
    // Every word points at a descriptor equal to what its operands ask for.
    let want = [
        desc(0b1110, &[(false, ID), (false, ID)]),
        desc(0xF, &[(false, ID), (false, ID)]),
        desc(0xF, &[(false, ID), (false, ID)]),
        desc(0xF, &[(false, ID), (false, ID)]),
        desc(0xF, &[(false, ID), (false, ID)]),
        desc(0xF, &[(false, ID), (false, ID)]),
        desc(0xF, &[(false, "yyyy")]),
        desc(0b0001, &[(false, ID)]),
        desc(0xF, &[(false, ID)]),
        desc(0xF, &[(false, ID)]),
        desc(0xF, &[(false, ID)]),
        desc(0b1000, &[(false, ID)]),
    ];
    for (i, (w, d)) in s.code.iter().zip(want).enumerate() {
        let entry = s.opdescs[(w & 0x7F) as usize];
        // Compare the fields this instruction has (destination mask, and sources 1-2).
        let fields = if i >= 6 {
            0x1FF << 4 | 0xF
        } else {
            0x3FFFF << 4 | 0xF
        };
        let fields = if i == 7 {
            fields & !(0x3F << 5)
        } else {
            fields
        }; // lg2 reads only .x
        let fields = if i == 6 || i == 8 {
            fields & !(0x3F << 5)
        } else {
            fields
        }; // ex2, rsq too
        assert_eq!(entry & fields, d & fields, "instruction {i}");
    }
}

#[test]
fn unary_mova_cmp_words() {
    let s = body(
        "mov o0.xy, -c3.yxzw\nrcp r1.x, r2.w\nmova a0.y, r1.x\nmova a0.xy, c7[aL]\ncmp c1, lt, ge, r2\ncmp r3.y, eq, ne, v0\nlitp r4, r4\nflr r5, v2",
    );
    assert_eq!(
        s.code,
        vec![
            fmt1(0x13, o(0), c(3), 0, 0, 0),
            fmt1(0x0E, r(1), r(2), 0, 0, 1),
            fmt1(0x12, 0, r(1), 0, 0, 2),
            fmt1(0x12, 0, c(7), 3, 0, 3),
            fmt1c(c(1), 0, 2, 5, r(2), 3),
            fmt1c(r(3), 0, 0, 1, v(0), 4),
            fmt1(0x07, r(4), r(4), 0, 0, 5),
            fmt1(0x0B, r(5), v(2), 0, 0, 5),
        ]
    );
    assert_eq!(s.opdescs[0], desc(0b1100, &[(true, "yxzw")]));
    assert_eq!(s.opdescs[1], desc(0b1000, &[(false, "wwww")]));
    assert_eq!(s.opdescs[2], desc(0b0100, &[(false, "xxxx")]));
    // CMP ignores the destination mask and lanes z/w of source 1, so `cmp c1, lt, ge, r2`
    // shares the MOVA's descriptor and adds its source 2 bits to it.
    assert_eq!(s.opdescs[3], desc(0b1100, &[(false, ID), (false, ID)]));
    // A CMP's own descriptor has a zero mask (picasso's convention).
    assert_eq!(s.opdescs[4], desc(0, &[(false, "yyyy"), (false, ID)]));
    // LITP and FLR (all lanes written) share one.
    assert_eq!(s.opdescs[5], desc(0xF, &[(false, ID)]));
    assert_eq!(s.opdescs.len(), 6);
}

#[test]
fn i_form_selection() {
    // Format 1i is chosen only for dph/dst/sge/slt with a narrow first and a c second source.
    let s = body(
        "dph r0, v1, c5\ndst r0, r1, c5\nsge r0, r1, c5\nslt r0, r1, c5[a0.y]\ndph r0, c5, v1\nsge r0, r1, r2\nsgei o1, c0, r1\ndphi r0, r1, r2",
    );
    assert_eq!(
        s.code,
        vec![
            fmt1i(0x18, r(0), v(1), 0, c(5), 0),
            fmt1i(0x19, r(0), r(1), 0, c(5), 0),
            fmt1i(0x1A, r(0), r(1), 0, c(5), 0),
            fmt1i(0x1B, r(0), r(1), 2, c(5), 0),
            fmt1(0x03, r(0), c(5), 0, v(1), 0),
            fmt1(0x09, r(0), r(1), 0, r(2), 0),
            // Explicit I mnemonics are synonyms: the operands decide.
            fmt1(0x09, o(1), c(0), 0, r(1), 0),
            fmt1(0x03, r(0), r(1), 0, r(2), 0),
        ]
    );
    // No commutation for the other opcodes.
    let e = err(".proc main\nadd r0, r1, c5\n.end");
    assert!(e.message.contains("source 2"), "{e}");
    assert_eq!((e.line, e.column), (2, 13));
}

#[test]
fn madi_selection() {
    let s = body(
        "mad r0, r1, c2, r3\nmad r0, r1, r2, c3\nmad r0, r1, r2, r3\nmad r0, v1, r2, c3[a0.x]\nmad r0, r1, c2[aL], r3\nmad r0, r1, r2, r3[a0.x]\nmadi r0, r1, c2, r3",
    );
    assert_eq!(
        s.code,
        vec![
            mad(r(0), r(1), c(2), r(3), 0, 0),
            madi(r(0), r(1), r(2), c(3), 0, 0),
            mad(r(0), r(1), r(2), r(3), 0, 0),
            madi(r(0), v(1), r(2), c(3), 1, 0),
            mad(r(0), r(1), c(2), r(3), 3, 0),
            // src3 indexed and src2 not: MADI even though src3 is not a c register.
            madi(r(0), r(1), r(2), r(3), 1, 0),
            mad(r(0), r(1), c(2), r(3), 0, 0),
        ]
    );
    assert_eq!(
        s.opdescs,
        vec![desc(0xF, &[(false, ID), (false, ID), (false, ID)])]
    );
    assert!(err(".proc main\nmad r0, c1, r2, r3\n.end")
        .message
        .contains("source 1"));
    assert!(err(".proc main\nmad r0, r1, c2, c3\n.end")
        .message
        .contains("source 3"));
}

#[test]
fn zero_operand_and_setemit_words() {
    let s = body(
        "nop\nend\nemit\nsetemit 2, prim inv\nsetemit 1, invert\nsetemit 0, primitive\nsetemit 3",
    );
    assert_eq!(
        s.code,
        vec![
            NOP,
            END,
            0x2A << 26,
            0x2B << 26 | 2 << 24 | 1 << 23 | 1 << 22,
            0x2B << 26 | 1 << 24 | 1 << 22,
            0x2B << 26 | 1 << 23,
            0x2B << 26 | 3 << 24,
        ]
    );
    // setemit makes the file a geometry shader (picasso's legacy behaviour).
    assert_eq!(s.dvles[0].kind, ShaderKind::Geometry);
    let s = asm(".proc main\nfor i0\nbreak\n.end\nend\n.end");
    assert_eq!(s.code[1], 0x20 << 26);
}

#[test]
fn conditions() {
    let s = body(
        "breakc cmp.x\nbreakc !cmp.x\nbreakc cmp.y\nbreakc !cmp.y\nbreakc cmp.x && cmp.y\nbreakc !cmp.x & cmp.y\nbreakc cmp.x || !cmp.y\nbreakc !!cmp.y | cmp.x\nbreakc 5\nbreakc CMP.X",
    );
    // bits 22-23 CONDOP, 24 REFY, 25 REFX.
    let c = |op: u32, refx: u32, refy: u32| 0x23 << 26 | refx << 25 | refy << 24 | op << 22;
    assert_eq!(
        s.code,
        vec![
            c(2, 1, 1),
            c(2, 0, 1),
            c(3, 1, 1),
            c(3, 1, 0),
            c(1, 1, 1),
            c(1, 0, 1),
            c(0, 1, 0),
            c(0, 1, 1),
            0x23 << 26 | 5 << 22,
            c(2, 1, 1),
        ]
    );
    let e = err(".proc main\nbreakc cmp.x && !cmp.x\n.end");
    assert!(e.message.contains("twice"), "{e}");
    assert_eq!((e.line, e.column), (2, 17));
}

#[test]
fn procedures_calls_and_jumps() {
    let src = "
.bool b
.proc f
    mov r0, r1
    mov r1, r0
.end
.proc main
    call f
    callc cmp.x, f
    callu b, f
    jmpc !cmp.y, there
    jmpu !b, there
    jmpu b, there
there:
    end
.end
.proc g
    nop
.end";
    let s = asm(src);
    assert_eq!(s.code[2], flow(0x24, 0, 0, 2));
    assert_eq!(s.code[3], flow(0x25, 0b1110, 0, 2));
    assert_eq!(s.code[4], flow(0x26, 0, 0, 2));
    assert_eq!(s.code[5], flow(0x2C, 0b1011, 8, 0));
    assert_eq!(s.code[6], flow(0x2D, 0, 8, 1));
    assert_eq!(s.code[7], flow(0x2D, 0, 8, 0));
    assert_eq!((s.dvles[0].main, s.dvles[0].endmain), (2, 9));
    // Procedures are shared between files; calls are resolved after the last one.
    let s = asm_files(&[
        ("a.vsh", ".proc main\ncall helper\nend\n.end"),
        ("b.vsh", ".nodvle\n.proc helper\nmov r0, r1\n.end"),
    ])
    .unwrap();
    assert_eq!(s.dvles.len(), 1);
    assert_eq!(s.code[0], flow(0x24, 0, 2, 1));
    // Labels are per file.
    let e = asm_files(&[
        ("a.vsh", ".proc main\nl:\njmpc cmp.x, l\nend\n.end"),
        ("b.vsh", ".proc other\njmpc cmp.x, l\n.end\n.entry other"),
    ])
    .unwrap_err();
    assert_eq!(e.file, "b.vsh");
    assert!(e.message.contains("label `l`"));
}

#[test]
fn blocks_if_else_for() {
    let src = "
.ivec n
.bool b
.proc main
    ifc cmp.x
        mov r0, r1
        mov r1, r0
    .else
        mov r2, r1
    .end
    ifu b
        mov r0, r1
    .end
    for n
        mov r0, r1
        mov r1, r0
    .end
    end
.end";
    let s = asm(src);
    assert_eq!(s.code[0], flow(0x28, 0b1110, 3, 1));
    assert_eq!(s.code[4], flow(0x27, 0, 6, 0));
    assert_eq!(s.code[6], 0x29 << 26 | 8 << 10);
    assert_eq!(s.code.len(), 10);
    // iN goes to bits 22-23, bN to 22-25.
    let s = body("for i2\nnop\n.end\nifu b13\nnop\n.end\nend");
    assert_eq!(s.code[0], 0x29 << 26 | 2 << 22 | 1 << 10);
    assert_eq!(s.code[2], 0x27 << 26 | 13 << 22 | 4 << 10);
}

#[test]
fn padding_nops() {
    // FOR whose last instruction is a call: a NOP becomes the loop's last word.
    let s = asm(".proc f\nnop\n.end\n.proc main\nfor i0\ncall f\n.end\nend\n.end");
    assert_eq!(
        s.code,
        vec![NOP, 0x29 << 26 | 3 << 10, flow(0x24, 0, 0, 1), NOP, END]
    );
    // Closing a block right after another block closes.
    let s = body("ifc cmp.x\nifc cmp.y\nnop\n.end\n.end\nend");
    assert_eq!(
        s.code,
        vec![
            flow(0x28, 0b1110, 4, 0),
            flow(0x28, 0b1111, 3, 0),
            NOP,
            NOP,
            END
        ]
    );
    // Empty bodies.
    let s = body("ifc cmp.x\n.end\nfor i1\n.end\nend");
    assert_eq!(
        s.code,
        vec![
            flow(0x28, 0b1110, 2, 0),
            NOP,
            0x29 << 26 | 1 << 22 | 3 << 10,
            NOP,
            END
        ]
    );
    let s = asm(".proc empty\n.end\n.proc main\nend\n.end");
    assert_eq!(s.code, vec![NOP, END]);
    // .else after a jump, and FOR ending with breakc or break.
    let s = body("l:\nifc cmp.x\njmpc cmp.y, l\n.else\nnop\n.end\nfor i0\nbreakc cmp.x\n.end\nfor i0\nbreak\n.end\nend");
    assert_eq!(s.code[0], flow(0x28, 0b1110, 3, 1));
    assert_eq!(s.code[2], NOP);
    assert_eq!(s.code[5..7], [flow(0x23, 0b1110, 0, 0), NOP]);
    assert_eq!(s.code[8..10], [0x20 << 26, NOP]);
    // A procedure ending with a call, and an if body ending in a nested for.
    let s = asm(".proc f\nnop\n.end\n.proc main\nifc cmp.x\nfor i0\nnop\n.end\n.end\ncall f\n.end");
    assert_eq!(
        s.code,
        vec![
            NOP,
            flow(0x28, 0b1110, 5, 0),
            0x29 << 26 | 3 << 10,
            NOP,
            NOP,
            flow(0x24, 0, 0, 1),
            NOP
        ]
    );
    // No padding where none is needed: IF ending with breakc is fine, FOR ending with an
    // if-block gets one.
    let s = body("ifc cmp.x\nbreakc cmp.y\n.end\nend");
    assert_eq!(s.code.len(), 3);
    // .nonop (picajit's equivalent of picasso --no-nop) warns instead.
    let src = ".nonop\n.proc main\nfor i0\ncall main\n.end\nend\n.end";
    let w = warnings(src);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("w.vsh:5:1: warning: a padding NOP"), "{w:?}");
    let s = asm(src);
    assert_eq!(s.code, vec![0x29 << 26 | 1 << 10, flow(0x24, 0, 0, 3), END]);
}

#[test]
fn descriptor_sharing() {
    // Lanes that an opcode ignores do not prevent sharing: rcp reads only .x; add r0.x reads
    // only lane x of each source; dp3 ignores w.
    let s = body(
        "rcp r0.x, r1.xyzw\nrcp r0.x, r1.xzzz\nadd r0.x, r1.xyzw, r2.xwww\nadd r0.x, r1.xzyw, r2.xyzw\ndp3 r0.x, r1.xyzw, r2.xyzw\ndp3 r0.x, r1.xyzx, r2.xyzy\ndp4 r0.x, r1.xyzx, r2",
    );
    // All seven agree on every bit some earlier user cared about, so they share one entry;
    // each user fills in the lanes it cares about (picasso's merging), the rest keep the first
    // user's bits (rcp's xyzw for source 1, zero = .x for source 2).
    assert!(s.code.iter().all(|w| w & 0x7F == 0));
    assert_eq!(
        s.opdescs,
        vec![desc(0b1000, &[(false, "xyzx"), (false, "xyzw")])]
    );
    // Differences in a lane that is read keep descriptors apart.
    let s =
        body("add r0.x, r1.y, r2\nadd r0.x, r1.x, r2\nadd r0.x, -r1.x, r2\nadd r0.xy, r1.x, r2");
    assert_eq!(s.opdescs.len(), 4);
    // CMP does not care about the destination mask.
    let s = body("mov r0.x, r1\ncmp r1, eq, eq, r2");
    assert_eq!(s.opdescs.len(), 1);
    assert_eq!(s.code[1] & 0x7F, 0);
}

#[test]
fn mad_descriptors_move_to_low_slots() {
    // 40 distinct non-MAD descriptors: xy masks (0-15), zw masks (16-31), x (32-35), y (36-39).
    let l = ["x", "y", "z", "w"];
    let mut lines = String::new();
    for a in l {
        for b in l {
            lines.push_str(&format!("mov r0.xy, r1.{a}{b}\n"));
        }
    }
    for a in l {
        for b in l {
            lines.push_str(&format!("mov r0.zw, r1.xx{a}{b}\n"));
        }
    }
    for a in l {
        lines.push_str(&format!("mov r0.x, r1.{a}\n"));
    }
    for a in l {
        lines.push_str(&format!("mov r0.y, r1.x{a}\n"));
    }
    let base = body(&lines);
    assert_eq!(base.opdescs.len(), 40);
    // A MAD whose descriptor matches entry 34 (`mov r0.x, r1.z`): MAD can only reach 0-31, so
    // entry 34 is swapped with the first slot not used by a MAD (0) and every earlier word
    // that referred to either is renumbered.
    lines.push_str("mad r0.x, r1.z, r2, r3\n");
    // A MAD with a new descriptor (entry 40): swapped into slot 1.
    lines.push_str("mad r0.w, r1, r2, r3\n");
    let s = body(&lines);
    assert_eq!(s.opdescs.len(), 41);
    assert_eq!(s.code[40], mad(r(0), r(1), r(2), r(3), 0, 0));
    assert_eq!(s.code[41], mad(r(0), r(1), r(2), r(3), 0, 1));
    assert_eq!(s.code[34] & 0x7F, 0);
    assert_eq!(s.code[0] & 0x7F, 34);
    assert_eq!(s.code[1] & 0x7F, 40);
    assert_eq!(s.opdescs[0], desc(0b1000, &[(false, "zzzz")]));
    assert_eq!(s.opdescs[34], desc(0b1100, &[(false, "xxxx")]));
    assert_eq!(
        s.opdescs[1],
        desc(0b0001, &[(false, ID), (false, ID), (false, ID)])
    );
    assert_eq!(s.opdescs[40], desc(0b1100, &[(false, "xyyy")]));
    // Every other word still points at the descriptor it had.
    for i in 2..40 {
        if i != 34 {
            assert_eq!(s.code[i], base.code[i]);
        }
    }
}

#[test]
fn too_many_descriptors() {
    let mut lines = String::new();
    let letters = ['x', 'y', 'z', 'w'];
    for a in letters {
        for b in letters {
            for c2 in letters {
                for d in ['x', 'y', 'z'] {
                    lines.push_str(&format!("mov r0, r1.{a}{b}{c2}{d}\n"));
                }
            }
        }
    }
    let e = err(&format!(".proc main\n{lines}.end"));
    assert!(e.message.contains("too many operand descriptors"), "{e}");
}

#[test]
fn relative_addressing() {
    let s = body("mov r0, c10[a0.x+2]\nmov r0, c10[a0.y]\nmov r0, c10[aL - 3]\nmov r0, c10[a0]\nmov r0, c10[a1+1]\nmov r0, c10[a2]\nmov r0, c10[lcnt+4]\nmov r0, c10[AL]");
    let f = |reg: u32, idx: u32| fmt1(0x13, r(0), c(reg), idx, 0, 0);
    assert_eq!(
        s.code,
        vec![
            f(12, 1),
            f(10, 2),
            f(7, 3),
            f(10, 1),
            f(11, 2),
            f(10, 3),
            f(14, 3),
            f(10, 3)
        ]
    );
    let e = err(".proc main\nadd r0, r1, r2[a0.x]\n.end");
    assert!(e.message.contains("relative addressing"), "{e}");
    let e = err(".alias x c4[a0.x]");
    assert!(e.message.contains("index register"), "{e}");
}

#[test]
fn aliases_compose() {
    let src = "
.alias a r1.wzyx
.alias na -r2.yyzz
.alias m c8[2]
.proc main
    mov r0, a.xxyw
    mov r0, -na
    mov r0, na.wx
    mov r0, m[1].y
    mov a.xy, r3
.end";
    let s = asm(src);
    assert_eq!(s.code[0], fmt1(0x13, r(0), r(1), 0, 0, 0));
    assert_eq!(s.opdescs[0], desc(0xF, &[(false, "wwzx")]));
    assert_eq!(s.opdescs[1], desc(0xF, &[(false, "yyzz")]));
    assert_eq!(s.opdescs[2], desc(0xF, &[(true, "zyyy")]));
    assert_eq!(s.code[3], fmt1(0x13, r(0), c(11), 0, 0, 3));
    // Destination through an alias: `a.xy` = lanes w, z of r1.
    assert_eq!(s.code[4], fmt1(0x13, r(1), r(3), 0, 0, 4));
    assert_eq!(s.opdescs[4] & 0xF, 0b0011);
}

// ---------------------------------------------------------------------------------------------
// Directives

#[test]
fn uniforms_and_constants_allocation() {
    let src = "
.fvec proj[4], scale
.ivec loops[2]
.bool flags[3], _private, on$off
.constf k1(1.0, 2.0, 3.0, 4.0)
.constf k2(0.5, 0.0, -0.0, 1e-3)
.consti ki(1, 2, 255, -1)
.setf c50(1, 2, 3, 4)
.seti i1(0, 0, 0, 1)
.setb b7 true
.setb b8 off
.in pos
.in nrm v3
.in tex
.proc main
    mov r0, proj[3]
    mov r0, k2
    end
.end";
    let s = asm(src);
    let d = &s.dvles[0];
    assert_eq!(
        d.uniforms,
        vec![
            Uniform {
                name: "pos".into(),
                first: 0,
                last: 0
            },
            Uniform {
                name: "tex".into(),
                first: 1,
                last: 1
            },
            Uniform {
                name: "nrm".into(),
                first: 3,
                last: 3
            },
            Uniform {
                name: "proj".into(),
                first: 0x10,
                last: 0x13
            },
            Uniform {
                name: "scale".into(),
                first: 0x14,
                last: 0x14
            },
            Uniform {
                name: "loops".into(),
                first: 0x70,
                last: 0x71
            },
            Uniform {
                name: "flags".into(),
                first: 0x78,
                last: 0x7A
            },
            Uniform {
                name: "on.off".into(),
                first: 0x7C,
                last: 0x7C
            },
        ]
    );
    assert_eq!(d.input_mask, 0b1011);
    assert_eq!(
        d.constants,
        vec![
            Constant::FVec {
                reg: 95,
                value: [0x3F0000, 0x400000, 0x408000, 0x410000]
            },
            Constant::FVec {
                reg: 94,
                value: [0x3E0000, 0, 0x800000, 0x35_0624]
            },
            Constant::IVec {
                reg: 3,
                value: [1, 2, 255, 255]
            },
            Constant::FVec {
                reg: 50,
                value: [0x3F0000, 0x400000, 0x408000, 0x410000]
            },
            Constant::IVec {
                reg: 1,
                value: [0, 0, 0, 1]
            },
            Constant::Bool {
                reg: 7,
                value: true
            },
            Constant::Bool {
                reg: 8,
                value: false
            },
        ]
    );
    assert_eq!(s.code[0], fmt1(0x13, r(0), c(3), 0, 0, 0));
    assert_eq!(s.code[1], fmt1(0x13, r(0), c(94), 0, 0, 0));
}

#[test]
fn float_conversion_truncates() {
    // 0.1 = 0x3DCCCCCD in f32; truncating 7 mantissa bits gives mantissa 0x9999, exponent
    // 123 - 64 = 59.
    let s = asm(".constf k(0.1, -2.5, nan, inf)\n.constf k2(-inf, 1e30, 1e-30, 3.4e38)\n.proc main\nend\n.end");
    assert_eq!(
        s.dvles[0].constants[0],
        Constant::FVec {
            reg: 95,
            value: [59 << 16 | 0x9999, 0xC0_4000, 0x7F_FFFF, 0x7F_0000]
        }
    );
    assert_eq!(
        s.dvles[0].constants[1],
        Constant::FVec {
            reg: 94,
            value: [0xFF_0000, 0x7F_0000, 0, 0x7F_0000]
        }
    );
    let s = asm(".setf c0(f24(0x123456), 2., .5f, 1E2)\n.proc main\nend\n.end");
    assert_eq!(
        s.dvles[0].constants[0],
        Constant::FVec {
            reg: 0,
            value: [0x123456, 0x40_0000, 0x3E_0000, 0x45_9000]
        }
    );
}

#[test]
fn constant_arrays() {
    let src = "
.constf first(1, 1, 1, 1)
.constfa arr[3]
.constfa (1.0, 2.0, 3.0, 4.0)
.constfa (5.0, 6.0, 7.0, 8.0)
.end
.constfa open[]
.constfa (0.5, 0.5, 0.5, 0.5)
.end
.proc main
    mov r0, arr[1]
    mov r0, open
    end
.end";
    let s = asm(src);
    let regs: Vec<u16> = s.dvles[0].constants.iter().map(|c| c.reg()).collect();
    assert_eq!(regs, vec![95, 92, 93, 94, 91]);
    assert_eq!(
        s.dvles[0].constants[3],
        Constant::FVec {
            reg: 94,
            value: [0; 4]
        }
    );
    assert_eq!(s.code[0], fmt1(0x13, r(0), c(93), 0, 0, 0));
    assert_eq!(s.code[1], fmt1(0x13, r(0), c(91), 0, 0, 0));
    let e = err(".constfa a[1]\n.constfa (1,1,1,1)\n.constfa (2,2,2,2)\n.end");
    assert!(e.message.contains("too many elements"));
    assert_eq!(e.line, 3);
    assert!(err(".constfa a[]\n.end").message.contains("no elements"));
}

#[test]
fn outputs() {
    let src = "
.out pos position
.out clr color.xyz
.out - texcoord0 o4.xy
.out t1 tcoord1 o5
.out - dummy o9
.out q nquat
.proc main
    mov pos, r0
    mov q, r0
    end
.end";
    let s = asm(src);
    let d = &s.dvles[0];
    assert_eq!(
        d.outputs,
        vec![
            Output::new(OutputSemantic::Position, 0, 0xF),
            Output::new(OutputSemantic::Color, 1, 0b0111),
            Output::new(OutputSemantic::TexCoord0, 4, 0b0011),
            Output::new(OutputSemantic::TexCoord1, 5, 0xF),
            Output::new(OutputSemantic::Dummy, 9, 0xF),
            Output::new(OutputSemantic::NormalQuat, 2, 0xF),
        ]
    );
    assert_eq!(d.outputs[1].to_raw(), 0x0000_0007_0001_0002);
    assert_eq!(d.output_mask, 0b10_0011_0111);
    assert!(!d.merge_outmaps);
    assert_eq!(s.code[1], fmt1(0x13, o(2), r(0), 0, 0, 0));
    // Errors: o7+ only as dummy, overlap, bad type.
    assert!(err(".out - position o8").message.contains("dummy"));
    let e = err(".out - color o1.xy\n.out - texcoord0 o1.yz");
    assert!(e.message.contains("overlaps"), "{e}");
    // picasso's bogus o8-o15 collision is gone.
    asm(".out - dummy o8\n.out - dummy o12.x\n.out - dummy o12.y\n.proc main\nend\n.end");
    assert!(err(".out - colour").message.contains("invalid output type"));
}

#[test]
fn geometry_shader_modes() {
    let s = asm(
        ".gsh point c4\n.fvec a, b[2]\n.out - dummy o6\n.out p position\n.proc main\nend\n.end",
    );
    let d = &s.dvles[0];
    assert_eq!(d.kind, ShaderKind::Geometry);
    assert_eq!(d.gs_mode, GsInputMode::Point);
    assert_eq!(d.gs_raw, [0, 0, 0, 0]);
    assert!(d.merge_outmaps);
    assert_eq!(d.uniforms[0].first, 0x10 + 4);
    let s = asm(".gsh variable c16 5\n.proc main\nend\n.end");
    assert_eq!(s.dvles[0].gs_raw, [1, 0, 5, 0]);
    assert_eq!(
        s.dvles[0].gs_mode,
        GsInputMode::Variable {
            first_uniform: 0,
            full_vertices: 5
        }
    );
    let s = asm(".gsh fixed c20 c2 3\n.proc main\nend\n.end");
    assert_eq!(s.dvles[0].gs_raw, [2, 2, 0, 3]);
    let s = asm(".gsh\n.out - dummy o6\n.proc main\nend\n.end");
    assert_eq!(s.dvles[0].kind, ShaderKind::Geometry);
    assert!(
        !s.dvles[0].merge_outmaps,
        "legacy .gsh shares the vertex space: no merge"
    );
    assert!(err(".gsh fixed c2 c20 3").message.contains("below"));
    assert!(err(".fvec x\n.gsh point c0").message.contains("before"));
    let e = err(".gsh point c0\n.proc main\nmov o7, r0\n.end");
    assert!(e.message.contains("o0-o6"), "{e}");
    // Separate uniform spaces: the vertex file's uniforms start at c0, the geometry file's
    // at its first free register; bool b15 is reserved in geometry space.
    let s = asm_files(&[
        ("v.vsh", ".fvec a[2]\n.proc main\nend\n.end"),
        (
            "g.gsh",
            ".gsh point c10\n.fvec b\n.bool f[15]\n.entry gm\n.proc gm\nend\n.end",
        ),
    ])
    .unwrap();
    assert_eq!(s.dvles[0].uniforms[0].first, 0x10);
    assert_eq!(s.dvles[1].uniforms[0].first, 0x10 + 10);
    assert!(asm_files(&[(
        "g.gsh",
        ".gsh point c10\n.bool f[16]\n.proc main\nend\n.end"
    )])
    .is_err());
}

#[test]
fn shared_uniform_space_across_files() {
    let s = asm_files(&[
        ("a.vsh", ".fvec m[4], x\n.proc main\nend\n.end"),
        ("b.vsh", ".fvec y\n.fvec m[4]\n.entry main"),
    ])
    .unwrap();
    assert_eq!(
        s.dvles[1].uniforms[0],
        Uniform {
            name: "m".into(),
            first: 0x10,
            last: 0x13
        }
    );
    assert_eq!(
        s.dvles[1].uniforms[1],
        Uniform {
            name: "y".into(),
            first: 0x15,
            last: 0x15
        }
    );
    let e = asm_files(&[
        ("a", ".fvec m[4]\n.proc main\nend\n.end"),
        ("b", ".fvec m[2]\n.entry main"),
    ])
    .unwrap_err();
    assert!(e.message.contains("size 4"), "{e}");
}

#[test]
fn entry_and_nodvle() {
    let s = asm(".entry start\n.proc helper\nnop\n.end\n.proc start\nend\n.end");
    assert_eq!((s.dvles[0].main, s.dvles[0].endmain), (1, 2));
    let e = err(".proc helper\nnop\n.end");
    assert!(e.message.contains("`main`"), "{e}");
    // A source whose only file says .nodvle would be a SHBIN without a shader: an error, as
    // in picasso. So is an empty source.
    let e = asm_files(&[("lib", ".nodvle\n.proc main\nend\n.end")]).unwrap_err();
    assert!(e.message.contains("no DVLE"), "{e}");
    assert_eq!((e.file.as_str(), e.line, e.column), ("lib", 1, 1));
    for empty in ["", "\n\n", "; only a comment\n"] {
        let e = asm_files(&[("empty", empty)]).unwrap_err();
        assert!(e.message.contains("nothing to assemble"), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// picasso quirks we do not copy

#[test]
fn divergences_from_picasso() {
    // v15 is a valid input register.
    assert_eq!(
        body("mov r0, v15").code[0],
        fmt1(0x13, r(0), v(15), 0, 0, 0)
    );
    asm(".in last v15\n.proc main\nend\n.end");
    // Negative static offsets are computed, and range-checked.
    assert_eq!(
        body("mov r0, c8[-2]").code[0],
        fmt1(0x13, r(0), c(6), 0, 0, 0)
    );
    assert_eq!(
        body("mov r0, r4[-2]").code[0],
        fmt1(0x13, r(0), r(2), 0, 0, 0)
    );
    let e = err(".proc main\nmov r0, r1[-2]\n.end");
    assert!(e.message.contains("outside r0-r15"), "{e}");
    assert!(err(".proc main\nmov r0, r15[1]\n.end")
        .message
        .contains("outside"));
    // Upper-case register names mean what they say.
    assert_eq!(
        body("MOV R0, C5.XY").code[0],
        fmt1(0x13, r(0), c(5), 0, 0, 0)
    );
    assert_eq!(body("mov O1, V2").code[0], fmt1(0x13, o(1), v(2), 0, 0, 0));
    // o as a source / v as a destination are errors, not silent aliases.
    let e = err(".proc main\nmov r0, o1\n.end");
    assert!(e.message.contains("output"), "{e}");
    let e = err(".proc main\nmov v2, r0\n.end");
    assert!(e.message.contains("input"), "{e}");
    // Float constants are literals or constant expressions (see
    // `constant_expressions_are_evaluated_and_picasso_readings_warned`); hex is not a float.
    assert!(err(".constf k(0x10, 0, 0, 0)")
        .message
        .contains("float literal"));
    // i4-i7 do not exist.
    let e = err(".proc main\nfor i4\n.end\n.end");
    assert!(e.message.contains("does not exist"), "{e}");
    // A negated destination is an error.
    assert!(err(".proc main\nmov -r0, r1\n.end")
        .message
        .contains("negated"));
    // Leading zeros are decimal.
    assert_eq!(body("setemit 02").code[0], 0x2B << 26 | 2 << 24);
}

#[test]
fn out_of_order_mask_warns() {
    let w = warnings(".proc main\nmov r0.yx, r1\nmov r0.xy, r1\nend\n.end");
    assert_eq!(w.len(), 1);
    assert!(w[0].starts_with("w.vsh:2:8: warning:"), "{w:?}");
    assert!(w[0].contains(".xy"));
    let s = body("mov r0.yx, r1");
    assert_eq!(s.opdescs[0] & 0xF, 0b1100);
}

#[test]
fn input_register_combination() {
    let e = err(".proc main\nadd r0, v0, v1\n.end");
    assert!(e.message.contains("only one input"), "{e}");
    body("add r0, v1, v1");
    assert!(err(".proc main\nmad r0, v0, r1, v2\n.end")
        .message
        .contains("only one input"));
}

// ---------------------------------------------------------------------------------------------
// Errors and their positions

#[test]
fn error_positions() {
    let cases: &[(&str, u32, u32, &str)] = &[
        ("mov r0, r1", 1, 1, "outside a .proc"),
        (
            ".proc main\n  mov r0, q7\n.end",
            2,
            11,
            "unknown register or alias `q7`",
        ),
        (
            ".proc main\n\tfoo r0, r1\n.end",
            2,
            2,
            "unknown instruction",
        ),
        (".proc main\nmov r0, r1.xk\n.end", 2, 12, "invalid swizzle"),
        (".proc main\nmov r0, c96\n.end", 2, 9, "does not exist"),
        (".proc main\nmov r0\n.end", 2, 7, "missing operand"),
        (".proc main\nmov r0, r1, r2\n.end", 2, 11, "unexpected"),
        (".bogus", 1, 2, "unknown directive"),
        (".proc main\n.end\n.end", 3, 1, "without an open block"),
        (".proc main\nnop", 1, 1, "not closed"),
        (".proc main\n.else\n.end", 2, 1, ".else"),
        (".fvec a\n.fvec a", 2, 7, "already used"),
        (".alias r3 r4", 1, 8, "register name"),
        (".proc main\njmpc cmp.x, nowhere\n.end", 2, 13, "nowhere"),
        (".proc main\ncall nowhere\n.end", 2, 6, "nowhere"),
        (
            ".proc main\nnop\n.end\n.proc main\n.end",
            4,
            7,
            "already exists",
        ),
        (".setb b1 maybe", 1, 10, "invalid boolean"),
        (".proc main\nsetemit 4\n.end", 2, 9, "out of range"),
        (
            ".proc main\nsetemit 1, sideways\n.end",
            2,
            12,
            "unknown setemit flag",
        ),
        (".proc main\nifu !b0\n.end\n.end", 2, 5, "cannot invert"),
        (
            ".proc main\ncmp r0, eq, bad, r1\n.end",
            2,
            13,
            "comparison operator",
        ),
        (".proc main\nmova a3, r0\n.end", 2, 6, "mova destination"),
        (".proc main\nmova a0.z, r0\n.end", 2, 9, "a0.x and a0.y"),
        (".in x o0", 1, 7, "input register"),
        (".constf k(1, 2, 3)", 1, 18, "expected `,`"),
        ("\"unterminated", 1, 1, "unterminated"),
        ("mov r0, r1 ` ", 1, 12, "unexpected character"),
        (".proc main\n  add r0, r1, c5\n.end", 2, 15, "c5"),
        (
            ".proc main\nmov r0, r1 desc=3\n.end",
            2,
            12,
            "explicit descriptor table",
        ),
    ];
    for &(src, line, col, msg) in cases {
        let e = err(src);
        assert_eq!(e.file, "bad.vsh");
        assert!(
            e.message.contains(msg),
            "{src:?}: expected {msg:?} in {:?}",
            e.message
        );
        assert_eq!((e.line, e.column), (line, col), "{src:?}: {e}");
        assert_eq!(
            e.to_string(),
            format!("bad.vsh:{line}:{col}: error: {}", e.message)
        );
    }
}

#[test]
fn several_errors_are_collected() {
    let src = ".proc main\nmov r0, q1\nmov r0, q2\nfoo\nend\n.end";
    let errs = assemble_with_warnings(&[SourceFile {
        name: "m.vsh",
        text: src,
    }])
    .unwrap_err();
    let lines: Vec<u32> = errs.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 3, 4]);
}

#[test]
fn line_markers_change_positions() {
    let src = "# 40 \"orig.vsh\"\n.proc main\nmov r0, q1\n.end";
    let e = err(src);
    assert_eq!((e.file.as_str(), e.line, e.column), ("orig.vsh", 41, 9));
}

// ---------------------------------------------------------------------------------------------
// picajit extensions

#[test]
fn word_opdesc_and_pins() {
    let src = "
.opdesc 0x0000036F, 0x00000368
.opdesc 0x123456789ABCDEF0, 0x6C36F
.proc main
    .word 0xDEADBEEF, 0x44000000
    mov r0, r1 desc=0
    mov r0.x, r1 desc=1
    mov r0.x, r1
    mov r0.y, r1
    dphi r0, r1, r2 desc=3
    mad r0, r1, r2, r3 desc=5
    end
.end";
    let s = asm(src);
    assert_eq!(
        s.opdescs,
        vec![
            0x36F,
            0x368,
            0x1234_5678_9ABC_DEF0,
            0x6C36F,
            desc(0b0100, &[(false, ID)])
        ]
    );
    assert_eq!(s.code[0..2], [0xDEAD_BEEF, 0x4400_0000]);
    assert_eq!(s.code[2], fmt1(0x13, r(0), r(1), 0, 0, 0));
    assert_eq!(s.code[3], fmt1(0x13, r(0), r(1), 0, 0, 1));
    // Unpinned: first matching entry (entry 0 has mask xyzw; entry 1 matches .x) or a new one.
    assert_eq!(s.code[4], fmt1(0x13, r(0), r(1), 0, 0, 1));
    assert_eq!(s.code[5], fmt1(0x13, r(0), r(1), 0, 0, 4));
    // Pinned instructions are literal: dphi stays DPHI with a narrow-narrow pair.
    assert_eq!(s.code[6], fmt1i(0x18, r(0), r(1), 0, r(2), 3));
    // Pins beyond the table are allowed (the hardware reads whatever is there).
    assert_eq!(s.code[7], mad(r(0), r(1), r(2), r(3), 0, 5));
    // A pin must agree with its descriptor on the bits the hardware reads.
    let e = err(".opdesc 0x36F\n.proc main\nmov r0.x, r1.y desc=0\n.end");
    assert!(e.message.contains("do not match descriptor 0"), "{e}");
    // ... but not on the ones it ignores (rcp reads .x only).
    asm(".opdesc 0x36F\n.proc main\nrcp r0, r1.xxxx desc=0\nend\n.end");
    assert!(
        err(".opdesc 0x36F\n.proc main\nmad r0, r1, r2, r3 desc=40\n.end")
            .message
            .contains("out of range")
    );
}

#[test]
fn raw_flow_targets() {
    let s = body(
        "call @0x012, 3\ncallc 6, @0x20, 2\ncallu b1, @0, 255\nifc cmp.x, @0x010, 4\nifu b2, @5, 0\nfor i1, @0x7\njmpc cmp.y, @0xFFF\njmpu !b3, @1\nend",
    );
    assert_eq!(
        s.code,
        vec![
            flow(0x24, 0, 0x12, 3),
            flow(0x25, 6, 0x20, 2),
            flow(0x26, 1, 0, 255),
            flow(0x28, 0b1110, 0x10, 4),
            flow(0x27, 2, 5, 0),
            0x29 << 26 | 1 << 22 | 7 << 10,
            flow(0x2C, 0b1111, 0xFFF, 0),
            flow(0x2D, 3, 1, 1),
            END,
        ]
    );
    assert!(err(".proc main\ncall @5\n.end").message.contains("length"));
    assert!(err(".proc main\njmpc cmp.x, @0x1000\n.end")
        .message
        .contains("out of range"));
}

#[test]
fn units_and_metadata_directives() {
    let src = r#"
.dvlp version=0x1002 field1c=7 symbols="00616200"
.proc main
    end
.end
.unit
.dvleheader kind=geometry version=0 merge=1 inputs=0x8001 outputs=0x00ff gs=0x03000102
.entry @0x000, @0x001
.uniform "a.b c", c4, c7
.uniform "odd", 0x74, 0x90
.output 0xAB0000070003000A
.constraw 7, 3, 1, 2, 3, 4
.dvlelabel 1, 2, 0x10, 0xffffffff, "lbl"
"#;
    let s = asm(src);
    assert_eq!(s.dvles.len(), 2);
    assert_eq!(s.dvlp.version, 0x1002);
    assert_eq!(s.dvlp.field_1c, 7);
    assert_eq!(s.dvlp.filename_symbols, vec![0, 0x61, 0x62, 0]);
    let d = &s.dvles[1];
    assert_eq!(d.kind, ShaderKind::Geometry);
    assert_eq!(
        (d.version, d.merge_outmaps, d.input_mask, d.output_mask),
        (0, true, 0x8001, 0xFF)
    );
    assert_eq!(d.gs_raw, [2, 1, 0, 3]);
    assert_eq!(
        d.gs_mode,
        GsInputMode::Fixed {
            first_uniform: 1,
            vertices: 3
        }
    );
    assert_eq!((d.main, d.endmain), (0, 1));
    assert_eq!(
        d.uniforms[0],
        Uniform {
            name: "a.b c".into(),
            first: 0x14,
            last: 0x17
        }
    );
    assert_eq!(
        d.uniforms[1],
        Uniform {
            name: "odd".into(),
            first: 0x74,
            last: 0x90
        }
    );
    assert_eq!(d.outputs[0].to_raw(), 0xAB00_0007_0003_000A);
    let mut payload = [0u8; 16];
    payload[0] = 1;
    payload[4] = 2;
    payload[8] = 3;
    payload[12] = 4;
    assert_eq!(d.constants[0], Constant::from_raw(7, 3, payload));
    assert_eq!(d.labels[0].name, "lbl");
    // The bytes survive the container.
    assert_eq!(Shbin::parse(&s.to_bytes()).unwrap(), s);
}

// ---------------------------------------------------------------------------------------------
// Robustness

#[test]
fn never_panics_on_garbage() {
    let mut rng = XorShift(0x243F_6A88_85A3_08D3);
    let pieces = [
        ".proc",
        "main",
        ".end",
        ".else",
        "ifc",
        "for",
        "i0",
        "cmp.x",
        "&&",
        "!",
        "mov",
        "r0",
        "c95",
        "[",
        "]",
        "a0.x",
        "+",
        "-",
        ".",
        "xyzw",
        ",",
        "(",
        ")",
        "1.5",
        "0x",
        "@",
        "desc=",
        "99999999999999999999",
        ".constfa",
        ".gsh",
        "fixed",
        ".out",
        ".in",
        "v15",
        "o16",
        ":",
        "\"",
        "\n",
        "\n",
        "\n",
        ";",
        "#",
        "mad",
        "call",
        ".word",
        ".opdesc",
        ".unit",
        "é",
        "\t",
        ".entry",
        "setemit",
        "f24(",
        "nan",
        "-inf",
        ".dvleheader",
        "gs=",
        "=",
    ];
    for _ in 0..3000 {
        let n = rng.next() % 30;
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(pieces[(rng.next() % pieces.len() as u64) as usize]);
            if rng.next() % 3 == 0 {
                s.push(' ');
            }
        }
        let _ = assemble_with_warnings(&[SourceFile {
            name: "f",
            text: &s,
        }]);
    }
    // Random bytes as text.
    for _ in 0..500 {
        let bytes: Vec<u8> = (0..(rng.next() % 200)).map(|_| rng.next() as u8).collect();
        let s = String::from_utf8_lossy(&bytes);
        let _ = assemble_with_warnings(&[SourceFile {
            name: "f",
            text: &s,
        }]);
    }
}

#[test]
fn constant_expressions_are_evaluated_and_picasso_readings_warned() {
    let src = ".constf k(1.0/128.0, (2.0 + 1.0) * 0.5, -0.25, 1.0f)\n\
               .consti n(2*8, 010, 0x10, -(3))\n\
               .setf c3(1.0/4.0 - 1.0, 0.5, 0, 0)\n\
               .proc main\nend\n.end";
    let (s, warns) = assemble_with_warnings(&[SourceFile {
        name: "k.vsh",
        text: src,
    }])
    .unwrap();
    let f = |bits: u32| picajit::interp::pica::float::F24::from_bits(bits).to_f32();
    let consts = &s.dvles[0].constants;
    let fvec = consts
        .iter()
        .find_map(|c| match c {
            Constant::FVec { reg: 0x5F, value } => Some(value.map(f)),
            _ => None,
        })
        .unwrap();
    assert_eq!(fvec, [1.0 / 128.0, 1.5, -0.25, 1.0]);
    let ivec = consts
        .iter()
        .find_map(|c| match c {
            Constant::IVec { reg: 3, value } => Some(*value),
            _ => None,
        })
        .unwrap();
    assert_eq!(ivec, [16, 10, 16, (-3i8) as u8]);
    let c3 = consts
        .iter()
        .find_map(|c| match c {
            Constant::FVec { reg: 3, value } => Some(value.map(f)),
            _ => None,
        })
        .unwrap();
    assert_eq!(c3, [-0.75, 0.5, 0.0, 0.0]);
    // A warning wherever picasso's atof/strtoll reads the text differently, and only there.
    let w: Vec<String> = warns.iter().map(|w| w.to_string()).collect();
    let has = |col: u32, text: &str| {
        warns
            .iter()
            .any(|w| w.column == col && w.message.contains(text))
    };
    assert!(
        has(
            11,
            "`1.0/128.0` is 0.0078125 here, but picasso reads it with atof as 1"
        ),
        "{w:?}"
    );
    assert!(has(22, "picasso reads it with atof as 0"), "{w:?}");
    assert!(
        has(
            11,
            "`2*8` is 16 here, but picasso reads it with strtoll as 2"
        ),
        "{w:?}"
    );
    assert!(
        has(
            16,
            "`010` is 10 here, but picasso reads it with strtoll as 8"
        ),
        "{w:?}"
    );
    assert_eq!(
        warns.iter().filter(|w| w.line == 1).count(),
        2,
        "-0.25 and 1.0f read the same in picasso: {w:?}"
    );
    assert_eq!(warns.iter().filter(|w| w.line == 2).count(), 3, "{w:?}");
    assert_eq!(warns.iter().filter(|w| w.line == 3).count(), 1, "{w:?}");
}

#[test]
fn register_names_as_input_names() {
    // picasso accepts `.in v0`: the name is the register's own, also in the uniform table.
    let s = asm(".in v0\n.in nrm\n.in v3 v3\n.proc main\nmov r0, v0\nmov r1, nrm\nend\n.end");
    let d = &s.dvles[0];
    assert_eq!(d.input_mask, 0b1011);
    let names: Vec<(&str, u16)> = d
        .uniforms
        .iter()
        .map(|u| (u.name.as_str(), u.first))
        .collect();
    assert_eq!(names, [("v0", 0), ("nrm", 1), ("v3", 3)]);
    assert_eq!(s.code[1] >> 12 & 0x7F, 1, "nrm is v1");
    // A register name cannot name another register, nor be declared twice.
    let e = err(".in v0 v2\n.proc main\nend\n.end");
    assert!(e.message.contains("can only name that register"), "{e}");
    let e = err(".in a v0\n.in v0\n.proc main\nend\n.end");
    assert!(e.message.contains("already declared"), "{e}");
    // Other register names stay reserved.
    let e = err(".in r0\n.proc main\nend\n.end");
    assert!(e.message.contains("register name"), "{e}");
}
