#!/bin/bash
# A pack's CLI blooms against its baseline's (issue40_s12.sh, s14): 3840x2160, 1920x1080 and
# 1001x701 frames of random colour, a 512x512 random colour kernel and a gray preset, float32
# and float16, PACK/bin's fftbloom against PACK/baseline's; the max and rel_l2 differences in
# R/answers.txt (pfm_diff.py), the CLI's stage lines in R/cli.err.
# usage (remote_env.sh sourced): bash bench/probes/answers_vs_baseline.sh PACK R
P=$1 R=$2
python3 -c "import numpy as np; k = np.random.default_rng(5).random((512, 512, 3), dtype=np.float32); \
open('$R/k.pfm', 'wb').write(b'PF\n512 512\n-1.0\n' + k.tobytes())"
for size in 3840x2160 1920x1080 1001x701; do
	w=${size%x*} h=${size#*x}
	python3 -c "import sys, numpy as np; w, h = $w, $h; a = np.random.default_rng(3).random((h, w, 3), dtype=np.float32) * 2; \
sys.stdout.buffer.write(b'PF\n%d %d\n-1.0\n' % (w, h) + a.tobytes())" >"$R/in.pfm"
	for k in "--kernel $R/k.pfm" "--kernel-preset gaussian:size=511,sigma=40"; do
		for prec in fp32 fp16; do
			# shellcheck disable=SC2086
			"$P/bin/fftbloom" bloom "$R/in.pfm" -o "$R/a.pfm" $k --precision $prec --engine gpu 2>>"$R/cli.err"
			# shellcheck disable=SC2086
			"$P/baseline/fftbloom" bloom "$R/in.pfm" -o "$R/b.pfm" $k --precision $prec --engine gpu 2>>"$R/cli.err"
			python3 "$(dirname "$0")/pfm_diff.py" "$R/a.pfm" "$R/b.pfm" "$size ${k##*/} $prec: this build against $(cat "$P/baseline/COMMIT" 2>/dev/null)" >>"$R/answers.txt"
		done
	done
done
rm -f "$R"/*.pfm
cat "$R/answers.txt"
