//! SHBIN reader/writer tests. Test files are assembled here field by field, following picasso's
//! output procedure independently of the library's writer.

use picajit::pica::shbin::{
    decode_gs_mode, encode_gs_mode, register_name, Constant, Dvle, DvlpInfo, GsInputMode, Label,
    Location, Output, OutputSemantic, Region, RegisterFile, ShaderKind, Shbin, ShbinError,
    SymbolUser, Uniform, PICASSO_DVLE_VERSION,
};
use picajit_testkit::XorShift;

// ---------------------------------------------------------------------------------------------
// Byte assembly helpers
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
    fn len(&self) -> u32 {
        self.0.len() as u32
    }
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn fvec_payload(v: [u32; 4]) -> [u8; 16] {
    let mut p = [0; 16];
    for (i, w) in v.iter().enumerate() {
        p[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    p
}

fn ivec_payload(v: [u8; 4]) -> [u8; 16] {
    let mut p = [0; 16];
    p[..4].copy_from_slice(&v);
    p
}

fn bool_payload(v: u32) -> [u8; 16] {
    let mut p = [0; 16];
    p[..4].copy_from_slice(&v.to_le_bytes());
    p
}

fn output_entry(semantic: u16, reg: u16, mask: u8) -> u64 {
    u64::from(semantic) | u64::from(reg) << 16 | u64::from(mask) << 32
}

// float24 bit patterns (sign · 7-bit exponent biased by 63 · 16-bit mantissa).
const F24_ONE: u32 = 0x3F_0000;
const F24_HALF: u32 = 0x3E_0000;
const F24_MINUS_TWO: u32 = 0xC0_0000;
const F24_ZERO: u32 = 0;

/// DVLE description for the test-side picasso emulation.
#[derive(Clone)]
struct TDvle {
    geometry: bool,
    merge: bool,
    main: u32,
    endmain: u32,
    input_mask: u16,
    output_mask: u16,
    gs: [u8; 4],
    constants: Vec<(u16, u16, [u8; 16])>,
    outputs: Vec<u64>,
    uniforms: Vec<(&'static str, u16, u16)>,
}

impl TDvle {
    fn vertex() -> TDvle {
        TDvle {
            geometry: false,
            merge: false,
            main: 0,
            endmain: 0,
            input_mask: 0,
            output_mask: 0,
            gs: [0; 4],
            constants: vec![],
            outputs: vec![],
            uniforms: vec![],
        }
    }
    fn symbol_size(&self) -> u32 {
        self.uniforms.iter().map(|u| u.0.len() as u32 + 1).sum()
    }
}

/// Builds a file the way picasso's frontend does: DVLE offsets are precomputed from the table
/// sizes, the DVLP header is 10 words, each DVLE's tables follow its header and each DVLE is
/// padded to a word. Returns the bytes and the end of the last meaningful byte (before the final
/// padding).
fn picasso_file(code: &[u32], opdescs: &[u64], dvles: &[TDvle]) -> (Vec<u8>, usize) {
    let n = dvles.len() as u32;
    let dvlp_size = 40 + 4 * code.len() as u32 + 8 * opdescs.len() as u32;
    let mut b = Buf::default();
    b.raw(b"DVLB").u32(n);
    let mut cur = 8 + 4 * n + dvlp_size;
    for d in dvles {
        b.u32(cur);
        cur += 64
            + 20 * d.constants.len() as u32
            + 8 * d.outputs.len() as u32
            + 8 * d.uniforms.len() as u32
            + d.symbol_size();
        cur = (cur + 3) & !3;
    }
    b.raw(b"DVLP")
        .u32(0)
        .u32(40)
        .u32(code.len() as u32)
        .u32(40 + 4 * code.len() as u32)
        .u32(opdescs.len() as u32)
        .u32(dvlp_size)
        .u32(0)
        .u32(0)
        .u32(0);
    for &w in code {
        b.u32(w);
    }
    for &o in opdescs {
        b.u64(o);
    }
    let mut content_end = 0;
    for d in dvles {
        let mut cur = 64u32;
        b.raw(b"DVLE")
            .u16(0x1002)
            .u8(d.geometry as u8)
            .u8(d.merge as u8)
            .u32(d.main)
            .u32(d.endmain)
            .u16(d.input_mask)
            .u16(d.output_mask)
            .raw(&d.gs);
        b.u32(cur).u32(d.constants.len() as u32);
        cur += 20 * d.constants.len() as u32;
        b.u32(cur).u32(0);
        b.u32(cur).u32(d.outputs.len() as u32);
        cur += 8 * d.outputs.len() as u32;
        b.u32(cur).u32(d.uniforms.len() as u32);
        cur += 8 * d.uniforms.len() as u32;
        b.u32(cur).u32(d.symbol_size());
        for &(ty, reg, payload) in &d.constants {
            b.u16(ty).u16(reg).raw(&payload);
        }
        for &o in &d.outputs {
            b.u64(o);
        }
        let mut sp = 0;
        for &(name, first, last) in &d.uniforms {
            b.u32(sp).u16(first).u16(last);
            sp += name.len() as u32 + 1;
        }
        for &(name, _, _) in &d.uniforms {
            b.raw(name.as_bytes()).u8(0);
        }
        content_end = b.0.len();
        while b.0.len() % 4 != 0 {
            b.u8(0);
        }
    }
    (b.0, content_end)
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const CODE: [u32; 6] = [
    0x4C00_0000, // mov
    0x0821_1000, // dp4
    0x0841_1000, // dp4
    0x4C20_2000, // mov
    0x8400_0000, // nop
    0x8800_0000, // end
];
const OPDESCS: [u64; 3] = [0x0000_036F, 0x0000_036E, 0x1234_5678_0000_0001];

/// A vertex DVLE with constants of every type, outputs and uniforms of every register file.
fn vertex_dvle() -> TDvle {
    TDvle {
        main: 0,
        endmain: 6,
        input_mask: 0b11,
        output_mask: 0b111,
        constants: vec![
            (
                2,
                95,
                fvec_payload([F24_ONE, F24_HALF, F24_MINUS_TWO, F24_ZERO]),
            ),
            (1, 3, ivec_payload([4, 0, 1, 255])),
            (0, 15, bool_payload(1)),
            (0, 2, bool_payload(0)),
        ],
        outputs: vec![
            output_entry(0, 0, 0xF),
            output_entry(2, 1, 0xF),
            output_entry(3, 2, 0x3),
        ],
        // Sorted by register as picasso does; 34 bytes of names leave 2 bytes of padding.
        uniforms: vec![
            ("inpos", 0x00, 0x00),
            ("incolor", 0x01, 0x01),
            ("projection", 0x10, 0x13),
            ("loopctl", 0x70, 0x70),
            ("flags", 0x78, 0x7B),
        ],
        ..TDvle::vertex()
    }
}

fn vertex_file() -> (Vec<u8>, usize) {
    picasso_file(&CODE, &OPDESCS, &[vertex_dvle()])
}

/// A vertex DVLE followed by one geometry DVLE of each input mode.
fn multi_dvles() -> Vec<TDvle> {
    let gs = |gs: [u8; 4], merge: bool, main: u32| TDvle {
        geometry: true,
        merge,
        main,
        endmain: main + 2,
        output_mask: 0b1,
        gs,
        outputs: vec![output_entry(0, 0, 0xF), output_entry(9, 7, 0xF)],
        ..TDvle::vertex()
    };
    let mut fixed = gs([2, 20, 0, 3], false, 4);
    fixed.uniforms = vec![("gsmat", 0x30, 0x33)];
    fixed.constants = vec![(2, 90, fvec_payload([F24_ONE; 4]))];
    vec![
        TDvle {
            endmain: 4,
            input_mask: 1,
            output_mask: 1,
            outputs: vec![output_entry(0, 0, 0xF)],
            uniforms: vec![("mvp", 0x10, 0x13)],
            ..TDvle::vertex()
        },
        gs([0, 0, 0, 0], true, 2),
        gs([1, 0, 4, 0], false, 4),
        fixed,
    ]
}

fn multi_file() -> (Vec<u8>, usize) {
    picasso_file(&CODE, &OPDESCS, &multi_dvles())
}

/// An early-picasso layout: the DVLE sits between the DVLP header and the program words, word
/// 0x18 counts from a 0x68-byte header area, and the file ends on an odd byte.
fn old_layout_file() -> Vec<u8> {
    let mut b = Buf::default();
    b.raw(b"DVLB").u32(1).u32(0x34);
    // DVLP at 0x0C.
    let code_rel = 0x68u32;
    let op_rel = code_rel + 4 * 3;
    let end_rel = op_rel + 8 * 2;
    b.raw(b"DVLP")
        .u32(0)
        .u32(code_rel)
        .u32(3)
        .u32(op_rel)
        .u32(2)
        .u32(end_rel)
        .u32(0)
        .u32(0)
        .u32(0);
    assert_eq!(b.len(), 0x34);
    // DVLE at 0x34; its tables start where the opdescs end: 0x0C + end_rel.
    let dvle = 0x34u32;
    let consts = 0x0C + end_rel - dvle;
    let outs = consts + 20;
    let unis = outs + 8;
    let syms = unis + 16;
    let names: &[u8] = b"mvp\0ab\0";
    b.raw(b"DVLE")
        .u16(0)
        .u8(0)
        .u8(0)
        .u32(0)
        .u32(3)
        .u16(0)
        .u16(0)
        .u32(0)
        .u32(consts)
        .u32(1)
        .u32(outs)
        .u32(0)
        .u32(outs)
        .u32(1)
        .u32(unis)
        .u32(2)
        .u32(syms)
        .u32(names.len() as u32);
    assert_eq!(b.len(), 0x0C + code_rel);
    b.u32(0x4C00_0000).u32(0x8400_0000).u32(0x8800_0000);
    b.u64(0x36F).u64(0x1B);
    assert_eq!(b.len(), dvle + consts);
    b.u16(2).u16(4).raw(&fvec_payload([F24_HALF; 4]));
    b.u64(output_entry(0, 0, 0xF));
    b.u32(0).u16(0x10).u16(0x13);
    b.u32(4).u16(0x00).u16(0x00);
    b.raw(names);
    assert_eq!(
        b.0.len() % 2,
        1,
        "the old layout fixture must have an odd length"
    );
    b.0
}

fn all_valid_files() -> Vec<(&'static str, Vec<u8>, usize)> {
    let (v, v_end) = vertex_file();
    let (m, m_end) = multi_file();
    let old = old_layout_file();
    let old_len = old.len();
    vec![
        ("vertex", v, v_end),
        ("multi", m, m_end),
        ("old", old, old_len),
    ]
}

// ---------------------------------------------------------------------------------------------
// Parsing valid files
// ---------------------------------------------------------------------------------------------

#[test]
fn vertex_file_every_field() {
    let (bytes, _) = vertex_file();
    let s = Shbin::parse(&bytes).unwrap();

    assert_eq!(s.code, CODE);
    assert_eq!(s.opdescs, OPDESCS);
    assert_eq!(s.dvlp, DvlpInfo::default());
    assert_eq!(s.dvles.len(), 1);

    let d = &s.dvles[0];
    assert_eq!(d.version, PICASSO_DVLE_VERSION);
    assert_eq!(d.kind, ShaderKind::Vertex);
    assert!(!d.merge_outmaps);
    assert_eq!((d.main, d.endmain), (0, 6));
    assert_eq!((d.input_mask, d.output_mask), (0b11, 0b111));
    assert_eq!(d.gs_mode, GsInputMode::Point);
    assert_eq!(d.gs_raw, [0; 4]);
    assert_eq!(
        d.constants,
        vec![
            Constant::FVec {
                reg: 95,
                value: [F24_ONE, F24_HALF, F24_MINUS_TWO, F24_ZERO]
            },
            Constant::IVec {
                reg: 3,
                value: [4, 0, 1, 255]
            },
            Constant::Bool {
                reg: 15,
                value: true
            },
            Constant::Bool {
                reg: 2,
                value: false
            },
        ]
    );
    let names: Vec<_> = d.constants.iter().map(|c| c.register_name()).collect();
    assert_eq!(names, ["c95", "i3", "b15", "b2"].map(|n| Some(n.into())));
    assert!(d.labels.is_empty());
    assert_eq!(
        d.outputs,
        vec![
            Output::new(OutputSemantic::Position, 0, 0xF),
            Output::new(OutputSemantic::Color, 1, 0xF),
            Output::new(OutputSemantic::TexCoord0, 2, 0x3),
        ]
    );
    let uniform = |name: &str, first, last| Uniform {
        name: name.into(),
        first,
        last,
    };
    assert_eq!(
        d.uniforms,
        vec![
            uniform("inpos", 0x00, 0x00),
            uniform("incolor", 0x01, 0x01),
            uniform("projection", 0x10, 0x13),
            uniform("loopctl", 0x70, 0x70),
            uniform("flags", 0x78, 0x7B),
        ]
    );
    let ranges: Vec<_> = d.uniforms.iter().map(|u| u.register_range()).collect();
    let want = ["v0", "v1", "c0-c3", "i0", "b0-b3"].map(|r| Some(r.into()));
    assert_eq!(ranges, want);
    assert_eq!(d.uniform("projection").unwrap().first, 0x10);
    assert!(d.uniform("nope").is_none());
}

#[test]
fn multi_dvle_file_every_field() {
    let (bytes, _) = multi_file();
    let s = Shbin::parse(&bytes).unwrap();
    assert_eq!(s.code, CODE);
    assert_eq!(s.dvles.len(), 4);

    let kinds: Vec<_> = s.dvles.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [
            ShaderKind::Vertex,
            ShaderKind::Geometry,
            ShaderKind::Geometry,
            ShaderKind::Geometry
        ]
    );
    let modes: Vec<_> = s.dvles.iter().map(|d| d.gs_mode).collect();
    assert_eq!(
        modes,
        [
            GsInputMode::Point,
            GsInputMode::Point,
            GsInputMode::Variable {
                first_uniform: 0,
                full_vertices: 4
            },
            GsInputMode::Fixed {
                first_uniform: 20,
                vertices: 3
            },
        ]
    );
    let merge: Vec<_> = s.dvles.iter().map(|d| d.merge_outmaps).collect();
    assert_eq!(merge, [false, true, false, false]);
    let entries: Vec<_> = s.dvles.iter().map(|d| (d.main, d.endmain)).collect();
    assert_eq!(entries, [(0, 4), (2, 4), (4, 6), (4, 6)]);

    let v = &s.dvles[0];
    assert_eq!(v.uniforms[0].name, "mvp");
    assert_eq!(
        v.outputs,
        vec![Output::new(OutputSemantic::Position, 0, 0xF)]
    );

    let g = &s.dvles[1];
    assert_eq!(g.outputs[1], Output::new(OutputSemantic::Dummy, 7, 0xF));
    assert!(g.uniforms.is_empty() && g.constants.is_empty());

    let f = &s.dvles[3];
    assert_eq!(f.gs_raw, [2, 20, 0, 3]);
    assert_eq!(
        f.constants,
        vec![Constant::FVec {
            reg: 90,
            value: [F24_ONE; 4]
        }]
    );
    assert_eq!(f.uniforms[0].register_range().as_deref(), Some("c32-c35"));
}

#[test]
fn old_layout_file_follows_offsets() {
    let bytes = old_layout_file();
    let s = Shbin::parse(&bytes).unwrap();
    assert_eq!(s.code, [0x4C00_0000, 0x8400_0000, 0x8800_0000]);
    assert_eq!(s.opdescs, [0x36F, 0x1B]);
    // picasso's value would be 0x28 + 12 + 16 = 0x44; the old value is kept.
    assert_eq!(s.dvlp.field_18, Some(0x84));
    let d = &s.dvles[0];
    assert_eq!(d.version, 0);
    assert_eq!((d.main, d.endmain), (0, 3));
    assert_eq!(
        d.constants,
        vec![Constant::FVec {
            reg: 4,
            value: [F24_HALF; 4]
        }]
    );
    assert_eq!(
        d.outputs,
        vec![Output::new(OutputSemantic::Position, 0, 0xF)]
    );
    assert_eq!(d.uniforms[0].name, "mvp");
    assert_eq!(d.uniforms[1].name, "ab");
    assert_eq!(d.uniforms[1].register_range().as_deref(), Some("v0"));

    // Rewriting yields picasso's layout with the same content.
    let rewritten = s.to_bytes();
    assert_ne!(rewritten, bytes);
    assert_eq!(rewritten.len() % 4, 0);
    assert_eq!(
        get_u32(&rewritten, 8),
        0x0C + 0x28 + 12 + 16,
        "DVLE follows the DVLP"
    );
    assert_eq!(Shbin::parse(&rewritten).unwrap(), s);
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

#[test]
fn picasso_files_are_reproduced_byte_for_byte() {
    for (name, bytes, _) in all_valid_files() {
        if name == "old" {
            continue;
        }
        let s = Shbin::parse(&bytes).unwrap();
        assert_eq!(s.to_bytes(), bytes, "{name}");
    }
}

#[test]
fn vertex_dvle_with_stray_gs_bytes_round_trips() {
    let mut d = vertex_dvle();
    d.gs = [7, 1, 2, 3];
    let (bytes, _) = picasso_file(&CODE, &OPDESCS, &[d]);
    let s = Shbin::parse(&bytes).unwrap();
    assert_eq!(s.dvles[0].gs_raw, [7, 1, 2, 3]);
    assert_eq!(s.dvles[0].gs_mode, GsInputMode::Point);
    assert_eq!(s.to_bytes(), bytes);
}

/// A value exercising everything picasso never writes.
fn exotic_shbin() -> Shbin {
    let mut gs = Dvle::new(ShaderKind::Geometry);
    gs.set_gs_mode(GsInputMode::Fixed {
        first_uniform: 40,
        vertices: 4,
    });
    gs.merge_outmaps = true;
    gs.main = 3;
    gs.endmain = 5;
    gs.labels = vec![
        Label {
            id: 1,
            unknown: 1,
            offset: 3,
            size: 0xFFFF_FFFF,
            name: "gmain".into(),
        },
        Label {
            id: 2,
            unknown: 0,
            offset: 4,
            size: 1,
            name: "".into(),
        },
    ];
    gs.outputs = vec![Output {
        semantic: OutputSemantic::Unknown(7),
        reg: 3,
        mask: 0b0101,
        unknown_bits: 0xABCD_0000_FF00_0000,
    }];

    let mut vs = Dvle::new(ShaderKind::Vertex);
    vs.version = 0;
    vs.gs_raw = [9, 9, 9, 9];
    vs.gs_mode = decode_gs_mode(vs.gs_raw).unwrap_or(GsInputMode::Point);
    vs.input_mask = 0xFFFF;
    vs.output_mask = 0x7F;
    vs.main = 1;
    vs.endmain = 0xFFFF_FFFF;
    vs.constants = vec![
        Constant::Unknown {
            ty: 7,
            reg: 0xFFFF,
            payload: [0xAA; 16],
        },
        Constant::Unknown {
            ty: 0,
            reg: 1,
            payload: bool_payload(2),
        },
        Constant::FVec {
            reg: 200,
            value: [0xFF_FFFF, 0, 1, 2],
        },
    ];
    vs.uniforms = vec![
        Uniform {
            name: "héllo$wörld".into(),
            first: 0x10,
            last: 0x6F,
        },
        Uniform {
            name: "same".into(),
            first: 0x74,
            last: 0xFFFF,
        },
        Uniform {
            name: "same".into(),
            first: 0,
            last: 0,
        },
    ];
    vs.labels = vec![Label {
        id: 0xFFFF,
        unknown: 0xFFFF,
        offset: 0,
        size: 0,
        name: "same".into(),
    }];

    Shbin {
        code: (0..100).map(|i| i * 0x0101_0101).collect(),
        opdescs: (0..128).map(|i| i * 0x1_0000_0001).collect(),
        dvlp: DvlpInfo {
            version: 0x1002,
            field_18: Some(0xDEAD_BEEF),
            field_1c: 5,
            filename_symbols: b"shader.vsh\0x".to_vec(),
        },
        dvles: vec![vs, gs, Dvle::new(ShaderKind::Vertex)],
    }
}

#[test]
fn write_then_parse_round_trips() {
    let s = exotic_shbin();
    let bytes = s.to_bytes();
    assert_eq!(bytes.len() % 4, 0);
    let back = Shbin::parse(&bytes).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.to_bytes(), bytes);

    for shbin in [
        Shbin::default(),
        Shbin {
            code: vec![0x8800_0000],
            dvles: vec![Dvle::new(ShaderKind::Vertex)],
            ..Shbin::default()
        },
    ] {
        assert_eq!(Shbin::parse(&shbin.to_bytes()).unwrap(), shbin);
    }
}

#[test]
fn hand_built_shbin_matches_picasso() {
    // How the assembler is expected to build a file: the result must equal picasso's bytes.
    let dvles = multi_dvles();
    let (expected, _) = picasso_file(&CODE, &OPDESCS, &dvles);

    let build = |t: &TDvle| {
        let mut d = Dvle::new(if t.geometry {
            ShaderKind::Geometry
        } else {
            ShaderKind::Vertex
        });
        if t.geometry {
            d.set_gs_mode(decode_gs_mode(t.gs).unwrap());
        }
        d.merge_outmaps = t.merge;
        d.main = t.main;
        d.endmain = t.endmain;
        d.input_mask = t.input_mask;
        d.output_mask = t.output_mask;
        d.constants = t
            .constants
            .iter()
            .map(|&(ty, reg, p)| Constant::from_raw(ty, reg, p))
            .collect();
        d.outputs = t.outputs.iter().map(|&o| Output::from_raw(o)).collect();
        d.uniforms = t
            .uniforms
            .iter()
            .map(|&(name, first, last)| Uniform {
                name: name.into(),
                first,
                last,
            })
            .collect();
        d
    };
    let s = Shbin {
        code: CODE.to_vec(),
        opdescs: OPDESCS.to_vec(),
        dvlp: DvlpInfo::default(),
        dvles: dvles.iter().map(build).collect(),
    };
    assert_eq!(s.to_bytes(), expected);
    assert_eq!(Shbin::parse(&expected).unwrap(), s);
}

// ---------------------------------------------------------------------------------------------
// Helpers on the data model
// ---------------------------------------------------------------------------------------------

#[test]
fn unified_register_numbering() {
    let cases: &[(u16, Option<&str>)] = &[
        (0x00, Some("v0")),
        (0x0F, Some("v15")),
        (0x10, Some("c0")),
        (0x15, Some("c5")),
        (0x6F, Some("c95")),
        (0x70, Some("i0")),
        (0x73, Some("i3")),
        (0x74, None),
        (0x77, None),
        (0x78, Some("b0")),
        (0x7B, Some("b3")),
        (0x87, Some("b15")),
        (0x88, None),
        (0xFFFF, None),
    ];
    for &(unified, name) in cases {
        assert_eq!(register_name(unified).as_deref(), name, "{unified:#x}");
        if let Some((file, index)) = RegisterFile::decode(unified) {
            assert_eq!(file.encode(index), Some(unified));
        }
    }
    assert_eq!(RegisterFile::Int.encode(4), None);
    assert_eq!(RegisterFile::Float.encode(95), Some(0x6F));
    let u = Uniform {
        name: "x".into(),
        first: 0x10,
        last: 0x88,
    };
    assert_eq!(u.first_register(), Some((RegisterFile::Float, 0)));
    assert_eq!(u.last_register(), None);
    assert_eq!(u.register_range(), None);
}

#[test]
fn constant_canonical_forms() {
    assert_eq!(
        Constant::from_raw(0, 3, bool_payload(1)),
        Constant::Bool {
            reg: 3,
            value: true
        }
    );
    // Non-canonical payloads of known types are preserved as Unknown.
    let mut padded = ivec_payload([1, 2, 3, 4]);
    padded[15] = 1;
    for (ty, payload) in [
        (0, bool_payload(2)),
        (1, padded),
        (2, fvec_payload([0x100_0000, 0, 0, 0])),
        (3, [0; 16]),
    ] {
        let c = Constant::from_raw(ty, 1, payload);
        assert!(matches!(c, Constant::Unknown { .. }), "{c:?}");
        assert_eq!((c.ty(), c.reg(), c.payload()), (ty, 1, payload));
        assert_eq!(c.register_name(), None);
    }
    for c in [
        Constant::Bool {
            reg: 16,
            value: false,
        },
        Constant::IVec {
            reg: 4,
            value: [0; 4],
        },
        Constant::FVec {
            reg: 96,
            value: [0; 4],
        },
    ] {
        assert_eq!(Constant::from_raw(c.ty(), c.reg(), c.payload()), c);
        assert_eq!(c.register_name(), None, "{c:?} is out of range");
    }
}

#[test]
fn output_and_gs_encodings() {
    for code in 0..=20u16 {
        assert_eq!(OutputSemantic::from_raw(code).to_raw(), code);
    }
    assert_eq!(OutputSemantic::from_raw(7), OutputSemantic::Unknown(7));
    assert_eq!(
        OutputSemantic::TexCoord0W.picasso_name(),
        Some("texcoord0w")
    );
    for raw in [
        0u64,
        output_entry(2, 5, 0xF),
        0xFFFF_FFFF_FFFF_FFFF,
        0x1234_5678_9ABC_DEF0,
    ] {
        assert_eq!(Output::from_raw(raw).to_raw(), raw);
    }
    let o = Output::from_raw(output_entry(0, 0x0102, 0x9));
    assert_eq!((o.reg, o.mask, o.unknown_bits), (2, 9, 0x0100_0000));

    for mode in [
        GsInputMode::Point,
        GsInputMode::Variable {
            first_uniform: 1,
            full_vertices: 2,
        },
        GsInputMode::Fixed {
            first_uniform: 3,
            vertices: 4,
        },
    ] {
        for base in [[0; 4], [0xFF; 4]] {
            assert_eq!(decode_gs_mode(encode_gs_mode(mode, base)), Some(mode));
        }
    }
    assert_eq!(decode_gs_mode([3, 0, 0, 0]), None);
    assert_eq!(
        encode_gs_mode(
            GsInputMode::Fixed {
                first_uniform: 3,
                vertices: 4
            },
            [0, 0, 0xEE, 0]
        ),
        [2, 3, 0xEE, 4]
    );
}

// ---------------------------------------------------------------------------------------------
// Malformed input
// ---------------------------------------------------------------------------------------------

fn parse_err(bytes: &[u8]) -> ShbinError {
    match Shbin::parse(bytes) {
        Ok(s) => panic!("expected an error, parsed {s:?}"),
        Err(e) => e,
    }
}

/// The error of parsing `bytes` after `edit`.
fn mutated_err(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> ShbinError {
    let mut b = bytes.to_vec();
    edit(&mut b);
    parse_err(&b)
}

fn assert_msg(e: &ShbinError, parts: &[&str]) {
    let msg = e.to_string();
    for part in parts {
        assert!(msg.contains(part), "{msg:?} should mention {part:?}");
    }
}

/// File offset of DVLE `i` and its header fields in the vertex fixture.
fn dvle_offset(bytes: &[u8], i: usize) -> usize {
    get_u32(bytes, 8 + 4 * i) as usize
}

#[test]
fn every_truncation_is_an_error() {
    for (name, bytes, content_end) in all_valid_files() {
        let full = Shbin::parse(&bytes).unwrap();
        for len in 0..bytes.len() {
            let r = Shbin::parse(&bytes[..len]);
            if len < content_end {
                let e = r.expect_err(&format!("{name}: prefix of {len} bytes parsed"));
                assert!(!e.to_string().is_empty());
            } else {
                // Only the final padding is missing.
                assert_eq!(r.as_ref(), Ok(&full), "{name}: prefix of {len} bytes");
            }
        }
    }
}

#[test]
fn truncation_messages_name_the_structure() {
    let (bytes, _) = vertex_file();
    assert_msg(&parse_err(&[]), &["DVLB", "header", "0x0 bytes"]);
    assert_msg(&parse_err(&bytes[..20]), &["DVLP at 0xc", "header"]);
    let d = dvle_offset(&bytes, 0);
    assert_msg(
        &parse_err(&bytes[..d + 10]),
        &[&format!("DVLE #0 at {d:#x}"), "header", "runs past the end"],
    );
    assert_msg(
        &parse_err(&bytes[..bytes.len() - 8]),
        &["DVLE #0", "symbol table", "runs past the end of the file"],
    );
}

#[test]
fn bad_magics() {
    let (bytes, _) = multi_file();
    let e = mutated_err(&bytes, |b| b[0] = b'X');
    assert!(matches!(
        e,
        ShbinError::BadMagic {
            at: Location::Dvlb,
            ..
        }
    ));
    assert_msg(&e, &["DVLB", "bad magic", "XVLB"]);

    let mut b = bytes.clone();
    let dvlp = 8 + 4 * 4;
    b[dvlp + 3] = 0;
    assert_msg(&parse_err(&b), &["DVLP at 0x18", "bad magic", "DVL\\x00"]);

    let mut b = bytes.clone();
    let d2 = dvle_offset(&b, 2);
    b[d2..d2 + 4].copy_from_slice(b"DVLP");
    let e = parse_err(&b);
    assert_eq!(
        e.location(),
        Location::Dvle {
            index: 2,
            offset: d2 as u64
        }
    );
    assert_msg(&e, &[&format!("DVLE #2 at {d2:#x}"), "expected \"DVLE\""]);
}

#[test]
fn offsets_out_of_range() {
    let (bytes, _) = vertex_file();
    let len = bytes.len();
    let d = dvle_offset(&bytes, 0);

    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 8, len as u32 - 0x20)),
        &["DVLE #0", "header", "runs past the end"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 8, 0xFFFF_FFFF)),
        &["DVLE #0 at 0xffffffff", "header"],
    );

    // Uniform table pointing past the end.
    let e = mutated_err(&bytes, |b| put_u32(b, d + 0x30, 0x300));
    assert!(matches!(
        e,
        ShbinError::OutOfBounds {
            region: Region::Uniforms,
            ..
        }
    ));
    assert_msg(
        &e,
        &[
            &format!("DVLE #0 at {d:#x}: uniform table (offset 0x300 = file offset {:#x}, 5 entries of 8 bytes) runs past the end of the file ({len:#x} bytes)", d + 0x300),
        ],
    );

    // Program code and descriptors pointing past the end.
    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 12 + 0x08, len as u32)),
        &["DVLP at 0xc", "program code", "6 words"],
    );
    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 12 + 0x10, len as u32 - 12)),
        &["DVLP", "operand descriptor table"],
    );
    assert_msg(
        &mutated_err(&bytes, |b| {
            put_u32(b, 12 + 0x20, 0x10);
            put_u32(b, 12 + 0x24, len as u32);
        }),
        &["DVLP", "filename symbol table"],
    );

    // Constant, output, label tables.
    for (field, what) in [
        (0x18, "constant table"),
        (0x20, "label table"),
        (0x28, "output table"),
    ] {
        assert_msg(
            &mutated_err(&bytes, |b| {
                put_u32(b, d + field, len as u32);
                put_u32(b, d + field + 4, 1);
            }),
            &["DVLE #0", what, "runs past the end"],
        );
    }
}

#[test]
fn counts_that_overflow_u32() {
    let (bytes, _) = vertex_file();
    let d = dvle_offset(&bytes, 0);

    // 0x2000_0000 * 8 = 2^32
    let e = mutated_err(&bytes, |b| put_u32(b, d + 0x34, 0x2000_0000));
    assert!(matches!(
        e,
        ShbinError::Overflow {
            region: Region::Uniforms,
            ..
        }
    ));
    assert_msg(&e, &["DVLE #0", "uniform table", "32-bit"]);

    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, d + 0x1C, 0xFFFF_FFFF)),
        &["constant table", "32-bit"],
    );

    // Offset plus size overflows even though the size alone fits.
    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, d + 0x28, 0xFFFF_FFF0)),
        &["output table", "offset 0xfffffff0", "32-bit"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| {
            put_u32(b, d + 0x38, 0xFFFF_FFFF);
            put_u32(b, d + 0x3C, 2);
        }),
        &["symbol table", "32-bit"],
    );

    // DVLE count * 4 = 2^32
    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 4, 0x4000_0000)),
        &["DVLB", "DVLE offset table", "32-bit"],
    );
}

#[test]
fn huge_counts() {
    let (bytes, _) = vertex_file();
    let d = dvle_offset(&bytes, 0);

    let e = mutated_err(&bytes, |b| put_u32(b, 4, 0x0FFF_FFFF));
    assert!(matches!(
        e,
        ShbinError::OutOfBounds {
            at: Location::Dvlb,
            region: Region::DvleOffsets,
            ..
        }
    ));
    assert_msg(&e, &["DVLB", "DVLE offset table", "268435455 entries"]);

    let e = mutated_err(&bytes, |b| put_u32(b, 12 + 0x0C, 4097));
    assert!(matches!(e, ShbinError::CodeTooLarge { words: 4097, .. }));
    assert_msg(&e, &["DVLP at 0xc", "4097 words", "4096"]);

    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 12 + 0x0C, 4096)),
        &["program code", "4096 words", "runs past"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, 12 + 0x14, 129)),
        &["DVLP", "129 operand descriptors", "128"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, d + 0x24, 1_000_000)),
        &["label table", "1000000 entries of 16 bytes"],
    );
}

#[test]
fn bad_symbols() {
    let (bytes, _) = vertex_file();
    let d = dvle_offset(&bytes, 0);
    let sym_at = d + get_u32(&bytes, d + 0x38) as usize;
    let sym_size = get_u32(&bytes, d + 0x3C) as usize;
    let uni_at = d + get_u32(&bytes, d + 0x30) as usize;

    // The last name loses its NUL; the padding zero after the table must not count.
    let e = mutated_err(&bytes, |b| b[sym_at + sym_size - 1] = b'x');
    assert!(matches!(
        e,
        ShbinError::UnterminatedSymbol {
            user: SymbolUser::Uniform(4),
            ..
        }
    ));
    assert_msg(
        &e,
        &["DVLE #0", "uniform #4", "NUL-terminated", "symbol table"],
    );

    // A symbol offset at the end of the table.
    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, uni_at + 8 * 2, sym_size as u32)),
        &["uniform #2", "outside the symbol table"],
    );

    // Empty symbol table while uniforms need names.
    assert_msg(
        &mutated_err(&bytes, |b| put_u32(b, d + 0x3C, 0)),
        &["uniform #0", "outside the symbol table (0x0 bytes)"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| b[sym_at + 1] = 0xFF),
        &["uniform #0", "UTF-8"],
    );
}

#[test]
fn bad_header_bytes() {
    let (bytes, _) = multi_file();
    let d0 = dvle_offset(&bytes, 0);
    let d1 = dvle_offset(&bytes, 1);

    assert_msg(
        &mutated_err(&bytes, |b| b[d0 + 6] = 2),
        &["DVLE #0", "shader type 2"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| b[d1 + 7] = 2),
        &["DVLE #1", "merge-outmaps flag", "is 2"],
    );

    assert_msg(
        &mutated_err(&bytes, |b| b[d1 + 0x14] = 3),
        &["DVLE #1", "geometry shader mode 3"],
    );

    // The same byte in a vertex DVLE is harmless and preserved.
    let mut b = bytes.clone();
    b[d0 + 0x14] = 3;
    let s = Shbin::parse(&b).unwrap();
    assert_eq!(s.dvles[0].gs_raw, [3, 0, 0, 0]);
    assert_eq!(s.to_bytes(), b);
}

#[test]
fn zero_dvles_and_empty_tables_with_stray_offsets() {
    let (bytes, _) = picasso_file(&CODE, &OPDESCS, &[]);
    let s = Shbin::parse(&bytes).unwrap();
    assert!(s.dvles.is_empty());
    assert_eq!(s.to_bytes(), bytes);

    // An empty table's offset is not checked.
    let (mut b, _) = vertex_file();
    let d = dvle_offset(&b, 0);
    put_u32(&mut b, d + 0x20, 0xFFFF_FFFF);
    assert!(Shbin::parse(&b).is_ok());
}

#[test]
fn error_type_is_std_error() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}
    assert_error::<ShbinError>();
    let boxed: Box<dyn std::error::Error> = Box::new(parse_err(b"DVLB"));
    assert!(boxed.to_string().starts_with("DVLB"));
}

#[test]
fn random_mutations_never_panic() {
    let mut bases: Vec<Vec<u8>> = all_valid_files().into_iter().map(|f| f.1).collect();
    bases.push(exotic_shbin().to_bytes());
    let interesting: [u32; 10] = [
        0,
        1,
        0x7F,
        0x80,
        0xFF,
        0x1000,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFF8,
        0xFFFF_FFFF,
    ];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut err) = (0, 0);
    for _ in 0..20_000 {
        let mut b = bases[rng.index(bases.len())].clone();
        for _ in 0..1 + rng.index(4) {
            match rng.index(6) {
                0 | 1 => {
                    let i = rng.index(b.len());
                    b[i] = rng.next() as u8;
                }
                2 => {
                    let i = rng.index(b.len());
                    b[i] ^= 1 << rng.index(8);
                }
                3 if b.len() >= 4 => {
                    // Header words are word aligned; hit those most of the time.
                    let i = rng.index(b.len() / 4) * 4;
                    put_u32(&mut b, i, interesting[rng.index(interesting.len())]);
                }
                4 => {
                    let keep = rng.index(b.len() + 1);
                    b.truncate(keep);
                }
                _ => {
                    let n = rng.index(16);
                    b.extend((0..n).map(|_| rng.next() as u8));
                }
            }
            if b.is_empty() {
                break;
            }
        }
        match Shbin::parse(&b) {
            Ok(s) => {
                ok += 1;
                let again = Shbin::parse(&s.to_bytes()).expect("rewritten file must parse");
                assert_eq!(again, s);
            }
            Err(e) => {
                err += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    // Both outcomes must be well represented for the sweep to mean anything.
    assert!(ok > 1000 && err > 1000, "ok={ok} err={err}");
}

#[test]
fn files_over_the_size_limit_are_refused() {
    let mut big = vec![0u8; picajit::pica::shbin::MAX_SHBIN_BYTES + 1];
    big[..4].copy_from_slice(b"DVLB");
    let e = Shbin::parse(&big).unwrap_err();
    assert!(e.to_string().contains("at most 16777216"), "{e}");
}
