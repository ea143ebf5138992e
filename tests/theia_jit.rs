//! THEIA JIT differential suite: interpreter vs x86-64 JIT vs AArch64 JIT (under unicorn), in
//! both profiles, on the examples and on random programs of every operation, operand shape
//! and control-flow shape (forward and backward jumps, CALL/RET, I/O, stalls, undefined
//! operations, register errors, budgets). `PICAJIT_THEIA_JIT_CASES` sets the random program
//! count (default 400 per profile).

use picajit::theia::asm;
use picajit_interp::theia::exec::{run, Code, Io, State, IMEM_BIT};
use picajit_interp::theia::table::{self, Sem, OPS};
use picajit_interp::theia::{regs, Profile, Word};
use picajit_jit::theia::compile;
use picajit_jit::Backend;
use picajit_testkit::XorShift as Rng;

/// Records I/O and answers texture reads with a function of the address, so that both
/// engines' reads are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TestIo {
    log: Vec<(u8, [u32; 3], [u32; 3])>,
}

impl Io for TestIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        self.log.push((0, addr, data));
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        let v = [
            addr[0] ^ 0x1234_5678,
            addr[1].wrapping_mul(3),
            addr[2].rotate_left(7),
        ];
        self.log.push((1, addr, v));
        v
    }
}

/// The x86-64 JIT only where it runs: an AArch64 build (scripts/test-aarch64.sh) has no
/// emulator for it, and runs the AArch64 JIT natively.
fn backends() -> Vec<Backend> {
    if cfg!(target_arch = "x86_64") {
        vec![Backend::X64, Backend::A64]
    } else {
        vec![Backend::A64]
    }
}

/// Runs `code` from `entry` on the interpreter and both JITs and compares everything.
fn check(profile: Profile, code: &Code, init: &State, entry: u16, budget: u64, what: &str) {
    let mut want_state = init.clone();
    let mut want_io = TestIo::default();
    let want = run(profile, code, &mut want_state, &mut want_io, entry, budget)
        .map_err(picajit_jit::Error::Theia);
    for backend in backends() {
        let c = compile(code, profile, backend, &[entry]).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut st = init.clone();
        let mut io = TestIo::default();
        let got = c.run(&mut st, &mut io, entry, budget);
        assert_eq!(got, want, "{what}: {backend} {profile:?} outcome");
        assert_eq!(st, want_state, "{what}: {backend} {profile:?} state");
        assert_eq!(io, want_io, "{what}: {backend} {profile:?} I/O");
    }
}

/// Register components: specials, small Q15.17 values, or any 32-bit pattern.
trait Components {
    fn value(&mut self) -> u32;
}

impl Components for Rng {
    fn value(&mut self) -> u32 {
        let r = self.next();
        match r % 6 {
            // The first seven specials.
            0 => picajit_testkit::THEIA_SPECIALS[(r >> 8) as usize % 7],
            1..=3 => ((r >> 16) as i32 >> (4 + (r >> 3) % 14)) as u32,
            _ => (r >> 24) as u32,
        }
    }
}

fn random_state(rng: &mut Rng, profile: Profile) -> State {
    let mut s = State::new(profile);
    for row in s.regs.iter_mut() {
        if rng.below(3) != 0 {
            *row = [rng.value(), rng.value(), rng.value()];
        }
    }
    s.last_result = [rng.value(), rng.value(), rng.value()];
    if rng.below(4) == 0 {
        s.return_addr = IMEM_BIT + rng.below(40) as u16;
    }
    s
}

/// A register address: mostly user registers, sometimes other banks, aliases and (rarely)
/// addresses beyond the manual profile's 132.
fn reg(rng: &mut Rng) -> u16 {
    match rng.below(12) {
        0 => rng.below(64) as u16,
        1 => 128 + rng.below(4) as u16,
        2 => 0x80 + 71 + rng.below(4) as u16,
        3 if rng.below(4) == 0 => 140 + rng.below(2000) as u16,
        4 => 83 + rng.below(45) as u16,
        _ => 64 + rng.below(19) as u16,
    }
}

/// A random program of `n` instructions in instruction memory (no entry table: the code
/// starts at row 0).
fn random_program(rng: &mut Rng, n: usize) -> Vec<u64> {
    let mut words = Vec::with_capacity(n);
    for i in 0..n {
        let r = rng.below(100);
        let w = if r < 3 {
            // undefined operation
            Word::new(
                [6u16, 46, 50, 0x45, 0x100][rng.below(5) as usize],
                reg(rng),
                reg(rng),
                reg(rng),
            )
        } else {
            let info = &OPS[rng.below(OPS.len() as u64) as usize];
            if matches!(info.sem, Sem::Return) && rng.below(3) != 0 && i + 1 < n {
                // fewer early returns
                Word::new(
                    table::by_name("ADD").unwrap().code,
                    reg(rng),
                    reg(rng),
                    reg(rng),
                )
            } else {
                let target = || -> u16 { 0 };
                let _ = target;
                let t = match rng.below(10) {
                    0 => IMEM_BIT + n as u16 + rng.below(3) as u16, // out of range
                    1 => rng.below(50) as u16,                      // ROM (not loaded)
                    _ => IMEM_BIT + rng.below(n as u64) as u16,
                };
                match info.sem {
                    Sem::Jump(..) => Word::new(info.code, t, reg(rng), reg(rng)),
                    Sem::Jmp | Sem::Call => Word::with_imm(
                        info.code,
                        t,
                        if rng.below(4) == 0 { rng.value() } else { 0 },
                    ),
                    Sem::Return => Word::with_imm(
                        info.code,
                        if rng.below(4) == 0 { reg(rng) } else { 0 },
                        rng.below(4) as u32,
                    ),
                    Sem::Swizzle3D => Word::with_imm(info.code, reg(rng), rng.below(24) as u32),
                    Sem::SetX | Sem::SetY | Sem::SetZ | Sem::Ret => {
                        Word::with_imm(info.code, reg(rng), rng.value())
                    }
                    _ => {
                        // sometimes read what the previous instruction wrote
                        let prev = words.last().map(|&p| Word::decode(p).dst);
                        let mut s1 = reg(rng);
                        let mut s2 = reg(rng);
                        if let Some(p) = prev {
                            if rng.below(3) == 0 {
                                s1 = p;
                            }
                            if rng.below(4) == 0 {
                                s2 = p;
                            }
                        }
                        Word::new(info.code, reg(rng), s1, s2)
                    }
                }
            }
        };
        words.push(w.encode());
    }
    words
}

fn cases() -> usize {
    picajit_testkit::env_count("PICAJIT_THEIA_JIT_CASES").unwrap_or(400) as usize
}

#[test]
fn random_programs_match_the_interpreter() {
    for profile in Profile::ALL {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ profile as u64);
        for case in 0..cases() {
            let n = 2 + rng.below(30) as usize;
            let code = Code::imem(random_program(&mut rng, n));
            let init = random_state(&mut rng, profile);
            let entry = IMEM_BIT + rng.below(n as u64) as u16;
            let budget = [0, 1, 5, 40, 300][rng.below(5) as usize];
            check(
                profile,
                &code,
                &init,
                entry,
                budget,
                &format!("case {case}"),
            );
        }
    }
}

/// Every operation with every operand shape, one at a time, behind an instruction that
/// writes (or drops) a value the operation may read through forwarding.
#[test]
fn every_operation_and_operand_shape() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for profile in Profile::ALL {
        for info in OPS {
            for shape in 0..6 {
                let first = match shape {
                    0 => Word::new(table::by_name("NOP").unwrap().code, 0, 0, 0),
                    1 => Word::new(table::by_name("COPY").unwrap().code, 72, 64, 0),
                    2 => Word::new(table::by_name("COPY").unwrap().code, 3, 64, 0), // dropped write (rtl)
                    3 => Word::new(table::by_name("JMP").unwrap().code, IMEM_BIT + 1, 0, 0),
                    4 => Word::new(table::by_name("ADD").unwrap().code, 131, 64, 65),
                    _ => Word::new(table::by_name("SUB").unwrap().code, 0x80 + 72, 65, 64),
                };
                let (s1, s2) = match shape {
                    2 => (3, 72),
                    3 => (IMEM_BIT + 1, 72),
                    4 => (131, 3),
                    5 => (72, 0x80 + 72),
                    _ => (72, 73),
                };
                let second = match info.sem {
                    Sem::Jump(..) => Word::new(info.code, IMEM_BIT + 3, s1, s2),
                    Sem::Jmp | Sem::Call => Word::with_imm(info.code, IMEM_BIT + 3, 0),
                    Sem::Return => Word::with_imm(info.code, s1, 1),
                    Sem::Swizzle3D => Word::with_imm(info.code, s1, (shape * 4 + 1) as u32 % 23),
                    Sem::SetX | Sem::SetY | Sem::SetZ | Sem::Ret => {
                        Word::with_imm(info.code, s1, rng.value())
                    }
                    _ => Word::new(info.code, 74, s1, s2),
                };
                let code = Code::imem(vec![
                    first.encode(),
                    second.encode(),
                    Word::with_imm(0x40, 0, 0).encode(),
                    Word::with_imm(0x40, 0, 1).encode(),
                ]);
                for _ in 0..4 {
                    let init = random_state(&mut rng, profile);
                    check(
                        profile,
                        &code,
                        &init,
                        IMEM_BIT,
                        100,
                        &format!("{} shape {shape}", info.name),
                    );
                }
            }
        }
    }
}

#[test]
fn examples_match_the_interpreter() {
    let q = |v: f64| (v * 131072.0).round() as i64 as i32 as u32;
    let r = |n: &str| regs::by_name(n).unwrap() as usize;
    let mut rng = Rng(7);
    for (file, entry_name) in [
        ("examples/theia/ray_triangle.theia", "ENTRYPOINT_ADRR_MAIN"),
        (
            "examples/theia/grayscale.theia",
            "ENTRYPOINT_ADRR_PIXELSHADER",
        ),
        (
            "examples/theia/grayscale.theia",
            "ENTRYPOINT_ADRR_USERCONSTANTS",
        ),
    ] {
        let src = std::fs::read_to_string(file).unwrap();
        let p = asm::assemble(&src).unwrap();
        let k = table::ENTRY_POINTS
            .iter()
            .position(|(n, _)| *n == entry_name)
            .unwrap();
        let entry = p.entries[k] as u16;
        let code = Code::imem(p.imem());
        for profile in Profile::ALL {
            for i in 0..40 {
                let mut s = State::new(profile);
                let d = [
                    q((rng.below(200) as f64 - 100.0) / 200.0),
                    q((rng.below(200) as f64 - 100.0) / 200.0),
                    q(1.0),
                ];
                s.regs[r("CREG_RAY_DIRECTION")] = d;
                s.regs[r("CREG_CAMERA_POSITION")] = [rng.value() >> 12, rng.value() >> 12, 0];
                s.regs[r("CREG_V0")] = [q(-1.0), q(-1.0), q(5.0)];
                s.regs[r("CREG_V1")] = [q(2.0), q(-1.0), q(5.0)];
                s.regs[r("CREG_V2")] = [q(-1.0), q(2.0), q(5.0 + i as f64 / 10.0)];
                s.regs[r("CREG_TEXTURE_COLOR")] =
                    [rng.value() >> 14, rng.value() >> 14, rng.value() >> 14];
                check(profile, &code, &s, entry, 10_000, &format!("{file} {i}"));
                // The compiled code runs every instruction (OMWRITE queued for the host)
                // without the interpreter.
                let c = compile(&code, profile, backends()[0], &[entry]).unwrap();
                let mut st = s.clone();
                let (out, interpreted) = c
                    .run_counted(&mut st, &mut TestIo::default(), entry, 10_000)
                    .unwrap();
                assert_eq!(interpreted, 0, "{file}: {out:?}");
                assert!(out.steps > 1);
            }
        }
    }
}

/// Loops that run into the budget at every step count near it.
#[test]
fn budgets_at_every_step() {
    let src = "\tZERO R1 VOID VOID\nL:\n\tINC R1 R1 VOID\n\tJNEX L R1 C1\n\tRETURN RT_TRUE\n";
    check_budgets(src, &[(64, [5 << 17, 0, 0])], 0..14, "");
}

/// `src` from its first word in every profile, from a state with `regs` set, with each of
/// `budgets`.
fn check_budgets(
    src: &str,
    regs: &[(usize, [u32; 3])],
    budgets: impl Iterator<Item = u64> + Clone,
    label: &str,
) {
    let p = asm::assemble(src).unwrap();
    let code = Code::imem(p.imem());
    for profile in Profile::ALL {
        let mut init = State::new(profile);
        for &(r, v) in regs {
            init.regs[r] = v;
        }
        for budget in budgets.clone() {
            let what = format!("{label}budget {budget}");
            check(profile, &code, &init, asm::imem_address(0), budget, &what);
        }
    }
}

/// Every x86-64 instruction the THEIA encoder emits decodes (iced-x86) to a general-purpose
/// integer form from the expected set: the code has no data, no vector forms and no
/// immediate-form traps.
#[test]
fn x64_code_decodes_to_expected_forms() {
    use picajit_jit::iced_x86::{Decoder, DecoderOptions, Mnemonic};
    use picajit_jit::theia::generate;
    let allowed = [
        Mnemonic::Mov,
        Mnemonic::Movsxd,
        Mnemonic::Add,
        Mnemonic::Sub,
        Mnemonic::And,
        Mnemonic::Or,
        Mnemonic::Xor,
        Mnemonic::Imul,
        Mnemonic::Shl,
        Mnemonic::Shr,
        Mnemonic::Sar,
        Mnemonic::Div,
        Mnemonic::Cmp,
        // comparisons with zero (the integer macro-assembler tests a register against itself)
        Mnemonic::Test,
        Mnemonic::Je,
        Mnemonic::Jne,
        Mnemonic::Ja,
        Mnemonic::Jae,
        Mnemonic::Jl,
        Mnemonic::Jg,
        Mnemonic::Jle,
        Mnemonic::Jge,
        Mnemonic::Jmp,
        Mnemonic::Jno,
        Mnemonic::Lea,
        Mnemonic::Push,
        Mnemonic::Pop,
        Mnemonic::Ret,
    ];
    let mut rng = Rng(0xABCD);
    let mut seen = std::collections::BTreeSet::new();
    for case in 0..60 {
        let n = 2 + rng.below(30) as usize;
        let code = Code::imem(random_program(&mut rng, n));
        for profile in Profile::ALL {
            let bytes = generate(&code, profile, Backend::X64, &[IMEM_BIT]).unwrap();
            let mut d = Decoder::with_ip(64, &bytes, 0, DecoderOptions::NONE);
            let mut count = 0;
            while d.can_decode() {
                let ins = d.decode();
                assert!(
                    !ins.is_invalid(),
                    "case {case}: invalid bytes at {:#x}",
                    ins.ip()
                );
                assert!(
                    allowed.contains(&ins.mnemonic()),
                    "case {case}: {:?}",
                    ins.mnemonic()
                );
                seen.insert(format!("{:?}", ins.mnemonic()));
                count += 1;
            }
            assert!(count > 10);
        }
    }
    // the random programs reach the arithmetic recipes
    for m in ["Div", "Imul", "Movsxd", "Sar"] {
        assert!(seen.contains(m), "{m} never emitted: {seen:?}");
    }
}

/// The multiplier's fast path (|A| <= 0x55555555, where the wrapped partial products need no
/// correction) and the full form meet at 0x55555555/0x55555556: MUL, IMUL, MULP, DOT, MAG and
/// CROSS on operands at and around that boundary, 0x80000000 and small values, both signs.
#[test]
fn multiplier_fast_path_boundary() {
    let edges: Vec<u32> = [
        0u32,
        1,
        2,
        0x1FFFF,
        0x20000,
        0x5555_5554,
        0x5555_5555,
        0x5555_5556,
        0x5555_5557,
        0x7FFF_FFFF,
        0x8000_0000,
        0x8000_0001,
        0xAAAA_AAAA,
        0xAAAA_AAAB,
        0xAAAA_AAAC,
        0xFFFF_FFFF,
        0xFFFE_0000,
    ]
    .to_vec();
    let ops = ["MUL", "IMUL", "MULP", "DOT", "MAG", "CROSS"];
    let mut rng = Rng(0x5555);
    for profile in Profile::ALL {
        for op in ops {
            let code = table::by_name(op).unwrap().code;
            let prog = Code::imem(vec![
                Word::new(code, 74, 72, 73).encode(),
                Word::with_imm(0x40, 0, 1).encode(),
            ]);
            for (k, &x) in edges.iter().enumerate() {
                let mut init = State::new(profile);
                let pick = |rng: &mut Rng| edges[rng.below(edges.len() as u64) as usize];
                init.regs[72] = [x, pick(&mut rng), x.wrapping_neg()];
                init.regs[73] = [pick(&mut rng), x, pick(&mut rng)];
                check(
                    profile,
                    &prog,
                    &init,
                    IMEM_BIT,
                    100,
                    &format!("{op} edge {k}"),
                );
            }
        }
    }
}

/// More OMWRITEs in one run than the code's queue holds (it returns to the host to empty
/// it), interleaved with TMREADs, in a loop; the I/O sequence must be the interpreter's.
#[test]
fn io_queue_overflow_and_order() {
    let src = "\tZERO R1 VOID VOID\n\
               L:\n\
               \tINC R1 R1 VOID\n\
               \tOMWRITE OREG_PIXEL_COLOR R1 R2\n\
               \tOMWRITE OREG_PIXEL_COLOR R2 R1\n\
               \tJNEX SKIP R1 C2\n\
               \tTMREAD R2 R1 VOID\n\
               SKIP:\n\
               \tJNEX L R1 C1\n\
               \tRETURN RT_TRUE\n";
    let regs = [
        (64, [40 << 17, 0, 0]),
        (65, [17 << 17, 0, 0]),
        (72, [3, 4, 5]),
    ];
    check_budgets(
        src,
        &regs,
        [5, 70, 71, 72, 100, 10_000].into_iter(),
        "queue, ",
    );
}

/// Rows the code knows to hold x == y == z (DOT, MAG, broadcast swizzles, results of
/// per-component operations on such rows) let per-component operations compute once: every
/// per-component operation on such operands, read from rows, through forwarding and from a
/// dropped write's result flops, and after the knowledge is lost (SETX, a jump target).
#[test]
fn broadcast_operands() {
    let per_component = [
        "ADD", "SUB", "INC", "DEC", "DIV", "MUL", "IMUL", "MOD", "FRAC", "INTP", "NEG", "UNSCALE",
        "RESCALE", "COPY",
    ];
    let mut rng = Rng(0xB0AD);
    for profile in Profile::ALL {
        for op in per_component {
            let src = format!(
                "\tDOT R1 R8 R9\n\
                 \tMAG R2 R8 VOID\n\
                 \tSWIZZLE3D R3 SWIZZLE_YYY\n\
                 \t{op} R4 R1 R2\n\
                 \t{op} R5 R4 R3\n\
                 \t{op} 3 R1 R2\n\
                 \t{op} R6 3 R5\n\
                 \tJMP NEXT\n\
                 NEXT:\n\
                 \t{op} R7 R6 R1\n\
                 \tSETX R1 32'h12345\n\
                 \t{op} R10 R1 R2\n\
                 \tRETURN RT_TRUE\n"
            );
            let p = asm::assemble(&src).unwrap_or_else(|e| panic!("{op}: {e}"));
            let code = Code::imem(p.imem());
            for k in 0..6 {
                let mut init = random_state(&mut rng, profile);
                if k % 2 == 0 {
                    // small values, so that DIV and MUL results are not all saturated
                    for r in [78usize, 79, 73] {
                        init.regs[r] = [0, 1, 2].map(|_| rng.value() >> 12);
                    }
                }
                check(
                    profile,
                    &code,
                    &init,
                    asm::imem_address(0),
                    100,
                    &format!("{op} broadcast {k}"),
                );
            }
        }
    }
}
