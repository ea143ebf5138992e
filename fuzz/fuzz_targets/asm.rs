//! Assembler: any text gives a SHBIN or errors that carry a position. Text that assembles must
//! disassemble to source that re-assembles to the same binary. A NUL byte separates source
//! files (up to three), so multi-file assembly (shared procedures, one DVLE per file) is
//! covered too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picajit::pica::asm::{assemble_with_warnings, disassemble, SourceFile};
use picajit::pica::shbin::Shbin;
use picajit_fuzz::assemble_disassembly;

const NAMES: [&str; 3] = ["a.v.pica", "b.g.pica", "c.pica"];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let files: Vec<SourceFile> = text
        .splitn(NAMES.len(), '\0')
        .zip(NAMES)
        .map(|(text, name)| SourceFile { name, text })
        .collect();
    match assemble_with_warnings(&files) {
        Ok((shbin, _warnings)) => {
            let bytes = shbin.to_bytes();
            let parsed = Shbin::parse(&bytes)
                .unwrap_or_else(|e| panic!("assembled SHBIN does not parse: {e}"));
            assert!(
                parsed.to_bytes() == bytes,
                "assembled SHBIN changes through parse/to_bytes"
            );
            let dis = disassemble(&shbin);
            let again = assemble_disassembly(&dis)
                .unwrap_or_else(|e| panic!("disassembly does not assemble: {e}\n{dis}"));
            assert!(
                again.to_bytes() == bytes,
                "disassembly assembles to a different binary\n{dis}"
            );
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "assembly failed without an error");
            for e in &errors {
                assert!(
                    e.line >= 1 && e.column >= 1 && !e.message.is_empty(),
                    "error without a position or message: {e:?}"
                );
            }
        }
    }
});
