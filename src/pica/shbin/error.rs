//! Errors reported by [`Shbin::parse`](super::Shbin::parse).

use std::fmt;

/// Which top-level structure an error is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// The DVLB header and its DVLE offset table.
    Dvlb,
    /// The DVLP (program blob), starting at this file offset.
    Dvlp {
        /// File offset of the DVLP header.
        offset: u64,
    },
    /// DVLE number `index` (counting from 0 in DVLB order), starting at this file offset.
    Dvle {
        /// Position in the DVLB's offset table.
        index: usize,
        /// File offset of the DVLE header.
        offset: u64,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::Dvlb => f.write_str("DVLB"),
            Location::Dvlp { offset } => write!(f, "DVLP at {offset:#x}"),
            Location::Dvle { index, offset } => write!(f, "DVLE #{index} at {offset:#x}"),
        }
    }
}

/// A region of the file that a header declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// The fixed-size header of the structure named by the [`Location`].
    Header,
    /// The DVLB's list of DVLE offsets.
    DvleOffsets,
    /// Program words.
    Code,
    /// Operand-descriptor table.
    Opdescs,
    /// DVLP filename symbol table.
    FilenameSymbols,
    /// DVLE constant table.
    Constants,
    /// DVLE label table.
    Labels,
    /// DVLE output table.
    Outputs,
    /// DVLE uniform table.
    Uniforms,
    /// DVLE symbol table.
    Symbols,
}

impl Region {
    fn unit(self) -> &'static str {
        match self {
            Region::Code => "words",
            Region::FilenameSymbols | Region::Symbols | Region::Header => "bytes",
            _ => "entries",
        }
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Region::Header => "header",
            Region::DvleOffsets => "DVLE offset table",
            Region::Code => "program code",
            Region::Opdescs => "operand descriptor table",
            Region::FilenameSymbols => "filename symbol table",
            Region::Constants => "constant table",
            Region::Labels => "label table",
            Region::Outputs => "output table",
            Region::Uniforms => "uniform table",
            Region::Symbols => "symbol table",
        })
    }
}

/// The table entry whose name could not be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolUser {
    /// Uniform-table entry number n.
    Uniform(usize),
    /// Label-table entry number n.
    Label(usize),
}

impl fmt::Display for SymbolUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolUser::Uniform(i) => write!(f, "uniform #{i}"),
            SymbolUser::Label(i) => write!(f, "label #{i}"),
        }
    }
}

/// Why a SHBIN could not be parsed. The `Display` text names the structure, the field and the
/// offsets involved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShbinError {
    /// A structure extends past the end of the file.
    OutOfBounds {
        /// Structure holding the declaration.
        at: Location,
        /// What was being read.
        region: Region,
        /// Offset as stored in the header (relative to the structure), if the region has one.
        stored_offset: Option<u32>,
        /// Absolute file offset of the region.
        start: u64,
        /// Number of entries (words, bytes, ...; see `entry_size`).
        count: u32,
        /// Size of one entry in bytes.
        entry_size: u32,
        /// Length of the file.
        file_len: usize,
    },
    /// A declared offset and size cannot be added up in 32 bits.
    Overflow {
        /// Structure holding the declaration.
        at: Location,
        /// What was being read.
        region: Region,
        /// Offset as stored in the header.
        stored_offset: u32,
        /// Declared number of entries.
        count: u32,
        /// Size of one entry in bytes.
        entry_size: u32,
    },
    /// A structure does not start with its magic.
    BadMagic {
        /// The structure.
        at: Location,
        /// Magic that should be there.
        expected: [u8; 4],
        /// Bytes found instead.
        found: [u8; 4],
    },
    /// The program is larger than program memory.
    CodeTooLarge {
        /// The DVLP.
        at: Location,
        /// Declared size in words.
        words: u32,
    },
    /// More operand descriptors than the hardware table holds.
    TooManyOpdescs {
        /// The DVLP.
        at: Location,
        /// Declared count.
        count: u32,
    },
    /// DVLE shader-type byte (0x06) is neither 0 nor 1.
    UnknownShaderType {
        /// The DVLE.
        at: Location,
        /// Byte found.
        value: u8,
    },
    /// DVLE merge-outmaps byte (0x07) is neither 0 nor 1.
    InvalidMergeFlag {
        /// The DVLE.
        at: Location,
        /// Byte found.
        value: u8,
    },
    /// Geometry DVLE whose input-mode byte (0x14) is not 0, 1 or 2.
    UnknownGsMode {
        /// The DVLE.
        at: Location,
        /// Byte found.
        value: u8,
    },
    /// A name's symbol offset is not inside the DVLE's symbol table.
    SymbolOutOfRange {
        /// The DVLE.
        at: Location,
        /// Entry whose name it is.
        user: SymbolUser,
        /// Offset into the symbol table.
        symbol_offset: u32,
        /// Size of the symbol table.
        table_size: u32,
    },
    /// No NUL between a name's start and the end of the symbol table.
    UnterminatedSymbol {
        /// The DVLE.
        at: Location,
        /// Entry whose name it is.
        user: SymbolUser,
        /// Offset into the symbol table.
        symbol_offset: u32,
        /// Size of the symbol table.
        table_size: u32,
    },
    /// A name is not valid UTF-8.
    SymbolNotUtf8 {
        /// The DVLE.
        at: Location,
        /// Entry whose name it is.
        user: SymbolUser,
        /// Offset into the symbol table.
        symbol_offset: u32,
    },
    /// The file is larger than [`super::MAX_SHBIN_BYTES`].
    FileTooLarge {
        /// Length of the file.
        file_len: usize,
    },
}

impl ShbinError {
    /// The structure the error was found in.
    pub fn location(&self) -> Location {
        match *self {
            ShbinError::OutOfBounds { at, .. }
            | ShbinError::Overflow { at, .. }
            | ShbinError::BadMagic { at, .. }
            | ShbinError::CodeTooLarge { at, .. }
            | ShbinError::TooManyOpdescs { at, .. }
            | ShbinError::UnknownShaderType { at, .. }
            | ShbinError::InvalidMergeFlag { at, .. }
            | ShbinError::UnknownGsMode { at, .. }
            | ShbinError::SymbolOutOfRange { at, .. }
            | ShbinError::UnterminatedSymbol { at, .. }
            | ShbinError::SymbolNotUtf8 { at, .. } => at,
            ShbinError::FileTooLarge { .. } => Location::Dvlb,
        }
    }
}

impl fmt::Display for ShbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.location())?;
        match *self {
            ShbinError::FileTooLarge { file_len } => write!(
                f,
                "the file is {file_len} bytes; a SHBIN may be at most {} (a real one is far \
                 smaller)",
                super::MAX_SHBIN_BYTES
            ),
            ShbinError::OutOfBounds {
                region,
                stored_offset,
                start,
                count,
                entry_size,
                file_len,
                ..
            } => {
                write!(f, "{region} (")?;
                match stored_offset {
                    Some(stored) => write!(f, "offset {stored:#x} = file offset {start:#x}, ")?,
                    None => write!(f, "at file offset {start:#x}, ")?,
                }
                match region {
                    Region::Header | Region::Symbols | Region::FilenameSymbols => {
                        write!(f, "{count:#x} bytes")?
                    }
                    _ => write!(f, "{count} {} of {entry_size} bytes", region.unit())?,
                }
                write!(f, ") runs past the end of the file ({file_len:#x} bytes)")
            }
            ShbinError::Overflow {
                region,
                stored_offset,
                count,
                entry_size,
                ..
            } => write!(
                f,
                "{region} (offset {stored_offset:#x}, {count:#x} {} of {entry_size} bytes) \
                 does not fit in the 32-bit address space",
                region.unit()
            ),
            ShbinError::BadMagic {
                expected, found, ..
            } => write!(
                f,
                "bad magic \"{}\" (expected \"{}\")",
                found.escape_ascii(),
                expected.escape_ascii()
            ),
            ShbinError::CodeTooLarge { words, .. } => write!(
                f,
                "program code of {words} words (header field 0x0c) exceeds the \
                 {}-word program memory",
                super::MAX_CODE_WORDS
            ),
            ShbinError::TooManyOpdescs { count, .. } => write!(
                f,
                "{count} operand descriptors (header field 0x14) exceed the {}-entry table",
                super::MAX_OPDESCS
            ),
            ShbinError::UnknownShaderType { value, .. } => write!(
                f,
                "unknown shader type {value} at header offset 0x06 \
                 (expected 0 = vertex or 1 = geometry)"
            ),
            ShbinError::InvalidMergeFlag { value, .. } => write!(
                f,
                "merge-outmaps flag at header offset 0x07 is {value} (expected 0 or 1)"
            ),
            ShbinError::UnknownGsMode { value, .. } => write!(
                f,
                "unknown geometry shader mode {value} at header offset 0x14 \
                 (expected 0 = point, 1 = variable or 2 = fixed)"
            ),
            ShbinError::SymbolOutOfRange {
                user,
                symbol_offset,
                table_size,
                ..
            } => write!(
                f,
                "{user} name (symbol offset {symbol_offset:#x}) lies outside the symbol table \
                 ({table_size:#x} bytes)"
            ),
            ShbinError::UnterminatedSymbol {
                user,
                symbol_offset,
                table_size,
                ..
            } => write!(
                f,
                "{user} name (symbol offset {symbol_offset:#x}) is not NUL-terminated within \
                 the symbol table ({table_size:#x} bytes)"
            ),
            ShbinError::SymbolNotUtf8 {
                user,
                symbol_offset,
                ..
            } => write!(
                f,
                "{user} name (symbol offset {symbol_offset:#x}) is not valid UTF-8"
            ),
        }
    }
}

impl std::error::Error for ShbinError {}
