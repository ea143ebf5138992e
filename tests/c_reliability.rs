//! Reliability of the C ABI, from C: `tests/c/test_hostile.c` calls every entry point with
//! extreme arguments and expects the documented status within a time bound (natively and
//! under valgrind memcheck); `tests/c/test_stress.c` runs threads sharing an engine, with
//! engines of their own, batches split across the pool, geometry callbacks and shaders
//! created and destroyed while others run, against a single-threaded reference
//! (`scripts/tsan.sh` runs it under ThreadSanitizer).
//!
//! The C programs are built as `tests/capi.rs` builds its own (same flags, this build's
//! shared library); see there for `CC`, `PICAJIT_TEST_RUNNER` and `PICAJIT_SKIP_VALGRIND`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use target_exe::target_command;

mod target_exe;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("profile directory")
        .to_path_buf()
}

/// The directory holding this build's `libpicajit` shared library.
fn lib_dir() -> PathBuf {
    let name = if cfg!(target_os = "macos") {
        "libpicajit.dylib"
    } else if cfg!(windows) {
        "picajit.dll"
    } else {
        "libpicajit.so"
    };
    let profile = profile_dir();
    [profile.join("deps"), profile.clone()]
        .into_iter()
        .find(|d| d.join(name).exists())
        .unwrap_or_else(|| panic!("{name} not found under {}", profile.display()))
}

fn work_dir(name: &str) -> PathBuf {
    let dir = profile_dir().join("capi-tests").join(name);
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

fn run(cmd: &mut Command) -> Output {
    // As in tests/capi.rs: load this build's library, not one a `cargo build` left behind.
    cmd.env_remove("LD_LIBRARY_PATH");
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    if !out.status.success() {
        panic!(
            "{shown} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// `tests/c/NAME.c` built against the header and the shared library.
fn build(name: &str) -> PathBuf {
    let exe = work_dir(name).join(name);
    let lib = lib_dir();
    run(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                "-std=c11",
                "-pthread",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-Wstrict-prototypes",
            ])
            .args(["-g", "-O1", "-D_POSIX_C_SOURCE=200809L", "-I"])
            .arg(manifest_dir().join("include"))
            .arg(manifest_dir().join(format!("tests/c/{name}.c")))
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib.display()))
            .arg("-lpicajit")
            .arg(format!("-Wl,-rpath,{}", lib.display())),
    );
    if cfg!(windows) {
        // MinGW linked the import library (libpicajit.dll.a; the rpath is ignored there): the
        // loader looks for the DLL beside the program.
        std::fs::copy(lib.join("picajit.dll"), work_dir(name).join("picajit.dll"))
            .expect("copy the DLL beside the program");
    }
    exe
}

fn valgrind_available() -> bool {
    if target_exe::runner().is_some() {
        return false;
    }
    let present = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present && std::env::var_os("PICAJIT_SKIP_VALGRIND").is_none_or(|v| v != "1") {
        panic!("valgrind not found: install it, or set PICAJIT_SKIP_VALGRIND=1");
    }
    present
}

/// SHBIN image of an example shader, assembled with the library's own assembler.
fn example_shbin(name: &str, dir: &Path) -> PathBuf {
    let path = manifest_dir().join("examples").join(name);
    let text = std::fs::read_to_string(&path).expect("read example");
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile {
        name: &path.display().to_string(),
        text: &text,
    }])
    .expect("example assembles");
    let out = dir.join(name.replace(".pica", ".shbin"));
    std::fs::write(&out, shbin.to_bytes()).expect("write SHBIN");
    out
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_entry_point_answers_extreme_arguments_in_time() {
    let exe = build("test_hostile");
    let start = Instant::now();
    let out = run(&mut target_command(&exe));
    let text = stdout_of(&out);
    eprintln!("{text}({:.1} s)", start.elapsed().as_secs_f64());
    assert!(text.contains(" passed, 0 failed"), "{text}");
    assert!(start.elapsed() < Duration::from_secs(120));
    if valgrind_available() {
        run(Command::new("valgrind")
            .env("PICAJIT_UNDER_VALGRIND", "1")
            .args(["--quiet", "--error-exitcode=99", "--leak-check=full"])
            .args(["--errors-for-leak-kinds=definite,indirect"])
            .args(["--show-leak-kinds=definite,indirect"])
            .arg(&exe));
    }
}

/// The stress test's programs: four vertex shaders and a point-mode geometry shader.
fn stress_args() -> Vec<PathBuf> {
    let dir = work_dir("test_stress");
    let mut args: Vec<PathBuf> = [
        "mvp.v.pica",
        "lighting.v.pica",
        "lights_loop.v.pica",
        "branches.v.pica",
    ]
    .iter()
    .map(|n| example_shbin(n, &dir))
    .collect();
    args.push("--gs".into());
    args.push(example_shbin("point_to_quad.g.pica", &dir));
    args
}

#[test]
fn threads_sharing_engines_agree_with_one_thread() {
    let exe = build("test_stress");
    let start = Instant::now();
    let out = run(target_command(&exe)
        .args(stress_args())
        .env("PICAJIT_STRESS_THREADS", "4")
        .env("PICAJIT_STRESS_OPS", "150"));
    let text = stdout_of(&out);
    eprintln!("{text}({:.1} s)", start.elapsed().as_secs_f64());
    assert!(
        text.contains(" 0 mismatches") && text.contains(" passed, 0 failed"),
        "{text}"
    );
}

/// `scripts/tsan.sh` asks for the stress program's path and arguments: it builds the
/// program itself, with `-fsanitize=thread` and the nightly toolchain's TSan runtime.
#[test]
#[ignore]
fn print_stress_arguments() {
    let args: Vec<String> = stress_args()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    println!("STRESS_ARGS {}", args.join(" "));
}
