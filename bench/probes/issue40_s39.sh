#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): two forms of colour kernels' multiply in registers (9e4b7d8),
# each a shader folder in the pack (--shader-dir) against the embedded shaders, a process each,
# alternated, two rounds, every process also timing the multiply in shared memory frame by
# frame (--ab --conv-mult-shared):
#   kshfl: each invocation of a pair loads one of the kernel's two values and takes the other
#          by a shuffle (one load an element instead of two);
#   csign: the conjugation at the loads and stores by a float sign instead of a vec4.
# usage (repository root, a pack in .carry with PACK/shaders_kshfl and PACK/shaders_csign):
#   bash bench/probes/issue40_s39.sh
. "$(dirname "$0")/blooms_start.sh" s39
C="--suite bloom --only bloom.1080p.k256.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.fp16 --variant default --machine $M --program-cache none --runs 30"
for v in kshfl csign; do
	shader_variant "$v" "$P/shaders_$v"
done
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" forms "base=$P/bin/fftbloom@none" "kshfl=$R/kshfl.sh@none" \
	"csign=$R/csign.sh@none" -- $C --ab "--conv-mult-shared" | tee "$R/forms.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s39 && rm -rf "$R"
