#!/usr/bin/env bash
# Makes the README screenshots (assets/screenshots/*.png) by replaying app scripts under Xvfb.
# usage: scripts/screenshots.sh [path/to/tilescope]   (default: build/default/app/gui/tilescope)
set -euo pipefail
cd "$(dirname "$0")/.."
app=${1:-build/default/app/gui/tilescope}
if [ ! -x "$app" ]; then
  echo "screenshots: no app at $app; build it first (scripts/run.sh) or pass its path" >&2
  exit 1
fi
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "screenshots: xvfb-run is missing (Debian package xvfb)" >&2
  exit 1
fi
out=$PWD/assets/screenshots
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shot NAME SIZE "script lines" [app flags...]: runs the script, which ends with a screenshot.
shot() {
  local name=$1 size=$2 lines=$3
  shift 3
  printf '%s\nwait-frames 4\nscreenshot %s/%s.png\nwait-frames 1\nquit\n' "$lines" "$out" "$name" \
    > "$tmp/$name.script"
  xvfb-run -a -s "-screen 0 1920x1200x24" "$app" --no-session --size "$size" --script "$tmp/$name.script" "$@"
  echo "wrote assets/screenshots/$name.png"
}

shot overview-light 1440x900 "select-op matmul0"
shot parse-error-dark 1440x900 "theme dark
replace-line 5 y = relu(x @ W2.T + b)"
shot attention-light 1440x900 "select-op softmax0" --model assets/models/attention.model
shot cnn-projector 1600x1000 "theme projector
select-op conv0" --model assets/models/cnn.model

# One screenshot per workbench view, on the built-in example y = relu(x @ W.T + b) (64×1024 by
# 512×1024) after fusing the epilogue, tiling i and k and staging W's k-tile in a scratchpad.
steps='view schedule
apply "fuse(matmul0, add0, relu0)"
apply "tile(i, 16)"
apply "tile(k, 64)"
apply "stage(W, scratchpad, at=k.o)"'
shot view-graph 1440x900 "select-op matmul0"
shot view-schedule 1440x900 "$steps"
shot view-tiles 1440x900 "$steps
view tiles
tiles record
wait-jobs
tiles seek 40"
shot view-memory 1440x900 "$steps
machine host
view memory
simulate
wait-jobs"
shot view-timings 1440x900 "$steps
machine host
simulate
wait-jobs
run-cpu
wait-jobs
view timings"
shot view-roofline 1440x900 "$steps
machine h200
goto-step 1
simulate
wait-jobs
goto-step 4
simulate
wait-jobs
view roofline"
shot view-presentation 1600x1000 "theme projector
$steps
present on"
# Presentation as a projector shows it: the small CNN at 1920×1080, node text at least 20 px.
shot presentation-cnn-1920 1920x1080 "theme projector
present on" --model assets/models/cnn.model

# The lesson player at 1280×800 (the size it is designed for): the catalogue, and lesson 2's
# third step after a wrong prediction — the reveal beside the Memory view on `tiny`.
shot lesson-catalogue 1280x800 "view lessons"
shot lesson-player 1280x800 "lesson open 2
wait-jobs
lesson goto simulate
wait-jobs
lesson predict dram-ratio 1.5x
wait-jobs"
