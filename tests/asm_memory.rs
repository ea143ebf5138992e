//! The assembler's memory stays within 16 bytes of peak heap per source byte (the source
//! included) on large inputs of every shape, and its input limit is a clear error. Heap use
//! is counted exactly by a global allocator wrapper; this file holds one test so that nothing
//! else allocates while it measures. (Speed is measured in `benches/asm_memory.rs`, which
//! reports the same ratio for larger sources.)

use picajit::asm::{assemble, assemble_with_warnings, SourceFile, MAX_SOURCE_BYTES};
use picajit::testgen::{asm_stress_source, AsmStress};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the wrapper only keeps
// two counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is passed on unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = CURRENT.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn peak_memory_per_source_byte_and_input_limit() {
    const BYTES: usize = 3 << 20;
    for shape in AsmStress::ALL {
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let text = asm_stress_source(shape, BYTES);
        let result = assemble_with_warnings(&[SourceFile {
            name: "stress.pica",
            text: &text,
        }]);
        let errors = result.as_ref().err().map_or(0, Vec::len);
        drop(result);
        let peak = PEAK.load(Ordering::Relaxed) - base;
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
