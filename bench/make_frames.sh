#!/bin/sh
# Test frames for bench/e2e.sh: python3-skimage's colour photographs scaled and cropped to each
# size, with Gaussian noise so no two frames (or runs) are alike, as 4:2:0 JPEG at quality 90.
# usage: make_frames.sh DIR [WxH:COUNT ...]   (files already there are kept)
set -eu
dir=${1:?usage: make_frames.sh DIR [WxH:COUNT ...]}
shift
[ $# -gt 0 ] || set -- 1920x1080:8 640x360:8 1280x720:2 480x270:2
data=/usr/lib/python3/dist-packages/skimage/data
photos="astronaut.png chelsea.png coffee.png motorcycle_left.png rocket.jpg hubble_deep_field.jpg
        retina.jpg motorcycle_right.png"
command -v convert >/dev/null || { echo "make_frames.sh: needs ImageMagick's convert" >&2; exit 1; }
for spec in "$@"; do
	size=${spec%%:*}
	count=${spec#*:}
	mkdir -p "$dir/$size"
	i=0
	while [ "$i" -lt "$count" ] && [ "$i" -lt 64 ]; do
		set -- $photos
		n=$(( i % $# + 1 ))
		eval photo=\$$n
		out="$dir/$size/frame$i.jpg"
		if [ ! -s "$out" ]; then
			[ -r "$data/$photo" ] || { echo "make_frames.sh: no $data/$photo (python3-skimage)" >&2; exit 1; }
			convert -quiet "$data/$photo" -colorspace sRGB -type TrueColor -resize "$size^" -gravity center \
			  -extent "$size" -seed $((i + 1)) -attenuate 0.25 +noise Gaussian \
			  -sampling-factor 4:2:0 -quality 90 "$out"
		fi
		i=$((i + 1))
	done
	echo "$dir/$size: $(ls "$dir/$size" | wc -l) frames"
done
