#!/usr/bin/env bash
# Issue #31 in one GPU-machine call. (1) scripts/gpu-run.sh on the main suite: build, the CUDA
# tests (every attention version against float64 rows), PyTorch SDPA and the bench at
# B=4 H=16 N=4096 d=128. (2) ncu's DRAM and L2 bytes of every version there
# (scripts/attention-ncu.sh). (3) The other suites one bench process each, PyTorch SDPA measured
# first in the same call, while time is left: a suite that would not finish by the deadline is
# skipped, and what ran is kept, merged into one report. The device tool returns at most 8 files,
# so the logs go into $OUT/attention-logs.tgz beside the results: $OUT/gpu-bench.json (the
# recording, tilescope-bench/1) and $OUT/attention-ncu.json.
# Usage (GPU machine): OUT=dir [DEADLINE=s] scripts/gpu-attention-run.sh [other suites, comma-separated]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-run-out}
START=$(date +%s)
DEADLINE=${DEADLINE:-420}
REST=${1:-attention_causal,attention_1024,attention_16384,attention_bf16,attention_d64,attention_causal_1024,attention_causal_16384}
BENCH=build/headless/kernels/cuda/tilescope-gpu-bench
left() { echo $((DEADLINE - ($(date +%s) - START))); }
mkdir -p "$OUT/main" "$OUT/rest" "$OUT/ncu"

OUT="$OUT/main" timeout $((DEADLINE - 60)) scripts/gpu-run.sh --suite attention 2>&1 | tail -24
grep -hE "test cases|ERROR|attention version" "$OUT/main/tests.log" | head -12
[ -f "$OUT/main/gpu-bench.json" ] || { echo "no main recording"; }
OUT="$OUT/ncu" timeout 100 scripts/attention-ncu.sh attention 2>&1 | tail -6

# The other suites: SDPA first (all of them, one process), then one bench process per suite.
if [ -x "$BENCH" ] && [ "$(left)" -gt 60 ]; then
  "$BENCH" --attention-shapes >"$OUT/rest/shapes.json"
  timeout $(($(left) / 3)) python3 scripts/sdpa_reference.py --shapes "$OUT/rest/shapes.json" \
    --out "$OUT/rest/sdpa.json" --suite "$REST" >"$OUT/rest/sdpa.log" 2>&1
  tail -40 "$OUT/rest/sdpa.log"
  SDPA=()
  [ -f "$OUT/rest/sdpa.json" ] && SDPA=(--sdpa "$OUT/rest/sdpa.json")
  for suite in ${REST//,/ }; do
    budget=$(left)
    [ "$budget" -gt 40 ] || { echo "$suite: skipped, ${budget}s left"; continue; }
    timeout "$budget" "$BENCH" --suite "$suite" "${SDPA[@]}" --out "$OUT/rest/$suite.json" \
      >"$OUT/rest/$suite.log" 2>&1 || echo "$suite: exit $? (124 = out of time)"
    grep -E "^  v|×$" "$OUT/rest/$suite.log" | head -14
  done
fi

# One report: the main run's, with the other suites' results appended.
python3 - "$OUT" ${REST//,/ } <<'PY'
import json, os, sys
out, rest = sys.argv[1], sys.argv[2:]
main = os.path.join(out, "main", "gpu-bench.json")
if not os.path.exists(main):
    sys.exit("no main recording to merge into")
doc = json.load(open(main))
for suite in rest:
    path = os.path.join(out, "rest", suite + ".json")
    if os.path.exists(path):
        doc["suites"] += json.load(open(path))["suites"]
json.dump(doc, open(os.path.join(out, "gpu-bench.json"), "w"), indent=2)
print("merged:", [s["name"] for s in doc["suites"]])
PY
cp "$OUT/ncu/attention-ncu.json" "$OUT/attention-ncu.json" 2>/dev/null || echo "no ncu result"
(cd "$OUT" && tar czf attention-logs.tgz main rest ncu && rm -rf main rest ncu)
ls -la "$OUT"
