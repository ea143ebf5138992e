//! Which point-mode geometry shaders may run eight invocations per group on the multi-vertex
//! code (`pica/batch/geometry.rs` runs them), and what the code generators and that driver
//! need to know about them ([`GsPlan`]).
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

use super::blocks;
use super::usage::{alu_parts, has_lane_branches, read_components};
use super::{Analysis, Exit, Target};
use picajit_interp::pica::isa::{DstReg, Instruction, OperandDesc, RelIndex, SrcReg};
use picajit_interp::pica::program::{Program, ShaderKind};
use picajit_interp::pica::state::EmitFlags;

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

/// Bits 4n..4n+4 of a component set for register `n` with components `m` (bit c).
pub fn comps(n: u8, m: u8) -> u64 {
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
    if has_lane_branches(analysis) {
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
                    let read = comps(i, read_components(&n.instr, dd, k));
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
