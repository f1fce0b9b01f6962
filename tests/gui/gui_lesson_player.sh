#!/usr/bin/env bash
# GUI scenario test for the lesson player (issue #13): plays lesson 2 from the first screen to its
# last step with input events only — mouse clicks on the "start here" card, the lesson list, the
# Schedule panel's fuse buttons, the prediction's field and button; keys for next / previous
# (N, P, Alt+Right) and views (2); typed predictions — across several starts of the app with one
# --session file, so progress surviving a restart is part of the play.
#
# Each phase runs the app twice from the same saved session: a probe run that only settles and
# writes --layout-json (where each named widget is on that screen), then the act run, which
# restores the identical screen and clicks those positions. The state JSON of each run is asserted
# on: each checkpoint turns done when the learner's own schedule reaches it, the prediction's answer
# is absent before the input and present (with the error and the explanation) after it.
# Last, `tilescope-cli lesson handout` makes its pictures with this app, one per step.
# usage: gui_lesson_player.sh TILESCOPE GUI_PNG_CHECK GUI_JSON_QUERY TILESCOPE_CLI OUT_DIR
#        (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 check=$2 query=$3 cli=$4 out=$5
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -rf "$out"/*.png "$out"/*.json "$out"/*.script "$out/handout"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
session="$out/session.json"
lesson=02-data-movement-fusion

# The app at 1280x800, the size the player is designed for.
GUI_SIZE=1280x800 GUI_SCREEN=1600x1000
# shellcheck source=tests/gui/gui_player_lib.sh
source "$(dirname "$0")/gui_player_lib.sh"

# [1] The first screen (no session yet) points at the lessons; a click opens the catalogue.
rm -f "$session"
probe p1
expect p1 /lesson/start_here true
run_app a1 "$settle"$'\n'"click $(at p1 start-here)"$'\nwait-frames 3\nquit' "$session"
expect a1 /view lessons

# [2] The catalogue: a click on lesson 2 opens it at step 1, which loads model epi and brings the
# Schedule view forward (its marker says view=schedule).
probe p2
run_app a2 "$settle"$'\n'"click $(at p2 lessons.open.$lesson)"$'\nwait-frames 2\n'"$settle"$'\nquit' "$session"
expect a2 /lesson/open $lesson
expect a2 /lesson/step_id bias-relu
expect a2 /view schedule
expect a2 /lesson/checkpoints/0/id fuse-epilogue
expect a2 /lesson/checkpoints/0/reached false

# [3] Step 1's checkpoint: the learner fuses with the Schedule panel's button; the checkpoint turns
# done. Then the keys walk the steps: N, N, P, Alt+Right (step 2 asks nothing: passing it does it).
probe p3
run_app a3 "$settle"$'\n'"click $(at p3 schedule.fuse.relu0)"$'\n'"$settle"$'
screenshot OUT/step1-fused.png
wait-frames 1
key N
wait-frames 2
key N
wait-frames 2
key P
wait-frames 2
key Alt+Right
wait-frames 2
'"$settle"$'\nquit' "$session"
expect a3 /lesson/checkpoints/0/reached true
expect a3 /lesson/checkpoints/0/state "reached by you"
expect a3 /lesson/steps/0/done true
expect a3 /lesson/steps/1/done true
expect a3 /lesson/step_id simulate
expect a3 /view memory
# Next without acting: the step's checkpoint is not yet (the step's model does not meet it).
expect a3 /lesson/checkpoints/1/state "not yet"
expect a3 /machine tiny
# Before any input the prediction's answer is not on the screen.
expect a3 /lesson/predictions/0/id dram-ratio
expect a3 /lesson/predictions/0/revealed false
if "$query" "$out/a3.state.json" /lesson/predictions/0/answer >/dev/null 2>&1; then
  fail "a3: the answer of dram-ratio is shown before the learner predicted"
fi

# [4] The prediction: the step's "Predict" jump scrolls the text to it (kept in the session).
probe p4
run_app a4 "$settle"$'\n'"click $(at p4 lesson.todo.dram-ratio)"$'\nwait-frames 3\nwrite-frame-text OUT/a4-text.txt\nwait-frames 1\nquit' "$session"
expect a4 /lesson/predictions/0/revealed false
# Before the prediction, none of its numbers is anywhere in the frame's text (every view, panel
# and widget): DRAM bytes unfused 98,560 B (96.2 KiB), fused 49,408 B (48.2 KiB), ratio 1.995.
for leak in '98,560' '96\.2 KiB' '49,408' '48\.2 KiB' '1\.99' '2\.00x'; do
  if grep -nE "(^|[^0-9.])$leak" "$out/a4-text.txt"; then fail "a4: '$leak' is on screen before the prediction"; fi
done
grep -q '??' "$out/a4-text.txt" || fail "a4: no masked number on screen (the Memory view shows the unfused kernel)"
# Typed input that is no quantity is no attempt: a note, nothing revealed. Then a wrong guess,
# 1.5x against about 2x, submitted with the button: still hidden, a hint and one try left.
probe p5
field=$(at p5 lesson.predict.dram-ratio.input)
button=$(at p5 lesson.predict.dram-ratio.check)
run_app a5 "$settle"$'\n'"click $field"$'\ntype lots\nkey Enter\nwait-frames 3\nscreenshot OUT/note.png\nwait-frames 1\n'"click $field"$'\nkey Ctrl+A\ntype 1.5x\nwait-frames 2\n'"click $button"$'\nwait-frames 3\n'"$settle"$'
screenshot OUT/step3-retry.png
wait-frames 1
quit' "$session"
expect a5 /lesson/predictions/0/revealed false
expect a5 /lesson/predictions/0/made true
expect a5 /lesson/predictions/0/attempts 1
expect a5 /lesson/predictions/0/input 1.5x
if "$query" "$out/a5.state.json" /lesson/predictions/0/answer >/dev/null 2>&1; then
  fail "a5: the answer is shown after a wrong try with a try left"
fi
grep -q '"note": "Not yet — off by less than 2.5×: too low. 1 try left."' "$out/a5.state.json" ||
  fail "a5: no hint after the wrong try"
# The second try, 2x (the answer is about 2): right after one retry, revealed with its error.
predict a5b dram-ratio 2x $'screenshot OUT/step3-reveal.png\nwait-frames 1\nkey 2\nwait-frames 3'
expect a5b /lesson/predictions/0/revealed true
expect a5b /lesson/predictions/0/pass true
expect a5b /lesson/predictions/0/attempts 2
expect a5b /lesson/predictions/0/input 2x
expect a5b /lesson/grade/after_retries 1
expect a5b /lesson/grade/first_try 0
grep -q '"explanation": "About 2' "$out/a5b.state.json" || fail "a5b: no explanation after the input"
answer=$("$query" "$out/a5b.state.json" /lesson/predictions/0/answer) || fail "a5b: no answer shown"
[[ "$answer" == *x ]] || fail "a5b: the answer '$answer' is not a ratio"
# The learner's error, recomputed here from the answer shown: |2 - a| / a.
err=$("$query" "$out/a5b.state.json" /lesson/predictions/0/relative_error)
awk -v e="$err" -v a="${answer%x}" 'BEGIN { d = (2 - a) / a; if (d < 0) d = -d; exit !(e > d - 0.001 && e < d + 0.001) }' ||
  fail "a5b: relative error $err is not |2 - $answer| / $answer"
expect a5b /view schedule

# [5] Step 3's checkpoint on tiny: the learner fuses; DRAM bytes fall under 55% of unfused.
probe p6
run_app a6 "$settle"$'\n'"click $(at p6 schedule.fuse.relu0)"$'\n'"$settle"$'\nkey Alt+Right\nwait-frames 2\n'"$settle"$'\nquit' "$session"
expect a6 /lesson/checkpoints/1/id fewer-dram-bytes
expect a6 /lesson/checkpoints/1/reached true
expect a6 /lesson/checkpoints/1/state "reached by you"
expect a6 /lesson/checkpoints/2/state "not yet"  # the last step, entered without acting
expect a6 /lesson/steps/2/done true
expect a6 /lesson/step_id gemm-epilogue

# [6] The last step: the GEMM with its epilogue fused in one click ("Fuse add0, relu0").
probe p7
run_app a7 "$settle"$'\n'"click $(at p7 schedule.fuse-chain)"$'\n'"$settle"$'\nscreenshot OUT/step4-done.png\nwait-frames 1\nquit' "$session"
expect a7 /lesson/checkpoints/2/id fuse-layer
expect a7 /lesson/checkpoints/2/reached true
expect a7 /lesson/checkpoints/2/state "reached by you"
expect a7 /lesson/steps/3/done true

# [7] A restart: the session brings the lesson back at its step, every step done, the prediction
# with the learner's input; the catalogue says 4/4.
run_app restart "$settle"$'\nquit' "$session"
expect restart /lesson/open $lesson
expect restart /lesson/step_id gemm-epilogue
for i in 0 1 2 3; do expect restart /lesson/steps/$i/done true; done
expect restart /lesson/predictions/0/input 2x
expect restart /lesson/predictions/0/revealed true
expect restart /lesson/catalogue/1/steps_done 4
expect restart /lesson/start_here false

for shot in step1-fused note step3-reveal step4-done; do
  "$check" "$out/$shot.png" "$out/a7.layout.json" --expect-parsed true --min-ops 2
done
# [8] The handout: one picture per step, made by this app under Xvfb, each a full player screen.
"$cli" lesson handout 2 --app "$app" --out "$out/handout"
for n in 1 2 3 4; do
  grep -q "<img src=\"step-$n.png\"" "$out/handout/index.html" || fail "handout: no picture of step $n"
  "$check" "$out/handout/step-$n.png" "$out/a7.layout.json" --expect-parsed true --min-ops 2
done
echo "gui lesson player: all checks passed"
