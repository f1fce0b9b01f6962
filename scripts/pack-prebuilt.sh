#!/usr/bin/env bash
# Copies the GPU bench and the CUDA tests built here (stripped: the debug info would be most of the
# size) into a folder that travels with a device call, for scripts/gpu-run-prebuilt.sh.
# Usage: scripts/pack-prebuilt.sh [BUILD_DIR] [DEST]   (defaults: build/default, .prebuilt)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/default}
DEST=${2:-.prebuilt}
mkdir -p "$DEST"
for f in kernels/cuda/tilescope-gpu-bench tests/cuda/test_cuda; do
  strip -o "$DEST/$(basename "$f")" "$BUILD/$f"
done
ls -la "$DEST"
