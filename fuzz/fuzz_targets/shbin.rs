//! SHBIN reader: any bytes give a `Shbin` or an error. A file that parses must write back to
//! bytes that parse to the same value, disassemble to source that assembles to the same bytes,
//! and give each DVLE's program (or an error) through the engine API.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picajit::pica::asm::disassemble;
use picajit::pica::engine::program_from_shbin;
use picajit::pica::shbin::Shbin;
use picajit_fuzz::assemble_disassembly;

fuzz_target!(|data: &[u8]| {
    let Ok(shbin) = Shbin::parse(data) else {
        return;
    };
    let bytes = shbin.to_bytes();
    let again = Shbin::parse(&bytes)
        .unwrap_or_else(|e| panic!("a written SHBIN does not parse: {e}\n{shbin:#?}"));
    assert!(
        again == shbin,
        "SHBIN changed through to_bytes/parse\n{shbin:#?}\n{again:#?}"
    );
    let text = disassemble(&shbin);
    if shbin.dvles.is_empty() {
        // A file without a shader: its disassembly is library code only, which the
        // assembler (like picasso) refuses to turn into a SHBIN.
        assert!(
            assemble_disassembly(&text).is_err(),
            "a source without a DVLE assembled\n{text}"
        );
        return;
    }
    let re = assemble_disassembly(&text)
        .unwrap_or_else(|e| panic!("disassembly does not assemble: {e}\n{text}"));
    assert!(
        re.to_bytes() == bytes,
        "disassembly assembles to different bytes\n{text}"
    );
    for index in 0..shbin.dvles.len().min(8) {
        let _ = program_from_shbin(&shbin, index);
    }
});
