#!/usr/bin/env bash
# End-to-end simulation benchmark (issue #33): `tilescope-cli simulate default` (67.1 M accesses,
# one MatMul 64×512×1024) with the 3C split and reuse distances, on tiny, h200 and host, with one
# thread and with two (the analyses on the second), alternated round by round so both see the same
# machine load. Prints every run's wall time, then per machine the medians, the target (≤ 1 s)
# and the two-thread speed-up; then, when the app is built and Xvfb installed, the app's wait from
# a step to the Memory view's numbers (tests/gui/gui_memory_wait.sh: target ≤ 1.5 s).
# usage: scripts/bench-simulate.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
rounds=${2:-5}
cli="$build/app/cli/tilescope-cli"
machines=(tiny h200 host)
wall() {  # seconds of one run, its output discarded
  local t0 t1
  t0=$(date +%s.%N)
  "$cli" simulate default --machine "$1" --threads "$2" >/dev/null 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
declare -A runs
for ((r = 1; r <= rounds; ++r)); do
  for m in "${machines[@]}"; do
    for t in 1 2; do
      s=$(wall "$m" "$t")
      runs[$m,$t]+="$s "
      echo "round $r: $m, $t thread(s): $s s"
    done
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "| machine | 1 thread (median s) | 2 threads (median s) | ≤ 1 s | speed-up |"
echo "| --- | --- | --- | --- | --- |"
for m in "${machines[@]}"; do
  one=$(median "${runs[$m,1]}")
  two=$(median "${runs[$m,2]}")
  awk -v m="$m" -v a="$one" -v b="$two" 'BEGIN {
    printf "| %s | %.2f | %.2f | %s | %.2fx |\n", m, a, b, (b <= 1.0 ? "yes" : "no"), a / b }'
done

app="$build/app/gui/tilescope"
query="$build/tests/gui/gui_json_query"
if [[ -x "$app" && -x "$query" ]] && command -v Xvfb >/dev/null 2>&1; then
  echo
  TILESCOPE_MEMORY_WAIT_LIMIT=1.5 tests/gui/gui_memory_wait.sh "$app" "$query" \
    "$(mktemp -d)" | grep -E "memory wait|PASS|FAIL" || true
fi
