//! The THEIA interpreter's arithmetic against the RTL itself: iverilog compiles the original
//! project's VectorALU and its arithmetic units (read from the checkout named by
//! `PICAJIT_THEIA_DIR`) with picajit's own bench (`tests/theia_rtl/alu_tb.v`), runs random
//! vectors for every operation the ALU defines, and the interpreter must give the same result
//! components and branch decisions, and stall on the same operations. Skipped, with a message,
//! when iverilog or the checkout is missing. `PICAJIT_THEIA_RTL_CASES` sets the vector count
//! (default 3000).
//!
//! `programs_match_the_rtl_execution_unit` runs whole programs on the original execution and
//! memory units (bench `tests/theia_rtl/exe_tb.v`) and on the interpreter (rtl profile):
//! fixed control-flow shapes and random programs (`PICAJIT_THEIA_RTL_PROGRAMS`, default 300);
//! registers, result flops, return address, I/O and done must agree. `docs/theia.md`
//! ("Whole-program RTL differential") lists the scratch copy's changes and why.
//!
//! The RTL is simulated from a scratch copy in which the flops that hand results between
//! modules assign non-blockingly (the same hardware; as written, iverilog's event order decides
//! whether a divider result is seen in the cycle it is produced, and it is not). One flop is left
//! as written: the square-root unit's `myInputReady` (`rtl/Module_FixedPointSquareRoot.v`).
//! Made non-blocking, it delays the unit by a cycle, by which time the adder feeding it has
//! returned to 0xFFFFFFFF, and MAG gives 0x016A09E6 for every input; the reference images of the
//! original project need the working reading, which is the one the interpreter implements.

use picajit_interp::theia::exec::{execute, run, Code, Prev, RecordIo, State, Status};
use picajit_interp::theia::table::{self, RtlSupport, Sem, OPS};
use picajit_interp::theia::{Profile, Word};
use picajit_testkit::XorShift;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const RTL_FILES: [&str; 9] = [
    "aDefinitions.v",
    "Module_VectorALU.v",
    "Collaterals.v",
    "Module_RadixRMul.v",
    "Module_FixedPointDivision.v",
    "Module_FixedPointSquareRoot.v",
    "Module_FixedPointAddtionSubstraction.v",
    "Module_ArithmeticComparison.v",
    "Module_Swizzle.v",
];

/// (file, blocking text, replacement): the result hand-over flops.
const PATCHES: &[(&str, &str, &str)] = &[
    (
        "Module_FixedPointAddtionSubstraction.v",
        "R = ( A + wB );",
        "R <= ( A + wB );",
    ),
    (
        "Module_FixedPointAddtionSubstraction.v",
        "R = 64'hFFFFFFFF;",
        "R <= 64'hFFFFFFFF;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "Result = rGreaterThan;",
        "Result <= rGreaterThan;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "Result = ~rGreaterThan;",
        "Result <= ~rGreaterThan;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "Result = wEQ;",
        "Result <= wEQ;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "Result = ~wEQ;",
        "Result <= ~wEQ;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "Result = rGreaterThan || wEQ;",
        "Result <= rGreaterThan || wEQ;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "Result = ~rGreaterThan || wEQ;",
        "Result <= ~rGreaterThan || wEQ;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "default: Result = 0;",
        "default: Result <= 0;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "OutputReady = 1;",
        "OutputReady <= 1;",
    ),
    (
        "Module_ArithmeticComparison.v",
        "OutputReady = 0;",
        "OutputReady <= 0;",
    ),
    (
        "Module_FixedPointDivision.v",
        "xQuotient = ~wAbsQuotient + 1'b1;",
        "xQuotient <= ~wAbsQuotient + 1'b1;",
    ),
    (
        "Module_FixedPointDivision.v",
        "xQuotient = wAbsQuotient;",
        "xQuotient <= wAbsQuotient;",
    ),
    (
        "Module_FixedPointDivision.v",
        "OutputReady = DivReady;",
        "OutputReady <= DivReady;",
    ),
    (
        "Module_FixedPointDivision.v",
        "OutputReady = 0;",
        "OutputReady <= 0;",
    ),
    (
        "Module_FixedPointDivision.v",
        "xQuotient = Quotient[32:0];",
        "xQuotient <= Quotient[32:0];",
    ),
    (
        "Module_FixedPointDivision.v",
        "OutputReady = 1;",
        "OutputReady <= 1;",
    ),
    (
        "Module_FixedPointSquareRoot.v",
        "OutputReady = 1;",
        "OutputReady <= 1;",
    ),
];

fn prerequisites() -> Option<PathBuf> {
    let dir = picajit_testkit::theia_checkout("to simulate its RTL")?;
    if Command::new("iverilog").arg("-V").output().is_err() {
        eprintln!("SKIPPED: iverilog is not installed (apt-get install iverilog)");
        return None;
    }
    Some(dir)
}

/// Copies `files` of the RTL into a scratch directory named after `what`, applies
/// [`PATCHES`] and adds picajit's bench `tests/theia_rtl/{bench}` with `bench.vh`.
fn scratch_rtl(
    checkout: &Path,
    files: &[&str],
    what: &str,
    bench: &str,
    hold_operands: bool,
) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-theia-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for &f in files {
        let mut s = std::fs::read_to_string(checkout.join("rtl").join(f))
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        if f == "Collaterals.v" {
            // FFD_POSEDGE_ASYNC_RESET, the delay flop of every OutputReady chain
            let i = s
                .find("module FFD_POSEDGE_ASYNC_RESET")
                .expect("FFD_POSEDGE_ASYNC_RESET");
            let j = i + s[i..].find("endmodule").unwrap();
            let body = s[i..j]
                .replace("Q = 0;", "Q <= 0;")
                .replace("Q = D;", "Q <= D;");
            s.replace_range(i..j, &body);
            // FFD32_POSEDGE, the ALU's result flops: clocked by OutputReady, which rises in the
            // same time step as the adders' outputs it is derived from; sample after that step
            // settles (MOD's result otherwise depends on event order: `rtl/Module_VectorALU.v`
            // line 1259, "TODO: wait 1 more cycle").
            let i = s.find("module FFD32_POSEDGE").expect("FFD32_POSEDGE");
            let j = i + s[i..].find("endmodule").unwrap();
            let body = s[i..j].replace("Q <= D;", "#0.001 Q <= D;");
            s.replace_range(i..j, &body);
        }
        if hold_operands {
            if f == "Module_VectorALU.v" {
                s = hold_alu_operands(&s);
            }
            if f == "Module_InstructionFetch.v" {
                // The return-address register is clocked by the rising edge of a decode of the
                // presented word; when the fetch unit's muxes settle in a clock edge, that
                // decode can glitch (1, 0, 1 within one time step) and clock the register a
                // second time with the next pointer. An inertial delay of 1 ps filters such
                // zero-width pulses (the original project's reference images need the
                // unglitched return address: its ROM returns to the word after each CALL).
                let old = "always @ (posedge IsCall)";
                assert!(s.contains(old), "{f}: '{old}' not found");
                s = s.replace(
                    old,
                    "wire #0.001 wIsCallSettled = IsCall;\nalways @ (posedge wIsCallSettled)",
                );
            }
            if f == "Module_FixedPointSquareRoot.v" {
                // The start test reads the blocking copy `myInputReady` in the same clock
                // edge that writes it; which of the two always blocks runs first is up to the
                // simulator, and the order that works (the new value seen: the adder's sum is
                // still on `Operand`) is the one the reference images need (see the module
                // documentation). Reading `iInputReady` there is that order, deterministically.
                let old = "if ( myInputReady == 1  )";
                assert!(s.contains(old), "{f}: '{old}' not found");
                s = s.replace(old, "if ( iInputReady == 1  )");
            }
        }
        for &(file, old, new) in PATCHES {
            if file == f {
                assert!(
                    s.contains(old),
                    "{f}: '{old}' not found (another RTL revision?)"
                );
                s = s.replace(old, new);
            }
        }
        std::fs::write(dir.join(f), s).unwrap();
    }
    // The bench and the definitions it includes.
    for file in [bench, "bench.vh"] {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/theia_rtl");
        std::fs::copy(from.join(file), dir.join(file)).unwrap();
    }
    dir
}

/// The VectorALU with its operands held from the trigger cycle to the result: the module body
/// reads each operand port (channels A and B, the instruction pointer LEA reads) as `*_op`,
/// the port's value in the trigger cycle and a flop's copy of it afterwards.
///
/// Why: the execution FSM hands the ALU its operands combinationally from the decoder
/// (`rtl/Module_ExecutionFSM.v`, `oALUChannelX1 = iSource1[95:64]` …, the source flops are
/// commented out), and the fetch unit presents the next instruction one clock after the
/// trigger. With every delay flop non-blocking, the one-cycle operations (COPY, SETX/Y/Z,
/// FRAC, NEG, UNSCALE, SWIZZLE3D, XCHANGEX, RETURN, LEA; `rtl/Module_VectorALU.v`, their
/// `wOutputDelay1Cycle` cases) sample their operand when OutputReady rises, by which time the
/// decoder shows the *next* instruction's sources (its bank select and forwarding compare, the
/// current one's row): `COPY R1 CREG_RESOLUTION` followed by `UNSCALE R1 R1`, as the ROM's
/// initial code has it (`rtl/Module_ROM.v` rows 4-5), would copy the previous result instead of
/// the resolution. In the simulations that rendered the original project's reference images,
/// the OutputReady delay flop assigns blocking (`rtl/Collaterals.v`,
/// `FFD_POSEDGE_ASYNC_RESET`), so OutputReady rises in the clock edge's active region and the
/// result flops sample the operands before that edge updates the decoder: the operands of the
/// trigger cycle. example3's reference image, which picajit reproduces bit for bit with that
/// reading, confirms it. Holding the operands gives that reading deterministically.
fn hold_alu_operands(src: &str) -> String {
    let start = src.find("module VectorALU").expect("module VectorALU");
    let end = start + src[start..].find(");").expect("VectorALU port list") + 2;
    let mut body = src[end..].to_string();
    let mut decl =
        String::from("\n// picajit (scratch copy only): operands held from the trigger cycle\n");
    for (name, width) in [
        ("iChannel_Ax", "`WIDTH"),
        ("iChannel_Bx", "`WIDTH"),
        ("iChannel_Ay", "`WIDTH"),
        ("iChannel_By", "`WIDTH"),
        ("iChannel_Az", "`WIDTH"),
        ("iChannel_Bz", "`WIDTH"),
        ("iCurrentIP", "`ROM_ADDRESS_WIDTH"),
    ] {
        assert!(body.contains(name), "VectorALU uses {name}");
        body = body.replace(name, &format!("{name}_op"));
        writeln!(
            decl,
            "reg [{width}-1:0] {name}_held;\n\
             always @(posedge Clock) if (iInputReady) {name}_held <= {name};\n\
             wire [{width}-1:0] {name}_op = iInputReady ? {name} : {name}_held;"
        )
        .unwrap();
    }
    format!("{}{decl}{body}", &src[..end])
}

/// Writes `input` to `{name}.txt` in the scratch directory, compiles `bench` with the scratch
/// copy's `files` (all but the definitions, which the sources include) and the bench's input
/// file macro (`name` upper-cased) naming it, and runs it; returns its output.
fn simulate(dir: &Path, files: &[&str], bench: &str, name: &str, input: &str) -> String {
    let file = format!("{name}.txt");
    std::fs::write(dir.join(&file), input).unwrap();
    let mut args: Vec<String> = vec!["-g2005".into(), "-I".into(), ".".into()];
    args.push(format!("-D{}=\"{file}\"", name.to_uppercase()));
    args.extend(["-o".into(), "tb".into(), bench.into()]);
    args.extend(files[1..].iter().map(|s| s.to_string()));
    tool(dir, "iverilog", &args);
    String::from_utf8(tool(dir, "vvp", &["-n".into(), "tb".into()])).unwrap()
}

/// Runs `program` with `args` in `dir`; it must succeed. Returns its standard output.
fn tool(dir: &Path, program: &str, args: &[String]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A component: specials, small Q15.17 values, or any 32-bit pattern.
fn component(rng: &mut XorShift) -> u32 {
    let r = rng.next();
    match r % 8 {
        0 => picajit_testkit::THEIA_SPECIALS[(r >> 8) as usize % 8],
        1..=4 => ((r >> 16) as i32 >> (8 + (r >> 3) % 12)) as u32,
        _ => (r >> 24) as u32,
    }
}

#[derive(Debug)]
struct Case {
    op: u16,
    a: [u32; 3],
    b: [u32; 3],
}

/// What the interpreter says for one ALU operation: result, taken, or None when it stalls.
fn interpret(c: &Case) -> Option<([u32; 3], bool)> {
    let info = table::by_code(c.op).unwrap();
    if info.rtl == RtlSupport::Stalls {
        return None;
    }
    let mut s = State::new(Profile::Rtl);
    let (r1, r2, r3) = (71u16, 72u16, 73u16);
    let w = if c.op & table::IMM_BIT != 0 {
        s.regs[r3 as usize] = c.b;
        Word::with_imm(c.op, r3, c.a[0])
    } else {
        s.regs[r1 as usize] = c.a;
        s.regs[r2 as usize] = c.b;
        Word::new(c.op, r3, r1, r2)
    };
    let step = execute(
        Profile::Rtl,
        &mut s,
        &mut RecordIo::default(),
        w,
        info.sem,
        0,
        Prev {
            last_dst: 0xFFFF,
            stale: None,
        },
    )
    .unwrap();
    Some((step.result, step.next.is_some()))
}

#[test]
fn alu_matches_the_rtl_on_random_vectors() {
    let Some(checkout) = prerequisites() else {
        return;
    };
    let n = picajit_testkit::env_count("PICAJIT_THEIA_RTL_CASES").unwrap_or(3000) as usize;
    // Every operation the ALU sees; TMREAD (needs the IO unit) and LEA (the IFU's pointer) are
    // exercised by the interpreter tests only.
    let ops: Vec<&table::OpInfo> = OPS
        .iter()
        .filter(|o| !matches!(o.sem, Sem::TmRead | Sem::Lea))
        .collect();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut cases = Vec::new();
    for i in 0..n {
        let o = ops[i % ops.len()];
        let mut a = [
            component(&mut rng),
            component(&mut rng),
            component(&mut rng),
        ];
        let mut b = [
            component(&mut rng),
            component(&mut rng),
            component(&mut rng),
        ];
        if o.code & table::IMM_BIT != 0 {
            a[1] = 0;
            a[2] = 0;
            if o.sem == Sem::Swizzle3D {
                a[0] = (rng.next() % 24) as u32;
            }
        }
        if matches!(o.sem, Sem::Jump(..)) && rng.next() % 3 == 0 {
            // equal or opposite values, where the tests differ most
            b = if rng.next() % 2 == 0 {
                a
            } else {
                a.map(u32::wrapping_neg)
            };
        }
        cases.push(Case { op: o.code, a, b });
    }
    let dir = scratch_rtl(&checkout, &RTL_FILES, "alu", "alu_tb.v", false);
    let mut vectors = String::new();
    for c in &cases {
        writeln!(
            vectors,
            "{:x} {:x} {:x} {:x} {:x} {:x} {:x}",
            c.op, c.a[0], c.a[1], c.a[2], c.b[0], c.b[1], c.b[2]
        )
        .unwrap();
    }
    let text = simulate(&dir, &RTL_FILES, "alu_tb.v", "vectors", &vectors);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("VCD")).collect();
    assert_eq!(lines.len(), cases.len(), "one line per vector:\n{text}");
    let mut per_op: std::collections::BTreeMap<&str, usize> = Default::default();
    for (c, line) in cases.iter().zip(&lines) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let name = table::by_code(c.op).unwrap().name;
        let cycles: i64 = f[5].parse().unwrap();
        match interpret(c) {
            None => assert_eq!(
                cycles, -1,
                "{name} should stall in the RTL: {c:x?} -> {line}"
            ),
            Some((res, taken)) => {
                assert!(cycles >= 0, "{name} stalled in the RTL: {c:x?}");
                let rtl: Vec<u32> = f[..3]
                    .iter()
                    .map(|h| {
                        u32::from_str_radix(h, 16)
                            .unwrap_or_else(|_| panic!("{name}: unknown bits in {line} for {c:x?}"))
                    })
                    .collect();
                assert_eq!(rtl, res, "{name} {c:x?}: RTL {line}");
                assert_eq!(f[3] == "1", taken, "{name} branch {c:x?}: RTL {line}");
            }
        }
        *per_op.entry(name).or_default() += 1;
    }
    eprintln!(
        "{} vectors over {} operations matched the RTL",
        cases.len(),
        per_op.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The execution unit and the memory unit around it (bench `tests/theia_rtl/exe_tb.v`): the
/// ALU's [`RTL_FILES`] and these.
const EXE_ONLY_FILES: [&str; 10] = [
    "Module_RAM.v",
    "Module_SwapMemory.v",
    "Module_ROM.v",
    "Module_ControlRegister.v",
    "Unit_MEM.v",
    "Unit_EXE.v",
    "Module_InstructionEntryPoint.v",
    "Module_InstructionFetch.v",
    "Module_InstructionDecode.v",
    "Module_ExecutionFSM.v",
];

/// The texture word at an address: the same function as the bench's `tmem_data`.
fn tmem_data(a: [u32; 3]) -> [u32; 3] {
    [
        a[0] ^ 0x1234_5678,
        a[1].wrapping_mul(3),
        a[2].rotate_left(7),
    ]
}

/// The bench's view of I/O: output writes (consecutive repeats are one write: the RTL holds
/// its write enable for as long as the operation is OMWRITE) and texture read addresses.
#[derive(Debug, Default, PartialEq, Eq)]
struct BenchIo {
    omem: Vec<[u32; 6]>,
    tmem: Vec<[u32; 3]>,
}

impl picajit_interp::theia::Io for BenchIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        let w = [addr[0], addr[1], addr[2], data[0], data[1], data[2]];
        if self.omem.last() != Some(&w) {
            self.omem.push(w);
        }
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        self.tmem.push(addr);
        tmem_data(addr)
    }
}

/// What one case did, as the bench prints it or as the interpreter computes it.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// `Some(return value)` when the unit signalled done, `None` when it stalled.
    done: Option<bool>,
    /// The return-address register (`None`: unknown bits, before any CALL was presented).
    return_addr: Option<u16>,
    /// The ALU's result flops.
    last_result: [u32; 3],
    regs: Vec<[u32; 3]>,
    io: BenchIo,
}

/// A program for the bench: instruction-memory row 0 is the entry table (one entry, row 1).
struct Program {
    what: String,
    /// Rows 1.. of the instruction memory.
    code: Vec<u64>,
    regs: Vec<[u32; 3]>,
}

/// A register address for random programs: mostly general registers (64-127), sometimes the
/// IO bank (0-31, where EXE's writes are dropped), the swap bank (32-63) or an alias with
/// address bits above 6 set (the bank mux ignores them; forwarding compares all 16 bits).
fn exe_reg(rng: &mut XorShift) -> u16 {
    match rng.next() % 16 {
        0 => (rng.next() % 32) as u16,
        1 | 2 => 32 + (rng.next() % 32) as u16,
        3 => 0x80 + 64 + (rng.next() % 64) as u16,
        _ => 64 + (rng.next() % 64) as u16,
    }
}

/// A random program of `n` instructions: every operation the RTL completes (RETURN less often),
/// rarely one it never completes, forward and backward jumps, CALL/RET, sources that read the
/// previous instruction's destination or alias its row, and a final RETURN.
fn exe_program(rng: &mut XorShift, n: usize) -> Vec<u64> {
    let imem = |row: u64| 0x8000u16 | (1 + row) as u16;
    let stalls: Vec<&table::OpInfo> = OPS.iter().filter(|o| o.rtl == RtlSupport::Stalls).collect();
    let mut words: Vec<u64> = Vec::with_capacity(n + 1);
    for i in 0..n {
        let info = if rng.next() % 300 == 0 {
            stalls[(rng.next() % stalls.len() as u64) as usize]
        } else {
            loop {
                let o = &OPS[(rng.next() % OPS.len() as u64) as usize];
                if o.rtl == RtlSupport::Completes && (o.sem != Sem::Return || rng.next() % 4 == 0) {
                    break o;
                }
            }
        };
        // The bench's texture memory answers once per rising request, and back-to-back
        // TMREADs keep the request up (`rtl/Module_VectorALU.v`, `oTMEMDataRequest`); the
        // ROM separates its TMREADs with NOPs (`rtl/Module_ROM.v` rows 260-267), and so does
        // this generator.
        let prev_tmread = words
            .last()
            .and_then(|&p| Word::decode(p).info())
            .is_some_and(|o| o.sem == Sem::TmRead);
        let info = if prev_tmread && info.sem == Sem::TmRead {
            table::by_name("NOP").unwrap()
        } else {
            info
        };
        let target = imem(rng.next() % (n as u64 + 1));
        let w = match info.sem {
            Sem::Jump(..) => Word::new(info.code, target, exe_reg(rng), exe_reg(rng)),
            Sem::Jmp | Sem::Call => Word::with_imm(info.code, target, 0),
            Sem::Return => Word::with_imm(info.code, exe_reg(rng), (rng.next() % 2) as u32),
            Sem::Swizzle3D => Word::with_imm(info.code, exe_reg(rng), (rng.next() % 24) as u32),
            Sem::SetX | Sem::SetY | Sem::SetZ | Sem::Ret => {
                Word::with_imm(info.code, exe_reg(rng), component(rng))
            }
            _ => {
                let prev = words.last().map(|&p| Word::decode(p).dst);
                let dst = exe_reg(rng);
                let mut s1 = exe_reg(rng);
                let mut s2 = exe_reg(rng);
                match (prev, rng.next() % 8) {
                    (Some(p), 0 | 1) => s1 = p,
                    (Some(p), 2) => s2 = p,
                    (_, 3) => s1 = dst,
                    (_, 4) => s2 = dst,
                    _ => {}
                }
                Word::new(info.code, dst, s1, s2)
            }
        };
        let _ = i;
        words.push(w.encode());
    }
    let ret = table::by_name("RETURN").unwrap().code;
    words.push(Word::with_imm(ret, 0, (rng.next() % 2) as u32).encode());
    words
}

/// Runs the programs one after the other on the RTL bench and on the interpreter (rtl
/// profile, the ROM loaded, the ALU's result flops and the return address carried from case
/// to case as in the RTL) and compares everything.
fn run_programs(checkout: &Path, rom: &[u64], programs: &[Program]) -> usize {
    let mut cases = String::new();
    for p in programs {
        writeln!(cases, "C {:x}", p.code.len() + 1).unwrap();
        writeln!(cases, "0 8001").unwrap();
        for w in &p.code {
            writeln!(cases, "{:x} {:x}", w >> 32, w & 0xFFFF_FFFF).unwrap();
        }
        for r in &p.regs {
            writeln!(cases, "{:x} {:x} {:x}", r[0], r[1], r[2]).unwrap();
        }
    }
    let files = [&RTL_FILES[..], &EXE_ONLY_FILES].concat();
    let dir = scratch_rtl(checkout, &files, "exe", "exe_tb.v", true);
    let text = simulate(&dir, &files, "exe_tb.v", "cases", &cases);
    let hex = |s: &str| u32::from_str_radix(s, 16).unwrap_or_else(|_| panic!("bits: {s}"));
    let mut got: Vec<Outcome> = Vec::new();
    let mut io = BenchIo::default();
    let mut done = None;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first() {
            Some(&"O") => {
                let w: Vec<u32> = f[1..7].iter().map(|s| hex(s)).collect();
                let w = [w[0], w[1], w[2], w[3], w[4], w[5]];
                if io.omem.last() != Some(&w) {
                    io.omem.push(w);
                }
            }
            Some(&"T") => io.tmem.push([hex(f[1]), hex(f[2]), hex(f[3])]),
            Some(&"D") => {
                done = (f[1] == "1").then_some(f[2] == "1");
                got.push(Outcome {
                    done,
                    return_addr: u16::from_str_radix(f[4], 16).ok(),
                    last_result: [hex(f[5]), hex(f[6]), hex(f[7])],
                    regs: Vec::with_capacity(128),
                    io: std::mem::take(&mut io),
                });
            }
            Some(&"G") => got
                .last_mut()
                .unwrap()
                .regs
                .push([hex(f[2]), hex(f[3]), hex(f[4])]),
            _ => panic!("unexpected bench output: {line}"),
        }
    }
    let _ = done;
    assert_eq!(got.len(), programs.len(), "one result per case");
    let mut state = State::new(Profile::Rtl);
    let mut matched = 0;
    for (p, rtl) in programs.iter().zip(&got) {
        let mut imem = vec![0x8001u64];
        imem.extend(&p.code);
        let code = Code {
            imem,
            rom: rom.to_vec(),
        };
        state.regs.clone_from(&p.regs);
        let mut bio = BenchIo::default();
        let out = run(Profile::Rtl, &code, &mut state, &mut bio, 0x8001, 100_000)
            .unwrap_or_else(|e| panic!("{}: {e}", p.what));
        let done = match out.status {
            Status::Returned(r) => Some(r),
            Status::Stalled { .. } => None,
            Status::Budget { .. } => panic!("{}: budget", p.what),
        };
        let want = Outcome {
            done,
            return_addr: rtl.return_addr.map(|_| state.return_addr),
            last_result: state.last_result,
            regs: state.regs.clone(),
            io: bio,
        };
        if *rtl != want {
            let mut msg = format!("{}: the RTL and the interpreter differ\n", p.what);
            if rtl.done != want.done {
                writeln!(
                    msg,
                    "  done: RTL {:?}, interpreter {:?}",
                    rtl.done, want.done
                )
                .unwrap();
            }
            if rtl.return_addr != want.return_addr {
                writeln!(
                    msg,
                    "  return address: RTL {:x?}, interpreter {:x?}",
                    rtl.return_addr, want.return_addr
                )
                .unwrap();
            }
            if rtl.last_result != want.last_result {
                writeln!(
                    msg,
                    "  result flops: RTL {:08x?}, interpreter {:08x?}",
                    rtl.last_result, want.last_result
                )
                .unwrap();
            }
            for (i, (a, b)) in rtl.regs.iter().zip(&want.regs).enumerate() {
                if a != b {
                    writeln!(msg, "  row {i}: RTL {a:08x?}, interpreter {b:08x?}").unwrap();
                }
            }
            if rtl.io != want.io {
                writeln!(
                    msg,
                    "  I/O: RTL {:x?}\n       interpreter {:x?}",
                    rtl.io, want.io
                )
                .unwrap();
            }
            writeln!(msg, "  program (row 1 on):").unwrap();
            for (i, &w) in p.code.iter().enumerate() {
                let d = Word::decode(w);
                let name = table::by_code(d.op).map_or("?", |o| o.name);
                writeln!(msg, "    {:#06x} {name:<10} {:016x}", 0x8001 + i, w).unwrap();
            }
            panic!(
                "{msg}(the bench and its cases are kept in {})",
                dir.display()
            );
        }
        matched += 1;
    }
    if std::env::var_os("PICAJIT_THEIA_RTL_KEEP").is_some() {
        eprintln!("the bench and its cases are kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    matched
}

/// The bench's first case: defines the ALU's result flops, which the RTL does not reset.
fn warm_up() -> Program {
    let zero = table::by_name("ZERO").unwrap().code;
    let retn = table::by_name("RETURN").unwrap().code;
    Program {
        what: "warm-up".into(),
        code: vec![
            Word::new(zero, 71, 0, 0).encode(),
            Word::with_imm(retn, 0, 1).encode(),
        ],
        regs: vec![[0; 3]; 128],
    }
}

/// Control-flow shapes found by the random programs, kept as fixed cases: RETURN as the first
/// instruction and right after RET (the unit never reports done), after a taken jump, a CALL
/// and a fallthrough (it does), LEA at an entry, a jump target and a return point (address + 1),
/// and a row written through one address and read through another by the next instruction.
fn fixed_programs() -> Vec<Program> {
    let op = |n: &str| table::by_name(n).unwrap().code;
    let retn = |v: u32| Word::with_imm(op("RETURN"), 0, v).encode();
    let inc = |r: u16| Word::new(op("INC"), r, r, 0).encode();
    let lea = |r: u16| Word::new(op("LEA"), r, 0, 0).encode();
    let call = |t: u16| Word::with_imm(op("CALL"), t, 0).encode();
    let jmp = |t: u16| Word::with_imm(op("JMP"), t, 0).encode();
    let ret = Word::with_imm(op("RET"), 0, 0).encode();
    let jeqx = Word::new(op("JEQX"), 0x8003, 75, 76).encode();
    let mut regs = vec![[0u32; 3]; 128];
    regs[70] = [0x1_2345, 0x6_789A, 0xFFFF_0001];
    let shapes: Vec<(&str, Vec<u64>)> = vec![
        ("RETURN first", vec![retn(1)]),
        (
            "RETURN first, then CALLs",
            vec![retn(1), call(0x8001), call(0x8001), call(0x8001)],
        ),
        ("RET to RETURN", vec![call(0x8004), retn(1), 0, ret]),
        (
            "RET to INC, RETURN",
            vec![call(0x8004), inc(71), retn(1), ret],
        ),
        ("JMP to RETURN", vec![jmp(0x8003), inc(71), retn(1)]),
        ("CALL to RETURN", vec![call(0x8003), inc(71), retn(0)]),
        ("JEQX to RETURN", vec![jeqx, inc(71), retn(1)]),
        ("LEA first", vec![lea(72), retn(1)]),
        (
            "LEA at a jump target",
            vec![jmp(0x8003), 0, lea(72), retn(1)],
        ),
        (
            "LEA at a return point",
            vec![call(0x8004), lea(72), retn(1), ret],
        ),
        (
            "JMP to CALL",
            vec![jmp(0x8004), inc(71), retn(1), call(0x8006), retn(0), ret],
        ),
        (
            "RET followed by CALL",
            vec![
                call(0x8004),
                inc(71),
                retn(1),
                ret,
                call(0x8001),
                inc(72),
                retn(0),
            ],
        ),
        (
            "RET to CALL",
            vec![call(0x8005), call(0x8007), retn(1), 0, ret, inc(72), ret],
        ),
        (
            "alias read after a write",
            vec![
                Word::new(op("INC"), 0xC6, 70, 0).encode(),
                Word::new(op("COPY"), 72, 0x46, 0).encode(),
                Word::new(op("COPY"), 73, 0x46, 0).encode(),
                retn(1),
            ],
        ),
    ];
    shapes
        .into_iter()
        .map(|(what, code)| Program {
            what: what.into(),
            code,
            regs: regs.clone(),
        })
        .collect()
}

#[test]
fn programs_match_the_rtl_execution_unit() {
    let Some(checkout) = prerequisites() else {
        return;
    };
    let rom = picajit::theia::rom::load(&checkout).unwrap();
    let n = picajit_testkit::env_count("PICAJIT_THEIA_RTL_PROGRAMS").unwrap_or(300) as usize;
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let mut programs = vec![warm_up()];
    programs.extend(fixed_programs());
    let mut state = State::new(Profile::Rtl);
    for p in &programs {
        let mut imem = vec![0x8001u64];
        imem.extend(&p.code);
        state.regs.clone_from(&p.regs);
        run(
            Profile::Rtl,
            &Code::imem(imem),
            &mut state,
            &mut BenchIo::default(),
            0x8001,
            100,
        )
        .unwrap();
    }
    while programs.len() <= n {
        let len = 2 + (rng.next() % 30) as usize;
        let code = exe_program(&mut rng, len);
        let regs: Vec<[u32; 3]> = (0..128)
            .map(|_| {
                if rng.next() % 4 == 0 {
                    [0; 3]
                } else {
                    [
                        component(&mut rng),
                        component(&mut rng),
                        component(&mut rng),
                    ]
                }
            })
            .collect();
        // keep programs that end (no endless loop, no return into the ROM's code)
        let mut imem = vec![0x8001u64];
        imem.extend(&code);
        let mut s = state.clone();
        s.regs.clone_from(&regs);
        let ends = matches!(
            run(Profile::Rtl, &Code::imem(imem), &mut s, &mut BenchIo::default(), 0x8001, 100),
            Ok(o) if !matches!(o.status, Status::Budget { .. })
        );
        if ends {
            state = s;
            programs.push(Program {
                what: format!("random program {}", programs.len()),
                code,
                regs,
            });
        }
    }
    let matched = run_programs(&checkout, &rom.words, &programs);
    eprintln!("{matched} programs matched the RTL's execution unit");
}
