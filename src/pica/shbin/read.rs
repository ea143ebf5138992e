//! SHBIN parser. Every structure is located through the offsets its parent declares and is
//! bounds-checked as a whole before any field of it is decoded, so field decoding itself works on
//! fixed-size arrays and cannot fail.

use super::error::{Location, Region, ShbinError, SymbolUser};
use super::{
    decode_gs_mode, Constant, Dvle, DvlpInfo, GsInputMode, Label, Output, ShaderKind, Shbin,
    Uniform, CONSTANT_ENTRY_SIZE, DVLB_MAGIC, DVLE_HEADER_SIZE, DVLE_MAGIC, DVLP_HEADER_SIZE,
    DVLP_MAGIC, LABEL_ENTRY_SIZE, MAX_CODE_WORDS, MAX_OPDESCS, OUTPUT_ENTRY_SIZE,
    UNIFORM_ENTRY_SIZE,
};

/// Copies a slice into an array. Callers pass slices whose length was already checked; should
/// that ever be wrong the array is zero-filled rather than the parser panicking.
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    for (dst, src) in out.iter_mut().zip(bytes) {
        *dst = *src;
    }
    out
}

fn u16_at<const N: usize>(a: &[u8; N], at: usize) -> u16 {
    u16::from_le_bytes([a[at], a[at + 1]])
}

fn u32_at<const N: usize>(a: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes([a[at], a[at + 1], a[at + 2], a[at + 3]])
}

/// Entry sizes as the `u32` the format's arithmetic uses.
const fn entry(size: usize) -> u32 {
    size as u32
}

struct File<'a> {
    bytes: &'a [u8],
}

impl<'a> File<'a> {
    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn slice(&self, start: u64, size: u32) -> Option<&'a [u8]> {
        let end = start.checked_add(u64::from(size))?;
        let start = usize::try_from(start).ok()?;
        let end = usize::try_from(end).ok()?;
        self.bytes.get(start..end)
    }

    /// A fixed-size structure at an absolute offset.
    fn fixed<const N: usize>(
        &self,
        at: Location,
        region: Region,
        start: u64,
    ) -> Result<[u8; N], ShbinError> {
        let size = entry(N);
        self.slice(start, size)
            .map(array)
            .ok_or(ShbinError::OutOfBounds {
                at,
                region,
                stored_offset: None,
                start,
                count: size,
                entry_size: 1,
                file_len: self.len(),
            })
    }

    /// A table of `count` entries at `stored_offset` bytes past `base`. The format's offsets and
    /// sizes are 32-bit, so a table whose relative end does not fit in 32 bits is reported as an
    /// overflow even if the arithmetic would work in 64 bits. Empty tables are not checked:
    /// writers leave arbitrary offsets in them.
    fn table(
        &self,
        at: Location,
        region: Region,
        base: u64,
        stored_offset: u32,
        count: u32,
        entry_size: u32,
    ) -> Result<&'a [u8], ShbinError> {
        if count == 0 {
            return Ok(&[]);
        }
        let overflow = ShbinError::Overflow {
            at,
            region,
            stored_offset,
            count,
            entry_size,
        };
        let size = count.checked_mul(entry_size).ok_or(overflow.clone())?;
        stored_offset.checked_add(size).ok_or(overflow)?;
        let start = base.saturating_add(u64::from(stored_offset));
        self.slice(start, size).ok_or(ShbinError::OutOfBounds {
            at,
            region,
            stored_offset: Some(stored_offset),
            start,
            count,
            entry_size,
            file_len: self.len(),
        })
    }
}

fn check_magic(at: Location, header: &[u8], expected: [u8; 4]) -> Result<(), ShbinError> {
    let found: [u8; 4] = array(header);
    if found == expected {
        Ok(())
    } else {
        Err(ShbinError::BadMagic {
            at,
            expected,
            found,
        })
    }
}

pub(super) fn parse(bytes: &[u8]) -> Result<Shbin, ShbinError> {
    let file = File { bytes };

    let dvlb: [u8; 8] = file.fixed(Location::Dvlb, Region::Header, 0)?;
    check_magic(Location::Dvlb, &dvlb, DVLB_MAGIC)?;
    let dvle_count = u32_at(&dvlb, 4);
    let offsets = file.table(Location::Dvlb, Region::DvleOffsets, 0, 8, dvle_count, 4)?;

    // The offset table was just shown to fit in the file, so this sum is small.
    let dvlp_start = 8 + 4 * u64::from(dvle_count);
    let (code, opdescs, dvlp) = parse_dvlp(&file, dvlp_start)?;

    let dvles = offsets
        .chunks_exact(4)
        .enumerate()
        .map(|(index, raw)| {
            let offset = u64::from(u32::from_le_bytes(array(raw)));
            parse_dvle(&file, Location::Dvle { index, offset }, offset)
        })
        .collect::<Result<Vec<_>, _>>()?;

    Ok(Shbin {
        code,
        opdescs,
        dvlp,
        dvles,
    })
}

fn parse_dvlp(file: &File<'_>, start: u64) -> Result<(Vec<u32>, Vec<u64>, DvlpInfo), ShbinError> {
    let at = Location::Dvlp { offset: start };
    let header: [u8; DVLP_HEADER_SIZE] = file.fixed(at, Region::Header, start)?;
    check_magic(at, &header, DVLP_MAGIC)?;

    let code_words = u32_at(&header, 0x0C);
    if code_words as usize > MAX_CODE_WORDS {
        return Err(ShbinError::CodeTooLarge {
            at,
            words: code_words,
        });
    }
    let opdesc_count = u32_at(&header, 0x14);
    if opdesc_count as usize > MAX_OPDESCS {
        return Err(ShbinError::TooManyOpdescs {
            at,
            count: opdesc_count,
        });
    }

    let code = file
        .table(
            at,
            Region::Code,
            start,
            u32_at(&header, 0x08),
            code_words,
            4,
        )?
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(array(w)))
        .collect();
    let opdescs = file
        .table(
            at,
            Region::Opdescs,
            start,
            u32_at(&header, 0x10),
            opdesc_count,
            8,
        )?
        .chunks_exact(8)
        .map(|e| u64::from_le_bytes(array(e)))
        .collect();
    let filename_symbols = file
        .table(
            at,
            Region::FilenameSymbols,
            start,
            u32_at(&header, 0x20),
            u32_at(&header, 0x24),
            1,
        )?
        .to_vec();

    // Both counts are bounded by the checks above, so this cannot overflow.
    let picasso_18 = (DVLP_HEADER_SIZE as u32) + 4 * code_words + 8 * opdesc_count;
    let field_18 = Some(u32_at(&header, 0x18)).filter(|&v| v != picasso_18);

    let info = DvlpInfo {
        version: u32_at(&header, 0x04),
        field_18,
        field_1c: u32_at(&header, 0x1C),
        filename_symbols,
    };
    Ok((code, opdescs, info))
}

fn parse_dvle(file: &File<'_>, at: Location, start: u64) -> Result<Dvle, ShbinError> {
    let h: [u8; DVLE_HEADER_SIZE] = file.fixed(at, Region::Header, start)?;
    check_magic(at, &h, DVLE_MAGIC)?;

    let kind = match h[0x06] {
        0 => ShaderKind::Vertex,
        1 => ShaderKind::Geometry,
        value => return Err(ShbinError::UnknownShaderType { at, value }),
    };
    let merge_outmaps = match h[0x07] {
        0 => false,
        1 => true,
        value => return Err(ShbinError::InvalidMergeFlag { at, value }),
    };
    let gs_raw = [h[0x14], h[0x15], h[0x16], h[0x17]];
    let gs_mode = match (decode_gs_mode(gs_raw), kind) {
        (Some(mode), _) => mode,
        // Hardware never looks at these bytes for a vertex shader, so garbage there is harmless
        // (and is kept in `gs_raw`).
        (None, ShaderKind::Vertex) => GsInputMode::Point,
        (None, ShaderKind::Geometry) => {
            return Err(ShbinError::UnknownGsMode {
                at,
                value: gs_raw[0],
            })
        }
    };

    let table = |region, field: usize, entry_size| {
        file.table(
            at,
            region,
            start,
            u32_at(&h, field),
            u32_at(&h, field + 4),
            entry_size,
        )
    };
    let constants = table(Region::Constants, 0x18, entry(CONSTANT_ENTRY_SIZE))?;
    let labels = table(Region::Labels, 0x20, entry(LABEL_ENTRY_SIZE))?;
    let outputs = table(Region::Outputs, 0x28, entry(OUTPUT_ENTRY_SIZE))?;
    let uniforms = table(Region::Uniforms, 0x30, entry(UNIFORM_ENTRY_SIZE))?;
    let symbols = Symbols {
        at,
        table: table(Region::Symbols, 0x38, 1)?,
    };

    let constants = constants
        .chunks_exact(CONSTANT_ENTRY_SIZE)
        .map(|e| {
            let e: [u8; CONSTANT_ENTRY_SIZE] = array(e);
            Constant::from_raw(u16_at(&e, 0), u16_at(&e, 2), array(&e[4..]))
        })
        .collect();
    let labels = labels
        .chunks_exact(LABEL_ENTRY_SIZE)
        .enumerate()
        .map(|(i, e)| {
            let e: [u8; LABEL_ENTRY_SIZE] = array(e);
            Ok(Label {
                id: u16_at(&e, 0),
                unknown: u16_at(&e, 2),
                offset: u32_at(&e, 4),
                size: u32_at(&e, 8),
                name: symbols.name(SymbolUser::Label(i), u32_at(&e, 12))?,
            })
        })
        .collect::<Result<_, ShbinError>>()?;
    let outputs = outputs
        .chunks_exact(OUTPUT_ENTRY_SIZE)
        .map(|e| Output::from_raw(u64::from_le_bytes(array(e))))
        .collect();
    let uniforms = uniforms
        .chunks_exact(UNIFORM_ENTRY_SIZE)
        .enumerate()
        .map(|(i, e)| {
            let e: [u8; UNIFORM_ENTRY_SIZE] = array(e);
            Ok(Uniform {
                name: symbols.name(SymbolUser::Uniform(i), u32_at(&e, 0))?,
                first: u16_at(&e, 4),
                last: u16_at(&e, 6),
            })
        })
        .collect::<Result<_, ShbinError>>()?;

    Ok(Dvle {
        version: u16_at(&h, 0x04),
        kind,
        merge_outmaps,
        main: u32_at(&h, 0x08),
        endmain: u32_at(&h, 0x0C),
        input_mask: u16_at(&h, 0x10),
        output_mask: u16_at(&h, 0x12),
        gs_mode,
        gs_raw,
        constants,
        labels,
        outputs,
        uniforms,
    })
}

struct Symbols<'a> {
    at: Location,
    table: &'a [u8],
}

impl Symbols<'_> {
    fn name(&self, user: SymbolUser, symbol_offset: u32) -> Result<String, ShbinError> {
        // The table lies inside the file, so its length fits in 32 bits.
        let table_size = self.table.len() as u32;
        let rest = usize::try_from(symbol_offset)
            .ok()
            .and_then(|start| self.table.get(start..))
            .filter(|rest| !rest.is_empty())
            .ok_or(ShbinError::SymbolOutOfRange {
                at: self.at,
                user,
                symbol_offset,
                table_size,
            })?;
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(ShbinError::UnterminatedSymbol {
                at: self.at,
                user,
                symbol_offset,
                table_size,
            })?;
        String::from_utf8(rest[..end].to_vec()).map_err(|_| ShbinError::SymbolNotUtf8 {
            at: self.at,
            user,
            symbol_offset,
        })
    }
}
