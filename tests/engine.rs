//! Engine API: batches, vertex input conversion, geometry-shader state across invocations
//! (registers, b15, input modes) and SHBIN constant application.

mod engine_common;

use engine_common::run_vertex;
use picajit::interp::pica::exec::ExecError;
use picajit::interp::pica::float::{FloatMode, Rounding, F24};
use picajit::interp::pica::isa::*;
use picajit::interp::pica::program::{GsInputMode, Program, ShaderKind};
use picajit::interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms};
use picajit::jit::CodeCache;
use picajit::pica::bench::Workload;
use picajit::pica::engine::{
    apply_constants, program_from_shbin, EngineConfig, GeometryRunner, GsInput, Invocation,
    Outcome, Shader,
};
use picajit::pica::shbin::{Constant, Dvle, Shbin};
use picajit::{Engine, Error, DEFAULT_BUDGET};
use picajit_testkit::testgen::MODES;

fn id_desc() -> u64 {
    OperandDesc::new(WriteMask::XYZW, [false; 3], [Swizzle::IDENTITY; 3]).0
}

fn words(code: &[Instruction]) -> Vec<u32> {
    code.iter().map(|i| encode(i).unwrap()).collect()
}

/// A `kind` program of `code` with the identity descriptor.
fn program(kind: ShaderKind, code: &[Instruction]) -> Program {
    Program::new(words(code), vec![id_desc()], 0, kind).unwrap()
}

/// `add dst, src1, src2` with the identity descriptor.
fn add(dst: DstReg, src1: SrcReg, src2: SrcReg) -> Instruction {
    Instruction::Binary {
        op: Opcode::Add,
        dst,
        src1,
        src2,
        rel: RelIndex::None,
        desc: 0,
    }
}

/// `mov dst, src` with the identity descriptor.
fn mov(dst: DstReg, src: SrcReg) -> Instruction {
    Instruction::Unary {
        op: Opcode::Mov,
        dst,
        src,
        rel: RelIndex::None,
        desc: 0,
    }
}

/// `program` prepared for `engine` in `mode` with `budget`, the other settings default.
fn shader(program: &Program, engine: Engine, mode: FloatMode, budget: u64) -> Shader {
    let config = EngineConfig::default()
        .with_engine(engine)
        .with_float_mode(mode)
        .with_budget(budget);
    Shader::new(program.clone(), &config).unwrap()
}

/// `program` on the interpreter in the default float mode.
fn interp(program: Program) -> Shader {
    Shader::new(program, &interp_config(FloatMode::default())).unwrap()
}

/// Uniforms with `row` in c0, the rest zero.
fn with_c0(row: [f32; 4]) -> Uniforms {
    let mut u = Uniforms::default();
    u.set_float_raw(0, row);
    u
}

fn interp_config(mode: FloatMode) -> EngineConfig {
    EngineConfig::default()
        .with_engine(Engine::Interp)
        .with_float_mode(mode)
}

/// o0 = v0 + c0; o1 = v1
fn add_program() -> Program {
    let code = [
        add(DstReg::Output(0), SrcReg::Const(0), SrcReg::Input(0)),
        mov(DstReg::Output(1), SrcReg::Input(1)),
        Instruction::End,
    ];
    program(ShaderKind::Vertex, &code)
}

#[test]
fn batch_runs_every_vertex_independently() {
    let shader = interp(add_program());
    let u = with_c0([1.0, 2.0, 3.0, 4.0]);
    let inputs: Vec<[[f32; 4]; 16]> = (0..10)
        .map(|n| {
            let mut v = [[0.0; 4]; 16];
            v[0] = [n as f32; 4];
            v[1] = [-(n as f32); 4];
            v
        })
        .collect();
    let mut outputs = vec![[[9.0; 4]; 16]; 10];
    let total = shader
        .invoke(Invocation::batch(&u, &inputs, &mut outputs))
        .map(|o| o.instructions)
        .unwrap();
    assert_eq!(total, 30);
    for (n, o) in outputs.iter().enumerate() {
        let n = n as f32;
        assert_eq!(o[0], [n + 1.0, n + 2.0, n + 3.0, n + 4.0]);
        assert_eq!(o[1], [-n; 4]);
        assert_eq!(
            o[2], [0.0; 4],
            "unwritten outputs start at zero for every vertex"
        );
    }
}

#[test]
fn batch_reports_the_failing_vertex() {
    // A runaway loop fails every vertex; the error names vertex 0 and the budget.
    let code = words(&[Instruction::JmpU {
        b: 0,
        dest: 0,
        invert: true,
    }]);
    let p = Program::new(code, vec![], 0, ShaderKind::Vertex).unwrap();
    let config = interp_config(FloatMode::default()).with_budget(500);
    let shader = Shader::new(p, &config).unwrap();
    let inputs = vec![[[0.0; 4]; 16]; 3];
    let mut outputs = vec![[[0.0; 4]; 16]; 3];
    let err = shader
        .invoke(Invocation::batch(
            &Uniforms::default(),
            &inputs,
            &mut outputs,
        ))
        .map(|o| o.instructions)
        .unwrap_err();
    assert_eq!(
        err,
        Error::Exec {
            index: 0,
            error: ExecError::BudgetExhausted { budget: 500, pc: 0 }
        }
    );
    assert!(err.to_string().contains("budget of 500"));
}

#[test]
fn f24_mode_converts_vertex_inputs_like_the_input_stage() {
    let mut input = [[0.0f32; 4]; 16];
    input[1] = [0.1, 1e-30, 3e30, -0.0];
    let u = Uniforms::default();
    for r in [Rounding::TowardZero, Rounding::NearestEven] {
        let shader = Shader::new(add_program(), &interp_config(FloatMode::F24(r))).unwrap();
        let (regs, _) = run_vertex(&shader, &u, &input).unwrap();
        let want: Vec<u32> = input[1]
            .iter()
            .map(|&x| F24::from_f32(x, r).bits())
            .collect();
        let got: Vec<u32> = regs.output[1]
            .iter()
            .map(|&x| F24::from_f32_exact(x).expect("f24 value").bits())
            .collect();
        assert_eq!(got, want, "{r:?}");
    }
    // 0.1 truncates to 0x3B9999 (picasso's encoding of .constf 0.1) and rounds to 0x3B999A.
    let rtz = interp(add_program());
    assert_eq!(
        F24::from_f32_exact(run_vertex(&rtz, &u, &input).unwrap().0.output[1][0])
            .unwrap()
            .bits(),
        0x3B9999
    );
    // F32 mode keeps the f32 values.
    let f32s = Shader::new(add_program(), &interp_config(FloatMode::F32)).unwrap();
    assert_eq!(run_vertex(&f32s, &u, &input).unwrap().0.output[1][0], 0.1);
}

#[test]
fn jit_backends_report_unavailability_or_fallback_clearly() {
    let auto = Shader::new(add_program(), &EngineConfig::default()).unwrap();
    if auto.engine() == Engine::Interp {
        assert!(
            auto.fallback_reason().is_some(),
            "an interpreter fallback says why"
        );
    } else {
        assert!(auto.compiled().is_some());
        assert_eq!(auto.fallback_reason(), None);
    }
    let interp = interp(add_program());
    assert_eq!(interp.fallback_reason(), None);
    assert!(interp.compiled().is_none());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn auto_selects_the_x64_jit_on_x86_64_hosts() {
    let auto = Shader::new(add_program(), &EngineConfig::default()).unwrap();
    assert_eq!(auto.engine(), Engine::X64);
    let code = auto.compiled().unwrap();
    assert!(code.code_size() > 0);
    assert!(code.is_executable());
}

/// Random inputs (finite, special and subnormal values) for `n` vertices.
fn awkward_inputs(n: usize) -> Vec<[[f32; 4]; 16]> {
    let specials = [
        0.0f32,
        -0.0,
        1.0e-39,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0e30,
        -3.25,
        0.1,
    ];
    let mut seed = 0x1234_5678u32;
    (0..n)
        .map(|_| {
            let mut v = [[0.0f32; 4]; 16];
            for x in v.iter_mut().flatten() {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *x = if seed >> 28 < 3 {
                    specials[(seed as usize >> 8) % specials.len()]
                } else {
                    (seed >> 8) as f32 / 65536.0 - 128.0
                };
            }
            v
        })
        .collect()
}

/// Every engine gives the interpreter's bits on a batch, in every float mode, including
/// batches long enough to use several conversion chunks.
#[test]
fn jit_batches_match_the_interpreter_bit_for_bit() {
    let inputs = awkward_inputs(700);
    for mode in MODES {
        let mut u = Uniforms::default();
        u.set_float_f32(0, [0.5, -1.0e-39, 3.0e38, f32::NAN], mode);
        let reference = Shader::new(add_program(), &interp_config(mode)).unwrap();
        let auto = shader(&add_program(), Engine::Jit, mode, DEFAULT_BUDGET);
        let mut want = vec![[[0.0f32; 4]; 16]; inputs.len()];
        let mut got = vec![[[7.0f32; 4]; 16]; inputs.len()];
        let n_ref = reference
            .invoke(Invocation::batch(&u, &inputs, &mut want))
            .map(|o| o.instructions)
            .unwrap();
        let n_jit = auto
            .invoke(Invocation::batch(&u, &inputs, &mut got))
            .map(|o| o.instructions)
            .unwrap();
        assert_eq!(n_ref, n_jit, "{mode:?}: instruction counts");
        for (k, (w, g)) in want.iter().zip(&got).enumerate() {
            let wb: Vec<u32> = w.iter().flatten().map(|x| x.to_bits()).collect();
            let gb: Vec<u32> = g.iter().flatten().map(|x| x.to_bits()).collect();
            assert_eq!(wb, gb, "{mode:?}: vertex {k}");
        }
        // Single invocations agree too, registers included.
        let (rw, _) = run_vertex(&reference, &u, &inputs[3]).unwrap();
        let (rg, _) = run_vertex(&auto, &u, &inputs[3]).unwrap();
        assert_eq!(format!("{rw:?}"), format!("{rg:?}"), "{mode:?}");
    }
}

#[test]
fn input_mask_lists_the_inputs_the_program_reads() {
    let shader = Shader::new(add_program(), &EngineConfig::default()).unwrap();
    assert_eq!(shader.input_mask(), 0b11);
}

#[test]
fn output_mask_lists_written_outputs_and_masked_batches_write_those() {
    let mode = FloatMode::F24(Rounding::TowardZero);
    let shader = shader(&add_program(), Engine::Jit, mode, DEFAULT_BUDGET);
    assert_eq!(shader.output_mask(), 0b11);
    let mut u = Uniforms::default();
    u.set_float_f32(0, [0.5, -2.0, 3.0, 1.0], mode);
    let inputs = awkward_inputs(300);
    let mut want = vec![[[0.0f32; 4]; 16]; inputs.len()];
    shader
        .invoke(Invocation::batch(&u, &inputs, &mut want))
        .map(|o| o.instructions)
        .unwrap();
    // o0 only: o0 exact, o1 and the never-written registers untouched or their values.
    let sentinel = f32::from_bits(0x7FC0_4321);
    let mut got = vec![[[sentinel; 4]; 16]; inputs.len()];
    shader
        .invoke(Invocation::batch(&u, &inputs, &mut got).mask(0b01))
        .map(|o| o.instructions)
        .unwrap();
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(w[0].map(f32::to_bits), g[0].map(f32::to_bits), "vertex {k}");
        for o in 1..16 {
            for c in 0..4 {
                let (x, y) = (w[o][c].to_bits(), g[o][c].to_bits());
                assert!(x == y || y == sentinel.to_bits(), "vertex {k} o{o}.{c}");
            }
        }
    }
}

#[test]
fn code_cache_reuses_compiled_code() {
    let cache = CodeCache::new();
    let config = EngineConfig::default();
    let a = Shader::with_cache(add_program(), &config, &cache).unwrap();
    let b = Shader::with_cache(add_program(), &config, &cache).unwrap();
    if a.engine() != Engine::Interp {
        assert_eq!(cache.len(), 1);
        assert!(std::ptr::eq(a.compiled().unwrap(), b.compiled().unwrap()));
    }
    let f32_config = config.with_float_mode(FloatMode::F32);
    let c = Shader::with_cache(add_program(), &f32_config, &cache).unwrap();
    if c.engine() != Engine::Interp {
        assert_eq!(cache.len(), 2, "the float mode is part of the key");
    }
}

#[test]
fn jit_budget_errors_equal_the_interpreters() {
    // A LOOP over i0 = 255 iterations around a JMP back to itself never ends.
    let code = words(&[
        Instruction::Loop { i: 0, dest: 1 },
        Instruction::Nop,
        Instruction::JmpU {
            b: 0,
            dest: 0,
            invert: true,
        },
        Instruction::End,
    ]);
    let program = Program::new(code, vec![id_desc()], 0, ShaderKind::Vertex).unwrap();
    let mut u = Uniforms::default();
    u.set_int(0, [255, 0, 1, 0]);
    let budget = 5000;
    let run = |backend| {
        let shader = shader(&program, backend, FloatMode::default(), budget);
        run_vertex(&shader, &u, &[[0.0; 4]; 16]).map(|r| r.1)
    };
    let reference = run(Engine::Interp);
    assert!(
        matches!(
            reference,
            Err(Error::Exec { index: 0, error: ExecError::BudgetExhausted { budget: b, .. } })
                if b == budget
        ),
        "{reference:?}"
    );
    assert_eq!(run(Engine::Jit), reference);
}

/// A geometry program: r0 += c0 (persists across invocations), o0 = r0, emit; o1 = c[first]
fn gs_program() -> Program {
    let code = [
        add(DstReg::Temp(0), SrcReg::Const(0), SrcReg::Temp(0)),
        mov(DstReg::Output(0), SrcReg::Temp(0)),
        mov(DstReg::Output(1), SrcReg::Const(10)),
        mov(DstReg::Output(2), SrcReg::Const(11)),
        mov(DstReg::Output(3), SrcReg::Input(0)),
        Instruction::SetEmit {
            vtx: 0,
            primitive: false,
            winding: false,
        },
        Instruction::Emit,
        Instruction::End,
    ];
    program(ShaderKind::Geometry, &code)
}

#[test]
fn geometry_runner_keeps_registers_and_sets_b15() {
    let shader = interp(gs_program());
    let mut u = with_c0([1.0; 4]);
    let mut runner = GeometryRunner::default();
    let mut v = [[0.0f32; 4]; 16];
    assert!(!u.bool(15));
    for k in 1..=3 {
        v[0] = [k as f32; 4];
        runner
            .invoke(&shader, GsInputMode::Point, &mut u, GsInput::Point(&v))
            .unwrap();
        assert!(u.bool(15), "b15 is set after each invocation");
    }
    let (emitted, prims) = runner.state.take_output();
    assert!(prims.is_empty());
    let o0: Vec<f32> = emitted.iter().map(|e| e.outputs[0][0]).collect();
    assert_eq!(o0, [1.0, 2.0, 3.0], "r0 persists between invocations");
    let o3: Vec<f32> = emitted.iter().map(|e| e.outputs[3][0]).collect();
    assert_eq!(o3, [1.0, 2.0, 3.0], "point mode delivers the vertex in v0");
}

#[test]
fn geometry_variable_and_fixed_modes_fill_uniforms() {
    let shader = interp(gs_program());
    let rows = [[5.0f32; 4], [6.0; 4]];
    // One invocation on fresh uniforms with the two rows in `mode`.
    let fill = |mode| {
        let mut u = Uniforms::default();
        let mut runner = GeometryRunner::default();
        let input = GsInput::Uniforms {
            rows: &rows,
            count: 2,
        };
        runner.invoke(&shader, mode, &mut u, input).unwrap();
        (u, runner)
    };
    // Variable mode from c10: c10 = count, then the rows.
    let (u, mut runner) = fill(GsInputMode::Variable {
        first_uniform: 10,
        full_vertices: 1,
    });
    assert_eq!(u.float(10), [2.0; 4]);
    assert_eq!(u.float(11), [5.0; 4]);
    assert_eq!(u.float(12), [6.0; 4]);
    let (emitted, _) = runner.state.take_output();
    assert_eq!(emitted[0].outputs[1], [2.0; 4]);
    assert_eq!(emitted[0].outputs[2], [5.0; 4]);
    // Fixed mode from c10: rows start at c10.
    let (u, _) = fill(GsInputMode::Fixed {
        first_uniform: 10,
        vertices: 2,
    });
    assert_eq!(u.float(10), [5.0; 4]);
    assert_eq!(u.float(11), [6.0; 4]);
}

#[test]
fn shbin_constants_are_applied_and_bad_dvle_index_is_an_error() {
    let mut dvle = Dvle::new(ShaderKind::Vertex);
    dvle.constants = vec![
        Constant::FVec {
            reg: 95,
            value: [0x3F0000, 0x400000, 0, 0xBF0000],
        },
        Constant::IVec {
            reg: 2,
            value: [3, 1, 2, 0],
        },
        Constant::Bool {
            reg: 7,
            value: true,
        },
    ];
    let shbin = Shbin {
        code: add_program().code().to_vec(),
        opdescs: vec![id_desc()],
        dvles: vec![dvle.clone()],
        ..Shbin::default()
    };
    let (program, u) = program_from_shbin(&shbin, 0).unwrap();
    assert_eq!(program.entry(), 0);
    assert_eq!(u.float(95), [1.0, 2.0, 0.0, -1.0]);
    assert_eq!(u.int(2), [3, 1, 2, 0]);
    assert!(u.bool(7));
    let mut u2 = Uniforms::default();
    apply_constants(&dvle, &mut u2);
    assert_eq!(u2, u);
    assert!(matches!(
        program_from_shbin(&shbin, 1),
        Err(Error::NoSuchDvle { index: 1, count: 1 })
    ));
}

/// Geometry shaders on the JIT keep the same state across invocations as on the
/// interpreter: registers, output banks, the vertex buffer and b15.
#[test]
fn geometry_runner_on_the_jit_matches_the_interpreter() {
    let run = |backend| {
        let shader = shader(&gs_program(), backend, FloatMode::default(), DEFAULT_BUDGET);
        let mut u = with_c0([0.5; 4]);
        u.set_float_raw(10, [2.0; 4]);
        let mut runner = GeometryRunner::default();
        let mut v = [[0.0f32; 4]; 16];
        for k in 0..5 {
            v[0] = [k as f32 * 0.25; 4];
            runner
                .invoke(&shader, GsInputMode::Point, &mut u, GsInput::Point(&v))
                .unwrap();
        }
        format!("{:?} {:?}", runner.registers, runner.state)
    };
    assert_eq!(run(Engine::Jit), run(Engine::Interp));
}

/// The point-mode geometry-shader examples with their benchmark uniforms (`point_to_quad`,
/// `point_to_disc`).
fn geometry_examples() -> Vec<Workload> {
    let all: Vec<Workload> = Workload::examples()
        .unwrap()
        .into_iter()
        .filter(|w| {
            w.kind() == ShaderKind::Geometry
                && w.gs_mode == picajit::interp::pica::program::GsInputMode::Point
        })
        .collect();
    assert_eq!(all.len(), 2, "both point-mode geometry examples");
    all
}

/// `n` f32 input points: the workload's realistic ones, with every fifth point's position or
/// colour replaced by awkward values (specials, subnormals, values f24 conversion rounds).
fn gs_inputs(w: &Workload, n: usize) -> Vec<[[f32; 4]; 16]> {
    let awkward = awkward_inputs(n);
    let mut inputs = w.inputs(FloatMode::F32, n);
    for (k, v) in inputs.iter_mut().enumerate() {
        if k % 5 == 3 {
            v[k % 2] = awkward[k][k % 2];
        }
    }
    inputs
}

fn row_bits(rows: &[[f32; 4]]) -> Vec<u32> {
    rows.iter().flatten().map(|x| x.to_bits()).collect()
}

/// Everything of the registers, as bits.
fn registers_bits(r: &Registers) -> (Vec<u32>, [i32; 3], [u8; 2]) {
    let mut bits = row_bits(&r.input);
    bits.extend(row_bits(&r.temp));
    bits.extend(row_bits(&r.output));
    (bits, [r.a0[0], r.a0[1], r.al], r.cmp)
}

/// The geometry state as bits (plus its Debug form for the private replay slots).
fn geometry_bits(g: &GeometryState) -> (Vec<u32>, [u8; 3], usize, String) {
    let mut bits = row_bits(&g.other_bank);
    for slot in &g.slots {
        bits.extend(row_bits(slot));
    }
    (
        bits,
        [g.vertex_id, u8::from(g.primitive), u8::from(g.winding)],
        g.emitted.len(),
        format!("{g:?}"),
    )
}

/// Every vertex of an emit buffer: its kept rows as bits, and its flags.
fn emits(out: &EmitBuffer) -> Vec<(Vec<u32>, u8, bool, bool)> {
    (0..out.len())
        .map(|i| {
            let (rows, f) = out.vertex(i);
            (row_bits(rows), f.slot, f.primitive, f.winding)
        })
        .collect()
}

/// The JIT's `run_points` gives the interpreter backend's bits on both geometry examples:
/// every emitted vertex and its flags, the registers, the geometry state, b15 and the
/// instruction count, for batch sizes around the group size and the conversion chunk, in
/// every float mode, with several output masks (the registers the program writes, subsets
/// of them, none, and all sixteen), over consecutive calls on the same state.
#[test]
fn run_points_matches_the_interpreter_on_the_geometry_examples() {
    let sizes = [0usize, 1, 7, 8, 9, 17, 64, 300];
    let total: usize = sizes.iter().sum();
    for w in geometry_examples() {
        let inputs = gs_inputs(&w, total);
        for mode in MODES {
            let reference = shader(&w.program, Engine::Interp, mode, 1 << 20);
            let jit = shader(&w.program, Engine::Jit, mode, 1 << 20);
            let written = jit.output_mask();
            assert_eq!(written, 0b11, "{}: o0 and o1", w.name);
            for mask in [written, 0b01, 0b10, 0, 0xFFFF] {
                let what = format!("{} {mode:?} mask {mask:#x}", w.name);
                let run = |shader: &Shader| {
                    let mut u = w.uniforms(mode);
                    let mut regs = Registers::default();
                    let mut g = GeometryState::default();
                    let mut out = EmitBuffer::new(mask);
                    let mut infos: Vec<Outcome> = Vec::new();
                    let mut at = 0;
                    for &n in &sizes {
                        let info = shader
                            .invoke(Invocation::points(
                                &mut u,
                                &mut regs,
                                &mut g,
                                &inputs[at..at + n],
                                &mut out,
                            ))
                            .unwrap();
                        infos.push(info);
                        at += n;
                    }
                    (
                        emits(&out),
                        infos,
                        registers_bits(&regs),
                        geometry_bits(&g),
                        u.bools(),
                    )
                };
                let want = run(&reference);
                let groups = |s: &Shader| s.compiled().map_or(0, |c| c.batch_stats().groups);
                let groups_before = groups(&jit);
                let got = run(&jit);
                // With the registers the program writes, eight points per group where the JIT
                // can (so that the comparison covers the multi-vertex path).
                let lanes = jit
                    .compiled()
                    .is_some_and(|c| c.points_ineligibility().is_none());
                if lanes && mask == written {
                    assert!(
                        groups(&jit) > groups_before,
                        "{what}: no group of eight ran"
                    );
                }
                assert_eq!(want.0.len(), got.0.len(), "{what}: emitted vertices");
                for (k, (a, b)) in want.0.iter().zip(&got.0).enumerate() {
                    assert_eq!(a, b, "{what}: emitted vertex {k}");
                }
                assert_eq!(want.1, got.1, "{what}: instructions and emits per call");
                assert_eq!(want.2, got.2, "{what}: registers");
                assert_eq!(want.3, got.3, "{what}: geometry state");
                assert_eq!(want.4, got.4, "{what}: bool uniforms");
                let per_point = if w.name.contains("disc") { 34 } else { 4 };
                assert_eq!(want.0.len(), total * per_point, "{what}");
                assert!(want
                    .0
                    .iter()
                    .all(|v| v.0.len() == 4 * mask.count_ones() as usize));
            }
        }
    }
}

/// `GeometryRunner::invoke_points` leaves exactly the state that `invoke` per point leaves
/// (registers, both output banks, the vertex buffer, SETEMIT state, b15), and its buffer
/// holds the same vertices, records pending before the call first.
#[test]
fn invoke_points_carries_state_like_invoke_per_point() {
    for w in geometry_examples() {
        for backend in [Engine::Interp, Engine::Jit] {
            for mode in [FloatMode::F24(Rounding::TowardZero), FloatMode::F32] {
                let what = format!("{} {backend:?} {mode:?}", w.name);
                let shader = shader(&w.program, backend, mode, 1 << 20);
                let inputs = gs_inputs(&w, 45);
                let mask = shader.output_mask();

                // Reference: one `invoke` per point, draining after each.
                let mut u_ref = w.uniforms(mode);
                let mut ref_runner = GeometryRunner::default();
                let mut want = EmitBuffer::new(mask);
                for (k, v) in inputs.iter().enumerate() {
                    ref_runner
                        .invoke(&shader, GsInputMode::Point, &mut u_ref, GsInput::Point(v))
                        .unwrap();
                    // The first two points' vertices stay pending into the batch call.
                    if k >= 2 {
                        ref_runner.state.drain_into(&mut want);
                    }
                }

                let mut u = w.uniforms(mode);
                let mut runner = GeometryRunner::default();
                for v in &inputs[..2] {
                    runner
                        .invoke(&shader, GsInputMode::Point, &mut u, GsInput::Point(v))
                        .unwrap();
                }
                let pending = runner.state.emitted.len();
                assert!(pending > 0, "{what}");
                let mut got = EmitBuffer::new(mask);
                let a = runner
                    .invoke_points(&shader, &mut u, &inputs[2..20], &mut got)
                    .unwrap();
                let b = runner
                    .invoke_points(&shader, &mut u, &inputs[20..], &mut got)
                    .unwrap();
                assert!(runner.state.emitted.is_empty(), "{what}");
                assert_eq!(a.emitted, pending + 18 * (want.len() / 45), "{what}");
                assert_eq!(a.emitted + b.emitted, got.len(), "{what}");
                assert!(a.instructions > 0 && b.instructions > 0, "{what}");
                assert_eq!(emits(&got), emits(&want), "{what}: emitted vertices");
                assert_eq!(
                    registers_bits(&runner.registers),
                    registers_bits(&ref_runner.registers),
                    "{what}: registers"
                );
                assert_eq!(
                    geometry_bits(&runner.state),
                    geometry_bits(&ref_runner.state),
                    "{what}: geometry state"
                );
                assert_eq!(u, u_ref, "{what}: uniforms (b15)");
                // And primitives replay from the same slots afterwards.
                assert_eq!(
                    format!("{:?}", runner.state.take_output()),
                    format!("{:?}", ref_runner.state.take_output()),
                    "{what}"
                );
            }
        }
    }
}

/// A point that fails (budget exhausted) stops the batch at its index on every backend: the
/// vertices of the points before it and its own EMITs before the failure are in the buffer,
/// b15 is set, and the state is what `invoke` per point leaves.
#[test]
fn run_points_stops_at_the_failing_point() {
    // Emits v0, then spins forever when v0.x == 1.
    let source = ".gsh point c0\n\
                  .constf one(1.0, 1.0, 1.0, 1.0)\n\
                  .out o position\n\
                  .proc main\n\
                  \x20   setemit 0\n\
                  \x20   mov o, v0\n\
                  \x20   emit\n\
                  \x20   cmp one, eq, eq, v0\n\
                  spin:\n\
                  \x20   jmpc cmp.x, spin\n\
                  \x20   end\n\
                  .end\n";
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile {
        name: "spin.g.pica",
        text: source,
    }])
    .unwrap();
    let (program, constants) = program_from_shbin(&shbin, 0).unwrap();
    // Failing point 13 of 20: inside the second group of eight.
    let inputs: Vec<[[f32; 4]; 16]> = (0..20)
        .map(|k| {
            let mut v = [[0.0f32; 4]; 16];
            v[0] = [if k == 13 { 1.0 } else { k as f32 + 2.0 }, 0.5, 0.25, 1.0];
            v
        })
        .collect();
    let run = |backend| {
        let shader = shader(&program, backend, FloatMode::default(), 1000);
        let mut u = constants.clone();
        let mut runner = GeometryRunner::default();
        let mut out = EmitBuffer::new(0b1);
        let err = runner
            .invoke_points(&shader, &mut u, &inputs, &mut out)
            .unwrap_err();
        (
            err,
            emits(&out),
            registers_bits(&runner.registers),
            geometry_bits(&runner.state),
            u,
        )
    };
    let want = run(Engine::Interp);
    assert!(
        matches!(
            want.0,
            Error::Exec {
                index: 13,
                error: ExecError::BudgetExhausted { budget: 1000, .. }
            }
        ),
        "{:?}",
        want.0
    );
    assert_eq!(want.1.len(), 14, "13 points before it and its own EMIT");
    assert_eq!(want.1[13].0[0], 1.0f32.to_bits());
    assert!(
        want.4.bool(15),
        "b15 is set after the failing invocation too"
    );
    let got = run(Engine::Jit);
    assert_eq!(got.0, want.0);
    assert_eq!(got.1, want.1);
    assert_eq!(got.2, want.2);
    assert_eq!(got.3, want.3);
    assert_eq!(got.4, want.4);

    // The same with `invoke` per point: the failing point's state.
    let shader = shader(&program, Engine::Interp, FloatMode::default(), 1000);
    let mut u = constants.clone();
    let mut runner = GeometryRunner::default();
    let mut out = EmitBuffer::new(0b1);
    for v in &inputs[..14] {
        let _ = runner.invoke(&shader, GsInputMode::Point, &mut u, GsInput::Point(v));
        runner.state.drain_into(&mut out);
    }
    assert_eq!(emits(&out), want.1);
    assert_eq!(registers_bits(&runner.registers), want.2);
    assert_eq!(geometry_bits(&runner.state), want.3);
}
