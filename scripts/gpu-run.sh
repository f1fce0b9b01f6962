#!/usr/bin/env bash
# One call on the GPU machine: build the headless preset, run the CUDA tests, run
# `tilescope-cli bench --gpu`, and print a compact table last. Every step's log lands under $OUT.
# Needs .deps/include (scripts/pack-deps.sh on the development machine; carry .deps with the call).
# Usage: OUT=/some/dir scripts/gpu-run.sh [--quick] [--suite LIST] [--repeats N]
# Attention suites in LIST (attention, attention_causal, ...) also run scripts/sdpa_reference.py.
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/gpu-run-out}
mkdir -p "$OUT"
BUILD=build/headless
START=$(date +%s)
BENCH_ARGS=("$@")
STATUS=0
step() { echo "+ [$(($(date +%s) - START))s] $*"; }
elapsed() { echo $(($(date +%s) - START)); }
# Runs a command with a wall-clock limit, its output in $OUT/<name>.log; the last lines echo here.
run_logged() {
  local name=$1 limit=$2
  shift 2
  step "$name: $*"
  timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 4 "$OUT/$name.log" | sed "s/^/    [$name] /"
  [ $rc -eq 0 ] || echo "    [$name] exit code $rc (124 = timed out after ${limit}s); full log: $OUT/$name.log"
  return $rc
}

# [1] What the machine is.
step "environment"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
  nvcc --version 2>&1 || /usr/local/cuda/bin/nvcc --version 2>&1
  cmake --version 2>&1 | head -1
  g++ --version 2>&1 | head -1
  nproc
} >"$OUT/env.log" 2>&1
sed -n '2,3p' "$OUT/env.log" | sed 's/^/    /'

# [2] Header-only dependencies: the GPU machine has no package registry.
for h in nlohmann/json.hpp CLI/CLI.hpp doctest/doctest.h; do
  if [ ! -f ".deps/include/$h" ] && [ ! -f "/usr/include/$h" ]; then
    echo "ERROR: $h is missing: run scripts/pack-deps.sh on the development machine and carry .deps"
    exit 2
  fi
done

# [3] cuDNN: next to the toolkit, or a Python wheel's copy (nvidia-cudnn), or none (then the Conv2D
# suite's version 0 is im2col + cuBLAS and says so).
CUDNN_ARGS=()
if [ -f /usr/local/cuda/include/cudnn.h ] || [ -f /usr/include/cudnn.h ]; then
  step "cuDNN: system copy"
else
  CUDNN_ROOT=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  if [ -n "${CUDNN_ROOT}" ] && [ -f "$CUDNN_ROOT/include/cudnn.h" ]; then
    step "cuDNN: Python wheel at $CUDNN_ROOT"
    CUDNN_ARGS=(-DCUDNN_ROOT="$CUDNN_ROOT")
    export LD_LIBRARY_PATH="$CUDNN_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    step "cuDNN not found: conv2d version 0 will be im2col + cuBLAS"
  fi
fi

# [4] Configure and build (headless: no GUI). ptxas -v goes into the build log.
run_logged configure 120 cmake --preset headless -DTILESCOPE_CUDA=ON -DTILESCOPE_PTXAS_VERBOSE=ON \
  "${CUDNN_ARGS[@]}" || { echo "configure failed"; exit 3; }
JOBS=$(nproc)
run_logged build_cuda 300 cmake --build "$BUILD" -j"$JOBS" --target tilescope-gpu-bench test_cuda -- -k 0 ||
  { echo "the CUDA targets do not build"; STATUS=4; }
run_logged build_cli 200 cmake --build "$BUILD" -j"$JOBS" --target tilescope-cli || STATUS=5
grep -E "Compiling entry function|spill stores|Used [0-9]+ registers" "$OUT/build_cuda.log" |
  paste - - - 2>/dev/null | sed -E "s/ptxas info +: //g; s/Compiling entry function '([^']+)' for '(sm_[0-9a-z]+)'/\1 \2/" \
  >"$OUT/ptxas.txt" || true

# [5] CUDA tests (the GPU cases run here instead of skipping).
if [ -x "$BUILD/tests/cuda/test_cuda" ]; then
  run_logged tests 150 "$BUILD/tests/cuda/test_cuda" || STATUS=6
fi

# [5b] PyTorch's scaled_dot_product_attention on the attention suites' problems (issue #31), in
# the same call and before the bench, which folds its JSON in (--sdpa) beside its own versions.
SUITES=$(printf '%s\n' "${BENCH_ARGS[@]}" | awk 'prev == "--suite" { print } { prev = $0 }')
ATTENTION=$(echo "$SUITES" | tr ',' '\n' | grep '^attention' | paste -sd, || true)
if [ -n "$ATTENTION" ] && [ -x "$BUILD/kernels/cuda/tilescope-gpu-bench" ]; then
  QUICK=$(printf '%s\n' "${BENCH_ARGS[@]}" | grep -x -- --quick || true)
  "$BUILD/kernels/cuda/tilescope-gpu-bench" --attention-shapes $QUICK >"$OUT/attention-shapes.json"
  if run_logged sdpa 240 python3 scripts/sdpa_reference.py --shapes "$OUT/attention-shapes.json" \
    --out "$OUT/sdpa.json" --suite "$ATTENTION"; then
    BENCH_ARGS+=(--sdpa "$OUT/sdpa.json")
  fi
fi

# [6] The bench, through the CLI if it built, else through the stand-alone tool (same code).
JSON="$OUT/gpu-bench.json"
LEFT=$((530 - $(elapsed)))
if [ $LEFT -lt 60 ]; then
  echo "not enough time left for the bench ($LEFT s)"
  STATUS=7
elif [ -x "$BUILD/app/cli/tilescope-cli" ]; then
  run_logged bench "$LEFT" "$BUILD/app/cli/tilescope-cli" bench --gpu --out "$JSON" "${BENCH_ARGS[@]}" || STATUS=8
elif [ -x "$BUILD/kernels/cuda/tilescope-gpu-bench" ]; then
  run_logged bench "$LEFT" "$BUILD/kernels/cuda/tilescope-gpu-bench" --out "$JSON" "${BENCH_ARGS[@]}" || STATUS=8
fi

# [7] The compact table, last.
step "done in $(elapsed)s; logs in $OUT"
if [ -f "$JSON" ]; then
  python3 - "$JSON" <<'PY' || grep -E "^suite|^  v|×$" "$OUT/bench.log"
import json, sys
d = json.load(open(sys.argv[1]))
dev = d.get("device", {})
print(f"{dev.get('name')} cc {dev.get('cc')} {dev.get('sms')} SMs, driver {dev.get('driver')}, "
      f"CUDA {dev.get('cuda_runtime')}, SM clock max {dev.get('clock_mhz')} MHz; "
      f"copy {d['peaks']['gbps']:.0f} GB/s, fp32 peak {d['peaks']['gflops_fp32']/1e3:.1f} TFLOP/s (stated)")
for s in d["suites"]:
    print(f"== {s['name']}: {s.get('problem', '')}" + (f"  ERROR {s['error']}" if "error" in s else ""))
    for r in s["results"]:
        ok = "ok " if r.get("verified") else "BAD"
        ms = r.get("median_ms")
        line = f"  v{r['version']} {r['name'][:26]:26s} {ok}"
        if ms is not None:
            line += f" {ms:9.4f} ms {r['gflops']/1e3:8.2f} TFLOP/s {r.get('pct_of_reference', float('nan')):6.1f}%"
        rel = r.get("rel_error")
        line += f"  err {rel:.1e}" if rel is not None else "  err n/a"
        if not r.get("verified") and r.get("note"):
            line += "  " + r["note"][:150]
        print(line)
    for q in s.get("ratios", []):
        print(f"  ratio: {q['what']}: {q['speedup']:.2f}x")
PY
else
  echo "no bench JSON was written"
fi
exit $STATUS
