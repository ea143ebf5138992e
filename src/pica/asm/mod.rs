//! Assembler and source-level disassembler for picasso's shader assembly language.
//!
//! [`assemble`] turns one or more source files into a [`Shbin`], the way picasso does: one DVLE
//! per file (unless the file says `.nodvle`), procedures shared between files, labels, aliases
//! and constants local to their file. [`disassemble`] turns a [`Shbin`] back into source that
//! assembles to the same SHBIN; [`disassemble_program`] does the same for bare code words and an
//! operand-descriptor table.
//!
//! The accepted language is picasso 2.7's, with a few deliberate differences where picasso
//! silently produces wrong code, and a handful of extensions that let any binary be written
//! down exactly. `docs/assembly.md` is the reference; in short:
//!
//! * **Divergences:** `v15` is valid; negative static offsets (`c8[-2]`) work and are range
//!   checked; upper-case register names (`R5`) mean what they say; `o` registers are not
//!   accepted as sources nor `v` registers as destinations; `i4`–`i7` are errors; constants
//!   may be constant expressions (`1.0/128.0` is 0.0078125, with a warning that picasso's
//!   `atof` reads 1.0) and float ones are converted to float24 by truncation with NaN kept as
//!   NaN; a `-` on a destination is an error; numbers with a leading `0` are decimal; a source
//!   without a DVLE (empty, or `.nodvle` files only) is an error, as in picasso.
//! * **Extensions:** `.word`, `.opdesc` with `desc=N` pins, raw flow targets (`call @0x012, 3`,
//!   `ifc cmp.x, @0x020, 2`, `for i0, @0x030`), raw conditions (`jmpc 6, l`), `f24(0x3F0000)`
//!   constants, `.unit`, `.nonop`, `.uniform`, `.output`, `.constraw`, `.dvleheader`,
//!   `.dvlelabel`, `.dvlp`, and `.entry @main, @endmain`.
//!
//! ```
//! use picajit::pica::asm::{assemble, disassemble, SourceFile};
//!
//! let src = "
//!     .fvec projection[4]
//!     .in inpos v0
//!     .out outpos position
//!     .proc main
//!         dp4 outpos.x, projection[0], inpos
//!         dp4 outpos.y, projection[1], inpos
//!         dp4 outpos.z, projection[2], inpos
//!         dp4 outpos.w, projection[3], inpos
//!         end
//!     .end
//! ";
//! let shbin = assemble(&[SourceFile { name: "mvp.vsh", text: src }]).unwrap();
//! assert_eq!(shbin.code.len(), 5);
//! let text = disassemble(&shbin);
//! let again = assemble(&[SourceFile { name: "dis.vsh", text: &text }]).unwrap();
//! assert_eq!(again.to_bytes(), shbin.to_bytes());
//! ```

mod assemble;
mod disasm;
mod lexer;
mod parser;

use crate::pica::shbin::{ShaderKind, Shbin};
use std::fmt;

/// The most source text [`assemble`] accepts, all files together (64 MiB): a real program is
/// a few hundred kilobytes at most (4096 code words), and the assembler's memory grows with
/// what the source declares, so the limit bounds it. Larger input is an error that says so.
pub const MAX_SOURCE_BYTES: usize = 64 << 20;

/// One source file: a name for messages and its text.
#[derive(Clone, Copy, Debug)]
pub struct SourceFile<'a> {
    /// Name used in error messages (usually the path).
    pub name: &'a str,
    /// The source text.
    pub text: &'a str,
}

/// An assembly error with its position. Lines and columns count from 1; columns count
/// characters. Line markers (`# 12 "x.vsh"`) change the file and line reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    /// File name as given in [`SourceFile::name`] (or by a line marker).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for AsmError {}

/// A warning: something picasso accepts that is probably not what was meant. Same fields as
/// [`AsmError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmWarning {
    /// File name.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The warning text.
    pub message: String,
}

impl fmt::Display for AsmWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: warning: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Assemble source files into a SHBIN, in order. Returns the first error in source order; use
/// [`assemble_with_warnings`] to get all errors and the warnings.
pub fn assemble(files: &[SourceFile]) -> Result<Shbin, AsmError> {
    match assemble_with_warnings(files) {
        Ok((shbin, _)) => Ok(shbin),
        Err(mut errors) => Err(if errors.is_empty() {
            AsmError {
                file: String::new(),
                line: 0,
                column: 0,
                message: "assembly failed".into(),
            }
        } else {
            errors.swap_remove(0)
        }),
    }
}

/// Assemble and also return the warnings. On failure, every error found is returned (at least
/// one; assembly carries on after a bad statement, so later errors may be consequences of
/// earlier ones).
pub fn assemble_with_warnings(
    files: &[SourceFile],
) -> Result<(Shbin, Vec<AsmWarning>), Vec<AsmError>> {
    assemble::assemble_files(files)
}

/// Disassemble a whole SHBIN into one source text.
///
/// The text holds every DVLE of the file: DVLE *n* is the *n*-th unit of the text, units being
/// separated by the `.unit` directive (a picajit extension meaning "a new source file starts
/// here"). All code sits in one unit, so the program words keep their order. Assembling the text
/// gives back the same [`Shbin`] (and so the same bytes from [`Shbin::to_bytes`]): the
/// disassembler checks this itself, preferring plain picasso syntax (procedures, `ifc`/`.else`,
/// `for`, labels, picasso's own descriptor sharing) and falling back, construct by construct and
/// then for the whole file, to the exact forms (explicit descriptor table, raw targets, `.word`).
pub fn disassemble(shbin: &Shbin) -> String {
    disasm::disassemble(shbin)
}

/// Disassemble bare program words and a descriptor table as a single DVLE of the given kind
/// whose entry point is `entry` (and whose `endmain` is the end of the code). Assembling the
/// result reproduces `code` and `opdescs` exactly.
pub fn disassemble_program(code: &[u32], opdescs: &[u64], entry: u32, kind: ShaderKind) -> String {
    disasm::disassemble_program(code, opdescs, entry, kind)
}
