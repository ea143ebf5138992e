#!/usr/bin/env bash
# Install the C library into a scratch prefix and build and run examples/cpp against it with
# CMake, as a C or C++ project consumes it: through the installed CMake package
# (find_package(picajit)), and once more through pkg-config. Called by scripts/test.sh.
#
# The install is `cargo cinstall` (cargo-c) when cargo-c is installed. Installing cargo-c
# itself compiles cargo (measured: 13 CPU-minutes, docs/performance.md), too slow for a CI
# run on a fresh machine, so it is installed only when PICAJIT_INSTALL_CARGO_C=1. Without
# cargo-c, scripts/install-capi.sh makes the same layout from `cargo build --lib` (the
# artifacts the test suite built): include/picajit.h, lib/libpicajit.{so,dylib,a},
# lib/pkgconfig/picajit.pc with the fields cargo-c writes and share/cmake/picajit/, so the
# CMake project sees what it sees after `cargo cinstall`.
set -euo pipefail
cd "$(dirname "$0")/.."

out="$PWD/target/cpp-example"
prefix="$out/prefix"
rm -rf "$out"
mkdir -p "$out"

if ! cargo cinstall --version >/dev/null 2>&1 && [ "${PICAJIT_INSTALL_CARGO_C:-0}" = 1 ]; then
  # The newest cargo-c needs the newest rustc; 0.10.24 is the last for rustc 1.95.
  cargo install cargo-c --locked || cargo install cargo-c --locked --version 0.10.24
fi

# PICAJIT_NO_CARGO_C=1 takes the second path even where cargo-c is installed (to test it).
if [ "${PICAJIT_NO_CARGO_C:-0}" != 1 ] && cargo cinstall --version >/dev/null 2>&1; then
  echo "installing with cargo-c into $prefix"
  cargo cinstall --debug --prefix "$prefix" --libdir lib --target-dir target/capi
else
  echo "cargo-c not installed (PICAJIT_INSTALL_CARGO_C=1 installs it): installing the" \
       "library built by cargo into $prefix in cargo-c's layout"
  cargo build --lib
  scripts/install-capi.sh "${CARGO_TARGET_DIR:-target}/debug" "$prefix"
fi

PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists --print-errors picajit
# Through the CMake package (what MSVC and Xcode users have: no pkg-config).
cmake -S examples/cpp -B "$out/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  | tee "$out/configure.log"
grep -q "CMake package in $prefix/share/cmake/picajit" "$out/configure.log"
cmake --build "$out/build"
"$out/build/emulator_backend"
# The static library through the CMake package (picajit::picajit_static and the system
# libraries it names).
cmake -S examples/cpp -B "$out/build-static" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DPICAJIT_STATIC=ON >/dev/null
cmake --build "$out/build-static"
"$out/build-static/emulator_backend" >/dev/null
# Through pkg-config, the fallback.
cmake -S examples/cpp -B "$out/build-pkg-config" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_picajit=ON | tee "$out/configure.log"
grep -q "pkg-config in $prefix/lib" "$out/configure.log"
cmake --build "$out/build-pkg-config"
"$out/build-pkg-config/emulator_backend" >/dev/null

# The same run under valgrind memcheck, as tests/capi.rs runs the C programs: any error or
# leaked block fails. PICAJIT_SKIP_VALGRIND=1 skips it (with a warning) where valgrind is
# missing.
if command -v valgrind >/dev/null 2>&1; then
  valgrind --quiet --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "$out/build/emulator_backend"
elif [ "${PICAJIT_SKIP_VALGRIND:-0}" = 1 ]; then
  echo "*** WARNING: valgrind not found and PICAJIT_SKIP_VALGRIND=1: the memcheck run is SKIPPED ***" >&2
else
  echo "valgrind not found: install it, or set PICAJIT_SKIP_VALGRIND=1 to skip the memcheck run" >&2
  exit 1
fi
