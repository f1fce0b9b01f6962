#!/usr/bin/env bash
# One call on the GPU machine with binaries built on the development machine (no build there: that
# saves minutes of device time): the CUDA tests, the SASS check for the Hopper instructions, then
# the GPU bench, one process per group of suites so a kernel that faults or hangs loses only its
# group. Logs and JSON land under $OUT (at most 8 files come back: see .library/device/README.md).
# Usage (on the GPU machine): OUT=/dir scripts/gpu-run-prebuilt.sh PREBUILT_DIR [GROUP ...]
#   PREBUILT_DIR holds tilescope-gpu-bench and test_cuda (scripts/pack-prebuilt.sh makes it);
#   a GROUP is a comma-separated suite list (default: the tensor-core and SGEMM groups below).
set -uo pipefail
cd "$(dirname "$0")/.."
PRE=${1:?usage: gpu-run-prebuilt.sh PREBUILT_DIR [GROUP ...]}
shift
OUT=${OUT:-$PWD/gpu-run-out}
mkdir -p "$OUT"
LOG="$OUT/run.log"
START=$(date +%s)
say() { echo "+ [$(($(date +%s) - START))s] $*" | tee -a "$LOG"; }

# The binaries link libcublas/libnvrtc/libcudnn dynamically: the toolkit's, else Python wheels'.
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
for d in $(python3 -c 'import nvidia, os; p = list(nvidia.__path__)[0]; print(" ".join(os.path.join(p, x, "lib") for x in sorted(os.listdir(p))))' 2>/dev/null); do
  [ -d "$d" ] && LIBS="$LIBS:$d"
done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

say "environment"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  ldd "$PRE/tilescope-gpu-bench" | grep -E "not found|cublas|cudnn|nvrtc"
} >>"$LOG" 2>&1
if ! "$PRE/tilescope-gpu-bench" --help >/dev/null 2>>"$LOG"; then
  say "the prebuilt bench does not start here (see above); build on the machine with scripts/gpu-run.sh"
  exit 3
fi

say "SASS: Hopper instructions per kernel"
if command -v cuobjdump >/dev/null; then
  cuobjdump --dump-sass "$PRE/tilescope-gpu-bench" 2>/dev/null | awk '
    /Function :/ { name = $3 }
    /HGMMA/ { hg[name]++ } /UTMALDG/ { tma[name]++ } /HMMA/ { hm[name]++ } /USETMAXREG/ { reg[name]++ }
    /FFMA/ { ff[name]++ } /LDL|STL/ { local[name]++ }
    END { for (n in hg) printf "%s HGMMA %d UTMALDG %d USETMAXREG %d LDL/STL %d\n", n, hg[n], tma[n], reg[n], local[n]
          for (n in hm) if (!(n in hg)) printf "%s HMMA %d UTMALDG %d LDL/STL %d\n", n, hm[n], tma[n], local[n]
          for (n in ff) if (n ~ /sgemm_(09|10)/) printf "%s FFMA %d LDL/STL %d\n", n, ff[n], local[n] }' \
    | sort >"$OUT/sass.txt"
  head -40 "$OUT/sass.txt" | cut -c1-160 >>"$LOG"
fi

say "tests (cuda_gpu)"
timeout --kill-after=5 180 "$PRE/test_cuda" --test-suite=cuda_gpu >"$OUT/tests.log" 2>&1
TESTS_RC=$?
echo "test_cuda exit $TESTS_RC" | tee -a "$LOG"
grep -E "ERROR|test cases|assertions" "$OUT/tests.log" | head -20 | tee -a "$LOG"

# A group "all" is the whole bench in one process (one JSON, as a recording wants), but only when
# the tests passed; otherwise the suites run in separate groups, so one fault loses only its group.
SUITE_GROUPS=("$@")
[ ${#SUITE_GROUPS[@]} -eq 0 ] && SUITE_GROUPS=(hgemm hgemm_bf16,hgemm_2048,hgemm_8192 sgemm sgemm_1024,sgemm_2048,sgemm_8192)
if [ "${SUITE_GROUPS[*]}" = all ] && [ $TESTS_RC -ne 0 ]; then
  say "tests failed: the suites run in separate groups instead of 'all'"
  SUITE_GROUPS=(hgemm hgemm_bf16,hgemm_2048,hgemm_8192 sgemm sgemm_1024,sgemm_2048,sgemm_8192 bias_relu,gemm_epilogue,conv2d,jit_twin,schedule_twin)
fi
i=0
for g in "${SUITE_GROUPS[@]}"; do
  i=$((i + 1))
  say "bench group $i: $g"
  timeout --kill-after=5 400 "$PRE/tilescope-gpu-bench" --suite "$g" --out "$OUT/bench$i.json" \
    >>"$LOG" 2>&1
  echo "bench group $i exit $?" | tee -a "$LOG"
done

# Optional, last (a profiler run must not cost the bench its time): NCU_SUITE=name profiles, with
# ncu (clocks left alone), the first launch of each kernel whose name matches a regex in
# NCU_KERNELS (space-separated) while that suite runs.
if [ -n "${NCU_SUITE:-}" ]; then
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  for k in ${NCU_KERNELS:-gemm}; do
    say "ncu: first kernel matching '$k' in suite $NCU_SUITE"
    timeout --kill-after=5 120 "$NCU" --clock-control none --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
      --section Occupancy --section LaunchStats --section InstructionStats --kernel-name-base demangled -k "regex:$k" -c 1 \
      "$PRE/tilescope-gpu-bench" --suite "$NCU_SUITE" --repeats 3 --out /tmp/ncu-bench.json \
      >>"$OUT/ncu.txt" 2>&1
    echo "ncu exit $?" | tee -a "$LOG"
  done
fi

say "done"
python3 - "$OUT"/bench*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f, "unreadable:", e); continue
    for s in d["suites"]:
        print(f"== {s['name']}: {s.get('problem', '')[:90]}" + (f"  ERROR {s['error']}" if "error" in s else ""))
        for r in s["results"]:
            ok = "ok " if r.get("verified") else "BAD"
            ms = r.get("median_ms")
            line = f"  v{r['version']:<2} {r['name'][:26]:26s} {ok}"
            if ms is not None:
                line += f" {ms:8.4f} ms {r['gflops']/1e3:7.1f} TF {r.get('pct_of_reference', float('nan')):6.1f}%"
            if not r.get("verified") and r.get("note"):
                line += "  " + r["note"][:120]
            print(line)
PY
