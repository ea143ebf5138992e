//! Vertex layouts: where the registers of one vertex sit in a caller buffer, and the two
//! value formats (f32, raw f24 bits).

use crate::capi::cenum::{c_enum, CEnum};
use crate::capi::error::{Error, Result};
use picajit_interp::pica::float::{Rounding, F24};

/// How each value in a caller buffer is encoded. Every value takes 4 bytes in host byte
/// order.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicajitFormat {
    /// `float` (IEEE binary32). Inputs are converted the way the hardware's input stage
    /// converts attributes (in f24 mode: rounded to f24 with the engine's rounding).
    PICAJIT_FORMAT_F32 = 0,
    /// `uint32_t` holding a raw f24 pattern in bits 0-23 (bits 24-31 are ignored on input and
    /// written as 0). Inputs are taken exactly, including f24 patterns arithmetic would flush.
    /// Outputs are exact in f24 mode; in f32 mode a value with no exact f24 form is rounded
    /// toward zero to f24.
    PICAJIT_FORMAT_F24 = 1,
}

c_enum!(PicajitFormat: PICAJIT_FORMAT_F32, PICAJIT_FORMAT_F24);

/// Bit of `PicajitVertexLayout::flags`: the registers present in `mask` are stored one after
/// another in ascending register order (16 bytes each), instead of register n at byte
/// offset 16 * n.
pub const PICAJIT_LAYOUT_PACKED: u32 = 1;

/// The most vertices one `picajit_shader_run_batch(_ex)` or invocations one
/// `picajit_geometry_run_points` call takes (2^24 = 16,777,216; a draw call has at most 65,536
/// indices): more is `PICAJIT_ERR_INVALID_ARGUMENT`, also when the layouts are empty and the
/// buffers span no bytes, so that no count makes a call run for minutes. Split longer work
/// into several calls.
pub const PICAJIT_MAX_BATCH: usize = 1 << 24;

/// Reject a vertex or invocation count over [`PICAJIT_MAX_BATCH`].
pub(crate) fn check_count(count: usize, what: &str) -> Result<()> {
    if count > PICAJIT_MAX_BATCH {
        return Err(Error::invalid(format!(
            "{what}: {count} is more than PICAJIT_MAX_BATCH ({PICAJIT_MAX_BATCH}); split the work"
        )));
    }
    Ok(())
}

/// Where the registers of each vertex sit in a caller buffer. Register n (v`n` for inputs,
/// o`n` for outputs) is present when bit n of `mask` is set; it is 4 consecutive 4-byte
/// values x, y, z, w. Vertex k starts at byte `k * stride`.
///
/// Input registers not in the mask are not read: the shader sees 0.0 there. Output registers
/// not in the mask are not written: the caller's bytes stay as they were.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PicajitVertexLayout {
    /// A `PicajitFormat` value.
    pub format: u32,
    /// `PICAJIT_LAYOUT_*` bits; other bits must be 0.
    pub flags: u32,
    /// Bit n: register n is present. Bits 16-31 must be 0.
    pub mask: u32,
    /// Bytes from the start of one vertex to the start of the next; 0 means the size of one
    /// vertex (16 bytes per present register when packed, else 16 * (highest register + 1)).
    /// Otherwise it must be at least that size; it need not be a multiple of 4 (values are
    /// read and written unaligned).
    pub stride: usize,
}

/// A validated [`PicajitVertexLayout`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) format: PicajitFormat,
    /// Byte offset of each present register within a vertex.
    offsets: [Option<usize>; 16],
    /// Bytes one vertex occupies.
    size: usize,
    pub(crate) stride: usize,
}

impl Layout {
    /// The registers present (bit n = register n).
    pub(crate) fn mask(&self) -> u16 {
        self.offsets
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_some())
            .fold(0, |m, (n, _)| m | 1 << n)
    }

    pub(crate) fn new(raw: &PicajitVertexLayout, what: &str) -> Result<Layout> {
        let format = PicajitFormat::from_raw(raw.format, "value format")
            .map_err(|e| Error::invalid(format!("{what}: {e}")))?;
        if raw.flags & !PICAJIT_LAYOUT_PACKED != 0 {
            return Err(Error::invalid(format!(
                "{what}: unknown flag bits {:#x}",
                raw.flags & !PICAJIT_LAYOUT_PACKED
            )));
        }
        if raw.mask > 0xFFFF {
            return Err(Error::invalid(format!(
                "{what}: mask {:#x} names registers past 15",
                raw.mask
            )));
        }
        let packed = raw.flags & PICAJIT_LAYOUT_PACKED != 0;
        let mut offsets = [None; 16];
        let mut size = 0;
        for (n, offset) in offsets.iter_mut().enumerate() {
            if raw.mask >> n & 1 != 0 {
                let at = if packed { size } else { 16 * n };
                *offset = Some(at);
                size = at + 16;
            }
        }
        let stride = match raw.stride {
            0 => size,
            s if s < size => {
                return Err(Error::invalid(format!(
                    "{what}: stride {s} is smaller than one vertex ({size} bytes)"
                )))
            }
            s => s,
        };
        Ok(Layout {
            format,
            offsets,
            size,
            stride,
        })
    }

    /// Bytes that `count` vertices span in the buffer (the last one without padding).
    pub(crate) fn span(&self, count: usize, what: &str) -> Result<usize> {
        if count == 0 {
            return Ok(0);
        }
        (count - 1)
            .checked_mul(self.stride)
            .and_then(|b| b.checked_add(self.size))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{what}: {count} vertices with stride {} overflow the address space",
                    self.stride
                ))
            })
    }

    /// Vertex `k`'s registers in register representation: f32 values as given (the caller
    /// converts them like attributes), f24 bits exactly. Absent registers read 0.0.
    pub(crate) fn read(&self, buf: &[u8], k: usize) -> [[f32; 4]; 16] {
        let base = k * self.stride;
        let mut regs = [[0.0; 4]; 16];
        for (reg, offset) in regs.iter_mut().zip(self.offsets) {
            if let Some(at) = offset {
                for (c, value) in reg.iter_mut().enumerate() {
                    let i = base + at + 4 * c;
                    let bits = u32::from_ne_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
                    *value = match self.format {
                        PicajitFormat::PICAJIT_FORMAT_F32 => f32::from_bits(bits),
                        PicajitFormat::PICAJIT_FORMAT_F24 => F24::from_bits(bits).to_f32(),
                    };
                }
            }
        }
        regs
    }

    /// Store `regs` as vertex `k`, present registers only.
    pub(crate) fn write(&self, buf: &mut [u8], k: usize, regs: &[[f32; 4]; 16]) {
        let base = k * self.stride;
        for (reg, offset) in regs.iter().zip(self.offsets) {
            if let Some(at) = offset {
                for (c, &value) in reg.iter().enumerate() {
                    let i = base + at + 4 * c;
                    let bits = match self.format {
                        PicajitFormat::PICAJIT_FORMAT_F32 => value.to_bits(),
                        PicajitFormat::PICAJIT_FORMAT_F24 => to_f24(value).bits(),
                    };
                    buf[i..i + 4].copy_from_slice(&bits.to_ne_bytes());
                }
            }
        }
    }
}

/// The f24 form of a register value: exact for every value an f24-mode register can hold,
/// rounded toward zero otherwise (f32 mode).
pub(crate) fn to_f24(value: f32) -> F24 {
    F24::from_f32_exact(value).unwrap_or_else(|| F24::from_f32(value, Rounding::TowardZero))
}

/// One 4-component row of `format` values starting at byte `at`, in register representation.
pub(crate) fn read_row(buf: &[u8], at: usize, format: PicajitFormat) -> [f32; 4] {
    std::array::from_fn(|c| {
        let i = at + 4 * c;
        let bits = u32::from_ne_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        match format {
            PicajitFormat::PICAJIT_FORMAT_F32 => f32::from_bits(bits),
            PicajitFormat::PICAJIT_FORMAT_F24 => F24::from_bits(bits).to_f32(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(format: u32, flags: u32, mask: u32, stride: usize) -> Result<Layout> {
        Layout::new(
            &PicajitVertexLayout {
                format,
                flags,
                mask,
                stride,
            },
            "layout",
        )
    }

    #[test]
    fn sizes_and_offsets() {
        let l = layout(0, 0, 0b1010, 0).unwrap();
        assert_eq!((l.size, l.stride), (64, 64));
        assert_eq!(l.offsets[1], Some(16));
        assert_eq!(l.offsets[3], Some(48));
        let p = layout(0, PICAJIT_LAYOUT_PACKED, 0b1010, 40).unwrap();
        assert_eq!((p.size, p.stride), (32, 40));
        assert_eq!(p.offsets[3], Some(16));
        assert_eq!(p.span(3, "x").unwrap(), 2 * 40 + 32);
        assert_eq!(p.span(0, "x").unwrap(), 0);
        assert!(layout(0, 0, 0b1010, 63).is_err());
        assert!(layout(2, 0, 1, 0).is_err());
        assert!(layout(0, 2, 1, 0).is_err());
        assert!(layout(0, 0, 0x1_0000, 0).is_err());
        assert!(layout(0, 0, 1, usize::MAX).unwrap().span(3, "x").is_err());
    }

    #[test]
    fn f24_round_trip_is_exact_and_f32_values_truncate() {
        let l = layout(1, 0, 1, 0).unwrap();
        let mut buf = vec![0u8; 16];
        // Subnormal pattern, -0, NaN with a payload, 1.0 with junk in the top byte.
        for (c, bits) in [0x00_0001u32, 0x80_0000, 0x7F_1234, 0xAB3F_0000]
            .iter()
            .enumerate()
        {
            buf[4 * c..4 * c + 4].copy_from_slice(&bits.to_ne_bytes());
        }
        let regs = l.read(&buf, 0);
        let mut out = vec![0u8; 16];
        l.write(&mut out, 0, &regs);
        let words: Vec<u32> = out
            .chunks(4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(words, [0x00_0001, 0x80_0000, 0x7F_1234, 0x3F_0000]);
        // 1 + 2^-20 has no exact f24 form: truncated to 1.0.
        assert_eq!(to_f24(1.0 + 1.0 / 1048576.0).bits(), 0x3F_0000);
    }
}
