#!/bin/sh
# fftbloom conv2d and conv2d-transpose as a new user runs them: numpy writes the NPY inputs
# (3-D and 4-D, float32 and float64, non-square kernels, bias, groups, dilation, TF padding),
# the CLI computes, and a numpy reference in float64 (written here, independently of the engine)
# checks the answers: relative L2 <= 1e-5 at float32, looser at the lower precision levels;
# wrong shapes and options exit 2 with a message, a missing file 1; --repeat prints a JSON line.
# Prints "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (the GLES shaders on llvmpipe); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
FFTBLOOM="$BUILD/fftbloom"
if [ ! -x "$FFTBLOOM" ]; then
	echo "conv cli: $FFTBLOOM not built"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
exec env FFTBLOOM="$FFTBLOOM" /usr/bin/python3 - <<'PYEOF'
import json, os, subprocess, sys, tempfile
import numpy as np

FFT = os.environ['FFTBLOOM']
tmp = tempfile.mkdtemp(prefix='conv_cli_')
rng = np.random.default_rng()
passed = failed = 0


def ok(name, cond, detail=''):
    global passed, failed
    print(('ok   ' if cond else 'FAIL ') + name + (' ' + detail if detail else ''))
    if cond:
        passed += 1
    else:
        failed += 1


def pair(v):
    return (v, v) if isinstance(v, int) else v


def conv2d_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d in float64: cross-correlation, tap by tap."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    x = np.asarray(x, np.float64)
    squeeze = x.ndim == 3
    if squeeze:
        x = x[None]
    B, C, H, W = x.shape
    O, cpg, kh, kw = w.shape
    xp = np.zeros((B, C, H + 2 * ph, W + 2 * pw))
    xp[:, :, ph:ph + H, pw:pw + W] = x
    oh = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((B, O, oh, ow))
    opg = O // groups
    for g in range(groups):
        xs = xp[:, g * cpg:(g + 1) * cpg]
        wg = np.asarray(w[g * opg:(g + 1) * opg], np.float64)
        for j in range(kh):
            for i in range(kw):
                patch = xs[:, :, j * dh: j * dh + (oh - 1) * sh + 1: sh, i * dw: i * dw + (ow - 1) * sw + 1: sw]
                y[:, g * opg:(g + 1) * opg] += np.einsum('bchw,oc->bohw', patch, wg[:, :, j, i])
    if b is not None:
        y += np.asarray(b, np.float64)[None, :, None, None]
    return y[0] if squeeze else y


def deconv_ref(x, w, b=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
               out=None, pad_top=None):
    """torch.nn.functional.conv_transpose2d in float64: every input pixel's patch scattered,
    then cropped; with out and pad_top (TF), that crop instead."""
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = (pair(stride), pair(padding),
                                                pair(output_padding), pair(dilation))
    x = np.asarray(x, np.float64)
    squeeze = x.ndim == 3
    if squeeze:
        x = x[None]
    B, C, H, W = x.shape
    _, opg, kh, kw = w.shape
    cpg = C // groups
    fh, fw = (H - 1) * sh + dh * (kh - 1) + 1, (W - 1) * sw + dw * (kw - 1) + 1
    full = np.zeros((B, opg * groups, fh + 64, fw + 64))
    for g in range(groups):
        xg = x[:, g * cpg:(g + 1) * cpg]
        wg = np.asarray(w[g * cpg:(g + 1) * cpg], np.float64)
        for j in range(kh):
            for i in range(kw):
                full[:, g * opg:(g + 1) * opg, j * dh: j * dh + (H - 1) * sh + 1: sh,
                     i * dw: i * dw + (W - 1) * sw + 1: sw] += np.einsum('bchw,co->bohw', xg, wg[:, :, j, i])
    if out is None:
        oh, ow = fh - 2 * ph + oph, fw - 2 * pw + opw
        top, left = ph, pw
    else:
        (oh, ow), (top, left) = out, pad_top
    y = full[:, :, top:top + oh, left:left + ow]
    if b is not None:
        y = y + np.asarray(b, np.float64)[None, :, None, None]
    return y[0] if squeeze else y


def save(name, a):
    p = os.path.join(tmp, name)
    np.save(p, a)
    return p


def run(args):
    r = subprocess.run([FFT] + args, capture_output=True, text=True)
    return r.returncode, r.stderr


def check(name, cmd, args, ref, tol=1e-5):
    out = os.path.join(tmp, 'out.npy')
    if os.path.exists(out):
        os.remove(out)
    rc, err = run([cmd] + args + ['-o', out])
    if rc != 0:
        ok(name, False, 'exit %d: %s' % (rc, err.strip()))
        return
    y = np.load(out)
    if y.shape != ref.shape or y.dtype != np.float32:
        ok(name, False, 'shape %s %s, want %s float32' % (y.shape, y.dtype, ref.shape))
        return
    rel = np.linalg.norm(y - ref) / np.linalg.norm(ref)
    mx = np.abs(y - ref).max()
    ok(name, rel <= tol, 'rel_l2 %.3e max_abs %.3e (tol %.0e)' % (rel, mx, tol))


# ---- conv2d ----
x3 = rng.uniform(-1, 1, (3, 11, 13)).astype(np.float32)        # a 3-D input: batch 1
w35 = rng.uniform(-1, 1, (4, 3, 3, 5)).astype(np.float32)      # non-square kernel
b4 = rng.uniform(-1, 1, 4).astype(np.float32)
px, pw_, pb = save('x3.npy', x3), save('w35.npy', w35), save('b4.npy', b4)
check('conv2d 3-D input, 3x5 kernel, bias, padding 1,2', 'conv2d',
      ['--input', px, '--weight', pw_, '--bias', pb, '--padding', '1,2'],
      conv2d_ref(x3, w35, b4, padding=(1, 2)))
x4 = rng.uniform(-1, 1, (4, 3, 12, 10))                          # float64 input
px4 = save('x4.npy', x4)
for alg in ['auto', 'batch4', 'interp', 'planes4', 'shared', 'gemm']:
    check('conv2d B=4 float64, stride 2, padding 1, %s' % alg, 'conv2d',
          ['--input', px4, '--weight', pw_, '--stride', '2', '--padding', '1', '--algorithm', alg],
          conv2d_ref(x4, w35, stride=2, padding=1))
w7 = rng.uniform(-0.3, 0.3, (6, 2, 7, 3)).astype(np.float32)
x5 = rng.uniform(-1, 1, (3, 4, 15, 9)).astype(np.float32)
check('conv2d groups 2, dilation 2,1, stride 1,2, 7x3', 'conv2d',
      ['--input', save('x5.npy', x5), '--weight', save('w7.npy', w7), '--groups', '2',
       '--dilation', '2,1', '--stride', '1,2', '--padding', '3'],
      conv2d_ref(x5, w7, stride=(1, 2), padding=3, dilation=(2, 1), groups=2))
w1 = rng.uniform(-1, 1, (2, 3, 1, 1)).astype(np.float32)
check('conv2d 1x1 kernel', 'conv2d', ['--input', px, '--weight', save('w1.npy', w1)],
      conv2d_ref(x3, w1))
ws = (rng.uniform(-1, 1, (4, 3, 3, 3)) / 6).astype(np.float32)
pws = save('ws.npy', ws)
for prec, tol in [(2, 5e-3), (1, 4e-2), (0, 5e-2)]:
    check('conv2d precision %d' % prec, 'conv2d',
          ['--input', px4, '--weight', pws, '--padding', '1', '--precision', str(prec)],
          conv2d_ref(x4, ws, padding=1), tol)
for prec, tol in [(3, 1e-5), (2, 5e-3)]:  # Winograd F(4x4, 3x3): 3x3, stride 1
    check('conv2d winograd, bias, precision %d' % prec, 'conv2d',
          ['--input', px4, '--weight', pws, '--bias', pb, '--padding', '1', '--algorithm',
           'winograd', '--precision', str(prec)], conv2d_ref(x4, ws, b4, padding=1), tol)
rc, err = run(['conv2d', '--input', px4, '--weight', pws, '-o', os.path.join(tmp, 'r.npy'),
               '--repeat', '3'])
try:
    line = json.loads(err.strip().splitlines()[-1])
    ok('conv2d --repeat prints a JSON line', rc == 0 and line['op'] == 'conv2d' and
       line['repeat'] == 3 and line['gpu_ms'] >= 0, 'gpu_ms %.3f (%s)' % (line['gpu_ms'], line['algorithm']))
except (ValueError, IndexError, KeyError) as e:
    ok('conv2d --repeat prints a JSON line', False, repr(err))

# ---- conv2d-transpose ----
xd = rng.uniform(-1, 1, (4, 9, 7)).astype(np.float32)           # 3-D
wd = rng.uniform(-1, 1, (4, 3, 4, 4)).astype(np.float32)        # (in, out, k, k)
bd = rng.uniform(-1, 1, 3).astype(np.float32)
pxd, pwd, pbd = save('xd.npy', xd), save('wd.npy', wd), save('bd.npy', bd)
for m in ['auto', 'zero-insert', 'overlap-add', 'subkernel']:
    check('conv2d-transpose k4 s2 p1 bias, 3-D, %s' % m, 'conv2d-transpose',
          ['--input', pxd, '--weight', pwd, '--bias', pbd, '--stride', '2', '--padding', '1',
           '--method', m], deconv_ref(xd, wd, bd, stride=2, padding=1))
xg = rng.uniform(-1, 1, (2, 4, 6, 5))
wg = rng.uniform(-1, 1, (4, 2, 3, 2)).astype(np.float32)
for m in ['zero-insert', 'overlap-add', 'subkernel']:
    check('conv2d-transpose groups 2, stride 2,3, op 1,2, dilation 2, %s' % m, 'conv2d-transpose',
          ['--input', save('xg.npy', xg), '--weight', save('wg.npy', wg), '--groups', '2',
           '--stride', '2,3', '--output-padding', '1,2', '--dilation', '2', '--padding', '1,0',
           '--method', m],
          deconv_ref(xg, wg, stride=(2, 3), padding=(1, 0), output_padding=(1, 2), dilation=2,
                     groups=2))
ex = np.array([[[[1, 2], [3, 4]]]], np.float32)
ew = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
pex, pew = save('ex.npy', ex), save('ew.npy', ew)
want = np.array([[[[5, 14, 10, 12], [14, 36, 24, 30], [15, 34, 20, 24], [24, 55, 32, 36]]]], np.float64)
check('conv2d-transpose worked example: padding 1, output-padding 1', 'conv2d-transpose',
      ['--input', pex, '--weight', pew, '--stride', '2', '--padding', '1', '--output-padding', '1'], want)
ok('numpy reference gives the worked example', np.array_equal(
   deconv_ref(ex, ew, stride=2, padding=1, output_padding=1), want))
want_same = np.array([[[[1, 2, 5, 4], [4, 5, 14, 10], [10, 14, 36, 24], [12, 15, 34, 20]]]], np.float64)
check('conv2d-transpose TF SAME, output 4,4', 'conv2d-transpose',
      ['--input', pex, '--weight', pew, '--stride', '2', '--padding-mode', 'tf_same',
       '--output-shape', '4,4'], want_same)
xt = rng.uniform(-1, 1, (1, 2, 5, 4)).astype(np.float32)
wt = rng.uniform(-1, 1, (2, 3, 4, 3)).astype(np.float32)
# TF SAME: out 9 from 5 at stride 2 with k 4: total 3, top 1 (the odd pixel at the bottom)
check('conv2d-transpose TF SAME 9,12 (odd padding at the bottom)', 'conv2d-transpose',
      ['--input', save('xt.npy', xt), '--weight', save('wt.npy', wt), '--stride', '2,3',
       '--padding-mode', 'tf_same', '--output-shape', '9,12'],
      deconv_ref(xt, wt, stride=(2, 3), out=(9, 12), pad_top=(1, 0)))
check('conv2d-transpose TF VALID, default shape', 'conv2d-transpose',
      ['--input', os.path.join(tmp, 'xt.npy'), '--weight', os.path.join(tmp, 'wt.npy'),
       '--stride', '2', '--padding-mode', 'tf_valid'],
      deconv_ref(xt, wt, stride=2, out=(5 * 2 + 2, 4 * 2 + 1), pad_top=(0, 0)))
rc, err = run(['conv2d-transpose', '--input', pxd, '--weight', pwd, '--stride', '2',
               '-o', os.path.join(tmp, 'r.npy'), '--repeat', '2', '--method', 'subkernel'])
try:
    line = json.loads(err.strip().splitlines()[-1])
    ok('conv2d-transpose --repeat prints a JSON line', rc == 0 and line['method'] == 'subkernel',
       'gpu_ms %.3f' % line['gpu_ms'])
except (ValueError, IndexError, KeyError):
    ok('conv2d-transpose --repeat prints a JSON line', False, repr(err))

# ---- errors: usage 2 with a message, a missing file 1 ----
o = os.path.join(tmp, 'e.npy')
cases = [
    ('weight planes do not match the input', ['conv2d', '--input', px, '--weight',
                                              save('w5.npy', np.ones((2, 5, 3, 3), np.float32)), '-o', o], 2),
    ('kernel larger than the padded input', ['conv2d', '--input', save('tiny.npy', np.ones((1, 3, 2, 2), np.float32)),
                                             '--weight', pws, '-o', o], 2),
    ('bias of the wrong length', ['conv2d', '--input', px, '--weight', pw_, '--bias', pbd, '-o', o], 2),
    ('2-D input', ['conv2d', '--input', save('x2d.npy', np.ones((4, 4), np.float32)), '--weight', pws, '-o', o], 2),
    ('complex input', ['conv2d', '--input', save('xc.npy', np.ones((1, 3, 4, 4), np.complex64)), '--weight', pws, '-o', o], 2),
    ('padding 1,2,3', ['conv2d', '--input', px, '--weight', pw_, '--padding', '1,2,3', '-o', o], 2),
    ('precision 4', ['conv2d', '--input', px, '--weight', pw_, '--precision', '4', '-o', o], 2),
    ('batch4 with batch 1', ['conv2d', '--input', px, '--weight', pw_, '--algorithm', 'batch4', '-o', o], 2),
    ('no --weight', ['conv2d', '--input', px, '-o', o], 2),
    ('a missing file', ['conv2d', '--input', os.path.join(tmp, 'nope.npy'), '--weight', pw_, '-o', o], 1),
    ('output-padding >= stride and dilation', ['conv2d-transpose', '--input', pxd, '--weight', pwd,
                                               '--stride', '2', '--output-padding', '2', '-o', o], 2),
    ('transpose weight planes do not match', ['conv2d-transpose', '--input', pxd, '--weight',
                                              os.path.join(tmp, 'w5.npy'),
                                              '--stride', '2', '-o', o], 2),
    ('groups not dividing the planes', ['conv2d-transpose', '--input', pxd, '--weight', pwd,
                                        '--groups', '3', '-o', o], 2),
    ('output below 1x1', ['conv2d-transpose', '--input', pex, '--weight', pew, '--padding', '3', '-o', o], 2),
    ('TF output shape the input does not give', ['conv2d-transpose', '--input', pex, '--weight', pew,
                                                 '--stride', '2', '--padding-mode', 'tf_same',
                                                 '--output-shape', '7,7', '-o', o], 2),
    ('output-shape without a TF mode', ['conv2d-transpose', '--input', pex, '--weight', pew,
                                        '--output-shape', '4,4', '-o', o], 2),
]
for name, args, want_rc in cases:
    rc, err = run(args)
    msg = err.strip().splitlines()[-1] if err.strip() else ''
    ok('error: ' + name, rc == want_rc and msg.startswith('fftbloom '), '(exit %d: %s)' % (rc, msg))

print('SCRIPT: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
PYEOF
