"""The harness's result line for the Python peers (bench/README.md, "Result lines"), field for
field what bench/bench_json.c writes for the C programs: suite, id, impl, variant, metrics,
detail, gpu, driver, commit, date, host, machine, command.

The commit is FFTBLOOM_COMMIT (bench/run.sh sets it from the binaries' `fftbloom --version`),
else `git describe --always --dirty` of this checkout, else "unknown"; the machine is
BENCH_MACHINE, else made from the GPU's name as bench_json.c does."""
import datetime
import json
import math
import os
import re
import shlex
import socket
import subprocess
import sys


def commit():
    c = os.environ.get('FFTBLOOM_COMMIT')
    if c:
        return c
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run(['git', '-C', here, 'describe', '--always', '--dirty'],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return 'unknown'


def read_lines(paths):
    """Every result line of the files, parsed; lines that are not JSON are skipped."""
    for p in paths:
        with open(p) as f:
            for line in f:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def machine_name(gpu):
    """bench_machine_name: "NVIDIA H200" -> "h200", llvmpipe -> "llvmpipe"."""
    if 'llvmpipe' in gpu:
        return 'llvmpipe'
    for v in ('NVIDIA ', 'AMD ', 'Intel(R) ', 'Intel ', 'Mesa ', 'CPU: '):
        if gpu.startswith(v):
            gpu = gpu[len(v):]
            break
    gpu = re.split(r'[/(]', gpu)[0]
    name = re.sub(r'[^a-z0-9]+', '-', gpu.lower()).strip('-')
    return name or 'unknown'


def nvidia_driver():
    """The NVIDIA driver's version from nvidia-smi, or ''."""
    try:
        out = subprocess.run(['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0:
            return out.stdout.split('\n')[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return ''


class Lines:
    """Writes result lines to stdout for one program run."""

    def __init__(self, suite, gpu, driver):
        self.suite, self.gpu, self.driver = suite, gpu, driver
        self.commit = commit()
        self.machine = os.environ.get('BENCH_MACHINE') or machine_name(gpu)
        self.host = socket.gethostname()
        self.command = ' '.join(['python3'] + [shlex.quote(a) for a in sys.argv])

    def emit(self, wid, impl, variant, metrics, detail=None):
        """One line; a metric that is not a finite number is written as null (the harness's
        check rejects it)."""
        m = {k: (float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None)
             for k, v in metrics.items()}
        line = {'suite': self.suite, 'id': wid, 'impl': impl, 'variant': variant or 'default',
                'metrics': m, 'detail': detail or {}, 'gpu': self.gpu, 'driver': self.driver,
                'commit': self.commit,
                'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
                'host': self.host, 'machine': self.machine, 'command': self.command}
        print(json.dumps(line, allow_nan=False, separators=(',', ':')), flush=True)
