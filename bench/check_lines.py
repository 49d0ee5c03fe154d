#!/usr/bin/env python3
"""Checks the harness's result lines (bench/README.md, "Result lines"): each line a JSON object
with every required field; suite one of the harness's; metrics a non-empty object of finite
positive numbers (a NaN, an infinity, a zero or a null fails); detail an object; date UTC ISO
8601; the workload ID one that bench/README.md lists (the first column of the tables of its
"Workloads" section; <size>, <n> and <mode> stand for a size name such as 1080p or 640x360, a
number, a word).

usage: check_lines.py [--readme bench/README.md] FILE... ('-': stdin)
Prints each bad line's problems and a summary; exits 1 when a line is bad or there is none."""
import json
import math
import os
import re
import sys

REQUIRED = ('suite', 'id', 'impl', 'variant', 'metrics', 'detail', 'gpu', 'driver', 'commit',
            'date', 'host', 'machine', 'command')
SUITES = ('fft', 'bloom', 'jpeg', 'conv', 'peers', 'e2e')
PLACEHOLDERS = {'<size>': r'(?:\d+p|\d+x\d+)', '<n>': r'\d+', '<mode>': r'[a-z_]+'}


def documented_ids(readme):
    """The IDs in the first cell of the table rows of README's "Workloads" section, as regular
    expressions."""
    pats = []
    section = False
    for line in open(readme, encoding='utf-8'):
        if line.startswith('## '):
            section = line.strip() == '## Workloads'
        if not section or not line.startswith('| `'):
            continue
        cell = line.split('|')[1]
        for wid in re.findall(r'`([^`]+)`', cell):
            rx = re.escape(wid)
            for k, v in PLACEHOLDERS.items():
                rx = rx.replace(re.escape(k), v)
            pats.append(re.compile(rx + r'\Z'))
    return pats


def problems(line, pats):
    try:
        d = json.loads(line)
    except ValueError as e:
        return ['not JSON: %s' % e]
    if not isinstance(d, dict):
        return ['not a JSON object']
    out = ['missing "%s"' % k for k in REQUIRED if k not in d]
    for k in REQUIRED:
        if k in d and k not in ('metrics', 'detail') and not (isinstance(d[k], str) and d[k]):
            out.append('"%s" is not a non-empty string' % k)
    if d.get('suite') not in SUITES:
        out.append('suite %r is not one of %s' % (d.get('suite'), ', '.join(SUITES)))
    m = d.get('metrics')
    if not isinstance(m, dict) or not m:
        out.append('metrics is not a non-empty object')
    else:
        for k, v in m.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                out.append('metric %s = %r is not a finite positive number' % (k, v))
    if not isinstance(d.get('detail'), dict):
        out.append('detail is not an object')
    if isinstance(d.get('date'), str) and not re.match(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z', d['date']):
        out.append('date %r is not UTC ISO 8601' % d['date'])
    wid = d.get('id')
    if isinstance(wid, str) and not any(p.match(wid) for p in pats):
        out.append('id %r is not in the README\'s list' % wid)
    return out


def main():
    args = sys.argv[1:]
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'README.md')
    if args[:1] == ['--readme']:
        readme, args = args[1], args[2:]
    if not args:
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        return 2
    pats = documented_ids(readme)
    n = bad = 0
    for path in args:
        f = sys.stdin if path == '-' else open(path, encoding='utf-8')
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            n += 1
            p = problems(line, pats)
            if p:
                bad += 1
                print('%s:%d: %s' % (path, i, '; '.join(p)))
    print('%d lines, %d bad (%d documented IDs or patterns)' % (n, bad, len(pats)))
    return 1 if bad or not n else 0


if __name__ == '__main__':
    sys.exit(main())
