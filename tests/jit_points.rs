//! Point runs (`picajit_jit::Invocation::points`: point-mode geometry shaders, eight
//! invocations per group where the program allows it: AVX2 on x86-64, NEON on AArch64,
//! natively there and under unicorn on x86-64; every test runs on each, [`on_each_backend`])
//! against `Interpreter::run_points`, bit for bit:
//! emitted vertices and their flags, every register, the whole geometry state (and what a
//! later `take_output` replays from it), b15, instruction counts, and on failure the same
//! `(index, error)` with the same state and emitted vertices up to that point.
//!
//! * the example geometry shaders with their benchmark uniforms, over batch sizes around the
//!   group size, in every float mode, with output masks that allow the group path or not;
//! * random programs built to be eligible for the group path (`Shape::Points` of the generator,
//!   `testkit/src/testgen/points.rs`,
//!   which also holds an independent statement of the eligibility rule) from random
//!   carried-over state: both output banks equal where the program never writes (group
//!   path) or not (one invocation at a time), pending EMIT records, a non-empty `out`;
//! * the same programs mutated to break one eligibility rule each, and hand-written ones;
//! * failing invocations (budget, undefined opcode, PC out of range) inside and outside
//!   groups;
//! * `run` and `run_points` interleaved, then `take_output`.
//!
//! `PICAJIT_POINTS_CASES` scales the number of random programs per float mode (a quarter of
//! them run on emulated NEON code, with four and with eight lanes per body run);
//! `PICAJIT_POINTS_SHRINK=1` shrinks a failing random program before reporting it.
#![cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]

mod jit_common;

use jit_common::{gs_bits, reg_bits, run_one, Compiled};
use picajit::interp::pica::exec::{ExecError, Interpreter};
use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{
    EmitBuffer, EmittedVertex, GeometryState, Primitive, Registers, Uniforms,
};
use picajit::pica::bench::Workload;
use picajit_jit::BatchStats;
use picajit_jit::{
    compile_with_options, A64Lanes, Backend, CompileOptions, CompiledShader, Error, HostFeatures,
    Invocation,
};
use picajit_testkit::testgen::points::{
    self as points_gen, generate, mutate, vec4, Case, Facts, Gen, Sim, MUTATIONS,
};
use picajit_testkit::testgen::{Options, Rng, Shape};

const F24Z: FloatMode = FloatMode::F24(Rounding::TowardZero);
const F24N: FloatMode = FloatMode::F24(Rounding::NearestEven);
const MODES: [FloatMode; 3] = [F24Z, F24N, FloatMode::F32];
const BUDGET: u64 = 1 << 20;

type Row = [[f32; 4]; 16];

fn has_avx2() -> bool {
    HostFeatures::detect().contains(HostFeatures::AVX2)
}

thread_local! {
    /// The JIT backend the current test compiles for (see [`on_each_backend`]).
    static BACKEND: std::cell::Cell<Backend> = const { std::cell::Cell::new(Backend::X64) };
    /// Lanes per run of the NEON body the current test compiles for (AArch64 only).
    static LANES: std::cell::Cell<A64Lanes> = const { std::cell::Cell::new(A64Lanes::Four) };
}

fn backend() -> Backend {
    BACKEND.with(|b| b.get())
}

/// `program` compiled for the current backend (and NEON lanes per body run).
fn compile_here(program: &Program, mode: FloatMode) -> Result<Compiled<'_>, Error> {
    let options = CompileOptions::default().with_a64_lanes(LANES.with(|l| l.get()));
    let shader = compile_with_options(program, mode, backend(), HostFeatures::detect(), options)?;
    Ok(Compiled {
        shader,
        program,
        mode,
    })
}

/// Emulated NEON code (AArch64 under unicorn on x86-64) runs far slower than native code.
fn emulated() -> bool {
    backend() == Backend::A64 && cfg!(target_arch = "x86_64")
}

/// Run `f` once per backend with geometry groups on this host: x86-64 (groups with AVX2,
/// one invocation at a time without), and AArch64 (NEON: natively there, under the emulator
/// on x86-64) with four and with eight lanes per body run.
fn on_each_backend(f: impl Fn()) {
    let mut all = vec![
        (Backend::A64, A64Lanes::Four),
        (Backend::A64, A64Lanes::Eight),
    ];
    if cfg!(target_arch = "x86_64") {
        all.insert(0, (Backend::X64, A64Lanes::Four));
    }
    for (b, lanes) in all {
        BACKEND.with(|c| c.set(b));
        LANES.with(|c| c.set(lanes));
        eprintln!("backend {b} {lanes:?}");
        f();
    }
}

/// `n` random programs natively, a quarter of them on emulated code (the same ones with
/// four and with eight lanes per NEON body run).
fn per_backend(n: u64) -> u64 {
    if emulated() {
        n.div_ceil(4)
    } else {
        n
    }
}

/// The current backend runs eight invocations per group where the program allows it.
fn group_path() -> bool {
    backend() == Backend::A64 || has_avx2()
}

fn cases(default: u64) -> u64 {
    picajit_testkit::env_count("PICAJIT_POINTS_CASES").unwrap_or(default)
}

fn jit(program: &Program, mode: FloatMode) -> Compiled<'_> {
    compile_here(program, mode)
        .unwrap_or_else(|e| panic!("compile failed: {e}\n{}", source(program)))
}

/// The example named `name`.
fn example(name: &str) -> Workload {
    let mut all = Workload::examples().unwrap();
    let k = all.iter().position(|w| w.name == name).unwrap();
    all.swap_remove(k)
}

/// A point-mode geometry shader: the other input modes run one invocation at a time, not in
/// groups.
fn point_mode(w: &Workload) -> bool {
    w.kind() == ShaderKind::Geometry
        && w.gs_mode == picajit::interp::pica::program::GsInputMode::Point
}

fn source(p: &Program) -> String {
    picajit::pica::asm::disassemble_program(p.code(), p.opdescs(), p.entry() as u32, p.kind())
}

// ---------------------------------------------------------------- one differential run

/// Everything `run_points` reads and writes besides the inputs.
#[derive(Clone, Debug)]
struct State {
    regs: Registers,
    gs: GeometryState,
    uniforms: Uniforms,
    out: EmitBuffer,
}

type Res = Result<u64, (usize, ExecError)>;

fn run_ref(
    program: &Program,
    mode: FloatMode,
    st: &State,
    inputs: &[Row],
    budget: u64,
) -> (State, Res) {
    let mut s = st.clone();
    let r = Interpreter::new(program, mode).run_points(
        &mut s.regs,
        &mut s.uniforms,
        &mut s.gs,
        inputs,
        budget,
        &mut s.out,
    );
    (s, r)
}

fn run_jit(shader: &CompiledShader, st: &State, inputs: &[Row], budget: u64) -> (State, Res) {
    let mut s = st.clone();
    let r = shader
        .invoke(
            Invocation::points(&mut s.uniforms, &mut s.regs, &mut s.gs, inputs, &mut s.out)
                .budget(budget),
        )
        .map(|o| o.instructions)
        .map_err(|e| match e {
            Error::Exec { index, error } => (index, error),
            other => panic!("a point run failed other than on the interpreter: {other}"),
        });
    (s, r)
}

fn xyzw(c: usize) -> char {
    "xyzw".as_bytes()[c] as char
}

fn bits4(v: &[f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

fn vertex_bits(v: &EmittedVertex) -> Vec<u32> {
    let mut b: Vec<u32> = v.outputs.iter().flat_map(bits4).collect();
    b.extend([v.slot as u32, v.primitive as u32, v.winding as u32]);
    b
}

fn prim_bits(p: &Primitive) -> Vec<u32> {
    let mut b: Vec<u32> = p
        .vertices
        .iter()
        .flat_map(|v| v.iter().flat_map(bits4))
        .collect();
    b.push(p.winding as u32);
    b
}

/// The first difference between two states (interpreter `a`, JIT `b`), if any.
fn diff(a: &State, b: &State) -> Option<String> {
    // Emitted vertices.
    if a.out.mask() != b.out.mask() {
        return Some(format!(
            "out mask {:#x} vs {:#x}",
            a.out.mask(),
            b.out.mask()
        ));
    }
    if a.out.len() != b.out.len() || a.out.rows.len() != b.out.rows.len() {
        return Some(format!(
            "out: interp {} vertices ({} rows), jit {} vertices ({} rows)",
            a.out.len(),
            a.out.rows.len(),
            b.out.len(),
            b.out.rows.len()
        ));
    }
    for i in 0..a.out.len() {
        let (ra, fa) = a.out.vertex(i);
        let (rb, fb) = b.out.vertex(i);
        if fa != fb {
            return Some(format!("out vertex {i}: flags interp {fa:?} jit {fb:?}"));
        }
        let regs: Vec<usize> = (0..16).filter(|&o| a.out.mask() >> o & 1 != 0).collect();
        for (k, (x, y)) in ra.iter().zip(rb).enumerate() {
            for c in 0..4 {
                if x[c].to_bits() != y[c].to_bits() {
                    return Some(format!(
                        "out vertex {i} o{}.{}: interp {:08x} jit {:08x}",
                        regs[k],
                        xyzw(c),
                        x[c].to_bits(),
                        y[c].to_bits()
                    ));
                }
            }
        }
    }
    // Registers.
    let (x, y) = (reg_bits(&a.regs), reg_bits(&b.regs));
    if x != y {
        let i = x.iter().zip(&y).position(|(p, q)| p != q).unwrap_or(0);
        let name = match i / 64 {
            0 => format!("v{}.{}", i % 64 / 4, xyzw(i % 4)),
            1 => format!("r{}.{}", i % 64 / 4, xyzw(i % 4)),
            2 => format!("o{}.{}", i % 64 / 4, xyzw(i % 4)),
            _ => ["a0.x", "a0.y", "aL", "cmp"][(i - 192).min(3)].to_string(),
        };
        return Some(format!(
            "register {name}: interp {:08x} jit {:08x}",
            x.get(i).copied().unwrap_or(0),
            y.get(i).copied().unwrap_or(0)
        ));
    }
    // Geometry state.
    let (ga, gb) = (&a.gs, &b.gs);
    if (ga.vertex_id, ga.primitive, ga.winding) != (gb.vertex_id, gb.primitive, gb.winding) {
        return Some(format!(
            "SETEMIT state: interp {:?} jit {:?}",
            (ga.vertex_id, ga.primitive, ga.winding),
            (gb.vertex_id, gb.primitive, gb.winding)
        ));
    }
    for o in 0..16 {
        for c in 0..4 {
            let (p, q) = (ga.other_bank[o][c].to_bits(), gb.other_bank[o][c].to_bits());
            if p != q {
                return Some(format!(
                    "other bank o{o}.{}: interp {p:08x} jit {q:08x}",
                    xyzw(c)
                ));
            }
            for s in 0..4 {
                let (p, q) = (ga.slots[s][o][c].to_bits(), gb.slots[s][o][c].to_bits());
                if p != q {
                    return Some(format!(
                        "vertex slot {s} o{o}.{}: interp {p:08x} jit {q:08x}",
                        xyzw(c)
                    ));
                }
            }
        }
    }
    if gs_bits(ga) != gs_bits(gb) {
        return Some(format!(
            "pending emitted records: interp {} jit {}",
            ga.emitted.len(),
            gb.emitted.len()
        ));
    }
    // Uniforms: b15 set after each invocation, nothing else changed.
    if a.uniforms.bools() != b.uniforms.bools() {
        return Some(format!(
            "bool uniforms: interp {:#06x} jit {:#06x}",
            a.uniforms.bools(),
            b.uniforms.bools()
        ));
    }
    let fa = a.uniforms.float_table().iter().flat_map(bits4);
    if !fa.eq(b.uniforms.float_table().iter().flat_map(bits4))
        || (0..4).any(|i| a.uniforms.int(i) != b.uniforms.int(i))
    {
        return Some("float or int uniforms changed".into());
    }
    None
}

/// What one checked call did on the JIT side.
#[derive(Clone, Copy, Debug, Default)]
struct Ran {
    groups: u64,
    fallbacks: u64,
    skipped: u64,
    failed: bool,
    emitted: usize,
}

fn stats_delta(a: BatchStats, b: BatchStats) -> Ran {
    Ran {
        groups: b.groups - a.groups,
        fallbacks: b.fallbacks - a.fallbacks,
        skipped: b.skipped - a.skipped,
        ..Ran::default()
    }
}

/// Run `inputs` from `start` on both engines and compare everything; then one more single
/// invocation (`follow`) on each and `take_output`, which replays primitives from the slots
/// both left at their last drain.
fn check(
    shader: &Compiled,
    start: &State,
    inputs: &[Row],
    budget: u64,
    follow: &Row,
) -> Result<Ran, String> {
    let (program, mode) = (shader.program, shader.mode);
    let before = shader.batch_stats();
    let (mut a, ra) = run_ref(program, mode, start, inputs, budget);
    let (mut b, rb) = run_jit(shader, start, inputs, budget);
    let mut ran = stats_delta(before, shader.batch_stats());
    if ra != rb {
        return Err(format!("results differ: interp {ra:?}, jit {rb:?}"));
    }
    if let Some(d) = diff(&a, &b) {
        return Err(format!("after run_points ({ra:?}): {d}"));
    }
    if !a.gs.emitted.is_empty() || !b.gs.emitted.is_empty() {
        return Err("emitted records left in the geometry state".into());
    }
    ran.failed = ra.is_err();
    ran.emitted = a.out.len() - start.out.len();
    // One more invocation on each engine, then the output a `take_output` caller sees.
    a.regs.input = *follow;
    b.regs.input = *follow;
    let fa = Interpreter::new(program, mode).run(&mut a.regs, &a.uniforms, Some(&mut a.gs), budget);
    let fb = run_one(shader, &mut b.regs, &b.uniforms, Some(&mut b.gs), budget);
    if fa != fb {
        return Err(format!("follow-up run: interp {fa:?}, jit {fb:?}"));
    }
    let (ea, pa) = a.gs.take_output();
    let (eb, pb) = b.gs.take_output();
    if ea.len() != eb.len() || pa.len() != pb.len() {
        return Err(format!(
            "take_output after a follow-up run: interp {} vertices {} primitives, jit {} and {}",
            ea.len(),
            pa.len(),
            eb.len(),
            pb.len()
        ));
    }
    if let Some(i) = (0..ea.len()).find(|&i| vertex_bits(&ea[i]) != vertex_bits(&eb[i])) {
        return Err(format!(
            "take_output after a follow-up run: vertex {i} differs"
        ));
    }
    if let Some(i) = (0..pa.len()).find(|&i| prim_bits(&pa[i]) != prim_bits(&pb[i])) {
        return Err(format!(
            "take_output after a follow-up run: primitive {i} differs (slots at the last drain)"
        ));
    }
    if let Some(d) = diff(&a, &b) {
        return Err(format!("after the follow-up run: {d}"));
    }
    Ok(ran)
}

// ---------------------------------------------------------------- start states

/// Output registers (bit n = o`n`) and components a program writes anywhere, from its code
/// words (for programs not built by the generator).
fn written_outputs(p: &Program) -> [u8; 16] {
    use picajit::interp::pica::isa::{decode, DstReg, Instruction, OperandDesc};
    let mut w = [0u8; 16];
    for &word in p.code() {
        if let Instruction::Binary { dst, desc, .. }
        | Instruction::Unary { dst, desc, .. }
        | Instruction::Mad { dst, desc, .. } = decode(word)
        {
            if let DstReg::Output(o) = dst {
                let m = OperandDesc(p.opdesc(desc as usize)).mask();
                w[o as usize & 15] |= points_gen::lanes(m);
            }
        }
    }
    w
}

fn regs_of(w: &[u8; 16]) -> u16 {
    (0..16).filter(|&o| w[o] != 0).fold(0, |a, o| a | 1 << o)
}

fn random_vertex(r: &mut Rng, mode: FloatMode) -> EmittedVertex {
    EmittedVertex {
        outputs: [(); 16].map(|_| vec4(r, mode)),
        slot: r.below(4) as u8,
        primitive: r.chance(50),
        winding: r.chance(50),
    }
}

/// How a random start state is made.
#[derive(Clone, Copy, Debug)]
struct StartOpts {
    /// Both output banks equal where the program never writes (the group path's run-time
    /// condition); otherwise different there.
    banks_equal: bool,
    /// Pending EMIT records in the geometry state and vertices already in `out`.
    pending: bool,
    b15: bool,
}

fn random_state(
    r: &mut Rng,
    mode: FloatMode,
    uniforms: &Uniforms,
    written: &[u8; 16],
    mask: u16,
    opts: StartOpts,
) -> State {
    let mut regs = Registers::default();
    for reg in regs
        .input
        .iter_mut()
        .chain(&mut regs.temp)
        .chain(&mut regs.output)
    {
        *reg = vec4(r, mode);
    }
    let addr = |r: &mut Rng| match r.below(4) {
        0 | 1 => r.below(100) as i32 - 10,
        2 => r.below(400) as i32 - 200,
        _ => r.u32() as i32,
    };
    regs.a0 = [addr(r), addr(r)];
    regs.al = addr(r);
    regs.cmp = [r.below(2) as u8, r.below(2) as u8];
    let mut gs = GeometryState::default();
    gs.vertex_id = r.below(4) as u8;
    gs.primitive = r.chance(50);
    gs.winding = r.chance(50);
    for (o, &w) in written.iter().enumerate() {
        gs.other_bank[o] = vec4(r, mode);
        for c in 0..4 {
            if w & 1 << c == 0 {
                let same = regs.output[o][c];
                if opts.banks_equal {
                    gs.other_bank[o][c] = same;
                } else if gs.other_bank[o][c].to_bits() == same.to_bits() {
                    gs.other_bank[o][c] = -same;
                }
            }
        }
        for s in 0..4 {
            gs.slots[s][o] = vec4(r, mode);
        }
    }
    let mut out = EmitBuffer::new(mask);
    if opts.pending {
        for _ in 0..1 + r.below(3) {
            gs.emitted.push(random_vertex(r, mode));
        }
        for _ in 0..r.below(3) {
            out.push(&random_vertex(r, mode));
        }
    }
    let mut uniforms = uniforms.clone();
    uniforms.set_bool(15, opts.b15);
    State {
        regs,
        gs,
        uniforms,
        out,
    }
}

fn random_rows(r: &mut Rng, mode: FloatMode, n: usize) -> Vec<Row> {
    (0..n).map(|_| [(); 16].map(|_| vec4(r, mode))).collect()
}

/// A start state like a fresh engine's: zero registers, default geometry state, b15 clear.
fn fresh(uniforms: &Uniforms, mask: u16) -> State {
    let mut uniforms = uniforms.clone();
    uniforms.set_bool(15, false);
    State {
        regs: Registers::default(),
        gs: GeometryState::default(),
        uniforms,
        out: EmitBuffer::new(mask),
    }
}

// ---------------------------------------------------------------- examples

const SIZES: [usize; 9] = [1, 7, 8, 9, 15, 16, 17, 64, 100];

#[test]
fn examples_match_and_run_in_groups() {
    on_each_backend(examples_match_and_run_in_groups_on);
}

fn examples_match_and_run_in_groups_on() {
    let workloads = Workload::examples().unwrap();
    let mut seen = 0;
    for w in workloads.iter().filter(|w| point_mode(w)) {
        seen += 1;
        let written = written_outputs(&w.program);
        let all = regs_of(&written);
        assert_eq!(all, 0b11, "{}: expected o0 and o1", w.name);
        for mode in MODES {
            let shader = jit(&w.program, mode);
            if group_path() {
                assert_eq!(shader.points_ineligibility(), None, "{} {mode:?}", w.name);
            }
            let uniforms = w.uniforms(mode);
            let inputs = w.inputs(mode, 101);
            for &n in &SIZES {
                // The written outputs, each one alone, and one the program never writes
                // (which makes every invocation run alone).
                for mask in [all, 0b01, 0b10, all | 1 << 5] {
                    let start = fresh(&uniforms, mask);
                    let ran = check(&shader, &start, &inputs[..n], BUDGET, &inputs[100])
                        .unwrap_or_else(|e| {
                            panic!("{} {mode:?} n={n} mask={mask:#x}: {e}", w.name)
                        });
                    assert!(!ran.failed);
                    assert!(ran.emitted > 0);
                    // The first invocation runs alone (b15 is clear), then whole groups; a
                    // group that emits another number of vertices than the shader expects
                    // stops (once per shader: it learns the number).
                    if group_path() && n >= 9 && mask & !all == 0 {
                        let full = (n as u64 - 1) / 8;
                        assert!(
                            ran.groups + ran.fallbacks == full && ran.fallbacks <= 1,
                            "{} {mode:?} n={n} mask={mask:#x}: {ran:?}",
                            w.name
                        );
                    }
                }
            }
            if group_path() {
                let s = shader.batch_stats();
                assert!(
                    s.fallbacks <= 1 && s.groups > 0,
                    "{} {mode:?}: {s:?}",
                    w.name
                );
            }
            // Carried-over state from a previous draw: banks equal where nothing is written
            // (here: everything but o0 and o1), pending records, b15 set.
            let mut r = Rng::new(0xE8A3 ^ seen);
            for &n in &[8usize, 24, 100] {
                let opts = StartOpts {
                    banks_equal: true,
                    pending: true,
                    b15: true,
                };
                let start = random_state(&mut r, mode, &uniforms, &written, all, opts);
                let ran = check(&shader, &start, &inputs[..n], BUDGET, &inputs[100])
                    .unwrap_or_else(|e| panic!("{} {mode:?} n={n} carried state: {e}", w.name));
                if group_path() {
                    assert!(ran.groups >= 1, "{} {mode:?} n={n}: {ran:?}", w.name);
                }
                // And with the banks different where nothing is written: exact, any path.
                let opts = StartOpts {
                    banks_equal: false,
                    ..opts
                };
                let start = random_state(&mut r, mode, &uniforms, &written, 0xFFFF, opts);
                check(&shader, &start, &inputs[..n], BUDGET, &inputs[100])
                    .unwrap_or_else(|e| panic!("{} {mode:?} n={n} banks differ: {e}", w.name));
            }
        }
    }
    assert_eq!(seen, 2, "both geometry examples");
}

// ---------------------------------------------------------------- random programs

const RANDOM_SIZES: [usize; 13] = [1, 7, 8, 9, 15, 16, 17, 23, 24, 33, 40, 64, 100];

/// Totals over a run of random programs.
#[derive(Debug, Default)]
struct Tally {
    programs: u64,
    /// Programs `points_ineligibility` accepts.
    jit_eligible: u64,
    runs: u64,
    /// Runs of accepted programs in which the group path's run-time conditions hold and two
    /// whole groups fit after the first invocation, `out` mask inside the written registers,
    /// banks equal where nothing is written, the generous budget, fewer than 1000 EMITs per
    /// invocation.
    fast_runs: u64,
    /// … of which ran at least one group.
    fast_runs_grouped: u64,
    groups: u64,
    fallbacks: u64,
    skipped: u64,
    failed_runs: u64,
    emitted: u64,
    reasons: std::collections::BTreeMap<String, u64>,
    /// Programs the JIT does not compile at all, by reason.
    unsupported: std::collections::BTreeMap<String, u64>,
    /// The first fast runs that ran no group.
    misses: Vec<String>,
}

/// One random run of a program: start state, inputs, budget.
struct Plan {
    start: State,
    inputs: Vec<Row>,
    follow: Row,
    budget: u64,
    fast: bool,
    what: String,
}

fn plan(r: &mut Rng, mode: FloatMode, uniforms: &Uniforms, facts: &Facts) -> Plan {
    let n = r.pick(&RANDOM_SIZES);
    let written = facts.outputs;
    let all = regs_of(&written);
    let unwritten: Vec<u16> = (0..16).filter(|&o| all >> o & 1 == 0).collect();
    let mask = match r.below(20) {
        0..=8 => all,
        9..=13 if all != 0 => {
            let mut m = 0;
            while m == 0 {
                m = all & r.u32() as u16;
            }
            m
        }
        14..=16 if !unwritten.is_empty() => all | 1 << r.pick(&unwritten),
        17 => 0,
        18 => 0xFFFF,
        _ => all,
    };
    let opts = StartOpts {
        banks_equal: r.chance(75),
        pending: r.chance(25),
        b15: r.chance(50),
    };
    let budget = if r.chance(8) {
        1 + r.below(300) as u64
    } else {
        BUDGET
    };
    let start = random_state(r, mode, uniforms, &written, mask, opts);
    let inputs = random_rows(r, mode, n);
    let follow = random_rows(r, mode, 1)[0];
    // Two groups after the first invocation (which runs alone when b15 is clear): the first
    // may stop to learn how many vertices an invocation emits.
    let fast =
        n - (!opts.b15) as usize >= 16 && mask & !all == 0 && opts.banks_equal && budget == BUDGET;
    let what = format!("n={n} mask={mask:#06x} {opts:?} budget={budget}");
    Plan {
        start,
        inputs,
        follow,
        budget,
        fast,
        what,
    }
}

fn shrink_enabled() -> bool {
    std::env::var("PICAJIT_POINTS_SHRINK").is_ok_and(|v| v == "1")
}

/// Smallest program (by removing nodes) that still fails `plan` like `gen` does, keeping it
/// eligible by [`Sim`] when `gen` was.
fn shrink(gen: &Gen, mode: FloatMode, p: &Plan) -> Gen {
    let eligible = Sim::check(gen).is_empty();
    let fails = |g: &Gen| -> bool {
        if eligible && !Sim::check(g).is_empty() {
            return false;
        }
        let program = g.program();
        let Ok(shader) = compile_here(&program, mode) else {
            return false;
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check(&shader, &p.start, &p.inputs, p.budget, &p.follow).is_err()
        }))
        .unwrap_or(true)
    };
    let mut best = gen.clone();
    'outer: loop {
        for c in points_gen::shrink_candidates(&best) {
            if fails(&c) {
                best = c;
                continue 'outer;
            }
        }
        return best;
    }
}

/// Run `runs` plans of `gen`; panic with everything needed to reproduce on a mismatch.
/// `eligible`: what `points_ineligibility` must say (`None`: either).
#[allow(clippy::too_many_arguments)]
fn run_plans(
    gen: &Gen,
    uniforms: &Uniforms,
    mode: FloatMode,
    r: &mut Rng,
    runs: u32,
    label: &str,
    eligible: Option<bool>,
    tally: &mut Tally,
) {
    let program = gen.program();
    let facts = Sim::reachable_facts(gen);
    tally.programs += 1;
    let shader = match compile_here(&program, mode) {
        Ok(s) => s,
        Err(picajit_jit::Error::Unsupported(why)) => {
            // Not compiled at all (the analysis' limits): nothing to compare.
            *tally.unsupported.entry(why.to_string()).or_default() += 1;
            return;
        }
        Err(e) => panic!("{label}: {e}\n{}", source(&program)),
    };
    let reason = shader.points_ineligibility();
    if let (Some(e), true) = (eligible, group_path()) {
        assert_eq!(
            reason.is_none(),
            e,
            "{label} {mode:?}: points_ineligibility {reason:?}, by the rule: {:?}\n{}",
            Sim::check(gen),
            source(&program)
        );
    }
    if reason.is_none() {
        tally.jit_eligible += 1;
    } else {
        *tally
            .reasons
            .entry(reason.unwrap_or_default().to_string())
            .or_default() += 1;
    }
    for k in 0..runs {
        let p = plan(r, mode, uniforms, &facts);
        match check(&shader, &p.start, &p.inputs, p.budget, &p.follow) {
            Ok(ran) => {
                tally.runs += 1;
                tally.groups += ran.groups;
                tally.fallbacks += ran.fallbacks;
                tally.skipped += ran.skipped;
                tally.failed_runs += ran.failed as u64;
                tally.emitted += ran.emitted as u64;
                // (Not for quirky programs: what they write, by which the plan equalised the
                // banks, is what the tree says, which need not be what they do.)
                if p.fast
                    && eligible == Some(true)
                    && reason.is_none()
                    && !ran.failed
                    && ran.emitted < 1000 * p.inputs.len()
                {
                    tally.fast_runs += 1;
                    tally.fast_runs_grouped += (ran.groups > 0) as u64;
                    if ran.groups == 0 && tally.misses.len() < 5 {
                        tally
                            .misses
                            .push(format!("{label} run {k} {}: {ran:?}", p.what));
                    }
                }
            }
            Err(e) => {
                let shown = if shrink_enabled() {
                    shrink(gen, mode, &p).program()
                } else {
                    program.clone()
                };
                panic!(
                    "{label} run {k} {mode:?} {}: {e}\nineligibility: {reason:?}, by the rule: {:?}\n{}{}",
                    p.what,
                    Sim::check(gen),
                    source(&shown),
                    if shrink_enabled() { "(shrunk)" } else { "(PICAJIT_POINTS_SHRINK=1 shrinks it)" }
                );
            }
        }
    }
}

fn random_programs(mode: FloatMode, seed0: u64, n: u64) {
    let mut tally = Tally::default();
    for seed in seed0..seed0 + n {
        let mut r = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let flow = seed % 4 != 0;
        let len = 3 + r.below(if flow { 24 } else { 40 });
        let quirks = flow && seed % 8 == 1;
        let case = generate(&mut r, &points_options(mode, flow, len, quirks));
        let errors = Sim::check(&case.gen);
        assert!(
            errors.is_empty(),
            "seed {seed}: the generator built a program that breaks the rule: {errors:?}\n{}",
            source(&case.gen.program())
        );
        let label = format!("seed {seed}{}", if quirks { " (quirks)" } else { "" });
        let eligible = (!quirks).then_some(true);
        run_plans(
            &case.gen,
            &case.uniforms,
            mode,
            &mut r,
            2,
            &label,
            eligible,
            &mut tally,
        );
    }
    eprintln!("{mode:?}: {tally:#?}");
    let unsupported: u64 = tally.unsupported.values().sum();
    assert!(unsupported * 100 <= n, "{mode:?}: {:?}", tally.unsupported);
    assert_eq!(tally.runs, 2 * (n - unsupported));
    assert!(tally.emitted > 0 && tally.failed_runs > 0);
    if group_path() {
        // Every program is eligible by the rule, and the JIT agrees (checked per program,
        // except for the quirky ones, most of which are eligible too).
        assert!(
            tally.jit_eligible * 100 >= tally.programs * 95,
            "{mode:?}: only {} of {} eligible programs accepted: {:?}",
            tally.jit_eligible,
            tally.programs,
            tally.reasons
        );
        // Runs that could use groups did (the emit-count guess costs at most the first).
        assert!(
            tally.fast_runs_grouped == tally.fast_runs,
            "{mode:?}: {} of {} runs that could use groups did: {:#?}",
            tally.fast_runs_grouped,
            tally.fast_runs,
            tally.misses
        );
        assert!(tally.fast_runs > n / 4, "{mode:?}: {tally:?}");
    }
}

#[test]
fn random_programs_f24_rtz() {
    on_each_backend(random_programs_f24_rtz_on);
}

fn random_programs_f24_rtz_on() {
    random_programs(F24Z, 1_000_000, per_backend(cases(1000)));
}

#[test]
fn random_programs_f24_rne() {
    on_each_backend(random_programs_f24_rne_on);
}

fn random_programs_f24_rne_on() {
    random_programs(F24N, 2_000_000, per_backend(cases(1000)));
}

#[test]
fn random_programs_f32() {
    on_each_backend(random_programs_f32_on);
}

fn random_programs_f32_on() {
    random_programs(FloatMode::F32, 3_000_000, per_backend(cases(1000)));
}

// ---------------------------------------------------------------- mutations

fn mutated_programs(mode: FloatMode, seed0: u64, n: u64) {
    let mut tally = Tally::default();
    let mut per_mutation = [0u64; MUTATIONS.len()];
    for seed in seed0..seed0 + n {
        let mut r = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5A5A);
        // (Not a multiple of the number of mutations: every one meets flow programs.)
        let flow = seed % 5 != 0;
        let len = 3 + r.below(20);
        let quirks = false;
        let case: Case = generate(&mut r, &points_options(mode, flow, len, quirks));
        let first = (seed as usize) % MUTATIONS.len();
        let Some((k, gen)) = (0..MUTATIONS.len())
            .map(|j| (first + j) % MUTATIONS.len())
            .find_map(|k| mutate(&case, MUTATIONS[k], &mut r).map(|g| (k, g)))
        else {
            continue;
        };
        let m = MUTATIONS[k];
        per_mutation[k] += 1;
        let errors = Sim::check(&gen);
        assert!(
            !errors.is_empty(),
            "seed {seed}: mutation {m:?} left the program eligible by the rule\n{}",
            source(&gen.program())
        );
        let label = format!("seed {seed} mutation {m:?} ({errors:?})");
        run_plans(
            &gen,
            &case.uniforms,
            mode,
            &mut r,
            1,
            &label,
            Some(false),
            &mut tally,
        );
    }
    eprintln!("{mode:?} mutations {per_mutation:?}: {tally:#?}");
    assert!(per_mutation.iter().all(|&c| c > 0), "{per_mutation:?}");
    assert!(tally.emitted > 0);
}

#[test]
fn mutated_programs_f24_rtz() {
    on_each_backend(mutated_programs_f24_rtz_on);
}

fn mutated_programs_f24_rtz_on() {
    mutated_programs(F24Z, 4_000_000, per_backend(cases(1000)) / 3);
}

#[test]
fn mutated_programs_f32() {
    on_each_backend(mutated_programs_f32_on);
}

fn mutated_programs_f32_on() {
    mutated_programs(FloatMode::F32, 5_000_000, per_backend(cases(1000)) / 3);
}

// ---------------------------------------------------------------- hand-written mutations

/// A point-mode geometry program with inputs `inpos` and `inclr` and outputs `outpos` and
/// `outclr`: `decls`, those declarations, and `main` from the end of its `.proc main` line.
fn point_program(decls: &str, main: &str) -> String {
    format!(
        "\n.gsh point c0\n{decls}.in inpos v0\n.in inclr v1\n.out outpos position\n\
         .out outclr color\n.proc main{main}"
    )
}

/// Eligible: every temporary written before it is read, MOVA before a0-relative reads,
/// aL-relative reads in the loop, both outputs rewritten before every EMIT, the same
/// SETEMIT in both arms of the IFU, nothing written after the last EMIT.
fn base_source() -> String {
    point_program(
        ".fvec scale\n.fvec table[6]\n.consti loop2(2, 1, 1, 0)\n",
        r#"
    setemit 0
    mov r0, inpos
    mova a0.x, inclr
    mul r1, scale, r0
    mov outpos, r1
    mov outclr, table[a0.x+1]
    emit
    for loop2
        add r2, table[aL], r0
        setemit 1, prim
        mov outpos, r2
        mov outclr, inclr
        emit
    .end
    ifu b3
        setemit 2, prim inv
    .else
        setemit 2, prim inv
    .end
    mov outpos, r1
    mov outclr, r0
    emit
    end
.end
"#,
    )
}

/// (name, text replaced, replacement): one rule broken each.
const HAND_MUTATIONS: [(&str, &str, &str); 7] = [
    (
        "temporary read before written",
        "    mov r0, inpos\n",
        "    mov r3, r1\n    mov r0, inpos\n",
    ),
    (
        "output not rewritten before the second EMIT",
        "        mov outpos, r2\n        mov outclr, inclr\n",
        "        mov outpos, r2\n",
    ),
    (
        "SETEMIT differs between the arms of an IFU",
        "    .else\n        setemit 2, prim inv\n",
        "    .else\n        setemit 1, prim inv\n",
    ),
    (
        "maybe-write after the last EMIT",
        "    emit\n    end\n",
        "    emit\n    ifu b2\n        mov outpos.x, r0\n    .end\n    end\n",
    ),
    (
        "IFC on cmp",
        "    mov r0, inpos\n",
        "    mov r0, inpos\n    cmp r0, lt, ge, inclr\n    ifc cmp.x\n        mov r5, inclr\n    .end\n",
    ),
    (
        "aL read before any LOOP",
        "    mov r0, inpos\n",
        "    mov r4, table[aL]\n    mov r0, inpos\n",
    ),
    (
        "a0 read before MOVA",
        "    mov r0, inpos\n",
        "    mov r4, table[a0.x]\n    mov r0, inpos\n",
    ),
];

fn hand_program(name: &str, text: &str) -> Workload {
    Workload::from_source(&format!("{name}.g.pica"), text)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
}

/// Exact in every mode over sizes around the group size, from a fresh and from a random
/// carried-over state; groups must run when `eligible`.
fn hand_check(w: &Workload, eligible: bool, seed: u64) {
    let written = written_outputs(&w.program);
    let all = regs_of(&written);
    let mut r = Rng::new(seed);
    for mode in MODES {
        let shader = jit(&w.program, mode);
        if group_path() {
            assert_eq!(
                shader.points_ineligibility().is_none(),
                eligible,
                "{} {mode:?}: {:?}\n{}",
                w.name,
                shader.points_ineligibility(),
                source(&w.program)
            );
        }
        let mut uniforms = w.uniforms(mode);
        for b in 0..15 {
            uniforms.set_bool(b, r.chance(50));
        }
        let inputs = w.inputs(mode, 41);
        for n in [1usize, 8, 9, 16, 17, 40] {
            for fresh_start in [true, false] {
                let start = if fresh_start {
                    fresh(&uniforms, all)
                } else {
                    let opts = StartOpts {
                        banks_equal: true,
                        pending: true,
                        b15: r.chance(50),
                    };
                    random_state(&mut r, mode, &uniforms, &written, all, opts)
                };
                let ran =
                    check(&shader, &start, &inputs[..n], BUDGET, &inputs[40]).unwrap_or_else(|e| {
                        panic!(
                            "{} {mode:?} n={n} fresh={fresh_start}: {e}\n{}",
                            w.name,
                            source(&w.program)
                        )
                    });
                if group_path() && eligible && n >= 16 {
                    assert!(ran.groups > 0, "{} {mode:?} n={n}: {ran:?}", w.name);
                }
            }
        }
    }
}

#[test]
fn hand_written_mutations_break_one_rule_each() {
    on_each_backend(hand_written_mutations_break_one_rule_each_on);
}

fn hand_written_mutations_break_one_rule_each_on() {
    let base_text = base_source();
    let base = hand_program("base", &base_text);
    hand_check(&base, true, 1);
    for (k, (name, from, to)) in HAND_MUTATIONS.iter().enumerate() {
        assert_eq!(
            base_text.matches(from).count(),
            1,
            "{name}: '{from}' not unique"
        );
        let text = base_text.replacen(from, to, 1);
        let w = hand_program(&format!("mutation{k}"), &text);
        hand_check(&w, false, 100 + k as u64);
    }
}

// ---------------------------------------------------------------- failures

/// `text` assembled, with the one `mov r15, r15` replaced by `word`.
fn with_marker(name: &str, text: &str, word: u32) -> (Workload, Program) {
    use picajit::interp::pica::isa::{decode, DstReg, Instruction, SrcReg};
    let w = hand_program(name, text);
    let p = &w.program;
    let marks: Vec<usize> = (0..p.code().len())
        .filter(|&pc| {
            matches!(
                decode(p.code()[pc]),
                Instruction::Unary {
                    dst: DstReg::Temp(15),
                    src: SrcReg::Temp(15),
                    ..
                }
            )
        })
        .collect();
    assert_eq!(marks.len(), 1, "{name}: one marker");
    let mut code = p.code().to_vec();
    code[marks[0]] = word;
    let program = Program::new(code, p.opdescs().to_vec(), p.entry() as u32, p.kind()).unwrap();
    (w, program)
}

/// Emits one vertex, then (when `b` is set) reaches the marker; the other path is short.
fn failing_source() -> String {
    point_program(
        ".fvec scale\n",
        r#"
    setemit 0
    mul r0, scale, inpos
    mov outpos, r0
    mov outclr, inclr
    emit
    ifu BOOL
        setemit 1
        mov outpos, inclr
        mov outclr, r0
        emit
        mov r15, r15
        nop
    .end
    setemit 2, prim
    mov outpos, r0
    mov outclr, inpos
    emit
    end
.end
"#,
    )
}

fn encode_word(i: picajit::interp::pica::isa::Instruction) -> u32 {
    picajit::interp::pica::isa::encode(&i).unwrap()
}

#[test]
fn failing_invocations_stop_both_at_the_same_point() {
    on_each_backend(failing_invocations_stop_both_at_the_same_point_on);
}

fn failing_invocations_stop_both_at_the_same_point_on() {
    use picajit::interp::pica::isa::Instruction;
    let undefined = 0x10 << 26 | 0x1234;
    let words = [
        ("undefined opcode", undefined),
        (
            "jump past the end",
            encode_word(Instruction::JmpU {
                b: 0,
                dest: 0xFFF,
                invert: true,
            }),
        ),
        ("break outside a loop", encode_word(Instruction::Break)),
    ];
    for (what, word) in words {
        for b in [15u8, 4] {
            let text = failing_source().replace("BOOL", &format!("b{b}"));
            let (w, program) = with_marker("failing", &text, word);
            for mode in MODES {
                let shader = jit(&program, mode);
                let inputs = w.inputs(mode, 65);
                for (b4, b15) in [(false, false), (false, true), (true, false)] {
                    let mut uniforms = w.uniforms(mode);
                    uniforms.set_bool(4, b4);
                    let mut start = fresh(&uniforms, 0b11);
                    start.uniforms.set_bool(15, b15);
                    for n in [1usize, 8, 9, 17, 64] {
                        let ctx = || format!("{what}, ifu b{b}, b4={b4} b15={b15} {mode:?} n={n}");
                        let ran = check(&shader, &start, &inputs[..n], BUDGET, &inputs[64])
                            .unwrap_or_else(|e| panic!("{}: {e}\n{}", ctx(), source(&program)));
                        // Where the marker is reached: the first invocation that has the
                        // bool set fails, after emitting two vertices.
                        let reached = if b == 15 {
                            Some(if b15 { 0 } else { 1 })
                        } else if b4 {
                            Some(0)
                        } else {
                            None
                        };
                        let (_, res) = run_ref(&program, mode, &start, &inputs[..n], BUDGET);
                        match reached.filter(|&k| k < n) {
                            Some(k) => {
                                assert!(ran.failed, "{}", ctx());
                                assert_eq!(res.unwrap_err().0, k, "{}", ctx());
                                assert_eq!(ran.emitted, 2 * k + 2, "{}", ctx());
                            }
                            None => {
                                assert!(!ran.failed, "{}", ctx());
                                // The failing path is never taken: groups run as usual.
                                if group_path() && n >= 16 {
                                    assert!(ran.groups > 0, "{}: {ran:?}", ctx());
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn budget_exhaustion_stops_both_at_the_same_point() {
    on_each_backend(budget_exhaustion_stops_both_at_the_same_point_on);
}

fn budget_exhaustion_stops_both_at_the_same_point_on() {
    let workloads = Workload::examples().unwrap();
    for w in workloads.iter().filter(|w| point_mode(w)) {
        for mode in MODES {
            let shader = jit(&w.program, mode);
            let uniforms = w.uniforms(mode);
            let inputs = w.inputs(mode, 41);
            // Instructions of one invocation (the same for every one).
            let start = fresh(&uniforms, 0b11);
            let (_, once) = run_ref(&w.program, mode, &start, &inputs[..1], BUDGET);
            let c = once.unwrap();
            for budget in [0, 1, c / 3, c / 2, c - 1, c, c + 1] {
                for n in [1usize, 8, 9, 40] {
                    let ctx = || format!("{} {mode:?} budget {budget} of {c}, n={n}", w.name);
                    let ran = check(&shader, &start, &inputs[..n], budget, &inputs[40])
                        .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                    assert_eq!(ran.failed, budget < c, "{}", ctx());
                    if group_path() && budget >= c && n >= 17 {
                        assert!(ran.groups > 0, "{}: {ran:?}", ctx());
                    }
                }
            }
        }
    }
}

/// IFC on a per-point value: only the vertices with a negative x reach the undefined opcode,
/// so the failing index is anywhere in the batch (the program runs one invocation at a time).
#[test]
fn data_dependent_failure_deep_in_the_batch() {
    on_each_backend(data_dependent_failure_deep_in_the_batch_on);
}

fn data_dependent_failure_deep_in_the_batch_on() {
    let text = r#"
.gsh point c0
.constf zero(0.0, 0.0, 0.0, 0.0)
.in inpos v0
.out outpos position
.proc main
    setemit 0
    mov outpos, inpos
    emit
    cmp zero, gt, gt, inpos
    ifc cmp.x
        mov r15, r15
        nop
    .end
    end
.end
"#;
    let (w, program) = with_marker("deep", text, 0x11 << 26);
    for mode in MODES {
        let shader = jit(&program, mode);
        let uniforms = w.uniforms(mode);
        let mut inputs = w.inputs(mode, 65);
        for row in inputs.iter_mut() {
            row[0][0] = row[0][0].abs();
        }
        for k in [0usize, 7, 8, 13, 37, 63] {
            let mut rows = inputs.clone();
            rows[k][0][0] = -0.5;
            let start = fresh(&uniforms, 1);
            let ran = check(&shader, &start, &rows[..64], BUDGET, &rows[64])
                .unwrap_or_else(|e| panic!("{mode:?} failing at {k}: {e}"));
            assert!(ran.failed);
            assert_eq!(ran.emitted, k + 1, "{mode:?} failing at {k}");
        }
    }
}

/// Hundreds of EMITs per invocation (the disc with a longer loop).
#[test]
fn many_emits_per_invocation() {
    on_each_backend(many_emits_per_invocation_on);
}

fn many_emits_per_invocation_on() {
    let disc = include_str!("../examples/point_to_disc.g.pica");
    assert!(disc.contains(".consti fanloop(15, 0, 0, 0)"));
    let text = disc.replace(
        ".consti fanloop(15, 0, 0, 0)",
        ".consti fanloop(99, 0, 0, 0)",
    );
    let w = hand_program("point_to_disc_long", &text);
    for mode in MODES {
        let shader = jit(&w.program, mode);
        let uniforms = w.uniforms(mode);
        let inputs = w.inputs(mode, 33);
        for n in [9usize, 17, 32] {
            let start = fresh(&uniforms, 0b11);
            let ran = check(&shader, &start, &inputs[..n], BUDGET, &inputs[32])
                .unwrap_or_else(|e| panic!("{mode:?} n={n}: {e}"));
            assert_eq!(ran.emitted, n * 202);
            if group_path() && n >= 17 {
                assert!(ran.groups > 0, "{mode:?} n={n}: {ran:?}");
            }
        }
    }
}

// ---------------------------------------------------------------- interleaving

/// `run`, `run_points`, `run` again, a uniform change, `run_points`, `take_output`, on both
/// engines from the same start; compared after every step.
fn interleave(name: &str, program: &Program, mode: FloatMode, uniforms: &Uniforms, r: &mut Rng) {
    let shader = jit(program, mode);
    let interp = Interpreter::new(program, mode);
    let written = written_outputs(program);
    let all = regs_of(&written);
    let opts = StartOpts {
        banks_equal: true,
        pending: false,
        b15: false,
    };
    let start = random_state(r, mode, uniforms, &written, all, opts);
    let (mut a, mut b) = (start.clone(), start);
    let fail =
        |step: &str, e: String| -> ! { panic!("{name} {mode:?} {step}: {e}\n{}", source(program)) };
    let single = |a: &mut State, b: &mut State, row: &Row, step: &str| {
        a.regs.input = *row;
        b.regs.input = *row;
        let ra = interp.run(&mut a.regs, &a.uniforms, Some(&mut a.gs), BUDGET);
        let rb = run_one(&shader, &mut b.regs, &b.uniforms, Some(&mut b.gs), BUDGET);
        if ra != rb {
            fail(step, format!("interp {ra:?} jit {rb:?}"));
        }
        if let Some(d) = diff(a, b) {
            fail(step, d);
        }
    };
    let points = |a: &mut State, b: &mut State, rows: &[Row], step: &str| -> u64 {
        let before = shader.batch_stats();
        let (sa, ra) = run_ref(program, mode, a, rows, BUDGET);
        let (sb, rb) = run_jit(&shader, b, rows, BUDGET);
        if ra != rb {
            fail(step, format!("interp {ra:?} jit {rb:?}"));
        }
        if let Some(d) = diff(&sa, &sb) {
            fail(step, d);
        }
        (*a, *b) = (sa, sb);
        shader.batch_stats().groups - before.groups
    };
    let rows = random_rows(r, mode, 49);
    single(&mut a, &mut b, &rows[0], "first run");
    single(&mut a, &mut b, &rows[1], "second run (records pending)");
    let g1 = points(&mut a, &mut b, &rows[2..22], "run_points after run");
    single(&mut a, &mut b, &rows[22], "run after run_points");
    let row = vec4(r, mode);
    a.uniforms.set_float_raw(0, row);
    b.uniforms.set_float_raw(0, row);
    a.out.clear();
    b.out.clear();
    let g2 = points(
        &mut a,
        &mut b,
        &rows[23..40],
        "run_points after a uniform change",
    );
    let (ea, pa) = a.gs.take_output();
    let (eb, pb) = b.gs.take_output();
    assert_eq!(ea.len(), eb.len(), "{name} {mode:?}");
    assert_eq!(pa.len(), pb.len(), "{name} {mode:?}");
    assert!(ea
        .iter()
        .zip(&eb)
        .all(|(x, y)| vertex_bits(x) == vertex_bits(y)));
    assert!(pa
        .iter()
        .zip(&pb)
        .all(|(x, y)| prim_bits(x) == prim_bits(y)));
    single(&mut a, &mut b, &rows[40], "run after take_output");
    let (ea, pa) = a.gs.take_output();
    let (eb, pb) = b.gs.take_output();
    assert!(ea
        .iter()
        .zip(&eb)
        .all(|(x, y)| vertex_bits(x) == vertex_bits(y)));
    assert_eq!(pa.len(), pb.len(), "{name} {mode:?}");
    assert!(
        pa.iter()
            .zip(&pb)
            .all(|(x, y)| prim_bits(x) == prim_bits(y)),
        "{name} {mode:?}: primitives replayed from different slots"
    );
    // Fewer than a group, then none at all (pending records still drained).
    points(&mut a, &mut b, &rows[41..48], "short run_points");
    single(&mut a, &mut b, &rows[48], "run before an empty run_points");
    points(&mut a, &mut b, &rows[..0], "empty run_points");
    assert!(a.gs.emitted.is_empty() && b.gs.emitted.is_empty());
    if group_path() && shader.points_ineligibility().is_none() {
        assert!(g1 + g2 > 0, "{name} {mode:?}: no group ran");
    }
}

#[test]
fn run_and_run_points_interleave() {
    on_each_backend(run_and_run_points_interleave_on);
}

fn run_and_run_points_interleave_on() {
    let mut r = Rng::new(0x1A7E);
    let workloads = Workload::examples().unwrap();
    for w in workloads.iter().filter(|w| point_mode(w)) {
        for mode in MODES {
            interleave(&w.name, &w.program, mode, &w.uniforms(mode), &mut r);
        }
    }
    for seed in 0..30u64 {
        let mode = MODES[seed as usize % 3];
        let mut g = Rng::new(seed ^ 0x0123_4567);
        let case = generate(&mut g, &points_options(mode, seed % 2 == 0, 12, false));
        interleave(
            &format!("random {seed}"),
            &case.gen.program(),
            mode,
            &case.uniforms,
            &mut r,
        );
    }
}

// ---------------------------------------------------------------- the generator itself

/// The random programs use every opcode, every control-flow shape, every SETEMIT
/// combination and every relative-address mode, and they stay eligible by the rule (checked
/// per program in `random_programs`).
#[test]
fn generator_covers_the_isa_and_the_shapes() {
    use picajit::interp::pica::isa::{decode, Instruction, Opcode, RelIndex};
    use std::collections::BTreeSet;
    let mut ops = BTreeSet::new();
    let mut setemits = BTreeSet::new();
    let mut rels = BTreeSet::new();
    let mut flow = BTreeSet::new();
    let mut partial_outputs = 0;
    for seed in 0..600u64 {
        let mut r = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mode = MODES[seed as usize % 3];
        let flowy = seed % 4 != 0;
        let len = 3 + r.below(24);
        let case = generate(&mut r, &points_options(mode, flowy, len, seed % 8 == 1));
        assert!(Sim::check(&case.gen).is_empty(), "seed {seed}");
        let facts = case.gen.facts();
        partial_outputs += facts.outputs.iter().any(|&m| m != 0 && m != 0xF) as u32;
        for &w in case.gen.program().code() {
            let i = decode(w);
            let name = match &i {
                Instruction::Binary {
                    op,
                    rel,
                    src1,
                    src2,
                    ..
                } => {
                    let wide = if op.is_inverted() { src2 } else { src1 };
                    if wide.is_const() {
                        rels.insert(format!("{rel:?}"));
                    }
                    op.mnemonic().to_string()
                }
                Instruction::Unary { op, rel, src, .. } => {
                    if src.is_const() {
                        rels.insert(format!("{rel:?}"));
                    }
                    op.mnemonic().to_string()
                }
                Instruction::Mad { op, .. } => op.mnemonic().to_string(),
                Instruction::Mova { .. } => "mova".into(),
                Instruction::Cmp { .. } => "cmp".into(),
                Instruction::SetEmit {
                    vtx,
                    primitive,
                    winding,
                } => {
                    setemits.insert((*vtx, *primitive, *winding));
                    "setemit".into()
                }
                other => {
                    let s = format!("{other:?}");
                    flow.insert(s.split([' ', '{']).next().unwrap().to_string());
                    continue;
                }
            };
            ops.insert(name);
        }
    }
    // Every opcode with ALU operands (the ISA's own list: a new opcode is covered or fails
    // here).
    use picajit::interp::pica::isa::Format;
    for &op in Opcode::ALL.iter().filter(|op| {
        matches!(
            op.format(),
            Format::One | Format::OneI | Format::OneU | Format::OneC | Format::Five | Format::FiveI
        )
    }) {
        assert!(
            ops.contains(op.mnemonic()),
            "{op:?} never generated: {ops:?}"
        );
    }
    assert_eq!(setemits.len(), 16, "{setemits:?}");
    for rel in [RelIndex::None, RelIndex::A0X, RelIndex::A0Y, RelIndex::AL] {
        assert!(rels.contains(&format!("{rel:?}")), "{rel:?}: {rels:?}");
    }
    for f in [
        "IfU", "Loop", "Call", "CallU", "JmpU", "Break", "End", "Emit", "Nop",
    ] {
        assert!(flow.contains(f), "{f} never generated: {flow:?}");
    }
    assert!(partial_outputs > 50, "{partial_outputs}");
    eprintln!("{ops:?}\n{flow:?}\n{rels:?}");
}

// ---------------------------------------------------------------- more shapes

/// One subroutine EMITs with the SETEMIT parameters of its caller: three call sites, three
/// sets of flags at the same EMIT word. Also from a loop, whose body sets them each time.
#[test]
fn emit_in_a_subroutine_takes_the_callers_setemit() {
    on_each_backend(emit_in_a_subroutine_takes_the_callers_setemit_on);
}

fn emit_in_a_subroutine_takes_the_callers_setemit_on() {
    let text = r#"
.gsh point c0
.fvec scale
.consti twice(1, 0, 0, 0)
.in inpos v0
.in inclr v1
.out outpos position
.out outclr color
.proc vertex
    mul outpos, scale, r0
    mov outclr, inclr
    emit
    add r0, r0, inclr
.end
.proc main
    mov r0, inpos
    setemit 0
    call vertex
    setemit 1, prim
    call vertex
    setemit 2, prim inv
    call vertex
    for twice
        setemit 3, inv
        call vertex
        setemit 1
        call vertex
    .end
    end
.end
"#;
    let w = hand_program("sub_emit", text);
    hand_check(&w, true, 7);
    let shader = jit(&w.program, F24Z);
    let start = fresh(&w.uniforms(F24Z), 0b11);
    let inputs = w.inputs(F24Z, 17);
    let (a, _) = run_ref(&w.program, F24Z, &start, &inputs, BUDGET);
    let (b, _) = run_jit(&shader, &start, &inputs, BUDGET);
    assert!(diff(&a, &b).is_none());
    // The flags of one invocation, as the interpreter gives them.
    let flags: Vec<(u8, bool, bool)> = (0..7)
        .map(|i| {
            let f = b.out.vertex(16 * 7 + i).1;
            (f.slot, f.primitive, f.winding)
        })
        .collect();
    assert_eq!(
        flags,
        [
            (0, false, false),
            (1, true, false),
            (2, true, true),
            (3, false, true),
            (1, false, false),
            (3, false, true),
            (1, false, false)
        ]
    );
}

/// So many vertices that the emit buffer is filled in several chunks, and so many per
/// invocation that a group would not fit in one (which then runs per invocation).
#[test]
fn output_in_chunks() {
    on_each_backend(output_in_chunks_on);
}

fn output_in_chunks_on() {
    let disc = include_str!("../examples/point_to_disc.g.pica");
    let long = disc.replace(
        ".consti fanloop(15, 0, 0, 0)",
        ".consti fanloop(255, 0, 0, 0)",
    );
    let w = hand_program("point_to_disc_255", &long);
    // 514 vertices per invocation, two rows each: 148 KiB per group of eight.
    let mode = F24N;
    let shader = jit(&w.program, mode);
    let uniforms = w.uniforms(mode);
    let inputs = w.inputs(mode, 1001);
    let start = fresh(&uniforms, 0b11);
    let ran = check(&shader, &start, &inputs[..1000], BUDGET, &inputs[1000])
        .unwrap_or_else(|e| panic!("chunks: {e}"));
    assert_eq!(ran.emitted, 1000 * 514);
    if group_path() {
        assert!(ran.groups >= 120, "{ran:?}");
    }
    // Nested loops: 2 + 2·256·64 = 32770 vertices per invocation.
    let nested = long.replace("    for fanloop\n", "    for fanloop\n    for inner\n");
    let nested = nested.replace(
        "        emit\n    .end\n    end\n",
        "        emit\n    .end\n    .end\n    end\n",
    );
    let nested = nested.replace(".fvec radius", ".consti inner(63, 0, 0, 0)\n.fvec radius");
    assert_ne!(nested, long);
    let w = hand_program("point_to_disc_nested", &nested);
    let shader = jit(&w.program, mode);
    let inputs = w.inputs(mode, 10);
    let start = fresh(&w.uniforms(mode), 0b11);
    let ran = check(&shader, &start, &inputs[..9], 1 << 24, &inputs[9])
        .unwrap_or_else(|e| panic!("nested: {e}"));
    assert_eq!(ran.emitted, 9 * 32770);
}

/// Int and bool uniforms changed between calls change how many vertices an invocation
/// emits and which EMITs run: the shader's expectation from the last call is wrong.
#[test]
fn uniform_changes_between_calls() {
    on_each_backend(uniform_changes_between_calls_on);
}

fn uniform_changes_between_calls_on() {
    let w = example("point_to_disc.g.pica");
    let text = point_program(
        ".fvec scale\n",
        r#"
    setemit 0
    mov r0, inpos
    mul outpos, scale, r0
    mov outclr, inclr
    emit
    ifu b3
        setemit 1, prim
        mov outpos, inclr
        mov outclr, inpos
        emit
    .end
    for i1
        setemit 2, prim inv
        add outpos, r0, inclr
        mov outclr, inclr
        emit
    .end
    end
.end
"#,
    );
    let v = hand_program("uniform_changes", &text);
    for mode in MODES {
        for (name, program, base) in [
            ("disc", &w.program, w.uniforms(mode)),
            ("uniform_changes", &v.program, v.uniforms(mode)),
        ] {
            let shader = jit(program, mode);
            let mut r = Rng::new(0xC4A6);
            let inputs = w.inputs(mode, 41);
            let mut a = fresh(&base, 0b11);
            a.uniforms.set_bool(15, true);
            let mut b = a.clone();
            for step in 0..12 {
                let count = [15u8, 0, 3, 1, 200, 2][step % 6];
                for st in [&mut a, &mut b] {
                    st.uniforms.set_int(0, [count, 0, 0, 0]);
                    st.uniforms.set_int(1, [count / 2, 1, 1, 0]);
                    st.uniforms.set_bool(3, step % 3 == 1);
                    st.out.clear();
                }
                let n = [9usize, 17, 40, 24][step % 4];
                let (sa, ra) = run_ref(program, mode, &a, &inputs[..n], BUDGET);
                let (sb, rb) = run_jit(&shader, &b, &inputs[..n], BUDGET);
                assert_eq!(ra, rb, "{name} {mode:?} step {step}");
                if let Some(d) = diff(&sa, &sb) {
                    panic!("{name} {mode:?} step {step}: {d}");
                }
                (a, b) = (sa, sb);
                let _ = r.u32();
            }
            if group_path() {
                assert!(shader.batch_stats().groups > 0, "{name} {mode:?}");
            }
        }
    }
}

/// The same shader from several threads at once (each its own state).
#[test]
fn concurrent_calls_on_one_shader() {
    on_each_backend(concurrent_calls_on_one_shader_on);
}

fn concurrent_calls_on_one_shader_on() {
    let w = example("point_to_quad.g.pica");
    let mode = F24Z;
    let shader = jit(&w.program, mode);
    let uniforms = w.uniforms(mode);
    let inputs = w.inputs(mode, 200);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (shader, uniforms, inputs) = (&shader, &uniforms, &inputs);
            s.spawn(move || {
                let mut r = Rng::new(t);
                for k in 0..40 {
                    let n = 9 + r.below(150) as usize;
                    let mut start = fresh(uniforms, 0b11);
                    // Each thread its own uniforms: the flushed copies must not be shared.
                    start
                        .uniforms
                        .set_float_raw(0, [0.125 * (t + 1) as f32, 0.0, 0.0, 0.0]);
                    check(shader, &start, &inputs[..n], BUDGET, &inputs[199])
                        .unwrap_or_else(|e| panic!("thread {t} call {k}: {e}"));
                }
            });
        }
    });
}

/// The state a call leaves after groups, for each number of EMITs per invocation (0-3: the
/// current bank is rebuilt from the bank emitted two EMITs before, the previous
/// invocation's when there is one EMIT, the last invocation's registers when there is
/// none), with and without outputs written after the last EMIT, one output register
/// partly written (o1.xy) and one never (o2), from carried-over state.
#[test]
fn final_state_for_each_emit_count() {
    on_each_backend(final_state_for_each_emit_count_on);
}

fn final_state_for_each_emit_count_on() {
    for emits in 0..4 {
        for tail in 0..3 {
            let mut body = String::from("    setemit 1, prim\n    mov r1, a\n");
            for j in 0..emits {
                body += &format!(
                    "    add r1, k, r1\n    mul o0, k, r1\n    mov o1.xy, b.yx\n    setemit {}\n    emit\n",
                    j % 4
                );
            }
            body += match tail {
                0 => "",
                1 => "    mov o0.x, b\n",
                _ => "    mov o0.yw, b\n    mov o1.y, r1\n    setemit 2, inv\n",
            };
            let text = format!(
                ".gsh point c0\n.fvec k\n.in a v0\n.in b v1\n.out outpos position\n\
                 .out outclr color\n.out outtc texcoord0\n.proc main\n{body}    end\n.end\n"
            );
            let w = hand_program(&format!("emits{emits}_tail{tail}"), &text);
            let written = written_outputs(&w.program);
            let mut r = Rng::new(17 * emits + tail);
            for mode in MODES {
                let shader = jit(&w.program, mode);
                assert_eq!(shader.points_ineligibility(), None, "{text}");
                let uniforms = w.uniforms(mode);
                let inputs = random_rows(&mut r, mode, 41);
                for (n, b15) in [(9, false), (17, true), (24, false), (40, true)] {
                    let opts = StartOpts {
                        banks_equal: true,
                        pending: r.chance(50),
                        b15,
                    };
                    for mask in [regs_of(&written), 0b01, 0b10] {
                        let start = random_state(&mut r, mode, &uniforms, &written, mask, opts);
                        let ran = check(&shader, &start, &inputs[..n], BUDGET, &inputs[40])
                            .unwrap_or_else(|e| {
                                panic!("{mode:?} n={n} mask={mask:#x}: {e}\n{text}")
                            });
                        if group_path() && mask & !regs_of(&written) == 0 {
                            assert!(ran.groups > 0, "{mode:?} n={n}: {ran:?}\n{text}");
                        }
                    }
                }
            }
        }
    }
}

/// Without AVX2 every invocation runs alone (and exactly).
#[test]
#[cfg(target_arch = "x86_64")]
fn without_avx2_every_invocation_runs_alone() {
    let features = HostFeatures::detect().without(HostFeatures::AVX2);
    let mut r = Rng::new(0xA5);
    for seed in 0..40u64 {
        let mode = MODES[seed as usize % 3];
        let case = generate(&mut r, &points_options(mode, seed % 2 == 0, 15, false));
        let program = case.gen.program();
        let shader = Compiled {
            shader: picajit_jit::compile(&program, mode, Backend::X64, features).unwrap(),
            program: &program,
            mode,
        };
        assert!(shader.points_ineligibility().is_some());
        let facts = Sim::reachable_facts(&case.gen);
        for _ in 0..2 {
            let p = plan(&mut r, mode, &case.uniforms, &facts);
            let ran = check(&shader, &p.start, &p.inputs, p.budget, &p.follow)
                .unwrap_or_else(|e| panic!("seed {seed} {}: {e}\n{}", p.what, source(&program)));
            assert_eq!(ran.groups + ran.fallbacks, 0);
        }
    }
}

// ---------------------------------------------------------------- which lanes are read

/// The lanes of source `pos` (0-2) an instruction truly reads with write mask `m` (bit l =
/// lane l, before the swizzle): what can change its results or flags. DPH ignores a.w, DST
/// computes (1, a.y·b.y, a.z, b.w).
fn true_read_lanes(op: picajit::interp::pica::isa::Opcode, m: u8, pos: usize) -> u8 {
    use picajit::interp::pica::isa::Opcode::*;
    match (op, pos) {
        (Dph | Dphi, 0) => 0b0111,
        (Dst | Dsti, 0) => m & 0b0110,
        (Dst | Dsti, _) => m & 0b1010,
        _ => op.reads(pos, m),
    }
}

/// Every opcode, every source a temporary can be, write masks, each lane: the temporary's
/// component read in that lane (and only there) is written only later in the program.
/// Where the instruction reads the lane, the program is not eligible; where it does not
/// (not even by the rule's conservative count), it is, and runs in groups exactly: the lane
/// holds the previous invocation's value, which must not matter.
#[test]
fn every_opcode_reads_exactly_its_lanes() {
    on_each_backend(every_opcode_reads_exactly_its_lanes_on);
}

fn every_opcode_reads_exactly_its_lanes_on() {
    use picajit::interp::pica::isa::{
        CmpOp, DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg, Swizzle, WriteMask,
    };
    use points_gen::Node;
    use Opcode::*;
    let ops: Vec<Opcode> = Opcode::arithmetic().collect();
    let mask_of = |m: u8| WriteMask::from_lanes([m & 1 != 0, m & 2 != 0, m & 4 != 0, m & 8 != 0]);
    let ident = OperandDesc::new(WriteMask::XYZW, [false; 3], [Swizzle::IDENTITY; 3]).0;
    let (mut must_not, mut must, mut grouped) = (0, 0, 0);
    let mut r = Rng::new(0x1A2E);
    for (k, &op) in ops.iter().enumerate() {
        let positions: &[usize] = match op {
            Mad | Madi => &[0, 1, 2],
            Ex2 | Lg2 | Litp | Flr | Rcp | Rsq | Mov | Mova => &[0],
            _ => &[0, 1],
        };
        let masks: &[u8] = match op {
            Mova => &[1, 2, 3],
            Cmp => &[0xF],
            _ => &[1, 2, 4, 8, 0x5, 0xA, 0xF],
        };
        for &pos in positions {
            for &m in masks {
                for lane in 0..4u8 {
                    let c = r.below(4) as u8;
                    // Lane `lane` reads r0.c; the others r0's other components.
                    let other = (c + 1 + r.below(3) as u8) & 3;
                    let mut sel = [other; 4];
                    sel[lane as usize] = c;
                    let mut swz = [Swizzle::IDENTITY; 3];
                    swz[pos] = Swizzle::from_lanes(sel);
                    let desc = OperandDesc::new(mask_of(m), [false; 3], swz).0;
                    let src = |p: usize| {
                        if p == pos {
                            SrcReg::Temp(0)
                        } else {
                            SrcReg::Input(2 + p as u8)
                        }
                    };
                    let (dst, rel) = (DstReg::Temp(1), RelIndex::None);
                    let instr = match op {
                        Mad | Madi => Instruction::Mad {
                            op,
                            dst,
                            src1: src(0),
                            src2: src(1),
                            src3: src(2),
                            rel,
                            desc: 0,
                        },
                        Mova => Instruction::Mova {
                            src: src(0),
                            rel,
                            desc: 0,
                        },
                        Cmp => Instruction::Cmp {
                            src1: src(0),
                            src2: src(1),
                            rel,
                            x: CmpOp::Lt,
                            y: CmpOp::Ge,
                            desc: 0,
                        },
                        Ex2 | Lg2 | Litp | Flr | Rcp | Rsq | Mov => Instruction::Unary {
                            op,
                            dst,
                            src: src(0),
                            rel,
                            desc: 0,
                        },
                        _ => Instruction::Binary {
                            op,
                            dst,
                            src1: src(0),
                            src2: src(1),
                            rel,
                            desc: 0,
                        },
                    };
                    // Descriptor 1: identity; 2..: writes of r0 but component c.
                    let mut descs = vec![ident; 128];
                    descs[0] = desc;
                    let all_but_c = 0xF & !(1u8 << c);
                    descs[2] =
                        OperandDesc::new(mask_of(all_but_c), [false; 3], [Swizzle::IDENTITY; 3]).0;
                    let mov = |dst, src, rel, desc| {
                        Node::Op(Instruction::Unary {
                            op: Mov,
                            dst,
                            src,
                            rel,
                            desc,
                        })
                    };
                    // The result goes out through o0 (a0 through a relative read).
                    let result = match op {
                        Mova => mov(
                            DstReg::Output(0),
                            SrcReg::Const(1),
                            if m & 1 != 0 {
                                RelIndex::A0X
                            } else {
                                RelIndex::A0Y
                            },
                            1,
                        ),
                        _ => mov(DstReg::Output(0), SrcReg::Temp(1), rel, 1),
                    };
                    let gen = points_gen::Gen {
                        main: vec![
                            Node::Op(Instruction::SetEmit {
                                vtx: 0,
                                primitive: false,
                                winding: false,
                            }),
                            mov(DstReg::Temp(0), SrcReg::Input(1), rel, 2),
                            Node::Op(instr),
                            result,
                            Node::Op(Instruction::Emit),
                            mov(DstReg::Temp(0), SrcReg::Input(0), rel, 1),
                            Node::End,
                        ],
                        subs: Vec::new(),
                        descs,
                    };
                    let program = gen.program();
                    let mode = MODES[(k + lane as usize) % 3];
                    let shader = jit(&program, mode);
                    let what = || {
                        format!(
                            "{op:?} source {pos} mask {m:#x} lane {lane}\n{}",
                            source(&program)
                        )
                    };
                    let by_rule = Sim::check(&gen).is_empty();
                    let reads = true_read_lanes(op, m, pos) & 1 << lane != 0;
                    let counted = op.reads(pos, m) & 1 << lane != 0;
                    assert_eq!(by_rule, !counted, "the rule's count: {}", what());
                    if group_path() {
                        let eligible = shader.points_ineligibility().is_none();
                        if reads {
                            must_not += 1;
                            assert!(!eligible, "a lane read is not counted: {}", what());
                        }
                        if !counted {
                            must += 1;
                            assert!(eligible, "an unread lane is counted: {}", what());
                        }
                    }
                    let uniforms = points_gen::uniforms(&mut r, mode);
                    let facts = Sim::reachable_facts(&gen);
                    let opts = StartOpts {
                        banks_equal: true,
                        pending: false,
                        b15: true,
                    };
                    let start = random_state(&mut r, mode, &uniforms, &facts.outputs, 1, opts);
                    let inputs = random_rows(&mut r, mode, 25);
                    let ran = check(&shader, &start, &inputs[..24], BUDGET, &inputs[24])
                        .unwrap_or_else(|e| panic!("{e}: {}", what()));
                    if group_path() && shader.points_ineligibility().is_none() {
                        assert!(ran.groups > 0, "{ran:?}: {}", what());
                        grouped += 1;
                    }
                }
            }
        }
    }
    eprintln!("{must_not} programs read a lane, {must} do not; {grouped} ran in groups");
    if group_path() {
        assert!(must_not > 400 && must > 400 && grouped >= must);
    }
}

/// The generator's options for a point-mode program of about `len` operations in `main`.
fn points_options(mode: FloatMode, flow: bool, len: u32, quirks: bool) -> Options {
    Options {
        mode,
        kind: ShaderKind::Geometry,
        max_len: len as usize,
        flow,
        shape: Shape::Points { quirks },
    }
}
