#!/bin/sh
# bench/run.sh: the benchmark harness's one driver (bench/README.md). Runs suites of workloads
# with stable IDs and prints one JSON result line a workload (suite, id, impl, variant, metrics,
# detail, gpu, driver, commit, date, host, machine, command) on stdout, tables and progress on
# stderr; --save keeps both under bench/results/MACHINE/. Works from a build tree (binaries in
# build/, or --bin) and from a folder made by bench/pack.sh (binaries in its bin/).
#
# usage: sh bench/run.sh SUITE[,SUITE...] [options]
#   suites: fft, bloom, conv, peers, e2e, all (= fft,bloom,conv,peers,e2e, in that order)
#   --quick              the small workloads (llvmpipe): fft and bloom --quick sizes, e2e at
#                        640x360 with 8 and 32 clients for 5 s, the peers at the quick sizes, conv
#                        at small shapes
#   --only IDS           workload IDs, prefixes up to a dot or patterns, comma-separated (fft,
#                        bloom and the peers' fft and bloom workloads)
#   --variant NAME       fft and bloom: only the workloads of that variant (e.g. default)
#   --runs N             timed runs a workload (default 30; 10 with --quick)
#   --repeat N           the whole plan N times in turn (rounds interleaved; detail.round)
#   --wisdom FILE        after each fft and bloom workload, the same reading this FFT wisdom
#                        (a copy: fftbloom adds shapes it measures), variant NAME+wisdom
#   --baseline DIR       after each fft and bloom workload, the same in DIR/fftbloom, an older
#                        build (its bench had labels, not IDs: bench/old_lines.py maps them; needs
#                        python3); variant NAME@baseline, commit from DIR/COMMIT or
#                        --baseline-commit TEXT (issue 14: old main against the new one, one run)
#   --one-process        fft and bloom: every workload in one fftbloom process (default: one
#                        process each, after 1 s of load: on the H200 the GL driver sets the
#                        clocks from the load of the last moments, so a workload must not
#                        inherit another's; bench/RESULTS.md)
#   --bench-opts "..."   more options for fftbloom bench (e.g. --verbose)
#   --e2e-clients "8 32 64"  --e2e-seconds 10  --e2e-size 1920x1080  --e2e-planes "true false"
#   --e2e-query "..."    the e2e requests' query (default kernel_preset=gaussian:sigma=8&format=jpeg)
#   --e2e-opts "..."     fftbloomd options for the e2e daemons (e.g. --gpus all)
#   --e2e-variant NAME   the variant name of those options (default "default")
#   --peers LIST         the peers suite's programs, comma-separated (default all of them):
#                        torch (cuFFT, copy bandwidth), vkfft, fftw, conv (cuDNN)
#   --vkfft-dir DIR      a VkFFT 1.3.4 checkout (or VKFFT_DIR; a packed folder's vkfft/): the
#                        peers suite builds bench/peer_vkfft.cu with nvcc against it
#   --machine NAME       the machine's name in the lines and the results folder (default: from
#                        the GPU's renderer: llvmpipe, h200, ...)
#   --save               also write the lines to bench/results/MACHINE/STAMP-SUITE.jsonl and the
#                        stderr tables to STAMP-SUITE.txt (STAMP: UTC start, 2026-11-23T1530)
#   --results DIR        save under DIR/MACHINE/ instead (implies --save)
#   --budget-minutes N   start no piece whose estimate would end past N minutes from the start,
#                        and stop a running one at the limit; what was left out is listed at the
#                        end (estimates: --list)
#   --bin DIR            the binaries (default: the packed folder's bin, $BENCH_BIN, or build)
#   --list               print the plan (suite, piece, estimated seconds on an H200-class host,
#                        or on llvmpipe with --quick) and run nothing
# Environment: PYTHON (a python3 for the peers), BENCH_FRAMES (JPEG frames for e2e, default
# bench/frames; make bench-frames), BENCH_WORK (scratch: FFTW wisdom, conv inputs, the VkFFT
# peer; default BIN/bench-work). Exit status: 0 when every piece ran and succeeded, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }

suites="" quick=0 only="" runs="" repeat=1 wisdom="" machine="" save=0 results="" budget=0
bin=${BENCH_BIN:-} list=0 one_process=0 bench_opts="" e2e_clients="" e2e_seconds="" e2e_size=""
e2e_opts="" e2e_variant="" e2e_planes="true" vkfft_dir=${VKFFT_DIR:-} peers="torch,vkfft,fftw,conv"
baseline="" baseline_commit="" e2e_query="" vfilter=""
need() { [ $# -ge 2 ] || { echo "run.sh: $1 takes a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--only) need "$@"; only=$2; shift ;;
	--variant) need "$@"; vfilter=$2; shift ;;
	--runs) need "$@"; runs=$2; shift ;;
	--repeat) need "$@"; repeat=$2; shift ;;
	--wisdom) need "$@"; wisdom=$2; shift ;;
	--one-process) one_process=1 ;;
	--baseline) need "$@"; baseline=$2; shift ;;
	--baseline-commit) need "$@"; baseline_commit=$2; shift ;;
	--bench-opts) need "$@"; bench_opts=$2; shift ;;
	--e2e-clients) need "$@"; e2e_clients=$2; shift ;;
	--e2e-seconds) need "$@"; e2e_seconds=$2; shift ;;
	--e2e-size) need "$@"; e2e_size=$2; shift ;;
	--e2e-planes) need "$@"; e2e_planes=$2; shift ;;
	--e2e-opts) need "$@"; e2e_opts=$2; shift ;;
	--e2e-query) need "$@"; e2e_query=$2; shift ;;
	--e2e-variant) need "$@"; e2e_variant=$2; shift ;;
	--vkfft-dir) need "$@"; vkfft_dir=$2; shift ;;
	--peers) need "$@"; peers=$2; shift ;;
	--machine) need "$@"; machine=$2; shift ;;
	--save) save=1 ;;
	--results) need "$@"; results=$2; save=1; shift ;;
	--budget-minutes) need "$@"; budget=$(awk -v m="$2" 'BEGIN { printf "%d", m * 60 }'); shift ;;
	--bin) need "$@"; bin=$2; shift ;;
	--list) list=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; usage; exit 2 ;;
	*) [ -z "$suites" ] || { echo "run.sh: one SUITE argument (comma-separated)" >&2; exit 2; }
	   suites=$1 ;;
	esac
	shift
done
[ -n "$suites" ] || { usage; exit 2; }
plan_suites=""
for s in $(echo "$suites" | tr ',' ' '); do
	case $s in
	all) plan_suites="$plan_suites fft bloom conv peers e2e" ;;
	fft | bloom | conv | peers | e2e) plan_suites="$plan_suites $s" ;;
	*) echo "run.sh: unknown suite '$s' (fft, bloom, conv, peers, e2e, all)" >&2; exit 2 ;;
	esac
done
case $repeat in '' | *[!0-9]*) echo "run.sh: --repeat takes a number" >&2; exit 2 ;; esac
[ "$repeat" -ge 1 ] || repeat=1

# the binaries: given, a packed folder's bin/, or the build tree
if [ -z "$bin" ]; then
	if [ -x "$root/bin/fftbloom" ]; then bin=$root/bin; else bin=${BUILD:-$root/build}; fi
fi
FB=$bin/fftbloom
[ -x "$FB" ] || { echo "run.sh: no $FB (make, or --bin DIR, or bench/pack.sh's folder)" >&2; exit 1; }
[ -n "$runs" ] || { if [ $quick = 1 ]; then runs=10; else runs=30; fi; }
qflag=""
[ $quick = 1 ] && qflag=--quick
work=${BENCH_WORK:-$bin/bench-work}
frames=${BENCH_FRAMES:-$root/bench/frames}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# ---- the plan: one line a piece, "SUITE EST KIND ARG1 ARG2" ----
# EST: seconds a piece took (about) on the H200 host with one process a workload, or on the
# 2-core llvmpipe VM with --quick; the budget guard measures the real time as it goes.
est_wl() { # ID: one fft or bloom workload in a process of its own
	if [ $quick = 1 ]; then
		case $1 in bloom.*) echo 8 ;; *) echo 4 ;; esac
	else
		case $1 in bloom.2160p.* | bloom.rows.2160p.*) echo 7 ;; *) echo 4 ;; esac
	fi
}
e2e_est() {
	n=$(echo "${e2e_clients:-x x x}" | wc -w)
	s=${e2e_seconds:-10}
	np=$(echo "$e2e_planes" | wc -w)
	if [ $quick = 1 ]; then echo $((30 + 12 + np * (n * (${e2e_seconds:-5} + 8) + 10))); else echo $((35 + 12 + np * (n * (s + 4) + 15))); fi
}
plan=$tmp/plan
: >"$plan"
for s in $plan_suites; do
	case $s in
	fft | bloom)
		if [ $one_process = 1 ]; then
			n=$("$FB" bench --list --suite "$s" $qflag ${only:+--only "$only"} 2>/dev/null | wc -l)
			[ "$n" -gt 0 ] && echo "$s $((n * 3 + 5)) all - -" >>"$plan"
		else
			"$FB" bench --list --suite "$s" $qflag ${only:+--only "$only"} 2>/dev/null |
				while read -r id variant size label; do
					[ -z "$vfilter" ] || [ "$variant" = "$vfilter" ] || continue
					echo "$s $(est_wl "$id") wl $id $variant"
					[ -z "$wisdom" ] || echo "$s $(est_wl "$id") wlw $id $variant"
					[ -z "$baseline" ] || echo "$s $(est_wl "$id") wlb $id $variant $label"
					[ -z "$baseline" ] || [ -z "$wisdom" ] ||
						echo "$s $(est_wl "$id") wlbw $id $variant $label"
				done >>"$plan"
		fi
		;;
	conv) if [ $quick = 1 ]; then echo "conv 40 conv - -"; else echo "conv 90 conv - -"; fi >>"$plan" ;;
	peers)
		for p in $(echo "$peers" | tr ',' ' '); do
			case $quick:$p in
			0:torch) echo "peers 40 torch - -" ;;
			0:vkfft) echo "peers 120 vkfft - -" ;; # nvcc takes most of it: 46 s on 2 cores
			0:fftw) echo "peers 240 fftw - -" ;;
			0:conv) echo "peers 40 convpeer - -" ;;
			1:torch) echo "peers 30 torch - -" ;;
			1:vkfft) echo "peers 60 vkfft - -" ;;
			1:fftw) echo "peers 15 fftw - -" ;;
			1:conv) echo "peers 20 convpeer - -" ;;
			*) echo "run.sh: --peers takes torch, vkfft, fftw, conv, not '$p'" >&2; exit 2 ;;
			esac
		done >>"$plan" || exit 2
		;;
	e2e) echo "e2e $(e2e_est) e2e - -" >>"$plan" ;;
	esac
done
if [ $list = 1 ]; then
	total=0
	printf '%-6s %-6s %-9s %s\n' suite est_s piece workload
	while read -r s e k a b c; do
		printf '%-6s %6s %-9s %s %s\n' "$s" "$e" "$k" "$a" "$b"
		total=$((total + e))
	done <"$plan"
	echo "total: $total s a round (x $repeat rounds); the pieces of an unavailable peer take none"
	exit 0
fi

# ---- the context: machine, commit, Python ----
mkdir -p "$work"
export FFTBLOOM_COMMIT
FFTBLOOM_COMMIT=$("$FB" --version 2>/dev/null | sed -n 's/^fftbloom .*(commit \(.*\))$/\1/p')
if [ -z "$machine" ]; then
	renderer=$("$FB" info 2>/dev/null | sed -n 's/.*"renderer": *"\([^"]*\)".*/\1/p')
	[ -n "$renderer" ] || { echo "run.sh: no GPU context (fftbloom info failed); --machine NAME to name it anyway" >&2; exit 1; }
	case $renderer in
	*llvmpipe*) machine=llvmpipe ;;
	*) machine=$(echo "$renderer" | sed 's/^NVIDIA //; s/^AMD //; s/^Intel(R) //; s/[\/(].*//' |
		tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//') ;;
	esac
fi
export BENCH_MACHINE=$machine
py_with() { # PYTHON-CODE: the first python3 that runs it
	for p in ${PYTHON:-} python3 /usr/bin/python3; do
		"$p" -c "$1" >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}
stamp=$(date -u +%Y-%m-%dT%H%M)
if [ $save = 1 ]; then
	resdir=${results:-$root/bench/results}/$machine
	mkdir -p "$resdir" || exit 1
fi
T0=$(date +%s)
failed="" skipped="" ran=0
say() { echo "[run.sh $(($(date +%s) - T0)) s] $*" >&2; }
say "machine $machine, binaries $bin (commit ${FFTBLOOM_COMMIT:-unknown}), work $work"

# fits SUITE EST NAME: whether a piece estimated at EST seconds fits the budget (else it is
# listed as skipped); sets $to, the timeout that stops it at the budget's end
fits() {
	el=$(($(date +%s) - T0))
	to=""
	[ "$budget" -gt 0 ] || return 0
	if [ $((el + $2)) -gt "$budget" ]; then
		say "skip $1 $3: estimated $2 s, $el s of $budget s spent"
		skipped="$skipped $1:$3"
		return 1
	fi
	to="timeout -k 5 $((budget - el))"
}
# piece SUITE EST NAME COMMAND...: runs COMMAND (its stdout: result lines; stdin /dev/null),
# unless the budget forbids; lines to stdout and the saved file, stderr to stderr and the saved
# table
piece() {
	ps=$1 pe=$2 pn=$3
	shift 3
	fits "$ps" "$pe" "$pn" || return 0
	say "$ps $pn (about $pe s)"
	out=$tmp/out rcf=$tmp/rc
	{ $to "$@" </dev/null 2>&3 >"$out"; echo $? >"$rcf"; } 3>&1 |
		{ if [ $save = 1 ]; then tee -a "$resdir/$stamp-$ps.txt"; else cat; fi; } >&2
	rc=$(cat "$rcf")
	if [ "$repeat" -gt 1 ]; then # the round, in each line's detail
		sed -e "/\"round\":/!s/\"detail\":{}/\"detail\":{\"round\":$round}/" \
			-e "/\"round\":/!s/\"detail\":{/\"detail\":{\"round\":$round,/" \
			-e "s/\"round\":[0-9]*/\"round\":$round/" "$out" >"$out.r" && mv "$out.r" "$out"
	fi
	cat "$out"
	[ $save = 1 ] && cat "$out" >>"$resdir/$stamp-$ps.jsonl"
	ran=$((ran + 1))
	if [ "$rc" != 0 ]; then
		say "$ps $pn: exit status $rc${to:+ (124, 137: stopped at the budget)}"
		failed="$failed $ps:$pn"
	fi
}
unavailable() { say "$1: not run here ($2)"; }

if [ -n "$baseline" ]; then
	[ -x "$baseline/fftbloom" ] || { echo "run.sh: no $baseline/fftbloom" >&2; exit 1; }
	[ $one_process = 0 ] || { echo "run.sh: --baseline runs one process a workload (no --one-process)" >&2; exit 2; }
	pyb=$(py_with 'import json') || { echo "run.sh: --baseline needs python3" >&2; exit 1; }
	if [ -z "$baseline_commit" ]; then
		baseline_commit=$(cat "$baseline/COMMIT" "$baseline/../COMMIT" 2>/dev/null | head -n 1)
		baseline_commit=${baseline_commit:-unknown}
	fi
fi
wcopy=""
if [ -n "$wisdom" ]; then
	[ -r "$wisdom" ] || { echo "run.sh: cannot read --wisdom $wisdom" >&2; exit 1; }
	wcopy=$work/wisdom.txt
	cp "$wisdom" "$wcopy"
	cp "$wisdom" "$wcopy.baseline" # each build adds what it measures to its own copy
fi
# old_bench VARIANT LABEL [options]: the baseline's bench on one old label, as result lines
old_bench() {
	ov=$1 ol=$2
	shift 2
	piece "$s" "$e" "$a/$ov" "$pyb" "$here/old_lines.py" --suite "$s" --id "$a" --variant "$ov" \
		--commit "$baseline_commit" -- "$baseline/fftbloom" bench --only "=$ol" $obargs "$@"
}
# fftbloom bench's options in every fft and bloom piece
bargs="$qflag --runs $runs --warmup 5 --warm-seconds 1 --machine $machine $bench_opts"
[ $quick = 1 ] && bargs="$qflag --runs $runs --warmup 2 --warm-seconds 0 --machine $machine $bench_opts"
obargs=$(echo "$bargs" | sed 's/--machine [^ ]*//') # the old bench had no --machine

run_torch() {
	pyt=$(py_with 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)') ||
		{ unavailable "PyTorch/cuFFT peer" "no python3 with torch and CUDA"; return 0; }
	"$FB" bench --list --suite fft,bloom $qflag ${only:+--only "$only"} >"$work/list.txt" 2>/dev/null
	piece peers "$1" torch "$pyt" "$here/peer_torch.py" --list "$work/list.txt" --runs "$runs" $qflag
}
run_vkfft() {
	vk=$bin/bench/peer_vkfft
	if ! { [ -x "$vk" ] && "$vk" --help >/dev/null 2>&1; }; then
		vk=$work/peer_vkfft
		dir=${vkfft_dir:-$root/vkfft}
		inc=""
		for d in "$dir/vkFFT" "$dir"; do [ -r "$d/vkFFT.h" ] && { inc=$d; break; }; done
		nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
		[ -n "$inc" ] || { unavailable "VkFFT peer" "no VkFFT checkout: --vkfft-dir or VKFFT_DIR"; return 0; }
		[ -n "$nvcc" ] || { unavailable "VkFFT peer" "no nvcc"; return 0; }
		if [ ! -x "$vk" ] || [ "$here/peer_vkfft.cu" -nt "$vk" ]; then
			fits peers "$vest" vkfft || return 0
			cuda=$(dirname "$(dirname "$nvcc")")
			say "building the VkFFT peer with $nvcc against $inc"
			"$nvcc" -O3 -std=c++17 -I"$root" -I"$inc" -DVKFFT_BACKEND=1 \
				-DFFTBLOOM_COMMIT="\"${FFTBLOOM_COMMIT:-unknown}\"" "$here/peer_vkfft.cu" \
				"$here/bench_json.c" -o "$vk" -Xlinker -rpath -Xlinker "$cuda/lib64" -lcuda -lnvrtc \
				2>"$work/peer_vkfft.build.log" ||
				{ say "VkFFT peer: build failed ($work/peer_vkfft.build.log)"; failed="$failed peers:vkfft-build"; return 0; }
		fi
	fi
	"$vk" --help >/dev/null 2>&1 || { unavailable "VkFFT peer" "$vk does not start (libcuda, libnvrtc?)"; return 0; }
	set --
	while read -r id variant size; do
		[ "$variant" = default ] || continue
		case $id in
		fft.*) set -- "$@" --fft "$id=$size" ;;
		bloom.rows.* | bloom.*.gray.* | bloom.*.fp16) ;;
		bloom.*.fp32) set -- "$@" --bloom "$id=$size" ;;
		esac
	done <<EOF
$("$FB" bench --list --suite fft,bloom $qflag ${only:+--only "$only"} 2>/dev/null)
EOF
	if [ $quick = 0 ] && [ -z "$only" ]; then # the circular frames, as the cuFFT peer
		set -- "$@" --bloom bloom.1080p.frame.fp32=1080x1920 --bloom bloom.2160p.frame.fp32=2160x3840
	fi
	[ $# -gt 0 ] || { unavailable "VkFFT peer" "no workload selected"; return 0; }
	piece peers "$vest" vkfft "$vk" --runs "$runs" --machine "$machine" "$@"
	# VkFFT's Vulkan backend (built here: make VKFFT_DIR=DIR build/bench/peer_vkfft_vk), under
	# the same 48 KiB of shared memory as GL: the FFTs only
	vv=$bin/bench/peer_vkfft_vk
	[ -x "$vv" ] || { unavailable "VkFFT Vulkan peer" "no $vv (make VKFFT_DIR=DIR build/bench/peer_vkfft_vk)"; return 0; }
	vffts=""
	while [ $# -gt 1 ]; do
		[ "$1" = --fft ] && vffts="$vffts --fft ${2%% *}" # ID=HxW, without the label after it
		shift 2
	done
	[ -n "$vffts" ] || return 0
	# shellcheck disable=SC2086 # ID=HxW words, no spaces
	piece peers "$vest" vkfft-vulkan "$vv" --runs "$runs" --machine "$machine" $vffts
}
run_fftw() {
	[ -x "$bin/bench/fftw_peer" ] || { unavailable "FFTW peer" "no $bin/bench/fftw_peer (make build/bench/fftw_peer)"; return 0; }
	piece peers "$1" fftw "$bin/bench/fftw_peer" $qflag --wisdom "$work/fftw.wisdom" --max-seconds 5 \
		--runs "$runs" --machine "$machine" ${only:+--only "$only"}
}
run_convpeer() {
	pyt=$(py_with 'import sys, numpy, torch; sys.exit(0 if torch.cuda.is_available() else 1)') ||
		{ unavailable "cuDNN conv peer" "no python3 with numpy, torch and CUDA"; return 0; }
	cdir=$work/conv${qflag:+-quick}
	if [ ! -r "$cdir/conv_x.npy" ]; then
		INPUTS_ONLY=1 QUICK=$quick PYTHON=$pyt sh "$here/conv_bench.sh" "$bin" "$cdir" >/dev/null ||
			{ say "cuDNN conv peer: inputs not written"; failed="$failed peers:convpeer"; return 0; }
	fi
	piece peers "$1" convpeer env RUNS="$runs" "$pyt" "$here/conv_peer_torch.py" "$cdir"
}
run_conv() {
	pyn=$(py_with 'import numpy') || { unavailable "conv suite" "no python3 with numpy"; return 0; }
	piece conv "$1" conv env QUICK=$quick REPEAT="$runs" PYTHON="$pyn" sh "$here/conv_bench.sh" "$bin" \
		"$work/conv${qflag:+-quick}"
}
run_e2e() {
	if [ $quick = 1 ]; then size=${e2e_size:-640x360} cl=${e2e_clients:-8 32} sec=${e2e_seconds:-5}
	else size=${e2e_size:-1920x1080} cl=${e2e_clients:-8 32 64} sec=${e2e_seconds:-10}; fi
	piece e2e "$1" e2e env BUILD="$bin" E2E_SIZE="$size" E2E_CLIENTS="$cl" E2E_SECONDS="$sec" \
		E2E_FRAMES="$frames" E2E_PLANES="$e2e_planes" E2E_VARIANT="$e2e_variant" \
		E2E_OUT="$work/e2e.jsonl" BENCH_MACHINE="$machine" ${e2e_query:+E2E_QUERY="$e2e_query"} \
		sh "$here/e2e.sh" $e2e_opts
}

round=0
while [ $round -lt "$repeat" ]; do
	[ "$repeat" -gt 1 ] && say "round $round of $repeat"
	while read -r s e k a b c; do
		case $k in
		wl) piece "$s" "$e" "$a/$b" "$FB" bench $bargs --suite "$s" --only "$a" --variant "$b" ;;
		wlw) piece "$s" "$e" "$a/$b+wisdom" "$FB" bench $bargs --suite "$s" --only "$a" --variant "$b" \
			--fft-wisdom "$wcopy" ;;
		wlb) old_bench "$b@baseline" "$c" ;;
		wlbw) old_bench "$b+wisdom@baseline" "$c" --fft-wisdom "$wcopy.baseline" ;;
		all)
			piece "$s" "$e" all "$FB" bench $bargs --suite "$s" ${only:+--only "$only"}
			[ -z "$wcopy" ] || piece "$s" "$e" all+wisdom "$FB" bench $bargs --suite "$s" \
				${only:+--only "$only"} --fft-wisdom "$wcopy"
			;;
		torch) run_torch "$e" ;;
		vkfft) vest=$e; run_vkfft ;;
		fftw) run_fftw "$e" ;;
		convpeer) run_convpeer "$e" ;;
		conv) run_conv "$e" ;;
		e2e) run_e2e "$e" ;;
		esac
	done <"$plan"
	round=$((round + 1))
done
say "done: $ran pieces${failed:+; failed:$failed}${skipped:+; skipped for the budget:$skipped}"
[ $save = 1 ] && say "saved: $(ls "$resdir"/"$stamp"-* 2>/dev/null | tr '\n' ' ')"
[ -z "$failed" ]
