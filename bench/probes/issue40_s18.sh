#!/bin/bash
# Issue 40 (2026-11-29): the 1080p bloom's 2240-long rows on invocation counts the rows'
# measuring does not try, and the daemon's idle path of that measuring to its end.
#  A. through one-line wisdom files of the ends' key (issue40_io.sh's threadsN): the 1080p k256
#     blooms (fp32, gray, fp16) with the rows on 320 (what the measuring kept), 280 (2240 / 8),
#     448 (2240 / 5), and the counts of 10, 14 and 16 values an invocation (224, 160, 140; a row
#     a work group: fewer invocations a row, more rows on a multiprocessor at once), two rounds;
#  B. rows_tune_daemon.sh with PACK/noio/fftbloomd (built without the shipped ends lines).
# usage (repository root, a pack in .carry with noio/): bash bench/probes/issue40_s18.sh
P=$PWD/.carry
O=${OUT:-/tmp}
D="NVIDIA H200/PCIe/SSE2 / OpenGL ES 3.2 NVIDIA 580.159.04"
mkdir -p "$O/a" "$O/s18"
OUT=$O/a WISDOM_ROWS="$D|2240|4|0|0|0|10|1|320|0.40691|0|0|0|2|1
$D|2240|4|0|1|0|10|1|320|0.38915|0|0|0|2|1" \
	VARS="threads320 threads280 threads448 threads224 threads160 threads140" \
	IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16 ROUNDS=2 NO_PLAIN=1 \
	bash "$(dirname "$0")/issue40_io.sh" | grep -v "^round.*stages\|^$"
. "$P/bench/remote_env.sh" "$P" >/dev/null
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$O/s18/card.txt" 2>&1
bash "$(dirname "$0")/rows_tune_daemon.sh" "$P" "$P/noio/fftbloomd" "$O/s18"
mv "$O/a/r.tgz" "$O/s18/io.tgz"
tar czf "$O/r.tgz" -C "$O" s18 && rm -rf "$O/s18" "$O/a"
