//! The JIT facade's one invocation type (`picajit_jit::Invocation`) and one error type
//! (`picajit_jit::Error`), on every backend whose code runs here (x86-64 natively, AArch64
//! under unicorn): a failing vertex of a batch is reported with its index and the
//! interpreter's error, the vertices before it are finished, a single invocation fails as the
//! interpreter does, a compiled-only run reports the raw stop with the registers untouched,
//! and options a kind of invocation does not take are refused rather than ignored.

use picajit::interp::pica::exec::{ExecError, Interpreter};
use picajit::interp::pica::float::FloatMode;
use picajit::interp::pica::isa::{
    encode, CmpOp, CondOp, Condition, DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg,
    Swizzle, WriteMask,
};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms, UnitState};
use picajit_jit::{compile, Backend, CompiledShader, Error, HostFeatures, Invocation, JitExit};

type Bank = [[f32; 4]; 16];

/// `cmp c0, gt, gt, v0` then a JMPC on cmp.x to itself: a vertex whose v0.x is above c0.x
/// (0) spins until the budget runs out; the others copy v0 to o0.
fn spins_on_positive_x() -> Program {
    let code = [
        Instruction::Cmp {
            src1: SrcReg::Const(0),
            src2: SrcReg::Input(0),
            rel: RelIndex::None,
            x: CmpOp::Lt,
            y: CmpOp::Lt,
            desc: 0,
        },
        Instruction::JmpC {
            cond: Condition {
                op: CondOp::X,
                ref_x: true,
                ref_y: false,
            },
            dest: 1,
        },
        Instruction::Unary {
            op: Opcode::Mov,
            dst: DstReg::Output(0),
            src: SrcReg::Input(0),
            rel: RelIndex::None,
            desc: 0,
        },
        Instruction::End,
    ]
    .iter()
    .map(|i| encode(i).expect("encodable"))
    .collect();
    let desc = OperandDesc::new(WriteMask(0xF), [false; 3], [Swizzle::IDENTITY; 3]).0;
    Program::new(code, vec![desc], 0, ShaderKind::Vertex).expect("valid program")
}

fn shaders(p: &Program) -> Vec<CompiledShader> {
    [Backend::X64, Backend::A64]
        .into_iter()
        .filter_map(|b| {
            let features = if Backend::host() == Some(b) {
                HostFeatures::detect()
            } else {
                HostFeatures::NEON
            };
            compile(p, FloatMode::default(), b, features).ok()
        })
        .filter(|s| s.is_executable())
        .collect()
}

fn vertex(x: f32) -> Bank {
    let mut v = [[0.0; 4]; 16];
    v[0] = [x, 2.0, 3.0, 4.0];
    v
}

#[test]
fn a_failing_vertex_is_reported_with_its_index_and_the_earlier_ones_finish() {
    let p = spins_on_positive_x();
    let u = Uniforms::default();
    let budget = 200;
    // Vertex 9 spins: the first group of eight finishes, the second stops at its second row.
    let inputs: Vec<Bank> = (0..12)
        .map(|k| vertex(if k == 9 { 1.0 } else { -(k as f32) }))
        .collect();
    let mut want = Registers::default();
    want.input = inputs[9];
    let expected = Interpreter::new(&p, FloatMode::default())
        .run(&mut want, &u, None, budget)
        .unwrap_err();
    assert!(matches!(expected, ExecError::BudgetExhausted { .. }));
    let shaders = shaders(&p);
    assert!(!shaders.is_empty(), "no backend runs here");
    for s in &shaders {
        for start in [None, Some(UnitState::default())] {
            let mut out = vec![[[f32::NAN; 4]; 16]; inputs.len()];
            let mut inv = Invocation::batch(&u, &inputs, &mut out).budget(budget);
            if let Some(st) = &start {
                inv = inv.from_state(st);
            }
            let r = s.invoke(inv);
            assert_eq!(
                r,
                Err(Error::Exec {
                    index: 9,
                    error: expected.clone()
                }),
                "{} from state {}",
                s.backend(),
                start.is_some()
            );
            for (k, row) in out.iter().enumerate().take(9) {
                assert_eq!(row[0], inputs[k][0], "{} vertex {k}", s.backend());
            }
        }
    }
}

/// `f` on [`spins_on_positive_x`] compiled for each backend whose code runs here, with default
/// uniforms.
fn on_each_spinning_shader(f: impl Fn(&Program, &Uniforms, &CompiledShader)) {
    let p = spins_on_positive_x();
    let u = Uniforms::default();
    for s in shaders(&p) {
        f(&p, &u, &s);
    }
}

/// Registers with v0 = [`vertex`]`(x)`.
fn registers(x: f32) -> Registers {
    let mut r = Registers::default();
    r.input = vertex(x);
    r
}

#[test]
fn a_single_invocation_fails_as_the_interpreter_does() {
    on_each_spinning_shader(|p, u, s| {
        let mut r = registers(1.0);
        let mut want = r.clone();
        let expected = Interpreter::new(p, FloatMode::default()).run(&mut want, u, None, 50);
        let got = s.invoke(Invocation::one(u, &mut r).budget(50));
        assert_eq!(
            got,
            Err(Error::Exec {
                index: 0,
                error: expected.unwrap_err()
            })
        );
        // Finished: the interpreter's instruction count and registers.
        let mut r = registers(-1.0);
        let mut want = r.clone();
        let n = Interpreter::new(p, FloatMode::default())
            .run(&mut want, u, None, 50)
            .unwrap()
            .instructions;
        let got = s.invoke(Invocation::one(u, &mut r).budget(50)).unwrap();
        assert_eq!((got.instructions, got.deopts), (n, 0));
        assert_eq!(
            r.output[0].map(f32::to_bits),
            want.output[0].map(f32::to_bits)
        );
    });
}

#[test]
fn a_compiled_only_run_reports_the_stop_and_leaves_the_registers() {
    on_each_spinning_shader(|_, u, s| {
        let mut r = registers(1.0);
        r.temp[3] = [5.0; 4];
        let before = r.clone();
        let got = s.invoke(Invocation::one(u, &mut r).budget(40).compiled_only());
        assert_eq!(got, Err(Error::Stopped(JitExit::Budget)), "{}", s.backend());
        assert_eq!(format!("{r:?}"), format!("{before:?}"));
    });
}

#[test]
fn options_an_invocation_does_not_take_are_refused() {
    let p = spins_on_positive_x();
    let mut u = Uniforms::default();
    let start = UnitState::default();
    for s in shaders(&p) {
        let mut r = Registers::default();
        let got = s.invoke(Invocation::one(&u, &mut r).mask(1));
        assert!(matches!(got, Err(Error::Invalid(_))), "{got:?}");
        let got = s.invoke(Invocation::one(&u, &mut r).from_state(&start));
        assert!(matches!(got, Err(Error::Invalid(_))), "{got:?}");
        let inputs = [vertex(-1.0)];
        let mut out = [[[0.0; 4]; 16]];
        let mut gs = GeometryState::default();
        let got = s.invoke(Invocation::batch(&u, &inputs, &mut out).geometry(Some(&mut gs)));
        assert!(matches!(got, Err(Error::Invalid(_))), "{got:?}");
        let got = s.invoke(Invocation::batch(&u, &inputs, &mut out).compiled_only());
        assert!(matches!(got, Err(Error::Invalid(_))), "{got:?}");
        let mut eb = EmitBuffer::new(1);
        let got = s.invoke(Invocation::points(&mut u, &mut r, &mut gs, &inputs, &mut eb).mask(1));
        assert!(matches!(got, Err(Error::Invalid(_))), "{got:?}");
        // Refused before anything ran: the output row is untouched.
        assert_eq!(out[0][0], [0.0; 4]);
    }
}
