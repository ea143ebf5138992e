//! Small program builder shared by the interpreter tests.
#![allow(dead_code)]

use picajit_interp::pica::exec::{ExecError, Interpreter, RunInfo};
use picajit_interp::pica::float::FloatMode;
use picajit_interp::pica::isa::*;
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::{GeometryState, Registers, Uniforms};

pub const NOP: Instruction = Instruction::Nop;
pub const END: Instruction = Instruction::End;

/// Descriptor 0 in every test program: write xyzw, identity swizzles, no negation.
pub fn identity_desc() -> u64 {
    OperandDesc::new(WriteMask::XYZW, [false; 3], [Swizzle::IDENTITY; 3]).0
}

/// r`k` += c0 (c0 is (1,1,1,1) in [`uniforms`]): counts executions of its address.
pub fn inc(k: u8) -> Instruction {
    Instruction::Binary {
        op: Opcode::Add,
        dst: DstReg::Temp(k),
        src1: SrcReg::Const(0),
        src2: SrcReg::Temp(k),
        rel: RelIndex::None,
        desc: 0,
    }
}

/// A program from instructions placed at addresses; gaps are NOPs.
pub fn program_at(placed: &[(usize, Instruction)], descs: &[u64], kind: ShaderKind) -> Program {
    let len = placed.iter().map(|(a, _)| a + 1).max().unwrap_or(1);
    let mut code = vec![encode(&NOP).unwrap(); len];
    for (a, i) in placed {
        code[*a] = encode(i).unwrap();
    }
    let mut d = vec![identity_desc()];
    d.extend_from_slice(descs);
    Program::new(code, d, 0, kind).unwrap()
}

/// A program from a contiguous instruction list starting at 0.
pub fn program(code: &[Instruction]) -> Program {
    let placed: Vec<_> = code.iter().copied().enumerate().collect();
    program_at(&placed, &[], ShaderKind::Vertex)
}

/// Uniforms with c0 = (1,1,1,1) and b0 = true.
pub fn uniforms() -> Uniforms {
    let mut u = Uniforms::default();
    u.set_float_raw(0, [1.0; 4]);
    u.set_bool(0, true);
    u
}

pub fn run_with(p: &Program, u: &Uniforms, budget: u64) -> Result<(Registers, RunInfo), ExecError> {
    let interp = Interpreter::new(p, FloatMode::default());
    let mut regs = Registers::default();
    let info = interp.run(&mut regs, u, None, budget)?;
    Ok((regs, info))
}

pub fn run(p: &Program, u: &Uniforms) -> Registers {
    run_with(p, u, 100_000).expect("program runs").0
}

/// How many times the `inc(k)` instructions ran.
pub fn count(regs: &Registers, k: usize) -> f32 {
    regs.temp[k][0]
}

pub fn run_gs(p: &Program, u: &Uniforms, regs: &mut Registers, gs: &mut GeometryState) {
    let interp = Interpreter::new(p, FloatMode::default());
    interp
        .run(regs, u, Some(gs), 100_000)
        .expect("geometry program runs");
}
