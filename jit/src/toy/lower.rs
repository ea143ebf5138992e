//! TOY lowering, written once over the host layer's integer macro-assembler
//! (`crate::host::int::IntMasm`): both hosts run the same sequence of calls.
//!
//! Guest registers live in the context block (`super::ctx`); each instruction loads its
//! operands into scratch registers, computes and stores its result. Code is emitted per
//! block (see [`blocks`]); each block first tests the budget for all of its instructions and
//! leaves to the host ([`EXIT_BUDGET`]) when they would not all run, then adds them to the
//! step count. Branches jump straight to their target block, so loops run without leaving
//! the code.

use super::ctx::{reg, BUDGET, EXIT_BUDGET, EXIT_END, EXIT_HALTED, PC, STEPS};
use crate::error::Error;
use crate::host::int::RegImm::{I, R};
use crate::host::int::Size::{S32, S64};
use crate::host::int::{leaf, Alu, Cond, IntMasm, Shift};
use crate::host::Backend;
use picajit_interp::toy::{AluOp, Cond as ToyCond, Instr, Program, ShiftOp};
use std::collections::BTreeSet;
use std::ops::Range;

/// The program's blocks, in order: a block starts at index 0, at a branch target and after
/// a branch or HALT, and ends before the next start. Only a block's last instruction may
/// leave it other than to the next one.
pub fn blocks(program: &Program) -> Vec<Range<u32>> {
    let len = program.len() as u32;
    let mut starts = BTreeSet::from([0]);
    for (i, instr) in program.instrs().iter().enumerate() {
        starts.extend(instr.target());
        if instr.ends_block() {
            starts.insert(i as u32 + 1);
        }
    }
    let starts: Vec<u32> = starts.into_iter().filter(|&s| s < len).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| s..starts.get(k + 1).copied().unwrap_or(len))
        .collect()
}

/// Machine code for `program` on `backend`: an `fn(*mut ToyCtx) -> u32` built as a leaf
/// function of the host layer (`crate::host::int::leaf`), so the lowering names no host
/// register.
pub fn generate(p: &Program, backend: Backend) -> Result<Vec<u8>, Error> {
    struct Body<'a>(&'a Program);
    impl leaf::Body for Body<'_> {
        fn emit<M: IntMasm>(self, m: &mut M, r: &leaf::Regs<M::Reg>, exit: M::Label) {
            program(m, r, self.0, exit);
        }
    }
    let (mut bytes, len) = leaf::function(backend, Body(p))
        .map_err(|e| Error::Internal(format!("{backend} assembly: {e}")))?;
    // no constants: what follows the code is the pool's alignment padding
    bytes.truncate(len);
    Ok(bytes)
}

/// Emits `program` as the body of a function whose context pointer is in `r.ctx`: every exit
/// puts its code in `r.status` and jumps to `epilogue`, which the caller binds and emits.
fn program<M: IntMasm>(m: &mut M, r: &leaf::Regs<M::Reg>, program: &Program, epilogue: M::Label) {
    let len = program.len();
    let labels: Vec<M::Label> = (0..=len).map(|_| m.label()).collect();
    let blocks = blocks(program);
    let mut budget_exits = Vec::with_capacity(blocks.len());
    let [t0, t1, ..] = r.scratch;
    let exit = |m: &mut M, kind: u32| {
        m.mov_imm(r.status, i64::from(kind));
        m.jump(epilogue);
    };
    for block in &blocks {
        m.bind(labels[block.start as usize]);
        // Enter the block only if all of it runs: budget - steps >= n (steps never exceeds
        // the budget at a block's start, so the difference does not wrap).
        let n = i64::from(block.end - block.start);
        let out = m.label();
        budget_exits.push((out, block.start));
        m.load(S64, t0, r.ctx, STEPS);
        m.load(S64, t1, r.ctx, BUDGET);
        m.alu(Alu::Sub, S64, t1, t1, R(t0));
        m.branch(Cond::Lo, S64, t1, I(n), out);
        m.alu(Alu::Add, S64, t0, t0, I(n));
        m.store(S64, r.ctx, STEPS, t0);
        for pc in block.clone() {
            let at = |i: u32| labels[i as usize];
            match program.instrs()[pc as usize] {
                Instr::Li { rd, imm } => m.store_imm(S32, r.ctx, reg(rd.index()), i64::from(imm)),
                Instr::Alu { op, rd, ra, rb } => {
                    let op = match op {
                        AluOp::Add => Alu::Add,
                        AluOp::Sub => Alu::Sub,
                        AluOp::And => Alu::And,
                        AluOp::Or => Alu::Or,
                        AluOp::Xor => Alu::Xor,
                        AluOp::Mul => Alu::Mul,
                    };
                    m.load(S32, t0, r.ctx, reg(ra.index()));
                    m.load(S32, t1, r.ctx, reg(rb.index()));
                    m.alu(op, S32, t0, t0, R(t1));
                    m.store(S32, r.ctx, reg(rd.index()), t0);
                }
                Instr::Shift { op, rd, ra, n } => {
                    let op = match op {
                        ShiftOp::Shl => Shift::Shl,
                        ShiftOp::Shr => Shift::Shr,
                        ShiftOp::Sar => Shift::Sar,
                    };
                    m.load(S32, t0, r.ctx, reg(ra.index()));
                    m.shift(op, S32, t0, t0, u32::from(n));
                    m.store(S32, r.ctx, reg(rd.index()), t0);
                }
                Instr::Branch { cond, ra, target } => {
                    let c = match cond {
                        ToyCond::Zero => Cond::Eq,
                        ToyCond::NonZero => Cond::Ne,
                    };
                    m.load(S32, t0, r.ctx, reg(ra.index()));
                    m.branch(c, S32, t0, I(0), at(target));
                }
                Instr::Loop { ra, target } => {
                    m.load(S32, t0, r.ctx, reg(ra.index()));
                    m.alu(Alu::Sub, S32, t0, t0, I(1));
                    m.store(S32, r.ctx, reg(ra.index()), t0);
                    m.branch(Cond::Ne, S32, t0, I(0), at(target));
                }
                Instr::Jmp { target } => m.jump(at(target)),
                Instr::Halt => {
                    m.store_imm(S32, r.ctx, PC, i64::from(pc));
                    exit(m, EXIT_HALTED);
                }
            }
        }
        // a block that does not end in a transfer falls into the next one, or into the end
    }
    m.bind(labels[len]);
    exit(m, EXIT_END);
    for (out, start) in budget_exits {
        m.bind(out);
        m.store_imm(S32, r.ctx, PC, i64::from(start));
        exit(m, EXIT_BUDGET);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use picajit_interp::toy::Reg;

    #[test]
    fn blocks_split_at_targets_and_transfers() {
        let r0 = Reg::new(0).unwrap();
        let li = Instr::Li { rd: r0, imm: 1 };
        let p = Program::new(vec![
            li,
            li,
            Instr::Loop { ra: r0, target: 1 },
            li,
            Instr::Halt,
            li,
            Instr::Jmp { target: 7 },
        ])
        .unwrap();
        assert_eq!(blocks(&p), vec![0..1, 1..3, 3..5, 5..7]);
        assert_eq!(blocks(&Program::default()), vec![]);
    }
}
