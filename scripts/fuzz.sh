#!/usr/bin/env bash
# Run the cargo-fuzz targets (libFuzzer, AddressSanitizer + LeakSanitizer).
#
# Usage: scripts/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER-ARGS...]
#   TARGET   differential | shbin | asm | engine | theia | usc_differential | all (each target in turn)
#   SECONDS  fuzzing time per target (default 60)
#
# Installs cargo-fuzz when it is missing. Uses the nightly toolchain when rustup has one and
# otherwise the stable one with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags); set
# PICAJIT_FUZZ_TOOLCHAIN=stable or =nightly to choose. The working corpus grows in
# fuzz/corpus/TARGET (seeded from fuzz/seeds/TARGET, which stays unchanged); a crash, timeout,
# leak or out-of-memory stops the run with a non-zero status and leaves the input in
# fuzz/artifacts/TARGET/. Reproduce one with
#   scripts/fuzz.sh TARGET 0 -- fuzz/artifacts/TARGET/crash-...
# and turn it into a regression test in tests/fuzz_regressions.rs.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(differential shbin asm engine theia usc_differential)
target="${1:-}"
seconds="${2:-60}"
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
extra=("$@")

case "$target" in
  all) selected=("${TARGETS[@]}") ;;
  differential | shbin | asm | engine | theia | usc_differential) selected=("$target") ;;
  *)
    echo "usage: $0 {differential|shbin|asm|engine|theia|usc_differential|all} [SECONDS] [-- LIBFUZZER-ARGS...]" >&2
    exit 2
    ;;
esac
case "$seconds" in
  '' | *[!0-9]*) echo "$0: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac

# libFuzzer is C++ (built by libfuzzer-sys), the AArch64 emulator C built with cmake.
need_apt=()
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

toolchain="${PICAJIT_FUZZ_TOOLCHAIN:-}"
if [ -z "$toolchain" ]; then
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=nightly
  else
    toolchain=stable
  fi
fi
if [ "$toolchain" = nightly ]; then
  fuzz=(cargo +nightly fuzz)
else
  # The stable compiler accepts the sanitizer and coverage flags under RUSTC_BOOTSTRAP.
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi
echo "fuzzing with the $toolchain toolchain: ${fuzz[*]}"

# One build of every target (the sanitizer build of the dependency tree is shared).
build_start=$SECONDS
"${fuzz[@]}" build
echo "fuzz build: $((SECONDS - build_start)) s"

# Memory the sanitizer and libFuzzer keep by design, bounded here (measurements in
# DEVELOPERS.md, "Fuzzer memory"; scripts/fuzz_rss.sh takes them):
# * AddressSanitizer holds freed memory in a quarantine (256 MB by default) so that a use after
#   free reads poisoned memory; with the size-class free lists behind it, that was most of the
#   resident set and most of its growth: with 64 MB the free lists behind it still grew with
#   the corpus, with 16 MB the resident set stayed level. 16 MB still holds the latest
#   frees (tens of thousands of chunks), enough for a use right after a free.
# * Its allocator returns free pages to the system every second instead of every 5 s (one
#   measured pair of runs was lower with it; DEVELOPERS.md says how much that proves).
# A value in the caller's ASAN_OPTIONS wins (it comes later); leak detection is always on.
export ASAN_OPTIONS="quarantine_size_mb=16:allocator_release_to_os_interval_ms=1000${ASAN_OPTIONS:+:$ASAN_OPTIONS}:detect_leaks=1"
status=0
for t in "${selected[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  args=(
    -max_total_time="$seconds"
    -timeout=20
    -rss_limit_mb=2048
    # Leak detection on for every target, explicitly (LeakSanitizer at the end of a run and,
    # where an input allocates more than it frees, after that input).
    -detect_leaks=1
    -print_final_stats=1
    # libFuzzer's entropic schedule keeps, per corpus input, a frequency table of the "rare"
    # features it hits, and prunes the rare set to 100 only once its most frequent member was
    # seen more than this many times (255 by default). At this project's tens of executions
    # per second few features get there, so the tables grew with every new input (27 MB of a
    # 56 MB live heap after 200 s of differential); 32 prunes them early.
    -entropic_feature_frequency_threshold=32
    -artifact_prefix="fuzz/artifacts/$t/"
  )
  [ -f "fuzz/dict/$t.dict" ] && args+=(-dict="fuzz/dict/$t.dict")
  echo "=== $t: ${seconds} s"
  corpora=("fuzz/corpus/$t" "fuzz/seeds/$t")
  # With explicit inputs (a crash file to reproduce), run just those.
  if [ ${#extra[@]} -gt 0 ] && [ -e "${extra[-1]}" ]; then corpora=(); fi
  if ! "${fuzz[@]}" run "$t" "${corpora[@]}" -- "${args[@]}" "${extra[@]}"; then
    echo "=== $t: FAILED (input saved in fuzz/artifacts/$t/)" >&2
    status=1
  fi
done
exit $status
