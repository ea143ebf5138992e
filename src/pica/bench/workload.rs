//! What a benchmark runs: a program, the uniforms it is bound with and a pool of vertex inputs.
//!
//! The examples get uniforms and inputs shaped like real use (perspective projection, unit
//! normals, valid bone indices, lights around the model) so that every branch, loop and
//! special-value path runs as often as it would in a game. Any other shader gets generic
//! values: uniform rows shaped like matrix rows and random attributes.

use crate::pica::engine::program_from_shbin;
use crate::pica::shbin::{Dvle, RegisterFile, Shbin};
use picajit_interp::pica::float::{FloatMode, F24};
use picajit_interp::pica::program::{GsInputMode, Program, ShaderKind};
use picajit_interp::pica::state::Uniforms;
use std::f32::consts::{PI, TAU};

/// The example shaders, in the order the tables list them: `(file name, source)`. Embedded so
/// that `picajit bench` works from any directory.
pub const EXAMPLES: &[(&str, &str)] = &[
    ("mvp.v.pica", include_str!("../../../examples/mvp.v.pica")),
    (
        "lighting.v.pica",
        include_str!("../../../examples/lighting.v.pica"),
    ),
    (
        "lights_loop.v.pica",
        include_str!("../../../examples/lights_loop.v.pica"),
    ),
    (
        "lights8.v.pica",
        include_str!("../../../examples/lights8.v.pica"),
    ),
    (
        "skinning.v.pica",
        include_str!("../../../examples/skinning.v.pica"),
    ),
    (
        "skinning4.v.pica",
        include_str!("../../../examples/skinning4.v.pica"),
    ),
    (
        "branches.v.pica",
        include_str!("../../../examples/branches.v.pica"),
    ),
    (
        "point_to_quad.g.pica",
        include_str!("../../../examples/point_to_quad.g.pica"),
    ),
    (
        "point_to_disc.g.pica",
        include_str!("../../../examples/point_to_disc.g.pica"),
    ),
    (
        "tri_extrude.g.pica",
        include_str!("../../../examples/tri_extrude.g.pica"),
    ),
    (
        "fan_variable.g.pica",
        include_str!("../../../examples/fan_variable.g.pica"),
    ),
];

/// Vertices in the default input pool: the largest standard batch, so that a batch of 4096
/// sees 4096 different vertices.
pub const DEFAULT_POOL: usize = 4096;

/// Deterministic generator (splitmix64): the same inputs on every machine and every run, so
/// that results stay comparable.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator with the given seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// Uniform integer in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// How one input register is filled, per vertex.
pub type InputGen = fn(&mut Rng) -> [f32; 4];

/// A shader prepared for benchmarking.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Name shown in reports (the file name, plus `#n` for DVLE `n` of a multi-DVLE SHBIN).
    pub name: String,
    /// The program.
    pub program: Program,
    /// How a geometry shader receives its input.
    pub gs_mode: GsInputMode,
    /// Program size in instruction words (the compile-time target is stated per size).
    pub words: usize,
    /// The DVLE it came from: uniform names, outputs.
    pub dvle: Dvle,
    /// Constants, int and bool uniforms (mode independent).
    base: Uniforms,
    /// Float uniform rows as f32 values, converted per float mode like an upload.
    rows: Vec<(usize, [f32; 4])>,
    /// Generated inputs per register; `None` leaves the register zero.
    generators: [Option<InputGen>; 16],
    /// Inputs fixed for every vertex (`--set v3=...`), applied after the generators.
    fixed_inputs: Vec<(usize, [f32; 4])>,
    seed: u64,
}

impl Workload {
    /// The examples, with their realistic uniforms and inputs.
    pub fn examples() -> Result<Vec<Workload>, String> {
        EXAMPLES
            .iter()
            .map(|(name, text)| Workload::from_source(name, text))
            .collect()
    }

    /// Assemble one source file. Example file names get their realistic setup.
    pub fn from_source(name: &str, text: &str) -> Result<Workload, String> {
        let shbin = crate::pica::asm::assemble(&[crate::pica::asm::SourceFile { name, text }])
            .map_err(|e| e.to_string())?;
        let mut all = Workload::from_shbin(name, &shbin)?;
        if all.len() != 1 {
            return Err(format!("{name}: expected one DVLE, got {}", all.len()));
        }
        Ok(all.remove(0))
    }

    /// One workload per DVLE of a SHBIN. A file named like an example gets that example's
    /// uniforms and inputs (when its uniform table matches), anything else generic ones.
    pub fn from_shbin(name: &str, shbin: &Shbin) -> Result<Vec<Workload>, String> {
        let file = std::path::Path::new(name)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.to_string());
        if shbin.dvles.is_empty() {
            return Err(format!("{name}: the SHBIN has no DVLE"));
        }
        let many = shbin.dvles.len() > 1;
        shbin
            .dvles
            .iter()
            .enumerate()
            .map(|(index, dvle)| {
                let label = if many {
                    format!("{file}#{index}")
                } else {
                    file.clone()
                };
                let (program, base) =
                    program_from_shbin(shbin, index).map_err(|e| format!("{label}: {e}"))?;
                let mut w = Workload {
                    name: label,
                    program,
                    gs_mode: dvle.gs_mode,
                    words: shbin.code.len(),
                    dvle: dvle.clone(),
                    base,
                    rows: Vec::new(),
                    generators: [None; 16],
                    fixed_inputs: Vec::new(),
                    seed: 0x5EED_0000 + index as u64,
                };
                let known = !many && setup_example(&file, dvle, &mut w).is_ok();
                if !known {
                    w.rows.clear();
                    w.generators = [None; 16];
                    setup_generic(dvle, &mut w);
                }
                Ok(w)
            })
            .collect()
    }

    /// Shader kind.
    pub fn kind(&self) -> ShaderKind {
        self.program.kind()
    }

    /// Uniforms for `mode`: constants, then the workload's rows converted as an upload would.
    pub fn uniforms(&self, mode: FloatMode) -> Uniforms {
        let mut u = self.base.clone();
        for &(index, value) in &self.rows {
            u.set_float_f32(index, value, mode);
        }
        u
    }

    /// `count` vertices of input, converted to register values for `mode` the way the input
    /// stage converts attributes ([`crate::pica::engine::Shader::convert_inputs`]). Vertex `k` is the
    /// same whatever `count` is.
    pub fn inputs(&self, mode: FloatMode, count: usize) -> Vec<[[f32; 4]; 16]> {
        let mut rng = Rng::new(self.seed);
        (0..count)
            .map(|_| {
                let mut v = [[0.0f32; 4]; 16];
                for (reg, generator) in self.generators.iter().enumerate() {
                    if let Some(g) = generator {
                        v[reg] = g(&mut rng);
                    }
                }
                for &(reg, value) in &self.fixed_inputs {
                    v[reg] = value;
                }
                v.map(|row| convert(row, mode))
            })
            .collect()
    }

    /// Set float uniform c`index` (f32 values, converted per mode).
    pub fn set_float(&mut self, index: usize, value: [f32; 4]) {
        self.rows.retain(|&(i, _)| i != index);
        self.rows.push((index, value));
    }

    /// Set int uniform i`index`.
    pub fn set_int(&mut self, index: usize, value: [u8; 4]) {
        self.base.set_int(index, value);
    }

    /// Set bool uniform b`index`.
    pub fn set_bool(&mut self, index: usize, value: bool) {
        self.base.set_bool(index, value);
    }

    /// Give input v`index` the same value in every vertex.
    pub fn set_input(&mut self, index: usize, value: [f32; 4]) {
        self.fixed_inputs.retain(|&(i, _)| i != index);
        self.fixed_inputs.push((index, value));
    }
}

fn convert(row: [f32; 4], mode: FloatMode) -> [f32; 4] {
    match mode {
        FloatMode::F24(r) => row.map(|x| F24::from_f32(x, r).to_f32()),
        FloatMode::F32 => row,
    }
}

/// Register index of `name` in `file`, from the DVLE's uniform table.
fn lookup(dvle: &Dvle, name: &str, file: RegisterFile) -> Result<(usize, usize), String> {
    let u = dvle
        .uniform(name)
        .ok_or_else(|| format!("no uniform or input named '{name}'"))?;
    match (u.first_register(), u.last_register()) {
        (Some((f, first)), Some((g, last))) if f == file && g == file => {
            Ok((first as usize, last as usize - first as usize + 1))
        }
        _ => Err(format!("'{name}' is not a {file:?} register range")),
    }
}

/// Collects an example's settings, failing (so the generic setup is used instead) when the
/// uniform table does not have the expected names and sizes.
struct Setup<'a> {
    dvle: &'a Dvle,
    w: &'a mut Workload,
}

impl Setup<'_> {
    fn rows(&mut self, name: &str, rows: &[[f32; 4]]) -> Result<(), String> {
        let (first, len) = lookup(self.dvle, name, RegisterFile::Float)?;
        if rows.len() > len {
            return Err(format!("'{name}' has {len} rows, not {}", rows.len()));
        }
        for (k, row) in rows.iter().enumerate() {
            self.w.set_float(first + k, *row);
        }
        Ok(())
    }

    fn input(&mut self, name: &str, generator: InputGen) -> Result<(), String> {
        let (reg, _) = lookup(self.dvle, name, RegisterFile::Input)?;
        self.w.generators[reg] = Some(generator);
        Ok(())
    }
}

/// Perspective projection (60 degree field of view, near 0.1, far 100), rows.
fn projection() -> [[f32; 4]; 4] {
    let f = 1.0 / (PI / 6.0).tan();
    let (n, far) = (0.1f32, 100.0f32);
    [
        [f, 0.0, 0.0, 0.0],
        [0.0, f, 0.0, 0.0],
        [0.0, 0.0, (far + n) / (n - far), 2.0 * far * n / (n - far)],
        [0.0, 0.0, -1.0, 0.0],
    ]
}

/// Model-view: a 30 degree turn about y, 5 units in front of the camera.
fn modelview() -> [[f32; 4]; 4] {
    let (s, c) = (PI / 6.0).sin_cos();
    [
        [c, 0.0, s, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [-s, 0.0, c, -5.0],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

/// `count` bones as 3x4 rows: a turn about z and a shift along x per bone.
fn bones(count: usize) -> Vec<[f32; 4]> {
    (0..count)
        .flat_map(|k| {
            let (s, c) = (k as f32 * 0.3).sin_cos();
            let tx = k as f32 * 0.1;
            [[c, -s, 0.0, tx], [s, c, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
        })
        .collect()
}

fn normalize(v: [f32; 3]) -> [f32; 4] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len == 0.0 {
        return [0.0, 0.0, 1.0, 0.0];
    }
    [v[0] / len, v[1] / len, v[2] / len, 0.0]
}

fn position(rng: &mut Rng) -> [f32; 4] {
    [
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        1.0,
    ]
}

fn unit_normal(rng: &mut Rng) -> [f32; 4] {
    normalize([
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    ])
}

fn colour(rng: &mut Rng) -> [f32; 4] {
    [
        rng.range(0.0, 1.0),
        rng.range(0.0, 1.0),
        rng.range(0.0, 1.0),
        1.0,
    ]
}

fn setup_example(file: &str, dvle: &Dvle, w: &mut Workload) -> Result<(), String> {
    let mut s = Setup { dvle, w };
    match file {
        "mvp.v.pica" => {
            s.rows("projection", &projection())?;
            s.rows("modelview", &modelview())?;
            s.input("inpos", position)?;
            s.input("inclr", colour)?;
        }
        "lighting.v.pica" => {
            s.rows("projection", &projection())?;
            s.rows("modelview", &modelview())?;
            s.rows("lightdir", &[normalize([0.3, 0.6, 0.74])])?;
            s.rows("halfvec", &[normalize([0.15, 0.3, 1.0])])?;
            s.rows("lightclr", &[[0.9, 0.85, 0.8, 1.0]])?;
            s.rows("ambient", &[[0.1, 0.1, 0.12, 1.0]])?;
            s.rows("material", &[[16.0, 0.0, 0.0, 0.0]])?;
            s.input("inpos", position)?;
            s.input("innrm", unit_normal)?;
        }
        "lights_loop.v.pica" => {
            s.rows("projection", &projection())?;
            let lights: Vec<[f32; 4]> = (0..8)
                .flat_map(|k| {
                    let a = k as f32 * TAU / 8.0;
                    [
                        normalize([a.cos(), a.sin(), 0.5]),
                        [0.2 + 0.1 * k as f32, 0.5, 0.3, 1.0],
                    ]
                })
                .collect();
            s.rows("lights", &lights)?;
            s.input("inpos", position)?;
            s.input("innrm", unit_normal)?;
        }
        "lights8.v.pica" => {
            s.rows("projection", &projection())?;
            s.rows("modelview", &modelview())?;
            // Eight point lights on a ring around the model (which sits at z = -5).
            let lights: Vec<[f32; 4]> = (0..8)
                .flat_map(|k| {
                    let a = k as f32 * TAU / 8.0;
                    [
                        [3.0 * a.cos(), 3.0 * a.sin(), -4.0, 1.0],
                        [0.3 + 0.05 * k as f32, 0.4, 0.5 - 0.05 * k as f32, 1.0],
                        [0.2, 0.2, 0.2, 1.0],
                        [1.0, 0.1, 0.02, 0.0],
                    ]
                })
                .collect();
            s.rows("lights", &lights)?;
            s.rows("ambient", &[[0.05, 0.05, 0.08, 1.0]])?;
            s.rows("material", &[[24.0, 0.0, 0.0, 0.0]])?;
            s.input("inpos", position)?;
            s.input("innrm", unit_normal)?;
        }
        "skinning.v.pica" => {
            s.rows("projection", &projection())?;
            s.rows("bones", &bones(8))?;
            s.input("inpos", |r| {
                let p = position(r);
                [p[0], p[1], p[2] - 5.0, 1.0]
            })?;
            s.input("inidx", |r| {
                [3.0 * r.below(8) as f32, 3.0 * r.below(8) as f32, 0.0, 0.0]
            })?;
            s.input("inwgt", |r| {
                let w = r.range(0.0, 1.0);
                [w, 1.0 - w, 0.0, 1.0]
            })?;
        }
        "skinning4.v.pica" => {
            s.rows("projection", &projection())?;
            s.rows("bones", &bones(20))?;
            s.input("inpos", |r| {
                let p = position(r);
                [p[0], p[1], p[2] - 5.0, 1.0]
            })?;
            s.input("innrm", unit_normal)?;
            s.input("inidx", |r| [(); 4].map(|_| 3.0 * r.below(20) as f32))?;
            s.input("inwgt", |r| {
                let w = [(); 4].map(|_| r.range(0.05, 1.0));
                let sum: f32 = w.iter().sum();
                w.map(|x| x / sum)
            })?;
        }
        "branches.v.pica" => {
            s.rows("projection", &projection())?;
            s.rows("lightdir", &[normalize([0.3, 0.5, 0.8])])?;
            let thresholds = [0.9, 0.75, 0.6, 0.45, 0.3, 0.15, 0.05, 0.0];
            let intensities = [1.0, 0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2];
            let bands: Vec<[f32; 4]> = thresholds
                .iter()
                .zip(intensities)
                .map(|(&t, i)| [t, i, 0.0, 0.0])
                .collect();
            s.rows("bands", &bands)?;
            s.rows("ambient", &[[0.15, 0.15, 0.2, 1.0]])?;
            s.rows("fog", &[[4.0, 1.0 / 6.0, 0.0, 0.0]])?;
            s.rows("fogclr", &[[0.6, 0.7, 0.8, 1.0]])?;
            // Depths 1 to 10 with the fog starting at 4: about two thirds of the vertices are
            // fogged, and half face the light, so both branches go both ways.
            s.input("inpos", |r| {
                [
                    r.range(-1.0, 1.0),
                    r.range(-1.0, 1.0),
                    r.range(-10.0, -1.0),
                    1.0,
                ]
            })?;
            s.input("innrm", unit_normal)?;
            s.input("inclr", colour)?;
        }
        "point_to_quad.g.pica" => {
            s.rows("halfsize", &[[0.05, 0.05, 0.0, 0.0]])?;
            s.input("inpos", position)?;
            s.input("inclr", colour)?;
        }
        "point_to_disc.g.pica" => {
            let (sn, cs) = (TAU / 32.0).sin_cos();
            s.rows("radius", &[[0.05, 0.05, 0.0, 0.0]])?;
            s.rows("rotx", &[[cs, -sn, 0.0, 0.0]])?;
            s.rows("roty", &[[sn, cs, 0.0, 0.0]])?;
            s.rows("rimclr", &[[1.0, 1.0, 1.0, 0.0]])?;
            s.input("inpos", position)?;
            s.input("inclr", colour)?;
        }
        _ => return Err(format!("{file} is not an example")),
    }
    Ok(())
}

/// Any shader: every float uniform row the constants leave free gets a matrix-like row
/// (so chains of DP4s stay in range), v0 a position, other inputs values in [-1, 1).
fn setup_generic(dvle: &Dvle, w: &mut Workload) {
    let mut constant = [false; 96];
    for c in &dvle.constants {
        if let crate::pica::shbin::Constant::FVec { reg, .. } = c {
            if let Some(slot) = constant.get_mut(*reg as usize) {
                *slot = true;
            }
        }
    }
    for (row, is_constant) in constant.iter().enumerate() {
        if !is_constant {
            let mut v = [0.0f32; 4];
            v[row % 4] = 1.0;
            v[(row + 1) % 4] = 0.25;
            w.set_float(row, v);
        }
    }
    w.generators[0] = Some(position);
    for g in &mut w.generators[1..] {
        *g = Some(|r: &mut Rng| [(); 4].map(|_| r.range(-1.0, 1.0)));
    }
}
