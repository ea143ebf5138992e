//! Malformed and hostile inputs to every public entry point give errors, never panics, hangs or
//! unbounded work: the Rust API (programs, SHBIN reader, assembler, engine with tiny budgets,
//! BREAK on an empty loop stack, runaway loops) and the `picajit` command line (bad files, bad
//! `--set` values, bad entry points). The C ABI has its own tests (`src/capi`).
//!
//! The fuzz targets (`fuzz/`, `scripts/fuzz.sh`) explore the same entry points at random; the
//! crashes found while hardening them are in `tests/fuzz_regressions.rs`.

mod engine_common;
use cli_run::{picajit, rejects};
use engine_common::run_vertex;
use example_files::{assembled, example};
use picajit::interp::pica::exec::ExecError;
use picajit::interp::pica::isa::{encode, CondOp, Condition, Instruction};
use picajit::interp::pica::program::{
    GsInputMode, Program, ProgramError, ShaderKind, CODE_WORDS, MAX_OPDESCS, MAX_OPDESC_TABLE,
};
use picajit::interp::pica::state::Uniforms;
use picajit::pica::asm::{assemble, assemble_with_warnings, disassemble, SourceFile};
use picajit::pica::engine::{
    program_from_shbin, EngineConfig, GeometryRunner, GsInput, Invocation, Shader,
};
use picajit::pica::shbin::Shbin;
use picajit::{Engine, Error};
use std::path::PathBuf;

mod cli_run;
mod example_files;
mod target_exe;
use std::time::{Duration, Instant};

use picajit_testkit::testgen::MODES;

fn word(i: Instruction) -> u32 {
    encode(&i).expect("encodable")
}

fn example_shbin(name: &str) -> Vec<u8> {
    assembled(name).to_bytes()
}

/// A deterministic byte stream (64-bit LCG) standing in for random input.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

// ---------------------------------------------------------------- programs

#[test]
fn program_new_rejects_bad_shapes() {
    let end = word(Instruction::End);
    assert_eq!(
        Program::new(vec![], vec![], 0, ShaderKind::Vertex),
        Err(ProgramError::EntryOutOfRange { entry: 0, words: 0 })
    );
    for entry in [1, 2, 4095, 4096, u32::MAX] {
        assert_eq!(
            Program::new(vec![end], vec![], entry, ShaderKind::Vertex),
            Err(ProgramError::EntryOutOfRange { entry, words: 1 }),
            "entry {entry}"
        );
    }
    assert_eq!(
        Program::new(vec![end; CODE_WORDS + 1], vec![], 0, ShaderKind::Vertex),
        Err(ProgramError::TooManyWords(CODE_WORDS + 1))
    );
    assert_eq!(
        Program::new(vec![end; 1 << 20], vec![], 0, ShaderKind::Geometry),
        Err(ProgramError::TooManyWords(1 << 20))
    );
    assert_eq!(
        Program::new(
            vec![end],
            vec![0; MAX_OPDESC_TABLE + 1],
            0,
            ShaderKind::Vertex
        ),
        Err(ProgramError::TooManyDescriptors(MAX_OPDESC_TABLE + 1))
    );
    // An emulator's whole table is accepted; only the entries instructions address are kept.
    let p = Program::new(vec![end], vec![7; MAX_OPDESC_TABLE], 0, ShaderKind::Vertex)
        .expect("a 4096-entry table");
    assert_eq!(p.opdescs().len(), MAX_OPDESCS);
    // The limits themselves are fine, and so is an entry at the last word.
    let p = Program::new(
        vec![end; CODE_WORDS],
        vec![!0; MAX_OPDESCS],
        4095,
        ShaderKind::Vertex,
    )
    .expect("largest program");
    assert_eq!(p.entry(), 4095);
    assert!(p.with_entry(4096).is_err());
    for e in [
        ProgramError::TooManyWords(5000),
        ProgramError::TooManyDescriptors(200),
        ProgramError::EntryOutOfRange { entry: 9, words: 2 },
    ] {
        assert!(!e.to_string().is_empty());
    }
}

// ---------------------------------------------------------------- SHBIN

#[test]
fn shbin_every_truncation_of_every_example_is_an_error() {
    for name in ["mvp.v.pica", "lights8.v.pica", "point_to_quad.g.pica"] {
        let bytes = example_shbin(name);
        let full = Shbin::parse(&bytes).expect("the whole file parses");
        for len in 0..bytes.len() {
            match Shbin::parse(&bytes[..len]) {
                Err(e) => assert!(!e.to_string().is_empty()),
                // Only trailing padding may be cut without changing the meaning.
                Ok(s) => {
                    assert_eq!(s, full, "{name}: a {len}-byte prefix parses differently");
                    assert!(
                        len + 4 > bytes.len(),
                        "{name}: {len} of {} bytes",
                        bytes.len()
                    );
                }
            }
        }
    }
}

#[test]
fn shbin_corrupted_words_never_panic() {
    let bytes = example_shbin("point_to_quad.g.pica");
    // Every 32-bit word replaced by values that stress offsets and counts.
    for at in (0..bytes.len() - 3).step_by(4) {
        for v in [
            0u32,
            1,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            bytes.len() as u32,
        ] {
            let mut b = bytes.clone();
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            if let Ok(s) = Shbin::parse(&b) {
                // Whatever parses goes through the rest of the pipeline.
                let again = Shbin::parse(&s.to_bytes()).expect("written SHBIN parses");
                assert_eq!(again, s);
                for i in 0..s.dvles.len() {
                    let _ = program_from_shbin(&s, i);
                }
            }
        }
    }
    for seed in 0..200 {
        let mut b = b"DVLB".to_vec();
        b.extend(noise(seed, 16 + seed as usize * 3));
        let _ = Shbin::parse(&b);
        let _ = Shbin::parse(&noise(seed, 64));
    }
}

#[test]
fn program_from_shbin_rejects_bad_dvle_indices_and_entries() {
    let mut shbin = Shbin::parse(&example_shbin("mvp.v.pica")).expect("parses");
    assert!(program_from_shbin(&shbin, 1).is_err());
    assert!(program_from_shbin(&shbin, usize::MAX).is_err());
    shbin.dvles[0].main = shbin.code.len() as u32;
    assert!(program_from_shbin(&shbin, 0).is_err());
    shbin.dvles[0].main = u32::MAX;
    assert!(program_from_shbin(&shbin, 0).is_err());
}

// ---------------------------------------------------------------- assembler

fn check_asm(text: &str) {
    match assemble_with_warnings(&[SourceFile {
        name: "hostile.pica",
        text,
    }]) {
        Ok((shbin, _)) => {
            let dis = disassemble(&shbin);
            let again = assemble(&[SourceFile {
                name: "dis.pica",
                text: &dis,
            }])
            .unwrap_or_else(|e| panic!("disassembly of {text:?} does not assemble: {e}"));
            assert_eq!(again.to_bytes(), shbin.to_bytes(), "{text:?}");
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "{text:?}");
            for e in errors {
                assert!(e.line >= 1 && e.column >= 1, "{text:?}: {e:?}");
                assert!(!e.message.is_empty());
            }
        }
    }
}

#[test]
fn assembler_garbage_gives_positioned_errors() {
    let cases = [
        "",
        "\0",
        "\u{FEFF}",
        "mov",
        "mov r0",
        "mov r0,",
        ".proc",
        ".proc main",
        ".end",
        ".proc main\n.proc main\n",
        ".proc main\nend\n.end\n.proc main\nend\n.end",
        ".proc main\n  add r0, c200, v0\n  end\n.end",
        ".proc main\n  add r0, c0[a0.x + 99999999999999999999], v0\n  end\n.end",
        ".proc main\n  mov o0, r16\n  end\n.end",
        ".proc main\n  mov r0.xyzwxyzw, r1\n  end\n.end",
        ".proc main\n  mov r0, r1.qqqq\n  end\n.end",
        ".proc main\n  for i9\n  end\n.end",
        ".proc main\n  ifc cmp.x\n  end\n.end",
        ".proc main\n  ifc cmp.x\n  end\n  .else\n.end",
        ".proc main\n  call nowhere\n  end\n.end",
        ".proc main\n  call main\n  end\n.end",
        ".proc main\n  call @0xFFFFFFFF, 999\n  end\n.end",
        ".proc main\n  jmpc 99, main\n  end\n.end",
        ".proc main\n  .word 0x1FFFFFFFF\n  end\n.end",
        ".proc main\n  .word -1\n  end\n.end",
        ".fvec a[99999999]\n.proc main\nend\n.end",
        ".fvec a[0]\n.proc main\nend\n.end",
        ".constf k(1e999, -1e999, nan, inf)\n.proc main\nend\n.end",
        ".constf k(f24(0x1FFFFFF), 0, 0, 0)\n.proc main\nend\n.end",
        ".ivec k(256, -1, 0, 0)\n.proc main\nend\n.end",
        ".alias x r0\n.alias x r1\n.proc main\nend\n.end",
        ".out o99 position\n.proc main\nend\n.end",
        ".out o0 nonsense\n.proc main\nend\n.end",
        ".gsh point c999\n.proc main\nend\n.end",
        ".entry @0x5000, @0x6000\n.proc main\nend\n.end",
        "# 4294967295 \"x.vsh\"\n.proc main\nbogus\n.end",
        "# 99999999999999999999 \"x.vsh\"\n.proc main\nbogus\n.end",
        "\"unterminated",
        ";;;;;;;;\n\n\n\t\t\t",
        ".proc main\n  mad r0, r1, r2, r3, r4\n  end\n.end",
        ".proc main\n  setemit 7, prim, inv\n  end\n.end",
    ];
    for text in cases {
        check_asm(text);
    }
    // Deep and long inputs stay bounded.
    check_asm(&format!(".proc main\n{}end\n.end", "  nop\n".repeat(5000)));
    check_asm(&format!(
        ".proc main\n{}end\n{}.end",
        "  ifu b0\n".repeat(300),
        "  .end\n".repeat(300)
    ));
    check_asm(&"(".repeat(10_000));
    // Random bytes and mangled real sources.
    let src = example("lights_loop.v.pica");
    for seed in 0..300 {
        let text = String::from_utf8_lossy(&noise(seed, 200)).into_owned();
        check_asm(&text);
        let mut b = src.clone().into_bytes();
        for (k, r) in noise(seed, 8).chunks(2).enumerate() {
            let at = (r[0] as usize * 251 + k * 97) % b.len();
            b[at] = r[1] & 0x7F;
        }
        check_asm(&String::from_utf8_lossy(&b));
        // Every prefix of a real source assembles or fails with a position.
        let cut = src.len() * (seed as usize % 100) / 100;
        if src.is_char_boundary(cut) {
            check_asm(&src[..cut]);
        }
    }
}

// ---------------------------------------------------------------- engine

/// Every backend choice.
const BACKENDS: [Engine; 4] = [Engine::Jit, Engine::Interp, Engine::X64, Engine::A64];

fn shaders(program: &Program, budget: u64) -> Vec<Shader> {
    let mut v = Vec::new();
    for backend in BACKENDS {
        for float_mode in MODES {
            let config = EngineConfig::default()
                .with_engine(backend)
                .with_float_mode(float_mode)
                .with_budget(budget);
            match Shader::new(program.clone(), &config) {
                Ok(s) => v.push(s),
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
    assert!(v.len() >= 3, "at least the interpreter runs every program");
    v
}

#[test]
fn engine_tiny_budgets_are_exact() {
    let shbin = assembled("lights_loop.v.pica");
    let (program, uniforms) = program_from_shbin(&shbin, 0).expect("program");
    let inputs = [[0.5f32; 4]; 16];
    let full = run_vertex(
        &Shader::new(program.clone(), &EngineConfig::default()).expect("shader"),
        &uniforms,
        &inputs,
    )
    .expect("runs with the default budget")
    .1
    .instructions;
    assert!(full > 10);
    for asked in [0, 1, 2, 3, full / 2, full - 1, full, full + 1] {
        // 0 stands for the default budget.
        let budget = picajit::budget_or_default(asked);
        for shader in shaders(&program, asked) {
            let what = format!("budget {asked} on {}", shader.engine());
            match run_vertex(&shader, &uniforms, &inputs) {
                Ok((_, info)) => {
                    assert!(budget >= full, "{what}: finished");
                    assert_eq!(info.instructions, full, "{what}");
                }
                Err(Error::Exec {
                    index: 0,
                    error: ExecError::BudgetExhausted { budget: b, .. },
                }) => {
                    assert!(budget < full, "{what}: ran out");
                    assert_eq!(b, budget, "{what}");
                }
                Err(e) => panic!("{what}: {e}"),
            }
            let mut out = vec![[[0.0; 4]; 16]; 3];
            let r = shader
                .invoke(Invocation::batch(&uniforms, &[inputs; 3], &mut out))
                .map(|o| o.instructions);
            match r {
                Ok(total) => assert_eq!(total, 3 * full, "{what}"),
                Err(e) => {
                    assert!(budget < full, "{what}");
                    assert!(matches!(e, Error::Exec { index: 0, .. }), "{what}: {e}");
                }
            }
        }
    }
}

#[test]
fn break_with_empty_loop_stack_is_an_error_on_every_engine() {
    let cmp_true = Instruction::Cmp {
        src1: picajit::interp::pica::isa::SrcReg::Input(0),
        src2: picajit::interp::pica::isa::SrcReg::Input(0),
        rel: picajit::interp::pica::isa::RelIndex::None,
        x: picajit::interp::pica::isa::CmpOp::Eq,
        y: picajit::interp::pica::isa::CmpOp::Eq,
        desc: 0,
    };
    let programs = [
        vec![word(Instruction::Break), word(Instruction::End)],
        vec![
            word(Instruction::Nop),
            word(cmp_true),
            word(Instruction::BreakC {
                cond: Condition {
                    op: CondOp::And,
                    ref_x: true,
                    ref_y: true,
                },
            }),
            word(Instruction::End),
        ],
        // BREAK inside a CALL but outside any loop.
        vec![
            word(Instruction::Call { dest: 2, num: 1 }),
            word(Instruction::End),
            word(Instruction::Break),
        ],
    ];
    for code in programs {
        let program = Program::new(code, vec![0xF], 0, ShaderKind::Vertex).expect("program");
        for shader in shaders(&program, 1000) {
            let r = run_vertex(&shader, &Uniforms::default(), &[[0.0; 4]; 16]);
            assert!(
                matches!(
                    r,
                    Err(Error::Exec {
                        index: 0,
                        error: ExecError::BreakWithoutLoop { .. }
                    })
                ),
                "{}: {r:?}",
                shader.engine()
            );
        }
    }
}

#[test]
fn runaway_loops_stop_at_the_budget() {
    let spin = vec![
        word(Instruction::JmpU {
            b: 0,
            dest: 0,
            invert: true,
        }),
        word(Instruction::End),
    ];
    let mut uniforms = Uniforms::default();
    // Four nested 256-iteration loops: 2^32 iterations without a budget.
    let nested = vec![
        word(Instruction::Loop { i: 0, dest: 7 }),
        word(Instruction::Loop { i: 1, dest: 6 }),
        word(Instruction::Loop { i: 2, dest: 5 }),
        word(Instruction::Loop { i: 3, dest: 4 }),
        word(Instruction::Nop),
        word(Instruction::Nop),
        word(Instruction::Nop),
        word(Instruction::Nop),
        word(Instruction::End),
    ];
    for i in 0..4 {
        uniforms.set_int(i, [255, 0, 1, 0]);
    }
    for (name, code, kind) in [
        ("spin", spin.clone(), ShaderKind::Vertex),
        ("nested", nested, ShaderKind::Vertex),
        ("spin gs", spin, ShaderKind::Geometry),
    ] {
        let program = Program::new(code, vec![0xF], 0, kind).expect("program");
        for asked in [0, 7, 100_000] {
            // 0 stands for the default budget.
            let budget = picajit::budget_or_default(asked);
            for shader in shaders(&program, asked) {
                let start = Instant::now();
                let r = match kind {
                    ShaderKind::Vertex => {
                        run_vertex(&shader, &uniforms, &[[0.0; 4]; 16]).map(|x| x.1)
                    }
                    ShaderKind::Geometry => GeometryRunner::default().invoke(
                        &shader,
                        GsInputMode::Point,
                        &mut uniforms.clone(),
                        GsInput::Point(&[[0.0; 4]; 16]),
                    ),
                };
                assert_eq!(
                    r.as_ref().map_err(|e| matches!(
                        e,
                        Error::Exec {
                            index: 0,
                            error: ExecError::BudgetExhausted { budget: b, .. }
                        } if *b == budget
                    )),
                    Err(true),
                    "{name}, budget {asked}, {}: {r:?}",
                    shader.engine()
                );
                assert!(start.elapsed() < Duration::from_secs(10), "{name}: bounded");
            }
        }
    }
}

#[test]
fn running_off_the_end_and_undefined_opcodes_are_errors() {
    let programs = [
        (vec![word(Instruction::Nop)], "off the end"),
        (
            vec![word(Instruction::JmpU {
                b: 0,
                dest: 0xFFF,
                invert: true,
            })],
            "jump far past the end",
        ),
        (
            vec![
                word(Instruction::Call {
                    dest: 0xFFF,
                    num: 255,
                }),
                word(Instruction::End),
            ],
            "call past the end",
        ),
        (
            vec![0x4000_0000, word(Instruction::End)],
            "undefined opcode",
        ),
    ];
    for (code, what) in programs {
        for kind in [ShaderKind::Vertex, ShaderKind::Geometry] {
            let program = Program::new(code.clone(), vec![], 0, kind).expect("program");
            for shader in shaders(&program, 1000) {
                let r = match kind {
                    ShaderKind::Vertex => {
                        run_vertex(&shader, &Uniforms::default(), &[[0.0; 4]; 16]).map(|x| x.1)
                    }
                    ShaderKind::Geometry => GeometryRunner::default().invoke(
                        &shader,
                        GsInputMode::Point,
                        &mut Uniforms::default(),
                        GsInput::Point(&[[0.0; 4]; 16]),
                    ),
                };
                match r {
                    Err(Error::Exec {
                        index: 0,
                        error: ExecError::PcOutOfRange { .. } | ExecError::UndefinedOpcode { .. },
                    }) => {}
                    other => panic!("{what} ({kind}) on {}: {other:?}", shader.engine()),
                }
            }
        }
    }
}

#[test]
fn geometry_uniform_input_modes_with_hostile_indices() {
    let shbin = assembled("point_to_quad.g.pica");
    let (program, uniforms) = program_from_shbin(&shbin, 0).expect("program");
    let rows = [[1.0f32; 4]; 40];
    for mode in [
        GsInputMode::Variable {
            first_uniform: 255,
            full_vertices: 255,
        },
        GsInputMode::Fixed {
            first_uniform: 94,
            vertices: 200,
        },
        GsInputMode::Variable {
            first_uniform: 95,
            full_vertices: 0,
        },
    ] {
        for shader in shaders(&program, 5000) {
            let mut runner = GeometryRunner::default();
            let mut u = uniforms.clone();
            for n in [0, 1, 40] {
                let r = runner.invoke(
                    &shader,
                    mode,
                    &mut u,
                    GsInput::Uniforms {
                        rows: &rows[..n],
                        count: 255,
                    },
                );
                if let Ok(info) = r {
                    assert!(info.instructions <= 5000);
                }
            }
            // The read-only rows stay (1,1,1,1) whatever the input stage writes.
            assert_eq!(u.float(96), [1.0; 4]);
            assert_eq!(u.float(127), [1.0; 4]);
        }
    }
}

// ---------------------------------------------------------------- command line

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    cli_run::scratch("hostile", name, bytes)
}

#[test]
fn cli_rejects_bad_files() {
    let shbin = example_shbin("mvp.v.pica");
    let out = scratch("out.shbin", b"");
    let out = out.to_str().expect("path");
    // Unreadable everywhere.
    for f in [
        scratch("magic_only.shbin", b"DVLB"),
        scratch("truncated.shbin", &shbin[..shbin.len() / 2]),
        scratch("header_only.shbin", &shbin[..12]),
        scratch("binary.pica", &[0xFF, 0xFE, 0x00, 0xC3, 0x28]),
        scratch("bad_source.pica", b".proc main\n  frobnicate r0\n.end\n"),
    ] {
        let p = f.to_str().expect("UTF-8 path");
        rejects(&["run", p]);
        rejects(&["disasm", p]);
        rejects(&["info", p]);
        rejects(&["asm", p, "-o", out]);
    }
    // Nothing to run: an empty file, one under 4 bytes (too short for the DVLB magic), a
    // blank source and a source whose only file says .nodvle are errors everywhere (picasso
    // refuses a source without a DVLE too), each with a message saying why.
    for (f, why) in [
        (scratch("empty.pica", b""), &["too short", "empty file"][..]),
        (
            scratch("three.shbin", b"DVL"),
            &["too short", "unknown instruction"],
        ),
        (
            scratch("blank.pica", b"\n  \n; comment\n"),
            &["nothing to assemble"],
        ),
        (
            scratch("no_dvle.pica", b".nodvle\n.proc f\n  end\n.end\n"),
            &["no DVLE"],
        ),
    ] {
        let p = f.to_str().expect("UTF-8 path");
        for args in [
            &["run", p][..],
            &["info", p],
            &["disasm", p],
            &["asm", p, "-o", out],
        ] {
            rejects(args);
            let err = String::from_utf8_lossy(&picajit(args).stderr).into_owned();
            assert!(
                why.iter().any(|w| err.contains(w)),
                "picajit {args:?}: {err}"
            );
        }
    }
    rejects(&["run", "does/not/exist.shbin"]);
    rejects(&["run", std::env::temp_dir().to_str().expect("path")]);
    let odd = scratch("odd.bin", &[1, 2, 3, 4, 5]);
    rejects(&["disasm", "--raw", odd.to_str().expect("path")]);
    let words = scratch("words.bin", &[0x00, 0x00, 0x00, 0x88]);
    let bad_descs = scratch("descs.bin", &[1, 2, 3]);
    rejects(&[
        "disasm",
        "--raw",
        words.to_str().expect("path"),
        "--opdescs",
        bad_descs.to_str().expect("path"),
    ]);
}

#[test]
fn cli_rejects_bad_values() {
    let mvp = "examples/mvp.v.pica";
    let sets = [
        "v0",
        "=1",
        "v0=",
        "v0=1,2",
        "v0=1,2,3,4,5",
        "v0=abc",
        "v0=0x",
        "v0=0x1000000",
        "v0=0xFFFFFFFFFFFFFFFF",
        "v16=1",
        "v99999999999999999999=1",
        "c96=1",
        "c-1=1",
        "i4=1",
        "i0=256",
        "i0=-1",
        "i0=0x1FF",
        "b16=true",
        "b0=maybe",
        "b0=",
        "x0=1",
        "projection[4]=1",
        "projection[65535]=1",
        "projection[99999]=1",
        "projection[-1]=1",
        "projection[=1",
        "projection[1=1",
        "nosuchuniform=1",
        "\u{1F600}=1",
    ];
    for s in sets {
        rejects(&["run", mvp, "--set", s]);
    }
    for (flag, value) in [
        ("--engine", "quantum"),
        ("--float", "f16"),
        ("--rounding", "up"),
        ("--dvle", "1"),
        ("--dvle", "18446744073709551615"),
        ("--dvle", "-1"),
        ("--entry", "4096"),
        ("--entry", "4294967295"),
        ("--entry", "99999999999"),
        ("--entry", "0x"),
        ("--entry", "0xFFFFFFFFF"),
        ("--entry", "nolabel"),
        ("--budget", "-5"),
        ("--budget", "lots"),
    ] {
        rejects(&["run", mvp, flag, value]);
    }
    rejects(&["run", mvp, "--float", "f32", "--rounding", "rne"]);
    rejects(&["bogus-subcommand"]);
}

#[test]
fn cli_tiny_budget_and_runaway_programs_fail_cleanly() {
    let spin = scratch(
        "spin.v.pica",
        b".proc main\nloop:\n  jmpu !b0, loop\n  end\n.end\n",
    );
    let p = spin.to_str().expect("path");
    for engine in ["auto", "interp", "x64"] {
        rejects(&["run", p, "--engine", engine, "--budget", "1000"]);
    }
    rejects(&["run", "examples/lights8.v.pica", "--budget", "1"]);
    rejects(&["run", "examples/point_to_disc.g.pica", "--budget", "3"]);
}
