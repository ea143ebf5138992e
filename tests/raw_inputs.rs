//! Raw f24 input words reach v0-v15 exactly (issue: `--set v0=0x80ffff,...` printed
//! 0x000000 for a MOV): subnormal patterns, -0, NaN payloads and infinities through MOV,
//! MAX/MIN, CMP (observed through IFC), MUL and ADD, on the interpreter, the x86-64 JIT
//! (per-vertex code and the eight-lane batch code) and the AArch64 JIT (under unicorn), in
//! every float mode, for vertex batches, single vertices and point-mode geometry draws.
//! f32 inputs go through the one conversion rule (`Shader::convert_inputs`).

mod engine_common;
use engine_common::run_vertex;
use picajit::interp::pica::float::{self, FloatMode, F24};
use picajit::interp::pica::program::{GsInputMode, Program};
use picajit::interp::pica::state::{EmitBuffer, Uniforms};
use picajit::jit::HostFeatures;
use picajit::pica::engine::{EngineConfig, GeometryRunner, GsInput, Invocation, Shader};
use picajit::Engine;

/// The patterns under test: every special kind, and normal values to meet them.
const PATTERNS: &[u32] = &[
    0x000001, // smallest positive subnormal pattern (m·2^-78)
    0x00ffff, // largest positive subnormal pattern
    0x800001, // negative subnormal pattern
    0x80ffff, // the issue's first value
    0x800000, // -0
    0x000000, // +0
    0x7f8000, // NaN, quiet-looking payload (the issue's second value)
    0x7f0001, // NaN with the smallest payload (a signalling NaN as f32)
    0xff1234, // negative NaN with a payload
    0x7fffff, // the canonical NaN
    0x7f0000, // +inf
    0xff0000, // -inf
    0x3f0000, // 1.0
    0xc00000, // -2.0
    0x400000, // 2.0
    0x010000, // smallest normal, 2^-62
    0x7effff, // largest finite
    0x3e8000, // 0.75
];

fn bits_of(v: f32) -> u32 {
    F24::from_f32_exact(v)
        .unwrap_or_else(|| panic!("{:#010x} is not an f24 value", v.to_bits()))
        .bits()
}

/// `reg`'s components set to 1.0 where the comparisons of a with b (`xy` for x and y, `zw`
/// for z and w, each a pair of CMP operators) hold, 0.0 elsewhere, then moved to `out`.
fn cmp_flags(reg: &str, out: &str, xy: &str, zw: &str) -> String {
    let mut t = format!("    mov {reg}, consts.xxxx\n");
    for (cmp, comps) in [
        (format!("a, {xy}, r5"), "xy"),
        (format!("a.zwzw, {zw}, r5.zwzw"), "zw"),
    ] {
        t += &format!("    cmp {cmp}\n");
        for (flag, c) in "xy".chars().zip(comps.chars()) {
            t += &format!("    ifc cmp.{flag}\n        mov {reg}.{c}, consts.y\n    .end\n");
        }
    }
    t + &format!("    mov {out}, {reg}\n")
}

/// The vertex program of the raw-input tests: one input register per instruction, b through
/// a temporary (a MOV, exact), and the CMP flags of both operator sets as 1.0/0.0.
fn vertex_source() -> String {
    let flags = [
        cmp_flags("r0", "ocmp", "lt, eq", "le, gt"),
        cmp_flags("r1", "ocmp2", "gt, ne", "ge, lt"),
    ];
    format!("{VERTEX_HEAD}{}{}    end\n.end\n", flags[0], flags[1])
}

const VERTEX_HEAD: &str = "
.constf consts(0.0, 1.0, 2.0, -1.0)
.in a v0
.in b v1
.out omov position
.out omax normalquat
.out omin color
.out omul texcoord0
.out ocmp texcoord1
.out oadd texcoord2
.out ocmp2 view

.proc main
    ; One input register per instruction: b goes through a temporary (a MOV, exact).
    mov r5, b
    mov omov, a
    max omax, a, r5
    min omin, a, r5
    mul omul, a, r5
    add oadd, a, r5
";

const GEOMETRY_SOURCE: &str = "
.gsh point c0
.in a v0
.in b v1
.out omov position
.out omax color
.out omul texcoord0

.proc main
    setemit 0
    mov r5, b
    mov omov, a
    max omax, a, r5
    mul omul, a, r5
    emit
    end
.end
";

fn program(source: &str) -> (Program, Uniforms) {
    let shbin = picajit::pica::asm::assemble(&[picajit::pica::asm::SourceFile {
        name: "raw.pica",
        text: source,
    }])
    .expect("test program assembles");
    picajit::pica::engine::program_from_shbin(&shbin, 0).expect("DVLE 0")
}

/// Every ordered pair of patterns, four pairs per vertex (component c of v0 and v1).
fn vertices() -> Vec<[[F24; 4]; 16]> {
    let pairs: Vec<(u32, u32)> = PATTERNS
        .iter()
        .flat_map(|&a| PATTERNS.iter().map(move |&b| (a, b)))
        .collect();
    pairs
        .chunks(4)
        .map(|chunk| {
            let mut v = [[F24::ZERO; 4]; 16];
            for (c, &(a, b)) in chunk.iter().enumerate() {
                v[0][c] = F24::from_bits(a);
                v[1][c] = F24::from_bits(b);
            }
            // Registers the program does not read carry patterns too.
            v[7] = [F24::from_bits(0x000001); 4];
            v
        })
        .collect()
}

use picajit_testkit::testgen::MODES;

fn one(b: bool) -> u32 {
    if b {
        0x3f0000
    } else {
        0
    }
}

/// The outputs the float model's rules give for inputs `a`, `b` (bit patterns of the
/// register contents: f24 words for F24 mode, f32 bits for F32 mode results).
fn expected(a: [F24; 4], b: [F24; 4], mode: FloatMode) -> [[u32; 4]; 7] {
    let av = a.map(F24::to_f32);
    let bv = b.map(F24::to_f32);
    let bits = |v: f32| match mode {
        FloatMode::F24(_) => bits_of(v),
        FloatMode::F32 => v.to_bits(),
    };
    let cmp = |c: usize, op: fn(f32, f32) -> bool| one(op(av[c], bv[c]));
    let mut out = [[0u32; 4]; 7];
    for c in 0..4 {
        out[0][c] = a[c].bits();
        out[1][c] = bits_of(float::max(av[c], bv[c]));
        out[2][c] = bits_of(float::min(av[c], bv[c]));
        out[3][c] = bits(float::mul(av[c], bv[c], mode));
        out[5][c] = bits(float::add(av[c], bv[c], mode));
    }
    out[4] = [
        cmp(0, |x, y| x < y),
        cmp(1, |x, y| x == y),
        cmp(2, |x, y| x <= y),
        cmp(3, |x, y| x > y),
    ];
    out[6] = [
        cmp(0, |x, y| x > y),
        cmp(1, |x, y| x != y),
        cmp(2, |x, y| x >= y),
        cmp(3, |x, y| x < y),
    ];
    if mode == FloatMode::F32 {
        // MOV/MAX/MIN results are register contents, compared as f32 bits in this mode too.
        for r in [0, 1, 2] {
            out[r] = out[r].map(|w| F24::from_bits(w).to_f32_bits());
        }
        for r in [4, 6] {
            out[r] = out[r].map(|w| F24::from_bits(w).to_f32_bits());
        }
    }
    out
}

fn actual(outputs: &[[f32; 4]; 16], mode: FloatMode) -> [[u32; 4]; 7] {
    let mut out = [[0u32; 4]; 7];
    for (r, row) in out.iter_mut().enumerate() {
        *row = outputs[r].map(|v| match mode {
            FloatMode::F24(_) => bits_of(v),
            FloatMode::F32 => v.to_bits(),
        });
    }
    out
}

/// The x86-64 JIT only where it runs: an AArch64 build (scripts/test-aarch64.sh) has no
/// emulator for it, and runs the AArch64 JIT natively.
fn backends() -> Vec<Engine> {
    let mut b = vec![Engine::Interp, Engine::A64];
    if cfg!(target_arch = "x86_64") {
        b.insert(1, Engine::X64);
    }
    b
}

fn shader(program: &Program, backend: Engine, mode: FloatMode) -> Shader {
    let config = EngineConfig::default()
        .with_engine(backend)
        .with_float_mode(mode);
    let s = Shader::new(program.clone(), &config).expect("backend available");
    if backend != Engine::Interp {
        assert!(
            s.compiled().is_some(),
            "{backend:?} fell back: {:?}",
            s.fallback_reason()
        );
    }
    s
}

/// Hand-stated cases, independent of the float model's code: what the issue lists.
#[test]
fn the_issue_example_and_hand_stated_results() {
    let (program, uniforms) = program(&vertex_source());
    for backend in backends() {
        let s = shader(&program, backend, FloatMode::default());
        let mut v = [[F24::ZERO; 4]; 16];
        v[0] = [0x80ffff, 0x7f8000, 0x000001, 0x800000].map(F24::from_bits);
        v[1] = [0x000000, 0x3f0000, 0x000000, 0x000000].map(F24::from_bits);
        let (regs, _) = run_vertex(&s, &uniforms, &v).unwrap();
        let out = actual(&regs.output, FloatMode::default());
        for (o, want, what) in [
            (0, [0x80ffff, 0x7f8000, 0x000001, 0x800000], "MOV"),
            // max(a, b) = a > b ? a : b on the raw values: -s < 0 gives 0; NaN > 1 is false
            // gives 1; s > 0 keeps the subnormal pattern; -0 > +0 is false gives +0.
            (1, [0x000000, 0x3f0000, 0x000001, 0x000000], "MAX"),
            // min: -s < 0 keeps -s; NaN < 1 false gives 1; s < 0 false gives 0; -0 < 0 false.
            (2, [0x80ffff, 0x3f0000, 0x000000, 0x000000], "MIN"),
            // MUL flushes its inputs: s·0 = 0, NaN·1 = the canonical NaN, -0·0 = +0.
            (3, [0x000000, 0x7fffff, 0x000000, 0x000000], "MUL"),
            // CMP on raw values: -s < 0 true; NaN == 1 false; s <= 0 false; -0 > 0 false.
            (4, [0x3f0000, 0, 0, 0], "CMP"),
        ] {
            assert_eq!(out[o], want, "{backend:?} {what}");
        }

        // The same words as f32 attributes take the conversion rule: flushed, canonical NaN.
        let f32_in = v.map(|row| row.map(F24::to_f32));
        let (regs, _) = run_vertex(&s, &uniforms, &f32_in).unwrap();
        assert_eq!(
            actual(&regs.output, FloatMode::default())[0],
            [0x000000, 0x7fffff, 0x000000, 0x800000],
            "{backend:?} converted f32 input"
        );

        // NaN payloads survive MAX when they are the chosen operand, and MUL by 2 flushes
        // the largest subnormal pattern.
        v[0] = [0x3f0000, 0x00ffff, 0x7f0000, 0xff1234].map(F24::from_bits);
        v[1] = [0x7f0001, 0x400000, 0x000000, 0x3f0000].map(F24::from_bits);
        let (regs, _) = run_vertex(&s, &uniforms, &v).unwrap();
        let out = actual(&regs.output, FloatMode::default());
        assert_eq!(
            out[1],
            [0x7f0001, 0x400000, 0x7f0000, 0x3f0000],
            "{backend:?} MAX"
        );
        // 1·NaN = NaN, s·2 = 0, inf·0 = 0, NaN·1 = NaN.
        assert_eq!(
            out[3],
            [0x7fffff, 0x000000, 0x000000, 0x7fffff],
            "{backend:?} MUL"
        );
    }
}

/// Every pair of patterns in every float mode, one vertex at a time and in batches (the
/// x86-64 batch on the eight-lane code where the host has AVX2), against the float model's
/// rules.
#[test]
fn every_pattern_pair_on_every_engine_and_path() {
    let (program, uniforms) = program(&vertex_source());
    let inputs = vertices();
    assert!(inputs.len() >= 64);
    let avx2 = HostFeatures::detect().contains(HostFeatures::AVX2);
    for mode in MODES {
        for backend in backends() {
            let s = shader(&program, backend, mode);
            let check = |k: usize, outputs: &[[f32; 4]; 16], path: &str| {
                let want = expected(inputs[k][0], inputs[k][1], mode);
                let got = actual(outputs, mode);
                for r in 0..7 {
                    assert_eq!(
                        got[r],
                        want[r],
                        "{backend:?} {mode:?} {path}: vertex {k} o{r}, a {:06x?} b {:06x?}",
                        inputs[k][0].map(F24::bits),
                        inputs[k][1].map(F24::bits)
                    );
                }
            };
            for (k, v) in inputs.iter().enumerate() {
                let (regs, _) = run_vertex(&s, &uniforms, v).unwrap();
                check(k, &regs.output, "single vertex");
            }
            let groups_before = s.compiled().map_or(0, |c| c.batch_stats().groups);
            let mut outputs = vec![[[0.0f32; 4]; 16]; inputs.len()];
            s.invoke(Invocation::batch(&uniforms, &inputs, &mut outputs))
                .map(|o| o.instructions)
                .unwrap();
            for (k, o) in outputs.iter().enumerate() {
                check(k, o, "batch");
            }
            let mut masked = vec![[[0.0f32; 4]; 16]; inputs.len()];
            s.invoke(Invocation::batch(&uniforms, &inputs, &mut masked).mask(0b11))
                .map(|o| o.instructions)
                .unwrap();
            for (k, o) in masked.iter().enumerate() {
                let bits = |rows: &[[f32; 4]]| -> Vec<[u32; 4]> {
                    rows.iter().map(|r| r.map(f32::to_bits)).collect()
                };
                assert_eq!(
                    bits(&o[..2]),
                    bits(&outputs[k][..2]),
                    "{backend:?} masked batch"
                );
            }
            if backend == Engine::X64 && avx2 {
                let groups = s.compiled().unwrap().batch_stats().groups - groups_before;
                assert!(
                    groups >= 2 * (inputs.len() as u64 / 8),
                    "{mode:?}: the batches did not run on the eight-lane code ({groups} groups)"
                );
            }
        }
    }
}

/// Point-mode geometry draws: `run_points_f24` (eight points per group on the x86-64 JIT
/// where the host has AVX2) and `GsInput::PointF24`, one invocation at a time, agree with
/// the rules, and the registers left after the draw hold the last point's raw words.
#[test]
fn geometry_points_take_raw_words() {
    let (program, uniforms) = program(GEOMETRY_SOURCE);
    let inputs = vertices();
    let avx2 = HostFeatures::detect().contains(HostFeatures::AVX2);
    for mode in MODES {
        for backend in backends() {
            let s = shader(&program, backend, mode);
            let mut u = uniforms.clone();
            let mut runner = GeometryRunner::default();
            let mut out = EmitBuffer::new(0b111);
            runner.invoke_points(&s, &mut u, &inputs, &mut out).unwrap();
            assert_eq!(out.len(), inputs.len());
            let last = inputs.last().unwrap();
            assert_eq!(
                runner.registers.input[..2]
                    .iter()
                    .map(|r| r.map(f32::to_bits))
                    .collect::<Vec<_>>(),
                last[..2]
                    .iter()
                    .map(|r| r.map(F24::to_f32_bits))
                    .collect::<Vec<_>>(),
                "{backend:?} {mode:?}: v0-v15 after the draw"
            );
            let mut single = GeometryRunner::default();
            let mut u1 = uniforms.clone();
            for (k, v) in inputs.iter().enumerate() {
                single
                    .invoke(&s, GsInputMode::Point, &mut u1, GsInput::PointF24(v))
                    .unwrap();
                let (emitted, _) = single.state.take_output();
                let want = expected(v[0], v[1], mode);
                let (rows, _) = out.vertex(k);
                let mut padded = [[0.0f32; 4]; 16];
                padded[..3].copy_from_slice(rows);
                let got = actual(&padded, mode);
                for (r, want_row) in [want[0], want[1], want[3]].into_iter().enumerate() {
                    assert_eq!(got[r], want_row, "{backend:?} {mode:?} point {k} o{r}");
                }
                let e = emitted[0].outputs;
                for (r, reg) in [0usize, 1, 2].into_iter().enumerate() {
                    assert_eq!(
                        e[reg].map(f32::to_bits),
                        rows[r].map(f32::to_bits),
                        "{backend:?} {mode:?} point {k}: invoke and run_points differ"
                    );
                }
            }
            if backend == Engine::X64 && avx2 {
                let groups = s.compiled().unwrap().batch_stats().groups;
                assert!(groups > 0, "{mode:?}: no eight-point group ran");
            }
        }
    }
}
