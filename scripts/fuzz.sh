#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the fuzz preset: clang, ASan + UBSan) and runs each target in
# turn for SECONDS (default 600), one fuzzer process at a time, with inputs up to 64 KiB, its
# dictionary, its committed seeds, the deep and long seeds fuzz/make_seeds.py writes, and a
# working corpus under fuzz/corpus-run/ (git-ignored) that grows from run to run.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     e.g. scripts/fuzz.sh 60 fuzz_session fuzz_steps
#
# Runs in libFuzzer's fork mode with one worker, so a crash or a hang does not end the target's
# time: each is written to fuzz/corpus-run/findings/<target>/ and fuzzing goes on. Prints, per
# target, the executions, the seconds and the findings (crash-, timeout-, oom-, leak- files), and
# exits 1 when any target had one. Reproduce a finding with: build/fuzz/fuzz/<target> FILE
#
# Environment: FUZZ_JOBS (build jobs, default 1), FUZZ_NICE (niceness, default 10), FUZZ_TIMEOUT
# (seconds one input may take before it counts as a hang, default 10), FUZZ_RSS_MB (default 4096).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
shift || true
all_targets=(fuzz_model_parser fuzz_machine fuzz_din fuzz_session fuzz_lesson fuzz_script
             fuzz_steps fuzz_onnx fuzz_trace)
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")
jobs="${FUZZ_JOBS:-1}"
niceness="${FUZZ_NICE:-10}"
timeout="${FUZZ_TIMEOUT:-10}"
rss_mb="${FUZZ_RSS_MB:-4096}"

# Each target's committed seeds, dictionary and make_seeds.py folder.
declare -A corpus=([fuzz_model_parser]=fuzz/corpus [fuzz_machine]=fuzz/corpus-machine
                   [fuzz_din]=fuzz/corpus-din [fuzz_session]=fuzz/corpus-session
                   [fuzz_lesson]=fuzz/corpus-lesson [fuzz_script]=fuzz/corpus-script
                   [fuzz_steps]=fuzz/corpus-steps [fuzz_onnx]=fuzz/corpus-onnx
                   [fuzz_trace]=fuzz/corpus-trace)
declare -A reader=([fuzz_model_parser]=model [fuzz_machine]=machine [fuzz_din]=din
                   [fuzz_session]=session [fuzz_lesson]=lesson [fuzz_script]=script
                   [fuzz_steps]=steps [fuzz_onnx]=onnx [fuzz_trace]=trace)

for t in "${targets[@]}"; do
  if [[ -z "${reader[$t]:-}" ]]; then
    echo "fuzz.sh: unknown target '$t' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done

if [[ ! -f build/fuzz/build.ninja ]]; then
  nice -n "$niceness" cmake --preset fuzz >/dev/null
fi
nice -n "$niceness" cmake --build --preset fuzz -j "$jobs" --target "${targets[@]}"
python3 fuzz/make_seeds.py

summary=()
failed=0
for t in "${targets[@]}"; do
  r="${reader[$t]}"
  work="fuzz/corpus-run/$r"
  findings="fuzz/corpus-run/findings/$t"
  log="fuzz/corpus-run/logs/$t.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")" "fuzz/corpus-run/seeds/$r"
  before=$(find "$findings" -type f | wc -l)
  echo "fuzz.sh: $t for ${seconds}s (log: $log)"
  start=$(date +%s)
  # libFuzzer's own exit status says little in fork mode; the findings folder is the verdict.
  nice -n "$niceness" "build/fuzz/fuzz/$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$seconds" -max_len=65536 -timeout="$timeout" \
    -rss_limit_mb="$rss_mb" -dict="fuzz/$r.dict" -artifact_prefix="$findings/" \
    -print_final_stats=1 "$work" "${corpus[$t]}" "fuzz/corpus-run/seeds/$r" >"$log" 2>&1 || true
  elapsed=$(($(date +%s) - start))
  # The fork server's status lines: "#EXECS: cov: ... oom/timeout/crash: O/T/C time: Ns ...".
  execs=$(grep -aoE '^#[0-9]+: cov' "$log" | tail -n 1 | grep -oE '[0-9]+' || true)
  found=$(($(find "$findings" -type f | wc -l) - before))
  line="$t: ${execs:-0} executions in ${elapsed} s, $found new finding(s)"
  if ((found > 0)); then
    failed=1
    line+=" in $findings/"
  fi
  echo "fuzz.sh: $line"
  summary+=("$line")
done

echo
echo "fuzz.sh: summary (${seconds} s a target, -max_len=65536, -timeout=$timeout)"
printf '  %s\n' "${summary[@]}"
if ((failed)); then
  echo "fuzz.sh: findings above; reproduce one with build/fuzz/fuzz/<target> FILE" >&2
  exit 1
fi
