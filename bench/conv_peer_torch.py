#!/usr/bin/env python3
"""PyTorch peer of the conv suite (bench/conv_bench.sh), on the inputs it wrote, in the
harness's "peers" suite: torch.nn.functional.conv2d (cuDNN, float32 with TF32 off, then on:
impl cudnn, variants fp32 and tf32) and conv_transpose2d, timed with CUDA events (median of RUNS
after warm-up), under conv_bench.sh's workload IDs; and, where conv_bench.sh left fftbloom's
output (out_ID.npy), its relative L2 error and max abs error against PyTorch's float64 result
(impl fftbloom, variant auto-vs-float64). Result lines on stdout.

usage: conv_peer_torch.py DIR
       conv_peer_torch.py --ids DIR conv|image5|image15|deconv4|deconv3   (a workload's ID, from
       the shapes of its inputs in DIR; no GPU, no torch)"""
import os
import sys

import numpy as np

RUNS = int(os.environ.get('RUNS', '50'))


def shape(d, name):
    return np.load(os.path.join(d, name), mmap_mode='r').shape


def size_name(h, w):
    """16:9 images by their height (1080p), others as WxH."""
    return '%dp' % h if w * 9 == h * 16 else '%dx%d' % (w, h)


def ids(d):
    """Each workload's ID from its inputs' shapes (quick and full shapes get their own)."""
    b, c, s, _ = shape(d, 'conv_x.npy')
    k = shape(d, 'conv_w.npy')[2]
    out = {'conv': 'conv.conv2d_b%d_c%d_k%d_%d' % (b, c, k, s)}
    _, _, h, w = shape(d, 'image_x.npy')
    for k in (5, 15):
        out['image%d' % k] = 'conv.image_k%d_%s' % (k, size_name(h, w))
    for k in (4, 3):
        _, ci, s, _ = shape(d, 'deconv_x_k%d.npy' % k)
        co = shape(d, 'deconv_w_k%d.npy' % k)[1]
        out['deconv%d' % k] = 'conv.deconv_c%dto%d_k%ds2_%d' % (ci, co, k, s)
    return out


def timed(torch, fn, runs=RUNS, warmup=5):
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
    if sys.argv[1] == '--ids':
        print(ids(sys.argv[2])[sys.argv[3]])
        return
    import torch
    import torch.nn.functional as F
    from benchline import Lines, nvidia_driver
    d = sys.argv[1]
    dev = torch.device('cuda')
    load = lambda name: torch.from_numpy(np.load(os.path.join(d, name))).to(dev)
    out = Lines('peers', torch.cuda.get_device_name(),
                'NVIDIA %s, CUDA %s, cuDNN %s, torch %s' % (nvidia_driver() or '?', torch.version.cuda,
                                                           torch.backends.cudnn.version(),
                                                           torch.__version__))
    torch.backends.cudnn.benchmark = True
    wid = ids(d)
    work = [(wid['conv'], 'conv', 'conv_x.npy', 'conv_w.npy', dict(padding=1))]
    for k in (5, 15):
        work.append((wid['image%d' % k], 'conv', 'image_x.npy', 'image_w%d.npy' % k,
                     dict(padding=k // 2)))
    work.append((wid['deconv4'], 'deconv', 'deconv_x_k4.npy', 'deconv_w_k4.npy',
                 dict(stride=2, padding=1)))
    work.append((wid['deconv3'], 'deconv', 'deconv_x_k3.npy', 'deconv_w_k3.npy',
                 dict(stride=2, padding=1, output_padding=1)))
    for w_id, kind, xn, wn, kw in work:
        x, w = load(xn), load(wn)
        fn = F.conv2d if kind == 'conv' else F.conv_transpose2d
        for tf32 in (False, True):
            torch.backends.cudnn.allow_tf32 = tf32
            ms = timed(torch, lambda: fn(x, w, **kw))
            out.emit(w_id, 'cudnn', 'tf32' if tf32 else 'fp32', {'ms': ms},
                     {'op': fn.__name__, 'input': list(x.shape), 'weight': list(w.shape),
                      'params': kw, 'runs': RUNS})
        torch.backends.cudnn.allow_tf32 = False
        path = os.path.join(d, 'out_%s.npy' % w_id)
        if os.path.exists(path):
            ref = fn(x.double(), w.double(), **kw).cpu().numpy()
            y = np.load(path).astype(np.float64)
            if y.shape != ref.shape:
                metrics, detail = {'rel_l2': None}, {'error': 'shape %s, torch %s' % (y.shape, ref.shape)}
            else:
                metrics = {'rel_l2': float(np.linalg.norm(y - ref) / np.linalg.norm(ref)),
                           'max_abs': float(np.abs(y - ref).max())}
                detail = {'check': 'fftbloom auto (out_%s.npy) vs torch float64' % w_id}
            out.emit(w_id, 'fftbloom', 'auto-vs-float64', metrics, detail)


if __name__ == '__main__':
    main()
