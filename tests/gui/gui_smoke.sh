#!/usr/bin/env bash
# GUI smoke test: runs the real app under Xvfb (default model, then a scripted session that
# selects an op and breaks the model text), and checks each screenshot with gui_png_check.
# usage: gui_smoke.sh TILESCOPE GUI_PNG_CHECK OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 check=$2 out=$3
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.json
# Mesa, X11 and GLFW keep allocations until exit by design; leak reports from them are noise.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
run() { "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" "$@"; }

echo "== default model, 30 frames"
run --frames 30 --size 1440x900 --screenshot "$out/default.png" --layout-json "$out/default.json"
"$check" "$out/default.png" "$out/default.json" --expect-parsed true --min-ops 3

echo "== scripted: dark theme, select matmul0, break line 5, screenshot"
cat > "$out/session.script" <<'SCRIPT'
theme dark
select-op matmul0
wait-frames 3
replace-line 5 y = relu(x @ W2.T + b)
wait-frames 3
screenshot OUT/scripted.png
wait-frames 2
quit
SCRIPT
sed -i "s|OUT|$out|" "$out/session.script"
run --script "$out/session.script" --size 1440x900 --layout-json "$out/scripted.json"
"$check" "$out/scripted.png" "$out/scripted.json" --expect-parsed false --min-ops 3 \
  --expect-selection matmul0

echo "== scripted input: click a node, drag, wheel-zoom (through ImGui, as a user's devices)"
# The default graph fits at the 1.25x cap; three wheel notches zoom by 1.15^3 = 1.52x, to 1.90.
cat > "$out/input.script" <<'SCRIPT'
click-node add0
drag 700 700 640 650
scroll 700 400 3
wait-frames 2
screenshot OUT/input.png
quit
SCRIPT
sed -i "s|OUT|$out|" "$out/input.script"
run --script "$out/input.script" --size 1440x900 --layout-json "$out/input.json"
"$check" "$out/input.png" "$out/input.json" --expect-selection add0 --min-zoom 1.89 --max-zoom 1.91

echo "== key F fits the graph again after zooming"
printf 'scroll 700 400 -4\nkey F\nwait-frames 2\nquit\n' > "$out/fit.script"
run --script "$out/fit.script" --size 1440x900 --screenshot "$out/fit.png" --layout-json "$out/fit.json"
"$check" "$out/fit.png" "$out/fit.json" --min-zoom 1.249 --max-zoom 1.251

echo "== typing: click into the editor, type a new line, wait out the debounce"
# The default text ends with a newline, so a click below it puts the cursor on the empty last
# line; "z = x @ W.T" adds a second MatMul: 3 ops by hand become 4.
cat > "$out/type.script" <<'SCRIPT'
click 300 600
type z = x @ W.T
wait-seconds 1
wait-frames 2
quit
SCRIPT
run --script "$out/type.script" --size 1440x900 --screenshot "$out/type.png" \
  --layout-json "$out/type.json"
"$check" "$out/type.png" "$out/type.json" --expect-parsed true --min-ops 4

echo "== projector theme, CNN model"
run --frames 20 --theme projector --size 1600x1000 --model assets/models/cnn.model \
  --screenshot "$out/projector.png" --layout-json "$out/projector.json"
"$check" "$out/projector.png" "$out/projector.json" --expect-parsed true --min-ops 5
echo "== partial redraw (software GL): only changed rectangles drawn, the same pixels as whole frames"
# A tiled GEMM stepped through in the Tiles view, a theme switch, another view: each screenshot
# taken with partial redraw must equal, byte for byte, the one taken drawing every frame whole.
# (The other view is the Lessons view, not the Memory view: a simulation's progress bar at 0 % in
# one run and 13 % in the other, or "simulated in 3.58 s", is timing, not drawing.)
cat > "$out/partial.script" <<'SCRIPT'
set-model-text A: [256, 256]\nB: [256, 256]\nC = A @ B
wait-frames 3
view schedule
apply "tile(i, 32)"
apply "tile(j, 32)"
wait-frames 3
screenshot OUT-0.png
view tiles
tiles record
wait-jobs
wait-frames 2
screenshot OUT-1.png
tiles step
wait-frames 2
tiles step
wait-frames 2
screenshot OUT-2.png
theme light
wait-frames 3
screenshot OUT-3.png
view lessons
wait-frames 3
screenshot OUT-4.png
quit
SCRIPT
for mode in partial whole; do
  sed "s|OUT|$out/redraw-$mode|" "$out/partial.script" > "$out/redraw-$mode.script"
done
run --script "$out/redraw-partial.script" --size 1440x900
TILESCOPE_FULL_REDRAW=1 run --script "$out/redraw-whole.script" --size 1440x900
for i in 0 1 2 3 4; do
  cmp "$out/redraw-partial-$i.png" "$out/redraw-whole-$i.png" ||
    { echo "FAIL: screenshot $i differs between partial and whole-frame redraw"; exit 1; }
done
bench=$(run --no-session --script scripts/bench-frames.script --bench-frames 40 --size 1440x900)
echo "$bench"
grep -q "present: changed rectangles only" <<<"$bench" ||
  { echo "FAIL: partial redraw not used under Xvfb's llvmpipe"; exit 1; }

echo "gui smoke: all checks passed"
