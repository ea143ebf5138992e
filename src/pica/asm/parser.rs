//! Turns a line of tokens into a typed statement. Only syntax is checked here; names, registers
//! and ranges that depend on context (aliases, shader kind, blocks) are resolved by the
//! assembler.

use super::lexer::{Line, Loc, Tok, Token};
use picajit_interp::pica::float::{Rounding, F24};
use picajit_interp::pica::isa::{CmpOp, Condition, Opcode, RelIndex};
use picajit_interp::pica::program::ShaderKind;

/// A parse error: where and why.
pub(crate) type PErr = (Loc, String);
type PResult<T> = Result<T, PErr>;

/// An identifier and its position.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Name {
    pub text: String,
    pub loc: Loc,
}

/// What follows a register name in brackets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum IndexSpec {
    /// `reg[N]`: a fixed offset (may be negative here, unlike picasso).
    Static(i64),
    /// `reg[a0.x+N]`: relative addressing plus a fixed offset.
    Rel { reg: RelIndex, offset: i64 },
}

/// A register operand as written: `-name[index].swizzle`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Operand {
    pub loc: Loc,
    pub neg: bool,
    pub name: Name,
    pub index: Option<(IndexSpec, Loc)>,
    pub swizzle: Option<Name>,
}

/// A flow-control target.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Target {
    /// A procedure or label name.
    Name(Name),
    /// `@dest[, num]`: an absolute word address (picajit extension).
    Raw {
        dest: u32,
        num: Option<u32>,
        loc: Loc,
    },
}

/// A parsed condition: the raw 4-bit CONDOP/REFY/REFX field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cond {
    pub cond: Condition,
    pub loc: Loc,
}

/// Instruction shapes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum InsnKind {
    /// NOP, END, EMIT, BREAK.
    Zero(Opcode),
    /// Register arithmetic: formats 1, 1i, 1u and 5. `op` is the mnemonic as written.
    Arith {
        op: Opcode,
        dst: Operand,
        srcs: Vec<Operand>,
    },
    /// MOVA; `mask` uses descriptor bits (8 = x, 4 = y).
    Mova {
        mask: u8,
        dst_loc: Loc,
        src: Operand,
    },
    Cmp {
        src1: Operand,
        x: CmpOp,
        y: CmpOp,
        src2: Operand,
    },
    Call {
        target: Target,
    },
    CallC {
        cond: Cond,
        target: Target,
    },
    CallU {
        b: Operand,
        target: Target,
    },
    JmpC {
        cond: Cond,
        target: Target,
    },
    JmpU {
        invert: bool,
        b: Operand,
        target: Target,
    },
    /// `ifc cond` opens a block; `ifc cond, @dest, num` is the raw form.
    IfC {
        cond: Cond,
        raw: Option<(u32, u32)>,
    },
    IfU {
        b: Operand,
        raw: Option<(u32, u32)>,
    },
    /// `for iN` opens a block; `for iN, @dest` is the raw form.
    For {
        i: Operand,
        raw: Option<u32>,
    },
    BreakC {
        cond: Cond,
    },
    SetEmit {
        vtx: u8,
        prim: bool,
        inv: bool,
    },
}

/// An instruction statement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Insn {
    pub mnemonic: Name,
    pub kind: InsnKind,
    /// `desc=N`: use descriptor N verbatim and assemble the instruction exactly as written.
    pub pin: Option<(u32, Loc)>,
}

/// Uniform register files as picasso's `.fvec`/`.ivec`/`.bool` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UType {
    Float,
    Int,
    Bool,
}

/// `.gsh` arguments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum GshSpec {
    Point {
        first: Operand,
    },
    Variable {
        first: Operand,
        count: (i64, Loc),
    },
    Fixed {
        first: Operand,
        array: Operand,
        count: (i64, Loc),
    },
}

/// `.entry` arguments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum EntrySpec {
    Name(Name),
    Raw { main: u32, endmain: u32 },
}

/// `.dvleheader` overrides.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct HeaderOverrides {
    pub version: Option<u16>,
    pub kind: Option<ShaderKind>,
    pub merge: Option<bool>,
    pub inputs: Option<u16>,
    pub outputs: Option<u16>,
    pub gs: Option<[u8; 4]>,
}

/// `.dvlp` overrides.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct DvlpOverrides {
    pub version: Option<u32>,
    pub field_18: Option<u32>,
    pub field_1c: Option<u32>,
    pub symbols: Option<Vec<u8>>,
}

/// Directives (picasso's and picajit's extensions).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Directive {
    Proc(Name),
    Else,
    End,
    Entry(EntrySpec),
    Alias {
        name: Name,
        target: Operand,
    },
    Uniforms {
        ty: UType,
        items: Vec<(Name, Option<(i64, Loc)>)>,
    },
    ConstF {
        name: Name,
        values: [u32; 4],
    },
    ConstI {
        name: Name,
        values: [u8; 4],
    },
    ConstArray {
        name: Name,
        size: Option<(i64, Loc)>,
    },
    ConstArrayElem([u32; 4]),
    SetF {
        reg: Operand,
        values: [u32; 4],
    },
    SetI {
        reg: Operand,
        values: [u8; 4],
    },
    SetB {
        reg: Operand,
        value: bool,
    },
    In {
        name: Name,
        reg: Option<Operand>,
    },
    Out {
        name: Option<Name>,
        ty: Name,
        ty_mask: Option<Name>,
        reg: Option<Operand>,
    },
    NoDvle,
    Gsh(Option<GshSpec>),
    // picajit extensions
    Unit,
    NoNop,
    Word(Vec<u32>),
    OpDesc(Vec<u64>),
    UniformRaw {
        name: String,
        first: u16,
        last: u16,
    },
    OutputRaw(u64),
    ConstRaw {
        ty: u16,
        reg: u16,
        words: [u32; 4],
    },
    DvleHeader(HeaderOverrides),
    DvleLabel {
        id: u16,
        unknown: u16,
        offset: u32,
        size: u32,
        name: String,
    },
    Dvlp(DvlpOverrides),
}

/// Statement body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Body {
    Dir(Directive, Loc),
    Ins(Insn),
}

/// One source line: labels, then at most one directive or instruction.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Stmt {
    pub loc: Loc,
    pub labels: Vec<Name>,
    pub body: Option<Body>,
    /// Warnings found while parsing (a constant picasso would read differently).
    pub notes: Vec<(Loc, String)>,
}

struct Cursor<'a> {
    toks: &'a [Token],
    i: usize,
    end: Loc,
    notes: Vec<(Loc, String)>,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.i).map(|t| &t.tok)
    }
    fn peek2(&self) -> Option<&'a Tok> {
        self.toks.get(self.i + 1).map(|t| &t.tok)
    }
    fn loc(&self) -> Loc {
        self.toks.get(self.i).map(|t| t.loc).unwrap_or(self.end)
    }
    fn next(&mut self) -> Option<&'a Token> {
        let t = self.toks.get(self.i);
        if t.is_some() {
            self.i += 1;
        }
        t
    }
    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn found(&self) -> String {
        match self.peek() {
            Some(t) => t.describe(),
            None => "end of line".into(),
        }
    }
    fn expect_punct(&mut self, p: &str) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err((
                self.loc(),
                format!("expected `{p}`, found {}", self.found()),
            ))
        }
    }
    fn ident(&mut self, what: &str) -> PResult<Name> {
        match self.toks.get(self.i) {
            Some(Token {
                tok: Tok::Ident(s),
                loc,
            }) => {
                self.i += 1;
                Ok(Name {
                    text: s.clone(),
                    loc: *loc,
                })
            }
            _ => Err((
                self.loc(),
                format!("expected {what}, found {}", self.found()),
            )),
        }
    }
    fn string(&mut self, what: &str) -> PResult<String> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                self.i += 1;
                Ok(s.clone())
            }
            _ => Err((
                self.loc(),
                format!("expected {what}, found {}", self.found()),
            )),
        }
    }
    fn finish(&self) -> PResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err((
                self.loc(),
                format!("unexpected {} (too many operands?)", self.found()),
            ))
        }
    }
    /// A signed integer literal in `min..=max`.
    fn int(&mut self, what: &str, min: i128, max: i128) -> PResult<(i128, Loc)> {
        let loc = self.loc();
        let neg = if self.eat_punct("-") {
            true
        } else {
            self.eat_punct("+");
            false
        };
        let Some(Tok::Num(text)) = self.peek() else {
            return Err((loc, format!("expected {what}, found {}", self.found())));
        };
        let nloc = self.loc();
        self.i += 1;
        let v = parse_int(text).ok_or_else(|| (nloc, format!("invalid integer `{text}`")))?;
        let v = if neg { -v } else { v };
        if v < min || v > max {
            return Err((
                loc,
                format!(
                    "{what} {v} is out of range ({}..={})",
                    fmt_bound(min),
                    fmt_bound(max)
                ),
            ));
        }
        Ok((v, loc))
    }
    fn uint<T: TryFrom<i128>>(&mut self, what: &str, max: i128) -> PResult<(T, Loc)> {
        let (v, loc) = self.int(what, 0, max)?;
        let v = T::try_from(v).map_err(|_| (loc, format!("{what} out of range")))?;
        Ok((v, loc))
    }
}

fn fmt_bound(v: i128) -> String {
    if v > 0xFFFF {
        format!("{v:#x}")
    } else {
        v.to_string()
    }
}

/// Decimal, `0x` hexadecimal or `0b` binary; `_` separators allowed in the latter two.
/// A leading zero does not mean octal.
pub(crate) fn parse_int(text: &str) -> Option<i128> {
    let lower = text.to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower.strip_prefix("0x") {
        (h.replace('_', ""), 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b.replace('_', ""), 2)
    } else {
        (lower.clone(), 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    i128::from_str_radix(&digits, radix).ok()
}

/// Validates a decimal float literal (`1`, `1.5`, `.5`, `2.`, `1e-3`, `1.5E+20`).
fn is_float_text(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let int_digits = digits(&mut i);
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac_digits = digits(&mut i);
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

const MNEMONIC_ZERO: &[(&str, Opcode)] = &[
    ("nop", Opcode::Nop),
    ("end", Opcode::End),
    ("emit", Opcode::Emit),
    ("break", Opcode::Break),
];

/// Parse one line.
pub(crate) fn parse_line(line: &Line) -> PResult<Stmt> {
    let mut c = Cursor {
        toks: &line.tokens,
        i: 0,
        end: line.end,
        notes: Vec::new(),
    };
    let mut labels = Vec::new();
    while matches!(c.peek(), Some(Tok::Ident(_))) && matches!(c.peek2(), Some(Tok::Punct(":"))) {
        labels.push(c.ident("label")?);
        c.next();
    }
    if c.at_end() {
        return Ok(Stmt {
            loc: line.loc,
            labels,
            body: None,
            notes: Vec::new(),
        });
    }
    let start = c.loc();
    let body = if c.eat_punct(".") {
        let name = c.ident("directive name")?;
        let d = parse_directive(&mut c, &name)?;
        c.finish()?;
        Body::Dir(d, start)
    } else {
        let m = c.ident("instruction or directive")?;
        let ins = parse_insn(&mut c, m)?;
        Body::Ins(ins)
    };
    Ok(Stmt {
        loc: start,
        labels,
        body: Some(body),
        notes: c.notes,
    })
}

fn parse_operand(c: &mut Cursor) -> PResult<Operand> {
    let loc = c.loc();
    let neg = c.eat_punct("-");
    let name = c.ident("register or alias")?;
    let mut index = None;
    if c.is_punct("[") {
        let iloc = c.loc();
        c.next();
        index = Some((parse_index(c)?, iloc));
        c.expect_punct("]")?;
    }
    let mut swizzle = None;
    if c.eat_punct(".") {
        swizzle = Some(c.ident("swizzle or mask letters")?);
    }
    Ok(Operand {
        loc,
        neg,
        name,
        index,
        swizzle,
    })
}

fn parse_index(c: &mut Cursor) -> PResult<IndexSpec> {
    if let Some(Tok::Ident(_)) = c.peek() {
        let n = c.ident("index register")?;
        let lower = n.text.to_ascii_lowercase();
        let reg = match lower.as_str() {
            "a0" if c.is_punct(".") => {
                c.next();
                let comp = c.ident("`x` or `y`")?;
                match comp.text.to_ascii_lowercase().as_str() {
                    "x" => RelIndex::A0X,
                    "y" => RelIndex::A0Y,
                    _ => {
                        return Err((
                            comp.loc,
                            format!("`a0.{}` is not an index register", comp.text),
                        ))
                    }
                }
            }
            "a0" => RelIndex::A0X,
            "a1" => RelIndex::A0Y,
            "a2" | "al" | "lcnt" => RelIndex::AL,
            _ => {
                return Err((
                    n.loc,
                    format!(
                        "`{}` is not an index register (use a0.x, a0.y or aL)",
                        n.text
                    ),
                ))
            }
        };
        let offset = if c.is_punct("+") || c.is_punct("-") {
            let neg = c.is_punct("-");
            c.next();
            let (v, _) = c.int("index offset", 0, 1 << 20)?;
            if neg {
                -(v as i64)
            } else {
                v as i64
            }
        } else {
            0
        };
        if !c.is_punct("]") {
            return Err((c.loc(), format!("expected `]`, found {}", c.found())));
        }
        Ok(IndexSpec::Rel { reg, offset })
    } else {
        let (v, _) = c.int("register offset", -(1 << 20), 1 << 20)?;
        Ok(IndexSpec::Static(v as i64))
    }
}

fn parse_flag(c: &mut Cursor) -> PResult<(bool, bool)> {
    // Returns (is_y, negated).
    let mut neg = false;
    while c.eat_punct("!") {
        neg = !neg;
    }
    let n = c.ident("`cmp.x` or `cmp.y`")?;
    if !n.text.eq_ignore_ascii_case("cmp") || !c.eat_punct(".") {
        return Err((
            n.loc,
            format!(
                "invalid condition flag `{}` (expected cmp.x or cmp.y)",
                n.text
            ),
        ));
    }
    let comp = c.ident("`x` or `y`")?;
    match comp.text.to_ascii_lowercase().as_str() {
        "x" => Ok((false, neg)),
        "y" => Ok((true, neg)),
        _ => Err((
            comp.loc,
            format!("invalid condition flag `cmp.{}`", comp.text),
        )),
    }
}

fn parse_cond(c: &mut Cursor) -> PResult<Cond> {
    let loc = c.loc();
    if let Some(Tok::Num(_)) = c.peek() {
        let (v, _) = c.uint::<u8>("raw condition", 15)?;
        return Ok(Cond {
            cond: Condition::from_raw(v),
            loc,
        });
    }
    let mut refs = [true, true];
    let (first_y, neg) = parse_flag(c)?;
    refs[first_y as usize] ^= neg;
    let op = if c.is_punct("&&") || c.is_punct("&") {
        Some(1u8)
    } else if c.is_punct("||") || c.is_punct("|") {
        Some(0u8)
    } else {
        None
    };
    let raw_op = match op {
        Some(op) => {
            c.next();
            let floc = c.loc();
            let (second_y, neg2) = parse_flag(c)?;
            if second_y == first_y {
                return Err((floc, "condition flag checked twice".into()));
            }
            refs[second_y as usize] ^= neg2;
            op
        }
        None => 2 + first_y as u8,
    };
    Ok(Cond {
        cond: Condition::from_raw(raw_op | (refs[1] as u8) << 2 | (refs[0] as u8) << 3),
        loc,
    })
}

fn parse_target(c: &mut Cursor, with_num: bool) -> PResult<Target> {
    let loc = c.loc();
    if c.eat_punct("@") {
        let (dest, _) = c.uint::<u32>("target address", 0xFFF)?;
        let num = if with_num {
            if !c.eat_punct(",") {
                return Err((
                    c.loc(),
                    "a raw call target needs a length: `@address, length`".into(),
                ));
            }
            Some(c.uint::<u32>("length", 0xFF)?.0)
        } else {
            None
        };
        Ok(Target::Raw { dest, num, loc })
    } else {
        Ok(Target::Name(c.ident("procedure or label name")?))
    }
}

fn parse_cmpop(c: &mut Cursor) -> PResult<CmpOp> {
    let loc = c.loc();
    if let Some(Tok::Num(_)) = c.peek() {
        let (v, _) = c.uint::<u8>("comparison operator", 7)?;
        return Ok(CmpOp::from_raw(v));
    }
    let n = c.ident("comparison operator")?;
    let op = match n.text.to_ascii_lowercase().as_str() {
        "eq" => CmpOp::Eq,
        "ne" => CmpOp::Ne,
        "lt" => CmpOp::Lt,
        "le" => CmpOp::Le,
        "gt" => CmpOp::Gt,
        "ge" => CmpOp::Ge,
        "true6" => CmpOp::True6,
        "true7" => CmpOp::True7,
        _ => {
            return Err((
                loc,
                format!(
                    "invalid comparison operator `{}` (eq, ne, lt, le, gt, ge)",
                    n.text
                ),
            ))
        }
    };
    Ok(op)
}

fn comma(c: &mut Cursor) -> PResult<()> {
    if c.eat_punct(",") {
        Ok(())
    } else if c.at_end() {
        Err((c.loc(), "missing operand".into()))
    } else {
        Err((c.loc(), format!("expected `,`, found {}", c.found())))
    }
}

fn parse_insn(c: &mut Cursor, m: Name) -> PResult<Insn> {
    let lower = m.text.to_ascii_lowercase();
    let need = |c: &Cursor| -> PResult<()> {
        if c.at_end() {
            Err((c.loc(), format!("`{}` needs operands", m.text)))
        } else {
            Ok(())
        }
    };
    let kind = if let Some(&(_, op)) = MNEMONIC_ZERO.iter().find(|(n, _)| *n == lower) {
        InsnKind::Zero(op)
    } else {
        match lower.as_str() {
            "mova" => {
                need(c)?;
                let dloc = c.loc();
                let d = c.ident("a0.x, a0.y or a0.xy")?;
                let mask = match d.text.to_ascii_lowercase().as_str() {
                    "a0" if c.is_punct(".") => {
                        c.next();
                        let letters = c.ident("`x`, `y` or `xy`")?;
                        let mut mask = 0u8;
                        for ch in letters.text.chars() {
                            let bit = match ch.to_ascii_lowercase() {
                                'x' => 8,
                                'y' => 4,
                                _ => {
                                    return Err((
                                        letters.loc,
                                        format!(
                                            "mova can only write a0.x and a0.y, not `a0.{}`",
                                            letters.text
                                        ),
                                    ))
                                }
                            };
                            mask |= bit;
                        }
                        mask
                    }
                    "a0" => 8,
                    "a1" => 4,
                    "a01" => 12,
                    _ => {
                        return Err((
                            dloc,
                            format!(
                                "invalid mova destination `{}` (a0.x, a0.y or a0.xy)",
                                d.text
                            ),
                        ))
                    }
                };
                comma(c)?;
                let src = parse_operand(c)?;
                InsnKind::Mova {
                    mask,
                    dst_loc: dloc,
                    src,
                }
            }
            "cmp" => {
                need(c)?;
                let src1 = parse_operand(c)?;
                comma(c)?;
                let x = parse_cmpop(c)?;
                comma(c)?;
                let y = parse_cmpop(c)?;
                comma(c)?;
                let src2 = parse_operand(c)?;
                InsnKind::Cmp { src1, x, y, src2 }
            }
            "call" => {
                need(c)?;
                InsnKind::Call {
                    target: parse_target(c, true)?,
                }
            }
            "callc" | "jmpc" => {
                need(c)?;
                let cond = parse_cond(c)?;
                comma(c)?;
                let target = parse_target(c, lower == "callc")?;
                if lower == "callc" {
                    InsnKind::CallC { cond, target }
                } else {
                    InsnKind::JmpC { cond, target }
                }
            }
            "callu" => {
                need(c)?;
                if c.is_punct("!") {
                    return Err((c.loc(), "callu cannot invert its condition".into()));
                }
                let b = parse_operand(c)?;
                comma(c)?;
                InsnKind::CallU {
                    b,
                    target: parse_target(c, true)?,
                }
            }
            "jmpu" => {
                need(c)?;
                let invert = c.eat_punct("!");
                let b = parse_operand(c)?;
                comma(c)?;
                InsnKind::JmpU {
                    invert,
                    b,
                    target: parse_target(c, false)?,
                }
            }
            "ifc" => {
                need(c)?;
                let cond = parse_cond(c)?;
                InsnKind::IfC {
                    cond,
                    raw: parse_raw_if(c)?,
                }
            }
            "ifu" => {
                need(c)?;
                if c.is_punct("!") {
                    return Err((c.loc(), "ifu cannot invert its condition".into()));
                }
                let b = parse_operand(c)?;
                InsnKind::IfU {
                    b,
                    raw: parse_raw_if(c)?,
                }
            }
            "for" => {
                need(c)?;
                let i = parse_operand(c)?;
                let raw = if c.eat_punct(",") {
                    c.expect_punct("@")?;
                    Some(c.uint::<u32>("loop end address", 0xFFF)?.0)
                } else {
                    None
                };
                InsnKind::For { i, raw }
            }
            "breakc" => {
                need(c)?;
                InsnKind::BreakC {
                    cond: parse_cond(c)?,
                }
            }
            "setemit" => {
                need(c)?;
                let (vtx, _) = c.uint::<u8>("vertex id", 3)?;
                let (mut prim, mut inv) = (false, false);
                if c.eat_punct(",") {
                    if c.at_end() {
                        return Err((c.loc(), "missing setemit flags".into()));
                    }
                    while let Some(Tok::Ident(_)) = c.peek() {
                        let f = c.ident("flag")?;
                        match f.text.to_ascii_lowercase().as_str() {
                            "prim" | "primitive" => prim = true,
                            "inv" | "invert" => inv = true,
                            _ => {
                                return Err((
                                    f.loc,
                                    format!(
                                        "unknown setemit flag `{}` (prim, primitive, inv, invert)",
                                        f.text
                                    ),
                                ))
                            }
                        }
                    }
                }
                InsnKind::SetEmit { vtx, prim, inv }
            }
            _ => {
                let Some(op) = Opcode::from_mnemonic(&lower).filter(|op| {
                    matches!(
                        op.format(),
                        picajit_interp::pica::isa::Format::One
                            | picajit_interp::pica::isa::Format::OneI
                            | picajit_interp::pica::isa::Format::OneU
                            | picajit_interp::pica::isa::Format::Five
                            | picajit_interp::pica::isa::Format::FiveI
                    ) && *op != Opcode::Mova
                }) else {
                    return Err((m.loc, format!("unknown instruction `{}`", m.text)));
                };
                let nsrc = op.sources();
                need(c)?;
                let dst = parse_operand(c)?;
                let mut srcs = Vec::new();
                for _ in 0..nsrc {
                    comma(c)?;
                    srcs.push(parse_operand(c)?);
                }
                InsnKind::Arith { op, dst, srcs }
            }
        }
    };
    let mut pin = None;
    if let Some(Tok::Ident(s)) = c.peek() {
        if s.eq_ignore_ascii_case("desc") && matches!(c.peek2(), Some(Tok::Punct("="))) {
            let ploc = c.loc();
            c.next();
            c.next();
            let (v, _) = c.uint::<u32>("descriptor index", 127)?;
            pin = Some((v, ploc));
        }
    }
    c.finish()?;
    Ok(Insn {
        mnemonic: m,
        kind,
        pin,
    })
}

fn parse_raw_if(c: &mut Cursor) -> PResult<Option<(u32, u32)>> {
    if !c.eat_punct(",") {
        return Ok(None);
    }
    c.expect_punct("@")?;
    let (dest, _) = c.uint::<u32>("target address", 0xFFF)?;
    comma(c)?;
    let (num, _) = c.uint::<u32>("else length", 0xFF)?;
    Ok(Some((dest, num)))
}

/// A float constant argument converted to float24 bits (truncated, as picasso converts): a
/// literal, `inf`/`nan`, `f24(0x…)` raw bits, or a constant expression of literals with
/// `+ - * /` and parentheses (`1.0/128.0`), evaluated in f64 and rounded to f32 once. picasso
/// reads each argument with C `atof`, which stops at the first character that does not
/// continue a number (`1.0/128.0` is 1.0 there); where that gives a different value, a
/// warning says so.
fn parse_float(c: &mut Cursor) -> PResult<u32> {
    let start = c.i;
    let loc = c.loc();
    if let (Some(Tok::Ident(s)), Some(Tok::Punct("("))) = (c.peek(), c.peek2()) {
        if s.eq_ignore_ascii_case("f24") {
            c.next();
            c.next();
            let (v, _) = c.uint::<u32>("float24 bit pattern", 0xFF_FFFF)?;
            c.expect_punct(")")?;
            return Ok(v);
        }
    }
    let (value, literal) = float_expr(c)?;
    // A single literal is parsed as f32 directly (no double rounding through f64).
    let x = match literal {
        Some(x) => x,
        None => value as f32,
    };
    let bits = F24::from_f32(x, Rounding::TowardZero).bits();
    let text = arg_text(&c.toks[start..c.i]);
    let picasso = F24::from_f32(c_atof(&text) as f32, Rounding::TowardZero).bits();
    if picasso != bits && !(x.is_nan() && c_atof(&text).is_nan()) {
        c.notes.push((
            loc,
            format!(
                "`{text}` is {} here, but picasso reads it with atof as {} (f24 {picasso:#08x} \
                 instead of {bits:#08x})",
                F24::from_bits(bits).to_f32(),
                F24::from_bits(picasso).to_f32()
            ),
        ));
    }
    Ok(bits)
}

/// The source text of an argument's tokens, as picasso's argument splitter hands it to atof.
fn arg_text(toks: &[Token]) -> String {
    toks.iter()
        .map(|t| match &t.tok {
            Tok::Ident(s) | Tok::Num(s) => s.clone(),
            Tok::Punct(p) => (*p).to_string(),
            Tok::Str(s) => format!("\"{s}\""),
        })
        .collect()
}

/// C `atof`: the longest prefix that reads as a decimal number (or inf/nan), else 0.
fn c_atof(text: &str) -> f64 {
    let t = text.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let lower = t[i..].to_ascii_lowercase();
    let neg = t.starts_with('-');
    let sign = |v: f64| if neg { -v } else { v };
    if lower.starts_with("inf") {
        return sign(f64::INFINITY);
    }
    if lower.starts_with("nan") {
        return f64::NAN;
    }
    let digits_from = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits_from(i);
    let mut end = int_end;
    let mut any = int_end > i;
    if end < b.len() && b[end] == b'.' {
        let frac_end = digits_from(end + 1);
        any |= frac_end > end + 1;
        end = frac_end;
    }
    if !any {
        return 0.0;
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut j = end + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_end = digits_from(j);
        if exp_end > j {
            end = exp_end;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

/// C `strtoll(text, NULL, 0)`: the longest prefix that reads as an integer in the base its
/// prefix gives (0x hex, leading 0 octal, else decimal), else 0.
fn c_strtoll(text: &str) -> i128 {
    let t = text.trim_start();
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = rest.to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower
        .strip_prefix("0x")
        .filter(|h| h.starts_with(|c: char| c.is_ascii_hexdigit()))
    {
        (h, 16)
    } else if lower.starts_with('0') {
        (&lower[..], 8)
    } else {
        (&lower[..], 10)
    };
    let n: String = digits.chars().take_while(|c| c.is_digit(radix)).collect();
    let v = i128::from_str_radix(&n, radix).unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// `expr := term (('+' | '-') term)*`; returns the f64 value and, when the whole expression is
/// one (possibly signed) literal, its f32 value.
fn float_expr(c: &mut Cursor) -> PResult<(f64, Option<f32>)> {
    let (mut v, mut lit) = float_term(c)?;
    while let Some(Tok::Punct(p @ ("+" | "-"))) = c.peek() {
        let plus = *p == "+";
        c.next();
        let (r, _) = float_term(c)?;
        v = if plus { v + r } else { v - r };
        lit = None;
    }
    Ok((v, lit))
}

fn float_term(c: &mut Cursor) -> PResult<(f64, Option<f32>)> {
    let (mut v, mut lit) = float_unary(c)?;
    while let Some(Tok::Punct(p @ ("*" | "/"))) = c.peek() {
        let mul = *p == "*";
        c.next();
        let (r, _) = float_unary(c)?;
        v = if mul { v * r } else { v / r };
        lit = None;
    }
    Ok((v, lit))
}

fn float_unary(c: &mut Cursor) -> PResult<(f64, Option<f32>)> {
    if c.eat_punct("-") {
        let (v, lit) = float_unary(c)?;
        return Ok((-v, lit.map(|x| -x)));
    }
    if c.eat_punct("+") {
        return float_unary(c);
    }
    let loc = c.loc();
    match c.peek() {
        Some(Tok::Punct("(")) => {
            c.next();
            let (v, _) = float_expr(c)?;
            c.expect_punct(")")?;
            Ok((v, None))
        }
        Some(Tok::Ident(s))
            if ["inf", "infinity", "nan"].contains(&s.to_ascii_lowercase().as_str()) =>
        {
            let x = if s.eq_ignore_ascii_case("nan") {
                f32::NAN
            } else {
                f32::INFINITY
            };
            c.next();
            Ok((f64::from(x), Some(x)))
        }
        Some(Tok::Num(t)) => {
            // A C-style `f` suffix (`1.0f`) is allowed and means nothing.
            let t = t
                .strip_suffix(['f', 'F'])
                .filter(|b| is_float_text(b))
                .unwrap_or(t)
                .to_string();
            c.next();
            if !is_float_text(&t) {
                return Err((loc, format!("invalid float literal `{t}`")));
            }
            let x: f32 = t
                .parse()
                .map_err(|_| (loc, format!("invalid float literal `{t}`")))?;
            let v: f64 = t
                .parse()
                .map_err(|_| (loc, format!("invalid float literal `{t}`")))?;
            Ok((v, Some(x)))
        }
        _ => Err((
            loc,
            format!("expected a float literal, found {}", c.found()),
        )),
    }
}

/// An integer constant component (-128..=255): a literal or a constant expression with
/// `+ - * /` (division truncates) and parentheses. picasso reads each argument with
/// `strtoll(…, 0)`, which stops at the first character that does not continue the number and
/// reads a leading 0 as octal; where that gives a different value, a warning says so.
fn ivec_item(c: &mut Cursor) -> PResult<u8> {
    let start = c.i;
    let loc = c.loc();
    let v = int_expr(c)?;
    if !(-128..=255).contains(&v) {
        return Err((
            loc,
            format!("integer component {v} is out of range (-128..=255)"),
        ));
    }
    let text = arg_text(&c.toks[start..c.i]);
    let picasso = c_strtoll(&text);
    if picasso as u8 != v as u8 {
        c.notes.push((
            loc,
            format!(
                "`{text}` is {v} here, but picasso reads it with strtoll as {picasso} (stored \
                 as {})",
                picasso as u8
            ),
        ));
    }
    Ok(v as u8)
}

fn int_expr(c: &mut Cursor) -> PResult<i128> {
    let mut v = int_term(c)?;
    while let Some(Tok::Punct(p @ ("+" | "-"))) = c.peek() {
        let plus = *p == "+";
        c.next();
        let r = int_term(c)?;
        v = if plus {
            v.saturating_add(r)
        } else {
            v.saturating_sub(r)
        };
    }
    Ok(v)
}

fn int_term(c: &mut Cursor) -> PResult<i128> {
    let mut v = int_unary(c)?;
    while let Some(Tok::Punct(p @ ("*" | "/"))) = c.peek() {
        let mul = *p == "*";
        let loc = c.loc();
        c.next();
        let r = int_unary(c)?;
        v = if mul {
            v.saturating_mul(r)
        } else {
            v.checked_div(r)
                .ok_or_else(|| (loc, "division by zero in a constant".to_string()))?
        };
    }
    Ok(v)
}

fn int_unary(c: &mut Cursor) -> PResult<i128> {
    if c.eat_punct("-") {
        return Ok(int_unary(c)?.saturating_neg());
    }
    if c.eat_punct("+") {
        return int_unary(c);
    }
    let loc = c.loc();
    match c.peek() {
        Some(Tok::Punct("(")) => {
            c.next();
            let v = int_expr(c)?;
            c.expect_punct(")")?;
            Ok(v)
        }
        Some(Tok::Num(text)) => {
            c.next();
            parse_int(text).ok_or_else(|| (loc, format!("invalid integer `{text}`")))
        }
        _ => Err((
            loc,
            format!("expected an integer component, found {}", c.found()),
        )),
    }
}

fn four<T>(c: &mut Cursor, mut item: impl FnMut(&mut Cursor) -> PResult<T>) -> PResult<[T; 4]> {
    c.expect_punct("(")?;
    let a = item(c)?;
    comma(c)?;
    let b = item(c)?;
    comma(c)?;
    let d = item(c)?;
    comma(c)?;
    let e = item(c)?;
    c.expect_punct(")")?;
    Ok([a, b, d, e])
}

/// Register name in the unified uniform numbering (`v3`, `c10`, `i1`, `b2`) or a raw number.
fn unified_reg(c: &mut Cursor) -> PResult<u16> {
    if let Some(Tok::Ident(_)) = c.peek() {
        let n = c.ident("register")?;
        let (file, idx) = split_register(&n.text)
            .ok_or_else(|| (n.loc, format!("`{}` is not a register", n.text)))?;
        let (base, count) = match file {
            'v' => (0x00, 16),
            'c' => (0x10, 96),
            'i' => (0x70, 4),
            'b' => (0x78, 16),
            _ => {
                return Err((
                    n.loc,
                    format!("`{}` cannot be named in a uniform entry", n.text),
                ))
            }
        };
        if idx >= count {
            return Err((n.loc, format!("register `{}` does not exist", n.text)));
        }
        Ok(base + idx as u16)
    } else {
        Ok(c.uint::<u16>("register number", 0xFFFF)?.0)
    }
}

/// `r12` → ('r', 12). Prefix letter is case-insensitive; the rest must be decimal digits.
pub(crate) fn split_register(s: &str) -> Option<(char, u32)> {
    let mut chars = s.chars();
    let p = chars.next()?.to_ascii_lowercase();
    if !"ovrcib".contains(p) {
        return None;
    }
    let rest = chars.as_str();
    if rest.is_empty() || rest.len() > 6 || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((p, rest.parse().ok()?))
}

fn key_values(c: &mut Cursor, mut f: impl FnMut(&mut Cursor, &Name) -> PResult<()>) -> PResult<()> {
    if c.at_end() {
        return Err((c.loc(), "expected key=value pairs".into()));
    }
    while !c.at_end() {
        let k = c.ident("key")?;
        c.expect_punct("=")?;
        f(c, &k)?;
        c.eat_punct(",");
    }
    Ok(())
}

fn bool_word(c: &mut Cursor) -> PResult<bool> {
    let loc = c.loc();
    match c.peek() {
        Some(Tok::Ident(s)) => {
            let v = match s.to_ascii_lowercase().as_str() {
                "true" | "on" => true,
                "false" | "off" => false,
                _ => {
                    return Err((
                        loc,
                        format!("invalid boolean `{s}` (true, false, on, off, 1, 0)"),
                    ))
                }
            };
            c.next();
            Ok(v)
        }
        Some(Tok::Num(_)) => Ok(c.int("boolean", 0, 1)?.0 == 1),
        _ => Err((loc, format!("expected a boolean, found {}", c.found()))),
    }
}

fn parse_directive(c: &mut Cursor, name: &Name) -> PResult<Directive> {
    let lower = name.text.to_ascii_lowercase();
    const KNOWN: &[&str] = &[
        "proc",
        "else",
        "end",
        "nodvle",
        "unit",
        "nonop",
        "entry",
        "alias",
        "fvec",
        "ivec",
        "bool",
        "constf",
        "consti",
        "constfa",
        "setf",
        "seti",
        "setb",
        "in",
        "out",
        "gsh",
        "word",
        "opdesc",
        "uniform",
        "output",
        "constraw",
        "dvleheader",
        "dvlelabel",
        "dvlp",
    ];
    if !KNOWN.contains(&lower.as_str()) {
        return Err((name.loc, format!("unknown directive `.{}`", name.text)));
    }
    let needs_args = !matches!(
        lower.as_str(),
        "else" | "end" | "nodvle" | "gsh" | "unit" | "nonop"
    );
    if needs_args && c.at_end() {
        return Err((c.loc(), format!("`.{}` needs arguments", name.text)));
    }
    Ok(match lower.as_str() {
        "proc" => Directive::Proc(c.ident("procedure name")?),
        "else" => Directive::Else,
        "end" => Directive::End,
        "nodvle" => Directive::NoDvle,
        "unit" => Directive::Unit,
        "nonop" => Directive::NoNop,
        "entry" => {
            if c.eat_punct("@") {
                let (main, _) = c.uint::<u32>("entry address", u32::MAX as i128)?;
                comma(c)?;
                c.expect_punct("@")?;
                let (endmain, _) = c.uint::<u32>("end address", u32::MAX as i128)?;
                Directive::Entry(EntrySpec::Raw { main, endmain })
            } else {
                Directive::Entry(EntrySpec::Name(c.ident("procedure name")?))
            }
        }
        "alias" => {
            let n = c.ident("alias name")?;
            c.eat_punct(",");
            Directive::Alias {
                name: n,
                target: parse_operand(c)?,
            }
        }
        "fvec" | "ivec" | "bool" => {
            let ty = match lower.as_str() {
                "fvec" => UType::Float,
                "ivec" => UType::Int,
                _ => UType::Bool,
            };
            let mut items = Vec::new();
            loop {
                let n = c.ident("uniform name")?;
                let size = if c.eat_punct("[") {
                    let s = c.int("array size", 1, 96)?;
                    c.expect_punct("]")?;
                    Some((s.0 as i64, s.1))
                } else {
                    None
                };
                items.push((n, size));
                if !c.eat_punct(",") {
                    break;
                }
            }
            Directive::Uniforms { ty, items }
        }
        "constf" => {
            let n = c.ident("constant name")?;
            Directive::ConstF {
                name: n,
                values: four(c, parse_float)?,
            }
        }
        "consti" => {
            let n = c.ident("constant name")?;
            Directive::ConstI {
                name: n,
                values: four(c, ivec_item)?,
            }
        }
        "constfa" => {
            if c.is_punct("(") {
                Directive::ConstArrayElem(four(c, parse_float)?)
            } else {
                let n = c.ident("array name")?;
                c.expect_punct("[")?;
                let size = if c.is_punct("]") {
                    None
                } else {
                    let s = c.int("array size", 1, 96)?;
                    Some((s.0 as i64, s.1))
                };
                c.expect_punct("]")?;
                Directive::ConstArray { name: n, size }
            }
        }
        "setf" => {
            let reg = parse_operand(c)?;
            Directive::SetF {
                reg,
                values: four(c, parse_float)?,
            }
        }
        "seti" => {
            let reg = parse_operand(c)?;
            Directive::SetI {
                reg,
                values: four(c, ivec_item)?,
            }
        }
        "setb" => {
            let reg = parse_operand(c)?;
            c.eat_punct(",");
            Directive::SetB {
                reg,
                value: bool_word(c)?,
            }
        }
        "in" => {
            let n = c.ident("input name")?;
            c.eat_punct(",");
            let reg = if c.at_end() {
                None
            } else {
                Some(parse_operand(c)?)
            };
            Directive::In { name: n, reg }
        }
        "out" => {
            let out_name = if c.eat_punct("-") {
                None
            } else {
                Some(c.ident("output name or `-`")?)
            };
            c.eat_punct(",");
            let ty = c.ident("output type")?;
            let ty_mask = if c.eat_punct(".") {
                Some(c.ident("output mask")?)
            } else {
                None
            };
            c.eat_punct(",");
            let reg = if c.at_end() {
                None
            } else {
                Some(parse_operand(c)?)
            };
            Directive::Out {
                name: out_name,
                ty,
                ty_mask,
                reg,
            }
        }
        "gsh" => {
            if c.at_end() {
                return Ok(Directive::Gsh(None));
            }
            let mode = c.ident("geometry shader mode (point, variable, fixed)")?;
            let spec = match mode.text.to_ascii_lowercase().as_str() {
                "point" => GshSpec::Point {
                    first: parse_operand(c)?,
                },
                "variable" | "subdivision" => {
                    let first = parse_operand(c)?;
                    c.eat_punct(",");
                    let (n, l) = c.int("vertex count", 0, 255)?;
                    GshSpec::Variable {
                        first,
                        count: (n as i64, l),
                    }
                }
                "fixed" | "particle" => {
                    let first = parse_operand(c)?;
                    c.eat_punct(",");
                    let array = parse_operand(c)?;
                    c.eat_punct(",");
                    let (n, l) = c.int("vertex count", 0, 255)?;
                    GshSpec::Fixed {
                        first,
                        array,
                        count: (n as i64, l),
                    }
                }
                _ => {
                    return Err((
                        mode.loc,
                        format!(
                            "invalid geometry shader mode `{}` (point, variable, fixed)",
                            mode.text
                        ),
                    ))
                }
            };
            Directive::Gsh(Some(spec))
        }
        "word" => {
            let mut v = vec![c.uint::<u32>("word", u32::MAX as i128)?.0];
            while c.eat_punct(",") {
                v.push(c.uint::<u32>("word", u32::MAX as i128)?.0);
            }
            Directive::Word(v)
        }
        "opdesc" => {
            let mut v = vec![c.uint::<u64>("operand descriptor", u64::MAX as i128)?.0];
            while c.eat_punct(",") {
                v.push(c.uint::<u64>("operand descriptor", u64::MAX as i128)?.0);
            }
            Directive::OpDesc(v)
        }
        "uniform" => {
            let n = c.string("uniform name (a string)")?;
            comma(c)?;
            let first = unified_reg(c)?;
            comma(c)?;
            let last = unified_reg(c)?;
            Directive::UniformRaw {
                name: n,
                first,
                last,
            }
        }
        "output" => Directive::OutputRaw(c.uint::<u64>("output entry", u64::MAX as i128)?.0),
        "constraw" => {
            let (ty, _) = c.uint::<u16>("constant type", 0xFFFF)?;
            comma(c)?;
            let (reg, _) = c.uint::<u16>("register index", 0xFFFF)?;
            let mut words = [0u32; 4];
            for w in &mut words {
                comma(c)?;
                *w = c.uint::<u32>("payload word", u32::MAX as i128)?.0;
            }
            Directive::ConstRaw { ty, reg, words }
        }
        "dvleheader" => {
            let mut h = HeaderOverrides::default();
            key_values(c, |c, k| {
                match k.text.to_ascii_lowercase().as_str() {
                    "version" => h.version = Some(c.uint::<u16>("version", 0xFFFF)?.0),
                    "kind" => {
                        let v = c.ident("vertex or geometry")?;
                        h.kind = Some(match v.text.to_ascii_lowercase().as_str() {
                            "vertex" => ShaderKind::Vertex,
                            "geometry" => ShaderKind::Geometry,
                            _ => return Err((v.loc, format!("unknown shader kind `{}`", v.text))),
                        });
                    }
                    "merge" => h.merge = Some(bool_word(c)?),
                    "inputs" => h.inputs = Some(c.uint::<u16>("input mask", 0xFFFF)?.0),
                    "outputs" => h.outputs = Some(c.uint::<u16>("output mask", 0xFFFF)?.0),
                    "gs" => {
                        let v = c.uint::<u32>("geometry bytes", u32::MAX as i128)?.0;
                        h.gs = Some(v.to_le_bytes());
                    }
                    _ => {
                        return Err((
                            k.loc,
                            format!(
                                "unknown .dvleheader key `{}` (version, kind, merge, inputs, outputs, gs)",
                                k.text
                            ),
                        ))
                    }
                }
                Ok(())
            })?;
            Directive::DvleHeader(h)
        }
        "dvlelabel" => {
            let (id, _) = c.uint::<u16>("label id", 0xFFFF)?;
            comma(c)?;
            let (unknown, _) = c.uint::<u16>("label field", 0xFFFF)?;
            comma(c)?;
            let (offset, _) = c.uint::<u32>("label offset", u32::MAX as i128)?;
            comma(c)?;
            let (size, _) = c.uint::<u32>("label size", u32::MAX as i128)?;
            comma(c)?;
            let n = c.string("label name (a string)")?;
            Directive::DvleLabel {
                id,
                unknown,
                offset,
                size,
                name: n,
            }
        }
        "dvlp" => {
            let mut d = DvlpOverrides::default();
            key_values(c, |c, k| {
                match k.text.to_ascii_lowercase().as_str() {
                    "version" => d.version = Some(c.uint::<u32>("version", u32::MAX as i128)?.0),
                    "field18" => d.field_18 = Some(c.uint::<u32>("value", u32::MAX as i128)?.0),
                    "field1c" => d.field_1c = Some(c.uint::<u32>("value", u32::MAX as i128)?.0),
                    "symbols" => {
                        let loc = c.loc();
                        let s = c.string("hex string")?;
                        d.symbols =
                            Some(hex_bytes(&s).ok_or((
                                loc,
                                "symbols must be an even number of hex digits".into(),
                            ))?);
                    }
                    _ => {
                        return Err((
                            k.loc,
                            format!(
                                "unknown .dvlp key `{}` (version, field18, field1c, symbols)",
                                k.text
                            ),
                        ))
                    }
                }
                Ok(())
            })?;
            Directive::Dvlp(d)
        }
        _ => return Err((name.loc, format!("unknown directive `.{}`", name.text))),
    })
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    let s: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    if s.len() & 1 != 0 {
        return None;
    }
    s.chunks(2)
        .map(|p| {
            let t: String = p.iter().collect();
            u8::from_str_radix(&t, 16).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pica::asm::lexer::{lex_file, FileNames};

    fn parse(s: &str) -> PResult<Stmt> {
        let mut names = FileNames::default();
        let mut errs = Vec::new();
        let lines = lex_file("t", s, &mut names, &mut errs);
        assert!(errs.is_empty());
        parse_line(&lines[0])
    }

    #[test]
    fn conditions() {
        let c = |s: &str| match parse(&format!("breakc {s}")).unwrap().body {
            Some(Body::Ins(Insn {
                kind: InsnKind::BreakC { cond },
                ..
            })) => cond.cond.raw(),
            other => panic!("{other:?}"),
        };
        assert_eq!(c("cmp.x"), 0b1110);
        assert_eq!(c("!cmp.x"), 0b0110);
        assert_eq!(c("cmp.y"), 0b1111);
        assert_eq!(c("!cmp.y"), 0b1011);
        assert_eq!(c("cmp.x && !cmp.y"), 0b1001);
        assert_eq!(c("!cmp.x || cmp.y"), 0b0100);
        assert_eq!(c("cmp.y & cmp.x"), 0b1101);
        assert_eq!(c("6"), 6);
        assert!(parse("breakc cmp.x && cmp.x").is_err());
    }

    #[test]
    fn floats() {
        assert!(is_float_text("1"));
        assert!(is_float_text("2."));
        assert!(is_float_text(".5"));
        assert!(is_float_text("1e-7"));
        assert!(!is_float_text("0x10"));
        assert!(!is_float_text("1e"));
        assert_eq!("2.".parse::<f32>().ok(), Some(2.0));
        assert_eq!(".5".parse::<f32>().ok(), Some(0.5));
        assert!(parse(".constf a(1.0/128.0, 0, 0, 0)").is_ok());
        assert!(parse(".constf a(1.0/, 0, 0, 0)").is_err());
        assert!(parse(".constf a((1.0, 0, 0, 0)").is_err());
        assert!(parse(".consti a(1/0, 0, 0, 0)").is_err());
        assert_eq!(c_atof("1.0/128.0"), 1.0);
        assert_eq!(c_atof("(1.0/128.0)"), 0.0);
        assert_eq!(c_atof("-2.5e1x"), -25.0);
        assert_eq!(c_atof(".5"), 0.5);
        assert_eq!(c_atof("1e"), 1.0);
        assert_eq!(c_strtoll("010"), 8);
        assert_eq!(c_strtoll("0x1F+1"), 31);
        assert_eq!(c_strtoll("-7*2"), -7);
        assert_eq!(c_strtoll("(3)"), 0);
    }
}
