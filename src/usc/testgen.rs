//! Random USC programs and states for differential tests and fuzzing: groups are drawn from
//! templates of every in-scope kind and kept when they parse and prepare (the structure
//! rules reject the rest), so every program is valid.

use super::parse;
use picajit_interp::usc::program::{Bank, Reg};
use picajit_interp::usc::{Prepared, State, UscOptions};

/// A small deterministic generator (xorshift64*); fed from fuzzer bytes, it takes its
/// numbers from them until they run out.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    bytes: Vec<u8>,
    pos: usize,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            bytes: Vec::new(),
            pos: 0,
        }
    }

    /// Numbers from `data` (two bytes each) first, then from a generator seeded by them.
    pub fn from_bytes(data: &[u8]) -> Rng {
        let seed = data.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01B3)
        });
        Rng {
            bytes: data.to_vec(),
            ..Rng::new(seed)
        }
    }

    pub fn word(&mut self) -> u64 {
        if self.pos + 2 <= self.bytes.len() {
            let v = u16::from_le_bytes([self.bytes[self.pos], self.bytes[self.pos + 1]]);
            self.pos += 2;
            return u64::from(v).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16 | u64::from(v);
        }
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.word() % n.max(1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Interesting 32-bit values: float specials, denormals, small integers, random words.
pub fn value(rng: &mut Rng) -> u32 {
    const SPECIAL: [u32; 24] = [
        0,
        0x8000_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x3F00_0000,
        0x4000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_1234,
        0x7F80_0001,
        0x0000_0001,
        0x0040_0000,
        0x807F_FFFF,
        0x7F7F_FFFF,
        1,
        2,
        3,
        31,
        32,
        0xFF,
        0xFFFF,
        0xFFFF_FFFF,
        0x8000_0001,
    ];
    match rng.below(4) {
        0 => *rng.pick(&SPECIAL),
        1 => (rng.below(64) as u32).wrapping_sub(16),
        2 => ((rng.word() as f32 / u64::MAX as f32 - 0.5) * 16.0).to_bits(),
        _ => rng.word() as u32,
    }
}

/// A state of `n` instances with random values in the registers the generator uses.
pub fn random_state(n: usize, seed: u64) -> State {
    let mut rng = Rng::new(seed);
    let mut st = State::new(n).expect("1-16 instances");
    for l in 0..n {
        for (bank, count) in [(Bank::R, 8), (Bank::Vi, 4), (Bank::I, 4)] {
            for index in 0..count {
                st.set(Reg { bank, index }, l, value(&mut rng));
            }
        }
        st.set_p0(l, rng.chance(50));
    }
    for index in 0..4 {
        st.set(
            Reg {
                bank: Bank::Sh,
                index,
            },
            0,
            value(&mut rng),
        );
    }
    // Mask counts start at 0 (every instance running).
    for l in 0..n {
        for index in 10..12 {
            st.set(
                Reg {
                    bank: Bank::R,
                    index,
                },
                l,
                0,
            );
        }
    }
    st
}

const EXT: [&str; 14] = [
    "r0", "r1", "r2", "r3", "vi0", "vi1", "i0", "i1", "sh0", "sh1", "c0", "c1", "c64", "c65",
];
const DST: [&str; 7] = ["r0", "r1", "r2", "r4", "r5", "i2", "i3"];

fn fmods(rng: &mut Rng, abs: bool, neg: bool, flr: bool) -> String {
    let mut s = String::new();
    if flr && rng.chance(15) {
        s.push_str(".flr");
    }
    if abs && rng.chance(15) {
        s.push_str(".abs");
    }
    if neg && rng.chance(15) {
        s.push_str(".neg");
    }
    s
}

fn ext(rng: &mut Rng) -> String {
    rng.pick(&EXT).to_string()
}

fn sat(rng: &mut Rng) -> &'static str {
    if rng.chance(20) {
        ".sat"
    } else {
        ""
    }
}

fn float_op(rng: &mut Rng, d: &str) -> String {
    match rng.below(4) {
        k @ (0 | 1) => format!(
            "{}{} {d}, {}{}, {}{}",
            ["fadd", "fmul"][k as usize],
            sat(rng),
            ext(rng),
            fmods(rng, true, true, true),
            ext(rng),
            fmods(rng, true, false, false)
        ),
        2 => format!(
            "fmad{} {d}, {}{}, {}{}, {}{}",
            sat(rng),
            ext(rng),
            fmods(rng, true, true, false),
            ext(rng),
            fmods(rng, true, true, false),
            ext(rng),
            fmods(rng, true, true, true)
        ),
        _ => format!("mov {d}, {}{}", ext(rng), fmods(rng, true, true, false)),
    }
}

fn elem(rng: &mut Rng, n: u64) -> String {
    if rng.chance(50) {
        format!(".e{}", rng.below(n))
    } else {
        String::new()
    }
}

fn test_op(rng: &mut Rng, srcs: &[String]) -> String {
    let ty = *rng.pick(&["f32", "u32", "s32", "u16", "s16", "u8", "s8"]);
    let n = match ty {
        "u16" | "s16" => 2,
        "u8" | "s8" => 4,
        _ => 1,
    };
    let p = if rng.chance(60) { "p0" } else { "_" };
    let mut src = || {
        let s = rng.pick(srcs).clone();
        format!("{s}{}", elem(rng, n))
    };
    let (a, b) = (src(), src());
    if rng.chance(25) {
        let op = *rng.pick(&["tstz", "tstgz", "tstgez"]);
        format!("{op}.{ty} ftt, {p}, {a}")
    } else {
        let op = *rng.pick(&[
            "tste", "tstg", "tstge", "tstne", "tstl", "tstle", "tstmin", "tstmax",
        ]);
        format!("{op}.{ty} ftt, {p}, {a}, {b}")
    }
}

fn mask(rng: &mut Rng) -> String {
    if rng.chance(70) {
        return String::new();
    }
    let m = 1 + rng.below(15);
    (0..4)
        .filter(|k| m >> k & 1 != 0)
        .map(|k| format!(".e{k}"))
        .collect()
}

fn main_group(rng: &mut Rng) -> Vec<String> {
    let mut v = Vec::new();
    let mut fts: Vec<String> = Vec::new();
    if rng.chance(85) {
        v.push(float_op(rng, "ft0"));
        fts.push("ft0".into());
        if rng.chance(50) {
            v.push(float_op(rng, "ft1"));
            fts.push("ft1".into());
        }
    }
    if !fts.is_empty() && rng.chance(30) {
        let op = *rng.pick(&["fadd", "fmul"]);
        let fte = rng.pick(&fts).clone();
        let is = if rng.chance(50) {
            rng.pick(&fts).clone()
        } else {
            ext(rng)
        };
        v.push(format!("{op}{} ft2, {is}, {fte}", sat(rng)));
        fts.push("ft2".into());
    }
    let mut test = false;
    if rng.chance(40) {
        let mut srcs: Vec<String> = fts.iter().filter(|f| *f != "ft2").cloned().collect();
        srcs.push(ext(rng));
        v.push(test_op(rng, &srcs));
        test = true;
    }
    if test && !fts.is_empty() && rng.chance(50) {
        let a = rng.pick(&fts).clone();
        let b = rng.pick(&fts).clone();
        if rng.chance(50) {
            let e = if rng.chance(50) {
                rng.pick(&fts).clone()
            } else {
                ext(rng)
            };
            v.push(format!(
                "mov {}{}, {e}, ftt, {a}, {b}",
                rng.pick(&DST),
                mask(rng)
            ));
            return v;
        }
        v.push(format!("movc w0{}, w1, ftt, {a}, {b}", mask(rng)));
        fts.push("w0".into());
        fts.push("w1".into());
    } else if !fts.is_empty() && rng.chance(15) {
        v.push(format!("mov w0{}, {}", mask(rng), rng.pick(&fts)));
        fts.push("w0".into());
    }
    let writes = rng.below(3);
    let mut used = Vec::new();
    for _ in 0..writes {
        let d = rng.pick(&DST).to_string();
        if used.contains(&d) {
            continue;
        }
        let s = if !fts.is_empty() && rng.chance(80) {
            rng.pick(&fts).clone()
        } else {
            ext(rng)
        };
        v.push(format!("mov {d}{}, {s}", mask(rng)));
        used.push(d);
    }
    v
}

fn bitwise_group(rng: &mut Rng) -> Vec<String> {
    let mut v = Vec::new();
    let mut have = Vec::new();
    if rng.chance(40) {
        if rng.chance(70) {
            v.push(format!(
                "byp ft0, ft1, {}, {}",
                ext(rng),
                if rng.chance(50) {
                    ext(rng)
                } else {
                    format!("{}", rng.below(1 << 20))
                }
            ));
        } else {
            v.push(format!("msk ft0, ft1, {}, {}", ext(rng), ext(rng)));
        }
        have.push("ft1");
    }
    let shift1 = rng.chance(80);
    if shift1 {
        v.push(match rng.below(4) {
            0 => format!("lsl ft2, {}, {}", ext(rng), ext(rng)),
            1 => format!("shfl ft2, {}, {}", ext(rng), ext(rng)),
            2 => format!("rev ft2, {}", ext(rng)),
            _ => format!("byp ft2, {}", ext(rng)),
        });
    }
    let count = rng.chance(40);
    if count {
        let src = if shift1 && rng.chance(50) {
            "ft2".to_string()
        } else {
            ext(rng)
        };
        v.push(match rng.below(4) {
            0 => format!("cbs ft3, {src}"),
            1 => format!("ftb ft3, {src}"),
            2 => format!("ftb_shi ft3, {}", ext(rng)),
            _ => format!("byp ft3, {src}"),
        });
    }
    let logical = shift1 && rng.chance(70);
    if logical {
        let op = *rng.pick(&["and", "or", "xor", "nand", "nor", "xnor"]);
        let (m1, m2) = if have.contains(&"ft1") && rng.chance(50) {
            ("ft1", "ft1.invert")
        } else {
            ("_", "_")
        };
        v.push(format!("{op} ft4, {m1}, ft2, {m2}, {}", ext(rng)));
    }
    let shift2 = logical && rng.chance(70);
    if shift2 {
        let pos = if rng.chance(80) {
            "twb"
        } else {
            *rng.pick(&["pwb", "ftb", "mtb"])
        };
        let ok_pos = match pos {
            "ftb" => count,
            "mtb" => have.contains(&"ft1"),
            _ => true,
        };
        v.push(match rng.below(5) {
            0 => format!("lsl ft5, ft4, {}", ext(rng)),
            1 => format!("shr ft5, ft4, {}", ext(rng)),
            2 => format!("rol ft5, ft4, {}", ext(rng)),
            3 if ok_pos => format!("asr.{pos} ft5, ft4, {}", ext(rng)),
            _ => format!("cps ft5, p0, ft4, {}", ext(rng)),
        });
    }
    if (count || shift2) && rng.chance(40) {
        let src = if shift2 && rng.chance(50) || !count {
            "ft5"
        } else {
            "ft3"
        };
        v.push(format!("{} p0, {src}", rng.pick(&["tz", "tnz"])));
    }
    let fts: Vec<&str> = ["ft0", "ft1", "ft2", "ft3", "ft4", "ft5"]
        .into_iter()
        .filter(|f| {
            v.iter().any(|l| {
                l.contains(&format!(" {f},"))
                    || l.contains(&format!(" {f}, "))
                    || l.starts_with(&format!("byp {f}"))
            })
        })
        .collect();
    for (k, d) in ["r0", "i2"].iter().enumerate() {
        if rng.chance(60) && !v.is_empty() {
            let s = if !fts.is_empty() && rng.chance(80) {
                rng.pick(&fts).to_string()
            } else if k == 0 {
                "w0".into()
            } else {
                "w1".into()
            };
            v.push(format!("mov {d}{}, {s}", mask(rng)));
        }
    }
    v
}

fn int_group(rng: &mut Rng) -> Vec<String> {
    let s = |rng: &mut Rng, n: u64| format!("{}{}", ext(rng), elem(rng, n));
    let mut v = vec![match rng.below(5) {
        0 => {
            let op = *rng.pick(&["uadd8", "umul8", "iadd8", "imul8"]);
            format!("{op}{} ft0, {}, {}", sat(rng), s(rng, 4), s(rng, 4))
        }
        1 => {
            let op = *rng.pick(&["umad8", "imad8", "umad16", "imad16"]);
            let n = if op.ends_with("16") { 2 } else { 4 };
            format!(
                "{op}{} ft0, {}, {}, {}",
                sat(rng),
                s(rng, n),
                s(rng, n),
                s(rng, n)
            )
        }
        2 => {
            let op = *rng.pick(&["uadd16", "umul16", "iadd16", "imul16"]);
            format!("{op}{} ft0, {}, {}", sat(rng), s(rng, 2), s(rng, 2))
        }
        3 => {
            let op = *rng.pick(&["umadd32", "smadd32", "uadd6432", "sadd6432"]);
            format!(
                "{op} ft0, {}, {}, {}, {}",
                ext(rng),
                ext(rng),
                ext(rng),
                rng.pick(&["p0", "_"])
            )
        }
        _ => {
            let op = *rng.pick(&["add64", "umadd64", "smadd64"]);
            format!(
                "{op} ft0, {}, {}, {}, {}, {}",
                ext(rng),
                ext(rng),
                ext(rng),
                ext(rng),
                rng.pick(&["p0", "_"])
            )
        }
    }];
    if v[0].contains("32") || v[0].contains("64") {
        if rng.chance(30) {
            v.push(format!("tstc ftt, {}", rng.pick(&["p0", "_"])));
        }
        v.push("mov r1, ft1".to_string());
    }
    v.push(format!("mov {}, ft0", rng.pick(&DST)));
    v
}

fn pack_group(rng: &mut Rng) -> Vec<String> {
    let f = *rng.pick(&["u8888", "s8888", "u1616", "s1616", "u32", "s32", "f32"]);
    let scale = if !f.contains("32") && rng.chance(50) {
        ".scale"
    } else {
        ""
    };
    let rz = if rng.chance(30) { ".roundzero" } else { "" };
    if rng.chance(50) {
        vec![
            format!("pck.{f}{scale}{rz} ft2, {}", ext(rng)),
            format!("mov {}, ft2", rng.pick(&DST)),
        ]
    } else {
        let n = match f {
            "u8888" | "s8888" => 4,
            "u1616" | "s1616" => 2,
            _ => 1,
        };
        vec![
            format!(
                "unpck.{f}{scale}{rz} ft0, {}{}",
                ext(rng),
                if n > 1 { elem(rng, n) } else { String::new() }
            ),
            format!("mov {}, ft0", rng.pick(&DST)),
        ]
    }
}

fn group_body(rng: &mut Rng, n: usize, index: usize) -> Vec<String> {
    match rng.below(100) {
        0..=39 => main_group(rng),
        40..=54 => bitwise_group(rng),
        55..=62 => {
            let op = *rng.pick(&["frcp", "frsq", "fsqrt", "flog", "fexp"]);
            vec![format!(
                "{op} {}, {}{}",
                rng.pick(&DST),
                ext(rng),
                fmods(rng, true, true, false)
            )]
        }
        63..=70 => int_group(rng),
        71..=76 => pack_group(rng),
        77..=88 => {
            let c = rng.below(4);
            let d = *rng.pick(&["r10", "r11"]);
            let s = *rng.pick(&["r10", "r11", "c0", "c1"]);
            vec![match rng.below(7) {
                0 => format!("cndst {c}, {d}, {s}, {}", rng.below(3)),
                1 => format!("cndef {c}, {d}, {s}, {}", rng.below(3)),
                2 => format!("cndend {d}, {s}, {}", 1 + rng.below(2)),
                3 => format!("cndlt {c}, {d}, p0, {s}, {}", 1 + rng.below(2)),
                4 => format!("cndsm {c}, {d}, {s}, {}", rng.pick(&["r10", "r11", "c0"])),
                5 => format!("cndlpc {d}, {s}"),
                _ => format!("cndst {c}, {d}, {s}, 1"),
            }]
        }
        _ => {
            let target = rng.below(n as u64 + 1) as usize;
            let m = *rng.pick(&["", ".anyinst", ".allinst"]);
            let _ = index;
            vec![format!("ba{m} {target}")]
        }
    }
}

/// A random valid program of up to `max_groups` groups, as text.
pub fn random_program(rng: &mut Rng, max_groups: usize) -> String {
    let n = 1 + rng.below(max_groups as u64) as usize;
    let mut text = String::new();
    let mut k = 0;
    let mut attempts = 0;
    while k < n && attempts < n * 20 {
        attempts += 1;
        let body = group_body(rng, n, k);
        if body.is_empty() {
            continue;
        }
        let pred = match rng.below(10) {
            0 => " if (p0)",
            1 => " if (!p0)",
            _ => "",
        };
        let ign = if rng.chance(5) { " (ignorepe)" } else { "" };
        let is_cnd = body[0].starts_with("cnd");
        let head = format!("{k} :{}{}\n", if is_cnd { "" } else { pred }, ign);
        let mut group = head;
        for l in &body {
            group.push_str("    ");
            group.push_str(l);
            group.push('\n');
        }
        let candidate = format!("{text}{group}");
        // Keep the group if the program still parses (branch targets are checked when the
        // whole program is prepared).
        if parse(&candidate).is_ok() {
            text = candidate;
            k += 1;
        }
    }
    // Branches to groups past the end: retarget to the end (one past the last group).
    loop {
        match parse(&text).map(|p| Prepared::new(&p, UscOptions::default())) {
            Ok(Ok(_)) => return text,
            Ok(Err(_)) => {
                // A branch to a missing group: drop branches beyond the last group number.
                let last = k.saturating_sub(1);
                text = text
                    .lines()
                    .map(|l| match l.trim().strip_prefix("ba") {
                        Some(rest) => {
                            let (m, t) = rest.split_once(' ').unwrap_or(("", "0"));
                            let t: usize = t.trim().parse().unwrap_or(0);
                            format!("    ba{m} {}", t.min(last))
                        }
                        None => l.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                text.push('\n');
            }
            Err(_) => return "0 : mov r0, c0\n".into(),
        }
    }
}
