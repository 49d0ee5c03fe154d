#!/bin/sh
# fftbloom kernel's depths: a kernel written as PNG at 8 and 16 bits reads back (with OpenCV, as
# raw codes) as the float kernel scaled to a peak of 1, within a code of the sRGB encoding of
# each value; the default is the format's deepest (PNG 16); AVIF, WebP and JPEG are written; a
# depth the format does not write exits 2 naming those it does; float formats keep the values.
# Prints "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
FFTBLOOM="$BUILD/fftbloom"
if [ ! -x "$FFTBLOOM" ]; then
	echo "kernel: $FFTBLOOM not built"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
exec env FFTBLOOM="$FFTBLOOM" /usr/bin/python3 - <<'PYEOF'
import os, re, shutil, subprocess, tempfile
import numpy as np
import cv2

FFT = os.path.abspath(os.environ['FFTBLOOM'])
tmp = tempfile.mkdtemp(prefix='kernel_cli_')
passed = failed = 0


def ok(name, cond, detail=''):
    global passed, failed
    print(('ok   ' if cond else 'FAIL ') + name + (' ' + str(detail) if detail and not cond else ''))
    if cond:
        passed += 1
    else:
        failed += 1
    return cond


def kernel(out, *args):
    return subprocess.run([FFT, 'kernel', 'aperture:size=33', '-o', os.path.join(tmp, out)]
                          + list(args), capture_output=True, text=True, timeout=300)


def read_pfm(path):
    with open(path, 'rb') as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        a = np.frombuffer(f.read(), dtype='<f4' if scale < 0 else '>f4')
    c = 3 if kind == b'PF' else 1
    return a.reshape(h, w, c)[::-1].astype(np.float64)  # PFM rows run bottom to top


def read_png(path):
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if a.ndim == 2:
        return a[:, :, None].astype(np.float64)
    return a[:, :, ::-1].astype(np.float64)  # OpenCV's BGR to RGB


def srgb(v):
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * np.power(np.maximum(v, 0), 1 / 2.4) - 0.055)


def unsrgb(c):
    return np.where(c <= 0.04045, c / 12.92, np.power((c + 0.055) / 1.055, 2.4))


try:
    r = kernel('k.pfm')
    ok('float kernel written as PFM', r.returncode == 0 and 'scaled' not in r.stderr, r.stderr)
    ref = read_pfm(os.path.join(tmp, 'k.pfm'))
    peak = ref.max()
    print('kernel %dx%dx%d, peak %.6g' % (ref.shape[1], ref.shape[0], ref.shape[2], peak))
    want = np.clip(ref / peak, 0, 1)
    for bits in (8, 16):
        r = kernel('k%d.png' % bits, '--bits', str(bits))
        m = re.search(r'scaled by ([0-9.e+-]+)', r.stderr)
        ok('PNG at %d bits: written, saying it was scaled by 1/peak' % bits,
           r.returncode == 0 and m and abs(float(m.group(1)) * peak - 1) < 1e-4, r.stderr)
        png = read_png(os.path.join(tmp, 'k%d.png' % bits))
        top = 2 ** bits - 1
        codes = np.round(srgb(want) * top)
        dcode = np.abs(png - codes).max() if png.shape == want.shape else np.inf
        # linear light back: within the sRGB decode of half a code either side
        step = np.abs(unsrgb(np.minimum(srgb(want) + 0.5 / top, 1)) - want)
        dlin = np.abs(unsrgb(png / top) - want) if png.shape == want.shape else np.inf
        print('  %d bits: max code error %.3g, max linear error %.3g (bound %.3g)'
              % (bits, dcode, np.max(dlin), step.max()))
        ok('PNG at %d bits reads back as the kernel / peak within a code' % bits,
           dcode <= 1 and np.all(dlin <= step + 1e-7), (png.shape, want.shape, dcode))
    info = cv2.imread(os.path.join(tmp, 'k16.png'), cv2.IMREAD_UNCHANGED)
    r = kernel('kd.png')
    kd = cv2.imread(os.path.join(tmp, 'kd.png'), cv2.IMREAD_UNCHANGED)
    ok('PNG by default: 16 bits, the format\'s deepest', r.returncode == 0 and kd.dtype == np.uint16
       and np.array_equal(kd, info), (r.stderr, kd.dtype))
    for f in ('k.avif', 'k.webp', 'k.jpg'):
        r = kernel(f)
        ok('%s written (scaled, said)' % f, r.returncode == 0 and 'scaled' in r.stderr
           and os.path.getsize(os.path.join(tmp, f)) > 0, r.stderr)
    r = kernel('bad.png', '--bits', '12')
    ok('PNG at 12 bits: exit 2 naming 8 or 16', r.returncode == 2 and '8 or 16' in r.stderr
       and not os.path.exists(os.path.join(tmp, 'bad.png')), (r.returncode, r.stderr))
    r = kernel('bad.exr', '--bits', '8')
    ok('EXR at 8 bits: exit 2 naming 16 or 32', r.returncode == 2 and '16 or 32' in r.stderr,
       (r.returncode, r.stderr))
    r = kernel('k16.exr', '--bits', '16')
    ok('EXR at 16 bits (half): written unscaled', r.returncode == 0 and 'scaled' not in r.stderr,
       r.stderr)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print('SCRIPT: %d passed, %d failed' % (passed, failed))
raise SystemExit(1 if failed else 0)
PYEOF
