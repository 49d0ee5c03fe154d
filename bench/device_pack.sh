#!/bin/sh
# Packs what a GPU machine without a package registry needs to run fftbloom: the built binaries
# (programs and test binaries) and every shared library they load that is not the GL loader
# (glvnd comes from .gl/, unpacked there) or libc. Output: .carry/ (ignored by git).
set -eu
BUILD=${BUILD:-build}
rm -rf .carry
mkdir -p .carry/lib .carry/bin
cp "$BUILD"/fftbloom "$BUILD"/fftbloomd .carry/bin/
if [ -d "$BUILD/bench" ]; then # the end-to-end tools, where they are built
	mkdir -p .carry/bin/bench
	for b in loadgen codec_ceiling fftw_peer encode_formats; do
		[ -x "$BUILD/bench/$b" ] && cp "$BUILD/bench/$b" .carry/bin/bench/
	done
fi
if [ -d "$BUILD/tests" ]; then
	mkdir -p .carry/tests
	(cd "$BUILD/tests" && find . -type f -name 'test_*' ! -name '*.[od]' -exec cp --parents {} ../../.carry/tests/ \;)
fi
for b in $(find .carry/bin .carry/tests -type f 2>/dev/null); do
	ldd "$b" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libEGL*|libGLES*|libGLdispatch*|libGLX*|libGL.so*|libOpenGL*) ;;
	*) cp -L "$lib" .carry/lib/ ;;
	esac
done
du -sh .carry
