//! USC lowering shared by both hosts: every group becomes a sequence of [`VEmit`] calls on
//! sixteen virtual vector registers, each holding one *chunk* of the 16 instances (eight lanes
//! on x86-64 AVX2, four on AArch64 NEON), and each backend (`x64.rs`, `a64.rs`) encodes them.
//! The walker runs every per-instance computation once per chunk with the chunk's execution
//! mask, so the lanes, masks and divergence rules are written once for both hosts.
//!
//! Virtual registers: 0-5 hold ft0-ft5 of the chunk being computed, [`FTT`] the test result,
//! [`W0`]/[`W1`] the writes' drivers, [`M`] the execution mask, [`T`] temporaries. Every group
//! starts with the budget check, as the interpreter's loop does.

use super::Site;
use dynasmrt::DynamicLabel;
use picajit_interp::usc::program::{
    Bank, BranchMode, Group, Instr, Operand, Pred, Reg, SignPos, TestType,
};
use picajit_interp::usc::table::{Op, Unit};
use picajit_interp::usc::{consts, Prepared};

/// A virtual vector register, 0..16.
pub type V = u8;

pub const FTT: V = 6;
pub const W0: V = 7;
pub const W1: V = 8;
pub const M: V = 9;
pub const T: [V; 6] = [10, 11, 12, 13, 14, 15];

fn ft(n: u8) -> V {
    n
}

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

/// The second operand of a binary operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    V(V),
    /// A constant in every lane.
    K(u32),
    At(Loc),
}

impl From<V> for Src {
    fn from(v: V) -> Src {
        Src::V(v)
    }
}

impl From<Loc> for Src {
    fn from(l: Loc) -> Src {
        Src::At(l)
    }
}

/// Lane-wise binary operations (32-bit lanes). Float operations follow IEEE binary32 with
/// round-to-nearest-even; their NaN payloads are not relied on (results are canonicalised).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Fadd,
    Fmul,
    Fdiv,
    /// `a > b ? a : b` (the second operand when either is NaN or both are equal).
    Fmax,
    /// `a < b ? a : b` (the second operand when either is NaN or both are equal).
    Fmin,
    And,
    /// `!a & b`.
    AndNot,
    Or,
    Xor,
    Add,
    Sub,
    /// Integer equality: all ones or zero.
    CmpEq,
    /// Signed integer `a > b`.
    CmpGt,
    /// `a << b` (counts 0..=32; 32 gives 0).
    Sllv,
    /// Logical `a >> b` (counts 0..=32; 32 gives 0).
    Srlv,
    /// Arithmetic `a >> b` (counts 0..=31).
    Srav,
    /// Ordered `a == b`.
    FcmpEq,
    /// Unordered `a != b` (true on NaN).
    FcmpNe,
    /// Ordered `a < b`.
    FcmpLt,
    /// Ordered `a <= b`.
    FcmpLe,
}

/// Lane-wise unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un {
    Mov,
    /// Round toward minus infinity.
    Floor,
    Sqrt,
}

/// Shifts by an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShImm {
    Sll,
    Srl,
    Sra,
}

/// Lane-wise operations on f64 (and 64-bit integer) lanes: a chunk's values widened by
/// [`VEmit::widen`] take two registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin64 {
    Fadd,
    Fsub,
    Fmul,
    Fdiv,
    /// Ordered `a < b`: all ones or zero per 64-bit lane.
    FcmpLt,
    And,
    Or,
    Add,
    Sub,
    /// Signed 64-bit `a > b`.
    CmpGt,
}

/// Unary f64 / 64-bit operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un64 {
    Sqrt,
    /// Round to the nearest integer, ties to even.
    Round,
    Shl(u8),
    Shr(u8),
}

/// The second operand of a 64-bit operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src64 {
    V(V),
    /// A 64-bit constant in every lane.
    K(u64),
}

/// What a host backend provides to the walker.
pub trait VEmit {
    /// Lanes per chunk (8 or 4); `16 / LANES` chunks make the task.
    const LANES: usize;

    fn label(&mut self) -> DynamicLabel;
    fn bind(&mut self, l: DynamicLabel);
    fn jump(&mut self, l: DynamicLabel);

    fn load(&mut self, d: V, at: Loc);
    fn store(&mut self, at: Loc, s: V);
    /// A shared register (sh/cf) in every lane.
    fn bcast(&mut self, d: V, r: Reg);
    fn splat(&mut self, d: V, v: u32);
    fn zero(&mut self, d: V);
    fn ones(&mut self, d: V);
    fn bin(&mut self, op: Bin, d: V, a: V, b: Src);
    fn un(&mut self, op: Un, d: V, s: V);
    fn shift_imm(&mut self, op: ShImm, d: V, s: V, n: u8);
    /// `d = mask ? b : a` (masks are all ones or zero per lane).
    fn blend(&mut self, d: V, a: V, b: V, mask: V);
    /// `d = a * b + d`, fused (one rounding).
    fn fma(&mut self, d: V, a: V, b: V);
    /// The f32 lanes of `s` as f64: the first half of the chunk's lanes in `lo`, the second
    /// in `hi` (`lo`, `hi` and `s` distinct).
    fn widen(&mut self, lo: V, hi: V, s: V);
    /// The f64 lanes of `lo` and `hi` rounded to f32 (nearest, ties to even) into `d`; may
    /// clobber `lo` and `hi` (`d` is not `hi`).
    fn narrow(&mut self, d: V, lo: V, hi: V);
    fn bin64(&mut self, op: Bin64, d: V, a: V, b: Src64);
    fn un64(&mut self, op: Un64, d: V, s: V);
    fn splat64(&mut self, d: V, v: u64);
    /// The 64-bit `T0 * T1 + T2 (+ cin)` per lane (unsigned): low words into ft0, high words
    /// into ft1. May clobber `T`. `cin` holds 0 or 1 per lane.
    fn umadd32(&mut self, cin: Option<V>);

    /// Start of a lane reduction: the accumulator is zero.
    fn any_clear(&mut self);
    /// Accumulates whether any lane of `v` is non-zero.
    fn any_or(&mut self, v: V);
    /// Jumps to `l` when the accumulator is non-zero (`nonzero`) or zero.
    fn branch_any(&mut self, l: DynamicLabel, nonzero: bool);
    /// Records that the lanes of `mask` wrote write site `k`.
    fn site(&mut self, k: usize, mask: V);

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

/// Registers of the complex-unit lowering: the f32 source, its f64 halves, the result.
const X: V = 0;
const LO: V = 1;
const HI: V = 2;
const R: V = 3;

/// How near (in units of the last place of the f64 result) to a rounding boundary of f32
/// an f64 FRSQ/FLOG/FEXP result may lie before the interpreter decides it. The f64
/// evaluations are within a few units of the exact value; `tests/usc_float_jit.rs` checks
/// every binary32 input against the interpreter (with `PICAJIT_USC_EXHAUSTIVE=1`).
pub const COMPLEX_MARGIN: u64 = 1 << 10;

/// ln2^k / k!, k = 0..=14: 2^f = e^(f ln2) for |f| <= 1/2 (the next term is below 2^-62).
pub fn exp2_coefficients() -> [f64; 15] {
    let mut c = [1f64; 15];
    for k in 1..15 {
        c[k] = c[k - 1] * std::f64::consts::LN_2 / k as f64;
    }
    c
}

/// 2 / (ln2 (2k + 1)), k = 0..=11: log2(m) = z * sum c_k z^2k for |z| <= 0.172 (the next
/// term is below 2^-62).
pub fn log2_coefficients() -> [f64; 12] {
    std::array::from_fn(|k| 2.0 / std::f64::consts::LN_2 / (2 * k + 1) as f64)
}

fn chunks<E: VEmit>() -> usize {
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
pub struct Lowering<'p, 'e, E: VEmit> {
    e: &'e mut E,
    p: &'p Prepared,
    labels: Vec<DynamicLabel>,
    done: DynamicLabel,
    sites: Vec<Site>,
}

/// What [`Lowering::program`] reports.
pub struct Lowered {
    pub sites: Vec<Site>,
    pub native_groups: usize,
}

impl<'p, 'e, E: VEmit> Lowering<'p, 'e, E> {
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
    fn raw(&mut self, o: &Operand, h: usize, d: V) -> V {
        match o {
            Operand::Ft(n, _) => ft(*n),
            Operand::Reg(r, _) => {
                match r.bank {
                    Bank::R | Bank::Vi | Bank::I | Bank::Idx => self.e.load(d, Loc::Lane(*r, h)),
                    Bank::Sh | Bank::Cf => self.e.bcast(d, *r),
                    Bank::C => self.e.splat(d, consts::special(r.index).unwrap_or(0)),
                }
                d
            }
            Operand::Imm(v) => {
                self.e.splat(d, *v as u32);
                d
            }
            _ => {
                self.e.zero(d);
                d
            }
        }
    }

    /// `raw` into exactly `d`.
    fn raw_in(&mut self, o: &Operand, h: usize, d: V) {
        let v = self.raw(o, h, d);
        if v != d {
            self.e.un(Un::Mov, d, v);
        }
    }

    /// `o` with its float modifiers (.flr, .abs, .neg) applied, in `d` (or a feed-through
    /// register when it has none).
    fn fsrc(&mut self, o: &Operand, h: usize, d: V) -> V {
        let m = o.mods();
        let v = self.raw(o, h, d);
        if !(m.flr || m.abs || m.neg) {
            return v;
        }
        if v != d {
            self.e.un(Un::Mov, d, v);
        }
        if m.flr {
            self.e.un(Un::Floor, d, d);
        }
        if m.abs {
            self.e.bin(Bin::And, d, d, Src::K(0x7FFF_FFFF));
        }
        if m.neg {
            self.e.bin(Bin::Xor, d, d, Src::K(0x8000_0000));
        }
        d
    }

    /// NaN results become the canonical NaN; `.sat` clamps to [+0, 1].
    fn finish_float(&mut self, d: V, sat: bool) {
        self.e.bin(Bin::And, T[4], d, Src::K(0x7FFF_FFFF));
        self.e.bin(Bin::CmpGt, T[4], T[4], Src::K(0x7F80_0000));
        self.e.splat(T[5], 0x7FC0_0000);
        self.e.blend(d, d, T[5], T[4]);
        if sat {
            self.e.bin(Bin::Fmax, d, d, Src::K(0));
            self.e.bin(Bin::Fmin, d, d, Src::K(0x3F80_0000));
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
    fn merge(&mut self, d: V, v: V, elems: u8, rest: V) {
        let bm = Self::byte_mask(elems);
        if bm == u32::MAX {
            if d != v {
                self.e.un(Un::Mov, d, v);
            }
            return;
        }
        self.e.splat(T[5], bm);
        self.e.bin(Bin::And, T[4], v, Src::V(T[5]));
        self.e.bin(Bin::AndNot, d, T[5], Src::V(rest));
        self.e.bin(Bin::Or, d, d, Src::V(T[4]));
    }

    /// Records the lanes of `mask` as having written `s`.
    fn site(&mut self, s: Site, mask: V) {
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
    fn store_lanes(&mut self, r: Reg, h: usize, v: V, mask: V, elems: u8) {
        let at = Loc::Lane(r, h);
        let bm = Self::byte_mask(elems);
        let sel = if bm == u32::MAX {
            mask
        } else {
            self.e.bin(Bin::And, T[5], mask, Src::K(bm));
            T[5]
        };
        self.e.load(T[4], at);
        // Byte-granular blend: and/andn/or.
        self.e.bin(Bin::And, T[3], v, Src::V(sel));
        self.e.bin(Bin::AndNot, T[4], sel, Src::V(T[4]));
        self.e.bin(Bin::Or, T[3], T[3], Src::V(T[4]));
        self.e.store(at, T[3]);
        self.site(Site::Reg(r), mask);
    }

    /// The execution mask of a group for chunk `h` into `M`.
    fn exec_mask(&mut self, g: &Group, h: usize) {
        self.e.load(M, Loc::Lanes(h));
        if !g.ignore_pe {
            self.e.bin(Bin::And, M, M, Src::At(Loc::Pe(h)));
        }
        match g.pred {
            Pred::Always => {}
            Pred::P0 => self.e.bin(Bin::And, M, M, Src::At(Loc::P0(h))),
            Pred::NotP0 => {
                self.e.load(T[0], Loc::P0(h));
                self.e.bin(Bin::AndNot, M, T[0], Src::V(M));
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
            let v = self.fsrc(&ins.operands[1], h, X);
            if v != X {
                self.e.un(Un::Mov, X, v);
            }
            match op {
                Op::Frsq => self.frsq_chunk(),
                Op::Flog => self.flog_chunk(),
                _ => self.fexp_chunk(),
            }
            self.e.store(Loc::Scratch(h), R);
        }
        self.e.branch_any(slow, true);
        for h in 0..chunks::<E>() {
            self.exec_mask(g, h);
            self.e.load(T[0], Loc::Scratch(h));
            if let Operand::Reg(r, _) = ins.operands[0] {
                self.store_lanes(r, h, T[0], M, 0);
            }
        }
        self.e.jump(after);
        self.e.bind(slow);
        self.helper_group(gi);
        self.e.bind(after);
    }

    /// Accumulates the lanes of the f64 result `y` whose low 29 significand bits (those
    /// the rounding to f32 drops) lie within [`COMPLEX_MARGIN`] of the half-way point.
    fn ambiguous(&mut self, y: V) {
        let (t, u) = (T[4], T[5]);
        self.e.bin64(Bin64::And, t, y, Src64::K((1 << 29) - 1));
        self.e
            .bin64(Bin64::Sub, t, t, Src64::K((1 << 28) - COMPLEX_MARGIN));
        // t in [0, 2 * margin]: t > -1 and not t > 2 * margin.
        self.e
            .bin64(Bin64::CmpGt, u, t, Src64::K(2 * COMPLEX_MARGIN));
        self.e.bin64(Bin64::CmpGt, t, t, Src64::K(u64::MAX));
        self.e.bin(Bin::AndNot, t, u, Src::V(t));
        self.e.any_or(t);
    }

    /// `R` = FRSQ of the chunk's `X`: 1 / sqrt(x) in f64 (two roundings).
    fn frsq_chunk(&mut self) {
        self.e.widen(LO, HI, X);
        for d in [LO, HI] {
            self.e.un64(Un64::Sqrt, d, d);
            self.e.splat64(T[0], 1f64.to_bits());
            self.e.bin64(Bin64::Fdiv, d, T[0], Src64::V(d));
            self.ambiguous(d);
        }
        self.e.narrow(R, LO, HI);
        self.finish_float(R, false);
    }

    /// `R` = FEXP of the chunk's `X`: 2^x = 2^n * 2^f with n = round(x), |f| <= 1/2, 2^f by
    /// its Taylor series in f64 (terms below 2^-62 dropped), 2^n exactly.
    fn fexp_chunk(&mut self) {
        // Clamped to [-160, 160] (NaN becomes -160 and is restored below): 2^x then rounds
        // to 0 or infinity exactly as the interpreter's cut-offs.
        self.e.bin(Bin::Fmax, T[0], X, Src::K((-160f32).to_bits()));
        self.e.bin(Bin::Fmin, T[0], T[0], Src::K(160f32.to_bits()));
        self.e.widen(LO, HI, T[0]);
        let magic = 6_755_399_441_055_744f64; // 1.5 * 2^52: integers in its low bits
        for d in [LO, HI] {
            let (n, f, p) = (T[0], T[1], T[2]);
            self.e.un64(Un64::Round, n, d);
            self.e.bin64(Bin64::Fsub, f, d, Src64::V(n));
            let c = exp2_coefficients();
            self.e.splat64(p, c[c.len() - 1].to_bits());
            for k in (0..c.len() - 1).rev() {
                self.e.bin64(Bin64::Fmul, p, p, Src64::V(f));
                self.e.bin64(Bin64::Fadd, p, p, Src64::K(c[k].to_bits()));
            }
            // 2^n: the biased exponent n + 1023 through the low bits of 1.5 * 2^52.
            self.e
                .bin64(Bin64::Fadd, n, n, Src64::K((magic + 1023.0).to_bits()));
            self.e.bin64(Bin64::Sub, n, n, Src64::K(magic.to_bits()));
            self.e.un64(Un64::Shl(52), n, n);
            self.e.bin64(Bin64::Fmul, d, p, Src64::V(n));
            self.ambiguous(d);
        }
        self.e.narrow(R, LO, HI);
        // Subnormal results (-152 <= x < -126; below, 0 exactly) round at another bit: the
        // interpreter takes them.
        self.e.splat(T[0], (-126f32).to_bits());
        self.e.bin(Bin::FcmpLt, T[1], X, Src::V(T[0]));
        self.e.splat(T[0], (-152f32).to_bits());
        self.e.bin(Bin::FcmpLe, T[0], T[0], Src::V(X));
        self.e.bin(Bin::And, T[0], T[0], Src::V(T[1]));
        self.e.any_or(T[0]);
        // NaN stays NaN (canonical).
        self.e.bin(Bin::FcmpNe, T[0], X, Src::V(X));
        self.e.splat(T[1], 0x7FC0_0000);
        self.e.blend(R, R, T[1], T[0]);
    }

    /// `R` = FLOG of the chunk's `X`: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log2(x) =
    /// e + 2/ln2 * atanh(z) with z = (m - 1)/(m + 1), the series in z^2 in f64 (terms below
    /// 2^-60 dropped). Zero, infinity, negative and NaN inputs by their special values.
    fn flog_chunk(&mut self) {
        // Special inputs computed as 1.0, their results blended in below.
        self.e.zero(T[0]);
        self.e.bin(Bin::FcmpLt, T[1], T[0], Src::V(X)); // 0 < x
        self.e.splat(T[0], 0x7F80_0000);
        self.e.bin(Bin::FcmpLt, T[2], X, Src::V(T[0])); // x < inf
        self.e.bin(Bin::And, T[1], T[1], Src::V(T[2]));
        self.e.splat(T[0], 1f32.to_bits());
        self.e.blend(T[0], T[0], X, T[1]);
        self.e.widen(LO, HI, T[0]);
        let c = log2_coefficients();
        for d in [LO, HI] {
            let (e, m, t) = (T[0], T[1], T[2]);
            // Biased exponent and significand in [1, 2) (positive normal f64: no sign).
            self.e.un64(Un64::Shr(52), e, d);
            self.e
                .bin64(Bin64::And, m, d, Src64::K(0x000F_FFFF_FFFF_FFFF));
            self.e
                .bin64(Bin64::Or, m, m, Src64::K(0x3FF0_0000_0000_0000));
            // m > sqrt(2): m / 2 and e + 1.
            self.e.splat64(t, std::f64::consts::SQRT_2.to_bits());
            self.e.bin64(Bin64::FcmpLt, t, t, Src64::V(m));
            self.e
                .bin64(Bin64::Fmul, T[3], m, Src64::K(0.5f64.to_bits()));
            self.e.blend(m, m, T[3], t);
            // e as f64: (2^52 + E) - (2^52 + 1023), both exact.
            self.e
                .bin64(Bin64::Or, e, e, Src64::K(0x4330_0000_0000_0000));
            self.e.bin64(
                Bin64::Fsub,
                e,
                e,
                Src64::K((4_503_599_627_370_496f64 + 1023.0).to_bits()),
            );
            self.e.bin64(Bin64::And, t, t, Src64::K(1f64.to_bits()));
            self.e.bin64(Bin64::Fadd, e, e, Src64::V(t));
            // z = (m - 1) / (m + 1) (m - 1 exact), w = z^2.
            self.e.bin64(Bin64::Fsub, t, m, Src64::K(1f64.to_bits()));
            self.e.bin64(Bin64::Fadd, m, m, Src64::K(1f64.to_bits()));
            self.e.bin64(Bin64::Fdiv, t, t, Src64::V(m));
            let w = T[3];
            self.e.bin64(Bin64::Fmul, w, t, Src64::V(t));
            let q = m;
            self.e.splat64(q, c[c.len() - 1].to_bits());
            for k in (0..c.len() - 1).rev() {
                self.e.bin64(Bin64::Fmul, q, q, Src64::V(w));
                self.e.bin64(Bin64::Fadd, q, q, Src64::K(c[k].to_bits()));
            }
            self.e.bin64(Bin64::Fmul, q, q, Src64::V(t));
            self.e.bin64(Bin64::Fadd, d, e, Src64::V(q));
            self.ambiguous(d);
        }
        self.e.narrow(R, LO, HI);
        // Specials: +-0 -> -inf, +inf -> +inf, negative or NaN -> NaN.
        self.e.zero(T[0]);
        self.e.bin(Bin::FcmpEq, T[1], X, Src::V(T[0]));
        self.e.splat(T[2], 0xFF80_0000);
        self.e.blend(R, R, T[2], T[1]);
        self.e.bin(Bin::CmpEq, T[1], X, Src::K(0x7F80_0000));
        self.e.splat(T[2], 0x7F80_0000);
        self.e.blend(R, R, T[2], T[1]);
        self.e.bin(Bin::FcmpLe, T[1], T[0], Src::V(X)); // 0 <= x (false for NaN)
        self.e.splat(T[2], 0x7FC0_0000);
        self.e.blend(R, T[2], R, T[1]);
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
                    for (w, d) in [(W0, drivers[0]), (W1, drivers[1])] {
                        match d {
                            Some(n) => self.e.un(Un::Mov, w, ft(n)),
                            None => self.e.zero(w),
                        }
                    }
                    w_ready = true;
                }
                let dst_ft = match o.first() {
                    Some(Operand::Ft(n, _)) => ft(*n),
                    _ => T[0],
                };
                match info.op {
                    Op::Fadd | Op::Fmul => {
                        let a = self.fsrc(&o[1], h, T[0]);
                        let b = self.fsrc(&o[2], h, T[1]);
                        let op = if info.op == Op::Fadd {
                            Bin::Fadd
                        } else {
                            Bin::Fmul
                        };
                        self.e.bin(op, dst_ft, a, Src::V(b));
                        self.finish_float(dst_ft, sat);
                    }
                    Op::Fmad => {
                        let a = self.fsrc(&o[1], h, T[0]);
                        let b = self.fsrc(&o[2], h, T[1]);
                        let c = self.fsrc(&o[3], h, T[2]);
                        if fused {
                            self.e.un(Un::Mov, T[3], c);
                            self.e.fma(T[3], a, b);
                            self.e.un(Un::Mov, dst_ft, T[3]);
                        } else {
                            self.e.bin(Bin::Fmul, T[3], a, Src::V(b));
                            self.e.bin(Bin::Fadd, dst_ft, T[3], Src::V(c));
                        }
                        self.finish_float(dst_ft, sat);
                    }
                    Op::Mbyp => {
                        let v = self.fsrc(&o[1], h, T[0]);
                        self.e.un(Un::Mov, dst_ft, v);
                    }
                    Op::Umadd32 => {
                        self.raw_in(&o[1], h, T[0]);
                        self.raw_in(&o[2], h, T[1]);
                        self.raw_in(&o[3], h, T[2]);
                        let cin = o[4] == Operand::P0;
                        if cin {
                            self.e.load(W1, Loc::P0(h));
                            self.e.bin(Bin::And, W1, W1, Src::K(1));
                        }
                        self.e.umadd32(cin.then_some(W1));
                    }
                    Op::Frcp | Op::Fsqrt => {
                        let v = self.fsrc(&o[1], h, T[0]);
                        if info.op == Op::Frcp {
                            self.e.splat(T[1], 0x3F80_0000);
                            self.e.bin(Bin::Fdiv, T[1], T[1], Src::V(v));
                        } else {
                            self.e.un(Un::Sqrt, T[1], v);
                        }
                        self.finish_float(T[1], false);
                        if let Operand::Reg(r, _) = o[0] {
                            self.store_lanes(r, h, T[1], M, 0);
                        }
                    }
                    op if op.is_comparison() => {
                        self.test(ins, h);
                        if o[1] == Operand::P0 {
                            self.e.store(Loc::Scratch(0), FTT);
                            p0_pending = true;
                        }
                    }
                    Op::Mov => {
                        let v = self.raw(&o[1], h, T[0]);
                        self.merge(W0, v, o[0].mods().elems, W0);
                    }
                    Op::Movc => {
                        let t0 = self.raw(&o[3], h, T[0]);
                        self.merge(T[1], t0, o[0].mods().elems, W0);
                        self.e.blend(W0, W0, T[1], FTT);
                        if matches!(o[1], Operand::W(1, _)) {
                            let t1 = self.raw(&o[4], h, T[2]);
                            self.e.blend(W1, W1, t1, FTT);
                        }
                    }
                    Op::MovcWrite => {
                        let e = self.wsrc(&o[1], h, T[0]);
                        if e != T[0] {
                            self.e.un(Un::Mov, T[0], e);
                        }
                        let t0 = self.raw(&o[3], h, T[1]);
                        self.merge(T[2], t0, o[0].mods().elems, T[0]);
                        self.e.blend(W0, T[0], T[2], FTT);
                        let t1 = self.raw(&o[4], h, T[1]);
                        self.e.blend(W1, W1, t1, FTT);
                        if let Operand::Reg(r, _) = o[0] {
                            let slot = Loc::Scratch(2 + writes.len());
                            self.e.store(slot, W0);
                            writes.push((r, 0, slot));
                        }
                    }
                    Op::Write => {
                        let v = self.wsrc(&o[1], h, T[0]);
                        if let Operand::Reg(r, m) = o[0] {
                            let slot = Loc::Scratch(2 + writes.len());
                            self.e.store(slot, v);
                            writes.push((r, m.elems, slot));
                        }
                    }
                    Op::Byp => match info.unit {
                        Unit::BitMask => {
                            let a = self.raw(&o[2], h, T[0]);
                            self.e.un(Un::Mov, ft(0), a);
                            let b = self.raw(&o[3], h, T[1]);
                            self.e.un(Un::Mov, ft(1), b);
                        }
                        _ => {
                            let v = self.raw(&o[1], h, T[0]);
                            self.e.un(Un::Mov, dst_ft, v);
                        }
                    },
                    Op::And | Op::Or | Op::Xor | Op::Nand | Op::Nor | Op::Xnor => {
                        self.e.un(Un::Mov, T[0], ft(2));
                        if o[1] != Operand::Blank {
                            self.e.bin(Bin::And, T[0], T[0], Src::V(ft(1)));
                        }
                        let b = self.raw(&o[4], h, T[1]);
                        if o[3] != Operand::Blank {
                            self.e.bin(Bin::AndNot, T[1], ft(1), Src::V(b));
                        } else if b != T[1] {
                            self.e.un(Un::Mov, T[1], b);
                        }
                        let op = match info.op {
                            Op::And | Op::Nand => Bin::And,
                            Op::Or | Op::Nor => Bin::Or,
                            _ => Bin::Xor,
                        };
                        self.e.bin(op, ft(4), T[0], Src::V(T[1]));
                        if matches!(info.op, Op::Nand | Op::Nor | Op::Xnor) {
                            self.e.ones(T[2]);
                            self.e.bin(Bin::Xor, ft(4), ft(4), Src::V(T[2]));
                        }
                    }
                    Op::Lsl | Op::Shr | Op::Rol | Op::Asr => {
                        let x = self.raw(&o[1], h, T[0]);
                        let n = self.raw(&o[2], h, T[1]);
                        self.e.bin(Bin::And, T[1], n, Src::K(31));
                        match info.op {
                            Op::Lsl => self.e.bin(Bin::Sllv, dst_ft, x, Src::V(T[1])),
                            Op::Shr => self.e.bin(Bin::Srlv, dst_ft, x, Src::V(T[1])),
                            Op::Asr => self.e.bin(Bin::Srav, dst_ft, x, Src::V(T[1])),
                            _ => {
                                self.e.splat(T[2], 32);
                                self.e.bin(Bin::Sub, T[2], T[2], Src::V(T[1]));
                                self.e.bin(Bin::Srlv, T[2], x, Src::V(T[2]));
                                self.e.bin(Bin::Sllv, T[3], x, Src::V(T[1]));
                                self.e.bin(Bin::Or, dst_ft, T[3], Src::V(T[2]));
                            }
                        }
                    }
                    Op::Cps => {
                        let s4 = self.raw(&o[3], h, T[0]);
                        self.e.bin(Bin::AndNot, T[1], ft(4), Src::V(s4));
                        self.e.bin(Bin::And, T[2], ft(4), Src::At(Loc::P0(h)));
                        self.e.bin(Bin::Or, ft(5), T[1], Src::V(T[2]));
                    }
                    Op::Tz | Op::Tnz => {
                        let v = self.raw(&o[1], h, T[0]);
                        self.e.zero(T[1]);
                        self.e.bin(Bin::CmpEq, T[1], T[1], Src::V(v));
                        if info.op == Op::Tnz {
                            self.e.ones(T[2]);
                            self.e.bin(Bin::Xor, T[1], T[1], Src::V(T[2]));
                        }
                        self.e.store(Loc::Scratch(0), T[1]);
                        p0_pending = true;
                    }
                    _ => unreachable!("native() admits only the forms above"),
                }
            }
            for (r, elems, slot) in writes {
                self.e.load(T[0], slot);
                self.store_lanes(r, h, T[0], M, elems);
            }
            if p0_pending {
                // p0 = (p0 & !M) | (new & M), written after the group's reads.
                self.e.load(T[0], Loc::Scratch(0));
                self.e.load(T[1], Loc::P0(h));
                self.e.blend(T[1], T[1], T[0], M);
                self.e.store(Loc::P0(h), T[1]);
                self.site(Site::P0, M);
            }
        }
    }

    /// A write source's value (feed-through, W0/W1 or register) for chunk `h`.
    fn wsrc(&mut self, o: &Operand, h: usize, d: V) -> V {
        match o {
            Operand::W(0, _) => W0,
            Operand::W(_, _) => W1,
            _ => self.raw(o, h, d),
        }
    }

    /// An element of the test's type: `(v >> 8e) & 0xFF`, sign-extended for signed types.
    fn element(&mut self, d: V, v: V, ty: TestType, e: u8) {
        let (width, signed) = match ty {
            TestType::U8 => (8, false),
            TestType::S8 => (8, true),
            TestType::U16 => (16, false),
            TestType::S16 => (16, true),
            _ => {
                if d != v {
                    self.e.un(Un::Mov, d, v);
                }
                return;
            }
        };
        let top = 32 - width * (u32::from(e) + 1);
        self.e.shift_imm(ShImm::Sll, d, v, top as u8);
        let down = if signed { ShImm::Sra } else { ShImm::Srl };
        self.e.shift_imm(down, d, d, (32 - width) as u8);
    }

    /// A test's result mask into FTT.
    fn test(&mut self, ins: &Instr, h: usize) {
        let op = ins.op().unwrap();
        let o = &ins.operands;
        let ty = ins.mods.ty.unwrap_or(TestType::F32);
        let one_operand = matches!(op, Op::Tstz | Op::Tstgz | Op::Tstgez);
        let a0 = self.raw(&o[2], h, T[0]);
        self.element(T[0], a0, ty, o[2].mods().element());
        if one_operand {
            self.e.zero(T[1]);
        } else {
            let b0 = self.raw(&o[3], h, T[1]);
            self.element(T[1], b0, ty, o[3].mods().element());
        }
        let (a, b) = (T[0], T[1]);
        if ty == TestType::F32 {
            // a OP b with IEEE unordered semantics.
            let (x, y, p) = match op {
                Op::Tstz | Op::Tste => (a, b, Bin::FcmpEq),
                Op::Tstne => (a, b, Bin::FcmpNe),
                Op::Tstgz | Op::Tstg => (b, a, Bin::FcmpLt),
                Op::Tstgez | Op::Tstge | Op::Tstmax => (b, a, Bin::FcmpLe),
                Op::Tstl | Op::Tstmin => (a, b, Bin::FcmpLt),
                _ => (a, b, Bin::FcmpLe),
            };
            self.e.bin(p, FTT, x, Src::V(y));
            return;
        }
        if ty == TestType::U32 {
            // Unsigned order through the signed compare: flip the sign bits.
            self.e.bin(Bin::Xor, a, a, Src::K(0x8000_0000));
            self.e.bin(Bin::Xor, b, b, Src::K(0x8000_0000));
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
            0 => self.e.bin(Bin::CmpEq, FTT, a, Src::V(b)),
            1 => self.e.bin(Bin::CmpGt, FTT, a, Src::V(b)),
            _ => self.e.bin(Bin::CmpGt, FTT, b, Src::V(a)),
        }
        if invert {
            self.e.ones(T[2]);
            self.e.bin(Bin::Xor, FTT, FTT, Src::V(T[2]));
        }
    }

    /// The lanes whose condition (0 p0, 1 !p0, 2 true, 3 false) holds, into `d`.
    fn cond_mask(&mut self, d: V, c: i64, h: usize) {
        match c {
            0 => self.e.load(d, Loc::P0(h)),
            1 => {
                self.e.load(d, Loc::P0(h));
                self.e.ones(T[5]);
                self.e.bin(Bin::Xor, d, d, Src::V(T[5]));
            }
            2 => self.e.ones(d),
            _ => self.e.zero(d),
        }
    }

    /// Unsigned `a > k` for a small constant k (lanes all ones when true).
    fn gt_const(&mut self, d: V, a: V, k: u32) {
        self.e.bin(Bin::Xor, d, a, Src::K(0x8000_0000));
        self.e.splat(T[5], k ^ 0x8000_0000);
        self.e.bin(Bin::CmpGt, d, d, Src::V(T[5]));
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
                self.cond_mask(T[0], imm(0), h);
                self.e.bin(Bin::And, T[0], T[0], Src::At(Loc::Pe(h)));
                self.e.bin(Bin::And, T[0], T[0], Src::At(Loc::Lanes(h)));
                self.e.any_or(T[0]);
            }
        }
        for h in 0..chunks::<E>() {
            self.e.load(M, Loc::Lanes(h));
            let (dst, src) = match op {
                Op::Cndend => (o[0].clone(), o[1].clone()),
                Op::Cndlt => (o[1].clone(), o[3].clone()),
                _ => (o[1].clone(), o[2].clone()),
            };
            self.raw_in(&src, h, T[0]);
            // T1 = (S0 == 0)
            self.e.zero(T[1]);
            self.e.bin(Bin::CmpEq, T[1], T[1], Src::V(T[0]));
            // ft0 = new W0, ft1 = new Pe (feed-throughs are free here).
            match op {
                Op::Cndst => {
                    let adj = imm(3) as u32;
                    self.cond_mask(T[2], imm(0), h);
                    self.e.bin(Bin::And, T[2], T[2], Src::V(T[1])); // run
                    self.e.bin(Bin::Add, ft(0), T[0], Src::K(adj));
                    self.e.bin(Bin::AndNot, ft(0), T[2], Src::V(ft(0))); // run ? 0 : S0 + adj
                    self.e.un(Un::Mov, ft(1), T[2]);
                }
                Op::Cndef => {
                    let adj = imm(3) as u32;
                    self.cond_mask(T[2], imm(0), h);
                    self.e.bin(Bin::CmpEq, T[3], T[0], Src::K(1)); // S0 == 1
                    self.e.bin(Bin::And, T[2], T[2], Src::V(T[3])); // b = cond && S0 == 1
                    self.e.bin(Bin::Add, T[3], T[0], Src::K(adj)); // S0 + adj
                    self.e.bin(Bin::AndNot, ft(0), T[2], Src::V(T[0])); // b ? 0 : S0
                    self.e.blend(ft(0), ft(0), T[3], T[1]); // z ? S0 + adj : ...
                    if adj == 0 {
                        self.e.bin(Bin::Or, ft(1), T[1], Src::V(T[2]));
                    } else {
                        self.e.bin(Bin::AndNot, ft(1), T[1], Src::V(T[2]));
                    }
                }
                Op::Cndend => {
                    let adj = imm(2) as u32;
                    self.gt_const(T[2], T[0], adj);
                    self.e.bin(Bin::Sub, T[3], T[0], Src::K(adj));
                    self.e.bin(Bin::And, ft(0), T[3], Src::V(T[2]));
                    self.e.ones(T[4]);
                    self.e.bin(Bin::Xor, ft(1), T[2], Src::V(T[4]));
                }
                Op::Cndlt => {
                    let adj = imm(4) as u32;
                    let exit = self.e.label();
                    let join = self.e.label();
                    self.e.branch_any(exit, false);
                    // Some running lane's condition holds: lanes (cond == literal) at S0 == 0 stop.
                    self.cond_mask(T[2], imm(0), h);
                    if !literal {
                        self.e.ones(T[4]);
                        self.e.bin(Bin::Xor, T[2], T[2], Src::V(T[4]));
                    }
                    self.e.bin(Bin::And, T[2], T[2], Src::V(T[1])); // stop
                    self.e.splat(T[3], adj);
                    self.e.blend(ft(0), T[0], T[3], T[2]);
                    self.e.bin(Bin::AndNot, ft(1), T[2], Src::V(T[1]));
                    self.e.ones(ft(2)); // P0 = 1
                    self.e.jump(join);
                    self.e.bind(exit);
                    self.gt_const(T[2], T[0], adj);
                    self.e.bin(Bin::Sub, T[3], T[0], Src::K(adj));
                    self.e.bin(Bin::And, ft(0), T[3], Src::V(T[2]));
                    self.e.ones(T[4]);
                    self.e.bin(Bin::Xor, ft(1), T[2], Src::V(T[4]));
                    self.e.zero(ft(2)); // P0 = 0
                    self.e.bind(join);
                    self.e.load(T[4], Loc::P0(h));
                    self.e.blend(T[4], T[4], ft(2), M);
                    self.e.store(Loc::P0(h), T[4]);
                    self.site(Site::P0, M);
                }
                _ => unreachable!("native() admits only these conditionals"),
            }
            if let Operand::Reg(r, _) = dst {
                self.store_lanes(r, h, ft(0), M, 0);
            }
            self.e.load(T[4], Loc::Pe(h));
            self.e.blend(T[4], T[4], ft(1), M);
            self.e.store(Loc::Pe(h), T[4]);
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
            self.e.load(T[0], Loc::Lanes(h));
            if !g.ignore_pe {
                self.e.bin(Bin::And, T[0], T[0], Src::At(Loc::Pe(h)));
            }
            self.e.load(T[1], Loc::P0(h));
            // Lanes considered whose predicate holds (any) or fails (all).
            let holds_is_p0 = g.pred == Pred::P0;
            if holds_is_p0 != all {
                self.e.bin(Bin::And, T[0], T[0], Src::V(T[1]));
            } else {
                self.e.bin(Bin::AndNot, T[0], T[1], Src::V(T[0]));
            }
            self.e.any_or(T[0]);
        }
        // any: jump when some lane's predicate holds; all: when none fails.
        self.e.branch_any(target, !all);
    }
}
