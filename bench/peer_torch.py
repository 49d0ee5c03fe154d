#!/usr/bin/env python3
"""PyTorch/cuFFT peer of fftbloom's fft and bloom suites, in the harness's "peers" suite
(bench/README.md), under the same workload IDs: torch.fft.fft2 (complex64) at the FFT sizes
(fft.2d.HxW.fwd, impl cufft); the bloom as cuFFT does it (4-channel float32 rfft2, times a
cached kernel spectrum, irfft2; impl cufft) at fftbloom's padded sizes (bloom.*.fp32) and at the
plain frame sizes, circular (bloom.1080p.frame.fp32, bloom.2160p.frame.fp32); and the device's
copy bandwidth (mem.copy.1gib: a 1 GiB device-to-device copy, bytes read + written; impl torch).
Median of CUDA-event timings after warm-up, three input sets rotated. Result lines on stdout.

usage: peer_torch.py [--list FILE] [--quick] [--runs N]
  --list FILE: `fftbloom bench --list` output ("ID VARIANT HxW" lines): the fft workloads' sizes
  and the bloom workloads' padded sizes come from it (default: this file's table, the sizes
  fft_conv_frame_size gave when it was written)."""
import sys

import torch

from benchline import Lines, nvidia_driver

# ID -> (rows, columns) of the transform: the fft suite's sizes and the bloom's padded sizes
FULL = {
    'fft.2d.1024x1024.fwd': (1024, 1024), 'fft.2d.1080x1920.fwd': (1080, 1920),
    'fft.2d.2048x2048.fwd': (2048, 2048), 'fft.2d.4096x4096.fwd': (4096, 4096),
    'fft.2d.1350x2187.fwd': (1350, 2187),
    'bloom.1080p.k256.fp32': (1280, 2048), 'bloom.1080p.full.fp32': (1792, 2880),
    'bloom.2160p.k512.fp32': (2560, 4096),
    'bloom.1080p.frame.fp32': (1080, 1920), 'bloom.2160p.frame.fp32': (2160, 3840),
}
QUICK = {
    'fft.2d.256x256.fwd': (256, 256), 'fft.2d.270x480.fwd': (270, 480),
    'fft.2d.512x512.fwd': (512, 512), 'bloom.270p.k64.fp32': (320, 512),
}


def timed(fn, inputs, runs, warmup=5):
    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(inputs[i % len(inputs)])
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2], times[0]


def workloads(args):
    """ID -> (h, w): the list file's fft workloads and fp32 colour bloom workloads (gray, fp16
    and the row workloads are fftbloom's own variants of the same transforms), or the table."""
    table = dict(QUICK if '--quick' in args else FULL)
    if '--list' in args:
        path = args[args.index('--list') + 1]
        listed = {}
        for line in open(path):
            parts = line.split()
            if len(parts) < 3 or parts[1] != 'default':
                continue
            wid, (h, w) = parts[0], (int(v) for v in parts[2].split('x'))
            if wid.startswith('fft.') or (wid.startswith('bloom.') and wid.endswith('.fp32')
                                          and '.gray.' not in wid and '.rows.' not in wid):
                listed[wid] = (h, w)
        # the circular frame sizes are not fftbloom workloads: keep the table's
        table = {k: v for k, v in table.items() if '.frame.' in k}
        table.update(listed)
    return table


def main():
    args = sys.argv[1:]
    runs = int(args[args.index('--runs') + 1]) if '--runs' in args else 50
    dev = torch.device('cuda')
    gpu = torch.cuda.get_device_name()
    drv = nvidia_driver()
    out = Lines('peers', gpu, 'NVIDIA %s, CUDA %s, torch %s' % (drv or '?', torch.version.cuda,
                                                                 torch.__version__))
    n = 1 << 28  # 1 GiB of float32
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    ms, mn = timed(lambda s: dst.copy_(s), [src], runs=20)
    out.emit('mem.copy.1gib', 'torch', 'default', {'ms': ms, 'gb_s': 2 * 4 * n / ms / 1e6},
             {'bytes': 2 * 4 * n, 'min_ms': mn, 'runs': 20})
    del src, dst
    for wid, (h, w) in sorted(workloads(args).items()):
        if wid.startswith('fft.'):
            xs = [torch.randn(h, w, dtype=torch.complex64, device=dev) for _ in range(3)]
            ms, mn = timed(lambda x: torch.fft.fft2(x), xs, runs)
            out.emit(wid, 'cufft', 'default', {'ms': ms, 'gb_s': 2 * 8 * h * w / ms / 1e6},
                     {'size': '%dx%d' % (h, w), 'min_ms': mn, 'runs': runs})
        else:  # rfft2 * K, irfft2, 4 channels, K cached
            imgs = [torch.rand(4, h, w, device=dev) for _ in range(3)]
            k = torch.fft.rfft2(torch.rand(4, h, w, device=dev))
            ms, mn = timed(lambda x: torch.fft.irfft2(torch.fft.rfft2(x) * k, s=(h, w)), imgs, runs)
            out.emit(wid, 'cufft', 'default', {'ms': ms},
                     {'padded': '%dx%d' % (w, h), 'channels': 4, 'min_ms': mn, 'runs': runs,
                      'circular': '.frame.' in wid})
            del imgs, k
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
