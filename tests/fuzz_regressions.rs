//! One test per crash found by the fuzz targets (`fuzz/`, `scripts/fuzz.sh`) and the
//! hostile-input sweep that came with them (issue 6), named after what it exposed. Each
//! reproduces the original input; the fix is described at the test.

use cli_run::rejects;
use example_files::assembled;
use picajit::pica::shbin::Shbin;
use std::path::PathBuf;

mod cli_run;
mod example_files;
mod target_exe;

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    cli_run::scratch("fuzz-regressions", name, bytes)
}

/// `--set NAME[K]=...` added K to the uniform's first register unchecked: a debug build
/// panicked with "attempt to add with overflow" for `projection[65535]`, and a uniform-table
/// entry with `last < first` (a malformed SHBIN) underflowed the element count of the error
/// message. Fixed in `src/cli/values.rs` with checked arithmetic.
#[test]
fn cli_set_array_element_index_overflow() {
    rejects(&["run", "examples/mvp.v.pica", "--set", "projection[65535]=1"]);
    rejects(&["run", "examples/mvp.v.pica", "--set", "projection[65500]=1"]);
    let mut shbin = Shbin::parse(&assembled("mvp.v.pica").to_bytes()).expect("parses");
    let u = shbin.dvles[0]
        .uniforms
        .iter_mut()
        .find(|u| u.name == "projection")
        .expect("uniform");
    u.last = u.first - 1;
    let file = scratch("inverted_uniform.shbin", &shbin.to_bytes());
    let p = file.to_str().expect("path");
    rejects(&["run", p, "--set", "projection=1"]);
    rejects(&["run", p, "--set", "projection[3]=1"]);
}
