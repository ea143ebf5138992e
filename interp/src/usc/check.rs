//! Structure rules of an instruction group (the reference, section 3), checked on every parsed
//! group: one kind of group (main ALU, bitwise ALU, conditional, branch), units in phase
//! order, phase 1 only with phase 0, at most three sources per main phase and two external
//! sources for phase 2 (IS0/IS1), at most six sources in all (S0-S5), feed-throughs read only
//! after the unit that produces them, a test before MOVC, at most two writes (W0 and W1).

use super::program::{Bank, Group, Instr, Operand, Pred, Reg, Span};
use super::table::{Op, Unit};
use std::collections::BTreeSet;

type CheckError = (Span, String);

/// An external source as the slot accounting sees it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ext {
    Reg(Reg),
    Slot(bool, u8),
}

fn ext(o: &Operand) -> Option<Ext> {
    match o {
        Operand::Reg(r, _) => Some(Ext::Reg(*r)),
        Operand::Slot { is, n, .. } => Some(Ext::Slot(*is, *n)),
        _ => None,
    }
}

/// Which feed-throughs (bit n = ftn; bit 6 = ftt; bit 7 = carry) a unit produces.
fn produces(ins: &Instr, unit: Unit) -> u8 {
    match unit {
        Unit::Phase0 => 1,
        Unit::Phase1 => 2,
        Unit::Phase01 => 1 | 2 | 0x80,
        Unit::Phase2Alu => 4,
        Unit::Test => 0x40,
        Unit::BitMask => 1 | 2,
        Unit::Shift1 => 4,
        Unit::Count => 8,
        Unit::Logical => 16,
        Unit::Shift2 => 32,
        _ => {
            let _ = ins;
            0
        }
    }
}

/// The feed-through operands an instruction reads (bit n = ftn, bit 6 = ftt, bit 7 = carry).
fn reads(ins: &Instr) -> u8 {
    let Some(info) = ins.info else { return 0 };
    let mut r = 0u8;
    for (k, o) in ins.operands.iter().enumerate() {
        // Destinations are written, not read.
        if k == 0
            && !matches!(info.op, Op::Tz | Op::Tnz)
            && matches!(o, Operand::Ft(..) | Operand::Ftt)
        {
            continue;
        }
        if info.unit == Unit::BitMask && k == 1 {
            continue;
        }
        match o {
            Operand::Ft(n, _) => r |= 1 << n,
            Operand::Ftt if !info.op.is_test() => r |= 0x40,
            _ => {}
        }
    }
    match info.op {
        Op::Tstc => r |= 0x80,
        Op::Asr => match ins.mods.signpos {
            Some(super::program::SignPos::Mtb) => r |= 1,
            Some(super::program::SignPos::Ftb) => r |= 8,
            _ => {}
        },
        _ => {}
    }
    r
}

fn ft_name(bit: u32) -> String {
    match bit {
        6 => "ftt".into(),
        7 => "the integer carry (tstc needs a 64-bit integer instruction in phase 0)".into(),
        n => format!("ft{n}"),
    }
}

/// The feed-throughs that drive W0 and W1 by default, from the units present (the reference,
/// section 3: in the main ALU "ft2 drives w0 by default, last phase present" and "ft1 drives w1
/// by default, second to last phase present"; in the bitwise ALU "ft5 implicitly drives w0"
/// and "ft3 implicitly drives w1"; see `docs/usc.md` for the cases the reference leaves open).
pub fn drivers(units: &[Unit]) -> [Option<u8>; 2] {
    let has = |u: Unit| units.contains(&u);
    if units.iter().any(|u| u.is_bitwise()) {
        let w0 = if has(Unit::Shift2) {
            Some(5)
        } else if has(Unit::Logical) {
            Some(4)
        } else if has(Unit::Shift1) {
            Some(2)
        } else if has(Unit::BitMask) {
            Some(0)
        } else {
            None
        };
        let w1 = if has(Unit::Count) {
            Some(3)
        } else if has(Unit::BitMask) {
            Some(1)
        } else {
            None
        };
        return [w0, w1];
    }
    if has(Unit::Phase01) && !has(Unit::Phase2Alu) {
        // A 64-bit result: low word on W0, high word on W1.
        return [Some(0), Some(1)];
    }
    let mut present = Vec::new();
    if has(Unit::Phase0) || has(Unit::Phase01) {
        present.push(0u8);
    }
    if has(Unit::Phase1) || has(Unit::Phase01) {
        present.push(1);
    }
    if has(Unit::Phase2Alu) {
        present.push(2);
    }
    let n = present.len();
    [
        n.checked_sub(1).map(|k| present[k]),
        n.checked_sub(2).map(|k| present[k]),
    ]
}

/// Checks one group; the error names the offending instruction's position.
pub fn check_group(g: &Group) -> Result<(), CheckError> {
    let known: Vec<&Instr> = g.instrs.iter().filter(|i| i.info.is_some()).collect();
    let units: Vec<Unit> = known.iter().map(|i| i.info.unwrap().unit).collect();
    let main = known.iter().zip(&units).find(|(_, u)| u.is_main());
    let bitwise = known.iter().zip(&units).find(|(_, u)| u.is_bitwise());
    if let (Some(_), Some((b, _))) = (main, bitwise) {
        return Err((
            b.span,
            format!(
                "`{}` is a bitwise instruction in a group of the main ALU (the two ALUs cannot be used in one group)",
                b.text
            ),
        ));
    }
    // Conditional, branch and complex instructions fill a group alone.
    for (ins, unit) in known.iter().zip(&units) {
        if matches!(unit, Unit::Cond | Unit::Branch | Unit::Complex) && g.instrs.len() > 1 {
            return Err((
                ins.span,
                format!(
                    "`{}` ({}) must be the only instruction of its group",
                    ins.text,
                    unit.name()
                ),
            ));
        }
        if *unit == Unit::Cond && g.pred != Pred::Always {
            return Err((
                g.span,
                "a conditional instruction takes its condition as an operand, not an `if` predicate".into(),
            ));
        }
    }
    // Phase order, one instruction per unit (writes and declarations may repeat).
    let mut last: Option<(Unit, &Instr)> = None;
    let mut seen: BTreeSet<Unit> = BTreeSet::new();
    // An instruction outside the scope may produce anything: feed-through reads are then not
    // checked.
    let mut produced = if known.len() == g.instrs.len() {
        0u8
    } else {
        0xFF
    };
    let mut writes: Vec<Reg> = Vec::new();
    let mut nwrites = 0;
    for (ins, &unit) in known.iter().zip(&units) {
        if let Some((prev, pins)) = last {
            if unit < prev {
                return Err((
                    ins.span,
                    format!(
                        "wrong phase order: `{}` ({}) after `{}` ({})",
                        ins.text,
                        unit.name(),
                        pins.text,
                        prev.name()
                    ),
                ));
            }
        }
        let repeatable = matches!(unit, Unit::Write | Unit::Decl);
        if !repeatable && seen.contains(&unit) {
            return Err((
                ins.span,
                format!("two {} instructions in one group", unit.name()),
            ));
        }
        if (unit == Unit::Phase01 && (seen.contains(&Unit::Phase0) || seen.contains(&Unit::Phase1)))
            || (unit == Unit::Phase1 && seen.contains(&Unit::Phase01))
        {
            return Err((
                ins.span,
                format!(
                    "`{}` uses phases 0 and 1 (a 64-bit result): no other phase 0 or 1 instruction",
                    ins.text
                ),
            ));
        }
        if unit == Unit::Phase1 && !seen.contains(&Unit::Phase0) {
            return Err((
                ins.span,
                format!(
                    "`{}` is a phase 1 instruction without a phase 0 instruction before it (seed 004: \"Phase 1 can only be present if phase 0 is also present\")",
                    ins.text
                ),
            ));
        }
        seen.insert(unit);
        last = Some((unit, ins));
    }
    for (ins, &unit) in known.iter().zip(&units) {
        let need = reads(ins);
        let missing = need & !produced;
        if missing != 0 {
            return Err((
                ins.span,
                format!(
                    "`{}` reads {} before it is produced",
                    ins.text,
                    ft_name(missing.trailing_zeros())
                ),
            ));
        }
        let info = ins.info.unwrap();
        if info.op == Op::Movc && produced & 0x40 == 0 {
            return Err((ins.span, "movc needs a test instruction before it".into()));
        }
        if matches!(info.op, Op::MovcWrite | Op::Write) {
            nwrites += 1;
            if let Operand::Reg(r, _) = ins.operands[0] {
                if writes.contains(&r) {
                    return Err((ins.span, format!("{r} is written twice in one group")));
                }
                writes.push(r);
            }
            if nwrites > 2 {
                return Err((
                    ins.span,
                    "too many destinations: a group writes at most two registers (w0 and w1)"
                        .into(),
                ));
            }
            if let Operand::W(n, _) = ins.operands[1] {
                let by_mov = known.iter().any(|i| match i.info.map(|x| x.op) {
                    Some(Op::Mov) => n == 0,
                    Some(Op::Movc) => n == 0 || matches!(i.operands[1], Operand::W(1, _)),
                    _ => false,
                });
                if drivers(&units)[usize::from(n)].is_none() && !by_mov {
                    return Err((
                        ins.span,
                        format!("w{n} is read but nothing in the group drives it"),
                    ));
                }
            }
        }
        produced |= produces(ins, unit);
    }
    // Source accounting.
    let mut all: BTreeSet<Ext> = BTreeSet::new();
    let mut p0: BTreeSet<Ext> = BTreeSet::new();
    let mut p1: BTreeSet<Ext> = BTreeSet::new();
    let mut p2: BTreeSet<Ext> = BTreeSet::new();
    for (ins, &unit) in known.iter().zip(&units) {
        let info = ins.info.unwrap();
        let dst_first = !matches!(
            info.op,
            Op::Tz | Op::Tnz | Op::Ba | Op::Bal | Op::Br | Op::Brl
        ) && !matches!(info.unit, Unit::Test);
        for (k, o) in ins.operands.iter().enumerate() {
            if k == 0 && dst_first {
                continue;
            }
            if info.unit == Unit::Cond
                && k == 1
                && info.op != Op::Cndend
                && info.op != Op::Cndsetl
                && info.op != Op::Cndlpc
            {
                continue;
            }
            if info.op == Op::Decl {
                continue;
            }
            let Some(e) = ext(o) else { continue };
            if let Ext::Reg(Reg { bank: Bank::C, .. }) = e {
                // Special constants are sources like any register.
            }
            // IS slots name one of the S sources (seed 004: "pre-selected external sources").
            if !matches!(e, Ext::Slot(true, _)) {
                all.insert(e);
            }
            match unit {
                Unit::Phase0 | Unit::Phase01 => {
                    p0.insert(e);
                }
                Unit::Phase1 => {
                    p1.insert(e);
                }
                Unit::Phase2Alu | Unit::Test => {
                    p2.insert(e);
                }
                _ => {}
            }
        }
        let limit_p0 = if units.contains(&Unit::Phase01) { 4 } else { 3 };
        let p0_regs = if limit_p0 == 4 { "s0-s2, is0" } else { "s0-s2" };
        for (reader, n, regs, limit, which) in [
            ("phase 0", p0.len(), "", limit_p0, p0_regs),
            ("phase 1", p1.len(), "", 3, "s3-s5"),
            ("phase 2", p2.len(), "external ", 2, "is0, is1"),
            ("the group", all.len(), "", 6, "s0-s5"),
        ] {
            if n > limit {
                return Err((
                    ins.span,
                    format!(
                        "too many sources: {reader} reads {n} {regs}registers, at most {limit} \
                         ({which})"
                    ),
                ));
            }
        }
    }
    Ok(())
}
