#!/usr/bin/env python3
"""Round trips to memory per round of each stream_loads kernel, from its SASS.

Reads the round loops that assets/recorded/experiments/h100-latency-hiding-2026-12-07-round-loops.sass
keeps (cuobjdump -sass of scripts/experiments/latency_hiding.cu) and walks each in order with a
scoreboard: a load's destination registers are ready one trip after it issues, and an instruction
that reads a register waits until it is ready. The round's trips are the latest ready time (1 when
every load goes out before the first is used); the most loads in flight at once are counted too.
Output: JSON, one entry per kernel ("16B x8", "16B x8 cs" for the streaming variant).

Usage: sass_round_trips.py ROUND_LOOPS.sass > round-trips.json
"""
import json
import re
import sys

LOAD_WIDTH = {"128": 4, "64": 2, None: 1}  # registers an LDG.E[.64|.128] writes


def walk(body):
    ready = {}  # register -> the trip after which it holds its value
    t, loads, in_flight, most = 0, 0, [], 0
    for text in body:
        op, _, args = re.sub(r"^@!?P\d+\s+", "", text).partition(" ")
        regs = [int(r) for r in re.findall(r"\bR(\d+)\b", args)]
        if op.startswith("LDG"):
            width = LOAD_WIDTH[re.match(r"LDG\.E(?:\.(64|128))?", op).group(1)]
            t = max([t] + [ready.get(r, 0) for r in regs[1:]])  # its address
            for k in range(width):
                ready[regs[0] + k] = t + 1
            loads += 1
            in_flight = [x for x in in_flight if x > t] + [t + 1]
            most = max(most, len(in_flight))
        elif regs:
            t = max([t] + [ready.get(r, 0) for r in regs[1:]])
            if not op.startswith(("ISETP", "BRA", "STG")):
                ready[regs[0]] = t
    return {"loads": loads, "round_trips": max([t] + list(ready.values())), "most_in_flight": most}


def main():
    kernels, name = {}, None
    for line in open(sys.argv[1]):
        m = re.match(r"Function : \S*stream_loadsI(f|6float2|6float4)Li(\d)ELb([01])", line)
        if m:
            size = {"f": 4, "6float2": 8, "6float4": 16}[m.group(1)]
            name = f"{size}B x{m.group(2)}" + (" cs" if m.group(3) == "1" else "")
            kernels[name] = []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m and name:
            kernels[name].append(m.group(1))
    json.dump({k: walk(v) for k, v in kernels.items()}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
