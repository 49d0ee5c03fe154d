#!/bin/sh
# The benchmark harness on this machine (llvmpipe): bench/run.sh runs the smallest fft and bloom
# workloads (--quick, 3 runs, results saved under a scratch folder), and every result line is
# checked: by bench/check_lines.py (every required field, finite positive metrics, the ID in
# bench/README.md's list) and here against what was asked (the suite, ID, variant and impl of
# each line, exactly those lines; the commit fftbloom --version names; machine llvmpipe; this
# host; the command; gb_s agreeing with ms; the bloom's stages under gles/gpu_timer.h's names, the
# ones its path runs; each FFT axis's exchanges; the saved files holding the same lines). Also: every
# ID fftbloom bench lists is documented, check_lines.py rejects broken lines, --list and
# --budget-minutes, and an unknown suite is a usage error. Timings are printed, never asserted.
# Prints "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -x "$BUILD/fftbloom" ]; then
	echo "bench: $BUILD/fftbloom not built"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
BUILD=$(cd "$BUILD" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT" || exit 1

# the run: 3 fft workloads (the 256x256 transform, three variants) and one bloom workload
t0=$(date +%s)
BENCH_WORK=$tmp/work sh bench/run.sh fft,bloom --quick --bin "$BUILD" --runs 3 \
	--only fft.2d.256x256,bloom.270p.k64.fp16 --results "$tmp/res" >"$tmp/lines" 2>"$tmp/err"
echo $? >"$tmp/rc"
echo "run.sh took $(($(date +%s) - t0)) s"
sh bench/run.sh fft --quick --bin "$BUILD" --list >"$tmp/list" 2>&1
echo $? >"$tmp/list_rc"
BENCH_WORK=$tmp/work sh bench/run.sh fft --quick --bin "$BUILD" --only fft.2d.256x256 \
	--budget-minutes 0.02 >"$tmp/budget_lines" 2>"$tmp/budget_err"
echo $? >"$tmp/budget_rc"
sh bench/run.sh nosuch --bin "$BUILD" >/dev/null 2>&1
echo $? >"$tmp/bad_rc"
for q in "" --quick; do "$BUILD/fftbloom" bench --list $q; done >"$tmp/ids"
# --ab: a second configuration alternated frame by frame, a line each (named by the variant, or
# +b where the variant would not tell them apart); options that are not the bench's: exit 2
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 --warmup 1 \
	--warm-seconds 0 --ab "--even-pitch=false --rows-split 1" >"$tmp/ab_lines" 2>"$tmp/ab_err"
echo $? >"$tmp/ab_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 --warmup 1 \
	--warm-seconds 0 --ab "--conv-threads 0" >"$tmp/ab2_lines" 2>/dev/null
echo $? >"$tmp/ab2_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --ab "--nosuch 1" \
	>/dev/null 2>&1
echo $? >"$tmp/ab_bad_rc"
# --conv-mult-shared on the --ab side: detail.column_multiply says which form each line ran
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 --warmup 1 \
	--warm-seconds 0 --ab "--conv-mult-shared" >"$tmp/mult_lines" 2>/dev/null
echo $? >"$tmp/mult_rc"
# --spectrum-tiles: the row spectra in tiles of 4 columns (the ends forced into the rows of this
# small frame), its line saying so; a width that is not a power of two: exit 2, on either side
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 --warmup 1 \
	--warm-seconds 0 --ends-in-rows on --spectrum-tiles 4 >"$tmp/tiles_lines" 2>/dev/null
echo $? >"$tmp/tiles_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --spectrum-tiles 3 \
	>/dev/null 2>&1
echo $? >"$tmp/tiles_bad_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 \
	--ab "--spectrum-tiles 6" >/dev/null 2>&1
echo $? >"$tmp/tiles_ab_bad_rc"
# --ab with the built-in FFT rules alone on the second side; another wisdom file is refused
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 --warmup 1 \
	--warm-seconds 0 --ab "--fft-wisdom builtin" >"$tmp/ab3_lines" 2>/dev/null
echo $? >"$tmp/ab3_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 \
	--ab "--fft-wisdom $tmp/other-wisdom" >/dev/null 2>&1
echo $? >"$tmp/ab_wisdom_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 --warmup 1 \
	--warm-seconds 0 --fft-wisdom "$tmp/named-wisdom" --ab "--fft-wisdom builtin" \
	>"$tmp/ab4_lines" 2>/dev/null
echo $? >"$tmp/ab4_rc"
# the jpeg suite with the frame in as its coefficients
"$BUILD/fftbloom" bench --suite jpeg --quick --only jpeg.270p.k49.444 --variant scan --runs 3 \
	--warmup 1 --warm-seconds 0 --jpeg-in coefs >"$tmp/coefs_lines" 2>/dev/null
echo $? >"$tmp/coefs_rc"
"$BUILD/fftbloom" bench --suite jpeg --quick --jpeg-in nosuch >/dev/null 2>&1
echo $? >"$tmp/coefs_bad_rc"
# options the two sides share (the runs, the GPU's memory), and workloads that do not alternate
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 --runs 3 \
	--ab "--runs 3000" >/dev/null 2>&1
echo $? >"$tmp/ab_runs_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.270p.k64.fp32 \
	--ab "--gpu-frame-memory 1M" >/dev/null 2>&1
echo $? >"$tmp/ab_mem_rc"
"$BUILD/fftbloom" bench --suite bloom --quick --only bloom.rows.270p.k64 --ab "--rows-split 1" \
	>/dev/null 2>&1
echo $? >"$tmp/ab_rows_rc"

exec env TMPD="$tmp" FFTBLOOM="$BUILD/fftbloom" /usr/bin/python3 - <<'PYEOF'
import glob, json, os, socket, subprocess, sys

tmp, fb = os.environ['TMPD'], os.environ['FFTBLOOM']
passed = failed = 0


def ok(name, cond, detail=''):
    global passed, failed
    print(('ok   ' if cond else 'FAIL ') + name + (' ' + detail if detail else ''))
    if cond:
        passed += 1
    else:
        failed += 1


def read(name):
    return open(os.path.join(tmp, name)).read()


def check(path):
    p = subprocess.run([sys.executable, 'bench/check_lines.py', path], capture_output=True, text=True)
    return p.returncode, p.stdout.strip()


rc = int(read('rc'))
ok('run.sh exits 0', rc == 0, 'status %d; stderr tail: %s' % (rc, read('err')[-600:].replace('\n', ' | ')))
text = read('lines')
lines = [json.loads(l) for l in text.splitlines() if l.strip()]
for d in lines:
    m = d.get('metrics', {})
    print('  %s %s %s: %s' % (d.get('id'), d.get('variant'), d.get('impl'),
                              ', '.join('%s %.4g' % kv for kv in m.items())))
crc, cout = check(os.path.join(tmp, 'lines'))
ok('check_lines.py accepts every line', crc == 0, cout.replace('\n', ' | '))

got = sorted((d['suite'], d['id'], d['variant'], d['impl']) for d in lines)
want = sorted([('fft', 'fft.2d.256x256.fwd', v, 'fftbloom') for v in ('default', 'global', 'blocked')]
              + [('bloom', 'bloom.270p.k64.fp16', 'default', 'fftbloom')])
ok('exactly the workloads asked for', got == want, 'got %s' % got)

commit = subprocess.run([fb, '--version'], capture_output=True, text=True).stdout.strip().rsplit('(commit ', 1)[-1].rstrip(')')
ok('each line names the build\'s commit (%s)' % commit, lines and all(d['commit'] == commit for d in lines))
ok('machine llvmpipe, this host, an llvmpipe renderer',
   lines and all(d['machine'] == 'llvmpipe' and d['host'] == socket.gethostname()
                 and 'llvmpipe' in d['gpu'] and d['driver'] for d in lines))
ok('each command is the fftbloom bench that printed it',
   lines and all(d['command'].startswith('fftbloom bench ') and '--only %s' % d['id'] in d['command']
                 and '--variant %s' % d['variant'] in d['command'] for d in lines))
fft = [d for d in lines if d['suite'] == 'fft']
ok('fft lines: ms, gb_s, rows_ms, cols_ms, inverse_ms; gb_s = 2 x 8 x 256 x 256 bytes / ms',
   fft and all(set(d['metrics']) == {'ms', 'gb_s', 'rows_ms', 'cols_ms', 'inverse_ms'}
               and abs(d['metrics']['gb_s'] - 2 * 8 * 256 * 256 / (d['metrics']['ms'] * 1e-3) / 1e9)
               <= 1e-3 * d['metrics']['gb_s'] for d in fft))
bl = [d for d in lines if d['suite'] == 'bloom']
# detail.stages_ms: the stages the path ran, under gles/gpu_timer.h's names, in order (by
# detail.fused; without the prefilter and composite where detail.ends_in_rows)
stages = {'transposed': ['prefilter', 'rows', 'transpose', 'fused_cols', 'transpose_back', 'irows', 'composite'],
          'in_place': ['prefilter', 'rows', 'fused_cols', 'irows', 'composite'],
          'false': ['prefilter', 'rows', 'cols', 'multiply', 'icols', 'irows', 'composite']}
def stages_of(d):
    s = stages.get(d.get('fused'), [])
    return [x for x in s if x not in ('prefilter', 'composite')] if d.get('ends_in_rows') == 'true' else s
ok('bloom line: the stages by name, the call, padded 512x320, fp16',
   len(bl) == 1 and {'ms', 'call_ms', 'upload_ms', 'readback_ms', 'gpu_in_call_ms'} <= set(bl[0]['metrics'])
   and bl[0]['detail'].get('padded') == '512x320' and bl[0]['detail'].get('precision') == 'fp16'
   and bl[0]['detail'].get('fused') == 'transposed' and bl[0]['detail'].get('ends_in_rows') == 'false'
   and list(bl[0]['detail'].get('stages_ms', {})) == stages_of(bl[0]['detail'])
   and all(v > 0 for v in bl[0]['detail']['stages_ms'].values()),
   str(bl[0]['detail'].get('stages_ms') if bl else None))
ok('fft lines: each axis\'s exchanges named (m, p or -)',
   fft and all(set(d['detail'].get('rows_exchanges', '?')) <= set('mp-')
               and set(d['detail'].get('cols_exchanges', '?')) <= set('mp-') for d in fft))

saved = sorted(glob.glob(os.path.join(tmp, 'res', 'llvmpipe', '*')))
names = sorted(os.path.basename(p).split('-', 3)[-1] for p in saved)
ok('--results keeps STAMP-fft and STAMP-bloom .jsonl and .txt under llvmpipe/',
   names == ['bloom.jsonl', 'bloom.txt', 'fft.jsonl', 'fft.txt'], str(names))
kept = ''.join(open(p).read() for p in saved if p.endswith('-fft.jsonl') or p.endswith('-bloom.jsonl'))
ok('the saved lines are the printed ones', sorted(kept.splitlines()) == sorted(text.splitlines()))

# every workload fftbloom bench lists is documented in bench/README.md
ids = sorted({l.split()[0] for l in read('ids').splitlines() if l.strip()})
base = dict(suite='fft', impl='fftbloom', variant='default', metrics={'ms': 1.0}, detail={}, gpu='g',
            driver='d', commit='c', date='2026-01-01T00:00:00Z', host='h', machine='m', command='c')
with open(os.path.join(tmp, 'listed.jsonl'), 'w') as f:
    for i in ids:
        f.write(json.dumps(dict(base, id=i)) + '\n')
crc, cout = check(os.path.join(tmp, 'listed.jsonl'))
ok('the %d IDs of fftbloom bench --list (full and quick) are in bench/README.md' % len(ids),
   len(ids) >= 20 and crc == 0, cout.replace('\n', ' | '))

# broken lines are rejected, each for its reason
good = dict(base, id='fft.2d.1024x1024.fwd')
bad = {'a zero metric': dict(good, metrics={'ms': 0}), 'a null metric': dict(good, metrics={'ms': None}),
       'no metrics': dict(good, metrics={}), 'an unknown ID': dict(good, id='fft.2d.3x3.fwd'),
       'no commit': {k: v for k, v in good.items() if k != 'commit'},
       'a local date': dict(good, date='2026-01-01 00:00'), 'an unknown suite': dict(good, suite='x')}
for name, d in bad.items():
    path = os.path.join(tmp, 'bad.jsonl')
    with open(path, 'w') as f:
        f.write(json.dumps(good) + '\n' + json.dumps(d) + '\n')
    crc, cout = check(path)
    ok('check_lines.py rejects %s' % name, crc == 1 and '2 lines, 1 bad' in cout, cout.replace('\n', ' | '))
with open(os.path.join(tmp, 'nan.jsonl'), 'w') as f:
    f.write(json.dumps(good).replace('"ms": 1.0', '"ms": NaN') + '\n')
crc, cout = check(os.path.join(tmp, 'nan.jsonl'))
ok('check_lines.py rejects a NaN', crc == 1, cout.replace('\n', ' | '))

lst = read('list')
ok('--list: the plan with estimates, no run', int(read('list_rc')) == 0 and 'fft.2d.512x512.fwd' in lst
   and 'total:' in lst, lst[-200:])
berr = read('budget_err')
ok('--budget-minutes: pieces past the budget are skipped and listed',
   int(read('budget_rc')) == 0 and read('budget_lines') == '' and 'skipped for the budget:' in berr,
   berr[-300:].replace('\n', ' | '))
ok('an unknown suite is a usage error (exit 2)', int(read('bad_rc')) == 2)

ab = [json.loads(l) for l in read('ab_lines').splitlines() if l.strip()]
ok('--ab: a line each configuration, named, each naming the other, both measured',
   int(read('ab_rc')) == 0 and [d['variant'] for d in ab] == ['default', 'default+oddpitch+rsplit']
   and ab[0]['detail'].get('alternated_with') == ab[1]['variant']
   and ab[1]['detail'].get('alternated_with') == ab[0]['variant']
   and all(d['metrics']['ms'] > 0 and d['detail'].get('padded') == '512x320' for d in ab),
   read('ab_err')[-400:].replace('\n', ' | '))
ab2 = [json.loads(l) for l in read('ab2_lines').splitlines() if l.strip()]
ok('--ab with options the variant does not name: the second line +b',
   int(read('ab2_rc')) == 0 and [d['variant'] for d in ab2] == ['default', 'default+b'])
ab3 = [json.loads(l) for l in read('ab3_lines').splitlines() if l.strip()]
ok('--ab "--fft-wisdom builtin": the second line +builtin, its wisdom the built-in rules',
   int(read('ab3_rc')) == 0 and [d['variant'] for d in ab3] == ['default', 'default+builtin']
   and ab3[1]['detail'].get('wisdom') == 'built-in rules'
   and ab3[0]['detail'].get('wisdom') != 'built-in rules',
   read('ab3_lines')[-400:].replace('\n', ' | '))
ok('--ab with another wisdom file is a usage error (exit 2)', int(read('ab_wisdom_rc')) == 2)
ab4 = [json.loads(l) for l in read('ab4_lines').splitlines() if l.strip()]
ok('--fft-wisdom FILE --ab "--fft-wisdom builtin": lines +wisdom and +builtin',
   int(read('ab4_rc')) == 0 and [d['variant'] for d in ab4] == ['default+wisdom', 'default+builtin'],
   str([d.get('variant') for d in ab4]))
crc, cout = check(os.path.join(tmp, 'ab_lines'))
ok('check_lines.py accepts the --ab lines', crc == 0, cout.replace('\n', ' | '))
ok('--ab with an unknown option is a usage error (exit 2)', int(read('ab_bad_rc')) == 2)
ml = [json.loads(x) for x in read('mult_lines').splitlines() if x.strip()]
ok('--ab --conv-mult-shared: detail.column_multiply in registers, then shared (+mshared)',
   int(read('mult_rc')) == 0 and [d['variant'] for d in ml] == ['default', 'default+mshared']
   and ml[0]['detail']['column_multiply'] in ('registers', 'shuffles')
   and ml[1]['detail']['column_multiply'] == 'shared',
   str([(d['variant'], d['detail'].get('column_multiply')) for d in ml]))
tl = [json.loads(x) for x in read('tiles_lines').splitlines() if x.strip()]
ok('--spectrum-tiles 4: the line says tiles of 4 columns (variant, detail.tile_columns)',
   int(read('tiles_rc')) == 0 and len(tl) == 1 and tl[0]['variant'].endswith('+tiles4') and
   tl[0]['detail']['tile_columns'] == 4 and tl[0]['detail']['ends_in_rows'] == 'true',
   str([(d['variant'], d['detail'].get('tile_columns')) for d in tl]))
ok('--spectrum-tiles 3, and 6 on the --ab side, are usage errors (exit 2)',
   int(read('tiles_bad_rc')) == 2 and int(read('tiles_ab_bad_rc')) == 2)
ok('--ab with options both sides share (--runs, --gpu-frame-memory) is a usage error (exit 2)',
   int(read('ab_runs_rc')) == 2 and int(read('ab_mem_rc')) == 2)
ok('--ab on a workload that does not alternate (bloom.rows.*) is a usage error (exit 2)',
   int(read('ab_rows_rc')) == 2)
co = [json.loads(l) for l in read('coefs_lines').splitlines() if l.strip()]
ok('--jpeg-in coefs: the jpeg line, variant scan+coefs, its upload measured',
   int(read('coefs_rc')) == 0 and [d['variant'] for d in co] == ['scan+coefs']
   and co[0]['metrics'].get('upload_ms', 0) > 0 and co[0]['metrics'].get('out_bytes', 0) > 0)
ok('--jpeg-in with another value is a usage error (exit 2)', int(read('coefs_bad_rc')) == 2)

print('SCRIPT: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
PYEOF
