#!/bin/sh
# Build examples/c/mvp.c against include/picajit.h and libpicajit, and assemble the shader it
# runs. Run from anywhere:
#   examples/c/build.sh && examples/c/build/mvp examples/c/build/mvp.shbin
# Environment (all optional):
#   LIBDIR   directory holding the libraries: libpicajit.so (.dylib on macOS; picajit.dll with
#            its import library libpicajit.dll.a for MinGW) and libpicajit.a (default: build them
#            with `cargo build --release` and use $CARGO_TARGET_DIR/release, or target/release)
#   OUT      output directory (default: examples/c/build)
#   STATIC=1 link libpicajit.a instead of the shared library
#   CC       C compiler (default: cc; x86_64-w64-mingw32-gcc with the libraries of
#            `cargo build --release --target x86_64-pc-windows-gnu` builds mvp.exe, which
#            scripts/test-windows.sh runs under Wine)
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
# The platform the compiler builds for (x86_64-linux-gnu, x86_64-w64-mingw32, arm64-apple-darwin..).
case $("$cc" -dumpmachine) in
  *mingw*|*windows*) platform=windows ;;
  *darwin*|*apple*) platform=macos ;;
  *) platform=linux ;;
esac
if [ "${STATIC:-0}" = 1 ]; then
  # The system libraries the static library needs: what
  # `cargo rustc --release --lib [--target T] -- --print native-static-libs` lists for each.
  case $platform in
    windows) system="-lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp" ;;
    macos) system="-liconv -lSystem -lc -lm" ;;
    *) system="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" ;;
  esac
  link="$LIBDIR/libpicajit.a $system"
elif [ "$platform" = windows ]; then
  # The import library libpicajit.dll.a; Windows has no rpath but looks for picajit.dll beside
  # the program first.
  link="-L$LIBDIR -lpicajit"
  cp "$LIBDIR/picajit.dll" "$out/"
else
  link="-L$LIBDIR -lpicajit -Wl,-rpath,$LIBDIR"
fi
# shellcheck disable=SC2086 # $link is a list of arguments
"$cc" -std=c11 -Wall -Wextra -Werror -O2 -g -I"$root/include" "$root/examples/c/mvp.c" \
  -o "$out/mvp" $link
echo "built $out/mvp"
