//! The C ABI, tested from C: the header is current, and `tests/c/test_capi.c` and the
//! example in `examples/c/` build with only `include/picajit.h` and the library, pass, and
//! are clean under valgrind memcheck.
//!
//! The library comes from the same `cargo test` run: cargo builds the `cdylib` and
//! `staticlib` crate types of the lib (into `<target>/<profile>/deps/`) whenever an
//! integration test needs the lib, so nothing has to be built separately. A library left in
//! `<target>/<profile>/` by `cargo build` is used only if `deps/` has none.
//!
//! Environment: `CC` picks the C compiler (default `cc`); `PICAJIT_TEST_RUNNER` the emulator
//! that runs the C programs of a cross build (`tests/target_exe`), which skips memcheck.
//! Valgrind is required otherwise; set `PICAJIT_SKIP_VALGRIND=1` to skip the memcheck runs
//! (with a warning) on a machine without it. `PICAJIT_BLESS=1` rewrites the header instead
//! of comparing it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use target_exe::target_command;

mod target_exe;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `<target>/<profile>`: this test executable lives in its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps directory");
    deps.parent().expect("profile directory").to_path_buf()
}

/// The directory holding the shared library (`libpicajit.so`, `libpicajit.dylib`, or
/// `picajit.dll` with its import library `libpicajit.dll.a`) and `libpicajit.a` from this build.
fn lib_dir() -> PathBuf {
    let profile = profile_dir();
    let deps = profile.join("deps");
    for dir in [&deps, &profile] {
        if dir.join("libpicajit.a").exists() && dir.join(shared_lib_name()).exists() {
            return dir.clone();
        }
    }
    panic!(
        "libpicajit.a / {} not found in {} or {}: the [lib] crate-type in Cargo.toml must \
         include cdylib and staticlib",
        shared_lib_name(),
        deps.display(),
        profile.display()
    );
}

fn shared_lib_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "libpicajit.dylib"
    } else if cfg!(windows) {
        "picajit.dll"
    } else {
        "libpicajit.so"
    }
}

/// A scratch directory for C binaries and SHBIN files, inside the target directory.
fn work_dir(name: &str) -> PathBuf {
    let dir = profile_dir().join("capi-tests").join(name);
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

fn run(cmd: &mut Command) -> Output {
    // cargo test puts `<target>/<profile>` on LD_LIBRARY_PATH, where a `cargo build` leaves its
    // own (possibly stale) libpicajit.so, and the loader searches LD_LIBRARY_PATH before the
    // programs' rpath: without it they load this build's library.
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

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Warnings the C sources must compile without: the header has to be clean for strict
/// emulator builds too.
const CFLAGS: &[&str] = &[
    "-std=c11",
    "-pthread",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wstrict-prototypes",
    "-g",
    "-O1",
];

enum Link {
    /// The cdylib, found at run time through an rpath.
    Shared,
    /// The staticlib plus the system libraries Rust's std needs.
    Static,
}

/// Compile `sources` into `out` against the header and the library.
fn build_c(sources: &[PathBuf], out: &Path, link: Link) {
    let lib = lib_dir();
    let mut cmd = Command::new(cc());
    cmd.args(CFLAGS)
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .args(sources)
        .arg("-o")
        .arg(out);
    match link {
        Link::Shared => {
            cmd.arg(format!("-L{}", lib.display())).arg("-lpicajit");
            if cfg!(windows) {
                // No rpath on Windows: the loader looks beside the program first (MinGW
                // links the import library libpicajit.dll.a).
                let dll = shared_lib_name();
                let beside = out.parent().expect("output directory").join(dll);
                std::fs::copy(lib.join(dll), beside).expect("copy the DLL beside the program");
            } else {
                cmd.arg(format!("-Wl,-rpath,{}", lib.display()));
            }
        }
        Link::Static => {
            cmd.arg(lib.join("libpicajit.a"));
            if cfg!(target_os = "linux") {
                cmd.args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s", "-lc"]);
            } else if cfg!(windows) {
                // `cargo rustc --lib --target x86_64-pc-windows-gnu -- --print native-static-libs`
                for lib in ["kernel32", "ntdll", "userenv", "ws2_32", "dbghelp"] {
                    cmd.arg(format!("-l{lib}"));
                }
            }
        }
    }
    run(&mut cmd);
}

/// Whether the memcheck runs happen; without valgrind they fail unless explicitly skipped.
fn valgrind_available() -> bool {
    if let Some(runner) = target_exe::runner() {
        // Memcheck would check the emulator, not the program: the native builds' runs cover it.
        eprintln!(
            "\n*** NOTE: C programs run under {runner:?} (PICAJIT_TEST_RUNNER): the memcheck \
             runs are skipped ***\n"
        );
        return false;
    }
    let present = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return true;
    }
    if std::env::var_os("PICAJIT_SKIP_VALGRIND").is_some_and(|v| v == "1") {
        eprintln!(
            "\n*** WARNING: valgrind not found and PICAJIT_SKIP_VALGRIND=1: the C API memcheck \
             runs are SKIPPED ***\n"
        );
        return false;
    }
    panic!(
        "valgrind not found: install it (scripts/test.sh does), or set PICAJIT_SKIP_VALGRIND=1 \
         to skip the memcheck runs"
    );
}

/// Run `exe args` under memcheck: any error or leaked block fails. `PICAJIT_UNDER_VALGRIND`
/// tells the C tests that valgrind ignores the rounding mode JIT code sets, so that they do
/// not compare what JIT code computes with the interpreter there.
fn memcheck(exe: &Path, args: &[&Path]) -> Output {
    run(Command::new("valgrind")
        .env("PICAJIT_UNDER_VALGRIND", "1")
        .args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect",
        ])
        .arg(exe)
        .args(args))
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

/// The C enums of the sources: every type named by a `c_enum!` (enums C passes as `uint32_t`,
/// which no signature names, so cbindgen exports them only when told to).
fn c_enums(dir: &Path, names: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("read source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            c_enums(&path, names);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read source");
            for use_ in text.split("c_enum!(").skip(1) {
                let name = use_.trim_start().split(':').next().unwrap_or("");
                if name.starts_with("Picajit") && name.chars().all(char::is_alphanumeric) {
                    names.push(name.to_string());
                }
            }
        }
    }
}

#[test]
fn header() {
    let root = manifest_dir();
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    c_enums(&root.join("src"), &mut config.export.include);
    config.export.include.sort();
    config.export.include.dedup();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        // Only the capi module tree (src/capi and the ISA modules it registers): constants
        // elsewhere in the crate are not part of the C API.
        .with_src(root.join("src/capi/mod.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let path = root.join("include/picajit.h");
    if std::env::var_os("PICAJIT_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write header");
        return;
    }
    let current = std::fs::read(&path).unwrap_or_default();
    assert!(
        current == generated,
        "include/picajit.h is stale (src/capi changed): regenerate it with \
         `PICAJIT_BLESS=1 cargo test --test capi header` and commit the result"
    );
}

#[test]
fn header_documents_every_item() {
    let text = std::fs::read_to_string(manifest_dir().join("include/picajit.h")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let declares = line.starts_with("PicajitStatus picajit_")
            || (line.starts_with("const char *picajit_") || line.starts_with("uint32_t picajit_"))
            || line.starts_with("typedef struct")
            || line.starts_with("enum ")
            || line.starts_with("typedef void (*");
        if declares {
            assert!(
                i > 0 && lines[i - 1].trim_end().ends_with("*/"),
                "undocumented declaration in include/picajit.h line {}: {line}",
                i + 1
            );
        }
    }
}

/// `tests/c/NAME.c` built against the shared library and run with `args`: it must report
/// `success` (its output is printed for the log) and be clean under memcheck.
fn c_tests_pass(name: &str, args: &[&Path], success: &str) {
    let exe = work_dir(name).join(name);
    build_c(&[c_source(name)], &exe, Link::Shared);
    let out = run(target_command(&exe).args(args));
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        stdout.contains(success),
        "C tests did not report success:\n{stdout}"
    );
    if valgrind_available() {
        memcheck(&exe, args);
    }
}

fn c_source(name: &str) -> PathBuf {
    manifest_dir().join(format!("tests/c/{name}.c"))
}

#[test]
fn c_tests_pass_and_are_memcheck_clean() {
    let dir = work_dir("test_capi");
    let shaders = ["mvp.v.pica", "point_to_quad.g.pica", "point_to_disc.g.pica"]
        .map(|name| example_shbin(name, &dir));
    let args = shaders.each_ref().map(PathBuf::as_path);
    c_tests_pass("test_capi", &args, "0 failed");
    // The static library passes too (its run checks the exit status).
    let static_exe = dir.join("test_capi_static");
    build_c(&[c_source("test_capi")], &static_exe, Link::Static);
    run(target_command(&static_exe).args(args));
}

/// Emulator embedding (`tests/c/test_embedding.c`): unit state in and out, per-run entry
/// points, whole descriptor tables, emit state, batch path; natively and under memcheck.
#[test]
fn c_embedding_tests_pass_and_are_memcheck_clean() {
    c_tests_pass("test_embedding", &[], " passed, 0 failed");
}

#[test]
fn theia_c_tests_pass_and_are_memcheck_clean() {
    // picajit's own scene (no GPL data), rendered through picajit_theia_render
    let scene = manifest_dir().join("examples/theia/scene");
    c_tests_pass("test_theia", &[&scene], " 0 failed");
}

#[test]
fn c_example_builds_and_prints_the_transformed_vertices() {
    let dir = work_dir("example");
    let mvp = example_shbin("mvp.v.pica", &dir);
    // The example's own build script, as a user runs it, with this build's library.
    run(Command::new("sh")
        .arg(manifest_dir().join("examples/c/build.sh"))
        .env("LIBDIR", lib_dir())
        .env("OUT", &dir)
        .env("CC", cc()));
    let exe = dir.join("mvp");
    let out = run(target_command(&exe).arg(&mvp));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // Vertex 1 is (1, 2, 3) through a translation by (0.5, -1, 0) and a uniform scale by 2.
    assert!(
        stdout.contains("vertex 1: position (3, 2, 6, 1) color (0, 1, 0, 1)"),
        "unexpected example output:\n{stdout}"
    );
    if valgrind_available() {
        memcheck(&exe, &[&mvp]);
    }
}

/// The semantics an emulator author needs are stated in the header a C user reads (issue
/// 21): NaN outputs, f32 uniform rounding, the batch path, unit state, entry points, emit
/// state, long descriptor tables, SETEMIT/EMIT in vertex shaders and MAX(0, -inf).
#[test]
fn header_states_the_embedding_semantics() {
    let header = std::fs::read_to_string(manifest_dir().join("include/picajit.h")).unwrap();
    for needle in [
        "canonical NaN",
        "rounded to 17 significant",
        "PICAJIT_BATCH_EIGHT_LANE",
        "batch_lanes",
        "PicajitUnitState",
        "state_out receives the last vertex's final state",
        "picajit_geometry_get_emit_state",
        "picajit_geometry_set_entry",
        "SETEMIT and EMIT on the vertex unit do nothing",
        "a shader runs on either unit",
        "picajit_geometry_get/set_state",
        "Versioned structs (the one rule",
        "PicajitEngineConfig.threads is not 1 (the default is 1)",
        "up to 4096 entries",
        "MAX(0, -inf) = 0",
        "PICAJIT_MAX_NEG_INF_SECOND",
    ] {
        assert!(header.contains(needle), "picajit.h does not say {needle:?}");
    }
    assert!(manifest_dir().join("docs/float-max.md").exists());
}
