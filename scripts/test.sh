#!/usr/bin/env bash
# Install what the test suite needs on a fresh Debian/Ubuntu machine, then run it.
# Usage: scripts/test.sh            (full suite)
#        scripts/test.sh --quick    (skip the slow differential sweeps' long variants)
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# unicorn-engine (AArch64 JIT tests under emulation) builds its C core with cmake and
# generates bindings with libclang; the C ABI tests run under valgrind.
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
# bindgen loads libclang.so, libclang-N.so or libclang.so.N; libclang-cpp.so.N (present on
# fresh images) is a different library, so match only the names bindgen tries.
ls /usr/lib/llvm-*/lib/libclang.so /usr/lib/*-linux-gnu/libclang-[0-9]*.so \
  >/dev/null 2>&1 || need_apt+=(libclang-dev)
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
# examples/cpp is built with CMake against the installed library (its CMake package, and
# pkg-config).
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

cargo fmt --all -- --check
# The fuzz crate is its own workspace (built by cargo-fuzz); keep it formatted too.
(cd fuzz && cargo fmt -- --check)
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo test --workspace "$@"
# A made-up opcode defined only by a table row, semantics and a lowering (README
# "Architecture"): it must go through every tool and engine with nothing else changed.
cargo test --features made-up-opcode --test made_up_opcode
# A made-up fourth instruction set in its own folders (README "Architecture"): interpreter,
# both JITs, the tool and the C ABI agree on it.
cargo test --features made-up-isa --test toy
# The oldest Rust the workspace claims (`rust-version` in Cargo.toml) really builds it, with the
# locked dependencies: PICAJIT_MSRV=1 installs that toolchain through rustup when missing and
# checks every target with it. Off by default: the first run builds the dependency tree again
# (about 19 minutes on a loaded 2-core machine; the check itself then takes seconds).
if [ "${PICAJIT_MSRV:-0}" = 1 ]; then
  msrv="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
  rustup toolchain list | grep -q "^$msrv" || rustup toolchain install "$msrv" --profile minimal
  cargo +"$msrv" check --workspace --all-targets --locked --target-dir target/msrv
fi
# The C library installed (cargo-c when present) and the C++ emulator-backend example built
# with CMake against it and run.
scripts/cpp_example.sh
