//! Point-mode geometry shaders on the multi-vertex backend: eight invocations per group, as
//! `crate::pica::analysis::points::plan` proves sound.
//!
//! # Output
//!
//! Emitted vertices are written by the generated code straight into the caller's
//! [`EmitBuffer`]: lane k's j-th vertex of a group goes to vertex `8·g·E + k·E + j`. E is a
//! guess (the last count seen, or the analysis' bound) that the code checks: a group that
//! emits more or fewer vertices stops, runs per invocation, and sets the guess.
//!
//! # State after a call
//!
//! The code leaves lane 7's registers (the last invocation's) in the context, plus the rows
//! of its last two EMITs, lane 6's last one and lane 7's last one per slot. From these
//! `materialise` rebuilds exactly what the last invocation leaves: temporaries, a0, cmp and
//! aL from lane 7; the bank emitted last becomes the other bank; the current bank is the
//! one emitted two EMITs before (lane 7's previous one, or lane 6's last when E = 1) with
//! the outputs written after the last EMIT on top.

use super::*;
use crate::pica::analysis::points::comps;
use crate::pica::layout::STATUS_EMITS;
use picajit_interp::pica::state::{EmitBuffer, GeometryState, Registers};

/// Most bytes of emit-buffer rows and flags one call of the SoA code may write: calls for
/// many points are cut into chunks of whole groups, so that what is reserved ahead stays
/// bounded.
const CHUNK_BYTES: usize = 8 << 20;

/// What a point run works on besides its inputs: the state one invocation leaves to the next
/// (as `Interpreter::run_points` carries it) and the buffer the emitted vertices go to.
pub(crate) struct Points<'a> {
    pub regs: &'a mut Registers,
    pub uniforms: &'a mut Uniforms,
    pub geometry: &'a mut GeometryState,
    pub out: &'a mut EmitBuffer,
}

/// A point run ([`Invocation::points`](crate::Invocation::points)) on the SoA path: after the
/// first invocation (alone when b15 is clear, since it may take another path), groups of eight
/// run compiled; a group that stops runs per invocation, and so do the invocations after the
/// last full group.
/// `each` is the same run one invocation at a time (on the inputs it is given).
pub(crate) fn run(
    soa: &SoaCode,
    mode: FloatMode,
    p: &mut Points,
    inputs: &[[[f32; 4]; 16]],
    budget: u64,
    each: impl Fn(&mut Points, &[[[f32; 4]; 16]]) -> Result<BatchInfo, BatchError>,
) -> Result<BatchInfo, BatchError> {
    let Some(plan) = &soa.gs else {
        return each(p, inputs);
    };
    let mut info = BatchInfo::default();
    let each = |lo: usize, hi: usize, p: &mut Points, info: &mut BatchInfo| {
        add_part(info, each(p, &inputs[lo..hi]), lo)
    };
    let n = inputs.len();
    // Registers the caller does not keep are no reason to slow down, but registers the
    // program never writes would have to come from the banks, which the code does not do.
    if p.out.mask() & !plan.written_outputs != 0 {
        each(0, n, p, &mut info)?;
        return Ok(info);
    }
    let mut k = 0;
    if !p.uniforms.bool(15) {
        each(0, 1, p, &mut info)?;
        k = 1;
    }
    let mut ctx = context();
    ctx.uniforms = &*p.uniforms;
    ctx.budget = budget;
    flush_uniforms(&mut ctx, p.uniforms.float_table(), soa.uniform_use, mode);
    let rows_per_vertex = p.out.rows_per_vertex();
    let mut offset = 0;
    for r in 0..16 {
        ctx.gs_row_off[r] = if p.out.mask() & (1 << r) != 0 {
            offset += 16;
            offset - 16
        } else {
            -1
        };
    }
    let mut stops = 0;
    while n - k >= LANES && stops < 2 && banks_agree(plan, p.regs, p.geometry) {
        let emits = soa.gs_emits.load(Ordering::Relaxed) as usize;
        let per_group = LANES * emits.max(1) * (rows_per_vertex * 16 + 4);
        if per_group > CHUNK_BYTES {
            // Thousands of EMITs per invocation: per invocation, memory stays bounded.
            break;
        }
        let groups = ((n - k) / LANES).min(CHUNK_BYTES / per_group);
        let vertices = groups * LANES * emits;
        p.out.rows.reserve(vertices * rows_per_vertex);
        p.out.flags.reserve(vertices);
        let (rows_before, flags_before) = (p.out.rows.len(), p.out.flags.len());
        load_state(plan, &mut ctx, p.regs);
        ctx.uniforms = &*p.uniforms;
        ctx.batch_input = inputs[k..].as_ptr();
        ctx.batch_output = std::ptr::null_mut();
        ctx.batch_count = (groups * LANES) as u64;
        ctx.batch_done = 0;
        ctx.batch_instructions = 0;
        ctx.gs_emits = emits as u32;
        ctx.gs_vsize = (rows_per_vertex * 16) as u64;
        ctx.gs_row_stride = (emits * rows_per_vertex * 16) as u64;
        ctx.gs_flag_stride = (emits * 4) as u64;
        ctx.gs_rows_next = p.out.rows.spare_capacity_mut().as_mut_ptr() as u64;
        ctx.gs_flags_next = p.out.flags.spare_capacity_mut().as_mut_ptr() as u64;
        ctx.gs_slots_hit = 0;
        // SAFETY: the SoA entry reads `batch_count` input rows (all within `inputs[k..]`),
        // `*p.uniforms` (borrowed for the call and not written during it) and writes `ctx`
        // (exclusively borrowed) and, per group, at most `emits` vertices per lane into the
        // places `gs_rows_next`/`gs_flags_next` lead to: `groups · 8 · emits` vertices of
        // rows and flags, exactly the spare capacity reserved above (the code counts the
        // EMITs and leaves before an extra one writes). `soa.exec` is the geometry code
        // `compile` generated for this program (`soa.gs` is its plan).
        let status = unsafe { crate::pica::call::lanes(&soa.exec, &mut ctx, true) };
        if status == 0 {
            // SAFETY: every group finished, so each of its lanes wrote exactly `emits`
            // vertices (the code checks the count at END): the `vertices` places after the
            // old lengths hold complete rows and flags (slot in 0..=3, the flags as 0/1, so
            // valid `bool`s).
            unsafe {
                p.out.rows.set_len(rows_before + vertices * rows_per_vertex);
                p.out.flags.set_len(flags_before + vertices);
            }
            info.instructions += ctx.batch_instructions;
            soa.groups.fetch_add(groups as u64, Ordering::Relaxed);
            k += groups * LANES;
            materialise(plan, &ctx, emits, p.regs, p.geometry, &inputs[k - 1]);
            stops = 0;
            continue;
        }
        // Nothing of this chunk is kept: its groups run again per invocation from the state
        // before it. Only the first group can stop on its own (all take the same path), so
        // that is all that runs per invocation, unless a later one did.
        soa.fallbacks.fetch_add(1, Ordering::Relaxed);
        let hi = k + LANES * (ctx.batch_done as usize / LANES + 1);
        each(k, hi - 1, p, &mut info)?;
        let before = p.out.len();
        each(hi - 1, hi, p, &mut info)?;
        if status == STATUS_EMITS {
            soa.gs_emits
                .store((p.out.len() - before) as u32, Ordering::Relaxed);
        } else {
            stops += 1;
        }
        k = hi;
    }
    drop(ctx);
    each(k, n, p, &mut info)?;
    p.uniforms.set_bool(15, true);
    p.geometry.mark_drained();
    Ok(info)
}

/// The two output banks hold the same bits in every component the program never writes: an
/// EMIT sends those from whichever bank is current, which the lanes do not track.
fn banks_agree(plan: &GsPlan, regs: &Registers, geometry: &GeometryState) -> bool {
    (0..16).all(|r| {
        (0..4).all(|c| {
            plan.written_components & comps(r as u8, 1 << c) != 0
                || regs.output[r][c].to_bits() == geometry.other_bank[r][c].to_bits()
        })
    })
}

/// Every lane starts a chunk with the registers the call has reached: components the program
/// writes are written before they are read (see [`plan`]), the others keep these values.
/// Only the registers the code touches (temporaries it reads or writes, outputs it writes).
fn load_state(plan: &GsPlan, ctx: &mut SoaContext, regs: &Registers) {
    for r in crate::pica::analysis::bits(plan.temps) {
        for c in 0..4 {
            ctx.temp[r][c] = [regs.temp[r][c]; LANES];
        }
    }
    for r in crate::pica::analysis::bits(plan.written_outputs) {
        for c in 0..4 {
            ctx.output[r][c] = [regs.output[r][c]; LANES];
        }
    }
    for c in 0..2 {
        let a0 = regs.a0[c];
        ctx.a0[c] = [a0; LANES];
        // The row offset MOVA keeps beside a0 (see `SoaContext::a0_rel`).
        let rel = if (-128..=127).contains(&a0) { a0 } else { 0 };
        ctx.a0_rel[c] = [(16 * (128 + rel)) as u32; LANES];
        ctx.cmp[c] = [if regs.cmp[c] != 0 { u32::MAX } else { 0 }; LANES];
    }
    ctx.al = regs.al;
}

/// The registers and geometry state the last invocation of a finished chunk left (see the
/// module docs, "State after a call").
fn materialise(
    plan: &GsPlan,
    ctx: &SoaContext,
    emits: usize,
    regs: &mut Registers,
    geometry: &mut GeometryState,
    last_input: &[[f32; 4]; 16],
) {
    const LAST: usize = LANES - 1;
    regs.input = *last_input;
    for r in crate::pica::analysis::bits(plan.temps) {
        for c in 0..4 {
            regs.temp[r][c] = ctx.temp[r][c][LAST];
        }
    }
    for c in 0..2 {
        regs.a0[c] = ctx.a0[c][LAST];
        regs.cmp[c] = u8::from(ctx.cmp[c][LAST] != 0);
    }
    regs.al = ctx.al;
    let lane7 = |r: usize, c: usize| ctx.output[r][c][LAST];
    for r in crate::pica::analysis::bits(plan.written_outputs) {
        if emits == 0 {
            for c in 0..4 {
                regs.output[r][c] = lane7(r, c);
            }
            continue;
        }
        geometry.other_bank[r] = ctx.gs_last7[r];
        let mut current = if emits >= 2 {
            ctx.gs_prev7[r]
        } else {
            ctx.gs_last6[r]
        };
        for (c, v) in current.iter_mut().enumerate() {
            if plan.end_outputs & comps(r as u8, 1 << c) != 0 {
                *v = lane7(r, c);
            }
        }
        regs.output[r] = current;
    }
    for s in 0..4 {
        if ctx.gs_slots_hit & (1 << s) != 0 {
            for r in 0..16 {
                geometry.slots[s][r] = if plan.written_outputs & (1 << r) != 0 {
                    ctx.gs_slot7[s][r]
                } else {
                    // Never written: both banks hold this (`banks_agree`).
                    regs.output[r]
                };
            }
        }
    }
    if let Some(f) = plan.end_setemit {
        geometry.vertex_id = f.slot;
        geometry.primitive = f.primitive;
        geometry.winding = f.winding;
    }
}
