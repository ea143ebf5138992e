//! The integer macro-assemblers and the entry frames against a model: every method at both
//! sizes, with constants inside and outside the hosts' immediate fields and with aliased
//! registers, run as one generated function per host (x86-64 natively on x86-64 hosts;
//! AArch64 natively on AArch64 hosts and under the emulator elsewhere).
//!
//! Each case sets six registers to known values, emits one operation and stores all six:
//! the destination must hold the model's result and every other register its value (which
//! catches a sequence clobbering a register it does not own).

use super::RegImm::{I, R};
use super::Size::{S32, S64};
use super::{Alu, Cond, IntMasm, Shift, Size};
use crate::host::runtime::{ExecCode, PlainBlock};
use crate::host::Backend;

/// Registers a case uses.
const N: usize = 6;

// The data block: outputs of the store cases, inputs, inputs beyond AArch64's scaled
// 12-bit offsets, then the registers every case stores.
const LOW_OUT: usize = 0;
const IN: usize = 0x800;
const FAR_IN: usize = 0xE000;
const OUT: usize = 0x1_0000;

/// Values the cases take registers and memory from.
const VALS: [u64; 15] = [
    0,
    1,
    2,
    0x7F,
    0xFFF,
    0x1000,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFF,
    0x1_0000_0000,
    0x8000_0000_0000_0000,
    u64::MAX,
    0x1234_5678_9ABC_DEF0,
    0xFFFF_FFFF_8000_0001,
    0x5555_5555_5555_5555,
];

/// Constants: in and out of the 12-bit, logical, imm32 and 32-bit ranges.
const IMMS: [i64; 18] = [
    0,
    1,
    -1,
    24,
    4095,
    4096,
    -4095,
    -4096,
    0x7FFF_FFFF,
    -0x8000_0000,
    0x8000_0000,
    0xFFFE_0000,
    0x1_0000_0000,
    0x5555_5555_5555_5555,
    -(1 << 39),
    i64::MIN,
    0xFF00,
    0x0000_FFFF_0000_0000,
];

const ALUS: [Alu; 6] = [Alu::Add, Alu::Sub, Alu::And, Alu::Or, Alu::Xor, Alu::Mul];
const CONDS: [Cond; 10] = [
    Cond::Eq,
    Cond::Ne,
    Cond::Lo,
    Cond::Ls,
    Cond::Hi,
    Cond::Hs,
    Cond::Lt,
    Cond::Le,
    Cond::Gt,
    Cond::Ge,
];

fn trunc(size: Size, v: u64) -> u64 {
    match size {
        S32 => v as u32 as u64,
        S64 => v,
    }
}

fn alu(op: Alu, size: Size, a: u64, b: u64) -> u64 {
    trunc(
        size,
        match op {
            Alu::Add => a.wrapping_add(b),
            Alu::Sub => a.wrapping_sub(b),
            Alu::And => a & b,
            Alu::Or => a | b,
            Alu::Xor => a ^ b,
            Alu::Mul => a.wrapping_mul(b),
        },
    )
}

fn shift(op: Shift, size: Size, a: u64, n: u32) -> u64 {
    match (size, op) {
        (S32, Shift::Shl) => ((a as u32) << n) as u64,
        (S32, Shift::Shr) => ((a as u32) >> n) as u64,
        (S32, Shift::Sar) => ((a as i32) >> n) as u32 as u64,
        (S64, Shift::Shl) => a << n,
        (S64, Shift::Shr) => a >> n,
        (S64, Shift::Sar) => ((a as i64) >> n) as u64,
    }
}

fn holds(c: Cond, size: Size, a: u64, b: u64) -> bool {
    let (a, b) = (trunc(size, a), trunc(size, b));
    let (sa, sb) = match size {
        S32 => (a as i32 as i64, b as i32 as i64),
        S64 => (a as i64, b as i64),
    };
    match c {
        Cond::Eq => a == b,
        Cond::Ne => a != b,
        Cond::Lo => a < b,
        Cond::Ls => a <= b,
        Cond::Hi => a > b,
        Cond::Hs => a >= b,
        Cond::Lt => sa < sb,
        Cond::Le => sa <= sb,
        Cond::Gt => sa > sb,
        Cond::Ge => sa >= sb,
    }
}

/// The generated cases and what the data block must hold after the run.
struct Cases<'e, E: IntMasm> {
    e: &'e mut E,
    ctx: E::Reg,
    r: [E::Reg; N],
    /// Inputs, written to the data block before the run.
    inputs: Vec<(usize, Vec<u8>)>,
    /// Expected bytes after the run, with the case's description.
    checks: Vec<(usize, Vec<u8>, String)>,
    next_in: usize,
    next_far: usize,
    next_low: usize,
    next_out: usize,
    /// The host's constraint on variable shifts: the count register's index in `r`.
    count: usize,
    /// Indices of `r` a divisor may be in.
    divisors: &'static [usize],
}

impl<E: IntMasm> Cases<'_, E> {
    /// `bytes` in the data block (8-aligned; beyond the scaled offsets if `far`).
    fn input_at(&mut self, far: bool, bytes: &[u8]) -> i32 {
        let (next, end) = if far {
            (&mut self.next_far, OUT)
        } else {
            (&mut self.next_in, FAR_IN)
        };
        let at = *next;
        *next += bytes.len().next_multiple_of(8);
        assert!(*next <= end);
        self.inputs.push((at, bytes.to_vec()));
        at as i32
    }

    fn input(&mut self, bytes: &[u8]) -> i32 {
        self.input_at(false, bytes)
    }

    /// Room for `len` bytes the code writes (below the scaled offsets if `low`).
    fn output_at(&mut self, low: bool, len: usize) -> i32 {
        let (next, end) = if low {
            (&mut self.next_low, IN)
        } else {
            (&mut self.next_out, usize::MAX)
        };
        let at = *next;
        *next += len.next_multiple_of(8);
        assert!(*next <= end);
        at as i32
    }

    fn output(&mut self, len: usize) -> i32 {
        self.output_at(false, len)
    }

    fn expect(&mut self, at: i32, bytes: &[u8], what: &str) {
        self.checks
            .push((at as usize, bytes.to_vec(), what.to_string()));
    }

    /// One case: the registers start at `init`, `f` emits the operation, every register
    /// must then hold `want`.
    fn case(
        &mut self,
        what: String,
        init: [u64; N],
        want: [u64; N],
        f: impl FnOnce(&mut E, [E::Reg; N]),
    ) {
        for (&r, &v) in self.r.iter().zip(&init) {
            self.e.mov_imm(r, v as i64);
        }
        f(self.e, self.r);
        for (k, w) in want.iter().enumerate() {
            let at = self.output(8);
            self.e.store(S64, self.ctx, at, self.r[k]);
            self.expect(at, &w.to_le_bytes(), &format!("{what}, register {k}"));
        }
    }

    /// Registers at distinct values, `v` in `at`.
    fn init(&self, with: &[(usize, u64)]) -> [u64; N] {
        let mut v = [0u64; N];
        for (k, x) in v.iter_mut().enumerate() {
            *x = 0xC0DE_0000_0000_0000 | (k as u64 * 0x1111);
        }
        for &(k, x) in with {
            v[k] = x;
        }
        v
    }

    /// `d = a op b` for every aliasing of `d`, `a` and `b` (registers 3, 4, 5).
    fn binary(
        &mut self,
        what: &str,
        a: u64,
        b: u64,
        model: impl Fn(u64, u64) -> u64,
        emit: impl Fn(&mut E, E::Reg, E::Reg, E::Reg),
    ) {
        for (d, ra, rb) in [(3, 4, 5), (3, 3, 5), (3, 4, 3), (3, 4, 4), (3, 3, 3)] {
            let mut init = self.init(&[(ra, a), (rb, b)]);
            if ra == rb {
                init[ra] = a;
            }
            let (a, b) = (init[ra], init[rb]);
            let mut want = init;
            want[d] = model(a, b);
            self.case(
                format!("{what} {a:#x}, {b:#x} (d{d} a{ra} b{rb})"),
                init,
                want,
                |e, r| emit(e, r[d], r[ra], r[rb]),
            );
        }
    }

    fn alu_cases(&mut self) {
        for op in ALUS {
            for size in [S32, S64] {
                for (i, &a) in VALS.iter().enumerate() {
                    for &b in &[VALS[(i + 3) % VALS.len()], VALS[(i * 7 + 5) % VALS.len()]] {
                        self.binary(
                            &format!("{op:?} {size:?}"),
                            a,
                            b,
                            |a, b| alu(op, size, a, b),
                            |e, d, a, b| e.alu(op, size, d, a, R(b)),
                        );
                    }
                }
                for k in IMMS {
                    for a in [VALS[4], VALS[11], VALS[12]] {
                        for (d, ra) in [(3, 4), (3, 3)] {
                            let init = self.init(&[(ra, a)]);
                            let mut want = init;
                            want[d] = alu(op, size, a, k as u64);
                            self.case(
                                format!("{op:?} {size:?} {a:#x}, #{k:#x} (d{d} a{ra})"),
                                init,
                                want,
                                |e, r| e.alu(op, size, r[d], r[ra], I(k)),
                            );
                        }
                    }
                }
            }
        }
    }

    fn unary_cases(&mut self) {
        for size in [S32, S64] {
            for (i, &a) in VALS.iter().enumerate() {
                for (d, ra) in [(3, 4), (3, 3)] {
                    let init = self.init(&[(ra, a)]);
                    let mut want = init;
                    want[d] = trunc(size, a.wrapping_neg());
                    self.case(format!("neg {size:?} {a:#x}"), init, want, |e, r| {
                        e.neg(size, r[d], r[ra])
                    });
                    want[d] = trunc(size, a);
                    self.case(format!("mov {size:?} {a:#x}"), init, want, |e, r| {
                        e.mov(size, r[d], r[ra])
                    });
                }
                let init = self.init(&[(4, a)]);
                let mut want = init;
                want[3] = a as u32 as i32 as i64 as u64;
                self.case(format!("sext32 {a:#x}"), init, want, |e, r| {
                    e.sext32(r[3], r[4])
                });
                if a != 0 {
                    want[3] = a.leading_zeros() as u64;
                    want[5] = 63 - want[3];
                    self.case(format!("clz {a:#x}"), init, want, |e, r| {
                        e.clz(r[3], r[5], r[4])
                    });
                }
                let b = VALS[(i * 5 + 2) % VALS.len()];
                self.binary(
                    &format!("umin {size:?}"),
                    a,
                    b,
                    |a, b| trunc(size, a).min(trunc(size, b)),
                    |e, d, a, b| e.umin(size, d, a, b),
                );
                for sub in [false, true] {
                    self.binary(
                        &format!("add32_sign_exact sub={sub}"),
                        a,
                        b,
                        |a, b| {
                            let (a, b) = (a as i32 as i64, b as i32 as i64);
                            let exact = if sub { a - b } else { a + b };
                            let sign = if exact < 0 { 0x8000_0000 } else { 0 };
                            ((exact as u32 & 0x7FFF_FFFF) | sign) as u64
                        },
                        |e, d, a, b| e.add32_sign_exact(sub, d, a, b),
                    );
                }
            }
            for k in IMMS {
                let init = self.init(&[]);
                let mut want = init;
                want[3] = k as u64;
                self.case(format!("mov_imm {k:#x}"), init, want, |e, r| {
                    e.mov_imm(r[3], k)
                });
            }
        }
    }

    fn shift_cases(&mut self) {
        for size in [S32, S64] {
            let bits = if size == S32 { 32 } else { 64 };
            for op in [Shift::Shl, Shift::Shr, Shift::Sar] {
                for a in [VALS[6], VALS[7], VALS[12], VALS[13]] {
                    for n in [0, 1, 17, 31, bits - 1] {
                        for (d, ra) in [(3, 4), (3, 3)] {
                            let init = self.init(&[(ra, a)]);
                            let mut want = init;
                            want[d] = shift(op, size, a, n);
                            self.case(
                                format!("{op:?} {size:?} {a:#x}, {n}"),
                                init,
                                want,
                                |e, r| e.shift(op, size, r[d], r[ra], n),
                            );
                        }
                        let c = self.count;
                        let init = self.init(&[(4, a), (c, n as u64)]);
                        let mut want = init;
                        want[3] = shift(op, size, a, n);
                        self.case(
                            format!("{op:?} {size:?} {a:#x}, count {n}"),
                            init,
                            want,
                            |e, r| e.shift_var(op, size, r[3], r[4], r[c]),
                        );
                    }
                }
            }
            for (lsb, width) in [
                (0, 1),
                (23, 8),
                (0, 31),
                (1, 31),
                (0, 32),
                (40, 20),
                (8, 56),
            ] {
                if lsb + width > bits {
                    continue;
                }
                for a in [VALS[11], VALS[12]] {
                    let init = self.init(&[(4, a)]);
                    let mut want = init;
                    want[3] = (trunc(size, a) >> lsb) & ((1 << width) - 1);
                    self.case(
                        format!("ubfx {size:?} {a:#x}, {lsb}, {width}"),
                        init,
                        want,
                        |e, r| e.ubfx(size, r[3], r[4], lsb, width),
                    );
                }
            }
        }
    }

    fn division_cases(&mut self) {
        for size in [S32, S64] {
            for a in [VALS[0], VALS[7], VALS[11], VALS[12], VALS[13]] {
                for b in [1, 3, 0x7FFF_FFFF, 0x1_0000_0001, u64::MAX] {
                    if trunc(size, b) == 0 {
                        continue;
                    }
                    for &rb in self.divisors {
                        for d in 0..N {
                            let ra = (0..N).find(|&k| k != rb && k != d).unwrap();
                            let init = self.init(&[(ra, a), (rb, b)]);
                            let mut want = init;
                            want[d] = trunc(size, a) / trunc(size, b);
                            self.case(
                                format!("udiv {size:?} {a:#x} / {b:#x} (d{d} a{ra} b{rb})"),
                                init,
                                want,
                                |e, r| e.udiv(size, r[d], r[ra], r[rb]),
                            );
                        }
                    }
                }
            }
        }
    }

    /// `r[3]` = whether `c` held after `setup` (which compares).
    fn flag_case(
        &mut self,
        what: String,
        init: [u64; N],
        taken: bool,
        compare: impl FnOnce(&mut E, [E::Reg; N]),
        c: Cond,
    ) {
        let mut want = init;
        want[3] = taken as u64;
        self.case(what, init, want, |e, r| {
            let done = e.label();
            e.mov_imm(r[3], 1);
            compare(e, r);
            e.jcc(c, done);
            e.mov_imm(r[3], 0);
            e.bind(done);
        });
    }

    fn compare_cases(&mut self) {
        for size in [S32, S64] {
            for c in CONDS {
                for (i, &a) in VALS.iter().enumerate() {
                    let b = VALS[(i * 4 + 1) % VALS.len()];
                    for b in [a, b] {
                        let init = self.init(&[(4, a), (5, b)]);
                        self.flag_case(
                            format!("cmp {size:?} {c:?} {a:#x}, {b:#x}"),
                            init,
                            holds(c, size, a, b),
                            |e, r| e.cmp(size, r[4], R(r[5])),
                            c,
                        );
                        let m = self.input(&b.to_le_bytes());
                        let ctx = self.ctx;
                        self.flag_case(
                            format!("cmp_mem {size:?} {c:?} [{b:#x}], {a:#x}"),
                            init,
                            holds(c, size, b, a),
                            |e, r| e.cmp_mem(size, ctx, m, R(r[4])),
                            c,
                        );
                    }
                    for k in IMMS.into_iter().skip(i % 3).step_by(3) {
                        let init = self.init(&[(4, a)]);
                        self.flag_case(
                            format!("cmp {size:?} {c:?} {a:#x}, #{k:#x}"),
                            init,
                            holds(c, size, a, k as u64),
                            |e, r| e.cmp(size, r[4], I(k)),
                            c,
                        );
                    }
                    let k = IMMS[i % IMMS.len()];
                    let m = self.input(&a.to_le_bytes());
                    let ctx = self.ctx;
                    let init = self.init(&[]);
                    self.flag_case(
                        format!("cmp_mem {size:?} {c:?} [{a:#x}], #{k:#x}"),
                        init,
                        holds(c, size, a, k as u64),
                        |e, _| e.cmp_mem(size, ctx, m, I(k)),
                        c,
                    );
                }
            }
        }
        for a in VALS {
            for bit in [0, 1, 5, 30, 31, 32, 47, 63] {
                let init = self.init(&[(4, a)]);
                for c in [Cond::Eq, Cond::Ne] {
                    self.flag_case(
                        format!("test_bit {a:#x}, {bit} {c:?}"),
                        init,
                        ((a >> bit) & 1 == 0) == (c == Cond::Eq),
                        |e, r| e.test_bit(r[4], bit),
                        c,
                    );
                }
            }
        }
    }

    fn loop_cases(&mut self) {
        for (size, n, iterations) in [
            (S64, 1, 1),
            (S64, 5, 5),
            (S32, 0x1_0000_0003, 3),
            (S64, 0x1_0000_0000, 0x1_0000_0000u64),
        ] {
            if iterations > 1000 {
                continue;
            }
            let init = self.init(&[(4, n), (3, 0)]);
            let mut want = init;
            want[3] = iterations;
            want[4] = 0;
            self.case(
                format!("dec_branch_nz {size:?} {n:#x}"),
                init,
                want,
                |e, r| {
                    let top = e.label();
                    e.bind(top);
                    e.alu(Alu::Add, S64, r[3], r[3], I(1));
                    e.dec_branch_nz(size, r[4], top);
                },
            );
        }
    }

    fn memory_cases(&mut self) {
        let ctx = self.ctx;
        for size in [S32, S64] {
            let w = if size == S32 { 4 } else { 8 };
            for v in [VALS[12], VALS[13]] {
                // aligned and unaligned, within and beyond the scaled 12-bit offsets
                for (far, pad) in [(false, 0), (false, 1), (false, 4), (true, 0), (true, 3)] {
                    let bytes = v.to_le_bytes();
                    let at = self.input_at(far, &[&[0u8; 4][..pad], &bytes[..]].concat());
                    let at = at + pad as i32;
                    let init = self.init(&[]);
                    let mut want = init;
                    want[3] = trunc(size, v);
                    self.case(format!("load {size:?} [{at:#x}]"), init, want, |e, r| {
                        e.load(size, r[3], ctx, at)
                    });
                    let low = !far;
                    let init = self.init(&[(4, v)]);
                    let at = self.output_at(low, 16) + pad as i32;
                    self.case(format!("store {size:?} [{at:#x}]"), init, init, |e, r| {
                        e.store(size, ctx, at, r[4])
                    });
                    self.expect(at, &v.to_le_bytes()[..w], "store");
                    for k in [0, 5, -1, 0x7FFF_FFFF, i64::MIN] {
                        let at = self.output_at(low, 16) + pad as i32;
                        self.case(
                            format!("store_imm {size:?} [{at:#x}], #{k:#x}"),
                            init,
                            init,
                            |e, _| e.store_imm(size, ctx, at, k),
                        );
                        self.expect(at, &k.to_le_bytes()[..w], "store_imm");
                    }
                    for idx in [0, 24] {
                        let at = self.output_at(low, 16) + pad as i32;
                        let init = self.init(&[(4, v), (5, idx)]);
                        self.case(
                            format!("store_idx {size:?} [{at:#x}]"),
                            init,
                            init,
                            |e, r| e.store_idx(size, ctx, r[5], at - idx as i32, r[4]),
                        );
                        self.expect(at, &v.to_le_bytes()[..w], "store_idx");
                    }
                }
            }
        }
        // tables: a 32-bit and a 64-bit one
        let t32: Vec<u8> = (0..64u32)
            .flat_map(|k| ((k * 0x0101_0101) ^ 0x8000_0000).to_le_bytes())
            .collect();
        let t64: Vec<u8> = (0..64u64)
            .flat_map(|k| (k.wrapping_mul(0x0123_4567_89AB_CDEF)).to_le_bytes())
            .collect();
        let l32 = self.e.table(t32.clone());
        let l64 = self.e.table(t64.clone());
        for idx in [0u64, 1, 33, 63] {
            let i = idx as usize;
            let v32 = u32::from_le_bytes(t32[4 * i..4 * i + 4].try_into().unwrap()) as u64;
            let v64 = u64::from_le_bytes(t64[8 * i..8 * i + 8].try_into().unwrap());
            for (size, table, v) in [(S32, l32, v32), (S64, l64, v64)] {
                let init = self.init(&[(4, idx), (3, VALS[12])]);
                let mut want = init;
                want[3] = v;
                self.case(
                    format!("load_table {size:?} [{idx}]"),
                    init,
                    want,
                    |e, r| e.load_table(size, r[3], table, r[4]),
                );
                want[3] = alu(Alu::Add, size, VALS[12], v);
                self.case(format!("add_table {size:?} [{idx}]"), init, want, |e, r| {
                    e.add_table(size, r[3], table, r[4])
                });
            }
        }
        // `branch` is `cmp` and `jcc`
        let init = self.init(&[(4, 7)]);
        let mut want = init;
        want[3] = 1;
        self.case("branch".into(), init, want, |e, r| {
            let (yes, done) = (e.label(), e.label());
            e.branch(Cond::Lt, S64, r[4], I(8), yes);
            e.mov_imm(r[3], 0);
            e.jump(done);
            e.bind(yes);
            e.mov_imm(r[3], 1);
            e.bind(done);
        });
    }

    fn all(&mut self) {
        self.alu_cases();
        self.unary_cases();
        self.shift_cases();
        self.division_cases();
        self.compare_cases();
        self.loop_cases();
        self.memory_cases();
    }
}

/// The data block before the run, and the checks of the run.
type Block = (Vec<u8>, Vec<(usize, Vec<u8>, String)>);

fn cases<E: IntMasm>(
    e: &mut E,
    ctx: E::Reg,
    r: [E::Reg; N],
    count: usize,
    divisors: &'static [usize],
) -> Block {
    let mut c = Cases {
        e,
        ctx,
        r,
        inputs: Vec::new(),
        checks: Vec::new(),
        next_in: IN,
        next_far: FAR_IN,
        next_low: LOW_OUT,
        next_out: OUT,
        count,
        divisors,
    };
    c.all();
    let mut data = vec![0u8; c.next_out];
    for (at, bytes) in &c.inputs {
        data[*at..*at + bytes.len()].copy_from_slice(bytes);
    }
    (data, c.checks)
}

fn verify(host: &str, data: &[u8], checks: &[(usize, Vec<u8>, String)]) {
    let mut bad = Vec::new();
    for (at, want, what) in checks {
        let got = &data[*at..*at + want.len()];
        if got != &want[..] {
            bad.push(format!("{what}: got {got:02x?}, want {want:02x?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{host}: {} of {} checks failed:\n{}",
        bad.len(),
        checks.len(),
        bad[..bad.len().min(40)].join("\n")
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x64_matches_the_model() {
    use crate::host::x64::abi::{Frame, RET};
    use crate::host::x64::asm::Asm;
    use crate::host::x64::int::X64Int;
    use crate::host::x64::regs::*;
    let frame = Frame {
        saved: &[RBX],
        locals: 0,
        context: Some(RBX),
    };
    let mut a = Asm::new();
    let e = &mut X64Int::new(&mut a, R11);
    e.enter(&frame);
    // rcx is the count of variable shifts; rax and rdx are the registers `udiv` saves
    let (mut data, checks) = cases(e, RBX, [RAX, RCX, RDX, RSI, R8, R9], 1, &[3, 4, 5]);
    e.mov_imm(RET, 0);
    e.ret(&frame);
    let (code, _) = a.finish().unwrap();
    run_x64(&code, &mut data);
    verify("x86-64", &data, &checks);
}

/// Runs x86-64 `code` on `data`.
#[cfg(target_arch = "x86_64")]
fn run_x64(code: &[u8], data: &mut [u8]) {
    let x = ExecCode::for_backend(Backend::X64, code).unwrap();
    let mut block = PlainBlock {
        bytes: data,
        cap: 0,
    };
    // SAFETY: the code is a complete `fn(*mut u8) -> u32` touching only `data` and its stack.
    assert_eq!(unsafe { x.call(0, &mut block) }, Ok(0));
}

/// The next word of the frame tests' output, which must hold `want`.
fn word(out: &mut i32, checks: &mut Vec<(usize, u64)>, want: u64) -> i32 {
    let at = *out;
    checks.push((at as usize, want));
    *out += 8;
    at
}

/// The words at `checks`' offsets hold their values.
fn verify_words(data: &[u8], checks: &[(usize, u64)]) {
    for &(at, want) in checks {
        let got = u64::from_le_bytes(data[at..at + 8].try_into().unwrap());
        assert_eq!(got, want, "word at {at:#x}");
    }
}

#[cfg(any(target_arch = "aarch64", feature = "emulate-a64"))]
#[test]
fn a64_matches_the_model() {
    use crate::host::a64::abi::{Frame, RET};
    use crate::host::a64::asm::Asm;
    use crate::host::a64::int::A64Int;
    use crate::host::a64::regs::Gpr;
    let frame = Frame {
        link: false,
        saved: &[Gpr(19)],
        saved_v: &[],
        locals: 0,
        context: Some(Gpr(19)),
    };
    let mut a = Asm::new();
    let e = &mut A64Int::new(&mut a, [Gpr(17), Gpr(8)]);
    e.enter(&frame);
    let r = [Gpr(0), Gpr(9), Gpr(10), Gpr(11), Gpr(12), Gpr(16)];
    let (mut data, checks) = cases(e, Gpr(19), r, 1, &[0, 3, 4, 5]);
    e.mov_imm(RET, 0);
    e.ret(&frame);
    let (code, _) = a.finish().unwrap();
    verify("AArch64", &run_a64(&code, &mut data), &checks);
}

/// Runs AArch64 `code` on `data` (natively or under the emulator) and returns the block.
#[cfg(any(target_arch = "aarch64", feature = "emulate-a64"))]
fn run_a64(code: &[u8], data: &mut [u8]) -> Vec<u8> {
    let x = ExecCode::for_backend(Backend::A64, code).unwrap();
    let mut block = PlainBlock {
        bytes: data,
        cap: 50_000_000,
    };
    // SAFETY: the code is a complete `fn(*mut u8) -> u32` touching only `data` and its stack.
    assert_eq!(unsafe { x.call(0, &mut block) }, Ok(0));
    data.to_vec()
}

/// Frames: an outer function saving every callee-saved register sets them, calls inner
/// functions whose frames save some, clobber them and use their locals, then stores them:
/// each must hold the outer function's value again.
#[cfg(target_arch = "x86_64")]
#[test]
fn x64_frames_restore_what_they_save() {
    use crate::host::x64::abi::{Frame, ARGS, CALLEE_SAVED, RET};
    use crate::host::x64::asm::Asm;
    use crate::host::x64::regs::*;
    const RSP: Gpr = Gpr(4);
    let outer = Frame {
        saved: &CALLEE_SAVED,
        locals: 8,
        context: Some(RBX),
    };
    let inners = [
        Frame {
            saved: &[RBP, R12, R13],
            locals: 24,
            context: Some(R12),
        },
        Frame {
            saved: &[],
            locals: 0,
            context: None,
        },
        Frame {
            saved: &[R15],
            locals: 16,
            context: Some(R15),
        },
    ];
    let mut a = Asm::new();
    let labels: Vec<_> = inners.iter().map(|_| a.new_label()).collect();
    let mut checks = Vec::new();
    outer.enter(&mut a);
    let others: Vec<Gpr> = CALLEE_SAVED.into_iter().filter(|&r| r != RBX).collect();
    let mut out = 0;
    let mut inner_out = Vec::new();
    for (k, l) in labels.iter().enumerate() {
        for (i, &r) in others.iter().enumerate() {
            a.mov_ri64(r, 0x5A5A_0000 + (k * 16 + i) as i64);
        }
        a.mov_rr64(ARGS[0], RBX);
        a.call_label(*l);
        for (i, &r) in others.iter().enumerate() {
            let at = word(&mut out, &mut checks, 0x5A5A_0000 + (k * 16 + i) as u64);
            a.mov_mr64(RBX, at, r);
        }
        inner_out.push(word(&mut out, &mut checks, 0x10CA_1000 + k as u64));
    }
    a.mov_ri32(RET, 0);
    outer.ret(&mut a);
    for (k, (inner, l)) in inners.iter().zip(&labels).enumerate() {
        a.bind(*l);
        inner.enter(&mut a);
        let c = inner.context.unwrap_or(ARGS[0]);
        for &r in inner.saved.iter().filter(|&&r| r != c) {
            a.mov_ri64(r, -1);
        }
        a.mov_ri64(RAX, 0x10CA_1000 + k as i64);
        if inner.locals != 0 {
            a.mov_mr64(RSP, inner.locals - 8, RAX);
            a.mov_ri64(RAX, 0);
            a.mov_rm64(RAX, RSP, inner.locals - 8);
        }
        a.mov_mr64(c, inner_out[k], RAX);
        inner.ret(&mut a);
    }
    let (code, _) = a.finish().unwrap();
    let mut data = vec![0u8; out as usize];
    run_x64(&code, &mut data);
    verify_words(&data, &checks);
}

/// [`x64_frames_restore_what_they_save`] for AArch64, with the frame pair, vector registers,
/// odd counts and locals-only frames.
#[cfg(any(target_arch = "aarch64", feature = "emulate-a64"))]
#[test]
fn a64_frames_restore_what_they_save() {
    use crate::host::a64::abi::{Frame, ARGS, CALLEE_SAVED, CALLEE_SAVED_V, RET};
    use crate::host::a64::asm::Asm;
    use crate::host::a64::regs::{Gpr, Vreg};
    let ctx = Gpr(19);
    let outer = Frame {
        link: true,
        saved: &CALLEE_SAVED,
        saved_v: &CALLEE_SAVED_V,
        locals: 8,
        context: Some(ctx),
    };
    let inners = [
        Frame {
            link: true,
            saved: &[Gpr(20), Gpr(21), Gpr(22)],
            saved_v: &[Vreg(8), Vreg(9), Vreg(10)],
            locals: 20,
            context: Some(Gpr(22)),
        },
        Frame {
            link: false,
            saved: &[],
            saved_v: &[Vreg(12)],
            locals: 0,
            context: None,
        },
        Frame {
            link: false,
            saved: &[],
            saved_v: &[],
            locals: 32,
            context: None,
        },
        Frame {
            link: false,
            saved: &[Gpr(28)],
            saved_v: &[],
            locals: 0,
            context: Some(Gpr(28)),
        },
        Frame {
            link: false,
            saved: &[],
            saved_v: &[],
            locals: 0,
            context: None,
        },
    ];
    let mut a = Asm::new();
    let labels: Vec<_> = inners.iter().map(|_| a.new_label()).collect();
    let mut checks = Vec::new();
    outer.enter(&mut a);
    let others: Vec<Gpr> = CALLEE_SAVED.into_iter().filter(|&r| r != ctx).collect();
    let t = Gpr(9);
    let mut out = 0;
    let mut inner_out = Vec::new();
    for (k, l) in labels.iter().enumerate() {
        for (i, &r) in others.iter().enumerate() {
            a.mov_imm_x(r, 0x5A5A_0000 + (k * 32 + i) as u64);
        }
        for (i, &v) in CALLEE_SAVED_V.iter().enumerate() {
            a.mov_imm_x(t, 0x7E7E_0000 + (k * 32 + 16 + i) as u64);
            a.fmov_dx(v, t);
        }
        a.mov_x(ARGS[0], ctx);
        a.bl(*l);
        for (i, &r) in others.iter().enumerate() {
            let at = word(&mut out, &mut checks, 0x5A5A_0000 + (k * 32 + i) as u64);
            a.str_x(r, ctx, at);
        }
        for (i, &v) in CALLEE_SAVED_V.iter().enumerate() {
            let at = word(
                &mut out,
                &mut checks,
                0x7E7E_0000 + (k * 32 + 16 + i) as u64,
            );
            a.fmov_xd(t, v);
            a.str_x(t, ctx, at);
        }
        inner_out.push(word(&mut out, &mut checks, 0x10CA_1000 + k as u64));
    }
    a.movz_w(RET, 0, 0);
    outer.ret(&mut a);
    for (k, (inner, l)) in inners.iter().zip(&labels).enumerate() {
        a.bind(*l);
        inner.enter(&mut a);
        let c = inner.context.unwrap_or(ARGS[0]);
        a.mov_imm_x(t, u64::MAX);
        for &r in inner.saved.iter().filter(|&&r| r != c) {
            a.mov_x(r, t);
        }
        for &v in inner.saved_v {
            a.fmov_dx(v, t);
        }
        a.mov_imm_x(t, 0x10CA_1000 + k as u64);
        if inner.locals != 0 {
            let at = inner.locals_offset();
            a.str_x_sp(t, at);
            a.mov_imm_x(t, 0);
            a.ldr_x_sp(t, at);
        }
        a.str_x(t, c, inner_out[k]);
        inner.ret(&mut a);
    }
    let (code, _) = a.finish().unwrap();
    let mut data = vec![0u8; out as usize];
    verify_words(&run_a64(&code, &mut data), &checks);
}
