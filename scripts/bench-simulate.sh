#!/usr/bin/env bash
# End-to-end simulation benchmark (issue #33): `tilescope-cli simulate default` (67.1 M accesses,
# one MatMul 64×512×1024) with the 3C split and reuse distances, on tiny, h200 and host, with one
# thread and with two (the analyses on the second), alternated round by round so both see the same
# machine load. Prints every run's wall time, then per machine the medians, the target (≤ 1 s)
# and the two-thread speed-up; then, when the app is built and Xvfb installed, the app's wait from
# a step to the Memory view's numbers (tests/gui/gui_memory_wait.sh: target ≤ 1.5 s); and the
# sampled 4096³ GEMM's time and estimates against its recorded exact run.
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

# Sampled mode on a 4096³ GEMM (register-tiled for minigpu; its exact run, recorded once in
# tests/predict/recorded/exact-gemm4096-minigpu.json, took tens of minutes): wall time (target
# ≤ 2 s) and the estimates against the recording, each with its stated error.
recorded=tests/predict/recorded/exact-gemm4096-minigpu.json
if [[ -f $recorded ]]; then
  args=$(python3 -c "import json; print(json.load(open('$recorded'))['args'])")
  echo
  sampled=()
  for ((r = 1; r <= rounds; ++r)); do
    t0=$(date +%s.%N)
    eval "\"$cli\" simulate $args --json" >"$build/sampled-gemm4096.json" 2>/dev/null
    t1=$(date +%s.%N)
    sampled+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
  done
  echo "sampled 4096³ GEMM on minigpu: ${sampled[*]} s; median $(median "${sampled[*]}") s (target ≤ 2 s)"
  python3 - "$recorded" "$build/sampled-gemm4096.json" <<'PY'
import json, sys
want = json.load(open(sys.argv[1]))["exact"]
s = json.load(open(sys.argv[2]))["sampled"]
d, e = s["dram_bytes"], s["dram_bytes_error"]
r, re = s["last_level_hit_rate"], s["last_level_hit_rate_error"]
print(f"  DRAM bytes: sampled {d:.4g} ± {e:.3g}, exact {want['dram_bytes']:.4g}: "
      f"off by {abs(d - want['dram_bytes']) / want['dram_bytes']:.2%} "
      f"({'within' if abs(d - want['dram_bytes']) <= e else 'OUTSIDE'} the stated error)")
print(f"  L2 hit rate: sampled {r:.4%} ± {re:.4%}, exact {want['l2_hit_rate']:.4%}: "
      f"{'within' if abs(r - want['l2_hit_rate']) <= re else 'OUTSIDE'} the stated error")
PY
fi

app="$build/app/gui/tilescope"
query="$build/tests/gui/gui_json_query"
if [[ -x "$app" && -x "$query" ]] && command -v Xvfb >/dev/null 2>&1; then
  echo
  TILESCOPE_MEMORY_WAIT_LIMIT=1.5 tests/gui/gui_memory_wait.sh "$app" "$query" \
    "$(mktemp -d)" | grep -E "memory wait|PASS|FAIL" || true
fi
