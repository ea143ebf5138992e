//! FRSQ, FLOG and FEXP of the USC JIT (f64 evaluation rounded once, the interpreter for
//! lanes near a rounding boundary: `picajit_jit::usc::lower`) against the float model of the
//! interpreter (`picajit_interp::usc::float`, correctly rounded: see `tests/usc_interp.rs`),
//! input by input, on both backends.
//!
//! By default every 9973rd binary32 pattern (about 430 000 per function) plus the special
//! values and the neighbourhoods of the cut-offs; with `PICAJIT_USC_EXHAUSTIVE=1` every one
//! of the 2^32 patterns on the x86-64 backend (the AArch64 backend, emulated here, then
//! takes every 257th), split over the host's cores: run it in release
//! (`cargo test --release --test usc_float_jit`).

use picajit::usc::compile;
use picajit_interp::usc::float::{fexp, flog, frsq};
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::{State, UscOptions};
use picajit_jit::usc::{self as jit, x64};
use picajit_jit::Backend;

/// Groups per program: each computes one register, 16 instances each.
const GROUPS: usize = 240;
const PER_RUN: usize = GROUPS * 16;

fn reg(bank: Bank, index: usize) -> Reg {
    Reg {
        bank,
        index: index as u16,
    }
}

struct Checker {
    name: &'static str,
    model: fn(u32) -> u32,
    code: jit::UscCode,
    prepared: picajit_interp::usc::Prepared,
}

impl Checker {
    fn new(name: &'static str, model: fn(u32) -> u32, backend: Backend) -> Checker {
        let text: String = (0..GROUPS)
            .map(|k| format!("{k} : {name} r{k}, vi{k}\n"))
            .collect();
        let prepared = compile(&text, UscOptions::default()).unwrap();
        let code = jit::compile(&prepared, backend).unwrap();
        assert_eq!(code.native_groups, GROUPS, "{name} is lowered natively");
        Checker {
            name,
            model,
            code,
            prepared,
        }
    }

    /// Runs the inputs (at most PER_RUN) and compares every lane.
    fn check(&self, inputs: &[u32]) {
        let mut st = State::new(16).unwrap();
        for (i, &x) in inputs.iter().enumerate() {
            st.set(reg(Bank::Vi, i / 16), i % 16, x);
        }
        let out = self.code.run(&self.prepared, &mut st, 1 << 20).unwrap();
        assert_eq!(out.steps, GROUPS as u64);
        for (i, &x) in inputs.iter().enumerate() {
            let got = st.get(reg(Bank::R, i / 16), i % 16);
            let want = (self.model)(x);
            assert_eq!(
                got,
                want,
                "{} {}({x:#010x}): jit {got:#010x}, model {want:#010x}",
                self.code.backend(),
                self.name
            );
        }
    }

    /// Every `stride`-th pattern from `start` up to `end` (exclusive, 64-bit to include
    /// u32::MAX).
    fn sweep(&self, start: u64, end: u64, stride: u64) {
        let mut buf = Vec::with_capacity(PER_RUN);
        let mut x = start;
        while x < end {
            buf.push(x as u32);
            if buf.len() == PER_RUN {
                self.check(&buf);
                buf.clear();
            }
            x += stride;
        }
        if !buf.is_empty() {
            self.check(&buf);
        }
    }
}

/// Special values and the neighbourhoods where the lowering changes path: zeros, infinities,
/// NaNs, denormals, 1.0, powers of two, FEXP's cut-offs (-152, -151, -150, -126, 128, 160).
fn specials() -> Vec<u32> {
    let mut v = vec![
        0,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0000,
        0x7F80_0001,
        0x7FFF_FFFF,
        1,
        0x8000_0001,
        0x007F_FFFF,
        0x0080_0000,
        0x3F80_0000,
        0xBF80_0000,
    ];
    for c in [
        -152f32, -151.0, -150.0, -149.0, -126.0, -125.0, 1.0, 2.0, 0.5, 127.0, 128.0, 160.0,
        -160.0, 1e-30, 3.0e38,
    ] {
        let b = c.to_bits();
        for d in 0..64u32 {
            v.push(b.wrapping_add(d));
            v.push(b.wrapping_sub(d));
        }
    }
    for e in 0..255u32 {
        v.push(e << 23);
        v.push((e << 23) | 0x8000_0000);
        v.push((e << 23) | 0x7F_FFFF);
    }
    v
}

fn backends() -> Vec<Backend> {
    let mut v = vec![Backend::A64];
    if x64::available() {
        v.insert(0, Backend::X64);
    }
    v
}

fn exhaustive() -> bool {
    std::env::var("PICAJIT_USC_EXHAUSTIVE").as_deref() == Ok("1")
}

fn run(name: &'static str, model: fn(u32) -> u32) {
    for backend in backends() {
        let c = Checker::new(name, model, backend);
        for chunk in specials().chunks(PER_RUN) {
            c.check(chunk);
        }
        let stride = match (exhaustive(), backend) {
            (true, Backend::X64) => 1,
            (true, Backend::A64) => 257,
            (false, _) => 9973,
        };
        if stride == 1 {
            // Split over the cores: each thread compiles its own code.
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
            let span = (1u64 << 32).div_ceil(threads);
            std::thread::scope(|s| {
                for t in 0..threads {
                    s.spawn(move || {
                        let c = Checker::new(name, model, backend);
                        c.sweep(t * span, ((t + 1) * span).min(1 << 32), 1);
                    });
                }
            });
        } else {
            c.sweep(0, 1 << 32, stride);
        }
        eprintln!("{name} on {backend}: stride {stride}, all equal");
    }
}

#[test]
fn frsq_matches_the_model() {
    run("frsq", frsq);
}

#[test]
fn flog_matches_the_model() {
    run("flog", flog);
}

#[test]
fn fexp_matches_the_model() {
    run("fexp", fexp);
}
