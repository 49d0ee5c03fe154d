"""What the codec interop scripts (test_image_interop.sh, test_tiff_interop.sh) share: the
fftbloom binary, a scratch folder, a seeded generator (its seed printed), running a program,
the sRGB formulas, one named check, a NaN-safe comparison with its measured error, and the
summary line "SCRIPT: N passed, N failed" with the exit status."""
import os, shutil, subprocess, sys, tempfile, time
import numpy as np

FFT = os.environ['FFTBLOOM']
T = tempfile.mkdtemp(prefix='interop.')
seed = int(time.time() * 1000) % (2**31)
print('random seed', seed)
rng = np.random.default_rng(seed)
counts = {'passed': 0, 'failed': 0}

def run(*args, text=True, **kw):
    """Runs a program; its output captured (text, or bytes with text=False); raises with its
    stderr when it fails."""
    r = subprocess.run(list(args), capture_output=True, text=text, **kw)
    if r.returncode != 0:
        err = r.stderr if text else r.stderr.decode(errors='replace')
        raise RuntimeError('%s failed (%d): %s' % (' '.join(args), r.returncode, err.strip()))
    return r

def srgb_to_linear(s):
    s = np.asarray(s, np.float64)
    return np.where(s <= 0.04045, s / 12.92, ((s + 0.055) / 1.055) ** 2.4)

def linear_to_srgb(l):
    l = np.clip(np.asarray(l, np.float64), 0, 1)
    return np.where(l <= 0.0031308, l * 12.92, 1.055 * l ** (1 / 2.4) - 0.055)

def check(name, fn):
    """Runs one case: fn returns a message (or None) or raises; counted either way."""
    try:
        msg = fn()
        print('ok   %s%s' % (name, (': ' + msg) if msg else ''))
        counts['passed'] += 1
    except Exception as e:
        print('FAIL %s: %s' % (name, e))
        counts['failed'] += 1

def close(got, want, atol, what, rtol=0):
    """Passes where |got - want| <= atol + rtol |want| everywhere (NaN fails); the shapes must
    match. Returns the measured error as a message."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        raise AssertionError('%s: shape %s, want %s' % (what, got.shape, want.shape))
    err = np.abs(got - want)
    bad = ~(err <= atol + rtol * np.abs(want))
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError('%s: %d samples off, first at %s: %r vs %r' %
                             (what, int(bad.sum()), i, got[i], want[i]))
    return 'max abs err %.3g (tolerance %.3g%s)' % (
        err.max(), atol, ' + %.3g relative' % rtol if rtol else '')

def finish():
    """Removes the scratch folder, prints the summary and exits (1 when a case failed)."""
    shutil.rmtree(T, ignore_errors=True)
    print('SCRIPT: %d passed, %d failed' % (counts['passed'], counts['failed']))
    sys.exit(1 if counts['failed'] else 0)
