//! The public engine API with a small instruction budget: programs from the structured case
//! format (`testkit/src/testgen/bytes.rs`) or from SHBIN bytes go through `Shader::new`, one
//! invocation and a batch (`Shader::invoke`), `GeometryRunner::invoke` and `invoke_points` on
//! the chosen backend and float mode. Every call
//! must return outputs or an error, within the budget, and agree with the same calls on the
//! interpreter backend.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picajit::interp::pica::exec::ExecError;
use picajit::interp::pica::float::FloatMode;
use picajit::interp::pica::program::{GsInputMode, Program, ShaderKind};
use picajit::interp::pica::state::{EmitBuffer, Registers, Uniforms};
use picajit::pica::engine::{
    program_from_shbin, EngineConfig, GeometryRunner, GsInput, Invocation, Outcome, Shader,
};
use picajit::pica::shbin::Shbin;
use picajit::{Engine, Error};
use picajit_fuzz::{assert_same_state, listing, nine_rows, reg_bits, Case, Rng, MODES};

const BACKENDS: [Engine; 4] = [Engine::Jit, Engine::Interp, Engine::X64, Engine::A64];

struct Run {
    config: EngineConfig,
    inputs: [[f32; 4]; 16],
    gs_mode: GsInputMode,
    rows: usize,
    count: u8,
}

fuzz_target!(|data: &[u8]| {
    let mut r = Rng::bytes(data);
    let opts = r.u8();
    let budget = r.u16() as u64 % 4096;
    let gs_bytes = [r.u8(), r.u8(), r.u8()];
    let mode = MODES[(opts >> 2 & 3) as usize % MODES.len()];
    let config = EngineConfig::default()
        .with_engine(BACKENDS[opts as usize & 3])
        .with_float_mode(mode)
        .with_budget(budget);
    let gs_mode = match gs_bytes[0] % 3 {
        0 => GsInputMode::Point,
        1 => GsInputMode::Variable {
            first_uniform: gs_bytes[1],
            full_vertices: gs_bytes[2],
        },
        _ => GsInputMode::Fixed {
            first_uniform: gs_bytes[1],
            vertices: gs_bytes[2],
        },
    };
    let run = |inputs, gs_mode| Run {
        config,
        inputs,
        gs_mode,
        rows: gs_bytes[2] as usize % 17,
        count: gs_bytes[1],
    };
    if opts & 0x10 != 0 {
        let Ok(shbin) = Shbin::parse(r.rest()) else {
            return;
        };
        // Inputs as an application would pass them: f32 attributes, any bits.
        let inputs = Case::decode(&[]).inputs(FloatMode::F32);
        for index in 0..shbin.dvles.len().min(4) {
            match program_from_shbin(&shbin, index) {
                Ok((program, uniforms)) => {
                    exercise(program, &uniforms, &run(inputs, shbin.dvles[index].gs_mode))
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    } else {
        let case = Case::decode(r.rest());
        match &case.program {
            Ok(program) => exercise(
                program.clone(),
                &case.uniforms(mode),
                &run(case.inputs(FloatMode::F32), gs_mode),
            ),
            Err(e) => assert!(!e.is_empty()),
        }
    }
});

/// A finished invocation stays within the budget; an exhausted budget is the configured one.
fn check_budget(result: &Result<Outcome, Error>, budget: u64, what: &str) {
    match result {
        Ok(info) => assert!(
            info.instructions <= budget,
            "{what}: {} instructions with a budget of {budget}",
            info.instructions
        ),
        Err(Error::Exec {
            error: ExecError::BudgetExhausted { budget: b, .. },
            ..
        }) => {
            assert_eq!(*b, budget, "{what}: wrong budget reported")
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fn exercise(program: Program, uniforms: &Uniforms, run: &Run) {
    let config = run.config;
    // 0 stands for the default budget.
    let budget = picajit::budget_or_default(config.budget);
    let kind = program.kind();
    let text = listing(&program);
    let shader = match Shader::new(program.clone(), &config) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    if config.engine == Engine::Interp {
        assert_eq!(shader.engine(), Engine::Interp);
    }
    if let Some(reason) = shader.fallback_reason() {
        assert!(!reason.is_empty());
    }
    let reference_config = config.with_engine(Engine::Interp);
    let reference = Shader::new(program, &reference_config)
        .unwrap_or_else(|e| panic!("the interpreter refused a valid program: {e}\n{text}"));
    let ctx = || format!("{config:?} on {}\n{text}", shader.engine());
    match kind {
        ShaderKind::Vertex => {
            let vertex = |shader: &Shader| {
                let mut regs = Registers::default();
                shader
                    .invoke(Invocation::one(uniforms, &mut regs).input(&run.inputs))
                    .map(|info| (regs, info))
            };
            let a = vertex(&shader);
            let b = vertex(&reference);
            check_budget(
                &a.as_ref().map(|x| x.1).map_err(|e| e.clone()),
                budget,
                "run_vertex",
            );
            match (&a, &b) {
                (Ok((ra, ia)), Ok((rb, ib))) => {
                    assert_eq!(ia, ib, "run_vertex instruction counts\n{}", ctx());
                    assert!(
                        reg_bits(ra) == reg_bits(rb),
                        "run_vertex registers\n{}",
                        ctx()
                    );
                }
                (Err(ea), Err(eb)) => assert_eq!(ea, eb, "run_vertex errors\n{}", ctx()),
                _ => panic!("run_vertex: {a:?} vs the interpreter's {b:?}\n{}", ctx()),
            }
            let batch: Vec<[[f32; 4]; 16]> = [0, 3, 7]
                .iter()
                .map(|&k| std::array::from_fn(|i| run.inputs[(i + k) % 16]))
                .collect();
            let mut out_a = vec![[[0.0f32; 4]; 16]; batch.len()];
            let mut out_b = out_a.clone();
            let ra = shader
                .invoke(Invocation::batch(uniforms, &batch, &mut out_a))
                .map(|o| o.instructions);
            let rb = reference
                .invoke(Invocation::batch(uniforms, &batch, &mut out_b))
                .map(|o| o.instructions);
            assert_eq!(ra, rb, "run_batch results\n{}", ctx());
            let valid = match &ra {
                Ok(total) => {
                    assert!(
                        *total <= budget * batch.len() as u64,
                        "run_batch over budget"
                    );
                    batch.len()
                }
                Err(Error::Exec { index, .. }) => *index,
                Err(e) => panic!("run_batch: {e}\n{}", ctx()),
            };
            for k in 0..valid {
                let bits = |o: &[[f32; 4]; 16]| {
                    o.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>()
                };
                assert!(
                    bits(&out_a[k]) == bits(&out_b[k]),
                    "run_batch vertex {k}\n{}",
                    ctx()
                );
            }
        }
        ShaderKind::Geometry => {
            let mut ga = GeometryRunner::default();
            let mut gb = GeometryRunner::default();
            let mut ua = uniforms.clone();
            let mut ub = uniforms.clone();
            let rows: Vec<[f32; 4]> = run.inputs[..run.rows].to_vec();
            for round in 0..3 {
                let input = if round == 0 || run.gs_mode == GsInputMode::Point {
                    GsInput::Point(&run.inputs)
                } else {
                    GsInput::Uniforms {
                        rows: &rows,
                        count: run.count,
                    }
                };
                let a = ga.invoke(&shader, run.gs_mode, &mut ua, input);
                let b = gb.invoke(&reference, run.gs_mode, &mut ub, input);
                check_budget(&a, budget, "GeometryRunner::invoke");
                assert_eq!(a, b, "invocation {round}\n{}", ctx());
                let what = format!("invocation {round}");
                assert_same_state(
                    &what,
                    (&gb.registers, &gb.state),
                    (&ga.registers, &ga.state),
                    &ctx,
                );
                assert!(ua == ub || format!("{ua:?}") == format!("{ub:?}"));
                if a.is_err() {
                    break;
                }
            }
            let (ea, pa) = ga.state.take_output();
            let (eb, pb) = gb.state.take_output();
            assert_eq!((ea.len(), pa.len()), (eb.len(), pb.len()), "{}", ctx());
            if run.gs_mode == GsInputMode::Point {
                // A nine-point draw from the state the invocations left (one group of
                // eight on the multi-vertex code where the program allows it).
                let points = nine_rows(&run.inputs);
                let mask = shader.output_mask();
                let (mut oa, mut ob) = (EmitBuffer::new(mask), EmitBuffer::new(mask));
                let a = ga.invoke_points(&shader, &mut ua, &points, &mut oa);
                let b = gb.invoke_points(&reference, &mut ub, &points, &mut ob);
                assert_eq!(a, b, "invoke_points\n{}", ctx());
                if let Ok(info) = &a {
                    assert!(info.instructions <= budget * points.len() as u64);
                }
                let rows = |o: &EmitBuffer| {
                    o.rows
                        .iter()
                        .flatten()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>()
                };
                assert!(
                    rows(&oa) == rows(&ob) && oa.flags == ob.flags,
                    "invoke_points: emitted vertices\n{}",
                    ctx()
                );
                let want = (&gb.registers, &gb.state);
                assert_same_state("invoke_points", want, (&ga.registers, &ga.state), &ctx);
                assert_eq!(ua.bools(), ub.bools(), "invoke_points: b15\n{}", ctx());
            }
        }
    }
}
