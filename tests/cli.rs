//! The `picajit` command line end to end: asm / disasm / info / run on the examples, on every
//! engine, and its error paths.

use serde_json::Value;
use std::path::{Path, PathBuf};
use target_exe::target_command;

mod cli_run;
mod target_exe;

use cli_run::{fails, json, ok, ONE_SAMPLE};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// `bytes` written to `name` in the scratch directory.
fn file(name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = scratch(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

/// The point-mode geometry example.
const QUAD: &str = "examples/point_to_quad.g.pica";

/// `picajit info EXAMPLE --engine ENGINE`'s report.
fn info(example: &str, engine: &str) -> String {
    ok(&["info", example, "--engine", engine])
}

/// The same report as JSON.
fn info_json(example: &str, engine: &str) -> Value {
    json(&["info", example, "--engine", engine, "--json"])
}

/// `picajit run FILE --engine ENGINE EXTRA… --json`, parsed.
fn run_on(file: &Path, engine: &str, extra: &[&str]) -> Value {
    json(&[&["run", s(file), "--engine", engine], extra, &["--json"]].concat())
}

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pica"))
        .collect();
    v.sort();
    assert!(v.len() >= 9, "the examples are all there");
    v
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Inputs that exercise every example: attributes and the uniforms they name.
const SETS: &[&str] = &[
    "--set",
    "v0=0.5,-0.25,2,1",
    "--set",
    "v1=0.1,0.7,-0.3,1",
    "--set",
    "v2=0.6,0.4,0,0",
    "--set",
    "v3=1,2,3,0",
    "--set",
    "c0=1,0.5,0.25,0",
    "--set",
    "c1=0,1,0,0.5",
    "--set",
    "c2=0.25,0,1,0",
    "--set",
    "c3=0,0,0.5,1",
    "--set",
    "c4=0.9,0.1,0,0.3",
    "--set",
    "c5=0x3f0000,0x3e0000,0x000000,0xbf0000",
    "--set",
    "i0=3,0,1,0",
    "--set",
    "b2=true",
];

#[test]
fn examples_assemble_disassemble_and_reassemble_to_identical_bytes() {
    for ex in examples() {
        let name = ex.file_name().unwrap().to_string_lossy().to_string();
        let bin = scratch(&format!("{name}.shbin"));
        ok(&["asm", s(&ex), "-o", s(&bin)]);
        let text = ok(&["disasm", s(&bin)]);
        let src2 = file(&format!("{name}.re.pica"), &text);
        let bin2 = scratch(&format!("{name}.re.shbin"));
        ok(&["asm", s(&src2), "-o", s(&bin2)]);
        assert_eq!(
            std::fs::read(&bin).unwrap(),
            std::fs::read(&bin2).unwrap(),
            "{name}: disassembly reassembles to the same SHBIN"
        );
    }
}

#[test]
fn run_json_has_the_documented_shape() {
    let v = json(&[
        "run",
        QUAD,
        "--set",
        "inpos=0.5,0.5,0,1",
        "--set",
        "inclr=1,0.5,0,1",
        "--set",
        "halfsize=0.25,0.25,0,0",
        "--json",
    ]);
    let o0 = v["outputs"]["o0"].as_array().expect("o0 written");
    assert_eq!(o0.len(), 4);
    assert!(o0.iter().all(|x| {
        let t = x.as_str().unwrap();
        t.starts_with("0x") && t.len() == 8
    }));
    assert_eq!(v["cmp"].as_array().unwrap().len(), 2);
    assert_eq!(v["a0"].as_array().unwrap().len(), 2);
    assert!(v["aL"].is_number());
    assert!(v["instructions"].as_u64().unwrap() > 0);
    let emits = v["emits"].as_array().expect("geometry shaders list emits");
    assert_eq!(emits.len(), 4, "a quad is four vertices");
    // (0.5 - 0.25, 0.5 - 0.25) is the first corner.
    assert_eq!(emits[0]["outputs"]["o0"][0], "0x3d0000");
    assert_eq!(emits[0]["primitive"], false);
    assert_eq!(emits[2]["primitive"], true);
    assert_eq!(emits[3]["winding"], true);
}

/// Every example on every engine this build can run gives the interpreter's bits, and no
/// example falls back on the host JIT.
#[test]
fn examples_run_identically_on_every_engine() {
    // Test builds enable the AArch64 emulator (see the dev-dependencies), so `a64` runs on
    // every host: natively on AArch64, under unicorn elsewhere.
    let engines: &[&str] = if cfg!(target_arch = "x86_64") {
        &["auto", "x64", "a64"]
    } else {
        &["auto", "a64"]
    };
    for ex in examples() {
        for float in [["f24", "rtz"], ["f24", "rne"], ["f32", "rtz"]] {
            let run = |engine: &str| {
                let mut args = vec![
                    "run",
                    s(&ex),
                    "--json",
                    "--engine",
                    engine,
                    "--float",
                    float[0],
                ];
                if float[0] == "f24" {
                    args.extend(["--rounding", float[1]]);
                }
                args.extend(SETS);
                let mut v = json(&args);
                let obj = v.as_object_mut().unwrap();
                let engine = obj.remove("engine").unwrap();
                let fallback = obj.remove("fallback_reason");
                (v, engine, fallback)
            };
            let (want, _, _) = run("interp");
            for &engine in engines {
                let (got, active, fallback) = run(engine);
                assert_eq!(got, want, "{} {float:?} on {engine}", ex.display());
                assert!(
                    fallback.is_none() && active != "interp",
                    "{} falls back on {engine}: {fallback:?}",
                    ex.display()
                );
            }
        }
    }
}

#[test]
fn info_reports_the_jit_decision() {
    let out = info("examples/skinning.v.pica", "x64");
    assert!(out.contains("engine: x64, compiled:"), "{out}");
    let v = info_json("examples/lights_loop.v.pica", "auto");
    let jit = &v["dvles"][0]["jit"];
    assert_eq!(jit["compiled"], Value::Bool(true), "{jit}");
    assert!(jit["code_bytes"].as_u64().unwrap() > 0);
    assert!(jit["analysis"].as_str().unwrap().contains("loop"));
    let out = info("examples/mvp.v.pica", "interp");
    assert!(out.contains("engine: interpreter"), "{out}");
    fails(&["info", "examples/mvp.v.pica", "--engine", "gpu"]);
    // How batches run: eight vertices per group on AVX2 hosts and AArch64 (natively or under
    // the emulator), with lane masks where vertices can take different branches; one at a
    // time for geometry shaders.
    let avx2 = picajit_jit::HostFeatures::detect().contains(picajit_jit::HostFeatures::AVX2);
    let out = info("examples/branches.v.pica", "x64");
    if avx2 {
        assert!(out.contains("batches: 8 vertices per group"), "{out}");
        assert!(out.contains("lane masks"), "{out}");
        let out = info("examples/mvp.v.pica", "x64");
        assert!(out.contains("batches: 8 vertices per group"), "{out}");
        assert!(!out.contains("lane masks"), "{out}");
    } else {
        assert!(out.contains("batches: one vertex at a time"), "{out}");
    }
    let v = info_json("examples/mvp.v.pica", "a64");
    let batches = v["dvles"][0]["jit"]["batches"].as_str().unwrap_or("");
    let want = match compiled_example("examples/mvp.v.pica", picajit_jit::Backend::A64)
        .batch_ineligibility()
    {
        Some(why) => format!("one vertex at a time ({why})"),
        None => "8 vertices per group".to_string(),
    };
    assert!(batches.starts_with(&want), "{v}");
    assert!(
        v["dvles"][0]["jit"].get("points").is_none(),
        "no point-mode report for vertex shaders: {v}"
    );
}

/// The example compiled for `backend` as `info` compiles it.
fn compiled_example(path: &str, backend: picajit_jit::Backend) -> picajit_jit::CompiledShader {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile {
        name: path,
        text: &text,
    }])
    .unwrap();
    let (program, _) = picajit::pica::engine::program_from_shbin(&shbin, 0).unwrap();
    let features = picajit_jit::HostFeatures::for_backend(backend);
    picajit_jit::compile(&program, Default::default(), backend, features).unwrap()
}

/// For geometry shaders `info --engine` says how point-mode draws (`run_points`) run: eight
/// invocations per group on the multi-vertex backend, or one at a time and why, as the JIT
/// decides; in text and in JSON.
#[test]
fn info_reports_how_geometry_points_run() {
    use picajit_jit::Backend;
    for (backend, engine) in [(Backend::X64, "x64"), (Backend::A64, "a64")] {
        for path in [QUAD, "examples/point_to_disc.g.pica"] {
            let code = compiled_example(path, backend);
            let want = match code.points_ineligibility() {
                Some(why) => format!("one invocation at a time ({why})"),
                None => "8 invocations per group (".to_string(),
            };
            let out = info(path, engine);
            assert!(
                out.contains(&format!("\n  points: {want}")),
                "{path}: {out}"
            );
            let v = info_json(path, engine);
            let points = v["dvles"][0]["jit"]["points"].as_str().unwrap_or("");
            assert!(points.starts_with(&want), "{path}: {v}");
            // `batches` is about vertex-shader batches, as before.
            let batches = v["dvles"][0]["jit"]["batches"].as_str().unwrap_or("");
            assert_eq!(batches, "one vertex at a time (not a vertex shader)", "{v}");
        }
    }
    // The AArch64 multi-vertex (NEON) code takes point-mode geometry shaders too, whether
    // this host runs it (natively or under the emulator) or not.
    let out = info(QUAD, "a64");
    assert!(out.contains("points: 8 invocations per group ("), "{out}");
    // The interpreter has nothing to say about groups.
    let out = info(QUAD, "interp");
    assert!(!out.contains("points:"), "{out}");
}

#[test]
fn disasm_jit_x64_interleaves_host_code_with_pica_instructions() {
    let out = ok(&["disasm", "--jit", "x64", "examples/mvp.v.pica"]);
    assert!(out.contains("; ==== DVLE #0"), "{out}");
    assert!(out.contains("dp4"), "PICA instructions are shown: {out}");
    assert!(out.contains("ldmxcsr"), "host code is shown: {out}");
    assert!(out.contains("constant pool"), "{out}");
}

#[test]
fn disasm_jit_batch_shows_the_multi_vertex_code_or_why_there_is_none() {
    let out = ok(&["disasm", "--jit", "x64", "--batch", "examples/mvp.v.pica"]);
    let avx2 = picajit::jit::HostFeatures::detect().contains(picajit::jit::HostFeatures::AVX2);
    if avx2 {
        assert!(out.contains("multi-vertex (8 vertices per group)"), "{out}");
        assert!(out.contains("dp4"), "PICA instructions are shown: {out}");
        assert!(out.contains("ymm"), "eight-lane host code is shown: {out}");
    } else {
        assert!(out.contains("no multi-vertex code"), "{out}");
    }
    // Geometry shaders: the code `run_points` runs eight invocations per group with, where
    // the JIT has it.
    let out = ok(&["disasm", "--jit", "x64", "--batch", QUAD]);
    let quad = compiled_example(QUAD, picajit_jit::Backend::X64);
    match quad.points_ineligibility() {
        None => {
            assert!(
                out.contains("multi-vertex (8 invocations per group)"),
                "{out}"
            );
            assert!(out.contains("emit"), "PICA instructions are shown: {out}");
        }
        Some(why) => assert!(
            out.contains(&format!("no multi-vertex code ({why})")),
            "{out}"
        ),
    }
    fails(&["disasm", "--jit", "a64", "--batch", "examples/mvp.v.pica"]);
    fails(&["disasm", "--batch", "examples/mvp.v.pica"]);
}

#[test]
fn disasm_jit_a64_prints_aarch64_code_on_any_host() {
    let out = ok(&["disasm", "--jit", "a64", "examples/skinning.v.pica"]);
    assert!(out.contains("; ==== DVLE #0"), "{out}");
    assert!(out.contains("mova"), "PICA instructions are shown: {out}");
    // yaxpeax-arm names FPCR by its encoding, s3_3_c4_c4_0.
    assert!(
        out.contains("msr s3_3_c4_c4_0"),
        "the FPCR switch is shown: {out}"
    );
    assert!(out.contains("ret"), "{out}");
}

#[test]
fn disasm_raw_words_with_kind_and_entry() {
    // setemit 0 ; emit ; end, as a geometry program.
    let bin = write_words("emit.bin", &[0xAC00_0000, 0xA800_0000, 0x8800_0000]);
    let out = ok(&["disasm", "--raw", s(&bin), "--kind", "geometry"]);
    let lines: Vec<&str> = out
        .lines()
        .map(|l| l.split(';').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('.'))
        .collect();
    assert!(lines.iter().any(|l| l.starts_with("setemit 0")), "{out}");
    assert!(lines.contains(&"emit"), "{out}");
    assert!(lines.contains(&"end"), "{out}");
}

#[test]
fn asm_reports_every_error_with_its_position() {
    let src = file(
        "bad.pica",
        ".proc main\n    mov o0, v99\n    frobnicate r0, r1\n    end\n.end\n",
    );
    let err = fails(&["asm", s(&src), "-o", s(&scratch("bad.shbin"))]);
    assert!(err.contains(":2:"), "line of the first error: {err}");
    assert!(err.contains(":3:"), "line of the second error: {err}");
}

#[test]
fn bad_command_lines_are_errors_not_panics() {
    fails(&["run", "examples/mvp.v.pica", "--set", "v16=1,2,3,4"]);
    fails(&["run", "examples/mvp.v.pica", "--set", "c0=1,2,3"]);
    fails(&["run", "examples/mvp.v.pica", "--set", "b0=maybe"]);
    fails(&["run", "examples/mvp.v.pica", "--set", "i0=1,2,3,999"]);
    fails(&["run", "examples/mvp.v.pica", "--engine", "gpu"]);
    fails(&["run", "examples/mvp.v.pica", "--entry", "nowhere"]);
    fails(&["run", "examples/mvp.v.pica", "--dvle", "7"]);
    fails(&[
        "run",
        "examples/mvp.v.pica",
        "--float",
        "f32",
        "--rounding",
        "rne",
    ]);
    fails(&["run", "no/such/file.pica"]);
    let garbage = file("garbage.shbin", b"DVLB\x01\x00\x00\x00\xff\xff");
    fails(&["info", s(&garbage)]);
    fails(&["disasm", s(&garbage)]);
    let odd = file("odd.bin", [1u8, 2, 3]);
    fails(&["disasm", "--raw", s(&odd)]);
}

#[test]
fn run_reports_budget_exhaustion() {
    let src = file(
        "spin.pica",
        ".proc main\nspin:\n    jmpu b0, spin\n    end\n.end\n",
    );
    for engine in ["interp", "auto"] {
        let err = fails(&[
            "run",
            s(&src),
            "--set",
            "b0=true",
            "--budget",
            "1000",
            "--engine",
            engine,
        ]);
        assert!(err.contains("budget"), "{engine}: {err}");
    }
}

/// A reader that stops early (`picajit … | head`) ends the tool quietly with the status of
/// SIGPIPE's default action, not with a panic message.
#[test]
fn closed_output_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    // 4096 code words disassemble to far more than a pipe buffer of output on any host, so
    // the tool is still writing when the pipe closes. (The x86-64 multi-vertex listing used
    // before is long only where that code is generated: an AArch64 build printed it whole
    // and exited 0.)
    let words = std::env::temp_dir().join(format!("picajit-cli-pipe-{}.bin", std::process::id()));
    std::fs::write(&words, [0u8; 4 * 4096]).unwrap();
    let mut child = target_command(env!("CARGO_BIN_EXE_picajit"))
        .args(["disasm", "--raw"])
        .arg(&words)
        .args(["--kind", "vertex"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("; Disassembled"), "{first}");
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&words);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}

/// Raw f24 words given to an input register reach it exactly (the example printed
/// 0x000000, 0x7fffff, 0x000000, 0x800000): hex values are register contents, decimals go
/// through the input rule.
#[test]
fn run_passes_raw_input_words_through_a_mov() {
    let src = file(
        "raw_mov.v.pica",
        ".out outpos position\n.out outmax color\n.constf zero(0.0, 0.0, 0.0, 0.0)\n\
         .proc main\n    mov outpos, v0\n    max outmax, zero, v0\n    end\n.end\n",
    );
    for engine in ["interp", "x64", "auto"] {
        for float in ["f24", "f32"] {
            let v = run_on(
                &src,
                engine,
                &[
                    "--float",
                    float,
                    "--set",
                    "v0=0x80ffff,0x7f8000,0x000001,0x800000",
                ],
            );
            assert_eq!(
                v["outputs"]["o0"],
                serde_json::json!(["0x80ffff", "0x7f8000", "0x000001", "0x800000"]),
                "{engine} {float}: {v}"
            );
            // max(0, x) = 0 > x ? 0 : x on the raw values: 0 > -s gives 0; 0 > NaN, 0 > s and
            // 0 > -0 are false and give x, payload and sign kept.
            assert_eq!(
                v["outputs"]["o1"],
                serde_json::json!(["0x000000", "0x7f8000", "0x000001", "0x800000"]),
                "{engine} {float}: {v}"
            );
        }
        // A decimal takes the input rule: 1e-30 is below 2^-62 and becomes +0.
        let v = run_on(&src, engine, &["--set", "v0=1e-30,-0,1.5,inf"]);
        assert_eq!(
            v["outputs"]["o0"],
            serde_json::json!(["0x000000", "0x800000", "0x3f8000", "0x7f0000"]),
            "{engine}: {v}"
        );
    }
}

fn write_words(name: &str, words: &[u32]) -> PathBuf {
    file(
        name,
        words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
}

/// `run --raw` takes code words as `disasm --raw` does, and `--opdescs` takes the table as
/// the C ABI does (32-bit words, up to 4096) or as a SHBIN stores it (64-bit entries).
#[test]
fn run_raw_words_with_32_and_64_bit_descriptor_tables() {
    // add o0, c95, v0 / mov o1, v1 / end
    let code = write_words("add.bin", &[0x0007_f000, 0x4c20_1000, 0x8800_0000]);
    let d32 = write_words("add.d32", &[0x6c36f]);
    let d64 = write_words("add.d64", &[0x6c36f, 0xF]);
    let mut whole = vec![0x6c36f];
    whole.resize(4096, 0xFFFF_FFFF);
    let d4096 = write_words("add.d4096", &whole);
    let mut outputs = Vec::new();
    for d in [&d32, &d64, &d4096] {
        let v = json(&[
            "run",
            "--raw",
            s(&code),
            "--opdescs",
            s(d),
            "--set",
            "c95=10,20,30,40",
            "--set",
            "v0=1,2,3,4",
            "--set",
            "v1=5",
            "--json",
        ]);
        outputs.push(v["outputs"].clone());
    }
    assert_eq!(outputs[0]["o0"][0], "0x426000", "11.0: {}", outputs[0]);
    assert_eq!(outputs[0]["o1"][3], "0x414000", "5.0: {}", outputs[0]);
    assert!(outputs.iter().all(|o| *o == outputs[0]), "{outputs:?}");
    // The same words as geometry shader and at another entry point, and the errors.
    ok(&[
        "run",
        "--raw",
        s(&code),
        "--kind",
        "geometry",
        "--entry",
        "1",
    ]);
    whole.push(0);
    let d4097 = write_words("add.d4097", &whole);
    let err = fails(&["run", "--raw", s(&code), "--opdescs", s(&d4097)]);
    assert!(err.contains("4097 operand descriptors"), "{err}");
    let err = fails(&["run", "--raw", s(&code), "--entry", "3"]);
    assert!(err.contains("entry point"), "{err}");
    let odd = file("odd.d", [1u8, 2, 3, 4, 5, 6]);
    fails(&["run", "--raw", s(&code), "--opdescs", s(&odd)]);
    // A 64-bit file read as 32-bit words is two descriptors: the first is the same.
    ok(&[
        "run",
        "--raw",
        s(&code),
        "--opdescs",
        s(&d64),
        "--opdesc-size",
        "4",
    ]);
}

/// `run` seeds the unit state (r0-r15, a0, aL, cmp) and prints it back with `--regs`, the
/// same on every engine.
#[test]
fn run_seeds_the_unit_state_and_prints_it_on_every_engine() {
    let src = file(
        "state.pica",
        ".fvec tab[8]\n.proc main\n    add o0, r0, v0\n    mov o1, tab[a0.y]\n    ifc cmp.y\n        mov o2, r3\n    .end\n    mova a0.x, v0.x\n    cmp v0, lt, ge, r1\n    mov r0, v0\n    end\n.end\n",
    );
    let mut seen = Vec::new();
    for engine in ["interp", "x64", "a64"] {
        let v = run_on(
            &src,
            engine,
            &[
                "--set",
                "r0=1,2,3,4",
                "--set",
                "r1=0x3f0000",
                "--set",
                "r3=7",
                "--set",
                "a0=5,2",
                "--set",
                "aL=-9",
                "--set",
                "cmp=false,true",
                "--set",
                "tab[2]=6",
                "--set",
                "v0=2,0,0,0",
                "--regs",
            ],
        );
        assert_eq!(v["outputs"]["o0"][0], "0x408000", "1 + 2 = 3: {v}");
        assert_eq!(v["outputs"]["o1"][0], "0x418000", "tab[a0.y = 2] = 6: {v}");
        assert_eq!(v["outputs"]["o2"][1], "0x41c000", "r3 via cmp.y: {v}");
        assert_eq!(v["a0"], serde_json::json!([2, 2]), "{v}");
        assert_eq!(v["aL"], -9, "{v}");
        // cmp v0, lt, ge, r1: 2 < 1 and 0 >= 1 are both false.
        assert_eq!(v["cmp"], serde_json::json!([false, false]), "{v}");
        assert_eq!(v["regs"]["r0"][0], "0x400000", "{v}");
        assert_eq!(v["regs"]["r3"][3], "0x41c000", "{v}");
        assert!(v["regs_f32"]["r15"].is_array(), "{v}");
        v.as_object().unwrap().clone().remove("engine");
        seen.push((v["outputs"].clone(), v["regs"].clone()));
    }
    assert!(seen.iter().all(|x| *x == seen[0]));
    let table = ok(&["run", s(&src), "--set", "r9=0.5", "--regs"]);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("r9") && l.contains("0.5")),
        "{table}"
    );
    assert!(!ok(&["run", s(&src)]).contains("r9"));
    fails(&["run", s(&src), "--set", "r16=1"]);
    fails(&["run", s(&src), "--set", "a0=1"]);
    fails(&["run", s(&src), "--set", "cmp=maybe,1"]);
}

/// Failures print one "error:" per line (the assembler's located messages are not wrapped in
/// another "picajit: error:"), and an input larger than any accepted one is refused before it
/// is read.
#[test]
fn errors_are_not_doubled_and_huge_inputs_are_refused() {
    let bad = file(
        "bad_name.v.pica",
        ".out o0 position\n.proc main\n    end\n.end\n",
    );
    for args in [
        vec!["asm", s(&bad), "-o", s(&scratch("bad.shbin"))],
        vec!["run", s(&bad)],
        vec!["info", s(&bad)],
        vec!["disasm", s(&bad)],
        vec!["run", "no/such/file.pica"],
    ] {
        let err = fails(&args);
        for line in err.lines() {
            assert!(
                line.matches("error:").count() <= 1,
                "picajit {args:?}: doubled error in {line:?}"
            );
        }
    }
    let huge = scratch("huge.pica");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(picajit::pica::asm::MAX_SOURCE_BYTES as u64 + 1)
        .unwrap();
    drop(f);
    for args in [
        vec!["asm", s(&huge), "-o", s(&scratch("huge.shbin"))],
        vec!["run", s(&huge)],
        vec!["info", s(&huge)],
    ] {
        let err = fails(&args);
        assert!(err.contains("larger than any input"), "{args:?}: {err}");
    }
    std::fs::remove_file(&huge).unwrap();
}

/// `--budget 0` means the default budget, as `PicajitEngineConfig::budget = 0` does in the C
/// ABI (tests/c/test_capi.c checks that side): a run with it matches a run without it, while
/// a budget of 1 fails.
#[test]
fn budget_zero_means_the_default_as_in_the_c_abi() {
    for example in ["examples/lights8.v.pica", "examples/point_to_disc.g.pica"] {
        let plain = json(&["run", example, "--json"]);
        let zero = json(&["run", example, "--json", "--budget", "0"]);
        assert_eq!(plain, zero, "{example}");
        assert!(plain["instructions"].as_u64().unwrap() > 1);
        fails(&["run", example, "--budget", "1"]);
    }
    let bench = [
        "bench",
        "examples/mvp.v.pica",
        "--budget",
        "0",
        "--engine",
        "interp",
        "--batch",
        "1",
    ];
    let v = json(&[&bench[..], &ONE_SAMPLE, &["--json", "-q"]].concat());
    assert_eq!(v["settings"]["budget"], 1u64 << 20, "{v}");
}

/// `info` lists `.in` declarations as inputs, apart from the uniforms (text and JSON).
#[test]
fn info_lists_inputs_apart_from_uniforms() {
    let text = ok(&["info", "examples/mvp.v.pica"]);
    assert!(text.contains("  input   inpos                v0"), "{text}");
    assert!(text.contains("  input   inclr                v1"), "{text}");
    assert!(
        text.contains("  uniform projection           c0-c3"),
        "{text}"
    );
    assert!(!text.contains("uniform inpos"), "{text}");
    let v = json(&["info", "examples/mvp.v.pica", "--json"]);
    let names = |key: &str| -> Vec<String> {
        v["dvles"][0][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("inputs"), ["inpos", "inclr"]);
    assert_eq!(names("uniforms"), ["projection", "modelview"]);
}

/// `run --max-rule` selects the reading of MAX(0, -inf) (docs/float-max.md) on every engine.
#[test]
fn run_selects_the_max_rule() {
    // max o0, c95, v0 / end
    let code = write_words("max.bin", &[0x3007_f000, 0x8800_0000]);
    let descs = write_words("max.d", &[0x6c36f]);
    for engine in ["interp", "x64", "a64"] {
        for (rule, want) in [("compare", "0x000000"), ("neg-inf-second", "0xff0000")] {
            let v = json(&[
                "run",
                "--raw",
                s(&code),
                "--opdescs",
                s(&descs),
                "--engine",
                engine,
                "--set",
                "v0=-inf",
                "--max-rule",
                rule,
                "--json",
            ]);
            assert_eq!(v["outputs"]["o0"][0], want, "{engine} {rule}: {v}");
        }
    }
    fails(&["run", "--raw", s(&code), "--max-rule", "maybe"]);
}
