"""The Python path's per-call overhead (issue 39's goal: a 1080p bloom through fftbloom.bloom with
a warm Context within 10% of the CLI's GPU time plus the copy of the arrays). One JSON line:
python_ms (median wall time of fftbloom.bloom, warm: plans, programs and the kernel's spectrum
cached), lib_gpu_ms (the sum of the GPU stages of the same frame through the library in this
process, warm, its kernel stage left out as the warm path has none: the GPU time the CLI's
engine takes warm), copy_ms (median time of copying the input and the output array once each),
ratio = python_ms / (lib_gpu_ms + copy_ms), and cli_gpu_ms (the same stages of one cold
`fftbloom bloom` run, which include its first dispatches' program loads: for reference only),
with machine, command, commit and date.

  python3 bench/python_overhead.py [--build build] [--size 1920x1080] [--reps 20]
      [--preset glare] [--channels 3]
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--preset", default="glare")
    ap.add_argument("--channels", type=int, default=3)
    a = ap.parse_args()
    os.environ.setdefault("FFTBLOOM_LIBRARY", os.path.join(a.build, "libfftbloom.so.0"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import fftbloom

    w, h = (int(v) for v in a.size.split("x"))
    frame = (np.random.default_rng(1).random((h, w, a.channels)) * 2).astype(np.float32)
    ctx = fftbloom.Context()
    for _ in range(3):  # programs, plans and the kernel's spectrum
        out = fftbloom.bloom(frame, kernel_preset=a.preset, ctx=ctx)
    times = []
    for _ in range(a.reps):
        t = time.perf_counter()
        out = fftbloom.bloom(frame, kernel_preset=a.preset, ctx=ctx)
        times.append((time.perf_counter() - t) * 1e3)
    st = {}
    fftbloom.bloom(frame, kernel_preset=a.preset, ctx=ctx, stats=st)
    lib_gpu = sum(v for k, v in st["stage_ms"].items() if k != "kernel")
    src, dst = np.empty_like(frame), np.empty_like(out)
    copies = []
    for _ in range(a.reps):
        t = time.perf_counter()
        np.copyto(src, frame)
        np.copyto(dst, out)
        copies.append((time.perf_counter() - t) * 1e3)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "frame.pfm")
        fftbloom.imwrite(path, frame)
        cmd = [os.path.join(a.build, "fftbloom"), "bloom", path, "-o", os.path.join(d, "o.pfm"),
               "--kernel-preset", a.preset]
        r = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"\(timer queries: ([^)]*)\)|\(wall clock: ([^)]*)\)", r.stderr)
    cli_gpu = None
    if m:
        stages = dict((k, float(v)) for k, v in re.findall(r"(\w+) ([0-9.]+)",
                                                           m.group(1) or m.group(2)))
        cli_gpu = sum(v for k, v in stages.items() if k != "kernel")
    py = float(np.median(times))
    cp = float(np.median(copies))
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    print(json.dumps({
        "workload": "python.bloom.%dx%dx%d.%s" % (w, h, a.channels, a.preset),
        "python_ms": round(py, 4), "cli_gpu_ms": cli_gpu and round(cli_gpu, 4),
        "lib_gpu_ms": round(lib_gpu, 4), "copy_ms": round(cp, 4),
        "ratio": round(py / (lib_gpu + cp), 4),
        "padded": "%dx%d" % (st["padded_w"], st["padded_h"]), "reps": a.reps,
        "renderer": ctx.renderer, "machine": platform.node(), "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([os.path.relpath(__file__, ROOT)] + sys.argv[1:]),
        "cli_stderr": None if m else r.stderr[-300:]}))


main()
