//! The `MacroAssembler` trait: what the lowering (`lower/`, through its scalar shape
//! `lower/scalar.rs`) asks a one-invocation backend to emit, in PICA vocabulary.
//!
//! Each method is one PICA-level operation (a swizzled/negated source load, a masked store, a
//! sanitised multiply, a dot product, a flag-setting compare, a loop step, an exit…). A backend
//! chooses its own host sequence for each: `shufps` or `tbl`, `blendps` or `bsl`, MXCSR or FPCR
//! rounding. The lowering never names a host register; it works on a few abstract *value slots*
//! ([`Val`]) and on labels.
//!
//! # Contract for implementations
//!
//! * Value slots `Val(0)..Val(4)` hold four f32 lanes. A slot's contents survive until
//!   the slot is written again or the next label is bound / branch is taken; the lowering never
//!   keeps values across PICA instructions, so a backend may cache PICA registers in host
//!   registers as long as it writes them back before every `bind`, `jump`, `branch`,
//!   `loop_step`, exit and `emit_vertex` (block boundaries).
//! * Arithmetic methods take `(dst, a, b…)`. The lowering always passes `dst == a`; a backend
//!   with destructive two-operand forms (x64 SSE) may rely on that, a three-operand ISA
//!   (NEON) ignores it.
//! * Float results must equal `picajit_interp::pica::float` for the backend's
//!   [`FloatMode`](picajit_interp::pica::float::FloatMode) bit for bit, including `-0 → +0`, NaN
//!   canonicalisation, input flushing and `inf × 0 = +0`.
//!   MAX/MIN/SGE/SLT/CMP/LITP compare raw values (no flush, even with flush-to-zero enabled).
//! * Control flow: `branch` jumps when the guard holds and falls through otherwise.
//!   `charge_budget(n)` subtracts `n` from the remaining budget and leaves with status
//!   [`crate::pica::layout::Status::Budget`] when fewer than `n` instructions were left.
//!
//! The trait is object-safe-free on purpose (generic `Label`), so each backend uses its native
//! label type (dynasm `DynamicLabel` for both x64 and AArch64).

use crate::error::CompileResult;
use crate::pica::analysis::Guard;
use picajit_interp::pica::isa::{CmpOp, RelIndex, Swizzle, WriteMask};

/// An abstract vector value slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Val(pub u8);

/// Where a source operand lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrcLoc {
    /// v0-v15.
    Input(u8),
    /// r0-r15.
    Temp(u8),
    /// c0-c95, plus the address register added to the index (seed 000 relative addressing:
    /// an offset outside -128..=127 is ignored, the sum is masked with 0x7F; the uniform table
    /// has 128 rows, so no range check is needed).
    Const {
        /// Base index.
        index: u8,
        /// Address register.
        rel: RelIndex,
    },
}

/// A source operand with its descriptor applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// Register.
    pub loc: SrcLoc,
    /// Component selector.
    pub swizzle: Swizzle,
    /// Flip the sign bit of every lane (no other change: `-0` and `-NaN` patterns appear).
    pub negate: bool,
}

/// A destination register and its write mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dest {
    /// o registers (true) or r registers (false).
    pub output: bool,
    /// Register index 0-15.
    pub index: u8,
    /// Lanes written.
    pub mask: WriteMask,
}

/// Lane-wise two-source arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    /// `float::add`
    Add,
    /// `float::mul`
    Mul,
    /// `float::max` (raw compare, `a > b ? a : b`)
    Max,
    /// `float::min` (raw compare, `a < b ? a : b`)
    Min,
    /// `float::sge`
    Sge,
    /// `float::slt`
    Slt,
}

/// Dot products (result broadcast to all lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotKind {
    /// `float::dp3`
    Dp3,
    /// `float::dp4`
    Dp4,
    /// `float::dph` (`a.w` replaced by 1.0)
    Dph,
}

/// Scalar functions of lane x, broadcast to all lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// `float::rcp`
    Rcp,
    /// `float::rsq`
    Rsq,
    /// `float::ex2`
    Ex2,
    /// `float::lg2`
    Lg2,
}

/// What the lowering needs from a one-invocation backend.
pub trait MacroAssembler {
    /// A code position that can be bound once and jumped to.
    type Label: Copy;

    /// A new unbound label.
    fn new_label(&mut self) -> Self::Label;
    /// Bind `l` at the current position (a block boundary).
    fn bind(&mut self, l: Self::Label);
    /// Record that the code that follows implements PICA instruction `pc` (for disassembly).
    fn mark(&mut self, pc: u32, text: &str);

    /// Emit the entry points, then start the shader body (everything emitted afterwards).
    ///
    /// The runtime expects two entries taking a `*mut JitContext` and returning a
    /// [`crate::pica::layout::Status`] (`Emitted::batch_entry` gives the second one's offset):
    /// * offset 0, one invocation on `JitContext::{regs, input, output}`;
    /// * the batch entry, which for each row `k < batch_count` (starting at `batch_done`)
    ///   points inputs/outputs at row `k`, zeroes the outputs, temporaries, a0, aL and cmp,
    ///   runs the body with the full budget, adds the instructions used to
    ///   `batch_instructions` and increments `batch_done`; it returns the first non-done
    ///   status (leaving `batch_done` at that row) or done.
    ///
    /// Both save what the host ABI requires and install the mode's float environment (saving
    /// the caller's in `JitContext::saved_mxcsr` or the backend's equivalent).
    fn prologue(&mut self);
    /// Subtract `n` executed instructions from the budget; leave with the budget status if fewer
    /// than `n` were left.
    fn charge_budget(&mut self, n: u32);
    /// Unconditional jump.
    fn jump(&mut self, target: Self::Label);
    /// Jump to `target` if `guard` holds (cmp flags or a bool uniform).
    fn branch(&mut self, guard: Guard, target: Self::Label);
    /// LOOP: aL = i`int`.y, `loop_counters[slot]` = i`int`.x.
    fn loop_init(&mut self, int: u8, slot: u8);
    /// End of a loop body: aL += i`int`.z; if `loop_counters[slot] > 0`, decrement it and jump to
    /// `again`, else fall through.
    fn loop_step(&mut self, int: u8, slot: u8, again: Self::Label);
    /// END: leave with status done.
    fn exit_end(&mut self);
    /// Leave with status deopt, recording `pc`.
    fn exit_deopt(&mut self, pc: u32);

    /// Load a source operand (swizzle and negation applied) into `dst`.
    fn load(&mut self, dst: Val, src: &Source);
    /// Store the lanes of `v` selected by `dst.mask` (never called with an empty mask).
    fn store(&mut self, dst: &Dest, v: Val);

    /// Lane-wise `dst = op(a, b)`.
    fn binary(&mut self, kind: BinaryKind, dst: Val, a: Val, b: Val);
    /// `dst = float::mad(a, b, c)` lane-wise (unfused).
    fn mad(&mut self, dst: Val, a: Val, b: Val, c: Val);
    /// Dot product, broadcast.
    fn dot(&mut self, kind: DotKind, dst: Val, a: Val, b: Val);
    /// `dst = float::dst(a, b)`.
    fn dst(&mut self, dst: Val, a: Val, b: Val);
    /// `dst = float::flr(a)` lane-wise.
    fn flr(&mut self, dst: Val, a: Val);
    /// `dst = f(a.x)` broadcast.
    fn scalar(&mut self, kind: ScalarKind, dst: Val, a: Val);
    /// `dst = float::litp(a).0`, and set the cmp flags to `(a.x >= 0, a.w >= 0)`.
    fn litp(&mut self, dst: Val, a: Val);
    /// MOVA: a0.x = `float::mova(a.x)` if `x`, a0.y = `float::mova(a.y)` if `y`.
    fn mova(&mut self, a: Val, x: bool, y: bool);
    /// CMP: cmp.x = `x.eval(a.x, b.x)`, cmp.y = `y.eval(a.y, b.y)`.
    fn cmp(&mut self, a: Val, b: Val, x: CmpOp, y: CmpOp);
    /// SETEMIT (geometry shaders).
    fn set_emit(&mut self, vtx: u8, primitive: bool, winding: bool);
    /// EMIT (geometry shaders): append a record of the current output bank and the SETEMIT
    /// parameters, then swap output banks. Deopts (`pc`) when the record buffer is full.
    fn emit_vertex(&mut self, pc: u32);

    /// Finish: resolve labels, append constants.
    fn finish(self) -> CompileResult<crate::pica::masm::Emitted>
    where
        Self: Sized;
}

/// The outlined subroutines a backend has asked for: one label per distinct key (a stub kind
/// and the registers it works on), created on the first request, and a queue of those whose
/// bodies are still to be emitted. Rounding fix-ups and the transcendental algorithms are long
/// and identical at every use, so one copy each keeps code small and compile time short for
/// the price of a predicted call/return.
#[derive(Debug)]
pub struct StubTable<K, L> {
    known: Vec<(K, L)>,
    pending: Vec<(K, L)>,
}

impl<K, L> Default for StubTable<K, L> {
    fn default() -> Self {
        StubTable {
            known: Vec::new(),
            pending: Vec::new(),
        }
    }
}

impl<K: Copy + PartialEq, L: Copy> StubTable<K, L> {
    /// The label of `key`'s subroutine; `new_label` makes one (and queues the body) on the
    /// first request.
    pub fn label(&mut self, key: K, new_label: impl FnOnce() -> L) -> L {
        if let Some((_, l)) = self.known.iter().find(|(k, _)| *k == key) {
            return *l;
        }
        let l = new_label();
        self.known.push((key, l));
        self.pending.push((key, l));
        l
    }

    /// True when some requested body has not been emitted yet.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The next body to emit (emitting one may request more).
    pub fn next_pending(&mut self) -> Option<(K, L)> {
        self.pending.pop()
    }
}

/// What a masm produces: machine code plus `(code offset, PICA address, text)` marks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Emitted {
    /// Machine code (position independent: no absolute addresses), base address 0.
    pub code: Vec<u8>,
    /// Where each PICA instruction instance starts.
    pub marks: Vec<(usize, u32, String)>,
    /// Length of the instruction stream; the constant pool follows it.
    pub code_len: usize,
    /// Offset of the batch entry point (the single-invocation entry is at 0).
    pub batch_entry: usize,
    /// Output registers the batch entry clears in each row before running it; the caller
    /// clears the others it needs.
    pub batch_outputs_zeroed: u16,
}
