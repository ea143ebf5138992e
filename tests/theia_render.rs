//! Whole-GPU rendering of the original project's scenes (`src/theia/render.rs`), compared
//! with the images its RTL simulation wrote. The scenes and the ROM are GPL-2 data of the
//! original project: the test reads them from the checkout named by `PICAJIT_THEIA_DIR` and
//! says SKIPPED without it.
//!
//! * Every scene renders on the x86-64 JIT, with the ROM as committed and (the older
//!   references) with the `early-2010` reading; the differing-pixel count and the largest
//!   channel difference against the reference are printed and asserted: identity for the
//!   references the RTL wrote (example3, shaders/example1, the 2009-12 RTL's image of
//!   scenes/example1's inputs), the achieved counts for the two that are not RTL output
//!   (scenes/example1, scenes/example2).
//! * The RTL of 2009-12 rendered examples/scenes/example1's inputs to the image committed as
//!   examples/shaders/example1/Reference.ppm: both scenes render to it bit for bit with the
//!   `early-2010` reading, whole frames on the interpreter, x86-64 and AArch64.
//! * The interpreter, x86-64 JIT and AArch64 JIT (under unicorn) give the same image and the
//!   same counters on a reduced render of every scene (24 pixels of one row per core, in the
//!   middle of the image, where the objects are).

use picajit::theia::asm;
use picajit::theia::render::{self, Image, RomReading, Scene, TextureBus};
use picajit::theia::rom::{self, Rom};
use picajit::Engine;
use picajit_jit::Backend;
use std::path::PathBuf;
use theia_scenes::RENDERS;

mod theia_scenes;

/// picajit's own scene (`examples/theia/scene`, no ROM code): the image computed by hand from
/// the program's comments, on every engine. Runs everywhere (no checkout needed).
#[test]
fn own_scene_on_every_engine() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/theia/scene");
    let src = std::fs::read_to_string(dir.join("scene.theia")).unwrap();
    let scene = Scene::load(&dir, Some(asm::assemble(&src).unwrap().imem())).unwrap();
    assert_eq!(scene.cores(), 2);
    // The directory's Instructions.mem is the assembler's output for scene.theia.
    assert_eq!(Scene::load(&dir, None).unwrap().imem, scene.imem);
    // Columns 1 and 2 are hit by primitives 0 and 1 (diffuse 0.5 red, 1.0 green) and get the
    // texture words 3-5 (0x200, 0x400, 0x600) added; the test bench keeps bits 16:9, at most 255.
    let row = [[0, 0, 0], [129, 2, 3], [1, 255, 3], [0, 0, 0]];
    let want: Vec<u8> = row.iter().chain(row.iter()).flatten().copied().collect();
    for engine in [Engine::Interp]
        .into_iter()
        .chain(jits().into_iter().map(Engine::from))
    {
        let (img, stats) = render::render(&scene, &[], engine, 2).unwrap();
        assert_eq!((img.width, img.height), (4, 2));
        assert_eq!(img.rgb, want, "{engine:?}");
        assert_eq!(stats.pixels, 8);
        assert_eq!(stats.hits, 4);
        // 3 setup runs per core, then per pixel RGU, 2 MAIN, PSU2 on hits, shader, NPG.
        assert_eq!(stats.runs, 2 * 3 + 8 * 5 + 4);
    }
    // A one-core GPU takes only the first position pair (row 0) and reads both image rows
    // from that core's output memory, as the test bench does: row 1 stays black.
    let mut one = scene.clone();
    one.core_count = Some(1);
    let (img, stats) =
        render::render(&one, &[], Engine::from(Backend::host().unwrap()), 2).unwrap();
    assert_eq!(stats.pixels, 4);
    let mut want_one: Vec<u8> = row.iter().flatten().copied().collect();
    want_one.extend([0; 12]);
    assert_eq!(img.rgb, want_one);
    // The image round-trips through PPM text.
    let (img, _) = render::render(&scene, &[], Engine::Interp, 1).unwrap();
    assert_eq!(Image::from_ppm(&img.to_ppm()).unwrap(), img);
    // Without the ROM, the original scenes' entry points (ROM addresses) are a clear error.
    let mut rom_entries = scene.clone();
    rom_entries.imem[0] = 0x0000;
    let e = render::render(&rom_entries, &[], Engine::Interp, 1).unwrap_err();
    assert!(e.to_string().contains("INITIAL"), "{e}");
}

/// The checkout and its ROM.
fn checkout() -> Option<(PathBuf, Rom)> {
    let root = picajit_testkit::theia_checkout("to render its scenes")?;
    let rom = rom::load(&root).unwrap();
    Some((root, rom))
}

fn load(root: &std::path::Path, dir: &str, shader: Option<&str>) -> Scene {
    let dir = root.join(dir);
    let imem = shader.map(|s| {
        let src = std::fs::read_to_string(dir.join(s)).unwrap();
        asm::assemble(&src).unwrap().imem()
    });
    Scene::load(&dir, imem).unwrap()
}

/// Every render of the README's table, with its counts as bounds (what this model achieves).
#[test]
fn scenes_against_reference_images() {
    let Some((root, rom)) = checkout() else {
        return;
    };
    for (dir, shader, against, name, bound_px, bound_max) in RENDERS {
        let reading = RomReading::from_name(name).unwrap();
        let mut scene = load(&root, dir, shader);
        scene.texture_bus = reading.texture_bus();
        let text = std::fs::read_to_string(root.join(dir).join(against)).unwrap();
        let reference = Image::from_ppm(&text).unwrap();
        let words = reading.apply(&rom.words).unwrap();
        let (img, stats) = render::render(&scene, &words, Engine::from(jits()[0]), 2)
            .unwrap_or_else(|e| panic!("{dir}: {e}"));
        let (px, max) = img.compare(&reference).expect("same size");
        println!(
            "{dir}{} (ROM {name}, against {against}): {}x{}, {} cores, {} pixels, {} hits: {px} differing pixels, largest channel difference {max}",
            shader.map_or(String::new(), |s| format!(" + {s}")),
            img.width,
            img.height,
            scene.cores(),
            stats.pixels,
            stats.hits
        );
        assert_eq!(stats.pixels, u64::from(img.width * img.height), "{dir}");
        assert!(
            px <= bound_px && max <= bound_max,
            "{dir} (ROM {name}): {px} differing pixels (bound {bound_px}), largest difference {max} (bound {bound_max})",
        );
    }
    // The early-2010 reading checks the rows it changes.
    let e = RomReading::Early2010.apply(&rom.words[..100]).unwrap_err();
    assert!(e.to_string().contains("row 268"), "{e}");
}

/// The RTL of freecores/theia_gpu at 3787891 (2009-12-12), simulated whole-frame on
/// examples/scenes/example1's inputs, wrote an image bit-identical to
/// examples/shaders/example1/Reference.ppm (the RTL simulation committed on 2010-01-06 with
/// the same Params, Vertex and Textures files and the user shader Example1.shdr). With the `early-2010` reading both scenes
/// render to that image, pixel for pixel, on every engine, whole frames. The one pixel the
/// reading used to miss, (162, 150), reads the texture's last texel, whose green and blue
/// words that test bench never returns ([`TextureBus::EarlyTestBench`]).
#[test]
fn early_2010_reproduces_the_rtl_images_on_every_engine() {
    let Some((root, rom)) = checkout() else {
        return;
    };
    let words = RomReading::Early2010.apply(&rom.words).unwrap();
    let text =
        std::fs::read_to_string(root.join("examples/shaders/example1/Reference.ppm")).unwrap();
    let rtl_image = Image::from_ppm(&text).unwrap();
    let engines: Vec<Engine> = [Engine::Interp]
        .into_iter()
        .chain(jits().into_iter().map(Engine::from))
        .collect();
    for (dir, shader) in [
        ("examples/scenes/example1", None),
        ("examples/shaders/example1", Some("Example1.shdr")),
    ] {
        let mut scene = load(&root, dir, shader);
        // The as-committed bus reads the last texel's own green and blue words at (162, 150).
        let (direct, _) = render::render(&scene, &words, Engine::from(jits()[0]), 2).unwrap();
        assert_eq!(direct.compare(&rtl_image), Some((1, 1)), "{dir}");
        let pixel = |img: &Image, i: usize| img.rgb[3 * i..3 * i + 3].to_vec();
        let differing: Vec<usize> = (0..40_000)
            .filter(|&i| pixel(&direct, i) != pixel(&rtl_image, i))
            .collect();
        assert_eq!(differing, [150 * 200 + 162], "{dir}");
        assert_eq!(pixel(&direct, differing[0]), [28, 18, 17], "{dir}");
        assert_eq!(pixel(&rtl_image, differing[0]), [28, 18, 18], "{dir}");
        scene.texture_bus = RomReading::Early2010.texture_bus();
        for &engine in &engines {
            let t = std::time::Instant::now();
            let (img, stats) = render::render(&scene, &words, engine, 2).unwrap();
            println!(
                "{dir} (early-2010) on {engine:?}: {:.1} s",
                t.elapsed().as_secs_f64()
            );
            assert_eq!(stats.pixels, 40_000, "{dir} {engine:?}");
            assert_eq!(
                img.compare(&rtl_image),
                Some((0, 0)),
                "{dir} on {engine:?}: not the RTL's image"
            );
            assert!(img == rtl_image, "{dir} on {engine:?}");
        }
    }
}

/// The early test bench's texture read against the lines it follows (`TextureBus`), on a
/// header-less buffer whose word i holds i.
#[test]
fn texture_bus_reads() {
    let words: Vec<u32> = (0..render::TEXTURE_BUFFER_WORDS).collect();
    let last = render::TEXTURE_BUFFER_WORDS - 1;
    for (addr, direct, early) in [
        (0, 0, 0),
        (762, 762, 762),
        (last - 2, last - 2, last - 2),
        // The last texel's green and blue: the early bench's address + 2 reaches the buffer's
        // size and is clamped to its last word, which holds the last texel's red.
        (last - 1, last - 1, last - 2),
        (last, last, last - 2),
        (last + 1, 0, last - 2),
        (0x7FFF_FFFF, 0, last - 2),
        // Bit 31 is dropped ({1'b0, ADR_I[30:0]} + 2).
        (0x8000_0001, 0, 1),
        (0xFFFF_FFFF, 0, last - 2),
    ] {
        assert_eq!(TextureBus::Direct.read(&words, addr), direct, "{addr:#x}");
        assert_eq!(
            TextureBus::EarlyTestBench.read(&words, addr),
            early,
            "{addr:#x}"
        );
    }
    assert_eq!(RomReading::AsCommitted.texture_bus(), TextureBus::Direct);
    assert_eq!(
        RomReading::Early2010.texture_bus(),
        TextureBus::EarlyTestBench
    );
}

#[test]
fn engines_agree_on_reduced_renders() {
    let Some((root, rom)) = checkout() else {
        return;
    };
    // Each scene once: every scene has a render with the ROM as committed.
    let committed = RomReading::AsCommitted.name();
    for (dir, shader, ..) in RENDERS.into_iter().filter(|r| r.2 == committed) {
        let full = load(&root, dir, shader);
        let (w, h) = full.size().unwrap();
        let part = h / full.cores() as u32;
        let scene = full.with_window(w / 2 - 12, 24, part / 2);
        let want = render::render(&scene, &rom.words, Engine::Interp, 1).unwrap();
        assert!(want.1.hits > 0, "{dir}: no hit in the reduced render");
        for b in jits() {
            let got = render::render(&scene, &rom.words, Engine::from(b), 2).unwrap();
            assert_eq!(got.1, want.1, "{dir} {b}: counters");
            assert!(
                got.0 == want.0,
                "{dir} {b}: image differs from the interpreter's"
            );
        }
    }
}

/// The JITs that run here: the x86-64 one only on x86-64 hosts (an AArch64 build has no
/// emulator for it), the host's first.
fn jits() -> Vec<Backend> {
    if cfg!(target_arch = "x86_64") {
        vec![Backend::X64, Backend::A64]
    } else {
        vec![Backend::A64]
    }
}
