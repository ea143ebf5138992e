//! `picajit … --isa theia` end to end: asm, disasm, run (text and the exact JSON format),
//! info, bench, `--isa pica` as the default, and the error paths.

use serde_json::Value;
use std::path::PathBuf;

mod cli_run;
mod target_exe;
mod theia_scenes;

use cli_run::{fails, json, ok, refuses_over_limit, same_on_every_engine};
use theia_scenes::RENDERS;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-theia-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const RAY: &str = "examples/theia/ray_triangle.theia";

/// The host's JIT (an AArch64 build has no emulator for x86-64 code).
const HOST: &str = if cfg!(target_arch = "x86_64") {
    "x64"
} else {
    "a64"
};

/// `picajit run --isa theia FILE --json EXTRA…`, parsed.
fn run_json(file: &str, extra: &[&str]) -> Value {
    json(&[&["run", "--isa", "theia", file, "--json"], extra].concat())
}

/// The arguments of `picajit render --isa theia SCENE EXTRA… -o OUT`.
fn render<'a>(scene: &'a str, extra: &[&'a str], out: &'a str) -> Vec<&'a str> {
    [
        &["render", "--isa", "theia", scene][..],
        extra,
        &["-o", out],
    ]
    .concat()
}

const SCENE: &str = "examples/theia/scene";

/// `f` given `args` followed by the hit of `tests/theia_asm.rs`'s ray-triangle case, as
/// --set arguments.
fn with_hit<T>(args: &[&str], f: impl FnOnce(&[&str]) -> T) -> T {
    let q = |v: f64| ((v * 131072.0) as i64).to_string();
    let sets = [
        format!("CREG_RAY_DIRECTION={},{},{}", q(0.1), q(0.05), q(1.0)),
        format!("44={},{},{}", q(-1.0), q(-1.0), q(5.0)),
        format!("CREG_V1=0x{:x},{},{}", 2 << 17, q(-1.0), q(5.0)),
        format!("CREG_V2={},{},{}", q(-1.0), q(2.0), q(5.0)),
    ];
    let mut argv = args.to_vec();
    for set in &sets {
        argv.extend(["--set", set]);
    }
    f(&argv)
}

#[test]
fn asm_and_disasm_round_trip() {
    let mem = scratch("ray.mem");
    ok(&["asm", "--isa", "theia", RAY, "-o", mem.to_str().unwrap()]);
    let text = std::fs::read_to_string(&mem).unwrap();
    assert!(
        text.starts_with("72 //Number of ioctects in file\n"),
        "{text}"
    );
    assert_eq!(
        ok(&["asm", "--isa", "theia", RAY]),
        text,
        "stdout when no -o"
    );
    let src = ok(&["disasm", "--isa", "theia", mem.to_str().unwrap()]);
    let src_path = scratch("ray_again.theia");
    std::fs::write(&src_path, src).unwrap();
    let words = |t: &str| picajit::theia::MemImage::parse(t).unwrap().words;
    assert_eq!(
        words(&ok(&["asm", "--isa=theia", src_path.to_str().unwrap()])),
        words(&text)
    );
}

#[test]
fn run_json_is_exactly_the_documented_object() {
    for profile in ["rtl", "manual"] {
        let out = with_hit(
            &["run", "--isa", "theia", RAY, "--json", "--profile", profile],
            ok,
        );
        assert_eq!(out.lines().count(), 1, "one object on one line");
        // The default engine: the host's JIT.
        let engine = picajit::jit::Backend::host().map_or("interp".into(), |b| b.to_string());
        assert!(
            out.starts_with(&format!(
                "{{\"isa\":\"theia\",\"engine\":\"{engine}\",\"profile\":\"{profile}\",\"status\":\"returned\",\"return_value\":true,\"steps\":23,\"regs\":{{\"0\":[0,0,0],\"1\":"
            )),
            "{out}"
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        let regs = v["regs"].as_object().unwrap();
        let n = if profile == "rtl" { 128 } else { 132 };
        assert_eq!(regs.len(), n);
        for i in 0..n {
            assert_eq!(regs[&i.to_string()].as_array().unwrap().len(), 3);
        }
        // t = 5.0 in R9 (71 + 8), V0 as set, signed integers
        assert_eq!(regs["79"], serde_json::json!([655360, 655360, 655360]));
        assert_eq!(regs["44"], serde_json::json!([-131072, -131072, 655360]));
        assert_eq!(regs["46"][0], 262144);
    }
    // budget and stall statuses, return_value null
    let v = run_json(RAY, &["--budget", "4"]);
    assert_eq!(v["status"], "budget");
    assert_eq!(v["return_value"], Value::Null);
    assert_eq!(v["steps"], 4);
    let stall = scratch("stall.theia");
    std::fs::write(
        &stall,
        "\tSETX R1 32'h5\n\tINTP R2 R1 VOID\n\tRETURN RT_TRUE\n",
    )
    .unwrap();
    let s = stall.to_str().unwrap();
    let v = run_json(s, &[]);
    assert_eq!(
        (v["status"].as_str(), v["steps"].as_u64()),
        (Some("stalled"), Some(1))
    );
    let v = run_json(s, &["--profile", "manual"]);
    assert_eq!(
        (v["status"].as_str(), v["return_value"].as_bool()),
        (Some("returned"), Some(true))
    );
    assert_eq!(
        v["regs"]["72"],
        serde_json::json!([0, 0, 0]),
        "INTP of 5/2^17 is 0"
    );
    // the miss returns false
    assert_eq!(run_json(RAY, &[])["return_value"], false);
}

#[test]
fn run_text_entry_and_set_forms() {
    let out = with_hit(&["run", "--isa", "theia", RAY], ok);
    assert!(out.contains("returned RT_TRUE after 23 steps"), "{out}");
    assert!(out.contains("R9") && out.contains("5.000000"), "{out}");
    // --entry by index, label and entry name; .mem input
    let mem = scratch("ray2.mem");
    ok(&["asm", "--isa", "theia", RAY, "-o", mem.to_str().unwrap()]);
    for entry in ["0", "ENTRYPOINT_ADRR_MAIN"] {
        let v = run_json(RAY, &["--entry", entry]);
        assert_eq!(v["steps"], 7, "{entry}: the miss at the parallel test");
    }
    assert_eq!(run_json(RAY, &["--entry", "MISS"])["steps"], 1);
    let mem = mem.to_str().unwrap();
    let v = run_json(mem, &["--entry", "22"]);
    // A run that starts at a RETURN: the RTL executes it but never reports done (the fetch
    // unit reports the end when an instruction completes while it presents RETURN); the
    // manual profile returns.
    assert_eq!(
        (
            v["steps"].as_u64(),
            v["status"].as_str(),
            v["return_value"].is_null()
        ),
        (Some(1), Some("stalled"), true)
    );
    let v = run_json(mem, &["--entry", "22", "--profile", "manual"]);
    assert_eq!(
        (v["steps"].as_u64(), v["return_value"].as_bool()),
        (Some(1), Some(true))
    );
    // hex and negative values, any register by address (a budget of one instruction, which
    // writes none of the rows read here; 0 would be the default budget)
    let v = run_json(
        RAY,
        &[
            "--budget",
            "1",
            "--set",
            "0=0xFFFFFFFF,-2147483648,2147483647",
            "--set",
            "R12=1,2,3",
        ],
    );
    assert_eq!(
        v["regs"]["0"],
        serde_json::json!([-1, -2147483648, 2147483647])
    );
    assert_eq!(v["regs"]["82"], serde_json::json!([1, 2, 3]));
    // the rtl profile (the default) decodes 7 bits: 128 is row 0
    for (profile, row) in [(&[][..], "0"), (&["--profile", "manual"][..], "128")] {
        let set = ["--budget", "1", "--set", "OREG_PIXEL_COLOR=4,5,6"];
        let v = run_json(RAY, &[&set[..], profile].concat());
        assert_eq!(v["regs"][row], serde_json::json!([4, 5, 6]), "{profile:?}");
    }
}

#[test]
fn engines_give_the_same_json() {
    for profile in ["rtl", "manual"] {
        let args = ["run", "--isa", "theia", RAY, "--json", "--profile", profile];
        // The x86-64 JIT runs only on x86-64 hosts (an AArch64 build has no emulator for it).
        with_hit(&args, |argv| {
            same_on_every_engine(argv, cfg!(target_arch = "x86_64"), "emulate-a64")
        });
    }
}

#[test]
fn info_and_bench() {
    let t = ok(&["info", "--isa", "theia"]);
    assert!(
        t.contains("XCHANGEY") && t.contains("never completes"),
        "{t}"
    );
    let t = ok(&["info", "--isa", "theia", "--profile", "manual"]);
    assert!(!t.contains("XCHANGEY     manual  never"), "{t}");
    let t = ok(&["info", "--isa", "theia", RAY]);
    assert!(
        t.contains("24 instructions") && t.contains("ENTRYPOINT_ADRR_MAIN: instruction 0"),
        "{t}"
    );
    assert!(t.contains("DIV          x3"), "{t}");
    let t = ok(&["bench", "--isa", "theia", "--time-ms", "20"]);
    assert!(t.contains("ray_triangle") && t.contains("grayscale"), "{t}");
}

#[test]
fn pica_stays_the_default() {
    let a = ok(&["info", "examples/mvp.v.pica"]);
    assert_eq!(ok(&["info", "--isa", "pica", "examples/mvp.v.pica"]), a);
    assert_eq!(ok(&["info", "examples/mvp.v.pica", "--isa=pica"]), a);
}

#[test]
fn errors() {
    let bad = scratch("bad.theia");
    std::fs::write(&bad, "\tADD R1 R2\n\tFROB R1 R2 R3\n").unwrap();
    let b = bad.to_str().unwrap();
    assert!(fails(&["asm", "--isa", "theia", b]).contains("line 2: undefined instruction 'FROB'"));
    assert!(fails(&["info", "--isa", "usc9"]).contains("unknown --isa"));
    assert!(fails(&["run", "--isa"]).contains("--isa needs a value"));
    assert!(fails(&["run", "--isa", "theia", "--isa", "theia", RAY]).contains("twice"));
    assert!(fails(&["run", "--isa", "theia", RAY, "--set", "R1=1,2"]).contains("three values"));
    assert!(
        fails(&["run", "--isa", "theia", RAY, "--set", "R1=1,2,0x100000000"]).contains("32 bits")
    );
    assert!(
        fails(&["run", "--isa", "theia", RAY, "--set", "FOO=1,2,3"]).contains("unknown register")
    );
    assert!(fails(&[
        "run",
        "--isa",
        "theia",
        RAY,
        "--profile",
        "manual",
        "--set",
        "200=1,2,3"
    ])
    .contains("0-131"));
    assert!(fails(&["run", "--isa", "theia", RAY, "--entry", "99"]).contains("24 instructions"));
    assert!(fails(&["run", "--isa", "theia", RAY, "--entry", "NOWHERE"]).contains("not an index"));
    let und = scratch("undef.mem");
    let mut mem = String::from("26 //\n");
    for rom in [0, 44, 47, 69, 157, 232, 248, 190, 55, 276, 278, 37] {
        mem.push_str(&format!("00000000 {rom:08X}\n"));
    }
    mem.push_str("00060000 00000000\n");
    std::fs::write(&und, mem).unwrap();
    let e = fails(&["run", "--isa", "theia", und.to_str().unwrap()]);
    assert!(e.contains("undefined THEIA operation 0x0006"), "{e}");
    assert!(fails(&["disasm", "--isa", "theia", und.to_str().unwrap()]).contains("not defined"));
    let jump = scratch("jump.theia");
    std::fs::write(&jump, "\tJMP 40000 VOID VOID\n").unwrap();
    assert!(fails(&["run", "--isa", "theia", jump.to_str().unwrap()]).contains("no code is loaded"));
    assert!(fails(&["disasm", "--isa", "theia", "no/such/file.mem"]).contains("no/such/file.mem"));
    // Sources and .mem files over the readers' limit are refused before they are read (sparse
    // files: their length is all that is looked at).
    for name in ["huge.theia", "huge.mem"] {
        refuses_over_limit(
            "theia",
            &scratch(name),
            picajit::theia::asm::MAX_SOURCE_BYTES,
            &["run", "asm", "disasm", "info"],
            "larger than any THEIA source or .mem file (at most 16777216)",
        );
    }
}

#[test]
fn render_own_scene() {
    let out = std::env::temp_dir().join(format!("picajit_theia_render_{}.ppm", std::process::id()));
    let out_s = out.to_str().unwrap();
    let text = ok(&render(
        SCENE,
        &[
            "--shader",
            "examples/theia/scene/scene.theia",
            "--engine",
            HOST,
            "--cores",
            "2",
            "--threads",
            "1",
            "--compare",
            "examples/theia/scene/Reference.ppm",
        ],
        out_s,
    ));
    assert!(text.contains(&format!("rendered 4x2 on {HOST}")), "{text}");
    assert!(text.contains("s per frame"), "{text}");
    assert!(
        text.contains("0 differing pixels, largest channel difference 0"),
        "{text}"
    );
    let ppm = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(
        ppm,
        std::fs::read_to_string("examples/theia/scene/Reference.ppm").unwrap()
    );
    // More GPU cores than Params.mem configures is a clear error.
    let err = fails(&render(SCENE, &["--cores", "3"], out_s));
    assert!(err.contains("3 cores, but Params.mem has 2"), "{err}");
    // The bench times frames of a scene on both engines.
    let text = ok(&[
        "bench",
        "--isa",
        "theia",
        "--scene",
        SCENE,
        "--frames",
        "2",
        "--threads",
        "2",
        "--time-ms",
        "20",
        "--rounds",
        "1",
    ]);
    assert!(text.contains("THEIA frames"), "{text}");
    // One row per engine and host thread count (1..2, the scene's two GPU cores).
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("examples/theia/scene"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    let jit = if cfg!(target_arch = "aarch64") {
        "a64"
    } else {
        "x64"
    };
    for (row, (engine, threads)) in
        rows.iter()
            .zip([("interp", "1"), ("interp", "2"), (jit, "1"), (jit, "2")])
    {
        // 148 instructions: 136 plus the NOP that starts CPPU and USERCONSTANTS (per core)
        // and RGU (per pixel)
        assert_eq!(&row[1..6], &["4x2", "2", "148", engine, threads], "{text}");
    }
    // A scene directory without its files is a clear error.
    let err = fails(&render("examples/theia", &[], out_s));
    assert!(err.contains("Instructions.mem: "), "{err}");
}

/// `render --rom-reading`: both readings of the original project's ROM through the command
/// line, with every differing-pixel count and largest channel difference against each scene's
/// `Reference.ppm` (and of scenes/example1 against the RTL's image of its inputs) that the
/// README's pixel table gives (`tests/theia_scenes`; exactly: `tests/theia_render.rs` holds
/// the library to them as bounds), when `PICAJIT_THEIA_DIR` names the checkout; and the errors
/// for a reading that does not exist and for a reading other than the committed ROM without a
/// checkout.
#[test]
fn render_rom_readings() {
    let out = scratch("rom_reading.ppm");
    let out_s = out.to_str().unwrap();
    // Errors first: they need no checkout.
    let err = fails(&render(SCENE, &["--rom-reading", "2009"], out_s));
    assert!(
        err.contains("invalid value '2009'") && err.contains("early-2010"),
        "{err}"
    );
    let no_checkout = target_exe::target_command(env!("CARGO_BIN_EXE_picajit"))
        .args(render(SCENE, &["--rom-reading", "early-2010"], out_s))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PICAJIT_THEIA_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&no_checkout.stderr);
    assert!(
        !no_checkout.status.success() && !err.contains("panicked"),
        "{err}"
    );
    assert!(
        err.contains("--rom-reading early-2010 needs the ROM: a checkout of the original project"),
        "{err}"
    );
    let Some(root) = std::env::var_os("PICAJIT_THEIA_DIR") else {
        eprintln!("SKIPPED (pixel counts): set PICAJIT_THEIA_DIR to a checkout of the original THEIA project (freecores/theia_gpu, 032c448) to render its scenes with both ROM readings");
        return;
    };
    let root = PathBuf::from(root);
    for (dir, shader, reference, reading, px, max) in RENDERS {
        let scene = root.join(dir);
        let reference = scene.join(reference);
        let shader_path = shader.map(|s| scene.join(s));
        let mut extra = vec![
            "--engine",
            HOST,
            "--threads",
            "2",
            "--rom-reading",
            reading,
            "--compare",
            reference.to_str().unwrap(),
        ];
        if let Some(p) = &shader_path {
            extra.extend(["--shader", p.to_str().unwrap()]);
        }
        let text = ok(&render(scene.to_str().unwrap(), &extra, out_s));
        let want = format!("{px} differing pixels, largest channel difference {max}");
        assert!(
            text.contains(&want),
            "{dir} --rom-reading {reading}: {text}"
        );
    }
    std::fs::remove_file(&out).ok();
}

/// `disasm --jit x64|a64` prints the code the THEIA JIT generates for a source or `.mem` file
/// and an entry point, as every ISA's `disasm --jit` does, to standard output or `-o`.
#[test]
fn disasm_jit_prints_the_generated_host_code() {
    let p = picajit::theia::assemble(&std::fs::read_to_string(RAY).unwrap()).unwrap();
    let code = picajit::interp::theia::exec::Code::imem(p.imem());
    let entry = picajit::theia::asm::imem_address(0);
    for (name, backend) in [
        ("x64", picajit::jit::Backend::X64),
        ("a64", picajit::jit::Backend::A64),
    ] {
        let profile = picajit::interp::theia::Profile::Rtl;
        let bytes = picajit::jit::theia::generate(&code, profile, backend, &[entry]).unwrap();
        let out = ok(&["disasm", "--isa", "theia", RAY, "--jit", name]);
        let heading = format!(
            "; {name}, {} bytes, profile rtl, entry {entry:#06x}\n",
            bytes.len()
        );
        assert!(out.starts_with(&heading), "{out}");
        assert!(out.contains("  00000  "), "{out}");
        assert!(out.ends_with("; constant pool: 0 bytes\n"), "{name}");
        let file = scratch(&format!("ray_{name}.s"));
        ok(&[
            "disasm",
            "--isa",
            "theia",
            RAY,
            "--jit",
            name,
            "-o",
            file.to_str().unwrap(),
        ]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), out);
    }
}
