#!/bin/bash
# Issue 40, the 2160p bloom's row ends taken apart (2026-11-29): the forward rows read the image
# with the prefilter and the inverse rows write the output with the composite (bloom_io.comp),
# 0.11-0.12 ms a direction over the plain row transforms though they move no more memory. Each
# variant is the shader folder with bloom_io.comp changed (--shader-dir; the answers of the
# variants are not blooms, only their times count):
#   base     the sources unchanged, from the folder (the same as the embedded ones)
#   rawload  the load without finite4 and the prefilter (the image's sample as it is)
#   noread   the load without the image: a value made from the index (no memory read)
#   rawstore the store without the composite and the non-finite count (the transform's value)
#   nocheck  the composite kept, the non-finite count left out
#   bare     rawload and rawstore together
#   sumload  finite4 only where the sample's four components sum to a non-finite value
#   sumstore the non-finite count only where the result's components sum to a non-finite value
#   sum      both
#   pitchP   the image read and the output written as if their rows were P elements longer
#            (clamped to the buffer): the same work at a row pitch that is not a multiple of 4 KiB
# and the plain row transforms (bloom.rows.*), for IDS (default the 2160p k512 and 1080p k256
# blooms), each a process, alternated ROUNDS (2)
# times. Stage lines (GPU ...) in io.txt, JSON lines in io.jsonl.
# usage (repository root, a pack in .carry): bash bench/probes/issue40_io.sh
# Here (llvmpipe, build/; a check that every variant compiles and runs, minutes a variant):
#   HERE=1 IDS=bloom.1080p.k256.fp32 ROUNDS=1 RUNS=3 WARMUP=0 WARM_S=0 TIMEOUT=600 bash bench/probes/issue40_io.sh
if [ -n "${HERE:-}" ]; then
	BIN=$PWD/build
else
	P=$PWD/.carry
	. "$P/bench/remote_env.sh" "$P"
	BIN=$P/bin
fi
R=${OUT:-/tmp}/r; mkdir -p "$R"
M=${MACHINE:-h200} IDS=${IDS:-bloom.2160p.k512.fp32,bloom.1080p.k256.fp32}
{ nvidia-smi --query-gpu=name,driver_version --format=csv 2>/dev/null; nproc; date -u; cat "${P:-.}/COMMIT" 2>/dev/null || git rev-parse HEAD; } >"$R/card.txt" 2>&1
V=$R/variants
variant() { # NAME: the folder $V/NAME with bloom_io.comp changed
	mkdir -p "$V/$1"
	cp gles/shaders/*.comp "$V/$1/"
	local f=$V/$1/bloom_io.comp
	case $1 in
	rawload|bare) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = """	vec4 v = finite4(img[row * u_img.x + i]);
	return u_bloom != 0 ? bloom_prefilter(v, u_threshold, u_knee, u_clamp) : v;"""
assert a in s; open(p, "w").write(s.replace(a, "	return img[row * u_img.x + i];"))
PY
	;;
	noread) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = """	vec4 v = finite4(img[row * u_img.x + i]);"""
assert a in s; open(p, "w").write(s.replace(a, "	vec4 v = vec4(float(i), float(row), 0.5, 1.0);"))
PY
	;;
	esac
	case $1 in
	pitch*) python3 - "$f" "${1#pitch}" <<'PY'
import sys
p, pad = sys.argv[1], sys.argv[2]; s = open(p).read()
# the image and the output read and written as if their rows were pad elements longer (clamped
# to the buffer's last element): the same work at another row pitch
at = "min(row * (u_img.x + %su) + i, u_img.x * u_img.y - 1u)" % pad
a = "img[row * u_img.x + i]"
assert a in s; s = s.replace(a, "img[" + at + "]")
a = "	uint at = row * u_img.x + i;"
assert a in s; s = s.replace(a, "	uint at = " + at + ";")
open(p, "w").write(s)
PY
	;;
	esac
	case $1 in
	sumload|sum) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = """	vec4 v = finite4(img[row * u_img.x + i]);"""
b = """	vec4 v = img[row * u_img.x + i];
	float t = v.x + v.y + v.z + v.w; // non-finite when a sample is (or the sum overflows)
	if (isnan(t) || isinf(t))
		v = finite4(v);"""
assert a in s; open(p, "w").write(s.replace(a, b))
PY
	;;
	esac
	case $1 in
	sumstore|sum) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = """	vec4 r = b;
	bool bad = any(isnan(r)) || any(isinf(r));
	if (u_bloom != 0) {
		vec4 x = img[at];
		r = bloom_composite(x, b, u_intensity, u_mix, u_composite);"""
b = """	vec4 r = b;
	vec4 x = vec4(0.0);
	if (u_bloom != 0) {
		x = img[at];
		r = bloom_composite(x, b, u_intensity, u_mix, u_composite);
	}
	float t = r.x + r.y + r.z + r.w; // non-finite when a sample is (or the sum overflows)
	bool bad = false;
	if ((isnan(t) || isinf(t)) && u_bloom == 0)
		bad = any(isnan(r)) || any(isinf(r));
	else if (isnan(t) || isinf(t)) {"""
assert a in s; s = s.replace(a, b)
open(p, "w").write(s)
PY
	;;
	esac
	case $1 in
	rawstore|bare) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = """	uint at = row * u_img.x + i;"""
assert a in s; open(p, "w").write(s.replace(a, a + "\n\to[at] = b;\n\treturn;"))
PY
	;;
	nocheck) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = """	if (bad)
		atomicAdd(nonfinite, 1u);"""
assert a in s; open(p, "w").write(s.replace(a, ""))
PY
	;;
	esac
}
VARS=${VARS:-base rawload noread rawstore nocheck bare}
for v in $VARS; do variant "$v"; done
for r in $(seq "${ROUNDS:-2}"); do
	for v in $VARS plain; do
		if [ "$v" = plain ]; then
			o="--only ${IDS//bloom./bloom.rows.}"; o=${o//.fp32/}; o=${o//.gray/}
		else
			o="--only $IDS --shader-dir $V/$v"
		fi
		# shellcheck disable=SC2086
		timeout "${TIMEOUT:-120}" "$BIN/fftbloom" bench --suite bloom $o --variant default \
			--runs "${RUNS:-30}" --warmup "${WARMUP:-5}" --warm-seconds "${WARM_S:-1}" --machine "$M" \
			2>"$R/io.err" |
			sed "s/\"variant\":\"default\"/\"variant\":\"$v\"/" >>"$R/io.jsonl"
		grep "GPU\|rows forward" "$R/io.err" | sed "s/^/round $r $v: /" >>"$R/io.txt"
		tail -n 3 "$R/io.err" | grep -i "error\|fail" | sed "s/^/round $r $v: /" >>"$R/io.txt"
	done
done
cat "$R/io.txt"
rm -rf "$V"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
