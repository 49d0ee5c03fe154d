#!/bin/bash
# Issue 40, deliver 1: Bluestein in one dispatch, and the FFT row beside VkFFT, in one call:
#  1. bench/fft_shapes.sh over bench/probes/issue40_bluestein.txt (the 1009x1009 transform's
#     shapes), two rounds;
#  2. the FFT suite and VkFFT's CUDA and Vulkan backends (bench/run.sh fft,peers), two rounds;
#  3. 1350x2187 with the shipped 2187-long rows (243 invocations, float rounds) against the
#     line they replaced (512, whole vec2; a wisdom file's line wins over a shipped one), after
#     4096² in the same process as in the harness's order (every shape of the two is in the
#     shipped wisdom, so the named file measures nothing), alternated ROUNDS times.
# usage (repository root, a pack from bench/pack.sh): bash bench/probes/issue40_bluestein.sh
P=$PWD/.carry
[ -x "$P/bin/fftbloom" ] || P=$PWD
[ -r "$P/bench/remote_env.sh" ] && . "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin; [ -x "$BIN/fftbloom" ] || BIN=$P/build
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
here=$(dirname "$0")
sh "$here/../fft_shapes.sh" --bin "$BIN" --list "$here/issue40_bluestein.txt" --repeat 2 --runs 30 \
	--out "$R/shapes.jsonl" >/dev/null 2>"$R/shapes.txt"
tail -10 "$R/shapes.txt"
timeout 200 sh "$here/../run.sh" fft,peers --peers vkfft --only fft.2d --repeat 2 --variant default \
	--runs 30 --budget-minutes 3 --machine "$M" --bin "$BIN" --vkfft-dir "$P/vkfft" \
	>"$R/fft.jsonl" 2>"$R/fft.txt"
# the 2187-long rows' line they replaced, for this driver ("RENDERER / VERSION")
D=$("$BIN/fftbloom" info 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["renderer"] + " / " + j["version"])')
printf '%s|2187|2|0|0|0|10|1|512|0.23955|0\n' "$D" >"$R/old2187.txt"
for r in $(seq "${ROUNDS:-3}"); do
	for v in new old; do
		w=""; [ $v = old ] && w="--fft-wisdom $R/old2187.txt"
		# shellcheck disable=SC2086
		timeout 60 "$BIN/fftbloom" bench --suite fft --only fft.2d.4096x4096.fwd,fft.2d.1350x2187.fwd \
			--variant default --runs 30 \
			--warmup 5 --warm-seconds 1 --machine "$M" $w 2>/dev/null |
			sed "s/\"variant\":\"default\"/\"variant\":\"default-$v\"/" >>"$R/ab2187.jsonl"
	done
done
python3 - "$R" <<'PY'
import json, sys, os, collections
r = sys.argv[1]
d = collections.defaultdict(list)
for name in ("fft.jsonl", "ab2187.jsonl"):
    p = os.path.join(r, name)
    for line in open(p) if os.path.exists(p) else []:
        try: j = json.loads(line)
        except ValueError: continue
        if not j.get("id", "").startswith("fft.2d"): continue
        impl = j["impl"] + ("-vulkan" if "Vulkan" in j.get("driver", "") else "")
        d[(j["id"], impl, j.get("variant", ""))].append(j["metrics"]["ms"])
for k in sorted(d):
    print("%-24s %-14s %-16s %s" % (k[0], k[1], k[2], ", ".join("%.4f" % x for x in d[k])))
PY
