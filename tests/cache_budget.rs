//! The compiled-code cache's byte budget: programs no shader uses are dropped least recently
//! used first once the budget is reached, code that shaders hold is kept, every entry point
//! of a shader counts, and memory stays flat however many distinct programs a session
//! loads (the resident set is read from `/proc/self/statm`).

use picajit::interp::pica::isa::*;
use picajit::interp::pica::program::{Program, ShaderKind};
use picajit::interp::pica::state::Uniforms;
use picajit::jit::CodeCache;
use picajit::pica::engine::{EngineConfig, Invocation, Shader};
use std::time::Instant;

/// Program number `i`: a few instructions (a transform-like mix) whose operand descriptor
/// and uniform indices depend on `i`, so that every `i` below 2^26 is a distinct cache key.
fn program(i: u32) -> Program {
    let bin = |op, dst, src1, src2| Instruction::Binary {
        op,
        dst,
        src1,
        src2,
        rel: RelIndex::None,
        desc: 0,
    };
    let code = [
        bin(
            Opcode::Mul,
            DstReg::Temp(0),
            SrcReg::Const((i % 90) as u8),
            SrcReg::Input(0),
        ),
        bin(
            Opcode::Add,
            DstReg::Temp(1),
            SrcReg::Const(91),
            SrcReg::Temp(0),
        ),
        bin(
            Opcode::Dp4,
            DstReg::Output(0),
            SrcReg::Const(92),
            SrcReg::Temp(1),
        ),
        bin(
            Opcode::Dp4,
            DstReg::Output(1),
            SrcReg::Const(93),
            SrcReg::Input(1),
        ),
        Instruction::Unary {
            op: Opcode::Mov,
            dst: DstReg::Output(2),
            src: SrcReg::Input(2),
            rel: RelIndex::None,
            desc: 0,
        },
        Instruction::End,
    ];
    let words = code.iter().map(|c| encode(c).unwrap()).collect();
    // Mask xyzw, the rest of the descriptor (source swizzles and negations) from `i`.
    let desc = 0xF | (u64::from(i) << 5);
    Program::new(words, vec![desc], 0, ShaderKind::Vertex).unwrap()
}

/// Create program `i` through `cache`, run a batch of 16 vertices on it (which generates the
/// eight-lane code too, on hosts that have it) and drop it.
fn create_run_drop(cache: &CodeCache, i: u32) {
    let shader = Shader::with_cache(program(i), &EngineConfig::default(), cache).unwrap();
    let uniforms = Uniforms::default();
    let inputs = [[[1.0f32; 4]; 16]; 16];
    let mut outputs = [[[0.0f32; 4]; 16]; 16];
    shader
        .invoke(Invocation::batch(&uniforms, &inputs, &mut outputs))
        .unwrap();
}

/// Resident set in bytes (`/proc/self/statm`, field 2, in pages).
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn a_hit_reuses_code_and_a_miss_compiles() {
    let cache = CodeCache::new();
    let a = Shader::with_cache(program(1), &EngineConfig::default(), &cache).unwrap();
    let b = Shader::with_cache(program(1), &EngineConfig::default(), &cache).unwrap();
    let _c = Shader::with_cache(program(2), &EngineConfig::default(), &cache).unwrap();
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries), (1, 2, 2));
    if let (Some(x), Some(y)) = (a.compiled(), b.compiled()) {
        assert!(std::ptr::eq(x, y), "a hit shares the compiled code");
    }
    assert!(s.bytes > 0 && s.bytes <= s.budget);
}

#[test]
fn every_entry_point_of_a_shader_counts_against_the_budget() {
    let cache = CodeCache::new();
    let shader = Shader::with_cache(program(3), &EngineConfig::default(), &cache).unwrap();
    let one = cache.stats();
    // Entry points 1 and 2 are other programs of the same words.
    shader.at_entry(1).unwrap();
    shader.at_entry(2).unwrap();
    let three = cache.stats();
    assert_eq!(three.entries, 3);
    assert_eq!(three.misses, 3);
    assert!(three.bytes > one.bytes);
    // Prepared once: a second call neither compiles nor looks up.
    shader.at_entry(1).unwrap();
    assert_eq!(cache.stats().misses, 3);
}

#[test]
fn code_in_use_stays_and_code_of_dropped_shaders_goes_least_recently_used_first() {
    let cache = CodeCache::with_budget(0);
    let held = Shader::with_cache(program(10), &EngineConfig::default(), &cache).unwrap();
    for i in 11..20 {
        create_run_drop(&cache, i);
    }
    let s = cache.stats();
    // Budget 0: only the held shader's code and the newest (dropped when the next compiles).
    assert!(s.entries <= 2, "{s:?}");
    assert!(s.evictions >= 8, "{s:?}");
    // The held shader's code was never dropped: creating its program again is a hit.
    let hits = s.hits;
    let _again = Shader::with_cache(program(10), &EngineConfig::default(), &cache).unwrap();
    assert_eq!(cache.stats().hits, hits + 1);
    drop(held);

    // Least recently used first: with room for about three entries, the one used last
    // survives the next compilations and the one used first does not.
    let cache = CodeCache::new();
    create_run_drop(&cache, 30);
    // Setting a budget re-measures: the entry now has its eight-lane code too.
    cache.set_budget(usize::MAX);
    let per = cache.stats().bytes;
    cache.set_budget(per * 3 + per / 2);
    create_run_drop(&cache, 31);
    create_run_drop(&cache, 32);
    create_run_drop(&cache, 30); // a hit: 30 is now the most recent
    create_run_drop(&cache, 33);
    create_run_drop(&cache, 34);
    let hits = cache.stats().hits;
    create_run_drop(&cache, 30);
    assert_eq!(cache.stats().hits, hits + 1, "{:?}", cache.stats());
    let misses = cache.stats().misses;
    create_run_drop(&cache, 31);
    assert_eq!(cache.stats().misses, misses + 1, "{:?}", cache.stats());
    // Lowering the budget drops at once.
    cache.set_budget(0);
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(cache.stats().bytes, 0);
}

/// Create, run and drop `count` distinct programs through a cache of `budget` bytes; returns
/// the resident set (bytes) every `step` programs.
fn growth(budget: usize, count: u32, step: u32) -> Vec<usize> {
    let cache = CodeCache::with_budget(budget);
    let mut curve = vec![rss()];
    let start = Instant::now();
    for i in 0..count {
        create_run_drop(&cache, i);
        let s = cache.stats();
        assert!(s.bytes <= budget, "{s:?} after program {i}");
        if (i + 1) % step == 0 {
            curve.push(rss());
            eprintln!(
                "{:6} programs: RSS {:6.1} MiB, cache {:5.1} MiB in {} entries, {} evictions, {:.1} s",
                i + 1,
                *curve.last().unwrap() as f64 / (1 << 20) as f64,
                s.bytes as f64 / (1 << 20) as f64,
                s.entries,
                s.evictions,
                start.elapsed().as_secs_f64()
            );
        }
    }
    curve
}

/// The resident set after the cache has filled stays within the budget plus a constant:
/// without eviction, the second 10,000 of 20,000 programs of about 10 KiB each would add
/// some 100 MiB.
#[test]
fn resident_memory_stays_flat_over_tens_of_thousands_of_distinct_programs() {
    if !std::path::Path::new("/proc/self/statm").exists() {
        eprintln!("no /proc/self/statm: skipped");
        return;
    }
    let budget = 4 << 20;
    let curve = growth(budget, 20_000, 2_000);
    // The first half fills the cache, the allocator's pools and, under qemu-user (the AArch64
    // check), the emulator's translation cache for the generated code: from then on, without
    // eviction, 10,000 more programs would add some 100 MiB.
    let first = curve[curve.len() / 2];
    let last = *curve.last().unwrap();
    let grown = last.saturating_sub(first);
    assert!(
        grown < 8 << 20,
        "resident set grew by {} KiB from 10,000 to 20,000 programs: {curve:?}",
        grown >> 10
    );
}

/// The growth curve of an emulator session loading 50,000 distinct programs with the default
/// budget (about a minute in a release build): `cargo test --release --test cache_budget --
/// --ignored --nocapture`. `PICAJIT_CACHE_BUDGET=<bytes>` sets another budget (a huge one
/// shows the curve without eviction).
#[test]
#[ignore]
fn resident_memory_over_fifty_thousand_programs() {
    let budget = std::env::var("PICAJIT_CACHE_BUDGET")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(picajit::jit::DEFAULT_CACHE_BUDGET);
    let base = rss();
    let curve = growth(budget, 50_000, 5_000);
    let peak = curve.iter().copied().max().unwrap();
    assert!(peak - base < budget.saturating_add(32 << 20), "{curve:?}");
}
