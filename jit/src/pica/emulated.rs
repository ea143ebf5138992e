//! How PICA's contexts reach AArch64 code under the emulator (feature `emulate-a64`): the
//! memory regions each entry reads and writes, copied into the guest's data area and back
//! (`crate::host::a64::emulator` runs the code and knows none of this). `CompiledShader::run`,
//! `try_run`, `Invocation::batch` and every test therefore work unchanged on emulated code.
//!
//! # Per-vertex code
//!
//! Generated code only touches memory reachable from its `JitContext`, so a call copies each
//! of those objects to a fixed guest address, rewrites the context's pointers to those
//! addresses, runs, and copies back what the code may write (the registers, the other output
//! bank, the EMIT records it appended, the batch outputs and the context), translating the
//! output-bank pointers back to the host objects they stand for:
//!
//! ```text
//! DATA_BASE + 0x0_0000  JitContext │ Registers │ Uniforms │ other bank │ EMIT records
//! DATA_BASE + 0x1_0000  batch input rows (BATCH_ROWS per chunk)
//! DATA_BASE + 0x11_0000 batch output rows
//! ```
//!
//! # Multi-vertex code
//!
//! The `SoaContext` sits at the start of the data area, the uniforms after it; of the context,
//! the guest gets only what the code reads before writing it. Rows go through the same guest
//! row buffers in chunks of whole groups.
//!
//! # Failures
//!
//! Each run is bounded by an instruction cap far above what a budget-bounded run needs; a run
//! that does not return (the cap, a fault) is reported by the caller as a deopt with
//! `deopt_pc = u32::MAX` (the reason in `crate::host::a64::emulator::last_error`), so the
//! invocation falls back to the interpreter and the differential tests flag it.

use crate::host::a64::emulator::{Guest, Plain, DATA_BASE, DATA_SIZE};
use crate::pica::layout::*;
use picajit_interp::pica::state::{Registers, Uniforms, OFFSET_OUTPUT};

const CTX_G: u64 = DATA_BASE;
const REGS_G: u64 = DATA_BASE + 0x400;
const UNIFORMS_G: u64 = DATA_BASE + 0x1000;
const OTHER_G: u64 = DATA_BASE + 0x2000;
const EMIT_G: u64 = DATA_BASE + 0x3000;
const EMIT_MAX: usize = 0xD000 / std::mem::size_of::<EmitRecord>();
const BATCH_IN_G: u64 = DATA_BASE + 0x1_0000;
const BATCH_OUT_G: u64 = DATA_BASE + 0x11_0000;
const ROW: usize = 256;
/// Rows per batch chunk.
const BATCH_ROWS: usize = 0x10_0000 / ROW;
/// Multi-vertex code: its `SoaContext` at `CTX_G`, the uniforms after it.
const SOA_UNIFORMS_G: u64 = DATA_BASE + 0xF000;

// The guest regions must not overlap, and the EMIT area must hold the runtime's buffer.
const _: () = assert!(EMIT_G + (EMIT_MAX * std::mem::size_of::<EmitRecord>()) as u64 <= BATCH_IN_G);
const _: () = assert!(BATCH_IN_G + (BATCH_ROWS * ROW) as u64 <= BATCH_OUT_G);
const _: () = assert!(BATCH_OUT_G + (BATCH_ROWS * ROW) as u64 <= DATA_BASE + DATA_SIZE);
const _: () = assert!(EMIT_MAX >= EMIT_CAPACITY);
const _: () = assert!(std::mem::size_of::<JitContext>() <= 0x400);
const _: () = assert!(std::mem::size_of::<Registers>() <= 0xC00);
const _: () = assert!(std::mem::size_of::<Uniforms>() <= 0x1000);
const _: () = assert!(std::mem::size_of::<[[f32; 4]; 16]>() == ROW);
const _: () = assert!(std::mem::size_of::<SoaContext>() <= 0xF000);
const _: () = assert!(SOA_UNIFORMS_G + 0x1000 <= BATCH_IN_G);
const _: () = assert!(BATCH_ROWS % LANES == 0);

// SAFETY: repr(C) structs of integers, floats, raw pointers and arrays of them; the pointers
// the code leaves in a `JitContext` are translated back (`one`) before any use.
unsafe impl Plain for JitContext {}
// SAFETY: repr(C): f32 and integer arrays; `cmp` holds 0/1 bytes.
unsafe impl Plain for Registers {}
// SAFETY: repr(C): f32 arrays, integer rows and a u16 of flags (only ever written to the guest).
unsafe impl Plain for Uniforms {}
// SAFETY: repr(C): f32 arrays, a u8 and two `bool` flags, which the generated code writes
// as 0/1.
unsafe impl Plain for EmitRecord {}

/// Instruction cap of one run: far above what any budget-bounded run needs (a PICA
/// instruction is at most a few hundred AArch64 instructions), so reaching it means a bug.
fn cap(budget: u64, rows: usize) -> usize {
    let per_row = budget.saturating_add(16).saturating_mul(1024);
    per_row
        .saturating_mul(rows.max(1) as u64)
        .min(usize::MAX as u64) as usize
}

/// Write batch rows to guest memory from `base` on.
fn write_rows(guest: &mut Guest, base: u64, rows: &[[[f32; 4]; 16]]) -> Result<(), String> {
    for (k, row) in rows.iter().enumerate() {
        guest.write_value(base + (k * ROW) as u64, row)?;
    }
    Ok(())
}

/// The per-vertex code's entry at `entry` on `ctx` (0: one invocation; else the batch entry),
/// with the semantics of a native call. Returns w0.
///
/// # Safety
///
/// The pointers in `ctx` must satisfy the contract of the native call (`pica/call.rs`): they
/// are read and written here instead of by the generated code.
pub(crate) unsafe fn one(
    guest: &mut Guest,
    entry: usize,
    ctx: &mut JitContext,
) -> Result<u32, String> {
    // SAFETY: the caller guarantees `uniforms` is valid (read).
    let uniforms = unsafe { &*ctx.uniforms };
    guest.write_value(UNIFORMS_G, uniforms)?;
    let mut g = JitContext::default();
    g.regs = REGS_G as usize as *mut Registers;
    g.uniforms = UNIFORMS_G as usize as *const Uniforms;
    g.budget = ctx.budget;
    g.loop_counters = ctx.loop_counters;
    g.deopt_pc = ctx.deopt_pc;
    g.setemit = ctx.setemit;
    g.emit_len = ctx.emit_len;

    if entry != 0 {
        // The batch entry keeps its working registers on its own stack: `regs` is not used.
        // SAFETY: forwarded contract.
        return unsafe { rows(guest, entry, ctx, g) };
    }

    let regs_host = ctx.regs;
    let regs_end = regs_host as usize + std::mem::size_of::<Registers>();
    // Host pointer into `*regs` → guest address, or None.
    let in_regs = |p: usize| -> Option<u64> {
        (p >= regs_host as usize && p < regs_end).then(|| REGS_G + (p - regs_host as usize) as u64)
    };
    // SAFETY: the caller guarantees `regs` is valid (read).
    guest.write_value(REGS_G, unsafe { &*ctx.regs })?;

    // Single invocation: input/output point into `*regs` (or an output bank elsewhere).
    let guest_of_bank = |p: usize, other: usize| -> Result<u64, String> {
        if let Some(a) = in_regs(p) {
            Ok(a)
        } else if p == other && p != 0 {
            Ok(OTHER_G)
        } else {
            Err("an output pointer outside the registers and banks".into())
        }
    };
    let input = in_regs(ctx.input as usize).ok_or("input outside the registers")?;
    g.input = input as usize as *const [[f32; 4]; 16];
    let other_host = ctx.other_bank as usize;
    let out_g = guest_of_bank(ctx.output as usize, other_host)?;
    g.output = out_g as usize as *mut [[f32; 4]; 16];
    if !ctx.other_bank.is_null() {
        // SAFETY: the caller guarantees `other_bank` is valid (read/write).
        let other = unsafe { &*ctx.other_bank };
        guest.write_value(OTHER_G, other)?;
        g.other_bank = OTHER_G as usize as *mut [[f32; 4]; 16];
        g.emit_buf = EMIT_G as usize as *mut EmitRecord;
        // A larger host buffer only means fewer deopts; past the guest area the code deopts
        // as it would with a smaller buffer.
        g.emit_cap = ctx.emit_cap.min(EMIT_MAX as u32);
    }
    guest.write_value(CTX_G, &g)?;
    let w0 = guest.run(entry, CTX_G, cap(ctx.budget, 1))?;
    let mut out = JitContext::default();
    guest.read_value(CTX_G, &mut out)?;
    // SAFETY: the caller guarantees `regs` is valid for writing and not otherwise borrowed.
    let regs = unsafe { &mut *ctx.regs };
    guest.read_value(REGS_G, regs)?;
    ctx.budget = out.budget;
    ctx.loop_counters = out.loop_counters;
    ctx.deopt_pc = out.deopt_pc;
    ctx.setemit = out.setemit;
    ctx.emit_len = out.emit_len;
    if !ctx.other_bank.is_null() {
        // The code swaps the two bank pointers; map each guest bank back to its host object.
        let regs_out = std::ptr::addr_of_mut!(regs.output);
        let other_host_ptr = ctx.other_bank;
        // SAFETY: valid for writing (caller contract).
        guest.read_value(OTHER_G, unsafe { &mut *other_host_ptr })?;
        let host_of = |a: u64| -> Result<*mut [[f32; 4]; 16], String> {
            if a == REGS_G + OFFSET_OUTPUT as u64 {
                Ok(regs_out)
            } else if a == OTHER_G {
                Ok(other_host_ptr)
            } else {
                Err(format!("unknown output bank {a:#x}"))
            }
        };
        ctx.output = host_of(out.output as usize as u64)?;
        ctx.other_bank = host_of(out.other_bank as usize as u64)?;
        let n = (out.emit_len as usize).min(g.emit_cap as usize);
        for k in 0..n {
            // `emit_buf` may be uninitialised memory (a Vec's spare capacity): read into a
            // local and move it there instead of forming a reference to it.
            let mut rec = EmitRecord {
                outputs: [[0.0; 4]; 16],
                slot: 0,
                primitive: false,
                winding: false,
            };
            guest.read_value(
                EMIT_G + (k * std::mem::size_of::<EmitRecord>()) as u64,
                &mut rec,
            )?;
            // SAFETY: `emit_buf` holds `emit_cap` records (caller contract) and
            // k < g.emit_cap <= emit_cap.
            unsafe { ctx.emit_buf.add(k).write(rec) };
        }
    } else if let Some(a) = in_regs(ctx.output as usize) {
        // Vertex shaders never move the output pointer.
        if out.output as usize as u64 != a {
            return Err("output pointer moved".into());
        }
    }
    Ok(w0)
}

/// The batch entry, in chunks of [`BATCH_ROWS`] rows: the guest row pointers are biased so
/// that row `batch_done` of each chunk lands at the start of the guest row buffers.
///
/// # Safety
///
/// As [`one`].
unsafe fn rows(
    guest: &mut Guest,
    entry: usize,
    ctx: &mut JitContext,
    mut g: JitContext,
) -> Result<u32, String> {
    let count = ctx.batch_count as usize;
    let mut result = 0;
    while (ctx.batch_done as usize) < count {
        let done = ctx.batch_done as usize;
        let rows = (count - done).min(BATCH_ROWS);
        // SAFETY: the caller guarantees `batch_count` valid input and output rows.
        let (inp, outp) = unsafe {
            (
                std::slice::from_raw_parts(ctx.batch_input.add(done), rows),
                std::slice::from_raw_parts_mut(ctx.batch_output.add(done), rows),
            )
        };
        write_rows(guest, BATCH_IN_G, inp)?;
        // The code writes only the outputs the program writes (and clears only those it must):
        // the others keep the caller's values, as natively.
        write_rows(guest, BATCH_OUT_G, outp)?;
        let bias = (done * ROW) as u64;
        g.batch_input = BATCH_IN_G.wrapping_sub(bias) as usize as *const [[f32; 4]; 16];
        g.batch_output = BATCH_OUT_G.wrapping_sub(bias) as usize as *mut [[f32; 4]; 16];
        g.batch_count = (done + rows) as u64;
        g.batch_done = done as u64;
        g.batch_instructions = ctx.batch_instructions;
        g.budget = ctx.budget;
        guest.write_value(CTX_G, &g)?;
        let w0 = guest.run(entry, CTX_G, cap(ctx.budget, rows))?;
        let mut out = JitContext::default();
        guest.read_value(CTX_G, &mut out)?;
        let finished = out.batch_done as usize - done;
        // The rows that ran, including a stopped one (the runtime overwrites it).
        for (k, row) in outp.iter_mut().enumerate().take((finished + 1).min(rows)) {
            guest.read_value(BATCH_OUT_G + (k * ROW) as u64, row)?;
        }
        ctx.batch_done = out.batch_done;
        ctx.batch_instructions = out.batch_instructions;
        ctx.deopt_pc = out.deopt_pc;
        result = w0;
        if Status::from_code(w0) != Status::Done {
            break;
        }
    }
    Ok(result)
}

/// Write `v` at offset `off` of the guest's copy of the SoA context.
fn soa_write<T: Plain>(guest: &mut Guest, off: i32, v: &T) -> Result<(), String> {
    guest.write_value(CTX_G + off as u64, v)
}

/// Read a `T` at offset `off` of the guest's copy of the SoA context.
fn soa_read<T: Plain>(guest: &Guest, off: i32, out: &mut T) -> Result<(), String> {
    guest.read_value(CTX_G + off as u64, out)
}

/// What every multi-vertex entry (vertex and geometry code) reads of the context before
/// writing it: the uniform table (copied to guest memory and pointed at), its flushed and
/// relative copies, the budget and the output mask.
///
/// # Safety
///
/// `ctx.uniforms` must be valid for reading.
unsafe fn write_soa_shared(guest: &mut Guest, ctx: &SoaContext) -> Result<(), String> {
    // SAFETY: the caller guarantees `uniforms` is valid for reading.
    let uniforms = unsafe { &*ctx.uniforms };
    guest.write_value(SOA_UNIFORMS_G, uniforms)?;
    soa_write(guest, SOA_UNIFORMS_FLUSHED, &ctx.uniforms_flushed)?;
    soa_write(guest, SOA_UNIFORMS_REL, &ctx.uniforms_rel)?;
    soa_write(guest, SOA_UNIFORMS, &SOA_UNIFORMS_G)?;
    soa_write(guest, SOA_BUDGET, &ctx.budget)?;
    soa_write(guest, SOA_OUT_MASK, &ctx.out_mask)
}

/// One chunk of the multi-vertex entry: rows `done..done + inp.len()` (the input rows `inp`)
/// after the caller wrote what its kind of code needs besides. The input rows, their pointer
/// (biased so that row `done` lands at the start of the guest row buffer) and the batch
/// counters go in; the counters and `deopt_pc` come back. Returns w0 and the `batch_done` the
/// code left.
fn soa_chunk(
    guest: &mut Guest,
    ctx: &mut SoaContext,
    inp: &[[[f32; 4]; 16]],
    done: usize,
) -> Result<(u32, u64), String> {
    let rows = inp.len();
    write_rows(guest, BATCH_IN_G, inp)?;
    let bias = (done * ROW) as u64;
    soa_write(guest, SOA_BATCH_INPUT, &BATCH_IN_G.wrapping_sub(bias))?;
    soa_write(guest, SOA_BATCH_COUNT, &((done + rows) as u64))?;
    soa_write(guest, SOA_BATCH_DONE, &(done as u64))?;
    soa_write(guest, SOA_BATCH_INSTRUCTIONS, &ctx.batch_instructions)?;
    let w0 = guest.run(0, CTX_G, cap(ctx.budget, rows))?;
    let mut out_done = 0u64;
    soa_read(guest, SOA_BATCH_DONE, &mut out_done)?;
    soa_read(guest, SOA_BATCH_INSTRUCTIONS, &mut ctx.batch_instructions)?;
    soa_read(guest, SOA_DEOPT_PC, &mut ctx.deopt_pc)?;
    Ok((w0, out_done))
}

/// Multi-vertex vertex code (entry at offset 0) on `ctx`, with the semantics of a native
/// call: groups of rows from `batch_done` while a whole group is left, `batch_done`,
/// `batch_instructions`, `batch_splits` and `deopt_pc` updated, output rows of finished groups
/// written. Returns w0 (0 done).
///
/// # Safety
///
/// `ctx.uniforms` must be valid for reading, and `ctx.batch_input` / `ctx.batch_output`
/// valid for reading / writing `batch_count` rows.
pub(crate) unsafe fn lanes(guest: &mut Guest, ctx: &mut SoaContext) -> Result<u32, String> {
    // SAFETY: the caller guarantees `uniforms` is valid for reading.
    unsafe { write_soa_shared(guest, ctx) }?;
    // What code generated for `run_batch_from` starts every group from (other code does not
    // read it).
    soa_write(guest, SOA_START_TEMP, &ctx.start_temp)?;
    soa_write(guest, SOA_START_A0, &ctx.start_a0)?;
    soa_write(guest, SOA_START_A0_REL, &ctx.start_a0_rel)?;
    soa_write(guest, SOA_START_CMP, &ctx.start_cmp)?;
    soa_write(guest, SOA_START_AL, &ctx.start_al)?;
    let count = ctx.batch_count as usize;
    while ctx.batch_done as usize + LANES <= count {
        let done = ctx.batch_done as usize;
        let rows = (count - done).min(BATCH_ROWS);
        // SAFETY: the caller guarantees `batch_count` valid input and output rows.
        let (inp, outp) = unsafe {
            (
                std::slice::from_raw_parts(ctx.batch_input.add(done), rows),
                std::slice::from_raw_parts_mut(ctx.batch_output.add(done), rows),
            )
        };
        // The output registers the caller did not ask for (`out_mask`) keep their contents,
        // as in a native call: the guest rows start as the host's.
        write_rows(guest, BATCH_OUT_G, outp)?;
        let bias = (done * ROW) as u64;
        soa_write(guest, SOA_BATCH_OUTPUT, &BATCH_OUT_G.wrapping_sub(bias))?;
        soa_write(guest, SOA_BATCH_SPLITS, &ctx.batch_splits)?;
        let (w0, out_done) = soa_chunk(guest, ctx, inp, done)?;
        soa_read(guest, SOA_BATCH_SPLITS, &mut ctx.batch_splits)?;
        let finished = (out_done as usize)
            .checked_sub(done)
            .filter(|&f| f <= rows)
            .ok_or_else(|| format!("batch_done moved from {done} to {out_done}"))?;
        for (k, row) in outp.iter_mut().enumerate().take(finished) {
            guest.read_value(BATCH_OUT_G + (k * ROW) as u64, row)?;
        }
        ctx.batch_done = out_done;
        if w0 != 0 {
            return Ok(w0);
        }
    }
    Ok(0)
}

/// [`lanes`] for geometry-shader code (`pica/batch/geometry.rs`): the registers the lanes
/// carry over go in and come back with the rows `geometry::materialise` reads, and the
/// emitted vertices of finished groups are written where `gs_rows_next` / `gs_flags_next`
/// lead (advanced past them), through a guest buffer in chunks of whole groups.
///
/// # Safety
///
/// `ctx.uniforms` must be valid for reading, `ctx.batch_input` for reading `batch_count`
/// rows, and `gs_rows_next` / `gs_flags_next` for writing `batch_count · gs_row_stride`
/// / `batch_count · gs_flag_stride` bytes.
pub(crate) unsafe fn points(guest: &mut Guest, ctx: &mut SoaContext) -> Result<u32, String> {
    // SAFETY: the caller guarantees `uniforms` is valid for reading.
    unsafe { write_soa_shared(guest, ctx) }?;
    soa_write(guest, SOA_TEMP, &ctx.temp)?;
    soa_write(guest, SOA_OUTPUT, &ctx.output)?;
    soa_write(guest, SOA_A0, &ctx.a0)?;
    soa_write(guest, SOA_A0_REL, &ctx.a0_rel)?;
    soa_write(guest, SOA_CMP, &ctx.cmp)?;
    soa_write(guest, SOA_AL, &ctx.al)?;
    soa_write(guest, SOA_GS_EMITS, &ctx.gs_emits)?;
    soa_write(guest, SOA_GS_VSIZE, &ctx.gs_vsize)?;
    soa_write(guest, SOA_GS_ROW_STRIDE, &ctx.gs_row_stride)?;
    soa_write(guest, SOA_GS_FLAG_STRIDE, &ctx.gs_flag_stride)?;
    soa_write(guest, SOA_GS_ROW_OFF, &ctx.gs_row_off)?;
    soa_write(guest, SOA_GS_SLOTS_HIT, &ctx.gs_slots_hit)?;
    soa_write(guest, SOA_BATCH_OUTPUT, &0u64)?;
    // The group's emitted rows, then its flags, in the guest output row buffer.
    let (row_stride, flag_stride) = (ctx.gs_row_stride as usize, ctx.gs_flag_stride as usize);
    let per_group = LANES * (row_stride + flag_stride);
    let space = BATCH_ROWS * ROW;
    let chunk_groups = space.checked_div(per_group).unwrap_or(BATCH_ROWS / LANES);
    if chunk_groups == 0 {
        return Err(format!(
            "{per_group} bytes of vertices per group do not fit the guest buffer"
        ));
    }
    let count = ctx.batch_count as usize;
    let mut status = 0;
    while ctx.batch_done as usize + LANES <= count {
        let done = ctx.batch_done as usize;
        let rows = (count - done).min(BATCH_ROWS).min(chunk_groups * LANES);
        let rows = rows - rows % LANES;
        // SAFETY: the caller guarantees `batch_count` valid input rows.
        let inp = unsafe { std::slice::from_raw_parts(ctx.batch_input.add(done), rows) };
        let flags_g = BATCH_OUT_G + (rows * row_stride) as u64;
        soa_write(guest, SOA_GS_ROWS_NEXT, &BATCH_OUT_G)?;
        soa_write(guest, SOA_GS_FLAGS_NEXT, &flags_g)?;
        let (w0, out_done) = soa_chunk(guest, ctx, inp, done)?;
        let finished = (out_done as usize)
            .checked_sub(done)
            .filter(|&f| f <= rows && f % LANES == 0)
            .ok_or_else(|| format!("batch_done moved from {done} to {out_done}"))?;
        let (row_bytes, flag_bytes) = (finished * row_stride, finished * flag_stride);
        // The places are spare capacity (uninitialised): copied to, never borrowed.
        let mut buf = vec![0u8; row_bytes.max(flag_bytes)];
        for (from, len, to) in [
            (BATCH_OUT_G, row_bytes, ctx.gs_rows_next),
            (flags_g, flag_bytes, ctx.gs_flags_next),
        ] {
            guest.read(from, &mut buf[..len])?;
            // SAFETY: the caller guarantees the places are writable for `batch_count` rows'
            // worth of vertices; these are the next `finished` rows' worth, and `buf` holds
            // `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), to as *mut u8, len) };
        }
        ctx.gs_rows_next += row_bytes as u64;
        ctx.gs_flags_next += flag_bytes as u64;
        ctx.batch_done = out_done;
        if w0 != 0 {
            status = w0;
            break;
        }
    }
    soa_read(guest, SOA_TEMP, &mut ctx.temp)?;
    soa_read(guest, SOA_OUTPUT, &mut ctx.output)?;
    soa_read(guest, SOA_A0, &mut ctx.a0)?;
    soa_read(guest, SOA_A0_REL, &mut ctx.a0_rel)?;
    soa_read(guest, SOA_CMP, &mut ctx.cmp)?;
    soa_read(guest, SOA_AL, &mut ctx.al)?;
    soa_read(guest, SOA_GS_SLOTS_HIT, &mut ctx.gs_slots_hit)?;
    soa_read(guest, SOA_GS_LAST7, &mut ctx.gs_last7)?;
    soa_read(guest, SOA_GS_PREV7, &mut ctx.gs_prev7)?;
    soa_read(guest, SOA_GS_LAST6, &mut ctx.gs_last6)?;
    soa_read(guest, SOA_GS_SLOT7, &mut ctx.gs_slot7)?;
    Ok(status)
}
