"""The Python module fftbloom (python/fftbloom, over build/libfftbloom.so.0) against float64
references on random shapes, odd and prime sizes included: fftconvolve against
scipy.signal.fftconvolve in every mode, fft2/ifft2 against numpy.fft, conv2d and
conv_transpose2d against direct float64 sums (and Debian's CPU torch where it imports), convolve
against a direct sum, bloom against the CLI on the same file. rel_l2 = ||got - ref|| / ||ref||:
each case within WORST, their median within TYPICAL (NaN fails). One Context (engine auto: the
CPU engine without a GPU) for everything.
Run by test_python.sh; prints "SCRIPT: N passed, N failed"."""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.signal

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.environ.setdefault("FFTBLOOM_LIBRARY", os.path.join(BUILD, "libfftbloom.so.0"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import fftbloom  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the float64 sums below are the reference either way
    torch = None

TYPICAL, WORST = 1e-6, 1e-5
rng = np.random.default_rng(39)
passed = failed = 0
errors = {}


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))


def rel_l2(got, ref):
    ref = np.asarray(ref)
    got = np.asarray(got)
    if got.shape != ref.shape:
        return float("inf")
    n = np.linalg.norm(ref.astype(np.complex128).ravel())
    return float(np.linalg.norm((got.astype(np.complex128) - ref).ravel()) / (n if n else 1))


def compare(group, name, got, ref):
    e = rel_l2(got, ref)
    errors.setdefault(group, []).append(e)
    check("%s %s: rel_l2 %.2e (worst %.0e)" % (group, name, e, WORST), e < WORST)


ctx = fftbloom.Context()
print("engine: %s, renderer: %s" % (ctx.engine, ctx.renderer))
t0 = time.time()

# ---- fftconvolve: every mode, odd and prime sizes, axes ----
cases = [((1,), (1,)), ((17,), (5,)), ((31,), (31,)), ((7, 13), (3, 5)), ((12, 9), (4, 6)),
         ((23, 19), (11, 2)), ((5, 4), (9, 7)), ((1, 29), (1, 3)), ((33, 17), (16, 1))]
for s1, s2 in cases:
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    for mode in ("full", "same", "valid"):
        if mode == "valid" and not (all(x >= y for x, y in zip(s1, s2)) or
                                    all(y >= x for x, y in zip(s1, s2))):
            continue
        compare("fftconvolve", "%s * %s %s" % (s1, s2, mode),
                fftbloom.fftconvolve(a, b, mode, ctx=ctx), scipy.signal.fftconvolve(a, b, mode))
img, ker = rng.random((21, 14, 3)), rng.standard_normal((5, 3, 1))
for mode in ("full", "same", "valid"):
    compare("fftconvolve", "HxWx3 by channel axes=(0, 1) %s" % mode,
            fftbloom.fftconvolve(img, ker, mode, axes=(0, 1), ctx=ctx),
            scipy.signal.fftconvolve(img, ker, mode, axes=(0, 1)))
a, b = rng.standard_normal((3, 2, 11)), rng.standard_normal((3, 1, 4))
compare("fftconvolve", "(3, 2, 11) * (3, 1, 4) axes=-1 same",
        fftbloom.fftconvolve(a, b, "same", axes=-1, ctx=ctx),
        scipy.signal.fftconvolve(a, b, "same", axes=-1))
a = rng.standard_normal((9, 8)) + 1j * rng.standard_normal((9, 8))
b = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
compare("fftconvolve", "complex (9, 8) * (3, 4) full", fftbloom.fftconvolve(a, b, ctx=ctx),
        scipy.signal.fftconvolve(a, b))
got = fftbloom.fftconvolve(rng.random((6, 5)).astype(np.float32), rng.random((2, 2)), ctx=ctx)
check("fftconvolve returns float32", got.dtype == np.float32, str(got.dtype))
try:
    fftbloom.fftconvolve(rng.random((4, 5)), rng.random((5, 4)), "valid", ctx=ctx)
    check("fftconvolve valid refuses shapes neither of which is larger", False)
except ValueError:
    check("fftconvolve valid refuses shapes neither of which is larger", True)

# sizes past a C int are refused before the complex64 copy (a 2**31 signal would take 16 GiB)
for name, call in [("fft of 2**31 points", lambda: fftbloom.fft(
                        np.broadcast_to(np.float32(1), (1 << 31,)), ctx=ctx)),
                   ("fft n=2**32", lambda: fftbloom.fft(np.ones(4), n=1 << 32, ctx=ctx)),
                   ("fft2 s=(2**31, 1)", lambda: fftbloom.fft2(np.ones((2, 2)), s=(1 << 31, 1),
                                                                ctx=ctx))]:
    try:
        call()
        check("%s refused (ValueError)" % name, False)
    except ValueError:
        check("%s refused (ValueError)" % name, True)

# ---- fft2 / ifft2: numpy's conventions ----
for shape, kw in [((1, 1), {}), ((2, 3), {}), ((17, 31), {}), ((33, 16), {}),
                  ((3, 5, 7), {"axes": (0, 2)}), ((12, 10), {"s": (15, 7)}),
                  ((9, 11), {"norm": "ortho"}), ((8, 13), {"norm": "forward"}),
                  ((2, 9, 10), {"axes": (-1, -2)})]:
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    got = fftbloom.fft2(x.astype(np.complex64), ctx=ctx, **kw)
    compare("fft2", "%s %s" % (shape, kw), got, np.fft.fft2(x.astype(np.complex64)
                                                              .astype(np.complex128), **kw))
    check("fft2 %s is complex64" % (shape,), got.dtype == np.complex64, str(got.dtype))
    compare("ifft2", "%s %s" % (shape, kw), fftbloom.ifft2(x, ctx=ctx, **kw),
            np.fft.ifft2(x, **kw))
for shape, kw in [((1,), {}), ((37,), {}), ((6, 17), {}), ((5, 7, 9), {"axis": 1}),
                  ((4, 12), {"n": 15, "norm": "ortho"}), ((3, 64), {"n": 50, "norm": "forward"})]:
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    compare("fft", "%s %s" % (shape, kw), fftbloom.fft(x, ctx=ctx, **kw), np.fft.fft(x, **kw))
    compare("ifft", "%s %s" % (shape, kw), fftbloom.ifft(x, ctx=ctx, **kw), np.fft.ifft(x, **kw))
r = rng.random((19, 4)).astype(np.float32)
compare("fft2", "float32 input (19, 4)", fftbloom.fft2(r, ctx=ctx), np.fft.fft2(r.astype(np.float64)))


# ---- conv2d and conv_transpose2d: direct float64 sums ----
# on the context's engine (the CPU engine's OpenBLAS here), and on the other engine too
gctx = ctx
def ref_conv2d(x, w, b, stride, pad, dil, groups):
    (sh, sw), (ph, pw), (dh, dw) = stride, pad, dil
    bsz, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((bsz, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("bchw,oc->bohw", patch,
                                                         w[g * og:(g + 1) * og, :, i, j])
    return out + (0 if b is None else b[None, :, None, None])


def ref_conv_t(x, w, b, stride, pad, out_pad, dil, groups):
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, pad, out_pad, dil
    bsz, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = cin // groups
    fh, fw = (h - 1) * sh + dh * (kh - 1) + 1 + oph, (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    full = np.zeros((bsz, og * groups, fh, fw))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                full[:, g * og:(g + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh,
                     j * dw:j * dw + sw * (wd - 1) + 1:sw] += np.einsum(
                         "bchw,co->bohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, i, j])
    oh, ow = fh - 2 * ph, fw - 2 * pw
    return full[:, :, ph:ph + oh, pw:pw + ow] + (0 if b is None else b[None, :, None, None])


def pair(v):
    return (v, v) if np.isscalar(v) else tuple(v)


conv_cases = [  # input shape, (Cout, Cin/groups, kh, kw), stride, padding, dilation, groups, bias
    ((1, 3, 7, 7), (4, 3, 3, 3), 1, 1, 1, 1, True),
    ((2, 4, 13, 11), (6, 2, 5, 3), (2, 1), (2, 0), 1, 2, True),
    ((4, 2, 17, 9), (5, 2, 2, 4), 1, 0, (2, 1), 1, False),
    ((3, 6, 10, 12), (6, 1, 3, 3), 3, 1, 1, 6, True),
    ((5, 3, 19, 23), (2, 3, 7, 1), (1, 2), (3, 0), 1, 1, False),
    ((1, 1, 1, 1), (3, 1, 1, 1), 1, 0, 1, 1, True),
]
for xs, ws, st, pd, dl, gr, hb in conv_cases:
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[0]) if hb else None
    got = fftbloom.conv2d(x, w, b, stride=st, padding=pd, dilation=dl, groups=gr, ctx=gctx)
    name = "%s w%s stride %s padding %s dilation %s groups %d" % (xs, ws, st, pd, dl, gr)
    compare("conv2d", name, got, ref_conv2d(x, w, b, pair(st), pair(pd), pair(dl), gr))
    if torch is not None:
        t = F.conv2d(torch.tensor(x), torch.tensor(w), None if b is None else torch.tensor(b),
                     stride=st, padding=pd, dilation=dl, groups=gr).numpy()
        compare("conv2d", name + " (torch float64)", got, t)
x, w = rng.standard_normal((3, 8, 6)), rng.standard_normal((2, 3, 4, 3))
compare("conv2d", "3-D input, padding='same'", fftbloom.conv2d(x, w, padding="same", ctx=gctx),
        ref_conv2d(np.pad(x[None], ((0, 0), (0, 0), (1, 2), (1, 1))), w, None, (1, 1), (0, 0),
                   (1, 1), 1)[0])

convt_cases = [  # input, (Cin, Cout/groups, kh, kw), stride, padding, output_padding, dilation, groups, bias
    ((1, 3, 5, 5), (3, 2, 3, 3), 1, 0, 0, 1, 1, True),
    ((2, 4, 7, 6), (4, 3, 3, 3), 2, 1, 1, 1, 2, True),
    ((3, 2, 9, 4), (2, 5, 4, 2), (3, 2), (1, 0), (2, 1), 1, 1, False),
    ((1, 6, 5, 7), (6, 1, 3, 5), 2, 2, 0, (2, 1), 3, True),
    ((2, 1, 11, 13), (1, 2, 5, 5), 1, 2, 0, 1, 1, False),
]
for xs, ws, st, pd, op, dl, gr, hb in convt_cases:
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * gr) if hb else None
    got = fftbloom.conv_transpose2d(x, w, b, stride=st, padding=pd, output_padding=op,
                                    groups=gr, dilation=dl, ctx=gctx)
    name = "%s w%s stride %s padding %s output_padding %s dilation %s groups %d" % (
        xs, ws, st, pd, op, dl, gr)
    compare("conv_transpose2d", name, got,
            ref_conv_t(x, w, b, pair(st), pair(pd), pair(op), pair(dl), gr))
    if torch is not None:
        t = F.conv_transpose2d(torch.tensor(x), torch.tensor(w),
                               None if b is None else torch.tensor(b), stride=st, padding=pd,
                               output_padding=op, groups=gr, dilation=dl).numpy()
        compare("conv_transpose2d", name + " (torch float64)", got, t)
if torch is None:
    print("skip torch: python3-torch does not import; the float64 sums are the reference")

# ---- convolve (the CLI's, kernel centre) and bloom (against the CLI) ----
im = rng.random((23, 30, 3)) * 2
k = rng.random((5, 7))
cy, cx = 2, 3
full = np.stack([scipy.signal.convolve2d(im[..., ch], k) for ch in range(3)], -1)
compare("convolve", "23x30x3, 5x7 kernel, centre (3, 2)",
        fftbloom.convolve(im, k, method="fft", ctx=ctx), full[cy:cy + 23, cx:cx + 30])
compare("convolve", "23x30x3, 5x7 kernel, centre (0, 1), spatial",
        fftbloom.convolve(im, k, method="spatial", kernel_center=(0, 1), ctx=ctx),
        full[1:24, 0:30])

with tempfile.TemporaryDirectory() as d:
    src, out = os.path.join(d, "in.pfm"), os.path.join(d, "out.pfm")
    frame = (rng.random((40, 52, 3)) * 4).astype(np.float32)
    fftbloom.imwrite(src, frame)
    back = fftbloom.imread(src)
    check("imwrite/imread PFM round trip", back.shape == frame.shape and
          np.array_equal(back, frame), str(back.shape))
    args = dict(threshold=0.7, knee=0.3, intensity=2.5, kernel_preset="glare:streaks=6,size=31")
    got = fftbloom.bloom(frame, ctx=ctx, **args)
    cli = os.path.join(BUILD, "fftbloom")
    r = subprocess.run([cli, "bloom", src, "-o", out, "--quiet",
                        "--threshold", "0.7", "--knee", "0.3", "--intensity", "2.5",
                        "--kernel-preset", "glare:streaks=6,size=31"],
                       capture_output=True, text=True) if os.access(cli, os.X_OK) else None
    if r is None:
        check("%s is built" % cli, False)
    elif r.returncode:
        check("fftbloom bloom runs", False, r.stderr[-300:])
    else:
        compare("bloom", "40x52x3 glare preset against the CLI", got, fftbloom.imread(out))
    try:
        fftbloom.bloom(frame, ctx=ctx, threshold=-1)
        check("bloom refuses threshold -1 (FftbloomError)", False)
    except fftbloom.FftbloomError as e:
        check("bloom refuses threshold -1 (FftbloomError: %s)" % e, e.status == -1)

for group, es in sorted(errors.items()):
    med = float(np.median(es))
    check("%s: median rel_l2 %.2e over %d cases (typical %.0e), worst %.2e" % (
        group, med, len(es), TYPICAL, max(es)), med < TYPICAL)
print("%.1f s" % (time.time() - t0))
ctx.close()
print("SCRIPT: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
