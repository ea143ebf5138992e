//! One instruction, for every code shape: the arm of its unit says which [`Emitter`]
//! operation computes the result. Which source is relatively addressed, which components a
//! source reads and which reads flush come from the opcode table (`Instruction::operands`,
//! `Opcode::flushed`); an opcode's lowering is its unit's arm in [`alu`].

use super::{Emitter, SourceOperand};
use crate::error::{CompileError, CompileResult};
use crate::pica::analysis::usage::flushed_sources;
use crate::pica::masm::{BinaryKind, DotKind, ScalarKind};
use picajit_interp::pica::isa::{Instruction, OperandDesc, Operands, Unit};
use picajit_interp::pica::program::{Program, ShaderKind};

/// EMIT and SETEMIT (geometry shaders; they do nothing in vertex shaders) and arithmetic.
/// LOOP and the control-flow instructions are the walker's.
pub fn instruction<E: Emitter>(
    e: &mut E,
    program: &Program,
    instr: &Instruction,
    pc: u32,
) -> CompileResult<()> {
    if let Some(ops) = instr.operands() {
        let d = OperandDesc(program.opdesc(ops.desc as usize));
        return alu(e, instr, &ops, d);
    }
    let geometry = program.kind() == ShaderKind::Geometry;
    match *instr {
        Instruction::Emit if geometry => e.emit(pc)?,
        Instruction::SetEmit {
            vtx,
            primitive,
            winding,
        } if geometry => e.set_emit(vtx, primitive, winding),
        _ => {}
    }
    Ok(())
}

/// One arithmetic instruction: its sources prepared in order, the unit's operation, the
/// result stored under the write mask. An instruction that writes nothing is skipped (LITP
/// still sets the flags, CMP writes only them).
fn alu<E: Emitter>(
    e: &mut E,
    instr: &Instruction,
    ops: &Operands,
    d: OperandDesc,
) -> CompileResult<()> {
    let unit = ops.op.unit();
    let mask = d.mask();
    let write = match unit {
        Unit::Mova => mask.has(0) || mask.has(1),
        _ => mask.0 & 0xF != 0,
    };
    if !write && !matches!(unit, Unit::Litp | Unit::Cmp) {
        return Ok(());
    }
    // DST reads z and w as they are (its code flushes y itself), so its operands are
    // prepared unflushed.
    let flushing = if E::PREPARES_FLUSH {
        flushed_sources(instr).map(|f| f && unit != Unit::Dst)
    } else {
        [false; 3]
    };
    for p in 0..e.passes() {
        e.pass(p);
        alu_pass(e, instr, ops, d, write, flushing)?;
    }
    Ok(())
}

/// One pass of [`alu`]: every lane of the code shape, or with [`Emitter::passes`] above one,
/// the part of the group the emitter's current pass addresses. Lanes of different parts
/// share no per-lane state, so each pass may store its part before the next reads its own.
fn alu_pass<E: Emitter>(
    e: &mut E,
    instr: &Instruction,
    ops: &Operands,
    d: OperandDesc,
    write: bool,
    flushing: [bool; 3],
) -> CompileResult<()> {
    let unit = ops.op.unit();
    let mask = d.mask();
    let mut src = [None; 3];
    for (n, reg, rel) in ops.sources() {
        let flushing = flushing[n];
        src[n] = Some(e.operand(SourceOperand {
            n,
            reg,
            rel,
            d,
            flushing,
        }));
    }
    let missing = || CompileError::Internal(format!("{} lacks a source", ops.op));
    let [a, b, c] = src;
    let a = a.ok_or_else(missing)?;
    let b = || b.ok_or_else(missing);
    let binary = |e: &mut E, kind| -> CompileResult<E::Value> { Ok(e.binary(kind, a, b()?, mask)) };
    let v = match unit {
        Unit::Add => binary(e, BinaryKind::Add)?,
        Unit::Mul => binary(e, BinaryKind::Mul)?,
        Unit::Max => binary(e, BinaryKind::Max)?,
        Unit::Min => binary(e, BinaryKind::Min)?,
        Unit::Sge => binary(e, BinaryKind::Sge)?,
        Unit::Slt => binary(e, BinaryKind::Slt)?,
        Unit::Dp3 => e.dot(DotKind::Dp3, a, b()?),
        Unit::Dp4 => e.dot(DotKind::Dp4, a, b()?),
        Unit::Dph => e.dot(DotKind::Dph, a, b()?),
        Unit::Dst => e.dst(a, b()?, mask),
        Unit::Mad => e.mad(a, b()?, c.ok_or_else(missing)?, mask),
        Unit::Mov => e.mov(a, mask),
        Unit::Flr => e.flr(a, mask),
        Unit::Rcp => e.scalar(ScalarKind::Rcp, a),
        Unit::Rsq => e.scalar(ScalarKind::Rsq, a),
        Unit::Ex2 => e.scalar(ScalarKind::Ex2, a),
        Unit::Lg2 => e.scalar(ScalarKind::Lg2, a),
        Unit::Litp => e.litp(a, mask),
        Unit::Mova => {
            e.mova(a, mask.has(0), mask.has(1));
            return Ok(());
        }
        Unit::Cmp => {
            if let Instruction::Cmp { x, y, .. } = *instr {
                e.cmp(a, b()?, x, y);
            }
            return Ok(());
        }
        #[cfg(feature = "made-up-opcode")]
        Unit::Sub => {
            // a - b is a + (-b): negating a register operand is exact, and ADD flushes the
            // negated operand as the float model's SUB does.
            let neg = [d.neg(0), !d.neg(1), d.neg(2)];
            let swizzle = [0, 1, 2].map(|n| d.swizzle(n));
            let nd = OperandDesc::new(mask, neg, swizzle);
            let b = e.operand(SourceOperand {
                n: 1,
                reg: ops.src[1],
                rel: ops.rel[1],
                d: nd,
                flushing: flushing[1],
            });
            e.binary(BinaryKind::Add, a, b, mask)
        }
        other => {
            return Err(CompileError::Internal(format!(
                "{} ({other:?}) has no lowering",
                ops.op
            )))
        }
    };
    if let Some(dst) = ops.dst {
        if write {
            e.store(dst, mask, v);
            if unit == Unit::Mov {
                e.note_mov(dst, ops.src[0], a, mask);
            }
        }
    }
    Ok(())
}
