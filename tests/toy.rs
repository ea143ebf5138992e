//! TOY, the made-up fourth instruction set (`made-up-isa` feature), differentially on every
//! engine: the reference interpreter, the x86-64 JIT and the AArch64 JIT (natively or under the
//! emulator), reached through the Rust API, the `picajit --isa toy` tool and the C ABI, on
//! every operation and operand shape, every control-flow shape (branches both ways, counted
//! and nested loops, HALT, the end of the program, runaway loops stopped by the budget, every
//! budget inside a run) and random programs. `PICAJIT_TOY_CASES` sets the random program count
//! (default 300).
//!
//! Run with `cargo test --features made-up-isa --test toy` (`scripts/test.sh` does); without
//! the feature the file is empty.

#![cfg(feature = "made-up-isa")]

mod cli_run;
mod target_exe;

use cli_run::{fails, ok};
use picajit::toy::engine::Shader;
use picajit::toy::{parse, print};
use picajit::Engine;
use picajit_interp::toy::exec::{resume, run, step, Cursor, State, Status};
use picajit_interp::toy::{AluOp, Cond, Instr, Opcode, Program, Reg, Shape, ShiftOp, REGS};
use picajit_jit::toy::compile;
use picajit_jit::toy::lower::blocks;
use picajit_jit::Backend;
use picajit_testkit::testgen::Rng;

fn reg(n: u8) -> Reg {
    Reg::new(n).expect("a register")
}

fn cases() -> usize {
    std::env::var("PICAJIT_TOY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// Register values worth testing: zero, one, all ones, the sign boundaries, small counters and
/// random words.
fn value(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => rng.pick(&[0, 1, 2, u32::MAX, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_0000]),
        1 => rng.below(12),
        _ => rng.u32(),
    }
}

fn random_state(rng: &mut Rng) -> State {
    State {
        regs: std::array::from_fn(|_| value(rng)),
    }
}

/// A random instruction of operation `op` in a program of `len` instructions, on registers
/// drawn from the first `pool` (few registers: more dependencies and aliased operands).
fn random_instr(rng: &mut Rng, op: Opcode, len: u32, pool: u32) -> Instr {
    let mut r = || reg(rng.below(pool) as u8);
    let (rd, ra, rb) = (r(), r(), r());
    let target = rng.below(len + 1);
    let alu = |op| Instr::Alu { op, rd, ra, rb };
    let shift = |op, n| Instr::Shift { op, rd, ra, n };
    match op {
        Opcode::Li => Instr::Li {
            rd,
            imm: value(rng),
        },
        Opcode::Add => alu(AluOp::Add),
        Opcode::Sub => alu(AluOp::Sub),
        Opcode::And => alu(AluOp::And),
        Opcode::Or => alu(AluOp::Or),
        Opcode::Xor => alu(AluOp::Xor),
        Opcode::Mul => alu(AluOp::Mul),
        Opcode::Shl | Opcode::Shr | Opcode::Sar => {
            let n = if rng.chance(30) {
                rng.pick(&[0, 1, 31])
            } else {
                rng.below(32) as u8
            };
            let op = match op {
                Opcode::Shl => ShiftOp::Shl,
                Opcode::Shr => ShiftOp::Shr,
                _ => ShiftOp::Sar,
            };
            shift(op, n)
        }
        Opcode::Bz | Opcode::Bnz => Instr::Branch {
            cond: if op == Opcode::Bz {
                Cond::Zero
            } else {
                Cond::NonZero
            },
            ra,
            target,
        },
        Opcode::Loop => Instr::Loop { ra, target },
        Opcode::Jmp => Instr::Jmp { target },
        Opcode::Halt => Instr::Halt,
    }
}

/// A random program: every operation, HALT and JMP rarer so that runs go on.
fn random_program(rng: &mut Rng) -> Program {
    let len = 1 + rng.below(40);
    let pool = 1 + rng.below(REGS as u32);
    let instrs = (0..len)
        .map(|_| {
            let op = loop {
                let op = rng.pick(&Opcode::ALL);
                if !matches!(op, Opcode::Halt | Opcode::Jmp) || rng.chance(25) {
                    break op;
                }
            };
            random_instr(rng, op, len, pool)
        })
        .collect();
    Program::new(instrs).expect("targets are in range")
}

/// The JIT backends whose code runs here: the host's natively, AArch64 under the emulator on
/// other hosts (the tests' build has the `emulate-a64` feature there).
fn backends() -> Vec<Backend> {
    if cfg!(target_arch = "x86_64") {
        vec![Backend::X64, Backend::A64]
    } else {
        vec![Backend::A64]
    }
}

/// Every engine of the facade, the default first.
fn engines() -> Vec<Engine> {
    let mut e = vec![Engine::Jit, Engine::Interp];
    e.extend(backends().into_iter().map(Engine::from));
    e
}

/// How many instructions of a run the JIT leaves to the interpreter: those from the start of
/// the first block that does not fit in what is left of the budget (`lower::blocks`).
fn interpreted(program: &Program, init: &State, budget: u64) -> u64 {
    let blocks: std::collections::HashMap<u32, u64> = blocks(program)
        .into_iter()
        .map(|b| (b.start, u64::from(b.end - b.start)))
        .collect();
    let mut st = *init;
    let mut cur = Cursor::default();
    loop {
        if blocks.get(&cur.pc).is_some_and(|&n| budget - cur.steps < n) {
            let out = resume(program, &mut st, cur, budget);
            return out.steps - cur.steps;
        }
        if step(program, &mut st, &mut cur, budget).is_some() {
            return 0;
        }
    }
}

/// Runs `program` on the interpreter and on every JIT backend (compiled once) from `init`
/// with each of `budgets`, and compares outcome and state, and that the code ran everything
/// but the block the budget ran out in.
fn check(program: &Program, init: &State, budgets: &[u64], what: &str) {
    let compiled: Vec<_> = backends()
        .into_iter()
        .map(|b| compile(program, b).unwrap_or_else(|e| panic!("{what}: {b}: {e}")))
        .collect();
    for &budget in budgets {
        let mut want_state = *init;
        let want = run(program, &mut want_state, budget);
        let want_interpreted = interpreted(program, init, budget);
        for c in &compiled {
            let mut st = *init;
            let got = c.run_counted(&mut st, budget);
            assert_eq!(
                (got, st),
                ((want, want_interpreted), want_state),
                "{what}: {} with budget {budget}\n{}",
                c.backend(),
                print(program)
            );
        }
    }
}

/// A run's budgets: every one from 0 to one past the steps the run takes without a limit
/// (so the budget runs out before each instruction once), then the largest; for a run that
/// does not end, every one up to 60 and a long one.
fn every_budget(program: &Program, init: &State) -> Vec<u64> {
    let mut st = *init;
    let out = run(program, &mut st, 10_000);
    if matches!(out.status, Status::Budget { .. }) {
        (0..=60).chain([10_000]).collect()
    } else {
        (0..=out.steps + 1).chain([u64::MAX]).collect()
    }
}

#[test]
fn every_operation_on_every_operand_shape() {
    let mut rng = Rng::seeded(1);
    // Register patterns: distinct, destination = first or second source, all three the
    // same, the first and last registers.
    let patterns: [(u8, u8, u8); 6] = [
        (1, 2, 3),
        (1, 1, 2),
        (1, 2, 1),
        (4, 4, 4),
        (0, 15, 15),
        (15, 0, 7),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for op in Opcode::ALL {
        for &(d, a, b) in &patterns {
            let mut instrs = Vec::new();
            match op.shape() {
                Shape::RegImm => {
                    for imm in [0, 1, u32::MAX, 0x8000_0000, 0x7FFF_FFFF, 0x1234_5678] {
                        instrs.push(Instr::Li { rd: reg(d), imm });
                    }
                }
                Shape::ThreeRegs | Shape::RegRegShift => {
                    // the operation itself, from random register contents
                    for n in [0u8, 1, 5, 31] {
                        let mut i = random_instr(&mut rng, op, 1, 1);
                        match &mut i {
                            Instr::Alu { rd, ra, rb, .. } => {
                                (*rd, *ra, *rb) = (reg(d), reg(a), reg(b))
                            }
                            Instr::Shift {
                                rd, ra, n: amount, ..
                            } => (*rd, *ra, *amount) = (reg(d), reg(a), n),
                            _ => unreachable!(),
                        }
                        instrs.push(i);
                    }
                }
                Shape::RegLabel | Shape::Label => {
                    // a target forward, backward (a loop), to itself and to the end
                    let mut i = random_instr(&mut rng, op, 4, 1);
                    for target in [3, 0, 1, 4] {
                        match &mut i {
                            Instr::Branch { ra, target: t, .. } | Instr::Loop { ra, target: t } => {
                                (*ra, *t) = (reg(a), target)
                            }
                            Instr::Jmp { target: t } => *t = target,
                            _ => unreachable!(),
                        }
                        let li = Instr::Li { rd: reg(d), imm: 9 };
                        let body = vec![
                            li,
                            i,
                            li,
                            Instr::Alu {
                                op: AluOp::Add,
                                rd: reg(b),
                                ra: reg(b),
                                rb: reg(d),
                            },
                        ];
                        let p = Program::new(body).unwrap();
                        for v in [0, 1, 2, 3, u32::MAX] {
                            let mut init = random_state(&mut rng);
                            init.regs[a as usize] = v;
                            let budgets = every_budget(&p, &init);
                            check(
                                &p,
                                &init,
                                &budgets,
                                &format!("{op} target {target} r{a}={v}"),
                            );
                        }
                    }
                    covered.insert(op.mnemonic());
                    continue;
                }
                Shape::Nothing => instrs.extend([Instr::Halt, Instr::Li { rd: reg(d), imm: 1 }]),
            }
            let p = Program::new(instrs).unwrap();
            for _ in 0..8 {
                let init = random_state(&mut rng);
                check(
                    &p,
                    &init,
                    &every_budget(&p, &init),
                    &format!("{op} r{d}, r{a}, r{b}"),
                );
            }
            covered.insert(op.mnemonic());
        }
    }
    assert_eq!(covered.len(), Opcode::ALL.len());
}

/// Register settings before a run: (register, value).
type Settings = &'static [(usize, u32)];

/// Control-flow shapes, as source text: (name, source, register settings).
const SHAPES: &[(&str, &str, Settings)] = &[
    ("empty", "", &[]),
    ("straight line to the end", "li r1, 5\nadd r2, r1, r1\nshl r3, r2, 4", &[]),
    ("forward branch taken", "bnz r0, skip\nli r1, 1\nskip: li r2, 2\nhalt", &[(0, 1)]),
    ("forward branch not taken", "bnz r0, skip\nli r1, 1\nskip: li r2, 2\nhalt", &[]),
    ("bz to the end", "bz r0, end\nli r1, 1\nhalt\nend:", &[]),
    (
        "counted loop",
        "li r1, 10\nagain: add r2, r2, r1\nmul r3, r2, r1\nloop r1, again\nhalt",
        &[],
    ),
    (
        "nested loops",
        "li r1, 4\nouter: li r2, 3\ninner: add r3, r3, r2\nxor r4, r4, r3\nloop r2, inner\nsub r5, r5, r1\nloop r1, outer",
        &[],
    ),
    (
        "while loop with a test at the top",
        "top: bz r1, done\nsar r1, r1, 1\nadd r2, r2, r0\njmp top\ndone: halt",
        &[(0, 3), (1, 0x4000_0000)],
    ),
    (
        "loop exit by branch from the middle",
        "li r3, 1\nl: add r1, r1, r3\nand r4, r1, r2\nbnz r4, out\nshl r3, r3, 1\njmp l\nout: halt",
        &[(2, 0x100)],
    ),
    ("HALT in the middle of a block", "li r1, 1\nhalt\nli r1, 2", &[]),
    ("jump over HALT", "jmp on\nhalt\non: li r1, 7\nhalt", &[]),
    ("runaway jump to itself", "li r1, 1\nspin: jmp spin", &[]),
    ("runaway LOOP from zero", "l: add r1, r1, r2\nloop r0, l\nhalt", &[(2, 3)]),
    ("runaway loop between two blocks", "a: add r1, r1, r1\nbnz r2, b\nb: or r1, r1, r2\njmp a", &[(1, 1), (2, 5)]),
];

fn shape(text: &str, set: &[(usize, u32)]) -> (Program, State) {
    let p = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut s = State::default();
    for &(r, v) in set {
        s.regs[r] = v;
    }
    (p, s)
}

#[test]
fn every_control_flow_shape_at_every_budget() {
    for &(name, text, set) in SHAPES {
        let (p, init) = shape(text, set);
        check(&p, &init, &every_budget(&p, &init), name);
    }
    // The runaway loops really run into the budget, on every engine.
    let (p, init) = shape("li r1, 1\nspin: jmp spin", &[]);
    for backend in backends() {
        let mut st = init;
        let out = compile(&p, backend).unwrap().run(&mut st, 1 << 20);
        assert_eq!(out.status, Status::Budget { pc: 1 }, "{backend}");
        assert_eq!(out.steps, 1 << 20);
    }
}

#[test]
fn the_jit_runs_loops_in_compiled_code() {
    // Only the block the budget runs out in is left to the interpreter.
    let (p, init) = shape("li r1, 1000\nl: add r2, r2, r1\nloop r1, l\nhalt", &[]);
    for backend in backends() {
        let c = compile(&p, backend).unwrap();
        let mut st = init;
        let (out, interpreted) = c.run_counted(&mut st, 1 << 20);
        assert_eq!(
            (out.status, interpreted),
            (Status::Halted { pc: 3 }, 0),
            "{backend}"
        );
        assert_eq!(st.regs[2], 500_500);
        let mut st = init;
        let (out, interpreted) = c.run_counted(&mut st, 1000);
        assert_eq!(out.status, Status::Budget { pc: 2 }, "{backend}");
        assert_eq!(
            interpreted, 1,
            "{backend}: the ADD of the last block that fits"
        );
    }
}

#[test]
fn random_programs_match_the_interpreter() {
    let mut rng = Rng::seeded(0x70E);
    for case in 0..cases() {
        let p = random_program(&mut rng);
        let init = random_state(&mut rng);
        let budgets = [0, 1, 2, 5, 17, 100, 1000, 50_000];
        check(&p, &init, &budgets, &format!("random program {case}"));
    }
}

#[test]
fn text_round_trips_through_the_printer() {
    let mut rng = Rng::seeded(7);
    for _ in 0..200 {
        let p = random_program(&mut rng);
        let text = print(&p);
        assert_eq!(parse(&text).unwrap(), p, "{text}");
    }
}

#[test]
fn the_facade_runs_every_engine_with_one_budget_convention() {
    let mut rng = Rng::seeded(3);
    for _ in 0..40 {
        let p = random_program(&mut rng);
        let init = random_state(&mut rng);
        let mut want_state = init;
        let want = run(&p, &mut want_state, picajit::DEFAULT_BUDGET);
        for engine in engines() {
            let shader = Shader::new(p.clone(), engine).unwrap_or_else(|e| panic!("{engine}: {e}"));
            let used = shader.engine();
            match engine {
                Engine::Jit => assert_eq!(Some(used), Backend::host().map(Engine::from)),
                e => assert_eq!(used, e),
            }
            // 0 is the default budget
            for budget in [0, picajit::DEFAULT_BUDGET] {
                let mut st = init;
                assert_eq!(
                    (shader.run(&mut st, budget), st),
                    (want, want_state),
                    "{engine}"
                );
            }
        }
    }
}

/// Writes `program` to a file for the tool.
fn source_file(name: &str, program: &Program) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-toy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toy"));
    std::fs::write(&path, print(program)).unwrap();
    path
}

#[test]
fn the_tool_runs_every_engine() {
    let mut rng = Rng::seeded(11);
    let mut programs: Vec<(String, Program, State)> = SHAPES
        .iter()
        .enumerate()
        .map(|(k, &(_, text, set))| {
            let (p, s) = shape(text, set);
            (format!("shape{k}"), p, s)
        })
        .collect();
    for k in 0..12 {
        programs.push((
            format!("random{k}"),
            random_program(&mut rng),
            random_state(&mut rng),
        ));
    }
    for (name, p, init) in &programs {
        let path = source_file(name, p);
        for budget in [0u64, 3, 40] {
            let mut want_state = *init;
            let want = run(p, &mut want_state, picajit::budget_or_default(budget));
            let (status, pc) = match want.status {
                Status::Halted { pc } => ("halted", Some(pc)),
                Status::End => ("end", None),
                Status::Budget { pc } => ("budget", Some(pc)),
            };
            let mut args: Vec<String> = ["--isa", "toy", "run", path.to_str().unwrap(), "--json"]
                .map(String::from)
                .to_vec();
            args.extend(["--budget".into(), budget.to_string()]);
            for (r, v) in init.regs.iter().enumerate() {
                args.extend(["--set".into(), format!("r{r}={v:#x}")]);
            }
            for engine in engines() {
                let mut a = args.clone();
                a.extend(["--engine".into(), engine.to_string()]);
                let argv: Vec<&str> = a.iter().map(String::as_str).collect();
                let out = ok(&argv);
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                let want_engine = match engine {
                    Engine::Jit => Engine::from(Backend::host().unwrap()),
                    e => e,
                };
                assert_eq!(v["isa"], "toy");
                assert_eq!(v["engine"], want_engine.to_string(), "{name} {engine}");
                assert_eq!(
                    v["status"], status,
                    "{name} {engine} budget {budget}: {out}"
                );
                assert_eq!(v["pc"], serde_json::json!(pc), "{name} {engine}");
                assert_eq!(v["steps"], want.steps, "{name} {engine}");
                assert_eq!(
                    v["regs"],
                    serde_json::json!(want_state.regs),
                    "{name} {engine}"
                );
            }
        }
    }
}

#[test]
fn the_tool_explains_bad_input() {
    let path = std::env::temp_dir().join(format!("picajit-toy-bad-{}.toy", std::process::id()));
    std::fs::write(&path, "li r1, 2\n  bnz r1, nowhere\n").unwrap();
    let err = fails(&["--isa", "toy", "run", path.to_str().unwrap()]);
    assert!(
        err.contains("line 2, column 11: undefined label 'nowhere'"),
        "{err}"
    );
    let good = source_file("good", &parse("halt").unwrap());
    let good = good.to_str().unwrap();
    let err = fails(&["--isa", "toy", "run", good, "--set", "r16=1"]);
    assert!(err.contains("'r16' is not a register"), "{err}");
    let err = fails(&["--isa", "toy", "run", good, "--engine", "gpu"]);
    assert!(err.contains("unknown engine 'gpu'"), "{err}");
    // disasm prints canonical text; info counts
    let listing = ok(&["--isa", "toy", "disasm", good]);
    assert_eq!(listing, "    halt\n");
    let x64 = ok(&["--isa", "toy", "disasm", good, "--jit", "x64"]);
    assert!(x64.starts_with("; x64, ") && x64.contains("ret"), "{x64}");
    let a64 = ok(&["--isa", "toy", "disasm", good, "--jit", "a64"]);
    assert!(a64.starts_with("; a64, ") && a64.contains("ret"), "{a64}");
    let info = ok(&["--isa", "toy", "info", good]);
    assert!(
        info.contains("1 instructions, 1 blocks") && info.contains("x64 code:"),
        "{info}"
    );
}

/// The C functions, called as a C program would (the header's declarations are these).
mod c {
    pub use picajit::capi::toy::*;
    pub use picajit::capi::{picajit_last_error, PicajitEngineKind, PicajitStatus};
    use std::ffi::{CStr, CString};

    /// The calling thread's last error message.
    pub fn last_error() -> String {
        // SAFETY: picajit_last_error returns a NUL-terminated string that stays valid until
        // this thread's next call.
        unsafe { CStr::from_ptr(picajit_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    /// `picajit_toy_program_create` on `text`.
    pub fn create(
        text: &str,
        engine: u32,
    ) -> Result<*mut PicajitToyProgram, (PicajitStatus, String)> {
        let source = CString::new(text).unwrap();
        let mut p = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string and a writable handle slot.
        match unsafe { picajit_toy_program_create(source.as_ptr(), engine, &mut p) } {
            PicajitStatus::PICAJIT_OK => Ok(p),
            s => Err((s, last_error())),
        }
    }
}

/// The C enum value of an engine.
fn engine_kind(e: Engine) -> u32 {
    c::PicajitEngineKind::from(e) as u32
}

#[test]
fn the_c_abi_runs_every_engine() {
    let mut rng = Rng::seeded(13);
    let mut programs: Vec<(Program, State)> = SHAPES
        .iter()
        .map(|&(_, text, set)| shape(text, set))
        .collect();
    for _ in 0..30 {
        programs.push((random_program(&mut rng), random_state(&mut rng)));
    }
    for (p, init) in &programs {
        let text = print(p);
        for engine in engines() {
            let handle =
                c::create(&text, engine_kind(engine)).unwrap_or_else(|e| panic!("{engine}: {e:?}"));
            let mut kind = u32::MAX;
            // SAFETY: a live program and a writable word.
            let s = unsafe { c::picajit_toy_program_engine(handle, &mut kind) };
            assert_eq!(s, c::PicajitStatus::PICAJIT_OK);
            let used = match engine {
                Engine::Jit => Engine::from(Backend::host().unwrap()),
                e => e,
            };
            assert_eq!(kind, engine_kind(used), "{engine}");
            for budget in [0u64, 1, 4, 25, 700] {
                let mut want_state = *init;
                let want = run(p, &mut want_state, picajit::budget_or_default(budget));
                let mut regs = init.regs;
                let mut result = c::PicajitToyResult {
                    status: u32::MAX,
                    pc: u32::MAX,
                    steps: u64::MAX,
                };
                // SAFETY: a live program, 16 writable words and a writable result.
                let s =
                    unsafe { c::picajit_toy_run(handle, regs.as_mut_ptr(), budget, &mut result) };
                assert_eq!(s, c::PicajitStatus::PICAJIT_OK, "{}", c::last_error());
                let (status, pc) = match want.status {
                    Status::Halted { pc } => (c::PICAJIT_TOY_HALTED, pc),
                    Status::End => (c::PICAJIT_TOY_END, 0),
                    Status::Budget { pc } => (c::PICAJIT_TOY_BUDGET, pc),
                };
                assert_eq!(
                    (result.status, result.pc, result.steps, regs),
                    (status, pc, want.steps, want_state.regs),
                    "{engine} budget {budget}\n{text}"
                );
            }
            // SAFETY: a live program, destroyed once.
            assert_eq!(
                unsafe { c::picajit_toy_program_destroy(handle) },
                c::PicajitStatus::PICAJIT_OK
            );
        }
    }
}

#[test]
fn the_c_abi_reports_bad_input() {
    let (status, message) = c::create("li r1, 2\n  bnz r1, nowhere\n", 0).unwrap_err();
    assert_eq!(status, c::PicajitStatus::PICAJIT_ERR_ASSEMBLY);
    assert!(
        message.contains("line 2, column 11: undefined label 'nowhere'"),
        "{message}"
    );
    let (status, message) = c::create("halt", 7).unwrap_err();
    assert_eq!(status, c::PicajitStatus::PICAJIT_ERR_INVALID_ARGUMENT);
    assert!(message.contains("engine"), "{message}");
    let p = c::create("halt", 0).unwrap();
    let mut result = c::PicajitToyResult {
        status: 0,
        pc: 0,
        steps: 0,
    };
    // SAFETY: NULL registers are reported, not read.
    let s = unsafe { c::picajit_toy_run(p, std::ptr::null_mut(), 0, &mut result) };
    assert_eq!(s, c::PicajitStatus::PICAJIT_ERR_NULL);
    // SAFETY: a live program, destroyed once; the second destroy is reported, not performed.
    unsafe {
        assert_eq!(
            c::picajit_toy_program_destroy(p),
            c::PicajitStatus::PICAJIT_OK
        );
        assert_eq!(
            c::picajit_toy_program_destroy(p),
            c::PicajitStatus::PICAJIT_ERR_INVALID_HANDLE
        );
        let mut regs = [0u32; c::PICAJIT_TOY_REGS];
        let s = c::picajit_toy_run(p, regs.as_mut_ptr(), 0, &mut result);
        assert_eq!(s, c::PicajitStatus::PICAJIT_ERR_INVALID_HANDLE);
    }
}
