#!/usr/bin/env bash
# Frame-time benchmark of the desktop app (issue #16): under Xvfb (Mesa llvmpipe), load a 256×256
# GEMM tiled 32×32×32, start the Tiles animation, then time N frames while it plays. Prints the
# median, p95 and worst frame time and the time to the first frame — with partial redraw (the
# app's default on software OpenGL: only changed rectangles drawn) and with every frame drawn
# whole (TILESCOPE_FULL_REDRAW=1), alternated twice, then the ratio of the medians.
# usage: scripts/bench-frames.sh [BUILD_DIR] [FRAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
frames=${2:-300}
run() {
  tests/gui/with_xvfb.sh -s "-screen 0 1600x1000x24" "$build/app/gui/tilescope" --no-session \
    --script scripts/bench-frames.script --bench-frames "$frames" --size 1440x900
}
declare -a partial whole
for round in 1 2; do
  echo "== round $round: partial redraw"
  out=$(run)
  echo "$out"
  partial+=("$(sed -n 's/.*: median \([0-9.]*\) ms, p95 \([0-9.]*\) ms.*/\1 \2/p' <<<"$out")")
  echo "== round $round: whole frames (TILESCOPE_FULL_REDRAW=1)"
  out=$(TILESCOPE_FULL_REDRAW=1 run)
  echo "$out"
  whole+=("$(sed -n 's/.*: median \([0-9.]*\) ms, p95 \([0-9.]*\) ms.*/\1 \2/p' <<<"$out")")
done
for round in 0 1; do
  read -r pm pp <<<"${partial[$round]}"
  read -r wm wp <<<"${whole[$round]}"
  awk -v r=$((round + 1)) -v pm="$pm" -v pp="$pp" -v wm="$wm" -v wp="$wp" 'BEGIN {
    printf "bench-frames round %d: partial median %.2f ms p95 %.2f ms; whole median %.2f ms p95 %.2f ms; whole/partial %.2fx (medians), %.2fx (p95)\n",
      r, pm, pp, wm, wp, wm / pm, wp / pp }'
done
