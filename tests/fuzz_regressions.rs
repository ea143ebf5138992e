//! One test per crash found by the fuzz targets (`fuzz/`, `scripts/fuzz.sh`) and the
//! hostile-input sweep that came with them (issue 6), named after what it exposed. Each
//! reproduces the original input; the fix is described at the test.

use picajit::pica::asm::{assemble, SourceFile};
use picajit::pica::shbin::Shbin;
use std::path::{Path, PathBuf};
use target_exe::target_command;

mod target_exe;

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-fuzz-regressions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

/// Runs `picajit ARGS`: it must fail with an error message and without a panic.
fn rejects(args: &[&str]) {
    let out = target_command(env!("CARGO_BIN_EXE_picajit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("picajit runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "picajit {args:?} should fail");
    assert!(
        !err.contains("panicked"),
        "picajit {args:?} panicked: {err}"
    );
    assert!(
        err.contains("error"),
        "picajit {args:?}: no error message: {err}"
    );
}

/// `--set NAME[K]=...` added K to the uniform's first register unchecked: a debug build
/// panicked with "attempt to add with overflow" for `projection[65535]`, and a uniform-table
/// entry with `last < first` (a malformed SHBIN) underflowed the element count of the error
/// message. Fixed in `src/cli/values.rs` with checked arithmetic.
#[test]
fn cli_set_array_element_index_overflow() {
    rejects(&["run", "examples/mvp.v.pica", "--set", "projection[65535]=1"]);
    rejects(&["run", "examples/mvp.v.pica", "--set", "projection[65500]=1"]);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mvp.v.pica");
    let text = std::fs::read_to_string(path).expect("example");
    let mut shbin = assemble(&[SourceFile {
        name: "mvp.v.pica",
        text: &text,
    }])
    .expect("assembles");
    shbin = Shbin::parse(&shbin.to_bytes()).expect("parses");
    let u = shbin.dvles[0]
        .uniforms
        .iter_mut()
        .find(|u| u.name == "projection")
        .expect("uniform");
    u.last = u.first - 1;
    let file = scratch("inverted_uniform.shbin", &shbin.to_bytes());
    let p = file.to_str().expect("path");
    rejects(&["run", p, "--set", "projection=1"]);
    rejects(&["run", p, "--set", "projection[3]=1"]);
}
