//! One-line, picasso-flavoured text for a single instruction, resolving its operand
//! descriptor. Used by listings, JIT dumps and error messages. The source-level disassembler
//! that produces re-assemblable files (labels, blocks, directives) builds on this.

use super::instruction::Instruction;
use super::opcode::Opcode;
use super::operand::{OperandDesc, RelIndex, SrcReg, Swizzle};
use std::fmt::Write;

fn src_text(out: &mut String, neg: bool, reg: SrcReg, rel: RelIndex, swz: Swizzle) {
    if neg {
        out.push('-');
    }
    let _ = write!(out, "{reg}");
    if let Some(name) = rel.name() {
        let _ = write!(out, "[{name}]");
    }
    if swz != Swizzle::IDENTITY {
        let _ = write!(out, ".{swz}");
    }
}

/// Render `instr` using the descriptor table `descs` (a missing descriptor reads as 0).
pub fn format_instruction(instr: &Instruction, descs: &[u64]) -> String {
    let desc_of = |i: u8| OperandDesc(descs.get(i as usize).copied().unwrap_or(0));
    let mut out = String::new();
    let dst_text = |out: &mut String, d: &dyn std::fmt::Display, desc: OperandDesc| {
        let _ = write!(out, "{d}");
        if desc.mask().0 != 0xF {
            let _ = write!(out, ".{}", desc.mask());
        }
    };
    match *instr {
        Instruction::Binary {
            op,
            dst,
            src1,
            src2,
            rel,
            desc,
        } => {
            let d = desc_of(desc);
            let (r1, r2) = if op.is_inverted() {
                (RelIndex::None, rel)
            } else {
                (rel, RelIndex::None)
            };
            let _ = write!(out, "{:<7} ", op.mnemonic());
            dst_text(&mut out, &dst, d);
            out.push_str(", ");
            src_text(&mut out, d.neg(0), src1, r1, d.swizzle(0));
            out.push_str(", ");
            src_text(&mut out, d.neg(1), src2, r2, d.swizzle(1));
        }
        Instruction::Unary {
            op,
            dst,
            src,
            rel,
            desc,
        } => {
            let d = desc_of(desc);
            let _ = write!(out, "{:<7} ", op.mnemonic());
            dst_text(&mut out, &dst, d);
            out.push_str(", ");
            src_text(&mut out, d.neg(0), src, rel, d.swizzle(0));
        }
        Instruction::Mova { src, rel, desc } => {
            let d = desc_of(desc);
            // Lanes always spelled out: picasso reads a bare `a0` as `a0.x`, so leaving them
            // implicit would misread as one lane.
            let m = d.mask();
            let lanes = match (m.has(0), m.has(1)) {
                (true, true) => ".xy",
                (true, false) => ".x",
                (false, true) => ".y",
                (false, false) => " (no lanes)",
            };
            let _ = write!(out, "{:<7} a0{lanes}, ", "mova");
            src_text(&mut out, d.neg(0), src, rel, d.swizzle(0));
        }
        Instruction::Cmp {
            src1,
            src2,
            rel,
            x,
            y,
            desc,
        } => {
            let d = desc_of(desc);
            let _ = write!(out, "{:<7} ", "cmp");
            src_text(&mut out, d.neg(0), src1, rel, d.swizzle(0));
            let _ = write!(out, ", {}, {}, ", x.name(), y.name());
            src_text(&mut out, d.neg(1), src2, RelIndex::None, d.swizzle(1));
        }
        Instruction::Mad {
            op,
            dst,
            src1,
            src2,
            src3,
            rel,
            desc,
        } => {
            let d = desc_of(desc);
            let (r2, r3) = if op == Opcode::Madi {
                (RelIndex::None, rel)
            } else {
                (rel, RelIndex::None)
            };
            let _ = write!(out, "{:<7} ", op.mnemonic());
            dst_text(&mut out, &dst, d);
            out.push_str(", ");
            src_text(&mut out, d.neg(0), src1, RelIndex::None, d.swizzle(0));
            out.push_str(", ");
            src_text(&mut out, d.neg(1), src2, r2, d.swizzle(1));
            out.push_str(", ");
            src_text(&mut out, d.neg(2), src3, r3, d.swizzle(2));
        }
        Instruction::Nop => out.push_str("nop"),
        Instruction::End => out.push_str("end"),
        Instruction::Break => out.push_str("break"),
        Instruction::Emit => out.push_str("emit"),
        Instruction::BreakC { cond } => {
            let _ = write!(out, "{:<7} {cond}", "breakc");
        }
        Instruction::Call { dest, num } => {
            let _ = write!(out, "{:<7} 0x{dest:03x}, {num}", "call");
        }
        Instruction::CallC { cond, dest, num } => {
            let _ = write!(out, "{:<7} {cond}, 0x{dest:03x}, {num}", "callc");
        }
        Instruction::CallU { b, dest, num } => {
            let _ = write!(out, "{:<7} b{b}, 0x{dest:03x}, {num}", "callu");
        }
        Instruction::IfC { cond, dest, num } => {
            let _ = write!(out, "{:<7} {cond}, 0x{dest:03x}, {num}", "ifc");
        }
        Instruction::IfU { b, dest, num } => {
            let _ = write!(out, "{:<7} b{b}, 0x{dest:03x}, {num}", "ifu");
        }
        Instruction::Loop { i, dest } => {
            let _ = write!(out, "{:<7} i{i}, 0x{dest:03x}", "loop");
        }
        Instruction::JmpC { cond, dest } => {
            let _ = write!(out, "{:<7} {cond}, 0x{dest:03x}", "jmpc");
        }
        Instruction::JmpU { b, dest, invert } => {
            let bang = if invert { "!" } else { "" };
            let _ = write!(out, "{:<7} {bang}b{b}, 0x{dest:03x}", "jmpu");
        }
        Instruction::SetEmit {
            vtx,
            primitive,
            winding,
        } => {
            let _ = write!(out, "{:<7} {vtx}", "setemit");
            if primitive {
                out.push_str(", prim");
            }
            if winding {
                out.push_str(if primitive { " inv" } else { ", inv" });
            }
        }
        Instruction::Undefined { word } => {
            let _ = write!(
                out,
                "<undefined opcode 0x{:02x}: word 0x{word:08x}>",
                word >> 26
            );
        }
    }
    out.trim_end().to_string()
}
