"""fftbloomd over several GPUs (run by test_workers.sh), over real HTTP: `--gpus 0,0` runs two
worker processes on the one device here (llvmpipe), serving one port under a supervisor.
/readyz lists both; /metrics sums both (N requests sent, N counted); a kernel PUT that one
worker took is used by the other (the answers' X-Gpu says which), answers compared with a numpy
direct convolution, and a DELETE reaches both; kill -9 of
a worker: the other serves on, the supervisor restarts it and fftbloom_worker_restarts_total
counts it; a PUT/DELETE storm of one name while requests use it leaves no store error;
SIGHUP reaches every worker; SIGSTOP of a worker past --worker-timeout: /readyz
stays 200 saying which is not ready, then it is killed and restarted; SIGTERM: exit 0
with no worker left; a worker that fails at start stops the daemon with status 1. Prints "SCRIPT: N passed, N failed" last."""
import glob
import json
import re
import os
import signal
import subprocess
import threading
import time

import numpy as np

import http_test as H

TIMEOUT = 6  # --worker-timeout


def readyz(d, timeout=10):
    try:
        st, _, body = d.req("GET", "/readyz", timeout=timeout)
        return st, json.loads(body)
    except (OSError, ValueError):
        return 0, {}


def stop(pid):
    """SIGSTOP, then waits until every thread of pid has stopped: a stop takes hold of each
    thread when it next runs, and one that runs first may still accept a connection."""
    os.kill(pid, signal.SIGSTOP)
    end = time.time() + 5
    while time.time() < end:
        states = []
        for t in glob.glob("/proc/%d/task/*/stat" % pid):
            try:
                with open(t) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass
        if states and all(x in "tT" for x in states):
            return
        time.sleep(0.001)


def pids(d):
    st, o = readyz(d)
    return [g.get("pid", 0) for g in o.get("gpus", [])]


def wait_ready(d, n, timeout=60, old=None):
    """Waits until n workers are ready (and none has a pid in old); returns their pids."""
    end = time.time() + timeout
    while time.time() < end:
        st, o = readyz(d)
        g = o.get("gpus", [])
        if len(g) == n and all(x.get("ready") for x in g) and \
                not (old and any(x.get("pid") in old for x in g)):
            return [x["pid"] for x in g]
        time.sleep(0.1)
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (reaped later) counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def convolve(d, name, img_pfm):
    st, _, body = d.req("POST", "/v1/convolve?kernel=%s&format=pfm" % name, body=img_pfm)
    return st, body


def convolve_on(d, name, body, gpu, tries=80):
    """The request on new connections until worker gpu answers it (X-Gpu): (status, body) of
    that answer, else of the last."""
    st, out = None, b""
    for _ in range(tries):
        st, h, out = d.req("POST", "/v1/convolve?kernel=%s&format=pfm" % name, body=body)
        if st != 200 or h.get("x-gpu") == gpu:
            break
    return st, out


def test_workers():
    # one worker a GPU throughout: on a GPU the default (--compile-mode process) would let a
    # successor take a GPU over mid-test (compile_test.py covers those pairs)
    d = H.Daemon("--gpus", "0,0", "--worker-timeout", str(TIMEOUT), "--codec-threads", "2",
                 "--drain-timeout", "5", "--compile-mode", "parallel")
    worker_pids = []
    try:
        worker_pids = wait_ready(d, 2) or []
        st, o = readyz(d)
        H.check("/readyz lists both workers, each ready, 200", st == 200 and len(worker_pids) == 2
                and [g["gpu"] for g in o["gpus"]] == [0, 1], o)
        H.check("the log names each worker's GPU", "[gpu 0]" in d.log() and "[gpu 1]" in d.log(),
                d.log()[-1500:])
        st, _, body = d.req("GET", "/v1/info")
        info = json.loads(body) if st == 200 else {}
        H.check("/v1/info lists both GPUs and both workers",
                len(info.get("gpus", [])) == 2 and len(info.get("workers", [])) == 2,
                str(info.get("gpus"))[:300])

        # a kernel PUT, then requests; both workers take some or all of them
        k = H.RNG.random((5, 3, 3)).astype(np.float32)
        kb = open(H.write_pfm(os.path.join(H.TMP, "k.pfm"), k), "rb").read()
        st, _, body = d.req("PUT", "/v1/kernels/shared", body=kb)
        H.check("PUT /v1/kernels/shared", st == 201, (st, body))
        img = H.rand_float(20, 24)
        ipf = open(H.write_pfm(os.path.join(H.TMP, "i.pfm"), img), "rb").read()
        ref = H.direct_convolve(img, k)
        before = d.metric('fftbloom_http_requests_total{route="convolve",status="200"}') or 0
        n, bad = 16, []
        for i in range(n):
            st, body = convolve(d, "shared", ipf)
            if st != 200:
                bad.append((i, st, body[:200]))
        H.check("%d requests with the PUT kernel all 200" % n, not bad, bad)
        H.close_enough("an answer == numpy direct convolution",
                       H.read_pfm(body) if st == 200 else None, ref)
        end, total = time.time() + 5, None
        while time.time() < end:
            total = d.metric('fftbloom_http_requests_total{route="convolve",status="200"}')
            if total == before + n:
                break
            time.sleep(0.1)
        H.check("/metrics sums both workers: %d convolve requests counted" % n,
                total == before + n, (before, total))
        jobs = [d.metric('fftbloom_gpu_jobs_total{gpu="%d"}' % i) for i in (0, 1)]
        print("     jobs by worker: %s" % jobs)
        H.check("/metrics has both GPUs' families", None not in jobs, jobs)

        # the store across workers, made certain: the worker that took a PUT is read from the
        # log; requests go on new connections (spread over the workers' sockets by their
        # addresses) until the other worker answers one (X-Gpu)
        p0, p1 = worker_pids
        k2 = H.RNG.random((3, 5, 3)).astype(np.float32)
        kb2 = open(H.write_pfm(os.path.join(H.TMP, "k2.pfm"), k2), "rb").read()
        st, _, body = d.req("PUT", "/v1/kernels/second", body=kb2)
        m = None
        for _ in range(100):  # the access line is written once the answer has gone
            m = re.search(r"\[gpu (\d)\] request [^\n]*method=PUT path=/v1/kernels/second "
                          r"status=201", d.log())
            if m:
                break
            time.sleep(0.05)
        H.check("PUT /v1/kernels/second (worker %s)" % (m and m.group(1)), st == 201 and m,
                (st, body))
        other = "1" if m and m.group(1) == "0" else "0"
        st, body = convolve_on(d, "second", ipf, other)
        H.close_enough("worker %s uses the kernel the other stored" % other,
                       H.read_pfm(body) if st == 200 else None, H.direct_convolve(img, k2))
        st, _, _ = d.req("DELETE", "/v1/kernels/second")
        H.check("DELETE /v1/kernels/second", st == 204, st)
        refused = set()
        for _ in range(80):
            st, _ = convolve(d, "second", ipf)
            if st != 400:
                break
            refused = set(re.findall(r"\[gpu (\d)\] request [^\n]*path=/v1/convolve "
                                     r"status=400", d.log()))
            if refused == {"0", "1"}:
                break
        H.check("after the DELETE both workers answer 400 (no such kernel)",
                refused == {"0", "1"}, (st, refused))

        # PUTs of two kernels of different sizes and DELETEs of one name from three threads
        # while three convolve with it: a worker reads each stored file whole, never one
        # file's size with another's bytes (the log has no store error); answers 200 or 400
        kb3 = open(H.write_pfm(os.path.join(H.TMP, "k3.pfm"),
                               H.RNG.random((5, 5, 3)).astype(np.float32)), "rb").read()
        seen, end = {}, time.time() + 3

        def storm(use):
            while time.time() < end:
                for m, b in ((("POST", ipf),) if use else
                             (("PUT", kb), ("DELETE", None), ("PUT", kb3))):
                    path = "/v1/convolve?kernel=storm&format=pfm" if use else "/v1/kernels/storm"
                    st = d.req(m, path, body=b)[0]
                    seen[(m, st)] = seen.get((m, st), 0) + 1
        ts = [threading.Thread(target=storm, args=(i % 2,)) for i in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        bad = [ln for ln in d.log().splitlines() if "the shared store:" in ln]
        H.check("PUT/DELETE storm of one kernel name across workers: %s" % sorted(seen.items()),
                not bad and set(st for (m, st) in seen if m == "POST") <= {200, 400}
                and seen.get(("POST", 200)), bad[:3])
        d.req("DELETE", "/v1/kernels/storm")

        # SIGHUP to the supervisor: each worker reloads (here: nothing to reload, said)
        d.p.send_signal(signal.SIGHUP)
        end = time.time() + 10
        while time.time() < end and d.log().count("SIGHUP: no --kernel-dir") < 2:
            time.sleep(0.05)
        H.check("SIGHUP reaches both workers", "[gpu 0] SIGHUP: no --kernel-dir" in d.log() and
                "[gpu 1] SIGHUP: no --kernel-dir" in d.log(), d.log()[-1000:])

        # a crash: kill -9 worker 0; worker 1 serves on; worker 0 comes back, counted
        os.kill(p0, signal.SIGKILL)
        t0 = time.time()
        st, body = convolve(d, "shared", ipf)
        H.check("a request while worker 0 restarts is answered", st == 200, (st, body[:200]))
        now = wait_ready(d, 2, timeout=30, old=[p0])
        H.check("the supervisor restarts the killed worker (%.1f s)" % (time.time() - t0),
                now is not None and now[1] == p1, (now, d.log()[-1500:]))
        H.check("fftbloom_worker_restarts_total counts it",
                d.metric('fftbloom_worker_restarts_total{gpu="0"}') == 1 and
                d.metric('fftbloom_worker_restarts_total{gpu="1"}') == 0,
                (d.metric("fftbloom_worker_restarts_total")))
        if now:
            p0 = now[0]
        st, body = convolve_on(d, "shared", ipf, "0")  # what was stored before it started
        H.close_enough("the restarted worker has the kernel stored before it started",
                       H.read_pfm(body) if st == 200 else None, ref)

        # a hang: SIGSTOP worker 1 past --worker-timeout; killed and restarted
        stop(p1)
        t0 = time.time()
        seen = None
        while time.time() < t0 + TIMEOUT + 5 and seen is None:
            st, o = readyz(d, timeout=0.3)  # those that reach the stopped worker wait
            g = o.get("gpus", [])
            if st == 200 and len(g) == 2 and g[0]["ready"] and not g[1]["ready"]:
                seen = (time.time() - t0, g[1].get("reason"))
            time.sleep(0.1)
        H.check("while worker 1 hangs, /readyz answers 200 (worker 0 is ready) and says worker "
                "1 is not: %s" % (seen,), seen is not None)
        # /metrics from worker 0 while worker 1 is still the stopped process: its store is read
        # even if the stop caught it holding its lock
        msum = None
        while alive(p1) and msum is None and time.time() < t0 + TIMEOUT + 5:
            try:
                st, _, b = d.req("GET", "/metrics", timeout=0.3)
                if st == 200 and alive(p1):
                    msum = b.decode().count("fftbloom_http_requests_total{")
            except OSError:
                pass  # reached the stopped worker's socket
        H.check("while worker 1 hangs, /metrics answers with the summed series (%s)" % msum,
                bool(msum))
        now = wait_ready(d, 2, timeout=TIMEOUT + 30, old=[p1])
        took = time.time() - t0
        H.check("a stopped worker is killed and restarted (%.1f s, --worker-timeout %d)"
                % (took, TIMEOUT), now is not None and not alive(p1) and took < TIMEOUT + 10,
                (now, d.log()[-1500:]))
        H.check("the log says it was silent", "silent for" in d.log(), d.log()[-1000:])
        H.check("its restart is counted",
                d.metric('fftbloom_worker_restarts_total{gpu="1"}') == 1)
        if now:
            worker_pids = now
    finally:
        for p in worker_pids:
            try:
                os.kill(p, signal.SIGCONT)
            except OSError:
                pass
        d.stop("two workers")
    left = [p for p in worker_pids if alive(p)]
    kids = subprocess.run(["pgrep", "-P", str(d.p.pid)], capture_output=True, text=True).stdout
    H.check("SIGTERM: no worker left running", not left and not kids.strip(), (left, kids))


def test_start_failure():
    # a worker that cannot start (its TLS files unreadable) before any was ready: the daemon
    # stops with status 1, as one process would, and leaves no worker behind
    r = subprocess.run([H.DAEMON, "--gpus", "0,0", "--listen", "127.0.0.1", "--port", "0",
                        "--tls-cert", "/nonexistent", "--tls-key", "/nonexistent"],
                       capture_output=True, text=True, timeout=120)
    H.check("a worker failing at start stops the daemon: exit 1, saying why", r.returncode == 1
            and "before the service was ever ready" in r.stderr, (r.returncode, r.stderr[-800:]))


def test_port_in_use():
    # a second service on a port the first one holds is refused, as a single daemon would be
    # refused (its workers share the port among themselves only); with --reuse-port it may join
    d = H.Daemon("--gpus", "0,0", "--codec-threads", "2")
    try:
        r = subprocess.run([H.DAEMON, "--gpus", "0,0", "--listen", "127.0.0.1", "--port",
                            str(d.port)], capture_output=True, text=True, timeout=120)
        H.check("a second service on the first one's port: exit 1, the port in use",
                r.returncode == 1 and "in use" in r.stderr, (r.returncode, r.stderr[-600:]))
        st, _, _ = d.req("GET", "/readyz")
        H.check("the first service still serves", st == 200)
    finally:
        d.stop("the first service")


def main():
    H.run_script((test_workers, test_start_failure, test_port_in_use), need_daemon=True)


if __name__ == "__main__":
    main()
