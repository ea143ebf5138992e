//! Whole-GPU rendering: what the RTL's control unit, host and IO units do around the execution
//! unit, so that a scene directory of the original project (Params.mem, Vertex.mem,
//! Textures.mem, Instructions.mem, read with `$readmemh` by `rtl/TestBench_THEIA.v`) renders to
//! the image its simulation wrote. Facts (cited as `rtl/FILE`, from a checkout of the original
//! project; picajit copies none of its code or data):
//!
//! * Configuration (`rtl/Module_Host.v`, states `HOST_WRITE_SCENE_PARAMS` to
//!   `HOST_PREPARE_NEXT_CORE_CONFIG`): Params words 1-18 are broadcast to registers 0-5 (three
//!   32-bit words x, y, z per register, `rtl/Module_HostWBM.v` and the slave's x/y/z flops);
//!   then each core gets two registers unicast to `CREG_PIXEL_2D_INITIAL_POSITION` (6) and
//!   `CREG_PIXEL_2D_FINAL_POSITION` (7), six words per core, for `MAX_CORES` cores (4 in
//!   `rtl/aDefinitions.v`; example3 needs 8). [`Scene::core_count`] sets it; by default it is
//!   the number of pairs up to the one ending at the image's last row.
//! * Control (`rtl/Unit_Control.v`): INITIAL, CPPU, USERCONSTANTS once; then per pixel RGU,
//!   MAIN once per primitive frame the host broadcasts, PSU2 when any MAIN returned true (the
//!   `FFToggleOnce` hit flop), the user PIXELSHADER, NPG (true: next pixel, false: done). The
//!   control unit names an entry by its index 0x8000 + i; the entry-point unit runs the code
//!   address in bits 15:0 of instruction-memory row i (`rtl/Module_InstructionEntryPoint.v`).
//! * Geometry (`Module_Host.v`, `HOST_BROADCAST_NEXT_VERTEX` ff.): from Vertex word 10 on, seven
//!   registers per frame to `CREG_V0` (44) onwards; frames are sent while the vertex counter
//!   (starting at 1) stays below `(Vertex[6] + 1) * 7` (the test bench's primitive count), so
//!   MAIN runs on frames 0 .. `Vertex[6]-1`.
//! * Swap memory (`rtl/Unit_MEM.v`, `rtl/Module_SwapMemory.v`): registers 32-63 exist twice;
//!   the execution unit uses one bank and the host writes the other; the control unit flips
//!   them when it triggers MAIN (`oFlipMem` with `oFlipMemEnabled` in `CU_TRIGGER_MAIN`).
//! * Output (`rtl/Module_OMemInterface.v`): OMWRITE writes the data's x, y, z to the core's
//!   output memory at the address vector's x, y, z. Texture reads (`Module_TMemInterface.v`)
//!   read the texture words at the address vector's x, y, z.
//! * Image (`rtl/TestBench_THEIA.v`): core k's output memory holds rows `k * H / cores`
//!   onward, three words per pixel, each written as `min(255, word >> 9)` (unsigned).
//!
//! What this model leaves out: cycle timing between cores and host. The control unit checks
//! "scene traverse complete" one cycle after MAIN ends (its own comment flags the race); the
//! model assumes every MAIN outlasts the host's broadcast of the next frame, as the original
//! simulations that produced the reference images imply.

use super::mem::MemImage;
use crate::common::{Engine, DEFAULT_BUDGET};
use picajit_interp::theia::exec::{self, Code, Io, State, Status};
use picajit_interp::theia::Profile;
use picajit_jit::theia::ctx::TheiaCtx;
use picajit_jit::theia::TheiaCompiled;
use std::path::Path;

/// Entry-point indices of the table (`rtl/aDefinitions.v`, `ENTRYPOINT_INDEX_*`).
pub const ENTRY_INITIAL: usize = 0;
pub const ENTRY_CPPU: usize = 1;
pub const ENTRY_RGU: usize = 2;
pub const ENTRY_PSU2: usize = 6;
pub const ENTRY_NPG: usize = 8;
pub const ENTRY_USERCONSTANTS: usize = 9;
pub const ENTRY_PIXELSHADER: usize = 10;
pub const ENTRY_MAIN: usize = 11;

/// Registers the host writes.
const REG_PIXEL_2D_INITIAL: usize = 6;
const REG_V0: usize = 44;
const SWAP_FIRST: usize = 32;
const SWAP_ROWS: usize = 32;
/// Output memory words per core (`rtl/Theia.v`, the OMEM RAM's size).
const OMEM_WORDS: usize = 250_000;
/// Largest image side we accept (the test bench's screen buffer is 200 x 200).
const MAX_SIDE: u32 = 4096;
/// Most primitives per scene we accept.
const MAX_PRIMITIVES: u32 = 1 << 20;

/// A scene as the test bench loads it.
#[derive(Clone, Debug)]
pub struct Scene {
    pub params: Vec<u32>,
    pub vertex: Vec<u32>,
    pub textures: Vec<u32>,
    /// Instruction memory: entry table, then user code.
    pub imem: Vec<u64>,
    /// The GPU's core count (`MAX_CORES` of the RTL) when given; else [`Scene::cores`]
    /// infers it from Params.
    pub core_count: Option<usize>,
    /// How the test bench answers texture reads.
    pub texture_bus: TextureBus,
}

/// Words of the test bench's texture buffer (`TEXTURE_BUFFER_SIZE`, 256 x 256 texels of three
/// words, in every version of `TestBench_THEIA.v`).
pub const TEXTURE_BUFFER_WORDS: u32 = 256 * 256 * 3;

/// How the test bench answers the GPU's texture reads: which word of Textures.mem (as
/// [`Scene::load`] reads it) a read at an address returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextureBus {
    /// The test bench of 032c448 (and since ce3370b, 2010-09-23) copies Textures.mem word for
    /// word into the texture memory, which TMREAD reads at the address; a word past the file
    /// reads 0 here.
    #[default]
    Direct,
    /// The test bench from 1a93456 (2009-11-25) to 648217b (2010-06-09) answers the Wishbone
    /// read of texture address `a` with `rTextures[{1'b0, a[30:0]} + 2]`, the address
    /// clamped to `TEXTURE_BUFFER_SIZE - 1` when it reaches `TEXTURE_BUFFER_SIZE`
    /// (`test_bench/TestBench_THEIA.v`, `rConvertedTextureAddress`, "Add 2 because the first
    /// 2 bytes are text Width, Height"). The Textures.mem files of that time begin with the
    /// width and height (`100 100`); the checkout's have no such header (removed in dcf16d4
    /// and 681b2f1), so for them the read returns word `min(a[30:0], TEXTURE_BUFFER_SIZE - 3)`:
    /// the last texel's green and blue words are never read, the last red word is read in
    /// their place.
    EarlyTestBench,
}

impl TextureBus {
    /// The word a read at `addr` returns from `textures` (Textures.mem without a header).
    pub fn read(self, textures: &[u32], addr: u32) -> u32 {
        let index = match self {
            TextureBus::Direct => addr as usize,
            TextureBus::EarlyTestBench => {
                let converted = (addr & 0x7FFF_FFFF) + 2;
                (converted.min(TEXTURE_BUFFER_WORDS - 1) - 2) as usize
            }
        };
        textures.get(index).copied().unwrap_or(0)
    }
}

/// Most GPU cores we model (each has a 1 MB output memory).
pub const MAX_CORES: usize = 64;
/// Largest scene file we read.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

message_error!(
    /// Why a scene could not be rendered.
    RenderError
);

fn err<T>(s: impl Into<String>) -> Result<T, RenderError> {
    Err(RenderError(s.into()))
}

/// Which version of the ROM's default code, and of the test bench around the GPU, a render
/// follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RomReading {
    /// The ROM as the checkout has it (commit 032c448; unchanged since 0b7cb57, 2010-09-26)
    /// and that commit's test bench ([`TextureBus::Direct`]). examples/scenes/example3's
    /// reference (2010-10-22) is rendered with it.
    #[default]
    AsCommitted,
    /// The design of 2009 and early 2010, whose RTL simulation wrote
    /// examples/shaders/example1's reference: the next-pixel code writes no colour for a
    /// pixel no primitive hits (the `SETX CREG_TEXTURE_COLOR 32'h60000` of rows 55-56 first
    /// appears in 0b7cb57), the texture filter pairs texel 4 with weight 1 and texel 3 with
    /// weight 4, as the ROM's own commented-out lines do (`rtl/Module_ROM.v`, the
    /// `//MUL R1 CREG_TEX_COLOR4 CREG_TEXWEIGHT1` block above rows 268-271), and the test
    /// bench of that time answers texture reads ([`TextureBus::EarlyTestBench`]). With it,
    /// examples/shaders/example1 and examples/scenes/example1's inputs render to that
    /// reference bit for bit (docs/theia.md, "Reference images and the ROM reading").
    Early2010,
}

impl RomReading {
    pub const ALL: [RomReading; 2] = [RomReading::AsCommitted, RomReading::Early2010];

    pub fn name(self) -> &'static str {
        match self {
            RomReading::AsCommitted => "032c448",
            RomReading::Early2010 => "early-2010",
        }
    }

    pub fn from_name(name: &str) -> Option<RomReading> {
        RomReading::ALL.into_iter().find(|r| r.name() == name)
    }

    /// How the test bench of this reading answers texture reads (set it as the scene's
    /// [`Scene::texture_bus`]).
    pub fn texture_bus(self) -> TextureBus {
        match self {
            RomReading::AsCommitted => TextureBus::Direct,
            RomReading::Early2010 => TextureBus::EarlyTestBench,
        }
    }

    /// The ROM words of this reading, from the checkout's words; an error when the rows it
    /// changes do not hold what commit 032c448 has there.
    pub fn apply(self, rom: &[u64]) -> Result<Vec<u64>, RenderError> {
        let mut words = rom.to_vec();
        if self == RomReading::AsCommitted {
            return Ok(words);
        }
        use picajit_interp::theia::{regs, table, Word};
        let r = |n: &str| regs::by_name(n).expect("register name");
        let op = |n: &str| table::by_name(n).expect("operation name").code;
        let mul = |d: &str, a: &str, b: &str| Word::new(op("MUL"), r(d), r(a), r(b)).encode();
        let changes = [
            (
                56,
                Word::with_imm(op("SETX"), r("CREG_TEXTURE_COLOR"), 0x60000).encode(),
                0, // NOP RT_FALSE
            ),
            (
                268,
                mul("R1", "CREG_TEX_COLOR3", "CREG_TEXWEIGHT1"),
                mul("R1", "CREG_TEX_COLOR4", "CREG_TEXWEIGHT1"),
            ),
            (
                271,
                mul("R4", "CREG_TEX_COLOR4", "CREG_TEXWEIGHT4"),
                mul("R4", "CREG_TEX_COLOR3", "CREG_TEXWEIGHT4"),
            ),
        ];
        for (row, want, new) in changes {
            match words.get_mut(row) {
                Some(w) if *w == want => *w = new,
                _ => {
                    return err(format!(
                        "ROM reading {}: row {row} is not the one of commit 032c448",
                        self.name()
                    ))
                }
            }
        }
        Ok(words)
    }
}

/// `$readmemh`'s reading: hex words separated by white space, `//` comments. Text longer
/// than [`MAX_FILE_BYTES`] is refused, as [`Scene::load`] refuses such files.
pub fn readmemh(text: &str) -> Result<Vec<u32>, String> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes of text; at most {MAX_FILE_BYTES} are accepted",
            text.len()
        ));
    }
    super::mem::hex_words(text, usize::MAX).map_err(|e| e.unwrap_or_default())
}

impl Scene {
    /// Reads Params.mem, Vertex.mem, Textures.mem and (unless `imem` is given) Instructions.mem
    /// from a scene directory.
    pub fn load(dir: &Path, imem: Option<Vec<u64>>) -> Result<Scene, RenderError> {
        let read_text = |p: &Path| -> Result<String, RenderError> {
            let len = std::fs::metadata(p)
                .map_err(|e| RenderError(format!("{}: {e}", p.display())))?
                .len();
            if len > MAX_FILE_BYTES {
                return err(format!(
                    "{}: larger than {MAX_FILE_BYTES} bytes",
                    p.display()
                ));
            }
            std::fs::read_to_string(p).map_err(|e| RenderError(format!("{}: {e}", p.display())))
        };
        let read = |name: &str| -> Result<Vec<u32>, RenderError> {
            let p = dir.join(name);
            let text = read_text(&p)?;
            readmemh(&text).map_err(|e| RenderError(format!("{}: {e}", p.display())))
        };
        let imem = match imem {
            Some(m) => m,
            None => {
                let p = dir.join("Instructions.mem");
                let text = read_text(&p)?;
                MemImage::parse(&text)
                    .map_err(|e| RenderError(format!("{}: {e}", p.display())))?
                    .words
            }
        };
        Ok(Scene {
            params: read("Params.mem")?,
            vertex: read("Vertex.mem")?,
            textures: read("Textures.mem")?,
            imem,
            core_count: None,
            texture_bus: TextureBus::Direct,
        })
    }

    fn param_reg(&self, reg: usize) -> [u32; 3] {
        let w = |i: usize| self.params.get(1 + 3 * reg + i).copied().unwrap_or(0);
        [w(0), w(1), w(2)]
    }

    /// Image width and height (`CREG_RESOLUTION`, Q15.17).
    pub fn size(&self) -> Result<(u32, u32), RenderError> {
        let r = self.param_reg(4);
        let (w, h) = (r[0] >> 17, r[1] >> 17);
        if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
            return err(format!("resolution {w}x{h} outside 1..{MAX_SIDE}"));
        }
        Ok((w, h))
    }

    /// Cores: the (initial, final) position pairs after the six broadcast registers, up to the
    /// pair whose final row is the image's last (the shader example's Params.mem appends
    /// light registers after the pairs, which no core receives).
    pub fn cores(&self) -> usize {
        if let Some(n) = self.core_count {
            return n;
        }
        let pairs = self.params.len().saturating_sub(19) / 6;
        let height = self.param_reg(4)[1];
        (0..pairs)
            .find(|&k| self.param_reg(7 + 2 * k)[1] >= height)
            .map_or(pairs, |k| k + 1)
    }

    /// The same scene with each core rendering one row only, `row_offset` rows into its part,
    /// from column `x` to `x + cols - 1`: a small render for comparing engines. (NPG starts
    /// later rows at column 0, so a window is one row.)
    pub fn with_window(&self, x: u32, cols: u32, row_offset: u32) -> Scene {
        let mut s = self.clone();
        for k in 0..self.cores() {
            let y = self.param_reg(6 + 2 * k)[1].saturating_add(row_offset << 17);
            let set = |s: &mut Scene, reg: usize, v: [u32; 3]| {
                for (c, v) in v.into_iter().enumerate() {
                    if let Some(w) = s.params.get_mut(1 + 3 * reg + c) {
                        *w = v;
                    }
                }
            };
            set(&mut s, 6 + 2 * k, [x << 17, y, 0]);
            set(
                &mut s,
                7 + 2 * k,
                [x.saturating_add(cols) << 17, y.saturating_add(1 << 17), 0],
            );
        }
        s
    }

    /// Primitive frames MAIN runs on per pixel.
    pub fn primitives(&self) -> Result<u32, RenderError> {
        let n = self.vertex.get(6).copied().unwrap_or(0);
        if n > MAX_PRIMITIVES {
            return err(format!("{n} primitives (at most {MAX_PRIMITIVES})"));
        }
        Ok(n)
    }

    fn entry(&self, index: usize) -> Result<u16, RenderError> {
        match self.imem.get(index) {
            Some(&w) => Ok(w as u16),
            None => err(format!(
                "the instruction memory has no entry-point row {index}"
            )),
        }
    }

    /// Every entry address the control unit uses (for compiling).
    pub fn entries(&self) -> Result<Vec<u16>, RenderError> {
        [
            ENTRY_INITIAL,
            ENTRY_CPPU,
            ENTRY_USERCONSTANTS,
            ENTRY_RGU,
            ENTRY_MAIN,
            ENTRY_PSU2,
            ENTRY_PIXELSHADER,
            ENTRY_NPG,
        ]
        .iter()
        .map(|&i| self.entry(i))
        .collect()
    }
}

/// One core's execution unit with its register file, on the interpreter (a [`State`]) or on
/// compiled code (a context block kept across runs: no state conversion per run).
pub enum Machine<'a> {
    /// The reference interpreter.
    Interp { code: &'a Code, state: State },
    /// The JIT's code.
    Jit {
        code: &'a TheiaCompiled,
        ctx: Box<TheiaCtx>,
    },
}

impl Machine<'_> {
    /// The register rows (the host writes some; the swap flip exchanges 32-63).
    pub fn regs(&mut self) -> &mut [[u32; 3]] {
        match self {
            Machine::Interp { state, .. } => &mut state.regs,
            Machine::Jit { ctx, .. } => &mut ctx.regs[..Profile::Rtl.register_count()],
        }
    }

    /// Runs from `entry` (state carried from the previous run).
    pub fn run(
        &mut self,
        io: &mut dyn Io,
        entry: u16,
        budget: u64,
    ) -> Result<exec::RunOutcome, picajit_jit::Error> {
        match self {
            Machine::Interp { code, state } => {
                exec::run(Profile::Rtl, code, state, io, entry, budget)
                    .map_err(picajit_jit::Error::Theia)
            }
            Machine::Jit { code, ctx } => code.run_ctx(ctx, io, entry, budget),
        }
    }
}

/// One core's IO side: its output memory and the shared texture memory.
struct CoreIo<'a> {
    omem: Vec<u32>,
    textures: &'a [u32],
    bus: TextureBus,
}

impl Io for CoreIo<'_> {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        for c in 0..3 {
            // A write past the RAM's rows is lost, as in the RAM model.
            if let Some(w) = self.omem.get_mut(addr[c] as usize) {
                *w = data[c];
            }
        }
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        addr.map(|a| self.bus.read(self.textures, a))
    }
}

/// Counters of one render.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub pixels: u64,
    pub runs: u64,
    pub steps: u64,
    pub hits: u64,
}

fn call(
    m: &mut Machine,
    io: &mut CoreIo,
    entry: u16,
    what: &str,
    stats: &mut Stats,
) -> Result<bool, RenderError> {
    let out = m
        .run(io, entry, DEFAULT_BUDGET)
        .map_err(|e| RenderError(format!("{what} (entry {entry:#06x}): {e}")))?;
    stats.runs += 1;
    stats.steps += out.steps;
    match out.status {
        Status::Returned(v) => Ok(v),
        Status::Budget { pc } => err(format!(
            "{what} (entry {entry:#06x}) ran out of its {DEFAULT_BUDGET}-step budget at {pc:#06x}"
        )),
        Status::Stalled { pc, op } => err(format!(
            "{what} (entry {entry:#06x}) stalls at {pc:#06x} (operation {op:#x})"
        )),
    }
}

/// Renders core `core`'s part of the scene; returns its output memory.
pub fn render_core(
    scene: &Scene,
    m: &mut Machine,
    core: usize,
    stats: &mut Stats,
) -> Result<Vec<u32>, RenderError> {
    let (w, h) = scene.size()?;
    let max_pixels = u64::from(w) * u64::from(h);
    let prims = scene.primitives()? as usize;
    let regs = m.regs();
    regs.fill([0; 3]);
    for (reg, row) in regs.iter_mut().enumerate().take(6) {
        *row = scene.param_reg(reg);
    }
    for i in 0..2 {
        regs[REG_PIXEL_2D_INITIAL + i] = scene.param_reg(6 + 2 * core + i);
    }
    // The host's side of the swap memory.
    let mut io_bank = [[0u32; 3]; SWAP_ROWS];
    let mut io = CoreIo {
        omem: vec![0; OMEM_WORDS],
        textures: &scene.textures,
        bus: scene.texture_bus,
    };
    call(m, &mut io, scene.entry(ENTRY_INITIAL)?, "INITIAL", stats)?;
    call(m, &mut io, scene.entry(ENTRY_CPPU)?, "CPPU", stats)?;
    call(
        m,
        &mut io,
        scene.entry(ENTRY_USERCONSTANTS)?,
        "USERCONSTANTS",
        stats,
    )?;
    let (rgu, main, psu2, shader, npg) = (
        scene.entry(ENTRY_RGU)?,
        scene.entry(ENTRY_MAIN)?,
        scene.entry(ENTRY_PSU2)?,
        scene.entry(ENTRY_PIXELSHADER)?,
        scene.entry(ENTRY_NPG)?,
    );
    loop {
        stats.pixels += 1;
        if stats.pixels > max_pixels {
            return err(format!(
                "core {core}: NPG did not finish within {max_pixels} pixels"
            ));
        }
        call(m, &mut io, rgu, "RGU", stats)?;
        let mut hit = false;
        for frame in 0..prims {
            for (r, row) in io_bank[REG_V0 - SWAP_FIRST..REG_V0 - SWAP_FIRST + 7]
                .iter_mut()
                .enumerate()
            {
                let base = 10 + 21 * frame + 3 * r;
                *row = [0, 1, 2].map(|c| scene.vertex.get(base + c).copied().unwrap_or(0));
            }
            // CU_TRIGGER_MAIN flips the swap memory.
            let regs = m.regs();
            for (i, row) in io_bank.iter_mut().enumerate() {
                std::mem::swap(row, &mut regs[SWAP_FIRST + i]);
            }
            hit |= call(m, &mut io, main, "MAIN", stats)?;
        }
        if hit {
            stats.hits += 1;
            call(m, &mut io, psu2, "PSU2", stats)?;
        }
        call(m, &mut io, shader, "PIXELSHADER", stats)?;
        if !call(m, &mut io, npg, "NPG", stats)? {
            break;
        }
    }
    Ok(io.omem)
}

/// An RGB image, 8 bits per channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Image {
    /// Plain PPM (P3), as the test bench writes (without its per-pixel comments).
    pub fn to_ppm(&self) -> String {
        let mut s = format!("P3\n{} {}\n255\n", self.width, self.height);
        for px in self.rgb.chunks(3) {
            s.push_str(&format!("{} {} {}\n", px[0], px[1], px[2]));
        }
        s
    }

    /// Reads a plain PPM (P3) with `#` comments anywhere, as in the reference images.
    pub fn from_ppm(text: &str) -> Result<Image, String> {
        let mut toks = text
            .lines()
            .map(|l| l.find('#').map_or(l, |p| &l[..p]))
            .flat_map(str::split_whitespace);
        if toks.next() != Some("P3") {
            return Err("not a plain PPM (P3)".into());
        }
        let mut num = |what: &str| -> Result<u32, String> {
            toks.next()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("PPM: bad or missing {what}"))
        };
        let width = num("width")?;
        let height = num("height")?;
        let _max = num("maximum")?;
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(format!("PPM: {width}x{height} is too large"));
        }
        let n = (width * height * 3) as usize;
        let mut rgb = Vec::with_capacity(n);
        for _ in 0..n {
            rgb.push(num("sample")?.min(255) as u8);
        }
        Ok(Image { width, height, rgb })
    }

    /// Differing pixels and the largest channel difference.
    pub fn compare(&self, other: &Image) -> Option<(usize, u8)> {
        if self.width != other.width || self.height != other.height {
            return None;
        }
        let mut px = 0;
        let mut max = 0u8;
        for (a, b) in self.rgb.chunks(3).zip(other.rgb.chunks(3)) {
            let d = a
                .iter()
                .zip(b)
                .map(|(x, y)| x.abs_diff(*y))
                .max()
                .unwrap_or(0);
            if d > 0 {
                px += 1;
                max = max.max(d);
            }
        }
        Some((px, max))
    }
}

/// The test bench's conversion of an output word to a channel.
fn channel(word: u32) -> u8 {
    (word >> 9).min(255) as u8
}

/// Builds the image from each core's output memory (`rtl/TestBench_THEIA.v`: bank k holds
/// `H / cores` rows from address 0).
pub fn compose(scene: &Scene, omems: &[Vec<u32>]) -> Result<Image, RenderError> {
    let (w, h) = scene.size()?;
    let cores = omems.len().max(1) as u32;
    let part = h / cores;
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    for (k, om) in omems.iter().enumerate() {
        for j in 0..part {
            let row = k as u32 * part + j;
            if row >= h {
                break;
            }
            for i in 0..w * 3 {
                let word = om.get((i + j * w * 3) as usize).copied().unwrap_or(0);
                rgb[((row * w * 3) + i) as usize] = channel(word);
            }
        }
    }
    Ok(Image {
        width: w,
        height: h,
        rgb,
    })
}

/// One thread's output memories (in core order) and counters.
type ThreadOutput = (Vec<Vec<u32>>, Stats);

/// Renders a scene on `engine` with `threads` threads over its cores (each thread compiles its
/// own code; [`Engine::Jit`] is the host's JIT, the interpreter on a host without one). Every
/// program run has the default budget ([`DEFAULT_BUDGET`], the ROM's longest routine runs a
/// few hundred instructions).
pub fn render(
    scene: &Scene,
    rom: &[u64],
    engine: Engine,
    threads: usize,
) -> Result<(Image, Stats), RenderError> {
    let cores = scene.cores();
    if cores == 0 {
        return err("Params.mem configures no core (no initial/final position pair)");
    }
    if cores > MAX_CORES {
        return err(format!("{cores} cores (at most {MAX_CORES})"));
    }
    let pairs = scene.params.len().saturating_sub(19) / 6;
    if cores > pairs {
        return err(format!(
            "{cores} cores, but Params.mem has {pairs} initial/final position pairs"
        ));
    }
    let code = Code {
        imem: scene.imem.clone(),
        rom: rom.to_vec(),
    };
    let entries = scene.entries()?;
    let threads = threads.clamp(1, cores);
    let per = cores.div_ceil(threads);
    let results: Vec<Result<ThreadOutput, RenderError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let code = &code;
                let entries = &entries;
                s.spawn(move || {
                    let compiled = match engine.backend() {
                        None => None,
                        Some(b) => Some(
                            picajit_jit::theia::compile(code, Profile::Rtl, b, entries)
                                .map_err(|e| RenderError(e.to_string()))?,
                        ),
                    };
                    let mut stats = Stats::default();
                    let mut out = Vec::new();
                    for core in t * per..((t + 1) * per).min(cores) {
                        // Each core starts from reset: zero registers and result flops.
                        let mut m = match &compiled {
                            None => Machine::Interp {
                                code,
                                state: State::new(Profile::Rtl),
                            },
                            Some(c) => Machine::Jit {
                                code: c,
                                ctx: Box::default(),
                            },
                        };
                        out.push(render_core(scene, &mut m, core, &mut stats)?);
                    }
                    Ok((out, stats))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| err("render thread panicked")))
            .collect()
    });
    let mut omems = Vec::new();
    let mut stats = Stats::default();
    for r in results {
        let (o, s) = r?;
        omems.extend(o);
        stats.pixels += s.pixels;
        stats.runs += s.runs;
        stats.steps += s.steps;
        stats.hits += s.hits;
    }
    Ok((compose(scene, &omems)?, stats))
}
