#!/bin/sh
# The examples against a staged install (make install DESTDIR=... PREFIX=/usr): examples/bloom.c
# built with `cc bloom.c $(pkg-config --cflags --libs fftbloom)` (PKG_CONFIG_PATH and
# PKG_CONFIG_SYSROOT_DIR into the stage) and run on this machine's GL (llvmpipe in CI), then
# linked with the static library and run on the first one's output; examples/bloom.py with the
# installed module. Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | tail -15 | sed 's/^/     /'; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/stage
if out=$(make -s -C "$ROOT" BUILD="$BUILD" install DESTDIR="$D" PREFIX=/usr 2>&1); then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	bad "make install DESTDIR=... PREFIX=/usr" "$out"
	echo "SCRIPT: $pass passed, $fail failed"; exit 1
fi
export PKG_CONFIG_PATH="$D/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D"
v=$(pkg-config --modversion fftbloom 2>&1)
[ -n "$v" ] && pkg-config --exists fftbloom && ok "pkg-config finds fftbloom $v" || bad "pkg-config finds fftbloom" "$v"

cd "$tmp" || exit 1
# LDFLAGS: make sanitize's (-fsanitize=...), which a program linking its library needs too
if out=$(cc -std=c11 -Wall -Wextra -Werror $LDFLAGS -o bloom "$ROOT/examples/bloom.c" $(pkg-config --cflags --libs fftbloom) -lm 2>&1); then
	ok "cc examples/bloom.c \$(pkg-config --cflags --libs fftbloom)"
	if out=$(LD_LIBRARY_PATH="$D/usr/lib" ./bloom 2>&1) && [ -s bloom.exr ]; then
		ok "examples/bloom.c runs and writes bloom.exr: $out"
	else
		bad "examples/bloom.c runs" "$out"
	fi
else
	bad "examples/bloom.c builds with pkg-config" "$out"
fi
libs=$(pkg-config --static --libs-only-l fftbloom | sed 's/-lfftbloom//')
if out=$(cc -std=c11 $LDFLAGS -o bloom_static "$ROOT/examples/bloom.c" $(pkg-config --cflags fftbloom) "$D/usr/lib/libfftbloom.a" $libs -lm 2>&1); then
	if ldd bloom_static | grep -q fftbloom; then
		bad "the static build needs no libfftbloom.so" "$(ldd bloom_static)"
	elif [ -s bloom.exr ] && out=$(./bloom_static bloom.exr again.exr 2>&1) && [ -s again.exr ]; then
		ok "examples/bloom.c linked with libfftbloom.a runs on bloom.exr: $out"
	else
		bad "examples/bloom.c linked with libfftbloom.a runs" "$out"
	fi
else
	bad "examples/bloom.c links with libfftbloom.a and pkg-config --static's libraries" "$out"
fi
pre="" # make sanitize's library loads into python3 after AddressSanitizer's runtime only
ldd "$D/usr/lib/libfftbloom.so.0" | grep -q libasan && pre=$(${CC:-cc} -print-file-name=libasan.so)
if out=$(LD_PRELOAD="$pre" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" PYTHONPATH="$D/usr/lib/python3/dist-packages" FFTBLOOM_LIBRARY="$D/usr/lib/libfftbloom.so.0" \
	/usr/bin/python3 "$ROOT/examples/bloom.py" py.exr 2>&1) && [ -s py.exr ]; then
	ok "examples/bloom.py runs with the installed module: $out"
else
	bad "examples/bloom.py runs with the installed module" "$out"
fi
echo "SCRIPT: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
