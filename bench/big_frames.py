"""Big frames through `fftbloom convolve` and `fftbloom bloom`: each size untiled (when the
context's limits allow it: variant "default", the engine's own choice, tiled only past the
context's buffer limits) and in tiles forced by --gpu-frame-memory (variant "tiled-<budget>"),
every answer against an independent float64 FFT convolution (PyTorch on the GPU when it has CUDA,
else numpy), and forced tiles against the default. One result line (bench/benchline.py) per
run: suite "big", id big.<op>.<W>x<H>.k<K>, metrics wall_s (the process: PFM read, GPU, PFM
write), gpu_ms (the CLI's summary), rel_l2 and max_abs against the reference, rel_l2_vs_default
for forced tiles; detail: the tiles and padded size the CLI reports.

usage: python3 bench/big_frames.py [--bin DIR] [--work DIR] [--sizes 7680x4320,16384x16384]
                                   [--kernel 129] [--budgets 256M,1G] [--ops convolve,bloom]
The frames are PFM (linear float, RGB): 16384x16384 is 3 GiB a file; --work needs room for
four of them. Exit status 1 when an answer is off by more than the tolerance (rel_l2 1e-5)."""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchline  # noqa: E402

TOL = 1e-5


def write_pfm(path, a):
    """a: HxW (grey) or HxWx3 float32, top row first; PFM stores the bottom row first."""
    h, w = a.shape[:2]
    with open(path, 'wb') as f:
        f.write(b'%s\n%d %d\n-1.0\n' % (b'PF' if a.ndim == 3 else b'Pf', w, h))
        np.ascontiguousarray(a[::-1], dtype='<f4').tofile(f)


def read_pfm(path):
    with open(path, 'rb') as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        a = np.fromfile(f, dtype='<f4' if scale < 0 else '>f4')
    a = a.reshape((h, w, 3) if kind == b'PF' else (h, w))
    return a[::-1]


def frame(h, w, rng):
    """A smooth picture with fine noise and a few bright spots, linear RGB."""
    y = np.arange(h, dtype=np.float32)[:, None]
    x = np.arange(w, dtype=np.float32)[None, :]
    img = np.empty((h, w, 3), np.float32)
    for c in range(3):
        img[:, :, c] = 0.5 + 0.4 * np.sin(x / 97 + c) * np.cos(y / 131 - c)
    img += rng.normal(0, 0.05, img.shape).astype(np.float32)
    for _ in range(64):
        cy, cx = rng.integers(0, h - 8), rng.integers(0, w - 8)
        img[cy:cy + 8, cx:cx + 8] += 20
    return np.clip(img, 0, None)


def reference(img, k):
    """Linear convolution, zero outside, kernel centre (kw // 2, kh // 2), float64."""
    h, w = img.shape[:2]
    kh, kw = k.shape
    cy, cx = kh // 2, kw // 2
    s = (h + kh - 1, w + kw - 1)
    out = np.empty(img.shape, np.float32)
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
        K = torch.fft.rfft2(torch.from_numpy(k.astype(np.float64)).cuda(), s)
        for c in range(img.shape[2]):
            x = torch.from_numpy(np.ascontiguousarray(img[:, :, c], np.float64)).cuda()
            full = torch.fft.irfft2(torch.fft.rfft2(x, s) * K, s)
            out[:, :, c] = full[cy:cy + h, cx:cx + w].float().cpu().numpy()
            del x, full
        del K
        torch.cuda.empty_cache()
        how = 'torch float64 (CUDA)'
    except ImportError:
        K = np.fft.rfft2(k.astype(np.float64), s)
        for c in range(img.shape[2]):
            full = np.fft.irfft2(np.fft.rfft2(img[:, :, c].astype(np.float64), s) * K, s)
            out[:, :, c] = full[cy:cy + h, cx:cx + w]
        how = 'numpy float64'
    return out, how


def errors(got, ref):
    d = got.astype(np.float64) - ref
    den = max(float((ref.astype(np.float64) ** 2).sum()), 1e-30)
    return float(np.sqrt((d ** 2).sum() / den)), float(np.abs(d).max())


def parse_size(s):
    if s.lower().endswith('g'):
        return int(float(s[:-1]) * (1 << 30))
    if s.lower().endswith('m'):
        return int(float(s[:-1]) * (1 << 20))
    return int(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', default=os.environ.get('BENCH_BIN', 'build'))
    ap.add_argument('--work', default='/tmp/fftbloom-big')
    ap.add_argument('--sizes', default='7680x4320,16384x16384')
    ap.add_argument('--kernel', type=int, default=129)
    ap.add_argument('--budgets', default='256M,1G')
    ap.add_argument('--ops', default='convolve,bloom')
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    cli = os.path.join(a.bin, 'fftbloom')
    inf = subprocess.run([cli, 'info'], capture_output=True, text=True)
    gpu = re.search(r'"renderer":\s*"([^"]*)"', inf.stdout)
    drv = re.search(r'"version":\s*"([^"]*)"', inf.stdout)
    lines = benchline.Lines('big', gpu.group(1) if gpu else 'unknown', drv.group(1) if drv else '')
    rng = np.random.default_rng(5)
    kk = a.kernel
    yy, xx = np.mgrid[0:kk, 0:kk] - kk // 2
    k = (np.exp(-(xx ** 2 + yy ** 2) / (2 * (kk / 8) ** 2)) + 0.01 * rng.random((kk, kk)))
    k = k.astype(np.float32)
    kpath = os.path.join(a.work, 'k.pfm')
    write_pfm(kpath, k)
    failed = 0
    for size in a.sizes.split(','):
        w, h = map(int, size.split('x'))
        t0 = time.time()
        img = frame(h, w, rng)
        ipath = os.path.join(a.work, 'in.pfm')
        write_pfm(ipath, img)
        conv, how = reference(img, k)
        print('big_frames: %dx%d made and referenced (%s) in %.1f s' % (w, h, how,
              time.time() - t0), file=sys.stderr, flush=True)
        for op in a.ops.split(','):
            ref = conv if op == 'convolve' else img + 0.5 * conv / float(k.astype(np.float64).sum())
            first = None
            for budget in ['default'] + a.budgets.split(','):
                opath = os.path.join(a.work, 'out.pfm')
                cmd = [cli, op, ipath, '--kernel', kpath, '-o', opath]
                cmd += ['--method', 'fft'] if op == 'convolve' else ['--threshold', '0',
                                                                     '--intensity', '0.5']
                if budget != 'default':
                    cmd += ['--gpu-frame-memory', str(parse_size(budget))]
                if os.path.exists(opath):
                    os.unlink(opath)
                t0 = time.time()
                r = subprocess.run(cmd, capture_output=True, text=True)
                wall = time.time() - t0
                summary = r.stderr.strip().split('\n')[-1] if r.stderr.strip() else ''
                print('big_frames: %s %s %s: rc %d, %.1f s: %s' % (op, size, budget, r.returncode,
                      wall, summary), file=sys.stderr, flush=True)
                wid = 'big.%s.%dx%d.k%d' % (op, w, h, kk)
                variant = budget if budget == 'default' else 'tiled-' + budget
                if r.returncode != 0:
                    lines.emit(wid, 'fftbloom', variant, {'wall_s': wall},
                               {'error': r.stderr.strip()[-400:], 'command': ' '.join(cmd)})
                    failed += 1
                    continue
                got = read_pfm(opath)
                rel, mx = errors(got, ref)
                gms = re.search(r'GPU ([0-9.]+) ms', summary)
                tiles = re.search(r'in (\d+)x(\d+) tiles', summary)
                padded = re.search(r'padded (\d+x\d+)', summary)
                m = {'wall_s': wall, 'gpu_ms': float(gms.group(1)) if gms else None,
                     'rel_l2': rel, 'max_abs': mx}
                if first is not None:
                    m['rel_l2_vs_default'] = errors(got, first)[0]
                else:
                    first = got.astype(np.float64)
                lines.emit(wid, 'fftbloom', variant, m,
                           {'tiles': '%sx%s' % tiles.groups() if tiles else '1x1',
                            'padded': padded.group(1) if padded else '', 'reference': how,
                            'summary': summary, 'tolerance_rel_l2': TOL})
                if not rel <= TOL:
                    failed += 1
                del got
            first = None
        del img, conv
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
