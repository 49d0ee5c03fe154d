#!/bin/bash
# --float-upload-lease measured: 1080p EXR frames (half ZIP, float uncompressed) through POST
# /v1/bloom at 32 clients with the lease off and on, alternated, fftbloomd pinned to cores 0-15
# (a codec thread a core), the load generator beside it. Results in one tarball under $OUT.
# usage (from the repository root, a pack in .carry): bash bench/probes/issue37_float_lease.sh
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/f; mkdir -p "$R"
B=$P/bin
export PATH=$B:$PATH
ncores=$(nproc)
lg="$((ncores - 8))-$((ncores - 1))"
{ nvidia-smi -L; echo "cores $ncores; daemon 0-15; loadgen $lg"; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
mkdir -p /tmp/exr/half /tmp/exr/floatnone
for f in "$P"/bench/frames/1920x1080/*.jpg; do
	b=$(basename "$f" .jpg)
	fftbloom convert "$f" -o /tmp/exr/half/$b.exr --quiet
	fftbloom convert "$f" -o /tmp/exr/floatnone/$b.exr --bits 32 --exr-compression none --quiet
done
load() { # NAME LEASE DIR QUERY
	FFTBLOOM_FLOAT_UPLOAD_LEASE=$2 taskset -c 0-15 fftbloomd --port 8090 --queue-size 256 --max-per-ip 0 >"$R/d-$1-$2.log" 2>&1 & pid=$!
	for i in $(seq 300); do "$B/bench/loadgen" --get http://127.0.0.1:8090/readyz >/dev/null 2>&1 && break; sleep 0.2; done
	taskset -c "$lg" "$B/bench/loadgen" -c 32 -d 8 --any-body --json --label "$1-lease-$2" --server-pid $pid \
		--metrics-url http://127.0.0.1:8090/metrics -u "http://127.0.0.1:8090/v1/bloom?kernel_preset=gaussian:sigma=8&$4" \
		$(for f in "$3"/*.exr; do printf -- '-f %s ' "$f"; done) >>"$R/lease.jsonl" 2>>"$R/lease.txt"
	"$B/bench/loadgen" --get http://127.0.0.1:8090/metrics 2>/dev/null | grep -E '^fftbloom_uploads_(lent|copied)_total' >>"$R/lease.txt"
	kill $pid; wait $pid 2>/dev/null
}
for round in 1 2; do
	for lease in false true; do
		load half-zip-none "$lease" /tmp/exr/half 'format=exr&exr_compression=none'
		load float-none-none "$lease" /tmp/exr/floatnone 'format=exr&exr_compression=none'
	done
done
tar czf "${OUT:-/tmp}/f.tgz" -C "$(dirname "$R")" f && rm -rf "$R"
