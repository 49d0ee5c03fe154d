#!/bin/sh
# fftbloom bloom's batch mode as a render farm runs it: a 100-frame EXR sequence (64x48, random
# pixels, frame 50 corrupt) through one command; it exits 1 naming frame 50, writes the other 99
# (each within 1e-5 of a numpy float64 reference of its own input, and a sample byte-equal to
# the single-frame command), prints a line per frame off a terminal with the kernel spectrum
# cached after the first, a bar on one; --frames lists; Ctrl-C finishes the frames read and
# exits 130; convolve's batches on both methods match numpy. Also - for standard input and
# output (equal to file mode) and the bit depth rule (a 16-bit PNG stays 16-bit unless --bits
# or --format says otherwise, as over HTTP).
# Prints "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
FFTBLOOM="$BUILD/fftbloom"
if [ ! -x "$FFTBLOOM" ]; then
	echo "batch: $FFTBLOOM not built"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
exec env FFTBLOOM="$FFTBLOOM" /usr/bin/python3 - <<'PYEOF'
import os, pty, random, re, select, shutil, signal, struct, subprocess, sys, tempfile, time, zlib
import numpy as np
os.environ['OPENCV_IO_ENABLE_OPENEXR'] = '1'  # OpenCV reads and writes EXR only when asked
import cv2

FFT = os.path.abspath(os.environ['FFTBLOOM'])
tmp = tempfile.mkdtemp(prefix='batch_cli_')
rng = np.random.default_rng()
passed = failed = 0
T0 = time.time()


def ok(name, cond, detail=''):
    global passed, failed
    print(('ok   ' if cond else 'FAIL ') + name + (' ' + str(detail) if detail else ''))
    if cond:
        passed += 1
    else:
        failed += 1
    return cond


def run(*args, stdin=None, timeout=300):
    p = subprocess.run([FFT] + [str(a) for a in args], input=stdin, capture_output=True,
                       cwd=tmp, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors='replace')


def write_pfm(path, a):
    a = np.asarray(a, dtype='<f4')
    h, w = a.shape[:2]
    c = 1 if a.ndim == 2 else a.shape[2]
    with open(path, 'wb') as f:
        f.write(b'PF\n' if c == 3 else b'Pf\n')
        f.write(b'%d %d\n-1.0\n' % (w, h))
        f.write(np.ascontiguousarray(a[::-1]).tobytes())


def read_pfm(data):
    head = data.split(b'\n', 3)
    c = 3 if head[0] == b'PF' else 1
    w, h = map(int, head[1].split())
    dt = '<f4' if float(head[2]) < 0 else '>f4'
    a = np.frombuffer(head[3][: w * h * c * 4], dtype=dt)
    a = a.reshape(h, w, c) if c == 3 else a.reshape(h, w, 1)
    return a[::-1].astype(np.float64)


def read_exr(path):
    """An RGB EXR as float64, read by OpenCV (not the codec under test)."""
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if a is None:
        raise RuntimeError('OpenCV cannot read ' + path)
    return a[:, :, ::-1].astype(np.float64)


def fft_convolve(img, k):
    """Linear convolution (zero outside, centre (kw // 2, kh // 2)) of every channel, float64."""
    H, W = img.shape[:2]
    kh, kw = k.shape
    cy, cx = kh // 2, kw // 2
    s = (H + kh - 1, W + kw - 1)
    K = np.fft.rfft2(k, s)
    out = np.empty(img.shape)
    for c in range(img.shape[2]):
        full = np.fft.irfft2(np.fft.rfft2(img[:, :, c], s) * K, s)
        out[:, :, c] = full[cy:cy + H, cx:cx + W]
    return out


def png_info(path):
    """(bit depth, colour type) from a PNG's IHDR."""
    with open(path, 'rb') as f:
        b = f.read(33)
    return (b[24], b[25]) if b[:8] == b'\x89PNG\r\n\x1a\n' else (None, None)


def write_png16(path, a16):
    """A 16-bit RGB PNG written here (zlib, filter 0), independent of the codecs under test."""
    h, w, _ = a16.shape
    raw = b''.join(b'\x00' + a16[y].astype('>u2').tobytes() for y in range(h))
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 16, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))


# ---- the sequence: 100 frames of 64x48, random positive pixels, as 32-bit EXR (OpenCV's) ----
N, W, H = 100, 64, 48
os.makedirs(os.path.join(tmp, 'in'))
frames = {}
for i in range(1, N + 1):
    a = (rng.random((H, W, 3)) * 1.5 + 0.01).astype(np.float32)
    frames[i] = a.astype(np.float64)
    if not cv2.imwrite(os.path.join(tmp, 'in', 'shot.%04d.exr' % i), a[:, :, ::-1].copy()):
        ok('OpenCV writes frame %d as EXR' % i, False)
k = rng.random((7, 9)) + 0.05
write_pfm(os.path.join(tmp, 'k.pfm'), k)
with open(os.path.join(tmp, 'in', 'shot.0050.exr'), 'r+b') as f:  # corrupt: header kept, rest garbage
    f.seek(200)
    f.write(bytes(rng.integers(0, 256, 600, dtype=np.uint8)))
    f.truncate(800)
print('     made %d frames in %.1f s' % (N, time.time() - T0))

PARAMS = ['--kernel', 'k.pfm', '--threshold', '0', '--intensity', '0.5', '--bits', '32']
t = time.time()
rc, _, err = run('bloom', 'in/shot.####.exr', '-o', 'out/shot.####.exr', *PARAMS)
el = time.time() - t
print('     batch of %d frames: %.2f s (%.1f frames/s, one process)' % (N, el, N / el))
ok('batch with a corrupt frame exits 1', rc == 1, 'rc %d: %s' % (rc, err[-2000:]))
tail = err[err.find('frames failed:'):] if 'frames failed:' in err else ''
ok('the failure list names frame 50 and only it',
   'in/shot.0050.exr (frame 50; reading' in tail and tail.count('\n  ') == 1, tail or err[-1500:])
written = sorted(os.listdir(os.path.join(tmp, 'out')))
want = ['shot.%04d.exr' % i for i in range(1, N + 1) if i != 50]
ok('the other 99 frames are written, nothing else (no .part left)', written == want,
   set(written) ^ set(want))
lines = [l for l in err.splitlines() if re.match(r'bloom \[\d+/100\] in/shot\.\d{4}\.exr -> ', l)]
named = sorted(re.search(r'in/shot\.(\d{4})', l).group(1) for l in lines)
ok('off a terminal: one progress line per written frame', named == sorted(w[5:9] for w in want),
   '%d lines' % len(lines))
cached = sum('(cached)' in l for l in lines)
ok('the kernel spectrum is computed once, then cached (98 of 99 lines say so)', cached == 98,
   '%d cached' % cached)
ok('the summary line counts 99 of 100 and a rate', re.search(
   r'bloom: 99 of 100 frames written in [\d.]+ s \([\d.]+ frames/s\)', err) is not None)

# every frame against numpy: O = I + 0.5 * (I conv K) / sum(K) (threshold 0, a gray kernel)
worst_rel = worst_abs = 0.0
bad = []
for i in range(1, N + 1):
    if i == 50:
        continue
    got = read_exr(os.path.join(tmp, 'out', 'shot.%04d.exr' % i))
    ref = frames[i] + 0.5 * fft_convolve(frames[i], k) / k.sum()
    rel = float(np.sqrt(((got - ref) ** 2).sum() / (ref ** 2).sum()))
    mx = float(np.abs(got - ref).max())
    worst_rel, worst_abs = max(worst_rel, rel), max(worst_abs, mx)
    if not (rel < 1e-5 and mx < 1e-4):
        bad.append(i)
print('     99 frames vs numpy float64: worst rel L2 %.3g, worst max abs %.3g (tol 1e-5, 1e-4)' % (
    worst_rel, worst_abs))
ok('each written frame is its own input bloomed (numpy reference)', not bad, bad[:10])

# a sample byte-equal to the single-frame command
sample = sorted({1, 49, 51, 100} | set(random.sample([i for i in range(2, N) if i != 50], 4)))
diff = []
for i in sample:
    rc, _, e = run('bloom', 'in/shot.%04d.exr' % i, '-o', 'single.exr', *PARAMS)
    with open(os.path.join(tmp, 'single.exr'), 'rb') as a, \
            open(os.path.join(tmp, 'out', 'shot.%04d.exr' % i), 'rb') as b:
        if rc or a.read() != b.read():
            diff.append((i, rc, e[-300:]))
ok('frames %s equal the single-frame command byte for byte' % sample, not diff, diff)

# --frames: ranges, steps; into a directory; frame 50 not asked for
rc, _, err = run('bloom', 'in/shot.%04d.exr', '--frames', '1-10x3,98-100', '-o', 'sel/',
                 '--kernel', 'k.pfm', '--quiet')
got = sorted(os.listdir(os.path.join(tmp, 'sel'))) if os.path.isdir(os.path.join(tmp, 'sel')) else []
ok('--frames 1-10x3,98-100 writes those 7 frames, exit 0',
   rc == 0 and got == ['shot.%04d.exr' % i for i in (1, 4, 7, 10, 98, 99, 100)], (rc, got, err))
rc, _, err = run('bloom', 'in/shot.####.exr', '--frames', '1-3,0x2', '-o', 'x/', '--kernel', 'k.pfm')
ok('a malformed --frames is a usage error (2) with a message', rc == 2 and 'frames' in err, err)
rc, _, err = run('bloom', 'in/shot.####.exr', '--frames', '101-102', '-o', 'miss/', '--kernel',
                 'k.pfm', '--quiet')
ok('frames that do not exist fail by name (exit 1)', rc == 1 and 'shot.0101.exr' in err and
   'shot.0102.exr' in err, err)
rc, _, err = run('bloom', 'in/shot.####.exr', '-o', 'out.exr', '--kernel', 'k.pfm')
ok('a sequence into one file is refused (2)', rc == 2 and 'pattern' in err, err)
rc, _, err = run('bloom', 'nothing.####.exr', '-o', 'o/', '--kernel', 'k.pfm')
ok('a pattern matching no file fails (1)', rc == 1 and 'no file matches' in err, err)

# convolve runs batches too, on either method (the direct one's context kept across frames)
for method in ('spatial', 'fft'):
    rc, _, err = run('convolve', 'in/shot.####.exr', '--frames', '1-3', '-o', 'conv_%s/' % method,
                     '--kernel', 'k.pfm', '--method', method, '--bits', '32', '--quiet')
    errs = []
    for i in (1, 2, 3):
        p = os.path.join(tmp, 'conv_%s' % method, 'shot.%04d.exr' % i)
        ref = fft_convolve(frames[i], k)
        got = read_exr(p) if os.path.exists(p) else np.full(ref.shape, np.nan)
        errs.append(float(np.sqrt(((got - ref) ** 2).sum() / (ref ** 2).sum())))
    print('     convolve --method %s, frames 1-3 vs numpy: rel L2 %s' % (
        method, ', '.join('%.3g' % e for e in errs)))
    ok('convolve --method %s over frames 1-3 matches numpy (rel L2 < 1e-5)' % method,
       rc == 0 and all(e < 1e-5 for e in errs), (rc, err))

# several plain inputs into a directory
rc, _, err = run('bloom', 'in/shot.0003.exr', 'in/shot.0004.exr', '-o', 'two', '--kernel',
                 'k.pfm', '--bits', '32', '--threshold', '0', '--intensity', '0.5', '--quiet')
same = rc == 0 and all(open(os.path.join(tmp, 'two', 'shot.%04d.exr' % i), 'rb').read() ==
                       open(os.path.join(tmp, 'out', 'shot.%04d.exr' % i), 'rb').read()
                       for i in (3, 4))
ok('two inputs -o DIR: written under their names, equal to the sequence run', same, (rc, err))

# on a terminal: the bar, redrawn with \r, with frames/s and time left
m, s = pty.openpty()
p = subprocess.Popen([FFT, 'bloom', 'in/shot.####.exr', '--frames', '1-20', '-o', 'tty/',
                      '--kernel', 'k.pfm'], cwd=tmp, stdout=subprocess.DEVNULL, stderr=s)
os.close(s)
buf = b''
while True:
    r, _, _ = select.select([m], [], [], 60)
    if not r:
        break
    try:
        d = os.read(m, 4096)
    except OSError:
        break
    if not d:
        break
    buf += d
rc = p.wait()
os.close(m)
text = buf.decode(errors='replace')
ok('on a terminal: a bar redrawn with \\r (frames done, frames/s, time left), no per-frame lines',
   rc == 0 and text.count('\r') >= 2 and '20/20 frames' in text and 'frames/s' in text and
   ' left' in text and '-> tty/' not in text, repr(text[-400:]))

# Ctrl-C: stops reading, finishes the frames read, exits 130; no half-written file
rc, _, _ = run('kernel', 'glare', '-o', 'big.exr')
p = subprocess.Popen([FFT, 'bloom', 'in/shot.####.exr', '-o', 'int/', '--kernel', 'big.exr',
                      '--progress', 'lines', '--read-ahead', '2', '--io-threads', '1'], cwd=tmp,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
first = p.stderr.readline()
p.send_signal(signal.SIGINT)
rest = p.stderr.read().decode(errors='replace')
rc = p.wait()
got = os.listdir(os.path.join(tmp, 'int')) if os.path.isdir(os.path.join(tmp, 'int')) else []
ok('SIGINT: exit 130, frames read finished, the rest not run, no .part file',
   rc == 130 and 0 < len(got) < 99 and not any('.part' in g for g in got) and
   'interrupted' in rest, (rc, len(got), first, rest[-400:]))

# ---- standard input and output ----
rc, _, err = run('bloom', 'in/shot.0007.exr', '-o', 'file7.exr', *PARAMS, '--quiet')
with open(os.path.join(tmp, 'in', 'shot.0007.exr'), 'rb') as f:
    exr7 = f.read()
rc2, out, err2 = run('bloom', '-', '-o', '-', '--format', 'exr', *PARAMS, '--quiet', stdin=exr7)
ok('EXR: - -o - --format exr equals file mode byte for byte',
   rc == 0 and rc2 == 0 and out == open(os.path.join(tmp, 'file7.exr'), 'rb').read(),
   (rc, rc2, err, err2))
a8 = (rng.random((H, W, 3)) * 255).astype(np.uint8)
cv2.imwrite(os.path.join(tmp, 'p8.png'), a8)
rc, _, err = run('bloom', 'p8.png', '-o', 'p8out.png', '--kernel', 'k.pfm', '--quiet')
with open(os.path.join(tmp, 'p8.png'), 'rb') as f:
    rc2, out, err2 = run('bloom', '-', '-o', '-', '--format', 'png', '--kernel', 'k.pfm',
                         stdin=f.read())
ok('PNG: - -o - --format png equals file mode (format sniffed from the bytes)',
   rc == 0 and rc2 == 0 and out == open(os.path.join(tmp, 'p8out.png'), 'rb').read(),
   (rc, rc2, err, err2))
ok('... and the summary goes to stderr, not into the image', out[:4] == b'\x89PNG' and
   'bloom 64x48:' in err2, err2)
rc, out, err = run('bloom', '-', '-o', '-', '--kernel', 'k.pfm', stdin=exr7)
ok('-o - without --format: exit 2, nothing on stdout', rc == 2 and not out and '--format' in err,
   err)
rc, _, err = run('bloom', 'p8.png', '-o', 'x.png', '--format', 'exr', '--kernel', 'k.pfm')
ok('--format disagreeing with the extension: exit 2', rc == 2 and 'disagrees' in err, err)
rc, _, err = run('bloom', 'p8.png', '-o', 'agree.png', '--format', 'png', '--kernel', 'k.pfm',
                 '--quiet')
ok('--format agreeing with the extension is accepted', rc == 0, err)
rc, _, err = run('bloom', '-', '-o', '-', '--format', 'png', '--kernel', 'k.pfm', stdin=b'not an image')
ok('garbage on stdin: exit 1 naming standard input', rc == 1 and 'standard input' in err, err)

# ---- bit depth: the HTTP API's rule ----
a16 = (rng.random((H, W, 3)) * 65535).astype(np.uint16)
write_png16(os.path.join(tmp, 'p16.png'), a16)
rc, _, err = run('bloom', 'p16.png', '-o', 'p16out.png', '--kernel', 'k.pfm', '--quiet')
ok('16-bit PNG in, .png out: 16-bit', rc == 0 and png_info(os.path.join(tmp, 'p16out.png'))[0] == 16,
   (rc, err, png_info(os.path.join(tmp, 'p16out.png'))))
if rc == 0:
    px = cv2.imread(os.path.join(tmp, 'p16out.png'), cv2.IMREAD_UNCHANGED)
    frac = float(np.mean(px % 257 != 0)) if px is not None and px.dtype == np.uint16 else 0.0
    ok('... with 16-bit precision (codes not 8-bit ones scaled: %.0f%% off the x257 grid)' %
       (100 * frac), frac > 0.5)
rc, _, err = run('bloom', 'p16.png', '-o', 'p16b8.png', '--kernel', 'k.pfm', '--bits', '8', '--quiet')
ok('--bits 8 makes it 8-bit', rc == 0 and png_info(os.path.join(tmp, 'p16b8.png'))[0] == 8, err)
ok('8-bit PNG in, .png out: 8-bit', png_info(os.path.join(tmp, 'p8out.png'))[0] == 8)
rc, _, err = run('bloom', 'in/shot.0001.exr', '-o', 'e.png', '--kernel', 'k.pfm', '--quiet')
ok('EXR in, .png out: 8-bit', rc == 0 and png_info(os.path.join(tmp, 'e.png'))[0] == 8, err)
with open(os.path.join(tmp, 'p16.png'), 'rb') as f:
    p16 = f.read()
rc, out, err = run('bloom', '-', '-o', '-', '--format', 'png16', '--kernel', 'k.pfm', '--quiet',
                   stdin=p16)
ok('--format png16 to stdout: 16-bit, equal to the .png file', rc == 0 and out[24] == 16 and
   out == open(os.path.join(tmp, 'p16out.png'), 'rb').read(), err)
rc, out, err = run('bloom', '-', '-o', '-', '--format', 'png', '--kernel', 'k.pfm', '--quiet',
                   stdin=p16)
ok('--format png: 8-bit, as format=png over HTTP', rc == 0 and out[24] == 8, err)

# ---- output folders: one output's must exist; a batch's is made, one level ----
rc, out, err = run('bloom', 'p16.png', '-o', 'nosuch/deeper/x.png', '--kernel', 'k.pfm', '--quiet')
ok('-o into a missing folder: exit 1 naming it, no folder made', rc == 1 and
   'the folder nosuch/deeper/ does not exist' in err and
   not os.path.exists(os.path.join(tmp, 'nosuch')), (rc, err))
rc, out, err = run('bloom', 'p16.png', 'p8.png', '-o', 'nosuch/deeper/', '--kernel', 'k.pfm',
                   '--quiet')
ok('several frames into a folder whose parent is missing: exit 1, nothing made', rc == 1 and
   'cannot make the output folder nosuch/deeper/' in err and
   not os.path.exists(os.path.join(tmp, 'nosuch')), (rc, err))
rc, out, err = run('bloom', 'p16.png', 'p8.png', '-o', 'newdir/', '--kernel', 'k.pfm', '--quiet')
ok('several frames into a missing folder: made, both written', rc == 0 and
   sorted(os.listdir(os.path.join(tmp, 'newdir'))) == ['p16.png', 'p8.png'], (rc, err))

shutil.rmtree(tmp, ignore_errors=True)
print('     %.1f s in all' % (time.time() - T0))
print('SCRIPT: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
PYEOF
