//! The THEIA interpreter's arithmetic against the RTL itself: iverilog compiles the original
//! project's VectorALU and its arithmetic units (read from the checkout named by
//! `PICAJIT_THEIA_DIR`) with picajit's own bench (`tests/theia_rtl/alu_tb.v`), runs random
//! vectors for every operation the ALU defines, and the interpreter must give the same result
//! components and branch decisions, and stall on the same operations. Skipped, with a message,
//! when iverilog or the checkout is missing. `PICAJIT_THEIA_RTL_CASES` sets the vector count
//! (default 3000).
//!
//! The RTL is simulated from a scratch copy in which the flops that hand results between
//! modules assign non-blockingly (the same hardware; as written, iverilog's event order decides
//! whether a divider result is seen in the cycle it is produced, and it is not). One flop is left
//! as written: the square-root unit's `myInputReady` (`rtl/Module_FixedPointSquareRoot.v`).
//! Made non-blocking, it delays the unit by a cycle, by which time the adder feeding it has
//! returned to 0xFFFFFFFF, and MAG gives 0x016A09E6 for every input; the reference images of the
//! original project need the working reading, which is the one the interpreter implements.

use picajit_interp::theia::exec::{execute, RecordIo, State};
use picajit_interp::theia::table::{self, RtlSupport, Sem, OPS};
use picajit_interp::theia::{Profile, Word};
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
    let Some(dir) = std::env::var_os("PICAJIT_THEIA_DIR").map(PathBuf::from) else {
        eprintln!(
            "SKIPPED: set PICAJIT_THEIA_DIR to a checkout of freecores/theia_gpu (commit 032c448)"
        );
        return None;
    };
    if Command::new("iverilog").arg("-V").output().is_err() {
        eprintln!("SKIPPED: iverilog is not installed (apt-get install iverilog)");
        return None;
    }
    Some(dir)
}

/// Copies the RTL files into a scratch directory and applies [`PATCHES`].
fn scratch_rtl(checkout: &Path) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picajit-theia-rtl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in RTL_FILES {
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
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/theia_rtl/alu_tb.v"),
        dir.join("alu_tb.v"),
    )
    .unwrap();
    dir
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A component: specials, small Q15.17 values, or any 32-bit pattern.
    fn value(&mut self) -> u32 {
        let r = self.next();
        match r % 8 {
            0 => [
                0,
                1,
                0xFFFF_FFFF,
                0x7FFF_FFFF,
                0x8000_0000,
                0x2_0000,
                0xFFFE_0000,
                0x1_FFFF,
            ][(r >> 8) as usize % 8],
            1..=4 => ((r >> 16) as i32 >> (8 + (r >> 3) % 12)) as u32,
            _ => (r >> 24) as u32,
        }
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
        0xFFFF,
    )
    .unwrap();
    Some((step.result, step.next.is_some()))
}

#[test]
fn alu_matches_the_rtl_on_random_vectors() {
    let Some(checkout) = prerequisites() else {
        return;
    };
    let n: usize = std::env::var("PICAJIT_THEIA_RTL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    // Every operation the ALU sees; TMREAD (needs the IO unit) and LEA (the IFU's pointer) are
    // exercised by the interpreter tests only.
    let ops: Vec<&table::OpInfo> = OPS
        .iter()
        .filter(|o| !matches!(o.sem, Sem::TmRead | Sem::Lea))
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut cases = Vec::new();
    for i in 0..n {
        let o = ops[i % ops.len()];
        let mut a = [rng.value(), rng.value(), rng.value()];
        let mut b = [rng.value(), rng.value(), rng.value()];
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
    let dir = scratch_rtl(&checkout);
    let mut vectors = String::new();
    for c in &cases {
        writeln!(
            vectors,
            "{:x} {:x} {:x} {:x} {:x} {:x} {:x}",
            c.op, c.a[0], c.a[1], c.a[2], c.b[0], c.b[1], c.b[2]
        )
        .unwrap();
    }
    std::fs::write(dir.join("vectors.txt"), vectors).unwrap();
    let mut args: Vec<String> = vec![
        "-g2005".into(),
        "-I".into(),
        ".".into(),
        "-DVECTORS=\"vectors.txt\"".into(),
        "-o".into(),
        "tb".into(),
        "alu_tb.v".into(),
    ];
    args.extend(RTL_FILES[1..].iter().map(|s| s.to_string()));
    let out = Command::new("iverilog")
        .args(&args)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iverilog: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("vvp")
        .args(["-n", "tb"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "vvp: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
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
