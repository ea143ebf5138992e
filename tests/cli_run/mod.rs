//! Starting the `picajit` binary from the command-line tests (`tests/cli.rs`,
//! `tests/bench_cli.rs`, `tests/theia_cli.rs`, `tests/usc_cli.rs`, and the hostile-input
//! ones), through the target's runner when there is one (`tests/target_exe`), and the checks
//! that the tests of every ISA make the same way.
#![allow(dead_code)]

use crate::target_exe::target_command;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `picajit ARGS` run in the repository root, so example paths resolve.
pub fn picajit(args: &[&str]) -> Output {
    target_command(env!("CARGO_BIN_EXE_picajit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("picajit runs")
}

/// A command that must succeed, and all it printed.
pub fn succeeds(args: &[&str]) -> Output {
    let out = picajit(args);
    assert!(
        out.status.success(),
        "picajit {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A succeeding command's standard output.
pub fn ok(args: &[&str]) -> String {
    String::from_utf8(succeeds(args).stdout).expect("UTF-8 output")
}

/// The shortest measurement of `picajit bench`: one sample of each kind, 1 ms each.
pub const ONE_SAMPLE: [&str; 6] = ["--time-ms", "1", "--samples", "1", "--compile-samples", "1"];

/// A succeeding command's standard output parsed as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

/// The output of `picajit ARGS --engine interp`, after checking that each JIT prints the
/// same but for the engine's name in `"engine":"…"`: the x86-64 JIT where `x64` says this
/// host runs it, and the AArch64 JIT, natively or under the emulator; a build that runs no
/// AArch64 code refuses it with a message naming `a64_feature`, without a panic.
pub fn same_on_every_engine(args: &[&str], x64: bool, a64_feature: &str) -> String {
    let on = |engine: &'static str| [args, &["--engine", engine]].concat();
    let as_interp = |out: String, engine: &str| {
        out.replace(&format!(r#""engine":"{engine}""#), r#""engine":"interp""#)
    };
    let want = ok(&on("interp"));
    if x64 {
        assert_eq!(as_interp(ok(&on("x64")), "x64"), want, "x64: {args:?}");
    }
    let a64 = picajit(&on("a64"));
    if a64.status.success() {
        let got = String::from_utf8(a64.stdout).expect("UTF-8 output");
        assert_eq!(as_interp(got, "a64"), want, "a64: {args:?}");
    } else {
        let err = String::from_utf8_lossy(&a64.stderr);
        assert!(
            err.contains(a64_feature) && !err.contains("panicked"),
            "{err}"
        );
    }
    want
}

/// `path` made a sparse file one byte longer than `max`, which each `picajit CMD --isa ISA
/// PATH` of `commands` refuses with `message` before reading it (its length is all that is
/// looked at); the file is removed afterwards.
pub fn refuses_over_limit(isa: &str, path: &Path, max: usize, commands: &[&str], message: &str) {
    std::fs::File::create(path)
        .expect("create")
        .set_len(max as u64 + 1)
        .expect("set_len");
    let p = path.to_str().expect("UTF-8 path");
    for cmd in commands {
        let err = fails(&[cmd, "--isa", isa, p]);
        assert!(err.contains(message), "{cmd} {p}: {err}");
    }
    std::fs::remove_file(path).expect("remove");
}

/// A failing command: non-zero exit, an error message, never a panic.
pub fn fails(args: &[&str]) -> String {
    let out = picajit(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "picajit {args:?} should fail");
    assert!(
        !err.contains("panicked"),
        "picajit {args:?} panicked: {err}"
    );
    assert!(!err.trim().is_empty(), "picajit {args:?} printed no error");
    err
}

/// How malformed input must be refused: [`fails`], with a message that says "error" and no
/// backtrace hint.
pub fn rejects(args: &[&str]) {
    let err = fails(args);
    assert!(
        !err.contains("RUST_BACKTRACE"),
        "picajit {args:?} panicked: {err}"
    );
    assert!(
        err.contains("error"),
        "picajit {args:?} printed no error: {err}"
    );
}

/// `bytes` written to `name` in a scratch directory named after `tag` and this process.
pub fn scratch(tag: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}
