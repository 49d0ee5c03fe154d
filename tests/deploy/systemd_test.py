"""The systemd protocol against the real daemon on llvmpipe (run by test_systemd.sh), this test
playing systemd's side: a NOTIFY_SOCKET datagram socket (READY=1 only after every --warm-sizes
plan is built, STATUS= lines, EXTEND_TIMEOUT_USEC= during the warm-up, WATCHDOG=1 at half of
WATCHDOG_USEC and only while the GPU thread's heartbeat is fresh, STOPPING=1 on SIGTERM),
LISTEN_FDS/LISTEN_PID/LISTEN_FDNAMES with a socket this test bound (and systemd's own
systemd-socket-activate), and $CREDENTIALS_DIRECTORY/api-key."""
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time

import numpy as np

from deploylib import (DAEMON, TMP, check, finish, free_port)
import deploylib


def Daemon(argv, env=None, **kw):
    """deploylib's Daemon with --compile-mode parallel (through the environment): on a GPU the
    default (process) runs even one GPU under the supervisor, whose conversation with the
    manager test_several_gpus checks; the others check one process's."""
    e = dict(env or {})
    e.setdefault("FFTBLOOM_COMPILE_MODE", "parallel")
    return deploylib.Daemon(argv, env=e, **kw)

RNG = np.random.default_rng(int(time.time() * 1e6) % 2**32)


class Notify:
    """A datagram socket bound to an abstract name, as systemd's NOTIFY_SOCKET; records every
    message with the time it arrived."""
    n = 0

    def __init__(self):
        Notify.n += 1
        self.name = "fftbloom-deploy-test-%d-%d" % (os.getpid(), Notify.n)
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind("\0" + self.name)
        self.s.settimeout(0.1)
        self.msgs = []
        self.lock = threading.Lock()
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def addr(self):
        return "@" + self.name

    def run(self):
        while not self.stop:
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            with self.lock:
                self.msgs.append((time.time(), d.decode("utf-8", "replace")))

    def all(self):
        with self.lock:
            return list(self.msgs)

    def assignments(self, key):
        """(time, value) of every KEY=value line received."""
        out = []
        for t, m in self.all():
            for line in m.split("\n"):
                if line.startswith(key + "="):
                    out.append((t, line[len(key) + 1:]))
        return out

    def wait(self, key, value=None, timeout=60):
        end = time.time() + timeout
        while True:
            for t, v in self.assignments(key):
                if value is None or v == value:
                    return t
            if time.time() >= end:
                return None
            time.sleep(0.01)

    def close(self):
        self.stop = True
        self.t.join()
        self.s.close()


def pfm_bytes(h, w):
    a = (RNG.random((h, w, 3)) * 2 + 0.01).astype("<f4")
    return b"PF\n%d %d\n-1.0\n" % (w, h) + np.ascontiguousarray(a[::-1]).tobytes()


def gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


def test_ready_status_watchdog_stopping():
    n = Notify()
    warm = ["64x48", "100x80", "160x120", "200x150"]
    wd_us = 1000000
    d = Daemon([DAEMON, "--port", "0", "--warm-sizes", ",".join(warm)],
               env={"NOTIFY_SOCKET": n.addr(), "WATCHDOG_USEC": str(wd_us)}, name="notify")
    polls = []  # (request start, status, reason) of /readyz during the warm-up

    def poll():
        end = time.time() + 60
        while time.time() < end and n.wait("READY", timeout=0) is None:
            t0 = time.time()
            try:
                st, _, body = d.req("GET", "/readyz", timeout=5)
                polls.append((t0, st, json.loads(body).get("reason", "")))
            except OSError:
                pass
            time.sleep(0.01)
        for _ in range(5):  # a few after READY=1
            t0 = time.time()
            st, _, body = d.req("GET", "/readyz", timeout=5)
            polls.append((t0, st, json.loads(body).get("reason", "")))

    th = threading.Thread(target=poll)
    th.start()
    t_ready = n.wait("READY", "1")
    log_at_ready = d.log()
    th.join()
    check("READY=1 arrives", t_ready is not None, d.log()[-2000:])
    if t_ready is None:
        d.stop()
        n.close()
        return
    warmed = [w for w in warm if re.search(r"warmed %s in" % w, log_at_ready)]
    check("READY=1 only after every warm size was planned (%s)" % ",".join(warmed),
          warmed == warm, log_at_ready[-1500:])
    before = [p for p in polls if p[0] < t_ready]
    after = [p for p in polls if p[0] > t_ready]
    warming = [p for p in before if p[1] == 503 and "warming" in p[2]]
    print("     /readyz: %d answers before READY=1 (%d 'warming up'), %d after" %
          (len(before), len(warming), len(after)))
    check("/readyz said 'warming up' before READY=1 arrived", len(warming) > 0, before[:5])
    check("/readyz answers 200 once READY=1 has arrived", after and
          all(p[1] == 200 for p in after), after)
    ext = [(t, v) for t, v in n.assignments("EXTEND_TIMEOUT_USEC") if t <= t_ready]
    check("EXTEND_TIMEOUT_USEC= during the warm-up, a heartbeat-timeout ahead (%s)" %
          (ext[0][1] if ext else None),
          ext and int(ext[0][1]) >= 60 * 1000000)
    st = [v for _, v in n.assignments("STATUS")]
    check("STATUS= first says the contexts are being made", st and st[0].startswith("making 1 GPU"),
          st[:3])
    check("a STATUS= line while warming up", any("warming up" in s for s in st), st)
    ready_st = [v for t, v in n.assignments("STATUS") if t >= t_ready]
    endpoint = d.endpoint
    check("STATUS= says where it serves once ready (%s)" % endpoint,
          ready_st and ready_st[0].startswith("ready on " + endpoint), ready_st[:2])

    time.sleep(3.5)
    pings = [t for t, v in n.assignments("WATCHDOG") if v == "1"]
    early = [t for t in pings if t < t_ready]
    late = [t for t in pings if t >= t_ready]
    g = gaps(late)
    print("     watchdog: %d pings in %.1f s after READY=1, gaps %.3f-%.3f s (WATCHDOG_USEC %.1f s)"
          % (len(late), time.time() - t_ready, min(g) if g else -1, max(g) if g else -1,
             wd_us / 1e6))
    check("no watchdog ping before READY=1", not early, early)
    check("watchdog pings keep coming (>= 5 in 3.5 s)", len(late) >= 5, len(late))
    check("every gap between pings is below WATCHDOG_USEC", g and max(g) < wd_us / 1e6, g)
    check("pings are paced at about half of it, not every tick", g and min(g) > 0.3 * wd_us / 1e6,
          g)

    t_term = time.time()
    rc = d.stop()
    t_stop = n.wait("STOPPING", "1", timeout=1)
    check("STOPPING=1 on SIGTERM", t_stop is not None and t_stop >= t_term, n.all()[-3:])
    stop_st = [v for t, v in n.assignments("STATUS") if t_stop and t >= t_stop - 0.001]
    check("with a STATUS= line about the drain", stop_st and stop_st[0].startswith("stopping:"),
          stop_st)
    check("exits 0 after the drain", rc == 0, (rc, d.log()[-2000:]))
    n.close()

    # a watchdog meant for another process (WATCHDOG_PID) is not fed by this one
    n = Notify()
    d = Daemon([DAEMON, "--port", "0"], env={"NOTIFY_SOCKET": n.addr(), "WATCHDOG_USEC": "200000",
                                             "WATCHDOG_PID": "1"}, name="notify-pid")
    t_ready = n.wait("READY", "1")
    time.sleep(1)
    pings = n.assignments("WATCHDOG")
    check("WATCHDOG_PID of another process: READY=1 but no pings", t_ready and not pings, pings)
    rc = d.stop()
    check("exits 0", rc == 0, rc)
    n.close()


def test_watchdog_follows_heartbeat():
    n = Notify()
    hb = 0.5
    wd_us = 400000
    # nothing borrowed or cached: on a GPU too the first job compiles its plan on the GPU
    # thread (about 1.3 s on an H200), where it would borrow the start plan
    d = Daemon([DAEMON, "--port", "0", "--heartbeat-timeout", str(hb), "--borrow-plans=false",
                "--program-cache", "none", "--driver-cache", "none", "--fft-wisdom", "none"],
               env={"NOTIFY_SOCKET": n.addr(), "WATCHDOG_USEC": str(wd_us)}, name="heartbeat")
    t_ready = n.wait("READY", "1")
    check("READY=1 (no warm sizes)", t_ready is not None, d.log()[-2000:])
    time.sleep(0.6)
    # A first job at a new size builds its plan and programs on the GPU thread (seconds on
    # llvmpipe, over a second on a GPU), during which the thread shows no life: the watchdog
    # must go hungry.
    t0 = time.time()
    st, h, body = d.req("POST", "/v1/bloom?format=pfm", body=pfm_bytes(768, 1024), timeout=120)
    t1 = time.time()
    gpu = re.search(r"gpu;dur=([0-9.]+)", h.get("server-timing", ""))
    gpu_s = float(gpu.group(1)) / 1e3 if gpu else 0
    print("     the job held the GPU thread %.2f s (heartbeat timeout %g s)" % (gpu_s, hb))
    check("the job answered 200", st == 200, (st, body[:200]))
    check("the job held the GPU thread long enough to go stale (> timeout + WATCHDOG_USEC)",
          gpu_s > hb + wd_us / 1e6, gpu_s)
    time.sleep(1.5)
    pings = [t for t, v in n.assignments("WATCHDOG") if v == "1"]
    during = [t for t in pings if t0 <= t <= t1]
    g = gaps([t for t in pings if t >= t_ready])
    longest = max(g) if g else 0
    print("     pings: %d before the job, %d during, %d after; longest gap %.2f s" %
          (len([t for t in pings if t < t0]), len(during), len([t for t in pings if t > t1]),
           longest))
    check("a gap in the pings longer than WATCHDOG_USEC while the GPU thread was silent "
          "(systemd would restart it)", longest > wd_us / 1e6, g)
    check("the gap is about the job's silence past the heartbeat timeout",
          longest > gpu_s - hb - 0.5, (longest, gpu_s))
    check("pings resumed after the job", any(t > t1 + 0.2 for t in pings), pings[-3:])
    st_lines = [v for _, v in n.assignments("STATUS")]
    check("a STATUS= line says which GPU thread is silent",
          any("gpu 0: no heartbeat" in s and "watchdog not fed" in s for s in st_lines),
          st_lines[-4:])
    check("the log says so too, and that it is fed again",
          "watchdog not fed" in d.log() and "watchdog fed again" in d.log(), d.log()[-1500:])
    rc = d.stop()
    check("exits 0", rc == 0, rc)
    n.close()


def listening_socket(family=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, 0))
    s.listen(64)
    return s


def activated(sock_fds, env, args=(), name="activated", wait_listen=True):
    """The daemon started as systemd starts a socket-activated service: the given sockets at
    descriptors 3, 4, ..., LISTEN_FDS, and LISTEN_PID set to the daemon's own pid (a shell sets
    it and execs the daemon, which keeps the pid)."""
    fds = [s.fileno() if hasattr(s, "fileno") else s for s in sock_fds]

    def pre():
        tmp = [os.dup(f) for f in fds]  # out of the way first: 3 may be one of them
        for i, f in enumerate(tmp):
            os.dup2(f, 3 + i)
            os.close(f)

    e = dict(env)
    e["LISTEN_FDS"] = str(len(fds))
    argv = ["/bin/sh", "-c", 'LISTEN_PID=$$; export LISTEN_PID; exec "$0" "$@"', DAEMON] + list(args)
    return Daemon(argv, env=e, preexec_fn=pre, close_fds=False, name=name,
                  wait_listen=wait_listen)


def raw_get(port, path="/healthz", host="127.0.0.1"):
    """Connects and sends a GET; returns the socket (the answer is read later)."""
    c = socket.create_connection((host, port), timeout=60)
    c.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path.encode())
    return c


def read_status(c):
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    c.close()
    m = re.match(rb"HTTP/1\.[01] (\d+)", data)
    return int(m.group(1)) if m else None


def test_socket_activation():
    ls = listening_socket()
    port = ls.getsockname()[1]
    unused = free_port()
    early = raw_get(port)  # waits in the socket's backlog: no daemon yet
    n = Notify()
    d = activated([ls], {"NOTIFY_SOCKET": n.addr(), "LISTEN_FDNAMES": "http"},
                  ["--port", str(unused)])
    check("the daemon serves the passed socket (log)",
          "socket from the service manager" in d.log() and d.port == port, d.log()[-1500:])
    check("a connection made before the daemon started is answered", read_status(early) == 200)
    st, h, body = d.req("POST", "/v1/bloom?format=pfm&kernel_preset=gaussian:sigma=2",
                        body=pfm_bytes(24, 32))
    check("a bloom over the passed socket answers 200 with an image", st == 200 and
          body.startswith(b"PF"), (st, body[:100]))
    try:
        socket.create_connection(("127.0.0.1", unused), timeout=2).close()
        bound = True
    except OSError:
        bound = False
    check("--port is not bound when a socket is passed", not bound)
    # requests over a passed socket can be answered before the warm-up ends, and READY=1 (with
    # its STATUS) comes after it: wait for it
    n.wait("READY", "1", timeout=30)
    check("READY=1 names the passed socket",
          any(v.startswith("ready on http://127.0.0.1:%d" % port) for _, v in
              n.assignments("STATUS")))
    rc = d.stop()
    check("exits 0 on SIGTERM", rc == 0, (rc, d.log()[-1500:]))
    n.close()
    # A restart: the socket stays open in its owner (systemd, here this test), so a connection
    # made while no daemon runs waits and is answered by the next one.
    waiting = raw_get(port)
    d = activated([ls], {}, name="activated-again")
    check("after a restart, the connection made in between is answered", read_status(waiting) == 200)
    rc = d.stop()
    check("exits 0", rc == 0, rc)
    ls.close()

    # IPv6 too, where the machine has a loopback address for it
    try:
        ls6 = listening_socket(socket.AF_INET6, "::1")
    except OSError:
        ls6 = None
        print("     no IPv6 loopback here: the IPv6 socket is not tried")
    if ls6:
        d = activated([ls6], {}, name="activated-v6")
        st, _, _ = d.req("GET", "/healthz", host="::1", port=ls6.getsockname()[1])
        check("an IPv6 socket is served too", st == 200 and "http://[::1]:" in d.log(),
              d.log()[-800:])
        check("exits 0", d.stop() == 0)
        ls6.close()

    # LISTEN_PID of another process: nothing is ours, the daemon binds --port itself
    ls = listening_socket()
    d = Daemon([DAEMON, "--port", "0"], env={"LISTEN_FDS": "1", "LISTEN_PID": "1"},
               pass_fds=(), name="other-pid")
    check("LISTEN_PID of another process: the daemon binds its own port",
          "service manager" not in d.log() and d.port != ls.getsockname()[1], d.log()[-800:])
    check("exits 0", d.stop() == 0)
    # two sockets: refused, one served only
    ls2 = listening_socket()
    d = activated([ls, ls2], {}, name="two", wait_listen=False)
    rc = d.p.wait(timeout=30)
    d.logf.close()
    check("two passed sockets: exit 2, saying why", rc == 2 and "2 sockets passed" in d.log(),
          (rc, d.log()[-500:]))
    r, w = os.pipe()
    d = activated([r], {}, name="pipe", wait_listen=False)
    rc = d.p.wait(timeout=30)
    d.logf.close()
    check("a passed descriptor that is no socket: exit 2", rc == 2 and "not a socket" in d.log(),
          (rc, d.log()[-500:]))
    os.close(r)
    os.close(w)
    ls.close()
    ls2.close()

    # systemd's own implementation of the passing side
    sa = shutil.which("systemd-socket-activate")
    if check("systemd-socket-activate is installed (package systemd)", sa is not None):
        port = free_port()
        n = Notify()
        p = Daemon([sa, "-l", "127.0.0.1:%d" % port, "--fdname=web", "-E",
                    "NOTIFY_SOCKET=" + n.addr(), DAEMON], wait_listen=False, name="sd-activate")
        deadline = time.time() + 10
        c = None
        while time.time() < deadline and c is None:
            try:
                c = raw_get(port)
            except OSError:
                time.sleep(0.05)
        status = read_status(c) if c else None
        check("systemd-socket-activate: the first connection starts fftbloomd, which answers it",
              status == 200, p.log()[-1500:])
        check("... and says READY=1", n.wait("READY", "1", timeout=30) is not None)
        rc = p.stop()
        check("... and exits 0 on SIGTERM", rc == 0, (rc, p.log()[-800:]))
        n.close()


def test_credentials():
    creds = os.path.join(TMP, "credentials")
    os.makedirs(creds)
    with open(os.path.join(creds, "api-key"), "w") as f:
        f.write("s3cret-from-credential\n")
    d = Daemon([DAEMON, "--port", "0"], env={"CREDENTIALS_DIRECTORY": creds}, name="creds")
    st0, _, _ = d.req("GET", "/v1/info")
    st1, _, _ = d.req("GET", "/v1/info", headers={"Authorization": "Bearer wrong"})
    st2, _, _ = d.req("GET", "/v1/info",
                      headers={"Authorization": "Bearer s3cret-from-credential"})
    st3, _, _ = d.req("GET", "/healthz")
    check("the credential api-key guards /v1/ (none 401, wrong 401, right 200; /healthz 200)",
          (st0, st1, st2, st3) == (401, 401, 200, 200), (st0, st1, st2, st3))
    check("the log names the credential", "credential" in d.log() and creds in d.log())
    check("exits 0", d.stop() == 0)
    other = os.path.join(TMP, "other-key")
    with open(other, "w") as f:
        f.write("from-the-flag")
    d = Daemon([DAEMON, "--port", "0", "--api-key-file", other],
               env={"CREDENTIALS_DIRECTORY": creds}, name="creds-flag")
    st1, _, _ = d.req("GET", "/v1/info", headers={"Authorization": "Bearer from-the-flag"})
    st2, _, _ = d.req("GET", "/v1/info",
                      headers={"Authorization": "Bearer s3cret-from-credential"})
    check("--api-key-file wins over the credential", (st1, st2) == (200, 401), (st1, st2))
    check("exits 0", d.stop() == 0)
    empty = os.path.join(TMP, "no-credentials")
    os.makedirs(empty)
    d = Daemon([DAEMON, "--port", "0"], env={"CREDENTIALS_DIRECTORY": empty}, name="creds-none")
    st, _, _ = d.req("GET", "/v1/info")
    check("a credentials folder without api-key: no key asked", st == 200, st)
    check("exits 0", d.stop() == 0)


def test_several_gpus():
    """--gpus 0,0: two workers under one supervisor, socket-activated; the supervisor alone
    speaks to the service manager (one READY=1, STOPPING=1), and keeps its start timeout ahead
    while the workers warm up (EXTEND_TIMEOUT_USEC=)."""
    ls = listening_socket()
    port = ls.getsockname()[1]
    n = Notify()
    d = activated([ls], {"NOTIFY_SOCKET": n.addr(), "WATCHDOG_USEC": "2000000"},
                  ["--gpus", "0,0", "--warm-sizes", "64x48,100x80,160x120,200x150",
                   "--program-cache", "none", "--driver-cache", "none"],
                  name="two-workers")
    t_ready = n.wait("READY", "1", 120)
    check("two workers: READY=1", t_ready is not None, d.log()[-1500:])
    t_start = min([t for t, _ in n.assignments("STATUS")] or [0])
    ext = [(t, v) for t, v in n.assignments("EXTEND_TIMEOUT_USEC") if t_ready and t <= t_ready]
    check("two workers: EXTEND_TIMEOUT_USEC= while they warm up, a --worker-timeout ahead "
          "(%d before READY=1, %.1f s after the first STATUS=)" % (len(ext), (t_ready or 0) - t_start),
          ext and int(ext[0][1]) >= 60 * 1000000 and
          (len(ext) > 1 or (t_ready or 0) - t_start < 2), ext[:3])
    sts = [d.req("GET", "/healthz")[0] for _ in range(8)]
    check("two workers serve the passed socket", d.port == port and sts == [200] * 8, sts)
    st_ready = [v for t, v in n.assignments("STATUS") if t_ready and t >= t_ready]
    check("two workers: STATUS= says where the service answers once ready (port %d)" % port,
          any(v.startswith("ready on ") and v.split(": ")[0].endswith(":%d" % port)
              for v in st_ready), n.assignments("STATUS")[:4])
    st, _, body = d.req("GET", "/readyz")
    gpus = json.loads(body).get("gpus", []) if st == 200 else []
    check("/readyz lists both workers", len(gpus) == 2 and all(g["ready"] for g in gpus), body)
    check("the supervisor feeds the watchdog", n.wait("WATCHDOG", "1", 5) is not None)
    rc = d.stop()
    check("two workers: exit 0 on SIGTERM", rc == 0, (rc, d.log()[-1500:]))
    check("one READY=1 and STOPPING=1: the workers never notify",
          len([v for _, v in n.assignments("READY")]) == 1 and
          n.wait("STOPPING", "1", 1) is not None, n.all()[:20])
    n.close()
    ls.close()


def test_one_gpu_process():
    """--compile-mode process (a GPU's default) on one GPU: the supervisor speaks for the
    worker pair (one READY=1; EXTEND_TIMEOUT_USEC= while the first worker builds before it
    serves; STATUS= names where it answers); STOPPING=1 on SIGTERM, exit 0."""
    n = Notify()
    # warm sizes, nothing cached: seconds of building before it serves on llvmpipe too
    d = Daemon([DAEMON, "--port", "0", "--compile-mode", "process", "--warm-sizes",
                "64x48,100x80,160x120,200x150", "--program-cache", "none", "--driver-cache",
                "none"],
               env={"NOTIFY_SOCKET": n.addr()}, name="one-gpu-process")
    t_ready = n.wait("READY", "1", 120)
    check("one GPU, process: READY=1", t_ready is not None, d.log()[-1500:])
    ext = [v for t, v in n.assignments("EXTEND_TIMEOUT_USEC") if t_ready and t <= t_ready]
    check("one GPU, process: EXTEND_TIMEOUT_USEC= before READY=1 (%d)" % len(ext),
          ext and int(ext[0]) >= 60 * 1000000, n.all()[:6])
    st, _, body = d.req("GET", "/readyz")
    gpus = json.loads(body).get("gpus", []) if st == 200 else []
    check("one GPU, process: /readyz lists its worker, a process of its own",
          len(gpus) == 1 and gpus[0]["ready"] and gpus[0]["pid"] != d.p.pid, body)
    ready_st = [v for t, v in n.assignments("STATUS") if t_ready and t >= t_ready]
    check("one GPU, process: STATUS= once ready names where it answers (%s)" % d.endpoint,
          any(v.startswith("ready on ") and (":%d:" % d.port) in v for v in ready_st),
          n.assignments("STATUS")[:4])
    rc = d.stop()
    check("one GPU, process: exit 0 on SIGTERM, STOPPING=1",
          rc == 0 and n.wait("STOPPING", "1", 1) is not None, (rc, d.log()[-1000:]))
    check("one GPU, process: one READY=1",
          len([v for _, v in n.assignments("READY")]) == 1, n.all()[:20])
    n.close()


def main():
    test_ready_status_watchdog_stopping()
    test_watchdog_follows_heartbeat()
    test_socket_activation()
    test_credentials()
    test_several_gpus()
    test_one_gpu_process()
    finish()


main()
