//! The NEON lane emitter: the AArch64 half of the SoA backend, driven by the same
//! walker and per-unit lowering (`jit/src/lower/`) as the AVX2 emitter (`x64.rs`).
//!
//! # Lanes
//!
//! Four vertices per 128-bit q register. The group, its [`SoaContext`] and the runtime
//! (`run`, whole-group fallback, the tail) are those of the x86-64 backend, eight rows per
//! group: the code runs each group as two *halves* of four lanes. Every per-lane array of the
//! context is `[…; 8]` of 4-byte lanes, so the half's lanes are the same fields 16 bytes
//! further on: the code addresses them through [`LANE`] (the context plus 16 bytes per half)
//! and the shared fields (flushed uniforms, aL, loop counters, batch counters) through
//! [`CTX`]. A half runs the body from the start to its END; the group is finished when both
//! are, and its instruction count is added only then, so a group whose second half stops
//! reruns per vertex with exact counts.
//!
//! # Eight lanes per body run
//!
//! With [`A64Lanes::Eight`] the body runs once per group instead of once per half: control
//! flow, budget checks, loop steps, the scheduler and the lane masks ([`MASK`] eight bits,
//! `inactive` both halves) are the group's. A lane value is then a pair of q registers'
//! worth, lanes 0-3 and 4-7, computed one after the other in the *same* registers: the
//! lowering runs each arithmetic instruction in two passes (`Emitter::passes`, `ops.rs`),
//! sources, result and masked store of lanes 0-3, then of lanes 4-7. The second pass is the
//! same lane code addressing every per-lane array 16 bytes further on ([`Gen::lane_off`]:
//! [`LANE`] stays at the context), so no lane method exists twice and nothing is spilled:
//! values that live across a recipe call stay in v8-v15 for one pass at a time. Pairs held
//! side by side would need sixteen such registers for `P` and `RES` alone, besides the
//! second half's operands across the first half's recipe call. Passes are independent
//! because an instruction's lanes share no per-lane state: lanes 0-3's store cannot change
//! what lanes 4-7 read. The entry loads and resets both halves, the body runs, both halves'
//! outputs are stored; EMIT stores both halves and advances the cursor once.
//!
//! # Float recipes
//!
//! The arithmetic is the per-vertex AArch64 code's (`a64/masm.rs`): its `binary` (ADD, MUL,
//! MAX, MIN, SGE, SLT), `flr`, `scalar` (RCP, RSQ) and `cmp_mask` sequences are
//! lane-wise on a q register, so the lane emitter calls them on four vertices' component
//! instead of one vertex's four components: the f24/f32 rounding and special-value rules
//! exist once per host. Operands are moved into the masm's value registers v0/v1 for the
//! call and the result out of v0. RCP and RSQ are vector recipes
//! (`crate::pica::recipes::reciprocal`), run on the half's four lanes at once
//! (`A64Masm::reciprocal_lanes`); EX2 and LG2 run the lane recipes of
//! `crate::pica::recipes::transcendental_lanes` (over the host's lane operations) on the
//! half's four lanes, as the AVX2 code runs both on eight.
//!
//! # Lane masks
//!
//! Programs with cmp-dependent branches run each half with lane masks, as the AVX2 code runs
//! its groups (see "Divergence" in `x64.rs`; the walker decides the same things for both):
//! [`MASK`] holds the half's running lanes, `SoaContext::inactive` the same as a vector
//! mask for the masked stores, a disagreeing branch parks each set of lanes
//! (`waiting`/`pending`, shared by the halves, which run one after the other and leave them
//! empty), the scheduler picks the lowest waiting block (`rbit`/`clz`) and enters it through
//! a table of `b` instructions. aL and the loop counters are owned per half; a lane that
//! needs one it does not own stops the group, which reruns per vertex.
//!
//! # Geometry shaders and start states
//!
//! What the AVX2 code does, per half: point-mode geometry shaders that [`crate::pica::analysis::points::plan`]
//! accepts run eight invocations per group. The lanes carry their registers over (the driver
//! puts the call's state in the context; nothing is reset at a half's start); the group's
//! places in the emit buffer are laid out once per group (lane k's vertices from place `k·E`),
//! and each half restarts the EMIT cursor and the count of EMITs left. EMIT transposes the
//! written output registers into the four lanes' rows and stores them and the flags word at
//! each lane's place; it also keeps lane 3's and lane 2's rows for the final state, which
//! the second half (lanes 7 and 6) overwrites: both halves take the same path, so the
//! first half's copies never survive a finished group. `run_batch_from` code copies the
//! `start_*` fields into each half's registers instead of zeroing them.
//!
//! # Subset
//!
//! Programs whose code would exceed the ±1 MiB reach of conditional branches and literal
//! loads (thousands of blocks after the analysis unrolled calls and loops) run per vertex
//! on AArch64.
//!
//! # Registers
//!
//! | register | role |
//! |---|---|
//! | `x19` | [`CTX`]: the `SoaContext` |
//! | `x20` | [`LANE`]: the context + 16 bytes per half (per-lane arrays; eight lanes: the context) |
//! | `x21` | [`UNI`]: `Uniforms` |
//! | `x22`, `x23` | input / output rows of the current half (entry loop) |
//! | `x24` | instructions left for the half (one invocation's budget) |
//! | `x25` | where the body's exits return to (status in w0) |
//! | `x26` | lane masks: the running lanes of the half, or of the group with eight lanes ([`MASK`]); `x27`: the group's instruction count |
//! | `x28` | row offset of the aL-relative source of the current block |
//! | `x8-x17`, `x30` | scratch, and the link register of the masm's shared subroutines |
//! | `v0-v2` | source components (`A`, `B`, `C`), the masm's value registers |
//! | `v8-v11` | products and partial sums (`P`) |
//! | `v12-v15` | result components (`RES`) |
//! | `v4-v7`, `v16-v23` | scratch of the masm recipes and of the transposes |
//! | `v24-v31` | the masm's pinned constants |
//!
//! `v8-v15` are the registers the masm recipes never touch, which is why the values that
//! live across a recipe call sit there; their low halves are callee-saved, so the entry saves
//! `d8-d15`.

#![allow(
    clippy::needless_range_loop,
    reason = "lane, component and row indices address register arrays and offsets in parallel"
)]

use crate::error::{CompileError, CompileResult};
use crate::host::a64::abi::{Frame, CALLEE_SAVED, CALLEE_SAVED_V};
use crate::host::a64::asm::{Asm, Cond};
use crate::host::a64::regs::{Gpr, Vreg, LR, X0, ZR};
use crate::pica::a64::masm::{A64Masm, K_ONE, K_SIGN};
use crate::pica::a64::rows;
use crate::pica::a64::A64Lanes;
use crate::pica::analysis::points::GsPlan;
use crate::pica::analysis::usage::Usage;
use crate::pica::layout::*;
use crate::pica::lower::{LaneEmitter, LaneProgram, Select, SourceOperand, V};
use crate::pica::masm::{BinaryKind, MacroAssembler, ScalarKind, Val};
use crate::pica::recipes::{self, lit::Lit, transcendental_lanes, Float};
use dynasmrt::DynamicLabel;
use picajit_interp::pica::isa::{
    CmpOp, CondOp, Condition, DstReg, Instruction, Opcode, RelIndex, SrcReg, Swizzle,
};

/// The `SoaContext`.
const CTX: Gpr = Gpr(19);
/// The context plus 16 bytes per half: base of the per-lane arrays.
const LANE: Gpr = Gpr(20);
/// `Uniforms`.
const UNI: Gpr = Gpr(21);
/// Input rows of the current half.
const ROWS_IN: Gpr = Gpr(22);
/// Output rows of the current half.
const ROWS_OUT: Gpr = Gpr(23);
/// Instructions left.
const BUDGET: Gpr = Gpr(24);
/// Continuation of the body's exits.
const EXIT: Gpr = Gpr(25);
/// Lane masks: the lanes running the current block (bit k = lane k of the half).
const MASK: Gpr = Gpr(26);
/// Instructions of the current group.
const COUNT: Gpr = Gpr(27);
/// Row offset of the current block's aL-relative source.
const REL: Gpr = Gpr(28);

const G9: Gpr = Gpr(9);
const G10: Gpr = Gpr(10);
const G11: Gpr = Gpr(11);
const G12: Gpr = Gpr(12);
const G13: Gpr = Gpr(13);
const G16: Gpr = Gpr(16);

/// The masm's value registers: operands in, result out of `V0`.
const V0: Vreg = Vreg(0);
const V1: Vreg = Vreg(1);
/// Scratch of the lane code between recipe calls (the masm's T0-T3).
const S: [Vreg; 4] = [Vreg(4), Vreg(5), Vreg(6), Vreg(7)];
/// Rows / components of the transposes (the masm's T4-T7 and SA, T9-T11 range).
const R: [Vreg; 4] = [Vreg(16), Vreg(17), Vreg(18), Vreg(19)];
const TR: [Vreg; 4] = [Vreg(20), Vreg(21), Vreg(22), Vreg(23)];

/// The entry's frame: x19-x30 and d8-d15 saved (the lane code uses them all), then 16 bytes
/// for the group's split count.
const ENTRY_FRAME: Frame<'static> = Frame {
    link: true,
    saved: &CALLEE_SAVED,
    saved_v: &CALLEE_SAVED_V,
    locals: 16,
    context: Some(CTX),
};
/// Where in the frame the group's split count is kept (lane masks): the frame's locals, above
/// its ten saved pairs (`ENTRY_FRAME.locals_offset()`, checked at the entry).
const FRAME_SPLITS: i32 = 160;

fn vreg(v: V) -> Vreg {
    match v {
        V::A => Vreg(0),
        V::B => Vreg(1),
        V::C => Vreg(2),
        V::P(k) => Vreg(8 + (k & 3)),
        V::Res(k) => Vreg(12 + (k & 3)),
    }
}

fn bank_off(bank: i32, reg: u8) -> i32 {
    bank + (reg as i32 & 15) * 4 * 32
}

/// Where the components of a source operand are read.
#[derive(Clone, Copy, Debug)]
pub enum Addr {
    /// Four lanes per component at `[LANE + off + 32·component]`.
    Frame(i32),
    /// One value for all lanes at `[base + off + 4·component]`, broadcast.
    Bcast(Gpr, i32),
    /// As `Bcast`, at `[base + REL + off + 4·component]` (aL-relative rows).
    BcastRel(Gpr, i32),
}

/// A prepared source operand.
#[derive(Clone, Copy, Debug)]
pub struct Operand {
    addr: Addr,
    /// Where the same components are stored with the input flush applied, if anywhere.
    flushed: Option<Addr>,
    swizzle: Swizzle,
    negate: bool,
}

struct Gen {
    m: A64Masm,
    /// The program has cmp-dependent branches: lane masks (see "Lane masks").
    simt: bool,
    /// Blocks of the program (entries of the scheduler's jump table).
    nblocks: usize,
    /// Lane masks: END for some of the running lanes.
    end_lanes: DynamicLabel,
    /// Lane masks: the subroutine that sets `SoaContext::inactive` from [`MASK`].
    set_inactive: DynamicLabel,
    /// PC of the instruction being generated.
    cur_pc: u32,
    /// Stubs that leave with [`STATUS_DIVERGED`] at a pc.
    diverged: Vec<(DynamicLabel, u32)>,
    exit_done: DynamicLabel,
    exit_deopt: DynamicLabel,
    exit_budget: DynamicLabel,
    uniform_use: UniformUse,
    marks: Vec<Mark>,
    /// Within the current block: the index whose aL-relative row offset [`REL`] holds.
    al_row: Option<i32>,
    /// Geometry shaders: what [`crate::pica::analysis::points::plan`] proved (see "Geometry shaders").
    gs: Option<GsPlan>,
    /// Node of the instruction being generated (EMIT looks up its SETEMIT parameters).
    cur_node: usize,
    /// Geometry shaders: an invocation emitted more or fewer vertices than expected.
    exit_emits: DynamicLabel,
    /// Groups start from `SoaContext::start_*` instead of the reset state
    /// (`run_batch_from`).
    from_state: bool,
    /// One body run per group (see "Eight lanes per body run"); otherwise one per half.
    eight: bool,
    /// Eight lanes: the half the current code addresses through [`LANE`] (1 in the second
    /// pass over an instruction, see [`Gen::lane_off`]); always 0 with four lanes.
    half: i32,
}

/// Generate the NEON SoA code of an eligible program (a vertex shader, or a geometry shader
/// with its [`GsPlan`]; `from_state`: groups start from `SoaContext::start_*`): `(code,
/// instruction bytes, marks, what it reads of the per-call uniform copies)`, or `None` when
/// the code would exceed the reach of AArch64 branches and literal loads.
pub fn generate(job: LaneProgram<'_>, lanes: A64Lanes) -> CompileResult<Option<Generated>> {
    let mut m = A64Masm::new(job.mode);
    m.max_rule = job.max_rule;
    let a = m.asm();
    let (exit_done, exit_deopt, exit_budget) = (a.new_label(), a.new_label(), a.new_label());
    let (end_lanes, set_inactive, exit_emits) = (a.new_label(), a.new_label(), a.new_label());
    let simt = crate::pica::analysis::usage::has_lane_branches(job.analysis);
    if job.gs.is_some() && (simt || job.from_state) {
        // `points::plan` rules out cmp-dependent branches, and `codegen` starts geometry
        // groups from the carried-over registers only.
        return Err(CompileError::Internal(
            "geometry SoA code with lane masks or from a start state".into(),
        ));
    }
    let mut g = Gen {
        m,
        simt,
        nblocks: job.analysis.blocks.len(),
        end_lanes,
        set_inactive,
        cur_pc: 0,
        diverged: Vec::new(),
        exit_done,
        exit_deopt,
        exit_budget,
        uniform_use: UniformUse::default(),
        marks: Vec::new(),
        al_row: None,
        gs: job.gs.cloned(),
        cur_node: 0,
        exit_emits,
        from_state: job.from_state,
        eight: lanes == A64Lanes::Eight,
        half: 0,
    };
    let usage = crate::pica::analysis::usage::usage(job.program, job.analysis);
    let body = g.a().new_label();
    g.entry(&usage, body);
    g.a().bind(body);
    crate::pica::lower::lower_lanes(&mut g, job.program, job.analysis)?;
    g.exits();
    let Gen {
        m,
        mut marks,
        uniform_use,
        ..
    } = g;
    let (code, len, more) = match m.finish_code() {
        Ok(c) => c,
        // Conditional branches and literal loads reach ±1 MiB: code beyond that (programs
        // whose analysis unrolls into thousands of blocks) runs per vertex.
        Err(e) if e.contains("Impossible relocation") => return Ok(None),
        Err(e) => return Err(CompileError::Internal(e)),
    };
    marks.extend(more);
    Ok(Some((code, len, marks, uniform_use)))
}

impl Gen {
    fn a(&mut self) -> &mut Asm {
        self.m.asm()
    }

    /// All lanes of a body run: the bits of [`MASK`] when every lane runs.
    fn all(&self) -> u32 {
        if self.eight {
            0xFF
        } else {
            0xF
        }
    }

    /// `off` as an offset from `base`: from [`LANE`], the eight-lane body's second half is 16
    /// bytes on. Every address of per-lane state goes through here (`at`, `add_off`), which
    /// is how one lane method serves either half of a group without a register of its own.
    fn lane_off(&self, base: Gpr, off: i32) -> i32 {
        if base == LANE {
            off + 16 * self.half
        } else {
            off
        }
    }

    /// `(base, off)` addressing `[base + off]` for a load or store scaled by `size` bytes
    /// (per-lane state of the current half, see [`Gen::lane_off`]): offsets beyond the
    /// scaled 12-bit range go through x16.
    fn at(&mut self, base: Gpr, off: i32, size: i32) -> (Gpr, i32) {
        let off = self.lane_off(base, off);
        if off >= 0 && off % size == 0 && off / size < 4096 {
            return (base, off);
        }
        let a = self.a();
        a.mov_imm_x(G16, off as i64 as u64);
        a.add_x(G16, base, G16);
        (G16, 0)
    }

    fn ldr_w(&mut self, t: Gpr, base: Gpr, off: i32) {
        let (b, o) = self.at(base, off, 4);
        self.a().ldr_w(t, b, o);
    }

    fn str_w(&mut self, t: Gpr, base: Gpr, off: i32) {
        let (b, o) = self.at(base, off, 4);
        self.a().str_w(t, b, o);
    }

    fn ldr_x(&mut self, t: Gpr, base: Gpr, off: i32) {
        let (b, o) = self.at(base, off, 8);
        self.a().ldr_x(t, b, o);
    }

    fn str_x(&mut self, t: Gpr, base: Gpr, off: i32) {
        let (b, o) = self.at(base, off, 8);
        self.a().str_x(t, b, o);
    }

    fn ldr_q(&mut self, t: Vreg, base: Gpr, off: i32) {
        let (b, o) = self.at(base, off, 16);
        self.a().ldr_q(t, b, o);
    }

    fn str_q(&mut self, t: Vreg, base: Gpr, off: i32) {
        let (b, o) = self.at(base, off, 16);
        self.a().str_q(t, b, o);
    }

    /// `d = base + off` for any offset (per-lane state of the current half, see
    /// [`Gen::lane_off`]).
    fn add_off(&mut self, d: Gpr, base: Gpr, off: i32) {
        let off = self.lane_off(base, off);
        let a = self.a();
        if (0..4096).contains(&off) {
            a.add_xi(d, base, off as u32);
        } else {
            a.mov_imm_x(d, off as i64 as u64);
            a.add_x(d, base, d);
        }
    }

    /// `r[0..4]` (four rows of x, y, z, w) transposed in place into four components (or
    /// back: the transpose is its own inverse). Clobbers [`TR`].
    fn transpose(&mut self, r: [Vreg; 4]) {
        let a = self.a();
        a.trn1_4s(TR[0], r[0], r[1]); // x0 x1 z0 z1
        a.trn2_4s(TR[1], r[0], r[1]); // y0 y1 w0 w1
        a.trn1_4s(TR[2], r[2], r[3]); // x2 x3 z2 z3
        a.trn2_4s(TR[3], r[2], r[3]); // y2 y3 w2 w3
        a.trn1_2d(r[0], TR[0], TR[2]);
        a.trn1_2d(r[1], TR[1], TR[3]);
        a.trn2_2d(r[2], TR[0], TR[2]);
        a.trn2_2d(r[3], TR[1], TR[3]);
    }

    // ---------------------------------------------------------------- entry and group loop

    fn entry(&mut self, usage: &Usage, body: DynamicLabel) {
        let fpcr = self.m.fpcr();
        let simt = self.simt;
        let (top, half, half_done, finished, epilogue) = {
            let a = self.a();
            (
                a.new_label(),
                a.new_label(),
                a.new_label(),
                a.new_label(),
                a.new_label(),
            )
        };
        debug_assert_eq!(ENTRY_FRAME.locals_offset(), FRAME_SPLITS);
        ENTRY_FRAME.enter(self.a());
        self.ldr_x(UNI, CTX, SOA_UNIFORMS);
        self.a().mrs_fpcr(G9);
        self.str_w(G9, CTX, SOA_SAVED_MXCSR);
        let a = self.a();
        a.mov_imm_w(G9, fpcr);
        a.msr_fpcr(G9);
        self.m.load_pinned();

        // Groups of eight rows while `batch_done + 8 <= batch_count`.
        self.a().bind(top);
        self.ldr_x(G9, CTX, SOA_BATCH_DONE);
        self.ldr_x(G10, CTX, SOA_BATCH_COUNT);
        let a = self.a();
        a.add_xi(G11, G9, LANES as u32);
        a.cmp_x(G11, G10);
        a.b_cond(Cond::Hi, finished);
        a.lsl_xi(G9, G9, 8);
        self.ldr_x(ROWS_IN, CTX, SOA_BATCH_INPUT);
        self.ldr_x(ROWS_OUT, CTX, SOA_BATCH_OUTPUT);
        let a = self.a();
        a.add_x(ROWS_IN, ROWS_IN, G9);
        a.add_x(ROWS_OUT, ROWS_OUT, G9);
        a.movz_x(COUNT, 0, 0);
        a.mov_x(LANE, CTX);
        if simt {
            a.add_xi(G16, Gpr(31), 0);
            a.str_x(ZR, G16, FRAME_SPLITS);
        }
        if self.gs.is_some() {
            self.gs_group_start();
        }

        // One half: four rows, lanes at LANE (eight lanes: both halves, then one body run).
        self.a().bind(half);
        let halves = if self.eight { 2 } else { 1 };
        for h in 0..halves {
            self.half = h;
            self.half_inputs(usage, 1024 * h);
            if self.gs.is_none() {
                self.vs_lanes_start(usage);
            }
        }
        self.half = 0;
        if self.gs.is_some() {
            // Geometry shaders carry their registers over, which the caller put in the
            // context once per call (see `geometry`): only the EMIT cursor restarts.
            self.gs_half_start();
        } else {
            self.vs_shared_start();
        }
        self.ldr_x(BUDGET, CTX, SOA_BUDGET);
        let a = self.a();
        a.adr(EXIT, half_done);
        a.b(body);

        a.bind(half_done);
        a.cbnz_w(X0, epilogue);
        if self.simt {
            // Counted per lane as blocks ran (see `block_start`).
            self.ldr_x(G9, CTX, SOA_GROUP_INSTRUCTIONS);
            self.a().add_x(COUNT, COUNT, G9);
            self.ldr_w(G9, CTX, SOA_SPLIT + 8);
            let a = self.a();
            a.add_xi(G16, Gpr(31), 0);
            a.ldr_x(G10, G16, FRAME_SPLITS);
            a.add_x(G10, G10, G9);
            a.str_x(G10, G16, FRAME_SPLITS);
        } else {
            self.ldr_x(G9, CTX, SOA_BUDGET);
            let a = self.a();
            a.sub_x(G9, G9, BUDGET);
            // Four (eight) vertices, each the same count.
            a.lsl_xi(G9, G9, 2 + u32::from(halves == 2));
            a.add_x(COUNT, COUNT, G9);
        }
        if self.gs.is_none() {
            for h in 0..halves {
                self.half = h;
                self.vs_half_end(usage, 1024 * h);
            }
            self.half = 0;
        }
        if !self.eight {
            let a = self.a();
            a.add_xi(ROWS_IN, ROWS_IN, 4 * 256);
            a.add_xi(ROWS_OUT, ROWS_OUT, 4 * 256);
            a.add_xi(LANE, LANE, 16);
            a.sub_x(G9, LANE, CTX);
            a.cmp_xi(G9, 32);
            a.b_cond(Cond::Lo, half);
        }

        // Both halves finished: the group counts.
        self.ldr_x(G9, CTX, SOA_BATCH_INSTRUCTIONS);
        self.a().add_x(G9, G9, COUNT);
        self.str_x(G9, CTX, SOA_BATCH_INSTRUCTIONS);
        if self.simt {
            self.a().add_xi(G16, Gpr(31), 0);
            self.a().ldr_x(G10, G16, FRAME_SPLITS);
            self.ldr_x(G9, CTX, SOA_BATCH_SPLITS);
            self.a().add_x(G9, G9, G10);
            self.str_x(G9, CTX, SOA_BATCH_SPLITS);
        }
        self.ldr_x(G9, CTX, SOA_BATCH_DONE);
        self.a().add_xi(G9, G9, LANES as u32);
        self.str_x(G9, CTX, SOA_BATCH_DONE);
        self.a().b(top);

        self.a().bind(finished);
        self.a().movz_w(X0, Status::Done as u32, 0);
        self.a().bind(epilogue);
        self.ldr_w(G9, CTX, SOA_SAVED_MXCSR);
        let a = self.a();
        a.msr_fpcr(G9);
        ENTRY_FRAME.ret(a);
    }

    /// The input rows of the current half, `rows` bytes from [`ROWS_IN`], transposed into
    /// its lanes (raw and flushed, as the program reads them).
    fn half_inputs(&mut self, usage: &Usage, rows: i32) {
        for i in 0..16u8 {
            let bit = 1 << i;
            if (usage.inputs_raw | usage.inputs_flushed) & bit == 0 {
                continue;
            }
            for k in 0..4 {
                self.a()
                    .ldr_q(R[k], ROWS_IN, rows + 256 * k as i32 + 16 * i32::from(i));
            }
            self.transpose(R);
            for c in 0..4 {
                if usage.inputs_raw & bit != 0 {
                    self.str_q(R[c], LANE, bank_off(SOA_INPUT, i) + 32 * c as i32);
                }
                if usage.inputs_flushed & bit != 0 {
                    self.m.flush(R[c]);
                    self.str_q(R[c], LANE, bank_off(SOA_INPUT_FLUSHED, i) + 32 * c as i32);
                }
            }
        }
    }

    /// Vertex shaders, per half: the per-lane working registers every invocation starts
    /// from (`reset_working_state`, or with `from_state` the `start_*` fields
    /// `run_batch_from` filled).
    fn vs_lanes_start(&mut self, usage: &Usage) {
        let from_state = self.from_state;
        // a0 = 0 is row offset 128 of `uniforms_rel`.
        let zero = R[0];
        self.a().movi_zero(zero);
        for i in 0..16u8 {
            for (bank, used, z) in [
                (SOA_TEMP, usage.temps, usage.zero_temps),
                (SOA_OUTPUT, usage.outputs, usage.zero_outputs),
            ] {
                if used & (1 << i) != 0 && !(from_state && bank == SOA_TEMP) {
                    for c in 0..4 {
                        if z[i as usize] & (1 << c) != 0 {
                            self.str_q(zero, LANE, bank_off(bank, i) + 32 * c);
                        }
                    }
                }
            }
        }
        if from_state {
            // Every temporary component some instruction may read before the group writes
            // it (written by the program or not: the context may hold another call's start),
            // then a0, its row offsets and cmp.
            for i in 0..16u8 {
                for c in 0..4 {
                    if usage.zero_temps[i as usize] & (1 << c) != 0 {
                        self.ldr_q(R[1], LANE, bank_off(SOA_START_TEMP, i) + 32 * c);
                        self.str_q(R[1], LANE, bank_off(SOA_TEMP, i) + 32 * c);
                    }
                }
            }
            for k in 0..2 {
                for (from, to) in [
                    (SOA_START_A0, SOA_A0),
                    (SOA_START_A0_REL, SOA_A0_REL),
                    (SOA_START_CMP, SOA_CMP),
                ] {
                    self.ldr_q(R[1], LANE, from + 32 * k);
                    self.str_q(R[1], LANE, to + 32 * k);
                }
            }
        } else {
            self.a().load_const(R[1], [16 * 128; 4]);
            for k in 0..2 {
                self.str_q(zero, LANE, SOA_A0 + 32 * k);
                self.str_q(zero, LANE, SOA_CMP + 32 * k);
                self.str_q(R[1], LANE, SOA_A0_REL + 32 * k);
            }
        }
        if self.simt {
            self.str_q(zero, LANE, SOA_INACTIVE);
        }
    }

    /// Vertex shaders, per body run: aL, and with lane masks every lane of the run running
    /// and owning aL and the loop counters.
    fn vs_shared_start(&mut self) {
        if self.from_state {
            self.ldr_w(G9, CTX, SOA_START_AL);
            self.str_w(G9, CTX, SOA_AL);
        } else {
            self.str_w(ZR, CTX, SOA_AL);
        }
        if self.simt {
            let all = self.all();
            self.a().movz_w(MASK, all, 0);
            for off in [SOA_ALIVE, SOA_AL_OWNER]
                .into_iter()
                .chain((0..4).map(|k| SOA_LOOP_OWNER + 4 * k))
            {
                self.str_w(MASK, CTX, off);
            }
            self.str_x(ZR, CTX, SOA_GROUP_INSTRUCTIONS);
            self.str_w(ZR, CTX, SOA_SPLIT + 8);
        }
    }

    /// Vertex shaders, after a half finished: the outputs the caller wants back into its
    /// four rows, `rows` bytes from [`ROWS_OUT`].
    fn vs_half_end(&mut self, usage: &Usage, rows: i32) {
        // The outputs the caller wants (`out_mask`) back into the rows; those the program
        // never writes are +0.
        self.ldr_w(G12, CTX, SOA_OUT_MASK);
        self.a().movi_zero(TR[0]);
        for o in 0..16u8 {
            let skip = self.a().new_label();
            self.a().tbz_w(G12, u32::from(o), skip);
            if usage.outputs & (1 << o) != 0 {
                for c in 0..4 {
                    self.ldr_q(R[c], LANE, bank_off(SOA_OUTPUT, o) + 32 * c as i32);
                }
                self.transpose(R);
                for k in 0..4 {
                    self.a()
                        .str_q(R[k], ROWS_OUT, rows + 256 * k as i32 + 16 * i32::from(o));
                }
            } else {
                self.a().movi_zero(R[0]);
                for k in 0..4 {
                    self.a()
                        .str_q(R[0], ROWS_OUT, rows + 256 * k + 16 * i32::from(o));
                }
            }
            self.a().bind(skip);
        }
    }

    /// Geometry shaders, per group: each of the eight lanes' first row and flags word in the
    /// emit buffer (lane k's vertices from place `k·E` of the group on), the next group's.
    fn gs_group_start(&mut self) {
        self.ldr_x(G9, CTX, SOA_GS_ROWS_NEXT);
        self.ldr_x(G10, CTX, SOA_GS_ROW_STRIDE);
        self.ldr_x(G11, CTX, SOA_GS_FLAGS_NEXT);
        self.ldr_x(G12, CTX, SOA_GS_FLAG_STRIDE);
        for k in 0..LANES as i32 {
            self.str_x(G9, CTX, SOA_GS_LANE_ROWS + 8 * k);
            self.a().add_x(G9, G9, G10);
            self.str_x(G11, CTX, SOA_GS_LANE_FLAGS + 8 * k);
            self.a().add_x(G11, G11, G12);
        }
        self.str_x(G9, CTX, SOA_GS_ROWS_NEXT);
        self.str_x(G11, CTX, SOA_GS_FLAGS_NEXT);
    }

    /// Geometry shaders, per half: the lanes' vertex cursors at their first place, E EMITs
    /// to go.
    fn gs_half_start(&mut self) {
        self.str_x(ZR, CTX, SOA_GS_CURSOR);
        self.str_x(ZR, CTX, SOA_GS_FLAG_CURSOR);
        self.ldr_w(G9, CTX, SOA_GS_EMITS);
        self.str_w(G9, CTX, SOA_GS_LEFT);
    }

    /// The body's exits: status in w0, back to the half loop.
    fn exits(&mut self) {
        // A half that stops (here too) may leave lanes waiting: `waiting` and `pending` must
        // be all zero for the next group.
        let stop = self.a().new_label();
        let simt = self.simt;
        for (stub, pc) in std::mem::take(&mut self.diverged) {
            self.a().bind(stub);
            self.a().mov_imm_w(G9, pc);
            self.str_w(G9, CTX, SOA_DEOPT_PC);
            let a = self.a();
            a.movz_w(X0, STATUS_DIVERGED, 0);
            if simt {
                a.b(stop);
            } else {
                a.br(EXIT);
            }
        }
        for (l, s) in [
            (self.exit_done, Status::Done as u32),
            (self.exit_deopt, Status::Deopt as u32),
            (self.exit_budget, Status::Budget as u32),
            (self.exit_emits, STATUS_EMITS),
        ] {
            let a = self.a();
            a.bind(l);
            a.movz_w(X0, s, 0);
            if simt && s != Status::Done as u32 {
                a.b(stop);
            } else {
                a.br(EXIT);
            }
        }
        if self.simt {
            self.a().bind(stop);
            self.clear_waiting();
            self.a().br(EXIT);
        }
    }

    /// EMIT in a geometry shader: each lane's vertex of the half (the output registers the
    /// caller keeps, `SoaContext::gs_row_off`) and flags into its next place in the emit
    /// buffer, and the rows `pica/batch/geometry.rs` rebuilds the final state from (lane 3 of the
    /// second half is lane 7, lane 2 is lane 6; the first half's, stored first, are
    /// overwritten, since both halves take the same path). An EMIT beyond the E the group
    /// expects leaves with [`STATUS_EMITS`] before writing anything. Clobbers x9-x13, x16.
    fn gs_emit(&mut self, pc: u32) -> CompileResult<()> {
        let gs = self.gs.as_ref().expect("geometry shader");
        let flags = gs.emit_flags[self.cur_node].ok_or_else(|| {
            CompileError::Internal(format!("EMIT at 0x{pc:03x} has no SETEMIT parameters"))
        })?;
        let written = gs.written_outputs;
        let s = i32::from(flags.slot & 3);
        let over = self.exit_emits;
        self.ldr_w(G9, CTX, SOA_GS_LEFT);
        self.a().subs_wi(G9, G9, 1);
        self.a().b_cond(Cond::Lo, over);
        self.str_w(G9, CTX, SOA_GS_LEFT);
        self.ldr_x(G11, CTX, SOA_GS_CURSOR);
        // x12: this half's `gs_lane_rows` (8 bytes per lane, 32 per half), `gs_lane_flags`
        // 64 bytes on. Eight lanes: the group's, both halves from the same x12.
        let halves = if self.eight {
            self.add_off(G12, CTX, SOA_GS_LANE_ROWS);
            2
        } else {
            self.add_off(G13, LANE, SOA_GS_LANE_ROWS);
            self.a().sub_x(G12, LANE, CTX);
            self.a().add_x(G12, G13, G12);
            1
        };
        for h in 0..halves {
            self.half = h;
            for o in 0..16u8 {
                if written & (1 << o) == 0 {
                    continue;
                }
                let r = i32::from(o);
                for c in 0..4 {
                    self.ldr_q(R[c], LANE, bank_off(SOA_OUTPUT, o) + 32 * c as i32);
                }
                self.transpose(R);
                let skip = self.a().new_label();
                self.ldr_w(G10, CTX, SOA_GS_ROW_OFF + 4 * r);
                let a = self.a();
                a.tbnz_w(G10, 31, skip); // not stored
                a.add_x(G10, G10, G11);
                for k in 0..4 {
                    a.ldr_x(G9, G12, 32 * h + 8 * k as i32);
                    a.str_q_reg(R[k], G9, G10);
                }
                a.bind(skip);
                if h + 1 == halves {
                    // The last half's lanes 3 and 2 are lanes 7 and 6.
                    self.ldr_q(S[0], CTX, SOA_GS_LAST7 + 16 * r);
                    self.str_q(S[0], CTX, SOA_GS_PREV7 + 16 * r);
                    self.str_q(R[3], CTX, SOA_GS_LAST7 + 16 * r);
                    self.str_q(R[2], CTX, SOA_GS_LAST6 + 16 * r);
                    self.str_q(R[3], CTX, SOA_GS_SLOT7 + 256 * s + 16 * r);
                }
            }
        }
        self.half = 0;
        self.ldr_x(G9, CTX, SOA_GS_VSIZE);
        self.a().add_x(G11, G11, G9);
        self.str_x(G11, CTX, SOA_GS_CURSOR);
        self.ldr_x(G10, CTX, SOA_GS_FLAG_CURSOR);
        let a = self.a();
        a.mov_imm_w(G13, flags.to_bits());
        for k in 0..4 * halves {
            a.ldr_x(G9, G12, 64 + 8 * k);
            a.str_w_reg(G13, G9, G10);
        }
        a.add_xi(G10, G10, 4);
        self.str_x(G10, CTX, SOA_GS_FLAG_CURSOR);
        self.ldr_w(G9, CTX, SOA_GS_SLOTS_HIT);
        self.a().orr_wi(G9, G9, 1 << s);
        self.str_w(G9, CTX, SOA_GS_SLOTS_HIT);
        Ok(())
    }

    /// Lane masks: `waiting` and `pending` := 0. Clobbers x10, x11, S[0].
    fn clear_waiting(&mut self) {
        let waiting = self.nblocks.div_ceil(16) as u32;
        let pending = self.nblocks.div_ceil(64) as i32;
        self.add_off(G10, CTX, SOA_WAITING);
        let l = self.a().new_label();
        let a = self.a();
        a.movi_zero(S[0]);
        a.mov_imm_w(G11, waiting);
        a.bind(l);
        a.str_q(S[0], G10, 0);
        a.add_xi(G10, G10, 16);
        a.subs_wi(G11, G11, 1);
        a.b_cond(Cond::Ne, l);
        for k in 0..pending {
            self.str_x(ZR, CTX, SOA_PENDING + 8 * k);
        }
    }

    /// Lane masks: leave with "diverged" at `pc` unless the lanes in the AND of the given
    /// context fields include every running lane. Clobbers w9, w10.
    fn check_owner(&mut self, fields: &[i32], pc: u32) {
        let stub = self.a().new_label();
        self.diverged.push((stub, pc));
        self.ldr_w(G9, CTX, fields[0]);
        for &f in &fields[1..] {
            self.ldr_w(G10, CTX, f);
            self.a().and_x(G9, G9, G10);
        }
        let a = self.a();
        a.bic_w(G9, MASK, G9);
        a.cbnz_w(G9, stub);
    }

    /// Store `v` to per-lane state at `[LANE + off]`; with lane masks only the running lanes
    /// (`v` then holds what was stored). Clobbers S[2], S[3].
    fn store_state(&mut self, v: Vreg, off: i32) {
        if self.simt {
            self.ldr_q(S[2], LANE, off);
            self.ldr_q(S[3], LANE, SOA_INACTIVE);
            self.a().bit_16b(v, S[2], S[3]);
        }
        self.str_q(v, LANE, off);
    }

    // ---------------------------------------------------------------- operands

    fn load_from(&mut self, d: Vreg, addr: Addr, op: &Operand, c: usize) {
        let s = 4 * op.swizzle.lane(c) as i32;
        match addr {
            Addr::Frame(off) => self.ldr_q(d, LANE, off + 8 * s),
            Addr::Bcast(base, off) => {
                let (b, o) = self.at(base, off + s, 4);
                self.a().ldr_s(d, b, o);
                self.a().dup_4s(d, d, 0);
            }
            Addr::BcastRel(base, off) => {
                self.a().add_x(G10, base, REL);
                let (b, o) = self.at(G10, off + s, 4);
                self.a().ldr_s(d, b, o);
                self.a().dup_4s(d, d, 0);
            }
        }
        if op.negate {
            self.a().eor_16b(d, d, K_SIGN);
        }
    }

    /// Per lane: the row a0 component `which` selects for `index`, transposed into
    /// `SoaContext::rel`: flushed rows through `uniforms_rel` and the offsets MOVA keeps, raw
    /// rows from the uniforms (`(index + (a0 in -128..=127 ? a0 : 0)) & 0x7F`).
    fn gather(&mut self, which: i32, index: i32, flushed: bool) {
        self.add_off(G11, LANE, SOA_A0_REL + 32 * which);
        if flushed {
            self.uniform_use.rel = true;
            self.uniform_use.flushed_rows = u128::MAX;
            self.add_off(G12, CTX, SOA_UNIFORMS_REL + 16 * index);
        } else {
            self.add_off(G12, UNI, UNI_FLOAT);
        }
        for k in 0..4 {
            let a = self.a();
            a.ldr_w(G9, G11, 4 * k as i32);
            if flushed {
                a.ldr_q_reg(R[k], G12, G9);
            } else {
                // a0_rel / 16 = 128 + the effective offset, and 128 vanishes modulo 128.
                a.lsr_wi(G9, G9, 4);
                a.add_wi(G9, G9, index as u32);
                a.and_wi(G9, G9, 0x7F);
                a.ldr_q_idx(R[k], G12, G9);
            }
        }
        self.transpose(R);
        for c in 0..4 {
            self.str_q(R[c], LANE, SOA_REL + 32 * c as i32);
        }
    }

    /// Lane masks reduced to all / none: jump to `all` if every lane of `every` is set, to
    /// `some` if some lane of `any` is (the same vector with four lanes; with eight, the AND
    /// and the OR of the halves). Clobbers S[3], w9.
    fn all_or_some(&mut self, every: Vreg, any: Vreg, all: DynamicLabel, some: DynamicLabel) {
        let a = self.a();
        a.uminv_4s(S[3], every);
        a.fmov_ws(G9, S[3]);
        a.cbnz_w(G9, all);
        a.umaxv_4s(S[3], any);
        a.fmov_ws(G9, S[3]);
        a.cbnz_w(G9, some);
    }

    /// All-ones in the lanes of the current half where `c` holds, into `d` (clobbers `t`).
    fn cond_lanes(&mut self, c: Condition, d: Vreg, t: Vreg) {
        let flag = |g: &mut Self, d: Vreg, lane: i32, want: bool| {
            g.ldr_q(d, LANE, SOA_CMP + 32 * lane);
            if !want {
                g.a().not_16b(d, d);
            }
        };
        match c.op {
            CondOp::X => flag(self, d, 0, c.ref_x),
            CondOp::Y => flag(self, d, 1, c.ref_y),
            CondOp::And | CondOp::Or => {
                flag(self, d, 0, c.ref_x);
                flag(self, t, 1, c.ref_y);
                if c.op == CondOp::And {
                    self.a().and_16b(d, d, t);
                } else {
                    self.a().orr_16b(d, d, t);
                }
            }
        }
    }

    /// `d = op(a, b)` through the masm's lane-wise `binary` (operands in v0/v1).
    fn masm_binary(&mut self, kind: BinaryKind, d: V, a: V, b: V) {
        let (d, a, b) = (vreg(d), vreg(a), vreg(b));
        debug_assert!(
            a != V1 || b == V1,
            "operand moves must not overwrite each other"
        );
        if b != V1 {
            self.a().mov_16b(V1, b);
        }
        if a != V0 {
            self.a().mov_16b(V0, a);
        }
        self.m.binary(kind, Val(0), Val(0), Val(1));
        if d != V0 {
            self.a().mov_16b(d, V0);
        }
    }

    /// EX2 or LG2 of v0 (component x as the program reads it) into P[0] on the half's four
    /// lanes: the lane recipes of `recipes::transcendental_lanes`, which the AVX2 code runs on
    /// eight. Clobbers every vector register but the pinned constants, x8-x11, x15-x17.
    fn transcendental(&mut self, op: Opcode) {
        let regs = transcendental_lanes::Regs {
            x: V0,
            out: vreg(V::P(0)),
            s: [
                V1,
                vreg(V::C),
                vreg(V::P(1)),
                vreg(V::P(2)),
                vreg(V::P(3)),
                S[0],
                S[1],
                S[2],
                S[3],
                R[0],
                vreg(V::Res(0)),
                vreg(V::Res(1)),
                vreg(V::Res(2)),
                vreg(V::Res(3)),
            ],
        };
        let mut q = self.m.lanes([R[1], R[2], R[3]]);
        let mode = q.mode();
        if op == Opcode::Ex2 {
            transcendental_lanes::ex2(&mut q.h(), mode, regs);
        } else {
            transcendental_lanes::lg2(&mut q, mode, regs);
        }
    }
}

impl LaneEmitter for Gen {
    type Label = DynamicLabel;
    type Operand = Operand;

    fn new_label(&mut self) -> DynamicLabel {
        self.a().new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a().bind(l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        self.a().b(l);
    }

    fn lane_masks(&self) -> bool {
        self.simt
    }

    fn block_start(&mut self, _index: usize, len: u32) {
        self.al_row = None;
        let l = self.exit_budget;
        let a = self.a();
        if len < 4096 {
            a.subs_xi(BUDGET, BUDGET, len);
        } else {
            a.mov_imm_w(G9, len);
            a.subs_x(BUDGET, BUDGET, G9);
        }
        a.b_cond(Cond::Lo, l);
        if self.simt {
            // The budget above is charged per block run, whichever lanes run it (at least any
            // one lane's count: a group that exceeds it reruns per vertex); the instruction
            // count is per lane: popcount(MASK) · len (MASK has four bits, or eight).
            let eight = self.eight;
            let a = self.a();
            a.lsr_wi(G9, MASK, 1);
            a.and_wi(G9, G9, 0x5555_5555);
            a.sub_w(G9, MASK, G9);
            a.lsr_wi(G10, G9, 2);
            a.and_wi(G10, G10, 0x3333_3333);
            a.and_wi(G9, G9, 0x3333_3333);
            a.add_w(G9, G9, G10);
            if eight {
                // The two nibbles' counts.
                a.lsr_wi(G10, G9, 4);
                a.add_w(G9, G9, G10);
                a.and_wi(G9, G9, 0xF);
            }
            a.mov_imm_w(G10, len);
            a.mul_x(G9, G9, G10);
            self.ldr_x(G10, CTX, SOA_GROUP_INSTRUCTIONS);
            self.a().add_x(G10, G10, G9);
            self.str_x(G10, CTX, SOA_GROUP_INSTRUCTIONS);
        }
    }

    fn mark(&mut self, pc: u32, text: String) {
        let at = self.a().offset().0;
        self.marks.push((at, pc, text));
    }

    fn begin_instruction(&mut self, node: usize, pc: u32, instr: &Instruction) {
        self.cur_pc = pc;
        self.cur_node = node;
        self.half = 0;
        if matches!(instr, Instruction::Loop { .. }) {
            self.al_row = None;
        }
    }

    fn end_instruction(&mut self, _instr: &Instruction) {
        // What follows (branches, the next block's budget check) is the whole group's.
        self.half = 0;
    }

    fn supports(&self, instr: &Instruction) -> bool {
        // EMIT only in geometry shaders with a plan (see "Geometry shaders").
        self.gs.is_some() || !matches!(instr, Instruction::Emit)
    }

    fn exit_end(&mut self) {
        if self.simt {
            let l = self.end_lanes;
            self.ldr_w(G9, CTX, SOA_ALIVE);
            let a = self.a();
            a.cmp_w(MASK, G9);
            a.b_cond(Cond::Ne, l);
        }
        if self.gs.is_some() {
            // Fewer EMITs than the group was told to expect.
            let l = self.exit_emits;
            self.ldr_w(G9, CTX, SOA_GS_LEFT);
            self.a().cbnz_w(G9, l);
        }
        let l = self.exit_done;
        self.a().b(l);
    }

    fn exit_deopt(&mut self, pc: u32) {
        self.a().mov_imm_w(G9, pc);
        self.str_w(G9, CTX, SOA_DEOPT_PC);
        let l = self.exit_deopt;
        self.a().b(l);
    }

    fn branch_bool(&mut self, b: u8, value: bool, target: DynamicLabel) {
        let a = self.a();
        a.ldrh_w(G9, UNI, UNI_BOOL);
        a.tst_wi(G9, 1 << (b & 15));
        a.b_cond(if value { Cond::Ne } else { Cond::Eq }, target);
    }

    fn branch_cond(&mut self, c: Condition, target: DynamicLabel, split: DynamicLabel, pc: u32) {
        // Eight lanes: lanes 4-7 in R[0], lanes 0-3 in S[0].
        let hi = self.eight.then(|| {
            self.half = 1;
            self.cond_lanes(c, R[0], R[1]);
            self.half = 0;
            R[0]
        });
        self.cond_lanes(c, S[0], S[1]);
        if !self.simt {
            // Without cmp-dependent branches nothing gets here; kept exact anyway: lanes
            // that disagree stop the group.
            let stub = self.a().new_label();
            self.diverged.push((stub, pc));
            let (every, any) = match hi {
                None => (S[0], S[0]),
                Some(h) => {
                    let a = self.a();
                    a.and_16b(R[1], S[0], h);
                    a.orr_16b(R[2], S[0], h);
                    (R[1], R[2])
                }
            };
            self.all_or_some(every, any, target, stub);
            return;
        }
        // w9: the running lanes that take the branch; all of them: jump, none: fall
        // through, otherwise split (w9 is what `split_enter` records).
        let a = self.a();
        a.load_const(S[1], [1, 2, 4, 8]);
        a.and_16b(S[0], S[0], S[1]);
        if let Some(h) = hi {
            a.load_const(S[1], [16, 32, 64, 128]);
            a.and_16b(h, h, S[1]);
            a.orr_16b(S[0], S[0], h);
        }
        a.addv_4s(S[0], S[0]);
        a.fmov_ws(G9, S[0]);
        a.and_x(G9, G9, MASK);
        a.cmp_w(G9, MASK);
        a.b_cond(Cond::Eq, target);
        a.cbnz_w(G9, split);
    }

    fn loop_init(&mut self, int: u8, slot: u8) {
        let i = UNI_INT + 4 * (int & 3) as i32;
        self.a().ldrb_w(G9, UNI, i + 1);
        self.str_w(G9, CTX, SOA_AL);
        self.a().ldrb_w(G9, UNI, i);
        self.str_w(G9, CTX, SOA_LOOP_COUNTERS + 4 * slot as i32);
    }

    fn loop_step(&mut self, int: u8, slot: u8, again: DynamicLabel) {
        let i = UNI_INT + 4 * (int & 3) as i32;
        let c = SOA_LOOP_COUNTERS + 4 * slot as i32;
        self.a().ldrb_w(G9, UNI, i + 2);
        self.ldr_w(G10, CTX, SOA_AL);
        self.a().add_w(G10, G10, G9);
        self.str_w(G10, CTX, SOA_AL);
        // No borrow means the counter was at least 1: iterate again (the slot is
        // re-initialised before any reuse, so the wrapped value is never read).
        self.ldr_w(G9, CTX, c);
        self.a().subs_wi(G9, G9, 1);
        self.str_w(G9, CTX, c);
        self.a().b_cond(Cond::Hs, again);
    }

    fn own_loop(&mut self, slot: u8) {
        self.str_w(MASK, CTX, SOA_AL_OWNER);
        self.str_w(MASK, CTX, SOA_LOOP_OWNER + 4 * slot as i32);
    }

    fn step_owned(&mut self, slot: u8, pc: u32) {
        self.check_owner(&[SOA_AL_OWNER, SOA_LOOP_OWNER + 4 * slot as i32], pc);
        self.own_loop(slot);
    }

    /// Jump to `otherwise` if some lane waits at block `b` or before it (conservatively, if
    /// any lane waits, for blocks beyond the first 63). Clobbers x9, x10.
    fn unless_lowest(&mut self, b: usize, otherwise: DynamicLabel) {
        if b < 63 {
            self.ldr_x(G9, CTX, SOA_PENDING);
            let a = self.a();
            a.mov_imm_x(G10, (1u64 << (b + 1)) - 1);
            a.and_x(G9, G9, G10);
            a.cbnz_x(G9, otherwise);
        } else {
            self.ldr_w(G9, CTX, SOA_ALIVE);
            let a = self.a();
            a.cmp_w(MASK, G9);
            a.b_cond(Cond::Ne, otherwise);
        }
    }

    fn park(&mut self, b: usize) {
        let (byte, word, bit) = (
            SOA_WAITING + b as i32,
            SOA_PENDING + 8 * (b / 64) as i32,
            b % 64,
        );
        let (base, off) = self.at(CTX, byte, 1);
        let a = self.a();
        a.ldrb_w(G9, base, off);
        a.orr_w(G9, G9, MASK);
        a.strb_w(G9, base, off);
        self.ldr_x(G9, CTX, word);
        self.a().mov_imm_x(G10, 1 << bit);
        self.a().orr_x(G9, G9, G10);
        self.str_x(G9, CTX, word);
    }

    fn activate_and_jump(&mut self, l: DynamicLabel) {
        let set_inactive = self.set_inactive;
        let a = self.a();
        a.bl(set_inactive);
        a.b(l);
    }

    /// w9: the running lanes that take the branch (neither none nor all of them).
    fn split_enter(&mut self) {
        self.str_w(G9, CTX, SOA_SPLIT);
        self.str_w(MASK, CTX, SOA_SPLIT + 4);
        self.ldr_w(G9, CTX, SOA_SPLIT + 8);
        self.a().add_wi(G9, G9, 1);
        self.str_w(G9, CTX, SOA_SPLIT + 8);
    }

    fn split_lanes(&mut self, taken: bool) {
        self.ldr_w(MASK, CTX, SOA_SPLIT);
        if !taken {
            self.ldr_w(G9, CTX, SOA_SPLIT + 4);
            self.a().bic_w(MASK, G9, MASK);
        }
    }

    /// The scheduler: run the lowest block any lane waits at, with the lanes that wait
    /// there, through the jump table (one `b` per block); nothing waiting: every lane of the
    /// half reached END. Clobbers x9-x12, x16, x30.
    fn dispatch(&mut self, table: DynamicLabel) {
        let (done, set_inactive) = (self.exit_done, self.set_inactive);
        let words = self.nblocks.div_ceil(64) as u32;
        let (scan, found) = (self.a().new_label(), self.a().new_label());
        self.add_off(G12, CTX, SOA_PENDING);
        let a = self.a();
        a.movz_x(G11, 0, 0);
        a.bind(scan);
        a.ldr_x_idx(G9, G12, G11);
        a.cbnz_x(G9, found);
        a.add_xi(G11, G11, 1);
        a.cmp_xi(G11, words);
        a.b_cond(Cond::Lo, scan);
        a.b(done);
        a.bind(found);
        a.rbit_x(G10, G9);
        a.clz_x(G10, G10); // lowest waiting block of the word
        a.sub_xi(G16, G9, 1);
        a.and_x(G9, G9, G16);
        a.lsl_xi(G16, G11, 3);
        a.add_x(G16, G12, G16);
        a.str_x(G9, G16, 0);
        a.lsl_xi(G11, G11, 6);
        a.add_x(G10, G10, G11); // the block
        self.add_off(G12, CTX, SOA_WAITING);
        let a = self.a();
        a.add_x(G12, G12, G10);
        a.ldrb_w(MASK, G12, 0);
        a.strb_w(ZR, G12, 0);
        a.bl(set_inactive);
        a.adr(G12, table);
        a.lsl_xi(G10, G10, 2);
        a.add_x(G12, G12, G10);
        a.br(G12);
    }

    fn masked_tail(&mut self, table: DynamicLabel, blocks: &[DynamicLabel]) -> CompileResult<()> {
        // END for some of the lanes.
        let end_lanes = self.end_lanes;
        self.a().bind(end_lanes);
        self.ldr_w(G9, CTX, SOA_ALIVE);
        self.a().bic_w(G9, G9, MASK);
        self.str_w(G9, CTX, SOA_ALIVE);
        self.dispatch(table);
        // set_inactive: `inactive` := all-ones in the lanes whose MASK bit is clear (eight
        // lanes: lanes 4-7 of both halves' `inactive` from MASK bits 4-7).
        // Clobbers S[0], S[1].
        let set_inactive = self.set_inactive;
        let a = self.a();
        a.bind(set_inactive);
        a.dup_4s_w(S[0], MASK);
        if self.eight {
            let a = self.a();
            a.load_const(S[1], [16, 32, 64, 128]);
            a.and_16b(S[1], S[0], S[1]);
            a.cmeq_4s_zero(S[1], S[1]);
            self.str_q(S[1], LANE, SOA_INACTIVE + 16);
        }
        let a = self.a();
        a.load_const(S[1], [1, 2, 4, 8]);
        a.and_16b(S[0], S[0], S[1]);
        a.cmeq_4s_zero(S[0], S[0]);
        self.str_q(S[0], LANE, SOA_INACTIVE);
        self.a().ret(LR);
        // One `b` per block.
        self.a().bind(table);
        for &l in blocks {
            self.a().b(l);
        }
        Ok(())
    }

    fn passes(&self) -> usize {
        if self.eight {
            2
        } else {
            1
        }
    }

    fn pass(&mut self, p: usize) {
        // The second pass runs the instruction's lane operations on lanes 4-7: the same
        // code, 16 bytes further into every per-lane array (see `lane_off`).
        self.half = p as i32;
    }

    fn operand(&mut self, src: SourceOperand) -> Operand {
        let mut flushed = None;
        let addr = match src.reg {
            SrcReg::Input(i) => {
                flushed = Some(Addr::Frame(bank_off(SOA_INPUT_FLUSHED, i)));
                Addr::Frame(bank_off(SOA_INPUT, i))
            }
            SrcReg::Temp(i) => Addr::Frame(bank_off(SOA_TEMP, i)),
            SrcReg::Const(i) => {
                let index = (i & 0x7F) as i32;
                match src.rel {
                    RelIndex::None => {
                        self.uniform_use.flushed_rows |= 1 << index;
                        flushed = Some(Addr::Bcast(CTX, SOA_UNIFORMS_FLUSHED + 16 * index));
                        Addr::Bcast(UNI, UNI_FLOAT + 16 * index)
                    }
                    RelIndex::AL => {
                        if self.al_row != Some(index) {
                            if self.simt && self.al_row.is_none() {
                                self.check_owner(&[SOA_AL_OWNER], self.cur_pc);
                            }
                            self.ldr_w(G9, CTX, SOA_AL);
                            let a = self.a();
                            rows::rel_row(a, G9, G10, index as u32);
                            a.lsl_wi(G9, G9, 4);
                            a.mov_w(REL, G9);
                            self.al_row = Some(index);
                        }
                        self.uniform_use.flushed_rows = u128::MAX;
                        flushed = Some(Addr::BcastRel(CTX, SOA_UNIFORMS_FLUSHED));
                        Addr::BcastRel(UNI, UNI_FLOAT)
                    }
                    RelIndex::A0X | RelIndex::A0Y => {
                        let which = (src.rel == RelIndex::A0Y) as i32;
                        self.gather(which, index, src.flushing);
                        if src.flushing {
                            flushed = Some(Addr::Frame(SOA_REL));
                        }
                        Addr::Frame(SOA_REL)
                    }
                }
            }
        };
        Operand {
            addr,
            flushed,
            swizzle: src.d.swizzle(src.n),
            negate: src.d.neg(src.n),
        }
    }

    fn load(&mut self, d: V, op: &Operand, c: usize) {
        self.load_from(vreg(d), op.addr, op, c);
    }

    fn load_flushed(&mut self, d: V, op: &Operand, c: usize) {
        let d = vreg(d);
        match op.flushed {
            Some(f) => self.load_from(d, f, op, c),
            None => {
                self.load_from(d, op.addr, op, c);
                self.m.flush(d);
            }
        }
    }

    fn tiny_free(&self, _op: &Operand, _c: usize) -> bool {
        // Not tracked here: every flushing read flushes (or reads a flushed copy).
        false
    }

    fn one(&mut self, d: V) {
        self.a().mov_16b(vreg(d), K_ONE);
    }

    fn store_results(&mut self, dst: DstReg, mask: [bool; 4], res: [V; 4], _tiny: [bool; 4]) {
        let off = match dst {
            DstReg::Output(i) => bank_off(SOA_OUTPUT, i),
            DstReg::Temp(i) => bank_off(SOA_TEMP, i),
        };
        for c in 0..4 {
            if mask[c] {
                self.store_state(vreg(res[c]), off + 32 * c as i32);
            }
        }
    }

    fn note_mov(&mut self, _dst: DstReg, _src: SrcReg, _op: &Operand, _mask: [bool; 4]) {}

    fn add(&mut self, d: V, a: V, b: V) {
        self.masm_binary(BinaryKind::Add, d, a, b);
    }

    fn mul(&mut self, d: V, a: V, b: V) {
        self.masm_binary(BinaryKind::Mul, d, a, b);
    }

    fn select(&mut self, op: Select, d: V, a: V, b: V) {
        let kind = match op {
            Select::Max => BinaryKind::Max,
            Select::Min => BinaryKind::Min,
            Select::Sge => BinaryKind::Sge,
            Select::Slt => BinaryKind::Slt,
        };
        self.masm_binary(kind, d, a, b);
    }

    fn flr(&mut self, d: V, a: V) {
        let (d, a) = (vreg(d), vreg(a));
        if a != V0 {
            self.a().mov_16b(V0, a);
        }
        self.m.flr(Val(0), Val(0));
        if d != V0 {
            self.a().mov_16b(d, V0);
        }
    }

    fn scalar(&mut self, op: Opcode, s: &Operand) {
        match op {
            Opcode::Rcp | Opcode::Rsq => {
                // The recipes flush their operand (so a negated source gives flush(-x), as RCP
                // and RSQ must see). They read the source through the input flush, so an
                // input's raw bank may not be filled: the flushed copy is read
                // (flush(-flush(x)) is flush(-x)).
                let kind = if op == Opcode::Rcp {
                    ScalarKind::Rcp
                } else {
                    ScalarKind::Rsq
                };
                let (src, out) = (vreg(V::Res(0)), vreg(V::P(0)));
                self.load_from(src, s.flushed.unwrap_or(s.addr), s, 0);
                self.m.reciprocal_lanes(kind, out, src);
            }
            _ => {
                // EX2 and LG2: the lane recipes flush their operand themselves, so the raw
                // bank is read as it is.
                self.load_from(V0, s.addr, s, 0);
                self.transcendental(op);
            }
        }
    }

    fn litp(&mut self, part: Lit, d: V, a: V) {
        recipes::lit::lane(&mut self.m.neon(S[2]), part, vreg(d), vreg(a), S[0]);
    }

    fn mova(&mut self, _c: usize, d: V, a: V) {
        recipes::convert::mova(&mut self.m.neon(S[1]), vreg(d), vreg(a), S[0]);
    }

    fn store_a0(&mut self, c: usize, v: V) {
        let v = vreg(v);
        let c = c as i32;
        // Masked, `v` keeps the inactive lanes' a0, so their row offsets are recomputed
        // unchanged.
        self.store_state(v, SOA_A0 + 32 * c);
        recipes::address::a0_row_offset(&mut self.m.neon(S[3]), S[0], v, [S[1], S[2]]);
        self.str_q(S[0], LANE, SOA_A0_REL + 32 * c);
    }

    fn cmp_mask(&mut self, d: V, op: CmpOp, a: V, b: V) {
        let (d, a, b) = (vreg(d), vreg(a), vreg(b));
        recipes::compare::cmp_mask_lanes(&mut self.m.neon(S[0]), op, d, a, b);
    }

    fn store_cmp(&mut self, c: usize, v: V) {
        self.store_state(vreg(v), SOA_CMP + 32 * c as i32);
    }

    fn emit(&mut self, pc: u32) -> CompileResult<()> {
        if self.gs.is_none() {
            return Err(CompileError::Internal(format!(
                "EMIT at 0x{pc:03x} in NEON lane code of a vertex shader"
            )));
        }
        self.gs_emit(pc)
    }

    fn zero(&mut self, d: V) {
        self.a().movi_zero(vreg(d));
    }
}
