//! TOY's text syntax: the parser ([`parse`]) and the printer ([`print()`]), which writes text that
//! parses back to the same program.
//!
//! ```text
//! ; sum of 1..=10 in r2
//!         li   r1, 10
//! again:  add  r2, r2, r1       # comments start with ; or #
//!         loop r1, again
//!         halt
//! ```
//!
//! One instruction per line, optionally after one or more `label:` definitions; mnemonics and
//! register names in any case. Operands are registers (`r0`-`r15`), immediates (decimal or
//! `0x` hexadecimal, optionally negative: `li` takes -2^31 to 2^32 - 1, shifts 0-31) and
//! labels (a letter, `_` or `.` followed by letters, digits, `_` or `.`; not a register name).
//! A label may be defined after the last instruction: branching there ends the run.

use picajit_interp::toy::{AluOp, Cond, Instr, Opcode, Program, Reg, Shape, ShiftOp, REGS};
use std::collections::HashMap;
use std::fmt;
use std::fmt::Write as _;

/// The longest source [`parse`] accepts, in bytes (far above the longest program,
/// [`picajit_interp::toy::isa::MAX_INSTRS`] instructions).
pub const MAX_SOURCE_BYTES: usize = 4 << 20;

/// A parse error: where (1-based line and column, in characters) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// A piece of a line and the 1-based column it starts at.
#[derive(Clone, Copy)]
struct Piece<'a> {
    text: &'a str,
    col: usize,
}

impl<'a> Piece<'a> {
    /// The piece without surrounding blanks (columns kept right).
    fn trim(self) -> Piece<'a> {
        let lead = self.text.len() - self.text.trim_start().len();
        Piece {
            text: self.text.trim(),
            col: self.col + self.text[..lead].chars().count(),
        }
    }

    /// The pieces between `sep`s, each trimmed.
    fn split(self, sep: char) -> Vec<Piece<'a>> {
        let mut out = Vec::new();
        let mut col = self.col;
        for part in self.text.split(sep) {
            out.push(Piece { text: part, col }.trim());
            col += part.chars().count() + 1;
        }
        out
    }
}

struct Line<'a> {
    number: usize,
    labels: Vec<Piece<'a>>,
    /// The mnemonic and the rest of the line.
    instr: Option<(Piece<'a>, Piece<'a>)>,
}

fn error(line: usize, col: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        col,
        message: message.into(),
    }
}

fn is_label(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Splits a line into its label definitions and its instruction (comments removed).
fn split_line(number: usize, raw: &str) -> Result<Line<'_>, ParseError> {
    let code = match raw.find([';', '#']) {
        Some(i) => &raw[..i],
        None => raw,
    };
    let mut rest = Piece { text: code, col: 1 }.trim();
    let mut labels = Vec::new();
    while let Some(colon) = rest.text.find(':') {
        let name = Piece {
            text: &rest.text[..colon],
            col: rest.col,
        }
        .trim();
        if !is_label(name.text) {
            let what = if name.text.is_empty() {
                "a ':' without a label before it".to_string()
            } else {
                format!(
                    "'{}' is not a label name (a letter, '_' or '.' followed by letters, digits, '_' or '.')",
                    name.text
                )
            };
            return Err(error(number, name.col, what));
        }
        if register(name.text).is_some() {
            return Err(error(
                number,
                name.col,
                format!("'{}' is a register name and cannot be a label", name.text),
            ));
        }
        labels.push(name);
        let after = colon + 1;
        rest = Piece {
            text: &rest.text[after..],
            col: rest.col + rest.text[..after].chars().count(),
        }
        .trim();
    }
    let instr = (!rest.text.is_empty()).then(|| {
        let end = rest
            .text
            .find(char::is_whitespace)
            .unwrap_or(rest.text.len());
        let mnemonic = Piece {
            text: &rest.text[..end],
            col: rest.col,
        };
        let operands = Piece {
            text: &rest.text[end..],
            col: rest.col + rest.text[..end].chars().count(),
        }
        .trim();
        (mnemonic, operands)
    });
    Ok(Line {
        number,
        labels,
        instr,
    })
}

/// A register name (`r0`-`r15`, any case), or `None`.
pub fn register(s: &str) -> Option<Reg> {
    let digits = s.strip_prefix(['r', 'R'])?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    Reg::new(digits.parse().ok()?)
}

/// A decimal or `0x` hexadecimal integer, optionally negative.
fn integer(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            i64::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) => {
            body.parse().ok()?
        }
        None => return None,
    };
    Some(if neg { -v } else { v })
}

/// Parses a TOY program.
pub fn parse(text: &str) -> Result<Program, ParseError> {
    if text.len() > MAX_SOURCE_BYTES {
        return Err(error(
            1,
            1,
            format!(
                "the source is {} bytes; TOY sources are at most {MAX_SOURCE_BYTES}",
                text.len()
            ),
        ));
    }
    // First pass: every label's instruction index.
    let mut lines = Vec::new();
    let mut labels: HashMap<String, (u32, usize)> = HashMap::new();
    let mut count = 0u32;
    for (i, raw) in text.lines().enumerate() {
        let line = split_line(i + 1, raw)?;
        for l in &line.labels {
            let key = l.text.to_string();
            if let Some(&(_, first)) = labels.get(&key) {
                return Err(error(
                    line.number,
                    l.col,
                    format!("label '{}' is already defined on line {first}", l.text),
                ));
            }
            labels.insert(key, (count, line.number));
        }
        if line.instr.is_some() {
            if count as usize >= picajit_interp::toy::isa::MAX_INSTRS {
                return Err(error(
                    line.number,
                    1,
                    format!(
                        "more than {} instructions",
                        picajit_interp::toy::isa::MAX_INSTRS
                    ),
                ));
            }
            count += 1;
        }
        lines.push(line);
    }
    // Second pass: the instructions.
    let mut instrs = Vec::with_capacity(count as usize);
    for line in &lines {
        if let Some((mnemonic, operands)) = line.instr {
            instrs.push(instruction(line.number, mnemonic, operands, &labels)?);
        }
    }
    // Targets and shift amounts were checked above, so this cannot fail; the error would name
    // an instruction index rather than a line.
    Program::new(instrs).map_err(|e| error(1, 1, e.to_string()))
}

fn instruction(
    line: usize,
    mnemonic: Piece<'_>,
    operands: Piece<'_>,
    labels: &HashMap<String, (u32, usize)>,
) -> Result<Instr, ParseError> {
    let op = Opcode::from_mnemonic(mnemonic.text).ok_or_else(|| {
        let known: Vec<&str> = Opcode::ALL.iter().map(|o| o.mnemonic()).collect();
        error(
            line,
            mnemonic.col,
            format!(
                "unknown operation '{}' (TOY has {})",
                mnemonic.text,
                known.join(", ")
            ),
        )
    })?;
    let shape = op.shape();
    let expected: &[&str] = match shape {
        Shape::RegImm => &["rd", "imm"],
        Shape::ThreeRegs => &["rd", "ra", "rb"],
        Shape::RegRegShift => &["rd", "ra", "n"],
        Shape::RegLabel => &["ra", "label"],
        Shape::Label => &["label"],
        Shape::Nothing => &[],
    };
    let ops = if operands.text.is_empty() {
        Vec::new()
    } else {
        operands.split(',')
    };
    if ops.len() != expected.len() {
        let col = if ops.is_empty() {
            mnemonic.col
        } else {
            operands.col
        };
        let want = if expected.is_empty() {
            "no operands".to_string()
        } else {
            format!("{} operand(s) ({})", expected.len(), expected.join(", "))
        };
        return Err(error(
            line,
            col,
            format!("{} takes {want}, found {}", op.mnemonic(), ops.len()),
        ));
    }
    if let Some(empty) = ops.iter().find(|p| p.text.is_empty()) {
        return Err(error(line, empty.col, "missing operand"));
    }
    let reg = |p: Piece<'_>| {
        register(p.text).ok_or_else(|| {
            error(
                line,
                p.col,
                format!("'{}' is not a register (r0-r{})", p.text, REGS - 1),
            )
        })
    };
    let label = |p: Piece<'_>| {
        if !is_label(p.text) || register(p.text).is_some() {
            return Err(error(line, p.col, format!("'{}' is not a label", p.text)));
        }
        labels
            .get(p.text)
            .map(|&(index, _)| index)
            .ok_or_else(|| error(line, p.col, format!("undefined label '{}'", p.text)))
    };
    Ok(match op {
        Opcode::Li => {
            let p = ops[1];
            let imm = integer(p.text)
                .filter(|v| (-(1i64 << 31)..(1i64 << 32)).contains(v))
                .ok_or_else(|| {
                    error(
                        line,
                        p.col,
                        format!(
                            "'{}' is not a 32-bit immediate (-2147483648 to 4294967295, decimal or 0x hexadecimal)",
                            p.text
                        ),
                    )
                })?;
            Instr::Li {
                rd: reg(ops[0])?,
                imm: imm as u32,
            }
        }
        Opcode::Add | Opcode::Sub | Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Mul => {
            let alu = match op {
                Opcode::Add => AluOp::Add,
                Opcode::Sub => AluOp::Sub,
                Opcode::And => AluOp::And,
                Opcode::Or => AluOp::Or,
                Opcode::Xor => AluOp::Xor,
                _ => AluOp::Mul,
            };
            Instr::Alu {
                op: alu,
                rd: reg(ops[0])?,
                ra: reg(ops[1])?,
                rb: reg(ops[2])?,
            }
        }
        Opcode::Shl | Opcode::Shr | Opcode::Sar => {
            let shift = match op {
                Opcode::Shl => ShiftOp::Shl,
                Opcode::Shr => ShiftOp::Shr,
                _ => ShiftOp::Sar,
            };
            let p = ops[2];
            let n = integer(p.text)
                .filter(|v| (0..32).contains(v))
                .ok_or_else(|| {
                    error(
                        line,
                        p.col,
                        format!("'{}' is not a shift amount (0-31)", p.text),
                    )
                })?;
            Instr::Shift {
                op: shift,
                rd: reg(ops[0])?,
                ra: reg(ops[1])?,
                n: n as u8,
            }
        }
        Opcode::Bz | Opcode::Bnz => Instr::Branch {
            cond: if op == Opcode::Bz {
                Cond::Zero
            } else {
                Cond::NonZero
            },
            ra: reg(ops[0])?,
            target: label(ops[1])?,
        },
        Opcode::Loop => Instr::Loop {
            ra: reg(ops[0])?,
            target: label(ops[1])?,
        },
        Opcode::Jmp => Instr::Jmp {
            target: label(ops[0])?,
        },
        Opcode::Halt => Instr::Halt,
    })
}

/// The program as source text that [`parse`] reads back to the same program: one instruction
/// per line, each branch target labelled `L<index>`.
pub fn print(program: &Program) -> String {
    let targets: std::collections::BTreeSet<u32> =
        program.instrs().iter().filter_map(Instr::target).collect();
    let mut out = String::new();
    for (index, instr) in program.instrs().iter().enumerate() {
        if targets.contains(&(index as u32)) {
            let _ = writeln!(out, "L{index}:");
        }
        let _ = writeln!(out, "    {}", instruction_text(instr));
    }
    if targets.contains(&(program.len() as u32)) {
        let _ = writeln!(out, "L{}:", program.len());
    }
    out
}

/// One instruction as [`print()`] writes it.
pub fn instruction_text(instr: &Instr) -> String {
    let m = instr.opcode().mnemonic();
    match *instr {
        Instr::Li { rd, imm } => format!("{m} {rd}, {}", imm as i32),
        Instr::Alu { rd, ra, rb, .. } => format!("{m} {rd}, {ra}, {rb}"),
        Instr::Shift { rd, ra, n, .. } => format!("{m} {rd}, {ra}, {n}"),
        Instr::Branch { ra, target, .. } | Instr::Loop { ra, target } => {
            format!("{m} {ra}, L{target}")
        }
        Instr::Jmp { target } => format!("{m} L{target}"),
        Instr::Halt => m.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ParseError {
        parse(text).expect_err(text)
    }

    #[test]
    fn parses_every_operation_and_shape() {
        let p = parse(
            "start: li r0, 0x10\n\
             LI R15, -1 ; any case\n\
             add r1, r0, r15\n sub r2, r1, r0\n and r3,r1,r2\n or r4, r3, r2 # comment\n\
             xor r5, r4, r4\n mul r6, r1, r1\n shl r7, r6, 31\n shr r8, r7, 0\n sar r9, r7, 0x3\n\
             a: b: bz r1, end\n bnz r2, a\n loop r3, start\n jmp b\n halt\nend:\n",
        )
        .unwrap();
        let ops: Vec<Opcode> = p.instrs().iter().map(Instr::opcode).collect();
        assert_eq!(ops[1..], Opcode::ALL);
        let r = |n| Reg::new(n).unwrap();
        assert_eq!(
            p.instrs()[1],
            Instr::Li {
                rd: r(15),
                imm: u32::MAX
            }
        );
        assert_eq!(
            p.instrs()[4],
            Instr::Alu {
                op: AluOp::And,
                rd: r(3),
                ra: r(1),
                rb: r(2)
            }
        );
        assert_eq!(
            p.instrs()[10],
            Instr::Shift {
                op: ShiftOp::Sar,
                rd: r(9),
                ra: r(7),
                n: 3
            }
        );
        assert_eq!(
            p.instrs()[11],
            Instr::Branch {
                cond: Cond::Zero,
                ra: r(1),
                target: 16
            }
        );
        assert_eq!(p.instrs()[12].target(), Some(11));
        assert_eq!(p.instrs()[13].target(), Some(0));
        assert_eq!(p.instrs()[14], Instr::Jmp { target: 11 });
        assert_eq!(parse("").unwrap().len(), 0);
        assert_eq!(parse("; only\n\n  # comments\n").unwrap().len(), 0);
    }

    #[test]
    fn immediates_cover_32_bits() {
        for (text, want) in [
            ("0", 0u32),
            ("4294967295", u32::MAX),
            ("-2147483648", 0x8000_0000),
            ("0xffffFFFF", u32::MAX),
            ("-0x1", u32::MAX),
        ] {
            let p = parse(&format!("li r0, {text}")).unwrap();
            assert_eq!(
                p.instrs()[0],
                Instr::Li {
                    rd: Reg::new(0).unwrap(),
                    imm: want
                },
                "{text}"
            );
        }
    }

    #[test]
    fn errors_name_line_column_and_cause() {
        let cases = [
            ("li r0, 1\nnop", 2, 1, "unknown operation 'nop'"),
            (
                "  add r1, r2",
                1,
                7,
                "add takes 3 operand(s) (rd, ra, rb), found 2",
            ),
            ("halt r0", 1, 6, "halt takes no operands, found 1"),
            ("jmp", 1, 1, "jmp takes 1 operand(s) (label), found 0"),
            ("add r1, , r2", 1, 9, "missing operand"),
            ("li r16, 0", 1, 4, "'r16' is not a register (r0-r15)"),
            ("li r01, 0", 1, 4, "'r01' is not a register"),
            ("sub r1, x, r2", 1, 9, "'x' is not a register"),
            (
                "li r1, 4294967296",
                1,
                8,
                "'4294967296' is not a 32-bit immediate",
            ),
            ("li r1, -2147483649", 1, 8, "is not a 32-bit immediate"),
            ("li r1, 12ab", 1, 8, "is not a 32-bit immediate"),
            ("li r1, 0x", 1, 8, "is not a 32-bit immediate"),
            ("shl r1, r1, 32", 1, 13, "'32' is not a shift amount (0-31)"),
            ("shr r1, r1, -1", 1, 13, "'-1' is not a shift amount"),
            ("\n\njmp nowhere", 3, 5, "undefined label 'nowhere'"),
            ("bnz r1, 12", 1, 9, "'12' is not a label"),
            ("bnz r1, r2", 1, 9, "'r2' is not a label"),
            (
                "a: halt\n a: halt",
                2,
                2,
                "label 'a' is already defined on line 1",
            ),
            (
                "r3: halt",
                1,
                1,
                "'r3' is a register name and cannot be a label",
            ),
            ("1x: halt", 1, 1, "'1x' is not a label name"),
            ("  : halt", 1, 3, "a ':' without a label before it"),
        ];
        for (text, line, col, msg) in cases {
            let e = err(text);
            assert_eq!((e.line, e.col), (line, col), "{text:?}: {e}");
            assert!(e.message.contains(msg), "{text:?}: {e}");
        }
        assert_eq!(
            err("jmp x").to_string(),
            "line 1, column 5: undefined label 'x'"
        );
        assert!(err(&" ".repeat(MAX_SOURCE_BYTES + 1))
            .message
            .contains("at most"));
    }

    #[test]
    fn printing_parses_back() {
        let text =
            "top: li r1, -7\n shl r2, r1, 4\n bz r2, out\n loop r1, top\n jmp top\n halt\nout:\n";
        let p = parse(text).unwrap();
        let printed = print(&p);
        assert_eq!(parse(&printed).unwrap(), p, "{printed}");
        assert!(printed.starts_with("L0:\n    li r1, -7\n"), "{printed}");
        assert!(printed.ends_with("    halt\nL6:\n"), "{printed}");
    }
}
