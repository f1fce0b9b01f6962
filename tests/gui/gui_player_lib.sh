# Shared by the lesson player's GUI scenario tests (gui_lesson_player.sh, gui_honest_player.sh):
# each phase runs the app twice from one saved session — a probe run that only settles and writes
# --layout-json (where each named widget is on that screen), then the act run, which restores the
# identical screen and clicks those positions — and asserts on the state JSON (`predict` does
# both for one typed prediction).
# Before sourcing, set: with_xvfb, app, query, out, session, GUI_SIZE (the window) and GUI_SCREEN
# (the Xvfb screen).

# gui_start OUT: a scenario's start: skipped (exit 77) without Xvfb, its output folder made and
# emptied of the last run's files, leak checks off (the GL driver's allocations are not the
# app's). Call it before anything else runs.
gui_start() {
  if ! command -v Xvfb >/dev/null 2>&1; then
    echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
    exit 77
  fi
  mkdir -p "$1"
  rm -f "$1"/*.png "$1"/*.json "$1"/*.script "$1"/*.csv "$1"/*.machine
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# run_app NAME SCRIPT_TEXT SESSION: the app on SESSION, running SCRIPT_TEXT ("OUT" is the output
# folder); writes NAME.layout.json, NAME.state.json and NAME.log.
run_app() {
  local name=$1 text=$2 sess=$3
  printf '%s\n' "$text" | sed "s|OUT|$out|g" >"$out/$name.script"
  timeout 300 "$with_xvfb" -s "-screen 0 ${GUI_SCREEN}x24" "$app" --script "$out/$name.script" \
    --size "$GUI_SIZE" --session "$sess" --layout-json "$out/$name.layout.json" \
    --state-json "$out/$name.state.json" >"$out/$name.log" 2>&1 ||
    { cat "$out/$name.log"; fail "$name: the app exited with $?"; }
}

# run_fresh NAME SCRIPT_TEXT: the app with no session at 1440×900 (a 1600×1000 screen), running
# SCRIPT_TEXT then quit; writes NAME.script, NAME.layout.json and NAME.state.json. For scenarios
# that start from the built-in example every time (gui_occupancy, gui_memory_wait).
run_fresh() {
  local name=$1 text=$2
  printf '%s\nquit\n' "$text" | sed "s|OUT|$out|g" >"$out/$name.script"
  "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" --no-session --script "$out/$name.script" \
    --size 1440x900 --layout-json "$out/$name.layout.json" --state-json "$out/$name.state.json" ||
    fail "$name: the app exited with $?"
}

# The settling every run starts with: the lesson's numbers computed, checkpoints evaluated, the
# text scrolled.
settle=$'wait-frames 3\nwait-jobs\nwait-frames 4'

# probe NAME [ACTIONS]: the layout of the screen the current session restores to (on a copy of
# it), after ACTIONS.
probe() {
  if [[ -f "$session" ]]; then cp "$session" "$out/probe-session.json"; else rm -f "$out/probe-session.json"; fi
  run_app "$1" "$settle"$'\n'"${2:-}"$'\n'"$settle"$'\nquit' "$out/probe-session.json"
}

# predict NAME ID INPUT [AFTER]: on the screen the session restores to, INPUT typed into
# prediction ID's field (over what it holds) and checked with its button, as a learner would;
# then AFTER (script lines) once it settles. The positions come from the probe run NAME-probe.
predict() {
  local name=$1 id=$2 input=$3 after=${4:-}
  probe "$name-probe"
  local field button
  field=$(at "$name-probe" "lesson.predict.$id.input")
  button=$(at "$name-probe" "lesson.predict.$id.check")
  run_app "$name" "$settle"$'\n'"click $field"$'\nkey Ctrl+A\ntype '"$input"$'\nwait-frames 2\n'"click $button"$'\n'"$settle"$'\n'"$after"$'\nquit' "$session"
}

# at NAME WIDGET: "X Y" of a widget in probe NAME's layout (fails when it is not on screen).
at() {
  "$query" "$out/$1.layout.json" --widget "$2" || fail "widget $2 is not on the screen of $1"
}

# expect NAME POINTER VALUE: the state JSON of run NAME has VALUE at POINTER.
expect() {
  local got
  got=$("$query" "$out/$1.state.json" "$2") || fail "$1: no $2 in the state"
  [[ "$got" == "$3" ]] || fail "$1: $2 is '$got', expected '$3'"
}
