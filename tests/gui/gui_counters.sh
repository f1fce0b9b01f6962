#!/usr/bin/env bash
# GUI scenario test (issue #32): counters over time under the Tiles animation, driven with clicks.
# On the built-in example on `tiny`, the Tiles tab clicked and the walk recorded through tiny's
# caches; a click on the middle of the counters plot must move the animation there (frame ≈ half
# of the frames), and the window the view reports at that frame — each level's accesses, hits and
# bytes — must equal the same frame's row of `tilescope-cli simulate --over-time`'s CSV (another
# process, the same walk). Then the same on a GPU machine, in the Tiles view's GPU mode (the
# wave's counters against `simulate --over-time` on minigpu). Writes screenshots at 100 % and 200 %.
# usage: gui_counters.sh TILESCOPE GUI_JSON_QUERY TILESCOPE_CLI OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 cli=$3 out=$4
source "$(dirname "$0")/gui_player_lib.sh"  # fail, at, expect, run_fresh, gui_start
gui_start "$out"

settled=$'wait-frames 2\nwait-jobs\nwait-frames 3'
run_fresh probe "machine tiny
view tiles
$settled"
tiles_tab=$(at probe tab.tiles)
plot=$(at probe tiles.counters.plot)
frames=$("$query" "$out/probe.state.json" /tiles/frames)
last=$((frames - 1))

run_fresh scrub "machine tiny
click $tiles_tab
$settled
click $plot
wait-frames 3
screenshot OUT/tiles-counters.png
write-state OUT/scrubbed.state.json
wait-frames 1
ui-scale 2
wait-frames 3
screenshot OUT/tiles-counters-200.png
wait-frames 1"
frame=$("$query" "$out/scrubbed.state.json" /tiles/counters/frame)
shown=$("$query" "$out/scrubbed.state.json" /tiles/frame)
awk -v f="$shown" -v c="$frame" 'BEGIN { exit !(f == c) }' ||
  fail "the plot reads frame $frame, the animation is at $shown"
# The middle of the plot: half of the last frame, within a frame either side (pixel rounding).
awk -v f="$frame" -v l="$last" 'BEGIN { d = f - l / 2; exit !(d >= -1 && d <= 1) }' ||
  fail "a click in the middle of the plot moved to frame $frame of $last"

"$cli" simulate default --machine tiny --over-time >"$out/over-time.csv" ||
  fail "simulate --over-time failed"
row=$(awk -F, -v f="$frame" 'NR > 1 && $1 == f' "$out/over-time.csv")
[[ -n $row ]] || fail "no CSV row for frame $frame"
IFS=, read -r -a cols <<<"$row"
[[ ${cols[2]} == $("$query" "$out/scrubbed.state.json" /tiles/counters/accesses) ]] ||
  fail "accesses so far: CSV ${cols[2]}, view $("$query" "$out/scrubbed.state.json" /tiles/counters/accesses)"
for level in 0 1 2; do
  base=$((3 + 4 * level))
  name=$("$query" "$out/scrubbed.state.json" /tiles/counters/window/$level/level)
  for field in accesses:0 hits:1 bytes:3; do
    key=${field%%:*} offset=${field##*:}
    view=$("$query" "$out/scrubbed.state.json" /tiles/counters/window/$level/$key)
    csv=${cols[$((base + offset))]}
    [[ $view == "$csv" ]] || fail "frame $frame, $name $key: view $view, CSV $csv"
  done
  echo "frame $frame of $last: $name window $(
    "$query" "$out/scrubbed.state.json" /tiles/counters/window/$level/accesses) accesses, hit rate $(
    "$query" "$out/scrubbed.state.json" /tiles/counters/window/$level/hit_rate) (CSV ${cols[$((base + 2))]})"
done

# [GPU mode] A 64×64 GEMM bound to blocks and threads on minigpu (16 blocks, 2 waves of 8): the
# GPU mode's radio button clicked, then the middle of its counters plot; the window there must be
# the same frame's row of `simulate --over-time` on the GPU (block 0's wave, warp 0).
model="$out/gpu.model"
printf 'x: [64, 64]\nW: [64, 64] weight\ny = x @ W.T\n' >"$model"
steps="tile(i, 8); tile(j, 32); reorder(i.o, j.o, i.i, j.i, k); bind(i.o, block.y); bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)"
gpu_start="set-model-file $model
machine minigpu
apply \"$steps\"
view tiles
$settled"
run_fresh gpu-probe "$gpu_start"
mode=$(at gpu-probe tiles.mode.gpu)
run_fresh gpu-probe2 "$gpu_start
click $mode
$settled"
gpu_plot=$(at gpu-probe2 tiles.counters.plot)
gpu_last=$(($("$query" "$out/gpu-probe2.state.json" /tiles/gpu_wave/frames) - 1))
run_fresh gpu-scrub "$gpu_start
click $mode
$settled
click $gpu_plot
wait-frames 3
screenshot OUT/tiles-counters-gpu.png
wait-frames 1"
gframe=$("$query" "$out/gpu-scrub.state.json" /tiles/gpu_wave/counters/frame) ||
  fail "the GPU mode reports no counters over time"
awk -v f="$gframe" -v l="$gpu_last" 'BEGIN { d = f - l / 2; exit !(d >= -1 && d <= 1) }' ||
  fail "GPU mode: a click in the middle of the plot moved to frame $gframe of $gpu_last"
"$cli" simulate "$model" --machine minigpu --apply "$steps" --over-time >"$out/over-time-gpu.csv" ||
  fail "simulate --over-time on minigpu failed"
row=$(awk -F, -v f="$gframe" 'NR > 1 && $1 == f' "$out/over-time-gpu.csv")
[[ -n $row ]] || fail "no GPU CSV row for frame $gframe"
IFS=, read -r -a cols <<<"$row"
for level in 0 1 2; do
  base=$((3 + 4 * level))
  name=$("$query" "$out/gpu-scrub.state.json" /tiles/gpu_wave/counters/window/$level/level)
  for field in accesses:0 hits:1 bytes:3; do
    key=${field%%:*} offset=${field##*:}
    view=$("$query" "$out/gpu-scrub.state.json" /tiles/gpu_wave/counters/window/$level/$key)
    csv=${cols[$((base + offset))]}
    [[ $view == "$csv" ]] || fail "GPU frame $gframe, $name $key: view $view, CSV $csv"
  done
  echo "GPU frame $gframe of $gpu_last: $name window $(
    "$query" "$out/gpu-scrub.state.json" /tiles/gpu_wave/counters/window/$level/accesses) accesses (CSV ${cols[$base]})"
done
echo "PASS"
