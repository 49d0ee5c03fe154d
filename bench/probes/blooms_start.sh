# shellcheck shell=bash disable=SC2034
# Sourced by the bloom probes (issue40_s22.sh, s23.sh, s24.sh) with the results folder's name:
# P (the pack, .carry under the repository root, its remote_env.sh sourced), R (OUT/NAME, made),
# M (MACHINE, default h200), R/card.txt (the card, driver, cores, date, the pack's commit and a
# baseline's), IDS (the bloom suite's seven blooms), B (fftbloom bench's arguments for them) and
# the function shader_variant (below).
# usage: . "$(dirname "$0")/blooms_start.sh" NAME
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/$1
mkdir -p "$R"
M=${MACHINE:-h200}
{
	nvidia-smi --query-gpu=name,driver_version --format=csv
	nproc
	date -u
	cat "$P/COMMIT"
	cat "$P/baseline/COMMIT" 2>/dev/null
} >"$R/card.txt" 2>&1
IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16
B="--suite bloom --only $IDS --variant default --machine $M --program-cache none"
# shader_variant NAME FOLDER: R/NAME.sh, the pack's fftbloom with --shader-dir FOLDER (a form of
# the shaders to measure against the embedded ones; issue40_s39.sh, s40, s42)
shader_variant() {
	printf '#!/bin/sh\nexec %s "$@" --shader-dir %s\n' "$P/bin/fftbloom" "$2" >"$R/$1.sh"
	chmod +x "$R/$1.sh"
}
