"""fftbloomd over real HTTP (run by test_http.sh): every route's happy path compared with the
fftbloom CLI or a numpy direct convolution, WebP and AVIF answers by format= and by browsers'
Accept headers (decoded by OpenCV and libheif), every error path, a burst against a tiny queue, a tiny
deadline, a client that hangs up, 32 concurrent clients, SIGTERM under load, API keys, CORS, TLS,
--health-check. Each daemon runs on a free loopback port (--port 0, read from its log) and is
stopped with SIGTERM; its exit status and its log (sanitizer reports included) are checked.
Prints "SCRIPT: N passed, N failed" last."""
import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
DAEMON = os.path.join(BUILD, "fftbloomd")
CLI = os.path.join(BUILD, "fftbloom")
SAN = "/san" in BUILD or os.path.basename(BUILD.rstrip("/")) == "san"
TMP = tempfile.mkdtemp(prefix="fftbloomd-test-")
PASSED = FAILED = 0
RNG = np.random.default_rng(int(time.time() * 1e6) % 2**32)
T_START = time.time()
# what a 415 names: every format the daemon reads (docs/formats.md)
FORMAT_TITLES = ("JPEG", "PNG", "OpenEXR", "Radiance HDR", "PFM", "WebP", "AVIF")


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("ok   %s" % name)
    else:
        FAILED += 1
        print("FAIL %s %s" % (name, detail))
    sys.stdout.flush()
    return ok


# ---- images ----

def write_pfm(path, a):
    a = np.asarray(a, dtype="<f4")
    h, w = a.shape[:2]
    c = 1 if a.ndim == 2 else a.shape[2]
    with open(path, "wb") as f:
        f.write(b"PF\n" if c == 3 else b"Pf\n")
        f.write(b"%d %d\n-1.0\n" % (w, h))
        f.write(np.ascontiguousarray(a[::-1]).tobytes())
    return path


def read_pfm(data):
    head = data.split(b"\n", 3)
    c = 3 if head[0] == b"PF" else 1
    w, h = map(int, head[1].split())
    dt = "<f4" if float(head[2]) < 0 else ">f4"
    a = np.frombuffer(head[3][: w * h * c * 4], dtype=dt)
    a = a.reshape(h, w, c) if c == 3 else a.reshape(h, w)
    return a[::-1].astype(np.float64)


def png_bytes(a8):
    import cv2
    ok, buf = cv2.imencode(".png", a8)
    assert ok
    return buf.tobytes()


def jpg_bytes(a8):
    import cv2
    ok, buf = cv2.imencode(".jpg", a8)
    assert ok
    return buf.tobytes()


def rand8(h=48, w=64):
    a = (RNG.random((h, w, 3)) * 255).astype(np.uint8)
    a[h // 3 : h // 3 + 4, w // 2 : w // 2 + 4] = 255  # a bright patch for the bloom
    return a


def rand_float(h=48, w=64, scale=2.0):
    return (RNG.random((h, w, 3)) * scale).astype(np.float32)


def direct_convolve(img, k):
    """Linear convolution, zero outside, kernel centre at (floor(kw/2), floor(kh/2))."""
    H, W = img.shape[:2]
    kh, kw = k.shape[:2]
    cy, cx = kh // 2, kw // 2
    out = np.zeros(img.shape, dtype=np.float64)
    for dy in range(kh):
        for dx in range(kw):
            sy, sx = dy - cy, dx - cx
            ys, xs = slice(max(sy, 0), H + min(sy, 0)), slice(max(sx, 0), W + min(sx, 0))
            yd, xd = slice(max(-sy, 0), H + min(-sy, 0)), slice(max(-sx, 0), W + min(-sx, 0))
            out[ys, xs] += img[yd, xd].astype(np.float64) * k[dy, dx]
    return out


def close_enough(name, got, ref, tol=1e-4):
    if got is None or got.shape != ref.shape:
        return check(name, False, "shape %s vs %s" % (None if got is None else got.shape, ref.shape))
    err = np.abs(got - ref)
    rel = float(np.sqrt((err ** 2).sum() / max((ref ** 2).sum(), 1e-30)))
    mx = float(err.max()) if err.size else 0.0
    print("     %s: rel_l2 %.3g max_abs %.3g (tol %g)" % (name, rel, mx, tol))
    return check(name, rel <= tol, "rel_l2 %g max_abs %g" % (rel, mx))


# ---- the daemon ----

class Daemon:
    def __init__(self, *args, env=None, tls=False):
        self.log_path = os.path.join(TMP, "daemon-%d.log" % int(time.time() * 1e6))
        self.logf = open(self.log_path, "wb")
        e = dict(os.environ)
        e.update(env or {})
        e.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        e.setdefault("LSAN_OPTIONS", "exitcode=%d:suppressions=%s" % (LEAK_EXIT, os.path.abspath(
            os.path.join(os.path.dirname(__file__), "lsan.supp"))))
        self.args = [DAEMON, "--listen", "127.0.0.1", "--port", "0"] + list(args)
        self.p = subprocess.Popen(self.args, stdout=self.logf, stderr=subprocess.STDOUT, env=e)
        self.port = None
        self.tls = tls
        deadline = time.time() + 60
        while time.time() < deadline and self.p.poll() is None:
            m = re.search(r"listening on https?://[^ ]*:(\d+)", self.log())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        if not self.port:
            raise RuntimeError("daemon did not start: %s" % self.log())

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def conn(self, timeout=60):
        if self.tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def req(self, method, path, body=None, headers=None, timeout=60):
        c = self.conn(timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def metric(self, name):
        """A sample's value (name with labels), or the sum over a family's samples."""
        st, _, body = self.req("GET", "/metrics")
        total, found = 0.0, False
        for line in body.decode().splitlines():
            if line.startswith("#"):
                continue
            series, value = line.rsplit(" ", 1)
            if series == name or ("{" not in name and series.split("{")[0] == name):
                total += float(value)
                found = True
        return total if found else None

    def stop(self, name):
        """SIGTERM; checks exit 0 within the drain time and a clean sanitizer log."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "timeout"
        self.logf.close()
        log = self.log()
        bad = [l for l in log.splitlines() if "ERROR: AddressSanitizer" in l or "runtime error:" in l]
        leaks = driver_leaks_only(log)
        if leaks is False:
            bad.append("LeakSanitizer: a leak with a stack in fftbloomd's code")
        elif leaks:
            print("     %s: %d leak(s) whose stacks lie wholly in the unloaded GL driver, ignored"
                  % (name, leaks))
            if rc == LEAK_EXIT:
                rc = 0
        check("%s: exits 0 on SIGTERM" % name, rc == 0, "rc %s; log tail: %s" % (rc, log[-2000:]))
        check("%s: no sanitizer report" % name, not bad, "\n".join(bad[:5]) + log[-3000:])
        return log


LEAK_EXIT = 23


def driver_leaks_only(log):
    """LeakSanitizer blocks in log: 0 if none, their count if every one was allocated wholly
    inside modules unloaded at exit (Mesa's driver after eglTerminate: frames print as
    "<unknown module>", so lsan.supp cannot name them), False if any stack shows other code."""
    blocks = re.findall(r"(?:Direct|Indirect) leak of .*?\n((?:\s+#\d+ .*\n)+)", log)
    if "ERROR: LeakSanitizer" in log and not blocks:
        return False
    for b in blocks:
        frames = [l.strip() for l in b.strip().splitlines()][1:]  # #0 is the allocator
        for f in frames:
            # the sanitizer's own interceptors (realpath allocates for its caller) are not ours
            if "(<unknown module>)" not in f and "libc.so" not in f and "pthread_once" not in f \
                    and "__interceptor_" not in f and "libasan.so" not in f:
                return False
    return len(blocks)


def multipart(parts):
    b = "----fftbloomtest%x" % RNG.integers(1 << 60)
    out = b""
    for name, data, ctype in parts:
        out += b"--" + b.encode() + b"\r\n"
        fn = '; filename="%s.bin"' % name if ctype != "application/json" else ""
        out += ('Content-Disposition: form-data; name="%s"%s\r\n' % (name, fn)).encode()
        out += ("Content-Type: %s\r\n\r\n" % ctype).encode()
        out += data + b"\r\n"
    out += b"--" + b.encode() + b"--\r\n"
    return out, "multipart/form-data; boundary=" + b


def wait_ready(d, timeout=60, workers=0):
    """True once the daemon d answers /readyz 200 (polled every 20 ms) and, with workers, lists
    that many workers each ready (a supervisor answers 200 once one is); False after timeout s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, _, body = d.req("GET", "/readyz")
        if st == 200:
            g = json.loads(body).get("gpus", []) if workers else []
            if len(g) == workers and all(x.get("ready") for x in g):
                return True
        time.sleep(0.02)
    return False


def err_of(body):
    try:
        e = json.loads(body)["error"]
        return e.get("status"), e.get("code"), e.get("message", "")
    except Exception:
        return None, None, body[:200]


def cli(*args):
    # the CLI only makes reference images here: its own leak checks are not this test's subject
    e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    r = subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=300, env=e)
    if r.returncode:
        print("     cli %s: rc %d %s" % (" ".join(args), r.returncode, r.stderr[-500:]))
    return r.returncode == 0


TIMING_STAGES = ("decode", "queue", "gpu", "gpu_copy", "gpu_wait", "gpu_setup", "encode", "total")


def timings(h):
    """Server-Timing as {name: ms}."""
    out = {}
    for part in h.get("server-timing", "").split(","):
        name, _, dur = part.strip().partition(";dur=")
        try:
            out[name] = float(dur)
        except ValueError:
            pass
    return out


def timing_ok(h):
    t = timings(h)
    return all(s in t and t[s] >= 0 for s in TIMING_STAGES)


def timing_parts_ok(h):
    """gpu_copy, gpu_wait and gpu_setup are parts of gpu (each printed rounded to 1 us)."""
    t = timings(h)
    return (timing_ok(h) and t["gpu_copy"] + t["gpu_wait"] + t["gpu_setup"] <= t["gpu"] + 0.003
            and t["gpu"] > 0)


# ---- the tests ----

def test_main():
    kdir = os.path.join(TMP, "kernels")
    os.makedirs(kdir, exist_ok=True)
    kern = RNG.random((5, 7, 3)).astype(np.float32)
    write_pfm(os.path.join(kdir, "star.pfm"), kern)
    d = Daemon("--kernel-dir", kdir, "--cors-origins", "http://app.example",
               "--warm-sizes", "64x48", "--log-format", "json", "--codec-threads", "2")
    try:
        st, h, body = d.req("GET", "/healthz")
        check("healthz 200", st == 200 and json.loads(body)["status"] == "ok", (st, body))
        check("healthz has X-Request-Id and Server-Timing",
              bool(h.get("x-request-id")) and timing_ok(h), h)
        t_end = time.time() + 60
        while time.time() < t_end:
            st, h, body = d.req("GET", "/readyz")
            if st == 200:
                break
            time.sleep(0.1)
        check("readyz 200 after warm-up", st == 200, (st, body))
        check("warm-up logged", "warmed 64x48" in d.log(), d.log()[-1000:])
        st, h, body = d.req("GET", "/healthz", headers={"X-Request-Id": "my-id.42"})
        check("X-Request-Id echoed", h.get("x-request-id") == "my-id.42", h)
        # its threads by name (top -H, the e2e suite's CPU by thread): the daemon's, or under a
        # supervisor (a GPU's default, --compile-mode process) its serving worker's
        pid = d.p.pid
        st, _, rb = d.req("GET", "/readyz")
        if st == 200 and json.loads(rb).get("gpus"):
            pid = json.loads(rb)["gpus"][0]["pid"]
        names = []
        for t in glob.glob("/proc/%d/task/*/comm" % pid):
            try:
                names.append(open(t).read().strip())
            except OSError:
                pass  # the thread ended
        check("threads named",
              {"fb-gpu0", "fb-codec0", "fb-codec1", "fb-watchdog", "fb-sweeper"} <= set(names),
              names)

        # bloom, raw PNG body, parameters in the query; compared with the CLI
        a8 = rand8()
        png = png_bytes(a8)
        pin = os.path.join(TMP, "in.png")
        open(pin, "wb").write(png)
        q = "threshold=0.6&intensity=0.8&kernel_preset=gaussian:sigma=2"
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=pfm", body=png)
        check("bloom raw 200 pfm", st == 200 and h.get("content-type") == "image/x-portable-floatmap",
              (st, h, body[:300]))
        check("bloom Server-Timing has every stage, copies and waits within gpu",
              timing_parts_ok(h), h)
        ref = os.path.join(TMP, "ref_bloom.pfm")
        if cli("bloom", pin, "-o", ref, "--threshold", "0.6", "--intensity", "0.8",
               "--kernel-preset", "gaussian:sigma=2", "--quiet"):
            close_enough("bloom raw == CLI bloom", read_pfm(body) if st == 200 else None,
                         read_pfm(open(ref, "rb").read()))
        else:
            check("CLI bloom runs", False)

        # default output format follows the input
        st, h, body = d.req("POST", "/v1/bloom", body=png)
        check("PNG in -> PNG out", st == 200 and h.get("content-type") == "image/png"
              and body[:8] == b"\x89PNG\r\n\x1a\n" and body[24] == 8, (st, h))
        st, h, body = d.req("POST", "/v1/bloom", body=jpg_bytes(a8))
        check("JPEG in -> JPEG out", st == 200 and h.get("content-type") == "image/jpeg"
              and body[:2] == b"\xff\xd8", (st, h))
        import cv2
        # JPEG frames cross as planes (--jpeg-planes, on by default): the answers must match the
        # CLI's float path (libjpeg's colour conversion on the CPU). Decoded, the planes differ
        # from libjpeg's RGB by <= 1.5 codes (tests/gles/test_bloom.c): on this noise image up
        # to 1.3% of a linear value, so the blooms agree to rel_l2 1e-2. As JPEG answers, the
        # planes path must lose no more than the CPU path: its PSNR against the float result is
        # within 0.5 dB of the CLI JPEG's.
        jpath = os.path.join(TMP, "in.jpg")
        open(jpath, "wb").write(jpg_bytes(a8))
        q = "threshold=0.6&intensity=0.8&kernel_preset=gaussian:sigma=2"
        cli_args = ["--threshold", "0.6", "--intensity", "0.8", "--kernel-preset",
                    "gaussian:sigma=2", "--quiet"]
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=pfm", body=open(jpath, "rb").read())
        ref = os.path.join(TMP, "ref_jpeg.pfm")
        if st == 200 and cli("bloom", jpath, "-o", ref, *cli_args):
            close_enough("JPEG planes in == CLI (float decode)", read_pfm(body),
                         read_pfm(open(ref, "rb").read()), tol=1e-2)
        else:
            check("JPEG planes in -> PFM", False, (st, body[:200]))
        st, h, body = d.req("POST", "/v1/bloom?" + q, body=open(jpath, "rb").read())
        refj = os.path.join(TMP, "ref_jpeg.jpg")
        if st == 200 and cli("bloom", jpath, "-o", refj, *cli_args) and os.path.exists(ref):
            lin = np.clip(read_pfm(open(ref, "rb").read()), 0, 1)
            srgb = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055) * 255

            def psnr(jpeg_rgb):
                mse = float(((jpeg_rgb - srgb) ** 2).mean())
                return 10 * np.log10(255.0 ** 2 / mse) if mse > 0 else 99.0
            got = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
            want = cv2.imread(refj, cv2.IMREAD_COLOR)[:, :, ::-1]
            pg, pw = psnr(got.astype(np.float64)), psnr(want.astype(np.float64))
            print("     JPEG answer vs float result: planes %.2f dB, CLI %.2f dB" % (pg, pw))
            check("JPEG planes in and out lose no more than the CPU path", pg >= pw - 0.5, (pg, pw))
            check("planes answer of an 8-bit input reports nothing lost",
                  "x-image-lost" not in h, h)
            check("planes answer's Server-Timing: copies and waits within gpu",
                  timing_parts_ok(h), h)
        else:
            check("JPEG planes in -> JPEG out", False, (st, body[:200]))
        # clipping found on the GPU is reported (a convolution by a kernel that sums well past
        # 1: the aperture's peak is 1); a bloom's clipped highlights are by design, not reported
        st, h, body = d.req("POST", "/v1/convolve?method=fft&kernel_preset=aperture",
                            body=open(jpath, "rb").read())
        check("planes answer reports clipped range", st == 200 and
              "range" in h.get("x-image-lost", ""), (st, h))
        st, h, body = d.req("POST", "/v1/bloom?intensity=20&threshold=0", body=open(jpath, "rb").read())
        check("planes bloom answer: highlights clipped by design, not reported", st == 200 and
              "range" not in h.get("x-image-lost", ""), (st, h))
        # EXIF orientation 6 (turned): the answer is turned, as the CLI's
        jb = open(jpath, "rb").read()
        exif = (b"\xff\xe1\x00\x22Exif\x00\x00II*\x00\x08\x00\x00\x00\x01\x00"
                b"\x12\x01\x03\x00\x01\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00")
        turned = jb[:2] + exif + jb[2:]
        tpath = os.path.join(TMP, "turned.jpg")
        open(tpath, "wb").write(turned)
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=pfm", body=turned)
        reft = os.path.join(TMP, "ref_turned.pfm")
        if st == 200 and cli("bloom", tpath, "-o", reft, *cli_args):
            got = read_pfm(body)
            check("EXIF orientation 6 turns the planes", got.shape[:2] == (a8.shape[1], a8.shape[0]),
                  got.shape)
            close_enough("turned planes == CLI", got, read_pfm(open(reft, "rb").read()), tol=1e-2)
        else:
            check("turned JPEG", False, (st, body[:200]))
        a16 = (RNG.random((48, 64, 3)) * 65535).astype(np.uint16)
        st, h, body = d.req("POST", "/v1/bloom", body=png_bytes(a16))
        check("16-bit PNG in -> 16-bit PNG out", st == 200 and body[:8] == b"\x89PNG\r\n\x1a\n"
              and body[24] == 16, (st, h, body[:32]))
        fl = rand_float()
        pf = open(write_pfm(os.path.join(TMP, "f.pfm"), fl), "rb").read()
        st, h, body = d.req("POST", "/v1/bloom", body=pf)
        check("float in -> EXR out", st == 200 and h.get("content-type") == "image/x-exr"
              and body[:4] == b"\x76\x2f\x31\x01", (st, h, body[:8]))
        # exr_compression: the header says it, the pixels are the PFM answer's within half's
        # rounding (read back by the CLI), a name not in the list is the table's 400
        st, h, ref = d.req("POST", "/v1/bloom?format=pfm", body=pf)
        ref = read_pfm(ref) if st == 200 else None
        for name, code in (("none", 0), ("rle", 1), ("zips", 2), ("zip", 3), ("piz", 4), (None, 3)):
            q = "/v1/bloom?format=exr" + ("&exr_compression=" + name if name else "")
            st, h, body = d.req("POST", q, body=pf)
            at = body.find(b"compression\0compression\0")
            got = body[at + 28] if st == 200 and at > 0 else None
            check("exr_compression=%s: header says %d" % (name or "(default)", code),
                  st == 200 and got == code, (st, got, body[:64]))
            ep = os.path.join(TMP, "c_%s.exr" % name)
            open(ep, "wb").write(body)
            if ref is not None and st == 200 and cli("convert", ep, "-o", ep + ".pfm", "--quiet"):
                close_enough("exr_compression=%s answer == PFM answer" % name,
                             read_pfm(open(ep + ".pfm", "rb").read()), ref, tol=1e-3)
        st, h, body = d.req("POST", "/v1/bloom?format=exr&exr_compression=dwaa", body=pf)
        s_, code, msg = err_of(body)
        check("exr_compression=dwaa: 400 bad_parameter naming the choices",
              st == 400 and code == "bad_parameter" and "zip|none|rle|zips|piz" in msg, (st, body[:300]))
        st, h, body = d.req("POST", "/v1/bloom", body=pf,
                            headers={"Accept": "image/webp;q=0.9, image/x-portable-floatmap"})
        check("Accept picks PFM", st == 200 and body[:2] == b"PF", (st, h))
        st, h, body = d.req("POST", "/v1/bloom?format=hdr", body=pf)
        check("format=hdr", st == 200 and body[:2] == b"#?", (st, body[:16]))

        # convolve with a registered kernel (from --kernel-dir) against numpy
        st, h, body = d.req("POST", "/v1/convolve?kernel=star&format=pfm", body=pf)
        close_enough("convolve kernel=star == numpy direct convolution",
                     read_pfm(body) if st == 200 else None, direct_convolve(fl, kern))

        # multipart: image + kernel + params, against the CLI with the same kernel file
        kimg = RNG.random((9, 9, 3)).astype(np.float32)
        kpath = write_pfm(os.path.join(TMP, "k.pfm"), kimg)
        kb = open(kpath, "rb").read()
        mp, ct = multipart([("image", png, "image/png"), ("kernel", kb, "application/octet-stream"),
                            ("params", json.dumps({"threshold": 0.5, "intensity": 2,
                                                   "format": "pfm"}).encode(), "application/json")])
        st, h, body = d.req("POST", "/v1/bloom", body=mp, headers={"Content-Type": ct})
        check("multipart bloom 200", st == 200, (st, body[:300]))
        ref = os.path.join(TMP, "ref_mp.pfm")
        if cli("bloom", pin, "-o", ref, "--kernel", kpath, "--threshold", "0.5", "--intensity", "2",
               "--quiet"):
            close_enough("multipart bloom == CLI bloom --kernel",
                         read_pfm(body) if st == 200 else None, read_pfm(open(ref, "rb").read()))
        # convolve multipart against the CLI and numpy
        mp, ct = multipart([("image", pf, "image/x-portable-floatmap"), ("kernel", kb, "image/x-pfm"),
                            ("params", b'{"format": "pfm"}', "application/json")])
        st, h, body = d.req("POST", "/v1/convolve", body=mp, headers={"Content-Type": ct})
        got = read_pfm(body) if st == 200 else None
        close_enough("multipart convolve == numpy", got, direct_convolve(fl, kimg))
        ref = os.path.join(TMP, "ref_conv.pfm")
        if cli("convolve", os.path.join(TMP, "f.pfm"), "-o", ref, "--kernel", kpath, "--quiet"):
            close_enough("multipart convolve == CLI convolve", got, read_pfm(open(ref, "rb").read()))

        # kernels: PUT, GET, use, replace, DELETE
        st, h, body = d.req("PUT", "/v1/kernels/blob", body=kb)
        j = json.loads(body) if st in (200, 201) else {}
        check("PUT kernel 201", st == 201 and j.get("width") == 9 and j.get("replaced") is False,
              (st, body))
        st, h, body = d.req("GET", "/v1/kernels")
        names = [k["name"] for k in json.loads(body)["kernels"]] if st == 200 else []
        check("GET /v1/kernels lists both", names == ["blob", "star"], (st, body))
        st, h, body = d.req("GET", "/v1/kernels/blob")
        check("GET /v1/kernels/blob", st == 200 and json.loads(body)["height"] == 9, (st, body))
        st, h, body = d.req("POST", "/v1/bloom?kernel=blob&threshold=0.5&intensity=2&format=pfm",
                            body=png)
        if os.path.exists(os.path.join(TMP, "ref_mp.pfm")):
            close_enough("bloom kernel=NAME == CLI bloom --kernel",
                         read_pfm(body) if st == 200 else None,
                         read_pfm(open(os.path.join(TMP, "ref_mp.pfm"), "rb").read()))
        st, h, body = d.req("PUT", "/v1/kernels/blob", body=open(write_pfm(
            os.path.join(TMP, "k2.pfm"), RNG.random((3, 3, 3)).astype(np.float32)), "rb").read())
        check("PUT again replaces (200)", st == 200 and json.loads(body)["replaced"] is True, (st, body))
        st, h, body = d.req("DELETE", "/v1/kernels/blob")
        check("DELETE kernel 204", st == 204, (st, body))
        st, h, body = d.req("DELETE", "/v1/kernels/blob")
        check("DELETE again 404", st == 404 and err_of(body)[1] == "kernel_not_found", (st, body))
        st, h, body = d.req("POST", "/v1/bloom?kernel=blob", body=png)
        check("kernel=unknown 400 naming it", st == 400 and "blob" in err_of(body)[2], (st, body))
        st, h, body = d.req("PUT", "/v1/kernels/bad%20name", body=kb)
        check("bad kernel name 400", st == 400, (st, body))
        st, h, body = d.req("PUT", "/v1/kernels/x", body=b"not an image at all")
        check("PUT non-image 415", st == 415, (st, body))
        check("the kernel's 415 names every format read, WebP and AVIF too",
              all(t in err_of(body)[2] for t in FORMAT_TITLES), body)

        # errors
        st, h, body = d.req("GET", "/nope")
        check("404 JSON error", st == 404 and err_of(body)[:2] == (404, "not_found")
              and h.get("x-request-id"), (st, body))
        st, h, body = d.req("DELETE", "/v1/bloom")
        check("405 with Allow", st == 405 and "POST" in h.get("allow", "")
              and err_of(body)[0] == 405, (st, h, body))
        st, h, body = d.req("GET", "/v1/bloom")
        check("GET /v1/bloom without src=: 400 bad_src", st == 400
              and err_of(body)[1] == "bad_src", (st, h, body))
        st, h, body = d.req("DELETE", "/healthz")
        check("405 DELETE /healthz", st == 405, (st, body))
        st, h, body = d.req("POST", "/v1/bloom", body=b"")
        check("empty body 400", st == 400 and err_of(body)[1] == "empty_body", (st, body))
        st, h, body = d.req("POST", "/v1/bloom", body=bytes(RNG.integers(0, 256, 500, dtype=np.uint8)))
        check("415 for unknown bytes", st == 415 and err_of(body)[1] == "unsupported_media_type"
              and all(t in err_of(body)[2] for t in FORMAT_TITLES), (st, body))
        st, h, body = d.req("POST", "/v1/bloom", body=png[: len(png) // 2])
        s, c, m = err_of(body)
        check("422 corrupt PNG with the codec's message", st == 422 and s == 422
              and c.startswith("image_") and "png" in m.lower(), (st, body))
        bad = bytearray(jpg_bytes(a8))
        bad[len(bad) // 3 : len(bad) // 3 + 200] = b"\x00" * 200
        st, h, body = d.req("POST", "/v1/bloom", body=bytes(bad[: len(bad) * 2 // 3]))
        check("422 corrupt JPEG", st == 422 and "jpeg" in err_of(body)[2].lower(), (st, body))
        st, h, body = d.req("POST", "/v1/bloom?threshold=70000", body=png)
        s, c, m = err_of(body)
        check("400 names the parameter and its bounds", st == 400 and "threshold" in m
              and "[0, 65504]" in m, (st, body))
        st, h, body = d.req("POST", "/v1/bloom?intensity=abc", body=png)
        check("400 for a non-number", st == 400 and "intensity" in err_of(body)[2], (st, body))
        for q, name in (("intensity=0x10", "intensity"), ("intensity=inf", "intensity"),
                        ("quality=0x50", "quality"), ("knee=nan", "knee"),
                        ("kernel_preset=gaussian:sigma%3D0x2", "sigma")):
            st, h, body = d.req("POST", "/v1/bloom?" + q, body=png)
            check("400 bad_parameter for a number that is not decimal: %s" % q, st == 400 and
                  err_of(body)[1] == "bad_parameter" and name in err_of(body)[2], (st, body))
        mp, ct = multipart([("image", png, "image/png"),
                            ("params", b'{"intensity": "0x10"}', "application/json")])
        st, h, body = d.req("POST", "/v1/bloom", body=mp, headers={"Content-Type": ct})
        check("400 for a hex number in params", st == 400 and "intensity: '0x10' is not a "
              "decimal number" in err_of(body)[2], (st, body))
        st, h, body = d.req("POST", "/v1/bloom?mix=0.3", body=png)
        check("400 bad_parameter for mix without composite=mix", st == 400 and
              err_of(body)[1] == "bad_parameter" and "mix is for composite=mix" in err_of(body)[2],
              (st, body))
        st, h, body = d.req("POST", "/v1/bloom?threshold=1&threshold=2", body=png)
        check("a parameter twice in the query: the message says so once", st == 400 and
              "threshold given twice in the query string" in err_of(body)[2] and
              "and in the query string" not in err_of(body)[2], (st, body))
        st, h, body = d.req("POST", "/v1/bloom?glow=3", body=png)
        check("400 unknown parameter named", st == 400 and "glow" in err_of(body)[2], (st, body))
        st, h, body = d.req("POST", "/v1/bloom?format=gif", body=png)
        check("400 bad format", st == 400 and "format" in err_of(body)[2], (st, body))
        st, h, body = d.req("POST", "/v1/bloom?composite=screen", body=png)
        check("400 bad enum lists the choices", st == 400 and "add|mix" in err_of(body)[2], (st, body))
        mp, ct = multipart([("image", png, "image/png"),
                            ("params", b'{"knee": -1}', "application/json")])
        st, h, body = d.req("POST", "/v1/bloom", body=mp, headers={"Content-Type": ct})
        check("400 from a params part", st == 400 and "knee" in err_of(body)[2], (st, body))
        mp, ct = multipart([("params", b"{}", "application/json")])
        st, h, body = d.req("POST", "/v1/bloom", body=mp, headers={"Content-Type": ct})
        check("400 multipart without image", st == 400 and err_of(body)[1] == "missing_image",
              (st, body))
        st, h, body = d.req("POST", "/v1/bloom", body=b"--x\r\nbroken",
                            headers={"Content-Type": "multipart/form-data; boundary=x"})
        check("400 malformed multipart", st == 400 and err_of(body)[1] == "bad_multipart", (st, body))

        # CORS
        st, h, body = d.req("OPTIONS", "/v1/bloom", headers={"Origin": "http://app.example",
                                                             "Access-Control-Request-Method": "POST"})
        check("CORS preflight", st == 204 and h.get("access-control-allow-origin") == "http://app.example"
              and "POST" in h.get("access-control-allow-methods", ""), (st, h))
        st, h, body = d.req("GET", "/healthz", headers={"Origin": "http://evil.example"})
        check("CORS: other origins get no header", "access-control-allow-origin" not in h, h)

        # info, openapi, metrics
        st, h, body = d.req("GET", "/v1/info")
        info = json.loads(body) if st == 200 else {}
        check("/v1/info", st == 200 and info["gpus"][0]["renderer"] and info["gpus"][0]["alive"]
              and info["configuration"]["queue-size"] == "32"
              and info["configuration"]["cors-origins"] == "http://app.example"
              and info["named_kernels"]["count"] == 1, body[:500])
        rows = {f["name"]: f for f in info.get("formats", [])}
        check("/v1/info lists WebP and AVIF among the formats read and written",
              {"jpeg", "png", "exr", "hdr", "pfm", "webp", "avif"} <= set(info["input_formats"])
              and {"webp", "avif", "avif10", "png16"} <= set(info["output_formats"])
              and rows.get("webp", {}).get("media_types") == ["image/webp"]
              and rows.get("avif", {}).get("extensions") == ["avif"]
              and rows["avif"]["read"] and rows["avif"]["write"]
              and rows["png"]["write_bits"] == [8, 16] and rows["exr"]["samples"] == "float"
              and [f["name"] for f in info["formats"] if f["read"]] == info["input_formats"],
              (info.get("input_formats"), info.get("output_formats"), info.get("formats")))
        st, h, body = d.req("GET", "/openapi.json")
        doc = json.loads(body) if st == 200 else {}
        paths = set(doc.get("paths", {}))
        want = {"/v1/bloom", "/v1/convolve", "/v1/kernels", "/v1/kernels/{name}", "/healthz",
                "/readyz", "/metrics", "/v1/info", "/openapi.json"}
        qn = [p["name"] for p in doc["paths"]["/v1/bloom"]["post"]["parameters"]] if paths else []
        check("/openapi.json describes every route and parameter",
              doc.get("openapi", "").startswith("3.") and want <= paths
              and "threshold" in qn and "kernel_preset" in qn and "format" in qn, sorted(paths))
        st, h, body = d.req("GET", "/metrics")
        text = body.decode()
        check("/metrics is Prometheus text", st == 200 and h.get("content-type", "").startswith("text/plain")
              and "# TYPE fftbloom_stage_seconds histogram" in text
              and 'fftbloom_stage_seconds_bucket{stage="gpu",le="+Inf"}' in text
              and "fftbloom_queue_depth 0" in text and "fftbloom_gpu_busy_seconds_total{gpu=\"0\"}" in text
              and "fftbloom_kernel_cache_hits_total" in text
              and "fftbloom_program_cache_misses_total" in text, text[:2000])
        n400 = d.metric('fftbloom_http_requests_total{route="bloom",status="400"}')
        check("/metrics counts requests by route and status", n400 is not None and n400 >= 8, n400)
        st, h, body = d.req("HEAD", "/healthz")
        check("HEAD /healthz", st == 200 and body == b"", (st, body))
        # keep-alive: two requests on one connection
        c = d.conn()
        c.request("GET", "/healthz")
        r1 = c.getresponse()
        r1.read()
        c.request("POST", "/v1/bloom?format=png", body=png)
        r2 = c.getresponse()
        r2.read()
        c.close()
        check("keep-alive: two answers on one connection", r1.status == 200 and r2.status == 200
              and (r1.getheader("Connection") or "").lower() != "close", (r1.status, r2.status))
        # chunked upload of a real image works; the health check helper
        r = subprocess.run(["curl", "-s", "-o", os.path.join(TMP, "chunked.png"), "-w", "%{http_code}",
                            "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + pin,
                            "http://127.0.0.1:%d/v1/bloom" % d.port], capture_output=True, text=True)
        check("chunked upload 200 (curl)", r.stdout == "200", r.stdout + r.stderr)
        r = subprocess.run([DAEMON, "--health-check", "http://127.0.0.1:%d/readyz" % d.port],
                           capture_output=True, text=True)
        check("--health-check exits 0 when ready", r.returncode == 0, r.stdout + r.stderr)
    finally:
        log = d.stop("main daemon")
    lines = [l for l in log.splitlines() if l.startswith("{") and '"msg":"request"' in l]
    parsed = []
    for l in lines:
        try:
            parsed.append(json.loads(l))
        except ValueError:
            pass
    check("JSON log: one parseable line per request with status and timings",
          len(parsed) == len(lines) and len(parsed) >= 30
          and all("status" in p and "gpu_ms" in p and "id" in p for p in parsed), len(parsed))
    r = subprocess.run([DAEMON, "--health-check", "http://127.0.0.1:%d/readyz" % d.port],
                       capture_output=True, text=True)
    check("--health-check exits 1 when nothing answers", r.returncode == 1, r.stdout + r.stderr)
    r = subprocess.run([DAEMON, "--gpus", "0,1", "--gpu-threads", "9"], capture_output=True, text=True)
    check("--gpu-threads above 8 refused", r.returncode == 2 and "gpu-threads" in r.stderr, r.stderr)


def test_limits_and_auth():
    keyf = os.path.join(TMP, "key")
    open(keyf, "w").write("s3cret-key-%x\n" % RNG.integers(1 << 40))
    key = open(keyf).read().strip()
    d = Daemon("--api-key-file", keyf, "--max-body", "64k", "--max-pixels", "2000",
               env={"FFTBLOOM_QUEUE_SIZE": "7"})
    try:
        png = png_bytes(rand8(40, 40))  # 1600 pixels
        auth = {"Authorization": "Bearer " + key}
        st, h, body = d.req("POST", "/v1/bloom", body=png)
        check("401 without a key", st == 401 and err_of(body)[1] == "unauthorized"
              and "bearer" in h.get("www-authenticate", "").lower(), (st, body))
        st, h, body = d.req("POST", "/v1/bloom", body=png, headers={"Authorization": "Bearer " + key[:-1] + "x"})
        check("401 with a wrong key", st == 401, (st, body))
        st, h, body = d.req("GET", "/v1/info", headers={"Authorization": "Bearer " + key + "x"})
        check("401 with a longer key", st == 401, (st, body))
        st, h, body = d.req("POST", "/v1/bloom", body=png, headers=auth)
        check("200 with the key", st == 200, (st, body[:200]))
        st, h, body = d.req("GET", "/healthz")
        check("/healthz needs no key", st == 200, st)
        st, h, body = d.req("GET", "/v1/info", headers=auth)
        check("FFTBLOOM_QUEUE_SIZE read from the environment",
              st == 200 and json.loads(body)["configuration"]["queue-size"] == "7", body[:300])
        st, h, body = d.req("POST", "/v1/bloom", body=png_bytes(rand8(48, 64)), headers=auth)
        s, c, m = err_of(body)
        check("413 too many pixels", st == 413 and c == "image_too_large" and "3072" in m or
              (st == 413 and "2000" in m), (st, body))
        big = os.path.join(TMP, "big.bin")
        open(big, "wb").write(b"\x89PNG\r\n\x1a\n" + bytes(RNG.integers(0, 256, 200000, dtype=np.uint8)))
        for mode, extra in (("Content-Length", []), ("chunked", ["-H", "Transfer-Encoding: chunked"])):
            r = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", "-H", "Authorization: Bearer " + key]
                               + extra + ["--data-binary", "@" + big,
                                          "http://127.0.0.1:%d/v1/bloom" % d.port],
                               capture_output=True, text=True)
            out = r.stdout.rsplit("\n", 1)
            check("413 body over --max-body (%s)" % mode, len(out) == 2 and out[1] == "413"
                  and "body_too_large" in out[0], r.stdout[-300:] + r.stderr)
    finally:
        d.stop("limits daemon")


SLOW_T = None  # seconds one warm slow job holds the GPU, measured by test_queue_full
SLOW_Q = "kernel_preset=gaussian:sigma=3&kernel_scale=1&format=jpeg"
SLOW_BODIES = {}


def slow_body(side):
    """A random side x side JPEG; with kernel_scale=1 the padded size is about twice the side."""
    if side not in SLOW_BODIES:
        a = (RNG.random((side, side, 3)) * 255).astype(np.uint8)
        SLOW_BODIES[side] = jpg_bytes(a)
    return SLOW_BODIES[side]


SLOW_SIDES = (384, 512, 768, 1024, 1280)  # slow_job's JPEG sides, smallest first
SLOW_MARGIN = 2  # slow_job wants a job this many times `need`: the machine's load may change


def slow_job(d, need):
    """Finds (and primes in d) the smallest job of SLOW_SIDES that keeps d's GPU busy for
    SLOW_MARGIN x `need` seconds or more when warm; returns (body, seconds); seconds < that when
    even the largest is faster. Each size probed costs two runs, so small ones come first."""
    best = (None, 0.0)
    for side in SLOW_SIDES:
        body = slow_body(side)
        st, _, b = d.req("POST", "/v1/convolve?" + SLOW_Q, body=body)  # plans, programs, spectra
        if st != 200:
            print("     slow job %d: %s %s" % (side, st, b[:200]))
            break
        t0 = time.time()
        d.req("POST", "/v1/convolve?" + SLOW_Q, body=body)
        t = time.time() - t0
        print("     slow job %dx%d: %.2f s warm" % (side, side, t))
        best = (body, t)
        if t >= SLOW_MARGIN * need:
            break
    return best


def wait_queue(d, depth, timeout=20):
    """Waits until /metrics shows the GPU busy with a job and `depth` jobs queued behind it."""
    end = time.time() + timeout
    while time.time() < end:
        if d.metric("fftbloom_queue_depth") == depth and d.metric("fftbloom_gpu_busy") == 1:
            return True
        time.sleep(0.005)
    return False


def post_async(d, path, body, results, key, timeout=120):
    def run():
        t0 = time.time()
        try:
            st, h, b = d.req("POST", path, body=body, timeout=timeout)
        except Exception as e:  # noqa
            st, h, b = None, {}, str(e).encode()
        results[key] = (st, h, b, time.time() - t0)
    t = threading.Thread(target=run)
    t.start()
    return t


def test_queue_full():
    global SLOW_T
    d = Daemon("--queue-size", "1", "--retry-after", "3")
    try:
        small = png_bytes(rand8())
        d.req("POST", "/v1/convolve?kernel_preset=gaussian:sigma=2", body=small)  # compile first
        body, SLOW_T = slow_job(d, 0.5)
        if SLOW_T < 0.25:
            print("skip queue-full checks: the largest job takes %.2f s on this GPU" % SLOW_T)
            return
        res = {}
        ts = [post_async(d, "/v1/convolve?" + SLOW_Q, body, res, "slow")]
        check("slow job on the GPU", wait_queue(d, 0))
        ts.append(post_async(d, "/v1/convolve?kernel_preset=gaussian:sigma=2", small, res, "waiting"))
        check("second job waits: the one place is taken", wait_queue(d, 1))
        st, h, body = d.req("GET", "/readyz")
        reason = json.loads(body).get("reason", "") if st == 503 else ""
        check("/readyz 503 while the queue is at its high-water mark", st == 503 and "queue" in reason,
              (st, body))
        for i in range(5):
            ts.append(post_async(d, "/v1/convolve?kernel_preset=gaussian:sigma=2", small, res, i))
        for t in ts:
            t.join()
        sts = [res[i][0] for i in range(5)]
        busy = [res[i] for i in range(5) if res[i][0] == 503]
        check("burst on a full 1-place queue: all 503; the queued and the running job 200",
              sts == [503] * 5 and res["slow"][0] == 200 and res["waiting"][0] == 200,
              (sts, res["slow"][0], res["waiting"][0]))
        check("503 carries Retry-After and code queue_full", len(busy) == 5 and all(
            b[1].get("retry-after") == "3" and err_of(b[2])[1] == "queue_full" for b in busy), busy[:1])
        st, h, body = d.req("GET", "/readyz")
        check("/readyz 200 again once the queue drains", st == 200, (st, body))
        n = d.metric('fftbloom_jobs_dropped_total{reason="queue_full"}')
        check("queue_full counted in /metrics", n == len(busy), (n, len(busy)))
    finally:
        d.stop("queue daemon")


def test_deadline_and_client_gone():
    if SLOW_T is None or SLOW_T < 0.25:
        print("skip deadline checks: no job slow enough to hold the GPU")
        return
    deadline = max(0.1, SLOW_T / 3)
    d = Daemon("--deadline", "%.3f" % deadline)
    try:
        small = png_bytes(rand8())
        d.req("POST", "/v1/convolve?kernel_preset=gaussian:sigma=2", body=small)
        # test_queue_full's size again unless the load changed: 3/4 of SLOW_T is over 2 deadlines
        body, t = slow_job(d, 0.75 * SLOW_T / SLOW_MARGIN)
        jobs0 = d.metric("fftbloom_gpu_jobs_total")
        res = {}
        t1 = post_async(d, "/v1/convolve?" + SLOW_Q, body, res, "slow")
        check("slow job on the GPU", wait_queue(d, 0))
        t0 = time.time()
        st, h, b = d.req("POST", "/v1/convolve?kernel_preset=gaussian:sigma=2", body=small)
        waited = time.time() - t0
        check("504 when the deadline passes in the queue", st == 504
              and err_of(b)[1] == "deadline_exceeded" and h.get("x-request-id"), (st, b[:200]))
        t1.join()
        check("504 answered at the deadline (%.2f s), before the GPU freed (%.2f s)"
              % (deadline, res["slow"][3]), deadline * 0.9 <= waited < res["slow"][3], waited)
        # a client that sends a job and hangs up while it is queued
        t2 = post_async(d, "/v1/convolve?" + SLOW_Q, body, res, "slow2")
        check("slow job again on the GPU", wait_queue(d, 0))
        s = socket.create_connection(("127.0.0.1", d.port))
        s.sendall(b"POST /v1/convolve?kernel_preset=gaussian:sigma=2 HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(small) + small)
        check("the hanging-up client's job is queued", wait_queue(d, 1))
        # a reset (close with unread data, or SO_LINGER 0) is a client gone; a half-close, or a
        # close that looks like one, is not (hostile_test.py checks the half-close's answer)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        gone = 0
        end = time.time() + 5
        while time.time() < end and not gone:
            gone = d.metric('fftbloom_jobs_dropped_total{reason="client_gone"}') or 0
            time.sleep(0.01)
        check("a queued job whose client reset its connection is dropped", gone == 1, gone)
        t2.join()
        check("the slow jobs succeeded", res["slow"][0] == 200 and res["slow2"][0] == 200,
              (res["slow"][:2], res["slow2"][:2]))
        jobs1 = d.metric("fftbloom_gpu_jobs_total")
        check("dropped jobs never reached the GPU", jobs1 - jobs0 == 2, (jobs0, jobs1))
    finally:
        d.stop("deadline daemon")


def test_concurrency_and_sigterm():
    # two devices, two GPU threads (contexts) each: threads 0, 1 on device 0, threads 2, 3 on 1;
    # JPEG answers encoded from lent planes (--lend-planes). Every size on its own plan: answers
    # equal byte for byte need one plan a size, where a borrowed one (--borrow-plans) would
    # follow each thread's history (and one in tiles answers from float, not lent planes)
    d = Daemon("--gpus", "0,1", "--gpu-threads", "2", "--codec-threads", "3", "--max-per-ip", "100",
               "--drain-timeout", "60", "--borrow-plans=false")
    try:
        # both workers listening: before, the kernel hands every connection to the one that is
        # (on an H200 all 32 went to one device)
        check("both devices' workers ready", wait_ready(d, 120, workers=2))
        k = RNG.random((5, 5, 3)).astype(np.float32)
        kb = open(write_pfm(os.path.join(TMP, "ck.pfm"), k), "rb").read()
        st, h, body = d.req("PUT", "/v1/kernels/k5", body=kb)
        check("PUT k5", st == 201, (st, body))
        imgs = [rand_float(24 + i % 5, 32 + i % 7) for i in range(32)]
        bodies = [open(write_pfm(os.path.join(TMP, "c%d.pfm" % i), a), "rb").read() for i, a in enumerate(imgs)]
        res = {}
        t0 = time.time()
        ts = [post_async(d, "/v1/convolve?kernel=k5&format=pfm", b, res, i) for i, b in enumerate(bodies)]
        for t in ts:
            t.join()
        el = time.time() - t0
        good = 0
        worst = 0.0
        gpus = set()
        for i in range(32):
            st, h, b, _ = res[i]
            if st != 200:
                print("     client %d: %s %s" % (i, st, b[:200]))
                continue
            got = read_pfm(b)
            ref = direct_convolve(imgs[i], k)
            if got.shape == ref.shape:
                e = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
                worst = max(worst, e)
                good += e < 1e-4
            gpus.add(h.get("x-gpu"))
        print("     32 clients in %.2f s; worst relative max error %.3g; GPUs used %s" % (el, worst, sorted(gpus)))
        check("32 concurrent clients each get their own right answer", good == 32, (good, worst))
        check("jobs spread over the GPU threads of both devices",
              gpus <= {"0", "1", "2", "3"} and len(gpus) >= 3 and gpus & {"0", "1"} and gpus & {"2", "3"},
              gpus)

        # JPEG in and out: each answer's planes were lent from a GPU thread's mapped buffer to a
        # codec thread; 24 at once must give, byte for byte, what each frame gets alone
        jq = "/v1/bloom?kernel=k5&threshold=0.5"
        jpgs = [jpg_bytes(rand8(40 + i % 3 * 8, 56 + i % 4 * 8)) for i in range(24)]
        alone = [d.req("POST", jq, body=b) for b in jpgs[:6]]
        check("JPEG bloom alone", all(st == 200 and h.get("content-type") == "image/jpeg"
                                      for st, h, _ in alone), [a[0] for a in alone])
        jres = {}
        ts = [post_async(d, jq, jpgs[i % 6], jres, i) for i in range(24)]
        for t in ts:
            t.join()
        same = sum(jres[i][0] == 200 and jres[i][2] == alone[i % 6][2] for i in range(24))
        check("24 concurrent JPEG blooms each equal to the frame's answer alone", same == 24,
              (same, [jres[i][0] for i in range(24)]))
        # two devices are two worker processes: the other's GPU figures are up to 0.1 s old
        t_end = time.time() + 3
        while True:
            lent, out = d.metric("fftbloom_planes_lent_total"), d.metric("fftbloom_planes_lent")
            if (lent >= 30 and out == 0) or time.time() > t_end:
                break
            time.sleep(0.1)
        print("     planes lent: %s in all, %s still out" % (lent, out))
        check("JPEG answers encoded from lent planes, every one given back", lent >= 30 and out == 0,
              (lent, out))

        # clients that hang up right after sending: the jobs already on a GPU finish with no one
        # to answer (their job is freed as it is answered), lent planes come back all the same
        for i in range(12):
            s = socket.create_connection(("127.0.0.1", d.port))
            b = jpgs[i % 6]
            s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\n" % jq.encode() +
                      b"Content-Length: %d\r\n\r\n" % len(b) + b)
            s.close()
        t_end = time.time() + 30
        while time.time() < t_end and (d.metric("fftbloom_planes_lent") or 0) > 0:
            time.sleep(0.1)
        time.sleep(1)
        st, _, _ = d.req("GET", "/healthz")
        out = d.metric("fftbloom_planes_lent")
        check("hung-up JPEG clients: daemon up, lent planes all back", st == 200 and out == 0,
              (st, out))

        # SIGTERM while requests are in flight: every request sent before it is answered (odd
        # ones JPEG blooms, whose lent planes may still be out when the GPU threads stop)
        n = 12
        socks = []
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", d.port))
            b, path = (jpgs[i % 6], jq) if i % 2 else (bodies[i], "/v1/convolve?kernel=k5&format=pfm")
            s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\n" % path.encode() +
                      b"Content-Length: %d\r\n\r\n" % len(b) + b)
            socks.append(s)
        time.sleep(0.05)
        d.p.send_signal(signal.SIGTERM)
        answers = []
        for i, s in enumerate(socks):
            s.settimeout(60)
            data = b""
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                    m = re.search(rb"Content-Length: (\d+)\r\n", data)
                    hdr_end = data.find(b"\r\n\r\n")
                    if m and hdr_end >= 0 and len(data) >= hdr_end + 4 + int(m.group(1)):
                        break
            except OSError as e:
                print("     socket %d: %s" % (i, e))
            s.close()
            ok = data.startswith(b"HTTP/1.1 200")
            body = data[data.find(b"\r\n\r\n") + 4:]
            if ok and i % 2:
                ok = body == alone[i % 6][2]
            elif ok:
                ok = float(np.abs(read_pfm(body) - direct_convolve(imgs[i], k)).max()) < 1e-3
            answers.append(ok)
        check("SIGTERM under load: every accepted request answered correctly", all(answers), answers)
        # the answers can all be back before the daemon has handled the signal: wait for its word
        t_end = time.time() + 10
        while time.time() < t_end and "no new connections" not in d.log():
            time.sleep(0.01)
        try:
            socket.create_connection(("127.0.0.1", d.port), timeout=2).close()
            refused = False
        except OSError:
            refused = True
        check("no new connections after SIGTERM", refused)
    finally:
        d.stop("concurrency daemon")


def test_pipelining():
    # --gpu-depth: a GPU thread issues the next frame while the last is still on the GPU; each
    # frame's answer and its own count of non-finite samples must not depend on its neighbours.
    # A burst mixes frames whose convolution overflows float32 (422) with ordinary ones (200),
    # on the default depth (3) and on depth 1; every 200 must equal the frame's answer alone
    k = RNG.random((5, 5, 3)).astype(np.float32)
    kb = open(write_pfm(os.path.join(TMP, "pk.pfm"), k), "rb").read()
    hb = open(write_pfm(os.path.join(TMP, "ph.pfm"), np.full((5, 5, 3), 3e38, np.float32)),
              "rb").read()
    jpgs = [jpg_bytes(rand8(48, 64)) for i in range(6)]
    q = "/v1/bloom?threshold=0.2&kernel=pk"
    over = "/v1/convolve?kernel=ph&format=jpeg"  # 25 taps of 3e38: past float32's range
    alone = None
    for depth in ("3", "1"):
        d = Daemon("--gpu-depth", depth, "--codec-threads", "4", "--max-per-ip", "100",
                   "--queue-size", "64", "--borrow-plans=false")
        try:
            for name, body in (("pk", kb), ("ph", hb)):
                st, h, b = d.req("PUT", "/v1/kernels/" + name, body=body)
                check("PUT %s (depth %s)" % (name, depth), st == 201, (st, b[:200]))
            if alone is None:
                alone = [d.req("POST", q, body=b) for b in jpgs]
                check("each frame alone", all(a[0] == 200 for a in alone), [a[0] for a in alone])
            o0 = d.metric("fftbloom_gpu_frames_overlapped_total")
            res = {}
            n = 40
            ts = [post_async(d, over if i % 5 == 4 else q, jpgs[i % 6], res, i) for i in range(n)]
            for t in ts:
                t.join()
            bad = [(i, res[i][0], res[i][2][:120]) for i in range(n)
                   if (i % 5 == 4 and not (res[i][0] == 422 and err_of(res[i][2])[1] == "result_not_finite"))
                   or (i % 5 != 4 and not (res[i][0] == 200 and res[i][2] == alone[i % 6][2]))]
            o1 = d.metric("fftbloom_gpu_frames_overlapped_total")
            print("     depth %s: %d requests, frames overlapped %s" % (depth, n, o1 - o0))
            check("depth %s: overflowing frames 422, the others equal to their answer alone, "
                  "in a burst" % depth, not bad, bad[:4])
            if depth == "1":
                check("depth 1: no frame issued while another was in flight", o1 == o0, (o0, o1))
            else:
                check("depth 3: frames were issued while another was in flight", o1 > o0, (o0, o1))
            t_end = time.time() + 10
            while time.time() < t_end and (d.metric("fftbloom_planes_lent") or 0) > 0:
                time.sleep(0.1)
            check("depth %s: every lent plane given back" % depth,
                  d.metric("fftbloom_planes_lent") == 0 and d.metric("fftbloom_gpu_frames_in_flight") == 0,
                  (d.metric("fftbloom_planes_lent"), d.metric("fftbloom_gpu_frames_in_flight")))
        finally:
            d.stop("pipelining daemon, depth %s" % depth)


def jpg444_bytes(a8, name):
    """A 4:4:4 JPEG of a8 (RGB) through the CLI (OpenCV writes 4:2:0)."""
    png = os.path.join(TMP, name + ".png")
    out = os.path.join(TMP, name + ".jpg")
    open(png, "wb").write(png_bytes(a8[:, :, ::-1]))
    return open(out, "rb").read() if cli("convert", png, "-o", out, "--quality", "92") else None


def test_upload_lease():
    # --jpeg-upload-lease (on by default): codec threads decode a JPEG frame's planes straight
    # into an upload buffer the GPU context lends, which the GPU reads in place. Its answers
    # must be byte for byte those of the copy path (--jpeg-upload-lease=false), for JPEG, PFM
    # and PNG answers of 4:4:4, 4:2:0 and gray frames; once the buffers are made, a JPEG
    # answer's Server-Timing shows no host copy on the GPU thread. Every way a job ends must
    # give its buffer back (fftbloom_upload_buffers_out back to 0): concurrent answers, JPEGs
    # cut or corrupt after their header (the buffer taken, then the decode fails), clients
    # that hang up, jobs dropped while queued behind a slow one (client gone, deadline).
    frames = [("c420", jpg_bytes(rand8(48, 64))), ("c444", jpg444_bytes(rand8(61, 83), "ul444")),
              ("gray", jpg_bytes(rand8(40, 56)[:, :, 1])),
              ("c444b", jpg444_bytes(rand8(97, 130), "ul444b"))]
    if not check("4:4:4 JPEGs made by the CLI", all(b for _, b in frames)):
        return
    queries = ["/v1/bloom?threshold=0.5&kernel_preset=gaussian:sigma=2",
               "/v1/bloom?threshold=0.4&kernel_preset=gaussian:sigma=2&format=pfm",
               "/v1/convolve?kernel_preset=gaussian:sigma=1.5&method=fft&format=png"]
    answers = {}
    for lease in ("false", "true"):
        d = Daemon("--jpeg-upload-lease=" + lease, "--borrow-plans=false", "--codec-threads", "3",
                   "--max-per-ip", "1000", "--queue-size", "64")
        try:
            st, _, body = d.req("GET", "/v1/info")
            info = json.loads(body) if st == 200 else {}
            check("lease %s: /v1/info's configuration says so" % lease,
                  info.get("configuration", {}).get("jpeg-upload-lease") == lease, st)
            copy_ms = []
            for rnd in range(2):
                for qi, q in enumerate(queries):
                    for name, b in frames:
                        st, h, body = d.req("POST", q, body=b)
                        answers.setdefault((qi, name), []).append((lease, rnd, st, body))
                        if rnd and qi == 0:
                            copy_ms.append(timings(h).get("gpu_copy"))
            lent, copied = d.metric("fftbloom_uploads_lent_total"), d.metric("fftbloom_uploads_copied_total")
            print("     lease %s: frames lent %s, copied %s; second round's JPEG answers' gpu_copy %s ms"
                  % (lease, lent, copied, copy_ms))
            n = len(frames) * len(queries)
            if lease == "false":
                check("lease false: every frame copied, none lent", lent == 0 and copied == 2 * n,
                      (lent, copied))
                continue
            check("lease true: the second round all lent (the buffers made in the first)",
                  lent >= n and lent + copied == 2 * n, (lent, copied))
            check("lease true: JPEG answers with no host copy on the GPU thread (Server-Timing)",
                  all(c is not None and c < 0.0005 for c in copy_ms), copy_ms)
            st, _, body = d.req("GET", "/v1/info")
            up = json.loads(body)["gpus"][0].get("uploads", {}) if st == 200 else {}
            check("/v1/info: uploads lent, taken, none out, buffers made",
                  up.get("lent") == lent and up.get("taken", 0) >= lent and up.get("out") == 0
                  and up.get("buffers", 0) >= 1 and up.get("bytes", 0) > 0, up)

            def out_back(what, timeout=30):
                end = time.time() + timeout
                while time.time() < end and d.metric("fftbloom_upload_buffers_out") != 0:
                    time.sleep(0.05)
                out = d.metric("fftbloom_upload_buffers_out")
                st, _, _ = d.req("GET", "/healthz")
                return check("%s: every upload buffer given back" % what, out == 0 and st == 200,
                             (out, st))

            # concurrent: each answer equal to the frame's alone
            q = queries[0]
            alone = {name: d.req("POST", q, body=b)[2] for name, b in frames}
            res = {}
            ts = [post_async(d, q, frames[i % len(frames)][1], res, i) for i in range(24)]
            for t in ts:
                t.join()
            same = sum(res[i][0] == 200 and res[i][2] == alone[frames[i % len(frames)][0]]
                       for i in range(24))
            check("24 concurrent JPEG blooms each equal to the frame's answer alone", same == 24,
                  (same, [res[i][0] for i in range(24)]))
            out_back("concurrent answers")

            # cut in the scan data or corrupt after it begins: the buffer was taken for the
            # planes, then the decode failed (422); good frames among them still right
            taken0 = d.metric("fftbloom_upload_buffers_out")
            full = frames[3][1]
            cut = full[: len(full) * 2 // 3]
            bad = bytearray(full)
            for i in range(len(bad) // 2, len(bad) - 2, 2):
                bad[i], bad[i + 1] = 0xFF, 0xD3
            # one at a time, each finds a free buffer (made in the rounds above) and takes it
            before = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]["taken"]
            seq = [d.req("POST", q, body=b)[0] for b in (cut, bytes(bad)) * 4]
            after = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]["taken"]
            check("cut and corrupt JPEGs one at a time: 422, each after taking a buffer",
                  seq == [422] * 8 and after - before == 8 and taken0 == 0, (seq, after - before))
            out_back("failed decodes, one at a time")
            # and among good frames, at once
            before = after
            res = {}
            bodies = [cut, bytes(bad), full] * 8
            ts = [post_async(d, q, bodies[i], res, i) for i in range(len(bodies))]
            for t in ts:
                t.join()
            codes = [(res[i][0], err_of(res[i][2])[1] if res[i][0] != 200 else None)
                     for i in range(len(bodies))]
            good = all((res[i][0] == 422 and codes[i][1] in ("image_truncated", "image_corrupt"))
                       if i % 3 != 2 else (res[i][0] == 200 and res[i][2] == alone[frames[3][0]])
                       for i in range(len(bodies)))
            after = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]["taken"]
            print("     cut and corrupt JPEGs: %s; buffers taken %d" % (sorted(set(codes)), after - before))
            check("cut and corrupt JPEGs among good ones at once: 422, good ones right", good,
                  codes)
            out_back("failed decodes at once")

            # a small JPEG whose header claims a large frame, cut after the header: 422, and no
            # upload buffer made for a size that never decoded
            big = bytearray(frames[0][1])
            sof = big.find(b"\xff\xc0")
            struct.pack_into(">HH", big, sof + 5, 3000, 4000)
            sos = big.find(b"\xff\xda")
            liar = bytes(big[: sos + 40])
            up0 = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]
            seq = [d.req("POST", q, body=liar)[0] for _ in range(6)]
            time.sleep(0.6)  # past the GPU thread's idle wait, when it would make buffers
            d.req("POST", q, body=frames[0][1])  # a frame between: the GPU thread tends
            up1 = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]
            print("     4000x3000 claimed in 1 KB: %s; upload bytes %s -> %s" % (
                sorted(set(seq)), up0.get("bytes"), up1.get("bytes")))
            check("a cut JPEG claiming 4000x3000: 422, no upload buffer made for it",
                  set(seq) == {422} and up1.get("bytes") == up0.get("bytes"), (seq, up0, up1))
            out_back("large claims")

            # clients that hang up right after sending (reset): answered to no one or dropped
            for i in range(12):
                s = socket.create_connection(("127.0.0.1", d.port))
                b = frames[i % len(frames)][1]
                s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\n" % q.encode() +
                          b"Content-Length: %d\r\n\r\n" % len(b) + b)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            time.sleep(0.5)
            out_back("clients gone")

            # jobs holding buffers while queued behind a slow frame, their clients gone: dropped
            # by the watchdog, buffers back while the slow frame still runs
            body, t = slow_job(d, 0.6)
            if t < 0.4:
                print("     skip the queued drop: the slowest job takes %.2f s here" % t)
            else:
                res = {}
                gone0 = d.metric('fftbloom_jobs_dropped_total{reason="client_gone"}') or 0
                ts = post_async(d, "/v1/convolve?" + SLOW_Q, body, res, "slow")
                check("slow job on the GPU", wait_queue(d, 0))
                socks = []
                for i in range(3):
                    s = socket.create_connection(("127.0.0.1", d.port))
                    b = frames[i][1]
                    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\n" % q.encode() +
                              b"Content-Length: %d\r\n\r\n" % len(b) + b)
                    socks.append(s)
                end = time.time() + 10
                while time.time() < end and d.metric("fftbloom_upload_buffers_out") != 3:
                    time.sleep(0.005)
                held = d.metric("fftbloom_upload_buffers_out")
                for s in socks:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.close()
                end = time.time() + 10
                while time.time() < end and d.metric("fftbloom_upload_buffers_out") != 0:
                    time.sleep(0.005)
                out = d.metric("fftbloom_upload_buffers_out")
                busy = d.metric("fftbloom_gpu_busy")
                gone = (d.metric('fftbloom_jobs_dropped_total{reason="client_gone"}') or 0) - gone0
                ts.join()
                print("     queued behind a slow frame: %s buffers held, %s back, %d dropped, "
                      "slow frame still on the GPU: %s" % (held, held - out, gone, busy == 1))
                check("queued jobs' buffers held, then given back when their clients left",
                      held == 3 and out == 0 and gone == 3 and res["slow"][0] == 200,
                      (held, out, gone, res["slow"][:2]))
        finally:
            d.stop("upload lease %s daemon" % lease)
    diff = [(k, [(a[0], a[1], a[2]) for a in v]) for k, v in answers.items()
            if len(v) != 4 or any(a[2] != 200 or a[3] != v[0][3] for a in v)]
    check("answers with and without upload leases byte for byte the same (%d frames x %d "
          "queries x 2 rounds)" % (len(frames), len(queries)), not diff, diff[:3])

    # the deadline passing while jobs wait with buffers behind a slow frame: 504, buffers back
    d = Daemon("--deadline", "0.5", "--codec-threads", "3")
    try:
        body, t = slow_job(d, 1.2)
        if t < 0.9:
            print("     skip the deadline drop: the slowest job takes %.2f s here" % t)
            return
        # three buffers made first: a take that finds none has one made between frames
        for _ in range(10):
            up = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]
            if up["buffers"] >= 3:
                break
            res = {}
            ts = [post_async(d, queries[0], frames[i][1], res, i) for i in range(3)]
            for t_ in ts:
                t_.join()
        taken0 = up["taken"]
        res = {}
        ts = [post_async(d, "/v1/convolve?" + SLOW_Q, body, res, "slow")]
        check("deadline daemon: slow job on the GPU", wait_queue(d, 0))
        ts += [post_async(d, queries[0], frames[i][1], res, i) for i in range(3)]
        for t_ in ts:
            t_.join()
        codes = [(res[i][0], err_of(res[i][2])[1]) for i in range(3)]
        out = d.metric("fftbloom_upload_buffers_out")
        taken = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0]["uploads"]["taken"]
        check("jobs past their deadline in the queue (%d buffers made): 504, their buffers "
              "back" % up["buffers"], all(c == (504, "deadline_exceeded") for c in codes)
              and out == 0 and taken - taken0 == 3, (codes, out, taken - taken0))
    finally:
        d.stop("upload lease deadline daemon")


def float_frames():
    """PFM (RGB, gray) and OpenEXR frames (half and float, uncompressed and ZIP; Y, RGB, RGBA)
    made by the CLI from PFM and PNG files; None where the CLI failed."""
    rgb, gray = rand_float(45, 61), rand_float(41, 57)[:, :, 1]
    rgba8 = rand8(43, 59)
    rgba8 = np.dstack([rgba8, rand8(43, 59)[:, :, :1]])
    paths = {"rgb": write_pfm(os.path.join(TMP, "fl_rgb.pfm"), rgb),
             "gray": write_pfm(os.path.join(TMP, "fl_gray.pfm"), gray),
             "rgba": os.path.join(TMP, "fl_rgba.png")}
    open(paths["rgba"], "wb").write(png_bytes(rgba8))
    frames = [("pfm_rgb", open(paths["rgb"], "rb").read()),
              ("pfm_gray", open(paths["gray"], "rb").read())]
    for name, src, bits, comp in (("exr_half_zip_rgb", "rgb", "16", "zip"),
                                  ("exr_float_none_rgb", "rgb", "32", "none"),
                                  ("exr_half_none_y", "gray", "16", "none"),
                                  ("exr_float_zip_rgba", "rgba", "32", "zip"),
                                  ("exr_half_zip_rgba", "rgba", "16", "zip")):
        out = os.path.join(TMP, "fl_%s.exr" % name)
        ok = cli("convert", paths[src], "-o", out, "--bits", bits, "--exr-compression", comp)
        frames.append((name, open(out, "rb").read() if ok else None))
    return frames


# bytes: float_frames' frames run in tiles under it (whole, each pads past 240000 bytes; a
# sigma 2 gaussian's 32-pixel tiles take at most 195264)
TILED_FRAME_MEMORY = 200000


def test_float_upload_lease():
    # --float-upload-lease: codec threads decode a PFM or EXR frame for the FFT straight into
    # an upload buffer the GPU context lends, as RGBA float32, which the GPU copies from. Its
    # answers must be byte for byte those of the copy path (--float-upload-lease=false) for
    # every layout (PFM gray and RGB; EXR half and float, uncompressed and ZIP, Y, RGB, RGBA)
    # and answer format; the metrics count lent frames (the second round all lent, once the
    # first made the buffers); frames cut after their header give their buffer back.
    frames = float_frames()
    if not check("float frames made by the CLI", all(b for _, b in frames)):
        return
    queries = ["/v1/bloom?threshold=0.5&kernel_preset=gaussian:sigma=2",
               "/v1/bloom?threshold=0.4&kernel_preset=gaussian:sigma=2&format=pfm",
               "/v1/convolve?kernel_preset=gaussian:sigma=1.5&method=fft&format=exr"]
    answers = {}
    for lease in ("false", "true"):
        d = Daemon("--float-upload-lease=" + lease, "--borrow-plans=false", "--codec-threads", "2")
        try:
            st, _, body = d.req("GET", "/v1/info")
            info = json.loads(body) if st == 200 else {}
            check("float lease %s: /v1/info's configuration says so" % lease,
                  info.get("configuration", {}).get("float-upload-lease") == lease, st)
            for rnd in range(2):
                for qi, q in enumerate(queries):
                    for name, b in frames:
                        st, h, body = d.req("POST", q, body=b)
                        answers.setdefault((qi, name), []).append((lease, rnd, st, body))
            # NaN and infinity, counted by the decoder as it writes (lent pixels are not read)
            bad = rand_float(37, 53)
            bad[3, 5, 1], bad[30, 40, 2], bad[0, 0, 0] = np.nan, np.inf, -np.inf
            bad_pfm = open(write_pfm(os.path.join(TMP, "fl_bad.pfm"), bad), "rb").read()
            bad_exr = os.path.join(TMP, "fl_bad.exr")
            cli("convert", os.path.join(TMP, "fl_bad.pfm"), "-o", bad_exr, "--bits", "32")
            for name, b in (("pfm_nonfinite", bad_pfm), ("exr_nonfinite", open(bad_exr, "rb").read())):
                st, _, body = d.req("POST", queries[0], body=b)
                answers.setdefault((-1, name), []).append((lease, 0, st, body))
                check("float lease %s: %s refused 422 input_not_finite counting 3" % (lease, name),
                      st == 422 and err_of(body)[1] == "input_not_finite" and b"3 " in body,
                      (st, body[:200]))
            lent = d.metric("fftbloom_uploads_lent_total")
            n = len(frames) * len(queries)
            print("     float lease %s: frames lent %s of %d" % (lease, lent, 2 * n))
            if lease == "false":
                check("float lease false: no frame lent", lent == 0, lent)
                continue
            check("float lease true: the second round all lent (the buffers made in the first)",
                  n <= lent <= 2 * n, lent)
            # cut in the pixels: 422; an EXR's chunks are read after its buffer is taken (then
            # given back), a PFM's length is checked before
            st_up = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0].get("uploads", {})
            seq = [d.req("POST", queries[0], body=b[: len(b) - 200])[0]
                   for name, b in frames if name in ("pfm_rgb", "exr_float_none_rgb")]
            up = json.loads(d.req("GET", "/v1/info")[2])["gpus"][0].get("uploads", {})
            check("float frames cut in their pixels: 422, the EXR after taking a buffer, all back",
                  seq == [422, 422] and up.get("taken", 0) - st_up.get("taken", 0) == 1
                  and d.metric("fftbloom_upload_buffers_out") == 0,
                  (seq, st_up, up))
        finally:
            d.stop("float upload lease %s daemon" % lease)
    diff = [(k, [(a[0], a[1], a[2]) for a in v]) for k, v in answers.items()
            if len(v) != (2 if k[0] < 0 else 4) or
            any(a[2] != (422 if k[0] < 0 else 200) or a[3] != v[0][3] for a in v)]
    check("float answers with and without upload leases byte for byte the same (%d frames x %d "
          "queries x 2 rounds)" % (len(frames), len(queries)), not diff, diff[:3])

    # frames in overlap-save tiles (--gpu-frame-memory): the lent pixels read back through the
    # GPU, cut into tiles; the same answers as the copy path's tiles
    tiled = {}
    for lease in ("false", "true"):
        d = Daemon("--float-upload-lease=" + lease, "--gpu-frame-memory", "%d" % TILED_FRAME_MEMORY,
                   "--log-level", "debug")
        try:
            for rnd in range(2):
                for name, b in frames:
                    st, h, body = d.req("POST", queries[0], body=b)
                    tiled.setdefault(name, []).append((lease, rnd, st, body))
            lent = d.metric("fftbloom_uploads_lent_total")
            print("     tiles, float lease %s: frames lent %s of %d" % (lease, lent, 2 * len(frames)))
            check("tiles, float lease %s: %s" % (lease, "some frames lent" if lease == "true"
                                                 else "none lent"),
                  (lent >= len(frames)) if lease == "true" else lent == 0, lent)
        finally:
            log = d.stop("float upload lease %s daemon, tiles" % lease)
        check("tiles, float lease %s: the frames ran in tiles (debug log)" % lease,
              (log or "").count(" tiles of ") >= 2 * len(frames), (log or "")[-300:])
    diff = [(k, [(a[0], a[1], a[2]) for a in v]) for k, v in tiled.items()
            if len(v) != 4 or any(a[2] != 200 or a[3] != v[0][3] for a in v)]
    check("float answers in tiles with and without upload leases byte for byte the same",
          not diff, diff[:3])


def waves(h, w, grain_r, grain_g):
    """An h x w 8-bit RGB picture: a horizontal sine in red, a vertical cosine in green (each
    with uniform grain of the given amplitude), a diagonal sawtooth in blue."""
    yy, xx = np.mgrid[0:h, 0:w]
    return np.stack([(np.sin(xx / 9.0) + 1) * 110 + RNG.random((h, w)) * grain_r,
                     (np.cos(yy / 7.0) + 1) * 100 + RNG.random((h, w)) * grain_g,
                     ((xx + yy) % 64) * 3.5], axis=2).clip(0, 255).astype(np.uint8)


def test_jpeg_gpu_dct():
    # --jpeg-gpu-dct (on by default): a JPEG answer's DCT and quantisation run on the GPU and the
    # codec thread only entropy-codes. Against the same daemon with it off (libjpeg-turbo's own
    # accurate DCT on the CPU), each answer decodes to the same size and loses no more than
    # 0.1 dB PSNR against the float result, at qualities 50, 90 and 100, colour 4:4:4 and 4:2:0
    # and gray; the engine digest behind ETags differs (the option changes an answer's bytes).
    # --jpeg-gpu-entropy (on by default) codes the coefficients on the GPU too: against a daemon
    # with it off (libjpeg codes the same coefficients), the answer decodes to the same pixels,
    # carries a restart marker between rows of blocks, and the digests differ; /metrics counts
    # the coded answers, and a noise frame at quality 100 (rows past the GPU's room) as a
    # fallback whose answer is libjpeg's, byte for byte the other daemon's.
    import cv2
    img = waves(120, 200, 30, 50)
    img[40:48, 90:98] = 255
    colour, gray = jpg_bytes(img), jpg_bytes(img[:, :, 1])
    q = "/v1/bloom?threshold=0.5&intensity=0.6&kernel_preset=gaussian:sigma=3"
    for sub in ("444", "420"):
        on = Daemon("--jpeg-subsampling", sub)
        off = Daemon("--jpeg-subsampling", sub, "--jpeg-gpu-dct=false")
        cpu = Daemon("--jpeg-subsampling", sub, "--jpeg-gpu-entropy=false")
        try:
            e1, e2, e3 = (json.loads(x.req("GET", "/v1/info")[2]).get("engine_digest")
                          for x in (on, off, cpu))
            check("%s: the engine digest (ETags) differs between the three" % sub,
                  e1 and len({e1, e2, e3}) == 3, (e1, e2, e3))
            fell = 0  # answers whose rows did not fit the GPU's room (dense ones at quality 100)
            for name, body in (("colour", colour), ("gray", gray)):
                st, hf, fl = on.req("POST", q + "&format=pfm", body=body)
                if st != 200:
                    check("%s %s: float result" % (sub, name), False, (st, fl[:200]))
                    continue
                lin = np.clip(read_pfm(fl), 0, 1)
                srgb = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055) * 255
                if srgb.ndim == 3 and srgb.shape[2] == 1:
                    srgb = srgb[:, :, 0]

                def psnr(body):
                    a = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_UNCHANGED)
                    a = a[:, :, ::-1] if a.ndim == 3 else a
                    if a.shape[:2] != srgb.shape[:2]:
                        return -1.0
                    mse = float(((a.astype(np.float64) - srgb) ** 2).mean())
                    return 10 * np.log10(255.0 ** 2 / mse) if mse > 0 else 99.0
                for quality in (50, 90, 100):
                    qq = q + "&format=jpeg&quality=%d" % quality
                    s1, h1, b1 = on.req("POST", qq, body=body)
                    s2, h2, b2 = off.req("POST", qq, body=body)
                    ok = s1 == 200 and s2 == 200
                    pg, pc = (psnr(b1), psnr(b2)) if ok else (0, 0)
                    print("     %s %s q %d: GPU DCT %.2f dB (%d bytes), CPU DCT %.2f dB (%d bytes)"
                          % (sub, name, quality, pg, len(b1), pc, len(b2)))
                    check("%s %s q %d: GPU DCT answer within 0.1 dB of the CPU's" % (sub, name, quality),
                          ok and pg >= pc - 0.1 and pc > 20, (s1, s2, pg, pc))
                    check("%s %s q %d: same lost report" % (sub, name, quality),
                          ok and h1.get("x-image-lost") == h2.get("x-image-lost"), (h1, h2))
                    s3, h3, b3 = cpu.req("POST", qq, body=body)
                    same = False
                    if ok and s3 == 200:
                        a1, a3 = (cv2.imdecode(np.frombuffer(x, np.uint8), cv2.IMREAD_UNCHANGED)
                                  for x in (b1, b3))
                        same = a1 is not None and a3 is not None and np.array_equal(a1, a3)
                    coded = b"\xff\xd0" in b1
                    fell += 0 if coded else 1
                    check("%s %s q %d: %s, the same pixels as coded by libjpeg (%d against %d bytes)"
                          % (sub, name, quality, "coded on the GPU with restart markers" if coded
                             else "fell back to libjpeg's coding, byte for byte", len(b1), len(b3)),
                          same and b"\xff\xd0" not in b3 and (coded or b1 == b3)
                          and (coded or quality == 100), (s3, len(b3)))
            scans = on.metric("fftbloom_jpeg_scans_total")
            falls = on.metric("fftbloom_jpeg_scan_fallbacks_total")
            check("%s: /metrics counts the answers coded on the GPU (%s) and the fallbacks (%s)"
                  % (sub, scans, falls), scans == 6 - fell and falls == fell, (scans, falls, fell))
            noise = jpg_bytes(((RNG.random((64, 96, 3)) > 0.5) * 255).astype(np.uint8))
            qn = q + "&format=jpeg&quality=100"
            s1, _, b1 = on.req("POST", qn, body=noise)
            s3, _, b3 = cpu.req("POST", qn, body=noise)
            falls = on.metric("fftbloom_jpeg_scan_fallbacks_total")
            check("%s: noise at quality 100 falls back to libjpeg's coding (counted: %s), the "
                  "same bytes as the daemon that never codes on the GPU" % (sub, falls),
                  s1 == 200 and s3 == 200 and b1 == b3 and falls == fell + 1,
                  (s1, s3, len(b1), len(b3)))
        finally:
            on.stop("gpu dct daemon %s" % sub)
            off.stop("cpu dct daemon %s" % sub)
            cpu.stop("cpu entropy daemon %s" % sub)


def test_jpeg_gpu_idct():
    # --jpeg-gpu-idct (on by default): JPEG frames decoded to their DCT coefficients, the inverse
    # DCT on the GPU. Against a daemon with it off (libjpeg's planes): the same float results within 3 codes (a
    # sample of Y, Cb or Cr 1 off between the inverse DCTs moves a pixel up to 2.8; often the
    # same bits, where no sample differs), for 4:2:0 and 4:4:4 colour, gray and progressive
    # frames; /metrics and /v1/info count the coefficient frames (so the path ran); binary noise
    # at quality 100 (more than two coefficients a block past 8 bits) is decoded to planes,
    # uncounted, the same bits as the other daemon's; a cut frame gets the planes daemon's status; the engine
    # digests differ.
    import cv2
    img = waves(90, 130, 8, 10)
    frames = {
        "420": jpg_bytes(img),
        "444": jpg444_bytes(img[:, :, ::-1], "idct444"),
        "gray": jpg_bytes(img[:, :, 1]),
        "progressive": cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes(),
    }
    q = "/v1/bloom?threshold=0.5&intensity=0.6&kernel_preset=gaussian:sigma=3&format=pfm"
    on = Daemon()  # the default
    off = Daemon("--jpeg-gpu-idct=false")
    try:
        e1, e2 = (json.loads(x.req("GET", "/v1/info")[2]).get("engine_digest") for x in (on, off))
        check("--jpeg-gpu-idct: the engine digest differs", e1 and e2 and e1 != e2, (e1, e2))
        for name, body in frames.items():
            s1, _, b1 = on.req("POST", q, body=body)
            s2, _, b2 = off.req("POST", q, body=body)
            ok = s1 == 200 and s2 == 200
            d, same = -1.0, True
            if ok:
                a, b = (np.clip(read_pfm(x), 0, 1) for x in (b1, b2))
                ca, cb = (np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1 / 2.4) - 0.055) * 255
                          for x in (a, b))
                d = float(np.abs(ca - cb).max()) if a.shape == b.shape else 99.0
                same = b1 == b2
            print("     %s: %.3f codes from the planes daemon's%s" % (name, d, ", the same bits"
                                                                     if same else ""))
            check("--jpeg-gpu-idct %s: within 3 codes of libjpeg's planes" % name,
                  ok and 0 <= d <= 3.0, (s1, s2, d))
        n = on.metric("fftbloom_jpeg_coef_frames_total")
        info = json.loads(on.req("GET", "/v1/info")[2])
        ni = sum(g.get("jpeg_coef_frames", 0) for g in info.get("gpus", []))
        check("/metrics and /v1/info count the %d coefficient frames (%s, %s)" % (len(frames), n, ni),
              n == len(frames) and ni == len(frames), (n, ni))
        noise = cv2.imencode(".jpg", ((RNG.random((64, 96, 3)) > 0.5) * 255).astype(np.uint8),
                             [cv2.IMWRITE_JPEG_QUALITY, 100])[1].tobytes()
        s1, _, b1 = on.req("POST", q, body=noise)
        s2, _, b2 = off.req("POST", q, body=noise)
        n2 = on.metric("fftbloom_jpeg_coef_frames_total")
        check("binary noise at quality 100 (past two wide coefficients a block): decoded to "
              "planes, uncounted, the "
              "same bits as the other daemon's", s1 == 200 and s2 == 200 and b1 == b2 and n2 == n,
              (s1, s2, n2, n))
        cut = frames["420"][: len(frames["420"]) * 2 // 3]
        s1, _, b1 = on.req("POST", q, body=cut)
        s2, _, b2 = off.req("POST", q, body=cut)
        check("a cut frame: %d as from the planes daemon, with the decoder's reason" % s2,
              s1 == s2 and s1 in (400, 422) and b"truncated" in b1, (s1, s2, b1[:200]))
    finally:
        on.stop("gpu idct daemon")
        off.stop("planes daemon")


def cjpeg_bytes(a8, *args):
    """A JPEG of a8 (RGB) made by libjpeg-turbo's cjpeg with args."""
    h, w = a8.shape[:2]
    ppm = b"P6\n%d %d\n255\n" % (w, h) + a8.astype(np.uint8).tobytes()
    return subprocess.run(["cjpeg"] + list(args), input=ppm, capture_output=True,
                          check=True).stdout


def test_jpeg_gpu_entropy_decode():
    # --jpeg-gpu-entropy-decode: a baseline JPEG's scan entropy-decoded on the GPU. Against a
    # daemon without it (the default: libjpeg's coefficients): the same bits for 4:2:0, 4:4:4
    # with restart markers, and gray frames; /metrics counts them as entropy="gpu" (the other
    # daemon's as "cpu") and /v1/info the same; a progressive frame is libjpeg's ("cpu"); a
    # corrupt scan (bytes garbled) and a cut one get the other daemon's answer.
    import cv2
    img = waves(90, 130, 8, 10)
    frames = {
        "420": jpg_bytes(img),
        "444 restart": cjpeg_bytes(img, "-sample", "1x1", "-restart", "3B", "-quality", "90"),
        "gray": jpg_bytes(img[:, :, 1]),
    }
    prog = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    q = "/v1/bloom?threshold=0.5&intensity=0.6&kernel_preset=gaussian:sigma=3&format=pfm"
    on = Daemon("--jpeg-gpu-entropy-decode")
    off = Daemon()  # the default
    try:
        for name, body in frames.items():
            s1, _, b1 = on.req("POST", q, body=body)
            s2, _, b2 = off.req("POST", q, body=body)
            check("--jpeg-gpu-entropy-decode %s: the same image as libjpeg's entropy decoding"
                  % name, s1 == 200 and s2 == 200 and b1 == b2, (s1, s2))
        n = on.metric('fftbloom_jpeg_decode_frames_total{entropy="gpu"}')
        c = off.metric('fftbloom_jpeg_decode_frames_total{entropy="cpu"}')
        info = json.loads(on.req("GET", "/v1/info")[2])
        ni = sum(g.get("jpeg_decode_frames", {}).get("gpu", 0) for g in info.get("gpus", []))
        check("/metrics and /v1/info count %d frames entropy-decoded on the GPU (%s, %s), the "
              "other daemon's on the CPU (%s)" % (len(frames), n, ni, c),
              n == len(frames) and ni == len(frames) and c == len(frames), (n, ni, c))
        s1, _, b1 = on.req("POST", q, body=prog)
        nc = on.metric('fftbloom_jpeg_decode_frames_total{entropy="cpu"}')
        check("a progressive frame: libjpeg's entropy decoding, counted \"cpu\"",
              s1 == 200 and nc == 1, (s1, nc))
        body = bytearray(frames["420"])
        at = body.index(b"\xff\xda") + 20
        for i in range(at + 40, at + 48):
            body[i] = 0x55 if body[i - 1] != 0xFF else 0x00
        cut = frames["444 restart"][: len(frames["444 restart"]) * 2 // 3]
        # a scan without restart markers cut and closed with EOI: the parser takes it, the GPU
        # finds blocks missing, and libjpeg decodes it again (its "truncated" answer)
        closed = frames["420"][: len(frames["420"]) * 2 // 3] + b"\xff\xd9"
        for name, bad in (("garbled", bytes(body)), ("cut", cut), ("cut and closed", closed)):
            s1, _, b1 = on.req("POST", q, body=bad)
            s2, _, b2 = off.req("POST", q, body=bad)
            check("a %s scan: the other daemon's answer (%d)" % (name, s2),
                  s1 == s2 and (s1 != 200 or b1 == b2), (s1, s2, b1[:120]))
    finally:
        on.stop("gpu entropy decode daemon")
        off.stop("libjpeg entropy decode daemon")
    # a frame in tiles (--gpu-frame-memory): libjpeg decodes it on the GPU thread, the same image
    on = Daemon("--jpeg-gpu-entropy-decode", "--gpu-frame-memory", "1M")
    off = Daemon("--gpu-frame-memory", "1M")
    try:
        body = cjpeg_bytes(waves(240, 320, 8, 10), "-quality", "90")
        s1, h1, b1 = on.req("POST", q, body=body)
        s2, _, b2 = off.req("POST", q, body=body)
        n = on.metric('fftbloom_jpeg_decode_frames_total{entropy="cpu"}')
        check("a frame in tiles (%s): libjpeg's entropy decoding, the same image, counted \"cpu\""
              % h1.get("x-tiles"), s1 == 200 and s2 == 200 and b1 == b2 and "x-tiles" in h1
              and n == 1, (s1, s2, h1.get("x-tiles"), n))
    finally:
        on.stop("gpu entropy decode daemon in tiles")
        off.stop("libjpeg entropy decode daemon in tiles")


def test_tls():
    if not shutil.which("openssl"):
        print("skip TLS: no openssl")
        return
    cert, key = os.path.join(TMP, "c.pem"), os.path.join(TMP, "k.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], capture_output=True)
    if r.returncode:
        print("skip TLS: openssl failed")
        return
    d = Daemon("--tls-cert", cert, "--tls-key", key, tls=True)
    try:
        st, h, body = d.req("GET", "/healthz")
        check("HTTPS /healthz", st == 200, st)
        st, h, body = d.req("POST", "/v1/bloom?format=png", body=png_bytes(rand8()))
        check("HTTPS bloom", st == 200 and body[:4] == b"\x89PNG", st)
        check("log says https", "listening on https://" in d.log())
    finally:
        d.stop("TLS daemon")


def test_request_rules():
    """One set of rules however a parameter comes in (query, form field, params JSON)."""
    d = Daemon()
    try:
        img = png_bytes(rand8())

        def bad(path, want_code, *texts, body=None, ctype=None):
            st, h, b = d.req("POST", path, body=img if body is None else body,
                             headers={"Content-Type": ctype} if ctype else {})
            s_, code, msg = err_of(b)
            ok = st == 400 and code == want_code and all(t in msg for t in texts)
            check("%s: 400 %s naming %s" % (path, want_code, ", ".join(texts)), ok, (st, b[:300]))

        bad("/v1/bloom?kernel_preset=glare:blades=6", "bad_parameter", "glare has no key 'blades'",
            "streaks=")
        bad("/v1/bloom?kernel_preset=sparkle", "bad_parameter", "gaussian, glare, aperture")
        bad("/v1/bloom?threshold=0.5&threshold=0.6", "bad_parameter", "threshold given twice")
        bad("/v1/convolve?threshold=0.5", "bad_parameter", "threshold", "convolve does not take it")
        bad("/v1/convolve?intensity=2", "bad_parameter", "intensity")
        body, ct = multipart([("image", img, "image/png"),
                              ("params", b'{"threshold": 0.7}', "application/json")])
        bad("/v1/bloom?threshold=0.5", "bad_parameter", "threshold given twice",
            "query string", "params", body=body, ctype=ct)
        k = write_pfm(os.path.join(TMP, "k3.pfm"), np.ones((3, 3), np.float32))
        body, ct = multipart([("image", img, "image/png"), ("kernel", open(k, "rb").read(),
                                                             "image/x-portable-floatmap")])
        bad("/v1/bloom?kernel_preset=gaussian", "bad_parameter", "kernel", "kernel_preset",
            body=body, ctype=ct)
        # an HTML form: every parameter a field of its own, the image as "file"
        b = "----f%x" % RNG.integers(1 << 60)
        form = b""
        for name, val in (("threshold", b"0.5"), ("intensity", b"3"), ("format", b"png"),
                          ("kernel_preset", b"gaussian:sigma=2")):
            form += (b"--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                     % (b.encode(), name.encode(), val))
        form += (b"--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.png\"\r\n"
                 b"Content-Type: image/png\r\n\r\n" % b.encode()) + img + b"\r\n--%s--\r\n" % b.encode()
        st, h, got = d.req("POST", "/v1/bloom", body=form,
                           headers={"Content-Type": "multipart/form-data; boundary=" + b})
        st2, h2, want = d.req("POST", "/v1/bloom?threshold=0.5&intensity=3&format=png&"
                              "kernel_preset=gaussian:sigma=2", body=img)
        check("an HTML form (fields and 'file') gives what the query gives", st == 200 and st2 == 200
              and got == want, (st, st2, got[:100]))
        form2 = form.replace(b'name="intensity"', b'name="threshold"', 1)
        st, h, b2 = d.req("POST", "/v1/bloom", body=form2,
                          headers={"Content-Type": "multipart/form-data; boundary=" + b})
        check("a form field named twice: 400 naming it", st == 400 and
              "'threshold' is given twice" in err_of(b2)[2], (st, b2[:200]))
        st, h, b2 = d.req("POST", "/v1/bloom?threshold=0.5", body=form,
                          headers={"Content-Type": "multipart/form-data; boundary=" + b})
        check("a parameter in the query and a form field: 400 naming both", st == 400 and
              "in the query string and in the form fields" in err_of(b2)[2], (st, b2[:200]))
    finally:
        d.stop("request rules daemon")


def npy_bytes(a):
    import io
    b = io.BytesIO()
    np.save(b, np.asarray(a))
    return b.getvalue()


def npy_load(data):
    import io
    return np.load(io.BytesIO(data))


def conv2d_ref(x, w, b=None, pad=(0, 0), stride=(1, 1), dil=(1, 1), groups=1):
    """torch.nn.functional.conv2d in float64: cross-correlation, zero padding."""
    x = np.asarray(x, np.float64)
    three = x.ndim == 3
    if three:
        x = x[None]
    B, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    xp = np.zeros((B, C, H + 2 * pad[0], W + 2 * pad[1]))
    xp[:, :, pad[0]:pad[0] + H, pad[1]:pad[1] + W] = x
    oh = (H + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (W + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((B, O, oh, ow))
    og = O // groups
    for o in range(O):
        g = o // og
        for c in range(Cg):
            for i in range(kh):
                for j in range(kw):
                    y[:, o] += w[o, c, i, j] * xp[:, g * Cg + c, i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                                                  j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
        if b is not None:
            y[:, o] += b[o]
    return y[0] if three else y


def test_convolve_methods():
    """/v1/convolve by the FFT, by the direct convolution and by the cost model's choice: the
    same linear convolution (numpy's direct one in float64)."""
    d = Daemon()
    try:
        img = rand_float(40, 56)
        k = (RNG.random((5, 7)) * 0.2).astype(np.float32)
        ref = direct_convolve(img.astype(np.float64), k.astype(np.float64))
        body, ct = multipart([("image", open(write_pfm(os.path.join(TMP, "cm.pfm"), img), "rb").read(),
                               "image/x-portable-floatmap"),
                              ("kernel", open(write_pfm(os.path.join(TMP, "ck.pfm"), k), "rb").read(),
                               "image/x-portable-floatmap")])
        seen = {}
        for m in ("fft", "spatial", "auto"):
            st, h, b = d.req("POST", "/v1/convolve?format=pfm&method=" + m, body=body,
                             headers={"Content-Type": ct})
            seen[m] = h.get("x-convolve-method")
            close_enough("convolve method=%s (ran: %s)" % (m, seen[m]),
                         read_pfm(b) if st == 200 else None, ref, 1e-5)
        check("X-Convolve-Method says which path ran", seen["fft"] == "fft" and
              seen["spatial"] == "spatial" and seen["auto"] in ("fft", "spatial"), seen)
        st, h, b = d.req("POST", "/v1/convolve?format=pfm&method=spatial&kernel_scale=0.5",
                         body=body, headers={"Content-Type": ct})
        check("method=spatial with kernel_scale: 422 naming kernel_scale", st == 422 and
              "kernel_scale" in err_of(b)[2], (st, b[:200]))
        st, h, b = d.req("POST", "/v1/bloom?method=spatial", body=png_bytes(rand8()))
        check("method on /v1/bloom: 400 (convolve's)", st == 400, (st, b[:200]))
    finally:
        d.stop("convolve methods daemon")


def test_localhost():
    """--listen localhost (the default) serves IPv4's and IPv6's loopback on one port."""
    d = Daemon("--listen", "localhost")
    try:
        st4 = d.req("GET", "/healthz")[0]
        try:
            c = http.client.HTTPConnection("::1", d.port, timeout=10)
            c.request("GET", "/healthz")
            st6 = c.getresponse().status
            c.close()
        except OSError as e:
            st6 = str(e)
        six = socket.has_ipv6 and os.path.exists("/proc/net/if_inet6")
        check("localhost: 127.0.0.1 and [::1] on port %d both answer" % d.port,
              st4 == 200 and (st6 == 200 or not six), (st4, st6))
        check("the log says both", "(127.0.0.1 and ::1)" in d.log() or not six, d.log()[-300:])
    finally:
        d.stop("localhost daemon")


def test_port_in_use():
    """A port another socket listens on: fftbloomd says "port N in use" plainly (no talk of TLS
    when none is configured) and exits before it makes a GPU context; --listen localhost too."""
    for listen in ("127.0.0.1", "localhost"):
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        try:
            p = subprocess.run([DAEMON, "--listen", listen, "--port", str(port)],
                               capture_output=True, text=True, timeout=120)
        finally:
            holder.close()
        log = p.stdout + p.stderr
        check("--listen %s on a port in use: exit 1, 'port %d in use'" % (listen, port),
              p.returncode == 1 and ("port %d in use on 127.0.0.1" % port) in log and
              "TLS" not in log, (p.returncode, log[-600:]))
        check("... said before any GPU context is made", "gpu 0:" not in log and
              "GPU context" not in log, log[-600:])


def test_tensors():
    """POST /v1/conv2d and /v1/conv2d_transpose: NPY in and out, against float64 references."""
    d = Daemon()
    try:
        def post(path, parts, query=""):
            body, ct = multipart([(k, v, "application/octet-stream" if k != "params" else
                                   "application/json") for k, v in parts])
            return d.req("POST", path + query, body=body, headers={"Content-Type": ct})
        for (B, C, H, W, O, k, pad, stride, groups, bias) in [(2, 3, 13, 11, 4, (3, 3), (1, 1), (1, 1), 1, True),
                                                             (1, 4, 9, 9, 2, (5, 3), (2, 0), (2, 3), 2, False),
                                                             (0, 3, 8, 10, 3, (1, 1), (0, 0), (1, 1), 1, True)]:
            x = RNG.standard_normal((B, C, H, W) if B else (C, H, W)).astype(np.float32)
            w = RNG.standard_normal((O, C // groups) + k).astype(np.float32)
            b = RNG.standard_normal(O).astype(np.float32) if bias else None
            parts = [("input", npy_bytes(x)), ("weight", npy_bytes(w))]
            if bias:
                parts.append(("bias", npy_bytes(b)))
            parts.append(("params", json.dumps({"padding": "%d,%d" % pad, "stride": "%d,%d" % stride,
                                                "groups": groups}).encode()))
            st, h, body = post("/v1/conv2d", parts)
            ok = st == 200 and h.get("content-type") == "application/x-npy"
            y = npy_load(body) if ok else None
            ref = conv2d_ref(x, w, b, pad, stride, (1, 1), groups)
            close_enough("conv2d over HTTP %s weight %s pad %s stride %s groups %d" % (
                x.shape, w.shape, pad, stride, groups), y if ok else None, ref, 1e-5)
            check("conv2d over HTTP: Server-Timing's gpu_copy (the upload and the read-back) "
                  "within gpu and above 0", timing_parts_ok(h) and timings(h)["gpu_copy"] > 0,
                  h.get("server-timing"))
        # the transposed convolution's worked example (stride 2: a 5x5 answer), as float64 in
        x = np.array([[[[1, 2], [3, 4]]]], np.float64)
        w = np.arange(1, 10, dtype=np.float64).reshape(1, 1, 3, 3)
        st, h, body = post("/v1/conv2d_transpose", [("input", npy_bytes(x)), ("weight", npy_bytes(w))],
                           "?stride=2&method=overlap-add")
        want = np.array([[1, 2, 5, 4, 6], [4, 5, 14, 10, 12], [10, 14, 36, 24, 30],
                         [12, 15, 34, 20, 24], [21, 24, 55, 32, 36]], np.float64)
        got = npy_load(body) if st == 200 else None
        check("conv2d_transpose over HTTP: the worked example", got is not None and got.shape ==
              (1, 1, 5, 5) and np.array_equal(got[0, 0], want), (st, body[:200]))
        check("conv2d_transpose over HTTP: Server-Timing's gpu_copy within gpu and above 0",
              timing_parts_ok(h) and timings(h)["gpu_copy"] > 0, h.get("server-timing"))
        st, h, body = post("/v1/conv2d_transpose", [("input", npy_bytes(x)), ("weight", npy_bytes(w)),
                           ("padding_mode", b"tf_same"), ("output_shape", b"4,4"), ("stride", b"2")])
        got = npy_load(body) if st == 200 else None
        check("conv2d_transpose TF SAME 4x4 as form fields", got is not None and np.array_equal(
            got[0, 0], want[:4, :4]), (st, body[:200]))
        # what a client gets wrong
        x = RNG.standard_normal((3, 8, 8)).astype(np.float32)
        w = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
        st, h, body = post("/v1/conv2d", [("input", npy_bytes(x)), ("weight", npy_bytes(w))])
        check("conv2d: weight planes not matching the input: 422 invalid_shape",
              st == 422 and err_of(body)[1] == "invalid_shape" and "input planes" in err_of(body)[2],
              (st, body[:300]))
        w = RNG.standard_normal((2, 3, 9, 9)).astype(np.float32)
        st, h, body = post("/v1/conv2d", [("input", npy_bytes(x)), ("weight", npy_bytes(w))])
        check("conv2d: an output below 1x1: 422", st == 422, (st, body[:300]))
        st, h, body = post("/v1/conv2d", [("input", npy_bytes(x))])
        check("conv2d without a weight: 400 missing_tensor", st == 400 and
              err_of(body)[1] == "missing_tensor", (st, body[:200]))
        st, h, body = post("/v1/conv2d", [("input", npy_bytes(x)), ("weight", npy_bytes(w))],
                           "?threshold=1")
        check("conv2d with a bloom parameter: 400 naming it", st == 400 and "threshold" in
              err_of(body)[2], (st, body[:200]))
        st, h, body = post("/v1/conv2d", [("input", b"not an npy"), ("weight", npy_bytes(w))])
        check("conv2d with a broken NPY: 422", st == 422, (st, body[:200]))
        st, h, body = d.req("POST", "/v1/conv2d", body=npy_bytes(x))
        check("conv2d with a raw body: 415 asking for multipart", st == 415, (st, body[:200]))
    finally:
        d.stop("tensor daemon")


# Browsers' Accept for images (an <img>): Chrome 120+, Firefox 128+, Safari 17
BROWSER_ACCEPT = {
    "chrome": "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
    "firefox": "image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
    "safari": "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,"
              "image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
}


def decode_webp(data):
    """A WebP answer through OpenCV (libwebp's decoder): BGR(A) uint8."""
    import cv2
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)


def decode_avif(data):
    """An AVIF answer through libheif's heif-convert (its own container parser and AV1 decoder,
    not libavif): BGR(A), uint8, or uint16 for 10/12 bits."""
    import cv2
    src, dst = os.path.join(TMP, "answer.avif"), os.path.join(TMP, "answer_heif.png")
    open(src, "wb").write(data)
    if os.path.exists(dst):
        os.unlink(dst)
    r = subprocess.run(["heif-convert", src, dst], capture_output=True, text=True, timeout=60)
    if r.returncode:
        print("     heif-convert: rc %d %s" % (r.returncode, r.stdout[-300:] + r.stderr[-300:]))
        return None
    return cv2.imread(dst, cv2.IMREAD_UNCHANGED)


def srgb8(lin):
    lin = np.clip(lin, 0, 1)
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055) * 255


def psnr8(got_rgb, ref_rgb):
    mse = float(((np.asarray(got_rgb, np.float64) - ref_rgb) ** 2).mean())
    return 10 * np.log10(255.0 ** 2 / mse) if mse > 0 else 99.0


def vary_of(h):
    """The field names an answer's Vary lists (a set; empty without one)."""
    return {v.strip() for v in h.get("vary", "").split(",") if v.strip()}


def test_formats():
    """WebP and AVIF answers, chosen by format= or by Accept; Vary: Accept; 406. CORS is on, so
    every answer also varies by Origin."""
    d = Daemon("--cors-origins", "http://app.example", "--codec-threads", "2")
    try:
        a8 = rand8()
        jb = jpg_bytes(a8)
        q = "threshold=0.6&intensity=0.8&kernel_preset=gaussian:sigma=2"
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=pfm", body=jb)
        ref = srgb8(read_pfm(body))[:, :, ::-1] if st == 200 else None  # BGR, as OpenCV
        check("formats: the float answer", st == 200, (st, body[:200]))

        # format=: the type asked for, decoded by another program, and no Vary (Accept had no say)
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=webp", body=jb,
                            headers={"Accept": "image/gif"})
        ok = st == 200 and h.get("content-type") == "image/webp" and body[8:12] == b"WEBP"
        check("format=webp: image/webp, whatever Accept says", ok, (st, h, body[:16]))
        if ok:
            got = decode_webp(body)
            p = psnr8(got, ref)
            print("     format=webp (quality 79) against the float answer: PSNR %.1f dB" % p)
            # the input is noise: WebP's 4:2:0 chroma costs it most (a wrong picture is ~10 dB)
            check("format=webp decodes (OpenCV) close to the float answer", p >= 25, p)
            check("format=webp: no Vary: Accept (Origin alone)", vary_of(h) == {"Origin"}, h)
            check("format=webp of an 8-bit input: no precision reported lost",
                  "precision" not in h.get("x-image-lost", ""), h)
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=avif", body=jb)
        ok = st == 200 and h.get("content-type") == "image/avif" and body[4:12] == b"ftypavif"
        check("format=avif: image/avif", ok, (st, h, body[:16]))
        if ok:
            got = decode_avif(body)
            p = psnr8(got, ref) if got is not None and got.shape == ref.shape else 0
            print("     format=avif (quality 63) against the float answer: PSNR %.1f dB" % p)
            check("format=avif decodes (libheif) close to the float answer", p >= 30, p)
            check("format=avif: no Vary: Accept (Origin alone)", vary_of(h) == {"Origin"}, h)
        # quality=100: lossless WebP, the same codes as the 8-bit PNG answer
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=webp&quality=100", body=jb)
        st2, h2, png8 = d.req("POST", "/v1/bloom?" + q + "&format=png", body=jb)
        if st == 200 and st2 == 200:
            import cv2
            want = cv2.imdecode(np.frombuffer(png8, np.uint8), cv2.IMREAD_UNCHANGED)
            check("format=webp&quality=100 is lossless (== the PNG answer)",
                  np.array_equal(decode_webp(body), want), (h.get("x-image-lost"),))
            check("format=png: no Vary: Accept (Origin alone)", vary_of(h2) == {"Origin"}, h2)
        else:
            check("format=webp&quality=100", False, (st, st2))
        st, h, small = d.req("POST", "/v1/bloom?" + q + "&format=webp&quality=20", body=jb)
        st2, h, big = d.req("POST", "/v1/bloom?" + q + "&format=webp", body=jb)
        check("quality=20 WebP is smaller than the default", st == st2 == 200 and
              len(small) < len(big), (len(small), len(big)))

        # alpha survives: an RGBA PNG's alpha, as the 8-bit PNG answer has it
        import cv2
        rgba = np.dstack([a8, (RNG.random(a8.shape[:2]) * 255).astype(np.uint8)])
        pb = png_bytes(rgba)
        st, h, png_ans = d.req("POST", "/v1/bloom?" + q + "&format=png", body=pb)
        want = cv2.imdecode(np.frombuffer(png_ans, np.uint8), cv2.IMREAD_UNCHANGED)
        st1, h1, wb = d.req("POST", "/v1/bloom?" + q + "&format=webp", body=pb)
        st2, h2, ab = d.req("POST", "/v1/bloom?" + q + "&format=avif", body=pb)
        gw = decode_webp(wb) if st1 == 200 else None
        ga = decode_avif(ab) if st2 == 200 else None
        check("WebP keeps alpha exactly", gw is not None and gw.shape == want.shape and
              np.array_equal(gw[:, :, 3], want[:, :, 3]), None if gw is None else gw.shape)
        check("AVIF keeps alpha exactly", ga is not None and ga.shape == want.shape and
              np.array_equal(ga[:, :, 3], want[:, :, 3]), None if ga is None else ga.shape)
        check("WebP and AVIF report no alpha lost", "alpha" not in h1.get("x-image-lost", "") and
              "alpha" not in h2.get("x-image-lost", ""), (h1, h2))
        # deeper AVIF: a 16-bit PNG through format=avif10 holds 10-bit samples
        a16 = (RNG.random((48, 64, 3)) * 65535).astype(np.uint16)
        st, h, body = d.req("POST", "/v1/bloom?" + q + "&format=avif10", body=png_bytes(a16))
        got = decode_avif(body) if st == 200 else None
        check("format=avif10: a 10-bit AVIF (libheif gives 16-bit samples)", got is not None and
              got.dtype == np.uint16 and int(got.max()) > 255, (st, None if got is None else got.dtype))

        # Accept: browsers get WebP (no --auto-avif), with Vary: Accept
        for name, acc in BROWSER_ACCEPT.items():
            st, h, body = d.req("POST", "/v1/bloom?" + q, body=jb, headers={"Accept": acc})
            check("%s's Accept: image/webp, Vary: Accept" % name, st == 200 and
                  h.get("content-type") == "image/webp" and body[8:12] == b"WEBP" and
                  vary_of(h) == {"Origin", "Accept"}, (st, h))
        st, h, body = d.req("POST", "/v1/bloom?" + q, body=jb,
                            headers={"Accept": BROWSER_ACCEPT["chrome"],
                                     "Origin": "http://app.example"})
        check("CORS and Accept: one Vary field, Origin, Accept", st == 200 and
              vary_of(h) == {"Origin", "Accept"}, h)
        st, h, body = d.req("POST", "/v1/bloom?" + q, body=jb)
        check("no Accept: the input's family (JPEG), Vary: Accept", st == 200 and
              h.get("content-type") == "image/jpeg" and vary_of(h) == {"Origin", "Accept"}, (st, h))
        for acc in ("*/*", "image/*"):
            st, h, body = d.req("POST", "/v1/bloom?" + q, body=jb, headers={"Accept": acc})
            check("Accept: %s: the input's family, Vary: Accept" % acc, st == 200 and
                  h.get("content-type") == "image/jpeg" and vary_of(h) == {"Origin", "Accept"}, (st, h))
        st, h, body = d.req("POST", "/v1/bloom?" + q, body=jb, headers={"Accept": "image/avif"})
        check("Accept: image/avif alone gets AVIF without --auto-avif", st == 200 and
              h.get("content-type") == "image/avif", (st, h))
        # nothing acceptable: 406 listing what can be made
        for acc in ("image/gif", "image/*;q=0", "text/html, application/json"):
            st, h, body = d.req("POST", "/v1/bloom?" + q, body=jb, headers={"Accept": acc})
            e = json.loads(body).get("error", {}) if st == 406 else {}
            check("Accept: %s: 406 listing the types made" % acc, st == 406 and
                  e.get("code") == "not_acceptable" and "image/webp" in e.get("formats", []) and
                  "image/avif" in e.get("formats", []) and "image/jpeg" in e.get("message", "") and
                  vary_of(h) == {"Origin", "Accept"} and h.get("content-type") == "application/json",
                  (st, h, body[:300]))
        mp, ct = multipart([("image", jb, "image/jpeg"), ("format", b"webp", "text/plain")])
        st, h, body = d.req("POST", "/v1/bloom", body=mp,
                            headers={"Content-Type": ct, "Accept": "image/gif"})
        check("format as a form field overrides Accept", st == 200 and
              h.get("content-type") == "image/webp" and vary_of(h) == {"Origin"}, (st, h))
        # WebP and AVIF inputs: their own family back
        ok, wbuf = cv2.imencode(".webp", a8)
        st, h, body = d.req("POST", "/v1/bloom?" + q, body=wbuf.tobytes())
        check("WebP in -> WebP out", st == 200 and h.get("content-type") == "image/webp", (st, h))
        st0, _, avif_in = d.req("POST", "/v1/bloom?" + q + "&format=avif", body=jb)
        st, h, body = d.req("POST", "/v1/bloom?" + q, body=avif_in)
        check("AVIF in -> AVIF out", st0 == 200 and st == 200 and
              h.get("content-type") == "image/avif", (st0, st, h))
        # wider than WebP's 16383: Accept falls back to the family, format=webp is refused
        wide = png_bytes((RNG.random((2, 16384, 3)) * 255).astype(np.uint8))
        k1 = open(write_pfm(os.path.join(TMP, "k1.pfm"), np.ones((1, 1, 3), np.float32)), "rb").read()
        mp, ct = multipart([("image", wide, "image/png"), ("kernel", k1, "application/octet-stream"),
                            ("method", b"spatial", "text/plain")])
        cq = "/v1/convolve"
        st, h, body = d.req("POST", cq, body=mp, headers={"Content-Type": ct,
                                                          "Accept": BROWSER_ACCEPT["chrome"]})
        check("16384 wide, Chrome's Accept: PNG (WebP cannot hold it)", st == 200 and
              h.get("content-type") == "image/png", (st, h, body[:200]))
        st, h, body = d.req("POST", cq + "?format=webp", body=mp, headers={"Content-Type": ct})
        check("16384 wide, format=webp: 422 too_large_for_format", st == 422 and
              err_of(body)[1] == "too_large_for_format" and "16383" in err_of(body)[2],
              (st, body[:300]))
        st, h, body = d.req("POST", "/v1/bloom", body=b"RIFF\x10\x00\x00\x00WEBPVP8 junk")
        check("a broken WebP: 422 naming webp", st == 422 and "webp" in err_of(body)[2], (st, body))
    finally:
        d.stop("formats daemon")
    d = Daemon("--auto-avif")
    try:
        jb = jpg_bytes(rand8())
        for name, acc in BROWSER_ACCEPT.items():
            st, h, body = d.req("POST", "/v1/bloom", body=jb, headers={"Accept": acc})
            check("--auto-avif: %s's Accept gets image/avif, Vary: Accept" % name, st == 200 and
                  h.get("content-type") == "image/avif" and h.get("vary") == "Accept", (st, h))
        st, h, body = d.req("POST", "/v1/bloom", body=jb,
                            headers={"Accept": "image/webp,image/*,*/*;q=0.8"})
        check("--auto-avif: a browser without AVIF gets WebP", st == 200 and
              h.get("content-type") == "image/webp", (st, h))
        st, h, body = d.req("GET", "/v1/info")
        check("/v1/info shows auto-avif", st == 200 and b"auto-avif" in body, body[:200])
    finally:
        d.stop("auto-avif daemon")


def run_script(tests, only_env=None, tmpdirs=(), need_daemon=False, setup=None):
    """A test script's main: each test function in turn (an exception in one is a failed check
    and the next still runs) with its time; with only_env set in the environment, only the tests
    whose name holds its value; need_daemon: none when the daemon binary is missing; setup runs
    first. Removes tmpdirs and TMP, prints the SCRIPT line tests/run.sh reads and exits 1 on any
    failure."""
    if need_daemon and not os.path.exists(DAEMON):
        check("daemon binary exists", False, DAEMON)
        tests = ()
    elif setup:
        setup()
    only = os.environ.get(only_env) if only_env else None
    for t in tests:
        if only and only not in t.__name__:
            continue
        t0 = time.time()
        try:
            t()
        except Exception as e:  # noqa
            import traceback
            traceback.print_exc()
            check(t.__name__ + " ran to the end", False, repr(e))
        print("     (%s: %.1f s)" % (t.__name__, time.time() - t0))
    for d in tuple(tmpdirs) + (TMP,):
        shutil.rmtree(d, ignore_errors=True)
    print("script: %.1f s" % (time.time() - T_START))
    print("SCRIPT: %d passed, %d failed" % (PASSED, FAILED))
    sys.exit(1 if FAILED else 0)


def main():
    run_script((test_main, test_formats, test_request_rules, test_convolve_methods, test_localhost,
                test_port_in_use,
                test_tensors, test_limits_and_auth, test_queue_full,
                test_deadline_and_client_gone, test_concurrency_and_sigterm, test_pipelining,
                test_jpeg_gpu_dct, test_jpeg_gpu_idct, test_jpeg_gpu_entropy_decode,
                test_upload_lease, test_float_upload_lease,
                test_tls),
               need_daemon=True)


if __name__ == "__main__":
    main()
