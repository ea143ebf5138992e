//! Reading and writing SHBIN files (the `DVLB` container picasso and the official tools emit).
//!
//! A SHBIN holds one program blob shared by every shader in the file (the DVLP: code words and
//! operand descriptors) plus one or more DVLEs. A DVLE is an "executable": an entry point into the
//! shared blob together with that shader's constants, output map and uniform names. A vertex and a
//! geometry shader can sit side by side in one file.
//!
//! [`Shbin::parse`] turns bytes into a [`Shbin`]; [`Shbin::to_bytes`] turns one back into bytes.
//!
//! ```
//! use picajit::pica::shbin::{Dvle, GsInputMode, Output, OutputSemantic, ShaderKind, Shbin, Uniform};
//!
//! // What an assembler produces: one shared program, one DVLE per source file.
//! let mut vsh = Dvle::new(ShaderKind::Vertex);
//! vsh.endmain = 2;
//! vsh.output_mask = 0b1;
//! vsh.outputs.push(Output::new(OutputSemantic::Position, 0, 0b1111));
//! vsh.uniforms.push(Uniform { name: "projection".into(), first: 0x10, last: 0x13 });
//! let mut gsh = Dvle::new(ShaderKind::Geometry);
//! gsh.set_gs_mode(GsInputMode::Fixed { first_uniform: 20, vertices: 3 });
//!
//! let shbin = Shbin {
//!     code: vec![0x4C00_0000, 0x8800_0000],
//!     opdescs: vec![0x36F],
//!     dvles: vec![vsh, gsh],
//!     ..Shbin::default()
//! };
//! let bytes = shbin.to_bytes();
//! assert_eq!(Shbin::parse(&bytes).unwrap(), shbin);
//! ```
//!
//! # Layout
//!
//! All numbers are little-endian. "Relative" offsets count from the start of the structure that
//! holds them. The tables below describe what a reader finds; the order in which the pieces
//! appear in the file is given by the offsets, not by this listing.
//!
//! **DVLB header** (file offset 0)
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0x00 | 4 | `"DVLB"` |
//! | 0x04 | 4 | number of DVLEs, `N` |
//! | 0x08 | 4·N | absolute file offset of each DVLE |
//!
//! **DVLP header** (immediately after the DVLB header, at `8 + 4·N`; the loader in libctru does not
//! search for it, so neither do we)
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0x00 | 4 | `"DVLP"` |
//! | 0x04 | 4 | version ([`DvlpInfo::version`]) |
//! | 0x08 | 4 | relative offset of the program words |
//! | 0x0C | 4 | number of program words |
//! | 0x10 | 4 | relative offset of the operand-descriptor table |
//! | 0x14 | 4 | number of operand descriptors (8 bytes each) |
//! | 0x18 | 4 | unknown; picasso stores the size of the DVLP, which is where official files put the filename symbol table ([`DvlpInfo::field_18`]) |
//! | 0x1C | 4 | unknown ([`DvlpInfo::field_1c`]) |
//! | 0x20 | 4 | relative offset of the filename symbol table |
//! | 0x24 | 4 | size in bytes of the filename symbol table |
//!
//! **DVLE header** (0x40 bytes, at the offset the DVLB lists; tables are relative to the DVLE)
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0x00 | 4 | `"DVLE"` |
//! | 0x04 | 2 | version (picasso 2.x: 0x1002, older picasso: 0) |
//! | 0x06 | 1 | shader type: 0 vertex, 1 geometry |
//! | 0x07 | 1 | merge-outmaps flag (0 or 1) |
//! | 0x08 | 4 | entry point, in words |
//! | 0x0C | 4 | end of the entry procedure, in words |
//! | 0x10 | 2 | input register mask |
//! | 0x12 | 2 | output register mask |
//! | 0x14 | 4 | geometry-shader input mode: mode, fixed-mode first uniform, variable-mode vertex count, fixed-mode vertex count |
//! | 0x18 | 8 | constant table: offset, count (20-byte entries) |
//! | 0x20 | 8 | label table: offset, count (16-byte entries) |
//! | 0x28 | 8 | output table: offset, count (8-byte entries) |
//! | 0x30 | 8 | uniform table: offset, count (8-byte entries) |
//! | 0x38 | 8 | symbol table: offset, size in bytes |
//!
//! **Table entries**
//!
//! | table | layout |
//! |---|---|
//! | constant | u16 type (0 bool, 1 ivec, 2 fvec) · u16 register within its file · 16-byte payload: bool = u32 0/1 and 12 zero bytes; ivec = 4 bytes x,y,z,w and 12 zero bytes; fvec = 4 × u32 holding float24 bit patterns |
//! | label | u16 id · u16 unknown · u32 word offset · u32 size in words · u32 symbol offset |
//! | output | one u64: bits 0–15 semantic, 16–31 output register, 32–35 component mask (bit 0 = x), the rest unknown |
//! | uniform | u32 symbol offset · u16 first register · u16 last register (inclusive), in the unified numbering of [`RegisterFile`] |
//! | symbol | NUL-terminated names, addressed by byte offset into the table |
//!
//! # What picasso writes, and what [`Shbin::to_bytes`] therefore writes
//!
//! DVLB header, DVLP header (0x28 bytes), program words, operand descriptors, then each DVLE in
//! turn: its header, constants, outputs, uniforms, symbol names in uniform order, and zero
//! padding up to a multiple of four bytes. picasso writes no labels; it points the empty label
//! table at the place where the output table starts. The writer reproduces all of this exactly,
//! so that `to_bytes(parse(f)) == f` for every file picasso produces.
//!
//! # Compatibility decisions
//!
//! * **Offsets are followed, never assumed.** An early picasso put the DVLE between the DVLP
//!   header and the program words and did not pad the file to four bytes; such files parse. They
//!   are rewritten in the layout above, so only their *content* survives a round trip.
//! * **Every declared structure must lie inside the file** and its size must be computable in
//!   32 bits; otherwise parsing fails with an error naming the structure. Tables with zero
//!   entries are exempt: their offset is meaningless and is not checked (nor kept).
//! * **Limits:** more than 4096 program words (the size of program memory) or more than 128
//!   operand descriptors (what a 7-bit descriptor index can reach) is an error rather than a
//!   silent truncation. Entry points and register numbers are *not* checked against those limits:
//!   that is the loader's concern, and keeping them verbatim keeps the container lossless.
//! * **Unknown enumerations:** a shader type other than 0/1, a merge flag other than 0/1, or a
//!   geometry DVLE whose mode byte is not 0/1/2 is an error (no known loader can use such a
//!   file). Unknown constant types and output semantics are kept as `Unknown` values.
//! * **Non-canonical constant payloads** (a bool other than 0/1, nonzero padding, a float24 word
//!   with bits above 23 set) are kept as [`Constant::Unknown`] with the original type code, so
//!   that rewriting them is lossless; [`Constant::from_raw`] documents the rule.
//! * **Geometry-shader bytes** (0x14–0x17) are always kept verbatim in [`Dvle::gs_raw`]. For a
//!   geometry DVLE the decoded [`Dvle::gs_mode`] is authoritative when writing and overrides the
//!   raw bytes it covers; for a vertex DVLE the raw bytes are written unchanged (hardware ignores
//!   them) and `gs_mode` is only informative.
//! * **Symbols** must be NUL-terminated inside their DVLE's symbol table and valid UTF-8. The
//!   writer emits one fresh copy of each name (uniforms first, in table order, then labels), as
//!   picasso does; official files that share or reorder names are read correctly but rewritten
//!   in this canonical form. Bytes of a symbol table that no entry refers to are dropped.
//! * **DVLP word 0x18** is recorded only when it differs from what picasso would write
//!   ([`DvlpInfo::field_18`] is `None` otherwise), so a `Shbin` built from scratch gets picasso's
//!   value automatically.
//! * **Filename symbol table** (DVLP 0x20/0x24): its bytes are kept verbatim when its size is
//!   nonzero and written right after the operand descriptors, padded to four bytes. A zero size
//!   is written as offset 0, size 0.
//! * A file with zero DVLEs is accepted: the program blob is still well defined.

mod error;
mod read;
mod write;

pub use error::{Location, Region, ShbinError, SymbolUser};
pub use picajit_interp::pica::program::{GsInputMode, ShaderKind};

/// Magic at the start of the file.
pub const DVLB_MAGIC: [u8; 4] = *b"DVLB";
/// Magic at the start of the program blob header.
pub const DVLP_MAGIC: [u8; 4] = *b"DVLP";
/// Magic at the start of each DVLE header.
pub const DVLE_MAGIC: [u8; 4] = *b"DVLE";
/// Size of the DVLP header as every known writer emits it.
pub const DVLP_HEADER_SIZE: usize = 0x28;
/// Size of a DVLE header.
pub const DVLE_HEADER_SIZE: usize = 0x40;
/// DVLE version written by picasso 2.x.
pub const PICASSO_DVLE_VERSION: u16 = 0x1002;
/// Largest program accepted, in words: the shader unit's program memory.
pub const MAX_CODE_WORDS: usize = picajit_interp::pica::program::CODE_WORDS;
/// Largest operand-descriptor table accepted.
pub const MAX_OPDESCS: usize = picajit_interp::pica::program::MAX_OPDESCS;

/// Size in bytes of one constant-table entry.
pub const CONSTANT_ENTRY_SIZE: usize = 20;
/// Size in bytes of one label-table entry.
pub const LABEL_ENTRY_SIZE: usize = 16;
/// Size in bytes of one output-table entry.
pub const OUTPUT_ENTRY_SIZE: usize = 8;
/// Size in bytes of one uniform-table entry.
pub const UNIFORM_ENTRY_SIZE: usize = 8;

/// A parsed SHBIN file.
///
/// Build one by hand (the assembler does) or with [`Shbin::parse`]; write it with
/// [`Shbin::to_bytes`]. For any value produced by `parse`, `parse(to_bytes(s)) == s`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Shbin {
    /// Program words shared by every DVLE.
    pub code: Vec<u32>,
    /// Operand-descriptor table, one full 8-byte entry each. The hardware uses the low 32 bits;
    /// the high half is kept so unusual files survive rewriting.
    pub opdescs: Vec<u64>,
    /// DVLP header fields with no effect on execution.
    pub dvlp: DvlpInfo,
    /// The executables, in the order the DVLB lists them.
    pub dvles: Vec<Dvle>,
}

/// DVLP header fields that are not derived from the code and descriptor tables.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DvlpInfo {
    /// Word at 0x04. picasso writes 0; official files repeat the DVLE version here.
    pub version: u32,
    /// Word at 0x18, only when it differs from picasso's value (the size of the DVLP header plus
    /// program words plus operand descriptors). `None` makes the writer use picasso's value.
    pub field_18: Option<u32>,
    /// Word at 0x1C (0 in every known file).
    pub field_1c: u32,
    /// Contents of the filename symbol table (DVLP 0x20/0x24), empty when absent.
    pub filename_symbols: Vec<u8>,
}

/// One executable: an entry point into the shared program plus its own tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dvle {
    /// Header word 0x04 (picasso 2.x writes [`PICASSO_DVLE_VERSION`]).
    pub version: u16,
    /// Which shader unit runs this entry point.
    pub kind: ShaderKind,
    /// Whether the vertex and geometry output maps are merged (picasso sets it when a geometry
    /// shader declares a `dummy` output).
    pub merge_outmaps: bool,
    /// First word of the entry procedure.
    pub main: u32,
    /// Word after the last word of the entry procedure.
    pub endmain: u32,
    /// Bit n set = input register vn is used.
    pub input_mask: u16,
    /// Bit n set = output register on is written.
    pub output_mask: u16,
    /// How a geometry shader receives its vertices, decoded from [`Dvle::gs_raw`]. Meaningful for
    /// geometry DVLEs only; for a vertex DVLE it is whatever the bytes decode to (`Point` if they
    /// do not decode). See the module docs for which of the two wins when writing.
    pub gs_mode: GsInputMode,
    /// Header bytes 0x14–0x17 as found in the file.
    pub gs_raw: [u8; 4],
    /// Values loaded into uniform registers when this DVLE is bound.
    pub constants: Vec<Constant>,
    /// Label table (absent from picasso output).
    pub labels: Vec<Label>,
    /// Output map: which output register carries which vertex attribute.
    pub outputs: Vec<Output>,
    /// Named uniform ranges (and, from picasso, named inputs).
    pub uniforms: Vec<Uniform>,
}

impl Dvle {
    /// An empty DVLE of the given kind with picasso's header defaults (version 0x1002, point
    /// mode for a geometry shader, all other fields zero/empty). Use [`Dvle::set_gs_mode`] to
    /// choose a geometry-shader input mode.
    pub fn new(kind: ShaderKind) -> Dvle {
        Dvle {
            version: PICASSO_DVLE_VERSION,
            kind,
            merge_outmaps: false,
            main: 0,
            endmain: 0,
            input_mask: 0,
            output_mask: 0,
            gs_mode: GsInputMode::Point,
            gs_raw: [0; 4],
            constants: Vec::new(),
            labels: Vec::new(),
            outputs: Vec::new(),
            uniforms: Vec::new(),
        }
    }

    /// Sets [`Dvle::gs_mode`] and makes [`Dvle::gs_raw`] agree with it, with the bytes the mode
    /// does not use set to zero (as picasso leaves them). Keeping both in step is what makes
    /// `parse(to_bytes(s)) == s` hold for a hand-built geometry DVLE.
    pub fn set_gs_mode(&mut self, mode: GsInputMode) {
        self.gs_mode = mode;
        self.gs_raw = encode_gs_mode(mode, [0; 4]);
    }

    /// The four bytes the writer emits at header offset 0x14.
    pub fn gs_header_bytes(&self) -> [u8; 4] {
        match self.kind {
            ShaderKind::Vertex => self.gs_raw,
            ShaderKind::Geometry => encode_gs_mode(self.gs_mode, self.gs_raw),
        }
    }

    /// The uniform entry with this name, if any (what libctru's `DVLE_GetUniformRegister` looks
    /// up).
    pub fn uniform(&self, name: &str) -> Option<&Uniform> {
        self.uniforms.iter().find(|u| u.name == name)
    }
}

/// Decodes header bytes 0x14–0x17 into an input mode; `None` for an unknown mode byte.
///
/// Variable mode takes its first uniform from byte 0x15 too. picasso leaves that byte zero in
/// variable mode, which matches the hardware placing the vertex count in `c0`.
pub fn decode_gs_mode(bytes: [u8; 4]) -> Option<GsInputMode> {
    let [mode, fixed_start, variable_count, fixed_count] = bytes;
    match mode {
        0 => Some(GsInputMode::Point),
        1 => Some(GsInputMode::Variable {
            first_uniform: fixed_start,
            full_vertices: variable_count,
        }),
        2 => Some(GsInputMode::Fixed {
            first_uniform: fixed_start,
            vertices: fixed_count,
        }),
        _ => None,
    }
}

/// Encodes an input mode over `base`: the bytes the mode defines are replaced, the others are
/// taken from `base`, so that `decode_gs_mode(encode_gs_mode(m, b)) == Some(m)` for every `b`.
pub fn encode_gs_mode(mode: GsInputMode, base: [u8; 4]) -> [u8; 4] {
    let mut out = base;
    match mode {
        GsInputMode::Point => out[0] = 0,
        GsInputMode::Variable {
            first_uniform,
            full_vertices,
        } => {
            out[0] = 1;
            out[1] = first_uniform;
            out[2] = full_vertices;
        }
        GsInputMode::Fixed {
            first_uniform,
            vertices,
        } => {
            out[0] = 2;
            out[1] = first_uniform;
            out[3] = vertices;
        }
    }
    out
}

/// Constant-table type code of a boolean constant.
pub const CONSTANT_BOOL: u16 = 0;
/// Constant-table type code of an integer-vector constant.
pub const CONSTANT_IVEC: u16 = 1;
/// Constant-table type code of a float-vector constant.
pub const CONSTANT_FVEC: u16 = 2;

/// One constant-table entry. `reg` is the index within the register's own file (`c5` → 5,
/// `i1` → 1, `b3` → 3) and is not range-checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Constant {
    /// `b<reg>` = `value`.
    Bool {
        /// Boolean register index.
        reg: u16,
        /// Its value.
        value: bool,
    },
    /// `i<reg>` = (x, y, z, w).
    IVec {
        /// Integer register index.
        reg: u16,
        /// x, y, z, w.
        value: [u8; 4],
    },
    /// `c<reg>` = four float24 bit patterns (x, y, z, w), each in the low 24 bits.
    FVec {
        /// Float register index.
        reg: u16,
        /// x, y, z, w as float24 bits.
        value: [u32; 4],
    },
    /// An entry of an unknown type, or of a known type whose payload is not in the canonical
    /// form described at [`Constant::from_raw`]. Kept byte for byte.
    Unknown {
        /// Type code.
        ty: u16,
        /// Register index.
        reg: u16,
        /// The 16 payload bytes.
        payload: [u8; 16],
    },
}

impl Constant {
    /// Builds a constant from a raw table entry.
    ///
    /// A typed variant is produced only when writing it back yields the same bytes: a bool must
    /// be the word 0 or 1 followed by 12 zero bytes, an ivec 4 bytes followed by 12 zero bytes,
    /// an fvec four words below 2^24. Anything else becomes [`Constant::Unknown`].
    pub fn from_raw(ty: u16, reg: u16, payload: [u8; 16]) -> Constant {
        let word = |i: usize| {
            u32::from_le_bytes([
                payload[4 * i],
                payload[4 * i + 1],
                payload[4 * i + 2],
                payload[4 * i + 3],
            ])
        };
        let tail_zero = payload[4..].iter().all(|&b| b == 0);
        match ty {
            CONSTANT_BOOL if tail_zero && word(0) <= 1 => Constant::Bool {
                reg,
                value: word(0) == 1,
            },
            CONSTANT_IVEC if tail_zero => Constant::IVec {
                reg,
                value: [payload[0], payload[1], payload[2], payload[3]],
            },
            CONSTANT_FVEC if (0..4).all(|i| word(i) < 1 << 24) => Constant::FVec {
                reg,
                value: [word(0), word(1), word(2), word(3)],
            },
            _ => Constant::Unknown { ty, reg, payload },
        }
    }

    /// Type code as stored in the file.
    pub fn ty(&self) -> u16 {
        match *self {
            Constant::Bool { .. } => CONSTANT_BOOL,
            Constant::IVec { .. } => CONSTANT_IVEC,
            Constant::FVec { .. } => CONSTANT_FVEC,
            Constant::Unknown { ty, .. } => ty,
        }
    }

    /// Register index within its file.
    pub fn reg(&self) -> u16 {
        match *self {
            Constant::Bool { reg, .. }
            | Constant::IVec { reg, .. }
            | Constant::FVec { reg, .. }
            | Constant::Unknown { reg, .. } => reg,
        }
    }

    /// The 16 payload bytes as stored in the file.
    pub fn payload(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        match *self {
            Constant::Bool { value, .. } => out[0] = u8::from(value),
            Constant::IVec { value, .. } => out[..4].copy_from_slice(&value),
            Constant::FVec { value, .. } => {
                for (chunk, word) in out.chunks_exact_mut(4).zip(value) {
                    chunk.copy_from_slice(&word.to_le_bytes());
                }
            }
            Constant::Unknown { payload, .. } => out = payload,
        }
        out
    }

    /// Assembly name of the target register (`"c5"`, `"i0"`, `"b3"`), or `None` for an unknown
    /// type or an index outside its file.
    pub fn register_name(&self) -> Option<String> {
        let (file, limit) = match self {
            Constant::Bool { .. } => (RegisterFile::Bool, 16),
            Constant::IVec { .. } => (RegisterFile::Int, 4),
            Constant::FVec { .. } => (RegisterFile::Float, 96),
            Constant::Unknown { .. } => return None,
        };
        let reg = self.reg();
        (reg < limit).then(|| format!("{}{}", file.prefix(), reg))
    }
}

/// Vertex attribute carried by an output register (output-table bits 0–15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputSemantic {
    /// 0: clip-space position.
    Position,
    /// 1: normal quaternion.
    NormalQuat,
    /// 2: vertex colour.
    Color,
    /// 3: texture coordinate 0 (u, v).
    TexCoord0,
    /// 4: texture coordinate 0 w.
    TexCoord0W,
    /// 5: texture coordinate 1.
    TexCoord1,
    /// 6: texture coordinate 2.
    TexCoord2,
    /// 8: view vector.
    View,
    /// 9: register reserved for geometry-shader input, not sent to the rasteriser.
    Dummy,
    /// Any other code (7 and 10 upwards). Build values with [`OutputSemantic::from_raw`] so that
    /// known codes are never wrapped here.
    Unknown(u16),
}

impl OutputSemantic {
    /// Decodes a semantic code.
    pub fn from_raw(code: u16) -> OutputSemantic {
        match code {
            0 => OutputSemantic::Position,
            1 => OutputSemantic::NormalQuat,
            2 => OutputSemantic::Color,
            3 => OutputSemantic::TexCoord0,
            4 => OutputSemantic::TexCoord0W,
            5 => OutputSemantic::TexCoord1,
            6 => OutputSemantic::TexCoord2,
            8 => OutputSemantic::View,
            9 => OutputSemantic::Dummy,
            other => OutputSemantic::Unknown(other),
        }
    }

    /// The code stored in the file.
    pub fn to_raw(self) -> u16 {
        match self {
            OutputSemantic::Position => 0,
            OutputSemantic::NormalQuat => 1,
            OutputSemantic::Color => 2,
            OutputSemantic::TexCoord0 => 3,
            OutputSemantic::TexCoord0W => 4,
            OutputSemantic::TexCoord1 => 5,
            OutputSemantic::TexCoord2 => 6,
            OutputSemantic::View => 8,
            OutputSemantic::Dummy => 9,
            OutputSemantic::Unknown(code) => code,
        }
    }

    /// picasso's name for the semantic (`None` for unknown codes).
    pub fn picasso_name(self) -> Option<&'static str> {
        Some(match self {
            OutputSemantic::Position => "position",
            OutputSemantic::NormalQuat => "normalquat",
            OutputSemantic::Color => "color",
            OutputSemantic::TexCoord0 => "texcoord0",
            OutputSemantic::TexCoord0W => "texcoord0w",
            OutputSemantic::TexCoord1 => "texcoord1",
            OutputSemantic::TexCoord2 => "texcoord2",
            OutputSemantic::View => "view",
            OutputSemantic::Dummy => "dummy",
            OutputSemantic::Unknown(_) => return None,
        })
    }
}

/// One output-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Output {
    /// What the register carries.
    pub semantic: OutputSemantic,
    /// Output register number (`o<reg>`), bits 16–23 of the entry.
    pub reg: u8,
    /// Components carried, bits 32–35: bit 0 = x, bit 1 = y, bit 2 = z, bit 3 = w (the reverse
    /// of an operand descriptor's destination mask).
    pub mask: u8,
    /// Every other bit of the entry, in place (bits 24–31 and 36–63; zero from picasso). Bits
    /// that belong to the fields above are ignored when writing.
    pub unknown_bits: u64,
}

impl Output {
    /// Entry bits holding `semantic`, `reg` and `mask`.
    pub const KNOWN_BITS: u64 = 0x0000_000F_00FF_FFFF;

    /// An entry with no unknown bits, as picasso writes them.
    pub fn new(semantic: OutputSemantic, reg: u8, mask: u8) -> Output {
        Output {
            semantic,
            reg,
            mask,
            unknown_bits: 0,
        }
    }

    /// Decodes a raw 64-bit entry.
    pub fn from_raw(raw: u64) -> Output {
        Output {
            semantic: OutputSemantic::from_raw(raw as u16),
            reg: (raw >> 16) as u8,
            mask: ((raw >> 32) & 0xF) as u8,
            unknown_bits: raw & !Self::KNOWN_BITS,
        }
    }

    /// The raw 64-bit entry.
    pub fn to_raw(&self) -> u64 {
        u64::from(self.semantic.to_raw())
            | u64::from(self.reg) << 16
            | u64::from(self.mask & 0xF) << 32
            | (self.unknown_bits & !Self::KNOWN_BITS)
    }
}

/// A uniform-table entry: a name for an inclusive range of registers in the unified numbering
/// (see [`RegisterFile`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Uniform {
    /// Name as stored (picasso has already turned `$` into `.`). Must not contain NUL.
    pub name: String,
    /// First register, unified numbering.
    pub first: u16,
    /// Last register (inclusive), unified numbering.
    pub last: u16,
}

impl Uniform {
    /// File and index of the first register.
    pub fn first_register(&self) -> Option<(RegisterFile, u8)> {
        RegisterFile::decode(self.first)
    }

    /// File and index of the last register.
    pub fn last_register(&self) -> Option<(RegisterFile, u8)> {
        RegisterFile::decode(self.last)
    }

    /// The register range in assembly syntax: `"c4"` or `"c4-c7"`; `None` if either end is not
    /// a register.
    pub fn register_range(&self) -> Option<String> {
        let first = register_name(self.first)?;
        if self.first == self.last {
            return Some(first);
        }
        Some(format!("{first}-{}", register_name(self.last)?))
    }
}

/// The register files addressed by the unified numbering of uniform-table entries.
///
/// | unified | registers |
/// |---|---|
/// | 0x00–0x0F | `v0`–`v15` (inputs) |
/// | 0x10–0x6F | `c0`–`c95` |
/// | 0x70–0x73 | `i0`–`i3` |
/// | 0x78–0x87 | `b0`–`b15` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterFile {
    /// Input attributes `v0`–`v15`.
    Input,
    /// Float uniforms `c0`–`c95`.
    Float,
    /// Integer uniforms `i0`–`i3`.
    Int,
    /// Boolean uniforms `b0`–`b15`.
    Bool,
}

impl RegisterFile {
    /// Unified index of register 0 of this file.
    pub fn base(self) -> u16 {
        match self {
            RegisterFile::Input => 0x00,
            RegisterFile::Float => 0x10,
            RegisterFile::Int => 0x70,
            RegisterFile::Bool => 0x78,
        }
    }

    /// Number of registers in this file.
    pub fn count(self) -> u16 {
        match self {
            RegisterFile::Input => 16,
            RegisterFile::Float => 96,
            RegisterFile::Int => 4,
            RegisterFile::Bool => 16,
        }
    }

    /// Assembly prefix: `v`, `c`, `i` or `b`.
    pub fn prefix(self) -> char {
        match self {
            RegisterFile::Input => 'v',
            RegisterFile::Float => 'c',
            RegisterFile::Int => 'i',
            RegisterFile::Bool => 'b',
        }
    }

    /// Splits a unified index into file and index; `None` in the gaps (0x74–0x77, 0x88 up).
    pub fn decode(unified: u16) -> Option<(RegisterFile, u8)> {
        [
            RegisterFile::Input,
            RegisterFile::Float,
            RegisterFile::Int,
            RegisterFile::Bool,
        ]
        .into_iter()
        .find_map(|file| {
            let index = unified.checked_sub(file.base())?;
            (index < file.count()).then_some((file, index as u8))
        })
    }

    /// Unified index of register `index` of this file; `None` if the file has no such register.
    pub fn encode(self, index: u8) -> Option<u16> {
        (u16::from(index) < self.count()).then(|| self.base() + u16::from(index))
    }
}

/// Assembly name (`"v2"`, `"c5"`, `"i0"`, `"b3"`) of a unified register index.
pub fn register_name(unified: u16) -> Option<String> {
    let (file, index) = RegisterFile::decode(unified)?;
    Some(format!("{}{}", file.prefix(), index))
}

/// A label-table entry (found in official files; picasso writes none).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// Label id (entry bytes 0–1).
    pub id: u16,
    /// Entry bytes 2–3, meaning unknown.
    pub unknown: u16,
    /// Word offset into the program.
    pub offset: u32,
    /// Size in words (0xFFFFFFFF in official files when not applicable).
    pub size: u32,
    /// Name from the symbol table. Must not contain NUL.
    pub name: String,
}

/// The largest file [`Shbin::parse`] accepts (16 MiB). A real SHBIN holds at most 4096 code
/// words and 128 descriptors and is a few tens of kilobytes; the parsed value grows with the
/// tables a file declares, so the limit bounds the memory a hostile file can claim.
pub const MAX_SHBIN_BYTES: usize = 16 << 20;

impl Shbin {
    /// Parses a SHBIN file. Never panics; every failure names the structure and file offset at
    /// fault. See the module docs for what is accepted. Files larger than
    /// [`MAX_SHBIN_BYTES`] are rejected.
    pub fn parse(bytes: &[u8]) -> Result<Shbin, ShbinError> {
        if bytes.len() > MAX_SHBIN_BYTES {
            return Err(ShbinError::FileTooLarge {
                file_len: bytes.len(),
            });
        }
        read::parse(bytes)
    }

    /// Serialises in picasso's layout (see the module docs). A value that [`Shbin::parse`] would
    /// reject for its size (more than 4096 words of code, more than 128 descriptors) is still
    /// written, and reading it back fails.
    pub fn to_bytes(&self) -> Vec<u8> {
        write::write(self)
    }
}
