#!/usr/bin/env python3
"""Summarises block_timing's CSV (stdin): per version, the median block duration, how far apart
(in block durations) the starts of blocks b and b+row are — the two blocks one row of blocks
apart, which read the same panel of B — and how far a block starts after the block it shares its
SM with (the other residency slot)."""
import csv
import statistics
import sys
from collections import defaultdict


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


rows = list(csv.DictReader(sys.stdin))
for v in sorted({r["version"] for r in rows}):
    blocks = {}
    row = 1
    for r in rows:
        if r["version"] == v:
            blocks[int(r["block"])] = (int(r["start_ns"]), int(r["end_ns"]), int(r["sm"]))
            row = max(row, int(r["bx"]) + 1)
    t0 = min(s for s, _, _ in blocks.values())
    dur = statistics.median(e - s for s, e, _ in blocks.values())
    apart = [abs(blocks[b + row][0] - blocks[b][0]) / dur for b in blocks if b + row in blocks]
    by_sm = defaultdict(list)
    for s, e, sm in blocks.values():
        by_sm[sm].append((s, e))
    slot = []
    for spans in by_sm.values():
        spans.sort()
        for (ps, pe), (s, _) in zip(spans, spans[1:]):
            if ps <= s < pe:
                slot.append((s - ps) / dur)
    end = max(e for _, e, _ in blocks.values()) - t0
    print(f"SGEMM {v}: {len(blocks)} blocks, median {dur / 1e3:.1f} us each, {end / 1e6:.2f} ms in all")
    print(f"  start of b+{row} after b, in block durations: p10 {pct(apart, 0.1):.3f}, "
          f"median {pct(apart, 0.5):.3f}, p90 {pct(apart, 0.9):.3f}")
    print(f"  start after the SM's other resident block: p10 {pct(slot, 0.1):.3f}, "
          f"median {pct(slot, 0.5):.3f}, p90 {pct(slot, 0.9):.3f} ({len(slot)} blocks)")
