#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the fused column pass with a work group a complex plane
# (--conv-planes 2: .xy or .zw of its two columns, exchanged as whole vec2) against both planes a
# group, frame by frame in one process (--ab), two rounds: the bloom suite's blooms (blooms.txt),
# then planes 2 on 256 invocations a column against its rule's (threads.txt), then the JPEG
# suite's frames, a process each way, alternated (jpeg.txt). Then test_bloom's
# test_ends_and_layouts on the GPU (tests.txt), and what the driver's program binaries say of
# their registers (binaries.txt: strings, and cuobjdump on any ELF inside).
# Measured at eb8e9ca (reverted in c488f0a: --conv-planes is gone since).
# usage (repository root, a pack in .carry built at eb8e9ca): bash bench/probes/issue40_s29.sh
. "$(dirname "$0")/blooms_start.sh" s29
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "shipped=$P/bin/fftbloom@none" -- $B --runs 30 \
	--ab "--conv-planes 2"
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" threads "shipped=$P/bin/fftbloom@none" -- $B --runs 30 \
	--conv-planes 2 --ab "--conv-planes 2 --conv-threads 256"
J="--suite jpeg --only jpeg.1080p.k49.444,jpeg.2160p.k49.444 --machine $M --program-cache none --runs 30"
for round in 1 2; do
	for planes in 1 2; do
		# shellcheck disable=SC2086
		timeout 150 "$P/bin/fftbloom" bench $J --fft-wisdom none --conv-planes $planes \
			>>"$R/jpeg.jsonl" 2>"$R/jpeg-$planes-$round.txt"
		echo "== planes $planes round $round rc $?"
		grep -E "^jpeg\." "$R/jpeg-$planes-$round.txt"
	done
done | tee "$R/jpeg.txt"
export TEST_FILTER=test_ends_and_layouts TEST_ENGINE=gpu
SECONDS_EACH=200 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
unset TEST_FILTER TEST_ENGINE
# the driver's program binaries: any register counts in them
rm -rf /tmp/s29pc && mkdir -p /tmp/s29pc
timeout 100 "$P/bin/fftbloom" bench $B --only bloom.2160p.k512.fp32 --runs 3 --fft-wisdom none \
	--program-cache /tmp/s29pc --conv-planes 2 >/dev/null 2>"$R/binaries-bench.txt"
{
	ls -la /tmp/s29pc | head -50
	python3 - /tmp/s29pc <<'PY'
import os, subprocess, sys
d = sys.argv[1]
for root, _, files in os.walk(d):
    for f in sorted(files):
        p = os.path.join(root, f)
        b = open(p, 'rb').read()
        print('==', f, len(b), 'bytes', 'ELF at', [i for i in range(len(b)) if b.startswith(b'\x7fELF', i)][:4])
        for s in subprocess.run(['strings', '-n', '6', p], capture_output=True, text=True).stdout.splitlines():
            if any(k in s.lower() for k in ('reg', 'nvinfo', '!!nv', 'sm_', 'shared', 'local', 'spill')):
                print('   ', s[:160])
        i = b.find(b'\x7fELF')
        if i >= 0:
            open('/tmp/s29.elf', 'wb').write(b[i:])
            r = subprocess.run(['cuobjdump', '-res-usage', '/tmp/s29.elf'], capture_output=True, text=True)
            print('   cuobjdump:', (r.stdout + r.stderr)[:1500])
PY
} >"$R/binaries.txt" 2>&1
head -c 6000 "$R/binaries.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s29 && rm -rf "$R"
