#!/usr/bin/env python3
"""Runs a `fftbloom bench` from before the harness (labels, not workload IDs: main up to the
commit that made the harness) and writes its lines as the harness's result lines, so that
bench/run.sh --baseline can time an older build beside the current one, workload by workload,
in the same run. The old line's figures map onto the metrics the current bench names:
fft (forward_ms -> ms, forward_rows_ms, forward_cols_ms, inverse_ms), rows (image_rows_vec4_ms
-> ms, all_rows_vec4_ms, image_rows_two_vec2_ms), bloom (gpu_ms -> ms, wall_ms -> call_ms,
upload_ms, readback_ms, gpu_ms_in_call); the old line itself is the detail.

usage: old_lines.py --suite S --id ID --variant V --commit C -- OLD_FFTBLOOM bench --only =LABEL ...
The exit status is the old bench's."""
import json
import subprocess
import sys

from benchline import Lines

MAP = {
    'fft': [('forward_ms', 'ms'), ('forward_rows_ms', 'rows_ms'), ('forward_cols_ms', 'cols_ms'),
            ('inverse_ms', 'inverse_ms')],
    'rows': [('image_rows_vec4_ms', 'ms'), ('all_rows_vec4_ms', 'all_rows_ms'),
             ('image_rows_two_vec2_ms', 'two_planes_ms')],
    'bloom': [('gpu_ms', 'ms'), ('wall_ms', 'call_ms'), ('upload_ms', 'upload_ms'),
              ('readback_ms', 'readback_ms'), ('gpu_ms_in_call', 'gpu_in_call_ms')],
}


def main():
    args = sys.argv[1:]
    cut = args.index('--')
    opts, cmd = dict(zip(args[:cut:2], args[1:cut:2])), args[cut + 1:]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{')]
    dev = next((d for d in lines if d.get('workload') == 'device'), {})
    out = Lines(opts['--suite'], dev.get('renderer', ''), dev.get('version', ''))
    out.commit = opts['--commit']
    out.command = ' '.join(cmd)
    for d in lines:
        kind = d.get('workload')
        if kind not in MAP:
            continue
        metrics = {new: d[old] for old, new in MAP[kind] if old in d}
        if kind == 'fft' and 'size' in d:
            h, w = (int(v) for v in d['size'].split('x'))
            metrics['gb_s'] = 2 * 8 * h * w / (d['forward_ms'] * 1e-3) / 1e9
        out.emit(opts['--id'], 'fftbloom', opts['--variant'], metrics, dict(d, baseline=True))
    return p.returncode


if __name__ == '__main__':
    sys.exit(main())
