//! THEIA differential fuzzing: interpreter vs x86-64 JIT vs AArch64 JIT (format in
//! `fuzz/src/theia.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    picajit_fuzz::theia::differential(&picajit_fuzz::theia::TheiaCase::decode(data));
});
