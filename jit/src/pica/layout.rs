//! The memory layout generated code addresses and what it returns: the interpreter's register
//! structs (offsets taken from `picajit_interp::pica::state::OFFSET_*`, never recomputed here),
//! the per-vertex code's context block ([`JitContext`]), the multi-vertex code's
//! ([`SoaContext`]), and the [`Status`] both return.
//!
//! Per-vertex code receives one pointer, to a [`JitContext`]. Everything an invocation reads or
//! writes is reached from it:
//!
//! ```text
//! JitContext ─┬─ regs ──────► Registers { input, temp, output, a0, al, cmp }
//!             ├─ input ─────► [[f32; 4]; 16]   (v0-v15: regs.input, or a batch row)
//!             ├─ output ────► [[f32; 4]; 16]   (o0-o15: regs.output, or a batch row)
//!             ├─ uniforms ──► Uniforms { float[128], int[4], bools }
//!             ├─ budget, loop_counters[4], deopt_pc, saved_mxcsr
//!             └─ geometry: other_bank ─► [[f32; 4]; 16], emit_buf ─► [EmitRecord; emit_cap],
//!                          emit_len, SETEMIT parameters
//!                          (other_bank and emit_buf point into the caller's GeometryState)
//! ```
//!
//! Inputs and outputs go through their own pointers so that a batch can point them at the
//! caller's arrays without copying; temporaries, address registers and flags live in `regs`
//! for single invocations, and in the batch entry's own stack frame (laid out as the same part
//! of `Registers`) for batches, whose callers then need no register block.
//!
//! Multi-vertex code receives one pointer, to a [`SoaContext`]: the group's registers in
//! structure-of-arrays form, the batch rows it reads and writes, and the per-call copies of the
//! uniforms it reads.

use crate::pica::analysis::blocks::MAX_NODES;
use picajit_interp::pica::float::FloatMode;
use picajit_interp::pica::state::{
    EmittedVertex, Registers, Uniforms, FLOAT_UNIFORM_ROWS, OFFSET_A0, OFFSET_AL, OFFSET_CMP,
    OFFSET_EMITTED_FLAGS, OFFSET_EMITTED_OUTPUTS, OFFSET_TEMP, OFFSET_UNIFORM_BOOL,
    OFFSET_UNIFORM_FLOAT, OFFSET_UNIFORM_INT,
};
use std::mem::offset_of;

/// One vertex written by EMIT. Generated code appends these straight into the spare capacity
/// of `GeometryState::emitted`, so the record is the interpreter's own type (its layout is
/// `#[repr(C)]` and published through `OFFSET_EMITTED_*`).
pub type EmitRecord = EmittedVertex;

/// EMIT records a geometry-shader invocation makes room for before it runs (`invoke.rs`): the
/// spare capacity of `GeometryState::emitted` it ensures. More EMITs deopt while the capacity
/// lacks room.
pub const EMIT_CAPACITY: usize = 64;

/// Per-call context block. `#[repr(C)]`: generated code addresses it through the `CTX_*`
/// offsets below.
#[repr(C, align(16))]
#[derive(Debug)]
pub struct JitContext {
    /// Temporaries, a0, aL and cmp (and, for single runs, inputs and outputs). Not used by the
    /// batch entry.
    pub regs: *mut Registers,
    /// v0-v15.
    pub input: *const [[f32; 4]; 16],
    /// o0-o15 (the current bank for geometry shaders).
    pub output: *mut [[f32; 4]; 16],
    /// Uniforms.
    pub uniforms: *const Uniforms,
    /// In: the instruction budget. Out: what is left of it.
    pub budget: u64,
    /// Remaining-iteration counters of the loop frames, indexed by the slot the analysis gave
    /// each frame.
    pub loop_counters: [u32; 4],
    /// Out: PICA address of the instruction that requested a deopt (diagnostics only).
    pub deopt_pc: u32,
    /// Caller's MXCSR, restored on every exit.
    pub saved_mxcsr: u32,
    /// The output bank not in `output` (geometry shaders).
    pub other_bank: *mut [[f32; 4]; 16],
    /// EMIT records buffer.
    pub emit_buf: *mut EmitRecord,
    /// Capacity of `emit_buf`; an EMIT beyond it deopts.
    pub emit_cap: u32,
    /// Records written so far.
    pub emit_len: u32,
    /// SETEMIT state: vertex id, primitive flag, winding flag (in and out).
    pub setemit: [u8; 4],
    _pad: [u8; 12],
    /// Batch entry: input rows.
    pub batch_input: *const [[f32; 4]; 16],
    /// Batch entry: output rows.
    pub batch_output: *mut [[f32; 4]; 16],
    /// Batch entry: number of rows.
    pub batch_count: u64,
    /// Batch entry: rows finished (in/out); on a non-done status, the row that stopped.
    pub batch_done: u64,
    /// Batch entry: instructions executed by the finished rows (accumulated).
    pub batch_instructions: u64,
}

impl Default for JitContext {
    fn default() -> Self {
        JitContext {
            regs: std::ptr::null_mut(),
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            uniforms: std::ptr::null(),
            budget: 0,
            loop_counters: [0; 4],
            deopt_pc: 0,
            saved_mxcsr: 0,
            other_bank: std::ptr::null_mut(),
            emit_buf: std::ptr::null_mut(),
            emit_cap: 0,
            emit_len: 0,
            setemit: [0; 4],
            _pad: [0; 12],
            batch_input: std::ptr::null(),
            batch_output: std::ptr::null_mut(),
            batch_count: 0,
            batch_done: 0,
            batch_instructions: 0,
        }
    }
}

/// `JitContext::regs`.
pub const CTX_REGS: i32 = offset_of!(JitContext, regs) as i32;
/// `JitContext::input`.
pub const CTX_INPUT: i32 = offset_of!(JitContext, input) as i32;
/// `JitContext::output`.
pub const CTX_OUTPUT: i32 = offset_of!(JitContext, output) as i32;
/// `JitContext::uniforms`.
pub const CTX_UNIFORMS: i32 = offset_of!(JitContext, uniforms) as i32;
/// `JitContext::budget`.
pub const CTX_BUDGET: i32 = offset_of!(JitContext, budget) as i32;
/// `JitContext::loop_counters`.
pub const CTX_LOOP_COUNTERS: i32 = offset_of!(JitContext, loop_counters) as i32;
/// `JitContext::deopt_pc`.
pub const CTX_DEOPT_PC: i32 = offset_of!(JitContext, deopt_pc) as i32;
/// `JitContext::saved_mxcsr`.
pub const CTX_SAVED_MXCSR: i32 = offset_of!(JitContext, saved_mxcsr) as i32;
/// `JitContext::other_bank`.
pub const CTX_OTHER_BANK: i32 = offset_of!(JitContext, other_bank) as i32;
/// `JitContext::emit_buf`.
pub const CTX_EMIT_BUF: i32 = offset_of!(JitContext, emit_buf) as i32;
/// `JitContext::emit_cap`.
pub const CTX_EMIT_CAP: i32 = offset_of!(JitContext, emit_cap) as i32;
/// `JitContext::emit_len`.
pub const CTX_EMIT_LEN: i32 = offset_of!(JitContext, emit_len) as i32;
/// `JitContext::setemit`.
pub const CTX_SETEMIT: i32 = offset_of!(JitContext, setemit) as i32;
/// `JitContext::batch_input`.
pub const CTX_BATCH_INPUT: i32 = offset_of!(JitContext, batch_input) as i32;
/// `JitContext::batch_output`.
pub const CTX_BATCH_OUTPUT: i32 = offset_of!(JitContext, batch_output) as i32;
/// `JitContext::batch_count`.
pub const CTX_BATCH_COUNT: i32 = offset_of!(JitContext, batch_count) as i32;
/// `JitContext::batch_done`.
pub const CTX_BATCH_DONE: i32 = offset_of!(JitContext, batch_done) as i32;
/// `JitContext::batch_instructions`.
pub const CTX_BATCH_INSTRUCTIONS: i32 = offset_of!(JitContext, batch_instructions) as i32;
/// Size of one [`EmitRecord`].
pub const EMIT_RECORD_SIZE: i32 = std::mem::size_of::<EmitRecord>() as i32;
/// `EmitRecord::outputs`.
pub const EMIT_RECORD_OUTPUTS: i32 = OFFSET_EMITTED_OUTPUTS as i32;
/// `EmitRecord::slot` (followed by `primitive` and `winding`).
pub const EMIT_RECORD_FLAGS: i32 = OFFSET_EMITTED_FLAGS as i32;

/// `Registers::temp`.
pub const REG_TEMP: i32 = OFFSET_TEMP as i32;
/// `Registers::a0` (two i32).
pub const REG_A0: i32 = OFFSET_A0 as i32;
/// `Registers::al` (i32).
pub const REG_AL: i32 = OFFSET_AL as i32;
/// `Registers::cmp` (two u8).
pub const REG_CMP: i32 = OFFSET_CMP as i32;

/// `Uniforms::float` (128 rows of 16 bytes).
pub const UNI_FLOAT: i32 = OFFSET_UNIFORM_FLOAT as i32;
/// `Uniforms::int` (4 rows of 4 bytes: count-1, start, step, unused).
pub const UNI_INT: i32 = OFFSET_UNIFORM_INT as i32;
/// `Uniforms::bools` (u16).
pub const UNI_BOOL: i32 = OFFSET_UNIFORM_BOOL as i32;

/// Size of one vector register.
pub const VEC_SIZE: i32 = 16;

// Generated code uses aligned SSE loads on these; a layout change must not silently break that.
const _: () = assert!(OFFSET_TEMP % 16 == 0 && OFFSET_UNIFORM_FLOAT % 16 == 0);
const _: () = assert!(std::mem::align_of::<Registers>() >= 16);
const _: () = assert!(std::mem::align_of::<Uniforms>() >= 16);
const _: () = assert!(
    std::mem::size_of::<EmitRecord>() % 16 == 0
        && std::mem::align_of::<EmitRecord>() >= 16
        && OFFSET_EMITTED_OUTPUTS % 16 == 0
);
// EMIT stores the three flag bytes as one 32-bit word; the fourth byte must be padding.
const _: () = assert!(OFFSET_EMITTED_FLAGS + 4 <= std::mem::size_of::<EmitRecord>());
// The batch loop zeroes a0, aL, cmp and padding with one 16-byte store.
const _: () = assert!(OFFSET_A0 + 16 == std::mem::size_of::<Registers>());
const _: () = assert!(std::mem::size_of::<[[f32; 4]; 16]>() == 256);

/// What generated code returns in its one return register (the multi-vertex code also
/// returns [`STATUS_DIVERGED`] and [`STATUS_EMITS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Status {
    /// END reached; registers hold the results.
    Done = 0,
    /// The invocation needs the interpreter (reason at `JitContext::deopt_pc`).
    Deopt = 1,
    /// The instruction budget would run out in the next block.
    Budget = 2,
}

impl Status {
    /// The status a per-vertex entry returned (anything unknown is a deopt).
    pub fn from_code(code: u32) -> Status {
        match code {
            0 => Status::Done,
            2 => Status::Budget,
            _ => Status::Deopt,
        }
    }
}

/// One annotation of generated code: offset, PICA address, text.
pub type Mark = (usize, u32, String);

/// Vertices per group (one per 32-bit lane of a ymm register).
pub const LANES: usize = 8;

/// Most blocks a program can have (the analysis makes at most this many nodes).
pub const MAX_BLOCKS: usize = MAX_NODES;
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
    /// Masked execution (see "Divergence" in `pica/x64/lanes.rs`): per block, the lanes waiting to run it
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
    /// Geometry shaders (`pica/batch/geometry.rs`): per lane, the address of its first row / flags
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

/// Status the SoA entry returns besides [`Status`] (done 0, deopt 1, budget 2): after lanes
/// took different paths, some of them needed an aL or loop counter of their own (see
/// "Divergence" in `pica/x64/lanes.rs`).
pub const STATUS_DIVERGED: u32 = 3;

/// Status of geometry-shader SoA code: an invocation emitted more or fewer vertices than
/// `SoaContext::gs_emits` (see `pica/batch/geometry.rs`).
pub const STATUS_EMITS: u32 = 4;

/// What SoA code reads of the per-call copies of the uniforms in [`SoaContext`].
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformUse {
    /// Rows of `uniforms_flushed` it may read (bit n = row n; all for relative reads).
    pub flushed_rows: u128,
    /// It reads `uniforms_rel` (a0-relative reads by flushing arithmetic).
    pub rel: bool,
}

/// SoA code as generated: `(code, instruction bytes, marks, uniform use)`.
pub(crate) type Generated = (Vec<u8>, usize, Vec<Mark>, UniformUse);
