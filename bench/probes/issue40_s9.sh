#!/bin/bash
# Issue 40, the shipped wisdom's 875 invocations for the 2160p bloom's 4375-long vec4 rows
# (2026-11-29): the answers of a 3840x2160 bloom with a 512x512 kernel (padded 4375x2744) and
# its fp16 form against the built-in rules' shapes (--fft-wisdom builtin; answers.txt), the
# plan tests, then the blooms beside VkFFT, two rounds (bloom.jsonl, bloom.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR set): bash bench/probes/issue40_s9.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft_plan
python3 - "$R" <<'PY'
import sys, numpy as np
def pfm(path, a):
    h, w = a.shape[:2]
    open(path, "wb").write(b"PF\n%d %d\n-1.0\n" % (w, h) + np.ascontiguousarray(a, "<f4").tobytes())
r = np.random.default_rng(5)
pfm(sys.argv[1] + "/in.pfm", r.random((2160, 3840, 3), dtype=np.float32) * 2)
y, x = np.mgrid[-256:256, -256:256]
k = np.exp(-(x * x + y * y) / (2 * 60.0 ** 2)).astype(np.float32)
pfm(sys.argv[1] + "/k.pfm", np.repeat(k[:, :, None], 3, axis=2))
PY
for prec in fp32 fp16; do
	for w in shipped builtin; do
		o=; [ "$w" = builtin ] && o="--fft-wisdom builtin"
		# shellcheck disable=SC2086
		"$P/bin/fftbloom" bloom "$R/in.pfm" -o "$R/$w.pfm" --kernel "$R/k.pfm" --engine gpu \
			--precision "$prec" $o 2>>"$R/cli.err"
	done
	python3 "$(dirname "$0")/pfm_diff.py" "$R/shipped.pfm" "$R/builtin.pfm" "3840x2160 k512 $prec, the shipped wisdom against the built-in rules" >>"$R/answers.txt"
done
cat "$R/cli.err" "$R/answers.txt"
rm -f "$R"/*.pfm
timeout 240 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only bloom --repeat 2 --variant default --runs 30 \
	--budget-minutes 4 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/bloom.jsonl" 2>"$R/bloom.txt"
echo "rc $?" >>"$R/bloom.txt"
grep -E "^bloom\.|channels|done" "$R/bloom.txt" | tail -30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
