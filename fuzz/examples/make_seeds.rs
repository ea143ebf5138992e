//! Writes the seed corpus under `fuzz/seeds/TARGET/` from the example shaders (`examples/`)
//! and the test programs (`picajit_testkit::testgen`, the generator behind the differential tests).
//! `scripts/fuzz.sh` copies the seeds into the working corpus before each run.
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example make_seeds
//! ```

use picajit::interp::pica::float::{FloatMode, Rounding};
use picajit::interp::pica::program::ShaderKind;
use picajit::pica::asm::{assemble, disassemble, disassemble_program, SourceFile};
use picajit::pica::shbin::Shbin;
use picajit_fuzz::{encode_raw, encode_structured};
use picajit_testkit::testgen::{generate, Options};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("create seed directory");
    std::fs::write(dir.join(name), bytes).expect("write seed");
}

/// Engine-target prefix: options (backend, float mode, SHBIN route), budget, GS mode bytes.
fn engine_prefix(opts: u8, budget: u16) -> Vec<u8> {
    let mut v = vec![opts];
    v.extend_from_slice(&budget.to_le_bytes());
    v.extend_from_slice(&[0, 0, 3]);
    v
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let seeds = root.join("fuzz/seeds");
    let (diff, engine, shbin_dir, asm) = (
        seeds.join("differential"),
        seeds.join("engine"),
        seeds.join("shbin"),
        seeds.join("asm"),
    );
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .expect("examples/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "pica"))
        .collect();
    examples.sort();
    let mut sources = Vec::new();
    for (index, path) in examples.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).expect("read example");
        write(&asm, &name, text.as_bytes());
        let shbin = assemble(&[SourceFile {
            name: &name,
            text: &text,
        }])
        .expect("example assembles");
        let bytes = shbin.to_bytes();
        write(&shbin_dir, &format!("{name}.shbin"), &bytes);
        write(&asm, &format!("{name}.dis"), disassemble(&shbin).as_bytes());
        write(
            &engine,
            &format!("{name}.shbin"),
            &[engine_prefix(0x10, 2000), bytes.clone()].concat(),
        );
        for (k, dvle) in shbin.dvles.iter().enumerate() {
            let entry = dvle.main as u16;
            let mode = index % 3;
            write(
                &diff,
                &format!("{name}.{k}.raw"),
                &encode_raw(&shbin.code, &shbin.opdescs, entry, dvle.kind, 3),
            );
            if let Some(s) = encode_structured(&shbin.code, &shbin.opdescs, entry, dvle.kind, mode)
            {
                write(&diff, &format!("{name}.{k}.ops"), &s);
                write(
                    &engine,
                    &format!("{name}.{k}.ops"),
                    &[engine_prefix(0, 3000), s].concat(),
                );
            }
        }
        sources.push((name, text));
    }
    // Two files in one assembly (one DVLE per file; both define `main`, an error path).
    write(
        &asm,
        "two_files.pica",
        format!("{}\0{}", sources[0].1, sources[sources.len() - 1].1).as_bytes(),
    );

    // Test programs: what the differential tests generate, in both program formats.
    let modes = [
        FloatMode::F24(Rounding::TowardZero),
        FloatMode::F24(Rounding::NearestEven),
        FloatMode::F32,
    ];
    for seed in 0..24u64 {
        let kind = if seed % 4 == 3 {
            ShaderKind::Geometry
        } else {
            ShaderKind::Vertex
        };
        let cfg = Options {
            mode: modes[seed as usize % 3],
            kind,
            max_len: 40,
            flow: seed % 6 != 0,
            ..Options::default()
        };
        let case = generate(seed, &cfg);
        let p = &case.program;
        if let Some(s) =
            encode_structured(p.code(), p.opdescs(), p.entry(), kind, seed as usize % 4)
        {
            write(&diff, &format!("testgen_{seed}.ops"), &s);
            write(
                &engine,
                &format!("testgen_{seed}.ops"),
                &[engine_prefix((seed % 16) as u8 & !0x10, 500), s].concat(),
            );
        }
        if seed % 4 == 0 {
            write(
                &diff,
                &format!("testgen_{seed}.raw"),
                &encode_raw(p.code(), p.opdescs(), p.entry(), kind, seed as usize % 3),
            );
        }
        if seed % 3 == 0 {
            // The exact-form disassembly (raw targets, `.word`, explicit descriptors).
            let text = disassemble_program(p.code(), p.opdescs(), p.entry() as u32, kind);
            write(&asm, &format!("testgen_{seed}.pica"), text.as_bytes());
            if let Ok(s) = assemble(&[SourceFile {
                name: "t.pica",
                text: &text,
            }]) {
                write(&shbin_dir, &format!("testgen_{seed}.shbin"), &s.to_bytes());
            }
        }
    }
    // The SHBIN seeds must parse (otherwise they teach the fuzzer nothing).
    for entry in std::fs::read_dir(&shbin_dir).expect("seeds/shbin") {
        let path = entry.expect("dir entry").path();
        let bytes = std::fs::read(&path).expect("read seed");
        Shbin::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    eprintln!("seeds written to {}", seeds.display());
}
