#!/usr/bin/env bash
# GUI scenario test (issue #32): baselines, as Nsight Compute has them, driven with clicks. On the
# built-in example on `tiny`: the Memory view's "Pin as baseline A" clicked on the default
# lowering, then the Schedule tab, the "fuse the chain" button and the Memory tab clicked (B = the
# fused kernel); the state's comparison must hold A's DRAM bytes as the unpinned probe measured
# them, B's as the Memory view shows them, and Δ = B − A, with the fused-away intermediate matmul0
# a tensor only A has. Then the history's "A" button of entry 0 pins the default lowering from the
# fused schedule (simulated by the baseline's own job, to the same bytes); "Clear A" forgets it;
# the Timings panel's "Run A on this CPU" times A; a saved session restores A; 200 % type. Last,
# on h200, a recorded ncu run pinned as A from the Memory view's predicted-vs-measured section.
# Writes screenshots of the Memory, Roofline and Timings views with a baseline.
# usage: gui_baseline.sh TILESCOPE GUI_PNG_CHECK GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 png_check=$2 query=$3 out=$4
source "$(dirname "$0")/gui_player_lib.sh"  # fail, at, expect, run_fresh, gui_start
gui_start "$out"
num() { "$query" "$out/$1.state.json" "$2" || fail "$1: no $2 in the state"; }
# same A B: two numbers equal to the last digit JSON keeps.
same() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a == b) }'; }

settled=$'wait-frames 2\nwait-jobs\nwait-frames 3'
# The Memory view of the default lowering on tiny: A's bytes, unpinned, and where the buttons are.
run_fresh probe "machine tiny
view memory
$settled
write-layout OUT/probe-memory.layout.json
wait-frames 1
view schedule
wait-frames 3"
a_bytes=$(num probe /memory/dram_bytes)
pin=$("$query" "$out/probe-memory.layout.json" --widget memory.baseline.pin) ||
  fail "no 'Pin as baseline A' button in the Memory view"
memory_tab=$(at probe tab.memory)
schedule_tab=$(at probe tab.schedule)
roofline_tab=$(at probe tab.roofline)
fuse=$(at probe schedule.fuse-chain)
pin0=$(at probe schedule.pin.0)

# Pin A in the Memory view, change B with the fuse button, read Δ.
run_fresh pinned "machine tiny
click $memory_tab
$settled
click $pin
wait-frames 2
click $schedule_tab
wait-frames 2
click $fuse
wait-frames 1
click $memory_tab
$settled
write-layout OUT/pinned-memory.layout.json
screenshot OUT/memory-baseline.png
wait-frames 1
click $roofline_tab
wait-frames 3
screenshot OUT/roofline-baseline.png
wait-frames 1"
expect pinned /history/steps "fuse(matmul0, add0, relu0)"
expect pinned /baseline/steps ""
expect pinned /baseline/label "the default lowering"
b_bytes=$(num pinned /memory/dram_bytes)
last=$(num pinned /baseline/comparison/levels | grep -o '"level"' | wc -l)
dram=$((last - 1))
expect pinned /baseline/comparison/levels/$dram/what bytes
got_a=$(num pinned /baseline/comparison/levels/$dram/a)
got_b=$(num pinned /baseline/comparison/levels/$dram/b)
delta=$(num pinned /baseline/comparison/levels/$dram/delta)
same "$got_a" "$a_bytes" || fail "A's DRAM bytes are $got_a, the unpinned default lowering $a_bytes"
same "$got_b" "$b_bytes" || fail "B's DRAM bytes are $got_b, the Memory view's $b_bytes"
same "$delta" "$((b_bytes - a_bytes))" || fail "Δ is $delta, B − A is $((b_bytes - a_bytes))"
echo "pinned: DRAM A $a_bytes B $b_bytes, Δ $delta ($(num pinned /baseline/comparison/levels/$dram/relative))"
# matmul0 is fused away: a tensor only A has (B's bytes 0), still listed.
tensors=$("$query" "$out/pinned.state.json" /baseline/comparison/tensors)
grep -q '"matmul0"' <<<"$tensors" || fail "the fused-away matmul0 is not among the tensors"
"$png_check" "$out/memory-baseline.png" "$out/pinned-memory.layout.json" --state "$out/pinned.state.json" --expect-view roofline --expect-memory true || fail "memory-baseline.png: see above"
clear=$("$query" "$out/pinned-memory.layout.json" --widget memory.baseline.clear) ||
  fail "no 'Clear A' button once A is pinned"

# Pin entry 0 from the fused schedule with the history's "A" button: the baseline's own job.
run_fresh history "machine tiny
click $schedule_tab
wait-frames 2
click $fuse
wait-frames 2
click $pin0
wait-frames 1
click $memory_tab
$settled
write-state OUT/history-pinned.state.json
wait-frames 1
click $clear
wait-frames 2
view timings
wait-frames 2"
hist_a=$("$query" "$out/history-pinned.state.json" /baseline/comparison/levels/$dram/a) ||
  fail "history: no comparison after pinning entry 0"
same "$hist_a" "$a_bytes" || fail "history: A (entry 0) has $hist_a bytes, expected $a_bytes"
expect history-pinned /baseline/step_count 0
"$query" "$out/history.state.json" /baseline >/dev/null 2>&1 && fail "Clear A left the baseline"
echo "history entry 0 pinned from step 1: A $hist_a bytes; cleared"

# A in time: Timings' "Run A on this CPU", beside B's run; then a saved session restores A.
run_fresh timings-probe "machine tiny
view memory
$settled
baseline pin
wait-frames 2
view timings
wait-frames 3"
run_a=$(at timings-probe timings.baseline.run-cpu)
run_fresh timed "machine tiny
click $memory_tab
$settled
click $pin
wait-frames 2
view timings
wait-frames 3
click $run_a
wait-frames 2
wait-jobs
wait-frames 3
screenshot OUT/timings-baseline.png
write-state OUT/timed.state.json
wait-frames 1
save-session OUT/session.json
wait-frames 1"
ms=$(num timed /baseline/cpu_median_ms)
awk -v m="$ms" 'BEGIN { exit !(m > 0) }' || fail "A ran in $ms ms on this CPU"
echo "A on this CPU: $ms ms (median)"
run_fresh restored "open-session OUT/session.json
$settled
view memory
$settled
ui-scale 2
wait-frames 3
screenshot OUT/memory-baseline-200.png
write-state OUT/restored.state.json
wait-frames 1"
expect restored /baseline/label "the default lowering"
expect restored /baseline/ready true
restored_a=$(num restored /baseline/dram_bytes)
same "$restored_a" "$a_bytes" || fail "restored: A has $restored_a bytes, expected $a_bytes"
echo "session restored A ($restored_a bytes); 200 % screenshot written"

# A recording as A: on h200, the Memory view's "Predicted vs measured" section's "Pin as A" pins
# the recorded run shown (run 0 of the H200's ncu recording); A's DRAM bytes must be the
# recording's own (read from its file here), B's the Memory view's.
run_fresh rec-probe "machine h200
view memory
$settled
write-layout OUT/rec-probe.layout.json
wait-frames 1"
pin_rec=$("$query" "$out/rec-probe.layout.json" --widget memory.measured.pin) ||
  fail "no 'Pin as A' button in the Memory view's predicted-vs-measured section"
run_fresh recorded "machine h200
view memory
$settled
click $pin_rec
wait-frames 2
$settled
screenshot OUT/memory-baseline-recorded.png
wait-frames 1
click $roofline_tab
wait-frames 3
screenshot OUT/roofline-baseline-recorded.png
wait-frames 1"
expect recorded /baseline/recording/run 0
file=$(num recorded /baseline/recording/file)
rd=$("$query" "$file" /runs/0/measured/dram_read_bytes) || fail "no DRAM reads in $file's run 0"
wr=$("$query" "$file" /runs/0/measured/dram_write_bytes) || fail "no DRAM writes in $file's run 0"
rec_dram=$(awk -v r="$rd" -v w="$wr" 'BEGIN { printf "%.0f", r + w }')
# Main memory's bytes row: the one in bytes that is not L2's (bytes per FLOP follow it when the
# problem sizes differ).
last=$(num recorded /baseline/comparison/levels | grep -o '"level"' | wc -l)
mem=-1
for ((i = 0; i < last; i++)); do
  [[ $(num recorded /baseline/comparison/levels/$i/what) == bytes &&
    $(num recorded /baseline/comparison/levels/$i/level) != L2 ]] && mem=$i
done
((mem >= 0)) || fail "recorded: no main-memory bytes row in the comparison"
rec_a=$(num recorded /baseline/comparison/levels/$mem/a)
rec_b=$(num recorded /baseline/comparison/levels/$mem/b)
same "$rec_a" "$rec_dram" || fail "recorded A has $rec_a DRAM bytes, the recording $rec_dram"
same "$rec_b" "$(num recorded /memory/dram_bytes)" || fail "B's DRAM bytes $rec_b are not the Memory view's"
echo "recorded run 0 as A: DRAM $rec_a B (the recording's), B $rec_b B"
echo "PASS"
