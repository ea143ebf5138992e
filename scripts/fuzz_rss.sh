#!/usr/bin/env bash
# Measure a fuzz target's memory over a run: starts `scripts/fuzz.sh TARGET SECONDS` (niced)
# and samples the fuzzer process every INTERVAL seconds: resident set (VmRSS), the number of
# mappings (/proc/PID/maps), inputs executed and corpus size (from libFuzzer's status lines).
#
# Usage: scripts/fuzz_rss.sh TARGET [SECONDS] [INTERVAL] [-- LIBFUZZER-ARGS...]
#   SECONDS   fuzzing time (default 600), INTERVAL sampling period (default 10)
#   FUZZ_RSS_FRESH=1 starts from the seeds alone (moves fuzz/corpus/TARGET aside first).
# Prints one line per sample and a summary: RSS after warm-up (the first minute), at the end,
# and the growth between them. The fuzzer's own log is kept in fuzz/artifacts/TARGET/rss.log.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:?usage: $0 TARGET [SECONDS] [INTERVAL] [-- LIBFUZZER-ARGS...]}"
seconds="${2:-600}"
interval="${3:-10}"
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift

mkdir -p "fuzz/artifacts/$target"
log="fuzz/artifacts/$target/rss.log"
if [ "${FUZZ_RSS_FRESH:-0}" = 1 ] && [ -d "fuzz/corpus/$target" ]; then
  mv "fuzz/corpus/$target" "fuzz/corpus/$target.before-rss-$(date +%s)"
fi

nice -n 10 scripts/fuzz.sh "$target" "$seconds" -- "$@" >"$log" 2>&1 &
runner=$!

# The fuzzer is the descendant of the runner whose executable is named after the target.
find_fuzzer() {
  local queue=("$runner") pid child
  while [ ${#queue[@]} -gt 0 ]; do
    pid="${queue[0]}"
    queue=("${queue[@]:1}")
    if [ "$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null)")" = "$target" ]; then
      echo "$pid"
      return 0
    fi
    for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do queue+=("$child"); done
  done
  return 1
}

fuzzer=""
start=""
printf '%6s %9s %6s %9s %7s\n' "s" "rss_mb" "maps" "inputs" "corpus"
samples=()
while kill -0 "$runner" 2>/dev/null; do
  if [ -z "$fuzzer" ]; then
    fuzzer="$(find_fuzzer || true)"
    [ -n "$fuzzer" ] && start=$SECONDS
  fi
  if [ -n "$fuzzer" ] && [ -r "/proc/$fuzzer/status" ]; then
    rss_kb="$(awk '/^VmRSS/ {print $2}' "/proc/$fuzzer/status" 2>/dev/null || true)"
    maps="$(wc -l <"/proc/$fuzzer/maps" 2>/dev/null || echo 0)"
    # libFuzzer status lines: "#12345  NEW  cov: … corp: 321/45Kb … rss: 400Mb".
    last="$(grep -a -o '^#[0-9]*.*corp: [0-9]*' "$log" 2>/dev/null | tail -n 1 || true)"
    inputs="$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")"
    corpus="$(sed -E 's/.*corp: ([0-9]+).*/\1/' <<<"$last")"
    if [ -n "$rss_kb" ]; then
      t=$((SECONDS - start))
      printf '%6d %9d %6d %9s %7s\n' "$t" $((rss_kb / 1024)) "$maps" "${inputs:--}" "${corpus:--}"
      samples+=("$t:$((rss_kb / 1024))")
    fi
  fi
  sleep "$interval"
done
status=0
wait "$runner" || status=$?

warm="" end=""
for s in "${samples[@]}"; do
  t="${s%%:*}"
  [ -z "$warm" ] && [ "$t" -ge 60 ] && warm="${s#*:}"
  end="${s#*:}"
done
grep -a -E '^(stat::|Done|=== )' "$log" || true
if [ -n "$warm" ] && [ -n "$end" ]; then
  echo "rss after warm-up (60 s): ${warm} MB; at the end: ${end} MB; growth $(((end - warm) * 100 / warm))%"
fi
exit $status
