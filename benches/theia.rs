//! THEIA: the reference interpreter against the x86-64 JIT on the programs of
//! `examples/theia` (one run each, rtl profile, the state kept between runs with only the
//! inputs reset, as `picajit bench --isa theia` does), and whole frames of a scene
//! (`picajit bench --isa theia --scene`): picajit's own `examples/theia/scene` always, and
//! the original project's example1 when `PICAJIT_THEIA_DIR` names its checkout (the ROM's
//! default code comes from there).
//!
//! `cargo bench --bench theia`; `-- theia/frame` for the frames only.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use picajit::interp::theia::exec::{self, Code, Io, State};
use picajit::interp::theia::table::ENTRY_POINTS;
use picajit::interp::theia::{regs, Profile};
use picajit::jit::theia::ctx::TheiaCtx;
use picajit::jit::Backend;
use picajit::theia::asm;
use picajit::theia::render::{self, Scene};
use picajit::Engine;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

/// Output writes and texture reads folded into a checksum (texels read as zero).
#[derive(Default)]
struct SumIo(u32);

impl Io for SumIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        for v in addr.into_iter().chain(data) {
            self.0 = self.0.rotate_left(5) ^ v;
        }
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        for v in addr {
            self.0 = self.0.rotate_left(5) ^ v;
        }
        [0; 3]
    }
}

/// A program of `examples/theia`: name, source, entry point, inputs (register, value).
type Program = (
    &'static str,
    &'static str,
    &'static str,
    Vec<(u16, [u32; 3])>,
);

/// The programs and inputs of `picajit bench --isa theia` (a ray that hits the triangle; a
/// texel to convert).
fn programs() -> Vec<Program> {
    let q = |v: f64| (v * 131072.0).round() as i64 as i32 as u32;
    let r = |n: &str| regs::by_name(n).expect("register name");
    vec![
        (
            "ray_triangle",
            include_str!("../examples/theia/ray_triangle.theia"),
            "ENTRYPOINT_ADRR_MAIN",
            vec![
                (r("CREG_CAMERA_POSITION"), [0; 3]),
                (r("CREG_RAY_DIRECTION"), [q(0.1), q(0.05), q(1.0)]),
                (r("CREG_V0"), [q(-1.0), q(-1.0), q(5.0)]),
                (r("CREG_V1"), [q(2.0), q(-1.0), q(5.0)]),
                (r("CREG_V2"), [q(-1.0), q(2.0), q(5.0)]),
            ],
        ),
        (
            "grayscale",
            include_str!("../examples/theia/grayscale.theia"),
            "ENTRYPOINT_ADRR_PIXELSHADER",
            vec![(r("CREG_TEXTURE_COLOR"), [q(0.5), q(0.25), q(0.75)])],
        ),
    ]
}

fn programs_bench(c: &mut Criterion) {
    let profile = Profile::Rtl;
    for (name, source, entry, init) in programs() {
        let p = asm::assemble(source).expect("the examples assemble");
        // an entry point of the table, defined in the file (as `--entry NAME` finds it)
        let k = ENTRY_POINTS
            .iter()
            .position(|(n, _)| *n == entry)
            .expect("entry point name");
        let entry = asm::imem_address((p.entries[k] as usize & 0x7FFF) - asm::TABLE_LEN);
        let code = Code::imem(p.imem());
        let mut base = State::new(profile);
        for &(addr, v) in &init {
            base.regs[addr as usize] = v;
        }
        let steps = {
            let mut s = base.clone();
            exec::run(
                profile,
                &code,
                &mut s,
                &mut SumIo::default(),
                entry,
                1 << 20,
            )
            .expect("the example runs")
            .steps
        };
        let mut group = c.benchmark_group(format!("theia/{name}"));
        // Throughput: THEIA instructions executed per second.
        group.throughput(Throughput::Elements(steps));
        group.bench_function(BenchmarkId::new("interp", steps), |b| {
            let mut s = base.clone();
            let mut io = SumIo::default();
            b.iter(|| {
                for &(addr, v) in &init {
                    s.regs[addr as usize] = v;
                }
                s.last_result = base.last_result;
                black_box(exec::run(profile, &code, &mut s, &mut io, entry, 1 << 20).unwrap())
            })
        });
        if Backend::host() == Some(Backend::X64) {
            let jit = picajit::jit::theia::compile(&code, profile, Backend::X64, &[entry])
                .expect("the examples compile");
            group.bench_function(BenchmarkId::new("x64", steps), |b| {
                let mut ctx = TheiaCtx::default();
                picajit::jit::theia::ctx_from_state(&mut ctx, &base);
                let mut io = SumIo::default();
                b.iter(|| {
                    for &(addr, v) in &init {
                        ctx.regs[addr as usize] = v;
                    }
                    ctx.last_result = base.last_result;
                    black_box(jit.run_ctx(&mut ctx, &mut io, entry, 1 << 20).unwrap())
                })
            });
        }
        group.finish();
    }
}

/// One frame per iteration, compilation included (as `render` and `bench --scene` time it).
fn frames_bench(c: &mut Criterion) {
    let own = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/theia/scene");
    let mut scenes = vec![("own_scene".to_string(), own, Vec::new())];
    match std::env::var_os("PICAJIT_THEIA_DIR") {
        Some(root) => {
            let root = PathBuf::from(root);
            let rom = picajit::theia::rom::load(&root)
                .expect("the checkout's ROM")
                .words;
            scenes.push((
                "example1".to_string(),
                root.join("examples/scenes/example1"),
                rom,
            ));
        }
        None => eprintln!(
            "theia/frame: set PICAJIT_THEIA_DIR to a checkout of the original THEIA project to also time its example1"
        ),
    }
    for (name, dir, rom) in scenes {
        let scene = Scene::load(&dir, None).expect("the scene loads");
        let mut group = c.benchmark_group(format!("theia/frame/{name}"));
        if !rom.is_empty() {
            // about 0.5 s per interpreted frame
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(10));
        }
        let mut engines = vec![("interp", Engine::Interp)];
        if Backend::host() == Some(Backend::X64) {
            engines.push(("x64", Engine::X64));
        }
        for (engine_name, engine) in engines {
            for threads in [1usize, 2] {
                group.bench_function(BenchmarkId::new(engine_name, threads), |b| {
                    b.iter(|| black_box(render::render(&scene, &rom, engine, threads).unwrap()))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, programs_bench, frames_bench);
criterion_main!(benches);
