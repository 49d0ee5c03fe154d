#!/bin/sh
# Interop: images written by other programs (ImageMagick, OpenCV, OpenEXR's exrmaketiled, numpy,
# libheif's heif-enc)
# go through `fftbloom convert IN -o OUT.pfm`, as a user would run it, and the PFM must hold the
# right linear values: for 8/16-bit files the sRGB formula applied to the codes the test wrote,
# for float files the values themselves, for JPEG what ImageMagick itself decodes (within a code
# or two: different IDCTs), for lossless WebP and AVIF the codes written. The other way round,
# OpenCV, ImageMagick and libheif (heif-convert) read what fftbloom wrote.
# Prints "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
FFTBLOOM="$BUILD/fftbloom"
if [ ! -x "$FFTBLOOM" ]; then
	echo "interop: $FFTBLOOM not built"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
exec env OPENCV_IO_ENABLE_OPENEXR=1 FFTBLOOM="$FFTBLOOM" PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" /usr/bin/python3 - <<'PYEOF'
import os, struct, subprocess
import numpy as np
import cv2
from interop_common import (FFT, T, rng, run, srgb_to_linear, linear_to_srgb,
                            check, close, finish)

def read_pfm(path):
    d = open(path, 'rb').read()
    parts = d.split(b'\n', 3)
    kind, (w, h), scale = parts[0], map(int, parts[1].split()), float(parts[2])
    ch = 3 if kind == b'PF' else 1
    a = np.frombuffer(parts[3], ('<' if scale < 0 else '>') + 'f4', w * h * ch)
    return a.reshape(h, w, ch)[::-1].astype(np.float32)

def write_pfm(path, a):
    a = np.asarray(a, np.float32)
    ch = 1 if a.ndim == 2 or a.shape[2] == 1 else 3
    h, w = a.shape[:2]
    body = a.reshape(h, w, ch)[::-1].astype('<f4').tobytes()
    open(path, 'wb').write(b'%s\n%d %d\n-1.0\n' % (b'PF' if ch == 3 else b'Pf', w, h) + body)

def to_pfm(src):
    out = src + '.pfm'
    run(FFT, 'convert', src, '-o', out)
    return read_pfm(out)

W, H = 19, 13

# ---- PNG written by ImageMagick from raw codes: every colour type and depth ----
def png_case(kind, depth, channels, extra):
    def fn():
        maxc = 255 if depth == 8 else 65535
        codes = rng.integers(0, maxc + 1, (H, W, channels))
        raw = os.path.join(T, 'png_%s_%d.raw' % (kind, depth))
        codes.astype('<u1' if depth == 8 else '<u2').tofile(raw)
        png = raw[:-4] + '.png'
        run('convert', '-size', '%dx%d' % (W, H), '-depth', str(depth), '-endian', 'LSB',
            '%s:%s' % (kind, raw), *extra, png)
        got = to_pfm(png)
        alpha = channels in (2, 4)
        colour = codes[..., :channels - 1] if alpha else codes
        want = srgb_to_linear(colour / maxc)
        if channels < 3:
            want = want[..., :1]
        # the PFM keeps the colour channels only (alpha is reported as dropped)
        return close(got, want, 1e-9, kind, rtol=1e-6)
    return fn

check('png gray 8 (ImageMagick)', png_case('gray', 8, 1, ['-define', 'png:color-type=0']))
check('png gray 16 (ImageMagick)', png_case('gray', 16, 1, ['-define', 'png:color-type=0']))
check('png gray+alpha 8 (ImageMagick)', png_case('graya', 8, 2, ['-define', 'png:color-type=4']))
check('png gray+alpha 16 (ImageMagick)', png_case('graya', 16, 2, ['-define', 'png:color-type=4']))
check('png rgb 8 (ImageMagick)', png_case('rgb', 8, 3, ['-define', 'png:color-type=2']))
check('png rgb 16 (ImageMagick)', png_case('rgb', 16, 3, ['-define', 'png:color-type=2']))
check('png rgba 8 (ImageMagick)', png_case('rgba', 8, 4, ['-define', 'png:color-type=6']))
check('png rgba 16 (ImageMagick)', png_case('rgba', 16, 4, ['-define', 'png:color-type=6']))

def png_palette():
    pal = rng.integers(0, 256, (12, 3))
    idx = rng.integers(0, 12, (H, W))
    codes = pal[idx]
    raw = os.path.join(T, 'pal.raw'); codes.astype('u1').tofile(raw)
    png = os.path.join(T, 'pal.png')
    run('convert', '-size', '%dx%d' % (W, H), '-depth', '8', 'rgb:' + raw, 'PNG8:' + png)
    ihdr = open(png, 'rb').read()[16:26]
    if ihdr[9] != 3:
        raise AssertionError('ImageMagick did not write a palette PNG (colour type %d)' % ihdr[9])
    return close(to_pfm(png), srgb_to_linear(codes / 255), 1e-9, 'palette', rtol=1e-6)
check('png palette (ImageMagick PNG8)', png_palette)

def png_1bit():
    codes = rng.integers(0, 2, (H, W)) * 255
    raw = os.path.join(T, 'bw.raw'); codes.astype('u1').tofile(raw)
    png = os.path.join(T, 'bw.png')
    run('convert', '-size', '%dx%d' % (W, H), '-depth', '8', 'gray:' + raw, '-depth', '1',
        '-define', 'png:bit-depth=1', '-define', 'png:color-type=0', png)
    return close(to_pfm(png)[..., 0], codes / 255.0, 0, '1-bit')
check('png gray 1-bit (ImageMagick)', png_1bit)

def png_opencv(depth):
    def fn():
        maxc = 255 if depth == 8 else 65535
        codes = rng.integers(0, maxc + 1, (H, W, 3)).astype(np.uint8 if depth == 8 else np.uint16)
        png = os.path.join(T, 'cv%d.png' % depth)
        assert cv2.imwrite(png, codes)          # BGR order on disk as RGB
        want = srgb_to_linear(codes[..., ::-1] / maxc)
        return close(to_pfm(png), want, 1e-9, 'opencv png', rtol=1e-6)
    return fn
check('png rgb 8 (OpenCV)', png_opencv(8))
check('png rgb 16 (OpenCV)', png_opencv(16))

# ---- JPEG written (and decoded, as the reference) by ImageMagick ----
def smooth_codes(h, w, ch):
    y, x = np.mgrid[0:h, 0:w]
    out = np.zeros((h, w, ch))
    for c in range(ch):
        fx, fy, ph = rng.uniform(0, 0.3, 3)
        out[..., c] = 128 + 90 * np.sin(fx * x + fy * y + ph * 20)
    return np.clip(np.round(out), 0, 255).astype(np.uint8)

def im_decode(path, kind, extra=()):
    r = subprocess.run(['convert', path, *extra, '-depth', '8', kind + ':-'], capture_output=True, check=True)
    return np.frombuffer(r.stdout, np.uint8)

def jpeg_case(name, ch, extra, ref_extra=(), orient_tag=None, shape=(24, 40)):
    def fn():
        h, w = shape
        codes = smooth_codes(h, w, 3)
        raw = os.path.join(T, name + '.raw'); codes.tofile(raw)
        jpg = os.path.join(T, name + '.jpg')
        run('convert', '-size', '%dx%d' % (w, h), '-depth', '8', 'rgb:' + raw, *extra, jpg)
        if orient_tag:
            d = open(jpg, 'rb').read()
            tiff = b'II*\x00' + struct.pack('<I', 8) + struct.pack('<H', 1) + \
                   struct.pack('<HHIHH', 0x0112, 3, 1, orient_tag, 0) + struct.pack('<I', 0)
            app1 = b'Exif\x00\x00' + tiff
            d = d[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + d[2:]
            open(jpg, 'wb').write(d)
        got = to_pfm(jpg)
        gh, gw = got.shape[:2]
        kind = 'gray' if ch == 1 else 'rgb'
        ref = im_decode(jpg, kind, ref_extra).reshape(gh, gw, ch)
        got_codes = linear_to_srgb(got) * 255
        err = np.abs(got_codes - ref)
        if not (err.max() <= 2.5 and err.mean() <= 0.6):
            raise AssertionError('vs ImageMagick: max %.2f mean %.3f codes' % (err.max(), err.mean()))
        return '%dx%d, vs ImageMagick max %.2f mean %.3f codes' % (gw, gh, err.max(), err.mean())
    return fn

check('jpeg rgb 4:4:4 q95 (ImageMagick)', jpeg_case('j444', 3, ['-quality', '95', '-sampling-factor', '1x1']))
check('jpeg rgb 4:2:0 q85 (ImageMagick)', jpeg_case('j420', 3, ['-quality', '85', '-sampling-factor', '2x2']))
check('jpeg progressive (ImageMagick)', jpeg_case('jprog', 3, ['-quality', '90', '-interlace', 'JPEG']))
check('jpeg gray (ImageMagick)', jpeg_case('jgray', 1, ['-colorspace', 'gray', '-quality', '92']))
check('jpeg cmyk (ImageMagick)', jpeg_case('jcmyk', 3, ['-colorspace', 'CMYK', '-quality', '95'],
                                            ['-colorspace', 'sRGB']))
for o in range(2, 9):
    check('jpeg EXIF orientation %d (vs ImageMagick -auto-orient)' % o,
          jpeg_case('jor%d' % o, 3, ['-quality', '95', '-sampling-factor', '1x1'], ['-auto-orient'], o))

# ---- OpenEXR written by OpenCV, retiled and recompressed by exrmaketiled ----
def exr_values(ch):
    a = rng.uniform(-2, 40, (H, W, ch)).astype(np.float32)
    a[0, 0] = 1e-3
    return a

def exr_case(ch, half):
    def fn():
        a = exr_values(ch)
        exr = os.path.join(T, 'cv%d%s.exr' % (ch, 'h' if half else 'f'))
        img = a[..., ::-1] if ch >= 3 else a[..., 0]   # OpenCV writes B, G, R(, A)
        if ch == 4:
            img = np.dstack([a[..., 2], a[..., 1], a[..., 0], a[..., 3]])
        assert cv2.imwrite(exr, np.ascontiguousarray(img), [cv2.IMWRITE_EXR_TYPE,
                           cv2.IMWRITE_EXR_TYPE_HALF if half else cv2.IMWRITE_EXR_TYPE_FLOAT])
        want = a.astype(np.float16).astype(np.float32) if half else a
        colour = want[..., :3] if ch == 4 else want
        msgs = [close(to_pfm(exr), colour, 0, 'scanline zip')]
        for z in ['none', 'rle', 'zip', 'piz', 'pxr24', 'b44', 'b44a']:
            tiled = exr[:-4] + '_%s.exr' % z
            run('exrmaketiled', '-t', '8', '8', '-z', z, exr, tiled)
            if z.startswith('b44') and not half:
                # OpenEXRCore 3.1 mis-decodes B44 float channels: we must refuse, not guess
                r = subprocess.run([FFT, 'convert', tiled, '-o', tiled + '.pfm'], capture_output=True, text=True)
                if r.returncode != 1 or 'B44' not in r.stderr:
                    raise AssertionError('b44 float: expected a refusal, got %d %s' % (r.returncode, r.stderr))
                continue
            got = to_pfm(tiled)
            # the reference for every compression: OpenCV reading the same file (OpenEXR's C++ decoders)
            ref = cv2.imread(tiled, cv2.IMREAD_UNCHANGED).reshape(H, W, -1)
            ref = ref[..., [2, 1, 0]] if ch >= 3 else ref
            close(got, ref, 0, 'tiled %s vs OpenCV' % z)
            lossy = (z.startswith('b44') and half) or (z == 'pxr24' and not half)
            if not lossy:
                close(got, colour, 0, 'tiled ' + z)
        return '; '.join(msgs)
    return fn

check('exr rgb half, scanline + tiled in 7 compressions (OpenCV, exrmaketiled)', exr_case(3, True))
check('exr rgb float, scanline + tiled in 7 compressions (OpenCV, exrmaketiled)', exr_case(3, False))
check('exr rgba half (OpenCV, exrmaketiled)', exr_case(4, True))
check('exr gray float (OpenCV, exrmaketiled)', exr_case(1, False))

def exr_mipmap():
    a = exr_values(3)
    exr = os.path.join(T, 'mip_src.exr')
    assert cv2.imwrite(exr, np.ascontiguousarray(a[..., ::-1]), [cv2.IMWRITE_EXR_TYPE, cv2.IMWRITE_EXR_TYPE_FLOAT])
    mip = os.path.join(T, 'mip.exr')
    run('exrmaketiled', '-m', '-t', '16', '16', exr, mip)
    return close(to_pfm(mip), a, 0, 'mipmap level 0')
check('exr mipmapped tiles: level 0 (exrmaketiled -m)', exr_mipmap)

# ---- Radiance HDR written by OpenCV ----
def hdr_opencv():
    a = rng.uniform(0, 50, (H, W, 3)).astype(np.float32)
    hdr = os.path.join(T, 'cv.hdr')
    assert cv2.imwrite(hdr, np.ascontiguousarray(a[..., ::-1]))
    got = to_pfm(hdr)
    # RGBE keeps 8 bits of mantissa relative to the largest component
    tol = a.max(axis=2, keepdims=True) / 128
    err = np.abs(got - a)
    if not (err <= tol).all():
        raise AssertionError('max err %g, tolerance %g' % (err.max(), tol.min()))
    return 'max err %.3g (RGBE step)' % err.max()
check('hdr (OpenCV, run-length)', hdr_opencv)

# ---- PFM by OpenCV, by ImageMagick (values code/65535), big-endian by numpy ----
def pfm_opencv():
    a = rng.uniform(-5, 5, (H, W, 3)).astype(np.float32)
    p = os.path.join(T, 'cv.pfm')
    assert cv2.imwrite(p, np.ascontiguousarray(a[..., ::-1]))
    return close(to_pfm(p), a, 0, 'opencv pfm')
check('pfm rgb (OpenCV)', pfm_opencv)

def pfm_imagemagick():
    codes = rng.integers(0, 65536, (H, W))
    raw = os.path.join(T, 'im.raw'); codes.astype('<u2').tofile(raw)
    p = os.path.join(T, 'im.pfm')
    run('convert', '-size', '%dx%d' % (W, H), '-depth', '16', '-endian', 'LSB', 'gray:' + raw, p)
    return close(to_pfm(p)[..., 0], codes / 65535.0, 0, 'imagemagick pfm', rtol=1e-6)
check('pfm gray (ImageMagick)', pfm_imagemagick)

def pfm_bigendian():
    a = rng.uniform(-1, 1, (H, W)).astype(np.float32)
    p = os.path.join(T, 'be.pfm')
    open(p, 'wb').write(b'Pf\n%d %d\n1.0\n' % (W, H) + a[::-1].astype('>f4').tobytes())
    return close(to_pfm(p)[..., 0], a, 0, 'big-endian pfm')
check('pfm gray big-endian (numpy)', pfm_bigendian)

# ---- WebP written by ImageMagick (libwebp), AVIF by libheif's heif-enc (libaom) ----
def to_png8(src):
    out = src + '.png'
    run(FFT, 'convert', src, '-o', out)
    return cv2.imread(out, cv2.IMREAD_UNCHANGED)

def webp_lossless_im():
    codes = rng.integers(0, 256, (H, W, 4)).astype(np.uint8)
    raw = os.path.join(T, 'wl.raw'); codes.tofile(raw)
    webp = os.path.join(T, 'wl.webp')
    run('convert', '-size', '%dx%d' % (W, H), '-depth', '8', 'rgba:' + raw,
        '-define', 'webp:lossless=true', '-define', 'webp:exact=true', webp)
    got = to_png8(webp)[..., [2, 1, 0, 3]]
    # the colour under alpha 0 is libwebp's to drop (ImageMagick 6 does not ask it to keep it)
    seen = np.repeat(codes[..., 3:] > 0, 4, axis=2)
    seen[..., 3] = True
    return close(np.where(seen, got, 0), np.where(seen, codes, 0), 0, 'webp lossless rgba codes')
check('webp lossless rgba (ImageMagick): exact codes (colour where alpha > 0)', webp_lossless_im)

def webp_lossy_im():
    codes = smooth_codes(24, 40, 3)
    raw = os.path.join(T, 'wy.raw'); codes.tofile(raw)
    webp = os.path.join(T, 'wy.webp')
    run('convert', '-size', '40x24', '-depth', '8', 'rgb:' + raw, '-quality', '80', webp)
    got = linear_to_srgb(to_pfm(webp)) * 255
    ref = im_decode(webp, 'rgb').reshape(24, 40, 3)
    err = np.abs(got - ref)
    if not err.max() <= 0.5 + 1e-3:
        raise AssertionError('vs ImageMagick: max %.2f codes' % err.max())
    return 'vs ImageMagick (the same libwebp) max %.3f codes' % err.max()
check('webp lossy (ImageMagick): as ImageMagick decodes it', webp_lossy_im)

def heif_enc(png, out, *args):
    run('heif-enc', *args, '-o', out, png)
    return out

def avif_lossless_heif():
    # heif-enc 1.15 writes its lossless AVIF as 4:4:4 BT.601 YUV (it keeps matrix 6 whatever
    # --matrix_coefficients says): lossless YUV, but RGB -> YUV -> RGB rounds, so the codes come
    # back within 2 (libheif's own decode: within 1); alpha is exact
    codes = rng.integers(0, 256, (H, W, 4)).astype(np.uint8)
    png = os.path.join(T, 'al.png'); cv2.imwrite(png, codes[..., [2, 1, 0, 3]])
    avif = heif_enc(png, os.path.join(T, 'al.avif'), '-A', '-L', '-p', 'chroma=444')
    got = to_png8(avif)[..., [2, 1, 0, 3]].astype(np.int64)
    close(got[..., 3], codes[..., 3], 0, 'avif alpha')
    return close(got[..., :3], codes[..., :3], 2, 'avif lossless rgb codes')
check('avif lossless rgba 8-bit (heif-enc): colour within 2 codes, alpha exact', avif_lossless_heif)

def psnr_codes(got, codes):
    return 10 * np.log10(255 ** 2 / np.mean((np.asarray(got, np.float64) - codes) ** 2))

def avif_lossy_heif():
    codes = smooth_codes(24, 40, 3)
    png = os.path.join(T, 'ay.png'); cv2.imwrite(png, codes[..., ::-1])
    avif = heif_enc(png, os.path.join(T, 'ay.avif'), '-A', '-q', '80')
    ours = psnr_codes(linear_to_srgb(to_pfm(avif)) * 255, codes)
    ref_png = os.path.join(T, 'ay_heif.png')
    run('heif-convert', avif, ref_png)
    theirs = psnr_codes(cv2.imread(ref_png)[..., ::-1], codes)
    if not (ours >= 30 and ours >= theirs - 0.5):
        raise AssertionError('PSNR %.1f dB, libheif\'s own decode %.1f dB' % (ours, theirs))
    return 'PSNR %.1f dB against the codes written (libheif\'s own decode: %.1f dB)' % (ours, theirs)
check('avif lossy 4:2:0 (heif-enc): no further from the codes than libheif\'s decode', avif_lossy_heif)

# ---- the other way: what fftbloom writes, read by OpenCV / ImageMagick ----
src = rng.uniform(0, 1, (H, W, 3)).astype(np.float32)
src_pfm = os.path.join(T, 'src.pfm')
write_pfm(src_pfm, src)

def ours_png(bits):
    def fn():
        out = os.path.join(T, 'ours%d.png' % bits)
        run(FFT, 'convert', src_pfm, '-o', out, '--bits', str(bits))
        got = cv2.imread(out, cv2.IMREAD_UNCHANGED)[..., ::-1].astype(np.float64)
        want = np.floor(linear_to_srgb(src) * (2 ** bits - 1) + 0.5)
        return close(got, want, 0, 'opencv reads our png')
    return fn
check('our png 8 read by OpenCV', ours_png(8))
check('our png 16 read by OpenCV', ours_png(16))

def ours_jpeg():
    out = os.path.join(T, 'ours.jpg')
    run(FFT, 'convert', src_pfm, '-o', out, '--quality', '100')
    got = cv2.imread(out)[..., ::-1].astype(np.float64)
    want = linear_to_srgb(src) * 255
    psnr = 10 * np.log10(255 ** 2 / np.mean((got - want) ** 2))
    if not psnr > 35:
        raise AssertionError('PSNR %.1f dB' % psnr)
    return 'PSNR %.1f dB on noise' % psnr
check('our jpeg read by OpenCV', ours_jpeg)

def ours_exr(bits):
    def fn():
        out = os.path.join(T, 'ours%d.exr' % bits)
        big = src * 100 - 20
        p = os.path.join(T, 'big.pfm'); write_pfm(p, big)
        run(FFT, 'convert', p, '-o', out, '--bits', str(bits))
        hdr = run('exrheader', out).stdout
        want_type = '16-bit floating-point' if bits == 16 else '32-bit floating-point'
        if want_type not in hdr or 'zip' not in hdr:
            raise AssertionError('exrheader: ' + hdr)
        got = cv2.imread(out, cv2.IMREAD_UNCHANGED)[..., ::-1]
        want = big.astype(np.float16).astype(np.float32) if bits == 16 else big
        return close(got, want, 0, 'opencv reads our exr')
    return fn
check('our exr half read by OpenCV and exrheader', ours_exr(16))
check('our exr float read by OpenCV and exrheader', ours_exr(32))

def ours_hdr():
    out = os.path.join(T, 'ours.hdr')
    run(FFT, 'convert', src_pfm, '-o', out)
    got = cv2.imread(out, cv2.IMREAD_UNCHANGED)[..., ::-1]
    tol = src.max(axis=2, keepdims=True) / 100
    if not (np.abs(got - src) <= tol).all():
        raise AssertionError('max err %g' % np.abs(got - src).max())
    return 'max err %.3g' % np.abs(got - src).max()
check('our hdr read by OpenCV', ours_hdr)

def ours_pfm():
    out = os.path.join(T, 'ours.pfm')
    run(FFT, 'convert', src_pfm, '-o', out)
    got = cv2.imread(out, cv2.IMREAD_UNCHANGED)[..., ::-1]
    return close(got, src, 0, 'opencv reads our pfm')
check('our pfm read by OpenCV', ours_pfm)

def ours_webp():
    out = os.path.join(T, 'ours.webp')
    run(FFT, 'convert', src_pfm, '-o', out, '--quality', '100')
    got = cv2.imread(out)[..., ::-1].astype(np.float64)
    want = np.floor(linear_to_srgb(src) * 255 + 0.5)
    return close(got, want, 0, 'opencv reads our lossless webp')
check('our webp (quality 100: lossless) read by OpenCV', ours_webp)

def ours_webp_lossy():
    codes = smooth_codes(48, 64, 3)
    p = os.path.join(T, 'smooth.pfm'); write_pfm(p, srgb_to_linear(codes / 255.0))
    out = os.path.join(T, 'ours_lossy.webp')
    run(FFT, 'convert', p, '-o', out, '--quality', '90')
    got = cv2.imread(out)[..., ::-1].astype(np.float64)
    psnr = 10 * np.log10(255 ** 2 / np.mean((got - codes) ** 2))
    if not psnr > 32:
        raise AssertionError('PSNR %.1f dB' % psnr)
    return 'quality 90, PSNR %.1f dB on a smooth image' % psnr
check('our webp (quality 90) read by OpenCV', ours_webp_lossy)

def heif_read(avif):
    out = avif + '.png'
    run('heif-convert', avif, out)
    return cv2.imread(out, cv2.IMREAD_UNCHANGED)

def ours_avif_lossless():
    a = np.dstack([src, rng.uniform(0, 1, (H, W, 1))]).astype(np.float32)
    p = os.path.join(T, 'srca.exr')
    out = os.path.join(T, 'ours.avif')
    cv2.imwrite(p, a[..., [2, 1, 0, 3]])
    run(FFT, 'convert', p, '-o', out, '--quality', '100')
    got = heif_read(out)[..., [2, 1, 0, 3]].astype(np.float64)
    want = np.dstack([np.floor(linear_to_srgb(src) * 255 + 0.5), np.floor(a[..., 3:] * 255 + 0.5)])
    return close(got, want, 0, 'libheif reads our lossless avif')
check('our avif (quality 100: lossless, with alpha) read by libheif', ours_avif_lossless)

def ours_avif10():
    out = os.path.join(T, 'ours10.avif')
    run(FFT, 'convert', src_pfm, '-o', out, '--quality', '100', '--bits', '10')
    got = heif_read(out)[..., ::-1].astype(np.int64)
    want = np.floor(linear_to_srgb(src) * 1023 + 0.5)
    # libheif writes 10-bit samples to a 16-bit PNG shifted left by 6
    return close(got >> 6, want, 0, 'libheif reads our 10-bit avif') + \
        ', low bits %d' % int((got & 63).max())
check('our avif 10-bit (lossless) read by libheif', ours_avif10)

def ours_avif_lossy():
    codes = smooth_codes(48, 64, 3)
    p = os.path.join(T, 'smooth.pfm'); write_pfm(p, srgb_to_linear(codes / 255.0))
    out = os.path.join(T, 'ours_lossy.avif')
    run(FFT, 'convert', p, '-o', out, '--subsampling', '420')
    theirs = psnr_codes(heif_read(out)[..., ::-1], codes)
    ours = psnr_codes(linear_to_srgb(to_pfm(out)) * 255, codes)
    # libheif 1.15 upsamples chroma more crudely than libavif: its decode scores lower
    if not (theirs > 25 and ours > 30):
        raise AssertionError('PSNR %.1f dB (ours %.1f dB)' % (theirs, ours))
    return 'default quality 63, 4:2:0: PSNR %.1f dB through libheif, %.1f dB through ours' % (
        theirs, ours)
check('our avif (4:2:0, default quality) read by libheif', ours_avif_lossy)

finish()
PYEOF
