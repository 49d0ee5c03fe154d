#!/bin/bash
# Issue 40, the fused columns' reads in place (2026-11-29): the 2160p bloom's fused column pass
# (0.527 ms of 0.955) reads and writes 32 bytes a row 4376 x 16 bytes apart; the rule's
# invocations are already its best (issue40_s10.sh). Through issue40_io.sh's variants, rounds
# alternated:
#  A. 2160p k512 (fp32, gray): base, tiles8 (the row spectra in tiles of 8 columns), transposed
#     (the pass on a transposed copy, its transposes timed apart);
#  B. 1080p k256 (fp32, gray) and the full-frame bloom: the same;
#  C. the answers: 3840x2160 and 1920x1080 blooms with a 512x512 colour kernel and a gray one,
#     tiles8 against the embedded shaders (max and rel_l2 differences, answers.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s11.sh
O=${OUT:-/tmp}
OUT=$O/a VARS="base tiles8 transposed" IDS=bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32 \
	ROUNDS=3 bash "$(dirname "$0")/issue40_io.sh"
OUT=$O/b VARS="base tiles8 transposed" \
	IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.full.fp32 ROUNDS=2 \
	bash "$(dirname "$0")/issue40_io.sh"
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=$O/c; mkdir -p "$R"
V=$R/v
eval "$(sed -n '/^swap() {/,/^}/p' "$(dirname "$0")/issue40_io.sh")"
T=$(printf '\t')
eval "$(sed -n '/^variant() {/,/^# WISDOM_ROWS/p' "$(dirname "$0")/issue40_io.sh")"
variant tiles8
python3 -c "import numpy as np; k = np.random.default_rng(5).random((512, 512, 3), dtype=np.float32); \
open('$R/k.pfm', 'wb').write(b'PF\n512 512\n-1.0\n' + k.tobytes())"
for size in 3840x2160 1920x1080; do
	w=${size%x*} h=${size#*x}
	python3 -c "import sys, numpy as np; w, h = $w, $h; a = np.random.default_rng(3).random((h, w, 3), dtype=np.float32) * 2; \
sys.stdout.buffer.write(b'PF\n%d %d\n-1.0\n' % (w, h) + a.tobytes())" >"$R/in.pfm"
	for k in "--kernel $R/k.pfm" "--kernel-preset gaussian:size=511,sigma=40"; do
		# shellcheck disable=SC2086
		"$P/bin/fftbloom" bloom "$R/in.pfm" -o "$R/a.pfm" $k --engine gpu --shader-dir "$V/tiles8" 2>>"$R/cli.err"
		# shellcheck disable=SC2086
		"$P/bin/fftbloom" bloom "$R/in.pfm" -o "$R/b.pfm" $k --engine gpu 2>>"$R/cli.err"
		python3 "$(dirname "$0")/pfm_diff.py" "$R/a.pfm" "$R/b.pfm" "$size ${k##*/}: tiles8 against the embedded shaders" >>"$R/answers.txt"
		echo >>"$R/answers.txt"
	done
done
cat "$R/answers.txt"
rm -rf "$V" "$R"/*.pfm
cd "$O" && mkdir -p s11 && for x in a b; do tar xzf "$x/r.tgz" -C "$x" && mv "$x/r" "s11/$x"; done && mv c s11/c && tar czf r.tgz s11 && rm -rf a b s11
