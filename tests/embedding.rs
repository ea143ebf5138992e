//! Emulator embedding on the Rust API: unit state (r0-r15, a0, aL, cmp) in and out of
//! single invocations and batches, per-run entry points, long operand-descriptor tables.
//! Every engine (interpreter, x86-64 per vertex and eight-lane, AArch64 under unicorn) is
//! held to an independent reference: one `Interpreter::run` per vertex from the given state.

use picajit::interp::pica::exec::Interpreter;
use picajit::interp::pica::float::{FloatMode, Rounding, F24};
use picajit::interp::pica::isa::{decode, Instruction};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{Registers, Uniforms, UnitState};
use picajit::jit::A64Lanes;
use picajit::pica::asm::{assemble, SourceFile};
use picajit::pica::engine::{program_from_shbin, Attributes, EngineConfig, Invocation, Shader};
use picajit::{Engine, Error};
use picajit_testkit::{testgen, XorShift};

const MODES: [FloatMode; 3] = [
    FloatMode::F24(Rounding::TowardZero),
    FloatMode::F24(Rounding::NearestEven),
    FloatMode::F32,
];

const ENGINES: [Engine; 3] = [Engine::Interp, Engine::X64, Engine::A64];

/// The engines of [`check_batches`]: [`ENGINES`], and the AArch64 JIT once more with eight
/// lanes per run of its multi-vertex body (`EngineConfig::a64_lanes`).
const BATCH_ENGINES: [(Engine, A64Lanes); 4] = [
    (Engine::Interp, A64Lanes::Four),
    (Engine::X64, A64Lanes::Four),
    (Engine::A64, A64Lanes::Four),
    (Engine::A64, A64Lanes::Eight),
];

fn program(src: &str) -> (Program, Uniforms) {
    let shbin = assemble(&[SourceFile {
        name: "t.pica",
        text: src,
    }])
    .unwrap_or_else(|e| panic!("{e}\n{src}"));
    program_from_shbin(&shbin, 0).unwrap()
}

/// Reads r0-r5 before writing them, reads through a0.x, a0.y and aL outside any loop,
/// branches on the incoming cmp flags, then changes a0, cmp, r0, r2 and r5 per vertex (the
/// second IFC diverges within groups of eight).
const PROBE: &str = "
.fvec tab[8]
.proc main
    add o0, r0, v0
    mul o1, r1, v1
    mov o2, tab[a0.x]
    mov o3, tab[a0.y]
    mov o4, tab[aL]
    ifc cmp.x
        mov o5, r2
    .else
        mov o5, r3
    .end
    ifc cmp.y
        add r4, r4, v0
    .end
    mov o6, r4
    mova a0.x, v2.x
    cmp v0, lt, ge, r1
    ifc cmp.x
        mov r5.xy, v1
    .end
    mov o7, r5
    mov r0, v0
    add r2.xy, r2, v1
    end
.end
";

/// A loop that accumulates into r0 from the incoming r0 and leaves aL changed; a second
/// procedure (another entry point) reading r6, r7 and a0.y.
const LOOPS: &str = "
.fvec tab[8]
.consti steps(2, 1, 2, 0)
.proc main
    for steps
        add r0, tab[aL], r0
    .end
    mov o0, r0
    mov o1, tab[aL]
    mul o2, r6, v0
    end
.end
.proc other
    mad o0, r7, v0, r6
    mov o1, tab[a0.y]
    mova a0.y, v0.y
    end
.end
";

/// Random register values and states, drawn from the tests' generator.
struct Rng(XorShift);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    /// Ordinary values mostly, and every special class of register value now and then.
    fn value(&mut self, mode: FloatMode) -> f32 {
        let v = match self.below(16) {
            0 => f32::INFINITY,
            1 => f32::NEG_INFINITY,
            2 => f32::NAN,
            3 => -0.0,
            4 => 0.0,
            // An f24 subnormal pattern (a register value an f24 unit can hold) or, in F32
            // mode, an f32 subnormal.
            5 => match mode {
                FloatMode::F24(_) => {
                    F24::from_bits(0x00_1234 | (self.below(2) as u32) << 23).to_f32()
                }
                FloatMode::F32 => f32::from_bits(0x0000_4321),
            },
            _ => (self.below(2001) as f32 - 1000.0) / 64.0,
        };
        match mode {
            FloatMode::F24(r) if F24::from_f32_exact(v).is_none() => F24::from_f32(v, r).to_f32(),
            _ => v,
        }
    }
    fn row(&mut self, mode: FloatMode) -> [f32; 4] {
        [0; 4].map(|_| self.value(mode))
    }
    fn state(&mut self, mode: FloatMode) -> UnitState {
        let mut s = UnitState::default();
        for row in &mut s.temp {
            *row = self.row(mode);
        }
        let addr = |r: &mut Rng| match r.below(6) {
            0 => 200,
            1 => -129,
            2 => i32::MIN,
            _ => r.below(16) as i32 - 8,
        };
        s.a0 = [addr(self), addr(self)];
        s.al = addr(self);
        s.cmp = [self.below(2) == 1, self.below(2) == 1];
        s
    }
    fn uniforms(&mut self, base: &Uniforms, mode: FloatMode) -> Uniforms {
        let mut u = base.clone();
        for c in 0..96 {
            if c % 7 != 3 {
                u.set_float_raw(c, self.row(mode));
            }
        }
        u
    }
}

fn bits(rows: &[[f32; 4]; 16]) -> [[u32; 4]; 16] {
    rows.map(|r| r.map(f32::to_bits))
}

/// The reference: one interpreter invocation of `input` from `state`, exactly as the engine
/// API documents a batch vertex (inputs converted like attributes, state like uniforms).
fn reference(
    shader: &Shader,
    uniforms: &Uniforms,
    input: &[[f32; 4]; 16],
    state: Option<&UnitState>,
) -> Result<Registers, String> {
    let interp = Interpreter::new(shader.program(), shader.config().float_mode);
    let mut regs = Registers::default();
    regs.input = shader.convert_inputs(input);
    if let Some(s) = state {
        regs.set_unit_state(&shader.convert_state(s));
    }
    interp
        .run(&mut regs, uniforms, None, shader.config().budget)
        .map(|_| regs)
        .map_err(|e| e.to_string())
}

fn config(backend: Engine, float_mode: FloatMode) -> EngineConfig {
    EngineConfig::default()
        .with_engine(backend)
        .with_float_mode(float_mode)
        .with_budget(4096)
}

/// Run `inputs` through a batch with a state in and out on every engine and mode and compare each vertex's
/// outputs and the state handed back with the reference.
/// `eight_lane`: the program must run on the eight-lane code from a state (random programs
/// may stop every group: budget, deopts, per-lane aL).
fn check_batches(
    prog: &Program,
    base: &Uniforms,
    seed: u64,
    sizes: &[usize],
    eight_lane: bool,
) -> usize {
    let mut checked = 0;
    let mut rng = Rng(XorShift(seed | 1));
    for mode in MODES {
        for &n in sizes {
            let uniforms = rng.uniforms(base, mode);
            let inputs: Vec<[[f32; 4]; 16]> =
                (0..n).map(|_| [0; 16].map(|_| rng.row(mode))).collect();
            let state = rng.state(mode);
            for with_state in [false, true] {
                let state_in = with_state.then_some(&state);
                for (backend, a64_lanes) in BATCH_ENGINES {
                    let cfg = config(backend, mode).with_a64_lanes(a64_lanes);
                    let shader = Shader::new(prog.clone(), &cfg).unwrap();
                    let mut outputs = vec![[[0.0f32; 4]; 16]; n];
                    let mut out_state = UnitState {
                        al: 77,
                        ..UnitState::default()
                    };
                    let r = shader.invoke(
                        Invocation::batch(&uniforms, &inputs, &mut outputs)
                            .from_state(state_in)
                            .state_out(&mut out_state),
                    );
                    let what =
                        format!("{backend:?} {a64_lanes:?} {mode:?} n={n} state={with_state}");
                    let mut expected_fail = None;
                    for (k, input) in inputs.iter().enumerate() {
                        match reference(&shader, &uniforms, input, state_in) {
                            Ok(regs) => {
                                if expected_fail.is_none() {
                                    assert_eq!(
                                        bits(&outputs[k]),
                                        bits(&regs.output),
                                        "{what}: outputs of vertex {k}"
                                    );
                                    if k == n - 1 {
                                        assert!(
                                            out_state.bits_eq(&regs.unit_state()),
                                            "{what}: state out {out_state:?}\nexpected {:?}",
                                            regs.unit_state()
                                        );
                                    }
                                }
                            }
                            Err(e) => {
                                expected_fail.get_or_insert((k, e));
                            }
                        }
                    }
                    match (expected_fail, r) {
                        (None, Ok(_)) => {}
                        (Some((k, e)), Err(got)) => {
                            let Error::Exec { index, error } = got else {
                                panic!("{what}: {got:?}")
                            };
                            assert_eq!((index, error.to_string()), (k, e), "{what}")
                        }
                        (e, r) => panic!("{what}: expected {e:?}, got {r:?}"),
                    }
                    if eight_lane && with_state && n >= 8 && backend != Engine::Interp {
                        if let Some(c) = shader.compiled() {
                            if c.batch_lanes() == 8 {
                                assert!(
                                    c.batch_from_stats().groups > 0,
                                    "{what}: no group ran on the eight-lane code from a state"
                                );
                            }
                        }
                    }
                    checked += 1;
                }
            }
        }
    }
    checked
}

#[test]
fn batches_start_from_the_given_state_and_hand_back_the_last_vertex_state() {
    for (src, seed) in [(PROBE, 11), (LOOPS, 12)] {
        let (prog, base) = program(src);
        check_batches(&prog, &base, seed, &[0, 1, 3, 7, 8, 21, 64, 300], true);
    }
}

#[test]
fn random_programs_with_random_start_states_agree_on_every_engine() {
    let cases: u64 = std::env::var("PICAJIT_STATE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let (mut checked, mut groups) = (0, [0, 0, 0]);
    for seed in 0..cases {
        let case = testgen::generate(
            seed,
            &testgen::Options {
                mode: MODES[(seed % 3) as usize],
                ..testgen::Options::default()
            },
        );
        checked += check_batches(
            &case.program,
            &case.uniforms,
            seed * 7 + 3,
            &[1, 9, 24],
            false,
        );
        for (k, (backend, a64_lanes)) in BATCH_ENGINES[1..].iter().copied().enumerate() {
            let cfg = config(backend, case.mode).with_a64_lanes(a64_lanes);
            if let Some(c) = Shader::new(case.program.clone(), &cfg).ok().and_then(|s| {
                let mut o = vec![[[0.0f32; 4]; 16]; 64];
                let ins = vec![case.inputs; 64];
                let st = Rng(XorShift(seed + 1)).state(case.mode);
                let _ = s
                    .invoke(Invocation::batch(&case.uniforms, &ins, &mut o).from_state(&st))
                    .map(|o| o.instructions);
                s.compiled().map(|c| c.batch_from_stats().groups)
            }) {
                groups[k] += c;
            }
        }
    }
    assert!(checked > 0);
    // Most generated programs finish groups on the eight-lane code from a state: x86-64
    // natively (elsewhere there is no x86-64 JIT to ask), AArch64 natively or emulated.
    if cfg!(target_arch = "x86_64") {
        assert!(
            groups[0] > cases,
            "x64: {groups:?} groups over {cases} programs"
        );
    }
    assert!(
        groups[1] > cases && groups[2] > cases,
        "a64 (four lanes, eight): {groups:?} groups over {cases} programs"
    );
}

#[test]
fn single_invocations_carry_state_in_and_out_on_every_engine() {
    // `Shader::run` uses the registers as given: the state an emulator's persistent unit
    // holds goes in, the final state comes out, and chaining runs chains the state.
    let (prog, base) = program(PROBE);
    let mut rng = Rng(XorShift(99));
    for mode in MODES {
        let uniforms = rng.uniforms(&base, mode);
        let mut reference_regs = Registers::default();
        reference_regs.set_unit_state(&rng.state(mode));
        let inputs: Vec<[[f32; 4]; 16]> = (0..10).map(|_| [0; 16].map(|_| rng.row(mode))).collect();
        let interp = Interpreter::new(&prog, mode);
        let mut expected = Vec::new();
        let mut regs = reference_regs.clone();
        for input in &inputs {
            regs.input = *input;
            regs.output = [[0.0; 4]; 16];
            interp.run(&mut regs, &uniforms, None, 4096).unwrap();
            expected.push((bits(&regs.output), regs.unit_state()));
        }
        for backend in ENGINES {
            let shader = Shader::new(prog.clone(), &config(backend, mode)).unwrap();
            let mut regs = reference_regs.clone();
            for (k, input) in inputs.iter().enumerate() {
                regs.input = *input;
                regs.output = [[0.0; 4]; 16];
                shader
                    .invoke(Invocation::one(&uniforms, &mut regs))
                    .unwrap();
                assert_eq!(
                    bits(&regs.output),
                    expected[k].0,
                    "{backend:?} {mode:?} {k}"
                );
                assert!(
                    regs.unit_state().bits_eq(&expected[k].1),
                    "{backend:?} {mode:?} {k}"
                );
            }
        }
    }
}

#[test]
fn a_clean_state_in_is_the_plain_batch_and_state_out_of_an_empty_batch_is_the_state_in() {
    let (prog, _) = program(PROBE);
    let shader = Shader::new(prog, &EngineConfig::default()).unwrap();
    let u = Uniforms::default();
    let mut out = UnitState::default();
    let mut s = UnitState::default();
    s.temp[3] = [1.0, 2.0, 3.0, 4.0];
    s.al = -5;
    shader
        .invoke(
            Invocation::batch(&u, Attributes::F32(&[]), &mut [])
                .from_state(&s)
                .state_out(&mut out),
        )
        .map(|o| o.instructions)
        .unwrap();
    assert!(out.bits_eq(&s));
    shader
        .invoke(Invocation::batch(&u, Attributes::F32(&[]), &mut []).state_out(&mut out))
        .map(|o| o.instructions)
        .unwrap();
    assert!(out.is_clean());
    // f32 values that are not f24 values are rounded like uniforms on upload.
    s.temp[0][0] = 1.0 + f32::EPSILON;
    assert_eq!(shader.convert_state(&s).temp[0][0], 1.0);
}

fn entry_of_second_proc(prog: &Program) -> u32 {
    let end = prog
        .code()
        .iter()
        .position(|&w| matches!(decode(w), Instruction::End))
        .unwrap();
    end as u32 + 1
}

#[test]
fn per_run_entry_points_are_prepared_once_and_match_a_shader_made_for_that_entry() {
    let (prog, base) = program(LOOPS);
    let other = entry_of_second_proc(&prog);
    let mut rng = Rng(XorShift(5));
    for backend in ENGINES {
        let mode = FloatMode::default();
        let shader = Shader::new(prog.clone(), &config(backend, mode)).unwrap();
        let direct_prog = Program::new(
            prog.code().to_vec(),
            prog.opdescs().to_vec(),
            other,
            ShaderKind::Vertex,
        )
        .unwrap();
        let direct = Shader::new(direct_prog, &config(backend, mode)).unwrap();
        let uniforms = rng.uniforms(&base, mode);
        for round in 0..3 {
            let inputs: Vec<[[f32; 4]; 16]> =
                (0..20).map(|_| [0; 16].map(|_| rng.row(mode))).collect();
            let state = rng.state(mode);
            let (mut a, mut b) = (vec![[[0.0f32; 4]; 16]; 20], vec![[[0.0f32; 4]; 16]; 20]);
            let (mut sa, mut sb) = (UnitState::default(), UnitState::default());
            shader
                .with_entry(other, |s| {
                    s.invoke(
                        Invocation::batch(&uniforms, &inputs, &mut a)
                            .from_state(&state)
                            .state_out(&mut sa),
                    )
                    .map(|o| o.instructions)
                })
                .unwrap()
                .unwrap();
            direct
                .invoke(
                    Invocation::batch(&uniforms, &inputs, &mut b)
                        .from_state(&state)
                        .state_out(&mut sb),
                )
                .map(|o| o.instructions)
                .unwrap();
            assert_eq!(
                a.iter().map(bits).collect::<Vec<_>>(),
                b.iter().map(bits).collect::<Vec<_>>()
            );
            assert!(sa.bits_eq(&sb), "{backend:?} round {round}");
            // The program's own entry is the shader itself; the other one is prepared once.
            shader
                .with_entry(0, |s| assert!(std::ptr::eq(s, &shader)))
                .unwrap();
            assert_eq!(shader.prepared_entries(), 1);
        }
        assert!(shader.with_entry(prog.code().len() as u32, |_| ()).is_err());
    }
}

#[test]
fn operand_descriptor_tables_of_4096_entries_are_accepted_and_entries_past_128_never_read() {
    let (prog, _) = program(PROBE);
    let mut table = prog.opdescs().to_vec();
    table.resize(4096, 0);
    // Garbage past what the encoding addresses: it must change nothing.
    for d in &mut table[128..] {
        *d = 0xFFFF_FFFF;
    }
    let long = Program::new(prog.code().to_vec(), table, 0, ShaderKind::Vertex).unwrap();
    assert_eq!(long.opdescs().len(), 128);
    assert_eq!(long, {
        let mut t = prog.opdescs().to_vec();
        t.resize(128, 0);
        Program::new(prog.code().to_vec(), t, 0, ShaderKind::Vertex).unwrap()
    });
    assert!(Program::new(prog.code().to_vec(), vec![0; 4097], 0, ShaderKind::Vertex).is_err());
}

/// MAX(0, -inf): both readings (`docs/float-max.md`) on every engine, per vertex and on the
/// eight-lane path, in every float mode; only MAX with a -inf second operand differs.
#[test]
fn max_rule_is_selectable_on_every_engine() {
    use picajit::interp::pica::float::{max_rule, MaxRule};
    let (prog, base) = program(
        ".fvec k\n.proc main\n    max o0, k, v0\n    mov r1, k\n    max o1, v0, r1\n    mov r2, v1\n    max o2, r2, v0\n    min o3, k, v0\n    litp o4, v1\n    end\n.end\n",
    );
    let specials = [
        0.0,
        -0.0,
        1.5,
        -2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let mut rng = Rng(XorShift(77));
    for mode in MODES {
        let inputs: Vec<[[f32; 4]; 16]> = (0..72)
            .map(|_| {
                let mut v = [[0.0; 4]; 16];
                for r in &mut v[..2] {
                    *r = [0; 4].map(|_| specials[rng.below(7) as usize]);
                }
                v
            })
            .collect();
        let mut u = base.clone();
        let nan = F24::from_bits(0x7F_FFFF).to_f32(); // a NaN every mode holds
        let c0 = [0.0, f32::NEG_INFINITY, 3.0, nan];
        u.set_float_raw(0, c0);
        for rule in [MaxRule::Compare, MaxRule::NegInfSecond] {
            let mut results = Vec::new();
            for backend in ENGINES {
                let cfg = config(backend, mode).with_max_rule(rule);
                let shader = Shader::new(prog.clone(), &cfg).unwrap();
                for n in [1, 72] {
                    let mut out = vec![[[0.0f32; 4]; 16]; n];
                    shader
                        .invoke(Invocation::batch(&u, &inputs[..n], &mut out))
                        .map(|o| o.instructions)
                        .unwrap();
                    for (k, o) in out.iter().enumerate() {
                        let v0 = shader.convert_inputs(&inputs[k])[0];
                        for l in 0..4 {
                            let want = max_rule(c0[l], v0[l], rule);
                            assert_eq!(
                                o[0][l].to_bits(),
                                want.to_bits(),
                                "{backend:?} {mode:?} {rule:?} o0"
                            );
                            let want = max_rule(v0[l], c0[l], rule);
                            assert_eq!(
                                o[1][l].to_bits(),
                                want.to_bits(),
                                "{backend:?} {mode:?} {rule:?} o1"
                            );
                        }
                    }
                    results.push(out.iter().map(bits).collect::<Vec<_>>());
                }
                if backend == Engine::X64 {
                    if let Some(c) = shader.compiled() {
                        assert!(c.batch_lanes() == 1 || c.batch_stats().groups > 0);
                    }
                }
            }
            // Every engine gives the same registers (o2-o4 included) in both batch sizes.
            let (singles, groups): (Vec<_>, Vec<_>) =
                results.iter().enumerate().partition(|(i, _)| i % 2 == 0);
            assert!(singles.iter().all(|(_, r)| *r == singles[0].1));
            assert!(groups.iter().all(|(_, r)| *r == groups[0].1));
        }
    }
    // The one input where the readings part: MAX(0, -inf).
    assert_eq!(max_rule(0.0, f32::NEG_INFINITY, MaxRule::Compare), 0.0);
    assert_eq!(
        max_rule(0.0, f32::NEG_INFINITY, MaxRule::NegInfSecond),
        f32::NEG_INFINITY
    );
}
