#!/usr/bin/env bash
# GUI robustness test (issue 11): the real app under Xvfb, fed what used to crash it — script
# numbers past float's range, a window too large to allocate, /dev/zero as a model, and session
# files it cannot read (wrong types, another schema, corrupt JSON, a model that overflowed the
# parser's stack). Each must end in a message, never in a signal, and a bad session must be
# moved aside, not overwritten by the autosave.
# usage: gui_robustness.sh TILESCOPE GUI_PNG_CHECK OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 check=$2 out=$3
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
run() { timeout 120 "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" "$@"; }
fail() {
  echo "FAIL: $*"
  exit 1
}

echo "== pan 1e308 -1e308 and zoom 1e308: a finite view, no SIGSEGV"
cat > "$out/pan.script" <<'SCRIPT'
pan 1e308 -1e308
wait-frames 2
zoom 1e308
wait-frames 2
pan -1e308 1e308
wait-frames 2
quit
SCRIPT
run --script "$out/pan.script" --size 1440x900 --screenshot "$out/pan.png" \
  --layout-json "$out/pan.json" || fail "pan/zoom script exited with $?"
# nlohmann writes a NaN or inf float as null. The graph is now off screen (by design: one canvas
# away at most), so the screenshot only has to exist; key F brings the graph back.
if grep -q '"pan_[xy]": null' "$out/pan.json"; then fail "the view is not finite"; fi
grep -q '"zoom": 8.0' "$out/pan.json" || fail "zoom 1e308 did not stop at the 8x limit"
[ -s "$out/pan.png" ] || fail "no screenshot after the pans"
printf 'pan 1e308 -1e308\nwait-frames 2\nkey F\nwait-frames 2\nquit\n' > "$out/back.script"
run --script "$out/back.script" --size 1440x900 --screenshot "$out/back.png" \
  --layout-json "$out/back.json" || fail "pan/fit script exited with $?"
"$check" "$out/back.png" "$out/back.json" --expect-parsed true --min-ops 3

echo "== resize 20000 20000: an error naming the script line, no bad_alloc"
printf 'view graph\nresize 20000 20000\nquit\n' > "$out/resize.script"
set +e
run --script "$out/resize.script" > "$out/resize.log" 2>&1
code=$?
set -e
cat "$out/resize.log"
[ "$code" -eq 1 ] || fail "resize script exited with $code, expected 1 (a script error)"
grep -q "resize.script:2: resize: each side must be 16 to 8192 pixels, got 20000" \
  "$out/resize.log" || fail "no error naming resize.script:2"

echo "== set-model-file /dev/zero: an error, not 4 GB"
printf 'set-model-file /dev/zero\nquit\n' > "$out/zero.script"
set +e
run --script "$out/zero.script" > "$out/zero.log" 2>&1
code=$?
set -e
cat "$out/zero.log"
[ "$code" -eq 1 ] || fail "the /dev/zero script exited with $code, expected 1 (a script error)"
grep -q "zero.script:1: error: '/dev/zero' has more than 8 MiB" "$out/zero.log" ||
  fail "no capped-read error for /dev/zero"

# [SECTION] Sessions: --session FILE with --frames, so the restore and the autosave both run.

# Starts the app on session file $1, writing the state JSON to $2. At most two starts: a start
# that dies while restoring leaves a marker, so the second one must not try that session again.
start_on_session() {
  local session=$1 state=$2
  if ! run --session "$session" --frames 3 --state-json "$state" > "$state.log" 2>&1; then
    echo "(first start failed; the second must survive)"
    run --session "$session" --frames 3 --state-json "$state" > "$state.log" 2>&1 ||
      fail "the app did not start on $session twice in a row"
  fi
  cat "$state.log"
}

# Checks that session $1 (whose original text is in $1.orig) was moved aside whole, that the
# user was told, and that the autosave wrote a new session beside it.
expect_moved_aside() {
  local session=$1 state=$2
  local moved
  moved=$(ls "$session".bad-* 2> /dev/null | head -n 1 || true)
  [ -n "$moved" ] || fail "$session was not moved aside"
  cmp -s "$moved" "$session.orig" || fail "$moved does not hold the original session"
  grep -q '"message": "session could not be restored' "$state" || fail "the user was not told"
  grep -q '"schema": "tilescope-session/1"' "$session" || fail "no new session was autosaved"
}

for name in wrong-type future-schema corrupt; do
  echo "== unreadable session ($name): moved aside, the user told, the autosave spares it"
  dir="$out/session-$name"
  mkdir -p "$dir"
  case $name in
    wrong-type) printf '[1, 2, 3]\n' ;;
    future-schema) printf '{"schema":"tilescope-session/2","model_text":"x: [2]"}\n' ;;
    corrupt) printf '{"schema":"tilescope-session/1","model_text":"x: [2' ;;
  esac > "$dir/session.json"
  cp "$dir/session.json" "$dir/session.json.orig"
  start_on_session "$dir/session.json" "$dir/state.json"
  expect_moved_aside "$dir/session.json" "$dir/state.json"
done

echo "== session fields of the wrong type: named and skipped, the rest restored"
dir="$out/session-fields"
mkdir -p "$dir"
printf '%s\n' '{"schema":"tilescope-session/1","model_text":5,"steps":["tile(i, 16)"],' \
  '"machine":null,"view":{"tab":"memory"},"theme":"dark"}' > "$dir/session.json"
start_on_session "$dir/session.json" "$dir/state.json"
for field in model_text steps machine view; do
  grep -q "skipped $field is" "$dir/state.json" || fail "the message does not name $field"
done
grep -q '"theme": "dark"' "$dir/session.json" || fail "the valid theme field was not restored"

echo "== a 20,000-term model in the session: the app starts (at most once it may not)"
dir="$out/session-chain"
mkdir -p "$dir"
{
  printf '{"schema":"tilescope-session/1","model_text":"x: [4]\\ny = x'
  for _ in $(seq 19999); do printf ' + x'; done
  printf '\\n"}\n'
} > "$dir/session.json"
cp "$dir/session.json" "$dir/session.json.orig"
start_on_session "$dir/session.json" "$dir/state.json"
# Either the parser copes (restored, or a model error shown) or the session was moved aside.
if ls "$dir"/session.json.bad-* > /dev/null 2>&1; then
  expect_moved_aside "$dir/session.json" "$dir/state.json"
fi
# [SECTION] Issue 25: sessions that crashed or hung every start. Now the first start must survive,
# say what was wrong and keep the original file aside.

# Starts the app once on session $1 (state JSON to $2) within $3 seconds; it must not die.
start_once() {
  local session=$1 state=$2 limit=${3:-120}
  timeout "$limit" "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" --session "$session" \
    --frames 3 --state-json "$state" > "$state.log" 2>&1 ||
    { cat "$state.log"; fail "the app did not start on $session (exit $?)"; }
}
# The session's original bytes are kept in a .bad-* file beside it.
expect_kept_aside() {
  local session=$1
  local kept
  kept=$(ls "$session".bad-* 2> /dev/null | head -n 1 || true)
  [ -n "$kept" ] || fail "$session: no copy of the original was kept"
  cmp -s "$kept" "$session.orig" || fail "$kept does not hold the original session"
}
deep() {  # $1 levels of nested lists
  head -c "$1" /dev/zero | tr '\0' '['
  head -c "$1" /dev/zero | tr '\0' ']'
}

for field in lesson lesson_progress; do
  echo "== a session whose $field nests 300,000 lists: refused on the first start, kept aside"
  dir="$out/session-deep-$field"
  mkdir -p "$dir"
  { printf '{"schema":"tilescope-session/1","model_text":"x: [2]\\ny = relu(x)\\n","%s":' "$field"
    deep 300000
    printf '}\n'; } > "$dir/session.json"
  cp "$dir/session.json" "$dir/session.json.orig"
  start_once "$dir/session.json" "$dir/state.json"
  expect_moved_aside "$dir/session.json" "$dir/state.json"
  grep -q 'nests 30000[0-9] levels' "$dir/state.json" || fail "the message does not say why ($field)"
done

echo "== 300,000 unknown controls: a short message, the rest restored, the original kept"
dir="$out/session-controls"
mkdir -p "$dir"
{ printf '{"schema":"tilescope-session/1","theme":"dark","controls":{'
  seq 1 300000 | sed 's/.*/"no.such-&":"1"/' | paste -sd, -
  printf '}}\n'; } > "$dir/session.json"
cp "$dir/session.json" "$dir/session.json.orig"
start_once "$dir/session.json" "$dir/state.json"
message=$(grep -o '"message": "[^"]*"' "$dir/state.json")
[ "${#message}" -lt 4000 ] || fail "the status message is ${#message} bytes long"
grep -q "controls past the first 256" <<<"$message" || fail "the message does not count the rest"
grep -q '"theme": "dark"' "$dir/session.json" || fail "the valid theme was not restored"
expect_kept_aside "$dir/session.json"

echo "== a 20,000-op chain restored into the Schedule view: the first start within 60 s"
dir="$out/session-long-chain"
mkdir -p "$dir"
{ printf '{"schema":"tilescope-session/1","view":"schedule","model_text":"x: [4]\\ny1 = relu(x)\\n'
  for i in $(seq 2 20000); do printf 'y%d = relu(y%d)\\n' "$i" $((i - 1)); done
  printf '"}\n'; } > "$dir/session.json"
start_once "$dir/session.json" "$dir/state.json" 60
grep -q '"view": "schedule"' "$dir/state.json" || fail "the Schedule view was not restored"

echo "== a step that no longer applies: it and the steps after it named, the original kept"
dir="$out/session-dropped-steps"
mkdir -p "$dir"
printf '%s\n' '{"schema":"tilescope-session/1","model_text":"A: [64, 64]\nB: [64, 64]\nC = A @ B\n",' \
  '"steps":"tile(i, 16); tile(q, 4); reorder(i.o, j); tile(j, 8)"}' > "$dir/session.json"
cp "$dir/session.json" "$dir/session.json.orig"
start_once "$dir/session.json" "$dir/state.json"
grep -q 'step 2, tile(q, 4), no longer applies' "$dir/state.json" || fail "the refused step is not named"
grep -q 'not restored after it: reorder(i.o, j), tile(j, 8)' "$dir/state.json" ||
  fail "the steps after it are not named"
expect_kept_aside "$dir/session.json"

echo "== a hand-out's model_path names another file: Save model does not write it"
dir="$out/session-model-path"
mkdir -p "$dir"
printf 'precious\n' > "$dir/victim.txt"
printf '{"schema":"tilescope-session/1","model_text":"x: [2]\\ny = relu(x)\\n","model_path":"%s"}\n' \
  "$dir/victim.txt" > "$dir/session.json"
printf 'save-model\nwait-frames 2\nwrite-state %s\nquit\n' "$dir/state.json" > "$dir/save.script"
timeout 120 "$with_xvfb" "$app" --session "$dir/session.json" --script "$dir/save.script" \
  > "$dir/save.log" 2>&1 || true
[ "$(cat "$dir/victim.txt")" = precious ] || fail "Save model overwrote the session's model_path"
grep -q 'came from a session, a lesson or an ONNX import, not from you' "$dir/save.log" || fail "no message about the path"

echo "== a model file with NUL bytes and invalid UTF-8: shown escaped, typed into, no assertion"
dir="$out/nul-model"
mkdir -p "$dir"
printf 'x: [2]\000\nbad = relu(x)\377\n' > "$dir/nul.model"
cat > "$dir/nul.script" <<SCRIPT
set-model-file $dir/nul.model
wait-frames 3
click 150 90
type  # typed
wait-frames 3
write-state $dir/state.json
quit
SCRIPT
timeout 120 "$with_xvfb" "$app" --no-session --size 1440x900 --script "$dir/nul.script" \
  > "$dir/nul.log" 2>&1 || { cat "$dir/nul.log"; fail "the app did not survive a model with NUL bytes"; }
grep -q '␀' "$dir/state.json" || fail "the NUL byte is not shown as ␀"
grep -q '�' "$dir/state.json" || fail "the invalid byte is not shown as U+FFFD"

echo "== quit while a lesson's long check runs: the app ends in seconds, not when the check ends"
dir="$out/lesson-long-check"
mkdir -p "$dir/lessons"
# A 512 x 1024 x 512 GEMM simulated on tiny: about 8e8 accesses, 27 s here (`lesson check`; below
# the lesson limit of 1e9, so it starts).
cat > "$dir/lessons/01-long.md" <<'LESSON'
---
title: A long check
level: beginner
minutes: 5
---
# A long check
```model id=m
A: [512, 1024]
B: [1024, 512]
C = A @ B
```
```check machine=tiny
dram_bytes(m) > 0
```
LESSON
printf 'lesson open 1\nwait-seconds 1\nquit\n' > "$dir/quit.script"
start=$(date +%s)
timeout 120 "$with_xvfb" "$app" --no-session --lessons "$dir/lessons" --script "$dir/quit.script" \
  > "$dir/quit.log" 2>&1 || { cat "$dir/quit.log"; fail "the app failed while quitting (exit $?)"; }
took=$(( $(date +%s) - start ))
cat "$dir/quit.log"
[ "$took" -lt 10 ] || fail "quitting took $took s: it waited for the lesson's check"

echo "gui robustness: all checks passed"
