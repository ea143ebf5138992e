//! What lane code needs to know about a program before it is lowered: the registers it
//! uses (for the per-group transposes and clears) and whether its lanes may diverge.

use super::{Analysis, Exit, Guard};
use picajit_interp::pica::isa::{DstReg, Instruction, Opcode, OperandDesc, RelIndex, SrcReg, Unit};
use picajit_interp::pica::program::Program;

/// Which sources of an instruction are read through the input flush (rule 1): those the
/// opcode table's flush column gives a flushed component. A source not listed is read as it
/// is. EX2 and LG2 flush in their own code, so their operand is read as it is here.
pub fn flushed_sources(instr: &Instruction) -> [bool; 3] {
    let Some(op) = instr.opcode() else {
        return [false; 3];
    };
    let self_flushing = matches!(op.unit(), Unit::Ex2 | Unit::Lg2);
    [0, 1, 2].map(|n| op.flushed(n, 0xF) != 0 && !self_flushing)
}

/// The parts of an ALU instruction the analysis needs: descriptor, sources (with their index
/// in the descriptor), relative index, destination.
pub fn alu_parts(instr: &Instruction) -> Option<(u8, Vec<SrcReg>, RelIndex, Option<DstReg>)> {
    let o = instr.operands()?;
    let rel = o.rel.into_iter().find(|&r| r != RelIndex::None);
    Some((
        o.desc,
        o.src[..o.op.sources()].to_vec(),
        rel.unwrap_or(RelIndex::None),
        o.dst,
    ))
}

/// The components of source `n` (0-2) of `instr` it reads, per the operand descriptor `d`
/// (bit c = component c of the register, after the swizzle).
pub fn read_components(instr: &Instruction, d: OperandDesc, n: usize) -> u8 {
    instr.operands().map_or(0, |o| o.reads(n, d))
}

/// Which sources of an instruction also have components read as they are (DST's z and w).
fn partly_raw(instr: &Instruction) -> [bool; 3] {
    let Some(op) = instr.opcode() else {
        return [false; 3];
    };
    [0, 1, 2].map(|n| op.reads(n, 0xF) & !op.flushed(n, 0xF) != 0)
}

/// Registers a program uses, for the per-group transposes and clears.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// Inputs read as they are (MOV, MIN/MAX, comparisons, …).
    pub inputs_raw: u16,
    /// Inputs read by arithmetic that flushes its operands (rule 1).
    pub inputs_flushed: u16,
    /// Temporaries read or written.
    pub temps: u16,
    /// Outputs written.
    pub outputs: u16,
    /// Per temporary register, the components a group must start at +0: those some
    /// instruction may read before the group wrote them.
    pub zero_temps: [u8; 16],
    /// Per output register, the components not written by the entry block (which every
    /// group runs in full), so that a path leaving them unwritten finds +0.
    pub zero_outputs: [u8; 16],
}

/// The registers `program` uses ([`Usage`]).
pub fn usage(program: &Program, analysis: &Analysis) -> Usage {
    let desc = |index: u8| OperandDesc(program.opdesc(index as usize));
    let mut u = Usage::default();
    let mut temps_read_flushing = 0u16;
    for node in &analysis.nodes {
        let fl = flushed_sources(&node.instr);
        if let Some((_, srcs, _, _)) = alu_parts(&node.instr) {
            for (k, r) in srcs.into_iter().enumerate() {
                if let (SrcReg::Temp(t), true) = (r, fl[k]) {
                    temps_read_flushing |= 1 << (t & 15);
                }
            }
        }
    }
    for node in &analysis.nodes {
        let instr = &node.instr;
        let (srcs, dst) = match alu_parts(instr) {
            Some((_, srcs, _, dst)) => (srcs, dst),
            None => (Vec::new(), None),
        };
        let flushed = flushed_sources(instr);
        // A MOV of an input into a temporary that flushing arithmetic reads gets the
        // input's flushed bank too, which those reads may then load (`LaneEmitter::note_mov`).
        if let Instruction::Unary {
            op: Opcode::Mov,
            src: SrcReg::Input(i),
            dst: DstReg::Temp(t),
            ..
        } = *instr
        {
            if temps_read_flushing & (1 << (t & 15)) != 0 {
                u.inputs_flushed |= 1 << (i & 15);
            }
        }
        // DST also reads components z and w of its sources as they are.
        let raw_too = partly_raw(instr);
        for (k, r) in srcs.into_iter().enumerate() {
            match r {
                SrcReg::Input(i) => {
                    if flushed[k] {
                        u.inputs_flushed |= 1 << (i & 15);
                    }
                    if !flushed[k] || raw_too[k] {
                        u.inputs_raw |= 1 << (i & 15);
                    }
                }
                SrcReg::Temp(i) => u.temps |= 1 << (i & 15),
                SrcReg::Const(_) => {}
            }
        }
        match dst {
            Some(DstReg::Output(i)) => u.outputs |= 1 << (i & 15),
            Some(DstReg::Temp(i)) => u.temps |= 1 << (i & 15),
            None => {}
        }
    }
    zero_masks(analysis, &desc, &mut u);
    u
}

/// [`Usage::zero_temps`] and [`Usage::zero_outputs`]: a temporary component needs its +0
/// start unless the entry block writes it before anything reads it; an output component
/// unless the entry block writes it.
fn zero_masks(analysis: &Analysis, desc: &impl Fn(u8) -> OperandDesc, u: &mut Usage) {
    let (mut safe, mut read_first, mut written_out) = ([0u8; 16], [0u8; 16], [0u8; 16]);
    let mut read_anywhere = [0u8; 16];
    let entry: Vec<u32> = analysis
        .blocks
        .first()
        .map_or(Vec::new(), |b| b.nodes.clone());
    let parts = |instr: &Instruction| -> Option<(OperandDesc, Vec<SrcReg>, Option<DstReg>)> {
        let (d, srcs, _, dst) = alu_parts(instr)?;
        Some((desc(d), srcs, dst))
    };
    for node in &analysis.nodes {
        if let Some((d, srcs, _)) = parts(&node.instr) {
            for (n, r) in srcs.into_iter().enumerate() {
                if let SrcReg::Temp(i) = r {
                    read_anywhere[(i & 15) as usize] |= read_components(&node.instr, d, n);
                }
            }
        }
    }
    for id in entry {
        let instr = analysis.nodes[id as usize].instr;
        let Some((d, srcs, dst)) = parts(&instr) else {
            continue;
        };
        for (n, r) in srcs.into_iter().enumerate() {
            if let SrcReg::Temp(i) = r {
                let i = (i & 15) as usize;
                read_first[i] |= read_components(&instr, d, n) & !safe[i];
            }
        }
        // Bit c = component c (the descriptor's own mask bits run w, z, y, x).
        let m = (0..4)
            .filter(|&c| d.mask().has(c))
            .fold(0u8, |m, c| m | 1 << c);
        match dst {
            Some(DstReg::Temp(i)) => {
                let i = (i & 15) as usize;
                safe[i] |= m & !read_first[i];
            }
            Some(DstReg::Output(i)) => written_out[(i & 15) as usize] |= m,
            None => {}
        }
    }
    for i in 0..16 {
        u.zero_temps[i] = read_anywhere[i] & !safe[i];
        u.zero_outputs[i] = 0xF & !written_out[i];
    }
}

/// The program has cmp-dependent branches, so the lanes of a group may take different paths.
pub fn has_lane_branches(analysis: &Analysis) -> bool {
    analysis.nodes.iter().any(|n| {
        matches!(
            n.exit,
            Exit::Branch {
                guard: Guard::Cond(_),
                ..
            }
        )
    })
}
