#!/usr/bin/env bash
# One call on the GPU machine: the counters recording (every version of sgemm, gemm_epilogue and
# grid_order under Nsight Compute, once each, cold caches) with the bench built on the development
# machine. Writes $OUT/counters.json (tilescope-counters/1) and $OUT/counters.log.
# Usage (on the GPU machine): OUT=/dir scripts/gpu-counters-prebuilt.sh PREBUILT_DIR [SIZE ...]
#   PREBUILT_DIR holds tilescope-gpu-bench (scripts/pack-prebuilt.sh makes it); sizes default to
#   the recorded 2048 and 4096.
set -uo pipefail
cd "$(dirname "$0")/.."
PRE=${1:?usage: gpu-counters-prebuilt.sh PREBUILT_DIR [SIZE ...]}
shift
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(2048 4096)
OUT=${OUT:-$PWD/gpu-run-out}
mkdir -p "$OUT"
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
for d in $(python3 -c 'import nvidia, os; p = list(nvidia.__path__)[0]; print(" ".join(os.path.join(p, x, "lib") for x in sorted(os.listdir(p))))' 2>/dev/null); do
  [ -d "$d" ] && LIBS="$LIBS:$d"
done
export LD_LIBRARY_PATH="$PRE:$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$OUT/counters.log" 2>&1
START=$(date +%s)
timeout --kill-after=5 560 "$PRE/tilescope-gpu-bench" --counters --sizes "${SIZES[@]}" \
  --out "$OUT/counters.json" >>"$OUT/counters.log" 2>&1
echo "exit $? after $(($(date +%s) - START)) s" >>"$OUT/counters.log"
tail -5 "$OUT/counters.log"
