#!/usr/bin/env bash
# GUI scenario test (issue #32): the schedule primitives that had no control of their own, applied
# with the mouse and the keyboard in the Schedule panel — a free loop order typed and "Reorder"
# clicked, "Pad" clicked, the layout menu's "transposed (column-major)" picked and "Layout"
# clicked, a pad of a dimension the tensor does not have refused with the transform's reason, and
# "Compute here" (compute_at of the elementwise producer relu0 inside the MatMul) clicked last.
# usage: gui_primitives.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 out=$3
source "$(dirname "$0")/gui_player_lib.sh"  # fail, at, expect, run_fresh, gui_start
gui_start "$out"

# relu0 is a kernel of its own, elementwise, feeding the MatMul: what compute_at can bring in.
printf 'x: [64, 64]\nW: [64, 64] weight\nh = relu(x)\ny = h @ W.T\n' >"$out/two.model"
start="set-model-file $out/two.model
wait-frames 3
machine tiny
apply \"kernel(matmul0)\"
view schedule
wait-frames 3"
run_fresh probe "$start"
layout_kind=$(at probe schedule.layout.kind)
run_fresh menu "$start
click $layout_kind
wait-frames 3"
transposed=$(at menu schedule.layout.kind.transposed)
order=$(at probe schedule.reorder.text)
reorder=$(at probe schedule.reorder)
pad=$(at probe schedule.pad)
pad_dim=$(at probe schedule.pad.dim)
layout=$(at probe schedule.layout)
compute=$(at probe schedule.compute-at)

run_fresh steps "$start
click $order
key Ctrl+A
type k, i, j
wait-frames 2
click $reorder
wait-frames 3
write-state OUT/reordered.state.json
click $pad
wait-frames 3
write-state OUT/padded.state.json
click $layout_kind
wait-frames 3
click $transposed
wait-frames 2
click $layout
wait-frames 3
write-state OUT/laid-out.state.json
click $pad_dim
key Ctrl+A
type 7
key Enter
wait-frames 2
click $pad
wait-frames 3
write-state OUT/refused.state.json
wait-frames 1
click $compute
wait-frames 3
screenshot OUT/primitives.png
wait-frames 1"
expect reordered /last_step/step "reorder(k, i, j)"
expect reordered /last_step/ok true
padded=$("$query" "$out/padded.state.json" /last_step/step)
[[ $padded == pad\(*", 0, 1)" ]] || fail "Pad applied '$padded', expected pad(TENSOR, 0, 1)"
expect padded /last_step/ok true
laid=$("$query" "$out/laid-out.state.json" /last_step/step)
[[ $laid == layout\(*", transposed)" ]] || fail "Layout applied '$laid'"
expect laid-out /last_step/ok true
expect refused /last_step/ok false
why=$("$query" "$out/refused.state.json" /last_step/explanation)
[[ $why == *dim* || $why == *dimension* ]] || fail "the refused pad says '$why'"
expect steps /last_step/step "compute_at(relu0, matmul0, at=inline)"
expect steps /last_step/ok true
echo "applied by mouse: reorder(k, i, j), $padded, $laid, compute_at(relu0, matmul0, at=inline)"
echo "refused: $why"

# The online softmax: its button under "Grid order, layout, rewrites", clicked twice — applied,
# then refused, since the softmax already finds its maximum and sum in one pass.
printf 's: [16, 64]\np = softmax(s)\n' >"$out/softmax.model"
start="set-model-file $out/softmax.model
wait-frames 3
view schedule
wait-frames 3"
run_fresh sprobe "$start"
online=$(at sprobe schedule.online-softmax.softmax0)
run_fresh online "$start
click $online
wait-frames 3
write-state OUT/online-once.state.json
click $online
wait-frames 3
screenshot OUT/online-softmax.png
wait-frames 1"
expect online-once /last_step/step "online_softmax(softmax0)"
expect online-once /last_step/ok true
expect online /last_step/ok false
again=$("$query" "$out/online.state.json" /last_step/explanation)
[[ $again == *"already computes its maximum and sum in one pass"* ]] ||
  fail "a second online_softmax says '$again'"
echo "online softmax by mouse: applied, then refused: $again"
echo "PASS"
