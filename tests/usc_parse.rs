//! USC ISR text: every code example of seed 004 parses, those inside the scope run and the
//! others stop with "not supported: NAME"; canonical printing round-trips; every structural
//! error of a group is reported with its line and column.

use picajit::usc::{compile, parse, print, UscError};
use picajit_interp::usc::{ExecError, State, UscOptions};

const SEED_EXAMPLES: &str = include_str!("usc/seed_examples.usc");

/// The examples of `tests/usc/seed_examples.usc`, by number.
fn examples() -> Vec<(usize, String, String)> {
    let mut out: Vec<(usize, String, String)> = Vec::new();
    for line in SEED_EXAMPLES.lines() {
        if let Some(rest) = line.strip_prefix("#### ") {
            let (n, where_) = rest.split_once(": ").unwrap();
            out.push((n.parse().unwrap(), where_.to_string(), String::new()));
        } else if let Some(last) = out.last_mut() {
            last.2.push_str(line);
            last.2.push('\n');
        }
    }
    out
}

/// The examples that stop with "not supported: name" when prepared; every other one runs.
/// Written from the seed's text: the scope of issue 18 leaves out backend instructions (uvsw,
/// fitr), texturing (smp*, itrsm2d), F16 SOP, derivatives, FSINC/FARCTANC/FRED and data access
/// (wdf).
const NOT_SUPPORTED: &[(usize, &str)] = &[
    (0, "uvsw"),
    (1, "source slot s2 without a declaration"),
    (2, "mov to a feed-through"),
    (3, "fitr.pixel"),
    (7, "smp2d.fcnorm.array"),
    (8, "itrsm2d.pixel.fcnorm.schedwdf"),
    (12, "smp2d.fcnorm.both"),
    (13, "smp2d.fcnorm.soo"),
    (22, "sop"),
    (23, "fdsx"),
    (24, "fdsy"),
    (25, "fsinc"),
    (26, "farctanc"),
    (27, "fred.sin"),
    (56, "smp2d.fcnorm.replace.integer"),
    (57, "itrsm2d.pixel.fcnorm.schedwdf"),
];

#[test]
fn every_seed_example_parses_and_runs_or_is_not_supported() {
    let ex = examples();
    assert_eq!(
        ex.len(),
        58,
        "the seed has 58 distinct code examples with groups"
    );
    let mut ran = 0;
    for (k, (n, where_, text)) in ex.iter().enumerate() {
        assert_eq!(*n, k, "the examples are numbered in order");
        let expect = NOT_SUPPORTED.iter().find(|e| e.0 == k).map(|e| e.1);
        let program =
            parse(text).unwrap_or_else(|e| panic!("example {n} ({where_}) does not parse: {e}"));
        assert!(!program.groups.is_empty());
        match (compile(text, UscOptions::default()), expect) {
            (Ok(prepared), None) => {
                let mut st = State::new(16).unwrap();
                let out = prepared.run(&mut st, 1000).unwrap();
                assert_eq!(out.steps as usize, prepared.groups.len(), "example {n}");
                ran += 1;
            }
            (Err(UscError::Prepare(e @ ExecError::NotSupported { .. })), Some(name)) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("not supported: {name}")),
                    "example {n} ({where_}): {msg}"
                );
            }
            (r, _) => panic!("example {n} ({where_}): expected {expect:?}, got {r:?}"),
        }
    }
    assert_eq!(ran, 42);
}

#[test]
fn seed_examples_print_canonically_and_round_trip() {
    for (n, _, text) in examples() {
        let p = parse(&text).unwrap();
        let printed = print::program(&p);
        let again = parse(&printed).unwrap_or_else(|e| panic!("example {n}: {e}\n{printed}"));
        assert_eq!(print::program(&again), printed, "example {n}");
        assert_eq!(again.groups.len(), p.groups.len());
        for (a, b) in again.groups.iter().zip(&p.groups) {
            assert_eq!(a.instrs.len(), b.instrs.len());
            for (x, y) in a.instrs.iter().zip(&b.instrs) {
                assert_eq!(x.op(), y.op(), "example {n}");
                assert_eq!(x.operands, y.operands, "example {n}");
                assert_eq!(x.mods, y.mods, "example {n}");
            }
        }
    }
}

#[test]
fn canonical_form_of_seed_shorthands() {
    for (text, canonical) in [
        (
            "0 : mov ft0, sh2 mov ft1, sh0 tstes32 ftt, sh1, ft1 mov i0.e0.e1.e2.e3, ft0, ftt, ft1, ft0",
            "0 :\n    mov ft0, sh2\n    mov ft1, sh0\n    tste.s32 ftt, _, sh1, ft1\n    mov i0.e0.e1.e2.e3, ft0, ftt, ft1, ft0\n",
        ),
        (
            "0 : lsl ft2, sh2, sh1 ftb ft3, ft2 and ft4, ft2, sh3 asr ft5, ft4, sh1, ft3 tz p0, ft5",
            "0 :\n    lsl ft2, sh2, sh1\n    ftb ft3, ft2\n    and ft4, _, ft2, _, sh3\n    asr.ftb ft5, ft4, sh1\n    tz p0, ft5\n",
        ),
        (
            "0 : pck.s32.rndzero ft2, sh0 mov i0, ft2; 1 : if(!p0) { umadd32 ft0, sh1, i0, sh2, mov i0, ft0; }",
            "0 :\n    pck.s32.roundzero ft2, sh0\n    mov i0, ft2\n1 : if (!p0)\n    umadd32 ft0, sh1, i0, sh2, _\n    mov i0, ft0\n",
        ),
    ] {
        assert_eq!(print::program(&parse(text).unwrap()), canonical, "{text}");
    }
}

/// Each malformed group gives its error at the right line and column.
#[test]
fn malformed_groups_report_line_and_column() {
    let cases: &[(&str, u32, u32, &str)] = &[
        // Wrong phase order.
        (
            "0 : fadd ft0, sh0, sh1\n fadd ft1, sh2, sh3\n    fmul ft0, sh4, sh5",
            3,
            5,
            "wrong phase order",
        ),
        (
            "0 :\n  mov r0, ft0\n  fadd ft0, sh0, sh1",
            3,
            3,
            "wrong phase order",
        ),
        (
            "0 : tstz.f32 ftt, p0, sh0\n fadd ft2, sh1, ft0",
            2,
            2,
            "wrong phase order",
        ),
        (
            "0 : movc w0, w1, ftt, ft0, ft1\n tstz ftt, _, sh0",
            2,
            2,
            "wrong phase order",
        ),
        (
            "0 : and ft4, _, ft2, _, sh0\n  lsl ft2, sh1, sh2",
            2,
            3,
            "wrong phase order",
        ),
        (
            "0 : fadd ft1, sh0, sh1",
            1,
            5,
            "phase 1 instruction without a phase 0",
        ),
        (
            "0 : fadd ft0, sh0, sh1\n fmul ft0, sh2, sh3",
            2,
            2,
            "two phase 0 instructions",
        ),
        // Too many sources.
        (
            "0 : fmad ft0, sh0, sh1, sh2\n fmad ft1, sh3, sh4, sh5\n fadd ft2, sh6, ft0",
            3,
            2,
            "too many sources",
        ),
        (
            "0 : fmad ft0, sh0, sh1, sh2\n fmad ft1, sh3, sh4, sh5\n tste.f32 ftt, _, sh6, sh7",
            3,
            2,
            "too many sources",
        ),
        (
            "0 : fmad ft0, sh0, sh1, sh2\n fmad ft1, sh3, sh4, sh5\n mov r0, ft0\n mov r1, sh9",
            4,
            2,
            "too many sources",
        ),
        // Feed-through read before it is produced.
        ("0 : mov r0, ft1", 1, 5, "ft1 before it is produced"),
        (
            "0 : fadd ft0, sh0, sh1\n fmul ft2, sh2, ft1",
            2,
            2,
            "ft1 before it is produced",
        ),
        ("0 : lsl ft5, ft4, sh0", 1, 5, "ft4 before it is produced"),
        (
            "0 : fadd ft0, sh0, sh1\n movc w0, w1, ftt, ft0, ft0",
            2,
            2,
            "ftt before it is produced",
        ),
        ("0 : tstc ftt, p0", 1, 5, "carry"),
        (
            "0 : cbs ft3, sh0\n asr.mtb ft5, ft4, sh1",
            2,
            2,
            "before it is produced",
        ),
        // Mixed ALUs, too many writes, other shapes.
        (
            "0 : fadd ft0, sh0, sh1\n cbs ft3, sh2",
            2,
            2,
            "bitwise instruction in a group of the main ALU",
        ),
        (
            "0 : fadd ft0, sh0, sh1\n mov r0, ft0\n mov r1, ft0\n mov r2, ft0",
            4,
            2,
            "too many destinations",
        ),
        (
            "0 : fadd ft0, sh0, sh1\n mov r0, ft0\n mov r0.e1, ft0",
            3,
            2,
            "written twice",
        ),
        ("0 : frcp r0, sh0\n mov r1, sh1", 1, 5, "only instruction"),
        (
            "0 : if (p0) cndst 0, r0, r0, 1",
            1,
            1,
            "not an `if` predicate",
        ),
        // Operand and syntax errors.
        ("0 : fadd ft0, sh0, sh1.neg", 1, 20, ".neg not allowed"),
        ("0 : fadd ft0, sh0", 1, 5, "takes 3 operands"),
        ("0 : fadd ft3, sh0, sh1", 1, 10, "expected ft"),
        ("0 : fadd ft0, sh0, c40", 1, 20, "not a special constant"),
        ("0 : fadd ft0, r248, sh0", 1, 15, "r248 does not exist"),
        ("0 : fadd.foo ft0, sh0, sh1", 1, 5, "unknown modifier .foo"),
        (
            "0 : fadd ft0, sh0.bar, sh1",
            1,
            15,
            "unknown operand modifier",
        ),
        ("0 : frob ft0, sh0", 1, 5, "unknown instruction"),
        ("fadd ft0, sh0, sh1", 1, 1, "group header"),
        ("1 : mov r0, sh0\n0 : mov r1, sh1", 2, 1, "must increase"),
        ("0 : { mov r0, sh0", 1, 18, "missing `}`"),
        ("0 : mov r0, sh0,, sh1", 1, 17, "expected an operand"),
        ("0 : mov r0, r1[idx0]", 1, 15, "indexed register"),
        ("0 : fadd ft0, sh0, sh1 @", 1, 24, "unexpected character"),
        ("0 : pck ft2, sh0", 1, 5, "needs a format"),
        ("0 : asr ft5, ft4, sh0", 1, 5, "needs a sign position"),
        ("0 : ba 7", 1, 5, ""),
        ("0 :", 1, 1, "no instruction"),
    ];
    for (text, line, col, what) in cases {
        match parse(text) {
            Err(e) => {
                assert!(e.message.contains(what), "{text:?}: {e}");
                assert_eq!((e.span.line, e.span.col), (*line, *col), "{text:?}: {e}");
            }
            Ok(p) => {
                // Errors only preparation finds (a branch target that does not exist).
                let e =
                    picajit_interp::usc::Prepared::new(&p, UscOptions::default()).expect_err(text);
                let s = e.to_string();
                assert!(s.starts_with(&format!("{line}:{col}:")), "{text:?}: {s}");
            }
        }
    }
}

/// Mutated seed examples and examples (characters and tokens deleted, duplicated, replaced)
/// never make the parser, preparation, the interpreter or the JIT panic; what prepares runs
/// the same on both engines.
#[test]
fn mutated_programs_never_panic() {
    use picajit::usc::testgen::{random_state, Rng};
    let mut sources: Vec<String> = examples().into_iter().map(|e| e.2).collect();
    for f in ["vertex_transform", "lighting", "divergent_loop"] {
        sources.push(std::fs::read_to_string(format!("examples/usc/{f}.usc")).unwrap());
    }
    const PIECES: [&str; 16] = [
        ",", ":", ";", "{", "}", "(", ")", "ft9", "r999", "c40", ".e3", ".neg", "if (p0)", "\n",
        "-", "0x",
    ];
    let mut rng = Rng::new(77);
    let jit = picajit_jit::usc::x64::available();
    let mut ran = 0;
    for round in 0..3000 {
        let mut s: Vec<char> = sources[round % sources.len()].chars().collect();
        for _ in 0..1 + rng.below(4) {
            if s.is_empty() {
                break;
            }
            let at = rng.below(s.len() as u64) as usize;
            match rng.below(4) {
                0 => {
                    s.remove(at);
                }
                1 => {
                    let c = s[rng.below(s.len() as u64) as usize];
                    s.insert(at, c);
                }
                2 => {
                    for (k, c) in rng.pick(&PIECES).chars().enumerate() {
                        s.insert(at + k, c);
                    }
                }
                _ => s[at] = *rng.pick(&['0', '9', 'x', ' ', '.', '_', 'f']),
            }
        }
        let text: String = s.into_iter().collect();
        let Ok(p) = parse(&text) else { continue };
        let _ = print::program(&p);
        let Ok(prepared) = picajit_interp::usc::Prepared::new(&p, UscOptions::default()) else {
            continue;
        };
        let st = random_state(1 + round % 16, round as u64);
        let mut a = st.clone();
        let ra = prepared.run(&mut a, 300);
        ran += 1;
        if jit {
            let code = picajit_jit::usc::x64::compile(&prepared).unwrap();
            let mut b = st.clone();
            assert_eq!(
                code.run(&prepared, &mut b, 300),
                ra.map_err(picajit_jit::Error::Usc),
                "{text}"
            );
            assert!(a == b, "{text}");
        }
    }
    // Most mutations break the text; a good share still runs.
    assert!(ran > 100, "{ran} mutated programs ran");
}
