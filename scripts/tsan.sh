#!/usr/bin/env bash
# Run the C stress test (tests/c/test_stress.c) under ThreadSanitizer: the library is built
# with the nightly toolchain's -Zsanitizer=thread (std rebuilt instrumented, -Zbuild-std:
# needs `rustup component add rust-src --toolchain nightly`), the C program is compiled with
# -fsanitize=thread, and both are linked with the nightly toolchain's TSan runtime
# (librustc-nightly_rt.tsan.a) instead of the C compiler's: Debian's gcc-12 libtsan lacks
# __tsan_memcpy, which the Rust code calls.
#
# Usage: scripts/tsan.sh [THREADS] [OPS-PER-THREAD]   (defaults 4 and 60)
# Exits non-zero on any data race report, mismatch or failed check.
set -euo pipefail
cd "$(dirname "$0")/.."

threads="${1:-4}"
ops="${2:-60}"
host="$(rustc +nightly -vV | sed -n 's/^host: //p')"
target_dir="${CARGO_TARGET_DIR:-target}/tsan"
runtime="$(rustc +nightly --print sysroot)/lib/rustlib/$host/lib/librustc-nightly_rt.tsan.a"
[ -f "$runtime" ] || { echo "no TSan runtime at $runtime" >&2; exit 2; }

RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR="$target_dir" \
    nice -n 10 cargo +nightly build -Zbuild-std --target "$host" --lib -p picajit
lib="$target_dir/$host/debug/libpicajit.a"

# The stress test's SHBIN files, assembled by the library's own test (stable toolchain).
args="$(cargo test -q -p picajit --test c_reliability -- --ignored --nocapture print_stress_arguments \
    | sed -n 's/^STRESS_ARGS //p')"
[ -n "$args" ] || { echo "could not get the stress test's arguments" >&2; exit 2; }

out="$target_dir/test_stress"
cc -std=c11 -pthread -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=thread -c \
    -Iinclude tests/c/test_stress.c -o "$out.o"
# Link without -fsanitize (which would pull in gcc's libtsan): Rust's runtime instead.
cc -pthread -o "$out" "$out.o" "$lib" \
    -Wl,--whole-archive "$runtime" -Wl,--no-whole-archive \
    -lpthread -ldl -lm -lrt -lgcc_s -lc -lstdc++

# shellcheck disable=SC2086
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" \
    PICAJIT_STRESS_THREADS="$threads" PICAJIT_STRESS_OPS="$ops" "$out" $args
echo "tsan.sh: no data race reported"
