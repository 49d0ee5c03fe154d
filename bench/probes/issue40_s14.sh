#!/bin/bash
# Issue 40, the row spectra in tiles of 16 columns and float16's fused columns in place over them
# (2026-11-29), the build as it is committed:
#  A. the answers: this build's CLI blooms against PACK/baseline's (rows a pitch apart, float16
#     through the transposed copy) on 3840x2160, 1920x1080 and 1001x701 frames, a 512x512 colour
#     kernel and a gray one, float32 and float16 (max and rel_l2 differences, answers.txt);
#  B. test_fft and test_bloom on the GPU (tests.txt);
#  C. the blooms beside VkFFT, two rounds (bloom.jsonl, bloom.txt).
# usage (repository root, a pack with a baseline in .carry, made with VKFFT_DIR set):
#   bash bench/probes/issue40_s14.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s14; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
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
cat "$R/answers.txt"
grep -o 'padded [0-9x]*, [a-z]* kernel, GPU [0-9.]* ms (timer queries: [a-z_ 0-9.,]*' "$R/cli.err" | sed 's/download.*//' | sort | uniq -c | head -30
rm -f "$R"/*.pfm
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft test_bloom
timeout 300 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only bloom --repeat 2 --variant default --runs 30 \
	--budget-minutes 5 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/bloom.jsonl" 2>"$R/bloom.txt"
echo "rc $?" >>"$R/bloom.txt"
grep -E "^bloom\.|channels|done" "$R/bloom.txt" | tail -30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s14 && rm -rf "$R"
