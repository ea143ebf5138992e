//! The `picajit` tool: `picajit COMMAND [--isa NAME] ...`. This module holds the table of
//! instruction sets and hands each command line to its ISA's commands (`pica::cli`,
//! `theia::cli`, `usc::cli`); `shared` holds what they have in common. Not part of the
//! library's API: `src/main.rs` calls [`main`].

pub(crate) mod shared;

use shared::Isa;
use std::ffi::OsString;
use std::process::ExitCode;

/// Every instruction set of the tool, the default first: adding one is one line here.
pub const ISAS: &[Isa] = &[
    Isa {
        name: "pica",
        help: "PICA200, the Nintendo 3DS GPU's shader unit",
        main: crate::pica::cli::main,
    },
    Isa {
        name: "theia",
        help: "THEIA (seed 003), the open-source ray-tracing GPU",
        main: crate::theia::cli::main,
    },
    Isa {
        name: "usc",
        help: "PowerVR Series 6 USC, as ISR text (seed 004)",
        main: crate::usc::cli::main,
    },
    #[cfg(feature = "made-up-isa")]
    crate::toy::cli::ISA,
];

/// `pica, theia or usc`, the first marked `(the default)` when `default` says so.
fn isa_names(default: bool) -> String {
    let mut names: Vec<String> = ISAS.iter().map(|i| i.name.to_string()).collect();
    if default {
        names[0].push_str(" (the default)");
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// Takes `--isa NAME` (or `--isa=NAME`) out of the arguments: every command accepts it, and
/// without it the first ISA of [`ISAS`] is meant.
fn take_isa(args: Vec<OsString>) -> Result<(&'static Isa, Vec<OsString>), String> {
    let mut isa = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = if a == "--isa" {
            Some(
                it.next()
                    .ok_or_else(|| format!("--isa needs a value: {}", isa_names(false)))?
                    .to_string_lossy()
                    .into_owned(),
            )
        } else {
            a.to_str()
                .and_then(|s| s.strip_prefix("--isa="))
                .map(str::to_string)
        };
        match value {
            Some(v) if isa.is_some() => return Err(format!("--isa given twice ({v})")),
            Some(v) => isa = Some(v),
            None => rest.push(a),
        }
    }
    let Some(name) = isa else {
        return Ok((&ISAS[0], rest));
    };
    match ISAS.iter().find(|i| i.name == name) {
        Some(i) => Ok((i, rest)),
        None => Err(format!(
            "unknown --isa '{name}': expected {}",
            isa_names(true)
        )),
    }
}

/// How a failure is printed: `picajit: error: MESSAGE`, except that messages which are already
/// located diagnostics (`file:line:col: error: …`, from the assembler) are printed as they are,
/// so that no line reads "error: … error:".
fn error_text(e: &str) -> String {
    let first = e.lines().next().unwrap_or("");
    if first.contains(": error: ") {
        e.to_string()
    } else {
        format!("picajit: error: {e}")
    }
}

/// Runs the tool on the process's command line.
pub fn main() -> ExitCode {
    let result =
        take_isa(std::env::args_os().collect()).and_then(|(isa, args)| (isa.main)(args, ISAS));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", error_text(&e));
            ExitCode::FAILURE
        }
    }
}
