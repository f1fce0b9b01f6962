#!/usr/bin/env bash
# GUI layout test (issue 26): the Lessons view in every theme (light, dark, projector), at UI scale
# 100, 150 and 200 % and at 1280x720, 1920x1080 and 3840x2160. Every view tab lies inside the tab
# strip, and no lesson title wraps to fewer than 12 characters a line (at 150 % they collapsed to one letter
# a line, and the projector theme pushed the Lessons tab off screen). In each, the Graph view with
# an op in the inspector, the Memory view of a simulated kernel, the Timings view and the Lessons
# view cut no text at the edge of its panel (the layout JSON's clipped_text: every text drawn is
# measured against its clip rectangle; the model editor's long lines scroll, so they are left
# out). Screenshots are kept in OUT_DIR for a person to look at.
# usage: gui_layout.sh TILESCOPE OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"
app=$1 out=$2
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
failures=0
for theme in light dark projector; do
  for size in 1280x720 1920x1080 3840x2160; do
    for scale in 1 1.5 2; do
      name="$theme-$size-$scale"
      # A small layer, so the Memory view's simulation takes a moment on the tiny machine.
      printf '%s\n' 'set-model-text x: [64, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n' \
        "theme $theme" "ui-scale $scale" 'machine tiny' 'select-op matmul0' 'wait-frames 4' \
        "write-layout $out/$name-graph.json" 'wait-frames 1' 'view memory' 'wait-jobs' 'wait-frames 4' \
        "write-layout $out/$name-memory.json" 'wait-frames 1' 'view timings' 'wait-frames 4' \
        "write-layout $out/$name-timings.json" 'wait-frames 1' \
        'set-model-file assets/models/cnn.model' \
        'open-trace assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json' 'trace select 0' \
        'wait-frames 4' "write-layout $out/$name-trace.json" 'wait-frames 1' \
        'view lessons' 'wait-frames 4' 'quit' \
        > "$out/$name.script"
      timeout 120 "$with_xvfb" -s "-screen 0 3840x2160x24" "$app" --no-session --size "$size" \
        --script "$out/$name.script" --screenshot "$out/$name.png" \
        --layout-json "$out/$name.json" > "$out/$name.log" 2>&1 ||
        { cat "$out/$name.log"; echo "FAIL: $name: the app exited with $?"; exit 1; }
      # Tabs inside the strip; each title's characters per line (its height in lines of the
      # type size).
      awk_out=$(tr -d '\n' < "$out/$name.json" | sed 's/},/}\n/g' | awk -v name="$name" '
        /"name": "tabs"/ { match($0, /"x": [0-9.]+/); tx = substr($0, RSTART + 5, RLENGTH - 5) + 0
                           match($0, /"w": [0-9.]+/); tw = substr($0, RSTART + 5, RLENGTH - 5) + 0 }
        /"font_px"/ { match($0, /"font_px": [0-9.]+/); px = substr($0, RSTART + 11, RLENGTH - 11) + 0 }
        /"name": "tab\./ { match($0, /"name": "[^"]+"/); n = substr($0, RSTART + 9, RLENGTH - 10)
                           match($0, /"x": [0-9.]+/); x = substr($0, RSTART + 5, RLENGTH - 5) + 0
                           match($0, /"w": [0-9.]+/); w = substr($0, RSTART + 5, RLENGTH - 5) + 0
                           tab[n] = x + w }
        /"name": "lessons\.title\./ { match($0, /"name": "[^"]+"/); n = substr($0, RSTART + 9, RLENGTH - 10)
                           match($0, /"h": [0-9.]+/); h[n] = substr($0, RSTART + 5, RLENGTH - 5) + 0 }
        END { for (n in tab) if (tab[n] > tx + tw + 0.5) print "FAIL: " name ": " n " ends at " tab[n] " past the strip (" tx + tw ")"
              for (n in h) print "TITLE " n " " h[n] " " px }')
      # Texts cut off at their panel's edge, in any of the five views (the editor's lines scroll);
      # the lessons view is the last frame, the run's own layout JSON.
      for view in graph memory timings trace lessons; do
        file="$out/$name-$view.json"
        [ "$view" = lessons ] && file="$out/$name.json"
        cut=$(tr -d '\n' < "$file" | sed 's/.*"clipped_text": \[//; s/\].*//' |
              sed 's/},/}\n/g' | grep '"window"' | grep -v '"window": "Model text/##model_text' || true)
        if [ -n "$cut" ]; then
          echo "FAIL: $name, $view view: text cut off at its panel's edge: $cut"
          failures=$((failures + 1))
        fi
      done
      # The Trace view's table: a row is a line or two of type, never a column so narrow that its
      # text wraps letter by letter (row 1 starts within 3 lines of row 0, and is on screen).
      rows=$(tr -d '\n' < "$out/$name-trace.json" | sed 's/},/}\n/g' | awk '
        /"font_px"/ { match($0, /"font_px": [0-9.]+/); px = substr($0, RSTART + 11, RLENGTH - 11) + 0 }
        /"name": "trace\.node\.[01]"/ { match($0, /"y": [0-9.]+/); y[n++] = substr($0, RSTART + 5, RLENGTH - 5) + 0 }
        END { if (n < 2) print "FAIL: rows 0 and 1 of the table are not both drawn"
              else if (y[1] - y[0] > 3 * 1.2 * px) print "FAIL: a table row is " y[1] - y[0] " px tall at " px " px type" }')
      if [ -n "$rows" ]; then
        echo "$name, trace view: $rows"
        failures=$((failures + 1))
      fi
      if grep -q FAIL <<<"$awk_out"; then
        grep FAIL <<<"$awk_out"
        failures=$((failures + 1))
      fi
      # Lines = height / (type size × 1.2); characters a line = title length / lines, rounded.
      while read -r _ id height px; do
        title=$(grep -m1 '^title:' "lessons/${id#lessons.title.}.md" | sed 's/^title: *//')
        lines=$(awk -v h="$height" -v p="$px" 'BEGIN { l = int(h / (p * 1.2) + 0.5); if (l < 1) l = 1; print l }')
        per_line=$(( (${#title} + lines / 2) / lines ))  # rounded
        if [ "$per_line" -lt 12 ]; then
          echo "FAIL: $name: '$title' wraps to $lines lines, $per_line characters a line"
          failures=$((failures + 1))
        fi
      done < <(grep '^TITLE' <<<"$awk_out")
    done
  done
done
[ "$failures" -eq 0 ] || { echo "FAIL: $failures layouts"; exit 1; }
echo "gui layout: all checks passed (screenshots in $out)"
