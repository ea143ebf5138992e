#!/usr/bin/env bash
# Cross-build picajit for aarch64-unknown-linux-gnu and run it in AArch64 processes, where the
# AArch64 JIT is the host's backend (native mapping, cache maintenance, calling convention,
# feature detection; not unicorn): the test suite, the C example, and `picajit run` and
# `picajit bench` on every example with `--engine a64`.
#
# Usage: scripts/test-aarch64.sh           (everything; 6-8 minutes on 2 cores, docs/performance.md)
#        scripts/test-aarch64.sh --no-tests (skip the test suite: build, C example, run, bench)
#
# On an x86-64 Debian bookworm host it installs what is missing with apt (after
# `dpkg --add-architecture arm64`): rustc-web and cargo-web (Debian's Rust with the AArch64
# standard library, libstd-rust-web-dev:arm64), gcc-aarch64-linux-gnu and libc6-dev-arm64-cross
# (linker, C example) and qemu-user (runs the AArch64 programs). On an AArch64 host it builds and runs natively with the
# cargo on PATH. Environment (optional):
#   PICAJIT_A64_CARGO, PICAJIT_A64_RUSTC, PICAJIT_A64_RUSTDOC
#                            another cross toolchain (default /usr/bin/cargo, rustc, rustdoc:
#                            Debian's, which a rustup install earlier on PATH would shadow)
#   PICAJIT_A64_TARGET_DIR   build directory (default target/aarch64-cross)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

run_tests=1
for arg in "$@"; do
  case "$arg" in
    --no-tests) run_tests=0 ;;
    *) echo "usage: $0 [--no-tests]" >&2; exit 2 ;;
  esac
done

target=aarch64-unknown-linux-gnu
started=$SECONDS
step() { echo "=== [$((SECONDS - started)) s] $*"; }

if [ "$(uname -m)" = aarch64 ]; then
  cargo=${PICAJIT_A64_CARGO:-cargo}
  rustc=${PICAJIT_A64_RUSTC:-rustc}
  rustdoc=${PICAJIT_A64_RUSTDOC:-rustdoc}
  runner=()
  cc=${CC:-cc}
else
  step "installing what is missing"
  need_apt=()
  installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    need_arch=1
  else
    need_arch=0
  fi
  # libc6-dev-arm64-cross is only a recommendation of the cross gcc (installs here skip
  # those); libc6:arm64 holds the loader and libc the programs run with under qemu.
  for p in rustc-web cargo-web libstd-rust-web-dev:arm64 libc6:arm64 gcc-aarch64-linux-gnu \
    libc6-dev-arm64-cross qemu-user; do
    installed "$p" || need_apt+=("$p")
  done
  if [ "$need_arch" = 1 ] || [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    if [ "$need_arch" = 1 ]; then
      $SUDO dpkg --add-architecture arm64
      [ ${#need_apt[@]} -gt 0 ] || need_apt=(libstd-rust-web-dev:arm64)
    fi
    echo "installing: ${need_apt[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${need_apt[@]}" >/dev/null
  fi
  cargo=${PICAJIT_A64_CARGO:-/usr/bin/cargo}
  rustc=${PICAJIT_A64_RUSTC:-/usr/bin/rustc}
  rustdoc=${PICAJIT_A64_RUSTDOC:-/usr/bin/rustdoc}
  # Without -L: the AArch64 loader and libc are the multiarch ones (libc6:arm64, /lib), the
  # same the programs are linked for. With `-L /usr/aarch64-linux-gnu` (the cross libc) a
  # guest pthread_create hangs under qemu 7.2 here, and libtest starts a thread per test.
  runner=(qemu-aarch64)
  cc=aarch64-linux-gnu-gcc
fi

sysroot=$("$rustc" --print sysroot)
if [ ! -d "$sysroot/lib/rustlib/$target/lib" ]; then
  echo "$rustc has no standard library for $target (in $sysroot/lib/rustlib)" >&2
  exit 1
fi

export RUSTC=$rustc RUSTDOC=$rustdoc
export CARGO_TARGET_DIR=${PICAJIT_A64_TARGET_DIR:-$root/target/aarch64-cross}
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=$cc
# Code behind cfg(target_arch) that only this build compiles must be warning-free too (the
# x86-64 clippy run never sees it); dependencies' lints stay capped by cargo.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-D warnings"
if [ ${#runner[@]} -gt 0 ]; then
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="${runner[*]}"
  # Test processes start the picajit binary and C programs through the same emulator
  # (tests/target_exe).
  export PICAJIT_TEST_RUNNER="${runner[*]}"
fi
cargo_a64() { "$cargo" "$1" --target "$target" "${@:2}"; }
echo "toolchain: $("$cargo" --version), $("$rustc" --version); runner: ${runner[*]:-none}"

step "building (release)"
cargo_a64 build --release --workspace --lib --bins
bin=$CARGO_TARGET_DIR/$target/release
picajit() { "${runner[@]}" "$bin/picajit" "$@"; }

# The binary must really be an AArch64 program that picks the AArch64 JIT by itself.
info=$(picajit info examples/mvp.v.pica --engine auto)
if ! grep -q a64 <<<"$info"; then
  echo "picajit info --engine auto does not report the AArch64 JIT:" >&2
  echo "$info" >&2
  exit 1
fi

if [ "$run_tests" = 1 ]; then
  step "test suite (C programs with $cc; memcheck does not apply under emulation)"
  CC=$cc cargo_a64 test --release --workspace --no-fail-fast
fi

step "C example (examples/c), shared and static"
out=$CARGO_TARGET_DIR/c-example
mkdir -p "$out"
picajit asm examples/mvp.v.pica -o "$out/mvp.shbin"
for static in 0 1; do
  LIBDIR=$bin OUT=$out CC=$cc STATIC=$static sh examples/c/build.sh
  printed=$("${runner[@]}" "$out/mvp" "$out/mvp.shbin")
  # Vertex 1 is (1, 2, 3) through a translation by (0.5, -1, 0) and a uniform scale by 2.
  if ! grep -qF "vertex 1: position (3, 2, 6, 1) color (0, 1, 0, 1)" <<<"$printed"; then
    echo "unexpected output of the C example (STATIC=$static):" >&2
    echo "$printed" >&2
    exit 1
  fi
done

step "picajit run: every example on the AArch64 JIT against the interpreter, every float mode"
sets=(--set v0=0.5,-0.25,2,1 --set v1=0.1,0.7,-0.3,1 --set v2=0.6,0.4,0,0 --set v3=1,2,3,0
  --set c0=1,0.5,0.25,0 --set c1=0,1,0,0.5 --set c2=0.25,0,1,0 --set c3=0,0,0.5,1
  --set c4=0.9,0.1,0,0.3 --set c5=0.5 --set c8=2,0.5,1,1 --set i0=3,0,1,0 --set b0=true)
for ex in examples/*.pica; do
  for float in "--float f24 --rounding rtz" "--float f24 --rounding rne" "--float f32"; do
    # shellcheck disable=SC2086 # $float is a list of arguments
    want=$(picajit run "$ex" --json --engine interp $float "${sets[@]}" | grep -v '"engine":')
    # shellcheck disable=SC2086
    got=$(picajit run "$ex" --json --engine a64 $float "${sets[@]}")
    if ! grep -q '"engine": "a64"' <<<"$got" || grep -q '"fallback_reason"' <<<"$got"; then
      echo "$ex ($float) did not run on the AArch64 JIT:" >&2
      echo "$got" >&2
      exit 1
    fi
    if [ "$(grep -v '"engine":' <<<"$got")" != "$want" ]; then
      echo "$ex ($float): the AArch64 JIT differs from the interpreter" >&2
      diff <(echo "$want") <(grep -v '"engine":' <<<"$got") >&2 || true
      exit 1
    fi
  done
  echo "$ex: a64 = interp (f24-rtz, f24-rne, f32)"
done

step "picajit bench: every example, interpreter and AArch64 JIT, batch 1 (per invocation) and 64"
# Under emulation the times say nothing about AArch64 hardware; this checks that every cell
# runs and matches the interpreter (the bench compares 256 vertices bit for bit first).
table=$(picajit bench --engine interp,a64 --batch 1,64 --time-ms 20 --samples 3 \
  --compile-samples 3 -q)
echo "$table"
if grep -qE 'MISMATCH|failed:|unavailable:|deopted|codegen only' <<<"$table"; then
  echo "picajit bench reported a mismatch, failure or deopt, or did not run the AArch64 JIT" >&2
  exit 1
fi
a64_rows=$(grep -c ' a64 ' <<<"$table" || true)
examples=$(find examples -maxdepth 1 -name '*.pica' | wc -l)
# One row per example, float mode and batch size.
if [ "$a64_rows" -lt $((examples * 3 * 2)) ]; then
  echo "expected $((examples * 3 * 2)) a64 rows in the bench table, found $a64_rows" >&2
  exit 1
fi

step "done: AArch64 build passed"
