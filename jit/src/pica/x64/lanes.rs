//! The AVX2 SoA code generator: one PICA register component of eight vertices per ymm register.
//!
//! # Code shape
//!
//! Offset 0 is the only entry, an `extern "sysv64" fn(*mut SoaContext) -> u32`. It loops over
//! groups of eight rows: transposes the input registers the program reads into
//! `SoaContext::input`, zeroes the working registers, `call`s the body, and on status done
//! transposes the output registers the program writes back into the rows (the others are
//! written as zeros, which is what a per-vertex run leaves there). The body's exits `ret` with
//! a status in `eax`; any status but done leaves the loop with `batch_done` at the group.
//!
//! # Registers
//!
//! | register | role |
//! |---|---|
//! | `rbx` | the `SoaContext` (all SoA registers live there, addressed `[rbx + disp32]`) |
//! | `r15` | `Uniforms` |
//! | `r13` | instructions left for the group (one invocation's budget) |
//! | `rbp` | [`HOT_BASE`]: the most used fix-up constants, reached with 8-bit displacements |
//! | `r14` | output rows of the current group (entry loop only) |
//! | `r9` | input rows of the current group (entry loop, before the body) |
//! | `r11` | row offset of the aL-relative source of the current instruction |
//! | `r12` | programs with cmp-dependent branches: the lanes running the current block (bit k = lane k) |
//! | `rax rcx rdx rsi rdi r8-r10` | scratch |
//! | `ymm0-ymm2` | source components (`A`, `B`, `C`) |
//! | `ymm3-ymm6` | products and partial sums (`P`), RSQ/RCP working values |
//! | `ymm7-ymm11` | scratch of the fix-ups and f64 paths (`T0`-`T4`) |
//! | `ymm12-ymm15` | result components (`RES`), stored after all are computed, because a
//! destination may also be a source read by a later component |
//!
//! Nothing is live in vector registers across PICA instructions, so EX2 and LG2 may use all
//! sixteen without spilling anything.
//!
//! # Divergence
//!
//! Programs with cmp-dependent branches (IFC, CALLC, JMPC, BREAKC) run with lane masks, the
//! way GPUs run divergent code. `r12` holds the lanes running the current block and
//! `SoaContext::inactive` the same as a vector mask; every store of per-lane state
//! (temporaries, outputs, cmp, a0) blends the new value into the running lanes only. Values
//! computed in the other lanes are never stored, so reading whatever those lanes hold is
//! harmless (every instruction sequence here is safe on any bit pattern).
//!
//! * A branch whose running lanes disagree *splits*: each set of lanes records the block it
//!   continues at (`waiting[block] |= lanes`, bit `block` of `pending`), then the
//!   *scheduler* picks the lowest block any lane waits at (`bsf` over `pending`), runs it
//!   with all lanes waiting there, and jumps through a table of `jmp rel32` slots. Blocks are
//!   in program order, so the two arms of an IF meet at the join, and lanes still in a loop
//!   run before those that left it.
//! * Any jump goes straight on, without the scheduler, when its target is the lowest block
//!   any lane waits at: always when nothing waits or the jump goes backward (every waiting
//!   lane waits after the current block, which was the lowest). A split's arm likely to
//!   continue lowest (the nearer target, a BREAKC's next iteration) is handled last so that
//!   it too can go straight on.
//! * END for some lanes takes them out of `alive`; the group is done when nothing waits.
//! * Any order of running the waiting lanes is correct, since each lane follows its own
//!   path; the order matters only for how often lanes run together. State kept once per
//!   group is guarded instead: aL and each loop counter are *owned* by the lanes that last
//!   set them (LOOP, end of a loop body). A block that reads aL (relative addressing) or
//!   steps a loop with a lane that does not own the value stops the group, which then reruns
//!   per vertex. That happens only after lanes left a loop at different iterations and one
//!   of them uses aL or an enclosing loop afterwards.
//! * The instruction count is kept per lane (`popcnt` of the running lanes times the block's
//!   length); the budget is charged per block run, which is at least any lane's count, so
//!   a group it stops reruns per vertex with exact results and errors.
//! * A group that stops leaves lanes waiting; its exit clears `waiting` and `pending`, which
//!   are all zero between groups.

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]
#![allow(
    clippy::needless_range_loop,
    reason = "component indices address masks, swizzles and register arrays in parallel"
)]

use crate::error::{CompileError, CompileResult};
use crate::host::x64::abi::{Frame, CALLEE_SAVED};
use crate::host::x64::asm::{Asm, Mem};
use crate::host::x64::lanes::{X64Lanes, Y256};
use crate::host::x64::regs::*;
use crate::host::x64::vex::{Yasm, Ymm, HOT_BASE};
use crate::pica::analysis::points::GsPlan;
use crate::pica::analysis::usage::{has_lane_branches, Usage};
use crate::pica::layout::*;
use crate::pica::lower::{LaneEmitter, LaneProgram, Select, SourceOperand, V};
use crate::pica::recipes::lit::Lit;
use crate::pica::recipes::reciprocal::{self, LaneSet};
use crate::pica::recipes::transcendental_lanes::{self, Halves};
use crate::pica::recipes::{
    self, Float, Lanes, Src, ABS, F24_MIN_M1, F24_OVF_M1, F32_MIN_M1, INF, MANT, ONE, QNAN64, SIGN,
    TRUNC17,
};
use crate::pica::x64::masm::mode_mxcsr;
use crate::pica::x64::rows;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi};
use picajit_interp::pica::float::precision::{F24_GRID_F64, F24_ULP_F64};
use picajit_interp::pica::float::{FloatMode, MaxRule, Rounding};
use picajit_interp::pica::isa::{
    CmpOp, CondOp, Condition, DstReg, Instruction, Opcode, RelIndex, SrcReg, Swizzle,
};

use crate::host::x64::asm::x64;

/// The entry's frame: every callee-saved register (the lane code uses them all), the context
/// pointer in rbx.
const ENTRY_FRAME: Frame<'static> = Frame {
    saved: &CALLEE_SAVED,
    locals: 0,
    context: Some(RBX),
};

/// How many groups ahead the group entry prefetches input rows.
const PREFETCH_GROUPS: i32 = 2;

const ABS64: u64 = 0x7FFF_FFFF_FFFF_FFFF;
const INF64: u64 = 0x7FF0_0000_0000_0000;

/// One unit in the 17th significant bit of an f64.
const ULP17: u64 = F24_ULP_F64;
/// f64 bits with the fraction bits below the 17-bit grid cleared.
const GRID17: u64 = F24_GRID_F64;

/// Source components.
const A: Ymm = Ymm(0);
const B: Ymm = Ymm(1);
const C: Ymm = Ymm(2);
/// Products / working values.
const P: [Ymm; 4] = [Ymm(3), Ymm(4), Ymm(5), Ymm(6)];
const T0: Ymm = Ymm(7);
const T1: Ymm = Ymm(8);
const T2: Ymm = Ymm(9);
const T3: Ymm = Ymm(10);
const T4: Ymm = Ymm(11);
/// Result components.
const RES: [Ymm; 4] = [Ymm(12), Ymm(13), Ymm(14), Ymm(15)];

/// Instructions left for the group.
const BUDGET: Gpr = R13;

/// Input rows of the current group, in the entry loop (a scratch register: only the
/// transposes before the body read it).
const ROWS_IN: Gpr = R9;

/// Row-offset register of an aL-relative source.
const REL_GPR: Gpr = R11;

/// Scratch of the masked state stores (free wherever per-lane state is stored).
const MS0: Ymm = P[2];
const MS1: Ymm = P[3];

/// Where the components of a source operand are read.
#[derive(Clone, Copy, Debug)]
enum Addr {
    /// Eight lanes per component at `[rbx + off + 32·component]`.
    Frame(i32),
    /// One value for all lanes at `mem + 4·component` (uniforms), broadcast.
    Bcast(Mem),
}

/// A prepared source operand.
#[derive(Clone, Copy, Debug)]
struct Operand {
    addr: Addr,
    /// Where the same components are stored with the input flush applied, if anywhere.
    flushed: Option<Addr>,
    /// The temporary register it reads (for the tiny-free tracking of [`Gen::known`]).
    temp: Option<u8>,
    swizzle: Swizzle,
    negate: bool,
}

/// Out-of-line rare cases of the fix-ups (`recipes::fixup_slow` of `v`, with the operands of
/// a product).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cold {
    v: Ymm,
    mul: Option<(Ymm, Ymm)>,
}

fn bank_off(bank: i32, reg: u8) -> i32 {
    bank + (reg as i32 & 15) * 4 * 32
}

struct Gen {
    a: Asm,
    mode: FloatMode,
    /// Blocks of the program (entries of the scheduler's jump table).
    nblocks: usize,
    exit_done: DynamicLabel,
    exit_deopt: DynamicLabel,
    exit_budget: DynamicLabel,
    exit_diverged: DynamicLabel,
    cold: Vec<(DynamicLabel, DynamicLabel, Cold)>,
    /// Out-of-line stubs that record the PC where lanes needed an aL or loop counter they do
    /// not own, and leave with [`STATUS_DIVERGED`].
    diverged: Vec<(DynamicLabel, u32)>,
    marks: Vec<Mark>,
    /// Per temporary register, the components known to be *tiny-free* at this point of the
    /// current block (bit c = component c): +0, -0, or at least the mode's smallest normal
    /// in magnitude (or inf/NaN), so that the input flush would change at most the sign of a
    /// zero, which no flushing operation can observe (their zero results are +0 whatever
    /// the signs). Every fix-up result is tiny-free; flushes of such values are skipped.
    /// Cleared at each block start (other paths may reach it).
    known: [u8; 16],
    /// Per temporary component, within the current block: where a copy of its value with
    /// the input flush applied is (a flushed input bank or flushed uniform row, and the
    /// component there), when it was last written by a MOV of such a source. Flushing reads
    /// of it then load that copy instead of flushing (skinning MOVs positions into
    /// temporaries that several DP4s read).
    alias: [[Option<(Addr, u8)>; 4]; 16],
    /// Inputs whose flushed bank each group fills ([`Usage::inputs_flushed`]).
    inputs_flushed: u16,
    /// What the code reads of the per-call uniform copies.
    uniform_use: UniformUse,
    /// The program has cmp-dependent branches, so lanes may diverge: masked execution (see
    /// "Divergence" in the module docs).
    simt: bool,
    /// PC of the instruction being generated.
    cur_pc: u32,
    /// Within the current block: the index whose aL-relative row offset [`REL_GPR`] holds
    /// (aL only changes at block boundaries and LOOP), ownership of aL already checked.
    al_row: Option<i32>,
    /// RES[0] and RES[1] hold the cmp flags as stored (the previous instruction was CMP).
    cmp_in_res: bool,
    /// Shared routines of masked execution.
    set_inactive: DynamicLabel,
    end_lanes: DynamicLabel,
    /// Geometry shaders: what [`crate::pica::analysis::points::plan`] proved (EMITs write vertices).
    gs: Option<GsPlan>,
    /// Vertex shaders: every group starts from the unit state in `SoaContext::start_*`
    /// (`CompiledShader::run_batch_from`) instead of the clean state.
    from_state: bool,
    /// The MAX reading (`picajit_interp::pica::float::MaxRule`).
    max_rule: MaxRule,
    /// Geometry shaders: leave with [`STATUS_EMITS`].
    exit_emits: DynamicLabel,
    /// Node of the instruction being generated.
    cur_node: usize,
}

/// The eight constants the fix-ups of `mode` use most (counted over the examples), reached
/// through [`HOT_BASE`]: the input flush and the range/NaN tests of every result in F24 RTZ
/// and F32, the f64 rounding of F24 RNE.
fn hot_constants(mode: FloatMode) -> Vec<[u32; 8]> {
    let s = |v: u32| [v; 8];
    let d = |v: u64| {
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        [lo, hi, lo, hi, lo, hi, lo, hi]
    };
    match mode {
        FloatMode::F24(Rounding::TowardZero) => vec![
            s(ABS),
            s(F24_MIN_M1),
            s(F24_OVF_M1),
            s(TRUNC17),
            s(INF),
            s(ABS & TRUNC17),
            s(MANT),
            s(ONE),
        ],
        FloatMode::F24(Rounding::NearestEven) => vec![
            s(ABS),
            d(1),
            d(GRID17),
            d(ABS64),
            d(INF64),
            d(QNAN64),
            d(ULP17 / 2 - 1),
            s(INF),
        ],
        FloatMode::F32 => vec![
            s(ABS),
            s(INF),
            s(F32_MIN_M1),
            s(ABS & TRUNC17),
            d(1),
            s(ONE),
            s(SIGN),
            d(0x4330_0000_0000_0000),
        ],
    }
}

/// Generate the SoA code of an eligible program: `(code, instruction bytes, marks, what it
/// reads of the per-call uniform copies)`.
pub fn generate(job: LaneProgram<'_>) -> CompileResult<(Vec<u8>, usize, Vec<Mark>, UniformUse)> {
    let LaneProgram {
        program,
        analysis,
        mode,
        max_rule,
        gs,
        from_state,
    } = job;
    let mut a = Asm::new();
    a.hot32 = hot_constants(mode);
    a.hot_label = Some(a.new_label());
    let (exit_done, exit_deopt, exit_budget, exit_diverged) =
        (a.new_label(), a.new_label(), a.new_label(), a.new_label());
    let (set_inactive, end_lanes) = (a.new_label(), a.new_label());
    let exit_emits = a.new_label();
    let simt = has_lane_branches(analysis);
    let mut g = Gen {
        a,
        mode,
        nblocks: analysis.blocks.len(),
        exit_done,
        exit_deopt,
        exit_budget,
        exit_diverged,
        cold: Vec::new(),
        diverged: Vec::new(),
        marks: Vec::new(),
        known: [0; 16],
        alias: [[None; 4]; 16],
        inputs_flushed: 0,
        uniform_use: UniformUse::default(),
        simt,
        cur_pc: 0,
        al_row: None,
        cmp_in_res: false,
        set_inactive,
        end_lanes,
        gs: gs.cloned(),
        exit_emits,
        cur_node: 0,
        from_state,
        max_rule,
    };
    if g.gs.is_some() && simt {
        return Err(CompileError::Internal(
            "geometry SoA code with lane masks".into(),
        ));
    }
    let usage = crate::pica::analysis::usage::usage(program, analysis);
    g.inputs_flushed = usage.inputs_flushed;
    let body = g.a.new_label();
    g.entry(usage, body);
    g.a.align16();
    g.a.bind(body);
    crate::pica::lower::lower_lanes(&mut g, program, analysis)?;
    g.exits();
    g.emit_cold();
    let (code, len) = g.a.finish().map_err(CompileError::Internal)?;
    Ok((code, len, g.marks, g.uniform_use))
}

impl Gen {
    fn y(&mut self) -> Yasm<'_> {
        Yasm::new(&mut self.a)
    }

    fn is_rne(&self) -> bool {
        self.mode == FloatMode::F24(Rounding::NearestEven)
    }

    // ---------------------------------------------------------------- entry and group loop

    fn entry(&mut self, usage: Usage, body: DynamicLabel) {
        let mxcsr = self.a.splat(mode_mxcsr(self.mode));
        let top = self.a.new_label();
        let finished = self.a.new_label();
        let epilogue = self.a.new_label();
        let a = &mut self.a;
        ENTRY_FRAME.enter(a);
        if let Some(hot) = a.hot_label {
            a.lea_label(HOT_BASE, hot);
        }
        a.mov_rm64(R15, RBX, SOA_UNIFORMS);
        a.stmxcsr(RBX, SOA_SAVED_MXCSR);
        a.ldmxcsr(mxcsr);
        a.bind(top);
        a.mov_rm64(RAX, RBX, SOA_BATCH_DONE);
        x64!(a.ops; lea rcx, [rax + LANES as i32]);
        a.cmp_rm64(RCX, RBX, SOA_BATCH_COUNT);
        x64!(a.ops; ja =>finished);
        a.shl_ri64(RAX, 8);
        a.mov_rm64(ROWS_IN, RBX, SOA_BATCH_INPUT);
        a.add_rr64(ROWS_IN, RAX);
        a.mov_rm64(R14, RBX, SOA_BATCH_OUTPUT);
        a.add_rr64(R14, RAX);
        // The input lines the group after next reads: the transposes below were where a
        // 4096-vertex `mvp` batch spent a quarter of its time, waiting for the rows (each
        // row is 256 bytes, so the hardware prefetchers see a sparse stream). A prefetch
        // past the end of the batch is harmless: it never faults.
        // The same for the output lines the program writes: the group's stores then find
        // their lines in cache (on a line no other core holds, a read brings it in exclusive,
        // so the store needs no further request).
        let ahead = PREFETCH_GROUPS * 256 * LANES as i32;
        let inputs = usage.inputs_raw | usage.inputs_flushed;
        for line in 0..4 {
            if (inputs >> (4 * line)) & 0xF != 0 {
                for k in 0..LANES as i32 {
                    a.prefetcht0(ROWS_IN, ahead + 256 * k + 64 * line);
                }
            }
        }
        if self.gs.is_none() {
            for line in 0..4 {
                if (usage.outputs >> (4 * line)) & 0xF != 0 {
                    for k in 0..LANES as i32 {
                        a.prefetcht0(R14, ahead + 256 * k + 64 * line);
                    }
                }
            }
        }
        for i in 0..16u8 {
            let bit = 1 << i;
            if (usage.inputs_raw | usage.inputs_flushed) & bit != 0 {
                self.transpose_rows_in(
                    |k| Mem::Base(ROWS_IN, 256 * k as i32 + 16 * i as i32),
                    (usage.inputs_raw & bit != 0).then_some(bank_off(SOA_INPUT, i)),
                    (usage.inputs_flushed & bit != 0).then_some(bank_off(SOA_INPUT_FLUSHED, i)),
                );
            }
        }
        if self.gs.is_some() {
            // Geometry shaders carry their registers over, which the caller put in the
            // context once per call (see `geometry`); the group's vertices go to the next
            // `8·E` places of the emit buffer, lane k's from place `k·E` on.
            self.gs_group_start();
        } else {
            self.vs_group_start(&usage);
        }
        let a = &mut self.a;
        a.mov_rm64(BUDGET, RBX, SOA_BUDGET);
        a.call_label(body);
        a.test_rr32(RAX, RAX);
        a.jne(epilogue);
        if self.gs.is_none() {
            self.vs_group_end(&usage);
        }
        let a = &mut self.a;
        if self.simt {
            a.mov_rm64(RAX, RBX, SOA_GROUP_INSTRUCTIONS);
        } else {
            a.mov_rm64(RAX, RBX, SOA_BUDGET);
            a.sub_rr64(RAX, BUDGET);
            a.shl_ri64(RAX, 3); // eight vertices, each the same count
        }
        a.add_mr64(RBX, SOA_BATCH_INSTRUCTIONS, RAX);
        if self.simt {
            a.mov_rm32(RAX, RBX, SOA_SPLIT + 8);
            a.add_mr64(RBX, SOA_BATCH_SPLITS, RAX);
        }
        a.add_mi64(RBX, SOA_BATCH_DONE, LANES as i8);
        a.jmp(top);
        a.bind(finished);
        a.xor_rr32(RAX, RAX);
        a.bind(epilogue);
        self.y().vzeroupper();
        let a = &mut self.a;
        a.ldmxcsr(Mem::Base(RBX, SOA_SAVED_MXCSR));
        ENTRY_FRAME.ret(a);
    }

    /// Geometry shaders, per group: each lane's first row and flags word, E EMITs to go.
    fn gs_group_start(&mut self) {
        let a = &mut self.a;
        x64!(a.ops
            ; mov rax, QWORD [rbx + SOA_GS_ROWS_NEXT]
            ; mov rcx, QWORD [rbx + SOA_GS_ROW_STRIDE]
            ; mov rdx, QWORD [rbx + SOA_GS_FLAGS_NEXT]
            ; mov rsi, QWORD [rbx + SOA_GS_FLAG_STRIDE]
        );
        for k in 0..LANES as i32 {
            x64!(a.ops
                ; mov QWORD [rbx + SOA_GS_LANE_ROWS + 8 * k], rax
                ; add rax, rcx
                ; mov QWORD [rbx + SOA_GS_LANE_FLAGS + 8 * k], rdx
                ; add rdx, rsi
            );
        }
        x64!(a.ops
            ; mov QWORD [rbx + SOA_GS_ROWS_NEXT], rax
            ; mov QWORD [rbx + SOA_GS_FLAGS_NEXT], rdx
            ; xor eax, eax
            ; mov QWORD [rbx + SOA_GS_CURSOR], rax
            ; mov QWORD [rbx + SOA_GS_FLAG_CURSOR], rax
            ; mov eax, DWORD [rbx + SOA_GS_EMITS]
            ; mov DWORD [rbx + SOA_GS_LEFT], eax
        );
    }

    /// Vertex shaders, per group: the working registers every invocation starts from.
    fn vs_group_start(&mut self, usage: &Usage) {
        // Every invocation starts from `Registers::reset_working_state` (a0 = 0: row offset
        // 128 of `uniforms_rel`).
        let rel0 = self.y().splat(16 * 128);
        let simt = self.simt;
        let from_state = self.from_state;
        let mut y = self.y();
        y.vxorps(T0, T0, T0);
        y.vmovups(T1, rel0);
        for i in 0..16u8 {
            for (bank, used, zero) in [
                (SOA_TEMP, usage.temps, usage.zero_temps),
                (SOA_OUTPUT, usage.outputs, usage.zero_outputs),
            ] {
                if used & (1 << i) != 0 && !(from_state && bank == SOA_TEMP) {
                    for c in 0..4 {
                        if zero[i as usize] & (1 << c) != 0 {
                            y.store(Mem::Base(RBX, bank_off(bank, i) + 32 * c), T0, true);
                        }
                    }
                }
            }
        }
        if from_state {
            // The given state instead of zeros: every temporary component some instruction
            // may read before the group writes it (written or not by the program: the
            // context's copy may hold another call's start), and a0, its row offsets, cmp.
            for i in 0..16u8 {
                for c in 0..4 {
                    if usage.zero_temps[i as usize] & (1 << c) != 0 {
                        y.vmovups(T2, Mem::Base(RBX, bank_off(SOA_START_TEMP, i) + 32 * c));
                        y.store(Mem::Base(RBX, bank_off(SOA_TEMP, i) + 32 * c), T2, true);
                    }
                }
            }
            for k in 0..2 {
                for (from, to) in [
                    (SOA_START_A0, SOA_A0),
                    (SOA_START_A0_REL, SOA_A0_REL),
                    (SOA_START_CMP, SOA_CMP),
                ] {
                    y.vmovups(T2, Mem::Base(RBX, from + 32 * k));
                    y.store(Mem::Base(RBX, to + 32 * k), T2, true);
                }
            }
        } else {
            for k in 0..2 {
                y.store(Mem::Base(RBX, SOA_A0 + 32 * k), T0, true);
                y.store(Mem::Base(RBX, SOA_A0_REL + 32 * k), T1, true);
                y.store(Mem::Base(RBX, SOA_CMP + 32 * k), T0, true);
            }
        }
        if simt {
            y.store(Mem::Base(RBX, SOA_INACTIVE), T0, true);
            let a = &mut self.a;
            x64!(a.ops
                ; mov r12d, 0xFF
                ; mov DWORD [rbx + SOA_ALIVE], 0xFF
                ; mov DWORD [rbx + SOA_AL_OWNER], 0xFF
                ; mov QWORD [rbx + SOA_GROUP_INSTRUCTIONS], 0
                ; mov DWORD [rbx + SOA_SPLIT + 8], 0
            );
            for k in 0..4 {
                a.mov_mi32(RBX, SOA_LOOP_OWNER + 4 * k, 0xFF);
            }
        }
        if self.from_state {
            let a = &mut self.a;
            x64!(a.ops
                ; mov eax, DWORD [rbx + SOA_START_AL]
                ; mov DWORD [rbx + SOA_AL], eax
            );
        } else {
            self.a.mov_mi32(RBX, SOA_AL, 0);
        }
    }

    /// Vertex shaders, after a group finished: its outputs into the rows.
    fn vs_group_end(&mut self, usage: &Usage) {
        // Only the outputs the caller asked for (`SoaContext::out_mask`) are stored: an
        // emulator reads a few of the sixteen, and the stores of the rest would cost more
        // than a short shader.
        for o in 0..16u8 {
            if usage.outputs & (1 << o) != 0 {
                let skip = self.a.new_label();
                self.a.test_mi16(RBX, SOA_OUT_MASK, 1 << o);
                self.a.je(skip);
                self.transpose_out(o);
                self.a.bind(skip);
            }
        }
        // Outputs the program never writes are +0 in every row; pairs of adjacent ones are
        // cleared with one 32-byte store when both are wanted. A caller that wants none of
        // them (an emulator's output map names registers the program writes) skips the
        // register-by-register mask tests with one test: they were about 30 instructions
        // per group of a short shader.
        let unwritten = !usage.outputs;
        if unwritten == 0 {
            return;
        }
        let done = self.a.new_label();
        self.a.test_mi16(RBX, SOA_OUT_MASK, unwritten);
        self.a.je(done);
        self.y().vxorps(T0, T0, T0);
        let mut o = 0;
        while o < 16 {
            if usage.outputs & (1 << o) != 0 {
                o += 1;
                continue;
            }
            let next = self.a.new_label();
            if o + 1 < 16 && usage.outputs & (1 << (o + 1)) == 0 {
                let singles = self.a.new_label();
                let a = &mut self.a;
                a.mov_rm32(RAX, RBX, SOA_OUT_MASK);
                a.and_ri32(RAX, 3 << o);
                a.cmp_ri32(RAX, 3 << o);
                a.jne(singles);
                let mut y = self.y();
                for k in 0..LANES as i32 {
                    y.store(Mem::Base(R14, 256 * k + 16 * o), T0, false);
                }
                self.a.jmp(next);
                self.a.bind(singles);
                self.zero_output(o);
                self.zero_output(o + 1);
                o += 2;
            } else {
                self.zero_output(o);
                o += 1;
            }
            self.a.bind(next);
        }
        self.a.bind(done);
    }

    /// o`o` := +0 in the eight output rows if the caller wants it. T0 must be zero.
    fn zero_output(&mut self, o: i32) {
        let skip = self.a.new_label();
        self.a.test_mi16(RBX, SOA_OUT_MASK, 1 << o);
        self.a.je(skip);
        let mut y = self.y();
        for k in 0..LANES as i32 {
            y.store_x(Mem::Base(R14, 256 * k + 16 * o), T0);
        }
        self.a.bind(skip);
    }

    /// Eight rows of four f32 (`row(k)` for lane k) into four component arrays at
    /// `[rbx + dst]`, and flushed (rule 1) at `[rbx + flushed]`. Clobbers ymm0-ymm7.
    fn transpose_rows_in(
        &mut self,
        row: impl Fn(usize) -> Mem,
        dst: Option<i32>,
        flushed: Option<i32>,
    ) {
        let mut y = self.y();
        for j in 0..4 {
            y.load_x(Ymm(j as u8), row(j));
            y.load_x(Ymm(4 + j as u8), row(j + 4));
            y.vinsertf128_hi(Ymm(j as u8), Ymm(j as u8), Ymm(4 + j as u8));
        }
        // (r0|r4), (r1|r5), (r2|r6), (r3|r7) → x, y, z, w.
        y.vunpcklps(Ymm(4), Ymm(0), Ymm(1)); // x0 x1 y0 y1 | x4 x5 y4 y5
        y.vunpckhps(Ymm(5), Ymm(0), Ymm(1)); // z0 z1 w0 w1 | …
        y.vunpcklps(Ymm(6), Ymm(2), Ymm(3)); // x2 x3 y2 y3 | …
        y.vunpckhps(Ymm(7), Ymm(2), Ymm(3)); // z2 z3 w2 w3 | …
        y.vunpcklpd(Ymm(0), Ymm(4), Ymm(6));
        y.vunpckhpd(Ymm(1), Ymm(4), Ymm(6));
        y.vunpcklpd(Ymm(2), Ymm(5), Ymm(7));
        y.vunpckhpd(Ymm(3), Ymm(5), Ymm(7));
        for c in 0..4 {
            if let Some(dst) = dst {
                self.y()
                    .store(Mem::Base(RBX, dst + 32 * c), Ymm(c as u8), true);
            }
            if let Some(f) = flushed {
                self.flush(Ymm(c as u8));
                self.y()
                    .store(Mem::Base(RBX, f + 32 * c), Ymm(c as u8), true);
            }
        }
    }

    /// EMIT in a geometry shader: each lane's vertex (the output registers the caller keeps,
    /// `SoaContext::gs_row_off`) and flags into its next place in the emit buffer, and the
    /// rows `pica/batch/geometry.rs` rebuilds the final state from. An EMIT beyond the E the group
    /// expects leaves with [`STATUS_EMITS`] before writing anything.
    fn gs_emit(&mut self, pc: u32) -> CompileResult<()> {
        let gs = self.gs.as_ref().expect("geometry shader");
        let flags = gs.emit_flags[self.cur_node].ok_or_else(|| {
            CompileError::Internal(format!("EMIT at 0x{pc:03x} has no SETEMIT parameters"))
        })?;
        let written = gs.written_outputs;
        let s = i32::from(flags.slot & 3);
        let over = self.exit_emits;
        x64!(self.a.ops
            ; mov eax, DWORD [rbx + SOA_GS_LEFT]
            ; sub eax, 1
            ; jb =>over
            ; mov DWORD [rbx + SOA_GS_LEFT], eax
            ; mov rdx, QWORD [rbx + SOA_GS_CURSOR]
        );
        for o in 0..16u8 {
            if written & (1 << o) == 0 {
                continue;
            }
            self.transpose_rows(o);
            let skip = self.a.new_label();
            let r = i32::from(o);
            x64!(self.a.ops
                ; movsxd rax, DWORD [rbx + SOA_GS_ROW_OFF + 4 * r]
                ; test rax, rax
                ; js =>skip
                ; add rax, rdx
            );
            for k in 0..LANES as i32 {
                x64!(self.a.ops; mov rsi, QWORD [rbx + SOA_GS_LANE_ROWS + 8 * k]);
                self.y().store_x(Mem::Index(RSI, RAX, 0), Ymm(k as u8));
            }
            self.a.bind(skip);
            let mut y = self.y();
            y.load_x(Ymm(8), Mem::Base(RBX, SOA_GS_LAST7 + 16 * r));
            y.store_x(Mem::Base(RBX, SOA_GS_PREV7 + 16 * r), Ymm(8));
            y.store_x(Mem::Base(RBX, SOA_GS_LAST7 + 16 * r), Ymm(7));
            y.store_x(Mem::Base(RBX, SOA_GS_LAST6 + 16 * r), Ymm(6));
            y.store_x(Mem::Base(RBX, SOA_GS_SLOT7 + 256 * s + 16 * r), Ymm(7));
        }
        let bits = flags.to_bits() as i32;
        x64!(self.a.ops
            ; add rdx, QWORD [rbx + SOA_GS_VSIZE]
            ; mov QWORD [rbx + SOA_GS_CURSOR], rdx
            ; mov rax, QWORD [rbx + SOA_GS_FLAG_CURSOR]
        );
        for k in 0..LANES as i32 {
            x64!(self.a.ops
                ; mov rsi, QWORD [rbx + SOA_GS_LANE_FLAGS + 8 * k]
                ; mov DWORD [rsi + rax], bits
            );
        }
        x64!(self.a.ops
            ; add rax, 4
            ; mov QWORD [rbx + SOA_GS_FLAG_CURSOR], rax
            ; or DWORD [rbx + SOA_GS_SLOTS_HIT], 1 << s
        );
        // The vector registers now hold rows, not the cmp flags.
        self.cmp_in_res = false;
        Ok(())
    }

    /// The eight lanes' rows of o`o`: lane k's in the low half of ymm`k`. Clobbers ymm0-ymm7.
    fn transpose_rows(&mut self, o: u8) {
        self.transpose_out_regs(o);
        let mut y = self.y();
        for j in 0..4u8 {
            y.vextractf128_hi(Ymm(4 + j), Ymm(j));
        }
    }

    /// o`o` of the group back into the eight output rows. Clobbers ymm0-ymm7.
    fn transpose_out(&mut self, o: u8) {
        self.transpose_out_regs(o);
        let mut y = self.y();
        for j in 0..4u8 {
            let lo = Mem::Base(R14, 256 * j as i32 + 16 * o as i32);
            let hi = Mem::Base(R14, 256 * (j as i32 + 4) + 16 * o as i32);
            y.store_x(lo, Ymm(j));
            y.vextractf128_hi(Ymm(4 + j), Ymm(j));
            y.store_x(hi, Ymm(4 + j));
        }
    }

    /// o`o` transposed into ymm0-ymm3: rows j and j + 4 in ymm`j`. Clobbers ymm4-ymm7.
    fn transpose_out_regs(&mut self, o: u8) {
        let src = bank_off(SOA_OUTPUT, o);
        let mut y = self.y();
        for c in 0..4 {
            y.vmovaps(Ymm(c), Mem::Base(RBX, src + 32 * c as i32));
        }
        y.vunpcklps(Ymm(4), Ymm(0), Ymm(1)); // x0 y0 x1 y1 | x4 y4 x5 y5
        y.vunpckhps(Ymm(5), Ymm(0), Ymm(1)); // x2 y2 x3 y3 | …
        y.vunpcklps(Ymm(6), Ymm(2), Ymm(3)); // z0 w0 z1 w1 | …
        y.vunpckhps(Ymm(7), Ymm(2), Ymm(3)); // z2 w2 z3 w3 | …
        y.vunpcklpd(Ymm(0), Ymm(4), Ymm(6)); // row 0 | row 4
        y.vunpckhpd(Ymm(1), Ymm(4), Ymm(6)); // row 1 | row 5
        y.vunpcklpd(Ymm(2), Ymm(5), Ymm(7)); // row 2 | row 6
        y.vunpckhpd(Ymm(3), Ymm(5), Ymm(7)); // row 3 | row 7
    }

    // ---------------------------------------------------------------- blocks and exits

    /// Masked execution: leave with "diverged" at `pc` unless the lanes in `owner_mask`
    /// (ANDed from the given context fields) include all active lanes. Clobbers eax.
    fn check_owner(&mut self, fields: &[i32], pc: u32) {
        let stub = self.a.new_label();
        self.diverged.push((stub, pc));
        let a = &mut self.a;
        a.mov_rm32(RAX, RBX, fields[0]);
        for &f in &fields[1..] {
            x64!(a.ops; and eax, DWORD [rbx + f]);
        }
        x64!(a.ops; not eax; test eax, r12d; jnz =>stub);
    }

    /// Masked execution: aL and loop counter `slot` are the active lanes' from here on.
    fn own_loop_y(&mut self, slot: u8) {
        let a = &mut self.a;
        a.mov_mr32(RBX, SOA_AL_OWNER, R12);
        a.mov_mr32(RBX, SOA_LOOP_OWNER + 4 * slot as i32, R12);
    }

    /// Masked execution, before the end of a loop body steps aL and counter `slot`: the
    /// active lanes must own both (else leave with "diverged" at `pc`), and own them after.
    fn step_owned_y(&mut self, slot: u8, pc: u32) {
        self.check_owner(&[SOA_AL_OWNER, SOA_LOOP_OWNER + 4 * slot as i32], pc);
        self.own_loop_y(slot);
    }

    fn exit_deopt_y(&mut self, pc: u32) {
        let l = self.exit_deopt;
        self.a.mov_mi32(RBX, SOA_DEOPT_PC, pc as i32);
        self.a.jmp(l);
    }

    fn loop_init_y(&mut self, int: u8, slot: u8) {
        let counter = (RBX, SOA_LOOP_COUNTERS + 4 * slot as i32);
        rows::loop_init(&mut self.a, R15, int, (RBX, SOA_AL), counter);
    }

    fn loop_step_y(&mut self, int: u8, slot: u8, again: DynamicLabel) {
        let counter = (RBX, SOA_LOOP_COUNTERS + 4 * slot as i32);
        rows::loop_step(&mut self.a, R15, int, (RBX, SOA_AL), counter, again);
    }

    /// Masked execution: the active lanes wait at block `b`.
    fn park_y(&mut self, b: u32) {
        let (byte, word, bit) = (
            SOA_WAITING + b as i32,
            SOA_PENDING + 8 * (b / 64) as i32,
            b % 64,
        );
        x64!(self.a.ops
            ; or BYTE [rbx + byte], r12b
            ; bts QWORD [rbx + word], bit as i8
        );
    }

    /// The scheduler, inline at each place that hands over (so that each has its own
    /// indirect jump for the branch predictor to learn): run the lowest block any lane waits
    /// at, with the lanes that wait there, through the jump table. Block order is program
    /// order, so the lanes of an IF's two arms meet at the join, and lanes still looping run
    /// before those that left the loop. Nothing waiting: every lane reached END.
    fn dispatch_y(&mut self, table: DynamicLabel) {
        let (done, set_inactive) = (self.exit_done, self.set_inactive);
        let found = self.a.new_label();
        let words = self.nblocks.div_ceil(64) as i32;
        if words == 1 {
            x64!(self.a.ops
                ; xor ecx, ecx
                ; mov rax, QWORD [rbx + SOA_PENDING]
                ; test rax, rax
                ; jz =>done
            );
        } else {
            let scan = self.a.new_label();
            x64!(self.a.ops
                ; xor ecx, ecx
                ; =>scan
                ; mov rax, QWORD [rbx + rcx * 8 + SOA_PENDING]
                ; test rax, rax
                ; jnz =>found
                ; inc ecx
                ; cmp ecx, words
                ; jb =>scan
                ; jmp =>done
            );
        }
        x64!(self.a.ops
            ; =>found
            ; bsf rdx, rax
            ; lea rsi, [rax - 1]
            ; and rax, rsi
            ; mov QWORD [rbx + rcx * 8 + SOA_PENDING], rax
            ; shl ecx, 6
            ; add edx, ecx
            ; movzx r12d, BYTE [rbx + rdx + SOA_WAITING]
            ; mov BYTE [rbx + rdx + SOA_WAITING], 0
            ; call =>set_inactive
            ; lea rcx, [=>table]
            ; lea rcx, [rcx + rdx * 8]
            ; jmp rcx
        );
    }

    fn exits(&mut self) {
        let diverged = self.exit_diverged;
        for (stub, pc) in std::mem::take(&mut self.diverged) {
            self.a.bind(stub);
            self.a.mov_mi32(RBX, SOA_DEOPT_PC, pc as i32);
            self.a.jmp(diverged);
        }
        // A group that stops may leave lanes waiting: the context must be clean for the next.
        let clear = self.a.new_label();
        let a = &mut self.a;
        for (l, s) in [
            (self.exit_done, Status::Done as i32),
            (self.exit_deopt, Status::Deopt as i32),
            (self.exit_budget, Status::Budget as i32),
            (self.exit_diverged, STATUS_DIVERGED as i32),
            (self.exit_emits, STATUS_EMITS as i32),
        ] {
            a.bind(l);
            if self.simt && s != Status::Done as i32 {
                a.call_label(clear);
            }
            a.mov_ri32(RAX, s);
            a.ret();
        }
        if self.simt {
            let blocks = self.nblocks;
            let (chunks, words) = (blocks.div_ceil(32) as i32, blocks.div_ceil(64) as i32);
            let (l1, l2) = (a.new_label(), a.new_label());
            x64!(a.ops
                ; =>clear
                ; vxorps ymm0, ymm0, ymm0
                ; lea rdi, [rbx + SOA_WAITING]
                ; mov ecx, chunks
                ; =>l1
                ; vmovaps [rdi], ymm0
                ; add rdi, 32
                ; dec ecx
                ; jnz =>l1
                ; lea rdi, [rbx + SOA_PENDING]
                ; mov ecx, words
                ; =>l2
                ; mov QWORD [rdi], 0
                ; add rdi, 8
                ; dec ecx
                ; jnz =>l2
                ; ret
            );
        }
    }

    // ---------------------------------------------------------------- operands

    /// Prepare source `n` of an instruction: a0-relative rows are gathered and transposed into
    /// `SoaContext::rel` here, aL-relative ones get their row offset in [`REL_GPR`].
    /// `flushing`: the instruction reads this source through the input flush only.
    fn operand_y(&mut self, src: SourceOperand) -> Operand {
        let SourceOperand {
            n,
            reg,
            rel,
            d,
            flushing,
        } = src;
        let mut flushed = None;
        let mut temp = None;
        let addr = match reg {
            SrcReg::Input(i) => {
                flushed = Some(Addr::Frame(bank_off(SOA_INPUT_FLUSHED, i)));
                Addr::Frame(bank_off(SOA_INPUT, i))
            }
            SrcReg::Temp(i) => {
                temp = Some(i & 15);
                Addr::Frame(bank_off(SOA_TEMP, i))
            }
            SrcReg::Const(i) => {
                let index = (i & 0x7F) as i32;
                match rel {
                    RelIndex::None => {
                        self.uniform_use.flushed_rows |= 1 << index;
                        flushed = Some(Addr::Bcast(Mem::Base(
                            RBX,
                            SOA_UNIFORMS_FLUSHED + 16 * index,
                        )));
                        Addr::Bcast(Mem::Base(R15, UNI_FLOAT + 16 * index))
                    }
                    RelIndex::AL => {
                        if self.al_row != Some(index) {
                            if self.simt && self.al_row.is_none() {
                                self.check_owner(&[SOA_AL_OWNER], self.cur_pc);
                            }
                            rows::rel_row_offset(&mut self.a, REL_GPR, RBX, SOA_AL, index);
                            self.al_row = Some(index);
                        }
                        self.uniform_use.flushed_rows = u128::MAX;
                        flushed = Some(Addr::Bcast(Mem::Index(RBX, REL_GPR, SOA_UNIFORMS_FLUSHED)));
                        Addr::Bcast(Mem::Index(R15, REL_GPR, UNI_FLOAT))
                    }
                    RelIndex::A0X | RelIndex::A0Y if flushing => {
                        let which = (rel == RelIndex::A0Y) as i32;
                        self.gather_rel_rows(which, index);
                        flushed = Some(Addr::Frame(SOA_REL));
                        Addr::Frame(SOA_REL)
                    }
                    RelIndex::A0X | RelIndex::A0Y => {
                        let which = (rel == RelIndex::A0Y) as i32;
                        self.gather_rows(which, index);
                        Addr::Frame(SOA_REL)
                    }
                }
            }
        };
        Operand {
            addr,
            flushed,
            temp,
            swizzle: d.swizzle(n),
            negate: d.neg(n),
        }
    }

    /// Per lane: row `(index + (a0 in -128..=127 ? a0 : 0)) & 0x7F` of the float uniforms,
    /// transposed into `SoaContext::rel`.
    fn gather_rows(&mut self, which: i32, index: i32) {
        let idx = self.y().splat(index as u32);
        let c7f = self.y().splat(0x7F);
        let mut y = self.y();
        // a0_rel / 16 = 128 + the effective offset, and 128 vanishes modulo 128.
        y.vmovaps(A, Mem::Base(RBX, SOA_A0_REL + 32 * which));
        y.vpsrld(A, A, 4);
        y.vpaddd(A, A, idx);
        y.vpand(A, A, c7f);
        y.vpslld(A, A, 4);
        y.store(Mem::Base(RBX, SOA_INDEX), A, true);
        const G: [Gpr; 8] = [RAX, RCX, RDX, RSI, RDI, R8, R9, R10];
        for (k, g) in G.iter().enumerate() {
            self.a.mov_rm32(*g, RBX, SOA_INDEX + 4 * k as i32);
        }
        self.transpose_rows_in(|k| Mem::Index(R15, G[k], UNI_FLOAT), Some(SOA_REL), None);
    }

    /// Per lane: the flushed row `(index + (a0 in -128..=127 ? a0 : 0)) & 0x7F`, transposed
    /// into `SoaContext::rel`, through `uniforms_rel` and the row offsets MOVA keeps.
    fn gather_rel_rows(&mut self, which: i32, index: i32) {
        self.uniform_use.rel = true;
        self.uniform_use.flushed_rows = u128::MAX;
        const G: [Gpr; 8] = [RAX, RCX, RDX, RSI, RDI, R8, R9, R10];
        for (k, g) in G.iter().enumerate() {
            self.a
                .mov_rm32(*g, RBX, SOA_A0_REL + 32 * which + 4 * k as i32);
        }
        self.transpose_rows_in(
            |k| Mem::Index(RBX, G[k], SOA_UNIFORMS_REL + 16 * index),
            Some(SOA_REL),
            None,
        );
    }

    /// Component `c` of a prepared operand into `d` (swizzle and negation applied).
    fn load_y(&mut self, d: Ymm, op: &Operand, c: usize) {
        self.load_from(d, op.addr, op, c);
    }

    /// Component `c` of a prepared operand into `d` with the input flush (rule 1) applied, as
    /// far as a flushing operation can tell (see [`Gen::known`]): read from a flushed copy if
    /// the operand has one, as it is if it is known tiny-free, flushed here otherwise.
    /// Clobbers T0.
    fn load_flushed_y(&mut self, d: Ymm, op: &Operand, c: usize) {
        if let Some(f) = op.flushed {
            self.load_from(d, f, op, c);
            return;
        }
        // Only without negation: flush(-x) and -flush(x) differ in the sign of a zero,
        // which RCP and RSQ see.
        let alias = op
            .temp
            .and_then(|t| self.alias[t as usize][op.swizzle.lane(c) as usize]);
        if let (Some((addr, k)), false) = (alias, op.negate) {
            let mut y = self.y();
            match addr {
                Addr::Frame(off) => y.vmovaps(d, Mem::Base(RBX, off + 32 * i32::from(k))),
                Addr::Bcast(Mem::Base(b, o)) => {
                    y.vbroadcastss(d, Mem::Base(b, o + 4 * i32::from(k)))
                }
                Addr::Bcast(_) => unreachable!("only stable copies are aliased"),
            }
            return;
        }
        self.load_from(d, op.addr, op, c);
        if !self.tiny_free_y(op, c) {
            self.flush(d);
        }
    }

    /// Component `c` of `op` is known tiny-free (negation keeps that).
    fn tiny_free_y(&self, op: &Operand, c: usize) -> bool {
        op.temp
            .is_some_and(|t| self.known[t as usize] >> op.swizzle.lane(c) & 1 != 0)
    }

    fn load_from(&mut self, d: Ymm, addr: Addr, op: &Operand, c: usize) {
        let s = op.swizzle.lane(c) as i32;
        let neg = if op.negate {
            Some(self.y().splat(SIGN))
        } else {
            None
        };
        let mut y = self.y();
        match addr {
            Addr::Frame(off) => y.vmovaps(d, Mem::Base(RBX, off + 32 * s)),
            Addr::Bcast(Mem::Base(b, o)) => y.vbroadcastss(d, Mem::Base(b, o + 4 * s)),
            Addr::Bcast(Mem::Index(b, i, o)) => y.vbroadcastss(d, Mem::Index(b, i, o + 4 * s)),
            Addr::Bcast(Mem::Const(_)) => unreachable!("operands are never pool constants"),
        }
        if let Some(n) = neg {
            y.vxorps(d, d, n);
        }
    }

    /// Store the masked components; `tiny_free[c]`: component c is known tiny-free.
    fn store_results_y(
        &mut self,
        dst: DstReg,
        mask: [bool; 4],
        res: [Ymm; 4],
        tiny_free: [bool; 4],
    ) {
        let off = match dst {
            DstReg::Output(i) => bank_off(SOA_OUTPUT, i),
            DstReg::Temp(i) => {
                for c in 0..4 {
                    if mask[c] {
                        self.alias[(i & 15) as usize][c] = None;
                    }
                }
                let k = &mut self.known[(i & 15) as usize];
                for c in 0..4 {
                    if mask[c] {
                        *k = (*k & !(1 << c)) | (u8::from(tiny_free[c]) << c);
                    }
                }
                bank_off(SOA_TEMP, i)
            }
        };
        for c in 0..4 {
            if mask[c] {
                self.store_state(off + 32 * c as i32, res[c]);
            }
        }
    }

    /// Store `v` to per-lane state at `[rbx + off]`; in masked execution only the active
    /// lanes (`v` then holds what was stored). Clobbers [`MS0`], [`MS1`].
    fn store_state(&mut self, off: i32, v: Ymm) {
        let simt = self.simt;
        let mut y = self.y();
        let m = Mem::Base(RBX, off);
        if simt {
            y.vmovaps(MS0, m);
            y.vmovaps(MS1, Mem::Base(RBX, SOA_INACTIVE));
            y.vblendvps(v, v, MS0, MS1);
        }
        y.store(m, v, true);
    }

    // ---------------------------------------------------------------- float model
    // The recipes are `crate::pica::recipes`, over the eight-lane primitives of `Yasm` (below).

    /// Rule 1: lanes below the mode's smallest normal (and -0) become +0. Clobbers T0.
    fn flush(&mut self, v: Ymm) {
        let mode = self.mode;
        recipes::flush(&mut self.h(), mode, v, T0);
    }

    /// The mode's fix-up of `v`, the raw f32 result of an operation on flushed inputs (F24 RTZ,
    /// F32; F24 RNE: the range step after rounding). `mul = Some((a, b))`: `v = a · b` and
    /// `inf × 0` must be repaired (rule 6). The fast path is inline; lanes that need more
    /// (F24: overflow, inf, NaN; F32: NaN) call a shared cold routine
    /// (`recipes::fixup_slow`) from a two-instruction stub. Clobbers T0-T2, rax.
    fn fix(&mut self, v: Ymm, mul: Option<(Ymm, Ymm)>) {
        let cold = self.a.new_label();
        let back = self.a.new_label();
        let mode = self.mode;
        recipes::fixup_fast_test(&mut self.h(), mode, v, [T0, T1]);
        self.h().mask_bits(RAX, T0);
        self.a.test_rr32(RAX, RAX);
        self.a.jne(cold);
        recipes::fixup_fast(&mut self.h(), mode, v, v, [T0, T1]);
        self.a.bind(back);
        self.cold.push((cold, back, Cold { v, mul }));
    }

    fn emit_cold(&mut self) {
        if !self.cold.is_empty() {
            self.marks.push((
                self.a.offset().0,
                u32::MAX,
                "cold paths of the fix-ups".into(),
            ));
        }
        // Each distinct case is one subroutine; a site's cold label is a `call` of it and a
        // jump back (the cases repeat across sites, and one copy per site was most of the
        // code of shaders with many results).
        let mut routines: Vec<(Cold, DynamicLabel)> = Vec::new();
        for (cold, back, kind) in std::mem::take(&mut self.cold) {
            let routine = match routines.iter().find(|r| r.0 == kind) {
                Some(r) => r.1,
                None => {
                    let l = self.a.new_label();
                    routines.push((kind, l));
                    l
                }
            };
            self.a.bind(cold);
            self.a.call_label(routine);
            self.a.jmp(back);
        }
        let mode = self.mode;
        for (Cold { v, mul }, routine) in routines {
            self.a.bind(routine);
            recipes::fixup_slow(&mut self.h(), mode, v, v, mul, [T0, T1, T2]);
            self.a.ret();
        }
    }

    /// `d = float::add(a, b)` for flushed inputs (or mode results). Clobbers T0-T3.
    fn add_y(&mut self, d: Ymm, a: Ymm, b: Ymm) {
        recipes::add(self, d, a, b);
    }

    /// `d = float::mul(a, b)` for inputs loaded by [`Self::load_flushed`]. `d` must differ
    /// from both.
    /// Clobbers T0-T4.
    fn mul_y(&mut self, d: Ymm, a: Ymm, b: Ymm) {
        if self.is_rne() {
            self.h().ordered(T4, a, b);
            self.binop64(d, a, b, true);
            recipes::inf_times_zero(&mut self.h(), d, d, T4, T0);
        } else {
            self.h().mul_f32(d, a, Src::R(b));
            self.fix(d, Some((a, b)));
        }
    }

    // ---------------------------------------------------------------- instructions

    /// RCP of A (component x, flushed) into P[0] (`recipes::reciprocal::rcp`).
    fn rcp(&mut self) {
        reciprocal::rcp(self, LaneSet::All, P[0], A, [P[1], P[2], B]);
    }

    /// RSQ of A (component x, flushed) into P[0] (`recipes::reciprocal::rsq`, four lanes of
    /// f64 work at a time).
    fn rsq(&mut self) {
        reciprocal::rsq(self, LaneSet::All, P[0], A, [T4, T3, B, C, P[1], P[2]]);
    }

    /// The registers of the EX2 and LG2 lane recipes (`recipes::transcendental_lanes`): the
    /// operand in A, the result in P[0], every other register scratch.
    fn lane_regs() -> transcendental_lanes::Regs<Ymm> {
        let [_, p1, p2, p3] = P;
        let [r0, r1, r2, r3] = RES;
        transcendental_lanes::Regs {
            x: A,
            out: P[0],
            s: [B, C, p1, p2, p3, T0, T1, T2, T3, T4, r0, r1, r2, r3],
        }
    }

    /// EX2 of A (component x) into P[0] on eight lanes (`recipes::transcendental_lanes::ex2`).
    /// Uses every vector register, rax.
    fn ex2(&mut self) {
        let mode = self.mode;
        transcendental_lanes::ex2(&mut self.h(), mode, Self::lane_regs());
    }

    /// LG2 of A (component x) into P[0] on eight lanes (`recipes::transcendental_lanes::lg2`).
    /// Uses every vector register, rax, rcx and the context's scratch area.
    fn lg2(&mut self) {
        let mode = self.mode;
        transcendental_lanes::lg2(self, mode, Self::lane_regs());
    }
}

/// The lane code's [`Float`] steps for the float recipes (`crate::pica::recipes`), over the
/// 256-bit lane operations (`crate::host::x64::lanes`: eight f32 or four f64 lanes of a ymm
/// register): inline, the range step's rare lanes out of line ([`Gen::fix`]).
impl Float for Gen {
    type R = Ymm;
    type H<'a> = X64Lanes<'a, Y256>;

    fn h(&mut self) -> X64Lanes<'_, Y256> {
        X64Lanes::ymm(&mut self.a)
    }

    fn mode(&self) -> FloatMode {
        self.mode
    }

    /// Inline; clobbers T1.
    fn round64(&mut self, d: Ymm) {
        recipes::round_f64_rne17(&mut self.h(), d, T1);
    }

    fn range(&mut self, v: Ymm) {
        self.fix(v, None);
    }

    /// Inline; clobbers T0-T3.
    fn rne17(&mut self, v: Ymm) {
        recipes::rne17_f32(&mut self.h(), v, [T0, T3]);
        self.fix(v, None);
    }

    /// Inline; clobbers T0-T3.
    fn binop64(&mut self, d: Ymm, a: Ymm, b: Ymm, mul: bool) {
        recipes::f64_binop(self, d, a, b, mul, [T0, T3, T1, T2]);
    }

    /// MXCSR.FTZ: as the per-vertex code (`crate::pica::x64::masm`).
    fn rcp_f32_through_f64(&self) -> bool {
        false
    }
}

/// LG2's halves in the context's scratch area: every ymm register is in use until the end.
impl Halves for Gen {
    /// The low words of the four qwords into an xmm register (`vpermd`), stored.
    fn pack_half(&mut self, hi: bool, a: Ymm, t: Ymm) {
        let pack = self.y().constant([0, 2, 4, 6, 0, 2, 4, 6]);
        let mut y = self.y();
        y.vmovups(t, pack);
        y.vpermd(a, t, a);
        y.store_x(Mem::Base(RBX, SOA_SCRATCH + 16 * i32::from(hi)), a);
    }

    fn packed(&mut self, d: Ymm) {
        self.y().vmovaps(d, Mem::Base(RBX, SOA_SCRATCH));
    }
}

fn ymm(v: V) -> Ymm {
    match v {
        V::A => A,
        V::B => B,
        V::C => C,
        V::P(k) => P[k as usize & 3],
        V::Res(k) => RES[k as usize & 3],
    }
}

impl LaneEmitter for Gen {
    type Label = DynamicLabel;
    type Operand = Operand;

    fn new_label(&mut self) -> DynamicLabel {
        self.a.new_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        self.a.bind(l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        self.a.jmp(l);
    }

    fn lane_masks(&self) -> bool {
        self.simt
    }

    fn block_start(&mut self, _index: usize, len: u32) {
        self.known = [0; 16];
        self.alias = [[None; 4]; 16];
        self.al_row = None;
        self.cmp_in_res = false;
        let len = len as i32;
        self.a.sub_ri64(BUDGET, len);
        let budget = self.exit_budget;
        self.a.jb(budget);
        if self.simt {
            // The budget above is charged per block run, whichever lanes run it (at least
            // any one lane's count: a group that exceeds it reruns per vertex); the
            // instruction count is per lane.
            x64!(self.a.ops; popcnt eax, r12d);
            if len > 1 {
                x64!(self.a.ops; imul eax, eax, len);
            }
            x64!(self.a.ops; add QWORD [rbx + SOA_GROUP_INSTRUCTIONS], rax);
        }
    }

    fn mark(&mut self, pc: u32, text: String) {
        self.marks.push((self.a.offset().0, pc, text));
    }

    fn begin_instruction(&mut self, node: usize, pc: u32, instr: &Instruction) {
        self.cur_pc = pc;
        self.cur_node = node;
        if instr.desc().is_some() || matches!(instr, Instruction::Loop { .. }) {
            self.cmp_in_res = false;
        }
        if matches!(instr, Instruction::Loop { .. }) {
            self.al_row = None;
        }
    }

    fn end_instruction(&mut self, instr: &Instruction) {
        if matches!(instr, Instruction::Cmp { .. }) {
            self.cmp_in_res = true;
        }
    }

    fn supports(&self, _instr: &Instruction) -> bool {
        true
    }

    fn exit_end(&mut self) {
        if self.simt {
            let l = self.end_lanes;
            x64!(self.a.ops; cmp r12d, DWORD [rbx + SOA_ALIVE]; jne =>l);
        }
        if self.gs.is_some() {
            // Fewer EMITs than the group was told to expect.
            let l = self.exit_emits;
            x64!(self.a.ops; cmp DWORD [rbx + SOA_GS_LEFT], 0; jne =>l);
        }
        let l = self.exit_done;
        self.a.jmp(l);
    }

    fn exit_deopt(&mut self, pc: u32) {
        self.exit_deopt_y(pc);
    }

    fn branch_bool(&mut self, b: u8, value: bool, target: DynamicLabel) {
        let a = &mut self.a;
        a.test_mi16(R15, UNI_BOOL, 1 << (b & 15));
        if value {
            a.jne(target);
        } else {
            a.je(target);
        }
    }

    fn branch_cond(&mut self, c: Condition, target: DynamicLabel, split: DynamicLabel, _pc: u32) {
        // Straight after CMP, the flags are still in RES: the branch does not wait for a
        // store to be forwarded to a load.
        let flag = |g: &mut Self, lane: i32, r: Gpr, want: bool| {
            let in_res = g.cmp_in_res;
            let mut y = g.y();
            if in_res {
                y.vmovmskps(r, RES[lane as usize]);
            } else {
                y.vmovaps(T0, Mem::Base(RBX, SOA_CMP + 32 * lane));
                y.vmovmskps(r, T0);
            }
            if !want {
                x64!(g.a.ops; xor Rd(r.0), 0xFF);
            }
        };
        match c.op {
            CondOp::X => flag(self, 0, RAX, c.ref_x),
            CondOp::Y => flag(self, 1, RAX, c.ref_y),
            CondOp::And | CondOp::Or => {
                flag(self, 0, RAX, c.ref_x);
                flag(self, 1, RCX, c.ref_y);
                if c.op == CondOp::And {
                    x64!(self.a.ops; and eax, ecx);
                } else {
                    x64!(self.a.ops; or eax, ecx);
                }
            }
        }
        // Every program with cmp-dependent branches runs with lane masks here, so a
        // disagreement always splits.
        x64!(self.a.ops
            ; and eax, r12d
            ; cmp eax, r12d
            ; je =>target
            ; test eax, eax
            ; jnz =>split
        );
    }

    fn loop_init(&mut self, int: u8, slot: u8) {
        self.loop_init_y(int, slot);
    }

    fn loop_step(&mut self, int: u8, slot: u8, again: DynamicLabel) {
        self.loop_step_y(int, slot, again);
    }

    fn own_loop(&mut self, slot: u8) {
        self.own_loop_y(slot);
    }

    fn step_owned(&mut self, slot: u8, pc: u32) {
        self.step_owned_y(slot, pc);
    }

    /// Jump to `otherwise` if some lane waits at block `b` or before it (conservatively, if
    /// any lane waits, for blocks beyond the first 63). Clobbers rax.
    fn unless_lowest(&mut self, b: usize, otherwise: DynamicLabel) {
        if b < 31 {
            let below = ((1u64 << (b + 1)) - 1) as i32;
            x64!(self.a.ops; test QWORD [rbx + SOA_PENDING], below; jnz =>otherwise);
        } else if b < 63 {
            let below = ((1u64 << (b + 1)) - 1) as i64;
            x64!(self.a.ops
                ; mov rax, QWORD below
                ; test QWORD [rbx + SOA_PENDING], rax
                ; jnz =>otherwise
            );
        } else {
            x64!(self.a.ops; cmp r12d, DWORD [rbx + SOA_ALIVE]; jne =>otherwise);
        }
    }

    fn park(&mut self, block: usize) {
        self.park_y(block as u32);
    }

    fn activate_and_jump(&mut self, l: DynamicLabel) {
        let set_inactive = self.set_inactive;
        self.a.call_label(set_inactive);
        self.a.jmp(l);
    }

    /// eax: the active lanes that take the branch (neither none nor all of them).
    fn split_enter(&mut self) {
        x64!(self.a.ops
            ; mov DWORD [rbx + SOA_SPLIT], eax
            ; mov DWORD [rbx + SOA_SPLIT + 4], r12d
            ; add DWORD [rbx + SOA_SPLIT + 8], 1
        );
    }

    fn split_lanes(&mut self, taken: bool) {
        if taken {
            x64!(self.a.ops; mov r12d, DWORD [rbx + SOA_SPLIT]);
        } else {
            x64!(self.a.ops
                ; mov r12d, DWORD [rbx + SOA_SPLIT]
                ; not r12d
                ; and r12d, DWORD [rbx + SOA_SPLIT + 4]
            );
        }
    }

    fn dispatch(&mut self, table: DynamicLabel) {
        self.dispatch_y(table);
    }

    fn masked_tail(&mut self, table: DynamicLabel, blocks: &[DynamicLabel]) -> CompileResult<()> {
        // END for some of the lanes.
        let end_lanes = self.end_lanes;
        self.a.bind(end_lanes);
        x64!(self.a.ops
            ; mov ecx, r12d
            ; not ecx
            ; and DWORD [rbx + SOA_ALIVE], ecx
        );
        self.dispatch_y(table);
        // set_inactive: `inactive` from the lane bits in r12d. Clobbers ymm0-ymm1.
        let set_inactive = self.set_inactive;
        self.a.bind(set_inactive);
        let bits = self.y().constant([1, 2, 4, 8, 16, 32, 64, 128]);
        let mut y = self.y();
        y.vmovd_from(Ymm(0), R12);
        y.vpbroadcastd(Ymm(0), Ymm(0));
        y.vpand(Ymm(0), Ymm(0), bits);
        y.vpxor(Ymm(1), Ymm(1), Ymm(1));
        y.vpcmpeqd(Ymm(0), Ymm(0), Ymm(1));
        y.store(Mem::Base(RBX, SOA_INACTIVE), Ymm(0), true);
        self.a.ret();
        // One 8-byte `jmp rel32` slot per block.
        x64!(self.a.ops; .align 8, 0xCC);
        self.a.bind(table);
        for &l in blocks {
            let start = self.a.offset().0;
            self.a.jmp(l);
            let used = self.a.offset().0 - start;
            if used > 8 {
                return Err(CompileError::Internal(format!(
                    "jump table slot of {used} bytes"
                )));
            }
            for _ in used..8 {
                x64!(self.a.ops; int3);
            }
        }
        Ok(())
    }

    fn operand(&mut self, src: SourceOperand) -> Operand {
        self.operand_y(src)
    }

    fn load(&mut self, d: V, op: &Operand, c: usize) {
        self.load_y(ymm(d), op, c);
    }

    fn load_flushed(&mut self, d: V, op: &Operand, c: usize) {
        self.load_flushed_y(ymm(d), op, c);
    }

    fn tiny_free(&self, op: &Operand, c: usize) -> bool {
        self.tiny_free_y(op, c)
    }

    fn one(&mut self, d: V) {
        let one = self.y().splat(ONE);
        self.y().vmovups(ymm(d), one);
    }

    fn store_results(&mut self, dst: DstReg, mask: [bool; 4], res: [V; 4], tiny_free: [bool; 4]) {
        self.store_results_y(dst, mask, res.map(ymm), tiny_free);
    }

    fn note_mov(&mut self, dst: DstReg, src: SrcReg, s: &Operand, mask: [bool; 4]) {
        // The flushed copy stays valid for the rest of the block: the input banks change
        // per group, the flushed uniforms per call, and aL-relative rows and a0 gathers
        // (whose addresses move) are not kept.
        let stable = match (s.flushed, src) {
            (Some(Addr::Frame(_)), SrcReg::Input(i)) => self.inputs_flushed & (1 << (i & 15)) != 0,
            (Some(Addr::Bcast(Mem::Base(b, _))), _) => b == RBX,
            _ => false,
        };
        if let (DstReg::Temp(t), Some(f), true, false) = (dst, s.flushed, stable, s.negate) {
            for c in 0..4 {
                if mask[c] {
                    self.alias[(t & 15) as usize][c] = Some((f, s.swizzle.lane(c)));
                }
            }
        }
    }

    fn add(&mut self, d: V, a: V, b: V) {
        self.add_y(ymm(d), ymm(a), ymm(b));
    }

    fn mul(&mut self, d: V, a: V, b: V) {
        self.mul_y(ymm(d), ymm(a), ymm(b));
    }

    fn select(&mut self, op: Select, d: V, a: V, b: V) {
        let (d, a, b) = (ymm(d), ymm(a), ymm(b));
        match op {
            Select::Max => {
                let rule = self.max_rule;
                recipes::max(&mut self.h(), rule, d, a, b, T0)
            }
            Select::Min => self.h().min_f32(d, a, Src::R(b)),
            Select::Sge | Select::Slt => {
                recipes::set_if(&mut self.h(), op == Select::Slt, d, a, b, d)
            }
        }
    }

    fn flr(&mut self, d: V, a: V) {
        recipes::flr(self, ymm(d), ymm(a));
    }

    fn scalar(&mut self, op: Opcode, s: &Operand) {
        // EX2 and LG2 flush their operand themselves (see `ex2`, `lg2`).
        let self_flushing = matches!(op, Opcode::Ex2 | Opcode::Lg2);
        match s.flushed {
            // RCP and RSQ see the sign of a zero, so a negated flushed copy (-0 for +0) is
            // flushed once more (which gives flush(-x)).
            Some(f) if !self_flushing => {
                self.load_from(A, f, s, 0);
                if s.negate {
                    self.flush(A);
                }
            }
            _ => {
                self.load_y(A, s, 0);
                if !self_flushing {
                    self.flush(A);
                }
            }
        }
        match op {
            Opcode::Rcp => self.rcp(),
            Opcode::Rsq => self.rsq(),
            Opcode::Ex2 => self.ex2(),
            _ => self.lg2(),
        }
    }

    fn litp(&mut self, part: Lit, d: V, a: V) {
        recipes::lit::lane(&mut self.h(), part, ymm(d), ymm(a), T0);
    }

    fn mova(&mut self, _c: usize, d: V, a: V) {
        recipes::convert::mova(&mut self.h(), ymm(d), ymm(a), T0);
    }

    fn store_a0(&mut self, c: usize, v: V) {
        // Masked, the value keeps the inactive lanes' a0, so their row offsets are
        // recomputed unchanged.
        let v = ymm(v);
        self.store_state(SOA_A0 + 32 * c as i32, v);
        recipes::address::a0_row_offset(&mut self.h(), T0, v, [T1, T2]);
        self.y()
            .store(Mem::Base(RBX, SOA_A0_REL + 32 * c as i32), T0, true);
    }

    fn cmp_mask(&mut self, d: V, op: CmpOp, a: V, b: V) {
        recipes::compare::cmp_mask_lanes(&mut self.h(), op, ymm(d), ymm(a), ymm(b));
    }

    fn store_cmp(&mut self, c: usize, v: V) {
        self.store_state(SOA_CMP + 32 * c as i32, ymm(v));
    }

    fn emit(&mut self, pc: u32) -> CompileResult<()> {
        if self.gs.is_some() {
            self.gs_emit(pc)?;
        }
        Ok(())
    }

    fn zero(&mut self, d: V) {
        self.h().set(ymm(d), Src::K(0));
    }
}
