//! USC differential fuzzing: the bytes choose a program of random valid groups (every kind
//! the generator in `src/usc/testgen.rs` knows), an instance count, register values and a
//! budget; the program runs on the reference interpreter, on the x86-64 JIT (where the host
//! has AVX2 and FMA) and on the AArch64 JIT (natively, or under the emulator with the `a64`
//! feature, on by default), and any difference in registers, p0, the execution mask, the set
//! of written registers, the outcome or an error panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picajit::usc::testgen::{random_program, random_state, Rng};
use picajit_interp::usc::{Prepared, UscOptions};
use picajit_jit::usc::{a64, x64};
use picajit_jit::Backend;

fuzz_target!(|data: &[u8]| {
    let mut rng = Rng::from_bytes(data);
    let text = random_program(&mut rng, 10);
    let program = picajit::usc::parse(&text).expect("generated programs parse");
    let options = UscOptions::default()
        .with_fused_fmad(rng.chance(80))
        .with_cndlt_literal(rng.chance(20));
    let p = Prepared::new(&program, options).expect("generated programs prepare");
    let n = 1 + rng.below(16) as usize;
    let st = random_state(n, rng.word());
    let budget = 1 + rng.below(400);
    let mut a = st.clone();
    let ra = p.run(&mut a, budget).map_err(picajit_jit::Error::Usc);
    let backends = [
        (Backend::X64, x64::available()),
        (Backend::A64, a64::available()),
    ];
    for (backend, available) in backends {
        if !available {
            continue;
        }
        let code = picajit_jit::usc::compile(&p, backend).expect("compiles");
        let mut b = st.clone();
        let rb = code.run(&p, &mut b, budget);
        assert_eq!(ra, rb, "{backend}: outcome\n{text}");
        assert!(a == b, "{backend}: state differs\n{text}");
    }
});
