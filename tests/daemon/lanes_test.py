"""fftbloomd --engine cpu running several frames at once (run by test_lanes.sh): lanes with an
engine each take the queue's frames side by side (--cpu-frames 3), and every one of 24 concurrent
clients gets its own image's convolution (against a float64 direct convolution, relative max
error 1e-4); /v1/info says how many frames run at once; with --gpu-frame-memory small, a frame
runs in overlap-save tiles (X-Tiles) with the same answer. Uses http_test.py's daemon harness.
Last line: "SCRIPT: N passed, N failed"."""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import Daemon, check, direct_convolve, post_async, rand_float, read_pfm, write_pfm  # noqa: E402

RNG = np.random.default_rng()


def rel_max(got, ref):
    if got is None or got.shape != ref.shape:
        return float("inf")
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))


def test_frames_at_once():
    d = Daemon("--cpu-frames", "3", "--max-per-ip", "100", "--codec-threads", "2")
    try:
        st, h, body = d.req("GET", "/v1/info")
        info = json.loads(body) if st == 200 else {}
        renderers = [g.get("renderer", "") for g in info.get("gpus", [])]
        print("     renderer: %s" % renderers)
        check("/v1/info: the CPU engine, up to 3 frames at once",
              info.get("engine") == "cpu" and any("up to 3 frames at once" in r for r in renderers),
              (info.get("engine"), renderers))
        k = RNG.random((5, 5, 3)).astype(np.float32)
        kb = open(write_pfm(os.path.join(H.TMP, "lk.pfm"), k), "rb").read()
        st, h, body = d.req("PUT", "/v1/kernels/k5", body=kb)
        check("PUT k5", st == 201, (st, body))
        imgs = [rand_float(20 + i % 7, 30 + (5 * i) % 11) for i in range(24)]
        bodies = [open(write_pfm(os.path.join(H.TMP, "l%d.pfm" % i), a), "rb").read()
                  for i, a in enumerate(imgs)]
        res = {}
        t0 = time.time()
        ts = [post_async(d, "/v1/convolve?kernel=k5&format=pfm", b, res, i)
              for i, b in enumerate(bodies)]
        for t in ts:
            t.join()
        worst, good = 0.0, 0
        for i in range(24):
            st, h, b, _ = res[i]
            e = rel_max(read_pfm(b) if st == 200 else None, direct_convolve(imgs[i], k))
            worst = max(worst, e)
            good += e < 1e-4
        print("     24 clients in %.2f s; worst relative max error %.3g" % (time.time() - t0, worst))
        check("24 concurrent clients on 3 lanes each get their own right answer", good == 24,
              (good, worst))
    finally:
        d.stop("lanes daemon")


def test_tiles():
    # 3 planes of 125x96 padded, and a colour kernel's spectrum: about 480 KB untiled
    d = Daemon("--gpu-frame-memory", "200k")
    try:
        k = RNG.random((5, 5, 3)).astype(np.float32)
        kb = open(write_pfm(os.path.join(H.TMP, "tk.pfm"), k), "rb").read()
        st, h, body = d.req("PUT", "/v1/kernels/k5", body=kb)
        img = rand_float(90, 120)
        pf = open(write_pfm(os.path.join(H.TMP, "t.pfm"), img), "rb").read()
        st, h, body = d.req("POST", "/v1/convolve?kernel=k5&format=pfm", body=pf)
        e = rel_max(read_pfm(body) if st == 200 else None, direct_convolve(img, k))
        print("     120x90 under --gpu-frame-memory 200k: %s, X-Tiles %s, relative max error %.3g"
              % (st, h.get("x-tiles"), e))
        check("a frame past --gpu-frame-memory runs in tiles with the right answer",
              st == 200 and h.get("x-tiles") not in (None, "1x1") and e < 1e-4,
              (st, h.get("x-tiles"), e))
    finally:
        d.stop("tiles daemon")


def main():
    H.run_script([test_frames_at_once, test_tiles], "LANES_ONLY", need_daemon=True)


if __name__ == "__main__":
    main()
