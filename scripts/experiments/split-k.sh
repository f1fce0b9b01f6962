#!/usr/bin/env bash
# Split-K on the GPU machine: small-M GEMM layers with and without split_k, each run by
# `tilescope-cli run --gpu` (generated CUDA, NVRTC, verified, timed beside cuBLAS) next to the
# simulator's prediction. Binaries from scripts/pack-prebuilt.sh plus tilescope-cli in PREBUILT.
# The simulation is skipped there (MAX_ACCESSES=1): the predictions are made on the development
# machine with the same steps.
# Usage (on the GPU machine): OUT=/dir scripts/experiments/split-k.sh PREBUILT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
PRE=${1:?usage: split-k.sh PREBUILT_DIR}
OUT=${OUT:-$PWD/split-k-out}
mkdir -p "$OUT"
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib:$PRE
for d in $(python3 -c 'import nvidia, os; p = list(nvidia.__path__)[0]; print(" ".join(os.path.join(p, x, "lib") for x in sorted(os.listdir(p))))' 2>/dev/null); do
  [ -d "$d" ] && LIBS="$LIBS:$d"
done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TILESCOPE_GPU_BENCH=$PRE/tilescope-gpu-bench
CLI=$PRE/tilescope-cli
W=$(mktemp -d)
# Lesson 11's batch-64 layer and a batch-16 projection with a long K.
printf 'x: [64, 1024] input\nW: [512, 1024] weight\nb: [512] weight\ny = relu(x @ W.T + b)\n' >"$W/b64.model"
printf 'x: [16, 4096] input\nW: [4096, 4096] weight\ny = x @ W.T\n' >"$W/m16.model"
# Lesson 13's batch-1 layer (a GEMV): its plan has 128 blocks of one warp, one warp per SM, so
# few loads are in flight; split_k multiplies the blocks (and the warps reading W at once).
printf 'x: [1, 1024]\nW: [4096, 1024] weight\nb: [4096] weight\ny = relu(x @ W.T + b)\n' >"$W/fwd.model"
# Lesson 5's mapping: 32 x 64 (or 16 x 64) outputs per block, 4 x 4 per thread, x and W staged.
map() {
  echo "tile(i, $1); tile(j, 64); tile(k, 16); reorder(i.o, j.o, k.o, i.i, j.i, k.i); bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 4); tile(j.i, 4); reorder(i.i.o, j.i.o, k.i, i.i.i, j.i.i); bind(i.i.o, thread.y); bind(j.i.o, thread.x); stage(x, shared, at=k.o); stage(W, shared, at=k.o)"
}
SUM="kernel(matmul0.sum); tile(i, j, 4, 128); bind(i.o, block.y); bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)"
# Lesson 13's plan_t: W stored transposed, 32 outputs per block (one warp), K in chunks.
GEMV="layout(W, transposed); fuse(matmul0, add0, relu0)"
gemv() {
  echo "tile(j, 32); tile(k, $1); reorder(i, j.o, k.o, j.i, k.i); bind(i, block.y); bind(j.o, block.x); bind(j.i, thread.x); stage(x, shared, at=k.o)"
}
GSUM="kernel(matmul0.sum); tile(j, 128); bind(i, block.y); bind(j.o, block.x); bind(j.i, thread.x)"
run() {
  local name=$1 model=$2 steps=$3
  echo "== $name: $steps" | tee -a "$OUT/split-k.log"
  "$CLI" run --gpu "$W/$model" --apply "$steps" --repeats 50 --max-accesses "${MAX_ACCESSES:-1}" 2>&1 | tee -a "$OUT/split-k.log"
}
for rep in 1 2; do
  echo "### round $rep" | tee -a "$OUT/split-k.log"
  run b64-plain b64.model "fuse(matmul0, add0, relu0); $(map 32)"
  run b64-split8 b64.model "fuse(matmul0, add0, relu0); split_k(k, 8); bind(k.p, block.z); $(map 32); $SUM"
  run m16-plain m16.model "$(map 16)"
  run m16-split4 m16.model "split_k(k, 4); bind(k.p, block.z); $(map 16); $SUM"
  run m16-split8 m16.model "split_k(k, 8); bind(k.p, block.z); $(map 16); $SUM"
  run gemv-plan_t fwd.model "$GEMV; $(gemv 256)"
  run gemv-split8 fwd.model "$GEMV; split_k(k, 8); bind(k.p, block.z); $(gemv 128); $GSUM"
  run gemv-split32 fwd.model "$GEMV; split_k(k, 32); bind(k.p, block.z); $(gemv 32); $GSUM"
done
