"""Rendering from an origin (GET /v1/bloom?src=URL) and the result cache, over real HTTP against
a real web server: Debian's nginx, started here on loopback on a free port with its own
configuration (no root, no service). The daemon's --origin-allow names that nginx by its IP
literal 127.0.0.1 (the only way a loopback origin is reached) and by the DNS name localhost
(which must then be refused: a name resolving to loopback). Checked: an allowed render against
POST /v1/bloom of the same bytes (the render path's own answer, pixel for pixel); refused
origins; redirects in and out of the allow list; a slow origin (limit_rate: the timeout); an
oversized origin with and without Content-Length; 404 and 500 from the origin; an answer that is
no image; a redirect's Location with a fragment (dropped: followed) and one that is not a URL
taken here (502 origin_error); src given twice (400); a HEIC declaring 2^32-1 pixels a side by
src= and POST (413 image_too_large); a result-cache file cut on disk (a miss, rendered again); the SSRF list (IPv6 literals, v4-mapped, decimal, octal and hex hosts, localhost,
userinfo and fragment tricks, file: gopher: dict:, encoded dots), each refused before any
connection (nginx's access log never sees them); ETag and 304; result cache hits (no GPU job,
the origin's body not downloaded), evictions within --result-cache-bytes, a second daemon
sharing the folder; signed URLs required with a key; the fetch threads' bound (503); https
origins (nginx with certificates from a throwaway CA made here with openssl, trusted through
--origin-ca): a HEIC rendered at width=800 as AVIF, certificates from another issuer or for
another name refused (502 origin_tls), a redirect from https to plain http outside the list
refused, an unreadable --origin-ca refused at start. Uses
http_test.py's daemon harness. Last line: "SCRIPT: N passed, N failed"."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import check, err_of, png_bytes  # noqa: E402

import numpy as np  # noqa: E402

TMP = tempfile.mkdtemp(prefix="fftbloomd-origin-")
os.chmod(TMP, 0o755)  # nginx's workers run as nobody when the test runs as root
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
Q = "threshold=0.5&intensity=0.8&kernel_preset=gaussian:sigma=2"  # a small padded size
CQ = "threshold=0.9&intensity=%g&kernel_preset=gaussian:sigma=2"  # answers of ~9 kB (noise)
RNG = np.random.default_rng(int(time.time() * 1e6) % 2**32)
HUGE = 32 << 20


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def plain_servers(ports, www):
    """The plain-HTTP origin: images, redirects in and out, errors."""
    return """
  server {
    listen 127.0.0.1:%(p)d;
    root %(www)s;
    location /img/slow/ { limit_rate 4k; }
    location /img/chunked/ { sub_filter 'zzzzzzzz' 'y'; sub_filter_types *; }
    location = /img/r-in { return 302 /img/a.png; }
    location = /img/r-abs-in { return 301 http://127.0.0.1:%(p)d/img/a.png; }
    location = /img/r-out { return 302 http://127.0.0.1:%(p)d/secret/a.png; }
    location = /img/r-localhost { return 302 http://localhost:%(p)d/img/a.png; }
    location = /img/r-meta { return 307 http://169.254.169.254/latest/meta-data/; }
    location = /img/r-file { return 302 file:///etc/passwd; }
    location = /img/loop { return 302 /img/loop; }
    location = /img/r-frag { return 302 http://127.0.0.1:%(p)d/img/a.png#x; }
    location = /img/r-frag-rel { return 302 /img/a.png#frag; }
    location = /img/r-bad { add_header Location "http://[zz::1]/img/a.png" always; return 302; }
    location = /img/r-userinfo {
      add_header Location "http://u@127.0.0.1:%(p)d/img/a.png" always; return 302;
    }
    location = /img/e500 { return 500; }
    location = /img/e503 { return 503; }
  }
""" % {"p": ports[0], "www": www}


class Nginx:
    """nginx on 127.0.0.1 serving www/ on free ports (servers(ports, www) writes its server
    blocks), logging "URI STATUS BODY_BYTES_SENT"."""

    def __init__(self, www, name="nginx", nports=1, servers=plain_servers):
        self.dir = os.path.join(TMP, name)
        os.makedirs(self.dir, exist_ok=True)
        self.log = os.path.join(self.dir, "access.log")
        for _ in range(5):
            self.ports = [free_port() for _ in range(nports)]
            self.port = self.ports[0]
            conf = os.path.join(self.dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write("""daemon off;
pid %(d)s/nginx.pid;
error_log %(d)s/error.log;
events {}
http {
  log_format t '$request_uri $status $body_bytes_sent';
  access_log %(log)s t;
  client_body_temp_path %(d)s/t1; proxy_temp_path %(d)s/t2; fastcgi_temp_path %(d)s/t3;
  uwsgi_temp_path %(d)s/t4; scgi_temp_path %(d)s/t5;
%(servers)s}
""" % {"d": self.dir, "log": self.log, "servers": servers(self.ports, www)})
            self.p = subprocess.Popen([NGINX, "-c", conf, "-p", self.dir],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                try:
                    for p in self.ports:
                        socket.create_connection(("127.0.0.1", p), 0.2).close()
                    return
                except OSError:
                    if self.p.poll() is not None:
                        break
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("nginx did not start")

    def url(self, path, host="127.0.0.1"):
        return "http://%s:%d%s" % (host, self.port, path)

    def seen(self):
        """The access log's lines (nginx writes each at the request's end)."""
        try:
            return open(self.log).read().splitlines()
        except OSError:
            return []

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()


def noise_png(h, w, seed):
    return png_bytes(np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8))


def decode(b):
    import cv2
    return cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_UNCHANGED)


def src_path(url, q=Q, route="/v1/bloom"):
    return "%s?src=%s%s" % (route, urllib.parse.quote(url, safe=""), "&" + q if q else "")


def code(st, body):
    return err_of(body)[1] if st >= 400 else None


def huge_ispe_heic():
    """A HEIC whose every ispe box declares 4294967295 x 4294967295 (its pixels 16 x 12)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "fuzz", "corpus", "heic", "rgb420.heic"), "rb") as f:
        b = bytearray(f.read())
    i = b.find(b"ispe")
    while i >= 0:
        b[i + 8:i + 16] = b"\xff" * 8  # after the FullBox's version and flags
        i = b.find(b"ispe", i + 4)
    return bytes(b)


def make_www():
    www = os.path.join(TMP, "www")
    for d in ("img/slow", "img/chunked", "secret"):
        os.makedirs(os.path.join(www, d), exist_ok=True)
    seed = int(RNG.integers(1 << 30))
    a = noise_png(48, 64, seed)
    files = {
        "img/a.png": a,
        "img/b.png": noise_png(48, 64, seed + 1),
        "img/chunked/a.png": a,
        "img/big.png": noise_png(200, 200, seed + 2),          # ~120 kB > --origin-max-bytes
        "img/chunked/big.png": noise_png(200, 200, seed + 2),  # the same, without Content-Length
        "img/slow/s.png": noise_png(120, 120, seed + 3),       # ~43 kB at 4 kB/s: 10 s
        "img/text.txt": b"not an image\n" * 10,
        "secret/a.png": a,
        "img/ispe.heic": huge_ispe_heic(),
    }
    for k, v in files.items():
        with open(os.path.join(www, k), "wb") as f:
            f.write(v)
    # 32 MB (sparse), more than loopback's socket buffers hold: what nginx logs as sent shows
    # whether the fetch stopped early
    for k in ("img/huge.png", "img/chunked/huge.png"):
        with open(os.path.join(www, k), "wb") as f:
            f.write(files["img/big.png"][:64])
            f.truncate(HUGE)
    return www, files


def test_origin():
    www, files = make_www()
    ng = Nginx(www)
    rc_dir = os.path.join(TMP, "results")
    # a listening socket that never accepts, its queue filled: a connection to it never
    # completes (Linux drops the SYNs), so only --origin-connect-timeout ends it
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(0)
    fill = []
    for _ in range(3):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(hole.getsockname())
        fill.append(c)
    hole_url = "http://127.0.0.1:%d/img/a.png" % hole.getsockname()[1]
    allow = "%s %s %s" % (ng.url("/img/"), ng.url("/img/", "localhost"), hole_url)
    d = H.Daemon("--origin-allow", allow, "--origin-max-bytes", "100k", "--origin-timeout", "1.5",
                 "--origin-connect-timeout", "1", "--result-cache", rc_dir,
                 "--result-cache-bytes", "40k")
    try:
        run_origin_checks(d, ng, files)
        run_cache_checks(d, ng, rc_dir)
        d2_checks(ng, rc_dir, allow)
        ssrf_checks(d, ng)
        t0 = time.time()
        st, h, b = d.req("GET", src_path(hole_url))
        print("     an origin that never accepts: %d %s after %.2f s (connect timeout 1 s)"
              % (st, code(st, b), time.time() - t0))
        check("an origin that never accepts the connection: 502 origin_timeout",
              (st, code(st, b)) == (502, "origin_timeout"), (st, b[:300]))
    finally:
        hole.close()
        for c in fill:
            c.close()
        d.stop("origin daemon")
        ng.stop()


def run_origin_checks(d, ng, files):
    a_url = ng.url("/img/a.png")
    st, h, b = d.req("GET", src_path(a_url))
    check("an allowed origin: 200 image/png", st == 200 and h.get("content-type") == "image/png",
          (st, b[:300]))
    etag = h.get("etag")
    check("its answer has an ETag and says a result-cache miss",
          bool(etag) and h.get("x-result-cache") == "miss", h)
    check("Server-Timing names the fetch (origin;dur=)",
          "origin;dur=" in h.get("server-timing", ""), h.get("server-timing"))
    pst, _, pb = d.req("POST", "/v1/bloom?" + Q, body=files["img/a.png"],
                       headers={"Content-Type": "image/png"})
    if st == 200 and pst == 200:
        g, p = decode(b).astype(int), decode(pb).astype(int)
        diff = int(np.abs(g - p).max()) if g.shape == p.shape else None
        print("     GET src= against POST of the same bytes: max |diff| %s codes" % diff)
        check("the origin's render equals POST /v1/bloom of the same bytes (within 1 code)",
              diff is not None and diff <= 1, diff)
    jobs = d.metric("fftbloom_gpu_jobs_total")
    skipped = d.metric("fftbloom_origin_fetches_skipped_total") or 0
    st2, h2, b2 = d.req("GET", src_path(a_url))
    check("again: a result-cache hit, the same bytes and ETag",
          st2 == 200 and h2.get("x-result-cache") == "hit" and b2 == b and h2.get("etag") == etag,
          (st2, h2))
    check("the hit ran no GPU job", d.metric("fftbloom_gpu_jobs_total") == jobs)
    check("the hit stopped the fetch at the origin's headers (ETag, Last-Modified)",
          (d.metric("fftbloom_origin_fetches_skipped_total") or 0) == skipped + 1)
    st, h, b = d.req("HEAD", src_path(a_url))
    check("HEAD: 200 with the GET's headers and no body",
          st == 200 and not b and h.get("etag") == etag and h.get("content-length") == str(len(b2)),
          (st, h))
    st3, h3, b3 = d.req("GET", src_path(a_url), headers={"If-None-Match": etag or "x"})
    check("If-None-Match with the ETag: 304, no body, no GPU job",
          st3 == 304 and not b3 and d.metric("fftbloom_gpu_jobs_total") == jobs, (st3, h3))
    # another picture at the origin: another ETag
    st4, h4, b4 = d.req("GET", src_path(ng.url("/img/b.png")))
    check("another origin image: 200 with another ETag",
          st4 == 200 and h4.get("etag") not in (None, etag), (st4, h4))
    # the image changed at the origin: nginx's ETag and Last-Modified change, so does ours
    path = os.path.join(TMP, "www", "img", "a.png")
    os.utime(path, (time.time() + 5, time.time() + 5))
    st5, h5, _ = d.req("GET", src_path(a_url))
    check("the origin's file touched: a new ETag (its validators name the image)",
          st5 == 200 and h5.get("etag") != etag and h5.get("x-result-cache") == "miss", h5)
    etag = h5.get("etag")
    # redirects: followed within the allow list only
    for p, want in (("/img/r-in", 200), ("/img/r-abs-in", 200), ("/img/r-frag", 200),
                    ("/img/r-frag-rel", 200)):
        st, h, b = d.req("GET", src_path(ng.url(p)))
        check("redirect %s (to /img/a.png, a fragment dropped): 200, the same render (ETag)" % p,
              st == 200 and h.get("etag") == etag, (st, b[:300], h.get("etag"), etag))
    for p, want in (("/img/r-out", (403, "origin_not_allowed")),
                    ("/img/r-localhost", (403, "origin_address_refused")),
                    ("/img/r-meta", (403, "origin_not_allowed")),
                    ("/img/r-file", (502, "origin_error")),
                    ("/img/r-bad", (502, "origin_error")),
                    ("/img/r-userinfo", (502, "origin_error")),
                    ("/img/loop", (502, "origin_error"))):
        st, h, b = d.req("GET", src_path(ng.url(p)))
        check("redirect %s: %d %s" % (p, want[0], want[1]), (st, code(st, b)) == want,
              (st, b[:300]))
        if p in ("/img/r-file", "/img/r-bad", "/img/r-userinfo"):
            check("redirect %s: the message names the Location" % p,
                  "redirect" in err_of(b)[2] and ("file:" in err_of(b)[2] or "zz::1" in
                                                  err_of(b)[2] or "u@" in err_of(b)[2]),
                  err_of(b)[2])
    # src given twice, like any parameter: 400 bad_parameter, nothing fetched
    for q in ("src=%s&src=%s" % ((urllib.parse.quote(a_url, safe=""),) * 2),
              "src=%s&src=%s" % (urllib.parse.quote(a_url, safe=""),
                                 urllib.parse.quote(ng.url("/img/src-twice.png"), safe=""))):
        st, h, b = d.req("GET", "/v1/bloom?" + q + "&" + Q)
        check("src given twice: 400 bad_parameter naming src",
              (st, code(st, b)) == (400, "bad_parameter") and "src" in err_of(b)[2],
              (st, b[:300]))
    check("nginx never saw the second src", not [l for l in ng.seen() if "src-twice" in l])
    # a HEIC declaring 2^32-1 pixels a side: too large (413), not out of memory (503, retried)
    st, h, b = d.req("GET", src_path(ng.url("/img/ispe.heic")))
    pst, ph, pb = d.req("POST", "/v1/bloom?" + Q, body=files["img/ispe.heic"],
                        headers={"Content-Type": "image/heic"})
    for how, r in (("src=", (st, h, b)), ("POST", (pst, ph, pb))):
        check("a HEIC whose ispe says 4294967295x4294967295, by %s: 413 image_too_large, no "
              "Retry-After" % how, (r[0], code(r[0], r[2])) == (413, "image_too_large") and
              "retry-after" not in r[1], (r[0], r[2][:300]))
    # the origin's errors
    for p, want in (("/img/missing.png", (404, "origin_not_found")),
                    ("/img/e500", (502, "origin_error")), ("/img/e503", (502, "origin_error")),
                    ("/img/text.txt", (422, "origin_not_image")),
                    ("/img/big.png", (422, "origin_too_large")),
                    ("/img/chunked/big.png", (422, "origin_too_large"))):
        st, h, b = d.req("GET", src_path(ng.url(p)))
        check("%s: %d %s" % (p, want[0], want[1]), (st, code(st, b)) == want, (st, b[:300]))
        check("%s: an error has no ETag" % p, "etag" not in h, h)
    st, h, b = d.req("GET", src_path(ng.url("/img/chunked/a.png")))
    check("an image without Content-Length (chunked) under the limit: 200",
          st == 200 and h.get("content-type") == "image/png", (st, b[:300]))
    for p, how in (("/img/huge.png", "by its Content-Length, before its body"),
                   ("/img/chunked/huge.png", "without Content-Length, while its body arrives")):
        st, h, b = d.req("GET", src_path(ng.url(p)))
        check("%s (32 MB): 422 origin_too_large" % p,
              (st, code(st, b)) == (422, "origin_too_large"), (st, b[:300]))
        time.sleep(0.2)  # nginx logs a request once it has ended on its side
        line = [l for l in ng.seen() if l.startswith(p + " ")]
        sent = int(line[-1].split()[2]) if line else None
        print("     nginx sent %s of %s's %d bytes" % (sent, p, HUGE))
        check("an oversized image is refused %s (nginx sent less than it)" % how,
              sent is not None and sent < HUGE // 2, line)
    t0 = time.time()
    st, h, b = d.req("GET", src_path(ng.url("/img/slow/s.png")))
    print("     slow origin answered after %.2f s (--origin-timeout 1.5)" % (time.time() - t0))
    check("a slow origin: 502 origin_timeout", (st, code(st, b)) == (502, "origin_timeout"),
          (st, b[:300]))
    # refused without a connection: outside the prefix, another port, another scheme
    for url, want in ((ng.url("/secret/a.png"), (403, "origin_not_allowed")),
                      ("http://127.0.0.1:%d/img/a.png" % (ng.port + 1 if ng.port < 65535 else 1),
                       (403, "origin_not_allowed")),
                      ("https://127.0.0.1:%d/img/a.png" % ng.port, (403, "origin_not_allowed")),
                      (ng.url("/img/../secret/a.png"), (403, "origin_not_allowed"))):
        st, h, b = d.req("GET", src_path(url))
        check("%s: %d %s" % (url, want[0], want[1]), (st, code(st, b)) == want, (st, b[:300]))
    st, h, b = d.req("GET", "/v1/bloom?" + Q)
    check("GET /v1/bloom without src=: 400 bad_src", (st, code(st, b)) == (400, "bad_src"),
          (st, b[:300]))
    st, h, b = d.req("GET", src_path(a_url, "threshold=nope"))
    check("a bad parameter with src=: 400 bad_parameter",
          (st, code(st, b)) == (400, "bad_parameter"), (st, b[:300]))
    st, h, b = d.req("GET", src_path(a_url, "kernel_preset=gaussian:sigma=2", "/v1/convolve"))
    check("GET /v1/convolve?src=: 200", st == 200, (st, b[:300]))


def run_cache_checks(d, ng, rc_dir):
    """--result-cache-bytes 40k: renders of about 9 kB each; the least recently used go."""
    a_url = ng.url("/img/a.png")
    first = None
    for i, t in enumerate((0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07)):
        st, h, b = d.req("GET", src_path(a_url, CQ % t))
        if i == 0:
            first = b
    ev = d.metric("fftbloom_result_cache_evictions_total") or 0
    files = [f for f in os.listdir(rc_dir) if not f.startswith(".")]
    total = sum(os.path.getsize(os.path.join(rc_dir, f)) for f in files)
    print("     result cache: %d answers, %d bytes, %d evictions" % (len(files), total, ev))
    check("evictions keep the folder within --result-cache-bytes (40 kB)",
          ev > 0 and total <= 40 * 1024, (ev, total))
    st, h, b = d.req("GET", src_path(a_url, CQ % 0.01))
    check("the least recently used answer was evicted: a miss, rendered again to the same bytes",
          st == 200 and h.get("x-result-cache") == "miss" and b == first, h)
    st, h, b = d.req("GET", src_path(a_url, CQ % 0.07))
    check("the most recent one is still a hit", h.get("x-result-cache") == "hit", h)
    check("every fetched image's hold on --memory-budget was released",
          d.metric("fftbloom_memory_reserved_bytes") == 0,
          d.metric("fftbloom_memory_reserved_bytes"))
    # a damaged answer in the folder (cut inside its body, then down to its header lines): a
    # miss, rendered again to the same bytes, then a hit again
    cq = CQ % 0.08
    before = set(os.listdir(rc_dir))
    st, h, good = d.req("GET", src_path(a_url, cq))
    new = [f for f in set(os.listdir(rc_dir)) - before if not f.startswith(".")]
    check("a new render is stored as one new file", st == 200 and len(new) == 1, (st, new))
    for what in ("cut inside its body", "cut to its header lines (no body)"):
        if len(new) != 1:
            break
        path = os.path.join(rc_dir, new[0])
        with open(path, "rb") as f:
            whole = f.read()
        head = len(whole) - len(good)
        with open(path, "r+b") as f:
            f.truncate(len(whole) - 100 if "body" in what else head)
        st, h, b = d.req("GET", src_path(a_url, cq))
        check("a stored answer %s: 200, a miss, the whole render again" % what,
              st == 200 and h.get("x-result-cache") == "miss" and b == good,
              (st, h.get("x-result-cache"), len(b), len(good)))
        st, h, b = d.req("GET", src_path(a_url, cq))
        check("then a hit with the whole render", st == 200 and
              h.get("x-result-cache") == "hit" and b == good, (st, h.get("x-result-cache")))
    check("the daemon's log warns that it removed a damaged entry",
          "warn" in d.log() and "is damaged" in d.log())
    for m in ("fftbloom_result_cache_hits_total", "fftbloom_result_cache_misses_total",
              "fftbloom_result_cache_evictions_total", "fftbloom_origin_fetches_total"):
        check("/metrics has %s" % m, (d.metric(m) or 0) > 0, d.metric(m))


def d2_checks(ng, rc_dir, allow):
    """A second daemon on the same folder (another process, a restart) with a URL signing key
    and one fetch thread: signed src= URLs only; a render the first stored is a hit here."""
    keyf = os.path.join(TMP, "sign.key")
    with open(keyf, "w") as f:
        f.write("k" * 32 + "\n")
    d = H.Daemon("--origin-allow", allow, "--origin-timeout", "3", "--result-cache", rc_dir,
                 "--result-cache-bytes", "40k", "--url-signing-key-file", keyf,
                 "--origin-concurrency", "1", "--origin-queue", "0")
    try:
        path = src_path(ng.url("/img/a.png"), CQ % 0.07)
        st, h, b = d.req("GET", path)
        check("with a signing key, an unsigned src= URL: 403 signature_required",
              (st, code(st, b)) == (403, "signature_required"), (st, b[:300]))

        def sign(p):
            r = subprocess.run([H.CLI, "sign-url", "--key-file", keyf,
                                "http://127.0.0.1:%d%s" % (d.port, p)],
                               capture_output=True, text=True, timeout=60)
            u = r.stdout.strip()
            return u[u.index("/v1/"):] if r.returncode == 0 and "/v1/" in u else None
        signed = sign(path)
        check("fftbloom sign-url signs a src= URL", signed is not None)
        st, h, b = d.req("GET", signed or path)
        check("signed: 200, a hit on what the other daemon stored (shared folder, restart)",
              st == 200 and h.get("x-result-cache") == "hit", (st, h, b[:200]))
        if signed:
            sig = urllib.parse.parse_qs(urllib.parse.urlsplit(signed).query).get("sig", [""])[0]
            st, h, b = d.req("GET", signed + "&sig=" + urllib.parse.quote(sig, safe=""))
            check("a signed URL with its sig given twice: 403 bad_signature (the signature "
                  "check reads the whole query first)",
                  (st, code(st, b)) == (403, "bad_signature"), (st, b[:300]))
        other = src_path(ng.url("/img/b.png"), CQ % 0.07)
        tampered = (signed or "").replace(urllib.parse.quote(ng.url("/img/a.png"), safe=""),
                                          urllib.parse.quote(ng.url("/img/b.png"), safe=""))
        st, h, b = d.req("GET", tampered if tampered != signed else other)
        check("a signature for another src=: 403 bad_signature",
              (st, code(st, b)) == (403, "bad_signature"), (st, b[:300]))
        # one fetch thread, no waiting list: a second fetch while the slow one runs is 503
        slow = sign(src_path(ng.url("/img/slow/s.png")))
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("r", d.req("GET", slow)))
        t.start()
        time.sleep(0.5)
        st, h, b = d.req("GET", sign(src_path(ng.url("/img/b.png"))))
        check("every fetch thread busy: 503 origin_busy with Retry-After",
              (st, code(st, b)) == (503, "origin_busy") and "retry-after" in h, (st, b[:300]))
        t.join()
        check("the slow fetch itself: 502 origin_timeout (--origin-timeout 3)",
              out.get("r", (0,))[0] == 502, out.get("r", (0, 0, b""))[2][:300])
    finally:
        d.stop("second origin daemon")
    # no --origin-allow: nothing is fetched
    d = H.Daemon()
    try:
        st, h, b = d.req("GET", src_path(ng.url("/img/a.png")))
        check("without --origin-allow: 403 origin_off", (st, code(st, b)) == (403, "origin_off"),
              (st, b[:300]))
    finally:
        d.stop("daemon without origins")


def ssrf_checks(d, ng):
    """Each refused with a 4xx before any connection: nginx never sees its path."""
    p = ng.port
    tries = [
        ("http://[::1]:%d/img/ssrf-v6.png" % p, 403),
        ("http://[::ffff:127.0.0.1]:%d/img/ssrf-mapped.png" % p, 403),
        ("http://[::ffff:7f00:1]:%d/img/ssrf-mapped-hex.png" % p, 403),
        ("http://2130706433:%d/img/ssrf-decimal.png" % p, 400),
        ("http://0177.0.0.1:%d/img/ssrf-octal.png" % p, 400),
        ("http://0x7f.1:%d/img/ssrf-hex.png" % p, 400),
        ("http://0x7f000001:%d/img/ssrf-hex32.png" % p, 400),
        ("http://127.1:%d/img/ssrf-short.png" % p, 400),
        ("http://localhost:%d/img/ssrf-localhost.png" % p, 403),
        ("http://LOCALHOST:%d/img/ssrf-localhost-upper.png" % p, 403),
        ("http://localhost.:%d/img/ssrf-localhost-dot.png" % p, 403),
        ("http://127.0.0.1.nip.io:%d/img/ssrf-nip.png" % p, 403),
        ("http://localhost:%d@127.0.0.1:%d/img/ssrf-userinfo.png" % (p, p), 400),
        ("http://127.0.0.1:%d#@localhost:%d/img/ssrf-fragment.png" % (p, p), 400),
        ("http://127.0.0.1:%d/img/%%2e%%2e/secret/ssrf-dots.png" % p, 400),
        ("file:///etc/passwd", 400),
        ("gopher://127.0.0.1:%d/_ssrf-gopher" % p, 400),
        ("dict://127.0.0.1:%d/ssrf-dict" % p, 400),
        ("http://169.254.169.254/latest/meta-data/ssrf-meta", 403),
        ("http://[fe80::1]:%d/img/ssrf-linklocal.png" % p, 403),
    ]
    for url, want in tries:
        st, h, b = d.req("GET", src_path(url))
        check("SSRF %s: %d (%s)" % (url, want, code(st, b)), st == want, (st, b[:300]))
    seen = [l for l in ng.seen() if "ssrf" in l or "/secret" in l]
    check("nginx saw none of them (nor any /secret path)", not seen, seen)
    try:
        socket.getaddrinfo("127.0.0.1.nip.io", None)
        print("     127.0.0.1.nip.io resolves here: refused by the allow list before DNS")
    except OSError:
        print("     127.0.0.1.nip.io does not resolve offline: refused by the allow list alone")


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60)


def make_certs(d):
    """A throwaway CA; a leaf it signs for IP 127.0.0.1 (good), one it signs for another name
    (wrongname), and a self-signed leaf for 127.0.0.1 (rogue). Returns {name: (cert, key)}."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ca, cakey = os.path.join(d, "ca.pem"), os.path.join(d, "ca.key")
    openssl("req", "-x509", *ec, "-keyout", cakey, "-out", ca, "-days", "2", "-subj",
            "/CN=fftbloom test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    out = {"ca": (ca, cakey)}
    for name, san in (("good", "IP:127.0.0.1"), ("wrongname", "DNS:origin.invalid")):
        key, csr, crt = (os.path.join(d, name + x) for x in (".key", ".csr", ".pem"))
        ext = os.path.join(d, name + ".ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\n"
                    "extendedKeyUsage=serverAuth\n" % san)
        openssl("req", "-new", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=" + san[san.index(":") + 1:])
        openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", cakey, "-CAcreateserial",
                "-out", crt, "-days", "2", "-extfile", ext)
        out[name] = (crt, key)
    key, crt = os.path.join(d, "rogue.key"), os.path.join(d, "rogue.pem")
    openssl("req", "-x509", *ec, "-keyout", key, "-out", crt, "-days", "2", "-subj",
            "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1")
    out["rogue"] = (crt, key)
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)  # nginx's workers run as nobody under root
    return out


def avif_size(b):
    """(width, height) from an AVIF's first ispe box (ISO/IEC 23008-12), or None."""
    i = b.find(b"ispe")
    if i < 0 or len(b) < i + 16:
        return None
    return (int.from_bytes(b[i + 8:i + 12], "big"), int.from_bytes(b[i + 12:i + 16], "big"))


def test_https_origin():
    """The issue's example against an https origin: GET /v1/bloom?src=https://.../photo.heic
    &width=800&format=avif."""
    www = os.path.join(TMP, "www-tls")
    os.makedirs(os.path.join(www, "img"), exist_ok=True)
    y, x = np.mgrid[0:900, 0:1200]
    photo = np.stack([(x * 255 // 1199), (y * 255 // 899), ((x + y) * 255 // 2098)],
                     -1).astype(np.uint8)
    photo[400:430, 580:620] = 255  # a bright patch that blooms
    png = os.path.join(TMP, "photo.png")
    with open(png, "wb") as f:
        f.write(png_bytes(photo))
    heic = os.path.join(www, "img", "photo.heic")
    subprocess.run(["heif-enc", "-q", "90", "-o", heic, png], check=True, capture_output=True,
                   timeout=120)
    os.chmod(heic, 0o644)
    os.makedirs(os.path.join(TMP, "certs"))
    certs = make_certs(os.path.join(TMP, "certs"))
    plain = Nginx(os.path.join(TMP, "www-tls"), "nginx-plain")

    def servers(ports, root):
        blocks = []
        for port, name in zip(ports, ("good", "wrongname", "rogue")):
            crt, key = certs[name]
            blocks.append("""  server {
    listen 127.0.0.1:%d ssl;
    ssl_certificate %s;
    ssl_certificate_key %s;
    root %s;
    location = /img/r-http { return 302 http://127.0.0.1:%d/img/photo.heic; }
    location = /img/r-in { return 302 /img/photo.heic; }
  }
""" % (port, crt, key, root, plain.port))
        return "".join(blocks)
    ng = Nginx(www, "nginx-tls", 3, servers)
    good, wrong, rogue = ("https://127.0.0.1:%d" % p for p in ng.ports)
    allow = " ".join(u + "/img/" for u in (good, wrong, rogue))
    d = H.Daemon("--origin-allow", allow, "--origin-ca", certs["ca"][0], "--origin-timeout", "20")
    try:
        q = Q + "&width=800&format=avif"
        st, h, b = d.req("GET", src_path(good + "/img/photo.heic", q))
        size = avif_size(b) if st == 200 else None
        print("     https origin, photo.heic at width=800 as AVIF: %d, %s bytes, %s"
              % (st, len(b), size))
        check("an https origin (CA from --origin-ca): 200 image/avif at 800x600 (aspect kept)",
              st == 200 and h.get("content-type") == "image/avif" and size == (800, 600),
              (st, h.get("content-type"), size, b[:300]))
        with open(heic, "rb") as f:
            heic_bytes = f.read()
        st, h, b = d.req("GET", src_path(good + "/img/photo.heic", Q + "&width=800&format=png"))
        pst, _, pb = d.req("POST", "/v1/bloom?" + Q + "&width=800&format=png", body=heic_bytes,
                           headers={"Content-Type": "image/heic"})
        diff = None
        if st == 200 and pst == 200:
            g, p = decode(b).astype(int), decode(pb).astype(int)
            diff = int(np.abs(g - p).max()) if g.shape == p.shape else None
        print("     https GET src= against POST of the same HEIC: max |diff| %s codes" % diff)
        check("its render equals POST /v1/bloom of the same HEIC bytes (within 1 code)",
              diff is not None and diff <= 1, (st, pst, diff))
        st, h, b = d.req("GET", src_path(good + "/img/r-in", Q + "&width=800&format=png"))
        check("a redirect within the https origin: 200", st == 200, (st, b[:300]))
        for url, why in ((wrong + "/img/photo.heic", "a certificate for another name"),
                         (rogue + "/img/photo.heic", "a self-signed certificate (not the CA's)")):
            st, h, b = d.req("GET", src_path(url))
            print("     %s: %d %s" % (why, st, err_of(b)[2][:160] if st >= 400 else ""))
            check("%s: 502 origin_tls" % why, (st, code(st, b)) == (502, "origin_tls"),
                  (st, b[:300]))
        st, h, b = d.req("GET", src_path(good + "/img/r-http"))
        check("a redirect from https to plain http outside the list: 403 origin_not_allowed",
              (st, code(st, b)) == (403, "origin_not_allowed"), (st, b[:300]))
        seen = [l for l in plain.seen() if "photo" in l]
        check("the plain origin was never asked", not seen, seen)
        d.stop("https origin daemon")
        d = H.Daemon("--origin-allow", allow)
        st, h, b = d.req("GET", src_path(good + "/img/photo.heic"))
        check("without --origin-ca the system's store is used: the test CA's leaf is refused "
              "(502 origin_tls, naming the system's CAs)",
              (st, code(st, b)) == (502, "origin_tls") and "system" in err_of(b)[2],
              (st, b[:300]))
    finally:
        d.stop("https origin daemon")
        ng.stop()
        plain.stop()
    p = subprocess.run([H.DAEMON, "--listen", "127.0.0.1", "--port", "0", "--origin-allow", allow,
                        "--origin-ca", os.path.join(TMP, "no-such-ca.pem")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    check("an unreadable --origin-ca: the daemon exits non-zero, naming it",
          p.returncode != 0 and "--origin-ca" in out, (p.returncode, out[-600:]))


def main():
    if not os.path.exists(NGINX):
        check("nginx is installed (make deps-test: nginx-light)", False, NGINX)
        print("SCRIPT: %d passed, %d failed" % (H.PASSED, H.FAILED))
        sys.exit(1)
    H.run_script([test_origin, test_https_origin], "ORIGIN_ONLY", (TMP,), need_daemon=True)


if __name__ == "__main__":
    main()
