#!/bin/bash
# Issue 40, the FFT row re-measured after the session's changes (2026-11-29), and the 1144x1716
# transform's rows: issue40_s19.sh measured it in one process of the whole fft suite at 0.047 ms
# forward with the shipped 156 invocations for the 1716-long rows and 0.038 with the tuner's 256
# (the stages the same), where 2026-11-28 (T1858, T2222) had 156 at 0.038-0.039.
#  A. the harness (a process a workload) over the fft suite's default variants, two rounds:
#     against T2222's figures (fft.jsonl, fft.txt);
#  B. fft.2d.1144x1716.fwd alone, a process each, three rounds alternated: the shipped wisdom
#     (156; the columns by the rule), a wisdom file saying 256, and one saying 156 (b.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s20.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s20; mkdir -p "$R"
M=${MACHINE:-h200}
D="NVIDIA H200/PCIe/SSE2 / OpenGL ES 3.2 NVIDIA 580.159.04"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
timeout 300 sh "$P/bench/run.sh" fft --only fft.2d --variant default --repeat 2 --runs 30 \
	--budget-minutes 4 --machine "$M" --bin "$P/bin" >"$R/fft.jsonl" 2>"$R/fft.txt"
echo "rc $?" >>"$R/fft.txt"
grep -E "^fft\.|rc " "$R/fft.txt" | sed 's/ (rows.*inverse/ inverse/'
# both files also hold s19's measured line of the 1144-long columns (so that nothing is measured)
C="$D|1144|2|1|0|0|10|1|128|0.18979|8|0|0|1|0"
printf '%s\n%s\n' "$D|1716|2|0|0|0|10|1|256|0.02|0" "$C" >"$R/w256.txt"
printf '%s\n%s\n' "$D|1716|2|0|0|0|10|1|156|0.02|0" "$C" >"$R/w156.txt"
for round in 1 2 3; do
	for w in none "$R/w256.txt" "$R/w156.txt"; do
		timeout 60 "$P/bin/fftbloom" bench --suite fft --only fft.2d.1144x1716.fwd --variant default \
			--runs 50 --machine "$M" --program-cache none --fft-wisdom "$w" 2>&1 >>"$R/b.jsonl" |
			grep -E "^fft\." | sed "s|^|round $round $(basename "$w"): |"
	done
done | tee "$R/b.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s20 && rm -rf "$R"
