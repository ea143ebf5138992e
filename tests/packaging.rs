//! Packaging facts a user relies on, checked in the files that carry them: the README says
//! what to install before its first command and how to install the tool, names the GPL-2.0
//! emulator as test-only; the manifest has no placeholder repository and builds the release
//! library without debug information; the GPL code stays out of a default build.

use std::path::Path;
use std::process::Command;

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).expect(name)
}

#[test]
fn readme_puts_prerequisites_first_and_names_the_gpl_dependency() {
    let readme = read("README.md");
    let prereq = readme
        .find("## Prerequisites")
        .expect("a Prerequisites section");
    let first_command = readme.find("```sh").expect("a command block");
    assert!(
        prereq < first_command,
        "prerequisites come before the first commands"
    );
    // The Rust version the README names is the manifest's `rust-version`.
    let manifest = read("Cargo.toml");
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("rust-version in Cargo.toml");
    assert!(
        readme.contains(&format!("Rust {version}")),
        "README lacks \"Rust {version}\""
    );
    for needed in [
        "cmake",
        "libclang-dev",
        "valgrind",
        "cargo install --path .",
        "GPL-2.0",
        "test-only",
    ] {
        assert!(readme.contains(needed), "README lacks {needed:?}");
    }
}

#[test]
fn manifest_has_no_placeholder_and_a_release_build_without_debug_info() {
    let manifest = read("Cargo.toml");
    assert!(!manifest.contains("example.invalid"));
    let release = manifest
        .split("[profile.release]")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .expect("a [profile.release] section");
    assert!(release.contains("debug = false"), "{release}");
    assert!(release.contains("strip = \"debuginfo\""), "{release}");
}

/// The standard output of `cargo ARGS` (words separated by spaces) in the repository, which
/// must succeed.
fn cargo(args: &str) -> String {
    let out = Command::new(env!("CARGO"))
        .args(args.split(' '))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo {args}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_default_build_does_not_link_unicorn() {
    let tree = cargo("tree --offline -e normal -p picajit --prefix none");
    assert!(tree.contains("picajit-jit"), "{tree}");
    assert!(
        !tree.contains("unicorn"),
        "unicorn in a default build:\n{tree}"
    );
}
