//! `.mem` files: what the original assembler writes and the RTL's test bench loads with
//! `$readmemh` (`rtl/TestBench_THEIA.v`): whitespace-separated hex words, `//` comments. The
//! first word is the file's length, which the assembler prints in *decimal* as twice the row
//! count (the test bench reads it as hex); then each row is two 32-bit halves of a 64-bit word:
//! the entry-point table's rows first, then the code.

use super::asm::TABLE_LEN;

/// A loaded `.mem` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemImage {
    /// Every row: the table, then the code.
    pub words: Vec<u64>,
}

message_error!(
    /// Why a `.mem` file could not be read.
    MemError
);

/// The largest file we read: the instruction memory's 15-bit address space.
pub const MAX_ROWS: usize = 0x8000;

/// The most `.mem` text [`MemImage::parse`] accepts (16 MiB, the same as the assembler's
/// [`super::asm::MAX_SOURCE_BYTES`]): [`MAX_ROWS`] rows with the original assembler's
/// comments are about 2.5 MB, and a file of blank or comment lines would otherwise be scanned
/// however long it is. Larger text is an error that says so.
pub const MAX_TEXT_BYTES: usize = 16 << 20;

/// `$readmemh`'s reading of `text`: the hex words (at most eight digits) separated by white
/// space, `//` comments skipped. The error names a word that is not one (`Some`), or says that
/// there are more than `limit` (`None`; reading stops there, so memory stays bounded).
pub fn hex_words(text: &str, limit: usize) -> Result<Vec<u32>, Option<String>> {
    let mut words = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.find("//").map_or(line, |p| &line[..p]);
        for t in code.split_whitespace() {
            let v = u32::from_str_radix(t, 16)
                .ok()
                .filter(|_| t.len() <= 8)
                .ok_or_else(|| format!("line {}: '{t}' is not a 32-bit hex word", i + 1))?;
            if words.len() == limit {
                return Err(None);
            }
            words.push(v);
        }
    }
    Ok(words)
}

impl MemImage {
    /// Reads the text of a `.mem` file: the length word, then the rows (see the module docs).
    /// Text over [`MAX_TEXT_BYTES`] or more than [`MAX_ROWS`] rows is refused.
    pub fn parse(text: &str) -> Result<MemImage, MemError> {
        if text.len() > MAX_TEXT_BYTES {
            return Err(MemError(format!(
                "the .mem text is {} bytes; at most {MAX_TEXT_BYTES} are accepted",
                text.len()
            )));
        }
        let tokens = hex_words(text, 1 + 2 * MAX_ROWS)
            .map_err(|e| MemError(e.unwrap_or_else(|| format!("more than {MAX_ROWS} rows"))))?;
        let Some((&count, rest)) = tokens.split_first() else {
            return Err(MemError("empty .mem file".into()));
        };
        if rest.len() % 2 != 0 {
            return Err(MemError(format!(
                "{} words after the length: rows are two words",
                rest.len()
            )));
        }
        let words: Vec<u64> = rest
            .chunks(2)
            .map(|p| (p[0] as u64) << 32 | p[1] as u64)
            .collect();
        // The assembler writes the count in decimal; accept the hex reading too (a file written
        // for $readmemh by other tools).
        let decimal = format!("{count:x}").parse::<u32>().ok();
        let n = rest.len() as u32;
        if decimal != Some(n) && count != n {
            return Err(MemError(format!(
                "the length word says {count:x} but the file has {n} words"
            )));
        }
        if words.len() < TABLE_LEN {
            return Err(MemError(format!(
                "{} rows: a .mem program starts with the {TABLE_LEN}-row entry-point table",
                words.len()
            )));
        }
        Ok(MemImage { words })
    }

    /// The entry-point table's values.
    pub fn entries(&self) -> &[u64] {
        &self.words[..TABLE_LEN]
    }

    /// The code after the table.
    pub fn code(&self) -> &[u64] {
        &self.words[TABLE_LEN..]
    }
}
