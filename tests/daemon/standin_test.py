"""--cpu-standin over real HTTP (run by test_standin.sh), on the GPU engine (llvmpipe here) with
build/faults/fftbloomd, whose POST /v1/faults?kind=stall holds the GPU thread's next step of idle
work for the armed seconds, as NVIDIA's driver finishing a program's build does (22-155 ms).

With the stand-in on: a frame sent during the stall is answered by the CPU engine
(X-Stand-In: cpu) without waiting for it, and the answer agrees with numpy's float64 direct
convolution as the GPU's does (a PFM convolve), a JPEG bloom's answer (its planes decoded again
as floats) with the CLI's CPU engine on the same file and, within the colour conversion's
rounding, with the GPU's own answer; a frame whose float decode the memory
budget cannot hold is left to the GPU (declined, answered after the stall); /v1/info and
/metrics count them. With it off, the frame waits for the stall. auto is off on a software
renderer. Timings are printed, not checked. Prints "SCRIPT: N passed, N failed" last."""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import check  # noqa: E402

import numpy as np  # noqa: E402

FAULTS = os.path.join(H.BUILD, "faults", "fftbloomd")
TOL = 1e-5    # float32 FFT convolution against float64 direct (STYLE.md)
JPEG_TOL = 5e-3  # two conversions of the same JPEG planes (the GPU's float one, or
                 # image_from_yuv's, against libjpeg's decode): inputs up to a code value
                 # apart, then the 8-bit bloom's intensity of 20 (2.2e-3 to 2.7e-3 seen)
STALL = 3.0   # seconds the armed stall holds the GPU thread
SIZE = (120, 160)


def daemon(*args):
    keep, H.DAEMON = H.DAEMON, FAULTS
    try:
        # the frames' padded size planned before ready, nothing else built in idle time: the
        # only hold is the armed stall
        return H.Daemon("--warm-sizes", "%dx%d" % (SIZE[1], SIZE[0]), "--spare-plans", "",
                        "--program-cache", "none", "--fft-wisdom", "none", *args)
    finally:
        H.DAEMON = keep


def info(d):
    st, _, body = d.req("GET", "/v1/info")
    return json.loads(body) if st == 200 else {}


def arm_stall(d, seconds=STALL):
    st, _, body = d.req("POST", "/v1/faults?kind=stall&seconds=%g" % seconds)
    return check("arm a %g s stall" % seconds, st == 200, body[:200])


def stalled(d, path, body, headers=None):
    """A job first (so that the GPU thread has idle work after it), the stall armed, then path
    sent once the stall holds the thread (its idle grace is 0.5 s): (status, headers, body,
    seconds)."""
    d.req("POST", path, body=body, headers=headers)
    arm_stall(d)
    time.sleep(0.9)
    t0 = time.time()
    st, h, out = d.req("POST", path, body=body, headers=headers)
    return st, h, out, time.time() - t0


def pfm_convolve(d, img, kname):
    return "/v1/convolve?kernel=%s&method=fft&format=pfm" % kname, \
        open(H.write_pfm(os.path.join(H.TMP, "s.pfm"), img), "rb").read()


def test_on():
    d = daemon("--cpu-standin", "on")
    try:
        check("on: ready", H.wait_ready(d), d.log()[-1500:])
        i = info(d).get("cpu_standin", {})
        check("on: /v1/info says the stand-in is on", i.get("on") is True, i)
        kern = H.RNG.random((9, 9, 3)).astype(np.float32)
        kb = open(H.write_pfm(os.path.join(H.TMP, "k.pfm"), kern), "rb").read()
        check("PUT the kernel", d.req("PUT", "/v1/kernels/k9", body=kb)[0] == 201)
        img = H.rand_float(*SIZE)
        ref = H.direct_convolve(img, kern)
        path, body = pfm_convolve(d, img, "k9")
        st, h, out = d.req("POST", path, body=body)
        check("a frame with no hold: 200", st == 200, out[:200])
        H.close_enough("... == numpy float64 direct convolution",
                       H.read_pfm(out) if st == 200 else None, ref, TOL)

        st, h, out, took = stalled(d, path, body)
        print("     PFM convolve during a %g s stall: %.3f s, X-Stand-In %s, Server-Timing %s" % (
            STALL, took, h.get("x-stand-in"), H.timings(h)))
        check("during the stall: 200 from the CPU engine (X-Stand-In: cpu)",
              st == 200 and h.get("x-stand-in") == "cpu", (st, h, out[:200]))
        check("... no X-Gpu (no GPU thread ran it)", "x-gpu" not in h, h)
        H.close_enough("... == numpy float64 direct convolution",
                       H.read_pfm(out) if st == 200 else None, ref, TOL)
        time.sleep(STALL)

        # a JPEG bloom: its planes (in an upload buffer the context lent, where it lends) are
        # decoded again as floats for the CPU engine
        a8 = H.rand8(*SIZE)
        jpg = H.jpg444_bytes(a8, "standin")
        jq = "/v1/bloom?threshold=0.3&intensity=0.8&kernel_preset=gaussian:sigma=3&format=pfm"
        st, h, gpu_out = d.req("POST", jq, body=jpg)
        check("JPEG bloom with no hold: 200 on the GPU", st == 200 and "x-stand-in" not in h,
              (st, h, gpu_out[:200]))
        st, h, out, took = stalled(d, jq, jpg)
        print("     JPEG bloom during a %g s stall: %.3f s, X-Stand-In %s" % (
            STALL, took, h.get("x-stand-in")))
        check("JPEG bloom during the stall: 200 from the CPU engine",
              st == 200 and h.get("x-stand-in") == "cpu", (st, h, out[:200]))
        if st == 200:
            H.close_enough("... == the GPU's answer of the same frame", H.read_pfm(out),
                           H.read_pfm(gpu_out), JPEG_TOL)
            src, ref = os.path.join(H.TMP, "standin.jpg"), os.path.join(H.TMP, "standin.pfm")
            open(src, "wb").write(jpg)
            ok = H.cli("bloom", src, "-o", ref, "--engine", "cpu", "--threshold", "0.3",
                       "--intensity", "0.8", "--kernel-preset", "gaussian:sigma=3")
            H.close_enough("... == the CLI's CPU engine on the same file", H.read_pfm(out),
                           H.read_pfm(open(ref, "rb").read()) if ok else None, TOL)
        time.sleep(STALL)

        n = info(d).get("cpu_standin", {})
        print("     /v1/info cpu_standin: %s" % n)
        check("/v1/info counts the stand-in's frames", n.get("frames", 0) >= 2 and
              n.get("failures") == 0, n)
        check("/metrics counts them answered",
              (d.metric('fftbloom_standin_frames_total{outcome="answered"}') or 0) >= 2)
    finally:
        d.stop("stand-in daemon")


def test_jpeg_forms():
    """A JPEG frame's planes, and its coefficients (--jpeg-gpu-idct), in memory of their own
    (--jpeg-upload-lease off) are converted on the CPU without decoding the file again
    (image_from_yuv: libjpeg's colour conversion; the coefficients through the GPU's float
    inverse DCT): within a code value of libjpeg's decode, so the answer is the CLI's CPU
    engine's within JPEG_TOL."""
    a8 = H.waves(SIZE[0], SIZE[1], 20, 20)  # smooth: its coefficients fit their room (noise
    jpg = H.jpg444_bytes(a8, "forms")        # would be decoded to planes instead)
    src, ref = os.path.join(H.TMP, "forms.jpg"), os.path.join(H.TMP, "forms.pfm")
    open(src, "wb").write(jpg)
    ok = H.cli("bloom", src, "-o", ref, "--engine", "cpu", "--kernel-preset", "gaussian:sigma=2")
    want = H.read_pfm(open(ref, "rb").read()) if ok else None
    jq = "/v1/bloom?kernel_preset=gaussian:sigma=2&format=pfm"
    for name, args in (("planes", ()), ("coefficients", ("--jpeg-gpu-idct",))):
        d = daemon("--cpu-standin", "on", "--jpeg-upload-lease=false", *args)
        try:
            check("%s: ready" % name, H.wait_ready(d), d.log()[-1500:])
            st, h, out, took = stalled(d, jq, jpg)
            print("     JPEG %s during a %g s stall: %.3f s, X-Stand-In %s" % (
                name, STALL, took, h.get("x-stand-in")))
            check("JPEG %s during the stall: 200 from the CPU engine" % name,
                  st == 200 and h.get("x-stand-in") == "cpu", (st, h, out[:200]))
            H.close_enough("... == the CLI's CPU engine on the same file",
                           H.read_pfm(out) if st == 200 else None, want, JPEG_TOL)
            if args:  # the frame before the stall went to the GPU as coefficients
                n = info(d)["gpus"][0].get("jpeg_coef_frames", 0)
                check("... the frame was decoded to coefficients (jpeg_coef_frames %d)" % n,
                      n >= 1)
            time.sleep(STALL)
        finally:
            d.stop("stand-in daemon (%s)" % name)


def test_declined():
    """A JPEG frame's planes (8 bytes a pixel, in and out) fit the 1 MiB budget, its float pixels
    (32, in and out) do not: the stand-in leaves it to the GPU, which answers it after the
    stall."""
    d = daemon("--cpu-standin", "on", "--memory-budget", "1M")
    try:
        check("budget: ready", H.wait_ready(d), d.log()[-1500:])
        jpg = H.jpg444_bytes(H.rand8(*SIZE), "budget")  # 120x160: 600 KiB as floats
        big = H.jpg444_bytes(H.rand8(200, 300), "big")   # 480 KiB as planes, 1.9 MiB as floats
        jq = "/v1/bloom?kernel_preset=gaussian:sigma=2&format=png"
        check("a small frame: 200", d.req("POST", jq, body=jpg)[0] == 200)
        st, h, out, took = stalled(d, jq, big)
        print("     frame past the budget as floats during a %g s stall: %.3f s, X-Stand-In %s"
              % (STALL, took, h.get("x-stand-in")))
        check("past the budget as floats: answered by the GPU after the stall",
              st == 200 and "x-stand-in" not in h, (st, h, out[:200]))
        n = info(d).get("cpu_standin", {})
        check("... counted declined", n.get("declined", 0) >= 1, n)
        check("/metrics counts it declined",
              (d.metric('fftbloom_standin_frames_total{outcome="declined"}') or 0) >= 1)
    finally:
        d.stop("budget daemon")


def test_off_and_auto():
    d = daemon("--cpu-standin", "off")
    try:
        check("off: ready", H.wait_ready(d), d.log()[-1500:])
        img = H.rand_float(*SIZE)
        path = "/v1/convolve?kernel_preset=gaussian:sigma=2&method=fft&format=pfm"
        body = open(H.write_pfm(os.path.join(H.TMP, "o.pfm"), img), "rb").read()
        st, h, out, took = stalled(d, path, body)
        print("     off: the frame during a %g s stall: %.3f s" % (STALL, took))
        check("off: the frame waits for the stall and the GPU answers it",
              st == 200 and "x-stand-in" not in h and h.get("x-gpu") == "0", (st, h))
        check("off: /v1/info says off", info(d).get("cpu_standin", {}).get("on") is False)
    finally:
        d.stop("stand-in off daemon")
    d = daemon()
    try:
        check("auto: ready", H.wait_ready(d), d.log()[-1500:])
        g = info(d)
        if g.get("gpus", [{}])[0].get("software_renderer"):
            check("auto on a software renderer: off", g.get("cpu_standin", {}).get("on") is False,
                  g.get("cpu_standin"))
        else:
            check("auto on a GPU: on", g.get("cpu_standin", {}).get("on") is True,
                  g.get("cpu_standin"))
    finally:
        d.stop("stand-in auto daemon")


def test_shutdown_during_stall():
    """SIGTERM while the stand-in runs frames and the GPU thread stalls: every request is
    answered (200, or 503 shutting_down) and the daemon exits 0."""
    d = daemon("--cpu-standin", "on")
    check("shutdown: ready", H.wait_ready(d), d.log()[-1500:])
    img = H.rand_float(*SIZE)
    path = "/v1/convolve?kernel_preset=gaussian:sigma=2&method=fft&format=pfm"
    body = open(H.write_pfm(os.path.join(H.TMP, "t.pfm"), img), "rb").read()
    d.req("POST", path, body=body)
    arm_stall(d, 2.0)
    time.sleep(0.9)
    res = {}
    ts = [H.post_async(d, path, body, res, i) for i in range(6)]
    time.sleep(0.05)
    d.p.send_signal(15)
    for t in ts:
        t.join()
    codes = sorted(r[0] for r in res.values() if r)
    print("     shutdown during a stall: answers %s" % codes)
    check("every request answered 200 or 503", len(codes) == 6 and
          all(c in (200, 503) for c in codes), codes)
    d.stop("shutdown daemon")


if __name__ == "__main__":
    if not os.path.exists(FAULTS):
        check("fault-injection build exists (make faults)", False, FAULTS)
    else:
        test_on()
        test_jpeg_forms()
        test_declined()
        test_off_and_auto()
        test_shutdown_during_stall()
    print("SCRIPT: %d passed, %d failed" % (H.PASSED, H.FAILED))
    sys.exit(1 if H.FAILED else 0)
