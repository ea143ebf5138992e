//! Control flow of the reference interpreter: each special case of seed 000's "Control
//! Flow" section, and the documented choices for what the hardware leaves open.

mod common;
use common::*;
use picajit_interp::pica::exec::ExecError;
use picajit_interp::pica::isa::*;
use picajit_interp::pica::program::ShaderKind;

fn call(dest: u16, num: u8) -> Instruction {
    Instruction::Call { dest, num }
}

fn ifu(dest: u16, num: u8) -> Instruction {
    Instruction::IfU { b: 0, dest, num }
}

fn vs(placed: &[(usize, Instruction)]) -> picajit_interp::pica::program::Program {
    program_at(placed, &[], ShaderKind::Vertex)
}

#[test]
fn call_returns_after_num_words() {
    let p = vs(&[
        (0, call(3, 2)),
        (1, inc(1)),
        (2, END),
        (3, inc(2)),
        (4, inc(3)),
    ]);
    let (regs, info) = run_with(&p, &uniforms(), 100).unwrap();
    assert_eq!(
        [count(&regs, 1), count(&regs, 2), count(&regs, 3)],
        [1.0, 1.0, 1.0]
    );
    assert_eq!(info.instructions, 5);
}

#[test]
fn call_stack_overflow_drops_the_oldest_frame() {
    // main calls P1, P1 calls P2 ... P4 calls P5: five frames on a four-deep ring.
    let mut placed = vec![
        (0, call(10, 3)),
        (1, inc(0)),
        (2, END),
        (13, inc(6)),
        (14, END),
    ];
    for k in 1..=4u16 {
        let base = 10 * k as usize;
        placed.push((base, call(10 * (k + 1), 3)));
        placed.push((base + 1, inc(k as u8)));
    }
    placed.push((50, inc(5)));
    placed.push((52, NOP));
    let regs = run(&vs(&placed), &uniforms());
    for k in 1..=5 {
        assert_eq!(count(&regs, k), 1.0, "procedure {k} finished");
    }
    // P1's return frame was dropped: after P1 ends execution falls through to 13.
    assert_eq!(count(&regs, 0), 0.0);
    assert_eq!(count(&regs, 6), 1.0);
}

/// Frames chained so that each return address is the caller frame's end: one step pops
/// `depth` frames in a row.
fn chained_calls(depth: usize) -> picajit_interp::pica::program::Program {
    let mut placed = vec![
        (0, call(4, 2)),
        (1, inc(1)),
        (2, END),
        (6, inc(2)),
        (7, END),
    ];
    for k in 0..depth {
        let base = 4 + 4 * k;
        placed.push((base, inc(0)));
        if k + 1 < depth {
            placed.push((base + 1, call(base as u16 + 4, 2)));
        }
    }
    // Words after the last frame: what runs if the chain's final return went nowhere.
    placed.push((4 + 4 * depth + 2, inc(3)));
    placed.push((4 + 4 * depth + 3, END));
    vs(&placed)
}

#[test]
fn three_chained_call_pops_return_to_the_first_caller() {
    let regs = run(&chained_calls(3), &uniforms());
    assert_eq!(count(&regs, 0), 3.0);
    assert_eq!(count(&regs, 1), 1.0, "returned to main after the CALL");
    assert_eq!(count(&regs, 2), 0.0);
}

#[test]
fn fourth_call_pop_in_a_row_misses_its_pc_update() {
    let regs = run(&chained_calls(4), &uniforms());
    assert_eq!(count(&regs, 0), 4.0);
    // The fourth pop's return (to 1) is lost; the third one's (to 6) wins.
    assert_eq!(count(&regs, 1), 0.0);
    assert_eq!(count(&regs, 2), 1.0);
}

/// Nine nested IFs: if_k at address k closes at 18 - k; the outermost one jumps past a
/// two-word else part when it pops.
fn nine_nested_ifs() -> picajit_interp::pica::program::Program {
    let mut placed: Vec<_> = (0..9usize)
        .map(|k| (k, ifu((18 - k) as u16, if k == 0 { 2 } else { 0 })))
        .collect();
    placed.extend([
        (9, inc(0)),
        (18, inc(9)),
        (19, END),
        (20, inc(10)),
        (21, END),
    ]);
    vs(&placed)
}

#[test]
fn if_stack_keeps_eight_entries() {
    // Eight nested IFs fit: the outermost pops at 18 and jumps to 20.
    let p = vs(&[
        (0, ifu(18, 2)),
        (1, ifu(17, 0)),
        (2, ifu(16, 0)),
        (3, ifu(15, 0)),
        (4, ifu(14, 0)),
        (5, ifu(13, 0)),
        (6, ifu(12, 0)),
        (7, ifu(11, 0)),
        (8, inc(0)),
        (18, inc(9)),
        (19, END),
        (20, inc(10)),
        (21, END),
    ]);
    let regs = run(&p, &uniforms());
    assert_eq!(count(&regs, 10), 1.0);
    assert_eq!(count(&regs, 9), 0.0);
}

#[test]
fn if_stack_overflow_drops_the_outermost_block() {
    let p = nine_nested_ifs();
    let regs = run(&p, &uniforms());
    // The ninth push dropped the outermost IF: its jump over the else part never happens.
    assert_eq!(count(&regs, 9), 1.0);
    assert_eq!(count(&regs, 10), 0.0);
}

#[test]
fn if_false_jumps_to_dest_and_else_runs() {
    let mut u = uniforms();
    u.set_bool(0, false);
    // ifu b0 { r0++ } else { r1++ }: else part at 2, one word.
    let p = vs(&[(0, ifu(2, 1)), (1, inc(0)), (2, inc(1)), (3, END)]);
    let regs = run(&p, &u);
    assert_eq!((count(&regs, 0), count(&regs, 1)), (0.0, 1.0));
    let regs = run(&p, &uniforms());
    assert_eq!((count(&regs, 0), count(&regs, 1)), (1.0, 0.0));
}

fn loop_i(i: u8, dest: u16) -> Instruction {
    Instruction::Loop { i, dest }
}

#[test]
fn loop_runs_x_plus_one_times_and_keeps_al() {
    let mut u = uniforms();
    u.set_int(0, [2, 5, 3, 0]);
    let p = vs(&[(0, loop_i(0, 1)), (1, inc(0)), (2, END)]);
    let regs = run(&p, &u);
    assert_eq!(count(&regs, 0), 3.0);
    // aL was 5, 8, 11 in the body and stepped once more after the last iteration.
    assert_eq!(regs.al, 14);
}

fn nested_loops(n: usize) -> picajit_interp::pica::program::Program {
    // L0 (two iterations, i1) encloses L1..L{n-1} (one iteration each, i0).
    let body_end = 2 * n + 2;
    let mut placed = vec![];
    for k in 0..n {
        placed.push((k, loop_i(if k == 0 { 1 } else { 0 }, (body_end - k) as u16)));
    }
    placed.push((n, inc(0)));
    placed.push((body_end, inc(4)));
    placed.push((body_end + 1, END));
    vs(&placed)
}

#[test]
fn loop_stack_keeps_four_entries() {
    let mut u = uniforms();
    u.set_int(1, [1, 0, 0, 0]);
    let regs = run(&nested_loops(4), &u);
    assert_eq!(count(&regs, 0), 2.0);
    assert_eq!(count(&regs, 4), 2.0);
}

#[test]
fn loop_stack_overflow_drops_the_outermost_loop() {
    let mut u = uniforms();
    u.set_int(1, [1, 0, 0, 0]);
    let regs = run(&nested_loops(5), &u);
    assert_eq!(count(&regs, 0), 1.0, "outer loop lost: one pass only");
    assert_eq!(count(&regs, 4), 1.0);
}

#[test]
fn nested_loop_leaves_inner_al_for_the_outer_loop() {
    let mut u = uniforms();
    u.set_int(0, [1, 0, 10, 0]);
    u.set_int(1, [2, 100, 1, 0]);
    let p = vs(&[(0, loop_i(0, 4)), (1, loop_i(1, 2)), (2, inc(0)), (5, END)]);
    let regs = run(&p, &u);
    assert_eq!(count(&regs, 0), 6.0);
    // Inner loop ends with aL = 103, the outer loop then steps it by 10; nothing restores
    // the outer value (a documented choice).
    assert_eq!(regs.al, 113);
}

#[test]
fn if_pop_outranks_call_pop_at_the_same_address() {
    let p = vs(&[
        (0, call(4, 3)),
        (1, inc(1)),
        (2, END),
        (4, ifu(7, 2)),
        (5, inc(0)),
        (7, inc(3)),
        (8, END),
        (9, inc(2)),
        (10, END),
    ]);
    let regs = run(&p, &uniforms());
    assert_eq!(count(&regs, 2), 1.0, "IF's target wins");
    assert_eq!(
        count(&regs, 1),
        0.0,
        "the CALL frame popped too, so its return is lost"
    );
}

#[test]
fn loop_outranks_if_and_a_finished_loop_lets_if_win() {
    let mut u = uniforms();
    u.set_int(0, [1, 0, 0, 0]);
    let p = vs(&[
        (0, loop_i(0, 3)),
        (1, ifu(4, 3)),
        (2, inc(0)),
        (4, inc(1)),
        (5, END),
        (7, inc(2)),
        (8, END),
    ]);
    let regs = run(&p, &u);
    assert_eq!(count(&regs, 0), 2.0, "iterating loop beat the IF pop");
    assert_eq!(count(&regs, 2), 1.0, "finished loop: the IF target wins");
    assert_eq!(count(&regs, 1), 0.0);
}

#[test]
fn jump_is_suppressed_when_a_stack_pops() {
    let p = vs(&[
        (0, ifu(3, 2)),
        (1, inc(0)),
        (
            2,
            Instruction::JmpU {
                b: 0,
                dest: 10,
                invert: false,
            },
        ),
        (3, inc(1)),
        (4, END),
        (5, inc(2)),
        (6, END),
        (10, inc(3)),
        (11, END),
    ]);
    let regs = run(&p, &uniforms());
    assert_eq!(count(&regs, 2), 1.0);
    assert_eq!(count(&regs, 3), 0.0);
    // The same jump one word earlier in the block is taken.
    let p = vs(&[
        (0, ifu(3, 2)),
        (
            1,
            Instruction::JmpU {
                b: 0,
                dest: 10,
                invert: false,
            },
        ),
        (2, inc(0)),
        (10, inc(3)),
        (11, END),
    ]);
    let regs = run(&p, &uniforms());
    assert_eq!(count(&regs, 3), 1.0);
}

#[test]
fn jmpu_invert_and_jmpc_conditions() {
    let mut u = uniforms();
    u.set_bool(1, false);
    let p = vs(&[
        (
            0,
            Instruction::JmpU {
                b: 1,
                dest: 3,
                invert: true,
            },
        ),
        (1, inc(0)),
        (2, END),
        (3, inc(1)),
        (4, END),
    ]);
    let regs = run(&p, &u);
    assert_eq!((count(&regs, 0), count(&regs, 1)), (0.0, 1.0));
    // cmp sets x=true (1 == 1), y=false (1 != 1 is false); jmpc !cmp.y jumps.
    let cmp = Instruction::Cmp {
        src1: SrcReg::Const(0),
        src2: SrcReg::Temp(5),
        rel: RelIndex::None,
        x: CmpOp::Ne,
        y: CmpOp::Eq,
        desc: 0,
    };
    let cond = Condition {
        op: CondOp::Y,
        ref_x: true,
        ref_y: false,
    };
    let p = vs(&[
        (0, cmp),
        (1, Instruction::JmpC { cond, dest: 4 }),
        (2, inc(0)),
        (3, END),
        (4, inc(1)),
        (5, END),
    ]);
    let regs = run(&p, &uniforms());
    assert_eq!(regs.cmp, [1, 0]);
    assert_eq!((count(&regs, 0), count(&regs, 1)), (0.0, 1.0));
}

#[test]
fn end_inside_a_call_ends_the_invocation() {
    let p = vs(&[
        (0, call(3, 3)),
        (1, inc(1)),
        (2, END),
        (3, inc(0)),
        (4, END),
        (5, inc(2)),
    ]);
    let (regs, info) = run_with(&p, &uniforms(), 100).unwrap();
    assert_eq!(
        [count(&regs, 0), count(&regs, 1), count(&regs, 2)],
        [1.0, 0.0, 0.0]
    );
    assert_eq!(info.instructions, 3);
}

#[test]
fn breakc_leaves_the_loop_with_al_of_that_iteration() {
    let mut u = uniforms();
    u.set_int(0, [9, 0, 1, 0]);
    u.set_float_raw(1, [3.0; 4]);
    let cmp = Instruction::Cmp {
        src1: SrcReg::Const(1),
        src2: SrcReg::Temp(0),
        rel: RelIndex::None,
        x: CmpOp::Le,
        y: CmpOp::Le,
        desc: 0,
    };
    let cond = Condition {
        op: CondOp::X,
        ref_x: true,
        ref_y: true,
    };
    let p = vs(&[
        (0, loop_i(0, 3)),
        (1, inc(0)),
        (2, cmp),
        (3, Instruction::BreakC { cond }),
        (4, inc(1)),
        (5, END),
    ]);
    let regs = run(&p, &u);
    assert_eq!(count(&regs, 0), 3.0);
    assert_eq!(count(&regs, 1), 1.0);
    assert_eq!(regs.al, 2);
}

#[test]
fn break_exits_the_innermost_loop() {
    let mut u = uniforms();
    u.set_int(0, [2, 0, 0, 0]);
    let p = vs(&[
        (0, loop_i(0, 4)),
        (1, loop_i(0, 3)),
        (2, inc(0)),
        (3, Instruction::Break),
        (4, inc(1)),
        (5, END),
    ]);
    let regs = run(&p, &u);
    // Inner loop body runs once per outer iteration; the outer loop runs three times.
    assert_eq!(count(&regs, 0), 3.0);
    assert_eq!(count(&regs, 1), 3.0);
}

/// A BREAK is the LOOP stack's one action for its instruction (seed 000: "the IF/LOOP stacks
/// can each only pop one entry per instruction"): when it is also the last word of the loop
/// below the one it leaves, that loop's end is not checked.
///
/// Trace (i0 = two iterations, step 1; i1 = three iterations from aL = 10):
/// ```text
/// 0 LOOP i0 -> A {start 1, end 4}        loops [A]        aL = 0
/// 1 LOOP i1 -> B {start 2, end 6}        loops [A, B]     aL = 10
/// 2 r0 += 1
/// 3 BREAK  (A's last word, B on top)     pops B; the LOOP copy of the PC becomes B's end, 6;
///                                        A is not compared with PC+1 = 4 in this instruction
/// 6 r3 += 1                              loops [A] (A's end is never reached again)
/// 7 END                                  6 instructions, aL = 10, r0 = 1, r1 = r2 = 0
/// ```
/// The other reading (BREAK as a jump after which the new top is still checked) steps A at 4,
/// runs the body again, and pops B by BREAK and A by its end in one instruction: 11
/// instructions, aL = 11, r0 = 2, r1 = r2 = 1. The programs in
/// `tests/control_flow_regressions.rs` part the same way.
#[test]
fn break_on_the_last_word_of_the_enclosing_loop_is_the_only_loop_action() {
    let mut u = uniforms();
    u.set_int(0, [1, 0, 1, 0]);
    u.set_int(1, [2, 10, 1, 0]);
    let p = vs(&[
        (0, loop_i(0, 3)),
        (1, loop_i(1, 5)),
        (2, inc(0)),
        (3, Instruction::Break),
        (4, inc(1)),
        (5, inc(2)),
        (6, inc(3)),
        (7, END),
    ]);
    let (regs, info) = run_with(&p, &u, 100).unwrap();
    assert_eq!(info.instructions, 6);
    assert_eq!(regs.al, 10);
    assert_eq!([0, 1, 2, 3].map(|k| count(&regs, k)), [1.0, 0.0, 0.0, 1.0]);
}

/// The BREAK's target is the LOOP stack's copy of the PC, so it outranks an IF pop at the
/// same instruction (LOOP > IF, seed 000).
///
/// ```text
/// 0 LOOP i0 -> A {start 1, end 6}
/// 1 IFU b0 (true) -> IF {end 3, target 4}
/// 2 BREAK  (last word of the true arm)   IF pops with target 4, LOOP pops A with target 6:
///                                        LOOP wins
/// 6 r4 += 1
/// 7 END                                  r1 = r2 = r3 = 0, r4 = 1
/// ```
#[test]
fn break_target_outranks_an_if_pop_at_the_same_instruction() {
    let mut u = uniforms();
    u.set_int(0, [3, 0, 1, 0]);
    let p = vs(&[
        (0, loop_i(0, 5)),
        (1, ifu(3, 1)),
        (2, Instruction::Break),
        (3, inc(1)),
        (4, inc(2)),
        (5, inc(3)),
        (6, inc(4)),
        (7, END),
    ]);
    let (regs, info) = run_with(&p, &u, 100).unwrap();
    assert_eq!([1, 2, 3, 4].map(|k| count(&regs, k)), [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(info.instructions, 5);
}

#[test]
fn break_on_an_empty_loop_stack_is_an_error() {
    let p = vs(&[(0, inc(0)), (1, Instruction::Break), (2, END)]);
    assert_eq!(
        run_with(&p, &uniforms(), 100).unwrap_err(),
        ExecError::BreakWithoutLoop { pc: 1 }
    );
    // BREAKC whose condition is false does nothing, even with no loop.
    let cond = Condition {
        op: CondOp::X,
        ref_x: true,
        ref_y: true,
    };
    let p = vs(&[(0, Instruction::BreakC { cond }), (1, END)]);
    assert!(run_with(&p, &uniforms(), 100).is_ok());
}

#[test]
fn jump_into_a_loop_body_runs_it_as_straight_code() {
    let p = vs(&[
        (
            0,
            Instruction::JmpU {
                b: 0,
                dest: 2,
                invert: false,
            },
        ),
        (1, loop_i(0, 3)),
        (2, inc(0)),
        (3, inc(1)),
        (4, END),
    ]);
    let regs = run(&p, &uniforms());
    assert_eq!((count(&regs, 0), count(&regs, 1)), (1.0, 1.0));
}

#[test]
fn runaway_loop_exhausts_the_budget() {
    let p = vs(&[
        (0, inc(0)),
        (
            1,
            Instruction::JmpU {
                b: 0,
                dest: 0,
                invert: false,
            },
        ),
    ]);
    assert_eq!(
        run_with(&p, &uniforms(), 1001).unwrap_err(),
        ExecError::BudgetExhausted {
            budget: 1001,
            pc: 1
        }
    );
}

#[test]
fn running_off_the_end_is_an_error() {
    let p = program(&[inc(0)]);
    assert_eq!(
        run_with(&p, &uniforms(), 100).unwrap_err(),
        ExecError::PcOutOfRange { pc: 1, words: 1 }
    );
}

#[test]
fn undefined_opcode_is_an_error() {
    let mut code = vec![encode(&inc(0)).unwrap(), 0x14 << 26 | 0x55];
    code.push(encode(&END).unwrap());
    let p = picajit_interp::pica::program::Program::new(
        code,
        vec![identity_desc()],
        0,
        ShaderKind::Vertex,
    )
    .unwrap();
    assert_eq!(
        run_with(&p, &uniforms(), 100).unwrap_err(),
        ExecError::UndefinedOpcode {
            pc: 1,
            word: 0x14 << 26 | 0x55
        }
    );
}

#[test]
fn callu_and_callc_respect_their_conditions() {
    let mut u = uniforms();
    u.set_bool(2, false);
    let cond_true = Condition {
        op: CondOp::And,
        ref_x: false,
        ref_y: false,
    };
    let p = vs(&[
        (
            0,
            Instruction::CallU {
                b: 2,
                dest: 10,
                num: 1,
            },
        ),
        (
            1,
            Instruction::CallU {
                b: 0,
                dest: 11,
                num: 1,
            },
        ),
        (
            2,
            Instruction::CallC {
                cond: cond_true,
                dest: 12,
                num: 1,
            },
        ),
        (3, END),
        (10, inc(0)),
        (11, inc(1)),
        (12, inc(2)),
    ]);
    let regs = run(&p, &u);
    assert_eq!(
        [count(&regs, 0), count(&regs, 1), count(&regs, 2)],
        [0.0, 1.0, 1.0]
    );
}
