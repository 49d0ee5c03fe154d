"""No request waits for a compile (run by test_compile.sh), over real HTTP, with each
--compile-mode (parallel, thread, inline) on a fresh daemon with nothing cached (--program-cache
none, --fft-wisdom none): a plan is built before ready (--warm-sizes; on a GPU without it the
1920x1080 start plan); the first request after /readyz, of another size, is answered on it
(X-Borrowed-Plan) while its own plan compiles in idle time; requests sent while those compiles
are in flight are answered, and every answer agrees with numpy's float64 direct convolution.
With parallel, the log says the programs were submitted on the GPU thread's context (where the
context has GL_KHR_parallel_shader_compile: llvmpipe and NVIDIA do). With process, a successor
process builds the new size's plan and takes over while the first worker answers (test_process).
Prints "SCRIPT: N passed, N failed" last."""
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


def process_daemon(tag, *extra):
    """A --compile-mode process daemon with nothing cached and a 160x120 plan built before
    ready, and a random 9x9 colour kernel (as PFM bytes)."""
    kern = H.RNG.random((9, 9, 3)).astype(np.float32)
    kb = open(H.write_pfm(os.path.join(H.TMP, tag + ".pfm"), kern), "rb").read()
    d = H.Daemon("--program-cache", "none", "--fft-wisdom", "none", "--compile-mode", "process",
                 "--warm-sizes", "160x120", *extra)
    return d, kern, kb


def ready_pids(d):
    """The pids /readyz lists (one per GPU), or [] when it does not answer 200."""
    st, _, body = d.req("GET", "/readyz")
    return [g["pid"] for g in json.loads(body).get("gpus", [])] if st == 200 else []


def test_process():
    """--compile-mode process: the serving worker never compiles in idle time; a frame of a new
    size borrows the warm plan, a successor process builds that size's plan (the frames' shapes
    handed to it) while the first worker answers, takes over the port, and the first worker
    drains and exits; no request fails meanwhile, every answer agrees with numpy, and the size
    then runs on its own plan in the new worker."""
    d, kern, kb = process_daemon("kp", "--log-level", "debug")
    try:
        H.check("process: ready", wait_ready(d), d.log()[-1500:])
        first = ready_pids(d)
        H.check("process: one GPU listed, by its worker's pid", len(first) == 1, first)
        H.check("process: the first worker built before it served",
                "plans built and idle work done" in d.log(), d.log()[-1500:])
        img = H.rand_float(200, 300)
        st, h, body = convolve(d, img, kb)
        H.check("process: a new size borrows the plan built before ready",
                st == 200 and "x" in h.get("x-borrowed-plan", ""), (st, h, body[:200]))
        H.close_enough("process: that answer == numpy float64 direct convolution",
                       H.read_pfm(body) if st == 200 else None, H.direct_convolve(img, kern), TOL)
        # requests 0.5 s apart until the successor serves, and some after, half of them on one
        # kept-alive connection (closed by the retiring worker after an answer, then opened
        # again): the first worker answers them all, then the successor; /metrics lists one
        # worker a GPU throughout
        keep = d.conn()
        n, failed, up_series, after, deadline = 0, [], set(), 0, time.time() + 240
        while time.time() < deadline and after < 6:
            after += "serves device" in d.log()
            time.sleep(0.5)
            img = H.rand_float(200, 300)
            if n % 2:
                pf = open(H.write_pfm(os.path.join(H.TMP, "c.pfm"), img), "rb").read()
                mp, ct = H.multipart([("image", pf, "image/x-portable-floatmap"),
                                      ("kernel", kb, "image/x-pfm"),
                                      ("params", b'{"format": "pfm", "method": "fft"}',
                                       "application/json")])
                try:
                    keep.request("POST", "/v1/convolve", body=mp, headers={"Content-Type": ct})
                    r = keep.getresponse()
                    st, body = r.status, r.read()
                except (OSError, H.http.client.HTTPException) as e:
                    st, body = str(e), b""
            else:
                st, h, body = convolve(d, img, kb)
            m = d.req("GET", "/metrics")[2].decode()
            up_series.add(sum(l.startswith("fftbloom_worker_up{") for l in m.splitlines()))
            n += 1
            got = H.read_pfm(body) if st == 200 else None
            ref = H.direct_convolve(img, kern)
            rel = float(np.sqrt(((got - ref) ** 2).sum() / (ref ** 2).sum())) \
                if got is not None and got.shape == ref.shape else None
            if rel is None or rel > TOL:
                failed.append((n, st, rel, body[:200]))
        log = d.log()
        H.check("process: a successor took over (%d requests meanwhile)" % n,
                "serves device 0 after building its plans" in log, log[-2000:])
        H.check("process: no request failed or differed from numpy meanwhile, kept-alive ones "
                "included", not failed, failed[:3])
        H.check("process: /metrics listed one worker throughout", up_series == {1}, up_series)
        H.check("process: the successor was handed the served frames' shapes",
                "frame shapes handed by the serving process wanted" in log, log[-2000:])
        for slot, who in ((0, "the first worker"), (1, "the successor")):
            served = log[log.find("[gpu %d] fftbloomd listening" % slot):]
            H.check("process: %s built nothing in idle time once it served" % who,
                    not [l for l in served.splitlines()
                         if "[gpu %d]" % slot in l and "in idle time" in l], served[-2000:])
        deadline = time.time() + 60
        while time.time() < deadline and "exited with status 0 after its successor" not in d.log():
            time.sleep(0.2)
        H.check("process: the first worker drained and exited 0",
                "exited with status 0 after its successor took over" in d.log(), d.log()[-1500:])
        gone = False
        try:
            os.kill(first[0], 0)
        except (OSError, IndexError):
            gone = True
        H.check("process: its pid is gone", gone, first)
        now = ready_pids(d)
        H.check("process: /readyz lists one GPU, the successor's pid", len(now) == 1 and
                now != first, (first, now))
        H.check("process: /v1/info lists one GPU", len(json.loads(
            d.req("GET", "/v1/info")[2])["gpus"]) == 1)
        H.check("process: fftbloom_worker_takeovers_total{gpu=\"0\"} 1",
                d.metric('fftbloom_worker_takeovers_total{gpu="0"}') == 1,
                d.metric("fftbloom_worker_takeovers_total"))
        img = H.rand_float(200, 300)
        st, h, body = convolve(d, img, kb)
        H.check("process: the size runs on its own plan in the successor",
                st == 200 and "x-borrowed-plan" not in h, (st, h))
        H.close_enough("process: its answer == numpy float64 direct convolution",
                       H.read_pfm(body) if st == 200 else None, H.direct_convolve(img, kern), TOL)
    finally:
        d.stop("process daemon")


def test_process_successor_killed():
    """--compile-mode process: a successor killed while it builds leaves the serving worker
    answering; the supervisor starts another after its delay, which takes over."""
    import re
    import signal
    d, kern, kb = process_daemon("kq")
    try:
        H.check("process, successor killed: ready", wait_ready(d), d.log()[-1500:])
        st, h, _ = convolve(d, H.rand_float(200, 300), kb)
        H.check("process, successor killed: a new size borrows", st == 200 and
                "x-borrowed-plan" in h, (st, h))
        pid, deadline = None, time.time() + 60
        while time.time() < deadline and pid is None:
            m = re.search(r"worker 1 \(device 0\) started: pid (\d+)", d.log())
            if m:
                pid = int(m.group(1))
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        H.check("process, successor killed: a successor started", pid is not None, d.log()[-1500:])
        if "serves device" in d.log():
            print("     the successor served before the kill landed: its failure not exercised")
        else:
            deadline = time.time() + 10
            while time.time() < deadline and "before it served" not in d.log():
                time.sleep(0.1)
            H.check("process, successor killed: said, the serving worker goes on",
                    "a successor, killed by signal 9" in d.log() and "serves on" in d.log(),
                    d.log()[-1500:])
            img = H.rand_float(200, 300)
            st, h, body = convolve(d, img, kb)
            H.close_enough("process, successor killed: the first worker still answers == numpy",
                           H.read_pfm(body) if st == 200 else None,
                           H.direct_convolve(img, kern), TOL)
            deadline = time.time() + 120
            while time.time() < deadline and "serves device" not in d.log():
                time.sleep(0.2)
            H.check("process, successor killed: another successor took over",
                    "serves device 0 after building" in d.log(), d.log()[-1500:])
    finally:
        d.stop("process daemon (successor killed)")


def test_process_serving_killed():
    """--compile-mode process: the serving worker killed is restarted in its slot serving once
    warm (not after building what it had served), with the shapes it served wanted again, which
    a successor then builds and takes over with."""
    import re
    import signal
    d, kern, kb = process_daemon("kr")
    try:
        H.check("process, serving worker killed: ready", wait_ready(d), d.log()[-1500:])
        first = ready_pids(d)
        st, h, _ = convolve(d, H.rand_float(200, 300), kb)
        H.check("process, serving worker killed: a new size borrows", st == 200 and
                "x-borrowed-plan" in h, (st, h))
        time.sleep(0.5)  # its beat (ten a second) has published the shape
        os.kill(first[0], signal.SIGKILL)
        deadline = time.time() + 60
        while time.time() < deadline and "serving once warm" not in d.log():
            time.sleep(0.1)
        # the shapes it served: the new size's (and on a GPU its warm frame's)
        m = re.search(r"restarted after a fault: serving once warm; (\d+) frame shapes", d.log())
        H.check("process, serving worker killed: restarted quick, the shapes it served wanted",
                m is not None and int(m.group(1)) >= 1, d.log()[-1500:])
        img = H.rand_float(200, 300)
        st, h, body = convolve(d, img, kb)
        H.close_enough("process, serving worker killed: the restarted worker answers == numpy",
                       H.read_pfm(body) if st == 200 else None, H.direct_convolve(img, kern), TOL)
        H.check("process, serving worker killed: counted", d.metric(
            'fftbloom_worker_restarts_total{gpu="0"}') == 1,
            d.metric("fftbloom_worker_restarts_total"))
        deadline = time.time() + 120
        while time.time() < deadline and "serves device 0 after building" not in d.log():
            time.sleep(0.2)
        H.check("process, serving worker killed: a successor built the size and took over",
                "serves device 0 after building" in d.log(), d.log()[-1500:])
        deadline = time.time() + 30
        ok = False
        while time.time() < deadline and not ok:
            st, h, _ = convolve(d, H.rand_float(200, 300), kb)
            ok = st == 200 and "x-borrowed-plan" not in h
            time.sleep(0.3)
        H.check("process, serving worker killed: the size then runs on its own plan", ok, h)
    finally:
        d.stop("process daemon (serving worker killed)")


def test_bad_mode():
    r = H.subprocess.run([H.DAEMON, "--compile-mode", "sometimes", "--port", "0"],
                         capture_output=True, text=True, timeout=30)
    H.check("--compile-mode sometimes: refused, naming the choices",
            r.returncode != 0 and "parallel" in (r.stderr + r.stdout), r.stderr[-500:])


def main():
    H.run_script((test_parallel, test_thread, test_inline, test_process,
                  test_process_successor_killed, test_process_serving_killed, test_bad_mode),
                 need_daemon=True)


if __name__ == "__main__":
    main()
