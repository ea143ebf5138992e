//! From parsed statements to a [`Shbin`]: register resolution, I-form selection, operand
//! descriptor allocation and sharing, blocks and padding NOPs, procedures and labels, uniform
//! and constant allocation, and the DVLE tables.

use super::lexer::{lex_file, FileNames, LineLexer, Loc};
use super::parser::{
    parse_line, split_register, Body, Directive, DvlpOverrides, EntrySpec, GshSpec,
    HeaderOverrides, IndexSpec, Insn, InsnKind, Name, Operand, Stmt, Target, UType,
};
use super::MAX_SOURCE_BYTES;
use super::{AsmError, AsmWarning, SourceFile};
use crate::pica::shbin::{
    decode_gs_mode, Constant, Dvle, DvlpInfo, GsInputMode, Label, Output, OutputSemantic,
    ShaderKind, Shbin, Uniform,
};
use picajit_interp::pica::isa::{
    encode, DstReg, Format, Instruction, Opcode, OperandDesc, RelIndex, SrcReg, Swizzle, WriteMask,
};
use std::collections::HashMap;

/// Most errors reported before giving up.
const MAX_ERRORS: usize = 100;
/// Most warnings kept (then one that counts the rest), so that memory stays bounded.
const MAX_WARNINGS: usize = 1000;
/// picasso's block nesting limit.
const MAX_NESTING: usize = 32;
/// Vertex program memory, which picasso enforces.
const VSH_MAX_WORDS: usize = 512;
/// Program memory.
const MAX_WORDS: usize = 4096;
/// Operand-descriptor table size.
const MAX_DESCS: usize = 128;
/// picasso's per-DVLE limits.
const MAX_UNIFORMS: usize = 0x60;
const MAX_CONSTANTS: usize = 0x60;
const MAX_OUTPUTS: usize = 16;
/// The padding word.
pub(crate) const NOP_WORD: u32 = (Opcode::Nop as u32) << 26;

// ---------------------------------------------------------------------------------------------
// Registers

/// Register files as the assembler names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegFile {
    O,
    V,
    R,
    C,
    I,
    B,
}

impl RegFile {
    fn from_prefix(c: char) -> Option<RegFile> {
        Some(match c {
            'o' => RegFile::O,
            'v' => RegFile::V,
            'r' => RegFile::R,
            'c' => RegFile::C,
            'i' => RegFile::I,
            'b' => RegFile::B,
            _ => return None,
        })
    }
    fn count(self) -> i64 {
        match self {
            RegFile::C => 96,
            RegFile::I => 4,
            _ => 16,
        }
    }
    fn prefix(self) -> char {
        match self {
            RegFile::O => 'o',
            RegFile::V => 'v',
            RegFile::R => 'r',
            RegFile::C => 'c',
            RegFile::I => 'i',
            RegFile::B => 'b',
        }
    }
    fn range(self) -> String {
        format!("{p}0-{p}{}", self.count() - 1, p = self.prefix())
    }
}

/// What an alias stands for.
#[derive(Clone, Copy, Debug)]
struct AliasVal {
    file: RegFile,
    index: i64,
    lanes: [u8; 4],
    neg: bool,
}

/// A resolved register operand.
#[derive(Clone, Copy, Debug)]
struct Res {
    file: RegFile,
    index: u8,
    lanes: [u8; 4],
    neg: bool,
    rel: RelIndex,
    loc: Loc,
    /// Number of swizzle letters written at the use site (0 = none).
    letters: usize,
}

impl Res {
    fn name(&self) -> String {
        format!("{}{}", self.file.prefix(), self.index)
    }
    fn src(&self) -> Option<SrcReg> {
        match self.file {
            RegFile::V => Some(SrcReg::Input(self.index)),
            RegFile::R => Some(SrcReg::Temp(self.index)),
            RegFile::C => Some(SrcReg::Const(self.index)),
            _ => None,
        }
    }
    fn swizzle(&self) -> Swizzle {
        Swizzle::from_lanes(self.lanes)
    }
    /// Lanes named by the swizzle as a write mask (descriptor order, bit 3 = x).
    fn mask(&self) -> u8 {
        self.lanes.iter().fold(0, |m, &l| m | (8 >> l))
    }
}

/// Parse swizzle letters (`xyzw`, `rgba`, `stpq`; 1-4 letters, the last one repeated).
fn swizzle_lanes(letters: &str) -> Option<[u8; 4]> {
    let chars: Vec<char> = letters.chars().collect();
    if chars.is_empty() || chars.len() > 4 {
        return None;
    }
    let mut lanes = [0u8; 4];
    let mut last = 0;
    for (i, lane) in lanes.iter_mut().enumerate() {
        if let Some(&c) = chars.get(i) {
            last = match c.to_ascii_lowercase() {
                'x' | 'r' | 's' => 0,
                'y' | 'g' | 't' => 1,
                'z' | 'b' | 'p' => 2,
                'w' | 'a' | 'q' => 3,
                _ => return None,
            };
        }
        *lane = last;
    }
    Some(lanes)
}

// ---------------------------------------------------------------------------------------------
// Descriptor masks

const DEST_BITS: u64 = 0xF;

fn src_bits(s: usize) -> u64 {
    0x1FF << (4 + 9 * s)
}

fn neg_bit(s: usize) -> u64 {
    1 << (4 + 9 * s)
}

fn lane_bits(s: usize, lane: usize) -> u64 {
    3 << (4 + 9 * s + 1 + (6 - 2 * lane))
}

/// Lane-wise operations: each source component is read only where the write mask writes
/// (the opcode table's read masks).
fn is_per_lane(op: Opcode) -> bool {
    op.sources() > 0 && op.reads(0, 0) == 0 && op.reads(0, 0xF) == 0xF
}

/// Descriptor bits picasso compares when sharing descriptors (`op` is the base opcode, `mask`
/// the destination mask, `nsrc` the number of sources). Lanes outside are free to differ.
pub(crate) fn picasso_care(op: Opcode, mask: u8, nsrc: usize) -> u64 {
    let op = op.base();
    let mut care = if op == Opcode::Cmp { 0 } else { DEST_BITS };
    for s in 0..nsrc {
        care |= src_bits(s);
    }
    let lane_on = |l: usize| mask & (8 >> l) != 0;
    let mut clear = |s: usize, l: usize| care &= !lane_bits(s, l);
    match op {
        op if is_per_lane(op) => {
            for l in (0..4).filter(|&l| !lane_on(l)) {
                for s in 0..nsrc {
                    clear(s, l);
                }
            }
        }
        Opcode::Dp3 => {
            clear(0, 3);
            clear(1, 3);
        }
        Opcode::Dph => clear(0, 3),
        Opcode::Ex2 | Opcode::Lg2 | Opcode::Rcp | Opcode::Rsq => {
            for l in 1..4 {
                clear(0, l);
            }
        }
        Opcode::Mova => {
            if !lane_on(0) {
                clear(0, 0);
            }
            if !lane_on(1) {
                clear(0, 1);
            }
            clear(0, 2);
            clear(0, 3);
        }
        Opcode::Cmp => {
            clear(0, 2);
            clear(0, 3);
        }
        _ => {}
    }
    care
}

/// Descriptor bits the hardware actually reads for this instruction (a subset of
/// [`picasso_care`]). Pinned instructions must agree with their descriptor on these.
pub(crate) fn hw_care(op: Opcode, mask: u8, nsrc: usize) -> u64 {
    let op = op.base();
    // The components each source reads, from the opcode table (bit c = component c).
    let write = WriteMask(mask).components();
    let used = [0, 1, 2].map(|s| {
        let reads = if s < nsrc { op.reads(s, write) } else { 0 };
        [0, 1, 2, 3].map(|c| reads & (1 << c) != 0)
    });
    let mut care = match op {
        Opcode::Cmp => 0,
        Opcode::Mova => 0xC,
        _ => DEST_BITS,
    };
    for (s, lanes) in used.iter().enumerate() {
        for (l, &u) in lanes.iter().enumerate() {
            if u {
                care |= lane_bits(s, l) | neg_bit(s);
            }
        }
    }
    care
}

// ---------------------------------------------------------------------------------------------
// Uniform allocation (picasso's model)

/// One register file's allocator: globals grow up from `start`, this file's constants grow down
/// from `end`; `bound` is the lowest constant ever allocated, which globals may not reach.
#[derive(Clone, Copy, Debug)]
struct Alloc {
    start: u32,
    end: u32,
    bound: u32,
    top: u32,
}

impl Alloc {
    fn new(start: u32, end: u32) -> Alloc {
        Alloc {
            start,
            end,
            bound: end,
            top: end,
        }
    }
    fn global(&mut self, size: u32) -> Option<u32> {
        if self.start + size > self.bound {
            return None;
        }
        let r = self.start;
        self.start += size;
        Some(r)
    }
    fn local(&mut self, size: u32) -> Option<u32> {
        let pos = self.end.checked_sub(size)?;
        if pos < self.start {
            return None;
        }
        self.bound = self.bound.min(pos);
        self.end = pos;
        Some(pos)
    }
    fn clear_local(&mut self) {
        self.end = self.top;
    }
}

#[derive(Clone, Copy, Debug)]
struct Allocs {
    fvec: Alloc,
    ivec: Alloc,
    bool_: Alloc,
}

impl Allocs {
    fn shared() -> Allocs {
        Allocs {
            fvec: Alloc::new(0, 96),
            ivec: Alloc::new(0, 4),
            bool_: Alloc::new(0, 16),
        }
    }
    fn gsh(first_free: u32) -> Allocs {
        Allocs {
            fvec: Alloc::new(first_free, 96),
            ivec: Alloc::new(0, 4),
            // b15 is set by the hardware after each geometry shader invocation.
            bool_: Alloc::new(0, 15),
        }
    }
    fn get(&mut self, ty: UType) -> &mut Alloc {
        match ty {
            UType::Float => &mut self.fvec,
            UType::Int => &mut self.ivec,
            UType::Bool => &mut self.bool_,
        }
    }
}

fn utype_file(ty: UType) -> RegFile {
    match ty {
        UType::Float => RegFile::C,
        UType::Int => RegFile::I,
        UType::Bool => RegFile::B,
    }
}

/// Unified uniform-table index of register `index` of `file`.
fn unified(file: RegFile, index: u32) -> u16 {
    let base = match file {
        RegFile::V | RegFile::O => 0x00,
        RegFile::C => 0x10,
        RegFile::I => 0x70,
        RegFile::R | RegFile::B => 0x78,
    };
    (base + index) as u16
}

// ---------------------------------------------------------------------------------------------
// State

#[derive(Clone, Debug)]
enum DescTable {
    /// picasso's automatic table: (value, bits some user cares about), and which slots hold MAD
    /// descriptors.
    Auto { entries: Vec<(u64, u64)>, mad: u32 },
    /// Given by `.opdesc`.
    Explicit(Vec<u64>),
}

impl DescTable {
    fn values(&self) -> Vec<u64> {
        match self {
            DescTable::Auto { entries, .. } => entries.iter().map(|e| e.0).collect(),
            DescTable::Explicit(t) => t.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum BlockKind {
    Proc(String),
    If { else_pos: Option<u32> },
    For,
    Array,
}

#[derive(Clone, Debug)]
struct Block {
    kind: BlockKind,
    pos: u32,
    loc: Loc,
}

#[derive(Clone, Debug)]
struct ArrayState {
    name: Name,
    size: Option<i64>,
    elems: Vec<[u32; 4]>,
}

#[derive(Debug, Default)]
struct UnitState {
    loc: Loc,
    nodvle: bool,
    geo: bool,
    compat: bool,
    kind_lock: Option<ShaderKind>,
    gs_bytes: [u8; 4],
    entry: Option<(EntrySpec, Loc)>,
    input_mask: u16,
    output_mask: u16,
    output_used: u64,
    merge: bool,
    uniforms: Vec<Uniform>,
    raw_uniforms: Vec<Uniform>,
    constants: Vec<Constant>,
    outputs: Vec<Output>,
    dvle_labels: Vec<Label>,
    header: HeaderOverrides,
    labels: HashMap<String, u32>,
    label_relocs: Vec<(usize, Name)>,
    aliases: HashMap<String, AliasVal>,
    nonop: bool,
    array: Option<ArrayState>,
    reported_vsh_limit: bool,
    gsh_allocs: Option<Allocs>,
}

impl UnitState {
    fn is_geometry(&self) -> bool {
        match self.kind_lock {
            Some(k) => k == ShaderKind::Geometry,
            None => self.geo,
        }
    }
    fn uses_gsh_space(&self) -> bool {
        self.geo && !self.compat && self.gsh_allocs.is_some()
    }
    fn max_output(&self) -> u8 {
        if self.is_geometry() {
            7
        } else {
            16
        }
    }
}

struct PendingDvle {
    state: UnitState,
}

/// Context for checking one instruction in isolation (used by the disassembler).
pub(crate) struct CheckCtx<'a> {
    pub geometry: bool,
    pub table: &'a [u64],
}

pub(crate) struct Assembler {
    names: FileNames,
    errors: Vec<AsmError>,
    warnings: Vec<AsmWarning>,
    warnings_dropped: usize,
    code: Vec<u32>,
    /// Per code word: whether its 7-bit descriptor field follows descriptor swaps.
    desc_refs: Vec<bool>,
    table: DescTable,
    procs: HashMap<String, (u32, u32)>,
    proc_relocs: Vec<(usize, Name)>,
    shared: Allocs,
    shared_table: HashMap<String, (UType, u32, u32)>,
    shared_count: usize,
    dvles: Vec<PendingDvle>,
    unit: UnitState,
    stack: Vec<Block>,
    last_was_end: bool,
    dvlp: DvlpOverrides,
}

type R<T> = Result<T, AsmError>;

/// Case-insensitive substring test on raw line text (`.opdesc` is found before tokenizing).
fn mentions(raw: &str, word: &str) -> bool {
    raw.as_bytes()
        .windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
}

/// Assemble `files`, streaming: each line is tokenized, parsed and assembled before the next
/// one is read, so memory does not grow with the source beyond what the program keeps (code,
/// labels, names; `benches/asm_memory.rs` measures it). A first pass reads only the lines
/// that mention `.opdesc`, because an explicit descriptor table anywhere changes how every
/// instruction is encoded.
pub(crate) fn assemble_files(
    files: &[SourceFile],
) -> Result<(Shbin, Vec<AsmWarning>), Vec<AsmError>> {
    let total: usize = files.iter().map(|f| f.text.len()).sum();
    if total > MAX_SOURCE_BYTES {
        let mut names = FileNames::default();
        let file = names.intern(files.first().map_or("", |f| f.name));
        return Err(vec![names.error(
            Loc {
                file,
                line: 1,
                col: 1,
            },
            format!(
                "the source is {total} bytes; the assembler accepts at most {MAX_SOURCE_BYTES} \
                 (a real program is far smaller)"
            ),
        )]);
    }
    let mut names = FileNames::default();
    let mut errors = Vec::new();
    let mut explicit: Option<Vec<u64>> = None;
    for f in files {
        let mut lines = LineLexer::new(f.name, f.text, &mut names);
        while let Some(r) = lines.next(&mut names, |raw| mentions(raw, "opdesc")) {
            // Lexical and syntax errors are reported by the second pass.
            let Ok(line) = r else { continue };
            let Ok(stmt) = parse_line(&line) else {
                continue;
            };
            if let Some(Body::Dir(Directive::OpDesc(v), loc)) = &stmt.body {
                let t = explicit.get_or_insert_with(Vec::new);
                t.extend_from_slice(v);
                if t.len() > MAX_DESCS {
                    errors.push(
                        names.error(*loc, format!("more than {MAX_DESCS} operand descriptors")),
                    );
                }
            }
        }
    }
    let table = match explicit {
        Some(t) => DescTable::Explicit(t),
        None => DescTable::Auto {
            entries: Vec::new(),
            mad: 0,
        },
    };
    let mut asm = Assembler::new(names, table);
    asm.errors = errors;
    'files: for f in files {
        let mut lines = LineLexer::new(f.name, f.text, &mut asm.names);
        let first = Loc {
            file: asm.names.intern(f.name),
            line: 1,
            col: 1,
        };
        asm.begin_unit(first);
        let mut any = false;
        while let Some(r) = lines.next(&mut asm.names, |_| true) {
            if asm.errors.len() >= MAX_ERRORS {
                break 'files;
            }
            let stmt = match r.map(|line| parse_line(&line)) {
                Ok(Ok(stmt)) => stmt,
                Ok(Err((loc, msg))) => {
                    let e = asm.err(loc, msg);
                    asm.errors.push(e);
                    continue;
                }
                Err(e) => {
                    asm.errors.push(e);
                    continue;
                }
            };
            if let Some(Body::Dir(Directive::Unit, loc)) = &stmt.body {
                if !stmt.labels.is_empty() {
                    asm.statement(&Stmt {
                        loc: stmt.loc,
                        labels: stmt.labels.clone(),
                        body: None,
                        notes: Vec::new(),
                    });
                    any = true;
                }
                if asm.errors.len() >= MAX_ERRORS {
                    break 'files;
                }
                asm.end_unit(any);
                asm.begin_unit(*loc);
                any = false;
                continue;
            }
            asm.statement(&stmt);
            any = true;
        }
        if asm.errors.len() >= MAX_ERRORS {
            break;
        }
        asm.end_unit(any);
    }
    let order = asm.names.clone();
    asm.finish().map_err(|mut errors| {
        // Report in source order (parse errors are found before the others).
        errors.sort_by_key(|e| (order.position(&e.file), e.line, e.column));
        errors
    })
}

/// Assemble one instruction line alone in a procedure of a unit of the given kind, with an
/// explicit descriptor table; `Some(word)` if it assembles to exactly one word without error.
pub(crate) fn check_line(text: &str, ctx: &CheckCtx) -> Option<u32> {
    let mut names = FileNames::default();
    let mut errors = Vec::new();
    let lines = lex_file("check", text, &mut names, &mut errors);
    if !errors.is_empty() || lines.len() != 1 {
        return None;
    }
    let stmt = parse_line(lines.first()?).ok()?;
    let mut asm = Assembler::new(names, DescTable::Explicit(ctx.table.to_vec()));
    asm.unit.kind_lock = Some(if ctx.geometry {
        ShaderKind::Geometry
    } else {
        ShaderKind::Vertex
    });
    asm.stack.push(Block {
        kind: BlockKind::Proc("check".into()),
        pos: 0,
        loc: Loc::default(),
    });
    asm.statement(&stmt);
    match (asm.errors.is_empty(), asm.code.as_slice(), &asm.table) {
        (true, [w], DescTable::Explicit(t)) if t.len() == ctx.table.len() => Some(*w),
        _ => None,
    }
}

impl Assembler {
    fn new(names: FileNames, table: DescTable) -> Assembler {
        Assembler {
            names,
            errors: Vec::new(),
            warnings: Vec::new(),
            warnings_dropped: 0,
            code: Vec::new(),
            desc_refs: Vec::new(),
            table,
            procs: HashMap::new(),
            proc_relocs: Vec::new(),
            shared: Allocs::shared(),
            shared_table: HashMap::new(),
            shared_count: 0,
            dvles: Vec::new(),
            unit: UnitState::default(),
            stack: Vec::new(),
            last_was_end: false,
            dvlp: DvlpOverrides::default(),
        }
    }

    fn err(&self, loc: Loc, msg: impl Into<String>) -> AsmError {
        self.names.error(loc, msg)
    }

    fn warn(&mut self, loc: Loc, msg: impl Into<String>) {
        if self.warnings.len() >= MAX_WARNINGS {
            self.warnings_dropped += 1;
            return;
        }
        self.warnings.push(AsmWarning {
            file: self.names.name(loc.file).to_string(),
            line: loc.line,
            column: loc.col,
            message: msg.into(),
        });
    }

    // -----------------------------------------------------------------------------------------
    // Units

    fn begin_unit(&mut self, loc: Loc) {
        self.unit = UnitState {
            loc,
            ..UnitState::default()
        };
        self.shared.fvec.clear_local();
        self.shared.ivec.clear_local();
        self.shared.bool_.clear_local();
    }

    /// Close the unit; `any` says whether it had a statement (an empty unit makes no DVLE).
    fn end_unit(&mut self, any: bool) {
        if let Some(b) = self.stack.first() {
            let what = match &b.kind {
                BlockKind::Proc(n) => format!("procedure `{n}` is not closed with .end"),
                BlockKind::If { .. } => "if block is not closed with .end".into(),
                BlockKind::For => "for block is not closed with .end".into(),
                BlockKind::Array => "constant array is not closed with .end".into(),
            };
            let e = self.err(b.loc, what);
            self.errors.push(e);
            self.stack.clear();
        }
        let relocs = std::mem::take(&mut self.unit.label_relocs);
        for (at, name) in relocs {
            match self.unit.labels.get(&name.text) {
                Some(&addr) if addr > 0xFFF => {
                    let e = self.err(
                        name.loc,
                        format!(
                            "label `{}` is at 0x{addr:x}, beyond a jump's reach (0xfff)",
                            name.text
                        ),
                    );
                    self.errors.push(e);
                }
                Some(&addr) => {
                    if let Some(w) = self.code.get_mut(at) {
                        *w = (*w & !(0xFFF << 10)) | addr << 10;
                    }
                }
                None => {
                    let e = self.err(
                        name.loc,
                        format!("label `{}` is not defined in this file", name.text),
                    );
                    self.errors.push(e);
                }
            }
        }
        if !self.unit.nodvle && any {
            let state = std::mem::take(&mut self.unit);
            self.dvles.push(PendingDvle { state });
        }
    }

    fn statement(&mut self, s: &Stmt) {
        for (loc, note) in &s.notes {
            self.warn(*loc, note.clone());
        }
        for l in &s.labels {
            if self.unit.labels.contains_key(&l.text) {
                let e = self.err(l.loc, format!("label `{}` is already defined", l.text));
                self.errors.push(e);
            } else {
                self.unit
                    .labels
                    .insert(l.text.clone(), self.code.len() as u32);
            }
        }
        let r = match &s.body {
            None => Ok(()),
            Some(Body::Dir(d, loc)) => self.directive(d, *loc),
            Some(Body::Ins(i)) => self.instruction(i),
        };
        if let Err(e) = r {
            self.errors.push(e);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Code emission

    /// Checks shared by every instruction statement (including `.word`).
    fn begin_instruction(&mut self, loc: Loc) -> R<()> {
        match self.stack.last() {
            None => return Err(self.err(loc, "instruction outside a .proc block")),
            Some(b) if b.kind == BlockKind::Array => {
                return Err(self.err(loc, "instruction inside a .constfa array"))
            }
            _ => {}
        }
        if !self.unit.is_geometry()
            && self.code.len() >= VSH_MAX_WORDS
            && !self.unit.reported_vsh_limit
        {
            self.unit.reported_vsh_limit = true;
            return Err(self.err(
                loc,
                format!(
                    "vertex shader code is limited to {VSH_MAX_WORDS} words (use a geometry shader file, or .nodvle with .gsh, for more)"
                ),
            ));
        }
        if self.code.len() >= MAX_WORDS {
            return Err(self.err(loc, format!("program exceeds {MAX_WORDS} words")));
        }
        self.last_was_end = false;
        Ok(())
    }

    fn emit(&mut self, word: u32, desc_ref: bool) -> usize {
        self.code.push(word);
        self.desc_refs.push(desc_ref);
        self.code.len() - 1
    }

    fn pad(&mut self, loc: Loc) {
        if self.unit.nonop {
            self.warn(
                loc,
                "a padding NOP is required here (not inserted because of .nonop)",
            );
        } else {
            self.emit(NOP_WORD, false);
        }
    }

    /// picasso's padding rule at `.end`/`.else` of a block opened at `pos`.
    fn pad_if_needed(&mut self, kind: &BlockKind, pos: u32, loc: Loc) {
        if self.last_was_end {
            self.pad(loc);
            self.last_was_end = false;
            return;
        }
        let p = self.code.len() as u32;
        let last_op = if p > 0 {
            self.code.get(p as usize - 1).map(|w| w >> 26)
        } else {
            None
        };
        let flow = matches!(last_op, Some(0x24 | 0x25 | 0x26 | 0x2C | 0x2D));
        let brk = *kind == BlockKind::For && matches!(last_op, Some(0x20 | 0x23));
        let min = if matches!(kind, BlockKind::Proc(_)) {
            1
        } else {
            2
        };
        if flow || brk || p - pos < min {
            self.pad(loc);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Operands

    fn check_name(&self, n: &Name) -> R<()> {
        if split_register(&n.text).is_some() {
            return Err(self.err(
                n.loc,
                format!(
                    "`{}` is a register name and cannot be used as a name",
                    n.text
                ),
            ));
        }
        if self.unit.aliases.contains_key(&n.text) {
            return Err(self.err(n.loc, format!("identifier `{}` is already used", n.text)));
        }
        Ok(())
    }

    fn resolve(&mut self, op: &Operand, allow_rel: bool) -> R<Res> {
        let base = match split_register(&op.name.text) {
            Some((p, idx)) => {
                let file =
                    RegFile::from_prefix(p).ok_or_else(|| self.err(op.name.loc, "bad register"))?;
                if i64::from(idx) >= file.count() {
                    return Err(self.err(
                        op.name.loc,
                        format!(
                            "register `{}` does not exist ({})",
                            op.name.text,
                            file.range()
                        ),
                    ));
                }
                AliasVal {
                    file,
                    index: i64::from(idx),
                    lanes: [0, 1, 2, 3],
                    neg: false,
                }
            }
            None => match self.unit.aliases.get(&op.name.text) {
                Some(a) => *a,
                None => {
                    return Err(self.err(
                        op.name.loc,
                        format!("unknown register or alias `{}`", op.name.text),
                    ))
                }
            },
        };
        let a = base;
        let mut index = a.index;
        let mut rel = RelIndex::None;
        if let Some((spec, iloc)) = &op.index {
            let off = match *spec {
                IndexSpec::Static(n) => n,
                IndexSpec::Rel { reg, offset } => {
                    if !allow_rel {
                        return Err(self.err(*iloc, "relative addressing is not allowed here"));
                    }
                    rel = reg;
                    offset
                }
            };
            index += off;
            if index < 0 || index >= a.file.count() {
                return Err(self.err(
                    *iloc,
                    format!(
                        "`{}` with offset {off} is outside {}",
                        op.name.text,
                        a.file.range()
                    ),
                ));
            }
            if rel != RelIndex::None && a.file != RegFile::C {
                self.warn(
                    *iloc,
                    "relative addressing only applies to c registers; the hardware ignores the index here",
                );
            }
        }
        let mut lanes = a.lanes;
        let mut letters = 0;
        if let Some(sw) = &op.swizzle {
            let use_lanes = swizzle_lanes(&sw.text).ok_or_else(|| {
                self.err(sw.loc, format!("invalid swizzle or mask `.{}`", sw.text))
            })?;
            letters = sw.text.chars().count();
            lanes = [0, 1, 2, 3].map(|j| a.lanes[use_lanes[j] as usize]);
        }
        Ok(Res {
            file: a.file,
            index: index as u8,
            lanes,
            neg: a.neg ^ op.neg,
            rel,
            loc: op.loc,
            letters,
        })
    }

    /// A destination register: o or r, no negation, no relative index.
    fn dest(&mut self, op: &Operand) -> R<(DstReg, u8)> {
        if op.neg {
            return Err(self.err(op.loc, "a destination cannot be negated"));
        }
        let r = self.resolve(op, false)?;
        let d = match r.file {
            RegFile::O => {
                if r.index >= self.unit.max_output() {
                    return Err(self.err(
                        r.loc,
                        format!("`{}`: geometry shaders can only write o0-o6", r.name()),
                    ));
                }
                DstReg::Output(r.index)
            }
            RegFile::R => DstReg::Temp(r.index),
            RegFile::V => {
                return Err(self.err(
                    r.loc,
                    format!(
                        "`{}` is an input and cannot be a destination (outputs are o0-o15)",
                        r.name()
                    ),
                ))
            }
            _ => {
                return Err(self.err(
                    r.loc,
                    format!(
                        "`{}` cannot be a destination (o or r registers only)",
                        r.name()
                    ),
                ))
            }
        };
        if r.neg {
            return Err(self.err(
                op.loc,
                "a destination cannot be negated (the alias is negated)",
            ));
        }
        if r.letters > 1 {
            let written = &r.lanes[..r.letters];
            if written.windows(2).any(|w| w[0] >= w[1]) {
                let m = WriteMask(r.mask());
                self.warn(
                    op.swizzle.as_ref().map(|s| s.loc).unwrap_or(op.loc),
                    format!(
                        "destination mask letters are not in xyzw order; lanes .{m} are written"
                    ),
                );
            }
        }
        Ok((d, r.mask()))
    }

    fn check_source_file(&self, r: &Res, slot: usize, mnemonic: &str) -> R<()> {
        match r.file {
            RegFile::V | RegFile::R | RegFile::C => Ok(()),
            RegFile::O => Err(self.err(
                r.loc,
                format!(
                    "`{}` is an output and cannot be read (inputs are v0-v15)",
                    r.name()
                ),
            )),
            _ => Err(self.err(
                r.loc,
                format!("`{}` cannot be source {slot} of {mnemonic}", r.name()),
            )),
        }
    }

    fn narrow_ok(&self, r: &Res, slot: usize, mnemonic: &str, why: &str) -> R<()> {
        self.check_source_file(r, slot, mnemonic)?;
        if r.file == RegFile::C {
            return Err(self.err(
                r.loc,
                format!(
                    "`{}` cannot be source {slot} of {mnemonic}: {why}",
                    r.name()
                ),
            ));
        }
        if r.rel != RelIndex::None {
            return Err(self.err(
                r.loc,
                format!("relative addressing is not possible in source {slot} of {mnemonic}"),
            ));
        }
        Ok(())
    }

    fn bool_reg(&mut self, op: &Operand) -> R<u8> {
        self.uniform_reg(op, RegFile::B, "a bool register (b0-b15)")
    }

    fn uniform_reg(&mut self, op: &Operand, file: RegFile, what: &str) -> R<u8> {
        let r = self.resolve(op, false)?;
        if r.file != file {
            return Err(self.err(op.loc, format!("expected {what}, found `{}`", r.name())));
        }
        if op.neg || op.swizzle.is_some() {
            return Err(self.err(op.loc, format!("{what} takes no negation or swizzle")));
        }
        Ok(r.index)
    }

    // -----------------------------------------------------------------------------------------
    // Descriptors

    #[allow(clippy::too_many_arguments)]
    fn desc_index(
        &mut self,
        value: u64,
        care: u64,
        hw: u64,
        mad: bool,
        pin: Option<(u32, Loc)>,
        loc: Loc,
    ) -> R<u8> {
        let limit = if mad { 32 } else { MAX_DESCS };
        match &mut self.table {
            DescTable::Auto {
                entries,
                mad: mad_slots,
            } => {
                if let Some((_, ploc)) = pin {
                    return Err(self
                        .names
                        .error(ploc, "desc=N needs an explicit descriptor table (.opdesc)"));
                }
                let found = entries
                    .iter()
                    .position(|&(v, m)| (v ^ value) & care & m == 0);
                let mut idx = match found {
                    Some(i) => {
                        let e = &mut entries[i];
                        e.0 = (e.0 & !care) | (value & care);
                        e.1 |= care;
                        i
                    }
                    None => {
                        if entries.len() >= MAX_DESCS {
                            return Err(self.names.error(
                                loc,
                                format!("too many operand descriptors (limit is {MAX_DESCS})"),
                            ));
                        }
                        entries.push((value, care));
                        entries.len() - 1
                    }
                };
                if mad {
                    if idx >= 32 {
                        let Some(which) = (0..32).find(|w| *mad_slots & (1 << w) == 0) else {
                            return Err(self.names.error(
                                loc,
                                "all 32 descriptor slots MAD can reach are taken by MAD descriptors",
                            ));
                        };
                        entries.swap(which, idx);
                        for (w, &r) in self.code.iter_mut().zip(&self.desc_refs) {
                            if r {
                                let d = (*w & 0x7F) as usize;
                                if d == which {
                                    *w = (*w & !0x7F) | idx as u32;
                                } else if d == idx {
                                    *w = (*w & !0x7F) | which as u32;
                                }
                            }
                        }
                        idx = which;
                    }
                    *mad_slots |= 1 << idx;
                }
                Ok(idx as u8)
            }
            DescTable::Explicit(t) => {
                if let Some((n, ploc)) = pin {
                    let n = n as usize;
                    if n >= limit {
                        return Err(self.names.error(
                            ploc,
                            format!("descriptor index {n} is out of range for this instruction (max {})", limit - 1),
                        ));
                    }
                    if let Some(&d) = t.get(n) {
                        if (d ^ value) & hw != 0 {
                            return Err(self.names.error(
                                loc,
                                format!(
                                    "operands do not match descriptor {n} (0x{d:08x}; these operands need 0x{:08x} in bits 0x{hw:08x})",
                                    value & hw
                                ),
                            ));
                        }
                    }
                    return Ok(n as u8);
                }
                if let Some(i) = t.iter().take(limit).position(|&d| (d ^ value) & care == 0) {
                    return Ok(i as u8);
                }
                if t.len() >= limit {
                    return Err(self.names.error(
                        loc,
                        "no descriptor in the .opdesc table matches and there is no room for a new one",
                    ));
                }
                t.push(value);
                Ok((t.len() - 1) as u8)
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Instructions

    fn instruction(&mut self, ins: &Insn) -> R<()> {
        let loc = ins.mnemonic.loc;
        self.begin_instruction(loc)?;
        let m = ins.mnemonic.text.to_ascii_lowercase();
        if ins.pin.is_some()
            && !matches!(
                ins.kind,
                InsnKind::Arith { .. } | InsnKind::Mova { .. } | InsnKind::Cmp { .. }
            )
        {
            let ploc = ins.pin.map(|p| p.1).unwrap_or(loc);
            return Err(self.err(ploc, format!("{m} has no operand descriptor")));
        }
        let enc = |s: &Self, i: Instruction| encode(&i).map_err(|e| s.err(loc, e.to_string()));
        match &ins.kind {
            InsnKind::Zero(op) => {
                let w = (*op as u32) << 26;
                self.emit(w, false);
            }
            InsnKind::Arith { op, dst, srcs } => self.arith(&m, *op, dst, srcs, ins.pin, loc)?,
            InsnKind::Mova { mask, src, .. } => {
                let s = self.resolve(src, true)?;
                self.check_source_file(&s, 1, &m)?;
                let value = OperandDesc::new(
                    WriteMask(*mask),
                    [s.neg, false, false],
                    [s.swizzle(), Swizzle(0), Swizzle(0)],
                )
                .0;
                let desc = self.desc_index(
                    value,
                    picasso_care(Opcode::Mova, *mask, 1),
                    hw_care(Opcode::Mova, *mask, 1),
                    false,
                    ins.pin,
                    loc,
                )?;
                let src = s.src().ok_or_else(|| self.err(s.loc, "bad source"))?;
                let w = enc(
                    self,
                    Instruction::Mova {
                        src,
                        rel: s.rel,
                        desc,
                    },
                )?;
                self.emit(w, true);
            }
            InsnKind::Cmp { src1, x, y, src2 } => {
                let a = self.resolve(src1, true)?;
                let b = self.resolve(src2, true)?;
                self.check_source_file(&a, 1, &m)?;
                self.narrow_ok(&b, 2, &m, "only the first source can be a c register")?;
                if ins.pin.is_none() {
                    self.input_combination(&[a, b])?;
                }
                let value = OperandDesc::new(
                    WriteMask(0),
                    [a.neg, b.neg, false],
                    [a.swizzle(), b.swizzle(), Swizzle(0)],
                )
                .0;
                let desc = self.desc_index(
                    value,
                    picasso_care(Opcode::Cmp, 0, 2),
                    hw_care(Opcode::Cmp, 0, 2),
                    false,
                    ins.pin,
                    loc,
                )?;
                let (s1, s2) = (a.src(), b.src());
                let (Some(src1), Some(src2)) = (s1, s2) else {
                    return Err(self.err(loc, "bad source"));
                };
                let w = enc(
                    self,
                    Instruction::Cmp {
                        src1,
                        src2,
                        rel: a.rel,
                        x: *x,
                        y: *y,
                        desc,
                    },
                )?;
                self.emit(w, true);
            }
            InsnKind::Call { target } => {
                let (dest, num) = self.call_target(target)?;
                let w = enc(self, Instruction::Call { dest, num })?;
                let at = self.emit(w, false);
                self.call_reloc(target, at);
            }
            InsnKind::CallC { cond, target } => {
                let (dest, num) = self.call_target(target)?;
                let w = enc(
                    self,
                    Instruction::CallC {
                        cond: cond.cond,
                        dest,
                        num,
                    },
                )?;
                let at = self.emit(w, false);
                self.call_reloc(target, at);
            }
            InsnKind::CallU { b, target } => {
                let b = self.bool_reg(b)?;
                let (dest, num) = self.call_target(target)?;
                let w = enc(self, Instruction::CallU { b, dest, num })?;
                let at = self.emit(w, false);
                self.call_reloc(target, at);
            }
            InsnKind::JmpC { cond, target } => {
                let dest = self.jump_target(target)?;
                let w = enc(
                    self,
                    Instruction::JmpC {
                        cond: cond.cond,
                        dest,
                    },
                )?;
                let at = self.emit(w, false);
                self.jump_reloc(target, at);
            }
            InsnKind::JmpU { invert, b, target } => {
                let b = self.bool_reg(b)?;
                let dest = self.jump_target(target)?;
                let w = enc(
                    self,
                    Instruction::JmpU {
                        b,
                        dest,
                        invert: *invert,
                    },
                )?;
                let at = self.emit(w, false);
                self.jump_reloc(target, at);
            }
            InsnKind::IfC { cond, raw } => {
                let (dest, num) = raw.unwrap_or((0, 0));
                let w = enc(
                    self,
                    Instruction::IfC {
                        cond: cond.cond,
                        dest: dest as u16,
                        num: num as u8,
                    },
                )?;
                self.open_if(w, raw.is_none(), loc)?;
            }
            InsnKind::IfU { b, raw } => {
                let b = self.bool_reg(b)?;
                let (dest, num) = raw.unwrap_or((0, 0));
                let w = enc(
                    self,
                    Instruction::IfU {
                        b,
                        dest: dest as u16,
                        num: num as u8,
                    },
                )?;
                self.open_if(w, raw.is_none(), loc)?;
            }
            InsnKind::For { i, raw } => {
                let i = self.uniform_reg(i, RegFile::I, "an integer register (i0-i3)")?;
                let w = enc(
                    self,
                    Instruction::Loop {
                        i,
                        dest: raw.unwrap_or(0) as u16,
                    },
                )?;
                if raw.is_none() {
                    self.push_block(BlockKind::For, loc)?;
                }
                self.emit(w, false);
            }
            InsnKind::BreakC { cond } => {
                let w = enc(self, Instruction::BreakC { cond: cond.cond })?;
                self.emit(w, false);
            }
            InsnKind::SetEmit { vtx, prim, inv } => {
                let w = enc(
                    self,
                    Instruction::SetEmit {
                        vtx: *vtx,
                        primitive: *prim,
                        winding: *inv,
                    },
                )?;
                if !self.unit.geo {
                    self.unit.geo = true;
                    self.unit.compat = true;
                }
                self.emit(w, false);
            }
        }
        Ok(())
    }

    fn push_block(&mut self, kind: BlockKind, loc: Loc) -> R<()> {
        if self.stack.len() >= MAX_NESTING {
            return Err(self.err(
                loc,
                format!("too many nested blocks (limit is {MAX_NESTING})"),
            ));
        }
        self.stack.push(Block {
            kind,
            pos: self.code.len() as u32,
            loc,
        });
        Ok(())
    }

    fn open_if(&mut self, w: u32, block: bool, loc: Loc) -> R<()> {
        if block {
            self.push_block(BlockKind::If { else_pos: None }, loc)?;
        }
        self.emit(w, false);
        Ok(())
    }

    fn call_target(&self, t: &Target) -> R<(u16, u8)> {
        match t {
            Target::Name(_) => Ok((0, 0)),
            Target::Raw { dest, num, loc } => match num {
                Some(n) => Ok((*dest as u16, *n as u8)),
                None => Err(self.err(*loc, "a raw call target needs a length: `@address, length`")),
            },
        }
    }

    fn call_reloc(&mut self, t: &Target, at: usize) {
        if let Target::Name(n) = t {
            self.proc_relocs.push((at, n.clone()));
        }
    }

    fn jump_target(&self, t: &Target) -> R<u16> {
        match t {
            Target::Name(_) => Ok(0),
            Target::Raw { dest, num, loc } => {
                if num.is_some() {
                    Err(self.err(*loc, "a jump target takes no length"))
                } else {
                    Ok(*dest as u16)
                }
            }
        }
    }

    fn jump_reloc(&mut self, t: &Target, at: usize) {
        if let Target::Name(n) = t {
            self.unit.label_relocs.push((at, n.clone()));
        }
    }

    fn input_combination(&self, rs: &[Res]) -> R<()> {
        for (i, a) in rs.iter().enumerate() {
            for b in &rs[i + 1..] {
                if a.file == RegFile::V && b.file == RegFile::V && a.index != b.index {
                    return Err(self.err(
                        b.loc,
                        format!(
                            "`{}` and `{}`: an instruction can read only one input register",
                            a.name(),
                            b.name()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn arith(
        &mut self,
        m: &str,
        op: Opcode,
        dst: &Operand,
        srcs: &[Operand],
        pin: Option<(u32, Loc)>,
        loc: Loc,
    ) -> R<()> {
        let exact = pin.is_some();
        let (d, mask) = self.dest(dst)?;
        let mut rs = Vec::with_capacity(srcs.len());
        for s in srcs {
            rs.push(self.resolve(s, true)?);
        }
        for (i, r) in rs.iter().enumerate() {
            self.check_source_file(r, i + 1, m)?;
        }
        let base = op.base();
        let is_const = |r: &Res| r.file == RegFile::C;
        let none = Swizzle(0);
        let (instr, nsrc, is_mad) = match base.format() {
            Format::OneU => {
                let s = rs
                    .first()
                    .copied()
                    .ok_or_else(|| self.err(loc, "missing source"))?;
                let src = s.src().ok_or_else(|| self.err(s.loc, "bad source"))?;
                (
                    (
                        Instruction::Unary {
                            op: base,
                            dst: d,
                            src,
                            rel: s.rel,
                            desc: 0,
                        },
                        [s.neg, false, false],
                        [s.swizzle(), none, none],
                    ),
                    1,
                    false,
                )
            }
            Format::One => {
                let [a, b] = [rs.first().copied(), rs.get(1).copied()];
                let (Some(a), Some(b)) = (a, b) else {
                    return Err(self.err(loc, "missing source"));
                };
                let has_i = base.inverted().is_some();
                let inverted = if exact {
                    op.is_inverted()
                } else {
                    has_i && !is_const(&a) && is_const(&b)
                };
                if inverted {
                    self.narrow_ok(&a, 1, m, "the I-form's first source is the narrow one")?;
                } else {
                    let why = if has_i && !exact {
                        "only one source can be a c register"
                    } else if exact && has_i {
                        "this form's second source is narrow (use the I-form mnemonic)"
                    } else {
                        "only the first source can be a c register (picasso does not swap operands)"
                    };
                    self.narrow_ok(&b, 2, m, why)?;
                }
                if !exact {
                    self.input_combination(&[a, b])?;
                }
                let final_op = match base.inverted() {
                    Some(i) if inverted => i,
                    _ => base,
                };
                let (Some(src1), Some(src2)) = (a.src(), b.src()) else {
                    return Err(self.err(loc, "bad source"));
                };
                let rel = if inverted { b.rel } else { a.rel };
                (
                    (
                        Instruction::Binary {
                            op: final_op,
                            dst: d,
                            src1,
                            src2,
                            rel,
                            desc: 0,
                        },
                        [a.neg, b.neg, false],
                        [a.swizzle(), b.swizzle(), none],
                    ),
                    2,
                    false,
                )
            }
            Format::Five => {
                let (Some(a), Some(b), Some(c)) =
                    (rs.first().copied(), rs.get(1).copied(), rs.get(2).copied())
                else {
                    return Err(self.err(loc, "missing source"));
                };
                let inverted = if exact {
                    op.is_inverted()
                } else {
                    !is_const(&b)
                        && (is_const(&c) || (c.rel != RelIndex::None && b.rel == RelIndex::None))
                };
                self.narrow_ok(&a, 1, m, "mad's first source is narrow")?;
                if inverted {
                    self.narrow_ok(&b, 2, m, "only one of sources 2 and 3 can be a c register")?;
                } else {
                    self.narrow_ok(&c, 3, m, "only one of sources 2 and 3 can be a c register")?;
                }
                if !exact {
                    self.input_combination(&[a, b, c])?;
                }
                let (Some(src1), Some(src2), Some(src3)) = (a.src(), b.src(), c.src()) else {
                    return Err(self.err(loc, "bad source"));
                };
                let rel = if inverted { c.rel } else { b.rel };
                (
                    (
                        Instruction::Mad {
                            op: match base.inverted() {
                                Some(i) if inverted => i,
                                _ => base,
                            },
                            dst: d,
                            src1,
                            src2,
                            src3,
                            rel,
                            desc: 0,
                        },
                        [a.neg, b.neg, c.neg],
                        [a.swizzle(), b.swizzle(), c.swizzle()],
                    ),
                    3,
                    true,
                )
            }
            _ => return Err(self.err(loc, format!("`{m}` is not an arithmetic instruction"))),
        };
        let (mut instr, negs, swz) = instr;
        let value = OperandDesc::new(WriteMask(mask), negs, swz).0;
        let desc = self.desc_index(
            value,
            picasso_care(base, mask, nsrc),
            hw_care(base, mask, nsrc),
            is_mad,
            pin,
            loc,
        )?;
        match &mut instr {
            Instruction::Binary { desc: dd, .. }
            | Instruction::Unary { desc: dd, .. }
            | Instruction::Mad { desc: dd, .. } => *dd = desc,
            _ => {}
        }
        let w = encode(&instr).map_err(|e| self.err(loc, e.to_string()))?;
        self.emit(w, !is_mad);
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Directives

    fn directive(&mut self, d: &Directive, loc: Loc) -> R<()> {
        match d {
            Directive::Proc(name) => {
                if self.procs.contains_key(&name.text)
                    || self
                        .stack
                        .iter()
                        .any(|b| b.kind == BlockKind::Proc(name.text.clone()))
                {
                    return Err(self.err(
                        name.loc,
                        format!("procedure `{}` already exists", name.text),
                    ));
                }
                self.push_block(BlockKind::Proc(name.text.clone()), loc)?;
            }
            Directive::Else => {
                let Some(top) = self.stack.last().cloned() else {
                    return Err(self.err(loc, ".else without an open ifc/ifu block"));
                };
                match top.kind {
                    BlockKind::If { else_pos: None } => {
                        self.pad_if_needed(&top.kind, top.pos, loc);
                        let cur = self.code.len() as u32;
                        if let Some(b) = self.stack.last_mut() {
                            b.kind = BlockKind::If {
                                else_pos: Some(cur),
                            };
                        }
                        self.patch_dest(top.pos, cur);
                    }
                    BlockKind::If { else_pos: Some(_) } => {
                        return Err(self.err(loc, "this if block already has an .else"))
                    }
                    _ => return Err(self.err(loc, ".else without an open ifc/ifu block")),
                }
            }
            Directive::End => self.end_block(loc)?,
            Directive::Entry(spec) => self.unit.entry = Some((spec.clone(), loc)),
            Directive::Alias { name, target } => {
                self.check_name(name)?;
                if let Some((IndexSpec::Rel { .. }, iloc)) = &target.index {
                    return Err(self.err(*iloc, "an alias cannot contain an index register"));
                }
                let r = self.resolve(target, false)?;
                self.unit.aliases.insert(
                    name.text.clone(),
                    AliasVal {
                        file: r.file,
                        index: i64::from(r.index),
                        lanes: r.lanes,
                        neg: r.neg,
                    },
                );
            }
            Directive::Uniforms { ty, items } => {
                for (name, size) in items {
                    self.declare_uniform(*ty, name, size.map(|s| s.0).unwrap_or(1))?;
                }
            }
            Directive::ConstF { name, values } => {
                self.check_name(name)?;
                let pos = self.local_alloc(UType::Float, 1, name)?;
                self.add_constant(
                    Constant::FVec {
                        reg: pos as u16,
                        value: *values,
                    },
                    loc,
                )?;
                self.alias_to(name, RegFile::C, pos);
            }
            Directive::ConstI { name, values } => {
                self.check_name(name)?;
                let pos = self.local_alloc(UType::Int, 1, name)?;
                self.add_constant(
                    Constant::IVec {
                        reg: pos as u16,
                        value: *values,
                    },
                    loc,
                )?;
                self.alias_to(name, RegFile::I, pos);
            }
            Directive::ConstArray { name, size } => {
                if matches!(self.stack.last(), Some(b) if b.kind == BlockKind::Array) {
                    return Err(self.err(loc, "constant arrays cannot be nested"));
                }
                self.push_block(BlockKind::Array, loc)?;
                self.unit.array = Some(ArrayState {
                    name: name.clone(),
                    size: size.map(|s| s.0),
                    elems: Vec::new(),
                });
            }
            Directive::ConstArrayElem(v) => {
                let in_array = matches!(self.stack.last(), Some(b) if b.kind == BlockKind::Array);
                let Some(a) = self.unit.array.as_mut().filter(|_| in_array) else {
                    return Err(self.err(loc, "`.constfa (x, y, z, w)` outside a .constfa array"));
                };
                if let Some(s) = a.size {
                    if a.elems.len() as i64 >= s {
                        return Err(
                            self.err(loc, format!("too many elements in the array, expected {s}"))
                        );
                    }
                }
                a.elems.push(*v);
            }
            Directive::SetF { reg, values } => {
                let i = self.uniform_reg(reg, RegFile::C, "a float uniform register (c0-c95)")?;
                self.add_constant(
                    Constant::FVec {
                        reg: u16::from(i),
                        value: *values,
                    },
                    loc,
                )?;
            }
            Directive::SetI { reg, values } => {
                let i = self.uniform_reg(reg, RegFile::I, "an integer uniform register (i0-i3)")?;
                self.add_constant(
                    Constant::IVec {
                        reg: u16::from(i),
                        value: *values,
                    },
                    loc,
                )?;
            }
            Directive::SetB { reg, value } => {
                let i = self.bool_reg(reg)?;
                self.add_constant(
                    Constant::Bool {
                        reg: u16::from(i),
                        value: *value,
                    },
                    loc,
                )?;
            }
            Directive::In { name, reg } => {
                // picasso accepts an input register's own name as the declared name
                // (`.in v0`): it names that register, in the uniform table as well.
                let own = match split_register(&name.text) {
                    Some(('v', i)) if i < 16 => Some(i as u8),
                    _ => None,
                };
                if own.is_none() {
                    self.check_name(name)?;
                }
                let idx = match reg {
                    Some(r) => {
                        let res = self.resolve(r, false)?;
                        if res.file != RegFile::V || r.neg || r.swizzle.is_some() {
                            return Err(self.err(
                                r.loc,
                                format!(
                                    "expected an input register (v0-v15), found `{}`",
                                    res.name()
                                ),
                            ));
                        }
                        res.index
                    }
                    None => match own {
                        Some(i) => i,
                        None => match (0..16).find(|i| self.unit.input_mask & (1 << i) == 0) {
                            Some(i) => i,
                            None => return Err(self.err(name.loc, "too many inputs")),
                        },
                    },
                };
                if let Some(o) = own {
                    if o != idx {
                        return Err(self.err(
                            name.loc,
                            format!(
                                "`.in {}` bound to v{idx}: a register name can only name \
                                 that register",
                                name.text
                            ),
                        ));
                    }
                    if self.unit.input_mask & (1 << idx) != 0 {
                        return Err(self.err(name.loc, format!("input v{idx} is already declared")));
                    }
                }
                if self.unit.uniforms.len() >= MAX_UNIFORMS {
                    return Err(self.err(name.loc, "too many uniforms in this DVLE"));
                }
                self.unit.input_mask |= 1 << idx;
                self.unit.uniforms.push(Uniform {
                    name: name.text.replace('$', "."),
                    first: unified(RegFile::V, u32::from(idx)),
                    last: unified(RegFile::V, u32::from(idx)),
                });
                if own.is_none() {
                    self.alias_to(name, RegFile::V, u32::from(idx));
                }
            }
            Directive::Out {
                name,
                ty,
                ty_mask,
                reg,
            } => self.out(name.as_ref(), ty, ty_mask.as_ref(), reg.as_ref())?,
            Directive::NoDvle => self.unit.nodvle = true,
            Directive::Gsh(spec) => self.gsh(spec.as_ref(), loc)?,
            Directive::Unit => {}
            Directive::NoNop => self.unit.nonop = true,
            Directive::Word(ws) => {
                for &w in ws {
                    self.begin_instruction(loc)?;
                    self.emit(w, false);
                }
            }
            Directive::OpDesc(_) => {}
            Directive::UniformRaw { name, first, last } => {
                if name.contains('\0') {
                    return Err(self.err(loc, "a uniform name cannot contain NUL"));
                }
                self.unit.raw_uniforms.push(Uniform {
                    name: name.clone(),
                    first: *first,
                    last: *last,
                });
            }
            Directive::OutputRaw(v) => self.unit.outputs.push(Output::from_raw(*v)),
            Directive::ConstRaw { ty, reg, words } => {
                let mut payload = [0u8; 16];
                for (chunk, w) in payload.chunks_exact_mut(4).zip(words) {
                    chunk.copy_from_slice(&w.to_le_bytes());
                }
                self.unit
                    .constants
                    .push(Constant::from_raw(*ty, *reg, payload));
            }
            Directive::DvleHeader(h) => {
                let u = &mut self.unit.header;
                u.version = h.version.or(u.version);
                u.merge = h.merge.or(u.merge);
                u.inputs = h.inputs.or(u.inputs);
                u.outputs = h.outputs.or(u.outputs);
                u.gs = h.gs.or(u.gs);
                if let Some(k) = h.kind {
                    u.kind = Some(k);
                    self.unit.kind_lock = Some(k);
                }
            }
            Directive::DvleLabel {
                id,
                unknown,
                offset,
                size,
                name,
            } => {
                if name.contains('\0') {
                    return Err(self.err(loc, "a label name cannot contain NUL"));
                }
                self.unit.dvle_labels.push(Label {
                    id: *id,
                    unknown: *unknown,
                    offset: *offset,
                    size: *size,
                    name: name.clone(),
                });
            }
            Directive::Dvlp(o) => {
                let d = &mut self.dvlp;
                d.version = o.version.or(d.version);
                d.field_18 = o.field_18.or(d.field_18);
                d.field_1c = o.field_1c.or(d.field_1c);
                if o.symbols.is_some() {
                    d.symbols.clone_from(&o.symbols);
                }
            }
        }
        Ok(())
    }

    fn patch_dest(&mut self, at: u32, dest: u32) {
        if let Some(w) = self.code.get_mut(at as usize) {
            *w = (*w & !(0xFFF << 10)) | (dest & 0xFFF) << 10;
        }
    }

    fn end_block(&mut self, loc: Loc) -> R<()> {
        let Some(top) = self.stack.last().cloned() else {
            return Err(self.err(loc, ".end without an open block"));
        };
        if top.kind != BlockKind::Array {
            self.pad_if_needed(&top.kind, top.pos, loc);
        }
        self.stack.pop();
        let cur = self.code.len() as u32;
        match top.kind {
            BlockKind::Proc(name) => {
                self.procs.insert(name, (top.pos, cur - top.pos));
            }
            BlockKind::For => {
                self.patch_dest(top.pos, cur.saturating_sub(1));
                self.last_was_end = true;
            }
            BlockKind::If { else_pos } => {
                match else_pos {
                    None => self.patch_dest(top.pos, cur),
                    Some(e) => {
                        let n = cur - e;
                        if n > 0xFF {
                            return Err(self.err(
                                loc,
                                format!(
                                    "the else part is {n} words long; ifc/ifu can skip at most 255"
                                ),
                            ));
                        }
                        if let Some(w) = self.code.get_mut(top.pos as usize) {
                            *w = (*w & !0xFF) | n;
                        }
                    }
                }
                self.last_was_end = true;
            }
            BlockKind::Array => {
                let Some(a) = self.unit.array.take() else {
                    return Ok(());
                };
                self.check_name(&a.name)?;
                let mut elems = a.elems;
                if let Some(s) = a.size {
                    elems.resize(s as usize, [0; 4]);
                }
                if elems.is_empty() {
                    return Err(self.err(
                        a.name.loc,
                        format!("array `{}` has no elements", a.name.text),
                    ));
                }
                let pos = self.local_alloc(UType::Float, elems.len() as u32, &a.name)?;
                if self.unit.constants.len() + elems.len() > MAX_CONSTANTS {
                    return Err(self.err(loc, "too many constants in this DVLE"));
                }
                for (i, v) in elems.iter().enumerate() {
                    self.unit.constants.push(Constant::FVec {
                        reg: (pos + i as u32) as u16,
                        value: *v,
                    });
                }
                self.alias_to(&a.name, RegFile::C, pos);
            }
        }
        Ok(())
    }

    fn alias_to(&mut self, name: &Name, file: RegFile, index: u32) {
        self.unit.aliases.insert(
            name.text.clone(),
            AliasVal {
                file,
                index: i64::from(index),
                lanes: [0, 1, 2, 3],
                neg: false,
            },
        );
    }

    fn add_constant(&mut self, c: Constant, loc: Loc) -> R<()> {
        if self.unit.constants.len() >= MAX_CONSTANTS {
            return Err(self.err(loc, "too many constants in this DVLE"));
        }
        self.unit.constants.push(c);
        Ok(())
    }

    fn allocs(&mut self) -> &mut Allocs {
        if self.unit.uses_gsh_space() {
            if let Some(a) = self.unit.gsh_allocs.as_mut() {
                return a;
            }
        }
        &mut self.shared
    }

    fn local_alloc(&mut self, ty: UType, size: u32, name: &Name) -> R<u32> {
        match self.allocs().get(ty).local(size) {
            Some(p) => Ok(p),
            None => Err(self.err(
                name.loc,
                format!("not enough free registers for constant `{}`", name.text),
            )),
        }
    }

    fn declare_uniform(&mut self, ty: UType, name: &Name, size: i64) -> R<()> {
        self.check_name(name)?;
        let size = size as u32;
        let shared = !self.unit.uses_gsh_space();
        let mut pos = None;
        if shared {
            if let Some(&(t, p, s)) = self.shared_table.get(&name.text) {
                if t != ty {
                    return Err(self.err(
                        name.loc,
                        format!("uniform `{}` was declared with another type", name.text),
                    ));
                }
                if s != size {
                    return Err(self.err(
                        name.loc,
                        format!("uniform `{}` was declared with size {s}", name.text),
                    ));
                }
                pos = Some(p);
            }
        }
        let pos = match pos {
            Some(p) => p,
            None => {
                if shared && self.shared_count >= MAX_UNIFORMS {
                    return Err(self.err(name.loc, "too many uniforms"));
                }
                match self.allocs().get(ty).global(size) {
                    Some(p) => p,
                    None => {
                        return Err(self.err(
                            name.loc,
                            format!("not enough uniform space for `{}[{size}]`", name.text),
                        ))
                    }
                }
            }
        };
        if shared && !self.shared_table.contains_key(&name.text) {
            self.shared_table.insert(name.text.clone(), (ty, pos, size));
            self.shared_count += 1;
        }
        let file = utype_file(ty);
        if !name.text.starts_with('_') {
            if self.unit.uniforms.len() >= MAX_UNIFORMS {
                return Err(self.err(name.loc, "too many uniforms in this DVLE"));
            }
            self.unit.uniforms.push(Uniform {
                name: name.text.replace('$', "."),
                first: unified(file, pos),
                last: unified(file, pos + size - 1),
            });
        }
        self.alias_to(name, file, pos);
        Ok(())
    }

    fn out(
        &mut self,
        name: Option<&Name>,
        ty: &Name,
        ty_mask: Option<&Name>,
        reg: Option<&Operand>,
    ) -> R<()> {
        let sem = match ty.text.to_ascii_lowercase().as_str() {
            "pos" | "position" => OutputSemantic::Position,
            "nquat" | "normalquat" => OutputSemantic::NormalQuat,
            "clr" | "color" => OutputSemantic::Color,
            "tcoord0" | "texcoord0" => OutputSemantic::TexCoord0,
            "tcoord0w" | "texcoord0w" => OutputSemantic::TexCoord0W,
            "tcoord1" | "texcoord1" => OutputSemantic::TexCoord1,
            "tcoord2" | "texcoord2" => OutputSemantic::TexCoord2,
            "view" => OutputSemantic::View,
            "dummy" => OutputSemantic::Dummy,
            _ => return Err(self.err(ty.loc, format!("invalid output type `{}`", ty.text))),
        };
        let mask_of = |lanes: [u8; 4]| lanes.iter().fold(0u8, |m, &l| m | (1 << l));
        let mut mask = 0xF;
        if let Some(m) = ty_mask {
            let lanes = swizzle_lanes(&m.text)
                .ok_or_else(|| self.err(m.loc, format!("invalid output mask `.{}`", m.text)))?;
            mask = mask_of(lanes);
        }
        let max = self.unit.max_output();
        let oid = match reg {
            Some(op) => {
                let r = self.resolve(op, false)?;
                if r.file != RegFile::O || r.neg {
                    return Err(self.err(
                        op.loc,
                        format!("expected an output register, found `{}`", r.name()),
                    ));
                }
                if op.swizzle.is_some() || r.lanes != [0, 1, 2, 3] {
                    let m = mask_of(r.lanes);
                    if ty_mask.is_some() && m != mask {
                        return Err(self.err(
                            op.loc,
                            "give the output mask on the type or on the register, not both",
                        ));
                    }
                    mask = m;
                }
                if r.index >= max {
                    return Err(self.err(
                        op.loc,
                        format!("`{}`: geometry shaders have outputs o0-o6 only", r.name()),
                    ));
                }
                if self.unit.output_used & (u64::from(mask) << (4 * r.index)) != 0 {
                    return Err(self.err(
                        op.loc,
                        format!("this output overlaps one declared before on {}", r.name()),
                    ));
                }
                r.index
            }
            None => match (0..max).find(|i| self.unit.output_mask & (1 << i) == 0) {
                Some(i) => i,
                None => return Err(self.err(ty.loc, "too many outputs")),
            },
        };
        if self.unit.outputs.len() >= MAX_OUTPUTS {
            return Err(self.err(ty.loc, "too many outputs"));
        }
        if let Some(n) = name {
            self.check_name(n)?;
        }
        if oid >= 7 && sem != OutputSemantic::Dummy {
            return Err(self.err(ty.loc, format!("o{oid} can only carry a dummy output")));
        }
        self.unit.outputs.push(Output::new(sem, oid, mask));
        self.unit.output_mask |= 1 << oid;
        self.unit.output_used |= u64::from(mask) << (4 * oid);
        if let Some(n) = name {
            self.alias_to(n, RegFile::O, u32::from(oid));
        }
        if sem == OutputSemantic::Dummy && self.unit.uses_gsh_space() {
            self.unit.merge = true;
        }
        Ok(())
    }

    fn gsh(&mut self, spec: Option<&GshSpec>, loc: Loc) -> R<()> {
        let Some(spec) = spec else {
            self.unit.geo = true;
            self.unit.compat = true;
            return Ok(());
        };
        if self.unit.geo {
            return Err(self.err(
                loc,
                ".gsh was already used (or setemit made this a geometry shader)",
            ));
        }
        if !self.unit.constants.is_empty()
            || !self.unit.uniforms.is_empty()
            || self.unit.output_mask != 0
        {
            return Err(self.err(
                loc,
                ".gsh must come before any constant, uniform or output declaration",
            ));
        }
        let creg = |s: &mut Self, op: &Operand| -> R<u32> {
            let r = s.resolve(op, false)?;
            if r.file != RegFile::C || op.neg || op.swizzle.is_some() {
                return Err(s.err(
                    op.loc,
                    format!("expected a float uniform register, found `{}`", r.name()),
                ));
            }
            Ok(u32::from(r.index))
        };
        let (first, bytes) = match spec {
            GshSpec::Point { first } => (creg(self, first)?, [0, 0, 0, 0]),
            GshSpec::Variable { first, count } => (creg(self, first)?, [1, 0, count.0 as u8, 0]),
            GshSpec::Fixed {
                first,
                array,
                count,
            } => {
                let f = creg(self, first)?;
                let a = creg(self, array)?;
                if a >= f {
                    return Err(self.err(
                        array.loc,
                        "the vertex array must lie below the first free uniform register",
                    ));
                }
                (f, [2, a as u8, 0, count.0 as u8])
            }
        };
        self.unit.geo = true;
        self.unit.compat = false;
        self.unit.gs_bytes = bytes;
        self.unit.gsh_allocs = Some(Allocs::gsh(first));
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Finish

    fn finish(mut self) -> Result<(Shbin, Vec<AsmWarning>), Vec<AsmError>> {
        // Linking (procedure calls, entry points) only makes sense for a complete program.
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        let relocs = std::mem::take(&mut self.proc_relocs);
        for (at, name) in relocs {
            match self.procs.get(&name.text) {
                Some(&(start, size)) => {
                    if size > 0xFF || start > 0xFFF {
                        let e = self.err(
                            name.loc,
                            format!(
                                "procedure `{}` is {size} words long; a call can cover at most 255",
                                name.text
                            ),
                        );
                        self.errors.push(e);
                        continue;
                    }
                    if let Some(w) = self.code.get_mut(at) {
                        *w = (*w & !0x3FFFFF) | (start & 0xFFF) << 10 | size;
                    }
                }
                None => {
                    let e = self.err(
                        name.loc,
                        format!("procedure `{}` is not defined", name.text),
                    );
                    self.errors.push(e);
                }
            }
        }
        let pending = std::mem::take(&mut self.dvles);
        let mut dvles = Vec::new();
        for p in pending {
            match self.build_dvle(p.state) {
                Ok(d) => dvles.push(d),
                Err(e) => self.errors.push(e),
            }
        }
        if dvles.is_empty() && self.errors.is_empty() {
            // picasso refuses a source without a DVLE too: a SHBIN with no shader in it is
            // never what the caller wants (and an empty file would otherwise "succeed").
            let first = Loc {
                file: 0,
                line: 1,
                col: 1,
            };
            let msg = if self.code.is_empty() {
                "nothing to assemble: the source holds no procedure (an empty file?)"
            } else {
                "no DVLE: every file says .nodvle, so the SHBIN would hold no shader (picasso refuses this too)"
            };
            let e = self.err(first, msg);
            self.errors.push(e);
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        if self.warnings_dropped > 0 {
            let last = self.warnings.last().cloned();
            self.warnings.push(AsmWarning {
                message: format!(
                    "{} more warning(s) not shown (only the first {MAX_WARNINGS} are kept)",
                    self.warnings_dropped
                ),
                ..last.expect("warnings were dropped, so some were kept")
            });
        }
        let opdescs = self.table.values();
        let picasso_18 = 0x28 + 4 * self.code.len() as u32 + 8 * opdescs.len() as u32;
        let dvlp = DvlpInfo {
            version: self.dvlp.version.unwrap_or(0),
            field_18: self.dvlp.field_18.filter(|&v| v != picasso_18),
            field_1c: self.dvlp.field_1c.unwrap_or(0),
            filename_symbols: self.dvlp.symbols.clone().unwrap_or_default(),
        };
        Ok((
            Shbin {
                code: self.code,
                opdescs,
                dvlp,
                dvles,
            },
            self.warnings,
        ))
    }

    fn build_dvle(&self, u: UnitState) -> R<Dvle> {
        let kind = if u.is_geometry() {
            ShaderKind::Geometry
        } else {
            ShaderKind::Vertex
        };
        let mut d = Dvle::new(kind);
        let (spec, eloc) = u.entry.clone().unwrap_or((
            EntrySpec::Name(Name {
                text: "main".into(),
                loc: u.loc,
            }),
            u.loc,
        ));
        match spec {
            EntrySpec::Name(n) => match self.procs.get(&n.text) {
                Some(&(start, size)) => {
                    d.main = start;
                    d.endmain = start + size;
                }
                None => {
                    return Err(self.err(
                        eloc,
                        format!("entry point `{}` is not a defined procedure", n.text),
                    ))
                }
            },
            EntrySpec::Raw { main, endmain } => {
                d.main = main;
                d.endmain = endmain;
            }
        }
        let h = &u.header;
        d.version = h.version.unwrap_or(d.version);
        d.merge_outmaps = h.merge.unwrap_or(u.merge);
        d.input_mask = h.inputs.unwrap_or(u.input_mask);
        d.output_mask = h.outputs.unwrap_or(u.output_mask);
        d.gs_raw = h.gs.unwrap_or(if u.geo { u.gs_bytes } else { [0; 4] });
        d.gs_mode = match (decode_gs_mode(d.gs_raw), kind) {
            (Some(m), _) => m,
            (None, ShaderKind::Vertex) => GsInputMode::Point,
            (None, ShaderKind::Geometry) => {
                return Err(self.err(
                    u.loc,
                    format!("geometry DVLE has an invalid mode byte {}", d.gs_raw[0]),
                ))
            }
        };
        d.constants = u.constants;
        d.labels = u.dvle_labels;
        d.outputs = u.outputs;
        let mut uniforms = u.uniforms;
        uniforms.sort_by_key(|x| x.first);
        uniforms.extend(u.raw_uniforms);
        d.uniforms = uniforms;
        Ok(d)
    }
}

/// picasso's `cond` text for a condition, or the raw number when picasso's syntax cannot
/// express it (a single-flag test whose other reference bit is clear).
pub(crate) fn cond_text(c: picajit_interp::pica::isa::Condition) -> String {
    use picajit_interp::pica::isa::CondOp;
    match c.op {
        CondOp::X if !c.ref_y => c.raw().to_string(),
        CondOp::Y if !c.ref_x => c.raw().to_string(),
        _ => c.to_string(),
    }
}
