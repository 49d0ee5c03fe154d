#!/bin/bash
# Issue 40, the bloom rows' global reads in flight during the passes (2026-11-29): the inverse
# rows read the composite's image samples before their first pass (fft_shared's FFT_IO_PRELOAD,
# in the pack's shaders) and, behind FFTBLOOM_EXP_TWO, the forward rows run two rows a group,
# the second row's image samples read before the first row's passes (FFT_TWO). PACK/nopre holds
# the shaders with bloom_io.comp as before the preload. Four variants, a process each, ROUNDS
# (default 3) alternated: base (nopre), pre, two (nopre + TWO), pretwo (blooms.txt, .jsonl);
# then test_bloom on the GPU as packed and with FFTBLOOM_EXP_TWO=1 (tests.txt). Neither was kept:
# the pack must be built from 4ff4c05 with results/h200/2026-11-29T0841-issue40-s22/
# preload-two.patch applied. The "two" variant is void as written: nopre's bloom_io.comp lacks
# the hooks FFT_TWO calls, so its rows fell back to separate passes.
# usage (repository root, a pack in .carry with nopre/): bash bench/probes/issue40_s22.sh
. "$(dirname "$0")/blooms_start.sh" s22
mkdir -p "$R/w"
for v in base pre two pretwo; do
	{
		echo '#!/bin/sh'
		case $v in base | two) echo "export FFTBLOOM_SHADER_DIR=$P/nopre" ;; esac
		case $v in two | pretwo) echo "export FFTBLOOM_EXP_TWO=1" ;; esac
		echo "exec $P/bin/fftbloom \"\$@\""
	} >"$R/w/$v"
	chmod +x "$R/w/$v"
done
# shellcheck disable=SC2086
ROUNDS=${ROUNDS:-3} bash "$(dirname "$0")/alternate.sh" "$R" blooms "base=$R/w/base@none" \
	"pre=$R/w/pre@none" "two=$R/w/two@none" "pretwo=$R/w/pretwo@none" -- $B --runs 30

if [ -z "$NO_TESTS" ]; then
	SECONDS_EACH=240 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
	FFTBLOOM_EXP_TWO=1 SECONDS_EACH=240 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
fi
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s22 && rm -rf "$R"
