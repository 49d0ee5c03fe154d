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
#   exact    the non-finite count's exact test on every sample (the count before 5fbbab5, whose
#            sum test, bloom_new_nonfinite, the sources have since: T0106's sumstore and sum
#            variants were that test, on the sources of dfddead)
#   pitchP   the image read and the output written as if their rows were P elements longer
#            (clamped to the buffer): the same work at a row pitch that is not a multiple of 4 KiB
#   threadsN the product's shaders, the rows of WISDOM_ROWS' shapes (default the 2160p bloom's
#            4375-long rows, both ends) on N invocations a row: a wisdom file of those lines
#            (--fft-wisdom; --verbose: any shape measured because of it shows in io.verbose)
#   convN    the product's shaders, the fused column pass on N invocations a column
#            (--conv-threads N; two columns a work group)
#   rule     the product as it is (no option)
#   inplace  the fused column pass in place whatever the storage (--fused-layout in_place)
#   transposed the fused column pass on a transposed copy (--fused-layout transposed), its
#            transposes timed apart: what reading the columns in place costs
#   tilesN   the row spectra in tiles of N columns (--spectrum-tiles N; 1: rows a pitch apart).
#            Until 8e02b5b tiles8 was a shader folder: fft_shared.comp addressing tiles of 8
#            columns in the io rows and fused columns (issue40_s11.sh, h200/2026-11-29T0307)
# and the plain row transforms (bloom.rows.*; not with NO_PLAIN=1), for IDS (default the 2160p
# k512 and 1080p k256 blooms) of SUITE (default bloom; jpeg with VARIANT=scan), each a process,
# alternated ROUNDS (2) times. Stage lines (GPU ...) in io.txt, JSON
# lines in io.jsonl.
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
# swap FILE OLD NEW: FILE's one OLD text replaced by NEW (the probe stops where OLD is missing)
swap() {
	python3 -c 'import sys; p, a, b = sys.argv[1:]; s = open(p).read()
assert a in s, "not in %s: %s" % (p, a); open(p, "w").write(s.replace(a, b))' "$@" || exit 1
}
T=$(printf '\t')
variant() { # NAME: the folder $V/NAME with bloom_io.comp changed (threadsN: a wisdom file)
	case $1 in conv*|tiles*|transposed|inplace|rule) return ;; esac
	if [ "${1#threads}" != "$1" ]; then
		mkdir -p "$V"
		printf '%s\n' "$WISDOM_ROWS" | awk -F'|' -v t="${1#threads}" 'BEGIN { OFS = "|" } { $9 = t; print }' >"$V/$1.txt"
		return
	fi
	mkdir -p "$V/$1"
	cp gles/shaders/*.comp "$V/$1/"
	local f=$V/$1/bloom_io.comp load="${T}vec4 v = finite4(img[row * u_img.x + i]);"
	local prefilter="${T}return u_bloom != 0 ? bloom_prefilter(v, u_threshold, u_knee, u_clamp) : v;"
	local at="${T}uint at = row * u_img.x + i;"
	local check="${T}if (bloom_new_nonfinite(r, x, u_bloom != 0))
${T}${T}atomicAdd(nonfinite, 1u);"
	# the product's count tests the samples' sum first since 5fbbab5 (bloom_new_nonfinite); the
	# exact variant tests every sample, as the count did before
	local exact="${T}if (bloom_new_nonfinite_exact(r, x, u_bloom != 0))
${T}${T}atomicAdd(nonfinite, 1u);"
	case $1 in
	rawload|bare) swap "$f" "$load
$prefilter" "${T}return img[row * u_img.x + i];" ;;
	noread) swap "$f" "$load" "${T}vec4 v = vec4(float(i), float(row), 0.5, 1.0);" ;;
	sumload) swap "$f" "$load" "${T}vec4 v = img[row * u_img.x + i];
${T}float t = v.x + v.y + v.z + v.w;
${T}if (isnan(t) || isinf(t))
${T}${T}v = finite4(v);" ;;
	pitch*) local p="min(row * (u_img.x + ${1#pitch}u) + i, u_img.x * u_img.y - 1u)"
		swap "$f" "img[row * u_img.x + i]" "img[$p]"
		swap "$f" "$at" "${T}uint at = $p;" ;;
	esac
	case $1 in
	rawstore|bare) swap "$f" "$at" "$at
${T}o[at] = b;
${T}return;" ;;
	nocheck) swap "$f" "$check" "" ;;
	exact) swap "$f" "$check" "$exact" ;;
	esac
	# the count's exact test, for the exact variant (as bloom_io.comp had it before 5fbbab5)
	cat >>"$V/$1/bloom_math.comp" <<'GLSL'
bool bloom_new_nonfinite_exact(vec4 r, vec4 i, bool given)
{
	uvec4 bad = uvec4(isnan(r)) | uvec4(isinf(r));
	if (given)
		bad &= ~(uvec4(isnan(i)) | uvec4(isinf(i)));
	return any(bvec4(bad));
}
GLSL
}
# WISDOM_ROWS: the wisdom lines threadsN changes, one a line (default the 2160p bloom's 4375-long
# vec4 rows, fp32). The bloom's rows with their ends have lines of their own (the 15th field 1,
# gles/wisdom.h; from 75ade63): a plain line changes only the plain transform. With
# --fft-wisdom the CLI measures the ends' lines it lacks at a plan's first frame.
WISDOM_ROWS=${WISDOM_ROWS:-"NVIDIA H200/PCIe/SSE2 / OpenGL ES 3.2 NVIDIA 580.159.04|4375|4|0|0|0|11|1|875|1.78410|0|0|0|1|1"}
VARS=${VARS:-base rawload noread rawstore nocheck bare}
for v in $VARS; do variant "$v"; done
for r in $(seq "${ROUNDS:-2}"); do
	for v in $VARS $([ -n "${NO_PLAIN:-}" ] || echo plain); do
		if [ "${v#threads}" != "$v" ]; then
			o="--only $IDS --fft-wisdom $V/$v.txt --verbose"
		elif [ "${v#conv}" != "$v" ]; then
			o="--only $IDS --conv-threads ${v#conv}"
		elif [ "${v#tiles}" != "$v" ]; then
			o="--only $IDS --spectrum-tiles ${v#tiles}"
		elif [ "$v" = rule ]; then
			o="--only $IDS"
		elif [ "$v" = inplace ]; then
			o="--only $IDS --fused-layout in_place"
		elif [ "$v" = transposed ]; then
			o="--only $IDS --fused-layout transposed"
		elif [ "$v" = plain ]; then
			o="--only ${IDS//bloom./bloom.rows.}"; o=${o//.fp32/}; o=${o//.fp16/}; o=${o//.gray/}
		else
			o="--only $IDS --shader-dir $V/$v"
		fi
		# shellcheck disable=SC2086
		timeout "${TIMEOUT:-120}" "$BIN/fftbloom" bench --suite "${SUITE:-bloom}" $o --variant "${VARIANT:-default}" \
			--runs "${RUNS:-30}" --warmup "${WARMUP:-5}" --warm-seconds "${WARM_S:-1}" --machine "$M" \
			2>"$R/io.err" |
			sed "s/\"variant\":\"${VARIANT:-default}\"/\"variant\":\"$v\"/" >>"$R/io.jsonl"
		grep "GPU\|rows forward" "$R/io.err" | sed "s/^/round $r $v: /" >>"$R/io.txt"
		grep -i "wisdom\|candidate\|measur" "$R/io.err" | sed "s/^/round $r $v: /" >>"$R/io.verbose"
		tail -n 3 "$R/io.err" | grep -i "error\|fail" | sed "s/^/round $r $v: /" >>"$R/io.txt"
	done
done
cat "$R/io.txt"
rm -rf "$V"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
