#!/bin/sh
# Makes the README's before/after picture: the Hubble deep field photograph that Debian's
# python3-skimage ships, bloomed with the built-in aperture kernel. Run by `make picture`.
set -eu
BUILD=${BUILD:-build}
src=/usr/lib/python3/dist-packages/skimage/data/hubble_deep_field.jpg
tmp=$(mktemp -d)
"$BUILD"/fftbloom bloom "$src" -o "$tmp/after.jpg" --quality 95 \
	--kernel-preset aperture:blades=6,rotation=10,size=511 --threshold 0.6 --knee 0.2 --intensity 20
convert "$src" -crop 500x436+250+218 +repage "$tmp/b.png"
convert "$tmp/after.jpg" -crop 500x436+250+218 +repage "$tmp/a.png"
convert "$tmp/b.png" "$tmp/a.png" +append -quality 88 docs/hubble_before_after.jpg
rm -rf "$tmp"
echo "wrote docs/hubble_before_after.jpg"
