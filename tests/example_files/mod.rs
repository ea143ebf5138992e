//! The programs in `examples/`, read and assembled for the tests (and the interpreter
//! benchmark) that start from them.
#![allow(dead_code)]

use picajit::pica::asm::{assemble, SourceFile};
use picajit::pica::shbin::Shbin;

/// The text of `examples/PATH`.
pub fn example(path: &str) -> String {
    let p = format!("{}/examples/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// `examples/NAME` (a PICA source) assembled.
pub fn assembled(name: &str) -> Shbin {
    let text = example(name);
    assemble(&[SourceFile { name, text: &text }])
        .unwrap_or_else(|e| panic!("{name} assembles: {e}"))
}
