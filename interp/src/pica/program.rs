//! A shader program as both engines consume it: code words, operand descriptors, entry point
//! and the kind of shader unit it runs on.

use std::fmt;

/// Size of the shader unit's program memory in 32-bit words.
pub const CODE_WORDS: usize = 4096;
/// Operand descriptors the instruction encoding can address: the 7-bit descriptor field of
/// most formats (MAD's 5-bit field reaches the first 32).
pub const MAX_OPDESCS: usize = 128;

/// Longest operand-descriptor table [`Program::new`] accepts. Emulators keep the table as
/// the GPU's upload register fills it, commonly 4096 entries (as many as code words); the
/// entries past [`MAX_OPDESCS`] are never read by any instruction, so they are dropped.
pub const MAX_OPDESC_TABLE: usize = 4096;

/// Which shader unit a program runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ShaderKind {
    /// Vertex shader: one invocation per input vertex, outputs o0-o15.
    #[default]
    Vertex,
    /// Geometry shader: emits vertices and primitives through SETEMIT/EMIT.
    Geometry,
}

impl fmt::Display for ShaderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShaderKind::Vertex => "vertex",
            ShaderKind::Geometry => "geometry",
        })
    }
}

/// How a geometry shader receives its input vertices (the DVLE's geometry-shader fields; README
/// "Examples" and `docs/assembly.md`, `.gsh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum GsInputMode {
    /// One invocation per input vertex; attributes arrive in v0-v15 like a vertex shader.
    #[default]
    Point,
    /// Variable-size primitives: `c[first]` holds the vertex count in every lane and the
    /// vertices' attributes follow in the next float uniforms.
    Variable {
        /// First float uniform written by the input stage.
        first_uniform: u8,
        /// Number of fully defined vertices per primitive.
        full_vertices: u8,
    },
    /// Fixed-size primitives: the vertices' attributes are written to the float uniforms
    /// starting at `first_uniform`.
    Fixed {
        /// First float uniform of the vertex array.
        first_uniform: u8,
        /// Number of vertices per primitive.
        vertices: u8,
    },
}

/// Why a [`Program`] was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramError {
    /// More than [`CODE_WORDS`] code words.
    TooManyWords(usize),
    /// More than [`MAX_OPDESC_TABLE`] operand descriptors.
    TooManyDescriptors(usize),
    /// The entry point is not inside the code.
    EntryOutOfRange { entry: u32, words: usize },
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramError::TooManyWords(n) => {
                write!(
                    f,
                    "program has {n} code words; program memory holds {CODE_WORDS}"
                )
            }
            ProgramError::TooManyDescriptors(n) => write!(
                f,
                "program has {n} operand descriptors; at most {MAX_OPDESC_TABLE} are accepted \
                 (instructions address the first {MAX_OPDESCS})"
            ),
            ProgramError::EntryOutOfRange { entry, words } => write!(
                f,
                "entry point 0x{entry:03x} is outside the program's {words} code words"
            ),
        }
    }
}

impl std::error::Error for ProgramError {}

/// A validated shader program: what both engines take as input.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    code: Vec<u32>,
    opdescs: Vec<u64>,
    entry: u16,
    kind: ShaderKind,
}

impl Program {
    /// Build a program. Descriptor-table entries beyond `opdescs.len()` read as 0 (write
    /// nothing, select `.xxxx`), the deterministic stand-in for uninitialised swizzle memory.
    /// A table longer than [`MAX_OPDESCS`] (up to [`MAX_OPDESC_TABLE`] entries, as emulators
    /// hold it) is cut to its first [`MAX_OPDESCS`] entries: no instruction can address the
    /// others.
    pub fn new(
        code: Vec<u32>,
        mut opdescs: Vec<u64>,
        entry: u32,
        kind: ShaderKind,
    ) -> Result<Program, ProgramError> {
        if code.len() > CODE_WORDS {
            return Err(ProgramError::TooManyWords(code.len()));
        }
        if opdescs.len() > MAX_OPDESC_TABLE {
            return Err(ProgramError::TooManyDescriptors(opdescs.len()));
        }
        opdescs.truncate(MAX_OPDESCS);
        if entry as usize >= code.len() {
            return Err(ProgramError::EntryOutOfRange {
                entry,
                words: code.len(),
            });
        }
        Ok(Program {
            code,
            opdescs,
            entry: entry as u16,
            kind,
        })
    }

    /// Code words.
    pub fn code(&self) -> &[u32] {
        &self.code
    }

    /// Operand descriptors as given (not padded).
    pub fn opdescs(&self) -> &[u64] {
        &self.opdescs
    }

    /// Descriptor `index`, 0 if the table is shorter.
    pub fn opdesc(&self, index: usize) -> u64 {
        self.opdescs.get(index).copied().unwrap_or(0)
    }

    /// Entry point (word address).
    pub fn entry(&self) -> u16 {
        self.entry
    }

    /// Vertex or geometry.
    pub fn kind(&self) -> ShaderKind {
        self.kind
    }

    /// The same program starting at another entry point.
    pub fn with_entry(&self, entry: u32) -> Result<Program, ProgramError> {
        self.at(entry, self.kind)
    }

    /// The same program words from `entry`, run on the `kind` unit: an emulator loads one
    /// program and runs it on the vertex unit and on the geometry unit.
    pub fn at(&self, entry: u32, kind: ShaderKind) -> Result<Program, ProgramError> {
        Program::new(self.code.clone(), self.opdescs.clone(), entry, kind)
    }
}
