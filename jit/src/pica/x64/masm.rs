//! The x86-64 implementation of [`MacroAssembler`]: SSE4.1 sequences for every PICA operation.
//!
//! # Float environment
//!
//! The prologue saves the caller's MXCSR and loads the mode's; every exit restores it. Both
//! loads are skipped when the caller's control bits are the mode's already (F24 RNE called
//! from Rust, whose MXCSR is the default): the status bits (the exception flags) are the
//! caller's to save under both the System V and the Windows x64 conventions, so flags the
//! shader raises may stay set then. Skipping both loads took one-vertex F24 RNE `mvp` from
//! about 216 to 147 ns per vertex on an Intel Xeon (family 6, model 167), thread CPU time.
//!
//! Where the loads stay (F24 RTZ, F32), what they cost depends on the program, measured on
//! the same machine by building the code without them (wrong results, timing only):
//! nothing for `mvp` and `lighting`, about half of a one-vertex `skinning` call (113 -> 62 ns).
//! The mechanism was not found (no hardware counters in that virtual machine), but the
//! programs that suffer are those that use an address register: an `lfence` after the
//! restoring `ldmxcsr` took one-vertex `skinning` from about 120 to 74 ns, `skinning4` 165 ->
//! 117, `lights_loop` 125 -> 78, `branches` 109 -> 85 (`lights8` unchanged), while it cost
//! `mvp` and `lighting` about 12 ns each. So the epilogue fences only after code that uses
//! MOVA, LOOP or relative uniform reads. Loading the mode's value with the exception flags
//! set was also tried and lost (`mvp` 43 -> 100 ns).
//!
//! | mode | MXCSR | arithmetic |
//! |---|---|---|
//! | F24 RTZ | RC = toward zero, no FTZ/DAZ | f32 ops, then [`X64Masm::fixup_rtz`] (`float::f24_fixup_rtz`) |
//! | F24 RNE | RC = nearest, no FTZ/DAZ | f64 ops, integer RNE to 17 bits, then the range fix-up |
//! | F32 | RC = nearest, FTZ, no DAZ | f32 ops, then the F32 fix-up (`float::f32_fixup`) |
//!
//! DAZ is never set because MAX/MIN/SGE/SLT/CMP/LITP must see subnormal inputs unflushed;
//! arithmetic flushes its inputs explicitly ([`X64Masm::flush`]) at the mode's threshold
//! (2^-62 or 2^-126), which also turns `-0` into `+0`.
//!
//! # Code shape
//!
//! Offset 0 is the single-invocation entry, followed by the batch entry (a loop that resets the
//! working registers and calls the body once per row); both `call` the shader *body*, whose
//! exits `ret` with a status in `eax`. Long, repeated sequences (the rounding fix-ups, RSQ, the
//! f64 paths of F24 RNE) are shared subroutines after the body, one per register they work on
//! (`Stub`); their rare cases (overflow, inf, NaN) branch to a slow path inside the
//! subroutine.
//!
//! Nothing calls back into Rust: RCP and RSQ are the float model's documented JIT recipes
//! (`crate::pica::recipes::reciprocal`, shared with the other emitters), EX2 and LG2 its integer
//! algorithms (`crate::pica::recipes::scalar`), emitted as x86-64 code (so the AArch64 backend,
//! which may run under an emulator, faces the same design).

use crate::error::{CompileError, CompileResult};
use crate::host::features::HostFeatures;
use crate::host::x64::abi::{Frame, CALLEE_SAVED};
use crate::host::x64::asm::{Asm, Mem};
use crate::host::x64::int::X64Int;
use crate::host::x64::lanes::{X64Lanes, X128};
use crate::host::x64::regs::*;
use crate::pica::analysis::Guard;
use crate::pica::layout::*;
use crate::pica::masm::{
    BinaryKind, Dest, DotKind, MacroAssembler, ScalarKind, Source, SrcLoc, StubTable, Val,
};
use crate::pica::recipes::reciprocal::{self, LaneSet};
use crate::pica::recipes::scalar;
use crate::pica::recipes::{self, Float, Lanes, Src, ONE, SIGN};
use crate::pica::x64::regs::*;
use crate::pica::x64::rows;
use dynasmrt::DynamicLabel;
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding};
use picajit_interp::pica::isa::{CmpOp, CondOp, RelIndex, Swizzle};

/// The frame of both entries: every callee-saved register (the backend pins them all,
/// `host/x64/regs.rs`), the context pointer in [`CTX`]. The six pushes leave rsp 16-byte
/// aligned minus 8, so inside the body, which the entries `call`, it is aligned, as helper
/// calls need.
const ENTRY_FRAME: Frame<'static> = Frame {
    saved: &CALLEE_SAVED,
    locals: 0,
    context: Some(CTX),
};

/// The batch entry's stack frame holding the working registers: `Registers` from the
/// temporaries to the end (a0, aL, cmp), the output bank in between unused. A multiple of 16
/// so that the body keeps its alignment; the block starts [`WORK_OFFSET`] above rsp, which
/// the six pushes left 16-byte aligned minus 8, so that it is 16-byte aligned itself.
const WORK_FRAME: i32 = (REG_A0 + 16 - REG_TEMP + 8 + 15) & !15;
/// Where the batch entry's working-register block starts, from rsp.
const WORK_OFFSET: i32 = 8;
const _: () = assert!(WORK_OFFSET + REG_A0 + 16 - REG_TEMP <= WORK_FRAME);

/// Round to nearest, all exceptions masked.
const MXCSR_DEFAULT: u32 = 0x1F80;
/// The status bits of MXCSR (exception flags): not compared when deciding to load it.
const MXCSR_STATUS: u32 = 0x3F;
const MXCSR_RZ: u32 = 0x1F80 | 0x6000;
const MXCSR_FTZ: u32 = 0x1F80 | 0x8000;

// Scratch registers (see regs.rs).
const S0: Xmm = Xmm(0);
const S1: Xmm = Xmm(5);
const S2: Xmm = Xmm(6);
const S3: Xmm = Xmm(7);
const S4: Xmm = Xmm(8);
const S5: Xmm = Xmm(9);
const SAVE_A: Xmm = Xmm(11);
const SAVE_B: Xmm = Xmm(12);

/// The general-purpose registers of the integer EX2/LG2 (`crate::pica::recipes::scalar`):
/// rcx second, the count of its variable shifts. r11 is the integer masm's scratch register.
const SCALAR: [Gpr; 8] = [RAX, RCX, RDX, R8, R9, R10, RSI, RDI];

/// The per-vertex emitter's [`Float`] steps for the float recipes (`crate::pica::recipes`),
/// over the 128-bit lane operations (`crate::host::x64::lanes`: four f32 or two f64 lanes of
/// an xmm register). The rounding steps are shared subroutines (`Stub`), the range step a
/// fast path inline with a per-site exit to the slow one.
struct XV<'a> {
    m: &'a mut X64Masm,
}

impl Float for XV<'_> {
    type R = Xmm;
    type H<'b>
        = X64Lanes<'b, X128>
    where
        Self: 'b;

    fn h(&mut self) -> X64Lanes<'_, X128> {
        self.m.lanes()
    }

    fn mode(&self) -> FloatMode {
        self.m.mode
    }

    fn round64(&mut self, d: Xmm) {
        self.m.outline(Stub::RoundF64(d));
    }

    fn range(&mut self, v: Xmm) {
        self.m.fixup_inline(v, None);
    }

    fn rne17(&mut self, v: Xmm) {
        self.m.outline(Stub::FixupRne17(v));
    }

    /// A shared subroutine per register pair (`Stub::F64Binop`), in place on `a`.
    fn binop64(&mut self, d: Xmm, a: Xmm, b: Xmm, mul: bool) {
        debug_assert_eq!(d, a);
        self.m.outline(Stub::F64Binop(a, b, mul));
    }

    /// SSE with FTZ rounds an F32 quotient once and flushes it after rounding, as the model
    /// does (`picajit_interp::pica::float`, "What a JIT must do (F32 mode)").
    fn rcp_f32_through_f64(&self) -> bool {
        false
    }
}

/// Out-of-line subroutines (see [`X64Masm::outline`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stub {
    /// Slow path of the mode's fix-up of `.0` (with `.1`: the MUL variant, see
    /// [`X64Masm::fixup_inline`]).
    FixupSlow(Xmm, Option<Xmm>),
    /// RSQ of lane 0 (flushed) into lane 0.
    Rsq(Xmm),
    /// EX2 of lane 0 (flushed) into lane 0.
    Ex2(Xmm),
    /// LG2 of lane 0 (flushed) into lane 0.
    Lg2(Xmm),
    FixupRne17(Xmm),
    RoundF64(Xmm),
    F64Binop(Xmm, Xmm, bool),
}

/// One annotation: code offset, PICA address, text.
pub type Mark = (usize, u32, String);

/// x86-64 code generator for one program.
pub struct X64Masm {
    a: Asm,
    mode: FloatMode,
    /// The MAX reading (`picajit_interp::pica::float::MaxRule`); the default unless set.
    pub max_rule: MaxRule,
    /// VEX encodings allowed (AVX detected and not masked off).
    avx: bool,
    marks: Vec<Mark>,
    exit_done: DynamicLabel,
    exit_deopt: DynamicLabel,
    exit_budget: DynamicLabel,
    epilogue: DynamicLabel,
    batch_entry: usize,
    stubs: StubTable<Stub, DynamicLabel>,
    /// Per-site exits to slow paths: (site label, label to return to, subroutine).
    slow_sites: Vec<(DynamicLabel, DynamicLabel, Stub)>,
    /// Temporaries and outputs the batch entry clears before each row, and the outputs every
    /// finished row has set (see [`X64Masm::with_batch_zero`]).
    batch_zero: (u16, u16, u16),
    /// Rows of temporaries held in registers since the last join (see [`TempCache`]).
    temp_cache: TempCache,
    /// The body writes or reads an address register (MOVA, LOOP, relative uniform reads):
    /// the epilogue fences after restoring MXCSR (see the module docs).
    indexed: bool,
}

/// Up to three temporaries' full rows in xmm13-xmm15, which nothing else uses: the value
/// each one was last stored with. Valid from a store to the next label the lowering binds
/// (a join of paths; labels inside one instruction's sequence and the return points of
/// slow-path stubs keep it, since every path through them leaves xmm13-xmm15 alone). A
/// read of a cached row is a register copy instead of a load that would wait for the store
/// just made (`mvp` writes r0 one component per instruction, then reads it four times).
#[derive(Clone, Copy, Debug, Default)]
struct TempCache {
    /// Temporary held by each register, and when it was last used.
    slots: [Option<(u8, u32)>; 3],
    clock: u32,
}

impl TempCache {
    const REGS: [Xmm; 3] = [Xmm(13), Xmm(14), Xmm(15)];

    fn clear(&mut self) {
        self.slots = [None; 3];
    }

    fn find(&mut self, temp: u8) -> Option<Xmm> {
        self.clock += 1;
        let clock = self.clock;
        self.slots
            .iter_mut()
            .enumerate()
            .find_map(|(k, s)| match s {
                Some((t, used)) if *t == temp => {
                    *used = clock;
                    Some(Self::REGS[k])
                }
                _ => None,
            })
    }

    /// The register holding `temp`, and whether it holds its row already; otherwise the
    /// least recently used register, now assigned to `temp` (the caller fills it).
    fn slot(&mut self, temp: u8) -> (Xmm, bool) {
        if let Some(r) = self.find(temp) {
            return (r, true);
        }
        let k = (0..3)
            .min_by_key(|&k| self.slots[k].map_or(0, |(_, used)| used))
            .unwrap_or(0);
        self.slots[k] = Some((temp, self.clock));
        (Self::REGS[k], false)
    }
}

fn val(v: Val) -> Xmm {
    VALS[v.0 as usize]
}

/// The MXCSR value of a float mode's arithmetic (both x86-64 emitters load it).
pub(crate) fn mode_mxcsr(mode: FloatMode) -> u32 {
    match mode {
        FloatMode::F24(Rounding::TowardZero) => MXCSR_RZ,
        FloatMode::F24(Rounding::NearestEven) => MXCSR_DEFAULT,
        FloatMode::F32 => MXCSR_FTZ,
    }
}

/// `shufps` immediate for a PICA component selector (PICA keeps lane x in the top bits, x86 in
/// the bottom ones).
pub fn shuffle_imm(s: Swizzle) -> u8 {
    let l = s.lanes();
    l[0] | (l[1] << 2) | (l[2] << 4) | (l[3] << 6)
}

impl X64Masm {
    /// A code generator for `mode`, allowed to use `features`.
    pub fn new(mode: FloatMode, features: HostFeatures) -> X64Masm {
        let mut a = Asm::new();
        let exit_done = a.new_label();
        let exit_deopt = a.new_label();
        let exit_budget = a.new_label();
        let epilogue = a.new_label();
        X64Masm {
            avx: features.contains(HostFeatures::AVX),
            epilogue,
            batch_entry: 0,
            a,
            mode,
            max_rule: MaxRule::default(),
            marks: Vec::new(),
            exit_done,
            exit_deopt,
            exit_budget,
            stubs: StubTable::default(),
            slow_sites: Vec::new(),
            batch_zero: (0xFFFF, 0xFFFF, 0xFFFF),
            temp_cache: TempCache::default(),
            indexed: false,
        }
    }

    /// Let the batch entry clear only the temporaries the program reads and the outputs it
    /// writes before each row (default: all sixteen of each). Every other temporary is
    /// written before it is read or never read, and the caller clears the other outputs it
    /// wants (`Emitted::batch_outputs_zeroed`): clearing 32 registers per row was a tenth of
    /// a one-vertex `mvp` run.
    ///
    /// `temps` and `outputs` are the registers cleared; `set` the outputs a finished row has
    /// set (cleared, or written whole by the entry block, which every finished row runs).
    pub fn with_batch_zero(mut self, temps: u16, outputs: u16, set: u16) -> X64Masm {
        self.batch_zero = (temps, outputs, set);
        self
    }

    /// Save the caller's MXCSR in the context and load `mxcsr` (at `m` in the constant pool)
    /// unless the caller's control bits are `mxcsr` already (see the module docs). Clobbers
    /// rcx.
    fn enter_float_env(a: &mut Asm, mxcsr: u32, m: Mem) {
        let skip = a.new_label();
        a.stmxcsr(CTX, CTX_SAVED_MXCSR);
        a.mov_rm32(RCX, CTX, CTX_SAVED_MXCSR);
        a.and_ri32(RCX, !MXCSR_STATUS as i32);
        a.cmp_ri32(RCX, mxcsr as i32);
        a.je(skip);
        a.ldmxcsr(m);
        a.bind(skip);
    }

    fn is_rne(&self) -> bool {
        self.mode == FloatMode::F24(Rounding::NearestEven)
    }

    fn c(&mut self, v: u32) -> Mem {
        self.a.splat(v)
    }

    fn mov(&mut self, d: Xmm, s: Xmm) {
        if d != s {
            self.a.movaps(d, s);
        }
    }

    /// The lane operations of this code: the 128-bit form, VEX where AVX is allowed.
    fn lanes(&mut self) -> X64Lanes<'_, X128> {
        X64Lanes::xmm(&mut self.a, self.avx)
    }

    /// The recipes' view of this emitter (`crate::pica::recipes`).
    fn xv(&mut self) -> XV<'_> {
        XV { m: self }
    }

    /// Jump to `l` if any lane of the mask `m` is set (a shared slow path). Clobbers rax.
    fn branch_any(&mut self, m: Xmm, l: DynamicLabel) {
        self.lanes().mask_bits(RAX, m);
        self.a.test_rr32(RAX, RAX);
        self.a.jne(l);
    }

    /// Rule 1 of the float model: lanes below the mode's smallest normal (and -0) become +0.
    pub fn flush(&mut self, v: Xmm) {
        let mode = self.mode;
        recipes::flush(&mut self.lanes(), mode, v, S0);
    }

    /// The mode's fix-up of an arithmetic result (F24: `float::f24_fixup_rtz`, also the range
    /// step of the RNE paths, whose values are on the 17-bit grid already; F32:
    /// `float::f32_fixup`). In place on `v`; with `mul = Some(b)` the MUL variant: the raw
    /// product is in S5, `v` still holds the left operand (needed, with `b`, by the inf × 0
    /// repair of the slow path) and receives the result. Clobbers S0-S2, rax.
    ///
    /// The fast path is inline; the rare lanes (F24: overflow, inf, NaN, all at or above 2^64
    /// in magnitude; F32: NaN, overflow to inf being right already) leave through a
    /// two-instruction stub per site that calls the shared slow subroutine
    /// (`Stub::FixupSlow`) and jumps back. Calling a subroutine for every rounding cost a
    /// call and a return per result: a quarter of the samples of one-vertex `mvp` runs.
    fn fixup_inline(&mut self, v: Xmm, mul: Option<Xmm>) {
        let slow = self.a.new_label();
        let back = self.a.new_label();
        let src = if mul.is_some() { S5 } else { v };
        let mode = self.mode;
        recipes::fixup_fast_test(&mut self.lanes(), mode, src, [S0, S1]);
        self.branch_any(S0, slow);
        recipes::fixup_fast(&mut self.lanes(), mode, v, src, [S0, S1]);
        self.a.bind(back);
        self.slow_sites.push((slow, back, Stub::FixupSlow(v, mul)));
    }

    /// Slow path of [`Self::fixup_inline`] (shared subroutine), from the same registers.
    fn body_fixup_slow(&mut self, v: Xmm, mul: Option<Xmm>) {
        let src = if mul.is_some() { S5 } else { v };
        let mode = self.mode;
        recipes::fixup_slow(
            &mut self.lanes(),
            mode,
            v,
            src,
            mul.map(|b| (v, b)),
            [S0, S1, S2],
        );
    }

    /// Round two f64 lanes to 17 significant bits, nearest-even, on their bit patterns.
    /// Clobbers S0.
    fn body_round_f64_rne17(&mut self, d: Xmm) {
        recipes::round_f64_rne17(&mut self.lanes(), d, S0);
    }

    /// F24 RNE: round the f32 lanes of `v` (exact values) to 17 bits nearest-even, then the range
    /// rules. Clobbers S0-S3.
    fn body_fixup_rne17_f32(&mut self, v: Xmm) {
        recipes::rne17_f32(&mut self.lanes(), v, [S0, S3]);
        self.fixup_rtz(v);
    }

    /// `float::f24_fixup_rtz` on four lanes, in place (see `Self::fixup_inline`).
    pub fn fixup_rtz(&mut self, v: Xmm) {
        debug_assert!(self.mode != FloatMode::F32);
        self.fixup_inline(v, None);
    }

    /// RSQ of the flushed lane 0 of `v` into lane 0 (`recipes::reciprocal::rsq`, the body of
    /// `Stub::Rsq`). Clobbers S0-S5, rax.
    fn body_rsq(&mut self, v: Xmm) {
        reciprocal::rsq(
            &mut self.xv(),
            LaneSet::First,
            v,
            v,
            [S1, S2, S3, S4, S5, S5],
        );
    }

    /// Call the shared subroutine for `stub`, creating it on first use (see [`StubTable`]).
    fn outline(&mut self, stub: Stub) {
        let a = &mut self.a;
        let l = self.stubs.label(stub, || a.new_label());
        self.a.call_label(l);
    }

    /// Emit the per-site stubs and every requested subroutine (subroutine bodies may add
    /// both).
    fn emit_stubs(&mut self) {
        if self.stubs.has_pending() || !self.slow_sites.is_empty() {
            self.marks
                .push((self.a.offset().0, u32::MAX, "shared subroutines".into()));
        }
        let mut k = 0;
        loop {
            while let Some(&(site, back, stub)) = self.slow_sites.get(k) {
                self.a.bind(site);
                self.outline(stub);
                self.a.jmp(back);
                k += 1;
            }
            let Some((stub, l)) = self.stubs.next_pending() else {
                break;
            };
            self.a.bind(l);
            match stub {
                Stub::FixupSlow(v, mul) => self.body_fixup_slow(v, mul),
                Stub::FixupRne17(v) => self.body_fixup_rne17_f32(v),
                Stub::RoundF64(v) => self.body_round_f64_rne17(v),
                Stub::Rsq(v) => self.body_rsq(v),
                Stub::Ex2(v) | Stub::Lg2(v) => {
                    self.a.movd_rx(SCALAR[0], v);
                    let e = &mut X64Int::new(&mut self.a, R11);
                    if matches!(stub, Stub::Ex2(_)) {
                        scalar::ex2(e, self.mode, SCALAR);
                    } else {
                        scalar::lg2(e, self.mode, SCALAR);
                    }
                    self.a.movd_xr(v, SCALAR[0]);
                }
                Stub::F64Binop(a, b, mul) => self.body_f64_binop(a, b, mul),
            }
            self.a.ret();
        }
    }

    /// F24 RNE lane-wise `a = round(a op b)` through f64 (`recipes::f64_binop`; the body of
    /// `Stub::F64Binop`).
    fn body_f64_binop(&mut self, a: Xmm, b: Xmm, mul: bool) {
        recipes::f64_binop(&mut self.xv(), a, a, b, mul, [S1, S2, S3, S4]);
    }

    /// Lane-wise add of two flushed operands (or mode results) into `a`.
    fn add_flushed(&mut self, a: Xmm, b: Xmm) {
        recipes::add(&mut self.xv(), a, a, b);
    }

    /// `float::mul` lane-wise: `a = mul(a, b)`. Clobbers `b` (flushed in place).
    fn mul_full(&mut self, a: Xmm, b: Xmm) {
        self.flush(a);
        self.flush(b);
        if self.is_rne() {
            self.lanes().ordered(S5, a, b);
            self.xv().binop64(a, a, b, true);
            recipes::inf_times_zero(&mut self.lanes(), a, a, S5, S0);
        } else {
            // The product goes to S5; the fix-up writes the result over `a`, whose old value
            // (with `b`) its slow path (taken for any NaN) needs to repair inf × 0.
            self.lanes().mul_f32(S5, a, Src::R(b));
            self.fixup_inline(a, Some(b));
        }
    }

    /// Pairwise sum of the four lanes of `p` (mode results), broadcast: `(p0+p1)+(p2+p3)`
    /// (`recipes::pairwise_sum`).
    fn pairwise_sum(&mut self, p: Xmm) {
        recipes::pairwise_sum(&mut self.xv(), p, [S1, S2]);
    }

    fn src_mem(&mut self, loc: SrcLoc) -> (Mem, bool) {
        match loc {
            SrcLoc::Input(i) => (Mem::Base(INPUT, VEC_SIZE * i as i32), false),
            SrcLoc::Temp(i) => (Mem::Base(REGS, REG_TEMP + VEC_SIZE * i as i32), true),
            SrcLoc::Const {
                index,
                rel: RelIndex::None,
            } => (
                Mem::Base(UNIFORMS, UNI_FLOAT + VEC_SIZE * index as i32),
                true,
            ),
            SrcLoc::Const { index, rel } => {
                self.indexed = true;
                let off = match rel {
                    RelIndex::A0X => REG_A0,
                    RelIndex::A0Y => REG_A0 + 4,
                    _ => REG_AL,
                };
                rows::rel_row_offset(&mut self.a, RAX, REGS, off, index as i32);
                (Mem::Index(UNIFORMS, RAX, UNI_FLOAT), true)
            }
        }
    }

    fn dst_mem(d: &Dest) -> (Mem, bool) {
        if d.output {
            (Mem::Base(OUTPUT, VEC_SIZE * d.index as i32), false)
        } else {
            (Mem::Base(REGS, REG_TEMP + VEC_SIZE * d.index as i32), true)
        }
    }

    /// Store 0/1 flags from bit `xbit` of `x` and bit `ybit` of `y` into cmp.x / cmp.y.
    fn store_flags(&mut self, x: Gpr, xbit: u8, y: Gpr, ybit: u8) {
        let a = &mut self.a;
        if xbit > 0 {
            a.shr_ri32(x, xbit);
        }
        a.and_ri32(x, 1);
        if ybit > 0 {
            a.shr_ri32(y, ybit);
        }
        a.and_ri32(y, 1);
        a.shl_ri32(y, 8);
        a.or_rr32(x, y);
        a.mov_mr16(REGS, REG_CMP, x);
    }
}

impl MacroAssembler for X64Masm {
    type Label = DynamicLabel;

    fn new_label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        // Other paths join here: nothing is known about the registers' rows.
        self.temp_cache.clear();
        self.a.bind(l);
    }

    fn mark(&mut self, pc: u32, text: &str) {
        self.marks.push((self.a.offset().0, pc, text.to_string()));
    }

    fn prologue(&mut self) {
        let mxcsr = mode_mxcsr(self.mode);
        let m = self.c(mxcsr);
        let body = self.a.new_label();
        let epilogue = self.epilogue;
        // Single-invocation entry (offset 0).
        let a = &mut self.a;
        ENTRY_FRAME.enter(a);
        a.mov_rm64(REGS, CTX, CTX_REGS);
        a.mov_rm64(INPUT, CTX, CTX_INPUT);
        a.mov_rm64(OUTPUT, CTX, CTX_OUTPUT);
        a.mov_rm64(UNIFORMS, CTX, CTX_UNIFORMS);
        a.mov_rm64(BUDGET, CTX, CTX_BUDGET);
        Self::enter_float_env(a, mxcsr, m);
        a.call_label(body);
        a.jmp(epilogue);

        // Batch entry: one vertex-shader invocation per row, each from the reset state. The
        // working registers (temporaries, a0, aL, cmp) live in the entry's own stack frame,
        // not in `ctx.regs`: nothing of them is read back, and each row clears what it reads,
        // so the caller needs no register block (see `WORK_FRAME`).
        a.align16();
        self.batch_entry = a.offset().0;
        let top = a.new_label();
        let finished = a.new_label();
        let stop = a.new_label();
        ENTRY_FRAME.enter(a);
        a.sub_ri64(RSP, WORK_FRAME);
        a.mov_rr64(REGS, RSP);
        a.sub_ri64(REGS, REG_TEMP - WORK_OFFSET);
        a.mov_rm64(UNIFORMS, CTX, CTX_UNIFORMS);
        Self::enter_float_env(a, mxcsr, m);
        a.bind(top);
        a.mov_rm64(RAX, CTX, CTX_BATCH_DONE);
        a.cmp_rm64(RAX, CTX, CTX_BATCH_COUNT);
        a.jae(finished);
        a.shl_ri64(RAX, 8);
        a.mov_rm64(INPUT, CTX, CTX_BATCH_INPUT);
        a.add_rr64(INPUT, RAX);
        a.mov_rm64(OUTPUT, CTX, CTX_BATCH_OUTPUT);
        a.add_rr64(OUTPUT, RAX);
        a.xorps(S0, S0);
        let (temps, outputs, _) = self.batch_zero;
        for i in 0..16 {
            if outputs & (1 << i) != 0 {
                a.store_vec(Mem::Base(OUTPUT, VEC_SIZE * i), S0, false);
            }
            if temps & (1 << i) != 0 {
                a.store_vec(Mem::Base(REGS, REG_TEMP + VEC_SIZE * i), S0, true);
            }
        }
        a.store_vec(Mem::Base(REGS, REG_A0), S0, false);
        a.mov_rm64(BUDGET, CTX, CTX_BUDGET);
        a.call_label(body);
        a.test_rr32(RAX, RAX);
        a.jne(stop);
        a.mov_rm64(RAX, CTX, CTX_BUDGET);
        a.sub_rr64(RAX, BUDGET);
        a.add_mr64(CTX, CTX_BATCH_INSTRUCTIONS, RAX);
        a.add_mi64(CTX, CTX_BATCH_DONE, 1);
        a.jmp(top);
        a.bind(finished);
        a.xor_rr32(RAX, RAX);
        a.bind(stop);
        // `add` leaves eax (the status) alone.
        a.add_ri64(RSP, WORK_FRAME);
        a.jmp(epilogue);

        a.align16();
        a.bind(body);
    }

    fn charge_budget(&mut self, n: u32) {
        let l = self.exit_budget;
        self.a.sub_ri64(BUDGET, n as i32);
        self.a.jb(l);
    }

    fn jump(&mut self, target: DynamicLabel) {
        self.a.jmp(target);
    }

    fn branch(&mut self, guard: Guard, target: DynamicLabel) {
        let a = &mut self.a;
        match guard {
            Guard::Cond(c) => match c.op {
                CondOp::X => {
                    a.cmp_mi8(REGS, REG_CMP, c.ref_x as u8);
                    a.je(target);
                }
                CondOp::Y => {
                    a.cmp_mi8(REGS, REG_CMP + 1, c.ref_y as u8);
                    a.je(target);
                }
                CondOp::And => {
                    a.cmp_mi16(REGS, REG_CMP, c.ref_x as u16 | (c.ref_y as u16) << 8);
                    a.je(target);
                }
                CondOp::Or => {
                    a.cmp_mi8(REGS, REG_CMP, c.ref_x as u8);
                    a.je(target);
                    a.cmp_mi8(REGS, REG_CMP + 1, c.ref_y as u8);
                    a.je(target);
                }
            },
            Guard::Bool { b, value } => {
                a.test_mi16(UNIFORMS, UNI_BOOL, 1 << (b & 15));
                if value {
                    a.jne(target);
                } else {
                    a.je(target);
                }
            }
        }
    }

    fn loop_init(&mut self, int: u8, slot: u8) {
        self.indexed = true;
        let counter = (CTX, CTX_LOOP_COUNTERS + 4 * slot as i32);
        rows::loop_init(&mut self.a, UNIFORMS, int, (REGS, REG_AL), counter);
    }

    fn loop_step(&mut self, int: u8, slot: u8, again: DynamicLabel) {
        let counter = (CTX, CTX_LOOP_COUNTERS + 4 * slot as i32);
        rows::loop_step(&mut self.a, UNIFORMS, int, (REGS, REG_AL), counter, again);
    }

    fn exit_end(&mut self) {
        let l = self.exit_done;
        self.a.jmp(l);
    }

    fn exit_deopt(&mut self, pc: u32) {
        let l = self.exit_deopt;
        self.a.mov_mi32(CTX, CTX_DEOPT_PC, pc as i32);
        self.a.jmp(l);
    }

    fn load(&mut self, dst: Val, src: &Source) {
        let d = val(dst);
        let cached = match src.loc {
            SrcLoc::Temp(i) => self.temp_cache.find(i),
            _ => None,
        };
        if let Some(c) = cached {
            self.a.movaps(d, c);
        } else {
            let (m, aligned) = self.src_mem(src.loc);
            if aligned {
                self.a.movaps(d, m);
            } else {
                self.a.movups(d, m);
            }
        }
        if src.swizzle != Swizzle::IDENTITY {
            self.a.shufps(d, d, shuffle_imm(src.swizzle));
        }
        if src.negate {
            let s = self.c(SIGN);
            self.a.xorps(d, s);
        }
    }

    fn store(&mut self, dst: &Dest, v: Val) {
        let s = val(v);
        let (m, aligned) = Self::dst_mem(dst);
        let mask = dst.mask.0 & 0xF;
        if !dst.output && mask != 0 {
            // Temporaries: the whole row goes through its cache register and is stored as
            // one 16-byte write, so later reads of the row (cached or not) never wait on a
            // store that covers only part of it.
            let (c, hit) = self.temp_cache.slot(dst.index);
            if mask == 0xF {
                self.a.movaps(c, s);
            } else {
                if !hit {
                    self.a.movaps(c, m);
                }
                let imm = (0..4).fold(0u8, |acc, l| acc | ((mask >> (3 - l)) & 1) << l);
                self.a.blendps(c, s, imm);
            }
            self.a.store_vec(m, c, aligned);
            return;
        }
        match mask {
            0 => {}
            0xF => self.a.store_vec(m, s, aligned),
            0x8 => self.a.store_ss(m, s),
            // Outputs are never read by the program: partial masks store only their lanes
            // (mask bit 3 is lane 0, x) instead of loading the row to blend into it, which
            // stalled on store forwarding after a write to another part of the same row
            // (`mvp`: four one-component DPs into o0).
            mask => {
                let Mem::Base(b, o) = m else {
                    unreachable!("destinations are base + offset")
                };
                let lane = |l: u8| (mask >> (3 - l)) & 1 != 0;
                if lane(0) && lane(1) {
                    self.a.store_lo64(b, o, s);
                } else if lane(0) {
                    self.a.store_ss(m, s);
                } else if lane(1) {
                    self.a.store_lane(b, o + 4, s, 1);
                }
                if lane(2) && lane(3) {
                    self.a.store_hi64(b, o + 8, s);
                } else if lane(2) {
                    self.a.store_lane(b, o + 8, s, 2);
                } else if lane(3) {
                    self.a.store_lane(b, o + 12, s, 3);
                }
            }
        }
    }

    fn binary(&mut self, kind: BinaryKind, dst: Val, a: Val, b: Val) {
        let (d, x, y) = (val(dst), val(a), val(b));
        match kind {
            BinaryKind::Add => {
                self.flush(x);
                self.flush(y);
                self.add_flushed(x, y);
                self.mov(d, x);
            }
            BinaryKind::Mul => {
                self.mul_full(x, y);
                self.mov(d, x);
            }
            BinaryKind::Max => {
                let rule = self.max_rule;
                recipes::max(&mut self.lanes(), rule, x, x, y, S0);
                self.mov(d, x);
            }
            BinaryKind::Min => {
                self.lanes().min_f32(x, x, Src::R(y));
                self.mov(d, x);
            }
            BinaryKind::Sge | BinaryKind::Slt => {
                let slt = kind == BinaryKind::Slt;
                recipes::set_if(&mut self.lanes(), slt, d, x, y, S0);
            }
        }
    }

    fn mad(&mut self, dst: Val, a: Val, b: Val, c: Val) {
        let (d, x, y, z) = (val(dst), val(a), val(b), val(c));
        self.mul_full(x, y);
        self.flush(z);
        self.add_flushed(x, z);
        self.mov(d, x);
    }

    fn dot(&mut self, kind: DotKind, dst: Val, a: Val, b: Val) {
        let (d, x, y) = (val(dst), val(a), val(b));
        if kind == DotKind::Dph {
            let one = self.a.constant([0, 0, 0, ONE]);
            self.a.blendps(x, one, 0b1000);
        }
        self.mul_full(x, y);
        if kind == DotKind::Dp3 {
            let keep = self.a.constant([!0, !0, !0, 0]);
            self.a.andps(x, keep);
        }
        self.pairwise_sum(x);
        self.mov(d, x);
    }

    fn dst(&mut self, dst: Val, a: Val, b: Val) {
        let (d, x, y) = (val(dst), val(a), val(b));
        self.a.movaps(SAVE_A, x);
        self.a.movaps(SAVE_B, y);
        self.mul_full(x, y);
        recipes::dst::dst(&mut self.lanes(), x, SAVE_A, SAVE_B);
        self.mov(d, x);
    }

    fn flr(&mut self, dst: Val, a: Val) {
        let (d, x) = (val(dst), val(a));
        self.flush(x);
        recipes::flr(&mut self.xv(), x, x);
        self.mov(d, x);
    }

    fn scalar(&mut self, kind: ScalarKind, dst: Val, a: Val) {
        let (d, x) = (val(dst), val(a));
        match kind {
            // The recipes compute lane 0 and, alongside, whatever the other lanes hold:
            // with the other components there (a zero's inf, a negative value's NaN) the
            // fix-up took its slow path on most calls (one-vertex F32 `lighting` 148 -> 201
            // ns), so lane 0 is broadcast first.
            ScalarKind::Rcp => {
                self.flush(x);
                self.a.shufps(x, x, 0);
                reciprocal::rcp(&mut self.xv(), LaneSet::First, S3, x, [S4, S5, S1]);
                self.a.pshufd(x, S3, 0);
            }
            ScalarKind::Rsq => {
                self.flush(x);
                self.a.shufps(x, x, 0);
                self.outline(Stub::Rsq(x));
                self.a.shufps(x, x, 0);
            }
            ScalarKind::Ex2 => {
                self.flush(x);
                self.outline(Stub::Ex2(x));
                self.a.shufps(x, x, 0);
            }
            ScalarKind::Lg2 => {
                self.flush(x);
                self.outline(Stub::Lg2(x));
                self.a.shufps(x, x, 0);
            }
        }
        self.mov(d, x);
    }

    fn litp(&mut self, dst: Val, a: Val) {
        let (d, x) = (val(dst), val(a));
        recipes::lit::litp(&mut self.lanes(), S1, S3, x, [S2, S3]);
        self.a.movmskps(RAX, S3);
        self.a.mov_rr64(RCX, RAX);
        self.store_flags(RAX, 0, RCX, 3);
        self.a.movaps(d, S1);
    }

    fn mova(&mut self, a: Val, x: bool, y: bool) {
        self.indexed = true;
        let v = val(a);
        recipes::convert::mova(&mut self.lanes(), S1, v, S2);
        if x {
            self.a.movd_mx(REGS, REG_A0, S1);
        }
        if y {
            self.a.pextrd(RAX, S1, 1);
            self.a.mov_mr32(REGS, REG_A0 + 4, RAX);
        }
    }

    fn cmp(&mut self, a: Val, b: Val, x: CmpOp, y: CmpOp) {
        let (va, vb) = (val(a), val(b));
        if recipes::compare::cmp_mask(&mut self.lanes(), x, S1, va, vb) {
            self.a.movmskps(RAX, S1);
        } else {
            self.a.mov_ri32(RAX, 1);
        }
        if recipes::compare::cmp_mask(&mut self.lanes(), y, S2, va, vb) {
            self.a.movmskps(RCX, S2);
            self.store_flags(RAX, 0, RCX, 1);
        } else {
            self.a.mov_ri32(RCX, 1);
            self.store_flags(RAX, 0, RCX, 0);
        }
    }

    fn set_emit(&mut self, vtx: u8, primitive: bool, winding: bool) {
        let v = vtx as i32 | (primitive as i32) << 8 | (winding as i32) << 16;
        self.a.mov_mi32(CTX, CTX_SETEMIT, v);
    }

    fn emit_vertex(&mut self, pc: u32) {
        let ok = self.a.new_label();
        let a = &mut self.a;
        a.mov_rm32(RAX, CTX, CTX_EMIT_LEN);
        a.cmp_rm32(RAX, CTX, CTX_EMIT_CAP);
        a.jb(ok);
        self.exit_deopt(pc);
        let a = &mut self.a;
        a.bind(ok);
        a.imul_rri32(RAX, RAX, EMIT_RECORD_SIZE);
        a.add_rm64(RAX, CTX, CTX_EMIT_BUF);
        for i in 0..16 {
            a.movups(S0, Mem::Base(OUTPUT, VEC_SIZE * i));
            a.store_vec(Mem::Base(RAX, EMIT_RECORD_OUTPUTS + VEC_SIZE * i), S0, true);
        }
        // slot, primitive and winding in one store: SETEMIT keeps them as the first three
        // bytes of `setemit` (fourth byte 0), the record as three bytes followed by padding.
        a.mov_rm32(RCX, CTX, CTX_SETEMIT);
        a.and_ri32(RCX, 0x00FF_FF03);
        a.mov_mr32(RAX, EMIT_RECORD_FLAGS, RCX);
        a.add_mi32(CTX, CTX_EMIT_LEN, 1);
        // Swap banks by swapping pointers; the Rust side sorts out which buffer is which.
        a.mov_rm64(RCX, CTX, CTX_OTHER_BANK);
        a.mov_mr64(CTX, CTX_OTHER_BANK, OUTPUT);
        a.mov_rr64(OUTPUT, RCX);
    }

    fn finish(mut self) -> CompileResult<crate::pica::masm::Emitted> {
        let (done, deopt, budget) = (self.exit_done, self.exit_deopt, self.exit_budget);
        let epilogue = self.epilogue;
        // Exits of the body return to whichever entry called it, status in eax.
        let a = &mut self.a;
        a.bind(done);
        a.mov_ri32(RAX, Status::Done as i32);
        a.ret();
        a.bind(budget);
        a.mov_ri32(RAX, Status::Budget as i32);
        a.ret();
        a.bind(deopt);
        a.mov_ri32(RAX, Status::Deopt as i32);
        a.ret();
        a.bind(epilogue);
        a.mov_mr64(CTX, CTX_BUDGET, BUDGET);
        a.mov_mr64(CTX, CTX_OUTPUT, OUTPUT);
        let kept = a.new_label();
        a.mov_rm32(RCX, CTX, CTX_SAVED_MXCSR);
        a.and_ri32(RCX, !MXCSR_STATUS as i32);
        a.cmp_ri32(RCX, mode_mxcsr(self.mode) as i32);
        a.je(kept);
        a.ldmxcsr(Mem::Base(CTX, CTX_SAVED_MXCSR));
        if self.indexed {
            a.lfence();
        }
        a.bind(kept);
        ENTRY_FRAME.ret(a);
        self.emit_stubs();
        let (code, code_len) = self.a.finish().map_err(CompileError::Internal)?;
        Ok(crate::pica::masm::Emitted {
            code,
            marks: self.marks,
            code_len,
            batch_entry: self.batch_entry,
            batch_outputs_zeroed: self.batch_zero.2,
        })
    }
}
