#!/bin/bash
# Issue 40, Deliver 1: why the FFT's row passes move memory below the copy rate, and whether
# vec4 first loads and last stores (fft_opts.vec_io) win, in one device call of under 3 minutes:
#  1. bench/fft_copy_probe: per axis of the harness's lengths, a plain vec4 copy (the copy
#     rate), a copy with the FFT program's index pattern and work group (vec2, and the vec4
#     variant), the product's program with --fft-probe 1 and 2, and the transform; GB/s and %
#     of the copy per line (copies checked: output equals input);
#  2. the fft suite's 2D transforms (bench/run.sh fft, variant default) with vec_io forced off
#     (--fft-vec-io -1), forced on over the rule's shapes (1), and allowed: an empty wisdom file
#     measured now, the tuner offering vec_io among its candidates (0; its picks in the log).
# Part 2 needs a build with vec_io (commit 549ab74, before its revert: it measured slower, see
# bench/RESULTS.md); part 1 runs on any build since d657e06.
# usage (from the repository root, a pack made by bench/pack.sh):  bash bench/probes/issue40_fft_factors.sh
# Results under $OUT (probe.txt, off/on/tuned .jsonl and .txt, wisdom.txt, card.txt).
P=$PWD/.carry
[ -x "$P/bin/fftbloom" ] || P=$PWD
set -- "$P"
[ -r "$P/bench/remote_env.sh" ] && . "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin; [ -x "$BIN/fftbloom" ] || BIN=$P/build
PROBE=$BIN/bench/fft_copy_probe
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
Q=""; [ "${QUICK:-0}" = 1 ] && Q=--quick  # QUICK=1: llvmpipe sizes (a check of this script)
timeout 45 "$PROBE" $Q --runs 30 >"$R/probe.txt" 2>&1; echo "rc $?" >>"$R/probe.txt"
cat "$R/probe.txt"
run() { # NAME SECONDS ARGS...
	name=$1 secs=$2; shift 2
	timeout "$secs" sh "$P/bench/run.sh" fft $Q --only fft.2d --variant default --runs 30 \
		--machine "${MACHINE:-h100}" --bin "$BIN" "$@" >"$R/$name.jsonl" 2>"$R/$name.txt"
	echo "rc $?" >>"$R/$name.txt"
}
run off 40 --bench-opts "--fft-vec-io -1"
run on 40 --bench-opts "--fft-vec-io 1"
: >"$R/wisdom.txt"
run tuned 50 --wisdom "$R/wisdom.txt" --bench-opts "--verbose"
python3 - "$R" <<'PY'
import json, sys, os
r = sys.argv[1]
rows = {}
for name in ("off", "on", "tuned"):
    p = os.path.join(r, name + ".jsonl")
    for line in open(p) if os.path.exists(p) else []:
        try:
            j = json.loads(line)
        except ValueError:
            continue
        m = j.get("metrics", {})
        key = name + ("+w" if "wisdom" in j.get("variant", "") else "")
        rows.setdefault(j.get("id", "?"), {})[key] = (m.get("ms"), m.get("rows_ms"))
print("2D forward ms / its rows' ms (median of 30): vec_io off, forced on, tuned (allowed)")
print("%-26s %17s %17s %17s %17s" % ("id", "off", "on", "no wisdom", "tuned"))
def f(x):
    return "%8.4f/%-8.4f" % x if x and isinstance(x[0], (int, float)) and isinstance(x[1], (int, float)) else "%17s" % "-"
for k in sorted(rows):
    v = rows[k]
    print("%-26s %s %s %s %s" % (k, f(v.get("off")), f(v.get("on")), f(v.get("tuned")), f(v.get("tuned+w"))))
PY
grep -h "FFT wisdom:" "$R/tuned.txt" | head -20
