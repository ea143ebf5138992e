//! SHBIN writer producing picasso's layout byte for byte (see the module docs).

use super::{
    Dvle, ShaderKind, Shbin, CONSTANT_ENTRY_SIZE, DVLB_MAGIC, DVLE_HEADER_SIZE, DVLE_MAGIC,
    DVLP_HEADER_SIZE, DVLP_MAGIC, LABEL_ENTRY_SIZE, OUTPUT_ENTRY_SIZE, UNIFORM_ENTRY_SIZE,
};

/// Sizes are stored as 32-bit words. Anything larger cannot be represented and could not have
/// been held in memory as a parsed file either; saturating keeps the writer total.
fn word(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.0.extend_from_slice(v);
    }
    fn pad4(&mut self) {
        let len = self.0.len().next_multiple_of(4);
        self.0.resize(len, 0);
    }
}

pub(super) fn write(shbin: &Shbin) -> Vec<u8> {
    let dvlp = write_dvlp(shbin);
    let dvles: Vec<Vec<u8>> = shbin.dvles.iter().map(write_dvle).collect();

    let mut out = Out::default();
    out.bytes(&DVLB_MAGIC);
    out.u32(word(dvles.len()));
    let mut offset = word(8 + 4 * dvles.len() + dvlp.len());
    for dvle in &dvles {
        out.u32(offset);
        offset = offset.wrapping_add(word(dvle.len()));
    }
    out.bytes(&dvlp);
    for dvle in &dvles {
        out.bytes(dvle);
    }
    out.0
}

fn write_dvlp(shbin: &Shbin) -> Vec<u8> {
    let code_offset = word(DVLP_HEADER_SIZE);
    let opdesc_offset = code_offset.wrapping_add(word(4 * shbin.code.len()));
    // Official files keep the filename symbol table right after the descriptors, and their word
    // 0x18 equals its offset; picasso writes that same offset while leaving the table empty.
    let tail_offset = opdesc_offset.wrapping_add(word(8 * shbin.opdescs.len()));
    let names = &shbin.dvlp.filename_symbols;

    let mut out = Out::default();
    out.bytes(&DVLP_MAGIC);
    out.u32(shbin.dvlp.version);
    out.u32(code_offset);
    out.u32(word(shbin.code.len()));
    out.u32(opdesc_offset);
    out.u32(word(shbin.opdescs.len()));
    out.u32(shbin.dvlp.field_18.unwrap_or(tail_offset));
    out.u32(shbin.dvlp.field_1c);
    if names.is_empty() {
        out.u32(0);
        out.u32(0);
    } else {
        out.u32(tail_offset);
        out.u32(word(names.len()));
    }
    for &w in &shbin.code {
        out.u32(w);
    }
    for &d in &shbin.opdescs {
        out.u64(d);
    }
    out.bytes(names);
    out.pad4();
    out.0
}

fn write_dvle(dvle: &Dvle) -> Vec<u8> {
    // Symbol table: one copy of every name, uniforms first, each NUL-terminated, as picasso
    // emits it for uniforms.
    let mut symbols = Out::default();
    let mut intern = |name: &str| {
        let at = word(symbols.0.len());
        symbols.bytes(name.as_bytes());
        symbols.u8(0);
        at
    };
    let uniform_names: Vec<u32> = dvle.uniforms.iter().map(|u| intern(&u.name)).collect();
    let label_names: Vec<u32> = dvle.labels.iter().map(|l| intern(&l.name)).collect();

    // Tables follow the header in the order constants, labels, outputs, uniforms, symbols. With
    // no labels this is exactly picasso's layout, including the empty label table's offset.
    let constants_at = word(DVLE_HEADER_SIZE);
    let labels_at = constants_at.wrapping_add(word(dvle.constants.len() * CONSTANT_ENTRY_SIZE));
    let outputs_at = labels_at.wrapping_add(word(dvle.labels.len() * LABEL_ENTRY_SIZE));
    let uniforms_at = outputs_at.wrapping_add(word(dvle.outputs.len() * OUTPUT_ENTRY_SIZE));
    let symbols_at = uniforms_at.wrapping_add(word(dvle.uniforms.len() * UNIFORM_ENTRY_SIZE));

    let mut out = Out::default();
    out.bytes(&DVLE_MAGIC);
    out.u16(dvle.version);
    out.u8(match dvle.kind {
        ShaderKind::Vertex => 0,
        ShaderKind::Geometry => 1,
    });
    out.u8(u8::from(dvle.merge_outmaps));
    out.u32(dvle.main);
    out.u32(dvle.endmain);
    out.u16(dvle.input_mask);
    out.u16(dvle.output_mask);
    out.bytes(&dvle.gs_header_bytes());
    for (offset, count) in [
        (constants_at, dvle.constants.len()),
        (labels_at, dvle.labels.len()),
        (outputs_at, dvle.outputs.len()),
        (uniforms_at, dvle.uniforms.len()),
        (symbols_at, symbols.0.len()),
    ] {
        out.u32(offset);
        out.u32(word(count));
    }

    for constant in &dvle.constants {
        out.u16(constant.ty());
        out.u16(constant.reg());
        out.bytes(&constant.payload());
    }
    for (label, name) in dvle.labels.iter().zip(label_names) {
        out.u16(label.id);
        out.u16(label.unknown);
        out.u32(label.offset);
        out.u32(label.size);
        out.u32(name);
    }
    for output in &dvle.outputs {
        out.u64(output.to_raw());
    }
    for (uniform, name) in dvle.uniforms.iter().zip(uniform_names) {
        out.u32(name);
        out.u16(uniform.first);
        out.u16(uniform.last);
    }
    out.bytes(&symbols.0);
    out.pad4();
    out.0
}
