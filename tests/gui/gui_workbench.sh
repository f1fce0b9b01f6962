#!/usr/bin/env bash
# GUI scenario test for the workbench (issue #7): drives the real app under Xvfb with --script —
# load a small model, fuse, tile, stage, play the tile animation, simulate the memory hierarchy,
# run the generated kernel on this CPU, visit every view and screenshot each, set two panel
# controls — then checks every screenshot's panels with gui_png_check and the final state written
# by --state-json.
# Last, the Tiles view's GPU mode with clicks only: the mode's radio button, a block of the launch
# grid, a warp's button (each position read from a probe run's --layout-json).
# usage: gui_workbench.sh TILESCOPE GUI_PNG_CHECK GUI_JSON_QUERY OUT_DIR
#        (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 check=$2 query=$3 out=$4
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

# [GPU mode] 64×64 GEMM on minigpu (8 SMs): rows of y to blocks 8 at a time (block.y), columns 32
# at a time (block.x), one row per warp (thread.y), 32 columns across a warp's lanes (thread.x).
# 2 × 8 = 16 blocks → 2 waves of 8; block 9 runs in wave 2 on SM 1.
gpu_setup='set-model-text x: [64, 64]\nW: [64, 64] weight\nb: [64] weight\ny = relu(x @ W.T + b)
machine minigpu
apply "fuse(matmul0, add0, relu0); tile(i, 8); tile(j, 32); reorder(i.o, j.o, i.i, j.i, k); bind(i.o, block.y); bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)"
view tiles
wait-frames 3
wait-jobs
wait-frames 3'
run_gpu() {
  local name=$1 text=$2
  printf '%s\n%s\nquit\n' "$gpu_setup" "$text" | sed "s|OUT|$out|g" >"$out/$name.script"
  "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" --no-session --script "$out/$name.script" \
    --size 1440x900 --layout-json "$out/$name.layout.json" --state-json "$out/$name.state.json"
}
at() {
  "$query" "$out/$1.layout.json" --widget "$2" || { echo "FAIL: widget $2 is not on the screen of $1"; exit 1; }
}
settle=$'wait-frames 3\nwait-jobs\nwait-frames 3'
run_gpu g0 ""
mode=$(at g0 tiles.mode.gpu)
run_gpu g1 "click $mode"$'\n'"$settle"
block=$(at g1 tiles.block.9)
run_gpu g2 "click $mode"$'\n'"$settle"$'\n'"click $block"$'\n'"$settle"
warp=$(at g2 tiles.warp.3)
run_gpu g3 "click $mode"$'\n'"$settle"$'\n'"click $block"$'\n'"$settle"$'\n'"click $warp"$'\n'"$settle"$'\ntiles step\nwait-frames 3\nscreenshot OUT/tiles-gpu.png\nwait-frames 1'
"$check" "$out/tiles-gpu.png" "$out/g3.layout.json" --expect-parsed true --min-ops 3
expect() {
  local got
  got=$("$query" "$out/$1.state.json" "$2") || { echo "FAIL: $1: no $2 in the state"; exit 1; }
  [[ "$got" == "$3" ]] || { echo "FAIL: $1: $2 is '$got', expected '$3'"; exit 1; }
}
expect g1 /tiles/gpu true
expect g1 /tiles/gpu_wave/block 0
expect g3 /tiles/gpu_wave/block 9
expect g3 /tiles/gpu_wave/warp 3
expect g3 /tiles/gpu_wave/wave 1
expect g3 /tiles/gpu_wave/sm 1
# Warp 3 of block 9 (row 35; columns 32…63) over its wave, by hand: per k (64) x[35, k] is one
# word for all lanes (1 sector) and W[32…63, k] one word from each of 32 rows 256 B apart (32
# sectors); then b[32…63] and the store of y[35, 32…63], 128 B each (4 sectors):
# 64·1 + 64·32 + 4 + 4 = 2120 sectors, where 64·1 + 64·4 + 4 + 4 = 328 would hold the bytes.
expect g3 /tiles/gpu_wave/warp_sectors 2120
expect g3 /tiles/gpu_wave/warp_ideal_sectors 328
# [Split-K] The Schedule view's "split" button of the reduction loop k, clicked with the tile
# factor at 4 (control schedule.tile-log2 2): the GEMM becomes two kernels, the slices and their
# sum, and the steps continue on the slices.
split_setup='set-model-text x: [8, 64]\nW: [16, 64] weight\ny = x @ W.T
view schedule
control schedule.tile-log2 2
wait-frames 3'
run_split() {
  local name=$1 text=$2
  printf '%s\n%s\nquit\n' "$split_setup" "$text" >"$out/$name.script"
  "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" --no-session --script "$out/$name.script" \
    --size 1440x900 --layout-json "$out/$name.layout.json" --state-json "$out/$name.state.json"
}
run_split s0 ""
run_split s1 "click $(at s0 schedule.split-k.k)"$'\n'"$settle"
expect s1 /history/steps "split_k(k, 4)"
expect s1 /last_step/ok true
expect s1 /kernel matmul0
expect s1 /kernel_ops/0 matmul0
echo "gui workbench: all checks passed"
