//! Assembler memory: peak heap bytes per source byte, and time, for large sources of several
//! shapes (`picajit_testkit::testgen::AsmStress`). Heap use is counted by a global allocator wrapper
//! (exact, unlike RSS); the source buffer itself (1 byte per byte) is included.
//!
//! `cargo bench --bench asm_memory` (sizes 4 and 32 MB; `PICAJIT_ASM_MB=100` for another size).
//! The target is at most 16 bytes of peak memory per source byte.

use picajit::pica::asm::{assemble_with_warnings, SourceFile};
use picajit_testkit::testgen::{asm_stress_source, AsmStress};
use std::time::Instant;

#[path = "../tests/counting_alloc/mod.rs"]
mod counting_alloc;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

fn main() {
    // `cargo bench` passes `--bench`; anything else that is not a flag filters shapes.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let sizes: Vec<usize> = match std::env::var("PICAJIT_ASM_MB") {
        Ok(v) => v
            .split(',')
            .map(|s| s.trim().parse().expect("PICAJIT_ASM_MB: sizes in MB"))
            .collect(),
        Err(_) => vec![4, 32],
    };
    println!("shape      source MB  peak MB  bytes/source byte  seconds  result");
    for shape in AsmStress::ALL {
        if !filter.is_empty() && !filter.iter().any(|f| shape.name().contains(f.as_str())) {
            continue;
        }
        for &mb in &sizes {
            let base = counting_alloc::start();
            let text = asm_stress_source(shape, mb << 20);
            let t = Instant::now();
            let result = assemble_with_warnings(&[SourceFile {
                name: "stress.pica",
                text: &text,
            }]);
            let secs = t.elapsed().as_secs_f64();
            let outcome = match &result {
                Ok((s, w)) => format!("{} DVLE(s), {} warning(s)", s.dvles.len(), w.len()),
                Err(e) => format!("{} error(s)", e.len()),
            };
            drop(result);
            let peak = counting_alloc::peak_since(base);
            println!(
                "{:<10} {:>9.1} {:>8.1} {:>18.2} {:>8.2}  {outcome}",
                shape.name(),
                text.len() as f64 / 1048576.0,
                peak as f64 / 1048576.0,
                peak as f64 / text.len() as f64,
                secs
            );
        }
    }
}
