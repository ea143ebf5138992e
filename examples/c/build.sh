#!/bin/sh
# Build examples/c/mvp.c against include/picajit.h and libpicajit, and assemble the shader it
# runs. Run from anywhere:
#   examples/c/build.sh && examples/c/build/mvp examples/c/build/mvp.shbin
# Environment (all optional):
#   LIBDIR   directory holding libpicajit.so/.a (default: build it with `cargo build --release`
#            and use $CARGO_TARGET_DIR/release, or target/release)
#   OUT      output directory (default: examples/c/build)
#   STATIC=1 link libpicajit.a instead of the shared library
#   CC       C compiler (default: cc)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/examples/c/build}
cc=${CC:-cc}
mkdir -p "$out"
if [ -z "${LIBDIR:-}" ]; then
  (cd "$root" && cargo build --release --lib --bin picajit)
  LIBDIR=${CARGO_TARGET_DIR:-$root/target}/release
  (cd "$root" && cargo run --release --quiet -- asm examples/mvp.v.pica -o "$out/mvp.shbin")
fi
if [ "${STATIC:-0}" = 1 ]; then
  # The system libraries Rust's standard library needs on Linux.
  link="$LIBDIR/libpicajit.a -lpthread -ldl -lm -lrt -lgcc_s -lc"
else
  link="-L$LIBDIR -lpicajit -Wl,-rpath,$LIBDIR"
fi
# shellcheck disable=SC2086 # $link is a list of arguments
"$cc" -std=c11 -Wall -Wextra -Werror -O2 -g -I"$root/include" "$root/examples/c/mvp.c" \
  -o "$out/mvp" $link
echo "built $out/mvp"
