//! The renders of the original THEIA project's scenes (read from its checkout, named by
//! `PICAJIT_THEIA_DIR`) that `tests/theia_render.rs` and `tests/theia_cli.rs` compare with
//! reference images: the library holds the counts as bounds, the command line prints them
//! exactly.

/// A scene's own reference image.
pub const OWN: &str = "Reference.ppm";
/// The 2009-12 RTL's image of examples/scenes/example1's inputs, relative to that scene: it is
/// examples/shaders/example1's reference (docs/theia.md, "Reference images and the ROM
/// reading").
pub const RTL_2009: &str = "../../shaders/example1/Reference.ppm";

/// A render of the README's pixel table: scene directory, user shader assembled in place of
/// the scene's code, reference image relative to the scene, ROM reading as `RomReading::name`
/// gives it, differing pixels, largest channel difference.
pub type Render = (
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
    usize,
    u8,
);

/// The README's pixel table. The references the RTL wrote are
/// reproduced exactly: example3 (2010-10-22) with the ROM as committed, examples/shaders/example1
/// and the 2009-12 RTL's image of examples/scenes/example1's inputs with the `early-2010`
/// reading (no colour for a missed pixel, the ROM's commented-out texel pairing, that time's
/// test bench texture read). examples/scenes/example1 and example2's own references are not
/// RTL output; their counts are information kept as regression bounds.
pub const RENDERS: [Render; 10] = [
    ("examples/scenes/example3", None, OWN, "032c448", 0, 0),
    (
        "examples/scenes/example3",
        None,
        OWN,
        "early-2010",
        21064,
        255,
    ),
    ("examples/scenes/example1", None, OWN, "032c448", 35975, 255),
    ("examples/scenes/example2", None, OWN, "032c448", 38546, 255),
    (
        "examples/shaders/example1",
        Some("Example1.shdr"),
        OWN,
        "032c448",
        33075,
        255,
    ),
    (
        "examples/shaders/example1",
        Some("Example1.shdr"),
        OWN,
        "early-2010",
        0,
        0,
    ),
    (
        "examples/scenes/example1",
        None,
        RTL_2009,
        "032c448",
        33075,
        255,
    ),
    (
        "examples/scenes/example1",
        None,
        RTL_2009,
        "early-2010",
        0,
        0,
    ),
    (
        "examples/scenes/example1",
        None,
        OWN,
        "early-2010",
        7504,
        252,
    ),
    (
        "examples/scenes/example2",
        None,
        OWN,
        "early-2010",
        10928,
        208,
    ),
];
