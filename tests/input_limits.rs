//! Input size limits through every Rust API entry that reads text or bytes: the PICA200
//! assembler (`assemble`, `assemble_with_warnings`, one file or several), `Shbin::parse`, the
//! THEIA assembler (both layouts), `MemImage::parse`, `readmemh`, and the USC parser and
//! `usc::compile`. Each entry accepts input of exactly its limit (a real program padded with
//! comments, so the limit is the only thing that could reject it) and refuses one byte more
//! with an error that names the limit. The CLI and C ABI checks are in `tests/cli.rs`,
//! `tests/theia_cli.rs`, `tests/usc_cli.rs` and `tests/c/test_capi.c`.

use picajit::pica::asm::{assemble, assemble_with_warnings, SourceFile, MAX_SOURCE_BYTES};
use picajit::pica::shbin::{Shbin, ShbinError, MAX_SHBIN_BYTES};
use picajit::theia::asm::{self as theia_asm, Layout};
use picajit::theia::mem::{MemImage, MAX_TEXT_BYTES};
use picajit::theia::render::{readmemh, MAX_FILE_BYTES};
use picajit::usc::{self, UscError};
use picajit_interp::usc::UscOptions;

mod example_files;

use example_files::{assembled, example};

/// `text` followed by comment lines (`comment` starts each) up to exactly `len` bytes.
fn padded(text: &str, comment: &str, len: usize) -> String {
    assert!(text.len() + comment.len() < len);
    let mut s = String::with_capacity(len);
    s.push_str(text);
    if !s.ends_with('\n') {
        s.push('\n');
    }
    let line = format!("{comment}{}\n", "x".repeat(1000));
    while s.len() + line.len() <= len {
        s.push_str(&line);
    }
    // The last line: the comment marker and as many filler bytes as are left.
    let rest = len - s.len();
    if rest > 0 {
        s.push_str(comment);
        s.push_str(&"y".repeat(rest - comment.len()));
    }
    assert_eq!(s.len(), len);
    s
}

#[test]
fn pica_assembler_accepts_its_limit_and_refuses_one_byte_more() {
    let src = example("mvp.v.pica");
    let reference = assembled("mvp.v.pica");

    let at_limit = padded(&src, ";", MAX_SOURCE_BYTES);
    let files = [SourceFile {
        name: "mvp.v.pica",
        text: &at_limit,
    }];
    assert_eq!(assemble(&files).unwrap().to_bytes(), reference.to_bytes());

    let over = padded(&src, ";", MAX_SOURCE_BYTES + 1);
    let files = [SourceFile {
        name: "over.pica",
        text: &over,
    }];
    let e = assemble(&files).unwrap_err();
    assert!(e.message.contains("at most 67108864"), "{e}");
    assert_eq!((e.file.as_str(), e.line, e.column), ("over.pica", 1, 1));
    let errors = assemble_with_warnings(&files).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].message.contains("at most 67108864"), "{errors:?}");
}

#[test]
fn pica_assembler_limit_counts_all_files_together() {
    let src = example("mvp.v.pica");
    // Two files, each well under the limit, one byte over it together.
    let half = MAX_SOURCE_BYTES / 2;
    let first = padded(&src, ";", half);
    let second = padded("", ";", MAX_SOURCE_BYTES + 1 - half);
    let files = [
        SourceFile {
            name: "a.pica",
            text: &first,
        },
        SourceFile {
            name: "b.pica",
            text: &second,
        },
    ];
    let e = assemble(&files).unwrap_err();
    assert!(
        e.message
            .contains(&format!("{} bytes", MAX_SOURCE_BYTES + 1)),
        "{e}"
    );
    assert!(e.message.contains("at most 67108864"), "{e}");
    assert_eq!(e.file, "a.pica");
    // One byte less in the second file: both together are exactly at the limit and assemble.
    let files = [
        files[0],
        SourceFile {
            name: "b.pica",
            text: &second[..second.len() - 1],
        },
    ];
    assert!(assemble_with_warnings(&files).is_ok());
}

#[test]
fn shbin_parse_accepts_its_limit_and_refuses_one_byte_more() {
    let bytes = assembled("mvp.v.pica").to_bytes();
    // At the limit the size check passes and the reader judges the contents: trailing bytes
    // after the last structure are not the size error (whatever the reader makes of them).
    let mut at_limit = bytes.clone();
    at_limit.resize(MAX_SHBIN_BYTES, 0);
    if let Err(e) = Shbin::parse(&at_limit) {
        assert!(!matches!(e, ShbinError::FileTooLarge { .. }), "{e}");
    }
    let mut over = bytes;
    over.resize(MAX_SHBIN_BYTES + 1, 0);
    let e = Shbin::parse(&over).unwrap_err();
    assert_eq!(
        e,
        ShbinError::FileTooLarge {
            file_len: MAX_SHBIN_BYTES + 1
        }
    );
    assert!(e.to_string().contains("at most 16777216"), "{e}");
}

#[test]
fn theia_assembler_accepts_its_limit_and_refuses_one_byte_more() {
    let src = example("theia/grayscale.theia");
    let reference = theia_asm::assemble(&src).unwrap();
    let at_limit = padded(&src, "//", theia_asm::MAX_SOURCE_BYTES);
    assert_eq!(
        theia_asm::assemble(&at_limit).unwrap().imem(),
        reference.imem()
    );
    let over = padded(&src, "//", theia_asm::MAX_SOURCE_BYTES + 1);
    for layout in [Layout::Imem, Layout::Rom] {
        let e = theia_asm::assemble_with(&over, layout).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("at most 16777216"), "{e}");
    }
}

#[test]
fn theia_mem_text_accepts_its_limit_and_refuses_one_byte_more() {
    let program = theia_asm::assemble(&example("theia/grayscale.theia")).unwrap();
    let mem = program.to_mem();
    let at_limit = padded(&mem, "//", MAX_TEXT_BYTES);
    assert_eq!(MemImage::parse(&at_limit).unwrap().words, program.imem());
    let over = padded(&mem, "//", MAX_TEXT_BYTES + 1);
    let e = MemImage::parse(&over).unwrap_err();
    assert!(e.to_string().contains("at most 16777216"), "{e}");
}

#[test]
fn readmemh_accepts_its_limit_and_refuses_one_byte_more() {
    let limit = MAX_FILE_BYTES as usize;
    let at_limit = padded("0000002A DEADBEEF", "//", limit);
    assert_eq!(readmemh(&at_limit).unwrap(), [0x2A, 0xDEAD_BEEF]);
    let over = padded("0000002A DEADBEEF", "//", limit + 1);
    let e = readmemh(&over).unwrap_err();
    assert!(e.contains("at most 67108864"), "{e}");
}

#[test]
fn usc_parse_and_compile_accept_their_limit_and_refuse_one_byte_more() {
    let src = example("usc/vertex_transform.usc");
    let reference = usc::parse(&src).unwrap();
    let limit = usc::parse::MAX_SOURCE_BYTES;
    let at_limit = padded(&src, "#", limit);
    assert_eq!(usc::parse(&at_limit).unwrap(), reference);
    assert!(usc::compile(&at_limit, UscOptions::default()).is_ok());

    let over = padded(&src, "#", limit + 1);
    let e = usc::parse(&over).unwrap_err();
    assert_eq!((e.span.line, e.span.col), (1, 1));
    assert!(e.to_string().contains("larger than 4194304 bytes"), "{e}");
    match usc::compile(&over, UscOptions::default()) {
        Err(UscError::Parse(p)) => assert_eq!(p, e),
        other => panic!("expected the parse error, got {other:?}"),
    }
}
