//! The THEIA interpreter: every operation in both profiles, the pipeline effects of the rtl
//! profile, the register maps, budgets, stalls and errors.

use picajit_interp::theia::arith::{self, ONE};
use picajit_interp::theia::exec::IMEM_BIT;
use picajit_interp::theia::table::{self, Sem};
use picajit_interp::theia::{
    regs, run, Code, Profile, RecordIo, RunOutcome, State, Status, TheiaError, Word,
};

const R1: u16 = 71;
const R2: u16 = 72;
const R3: u16 = 73;
const C1: u16 = 64;

fn op(name: &str) -> u16 {
    table::by_name(name).unwrap().code
}

fn i3(name: &str, dst: u16, s1: u16, s2: u16) -> u64 {
    Word::new(op(name), dst, s1, s2).encode()
}

fn imm(name: &str, dst: u16, v: u32) -> u64 {
    Word::with_imm(op(name), dst, v).encode()
}

fn ret(v: bool) -> u64 {
    imm("RETURN", 0, v as u32)
}

fn nop() -> u64 {
    imm("NOP", 0, 0)
}

fn q(v: f64) -> u32 {
    (v * ONE as f64).round() as i64 as i32 as u32
}

struct Run {
    state: State,
    out: RunOutcome,
    io: RecordIo,
}

fn exec_with(profile: Profile, code: Vec<u64>, init: &[(u16, [u32; 3])], budget: u64) -> Run {
    let mut state = State::new(profile);
    for &(a, v) in init {
        state.regs[a as usize] = v;
    }
    let mut io = RecordIo::default();
    let out = run(
        profile,
        &Code::imem(code),
        &mut state,
        &mut io,
        IMEM_BIT,
        budget,
    )
    .unwrap();
    Run { state, out, io }
}

fn exec(profile: Profile, code: Vec<u64>, init: &[(u16, [u32; 3])]) -> Run {
    exec_with(profile, code, init, 1000)
}

/// Runs `OP R3 R1 R2` (NOP-separated so that no forwarding applies) in a profile.
fn binop(profile: Profile, name: &str, a: [u32; 3], b: [u32; 3]) -> [u32; 3] {
    let r = exec(
        profile,
        vec![nop(), i3(name, R3, R1, R2), nop(), ret(true)],
        &[(R1, a), (R2, b)],
    );
    assert_eq!(r.out.status, Status::Returned(true), "{name}");
    r.state.regs[R3 as usize]
}

fn both(name: &str, a: [u32; 3], b: [u32; 3]) -> [u32; 3] {
    let x = binop(Profile::Rtl, name, a, b);
    assert_eq!(x, binop(Profile::Manual, name, a, b), "{name} differs");
    x
}

#[test]
fn arithmetic_operations_in_both_profiles() {
    let a = [q(1.5), q(-2.25), q(100.0)];
    let b = [q(2.0), q(0.5), q(-3.0)];
    assert_eq!(both("ADD", a, b), [q(3.5), q(-1.75), q(97.0)]);
    assert_eq!(both("SUB", a, b), [q(-0.5), q(-2.75), q(103.0)]);
    assert_eq!(both("MUL", a, b), [q(3.0), q(-1.125), q(-300.0)]);
    assert_eq!(
        both("DIV", a, b),
        [q(0.75), q(-4.5), arith::div_rtl(q(100.0), q(-3.0))]
    );
    assert_eq!(both("COPY", a, b), a);
    assert_eq!(both("ZERO", a, b), [0; 3]);
    assert_eq!(both("INC", a, b), [q(2.5), q(-1.25), q(101.0)]);
    assert_eq!(both("DEC", a, b), [q(0.5), q(-3.25), q(99.0)]);
    assert_eq!(both("INCX", a, b), [q(2.5), q(-2.25), q(100.0)]);
    assert_eq!(both("INCY", a, b), [q(1.5), q(-1.25), q(100.0)]);
    assert_eq!(both("INCZ", a, b), [q(1.5), q(-2.25), q(101.0)]);
    assert_eq!(both("NEG", a, b), [q(-1.5), q(2.25), q(-100.0)]);
    assert_eq!(both("FRAC", a, b), a.map(|x| x & 0x1FFFF));
    assert_eq!(both("XCHANGEX", a, b), [b[0], a[1], a[2]]);
    assert_eq!(
        both("IMUL", [7, 3, 0xFFFF_FFFE], [6, 5, 4]),
        [42, 15, (-8i32) as u32]
    );
    let d = q(1.5 * 2.0 - 2.25 * 0.5 - 300.0);
    assert_eq!(both("DOT", a, b), [d; 3]);
    let m = arith::mag_rtl(a);
    assert_eq!(both("MAG", a, b), [m; 3]);
    assert_eq!(both("MAG", [q(3.0), q(4.0), 0], b), [q(5.0); 3]);
    assert_eq!(
        both("CROSS", [q(1.0), 0, 0], [0, q(1.0), 0]),
        [0, 0, q(1.0)]
    );
    assert_eq!(
        both("CROSS", [q(2.0), q(3.0), q(4.0)], [q(5.0), q(6.0), q(7.0)]),
        [q(-3.0), q(6.0), q(-3.0)]
    );
    // MOD: S1 & (S2 - 1.0); with S2 = 64.0 it keeps the integer part modulo 64.
    assert_eq!(
        both("MOD", [q(70.5), q(3.0), q(64.0)], [q(64.0); 3]),
        [q(6.0), q(3.0), 0]
    );
}

#[test]
fn profiles_differ_where_the_docs_say() {
    let big = [0x7FFF_FFFF, 0x8000_0000, 5];
    let one = [1, 0xFFFF_FFFF, 1];
    // Adders: sign of the exact sum over its low 31 bits, against wrapping.
    assert_eq!(binop(Profile::Rtl, "ADD", big, one), [0, 0xFFFF_FFFF, 6]);
    assert_eq!(
        binop(Profile::Manual, "ADD", big, one),
        [0x8000_0000, 0x7FFF_FFFF, 6]
    );
    // UNSCALE shifts logically in the RTL.
    let neg = [q(-2.0), q(3.0), 0];
    assert_eq!(
        binop(Profile::Rtl, "UNSCALE", neg, neg),
        [q(-2.0) >> 17, 3, 0]
    );
    assert_eq!(
        binop(Profile::Manual, "UNSCALE", neg, neg),
        [(-2i32) as u32, 3, 0]
    );
    // MULP: the RTL keeps source 1's x and y, the manual the destination's.
    let r = exec(
        Profile::Rtl,
        vec![nop(), i3("MULP", R3, R1, 0), nop(), ret(true)],
        &[(R1, [q(2.0), q(3.0), 9]), (R3, [11, 12, 13])],
    );
    assert_eq!(r.state.regs[R3 as usize], [q(2.0), q(3.0), q(6.0)]);
    let r = exec(
        Profile::Manual,
        vec![nop(), i3("MULP", R3, R1, 0), nop(), ret(true)],
        &[(R1, [q(2.0), q(3.0), 9]), (R3, [11, 12, 13])],
    );
    assert_eq!(r.state.regs[R3 as usize], [11, 12, q(6.0)]);
}

#[test]
fn manual_only_operations_stall_the_rtl() {
    let a = [q(1.75), q(-2.5), 3];
    let b = [10, 20, 30];
    assert_eq!(binop(Profile::Manual, "INTP", a, b), [q(1.0), q(-3.0), 0]);
    assert_eq!(
        binop(Profile::Manual, "RESCALE", [1, 2, 3], b),
        [q(1.0), q(2.0), q(3.0)]
    );
    assert_eq!(binop(Profile::Manual, "XCHANGEY", a, b), [a[0], b[1], a[2]]);
    assert_eq!(binop(Profile::Manual, "XCHANGEZ", a, b), [a[0], a[1], b[2]]);
    for name in ["INTP", "RESCALE", "XCHANGEY", "XCHANGEZ", "DEBUG_PRINT"] {
        let r = exec(
            Profile::Rtl,
            vec![nop(), i3(name, R3, R1, R2), ret(true)],
            &[],
        );
        assert_eq!(
            r.out,
            RunOutcome {
                status: Status::Stalled {
                    pc: IMEM_BIT + 1,
                    op: op(name)
                },
                steps: 1
            },
            "{name}"
        );
    }
    let r = exec(
        Profile::Manual,
        vec![i3("DEBUG_PRINT", R3, R1, R2), ret(true)],
        &[],
    );
    assert!(matches!(r.out.status, Status::Stalled { .. }));
}

#[test]
fn set_and_swizzle() {
    let init = [(R1, [1, 2, 3])];
    for p in Profile::ALL {
        let r = exec(
            p,
            vec![
                nop(),
                imm("SETX", R1, 0xCAFE),
                nop(),
                imm("SETY", R1, 7),
                nop(),
                imm("SETZ", R1, 0xFFFF_FFFF),
                nop(),
                ret(true),
            ],
            &init,
        );
        assert_eq!(r.state.regs[R1 as usize], [0xCAFE, 7, 0xFFFF_FFFF]);
    }
    for (i, (name, pat)) in table::SWIZZLES.iter().enumerate() {
        for p in Profile::ALL {
            let r = exec(
                p,
                vec![nop(), imm("SWIZZLE3D", R1, i as u32), nop(), ret(true)],
                &init,
            );
            let want = if p == Profile::Manual || table::RTL_SWIZZLES.contains(&(i as u32)) {
                pat.map(|c| [1, 2, 3][c as usize])
            } else {
                [0; 3]
            };
            assert_eq!(r.state.regs[R1 as usize], want, "{name} {p:?}");
        }
    }
    for p in Profile::ALL {
        let r = exec(
            p,
            vec![nop(), imm("SWIZZLE3D", R1, 22), nop(), ret(true)],
            &init,
        );
        assert_eq!(r.state.regs[R1 as usize], [0; 3]);
    }
}

/// Every conditional jump over a grid of values, both profiles, taken or not.
#[test]
fn conditional_jumps() {
    let vals = [
        0u32,
        1,
        5,
        q(5.0),
        q(-5.0),
        0xFFFF_FFFF,
        0x7FFF_FFFF,
        0x8000_0000,
    ];
    for o in table::OPS {
        let Sem::Jump(c, t) = o.sem else { continue };
        for &x in &vals {
            for &y in &vals {
                for p in Profile::ALL {
                    let mut a = [0u32; 3];
                    let mut b = [0u32; 3];
                    a[c as usize] = x;
                    b[c as usize] = y;
                    // other components disagree, so a wrong component would show
                    a[(c as usize + 1) % 3] = 3;
                    let code = vec![
                        nop(),
                        i3(o.name, IMEM_BIT + 4, R1, R2),
                        nop(),
                        ret(false),
                        ret(true),
                    ];
                    let r = exec(p, code, &[(R1, a), (R2, b)]);
                    let want = if p == Profile::Rtl {
                        arith::compare_rtl(x, y, t)
                    } else {
                        arith::compare_manual(x, y, t)
                    };
                    assert_eq!(
                        r.out.status,
                        Status::Returned(want),
                        "{} {x:#x} {y:#x} {p:?}",
                        o.name
                    );
                    assert_eq!(r.out.steps, if want { 3 } else { 4 });
                }
            }
        }
    }
}

#[test]
fn return_value_is_bit_zero_and_rtl_return_writes_its_destination() {
    for p in Profile::ALL {
        // The RETURNs follow a NOP: in the RTL a RETURN that starts the run executes but is
        // never reported done (`interp/src/theia/exec.rs`, `step`), asserted below.
        let r = exec(p, vec![nop(), imm("RETURN", 0, 3)], &[]);
        assert_eq!(
            r.out,
            RunOutcome {
                status: Status::Returned(true),
                steps: 2
            }
        );
        let r = exec(p, vec![imm("RETURN", 0, 3)], &[]);
        let first = if p == Profile::Rtl {
            Status::Stalled {
                pc: IMEM_BIT,
                op: 0x40,
            }
        } else {
            Status::Returned(true)
        };
        assert_eq!(
            r.out,
            RunOutcome {
                status: first,
                steps: 1
            }
        );
        let r = exec(p, vec![nop(), imm("RETURN", R1, 2)], &[]);
        assert_eq!(r.out.status, Status::Returned(false));
        let want = if p == Profile::Rtl { [2; 3] } else { [0; 3] };
        assert_eq!(r.state.regs[R1 as usize], want);
        assert_eq!(r.state.last_result, [2; 3]);
    }
}

#[test]
fn register_maps_and_dropped_writes() {
    // RTL: rows 0-31 are IO-only, 128-131 alias 0-3; manual: 0-58 read-only, 128-131 exist.
    for (addr, rtl_row, rtl_written, manual_written) in [
        (0u16, 0usize, false, false),
        (31, 31, false, false),
        (32, 32, true, false),
        (44, 44, true, false),
        (58, 58, true, false),
        (59, 59, true, true),
        (R1, 71, true, true),
        (127, 127, true, true),
        (128, 0, false, true),
        (131, 3, false, true),
        (0x80 + R1, 71, true, false),
    ] {
        let code = vec![nop(), i3("COPY", addr, C1, 0), nop(), ret(true)];
        let init = [(C1, [4, 5, 6])];
        let r = exec(Profile::Rtl, code.clone(), &init);
        assert_eq!(
            r.state.regs[rtl_row] == [4, 5, 6],
            rtl_written,
            "rtl {addr}"
        );
        let mut state = State::new(Profile::Manual);
        state.regs[C1 as usize] = [4, 5, 6];
        let res = run(
            Profile::Manual,
            &Code::imem(code),
            &mut state,
            &mut RecordIo::default(),
            IMEM_BIT,
            10,
        );
        if addr < 132 {
            res.unwrap();
            assert_eq!(
                state.regs[addr as usize] == [4, 5, 6],
                manual_written,
                "manual {addr}"
            );
        } else {
            assert_eq!(
                res,
                Err(TheiaError::RegisterOutOfRange {
                    pc: IMEM_BIT + 1,
                    addr
                })
            );
        }
    }
    // The RTL reads rows through the same 7 bits.
    let r = exec(
        Profile::Rtl,
        vec![nop(), i3("COPY", R2, 0x80 + C1, 0), nop(), ret(true)],
        &[(C1, [7, 8, 9])],
    );
    assert_eq!(r.state.regs[R2 as usize], [7, 8, 9]);
}

#[test]
fn rtl_forwarding_of_the_previous_result() {
    // A dropped write (OREG_ADDR_O aliases row 3) is still seen by the next instruction...
    let code = vec![
        i3("COPY", 131, C1, 0),
        i3("COPY", R1, 131, 0),
        i3("COPY", R2, 131, 0),
        ret(true),
    ];
    let r = exec(
        Profile::Rtl,
        code.clone(),
        &[(C1, [1, 2, 3]), (3, [9, 9, 9])],
    );
    assert_eq!(r.state.regs[R1 as usize], [1, 2, 3]);
    // ...but not by the one after (it reads row 3).
    assert_eq!(r.state.regs[R2 as usize], [9, 9, 9]);
    let r = exec(Profile::Manual, code, &[(C1, [1, 2, 3]), (3, [9, 9, 9])]);
    assert_eq!(r.state.regs[R1 as usize], [1, 2, 3]);
    assert_eq!(r.state.regs[R2 as usize], [1, 2, 3]);

    // Forwarding compares all 16 address bits: 0x80+R1 reads row R1, not the forwarded
    // value, and the row as it was before the previous instruction's write, which lands in
    // the same clock edge (the whole-program RTL differential, `tests/theia_rtl.rs`).
    let code = vec![
        i3("COPY", R1, C1, 0),
        i3("COPY", R2, 0x80 + R1, 0),
        ret(true),
    ];
    let r = exec(Profile::Rtl, code, &[(C1, [1, 2, 3]), (R1, [5, 5, 5])]);
    assert_eq!(
        r.state.regs[R2 as usize],
        [5, 5, 5],
        "old value through the alias"
    );
    assert_eq!(r.state.regs[R1 as usize], [1, 2, 3], "written");

    // A jump's destination field is its target: the next instruction reading that address
    // gets the jump's ALU result, zeros.
    let code = vec![
        i3("JMP", IMEM_BIT + 1, 0, 0),
        i3("COPY", R2, IMEM_BIT + 1, 0),
        ret(true),
    ];
    let r = exec(Profile::Rtl, code, &[(R1, [5, 5, 5])]);
    assert_eq!(r.state.regs[R2 as usize], [0; 3]);

    // The destination field starts at 0 each run and the result flops carry over: the first
    // instruction reading row 0 sees the previous run's RETURN.
    let mut state = State::new(Profile::Rtl);
    state.regs[0] = [4, 4, 4];
    let mut io = RecordIo::default();
    let code = Code::imem(vec![
        i3("COPY", R1, 0, 0),
        i3("COPY", R2, 0, 0),
        imm("RETURN", 0, 1),
    ]);
    run(Profile::Rtl, &code, &mut state, &mut io, IMEM_BIT, 10).unwrap();
    assert_eq!(state.regs[R1 as usize], [0; 3]);
    assert_eq!(state.regs[R2 as usize], [4; 3]);
    run(Profile::Rtl, &code, &mut state, &mut io, IMEM_BIT, 10).unwrap();
    assert_eq!(state.regs[R1 as usize], [1; 3]);
}

#[test]
fn call_and_ret_hand_a_value_through_forwarding() {
    // The ROM's pattern (`RET R99 TRUE` followed by a test of R99 after the CALL).
    let r99 = regs::by_name("R99").unwrap();
    let code = vec![
        imm("CALL", IMEM_BIT + 4, 0),      // 0
        i3("JEQX", IMEM_BIT + 3, r99, C1), // 1: R99.x == C1.x (0)?
        ret(true),                         // 2: R99 was TRUE
        ret(false),                        // 3
        imm("RET", r99, 1),                // 4
    ];
    let r = exec(Profile::Rtl, code.clone(), &[]);
    assert_eq!(
        r.out,
        RunOutcome {
            status: Status::Returned(true),
            steps: 4
        }
    );
    assert_eq!(r.state.regs[r99 as usize], [0; 3], "RET never writes");
    // Without forwarding (manual profile) R99 is still 0.
    let r = exec(Profile::Manual, code, &[]);
    assert_eq!(r.out.status, Status::Returned(false));
}

#[test]
fn io_operations() {
    for p in Profile::ALL {
        let r = exec(
            p,
            vec![
                nop(),
                i3("OMWRITE", 128, R1, R2),
                i3("TMREAD", R3, R1, 0),
                i3("LEA", C1, 0, 0),
                ret(true),
            ],
            &[(R1, [1, 2, 3]), (R2, [4, 5, 6]), (R3, [7, 7, 7])],
        );
        assert_eq!(r.io.omem_writes, vec![([1, 2, 3], [4, 5, 6])]);
        assert_eq!(r.io.tmem_reads, vec![[1, 2, 3]]);
        assert_eq!(r.state.regs[R3 as usize], [0; 3]);
        // LEA at index 3 gives the address after its own (the whole-program RTL
        // differential, `tests/theia_rtl.rs`, shows address + 1).
        assert_eq!(r.state.regs[C1 as usize], [(IMEM_BIT + 4) as u32; 3]);
    }
}

#[test]
fn budget_stall_and_errors() {
    // An endless loop stops at the budget with exactly `budget` steps.
    let looping = vec![nop(), i3("JMP", IMEM_BIT, 0, 0)];
    for p in Profile::ALL {
        let r = exec_with(p, looping.clone(), &[], 101);
        assert_eq!(
            r.out,
            RunOutcome {
                status: Status::Budget { pc: IMEM_BIT + 1 },
                steps: 101
            }
        );
        let r = exec_with(p, vec![nop(), ret(true)], &[], 1);
        assert_eq!(r.out.status, Status::Budget { pc: IMEM_BIT + 1 });
        let r = exec_with(p, vec![nop(), ret(true)], &[], 2);
        assert_eq!(r.out.status, Status::Returned(true));
    }
    let mut s = State::new(Profile::Rtl);
    let mut io = RecordIo::default();
    let e = |code: Vec<u64>, s: &mut State, io: &mut RecordIo| {
        run(Profile::Rtl, &Code::imem(code), s, io, IMEM_BIT, 100).unwrap_err()
    };
    assert_eq!(
        e(vec![nop(), Word::new(6, 0, 0, 0).encode()], &mut s, &mut io),
        TheiaError::UndefinedOperation {
            pc: IMEM_BIT + 1,
            op: 6
        }
    );
    assert_eq!(
        e(vec![Word::new(0x1_01, 0, 0, 0).encode()], &mut s, &mut io),
        TheiaError::UndefinedOperation {
            pc: IMEM_BIT,
            op: 0x101
        }
    );
    assert_eq!(
        e(vec![i3("JMP", IMEM_BIT + 7, 0, 0)], &mut s, &mut io),
        TheiaError::JumpOutOfRange {
            pc: IMEM_BIT,
            target: IMEM_BIT + 7
        }
    );
    assert_eq!(
        e(vec![i3("JMP", 5, 0, 0)], &mut s, &mut io),
        TheiaError::JumpOutOfRange {
            pc: IMEM_BIT,
            target: 5
        }
    );
    assert_eq!(
        e(vec![nop()], &mut s, &mut io),
        TheiaError::PcOutOfRange { pc: IMEM_BIT + 1 }
    );
    for err in [
        TheiaError::UndefinedOperation { pc: 1, op: 6 },
        TheiaError::JumpOutOfRange { pc: 1, target: 2 },
        TheiaError::PcOutOfRange { pc: 3 },
        TheiaError::RegisterOutOfRange { pc: 3, addr: 200 },
    ] {
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn rom_addresses_reach_the_rom() {
    let code = Code {
        imem: vec![i3("JMP", 1, 0, 0)],
        rom: vec![ret(false), ret(true)],
    };
    let mut s = State::new(Profile::Rtl);
    let out = run(
        Profile::Rtl,
        &code,
        &mut s,
        &mut RecordIo::default(),
        IMEM_BIT,
        10,
    )
    .unwrap();
    assert_eq!(
        out,
        RunOutcome {
            status: Status::Returned(true),
            steps: 2
        }
    );
}
