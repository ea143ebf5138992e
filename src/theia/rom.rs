//! The default code of the RTL's ROM module, read at run time from a checkout of the original
//! project (GPL-2: picajit does not ship it). `rtl/Module_ROM.v` lists one instruction per
//! case item, `N: I = { `OP ,`DST ,`SRC1 ,`SRC2 };`, as Verilog concatenations of macros from
//! `rtl/aDefinitions.v` and the ROM file's own `` `define``s. [`load`] evaluates them to words;
//! `to_source` writes the same program in assembler syntax (labels from the ROM's
//! `LABEL_*`/`TAG_*` defines), which `tests/theia_asm.rs` assembles and compares.

use std::collections::HashMap;
use std::path::Path;

/// A sized Verilog constant: value and width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sized {
    value: u64,
    width: u32,
}

/// The ROM's contents and the source-level view of each row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rom {
    /// Row `i` is ROM address `i`.
    pub words: Vec<u64>,
    /// The items of each row's concatenation, macro names without the backquote.
    pub items: Vec<Vec<String>>,
    /// ROM labels (`LABEL_*`, `TAG_*` defines) and their addresses.
    pub labels: Vec<(String, u16)>,
}

struct Defines(HashMap<String, String>);

impl Defines {
    fn read(text: &str, into: &mut HashMap<String, String>) {
        for line in text.lines() {
            let line = line.find("//").map_or(line, |p| &line[..p]);
            let Some(rest) = line.trim_start().strip_prefix("`define") else {
                continue;
            };
            let rest = rest.trim();
            let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            into.insert(name.to_string(), value.trim().to_string());
        }
    }

    fn eval(&self, expr: &str, depth: u32) -> Result<Sized, String> {
        if depth > 16 {
            return Err(format!("macro recursion in '{expr}'"));
        }
        let e = expr.trim();
        if let Some(inner) = e.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
            let (l, r) = inner
                .split_once("<<")
                .ok_or_else(|| format!("unsupported expression '{e}'"))?;
            let l = self.eval(l, depth + 1)?;
            let r = self.eval(r, depth + 1)?;
            let value = l.value.checked_shl(r.value as u32).unwrap_or(0) & mask(l.width);
            return Ok(Sized { value, ..l });
        }
        if let Some(name) = e.strip_prefix('`') {
            // `NAME or `WIDTH'dN
            if let Some((w, lit)) = name.split_once('\'') {
                let width = self.eval(&format!("`{w}"), depth + 1)?.value as u32;
                return literal(width, lit);
            }
            let body = self
                .0
                .get(name)
                .ok_or_else(|| format!("undefined macro `{name}"))?;
            return self.eval(body, depth + 1);
        }
        if let Some((w, lit)) = e.split_once('\'') {
            let width: u32 = w.parse().map_err(|_| format!("bad width in '{e}'"))?;
            return literal(width, lit);
        }
        let value: u64 = e.parse().map_err(|_| format!("bad number '{e}'"))?;
        Ok(Sized { value, width: 32 })
    }
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

fn literal(width: u32, lit: &str) -> Result<Sized, String> {
    let lit = lit.replace('_', "");
    let (radix, digits) = match lit.split_at(1) {
        ("d", d) => (10, d),
        ("h", d) => (16, d),
        ("b", d) => (2, d),
        _ => return Err(format!("unsupported literal '{lit}'")),
    };
    let value = u64::from_str_radix(digits, radix).map_err(|_| format!("bad literal '{lit}'"))?;
    if width == 0 || width > 64 {
        return Err(format!("width {width} in '{lit}'"));
    }
    Ok(Sized {
        value: value & mask(width),
        width,
    })
}

/// Reads `rtl/aDefinitions.v` and `rtl/Module_ROM.v` under a checkout.
pub fn load(checkout: &Path) -> Result<Rom, String> {
    let read = |p: &str| std::fs::read_to_string(checkout.join(p)).map_err(|e| format!("{p}: {e}"));
    parse(&read("rtl/aDefinitions.v")?, &read("rtl/Module_ROM.v")?)
}

/// Evaluates the ROM module's text with the definitions file's macros.
pub fn parse(definitions: &str, rom: &str) -> Result<Rom, String> {
    let mut map = HashMap::new();
    Defines::read(definitions, &mut map);
    Defines::read(rom, &mut map);
    let defs = Defines(map);
    let mut rows: Vec<(usize, u64, Vec<String>)> = Vec::new();
    for (ln, line) in rom.lines().enumerate() {
        let line = line.find("//").map_or(line, |p| &line[..p]);
        let Some((num, rest)) = line.trim().split_once(':') else {
            continue;
        };
        let Ok(addr) = num.trim().parse::<usize>() else {
            continue;
        };
        let body = rest
            .trim()
            .strip_prefix("I")
            .map(str::trim)
            .and_then(|s| s.strip_prefix('='))
            .and_then(|s| s.trim().strip_prefix('{'))
            .and_then(|s| {
                s.trim_end()
                    .trim_end_matches(';')
                    .trim_end()
                    .strip_suffix('}')
            })
            .ok_or_else(|| format!("Module_ROM.v line {}: not `N: I = {{ ... }};`", ln + 1))?;
        let mut value = 0u64;
        let mut width = 0u32;
        let mut items = Vec::new();
        for item in body.split(',') {
            let s = defs
                .eval(item, 0)
                .map_err(|e| format!("Module_ROM.v line {}: {e}", ln + 1))?;
            width += s.width;
            value = value.checked_shl(s.width).unwrap_or(0) | s.value;
            items.push(item.trim().trim_start_matches('`').to_string());
        }
        if width > 64 {
            return Err(format!("Module_ROM.v line {}: {width} bits", ln + 1));
        }
        rows.push((addr, value, items));
    }
    rows.sort_by_key(|r| r.0);
    for (i, r) in rows.iter().enumerate() {
        if r.0 != i {
            return Err(format!("ROM rows are not contiguous at address {i}"));
        }
    }
    let mut labels = Vec::new();
    for (name, body) in &defs.0 {
        if name.starts_with("LABEL") || name.starts_with("TAG_") {
            if let Ok(s) = defs.eval(body, 0) {
                labels.push((name.clone(), s.value as u16));
            }
        }
    }
    labels.sort();
    Ok(Rom {
        words: rows.iter().map(|r| r.1).collect(),
        items: rows.into_iter().map(|r| r.2).collect(),
        labels,
    })
}

impl Rom {
    /// The ROM program in assembler syntax: the ROM's labels before their rows and each row's
    /// items with the ROM file's own macros replaced (register aliases by their register, the
    /// immediates `32'dN`/`32'bN`/`ONE`/`TRUE`/`FALSE` by `32'h` values, the light-diffuse
    /// register by its decimal address). Assembled with [`super::asm::Layout::Rom`] it must
    /// give [`Rom::words`].
    pub fn to_source(&self, definitions: &str, rom_text: &str) -> Result<String, String> {
        let mut map = HashMap::new();
        Defines::read(definitions, &mut map);
        Defines::read(rom_text, &mut map);
        let defs = Defines(map);
        let mut out = String::new();
        for (addr, items) in self.items.iter().enumerate() {
            for (name, a) in &self.labels {
                if *a as usize == addr {
                    out.push_str(&format!("{name}:\n"));
                }
            }
            let mut fields = Vec::new();
            for (k, it) in items.iter().enumerate() {
                let is_label = self.labels.iter().any(|(n, _)| n == it);
                let f = if k == 0
                    || is_label
                    || picajit_interp::theia::regs::by_name(it).is_some()
                    || matches!(it.as_str(), "VOID" | "RT_TRUE" | "RT_FALSE")
                    || it.starts_with("SWIZZLE_")
                    || it.starts_with("ENTRYPOINT_ADRR_")
                {
                    it.clone()
                } else {
                    let s = defs
                        .eval(&format!("`{it}"), 0)
                        .or_else(|_| defs.eval(it, 0))?;
                    match (s.width, defs.0.get(it)) {
                        // a macro naming a register (`RAY_INSIDE_BOX` is `R3)
                        (_, Some(body))
                            if body.starts_with('`')
                                && picajit_interp::theia::regs::by_name(
                                    body.trim_start_matches('`'),
                                )
                                .is_some() =>
                        {
                            body.trim_start_matches('`').to_string()
                        }
                        (16, _) => s.value.to_string(),
                        (32, _) => format!("32'h{:X}", s.value),
                        (w, _) => return Err(format!("row {addr}: item '{it}' of {w} bits")),
                    }
                };
                fields.push(f);
            }
            out.push_str(&format!("\t{}\n", fields.join(" ")));
        }
        Ok(out)
    }
}
