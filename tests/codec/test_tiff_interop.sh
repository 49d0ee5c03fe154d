#!/bin/sh
# TIFF and HEIC made by other programs, and TIFF read by them: Pillow (python3-pil) and libtiff's
# tiffcp write TIFFs (8/16-bit gray, RGB, RGBA, float32; LZW, deflate, PackBits, none; strips,
# tiles, planes), `fftbloom convert IN -o OUT.exr --bits 32` decodes them, and the float32 EXR
# (read by OpenCV) must hold the sRGB formula applied to the codes written (float samples: the
# values), within 1e-6; Pillow reads the TIFFs fftbloom writes and finds the codes. libheif's
# heif-enc (x265) writes HEICs at test time (lossless 4:4:4 8-bit RGBA, 10-bit, lossy 4:2:0, and
# one given an irot/imir by this script): fftbloom's decode equals libheif's own (heif-convert)
# to the code, with the rotation and mirror applied. Prints "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
FFTBLOOM="$BUILD/fftbloom"
if [ ! -x "$FFTBLOOM" ]; then
	echo "tiff interop: $FFTBLOOM not built"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
exec env OPENCV_IO_ENABLE_OPENEXR=1 FFTBLOOM="$FFTBLOOM" PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" /usr/bin/python3 - <<'PYEOF'
import os, struct, subprocess
import numpy as np
import cv2
import interop_common
from PIL import Image
from interop_common import FFT, T, rng, check, close, finish
from interop_common import srgb_to_linear as srgb
from interop_common import linear_to_srgb

H, W = 23, 41

def run(*args):
    return interop_common.run(*args, text=False)

def to_codes(l, bits=8):
    return np.floor(linear_to_srgb(l) * (2 ** bits - 1) + 0.5).astype(np.int64)

def decode(path):
    """fftbloom's decode as float32 (H, W, C) in R, G, B, A order, through a float32 EXR."""
    out = path + '.exr'
    run(FFT, 'convert', path, '-o', out, '--bits', '32', '--quiet')
    a = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    if a is None:
        raise RuntimeError('OpenCV cannot read ' + out)
    if a.ndim == 2:
        return a[..., None]
    return a[..., [2, 1, 0, 3][:a.shape[2]]] if a.shape[2] == 4 else a[..., ::-1]

# ---- Pillow writes, fftbloom reads ----
def pil_case(mode, compression, bits):
    def fn():
        if mode == 'F':
            a = (rng.random((H, W)) * 50 - 10).astype(np.float32)
            want = a[..., None]
            img = Image.fromarray(a, 'F')
        elif mode == 'I;16':
            a = rng.integers(0, 65536, (H, W)).astype(np.uint16)
            want = srgb(a / 65535.0)[..., None]
            img = Image.fromarray(a, 'I;16')
        else:
            ch = {'L': 1, 'RGB': 3, 'RGBA': 4}[mode]
            a = rng.integers(0, 256, (H, W, ch)).astype(np.uint8)
            want = srgb(a / 255.0)
            if ch == 4:
                want[..., 3] = a[..., 3] / 255.0
            img = Image.fromarray(a[..., 0] if ch == 1 else a, mode)
        p = os.path.join(T, 'pil_%s_%s.tif' % (mode.replace(';', ''), compression))
        img.save(p, compression=compression)
        return close(decode(p), want, 1e-6, p)
    return fn

for mode, comps in (('L', ('raw', 'packbits', 'tiff_lzw')), ('RGB', ('tiff_lzw', 'tiff_adobe_deflate')),
                    ('RGBA', ('raw', 'tiff_adobe_deflate')), ('I;16', ('raw', 'tiff_lzw')),
                    ('F', ('raw', 'tiff_adobe_deflate'))):
    for c in comps:
        check('Pillow %s %s: the codes (values) written' % (mode, c), pil_case(mode, c, 8))

# ---- tiffcp re-lays a file out: tiles, planes, BigTIFF; same pixels ----
def tiffcp_case(args, what):
    def fn():
        a = rng.integers(0, 256, (H, W, 4)).astype(np.uint8)
        src = os.path.join(T, 'src_rgba.tif')
        Image.fromarray(a, 'RGBA').save(src, compression='raw')
        dst = os.path.join(T, 'tiffcp_%s.tif' % what)
        run('tiffcp', *args, src, dst)
        want = srgb(a / 255.0)
        want[..., 3] = a[..., 3] / 255.0
        return close(decode(dst), want, 1e-6, what)
    return fn

for args, what in ((['-t', '-w', '16', '-l', '16', '-c', 'zip'], 'tiles16_zip'),
                   (['-p', 'separate', '-c', 'lzw:2'], 'planar_lzw_predictor'),
                   (['-t', '-w', '32', '-l', '16', '-p', 'separate'], 'planar_tiles'),
                   (['-8', '-r', '5', '-c', 'packbits'], 'bigtiff_packbits')):
    check('tiffcp %s: the same pixels' % ' '.join(args), tiffcp_case(args, what))

# ---- fftbloom writes, Pillow reads ----
def ours_to_pil(ch, bits, comp):
    def fn():
        a = rng.integers(0, 256 if bits == 8 else 65536, (H, W, ch))
        m = 255.0 if bits == 8 else 65535.0
        lin = srgb(a / m)
        if ch == 4:
            lin[..., 3] = a[..., 3] / m
        src = os.path.join(T, 'lin_%d.exr' % ch)
        cv2.imwrite(src, (lin[..., [2, 1, 0, 3]] if ch == 4 else lin[..., ::-1] if ch == 3
                          else lin[..., 0]).astype(np.float32),
                    [cv2.IMWRITE_EXR_TYPE, cv2.IMWRITE_EXR_TYPE_FLOAT])
        out = os.path.join(T, 'ours_%d_%d_%s.tif' % (ch, bits, comp))
        run(FFT, 'convert', src, '-o', out, '--bits', str(bits), '--tiff-compression', comp,
            '--quiet')
        got = np.array(Image.open(out)).astype(np.int64)
        if got.ndim == 2:
            got = got[..., None]
        if not (got == a).all():
            raise AssertionError('%d samples differ' % int((got != a).sum()))
        return 'codes exact'
    return fn

for ch, bits, comp in ((3, 8, 'deflate'), (4, 8, 'lzw'), (1, 8, 'none'), (1, 16, 'deflate'),
                       (3, 8, 'none')):
    check('Pillow reads fftbloom\'s %d-channel %d-bit %s TIFF' % (ch, bits, comp),
          ours_to_pil(ch, bits, comp))

def ours_float_to_pil():
    a = (rng.random((H, W)) * 100 - 20).astype(np.float32)
    src = os.path.join(T, 'f.exr')
    cv2.imwrite(src, a, [cv2.IMWRITE_EXR_TYPE, cv2.IMWRITE_EXR_TYPE_FLOAT])
    out = os.path.join(T, 'ours_f32.tif')
    run(FFT, 'convert', src, '-o', out, '--bits', '32', '--tiff-compression', 'lzw')
    got = np.array(Image.open(out))
    if got.dtype != np.float32 or not (got == a).all():
        raise AssertionError('float32 samples differ (%s)' % got.dtype)
    return 'float32 exact'
check('Pillow reads fftbloom\'s float32 gray TIFF (LZW, floating-point predictor)',
      ours_float_to_pil)

# ---- colour: a TIFF's ICC profile is honoured as a PNG's; answers carry one ----
P3 = 'tests/fuzz/corpus/icc/p3_v4.icc'
def tiff_icc():
    icc = open(P3, 'rb').read()
    a = rng.integers(0, 256, (H, W, 3)).astype(np.uint8)
    t, p = os.path.join(T, 'p3.tif'), os.path.join(T, 'p3.png')
    Image.fromarray(a).save(t, compression='tiff_lzw', icc_profile=icc)
    Image.fromarray(a).save(p, icc_profile=icc)
    got, want = decode(t), decode(p)
    if np.abs(got - srgb(a / 255.0)).max() < 1e-3:
        raise AssertionError('the P3 profile changed nothing')
    msg = close(got, want, 0, 'P3 TIFF vs P3 PNG')
    out = os.path.join(T, 'p3_kept.tif')
    run(FFT, 'convert', t, '-o', out, '--keep-profile', '--quiet')
    kept = Image.open(out)
    if kept.info.get('icc_profile') != icc or not (np.array(kept) == a).all():
        raise AssertionError('--keep-profile: profile or codes not kept')
    run(FFT, 'convert', t, '-o', out, '--quiet')
    if not Image.open(out).info.get('icc_profile'):
        raise AssertionError('the sRGB answer carries no profile')
    return msg + '; --keep-profile gives the codes and the profile back'
check('TIFF with a Display P3 profile: decoded as the PNG with it; answers tagged', tiff_icc)

# ---- HEIC: heif-enc writes, fftbloom and heif-convert read ----
def heif_ref(heic):
    """libheif's own decode (heif-convert), as codes (H, W, C) and their maximum."""
    out = heic + '.png'
    run('heif-convert', heic, out)
    a = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    a = a[..., [2, 1, 0, 3]] if a.shape[2] == 4 else a[..., ::-1]
    return a.astype(np.int64), 65535 if a.dtype == np.uint16 else 255

def smooth(bits, ch):
    y, x = np.mgrid[0:H, 0:W]
    m = 2 ** bits - 1
    planes = [(x / W * m), (y / H * m), ((x + y) / (W + H) * m), ((1 - x / W) * m)][:ch]
    return np.clip(np.stack(planes, -1) + rng.integers(-3, 4, (H, W, ch)), 0, m).astype(
        np.uint16 if bits > 8 else np.uint8)

def heic_case(bits, args, ch, ref_tol, what):
    def fn():
        a = smooth(16 if bits > 8 else 8, ch)
        png = os.path.join(T, 'h_%s.png' % what)
        cv2.imwrite(png, a[..., [2, 1, 0, 3]] if ch == 4 else a[..., ::-1])
        heic = os.path.join(T, 'h_%s.heic' % what)
        run('heif-enc', *args, '-o', heic, png)
        ref, m = heif_ref(heic)
        got = decode(heic)
        # heif-convert widens 10-bit codes to 16 bits by a shift (v << 6, the low bits
        # v >> 4 or zero): compared as 10-bit codes
        if m == 65535:
            ref, m = ref >> 6, 1023
        codes = to_codes(got[..., :3], 10 if m == 1023 else 8)
        msg = close(codes, ref[..., :3], 0, what + ': colour vs heif-convert')
        if ch == 4:
            close(np.floor(got[..., 3] * m + 0.5), ref[..., 3], 0, what + ': alpha')
        orig = a.astype(np.float64) / (65535.0 if a.dtype == np.uint16 else 255.0)
        e = np.abs(codes / m - orig[..., :3]).max()
        if not e <= ref_tol:
            raise AssertionError('%s: %.4g from the PNG written, over %.4g' % (what, e, ref_tol))
        return msg + '; %.4g from the source (tolerance %.4g)' % (e, ref_tol)
    return fn

check('HEIC lossless 4:4:4 8-bit RGBA (heif-enc): heif-convert\'s codes, alpha exact',
      heic_case(8, ['-L', '-p', 'chroma=444'], 4, 2.5 / 255, 'lossless8'))
check('HEIC 10-bit (heif-enc -b 10): heif-convert\'s codes, as 10-bit',
      heic_case(10, ['-b', '10', '-q', '90', '-p', 'chroma=444'], 3, 0.05, 'q90_10bit'))
check('HEIC lossy 4:2:0 8-bit (heif-enc -q 60): heif-convert\'s codes',
      heic_case(8, ['-q', '60'], 3, 0.25, 'q60'))

def heic_icc():
    # heif-enc copies a PNG's iCCP into the HEIC ('prof'): the HEIC decodes as heif-convert's
    # codes tagged with that profile do (as a PNG)
    icc = open(P3, 'rb').read()
    a = smooth(8, 3)
    p, h = os.path.join(T, 'hp3.png'), os.path.join(T, 'hp3.heic')
    Image.fromarray(a).save(p, icc_profile=icc)
    run('heif-enc', '-L', '-p', 'chroma=444', '-o', h, p)
    ref, m = heif_ref(h)
    q = os.path.join(T, 'hp3_ref.png')
    Image.fromarray(ref.astype(np.uint8)).save(q, icc_profile=icc)
    got, want = decode(h), decode(q)
    if np.abs(want - srgb(ref / 255.0)).max() < 1e-3:
        raise AssertionError('the P3 profile changed nothing')
    return close(got, want, 1e-6, 'P3 HEIC vs heif-convert\'s codes with the profile')

check('HEIC with a Display P3 profile (heif-enc from a tagged PNG): decoded through it',
      heic_icc)

# irot (rotation, anticlockwise in 90s) and imir (mirror) added to a heif-enc file's primary
# item: a property each in ipco, associated in ipma, every box around grown and iloc's offsets
# past the insertion moved
def boxes(d, start, end):
    i = start
    while i + 8 <= end:
        n, t = struct.unpack('>I4s', d[i:i + 8])
        yield i, n, t
        i += n

def add_transforms(src, dst, rot, mirror):
    d = bytearray(open(src, 'rb').read())
    new = struct.pack('>I4sB', 9, b'irot', rot) + struct.pack('>I4sB', 9, b'imir', mirror)
    meta = next(i for i, n, t in boxes(d, 0, len(d)) if t == b'meta')
    mn = struct.unpack('>I', d[meta:meta + 4])[0]
    kids = list(boxes(d, meta + 12, meta + mn))
    iprp = next((i, n) for i, n, t in kids if t == b'iprp')
    pitm = next(i for i, n, t in kids if t == b'pitm')
    item = struct.unpack('>H', d[pitm + 12:pitm + 14])[0]
    pk = list(boxes(d, iprp[0] + 8, iprp[0] + iprp[1]))
    ipco = next((i, n) for i, n, t in pk if t == b'ipco')
    ipma = next((i, n) for i, n, t in pk if t == b'ipma')
    nprops = len(list(boxes(d, ipco[0] + 8, ipco[0] + ipco[1])))
    # ipma (version 0, flags 0 expected): entry_count, then item_ID, count, 1-byte indices
    ver, flags = d[ipma[0] + 8], int.from_bytes(d[ipma[0] + 9:ipma[0] + 12], 'big')
    if ver != 0 or flags & 1:
        raise RuntimeError('ipma version %d flags %d not handled' % (ver, flags))
    j, count = ipma[0] + 16, struct.unpack('>I', d[ipma[0] + 12:ipma[0] + 16])[0]
    for _ in range(count):
        iid, k = struct.unpack('>HB', d[j:j + 3])
        if iid == item:
            d[j + 2] = k + 2
            d[j + 3 + k:j + 3 + k] = bytes([0x80 | (nprops + 1), 0x80 | (nprops + 2)])
            break
        j += 3 + k
    else:
        raise RuntimeError('primary item not in ipma')
    grow = 2
    struct.pack_into('>I', d, ipma[0], ipma[1] + 2)
    at = ipco[0] + ipco[1]
    d[at:at] = new
    grow += len(new)
    struct.pack_into('>I', d, ipco[0], ipco[1] + len(new))
    struct.pack_into('>I', d, iprp[0], iprp[1] + grow)
    struct.pack_into('>I', d, meta, mn + grow)
    shift_iloc(d, meta, meta + mn + grow, at, grow)
    open(dst, 'wb').write(bytes(d))

def shift_iloc(d, meta, meta_end, at, grow):
    # iloc: offsets at or past the insertion point move by `grow`
    iloc = next(i for i, n, t in boxes(d, meta + 12, meta_end) if t == b'iloc')
    v = d[iloc + 8]
    osz, lsz = d[iloc + 12] >> 4, d[iloc + 12] & 15
    bsz, isz = d[iloc + 13] >> 4, (d[iloc + 13] & 15 if v in (1, 2) else 0)
    j = iloc + 14
    n = struct.unpack('>H' if v < 2 else '>I', d[j:j + (2 if v < 2 else 4)])[0]
    j += 2 if v < 2 else 4
    def field(j, size):
        return int.from_bytes(d[j:j + size], 'big') if size else 0
    for _ in range(n):
        j += 2 if v < 2 else 4
        if v in (1, 2):
            method = d[j + 1] & 15
            j += 2
        else:
            method = 0
        j += 2  # data_reference_index
        base = field(j, bsz)
        if bsz and method == 0 and base >= at:
            d[j:j + bsz] = (base + grow).to_bytes(bsz, 'big')
        j += bsz
        ne = struct.unpack('>H', d[j:j + 2])[0]
        j += 2
        for _ in range(ne):
            j += isz
            off = field(j, osz)
            if osz and method == 0 and not bsz and off >= at:
                d[j:j + osz] = (off + grow).to_bytes(osz, 'big')
            j += osz + lsz

def add_iref(src, dst, edges):
    # an iref box (version 0) of 'dimg' references from -> [to], appended to meta
    d = bytearray(open(src, 'rb').read())
    meta = next(i for i, n, t in boxes(d, 0, len(d)) if t == b'meta')
    mn = struct.unpack('>I', d[meta:meta + 4])[0]
    refs = b''.join(struct.pack('>I4sHH', 14, b'dimg', a, 1) + struct.pack('>H', b)
                    for a, b in edges)
    old = [(i, n) for i, n, t in boxes(d, meta + 12, meta + mn) if t == b'iref']
    if old:  # heif-enc's own (version 0): the references appended to it
        i, n = old[0]
        if d[i + 8] != 0:
            raise RuntimeError('iref version %d' % d[i + 8])
        box, at = refs, i + n
        struct.pack_into('>I', d, i, n + len(refs))
    else:
        box, at = struct.pack('>I4sI', 12 + len(refs), b'iref', 0) + refs, meta + mn
    d[at:at] = box
    struct.pack_into('>I', d, meta, mn + len(box))
    shift_iloc(d, meta, meta + mn + len(box), at, len(box))
    open(dst, 'wb').write(bytes(d))

def heic_references():
    a = smooth(8, 3)
    png = os.path.join(T, 'refs.png')
    cv2.imwrite(png, a[..., ::-1])
    plain = os.path.join(T, 'refs.heic')
    run('heif-enc', '-L', '-p', 'chroma=444', '-o', plain, png)
    out = []
    for name, edges, want in (
            ('a diamond', [(100, 101), (100, 102), (101, 103), (102, 103)], None),
            ('a chain 8 deep', [(100 + k, 101 + k) for k in range(8)], None),
            ('a chain 9 deep', [(100 + k, 101 + k) for k in range(9)], '9 deep'),
            ('a cycle', [(100, 101), (101, 102), (102, 100)], 'cycle')):
        t = os.path.join(T, 'refs_%d.heic' % len(out))
        add_iref(plain, t, edges)
        r = subprocess.run([FFT, 'convert', t, '-o', t + '.pfm', '--quiet'], capture_output=True,
                           text=True)
        if want is None and ('cycle' in r.stderr or 'deep' in r.stderr):
            raise AssertionError('%s refused: %s' % (name, r.stderr.strip()))
        if want is not None and (r.returncode != 1 or want not in r.stderr):
            raise AssertionError('%s: exit %d, %s' % (name, r.returncode, r.stderr.strip()))
        out.append('%s %s' % (name, 'refused' if want else
                               'decoded' if r.returncode == 0 else 'left to libheif'))
    return ', '.join(out)
check('HEIC derived-image references: cycles and chains over 8 refused, others not',
      heic_references)

def heic_transform():
    a = smooth(8, 3)
    png = os.path.join(T, 'rot.png')
    cv2.imwrite(png, a[..., ::-1])
    plain = os.path.join(T, 'rot_plain.heic')
    run('heif-enc', '-L', '-p', 'chroma=444', '-o', plain, png)
    base = decode(plain)
    out = []
    for rot, mirror in ((1, 0), (2, 1), (3, 0)):
        t = os.path.join(T, 'rot_%d_%d.heic' % (rot, mirror))
        add_transforms(plain, t, rot, mirror)
        ref, m = heif_ref(t)
        got = decode(t)
        close(to_codes(got), ref, 0, 'irot %d imir %d vs heif-convert' % (rot, mirror))
        # libheif 1.15 applies irot (anticlockwise) before imir, and reads imir's axis 0 as a
        # top-bottom flip, 1 as a left-right one (what heif-convert does: the check above)
        want = np.rot90(base, rot)
        want = want[::-1] if mirror == 0 else want[:, ::-1]
        close(got, want, 0, 'irot %d imir %d vs the plain file turned' % (rot, mirror))
        out.append('%dx%d' % (got.shape[1], got.shape[0]))
    return 'sizes ' + ', '.join(out)
check('HEIC irot/imir added to heif-enc files: applied as heif-convert does', heic_transform)

finish()
PYEOF
