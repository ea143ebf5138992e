//! The THEIA disassembler: `.mem` images back to source that [`super::asm::assemble`] turns
//! into the same words (table included).

use super::asm::TABLE_LEN;
use super::mem::MemImage;
use picajit_interp::theia::table::{self, Form, Sem, ENTRY_POINTS, SWIZZLES};
use picajit_interp::theia::{regs, Word};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Which fields an operation reads as registers (destination, source 1, source 2).
fn register_fields(sem: Sem) -> [bool; 3] {
    match sem {
        Sem::Nop | Sem::DebugPrint => [false, false, false],
        Sem::Zero | Sem::Lea => [true, false, false],
        Sem::Copy | Sem::Mag | Sem::Inc | Sem::IncX | Sem::IncY | Sem::IncZ | Sem::Dec => {
            [true, true, false]
        }
        Sem::Frac
        | Sem::IntP
        | Sem::Neg
        | Sem::Unscale
        | Sem::Rescale
        | Sem::MulP
        | Sem::TmRead => [true, true, false],
        _ => [true, true, true],
    }
}

/// Disassembles an image. Fails only for words no source syntax can express: operation codes
/// that nothing defines, and table rows that are neither a routine of this file nor their
/// default ROM address.
pub fn disassemble(img: &MemImage) -> Result<String, String> {
    let code = img.code();
    let in_code = |t: u16| -> Option<usize> {
        let row = (t & 0x7FFF) as usize;
        (t & 0x8000 != 0 && row >= TABLE_LEN && row - TABLE_LEN < code.len())
            .then(|| row - TABLE_LEN)
    };
    let mut out = String::new();
    let mut entry_at: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    let mut defined = Vec::new();
    for (&(name, rom), &v) in ENTRY_POINTS.iter().zip(img.entries()) {
        if v == rom as u64 {
            continue;
        }
        match u16::try_from(v).ok().and_then(in_code) {
            Some(idx) => {
                entry_at.entry(idx).or_default().push(name);
                defined.push(name);
            }
            None => {
                return Err(format!(
                    "entry {name} is {v:#x}: neither its ROM address {rom} nor code in this file"
                ))
            }
        }
    }
    // Jump targets inside the code get labels.
    let mut labels: BTreeMap<usize, String> = BTreeMap::new();
    for &raw in code {
        let w = Word::decode(raw);
        if let Some(info) = w.info() {
            if matches!(info.form, Form::CondJump | Form::ImmJump) {
                if let Some(idx) = in_code(w.dst) {
                    labels.insert(idx, format!("L{idx}"));
                }
            }
        }
    }
    let target = |t: u16| -> String {
        if let Some(idx) = in_code(t) {
            return labels[&idx].clone();
        }
        // A ROM routine by name, unless this file defines that entry (then the name means the
        // file's routine).
        if let Some(&(name, _)) = ENTRY_POINTS
            .iter()
            .find(|&&(n, rom)| rom == t && !defined.contains(&n))
        {
            return name.to_string();
        }
        t.to_string()
    };
    let reg = |a: u16, used: bool| -> String {
        if a == 0 && !used {
            return "VOID".into();
        }
        regs::name_of(a).map_or_else(|| a.to_string(), str::to_string)
    };
    for (i, &raw) in code.iter().enumerate() {
        for name in entry_at.get(&i).into_iter().flatten() {
            writeln!(out, "{name}:").unwrap();
        }
        if let Some(l) = labels.get(&i) {
            writeln!(out, "{l}:").unwrap();
        }
        let w = Word::decode(raw);
        let info = table::by_code(w.op).ok_or_else(|| {
            format!(
                "row {}: operation {:#06x} is not defined by any source",
                i + TABLE_LEN,
                w.op
            )
        })?;
        let imm = w.imm();
        let text = match info.form {
            _ if info.sem == Sem::Nop && raw == 0 => "NOP RT_FALSE".to_string(),
            Form::Return if w.dst == 0 && imm <= 1 => {
                format!("RETURN {}", if imm == 1 { "RT_TRUE" } else { "RT_FALSE" })
            }
            Form::Swizzle if (imm as usize) < SWIZZLES.len() => {
                format!(
                    "{} {} {}",
                    info.name,
                    reg(w.dst, true),
                    SWIZZLES[imm as usize].0
                )
            }
            Form::Imm | Form::Return | Form::Swizzle => {
                format!("{} {} 32'h{imm:08X}", info.name, reg(w.dst, true))
            }
            Form::ImmJump if imm == 0 => format!("{} {} VOID VOID", info.name, target(w.dst)),
            Form::ImmJump => format!("{} {} 32'h{imm:08X}", info.name, target(w.dst)),
            Form::CondJump => format!(
                "{} {} {} {}",
                info.name,
                target(w.dst),
                reg(w.src1, true),
                reg(w.src2, true)
            ),
            Form::Reg3 => {
                let [d, a, b] = register_fields(info.sem);
                format!(
                    "{} {} {} {}",
                    info.name,
                    reg(w.dst, d),
                    reg(w.src1, a),
                    reg(w.src2, b)
                )
            }
        };
        writeln!(out, "\t{text}").unwrap();
    }
    // Labels that point past the last instruction cannot occur (in_code checks the range).
    Ok(out)
}
