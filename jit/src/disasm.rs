//! Host code as text, the same for every ISA's code: x86-64 with iced-x86, AArch64 with
//! yaxpeax-arm, each mark printed above the instruction it names.

use crate::host::Backend;

/// `code[..end]` as `backend` instructions (undecodable AArch64 words as `.word`), each
/// `(offset, text)` of `marks` (sorted by offset) as a `; text` line above the instruction at
/// that offset, then the size of the constant pool that follows `end`.
pub fn disassemble(backend: Backend, code: &[u8], end: usize, marks: &[(usize, String)]) -> String {
    let end = end.min(code.len());
    let mut marks = marks.iter().peekable();
    let mut out = String::new();
    let mut line = |ip: usize, text: &str, out: &mut String| {
        while let Some((_, t)) = marks.next_if(|(off, _)| *off <= ip) {
            out.push_str(&format!("; {t}\n"));
        }
        out.push_str(&format!("  {ip:05x}  {text}\n"));
    };
    match backend {
        Backend::X64 => {
            use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
            let mut dec = Decoder::with_ip(64, &code[..end], 0, DecoderOptions::NONE);
            let mut fmt = IntelFormatter::new();
            let mut text = String::new();
            while dec.can_decode() {
                let ip = dec.ip() as usize;
                let ins = dec.decode();
                text.clear();
                fmt.format(&ins, &mut text);
                line(ip, &text, &mut out);
            }
        }
        Backend::A64 => {
            use yaxpeax_arch::{Decoder, U8Reader};
            use yaxpeax_arm::armv8::a64::InstDecoder;
            let dec = InstDecoder::default();
            for ip in (0..end).step_by(4) {
                let word = &code[ip..(ip + 4).min(end)];
                let mut reader = U8Reader::new(word);
                let text = match dec.decode(&mut reader) {
                    Ok(ins) => ins.to_string(),
                    Err(_) => format!(
                        ".word {:#010x}",
                        word.iter().rev().fold(0u32, |w, b| w << 8 | u32::from(*b))
                    ),
                };
                line(ip, &text, &mut out);
            }
        }
    }
    out.push_str(&format!("; constant pool: {} bytes\n", code.len() - end));
    out
}
