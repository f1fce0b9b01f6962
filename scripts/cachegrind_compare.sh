#!/usr/bin/env bash
# Checks the memory simulator against valgrind's cachegrind: for GEMM schedules (naive ijk, ikj,
# tiled) at several sizes, the schedule's generated C++ (emit_cpp, compiled -O2) runs once under
# cachegrind with --D1/--LL, and the same schedule's trace runs through the simulator configured
# the same way; prints D1 and LL misses of the kernel side by side. Every row is gated: the
# worst difference must be within 5% (exit 2 otherwise).
#
# Accumulators: a schedule whose accumulator tile is more than 16 floats keeps it in a stack
# array (schedule::accumulator_home); the trace counts its reads and writes at an address of its
# own (simulate --json's "accumulator"). The driver runs the kernel on a stack it places so the
# array lands at that address modulo 2 MiB, as the tensors do: a native probe run finds how far
# below the stack top the compiler put the array, a second probe checks the placement.
#
# Usage: [KERNEL_CXXFLAGS=-O2] scripts/cachegrind_compare.sh [--cli PATH] [--sizes "128 256"] [--d1 32768,8,64]
#                                      [--ll 262144,8,64] [--markdown] [--counters-json FILE]
# --counters-json also writes the rows as a tilescope-counters/1 report (cachegrind's counts as
# the measurement, the simulator's as the prediction), the format of the GPU's Nsight Compute
# comparison, so `tilescope-cli bench --show FILE` prints both the same way.
# Needs valgrind (cachegrind, cg_annotate), g++ and python3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=""
SIZES="128 256"
D1="32768,8,64"
LL="262144,8,64"
MARKDOWN=0
COUNTERS_JSON=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cli) CLI=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --d1) D1=$2; shift 2 ;;
    --ll) LL=$2; shift 2 ;;
    --markdown) MARKDOWN=1; shift ;;
    --counters-json) COUNTERS_JSON=$2; shift 2 ;;
    *) echo "cachegrind_compare.sh: unknown argument '$1'" >&2; exit 1 ;;
  esac
done
if [[ -z "$CLI" ]]; then
  for c in "$ROOT"/build*/app/cli/tilescope-cli; do
    [[ -x "$c" ]] && CLI=$c && break
  done
fi
[[ -x "$CLI" ]] || { echo "cachegrind_compare.sh: no tilescope-cli (pass --cli PATH)" >&2; exit 1; }
for tool in valgrind cg_annotate g++ python3; do
  command -v "$tool" >/dev/null || { echo "cachegrind_compare.sh: needs $tool" >&2; exit 1; }
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The simulator's machine: cachegrind's caches. cachegrind simulates LRU, write-allocate levels
# with no write-back traffic at all, so both levels drop their write-backs (`writebacks =
# dropped`: counted, sent nowhere). A real write-back into LL would also make that LL line the
# most recent, which pushes other lines out — cachegrind never does that. LL demand misses are
# compared with the simulator's line fetches from memory (memory reads).
IFS=, read -r d1s d1w d1l <<<"$D1"
IFS=, read -r lls llw lll <<<"$LL"
cat >"$WORK/cg.machine" <<EOF
name = cachegrind
kind = cpu
cores = 1
clock = 1 GHz
[level D1]
size = $d1s B
line = $d1l B
ways = $d1w
replacement = lru
write = back
write_allocate = yes
writebacks = dropped
[level LL]
size = $lls B
line = $lll B
ways = $llw
replacement = lru
write = back
write_allocate = yes
writebacks = dropped
inclusion = non-inclusive
[memory DRAM]
size = 1 GiB
EOF

g++ -O2 -std=c++20 -c "$ROOT/kernels/cpu/tools/cachegrind_driver.cpp" -o "$WORK/driver.o"

declare -A STEPS
STEPS[ijk]=""
STEPS[ikj]="reorder(k, j)"
STEPS[tiled]="tile(i, j, 32, 32); split(k, 32); reorder(i.o, j.o, k.o, i.i, k.i, j.i)"
STEPS[panel]="tile(i, j, 16, 16); reorder(i.i, k, j.i)"

: >"$WORK/rows.tsv"
for n in $SIZES; do
  printf 'A: [%d, %d]\nB: [%d, %d]\nC = A @ B\n' "$n" "$n" "$n" "$n" >"$WORK/gemm$n.model"
  for name in ijk ikj panel tiled; do
    steps=${STEPS[$name]}
    "$CLI" schedule "$WORK/gemm$n.model" --apply "$steps" --emit cpp >"$WORK/k.cpp"
    "$CLI" simulate "$WORK/gemm$n.model" --apply "$steps" --machine "$WORK/cg.machine" --json \
      --no-3c --no-reuse >"$WORK/sim.json"
    args=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join("%d:%d" % (t["base"], t["alloc_elems"]) for t in j["layout"]))' "$WORK/sim.json")
    read -r acc_base acc_bytes < <(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["accumulator"]; print(a["base"], a["bytes"])' "$WORK/sim.json")
    g++ ${KERNEL_CXXFLAGS:--O2} -std=c++20 "$WORK/k.cpp" "$WORK/driver.o" -o "$WORK/drv"
    place=()
    if [[ "$acc_bytes" -gt 0 ]]; then
      off=$("$WORK/drv" --probe "$acc_bytes" $args) ||
        { echo "cachegrind_compare.sh: $name N=$n: the accumulator array was not found on the stack" >&2; exit 1; }
      "$WORK/drv" --probe "$acc_bytes" --acc-at "$acc_base:$off" $args >/dev/null ||
        { echo "cachegrind_compare.sh: $name N=$n: could not place the accumulator array" >&2; exit 1; }
      place=(--acc-at "$acc_base:$off")
    fi
    valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1="$D1" --LL="$LL" \
      --cachegrind-out-file="$WORK/cg.out" "$WORK/drv" "${place[@]}" $args >/dev/null 2>"$WORK/vg.log"
    cg_annotate --show=D1mr,D1mw,DLmr,DLmw "$WORK/cg.out" >"$WORK/cg.txt"
    python3 - "$WORK/sim.json" "$WORK/cg.txt" "$name" "$n" "$acc_bytes" >>"$WORK/rows.tsv" <<'PY'
import json, re, sys
sim = json.load(open(sys.argv[1]))
levels = sim["report"]["levels"]
sim_d1 = levels[0]["total"]["misses"]
sim_ll = levels[-1]["total"]["reads"]  # line fetches from memory = LL demand misses
row = None
for line in open(sys.argv[2]):
    if re.search(r"\bts_kernel\b", line):
        vals = [int(x.replace(",", "")) for x in line.split() if re.fullmatch(r"[\d,]+", x)]
        row = vals[:4]
        break
if row is None:
    sys.exit("cg_annotate output has no ts_kernel line")
cg_d1, cg_ll = row[0] + row[1], row[2] + row[3]
print(f"{sys.argv[3]}\t{sys.argv[4]}\t{sim_d1}\t{cg_d1}\t{sim_ll}\t{cg_ll}\t{sys.argv[5]}\t"
      f"{row[0]}\t{row[1]}\t{row[2]}\t{row[3]}")
PY
  done
done

if [[ -n "$COUNTERS_JSON" ]]; then
  python3 - "$WORK/rows.tsv" "$D1" "$LL" "$COUNTERS_JSON" "$(valgrind --version)" "${KERNEL_CXXFLAGS:--O2}" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" <<'PY'
import datetime, json, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
steps = {"ijk": "", "ikj": "reorder(k, j)", "panel": "tile(i, j, 16, 16); reorder(i.i, k, j.i)",
         "tiled": "tile(i, j, 32, 32); split(k, 32); reorder(i.o, j.o, k.o, i.i, k.i, j.i)"}
order = ["ijk", "ikj", "panel", "tiled"]
doc = {
    "schema": "tilescope-counters/1",
    "tool": "cachegrind",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "device": {"name": sys.argv[7], "caches": f"D1={sys.argv[2]} LL={sys.argv[3]} (size,assoc,line), LRU"},
    "ncu_version": sys.argv[5],
    "ncu_command": f"valgrind --tool=cachegrind --cache-sim=yes --D1={sys.argv[2]} --LL={sys.argv[3]} "
                   f"(kernel g++ {sys.argv[6]}); counts of ts_kernel from cg_annotate",
    "metrics": [
        {"key": "d1_misses", "ncu": "D1mr+D1mw", "meaning": "D1 misses, reads + writes"},
        {"key": "ll_misses", "ncu": "DLmr+DLmw", "meaning": "LL misses, reads + writes"},
    ],
    "metrics_unavailable": [],
    "runs": [],
}
for r in rows:
    name, n = r[0], int(r[1])
    cg = {"D1mr": int(r[7]), "D1mw": int(r[8]), "DLmr": int(r[9]), "DLmw": int(r[10])}
    doc["runs"].append({
        "suite": "cpu_gemm", "version": order.index(name) + 1, "name": name, "M": n, "N": n, "K": n,
        "kernels": [{"name": "ts_kernel", "metrics": cg}],
        "measured": {"d1_misses": int(r[3]), "ll_misses": int(r[5])},
        "predicted": {"values": {"d1_misses": int(r[2]), "ll_misses": int(r[4])},
                      "twin": "schedule: " + (steps[name] or "(no steps: ijk)"),
                      "method": "full trace of the same schedule through cachegrind's caches "
                                "(LRU, write-allocate, write-backs dropped); accumulator: "
                                + ("registers" if int(r[6]) == 0 else f"stack {r[6]} B, traced"),
                      "causes": {}}})
json.dump(doc, open(sys.argv[4], "w"), indent=2)
print(f"wrote {sys.argv[4]}")
PY
fi

python3 - "$WORK/rows.tsv" "$MARKDOWN" "$D1" "$LL" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
md = sys.argv[2] == "1"
def pct(s, c):
    s, c = int(s), int(c)
    return "n/a" if c == 0 else f"{100.0 * (s - c) / c:+.2f}%"
hdr = ["kernel", "N", "D1 sim", "D1 cg", "D1 diff", "LL sim", "LL cg", "LL diff", "accumulator"]
def acc(r):
    n = int(r[6])
    return "registers" if n == 0 else f"stack {n} B (traced)"
out = [[r[0], r[1], r[2], r[3], pct(r[2], r[3]), r[4], r[5], pct(r[4], r[5]), acc(r)] for r in rows]
print(f"D1={sys.argv[3]}  LL={sys.argv[4]}  (size,assoc,line)")
if md:
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in out: print("| " + " | ".join(r) + " |")
else:
    w = [max(len(x[i]) for x in out + [hdr]) for i in range(len(hdr))]
    for r in [hdr] + out: print("  ".join(x.rjust(w[i]) for i, x in enumerate(r)))
worst = max(max(abs(int(r[2]) - int(r[3])) / max(int(r[3]), 1), abs(int(r[4]) - int(r[5])) / max(int(r[5]), 1)) for r in rows)
print(f"worst difference over all rows: {100 * worst:.2f}% ({'within' if worst <= 0.05 else 'OVER'} 5%)")
sys.exit(0 if worst <= 0.05 else 2)
PY
