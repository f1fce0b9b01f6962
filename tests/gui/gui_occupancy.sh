#!/usr/bin/env bash
# GUI scenario test for the Schedule panel's occupancy calculator, driven by clicks and typing: on
# the H200 the default model's GEMM tiled 16 × 16 and bound to blocks and threads (256 threads a
# block) counts the kernel's launch; the registers field is clicked and 128 typed, then 64, each
# checked against a hand count in the state JSON; 2048 threads show the error line; a click on
# the registers curve picks a value; on the tiny CPU machine the panel says occupancy is a GPU's
# idea; the Roofline tab clicked shows the time model's predicted point, its data-stage term
# equal to a hand count. Screenshots at 100 % and 200 % are checked by gui_png_check.
# usage: gui_occupancy.sh TILESCOPE GUI_PNG_CHECK GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 check=$2 query=$3 out=$4
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.json "$out"/*.script "$out"/*.txt
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"

# fail, at (a named widget's "X Y" in a layout), expect (a value in a state JSON) and run_fresh (a
# run from the built-in example, no session): shared with the other scenarios.
source "$(dirname "$0")/gui_player_lib.sh"
# expect_near FILE POINTER NUMBER: a number within 1e-9 of NUMBER (0.25 may print as 0.25 or
# 2.5e-01).
expect_near() {
  local got
  got=$("$query" "$out/$1.state.json" "$2") || fail "$1: no $2 in the state"
  awk -v a="$got" -v b="$3" 'BEGIN{d = a - b; exit !(d < 1e-9 && d > -1e-9)}' ||
    fail "$1: $2 is $got, expected $3"
}

steps="tile(i, j, 16, 16); bind(i.o, block.y); bind(j.o, block.x); bind(i.i, thread.y); "
steps+="bind(j.i, thread.x)"
setup="machine h200
view schedule
apply \"$steps\"
wait-frames 3"
settle=$'wait-frames 3'

# [1] The probe: the calculator follows the kernel's launch — 32 × 4 blocks of 16 × 16 threads,
# no shared memory — at the first 32 registers: 8 blocks of 8 warps fill the SM's 64 (warps and
# registers both allow 8), occupancy 1.
run_fresh p0 "$setup"
expect p0 /occupancy/threads 256
expect p0 /occupancy/threads_from_kernel true
expect p0 /occupancy/smem 0
expect p0 /occupancy/registers 32
expect p0 /occupancy/grid_blocks 128
expect p0 /occupancy/blocks_per_sm 8
expect p0 /occupancy/limiter "warps and registers"
expect_near p0 /occupancy/occupancy 1
registers=$(at p0 occupancy.registers)
threads=$(at p0 occupancy.threads)

# [2] The registers field clicked, its text selected and 128 typed, then 64. By hand: 128 × 32
# lanes = 4096 registers a warp; each of the 4 schedulers owns 65536 / 4 = 16384, so 4 warps
# each, 16 an SM = 2 blocks of 8 warps: registers limit, 16 of 64 warps, 0.25. At 64: 2048 a
# warp, 8 each, 32 an SM = 4 blocks, 0.5. Then 2048 threads: no GPU runs such a block, and the
# panel says why instead of a table.
type_into() {  # type_into "X Y" TEXT: a field clicked, emptied and typed into, as a learner would
  printf 'click %s\nkey Ctrl+A\ntype %s\nkey Enter\n%s\n' "$1" "$2" "$settle"
}
run_fresh a1 "$setup
$(type_into "$registers" 128)
write-state OUT/r128.state.json
screenshot OUT/occupancy-128.png
wait-frames 1
$(type_into "$registers" 64)
write-state OUT/r64.state.json
$(type_into "$threads" 2048)
write-state OUT/t2048.state.json
wait-frames 1"
expect r128 /occupancy/registers 128
expect r128 /occupancy/threads 256
expect r128 /occupancy/limits/registers 2
expect r128 /occupancy/blocks_per_sm 2
expect r128 /occupancy/limiter registers
expect r128 /occupancy/warps_per_sm 16
expect_near r128 /occupancy/occupancy 0.25
expect r128 /controls/occupancy.registers 128
expect r64 /occupancy/registers 64
expect r64 /occupancy/blocks_per_sm 4
expect r64 /occupancy/limiter registers
expect_near r64 /occupancy/occupancy 0.5
expect t2048 /occupancy/threads 2048
expect t2048 /occupancy/threads_from_kernel false
expect t2048 /controls/occupancy.threads 2048
error=$("$query" "$out/t2048.state.json" /occupancy/error) || fail "2048 threads show no error"
[[ $error == *"cannot run on h200"* ]] || fail "2048 threads: '$error'"
if "$query" "$out/t2048.state.json" /occupancy/blocks_per_sm >/dev/null 2>&1; then
  fail "2048 threads still count blocks per SM"
fi
"$check" "$out/occupancy-128.png" "$out/a1.layout.json" --expect-parsed true --min-ops 3

# [3] The curves are further down the panel: scrolled to, then a click in the middle of the
# registers curve (8 to 255) sets the registers near 128 to the point clicked.
scrolled="$setup
control occupancy.registers 64
scroll 1200 600 -20
$settle"
run_fresh p1 "$scrolled"
curve=$(at p1 occupancy.registers.curve)
run_fresh a2 "$scrolled
click $curve
$settle
screenshot OUT/occupancy-curves.png
wait-frames 1"
picked=$("$query" "$out/a2.state.json" /occupancy/registers) || fail "a2: no registers in the state"
[[ $picked -ge 112 && $picked -le 144 && $((picked % 8)) -eq 0 ]] ||
  fail "a click mid-curve picked $picked registers, not a point near 128"
"$check" "$out/occupancy-curves.png" "$out/a2.layout.json" --expect-parsed true --min-ops 3

# [4] At 200 % the section's texts wrap inside the panel: none cut off at its edge, in the upper
# half (fields, table, sentences) nor the lower (the curves' titles and ranges).
run_fresh s2 "$setup
control occupancy.registers 128
ui-scale 2
$settle
scroll 1200 600 -6
$settle
write-layout OUT/s2-top.layout.json
screenshot OUT/occupancy-200.png
wait-frames 1
scroll 1200 600 -20
$settle
screenshot OUT/occupancy-200-curves.png
wait-frames 1"
"$check" "$out/occupancy-200.png" "$out/s2-top.layout.json" --expect-parsed true --min-ops 3
"$check" "$out/occupancy-200-curves.png" "$out/s2.layout.json" --expect-parsed true --min-ops 3
at s2-top occupancy.registers >/dev/null
at s2 occupancy.smem.curve >/dev/null
for layout in s2-top s2; do
  cut=$("$query" "$out/$layout.layout.json" /clipped_text)
  for text in "threads per block" "registers per thread" "shared memory per block" "kernel's" \
      "Registers come from" "Blocks one SM holds" "KiB of" "a warp" "blocks per SM" "waves" \
      "Occupancy (0" "8 - 255" "227 KiB" "25 %"; do
    [[ $cut != *"$text"* ]] || fail "at 200 % '$text' is cut off ($layout): $cut"
  done
done

# [5] A CPU machine: no crash, no numbers, the line that says why.
# look TEXT PNG: the frame's text and a screenshot, each after the frame has settled.
look() {
  printf '%s\nwrite-frame-text OUT/%s\n%s\nscreenshot OUT/%s\nwait-frames 1\n' \
    "$settle" "$1" "$settle" "$2"
}
run_fresh c1 "$setup
machine tiny
$(look tiny-text.txt occupancy-cpu.png)"
expect c1 /machine tiny
none=$("$query" "$out/c1.state.json" /occupancy/none) ||
  fail "tiny shows no reason for no occupancy"
[[ $none == "Occupancy is a GPU's idea"* ]] || fail "tiny: '$none'"
grep -q "Occupancy is a GPU's idea" "$out/tiny-text.txt" ||
  fail "the panel does not show the CPU line"
if grep -q "blocks per SM, limited by" "$out/tiny-text.txt"; then fail "tiny shows an occupancy"; fi
"$check" "$out/occupancy-cpu.png" "$out/c1.layout.json" --expect-parsed true --min-ops 3
# [6] The Roofline tab clicked: the time model's predicted point for the same launch. By hand: 64 ×
# 512 outputs, 16 × 16 threads a block, so 1024 warps each two rows of x by 16 columns of y; per k
# a warp loads x[i, k] (2 rows: 2 lines of 128 B) and W[j, k] (16 rows of W: 16 lines), 18
# data-stage passes, × 1024 k × 1024 warps = 18.87 M; one pass a cycle on 132 SMs at 1.98 GHz,
# × 1.03125 for the tail (128 blocks on 132 SMs: the busiest runs 1 where the mean is 128/132).
# The issue term is far smaller, so the data stage binds.
run_fresh p2 "$setup"
roofline=$(at p2 tab.roofline)
run_fresh r1 "$setup
click $roofline
wait-jobs
$(look roofline-text.txt roofline-predicted.png)"
expect r1 /view roofline
expect r1 /predicted_time/limiter "data stage"
data=$("$query" "$out/r1.state.json" /predicted_time/terms/1/seconds) || fail "r1: no data stage term"
awk -v a="$data" 'BEGIN{b = 18 * 1024 * 1024 / (132 * 1.98e9) * 1.03125; d = (a - b) / b;
  exit !(d < 0.002 && d > -0.002)}' || fail "the data stage term is $data s, not the hand count"
grep -q "predicted: .*FLOP/s, data stage-bound" "$out/roofline-text.txt" ||
  fail "the Roofline view shows no predicted point label"
# 128 blocks on h200's 132 SMs: the caption says 4 stay idle, and how to use them.
expect r1 /predicted_time/launch_note "128 blocks for 132 SMs (4 idle: bind a loop to block.x to use them)"
sed 's/\\x0a/ /g' "$out/roofline-text.txt" | grep -q "128 blocks for 132 SMs (4 idle" ||
  fail "the Roofline caption does not say the launch leaves SMs idle"
"$check" "$out/roofline-predicted.png" "$out/r1.layout.json" --expect-parsed true --min-ops 3
run_fresh r2 "$setup
machine tiny
click $roofline
wait-jobs
$settle"
none=$("$query" "$out/r2.state.json" /predicted_time/none) || fail "tiny predicts a GPU time"
[[ $none == *"choose a GPU machine"* ]] || fail "tiny: '$none'"
echo "gui occupancy: all checks passed"
