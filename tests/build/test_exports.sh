#!/bin/sh
# libfftbloom exports its API and nothing else: the shared library's dynamic symbols (nm -D
# --defined-only) are exactly the functions fftbloom.h declares, every name starts with fftbloom_
# or FFTBLOOM_, the SONAME carries the major version, and the static library's global symbols
# (after ld -r and objcopy --localize-hidden) are the same set. Then, where a reference ABI file
# exists (lib/abi/libfftbloom.so.0.abi, written at a release by `make abi-ref`), abidiff compares
# the library's ABI with it. Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
SO=$BUILD/libfftbloom.so.0
A=$BUILD/libfftbloom.a
H=lib/include/fftbloom.h
REF=${FFTBLOOM_ABI_REF:-lib/abi/libfftbloom.so.0.abi}
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '     %s\n' "$2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the functions the header declares: "FFTBLOOM_API type name(" (a declaration may wrap)
tr '\n' ' ' < "$H" | grep -o 'FFTBLOOM_API [^;(]*(' | sed 's/($//; s/.*[ *]//' | grep '^fftbloom_' | sort -u > "$tmp/header"
n=$(wc -l < "$tmp/header")
[ "$n" -ge 20 ] && ok "fftbloom.h declares $n functions" || bad "fftbloom.h declares $n functions (20 or more expected)"

if [ ! -e "$SO" ] || [ ! -e "$A" ]; then
	bad "$SO and $A are built (make lib)"
	echo "SCRIPT: $pass passed, $fail failed"; exit 1
fi
nm -D --defined-only "$SO" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$tmp/so"
outside=$(grep -v -e '^fftbloom_' -e '^FFTBLOOM_' "$tmp/so" | tr '\n' ' ')
[ -z "$outside" ] && ok "the shared library exports nothing outside fftbloom_/FFTBLOOM_" \
	|| bad "the shared library exports names outside fftbloom_/FFTBLOOM_" "$outside"
grep '^fftbloom_' "$tmp/so" > "$tmp/so_fn"
d=$(diff "$tmp/header" "$tmp/so_fn" | grep '^[<>]' | tr '\n' ' ')
[ -z "$d" ] && ok "the shared library's fftbloom_ symbols are the header's $n functions" \
	|| bad "header (<) and shared library (>) differ" "$d"
soname=$(readelf -d "$SO" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libfftbloom.so.0 ] && ok "SONAME is libfftbloom.so.0" || bad "SONAME is '$soname'"

nm -g --defined-only "$A" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u > "$tmp/a"
outside=$(grep -v -e '^fftbloom_' -e '^FFTBLOOM_' "$tmp/a" | head -20 | tr '\n' ' ')
[ -z "$outside" ] && ok "the static library's global symbols are all fftbloom_ (internal ones localised)" \
	|| bad "the static library has global names outside fftbloom_" "$outside"
d=$(diff "$tmp/header" "$tmp/a" | grep '^[<>]' | tr '\n' ' ')
[ -z "$d" ] && ok "the static library's global symbols are the header's $n functions" \
	|| bad "header (<) and static library (>) differ" "$d"

# functions added are fine within a SONAME (--no-added-syms leaves them out); any other change
# (a type's layout, a signature, a removal) is a break: abidiff's status is then non-zero (a bit
# field: 1 an error, 4 an ABI change, 8 an incompatible one: libabigail counts a struct's new
# layout as the former, so both fail here)
if [ -f "$REF" ]; then
	if ! command -v abidiff >/dev/null; then
		bad "abidiff (abigail-tools) is installed, for $REF"
	else
		out=$(abidiff --no-added-syms --headers-dir2 lib/include "$REF" "$SO" 2>&1); rc=$?
		if [ "$rc" -eq 0 ]; then
			ok "abidiff: the ABI is $REF's, functions added at most"
		else
			bad "abidiff: the ABI changed from $REF's (status $rc): a break needs a new SONAME" \
				"$(echo "$out" | head -20 | tr '\n' ' ')"
		fi
	fi
else
	echo "skip abidiff: no reference ABI ($REF) until the first release (make abi-ref writes it)"
fi
echo "SCRIPT: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
