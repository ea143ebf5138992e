//! Differential fuzzing: the bytes become a program (structured operations or raw words),
//! descriptors, entry point, kind, uniforms, inputs and initial registers (format in
//! `testkit/src/testgen/bytes.rs`); it runs on the reference interpreter and on every JIT
//! backend whose code can run here (x86-64 natively; AArch64 natively on AArch64 hosts and
//! under unicorn elsewhere), in every float mode. Any difference in registers, flags, address
//! registers, instruction counts, emitted vertices, batch outputs or errors panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    picajit_fuzz::differential(&picajit_fuzz::Case::decode(data));
});
