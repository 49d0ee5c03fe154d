#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the product's colour multiply a plane a call (9fcb80f) against
# T1559's form as a shader folder (PACK/shaders_planes: both planes in one call, in two loops,
# the second call returning at once), a process each, alternated, two rounds, each with --ab
# against the multiply in shared memory.
# usage (repository root, a pack in .carry with PACK/shaders_planes): bash bench/probes/issue40_s42.sh
. "$(dirname "$0")/blooms_start.sh" s42
C="--suite bloom --only bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.fp16 --variant default --machine $M --program-cache none --runs 30 --warm-seconds 1"
shader_variant planes "$P/shaders_planes"
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" calls "calls=$P/bin/fftbloom@none" "loops=$R/planes.sh@none" \
	-- $C --ab "--conv-mult-shared" | tee "$R/calls.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s42 && rm -rf "$R"
