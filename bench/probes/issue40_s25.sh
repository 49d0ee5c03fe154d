#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the padded sizes fft_good_size picks, against others at least
# the span. fft_cost counts a pass of radix 5 or 7 as one of radix 8; 1080p k256 pads its
# columns to 1225 (5^2 7^2), the full-frame kernel to 3136x1715 (7^2 2^6 x 5 7^3). The pack's
# fftbloom carries an experiment's patch (results folder): FFTBLOOM_PAD_MAP=FROM:TO,... swaps a
# size fft_good_size chose for another at least as long as asked.
#  A. each map on an empty wisdom file, its new shapes measured (MAP/w.txt, MAP/tune.log);
#  B. two rounds alternated, a process each: no map (shipped wisdom) against each map on its
#     w.txt (blooms.txt, blooms.jsonl);
#  C. VkFFT (CUDA)'s bloom at each map's padded sizes, two rounds (vkfft.jsonl, vkfft.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR): bash bench/probes/issue40_s25.sh
. "$(dirname "$0")/blooms_start.sh" s25
IDS=bloom.1080p.k256.fp32,bloom.1080p.full.fp32
B="--suite bloom --only $IDS --variant default --machine $M --program-cache none"
MAPS="A=1225:1280,1715:1792 B=1225:1260,1715:1728 D=1225:1215,1715:1680 E=3136:2880 F=3136:3072"
whos="base=$P/bin/fftbloom@none"
for m in $MAPS; do
	n=${m%%=*}
	mkdir -p "$R/$n"
	printf '#!/bin/sh\nFFTBLOOM_PAD_MAP=%s exec %s "$@"\n' "${m#*=}" "$P/bin/fftbloom" >"$R/$n/fb"
	chmod +x "$R/$n/fb"
	# shellcheck disable=SC2086
	TIMEOUT=60 bash "$(dirname "$0")/measure_empty.sh" "$R/$n" "$R/$n/fb" "FFT wisdom: |padded|tune rc" -- $B |
		tail -8
	whos="$whos $n=$R/$n/fb@$R/$n/w.txt"
done
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms $whos -- $B --runs 30
timeout 150 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only "$IDS" --repeat 1 --variant default \
	--runs 30 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/peers.jsonl" 2>"$R/peers.txt"
grep -E "^bloom\.|rc " "$R/peers.txt" | tail -10
vk=$P/bin/bench-work/peer_vkfft
set --
for hw in 1225x2048 1280x2048 1260x2048 1215x2048 1715x3136 1792x3136 1728x3136 1680x3136 \
	1715x2880 1715x3072; do
	set -- "$@" --bloom "bloom.pad.$hw=$hw"
done
for round in 1 2; do
	timeout 120 "$vk" --runs 30 --machine "$M" "$@" >>"$R/vkfft.jsonl" 2>>"$R/vkfft.txt"
	echo "vkfft round $round rc $?" >>"$R/vkfft.txt"
done
grep -E "bloom\.pad|rc " "$R/vkfft.txt" | tail -24
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s25 && rm -rf "$R"
