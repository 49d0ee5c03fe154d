#!/bin/bash
# Issue 40, deliver 2 (2026-11-29), at ea9fedb: colour kernels' multiply in registers
#  A. a plane at a time (PACK/shaders_planes: the kernel's .xy for every value, then .zw, each
#     half loaded and shuffled alone) against the embedded shaders, a process each, alternated,
#     two rounds, each also timing the multiply in shared memory (--ab --conv-mult-shared);
#  B. the fused pass's invocations a column with the multiply in registers (the rule's were
#     measured with it in shared memory): 2160p 256 against the rule's 512, 1080p 128 and 512
#     against the rule's 256, --ab, a process each;
#  C. test_bloom and test_fft on the GPU (tests.txt).
# usage (repository root, a pack in .carry with PACK/shaders_planes): bash bench/probes/issue40_s40.sh
. "$(dirname "$0")/blooms_start.sh" s40
C="--suite bloom --only bloom.1080p.k256.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.fp16 --variant default --machine $M --program-cache none --runs 30"
shader_variant planes "$P/shaders_planes"
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" planes "base=$P/bin/fftbloom@none" "planes=$R/planes.sh@none" \
	-- $C --ab "--conv-mult-shared" | tee "$R/planes.txt"
T="--suite bloom --variant default --machine $M --program-cache none --runs 30"
{
	# shellcheck disable=SC2086
	ROUNDS=1 bash "$(dirname "$0")/alternate.sh" "$R" t2160 "base=$P/bin/fftbloom@none" -- $T \
		--only bloom.2160p.k512.fp32,bloom.2160p.k512.fp16 --ab "--conv-threads 256"
	for t in 128 512; do
		# shellcheck disable=SC2086
		ROUNDS=1 bash "$(dirname "$0")/alternate.sh" "$R" t1080-$t "base=$P/bin/fftbloom@none" -- $T \
			--only bloom.1080p.k256.fp32,bloom.1080p.full.fp32 --ab "--conv-threads $t"
	done
} | tee "$R/threads.txt"
TEST_ENGINE=gpu SECONDS_EACH=240 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom test_fft
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s40 && rm -rf "$R"
