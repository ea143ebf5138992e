//! The renders of the original THEIA project's scenes (read from its checkout, named by
//! `PICAJIT_THEIA_DIR`) that `tests/theia_render.rs` and `tests/theia_cli.rs` compare with
//! each scene's `Reference.ppm`: the library holds the counts as bounds, the command line
//! prints them exactly.

/// (scene directory, user shader assembled in place of the scene's code, ROM reading as
/// `RomReading::name` gives it, differing pixels, largest channel difference): the README's
/// pixel table. example3 (reference of 2010-10-22) is identical with the ROM as committed; the
/// other references were rendered by the design of early 2010 or before, and come closest with
/// the `early-2010` reading (no colour for a missed pixel, the ROM's commented-out texel
/// pairing), examples/shaders/example1 to one pixel off by one (docs/theia.md, "Reference
/// images and the ROM reading").
pub const RENDERS: [(&str, Option<&str>, &str, usize, u8); 8] = [
    ("examples/scenes/example3", None, "032c448", 0, 0),
    ("examples/scenes/example3", None, "early-2010", 21064, 255),
    ("examples/scenes/example1", None, "032c448", 35975, 255),
    ("examples/scenes/example2", None, "032c448", 38546, 255),
    (
        "examples/shaders/example1",
        Some("Example1.shdr"),
        "032c448",
        33075,
        255,
    ),
    (
        "examples/shaders/example1",
        Some("Example1.shdr"),
        "early-2010",
        1,
        1,
    ),
    ("examples/scenes/example1", None, "early-2010", 7504, 252),
    ("examples/scenes/example2", None, "early-2010", 10928, 208),
];
