#!/usr/bin/env bash
# GUI test for the Memory view's "Predicted vs measured" table (issue #15), driven by clicks: on
# the H200 machine the recorded Nsight Compute run is shown; a click opens the run list and a
# click picks SGEMM 3 at 2048³, whose rows must equal the recording's own numbers (read here from
# the JSON file, not from the app); on the tiny CPU machine the cachegrind recording is shown.
# Then "Run on this GPU" in the Timings view, clicked.
# Then an autotune sweep that comes out flat, and the pair its hint offers, clicked.
# Then the Timings view's recording picked by two clicks (the control timings.report), and the
# H200's, whose predicted column must be the counters recording's time model.
# usage: gui_measured.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped: no Xvfb)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 out=$3
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb), so the app cannot run headless"
  exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.json "$out"/*.script
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
recording=assets/recorded/gpu-h200-counters-2026-12-02.json

fail() {
  echo "FAIL: $*"
  exit 1
}

run_app() {
  local name=$1 text=$2
  printf '%s\n' "$text" | sed "s|OUT|$out|g" >"$out/$name.script"
  "$with_xvfb" -s "-screen 0 1600x1000x24" "$app" --no-session --script "$out/$name.script" \
    --size 1440x960 --layout-json "$out/$name.layout.json" --state-json "$out/$name.state.json"
}
at() {
  "$query" "$out/$1.layout.json" --widget "$2" || fail "widget $2 is not on the screen of $1"
}
get() {
  "$query" "$out/$1.state.json" "$2" || fail "$1: no $2 in the state"
}

# A small model, so the Memory view's own simulation (started when it is shown) is quick even
# under ASan.
small=$'set-model-text x: [16, 32]\\nW: [16, 32] weight\\ny = x @ W.T'
start="$small"$'\nmachine h200\nview memory\nwait-frames 3\nwait-jobs\nwait-frames 3'

# [1] The H200 machine shows the ncu recording; the run list is a combo box.
run_app p1 "$start"$'\nquit'
[[ $(get p1 /measured/tool) == ncu ]] || fail "the H200 does not show the ncu recording"
[[ $(get p1 /measured/run) == 0 ]] || fail "the first run is not shown first"
combo=$(at p1 memory.measured-run)

# [2] A click opens the list (probe where its items are), a click on item 3 picks it.
run_app p2 "$start"$'\n'"click $combo"$'\nwait-frames 3\nquit'
item=$(at p2 memory.measured-run.3)
run_app a1 "$start"$'\n'"click $combo"$'\nwait-frames 3\n'"click $item"$'\nwait-frames 3\nscreenshot OUT/measured.png\nwait-frames 1\nquit'
[[ $(get a1 /measured/run) == 3 ]] || fail "the click did not pick run 3"
[[ $(get a1 /measured/label) == "sgemm 3 · smem_tiled · 2048×2048×2048" ]] ||
  fail "run 3 is '$(get a1 /measured/label)'"

# The DRAM and L2 rows against the recording: measured and predicted sums, and the error.
rows=$("$query" "$out/a1.state.json" /measured/rows)
n=$(echo "$rows" | grep -o '"level"' | wc -l)
[[ $n -ge 3 ]] || fail "run 3 shows $n rows"
for i in $(seq 0 $((n - 1))); do
  level=$(get a1 "/measured/rows/$i/level")
  case $level in
    DRAM) keys="dram_read_bytes dram_write_bytes" bound=15 ;;
    L2) keys="l2_read_sectors l2_write_sectors" bound=25 ;;
    *) continue ;;
  esac
  m=0 p=0
  for k in $keys; do
    m=$(awk -v a="$m" -v b="$("$query" $recording "/runs/3/measured/$k")" 'BEGIN{printf "%.17g", a+b}')
    p=$(awk -v a="$p" -v b="$("$query" $recording "/runs/3/predicted/values/$k")" 'BEGIN{printf "%.17g", a+b}')
  done
  shown_m=$(get a1 "/measured/rows/$i/measured")
  shown_p=$(get a1 "/measured/rows/$i/predicted")
  shown_e=$(get a1 "/measured/rows/$i/error_pct")
  within=$(get a1 "/measured/rows/$i/within")
  awk -v a="$shown_m" -v b="$m" 'BEGIN{exit !(a == b)}' || fail "$level measured $shown_m, recording $m"
  awk -v a="$shown_p" -v b="$p" 'BEGIN{exit !(a == b)}' || fail "$level predicted $shown_p, recording $p"
  awk -v e="$shown_e" -v m="$m" -v p="$p" 'BEGIN{x = 100 * (p - m) / m; exit !(e - x < 1e-9 && x - e < 1e-9)}' ||
    fail "$level error $shown_e"
  expect_within=$(awk -v m="$m" -v p="$p" -v b="$bound" 'BEGIN{x = 100 * (p - m) / m; if (x < 0) x = -x; print (x <= b) ? "true" : "false"}')
  [[ $within == "$expect_within" ]] || fail "$level within $within, expected $expect_within"
  echo "run 3 $level: measured $m predicted $p error $shown_e% within $within"
done

# [3] A CPU machine shows the cachegrind recording.
run_app c1 "$small"$'\nmachine tiny\nview memory\nwait-frames 3\nwait-jobs\nwait-frames 2\nquit'
[[ $(get c1 /measured/tool) == cachegrind ]] || fail "tiny does not show the cachegrind recording"
[[ $(get c1 /measured/rows/0/level) == D1 ]] || fail "the cachegrind rows start at D1"
# [4] "Run on this GPU" in the Timings view: in a CUDA build a click runs the GPU bench, which on a
# machine without a GPU answers why (no usable GPU), shown in the panel; a build without CUDA
# offers no button and says why in its place.
run_app g0 "$small"$'\nview timings\nwait-frames 3\nwait-jobs\nwait-frames 2\nquit'
if [[ $(get g0 /gpu_run/available) == true ]]; then
  button=$(at g0 timings.run-gpu)
  run_app g1 "$small"$'\nview timings\nwait-frames 3\nwait-jobs\nwait-frames 2\n'"click $button"$'\nwait-frames 2\nwait-jobs\nwait-frames 3\nscreenshot OUT/gpu-run.png\nwait-frames 1\nquit'
  if error=$("$query" "$out/g1.state.json" /gpu_run/error 2>/dev/null); then
    echo "Run on this GPU: $error"
    [[ $error == *"no usable GPU"* || $error == *"did not complete"* ]] || fail "unexpected GPU run error: $error"
  else
    [[ $(get g1 /gpu_run/result/verified) == true ]] || fail "the GPU run neither failed nor verified"
  fi
else
  if "$query" "$out/g0.layout.json" --widget timings.run-gpu >/dev/null 2>&1; then
    fail "a build without CUDA offers Run on this GPU"
  fi
fi
# [5] An autotune sweep that comes out flat (a 64 × 64 × 64 GEMM on tiny over i and j, picked by
# name — the app's own first choice is j, k: k, innermost, stays whole otherwise) names the pair
# that cuts k; a click on its button sweeps j and k, which ranks its points and halves the best.
gemm=$'set-model-text A: [64, 64]\\nB: [64, 64]\\nC = A @ B\nmachine tiny\nview timings\nautotune show\nwait-frames 3\nwait-jobs\nautotune loops i j'
sweep=$'\nautotune sim\nwait-jobs\nwait-frames 3'
run_app f1 "$gemm$sweep"$'\nquit'
[[ $(get f1 /autotune/loops/0) == i && $(get f1 /autotune/loops/1) == j ]] || fail "the sweep is not over i, j"
[[ $(get f1 /autotune/flat_hint/loops/1) == k ]] || fail "a flat i, j sweep names no pair with k"
hint=$(at f1 timings.autotune-flat-hint)
run_app f2 "$gemm$sweep"$'\n'"click $hint"$'\nwait-frames 2\nwait-jobs\nwait-frames 3\nscreenshot OUT/flat-hint-after.png\nwait-frames 1\nquit'
[[ $(get f2 /autotune/loops/0) == j && $(get f2 /autotune/loops/1) == k ]] || fail "the click did not sweep j, k"
if "$query" "$out/f2.state.json" /autotune/flat_hint >/dev/null 2>&1; then fail "the j, k sweep is called flat"; fi
awk -v a="$(get f1 /autotune/best_seconds)" -v b="$(get f2 /autotune/best_seconds)" 'BEGIN{exit !(b < 0.6 * a)}' ||
  fail "the j, k sweep's best is not well below the flat sweep's"
echo "flat sweep hint: i, j best $(get f1 /autotune/best_seconds) s; j, k best $(get f2 /autotune/best_seconds) s"
echo "gui_measured: OK"
# [6] The Timings view's recordings: a click opens the list, a click on the second picks it; the
# state names the recording shown, the newest first before the clicks.
run_app t0 "$small"$'\nview timings\nwait-frames 3\nquit'
[[ $(get t0 /timings_report/index) == 0 ]] || fail "the Timings view does not start at the newest recording"
first=$(get t0 /timings_report/file)
list=$(at t0 timings.report)
run_app t1 "$small"$'\nview timings\nwait-frames 3\n'"click $list"$'\nwait-frames 3\nquit'
second=$(at t1 timings.report.1)
run_app t2 "$small"$'\nview timings\nwait-frames 3\n'"click $list"$'\nwait-frames 3\n'"click $second"$'\nwait-frames 3\nscreenshot OUT/timings-report.png\nwait-frames 1\nquit'
[[ $(get t2 /timings_report/index) == 1 ]] || fail "the click did not pick the second recording"
[[ $(get t2 /timings_report/file) != "$first" ]] || fail "the second recording is the first one's file"
echo "Timings recordings: $first, then by clicks $(get t2 /timings_report/file)"

# [7] The H200's timed recording picked by clicks: its "predicted" column is the time model's,
# read from the counters recording of the same device. SGEMM 8 at 4096³ (run 24 of that file)
# must show the recording's own predicted time and limiter, and the screen its text.
index=-1
for i in $(seq 0 20); do
  f=$("$query" "$out/t0.state.json" "/timings_report/files/$i" 2>/dev/null) || break
  [[ $f == gpu-h200-2026-12-02.json ]] && index=$i
done
[[ $index -ge 0 ]] || fail "no gpu-h200-2026-12-02.json among the Timings view's recordings"
run_app t3 "$small"$'\nview timings\nwait-frames 3\n'"click $list"$'\nwait-frames 3\nquit'
item=$(at t3 "timings.report.$index")
run_app t4 "$small"$'\nview timings\nwait-frames 3\n'"click $list"$'\nwait-frames 3\n'"click $item"$'\nwait-frames 3\nwrite-frame-text OUT/timings-predicted.txt\nwait-frames 1\nscreenshot OUT/timings-predicted.png\nwait-frames 1\nquit'
[[ $(get t4 /timings_report/file) == gpu-h200-2026-12-02.json ]] || fail "the clicks did not pick the H200 recording"
[[ $("$query" "$recording" /runs/24/suite) == sgemm && $("$query" "$recording" /runs/24/version) == 8 &&
   $("$query" "$recording" /runs/24/M) == 4096 ]] || fail "run 24 of $recording is not SGEMM 8 at 4096³"
row=-1
for i in $(seq 0 20); do
  s=$("$query" "$out/t4.state.json" "/timings_report/predicted/$i/suite" 2>/dev/null) || break
  v=$(get t4 "/timings_report/predicted/$i/version")
  [[ $s == sgemm && $v == 8 ]] && row=$i
done
[[ $row -ge 0 ]] || fail "the Timings view predicts no time for SGEMM 8"
want=$("$query" "$recording" /runs/24/predicted/values/time_ns)
got=$(get t4 "/timings_report/predicted/$row/predicted_s")
awk -v a="$got" -v b="$want" 'BEGIN{d = a * 1e9 - b; exit !(d < 1 && d > -1)}' ||
  fail "SGEMM 8's predicted time is $got s, the recording says $want ns"
[[ $(get t4 "/timings_report/predicted/$row/limiter") == $("$query" "$recording" /runs/24/predicted/time_limiter) ]] ||
  fail "SGEMM 8's limiter is not the recording's"
grep -q "3.31 ms (+5%)" "$out/timings-predicted.txt" || fail "the Timings view does not show SGEMM 8's prediction"
echo "Timings predicted: SGEMM 8 at 4096³ $got s ($(get t4 "/timings_report/predicted/$row/limiter"))"
