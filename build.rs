//! Makes the CMake package's version file (`picajit-config-version.cmake`, from
//! `cmake/picajit-config-version.cmake.in` with this crate's version) in `OUT_DIR`, where
//! `cargo cinstall` takes it from ([package.metadata.capi.install.data] in Cargo.toml). Nothing
//! else: the library and the tool are built as without it.

use std::path::PathBuf;

fn main() {
    let template = "cmake/picajit-config-version.cmake.in";
    println!("cargo::rerun-if-changed={template}");
    let text = std::fs::read_to_string(template).expect("read the CMake version template");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(
        out.join("picajit-config-version.cmake"),
        text.replace("@PICAJIT_VERSION@", env!("CARGO_PKG_VERSION")),
    )
    .expect("write picajit-config-version.cmake");
}
