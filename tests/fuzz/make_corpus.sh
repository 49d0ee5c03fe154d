#!/bin/sh
# Regenerates the fuzz seed corpus in tests/fuzz/corpus/<fmt>/ from other programs' writers:
# ImageMagick (PNG, JPEG, HDR, PFM, WebP through libwebp, AVIF through libheif and libaom),
# OpenCV (EXR, HDR, PFM), OpenEXR's exrmaketiled (tiled EXR
# in every compression), numpy (NPY), plus a JPEG with an EXIF orientation. Small images only:
# each seed is a few KB. Run from the repository root; needs `make deps-test`.
set -e
C=tests/fuzz/corpus
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/png $C/jpeg $C/exr $C/hdr $C/pfm $C/webp $C/avif $C/npy

# a smooth image with some noise: realistic for the codecs, small once compressed
convert -size 16x12 -seed 3 gradient:red-blue \( +clone +noise Gaussian \) -compose blend \
	-define compose:args=20 -composite -depth 16 $T/plasma.ppm
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

cp $T/cv.hdr $C/hdr/opencv.hdr
convert $T/plasma.ppm $C/hdr/imagemagick.hdr
convert -size 40x3 gradient:white-black $C/hdr/imagemagick_wide.hdr
cp $T/cv.pfm $C/pfm/opencv.pfm
convert $T/plasma.ppm $C/pfm/imagemagick.pfm
convert $T/plasma.ppm -colorspace gray $C/pfm/imagemagick_gray.pfm
$PY - "$C/pfm/bigendian.pfm" <<'PYEOF'
import numpy as np, sys
a = np.arange(12, dtype='>f4').reshape(3, 4) / 7
open(sys.argv[1], 'wb').write(b'Pf\n4 3\n1.0\n' + a[::-1].tobytes())
PYEOF

convert $T/plasma.ppm -quality 80 $C/webp/rgb_lossy.webp
convert $T/plasma.ppm -define webp:lossless=true $C/webp/rgb_lossless.webp
convert $T/plasma.ppm -alpha set -channel A -fx 'j/h' +channel -quality 70 $C/webp/rgba_lossy.webp
convert $T/plasma.ppm -alpha set -channel A -fx 'i/w' +channel -define webp:lossless=true \
	$C/webp/rgba_lossless.webp
convert -delay 10 $T/plasma.ppm \( $T/plasma.ppm -negate \) -loop 0 $C/webp/animated.webp
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
du -sh $C/*
