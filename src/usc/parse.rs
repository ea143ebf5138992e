//! Parser of USC ISR text (seed 004, section 3): `N :` group headers, optional `if (p0)`,
//! `if(!p0)` and `(ignorepe)` predicates and `{ }` blocks, instructions separated by line
//! breaks, `:` or `;`, `#` comments. Operands are comma-separated, so an instruction ends at
//! the first operand not followed by a comma; the seed's examples rely on that (several are
//! rendered on one line). A comma followed by the next group header, the next instruction,
//! `}` or the end leaves the last operand out (`umadd32 ft0, sh1, i0, sh2,` in seed 004).

use picajit_interp::usc::check::check_group;
use picajit_interp::usc::consts;
use picajit_interp::usc::program::{
    Bank, BranchMode, Group, Instr, InstrMods, Mods, Operand, PackFormat, Pred, Program, Reg,
    SignPos, Span, TestType,
};
use picajit_interp::usc::table::{self, im, m, Arg, Op, OpInfo};
use std::fmt;

/// A syntax or structure error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub span: Span,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.span, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Largest source accepted (bytes): far above any real shader, small enough that a hostile
/// input cannot make the parser hold much memory.
pub const MAX_SOURCE_BYTES: usize = 4 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Word(String),
    Comma,
    Colon,
    Semi,
    LBrace,
    RBrace,
    LParen,
    RParen,
}

fn err(span: Span, message: impl Into<String>) -> ParseError {
    ParseError {
        span,
        message: message.into(),
    }
}

fn lex(text: &str) -> Result<Vec<(Tok, Span)>, ParseError> {
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line_no = ln as u32 + 1;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            let (_, c) = chars[i];
            let span = Span {
                line: line_no,
                col: i as u32 + 1,
            };
            let single = match c {
                '#' => break,
                ',' => Some(Tok::Comma),
                ':' => Some(Tok::Colon),
                ';' => Some(Tok::Semi),
                '{' => Some(Tok::LBrace),
                '}' => Some(Tok::RBrace),
                '(' => Some(Tok::LParen),
                ')' => Some(Tok::RParen),
                _ => None,
            };
            if let Some(t) = single {
                out.push((t, span));
                i += 1;
                continue;
            }
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            if c == '[' {
                return Err(err(
                    span,
                    "not supported: indexed register access (REG[IDXn, D])",
                ));
            }
            if !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '!' | '-' | '+')) {
                return Err(err(span, format!("unexpected character {c:?}")));
            }
            let start = i;
            while i < chars.len()
                && (chars[i].1.is_ascii_alphanumeric()
                    || matches!(chars[i].1, '_' | '.' | '!' | '-' | '+'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().map(|c| c.1).collect();
            out.push((Tok::Word(word.to_ascii_lowercase()), span));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    end: Span,
}

fn parse_number(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else {
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        body.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.0)
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(self.end)
    }

    fn at_header(&self) -> bool {
        matches!((self.peek(), self.peek_at(1)), (Some(Tok::Word(w)), Some(Tok::Colon)) if parse_number(w).is_some_and(|n| n >= 0) && !w.starts_with(['-', '+']))
    }

    /// Whether the next tokens start an instruction: a mnemonic not followed by a comma.
    fn at_instruction(&self) -> bool {
        match (self.peek(), self.peek_at(1)) {
            (Some(Tok::Word(w)), next) => {
                let name = w.split('.').next().unwrap_or("");
                table::is_mnemonic(name) && next != Some(&Tok::Comma) && !self.at_header()
            }
            _ => false,
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(Tok::Colon | Tok::Semi)) {
            self.pos += 1;
        }
    }

    fn program(&mut self) -> Result<Program, ParseError> {
        let mut groups: Vec<Group> = Vec::new();
        loop {
            self.skip_separators();
            if self.peek().is_none() {
                break;
            }
            if !self.at_header() {
                return Err(err(
                    self.span(),
                    "expected a group header `N :` (every instruction belongs to a group)",
                ));
            }
            let span = self.span();
            let Some(Tok::Word(w)) = self.peek() else {
                unreachable!()
            };
            let number = parse_number(w)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| err(span, format!("group number {w} is out of range")))?;
            if let Some(prev) = groups.last() {
                if number <= prev.number {
                    return Err(err(
                        span,
                        format!(
                            "group {number} after group {}: group numbers must increase",
                            prev.number
                        ),
                    ));
                }
            }
            self.pos += 2;
            let group = self.group(number, span)?;
            check_group(&group).map_err(|(span, message)| err(span, message))?;
            groups.push(group);
        }
        Ok(Program { groups })
    }

    fn group(&mut self, number: u32, span: Span) -> Result<Group, ParseError> {
        let mut pred = Pred::Always;
        let mut ignore_pe = false;
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(Tok::Word(w)), Some(Tok::LParen)) if w == "if" => {
                    let s = self.span();
                    if pred != Pred::Always {
                        return Err(err(s, "a group has one `if` predicate"));
                    }
                    self.pos += 2;
                    pred = match self.peek() {
                        Some(Tok::Word(w)) if w == "p0" => Pred::P0,
                        Some(Tok::Word(w)) if w == "!p0" => Pred::NotP0,
                        _ => return Err(err(self.span(), "expected `p0` or `!p0`")),
                    };
                    self.pos += 1;
                    if self.peek() != Some(&Tok::RParen) {
                        return Err(err(self.span(), "expected `)`"));
                    }
                    self.pos += 1;
                }
                (Some(Tok::LParen), Some(Tok::Word(w))) if w == "ignorepe" => {
                    if self.peek_at(2) != Some(&Tok::RParen) {
                        return Err(err(self.span(), "expected `(ignorepe)`"));
                    }
                    ignore_pe = true;
                    self.pos += 3;
                }
                _ => break,
            }
        }
        let braced = if self.peek() == Some(&Tok::LBrace) {
            self.pos += 1;
            true
        } else {
            false
        };
        let mut instrs = Vec::new();
        loop {
            self.skip_separators();
            match self.peek() {
                None => {
                    if braced {
                        return Err(err(self.end, "missing `}` at the end of the group"));
                    }
                    break;
                }
                Some(Tok::RBrace) if braced => {
                    self.pos += 1;
                    break;
                }
                _ if self.at_header() => {
                    if braced {
                        return Err(err(self.span(), "missing `}` before the next group"));
                    }
                    break;
                }
                _ => {}
            }
            instrs.push(self.instruction()?);
        }
        if instrs.is_empty() {
            return Err(err(span, format!("group {number} has no instruction")));
        }
        Ok(Group {
            number,
            pred,
            ignore_pe,
            instrs,
            span,
        })
    }

    fn instruction(&mut self) -> Result<Instr, ParseError> {
        let span = self.span();
        let mnemonic = match self.peek() {
            Some(Tok::Word(w)) => w.clone(),
            _ => return Err(err(span, "expected an instruction")),
        };
        let mut parts = mnemonic.split('.');
        let name = parts.next().unwrap_or("").to_string();
        if !table::is_mnemonic(&name) {
            return Err(err(span, format!("unknown instruction `{name}`")));
        }
        self.pos += 1;
        // Operands: raw words with their spans; a missing trailing operand is `None`.
        let mut raw: Vec<(Option<String>, Span)> = Vec::new();
        let starts_operand = |p: &Parser| {
            matches!(p.peek(), Some(Tok::Word(_))) && !p.at_header() && !p.at_instruction()
        };
        if starts_operand(self) {
            loop {
                let s = self.span();
                let Some(Tok::Word(w)) = self.peek() else {
                    unreachable!()
                };
                raw.push((Some(w.clone()), s));
                self.pos += 1;
                if self.peek() != Some(&Tok::Comma) {
                    break;
                }
                let comma = self.span();
                self.pos += 1;
                while self.peek() == Some(&Tok::Colon) {
                    self.pos += 1;
                }
                if !starts_operand(self) {
                    match self.peek() {
                        None | Some(Tok::RBrace | Tok::Semi) => {}
                        _ if self.at_header() || self.at_instruction() => {}
                        _ => return Err(err(self.span(), "expected an operand after `,`")),
                    }
                    raw.push((None, comma));
                    break;
                }
            }
        }
        let imods: Vec<&str> = parts.collect();
        if !table::TABLE.iter().any(|r| r.name == name) {
            return Ok(outside_scope(mnemonic, raw, span));
        }
        let (mods, unsupported) = instr_mods(&name, &imods, span)?;
        if let Some(what) = unsupported {
            return Ok(outside_scope(what, raw, span));
        }
        let mut ops = Vec::with_capacity(raw.len());
        for (w, s) in &raw {
            ops.push((
                match w {
                    None => Operand::Blank,
                    Some(w) => operand(w, *s)?,
                },
                *s,
            ));
        }
        let (info, operands, mut mods) = select_row(&name, mods, ops, span)?;
        if name == "tstes32" {
            mods.ty = Some(TestType::S32);
        }
        if info.imods & im::TYPE != 0 && mods.ty.is_none() && info.op != Op::Tstc {
            mods.ty = Some(TestType::F32);
        }
        Ok(Instr {
            info: Some(info),
            text: mnemonic,
            mods,
            operands,
            span,
        })
    }
}

/// Instruction modifiers. Returns the text of the instruction as "not supported" when it
/// names a modifier the seed defines but the scope leaves out (`fmad.lp`, `pck.o8888`).
fn instr_mods(
    name: &str,
    imods: &[&str],
    span: Span,
) -> Result<(InstrMods, Option<String>), ParseError> {
    let allowed = table::rows(name).fold(0u16, |a, r| a | r.imods);
    let mut mods = InstrMods::default();
    let full = || {
        let mut s = name.to_string();
        for x in imods {
            s.push('.');
            s.push_str(x);
        }
        s
    };
    for &x in imods {
        let dup = || err(span, format!("modifier .{x} conflicts with an earlier one"));
        if x == "sat" && allowed & im::SAT != 0 {
            mods.sat = true;
        } else if x == "lp" && name.ends_with("mad") {
            return Ok((mods, Some(full())));
        } else if allowed & im::TYPE != 0 && TestType::ALL.iter().any(|t| t.1 == x) {
            if mods.ty.is_some() {
                return Err(dup());
            }
            mods.ty = TestType::ALL.iter().find(|t| t.1 == x).map(|t| t.0);
        } else if allowed & im::FORMAT != 0 && PackFormat::ALL.iter().any(|t| t.1 == x) {
            if mods.format.is_some() {
                return Err(dup());
            }
            mods.format = PackFormat::ALL.iter().find(|t| t.1 == x).map(|t| t.0);
        } else if allowed & im::FORMAT != 0 && PackFormat::SEED_NAMES.contains(&x) {
            return Ok((mods, Some(full())));
        } else if x == "scale" && allowed & im::SCALE != 0 {
            mods.scale = true;
        } else if (x == "roundzero" || x == "rndzero") && allowed & im::ROUNDZERO != 0 {
            mods.roundzero = true;
        } else if allowed & im::SIGNPOS != 0 && SignPos::ALL.iter().any(|t| t.1 == x) {
            if mods.signpos.is_some() {
                return Err(dup());
            }
            mods.signpos = SignPos::ALL.iter().find(|t| t.1 == x).map(|t| t.0);
        } else if allowed & im::PART != 0 && (x == "a" || x == "b") {
            if mods.part_b.is_some() {
                return Err(dup());
            }
            mods.part_b = Some(x == "b");
        } else if allowed & im::BRANCH != 0 && (x == "allinst" || x == "anyinst") {
            if mods.branch.is_some() {
                return Err(dup());
            }
            mods.branch = Some(if x == "allinst" {
                BranchMode::AllInst
            } else {
                BranchMode::AnyInst
            });
        } else {
            return Err(err(span, format!("unknown modifier .{x} for {name}")));
        }
    }
    if allowed & im::FORMAT != 0 && mods.format.is_none() {
        return Err(err(
            span,
            format!("{name} needs a format (.u8888, .s32, .f32, ...)"),
        ));
    }
    if allowed & im::PART != 0 && mods.part_b.is_none() {
        return Err(err(span, format!("{name} needs .a or .b")));
    }
    Ok((mods, None))
}

fn operand(w: &str, span: Span) -> Result<Operand, ParseError> {
    if w == "_" {
        return Ok(Operand::Blank);
    }
    if let Some(v) = parse_number(w) {
        return Ok(Operand::Imm(v));
    }
    match w {
        "ftt" => return Ok(Operand::Ftt),
        "p0" => return Ok(Operand::P0),
        "!p0" => return Ok(Operand::Imm(1)),
        "true" => return Ok(Operand::Imm(2)),
        "false" => return Ok(Operand::Imm(3)),
        _ => {}
    }
    let mut parts = w.split('.');
    let base = parts.next().unwrap_or("");
    let mut mods = Mods::default();
    for x in parts {
        let flag = match x {
            "abs" => &mut mods.abs,
            "neg" => &mut mods.neg,
            "flr" => &mut mods.flr,
            "invert" => &mut mods.invert,
            "e0" | "e1" | "e2" | "e3" => {
                let bit = 1u8 << (x.as_bytes()[1] - b'0');
                if mods.elems & bit != 0 {
                    return Err(err(span, format!("`.{x}` twice in `{w}`")));
                }
                mods.elems |= bit;
                continue;
            }
            "f16" => return Err(err(span, format!("not supported: f16 operand `{w}`"))),
            _ => {
                return Err(err(
                    span,
                    format!("unknown operand modifier `.{x}` in `{w}`"),
                ))
            }
        };
        if *flag {
            return Err(err(span, format!("`.{x}` twice in `{w}`")));
        }
        *flag = true;
    }
    let split = base
        .find(|c: char| c.is_ascii_digit())
        .ok_or_else(|| err(span, format!("`{w}` is not an operand")))?;
    let (prefix, digits) = base.split_at(split);
    let n: u32 = digits
        .parse()
        .map_err(|_| err(span, format!("`{w}` is not an operand")))?;
    let small = |max: u32, what: &str| {
        if n < max {
            Ok(n as u8)
        } else {
            Err(err(
                span,
                format!("{what}{n} does not exist ({what}0-{what}{})", max - 1),
            ))
        }
    };
    Ok(match prefix {
        "ft" => Operand::Ft(small(6, "ft")?, mods),
        "w" => Operand::W(small(2, "w")?, mods),
        "s" => Operand::Slot {
            is: false,
            n: small(6, "s")?,
            mods,
        },
        "is" => Operand::Slot {
            is: true,
            n: small(6, "is")?,
            mods,
        },
        _ => {
            let bank = match prefix {
                "r" => Bank::R,
                "vi" => Bank::Vi,
                "i" => Bank::I,
                "sh" => Bank::Sh,
                "cf" => Bank::Cf,
                "c" => Bank::C,
                "idx" => Bank::Idx,
                _ => return Err(err(span, format!("`{w}` is not an operand"))),
            };
            if n >= u32::from(bank.count()) {
                return Err(err(
                    span,
                    format!(
                        "{}{n} does not exist ({0}0-{0}{1})",
                        bank.prefix(),
                        bank.count() - 1
                    ),
                ));
            }
            if bank == Bank::C && consts::special(n as u16).is_none() {
                return Err(err(
                    span,
                    format!("c{n} is not a special constant of seed 004's appendix (c0-c31, c64-c95, c128-c159)"),
                ));
            }
            Operand::Reg(
                Reg {
                    bank,
                    index: n as u16,
                },
                mods,
            )
        }
    })
}

/// Checks one operand against a shape; returns the operand as stored (a `p0` condition
/// becomes 0) or what is wrong.
fn fit(arg: Arg, op: &Operand) -> Result<Operand, String> {
    let mods_ok = |mods: Mods, allowed: u8| -> Result<(), String> {
        let mut bad = Vec::new();
        if mods.abs && allowed & m::ABS == 0 {
            bad.push(".abs");
        }
        if mods.neg && allowed & m::NEG == 0 {
            bad.push(".neg");
        }
        if mods.flr && allowed & m::FLR == 0 {
            bad.push(".flr");
        }
        if mods.invert && allowed & m::INVERT == 0 {
            bad.push(".invert");
        }
        let n = mods.elems.count_ones();
        let elems_ok = allowed & m::MASK != 0
            || (allowed & m::E != 0 && n == 1)
            || (allowed & m::E01 != 0 && n == 1 && mods.elems & 0b1100 == 0);
        if n > 0 && !elems_ok {
            bad.push("this element selection");
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!("{} not allowed here", bad.join(", ")))
        }
    };
    let is_ext = |o: &Operand| matches!(o, Operand::Reg(..) | Operand::Slot { .. });
    // `_` stands for an optional operand left out.
    let optional = matches!(arg, Arg::DstW1 | Arg::P0Opt | Arg::Ft1Opt | Arg::Ft1InvOpt);
    if optional && *op == Operand::Blank {
        return Ok(op.clone());
    }
    match arg {
        Arg::DstFt(n) => match op {
            Operand::Ft(k, md) if *k == n && md.is_empty() => Ok(op.clone()),
            _ => Err(format!("expected ft{n}")),
        },
        Arg::DstFtMask => match op {
            Operand::Ft(k, md) if *k <= 2 && !md.abs && !md.neg && !md.flr && !md.invert => {
                Ok(op.clone())
            }
            _ => Err("expected a feed-through".into()),
        },
        Arg::DstReg(allowed) => match op {
            Operand::Reg(r, md) if r.bank != Bank::C => {
                mods_ok(*md, allowed)?;
                Ok(op.clone())
            }
            Operand::Reg(..) => Err("special constants are read-only".into()),
            _ => Err("expected a register destination".into()),
        },
        Arg::DstW0 => match op {
            Operand::W(0, md) if !md.abs && !md.neg && !md.flr && !md.invert => Ok(op.clone()),
            _ => Err("expected w0".into()),
        },
        Arg::DstW1 => match op {
            Operand::W(1, md) if md.is_empty() => Ok(op.clone()),
            _ => Err("expected w1 or _".into()),
        },
        Arg::DstSlot => match op {
            Operand::Slot { mods, .. } if mods.is_empty() => Ok(op.clone()),
            _ => Err("expected a source slot".into()),
        },
        Arg::Src(allowed) => {
            if is_ext(op) {
                mods_ok(op.mods(), allowed)?;
                Ok(op.clone())
            } else {
                Err("expected a source register".into())
            }
        }
        Arg::Is(allowed) => match op {
            Operand::Ft(0 | 1, md) => {
                mods_ok(*md, allowed)?;
                Ok(op.clone())
            }
            _ if is_ext(op) => {
                mods_ok(op.mods(), allowed)?;
                Ok(op.clone())
            }
            _ => Err("expected a source register, ft0 or ft1".into()),
        },
        Arg::Ft(set, allowed) => match op {
            Operand::Ft(k, md) if set >> k & 1 != 0 => {
                mods_ok(*md, allowed)?;
                Ok(op.clone())
            }
            _ => Err(format!("expected {}", ft_set(set))),
        },
        Arg::SrcOrFt(set, allowed) => match op {
            Operand::Ft(k, md) if set >> k & 1 != 0 => {
                mods_ok(*md, allowed)?;
                Ok(op.clone())
            }
            _ if is_ext(op) => {
                mods_ok(op.mods(), allowed)?;
                Ok(op.clone())
            }
            _ => Err(format!("expected a source register or {}", ft_set(set))),
        },
        Arg::SrcOrImm => match op {
            Operand::Imm(v) if u32::try_from(*v).is_ok() || i32::try_from(*v).is_ok() => {
                Ok(op.clone())
            }
            _ if is_ext(op) && op.mods().is_empty() => Ok(op.clone()),
            _ => Err("expected a source register or a 32-bit immediate".into()),
        },
        Arg::P0Opt => match op {
            Operand::P0 => Ok(op.clone()),
            _ => Err("expected p0 or _".into()),
        },
        Arg::P0 => match op {
            Operand::P0 => Ok(op.clone()),
            _ => Err("expected p0".into()),
        },
        Arg::Ftt => match op {
            Operand::Ftt => Ok(op.clone()),
            _ => Err("expected ftt".into()),
        },
        Arg::Ft1Opt => match op {
            Operand::Ft(1, md) if md.is_empty() => Ok(op.clone()),
            _ => Err("expected ft1 or _".into()),
        },
        Arg::Ft1InvOpt => match op {
            Operand::Ft(1, md)
                if *md
                    == (Mods {
                        invert: true,
                        ..Mods::default()
                    }) =>
            {
                Ok(op.clone())
            }
            _ => Err("expected ft1.invert or _".into()),
        },
        Arg::WSrc => match op {
            Operand::Ft(_, md) | Operand::W(_, md) if md.is_empty() => Ok(op.clone()),
            _ if is_ext(op) && op.mods().is_empty() => Ok(op.clone()),
            _ => Err("expected a feed-through, w0, w1 or a source register".into()),
        },
        Arg::Imm(lo, hi) => match op {
            Operand::Imm(v) if (lo..=hi).contains(v) => Ok(op.clone()),
            _ => Err(format!("expected an immediate {lo}..{hi}")),
        },
        Arg::Pcnd => match op {
            Operand::P0 => Ok(Operand::Imm(0)),
            Operand::Imm(0..=3) => Ok(op.clone()),
            _ => Err("expected a condition: 0 (p0), 1 (!p0), 2 (true) or 3 (false)".into()),
        },
        Arg::Target => match op {
            Operand::Imm(v) if i32::try_from(*v).is_ok() => Ok(op.clone()),
            _ => Err("expected a group number or offset".into()),
        },
    }
}

fn ft_set(set: u8) -> String {
    let names: Vec<String> = (0..6)
        .filter(|k| set >> k & 1 != 0)
        .map(|k| format!("ft{k}"))
        .collect();
    names.join(" or ")
}

/// Picks the form of `name` the operands fit. Shorter forms the seed writes are widened first:
/// a test or integer instruction without its `(P0|_)` operand, a logical instruction without
/// its masks (`and ft4, ft2, s3`), ASR naming its sign position as a fourth operand.
fn select_row(
    name: &str,
    mut mods: InstrMods,
    ops: Vec<(Operand, Span)>,
    span: Span,
) -> Result<(&'static OpInfo, Vec<Operand>, InstrMods), ParseError> {
    let mut best: Option<ParseError> = None;
    for row in table::rows(name) {
        let mut ops = ops.clone();
        let n = row.args.len();
        if ops.len() + 1 == n {
            if let Some(k) = row.args.iter().position(|a| *a == Arg::P0Opt) {
                let s = ops.get(k).map_or(span, |o| o.1);
                ops.insert(k, (Operand::Blank, s));
            }
        }
        if row.unit == table::Unit::Logical && n == 5 && ops.len() == 3 {
            let s = ops[1].1;
            ops.insert(1, (Operand::Blank, s));
            ops.insert(3, (Operand::Blank, s));
        }
        let mut row_mods = mods.clone();
        if row.op == Op::Asr && ops.len() == 4 {
            let pos = match &ops[3].0 {
                Operand::Ft(0, md) if md.is_empty() => SignPos::Mtb,
                Operand::Ft(3, md) if md.is_empty() => SignPos::Ftb,
                _ => {
                    best.get_or_insert(err(ops[3].1, "expected ft0 (.mtb) or ft3 (.ftb)"));
                    continue;
                }
            };
            if row_mods.signpos.is_some_and(|p| p != pos) {
                best.get_or_insert(err(ops[3].1, "sign position given twice"));
                continue;
            }
            row_mods.signpos = Some(pos);
            ops.pop();
        }
        if ops.len() != n {
            continue;
        }
        let mut out = Vec::with_capacity(n);
        let mut failed = None;
        for (arg, (op, s)) in row.args.iter().zip(&ops) {
            match fit(*arg, op) {
                Ok(o) => out.push(o),
                Err(e) => {
                    failed = Some(err(*s, format!("{name}: {e}")));
                    break;
                }
            }
        }
        match failed {
            None => {
                if row.op == Op::Asr && row_mods.signpos.is_none() {
                    return Err(err(
                        span,
                        "asr needs a sign position (.twb, .pwb, .mtb, .ftb)",
                    ));
                }
                mods = row_mods;
                return Ok((row, out, mods));
            }
            Some(e) => {
                // Keep the error of the first form that got furthest.
                if best.is_none() {
                    best = Some(e);
                }
            }
        }
    }
    Err(best.unwrap_or_else(|| {
        let counts: Vec<String> = {
            let mut c: Vec<usize> = table::rows(name).map(|r| r.args.len()).collect();
            c.sort_unstable();
            c.dedup();
            c.iter().map(|n| n.to_string()).collect()
        };
        err(
            span,
            format!(
                "{name} takes {} operands, not {}",
                counts.join(" or "),
                ops.len()
            ),
        )
    }))
}

/// Parses USC ISR text. Every group is checked for structure (phase order, sources,
/// feed-throughs); instructions outside the scope parse and are reported when the program is
/// prepared for running ([`picajit_interp::usc::Prepared::new`]).
pub fn parse(text: &str) -> Result<Program, ParseError> {
    if text.len() > MAX_SOURCE_BYTES {
        return Err(err(
            Span { line: 1, col: 1 },
            format!("source is larger than {MAX_SOURCE_BYTES} bytes"),
        ));
    }
    let toks = lex(text)?;
    let end = Span {
        line: text.lines().count().max(1) as u32,
        col: text
            .lines()
            .last()
            .map_or(1, |l| l.chars().count() as u32 + 1),
    };
    let mut p = Parser { toks, pos: 0, end };
    p.program()
}

/// An instruction outside the scope (`text`: its mnemonic, or what of it is unsupported), kept
/// as text for printing and for the "not supported" error.
fn outside_scope(text: String, raw: Vec<(Option<String>, Span)>, span: Span) -> Instr {
    let operands = raw
        .into_iter()
        .map(|(w, _)| match w {
            Some(w) if w != "_" => Operand::Raw(w),
            _ => Operand::Blank,
        })
        .collect();
    Instr {
        info: None,
        text,
        mods: InstrMods::default(),
        operands,
        span,
    }
}
