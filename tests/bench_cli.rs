//! `picajit bench` end to end on a tiny time budget, and the benchmark example shaders run on
//! the interpreter with values worked out by hand.

mod engine_common;

use engine_common::run_vertex;
use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::interp::pica::program::{GsInputMode, ShaderKind};
use picajit::interp::pica::state::Uniforms;
use picajit::pica::bench::{compare, prepare, BatchRunner, EngineKind, Workload, EXAMPLES};
use picajit::pica::engine::{program_from_shbin, EngineConfig, GeometryRunner, GsInput, Shader};
use picajit::pica::shbin::{Dvle, RegisterFile};
use picajit::Engine;
use serde_json::Value;
use std::path::PathBuf;

mod cli_run;
mod target_exe;

use cli_run::{json, ok, picajit, rejects, succeeds, ONE_SAMPLE};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Shortest run that still touches every example, engine and mode.
const TINY: &[&str] = &[
    "bench",
    "--time-ms",
    "1",
    "--samples",
    "2",
    "--compile-samples",
    "2",
    "--batch",
    "1,8",
];

/// Whether the x86-64 JIT runs the example `name` eight invocations per group on this host,
/// as the JIT decides: vertex-shader batches, point-mode geometry draws (`run_points`).
fn has_lanes(name: &str) -> bool {
    EngineKind::X64.runs_here() && has_lanes_on(name, picajit_jit::Backend::X64)
}

/// Whether `backend` has eight-lane code for the example `name` (generated, whether or not
/// this host runs it).
fn has_lanes_on(name: &str, backend: picajit_jit::Backend) -> bool {
    let w = Workload::examples()
        .expect("examples assemble")
        .into_iter()
        .find(|w| w.name == name)
        .expect("an example");
    let features = picajit_jit::HostFeatures::for_backend(backend);
    let code = picajit_jit::compile(&w.program, FloatMode::default(), backend, features)
        .expect("the examples compile");
    match w.kind() {
        ShaderKind::Vertex => code.batch_ineligibility().is_none(),
        // Variable and fixed mode run one invocation at a time on every engine.
        ShaderKind::Geometry => {
            w.gs_mode == GsInputMode::Point && code.points_ineligibility().is_none()
        }
    }
}

#[test]
fn bench_writes_json_and_svg_for_every_example() {
    let svg = scratch("chart.svg");
    let mut args = TINY.to_vec();
    args.extend(["--json", "--plot", svg.to_str().expect("utf-8 path")]);
    let out = succeeds(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sampling"),
        "no progress on stderr: {stderr}"
    );

    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert!(!v["cpu"].as_str().unwrap_or("").is_empty());
    let shaders = v["shaders"].as_array().expect("shaders");
    assert_eq!(shaders.len(), EXAMPLES.len());
    let disc = shaders
        .iter()
        .find(|s| s["name"] == "point_to_disc.g.pica")
        .expect("disc shader listed");
    assert_eq!(disc["emitted_per_invocation"].as_f64(), Some(34.0));

    let results = v["results"].as_array().expect("results");
    // The host's JIT: x86-64 here, or AArch64 natively (`scripts/test-aarch64.sh`), where
    // its NEON 8-lane code runs vertex batches and point-mode draws.
    let host_jit = if EngineKind::X64.runs_here() {
        Some(("x64", picajit_jit::Backend::X64))
    } else {
        EngineKind::A64
            .runs_here()
            .then_some(("a64", picajit_jit::Backend::A64))
    };
    for (name, _) in EXAMPLES {
        for float in ["f24-rtz", "f24-rne", "f32"] {
            for batch in [1, 8] {
                let cell = |engine: &str| {
                    results.iter().find(|r| {
                        r["shader"] == *name
                            && r["engine"] == engine
                            && r["float"] == float
                            && r["batch"] == batch
                    })
                };
                let interp = cell("interp").expect("interpreter measured");
                assert!(
                    interp["ns_per_vertex"].as_f64().unwrap_or(0.0) > 0.0,
                    "{interp}"
                );
                assert_eq!(interp["speedup_vs_interp"].as_f64(), Some(1.0));
                let per_instr = interp["ns_per_instruction"].as_f64().expect("ns/instr");
                let per_vertex = interp["ns_per_vertex"].as_f64().unwrap();
                assert!(
                    per_instr > 0.0 && per_instr < per_vertex,
                    "ns per instruction is ns per vertex over the instruction count: {interp}"
                );
                if let Some((jit, backend)) = host_jit {
                    let r = cell(jit).expect("host JIT measured");
                    assert!(r["error"].is_null(), "{r}");
                    assert!(r["speedup_vs_interp"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
                    assert!(r["code_bytes"].as_u64().unwrap_or(0) > 0, "{r}");
                    assert!(r["time_vs_f32"].as_f64().is_some(), "{r}");
                    // Batches of eight invocations go to the 8-lane path where the JIT has
                    // one for the shader (vertex batches, point-mode geometry draws);
                    // `branches` diverges within groups there.
                    let lanes = batch == 8 && has_lanes_on(name, backend);
                    if lanes {
                        let groups = r["lane_groups"].as_u64().expect("lane counters");
                        let reruns = r["lane_reruns"].as_u64().expect("lane counters");
                        assert!(groups + reruns > 0, "{r}");
                        if *name == "branches.v.pica" {
                            assert!(r["lane_splits"].as_u64().unwrap_or(0) > 0, "{r}");
                        }
                    } else {
                        // Single vertices, shaders without 8-lane code: nothing on it.
                        assert_eq!(r["lane_groups"].as_u64().unwrap_or(0), 0, "{r}");
                    }
                }
                assert!(interp["lane_groups"].is_null(), "{interp}");
            }
        }
    }
    for c in v["compile"].as_array().expect("compile") {
        // A JIT whose results differ from the interpreter's would make its timings meaningless.
        assert!(c["mismatch"].is_null(), "{c}");
        if c["error"].is_null() {
            assert!(c["compile_us"].as_f64().unwrap_or(-1.0) >= 0.0, "{c}");
        }
        // The 8-lane code is reported beside the per-vertex code where it exists (AArch64:
        // vertex shaders and point-mode geometry shaders, whether this host runs the code
        // or only generates it).
        let name = c["shader"].as_str().unwrap_or("");
        let lanes = (c["engine"] == "x64" && has_lanes(name))
            || (c["engine"] == "a64" && has_lanes_on(name, picajit_jit::Backend::A64));
        if lanes {
            assert!(c["lane_code_bytes"].as_u64().unwrap_or(0) > 0, "{c}");
            assert!(c["lane_compile_us"].as_f64().unwrap_or(-1.0) > 0.0, "{c}");
        } else {
            assert!(c["lane_code_bytes"].is_null(), "{c}");
        }
    }

    let chart = std::fs::read_to_string(&svg).expect("SVG written");
    assert!(
        chart.starts_with("<svg"),
        "{}",
        &chart[..chart.len().min(200)]
    );
    assert!(chart.trim_end().ends_with("</svg>"));
    assert!(chart.contains("lights8.v.pica interp"));
    assert!(chart.contains("<rect"));
}

#[test]
fn bench_table_and_markdown_on_a_given_file() {
    let out = succeeds(&[
        "bench",
        "examples/mvp.v.pica",
        "--engine",
        "interp",
        "--float",
        "f24",
        "--batch",
        "4",
        "--time-ms",
        "1",
        "--samples",
        "1",
        "-q",
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("ns/vertex"), "{table}");
    assert!(table.contains("mvp.v.pica"), "{table}");
    assert!(out.stderr.is_empty(), "--quiet still printed progress");

    let md = ok(&[TINY, &["examples/branches.v.pica", "--markdown", "-q"]].concat());
    assert!(md.contains("| shader |"), "{md}");
    assert!(md.contains("| `branches.v.pica` |"), "{md}");
    assert!(md.contains("interp ns/instr"), "{md}");
}

/// `--threads 2` adds the 65,536-vertex scaling table; the Markdown summary puts the smallest
/// and largest batch side by side with the peer reference column.
#[test]
fn bench_thread_scaling_and_batch_columns() {
    let md = ok(&[
        "bench",
        "examples/mvp.v.pica",
        "--engine",
        "interp,x64",
        "--float",
        "f24",
        "--batch",
        "1,16",
        "--time-ms",
        "1",
        "--samples",
        "1",
        "--threads",
        "2",
        "--markdown",
        "-q",
    ]);
    assert!(
        md.contains("Thread scaling: batches of 65536 vertices"),
        "{md}"
    );
    assert!(md.contains("| shader | 1 thread | 2 threads |"), "{md}");
    assert!(
        md.contains("peer JIT ns (one vertex per call, reference)"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| `mvp.v.pica` |") && l.contains("19-20"))
        .unwrap_or_else(|| panic!("no summary row with the peer figure: {md}"));
    if cfg!(target_arch = "x86_64") {
        assert!(md.contains("x64 ns (batch 1) | x64 ns (batch 16)"), "{md}");
        // The ratio columns divide by the middle of the quoted range, 19.5 ns.
        let head: Vec<&str> = md
            .lines()
            .find(|l| l.starts_with("| shader | instr./vertex"))
            .expect("summary header")
            .split('|')
            .map(str::trim)
            .collect();
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(head.len(), cells.len(), "{row}");
        let cell = |name: &str| {
            let k = head.iter().position(|h| *h == name);
            cells[k.unwrap_or_else(|| panic!("no column {name}: {md}"))]
        };
        let ours_1: f64 = cell("x64 ns (batch 1)").parse().expect("batch 1 time");
        let ours_16: f64 = cell("x64 ns (batch 16)").parse().expect("batch 16 time");
        let slow: f64 = cell("x64 batch 1 / peer (time; goal <= 0.8)")
            .parse()
            .expect("batch 1 ratio");
        let fast: f64 = cell("peer / x64 batch 16 (speed; goal >= 8)")
            .trim_end_matches('x')
            .parse()
            .expect("batch 16 ratio");
        assert!(
            (slow - ours_1 / 19.5).abs() <= 0.006 + 0.001 * slow,
            "{row}"
        );
        assert!((fast - 19.5 / ours_16).abs() <= 0.06 + 0.01 * fast, "{row}");
    }
}

/// `--clock cpu` samples the thread's CPU time (Linux) and says so; unknown clocks are
/// refused.
#[test]
fn bench_clock_choice() {
    let args = |clock: &'static str| {
        [
            "bench",
            "--engine",
            "interp",
            "--float",
            "f24",
            "--batch",
            "1",
            "--time-ms",
            "2",
            "--samples",
            "2",
            "--clock",
            clock,
            "-q",
            "examples/mvp.v.pica",
        ]
    };
    let err = cli_run::fails(&args("sundial"));
    assert!(err.contains("unknown clock 'sundial'"), "{err}");
    if cfg!(target_os = "linux") {
        let text = ok(&args("cpu"));
        assert!(text.contains("times are the thread's CPU time"), "{text}");
        let ns: f64 = text
            .lines()
            .find(|l| l.starts_with("mvp.v.pica"))
            .and_then(|l| l.split_whitespace().nth(4))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no mvp row: {text}"));
        assert!(ns > 0.0, "{text}");
    } else {
        assert!(!picajit(&args("cpu")).status.success());
    }
}

/// The `mvp` row of a one-sample `picajit bench --markdown` of the AArch64 JIT (with `extra`
/// arguments), as a lookup of a number by column title.
fn a64_mvp_markdown(extra: &[&str]) -> impl Fn(&str) -> f64 {
    let bench = [
        "bench",
        "examples/mvp.v.pica",
        "--engine",
        "a64",
        "--float",
        "f24",
        "--batch",
        "8",
    ];
    let md = ok(&[&bench[..], &ONE_SAMPLE, &["--markdown", "-q"], extra].concat());
    let cells = |l: &str| -> Vec<String> { l.split('|').map(|c| c.trim().to_string()).collect() };
    let head = cells(
        md.lines()
            .find(|l| l.starts_with("| shader |"))
            .expect("header"),
    );
    let row = cells(
        md.lines()
            .find(|l| l.starts_with("| `mvp.v.pica` |"))
            .expect("mvp row"),
    );
    move |column: &str| -> f64 {
        let k = head
            .iter()
            .position(|h| h == column)
            .unwrap_or_else(|| panic!("no column {column}: {md}"));
        row[k]
            .parse()
            .unwrap_or_else(|_| panic!("{column}: {:?}\n{md}", row[k]))
    }
}

/// The AArch64 JIT's 8-lane (NEON) code size and compile time are in the Markdown summary,
/// whether the host runs that code or only generates it.
#[test]
fn bench_markdown_has_a64_lane_code() {
    let cell = a64_mvp_markdown(&[]);
    for column in ["a64 8-lane code bytes", "a64 8-lane compile us"] {
        let v = cell(column);
        assert!(v > 0.0, "{column}: {v}");
    }
}

/// `--neon-lanes 4,8` measures the AArch64 JIT twice, with four and with eight lanes per run
/// of its multi-vertex body (`a64`, `a64x8`): the eight-lane body holds every arithmetic
/// instruction's lane code twice, so its code is larger.
#[test]
fn bench_measures_both_neon_lane_counts() {
    let cell = a64_mvp_markdown(&["--neon-lanes", "4,8"]);
    let (four, eight) = (
        cell("a64 8-lane code bytes"),
        cell("a64x8 8-lane code bytes"),
    );
    assert!(four > 0.0 && eight > four, "{four} {eight}");
}

#[test]
fn bench_reports_bad_input_without_panicking() {
    let not_a_shader = scratch("garbage.pica");
    std::fs::write(&not_a_shader, "this is not assembly\n").expect("write");
    let not_a_shader = not_a_shader.to_str().expect("utf-8 path").to_string();
    let dir = std::env::temp_dir();
    let cases: Vec<Vec<&str>> = vec![
        vec!["bench", "--engine", "gpu"],
        vec!["bench", "--engine", "auto"],
        vec!["bench", "--float", "f16"],
        vec!["bench", "--batch", "0"],
        vec!["bench", "--neon-lanes", "16"],
        vec!["bench", "--batch", "100000000"],
        vec!["bench", "--samples", "0"],
        vec!["bench", "no/such/file.pica"],
        vec!["bench", &not_a_shader],
        vec!["bench", "--set", "nosuchuniform=1"],
        vec!["bench", "--set", "c200=1"],
        vec!["bench", "--plot", dir.to_str().expect("utf-8 path")],
    ];
    for args in cases {
        rejects(&args);
    }
}

// --- the example shaders, by hand ---

fn load(name: &str) -> (Shader, Uniforms, Dvle) {
    let path = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("example exists");
    let shbin =
        picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile { name, text: &text }])
            .expect("example assembles");
    let (program, uniforms) = program_from_shbin(&shbin, 0).expect("DVLE 0");
    let config = EngineConfig::default()
        .with_engine(Engine::Interp)
        .with_float_mode(FloatMode::F24(Rounding::TowardZero));
    let shader = Shader::new(program, &config).expect("prepares");
    (shader, uniforms, shbin.dvles[0].clone())
}

/// Register index of `name[element]` in the DVLE's uniform table.
fn reg(dvle: &Dvle, name: &str, element: u16, file: RegisterFile) -> usize {
    let u = dvle
        .uniform(name)
        .unwrap_or_else(|| panic!("no uniform {name}"));
    let (f, index) = RegisterFile::decode(u.first + element).expect("register");
    assert_eq!(f, file, "{name}");
    assert!(
        u.first + element <= u.last,
        "{name}[{element}] out of range"
    );
    index as usize
}

fn set(u: &mut Uniforms, dvle: &Dvle, name: &str, element: u16, v: [f32; 4]) {
    u.set_float_f32(
        reg(dvle, name, element, RegisterFile::Float),
        v,
        FloatMode::F24(Rounding::TowardZero),
    );
}

fn identity(u: &mut Uniforms, dvle: &Dvle, name: &str) {
    for k in 0..4u16 {
        let mut row = [0.0; 4];
        row[k as usize] = 1.0;
        set(u, dvle, name, k, row);
    }
}

fn input(dvle: &Dvle, name: &str) -> usize {
    reg(dvle, name, 0, RegisterFile::Input)
}

fn assert_close(got: [f32; 4], want: [f32; 4], what: &str) {
    for k in 0..4 {
        assert!(
            (got[k] - want[k]).abs() <= 1e-3 * want[k].abs().max(1.0),
            "{what}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn skinning4_blends_four_bones() {
    let (shader, mut u, dvle) = load("skinning4.v.pica");
    identity(&mut u, &dvle, "projection");
    // Bone k: identity rotation, translation (k, 0, 0).
    for k in 0..4u16 {
        set(&mut u, &dvle, "bones", 3 * k, [1.0, 0.0, 0.0, k as f32]);
        set(&mut u, &dvle, "bones", 3 * k + 1, [0.0, 1.0, 0.0, 0.0]);
        set(&mut u, &dvle, "bones", 3 * k + 2, [0.0, 0.0, 1.0, 0.0]);
    }
    let mut v = [[0.0f32; 4]; 16];
    v[input(&dvle, "inpos")] = [1.0, 2.0, 3.0, 1.0];
    v[input(&dvle, "innrm")] = [0.0, 0.0, 2.0, 0.0];
    v[input(&dvle, "inidx")] = [0.0, 3.0, 6.0, 9.0];
    v[input(&dvle, "inwgt")] = [0.25; 4];
    let (regs, info) = run_vertex(&shader, &u, &v).expect("runs");
    // Translation blended: 0.25 * (0 + 1 + 2 + 3) = 1.5.
    assert_eq!(regs.output[0], [2.5, 2.0, 3.0, 1.0]);
    // Normal renormalised to (0, 0, 1), shown as n * 0.5 + 0.5.
    assert_eq!(regs.output[1], [0.5, 0.5, 1.0, 1.0]);
    assert_eq!(info.instructions, 34);

    // Unequal weights on two bones: 0.75 * bone 2 + 0.25 * bone 3 shifts x by 2.25.
    v[input(&dvle, "inidx")] = [6.0, 9.0, 0.0, 0.0];
    v[input(&dvle, "inwgt")] = [0.75, 0.25, 0.0, 0.0];
    let (regs, _) = run_vertex(&shader, &u, &v).expect("runs");
    assert_eq!(regs.output[0], [3.25, 2.0, 3.0, 1.0]);
}

fn lights8_uniforms(dvle: &Dvle, u: &mut Uniforms, attenuation: [f32; 4]) {
    identity(u, dvle, "projection");
    identity(u, dvle, "modelview");
    // Seven dark lights far away; light 0 one unit in front of the vertex.
    for k in 0..8u16 {
        set(u, dvle, "lights", 4 * k, [0.0, 100.0, 0.0, 1.0]);
        set(u, dvle, "lights", 4 * k + 3, [1.0, 0.0, 0.0, 0.0]);
    }
    set(u, dvle, "lights", 0, [0.0, 0.0, 1.0, 1.0]);
    set(u, dvle, "lights", 1, [0.5, 0.25, 0.125, 1.0]);
    set(u, dvle, "lights", 2, [0.25, 0.25, 0.25, 1.0]);
    set(u, dvle, "lights", 3, attenuation);
    set(u, dvle, "ambient", 0, [0.125, 0.125, 0.125, 1.0]);
    set(u, dvle, "material", 0, [8.0, 0.0, 0.0, 0.0]);
}

#[test]
fn lights8_sums_eight_lights() {
    let (shader, base, dvle) = load("lights8.v.pica");
    let mut v = [[0.0f32; 4]; 16];
    v[input(&dvle, "inpos")] = [0.0, 0.0, -1.0, 1.0];
    v[input(&dvle, "innrm")] = [0.0, 0.0, 1.0, 0.0];

    // Light 0 straight above the surface at distance 2 and the eye along the normal:
    // n.l = n.h = 1, so colour = ambient + diffuse + specular.
    let mut u = base.clone();
    lights8_uniforms(&dvle, &mut u, [1.0, 0.0, 0.0, 0.0]);
    let (regs, info) = run_vertex(&shader, &u, &v).expect("runs");
    assert_eq!(regs.output[0], [0.0, 0.0, -1.0, 1.0]);
    assert_close(regs.output[1], [0.875, 0.625, 0.5, 1.0], "unattenuated");
    assert_eq!(regs.al, 32, "the loop visits all eight lights");
    assert!(
        info.instructions > 8 * 20,
        "{} instructions",
        info.instructions
    );

    // k0 = 0.5: attenuation 2 doubles the light's contribution, not the ambient.
    let mut u = base.clone();
    lights8_uniforms(&dvle, &mut u, [0.5, 0.0, 0.0, 0.0]);
    let (regs, _) = run_vertex(&shader, &u, &v).expect("runs");
    assert_close(regs.output[1], [1.625, 1.125, 0.875, 1.0], "k0 = 0.5");

    // k2 = 1 at distance 2: attenuation 1/4.
    let mut u = base;
    lights8_uniforms(&dvle, &mut u, [0.0, 0.0, 1.0, 0.0]);
    let (regs, _) = run_vertex(&shader, &u, &v).expect("runs");
    assert_close(regs.output[1], [0.3125, 0.25, 0.21875, 1.0], "k2 = 1");
}

#[test]
fn branches_takes_each_path() {
    let (shader, mut u, dvle) = load("branches.v.pica");
    identity(&mut u, &dvle, "projection");
    // w = -z, as in a perspective projection.
    set(&mut u, &dvle, "projection", 3, [0.0, 0.0, -1.0, 0.0]);
    set(&mut u, &dvle, "lightdir", 0, [0.0, 0.0, 1.0, 0.0]);
    let bands = [(0.875, 1.0), (0.75, 0.8), (0.5, 0.6), (0.0, 0.4)];
    for k in 0..8u16 {
        let (t, i) = bands[(k as usize).min(3)];
        set(&mut u, &dvle, "bands", k, [t, i, 0.0, 0.0]);
    }
    set(&mut u, &dvle, "ambient", 0, [0.25, 0.25, 0.25, 1.0]);
    set(&mut u, &dvle, "fog", 0, [4.0, 0.25, 0.0, 0.0]);
    set(&mut u, &dvle, "fogclr", 0, [1.0, 1.0, 1.0, 1.0]);
    let vertex = |z: f32, nz: f32| {
        let mut v = [[0.0f32; 4]; 16];
        v[input(&dvle, "inpos")] = [0.0, 0.0, z, 1.0];
        v[input(&dvle, "innrm")] = [0.0, 0.0, nz, 0.0];
        v[input(&dvle, "inclr")] = [1.0, 0.5, 0.25, 1.0];
        v
    };

    // Lit (n.l = 0.625 falls in the third band, intensity 0.6), nearer than the fog.
    let (regs, near_lit) = run_vertex(&shader, &u, &vertex(-2.0, 0.625)).expect("runs");
    assert_close(regs.output[1], [0.6, 0.3, 0.15, 1.0], "lit, no fog");
    assert_eq!(regs.al, 2, "BREAKC left the loop at the third band");

    // Brighter: the first band matches, so the loop runs once.
    let (regs, bright) = run_vertex(&shader, &u, &vertex(-2.0, 1.0)).expect("runs");
    assert_close(regs.output[1], [1.0, 0.5, 0.25, 1.0], "first band");
    assert!(bright.instructions < near_lit.instructions);

    // Facing away, at depth 6: ambient, then half way into the fog.
    let (regs, _) = run_vertex(&shader, &u, &vertex(-6.0, -1.0)).expect("runs");
    assert_close(
        regs.output[1],
        [0.625, 0.5625, 0.53125, 1.0],
        "unlit, fogged",
    );
    assert_eq!(regs.output[0], [0.0, 0.0, -6.0, 6.0]);

    // Past the fog end the fog factor is clamped to 1.
    let (regs, _) = run_vertex(&shader, &u, &vertex(-20.0, -1.0)).expect("runs");
    assert_close(regs.output[1], [1.0, 1.0, 1.0, 1.0], "fully fogged");
}

#[test]
fn point_to_disc_emits_a_closed_fan() {
    let (shader, mut u, dvle) = load("point_to_disc.g.pica");
    let a = std::f32::consts::TAU / 32.0;
    set(&mut u, &dvle, "radius", 0, [2.0, 1.0, 0.0, 0.0]);
    set(&mut u, &dvle, "rotx", 0, [a.cos(), -a.sin(), 0.0, 0.0]);
    set(&mut u, &dvle, "roty", 0, [a.sin(), a.cos(), 0.0, 0.0]);
    set(&mut u, &dvle, "rimclr", 0, [1.0, 1.0, 1.0, 0.5]);
    let mut v = [[0.0f32; 4]; 16];
    v[input(&dvle, "inpos")] = [10.0, 20.0, 0.5, 1.0];
    v[input(&dvle, "inclr")] = [1.0, 0.5, 0.25, 1.0];

    let mut runner = GeometryRunner::default();
    runner
        .invoke(&shader, dvle.gs_mode, &mut u, GsInput::Point(&v))
        .expect("runs");
    let (emitted, prims) = runner.state.take_output();
    assert_eq!(emitted.len(), 34);
    assert_eq!(prims.len(), 32);
    assert_eq!(emitted[0].outputs[0], [10.0, 20.0, 0.5, 1.0], "centre");
    assert_eq!(emitted[0].outputs[1], [1.0, 0.5, 0.25, 1.0]);
    assert_eq!(
        emitted[1].outputs[0],
        [12.0, 20.0, 0.5, 1.0],
        "first rim vertex"
    );
    assert_eq!(emitted[1].outputs[1], [1.0, 0.5, 0.25, 0.5], "rim colour");
    // A quarter turn (8 steps) later the rim points along +y, and after 32 it is back.
    assert_close(
        emitted[1 + 8].outputs[0],
        [10.0, 21.0, 0.5, 1.0],
        "quarter turn",
    );
    assert_close(emitted[33].outputs[0], [12.0, 20.0, 0.5, 1.0], "closed");
    // Every triangle has the centre, and windings alternate so all face the same way.
    for (k, p) in prims.iter().enumerate() {
        assert_eq!(p.vertices[0][0], [10.0, 20.0, 0.5, 1.0]);
        assert_eq!(p.winding, k % 2 == 1, "triangle {k}");
    }
}

#[test]
fn every_example_runs_with_its_benchmark_inputs() {
    for (name, text) in EXAMPLES {
        let (_, warnings) =
            picajit::pica::asm::assemble_with_warnings(&[picajit::pica::asm::SourceFile {
                name,
                text,
            }])
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
    }
    for w in Workload::examples().expect("examples assemble") {
        for mode in picajit::pica::bench::MODES {
            let p = prepare(EngineKind::Interpreter, &w, mode, 1 << 20).expect("prepares");
            let mut runner = BatchRunner::new(&p, &w, 64);
            let stats = runner.run().unwrap_or_else(|e| panic!("{}: {e}", w.name));
            assert!(stats.instructions >= 64 * 10, "{}: {stats:?}", w.name);
        }
    }
}

/// Geometry shaders in the benchmark: one `run_points` call per batch on every engine that
/// runs here, state carried from batch to batch, emitted vertices counted from the buffer;
/// and the pre-check compares the JIT's emitted vertices and final state with the
/// interpreter's, and notices a difference.
#[test]
fn bench_runs_geometry_batches_through_run_points() {
    let geometry: Vec<Workload> = Workload::examples()
        .expect("examples assemble")
        .into_iter()
        .filter(|w| w.kind() == ShaderKind::Geometry && w.gs_mode == GsInputMode::Point)
        .collect();
    assert_eq!(geometry.len(), 2);
    for w in &geometry {
        let per_point = if w.name.contains("disc") { 34 } else { 4 };
        for mode in picajit::pica::bench::MODES {
            let mut engines = vec![prepare(EngineKind::Interpreter, w, mode, 1 << 20).unwrap()];
            if EngineKind::X64.runs_here() {
                engines.push(prepare(EngineKind::X64, w, mode, 1 << 20).unwrap());
            }
            for p in &engines {
                for batch in [1, 8, 13, 64] {
                    let mut runner = BatchRunner::new(p, w, batch);
                    for _ in 0..3 {
                        let stats = runner.run().unwrap_or_else(|e| panic!("{}: {e}", w.name));
                        assert_eq!(stats.emitted, batch * per_point, "{} {:?}", w.name, p);
                        assert!(stats.instructions >= 21 * batch as u64, "{stats:?}");
                    }
                }
            }
            if let [interp, jit] = &engines[..] {
                assert_eq!(compare(interp, jit, w, 256), Ok(()), "{} {mode:?}", w.name);
            }
        }
    }
    // A difference is noticed: the other geometry shader, or another rounding.
    let (quad, disc) = (&geometry[0], &geometry[1]);
    assert!(quad.name.contains("quad") && disc.name.contains("disc"));
    let rtz = FloatMode::F24(Rounding::TowardZero);
    let a = prepare(EngineKind::Interpreter, quad, rtz, 1 << 20).unwrap();
    let b = prepare(EngineKind::Interpreter, disc, rtz, 1 << 20).unwrap();
    let err = compare(&a, &b, quad, 256).unwrap_err();
    assert!(err.contains("output record"), "{err}");
    let rne = FloatMode::F24(Rounding::NearestEven);
    let c = prepare(EngineKind::Interpreter, disc, rne, 1 << 20).unwrap();
    let d = prepare(EngineKind::Interpreter, disc, rtz, 1 << 20).unwrap();
    let err = compare(&c, &d, disc, 256).unwrap_err();
    assert!(err.contains("differs"), "{err}");
}

/// Geometry shaders in variable and fixed mode are measured too, one invocation per input
/// primitive on every engine that runs here (the engines run these modes one invocation at a
/// time): the examples emit what their primitives ask for, and the JIT's emitted vertices and
/// final state match the interpreter's (the pre-check every measurement makes).
#[test]
fn bench_runs_geometry_shaders_in_every_input_mode() {
    let examples = Workload::examples().expect("examples assemble");
    let modes: Vec<GsInputMode> = examples
        .iter()
        .filter(|w| w.kind() == ShaderKind::Geometry)
        .map(|w| w.gs_mode)
        .collect();
    assert!(modes.iter().any(|m| matches!(m, GsInputMode::Point)));
    assert!(modes.iter().any(|m| matches!(m, GsInputMode::Fixed { .. })));
    assert!(modes
        .iter()
        .any(|m| matches!(m, GsInputMode::Variable { .. })));
    for w in examples
        .iter()
        .filter(|w| w.kind() == ShaderKind::Geometry && w.gs_mode != GsInputMode::Point)
    {
        for mode in picajit::pica::bench::MODES {
            let mut engines = vec![prepare(EngineKind::Interpreter, w, mode, 1 << 20).unwrap()];
            if EngineKind::X64.runs_here() {
                engines.push(prepare(EngineKind::X64, w, mode, 1 << 20).unwrap());
            }
            for p in &engines {
                let mut runner = BatchRunner::new(p, w, 10);
                for _ in 0..3 {
                    let stats = runner.run().unwrap_or_else(|e| panic!("{}: {e}", w.name));
                    // tri_extrude: the triangle and its copy; fan_variable: a fan of
                    // count - 2 triangles, counts 3..=7 over each five invocations.
                    let want = if w.name.contains("tri") {
                        10 * 6
                    } else {
                        2 * 3 * (1 + 2 + 3 + 4 + 5)
                    };
                    assert_eq!(stats.emitted, want, "{} {:?}", w.name, p);
                    assert!(
                        stats.deopts == 0 && stats.instructions > 10 * 10,
                        "{stats:?}"
                    );
                }
            }
            if let [interp, jit] = &engines[..] {
                assert_eq!(compare(interp, jit, w, 64), Ok(()), "{} {mode:?}", w.name);
            }
        }
    }
    // The command line measures them (JSON: one cell per engine and batch).
    let v = json(&[
        "bench",
        "examples/tri_extrude.g.pica",
        "examples/fan_variable.g.pica",
        "--time-ms",
        "5",
        "--samples",
        "2",
        "--compile-samples",
        "1",
        "--batch",
        "1,8",
        "--float",
        "f24-rtz",
        "--json",
        "-q",
    ]);
    for name in ["tri_extrude.g.pica", "fan_variable.g.pica"] {
        let cells: Vec<&Value> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["shader"].as_str().is_some_and(|s| s.ends_with(name)))
            .collect();
        assert!(cells.len() >= 2, "{name}: {v}");
        for r in cells {
            assert!(r["error"].is_null(), "{r}");
            assert!(r["ns_per_vertex"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
        }
    }
}

/// `--cache-churn N` compiles N distinct programs twice through one code cache: within the
/// budget the second pass only hits and nothing is evicted; with a budget smaller than the
/// programs, entries are evicted, the cache ends within its budget, and a cyclic second pass
/// over more programs than fit finds none of them (least recently used goes first).
#[test]
fn bench_cache_churn_reports_hits_and_evictions() {
    if picajit::jit::Backend::host().is_none() {
        return;
    }
    let churn = |n: &str, budget: &str| {
        let v = json(
            &[
                &[
                    "bench",
                    "examples/mvp.v.pica",
                    "--engine",
                    "interp",
                    "--batch",
                    "1",
                ][..],
                &ONE_SAMPLE,
                &["--json", "-q", "--cache-churn", n, "--cache-budget", budget],
            ]
            .concat(),
        );
        v["cache_churn"].clone()
    };
    let roomy = churn("30", "100000000");
    assert_eq!(roomy["programs"], 30);
    assert_eq!(roomy["misses"], 30, "{roomy}");
    assert_eq!(roomy["hits"], 30, "{roomy}");
    assert_eq!(roomy["evictions"], 0, "{roomy}");
    assert_eq!(roomy["entries"], 30, "{roomy}");
    let tight = churn("60", "200000");
    assert_eq!(tight["misses"], 120, "{tight}");
    assert_eq!(tight["hits"], 0, "{tight}");
    assert!(tight["evictions"].as_u64().unwrap() > 0, "{tight}");
    assert!(tight["bytes"].as_u64().unwrap() <= 200_000, "{tight}");
    let text = ok(&[
        &[
            "bench",
            "examples/mvp.v.pica",
            "--engine",
            "interp",
            "--batch",
            "1",
        ][..],
        &ONE_SAMPLE,
        &["-q", "--cache-churn", "4"],
    ]
    .concat());
    assert!(
        text.contains("Code cache: 4 distinct programs twice over, budget 4194304 bytes: 8 lookups, hit rate 50.0 %, 0 evictions"),
        "{text}"
    );
}
