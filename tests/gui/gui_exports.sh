#!/usr/bin/env bash
# GUI scenario test (issue #32): exports driven with clicks. On the built-in example on `tiny`, the
# Memory view simulated, then File > Export > "Memory: each level", the path typed into the
# browser and Save clicked: the CSV's main-memory row must hold the bytes the state JSON shows;
# then File > Export > "This view as a picture": the PNG must be the centre view's size (the
# graph panel of the layout JSON, in framebuffer pixels), not the window's.
# usage: gui_exports.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 out=$3
source "$(dirname "$0")/gui_player_lib.sh"  # fail, at, expect, run_fresh, gui_start
gui_start "$out"

settled=$'wait-frames 2\nwait-jobs\nwait-frames 3'
start="machine tiny
view memory
$settled"
# Where the File button, its Export items and the browser's path field and Save button are.
run_fresh probe "$start"
file=$(at probe status.file)
run_fresh menu "$start
click $file
wait-frames 3"
export_menu=$(at menu file.export)
run_fresh submenu "$start
click $file
wait-frames 3
click $export_menu
wait-frames 3"
levels=$(at submenu file.export.memory-levels)
picture=$(at submenu file.export.view)
run_fresh browser "$start
files export memory-levels $out
wait-frames 3"
path=$(at browser files.path)
ok=$(at browser files.ok)

run_fresh exported "$start
click $file
wait-frames 3
click $export_menu
wait-frames 3
click $levels
wait-frames 3
click $path
key Ctrl+A
type $out/levels.csv
wait-frames 2
click $ok
wait-frames 3
click $file
wait-frames 3
click $export_menu
wait-frames 3
click $picture
wait-frames 3
click $path
key Ctrl+A
type $out/memory-view.png
wait-frames 2
click $ok
wait-frames 3"
[[ -s $out/levels.csv ]] || fail "no levels.csv written (status: $("$query" "$out/exported.state.json" /status/message))"
head -1 "$out/levels.csv" | grep -q '^level,size_bytes,accesses,hits,misses' ||
  fail "levels.csv header: $(head -1 "$out/levels.csv")"
dram=$("$query" "$out/exported.state.json" /memory/dram_bytes)
row=$(grep '^DRAM,' "$out/levels.csv") || fail "no DRAM row in levels.csv"
IFS=, read -r -a cols <<<"$row"
[[ $((cols[6] + cols[7])) == "$dram" ]] ||
  fail "levels.csv: DRAM read ${cols[6]} + written ${cols[7]}, the Memory view $dram"
echo "levels.csv: DRAM ${cols[6]} + ${cols[7]} bytes = the view's $dram"

[[ -s $out/memory-view.png ]] || fail "no memory-view.png written"
# PNG width and height: big-endian at bytes 16-23 (the IHDR chunk).
read -r -a ihdr <<<"$(od -An -tu1 -j16 -N8 "$out/memory-view.png")"
w=$(((ihdr[0] << 24) + (ihdr[1] << 16) + (ihdr[2] << 8) + ihdr[3]))
h=$(((ihdr[4] << 24) + (ihdr[5] << 16) + (ihdr[6] << 8) + ihdr[7]))
panel_w=$("$query" "$out/exported.layout.json" /panels/2/w)
panel_h=$("$query" "$out/exported.layout.json" /panels/2/h)
name=$("$query" "$out/exported.layout.json" /panels/2/name)
[[ $name == graph ]] || fail "layout panel 2 is '$name', expected the centre view (graph)"
awk -v w="$w" -v h="$h" -v pw="$panel_w" -v ph="$panel_h" \
  'BEGIN { exit !(w - int(pw) <= 1 && int(pw) - w <= 1 && h - int(ph) <= 1 && int(ph) - h <= 1) }' ||
  fail "memory-view.png is ${w}x$h, the centre view ${panel_w}x$panel_h"
echo "memory-view.png: ${w}x$h, the centre view's rectangle"
echo "PASS"
