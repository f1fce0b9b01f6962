#!/usr/bin/env bash
# One call on the GPU machine: hardware counters of the SGEMM progression, the GEMM epilogue and
# the grid-order pair under Nsight Compute (tilescope-gpu-bench --counters), one JSON per size.
# Uses a prebuilt bench when one travels (scripts/pack-prebuilt.sh-style, in PREBUILT_DIR), else
# builds the headless preset's bench there. Logs and JSON land under $OUT (8 files at most come
# back from a device call: env.log, metrics.txt, run.log, counters-<size>.json).
# Usage (on the GPU machine): OUT=/dir scripts/gpu-counters-run.sh [PREBUILT_DIR] [SIZES...]
set -uo pipefail
cd "$(dirname "$0")/.."
PRE=${1:-.prebuilt}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(2048 4096)
OUT=${OUT:-$PWD/gpu-counters-out}
mkdir -p "$OUT"
LOG="$OUT/run.log"
START=$(date +%s)
say() { echo "+ [$(($(date +%s) - START))s] $*" | tee -a "$LOG"; }

# The bench links cuBLAS and NVRTC dynamically: the toolkit's, else the Python wheels'.
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
for d in $(python3 -c 'import nvidia, os; p = list(nvidia.__path__)[0]; print(" ".join(os.path.join(p, x, "lib") for x in sorted(os.listdir(p))))' 2>/dev/null); do
  [ -d "$d" ] && LIBS="$LIBS:$d"
done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
export TILESCOPE_NCU=$NCU
say "environment (ncu: $NCU)"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  "$NCU" --version
} >"$OUT/env.log" 2>&1
tail -n 3 "$OUT/env.log" | tee -a "$LOG"

# Which of the table's metrics this ncu knows on this chip (the bench drops unknown ones itself).
"$NCU" --query-metrics --chip gh100 >"$OUT/metrics-all.txt" 2>&1
grep -E "^(dram__bytes|lts__t_sectors_srcunit_tex|l1tex__t_sectors_pipe_lsu_mem_global|l1tex__t_requests_pipe_lsu_mem_global|l1tex__data_bank_conflicts_pipe_lsu_mem_shared|l1tex__data_pipe_lsu_wavefronts_mem_shared|smsp__sass_inst_executed_op_shared|lts__t_sector|gpu__time_duration|launch__waves)" \
  "$OUT/metrics-all.txt" >"$OUT/metrics.txt"
rm -f "$OUT/metrics-all.txt"
say "$(wc -l <"$OUT/metrics.txt") matching metric base names listed"

BENCH="$PRE/tilescope-gpu-bench"
if ! "$BENCH" --help >/dev/null 2>>"$LOG"; then
  say "no usable prebuilt bench at $BENCH: building the headless bench here"
  cmake --preset headless -DTILESCOPE_CUDA=ON >"$OUT/build.log" 2>&1 &&
    cmake --build build/headless -j"$(nproc)" --target tilescope-gpu-bench >>"$OUT/build.log" 2>&1
  BENCH=build/headless/kernels/cuda/tilescope-gpu-bench
  [ -x "$BENCH" ] || { tail -n 30 "$OUT/build.log"; exit 3; }
fi

for size in "${SIZES[@]}"; do
  say "counters at ${size}³"
  timeout --kill-after=10 "${COUNTERS_LIMIT_S:-400}" "$BENCH" --counters --sizes "$size" \
    --out "$OUT/counters-$size.json" 2>&1 | tee -a "$LOG" | grep -E "ERROR|ncu:" | cut -c1-300
  say "counters at ${size}³: exit ${PIPESTATUS[0]}"
done
say "done"
