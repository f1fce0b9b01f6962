#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention, each backend, on the attention suites' problems.

The GPU machine's reference for issue #31: the same problems as tilescope's attention suites
(read from `tilescope-gpu-bench --attention-shapes`), timed as tilescope's bench times its versions
(warm-up, then CUDA events around each run with the L2 flushed before it, median and minimum of up
to --repeats runs within a 1.5 s budget), each output first checked against float64 attention on
sampled heads with the suite's own tolerance. The JSON it writes (schema tilescope-sdpa/1) is
folded into the bench's report by `tilescope-gpu-bench --sdpa FILE`.

Usage (on the GPU machine):
  tilescope-gpu-bench --attention-shapes [--quick] > shapes.json
  python3 scripts/sdpa_reference.py --shapes shapes.json --out sdpa.json [--suite a,b]
"""
import argparse
import datetime
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("math", SDPBackend.MATH)]
BUDGET_MS, MIN_REPEATS, WARMUP = 1500.0, 3, 2
# The math backend materialises B·H·N² scores in the input type and more in fp32: beyond this many
# score elements it is skipped (it is the unfused version 1 of tilescope's suite in any case).
MATH_MAX_SCORES = 64 * 4096 * 4096
CHECK_HEADS = 2


def inputs(shape, seed):
    """Q, K uniform in [-2, 2), V in [-1, 1), as tilescope's suites draw them (not the same values:
    the distribution, which is what a softmax's shape depends on)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    dims = (shape["batch"], shape["heads"], shape["n"], shape["d"])
    dtype = torch.bfloat16 if shape["dtype"] == "bf16" else torch.float16

    def uniform(lo, hi):
        return (torch.rand(dims, generator=gen, device="cuda", dtype=torch.float32) * (hi - lo) + lo).to(dtype)

    return uniform(-2, 2), uniform(-2, 2), uniform(-1, 1)


def reference_heads(q, k, v, causal):
    """float64 attention of the first CHECK_HEADS heads of batch 0, one head at a time."""
    outs = []
    for h in range(min(CHECK_HEADS, q.shape[1])):
        qh, kh, vh = (t[0, h].double() for t in (q, k, v))
        s = (qh @ kh.T) / math.sqrt(q.shape[-1])
        if causal:
            n = s.shape[0]
            s.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        outs.append(torch.softmax(s, dim=-1) @ vh)
        del s
    return torch.stack(outs)


def rel_error(got, want):
    return (torch.linalg.vector_norm(got.double() - want) / torch.linalg.vector_norm(want)).item()


def time_runs(fn, repeats, flush):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    samples, spent = [], 0.0
    while len(samples) < repeats and not (len(samples) >= MIN_REPEATS and spent >= BUDGET_MS):
        flush.add_(1)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop)
        samples.append(ms)
        spent += ms
    return statistics.median(samples), min(samples), len(samples)


def measure(name, shape, repeats, flush, seed):
    q, k, v = inputs(shape, seed)
    causal = bool(shape["causal"])
    want = reference_heads(q, k, v, causal)
    flops = 4.0 * shape["batch"] * shape["heads"] * shape["n"] ** 2 * shape["d"] * (0.5 if causal else 1.0)
    results = []
    for backend, enum in BACKENDS:
        entry = {"suite": name, "backend": backend}
        scores = shape["batch"] * shape["heads"] * shape["n"] ** 2
        if backend == "math" and scores > MATH_MAX_SCORES:
            entry.update(verified=False, error=f"skipped: {scores:.3g} scores would be materialised")
            results.append(entry)
            continue
        try:
            with sdpa_kernel([enum]):
                def run():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                out = run()
                torch.cuda.synchronize()
                err = rel_error(out[0, :CHECK_HEADS], want)
                del out
                entry["rel_error"] = err
                entry["verified"] = bool(err <= shape["tolerance"])
                if entry["verified"]:
                    med, low, count = time_runs(run, repeats, flush)
                    entry.update(median_ms=med, min_ms=low, repeats=count)
                else:
                    entry["error"] = f"relative error {err:.3g} > {shape['tolerance']}"
        except Exception as e:  # a backend that does not take this problem says so; keep going
            entry.update(verified=False, error=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        torch.cuda.empty_cache()
        results.append(entry)
        tflops = f"{flops / entry['median_ms'] / 1e9:8.1f} TFLOP/s" if "median_ms" in entry else ""
        status = f"{entry['median_ms']:9.4f} ms {tflops}" if "median_ms" in entry else entry.get("error", "")
        print(f"  {name:24s} {backend:9s} {status}", flush=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", required=True, help="JSON from tilescope-gpu-bench --attention-shapes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--suite", default="", help="comma-separated suite names (default: all)")
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("sdpa_reference.py: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    with open(args.shapes) as f:
        shapes = json.load(f)
    wanted = [s for s in args.suite.split(",") if s] or list(shapes)
    unknown = [s for s in wanted if s not in shapes]
    if unknown:
        print(f"sdpa_reference.py: unknown suites {unknown}; known: {list(shapes)}", file=sys.stderr)
        return 1
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * max(l2, 1 << 20) // 4, dtype=torch.float32, device="cuda")
    results = []
    for i, name in enumerate(wanted):
        results += measure(name, shapes[name], args.repeats, flush, 1234 + i)
    doc = {
        "schema": "tilescope-sdpa/1",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "timing": f"CUDA events, L2 flushed before each run, {WARMUP} warm-up, median of up to "
                  f"{args.repeats} runs ({MIN_REPEATS} at least, {BUDGET_MS:.0f} ms budget)",
        "results": results,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
