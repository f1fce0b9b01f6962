#!/usr/bin/env python3
"""Make the small real ONNX models that tilescope's ONNX importer is tested on.

For each of four small PyTorch modules this script
  * exports an ONNX graph (opset 17, static shapes) and re-saves it so that every
    tensor of 1 KiB or more lives in an external-data file kept OUT of --out
    (the .onnx that lands in --out holds the graph and the small constants only);
  * writes what PyTorch itself says about the model: versions, exporter, input and
    output shapes, FLOPs from torch.utils.flop_counter.FlopCounterMode (total, per
    aten op and per module), and the node list of the exported graph;
  * with --traces and a CUDA GPU, records one profiled forward pass in fp32 and in
    fp16 as Chrome traces, packed together into --out/traces.tar.xz.

Usage:
  python3 scripts/onnx/make_models.py --out DIR [--traces] [--combined]
                                       [--scratch DIR] [--models a,b]

--combined writes one pytorch_facts.json keyed by model name instead of one
NAME.pytorch.json per model (the GPU machine returns at most 8 files).
"""

import argparse
import collections
import copy
import json
import math
import os
import shutil
import sys
import tarfile
import tempfile
import traceback

import torch
import torch.nn as nn

OPSET = 17
SEED = 0
# Tensors at least this many bytes go to the external-data file.
EXTERNAL_THRESHOLD = 1024
# Each .onnx that comes back (graph + inline constants) must stay below this.
MAX_ONNX_BYTES = 1 << 20


# ---------------------------------------------------------------------------
# The four models.
# ---------------------------------------------------------------------------

def quiz_cnn():
    """The seed document's quiz model, exactly as written there."""
    return nn.Sequential(
        nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 112 * 112, 10),
    )


def conv3x3(cin, cout, stride=1):
    # Every 3x3 convolution in these models pads by one and has no bias (a
    # BatchNorm follows it), except the quiz model's, which is built above.
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """ResNet's basic block with an identity shortcut (same width in and out)."""

    def __init__(self, width):
        super().__init__()
        self.conv1 = conv3x3(width, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = conv3x3(width, width)
        self.bn2 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


def resnet_blocks():
    """Stem (conv, BN, ReLU), two 32-channel basic blocks, global pool, classifier."""
    return nn.Sequential(
        conv3x3(3, 32),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        BasicBlock(32),
        BasicBlock(32),
        nn.AdaptiveAvgPool2d(1),  # output size 1: expected to export as GlobalAveragePool
        nn.Flatten(),
        nn.Linear(32, 10),
    )


def depthwise_separable():
    """MobileNet-style: strided stem, then a depthwise 3x3 and a pointwise 1x1."""
    return nn.Sequential(
        conv3x3(3, 32, stride=2),
        nn.BatchNorm2d(32),
        nn.ReLU6(),
        nn.Conv2d(32, 32, kernel_size=3, padding=1, groups=32, bias=False),  # depthwise
        nn.BatchNorm2d(32),
        nn.ReLU6(),
        nn.Conv2d(32, 64, kernel_size=1, bias=False),  # pointwise
        nn.BatchNorm2d(64),
        nn.ReLU6(),
    )


class SelfAttention(nn.Module):
    """Multi-head self-attention written out op by op (no fused SDPA), so the
    exported graph shows each MatMul, Transpose, Reshape and the Softmax."""

    def __init__(self, width, heads):
        super().__init__()
        assert width % heads == 0
        self.heads = heads
        self.head_dim = width // heads
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.proj = nn.Linear(width, width)
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def split_heads(self, t):
        b, n, _ = t.shape
        # [B, N, C] -> [B, N, H, d] -> [B, H, N, d]
        return t.reshape(b, n, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, n, c = x.shape
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        scores = (q @ k.transpose(-2, -1)) * self.scale  # [B, H, N, N]
        weights = torch.softmax(scores, dim=-1)
        out = weights @ v  # [B, H, N, d]
        out = out.transpose(1, 2).reshape(b, n, c)  # back to [B, N, C]
        return self.proj(out)


class TransformerBlock(nn.Module):
    """Pre-norm block: h = x + attn(LN1(x)); y = h + fc2(GELU(fc1(LN2(h))))."""

    def __init__(self, width=256, heads=4, hidden=1024):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = SelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.gelu = nn.GELU(approximate='none')  # exact, erf-based GELU
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.fc2(self.gelu(self.fc1(self.ln2(h))))


def transformer_block():
    return TransformerBlock(width=256, heads=4, hidden=1024)


# name -> (constructor, input shape); the order here is the order of the output.
MODELS = collections.OrderedDict([
    ('quiz_cnn', (quiz_cnn, (1, 3, 224, 224))),
    ('resnet_blocks', (resnet_blocks, (8, 3, 32, 32))),
    ('depthwise_separable', (depthwise_separable, (1, 3, 64, 64))),
    ('transformer_block', (transformer_block, (1, 128, 256))),
])


def build(name):
    """The model in eval mode, float32, and its input; both fixed by seed 0 so
    each model is the same whichever others are built before it."""
    ctor, shape = MODELS[name]
    torch.manual_seed(SEED)
    model = ctor().float().eval()
    x = torch.randn(*shape, dtype=torch.float32)
    return model, x


# ---------------------------------------------------------------------------
# ONNX export.
# ---------------------------------------------------------------------------

def export_onnx(model, x, raw_path):
    """Export with the TorchScript-based exporter (dynamo=False). A torch that
    refuses the dynamo argument (one before 2.5 does not know it) gets the same
    call without it, i.e. its default exporter. Returns a description of the
    exporter used."""
    kwargs = dict(opset_version=OPSET, do_constant_folding=True,
                  input_names=['x'], output_names=['y'])
    try:
        torch.onnx.export(model, (x,), raw_path, dynamo=False, **kwargs)
        return 'torchscript (dynamo=False)'
    except Exception as err:  # pylint: disable=broad-except
        # Fall back only where the refusal is about the dynamo argument itself
        # (an unknown keyword, or a torch that no longer has the old exporter).
        if 'dynamo' not in str(err).lower():
            raise
        torch.onnx.export(model, (x,), raw_path, **kwargs)
        return 'default exporter of torch %s (dynamo argument refused: %s)' % (
            torch.__version__, err)


def resave_external(onnx, raw_path, final_path, name):
    """Load the exported model (with any data the exporter put beside it) and
    save it again with every tensor >= EXTERNAL_THRESHOLD bytes in one external
    file NAME.onnx.data next to final_path."""
    m = onnx.load(raw_path)  # loads external data too, if the exporter wrote any
    onnx.save_model(m, final_path, save_as_external_data=True,
                    all_tensors_to_one_file=True, location=name + '.onnx.data',
                    size_threshold=EXTERNAL_THRESHOLD)


def describe_graph(onnx, path):
    """Nodes, initializers, inputs and outputs of the graph, read without its
    external data (as the importer will first see it)."""
    from onnx import TensorProto
    m = onnx.load(path, load_external_data=False)
    g = m.graph

    def value_info(vi):
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField('dim_value') else d.dim_param
                for d in t.shape.dim]
        return {'name': vi.name,
                'elem_type': TensorProto.DataType.Name(t.elem_type),
                'shape': dims}

    nodes = [{'op_type': n.op_type, 'name': n.name,
              'inputs': list(n.input), 'outputs': list(n.output)} for n in g.node]
    counts = collections.Counter(n.op_type for n in g.node)
    inits = []
    for t in g.initializer:
        external = t.data_location == TensorProto.EXTERNAL
        inits.append({'name': t.name, 'dims': list(t.dims),
                      'data_type': TensorProto.DataType.Name(t.data_type),
                      'external': external})
    return {
        'ir_version': m.ir_version,
        'opset_imports': {(o.domain or 'ai.onnx'): o.version for o in m.opset_import},
        'producer': '%s %s' % (m.producer_name, m.producer_version),
        'inputs': [value_info(v) for v in g.input],
        'outputs': [value_info(v) for v in g.output],
        'node_count': len(nodes),
        'op_type_counts': dict(sorted(counts.items())),
        'nodes': nodes,
        'initializers': inits,
    }


def onnxruntime_check(path, x, y_ref):
    """Optional: run the exported model in onnxruntime (CPU) and compare with
    PyTorch's output. Skipped quietly where onnxruntime is not installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    sess = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    (y,) = sess.run(['y'], {'x': x.numpy()})
    diff = (torch.from_numpy(y) - y_ref).abs().max().item()
    return {'onnxruntime_version': ort.__version__, 'max_abs_diff_vs_pytorch': diff}


# ---------------------------------------------------------------------------
# FLOPs as PyTorch counts them.
# ---------------------------------------------------------------------------

def count_flops(model, x):
    """One forward pass under FlopCounterMode. FlopCounterMode counts a
    multiply-add as 2 FLOPs and counts only the ops it has formulas for (matrix
    products and convolutions, not ReLU, BatchNorm, softmax or pooling)."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:  # torch < 2.1 (Debian 12's 1.13): the profiler's own FLOP formulas
        return profiler_flops(model, x)
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(x)
    per_module = {}
    for module, ops in counter.get_flop_counts().items():
        per_module[module] = {str(op): int(n) for op, n in ops.items()}
    return {
        'counter': 'torch.utils.flop_counter.FlopCounterMode (torch %s)' % torch.__version__,
        'total': int(counter.get_total_flops()),
        'per_op': per_module.get('Global', {}),
        'per_module': per_module,
    }


# The operators whose FLOPs the profiler's formulas count that FlopCounterMode counts too: the
# convolutions and the matrix products (aten::matmul is left out: it runs as aten::mm or
# aten::bmm, which are counted).
PROFILER_GEMM_OPS = ('aten::conv2d', 'aten::addmm', 'aten::mm', 'aten::bmm')


def profiler_flops(model, x):
    """FLOPs from torch.profiler(with_flops=True) on the CPU, for a torch without
    FlopCounterMode. Only the convolutions and matrix products are summed (a
    multiply-add counts 2, as in FlopCounterMode)."""
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        model(x)
    per_op = {}
    for evt in prof.key_averages():
        if evt.key in PROFILER_GEMM_OPS and evt.flops:
            per_op[evt.key] = per_op.get(evt.key, 0) + int(evt.flops)
    return {
        'counter': 'torch.profiler with_flops (torch %s; FlopCounterMode needs torch 2.1)'
                   % torch.__version__,
        'total': sum(per_op.values()),
        'per_op': per_op,
    }


# ---------------------------------------------------------------------------
# Profiler traces.
# ---------------------------------------------------------------------------

def kernel_summary(trace_path):
    """Number of GPU kernels in a Chrome trace and the sum of their durations."""
    with open(trace_path) as f:
        events = json.load(f).get('traceEvents', [])
    kernels = [e for e in events if e.get('cat') == 'kernel' and e.get('ph') == 'X']
    return {'kernels': len(kernels),
            'kernel_time_us': round(sum(float(e.get('dur', 0)) for e in kernels), 3),
            'kernel_names': sorted(set(e.get('name', '') for e in kernels))}


def record_traces(name, model, x, trace_dir):
    """Warm up 3 forward passes, then profile one, for fp32 and fp16."""
    from torch.profiler import ProfilerActivity, profile
    dev = torch.device('cuda')
    result = {'device_name': torch.cuda.get_device_name(), 'runs': {}}
    for tag, dtype in (('fp32', torch.float32), ('fp16', torch.float16)):
        m = copy.deepcopy(model).to(dev)
        xi = x.to(dev)
        if dtype == torch.float16:
            m = m.half()
            xi = xi.half()
        with torch.no_grad():
            for _ in range(3):
                m(xi)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                         record_shapes=True) as prof:
                m(xi)
                torch.cuda.synchronize()
        path = os.path.join(trace_dir, '%s-%s.trace.json' % (name, tag))
        prof.export_chrome_trace(path)
        run = {'file': os.path.basename(path)}
        run.update(kernel_summary(path))
        result['runs'][tag] = run
        del m, xi
    return result


# ---------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------

def make_one(name, onnx, out_dir, scratch, trace_dir):
    model, x = build(name)
    facts = {'model': name, 'seed': SEED, 'torch_version': torch.__version__,
             'onnx_version': onnx.__version__, 'opset': OPSET,
             'input_shape': list(x.shape), 'dtype': 'float32'}
    with torch.no_grad():
        y = model(x)
    facts['output_shape'] = list(y.shape)
    facts['parameters'] = sum(p.numel() for p in model.parameters())

    raw_dir = os.path.join(scratch, 'raw')
    os.makedirs(raw_dir, exist_ok=True)
    raw_path = os.path.join(raw_dir, name + '.onnx')
    scratch_path = os.path.join(scratch, name + '.onnx')
    facts['exporter'] = export_onnx(model, x, raw_path)
    resave_external(onnx, raw_path, scratch_path, name)
    onnx.checker.check_model(scratch_path)  # by path, so the external data is found
    facts['onnx_checker'] = 'passed'
    # Only the graph file goes to --out; NAME.onnx.data stays in the scratch dir.
    final_path = os.path.join(out_dir, name + '.onnx')
    shutil.copyfile(scratch_path, final_path)
    facts['onnx_file'] = name + '.onnx'
    facts['onnx_bytes'] = os.path.getsize(final_path)
    facts['external_data_file'] = name + '.onnx.data'
    facts['external_data_bytes'] = os.path.getsize(
        os.path.join(scratch, name + '.onnx.data'))
    facts['onnx_graph'] = describe_graph(onnx, final_path)

    try:
        ort = onnxruntime_check(scratch_path, x, y)
        if ort is not None:
            facts['onnxruntime_check'] = ort
    except Exception as err:  # a failed cross-check is a fact, not a stop
        facts['onnxruntime_check'] = {'error': repr(err)}

    facts['flops'] = count_flops(model, x)

    if trace_dir is not None:
        facts['traces'] = record_traces(name, model, x, trace_dir)
    return facts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True, help='directory for the .onnx and .json files')
    ap.add_argument('--traces', action='store_true',
                    help='profile fp32 and fp16 forward passes on the CUDA GPU')
    ap.add_argument('--combined', action='store_true',
                    help='one pytorch_facts.json keyed by model instead of NAME.pytorch.json')
    ap.add_argument('--scratch', help='where the external data goes (default: a new temp dir)')
    ap.add_argument('--models', help='comma-separated subset of: ' + ','.join(MODELS))
    args = ap.parse_args(argv)

    import onnx  # after argparse, so --help works without it

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    scratch = os.path.abspath(args.scratch or tempfile.mkdtemp(prefix='onnx-scratch-'))
    if os.path.commonpath([scratch, out_dir]) == out_dir:
        sys.exit('--scratch must not be inside --out (its .onnx.data must not come back)')
    os.makedirs(scratch, exist_ok=True)

    names = args.models.split(',') if args.models else list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit('unknown model %r (known: %s)' % (n, ', '.join(MODELS)))

    trace_dir = None
    if args.traces:
        if torch.cuda.is_available():
            trace_dir = os.path.join(scratch, 'traces')
            os.makedirs(trace_dir, exist_ok=True)
        else:
            print('--traces: no CUDA GPU here, traces skipped', file=sys.stderr)

    print('torch %s, onnx %s, CUDA %s' % (
        torch.__version__, onnx.__version__,
        torch.cuda.get_device_name() if torch.cuda.is_available() else 'none'))
    all_facts = collections.OrderedDict()
    failures = []
    for name in names:
        try:
            facts = make_one(name, onnx, out_dir, scratch, trace_dir)
        except Exception:
            failures.append(name)
            facts = {'model': name, 'error': traceback.format_exc()}
            print(facts['error'], file=sys.stderr)
        all_facts[name] = facts
        if 'error' not in facts:
            too_big = facts['onnx_bytes'] >= MAX_ONNX_BYTES
            if too_big:
                failures.append(name + ' (.onnx over 1 MiB)')
            print('%-20s out %-16s flops %-12s onnx %7d B (data %9d B) %s%s' % (
                name, facts['output_shape'], facts['flops'].get('total', '-'),
                facts['onnx_bytes'], facts['external_data_bytes'],
                dict(facts['onnx_graph']['op_type_counts']),
                '  TOO BIG' if too_big else ''))
        if not args.combined:
            with open(os.path.join(out_dir, name + '.pytorch.json'), 'w') as f:
                json.dump(facts, f, indent=1)
                f.write('\n')
    if args.combined:
        with open(os.path.join(out_dir, 'pytorch_facts.json'), 'w') as f:
            json.dump(all_facts, f, indent=1)
            f.write('\n')

    if trace_dir is not None:
        traces = sorted(os.listdir(trace_dir))
        with tarfile.open(os.path.join(out_dir, 'traces.tar.xz'), 'w:xz') as tar:
            for t in traces:
                tar.add(os.path.join(trace_dir, t), arcname=t)
        print('traces.tar.xz: %d traces, %d B' % (
            len(traces), os.path.getsize(os.path.join(out_dir, 'traces.tar.xz'))))

    if not args.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print('FAILED: ' + ', '.join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
