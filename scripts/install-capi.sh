#!/usr/bin/env bash
# Install the C library that `cargo build` left in LIBDIR into PREFIX in the layout
# `cargo cinstall` (cargo-c) makes, for machines without cargo-c:
#   include/picajit.h
#   lib/libpicajit.so | lib/libpicajit.dylib | bin/picajit.dll with lib/libpicajit.dll.a (MinGW)
#     or lib/picajit.dll.lib (MSVC)
#   lib/libpicajit.a (picajit.lib for MSVC)
#   lib/pkgconfig/picajit.pc                     with cargo-c's fields
#   share/cmake/picajit/picajit-config.cmake     find_package(picajit): cmake/picajit-config.cmake
#   share/cmake/picajit/picajit-config-version.cmake
# The platform is the one the files in LIBDIR are for.
#
# Usage: scripts/install-capi.sh LIBDIR PREFIX
#   e.g. scripts/install-capi.sh target/release /usr/local
#        scripts/install-capi.sh target/x86_64-pc-windows-gnu/release /tmp/picajit-win
# (scripts/cpp_example.sh and scripts/test-windows.sh use it.)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 LIBDIR PREFIX" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
libdir=$1
prefix=$2

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/share/cmake/picajit"
cp "$root/include/picajit.h" "$prefix/include/"
# The system libraries the static library needs (pkg-config's Libs.private): what
# `cargo rustc --release --lib [--target T] -- --print native-static-libs` lists for each
# (examples/c/build.sh and cmake/picajit-config.cmake have the same lists).
if [ -e "$libdir/picajit.dll" ]; then
  mkdir -p "$prefix/bin"
  cp "$libdir/picajit.dll" "$prefix/bin/"
  if [ -e "$libdir/picajit.dll.lib" ]; then
    cp "$libdir/picajit.dll.lib" "$libdir/picajit.lib" "$prefix/lib/"
  else
    cp "$libdir/libpicajit.dll.a" "$libdir/libpicajit.a" "$prefix/lib/"
  fi
  private="-lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp"
elif [ -e "$libdir/libpicajit.dylib" ]; then
  cp "$libdir/libpicajit.dylib" "$libdir/libpicajit.a" "$prefix/lib/"
  private="-liconv -lSystem -lc -lm"
else
  cp "$libdir/libpicajit.so" "$libdir/libpicajit.a" "$prefix/lib/"
  private="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
fi

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n1)
description=$(sed -n 's/^description = "\(.*\)"/\1/p' "$root/Cargo.toml" | tail -n1)
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
Libs.private: $private
PC

cp "$root/cmake/picajit-config.cmake" "$prefix/share/cmake/picajit/"
sed "s/@PICAJIT_VERSION@/$version/" "$root/cmake/picajit-config-version.cmake.in" \
  > "$prefix/share/cmake/picajit/picajit-config-version.cmake"
echo "installed picajit $version from $libdir into $prefix"
