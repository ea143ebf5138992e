//! The USC reference interpreter, instruction by instruction. Expected values come from the
//! seed's text (its formulas, special cases and appendix constants), computed here
//! independently of the interpreter: exact integer arithmetic, IEEE operations of the host,
//! and constants of seed 004's appendix.

use picajit::usc::{compile, register};
use picajit_interp::usc::{Outcome, State, Status, UscOptions};

const NAN: u32 = 0x7FC0_0000;

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// Runs `text` on `n` instances after setting registers: a name with one value (all
/// instances) or one per instance; `p0` takes 0/1 per instance.
fn run_opts(text: &str, n: usize, set: &[(&str, &[u32])], opts: UscOptions) -> (State, Outcome) {
    let prog = compile(text, opts).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut st = State::new(n).unwrap();
    for (name, vals) in set {
        for l in 0..n {
            let v = if vals.len() == 1 { vals[0] } else { vals[l] };
            if *name == "p0" {
                st.set_p0(l, v != 0);
            } else {
                st.set(register(name).unwrap(), l, v);
            }
        }
    }
    let out = prog.run(&mut st, 10_000).unwrap();
    (st, out)
}

fn run(text: &str, n: usize, set: &[(&str, &[u32])]) -> State {
    run_opts(text, n, set, UscOptions::default()).0
}

fn get(st: &State, name: &str, lane: usize) -> u32 {
    st.get(register(name).unwrap(), lane)
}

/// One-instance result of `r0` after `text`.
fn r0(text: &str, set: &[(&str, &[u32])]) -> u32 {
    get(&run(text, 1, set), "r0", 0)
}

/// A phase-0 float instruction with two sources, written to r0.
fn f2(instr: &str, a: u32, b: u32) -> u32 {
    r0(
        &format!("0 : {instr} ft0, sh0, sh1\n mov r0, ft0"),
        &[("sh0", &[a]), ("sh1", &[b])],
    )
}

#[test]
fn fmad_is_fused_by_default_and_selectable() {
    // FT0 = S0 * S1 + S2 (seed 004, FMAD).
    let prog = "0 : fmad ft0, sh0, sh1, sh2\n mov r0, ft0";
    let set: &[(&str, &[u32])] = &[("sh0", &[f(1.5)]), ("sh1", &[f(2.0)]), ("sh2", &[f(0.25)])];
    assert_eq!(r0(prog, set), f(3.25));
    // (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly; rounding the product first gives 0.
    let a = f(1.0 + f32::EPSILON);
    let c = f(-(1.0 + 2.0 * f32::EPSILON));
    let set: &[(&str, &[u32])] = &[("sh0", &[a]), ("sh1", &[a]), ("sh2", &[c])];
    assert_eq!(r0(prog, set), f(2f32.powi(-46)));
    let unfused = UscOptions::default().with_fused_fmad(false);
    assert_eq!(get(&run_opts(prog, 1, set, unfused).0, "r0", 0), 0);
    // Phase 1 reads S3-S5 and writes ft1; modifiers .abs/.neg on every source, .flr on the addend.
    let prog = "0 : fmad ft0, sh0, sh1, sh2\n fmad ft1, sh3.neg, sh4.abs, sh5.flr\n mov r0, ft1";
    let set: &[(&str, &[u32])] = &[
        ("sh0", &[0]),
        ("sh1", &[0]),
        ("sh2", &[0]),
        ("sh3", &[f(2.0)]),
        ("sh4", &[f(-3.0)]),
        ("sh5", &[f(-0.5)]),
    ];
    assert_eq!(r0(prog, set), f(-2.0 * 3.0 + -1.0));
}

#[test]
fn fadd_fmul_with_modifiers() {
    assert_eq!(f2("fadd", f(1.25), f(2.5)), f(3.75));
    assert_eq!(f2("fmul", f(1.25), f(-2.0)), f(-2.5));
    // .flr "before absolute/negate": floor(-1.5) = -2, .abs = 2, .neg = -2.
    assert_eq!(
        r0(
            "0 : fadd ft0, sh0.flr.abs.neg, sh1.abs\n mov r0, ft0",
            &[("sh0", &[f(-1.5)]), ("sh1", &[f(-0.25)])]
        ),
        f(-2.0 + 0.25)
    );
    // .flr keeps -0.0, infinities and NaN; a NaN result is the canonical +NaN.
    assert_eq!(f2("fadd", 0x8000_0000, 0x8000_0000), 0x8000_0000);
    assert_eq!(
        r0(
            "0 : fadd ft0, sh0.flr, sh1\n mov r0, ft0",
            &[("sh0", &[0x8000_0000]), ("sh1", &[0x8000_0000])]
        ),
        0x8000_0000
    );
    assert_eq!(f2("fadd", f(f32::INFINITY), f(f32::NEG_INFINITY)), NAN);
    assert_eq!(f2("fmul", 0xFFC1_2345, f(1.0)), NAN);
    assert_eq!(f2("fmul", f(0.0), f(f32::INFINITY)), NAN);
    // Denormals are kept.
    assert_eq!(f2("fmul", 0x0080_0000, f(0.5)), 0x0040_0000);
    // .sat clamps to [+0, 1]: -0.5 → +0, 1.25 → 1, NaN → +0, -0 → +0.
    for (a, want) in [
        (f(-0.5), 0),
        (f(1.25), f(1.0)),
        (f(0.75), f(0.75)),
        (NAN, 0),
        (0x8000_0000, 0),
    ] {
        assert_eq!(
            r0("0 : fadd.sat ft0, sh0, c0\n mov r0, ft0", &[("sh0", &[a])]),
            want,
            "{a:#x}"
        );
    }
    // Phase 2: FT2 = IS3 + FTE, FT2 = IS3 * FTE.
    assert_eq!(
        r0(
            "0 : fadd ft0, sh0, c0\n fmul ft2, sh1.neg, ft0.abs\n mov r0, ft2",
            &[("sh0", &[f(-3.0)]), ("sh1", &[f(0.5)])]
        ),
        f(-1.5)
    );
    assert_eq!(
        r0(
            "0 : fadd ft0, sh0, c0\n fadd ft1, sh1, c0\n fadd ft2, sh2, ft1\n mov r0, ft2",
            &[("sh0", &[f(1.0)]), ("sh1", &[f(2.0)]), ("sh2", &[f(4.0)])]
        ),
        f(6.0)
    );
}

#[test]
fn mbyp_moves_bits_with_sign_modifiers() {
    // MBYP FT0 = S0 (also written `mov ft0, S0`): a move, the NaN payload is kept.
    assert_eq!(
        r0(
            "0 : mbyp ft0, sh0\n mov r0, ft0",
            &[("sh0", &[0x7FC0_1234])]
        ),
        0x7FC0_1234
    );
    assert_eq!(
        r0(
            "0 : mov ft0, sh0.neg\n mov r0, ft0",
            &[("sh0", &[0x7FC0_1234])]
        ),
        0xFFC0_1234
    );
    assert_eq!(
        r0("0 : mov ft0, sh0.abs\n mov r0, ft0", &[("sh0", &[f(-2.0)])]),
        f(2.0)
    );
    assert_eq!(
        r0_r1(
            "0 : mov ft0, sh0\n mbyp ft1, sh1.neg.abs\n mov r0, ft0\n mov r1, ft1",
            1,
            &[("sh0", &[7]), ("sh1", &[f(3.0)])],
        ),
        (7, f(-3.0))
    );
}

fn complex(op: &str, a: u32) -> u32 {
    r0(&format!("0 : {op} r0, sh0"), &[("sh0", &[a])])
}

#[test]
fn complex_instructions_special_cases_from_the_seed() {
    let inf = f(f32::INFINITY);
    let ninf = f(f32::NEG_INFINITY);
    // FRCP(NaN) = +NaN, FRCP(±INF) = ±0, FRCP(±0) = ±INF, FRCP(±1.0) = ±1.0 exactly.
    assert_eq!(complex("frcp", 0xFF80_0001), NAN);
    assert_eq!(complex("frcp", inf), 0);
    assert_eq!(complex("frcp", ninf), 0x8000_0000);
    assert_eq!(complex("frcp", 0), inf);
    assert_eq!(complex("frcp", 0x8000_0000), ninf);
    assert_eq!(complex("frcp", f(1.0)), f(1.0));
    assert_eq!(complex("frcp", f(-1.0)), f(-1.0));
    assert_eq!(complex("frcp", f(3.0)), f(1.0 / 3.0));
    // FRSQ: NaN → +NaN, +INF → +0, ±0 → ±INF, −X → +NaN, 1.0 → 1.0 exactly.
    assert_eq!(complex("frsq", NAN | 0x8000_0000), NAN);
    assert_eq!(complex("frsq", inf), 0);
    assert_eq!(complex("frsq", 0), inf);
    assert_eq!(complex("frsq", 0x8000_0000), ninf);
    assert_eq!(complex("frsq", f(-4.0)), NAN);
    assert_eq!(complex("frsq", f(1.0)), f(1.0));
    assert_eq!(complex("frsq", f(4.0)), f(0.5));
    // 1/sqrt(2) and sqrt(2), rounded: the appendix's c92 and c91.
    assert_eq!(complex("frsq", f(2.0)), 0x3F35_04F3);
    assert_eq!(complex("fsqrt", f(2.0)), 0x3FB5_04F3);
    assert_eq!(complex("fsqrt", f(6.25)), f(2.5));
    assert_eq!(complex("fsqrt", 0x8000_0000), 0x8000_0000);
    assert_eq!(complex("fsqrt", f(-1.0)), NAN);
    // log2: NaN → +NaN, +INF → +INF, ±0 → −INF, −X → +NaN, 1.0 → +0.0.
    assert_eq!(complex("flog", 0xFFC0_0000), NAN);
    assert_eq!(complex("flog", inf), inf);
    assert_eq!(complex("flog", 0), ninf);
    assert_eq!(complex("flog", 0x8000_0000), ninf);
    assert_eq!(complex("flog", f(-2.0)), NAN);
    assert_eq!(complex("flog", f(1.0)), 0);
    assert_eq!(complex("flog", f(8.0)), f(3.0));
    assert_eq!(complex("flog", 1), f(-149.0));
    // log2(10) and log2(e) rounded: the appendix's c154 and c155 (e as the binary32 of c89).
    assert_eq!(complex("flog", f(10.0)), 0x4054_9A78);
    assert_eq!(complex("flog", 0x402D_F854), 0x3FB8_AA3B);
    // exp2: NaN → +NaN, +INF → +INF, ±0 → +1.0.
    assert_eq!(complex("fexp", 0x7F80_0001), NAN);
    assert_eq!(complex("fexp", inf), inf);
    assert_eq!(complex("fexp", 0), f(1.0));
    assert_eq!(complex("fexp", 0x8000_0000), f(1.0));
    assert_eq!(complex("fexp", ninf), 0);
    assert_eq!(complex("fexp", f(3.0)), f(8.0));
    assert_eq!(complex("fexp", f(-149.0)), 1);
    assert_eq!(complex("fexp", f(-150.0)), 0);
    assert_eq!(complex("fexp", f(128.0)), inf);
    // 2^0.5 and 2^-0.5 rounded: c91 and c92.
    assert_eq!(complex("fexp", f(0.5)), 0x3FB5_04F3);
    assert_eq!(complex("fexp", f(-0.5)), 0x3F35_04F3);
    // Source modifiers apply before the operation.
    assert_eq!(
        r0("0 : frcp r0, sh0.abs.neg", &[("sh0", &[f(4.0)])]),
        f(-0.25)
    );
}

/// FLOG/FEXP against the host's f64 functions on a sweep of inputs: equal whenever the f64
/// value is not within 2^-40 (relative) of a rounding midpoint, and never more than one ulp
/// apart. An independent check of correct rounding for nearly every input.
#[test]
fn flog_fexp_round_correctly_on_a_sweep() {
    use picajit_interp::usc::float::{fexp, flog};
    let mut checked = 0;
    let mut x: u32 = 0x0000_1234;
    while x < 0x7F80_0000 {
        for (ours, reference) in [
            (flog(x), f64::from(f32::from_bits(x)).log2()),
            (fexp(x), f64::from(f32::from_bits(x)).exp2()),
            (
                fexp(x | 0x8000_0000),
                (-f64::from(f32::from_bits(x))).exp2(),
            ),
        ] {
            let r = reference as f32;
            if !r.is_finite() || r == 0.0 || (r as f64).abs() < 1.2e-38 {
                continue;
            }
            let ulp = f64::from(f32::from_bits(r.to_bits() + 1)) - f64::from(r);
            let dist = ((reference - f64::from(r)).abs() / ulp - 0.5).abs();
            if dist > 1e-6 {
                assert_eq!(ours, r.to_bits(), "input {x:#x}");
                checked += 1;
            } else {
                assert!(ours.abs_diff(r.to_bits()) <= 1, "input {x:#x}");
            }
        }
        x = x.wrapping_add(0x0001_3579);
    }
    assert!(checked > 50_000, "{checked}");
}

/// With PICAJIT_USC_EXHAUSTIVE=1: every binary32 input of FLOG and FEXP, checking that the
/// 116-bit evaluation is never within its error bound of a rounding boundary (so every result
/// is correctly rounded). About a minute in release builds.
#[test]
fn flog_fexp_never_ambiguous_exhaustive() {
    use picajit_interp::usc::float::{fexp_checked, flog_checked};
    if std::env::var("PICAJIT_USC_EXHAUSTIVE").as_deref() != Ok("1") {
        return;
    }
    for x in 0..=u32::MAX {
        assert!(!fexp_checked(x).1, "fexp {x:#x}");
        assert!(!flog_checked(x).1, "flog {x:#x}");
    }
}

/// r0 and r1 of lane 0 after [`run`].
fn r0_r1(text: &str, n: usize, set: &[(&str, &[u32])]) -> (u32, u32) {
    let st = run(text, n, set);
    (get(&st, "r0", 0), get(&st, "r1", 0))
}

/// An integer instruction writing r0 (low word) and r1 (ft1).
fn int1(instr: &str, set: &[(&str, &[u32])]) -> u32 {
    r0(&format!("0 : {instr}\n mov r0, ft0"), set)
}

#[test]
fn eight_and_sixteen_bit_integers() {
    let s = |a: u32, b: u32| [("sh1", vec![a]), ("i0", vec![b])];
    let go = |ins: &str, a: u32, b: u32| {
        let set = s(a, b);
        let set: Vec<(&str, &[u32])> = set.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        int1(ins, &set)
    };
    // UADD8: FT0 = S0 + S1, "Saturate 0..255" with .sat; the exact sum otherwise.
    assert_eq!(go("uadd8 ft0, sh1.e0, i0.e0", 200, 100), 300);
    assert_eq!(go("uadd8.sat ft0, sh1.e0, i0.e0", 200, 100), 255);
    assert_eq!(
        go("uadd8 ft0, sh1.e1, i0.e3", 0x0000_C800, 0x0500_0000),
        205
    );
    assert_eq!(go("uadd8 ft0, sh1.e0.neg, i0.e0", 5, 3), (-2i32) as u32);
    assert_eq!(go("uadd8.sat ft0, sh1.e0.neg, i0.e0", 5, 3), 0);
    assert_eq!(go("umul8 ft0, sh1.e0, i0.e0", 200, 200), 40_000);
    assert_eq!(go("umul8.sat ft0, sh1.e0, i0.e0", 200, 200), 255);
    // IADD8: signed elements, "Saturate -128..127".
    assert_eq!(go("iadd8 ft0, sh1.e0, i0.e0", 0x9C, 0x9C), (-200i32) as u32);
    assert_eq!(
        go("iadd8.sat ft0, sh1.e0, i0.e0", 0x9C, 0x9C),
        (-128i32) as u32
    );
    assert_eq!(go("imul8 ft0, sh1.e0, i0.e0", 0x80, 0x80), 16_384);
    assert_eq!(go("imul8.sat ft0, sh1.e0, i0.e0", 0x80, 0x80), 127);
    assert_eq!(go("imul8 ft0, sh1.e0.abs, i0.e0", 0xFD, 0x04), 12);
    // 16-bit: .e0 is bits 0-15, .e1 bits 16-31.
    assert_eq!(
        go("uadd16 ft0, sh1.e0, i0.e1", 60_000, 60_000 << 16),
        120_000
    );
    assert_eq!(go("uadd16.sat ft0, sh1.e0, i0.e0", 60_000, 60_000), 65_535);
    assert_eq!(
        go("umul16 ft0, sh1.e1, i0.e0", 0xFFFF_0000, 0xFFFF),
        0xFFFE_0001
    );
    assert_eq!(
        go("iadd16 ft0, sh1.e0, i0.e0", 0x8000, 0x8000),
        (-65_536i32) as u32
    );
    assert_eq!(
        go("iadd16.sat ft0, sh1.e0, i0.e0", 0x8000, 0x8000),
        (-32_768i32) as u32
    );
    assert_eq!(go("imul16 ft0, sh1.e0, i0.e0", 0x8000, 0x8000), 1 << 30);
    assert_eq!(go("imul16.sat ft0, sh1.e0, i0.e0", 0x8000, 0x8000), 32_767);
    // The multiply-adds: S0 * S1 + S2, each operand with its element and sign modifiers.
    for (ins, [a, b, c], want) in [
        ("umad8 ft0, sh1.e0, i0.e0, sh2.e0", [10, 20, 30], 230),
        (
            "imad8 ft0, sh1.e0, i0.e0, sh2.e0.neg",
            [0xFE, 3, 4],
            (-10i32) as u32,
        ),
        (
            "umad16 ft0, sh1.e0, i0.e0, sh2.e1",
            [300, 300, 7 << 16],
            90_007,
        ),
        (
            "imad16 ft0, sh1.e0, i0.e0, sh2.e0",
            [0xFFFF, 2, 0xFFFF],
            (-3i32) as u32,
        ),
    ] {
        let set: [(&str, &[u32]); 3] = [("sh1", &[a]), ("i0", &[b]), ("sh2", &[c])];
        assert_eq!(int1(ins, &set), want, "{ins}");
    }
}

/// A 32/64-bit integer instruction: (low word, high word, carry as TSTC sees it).
fn wide(instr: &str, set: &[(&str, &[u32])], p0: bool) -> (u32, u32, bool) {
    let text = format!("0 : {instr}\n tstc ftt, p0\n mov r0, ft0\n mov r1, ft1");
    let mut set = set.to_vec();
    let p = [u32::from(p0)];
    set.push(("p0", &p));
    let st = run(&text, 1, &set);
    (get(&st, "r0", 0), get(&st, "r1", 0), st.p0[0])
}

#[test]
fn thirty_two_and_sixty_four_bit_integers() {
    let m = u32::MAX;
    // ADD64: COUT, FT0 = (S1 << 32 | S0) + (IS0 << 32 | S2) [+P0].
    let set: &[(&str, &[u32])] = &[("sh0", &[m]), ("sh1", &[1]), ("sh2", &[1]), ("sh3", &[0])];
    assert_eq!(
        wide("add64 ft0, sh0, sh1, sh2, sh3, _", set, false),
        (0, 2, false)
    );
    assert_eq!(
        wide("add64 ft0, sh0, sh1, sh2, sh3, p0", set, true),
        (1, 2, false)
    );
    let set: &[(&str, &[u32])] = &[("sh0", &[m]), ("sh1", &[m]), ("sh2", &[1]), ("sh3", &[0])];
    assert_eq!(
        wide("add64 ft0, sh0, sh1, sh2, sh3, _", set, false),
        (0, 0, true)
    );
    // UADD6432 / SADD6432: FT0 = (S1 << 32 | S0) + S2 [+P0].
    let set: &[(&str, &[u32])] = &[("sh0", &[0]), ("sh1", &[1]), ("sh2", &[m])];
    assert_eq!(
        wide("uadd6432 ft0, sh0, sh1, sh2, _", set, false),
        (m, 1, false)
    );
    assert_eq!(
        wide("sadd6432 ft0, sh0, sh1, sh2, _", set, false),
        (m, 0, false)
    );
    let set: &[(&str, &[u32])] = &[("sh0", &[m]), ("sh1", &[0x7FFF_FFFF]), ("sh2", &[1])];
    assert_eq!(
        wide("sadd6432 ft0, sh0, sh1, sh2, _", set, false),
        (0, 0x8000_0000, true)
    );
    // UMADD32 / SMADD32: FT0 = S0 * S1 + S2 [+P0], the 64-bit result in ft0 (low) and ft1.
    let set: &[(&str, &[u32])] = &[("sh0", &[m]), ("sh1", &[2]), ("sh2", &[1])];
    assert_eq!(
        wide("umadd32 ft0, sh0, sh1, sh2, p0", set, true),
        (0, 2, false)
    );
    let set: &[(&str, &[u32])] = &[("sh0", &[(-3i32) as u32]), ("sh1", &[4]), ("sh2", &[5])];
    assert_eq!(
        wide("smadd32 ft0, sh0, sh1, sh2, _", set, false),
        ((-7i32) as u32, m, false)
    );
    assert_eq!(
        wide("smadd32 ft0, sh0.abs, sh1, sh2.neg, _", set, false),
        (7, 0, false)
    );
    // UMADD64 / SMADD64: FT0 = S0 * S1 + (IS0 << 32 | S2) [+P0].
    let set: &[(&str, &[u32])] = &[("sh0", &[m]), ("sh1", &[m]), ("sh2", &[m]), ("sh3", &[m])];
    // (2^32-1)^2 + 2^64-1 = 2^65 - 2^33: past 64 bits.
    assert_eq!(
        wide("umadd64 ft0, sh0, sh1, sh2, sh3, _", set, false),
        (0, (-2i32) as u32, true)
    );
    assert_eq!(
        wide("smadd64 ft0, sh0, sh1, sh2, sh3, _", set, false),
        (0, 0, false)
    );
    // The seed's form with the carry-in left out (`umadd32 ft0, sh1, i0, sh2,`).
    assert_eq!(
        int1(
            "umadd32 ft0, sh1, i0, sh2,",
            &[("sh1", &[6]), ("i0", &[7]), ("sh2", &[8])]
        ),
        50
    );
}

fn tst(instr: &str, a: u32, b: u32) -> bool {
    let st = run(
        &format!("0 : {instr} ftt, p0, sh0, sh1"),
        1,
        &[("sh0", &[a]), ("sh1", &[b])],
    );
    st.p0[0]
}

#[test]
fn tests_by_type() {
    let neg1 = u32::MAX;
    // Two-operand tests: LHS == RHS, >, >=, !=, <, <=; TSTMIN "LHS < RHS", TSTMAX "LHS >= RHS".
    for (op, want_s, want_u) in [
        ("tste", false, false),
        ("tstg", false, true),
        ("tstge", false, true),
        ("tstne", true, true),
        ("tstl", true, false),
        ("tstle", true, false),
        ("tstmin", true, false),
        ("tstmax", false, true),
    ] {
        assert_eq!(tst(&format!("{op}.s32"), neg1, 1), want_s, "{op}.s32");
        assert_eq!(tst(&format!("{op}.u32"), neg1, 1), want_u, "{op}.u32");
        // f32: -1.0 vs 1.0 orders like s32; NaN is unordered: only != holds.
        assert_eq!(
            tst(&format!("{op}.f32"), f(-1.0), f(1.0)),
            want_s,
            "{op}.f32"
        );
        assert_eq!(
            tst(&format!("{op}.f32"), NAN, f(1.0)),
            op == "tstne",
            "{op}.f32 NaN"
        );
    }
    assert!(tst("tste.f32", 0x8000_0000, 0));
    // Elements: .e1 of u8 / s8 and of u16 / s16.
    let st = run(
        "0 : tstl.u8 ftt, p0, sh0.e1, sh1.e0",
        1,
        &[("sh0", &[0x0000_8000]), ("sh1", &[0x7F])],
    );
    assert!(!st.p0[0]);
    let st = run(
        "0 : tstl.s8 ftt, p0, sh0.e1, sh1.e0",
        1,
        &[("sh0", &[0x0000_8000]), ("sh1", &[0x7F])],
    );
    assert!(st.p0[0]);
    let st = run(
        "0 : tstg.s16 ftt, p0, sh0.e1, sh1",
        1,
        &[("sh0", &[0x0001_0000]), ("sh1", &[0xFFFF])],
    );
    assert!(st.p0[0]);
    // One-operand tests against zero.
    for (op, ty, v, want) in [
        ("tstz", "f32", 0x8000_0000, true),
        ("tstz", "s32", 1, false),
        ("tstgz", "s32", neg1, false),
        ("tstgz", "u32", neg1, true),
        ("tstgez", "s32", 0, true),
        ("tstgez", "f32", f(-0.5), false),
        ("tstz", "u16", 0x1_0000, true),
    ] {
        let st = run(&format!("0 : {op}.{ty} ftt, p0, sh0"), 1, &[("sh0", &[v])]);
        assert_eq!(st.p0[0], want, "{op}.{ty} {v:#x}");
    }
    // Without p0 the test writes only ftt; p0 keeps its value.
    let st = run(
        "0 : tstz.s32 ftt, _, sh0",
        1,
        &[("sh0", &[0]), ("p0", &[0])],
    );
    assert!(!st.p0[0]);
}

#[test]
fn mov_movc_and_masked_writes() {
    // The seed's TSTZ example: res = (a == 0) ? b : c, per instance.
    let st = run(
        "0 : mov ft0, sh1 mov ft1, sh2 tstz.s32 ftt, vi0 mov i0.e0.e1.e2.e3, ft1, ftt, ft0, ft1",
        4,
        &[("vi0", &[0, 1, 0, 5]), ("sh1", &[11]), ("sh2", &[22])],
    );
    assert_eq!(
        (0..4).map(|l| get(&st, "i0", l)).collect::<Vec<_>>(),
        [11, 22, 11, 22]
    );
    // MOVC with a byte mask: W0 takes the selected source's bytes where the mask is set and
    // IS4's (the second operand) elsewhere; a false test gives IS4 whole.
    let text = "0 : mov ft0, sh1 mov ft1, sh2 tstz.s32 ftt, vi0 mov r0.e0.e3, ft1, ftt, ft0, ft1";
    let st = run(
        text,
        2,
        &[
            ("vi0", &[0, 1]),
            ("sh1", &[0x1122_3344]),
            ("sh2", &[0xAABB_CCDD]),
        ],
    );
    assert_eq!(get(&st, "r0", 0), 0x11BB_CC44);
    assert_eq!(get(&st, "r0", 1), 0xAABB_CCDD);
    // movc to w0/w1 and destination declarations reading them.
    let text = "0 : mov ft0, sh1\n mov ft1, sh2\n tstz.s32 ftt, _, vi0\n movc w0, w1, ftt, ft1, ft0\n mov r0, w0\n mov r1, w1";
    let st = run(text, 2, &[("vi0", &[0, 1]), ("sh1", &[1]), ("sh2", &[2])]);
    assert_eq!((get(&st, "r0", 0), get(&st, "r1", 0)), (2, 1));
    // False: W0 and W1 take their default drivers (ft1: last phase present; ft0).
    assert_eq!((get(&st, "r0", 1), get(&st, "r1", 1)), (2, 1));
    // A masked destination declaration keeps the other bytes.
    let st = run(
        "0 : mov ft0, sh0\n mov r0.e1.e3, ft0",
        1,
        &[("sh0", &[0x1122_3344]), ("r0", &[0xAABB_CCDD])],
    );
    assert_eq!(get(&st, "r0", 0), 0x11BB_33DD);
    // Phase-2 MOV overrides W0.
    let st = run(
        "0 : mov ft0, sh0\n mov ft1, sh1\n mov w0.e0, ft0\n mov r0, w0",
        1,
        &[("sh0", &[0x11]), ("sh1", &[0xAABB_CCDD])],
    );
    assert_eq!(get(&st, "r0", 0), 0xAABB_CC11);
    // A write straight from a source register (the seed's `mov r1, sh1`) and reads before writes.
    assert_eq!(
        r0_r1(
            "0 : mov ft0, r1\n mov r1, sh1\n mov r0, ft0",
            1,
            &[("r1", &[5]), ("sh1", &[9])],
        ),
        (5, 9)
    );
}

#[test]
fn pck_unpck() {
    let pck = |fmt: &str, v: u32| {
        r0(
            &format!("0 : pck.{fmt} ft2, sh0\n mov r0, ft2"),
            &[("sh0", &[v])],
        )
    };
    let unpck = |fmt: &str, e: u32, v: u32| {
        r0(
            &format!("0 : unpck.{fmt} ft0, sh0.e{e}\n mov r0, ft0"),
            &[("sh0", &[v])],
        )
    };
    // Float to integer: to nearest even, or toward zero with .roundzero; saturating; NaN → 0.
    assert_eq!(pck("s32", f(-2.5)), (-2i32) as u32);
    assert_eq!(pck("s32", f(3.5)), 4);
    assert_eq!(pck("s32.roundzero", f(3.9)), 3);
    assert_eq!(pck("s32.roundzero", f(-3.9)), (-3i32) as u32);
    assert_eq!(pck("s32", f(3e9)), 0x7FFF_FFFF);
    assert_eq!(pck("s32", f(-3e9)), 0x8000_0000);
    assert_eq!(pck("u32", f(-1.0)), 0);
    assert_eq!(pck("u32", f(5e9)), u32::MAX);
    assert_eq!(pck("u32", NAN), 0);
    assert_eq!(pck("f32", 0x7FC0_1234), 0x7FC0_1234);
    // 8- and 16-bit results repeat in every element; .scale normalises.
    assert_eq!(pck("u8888", f(200.0)), 0xC8C8_C8C8);
    assert_eq!(pck("u8888", f(300.0)), 0xFFFF_FFFF);
    assert_eq!(pck("u8888.scale", f(0.5)), 0x8080_8080); // 127.5 → 128 (even)
    assert_eq!(pck("u8888.scale.roundzero", f(0.5)), 0x7F7F_7F7F);
    assert_eq!(pck("s8888", f(-1.0)), 0xFFFF_FFFF);
    assert_eq!(pck("s8888.scale", f(-2.0)), 0x8181_8181); // -1 → -127
    assert_eq!(pck("u1616.scale", f(1.0)), 0xFFFF_FFFF);
    assert_eq!(pck("s1616", f(-40000.0)), 0x8000_8000);
    // Integer to float.
    assert_eq!(unpck("s32", 0, (-7i32) as u32), f(-7.0));
    assert_eq!(unpck("u32", 0, u32::MAX), f(4_294_967_296.0));
    assert_eq!(unpck("u32.roundzero", 0, u32::MAX), 0x4F7F_FFFF);
    assert_eq!(unpck("u8888", 2, 0x00C8_0000), f(200.0));
    assert_eq!(unpck("u8888.scale", 2, 0x00FF_0000), f(1.0));
    assert_eq!(unpck("u8888.scale", 0, 0x80), f(128.0 / 255.0));
    assert_eq!(unpck("s8888.scale", 0, 0x80), f(-1.0));
    assert_eq!(unpck("s8888.scale", 0, 0x81), f(-1.0));
    assert_eq!(unpck("s1616", 1, 0xFFFE_0000), f(-2.0));
    assert_eq!(unpck("u1616.scale", 0, 0x8000), f(32768.0 / 65535.0));
    // The seed's PCK example: int(a) then back to float.
    let st = run(
        "0 : pck.s32.rndzero ft2, sh0 mov i0, ft2; 1 : unpck.s32 ft0, i0.e0 mov r0.e0.e1.e2.e3, ft0 mov r1, ft0;",
        1,
        &[("sh0", &[f(-7.75)])],
    );
    assert_eq!((get(&st, "r0", 0), get(&st, "r1", 0)), (f(-7.0), f(-7.0)));
}

/// A bitwise group ending in `mov r0, SRC`.
fn bw(body: &str, set: &[(&str, &[u32])]) -> u32 {
    r0(&format!("0 : {body}"), set)
}

#[test]
fn bitwise_instructions() {
    let s: &[(&str, &[u32])] = &[("sh0", &[0]), ("sh1", &[0xFFFF])];
    // SHFL: FT2 = AaBb...: S1's bit k at 2k+1, S2's at 2k.
    assert_eq!(bw("shfl ft2, sh0, sh1\n mov r0, ft2", s), 0xAAAA_AAAA);
    assert_eq!(
        bw("rev ft2, sh0\n mov r0, ft2", &[("sh0", &[1])]),
        0x8000_0000
    );
    // LSL (phase 0): S2 << S1, the amount modulo the width.
    assert_eq!(
        bw(
            "lsl ft2, sh0, sh1\n mov r0, ft2",
            &[("sh0", &[3]), ("sh1", &[33])]
        ),
        6
    );
    // Phase 2 shifts of FT4 by S4.
    let sh2 = |op: &str, v: u32, n: u32| {
        bw(
            &format!("byp ft2, sh0\n or ft4, _, ft2, _, c0\n {op} ft5, ft4, sh1\n mov r0, ft5"),
            &[("sh0", &[v]), ("sh1", &[n])],
        )
    };
    assert_eq!(sh2("lsl", 0x8000_0001, 1), 2);
    assert_eq!(sh2("shr", 0x8000_0000, 31), 1);
    assert_eq!(sh2("rol", 0x8000_0001, 4), 0x18);
    assert_eq!(sh2("asr.twb", (-8i32) as u32, 1), (-4i32) as u32);
    // ASR.PWB: the sign is bit 15.
    assert_eq!(sh2("asr.pwb", 0x0000_8000, 0), 0xFFFF_8000);
    assert_eq!(sh2("asr.pwb", 0x0000_8000, 4), 0xFFFF_F800);
    // ASR.FTB: sign position from FT3 (FTB of the same word).
    assert_eq!(
        bw("byp ft2, sh0\n ftb ft3, ft2\n or ft4, _, ft2, _, c0\n asr ft5, ft4, sh1, ft3\n mov r0, ft5", &[("sh0", &[0x10]), ("sh1", &[2])]),
        0xFFFF_FFFC
    );
    // CPS: FT5 = (S4 & ~FT4) | (P0 ? FT4 : 0).
    for p in [0u32, 1] {
        assert_eq!(
            bw(
                "byp ft2, sh0\n or ft4, _, ft2, _, c0\n cps ft5, p0, ft4, sh1\n mov r0, ft5",
                &[("sh0", &[0x0F]), ("sh1", &[0xFF]), ("p0", &[p])]
            ),
            0xF0 | if p == 1 { 0x0F } else { 0 }
        );
    }
    // Counts.
    assert_eq!(
        bw("cbs ft3, sh0\n mov r0, ft3", &[("sh0", &[0xF0F0_0001])]),
        9
    );
    assert_eq!(bw("ftb ft3, sh0\n mov r0, ft3", &[("sh0", &[0x10])]), 4);
    assert_eq!(bw("ftb ft3, sh0\n mov r0, ft3", &[("sh0", &[0])]), u32::MAX);
    assert_eq!(
        bw(
            "ftb_shi ft3, sh0\n mov r0, ft3",
            &[("sh0", &[(-2i32) as u32])]
        ),
        0
    );
    assert_eq!(bw("ftb_shi ft3, sh0\n mov r0, ft3", &[("sh0", &[5])]), 2);
    assert_eq!(
        bw("ftb_shi ft3, sh0\n mov r0, ft3", &[("sh0", &[u32::MAX])]),
        u32::MAX
    );
    assert_eq!(
        bw(
            "byp ft2, sh0\n ftb_msb ft3, ft2\n mov r0, ft3",
            &[("sh0", &[1])]
        ),
        31
    );
    assert_eq!(
        bw(
            "byp ft2, sh0\n ftb_msb ft3, ft2\n mov r0, ft3",
            &[("sh0", &[0x8000_0000])]
        ),
        0
    );
    assert_eq!(
        bw(
            "byp ft2, sh0\n ftb_msb ft3, ft2\n mov r0, ft3",
            &[("sh0", &[0])]
        ),
        u32::MAX
    );
    // MSK: FT0 = S0 + S1 - 1, FT1 = ((1 << S0) - 1) << S1.
    assert_eq!(
        r0_r1(
            "0 : msk ft0, ft1, sh0, sh1\n mov r0, ft0\n mov r1, ft1",
            1,
            &[("sh0", &[4]), ("sh1", &[8])],
        ),
        (11, 0xF00)
    );
    // Logical: FT4 = {FT1 &} FT2 OP {~FT1 &} S3.
    let logic = |op: &str, masked: bool| {
        let (m1, m2) = if masked {
            ("ft1", "ft1.invert")
        } else {
            ("_", "_")
        };
        bw(
            &format!("mov ft0, ft1, sh9, sh2\n byp ft2, sh0\n {op} ft4, {m1}, ft2, {m2}, sh1\n mov r0, ft4"),
            &[("sh0", &[0xFF00_FF00]), ("sh1", &[0x0FF0_0FF0]), ("sh2", &[0xFFFF_0000]), ("sh9", &[0])],
        )
    };
    let (a, b, m) = (0xFF00_FF00u32, 0x0FF0_0FF0u32, 0xFFFF_0000u32);
    assert_eq!(logic("and", false), a & b);
    assert_eq!(logic("or", false), a | b);
    assert_eq!(logic("xor", false), a ^ b);
    assert_eq!(logic("nand", false), !(a & b));
    assert_eq!(logic("nor", false), !(a | b));
    assert_eq!(logic("xnor", false), !(a ^ b));
    assert_eq!(logic("or", true), (m & a) | (!m & b));
    assert_eq!(logic("and", true), (m & a) & (!m & b));
    // BYP forms and an immediate in the bitmask bypass.
    assert_eq!(
        r0_r1(
            "0 : byp ft0, ft1, sh0, 0x1234\n mov r0, ft0\n mov r1, ft1",
            1,
            &[("sh0", &[7])],
        ),
        (7, 0x1234)
    );
    // TZ / TNZ write p0.
    let st = run(
        "0 : cbs ft3, sh0\n tz p0, ft3",
        2,
        &[("sh0", &[0]), ("p0", &[0])],
    );
    assert!(st.p0[0] && st.p0[1]);
    let st = run("0 : cbs ft3, vi0\n tnz p0, ft3", 2, &[("vi0", &[0, 4])]);
    assert_eq!((st.p0[0], st.p0[1]), (false, true));
    // W0/W1 drivers: ft5 (shift 2) drives w0, ft3 (count) drives w1.
    let text = "0 : byp ft2, sh0\n cbs ft3, ft2\n or ft4, _, ft2, _, c0\n lsl ft5, ft4, c1\n mov r0, w0\n mov r1, w1";
    assert_eq!(r0_r1(text, 1, &[("sh0", &[3])]), (6, 2));
    // The seed's AND example: i0 = sh0 & sh1.
    let st = run(
        "0 : mov ft0, ft1, c0, c0 mov ft2, sh1 cbs ft3, sh1 and ft4, _, ft2, _, sh0 lsl ft5, ft4, c0 mov i0, ft5;",
        1,
        &[("sh0", &[0xF0F0]), ("sh1", &[0xFF00])],
    );
    assert_eq!(get(&st, "i0", 0), 0xF000);
}

#[test]
fn main_alu_w_drivers() {
    // "ft2 drives w0 by default, last phase present", "ft1 drives w1 ... second to last".
    assert_eq!(r0_r1("0 : fadd ft0, sh0, c0\n fadd ft1, sh1, c0\n fadd ft2, sh2, ft0\n mov r0, w0\n mov r1, w1",
        1,
        &[("sh0", &[f(1.0)]), ("sh1", &[f(2.0)]), ("sh2", &[f(4.0)])],), (f(5.0), f(2.0)));
    let st = run(
        "0 : fadd ft0, sh0, c0\n mov r0, w0",
        1,
        &[("sh0", &[f(1.0)])],
    );
    assert_eq!(get(&st, "r0", 0), f(1.0));
}

#[test]
fn predicates_and_instances() {
    // if (p0) / if (!p0) per instance; instances past the count are untouched.
    let text = "0 : if (p0) { mov r0, c1 }\n1 : if(!p0) mov r1, c2";
    let st = run(text, 3, &[("p0", &[1, 0, 1])]);
    assert_eq!(
        (0..3).map(|l| get(&st, "r0", l)).collect::<Vec<_>>(),
        [1, 0, 1]
    );
    assert_eq!(
        (0..3).map(|l| get(&st, "r1", l)).collect::<Vec<_>>(),
        [0, 2, 0]
    );
    for n in 1..=16 {
        let st = run(
            "0 : fadd ft0, vi0, c64\n mov r0, ft0",
            n,
            &[("vi0", &[f(1.0)])],
        );
        for l in 0..16 {
            assert_eq!(get(&st, "r0", l), if l < n { f(2.0) } else { 0 });
        }
    }
    assert!(State::new(0).is_err() && State::new(17).is_err());
    // Shared registers written by several instances: the last instance's value remains, and
    // every instance read the value from before the group.
    let st = run(
        "0 : mov ft0, sh0\n mov ft1, vi0\n mov sh0, ft1\n mov r0, ft0",
        4,
        &[("vi0", &[10, 11, 12, 13]), ("sh0", &[5])],
    );
    assert_eq!(get(&st, "sh0", 0), 13);
    assert_eq!(
        (0..4).map(|l| get(&st, "r0", l)).collect::<Vec<_>>(),
        [5; 4]
    );
}

#[test]
fn budget_counts_groups() {
    let prog = compile("0 : mov r0, c1\n1 : ba 0", UscOptions::default()).unwrap();
    let mut st = State::new(16).unwrap();
    let out = prog.run(&mut st, 101).unwrap();
    assert_eq!(
        out,
        Outcome {
            status: Status::Budget,
            steps: 101
        }
    );
    let prog = compile("0 : mov r0, c1\n1 : mov r1, c2", UscOptions::default()).unwrap();
    let out = prog.run(&mut st, 2).unwrap();
    assert_eq!(
        out,
        Outcome {
            status: Status::Done,
            steps: 2
        }
    );
}

/// if / else with CNDST, CNDEF, CNDEND (section 13), instances taking different sides.
#[test]
fn conditional_if_else_with_execution_mask() {
    let text = "\
0 : tstl.u32 ftt, p0, vi0, c8
1 : cndst 0, r10, c0, 1
2 : mov r1, c1
3 : cndef 1, r10, r10, 1
4 : mov r1, c2
5 : cndend r10, r10, 1
6 : mov r2, c3
";
    let lanes: Vec<u32> = (0..16).collect();
    let (st, out) = run_opts(text, 16, &[("vi0", &lanes)], UscOptions::default());
    assert_eq!(out.steps, 7);
    for l in 0..16 {
        assert_eq!(get(&st, "r1", l), if l < 8 { 1 } else { 2 }, "lane {l}");
        assert_eq!(get(&st, "r2", l), 3);
        assert_eq!(get(&st, "r10", l), 0);
        assert!(st.pe[l]);
    }
}

/// CNDST: W0 = 0, Pe = 1 when the condition holds and S0 == 0; otherwise W0 = S0 + adjust,
/// Pe = 0. CNDSM and CNDLPC by their tables.
#[test]
fn conditional_tables() {
    let go = |text: &str, s0: &[u32], p: &[u32]| {
        let st = run(text, 4, &[("r5", s0), ("r6", &[7]), ("p0", p)]);
        (
            (0..4).map(|l| get(&st, "r4", l)).collect::<Vec<_>>(),
            (0..4).map(|l| st.pe[l]).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        go("0 : cndst 0, r4, r5, 2", &[0, 0, 3, 1], &[1, 0, 1, 1]),
        (vec![0, 2, 5, 3], vec![true, false, false, false])
    );
    assert_eq!(
        go("0 : cndst 3, r4, r5, 1", &[0, 0, 0, 0], &[1, 1, 1, 1]),
        (vec![1; 4], vec![false; 4])
    );
    // CNDEF: S0 == 0 → S0 + adjust, Pe = (adjust == 0); cond && S0 == 1 → 0, Pe = 1; else S0.
    assert_eq!(
        go("0 : cndef 2, r4, r5, 1", &[0, 1, 2, 1], &[0; 4]),
        (vec![1, 0, 2, 0], vec![false, true, false, true])
    );
    assert_eq!(
        go("0 : cndef 0, r4, r5, 0", &[0, 1, 2, 1], &[0, 0, 0, 1]),
        (vec![0, 1, 2, 0], vec![true, false, false, true])
    );
    // CNDSM: cond && S0 == 0 → W0 = S2, Pe = (S2 == 0); else W0 = S0, Pe = (S0 == 0).
    assert_eq!(
        go("0 : cndsm 0, r4, r5, r6", &[0, 0, 3, 0], &[1, 0, 1, 0]),
        (vec![7, 0, 3, 0], vec![false, true, false, true])
    );
    // CNDEND: S0 > adjust → S0 - adjust, Pe = 0; else 0, Pe = 1.
    assert_eq!(
        go("0 : cndend r4, r5, 2", &[0, 2, 3, 9], &[0; 4]),
        (vec![0, 0, 1, 7], vec![true, true, false, false])
    );
    // CNDLPC: 0 → 2 (Pe 0); 1 → 0 (Pe 1); else unchanged (Pe 0).
    assert_eq!(
        go("0 : cndlpc r4, r5", &[0, 1, 2, 5], &[0; 4]),
        (vec![2, 0, 2, 5], vec![false, true, false, false])
    );
}

/// A divergent loop: instance l adds 1 to r0 vi0[l] times. CNDLT stops the instances whose
/// test fails and, once no running instance passes, restores every instance and clears p0,
/// which the branch out of the loop tests.
#[test]
fn divergent_loop_with_cndlt() {
    let text = "\
0 : mov r0, c0
1 : tstl.u32 ftt, p0, r0, vi0
2 : cndlt 0, r10, p0, r10, 1
3 : if (!p0) ba 6
4 : uadd16 ft0, r0.e0, c1.e0
    mov r0, ft0
5 : br -4
6 : mov r1, r0
";
    let counts: Vec<u32> = vec![0, 1, 5, 3, 2, 7, 0, 4];
    let (st, out) = run_opts(text, 8, &[("vi0", &counts)], UscOptions::default());
    assert_eq!(out.status, Status::Done);
    for (l, c) in counts.iter().enumerate() {
        assert_eq!(get(&st, "r1", l), *c, "lane {l}");
        assert!(st.pe[l]);
    }
}

#[test]
fn branches_links_and_savl() {
    // BAL saves the link, LAPC returns to it; SAVL writes the link as a group number.
    let text = "\
0 : bal 10
1 : savl r3
2 : ba 20
10 : mov r0, c5
11 : lapc
20 : mov r1, c6
";
    let st = run(text, 2, &[]);
    assert_eq!(
        (get(&st, "r0", 1), get(&st, "r1", 1), get(&st, "r3", 1)),
        (5, 6, 1)
    );
    // .allinst / .anyinst over the running instances.
    let text = "0 : if (p0) ba.allinst 2\n1 : mov r0, c1\n2 : mov r1, c1";
    let st = run(text, 2, &[("p0", &[1, 0])]);
    assert_eq!(get(&st, "r0", 0), 1);
    let text = "0 : if (p0) ba.anyinst 2\n1 : mov r0, c1\n2 : mov r1, c1";
    let st = run(text, 2, &[("p0", &[1, 0])]);
    assert_eq!(get(&st, "r0", 0), 0);
    // A branch to a group that does not exist is an error before running.
    assert!(compile("0 : br 5", UscOptions::default()).is_err());
}

#[test]
fn special_constants_of_the_appendix() {
    use picajit_interp::usc::consts::special;
    assert_eq!(special(0), Some(0));
    assert_eq!(special(31), Some(31));
    assert_eq!(special(64), Some(f(1.0)));
    assert_eq!(special(74), Some(f(1024.0)));
    assert_eq!(special(88), Some(f(2f32.powi(-14))));
    assert_eq!(special(91), Some(f(std::f32::consts::SQRT_2)));
    assert_eq!(special(95), Some(f(std::f32::consts::PI)));
    assert_eq!(special(141), Some(0x8000_0000));
    // 148 and 153 are malformed in the seed: Max Float and 1/6.
    assert_eq!(special(148), Some(f(f32::MAX)));
    assert_eq!(special(153), Some(f(1.0 / 6.0)));
    assert_eq!(special(152), Some(f(1.0 / 3.0)));
    assert_eq!(special(159), Some(f(2.4)));
    assert_eq!(special(32), None);
    assert_eq!(special(127), None);
    assert_eq!(special(160), None);
}
