#!/usr/bin/env bash
# GUI scenario test (issue #33): a kernel too big to simulate access by access in a second — the
# 4096³ GEMM of assets/models/gemm4096.model, register-tiled for minigpu — opens in the Memory view
# as a sampled run that says so (its loop, its measured units, its error bar) with a button for
# the exact run; the button, clicked, asks before the hours-long exact run (the hold's message);
# run anyway, its numbers stream into the view as the trace goes. Writes screenshots of both.
# usage: gui_memory_sampled.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 out=$3
source "$(dirname "$0")/gui_player_lib.sh"  # fail, at, expect, run_fresh, gui_start
gui_start "$out"
model="$(cd "$(dirname "$0")/../.." && pwd)/assets/models/gemm4096.model"

open="set-model-file $model
wait-frames 3
machine minigpu
wait-frames 2
apply \"tile(i, j, 128, 128)\"
apply \"bind(i.o, block.y)\"
apply \"bind(j.o, block.x)\"
apply \"tile(i.i, 8)\"
apply \"tile(j.i, 8)\"
apply \"reorder(i.o, j.o, i.i.o, j.i.o, k, i.i.i, j.i.i)\"
apply \"bind(i.i.o, thread.y)\"
apply \"bind(j.i.o, thread.x)\"
view memory
wait-frames 2
wait-jobs
wait-frames 3"

run_fresh sampled "$open
write-state OUT/sampled.state.json
screenshot OUT/memory-sampled.png
wait-frames 1"
expect sampled /memory/machine minigpu
expect sampled /memory/sampled/unit_loop k
measured=$("$query" "$out/sampled.state.json" /memory/sampled/measured)
units=$("$query" "$out/sampled.state.json" /memory/sampled/units)
seconds=$("$query" "$out/sampled.state.json" /memory/simulated_seconds)
echo "sampled: $measured of $units units measured in $seconds s"
# 1024 blocks × 4096 iterations of k; at least the 32 cycles the budget plans for.
[[ $units == 4194304 ]] || fail "sampled: $units units, expected 1024 · 4096"
awk -v m="$measured" 'BEGIN { exit !(m >= 32) }' || fail "sampled: only $measured units measured"

# The exact run, asked for with the button: held (hours of simulation) with the estimate.
button=$(at sampled memory.simulate-exactly)
run_fresh exact "$open
click $button
wait-frames 3
write-state OUT/exact.state.json"
held=$("$query" "$out/exact.state.json" /memory_held) || fail "exact: the exact run was not held"
[[ $held == *"makes about"* ]] || fail "exact: held with '$held'"
echo "exact run held: $held"

# Run anyway: the numbers stream into the view as the trace goes (the counters so far), long
# before the hours-long run ends; quitting cancels it.
anyway=$(at exact job.anyway)
run_fresh stream "$open
click $button
wait-frames 3
click $anyway
wait-frames 2
wait-seconds 2
wait-frames 2
write-state OUT/stream.state.json
screenshot OUT/memory-streaming.png
wait-frames 1"
first=$("$query" "$out/stream.state.json" /memory_partial/0) ||
  fail "stream: no numbers so far while the exact run goes"
[[ $first == "So far, "* ]] || fail "stream: the first line is '$first'"
"$query" "$out/stream.state.json" /memory_partial/1 | grep -q "L1 hit rate" ||
  fail "stream: no L1 line so far"
echo "streaming: $first"
echo "PASS"
