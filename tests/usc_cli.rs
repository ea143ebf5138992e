//! `picajit … --isa usc` end to end: run (table and the exact --json format), asm/disasm
//! canonical text, info, bench, value and register parsing, errors; `--isa pica` is the
//! default and accepted explicitly.

mod cli_run;
mod target_exe;

use cli_run::{fails, ok, refuses_over_limit, same_on_every_engine};

#[test]
fn run_json_format_is_exact() {
    // Collatz step counts: 27 takes 111 steps, 1 none, 6 eight, 7 sixteen. The x86-64 JIT
    // prints the same registers where the host has AVX2 and FMA, and so does the AArch64 JIT
    // (natively, or under the emulator in builds with it).
    let out = same_on_every_engine(
        &[
            "run",
            "--isa",
            "usc",
            "examples/usc/divergent_loop.usc",
            "--instances",
            "4",
            "--set",
            "vi0=27,1,6,7",
            "--json",
        ],
        picajit::jit::usc::x64::available(),
        "a64-emu",
    );
    assert_eq!(
        out.trim(),
        r#"{"isa":"usc","engine":"interp","instances":4,"status":"done","steps":1226,"regs":{"r0":[1,1,1,1],"r1":[111,0,8,16],"r2":[111,0,8,16],"r10":[0,0,0,0],"r11":[0,1,1,1],"vi0":[27,1,6,7],"p0":[0,0,0,0]}}"#
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["regs"]["r1"][0], 111);
}

#[test]
fn run_values_registers_and_budget() {
    let dir = std::env::temp_dir().join(format!("picajit-usc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("add.usc");
    std::fs::write(
        &prog,
        "0 : fadd ft0, vi0, sh0\n    mov r0, ft0\n1 : if (p0) mov i1, c1\n",
    )
    .unwrap();
    let p = prog.to_str().unwrap();
    // Floats by '.' or a trailing 'f', words in decimal, negative decimal and hex; shared
    // registers repeated per instance; p0 per instance; the default is 16 instances.
    let out = ok(&[
        "run",
        "--isa",
        "usc",
        p,
        "--engine",
        "interp",
        "--instances",
        "2",
        "--set",
        "vi0=1.5,2f",
        "--set",
        "sh0=0x3f800000",
        "--set",
        "p0=1,0",
        "--json",
    ]);
    assert_eq!(
        out.trim(),
        r#"{"isa":"usc","engine":"interp","instances":2,"status":"done","steps":2,"regs":{"r0":[1075838976,1077936128],"vi0":[1069547520,1073741824],"i1":[1,0],"sh0":[1065353216,1065353216],"p0":[1,0]}}"#
    );
    let out = ok(&[
        "run",
        "--isa=usc",
        p,
        "--set",
        "r5=-1",
        "--json",
        "--engine",
        "interp",
    ]);
    assert!(out.contains(r#""instances":16"#), "{out}");
    assert!(
        out.contains(&format!(r#""r5":[{}]"#, vec!["4294967295"; 16].join(","))),
        "{out}"
    );
    // Table output.
    let out = ok(&[
        "run",
        "--isa",
        "usc",
        p,
        "--instances",
        "1",
        "--set",
        "vi0=1.0",
        "--set",
        "sh0=1.0",
    ]);
    assert!(out.contains("r0     40000000"), "{out}");
    // Budget.
    let lp = dir.join("loop.usc");
    std::fs::write(&lp, "0 : mov r0, c1\n1 : ba 0\n").unwrap();
    let out = ok(&[
        "run",
        "--isa",
        "usc",
        lp.to_str().unwrap(),
        "--budget",
        "7",
        "--json",
    ]);
    assert!(out.contains(r#""status":"budget","steps":7"#), "{out}");
    // Errors.
    for (args, what) in [
        (vec!["--instances", "17"], "1 to 16"),
        (vec!["--instances", "0"], "1 to 16"),
        (vec!["--set", "vi0=1,2,3"], "one per instance"),
        (vec!["--set", "sh0=1,2"], "shared registers take one value"),
        (vec!["--set", "c1=3"], "read-only"),
        (vec!["--set", "q0=3"], "not a register"),
        (vec!["--set", "r0=zz"], "bad value"),
        (vec!["--set", "p0=2"], "0 or 1"),
        (vec!["--engine", "z80"], "expected jit"),
    ] {
        let mut a = vec!["run", "--isa", "usc", p];
        a.extend(args);
        let err = fails(&a);
        assert!(err.contains(what), "{a:?}: {err}");
    }
    let bad = dir.join("bad.usc");
    std::fs::write(&bad, "0 : fadd ft0, sh0, sh1\n    fmul ft0, sh2, sh3\n").unwrap();
    let err = fails(&["run", "--isa", "usc", bad.to_str().unwrap()]);
    assert!(
        err.contains("bad.usc:2:5: two phase 0 instructions"),
        "{err}"
    );
    let unsup = dir.join("unsup.usc");
    std::fs::write(&unsup, "0 : fadd ft0, sh0, sh1\n1 : fdsx ft0, r2\n").unwrap();
    let err = fails(&["run", "--isa", "usc", unsup.to_str().unwrap()]);
    assert!(err.contains("unsup.usc:2:5: not supported: fdsx"), "{err}");
    // A file over the parser's limit is refused before it is read (a sparse file: its length
    // is all that is looked at).
    refuses_over_limit(
        "usc",
        &dir.join("huge.usc"),
        picajit::usc::parse::MAX_SOURCE_BYTES,
        &["run", "asm", "info"],
        "larger than any USC source (at most 4194304)",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn asm_disasm_info_bench() {
    let text = ok(&["disasm", "--isa", "usc", "examples/usc/lighting.usc"]);
    assert!(text.starts_with("0 :\n    fmul ft0, vi0, vi0\n"), "{text}");
    assert!(text.contains("    fmul.sat ft0, r3, r8\n"));
    assert_eq!(
        ok(&["asm", "--isa", "usc", "examples/usc/lighting.usc"]),
        text
    );
    let info = ok(&["info", "--isa", "usc", "examples/usc/divergent_loop.usc"]);
    assert!(info.contains("13 groups"), "{info}");
    assert!(info.contains("conditional group(s)"), "{info}");
    assert!(info.contains("runs on: interp"), "{info}");
    let out = ok(&["bench", "--isa", "usc", "--time-ms", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v.as_array().unwrap();
    // The interpreter and the host's JIT (x86-64 with AVX2 and FMA, or AArch64).
    let host_jit = picajit::jit::usc::x64::available()
        || picajit::jit::Backend::host() == Some(picajit::jit::Backend::A64);
    let engines = if host_jit { 2 } else { 1 };
    assert_eq!(rows.len(), 3 * engines);
    assert_eq!(rows[rows.len() - 1]["program"], "divergent_loop");
    let out = ok(&[
        "bench",
        "--isa",
        "usc",
        "--time-ms",
        "1",
        "--instances",
        "4",
    ]);
    assert!(out.contains("vertex_transform"), "{out}");
}

#[test]
fn isa_pica_is_the_default_and_accepted() {
    let a = ok(&["info", "examples/mvp.v.pica"]);
    let b = ok(&["info", "--isa", "pica", "examples/mvp.v.pica"]);
    assert_eq!(a, b);
    let err = fails(&["info", "--isa", "z80", "examples/mvp.v.pica"]);
    assert!(
        err.contains("expected pica (the default), theia or usc"),
        "{err}"
    );
    let err = fails(&["info", "--isa", "usc", "--isa", "pica", "x"]);
    assert!(err.contains("twice"), "{err}");
}

/// `disasm --jit x64|a64` prints the code the USC JIT generates, as every ISA's `disasm --jit`
/// does: the generator's byte count in the heading, then its instructions and constant pool.
#[test]
fn disasm_jit_prints_the_generated_host_code() {
    let path = "examples/usc/lighting.usc";
    let text = std::fs::read_to_string(path).unwrap();
    let p = picajit::usc::compile(&text, Default::default()).unwrap();
    for (name, (code, len, _, native)) in [
        ("x64", picajit::jit::usc::x64::generate(&p).unwrap()),
        ("a64", picajit::jit::usc::a64::generate(&p).unwrap()),
    ] {
        let out = ok(&["disasm", "--isa", "usc", path, "--jit", name]);
        let heading = format!(
            "; {name}, {len} bytes, {native} of {} groups",
            p.groups.len()
        );
        assert!(out.starts_with(&heading), "{out}");
        assert!(out.contains("  00000  "), "{out}");
        let pool = format!("; constant pool: {} bytes\n", code.len() - len);
        assert!(out.ends_with(&pool), "{name}");
    }
    assert!(fails(&["disasm", "--isa", "usc", path, "--jit", "z80"]).contains("z80"));
}
