//! Results never depend on the calling thread's float environment: with a hostile one (x86-64
//! MXCSR: round toward zero, flush-to-zero and denormals-are-zero, every exception flag set;
//! AArch64 FPCR: round toward zero and flush-to-zero) every engine of every instruction set
//! gives bit for bit the results of a clean environment (round to nearest, nothing flushed),
//! and the caller gets its environment back.
//!
//! What "back" means: the control bits (rounding, FTZ/DAZ, exception masks; all of FPCR) are
//! exactly the caller's after every call. The x86-64 exception flags are sticky status the
//! caller owns: a flag the caller had set is still set afterwards, and a call may leave flags
//! it raised set (the PICA x86-64 code keeps the caller's MXCSR when its control bits are the
//! mode's already, and Rust code raises flags as it computes), so flags are not compared
//! beyond that. AArch64 keeps its flags in FPSR, which is not changed here.
//!
//! Covered: USC (`examples/usc/*.usc` and a program of the float instructions the examples
//! do not use) on the interpreter and both JITs; THEIA (`examples/theia/*.theia`, both
//! profiles) on the interpreter and both JITs; PICA200 (the vertex-shader examples, one
//! vertex and a batch, in the three float modes) on the interpreter and both JITs. The
//! AArch64 JIT runs under the emulator on other hosts: its generated code sees the emulator's
//! FPCR, not the host's MXCSR, but the Rust parts of its runs (the USC interpreter steps
//! between calls, the PICA and THEIA glue) see the hostile environment. TOY is integer only.

use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::interp::pica::program::ShaderKind;
use picajit::interp::pica::state::Registers;
use picajit::interp::theia::exec::{Code, Io, State as TheiaState};
use picajit::interp::theia::{regs, table, Profile};
use picajit::interp::usc::program::{Bank, Reg};
use picajit::interp::usc::{State as UscState, UscOptions};
use picajit::jit::usc as jit;
use picajit::pica::bench::Workload;
use picajit::pica::engine::{EngineConfig, Invocation, Shader as PicaShader};
use picajit::theia::engine::Shader as TheiaShader;
use picajit::usc::engine::Shader as UscShader;
use picajit::Engine;

/// The calling thread's float control register.
#[cfg(target_arch = "x86_64")]
mod fenv {
    #![allow(
        deprecated,
        reason = "_mm_getcsr/_mm_setcsr are the plain way to reach MXCSR"
    )]
    use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};

    pub type Word = u32;
    /// Round to nearest, all exceptions masked, no flags: Rust's environment.
    pub const CLEAN: Word = 0x1F80;
    /// The control bits (everything but the six exception flags).
    pub const CONTROL: Word = 0xFFC0;
    /// The exception flags.
    pub const FLAGS: Word = 0x3F;
    /// Round toward zero, FTZ, DAZ, every flag set; exceptions stay masked (unmasking them
    /// would turn a host operation into a signal, which no engine promises to avoid).
    const HOSTILE: Word = 0x1F80 | 0x6000 | 0x8000 | 0x0040 | 0x3F;
    /// Environments the engines run under: the hostile one, the same without flags, round up,
    /// and round down with DAZ alone.
    pub const HOSTILE_ENVS: [Word; 4] = [
        HOSTILE,
        HOSTILE & !FLAGS,
        0x1F80 | 0x4000,
        0x1F80 | 0x2000 | 0x0040,
    ];

    pub fn get() -> Word {
        // SAFETY: reads this thread's SSE control/status register (SSE is baseline on x86-64).
        unsafe { _mm_getcsr() }
    }

    pub fn set(v: Word) {
        // SAFETY: writes this thread's SSE control/status register with every exception
        // masked, so no operation traps; the callers restore the previous value.
        unsafe { _mm_setcsr(v) }
    }
}

/// The calling thread's float control register.
#[cfg(target_arch = "aarch64")]
mod fenv {
    pub type Word = u64;
    pub const CLEAN: Word = 0;
    /// FPCR holds control bits only (the flags are in FPSR).
    pub const CONTROL: Word = !0;
    pub const FLAGS: Word = 0;
    /// RMode = round toward zero (bits 23:22 = 11), FZ (bit 24).
    const HOSTILE: Word = (0b11 << 22) | (1 << 24);
    pub const HOSTILE_ENVS: [Word; 3] = [HOSTILE, 0b01 << 22, (0b10 << 22) | (1 << 24)];

    pub fn get() -> Word {
        let v: u64;
        // SAFETY: reads this thread's FPCR; no memory or other register is touched.
        unsafe { std::arch::asm!("mrs {}, fpcr", out(reg) v, options(nomem, nostack)) };
        v
    }

    pub fn set(v: Word) {
        // SAFETY: writes this thread's FPCR with trap enables clear (the values above), so
        // no operation traps; the callers restore the previous value.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) v, options(nomem, nostack)) };
    }
}

/// Restores the float environment it saved when dropped (also when a check panics).
struct Restore(fenv::Word);

impl Drop for Restore {
    fn drop(&mut self) {
        fenv::set(self.0);
    }
}

/// Runs `f` with the thread's float environment set to `env`; returns its result and the
/// environment it left.
fn under<R>(env: fenv::Word, f: impl FnOnce() -> R) -> (R, fenv::Word) {
    let _restore = Restore(fenv::get());
    fenv::set(env);
    let r = f();
    let after = fenv::get();
    (r, after)
}

/// Runs `f` in the clean environment and in each hostile one: every result must equal the
/// clean one and every call must leave the environment it was given (see the module docs).
/// Returns how many hostile runs differed, after printing each.
fn same_everywhere<R: PartialEq + std::fmt::Debug>(
    what: &str,
    words: impl Fn(&R) -> Vec<u32>,
    f: impl Fn() -> R,
) -> usize {
    let (clean, after) = under(fenv::CLEAN, &f);
    assert_eq!(after & fenv::CONTROL, fenv::CLEAN & fenv::CONTROL, "{what}");
    let mut failures = 0;
    for env in fenv::HOSTILE_ENVS {
        let (got, after) = under(env, &f);
        if after & fenv::CONTROL != env & fenv::CONTROL {
            eprintln!("{what}, env {env:#x}: control bits left as {after:#x}");
            failures += 1;
        }
        if after & env & fenv::FLAGS != env & fenv::FLAGS {
            eprintln!("{what}, env {env:#x}: the caller's flags cleared ({after:#x})");
            failures += 1;
        }
        if got != clean {
            let (a, b) = (words(&clean), words(&got));
            let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
            let first = a.iter().zip(&b).position(|(x, y)| x != y);
            eprintln!(
                "{what}, env {env:#x}: {differ} of {} result words differ (first at {first:?}: \
                 {:#x?} / {:#x?})",
                a.len(),
                first.map(|i| a[i]),
                first.map(|i| b[i])
            );
            failures += 1;
        }
    }
    failures
}

/// The engines a facade shader can be prepared for on this host (the JIT choices that
/// cannot run here are left out).
const ENGINES: [Engine; 3] = [Engine::Interp, Engine::X64, Engine::A64];

// ---- USC ----

/// A float value of one of several kinds: ordinary, tiny (products and sums go subnormal),
/// subnormal, huge, special, or any bit pattern.
fn usc_value(rng: &mut picajit::usc::testgen::Rng) -> u32 {
    let w = rng.word();
    let sign = ((w >> 40) as u32 & 1) << 31;
    let mant = (w >> 8) as u32 & 0x7F_FFFF;
    match w % 8 {
        0..=2 => sign | ((124 + (w >> 16) as u32 % 6) << 23) | mant,
        3 => sign | ((1 + (w >> 16) as u32 % 70) << 23) | mant,
        4 => sign | mant,
        5 => sign | ((200 + (w >> 16) as u32 % 54) << 23) | mant,
        6 => picajit::usc::testgen::value(rng),
        _ => w as u32,
    }
}

/// Instructions the examples do not use, each on a mix of values: FSQRT, PCK/UNPCK (helper
/// groups on the x86-64 JIT), `.flr`, `.sat`, f32 tests.
const USC_FLOAT_OPS: &str = "\
0 : fsqrt r20, vi0
1 : frcp r21, vi1
2 : fexp r22, vi2
3 : flog r23, vi3
4 : frsq r24, vi0
5 : fadd ft0, vi0.flr, vi1
    fmul ft1, vi2, vi3
    mov r25, ft0
    mov r26, ft1
6 : fmad ft0, vi0, vi1, vi2
    fmad.sat ft1, vi3, vi1, vi0
    mov r27, ft0
    mov r28, ft1
7 : pck.s32 ft2, vi0
    mov r29, ft2
8 : pck.u8888.scale ft2, vi1
    mov r30, ft2
9 : pck.s32.roundzero ft2, vi2
    mov r31, ft2
10 : unpck.u8888.scale ft0, vi3.e1
    mov r32, ft0
11 : tstl.f32 ftt, p0, vi0, vi1
";

fn usc_state(file: &str, seed: u64) -> UscState {
    let mut rng = picajit::usc::testgen::Rng::new(seed);
    let mut st = UscState::new(16).unwrap();
    let reg = |bank, index| Reg { bank, index };
    for l in 0..16 {
        for index in 0..8 {
            let v = if file == "divergent_loop" {
                (usc_value(&mut rng) % 60) + 1
            } else {
                usc_value(&mut rng)
            };
            st.set(reg(Bank::Vi, index), l, v);
        }
    }
    for index in 0..16 {
        st.set(reg(Bank::Sh, index), 0, usc_value(&mut rng));
    }
    st
}

/// Every register word of the banks the programs use, p0 and Pe.
fn usc_words(r: &(Result<picajit::interp::usc::Outcome, String>, UscState)) -> Vec<u32> {
    let st = &r.1;
    let mut v = Vec::new();
    for bank in [Bank::R, Bank::Vi, Bank::I, Bank::Sh] {
        for index in 0..40.min(bank.count()) {
            for l in 0..16 {
                v.push(st.get(Reg { bank, index }, l));
            }
        }
    }
    v.extend(st.p0.iter().chain(&st.pe).map(|&b| u32::from(b)));
    v
}

#[test]
fn usc_engines_ignore_the_callers_float_environment() {
    let mut programs: Vec<(String, String)> = ["vertex_transform", "lighting", "divergent_loop"]
        .iter()
        .map(|f| {
            let path = format!("{}/examples/usc/{f}.usc", env!("CARGO_MANIFEST_DIR"));
            (f.to_string(), std::fs::read_to_string(path).unwrap())
        })
        .collect();
    programs.push(("float_ops".into(), USC_FLOAT_OPS.into()));
    let mut failures = 0;
    let mut runs = 0;
    for (name, text) in &programs {
        let prepared = picajit::usc::compile(text, UscOptions::default()).unwrap();
        // Code generation does not depend on the environment either.
        failures += same_everywhere(
            &format!("usc {name}: generated code"),
            |code: &Vec<u8>| code.iter().map(|&b| u32::from(b)).collect(),
            || {
                let mut code = jit::x64::generate(&prepared).unwrap().0;
                code.extend(jit::a64::generate(&prepared).unwrap().0);
                code
            },
        );
        for engine in ENGINES {
            if let Err(e) = UscShader::new(prepared.clone(), engine) {
                eprintln!("usc {name}: {engine} skipped: {e}");
                continue;
            }
            for seed in 0..6 {
                let init = usc_state(name, 0xF1E0 + seed);
                runs += 1;
                failures += same_everywhere(
                    &format!("usc {name} {engine} seed {seed}"),
                    usc_words,
                    || {
                        // Compiled and run in the environment under test.
                        let shader = UscShader::new(prepared.clone(), engine).unwrap();
                        let mut st = init.clone();
                        let r = shader.run(&mut st, 100_000).map_err(|e| e.to_string());
                        (r, st)
                    },
                );
            }
        }
    }
    assert!(runs >= 4 * 6 * 2, "the interpreter and a JIT ran");
    assert_eq!(failures, 0, "USC results or environments differed (above)");
}

// ---- THEIA ----

/// Records every I/O call; texture reads answer a function of the address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TestIo(Vec<(u8, [u32; 3], [u32; 3])>);

impl Io for TestIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        self.0.push((0, addr, data));
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        let v = [addr[0] ^ 0x1234_5678, addr[1].wrapping_mul(3), addr[2]];
        self.0.push((1, addr, v));
        v
    }
}

#[test]
fn theia_engines_ignore_the_callers_float_environment() {
    let q = |v: i64| (v * 131072 / 200) as i32 as u32;
    let r = |n: &str| regs::by_name(n).unwrap() as usize;
    let mut rng = picajit_testkit::XorShift(11);
    let mut failures = 0;
    for (file, entry_name) in [
        ("ray_triangle.theia", "ENTRYPOINT_ADRR_MAIN"),
        ("grayscale.theia", "ENTRYPOINT_ADRR_PIXELSHADER"),
        ("grayscale.theia", "ENTRYPOINT_ADRR_USERCONSTANTS"),
    ] {
        let path = format!("{}/examples/theia/{file}", env!("CARGO_MANIFEST_DIR"));
        let p = picajit::theia::asm::assemble(&std::fs::read_to_string(path).unwrap()).unwrap();
        let k = table::ENTRY_POINTS
            .iter()
            .position(|(n, _)| *n == entry_name)
            .unwrap();
        let entry = p.entries[k] as u16;
        for profile in Profile::ALL {
            for engine in ENGINES {
                let shader =
                    |engine| TheiaShader::new(Code::imem(p.imem()), profile, &[entry], engine);
                if let Err(e) = shader(engine) {
                    eprintln!("theia {file}: {engine} skipped: {e}");
                    continue;
                }
                for i in 0..4 {
                    let mut s = TheiaState::new(profile);
                    s.regs[r("CREG_RAY_DIRECTION")] = [
                        q(rng.below(200) as i64 - 100),
                        q(rng.below(200) as i64 - 100),
                        q(200),
                    ];
                    s.regs[r("CREG_CAMERA_POSITION")] = [rng.next() as u32 >> 12, 0, 0];
                    s.regs[r("CREG_V0")] = [q(-200), q(-200), q(1000)];
                    s.regs[r("CREG_V1")] = [q(400), q(-200), q(1000)];
                    s.regs[r("CREG_V2")] = [q(-200), q(400), q(1000 + 20 * i)];
                    s.regs[r("CREG_TEXTURE_COLOR")] =
                        [rng.next() as u32 >> 14, rng.next() as u32 >> 14, 7];
                    failures += same_everywhere(
                        &format!("theia {file} {entry_name} {profile:?} {engine} {i}"),
                        |(_, st, io): &(_, TheiaState, TestIo)| {
                            let mut w: Vec<u32> = st.regs.iter().flatten().copied().collect();
                            w.extend(io.0.iter().flat_map(|(_, a, d)| a.iter().chain(d)));
                            w
                        },
                        || {
                            let mut st = s.clone();
                            let mut io = TestIo::default();
                            let out = shader(engine)
                                .unwrap()
                                .run(&mut st, &mut io, entry, 10_000)
                                .map_err(|e| e.to_string());
                            (out, st, io)
                        },
                    );
                }
            }
        }
    }
    assert_eq!(
        failures, 0,
        "THEIA results or environments differed (above)"
    );
}

// ---- PICA200 ----

fn pica_bits(rows: &[[[f32; 4]; 16]]) -> Vec<u32> {
    rows.iter()
        .flatten()
        .flatten()
        .map(|x| x.to_bits())
        .collect()
}

#[test]
fn pica_engines_ignore_the_callers_float_environment() {
    let modes = [
        FloatMode::F24(Rounding::NearestEven),
        FloatMode::F24(Rounding::TowardZero),
        FloatMode::F32,
    ];
    let mut failures = 0;
    let workloads: Vec<Workload> = Workload::examples()
        .unwrap()
        .into_iter()
        .filter(|w| w.kind() == ShaderKind::Vertex)
        .collect();
    assert!(!workloads.is_empty());
    for w in &workloads {
        for mode in modes {
            let u = w.uniforms(mode);
            // Twelve vertices: one group of eight for the multi-vertex code, four single.
            let inputs = w.inputs(mode, 12);
            for engine in ENGINES {
                let config = EngineConfig::default()
                    .with_engine(engine)
                    .with_float_mode(mode);
                match PicaShader::new(w.program.clone(), &config) {
                    Ok(s) if s.engine() == engine => {}
                    Ok(s) => {
                        eprintln!("pica {}: {engine} fell back to {}", w.name, s.engine());
                        continue;
                    }
                    Err(e) => {
                        eprintln!("pica {}: {engine} skipped: {e}", w.name);
                        continue;
                    }
                }
                // Compiled and run in the environment under test.
                let shader = || PicaShader::new(w.program.clone(), &config).unwrap();
                failures += same_everywhere(
                    &format!("pica {} {mode:?} {engine} one vertex", w.name),
                    |(_, r): &(_, Vec<[[f32; 4]; 16]>)| pica_bits(r),
                    || {
                        let mut r = Registers::default();
                        r.input = inputs[0];
                        let out = shader()
                            .invoke(Invocation::one(&u, &mut r))
                            .map(|o| o.instructions)
                            .map_err(|e| e.to_string());
                        (out, vec![r.input, r.temp, r.output])
                    },
                );
                failures += same_everywhere(
                    &format!("pica {} {mode:?} {engine} batch", w.name),
                    |(_, r): &(_, Vec<[[f32; 4]; 16]>)| pica_bits(r),
                    || {
                        let mut out = vec![[[0.0f32; 4]; 16]; inputs.len()];
                        let o = shader()
                            .invoke(Invocation::batch(&u, &inputs[..], &mut out[..]))
                            .map(|o| o.instructions)
                            .map_err(|e| e.to_string());
                        (o, out)
                    },
                );
            }
        }
    }
    assert_eq!(
        failures, 0,
        "PICA200 results or environments differed (above)"
    );
}
