#!/usr/bin/env bash
# GUI scenario test for a classroom (issue #17), driven with input events (clicks, keys, typing):
#   [1] presentation mode through a 7-step history with slow frames (--frame-delay): every Left /
#       Right press moves exactly one step (each press is a tap inside one slow frame, the case
#       ImGui 1.86 used to lose), the corner says "step N of 7", Esc leaves;
#   [2] the small CNN in presentation at 1920x1080, projector theme: node text at least 20 px,
#       every node above the status bar (nothing under the legend);
#   [3] theme and UI scale switched with clicks in the status bar, and remembered by the session;
#   [4] Open of a model file through File ▸ Open model… and the file browser; [4b] of an ONNX
#       file the same way (imported, saved beside it, never over it) and dropped on the window;
#       [4c] a fusion clicked on it, its profiler trace opened and a node picked in the Trace view;
#   [5] Save session as… a hand-out, then Open session… of it in a fresh app;
#   [6] --model leaves the saved session alone;
#   [7] Open model over a schedule asks (replay / without steps / cancel) and keeps what it
#       replaced; Esc leaves the model editor without reverting, Ctrl+Z undoes a keystroke; the
#       start card is dismissed with a click and stays dismissed.
# Positions come from probe runs' --layout-json (named widgets), as in gui_lesson_player.sh.
# usage: gui_classroom.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 out=$3
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -rf "$out"/*.png "$out"/*.json "$out"/*.script
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"

fail() {
  echo "FAIL: $*"
  exit 1
}

# run NAME SCRIPT_TEXT [app flags...]: the app with the script; layout and state JSON at exit.
run_app() {
  local name=$1 text=$2
  shift 2
  printf '%s\n' "$text" | sed "s|OUT|$out|g" >"$out/$name.script"
  "$with_xvfb" -s "-screen 0 2000x1200x24" "$app" --script "$out/$name.script" \
    --layout-json "$out/$name.layout.json" --state-json "$out/$name.state.json" "$@"
}

at() {
  "$query" "$out/$1.layout.json" --widget "$2" || fail "widget $2 is not on the screen of $1"
}

value() {
  "$query" "$1" "$2" || fail "no $2 in $1"
}

expect() {
  local got
  got=$(value "$1" "$2")
  [[ "$got" == "$3" ]] || fail "$1: $2 is '$got', expected '$3'"
}

# [1] Presentation through a lesson-length history, one step per key press on slow frames.
steps='fuse(matmul0, add0, relu0); tile(i, 16); tile(j, 16); tile(k, 64); reorder(i.o, j.o, i.i, j.i); unroll(k.i); parallel(i.o)'
script="wait-frames 2
apply \"$steps\"
view schedule
present on
wait-frames 3
write-state OUT/p0.json"
expected=(7)
n=1
for k in Left Left Left Right Left Left Left Left Right Right; do
  script+=$'\n'"key $k"$'\n'"write-state OUT/p$n.json"
  last=${expected[-1]}
  if [[ $k == Left ]]; then expected+=($((last > 0 ? last - 1 : 0))); else expected+=($((last + 1))); fi
  n=$((n + 1))
done
script+=$'\nscreenshot OUT/present-schedule.png\nwait-frames 1\nkey Escape\nwait-frames 2\nquit'
run_app present "$script" --no-session --size 1920x1080 --theme projector --frame-delay 150
for i in "${!expected[@]}"; do
  expect "$out/p$i.json" /history/cursor "${expected[$i]}"
  expect "$out/p$i.json" /history/entries 7
  ind=$(value "$out/p$i.json" /presentation/indicator)
  [[ "$ind" == "step ${expected[$i]} of 7"* ]] || fail "p$i: the indicator says '$ind'"
done
expect "$out/present.state.json" /presentation/on false
echo "ok: presentation: ${#expected[@]} states, one step per key press at 150 ms frames (${expected[*]})"

# [2] The CNN in presentation at 1920x1080, projector theme: readable, nothing under overlays.
run_app cnn $'wait-frames 3\npresent on\nwait-frames 4\nscreenshot OUT/present-cnn.png\nwait-frames 1\nquit' \
  --no-session --size 1920x1080 --theme projector --model assets/models/cnn.model
px=$(value "$out/cnn.layout.json" /node_text_px)
awk -v px="$px" 'BEGIN { exit !(px >= 20) }' || fail "cnn: node text is $px px high (< 20)"
bottom=$(value "$out/cnn.layout.json" /panels/3/y)  # the status bar (panels: ..., status_bar)
name=$(value "$out/cnn.layout.json" /panels/4/name)
[[ "$name" == status_bar ]] && bottom=$(value "$out/cnn.layout.json" /panels/4/y)
count=$(value "$out/cnn.layout.json" /model/ops)
[[ "$count" == 7 ]] || fail "cnn: $count ops, expected 7"
i=0
while name=$("$query" "$out/cnn.layout.json" /graph_nodes/$i/name 2>/dev/null); do
  y=$(value "$out/cnn.layout.json" /graph_nodes/$i/y)
  h=$(value "$out/cnn.layout.json" /graph_nodes/$i/h)
  awk -v y="$y" -v h="$h" -v b="$bottom" 'BEGIN { exit !(y + h <= b && y >= 0) }' ||
    fail "cnn: node $name ($y + $h) is not above the status bar at $bottom"
  i=$((i + 1))
done
[[ $i -ge 12 ]] || fail "cnn: only $i nodes in the layout"
echo "ok: CNN in presentation at 1920x1080: node text $px px, all $i nodes on screen"

# [3] Theme and UI scale with clicks in the status bar, remembered by the session.
session="$out/session.json"
rm -f "$session"
run_app t0 $'wait-frames 3\nquit' --session "$session" --size 1280x800
theme_button=$(at t0 status.theme)
run_app t1 $'wait-frames 3\nclick '"$theme_button"$'\nwait-frames 3\nquit' --session "$out/probe.json" --size 1280x800
run_app t2 $'wait-frames 3\nclick '"$theme_button"$'\nwait-frames 3\nclick '"$(at t1 theme.dark)"$'\nwait-frames 3\nclick '"$theme_button"$'\nwait-frames 3\nclick '"$(at t1 scale.125)"$'\nwait-frames 4\nquit' \
  --session "$session" --size 1280x800
expect "$out/t2.state.json" /theme dark
expect "$out/t2.state.json" /ui_scale 1.25
run_app t3 $'wait-frames 3\nquit' --session "$session" --size 1280x800
expect "$out/t3.state.json" /theme dark
expect "$out/t3.state.json" /ui_scale 1.25
font=$(value "$out/t3.layout.json" /font_px)
[[ "$font" == 20* ]] || fail "t3: the restored UI scale 1.25 gives $font px type, expected 20 (16 x 1.25)"
echo "ok: theme and UI scale switched by clicks and restored from the session (type $font px)"

# [4] File ▸ Open model… → the browser → a typed path → Open.
run_app f0 $'wait-frames 3\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nquit' --no-session --size 1280x800
run_app f1 $'wait-frames 3\nfiles open-model\nwait-frames 3\nquit' --no-session --size 1280x800
run_app f2 $'wait-frames 3\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nclick '"$(at f0 file.open-model)"$'\nwait-frames 3\nclick '"$(at f1 files.path)"$'\ntype assets/models/cnn.model\nwait-frames 2\nclick '"$(at f1 files.ok)"$'\nwait-frames 4\nquit' \
  --no-session --size 1280x800
path=$(value "$out/f2.state.json" /model_path)
[[ "$path" == */assets/models/cnn.model ]] || fail "f2: the model path is '$path'"
expect "$out/f2.layout.json" /model/ops 7
expect "$out/f2.state.json" /file_browser/open false
recent=$(value "$out/f2.state.json" /recent_files/0)
[[ "$recent" == */assets/models/cnn.model ]] || fail "f2: recent files start with '$recent'"
echo "ok: File > Open model... opened $path"

# [4b] The same path with the learner's ONNX file: imported into model text, and Save model as…
# offers NAME.model beside it (never the .onnx); a dropped .onnx is imported too.
onnx_before=$(md5sum assets/models/quiz_cnn.onnx)
# Open the .onnx through the menu and the browser, then open the File menu: o0 stops there (a
# probe: with a model file open the menu has more items), o1 goes on to Save model as….
open_onnx=$'wait-frames 3\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nclick '"$(at f0 file.open-model)"$'\nwait-frames 3\nclick '"$(at f1 files.path)"$'\ntype assets/models/quiz_cnn.onnx\nwait-frames 2\nclick '"$(at f1 files.ok)"$'\nwait-frames 4\nclick '"$(at t0 status.file)"$'\nwait-frames 3'
run_app o0 "$open_onnx"$'\nquit' --no-session --size 1280x800
run_app o1 "$open_onnx"$'\nclick '"$(at o0 file.save-model-as)"$'\nwait-frames 3\nquit' --no-session --size 1280x800
path=$(value "$out/o1.state.json" /model_path)
[[ "$path" == */assets/models/quiz_cnn.model ]] || fail "o1: the imported model's path is '$path'"
expect "$out/o1.layout.json" /model/ops 8  # conv, its bias (reshape, add), relu, pool, flatten, matmul, add
expect "$out/o1.state.json" /file_browser/open true
offered=$(value "$out/o1.state.json" /file_browser/name)
[[ "$offered" == quiz_cnn.model ]] || fail "o1: Save model as... offers '$offered'"
[[ "$(md5sum assets/models/quiz_cnn.onnx)" == "$onnx_before" ]] || fail "o1: the .onnx file changed"
run_app o2 $'wait-frames 3\ndrop assets/models/transformer_block.onnx\nwait-frames 4\nscreenshot OUT/onnx-transformer.png\nwait-frames 1\nquit' \
  --no-session --size 1280x800
path=$(value "$out/o2.state.json" /model_path)
[[ "$path" == *transformer_block.model ]] || fail "o2: the dropped model's path is '$path'"
ops=$(value "$out/o2.layout.json" /model/ops)
[[ "$ops" -ge 20 ]] || fail "o2: the dropped transformer block has $ops ops"
echo "ok: an ONNX file opened by File > Open and by a drop is imported ($ops ops), the .onnx untouched"

# [4c] The learner's ONNX model, a fusion, and what PyTorch ran for it: open the .onnx through the
# browser, fuse in the Schedule view with its button, File ▸ Open trace… the recorded trace, and
# click a node in the Trace view to see its operators.
trace_file=assets/recorded/traces/quiz_cnn-cpu-xeon2-2026-12-05.trace.json
run_app q0 "$open_onnx"$'\nkey Escape\nwait-frames 2\nkey 2\nwait-frames 4\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nquit' \
  --no-session --size 1280x800  # a probe: the File menu lists the .onnx under Recent files now
run_app q1 $'wait-frames 3\nset-model-file assets/models/quiz_cnn.onnx\nopen-trace '"$trace_file"$'\nwait-frames 4\nquit' \
  --no-session --size 1280x800
run_app q2 "$open_onnx"$'\nkey Escape\nwait-frames 2\nkey 2\nwait-frames 4\nclick '"$(at q0 schedule.fuse-chain)"$'\nwait-frames 4\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nclick '"$(at q0 file.open-trace)"$'\nwait-frames 3\nclick '"$(at f1 files.path)"$'\ntype '"$PWD/$trace_file"$'\nwait-frames 2\nclick '"$(at f1 files.ok)"$'\nwait-frames 4\nclick '"$(at q1 trace.node.0)"$'\nwait-frames 4\nscreenshot OUT/trace-view.png\nwait-frames 1\nquit' \
  --no-session --size 1280x800
expect "$out/q2.state.json" /history/entries 1  # the fusion
expect "$out/q2.state.json" /view trace
expect "$out/q2.state.json" /trace/selected 0
expect "$out/q2.state.json" /trace/selected_node/framework_ops/0 aten::conv2d
expect "$out/q2.state.json" /trace/mapped_time_share 1.0
echo "ok: ONNX model opened, fused by a click, its trace opened and node 0 picked: aten::conv2d"

# [5] Save session as… a hand-out with 3 steps on tiny, then Open session… in a fresh app.
handout="$out/handout.json"
rm -f "$handout"
run_app f3 $'wait-frames 3\nfiles save-session\nwait-frames 3\nquit' --no-session --size 1280x800
run_app f4 $'wait-frames 2\napply "fuse(matmul0, add0, relu0); tile(i, 16); tile(j, 16)"\nundo\nmachine tiny\nview memory\nwait-frames 2\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nclick '"$(at f0 file.save-session)"$'\nwait-frames 3\nclick '"$(at f3 files.path)"$'\nkey Ctrl+A\ntype '"$handout"$'\nwait-frames 2\nclick '"$(at f3 files.ok)"$'\nwait-frames 3\nquit' \
  --no-session --size 1280x800
[[ -f "$handout" ]] || fail "f4: no session file at $handout"
grep -q '"recent"' "$handout" && fail "f4: the hand-out carries this computer's recent files"
run_app f5 $'wait-frames 3\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nclick '"$(at f0 file.open-session)"$'\nwait-frames 3\nclick '"$(at f1 files.path)"$'\ntype '"$handout"$'\nwait-frames 2\nclick '"$(at f1 files.ok)"$'\nwait-frames 4\nquit' \
  --no-session --size 1280x800
expect "$out/f5.state.json" /history/cursor 2
expect "$out/f5.state.json" /history/entries 3  # the undone step comes back as redo
expect "$out/f5.state.json" /machine tiny
expect "$out/f5.state.json" /view memory
echo "ok: Save session as... and Open session... round-trip the steps (redo too), machine and view"

# [6] --model leaves the saved session alone: an interactive start (no script, the default session
# path under XDG_STATE_HOME) with --model, running a few seconds, does not overwrite session.json.
state_home="$out/state"
rm -rf "$state_home"
mkdir -p "$state_home/tilescope"
run_app s0 $'wait-frames 2\nmachine tiny\napply "fuse(matmul0, add0, relu0)"\nwait-frames 2\nquit' \
  --session "$state_home/tilescope/session.json" --size 1280x800
cp "$state_home/tilescope/session.json" "$out/session-before.json"
XDG_STATE_HOME="$state_home" "$with_xvfb" -s "-screen 0 1600x1000x24" bash -c '
  "$1" --model assets/models/cnn.model --size 1280x800 >/dev/null 2>&1 &
  pid=$!
  sleep 4
  kill "$pid"
  wait "$pid" || true' _ "$app"
cmp -s "$out/session-before.json" "$state_home/tilescope/session.json" ||
  fail "--model overwrote the saved session"
echo "ok: --model left the saved session as it was"

# [7] Open model over two steps: the choice says both would apply to the file (the same model);
# "Replay the steps" keeps them, and File ▸ Restore the previous model is offered.
run_app o0 $'wait-frames 2\nquit' --no-session --size 1280x800
value "$out/o0.state.json" /model_text >"$out/same.model"
open_script() {
  printf '%s' $'wait-frames 2\napply "fuse(matmul0, add0, relu0); tile(i, 16)"\nwait-frames 2\nclick '"$(at t0 status.file)"$'\nwait-frames 3\nclick '"$(at f0 file.open-model)"$'\nwait-frames 3\nclick '"$(at f1 files.path)"$'\ntype '"$out/same.model"$'\nwait-frames 2\nclick '"$(at f1 files.ok)"$'\nwait-frames 4'
}
run_app o1 "$(open_script)"$'\nscreenshot OUT/open-choice.png\nwait-frames 1\nquit' --no-session --size 1280x800
expect "$out/o1.state.json" /open_choice/steps 2
expect "$out/o1.state.json" /open_choice/apply 2
expect "$out/o1.state.json" /history/cursor 2
run_app o2 "$(open_script)"$'\nclick '"$(at o1 open-choice.replay)"$'\nwait-frames 4\nquit' --no-session --size 1280x800
"$query" "$out/o2.state.json" /open_choice >/dev/null 2>&1 && fail "o2: the choice is still open after Replay"
path=$(value "$out/o2.state.json" /model_path)
[[ "$path" == */same.model ]] || fail "o2: the model path is '$path'"
expect "$out/o2.state.json" /history/cursor 2
expect "$out/o2.state.json" /replaced_model true
echo "ok: Open model over 2 steps asked, replayed both, kept the previous model to restore"

# Esc leaves the editor with the typed text; Ctrl+Z inside it takes back the last keystroke.
editor=$(at o0 model.editor)
run_app e1 $'wait-frames 2\nclick '"$editor"$'\nwait-frames 2\nkey Ctrl+End\ntype \\n# mine\nwait-frames 2\nkey Escape\nwait-frames 3\nquit' --no-session --size 1280x800
text=$(value "$out/e1.state.json" /model_text)
[[ "$text" == *"# mine" ]] || fail "e1: after Esc the model text ends '${text: -20}', not with the typed '# mine'"
expect "$out/e1.state.json" /model_edited true
run_app e2 $'wait-frames 2\nclick '"$editor"$'\nwait-frames 2\nkey Ctrl+End\ntype \\n# abc\nwait-frames 2\nkey Ctrl+Z\nwait-frames 3\nquit' --no-session --size 1280x800
text=$(value "$out/e2.state.json" /model_text)
[[ "$text" == *"# ab" ]] || fail "e2: after Ctrl+Z the model text ends '${text: -20}', expected '# ab'"
echo "ok: Esc kept the typed text; Ctrl+Z took back one keystroke"

# The start card (a first start, no session yet): "Not now" hides it, and a restart keeps it hidden.
rm -f "$out/first.json" "$out/first-probe.json"
run_app c0 $'wait-frames 3\nquit' --session "$out/first-probe.json" --size 1280x800
expect "$out/c0.state.json" /lesson/start_here true
run_app c1 $'wait-frames 3\nclick '"$(at c0 start-here.dismiss)"$'\nwait-frames 3\nquit' --session "$out/first.json" --size 1280x800
expect "$out/c1.state.json" /lesson/start_here false
run_app c2 $'wait-frames 3\nquit' --session "$out/first.json" --size 1280x800
expect "$out/c2.state.json" /lesson/start_here false
echo "ok: the start card dismissed with a click stays dismissed"
