"""Sizes that cannot wrap, GPU work that stops, and a stop that always ends the process (issue 35,
item 1; run by test_deadline.sh). The hostile conv2d_transpose whose output is 2^64 bytes (a
plain multiply wraps it to 0: a 0-byte reservation and buffer, a GPU loop without end, /healthz
503, SIGTERM ignored) is refused 413 at once, as is its batch-1 twin, and the daemon stays
healthy and stops on SIGTERM within --drain-timeout; a conv2d whose GPU work runs past
--gpu-timeout is answered 504 and abandoned between dispatches, the daemon healthy and right
afterwards; SIGTERM during a long conv2d ends the process within --drain-timeout plus a few
seconds (the running job stopped at its next dispatch); and with the fault-injection build
(make faults) a frame hung in a GL call that never returns no longer holds the process: it exits
with status 1 after the drain. Uses http_test.py's daemon harness. Last line:
"SCRIPT: N passed, N failed"."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import Daemon, check, err_of, multipart, npy_bytes, npy_load  # noqa: E402

import numpy as np  # noqa: E402

TMP = tempfile.mkdtemp(prefix="fftbloomd-deadline-")
RNG = np.random.default_rng(int(time.time() * 1e6) % 2**32)
GRACE = 5.0  # fftbloomd.c STOP_GRACE_S: the guard's time after the drain
SLACK = 4.0  # a loaded 2-core machine's start of a process, its threads, its log


def post_tensors(d, path, parts, query="", timeout=60):
    body, ct = multipart([(k, v, "application/octet-stream") for k, v in parts])
    return d.req("POST", path + query, body=body, headers={"Content-Type": ct}, timeout=timeout)


def stop_timed(d, name, drain, want_rc=0):
    """SIGTERM; checks the process ends within drain + GRACE (+ SLACK) with want_rc, then the
    harness's log checks (sanitizer reports) for a clean exit."""
    t0 = time.time()
    d.p.send_signal(signal.SIGTERM)
    try:
        rc = d.p.wait(timeout=drain + GRACE + 60)
    except subprocess.TimeoutExpired:
        rc = "still running"
    took = time.time() - t0
    check("%s: SIGTERM ends the process in %.2f s (--drain-timeout %g + %g s)" % (
        name, took, drain, GRACE), rc != "still running" and took <= drain + GRACE + SLACK,
        (rc, took, d.log()[-1500:]))
    check("%s: exit status %s" % (name, want_rc), rc == want_rc, (rc, d.log()[-1500:]))
    if want_rc == 0:
        d.stop(name)  # already exited: the harness's exit and sanitizer checks
    else:
        if d.p.poll() is None:
            d.p.kill()
        d.logf.close()


def hostile_parts(batch):
    """Issue 35's request: input (batch, 1, 1, 1), weight (1, 32768, 2, 2), random float32."""
    x = RNG.standard_normal((batch, 1, 1, 1)).astype(np.float32)
    w = RNG.standard_normal((1, 32768, 2, 2)).astype(np.float32)
    return [("input", npy_bytes(x)), ("weight", npy_bytes(w))]


def test_hostile_transpose():
    drain = 2.0
    d = Daemon("--drain-timeout", "%g" % drain)
    try:
        q = "?dilation=65535&method=overlap-add"
        for batch, what in ((32768, "2^64 bytes (wrapped to 0 before)"),
                            (1, "2^49 bytes (batch 1)")):
            parts = hostile_parts(batch)
            size = sum(len(v) for _, v in parts)
            t0 = time.time()
            try:
                st, h, b = post_tensors(d, "/v1/conv2d_transpose", parts, q, timeout=30)
            except Exception as e:  # noqa: a hang times out
                st, b = None, repr(e).encode()
            took = time.time() - t0
            print("     %d KB request, output of %s: %s in %.2f s" % (size >> 10, what, st, took))
            check("conv2d_transpose whose output is %s: 413 (or 400), not a hang" % what,
                  st in (413, 400) and err_of(b)[1] in ("tensor_too_large", "invalid_request"),
                  (st, b[:300]))
            if batch == 32768:
                check("... the message names the output's size", b"output" in b, b[:300])
        st, _, b = d.req("GET", "/healthz", timeout=10)
        check("/healthz 200 after the hostile requests", st == 200, (st, b[:200]))
        check("nothing left reserved against --memory-budget",
              d.metric("fftbloom_memory_reserved_bytes") == 0,
              d.metric("fftbloom_memory_reserved_bytes"))
        # a transposed convolution still answers right afterwards (the worked example)
        x = np.array([[[[1, 2], [3, 4]]]], np.float32)
        w = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
        st, _, b = post_tensors(d, "/v1/conv2d_transpose", [("input", npy_bytes(x)),
                                ("weight", npy_bytes(w))], "?stride=2&method=overlap-add")
        want = np.array([[1, 2, 5, 4, 6], [4, 5, 14, 10, 12], [10, 14, 36, 24, 30],
                         [12, 15, 34, 20, 24], [21, 24, 55, 32, 36]], np.float64)
        got = npy_load(b) if st == 200 else None
        check("... and the worked example answers right afterwards", got is not None and
              np.array_equal(got[0, 0], want), (st, b[:200]))
    finally:
        if d.p.poll() is None:
            stop_timed(d, "hostile-size daemon", drain)


# A conv2d long on llvmpipe, one dispatch an output plane (batch4): 256 planes of 4 x 64 x 25 x
# 124 x 124 multiply-adds each, 25 G in all: tens of seconds on two cores.
BIG = ((4, 64, 128, 128), (256, 64, 5, 5))


def big_parts():
    x = RNG.standard_normal(BIG[0]).astype(np.float32)
    w = (RNG.standard_normal(BIG[1]) * 0.05).astype(np.float32)
    return [("input", npy_bytes(x)), ("weight", npy_bytes(w))]


def conv2d_ref(x, w):
    """Valid cross-correlation in float64 (stride 1, no padding)."""
    B, C, Hh, W = x.shape
    O, _, kh, kw = w.shape
    y = np.zeros((B, O, Hh - kh + 1, W - kw + 1))
    for j in range(kh):
        for i in range(kw):
            y += np.einsum("bchw,oc->bohw", x[:, :, j:j + Hh - kh + 1, i:i + W - kw + 1],
                           w[:, :, j, i].astype(np.float64))
    return y


def small_conv(d, algorithm="batch4"):
    """A small conv2d through the same algorithm: (answered, relative L2 error)."""
    x = RNG.standard_normal((4, 3, 9, 11)).astype(np.float32)
    w = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    st, _, b = post_tensors(d, "/v1/conv2d", [("input", npy_bytes(x)), ("weight", npy_bytes(w))],
                            "?algorithm=" + algorithm)
    if st != 200:
        return st, None
    y, ref = npy_load(b), conv2d_ref(x, w)
    return st, float(np.sqrt(((y - ref) ** 2).sum() / (ref ** 2).sum()))


def test_gpu_timeout():
    d = Daemon("--gpu-timeout", "0.5", "--drain-timeout", "2")
    try:
        # compiles the batch4 programs, so the timeout meets dispatches: the compiles count as
        # the job's GPU time, which under the sanitizers can pass 0.5 s on llvmpipe (504)
        small_conv(d)
        st, err = small_conv(d)
        check("a small conv2d first: 200 within 1e-5 (rel L2 %s)" % err, st == 200 and err < 1e-5,
              (st, err))
        drops0 = d.metric('fftbloom_jobs_dropped_total{reason="deadline"}') or 0
        t0 = time.time()
        st, h, b = post_tensors(d, "/v1/conv2d", big_parts(), "?algorithm=batch4", timeout=300)
        took = time.time() - t0
        print("     conv2d %s x %s under --gpu-timeout 0.5: %s in %.2f s" % (BIG[0], BIG[1], st,
                                                                           took))
        if st == 200:
            print("     skip: the GPU ran the whole conv2d within 0.5 s here")
        else:
            check("GPU work past --gpu-timeout: 504 deadline_exceeded naming it", st == 504 and
                  err_of(b)[1] == "deadline_exceeded" and "gpu-timeout" in err_of(b)[2],
                  (st, b[:300]))
            check("counted as a deadline drop in /metrics",
                  (d.metric('fftbloom_jobs_dropped_total{reason="deadline"}') or 0) == drops0 + 1)
            check("the log says the work was abandoned between dispatches",
                  "abandoned between dispatches" in d.log(), d.log()[-1000:])
        st, _, b = d.req("GET", "/healthz", timeout=10)
        check("/healthz 200 after the abandoned job", st == 200, (st, b[:200]))
        st, _, b = d.req("GET", "/readyz", timeout=10)
        check("/readyz 200 after the abandoned job", st == 200, (st, b[:200]))
        st, err = small_conv(d)
        check("the next conv2d answers right (rel L2 %s)" % err, st == 200 and err < 1e-5,
              (st, err))
        check("nothing left reserved", d.metric("fftbloom_memory_reserved_bytes") == 0)
    finally:
        stop_timed(d, "gpu-timeout daemon", 2.0)


def test_gpu_timeout_one_dispatch_algorithms():
    """The algorithms that dispatch a whole output at once (shared, planes4) are cut in slices on
    a software renderer, so --gpu-timeout stops them too: 1x128x128x128 by 128x128x3x3, seconds
    on llvmpipe, 504 within the timeout and a slice."""
    d = Daemon("--gpu-timeout", "1", "--drain-timeout", "2")
    try:
        x = RNG.standard_normal((1, 128, 128, 128)).astype(np.float32)
        w = (RNG.standard_normal((128, 128, 3, 3)) * 0.05).astype(np.float32)
        for alg in ("shared", "planes4"):
            st, err = small_conv(d, alg)  # its programs compiled before the clock runs
            t0 = time.time()
            st, h, b = post_tensors(d, "/v1/conv2d", [("input", npy_bytes(x)),
                                                      ("weight", npy_bytes(w))],
                                    "?padding=1&algorithm=" + alg, timeout=300)
            took = time.time() - t0
            print("     conv2d %s: %s in %.2f s" % (alg, st, took))
            if st == 200 and took < 1:
                print("     skip: the whole conv2d ran within 1 s here")
                continue
            check("%s past --gpu-timeout 1: 504 within 4 s" % alg, st == 504 and took < 4,
                  (st, took, b[:200]))
        st, err = small_conv(d, "shared")
        check("the next conv2d answers right (rel L2 %s)" % err, st == 200 and err < 1e-5,
              (st, err))
    finally:
        stop_timed(d, "one-dispatch gpu-timeout daemon", 2.0)


def test_sigterm_during_long_job():
    """No --gpu-timeout: the drain ends, the running job stops at its next dispatch, exit 0."""
    drain = 1.0
    d = Daemon("--gpu-timeout", "0", "--drain-timeout", "%g" % drain)
    try:
        st, _ = small_conv(d)
        check("warm-up conv2d: 200", st == 200, st)
        res = {}

        def post():
            try:
                res["r"] = post_tensors(d, "/v1/conv2d", big_parts(), "?algorithm=batch4",
                                        timeout=300)
            except Exception as e:  # noqa: the connection may close with the process
                res["r"] = (None, {}, repr(e).encode())
        t = threading.Thread(target=post)
        t.start()
        busy = H.wait_queue(d, 0, timeout=60)
        check("the long conv2d is on the GPU", busy)
        time.sleep(0.3)
        stop_timed(d, "long-job daemon", drain, want_rc=0)
        t.join(timeout=30)
        st, h = res.get("r", (None, {}))[:2]
        print("     the long job's answer: %s %s" % (st, res.get("r", (None, {}, b""))[2][:160]))
        gpu = re.search(r"gpu;dur=([0-9.]+)", (h or {}).get("server-timing", ""))
        if st == 200 and gpu and float(gpu.group(1)) < 1e3 * drain:
            # a GPU: the job ended within the drain (a 200 past it would be the failure)
            print("skip the abandoned-job checks: the long conv2d took %s ms, within the %g s "
                  "drain" % (gpu.group(1), drain))
            return
        check("the long job is answered 503 shutting_down (or its connection closed), not "
              "200", st in (503, None), st)
        check("the log says the drain timed out and the job was abandoned",
              "abandoned between dispatches" in d.log(), d.log()[-1500:])
    finally:
        if d.p.poll() is None:
            d.p.kill()


def test_sigterm_hung_gl_call():
    faults = os.path.join(H.BUILD, "faults", "fftbloomd")
    if not os.path.exists(faults):
        check("fault-injection build exists (make faults)", False, faults)
        return
    drain = 1.0
    H.DAEMON, keep = faults, H.DAEMON
    try:
        d = Daemon("--drain-timeout", "%g" % drain, "--heartbeat-timeout", "60")
    finally:
        H.DAEMON = keep
    try:
        img = H.png_bytes(H.rand8())
        q = "/v1/convolve?kernel_preset=gaussian:sigma=2&method=fft&format=pfm"
        st, _, b = d.req("POST", q, body=img)
        check("a first frame: 200", st == 200, (st, b[:200]))
        st, _, b = d.req("POST", "/v1/faults?kind=hang&count=1&seconds=600")
        check("arm a 600 s hang (a GL call that does not return)", st == 200, (st, b[:200]))
        res = {}
        t = H.post_async(d, q, img, res, "hung", timeout=120)
        check("the hung frame holds the GPU", H.wait_queue(d, 0, timeout=30))
        time.sleep(0.3)
        stop_timed(d, "hung-GPU daemon", drain, want_rc=1)
        t.join(timeout=30)
        log = d.log()
        check("the log says why it exited", "still running" in log and "exiting now" in log,
              log[-1500:])
    finally:
        if d.p.poll() is None:
            d.p.kill()


def main():
    tests = [test_hostile_transpose, test_gpu_timeout, test_gpu_timeout_one_dispatch_algorithms,
             test_sigterm_during_long_job,
             test_sigterm_hung_gl_call]
    H.run_script(tests, "DEADLINE_ONLY", (TMP,), need_daemon=True)


if __name__ == "__main__":
    main()
