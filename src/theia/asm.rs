//! The THEIA assembler: the syntax of the original project's Perl assembler
//! (`scripts/theia_compile`), read for facts only.
//!
//! A source file is a list of lines:
//!
//! * `// comment` lines and blank lines are skipped;
//! * `NAME:` defines a label; `ENTRYPOINT_ADRR_X:` in column 1 makes the following code the
//!   routine of entry point X (the `.mem` file's table then points at it);
//! * `OP DST SRC1 SRC2` is an instruction, fields separated by blanks, `//` comments allowed
//!   after it. Each field is a register name as the RTL's definitions spell it, `VOID` (0), a
//!   label, an entry-point name, `32'hXXXXXXXX` (a 32-bit immediate: it fills source 1 and 2),
//!   `SWIZZLE_*` (fills source 2), or `RT_TRUE`/`RT_FALSE` (fills destination, source 1 and 2
//!   with 0, 0, 1/0), exactly as the original assembler lays tokens into the four 16-bit fields.
//!
//! Where the original's behaviour is an accident that silently drops code, this assembler
//! stops with an error instead: an instruction on a label's line or a `:` in a trailing
//! comment (both make the original skip the instruction), indented entry-point definitions
//! (ignored by the original), duplicate labels (the original keeps the last), unknown
//! `SWIZZLE_`/`RT_` spellings (the original uses 0), fields that overflow 32 bits and extra
//! fields (ignored by the original). One extension: a decimal number is accepted as a field
//! value (0-65535), so that register addresses without a name and ROM addresses can be
//! written; the disassembler uses it only for those.
//!
//! Labels used as fields assemble as the instruction index | 0x8000 plus the entry table's
//! length (12), the instruction-memory address of that instruction once the `.mem` file is
//! loaded. An entry-point name used as a field assembles as its ROM address, or, when this
//! file defines it, as the instruction index | 0x8000 *without* the table length: that is what
//! the original does, and the words must match its output.

use picajit_interp::theia::regs;
use picajit_interp::theia::table::{self, ENTRY_POINTS, SWIZZLES};
use std::collections::HashMap;
use std::fmt;

/// The length of the entry-point table at the start of every `.mem` file.
pub const TABLE_LEN: usize = ENTRY_POINTS.len();

/// The most source text [`assemble`] accepts (16 MiB). The instruction memory holds at most
/// 32 755 instructions, a few megabytes of source even with long comments, while labels and
/// line bookkeeping grow with the text, so the limit bounds what a hostile file can claim.
/// Larger input is an error that says so (line 1).
pub const MAX_SOURCE_BYTES: usize = 16 << 20;

/// An assembly error with its 1-based source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for AsmError {}

/// One assembled instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmInstruction {
    pub word: u64,
    /// The source fields as written (`OP DST SRC1 SRC2`, empty where absent), for the `.mem`
    /// comment.
    pub text: [String; 4],
    /// 1-based source line.
    pub line: usize,
}

/// An assembled program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The entry-point table's values, in [`ENTRY_POINTS`] order.
    pub entries: [u32; TABLE_LEN],
    pub code: Vec<AsmInstruction>,
    /// Labels and the instruction index each names.
    pub labels: Vec<(String, usize)>,
}

/// Where labels point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Instruction memory behind the entry-point table (`.mem` files).
    Imem,
    /// ROM code: a label is the instruction index itself; there is no table.
    Rom,
}

impl Program {
    /// The instruction-memory image: the table rows, then the code.
    pub fn imem(&self) -> Vec<u64> {
        self.entries
            .iter()
            .map(|&e| e as u64)
            .chain(self.code.iter().map(|i| i.word))
            .collect()
    }

    /// The code words alone.
    pub fn words(&self) -> Vec<u64> {
        self.code.iter().map(|i| i.word).collect()
    }

    /// The `.mem` text the original assembler writes (with `\n` line ends; the repository's
    /// files have `\r\n`). The instruction comments number instructions from the table's end,
    /// as the `.mem` files in the original repository do.
    pub fn to_mem(&self) -> String {
        let mut s = String::new();
        let count = (self.code.len() + TABLE_LEN) * 2;
        s.push_str(&format!("{count} //Number of ioctects in file\n"));
        s.push_str("//--------------------------------------\n");
        s.push_str("//Subroutine Entry Point Table\n");
        for (&(name, _), &v) in ENTRY_POINTS.iter().zip(&self.entries) {
            s.push_str(&format!("00000000 {v:08X}\t//{name}\n"));
        }
        s.push_str("//--------------------------------------\n");
        for (i, ins) in self.code.iter().enumerate() {
            let ip = i + TABLE_LEN;
            let [op, d, a, b] = &ins.text;
            s.push_str(&format!(
                "{:08X} {:08X}\t\t//  IP {:06X} ({ip}): {op} {d} {a} {b}\n",
                (ins.word >> 32) as u32,
                ins.word as u32,
                ip | 0x8000
            ));
        }
        s
    }
}

fn err(line: usize, message: impl Into<String>) -> AsmError {
    AsmError {
        line,
        message: message.into(),
    }
}

/// Strips a trailing `//` comment.
fn code_part(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

enum LineKind<'a> {
    Skip,
    Label(&'a str),
    Entry(&'a str),
    Instruction(Vec<&'a str>),
}

fn classify(line: &str, n: usize) -> Result<LineKind<'_>, AsmError> {
    let code = code_part(line);
    if code.trim().is_empty() {
        return Ok(LineKind::Skip);
    }
    let tokens: Vec<&str> = code.split_whitespace().collect();
    if let Some(name) = tokens[0].strip_suffix(':') {
        if tokens.len() > 1 {
            return Err(err(
                n,
                "an instruction on a label's line: the original assembler skips it; put it on the next line",
            ));
        }
        if name.is_empty() || name.contains(':') {
            return Err(err(n, format!("bad label '{}'", tokens[0])));
        }
        if name.starts_with("ENTRYPOINT_ADRR_") {
            if line.starts_with(char::is_whitespace) {
                return Err(err(
                    n,
                    "entry-point definitions start in column 1 (the original assembler ignores indented ones)",
                ));
            }
            return Ok(LineKind::Entry(name));
        }
        return Ok(LineKind::Label(name));
    }
    if line.contains(':') {
        return Err(err(
            n,
            "a ':' in this line makes the original assembler read it as a label definition and drop the instruction",
        ));
    }
    if tokens.len() < 2 {
        return Err(err(
            n,
            format!(
                "incorrect statement '{}': expected OP DST [SRC1 [SRC2]]",
                code.trim()
            ),
        ));
    }
    if tokens.len() > 4 {
        return Err(err(
            n,
            format!("too many fields ({}): OP DST SRC1 SRC2", tokens.len()),
        ));
    }
    Ok(LineKind::Instruction(tokens))
}

/// Assembles a source file for the instruction memory (a `.mem` program).
pub fn assemble(src: &str) -> Result<Program, AsmError> {
    assemble_with(src, Layout::Imem)
}

/// Assembles a source file with the given label layout.
pub fn assemble_with(src: &str, layout: Layout) -> Result<Program, AsmError> {
    if src.len() > MAX_SOURCE_BYTES {
        return Err(err(
            1,
            format!(
                "the source is {} bytes; the THEIA assembler accepts at most {MAX_SOURCE_BYTES}",
                src.len()
            ),
        ));
    }
    // Pass 1: label and entry-point addresses.
    let mut labels: HashMap<&str, usize> = HashMap::new();
    let mut label_list = Vec::new();
    let mut defined_entries: HashMap<&str, usize> = HashMap::new();
    let mut ip = 0usize;
    for (i, line) in src.lines().enumerate() {
        let n = i + 1;
        match classify(line, n)? {
            LineKind::Skip => {}
            LineKind::Label(name) => {
                if labels.insert(name, ip).is_some() {
                    return Err(err(n, format!("label '{name}' defined twice")));
                }
                label_list.push((name.to_string(), ip));
            }
            LineKind::Entry(name) => {
                if layout == Layout::Rom {
                    return Err(err(
                        n,
                        "entry points are defined in instruction-memory programs, not ROM code",
                    ));
                }
                if !ENTRY_POINTS.iter().any(|(e, _)| *e == name) {
                    return Err(err(n, format!("entry point not defined: {name}")));
                }
                if defined_entries.insert(name, ip).is_some() {
                    return Err(err(n, format!("entry point {name} defined twice")));
                }
            }
            LineKind::Instruction(_) => ip += 1,
        }
    }
    if ip > 0x7FFF - TABLE_LEN {
        return Err(err(
            0,
            format!("{ip} instructions do not fit the 15-bit instruction memory"),
        ));
    }
    let label_value = |idx: usize| -> u64 {
        match layout {
            Layout::Imem => ((idx | 0x8000) + TABLE_LEN) as u64,
            Layout::Rom => idx as u64,
        }
    };
    // Pass 2: instructions.
    let mut code = Vec::with_capacity(ip);
    for (i, line) in src.lines().enumerate() {
        let n = i + 1;
        let LineKind::Instruction(tokens) = classify(line, n)? else {
            continue;
        };
        let info = table::by_name(tokens[0])
            .ok_or_else(|| err(n, format!("undefined instruction '{}'", tokens[0])))?;
        let mut d: Vec<u64> = vec![info.code as u64];
        for &t in &tokens[1..] {
            if t == "RT_TRUE" || t == "RT_FALSE" {
                d.extend([0, 0, (t == "RT_TRUE") as u64]);
            } else if t.contains("RT_TRUE") || t.contains("RT_FALSE") {
                return Err(err(n, format!("'{t}': the original assembler reads any token containing RT_TRUE/RT_FALSE as 0; write RT_TRUE or RT_FALSE")));
            } else if t.contains("SWIZZLE") {
                let v = SWIZZLES
                    .iter()
                    .position(|(s, _)| *s == t)
                    .ok_or_else(|| err(n, format!("unknown swizzle '{t}'")))?;
                d.extend([0, v as u64]);
            } else if t == "VOID" {
                d.push(0);
            } else if let Some(a) = regs::by_name(t) {
                d.push(a as u64);
            } else if let Some(&idx) = labels.get(t) {
                d.push(label_value(idx));
            } else if let Some(&(_, rom)) = ENTRY_POINTS.iter().find(|(e, _)| *e == t) {
                d.push(match defined_entries.get(t) {
                    Some(&idx) => (idx | 0x8000) as u64,
                    None => rom as u64,
                });
            } else if let Some(hex) = t.strip_prefix("32'h") {
                let v = u32::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| !hex.is_empty() && hex.len() <= 8 && !hex.starts_with('+'))
                    .ok_or_else(|| err(n, format!("bad 32-bit immediate '{t}'")))?;
                d.extend([0, v as u64]);
            } else if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                let v: u64 = t
                    .parse()
                    .ok()
                    .filter(|&v| v <= 0xFFFF)
                    .ok_or_else(|| err(n, format!("field value '{t}' does not fit 16 bits")))?;
                d.push(v);
            } else {
                return Err(err(n, format!("undefined token '{t}'")));
            }
        }
        d.resize(d.len().max(4), 0);
        let hi = (d[0] << 16) + d[1];
        let lo = (d[2] << 16) + d[3];
        if hi > 0xFFFF_FFFF || lo > 0xFFFF_FFFF {
            return Err(err(n, "the fields overflow the 64-bit instruction (an immediate in the destination position?)"));
        }
        let mut text: [String; 4] = Default::default();
        for (k, t) in tokens.iter().enumerate() {
            text[k] = t.to_string();
        }
        code.push(AsmInstruction {
            word: hi << 32 | lo,
            text,
            line: n,
        });
    }
    let mut entries = [0u32; TABLE_LEN];
    for (k, &(name, rom)) in ENTRY_POINTS.iter().enumerate() {
        entries[k] = match defined_entries.get(name) {
            Some(&idx) => ((idx | 0x8000) + TABLE_LEN) as u32,
            None => rom as u32,
        };
    }
    Ok(Program {
        entries,
        code,
        labels: label_list,
    })
}

/// The instruction-memory address of instruction `index` of an assembled program.
pub fn imem_address(index: usize) -> u16 {
    ((index + TABLE_LEN) | 0x8000) as u16
}
