//! The memory layout generated code addresses: the interpreter's register structs (offsets taken
//! from `picajit_interp::pica::state::OFFSET_*`, never recomputed here) and the JIT's own context block.
//!
//! Generated code receives one pointer, to a [`JitContext`]. Everything an invocation reads or
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
//! caller's arrays without copying; temporaries, address registers and flags always live in
//! `regs`.

use picajit_interp::pica::state::{
    EmittedVertex, Registers, Uniforms, OFFSET_A0, OFFSET_AL, OFFSET_CMP, OFFSET_EMITTED_FLAGS,
    OFFSET_EMITTED_OUTPUTS, OFFSET_TEMP, OFFSET_UNIFORM_BOOL, OFFSET_UNIFORM_FLOAT,
    OFFSET_UNIFORM_INT,
};
use std::mem::offset_of;

/// One vertex written by EMIT. Generated code appends these straight into the spare capacity
/// of `GeometryState::emitted`, so the record is the interpreter's own type (its layout is
/// `#[repr(C)]` and published through `OFFSET_EMITTED_*`).
pub type EmitRecord = EmittedVertex;

/// Per-call context block. `#[repr(C)]`: generated code addresses it through the `CTX_*`
/// offsets below.
#[repr(C, align(16))]
#[derive(Debug)]
pub struct JitContext {
    /// Temporaries, a0, aL and cmp (and, for single runs, inputs and outputs).
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
