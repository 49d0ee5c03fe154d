"""Stored source images and the GET render URLs over real HTTP (run by test_store.sh): PUT, GET,
DELETE and the list of /v1/images; --max-images and --image-memory (409, 413); --image-dir and
SIGHUP; GET /v1/bloom/NAME and /v1/convolve/NAME against the POST render of the same bytes and
parameters and against a numpy direct convolution; ETags equal for equivalent queries and
different for different renders; 304 on If-None-Match with no GPU work; HEAD; Cache-Control,
Vary and CORS; a render's place in the queue and its hold on a deleted image; signed URLs (the
CLI's, docs/http-api.md's Python example's, tampered, missing, the API key instead); odd names and
path traversal. Uses http_test.py's daemon harness. Last line: "SCRIPT: N passed, N failed"."""
import base64
import hashlib
import hmac
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import FORMAT_TITLES, check, err_of, png_bytes, jpg_bytes, rand8, rand_float  # noqa: E402
from http_test import write_pfm, read_pfm, close_enough, direct_convolve, wait_queue  # noqa: E402

import numpy as np  # noqa: E402

TMP = tempfile.mkdtemp(prefix="fftbloomd-store-")
# seconds a request may take: a first convolve calibrates its method on the GPU thread, which
# under the sanitizers on llvmpipe takes minutes
REQ_TIMEOUT = 900 if H.SAN else 120


class Daemon(H.Daemon):
    def req(self, method, path, body=None, headers=None, timeout=None):
        return super().req(method, path, body=body, headers=headers,
                           timeout=timeout or REQ_TIMEOUT)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
Q = "threshold=0.6&intensity=0.8&kernel_preset=gaussian:sigma=2"


def req_all(d, method, path, body=None, headers=None):
    """As Daemon.req, with every header kept (a name may repeat: Vary)."""
    c = d.conn(REQ_TIMEOUT)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, [(k.lower(), v) for k, v in r.getheaders()], data
    finally:
        c.close()


def values(hs, name):
    return [v for k, v in hs if k == name]


def vary_of(hs):
    """The field names an answer's Vary headers list."""
    return {v.strip() for h in values(hs, "vary") for v in h.split(",")}


def etag(d, path, headers=None):
    st, h, b = d.req("GET", path, headers=headers)
    return h.get("etag") if st == 200 else ("%s %s" % (st, b[:200]))


def gpu_jobs(d):
    return d.metric("fftbloom_gpu_jobs_total")


# ---- PUT, GET, DELETE, list; names ----

def test_store_api():
    idir = os.path.join(TMP, "images-a")
    kdir = os.path.join(TMP, "kernels-a")
    os.makedirs(idir)
    os.makedirs(kdir)
    a8 = rand8()
    open(os.path.join(idir, "fromdir.png"), "wb").write(png_bytes(a8))
    kern = H.RNG.random((5, 7, 3)).astype(np.float32)
    write_pfm(os.path.join(kdir, "star.pfm"), kern)
    d = Daemon("--image-dir", idir, "--kernel-dir", kdir, "--cors-origins", "http://app.example")
    try:
        check("--image-dir logged", "image-dir: 1 images stored" in d.log(), d.log()[-500:])
        st, _, b = d.req("GET", "/v1/images")
        names = [i["name"] for i in json.loads(b)["images"]] if st == 200 else None
        check("GET /v1/images lists the --image-dir image", names == ["fromdir"], (st, b[:300]))

        png = png_bytes(rand8(40, 56))
        st, h, b = d.req("PUT", "/v1/images/photo", body=png)
        o = json.loads(b) if st == 201 else {}
        check("PUT /v1/images/photo: 201 with Location", st == 201 and
              h.get("location") == "/v1/images/photo", (st, h, b[:300]))
        check("PUT answers the facts: size, format, bits, SHA-256 digest, bytes",
              (o.get("width"), o.get("height"), o.get("format"), o.get("bits"), o.get("digest"),
               o.get("bytes"), o.get("replaced")) ==
              (56, 40, "png", 8, hashlib.sha256(png).hexdigest(), len(png), False), o)
        jpg = jpg_bytes(rand8(30, 20))
        st, h, b = d.req("PUT", "/v1/images/photo", body=jpg)
        check("PUT again: 200, replaced, no Location", st == 200 and json.loads(b)["replaced"]
              and "location" not in h, (st, h, b[:300]))
        st, h, b = d.req("GET", "/v1/images/photo")
        o = json.loads(b) if st == 200 else {}
        check("GET /v1/images/photo: the new facts", st == 200 and
              (o.get("format"), o.get("width"), o.get("height"), o.get("digest"), o.get("bytes")) ==
              ("jpeg", 20, 30, hashlib.sha256(jpg).hexdigest(), len(jpg)) and
              re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", o.get("created", "")), o)
        st2, h2, b2 = d.req("HEAD", "/v1/images/photo")
        check("HEAD /v1/images/photo: the GET's headers, no body", st2 == 200 and b2 == b"" and
              h2.get("content-length") == str(len(b)), (st2, h2))
        st, _, b = d.req("GET", "/v1/images")
        check("the list is sorted by name", [i["name"] for i in json.loads(b)["images"]] ==
              ["fromdir", "photo"], b[:300])
        kb = open(os.path.join(kdir, "star.pfm"), "rb").read()
        st, h, b = d.req("PUT", "/v1/kernels/star2", body=kb)
        check("kernel PUT: 201 with Location too", st == 201 and
              h.get("location") == "/v1/kernels/star2", (st, h))

        st, _, b = d.req("PUT", "/v1/images/empty", body=b"")
        check("PUT of no body: 400 empty_body", st == 400 and err_of(b)[1] == "empty_body", (st, b))
        st, _, b = d.req("PUT", "/v1/images/text", body=b"hello, not an image")
        check("PUT of text: 415 naming every format read, WebP and AVIF too", st == 415 and
              all(t in err_of(b)[2] for t in FORMAT_TITLES), (st, b))
        st, _, b = d.req("PUT", "/v1/images/cut", body=png[:len(png) // 2])
        check("PUT of a truncated PNG: 422, nothing stored", st == 422 and
              d.req("GET", "/v1/images/cut")[0] == 404, (st, b[:300]))
        for path in ("/v1/images/.hidden", "/v1/images/%2e%2e", "/v1/images/a%2fb",
                     "/v1/images/../../etc/passwd", "/v1/images/a%20b", "/v1/images/" + "x" * 65,
                     "/v1/bloom/..%2f..%2fetc%2fpasswd", "/v1/convolve/.x"):
            st, _, b = d.req("PUT" if path.startswith("/v1/images") else "GET", path, body=png
                             if path.startswith("/v1/images") else None)
            check("odd name %s: 400 bad_image_name" % path, st == 400 and
                  err_of(b)[1] == "bad_image_name", (st, b[:200]))
        st, _, b = d.req("GET", "/v1/images")
        check("no odd name was stored", [i["name"] for i in json.loads(b)["images"]] ==
              ["fromdir", "photo"], b[:300])
        st, _, b = d.req("GET", "/v1/images/" + "y" * 64)
        check("a 64-character name is a name (404, not 400)", st == 404 and
              err_of(b)[1] == "image_not_found", (st, b))
        st, h, b = d.req("POST", "/v1/bloom/photo", body=png)
        check("POST /v1/bloom/NAME: 405 naming GET", st == 405 and "GET" in h.get("allow", ""),
              (st, h))
        st, h, _ = d.req("OPTIONS", "/v1/bloom/photo", headers={
            "Origin": "http://app.example", "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "If-None-Match"})
        check("CORS preflight of a render URL allows GET and If-None-Match", st == 204 and
              "GET" in h.get("access-control-allow-methods", "") and
              "If-None-Match" in h.get("access-control-allow-headers", ""), (st, h))

        st, _, _ = d.req("DELETE", "/v1/images/photo")
        check("DELETE: 204", st == 204, st)
        st, _, b = d.req("GET", "/v1/images/photo")
        check("GET after DELETE: 404 image_not_found", st == 404 and
              err_of(b)[1] == "image_not_found", (st, b))
        st, _, b = d.req("GET", "/v1/bloom/photo")
        check("render after DELETE: 404 image_not_found", st == 404 and
              err_of(b)[1] == "image_not_found", (st, b))
        check("DELETE again: 404", d.req("DELETE", "/v1/images/photo")[0] == 404)
        n = d.metric("fftbloom_stored_images")
        check("fftbloom_stored_images counts them", n == 1, n)
        st, _, b = d.req("GET", "/v1/info")
        info = json.loads(b) if st == 200 else {}
        check("/v1/info: stored images, the engine's digest, url_signing false, the engine",
              info.get("stored_images", {}).get("count") == 1 and
              re.match(r"[0-9a-f]{64}$", info.get("engine_digest", "")) and
              info.get("url_signing") is False and
              info.get("engine") == os.environ.get("FFTBLOOM_ENGINE", info.get("engine")) and
              info.get("engine") in ("gpu", "cpu"),
              {k: info.get(k) for k in ("stored_images", "engine_digest", "url_signing", "engine")})
    finally:
        d.stop("store daemon")


# ---- renders, ETags, 304, HEAD, caching headers ----

def test_render():
    kdir = os.path.join(TMP, "kernels-r")
    os.makedirs(kdir)
    kern = H.RNG.random((5, 7, 3)).astype(np.float32)
    write_pfm(os.path.join(kdir, "star.pfm"), kern)
    d = Daemon("--kernel-dir", kdir, "--cors-origins", "http://app.example")
    try:
        png = png_bytes(rand8())
        fl = rand_float()
        pf = open(write_pfm(os.path.join(TMP, "r.pfm"), fl), "rb").read()
        check("PUT photo and float", d.req("PUT", "/v1/images/photo", body=png)[0] == 201 and
              d.req("PUT", "/v1/images/float", body=pf)[0] == 201)

        # GET render == POST render of the same bytes and parameters
        st, h, got = d.req("GET", "/v1/bloom/photo?" + Q + "&format=pfm")
        st2, _, want = d.req("POST", "/v1/bloom?" + Q + "&format=pfm", body=png)
        check("GET /v1/bloom/photo: 200 PFM", st == 200 and st2 == 200 and
              h.get("content-type") == "image/x-portable-floatmap", (st, st2, h, got[:200]))
        if st == 200 and st2 == 200:
            close_enough("GET bloom render == POST bloom of the same bytes and parameters",
                         read_pfm(got), read_pfm(want), tol=1e-6)
            check("... byte for byte", got == want, (len(got), len(want)))
        st, h, got = d.req("GET", "/v1/convolve/float?kernel=star&format=pfm")
        st2, _, want = d.req("POST", "/v1/convolve?kernel=star&format=pfm", body=pf)
        if check("GET /v1/convolve/float?kernel=star: 200", st == 200 and st2 == 200, (st, got[:200])):
            close_enough("GET convolve render == POST convolve", read_pfm(got), read_pfm(want),
                         tol=1e-6)
            close_enough("GET convolve render == numpy direct convolution", read_pfm(got),
                         direct_convolve(fl, kern), tol=1e-4)

        # formats: the input's family, Accept, format=; Vary: Accept only where Accept decides
        st, hs, b = req_all(d, "GET", "/v1/bloom/photo?" + Q)
        check("no format=: PNG in, PNG out, Vary: Accept", st == 200 and
              values(hs, "content-type") == ["image/png"] and b[:4] == b"\x89PNG" and
              "Accept" in vary_of(hs), (st, hs))
        st, hs, b = req_all(d, "GET", "/v1/bloom/photo?" + Q,
                            headers={"Accept": "image/x-portable-floatmap"})
        check("Accept: PFM picks PFM, Vary: Accept", st == 200 and b[:2] == b"PF" and
              "Accept" in vary_of(hs), (st, hs))
        st, hs, b = req_all(d, "GET", "/v1/bloom/photo?" + Q + "&format=jpeg",
                            headers={"Accept": "image/png"})
        check("format=jpeg wins over Accept, no Vary: Accept", st == 200 and b[:2] == b"\xff\xd8"
              and "Accept" not in vary_of(hs), (st, hs))
        check("Cache-Control: the default public, max-age=300",
              values(hs, "cache-control") == ["public, max-age=300"], hs)

        # ETags: equivalent queries share one; different renders do not (knee=0.2 is an 8-bit
        # photo's default)
        base = etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=png")
        check("a weak, quoted ETag (renders on another plan differ in the last bits)",
              re.match(r'^W/"[0-9a-f]{32}"$', base or ""), base)
        same = [etag(d, "/v1/bloom/photo?intensity=2&format=png&threshold=0.5"),
                etag(d, "/v1/bloom/photo?threshold=0.50&intensity=2.0&format=png"),
                etag(d, "/v1/bloom/photo?threshold=5e-1&intensity=2&format=png&knee=0.2"),
                etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2",
                     headers={"Accept": "image/png"})]
        check("ETag equal across equivalent queries (order, 0.5/0.50/5e-1, a default given, "
              "Accept or format= naming PNG)", all(t == base for t in same), (base, same))
        diff = {
            "threshold": etag(d, "/v1/bloom/photo?threshold=0.6&intensity=2&format=png"),
            "kernel": etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=png&kernel=star"),
            "preset": etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=png"
                              "&kernel_preset=glare"),
            "format": etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=pfm"),
            "jpeg q90": etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=jpeg"),
            "jpeg q80": etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=jpeg&quality=80"),
            "convolve": etag(d, "/v1/convolve/photo?format=png&method=fft"),
            "image": etag(d, "/v1/bloom/float?threshold=0.5&intensity=2&format=png"),
        }
        tags = [base] + list(diff.values())
        check("ETag differs for different parameters, kernels, formats, quality, operation, image",
              len(set(tags)) == len(tags) and all(t and t.startswith('W/"') for t in tags), diff)
        st, h, b = d.req("PUT", "/v1/images/photo", body=png)
        check("re-PUT of the same bytes keeps the ETag", st == 200 and
              etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=png") == base, (st, b[:200]))
        png2 = png_bytes(rand8())
        d.req("PUT", "/v1/images/photo", body=png2)
        t2 = etag(d, "/v1/bloom/photo?threshold=0.5&intensity=2&format=png")
        check("replacing the image changes the ETag", t2 != base and t2.startswith('W/"'), (t2, base))

        # 304 without GPU work
        url = "/v1/bloom/photo?threshold=0.5&intensity=2&format=png"
        jobs0 = gpu_jobs(d)
        for inm in (t2, t2[2:], '"nope", ' + t2, "*"):
            st, hs, b = req_all(d, "GET", url, headers={"If-None-Match": inm})
            check("If-None-Match %s: 304, no body, ETag and Cache-Control" % inm, st == 304 and
                  b == b"" and values(hs, "etag") == [t2] and
                  values(hs, "cache-control") == ["public, max-age=300"], (st, hs, b[:100]))
        st, hs, b = req_all(d, "GET", "/v1/bloom/photo?intensity=2&threshold=0.50",
                            headers={"If-None-Match": t2, "Accept": "image/png"})
        check("an equivalent query revalidates too: 304 with Vary: Accept", st == 304 and
              "Accept" in vary_of(hs), (st, hs))
        jobs1 = gpu_jobs(d)
        check("304s ran no GPU job (fftbloom_gpu_jobs_total unchanged)", jobs1 == jobs0,
              (jobs0, jobs1))
        st, h, b = d.req("GET", url, headers={"If-None-Match": base})
        check("a stale ETag: 200 with the new one, one GPU job", st == 200 and
              h.get("etag") == t2 and gpu_jobs(d) == jobs1 + 1, (st, h, gpu_jobs(d), jobs1))

        # HEAD
        st, h, b = d.req("GET", url)
        st2, h2, b2 = d.req("HEAD", url)
        check("HEAD of a render: the GET's status, ETag, type and length, no body",
              st2 == 200 and b2 == b"" and h2.get("etag") == h.get("etag") and
              h2.get("content-type") == "image/png" and
              h2.get("content-length") == str(len(b)), (st2, h2, len(b)))
        st, h, b = d.req("HEAD", url, headers={"If-None-Match": t2})
        check("HEAD with If-None-Match: 304", st == 304, (st, h))

        # CORS: a page on another origin reads the render and its ETag
        st, hs, b = req_all(d, "GET", "/v1/bloom/photo?threshold=0.5&intensity=2",
                            headers={"Origin": "http://app.example"})
        expose = ",".join(values(hs, "access-control-expose-headers"))
        check("CORS: allowed origin, ETag exposed, Vary names Origin and Accept", st == 200 and
              values(hs, "access-control-allow-origin") == ["http://app.example"] and
              "ETag" in expose and "Origin" in ",".join(values(hs, "vary")) and
              "Accept" in ",".join(values(hs, "vary")), hs)

        # errors are not cacheable
        for path, code, want in (("/v1/bloom/nosuch", 404, "image_not_found"),
                                 ("/v1/bloom/photo?kernel=nosuch", 400, "unknown_kernel"),
                                 ("/v1/bloom/photo?threshold=-1", 400, "bad_parameter"),
                                 ("/v1/bloom/photo?method=fft", 400, "bad_parameter"),
                                 ("/v1/bloom/photo?threshold=1&threshold=2", 400, "bad_parameter"),
                                 ("/v1/convolve/photo?kernel=star&kernel_preset=glare", 400,
                                  "bad_parameter")):
            st, h, b = d.req("GET", path)
            check("%s: %d %s, Cache-Control: no-store, no ETag" % (path, code, want),
                  st == code and err_of(b)[1] == want and h.get("cache-control") == "no-store"
                  and "etag" not in h, (st, h, b[:200]))
    finally:
        d.stop("render daemon")


# ---- limits: --max-images, --image-memory, --memory-budget; the API key ----

def test_limits():
    keyf = os.path.join(TMP, "api.key")
    open(keyf, "w").write("store-test-key-%x\n" % H.RNG.integers(1 << 40))
    key = open(keyf).read().strip()
    auth = {"Authorization": "Bearer " + key}
    small, big = png_bytes(rand8(48, 64)), png_bytes(rand8(100, 100))
    mem = len(small) + len(big) + 100  # a small and a big fit; two big do not
    print("     image bytes: small %d, big %d; --image-memory %d" % (len(small), len(big), mem))
    d = Daemon("--max-images", "2", "--image-memory", str(mem), "--memory-budget", "1M",
               "--api-key-file", keyf)
    try:
        st, h, b = d.req("PUT", "/v1/images/a", body=small)
        check("PUT without the API key: 401", st == 401, (st, b))
        st1 = d.req("PUT", "/v1/images/a", body=small, headers=auth)[0]
        st2 = d.req("PUT", "/v1/images/b", body=small, headers=auth)[0]
        st, _, b = d.req("PUT", "/v1/images/c", body=small, headers=auth)
        check("a third image past --max-images 2: 409 image_store_full naming the option",
              (st1, st2, st, err_of(b)[1]) == (201, 201, 409, "image_store_full") and
              "--max-images" in err_of(b)[2], (st1, st2, st, b))
        st, _, b = d.req("PUT", "/v1/images/b", body=big, headers=auth)
        check("replacing b with a bigger image that fits with a: 200", st == 200, (st, b[:200]))
        st, _, b = d.req("PUT", "/v1/images/a", body=big, headers=auth)
        check("two big images pass --image-memory: 409 image_memory_full naming it",
              st == 409 and err_of(b)[1] == "image_memory_full" and "--image-memory" in
              err_of(b)[2], (st, b))
        huge = png_bytes(rand8(160, 160))
        st, _, b = d.req("PUT", "/v1/images/huge", body=huge, headers=auth)
        check("an image alone larger than --image-memory: 413 image_too_large", st == 413 and
              err_of(b)[1] == "image_too_large" and "--image-memory" in err_of(b)[2], (st, b))
        n = d.metric("fftbloom_stored_image_bytes")
        check("stored bytes within --image-memory", n is not None and n <= mem, (n, mem))
        st, _, b = d.req("DELETE", "/v1/images/b", headers=auth)
        wide = png_bytes(np.full((200, 200, 3), 30, np.uint8))  # 40000 px x 32 B > 1 MiB
        st, _, b = d.req("PUT", "/v1/images/wide", body=wide, headers=auth)
        check("an image whose render could never fit --memory-budget: 413 at PUT", st == 413 and
              "memory-budget" in err_of(b)[2], (st, b[:300]))
        st, _, b = d.req("GET", "/v1/bloom/a?format=png")
        check("a render without the API key (no signing): 401", st == 401, (st, b))
        st, h, b = d.req("GET", "/v1/bloom/a?format=png", headers=auth)
        check("a render with the API key: 200, Cache-Control: private, no-cache", st == 200 and
              h.get("cache-control") == "private, no-cache" and h.get("etag"), (st, h))
    finally:
        d.stop("limits daemon")
    # --image-dir bypasses the PUT's check: the render's decode still reserves the budget
    idir = os.path.join(TMP, "images-budget")
    os.makedirs(idir)
    open(os.path.join(idir, "wide.png"), "wb").write(wide)
    d = Daemon("--image-dir", idir, "--memory-budget", "1M")
    try:
        st, _, b = d.req("GET", "/v1/bloom/wide")
        check("a render is a job: its decode reserves --memory-budget (413)", st == 413 and
              "memory-budget" in err_of(b)[2], (st, b[:300]))
    finally:
        d.stop("budget daemon")


# ---- the queue: a render waits like a POST, and keeps its image when it is deleted ----

def test_queue_and_delete():
    d = Daemon("--queue-size", "1", "--deadline", "600")  # the slow job: minutes under ASan
    try:
        body, t = H.slow_job(d, 1.0)
        if body is None:
            check("slow job for the queue test", False)
            return
        if t < 0.25:  # a GPU: the largest of SLOW_SIDES is over before a render can queue
            print("skip the queue test: no job slow enough to hold the GPU (%.3f s)" % t)
            return
        check("PUT photo", d.req("PUT", "/v1/images/photo", body=png_bytes(rand8()))[0] == 201)
        url = "/v1/bloom/photo?format=png"
        d.req("GET", url)  # plans this size, so the queued render is quick once on the GPU
        res = {}
        slow = H.post_async(d, "/v1/convolve?" + H.SLOW_Q, body, res, "slow")
        check("the slow job holds the GPU", wait_queue(d, 0))
        out = {}

        def get():
            out["r"] = d.req("GET", url)
            out["t"] = time.time()
        g = threading.Thread(target=get)
        g.start()
        queued = wait_queue(d, 1)
        check("the GET render waits in the queue behind the GPU's job", queued)
        st, h, b = d.req("GET", "/v1/bloom/photo?format=jpeg")
        check("a second render finds the queue (--queue-size 1) full: 503 queue_full",
              st == 503 and err_of(b)[1] == "queue_full" and h.get("retry-after"), (st, b[:200]))
        st, _, _ = d.req("DELETE", "/v1/images/photo")
        t_del = time.time()
        check("DELETE of the image while its render waits: 204", st == 204, st)
        g.join(120)
        slow.join(120)
        st, h, b = out.get("r", (None, {}, b""))
        check("the render still answers 200 with the image deleted under it", st == 200 and
              b[:4] == b"\x89PNG" and out.get("t", 0) > t_del, (st, b[:200]))
        check("the image is gone afterwards", d.req("GET", "/v1/images/photo")[0] == 404)
        check("the slow job answered", res.get("slow", (None,))[0] == 200, res.get("slow"))
    finally:
        d.stop("queue daemon")


# ---- --image-dir and SIGHUP ----

def test_image_dir_sighup():
    idir = os.path.join(TMP, "images-hup")
    os.makedirs(idir)
    open(os.path.join(idir, "one.png"), "wb").write(png_bytes(rand8()))
    d = Daemon("--image-dir", idir)
    try:
        def listing():
            st, _, b = d.req("GET", "/v1/images")
            return [(i["name"], i["width"]) for i in json.loads(b)["images"]] if st == 200 else st
        check("one image from --image-dir", listing() == [("one", 64)], listing())
        st, _, b = d.req("GET", "/v1/bloom/one?format=png")
        check("an --image-dir image renders", st == 200 and b[:4] == b"\x89PNG", (st, b[:200]))
        d.req("PUT", "/v1/images/upload", body=png_bytes(rand8(10, 12)))
        os.unlink(os.path.join(idir, "one.png"))
        open(os.path.join(idir, "two.jpg"), "wb").write(jpg_bytes(rand8(20, 30)))

        def hup(want_log):
            n = d.log().count(want_log)
            d.p.send_signal(signal.SIGHUP)
            end = time.time() + 20
            while time.time() < end and d.log().count(want_log) == n:
                time.sleep(0.05)
            return d.log().count(want_log) > n
        check("SIGHUP reloads --image-dir", hup("image-dir %s reloaded" % idir), d.log()[-800:])
        check("after SIGHUP: the new file in, the gone one out, the upload kept",
              listing() == [("two", 30), ("upload", 12)], listing())
        open(os.path.join(idir, "three.png"), "wb").write(b"\x89PNG\r\n\x1a\nbroken")
        check("SIGHUP with a corrupt file: logged, images kept as they were",
              hup("stored images kept as they were") and
              listing() == [("two", 30), ("upload", 12)], (listing(), d.log()[-800:]))
        check("the daemon still serves after the SIGHUPs", d.req("GET", "/healthz")[0] == 200)
    finally:
        d.stop("image-dir daemon")
    bad = os.path.join(TMP, "images-bad")
    os.makedirs(bad)
    open(os.path.join(bad, "x.png"), "wb").write(b"\x89PNG\r\n\x1a\nbroken")
    p = subprocess.run([H.DAEMON, "--port", "0", "--image-dir", bad], capture_output=True,
                       text=True, timeout=120)
    check("a corrupt --image-dir file stops the start, naming the file", p.returncode != 0 and
          "x.png" in p.stderr + p.stdout, (p.returncode, (p.stderr + p.stdout)[-400:]))


# ---- signed URLs ----

def readme_sign_url():
    """The Python signing example of docs/http-api.md (the ```python block that defines sign_url), run as
    written in TMP, where url.key is: its sign_url function and what it printed."""
    text = open(os.path.join(ROOT, "docs", "http-api.md")).read()
    for block in re.findall(r"```python[^\n]*\n(.*?)```", text, re.S):
        if "def sign_url" in block:
            ns = {}
            cwd = os.getcwd()
            path = os.path.join(TMP, "readme_example.py")
            open(path, "w").write(block)
            r = subprocess.run([sys.executable, path], cwd=TMP, capture_output=True, text=True,
                               timeout=60)
            os.chdir(TMP)
            try:
                exec(compile(block, "docs/http-api.md", "exec"), ns)
            finally:
                os.chdir(cwd)
            return ns["sign_url"], r
    return None, None


def py_sign(key, path, params):
    """A signed render URL, written from docs/http-api.md's words alone."""
    q = "&".join(sorted(urllib.parse.quote(k, safe="") + "=" + urllib.parse.quote(v, safe="")
                        for k, v in params.items()))
    canonical = path + ("?" + q if q else "")
    mac = hmac.new(key, canonical.encode(), hashlib.sha256).digest()
    return canonical + ("&" if q else "?") + "sig=" + base64.urlsafe_b64encode(mac).rstrip(
        b"=").decode()


def signed_expiry_checks(d, key, keyf):
    """exp=: covered by the signature, refused after it (30 s of skew), added by sign-url
    --expires-in; sign-url refuses routes that take no signature."""
    now = int(time.time())
    for ago, want in ((-3600, 200), (10, 200), (120, 403), (10 ** 6, 403)):
        url = py_sign(key, "/v1/bloom/photo", {"format": "png", "exp": str(now - ago)})
        st, _, b = d.req("GET", url)
        check("exp %+d s from now: %d%s" % (-ago, want, " url_expired" if want == 403 else
                                             " (within the 30 s skew allowance)" if ago > 0
                                             else ""),
              st == want and (want == 200 or err_of(b)[1] == "url_expired"), (st, url, b[:300]))
    url = py_sign(key, "/v1/bloom/photo", {"format": "png", "exp": str(now - 3600)})
    st, _, b = d.req("GET", url.replace("exp=%d" % (now - 3600), "exp=%d" % (now + 3600)))
    check("exp moved later after signing: 403 bad_signature", st == 403 and
          err_of(b)[1] == "bad_signature", (st, b[:300]))
    url = py_sign(key, "/v1/bloom/photo", {"format": "png"})
    st, _, b = d.req("GET", url + "&exp=%d" % (now + 3600))
    check("exp added outside the signature: 403 bad_signature", st == 403 and
          err_of(b)[1] == "bad_signature", (st, b[:300]))
    url = py_sign(key, "/v1/bloom/photo", {"format": "png", "exp": "0x10"})
    st, _, b = d.req("GET", url)
    check("a signed exp that is not Unix seconds: 400 bad_parameter naming exp", st == 400 and
          err_of(b)[1] == "bad_parameter" and "exp" in err_of(b)[2], (st, b[:300]))
    r = subprocess.run([H.CLI, "sign-url", "--key-file", keyf, "--expires-in", "300",
                        "/v1/convolve/photo?format=png&kernel_preset=gaussian:sigma=1"],
                       capture_output=True, text=True)
    out = r.stdout.strip()
    m = re.match(r"/v1/convolve/photo\?exp=(\d+)&format=png&kernel_preset=gaussian%3Asigma%3D1"
                 r"&sig=[\w-]{43}$", out)
    check("sign-url --expires-in 300 adds exp = now + 300, in canonical form", r.returncode == 0
          and m and abs(int(m.group(1)) - (now + 300)) <= 5, (r.returncode, out, r.stderr))
    st, _, b = d.req("GET", out)
    check("... and the daemon takes it: 200", st == 200, (st, b[:300]))
    st, _, b = d.req("GET", out.replace("exp=", "exp=1"))
    check("... but not with its exp changed: 403", st == 403, (st, b[:300]))
    for path in ("/v1/images/photo", "/v1/bloom", "/v1/bloom?x=1", "/v1/bloom/", "/v1/kernels/k",
                 "http://h:8080/v1/info?x=1", "/v1/bloom/../images"):
        r = subprocess.run([H.CLI, "sign-url", "--key-file", keyf, path], capture_output=True,
                           text=True)
        check("sign-url refuses %s (no signature is checked there): exit 2" % path,
              r.returncode == 2 and not r.stdout and "takes no signature" in r.stderr,
              (r.returncode, r.stdout, r.stderr))


def test_signed_urls():
    keyf = os.path.join(TMP, "url.key")
    open(keyf, "w").write(os.urandom(32).hex() + "\n")
    key = open(keyf, "rb").read().rstrip(b" \t\r\n")
    apif = os.path.join(TMP, "api2.key")
    open(apif, "w").write("api-key-for-signing-test\n")
    auth = {"Authorization": "Bearer api-key-for-signing-test"}
    d = Daemon("--url-signing-key-file", keyf, "--api-key-file", apif)
    try:
        check("PUT photo (with the API key)",
              d.req("PUT", "/v1/images/photo", body=png_bytes(rand8()), headers=auth)[0] == 201)
        plain = "/v1/bloom/photo?threshold=0.5&kernel_preset=glare:streaks=6&format=png"
        r = subprocess.run([H.CLI, "sign-url", "--key-file", keyf, plain], capture_output=True,
                           text=True)
        signed = r.stdout.strip()
        canonical = "/v1/bloom/photo?format=png&kernel_preset=glare%3Astreaks%3D6&threshold=0.5"
        check("fftbloom sign-url prints the canonical URL and sig=", r.returncode == 0 and
              re.match(re.escape(canonical) + r"&sig=[A-Za-z0-9_-]{43}$", signed), (r, signed))
        st, h, b = d.req("GET", signed)
        check("a signed URL: 200, public Cache-Control", st == 200 and b[:4] == b"\x89PNG" and
              h.get("cache-control") == "public, max-age=300", (st, h, b[:200]))
        tag = h.get("etag")
        st, _, b = d.req("GET", plain)
        check("no signature: 403 signature_required", st == 403 and
              err_of(b)[1] == "signature_required", (st, b))
        for name, url in (("a changed value", signed.replace("threshold=0.5", "threshold=0.6")),
                          ("an added parameter", signed.replace("&sig=", "&intensity=9&sig=")),
                          ("a removed parameter", signed.replace("format=png&", "")),
                          ("another image", signed.replace("/photo?", "/other?")),
                          ("another operation", signed.replace("/v1/bloom/", "/v1/convolve/")),
                          ("a cut signature", signed[:-1]),
                          ("a changed signature", signed[:-1] + ("A" if signed[-1] != "A" else "B")),
                          ("sig twice", signed + "&sig=" + signed.rsplit("=", 1)[1])):
            st, _, b = d.req("GET", url)
            check("tampered (%s): 403 bad_signature" % name, st == 403 and
                  err_of(b)[1] == "bad_signature", (st, b[:200]))
        sig = signed.rsplit("&sig=", 1)[1]
        reordered = ("/v1/bloom/photo?sig=%s&format=png&kernel_preset=glare%%3Astreaks%%3D6"
                     "&threshold=0.5" % sig)
        st, h, b = d.req("GET", reordered, headers={"If-None-Match": tag})
        check("the same parameters reordered and re-encoded verify (304 on its ETag)",
              st == 304 and h.get("etag") == tag, (st, h, b[:200]))
        st, h, b = d.req("GET", plain, headers=auth)
        check("the API key instead of a signature: 200, private Cache-Control", st == 200 and
              h.get("cache-control") == "private, no-cache" and h.get("etag") == tag, (st, h))
        st, _, b = d.req("GET", "/v1/images", headers={})
        check("signing opens the render URLs only: /v1/images still needs the key (401)",
              st == 401, (st, b[:200]))
        st, _, b = d.req("GET", "/v1/bloom/nosuch?sig=" + sig)
        check("a signature for another URL cannot probe names: 403 before 404", st == 403, st)

        sign_url, run = readme_sign_url()
        if check("docs/http-api.md has the Python signing example (def sign_url)", sign_url is not None):
            printed = run.stdout.strip()
            check("docs/http-api.md's example runs as written and prints a signed URL",
                  run.returncode == 0 and re.match(r"/v1/bloom/hubble\?kernel_preset=glare%3A"
                                                   r"streaks%3D6&threshold=0.5&sig=[\w-]{43}$",
                                                   printed), (run.returncode, printed, run.stderr))
            st, _, b = d.req("PUT", "/v1/images/hubble", body=png_bytes(rand8()), headers=auth)
            st, _, b = d.req("GET", printed)
            check("... and that URL works", st == 200, (st, b[:200]))
            url = sign_url(key, "/v1/convolve/photo", {"kernel_preset": "gaussian:sigma=1.5",
                                                       "format": "pfm", "normalize": "luminance"})
            st, h, b = d.req("GET", url)
            check("docs/http-api.md's Python example makes a working URL: %s" % url, st == 200 and
                  b[:2] == b"PF", (st, b[:200]))
            odd = sign_url(key, "/v1/bloom/photo", {"kernel_preset": "aperture:blades=6,radius=0.1",
                                                    "knee": "0.25", "format": "jpeg"})
            st, _, b = d.req("GET", odd)
            check("... with commas and colons in values", st == 200 and b[:2] == b"\xff\xd8",
                  (st, odd, b[:200]))
        # an independent implementation: the scheme as docs/http-api.md states it, in a few lines
        params = {"intensity": "1.5", "format": "png"}
        q = "&".join(sorted(urllib.parse.quote(k, safe="") + "=" + urllib.parse.quote(v, safe="")
                            for k, v in params.items()))
        mac = hmac.new(key, ("/v1/bloom/photo?" + q).encode(), hashlib.sha256).digest()
        s = base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
        st, _, b = d.req("GET", "/v1/bloom/photo?format=png&intensity=1.5&sig=" + s)
        check("a signature made from docs/http-api.md's words (hmac, quote, sorted) verifies",
              st == 200, (st, b[:200]))

        signed_expiry_checks(d, key, keyf)

        st, _, body = d.req("GET", "/openapi.json")
        doc = json.loads(body)
        sec = doc["paths"]["/v1/bloom/{name}"]["get"].get("security")
        check("OpenAPI: a render takes the signature or the key; PUT needs the key",
              sec == [{"urlSignature": []}, {"bearer": []}] and
              doc["paths"]["/v1/images/{name}"]["put"].get("security") == [{"bearer": []}] and
              any(p["name"] == "sig" for p in doc["paths"]["/v1/bloom/{name}"]["get"]
                  ["parameters"]), sec)
        validator = os.path.join(ROOT, "tests", "js", "validate_openapi.mjs")
        path = os.path.join(TMP, "openapi-signing.json")
        open(path, "w").write(body.decode())
        r = subprocess.run(["node", validator, path], capture_output=True, text=True, timeout=120)
        check("the signing daemon's /openapi.json validates as OpenAPI 3", r.returncode == 0,
              (r.stdout + r.stderr)[-1500:])
    finally:
        d.stop("signing daemon")
    d = Daemon("--url-signing-key-file", keyf, "--api-key-file", apif, "--url-require-expiry")
    try:
        check("PUT photo (with the API key)", d.req("PUT", "/v1/images/photo",
              body=png_bytes(rand8()), headers=auth)[0] == 201)
        now = int(time.time())
        st, _, b = d.req("GET", py_sign(key, "/v1/bloom/photo", {"format": "png"}))
        check("--url-require-expiry: a signed URL without exp: 403 expiry_required", st == 403 and
              err_of(b)[1] == "expiry_required", (st, b[:300]))
        st, _, b = d.req("GET", py_sign(key, "/v1/bloom/photo", {"format": "png",
                                                                   "exp": str(now + 60)}))
        check("--url-require-expiry: with exp ahead: 200", st == 200, (st, b[:300]))
        st, _, b = d.req("GET", "/v1/bloom/photo?format=png", headers=auth)
        check("--url-require-expiry: the API key needs no exp: 200", st == 200, (st, b[:300]))
        st, _, body = d.req("GET", "/v1/info", headers=auth)
        conf = json.loads(body).get("configuration", {})
        check("/v1/info's configuration shows url-require-expiry on",
              conf.get("url-require-expiry") in (True, "true"),
              {k: v for k, v in conf.items() if "url" in k})
    finally:
        d.stop("require-expiry daemon")
    for content in ("short\n", ""):
        open(keyf, "w").write(content)
        p = subprocess.run([H.DAEMON, "--port", "0", "--url-signing-key-file", keyf],
                           capture_output=True, text=True, timeout=60)
        check("a signing key of %d bytes refuses to start" % len(content.strip()),
              p.returncode != 0 and "at least 16" in p.stderr + p.stdout,
              (p.returncode, (p.stderr + p.stdout)[-300:]))


def main():
    H.run_script([test_store_api, test_render, test_limits, test_queue_and_delete,
                  test_image_dir_sighup, test_signed_urls], "STORE_ONLY", (TMP,), need_daemon=True)


if __name__ == "__main__":
    main()
