#!/bin/bash
# Issue 40, a session's last device call (2026-11-29): the non-finite count's sum test
# (bloom_new_nonfinite) on the GPU and beside VkFFT.
#  1. test_fft_plan, test_fft and test_bloom on the GPU (tests.txt).
#  2. The bloom workloads, this build's embedded shaders (new) against the shaders of the commit
#     before (PACK/oldshaders, --shader-dir: old), each a process, alternated ROUNDS (3) times
#     (ab.txt, ab.jsonl).
#  3. bench/run.sh bloom,peers --peers vkfft --only bloom, two rounds (bloom.jsonl, bloom.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR set, the old shaders in
# .carry/oldshaders: git archive OLD gles/shaders | tar -x --strip-components 2 -C .carry/oldshaders):
#   bash bench/probes/issue40_s7.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin M=${MACHINE:-h200}
IDS=${IDS:-bloom.1080p.k256.fp32,bloom.2160p.k512.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.gray.fp32}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
SECONDS_EACH=200 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft_plan test_fft test_bloom
for r in $(seq "${ROUNDS:-3}"); do
	for v in new old; do
		o=; [ "$v" = old ] && o="--shader-dir $P/oldshaders"
		# shellcheck disable=SC2086
		timeout 90 "$BIN/fftbloom" bench --suite bloom --only "$IDS" --variant default $o --runs 30 \
			--warmup 5 --warm-seconds 1 --machine "$M" 2>"$R/ab.err" |
			sed "s/\"variant\":\"default\"/\"variant\":\"default-$v\"/" >>"$R/ab.jsonl"
		grep "GPU" "$R/ab.err" | sed "s/^/round $r $v: /" >>"$R/ab.txt"
	done
done
sed 's/ default  *[0-9x]*  k  [0-9x]*  ->  [0-9x]* //' "$R/ab.txt"
timeout 240 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only bloom --repeat 2 --variant default --runs 30 \
	--budget-minutes 4 --machine "$M" --bin "$BIN" --vkfft-dir "$P/vkfft" >"$R/bloom.jsonl" 2>"$R/bloom.txt"
echo "rc $?" >>"$R/bloom.txt"
grep -E "^bloom\.|GPU|channels|done" "$R/bloom.txt" | tail -30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
