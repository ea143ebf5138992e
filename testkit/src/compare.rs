//! Comparing results bit for bit, for the differential tests and fuzz targets: registers and
//! geometry state as bit patterns (NaNs compared by payload), where two of them first differ,
//! and program listings for failure messages.

use picajit_interp::pica::isa::{decode, format_instruction};
use picajit_interp::pica::program::Program;
use picajit_interp::pica::state::{GeometryState, Registers};

/// Program listing for crash reports.
pub fn listing(p: &Program) -> String {
    let mut s = format!("entry 0x{:03x}, kind {}\n", p.entry(), p.kind());
    for (pc, &w) in p.code().iter().enumerate() {
        s.push_str(&format!(
            "  {pc:03x}: {w:08x}  {}\n",
            format_instruction(&decode(w), p.opdescs())
        ));
    }
    s
}

/// Registers as bit patterns (NaNs compared by payload).
pub fn reg_bits(r: &Registers) -> Vec<u32> {
    let mut v = Vec::with_capacity(200);
    for bank in [&r.input, &r.temp, &r.output] {
        for reg in bank.iter() {
            v.extend(reg.iter().map(|x| x.to_bits()));
        }
    }
    v.extend(r.a0.iter().map(|&x| x as u32));
    v.push(r.al as u32);
    v.push(r.cmp[0] as u32 | (r.cmp[1] as u32) << 8);
    v
}

/// A register bank as bit patterns.
pub fn bank_bits(b: &[[f32; 4]; 16]) -> impl Iterator<Item = u32> + '_ {
    b.iter().flat_map(|r| r.iter().map(|x| x.to_bits()))
}

/// Geometry state as bit patterns: emit parameters, the other bank, the slots and every
/// emitted vertex.
pub fn gs_bits(g: &GeometryState) -> Vec<u32> {
    let mut v = vec![g.vertex_id as u32, g.primitive as u32, g.winding as u32];
    v.extend(bank_bits(&g.other_bank));
    for s in &g.slots {
        v.extend(bank_bits(s));
    }
    v.push(g.emitted.len() as u32);
    for e in &g.emitted {
        v.extend(bank_bits(&e.outputs));
        v.extend([e.slot as u32, e.primitive as u32, e.winding as u32]);
    }
    v
}

/// Where two [`reg_bits`] vectors first differ, named (`o3.y: expected … got …`).
pub fn first_diff(a: &[u32], b: &[u32]) -> String {
    let name = |i: usize| -> String {
        let (bank, rest) = (i / 64, i % 64);
        let lane = "xyzw".as_bytes()[rest % 4] as char;
        match bank {
            0 => format!("v{}.{lane}", rest / 4),
            1 => format!("r{}.{lane}", rest / 4),
            2 => format!("o{}.{lane}", rest / 4),
            _ => ["a0.x", "a0.y", "aL", "cmp"]
                .get(rest)
                .map(|s| s.to_string())
                .unwrap_or_else(|| format!("#{i}")),
        }
    };
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            return format!(
                "{}: expected {x:08x} ({}) got {y:08x} ({})",
                name(i),
                f32::from_bits(*x),
                f32::from_bits(*y)
            );
        }
    }
    format!("lengths {} and {}", a.len(), b.len())
}

/// Panics unless `got`'s registers and geometry state are `want`'s bit for bit, naming the
/// first register that differs; `what` starts the message, `ctx()` ends it.
#[track_caller]
pub fn assert_same_state(
    what: &str,
    want: (&Registers, &GeometryState),
    got: (&Registers, &GeometryState),
    ctx: &dyn Fn() -> String,
) {
    let (a, b) = (reg_bits(want.0), reg_bits(got.0));
    assert!(
        a == b,
        "{what}: registers differ: {}\n{}",
        first_diff(&a, &b),
        ctx()
    );
    assert!(
        gs_bits(want.1) == gs_bits(got.1),
        "{what}: geometry state differs\n{}",
        ctx()
    );
}
