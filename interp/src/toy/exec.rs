//! The TOY reference interpreter: one instruction at a time from index 0 until HALT, the end
//! of the program or the step budget.
//!
//! The budget counts executed instructions (HALT included): before each instruction, a run
//! that has executed `budget` of them stops with [`Status::Budget`]. Reaching the end of the
//! program (running past the last instruction, or a branch to the program's length) needs no
//! step, so it ends the run even when the budget is spent.

use super::isa::{Instr, Program, REGS};

/// The register file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub regs: [u32; REGS],
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// HALT at `pc` executed.
    Halted { pc: u32 },
    /// Execution reached the end of the program.
    End,
    /// The budget ran out before the instruction at `pc`.
    Budget { pc: u32 },
}

/// The outcome of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunOutcome {
    pub status: Status,
    /// Executed instructions.
    pub steps: u64,
}

/// Where a run stands between two instructions: what an engine that stops in the middle of a
/// run hands to the interpreter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    /// The next instruction's index.
    pub pc: u32,
    /// Instructions executed so far.
    pub steps: u64,
}

/// Runs `program` from its first instruction.
pub fn run(program: &Program, state: &mut State, budget: u64) -> RunOutcome {
    resume(program, state, Cursor::default(), budget)
}

/// Goes on with a run from `cur` until it ends.
pub fn resume(program: &Program, state: &mut State, mut cur: Cursor, budget: u64) -> RunOutcome {
    loop {
        if let Some(out) = step(program, state, &mut cur, budget) {
            return out;
        }
    }
}

/// Executes the instruction at `cur.pc`, or ends the run: `Some` when the run is over.
pub fn step(
    program: &Program,
    state: &mut State,
    cur: &mut Cursor,
    budget: u64,
) -> Option<RunOutcome> {
    let Some(&instr) = program.instrs().get(cur.pc as usize) else {
        return Some(RunOutcome {
            status: Status::End,
            steps: cur.steps,
        });
    };
    if cur.steps >= budget {
        return Some(RunOutcome {
            status: Status::Budget { pc: cur.pc },
            steps: cur.steps,
        });
    }
    cur.steps += 1;
    let r = &mut state.regs;
    let next = cur.pc + 1;
    cur.pc = match instr {
        Instr::Li { rd, imm } => {
            r[rd.index()] = imm;
            next
        }
        Instr::Alu { op, rd, ra, rb } => {
            r[rd.index()] = op.apply(r[ra.index()], r[rb.index()]);
            next
        }
        Instr::Shift { op, rd, ra, n } => {
            r[rd.index()] = op.apply(r[ra.index()], n);
            next
        }
        Instr::Branch { cond, ra, target } => {
            if cond.holds(r[ra.index()]) {
                target
            } else {
                next
            }
        }
        Instr::Loop { ra, target } => {
            let v = r[ra.index()].wrapping_sub(1);
            r[ra.index()] = v;
            if v != 0 {
                target
            } else {
                next
            }
        }
        Instr::Jmp { target } => target,
        Instr::Halt => {
            return Some(RunOutcome {
                status: Status::Halted { pc: cur.pc },
                steps: cur.steps,
            })
        }
    };
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::isa::{AluOp, Cond, Reg, ShiftOp};

    fn r(n: u8) -> Reg {
        Reg::new(n).unwrap()
    }

    fn prog(instrs: Vec<Instr>) -> Program {
        Program::new(instrs).unwrap()
    }

    fn outcome(status: Status, steps: u64) -> RunOutcome {
        RunOutcome { status, steps }
    }

    /// `r1 = n; do { r2 = r2 OP r1 } while (--r1 != 0)`, then the instructions of `tail`.
    fn counted_loop(n: u32, op: AluOp, tail: &[Instr]) -> Program {
        let mut instrs = vec![
            Instr::Li { rd: r(1), imm: n },
            Instr::Alu {
                op,
                rd: r(2),
                ra: r(2),
                rb: r(1),
            },
            Instr::Loop {
                ra: r(1),
                target: 1,
            },
        ];
        instrs.extend_from_slice(tail);
        prog(instrs)
    }

    #[test]
    fn straight_line_arithmetic() {
        let p = prog(vec![
            Instr::Li { rd: r(1), imm: 7 },
            Instr::Li {
                rd: r(2),
                imm: 0xFFFF_FFFD,
            },
            Instr::Alu {
                op: AluOp::Add,
                rd: r(3),
                ra: r(1),
                rb: r(2),
            },
            Instr::Alu {
                op: AluOp::Mul,
                rd: r(4),
                ra: r(1),
                rb: r(2),
            },
            Instr::Shift {
                op: ShiftOp::Sar,
                rd: r(5),
                ra: r(2),
                n: 1,
            },
            Instr::Shift {
                op: ShiftOp::Shr,
                rd: r(6),
                ra: r(2),
                n: 28,
            },
        ]);
        let mut s = State::default();
        let out = run(&p, &mut s, 100);
        assert_eq!(out, outcome(Status::End, 6));
        assert_eq!(
            &s.regs[1..7],
            &[7, 0xFFFF_FFFD, 4, 0xFFFF_FFEB, 0xFFFF_FFFE, 0xF]
        );
    }

    #[test]
    fn counted_loop_runs_its_body_n_times() {
        let p = counted_loop(5, AluOp::Add, &[Instr::Halt]);
        let mut s = State::default();
        let out = run(&p, &mut s, 1000);
        assert_eq!(out, outcome(Status::Halted { pc: 3 }, 1 + 5 * 2 + 1));
        assert_eq!((s.regs[1], s.regs[2]), (0, 15));
    }

    #[test]
    fn branches_take_their_condition() {
        for (v, cond, taken) in [
            (0, Cond::Zero, true),
            (3, Cond::Zero, false),
            (0, Cond::NonZero, false),
            (3, Cond::NonZero, true),
        ] {
            let p = prog(vec![
                Instr::Branch {
                    cond,
                    ra: r(0),
                    target: 2,
                },
                Instr::Li { rd: r(1), imm: 1 },
                Instr::Li { rd: r(2), imm: 2 },
            ]);
            let mut s = State::default();
            s.regs[0] = v;
            let out = run(&p, &mut s, 10);
            assert_eq!(out.steps, if taken { 2 } else { 3 });
            assert_eq!(s.regs[1], u32::from(!taken));
        }
    }

    #[test]
    fn the_budget_stops_a_runaway_loop() {
        let p = prog(vec![
            Instr::Li { rd: r(0), imm: 1 },
            Instr::Jmp { target: 1 },
        ]);
        let mut s = State::default();
        let out = run(&p, &mut s, 1000);
        assert_eq!(out, outcome(Status::Budget { pc: 1 }, 1000));
        // a LOOP from 0 counts down through 2^32 values
        let p = prog(vec![Instr::Loop {
            ra: r(3),
            target: 0,
        }]);
        let mut s = State::default();
        let out = run(&p, &mut s, 10);
        assert_eq!(out, outcome(Status::Budget { pc: 0 }, 10));
        assert_eq!(s.regs[3], 0u32.wrapping_sub(10));
    }

    #[test]
    fn the_end_needs_no_budget() {
        let p = prog(vec![Instr::Jmp { target: 1 }]);
        let mut s = State::default();
        assert_eq!(run(&p, &mut s, 1), outcome(Status::End, 1));
        assert_eq!(run(&p, &mut s, 0), outcome(Status::Budget { pc: 0 }, 0));
        assert_eq!(run(&prog(vec![]), &mut s, 0), outcome(Status::End, 0));
        // HALT takes a step
        let halt = prog(vec![Instr::Halt]);
        assert_eq!(run(&halt, &mut s, 0).status, Status::Budget { pc: 0 });
        assert_eq!(run(&halt, &mut s, 1), outcome(Status::Halted { pc: 0 }, 1));
    }

    #[test]
    fn resuming_continues_the_same_run() {
        let p = counted_loop(100, AluOp::Xor, &[]);
        let mut whole = State::default();
        let want = run(&p, &mut whole, 150);
        let mut s = State::default();
        let first = run(&p, &mut s, 37);
        let Status::Budget { pc } = first.status else {
            panic!("{first:?}")
        };
        let got = resume(
            &p,
            &mut s,
            Cursor {
                pc,
                steps: first.steps,
            },
            150,
        );
        assert_eq!((got, s), (want, whole));
    }
}
