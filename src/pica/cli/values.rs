//! Parsing of `--set REG=VALUES` arguments.

use crate::interp::pica::float::{FloatMode, F24};
use crate::interp::pica::state::Uniforms;
use crate::pica::shbin::{Dvle, RegisterFile};

/// A parsed assignment.
#[derive(Clone, Debug, PartialEq)]
pub enum Assignment {
    /// v0-v15, values in register representation.
    Input(usize, [f32; 4]),
    /// c0-c95, values in register representation.
    Float(usize, [f32; 4]),
    /// i0-i3.
    Int(usize, [u8; 4]),
    /// b0-b15.
    Bool(usize, bool),
}

fn parse_float(text: &str, mode: FloatMode) -> Result<f32, String> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let bits = u32::from_str_radix(hex, 16).map_err(|_| format!("bad hex value '{t}'"))?;
        if bits > 0xFF_FFFF {
            return Err(format!("raw f24 value '{t}' has more than 24 bits"));
        }
        return Ok(F24::from_bits(bits).to_f32());
    }
    let v: f32 = match t {
        "inf" | "+inf" => f32::INFINITY,
        "-inf" => f32::NEG_INFINITY,
        "nan" | "NaN" => f32::NAN,
        _ => t
            .parse()
            .map_err(|_| format!("bad number '{t}' (use decimal, or 0x... for raw f24 bits)"))?,
    };
    Ok(match mode {
        FloatMode::F24(r) => F24::from_f32(v, r).to_f32(),
        FloatMode::F32 => v,
    })
}

fn four<T: Copy>(items: Vec<T>, what: &str) -> Result<[T; 4], String> {
    match items.len() {
        1 => Ok([items[0]; 4]),
        4 => Ok([items[0], items[1], items[2], items[3]]),
        n => Err(format!("{what} takes 1 or 4 values, got {n}")),
    }
}

fn register(name: &str, dvle: Option<&Dvle>) -> Result<(char, usize), String> {
    let mut chars = name.chars();
    let first = chars.next().unwrap_or(' ');
    let rest = chars.as_str();
    if matches!(first, 'v' | 'c' | 'i' | 'b')
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_digit())
    {
        let idx: usize = rest.parse().map_err(|_| format!("bad register '{name}'"))?;
        let limit = match first {
            'v' => 16,
            'c' => 96,
            'i' => 4,
            _ => 16,
        };
        if idx >= limit {
            return Err(format!(
                "register '{name}' out of range ({first}0-{first}{})",
                limit - 1
            ));
        }
        return Ok((first, idx));
    }
    // Otherwise a uniform or input name from the DVLE's table, optionally with an element
    // index into an array uniform (`projection[2]`).
    let (base, element) = match name.split_once('[') {
        Some((b, rest)) => {
            let k: u16 = rest
                .strip_suffix(']')
                .and_then(|k| k.trim().parse().ok())
                .ok_or_else(|| format!("bad element index in '{name}'"))?;
            (b, k)
        }
        None => (name, 0),
    };
    if let Some(u) = dvle.and_then(|d| d.uniform(base)) {
        // Checked: the element index comes from the command line and the range from the
        // file, so `first + element` can overflow and a malformed table can have
        // `last < first` (found by tests/hostile_inputs.rs: `projection[65535]` panicked).
        let reg = u.first.checked_add(element).filter(|&r| r <= u.last);
        let Some(reg) = reg else {
            return Err(format!(
                "'{name}': uniform '{base}' has {} element(s)",
                (u.last as i32 - u.first as i32 + 1).max(0)
            ));
        };
        if let Some((file, idx)) = crate::pica::shbin::RegisterFile::decode(reg) {
            let c = match file {
                RegisterFile::Input => 'v',
                RegisterFile::Float => 'c',
                RegisterFile::Int => 'i',
                RegisterFile::Bool => 'b',
            };
            return Ok((c, idx as usize));
        }
    }
    Err(format!(
        "unknown register or uniform '{name}' (expected v0-v15, c0-c95, i0-i3, b0-b15 or a name from the shader's uniform table)"
    ))
}

/// Parse `NAME=VALUES`.
pub fn parse(arg: &str, mode: FloatMode, dvle: Option<&Dvle>) -> Result<Assignment, String> {
    let (name, values) = arg
        .split_once('=')
        .ok_or_else(|| format!("--set expects REG=VALUES, got '{arg}'"))?;
    let (file, idx) = register(name.trim(), dvle)?;
    let parts: Vec<&str> = values.split(',').collect();
    Ok(match file {
        'v' | 'c' => {
            let vals = parts
                .iter()
                .map(|p| parse_float(p, mode))
                .collect::<Result<Vec<_>, _>>()?;
            let v = four(vals, name)?;
            if file == 'v' {
                Assignment::Input(idx, v)
            } else {
                Assignment::Float(idx, v)
            }
        }
        'i' => {
            let vals = parts
                .iter()
                .map(|p| {
                    let t = p.trim();
                    let r = match t.strip_prefix("0x") {
                        Some(h) => u8::from_str_radix(h, 16),
                        None => t.parse::<u8>(),
                    };
                    r.map_err(|_| format!("bad int uniform component '{t}' (0-255)"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Assignment::Int(idx, four(vals, name)?)
        }
        _ => {
            let v = match values.trim() {
                "true" | "1" | "on" => true,
                "false" | "0" | "off" => false,
                t => return Err(format!("bad bool value '{t}' (true/false)")),
            };
            Assignment::Bool(idx, v)
        }
    })
}

/// The inputs as raw f24 words for the engine's exact entry points, in F24 mode; `None` in
/// F32 mode, where register values are any f32 and the engine's conversion is the identity.
/// `--set` values are register values already: decimals went through the input rule
/// (`Shader::convert_inputs`) when parsed, hex words are f24 patterns, so every value has an
/// exact f24 and a hex word such as the subnormal pattern 0x000001 reaches v0-v15 unchanged.
pub fn f24_inputs(inputs: &[[f32; 4]; 16], mode: FloatMode) -> Option<[[F24; 4]; 16]> {
    match mode {
        FloatMode::F24(r) => {
            Some(inputs.map(|row| {
                row.map(|v| F24::from_f32_exact(v).unwrap_or_else(|| F24::from_f32(v, r)))
            }))
        }
        FloatMode::F32 => None,
    }
}

/// Apply an assignment.
pub fn apply(a: &Assignment, inputs: &mut [[f32; 4]; 16], uniforms: &mut Uniforms) {
    match *a {
        Assignment::Input(i, v) => inputs[i] = v,
        Assignment::Float(i, v) => {
            uniforms.set_float_raw(i, v);
        }
        Assignment::Int(i, v) => {
            uniforms.set_int(i, v);
        }
        Assignment::Bool(i, v) => {
            uniforms.set_bool(i, v);
        }
    }
}

/// `--set` of the unit state (r0-r15, `a0=X,Y`, `aL=N`, `cmp=X,Y`) into `state`: `None` when
/// `arg` names no unit-state register (it is then an input or uniform for [`parse`]).
/// Temporaries take values like inputs (decimal or raw f24 bits); a0 and aL any 32-bit
/// integer; the cmp flags true/false or 1/0.
pub fn parse_unit_state(
    arg: &str,
    mode: FloatMode,
    state: &mut crate::interp::pica::state::UnitState,
) -> Option<Result<(), String>> {
    let (name, values) = arg.split_once('=')?;
    let name = name.trim();
    let parts: Vec<&str> = values.split(',').map(str::trim).collect();
    let ints = |what: &str| -> Result<Vec<i32>, String> {
        parts
            .iter()
            .map(|t| {
                t.parse::<i32>()
                    .map_err(|_| format!("bad {what} value '{t}' (a 32-bit integer)"))
            })
            .collect()
    };
    let result = if let Some(idx) = name
        .strip_prefix('r')
        .filter(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
    {
        match idx.parse::<usize>() {
            Ok(i) if i < 16 => parts
                .iter()
                .map(|p| parse_float(p, mode))
                .collect::<Result<Vec<_>, _>>()
                .and_then(|v| four(v, name))
                .map(|v| state.temp[i] = v),
            _ => Err(format!("register '{name}' out of range (r0-r15)")),
        }
    } else {
        match name {
            "a0" => ints("a0").and_then(|v| match v[..] {
                [x, y] => {
                    state.a0 = [x, y];
                    Ok(())
                }
                _ => Err(format!("a0 takes 2 values (x,y), got {}", v.len())),
            }),
            "aL" | "al" => ints("aL").and_then(|v| match v[..] {
                [l] => {
                    state.al = l;
                    Ok(())
                }
                _ => Err(format!("aL takes 1 value, got {}", v.len())),
            }),
            "cmp" => parts
                .iter()
                .map(|t| match *t {
                    "true" | "1" => Ok(true),
                    "false" | "0" => Ok(false),
                    t => Err(format!("bad cmp value '{t}' (true/false)")),
                })
                .collect::<Result<Vec<_>, _>>()
                .and_then(|v| match v[..] {
                    [x, y] => {
                        state.cmp = [x, y];
                        Ok(())
                    }
                    _ => Err(format!("cmp takes 2 values (x,y), got {}", v.len())),
                }),
            _ => return None,
        }
    };
    Some(result)
}
