#!/bin/bash
# Issue 40, Deliver 2: does a bloom's padded size, chosen by fft_good_size's cost model (length
# times passes), cost time that another 7-smooth size would not? The 2160p bloom's rows of 4375
# (5^4 7) take 1.85x the time an element of the full-frame bloom's rows of 4096 do. Each padded
# size below is forced through a probe build's FFTBLOOM_PAD_PROBE ("needed=padded,...": the
# patch bench/probes/2026-11-28T1849-pad-probe.patch) and the bloom suite runs it, a process a
# size, the sizes in turn, ROUNDS times; VkFFT's CUDA backend runs the same padded sizes after.
# usage (repository root, a pack from bench/pack.sh built with the patch):
#   bash bench/probes/issue40_bloom_pad.sh      results under $OUT/r
P=$PWD/.carry
[ -x "$P/bin/fftbloom" ] || P=$PWD
[ -r "$P/bench/remote_env.sh" ] && . "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin; [ -x "$BIN/fftbloom" ] || BIN=$P/build
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
ROUNDS=${ROUNDS:-2}
# 2160p k512 needs 4351 x 2671, 1080p k256 2175 x 1335 (image + kernel - 1)
S2160=${S2160:-"4375x2744 4608x2744 4480x2744 5120x2744 4608x2688 4375x2688 4608x2880 4800x2744 4608x3072"}
S1080=${S1080:-"2240x1344 2304x1344 2304x1440 2400x1344 2560x1344 2240x1440"}
one() { # NEEDW NEEDH WxH IDS
	w=${3%x*} h=${3#*x}
	FFTBLOOM_PAD_PROBE="$1=$w,$2=$h" timeout 60 "$BIN/fftbloom" bench --suite bloom --only "$4" \
		--variant default --runs 30 --warmup 5 --warm-seconds 1 --machine "${MACHINE:-h200}" \
		>>"$R/bloom.jsonl" 2>>"$R/bloom.txt"
	echo "rc $? $3" >>"$R/bloom.txt"
}
for r in $(seq "$ROUNDS"); do
	for s in $S2160; do one 4351 2671 "$s" bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32; done
	for s in $S1080; do one 2175 1335 "$s" bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32; done
done
# VkFFT (CUDA), the same padded sizes: 4-channel r2c, multiply, c2r
VK=$R/peer_vkfft
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
INC=$P/vkfft/vkFFT; [ -r "$INC/vkFFT.h" ] || INC=$P/vkfft
"$NVCC" -O3 -std=c++17 -I"$P" -I"$INC" -DVKFFT_BACKEND=1 -DFFTBLOOM_COMMIT="\"$(cat "$P/COMMIT")\"" "$P/bench/peer_vkfft.cu" "$P/bench/bench_json.c" \
	-o "$VK" -Xlinker -rpath -Xlinker "$(dirname "$(dirname "$NVCC")")/lib64" -lcuda -lnvrtc \
	2>"$R/vkbuild.txt" || echo "vkfft build failed" >>"$R/vkbuild.txt"
set --
for s in $S2160; do set -- "$@" --bloom "bloom.2160p.$s=${s#*x}x${s%x*}"; done
for s in $S1080; do set -- "$@" --bloom "bloom.1080p.$s=${s#*x}x${s%x*}"; done
for r in $(seq "$ROUNDS"); do
	timeout 120 "$VK" --runs 30 --machine "${MACHINE:-h200}" "$@" >>"$R/vkfft.jsonl" 2>>"$R/vkfft.txt"
done
python3 - "$R" <<'PY'
import json, sys, os, collections
r = sys.argv[1]
ours = collections.defaultdict(list)
for line in open(os.path.join(r, "bloom.jsonl")):
    try: j = json.loads(line)
    except ValueError: continue
    d = j["detail"]; st = d.get("stages_ms", {})
    ours[(j["id"], d["padded"])].append((j["metrics"]["ms"], st.get("rows"), st.get("fused_cols"), st.get("irows")))
vk = collections.defaultdict(list)
p = os.path.join(r, "vkfft.jsonl")
for line in open(p) if os.path.exists(p) else []:
    try: j = json.loads(line)
    except ValueError: continue
    vk[j["id"].split(".", 2)[-1]].append(j["metrics"]["ms"])
print("%-28s %-10s %-22s %-40s %s" % ("workload", "padded", "ms (rounds)", "rows / fused / irows (first)", "VkFFT ms"))
for (i, pad), v in sorted(ours.items()):
    ms = ", ".join("%.4f" % x[0] for x in v)
    f = v[0]
    st = "%.4f / %.4f / %.4f" % f[1:] if None not in f[1:] else "-"
    print("%-28s %-10s %-22s %-40s %s" % (i, pad, ms, st, ", ".join("%.4f" % x for x in vk.get(pad, [])) if "gray" not in i else ""))
PY
