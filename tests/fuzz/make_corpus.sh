#!/bin/sh
# Regenerates the fuzz seed corpora in tests/fuzz/corpus/<name>/ from other programs' writers:
# ImageMagick (PNG, JPEG, HDR, PFM, WebP through libwebp, AVIF through libheif and libaom),
# OpenCV (EXR, HDR, PFM), OpenEXR's exrmaketiled (tiled EXR in every compression), numpy (NPY),
# plus JPEGs with EXIF orientations and every subsampling; tensor requests (numpy NPYs behind a
# line of parameters); raw HTTP requests; for the text parsers (multipart, query,
# apiutil), requests as curl and browsers send them and hostile variants of them. Small inputs
# only: each seed is a few KB. Run from the repository root; needs `make deps-test`.
# `make_corpus.sh NAME...` remakes only the named corpora.
set -e
C=tests/fuzz/corpus
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || case $ONLY in *" $1 "*) ;; *) return 1 ;; esac; mkdir -p $C/$1; }

# a smooth image with some noise: realistic for the codecs, small once compressed
convert -size 16x12 -seed 3 gradient:red-blue \( +clone +noise Gaussian \) -compose blend \
	-define compose:args=20 -composite -depth 16 $T/plasma.ppm
if want png; then
convert $T/plasma.ppm -depth 8 PNG24:$C/png/rgb8.png
convert $T/plasma.ppm -depth 16 PNG48:$C/png/rgb16.png
convert $T/plasma.ppm -colorspace gray -depth 8 -define png:color-type=0 $C/png/gray8.png
convert $T/plasma.ppm -colorspace gray -depth 16 -define png:color-type=0 $C/png/gray16.png
convert $T/plasma.ppm -colorspace gray -alpha set -channel A -evaluate set 40% +channel \
	-depth 8 -define png:color-type=4 $C/png/graya8.png
convert $T/plasma.ppm -alpha set -channel A -fx 'i/w' +channel -depth 16 PNG64:$C/png/rgba16.png
convert $T/plasma.ppm -alpha set -channel A -fx 'j/h' +channel -depth 8 PNG32:$C/png/rgba8.png
convert $T/plasma.ppm -colors 16 PNG8:$C/png/palette.png
convert $T/plasma.ppm -colorspace gray -monochrome $C/png/gray1.png
convert $T/plasma.ppm -depth 8 -interlace PNG PNG24:$C/png/interlaced.png
fi

if want jpeg; then
convert $T/plasma.ppm -quality 85 $C/jpeg/baseline420.jpg
convert $T/plasma.ppm -quality 85 -sampling-factor 1x1 -interlace JPEG $C/jpeg/progressive444.jpg
convert $T/plasma.ppm -colorspace gray $C/jpeg/gray.jpg
convert $T/plasma.ppm -colorspace CMYK $C/jpeg/cmyk.jpg
# EXIF orientation 6 (rotate 90 CW), inserted as an APP1 segment after SOI
$PY - "$C/jpeg/baseline420.jpg" "$C/jpeg/exif6.jpg" <<'PYEOF'
import struct, sys
src = open(sys.argv[1], 'rb').read()
tiff = b'MM\x00\x2a' + struct.pack('>I', 8) + struct.pack('>H', 1) + \
       struct.pack('>HHIHH', 0x0112, 3, 1, 6, 0) + struct.pack('>I', 0)
app1 = b'Exif\x00\x00' + tiff
open(sys.argv[2], 'wb').write(src[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + src[2:])
PYEOF
fi

OPENCV_IO_ENABLE_OPENEXR=1 $PY - "$T" <<'PYEOF'
import cv2, numpy as np, sys
t = sys.argv[1]
rng = np.random.default_rng(5)
y, x = np.mgrid[0:16, 0:16].astype(np.float32)
img = np.dstack([x / 4, y / 8, (x * y) / 100]).astype(np.float32)
img[3, 3] = [20.0, 0.001, 5.0]
cv2.imwrite(t + '/rgb_half.exr', img, [cv2.IMWRITE_EXR_TYPE, cv2.IMWRITE_EXR_TYPE_HALF])
cv2.imwrite(t + '/rgb_float.exr', img, [cv2.IMWRITE_EXR_TYPE, cv2.IMWRITE_EXR_TYPE_FLOAT])
cv2.imwrite(t + '/gray_float.exr', img[:, :, 0].copy(), [cv2.IMWRITE_EXR_TYPE, cv2.IMWRITE_EXR_TYPE_FLOAT])
cv2.imwrite(t + '/cv.hdr', img)
cv2.imwrite(t + '/cv.pfm', img)
PYEOF
if want exr; then
cp $T/rgb_half.exr $T/rgb_float.exr $T/gray_float.exr $C/exr/
for z in none rle zip piz pxr24 b44 dwaa; do
	exrmaketiled -t 8 8 -z $z $T/rgb_half.exr $C/exr/tiled_$z.exr >/dev/null
done
exrmaketiled -m -t 8 8 $T/rgb_float.exr $C/exr/mipmap_float.exr >/dev/null
# regression (fuzz_exr): B44 tiles with channel G renamed to an unknown name crashed
# OpenEXRCore 3.1 when that channel was left without a destination
$PY - "$C/exr/tiled_b44.exr" "$C/exr/regress_b44_unknown_channel.exr" <<'PYEOF'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.index(b'G\x00\x01\x00\x00\x00')  # channel name "G", then pixel type HALF
d[i] = 0xf0
open(sys.argv[2], 'wb').write(bytes(d))
PYEOF
fi

if want hdr; then
cp $T/cv.hdr $C/hdr/opencv.hdr
convert $T/plasma.ppm $C/hdr/imagemagick.hdr
convert -size 40x3 gradient:white-black $C/hdr/imagemagick_wide.hdr
fi
if want pfm; then
cp $T/cv.pfm $C/pfm/opencv.pfm
convert $T/plasma.ppm $C/pfm/imagemagick.pfm
convert $T/plasma.ppm -colorspace gray $C/pfm/imagemagick_gray.pfm
$PY - "$C/pfm/bigendian.pfm" <<'PYEOF'
import numpy as np, sys
a = np.arange(12, dtype='>f4').reshape(3, 4) / 7
open(sys.argv[1], 'wb').write(b'Pf\n4 3\n1.0\n' + a[::-1].tobytes())
PYEOF
fi

if want webp; then
convert $T/plasma.ppm -quality 80 $C/webp/rgb_lossy.webp
convert $T/plasma.ppm -define webp:lossless=true $C/webp/rgb_lossless.webp
convert $T/plasma.ppm -alpha set -channel A -fx 'j/h' +channel -quality 70 $C/webp/rgba_lossy.webp
convert $T/plasma.ppm -alpha set -channel A -fx 'i/w' +channel -define webp:lossless=true \
	$C/webp/rgba_lossless.webp
convert -delay 10 $T/plasma.ppm \( $T/plasma.ppm -negate \) -loop 0 $C/webp/animated.webp
fi

if want avif; then
convert $T/plasma.ppm -quality 60 $C/avif/rgb444.avif
convert $T/plasma.ppm -quality 60 -define heic:chroma=420 $C/avif/rgb420.avif
convert $T/plasma.ppm -colorspace gray -quality 60 $C/avif/gray.avif
# an ispe box (the container's size) larger than the AV1 frame: libavif 0.11 answers the ispe
# size, copying the frame into it
$PY - "$C/avif/rgb444.avif" "$C/avif/ispe_taller.avif" <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.index(b'ispe') + 8
w, h = struct.unpack('>II', d[i:i + 8])
d[i:i + 8] = struct.pack('>II', w, h * 2)
open(sys.argv[2], 'wb').write(bytes(d))
PYEOF
fi

if want tiff; then
# libtiff's writers (ImageMagick, tiffcp): every layout and compression the decoder reads
convert $T/plasma.ppm -depth 8 -compress LZW $C/tiff/rgb8_lzw.tif
convert $T/plasma.ppm -depth 16 -compress Zip $C/tiff/rgb16_zip.tif
convert $T/plasma.ppm -colorspace gray -depth 8 -compress RLE $C/tiff/gray8_packbits.tif
convert $T/plasma.ppm -colorspace gray -depth 8 -define tiff:photometric=min-is-white \
	-compress None $C/tiff/gray8_miniswhite.tif
convert $T/plasma.ppm -alpha set -channel A -fx 'i/w' +channel -depth 8 \
	-define tiff:alpha=associated -compress LZW $C/tiff/rgba8_assoc.tif
convert $T/plasma.ppm -colorspace gray -alpha set -channel A -fx 'j/h' +channel -depth 16 \
	-define tiff:alpha=unassociated -compress Zip $C/tiff/graya16.tif
convert $T/plasma.ppm -define quantum:format=floating-point -depth 32 -compress Zip \
	-define tiff:predictor=3 $C/tiff/rgb_f32.tif
convert $T/plasma.ppm -define quantum:format=floating-point -depth 16 -compress Zip \
	$C/tiff/rgb_f16.tif
convert $T/plasma.ppm -colors 16 -type Palette -compress LZW $C/tiff/palette.tif
convert $T/plasma.ppm -monochrome -compress Group4 $C/tiff/bilevel_g4.tif
convert $T/plasma.ppm -orient RightTop -compress None $C/tiff/orient6.tif
convert $T/plasma.ppm -quality 80 -compress JPEG $C/tiff/ycbcr_jpeg.tif
convert $T/plasma.ppm -depth 8 -compress None $T/rgb8.tif
tiffcp -t -w 16 -l 16 -c zip $T/rgb8.tif $C/tiff/tiled_zip.tif
tiffcp -p separate -c lzw:2 $T/rgb8.tif $C/tiff/planar_lzw.tif
tiffcp -8 -r 3 $T/rgb8.tif $C/tiff/bigtiff_strips3.tif
fi

if want heic; then
# libheif's heif-enc (x265): 8-bit 4:2:0, lossless 4:4:4, alpha, 10-bit
convert $T/plasma.ppm -depth 8 $T/p8.png
convert $T/plasma.ppm -alpha set -channel A -fx 'i/w' +channel -depth 8 PNG32:$T/pa8.png
convert $T/plasma.ppm -depth 16 PNG48:$T/p16.png
heif-enc -q 50 -o $C/heic/rgb420.heic $T/p8.png >/dev/null
heif-enc -L -p chroma=444 -o $C/heic/lossless444.heic $T/p8.png >/dev/null
heif-enc -q 50 -o $C/heic/rgba.heic $T/pa8.png >/dev/null
heif-enc -q 50 -b 10 -o $C/heic/rgb10.heic $T/p16.png >/dev/null
fi

if want npy; then
$PY - "$C/npy" <<'PYEOF'
import numpy as np, numpy.lib.format as F, sys
d = sys.argv[1]
rng = np.random.default_rng(9)
np.save(d + '/f4_2d.npy', rng.standard_normal((4, 5)).astype('<f4'))
np.save(d + '/f8_1d.npy', rng.standard_normal(7))
np.save(d + '/c8_3d.npy', (rng.standard_normal((2, 3, 2)) + 1j).astype('<c8'))
np.save(d + '/c16_4d.npy', (rng.standard_normal((2, 1, 2, 2)) * 1j).astype('<c16'))
np.save(d + '/f4_be.npy', np.arange(6, dtype='>f4'))
np.save(d + '/scalar.npy', np.float64(3.5))
with open(d + '/v2.npy', 'wb') as f:
    F.write_array(f, np.ones((3, 3), np.float32), version=(2, 0))
with open(d + '/v3.npy', 'wb') as f:
    F.write_array(f, np.ones((2,), np.complex64), version=(3, 0))
PYEOF
fi

# the daemon's JPEG path (planes): every subsampling the planes carry (and 4:1:1, which they do
# not), sizes that are not whole MCUs, EXIF orientations that swap the sides, restart markers,
# progressive and Huffman-optimised scans, and a file cut short
if want jpeg_yuv; then
D=$C/jpeg_yuv
convert $T/plasma.ppm -crop 15x9+0+0 +repage $T/odd.ppm
for sf in 1x1 2x1 2x2 1x2 4x1; do
	convert $T/plasma.ppm -quality 80 -sampling-factor $sf $D/s$sf.jpg
	convert $T/odd.ppm -quality 80 -sampling-factor $sf $D/odd_s$sf.jpg
done
convert $T/plasma.ppm -colorspace gray -quality 80 $D/gray.jpg
convert $T/odd.ppm -colorspace gray -quality 80 $D/odd_gray.jpg
convert $T/plasma.ppm -quality 80 -sampling-factor 2x2 -interlace JPEG $D/progressive420.jpg
convert $T/odd.ppm -quality 80 -define jpeg:restart-interval=1 $D/restart.jpg
convert $T/plasma.ppm -quality 60 -define jpeg:optimize-coding=true $D/optimized.jpg
convert $T/plasma.ppm -resize 1x1! -quality 90 $D/one.jpg
convert $T/plasma.ppm -colorspace CMYK $D/cmyk.jpg
$PY - "$D" <<'PYEOF'
import struct, sys
d = sys.argv[1]
def exif(src, dst, o):
    b = open(src, 'rb').read()
    tiff = b'II*\x00' + struct.pack('<I', 8) + struct.pack('<H', 1) + \
           struct.pack('<HHIHH', 0x0112, 3, 1, o, 0) + struct.pack('<I', 0)
    app1 = b'Exif\x00\x00' + tiff
    open(dst, 'wb').write(b[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + b[2:])
exif(d + '/odd_s2x2.jpg', d + '/odd_s2x2_exif6.jpg', 6)
exif(d + '/odd_s2x1.jpg', d + '/odd_s2x1_exif8.jpg', 8)
b = open(d + '/s2x2.jpg', 'rb').read()
open(d + '/truncated.jpg', 'wb').write(b[:len(b) * 2 // 3])
PYEOF
fi

# the GPU entropy decoder's input (cjpeg, libjpeg-turbo-progs): every sampling it takes, restart
# intervals of 1 and 2 MCUs and a row, optimised tables, quality 100, sizes not whole MCUs,
# grey, and a progressive file it leaves to libjpeg
if want jpeg_scan; then
D=$C/jpeg_scan
convert $T/plasma.ppm -crop 15x9+0+0 +repage $T/odd.ppm
convert $T/plasma.ppm -resize 40x24! $T/small.ppm
for sf in 1x1 2x1 2x2 1x2; do
	cjpeg -quality 80 -sample $sf $T/small.ppm > $D/s$sf.jpg
	cjpeg -quality 90 -sample $sf -restart 1B $T/odd.ppm > $D/odd_r1_s$sf.jpg
done
cjpeg -quality 75 -restart 2B -optimize $T/small.ppm > $D/r2_opt.jpg
cjpeg -quality 100 -restart 1 $T/small.ppm > $D/q100_row.jpg
cjpeg -quality 60 -grayscale -restart 3B $T/odd.ppm > $D/gray_r3.jpg
cjpeg -quality 80 -progressive $T/small.ppm > $D/progressive.jpg
fi

# multipart/form-data: a Content-Type line, then the body. Bodies as curl -F and browsers make
# them (the daemon's image, kernel and params parts), with a preamble and an epilogue, quoted
# and escaped names, a part without headers, binary data holding CRLF, dashes and the boundary's
# text, and hostile shapes: duplicate parts, an unclosed quote, NUL in a name, a missing close
if want multipart; then
$PY - "$C/multipart" <<'PYEOF'
import os, sys
d = sys.argv[1]
png = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000001000000010806000000'
                    '1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5f4'
                    '3a9c0000000049454e44ae426082')
def part(b, name, data, ctype=None, filename=None, extra=b''):
    h = b'--' + b + b'\r\nContent-Disposition: form-data; name="' + name + b'"'
    if filename is not None:
        h += b'; filename="' + filename + b'"'
    h += b'\r\n'
    if ctype:
        h += b'Content-Type: ' + ctype + b'\r\n'
    return h + extra + b'\r\n' + data + b'\r\n'
def seed(fn, ct, body):
    open(os.path.join(d, fn), 'wb').write(ct + b'\n' + body)
b = b'------------------------d74496d66958873e'
seed('curl_image_kernel_params', b'multipart/form-data; boundary=' + b,
     part(b, b'image', png, b'image/png', b'frame.png') +
     part(b, b'kernel', png, b'application/octet-stream', b'k.png') +
     part(b, b'params', b'{"format":"png","threshold":0.5}', b'application/json') +
     b'--' + b + b'--\r\n')
b = b'----WebKitFormBoundary7MA4YWxkTrZu0gW'
seed('browser_quoted', b'multipart/form-data; charset=utf-8; boundary="' + b + b'"',
     b'This is the preamble.\r\n\r\n' +
     part(b, b'image', png, b'image/png', b'we \\"quote\\".png') +
     b'--' + b + b'--\r\nepilogue\r\n')
b = b'XyZ--b0undary'
seed('binary_lookalikes', b'Multipart/Form-Data;BOUNDARY=' + b,
     part(b, b'image', b'\r\n--XyZ--b0undar\r\n\r\n--' + png + b'\r\n-', b'image/png') +
     b'--' + b + b'--')
seed('no_headers', b'multipart/form-data; boundary=a',
     b'--a\r\n\r\nbare\r\n--a \t\r\nContent-Disposition: form-data; name=image\r\n\r\nx\r\n--a--')
seed('duplicate_parts', b'multipart/form-data; boundary=dup',
     part(b'dup', b'image', png) + part(b'dup', b'image', b'second') + b'--dup--\r\n')
seed('unclosed_quote', b'multipart/form-data; boundary=q',
     b'--q\r\nContent-Disposition: form-data; name="image\r\n\r\ndata\r\n--q--\r\n')
seed('nul_in_name', b'multipart/form-data; boundary=n',
     part(b'n', b'ima\x00ge', b'data') + b'--n--\r\n')
seed('not_closed', b'multipart/form-data; boundary=c',
     part(b'c', b'image', b'data') + b'--c')
seed('many_parts', b'multipart/form-data; boundary=m',
     b''.join(part(b'm', b'p%d' % i, b'%d' % i) for i in range(9)) + b'--m--\r\n')
seed('long_header', b'multipart/form-data; boundary=h',
     part(b'h', b'image', b'data', extra=b'X-Long: ' + b'v' * 3000 + b'\r\n') + b'--h--\r\n')
seed('boundary_70', b'multipart/form-data; boundary=' + b'b' * 70,
     part(b'b' * 70, b'image', b'd') + b'--' + b'b' * 70 + b'--')
seed('not_multipart', b'image/png', png)
PYEOF
fi

# query strings as the daemon gets them after '?': the README's and the tests' requests, every
# parameter once, and hostile ones (%00 inside a name or value, '+', bare keys, empty pairs,
# repeated keys, bad escapes, huge numbers)
if want query; then
$PY - "$C/query" <<'PYEOF'
import os, sys
d = sys.argv[1]
seeds = {
    'readme_bloom': 'kernel_preset=glare&threshold=0.5&intensity=40',
    'readme_named': 'kernel=cross&threshold=0.5&intensity=5&format=exr',
    'test_bloom': 'threshold=0.6&intensity=0.8&kernel_preset=gaussian:sigma=2&format=pfm',
    'composite': 'composite=mix&mix=0.25&knee=0.1&clamp_max=100&quality=85&format=jpeg',
    'engine': 'pad=pow2&precision=fp16&technique=blocked&twiddles=table&normalize=none',
    'center_px': 'kernel_center=3,4&kernel_scale=0.5',
    'center_uv': 'kernel-center=uv:0.25,1&format=PNG16',
    'aperture': 'kernel_preset=aperture:blades=5,rotation=10,radius=0.3,size=63',
    'escapes': 'kernel_preset=gaussian%3Asigma%3D3&threshold=1e-3&intensity=%31',
    'plus': 'kernel_center=1,+2&format=j+peg',
    'nul': 'kernel=abc%00&threshold=0.5%00x',
    'bare': 'threshold&&=&format=&quality',
    'repeat': 'threshold=0.1&threshold=0.2&threshold=99999',
    'bad_escape': 'kernel=%zz%4&intensity=%',
    'huge': 'clamp_max=1e39&intensity=inf&mix=nan&quality=100000000000000000000',
    'unknown': 'sigma=2',
}
for k, v in seeds.items():
    open(os.path.join(d, k), 'w').write(v)
PYEOF
fi

# tensor requests: a first line (its first byte picks conv2d, even, or the transpose, odd; then
# parameters as a query) and the input, weight and optional bias NPYs, each after a 4-byte
# little-endian length: the tests' shapes, every parameter, and sizes at the edges of wrapping
if want tensor; then
$PY - "$C/tensor" <<'PYEOF'
import io, os, struct, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()
def seed(name, t, params, *arrays):
    out = (('1' if t else '0') + params + '\n').encode()
    for a in arrays:
        blob = a if isinstance(a, bytes) else npy(a)
        out += struct.pack('<I', len(blob)) + blob
    open(os.path.join(d, name), 'wb').write(out)
f4 = lambda *s: rng.standard_normal(s).astype('<f4')
seed('conv_basic', 0, 'padding=1,1&stride=1,1&groups=1', f4(2, 3, 13, 11), f4(4, 3, 3, 3), f4(4))
seed('conv_groups', 0, 'padding=2,0&stride=2,3&groups=2&dilation=2', f4(1, 4, 9, 9), f4(2, 2, 5, 3))
seed('conv_3d', 0, 'precision=0&algorithm=batch4', f4(3, 8, 10), rng.standard_normal((3, 3, 1, 1)))
seed('conv_empty_out', 0, '', f4(3, 8, 8), f4(2, 3, 9, 9))
seed('conv_planes', 0, '', f4(3, 8, 8), f4(2, 4, 3, 3))
seed('conv_bias_len', 0, 'algorithm=shared', f4(1, 2, 5, 5), f4(3, 2, 3, 3), f4(2))
seed('deconv_worked', 1, 'stride=2&method=overlap-add', np.array([[[[1, 2], [3, 4]]]], '<f8'),
     np.arange(1, 10, dtype='<f8').reshape(1, 1, 3, 3))
seed('deconv_torch', 1, 'padding=1,0&stride=2,3&dilation=2,1&groups=2&output_padding=1,2&method=subkernel&conv_algorithm=planes4',
     f4(2, 4, 7, 6), f4(4, 3, 3, 2), f4(6))
seed('deconv_same', 1, 'padding_mode=tf_same&output_shape=4,4&stride=2', f4(1, 1, 2, 2), f4(1, 1, 3, 3))
seed('deconv_valid', 1, 'padding_mode=tf_valid&stride=3&method=zero-insert', f4(1, 2, 3, 5), f4(2, 1, 4, 4))
# issue 35, item 1's request in small: dilation 65535 (there 32768 planes made 2^64 bytes)
seed('deconv_dilation', 1, 'dilation=65535&method=overlap-add', f4(4, 1, 1, 1), f4(1, 4, 2, 2))
seed('deconv_big_stride', 1, 'stride=65535,65535&padding=0', f4(1, 1, 3, 3), f4(1, 1, 2, 2))
seed('bad_param', 0, 'threshold=1&padding=-1', f4(1, 1, 3, 3), f4(1, 1, 1, 1))
seed('bad_npy', 1, '', b'\x93NUMPY\x01\x00\x10\x00{"descr": "<f4", ', f4(1, 1, 1, 1))
PYEOF
fi

# raw HTTP requests as fuzz_http sends them to the daemon's server: every route and method, CORS
# preflights, raw, multipart and chunked bodies, pipelining, and what the hostile review sent
# (space before a colon, both framings, a bad Content-Length, %ff, ~2,000 '&', HTTP/1.0)
if want http; then
$PY - "$C/http" <<'PYEOF'
import os, sys
d = sys.argv[1]
H = 'Host: localhost\r\n'
png = (b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00'
       b'\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef'
       b'\x00\x00\x00\x00IEND\xaeB`\x82')
def mp(parts, b='XyZ'):
    out = b''
    for name, data, fn in parts:
        out += b'--' + b.encode() + b'\r\nContent-Disposition: form-data; name="' + name.encode() + b'"'
        out += (b'; filename="' + fn.encode() + b'"' if fn else b'') + b'\r\n\r\n' + data + b'\r\n'
    return out + b'--' + b.encode() + b'--\r\n'
def post(path, body, ct=None, extra=''):
    h = 'POST %s HTTP/1.1\r\n%s%sContent-Length: %d\r\n%s\r\n' % (
        path, H, 'Content-Type: %s\r\n' % ct if ct else '', len(body), extra)
    return h.encode() + body
seeds = {
    'healthz': 'GET /healthz HTTP/1.1\r\n' + H + '\r\n',
    'head_readyz': 'HEAD /readyz HTTP/1.1\r\n' + H + '\r\n',
    'info': 'GET /v1/info HTTP/1.1\r\n' + H + 'Accept: */*\r\n\r\n',
    'metrics': 'GET /metrics HTTP/1.1\r\n' + H + '\r\n',
    'openapi': 'GET /openapi.json HTTP/1.1\r\n' + H + '\r\n',
    'web': 'GET / HTTP/1.1\r\n' + H + 'Accept-Encoding: gzip\r\n\r\n',
    'kernels': 'GET /v1/kernels HTTP/1.1\r\n' + H + '\r\n',
    'kernel_missing': 'DELETE /v1/kernels/nope HTTP/1.1\r\n' + H + '\r\n',
    'images': 'GET /v1/images HTTP/1.1\r\n' + H + '\r\n',
    'bloom_get': 'GET /v1/bloom/photo?threshold=0.5&format=webp&sig=abc&expires=99 HTTP/1.1\r\n' + H + '\r\n',
    'options_cors': 'OPTIONS /v1/bloom HTTP/1.1\r\n' + H + 'Origin: http://app.example\r\n'
                    'Access-Control-Request-Method: POST\r\n\r\n',
    'pipelined': 'GET /healthz HTTP/1.1\r\n' + H + '\r\nGET /v1/kernels HTTP/1.1\r\n' + H +
                 '\r\nHEAD /metrics HTTP/1.1\r\n' + H + 'Connection: close\r\n\r\n',
    'http10': 'GET /healthz HTTP/1.0\r\n\r\n',
    'no_host': 'GET /healthz HTTP/1.1\r\n\r\n',
    'bad_method': 'BREW /v1/bloom HTTP/1.1\r\n' + H + '\r\n',
    'pct_ff': 'GET /%ff?threshold=%ff HTTP/1.1\r\n' + H + 'Accept: \xff\r\n\r\n',
    'nul_target': 'GET /v1/kernels/a%00b HTTP/1.1\r\n' + H + '\r\n',
    'many_amps': 'GET /v1/info?' + '&' * 2000 + ' HTTP/1.1\r\n' + H + '\r\n',
    'space_colon': 'POST /v1/bloom HTTP/1.1\r\n' + H + 'Content-Length : 5\r\n\r\nabcde',
    'both_framings': 'POST /v1/bloom HTTP/1.1\r\n' + H + 'Content-Length: 5\r\n'
                     'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'bad_length': 'POST /v1/bloom HTTP/1.1\r\n' + H + 'Content-Length: 5x\r\n\r\nabcde',
    'two_lengths': 'POST /v1/bloom HTTP/1.1\r\n' + H + 'Content-Length: 5\r\nContent-Length: 6\r\n\r\nabcde',
    'te_gzip': 'POST /v1/bloom HTTP/1.1\r\n' + H + 'Transfer-Encoding: gzip\r\n\r\n',
    'auth': 'GET /v1/info HTTP/1.1\r\n' + H + 'Authorization: Bearer s3cret\r\nX-Request-Id: abc-1\r\n\r\n',
    'expect': 'POST /v1/convolve HTTP/1.1\r\n' + H + 'Expect: 100-continue\r\nContent-Length: 0\r\n\r\n',
}
for k, v in seeds.items():
    open(os.path.join(d, k), 'wb').write(v.encode('latin-1'))
bins = {
    'bloom_raw': post('/v1/bloom?kernel_preset=gaussian:sigma=2&threshold=0.5&format=png', png),
    'bloom_multipart': post('/v1/bloom', mp([('image', png, 'a.png'), ('threshold', b'0.5', None),
                            ('params', b'{"intensity": 2, "format": "jpeg"}', None)]),
                            'multipart/form-data; boundary=XyZ'),
    'bloom_quoted': post('/v1/bloom', mp([('image', png, 'x;name=kernel;'), ('params', b'{}', None)]),
                         'multipart/form-data; boundary="XyZ"'),
    'conv2d': post('/v1/conv2d?padding=1', mp([('input', b'\x93NUMPY', 'x.npy'), ('weight', b'', 'w.npy')]),
                   'multipart/form-data; boundary=XyZ'),
    'chunked': b'POST /v1/bloom HTTP/1.1\r\n' + H.encode() + b'Transfer-Encoding: chunked\r\n\r\n' +
               b'%x\r\n' % len(png) + png + b'\r\n0\r\n\r\n',
    'kernel_put': b'PUT /v1/kernels/star HTTP/1.1\r\n' + H.encode() + b'Content-Length: %d\r\n\r\n' % len(png) + png,
    'image_put': b'PUT /v1/images/photo HTTP/1.1\r\n' + H.encode() + b'Content-Length: %d\r\n\r\n' % len(png) + png,
    'accept_406': post('/v1/bloom', png, 'image/png', 'Accept: text/html\r\n'),
}
for k, v in bins.items():
    open(os.path.join(d, k), 'wb').write(v)
PYEOF
fi

# the API's header and list parsers: first line a, rest b (Accept headers as browsers and curl
# send them, CORS origin lists with the origin, --warm-sizes, --gpus, names, keys)
if want apiutil; then
$PY - "$C/apiutil" <<'PYEOF'
import os, sys
d = sys.argv[1]
seeds = {
    'accept_browser': 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\n',
    'accept_img': 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8\n',
    'accept_q': 'image/png;q=0.5, image/x-exr;q=0.9 ,image/jpeg;level=1;q=0.7\n',
    'accept_wild': 'image/*;q=1,image/png;q=0.2\n',
    'accept_badq': 'image/png;q=,image/x-pfm;Q=1e400;q=nan\n',
    'origins': 'http://app.example, https://b.example:8443\nhttps://b.example:8443',
    'origins_star': '*\nhttp://evil.example',
    'origins_prefix': 'http://app.example.evil\nhttp://app.example',
    'sizes': '64x48,1920X1080,1x1\n',
    'sizes_bad': '64x48,,0x5,99999999999999999999x2\n',
    'gpus': '0,1,2\nall',
    'gpus_all': 'all\n0,0',
    'name': 'my-kernel.v2_1\n.hidden',
    'name_bad': 'abc\x1b[31m\r\nkey',
    'key': 's3cr3t-key\ns3cr3t-kez',
}
for k, v in seeds.items():
    open(os.path.join(d, k), 'w').write(v)
PYEOF
fi
# ICC profiles (the icc target): lcms2's sRGB, Display P3 and Adobe RGB (1998) matrix-shapers in
# ICC v4 and v2, a grey gamma 2.2, a Lab profile (a colour space no image here has), a device
# link, a tabulated (LUT-based) RGB profile, and a P3 profile cut short
if want icc; then
cat >$T/icc.c <<'CEOF'
#include <lcms2.h>
#include <stdio.h>
static void save(cmsHPROFILE p, const char *path, cmsUInt32Number cut)
{
	cmsUInt32Number n = 0;
	static unsigned char b[1 << 20];
	cmsSaveProfileToMem(p, NULL, &n);
	cmsSaveProfileToMem(p, b, &n);
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, cut && cut < n ? cut : n, f);
	fclose(f);
}
static cmsHPROFILE rgb(const double xy[8], cmsToneCurve *c, const char *desc)
{
	cmsCIExyY w = {xy[6], xy[7], 1};
	cmsCIExyYTRIPLE t = {{xy[0], xy[1], 1}, {xy[2], xy[3], 1}, {xy[4], xy[5], 1}};
	cmsToneCurve *cs[3] = {c, c, c};
	cmsHPROFILE p = cmsCreateRGBProfile(&w, &t, cs);
	cmsMLU *m = cmsMLUalloc(NULL, 1);
	cmsMLUsetASCII(m, "en", "US", desc);
	cmsWriteTag(p, cmsSigProfileDescriptionTag, m);
	cmsMLUfree(m);
	return p;
}
int main(int argc, char **argv)
{
	(void)argc;
	char p[512];
	static const double p3[8] = {0.68, 0.32, 0.265, 0.69, 0.15, 0.06, 0.3127, 0.329};
	static const double adobe[8] = {0.64, 0.33, 0.21, 0.71, 0.15, 0.06, 0.3127, 0.329};
	static const double srgbp[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
	cmsToneCurve *sc = cmsBuildParametricToneCurve(NULL, 4, srgbp), *g = cmsBuildGamma(NULL, 2.2);
	snprintf(p, sizeof p, "%s/srgb_v4.icc", argv[1]); save(cmsCreate_sRGBProfile(), p, 0);
	cmsHPROFILE d = rgb(p3, sc, "Display P3 (lcms2)");
	snprintf(p, sizeof p, "%s/p3_v4.icc", argv[1]); save(d, p, 0);
	snprintf(p, sizeof p, "%s/p3_cut.icc", argv[1]); save(d, p, 300);
	cmsHPROFILE a = rgb(adobe, cmsBuildGamma(NULL, 563.0 / 256), "Adobe RGB (1998) (lcms2)");
	cmsSetProfileVersion(a, 2.1);
	snprintf(p, sizeof p, "%s/adobe_v2.icc", argv[1]); save(a, p, 0);
	cmsCIExyY d65 = {0.3127, 0.329, 1};
	snprintf(p, sizeof p, "%s/gray22.icc", argv[1]); save(cmsCreateGrayProfile(&d65, g), p, 0);
	snprintf(p, sizeof p, "%s/lab.icc", argv[1]); save(cmsCreateLab4Profile(NULL), p, 0);
	cmsHTRANSFORM t = cmsCreateTransform(d, TYPE_RGB_16, cmsCreate_sRGBProfile(), TYPE_RGB_16,
	                                     INTENT_PERCEPTUAL, 0);
	snprintf(p, sizeof p, "%s/link.icc", argv[1]); save(cmsTransform2DeviceLink(t, 4.3, cmsFLAGS_GRIDPOINTS(5)), p, 0);
	/* a LUT-based RGB profile: the P3 -> XYZ transform sampled into an AToB0 table */
	cmsHPROFILE lut = cmsCreateProfilePlaceholder(NULL);
	cmsSetDeviceClass(lut, cmsSigDisplayClass);
	cmsSetColorSpace(lut, cmsSigRgbData);
	cmsSetPCS(lut, cmsSigXYZData);
	cmsPipeline *pl = cmsPipelineAlloc(NULL, 3, 3);
	cmsStage *clut = cmsStageAllocCLut16bit(NULL, 5, 3, 3, NULL);
	cmsPipelineInsertStage(pl, cmsAT_END, clut);
	cmsWriteTag(lut, cmsSigAToB0Tag, pl);
	cmsWriteTag(lut, cmsSigMediaWhitePointTag, cmsD50_XYZ());
	snprintf(p, sizeof p, "%s/lut_rgb.icc", argv[1]); save(lut, p, 0);
	return 0;
}
CEOF
cc -o $T/icc $T/icc.c -llcms2
$T/icc $C/icc
fi
du -sh $C/*
