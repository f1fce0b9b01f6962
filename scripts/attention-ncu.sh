#!/usr/bin/env bash
# Nsight Compute's DRAM and L2 traffic of the attention versions (issue #31's "predicted HBM bytes
# of v1 and v3 within 15 % of ncu"): each version of each suite launched once by
# `tilescope-gpu-bench --profile-one SUITE:V` (a warm-up first, outside the profile), every kernel
# of that launch profiled (v1 is three: two cuBLAS GEMMs and the softmax), bytes summed, and the
# output checked against the fp32 reference. Writes $OUT/attention-ncu.json.
# Usage (GPU machine, after scripts/gpu-run.sh built build/headless):
#   OUT=dir [VERSIONS="1 3"] scripts/attention-ncu.sh [SUITE ...]   (default: attention attention_causal)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-run-out}
mkdir -p "$OUT"
BENCH=build/headless/kernels/cuda/tilescope-gpu-bench
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
[ -x "$BENCH" ] || { echo "no $BENCH: run scripts/gpu-run.sh first"; exit 2; }
[ -n "$NCU" ] || { echo "ncu not found"; exit 2; }
SUITES=("$@")
[ ${#SUITES[@]} -eq 0 ] && SUITES=(attention attention_causal)
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum,gpu__time_duration.sum
for suite in "${SUITES[@]}"; do
  for v in ${VERSIONS:-1 2 3 4 5 6}; do
    "$NCU" --clock-control none --cache-control all --profile-from-start off --csv --page raw \
      --print-units base --metrics "$METRICS" "$BENCH" --profile-one "$suite:$v" \
      >"$OUT/ncu-$suite-$v.csv" 2>"$OUT/ncu-$suite-$v.log"
    echo "$suite v$v: exit $? $(grep -h profile-one "$OUT/ncu-$suite-$v.log" "$OUT/ncu-$suite-$v.csv" | head -1)"
  done
done
python3 - "$OUT" "${SUITES[@]}" <<'PY'
import csv, io, json, os, sys
out, suites = sys.argv[1], sys.argv[2:]
rows = []
for suite in suites:
    for v in (1, 2, 3, 4, 5, 6):
        if not os.path.exists(f"{out}/ncu-{suite}-{v}.csv"):
            continue
        text = open(f"{out}/ncu-{suite}-{v}.csv").read()
        lines = [l for l in text.splitlines() if l.startswith('"')]
        if len(lines) < 2:
            rows.append({"suite": suite, "version": v, "error": "ncu wrote no rows"}); continue
        table = list(csv.DictReader(io.StringIO("\n".join(lines))))[1:]  # row 0: units
        def total(name):
            return sum(float(r[name].replace(",", "")) for r in table if r.get(name))
        rows.append({"suite": suite, "version": v, "kernels": [r["Kernel Name"][:60] for r in table],
                     "dram_bytes": total("dram__bytes_read.sum") + total("dram__bytes_write.sum"),
                     "dram_read": total("dram__bytes_read.sum"), "dram_write": total("dram__bytes_write.sum"),
                     "l2_bytes": 32 * total("lts__t_sectors.sum"),
                     "gpu_time_ns": total("gpu__time_duration.sum")})
        r = rows[-1]
        print(f"{suite:18s} v{v}: DRAM {r['dram_bytes']/1e9:8.3f} GB (read {r['dram_read']/1e9:.3f}, write "
              f"{r['dram_write']/1e9:.3f}), L2 {r['l2_bytes']/1e9:8.2f} GB, {len(table)} kernels, "
              f"{r['gpu_time_ns']/1e6:.3f} ms")
json.dump({"schema": "tilescope-attention-ncu/1", "metrics": "dram__bytes_read.sum + dram__bytes_write.sum; "
           "lts__t_sectors.sum × 32; ncu --clock-control none --cache-control all", "runs": rows},
          open(f"{out}/attention-ncu.json", "w"), indent=2)
PY
