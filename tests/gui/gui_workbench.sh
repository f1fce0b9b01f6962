#!/usr/bin/env bash
# GUI scenario test for the workbench (issue #7): drives the real app under Xvfb with --script —
# load a small model, fuse, tile, stage, play the tile animation, simulate the memory hierarchy,
# run the generated kernel on this CPU, visit every view and screenshot each, set two panel
# controls — then checks every screenshot's panels with gui_png_check and the final state written
# by --state-json.
# usage: gui_workbench.sh TILESCOPE GUI_PNG_CHECK OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 check=$2 out=$3
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.json
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"

# Steps: fuse the epilogue, tile i and k, stage W's k-tile in a scratchpad: 4 history entries.
cat > "$out/workbench.script" <<'SCRIPT'
set-model-text x: [32, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)
view schedule
apply "fuse(matmul0, add0, relu0)"
apply "tile(i, 8)"
apply "tile(k, 32)"
apply "stage(W, scratchpad, at=k.o)"
wait-frames 3
screenshot OUT/schedule.png
wait-frames 1
key 3
tiles record
wait-jobs
tiles play
wait-frames 8
tiles pause
wait-frames 2
screenshot OUT/tiles.png
wait-frames 1
machine host
view memory
simulate
wait-jobs
wait-frames 2
screenshot OUT/memory.png
wait-frames 1
run-cpu
wait-jobs
view timings
wait-frames 3
screenshot OUT/timings.png
wait-frames 1
machine tiny
goto-step 1
simulate
wait-jobs
goto-step 4
simulate
wait-jobs
view roofline
wait-frames 3
screenshot OUT/roofline.png
wait-frames 1
view graph
wait-frames 3
screenshot OUT/graph.png
wait-frames 1
view timings
wait-frames 2
control schedule.tile-log2 5
control palette.name bias
wait-frames 2
quit
SCRIPT
sed -i "s|OUT|$out|" "$out/workbench.script"
"$with_xvfb" -s "-screen 0 1600x1000x24" "$app" --script "$out/workbench.script" --size 1440x900 \
  --layout-json "$out/layout.json" --state-json "$out/state.json"
for shot in schedule tiles memory timings roofline graph; do
  "$check" "$out/$shot.png" "$out/layout.json" --expect-parsed true --min-ops 3
done
"$check" "$out/timings.png" "$out/layout.json" --state "$out/state.json" --expect-view timings \
  --expect-history 4 --expect-memory true --expect-cpu-run true --min-tile-frames 2
# The panel controls are app state the script set (and the frames after kept): the state JSON
# lists every one, these two as set, the others at their first values.
for want in '"schedule.tile-log2": "5"' '"palette.name": "bias"' '"schedule.group": "8"' \
    '"palette.open": "off"'; do
  if ! grep -qF "$want" "$out/state.json"; then
    echo "FAIL: state.json has no $want in its controls"
    exit 1
  fi
done
echo "gui workbench: all checks passed"
