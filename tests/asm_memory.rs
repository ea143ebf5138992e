//! The assembler's memory stays within 16 bytes of peak heap per source byte (the source
//! included) on large inputs of every shape, and its input limit is a clear error. Heap use
//! is counted exactly by a global allocator wrapper; this file holds one test so that nothing
//! else allocates while it measures. (Speed is measured in `benches/asm_memory.rs`, which
//! reports the same ratio for larger sources.)

use picajit::pica::asm::{assemble, assemble_with_warnings, SourceFile, MAX_SOURCE_BYTES};
use picajit_testkit::testgen::{asm_stress_source, AsmStress};

mod counting_alloc;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

#[test]
fn peak_memory_per_source_byte_and_input_limit() {
    const BYTES: usize = 3 << 20;
    for shape in AsmStress::ALL {
        let base = counting_alloc::start();
        let text = asm_stress_source(shape, BYTES);
        let result = assemble_with_warnings(&[SourceFile {
            name: "stress.pica",
            text: &text,
        }]);
        let errors = result.as_ref().err().map_or(0, Vec::len);
        drop(result);
        let peak = counting_alloc::peak_since(base);
        let per_byte = peak as f64 / text.len() as f64;
        eprintln!("{}: {per_byte:.2} bytes per source byte", shape.name());
        assert!(
            per_byte <= 16.0,
            "{}: {per_byte:.2} bytes of peak memory per source byte",
            shape.name()
        );
        assert!(errors <= 100, "errors are capped: {errors}");
    }

    // Warnings are capped too (then one says how many more there were).
    let mut src = String::from(".proc main\n    end\n.end\n");
    for _ in 0..1500 {
        src.push_str(".unit\n.nodvle\n.setf c0(1.0/2.0, 0, 0, 0)\n");
    }
    let (_, warnings) = assemble_with_warnings(&[SourceFile {
        name: "w.pica",
        text: &src,
    }])
    .unwrap();
    assert_eq!(warnings.len(), 1001);
    assert!(
        warnings[1000].message.contains("500 more warning(s)"),
        "{}",
        warnings[1000]
    );

    // Over the documented limit: one clear error, nothing assembled.
    let big = " ".repeat(MAX_SOURCE_BYTES + 1);
    let e = assemble(&[SourceFile {
        name: "huge.pica",
        text: &big,
    }])
    .unwrap_err();
    assert!(e.message.contains("at most 67108864"), "{e}");
    assert_eq!((e.file.as_str(), e.line), ("huge.pica", 1));
}
