//! Point-mode geometry shaders on the multi-vertex backend: eight invocations per group.
//!
//! # Why this is sound
//!
//! Geometry-shader invocations are not independent the way vertex-shader ones are: the
//! hardware keeps the temporaries, a0, aL, the cmp flags, both output banks, the vertex-buffer
//! slots and the SETEMIT state from one invocation to the next. Running invocations k..k+8 at
//! once, one per lane, is exact only when no invocation can observe what the one before it
//! left. [`plan`] proves that statically, over every path of the node graph:
//!
//! * every read of a temporary component (and of a0, and of aL) that the program writes
//!   anywhere is preceded, on every path from the entry, by a write in the same invocation.
//!   Components the program never writes keep the value they had before the call in every
//!   invocation, which the lanes are given;
//! * at every EMIT, every output component the program writes anywhere was written since
//!   the previous EMIT (or the start) on every path, so the emitted bank holds only values
//!   of this invocation plus never-written components; the SETEMIT parameters there are one
//!   constant on every path;
//! * at every END, the outputs written since the last EMIT and the SETEMIT state are the
//!   same on every path, so the state left for the next call can be rebuilt (see below);
//! * control flow is uniform: no branch on the cmp flags. Bool and int uniforms do not
//!   change during a call except b15, which is set after the first invocation, so every
//!   invocation that starts with b15 set takes the same path: the same EMITs in the same
//!   order, the same number E of them.
//!
//! The bank that is current at an EMIT alternates between the two; components the program
//! never writes are read from it, so the fast path also needs both banks to agree on those
//! (checked per call; otherwise the call runs per invocation).
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
use crate::pica::analysis::{blocks, Analysis, Exit, Target};
use picajit_interp::pica::isa::{DstReg, Instruction, OperandDesc, RelIndex, SrcReg};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::{EmitBuffer, EmitFlags, GeometryState, Registers};

/// What [`plan`] proved about a geometry shader, as the code generator and the driver use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GsPlan {
    /// Output registers the program writes (bit n = o`n`).
    pub written_outputs: u16,
    /// Output components the program writes (bit 4n + c = component c of o`n`).
    pub written_components: u64,
    /// Temporaries the program reads or writes (bit n = r`n`): all the code touches.
    pub temps: u16,
    /// Per node: the SETEMIT parameters of an EMIT node.
    pub emit_flags: Vec<Option<EmitFlags>>,
    /// Output components written since the last EMIT at END (the same at every END).
    pub end_outputs: u64,
    /// SETEMIT state at END: `None` when no path sets it.
    pub end_setemit: Option<EmitFlags>,
}

/// SETEMIT state along a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetEmit {
    /// Not set since the invocation started.
    Unset,
    /// Set to these parameters on every path.
    Const(EmitFlags),
    /// Differs between paths.
    Varies,
}

impl SetEmit {
    fn join(self, o: SetEmit) -> SetEmit {
        if self == o {
            self
        } else {
            SetEmit::Varies
        }
    }
}

/// Facts at the start of a node, over every path from the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Facts {
    /// Temporary components written in this invocation on every path / on some path.
    temp_must: u64,
    temp_may: u64,
    /// a0.x, a0.y written on every path / some path.
    a0_must: u8,
    a0_may: u8,
    /// aL set (by a LOOP) on every path / some path.
    al_must: bool,
    al_may: bool,
    /// Output components written since the last EMIT on every path / some path.
    out_must: u64,
    out_may: u64,
    setemit: SetEmit,
}

impl Facts {
    const ENTRY: Facts = Facts {
        temp_must: 0,
        temp_may: 0,
        a0_must: 0,
        a0_may: 0,
        al_must: false,
        al_may: false,
        out_must: 0,
        out_may: 0,
        setemit: SetEmit::Unset,
    };

    fn join(self, o: Facts) -> Facts {
        Facts {
            temp_must: self.temp_must & o.temp_must,
            temp_may: self.temp_may | o.temp_may,
            a0_must: self.a0_must & o.a0_must,
            a0_may: self.a0_may | o.a0_may,
            al_must: self.al_must && o.al_must,
            al_may: self.al_may || o.al_may,
            out_must: self.out_must & o.out_must,
            out_may: self.out_may | o.out_may,
            setemit: self.setemit.join(o.setemit),
        }
    }
}

/// The parts of an ALU instruction the analysis needs: descriptor, sources (with their index
/// in the descriptor), relative index, destination.
pub(super) fn alu_parts(
    instr: &Instruction,
) -> Option<(u8, Vec<SrcReg>, RelIndex, Option<DstReg>)> {
    let o = instr.operands()?;
    let rel = o.rel.into_iter().find(|&r| r != RelIndex::None);
    Some((
        o.desc,
        o.src[..o.op.sources()].to_vec(),
        rel.unwrap_or(RelIndex::None),
        o.dst,
    ))
}

/// Bits 4n..4n+4 of a component set for register `n` with components `m` (bit c).
fn comps(n: u8, m: u8) -> u64 {
    u64::from(m & 0xF) << (4 * (n & 15))
}

/// The write mask of descriptor `d` as bits c = component c.
fn write_mask(d: OperandDesc) -> u8 {
    (0..4)
        .filter(|&c| d.mask().has(c))
        .fold(0, |m, c| m | 1 << c)
}

/// Prove that eight consecutive invocations of `program` may run as one group (see the
/// module docs), or say why not.
pub fn plan(program: &Program, analysis: &Analysis) -> Result<GsPlan, &'static str> {
    if program.kind() != ShaderKind::Geometry {
        return Err("not a geometry shader");
    }
    if crate::pica::x64::lanes::needs_lane_masks(analysis) {
        return Err("it branches on the cmp flags (invocations could emit different vertices)");
    }
    let desc = |i: u8| OperandDesc(program.opdesc(i as usize));
    let nodes = &analysis.nodes;
    // What the program writes anywhere.
    let (mut temps_written, mut outs_written, mut a0_written, mut al_written) =
        (0u64, 0u64, 0u8, false);
    let mut temps = 0u16;
    for n in nodes {
        if let Instruction::Loop { .. } = n.instr {
            al_written = true;
        }
        let Some((d, srcs, _, dst)) = alu_parts(&n.instr) else {
            continue;
        };
        for s in &srcs {
            if let SrcReg::Temp(i) = *s {
                temps |= 1 << (i & 15);
            }
        }
        if let Some(DstReg::Temp(i)) = dst {
            temps |= 1 << (i & 15);
        }
        let m = write_mask(desc(d));
        match (n.instr, dst) {
            (Instruction::Mova { .. }, _) => a0_written |= m & 3,
            (_, Some(DstReg::Temp(i))) => temps_written |= comps(i, m),
            (_, Some(DstReg::Output(i))) => outs_written |= comps(i, m),
            _ => {}
        }
    }
    // Forward data flow to a fixed point (the lattice is finite and the transfer monotone).
    let mut facts: Vec<Option<Facts>> = vec![None; nodes.len()];
    if nodes.is_empty() {
        return Err("no reachable code");
    }
    facts[0] = Some(Facts::ENTRY);
    let mut work = vec![0usize];
    let mut queued = vec![false; nodes.len()];
    queued[0] = true;
    while let Some(id) = work.pop() {
        queued[id] = false;
        let Some(f) = facts[id] else { continue };
        let after = transfer(&nodes[id].instr, f, &desc);
        for t in blocks::exit_targets(&nodes[id].exit) {
            if let Target::Node(m) = t {
                let m = m as usize;
                let new = match facts[m] {
                    Some(old) => old.join(after),
                    None => after,
                };
                if facts[m] != Some(new) {
                    facts[m] = Some(new);
                    if !queued[m] {
                        queued[m] = true;
                        work.push(m);
                    }
                }
            }
        }
    }
    let mut emit_flags = vec![None; nodes.len()];
    let mut end: Option<(u64, SetEmit)> = None;
    for (id, n) in nodes.iter().enumerate() {
        let Some(f) = facts[id] else { continue };
        if let Some((d, srcs, rel, _)) = alu_parts(&n.instr) {
            let dd = desc(d);
            for (k, s) in srcs.iter().enumerate() {
                if let SrcReg::Temp(i) = *s {
                    let read = comps(i, super::usage::read_components(&n.instr, dd, k));
                    if read & temps_written & !f.temp_must != 0 {
                        return Err("a temporary may be read before this invocation writes it");
                    }
                }
            }
            let a0 = match rel {
                RelIndex::A0X => 1,
                RelIndex::A0Y => 2,
                _ => 0,
            };
            if a0 & a0_written & !f.a0_must != 0 {
                return Err("a0 may be read before this invocation sets it");
            }
            if rel == RelIndex::AL && al_written && !f.al_must {
                return Err("aL may be read before this invocation sets it");
            }
        }
        if let Instruction::Emit = n.instr {
            if outs_written & !f.out_must != 0 {
                return Err("an EMIT may send an output written before the previous EMIT");
            }
            match f.setemit {
                SetEmit::Const(flags) => emit_flags[id] = Some(flags),
                _ => return Err("the SETEMIT parameters of an EMIT depend on the path"),
            }
        }
        if let Exit::End = n.exit {
            if f.out_must != f.out_may {
                return Err("outputs written after the last EMIT depend on the path");
            }
            if f.setemit == SetEmit::Varies {
                return Err("the SETEMIT state at END depends on the path");
            }
            let here = (f.out_must & outs_written, f.setemit);
            match end {
                None => end = Some(here),
                Some(e) if e == here => {}
                Some(_) => return Err("the ENDs leave different output or SETEMIT state"),
            }
        }
    }
    let written_outputs = (0..16u8)
        .filter(|&r| outs_written & comps(r, 0xF) != 0)
        .fold(0u16, |m, r| m | 1 << r);
    let (end_outputs, end_setemit) = match end {
        Some((o, SetEmit::Const(f))) => (o, Some(f)),
        Some((o, _)) => (o, None),
        None => (0, None),
    };
    Ok(GsPlan {
        written_outputs,
        written_components: outs_written,
        temps,
        emit_flags,
        end_outputs,
        end_setemit,
    })
}

/// Facts after `instr` runs, given the facts before it.
fn transfer(instr: &Instruction, mut f: Facts, desc: &impl Fn(u8) -> OperandDesc) -> Facts {
    if let Some((d, _, _, dst)) = alu_parts(instr) {
        let m = write_mask(desc(d));
        match (instr, dst) {
            (Instruction::Mova { .. }, _) => {
                f.a0_must |= m & 3;
                f.a0_may |= m & 3;
            }
            (_, Some(DstReg::Temp(i))) => {
                f.temp_must |= comps(i, m);
                f.temp_may |= comps(i, m);
            }
            (_, Some(DstReg::Output(i))) => {
                f.out_must |= comps(i, m);
                f.out_may |= comps(i, m);
            }
            _ => {}
        }
    }
    match *instr {
        Instruction::Loop { .. } => {
            f.al_must = true;
            f.al_may = true;
        }
        Instruction::Emit => {
            f.out_must = 0;
            f.out_may = 0;
        }
        Instruction::SetEmit {
            vtx,
            primitive,
            winding,
        } => f.setemit = SetEmit::Const(EmitFlags::new(vtx, primitive, winding)),
        _ => {}
    }
    f
}

/// Most bytes of emit-buffer rows and flags one call of the SoA code may write: calls for
/// many points are cut into chunks of whole groups, so that what is reserved ahead stays
/// bounded.
const CHUNK_BYTES: usize = 8 << 20;

/// A point run ([`Invocation::points`](crate::Invocation::points)) on the SoA path: after the
/// first invocation (alone when b15 is clear, since it may take another path), groups of eight
/// run compiled; a group that stops runs per invocation, and so do the invocations after the
/// last full group.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    shader: &CompiledShader,
    soa: &SoaCode,
    regs: &mut Registers,
    uniforms: &mut Uniforms,
    geometry: &mut GeometryState,
    inputs: &[[[f32; 4]; 16]],
    budget: u64,
    out: &mut EmitBuffer,
) -> Result<BatchInfo, BatchError> {
    let Some(plan) = &soa.gs else {
        return shader.run_points_each(regs, uniforms, geometry, inputs, budget, out);
    };
    let mut info = BatchInfo::default();
    let each = |lo: usize,
                hi: usize,
                regs: &mut Registers,
                uniforms: &mut Uniforms,
                geometry: &mut GeometryState,
                out: &mut EmitBuffer,
                info: &mut BatchInfo|
     -> Result<(), BatchError> {
        let r = shader.run_points_each(regs, uniforms, geometry, &inputs[lo..hi], budget, out);
        add_part(info, r, lo)
    };
    let n = inputs.len();
    // Registers the caller does not keep are no reason to slow down, but registers the
    // program never writes would have to come from the banks, which the code does not do.
    if out.mask() & !plan.written_outputs != 0 {
        each(0, n, regs, uniforms, geometry, out, &mut info)?;
        return Ok(info);
    }
    let mut k = 0;
    if !uniforms.bool(15) {
        each(0, 1, regs, uniforms, geometry, out, &mut info)?;
        k = 1;
    }
    let mut ctx = Context::take();
    ctx.uniforms = uniforms;
    ctx.budget = budget;
    flush_uniforms(
        &mut ctx,
        uniforms.float_table(),
        soa.uniform_use,
        shader.mode,
    );
    let rows_per_vertex = out.rows_per_vertex();
    let mut offset = 0;
    for r in 0..16 {
        ctx.gs_row_off[r] = if out.mask() & (1 << r) != 0 {
            offset += 16;
            offset - 16
        } else {
            -1
        };
    }
    let mut stops = 0;
    while n - k >= LANES && stops < 2 && banks_agree(plan, regs, geometry) {
        let emits = soa.gs_emits.load(Ordering::Relaxed) as usize;
        let per_group = LANES * emits.max(1) * (rows_per_vertex * 16 + 4);
        if per_group > CHUNK_BYTES {
            // Thousands of EMITs per invocation: per invocation, memory stays bounded.
            break;
        }
        let groups = ((n - k) / LANES).min(CHUNK_BYTES / per_group);
        let vertices = groups * LANES * emits;
        out.rows.reserve(vertices * rows_per_vertex);
        out.flags.reserve(vertices);
        let (rows_before, flags_before) = (out.rows.len(), out.flags.len());
        load_state(plan, &mut ctx, regs);
        ctx.uniforms = uniforms;
        ctx.batch_input = inputs[k..].as_ptr();
        ctx.batch_output = std::ptr::null_mut();
        ctx.batch_count = (groups * LANES) as u64;
        ctx.batch_done = 0;
        ctx.batch_instructions = 0;
        ctx.gs_emits = emits as u32;
        ctx.gs_vsize = (rows_per_vertex * 16) as u64;
        ctx.gs_row_stride = (emits * rows_per_vertex * 16) as u64;
        ctx.gs_flag_stride = (emits * 4) as u64;
        ctx.gs_rows_next = out.rows.spare_capacity_mut().as_mut_ptr() as u64;
        ctx.gs_flags_next = out.flags.spare_capacity_mut().as_mut_ptr() as u64;
        ctx.gs_slots_hit = 0;
        // SAFETY: the SoA entry reads `batch_count` input rows (all within `inputs[k..]`),
        // `*uniforms` (borrowed for the call and not written during it) and writes `ctx`
        // (exclusively borrowed) and, per group, at most `emits` vertices per lane into the
        // places `gs_rows_next`/`gs_flags_next` lead to: `groups · 8 · emits` vertices of
        // rows and flags, exactly the spare capacity reserved above (the code counts the
        // EMITs and leaves before an extra one writes). It follows the host's calling
        // convention (System V, AAPCS64) and restores MXCSR / FPCR.
        let status = unsafe { call(&soa.exec, &mut ctx, true) };
        if status == 0 {
            // SAFETY: every group finished, so each of its lanes wrote exactly `emits`
            // vertices (the code checks the count at END): the `vertices` places after the
            // old lengths hold complete rows and flags (slot in 0..=3, the flags as 0/1, so
            // valid `bool`s).
            unsafe {
                out.rows.set_len(rows_before + vertices * rows_per_vertex);
                out.flags.set_len(flags_before + vertices);
            }
            info.instructions += ctx.batch_instructions;
            soa.groups.fetch_add(groups as u64, Ordering::Relaxed);
            k += groups * LANES;
            materialise(plan, &ctx, emits, regs, geometry, &inputs[k - 1]);
            stops = 0;
            continue;
        }
        // Nothing of this chunk is kept: its groups run again per invocation from the state
        // before it. Only the first group can stop on its own (all take the same path), so
        // that is all that runs per invocation, unless a later one did.
        soa.fallbacks.fetch_add(1, Ordering::Relaxed);
        let hi = k + LANES * (ctx.batch_done as usize / LANES + 1);
        each(k, hi - 1, regs, uniforms, geometry, out, &mut info)?;
        let before = out.len();
        each(hi - 1, hi, regs, uniforms, geometry, out, &mut info)?;
        if status == STATUS_EMITS {
            soa.gs_emits
                .store((out.len() - before) as u32, Ordering::Relaxed);
        } else {
            stops += 1;
        }
        k = hi;
    }
    drop(ctx);
    each(k, n, regs, uniforms, geometry, out, &mut info)?;
    uniforms.set_bool(15, true);
    geometry.mark_drained();
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
    for r in crate::bits(plan.temps) {
        for c in 0..4 {
            ctx.temp[r][c] = [regs.temp[r][c]; LANES];
        }
    }
    for r in crate::bits(plan.written_outputs) {
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
    for r in crate::bits(plan.temps) {
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
    for r in crate::bits(plan.written_outputs) {
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
