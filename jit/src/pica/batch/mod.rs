//! Multi-vertex ("structure of arrays") batch backend for x86-64 with AVX2: eight vertices per
//! call of the generated code's body, each PICA register component (`r0.x`, `r0.y`, …) of the
//! eight vertices in one 256-bit register. The AArch64 emitter (`a64`, NEON) runs the same
//! groups, context and runtime as two halves of four lanes, or with [`A64Lanes::Eight`] as one
//! body run whose arithmetic covers the halves one after the other.
//!
//! # Why
//!
//! The per-vertex backend keeps one PICA vec4 in one SSE register, so the float model's
//! fix-ups (input flush, truncation to 17 bits, overflow to inf, NaN rules, `inf × 0`), which
//! are per-lane work, run on four lanes of which a masked instruction often needs one, and
//! dot products need horizontal shuffles. Here every host instruction works on eight
//! vertices, dot products are plain vertical adds, swizzles are free (they only choose which
//! component array is read) and write masks skip whole components.
//!
//! # Eligibility ([`eligibility`])
//!
//! A program runs here when the host has AVX2 (x86-64; NEON is part of AArch64), [`Analysis`]
//! built it (every program the
//! per-vertex backend compiles), and it is a vertex shader, or a geometry shader for which
//! [`geometry::plan`] proves that eight consecutive point-mode invocations can run together
//! ([`Invocation::points`](crate::Invocation::points); see [`geometry`] for the proof and how EMIT
//! writes vertices). Control flow that depends only on
//! uniforms (CALL/CALLU/IFU/JMPU/LOOP, resolved statically by the analysis) is compiled as
//! usual. Conditions on the per-vertex cmp flags (IFC/CALLC/JMPC/BREAKC) test the eight
//! flags with `vmovmskps`: if the running lanes agree, the branch is taken or not as a whole;
//! if they disagree, the group continues with lane masks (see "Divergence" in [`x64`]): each
//! set of lanes runs its own path, the lowest waiting block first, so that the paths meet
//! again where they join. a0-relative uniform reads load one row per lane (the
//! interpreter's offset rule, applied per lane with vector compares) and transpose them.
//!
//! # Correctness: whole-group fallback
//!
//! A group that cannot finish compiled — a lane needs an aL or loop counter of its own (the
//! group keeps one of each: see [`x64`]), it would exceed the instruction budget (charged
//! once per block run, whichever lanes run it, so at least any one lane's count), or it
//! reached a deopt site (undefined opcode, BREAK on an empty loop stack, running past the
//! end) — is simply run again by the per-vertex batch entry (which
//! itself falls back to the interpreter); where groups keep stopping, the following ones run
//! per vertex without a SoA attempt for a while (`run`). Vertex shader invocations are pure functions of
//! their inputs and the uniforms, and the SoA code writes only its own context until the group
//! is finished, so the rerun sees exactly what a per-vertex run would: results and errors
//! are identical by construction. The tail of a batch (`len % 8` rows) also runs per vertex.
//!
//! # Arithmetic
//!
//! Every float result uses the recipes of the per-vertex backend (`x64/masm.rs`) and the float
//! model's "What a JIT must do", lane for lane: MXCSR rounding control (RZ for F24-RTZ, nearest
//! for F24-RNE, nearest + FTZ for F32, never DAZ), explicit input flushes (skipped where the
//! value is known to be flushed already: flushed copies of inputs and uniforms, tiny-free
//! temporaries), integer-domain fix-ups with their rare cases (overflow, inf, NaN, `inf × 0`)
//! in out-of-line cold code, f64 arithmetic with integer round-to-17-bits for F24-RNE, the f64
//! RSQ recipes with exact square tests. EX2 and LG2 are the float model's integer algorithms
//! on eight lanes (64-bit steps four lanes at a time; `crate::pica::recipes::transcendental_lanes`,
//! shared with the NEON lane emitter), checked against it on every f24 input.
//!
//! # One lowering, two shapes
//!
//! [`crate::pica::masm::MacroAssembler`] works on whole vec4 values (`load` applies a swizzle to one
//! register, `binary` computes four lanes, `store` applies the mask), which is the right shape
//! for one invocation. In SoA a component that is not written costs a full 8-lane
//! computation, so results are composed component by component, from only the source
//! components the swizzle selects. Both shapes are driven by the same walker and the same
//! per-unit lowering (`jit/src/lower/`); the lane shape (`lower/lanes.rs`) composes each unit
//! from the lane operations of its `LaneEmitter` trait, which [`x64`] and `a64` implement.

pub mod geometry;
pub(crate) mod usage;

use crate::error::CompileResult;
use crate::host::features::HostFeatures;
use crate::pica::analysis::{Analysis, Exit, Guard};
use crate::{Backend, BatchError, BatchInfo, CompiledShader};
use picajit_interp::pica::float::{FloatMode, MaxRule};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::{Uniforms, UnitState, FLOAT_UNIFORM_ROWS};
use std::mem::offset_of;
use std::sync::atomic::{AtomicU64, Ordering};

/// One annotation of generated code: offset, PICA address, text.
pub type Mark = (usize, u32, String);

/// Vertices per group (one per 32-bit lane of a ymm register).
pub const LANES: usize = 8;

/// Most blocks a program can have (the analysis makes at most this many nodes).
pub const MAX_BLOCKS: usize = crate::pica::analysis::blocks::MAX_NODES;
const _: () = assert!(MAX_BLOCKS % 64 == 0);

/// Rows of `SoaContext::uniforms_rel`: offsets -128..=127 plus indices 0..=127.
pub const REL_ROWS: usize = 3 * FLOAT_UNIFORM_ROWS;

/// One PICA register file in SoA form: `[register][component][lane]`.
pub type SoaBank = [[[f32; LANES]; 4]; 16];

/// Everything the SoA code reads and writes, reached through one pointer (`rbx`).
///
/// `#[repr(C)]` and 32-byte aligned: generated code addresses it through the `SOA_*` offsets
/// below with aligned 256-bit loads and stores.
#[repr(C, align(32))]
pub struct SoaContext {
    /// v0-v15 of the group (only the registers the program reads are filled).
    pub input: SoaBank,
    /// r0-r15.
    pub temp: SoaBank,
    /// o0-o15.
    pub output: SoaBank,
    /// v0-v15 with the float model's input flush applied (rule 1), for the arithmetic that
    /// flushes its operands: filled for the registers such arithmetic reads.
    pub input_flushed: SoaBank,
    /// The float uniforms with the input flush applied, filled once per `Invocation::batch` call:
    /// arithmetic reads uniforms far more often than a call converts them.
    pub uniforms_flushed: [[f32; 4]; FLOAT_UNIFORM_ROWS],
    /// `uniforms_flushed` three times over, for a0-relative reads by flushing arithmetic:
    /// row `128 + a0 + index` (`a0` in -128..=127, `index` in 0..=127) is uniform
    /// `(a0 + index) & 0x7F`, so each lane's row address is one add, no wrap-around masking.
    /// Filled per call only for programs with such reads.
    pub uniforms_rel: [[f32; 4]; REL_ROWS],
    /// a0.x and a0.y per lane.
    pub a0: [[i32; LANES]; 2],
    /// Per lane, the byte offset in `uniforms_rel` of the row a0.x / a0.y selects for index
    /// 0: `16 · (128 + (a0 in -128..=127 ? a0 : 0))`. Kept beside `a0` by MOVA.
    pub a0_rel: [[u32; LANES]; 2],
    /// cmp.x and cmp.y per lane as all-ones / zero masks.
    pub cmp: [[u32; LANES]; 2],
    /// The a0-relative source operand of the current instruction, transposed.
    pub rel: [[f32; LANES]; 4],
    /// LG2's result, assembled from its two four-lane halves.
    pub scratch: [f32; LANES],
    /// Per-lane byte offsets of a0-relative rows.
    pub index: [u32; LANES],
    /// Masked execution: all-ones in the lanes that do *not* run the current block.
    pub inactive: [u32; LANES],
    /// Masked execution (see [`x64`], "Divergence"): per block, the lanes waiting to run it
    /// (bit k = lane k). All zero between groups.
    pub waiting: [u8; MAX_BLOCKS],
    /// Masked execution: bit b = some lane waits at block b. All zero between groups.
    pub pending: [u64; MAX_BLOCKS / 64],
    /// Uniforms.
    pub uniforms: *const Uniforms,
    /// Input rows of the batch.
    pub batch_input: *const [[f32; 4]; 16],
    /// Output rows of the batch.
    pub batch_output: *mut [[f32; 4]; 16],
    /// Rows to process; the code runs groups while `batch_done + 8 <= batch_count`.
    pub batch_count: u64,
    /// Rows finished (in/out); on a non-done status, the first row of the group that stopped.
    pub batch_done: u64,
    /// Instructions executed by the finished rows (accumulated).
    pub batch_instructions: u64,
    /// Divergent branches the finished groups executed with lane masks (accumulated).
    pub batch_splits: u64,
    /// The instruction budget of one invocation.
    pub budget: u64,
    /// Remaining-iteration counters of the loop frames (as `JitContext::loop_counters`).
    pub loop_counters: [u32; 4],
    /// aL (one value for all lanes: it depends only on int uniforms).
    pub al: i32,
    /// Out: PICA address of a deopt (diagnostics).
    pub deopt_pc: u32,
    /// Caller's MXCSR, restored on exit.
    pub saved_mxcsr: u32,
    /// Output registers the caller wants (bit n = o`n`); the others are not stored.
    pub out_mask: u32,
    /// Masked execution: lanes that have not reached END (bit k = lane k).
    pub alive: u32,
    /// Masked execution: lanes for which `al` holds their own aL.
    pub al_owner: u32,
    /// Masked execution: per loop slot, lanes for which `loop_counters` holds their own count.
    pub loop_owner: [u32; 4],
    /// Masked execution: the two lane sets of a branch being split, and the current
    /// group's count of splits.
    pub split: [u32; 3],
    /// Masked execution: instructions the current group executed, summed over its lanes.
    pub group_instructions: u64,
    /// What `uniforms_flushed` holds when it was last filled whole: a call with the same
    /// uniforms (an emulator's next batch of the same draw) reuses it.
    pub whole_flush: Option<WholeFlush>,
    /// Geometry shaders ([`geometry`]): per lane, the address of its first row / flags
    /// word in the caller's [`picajit_interp::pica::state::EmitBuffer`] for the current group.
    pub gs_lane_rows: [u64; LANES],
    /// See `gs_lane_rows`.
    pub gs_lane_flags: [u64; LANES],
    /// Where the next group's rows / flags start.
    pub gs_rows_next: u64,
    /// See `gs_rows_next`.
    pub gs_flags_next: u64,
    /// Bytes of one lane's vertices in a group: E times `gs_vsize` / E times 4.
    pub gs_row_stride: u64,
    /// See `gs_row_stride`.
    pub gs_flag_stride: u64,
    /// Bytes of rows per vertex.
    pub gs_vsize: u64,
    /// Byte offset of the current vertex in each lane's rows / flags.
    pub gs_cursor: u64,
    /// See `gs_cursor`.
    pub gs_flag_cursor: u64,
    /// E: the vertices every invocation of the call emits (checked).
    pub gs_emits: u32,
    /// EMITs the current group's invocations have left.
    pub gs_left: u32,
    /// Slots the last invocation emitted to (bit s).
    pub gs_slots_hit: u32,
    /// Per output register, its byte offset in a vertex's rows; -1 when not stored.
    pub gs_row_off: [i32; 16],
    /// Lane 7's rows of the written output registers at its last EMIT.
    pub gs_last7: [[f32; 4]; 16],
    /// Lane 7's rows at the EMIT before its last.
    pub gs_prev7: [[f32; 4]; 16],
    /// Lane 6's rows at its last EMIT.
    pub gs_last6: [[f32; 4]; 16],
    /// Lane 7's rows at its last EMIT to each slot.
    pub gs_slot7: [[[f32; 4]; 16]; 4],
    /// Code generated to start from a given unit state (`run_batch_from`): r0-r15 every
    /// group starts from, the same in every lane (filled once per call).
    pub start_temp: SoaBank,
    /// See `start_temp`: a0.x / a0.y per lane.
    pub start_a0: [[i32; LANES]; 2],
    /// See `start_temp`: the `a0_rel` offsets of `start_a0`.
    pub start_a0_rel: [[u32; LANES]; 2],
    /// See `start_temp`: cmp.x / cmp.y as all-ones / zero masks.
    pub start_cmp: [[u32; LANES]; 2],
    /// See `start_temp`: aL.
    pub start_al: i32,
}

/// The uniforms and mode a whole fill of `SoaContext::uniforms_flushed` came from.
#[derive(Clone, Copy, Debug)]
pub struct WholeFlush {
    /// Float mode of the flush.
    pub mode: FloatMode,
    /// The float uniforms, as bits.
    pub bits: [[u32; 4]; FLOAT_UNIFORM_ROWS],
    /// `uniforms_rel` holds the same rows, tripled.
    pub rel: bool,
}

impl Default for SoaContext {
    fn default() -> Self {
        SoaContext {
            input: [[[0.0; LANES]; 4]; 16],
            temp: [[[0.0; LANES]; 4]; 16],
            output: [[[0.0; LANES]; 4]; 16],
            input_flushed: [[[0.0; LANES]; 4]; 16],
            uniforms_flushed: [[0.0; 4]; FLOAT_UNIFORM_ROWS],
            uniforms_rel: [[0.0; 4]; REL_ROWS],
            a0: [[0; LANES]; 2],
            a0_rel: [[0; LANES]; 2],
            cmp: [[0; LANES]; 2],
            rel: [[0.0; LANES]; 4],
            scratch: [0.0; LANES],
            index: [0; LANES],
            inactive: [0; LANES],
            waiting: [0; MAX_BLOCKS],
            pending: [0; MAX_BLOCKS / 64],
            uniforms: std::ptr::null(),
            batch_input: std::ptr::null(),
            batch_output: std::ptr::null_mut(),
            batch_count: 0,
            batch_done: 0,
            batch_instructions: 0,
            batch_splits: 0,
            budget: 0,
            loop_counters: [0; 4],
            al: 0,
            deopt_pc: 0,
            saved_mxcsr: 0,
            out_mask: 0xFFFF,
            alive: 0,
            al_owner: 0,
            loop_owner: [0; 4],
            split: [0; 3],
            group_instructions: 0,
            whole_flush: None,
            gs_lane_rows: [0; LANES],
            gs_lane_flags: [0; LANES],
            gs_rows_next: 0,
            gs_flags_next: 0,
            gs_row_stride: 0,
            gs_flag_stride: 0,
            gs_vsize: 0,
            gs_cursor: 0,
            gs_flag_cursor: 0,
            gs_emits: 0,
            gs_left: 0,
            gs_slots_hit: 0,
            gs_row_off: [-1; 16],
            gs_last7: [[0.0; 4]; 16],
            gs_prev7: [[0.0; 4]; 16],
            gs_last6: [[0.0; 4]; 16],
            gs_slot7: [[[0.0; 4]; 16]; 4],
            start_temp: [[[0.0; LANES]; 4]; 16],
            start_a0: [[0; LANES]; 2],
            start_a0_rel: [[0; LANES]; 2],
            start_cmp: [[0; LANES]; 2],
            start_al: 0,
        }
    }
}

/// `SoaContext::input`.
pub const SOA_INPUT: i32 = offset_of!(SoaContext, input) as i32;
/// `SoaContext::temp`.
pub const SOA_TEMP: i32 = offset_of!(SoaContext, temp) as i32;
/// `SoaContext::output`.
pub const SOA_OUTPUT: i32 = offset_of!(SoaContext, output) as i32;
/// `SoaContext::input_flushed`.
pub const SOA_INPUT_FLUSHED: i32 = offset_of!(SoaContext, input_flushed) as i32;
/// `SoaContext::uniforms_flushed`.
pub const SOA_UNIFORMS_FLUSHED: i32 = offset_of!(SoaContext, uniforms_flushed) as i32;
/// `SoaContext::uniforms_rel`.
pub const SOA_UNIFORMS_REL: i32 = offset_of!(SoaContext, uniforms_rel) as i32;
/// `SoaContext::a0_rel`.
pub const SOA_A0_REL: i32 = offset_of!(SoaContext, a0_rel) as i32;
/// `SoaContext::a0`.
pub const SOA_A0: i32 = offset_of!(SoaContext, a0) as i32;
/// `SoaContext::cmp`.
pub const SOA_CMP: i32 = offset_of!(SoaContext, cmp) as i32;
/// `SoaContext::rel`.
pub const SOA_REL: i32 = offset_of!(SoaContext, rel) as i32;
/// `SoaContext::scratch`.
pub const SOA_SCRATCH: i32 = offset_of!(SoaContext, scratch) as i32;
/// `SoaContext::index`.
pub const SOA_INDEX: i32 = offset_of!(SoaContext, index) as i32;
/// `SoaContext::uniforms`.
pub const SOA_UNIFORMS: i32 = offset_of!(SoaContext, uniforms) as i32;
/// `SoaContext::batch_input`.
pub const SOA_BATCH_INPUT: i32 = offset_of!(SoaContext, batch_input) as i32;
/// `SoaContext::batch_output`.
pub const SOA_BATCH_OUTPUT: i32 = offset_of!(SoaContext, batch_output) as i32;
/// `SoaContext::batch_count`.
pub const SOA_BATCH_COUNT: i32 = offset_of!(SoaContext, batch_count) as i32;
/// `SoaContext::batch_done`.
pub const SOA_BATCH_DONE: i32 = offset_of!(SoaContext, batch_done) as i32;
/// `SoaContext::batch_instructions`.
pub const SOA_BATCH_INSTRUCTIONS: i32 = offset_of!(SoaContext, batch_instructions) as i32;
/// `SoaContext::waiting`.
pub const SOA_WAITING: i32 = offset_of!(SoaContext, waiting) as i32;
/// `SoaContext::pending`.
pub const SOA_PENDING: i32 = offset_of!(SoaContext, pending) as i32;
/// `SoaContext::inactive`.
pub const SOA_INACTIVE: i32 = offset_of!(SoaContext, inactive) as i32;
/// `SoaContext::alive`.
pub const SOA_ALIVE: i32 = offset_of!(SoaContext, alive) as i32;
/// `SoaContext::al_owner`.
pub const SOA_AL_OWNER: i32 = offset_of!(SoaContext, al_owner) as i32;
/// `SoaContext::loop_owner`.
pub const SOA_LOOP_OWNER: i32 = offset_of!(SoaContext, loop_owner) as i32;
/// `SoaContext::split`.
pub const SOA_SPLIT: i32 = offset_of!(SoaContext, split) as i32;
/// `SoaContext::group_instructions`.
pub const SOA_GROUP_INSTRUCTIONS: i32 = offset_of!(SoaContext, group_instructions) as i32;
/// `SoaContext::batch_splits`.
pub const SOA_BATCH_SPLITS: i32 = offset_of!(SoaContext, batch_splits) as i32;
/// `SoaContext::budget`.
pub const SOA_BUDGET: i32 = offset_of!(SoaContext, budget) as i32;
/// `SoaContext::loop_counters`.
pub const SOA_LOOP_COUNTERS: i32 = offset_of!(SoaContext, loop_counters) as i32;
/// `SoaContext::al`.
pub const SOA_AL: i32 = offset_of!(SoaContext, al) as i32;
/// `SoaContext::deopt_pc`.
pub const SOA_DEOPT_PC: i32 = offset_of!(SoaContext, deopt_pc) as i32;
/// `SoaContext::saved_mxcsr`.
pub const SOA_SAVED_MXCSR: i32 = offset_of!(SoaContext, saved_mxcsr) as i32;
/// `SoaContext::out_mask`.
pub const SOA_OUT_MASK: i32 = offset_of!(SoaContext, out_mask) as i32;
/// `SoaContext::start_temp`.
pub const SOA_START_TEMP: i32 = offset_of!(SoaContext, start_temp) as i32;
/// `SoaContext::start_a0`.
pub const SOA_START_A0: i32 = offset_of!(SoaContext, start_a0) as i32;
/// `SoaContext::start_a0_rel`.
pub const SOA_START_A0_REL: i32 = offset_of!(SoaContext, start_a0_rel) as i32;
/// `SoaContext::start_cmp`.
pub const SOA_START_CMP: i32 = offset_of!(SoaContext, start_cmp) as i32;
/// `SoaContext::start_al`.
pub const SOA_START_AL: i32 = offset_of!(SoaContext, start_al) as i32;

/// `SoaContext::gs_lane_rows`.
pub const SOA_GS_LANE_ROWS: i32 = offset_of!(SoaContext, gs_lane_rows) as i32;
/// `SoaContext::gs_lane_flags`.
pub const SOA_GS_LANE_FLAGS: i32 = offset_of!(SoaContext, gs_lane_flags) as i32;
/// `SoaContext::gs_rows_next`.
pub const SOA_GS_ROWS_NEXT: i32 = offset_of!(SoaContext, gs_rows_next) as i32;
/// `SoaContext::gs_flags_next`.
pub const SOA_GS_FLAGS_NEXT: i32 = offset_of!(SoaContext, gs_flags_next) as i32;
/// `SoaContext::gs_row_stride`.
pub const SOA_GS_ROW_STRIDE: i32 = offset_of!(SoaContext, gs_row_stride) as i32;
/// `SoaContext::gs_flag_stride`.
pub const SOA_GS_FLAG_STRIDE: i32 = offset_of!(SoaContext, gs_flag_stride) as i32;
/// `SoaContext::gs_vsize`.
pub const SOA_GS_VSIZE: i32 = offset_of!(SoaContext, gs_vsize) as i32;
/// `SoaContext::gs_cursor`.
pub const SOA_GS_CURSOR: i32 = offset_of!(SoaContext, gs_cursor) as i32;
/// `SoaContext::gs_flag_cursor`.
pub const SOA_GS_FLAG_CURSOR: i32 = offset_of!(SoaContext, gs_flag_cursor) as i32;
/// `SoaContext::gs_emits`.
pub const SOA_GS_EMITS: i32 = offset_of!(SoaContext, gs_emits) as i32;
/// `SoaContext::gs_left`.
pub const SOA_GS_LEFT: i32 = offset_of!(SoaContext, gs_left) as i32;
/// `SoaContext::gs_slots_hit`.
pub const SOA_GS_SLOTS_HIT: i32 = offset_of!(SoaContext, gs_slots_hit) as i32;
/// `SoaContext::gs_row_off`.
pub const SOA_GS_ROW_OFF: i32 = offset_of!(SoaContext, gs_row_off) as i32;
/// `SoaContext::gs_last7`.
pub const SOA_GS_LAST7: i32 = offset_of!(SoaContext, gs_last7) as i32;
/// `SoaContext::gs_prev7`.
pub const SOA_GS_PREV7: i32 = offset_of!(SoaContext, gs_prev7) as i32;
/// `SoaContext::gs_last6`.
pub const SOA_GS_LAST6: i32 = offset_of!(SoaContext, gs_last6) as i32;
/// `SoaContext::gs_slot7`.
pub const SOA_GS_SLOT7: i32 = offset_of!(SoaContext, gs_slot7) as i32;

const _: () = assert!(SOA_INPUT % 32 == 0 && SOA_TEMP % 32 == 0 && SOA_OUTPUT % 32 == 0);
const _: () = assert!(SOA_INPUT_FLUSHED % 32 == 0 && SOA_UNIFORMS_FLUSHED % 32 == 0);
const _: () = assert!(SOA_A0_REL % 32 == 0);
const _: () = assert!(SOA_A0 % 32 == 0 && SOA_CMP % 32 == 0 && SOA_REL % 32 == 0);
const _: () = assert!(SOA_SCRATCH % 32 == 0 && SOA_INDEX % 32 == 0);
const _: () = assert!(SOA_INACTIVE % 32 == 0 && SOA_WAITING % 32 == 0);

/// Status the SoA entry returns besides `runtime::code_buffer::Status` (done 0, deopt 1,
/// budget 2): after lanes took different paths, some of them needed an aL or loop counter of
/// their own (see "Divergence" in [`x64`]).
pub const STATUS_DIVERGED: u32 = 3;

/// Status of geometry-shader SoA code: an invocation emitted more or fewer vertices than
/// `SoaContext::gs_emits` (see [`geometry`]).
pub const STATUS_EMITS: u32 = 4;

/// Why a program does not run on the SoA path of `backend` (`None` from [`eligibility`]
/// means it does).
pub fn eligibility(
    program: &Program,
    analysis: &Analysis,
    features: HostFeatures,
    backend: Backend,
) -> Option<&'static str> {
    // NEON is part of AArch64; x86-64 needs AVX2.
    if backend == Backend::X64 && !features.contains(HostFeatures::AVX2.union(HostFeatures::AVX)) {
        return Some("the host has no AVX2");
    }
    if program.kind() == ShaderKind::Geometry {
        return geometry::plan(program, analysis).err();
    }
    // Everything else compiles: uniform control flow as is, cmp-dependent branches as uniform
    // checks, deopt sites as whole-group fallbacks. Listed so that a new guard kind is a
    // conscious decision here.
    for n in &analysis.nodes {
        if let Exit::Branch { guard, .. } = n.exit {
            match guard {
                Guard::Cond(_) | Guard::Bool { .. } => {}
            }
        }
    }
    None
}

/// What SoA code reads of the per-call copies of the uniforms in [`SoaContext`].
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformUse {
    /// Rows of `uniforms_flushed` it may read (bit n = row n; all for relative reads).
    pub flushed_rows: u128,
    /// It reads `uniforms_rel` (a0-relative reads by flushing arithmetic).
    pub rel: bool,
}

/// How SoA code runs on this host.
enum SoaExec {
    /// Read+execute mapping of the code (W^X: written while not executable, as in
    /// `runtime::code_buffer`), for the host's own backend.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    Native(dynasmrt::ExecutableBuffer),
    /// AArch64 code under the unicorn emulator (`a64::emulator`).
    #[cfg(feature = "emulate-a64")]
    Emulated(crate::host::a64::emulator::EmuCode),
}

/// Compiled SoA code of one program, plus how often it was used.
pub struct SoaCode {
    exec: SoaExec,
    code: Vec<u8>,
    code_len: usize,
    marks: Vec<Mark>,
    /// What the code reads of the per-call uniform copies.
    uniform_use: UniformUse,
    groups: AtomicU64,
    fallbacks: AtomicU64,
    skipped: AtomicU64,
    splits: AtomicU64,
    /// Geometry shaders: what [`geometry::plan`] proved.
    gs: Option<geometry::GsPlan>,
    /// Geometry shaders: the vertices an invocation emitted when last counted (the E the
    /// code is told to expect).
    gs_emits: std::sync::atomic::AtomicU32,
}

impl std::fmt::Debug for SoaCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SoaCode({} bytes)", self.code.len())
    }
}

/// Counters of the SoA path of one [`CompiledShader`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Groups of [`LANES`] vertices that finished on SoA code.
    pub groups: u64,
    /// Groups that stopped (per-lane aL or loop counters, budget, deopt) and were re-run per
    /// vertex.
    pub fallbacks: u64,
    /// Groups run per vertex without trying SoA code, after runs of stopped groups (see
    /// `run`).
    pub skipped: u64,
    /// Divergent branches (the active lanes disagreed) that finished groups ran with lane
    /// masks.
    pub splits: u64,
}

/// How the NEON lane code (`a64.rs`) maps a group of [`LANES`] vertices onto q registers of
/// four lanes. Both run the same groups, context and runtime and give the same results; they
/// differ only in the instructions executed per vertex and in code size (DEVELOPERS.md, "The
/// multi-vertex (SoA) backend", has the measurements). x86-64 code ignores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum A64Lanes {
    /// The body runs twice per group, once per half of four lanes.
    #[default]
    Four,
    /// The body runs once per group: control flow, budget checks and lane masks are the
    /// group's, and each instruction's lane operations run for lanes 0-3, then for lanes 4-7.
    Eight,
}

/// SoA code as generated: `(code, instruction bytes, marks, uniform use)`.
pub(crate) type Generated = (Vec<u8>, usize, Vec<Mark>, UniformUse);

/// Generate the SoA code of `backend` for `program` if it is eligible (whether or not this
/// host can run it).
#[allow(clippy::too_many_arguments, reason = "one compilation's parameters")]
fn codegen(
    program: &Program,
    analysis: &Analysis,
    mode: FloatMode,
    max_rule: MaxRule,
    features: HostFeatures,
    from_state: bool,
    backend: Backend,
    a64_lanes: A64Lanes,
) -> CompileResult<Option<(Generated, Option<geometry::GsPlan>)>> {
    if eligibility(program, analysis, features, backend).is_some() {
        return Ok(None);
    }
    let gs = match program.kind() {
        ShaderKind::Geometry => geometry::plan(program, analysis).ok(),
        ShaderKind::Vertex => None,
    };
    if from_state && program.kind() != ShaderKind::Vertex {
        return Ok(None);
    }
    let generated = match backend {
        Backend::X64 => crate::pica::x64::lanes::generate(
            program,
            analysis,
            mode,
            max_rule,
            gs.as_ref(),
            from_state,
        )?,
        Backend::A64 => {
            match crate::pica::a64::lanes::generate(
                program,
                analysis,
                mode,
                max_rule,
                gs.as_ref(),
                from_state,
                a64_lanes,
            )? {
                Some(generated) => generated,
                None => return Ok(None),
            }
        }
    };
    Ok(Some((generated, gs)))
}

/// Build the SoA code of `backend` for `program` if it is eligible and runnable on this host
/// (natively, or under the emulator for AArch64 code with the `emulate-a64` feature).
#[allow(clippy::too_many_arguments, reason = "one compilation's parameters")]
pub(crate) fn compile(
    program: &Program,
    analysis: &Analysis,
    mode: FloatMode,
    max_rule: MaxRule,
    features: HostFeatures,
    from_state: bool,
    backend: Backend,
    a64_lanes: A64Lanes,
) -> CompileResult<Option<SoaCode>> {
    let emulated = backend == Backend::A64 && cfg!(feature = "emulate-a64");
    if !native(backend) && !emulated {
        return Ok(None);
    }
    let Some(((code, code_len, marks, uniform_use), gs)) = codegen(
        program, analysis, mode, max_rule, features, from_state, backend, a64_lanes,
    )?
    else {
        return Ok(None);
    };
    let gs_emits = analysis.run_bounds().map_or(0, |b| b.emits);
    let Some(exec) = executable(&code, backend)? else {
        return Ok(None);
    };
    Ok(Some(SoaCode {
        exec,
        code,
        code_len,
        marks,
        uniform_use,
        groups: AtomicU64::new(0),
        fallbacks: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        splits: AtomicU64::new(0),
        gs,
        gs_emits: std::sync::atomic::AtomicU32::new(gs_emits),
    }))
}

/// Code for `backend` runs natively on this host.
fn native(backend: Backend) -> bool {
    match backend {
        Backend::X64 => cfg!(target_arch = "x86_64"),
        Backend::A64 => cfg!(target_arch = "aarch64"),
    }
}

/// The runnable form of `code` for `backend` on this host, if it has one.
fn executable(code: &[u8], backend: Backend) -> CompileResult<Option<SoaExec>> {
    if native(backend) {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        {
            let map_err = |e: std::io::Error| {
                crate::Error::Internal(format!("cannot map executable memory: {e}"))
            };
            let mut m = dynasmrt::mmap::MutableBuffer::new(code.len().max(1)).map_err(map_err)?;
            m.set_len(code.len());
            m.copy_from_slice(code);
            let exec = m.make_exec().map_err(map_err)?;
            return Ok(Some(SoaExec::Native(exec)));
        }
    }
    #[cfg(feature = "emulate-a64")]
    if backend == Backend::A64 {
        return crate::host::a64::emulator::EmuCode::new(code)
            .map(|c| Some(SoaExec::Emulated(c)))
            .map_err(crate::Error::Internal);
    }
    let _ = code;
    Ok(None)
}

impl CompiledShader {
    /// Vertices `Invocation::batch` (geometry shaders: invocations `run_points`) processes per SoA
    /// group: [`LANES`] when the program runs on the multi-vertex backend, 1 otherwise. Generates
    /// the multi-vertex code if `Invocation::batch` has not yet, so a loader can call it to take
    /// that cost up front.
    pub fn batch_lanes(&self) -> usize {
        if self.soa().is_some() {
            LANES
        } else {
            1
        }
    }

    /// The multi-vertex code runs with lane masks, so that vertices of a group may take
    /// different paths at cmp-dependent branches (false without multi-vertex code).
    pub fn batch_lane_masks(&self) -> bool {
        self.soa().is_some() && crate::pica::x64::lanes::needs_lane_masks(&self.analysis)
    }

    /// Why `Invocation::batch` runs one vertex per call of the compiled code (`None` when it runs
    /// [`LANES`] vertices per group on the multi-vertex backend).
    pub fn batch_ineligibility(&self) -> Option<&'static str> {
        if self.program.kind() != ShaderKind::Vertex {
            return Some("not a vertex shader");
        }
        self.soa_ineligibility()
    }

    /// Why the program has no multi-vertex code on this host (`None` when it has).
    fn soa_ineligibility(&self) -> Option<&'static str> {
        if let Some(why) = eligibility(&self.program, &self.analysis, self.features, self.backend())
        {
            return Some(why);
        }
        if self.soa().is_none() {
            return Some("this host cannot run the code");
        }
        None
    }

    /// Why a point run ([`Invocation::points`](crate::Invocation::points)) runs one
    /// invocation at a time (`None` when it runs [`LANES`] invocations per group on the
    /// multi-vertex backend; `batch/geometry.rs` has the proof).
    pub fn points_ineligibility(&self) -> Option<&'static str> {
        if self.program.kind() != ShaderKind::Geometry {
            return Some("not a geometry shader");
        }
        self.soa_ineligibility()
    }

    /// SoA usage counters (zero when [`Self::batch_lanes`] is 1).
    pub fn batch_stats(&self) -> BatchStats {
        Self::stats_of(self.soa())
    }

    /// [`Self::batch_stats`] of the multi-vertex code that batches starting from a given unit state
    /// run on ([`Invocation::from_state`](crate::Invocation::from_state); zero until the first such
    /// batch).
    pub fn batch_from_stats(&self) -> BatchStats {
        Self::stats_of(self.soa_from.get().and_then(Option::as_ref))
    }

    fn stats_of(soa: Option<&SoaCode>) -> BatchStats {
        match soa {
            Some(s) => BatchStats {
                groups: s.groups.load(Ordering::Relaxed),
                fallbacks: s.fallbacks.load(Ordering::Relaxed),
                skipped: s.skipped.load(Ordering::Relaxed),
                splits: s.splits.load(Ordering::Relaxed),
            },
            None => BatchStats::default(),
        }
    }

    /// Generate the multi-vertex code of this shader's backend without making it runnable,
    /// for code-size and compile-time reports of code this host may not run: the time it
    /// took and its size in bytes (`None` when the program has no multi-vertex code).
    pub fn batch_codegen(&self) -> Option<(std::time::Duration, usize)> {
        let start = std::time::Instant::now();
        let ((code, ..), _) = codegen(
            &self.program,
            &self.analysis,
            self.mode,
            self.max_rule,
            self.features,
            false,
            self.backend(),
            self.a64_lanes,
        )
        .ok()??;
        Some((start.elapsed(), code.len()))
    }

    /// The SoA machine code (empty when there is none) and its annotations.
    pub fn batch_code(&self) -> (&[u8], usize, &[Mark]) {
        match self.soa() {
            Some(s) => (&s.code, s.code_len, &s.marks),
            None => (&[], 0, &[]),
        }
    }
}

/// The calling thread's [`SoaContext`] (about 30 KiB), kept between `Invocation::batch` calls:
/// allocating and zeroing it per call cost as much as running a 64-vertex batch of a short
/// shader. What is read across groups and calls keeps an invariant: `waiting` and `pending`
/// are all zero between groups, `whole_flush` describes what the flushed tables hold; nothing
/// else is read before the generated code or [`run`] writes it for the current group.
struct Context(Option<Box<SoaContext>>);

thread_local! {
    static SPARE_CONTEXT: std::cell::Cell<Option<Box<SoaContext>>> =
        const { std::cell::Cell::new(None) };
}

impl Context {
    fn take() -> Context {
        let spare = SPARE_CONTEXT.try_with(|c| c.take()).ok().flatten();
        Context(Some(spare.unwrap_or_default()))
    }
}

impl std::ops::Deref for Context {
    type Target = SoaContext;
    fn deref(&self) -> &SoaContext {
        self.0.as_deref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for Context {
    fn deref_mut(&mut self) -> &mut SoaContext {
        self.0.as_deref_mut().expect("present until dropped")
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if let Some(ctx) = self.0.take() {
            // During thread teardown the slot may be gone: the context is then just freed.
            let _ = SPARE_CONTEXT.try_with(|c| c.set(Some(ctx)));
        }
    }
}

/// Fill the context's flushed uniform copies for one call. Only the rows the code can read:
/// a short shader reads a handful of the 128, and for 64-vertex batches flushing all of them
/// cost a tenth of the call. The float mode is matched once, outside the loop, so that the
/// float model's `flush_input` is inlined with a constant mode and the loop vectorises.
fn flush_uniforms(
    ctx: &mut SoaContext,
    table: &[[f32; 4]; FLOAT_UNIFORM_ROWS],
    usage: UniformUse,
    mode: FloatMode,
) {
    use picajit_interp::pica::float::{flush_input, Rounding};
    #[inline(always)]
    fn fill(
        dst: &mut [[f32; 4]; FLOAT_UNIFORM_ROWS],
        src: &[[f32; 4]; FLOAT_UNIFORM_ROWS],
        rows: u128,
        flush: impl Fn(f32) -> f32,
    ) {
        if rows == u128::MAX {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = s.map(&flush);
            }
            return;
        }
        let mut rows = rows;
        while rows != 0 {
            let k = rows.trailing_zeros() as usize;
            dst[k] = src[k].map(&flush);
            rows &= rows - 1;
        }
    }
    // Programs with relative reads may read any row, so every row is flushed (and, for
    // a0-relative reads by flushing arithmetic, tripled: 8 KiB of writes). For 64-vertex
    // batches that was a third of the call: skipped when the uniforms are those of the last
    // whole fill.
    let whole = usage.flushed_rows == u128::MAX;
    if let (true, Some(cached)) = (whole, &mut ctx.whole_flush) {
        let same = cached.mode == mode
            && table
                .iter()
                .zip(&cached.bits)
                .all(|(row, bits)| row.map(f32::to_bits) == *bits);
        if same {
            if usage.rel && !cached.rel {
                triple(&mut ctx.uniforms_rel, &ctx.uniforms_flushed);
                cached.rel = true;
            }
            return;
        }
    }
    ctx.whole_flush = None;
    let (dst, rows) = (&mut ctx.uniforms_flushed, usage.flushed_rows);
    match mode {
        FloatMode::F24(Rounding::TowardZero) => fill(dst, table, rows, |x| {
            flush_input(x, FloatMode::F24(Rounding::TowardZero))
        }),
        FloatMode::F24(Rounding::NearestEven) => fill(dst, table, rows, |x| {
            flush_input(x, FloatMode::F24(Rounding::NearestEven))
        }),
        FloatMode::F32 => fill(dst, table, rows, |x| flush_input(x, FloatMode::F32)),
    }
    if whole {
        if usage.rel {
            triple(&mut ctx.uniforms_rel, &ctx.uniforms_flushed);
        }
        ctx.whole_flush = Some(WholeFlush {
            mode,
            bits: table.map(|row| row.map(f32::to_bits)),
            rel: usage.rel,
        });
    }
}

/// `SoaContext::uniforms_rel` from the flushed rows.
fn triple(rel: &mut [[f32; 4]; REL_ROWS], flushed: &[[f32; 4]; FLOAT_UNIFORM_ROWS]) {
    for chunk in rel.chunks_exact_mut(FLOAT_UNIFORM_ROWS) {
        chunk.copy_from_slice(flushed);
    }
}

/// Add the result of running part of a batch, from row `lo` on, to `info` (or give its error
/// with the row index in the whole batch).
fn add_part(
    info: &mut BatchInfo,
    part: Result<BatchInfo, BatchError>,
    lo: usize,
) -> Result<(), BatchError> {
    let r = part.map_err(|e| BatchError {
        index: e.index + lo,
        error: e.error,
    })?;
    info.instructions += r.instructions;
    info.deopts += r.deopts;
    Ok(())
}

/// `Invocation::batch` on the SoA path: full groups compiled, stopped groups and the tail per
/// vertex.
#[allow(clippy::too_many_arguments, reason = "one batch call's parameters")]
pub(crate) fn run(
    shader: &CompiledShader,
    soa: &SoaCode,
    inputs: &[[[f32; 4]; 16]],
    outputs: &mut [[[f32; 4]; 16]],
    uniforms: &Uniforms,
    budget: u64,
    out_mask: u16,
    from: Option<&UnitState>,
) -> Result<BatchInfo, BatchError> {
    let n = inputs.len().min(outputs.len());
    let full = n - n % LANES;
    let mut info = BatchInfo::default();
    let mut ctx = Context::take();
    ctx.uniforms = uniforms;
    ctx.budget = budget;
    ctx.out_mask = u32::from(out_mask);
    if let Some(s) = from {
        fill_start(&mut ctx, s);
    }
    flush_uniforms(
        &mut ctx,
        uniforms.float_table(),
        soa.uniform_use,
        shader.mode,
    );
    let mut start = 0;
    let per_vertex = |lo: usize,
                      hi: usize,
                      outputs: &mut [[[f32; 4]; 16]],
                      info: &mut BatchInfo|
     -> Result<(), BatchError> {
        let r = match from {
            None => shader.run_batch_rows(
                &inputs[lo..hi],
                &mut outputs[lo..hi],
                uniforms,
                budget,
                out_mask,
            ),
            Some(s) => {
                shader.run_rows_from(&inputs[lo..hi], &mut outputs[lo..hi], uniforms, budget, s)
            }
        };
        add_part(info, r, lo)
    };
    // Where nearly every group stops (vertices taking different branches), starting each on
    // SoA code and re-running it costs more than running per vertex from the start. After
    // two stopped groups in a row, the next `skip` groups run per vertex, then SoA code is
    // tried again; `skip` doubles while that keeps failing (up to 64 groups, so at most ~3%
    // of the work goes to probing) and resets when a group finishes on SoA code.
    let (mut streak, mut skip) = (0u32, 4usize);
    while start < full {
        if streak >= 2 {
            let hi = (start + skip * LANES).min(full);
            soa.skipped
                .fetch_add(((hi - start) / LANES) as u64, Ordering::Relaxed);
            per_vertex(start, hi, outputs, &mut info)?;
            start = hi;
            streak = 0;
            skip = (skip * 2).min(64);
            continue;
        }
        ctx.batch_input = inputs[start..].as_ptr();
        ctx.batch_output = outputs[start..].as_mut_ptr();
        ctx.batch_count = (full - start) as u64;
        ctx.batch_done = 0;
        ctx.batch_instructions = 0;
        ctx.batch_splits = 0;
        // SAFETY: the SoA entry reads `batch_count` input rows and writes as many output
        // rows (both slices hold at least `full - start` rows from `start`, and are distinct
        // since one is `&` and the other `&mut`), reads `*uniforms` (borrowed for the call)
        // and writes only `ctx` (exclusively borrowed). It follows the System V ABI and
        // restores MXCSR (see `x64::generate`).
        let status = unsafe { call(&soa.exec, &mut ctx, false) };
        let done = ctx.batch_done as usize;
        info.instructions += ctx.batch_instructions;
        soa.splits.fetch_add(ctx.batch_splits, Ordering::Relaxed);
        soa.groups
            .fetch_add((done / LANES) as u64, Ordering::Relaxed);
        start += done;
        if done > 0 {
            (streak, skip) = (0, 4);
        }
        if status != 0 {
            soa.fallbacks.fetch_add(1, Ordering::Relaxed);
            per_vertex(start, start + LANES, outputs, &mut info)?;
            start += LANES;
            streak += 1;
        }
    }
    if full < n {
        per_vertex(full, n, outputs, &mut info)?;
    }
    Ok(info)
}

/// The `start_*` fields of the context from a unit state, broadcast to every lane.
fn fill_start(ctx: &mut SoaContext, s: &UnitState) {
    for (bank, row) in ctx.start_temp.iter_mut().zip(&s.temp) {
        for (lanes, &v) in bank.iter_mut().zip(row) {
            *lanes = [v; LANES];
        }
    }
    for k in 0..2 {
        let a0 = s.a0[k];
        ctx.start_a0[k] = [a0; LANES];
        // As MOVA keeps it: `16 · (128 + (a0 in -128..=127 ? a0 : 0))` (see `a0_rel`).
        let off = if (-128..=127).contains(&a0) { a0 } else { 0 };
        ctx.start_a0_rel[k] = [(16 * (128 + off)) as u32; LANES];
        ctx.start_cmp[k] = [if s.cmp[k] { u32::MAX } else { 0 }; LANES];
    }
    ctx.start_al = s.al;
}

/// Call the SoA entry.
///
/// # Safety
///
/// `ctx` must describe valid batch rows (`batch_count` readable input rows, as many writable
/// output rows; for geometry code, `geometry`, no output rows but the emit-buffer places its
/// `gs_*` fields lead to, see [`geometry`]) and a valid `uniforms` pointer; `exec` must come
/// from [`compile`].
unsafe fn call(exec: &SoaExec, ctx: &mut SoaContext, geometry: bool) -> u32 {
    let _ = geometry; // only the emulator copies differ
    match exec {
        #[cfg(target_arch = "x86_64")]
        SoaExec::Native(buf) => {
            type Entry = unsafe extern "sysv64" fn(*mut SoaContext) -> u32;
            // SAFETY: the buffer starts with the SoA entry generated by `x64::generate`, a
            // complete System V function taking the context pointer; the mapping is
            // executable and outlives the call.
            let f: Entry = unsafe { std::mem::transmute(buf.as_ptr()) };
            // SAFETY: forwarded contract (pointers in `ctx`); the code touches only memory
            // reachable from them and restores callee-saved registers and MXCSR.
            unsafe { f(ctx) }
        }
        #[cfg(target_arch = "aarch64")]
        SoaExec::Native(buf) => {
            type Entry = unsafe extern "C" fn(*mut SoaContext) -> u32;
            // SAFETY: the buffer starts with the SoA entry generated by `a64::generate`, a
            // complete AAPCS64 function taking the context pointer; the mapping is
            // executable and outlives the call.
            let f: Entry = unsafe { std::mem::transmute(buf.as_ptr()) };
            // SAFETY: forwarded contract (pointers in `ctx`); the code touches only memory
            // reachable from them and restores x19-x30, d8-d15 and FPCR.
            unsafe { f(ctx) }
        }
        #[cfg(feature = "emulate-a64")]
        SoaExec::Emulated(code) => {
            // The emulator reads and writes, in place of the code, the rows and uniforms the
            // context points at.
            let r = if geometry {
                // SAFETY: forwarded contract (geometry: the emit-buffer places).
                unsafe { code.call_soa_gs(ctx) }
            } else {
                // SAFETY: forwarded contract.
                unsafe { code.call_soa(ctx) }
            };
            match r {
                Ok(status) => status,
                Err(e) => {
                    // As for per-vertex code: an emulator failure is a deopt of the group,
                    // which the caller reruns per vertex.
                    crate::host::a64::emulator::set_last_error(e);
                    ctx.deopt_pc = u32::MAX;
                    crate::host::runtime::Status::Deopt as u32
                }
            }
        }
    }
}
