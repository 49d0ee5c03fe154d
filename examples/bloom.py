"""The Python module in a few lines: scipy-style convolution, numpy-style FFT and a bloom on the
GPU (or llvmpipe), with one Context kept for all of them. Run: python3 bloom.py [OUT.exr]"""
import sys

import numpy as np

import fftbloom

with fftbloom.Context() as ctx:
    rng = np.random.default_rng(1)
    a, k = rng.random((100, 120)), rng.random((9, 9))
    y = fftbloom.fftconvolve(a, k, mode="same", ctx=ctx)  # scipy.signal.fftconvolve's
    f = fftbloom.fft2(a, ctx=ctx)                           # numpy.fft.fft2's, complex64
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    z = fftbloom.conv2d(x, w, stride=2, padding=1, ctx=ctx)  # torch.nn.functional.conv2d's
    frame = np.zeros((48, 64, 3), np.float32)
    frame[20, 30] = 50.0  # one bright dot
    out = fftbloom.bloom(frame, kernel_preset="glare:streaks=6,size=31", threshold=0.5,
                         intensity=2, ctx=ctx)
    fftbloom.imwrite(sys.argv[1] if len(sys.argv) > 1 else "bloom.exr", out)
    print("%s: fftconvolve %s, fft2 %s %s, conv2d %s, bloom %s" % (
        ctx.renderer, y.shape, f.shape, f.dtype, z.shape, out.shape))
