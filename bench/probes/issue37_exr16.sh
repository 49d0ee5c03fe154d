#!/bin/bash
# Issue 37's EXR figures on 16 cores: fftbloomd pinned (taskset) to cores 0-15 of the GPU host,
# --codec-threads left at its default (one per core it may run on: 16), the load generator on
# other cores; 1080p half and float ZIP EXR in, zip / none / piz EXR and JPEG answers, and the
# JPEG frames of bench/frames at 32 clients for comparison. Results in one tarball under $OUT.
# usage (from the repository root, a pack in .carry): bash bench/probes/issue37_exr16.sh
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/x; mkdir -p "$R"
B=$P/bin
export PATH=$B:$PATH
ncores=$(nproc)
lg="$((ncores - 8))-$((ncores - 1))"
{ nvidia-smi -L; echo "cores $ncores; daemon 0-15; loadgen $lg"; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
mkdir -p /tmp/exr/half /tmp/exr/float
for f in "$P"/bench/frames/1920x1080/*.jpg; do
	b=$(basename "$f" .jpg)
	fftbloom convert "$f" -o /tmp/exr/half/$b.exr --quiet
	fftbloom convert "$f" -o /tmp/exr/float/$b.exr --bits 32 --quiet
done
load() { # NAME EXT DIR QUERY CLIENTS
	taskset -c 0-15 fftbloomd --port 8090 --queue-size 256 --max-per-ip 0 >"$R/d-$1.log" 2>&1 & pid=$!
	for i in $(seq 300); do "$B/bench/loadgen" --get http://127.0.0.1:8090/readyz >/dev/null 2>&1 && break; sleep 0.2; done
	taskset -c "$lg" "$B/bench/loadgen" -c "$5" -d 8 --any-body --json --label "$1" --server-pid $pid \
		--metrics-url http://127.0.0.1:8090/metrics -u "http://127.0.0.1:8090/v1/bloom?kernel_preset=gaussian:sigma=8&$4" \
		$(for f in "$3"/*."$2"; do printf -- '-f %s ' "$f"; done) >>"$R/exr16.jsonl" 2>>"$R/exr16.txt"
	kill $pid; wait $pid 2>/dev/null
}
load half-zip-c32 exr /tmp/exr/half 'format=exr&exr_compression=zip' 32
load half-none-c32 exr /tmp/exr/half 'format=exr&exr_compression=none' 32
load half-piz-c32 exr /tmp/exr/half 'format=exr&exr_compression=piz' 32
load half-jpeg-c32 exr /tmp/exr/half 'format=jpeg' 32
load float-zip-c32 exr /tmp/exr/float 'format=exr&exr_compression=zip' 32
load float-none-c32 exr /tmp/exr/float 'format=exr&exr_compression=none' 32
load jpeg-c32 jpg "$P/bench/frames/1920x1080" 'format=jpeg' 32
tar czf "${OUT:-/tmp}/x.tgz" -C "$(dirname "$R")" x && rm -rf "$R"
