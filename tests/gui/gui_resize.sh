#!/usr/bin/env bash
# GUI resize test (issue 25): a teacher's first act on a projector is to maximise. The real app
# under Xvfb (a 3840x2160 screen) is resized 20 times between 640x400 and 3840x2160, grown from
# outside with xdotool, maximised by a window manager (openbox, through wmctrl), and made full
# screen with F11 in presentation mode, with and without a window manager. Partial redraw is on
# (Xvfb's llvmpipe); after each change the window's pixels are read back from the X server
# (screenshot-screen: what the display shows) and must equal, byte for byte, the same run drawn
# with whole frames (TILESCOPE_FULL_REDRAW=1). The last ten resizes are at UI scale 200 %. Growing the window used to end the app in
# X_ShmPutImage BadValue; shrinking left a shifted frame.
# usage: gui_resize.sh TILESCOPE GUI_PNG_CHECK OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"
app=$1 check=$2 out=$3
for tool in Xvfb xdotool wmctrl openbox; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
    exit 77
  fi
done
rm -rf "$out"
mkdir -p "$out"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
screen="-screen 0 3840x2160x24"
fail() {
  echo "FAIL: $*"
  exit 1
}

# [SECTION] 20 resizes, small and large in turn, each shown as the display shows it.
sizes=(640x400 3840x2160 1900x1060 800x600 2560x1440 1024x768 3000x2000 700x450 1920x1080
       1280x720 3840x2160 640x400 1600x1000 2200x1300 900x700 3500x1900 1440x900 660x410
       2880x1800 1366x768)
{
  echo "wait-frames 3"
  i=0
  for s in "${sizes[@]}"; do
    # The second half at UI scale 200 %, as a projector needs.
    [ "$i" -eq 10 ] && echo "ui-scale 2"
    echo "resize ${s%x*} ${s#*x}"
    echo "wait-frames 3"
    echo "screenshot-screen OUT-$i.png"
    i=$((i + 1))
  done
  echo "quit"
} > "$out/resize.script"
for mode in partial whole; do
  sed "s|OUT|$out/resize-$mode|" "$out/resize.script" > "$out/resize-$mode.script"
done
echo "== 20 resizes, partial redraw"
timeout 300 "$with_xvfb" -s "$screen" "$app" --no-session --size 800x600 \
  --script "$out/resize-partial.script" --layout-json "$out/resize-partial.json" \
  > "$out/resize-partial.log" 2>&1 ||
  { cat "$out/resize-partial.log"; fail "the app did not survive 20 resizes (exit $?)"; }
echo "== 20 resizes, whole frames"
TILESCOPE_FULL_REDRAW=1 timeout 300 "$with_xvfb" -s "$screen" "$app" --no-session --size 800x600 \
  --script "$out/resize-whole.script" > "$out/resize-whole.log" 2>&1 ||
  { cat "$out/resize-whole.log"; fail "the whole-frame run did not finish (exit $?)"; }
for i in "${!sizes[@]}"; do
  cmp -s "$out/resize-partial-$i.png" "$out/resize-whole-$i.png" ||
    fail "at ${sizes[$i]} (resize $((i + 1))) the window shows other pixels with partial redraw"
done
# The last size's frame is a whole app, not a blank or shifted one.
"$check" "$out/resize-partial-19.png" "$out/resize-partial.json" --expect-parsed true --min-ops 3

# [SECTION] Maximise and full screen, from outside the app, with and without a window manager.
# The app's script waits for each size change (wait-resize) that the test makes from outside.
cat > "$out/outside.script" <<'SCRIPT'
wait-frames 3
wait-resize
wait-frames 3
screenshot-screen OUT-grown.png
present on
wait-frames 3
key F11
wait-resize
wait-frames 3
screenshot-screen OUT-full.png
key F11
wait-resize
wait-frames 3
screenshot-screen OUT-back.png
quit
SCRIPT
# $1: partial|whole, $2: wm|nowm. Runs the app on one display with the outside actions.
outside() {
  local mode=$1 wm=$2
  sed "s|OUT|$out/$wm-$mode|" "$out/outside.script" > "$out/$wm-$mode.script"
  local env=()
  [ "$mode" = whole ] && env=(env TILESCOPE_FULL_REDRAW=1)
  cat > "$out/$wm-$mode.sh" <<EOF
set -u
if [ "$wm" = wm ]; then openbox > "$out/$wm-$mode.openbox.log" 2>&1 & sleep 1; fi
${env[*]} "$app" --no-session --size 800x600 --script "$out/$wm-$mode.script" > "$out/$wm-$mode.log" 2>&1 &
app_pid=\$!
win=\$(timeout 60 xdotool search --sync --onlyvisible --name '^tilescope' | head -n 1)
sleep 1
if [ "$wm" = wm ]; then
  wmctrl -i -r "\$win" -b add,maximized_vert,maximized_horz   # the window manager's maximise
else
  xdotool windowsize "\$win" 1900 1060   # no window manager: a size from outside
fi
wait \$app_pid
EOF
  timeout 300 "$with_xvfb" -s "-screen 0 1920x1080x24" bash "$out/$wm-$mode.sh" ||
    { cat "$out/$wm-$mode.log"; fail "$wm/$mode: the app did not survive maximise and F11 (exit $?)"; }
}
for wm in nowm wm; do
  echo "== maximise and F11 in presentation mode ($wm)"
  outside partial "$wm"
  outside whole "$wm"
  for shot in grown full back; do
    cmp -s "$out/$wm-partial-$shot.png" "$out/$wm-whole-$shot.png" ||
      fail "$wm: the '$shot' window shows other pixels with partial redraw"
  done
done
echo "gui resize: all checks passed"
