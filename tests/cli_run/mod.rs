//! Starting the `picajit` binary from the command-line tests (`tests/cli.rs`,
//! `tests/theia_cli.rs`, `tests/usc_cli.rs`, and the hostile-input ones), through the
//! target's runner when there is one (`tests/target_exe`).
#![allow(dead_code)]

use crate::target_exe::target_command;
use std::path::PathBuf;
use std::process::Output;

/// `picajit ARGS` run in the repository root, so example paths resolve.
pub fn picajit(args: &[&str]) -> Output {
    target_command(env!("CARGO_BIN_EXE_picajit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("picajit runs")
}

/// A succeeding command's standard output.
pub fn ok(args: &[&str]) -> String {
    let out = picajit(args);
    assert!(
        out.status.success(),
        "picajit {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
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
