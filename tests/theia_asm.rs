//! THEIA assembler, `.mem` files, disassembler, the ROM loader, and the original project's
//! programs (read from the checkout named by `PICAJIT_THEIA_DIR`; those tests print that they
//! are skipped when it is not set).

use picajit::theia::asm::{assemble, assemble_with, Layout, TABLE_LEN};
use picajit::theia::{disassemble, rom, MemImage};
use picajit_interp::theia::table::{self, Form, ENTRY_POINTS, OPS, SWIZZLES};
use picajit_interp::theia::Word;
use picajit_testkit::{theia_checkout, XorShift};
use std::path::PathBuf;

fn checkout() -> Option<PathBuf> {
    theia_checkout("to check its programs")
}

fn read(dir: &std::path::Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Assembles, disassembles and assembles again: the instruction-memory images must be equal.
fn round_trip(src: &str) -> Vec<u64> {
    let p = assemble(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let img = MemImage::parse(&p.to_mem()).unwrap();
    assert_eq!(img.words, p.imem());
    let text = disassemble(&img).unwrap();
    let again = assemble(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(again.imem(), p.imem(), "{text}");
    p.imem()
}

#[test]
fn the_original_assembler_output_is_reproduced() {
    let Some(dir) = checkout() else { return };
    // The scenes' Instructions.mem is Example1.shdr assembled by the original tool (the same
    // file in all three scenes); the repository's copies have CRLF line ends.
    let src = read(&dir, "examples/shaders/example1/Example1.shdr");
    let p = assemble(&src).unwrap();
    for scene in ["example1", "example2", "example3"] {
        let want =
            read(&dir, &format!("examples/scenes/{scene}/Instructions.mem")).replace("\r\n", "\n");
        assert_eq!(p.to_mem(), want, "{scene}");
    }
}

#[test]
fn the_original_example_shaders_assemble_and_round_trip() {
    let Some(dir) = checkout() else { return };
    for f in ["Example1.shdr", "Example2.shdr", "Example3.shdr"] {
        let src = read(&dir, &format!("examples/shaders/example1/{f}"));
        round_trip(&src);
    }
    // Example2 by hand: MUL at row 16, entries point at rows 12 and 16.
    let p = assemble(&read(&dir, "examples/shaders/example1/Example2.shdr")).unwrap();
    assert_eq!(p.entries[9], 0x800C);
    assert_eq!(p.entries[10], 0x8010);
    assert_eq!(p.code[4].word, 0x0004_006E_006E_0040);
}

#[test]
fn the_rom_default_code_assembles_to_the_rom_words() {
    let Some(dir) = checkout() else { return };
    let defs = read(&dir, "rtl/aDefinitions.v");
    let text = read(&dir, "rtl/Module_ROM.v");
    let rom = rom::load(&dir).unwrap();
    assert_eq!(rom.words.len(), 280);
    // spot checks read off the Verilog by hand
    assert_eq!(rom.words[1], Word::with_imm(0x41, 95, 0x1F4_0000).encode());
    assert_eq!(rom.words[37], Word::new(0x59, 157, 0, 0).encode());
    assert_eq!(rom.words[158], Word::with_imm(0x41, 73, 0x20000).encode());
    assert_eq!(rom.words[241], Word::new(4, 98, 94, 6).encode());
    assert_eq!(rom.words[36], Word::with_imm(0x40, 0, 1).encode());
    let src = rom.to_source(&defs, &text).unwrap();
    let p = assemble_with(&src, Layout::Rom).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert_eq!(p.words(), rom.words);
    // every ROM word is a defined operation
    for (i, &w) in rom.words.iter().enumerate() {
        assert!(Word::decode(w).info().is_some(), "row {i}");
    }
}

#[test]
fn our_examples_assemble_and_round_trip() {
    for f in ["ray_triangle.theia", "grayscale.theia"] {
        let src = std::fs::read_to_string(format!("examples/theia/{f}")).unwrap();
        let img = round_trip(&src);
        assert!(img.len() > TABLE_LEN, "{f}");
    }
}

#[test]
fn field_layout_follows_the_original() {
    let p = assemble(
        "ENTRYPOINT_ADRR_MAIN:\n\
         \tADD R1 R2 R3\n\
         L:\n\
         \tSETX R1 32'hCAFE0001 // comment\n\
         \tSWIZZLE3D R6 SWIZZLE_YXZ\n\
         \tJNEZ L R1 CREG_ZERO\n\
         \tJMP ENTRYPOINT_ADRR_MAIN VOID VOID\n\
         \tCALL ENTRYPOINT_ADRR_TCC VOID VOID\n\
         \tCOPY R1 100 VOID\n\
         \tRETURN RT_FALSE\n",
    )
    .unwrap();
    let w: Vec<u64> = p.words();
    assert_eq!(w[0], 0x0001_0047_0048_0049);
    assert_eq!(w[1], 0x0041_0047_CAFE_0001);
    assert_eq!(w[2], 0x0044_004C_0000_0015);
    // labels: index | 0x8000 plus the table length
    assert_eq!(w[3], Word::new(27, 0x8000 + 1 + 12, 71, 119).encode());
    // an entry point defined in the file, used as a field: index | 0x8000 without the table
    assert_eq!(w[4], Word::new(0x58, 0x8000, 0, 0).encode());
    // an entry point not defined here: its ROM address
    assert_eq!(w[5], Word::new(0x59, 190, 0, 0).encode());
    assert_eq!(w[6], Word::new(7, 71, 100, 0).encode());
    assert_eq!(w[7], 0x0040_0000_0000_0000);
    assert_eq!(p.entries[11], 0x800C);
    assert_eq!(p.entries[0], 0);
    let mem = p.to_mem();
    assert!(mem.starts_with("40 //Number of ioctects in file\n"));
    assert!(mem.contains("00000000 0000800C\t//ENTRYPOINT_ADRR_MAIN\n"));
    assert!(mem.contains("00010047 00480049\t\t//  IP 00800C (12): ADD R1 R2 R3\n"));
    assert!(mem.contains("00400000 00000000\t\t//  IP 008013 (19): RETURN RT_FALSE  \n"));
}

#[test]
fn errors_are_clear() {
    for (src, line, needle) in [
        ("\tFOO R1 R2 R3\n", 1, "undefined instruction 'FOO'"),
        ("\tADD R1 R2 R99X\n", 1, "undefined token 'R99X'"),
        ("\tNOP\n", 1, "incorrect statement"),
        ("\tADD R1 R2 R3 R4\n", 1, "too many fields"),
        ("L: ADD R1 R2 R3\n", 1, "label's line"),
        ("\tADD R1 R2 R3 // see: here\n", 1, "label definition"),
        ("L:\nL:\n", 2, "defined twice"),
        (" ENTRYPOINT_ADRR_MAIN:\n", 1, "column 1"),
        ("ENTRYPOINT_ADRR_FOO:\n", 1, "entry point not defined"),
        ("\tSETX R1 32'hG\n", 1, "bad 32-bit immediate"),
        ("\tSETX R1 32'h123456789\n", 1, "bad 32-bit immediate"),
        ("\tSWIZZLE3D R1 SWIZZLE_QQQ\n", 1, "unknown swizzle"),
        ("\tRETURN RT_TRUEX\n", 1, "RT_TRUE"),
        ("\tCOPY R1 70000 VOID\n", 1, "16 bits"),
        ("\tSETX 32'h10000 R1\n", 1, "overflow"),
    ] {
        let e = assemble(src).unwrap_err();
        assert_eq!(e.line, line, "{src}");
        assert!(e.to_string().contains(needle), "{src}: {e}");
    }
    for (text, needle) in [
        ("", "empty"),
        ("2 //\n00000000\n", "two words"),
        ("4 //\n00000000 00000001\n", "says"),
        ("2 //\n00000000 00000001\n", "entry-point table"),
        ("2 //\n0000000X 00000001\n", "hex word"),
    ] {
        let e = MemImage::parse(text).unwrap_err();
        assert!(e.to_string().contains(needle), "{text}: {e}");
    }
    // words no source syntax can express
    let mut words: Vec<u64> = ENTRY_POINTS.iter().map(|&(_, rom)| rom as u64).collect();
    words.push(Word::new(6, 0, 0, 0).encode());
    assert!(disassemble(&MemImage {
        words: words.clone()
    })
    .unwrap_err()
    .contains("not defined"));
    words[TABLE_LEN] = 0;
    words[3] = 5;
    assert!(disassemble(&MemImage { words })
        .unwrap_err()
        .contains("ENTRYPOINT_ADRR_AABBIU"));
}

/// Random images of defined operations with random fields and tables: the disassembly
/// assembles to the same words.
#[test]
fn disassembly_reassembles_identically() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    for case in 0..300 {
        let n = 1 + (rng.next() % 40) as usize;
        let mut words: Vec<u64> = ENTRY_POINTS.iter().map(|&(_, rom)| rom as u64).collect();
        for w in words.iter_mut() {
            if rng.next() % 3 == 0 {
                *w = ((TABLE_LEN + (rng.next() as usize % n)) | 0x8000) as u64;
            }
        }
        for _ in 0..n {
            let info = &OPS[(rng.next() % OPS.len() as u64) as usize];
            let r = rng.next();
            let field = |v: u64| -> u16 {
                match v % 5 {
                    0 => 0,
                    1 => (v >> 8) as u16 % 132,
                    2 => ((TABLE_LEN + (v >> 8) as usize % n) | 0x8000) as u16,
                    3 => ENTRY_POINTS[(v >> 8) as usize % TABLE_LEN].1,
                    _ => (v >> 8) as u16,
                }
            };
            let mut w = Word::new(info.code, field(r), field(r >> 16), field(r >> 32));
            match info.form {
                Form::Swizzle if r % 2 == 0 => w.src2 = (r % SWIZZLES.len() as u64) as u16,
                Form::Swizzle | Form::Imm | Form::ImmJump if r % 3 == 0 => {
                    w.src1 = 0;
                    w.src2 = 0;
                }
                Form::Return if r % 2 == 0 => w = Word::with_imm(info.code, 0, (r % 2) as u32),
                _ => {}
            }
            if info.code == table::by_name("NOP").unwrap().code && r % 4 == 0 {
                w = Word::default();
            }
            words.push(w.encode());
        }
        let img = MemImage { words };
        let text = disassemble(&img).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let p = assemble(&text).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        assert_eq!(p.imem(), img.words, "case {case}\n{text}");
    }
}

/// The ray-triangle example computes what a float reference says, in both profiles.
#[test]
fn ray_triangle_example_hits_and_misses() {
    use picajit_interp::theia::exec::{run, Code, RecordIo, State, Status};
    use picajit_interp::theia::{regs, Profile};
    let src = std::fs::read_to_string("examples/theia/ray_triangle.theia").unwrap();
    let p = assemble(&src).unwrap();
    let entry = p.entries[11] as u16;
    let q = |v: f64| (v * 131072.0).round() as i64 as i32 as u32;
    let r = |n: &str| regs::by_name(n).unwrap() as usize;
    // triangle in the z = 5 plane, rays from the origin
    let tri = [[-1.0, -1.0, 5.0], [2.0, -1.0, 5.0], [-1.0, 2.0, 5.0]];
    for (dir, hit) in [
        ([0.0, 0.0, 1.0], true),
        ([0.1, 0.05, 1.0], true),
        ([0.5, 0.5, 1.0], false),
        ([-0.3, 0.0, 1.0], false),
        ([0.0, 0.0, -1.0], false),
    ] {
        for profile in Profile::ALL {
            let mut s = State::new(profile);
            s.regs[r("CREG_CAMERA_POSITION")] = [0; 3];
            s.regs[r("CREG_RAY_DIRECTION")] = dir.map(q);
            for (k, name) in ["CREG_V0", "CREG_V1", "CREG_V2"].iter().enumerate() {
                s.regs[r(name)] = tri[k].map(q);
            }
            let out = run(
                profile,
                &Code::imem(p.imem()),
                &mut s,
                &mut RecordIo::default(),
                entry,
                1000,
            )
            .unwrap();
            assert_eq!(out.status, Status::Returned(hit), "{dir:?} {profile:?}");
            if hit {
                let t = s.regs[r("R9")][0] as i32 as f64 / 131072.0;
                assert!((t - 5.0).abs() < 1e-3, "t = {t}");
                let u = s.regs[r("R6")][0] as i32 as f64 / 131072.0;
                let want_u = (5.0 * dir[0] + 1.0) / 3.0;
                assert!((u - want_u).abs() < 1e-3, "u = {u}, want {want_u}");
            }
        }
    }
}
