"""fftbloom's client mode and version facts over real HTTP (run by test_client.sh): `fftbloom
bloom|convolve --server URL` against a running fftbloomd (with an API key) gives the bytes the
equivalent curl POST gets, a convolution within 1e-5 of numpy's direct one, the daemon's 400 and
401 messages with exit 1, a dead server named; it runs where no EGL context can be made (a
local run there fails); what it sends (parts, names, headers) and its retries on 503 with
Retry-After, against a fake server; usage errors exit 2. Also `fftbloomd --version`,
`fftbloom --version` and `fftbloom info`'s build and library facts. Uses http_test.py's daemon
harness. Last line: "SCRIPT: N passed, N failed"."""
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import check, err_of, png_bytes, rand8, rand_float, write_pfm, read_pfm  # noqa: E402
from http_test import close_enough, direct_convolve  # noqa: E402

import numpy as np  # noqa: E402

TMP = H.TMP
# an environment in which no EGL context can be made: glvnd finds no vendor library
NO_EGL = {"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent.json", "EGL_PLATFORM": "surfaceless"}
TIMEOUT = 900 if H.SAN else 120


def run(args, env=None, unset=()):
    e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    for k in ("FFTBLOOM_SERVER", "FFTBLOOM_API_KEY") + tuple(unset):
        e.pop(k, None)
    e.update(env or {})
    r = subprocess.run([os.path.abspath(H.CLI)] + list(args), capture_output=True, text=True, timeout=TIMEOUT,
                       env=e, cwd=TMP)
    return r.returncode, r.stdout, r.stderr


def curl(url, fields, key=None):
    """The equivalent curl POST: -F per part; returns (status, body bytes)."""
    out = os.path.join(TMP, "curl.out")
    args = ["curl", "-s", "-o", out, "-w", "%{http_code}"]
    if key:
        args += ["-H", "Authorization: Bearer " + key]
    for f in fields:
        args += ["-F", f]
    r = subprocess.run(args + [url], capture_output=True, text=True, cwd=TMP, timeout=TIMEOUT)
    return int(r.stdout or 0), open(out, "rb").read()


def read(name):
    with open(os.path.join(TMP, name), "rb") as f:
        return f.read()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_inputs():
    open(os.path.join(TMP, "in.png"), "wb").write(png_bytes(rand8(40, 56)))
    write_pfm(os.path.join(TMP, "in.pfm"), rand_float(40, 56))
    write_pfm(os.path.join(TMP, "k.pfm"), H.RNG.random((5, 7, 3)).astype(np.float32) + 0.05)


def test_client():
    keyf = os.path.join(TMP, "client.key")
    key = "client-key-%x" % H.RNG.integers(1 << 40)
    open(keyf, "w").write(key + "\n")
    d = H.Daemon("--api-key-file", keyf)
    url = "http://127.0.0.1:%d" % d.port
    try:
        img, ker = read_pfm(read("in.pfm")), read_pfm(read("k.pfm"))
        env_key = {"FFTBLOOM_API_KEY": key}

        # bloom, PNG out: byte-equal to curl's answer for the same parameters
        flags = ["--kernel-preset", "gaussian:sigma=2", "--threshold", "0.5", "--knee", "0.2",
                 "--intensity", "3"]
        rc, _, err = run(["bloom", "in.png", "-o", "out.png", "--server", url] + flags,
                         env=env_key)
        st, ref = curl(url + "/v1/bloom", ["image=@in.png", "kernel_preset=gaussian:sigma=2",
                                          "threshold=0.5", "knee=0.2", "intensity=3",
                                          "format=png"], key)
        got = read("out.png") if rc == 0 else b""
        check("client bloom: exit 0", rc == 0, err)
        check("client bloom: the PNG equals curl's answer byte for byte",
              st == 200 and got == ref and got[:8] == b"\x89PNG\r\n\x1a\n", (st, len(got), len(ref)))
        m = re.search(r"^bloom in\.png on %s: .*total [0-9.]+ ms$" % re.escape(url), err, re.M)
        check("client bloom: the summary line carries the answer's Server-Timing", m, err)

        # --bits 16 asks for png16; --api-key as a flag; FFTBLOOM_SERVER instead of --server
        rc, _, err = run(["bloom", "in.png", "-o", "out16.png", "--bits", "16", "--api-key", key,
                          "--quiet"] + flags, env={"FFTBLOOM_SERVER": url + "/"})
        st, ref = curl(url + "/v1/bloom", ["image=@in.png", "kernel_preset=gaussian:sigma=2",
                                          "threshold=0.5", "knee=0.2", "intensity=3",
                                          "format=png16"], key)
        got = read("out16.png") if rc == 0 else b""
        check("client bloom --bits 16 (FFTBLOOM_SERVER, --api-key): 16-bit PNG equal to curl's",
              rc == 0 and got == ref and got[24] == 16, (rc, err, len(got), len(ref)))
        check("client --quiet: no summary line", rc == 0 and " on http" not in err, err)

        # convolve with a kernel file: the same bytes as curl's, and the convolution itself
        cflags = ["--kernel", "k.pfm", "--kernel-center", "2,3", "--method", "fft"]
        rc, _, err = run(["convolve", "in.pfm", "-o", "out.pfm", "--server", url] + cflags,
                         env=env_key)
        st, ref = curl(url + "/v1/convolve", ["image=@in.pfm", "kernel=@k.pfm",
                                             "kernel_center=2,3", "method=fft", "format=pfm"], key)
        got = read("out.pfm") if rc == 0 else b""
        check("client convolve --kernel FILE: exit 0, PFM equal to curl's",
              rc == 0 and st == 200 and got == ref, (rc, err, st, len(got), len(ref)))
        if got:  # direct_convolve centres the kernel at (w // 2, h // 2): the 7x5 kernel is
            # embedded so that its pixel (x 2, y 3) is the reference's centre (9 // 2, 7 // 2)
            k2 = np.zeros((7, 9, 3), np.float32)
            k2[0:5, 2:9] = ker
            close_enough("client convolve vs numpy direct convolution", read_pfm(got),
                         direct_convolve(img, k2.astype(np.float64)), 1e-5)

        # the daemon's 400 with its message, exit 1
        rc, _, err = run(["bloom", "in.png", "-o", "bad.png", "--server", url, "--intensity",
                          "5000"], env=env_key)
        st, body = curl(url + "/v1/bloom", ["image=@in.png", "intensity=5000", "format=png"], key)
        s, c, msg = err_of(body)
        check("client: a bad parameter gives the daemon's 400 and message, exit 2 (its row's rule)",
              rc == 2 and st == 400 and msg and msg in err and "400 bad_parameter" in err
              and not os.path.exists(os.path.join(TMP, "bad.png")), (rc, err, st, body))
        rc, _, err = run(["bloom", "in.png", "-o", "bad.png", "--server", url, "--kernel-preset",
                          "glare:nosuch=1"], env=env_key)
        check("client: a bad preset key is the daemon's message too", rc == 2 and "400" in err
              and "nosuch" in err, (rc, err))

        # 401: a wrong key and no key
        st, body = curl(url + "/v1/bloom", ["image=@in.png"], key + "x")
        s, c, msg = err_of(body)
        rc, _, err = run(["bloom", "in.png", "-o", "bad.png", "--server", url, "--api-key",
                          key + "x"])
        check("client: a wrong API key gives the daemon's 401 and message, exit 1",
              rc == 1 and st == 401 and msg and msg in err and "401 unauthorized" in err,
              (rc, err, st, body))
        rc, _, err = run(["bloom", "in.png", "-o", "bad.png", "--server", url])
        check("client: no API key, 401", rc == 1 and "401" in err, (rc, err))

        # no EGL here: the local run fails, the client run works and gives the same bytes
        rc_l, _, err_l = run(["bloom", "in.png", "-o", "local.png"] + flags, env=NO_EGL)
        check("without EGL a local run fails (the environment works)", rc_l == 1, err_l)
        rc, _, err = run(["bloom", "in.png", "-o", "noegl.png", "--server", url] + flags,
                         env=dict(NO_EGL, **env_key))
        check("without EGL the client run works (it opens no EGL context)",
              rc == 0 and read("noegl.png") == read("out.png"), (rc, err))
        farm(url, key)
    finally:
        d.stop("client daemon")

    # a dead server: the URL named, exit 1, no output
    dead = "http://127.0.0.1:%d" % free_port()
    rc, _, err = run(["bloom", "in.png", "-o", "dead.png", "--server", dead])
    check("client: a dead server is named, exit 1", rc == 1 and dead + "/v1/bloom" in err
          and "connect" in err.lower() and not os.path.exists(os.path.join(TMP, "dead.png")),
          (rc, err))


def farm(url, key):
    """Batches and sequences over --server: the local batch's outputs, its failure rules,
    several requests in flight, a kernel registered on the server by name."""
    env_key = {"FFTBLOOM_API_KEY": key}
    os.makedirs(os.path.join(TMP, "seq"), exist_ok=True)
    frames = {}
    for i in range(1001, 1007):
        frames[i] = rand_float(24 + i % 3, 30)
        write_pfm(os.path.join(TMP, "seq", "shot.%d.pfm" % i), frames[i])
    flags = ["--kernel-preset", "gaussian:sigma=2", "--threshold", "0.5", "--intensity", "2"]
    rc_l, _, err_l = run(["bloom", "seq/shot.####.pfm", "-o", "local/shot.####.pfm",
                          "--progress", "lines"] + flags)
    rc, _, err = run(["bloom", "seq/shot.####.pfm", "-o", "remote/shot.####.pfm", "--server", url,
                      "--progress", "lines", "--in-flight", "3"] + flags, env=env_key)
    check("client sequence: exit 0, the local run too", rc == 0 and rc_l == 0, (rc, err, err_l))
    check("client sequence: a line per frame and the local summary",
          err.count("bloom [") == 6 and "6 of 6 frames written" in err, err)
    for i in range(1001, 1007):
        lp, rp = (os.path.join(TMP, d, "shot.%d.pfm" % i) for d in ("local", "remote"))
        if not (os.path.exists(lp) and os.path.exists(rp)):
            check("client sequence: frame %d written" % i, False, (lp, rp))
            continue
        close_enough("client sequence frame %d vs the local batch" % i, read_pfm(read(rp)),
                     read_pfm(read(lp)), 1e-5)

    # a frame that fails: reported, the others written, listed at the end, exit 1 (local too)
    open(os.path.join(TMP, "seq", "broken.pfm"), "wb").write(b"PF\n3 3\n-1\n")
    names = ["seq/shot.1001.pfm", "seq/broken.pfm", "seq/shot.1002.pfm"]
    rc_l, _, err_l = run(["bloom"] + names + ["-o", "lfail/"] + flags)
    rc, _, err = run(["bloom"] + names + ["-o", "rfail/", "--server", url, "--in-flight", "2"] +
                     flags, env=env_key)
    written = sorted(os.listdir(os.path.join(TMP, "rfail"))) if os.path.isdir(
        os.path.join(TMP, "rfail")) else []
    check("client batch with a failing frame: exit 1 as locally, the others written",
          rc == 1 and rc_l == 1 and written == ["shot.1001.pfm", "shot.1002.pfm"], (rc, rc_l, written, err))
    check("client batch with a failing frame: listed at the end with the daemon's answer",
          "1 of 3 frames failed:" in err and re.search(r"seq/broken\.pfm \(sending: .*answered 422", err),
          err)

    # --kernel-name: a kernel registered with PUT /v1/kernels/NAME is the one used
    kbytes = read("k.pfm")
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
                        "-H", "Authorization: Bearer " + key, "--data-binary", "@k.pfm",
                        url + "/v1/kernels/farmk"], capture_output=True, text=True, cwd=TMP)
    check("PUT /v1/kernels/farmk", r.stdout in ("200", "201"), r.stdout)
    cf = ["--kernel-center", "2,3", "--method", "fft"]
    rc1, _, e1 = run(["convolve", "in.pfm", "-o", "byname.pfm", "--server", url, "--kernel-name",
                      "farmk"] + cf, env=env_key)
    rc2, _, e2 = run(["convolve", "in.pfm", "-o", "byfile.pfm", "--server", url, "--kernel",
                      "k.pfm"] + cf, env=env_key)
    check("client --kernel-name uses the registered kernel: the --kernel FILE answer",
          rc1 == 0 and rc2 == 0 and read("byname.pfm") == read("byfile.pfm") and kbytes,
          (rc1, e1, rc2, e2))
    rc, _, err = run(["convolve", "in.pfm", "-o", "x.pfm", "--server", url, "--kernel-name",
                      "nosuchkernel"], env=env_key)
    check("client --kernel-name of no registered kernel: the daemon's unknown_kernel, exit 2",
          rc == 2 and "unknown_kernel" in err, (rc, err))
    rc, _, err = run(["convolve", "in.pfm", "-o", "x.pfm", "--kernel-name", "farmk"])
    check("--kernel-name without --server: usage, exit 2", rc == 2 and "--server" in err, (rc, err))

    # standard input and output over --server
    r = subprocess.run([os.path.abspath(H.CLI), "bloom", "-", "-o", "-", "--format", "png",
                        "--server", url, "--quiet"] + flags, input=read("in.png"),
                       capture_output=True, env=dict(os.environ, FFTBLOOM_API_KEY=key), timeout=TIMEOUT)
    check("client bloom - -o - --format png", r.returncode == 0 and r.stdout[:8] == b"\x89PNG\r\n\x1a\n",
          (r.returncode, r.stderr[-300:]))


class Slow(http.server.BaseHTTPRequestHandler):
    """Answers a PNG after 0.3 s, counting the requests in progress at once."""
    lock = threading.Lock()
    now = peak = 0
    answer = b""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with Slow.lock:
            Slow.now += 1
            Slow.peak = max(Slow.peak, Slow.now)
        threading.Event().wait(0.3)
        with Slow.lock:
            Slow.now -= 1
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(Slow.answer)))
        self.end_headers()
        self.wfile.write(Slow.answer)

    def log_message(self, *a):
        pass


def test_in_flight():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % srv.server_address[1]
    Slow.answer = png_bytes(rand8(8, 8))
    names = []
    for i in range(6):
        names.append("if%d.png" % i)
        open(os.path.join(TMP, names[-1]), "wb").write(png_bytes(rand8(8, 8)))
    try:
        for n, want in ((3, 3), (1, 1)):
            Slow.peak = 0
            rc, _, err = run(["bloom"] + names + ["-o", "inflight%d/" % n, "--server", url,
                                                  "--in-flight", str(n)])
            done = os.listdir(os.path.join(TMP, "inflight%d" % n)) if rc == 0 else []
            check("client --in-flight %d: %d requests at once at most and at the peak, 6 frames "
                  "written" % (n, want), rc == 0 and Slow.peak == want and len(done) == 6,
                  (rc, Slow.peak, err[-400:]))
    finally:
        srv.shutdown()
        srv.server_close()


class Fake(http.server.BaseHTTPRequestHandler):
    """Answers 503 with Retry-After 0 (or a plain-text 502) as often as told, then a PNG."""
    seen = []
    busy = 0
    answer = b""
    status = 503

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(n)
        Fake.seen.append((self.path, dict(self.headers), body))
        if len(Fake.seen) <= Fake.busy:
            text = b'{"error": {"status": 503, "code": "queue_full", "message": "busy"}}' \
                if Fake.status == 503 else b"Bad Gateway from a proxy\n<html>"
            self.send_response(Fake.status)
            if Fake.status == 503:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Server-Timing", "decode;dur=1.5, gpu;dur=2.25, total;dur=4.0")
        self.send_header("Content-Length", str(len(Fake.answer)))
        self.end_headers()
        self.wfile.write(Fake.answer)

    def log_message(self, *a):
        pass


def parts_of(headers, body):
    """multipart/form-data parts as {name: (filename, bytes)}."""
    b = re.search(r'boundary="?([^";]+)', headers.get("Content-Type", "")).group(1).encode()
    out = {}
    for chunk in body.split(b"--" + b)[1:]:
        if chunk.startswith(b"--"):
            break
        head, _, data = chunk.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]*)"', head).group(1).decode()
        fn = re.search(rb'filename="([^"]*)"', head)
        out[name] = (fn.group(1).decode() if fn else None, data[:-2])
    return out


def test_fake_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    url = "http://127.0.0.1:%d" % srv.server_address[1]
    try:
        Fake.answer = png_bytes(rand8(8, 8))
        Fake.seen, Fake.busy, Fake.status = [], 2, 503
        rc, _, err = run(["convolve", "in.pfm", "-o", "fake.avif", "--server", url, "--kernel",
                          "k.pfm", "--kernel-scale", "0.5", "--bits", "10", "--quality", "70",
                          "--platform", "surfaceless"], env={"FFTBLOOM_API_KEY": "abc"})
        check("client retries a 503 with Retry-After, then writes the answer",
              rc == 0 and len(Fake.seen) == 3 and read("fake.avif") == Fake.answer, (rc, err,
                                                                                    len(Fake.seen)))
        check("client: each retry is said on stderr", err.count("answered 503; trying again") == 2,
              err)
        check("client summary from a Server-Timing", "decode 1.5, gpu 2.25, total 4.0 ms" in err,
              err)
        path, hdrs, body = Fake.seen[-1]
        p = parts_of(hdrs, body)
        want = {"image": ("in.pfm", read("in.pfm")), "kernel": ("k.pfm", read("k.pfm")),
                "kernel_scale": (None, b"0.5"), "quality": (None, b"70"),
                "format": (None, b"avif10")}
        check("client request: POST /v1/convolve, parts image and kernel (files), parameters "
              "as fields with API names, format from the extension and --bits",
              path == "/v1/convolve" and p == want, (path, {k: (v[0], v[1][:20]) for k, v in p.items()}))
        check("client request: Authorization: Bearer from FFTBLOOM_API_KEY",
              hdrs.get("Authorization") == "Bearer abc", hdrs)

        Fake.seen, Fake.busy = [], 5
        rc, _, err = run(["bloom", "in.png", "-o", "fake2.png", "--server", url, "--retries", "1"])
        check("client gives up after --retries, with the daemon's 503 message, exit 1",
              rc == 1 and len(Fake.seen) == 2 and "503 queue_full: busy" in err
              and not os.path.exists(os.path.join(TMP, "fake2.png")), (rc, err, len(Fake.seen)))

        Fake.seen, Fake.busy, Fake.status = [], 1, 502
        rc, _, err = run(["bloom", "in.png", "-o", "fake3.png", "--server", url])
        check("client: an error that is not fftbloomd's JSON shows its status and first line",
              rc == 1 and len(Fake.seen) == 1 and "answered 502: Bad Gateway from a proxy" in err,
              (rc, err))
    finally:
        srv.shutdown()
        srv.server_close()

    # usage errors: exit 2, nothing sent
    for args, what in ((["--format", "jpeg"], "--format jpeg disagrees"),
                       (["-o", "x.exr", "--bits", "32"], "float32 EXR"),
                       (["-o", "x.gif"], "unknown output extension"),
                       (["--no-such-flag", "1"], "unknown option"),
                       (["--frames", "1-3"], "--frames")):
        a = ["bloom", "in.png", "--server", url] + (args if "-o" in args else ["-o", "u.png"] + args)
        rc, _, err = run(a)
        check("client usage: %s is exit 2" % what, rc == 2 and what in err, (rc, err))
    rc, _, err = run(["bloom", "in.png", "-o", "u.png", "--server", "ftp://example"])
    check("client usage: a URL that is not http(s) is exit 2", rc == 2 and "ftp://" in err, err)
    rc, _, err = run(["convolve", "in.png", "-o", "u.png", "--server", url])
    check("client usage: convolve without a kernel is exit 2", rc == 2 and "--kernel" in err, err)


def test_versions():
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
    r = subprocess.run([H.DAEMON, "--version"], capture_output=True, text=True, timeout=30)
    m = re.fullmatch(r"fftbloomd (\d+\.\d+\.\d+) \(commit (\S+)\)\n", r.stdout)
    check("fftbloomd --version: 'fftbloomd X.Y.Z (commit C)', exit 0", r.returncode == 0 and m,
          (r.returncode, r.stdout, r.stderr))
    r2 = subprocess.run([H.CLI, "--version"], capture_output=True, text=True, timeout=30)
    m2 = re.fullmatch(r"fftbloom (\d+\.\d+\.\d+) \(commit (\S+)\)\n", r2.stdout)
    check("fftbloom --version: the same version and commit", r2.returncode == 0 and m and m2
          and m.groups() == m2.groups(), (r2.stdout, r.stdout))
    if m and commit:  # the build's commit is this checkout's, or the daemon's own says "unknown"
        check("--version's commit is the checkout's (git describe)",
              m.group(2) in (commit, commit.replace("-dirty", "")) or m.group(2) == "unknown"
              or commit.startswith(m.group(2).replace("-dirty", "")), (m.group(2), commit))
    r3 = subprocess.run([H.DAEMON, "--version", "--port", "bogus"], capture_output=True,
                        text=True, timeout=30)
    check("fftbloomd --version reads no configuration and starts nothing", r3.returncode == 0
          and r3.stdout == r.stdout, (r3.returncode, r3.stderr))

    rc, out, err = run(["info"])
    try:
        info = json.loads(out)
    except ValueError:
        info = {}
    check("fftbloom info: JSON, exit 0", rc == 0 and info, (rc, err, out[:300]))
    if not info:
        return
    for k in ("renderer", "version", "glsl_version", "egl_vendor", "egl_version", "platform",
              "max_storage_buffer_size", "max_compute_shared_memory", "max_work_group_size",
              "max_work_group_invocations"):
        check("fftbloom info has %s" % k, k in info, sorted(info))
    check("fftbloom info: software renderer flagged (llvmpipe is one)",
          info.get("software") is ("llvmpipe" in info.get("renderer", "")), info.get("software"))
    v = info.get("version", "")
    nv = info.get("nvidia_driver")
    want_nv = re.search(r"NVIDIA (\d+\.\d+(?:\.\d+)?)", v)
    check("fftbloom info: nvidia_driver from GL_VERSION when NVIDIA, else null",
          nv == (want_nv.group(1) if want_nv else None), (v, nv))
    b = info.get("build", {})
    check("fftbloom info: build version, commit, compiler, flags",
          re.fullmatch(r"\d+\.\d+\.\d+", b.get("version", "")) and m and b.get("commit") ==
          m.group(2) and b.get("compiler") and "-std=c11" in b.get("cflags", ""), b)
    libs = info.get("libraries", {})
    for name in ("libjpeg-turbo", "libspng", "openexr", "libwebp", "libavif", "jansson",
                 "zlib", "libcurl"):
        check("fftbloom info: library %s has a version" % name,
              re.match(r"\d+\.\d+", str(libs.get(name, ""))), libs)
    dpkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libjansson4"],
                          capture_output=True, text=True).stdout
    check("fftbloom info: jansson's version is the installed package's",
          dpkg.startswith(str(libs.get("jansson"))), (dpkg, libs.get("jansson")))


def main():
    H.run_script((test_client, test_fake_server, test_in_flight, test_versions), setup=make_inputs)


if __name__ == "__main__":
    main()
