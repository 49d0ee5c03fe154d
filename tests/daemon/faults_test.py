"""Every size on every context, and GPU faults survived (run by test_faults.sh).

Sizes: a 4000x3000 photo blooms and convolves on llvmpipe (its padded frame exceeds the
context's 128 MiB storage-buffer limit, so it runs in overlap-save tiles), each answer against a
float64 numpy FFT reference within the usual 1e-5; a frame tiled by --gpu-frame-memory equals the
untiled answer of another daemon; /v1/info's limits hold: a kernel of max_kernel_side_gpu runs,
one pixel more is 413. Software renderer: the warning at start, in /readyz and /v1/info, and
--require-gpu refusing to start. Faults, through the injection hook of build/faults/fftbloomd
(POST /v1/faults): GPU memory exhausted once (the frame is retried in tiles and answered) and
always (503 gpu_out_of_memory, then answers again once memory is back), a lost context (503
gpu_reset for the job that saw it, readiness false while the context is rebuilt, then right
answers again, JPEG frames queued in upload buffers the lost context lent included; a loss
while idle too), a hung frame (liveness and readiness fail while it hangs,
then recover). Last line: "SCRIPT: N passed, N failed"."""
import json
import re
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import Daemon, check, err_of, png_bytes, write_pfm, read_pfm  # noqa: E402

import numpy as np  # noqa: E402

BUILD = H.BUILD
FAULTS = os.path.join(BUILD, "faults", "fftbloomd")
TMP = tempfile.mkdtemp(prefix="fftbloomd-faults-")
RNG = np.random.default_rng(int(time.time() * 1e6) % 2**32)


def srgb_to_linear(a8):
    c = a8.astype(np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def smooth_len(n):
    """The smallest length >= n with no prime factor above 5 (numpy's FFT is fastest there)."""
    while True:
        m = n
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        if m == 1:
            return n
        n += 1


def fft_convolve(img, k):
    """Linear convolution (zero outside, centre (kw // 2, kh // 2)) of every channel, in float64
    through numpy's FFT (padded to at least image + kernel - 1 a side: no wrap-around)."""
    H_, W = img.shape[:2]
    kh, kw = k.shape
    cy, cx = kh // 2, kw // 2
    s = (smooth_len(H_ + kh - 1), smooth_len(W + kw - 1))
    K = np.fft.rfft2(k, s)
    out = np.empty(img.shape, dtype=np.float64)
    for c in range(img.shape[2]):
        full = np.fft.irfft2(np.fft.rfft2(img[:, :, c], s) * K, s)
        out[:, :, c] = full[cy:cy + H_, cx:cx + W]
    return out


def rel_l2(got, ref):
    return float(np.sqrt(((got - ref) ** 2).sum() / max((ref ** 2).sum(), 1e-30)))


def close(name, got, ref, tol=1e-5):
    if got is None or got.shape != ref.shape:
        return check(name, False, "shape %s vs %s" % (None if got is None else got.shape, ref.shape))
    r = rel_l2(got, ref)
    mx = float(np.abs(got - ref).max())
    print("     %s: rel_l2 %.3g max_abs %.3g (tol %g)" % (name, r, mx, tol))
    return check(name, r <= tol, "rel_l2 %g max_abs %g" % (r, mx))


def put_kernel(d, name, k):
    path = write_pfm(os.path.join(TMP, name + ".pfm"), k.astype(np.float32))
    st, _, body = d.req("PUT", "/v1/kernels/" + name, body=open(path, "rb").read())
    return st, body


def photo(h, w):
    """A smooth picture with fine noise, as 8-bit RGB."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([0.5 + 0.4 * np.sin(x / 97 + c) * np.cos(y / 131 - c) for c in range(3)], -1)
    img += RNG.normal(0, 0.05, img.shape).astype(np.float32)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8)


def info(d):
    st, _, body = d.req("GET", "/v1/info")
    return json.loads(body) if st == 200 else {}


# ---- sizes ----

def test_large_photo():
    """4000x3000 on llvmpipe: padded 4000+24 x 3000+24 needs about 240 MiB a buffer, past the
    context's 128 MiB limit; the answer comes in tiles and matches numpy. (The bloom's tiles, its
    prefilter and composite across tile seams, are checked against an untiled answer in
    test_budget_and_limits, at a size CI can afford twice.)"""
    d = Daemon("--deadline", "600", "--max-body", "64M", "--kernel-max-pixels", "100000")
    try:
        lim = info(d).get("gpus", [{}])[0].get("limits", {})
        a8 = photo(3000, 4000)
        k = RNG.random((25, 25)) + 0.1
        check("PUT the 25x25 kernel", put_kernel(d, "k25", k)[0] == 201)
        png = png_bytes(a8)
        lin = srgb_to_linear(a8[:, :, ::-1])  # png_bytes (OpenCV) takes BGR
        conv = fft_convolve(lin, k)
        t0 = time.time()
        st, h, body = d.req("POST", "/v1/convolve?kernel=k25&method=fft&format=pfm", body=png,
                            timeout=600)
        print("     4000x3000 convolve: %.1f s, X-Tiles %s, buffer limit %s MiB" % (
            time.time() - t0, h.get("x-tiles"), lim.get("max_buffer_bytes", 0) >> 20))
        check("4000x3000 convolve: 200", st == 200, body[:300])
        check("... in tiles (X-Tiles)", st == 200 and "x" in h.get("x-tiles", ""), h)
        if st == 200:
            close("4000x3000 convolve vs numpy FFT", read_pfm(body), conv)
    finally:
        d.stop("large photo daemon")


def test_budget_and_limits():
    """--gpu-frame-memory 4M tiles a 600x400 frame; the answer equals an untiled daemon's.
    /v1/info's max_kernel_side_gpu runs; one more pixel is refused before any harm."""
    tiled = Daemon("--gpu-frame-memory", "4M", "--kernel-max-pixels", "1000000")
    plain = Daemon()
    try:
        i = info(tiled)
        g = i.get("gpus", [{}])[0]
        lim = g.get("limits", {})
        ks = i.get("limits", {}).get("max_kernel_side_gpu", 0)
        print("     at 4 MiB: untiled_pixels %s, max_kernel_side %s, buffer limit %s" % (
            lim.get("untiled_pixels"), ks, lim.get("max_buffer_bytes")))
        check("/v1/info: untiled pixels follow --gpu-frame-memory (4 MiB / 80 bytes)",
              lim.get("untiled_pixels") == (4 << 20) // 80, lim)
        check("/v1/info: the buffer limit and a kernel side are given",
              lim.get("max_buffer_bytes", 0) > 0 and ks == lim.get("max_kernel_side") and ks > 0,
              (lim, ks))
        check("/v1/info: gpu_frame_memory", i.get("limits", {}).get("gpu_frame_memory") == 4 << 20)
        a8 = photo(400, 600)
        png = png_bytes(a8)
        q = "/v1/bloom?kernel_preset=gaussian:sigma=6&format=pfm"
        st1, h1, b1 = tiled.req("POST", q, body=png)
        st2, h2, b2 = plain.req("POST", q, body=png)
        check("600x400 at 4 MiB: in tiles", st1 == 200 and "x" in h1.get("x-tiles", ""), h1)
        check("600x400 untiled: no X-Tiles", st2 == 200 and "x-tiles" not in h2, h2)
        if st1 == 200 and st2 == 200:
            close("tiled answer vs untiled answer", read_pfm(b1), read_pfm(b2))
        # the largest kernel the limits promise runs (as the only tile its size allows)
        small = png_bytes(photo(48, 64))
        check("PUT a kernel of max_kernel_side", put_kernel(tiled, "kmax", RNG.random((ks, ks)) + 0.1)[0] == 201)
        st, h, body = tiled.req("POST", "/v1/convolve?kernel=kmax&method=fft&format=pfm", body=small)
        check("a %dx%d kernel (max_kernel_side_gpu) runs" % (ks, ks), st == 200, body[:300])
        check("PUT a kernel one pixel larger", put_kernel(tiled, "kbig", RNG.random((ks + 1, ks + 1)) + 0.1)[0] == 201)
        # on a frame that must be tiled (a small one may fit whole: its span is the frame and
        # the kernel's reach past its centre)
        st, h, body = tiled.req("POST", "/v1/convolve?kernel=kbig&method=fft&format=pfm", body=png)
        s, code, msg = err_of(body)
        print("     %dx%d kernel: %s %s" % (ks + 1, ks + 1, st, msg))
        check("... one pixel larger is 413 too_large_for_gpu, saying why",
              st == 413 and code == "too_large_for_gpu" and "kernel" in msg, (st, body[:300]))
        st, _, _ = tiled.req("POST", "/v1/convolve?kernel=kmax&method=fft&format=pfm", body=small)
        check("... and the daemon answers after it", st == 200)
    finally:
        tiled.stop("budget daemon")
        plain.stop("untiled daemon")


# ---- the software renderer ----

def test_software_renderer():
    d = Daemon()
    try:
        st, _, body = d.req("GET", "/readyz")
        r = json.loads(body)
        warn = " ".join(r.get("warnings", []))
        check("/readyz: ready, with the software renderer among its warnings",
              st == 200 and "software renderer" in warn, body)
        i = info(d)
        check("/v1/info: software_renderer and the warning",
              i.get("gpus", [{}])[0].get("software_renderer") is True and
              "software renderer" in " ".join(i.get("warnings", [])), i.get("gpus"))
        check("metric fftbloom_gpu_software 1", d.metric("fftbloom_gpu_software") == 1)
        check("the log warns at start", "software renderer" in d.log())
    finally:
        d.stop("software renderer daemon")
    p = subprocess.run([H.DAEMON, "--listen", "127.0.0.1", "--port", "0", "--require-gpu"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    check("--require-gpu on llvmpipe: exits non-zero, saying why",
          p.returncode != 0 and "software renderer" in out and "--require-gpu" in out,
          (p.returncode, out[-600:]))


# ---- faults ----

def arm(d, kind, count=1, seconds=0):
    st, _, body = d.req("POST", "/v1/faults?kind=%s&count=%d&seconds=%g" % (kind, count, seconds))
    return st, body


wait_ready = H.wait_ready


def test_fault_route_absent():
    d = Daemon()
    try:
        st, _ = arm(d, "oom")
        check("POST /v1/faults: 404 in a build without fault injection", st == 404, st)
    finally:
        d.stop("plain daemon")


def test_faults():
    if not os.path.exists(FAULTS):
        check("fault-injection build exists (make faults)", False, FAULTS)
        return
    H.DAEMON, keep = FAULTS, H.DAEMON
    try:
        # new sizes build their plans on the frame's path (not borrowing one already built), so
        # that the faults armed below meet a new plan's buffers
        d = Daemon("--heartbeat-timeout", "2", "--deadline", "60", "--borrow-plans=false")
    finally:
        H.DAEMON = keep
    try:
        check("bad fault kind: 422", arm(d, "melt")[0] == 422)
        img = png_bytes(photo(90, 120))
        q = "/v1/convolve?kernel_preset=gaussian:sigma=3&method=fft&format=pfm"
        st, _, good = d.req("POST", q, body=img)
        check("a first answer", st == 200, good[:200])
        ref = read_pfm(good) if st == 200 else None

        # GPU memory exhausted at a new plan's buffers, once: freed and retried in tiles
        check("arm oom once", arm(d, "oom")[0] == 200)
        st, h, body = d.req("POST", q, body=png_bytes(photo(150, 200)))  # a new padded size
        check("oom once: answered (retried in smaller tiles)",
              st == 200 and "x" in h.get("x-tiles", ""), (st, h, body[:300]))
        check("... the log says so", "again in tiles" in d.log())

        # exhausted for good: 503, then answers again once memory is back
        check("arm oom always", arm(d, "oom", 100000)[0] == 200)
        other = png_bytes(photo(230, 310))  # another new padded size
        st, h, body = d.req("POST", q, body=other)
        s, code, msg = err_of(body)
        print("     oom: %s %s: %s" % (st, code, msg))
        check("oom: 503 gpu_out_of_memory with a message",
              st == 503 and code == "gpu_out_of_memory" and "GPU memory" in msg, (st, body[:300]))
        check("disarm", arm(d, "oom", 0)[0] == 200)
        st, _, body = d.req("POST", q, body=other)
        check("... after it the same frame is answered", st == 200, body[:200])
        st, _, body = d.req("POST", q, body=img)
        check("... and the first frame's answer is unchanged",
              st == 200 and ref is not None and rel_l2(read_pfm(body), ref) < 1e-6)

        # a lost context: the job that saw it fails 503, the context is rebuilt. The loss is
        # armed while the frame is on the GPU (held there by a 2 s hang), so that the idle
        # thread's own check does not meet it first.
        check("arm hang 2 s", arm(d, "hang", 1, 2)[0] == 200)
        res = {}

        def post_lost():
            res["r"] = d.req("POST", q, body=img, timeout=120)
        t = threading.Thread(target=post_lost)
        t.start()
        time.sleep(1)
        check("arm lost", arm(d, "lost")[0] == 200)
        t.join()
        st, h, body = res.get("r", (None, {}, b""))
        s, code, msg = err_of(body)
        print("     lost: %s %s: %s" % (st, code, msg))
        check("lost: 503 gpu_reset with Retry-After",
              st == 503 and code == "gpu_reset" and "retry-after" in h, (st, h, body[:300]))
        check("... ready again once rebuilt", wait_ready(d))
        check("... one reset counted", d.metric("fftbloom_gpu_resets_total") == 1)
        st, _, body = d.req("POST", q, body=img)
        check("... and answers right after it",
              st == 200 and ref is not None and rel_l2(read_pfm(body), ref) < 1e-6)
        # lost while JPEG frames wait in the queue with their planes in upload buffers the
        # lost context lent (--jpeg-upload-lease): the buffers go back unread, the frames are
        # decoded again, and answered right on the rebuilt one
        jq = "/v1/bloom?threshold=0.5&kernel_preset=gaussian:sigma=2"
        jpgs = [H.jpg_bytes(photo(40 + 8 * i, 56)) for i in range(3)]
        alone = [d.req("POST", jq, body=b)[2] for b in jpgs]
        for _ in range(10):  # a buffer for each made (one a frame, for a take that found none)
            if info(d)["gpus"][0]["uploads"]["buffers"] >= 3:
                break
            res = {}
            ts = [H.post_async(d, jq, b, res, i) for i, b in enumerate(jpgs)]
            for t in ts:
                t.join()
        check("arm hang 2 s (JPEGs queued)", arm(d, "hang", 1, 2)[0] == 200)
        res = {}
        ts = [H.post_async(d, q, img, res, "hung")]
        time.sleep(0.3)
        ts += [H.post_async(d, jq, b, res, i) for i, b in enumerate(jpgs)]
        end = time.time() + 1.2
        while time.time() < end and d.metric("fftbloom_upload_buffers_out") != 3:
            time.sleep(0.01)
        held = d.metric("fftbloom_upload_buffers_out")
        check("arm lost (JPEGs queued)", arm(d, "lost")[0] == 200)
        for t in ts:
            t.join()
        st = res["hung"][0]
        same = [res[i][0] == 200 and res[i][2] == alone[i] for i in range(3)]
        print("     lost with %s frames queued in lent upload buffers: the frame on the GPU %s, "
              "the queued ones %s" % (held, st, [res[i][0] for i in range(3)]))
        check("... the frame on the GPU 503, the queued JPEG frames answered as before the reset",
              held == 3 and st == 503 and all(same), (held, st, same))
        check("... decoded again off the lost context's buffers, every upload buffer back",
              "3 queued frames decoded again" in d.log() and
              d.metric("fftbloom_upload_buffers_out") == 0 and
              "upload buffer(s) not returned" not in d.log(), d.log()[-1500:])
        check("... ready again", wait_ready(d))
        check("... two resets counted", d.metric("fftbloom_gpu_resets_total") == 2)
        # lost while idle: noticed within the thread's wake-up, rebuilt
        check("arm lost (idle)", arm(d, "lost")[0] == 200)
        end = time.time() + 20
        while time.time() < end and d.metric("fftbloom_gpu_resets_total") != 3:
            time.sleep(0.1)
        check("lost while idle: rebuilt", d.metric("fftbloom_gpu_resets_total") == 3 and wait_ready(d))

        # a hung frame: liveness and readiness fail while it hangs, then recover
        check("arm hang 6 s", arm(d, "hang", 1, 6)[0] == 200)
        res = {}

        def post():
            res["r"] = d.req("POST", q, body=img, timeout=120)
        t = threading.Thread(target=post)
        t.start()
        time.sleep(3.5)
        st_h, _, bh = d.req("GET", "/healthz")
        st_r, _, br = d.req("GET", "/readyz")
        print("     hung: /healthz %s %s, /readyz %s" % (st_h, bh[:120], st_r))
        check("hung: /healthz 503 (liveness: restart me)",
              st_h == 503 and b"heartbeat" in bh, (st_h, bh))
        check("hung: /readyz 503", st_r == 503, (st_r, br))
        t.join()
        st = res.get("r", (None,))[0]
        check("... the hung frame is answered once the GPU finishes", st == 200, res.get("r"))
        st_h, _, _ = d.req("GET", "/healthz")
        check("... /healthz 200 again", st_h == 200)
        check("... ready again", wait_ready(d))
    finally:
        d.stop("fault daemon")


def test_cli_tiles():
    """fftbloom convolve and bloom with --gpu-frame-memory: tiled (the summary says so), equal to
    numpy's float64 FFT and to the untiled run."""
    img = RNG.random((200, 300, 3)).astype(np.float32) + 0.05
    k = (RNG.random((9, 9)) + 0.1).astype(np.float32)
    ip = write_pfm(os.path.join(TMP, "cli_in.pfm"), img)
    kp = write_pfm(os.path.join(TMP, "cli_k.pfm"), k)
    conv = fft_convolve(img.astype(np.float64), k.astype(np.float64))
    for op, extra, ref in (("convolve", ["--method", "fft"], conv),
                           ("bloom", ["--threshold", "0", "--intensity", "0.5"],
                            img + 0.5 * conv / float(k.astype(np.float64).sum()))):
        outs = []
        for budget in ([], ["--gpu-frame-memory", "200000"]):
            op_path = os.path.join(TMP, "cli_out.pfm")
            r = subprocess.run([os.path.join(BUILD, "fftbloom"), op, ip, "--kernel", kp, "-o",
                                op_path] + extra + budget, capture_output=True, text=True)
            name = "fftbloom %s%s" % (op, " --gpu-frame-memory 200000" if budget else "")
            tiled = re.search(r"in \d+x\d+ tiles", r.stderr) is not None
            check(name + ": exit 0, %s" % ("in tiles" if budget else "one piece"),
                  r.returncode == 0 and tiled == bool(budget), r.stderr[-300:])
            outs.append(read_pfm(open(op_path, "rb").read()) if r.returncode == 0 else None)
            close(name + " vs numpy FFT", outs[-1], ref)
        if outs[0] is not None:
            close("fftbloom %s: tiled vs untiled" % op, outs[1], outs[0].astype(np.float64))


def test_worker_gpu_hang():
    """Several GPUs: a worker whose GPU thread hangs in a frame (its process still beating) is
    killed past --worker-timeout and restarted alone; the other worker answers meanwhile."""
    if not os.path.exists(FAULTS):
        check("fault-injection build exists (make faults)", False, FAULTS)
        return
    H.DAEMON, keep = FAULTS, H.DAEMON
    try:
        d = Daemon("--gpus", "0,0", "--worker-timeout", "5", "--deadline", "60")
    finally:
        H.DAEMON = keep
    try:
        end = time.time() + 60
        while time.time() < end:
            st, _, body = d.req("GET", "/readyz")
            if st == 200 and all(g["ready"] for g in json.loads(body).get("gpus", [{}])):
                break
            time.sleep(0.1)
        check("arm hang 30 s on one worker", arm(d, "hang", 1, 30)[0] == 200)
        m = re.search(r"\[gpu (\d)\] [^\n]*fault injection: hang armed", d.log())
        w = m.group(1) if m else None
        img = png_bytes(photo(40, 56))
        q = "/v1/convolve?kernel_preset=gaussian:sigma=2&method=fft&format=pfm"
        res = []
        stop_at = time.time() + 30

        def client():
            # short timeouts: a connection that reaches the hung worker's socket waits, and a
            # new one (a new address) may reach the other worker
            while time.time() < stop_at and not ("silent for" in d.log() and any(
                    r[0] == 200 and r[1] != w for r in res)):
                try:
                    st, h, _ = d.req("POST", q, body=img, timeout=1.5)
                    res.append((st, h.get("x-gpu")))
                except OSError as e:
                    res.append((repr(e)[:40], None))
        ts = [threading.Thread(target=client) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print("     armed on worker %s; answers %s" % (w, res[:12]))
        check("the worker of the hung GPU thread is killed", "silent for" in d.log(),
              d.log()[-2000:])
        check("... the other worker answered meanwhile",
              any(r[0] == 200 and r[1] != w for r in res), res[:20])
        end = time.time() + 20
        n = None
        while time.time() < end:
            n = d.metric('fftbloom_worker_restarts_total{gpu="%s"}' % w)
            st, _, body = d.req("GET", "/readyz")
            g = json.loads(body).get("gpus", []) if st == 200 else []
            if n == 1 and len(g) == 2 and all(x["ready"] for x in g):
                break
            time.sleep(0.2)
        check("... restarted alone and counted (fftbloom_worker_restarts_total{gpu=\"%s\"} 1)"
              % w, n == 1 and d.metric("fftbloom_worker_restarts_total") == 1, n)
    finally:
        d.stop("two-worker fault daemon")


def main():
    H.run_script((test_software_renderer, test_fault_route_absent, test_faults,
                  test_worker_gpu_hang,
                  test_budget_and_limits, test_cli_tiles, test_large_photo), tmpdirs=(TMP,))


if __name__ == "__main__":
    main()
