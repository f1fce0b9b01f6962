#!/usr/bin/env bash
# Issue #31 in one GPU-machine call: (1) a quick pass of the attention suites (build, the CUDA
# tests, every version verified on small problems, PyTorch SDPA beside them); (2) ncu's DRAM and L2
# bytes of every version at the main problem (scripts/attention-ncu.sh); (3) the full-size suites
# with PyTorch SDPA measured in the same call. The device tool returns at most 8 files, so the
# logs go into $OUT/attention-logs.tgz and the two results stay beside it:
# $OUT/gpu-bench.json (the recording, tilescope-bench/1) and $OUT/attention-ncu.json.
# Usage (GPU machine): OUT=dir [QUICK=0] [FULL_LIMIT=s] scripts/gpu-attention-run.sh [full-size suites]
# QUICK=0 skips the quick pass (the full pass runs the tests too) and runs ncu last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-run-out}
FULL=${1:-attention,attention_causal,attention_1024,attention_causal_1024,attention_16384,attention_causal_16384,attention_d64,attention_bf16}
mkdir -p "$OUT/quick" "$OUT/full" "$OUT/ncu"
if [ "${QUICK:-1}" = 1 ]; then
  OUT="$OUT/quick" scripts/gpu-run.sh --quick --suite attention,attention_causal,attention_d64,attention_bf16 2>&1 | tail -45
  grep -hE "test cases|ERROR|attention version" "$OUT/quick/tests.log" | head -20
  OUT="$OUT/ncu" timeout 120 scripts/attention-ncu.sh attention 2>&1 | tail -6
fi
OUT="$OUT/full" timeout "${FULL_LIMIT:-380}" scripts/gpu-run.sh --suite "$FULL" 2>&1 | tail -80
grep -hE "test cases|ERROR|attention version" "$OUT/full/tests.log" | head -20
[ "${QUICK:-1}" = 1 ] || OUT="$OUT/ncu" timeout 120 scripts/attention-ncu.sh attention 2>&1 | tail -6
cp "$OUT/full/gpu-bench.json" "$OUT/gpu-bench.json" 2>/dev/null || echo "no full-size recording"
cp "$OUT/ncu/attention-ncu.json" "$OUT/attention-ncu.json" 2>/dev/null || echo "no ncu result"
(cd "$OUT" && tar czf attention-logs.tgz quick full ncu && rm -rf quick full ncu)
ls -la "$OUT"
