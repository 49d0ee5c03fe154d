#!/usr/bin/env python3
"""PyTorch peer of bench/conv_bench.sh, on the inputs it wrote: torch.nn.functional.conv2d
(cuDNN, float32 with TF32 off, then on) and conv_transpose2d, timed with CUDA events (median of
RUNS after warm-up); and, where conv_bench.sh left fftbloom's output (out_WORKLOAD.npy), its
relative L2 error and max abs error against PyTorch's float64 result. JSON lines on stdout, with
the workload IDs of conv_bench.sh.

usage: conv_peer_torch.py DIR"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

RUNS = int(os.environ.get('RUNS', '50'))


def timed(fn, runs=RUNS, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def main():
    d = sys.argv[1]
    dev = torch.device('cuda')
    load = lambda name: torch.from_numpy(np.load(os.path.join(d, name))).to(dev)
    print(json.dumps({'workload': 'device', 'peer': 'torch', 'torch': torch.__version__,
                      'gpu': torch.cuda.get_device_name(), 'cuda': torch.version.cuda,
                      'cudnn': torch.backends.cudnn.version()}))
    torch.backends.cudnn.benchmark = True
    work = [('conv2d_b16_c128_k3_128', 'conv', 'conv_x.npy', 'conv_w.npy', dict(padding=1))]
    for k in (5, 15):
        work.append(('image_k%d_1080p' % k, 'conv', 'image_x.npy', 'image_w%d.npy' % k,
                     dict(padding=k // 2)))
    work.append(('deconv_c64to32_k4s2_256', 'deconv', 'deconv_x_k4.npy', 'deconv_w_k4.npy',
                 dict(stride=2, padding=1)))
    work.append(('deconv_c64to32_k3s2_512', 'deconv', 'deconv_x_k3.npy', 'deconv_w_k3.npy',
                 dict(stride=2, padding=1, output_padding=1)))
    for wid, kind, xn, wn, kw in work:
        x, w = load(xn), load(wn)
        fn = F.conv2d if kind == 'conv' else F.conv_transpose2d
        for tf32 in (False, True):
            torch.backends.cudnn.allow_tf32 = tf32
            ms = timed(lambda: fn(x, w, **kw))
            print(json.dumps({'workload': wid, 'peer': 'torch', 'variant': 'tf32' if tf32 else 'fp32',
                              'op': fn.__name__, 'input': list(x.shape), 'weight': list(w.shape),
                              'params': kw, 'ms': ms}))
        torch.backends.cudnn.allow_tf32 = False
        out = os.path.join(d, 'out_%s.npy' % wid)
        if os.path.exists(out):
            ref = fn(x.double(), w.double(), **kw).cpu().numpy()
            y = np.load(out).astype(np.float64)
            if y.shape != ref.shape:
                res = {'error': 'shape %s, torch %s' % (y.shape, ref.shape)}
            else:
                res = {'rel_l2': float(np.linalg.norm(y - ref) / np.linalg.norm(ref)),
                       'max_abs': float(np.abs(y - ref).max())}
            print(json.dumps(dict(workload=wid, peer='torch', check='fftbloom auto vs torch float64',
                                  **res)))


if __name__ == '__main__':
    main()
