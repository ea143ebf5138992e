#!/usr/bin/env bash
# Compile-check picajit for macOS on a Linux machine: clippy with warnings as errors on
#   aarch64-apple-darwin  picajit-jit and picajit, every target (library, CLI, tests,
#                         benches, examples);
#   x86_64-apple-darwin   picajit-jit, every target, and picajit's library and CLI.
# This compiles what only macOS builds compile (the MAP_JIT runtime,
# jit/src/host/runtime/macos.rs) and the code behind cfg(target_os = "linux") that macOS
# leaves out. There is no Mac here: nothing is linked or run (README, "Hosts and platforms").
#
# Not checked: the x86_64-apple-darwin test build. On non-AArch64 targets picajit's tests run
# AArch64 code under unicorn (the emulate-a64 dev-dependency), whose C core cannot be built
# for macOS without Apple's SDK. The aarch64 test build compiles one C file, alloca.c of
# criterion's `alloca` dependency, which includes only <stddef.h> and <stdint.h>: clang builds
# it for arm64-apple-macosx with its own headers (-nostdlibinc; no SDK here), and as `cargo
# check` links nothing, the object is only archived.
#
# Installs what is missing: the two Rust targets (rustup) and clang (apt).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
step() { echo "=== [$((SECONDS - started)) s] $*"; }

installed=$(rustup target list --installed)
for target in aarch64-apple-darwin x86_64-apple-darwin; do
  if ! grep -qx "$target" <<<"$installed"; then
    step "installing the Rust target $target"
    rustup target add "$target"
  fi
done

find_clang() {
  command -v clang ||
    find /usr/bin -maxdepth 1 -name 'clang-[0-9]*' | sort -V | tail -n 1
}
clang=$(find_clang)
if [ -z "$clang" ]; then
  step "installing clang"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang \
    >/dev/null
  clang=$(find_clang)
fi
export CC_aarch64_apple_darwin=$clang
export CFLAGS_aarch64_apple_darwin=-nostdlibinc
echo "toolchain: $(cargo --version), $(rustc --version); C: $("$clang" --version | head -n 1)"

lints=(-D warnings)
step "aarch64-apple-darwin: picajit-jit and picajit, all targets"
cargo clippy --target aarch64-apple-darwin -p picajit-jit -p picajit --all-targets -- "${lints[@]}"
step "x86_64-apple-darwin: picajit-jit, all targets"
cargo clippy --target x86_64-apple-darwin -p picajit-jit --all-targets -- "${lints[@]}"
step "x86_64-apple-darwin: picajit, library and CLI"
cargo clippy --target x86_64-apple-darwin -p picajit --lib --bins -- "${lints[@]}"

step "done: the macOS targets check"
