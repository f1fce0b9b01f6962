#!/usr/bin/env python3
"""A PyTorch profiler trace of one forward pass on the CPU, for a machine without a GPU.

    /usr/bin/python3 scripts/onnx/cpu_trace.py MODEL OUT.trace.json

MODEL is one of make_models.py's models (quiz_cnn, resnet_blocks, depthwise_separable,
transformer_block): the same module, seed and input as its .onnx. Three warm-up passes, then
one profiled pass (CPU activity, record_shapes=True), written with export_chrome_trace. Debian
12's python3-torch (1.13) runs it. `tilescope-cli import-trace OUT.trace.json --model
assets/models/MODEL.onnx` maps its operators to the imported graph's nodes.
"""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import build  # noqa: E402  (the models live there)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, out = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)  # one thread: the trace reads as one sequence of operators
    model, x = build(name)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            model(x)
    prof.export_chrome_trace(out)
    print('wrote %s (torch %s, %s)' % (out, torch.__version__, name))


if __name__ == '__main__':
    main()
