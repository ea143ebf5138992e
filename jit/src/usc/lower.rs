//! USC lowering shared by both hosts: every group becomes a sequence of the host's lane
//! operations (`crate::host::lanes`, one implementation per host) on sixteen virtual vector
//! registers, each holding one *chunk* of the 16 instances (eight lanes on x86-64 AVX2, four
//! on AArch64 NEON); each backend (`x64.rs`, `a64.rs`) provides the rest ([`Target`]: where
//! chunks live, control flow, the interpreter fallback, entry and exits). The walker runs
//! every per-instance computation once per chunk with the chunk's execution mask, so the
//! lanes, masks and divergence rules are written once for both hosts.
//!
//! Virtual registers: 0-5 hold ft0-ft5 of the chunk being computed, [`FTT`] the test result,
//! [`W0`]/[`W1`] the writes' drivers, [`M`] the execution mask, [`T`] temporaries; the
//! complex-unit lowering holds its source in ft0, its f64 halves in ft1 and ft2 and its
//! result in ft3. Every group starts with the budget check, as the interpreter's loop does.

use super::Site;
use crate::host::lanes::{Lanes, Round, Src};
use dynasmrt::DynamicLabel;
use picajit_interp::usc::program::{
    Bank, BranchMode, Group, Instr, Operand, Pred, Reg, SignPos, TestType,
};
use picajit_interp::usc::table::{Op, Unit};
use picajit_interp::usc::{consts, Prepared};

/// A virtual vector register, 0..16 ([`Target::v`] gives the host's).
pub type V = u8;

/// The test result.
pub const FTT: V = 6;
/// The first write's driver.
pub const W0: V = 7;
/// The second write's driver.
pub const W1: V = 8;
/// The execution mask.
pub const M: V = 9;
/// Temporaries.
pub const T: [V; 6] = [10, 11, 12, 13, 14, 15];

/// Memory a chunk of lanes lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Chunk `c` of a per-instance register.
    Lane(Reg, usize),
    /// Chunk `c` of p0 (a lane mask: 0 or all ones).
    P0(usize),
    /// Chunk `c` of Pe.
    Pe(usize),
    /// Chunk `c` of the mask of lanes that exist.
    Lanes(usize),
    /// Scratch slot `k` (one chunk wide).
    Scratch(usize),
}

/// What a host provides to the walker beyond its lane operations (`crate::host::lanes`):
/// where the chunks and the shared registers live, control flow, the lane reductions that
/// decide branches, the write-site records, the budget, the interpreter fallback, and the
/// entry and exits.
pub trait Target {
    /// A vector register.
    type R: Copy + PartialEq + std::fmt::Debug;
    /// A memory operand.
    type Mem: Copy + PartialEq + std::fmt::Debug;
    /// The host's lane operations.
    type H<'a>: Lanes<R = Self::R, Mem = Self::Mem>
    where
        Self: 'a;
    /// Lanes per chunk (8 or 4); `16 / LANES` chunks make the task.
    const LANES: usize;

    /// The lane operations, on the code.
    fn h(&mut self) -> Self::H<'_>;
    /// The host register of virtual register `v`.
    fn v(v: V) -> Self::R;
    /// The memory of `at`.
    fn at(at: Loc) -> Self::Mem;
    /// The word of the shared register `r` (sh or cf), for a broadcast.
    fn shared(&mut self, r: Reg) -> Self::Mem;

    /// A new label.
    fn label(&mut self) -> DynamicLabel;
    /// Binds `l` here.
    fn bind(&mut self, l: DynamicLabel);
    /// Jumps to `l`.
    fn jump(&mut self, l: DynamicLabel);
    /// Start of a lane reduction: the accumulator is zero.
    fn any_clear(&mut self);
    /// Accumulates whether any lane of `v` is non-zero.
    fn any_or(&mut self, v: Self::R);
    /// Jumps to `l` when the accumulator is non-zero (`nonzero`) or zero.
    fn branch_any(&mut self, l: DynamicLabel, nonzero: bool);
    /// Records that the lanes of `mask` wrote write site `k`.
    fn site(&mut self, k: usize, mask: Self::R);

    /// Counts a group, leaving to the budget exit when the budget is used up.
    fn budget_check(&mut self);
    /// Runs group `gi` on the interpreter; control continues at the next group or at
    /// `labels[t]` for a jump to `t` (`targets` lists the possible `t`), or at `done` past
    /// the last group.
    fn helper(&mut self, gi: usize, targets: &[usize], labels: &[DynamicLabel], done: DynamicLabel);
    /// The entry: set up, then continue at the group the run resumes at.
    fn prologue(&mut self, labels: &[DynamicLabel], done: DynamicLabel);
    /// The exits (done, budget) and the epilogue; `done` is bound here.
    fn epilogue(&mut self, done: DynamicLabel);
}

/// How near (in units of the last place of the f64 result) to a rounding boundary of f32
/// an f64 FRSQ/FLOG/FEXP result may lie before the interpreter decides it. The f64
/// evaluations are within a few units of the exact value; `tests/usc_float_jit.rs` checks
/// every binary32 input against the interpreter (with `PICAJIT_USC_EXHAUSTIVE=1`).
pub const COMPLEX_MARGIN: u64 = 1 << 10;

/// ln2^k / k!, k = 0..=14: 2^f = e^(f ln2) for |f| <= 1/2 (the next term is below 2^-62).
/// Evaluated by the compiler (constant evaluation rounds to nearest even), not at code
/// generation, where host float arithmetic would follow the calling thread's rounding mode
/// and the generated code would depend on it.
pub const EXP2_COEFFICIENTS: [f64; 15] = {
    let mut c = [1f64; 15];
    let mut k = 1;
    while k < 15 {
        c[k] = c[k - 1] * std::f64::consts::LN_2 / k as f64;
        k += 1;
    }
    c
};

/// 2 / (ln2 (2k + 1)), k = 0..=11: log2(m) = z * sum c_k z^2k for |z| <= 0.172 (the next
/// term is below 2^-62). Constant, as [`EXP2_COEFFICIENTS`].
pub const LOG2_COEFFICIENTS: [f64; 12] = {
    let mut c = [0f64; 12];
    let mut k = 0;
    while k < 12 {
        c[k] = 2.0 / std::f64::consts::LN_2 / (2 * k + 1) as f64;
        k += 1;
    }
    c
};

fn chunks<E: Target>() -> usize {
    picajit_interp::usc::MAX_INSTANCES / E::LANES
}

/// Whether the lowering performs group `gi` itself (otherwise the group runs on the
/// interpreter).
pub fn native(p: &Prepared, gi: usize) -> bool {
    let g = &p.groups[gi];
    let shared_dst = |o: &Operand| matches!(o, Operand::Reg(r, _) if !r.bank.per_instance());
    g.instrs.iter().all(|ins| {
        let info = ins.info.expect("prepared programs are in scope");
        let o = &ins.operands;
        match info.op {
            Op::Fmad | Op::Fadd | Op::Fmul | Op::Mbyp | Op::Mov | Op::Movc => true,
            Op::Frcp | Op::Fsqrt | Op::Frsq | Op::Flog | Op::Fexp => !shared_dst(&o[0]),
            // The unsigned 32-bit multiply-add without modifiers (its carry is never set).
            Op::Umadd32 => o[1..4].iter().all(|x| x.mods().is_empty()),
            Op::Write | Op::MovcWrite => !shared_dst(&o[0]),
            op if op.is_comparison() => true,
            Op::Byp
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Nand
            | Op::Nor
            | Op::Xnor
            | Op::Lsl
            | Op::Shr
            | Op::Rol
            | Op::Cps
            | Op::Tz
            | Op::Tnz => true,
            Op::Asr => ins.mods.signpos == Some(SignPos::Twb),
            Op::Cndst | Op::Cndef | Op::Cndlt => !shared_dst(&o[1]),
            Op::Cndend => !shared_dst(&o[0]),
            Op::Ba | Op::Br => true,
            _ => false,
        }
    })
}

/// The walker.
pub struct Lowering<'p, 'e, E: Target> {
    e: &'e mut E,
    p: &'p Prepared,
    labels: Vec<DynamicLabel>,
    done: DynamicLabel,
    sites: Vec<Site>,
    /// The host registers of ft0-ft5, [`FTT`], [`W0`], [`W1`], [`M`] and [`T`].
    ft: [E::R; 6],
    ftt: E::R,
    w0: E::R,
    w1: E::R,
    m: E::R,
    t: [E::R; 6],
}

/// What [`Lowering::program`] reports.
pub struct Lowered {
    pub sites: Vec<Site>,
    pub native_groups: usize,
}

impl<'p, 'e, E: Target> Lowering<'p, 'e, E> {
    /// Lowers `p` into `e`.
    pub fn program(e: &'e mut E, p: &'p Prepared) -> Lowered {
        let labels: Vec<DynamicLabel> = (0..p.groups.len()).map(|_| e.label()).collect();
        let done = e.label();
        let mut w = Lowering {
            e,
            p,
            labels,
            done,
            sites: Vec::new(),
            ft: std::array::from_fn(|n| E::v(n as V)),
            ftt: E::v(FTT),
            w0: E::v(W0),
            w1: E::v(W1),
            m: E::v(M),
            t: T.map(E::v),
        };
        let labels = w.labels.clone();
        w.e.prologue(&labels, done);
        let mut native_groups = 0;
        for gi in 0..p.groups.len() {
            w.e.bind(w.labels[gi]);
            w.e.budget_check();
            if !native(p, gi) {
                w.helper_group(gi);
                continue;
            }
            native_groups += 1;
            let first = p.groups[gi].instrs[0].info.unwrap();
            match first.unit {
                Unit::Complex if matches!(first.op, Op::Frsq | Op::Flog | Op::Fexp) => {
                    w.complex_group(gi)
                }
                Unit::Cond => w.cond_group(gi),
                Unit::Branch => w.branch_group(gi),
                _ => w.alu_group(gi),
            }
        }
        w.e.epilogue(done);
        Lowered {
            sites: w.sites,
            native_groups,
        }
    }

    /// `d` = all ones: a lane equals itself (no constant needed).
    fn ones(&mut self, d: E::R) {
        self.e.h().cmpeq32(d, d, Src::R(d));
    }

    fn helper_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        // A jump: to the static target of a branch, or any group (LAPC).
        let op = g.instrs[0].op();
        let targets: Vec<usize> = match (op, self.p.targets[gi]) {
            (Some(Op::Bal | Op::Brl | Op::Ba | Op::Br), Some(t)) => vec![t],
            _ => (0..self.p.groups.len()).collect(),
        };
        self.e.helper(gi, &targets, &self.labels, self.done);
    }

    /// The raw value of `o` for chunk `h` in `d`, or the feed-through register holding it.
    fn raw(&mut self, o: &Operand, h: usize, d: E::R) -> E::R {
        match o {
            Operand::Ft(n, _) => self.ft[usize::from(*n)],
            Operand::Reg(r, _) => {
                match r.bank {
                    Bank::R | Bank::Vi | Bank::I | Bank::Idx => {
                        self.e.h().load(d, E::at(Loc::Lane(*r, h)))
                    }
                    Bank::Sh | Bank::Cf => {
                        let m = self.e.shared(*r);
                        self.e.h().broadcast32(d, m);
                    }
                    Bank::C => self
                        .e
                        .h()
                        .set(d, Src::K(consts::special(r.index).unwrap_or(0))),
                }
                d
            }
            Operand::Imm(v) => {
                self.e.h().set(d, Src::K(*v as u32));
                d
            }
            _ => {
                self.e.h().zero(d);
                d
            }
        }
    }

    /// `raw` into exactly `d`.
    fn raw_in(&mut self, o: &Operand, h: usize, d: E::R) {
        let v = self.raw(o, h, d);
        if v != d {
            self.e.h().set(d, Src::R(v));
        }
    }

    /// `o` with its float modifiers (.flr, .abs, .neg) applied, in `d` (or a feed-through
    /// register when it has none).
    fn fsrc(&mut self, o: &Operand, h: usize, d: E::R) -> E::R {
        let m = o.mods();
        let v = self.raw(o, h, d);
        if !(m.flr || m.abs || m.neg) {
            return v;
        }
        if v != d {
            self.e.h().set(d, Src::R(v));
        }
        if m.flr {
            self.e.h().round_f32(d, d, Round::Floor);
        }
        if m.abs {
            self.e.h().and_int(d, d, Src::K(0x7FFF_FFFF));
        }
        if m.neg {
            self.e.h().xor_int(d, d, Src::K(0x8000_0000));
        }
        d
    }

    /// NaN results become the canonical NaN; `.sat` clamps to [+0, 1].
    fn finish_float(&mut self, d: E::R, sat: bool) {
        self.e.h().and_int(self.t[4], d, Src::K(0x7FFF_FFFF));
        self.e
            .h()
            .cmpgt32(self.t[4], self.t[4], Src::K(0x7F80_0000));
        self.e.h().set(self.t[5], Src::K(0x7FC0_0000));
        self.e.h().blend(d, d, self.t[5], self.t[4]);
        if sat {
            self.e.h().max_f32(d, d, Src::K(0));
            self.e.h().min_f32(d, d, Src::K(0x3F80_0000));
        }
    }

    /// A byte mask from `.eN` bits (all bytes when none or all are named).
    fn byte_mask(elems: u8) -> u32 {
        if elems == 0 || elems == 0xF {
            return u32::MAX;
        }
        (0..4)
            .filter(|k| elems >> k & 1 != 0)
            .fold(0, |m, k| m | 0xFF << (8 * k))
    }

    /// `d = (v & bytes) | (rest & !bytes)`.
    fn merge(&mut self, d: E::R, v: E::R, elems: u8, rest: E::R) {
        let bm = Self::byte_mask(elems);
        if bm == u32::MAX {
            if d != v {
                self.e.h().set(d, Src::R(v));
            }
            return;
        }
        self.e.h().set(self.t[5], Src::K(bm));
        self.e.h().and_int(self.t[4], v, Src::R(self.t[5]));
        self.e.h().andn_int(d, self.t[5], Src::R(rest));
        self.e.h().or_int(d, d, Src::R(self.t[4]));
    }

    /// Records the lanes of `mask` as having written `s`.
    fn site(&mut self, s: Site, mask: E::R) {
        // One word per distinct register: the run marks each written register once.
        let k = match self.sites.iter().position(|x| *x == s) {
            Some(k) => k,
            None => {
                self.sites.push(s);
                self.sites.len() - 1
            }
        };
        self.e.site(k, mask);
    }

    /// Stores `v` into per-instance register `r` (chunk `h`) in the lanes of `mask` (and the
    /// bytes of `elems`).
    fn store_lanes(&mut self, r: Reg, h: usize, v: E::R, mask: E::R, elems: u8) {
        let at = Loc::Lane(r, h);
        let bm = Self::byte_mask(elems);
        let sel = if bm == u32::MAX {
            mask
        } else {
            self.e.h().and_int(self.t[5], mask, Src::K(bm));
            self.t[5]
        };
        self.e.h().load(self.t[4], E::at(at));
        // Byte-granular blend: and/andn/or.
        self.e.h().and_int(self.t[3], v, Src::R(sel));
        self.e.h().andn_int(self.t[4], sel, Src::R(self.t[4]));
        self.e.h().or_int(self.t[3], self.t[3], Src::R(self.t[4]));
        self.e.h().store(E::at(at), self.t[3]);
        self.site(Site::Reg(r), mask);
    }

    /// The execution mask of a group for chunk `h` into [`M`].
    fn exec_mask(&mut self, g: &Group, h: usize) {
        self.e.h().load(self.m, E::at(Loc::Lanes(h)));
        if !g.ignore_pe {
            self.e
                .h()
                .and_int(self.m, self.m, Src::M(E::at(Loc::Pe(h))));
        }
        match g.pred {
            Pred::Always => {}
            Pred::P0 => self
                .e
                .h()
                .and_int(self.m, self.m, Src::M(E::at(Loc::P0(h)))),
            Pred::NotP0 => {
                self.e.h().load(self.t[0], E::at(Loc::P0(h)));
                self.e.h().andn_int(self.m, self.t[0], Src::R(self.m));
            }
        }
    }

    /// FRSQ, FLOG, FEXP in f64 arithmetic, rounded to f32 once (see [`COMPLEX_MARGIN`]):
    /// every chunk's results into the scratch area; when some lane's f64 result lies too
    /// near a rounding boundary of f32 for its error bound (or FEXP's result is subnormal),
    /// the whole group runs on the interpreter instead, else the results are stored.
    fn complex_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        let ins = &g.instrs[0];
        let op = ins.op().unwrap();
        let slow = self.e.label();
        let after = self.e.label();
        self.e.any_clear();
        for h in 0..chunks::<E>() {
            let v = self.fsrc(&ins.operands[1], h, self.ft[0]);
            if v != self.ft[0] {
                self.e.h().set(self.ft[0], Src::R(v));
            }
            match op {
                Op::Frsq => self.frsq_chunk(),
                Op::Flog => self.flog_chunk(),
                _ => self.fexp_chunk(),
            }
            self.e.h().store(E::at(Loc::Scratch(h)), self.ft[3]);
        }
        self.e.branch_any(slow, true);
        for h in 0..chunks::<E>() {
            self.exec_mask(g, h);
            self.e.h().load(self.t[0], E::at(Loc::Scratch(h)));
            if let Operand::Reg(r, _) = ins.operands[0] {
                self.store_lanes(r, h, self.t[0], self.m, 0);
            }
        }
        self.e.jump(after);
        self.e.bind(slow);
        self.helper_group(gi);
        self.e.bind(after);
    }

    /// Accumulates the lanes of the f64 result `y` whose low 29 significand bits (those
    /// the rounding to f32 drops) lie within [`COMPLEX_MARGIN`] of the half-way point.
    fn ambiguous(&mut self, y: E::R) {
        let (t, u) = (self.t[4], self.t[5]);
        self.e.h().and_int(t, y, Src::K64((1 << 29) - 1));
        self.e.h().sub64(t, t, Src::K64((1 << 28) - COMPLEX_MARGIN));
        // t in [0, 2 * margin]: t > -1 and not t > 2 * margin.
        self.e.h().cmpgt64(u, t, Src::K64(2 * COMPLEX_MARGIN));
        self.e.h().cmpgt64(t, t, Src::K64(u64::MAX));
        self.e.h().andn_int(t, u, Src::R(t));
        self.e.any_or(t);
    }

    /// ft3 = FRSQ of the chunk's ft0: 1 / sqrt(x) in f64 (two roundings).
    fn frsq_chunk(&mut self) {
        // The source, its f64 halves, the result.
        let (x, lo, hi, r) = (self.ft[0], self.ft[1], self.ft[2], self.ft[3]);
        {
            let mut h = self.e.h();
            h.widen(lo, x, false);
            h.widen(hi, x, true);
        }
        for d in [lo, hi] {
            self.e.h().sqrt_f64(d, d);
            self.e.h().set(self.t[0], Src::K64(1f64.to_bits()));
            self.e.h().div_f64(d, Src::R(self.t[0]), d);
            self.ambiguous(d);
        }
        self.e.h().narrow(r, lo, hi);
        self.finish_float(r, false);
    }

    /// ft3 = FEXP of the chunk's ft0: 2^x = 2^n * 2^f with n = round(x), |f| <= 1/2, 2^f by
    /// its Taylor series in f64 (terms below 2^-62 dropped), 2^n exactly.
    fn fexp_chunk(&mut self) {
        // The source, its f64 halves, the result.
        let (x, lo, hi, r) = (self.ft[0], self.ft[1], self.ft[2], self.ft[3]);
        // Clamped to [-160, 160] (NaN becomes -160 and is restored below): 2^x then rounds
        // to 0 or infinity exactly as the interpreter's cut-offs.
        self.e
            .h()
            .max_f32(self.t[0], x, Src::K((-160f32).to_bits()));
        self.e
            .h()
            .min_f32(self.t[0], self.t[0], Src::K(160f32.to_bits()));
        {
            let mut h = self.e.h();
            h.widen(lo, self.t[0], false);
            h.widen(hi, self.t[0], true);
        }
        let magic = 6_755_399_441_055_744f64; // 1.5 * 2^52: integers in its low bits
        for d in [lo, hi] {
            let (n, f, p) = (self.t[0], self.t[1], self.t[2]);
            self.e.h().round_f64(n, d, Round::Nearest);
            self.e.h().sub_f64(f, d, Src::R(n));
            let c = EXP2_COEFFICIENTS;
            self.e.h().set(p, Src::K64(c[c.len() - 1].to_bits()));
            for k in (0..c.len() - 1).rev() {
                self.e.h().mul_f64(p, p, Src::R(f));
                self.e.h().add_f64(p, p, Src::K64(c[k].to_bits()));
            }
            // 2^n: the biased exponent n + 1023 through the low bits of 1.5 * 2^52.
            self.e
                .h()
                .add_f64(n, n, Src::K64((magic + 1023.0).to_bits()));
            self.e.h().sub64(n, n, Src::K64(magic.to_bits()));
            self.e.h().shl64(n, n, 52);
            self.e.h().mul_f64(d, p, Src::R(n));
            self.ambiguous(d);
        }
        self.e.h().narrow(r, lo, hi);
        // Subnormal results (-152 <= x < -126; below, 0 exactly) round at another bit: the
        // interpreter takes them.
        self.e.h().set(self.t[0], Src::K((-126f32).to_bits()));
        self.e.h().lt(self.t[1], x, self.t[0]);
        self.e.h().set(self.t[0], Src::K((-152f32).to_bits()));
        self.e.h().le(self.t[0], self.t[0], x);
        self.e.h().and_int(self.t[0], self.t[0], Src::R(self.t[1]));
        self.e.any_or(self.t[0]);
        // NaN stays NaN (canonical).
        self.e.h().ne(self.t[0], x, x);
        self.e.h().set(self.t[1], Src::K(0x7FC0_0000));
        self.e.h().blend(r, r, self.t[1], self.t[0]);
    }

    /// ft3 = FLOG of the chunk's ft0: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log2(x) =
    /// e + 2/ln2 * atanh(z) with z = (m - 1)/(m + 1), the series in z^2 in f64 (terms below
    /// 2^-60 dropped). Zero, infinity, negative and NaN inputs by their special values.
    fn flog_chunk(&mut self) {
        // The source, its f64 halves, the result.
        let (x, lo, hi, r) = (self.ft[0], self.ft[1], self.ft[2], self.ft[3]);
        // Special inputs computed as 1.0, their results blended in below.
        self.e.h().zero(self.t[0]);
        self.e.h().lt(self.t[1], self.t[0], x); // 0 < x
        self.e.h().set(self.t[0], Src::K(0x7F80_0000));
        self.e.h().lt(self.t[2], x, self.t[0]); // x < inf
        self.e.h().and_int(self.t[1], self.t[1], Src::R(self.t[2]));
        self.e.h().set(self.t[0], Src::K(1f32.to_bits()));
        self.e.h().blend(self.t[0], self.t[0], x, self.t[1]);
        {
            let mut h = self.e.h();
            h.widen(lo, self.t[0], false);
            h.widen(hi, self.t[0], true);
        }
        let c = LOG2_COEFFICIENTS;
        for d in [lo, hi] {
            let (e, m, t) = (self.t[0], self.t[1], self.t[2]);
            // Biased exponent and significand in [1, 2) (positive normal f64: no sign).
            self.e.h().shr64(e, d, 52);
            self.e.h().and_int(m, d, Src::K64(0x000F_FFFF_FFFF_FFFF));
            self.e.h().or_int(m, m, Src::K64(0x3FF0_0000_0000_0000));
            // m > sqrt(2): m / 2 and e + 1.
            self.e
                .h()
                .set(t, Src::K64(std::f64::consts::SQRT_2.to_bits()));
            self.e.h().lt64(t, t, m);
            self.e.h().mul_f64(self.t[3], m, Src::K64(0.5f64.to_bits()));
            self.e.h().blend(m, m, self.t[3], t);
            // e as f64: (2^52 + E) - (2^52 + 1023), both exact.
            self.e.h().or_int(e, e, Src::K64(0x4330_0000_0000_0000));
            self.e.h().sub_f64(
                e,
                e,
                Src::K64((4_503_599_627_370_496f64 + 1023.0).to_bits()),
            );
            self.e.h().and_int(t, t, Src::K64(1f64.to_bits()));
            self.e.h().add_f64(e, e, Src::R(t));
            // z = (m - 1) / (m + 1) (m - 1 exact), w = z^2.
            self.e.h().sub_f64(t, m, Src::K64(1f64.to_bits()));
            self.e.h().add_f64(m, m, Src::K64(1f64.to_bits()));
            self.e.h().div_f64(t, Src::R(t), m);
            let w = self.t[3];
            self.e.h().mul_f64(w, t, Src::R(t));
            let q = m;
            self.e.h().set(q, Src::K64(c[c.len() - 1].to_bits()));
            for k in (0..c.len() - 1).rev() {
                self.e.h().mul_f64(q, q, Src::R(w));
                self.e.h().add_f64(q, q, Src::K64(c[k].to_bits()));
            }
            self.e.h().mul_f64(q, q, Src::R(t));
            self.e.h().add_f64(d, e, Src::R(q));
            self.ambiguous(d);
        }
        self.e.h().narrow(r, lo, hi);
        // Specials: +-0 -> -inf, +inf -> +inf, negative or NaN -> NaN.
        self.e.h().zero(self.t[0]);
        self.e.h().eq(self.t[1], x, self.t[0]);
        self.e.h().set(self.t[2], Src::K(0xFF80_0000));
        self.e.h().blend(r, r, self.t[2], self.t[1]);
        self.e.h().cmpeq32(self.t[1], x, Src::K(0x7F80_0000));
        self.e.h().set(self.t[2], Src::K(0x7F80_0000));
        self.e.h().blend(r, r, self.t[2], self.t[1]);
        self.e.h().le(self.t[1], self.t[0], x); // 0 <= x (false for NaN)
        self.e.h().set(self.t[2], Src::K(0x7FC0_0000));
        self.e.h().blend(r, self.t[2], r, self.t[1]);
    }

    fn alu_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        let drivers = self.p.drivers[gi];
        let fused = self.p.options.fused_fmad;
        for h in 0..chunks::<E>() {
            self.exec_mask(g, h);
            let mut p0_pending = false;
            let mut w_ready = false;
            // Writes wait in the scratch area until every value of the group is computed: a
            // group reads the registers as they were before it.
            let mut writes: Vec<(Reg, u8, Loc)> = Vec::new();
            for ins in &g.instrs {
                let info = ins.info.unwrap();
                let o = &ins.operands;
                let sat = ins.mods.sat;
                if !w_ready && matches!(info.unit, Unit::MovUnit | Unit::Write) {
                    for (w, d) in [(self.w0, drivers[0]), (self.w1, drivers[1])] {
                        match d {
                            Some(n) => self.e.h().set(w, Src::R(self.ft[usize::from(n)])),
                            None => self.e.h().zero(w),
                        }
                    }
                    w_ready = true;
                }
                let dst_ft = match o.first() {
                    Some(Operand::Ft(n, _)) => self.ft[usize::from(*n)],
                    _ => self.t[0],
                };
                match info.op {
                    Op::Fadd | Op::Fmul => {
                        let a = self.fsrc(&o[1], h, self.t[0]);
                        let b = self.fsrc(&o[2], h, self.t[1]);
                        if info.op == Op::Fadd {
                            self.e.h().add_f32(dst_ft, a, Src::R(b));
                        } else {
                            self.e.h().mul_f32(dst_ft, a, Src::R(b));
                        }
                        self.finish_float(dst_ft, sat);
                    }
                    Op::Fmad => {
                        let a = self.fsrc(&o[1], h, self.t[0]);
                        let b = self.fsrc(&o[2], h, self.t[1]);
                        let c = self.fsrc(&o[3], h, self.t[2]);
                        if fused {
                            self.e.h().set(self.t[3], Src::R(c));
                            self.e.h().fma_f32(self.t[3], a, b);
                            self.e.h().set(dst_ft, Src::R(self.t[3]));
                        } else {
                            self.e.h().mul_f32(self.t[3], a, Src::R(b));
                            self.e.h().add_f32(dst_ft, self.t[3], Src::R(c));
                        }
                        self.finish_float(dst_ft, sat);
                    }
                    Op::Mbyp => {
                        let v = self.fsrc(&o[1], h, self.t[0]);
                        self.e.h().set(dst_ft, Src::R(v));
                    }
                    Op::Umadd32 => {
                        self.raw_in(&o[1], h, self.t[0]);
                        self.raw_in(&o[2], h, self.t[1]);
                        self.raw_in(&o[3], h, self.t[2]);
                        let cin = o[4] == Operand::P0;
                        if cin {
                            self.e.h().load(self.w1, E::at(Loc::P0(h)));
                            self.e.h().and_int(self.w1, self.w1, Src::K(1));
                        }
                        let (f, t) = (self.ft, self.t);
                        let (lo_hi, abc) = ([f[0], f[1]], [t[0], t[1], t[2]]);
                        let cin = cin.then_some(self.w1);
                        self.e
                            .h()
                            .mul_add_wide_u32(lo_hi, abc, cin, [t[3], t[4], t[5]]);
                    }
                    Op::Frcp | Op::Fsqrt => {
                        let v = self.fsrc(&o[1], h, self.t[0]);
                        if info.op == Op::Frcp {
                            self.e.h().set(self.t[1], Src::K(0x3F80_0000));
                            self.e.h().div_f32(self.t[1], Src::R(self.t[1]), v);
                        } else {
                            self.e.h().sqrt_f32(self.t[1], v);
                        }
                        self.finish_float(self.t[1], false);
                        if let Operand::Reg(r, _) = o[0] {
                            self.store_lanes(r, h, self.t[1], self.m, 0);
                        }
                    }
                    op if op.is_comparison() => {
                        self.test(ins, h);
                        if o[1] == Operand::P0 {
                            self.e.h().store(E::at(Loc::Scratch(0)), self.ftt);
                            p0_pending = true;
                        }
                    }
                    Op::Mov => {
                        let v = self.raw(&o[1], h, self.t[0]);
                        self.merge(self.w0, v, o[0].mods().elems, self.w0);
                    }
                    Op::Movc => {
                        let t0 = self.raw(&o[3], h, self.t[0]);
                        self.merge(self.t[1], t0, o[0].mods().elems, self.w0);
                        self.e.h().blend(self.w0, self.w0, self.t[1], self.ftt);
                        if matches!(o[1], Operand::W(1, _)) {
                            let t1 = self.raw(&o[4], h, self.t[2]);
                            self.e.h().blend(self.w1, self.w1, t1, self.ftt);
                        }
                    }
                    Op::MovcWrite => {
                        let e = self.wsrc(&o[1], h, self.t[0]);
                        if e != self.t[0] {
                            self.e.h().set(self.t[0], Src::R(e));
                        }
                        let t0 = self.raw(&o[3], h, self.t[1]);
                        self.merge(self.t[2], t0, o[0].mods().elems, self.t[0]);
                        self.e.h().blend(self.w0, self.t[0], self.t[2], self.ftt);
                        let t1 = self.raw(&o[4], h, self.t[1]);
                        self.e.h().blend(self.w1, self.w1, t1, self.ftt);
                        if let Operand::Reg(r, _) = o[0] {
                            let slot = Loc::Scratch(2 + writes.len());
                            self.e.h().store(E::at(slot), self.w0);
                            writes.push((r, 0, slot));
                        }
                    }
                    Op::Write => {
                        let v = self.wsrc(&o[1], h, self.t[0]);
                        if let Operand::Reg(r, m) = o[0] {
                            let slot = Loc::Scratch(2 + writes.len());
                            self.e.h().store(E::at(slot), v);
                            writes.push((r, m.elems, slot));
                        }
                    }
                    Op::Byp => match info.unit {
                        Unit::BitMask => {
                            let a = self.raw(&o[2], h, self.t[0]);
                            self.e.h().set(self.ft[0], Src::R(a));
                            let b = self.raw(&o[3], h, self.t[1]);
                            self.e.h().set(self.ft[1], Src::R(b));
                        }
                        _ => {
                            let v = self.raw(&o[1], h, self.t[0]);
                            self.e.h().set(dst_ft, Src::R(v));
                        }
                    },
                    Op::And | Op::Or | Op::Xor | Op::Nand | Op::Nor | Op::Xnor => {
                        self.e.h().set(self.t[0], Src::R(self.ft[2]));
                        if o[1] != Operand::Blank {
                            self.e.h().and_int(self.t[0], self.t[0], Src::R(self.ft[1]));
                        }
                        let b = self.raw(&o[4], h, self.t[1]);
                        if o[3] != Operand::Blank {
                            self.e.h().andn_int(self.t[1], self.ft[1], Src::R(b));
                        } else if b != self.t[1] {
                            self.e.h().set(self.t[1], Src::R(b));
                        }
                        match info.op {
                            Op::And | Op::Nand => {
                                self.e.h().and_int(self.ft[4], self.t[0], Src::R(self.t[1]))
                            }
                            Op::Or | Op::Nor => {
                                self.e.h().or_int(self.ft[4], self.t[0], Src::R(self.t[1]))
                            }
                            _ => self.e.h().xor_int(self.ft[4], self.t[0], Src::R(self.t[1])),
                        }
                        if matches!(info.op, Op::Nand | Op::Nor | Op::Xnor) {
                            self.ones(self.t[2]);
                            self.e
                                .h()
                                .xor_int(self.ft[4], self.ft[4], Src::R(self.t[2]));
                        }
                    }
                    Op::Lsl | Op::Shr | Op::Rol | Op::Asr => {
                        let x = self.raw(&o[1], h, self.t[0]);
                        let n = self.raw(&o[2], h, self.t[1]);
                        self.e.h().and_int(self.t[1], n, Src::K(31));
                        match info.op {
                            Op::Lsl => self.e.h().shl32_var(dst_ft, x, self.t[1]),
                            Op::Shr => self.e.h().shr32_var(dst_ft, x, self.t[1]),
                            Op::Asr => self.e.h().sar32_var(dst_ft, x, self.t[1]),
                            _ => {
                                self.e.h().set(self.t[2], Src::K(32));
                                self.e.h().sub32(self.t[2], self.t[2], Src::R(self.t[1]));
                                self.e.h().shr32_var(self.t[2], x, self.t[2]);
                                self.e.h().shl32_var(self.t[3], x, self.t[1]);
                                self.e.h().or_int(dst_ft, self.t[3], Src::R(self.t[2]));
                            }
                        }
                    }
                    Op::Cps => {
                        let s4 = self.raw(&o[3], h, self.t[0]);
                        self.e.h().andn_int(self.t[1], self.ft[4], Src::R(s4));
                        self.e
                            .h()
                            .and_int(self.t[2], self.ft[4], Src::M(E::at(Loc::P0(h))));
                        self.e.h().or_int(self.ft[5], self.t[1], Src::R(self.t[2]));
                    }
                    Op::Tz | Op::Tnz => {
                        let v = self.raw(&o[1], h, self.t[0]);
                        self.e.h().zero(self.t[1]);
                        self.e.h().cmpeq32(self.t[1], self.t[1], Src::R(v));
                        if info.op == Op::Tnz {
                            self.ones(self.t[2]);
                            self.e.h().xor_int(self.t[1], self.t[1], Src::R(self.t[2]));
                        }
                        self.e.h().store(E::at(Loc::Scratch(0)), self.t[1]);
                        p0_pending = true;
                    }
                    _ => unreachable!("native() admits only the forms above"),
                }
            }
            for (r, elems, slot) in writes {
                self.e.h().load(self.t[0], E::at(slot));
                self.store_lanes(r, h, self.t[0], self.m, elems);
            }
            if p0_pending {
                // p0 = (p0 & !self.m) | (new & self.m), written after the group's reads.
                self.e.h().load(self.t[0], E::at(Loc::Scratch(0)));
                self.e.h().load(self.t[1], E::at(Loc::P0(h)));
                self.e.h().blend(self.t[1], self.t[1], self.t[0], self.m);
                self.e.h().store(E::at(Loc::P0(h)), self.t[1]);
                self.site(Site::P0, self.m);
            }
        }
    }

    /// A write source's value (feed-through, W0/W1 or register) for chunk `h`.
    fn wsrc(&mut self, o: &Operand, h: usize, d: E::R) -> E::R {
        match o {
            Operand::W(0, _) => self.w0,
            Operand::W(_, _) => self.w1,
            _ => self.raw(o, h, d),
        }
    }

    /// An element of the test's type: `(v >> 8e) & 0xFF`, sign-extended for signed types.
    fn element(&mut self, d: E::R, v: E::R, ty: TestType, e: u8) {
        let (width, signed) = match ty {
            TestType::U8 => (8, false),
            TestType::S8 => (8, true),
            TestType::U16 => (16, false),
            TestType::S16 => (16, true),
            _ => {
                if d != v {
                    self.e.h().set(d, Src::R(v));
                }
                return;
            }
        };
        let top = 32 - width * (u32::from(e) + 1);
        self.e.h().shl32(d, v, top);
        if signed {
            self.e.h().sar32(d, d, 32 - width);
        } else {
            self.e.h().shr32(d, d, 32 - width);
        }
    }

    /// A test's result mask into FTT.
    fn test(&mut self, ins: &Instr, h: usize) {
        let op = ins.op().unwrap();
        let o = &ins.operands;
        let ty = ins.mods.ty.unwrap_or(TestType::F32);
        let one_operand = matches!(op, Op::Tstz | Op::Tstgz | Op::Tstgez);
        let a0 = self.raw(&o[2], h, self.t[0]);
        self.element(self.t[0], a0, ty, o[2].mods().element());
        if one_operand {
            self.e.h().zero(self.t[1]);
        } else {
            let b0 = self.raw(&o[3], h, self.t[1]);
            self.element(self.t[1], b0, ty, o[3].mods().element());
        }
        let (a, b) = (self.t[0], self.t[1]);
        if ty == TestType::F32 {
            // a OP b with IEEE unordered semantics.
            match op {
                Op::Tstz | Op::Tste => self.e.h().eq(self.ftt, a, b),
                Op::Tstne => self.e.h().ne(self.ftt, a, b),
                Op::Tstgz | Op::Tstg => self.e.h().lt(self.ftt, b, a),
                Op::Tstgez | Op::Tstge | Op::Tstmax => self.e.h().le(self.ftt, b, a),
                Op::Tstl | Op::Tstmin => self.e.h().lt(self.ftt, a, b),
                _ => self.e.h().le(self.ftt, a, b),
            }
            return;
        }
        if ty == TestType::U32 {
            // Unsigned order through the signed compare: flip the sign bits.
            self.e.h().xor_int(a, a, Src::K(0x8000_0000));
            self.e.h().xor_int(b, b, Src::K(0x8000_0000));
        }
        // eq, gt(a,b), lt = gt(b,a); the others are their complements.
        let (base, invert) = match op {
            Op::Tstz | Op::Tste => (0, false),
            Op::Tstne => (0, true),
            Op::Tstgz | Op::Tstg => (1, false),
            Op::Tstle => (1, true),
            Op::Tstl | Op::Tstmin => (2, false),
            _ => (2, true), // >= : not <
        };
        match base {
            0 => self.e.h().cmpeq32(self.ftt, a, Src::R(b)),
            1 => self.e.h().cmpgt32(self.ftt, a, Src::R(b)),
            _ => self.e.h().cmpgt32(self.ftt, b, Src::R(a)),
        }
        if invert {
            self.ones(self.t[2]);
            self.e.h().xor_int(self.ftt, self.ftt, Src::R(self.t[2]));
        }
    }

    /// The lanes whose condition (0 p0, 1 !p0, 2 true, 3 false) holds, into `d`.
    fn cond_mask(&mut self, d: E::R, c: i64, h: usize) {
        match c {
            0 => self.e.h().load(d, E::at(Loc::P0(h))),
            1 => {
                self.e.h().load(d, E::at(Loc::P0(h)));
                self.ones(self.t[5]);
                self.e.h().xor_int(d, d, Src::R(self.t[5]));
            }
            2 => self.ones(d),
            _ => self.e.h().zero(d),
        }
    }

    /// Unsigned `a > k` for a small constant k (lanes all ones when true).
    fn gt_const(&mut self, d: E::R, a: E::R, k: u32) {
        self.e.h().xor_int(d, a, Src::K(0x8000_0000));
        self.e.h().set(self.t[5], Src::K(k ^ 0x8000_0000));
        self.e.h().cmpgt32(d, d, Src::R(self.t[5]));
    }

    fn cond_group(&mut self, gi: usize) {
        let ins = &self.p.groups[gi].instrs[0];
        let op = ins.op().unwrap();
        let o = &ins.operands;
        let imm = |k: usize| match o[k] {
            Operand::Imm(v) => v,
            _ => 0,
        };
        let literal = self.p.options.cndlt_literal;
        // CNDLT: whether any running lane's condition holds, over every chunk.
        if op == Op::Cndlt {
            self.e.any_clear();
            for h in 0..chunks::<E>() {
                self.cond_mask(self.t[0], imm(0), h);
                self.e
                    .h()
                    .and_int(self.t[0], self.t[0], Src::M(E::at(Loc::Pe(h))));
                self.e
                    .h()
                    .and_int(self.t[0], self.t[0], Src::M(E::at(Loc::Lanes(h))));
                self.e.any_or(self.t[0]);
            }
        }
        for h in 0..chunks::<E>() {
            self.e.h().load(self.m, E::at(Loc::Lanes(h)));
            let (dst, src) = match op {
                Op::Cndend => (o[0].clone(), o[1].clone()),
                Op::Cndlt => (o[1].clone(), o[3].clone()),
                _ => (o[1].clone(), o[2].clone()),
            };
            self.raw_in(&src, h, self.t[0]);
            // T1 = (S0 == 0)
            self.e.h().zero(self.t[1]);
            self.e.h().cmpeq32(self.t[1], self.t[1], Src::R(self.t[0]));
            // ft0 = new self.w0, ft1 = new Pe (feed-throughs are free here).
            match op {
                Op::Cndst => {
                    let adj = imm(3) as u32;
                    self.cond_mask(self.t[2], imm(0), h);
                    self.e.h().and_int(self.t[2], self.t[2], Src::R(self.t[1])); // run
                    self.e.h().add32(self.ft[0], self.t[0], Src::K(adj));
                    self.e
                        .h()
                        .andn_int(self.ft[0], self.t[2], Src::R(self.ft[0])); // run ? 0 : S0 + adj
                    self.e.h().set(self.ft[1], Src::R(self.t[2]));
                }
                Op::Cndef => {
                    let adj = imm(3) as u32;
                    self.cond_mask(self.t[2], imm(0), h);
                    self.e.h().cmpeq32(self.t[3], self.t[0], Src::K(1)); // S0 == 1
                                                                         // b = cond && S0 == 1
                    self.e.h().and_int(self.t[2], self.t[2], Src::R(self.t[3]));
                    self.e.h().add32(self.t[3], self.t[0], Src::K(adj)); // S0 + adj
                    self.e
                        .h()
                        .andn_int(self.ft[0], self.t[2], Src::R(self.t[0])); // b ? 0 : S0
                    self.e
                        .h()
                        .blend(self.ft[0], self.ft[0], self.t[3], self.t[1]); // z ? S0 + adj : ...
                    if adj == 0 {
                        self.e.h().or_int(self.ft[1], self.t[1], Src::R(self.t[2]));
                    } else {
                        self.e
                            .h()
                            .andn_int(self.ft[1], self.t[1], Src::R(self.t[2]));
                    }
                }
                Op::Cndend => {
                    let adj = imm(2) as u32;
                    self.gt_const(self.t[2], self.t[0], adj);
                    self.e.h().sub32(self.t[3], self.t[0], Src::K(adj));
                    self.e.h().and_int(self.ft[0], self.t[3], Src::R(self.t[2]));
                    self.ones(self.t[4]);
                    self.e.h().xor_int(self.ft[1], self.t[2], Src::R(self.t[4]));
                }
                Op::Cndlt => {
                    let adj = imm(4) as u32;
                    let exit = self.e.label();
                    let join = self.e.label();
                    self.e.branch_any(exit, false);
                    // Some running lane's condition holds: lanes (cond == literal) at S0 == 0 stop.
                    self.cond_mask(self.t[2], imm(0), h);
                    if !literal {
                        self.ones(self.t[4]);
                        self.e.h().xor_int(self.t[2], self.t[2], Src::R(self.t[4]));
                    }
                    self.e.h().and_int(self.t[2], self.t[2], Src::R(self.t[1])); // stop
                    self.e.h().set(self.t[3], Src::K(adj));
                    self.e
                        .h()
                        .blend(self.ft[0], self.t[0], self.t[3], self.t[2]);
                    self.e
                        .h()
                        .andn_int(self.ft[1], self.t[2], Src::R(self.t[1]));
                    self.ones(self.ft[2]); // P0 = 1
                    self.e.jump(join);
                    self.e.bind(exit);
                    self.gt_const(self.t[2], self.t[0], adj);
                    self.e.h().sub32(self.t[3], self.t[0], Src::K(adj));
                    self.e.h().and_int(self.ft[0], self.t[3], Src::R(self.t[2]));
                    self.ones(self.t[4]);
                    self.e.h().xor_int(self.ft[1], self.t[2], Src::R(self.t[4]));
                    self.e.h().zero(self.ft[2]); // P0 = 0
                    self.e.bind(join);
                    self.e.h().load(self.t[4], E::at(Loc::P0(h)));
                    self.e.h().blend(self.t[4], self.t[4], self.ft[2], self.m);
                    self.e.h().store(E::at(Loc::P0(h)), self.t[4]);
                    self.site(Site::P0, self.m);
                }
                _ => unreachable!("native() admits only these conditionals"),
            }
            if let Operand::Reg(r, _) = dst {
                self.store_lanes(r, h, self.ft[0], self.m, 0);
            }
            self.e.h().load(self.t[4], E::at(Loc::Pe(h)));
            self.e.h().blend(self.t[4], self.t[4], self.ft[1], self.m);
            self.e.h().store(E::at(Loc::Pe(h)), self.t[4]);
        }
    }

    fn branch_group(&mut self, gi: usize) {
        let g = &self.p.groups[gi];
        let target = self.labels[self.p.targets[gi].expect("resolved branch")];
        let ins = &g.instrs[0];
        if g.pred == Pred::Always {
            self.e.jump(target);
            return;
        }
        let all = ins.mods.branch == Some(BranchMode::AllInst);
        self.e.any_clear();
        for h in 0..chunks::<E>() {
            self.e.h().load(self.t[0], E::at(Loc::Lanes(h)));
            if !g.ignore_pe {
                self.e
                    .h()
                    .and_int(self.t[0], self.t[0], Src::M(E::at(Loc::Pe(h))));
            }
            self.e.h().load(self.t[1], E::at(Loc::P0(h)));
            // Lanes considered whose predicate holds (any) or fails (all).
            let holds_is_p0 = g.pred == Pred::P0;
            if holds_is_p0 != all {
                self.e.h().and_int(self.t[0], self.t[0], Src::R(self.t[1]));
            } else {
                self.e.h().andn_int(self.t[0], self.t[1], Src::R(self.t[0]));
            }
            self.e.any_or(self.t[0]);
        }
        // any: jump when some lane's predicate holds; all: when none fails.
        self.e.branch_any(target, !all);
    }
}
