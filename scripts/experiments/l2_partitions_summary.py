#!/usr/bin/env python3
"""Summarise a run of scripts/experiments/l2_partitions.cu (schema tilescope-l2-partitions/1).

Prints: the two latency classes of an L2 read (near and far half) and the threshold between
them; the SMs grouped by which lines they find slow; how the lines split between the halves and
which bits of the line number decide it; whether a far read leaves a copy near the reader
(pass 2); and the half each block of the launch ran on (pass 3).

Usage: l2_partitions_summary.py RUN.json [--json OUT.json]
"""
import json
import sys


def threshold(values):
    """Otsu's split of a bimodal sample: the cut that maximises the between-class variance."""
    vs = sorted(values)
    n = len(vs)
    total = sum(vs)
    best, cut, left = -1.0, vs[0], 0.0
    for i in range(1, n):
        left += vs[i - 1]
        if vs[i] == vs[i - 1]:
            continue
        w0, w1 = i / n, (n - i) / n
        m0, m1 = left / i, (total - left) / (n - i)
        between = w0 * w1 * (m0 - m1) ** 2
        if between > best:
            best, cut = between, (vs[i - 1] + vs[i]) / 2
    return cut


def median(v):
    s = sorted(v)
    return s[len(s) // 2] if s else float("nan")


def main():
    args = sys.argv[1:]
    out_path = None
    if "--json" in args:
        i = args.index("--json")
        out_path = args[i + 1]
        del args[i : i + 2]
    run = json.load(open(args[0]))
    p1 = run["pass1"]
    sms = len(p1)
    lines = run["lines"]
    every = [c for row in p1 for c in row if c > 0]
    cut = threshold(every)
    fast = [c for c in every if c <= cut]
    slow = [c for c in every if c > cut]
    ghz = run["clock_khz"] / 1e6
    print(f"{run['device']}: {sms} SMs, L2 {run['l2_bytes'] / 2**20:.0f} MiB, {lines} lines")
    print(f"L2 read latency, pass 1: near median {median(fast)} cycles, far median {median(slow)} "
          f"cycles (cut at {cut:.0f}; {len(slow)} of {len(every)} reads far); from DRAM "
          f"(SM 0's first read) median {median(run['pass1_from_dram'])} cycles; "
          f"clock attribute {ghz:.2f} GHz")

    masks = [tuple(c > cut for c in row) for row in p1]
    groups = {}
    for s, m in enumerate(masks):
        groups.setdefault(m, []).append(s)
    print(f"SMs grouped by the lines they find far: {len(groups)} groups")
    for m, members in sorted(groups.items(), key=lambda kv: kv[1][0]):
        print(f"  {sum(m):4d} far lines: {len(members)} SMs: {members}")

    # The other half: the SMs sharing the most common non-empty set of far lines that is not
    # SM 0's own (SM 0 finds none far if its first read left a copy near it, else the lines of
    # the other half). SM 0's half: the rest.
    nonempty = [m for m in groups if sum(m) > 0 and m != masks[0]]
    side = {}
    home = None
    if nonempty:
        far_mask = max(nonempty, key=lambda m: len(groups[m]))
        home = [1 if f else 0 for f in far_mask]  # 1: the line lives in SM 0's half
        for s, m in enumerate(masks):
            agree = sum(a == b for a, b in zip(m, far_mask))
            side[s] = 1 if agree > lines * 0.9 else 0  # 1: SM 0's half is far for s
        other = [s for s in range(sms) if side[s] == 1]
        print(f"other half (SM 0's lines far): {len(other)} SMs; SM 0's half: {sms - len(other)}")
        print(f"lines in SM 0's half: {sum(home)} of {lines}")
        for bit in range(11):
            agree = sum(((i >> bit) & 1) == home[i] for i in range(lines))
            print(f"  line bit {bit} (address bit {bit + 7}) equals the half for {agree} of {lines}")
        runs, cur = [], 1
        for i in range(1, lines):
            if home[i] == home[i - 1]:
                cur += 1
            else:
                runs.append(cur)
                cur = 1
        runs.append(cur)
        print(f"  runs of lines in one half: median {median(runs)}, longest {max(runs)}")

    p2 = run["pass2"]
    print("pass 2 (SM 1 … in turn after SM 0, no flush): far lines per SM, in read order")
    seq = [sum(c > cut for c in row) for row in p2]
    print("  " + " ".join(str(x) for x in seq))

    launch = run["launch_sm"]
    if side:
        halves = [side[s] for s in launch]
        print("pass 3: the half (1 = not SM 0's) of blocks 0 … 263 of the launch:")
        print("  " + "".join(str(h) for h in halves[:132]))
        print("  " + "".join(str(h) for h in halves[132:264]))
        print(f"  SMs of blocks 0 … 31: {launch[:32]}")
    if out_path:
        json.dump({"cut_cycles": cut, "near_cycles": median(fast), "far_cycles": median(slow),
                   "other_half_sms": [s for s in range(sms) if side.get(s) == 1],
                   "line_in_sm0_half": home, "pass2_far_lines": seq,
                   "launch_half": [side.get(s) for s in launch]},
                  open(out_path, "w"))


if __name__ == "__main__":
    main()
