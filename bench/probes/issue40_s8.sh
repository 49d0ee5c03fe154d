#!/bin/bash
# Issue 40, the blooms' row transforms on more invocations (2026-11-29): the 2160p bloom's
# 4375-long vec4 rows ran 0.083 ms faster on 875 invocations a row than on the shipped wisdom's
# 512 (h200/2026-11-29T0137-issue40-io-threads). Through one-line wisdom files
# (issue40_io.sh's threadsN variants), rounds alternated:
#  A. 2160p (fp32, gray, fp16): the 4375-long rows (fp32 and fp16 lines) on 512, 875, 1024;
#  B. 1080p (fp32, gray, fp16): the 2240-long rows on 512, 320, 448, 640;
#  C. the answers: a 3840x2160 and a 1920x1080 bloom with 875 (448) invocations against the
#     built-in rules' (--fft-wisdom builtin), max and rel_l2 differences (answers.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s8.sh
D="NVIDIA H200/PCIe/SSE2 / OpenGL ES 3.2 NVIDIA 580.159.04"
O=${OUT:-/tmp}
OUT=$O/a WISDOM_ROWS="$D|4375|4|0|0|0|11|1|512|1.65651|0
$D|4375|4|0|1|0|11|1|512|1.47830|0" VARS="threads512 threads875 threads1024" \
	IDS=bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16 ROUNDS=2 \
	bash "$(dirname "$0")/issue40_io.sh"
OUT=$O/b WISDOM_ROWS="$D|2240|4|0|0|0|10|1|512|0.43629|0
$D|2240|4|0|1|0|10|1|512|0.31578|0" VARS="threads512 threads320 threads448 threads640" \
	IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16 ROUNDS=2 \
	bash "$(dirname "$0")/issue40_io.sh"
# C: the answers against the built-in rules' (the same math, another work-group shape)
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=$O/c; mkdir -p "$R"
for s in 3840x2160:4375:875 1920x1080:2240:448; do
	IFS=: read -r size n t <<<"$s"
	w=${size%x*} h=${size#*x}
	python3 -c "import sys, numpy as np; w, h = $w, $h; a = np.random.default_rng(3).random((h, w, 3), dtype=np.float32) * 2; \
sys.stdout.buffer.write(b'PF\n%d %d\n-1.0\n' % (w, h) + a.tobytes())" >"$R/in.pfm"
	printf '%s|%s|4|0|0|0|%d|1|%s|1.0|0\n' "$D" "$n" $((h > 1500 ? 11 : 10)) "$t" >"$R/w.txt"
	"$P/bin/fftbloom" bloom "$R/in.pfm" -o "$R/a.pfm" --kernel-preset gaussian:sigma=20 --engine gpu --fft-wisdom "$R/w.txt" 2>>"$R/cli.err"
	"$P/bin/fftbloom" bloom "$R/in.pfm" -o "$R/b.pfm" --kernel-preset gaussian:sigma=20 --engine gpu --fft-wisdom builtin 2>>"$R/cli.err"
	python3 "$(dirname "$0")/pfm_diff.py" "$R/a.pfm" "$R/b.pfm" "$size $n rows on $t invocations against the built-in rules" >>"$R/answers.txt"
done
cat "$R/answers.txt"
cd "$O" && mkdir -p s8 && for x in a b; do tar xzf "$x/r.tgz" -C "$x" && mv "$x/r" "s8/$x"; done && mv c s8/c && rm -rf s8/c/*.pfm && tar czf r.tgz s8 && rm -rf a b s8
