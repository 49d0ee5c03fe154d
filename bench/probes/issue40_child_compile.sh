#!/bin/bash
# Issue 40, item 4: does a program compiled by another process cost the GPU thread nothing when
# the driver's disk cache is shared? bench/compile_probe --child DIR: a child process compiles 8
# programs (24 rounds) to binaries while this process runs its loop of tiny dispatches; then this
# process loads each binary and times its first dispatch (no warm-up). Ways (HOWS), ROUNDS each:
#   nocache:        __GL_SHADER_DISK_CACHE=0 (a binary's first dispatch readies it: 20-27 ms)
#   nocache-ready:  the same, the child dispatching each program once before saving it
#   shared:         the driver's disk cache on, one fresh folder for both processes
#   shared-ready:   the same, the child dispatching each program once
#   shared-wait:    shared, 2 s between the child's exit and the loads
#   sequential:     shared, but the loading process starts after the child ends (--save, then
#                   --load: its binary-cold line)
# Each load's own time is in the .err files ("binary I: load ..., first dispatch ...").
# Then (VARIANTS=1, the default) with the cache shared, twice each, one line per child of
# first-dispatch times in load order: three children one after another; the same loading the
# binaries last first; one or three tiny programs compiled by this process before each child's
# loads (primers, their times in brackets); two children of 16 programs.
# usage (repository root, the pack in .carry): bash bench/probes/issue40_child_compile.sh
# Results: $OUT/r.tgz (the JSON lines and summary.txt).
R=${OUT:-/tmp}/r; mkdir -p "$R"
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
CP=$P/bin/bench/compile_probe
for round in $(seq "${ROUNDS:-2}"); do
	for how in ${HOWS:-nocache nocache-ready shared shared-ready shared-wait sequential}; do
		rm -rf /tmp/cc40 /tmp/dc40; mkdir -p /tmp/dc40
		case $how in
		nocache*) env="__GL_SHADER_DISK_CACHE=0" ;;
		*) env="__GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/dc40 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1" ;;
		esac
		case $how in *-ready) rd=--ready ;; *-wait) rd="--child-wait 2000" ;; *) rd= ;; esac
		if [ "$how" = sequential ]; then
			env $env timeout 60 "$CP" --programs 10 --size 24 --save /tmp/cc40 2>"$R/$how-$round.err"
			env $env timeout 60 "$CP" --programs 10 --size 24 --load /tmp/cc40 \
				>"$R/$how-$round.jsonl" 2>>"$R/$how-$round.err"
		else
			env $env timeout 60 "$CP" --programs 8 --size 24 --child /tmp/cc40 $rd \
				>"$R/$how-$round.jsonl" 2>"$R/$how-$round.err"
		fi
		grep -o 'first dispatch [0-9.]*' "$R/$how-$round.err" | awk '{printf " %s", $3}' |
			sed "s/^/$how round $round: first dispatches (ms):/" >>"$R/summary.txt"; echo >>"$R/summary.txt"
		echo "$how round $round: driver cache $(du -sk /tmp/dc40 | cut -f1) KiB" >>"$R/summary.txt"
	done
done
if [ "${VARIANTS:-1}" = 1 ]; then
export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/dc40 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1
for v in "--child-batches 3" "--child-batches 3 --child-reverse" "--child-batches 3 --child-primers 1" \
	"--child-batches 3 --child-primers 3" "--child-batches 2 --programs 16"; do
	for r in 1 2; do
		rm -rf /tmp/cc40 /tmp/dc40; mkdir -p /tmp/dc40
		echo "variant $v, round $r: first dispatches (ms) in load order"
		timeout 100 "$CP" --programs 8 --size 24 --child /tmp/cc40 $v 2>&1 >/dev/null |
			grep -o 'primer [0-9]*: [0-9.]*\|binary [0-9]*:.*first dispatch [0-9.]*' |
			awk '/primer/ {printf "[%s] ", $3; next} {printf "%s ", $NF} /binary (7|15):/ {print ""}'
	done
done >>"$R/variants.txt"
unset __GL_SHADER_DISK_CACHE __GL_SHADER_DISK_CACHE_PATH __GL_SHADER_DISK_CACHE_SKIP_CLEANUP
fi
python3 - "$R"/*.jsonl >>"$R/summary.txt" <<'PY'
import json, sys
for f in sys.argv[1:]:
    for l in open(f):
        try: d = json.loads(l)
        except ValueError: continue
        m, x = d.get("metrics", {}), d.get("detail", {})
        keys = ["child_ms", "loop_median_ms", "loop_p99_ms", "loop_max_ms", "loop_lost_ms",
                "load_median_ms", "load_max_ms", "first_dispatch_median_ms", "first_dispatch_max_ms",
                "second_dispatch_median_ms"]
        v = {k: round(float(m.get(k, x.get(k))), 2) for k in keys if k in m or k in x}
        print(f.rsplit("/", 1)[1], d["id"], v)
PY
cat "$R/summary.txt" "$R/variants.txt" 2>/dev/null
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r
