"""fftbloomd against hostile clients and faults (run by test_hostile.sh): one check per defect of
the reliability issue, each written to fail on the code before its fix. Queue, memory and
connection counters after every kind of failure; the named-kernel byte budget; the decoded-size
memory budget; half-closed clients; slowloris headers and bodies; signals; TLS versions; new
padded sizes per client and the program cache's bound; non-finite results; the deadline and
decode time; oversized chunked bodies; exclusive ports; log injection and JSON logs; strict
framing and multipart; the OpenAPI document against a real validator. Uses http_test.py's
daemon harness. Last line: "SCRIPT: N passed, N failed"."""
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import Daemon, check, err_of, multipart, png_bytes, jpg_bytes, rand8  # noqa: E402
from http_test import write_pfm, post_async, wait_queue, slow_job  # noqa: E402

import numpy as np  # noqa: E402

TMP = tempfile.mkdtemp(prefix="fftbloomd-hostile-")
SMALL_Q = "kernel_preset=gaussian:sigma=2"
# The tests of what the GPU engine does (its program cache and new padded sizes, non-finite
# results, the deadline of a GPU job, GPU entropy decoding, the budget of frames queued behind a
# busy GPU, sized for its planes) start their daemons on it; the others
# (HTTP framing, clients, budgets, signals, TLS, logs) on test_hostile.sh's engine, the CPU one
GPU = {"FFTBLOOM_ENGINE": "gpu"}


def raw(d, data, timeout=10, shut=False, read=True):
    """Sends bytes on a new connection; returns what came back until the server closed or the
    timeout ran out."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=timeout)
    try:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        if not read:
            return b""
        out = b""
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not b:
                break
            out += b
        return out
    finally:
        s.close()


def status_of(resp):
    m = re.match(rb"HTTP/1\.[01] (\d+)", resp)
    return int(m.group(1)) if m else None


def body_of(resp):
    return resp.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in resp else b""


def counters_zero(d, name):
    """Queue depth, jobs in flight and reserved memory back at 0 (waits a moment for the last
    answers to be counted out)."""
    end = time.time() + 10
    vals = None
    while time.time() < end:
        vals = (d.metric("fftbloom_queue_depth"), d.metric("fftbloom_jobs_in_flight"),
                d.metric("fftbloom_memory_reserved_bytes"))
        if vals == (0, 0, 0):
            break
        time.sleep(0.05)
    check("%s: queue depth, jobs in flight and reserved memory back at 0" % name,
          vals == (0, 0, 0), vals)


def png_declaring(w, h):
    """A small valid-looking PNG whose header declares w x h (its data is one deflated row
    repeated: a decompression bomb of the kind a client can send)."""
    def chunk(t, data):
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data))
    raw_rows = zlib.compress(b"\x00" + b"\x00" * w * 3, 9)  # a first row only: truncated data
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", raw_rows) + chunk(b"IEND", b""))


def hdr_bomb(w, h):
    """A Radiance HDR whose scanlines are old-style run-length records: one pixel, then runs of
    255 << 0, 8 and 16 repeats, a few dozen bytes a scanline for any width."""
    head = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %d +X %d\n" % (h, w)
    line = b"\x80\x80\x80\x81"
    left = w - 1
    while left > 0:
        for shift in (16, 8, 0):
            k = min(255, left >> shift)
            if k:
                line += bytes([1, 1, 1, k])
                left -= k << shift
                break
    return head + line * h


# ---- defect 1: queue counters under every kind of failure ----

def test_counters_and_sigterm():
    d = Daemon("--kernel-max-pixels", "4096")
    try:
        st, _, b = d.req("PUT", "/v1/kernels/k", body=b"\xff\xd8\xff")
        check("kernel PUT of 3 bytes of JPEG: 422", st == 422, (st, b[:200]))
        counters_zero(d, "after a kernel PUT that fails to decode")
        st, _, b = d.req("PUT", "/v1/kernels/big", body=png_bytes(rand8(100, 100)))
        check("kernel PUT above --kernel-max-pixels: 413", st == 413, (st, b[:200]))
        st, _, b = d.req("POST", "/v1/bloom", body=jpg_bytes(rand8())[:300])
        check("truncated JPEG bloom: 422", st == 422, (st, b[:200]))
        body, ctype = multipart([("image", png_bytes(rand8()), "image/png"),
                                 ("kernel", b"\x89PNG\r\n\x1a\nbroken", "image/png")])
        st, _, b = d.req("POST", "/v1/convolve", body=body, headers={"Content-Type": ctype})
        check("multipart with a broken kernel part: 422", st == 422, (st, b[:200]))
        zero = np.zeros((5, 5, 3), np.float32)
        zero[2, 2] = 1
        zero[2, 3] = -1
        kp = write_pfm(os.path.join(TMP, "zero-lum.pfm"), zero)
        st, _, b = d.req("PUT", "/v1/kernels/zl", body=open(kp, "rb").read())
        st, _, b = d.req("POST", "/v1/bloom?kernel=zl", body=png_bytes(rand8()))
        check("a kernel the GPU thread refuses (luminance sums to 0): 422", st == 422, (st, b[:200]))
        st, _, b = d.req("POST", "/v1/bloom?kernel=nosuch", body=png_bytes(rand8()))
        check("unknown named kernel: 400", st == 400, st)
        st, _, b = d.req("POST", "/v1/bloom", body=png_bytes(rand8()))
        check("a good bloom still works after the failures", st == 200, (st, b[:200]))
        st, _, b = d.req("PUT", "/v1/kernels/ok", body=png_bytes(rand8(20, 20)))
        check("a good kernel PUT still works", st == 201, (st, b[:200]))
        counters_zero(d, "after every kind of failure")
        st, _, b = d.req("GET", "/v1/info")
        q = json.loads(b)["queue"]
        check("/v1/info's queue at 0", q["queued"] == 0 and q["in_flight"] == 0, q)
        st, _, b = d.req("GET", "/readyz")
        check("/readyz ready", st == 200, (st, b))
        # kernel PUTs count against --queue-size: with a 1-place queue and a busy GPU, a PUT
        # waits in line like any job and a burst is refused
    finally:
        t0 = time.time()
        d.stop("counters daemon")
        check("SIGTERM exits promptly after the failures (%.1f s)" % (time.time() - t0),
              time.time() - t0 < 20)


def test_kernel_puts_count_in_queue():
    d = Daemon("--queue-size", "2")
    try:
        small = png_bytes(rand8())
        d.req("POST", "/v1/convolve?" + SMALL_Q, body=small)
        body, t = slow_job(d, 0.6)
        if t < 0.3:
            print("skip: no job slow enough")
            return
        res = {}
        ts = [post_async(d, "/v1/convolve?" + H.SLOW_Q, body, res, "slow")]
        check("slow job on the GPU", wait_queue(d, 0))
        for i in range(2):
            ts.append(post_async(d, "/v1/convolve?" + SMALL_Q, small, res, i))
        check("two jobs wait", wait_queue(d, 2))
        st, h, b = d.req("PUT", "/v1/kernels/q", body=png_bytes(rand8(8, 8)))
        check("a kernel PUT into a full queue: 503 queue_full with Retry-After",
              st == 503 and err_of(b)[1] == "queue_full" and "retry-after" in h, (st, b[:200]))
        for t_ in ts:
            t_.join()
        counters_zero(d, "after a full queue")
    finally:
        d.stop("queue-size daemon")


# ---- defect 2: named kernels' bytes ----

def test_kernel_memory():
    d = Daemon("--kernel-memory", "1M", "--kernel-max-pixels", "200000")
    try:
        k = (np.random.default_rng(1).random((200, 200, 3))).astype(np.float32)  # 480 KB as floats
        kb = open(write_pfm(os.path.join(TMP, "k200.pfm"), k), "rb").read()
        st1 = d.req("PUT", "/v1/kernels/a", body=kb)[0]
        st2 = d.req("PUT", "/v1/kernels/b", body=kb)[0]
        st, h, b = d.req("PUT", "/v1/kernels/c", body=kb)
        check("two 480 KB kernels fit 1 MiB; the third is 409 kernel_memory_full",
              (st1, st2, st, err_of(b)[1]) == (201, 201, 409, "kernel_memory_full"), (st1, st2, st, b))
        st, _, b = d.req("PUT", "/v1/kernels/a", body=kb)
        check("replacing a kernel counts its old bytes out: 200", st == 200, (st, b[:200]))
        big = (np.random.default_rng(2).random((300, 300, 3))).astype(np.float32)  # 1.08 MB
        st, _, b = d.req("PUT", "/v1/kernels/big",
                         body=open(write_pfm(os.path.join(TMP, "k300.pfm"), big), "rb").read())
        check("a kernel larger than the whole --kernel-memory: 413 (pixel limit or memory)",
              st == 413, (st, b[:200]))
        st, _, b = d.req("PUT", "/v1/kernels/bomb", body=png_declaring(7071, 7071))
        check("a small PNG declaring 7071x7071 as a kernel: 413 before decoding", st == 413 and
              "7071" in err_of(b)[2], (st, b[:300]))
        n = d.metric("fftbloom_named_kernel_bytes")
        check("named kernel bytes within --kernel-memory", n is not None and n <= 1 << 20, n)
        st, _, b = d.req("DELETE", "/v1/kernels/b")
        st, _, b = d.req("PUT", "/v1/kernels/c", body=kb)
        check("after a DELETE the third kernel fits", st == 201, (st, b[:200]))
    finally:
        d.stop("kernel-memory daemon")


# ---- defect 3: decoded bytes against --memory-budget ----

def test_memory_budget():
    d = Daemon("--memory-budget", "60M", "--codec-threads", "2")
    try:
        st, _, b = d.req("POST", "/v1/bloom", body=hdr_bomb(3000, 3000))
        check("an old-style RLE HDR bomb is refused from its header (422)", st == 422 and
              "pixels a byte" in err_of(b)[2], (st, b[:300]))
        big = png_bytes(np.full((1500, 1500, 3), 40, np.uint8))  # 2.25 Mpx: 72 MB reserved
        st, _, b = d.req("POST", "/v1/bloom", body=big)
        check("one image above the whole --memory-budget: 413", st == 413 and
              "memory-budget" in err_of(b)[2], (st, b[:300]))
        counters_zero(d, "after a refused image")
    finally:
        d.stop("memory daemon")
    d = Daemon("--memory-budget", "40M", "--codec-threads", "2", env=GPU)  # its sizes: planes
    try:
        small = png_bytes(rand8())
        d.req("POST", "/v1/convolve?" + SMALL_Q, body=small)
        body, t = slow_job(d, 0.6)  # a JPEG of 384x384 to 1280x1280: 1.2 to 13 MB (planes)
        if t < 0.3:
            print("skip: no job slow enough")
            return
        res = {}
        ts = [post_async(d, "/v1/convolve?" + H.SLOW_Q, body, res, "slow")]
        check("slow job on the GPU", wait_queue(d, 0))
        # images sized so that two or three fit beside what the slow job holds (its size
        # follows the machine's speed): a decoded image reserves 32 bytes a pixel
        free = (40 << 20) - (d.metric("fftbloom_memory_reserved_bytes") or 0)
        side = int(min(1000, (free / 2.5 / 32) ** 0.5))
        if side < 32:
            for t_ in ts:
                t_.join()
            print("skip: the slow job holds the budget (%d bytes left)" % free)
            return
        mid = png_bytes(np.full((side, side, 3), 40, np.uint8))
        for i in range(6):
            ts.append(post_async(d, "/v1/convolve?" + SMALL_Q, mid, res, i))
        for t_ in ts:
            t_.join()
        sts = sorted(res[i][0] for i in range(6))
        busy = [res[i] for i in range(6) if res[i][0] == 503]
        check("six %dx%d images (%.1f MB each) behind a busy GPU with %.1f of 40 MB free: some "
              "503 memory_budget, the others 200" % (side, side, side * side * 32 / 2**20,
                                                    free / 2**20),
              busy and all(s in (200, 503) for s in sts) and 200 in sts, sts)
        check("the 503s say memory_budget and carry Retry-After", busy and all(
            err_of(x[2])[1] == "memory_budget" and "retry-after" in x[1] for x in busy),
            [(x[0], x[2][:120]) for x in busy[:2]])
        counters_zero(d, "after the memory budget refused jobs")
    finally:
        d.stop("memory budget daemon")


# ---- defect 4: a half-closed client gets its answer ----

def test_half_close():
    d = Daemon()
    try:
        small = png_bytes(rand8())
        d.req("POST", "/v1/convolve?" + SMALL_Q, body=small)
        body, t = slow_job(d, 0.4)
        res = {}
        ts = post_async(d, "/v1/convolve?" + H.SLOW_Q, body, res, "slow")
        check("slow job on the GPU", wait_queue(d, 0))
        out = raw(d, b"POST /v1/convolve?" + SMALL_Q.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(small) + small,
                  timeout=60, shut=True)
        ts.join()
        check("a client that half-closes after its request still gets its answer (queued "
              "behind a busy GPU)", status_of(out) == 200 and body_of(out)[:4] == b"\x89PNG",
              out[:200])
    finally:
        d.stop("half-close daemon")


# ---- defect 5: slowloris headers and bodies ----

def test_slowloris():
    d = Daemon("--header-timeout", "1", "--min-body-rate", "64k", "--max-per-ip", "0")
    try:
        socks = []
        for i in range(20):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
            s.sendall(b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        t0 = time.time()
        closed = 0
        while time.time() - t0 < 4 and closed < len(socks):
            closed = 0
            for s in socks:
                try:
                    s.sendall(b"X-a: b\r\n")  # one header line every 0.2 s: never idle
                except OSError:
                    closed += 1
            time.sleep(0.2)
        check("20 connections trickling headers are closed after --header-timeout (%.1f s)"
              % (time.time() - t0), closed == len(socks) and time.time() - t0 < 3.5, closed)
        for s in socks:
            s.close()
        # a body that trickles
        s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        s.sendall(b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
        t0 = time.time()
        cut = False
        while time.time() - t0 < 5:
            try:
                s.sendall(b"x" * 1000)
            except OSError:
                cut = True
                break
            time.sleep(0.1)
        s.close()
        check("a body sent at 10 KB/s under a 64 KB/s floor is cut after the grace (%.1f s)"
              % (time.time() - t0), cut and time.time() - t0 < 3, time.time() - t0)
        n = d.metric("fftbloom_connections_cut_total")
        check("cut connections counted in /metrics", n is not None and n >= 21, n)
        st, _, b = d.req("POST", "/v1/bloom", body=png_bytes(rand8()))
        check("a normal client is served meanwhile", st == 200, st)
    finally:
        d.stop("slowloris daemon")


# ---- defect 6: signals ----

def test_signals():
    kdir = os.path.join(TMP, "kdir")
    os.makedirs(kdir, exist_ok=True)
    open(os.path.join(kdir, "one.png"), "wb").write(png_bytes(rand8(9, 9)))
    d = Daemon("--kernel-dir", kdir)
    try:
        for sig in (signal.SIGUSR1, signal.SIGUSR2):
            d.p.send_signal(sig)
            time.sleep(0.3)
            check("%s leaves the daemon serving" % sig.name, d.p.poll() is None and
                  d.req("GET", "/healthz")[0] == 200)
        check("SIGUSR1 logs the state", "state: ready" in d.log(), d.log()[-500:])
        open(os.path.join(kdir, "two.png"), "wb").write(png_bytes(rand8(7, 7)))
        os.remove(os.path.join(kdir, "one.png"))
        d.p.send_signal(signal.SIGHUP)
        names = []
        end = time.time() + 5
        while time.time() < end:
            names = [k["name"] for k in json.loads(d.req("GET", "/v1/kernels")[2])["kernels"]]
            if names == ["two"]:
                break
            time.sleep(0.1)
        check("SIGHUP reloads --kernel-dir: a new file registered, a removed one gone",
              names == ["two"] and d.p.poll() is None, names)
        # an upload newer than its file stays over a reload (issue 35, item 10)
        st, _, _ = d.req("PUT", "/v1/kernels/two", body=png_bytes(rand8(5, 5)))
        past = time.time() - 60
        os.utime(os.path.join(kdir, "two.png"), (past, past))
        d.p.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        st2, _, b = d.req("GET", "/v1/kernels/two")
        check("SIGHUP keeps a kernel uploaded after its file was written", st in (200, 201) and
              st2 == 200 and json.loads(b)["width"] == 5, (st, st2, b[:200]))
        os.utime(os.path.join(kdir, "two.png"), (past + 120, past + 120))
        d.p.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        st2, _, b = d.req("GET", "/v1/kernels/two")
        check("and a file written after the upload replaces it", st2 == 200 and
              json.loads(b)["width"] == 7, (st2, b[:200]))
        open(os.path.join(kdir, "bad.png"), "wb").write(b"\x89PNG\r\n\x1a\nnot really")
        d.p.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        names = [k["name"] for k in json.loads(d.req("GET", "/v1/kernels")[2])["kernels"]]
        check("a SIGHUP with a broken file keeps the kernels as they were", names == ["two"]
              and "kernels kept as they were" in d.log(), names)
        # SIGQUIT drains like SIGTERM: a job in flight is answered
        small = png_bytes(rand8())
        d.req("POST", "/v1/convolve?" + SMALL_Q, body=small)
        body, t = slow_job(d, 0.3)
        res = {}
        th = post_async(d, "/v1/convolve?" + H.SLOW_Q, body, res, "slow")
        wait_queue(d, 0)
        d.p.send_signal(signal.SIGQUIT)
        th.join()
        rc = d.p.wait(timeout=30)
        check("SIGQUIT drains: the job in flight is answered and the daemon exits 0",
              res["slow"][0] == 200 and rc == 0, (res["slow"][0], rc))
    finally:
        d.stop("signals daemon")


# ---- defect 7: TLS versions ----

def test_tls_versions():
    if not shutil.which("openssl"):
        check("openssl for the TLS test", False)
        return
    cert, key = os.path.join(TMP, "c.pem"), os.path.join(TMP, "k.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], capture_output=True)
    d = Daemon("--tls-cert", cert, "--tls-key", key, tls=True)
    try:
        def handshake(flag):
            r = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % d.port, flag],
                               input=b"", capture_output=True, timeout=20)
            return r.returncode == 0 and b"Cipher is (NONE)" not in r.stdout
        for flag in ("-tls1", "-tls1_1"):
            check("TLS handshake with %s refused" % flag, not handshake(flag))
        for flag in ("-tls1_2", "-tls1_3"):
            check("TLS handshake with %s accepted" % flag, handshake(flag))
    finally:
        d.stop("TLS versions daemon")


# ---- defect 8: new padded sizes per client; the program cache's bound ----

def test_new_sizes_and_programs():
    d = Daemon("--new-sizes-per-minute", "3", "--max-programs", "40", env=GPU)
    try:
        sts = []
        for w in (40, 70, 100, 130, 170, 220, 280, 350, 430, 520):  # ten padded widths
            st, h, b = d.req("POST", "/v1/convolve?format=png&method=fft&" + SMALL_Q,
                             body=png_bytes(rand8(20, w)))
            sts.append((st, err_of(b)[1] if st != 200 else "", h.get("retry-after")))
        ok = [s for s in sts if s[0] == 200]
        refused = [s for s in sts if s[0] == 429]
        check("a client sending 10 new sizes at once: 3 served, the rest 429 too_many_new_sizes "
              "with Retry-After", len(ok) == 3 and len(refused) == 7 and all(
                  r[1] == "too_many_new_sizes" and r[2] and int(r[2]) > 0 for r in refused), sts)
        st, _, b = d.req("POST", "/v1/convolve?format=png&method=fft&" + SMALL_Q,
                         body=png_bytes(rand8(20, 40)))
        check("a size seen before is still served", st == 200, (st, b[:200]))
        g = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["programs"]
        check("programs held within --max-programs", g["count"] <= 40, g)
    finally:
        d.stop("new-sizes daemon")
    # each new size compiled on its request's path, or (borrowing a plan meanwhile) in idle time
    for borrow in ("false", "true"):
        d = Daemon("--new-sizes-per-minute", "0", "--max-programs", "16",
                   "--borrow-plans=" + borrow, env=GPU)
        try:
            counts = []
            for w in (40, 70, 100, 130, 170, 220):
                st, h, b = d.req("POST", "/v1/convolve?format=png&method=fft&" + SMALL_Q,
                                 body=png_bytes(rand8(20, w)))
                deadline = time.time() + 60
                while True:  # until idle time has built what the frame borrowed for
                    g = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]
                    if g["caches"]["plans_wanted"] == 0 or time.time() > deadline:
                        break
                    time.sleep(0.2)
                counts.append((st, g["programs"]["count"], g["programs"]["evictions"],
                               h.get("x-borrowed-plan")))
            check("with the limit off every size is served and programs stay within "
                  "--max-programs (evicting), --borrow-plans=%s" % borrow,
                  all(c[0] == 200 for c in counts) and max(c[1] for c in counts) <= 16
                  and counts[-1][2] > 0 and (borrow == "true") == any(c[3] for c in counts),
                  counts)
        finally:
            d.stop("program-bound daemon, --borrow-plans=%s" % borrow)


# ---- defect 9: non-finite results ----

def test_overflow():
    d = Daemon(env=GPU)
    try:
        img = np.full((16, 16, 3), 3e38, np.float32)
        k = np.full((3, 3, 3), 10.0, np.float32)
        ip = write_pfm(os.path.join(TMP, "huge.pfm"), img)
        kp = write_pfm(os.path.join(TMP, "ten.pfm"), k)
        body, ctype = multipart([("image", open(ip, "rb").read(), "image/x-portable-floatmap"),
                                 ("kernel", open(kp, "rb").read(), "image/x-portable-floatmap")])
        st, h, b = d.req("POST", "/v1/convolve?format=pfm", body=body, headers={"Content-Type": ctype})
        check("a convolution that overflows float32: 422 result_not_finite, not a 200 of NaN",
              st == 422 and err_of(b)[1] == "result_not_finite", (st, b[:200]))
        st, h, b = d.req("POST", "/v1/convolve?format=jpeg", body=body, headers={"Content-Type": ctype})
        check("... also when the answer is a JPEG (planes)", st == 422, (st, b[:200]))
        counters_zero(d, "after an overflow")
    finally:
        d.stop("overflow daemon")


# ---- defect 10: the deadline counts waiting, not decoding ----

def test_deadline_excludes_decode():
    rng = np.random.default_rng(5)
    # noise: slow to decode, 45-150 ms for 2000x2000 on the machines seen, so the deadline is
    # well under the decode and well over the waiting of a lone job
    big = png_bytes((rng.random((2000, 2000, 3)) * 255).astype(np.uint8))
    d = Daemon("--deadline", "0.025", "--codec-threads", "1", env=GPU)
    try:
        st, h, b = d.req("POST", "/v1/convolve?format=jpeg&" + SMALL_Q, body=big, timeout=120)
        dec = H.timings(h).get("decode", 0)
        check("a job whose decode (%.0f ms) outlasts a 25 ms deadline but waits less is served"
              % dec, st == 200 and dec > 25, (st, dec, b[:200]))
    finally:
        d.stop("deadline daemon")


# ---- defect 11: oversized chunked uploads ----

def test_chunked_oversize():
    d = Daemon("--max-body", "20M")
    try:
        s = socket.create_connection(("127.0.0.1", d.port), timeout=60)
        s.sendall(b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * (1 << 20)
        sent = 0
        try:
            for i in range(22):
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += len(chunk)
            s.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        out = b""
        while True:
            try:
                x = s.recv(65536)
            except OSError:
                break
            if not x:
                break
            out += x
        s.close()
        check("a 22 MB chunked body over --max-body 20M: 413 body_too_large",
              status_of(out) == 413 and b"body_too_large" in out, out[:300])
    finally:
        d.stop("chunked daemon")


# ---- defect 12: one daemon per port unless asked ----

def test_exclusive_port():
    d = Daemon()
    try:
        p = subprocess.run([H.DAEMON, "--listen", "127.0.0.1", "--port", str(d.port)],
                           capture_output=True, text=True, timeout=60)
        check("a second daemon on the same port fails to start: 'port N in use'",
              p.returncode != 0 and "port %d in use" % d.port in p.stderr,
              (p.returncode, p.stderr[-300:]))
    finally:
        d.stop("port daemon")
    a = Daemon("--reuse-port")
    try:
        b = subprocess.Popen([H.DAEMON, "--listen", "127.0.0.1", "--port", str(a.port),
                              "--reuse-port"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(3)
        check("with --reuse-port two daemons share the port", b.poll() is None)
        b.send_signal(signal.SIGTERM)
        b.wait(timeout=30)
    finally:
        a.stop("reuse-port daemon")


# ---- defect 13: logs ----

def test_logs():
    d = Daemon()
    try:
        raw(d, b"GET /v1/kernels/a%0d%0aforged=1%1b[31m HTTP/1.1\r\nHost: x\r\n\r\n")
        raw(d, b"GET /nope\x1b[2J HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)
    finally:
        log = d.stop("text-log daemon")
    lines = log.splitlines()
    check("text log: no CR or ESC from a client reaches the log", "\r" not in log and
          "\x1b" not in log, [l for l in lines if "\x1b" in l or "\r" in l][:2])
    check("text log: no forged line", not any(l.startswith("forged") for l in lines))
    d = Daemon("--log-format", "json")
    try:
        d.req("GET", "/healthz")
        d.req("POST", "/v1/bloom", body=png_bytes(rand8()))
        raw(d, b"GARBAGE\r\n\r\n")  # libmicrohttpd logs this one itself
        raw(d, b"GET /x%c3%28\x80 HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)
    finally:
        log = d.stop("json-log daemon")
    bad, reqs = [], []
    for l in log.splitlines():
        if not l.startswith("{"):
            if l.strip() and "leak" not in l.lower():
                bad.append(l)
            continue
        try:
            o = json.loads(l)
        except ValueError:
            bad.append(l)
            continue
        if o.get("msg") == "request":
            reqs.append(o)
    check("JSON log: every line is a JSON object (libmicrohttpd's too)", not bad, bad[:3])
    check("JSON log: status, bytes and times are numbers", reqs and all(
        isinstance(o["status"], int) and isinstance(o["ms"], (int, float)) and
        isinstance(o["out_bytes"], int) for o in reqs), reqs[:1])


# ---- defect 14: strict framing and multipart ----

def test_strict_parsing():
    d = Daemon()
    try:
        def case(name, data, want):
            out = raw(d, data)
            check("%s: %s" % (name, want), status_of(out) == want, out[:200])
        img = png_bytes(rand8())
        case("two different Content-Length", b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % len(img) + img, 400)
        case("Content-Length and Transfer-Encoding", b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)
        case("Transfer-Encoding: gzip", b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\n"
             b"Transfer-Encoding: gzip\r\n\r\nabc", 501)
        case("HTTP/1.1 without Host", b"GET /healthz HTTP/1.1\r\n\r\n", 400)
        for n in (b"10000000000000000000", b"18446744073709551615"):  # 20 digits, below 2^64
            out = raw(d, b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nContent-Length: " + n + b"\r\n\r\n")
            check("Content-Length %s: 413 body_too_large, a number past --max-body" % n.decode(),
                  status_of(out) == 413 and b"body_too_large" in out, out[:300])
        case("a kernel named abc%00", b"PUT /v1/kernels/abc%%00 HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: %d\r\n\r\n" % len(img) + img, 400)
        check("abc was not registered", d.req("GET", "/v1/kernels/abc")[0] == 404)
        b = b"XyZ"

        def mp(parts_raw):
            body = b"".join(b"--" + b + b"\r\n" + p for p in parts_raw) + b"--" + b + b"--\r\n"
            return d.req("POST", "/v1/bloom", body=body,
                         headers={"Content-Type": "multipart/form-data; boundary=XyZ"})
        part = b'Content-Disposition: form-data; name="image"\r\n\r\n' + img + b"\r\n"
        st, _, r = mp([part, part])
        check("multipart: the image part twice: 400 naming it", st == 400 and
              "twice" in err_of(r)[2], (st, r[:200]))
        st, _, r = mp([b'Content-Disposition: form-data; name="image\r\n\r\n' + img + b"\r\n"])
        check("multipart: an unclosed quote in name=: 400", st == 400, (st, r[:200]))
        st, _, r = mp([b'Content-Disposition: form-data; name="ima\x00ge"\r\n\r\n' + img + b"\r\n"])
        check("multipart: NUL in a name: 400", st == 400, (st, r[:200]))
        st, _, r = mp([b"X-Pad: " + b"a" * 9000 + b'\r\nContent-Disposition: form-data; '
                       b'name="image"\r\n\r\n' + img + b"\r\n"])
        check("multipart: part headers over 8 KiB: 400", st == 400, (st, r[:200]))
    finally:
        d.stop("strict daemon")


# ---- defect 15: the OpenAPI document ----

def test_openapi():
    d = Daemon("--api-key-file", write_key())
    try:
        st, _, body = d.req("GET", "/openapi.json")
        doc = json.loads(body)
    finally:
        d.stop("openapi daemon")
    path = os.path.join(TMP, "openapi.json")
    open(path, "w").write(json.dumps(doc))
    validator = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "js", "validate_openapi.mjs")
    r = subprocess.run(["node", validator, path], capture_output=True, text=True, timeout=120)
    check("/openapi.json validates as OpenAPI 3 (@seriousme/openapi-schema-validator)",
          r.returncode == 0, (r.stdout + r.stderr)[-1500:])
    types = {"integer": int, "number": (int, float), "string": str, "boolean": bool}
    wrong = []

    def walk(o, where):
        if isinstance(o, dict):
            if "default" in o and "type" in o and o["type"] in types:
                t = types[o["type"]]
                v = o["default"]
                if not isinstance(v, t) or (o["type"] in ("integer", "number") and isinstance(v, bool)):
                    wrong.append((where, o["type"], v))
                if "enum" in o and v not in o["enum"]:
                    wrong.append((where, "enum", v))
                for lo, op in (("minimum", lambda a, b: a >= b), ("maximum", lambda a, b: a <= b)):
                    if lo in o and isinstance(v, (int, float)) and not op(v, o[lo]):
                        wrong.append((where, lo, v))
            for k, v in o.items():
                walk(v, where + "/" + k)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, where + "/%d" % i)
    walk(doc, "")
    check("every default matches its schema's type, enum and bounds", not wrong, wrong[:5])
    sec = doc.get("components", {}).get("securitySchemes", {}).get("bearer", {})
    check("a bearer security scheme, required on /v1/ operations", sec.get("scheme") == "bearer"
          and doc["paths"]["/v1/bloom"]["post"].get("security") == [{"bearer": []}] and
          "security" not in doc["paths"]["/healthz"]["get"], sec)


# ---- the reliability issue (35): a leak, bodies in the budget, the connection rules, answers
# that echo bytes, header names ----

def test_dropped_request_lines():
    """A request line libmicrohttpd drops unanswered (thousands of '&') ends with its
    connection: nothing stays counted open or allocated, and SIGTERM does not wait."""
    d = Daemon()
    try:
        for _ in range(300):
            raw(d, b"GET /healthz?" + b"&" * 2000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
        end = time.time() + 5
        n = None
        while time.time() < end:
            n = d.metric("fftbloom_requests_open")
            if n == 1:  # the /metrics request itself
                break
            time.sleep(0.05)
        check("300 dropped request lines: none left open", n == 1, n)
        check("the dropped requests are logged", d.log().count("status=400") >= 300 or
              d.log().count('"status":400') >= 300, d.log()[-500:])
        t = time.time()
        d.p.send_signal(signal.SIGTERM)
        d.p.wait(timeout=30)
        check("SIGTERM after them ends at once (no drain wait)", time.time() - t < 5,
              time.time() - t)
    finally:
        d.stop("dropped-lines daemon")


def test_bodies_in_budget():
    """Bodies hold --memory-budget as they arrive: 16 connections announcing 3 MiB bodies and
    sending all but the last byte under a 8 MiB budget hold at most the budget, and those that
    cannot fit are answered 503 memory_budget before their bodies are read; one larger than the
    whole budget is 413. A body announced but not sent holds only its first MiB of buffer, so
    silent announcers cannot spend the budget; a route that takes no body refuses one. The budget
    is free again once they close."""
    d = Daemon("--memory-budget", "8M", "--max-body", "16M", "--header-timeout", "30",
               "--min-body-rate", "0")
    socks, refused = [], 0
    try:
        n = 3 << 20
        for _ in range(16):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
            s.sendall(b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\n"
                      b"Content-Length: %d\r\n\r\n" % n)
            s.setblocking(False)
            try:
                s.sendall(b"\0" * (n - 1))
            except (BlockingIOError, ConnectionResetError, BrokenPipeError):
                pass
            s.setblocking(True)
            socks.append(s)
            time.sleep(0.3)  # its bytes read (and held) before the next one asks
        held = d.metric("fftbloom_memory_reserved_bytes")
        check("16 slow 3 MiB bodies: reserved memory within the 8 MiB budget",
              held is not None and 0 < held <= 8 << 20, held)
        for s in socks:
            s.settimeout(0.5)
            try:
                out = s.recv(4096)
            except (socket.timeout, ConnectionResetError):
                out = b""
            if status_of(out) == 503 and b"memory_budget" in out:
                refused += 1
        check("the bodies past the budget: 503 memory_budget before they are read",
              refused >= 14, refused)
        out = raw(d, b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                  % (12 << 20), timeout=5)
        check("a body larger than the whole budget: 413", status_of(out) == 413, out[:200])
    finally:
        for s in socks:
            s.close()
    counters_zero(d, "after the slow bodies closed")
    silent = []
    try:
        for _ in range(6):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
            s.sendall(b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                      % (4 << 20))
            silent.append(s)
        time.sleep(0.3)
        held = d.metric("fftbloom_memory_reserved_bytes")
        check("6 announced 4 MiB bodies not sent hold 1 MiB of buffer each, not 24 MiB",
              held is not None and held <= 6 << 20, held)
        st, _, b = d.req("POST", "/v1/bloom?" + SMALL_Q, body=png_bytes(rand8()))
        check("a real request beside them is served", st == 200, (st, b[:200]))
        out = raw(d, b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                  % (4 << 20), timeout=5)
        check("GET /healthz with a body: 400, nothing held", status_of(out) == 400 and
              b"takes no body" in out, out[:300])
    finally:
        for s in silent:
            s.close()
    counters_zero(d, "after the silent announcers closed")
    d.stop("bodies-in-budget daemon")


def test_idle_connections_make_room():
    """4 addresses x 64 idle keep-alive connections fill --max-connections 256 (64 a client:
    --max-per-ip); a fifth address is still served, an idle connection closed for it; idle
    connections end after --idle-timeout."""
    d = Daemon("--idle-timeout", "60", "--max-per-ip", "64", "--max-connections", "256")
    held = []

    def connect_from(src):
        s = socket.socket()
        s.bind((src, 0))
        s.settimeout(10)
        s.connect(("127.0.0.1", d.port))
        return s

    def get(src):
        s = connect_from(src)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        out = b""
        while not (b"\r\n\r\n" in out and out.rstrip().endswith(b"}")):
            b = s.recv(4096)
            if not b:
                break
            out += b
        return s, status_of(out)
    try:
        codes = []
        for a in range(2, 6):
            for _ in range(64):
                s, st = get("127.0.0.%d" % a)
                held.append(s)
                codes.append(st)
        check("4 addresses x 64 keep-alive connections served", codes.count(200) == 256,
              codes.count(200))
        s, st = get("127.0.0.6")
        s.close()
        check("a fifth address at the connection limit: served", st == 200, st)
        check("an idle connection was closed to admit it",
              d.metric('fftbloom_connections_cut_total{reason="evicted"}') >= 1,
              d.metric("fftbloom_connections_cut_total"))
    finally:
        for s in held:
            s.close()
        d.stop("idle-connections daemon")
    # slow uploads: 4 addresses x 64 chunked bodies in progress fill the server; a fifth address
    # is served all the same, the slowest body of an address past its share (an eighth) closed
    d = Daemon("--max-per-ip", "64", "--max-connections", "256", "--header-timeout", "30")
    bodies = []
    try:
        for a in range(2, 6):
            for _ in range(64):
                s = connect_from("127.0.0.%d" % a)
                s.sendall(b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked"
                          b"\r\n\r\n400\r\n" + b"\0" * 1024 + b"\r\n")
                bodies.append(s)
        time.sleep(0.5)
        s, st = get("127.0.0.6")
        s.close()
        check("4 addresses x 64 slow bodies: a fifth address is served", st == 200, st)
        check("a body of an address past its share was closed for it",
              d.metric('fftbloom_connections_cut_total{reason="evicted"}') >= 1,
              d.metric("fftbloom_connections_cut_total"))
    finally:
        for s in bodies:
            s.close()
        d.stop("slow-bodies daemon")
    d = Daemon("--idle-timeout", "0.5")
    try:
        s, st = get("127.0.0.1")
        time.sleep(1.5)
        s.settimeout(2)
        try:
            gone = s.recv(10) == b""
        except (socket.timeout, ConnectionResetError):
            gone = False
        s.close()
        check("--idle-timeout 0.5: an idle keep-alive connection is closed", gone)
        check("counted as idle", d.metric('fftbloom_connections_cut_total{reason="idle"}') >= 1)
    finally:
        d.stop("idle-timeout daemon")


def test_answers_echoing_bytes():
    """Error messages that quote bytes that are not UTF-8 are still answered as JSON."""
    def post(body, ctype):
        return (b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: %s\r\n"
                b"Content-Length: %d\r\n\r\n" % (ctype, len(body)) + body)
    d = Daemon()
    try:
        for name, data in (
                ("GET /%ff", b"GET /%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
                ("threshold=%ff", b"GET /v1/bloom/x?threshold=%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
                ("Accept with \\xff", b"GET /v1/bloom/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                 b"Accept: image/\xff\r\n\r\n"),
                ("a multipart name with \\xff", post(
                    b"--XyZ\r\nContent-Disposition: form-data; name=\"a\xffb\"\r\n\r\nx\r\n"
                    b"--XyZ--\r\n", b"multipart/form-data; boundary=XyZ")),
                ("a PFM scale with \\xff", post(b"Pf\n1 1\n-1.\xff\n" + b"\0" * 4,
                                                 b"image/x-portable-floatmap"))):
            out = raw(d, data, timeout=5)
            st = status_of(out)
            ok = st is not None and 400 <= st < 500
            if ok:
                try:
                    json.loads(body_of(out))
                except ValueError:
                    ok = False
            check("%s: a 4xx JSON answer" % name, ok, out[:300])
    finally:
        d.stop("echo daemon")


def test_header_name_whitespace():
    """'Content-Length : N' and 'Transfer-Encoding : chunked' (space before the colon), a control
    byte in a value (a bare CR a proxy may end a line at) and Host twice are 400, never
    taken as other headers with the body answered as a second request."""
    d = Daemon()
    try:
        for name, data in (
                ("Content-Length : 39", b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nContent-Length : 39"
                 b"\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
                ("Transfer-Encoding : chunked", b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\n"
                 b"Transfer-Encoding : chunked\r\n\r\n27\r\nGET /healthz HTTP/1.1\r\nHost: x"
                 b"\r\n\r\n\r\n0\r\n\r\n"),
                ("a bare CR in a value", b"POST /v1/bloom HTTP/1.1\r\nHost: x\r\nX: a\rContent-"
                 b"Length: 39\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
                ("Host twice", b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")):
            out = raw(d, data, timeout=5)
            check("%s: 400 and one answer" % name, status_of(out) == 400 and
                  out.count(b"HTTP/1.1 ") == 1, out[:300])
    finally:
        d.stop("header-name daemon")


def test_put_answer_races():
    """A PUT /v1/images answers with its own image: a DELETE or another PUT of the name at the
    same moment changes neither its status (never 500) nor its description (its own digest)."""
    import hashlib
    import threading
    d = Daemon()
    bad, n_ok, stop = [], [0], [False]
    imgs = [png_bytes(rand8(16 + i, 16)) for i in range(2)]

    def putter(img):
        want = hashlib.sha256(img).hexdigest()
        while not stop[0]:
            st, _, b = d.req("PUT", "/v1/images/race", body=img)
            if st in (200, 201):
                n_ok[0] += 1
                if json.loads(b).get("digest") != want:
                    bad.append(("another image described", b[:200]))
            else:
                bad.append((st, b[:200]))

    def deleter():
        while not stop[0]:
            d.req("DELETE", "/v1/images/race")
    try:
        ts = [threading.Thread(target=putter, args=(i,)) for i in imgs] + \
             [threading.Thread(target=deleter)]
        for t in ts:
            t.start()
        time.sleep(4)
        stop[0] = True
        for t in ts:
            t.join()
        check("PUTs racing a PUT and a DELETE of the name: each 200/201 with its own digest",
              not bad and n_ok[0] > 10, (n_ok[0], bad[:3]))
    finally:
        d.stop("put-race daemon")


def test_info_paths_and_vary():
    """Without an API key /v1/info is public: no file or folder paths in it (they show as <set>
    or <path>); with a key its holders see them. With CORS on, an answer to a request from an
    origin that is not allowed still says Vary: Origin."""
    imgdir = tempfile.mkdtemp(prefix="fftbloom-info-", dir=TMP)
    d = Daemon("--image-dir", imgdir, "--cors-origins", "https://ok.example")
    try:
        st, h, body = d.req("GET", "/v1/info", headers={"Origin": "https://evil.example"})
        text = body.decode()
        check("/v1/info without a key: no --image-dir path, shown as <set>", st == 200 and
              imgdir not in text and json.loads(body)["configuration"]["image-dir"] == "<set>",
              text[:300])
        check("no absolute path anywhere in it", not re.search(r'"/[a-z]', text),
              re.findall(r'"/[^"]*"', text)[:5])
        check("an origin not allowed: Vary: Origin all the same, no Allow-Origin",
              "Origin" in h.get("vary", "") and "access-control-allow-origin" not in h, h)
        st, h, _ = d.req("GET", "/healthz", headers={"Origin": "https://ok.example"})
        check("an allowed origin: Vary: Origin and Allow-Origin", "Origin" in h.get("vary", "")
              and h.get("access-control-allow-origin") == "https://ok.example", h)
    finally:
        d.stop("info daemon")
    d = Daemon("--image-dir", imgdir, "--api-key-file", write_key())
    try:
        st, _, body = d.req("GET", "/v1/info", headers={"Authorization": "Bearer s3cret-key"})
        check("/v1/info to the key holder: the --image-dir path", st == 200 and
              json.loads(body)["configuration"]["image-dir"] == imgdir, body[:300])
    finally:
        d.stop("info daemon with a key")


# ---- the GPU's entropy decoding: corrupt scans get libjpeg's answer ----

def test_corrupt_jpeg_scans():
    # --jpeg-gpu-entropy-decode against a daemon without it (the default: libjpeg's entropy
    # decoding): corrupt baseline scans (bits flipped, bytes garbled into invalid codes, a
    # restart marker dropped or out of order, garbage after the scan, a scan cut and closed
    # with EOI, a Huffman table whose counts overflow, a frame declaring more blocks than its
    # scan holds) get the same status and, where 200, the same image; none hangs, and the
    # counters go back to zero.
    rng = np.random.default_rng(7)
    img = H.waves(64, 80, 30, 30)
    plain = H.cjpeg_bytes(img, "-quality", "85", "-sample", "2x2")
    rst = H.cjpeg_bytes(img, "-quality", "90", "-sample", "1x1", "-restart", "2B")
    sos = plain.index(b"\xff\xda")
    cases = []
    for t in range(6):
        b = bytearray(plain)
        for _ in range(1 + t):
            i = int(rng.integers(sos + 20, len(b) - 2))
            if b[i] != 0xFF and b[i - 1] != 0xFF:
                b[i] ^= 1 << int(rng.integers(0, 8))
        cases.append(("bits flipped %d" % t, bytes(b)))
    b = bytearray(plain)
    b[sos + 60: sos + 68] = b"\x7f\xfe\x7f\xfe\x7f\xfe\x7f\xfe"
    cases.append(("bytes garbled", bytes(b)))
    m = rst.index(b"\xff\xd1")
    cases.append(("a restart marker dropped", rst[:m] + rst[m + 2:]))
    cases.append(("restart markers out of order", rst[:m] + b"\xff\xd5" + rst[m + 2:]))
    cases.append(("garbage after the scan", plain[:-2] + bytes(rng.integers(0, 255, 40, np.uint8))
                  + b"\xff\xd9"))
    cases.append(("cut and closed", plain[: len(plain) // 2] + b"\xff\xd9"))
    dht = plain.index(b"\xff\xc4")
    b = bytearray(plain)
    b[dht + 5: dht + 21] = b"\x00\x03" + b"\xff" * 14
    cases.append(("a Huffman table that overflows", bytes(b)))
    sof = plain.index(b"\xff\xc0")
    b = bytearray(plain)
    b[sof + 5: sof + 9] = struct.pack(">HH", 1024, 1024)
    cases.append(("more blocks declared than the scan holds", bytes(b)))
    on = Daemon("--jpeg-gpu-entropy-decode", env=GPU)
    off = Daemon(env=GPU)
    q = "/v1/bloom?format=png&" + SMALL_Q
    try:
        for name, body in cases:
            s1, _, b1 = on.req("POST", q, body=body, timeout=60)
            s2, _, b2 = off.req("POST", q, body=body, timeout=60)
            check("a corrupt scan (%s): libjpeg's answer, %d" % (name, s2),
                  s1 == s2 and (s1 != 200 or b1 == b2), (s1, s2, b1[:160]))
        counters_zero(on, "after corrupt scans")
    finally:
        on.stop("gpu entropy decode daemon")
        off.stop("libjpeg entropy decode daemon")


def write_key():
    p = os.path.join(TMP, "key")
    open(p, "w").write("s3cret-key\n")
    return p


def main():
    tests = [test_counters_and_sigterm, test_kernel_puts_count_in_queue, test_kernel_memory,
             test_memory_budget, test_half_close, test_slowloris, test_signals, test_tls_versions,
             test_new_sizes_and_programs, test_overflow, test_deadline_excludes_decode,
             test_chunked_oversize, test_exclusive_port, test_logs, test_strict_parsing,
             test_openapi, test_dropped_request_lines, test_bodies_in_budget,
             test_idle_connections_make_room, test_answers_echoing_bytes,
             test_header_name_whitespace, test_put_answer_races, test_info_paths_and_vary,
             test_corrupt_jpeg_scans]
    H.run_script(tests, "HOSTILE_ONLY", (TMP,))


if __name__ == "__main__":
    main()
