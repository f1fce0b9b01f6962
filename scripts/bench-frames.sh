#!/usr/bin/env bash
# Frame-time benchmark of the desktop app (issue #7): under Xvfb (Mesa llvmpipe), load a 256×256
# GEMM tiled 32×32×32, start the Tiles animation, then time N frames while it plays. Prints the
# median, p95 and worst frame time and the time to the first frame.
# usage: scripts/bench-frames.sh [BUILD_DIR] [FRAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
frames=${2:-300}
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/gui/tilescope" --no-session \
  --script scripts/bench-frames.script --bench-frames "$frames" --size 1440x900
