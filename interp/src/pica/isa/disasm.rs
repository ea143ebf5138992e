//! One-line, picasso-flavoured text for a single instruction, resolving its operand
//! descriptor. Used by listings, JIT dumps and error messages. The source-level disassembler
//! that produces re-assemblable files (labels, blocks, directives) builds on this.

use super::instruction::Instruction;
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
    if let Some(ops) = instr.operands() {
        let d = desc_of(ops.desc);
        let src = |out: &mut String, n: usize| {
            src_text(out, d.neg(n), ops.src[n], ops.rel[n], d.swizzle(n));
        };
        match (*instr, ops.dst) {
            (Instruction::Cmp { x, y, .. }, _) => {
                let _ = write!(out, "{:<7} ", "cmp");
                src(&mut out, 0);
                let _ = write!(out, ", {}, {}, ", x.name(), y.name());
                src(&mut out, 1);
            }
            (_, Some(dst)) => {
                let _ = write!(out, "{:<7} ", ops.op.mnemonic());
                dst_text(&mut out, &dst, d);
                for n in 0..ops.op.sources() {
                    out.push_str(", ");
                    src(&mut out, n);
                }
            }
            // MOVA, the one instruction without a register destination or flags.
            (_, None) => {
                // Lanes always spelled out: picasso reads a bare `a0` as `a0.x`, so leaving
                // them implicit would misread as one lane.
                let m = d.mask();
                let lanes = match (m.has(0), m.has(1)) {
                    (true, true) => ".xy",
                    (true, false) => ".x",
                    (false, true) => ".y",
                    (false, false) => " (no lanes)",
                };
                let _ = write!(out, "{:<7} a0{lanes}, ", "mova");
                src(&mut out, 0);
            }
        }
        return out.trim_end().to_string();
    }
    match *instr {
        Instruction::Binary { .. }
        | Instruction::Unary { .. }
        | Instruction::Mova { .. }
        | Instruction::Cmp { .. }
        | Instruction::Mad { .. } => {}
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
