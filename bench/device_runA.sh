. bench/device_env.sh >/dev/null 2>&1
rm -f /tmp/wf.txt
fftbloom bench --only fft --runs 30 --fft-wisdom /tmp/wf.txt 2>&1 | grep -v ' warn ' | grep '^fft'
echo "--- same, wisdom from the file just written"
fftbloom bench --only fft --runs 30 --fft-wisdom /tmp/wf.txt 2>&1 | grep -v ' warn ' | grep '^fft'
echo "--- bloom with that wisdom (bloom shapes tuned in its warm-up)"
fftbloom bench --only bloom --runs 30 --fft-wisdom /tmp/wf.txt > $OUT/bloom.jsonl 2> $OUT/bloom.txt; grep '^bloom' $OUT/bloom.txt
cp /tmp/wf.txt $OUT/wisdom.txt
BUILD=.carry/bin E2E_OUT=$OUT/e2e.jsonl E2E_SECONDS=12 sh bench/e2e.sh --fft-wisdom /tmp/wf.txt 2>&1 | tail -12
