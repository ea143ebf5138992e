//! Source-level disassembler: a [`Shbin`] back to text that assembles to the same [`Shbin`].
//!
//! The output is produced at decreasing levels of "niceness" and each candidate is assembled
//! and compared with the input; the first that reproduces it is returned:
//!
//! 1. **clean**: plain picasso syntax. Procedures, `ifc`/`ifu` … `.else` … `.end`, `for` … `.end`
//!    and labels are recovered where the words allow it (a construct that does not nest or whose
//!    padding NOPs do not follow picasso's rules is written in raw form instead), the descriptor
//!    table is left to the assembler's picasso-compatible sharing, and the DVLE is described with
//!    `.gsh`, `.in`, `.fvec`, `.out`, `.setf`… directives.
//! 2. **pinned**: the same, plus the descriptor table written out with `.opdesc` and every
//!    instruction pinned to its descriptor (`desc=N`); instructions that cannot be written
//!    exactly become `.word`.
//! 3. **pinned, no padding**: as 2 with `.nonop`, so blocks close exactly where the words say.
//! 4. **flat**: one procedure, every flow instruction with a raw target, no labels.
//!
//! Independently, the DVLE metadata is first written with picasso directives (plus
//! `.dvleheader` overrides for fields they cannot express) and, if that does not reproduce the
//! tables, entirely with the raw directives (`.uniform`, `.output`, `.constraw`, …).

use super::assemble::{check_line, cond_text, CheckCtx, NOP_WORD};
use super::lexer::quote;
use super::SourceFile;
use crate::pica::shbin::{Constant, Dvle, Label, OutputSemantic, ShaderKind, Shbin};
use picajit_interp::pica::float::{Rounding, F24};
use picajit_interp::pica::isa::{
    decode, format_instruction, unused_bits, Instruction, Opcode, OperandDesc, RelIndex, SrcReg,
    Swizzle,
};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

const MAX_DEPTH: usize = 30;
const VSH_MAX_WORDS: usize = 512;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Clean,
    Pinned,
    PinnedNoNop,
    Flat,
}

impl Level {
    fn pinned(self) -> bool {
        self != Level::Clean
    }
    fn padding(self) -> bool {
        matches!(self, Level::Clean | Level::Pinned)
    }
    fn structured(self) -> bool {
        self != Level::Flat
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Meta {
    Clean,
    Raw,
}

/// Where the code goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CodeUnit {
    /// Inside the unit of DVLE k.
    Dvle(usize),
    /// In a leading `.nodvle` unit (with `.gsh` when the code is too long for a vertex unit).
    Separate { gsh: bool },
}

pub(crate) fn disassemble_program(
    code: &[u32],
    opdescs: &[u64],
    entry: u32,
    kind: ShaderKind,
) -> String {
    let mut d = Dvle::new(kind);
    d.main = entry;
    d.endmain = code.len() as u32;
    let shbin = Shbin {
        code: code.to_vec(),
        opdescs: opdescs.to_vec(),
        dvles: vec![d],
        ..Shbin::default()
    };
    disassemble(&shbin)
}

pub(crate) fn disassemble(shbin: &Shbin) -> String {
    let levels = [Level::Clean, Level::Pinned, Level::PinnedNoNop, Level::Flat];
    let units = code_units(shbin);
    for level in levels {
        for &unit in &units {
            for meta in [Meta::Clean, Meta::Raw] {
                let Some(text) = Render::new(shbin, level, meta, unit).run() else {
                    continue;
                };
                match super::assemble(&[SourceFile {
                    name: "disassembly",
                    text: &text,
                }]) {
                    // Values that `Shbin::parse` never produces (an `Unknown` constant with a
                    // canonical payload, say) can only come back as the same bytes.
                    Ok(s) if s == *shbin || s.to_bytes() == shbin.to_bytes() => return text,
                    Ok(s) if s.code != shbin.code || s.opdescs != shbin.opdescs => break,
                    _ => {}
                }
            }
        }
    }
    let unit = units
        .last()
        .copied()
        .unwrap_or(CodeUnit::Separate { gsh: true });
    let text = Render::new(shbin, Level::Flat, Meta::Raw, unit)
        .run()
        .unwrap_or_default();
    format!(
        "; WARNING: picajit could not verify that this text reassembles to the original.\n{text}"
    )
}

/// Where the code may go, best first. The code sits in one unit; a vertex unit cannot hold more
/// than 512 words, and `setemit` in a vertex unit would turn it into a geometry shader (which
/// then needs a `.dvleheader kind=vertex` lock), so a geometry unit is preferred for such code.
fn code_units(shbin: &Shbin) -> Vec<CodeUnit> {
    let code = &shbin.code;
    let has_setemit = code.iter().any(|&w| op_of(w) == Opcode::Setemit as u32);
    let first_gs = shbin
        .dvles
        .iter()
        .position(|d| d.kind == ShaderKind::Geometry);
    let Some(first) = shbin.dvles.first() else {
        return vec![CodeUnit::Separate {
            gsh: code.len() > VSH_MAX_WORDS,
        }];
    };
    if first.kind == ShaderKind::Geometry {
        return vec![CodeUnit::Dvle(0)];
    }
    match first_gs {
        Some(k) if code.len() > VSH_MAX_WORDS => vec![CodeUnit::Dvle(k)],
        Some(k) if has_setemit => vec![CodeUnit::Dvle(k), CodeUnit::Dvle(0)],
        None if code.len() > VSH_MAX_WORDS => vec![CodeUnit::Separate { gsh: true }],
        _ => vec![CodeUnit::Dvle(0)],
    }
}

// ---------------------------------------------------------------------------------------------
// Structure

#[derive(Clone, Debug)]
enum Node {
    Leaf(u32),
    If {
        at: u32,
        then: Vec<Node>,
        els: Option<Vec<Node>>,
        /// Address of the `.else` (start of the else part), when there is one.
        else_at: u32,
        pad_then: bool,
        pad_end: bool,
        end: u32,
    },
    For {
        at: u32,
        body: Vec<Node>,
        pad_end: bool,
        end: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Close {
    Proc,
    If,
    Else,
    For,
}

#[derive(Clone, Debug)]
struct Proc {
    start: u32,
    len: u32,
    name: String,
}

struct Render<'a> {
    shbin: &'a Shbin,
    code: &'a [u32],
    table: &'a [u64],
    level: Level,
    meta: Meta,
    procs: Vec<Proc>,
    proc_by_range: HashMap<(u32, u32), String>,
    labels: Vec<(u32, String)>,
    label_by_addr: HashMap<u32, String>,
    label_cursor: usize,
    code_unit: CodeUnit,
    code_geometry: bool,
    lock_vertex: bool,
    out: String,
    failed: bool,
    memo: RefCell<HashMap<u32, Option<(Node, u32)>>>,
    gap_counter: usize,
    shared: SharedSim,
}

#[derive(Clone, Debug, Default)]
struct SharedSim {
    next: [u32; 3],
    table: HashMap<String, (usize, u32, u32)>,
}

fn op_of(w: u32) -> u32 {
    w >> 26
}

fn is_flow_pad_trigger(op: u32) -> bool {
    matches!(op, 0x24 | 0x25 | 0x26 | 0x2C | 0x2D)
}

impl<'a> Render<'a> {
    fn new(shbin: &'a Shbin, level: Level, meta: Meta, code_unit: CodeUnit) -> Render<'a> {
        let code = shbin.code.as_slice();
        let has_setemit = code.iter().any(|&w| op_of(w) == Opcode::Setemit as u32);
        let (code_geometry, lock_vertex) = match code_unit {
            CodeUnit::Separate { gsh } => (gsh, !gsh && has_setemit),
            CodeUnit::Dvle(k) => {
                let geo = shbin.dvles.get(k).map(|d| d.kind) == Some(ShaderKind::Geometry);
                (geo, !geo && has_setemit)
            }
        };
        Render {
            shbin,
            code,
            table: &shbin.opdescs,
            level,
            meta,
            procs: Vec::new(),
            proc_by_range: HashMap::new(),
            labels: Vec::new(),
            label_by_addr: HashMap::new(),
            label_cursor: 0,
            code_unit,
            code_geometry,
            lock_vertex,
            out: String::new(),
            failed: false,
            memo: RefCell::new(HashMap::new()),
            gap_counter: 0,
            shared: SharedSim::default(),
        }
    }

    fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn line_at(&mut self, indent: usize, text: &str, comment: &str) {
        let mut s = String::new();
        for _ in 0..indent {
            s.push_str("    ");
        }
        s.push_str(text);
        let pad = 44usize.saturating_sub(s.chars().count()).max(1);
        for _ in 0..pad {
            s.push(' ');
        }
        s.push_str("; ");
        s.push_str(comment);
        self.out.push_str(&s);
        self.out.push('\n');
    }

    fn run(mut self) -> Option<String> {
        self.plan();
        let n_dvle = self.shbin.dvles.len();
        let _ = writeln!(
            self.out,
            "; Disassembled by picajit: {} DVLE{}, {} program word{}, {} operand descriptor{}.",
            n_dvle,
            if n_dvle == 1 { "" } else { "s" },
            self.code.len(),
            if self.code.len() == 1 { "" } else { "s" },
            self.table.len(),
            if self.table.len() == 1 { "" } else { "s" },
        );
        if n_dvle > 1 || matches!(self.code_unit, CodeUnit::Separate { .. }) {
            self.out.push_str(
                "; `.unit` starts a new unit, as if a new source file began there; every unit\n\
                 ; without `.nodvle` is one DVLE, in order.\n",
            );
        }
        self.out.push('\n');
        self.dvlp();
        if self.level.pinned() {
            for (i, &d) in self.table.iter().enumerate() {
                let text = if d >> 32 != 0 {
                    format!(".opdesc 0x{d:016x}")
                } else {
                    format!(".opdesc 0x{d:08x}")
                };
                self.line_at(0, &text, &format!("{i}"));
            }
            if !self.table.is_empty() {
                self.out.push('\n');
            }
        }
        let mut first = true;
        if let CodeUnit::Separate { gsh } = self.code_unit {
            self.out.push_str("; shared code\n.nodvle\n");
            if gsh {
                self.out.push_str(".gsh\n");
            } else if self.lock_vertex {
                self.out.push_str(".dvleheader kind=vertex\n");
            }
            self.code_body();
            first = false;
        }
        for k in 0..n_dvle {
            if !first {
                self.out.push_str("\n.unit\n");
            }
            first = false;
            let Some(d) = self.shbin.dvles.get(k) else {
                break;
            };
            let _ = writeln!(self.out, "; DVLE {k}: {} shader", d.kind);
            let has_code = self.code_unit == CodeUnit::Dvle(k);
            match self.meta {
                Meta::Clean => self.meta_clean(k, d, has_code),
                Meta::Raw => self.meta_raw(k, d, has_code),
            }
            if has_code {
                self.code_body();
            }
        }
        if self.failed {
            None
        } else {
            Some(self.out)
        }
    }

    fn dvlp(&mut self) {
        let d = &self.shbin.dvlp;
        let mut parts = Vec::new();
        if d.version != 0 {
            parts.push(format!("version=0x{:x}", d.version));
        }
        if let Some(v) = d.field_18 {
            parts.push(format!("field18=0x{v:x}"));
        }
        if d.field_1c != 0 {
            parts.push(format!("field1c=0x{:x}", d.field_1c));
        }
        if !d.filename_symbols.is_empty() {
            let hex: String = d
                .filename_symbols
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            parts.push(format!("symbols=\"{hex}\""));
        }
        if !parts.is_empty() {
            let _ = writeln!(self.out, ".dvlp {}\n", parts.join(" "));
        }
    }

    // -----------------------------------------------------------------------------------------
    // Planning: procedures and labels

    fn plan(&mut self) {
        let n = self.code.len() as u32;
        if !self.level.structured() {
            self.procs.push(Proc {
                start: 0,
                len: n,
                name: "__code".into(),
            });
            return;
        }
        // Candidates: DVLE entry ranges and call targets.
        let mut cands: Vec<(u32, u32)> = Vec::new();
        for d in &self.shbin.dvles {
            if d.endmain > d.main && d.endmain <= n {
                cands.push((d.main, d.endmain - d.main));
            }
        }
        for &w in self.code {
            if unused_bits(w) != 0 {
                continue;
            }
            let (dest, num) = match decode(w) {
                Instruction::Call { dest, num }
                | Instruction::CallC { dest, num, .. }
                | Instruction::CallU { dest, num, .. } => (u32::from(dest), u32::from(num)),
                _ => continue,
            };
            if num >= 1 && dest + num <= n {
                cands.push((dest, num));
            }
        }
        cands.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        cands.dedup();
        let mut chosen: Vec<(u32, u32)> = Vec::new();
        let mut end = 0;
        for (s, l) in cands {
            if s >= end {
                chosen.push((s, l));
                end = s + l;
            }
        }
        // Fill the gaps so that every word belongs to a procedure.
        let mut tiled = Vec::new();
        let mut at = 0;
        for (s, l) in chosen {
            if s > at {
                tiled.push((at, s - at));
            }
            tiled.push((s, l));
            at = s + l;
        }
        if at < n {
            tiled.push((at, n - at));
        }
        let mut names: HashMap<(u32, u32), String> = HashMap::new();
        for (k, d) in self.shbin.dvles.iter().enumerate() {
            let key = (d.main, d.endmain.wrapping_sub(d.main));
            if tiled.contains(&key) && !names.contains_key(&key) {
                let name = if k == 0 {
                    "main".to_string()
                } else {
                    format!("main{k}")
                };
                names.insert(key, name);
            }
        }
        for (s, l) in tiled {
            let name = names
                .get(&(s, l))
                .cloned()
                .unwrap_or_else(|| format!("proc_{s:03x}"));
            self.proc_by_range.insert((s, l), name.clone());
            self.procs.push(Proc {
                start: s,
                len: l,
                name,
            });
        }
        // Jump labels.
        let mut targets: Vec<u32> = Vec::new();
        for &w in self.code {
            if unused_bits(w) != 0 {
                continue;
            }
            if let Instruction::JmpC { dest, .. } | Instruction::JmpU { dest, .. } = decode(w) {
                if u32::from(dest) <= n {
                    targets.push(u32::from(dest));
                }
            }
        }
        targets.sort_unstable();
        targets.dedup();
        for t in targets {
            let name = format!("l_{t:03x}");
            self.label_by_addr.insert(t, name.clone());
            self.labels.push((t, name));
        }
    }

    // -----------------------------------------------------------------------------------------
    // Structure recovery

    fn parse_seq(&self, lo: u32, hi: u32, depth: usize) -> Vec<Node> {
        let mut out = Vec::new();
        let mut p = lo;
        while p < hi {
            let w = self.code.get(p as usize).copied().unwrap_or(0);
            if self.level.structured() && depth < MAX_DEPTH && unused_bits(w) == 0 {
                if let Some((node, end)) = self.block_at(p, w, depth).filter(|b| b.1 <= hi) {
                    out.push(node);
                    p = end;
                    continue;
                }
            }
            out.push(Node::Leaf(p));
            p += 1;
        }
        out
    }

    /// The block opened by the word `w` at `p`, if it can be written structurally, and the
    /// address after it. Memoised by address: a block that cannot be closed is re-read word by
    /// word by its parent, and without the cache nested failures would cost time exponential in
    /// the depth. (A block first met below the depth limit keeps the shape found there.)
    fn block_at(&self, p: u32, w: u32, depth: usize) -> Option<(Node, u32)> {
        if let Some(r) = self.memo.borrow().get(&p) {
            return r.clone();
        }
        let hi = self.code.len() as u32;
        let r = match decode(w) {
            Instruction::IfC { dest, num, .. } | Instruction::IfU { dest, num, .. } => {
                self.try_if(p, u32::from(dest), u32::from(num), hi, depth)
            }
            Instruction::Loop { dest, .. } => self.try_for(p, u32::from(dest), hi, depth),
            _ => None,
        };
        self.memo.borrow_mut().insert(p, r.clone());
        r
    }

    fn try_if(&self, p: u32, d: u32, n: u32, hi: u32, depth: usize) -> Option<(Node, u32)> {
        if d < p + 1 || d > hi {
            return None;
        }
        let then = self.parse_seq(p + 1, d, depth + 1);
        let (then, pad_then) = self.close(then, Close::If)?;
        if n == 0 {
            return Some((
                Node::If {
                    at: p,
                    then,
                    els: None,
                    else_at: d,
                    pad_then: false,
                    pad_end: pad_then,
                    end: d,
                },
                d,
            ));
        }
        let e = d + n;
        if e > hi {
            return None;
        }
        let els = self.parse_seq(d, e, depth + 1);
        let (els, pad_end) = self.close(els, Close::Else)?;
        Some((
            Node::If {
                at: p,
                then,
                els: Some(els),
                else_at: d,
                pad_then,
                pad_end,
                end: e,
            },
            e,
        ))
    }

    fn try_for(&self, p: u32, d: u32, hi: u32, depth: usize) -> Option<(Node, u32)> {
        let end = d + 1;
        if d < p || end > hi {
            return None;
        }
        let body = self.parse_seq(p + 1, end, depth + 1);
        let (body, pad_end) = self.close(body, Close::For)?;
        Some((
            Node::For {
                at: p,
                body,
                pad_end,
                end,
            },
            end,
        ))
    }

    /// Would the assembler insert a padding NOP when closing a block holding `nodes`?
    fn needs_pad(&self, nodes: &[Node], kind: Close) -> bool {
        match nodes.last() {
            None => kind != Close::Else,
            Some(Node::If { .. } | Node::For { .. }) => true,
            Some(Node::Leaf(a)) => {
                let op = op_of(self.code.get(*a as usize).copied().unwrap_or(0));
                is_flow_pad_trigger(op) || (kind == Close::For && matches!(op, 0x20 | 0x23))
            }
        }
    }

    /// Make a block body agree with the padding rules: `Some((body, padded))` where `padded`
    /// means the body's last word is a NOP the assembler will insert by itself.
    fn close(&self, mut nodes: Vec<Node>, kind: Close) -> Option<(Vec<Node>, bool)> {
        if !self.level.padding() {
            return Some((nodes, false));
        }
        let ends_in_nop = matches!(nodes.last(), Some(Node::Leaf(a))
            if self.code.get(*a as usize) == Some(&NOP_WORD));
        // Leave out a trailing NOP that the assembler inserts by itself (but keep the lone NOP
        // of an otherwise empty block: `ifc cmp.x` / `nop` / `.end` reads better).
        if ends_in_nop && nodes.len() > 1 && self.needs_pad(&nodes[..nodes.len() - 1], kind) {
            nodes.pop();
            return Some((nodes, true));
        }
        if !self.needs_pad(&nodes, kind) {
            return Some((nodes, false));
        }
        if ends_in_nop && self.needs_pad(&nodes[..nodes.len() - 1], kind) {
            nodes.pop();
            return Some((nodes, true));
        }
        None
    }

    // -----------------------------------------------------------------------------------------
    // Code output

    fn code_body(&mut self) {
        if !self.level.padding() {
            self.out.push_str(".nonop\n");
        }
        let procs = self.procs.clone();
        for p in &procs {
            self.out.push('\n');
            self.line(0, &format!(".proc {}", p.name));
            let nodes = self.parse_seq(p.start, p.start + p.len, 1);
            let (nodes, pad) = if self.level.structured() {
                match self.close(nodes, Close::Proc) {
                    Some(x) => x,
                    None => {
                        self.failed = true;
                        return;
                    }
                }
            } else {
                (nodes, false)
            };
            self.nodes(&nodes, 1);
            if pad {
                self.labels_at(p.start + p.len - 1);
            }
            self.line(0, ".end");
        }
        let n = self.code.len() as u32;
        self.labels_at(n);
        if self.label_cursor != self.labels.len() {
            self.failed = true;
        }
    }

    /// The head of a block at word `at`: its labels, then `head` of the instruction there
    /// (`None`, not the block's instruction, fails the disassembly).
    fn block_head(
        &mut self,
        indent: usize,
        at: u32,
        head: impl FnOnce(Instruction) -> Option<String>,
    ) {
        self.labels_at(at);
        let w = self.code.get(at as usize).copied().unwrap_or(0);
        let head = head(decode(w)).unwrap_or_else(|| {
            self.failed = true;
            String::new()
        });
        self.line_at(indent, &head, &format!("{at:03x}"));
    }

    /// The end of a block ending before word `end`: the labels of its last word when the
    /// block pads it, then `.end`.
    fn block_end(&mut self, indent: usize, pad_end: bool, end: u32) {
        if pad_end {
            self.labels_at(end - 1);
        }
        self.line(indent, ".end");
    }

    fn labels_at(&mut self, addr: u32) {
        while let Some((a, name)) = self.labels.get(self.label_cursor).cloned() {
            if a < addr {
                self.failed = true;
                self.label_cursor += 1;
            } else if a == addr {
                self.line(0, &format!("{name}:"));
                self.label_cursor += 1;
            } else {
                break;
            }
        }
    }

    fn nodes(&mut self, nodes: &[Node], indent: usize) {
        for node in nodes {
            match node {
                Node::Leaf(a) => {
                    self.labels_at(*a);
                    let (text, comment) = self.leaf(*a);
                    self.line_at(indent, &text, &comment);
                }
                Node::If {
                    at,
                    then,
                    els,
                    else_at,
                    pad_then,
                    pad_end,
                    end,
                } => {
                    self.block_head(indent, *at, |ins| match ins {
                        Instruction::IfC { cond, .. } => Some(format!("ifc {}", cond_text(cond))),
                        Instruction::IfU { b, .. } => Some(format!("ifu b{b}")),
                        _ => None,
                    });
                    self.nodes(then, indent + 1);
                    if let Some(els) = els {
                        if *pad_then {
                            self.labels_at(else_at - 1);
                        }
                        self.line(indent, ".else");
                        self.nodes(els, indent + 1);
                    }
                    self.block_end(indent, *pad_end, *end);
                }
                Node::For {
                    at,
                    body,
                    pad_end,
                    end,
                } => {
                    self.block_head(indent, *at, |ins| match ins {
                        Instruction::Loop { i, .. } => Some(format!("for i{i}")),
                        _ => None,
                    });
                    self.nodes(body, indent + 1);
                    self.block_end(indent, *pad_end, *end);
                }
            }
        }
    }

    fn word_line(&self, a: u32, w: u32) -> (String, String) {
        let text = format_instruction(&decode(w), self.table);
        (format!(".word 0x{w:08x}"), format!("{a:03x}: {text}"))
    }

    fn proc_ref(&self, dest: u16, num: u8) -> String {
        match self.proc_by_range.get(&(u32::from(dest), u32::from(num))) {
            Some(name) if self.level.structured() => name.clone(),
            _ => format!("@0x{dest:03x}, {num}"),
        }
    }

    fn label_ref(&self, dest: u16) -> String {
        match self.label_by_addr.get(&u32::from(dest)) {
            Some(name) if self.level.structured() => name.clone(),
            _ => format!("@0x{dest:03x}"),
        }
    }

    /// Text and comment of one word rendered on its own.
    fn leaf(&mut self, a: u32) -> (String, String) {
        let w = self.code.get(a as usize).copied().unwrap_or(0);
        let comment = format!("{a:03x}");
        if unused_bits(w) != 0 {
            return self.word_line(a, w);
        }
        let ins = decode(w);
        let text = match ins {
            Instruction::Undefined { .. } => return self.word_line(a, w),
            Instruction::Binary { .. }
            | Instruction::Unary { .. }
            | Instruction::Mova { .. }
            | Instruction::Cmp { .. }
            | Instruction::Mad { .. } => return self.arith_leaf(a, w, &ins),
            Instruction::Nop => "nop".into(),
            Instruction::End => "end".into(),
            Instruction::Break => "break".into(),
            Instruction::Emit => "emit".into(),
            Instruction::BreakC { cond } => format!("breakc {}", cond_text(cond)),
            Instruction::Call { dest, num } => format!("call {}", self.proc_ref(dest, num)),
            Instruction::CallC { cond, dest, num } => {
                format!("callc {}, {}", cond_text(cond), self.proc_ref(dest, num))
            }
            Instruction::CallU { b, dest, num } => {
                format!("callu b{b}, {}", self.proc_ref(dest, num))
            }
            Instruction::IfC { cond, dest, num } => {
                format!("ifc {}, @0x{dest:03x}, {num}", cond_text(cond))
            }
            Instruction::IfU { b, dest, num } => format!("ifu b{b}, @0x{dest:03x}, {num}"),
            Instruction::Loop { i, dest } => format!("for i{i}, @0x{dest:03x}"),
            Instruction::JmpC { cond, dest } => {
                format!("jmpc {}, {}", cond_text(cond), self.label_ref(dest))
            }
            Instruction::JmpU { b, dest, invert } => format!(
                "jmpu {}b{b}, {}",
                if invert { "!" } else { "" },
                self.label_ref(dest)
            ),
            Instruction::SetEmit {
                vtx,
                primitive,
                winding,
            } => {
                let mut s = format!("setemit {vtx}");
                match (primitive, winding) {
                    (true, true) => s.push_str(", prim inv"),
                    (true, false) => s.push_str(", prim"),
                    (false, true) => s.push_str(", inv"),
                    (false, false) => {}
                }
                s
            }
        };
        (text, comment)
    }

    fn arith_leaf(&mut self, a: u32, w: u32, ins: &Instruction) -> (String, String) {
        let comment = format!("{a:03x}");
        let desc = ins.desc().unwrap_or(0) as usize;
        let Some(&value) = self.table.get(desc) else {
            if !self.level.pinned() {
                self.failed = true;
            }
            return self.word_line(a, w);
        };
        let Some(text) = arith_text(ins, OperandDesc(value), self.level.pinned()) else {
            if !self.level.pinned() {
                self.failed = true;
            }
            return self.word_line(a, w);
        };
        if !self.level.pinned() {
            return (text, comment);
        }
        let text = format!("{text} desc={desc}");
        let ctx = CheckCtx {
            geometry: self.code_geometry,
            table: self.table,
        };
        if check_line(&text, &ctx) == Some(w) {
            (text, comment)
        } else {
            self.word_line(a, w)
        }
    }

    // -----------------------------------------------------------------------------------------
    // Metadata

    fn entry_line(&self, d: &Dvle) -> String {
        match self
            .proc_by_range
            .get(&(d.main, d.endmain.wrapping_sub(d.main)))
        {
            Some(name) if self.level.structured() && d.endmain >= d.main => {
                format!(".entry {name}")
            }
            _ => format!(".entry @0x{:03x}, @0x{:03x}", d.main, d.endmain),
        }
    }

    fn meta_raw(&mut self, _k: usize, d: &Dvle, _has_code: bool) {
        let kind = match d.kind {
            ShaderKind::Vertex => "vertex",
            ShaderKind::Geometry => "geometry",
        };
        let gs = u32::from_le_bytes(d.gs_raw);
        let _ = writeln!(
            self.out,
            ".dvleheader kind={kind} version=0x{:04x} merge={} inputs=0x{:04x} outputs=0x{:04x} gs=0x{gs:08x}",
            d.version,
            u8::from(d.merge_outmaps),
            d.input_mask,
            d.output_mask,
        );
        let e = self.entry_line(d);
        self.line(0, &e);
        for u in &d.uniforms {
            let _ = writeln!(
                self.out,
                ".uniform {}, {}, {}",
                quote(&u.name),
                unified_text(u.first),
                unified_text(u.last)
            );
        }
        for o in &d.outputs {
            let _ = writeln!(self.out, ".output 0x{:016x}", o.to_raw());
        }
        for c in &d.constants {
            let line = constraw(c);
            self.line(0, &line);
        }
        for l in &d.labels {
            let _ = writeln!(self.out, "{}", dvlelabel(l));
        }
    }

    fn meta_clean(&mut self, _k: usize, d: &Dvle, has_code: bool) {
        let mut header: Vec<String> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        let geometry = d.kind == ShaderKind::Geometry;
        // Geometry-shader mode.
        let lowest_c = d
            .uniforms
            .iter()
            .filter(|u| (0x10..0x70).contains(&u.first))
            .map(|u| u32::from(u.first - 0x10))
            .min();
        let mut gs_space_first: Option<u32> = None;
        let mut computed_gs = [0u8; 4];
        if geometry {
            let raw = d.gs_raw;
            let spec = match raw[0] {
                0 => {
                    let f = lowest_c.unwrap_or(0);
                    computed_gs = [0, 0, 0, 0];
                    Some((format!(".gsh point c{f}"), f))
                }
                1 => {
                    let f = lowest_c.unwrap_or(0);
                    computed_gs = [1, 0, raw[2], 0];
                    Some((format!(".gsh variable c{f} {}", raw[2]), f))
                }
                2 if raw[1] < 95 => {
                    let arr = u32::from(raw[1]);
                    let f = lowest_c.filter(|&c| c > arr).unwrap_or(arr + 1);
                    computed_gs = [2, raw[1], 0, raw[3]];
                    Some((format!(".gsh fixed c{f} c{arr} {}", raw[3]), f))
                }
                _ => None,
            };
            match spec {
                Some((text, f)) => {
                    lines.push(text);
                    gs_space_first = Some(f);
                }
                None => {
                    lines.push(".gsh".into());
                    computed_gs = [0; 4];
                }
            }
        }
        if self.lock_vertex && has_code && !geometry {
            header.push("kind=vertex".into());
        }
        // Uniforms.
        let mut computed_inputs = 0u16;
        match self.clean_uniforms(d, gs_space_first, geometry) {
            Some((ls, inputs)) => {
                lines.extend(ls);
                computed_inputs = inputs;
            }
            None => {
                for u in &d.uniforms {
                    lines.push(format!(
                        ".uniform {}, {}, {}",
                        quote(&u.name),
                        unified_text(u.first),
                        unified_text(u.last)
                    ));
                }
            }
        }
        // Outputs.
        let max_out = if geometry { 7 } else { 16 };
        let mut used = 0u64;
        let mut computed_outputs = 0u16;
        let mut computed_merge = false;
        for o in &d.outputs {
            let name = o.semantic.picasso_name();
            let bits = u64::from(o.mask) << (4 * u32::from(o.reg.min(15)));
            let ok = name.is_some()
                && o.unknown_bits == 0
                && o.mask != 0
                && o.reg < max_out
                && (o.reg < 7 || o.semantic == OutputSemantic::Dummy)
                && used & bits == 0;
            match (ok, name) {
                (true, Some(name)) => {
                    used |= bits;
                    computed_outputs |= 1 << o.reg;
                    if o.semantic == OutputSemantic::Dummy && gs_space_first.is_some() {
                        computed_merge = true;
                    }
                    let mask = if o.mask == 0xF {
                        String::new()
                    } else {
                        let mut m = String::from(".");
                        for (i, c) in ['x', 'y', 'z', 'w'].iter().enumerate() {
                            if o.mask & (1 << i) != 0 {
                                m.push(*c);
                            }
                        }
                        m
                    };
                    lines.push(format!(".out - {name} o{}{mask}", o.reg));
                }
                _ => lines.push(format!(".output 0x{:016x}", o.to_raw())),
            }
        }
        // Constants.
        for c in &d.constants {
            lines.push(match *c {
                Constant::FVec { reg, value } if reg < 96 => format!(
                    ".setf c{reg}({}, {}, {}, {})",
                    f24_text(value[0]),
                    f24_text(value[1]),
                    f24_text(value[2]),
                    f24_text(value[3])
                ),
                Constant::IVec { reg, value } if reg < 4 => format!(
                    ".seti i{reg}({}, {}, {}, {})",
                    value[0], value[1], value[2], value[3]
                ),
                Constant::Bool { reg, value } if reg < 16 => format!(".setb b{reg} {value}"),
                _ => constraw(c),
            });
        }
        for l in &d.labels {
            lines.push(dvlelabel(l));
        }
        // Header fields the directives above do not produce.
        if d.version != crate::pica::shbin::PICASSO_DVLE_VERSION {
            header.push(format!("version=0x{:04x}", d.version));
        }
        if d.merge_outmaps != computed_merge {
            header.push(format!("merge={}", u8::from(d.merge_outmaps)));
        }
        if d.input_mask != computed_inputs {
            header.push(format!("inputs=0x{:04x}", d.input_mask));
        }
        if d.output_mask != computed_outputs {
            header.push(format!("outputs=0x{:04x}", d.output_mask));
        }
        let gs_expected = if geometry { computed_gs } else { [0; 4] };
        if d.gs_raw != gs_expected {
            header.push(format!("gs=0x{:08x}", u32::from_le_bytes(d.gs_raw)));
        }
        // Output order: .gsh first (it must precede declarations), then the header overrides
        // (a kind lock must precede the code), then the rest.
        let mut it = lines.into_iter();
        if geometry {
            if let Some(g) = it.next() {
                self.line(0, &g);
            }
        }
        if !header.is_empty() {
            let _ = writeln!(self.out, ".dvleheader {}", header.join(" "));
        }
        for l in it {
            self.line(0, &l);
        }
        let e = self.entry_line(d);
        self.line(0, &e);
    }

    /// `.in`/`.fvec`/`.ivec`/`.bool` lines reproducing the uniform table, with hidden `_gapN`
    /// uniforms to skip registers; `None` if picasso's allocation cannot produce it.
    fn clean_uniforms(
        &mut self,
        d: &Dvle,
        gs_first: Option<u32>,
        geometry: bool,
    ) -> Option<(Vec<String>, u16)> {
        let us = &d.uniforms;
        if us.windows(2).any(|w| w[0].first > w[1].first) {
            return None;
        }
        let mut lines = Vec::new();
        let mut inputs = 0u16;
        let mut seen: HashSet<String> = HashSet::new();
        let mut shared = self.shared.clone();
        let use_shared = !geometry || gs_first.is_none();
        let mut local_next = [gs_first.unwrap_or(0), 0, 0];
        let mut gap = self.gap_counter;
        for u in us {
            let name = source_name(&u.name)?;
            if !seen.insert(name.clone()) {
                return None;
            }
            if u.last < u.first {
                return None;
            }
            if u.first < 0x10 {
                if u.last != u.first {
                    return None;
                }
                inputs |= 1 << u.first;
                lines.push(format!(".in {name} v{}", u.first));
                continue;
            }
            let (ty, base, limit) = match u.first {
                0x10..=0x6F => (0usize, 0x10u16, 96u32),
                0x70..=0x73 => (1, 0x70, 4),
                0x78..=0x87 => (2, 0x78, if use_shared { 16 } else { 15 }),
                _ => return None,
            };
            let pos = u32::from(u.first - base);
            let size = u32::from(u.last - u.first) + 1;
            if pos + size > limit {
                return None;
            }
            let dir = [".fvec", ".ivec", ".bool"][ty];
            let decl = |n: &str, s: u32| {
                if s == 1 {
                    format!("{dir} {n}")
                } else {
                    format!("{dir} {n}[{s}]")
                }
            };
            if use_shared {
                if let Some(&(t, p, s)) = shared.table.get(&name) {
                    if (t, p, s) != (ty, pos, size) {
                        return None;
                    }
                    lines.push(decl(&name, size));
                    continue;
                }
            }
            let next = if use_shared {
                &mut shared.next[ty]
            } else {
                &mut local_next[ty]
            };
            if pos < *next {
                return None;
            }
            if pos > *next {
                let gname = format!("_gap{gap}");
                gap += 1;
                let gsize = pos - *next;
                if use_shared {
                    shared.table.insert(gname.clone(), (ty, *next, gsize));
                }
                lines.push(decl(&gname, gsize));
                let next = if use_shared {
                    &mut shared.next[ty]
                } else {
                    &mut local_next[ty]
                };
                *next = pos;
            }
            let next = if use_shared {
                &mut shared.next[ty]
            } else {
                &mut local_next[ty]
            };
            *next = pos + size;
            if use_shared {
                shared.table.insert(name.clone(), (ty, pos, size));
            }
            lines.push(decl(&name, size));
        }
        if use_shared {
            self.shared = shared;
        }
        self.gap_counter = gap;
        Some((lines, inputs))
    }
}

/// The source identifier for a uniform-table name (`.` written as `$`), if there is one.
fn source_name(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with('_') || name.contains('$') {
        return None;
    }
    let s = name.replace('.', "$");
    let mut chars = s.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '$') {
        return None;
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
        return None;
    }
    if super::parser::split_register(&s).is_some() {
        return None;
    }
    Some(s)
}

fn unified_text(r: u16) -> String {
    crate::pica::shbin::register_name(r).unwrap_or_else(|| format!("0x{r:x}"))
}

fn constraw(c: &Constant) -> String {
    let p = c.payload();
    let w = |i: usize| u32::from_le_bytes([p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]]);
    format!(
        ".constraw {}, {}, 0x{:08x}, 0x{:08x}, 0x{:08x}, 0x{:08x}",
        c.ty(),
        c.reg(),
        w(0),
        w(1),
        w(2),
        w(3)
    )
}

/// Does the literal `text` assemble to exactly the float24 `bits`?
fn literal_gives(text: &str, bits: u32) -> bool {
    let lower = text.to_ascii_lowercase();
    let x = match lower.trim_start_matches('-') {
        "nan" => f32::NAN,
        "inf" => f32::INFINITY,
        _ => match text.parse::<f32>() {
            Ok(x) => x,
            Err(_) => return false,
        },
    };
    let x = if lower.starts_with('-') && (x.is_nan() || x.is_infinite()) {
        -x
    } else {
        x
    };
    bits <= 0xFF_FFFF && F24::from_f32(x, Rounding::TowardZero).bits() == bits
}

/// The shortest decimal literal that the assembler turns back into exactly these float24 bits
/// (so picasso's `0.1`, stored as 0x3B9999, prints as `0.1` again), or the raw `f24(0x…)`
/// form for patterns no literal produces (subnormal patterns, NaN payloads).
pub(crate) fn f24_text(bits: u32) -> String {
    let f = F24::from_bits(bits);
    let x = f.to_f32();
    let special = if x.is_nan() {
        Some("nan".to_string())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "inf" } else { "-inf" }.to_string())
    } else if x == 0.0 {
        Some(if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_string())
    } else {
        None
    };
    if let Some(t) = special {
        return if literal_gives(&t, bits) {
            t
        } else {
            format!("f24(0x{bits:06x})")
        };
    }
    // Every f32 in [|v|, |v| + ulp) truncates to |v|; try the decimal renderings of the middle
    // of that interval with more and more significant digits.
    let mag = f64::from(x.abs());
    let ulp = 2f64.powi(f.exponent_field() as i32 - 63 - 16);
    let mid = mag + ulp / 2.0;
    let sign = if x < 0.0 { "-" } else { "" };
    for digits in 1..=9 {
        let Ok(d) = format!("{:.*e}", digits - 1, mid).parse::<f64>() else {
            continue;
        };
        let body = if (1e-5..1e16).contains(&d) {
            let t = format!("{d}");
            if t.contains('.') {
                t
            } else {
                format!("{t}.0")
            }
        } else {
            format!("{d:e}")
        };
        let text = format!("{sign}{body}");
        if literal_gives(&text, bits) {
            return text;
        }
    }
    let text = format!("{x:?}");
    if literal_gives(&text, bits) {
        text
    } else {
        format!("f24(0x{bits:06x})")
    }
}

fn swizzle_text(s: Swizzle) -> String {
    if s == Swizzle::IDENTITY {
        return String::new();
    }
    let lanes = s.lanes();
    let letters = ['x', 'y', 'z', 'w'];
    // Shortest prefix that expands (repeating its last letter) to the full selector.
    let mut k = 4;
    while k > 1 && lanes[k - 1] == lanes[k - 2] {
        k -= 1;
    }
    let mut out = String::from(".");
    for &l in &lanes[..k] {
        out.push(letters[l as usize & 3]);
    }
    out
}

fn src_text(neg: bool, reg: SrcReg, rel: RelIndex, swz: Swizzle) -> String {
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    let _ = write!(s, "{reg}");
    if let Some(name) = rel.name() {
        let _ = write!(s, "[{name}]");
    }
    s.push_str(&swizzle_text(swz));
    s
}

fn mask_text(mask: u8) -> Option<String> {
    match mask & 0xF {
        0 => None,
        0xF => Some(String::new()),
        m => {
            let mut s = String::from(".");
            for (i, c) in ['x', 'y', 'z', 'w'].iter().enumerate() {
                if m & (8 >> i) != 0 {
                    s.push(*c);
                }
            }
            Some(s)
        }
    }
}

/// picasso text for an arithmetic instruction given its descriptor. `literal` keeps the exact
/// mnemonic (dphi, madi) for pinned instructions; otherwise the base mnemonic is used and the
/// assembler's I-form selection is relied on.
fn arith_text(ins: &Instruction, d: OperandDesc, literal: bool) -> Option<String> {
    let mn = |op: Opcode| {
        if literal {
            op.mnemonic()
        } else {
            op.base().mnemonic()
        }
    };
    let ops = ins.operands()?;
    let src = |n: usize| src_text(d.neg(n), ops.src[n], ops.rel[n], d.swizzle(n));
    Some(match (*ins, ops.dst) {
        (Instruction::Cmp { x, y, .. }, _) => {
            format!("cmp {}, {}, {}, {}", src(0), x.name(), y.name(), src(1))
        }
        (_, Some(dst)) => {
            let mut text = format!("{} {dst}{}", mn(ops.op), mask_text(d.mask().0)?);
            for n in 0..ops.op.sources() {
                text.push_str(", ");
                text.push_str(&src(n));
            }
            text
        }
        // MOVA, the one instruction without a register destination or flags.
        (_, None) => {
            let m = d.mask().0;
            let lanes = match (m & 8 != 0, m & 4 != 0) {
                (true, true) => "xy",
                (true, false) => "x",
                (false, true) => "y",
                (false, false) => return None,
            };
            format!("mova a0.{lanes}, {}", src(0))
        }
    })
}

/// The `.dvlelabel` directive of `l`.
fn dvlelabel(l: &Label) -> String {
    format!(
        ".dvlelabel {}, {}, 0x{:x}, 0x{:x}, {}",
        l.id,
        l.unknown,
        l.offset,
        l.size,
        quote(&l.name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzles() {
        assert_eq!(swizzle_text(Swizzle::IDENTITY), "");
        assert_eq!(swizzle_text(Swizzle::from_lanes([0, 0, 0, 0])), ".x");
        assert_eq!(swizzle_text(Swizzle::from_lanes([0, 1, 1, 1])), ".xy");
        assert_eq!(swizzle_text(Swizzle::from_lanes([3, 2, 1, 0])), ".wzyx");
        assert_eq!(swizzle_text(Swizzle::from_lanes([0, 1, 2, 2])), ".xyz");
    }

    #[test]
    fn floats() {
        for bits in [
            0x3F0000, 0x800000, 0, 0x7F0000, 0xFF0000, 0x7FFFFF, 0x3F5555, 0x000001, 0xFFFFFF,
        ] {
            let t = f24_text(bits);
            assert!(!t.is_empty(), "{bits:x}");
        }
        assert_eq!(f24_text(0x3F0000), "1.0");
        assert_eq!(f24_text(0x3B9999), "0.1");
        assert_eq!(f24_text(0xBF0000), "-1.0");
        assert_eq!(f24_text(0x800000), "-0.0");
        assert_eq!(f24_text(0x7F0000), "inf");
        for bits in (0..0x100_0000u32).step_by(4099) {
            let t = f24_text(bits);
            assert!(
                t.starts_with("f24(") || literal_gives(&t, bits),
                "{bits:x} {t}"
            );
        }
        assert_eq!(f24_text(0x000001), "f24(0x000001)");
        assert_eq!(f24_text(0x7FFFFF), "nan");
        assert_eq!(f24_text(0xFFFFFF), "f24(0xffffff)");
    }
}
