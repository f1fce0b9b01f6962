#!/usr/bin/env bash
# GUI scenario test for an honest lesson player (issue #26): lessons 1 and 5 played with input
# events only (clicks on the catalogue, Next, the prediction's field, its button, "Show me",
# "Apply these steps", a choice; keys N and 1-7; typing), with one --session file across starts.
# Asserted on the state JSON and on every text the frame drew (write-frame-text, after the mask):
# - Next without acting leaves the step's checkpoint "not yet";
# - before a prediction is settled its answer appears nowhere on screen (lesson 1: 67,174,400
#   FLOPs, in any form; lesson 5: the 16-way conflict as the Tiles view's "16 wavefronts");
# - a wrong then a right prediction is graded "after 1 retry", its answer shown only then;
# - "Show me" and "Apply these steps" mark the checkpoint "shown", never "reached by you";
# - the last step counts: 5 of 5 steps done;
# - lesson 16's trace, opened by its step, says "? GPU kernels" until the count is predicted.
# (gui_lesson_player plays lesson 2, where the learner's own clicks reach each checkpoint.)
# usage: gui_honest_player.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"
app=$1 query=$2 out=$3
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -rf "${out:?}"/*
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
session="$out/session.json"

GUI_SIZE=1600x1000 GUI_SCREEN=1700x1100
# shellcheck source=tests/gui/gui_player_lib.sh
source "$(dirname "$0")/gui_player_lib.sh"
# absent NAME PATTERN...: no line of the frame text NAME has any PATTERN (grep -E).
absent() {
  local name=$1
  shift
  [[ -s "$out/$name.txt" ]] || fail "$name: no frame text was written"
  for pattern in "$@"; do
    if grep -En "$pattern" "$out/$name.txt"; then
      fail "$name: the frame shows '$pattern' before the prediction is settled"
    fi
  done
}

# [SECTION] Lesson 1: predict the layer's FLOPs (2·64·512·1024 + 2·64·512 = 67,174,400), then a
# checkpoint the learner is shown.
lesson=01-model-to-graph
rm -f "$session"
probe p1 "key 7"
run_app a1 "$settle"$'\nkey 7\n'"$settle"$'\n'"click $(at p1 lessons.open.$lesson)"$'\n'"$settle"$'\nquit' "$session"
expect a1 /lesson/open $lesson
probe p2
run_app a2 "$settle"$'\n'"click $(at p2 lesson.next)"$'\n'"$settle"$'
key 1
wait-frames 4
write-frame-text OUT/l1-graph.txt
wait-frames 2
key 4
wait-frames 2
wait-jobs
wait-frames 3
write-frame-text OUT/l1-memory.txt
wait-frames 2
key 1
wait-frames 3
screenshot OUT/l1-masked.png
wait-frames 1
quit' "$session"
expect a2 /lesson/step_id count-flops
expect a2 /lesson/checkpoints/0/id double-batch
expect a2 /lesson/checkpoints/0/state "not yet"
expect a2 /lesson/predictions/0/revealed false
# The graph, the inspector and the Memory view count the FLOPs: none may show them yet.
for t in l1-graph l1-memory; do absent "$t" '67[.,]1[0-9]? ?M' '67[.,]2 ?M' '67,174,400' '67174400' '6\.72e'; done
grep -q '??' "$out/l1-graph.txt" || fail "l1-graph: nothing was masked: the FLOPs are on screen"

# A wrong try (60M: 10.7% low, 1% allowed), then a right one (67.2M).
predict a3 layer-flops 60M $'key 1\nwait-frames 3\nwrite-frame-text OUT/l1-retry.txt\nwait-frames 1'
expect a3 /lesson/predictions/0/attempts 1
expect a3 /lesson/predictions/0/revealed false
expect a3 /lesson/predictions/0/settled false
absent l1-retry '67[.,]2 ?M' '67,174,400'
grep -q 'Not yet — close, but too low. 1 try left.' "$out/l1-retry.txt" ||
  fail "a3: no hint after the wrong try"
predict a4 layer-flops 67.2M $'key 1\nwait-frames 3\nwrite-frame-text OUT/l1-answered.txt\nwait-frames 1'
expect a4 /lesson/predictions/0/pass true
expect a4 /lesson/predictions/0/attempts 2
expect a4 /lesson/predictions/0/revealed true
expect a4 /lesson/grade/after_retries 1
expect a4 /lesson/grade/first_try 0
grep -q '67,174,400' "$out/l1-answered.txt" || fail "a4: the FLOPs are not shown after the answer"

# "Show me" applies the lesson's solution: the goal is shown, not reached by the learner.
probe p5
run_app a5 "$settle"$'\n'"click $(at p5 lesson.show-me.double-batch)"$'\n'"$settle"$'\nquit' "$session"
expect a5 /lesson/checkpoints/0/state shown
expect a5 /lesson/checkpoints/0/reached false
expect a5 /lesson/grade/shown 1
expect a5 /lesson/grade/reached 0
expect a5 /lesson/steps/1/done true

# Steps 3 to 5 ask nothing: N walks them; reaching the last step counts it (5 of 5).
run_app a6 "$settle"$'\nkey N\nwait-frames 3\nkey N\nwait-frames 3\nkey N\nwait-frames 3\n'"$settle"$'\nquit' "$session"
expect a6 /lesson/step_id quiz
expect a6 /lesson/grade/steps_done 5
expect a6 /lesson/catalogue/0/steps_done 5

# [SECTION] The teacher's hand-out, made after answering, opened by a learner in a fresh HOME:
# the lesson at its step, no answer, no reveal, no grade, not in teacher mode.
cp "$session" "$out/teacher-session.json"
run_app h1 "$settle"$'\nteacher on\nsave-session OUT/handout.json\nwait-frames 2\nquit' \
  "$out/teacher-session.json"
if grep -q '"lesson_progress"\|"teacher"' "$out/handout.json"; then
  fail "the hand-out carries progress or teacher mode"
fi
fresh="$out/fresh-home"
mkdir -p "$fresh"
printf '%s\n' "$settle" 'open-session '"$out/handout.json" "$settle" 'quit' > "$out/h2.script"
HOME="$fresh" XDG_STATE_HOME= XDG_CACHE_HOME= timeout 300 "$with_xvfb" "$app" \
  --script "$out/h2.script" --state-json "$out/h2.state.json" > "$out/h2.log" 2>&1 ||
  { cat "$out/h2.log"; fail "h2: the app did not open the hand-out"; }
expect h2 /lesson/open $lesson
expect h2 /lesson/teacher false
expect h2 /lesson/predictions/0/made false
expect h2 /lesson/predictions/0/revealed false
expect h2 /lesson/grade/after_retries 0
expect h2 /lesson/grade/shown 0

# [SECTION] Lesson 5, step 3: which bank-conflict degree (16-way) — the Tiles view's GPU mode
# counts it as "16 wavefronts", so it must not say so before the answer; "Apply these steps"
# puts the lesson's padded schedule in place: the checkpoint is shown, not reached.
lesson=05-mapping-to-gpu
probe q1 "key 7"
run_app b1 "$settle"$'\nkey 7\n'"$settle"$'\n'"click $(at q1 lessons.open.$lesson)"$'\n'"$settle"$'\nquit' "$session"
expect b1 /lesson/open $lesson
probe q2
run_app b2 "$settle"$'\n'"click $(at q2 lesson.next)"$'\n'"$settle"$'\nquit' "$session"
probe q3
# Next into step 3; step 2's staged schedule set up (the question is about it).
run_app b3 "$settle"$'\n'"click $(at q3 lesson.next)"$'\n'"$settle"$'\nlesson apply staged\n'"$settle"$'\nquit' "$session"
expect b3 /lesson/step_id banks
expect b3 /lesson/checkpoints/0/state "not yet"
# The Tiles view's GPU mode, a warp's shared-memory reads lane by lane.
probe q3b "key 3"
run_app b3b "$settle"$'\nkey 3\n'"$settle"$'\n'"click $(at q3b tiles.mode.gpu)"$'\n'"$settle"$'
tiles seek 2
wait-frames 3
write-frame-text OUT/l5-tiles.txt
wait-frames 1
screenshot OUT/l5-tiles.png
wait-frames 1
quit' "$session"
grep -q 'load W_shared (shared): 32 lanes → ?? wavefronts' "$out/l5-tiles.txt" ||
  fail "b3b: the Tiles view does not show the W tile's reads, masked"
absent l5-tiles '16 wavefronts'
# "Apply these steps" of the padded schedule, further down the text: the wheel brings it up.
scroll=$'scroll 260 600 -8
wait-frames 3'
probe q4 "$scroll"
run_app b4 "$settle"$'\n'"$scroll"$'\n'"click $(at q4 lesson.apply.padded)"$'\n'"$settle"$'\nquit' "$session"
expect b4 /lesson/checkpoints/0/id stage-and-pad
expect b4 /lesson/checkpoints/0/state shown
expect b4 /lesson/checkpoints/0/reached false
probe q5
run_app b5 "$settle"$'\n'"click $(at q5 lesson.choice.w-conflicts.E)"$'\n'"$settle"$'\nquit' "$session"
expect b5 /lesson/predictions/0/pass true
expect b5 /lesson/grade/first_try 1
run_app b6 "$settle"$'\nkey N\nwait-frames 3\nkey N\nwait-frames 3\n'"$settle"$'\nquit' "$session"
expect b6 /lesson/grade/steps_done 5

# [SECTION] The learner's grade exported from the Lessons view (key 7, "Export my grade…", a
# path typed into the file browser): one row per lesson, lessons 1 and 5 as played above.
probe g0 "key 7"
probe g1 $'key 7\n'"$settle"$'\n'"click $(at g0 lessons.export-grade)"
for kind in json csv; do
  run_app g-$kind "$settle"$'\nkey 7\n'"$settle"$'\n'"click $(at g0 lessons.export-grade)"$'\n'"$settle"$'\n'"click $(at g1 files.path)"$'\nkey Ctrl+A\ntype '"$out/grade.$kind"$'\nwait-frames 2\n'"click $(at g1 files.ok)"$'\n'"$settle"$'\nquit' "$session"
  [[ -f "$out/grade.$kind" ]] || fail "g-$kind: no grade file at $out/grade.$kind"
done
lessons=$(ls lessons/[0-9]*.md | wc -l)
"$query" "$out/grade.json" /$((lessons - 1))/lesson >/dev/null || fail "grade.json has fewer than $lessons rows"
"$query" "$out/grade.json" /$lessons/lesson >/dev/null 2>&1 && fail "grade.json has more than $lessons rows"
# Lesson 1 (row 0): the FLOPs right after one retry, its goal shown, 5 of 5 steps. Lesson 5
# (row 4): the conflict degree right first time, its goal shown, 5 of 5 steps.
expect_file() {
  local got
  got=$("$query" "$out/grade.json" "/$1") || fail "grade.json: no /$1"
  [[ "$got" == "$2" ]] || fail "grade.json: /$1 is '$got', expected '$2'"
}
for check in "0/after_retries 1" "0/first_try 0" "0/shown 1" "0/steps_done 5" \
             "4/first_try 1" "4/shown 1" "4/steps_done 5" "1/steps_done 0"; do
  # shellcheck disable=SC2086  # "POINTER VALUE"
  expect_file $check
done
[[ "$(head -1 "$out/grade.csv")" == learner,lesson,title,steps_done,steps,predictions,first_try,after_retries,revealed,open,checkpoints,reached,shown,not_yet ]] ||
  fail "grade.csv: header is '$(head -1 "$out/grade.csv")'"
[[ "$(wc -l < "$out/grade.csv")" -eq $((lessons + 1)) ]] || fail "grade.csv: not one line per lesson"
echo "ok: Export my grade wrote $lessons rows (JSON and CSV) as played: lesson 1 after 1 retry, lesson 5 first try"
# [SECTION] Lesson 16: its first step asks how many GPU kernels PyTorch launched (6) before the
# trace opens; Next without answering opens the trace in the Trace view (trace= of step 2), whose
# header counts the kernels: masked, "? GPU kernels", until the prediction is settled. A click on
# the convolution's row shows its kernels (cuDNN's convolution, PyTorch's bias add).
lesson=16-what-your-framework-launches
# The catalogue's last row is below the fold: the wheel brings it up.
down=$'scroll 800 600 -30\nwait-frames 3'
probe r1 $'key 7\n'"$settle"$'\n'"$down"
run_app c1 "$settle"$'\nkey 7\n'"$settle"$'\n'"$down"$'\n'"click $(at r1 lessons.open.$lesson)"$'\n'"$settle"$'\nquit' "$session"
expect c1 /lesson/open $lesson
expect c1 /lesson/step_id predict
probe r2
run_app c2 "$settle"$'\n'"click $(at r2 lesson.next)"$'\n'"$settle"$'
write-frame-text OUT/l16-trace.txt
wait-frames 1
quit' "$session"
expect c2 /lesson/step_id kernels
expect c2 /view trace
grep -q '5 framework operators, ? GPU kernels; GPU kernel time 25.0 µs, 100.0 % of it' "$out/l16-trace.txt" ||
  fail "c2: the Trace view's header is not there, masked, with all the kernel time mapped"
absent l16-trace '6 GPU kernels'
probe r3
run_app c3 "$settle"$'\n'"click $(at r3 trace.node.0)"$'\n'"$settle"$'
screenshot OUT/l16-trace.png
write-frame-text OUT/l16-node.txt
wait-frames 1
quit' "$session"
expect c3 /trace/selected 0
expect c3 /trace/selected_node/framework_ops/0 aten::conv2d
grep -q 'cuDNN' "$out/l16-node.txt" || fail "c3: the convolution's kernels are not explained"
echo "ok: lesson 16's trace opened by its step, the kernel count masked until predicted, a node's kernels"
# [SECTION] Lesson 15, step 4: after a goal the learner has not reached, the rest of its step —
# the lesson's own solution (steps `split`, with its Apply button) and what it measures — stays
# closed, one line saying so; Next (key N) walks there without acting; "Show me" (a click) opens it.
lesson=15-latency-hiding-occupancy
walk=$'key N\nwait-frames 3\nkey N\nwait-frames 3\nkey N\nwait-frames 3'
run_app d1 "$settle"$'\nlesson open '"$lesson"$'\n'"$settle"$'\n'"$walk"$'\n'"$settle"$'
write-frame-text OUT/l15-closed.txt
wait-frames 1
screenshot OUT/l15-closed.png
wait-frames 1
quit' "$session"
expect d1 /lesson/step_id split
expect d1 /lesson/checkpoints/0/id warps
expect d1 /lesson/checkpoints/0/state "not yet"
grep -q 'The rest of this step' "$out/l15-closed.txt" || fail "d1: no line says the step's rest is closed"
for shown in 'Schedule steps' 'Sixteen slices of 64 products' 'Apply these steps'; do
  grep -q "$shown" "$out/l15-closed.txt" && fail "d1: '$shown' is on screen before the goal is reached"
done
"$query" "$out/d1.layout.json" --widget lesson.apply.split >/dev/null 2>&1 &&
  fail "d1: the solution's Apply button is on the screen"
probe s1
run_app d2 "$settle"$'\n'"click $(at s1 lesson.show-me.warps)"$'\n'"$settle"$'
write-frame-text OUT/l15-open.txt
wait-frames 1
screenshot OUT/l15-open.png
wait-frames 1
quit' "$session"
expect d2 /lesson/checkpoints/0/state shown
grep -q 'The rest of this step' "$out/l15-open.txt" && fail "d2: the step's rest is still closed"
grep -q 'Schedule steps' "$out/l15-open.txt" || fail "d2: Show me did not open the solution"
echo "ok: lesson 15's solution closed until its goal is shown"
echo "gui honest player: all checks passed"
