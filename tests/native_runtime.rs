//! The host paths compiled code depends on, run on the host's own backend in a real process:
//! run-time feature detection, the W^X mapping, instruction-cache maintenance for code written
//! where other code ran before, code compiled on one thread and run on others, and the
//! caller's float environment surviving a call. On x86-64 hosts this is the x86-64 JIT; on
//! AArch64 hosts (`scripts/test-aarch64.sh` runs them in an AArch64 process under qemu-user)
//! the AArch64 JIT, which elsewhere only ever runs under unicorn, where none of these paths
//! exist: unicorn has its own memory map, no caches and a float state of its own.
#![cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]

use picajit::interp::pica::exec::Interpreter;
use picajit::interp::pica::float::FloatMode;
use picajit::interp::pica::isa::{
    encode, DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg, Swizzle, WriteMask,
};
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::{Registers, Uniforms};
use picajit::pica::engine::{EngineConfig, Shader};
use picajit::Engine;
use picajit_jit::{compile, Backend, CompiledShader, HostFeatures, Invocation};
use std::hint::black_box;

use picajit_testkit::testgen::MODES;

fn host() -> Backend {
    Backend::host().expect("a host with a JIT backend")
}

fn full() -> u64 {
    OperandDesc::new(WriteMask(0xF), [false; 3], [Swizzle(0x1B); 3]).0
}

fn program(instrs: &[Instruction]) -> Program {
    let code = instrs
        .iter()
        .map(|i| encode(i).expect("encodable"))
        .collect();
    Program::new(code, vec![full()], 0, ShaderKind::Vertex).expect("valid program")
}

/// `o0 = c[k] (+ v0)`: the uniform's offset is encoded in the load, so every `k` (and each
/// form) is different machine code.
fn reads_uniform(k: u8, add_input: bool) -> Program {
    let first = if add_input {
        Instruction::Binary {
            op: Opcode::Add,
            dst: DstReg::Output(0),
            src1: SrcReg::Const(k),
            src2: SrcReg::Input(0),
            rel: RelIndex::None,
            desc: 0,
        }
    } else {
        Instruction::Unary {
            op: Opcode::Mov,
            dst: DstReg::Output(0),
            src: SrcReg::Const(k),
            rel: RelIndex::None,
            desc: 0,
        }
    };
    program(&[first, Instruction::End])
}

fn jit(p: &Program, mode: FloatMode) -> CompiledShader {
    let shader = compile(p, mode, host(), HostFeatures::detect()).expect("compiles");
    assert!(shader.is_executable() && !shader.is_emulated());
    shader
}

/// Uniform row `k` holds `(k, k + 0.5, -k, 1)`.
fn uniforms(mode: FloatMode) -> Uniforms {
    let mut u = Uniforms::default();
    for k in 0..96u8 {
        let k = f32::from(k);
        u.set_float_f32(k as usize, [k, k + 0.5, -k, 1.0], mode);
    }
    u
}

/// Run compiled code (no interpreter fallback) and the interpreter on the same registers and
/// require the same result, bit for bit.
fn run_matches(
    shader: &CompiledShader,
    u: &Uniforms,
    input: [f32; 4],
    mode: FloatMode,
) -> [u32; 4] {
    let mut r = Registers::default();
    r.input[0] = input;
    let mut expected = r.clone();
    shader
        .invoke(Invocation::one(u, &mut r).budget(100).compiled_only())
        .expect("compiled code finishes");
    Interpreter::new(shader.program(), mode)
        .run(&mut expected, u, None, 100)
        .expect("interpreter finishes");
    let got = r.output[0].map(f32::to_bits);
    assert_eq!(got, expected.output[0].map(f32::to_bits));
    got
}

#[test]
fn features_are_detected_at_run_time_and_select_native_code() {
    let f = HostFeatures::detect();
    assert_eq!(HostFeatures::for_backend(host()), f);
    #[cfg(target_arch = "aarch64")]
    {
        assert_eq!(host(), Backend::A64);
        assert!(f.contains(HostFeatures::NEON));
        assert!(std::arch::is_aarch64_feature_detected!("neon"));
        // No x86-64 bit can be set on an AArch64 host.
        assert_eq!(f, HostFeatures::NEON);
    }
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(host(), Backend::X64);
        for (bit, present) in [
            (
                HostFeatures::SSE41,
                std::arch::is_x86_feature_detected!("sse4.1"),
            ),
            (
                HostFeatures::AVX,
                std::arch::is_x86_feature_detected!("avx"),
            ),
            (
                HostFeatures::AVX2,
                std::arch::is_x86_feature_detected!("avx2"),
            ),
            (
                HostFeatures::FMA,
                std::arch::is_x86_feature_detected!("fma"),
            ),
            (
                HostFeatures::LZCNT,
                std::arch::is_x86_feature_detected!("lzcnt"),
            ),
        ] {
            assert_eq!(f.contains(bit), present, "{bit:?}");
        }
        assert!(!f.contains(HostFeatures::NEON));
    }
    // The engine's automatic choice is the host's JIT, running natively, with the detected
    // features in its code.
    let shader = Shader::new(reads_uniform(3, true), &EngineConfig::default()).unwrap();
    let expected = match host() {
        Backend::X64 => Engine::X64,
        Backend::A64 => Engine::A64,
    };
    assert_eq!(shader.engine(), expected);
    let compiled = shader.compiled().expect("compiled");
    assert_eq!(compiled.features(), f);
    assert!(!compiled.is_emulated());
    assert!(compiled.exec_address().is_some());
}

/// The mapping of `addr` in this process, from `/proc/self/maps`. The file is produced a
/// chunk per read, and mappings other tests' threads add or remove between two reads can make
/// one reading skip a line (seen under qemu-user), so a miss is read again.
#[cfg(target_os = "linux")]
fn mapping_of(addr: usize) -> String {
    let mut maps = String::new();
    for _ in 0..50 {
        maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let line = maps.lines().find(|l| {
            let range = l.split(' ').next().unwrap();
            let (lo, hi) = range.split_once('-').unwrap();
            let lo = usize::from_str_radix(lo, 16).unwrap();
            let hi = usize::from_str_radix(hi, 16).unwrap();
            (lo..hi).contains(&addr)
        });
        if let Some(line) = line {
            return line.to_string();
        }
    }
    panic!("no mapping holds {addr:#x}:\n{maps}")
}

/// Every example in every mode is mapped read+execute and never writable, including the
/// constant pool that follows the instructions.
#[cfg(target_os = "linux")]
#[test]
fn code_is_mapped_read_execute_only() {
    for w in picajit::pica::bench::Workload::examples().unwrap() {
        for mode in MODES {
            let shader = jit(&w.program, mode);
            let start = shader.exec_address().unwrap();
            let last = start + shader.code().len() - 1;
            for addr in [start, last] {
                let line = mapping_of(addr);
                let perms = line.split(' ').nth(1).unwrap();
                assert!(perms.starts_with("r-x"), "{}: {line}", w.name);
            }
        }
    }
}

/// Code is written through data stores into memory that may have held other code a moment
/// earlier; on AArch64 the instruction cache does not see those stores unless the runtime
/// cleans and invalidates the range (`jit/src/host/runtime.rs`). Each program here is
/// dropped before the next is compiled, so the allocator hands the same pages out again, and
/// each must run as written, not as the stale instructions of its predecessor. (qemu-user
/// keeps its translations coherent by itself, so under emulation this proves the path runs,
/// not that the flush is needed; on AArch64 hardware a missing flush fails here.)
#[test]
fn fresh_code_at_a_reused_address_runs_as_written() {
    let mode = FloatMode::default();
    let u = uniforms(mode);
    let mut addresses = Vec::new();
    let mut reused = 0;
    for round in 0..4 {
        for k in 0..96u8 {
            let add = (k as usize + round) % 2 == 1;
            let shader = jit(&reads_uniform(k, add), mode);
            let addr = shader.exec_address().unwrap();
            if addresses.contains(&addr) {
                reused += 1;
            }
            addresses.push(addr);
            let v = if add { 0.25 } else { 0.0 };
            // The interpreter runs the program as compiled; stale instructions would give the
            // predecessor's row.
            let got = run_matches(&shader, &u, [v; 4], mode);
            let k = f32::from(k);
            let want = [k + v, k + 0.5 + v].map(f32::to_bits);
            assert_eq!(got[..2], want, "round {round}, c{k}, at {addr:#x}");
        }
    }
    // qemu-user places each new mapping after the previous one rather than in the hole a
    // freed one left, so under it (`PICAJIT_TEST_RUNNER`, set by scripts/test-aarch64.sh)
    // no address comes back; a real kernel reuses them at once.
    if std::env::var_os("PICAJIT_TEST_RUNNER").is_none() {
        assert!(
            reused > 0,
            "no code address was reused in {} compilations: the test did not exercise \
             rewritten code",
            addresses.len()
        );
    } else {
        eprintln!("{reused} of {} code addresses were reused", addresses.len());
    }
}

/// Code published by one thread runs on others (on AArch64 each must synchronise its
/// instruction stream with the writer's: `prepare_for_execution` in the runtime), and
/// compiled code is shared by threads running it at the same time.
#[test]
fn code_compiled_on_one_thread_runs_on_others() {
    for mode in MODES {
        let u = uniforms(mode);
        let shared = jit(&reads_uniform(7, true), mode);
        let made_elsewhere: Vec<CompiledShader> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4u8)
                .map(|t| {
                    let (shared, u) = (&shared, &u);
                    s.spawn(move || {
                        for i in 0..50 {
                            let x = f32::from(t) * 100.0 + i as f32;
                            run_matches(shared, u, [x, -x, 0.5, 2.0], mode);
                        }
                        jit(&reads_uniform(20 + t, t % 2 == 0), mode)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for shader in &made_elsewhere {
            run_matches(shader, &u, [1.5, 2.5, 3.5, 4.5], mode);
        }
    }
}

/// Compiled code installs the float mode it needs (rounding, flushing) and gives the caller
/// its own back: host arithmetic after a call still rounds to nearest and keeps subnormals.
#[test]
fn caller_float_environment_survives_calls() {
    fn host_arithmetic_is_default() {
        // 1 + 1.5 * 2^-24 lies between 1 and the next float 1 + 2^-23, nearer the latter:
        // round-to-nearest gives it, round-toward-zero would give 1.
        let sum = black_box(1.0f32) + black_box(1.5 * f32::EPSILON / 2.0);
        assert_eq!(
            sum,
            1.0 + f32::EPSILON,
            "host rounding changed by compiled code"
        );
        let tiny = black_box(f32::MIN_POSITIVE) * black_box(0.5f32);
        assert!(
            tiny > 0.0,
            "host subnormal results flushed after compiled code"
        );
        let tiny64 = black_box(f64::MIN_POSITIVE) * black_box(0.5f64);
        assert!(
            tiny64 > 0.0,
            "host f64 subnormal results flushed after compiled code"
        );
    }
    host_arithmetic_is_default();
    for w in picajit::pica::bench::Workload::examples().unwrap() {
        if w.kind() != ShaderKind::Vertex {
            continue;
        }
        for mode in MODES {
            let shader = jit(&w.program, mode);
            let u = w.uniforms(mode);
            for input in w.inputs(mode, 4) {
                let mut r = Registers::default();
                r.input = input;
                // A deopt is fine here: what matters is that the code ran and returned.
                let _ = shader.invoke(Invocation::one(&u, &mut r).budget(100_000).compiled_only());
                host_arithmetic_is_default();
            }
            let inputs: Vec<_> = w.inputs(mode, 16);
            let mut outputs = vec![[[0.0f32; 4]; 16]; inputs.len()];
            let _ = shader.invoke(Invocation::batch(&u, &inputs, &mut outputs).budget(100_000));
            host_arithmetic_is_default();
        }
    }
}

/// What maps or remaps memory as executable, by the names it goes by in Rust code: the
/// dynasm buffers and its executable assemblers, the system calls beneath them, and Apple's
/// per-thread switch that makes `MAP_JIT` memory writable.
const MAPPING_NAMES: [&str; 12] = [
    "MutableBuffer",
    "ExecutableBuffer",
    "make_exec",
    "x64::Assembler",
    "aarch64::Assembler",
    "mmap",
    "mprotect",
    "VirtualAlloc",
    "VirtualProtect",
    "MAP_JIT",
    "PROT_EXEC",
    "pthread_jit_write_protect",
];

/// The places in `text` (Rust source; line comments are not code) that name one of
/// [`MAPPING_NAMES`], as `line: name`.
fn mapping_sites(text: &str) -> Vec<String> {
    let mut sites = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for name in MAPPING_NAMES {
            if code.contains(name) {
                sites.push(format!("{}: {name}", k + 1));
            }
        }
    }
    sites
}

fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// Executable memory is mapped in one place, `jit/src/host/runtime.rs` and its macOS part
/// `jit/src/host/runtime/macos.rs` (`MAP_JIT`), which keep it W^X and synchronise the AArch64
/// instruction cache: a mapping made anywhere else could skip the flush, which qemu-user
/// (where the AArch64 suite runs) would not notice. Every other Rust file of the workspace
/// but this one is read for what maps memory.
#[test]
fn executable_memory_is_mapped_only_by_the_runtime() {
    // The scan finds what it looks for, and leaves comments alone.
    assert_eq!(
        mapping_sites("let m = MutableBuffer::new(n)?; // not mmap\n// mprotect"),
        ["1: MutableBuffer"]
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let runtime = root.join("jit/src/host/runtime.rs");
    let macos = root.join("jit/src/host/runtime/macos.rs");
    let this = root.join("tests/native_runtime.rs");
    let mut files = Vec::new();
    rust_files(root, &mut files);
    for allowed in [&runtime, &macos] {
        assert!(files.contains(allowed), "{} not found", allowed.display());
    }
    let mut elsewhere = Vec::new();
    for file in files
        .iter()
        .filter(|f| **f != runtime && **f != macos && **f != this)
    {
        for site in mapping_sites(&std::fs::read_to_string(file).unwrap()) {
            elsewhere.push(format!(
                "{}:{site}",
                file.strip_prefix(root).unwrap().display()
            ));
        }
    }
    assert!(
        elsewhere.is_empty(),
        "executable memory mapped outside jit/src/host/runtime.rs and runtime/macos.rs:\n{}",
        elsewhere.join("\n")
    );
    let runtime_sites = mapping_sites(&std::fs::read_to_string(&runtime).unwrap());
    assert!(
        runtime_sites.iter().any(|s| s.ends_with("make_exec")),
        "the runtime no longer maps code? {runtime_sites:?}"
    );
    // The macOS part maps with MAP_JIT and writes under the per-thread protection.
    let macos_sites = mapping_sites(&std::fs::read_to_string(&macos).unwrap());
    for name in ["mmap", "MAP_JIT", "pthread_jit_write_protect"] {
        assert!(
            macos_sites.iter().any(|s| s.ends_with(name)),
            "runtime/macos.rs no longer names {name}: {macos_sites:?}"
        );
    }
}
