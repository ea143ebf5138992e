//! Canonical text of a USC program: one group header per group (`N :` and its predicates),
//! one instruction per line indented by four spaces, every operand written out (`_` for the
//! ones left out), modifiers in a fixed order. Printing a parsed program and parsing the
//! result gives the same program.

use picajit_interp::usc::program::{BranchMode, Group, Instr, Pred, Program};
use picajit_interp::usc::table::Op;
use std::fmt::Write as _;

/// The canonical mnemonic of an instruction with its modifiers.
pub fn mnemonic(ins: &Instr) -> String {
    let Some(info) = ins.info else {
        return ins.text.clone();
    };
    let mut s = String::from(if info.op == Op::Tste {
        "tste"
    } else {
        info.name
    });
    let m = &ins.mods;
    if m.sat {
        s.push_str(".sat");
    }
    if let Some(t) = m.ty {
        let _ = write!(s, ".{}", t.name());
    }
    if let Some(f) = m.format {
        let _ = write!(s, ".{}", f.name());
    }
    if m.scale {
        s.push_str(".scale");
    }
    if m.roundzero {
        s.push_str(".roundzero");
    }
    if let Some(p) = m.signpos {
        let _ = write!(s, ".{}", p.name());
    }
    if let Some(b) = m.part_b {
        s.push_str(if b { ".b" } else { ".a" });
    }
    match m.branch {
        Some(BranchMode::AllInst) => s.push_str(".allinst"),
        Some(BranchMode::AnyInst) => s.push_str(".anyinst"),
        None => {}
    }
    s
}

/// One instruction in canonical form.
pub fn instruction(ins: &Instr) -> String {
    let mut s = mnemonic(ins);
    for (k, o) in ins.operands.iter().enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        let _ = write!(s, "{o}");
    }
    s
}

/// A group header in canonical form.
pub fn header(g: &Group) -> String {
    let mut s = format!("{} :", g.number);
    match g.pred {
        Pred::Always => {}
        Pred::P0 => s.push_str(" if (p0)"),
        Pred::NotP0 => s.push_str(" if (!p0)"),
    }
    if g.ignore_pe {
        s.push_str(" (ignorepe)");
    }
    s
}

/// The whole program in canonical form.
pub fn program(p: &Program) -> String {
    let mut out = String::new();
    for g in &p.groups {
        out.push_str(&header(g));
        out.push('\n');
        for ins in &g.instrs {
            out.push_str("    ");
            out.push_str(&instruction(ins));
            out.push('\n');
        }
    }
    out
}
