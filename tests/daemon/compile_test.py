"""No request waits for a compile (run by test_compile.sh), over real HTTP, with each
--compile-mode (parallel, thread, inline) on a fresh daemon with nothing cached (--program-cache
none, --fft-wisdom none): a plan is built before ready (--warm-sizes; on a GPU without it the
1920x1080 start plan); the first request after /readyz, of another size, is answered on it
(X-Borrowed-Plan) while its own plan compiles in idle time; requests sent while those compiles
are in flight are answered, and every answer agrees with numpy's float64 direct convolution.
With parallel, the log says the programs were submitted on the GPU thread's context (where the
context has GL_KHR_parallel_shader_compile: llvmpipe and NVIDIA do). Prints "SCRIPT: N passed,
N failed" last."""
import json
import os
import time

import numpy as np

import http_test as H

TOL = 1e-5


def info_gpu(d):
    st, _, body = d.req("GET", "/v1/info")
    return json.loads(body)["gpus"][0] if st == 200 else {}


wait_ready = H.wait_ready


def convolve(d, img, kb):
    pf = open(H.write_pfm(os.path.join(H.TMP, "c.pfm"), img), "rb").read()
    mp, ct = H.multipart([("image", pf, "image/x-portable-floatmap"),
                          ("kernel", kb, "image/x-pfm"),
                          ("params", b'{"format": "pfm", "method": "fft"}', "application/json")])
    return d.req("POST", "/v1/convolve", body=mp, headers={"Content-Type": ct})


def run_mode(mode):
    kern = H.RNG.random((9, 9, 3)).astype(np.float32)
    kb = open(H.write_pfm(os.path.join(H.TMP, "k.pfm"), kern), "rb").read()
    d = H.Daemon("--program-cache", "none", "--fft-wisdom", "none", "--compile-mode", mode,
                 "--warm-sizes", "160x120", "--log-level", "debug")
    try:
        H.check("%s: ready" % mode, wait_ready(d), d.log()[-1500:])
        # the first request after ready: a size with no plan, borrowing the warm one
        img = H.rand_float(200, 300)
        st, h, body = convolve(d, img, kb)
        print("     %s first request: X-Borrowed-Plan %s, X-Tiles %s, Server-Timing %s" % (
            mode, h.get("x-borrowed-plan"), h.get("x-tiles"), H.timings(h)))
        H.check("%s: the first request after ready runs on the plan built before ready" % mode,
                st == 200 and "x" in h.get("x-borrowed-plan", ""), (st, h, body[:200]))
        H.close_enough("%s: first request == numpy float64 direct convolution" % mode,
                       H.read_pfm(body) if st == 200 else None, H.direct_convolve(img, kern), TOL)
        # requests 0.6 s apart (past the idle grace): each meets the idle compiles of the size's
        # plan in flight, until the plan is built
        n, built = 0, 0
        deadline = time.time() + 60
        while time.time() < deadline and n < 40:
            time.sleep(0.6)
            img = H.rand_float(200, 300)
            st, h, body = convolve(d, img, kb)
            n += 1
            H.close_enough("%s: request %d during idle compiles == numpy" % (mode, n),
                           H.read_pfm(body) if st == 200 else None,
                           H.direct_convolve(img, kern), TOL)
            if "x-borrowed-plan" not in h:
                built = 1
                break
        c = info_gpu(d).get("caches", {})
        H.check("%s: the size's own plan built in idle time, then used (%d requests)" % (mode, n),
                built and c.get("plans_built_idle", 0) >= 1, c)
        log = d.log()
        if mode == "parallel":
            par = "programs compile in parallel on the GPU thread's context" in log
            H.check("parallel: the extension used where present, its builds submitted there",
                    not par or "(submitted in parallel" in log, log[-1500:])
            print("     parallel: %s" % ("GL_KHR_parallel_shader_compile on" if par
                                         else "no extension: compiles inline"))
        if mode == "thread":
            H.check("thread: idle builds on the compile thread", "on the compile thread" in log,
                    log[-1500:])
    finally:
        d.stop("%s daemon" % mode)


def test_parallel():
    run_mode("parallel")


def test_thread():
    run_mode("thread")


def test_inline():
    run_mode("inline")


def test_bad_mode():
    r = H.subprocess.run([H.DAEMON, "--compile-mode", "sometimes", "--port", "0"],
                         capture_output=True, text=True, timeout=30)
    H.check("--compile-mode sometimes: refused, naming the choices",
            r.returncode != 0 and "parallel" in (r.stderr + r.stdout), r.stderr[-500:])


def main():
    H.run_script((test_parallel, test_thread, test_inline, test_bad_mode), need_daemon=True)


if __name__ == "__main__":
    main()
