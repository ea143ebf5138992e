//! Two programs on which the engines (agreeing with each other) parted from an independent
//! PICA200 model written from seed 000, kept with their inputs (`tests/regressions/NAME.shbin`,
//! `NAME.set`: the `--set` arguments of their runner scripts). Both come down to one rule, traced
//! by hand below from seed 000's "Control Flow" section: *the IF/LOOP stacks can each only pop
//! one entry per instruction*, and a BREAK (or taken BREAKC) is the LOOP stack's action for its
//! instruction. The engines used to treat BREAK as a jump after which the new top of the LOOP
//! stack was still checked, which steps or pops a second frame in the same instruction when the
//! BREAKC is also the last word of the loop below the one it leaves. Fixed in the interpreter
//! (`interp/src/exec/flow.rs`) and in the JITs' static port of it
//! (`jit/src/analysis/regions.rs`); every engine runs these programs here.

use picajit::interp::pica::float::{FloatMode, Rounding, F24};
use picajit::interp::pica::state::{Registers, Uniforms};
use picajit::pica::engine::{program_from_shbin, EngineConfig, Invocation, Shader};
use picajit::pica::shbin::Shbin;
use picajit::Engine;
use std::path::Path;

struct Case {
    shader: Vec<u8>,
    uniforms: Uniforms,
    inputs: [[F24; 4]; 16],
}

fn load(name: &str) -> Case {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let shader = std::fs::read(dir.join(format!("{name}.shbin"))).expect("SHBIN");
    let shbin = Shbin::parse(&shader).expect("parses");
    let (_, mut uniforms) = program_from_shbin(&shbin, 0).expect("DVLE 0");
    let mut inputs = [[F24::ZERO; 4]; 16];
    let sets = std::fs::read_to_string(dir.join(format!("{name}.set"))).expect("inputs");
    for line in sets.lines() {
        let (reg, values) = line.split_once('=').expect("REG=VALUES");
        let (file, index) = reg.split_at(1);
        let index: usize = index.parse().expect("register index");
        let parts: Vec<&str> = values.split(',').collect();
        let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex");
        match file {
            "v" => inputs[index] = [0, 1, 2, 3].map(|c| F24::from_bits(hex(parts[c]))),
            "c" => {
                uniforms.set_float_f24(index, [0, 1, 2, 3].map(|c| hex(parts[c])));
            }
            "i" => {
                uniforms.set_int(index, [0, 1, 2, 3].map(|c| parts[c].parse().unwrap()));
            }
            "b" => {
                uniforms.set_bool(index, parts[0] == "true");
            }
            _ => panic!("unexpected register {reg}"),
        }
    }
    Case {
        shader,
        uniforms,
        inputs,
    }
}

struct Expect {
    instructions: u64,
    al: i32,
    outputs: &'static [(usize, [u32; 4])],
}

/// Run on the interpreter, the x86-64 JIT (one vertex, and a batch of 24 copies on the
/// eight-lane code where the host has AVX2) and the AArch64 JIT under unicorn.
fn check(name: &str, expect: &Expect) {
    let case = load(name);
    let shbin = Shbin::parse(&case.shader).unwrap();
    let (program, _) = program_from_shbin(&shbin, 0).unwrap();
    // The x86-64 JIT only where it runs (an AArch64 build has no emulator for it).
    let x64 = cfg!(target_arch = "x86_64").then_some(Engine::X64);
    for backend in [Some(Engine::Interp), x64, Some(Engine::A64)]
        .into_iter()
        .flatten()
    {
        let config = EngineConfig::default()
            .with_engine(backend)
            .with_float_mode(FloatMode::F24(Rounding::TowardZero));
        let shader = Shader::new(program.clone(), &config).unwrap();
        if backend != Engine::Interp {
            assert!(
                shader.compiled().is_some(),
                "{backend:?}: {:?}",
                shader.fallback_reason()
            );
        }
        let mut regs = Registers::default();
        let info = shader
            .invoke(Invocation::one(&case.uniforms, &mut regs).input(&case.inputs))
            .unwrap();
        assert_eq!(info.instructions, expect.instructions, "{name} {backend:?}");
        assert_eq!(regs.al, expect.al, "{name} {backend:?} aL");
        let bits = |row: [f32; 4]| row.map(|v| F24::from_f32_exact(v).unwrap().bits());
        for &(o, want) in expect.outputs {
            assert_eq!(bits(regs.output[o]), want, "{name} {backend:?} o{o}");
        }
        let batch = vec![case.inputs; 24];
        let mut out = vec![[[0.0f32; 4]; 16]; 24];
        let total = shader
            .invoke(Invocation::batch(&case.uniforms, &batch, &mut out))
            .unwrap()
            .instructions;
        assert_eq!(total, 24 * expect.instructions, "{name} {backend:?} batch");
        for row in &out {
            for &(o, want) in expect.outputs {
                assert_eq!(bits(row[o]), want, "{name} {backend:?} batch o{o}");
            }
        }
    }
}

/// `loop-overlap-80`: LOOPs C and D end on the same word 0x01b, LOOP B on the BREAKC at 0x01d.
/// Uniforms: i0 = (0, 16, 6) one iteration, i2 = (0, 0, 2) one iteration, i3 = (1, 7, 5) two
/// iterations; b3 false. cmp after 0x009 is (false, true), so `breakc !cmp.x && cmp.y` at 0x01d
/// is taken every time it runs.
///
/// ```text
/// 000-00b   13 instructions (IFU b3 false jumps to its else arm 0x00d)   13
/// 00e LOOP i2 -> A {start 0x0f, end 0x21}          loops [A]          aL = 0
/// 00f, 010
/// 011 LOOP i3 -> B {start 0x12, end 0x1e}          loops [A B]        aL = 7
/// 012, 013
/// 014 LOOP i0 -> C {start 0x15, end 0x1c}          loops [A B C]      aL = 16
/// 015, 016
/// 017 LOOP i2 -> D {start 0x18, end 0x1c}          loops [A B C D]    aL = 0
/// 018-01b   after 01b PC+1 = 0x1c is D's end: D has no iteration left, aL += 2 -> 2, D pops.
///           That is the LOOP stack's one pop for this instruction: C (also ending at 0x1c)
///           is not checked, and stays on the stack with an end that is never met again.
/// 01c
/// 01d BREAKC taken: pops C (the top), the LOOP copy of the PC becomes C's end, 0x1c.
///           The LOOP stack has acted: B is NOT compared with PC+1 = 0x1e.   29 so far
/// 01c, 01d  BREAKC taken again: pops B, PC = B's end, 0x1e                  31
/// 01e, 01f (breakc cmp.x, not taken), 020: PC+1 = 0x21 is A's end: aL += 2 -> 4, A pops  34
/// 021-02a   ten instructions to END                                         44, aL = 4
/// ```
///
/// The old reading let the loop stack check B after the BREAKC's pop at 0x01d: B iterated
/// (aL = 2 + 5 = 7, back to 0x012), and on the second pass the BREAKC popped C
/// and B's end popped B in the same instruction: 54 instructions, aL = 9, and o3 (r3, last
/// written by 0x013 in the extra pass) differed: o3.x 0xbca761, o3.w 0x810000. The independent
/// model's numbers were 44 instructions, aL = 4, o3.x 0xc2e4f8, o3.w 0xbc3e16.
#[test]
fn loop_overlap_80_breakc_at_the_end_of_the_enclosing_loop() {
    check(
        "loop-overlap-80",
        &Expect {
            instructions: 44,
            al: 4,
            outputs: &[
                (0, [0x431a18, 0x45a2c9, 0x000000, 0x45a2c9]),
                (1, [0x4656f8, 0x810000, 0x4674e4, 0x810000]),
                (2, [0x4a1a18, 0xc32000, 0x3d99fc, 0xbcf944]),
                (3, [0xc2e4f8, 0x3dffff, 0xc32000, 0xbc3e16]),
                (8, [0x010000, 0xc3983a, 0xbf0000, 0x010000]),
                (10, [0xc8573d, 0x3bcb97, 0x000000, 0x000000]),
                (15, [0xc11e90, 0x000000, 0x000000, 0x000000]),
            ],
        },
    );
}

/// `inf-sign-136`: five nested LOOPs (the fifth push drops the outermost frame), two of them
/// (G, H) ending on the BREAKC at 0x01e. Uniforms: i1 = (1, 38, 4) two iterations, i3 =
/// (1, 32, 0) two iterations. cmp is (true, true) from 0x00c on, so `breakc cmp.y` is taken.
///
/// ```text
/// 000-009   10 instructions                                                 10
/// 00a LOOP i3, 00b, 00c twice (aL 32 + 0)                                    15
/// 00d IFC !cmp.x && cmp.y false: jump to 0x011                              16
/// 011 LOOP i1 -> E {end 0x21}     012 LOOP i1 -> F {end 0x20}    aL = 38
/// 013 LOOP i3 -> G {end 0x1f}     014     015 LOOP i3 -> H {end 0x1f}       aL = 32
/// 016, 017 (madi r0.z: (-v8.y)(-r4.z) + c73.w = (+max)(+20) + tiny = +inf)
/// 018 LOOP i3 -> I {end 0x1d}: the ring is full, E (the oldest) is dropped   24
/// 019-01c twice (I iterates once, then pops)                                32
/// 01d, 01e BREAKC taken: pops H, PC = H's end 0x1f; G (also ending at 0x1f) is not
///           checked in this instruction                                     34
/// 01f, 020 (0x20 and 0x21 are no frame's end now: G waits for 0x1f)         36
/// 021 IFU b6 false -> 0x026; 026 IFC cmp.y true -> IF {end 0x29, target 0x3a};
/// 027, 028, IF pops to 0x03a; 03a-03f to END                                46, aL = 32
/// ```
///
/// The old reading checked G after the BREAKC's pop, so G and then F iterated: 93
/// instructions, aL = 36, and 0x017 ran again after 0x01d had made r4.z positive, so r0.z
/// became -inf and the dot products into o13 and o14 +inf. Here, as in the model, r0.z (o0.z)
/// is +inf and o13, o14 hold -inf (v1.y < 0 multiplies r0.z).
#[test]
fn inf_sign_136_breakc_at_the_end_of_two_loops() {
    check(
        "inf-sign-136",
        &Expect {
            instructions: 46,
            al: 32,
            outputs: &[
                (0, [0x3df0b6, 0xbe1189, 0x7f0000, 0x2e0000]),
                (1, [0x42f0de, 0x3f0000, 0x423000, 0xc472ae]),
                (2, [0x400000, 0xfeffff, 0x3e2be8, 0xc7260b]),
                (3, [0x80ffff, 0x47a40d, 0x3e9c8e, 0x3e8c34]),
                (5, [0x7fffff, 0x7fffff, 0x7fffff, 0x000000]),
                (13, [0xff0000, 0x000000, 0x000000, 0xff0000]),
                (14, [0xff0000, 0x490d13, 0xff0000, 0xff0000]),
            ],
        },
    );
}
