//! The multi-vertex (SoA) batch backends against the interpreter, bit for bit, on both hosts:
//! the AVX2 emitter (x86-64, when the host has AVX2) and the NEON emitter (AArch64: natively
//! there, under the unicorn emulator on x86-64) with four and with eight lanes per run of its
//! body (`A64Lanes`), each case on each ([`backends`]):
//!
//! * every example vertex shader with its benchmark workload, in all three float modes, with
//!   proof that the SoA path ran (`CompiledShader::batch_lanes`/`batch_stats`);
//! * thousands of random programs (`picajit_testkit::testgen`, straight-line and with control flow)
//!   over batches of 1, 7, 8, 9 and 64 vertices whose inputs differ per vertex and are full of
//!   special values (zeros of both signs, subnormal patterns, extremes, inf, NaN), so that
//!   lanes of one group take different rare paths;
//! * a hand-written program per opcode and operand shape, including a0-relative reads with
//!   out-of-range offsets and cmp-dependent branches that agree or diverge within a group.
//!
//! Outputs, instruction counts and errors must equal running each vertex on the interpreter
//! from `Registers::reset_working_state`. `PICAJIT_BATCH_CASES` overrides the number of
//! random programs per configuration (every fourth of them runs on the emulated NEON code).
//!
//! Both emitters run divergent groups with lane masks (the four-lane NEON code per half-group
//! of four lanes), so the same assertions on the counters hold for all.
#![cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]

mod jit_common;

use jit_common::Compiled;

use picajit::interp::pica::exec::Interpreter;
use picajit::interp::pica::float::{FloatMode, Rounding, F24};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{Registers, Uniforms};
use picajit::pica::bench::Workload;
use picajit_jit::{
    compile_with_options, A64Lanes, Backend, BatchStats, CompileOptions, CompiledShader, Error,
    HostFeatures, Invocation, Outcome,
};
use picajit_testkit::testgen::{self, generate, value, Options, Rng, Values};

const F24Z: FloatMode = FloatMode::F24(Rounding::TowardZero);
const F24N: FloatMode = FloatMode::F24(Rounding::NearestEven);
const MODES: [FloatMode; 3] = [F24Z, F24N, FloatMode::F32];
const SIZES: [usize; 5] = [1, 7, 8, 9, 64];

fn has_avx2() -> bool {
    HostFeatures::detect().contains(HostFeatures::AVX2)
}

/// A multi-vertex code generator under test: the backend, and on AArch64 how many lanes one
/// run of the NEON body covers (`A64Lanes`; x86-64 code ignores it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Target {
    backend: Backend,
    lanes: A64Lanes,
}

impl PartialEq<Backend> for Target {
    fn eq(&self, b: &Backend) -> bool {
        self.backend == *b
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.backend)?;
        if self.backend == Backend::A64 && self.lanes == A64Lanes::Eight {
            f.write_str(" (eight lanes per body run)")?;
        }
        Ok(())
    }
}

/// The targets with multi-vertex code on this host: x86-64 with AVX2 natively, AArch64
/// natively or under the emulator, with four and with eight lanes per body run.
fn backends() -> Vec<Target> {
    let mut b = Vec::new();
    if cfg!(target_arch = "x86_64") && has_avx2() {
        b.push(Target {
            backend: Backend::X64,
            lanes: A64Lanes::Four,
        });
    }
    for lanes in [A64Lanes::Four, A64Lanes::Eight] {
        b.push(Target {
            backend: Backend::A64,
            lanes,
        });
    }
    b
}

/// `program` compiled for `t`.
fn compile_for(program: &Program, mode: FloatMode, t: Target) -> Result<CompiledShader, Error> {
    let options = CompileOptions::default().with_a64_lanes(t.lanes);
    compile_with_options(program, mode, t.backend, HostFeatures::detect(), options)
}

/// `program` compiled for `backend`, with its multi-vertex code.
fn compile_on(program: &Program, mode: FloatMode, backend: Target) -> Compiled<'_> {
    let shader = compile_for(program, mode, backend).unwrap();
    assert_eq!(
        shader.batch_lanes(),
        8,
        "{backend}: {:?}",
        shader.batch_ineligibility()
    );
    Compiled {
        shader,
        program,
        mode,
    }
}

fn cases(default: u64) -> u64 {
    picajit_testkit::env_count("PICAJIT_BATCH_CASES").unwrap_or(default)
}

type Row = [[f32; 4]; 16];

/// What `run_batch` must produce: each vertex on the interpreter from the reset state.
fn reference(
    program: &Program,
    mode: FloatMode,
    inputs: &[Row],
    uniforms: &Uniforms,
    budget: u64,
) -> (Vec<Row>, Result<Outcome, Error>) {
    let interp = Interpreter::new(program, mode);
    let mut out = vec![[[0.0; 4]; 16]; inputs.len()];
    let mut info = Outcome::default();
    let mut regs = Registers::default();
    for (k, row) in inputs.iter().enumerate() {
        regs.reset_working_state();
        regs.input = *row;
        match interp.run(&mut regs, uniforms, None, budget) {
            Ok(r) => info.instructions += r.instructions,
            Err(error) => return (out, Err(Error::Exec { index: k, error })),
        }
        out[k] = regs.output;
    }
    (out, Ok(info))
}

fn bits(rows: &[Row]) -> Vec<u32> {
    rows.iter()
        .flat_map(|r| r.iter().flat_map(|v| v.iter().map(|x| x.to_bits())))
        .collect()
}

fn first_diff(a: &[Row], b: &[Row]) -> String {
    for (k, (ra, rb)) in a.iter().zip(b).enumerate() {
        for o in 0..16 {
            for c in 0..4 {
                let (x, y) = (ra[o][c].to_bits(), rb[o][c].to_bits());
                if x != y {
                    return format!(
                        "vertex {k} o{o}.{}: interp {x:08x} ({}) soa {y:08x} ({})",
                        "xyzw".as_bytes()[c] as char,
                        f32::from_bits(x),
                        f32::from_bits(y)
                    );
                }
            }
        }
    }
    "lengths differ".into()
}

/// Run `inputs` through `shader.run_batch` and compare with the interpreter. The `deopts`
/// count is the per-vertex path's business and is not compared.
fn check_batch(
    shader: &Compiled,
    inputs: &[Row],
    uniforms: &Uniforms,
    budget: u64,
    what: &dyn Fn() -> String,
) {
    let (want, want_info) = reference(shader.program, shader.mode, inputs, uniforms, budget);
    // Garbage in the output rows: every output register must be written by run_batch.
    let mut got = vec![[[f32::from_bits(0x7FC0_1234); 4]; 16]; inputs.len()];
    let got_info = shader.invoke(Invocation::batch(uniforms, inputs, &mut got).budget(budget));
    match (&want_info, &got_info) {
        (Ok(w), Ok(g)) => {
            assert_eq!(
                w.instructions,
                g.instructions,
                "instruction counts differ\n{}",
                what()
            );
            assert!(
                bits(&want) == bits(&got),
                "outputs differ: {}\n{}",
                first_diff(&want, &got),
                what()
            );
            check_masked(shader, inputs, uniforms, budget, &want, what);
        }
        (Err(w), Err(g)) => {
            assert_eq!(w, g, "errors differ\n{}", what());
            // Rows before the failing one are finished.
            let Error::Exec { index: n, .. } = *w else {
                panic!("the reference fails only on the interpreter: {w}");
            };
            assert!(
                bits(&want[..n]) == bits(&got[..n]),
                "outputs before the error differ: {}\n{}",
                first_diff(&want[..n], &got[..n]),
                what()
            );
        }
        _ => panic!(
            "interpreter {want_info:?}, run_batch {got_info:?}\n{}",
            what()
        ),
    }
}

/// [`check_batch`] with a budget no program here reaches, and the shader's batch statistics
/// before and after it.
fn check_stats(
    shader: &Compiled,
    inputs: &[Row],
    uniforms: &Uniforms,
    what: &dyn Fn() -> String,
) -> (BatchStats, BatchStats) {
    let before = shader.batch_stats();
    check_batch(shader, inputs, uniforms, 1 << 20, what);
    (before, shader.batch_stats())
}

/// `run_batch_masked`: the registers in the mask exactly as `run_batch` gives them, every
/// other register either untouched or the vertex's value.
fn check_masked(
    shader: &CompiledShader,
    inputs: &[Row],
    uniforms: &Uniforms,
    budget: u64,
    want: &[Row],
    what: &dyn Fn() -> String,
) {
    const SENTINEL: u32 = 0x7FC0_5678;
    let masks = [0x0001u16, 0xA5C3, 0x5A3C, 0x0000];
    let mask = masks[inputs.len() % masks.len()];
    let mut got = vec![[[f32::from_bits(SENTINEL); 4]; 16]; inputs.len()];
    shader
        .invoke(
            Invocation::batch(uniforms, inputs, &mut got)
                .mask(mask)
                .budget(budget),
        )
        .unwrap_or_else(|e| panic!("masked run failed: {e:?}\n{}", what()));
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        for o in 0..16 {
            for c in 0..4 {
                let (x, y) = (w[o][c].to_bits(), g[o][c].to_bits());
                let ok = x == y || (mask >> o & 1 == 0 && y == SENTINEL);
                assert!(
                    ok,
                    "mask {mask:#06x}: vertex {k} o{o}.{c}: want {x:08x}, got {y:08x}\n{}",
                    what()
                );
            }
        }
    }
}

// ---------------------------------------------------------------- value generation

/// Per-vertex inputs: vertex 0 keeps the test case's inputs, the others mix them with fresh
/// [`Values::Batch`] values component by component.
fn batch_inputs(base: &Row, n: usize, mode: FloatMode, r: &mut Rng) -> Vec<Row> {
    testgen::batch_inputs(base, n, mode, r)
}

// ---------------------------------------------------------------- examples

const VERTEX_EXAMPLES: [&str; 7] = [
    "mvp.v.pica",
    "lighting.v.pica",
    "lights_loop.v.pica",
    "lights8.v.pica",
    "skinning.v.pica",
    "skinning4.v.pica",
    "branches.v.pica",
];

#[test]
fn examples_run_on_the_soa_path_and_match() {
    for b in backends() {
        examples_on(b);
    }
}

fn examples_on(b: Target) {
    let workloads = Workload::examples().unwrap();
    let mut seen = Vec::new();
    for w in workloads.iter().filter(|w| w.kind() == ShaderKind::Vertex) {
        seen.push(w.name.clone());
        for mode in MODES {
            let shader = compile_on(&w.program, mode, b);
            let uniforms = w.uniforms(mode);
            for n in [67usize, 1024] {
                let inputs = w.inputs(mode, n);
                let what = || format!("{b} {} {mode:?} n={n}", w.name);
                check_batch(&shader, &inputs, &uniforms, 1 << 20, &what);
            }
            let s = shader.batch_stats();
            assert!(
                s.groups > 0,
                "{b} {}: no group ran on SoA code ({s:?})",
                w.name
            );
            assert_eq!(s.fallbacks, 0, "{b} {} {mode:?}: {s:?}", w.name);
            if w.name == "branches.v.pica" {
                // Its IFC/BREAKC/JMPC depend on per-vertex normals and depths: the random
                // vertices of the benchmark disagree within groups, which finish with lane
                // masks. Groups whose vertices agree (each group one vertex repeated, the
                // coherent case of neighbouring vertices) need no split at all.
                assert!(s.splits > 0, "{b} {} {mode:?}: {s:?}", w.name);
                let coherent: Vec<Row> = w
                    .inputs(mode, 64)
                    .iter()
                    .flat_map(|row| std::iter::repeat_n(*row, 8))
                    .collect();
                let what = || format!("{b} {} {mode:?} coherent groups", w.name);
                let (before, s2) = check_stats(&shader, &coherent, &uniforms, &what);
                // check_batch runs the batch twice: `run_batch` and `run_batch_masked`.
                assert_eq!(
                    s2.groups - before.groups,
                    2 * 64,
                    "{} {mode:?}: {s2:?}",
                    w.name
                );
                assert_eq!(s2.splits, before.splits, "{} {mode:?}: {s2:?}", w.name);
            }
            eprintln!("{b} {} {mode:?}: {:?}", w.name, shader.batch_stats());
        }
    }
    for name in VERTEX_EXAMPLES {
        assert!(seen.iter().any(|s| s == name), "example {name} not tested");
    }
}

// ---------------------------------------------------------------- random programs

fn random(mode: FloatMode, flow: bool, seed0: u64, n: u64) {
    for b in backends() {
        // Emulated code runs far slower: every fourth program of the same range (native
        // AArch64: all of them), the same programs with four and with eight lanes.
        let step = if b == Backend::A64 && cfg!(target_arch = "x86_64") {
            4
        } else {
            1
        };
        random_on(b, mode, flow, seed0, n, step);
    }
}

fn random_on(b: Target, mode: FloatMode, flow: bool, seed0: u64, n_all: u64, step: u64) {
    let n = n_all.div_ceil(step);
    let cfg = Options {
        mode,
        kind: ShaderKind::Vertex,
        max_len: 48,
        flow,
        ..Options::default()
    };
    let mut soa_groups = 0;
    let mut fallbacks = 0;
    let mut splits = 0;
    let mut too_large = 0;
    let mut r = Rng::new(seed0 ^ 0xBA7C);
    for seed in (seed0..seed0 + n_all).step_by(step as usize) {
        let case = generate(seed, &cfg);
        let shader = match compile_for(&case.program, mode, b) {
            Ok(shader) => Compiled {
                shader,
                program: &case.program,
                mode,
            },
            Err(picajit_jit::Error::Unsupported(_)) => continue,
            Err(e) => panic!("{e}"),
        };
        if b == Backend::A64 && shader.batch_lanes() == 1 {
            // NEON code beyond the ±1 MiB reach of AArch64 branches runs per vertex: only
            // programs the analysis unrolled into thousands of instances get there.
            assert!(
                shader.analysis().nodes.len() > 1000,
                "{b} seed {seed}: {:?}\n{}",
                shader.batch_ineligibility(),
                shader.analysis()
            );
            too_large += 1;
            continue;
        }
        assert_eq!(
            shader.batch_lanes(),
            8,
            "{b} seed {seed}: {:?}",
            shader.batch_ineligibility()
        );
        let size = SIZES[(seed % SIZES.len() as u64) as usize];
        let inputs = batch_inputs(&case.inputs, size, mode, &mut r);
        let budget = if seed % 7 == 0 { 1 + seed % 40 } else { 4000 };
        let what = || {
            format!(
                "{b} seed {seed} mode {mode:?} flow {flow} size {size} budget {budget}\n{}",
                picajit::pica::asm::disassemble_program(
                    case.program.code(),
                    case.program.opdescs(),
                    case.program.entry() as u32,
                    case.program.kind()
                )
            )
        };
        check_batch(&shader, &inputs, &case.uniforms, budget, &what);
        let s = shader.batch_stats();
        soa_groups += s.groups;
        fallbacks += s.fallbacks;
        splits += s.splits;
    }
    eprintln!(
        "{b} {mode:?} flow={flow}: {soa_groups} SoA groups, {fallbacks} fallbacks, {splits} \
         splits, {too_large} programs too large"
    );
    assert!(soa_groups > n / 4, "{b}: too few groups ran on SoA code");
    assert!(too_large <= n / 20, "{b}: {too_large} programs too large");
    if flow {
        // Lanes of random groups take different branches: many must finish with lane masks.
        assert!(
            splits > n / 40,
            "too few divergent branches ran with lane masks"
        );
    }
}

/// One test per float mode, straight-line and with control flow: the first seed and the
/// default number of programs ([`cases`]).
macro_rules! random_tests {
    ($($name:ident: $mode:expr, $flow:expr, $seed0:expr, $n:expr;)*) => {$(
        #[test]
        fn $name() {
            random($mode, $flow, $seed0, cases($n));
        }
    )*};
}

random_tests! {
    random_straight_line_f24_rtz: F24Z, false, 100_000, 2000;
    random_straight_line_f24_rne: F24N, false, 200_000, 1500;
    random_straight_line_f32: FloatMode::F32, false, 300_000, 1500;
    random_flow_f24_rtz: F24Z, true, 400_000, 2000;
    random_flow_f24_rne: F24N, true, 500_000, 1000;
    random_flow_f32: FloatMode::F32, true, 600_000, 1000;
}

// ---------------------------------------------------------------- hand-written shapes

/// Inputs `a` and `b`, outputs `opos`, `oclr`, `otc0` and `otc1`: the declarations of the
/// hand-written programs that read two inputs.
const IO_AB: &str = ".in a v0\n.in b v1\n.out opos position\n.out oclr color\n\
                     .out otc0 texcoord0\n.out otc1 texcoord1\n";

fn shapes_source() -> String {
    format!(
        "\n.fvec table[8]\n.constf k(0.0, 1.0, 2.0, 3.0)\n.consti loop3(2, 250, 3, 0)\n\
         {IO_AB}.out otc2 texcoord2\n.proc main{}",
        r#"
    mova a0.xy, a
    mov r8, b
    mov r6, table[a0.y+2]
    add r0, table[a0.x], r6
    mad r1.xz, b.yxwz, -table[a0.y+7].wzyx, r0
    dp4 r2.y, table[a0.x+1], b
    mov opos, r0
    mov opos.yw, r1
    cmp r9, gt, le, a.xwyz
    ifc cmp.x
        mov r7, table[a0.y]
        for loop3
            add r7.x, table[aL], r7.x
        .end
        mov oclr, r7
    .else
        mov oclr, -a
        rcp oclr.z, b.y
        rsq oclr.w, b.z
    .end
    jmpc !cmp.y, skip
    litp otc0, b
    flr otc0.y, a.x
    ex2 otc0.z, b.w
    lg2 otc0.w, b.x
skip:
    dph r3.x, a, r8
    dp3 r3.z, r2, -b.wzyx
    sge r3.w, a, r8
    slt r3.y, r8.xxxx, a
    max r4, a, -r8
    min r4.xy, r3, a
    dst r5, a, r8
    mov otc0.x, r3
    mov otc1, r4
    mov otc2, r5
    end
.end
"#
    )
}

#[test]
fn hand_written_shapes() {
    for b in backends() {
        shapes_on(b);
    }
}

fn shapes_on(b: Target) {
    let w = Workload::from_source("shapes.v.pica", &shapes_source()).unwrap();
    let mut r = Rng::new(77);
    for mode in MODES {
        let shader = compile_on(&w.program, mode, b);
        assert_eq!(shader.batch_lanes(), 8);
        let mut uniforms = w.uniforms(mode);
        for i in 0..96 {
            let row = [0; 4].map(|_: i32| value(&mut r, mode, Values::Batch));
            uniforms.set_float_raw(i, row);
        }
        // Groups whose a.x and a.w signs agree (so IFC and JMPC are uniform), then groups
        // with mixed signs (divergent), with a0 offsets in and out of -128..=127, NaN, inf.
        for coherent in [true, false] {
            let mut inputs = Vec::new();
            for g in 0..16 {
                for _ in 0..8 {
                    let mut row = [[0.0f32; 4]; 16];
                    for reg in row.iter_mut().take(2) {
                        for x in reg.iter_mut() {
                            *x = value(&mut r, mode, Values::Batch);
                        }
                    }
                    // Address-like values for mova: some in range, some far out.
                    let addr = |r: &mut Rng| match r.below(4) {
                        0 => r.below(300) as f32 - 150.0,
                        1 => r.below(16) as f32,
                        _ => value(r, mode, Values::Batch),
                    };
                    row[0][0] = addr(&mut r);
                    row[0][1] = addr(&mut r);
                    if coherent {
                        let sx = if g % 2 == 0 { 1.0 } else { -1.0 };
                        let sw = if g % 4 < 2 { 1.0 } else { -1.0 };
                        row[0][0] = sx * (1.0 + (r.below(64) as f32));
                        row[0][3] = sw * (1.0 + (r.below(64) as f32));
                        row[0][1] = sw * (1.0 + (r.below(64) as f32));
                        row[0][2] = sw * (1.0 + (r.below(64) as f32));
                    }
                    inputs.push(row);
                }
            }
            let what = || format!("{b} shapes {mode:?} coherent {coherent}");
            let (before, after) = check_stats(&shader, &inputs, &uniforms, &what);
            // Every group finishes on SoA code, twice (`run_batch` and `run_batch_masked`,
            // see check_batch): divergent ones with lane masks.
            assert_eq!(
                after.groups - before.groups,
                2 * 16,
                "{b} {mode:?} {after:?}"
            );
            assert_eq!(after.fallbacks, before.fallbacks, "{b} {mode:?} {after:?}");
            if coherent {
                assert_eq!(after.splits, before.splits, "{b} {mode:?} {after:?}");
            } else {
                assert!(after.splits > before.splits, "{b} {mode:?} {after:?}");
            }
        }
    }
}

/// MOVA, LITP and CMP with every operator pair on the lane code of both hosts, over
/// `testgen::MOVA_LITP_CMP_EDGES` in every lane: a0 observed through relative reads (every
/// uniform row distinct), LITP's result directly, and every cmp flag (CMP's and LITP's)
/// through IFC, which adds a distinct power of two per operator to an output.
#[test]
fn mova_cmp_litp_edges_on_lanes() {
    for b in backends() {
        edges_on(b);
    }
}

fn edges_on(b: Target) {
    let e: Vec<f32> = testgen::MOVA_LITP_CMP_EDGES
        .iter()
        .map(|&x| f32::from_bits(x))
        .collect();
    let n = e.len();
    let lanes = |i: usize, step: usize| [0, 1, 2, 3].map(|l| e[(i + l * step) % n]);
    // Program k pairs x operator j with y operator (j + k) % 8: all 64 pairs over eight
    // programs.
    for k in 0..8 {
        let ops = ["eq", "ne", "lt", "le", "gt", "ge", "true6", "true7"];
        let bits = [
            "p0.x", "p0.y", "p0.z", "p0.w", "p1.x", "p1.y", "p1.z", "p1.w",
        ];
        let mut lines: Vec<String> = [
            ".fvec table[8]",
            ".constf p0(1.0, 2.0, 4.0, 8.0)",
            ".constf p1(16.0, 32.0, 64.0, 128.0)",
            ".constf zero(0.0, 0.0, 0.0, 0.0)",
            ".in a v0",
            ".in b v1",
            ".in c v2",
            ".out rowx position",
            ".out rowy color",
            ".out lit texcoord0",
            ".out flags texcoord1",
            ".proc main",
            "mova a0.xy, a",
            "mov rowx, table[a0.x]",
            "mov rowy, table[a0.y+5]",
            "litp lit, b",
            "mov r0, zero",
            "ifc cmp.x",
            "add r0.z, p0.x, r0.z",
            ".end",
            "ifc cmp.y",
            "add r0.w, p0.x, r0.w",
            ".end",
            "mov r1, c",
        ]
        .map(String::from)
        .into();
        for j in 0..8 {
            let (x, y, bit) = (ops[j], ops[(j + k) % 8], bits[j]);
            lines.extend([
                format!("cmp b, {x}, {y}, r1"),
                "ifc cmp.x".into(),
                format!("add r0.x, {bit}, r0.x"),
                ".end".into(),
                "ifc cmp.y".into(),
                format!("add r0.y, {bit}, r0.y"),
                ".end".into(),
            ]);
        }
        lines.extend(["mov flags, r0", "end", ".end"].map(String::from));
        let src = lines.join("\n");
        let w = Workload::from_source("edges.v.pica", &src).unwrap();
        for mode in MODES {
            let shader = compile_on(&w.program, mode, b);
            let mut uniforms = w.uniforms(mode);
            for i in 0..96 {
                uniforms.set_float_raw(i, [0, 1, 2, 3].map(|l| (4 * i + l) as f32));
            }
            // Each value in every lane of every operand, against neighbours and values far
            // away in the list; 3n vertices, so groups see many different values per lane.
            let inputs: Vec<Row> = (0..3 * n)
                .map(|i| {
                    let mut row = [[0.0f32; 4]; 16];
                    row[0] = lanes(i, 1 + i / n);
                    row[1] = lanes(i * 5, 3);
                    row[2] = lanes(i * 5 + k + i / n, 7);
                    row
                })
                .collect();
            let what = || format!("{b} edges program {k} {mode:?}\n{src}");
            let (before, after) = check_stats(&shader, &inputs, &uniforms, &what);
            assert!(after.groups > before.groups, "{b} {mode:?} {after:?}");
            assert_eq!(after.fallbacks, before.fallbacks, "{b} {mode:?} {after:?}");
        }
    }
}

/// A call reuses the previous call's flushed uniform tables when the uniforms are the same
/// bits in the same float mode: a changed row, and a mode switch with the same uniforms (F24
/// flushes 1e-30 to zero, F32 keeps it), must be seen by relative reads (a0 and aL) in
/// flushing arithmetic, in either order of the two programs.
#[test]
fn uniform_changes_between_calls_are_seen() {
    for b in backends() {
        uniform_changes_on(b);
    }
}

fn uniform_changes_on(b: Target) {
    const A0: &str = r#"
.fvec t[16]
.in a v0
.out opos position
.proc main
    mova a0.x, a.x
    mul r0, t[a0.x], a.yyyy
    mov opos, r0
    end
.end
"#;
    // One iteration with aL = 3.
    const AL: &str = r#"
.fvec t[16]
.consti once(0, 3, 1, 0)
.in a v0
.out opos position
.proc main
    for once
        mul r0, t[aL], a.yyyy
    .end
    mov opos, r0
    end
.end
"#;
    let programs: Vec<Workload> = [("a0.v.pica", A0), ("al.v.pica", AL)]
        .iter()
        .map(|(name, src)| Workload::from_source(name, src).unwrap())
        .collect();
    let inputs: Vec<Row> = (0..64)
        .map(|k| {
            let mut row = [[0.0f32; 4]; 16];
            // a.y = 2^40: an unflushed 1e-30 gives a normal f24 product.
            row[0] = [(k % 16) as f32, 1099511627776.0, 0.0, 0.0];
            row
        })
        .collect();
    let shaders: Vec<Vec<_>> = programs
        .iter()
        .map(|w| {
            MODES
                .iter()
                .map(|&m| compile_on(&w.program, m, b))
                .collect()
        })
        .collect();
    // The aL program's `.consti` (the a0 one has no constants).
    let mut uniforms = programs[1].uniforms(F24Z);
    for i in 0..16 {
        uniforms.set_float_raw(i, [i as f32, -(i as f32), 1.0e-30, -0.0]);
    }
    let changes: [(usize, [f32; 4]); 4] = [
        (3, [1.5, -2.0, 1.0e-30, 4.0]),
        (3, [2.5, -2.0, 1.0e-30, 4.0]),
        (5, [1.0, 1.0, -1.0e-30, -0.0]),
        (3, [2.5, -2.0, -1.0e-30, 0.0]),
    ];
    for (row, v) in changes {
        uniforms.set_float_raw(row, v);
        // Each change is first seen by the mode and program of the call before it (an F24
        // mode: F32 arithmetic reads the uniforms as they are); the a0 program then reuses
        // the aL program's fill, which it must triple first.
        for (p, k) in [
            (1, 0),
            (0, 0),
            (1, 2),
            (0, 1),
            (1, 1),
            (0, 2),
            (1, 2),
            (1, 0),
        ] {
            let (shader, mode) = (&shaders[p][k], MODES[k]);
            let what = || format!("{b} {} row {row} = {v:?}, {mode:?}", programs[p].name);
            let (before, after) = check_stats(shader, &inputs, &uniforms, &what);
            assert_eq!(after.groups - before.groups, 16, "{}", what());
        }
    }
}

// ---------------------------------------------------------------- divergence

/// A program with input `a` and outputs `opos` and `oclr`: `decls`, those declarations, and
/// `body` (from the end of the `.proc main` line) as `main`; a body may close `main` and add
/// procedures, the last `.end` is added.
fn with_io(decls: &str, body: &str) -> String {
    format!("{decls}.in a v0\n.out opos position\n.out oclr color\n.proc main{body}.end\n")
}

/// Shapes of divergent control flow, each with whether its divergent groups can finish with
/// lane masks (`true`) or must stop and rerun per vertex (`false`: a lane needs its own aL or
/// loop counter, which a group keeps once), and its declarations and body ([`with_io`]).
const DIVERGENT: [(&str, bool, &str, &str); 7] = [
    (
        "if_else_join",
        true,
        "\n.constf k(0.0, 1.0, 2.0, 0.5)\n",
        r#"
    cmp k.xxxx, lt, ge, a.xyzw
    mov r1, k.wwww
    ifc cmp.x
        mul r0, a, a
        ifc cmp.y
            add r1, k.yyyy, r0
        .end
    .else
        add r0, -k.zzzz, a
        rcp r0.y, a.y
    .end
    mov opos, r0
    mov oclr, r1
    end
"#,
    ),
    (
        "break_inside_loop",
        true,
        "\n.fvec table[8]\n.constf k(0.0, 1.0, 2.0, 0.5)\n.consti loop8(7, 0, 1, 0)\n",
        r#"
    mov r0, k.xxxx
    mov r1, k.xxxx
    for loop8
        add r0, table[aL], r0
        cmp table[aL], le, lt, a.xxxx
        breakc cmp.x
        add r1, k.yyyy, r1
    .end
    mov opos, r0
    mov oclr, r1
    end
"#,
    ),
    (
        "if_inside_loop_rejoins",
        true,
        "\n.fvec table[8]\n.constf k(0.0, 1.0, 2.0, 0.5)\n.consti loop4(3, 2, 1, 0)\n",
        r#"
    mov r0, a
    mov r1, k.xxxx
    for loop4
        cmp table[aL], lt, lt, r0
        ifc cmp.x
            mul r0, k.wwww, r0
        .else
            add r1, table[aL], r1
        .end
        mova a0.x, r1.x
        add r1, table[a0.x], r1
    .end
    mov opos, r0
    mov oclr, r1
    end
"#,
    ),
    (
        "end_and_jump_per_lane",
        true,
        "\n.constf k(0.0, 1.0, 2.0, 0.5)\n",
        r#"
    mov oclr, k.yyyy
    cmp k.xxxx, lt, lt, a.xyzw
    jmpc cmp.y, later
    mov opos, a
    ifc cmp.x
        end
    .end
    mov oclr, -a
    end
later:
    mov opos, -a
    litp oclr, a
    end
"#,
    ),
    (
        "call_and_loop_in_divergent_arm",
        true,
        "\n.fvec table[8]\n.constf k(0.0, 1.0, 2.0, 0.5)\n.consti loop3(2, 1, 2, 0)\n",
        r#"
    mov r0, k.xxxx
    cmp k.xxxx, lt, lt, a.xyzw
    callc cmp.x, sub
    ifc cmp.y
        for loop3
            add r0, table[aL], r0
        .end
    .end
    mov opos, r0
    mov oclr, a
    end
.end
.proc sub
    add r0, k.zzzz, a
    cmp k.zzzz, le, le, r0
"#,
    ),
    (
        "al_after_divergent_break",
        false,
        "\n.fvec table[8]\n.constf k(0.0, 1.0, 2.0, 0.5)\n.consti loop8(7, 0, 1, 0)\n",
        r#"
    mov r0, k.xxxx
    for loop8
        cmp table[aL], le, lt, a.xxxx
        breakc cmp.x
        add r0, k.yyyy, r0
    .end
    mov opos, table[aL]
    mov oclr, r0
    end
"#,
    ),
    (
        "outer_loop_after_divergent_inner_break",
        false,
        "\n.fvec table[8]\n.constf k(0.0, 1.0, 2.0, 0.5)\n.consti outer(2, 0, 2, 0)\n.consti inner(3, 0, 1, 0)\n",
        r#"
    mov r0, k.xxxx
    for outer
        for inner
            cmp table[aL], le, lt, a.xxxx
            breakc cmp.x
            add r0, k.yyyy, r0
        .end
        add r0, table[aL], r0
    .end
    mov opos, r0
    mov oclr, a
    end
"#,
    ),
];

/// More blocks than one 64-bit word of the scheduler's pending set: forty divergent
/// IF/ELSE regions in a row, each with a nested IF, so that waiting lanes sit at blocks
/// beyond 63 and the scheduler scans several words.
#[test]
fn divergence_over_many_blocks() {
    for b in backends() {
        many_blocks_on(b);
    }
}

fn many_blocks_on(b: Target) {
    let mut body = String::from("\n    mov r0, a\n    mov r1, k.xxxx\n");
    for i in 0..40 {
        let c = ["x", "y", "z", "w"][i % 4];
        for line in [
            // On the unchanging input, so that every region diverges.
            format!("    cmp k.xxxx, lt, lt, a.{c}{c}{c}{c}"),
            "    ifc cmp.x".into(),
            "        add r1, k.yyyy, r1".into(),
            "        mul r0, k.wwww, r0.yzwx".into(),
            "        ifc cmp.y".into(),
            "            add r1, k.wwww, r1".into(),
            "        .end".into(),
            "    .else".into(),
            "        add r1, -k.zzzz, r1".into(),
            "        add r0, k.yyyy, r0.wxyz".into(),
            "    .end".into(),
        ] {
            body.push_str(&line);
            body.push('\n');
        }
    }
    body.push_str("    mov opos, r0\n    mov oclr, r1\n    end\n");
    let src = with_io(".constf k(0.0, 1.0, 2.0, 0.5)\n", &body);
    let w = Workload::from_source("many_blocks.v.pica", &src).unwrap();
    let mut r = Rng::new(4321);
    for mode in MODES {
        let shader = compile_on(&w.program, mode, b);
        assert!(
            shader.analysis().blocks.len() > 128,
            "{}",
            shader.analysis()
        );
        assert_eq!(shader.batch_lanes(), 8);
        let uniforms = w.uniforms(mode);
        let inputs: Vec<Row> = (0..256)
            .map(|_| {
                let mut row = [[0.0f32; 4]; 16];
                row[0] = [0; 4].map(|_: i32| r.below(9) as f32 - 4.0);
                row
            })
            .collect();
        let what = || format!("{b} many blocks {mode:?}");
        let (before, after) = check_stats(&shader, &inputs, &uniforms, &what);
        assert_eq!(after.fallbacks, before.fallbacks, "{b} {after:?}");
        assert!(after.splits > before.splits + 64, "{b} {after:?}");
        for budget in [30, 90, 150] {
            let what = || format!("{b} many blocks {mode:?} budget {budget}");
            check_batch(&shader, &inputs[..40], &uniforms, budget, &what);
        }
    }
}

/// Divergent groups run with lane masks where the hardware state allows (results,
/// instruction counts and errors as per vertex, no fallback), and stop where a lane would
/// need its own aL or loop counter; small budgets stop them too.
#[test]
fn divergent_shapes() {
    for b in backends() {
        divergent_shapes_on(b);
    }
}

fn divergent_shapes_on(b: Target) {
    let mut r = Rng::new(1234);
    for (name, masked, decls, body) in DIVERGENT {
        let src = with_io(decls, body);
        let w = Workload::from_source(&format!("{name}.v.pica"), &src).unwrap();
        for mode in MODES {
            let shader = compile_on(&w.program, mode, b);
            let mut uniforms = w.uniforms(mode);
            for i in 0..8 {
                // Descending thresholds, so that BREAKC leaves at different iterations.
                let t = 8.0 - 2.0 * i as f32;
                uniforms.set_float_raw(i, [t, -t, 0.5 * t, 1.0]);
            }
            let inputs: Vec<Row> = (0..64 * 8)
                .map(|_| {
                    let mut row = [[0.0f32; 4]; 16];
                    for x in row[0].iter_mut() {
                        *x = if r.below(4) == 0 {
                            value(&mut r, mode, Values::Batch)
                        } else {
                            r.below(41) as f32 * 0.5 - 10.0
                        };
                    }
                    row
                })
                .collect();
            let what = || format!("{b} {name} {mode:?}");
            let (before, after) = check_stats(&shader, &inputs, &uniforms, &what);
            if masked {
                assert!(after.splits > before.splits, "{name} {mode:?}: {after:?}");
                assert_eq!(
                    after.fallbacks, before.fallbacks,
                    "{name} {mode:?}: {after:?}"
                );
                assert_eq!(after.groups - before.groups, 2 * 64, "{name} {mode:?}");
            } else {
                assert!(
                    after.fallbacks > before.fallbacks,
                    "{name} {mode:?}: {after:?}"
                );
                // Divergent groups stop one after another: later ones run per vertex
                // without a SoA attempt.
                assert!(after.skipped > before.skipped, "{name} {mode:?}: {after:?}");
            }
            // Budgets around the per-vertex counts: a group whose blocks, summed over both
            // arms of its branches, exceed the budget reruns per vertex, where each vertex
            // either finishes or fails exactly as on the interpreter.
            for budget in [6, 11, 17, 25, 40] {
                let what = || format!("{b} {name} {mode:?} budget {budget}");
                check_batch(&shader, &inputs[..80], &uniforms, budget, &what);
            }
        }
    }
}

/// EX2 and LG2 (integer code) and RCP and RSQ (`recipes::reciprocal`) run on every lane of
/// the multi-vertex code: every f24 input (or, with `PICAJIT_EX2_STRIDE=n`, every n-th),
/// negated too, and a sweep of raw f32 patterns, against the float model's functions, bit
/// for bit, in each mode. (RSQ's F24 recipes are proven for f24 inputs only,
/// `picajit_interp::pica::float::transcendental`; on these raw patterns they agree too.)
fn transcendental_lanes_match_the_float_model(op: &str, f: fn(f32, FloatMode) -> f32) {
    for b in backends() {
        transcendental_on(b, op, f);
    }
}

fn transcendental_on(b: Target, op: &str, f: fn(f32, FloatMode) -> f32) {
    let stride: u32 = std::env::var("PICAJIT_EX2_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        // Debug builds run the float model ~10x slower: a sparser default sweep there; the
        // emulated NEON code (under unicorn) sparser still.
        .unwrap_or(if cfg!(debug_assertions) { 251 } else { 61 });
    let emulated = b == Backend::A64 && cfg!(target_arch = "x86_64");
    let (stride, raw_count) = match (emulated, std::env::var("PICAJIT_EX2_STRIDE").is_ok()) {
        (true, false) => (stride * 4, 1u32 << 18),
        _ => (stride, 1u32 << 20),
    };
    let src = format!(".proc main\n    {op} o0.x, v0.x\n    {op} o0.y, -v0.x\n    end\n.end\n");
    let w = Workload::from_source("t.v.pica", &src).unwrap();
    for mode in MODES {
        let shader = compile_on(&w.program, mode, b);
        assert_eq!(shader.batch_lanes(), 8);
        let uniforms = Uniforms::default();
        let f24 = (0..1u32 << 24)
            .step_by(stride as usize)
            .map(|b| F24::from_bits(b).to_f32());
        // Raw f32 patterns (the batch API takes any register value).
        let raw = (0..raw_count).map(|k| f32::from_bits(k.wrapping_mul(4093) ^ (k << 12)));
        let values: Vec<f32> = f24.chain(raw).collect();
        for chunk in values.chunks(1 << 14) {
            let n = chunk.len() - chunk.len() % 8;
            let inputs: Vec<Row> = chunk[..n]
                .iter()
                .map(|&x| {
                    let mut row = [[0.0f32; 4]; 16];
                    row[0] = [x; 4];
                    row
                })
                .collect();
            let mut got = vec![[[0.0f32; 4]; 16]; n];
            shader
                .invoke(Invocation::batch(&uniforms, &inputs, &mut got).budget(1 << 10))
                .unwrap();
            assert_eq!(shader.batch_stats().fallbacks, 0);
            for (row, x) in got.iter().zip(&chunk[..n]) {
                let want = [f(*x, mode), f(-*x, mode)];
                for c in 0..2 {
                    assert_eq!(
                        row[0][c].to_bits(),
                        want[c].to_bits(),
                        "{b} {mode:?}: {op}({}{:#010x})",
                        if c == 1 { "-" } else { "" },
                        x.to_bits()
                    );
                }
            }
        }
    }
}

/// One test per function: the opcode and the float model's function.
macro_rules! transcendental_tests {
    ($($name:ident: $op:literal, $f:ident;)*) => {$(
        #[test]
        fn $name() {
            transcendental_lanes_match_the_float_model($op, picajit::interp::pica::float::$f);
        }
    )*};
}

transcendental_tests! {
    ex2_lanes_match_the_float_model_over_the_f24_range: "ex2", ex2;
    lg2_lanes_match_the_float_model_over_the_f24_range: "lg2", lg2;
    rcp_lanes_match_the_float_model_over_the_f24_range: "rcp", rcp;
    rsq_lanes_match_the_float_model_over_the_f24_range: "rsq", rsq;
}

/// Flushing reads of temporaries written by a MOV of an input or uniform load the source's
/// flushed copy (`Gen::alias` in the generator): with every special value in the moved
/// registers, under swizzles, masks, negation (RCP and RSQ see the sign of a flushed zero),
/// partial overwrites and re-MOVs within the block, the results must be the interpreter's.
#[test]
fn flushing_reads_of_moved_registers() {
    for b in backends() {
        moved_registers_on(b);
    }
}

fn moved_registers_on(b: Target) {
    let src = format!(
        "\n.fvec k\n{IO_AB}.proc main{}",
        r#"
    mov r0, a
    mov r1.yzw, b.wzyx
    mov r2, k
    mul r3, r0, r1
    dp4 r4.x, r0, -r1
    rcp r4.y, r0.x
    rsq r4.z, -r0.y
    rcp r4.w, -r1.w
    mov r0.y, b
    add r5, r0, r2.wzyx
    mad r6, -r0, r1, r2
    rsq r7.x, r2.z
    mov r1, -a
    rcp r7.y, r1.x
    flr r7.zw, r1.xxyy
    mov opos, r3
    mov oclr, r4
    add otc0, r5, r6
    mov otc1, r7
    end
.end
"#
    );
    let w = Workload::from_source("moved.v.pica", &src).unwrap();
    for mode in MODES {
        let shader = compile_on(&w.program, mode, b);
        let specials: Vec<f32> = match mode {
            FloatMode::F32 => picajit_testkit::testgen::F32_SPECIALS
                .iter()
                .map(|&b| f32::from_bits(b))
                .collect(),
            FloatMode::F24(_) => picajit_testkit::testgen::F24_SPECIALS
                .iter()
                .map(|&b| F24::from_bits(b).to_f32())
                .collect(),
        };
        let n = specials.len();
        let inputs: Vec<Row> = (0..n * 3)
            .map(|k| {
                let mut row = [[0.0f32; 4]; 16];
                for (r, reg) in row.iter_mut().enumerate().take(2) {
                    for (c, v) in reg.iter_mut().enumerate() {
                        *v = specials[(k * 7 + r * 5 + c * 3 + k / n) % n];
                    }
                }
                row
            })
            .collect();
        for (j, &kv) in specials.iter().enumerate().step_by(5) {
            let mut uniforms = w.uniforms(mode);
            uniforms.set_float_raw(0, [kv, specials[(j + 1) % n], specials[(j + 2) % n], kv]);
            let what = || format!("{b} {mode:?}, k = special {j}");
            check_batch(&shader, &inputs, &uniforms, 1 << 20, &what);
        }
        assert!(shader.batch_stats().groups > 0);
    }
}

/// A C ABI call that must succeed.
#[track_caller]
fn ok(status: picajit::capi::PicajitStatus) {
    assert_eq!(status, picajit::capi::PicajitStatus::PICAJIT_OK);
}

/// Whole vertices of 64 packed f32 values, through the C ABI.
const C_ROWS: picajit::capi::pica::PicajitVertexLayout = picajit::capi::pica::PicajitVertexLayout {
    format: picajit::capi::pica::PicajitFormat::PICAJIT_FORMAT_F32 as u32,
    flags: 0,
    mask: 0xFFFF,
    stride: 256,
};

/// The vertices the C ABI lane-code tests run.
const C_VERTICES: usize = 203;

/// The JITs with lane code on this host, as C ABI backends (AArch64 under the emulator on
/// other hosts).
fn c_jits() -> Vec<picajit::capi::PicajitEngineKind> {
    use picajit::capi::PicajitEngineKind;
    let mut jits = vec![PicajitEngineKind::PICAJIT_ENGINE_A64];
    if backends().iter().any(|t| *t == Backend::X64) {
        jits.push(PicajitEngineKind::PICAJIT_ENGINE_X64);
    }
    jits
}

/// The example `w` for the C ABI: its shbin, [`C_VERTICES`] vertices of its inputs as
/// [`C_ROWS`], and its uniforms (F24, round toward zero).
fn c_example(w: &Workload) -> (Vec<u8>, Vec<f32>, Uniforms) {
    let (name, text) = picajit::pica::bench::EXAMPLES
        .iter()
        .find(|(n, _)| *n == w.name)
        .expect("example source");
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile { name, text }])
        .expect("assembles")
        .to_bytes();
    let inputs = w.inputs(F24Z, C_VERTICES).into_iter().flatten().flatten();
    (shbin, inputs.collect(), w.uniforms(F24Z))
}

/// An engine on `backend` with `shbin`'s first DVLE loaded and a uniform table holding
/// `table`'s floats and integers and the boolean set `bools`, through the C ABI (the two C
/// ABI lane-code tests below share it).
///
/// # Safety
/// The caller releases the handles once, with [`c_release`].
unsafe fn c_load(
    backend: picajit::capi::PicajitEngineKind,
    shbin: &[u8],
    table: &Uniforms,
    bools: u16,
) -> (
    *mut picajit::capi::pica::PicajitEngine,
    *mut picajit::capi::pica::PicajitShader,
    *mut picajit::capi::pica::PicajitUniforms,
) {
    use picajit::capi::pica::*;
    use std::ptr::null_mut;
    let rows: Vec<f32> = (0..96).flat_map(|i| table.float(i)).collect();
    // SAFETY: every pointer passed is a live local of the right size; the handles are the
    // library's and go back to the caller.
    unsafe {
        let mut cfg = std::mem::zeroed::<PicajitEngineConfig>();
        ok(picajit_engine_config_init(&mut cfg));
        cfg.engine = backend as u32;
        let mut engine = null_mut();
        ok(picajit_engine_create(&cfg, &mut engine));
        let mut shader = null_mut();
        let (bytes, len) = (shbin.as_ptr().cast(), shbin.len());
        ok(picajit_shader_load_shbin(
            engine,
            bytes,
            len,
            0,
            &mut shader,
        ));
        let mut uniforms = null_mut();
        ok(picajit_uniforms_create(engine, &mut uniforms));
        ok(picajit_uniforms_set_float(uniforms, 0, 96, rows.as_ptr()));
        for (i, v) in (0..4u32).map(|i| (i, table.int(i as usize))) {
            ok(picajit_uniforms_set_int(uniforms, i, v.as_ptr()));
        }
        ok(picajit_uniforms_set_bools(uniforms, bools));
        (engine, shader, uniforms)
    }
}

/// Which backend runs `shader`, and its batch path and lanes (`picajit_shader_get_info`).
///
/// # Safety
/// `shader` is a live handle.
unsafe fn c_path(shader: *mut picajit::capi::pica::PicajitShader) -> (u32, u32, u32) {
    use picajit::capi::pica::*;
    // SAFETY: `info` is a live local of the size it says; the caller vouches for `shader`.
    unsafe {
        let mut info = std::mem::zeroed::<PicajitShaderInfo>();
        info.struct_size = std::mem::size_of::<PicajitShaderInfo>() as u32;
        ok(picajit_shader_get_info(shader, &mut info));
        (info.engine as u32, info.batch_path as u32, info.batch_lanes)
    }
}

/// Releases what [`c_load`] made.
///
/// # Safety
/// The handles are [`c_load`]'s, released once.
unsafe fn c_release(
    (engine, shader, uniforms): (
        *mut picajit::capi::pica::PicajitEngine,
        *mut picajit::capi::pica::PicajitShader,
        *mut picajit::capi::pica::PicajitUniforms,
    ),
) {
    use picajit::capi::pica::*;
    // SAFETY: the caller vouches for the handles; uniforms and shader go before the engine.
    unsafe {
        picajit_uniforms_destroy(uniforms);
        picajit_shader_destroy(shader);
        picajit_engine_destroy(engine);
    }
}

/// A JIT's [`c_path`]: active, on the eight-lane batch path.
#[track_caller]
fn assert_eight_lanes(path: (u32, u32, u32), jit: picajit::capi::PicajitEngineKind, name: &str) {
    let eight = picajit::capi::pica::PicajitBatchPath::PICAJIT_BATCH_EIGHT_LANE as u32;
    assert_eq!(path.0, jit as u32, "{name}: {jit:?} not active");
    assert_eq!((path.1, path.2), (eight, 8), "{name}: {jit:?}");
}

/// The C ABI's batch calls reach the multi-vertex code of both JITs (AArch64 under the
/// emulator here): `picajit_shader_get_info` reports the 8-lane path, and the output bytes
/// and instruction counts of `picajit_shader_run_batch`, and of `picajit_shader_run_batch_ex`
/// from a unit state (with the state handed back), equal the interpreter's through the same
/// calls (same layouts and conversions), for each example vertex shader.
#[test]
fn c_abi_batches_run_on_the_lane_code_of_both_hosts() {
    use picajit::capi::{pica::*, PicajitEngineKind};
    let jits = c_jits();
    for w in Workload::examples()
        .expect("examples")
        .iter()
        .filter(|w| w.name.ends_with(".v.pica"))
    {
        let name = &w.name;
        let (shbin, inputs, table) = c_example(w);
        let n = C_VERTICES;
        // SAFETY (whole block): every pointer passed is a live local of the right size, and
        // every handle comes from the library and is released once.
        let run = |backend: PicajitEngineKind| unsafe {
            let handles = c_load(backend, &shbin, &table, table.bools());
            let (_, shader, uniforms) = handles;
            let mut out = vec![0f32; 64 * n];
            let mut stats = PicajitRunStats::default();
            let (rows, dst) = (inputs.as_ptr().cast(), out.as_mut_ptr().cast());
            ok(picajit_shader_run_batch(
                shader, uniforms, &C_ROWS, rows, &C_ROWS, dst, n, &mut stats,
            ));
            // The same batch with every vertex starting from a given unit state
            // (`run_batch_from` on the JITs), handing back the last vertex's state.
            let mut opt = std::mem::zeroed::<PicajitRunOptions>();
            ok(picajit_run_options_init(&mut opt));
            let mut start = std::mem::zeroed::<PicajitUnitState>();
            for (k, row) in start.r.iter_mut().enumerate() {
                *row = [0.25 * k as f32, 0.5, -1.0, 2.0];
            }
            (start.a0, start.al, start.cmp) = ([3, -2], 5, [1, 0]);
            let mut end = std::mem::zeroed::<PicajitUnitState>();
            opt.state_in = &start;
            opt.state_out = &mut end;
            let mut from = vec![0f32; 64 * n];
            let mut from_stats = PicajitRunStats::default();
            let from_dst = from.as_mut_ptr().cast();
            ok(picajit_shader_run_batch_ex(
                shader,
                uniforms,
                &C_ROWS,
                rows,
                &C_ROWS,
                from_dst,
                n,
                &opt,
                &mut from_stats,
            ));
            let path = c_path(shader);
            c_release(handles);
            let bits: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
            let from_bits: Vec<u32> = from
                .iter()
                .chain(end.r.iter().flatten())
                .map(|x| x.to_bits())
                .chain(end.a0.map(|a| a as u32))
                .chain([end.al as u32, u32::from(end.cmp[0]), u32::from(end.cmp[1])])
                .collect();
            (
                bits,
                stats.instructions,
                path,
                from_bits,
                from_stats.instructions,
            )
        };
        let want = run(PicajitEngineKind::PICAJIT_ENGINE_INTERP);
        for jit in &jits {
            let got = run(*jit);
            assert_eight_lanes(got.2, *jit, name);
            assert_eq!(got.1, want.1, "{name}: {jit:?} instruction count");
            assert!(got.0 == want.0, "{name}: {jit:?} outputs differ");
            assert_eq!(
                got.4, want.4,
                "{name}: {jit:?} instruction count from a state"
            );
            assert!(
                got.3 == want.3,
                "{name}: {jit:?} outputs or final state differ from a state"
            );
        }
    }
}

/// What the NEON batch code executes per vertex, counted under the emulator (x86-64 hosts),
/// with four lanes per body run (two halves per group) and with eight (one body run per
/// group): every instruction, the q register loads and stores (per-lane state, and where a
/// spill would show), the broadcast uniform reads and the budget checks, the lane code's size
/// and the time to generate it (median of 9), and the per-vertex code's count beside them
/// (geometry shaders: per invocation of `run_points`). Both variants keep each lane value in
/// the same registers, so neither spills: the difference is the code run once per body run
/// instead of once per half. `cargo test --release --test jit_batch
/// a64_instructions -- --nocapture` prints the table DEVELOPERS.md quotes ("NEON: four lanes
/// per body run, not eight"); `PICAJIT_A64_COUNT_MODES=all` adds F24 RNE and F32.
#[test]
#[cfg(target_arch = "x86_64")]
fn a64_instructions_per_vertex() {
    use picajit_jit::testing::a64::{count_instructions, InstructionCounts};
    let workloads = Workload::examples().unwrap();
    let n = 256;
    let all_modes = std::env::var("PICAJIT_A64_COUNT_MODES").is_ok_and(|m| m == "all");
    let modes: &[FloatMode] = if all_modes { &MODES } else { &[F24Z] };
    let lanes = [A64Lanes::Four, A64Lanes::Eight];
    let target = |lanes| Target {
        backend: Backend::A64,
        lanes,
    };
    // Median time of generating the lane code, and its size.
    let codegen = |shader: &CompiledShader| {
        let mut times: Vec<_> = (0..9)
            .map(|_| shader.batch_codegen().expect("lane code").0)
            .collect();
        times.sort();
        (times[4], shader.batch_code().0.len())
    };
    let per = |x: u64, k: usize| x as f64 / k as f64;
    // The counted run: `n / 8` groups, every one on lane code.
    let all_groups_on_lanes = |before: BatchStats, s: BatchStats, name: &str, l: A64Lanes| {
        assert_eq!(
            (s.groups - before.groups, s.fallbacks - before.fallbacks),
            ((n / 8) as u64, 0),
            "{name} {l:?}: {s:?}"
        );
    };
    // Four and eight lanes per body run give the same results. The budget check runs once per
    // block per body run: half as often with one run per group (as often or less with lane
    // masks, where blocks run per lane set).
    fn four_and_eight_agree<T: PartialEq + std::fmt::Debug>(
        results: &[T],
        counts: &[InstructionCounts; 2],
        name: &str,
    ) {
        assert_eq!(
            results[0], results[1],
            "{name}: four and eight lanes disagree"
        );
        assert!(counts[1].budget <= counts[0].budget, "{name}: {counts:?}");
    }
    let row = |name: &str,
               c: [InstructionCounts; 2],
               k: usize,
               size: [(std::time::Duration, usize); 2],
               p: f64| {
        let [c4, c8] = c.map(|c| per(c.total, k));
        eprintln!(
            "| `{name}` | {} / {} | {:.0} / {:.0} | {:+.1}% | {:.1} / {:.1} | {:.1} / {:.1} | {:.2} / {:.2} | {} / {} | {:.0} |",
            size[0].1,
            size[1].1,
            c4,
            c8,
            100.0 * (c8 - c4) / c4,
            per(c[0].q_memory, k),
            per(c[1].q_memory, k),
            per(c[0].broadcast, k),
            per(c[1].broadcast, k),
            per(c[0].budget, k),
            per(c[1].budget, k),
            size[0].0.as_micros(),
            size[1].0.as_micros(),
            p,
        );
    };
    for &mode in modes {
        eprintln!(
            "\n{mode:?}, {n} vertices (geometry: {} invocations); four / eight lanes per body run:",
            n + 1
        );
        eprintln!(
            "| shader | lane code bytes | instr./vertex | eight vs four | q loads/stores | broadcast | budget | codegen µs | per-vertex code |"
        );
        eprintln!("|---|---|---|---|---|---|---|---|---|");
        for w in workloads.iter().filter(|w| w.kind() == ShaderKind::Vertex) {
            let uniforms = w.uniforms(mode);
            let inputs = w.inputs(mode, n);
            let mut outs = Vec::new();
            let mut counts = [InstructionCounts::default(); 2];
            let mut sizes = [Default::default(); 2];
            let mut p = 0.0;
            for (k, &l) in lanes.iter().enumerate() {
                let shader = compile_on(&w.program, mode, target(l));
                let mut out = vec![[[0.0f32; 4]; 16]; n];
                // Generated and loaded before counting.
                shader
                    .invoke(Invocation::batch(&uniforms, &inputs, &mut out).budget(1 << 20))
                    .unwrap();
                let before = shader.batch_stats();
                count_instructions(true);
                shader
                    .invoke(Invocation::batch(&uniforms, &inputs, &mut out).budget(1 << 20))
                    .unwrap();
                counts[k] = count_instructions(false);
                all_groups_on_lanes(before, shader.batch_stats(), &w.name, l);
                assert!(
                    counts[k].total > 0 && counts[k].broadcast > 0 && counts[k].budget > 0,
                    "{} {l:?}: {:?}",
                    w.name,
                    counts[k]
                );
                sizes[k] = codegen(&shader);
                outs.push(bits(&out));
                // The per-vertex code, for comparison: batches shorter than a group run per
                // vertex.
                count_instructions(true);
                let mut one = vec![[[0.0f32; 4]; 16]; 7];
                shader
                    .invoke(Invocation::batch(&uniforms, &inputs[..7], &mut one).budget(1 << 20))
                    .unwrap();
                p = per(count_instructions(false).total, 7);
            }
            four_and_eight_agree(&outs, &counts, &w.name);
            row(&w.name, counts, n, sizes, p);
        }
        // Point-mode geometry shaders, per invocation: the first invocation runs alone (b15
        // is clear), then 32 groups of eight.
        for w in workloads.iter().filter(|w| {
            w.kind() == ShaderKind::Geometry
                && w.gs_mode == picajit::interp::pica::program::GsInputMode::Point
        }) {
            use picajit::interp::pica::state::{EmitBuffer, GeometryState};
            let inputs = w.inputs(mode, n + 1);
            let mut counts = [InstructionCounts::default(); 2];
            let mut sizes = [Default::default(); 2];
            let mut p = 0.0;
            let mut emitted = Vec::new();
            for (k, &l) in lanes.iter().enumerate() {
                let shader = compile_for(&w.program, mode, target(l)).unwrap();
                assert_eq!(shader.points_ineligibility(), None, "{}", w.name);
                let run = |k: usize| {
                    let mut uniforms = w.uniforms(mode);
                    uniforms.set_bool(15, false);
                    let (mut regs, mut gs) = (Registers::default(), GeometryState::default());
                    // Registers the program never writes would make every invocation run
                    // alone.
                    let mut out =
                        EmitBuffer::new(picajit::pica::engine::program_output_mask(&w.program));
                    count_instructions(true);
                    shader
                        .invoke(
                            Invocation::points(
                                &mut uniforms,
                                &mut regs,
                                &mut gs,
                                &inputs[..k],
                                &mut out,
                            )
                            .budget(1 << 20),
                        )
                        .unwrap();
                    (
                        count_instructions(false),
                        format!("{out:?} {regs:?} {gs:?}"),
                    )
                };
                // The first call generates the code and learns the emit count.
                run(n + 1);
                let before = shader.batch_stats();
                let (c, out) = run(n + 1);
                all_groups_on_lanes(before, shader.batch_stats(), &w.name, l);
                assert!(c.total > 0 && c.broadcast > 0, "{} {l:?}: {c:?}", w.name);
                counts[k] = c;
                emitted.push(out);
                sizes[k] = codegen(&shader);
                p = per(run(7).0.total, 7);
            }
            four_and_eight_agree(&emitted, &counts, &w.name);
            row(&w.name, counts, n + 1, sizes, p);
        }
    }
}

/// The C ABI's point-mode draw (`picajit_geometry_run_points`) reaches the eight-lane
/// geometry code of both JITs (AArch64 under the emulator here): `picajit_shader_get_info`
/// reports the 8-lane path, and the emitted vertices, their flags and the instruction count
/// equal the interpreter's through the same calls, for each point-mode example.
#[test]
fn c_abi_point_draws_run_on_the_lane_code_of_both_hosts() {
    use picajit::capi::{pica::*, PicajitEngineKind};
    use std::ptr::null_mut;
    let jits = c_jits();
    let mut seen = 0;
    for w in Workload::examples()
        .expect("examples")
        .into_iter()
        .filter(|w| {
            w.kind() == ShaderKind::Geometry
                && w.gs_mode == picajit::interp::pica::program::GsInputMode::Point
        })
    {
        seen += 1;
        let name = &w.name;
        let (shbin, inputs, table) = c_example(&w);
        // SAFETY (whole block): every pointer passed is a live local of the right size, and
        // every handle comes from the library and is released once.
        let run = |backend: PicajitEngineKind| unsafe {
            let handles = c_load(backend, &shbin, &table, table.bools() & !(1 << 15));
            let (_, shader, uniforms) = handles;
            let mut geometry = null_mut();
            ok(picajit_geometry_create(&mut geometry));
            ok(picajit_geometry_set_mode(geometry, 0, 0, 0));
            let mut stats = PicajitRunStats::default();
            let rows = inputs.as_ptr().cast();
            ok(picajit_geometry_run_points(
                geometry, shader, uniforms, &C_ROWS, rows, C_VERTICES, &mut stats,
            ));
            let mut pending = 0;
            ok(picajit_geometry_pending(geometry, &mut pending));
            let mut out = vec![0f32; 64 * pending];
            let mut infos = vec![std::mem::zeroed::<PicajitEmitInfo>(); pending];
            let mut taken = 0;
            let (dst, emits) = (out.as_mut_ptr().cast(), infos.as_mut_ptr());
            ok(picajit_geometry_take(
                geometry, &C_ROWS, dst, emits, pending, &mut taken,
            ));
            assert_eq!(taken, pending);
            let path = c_path(shader);
            picajit_geometry_destroy(geometry);
            c_release(handles);
            let bits: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
            let flags: Vec<(u32, bool, bool)> = infos
                .iter()
                .map(|i| (i.slot, i.primitive != 0, i.winding != 0))
                .collect();
            (bits, flags, stats.instructions, path)
        };
        let want = run(PicajitEngineKind::PICAJIT_ENGINE_INTERP);
        assert!(!want.1.is_empty(), "{name}: no vertices emitted");
        for jit in &jits {
            let got = run(*jit);
            assert_eight_lanes(got.3, *jit, name);
            assert_eq!(got.2, want.2, "{name}: {jit:?} instruction count");
            assert_eq!(got.1, want.1, "{name}: {jit:?} flags");
            assert!(got.0 == want.0, "{name}: {jit:?} vertices differ");
        }
    }
    assert_eq!(seen, 2, "both point-mode examples");
}
