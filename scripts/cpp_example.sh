#!/usr/bin/env bash
# Install the C library into a scratch prefix and build and run examples/cpp against it with
# CMake and pkg-config, as a C or C++ project consumes it. Called by scripts/test.sh.
#
# The install is `cargo cinstall` (cargo-c) when cargo-c is installed. Installing cargo-c
# itself compiles cargo (measured: 13 CPU-minutes, docs/performance.md), too slow for a CI
# run on a fresh machine, so it is installed only when PICAJIT_INSTALL_CARGO_C=1. Without
# cargo-c the same layout is made from `cargo build --lib` (the artifacts the test suite
# built): include/picajit.h, lib/libpicajit.{so,dylib,a} and lib/pkgconfig/picajit.pc with
# the fields cargo-c writes, so the CMake project sees what it sees after `cargo cinstall`.
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
  mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
  cp include/picajit.h "$prefix/include/"
  for f in libpicajit.so libpicajit.dylib libpicajit.a; do
    if [ -e "target/debug/$f" ]; then cp "target/debug/$f" "$prefix/lib/"; fi
  done
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
  description=$(sed -n 's/^description = "\(.*\)"/\1/p' Cargo.toml | tail -n1)
  cat > "$prefix/lib/pkgconfig/picajit.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: picajit
Description: $description
Version: $version
Libs: -L\${libdir} -lpicajit
Cflags: -I\${includedir}
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
fi

PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists --print-errors picajit
cmake -S examples/cpp -B "$out/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$out/build"
"$out/build/emulator_backend"

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
