"""The web page at / (web/), in a real browser: headless Chromium driven by Selenium against
build/fftbloomd on a free port. Over plain HTTP first: the embedded files byte for byte, their
headers, ETag revalidation, no API key needed for the page. Then as a person uses it: pick a PNG
with a bright spot, set a kernel and the bloom's sliders, and compare the pixels the page shows
with the answer of POST /v1/bloom for the same parameters (and the glare's shape: it spreads
around the spot, the far background is unchanged); raise the intensity (typed, then with the
arrow keys) and check the bloom grows in proportion; move the before/after divider by keyboard
and mouse; an uploaded kernel; a non-image and a non-image kernel, whose daemon messages must be
shown; an EXR shown through the daemon's PFM answers with an exposure slider; the download; an
API key asked for and used. Screenshots under BUILD/web/. Prints "SCRIPT: N passed, N failed"."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
import http_test as H  # noqa: E402  (its Daemon, check, multipart, PFM helpers)

BUILD = H.BUILD
OUT = os.path.join(BUILD, "web")
RNG = np.random.default_rng(int(time.time() * 1e6) % 2**32)
WEB_FILES = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
             "style.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"}
T_START = time.time()
check = H.check


# ---- images and references ----

def srgb8(linear):
    v = np.clip(np.nan_to_num(np.asarray(linear, dtype=np.float64)), 0, 1)
    s = np.where(v <= 0.0031308, 12.92 * v, 1.055 * np.power(v, 1 / 2.4) - 0.055)
    return np.round(s * 255).astype(np.int32)


def linear_of(c8):
    s = np.asarray(c8, dtype=np.float64) / 255
    return np.where(s <= 0.04045, s / 12.92, np.power((s + 0.055) / 1.055, 2.4))


def decode_png(data):
    import cv2
    a = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    return None if a is None else a[..., ::-1].astype(np.int32)  # BGR -> RGB


def write_png(path, rgb8):
    import cv2
    assert cv2.imwrite(path, np.ascontiguousarray(rgb8[..., ::-1]))
    return path


def api_bloom(d, image, params, kernel=None, key=None):
    """POST /v1/bloom as the page sends it (multipart: image, kernel, params JSON)."""
    parts = [("image", image, "application/octet-stream")]
    if kernel is not None:
        parts.append(("kernel", kernel, "application/octet-stream"))
    parts.append(("params", json.dumps(params).encode(), "application/json"))
    body, ctype = H.multipart(parts)
    headers = {"Content-Type": ctype}
    if key:
        headers["Authorization"] = "Bearer " + key
    return d.req("POST", "/v1/bloom", body, headers)


def bloom_requests(d, status=None):
    """Requests to /v1/bloom the daemon has answered (or seen closed: 499), from /metrics."""
    _, _, body = d.req("GET", "/metrics")
    total = 0
    for line in body.decode().splitlines():
        if line.startswith('fftbloom_http_requests_total{route="bloom",') and \
                (status is None or 'status="%d"' % status in line):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def compare(name, got, ref, tol=1):
    """Pixel arrays (int) equal within tol codes; prints the measured difference either way."""
    if got is None or ref is None or got.shape != ref.shape:
        return check(name, False, "shape %s vs %s" % (None if got is None else got.shape,
                                                     None if ref is None else ref.shape))
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    mx = int(diff.max())
    print("     %s: max |diff| %d codes, mean %.4f (tol %d)" % (name, mx, diff.mean(), tol))
    return check(name, mx <= tol, "max diff %d at %s" % (mx, np.unravel_index(diff.argmax(), diff.shape)))


def spot_rings(h, w, y0, x0, size):
    """Chebyshev distance of every pixel to the size x size spot at (y0, x0)."""
    yy, xx = np.mgrid[0:h, 0:w]
    dy = np.maximum(np.maximum(y0 - yy, yy - (y0 + size - 1)), 0)
    dx = np.maximum(np.maximum(x0 - xx, xx - (x0 + size - 1)), 0)
    return np.maximum(dy, dx)


# ---- the browser ----

def start_browser(width=1400, height=900):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=%d,%d" % (width, height),
              "--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=H.TMP)):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.set_script_timeout(60)
    return d


class Page:
    """The page in the browser, with what a person does to it."""

    def __init__(self, driver, daemon):
        self.d = driver
        self.daemon = daemon
        self.url = "http://127.0.0.1:%d/" % daemon.port
        self.console = []

    def by(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_element(By.CSS_SELECTOR, css)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def wait(self, cond, what, timeout=60):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.js("return !!(" + cond + ")"):
                return True
            time.sleep(0.05)
        print("     timed out after %.0f s waiting for %s; status: %r, error: %r" % (
            timeout, what, self.js("return document.getElementById('status').textContent"),
            self.js("return document.getElementById('error-message').textContent")))
        return False

    def renders(self):
        return int(self.js("return document.body.dataset.renders"))

    def wait_render(self, n, what):
        return self.wait("+document.body.dataset.renders >= %d && document.body.dataset.busy === '0'"
                         % n, what)

    def wait_error(self, what):
        return self.wait("!document.getElementById('error').hidden && "
                         "document.body.dataset.busy === '0'", what)

    def open(self, path):
        self.by("#file").send_keys(os.path.abspath(path))

    def type_value(self, container, key, value):
        """Types a value into a slider's number field, as a person would, and leaves it (Tab)."""
        from selenium.webdriver.common.keys import Keys
        e = self.by('%s input[type=number][data-key="%s"]' % (container, key))
        e.click()
        e.send_keys(Keys.CONTROL, "a")
        e.send_keys(str(value))
        e.send_keys(Keys.TAB)
        return float(e.get_attribute("value"))

    def value(self, container, key):
        return float(self.by('%s input[type=number][data-key="%s"]' % (container, key))
                     .get_attribute("value"))

    def select(self, css, value):
        from selenium.webdriver.support.ui import Select
        Select(self.by(css)).select_by_value(value)

    def canvas(self, cid):
        w, h, data = self.js(
            "const c = document.getElementById(arguments[0]);"
            "const x = c.getContext('2d', {willReadFrequently: true})"
            "  .getImageData(0, 0, c.width, c.height);"
            "return [c.width, c.height, Array.from(x.data)];", cid)
        return np.array(data, dtype=np.int32).reshape(h, w, 4)[..., :3]

    def error_text(self):
        return (self.by("#error-message").text, self.by("#error-code").text)

    def collect_console(self):
        self.console += self.d.get_log("browser")


# ---- the tests ----

def test_http():
    """The embedded files over plain HTTP, and the API key left to /v1/."""
    d = H.Daemon()
    try:
        for name, ctype in WEB_FILES.items():
            with open(os.path.join("web", name), "rb") as f:
                disk = f.read()
            path = "/" if name == "index.html" else "/web/" + name
            st, h, body = d.req("GET", path)
            check("GET %s: 200, %s, the file byte for byte" % (path, ctype),
                  st == 200 and h.get("content-type") == ctype and body == disk,
                  "%d %s %d bytes vs %d" % (st, h.get("content-type"), len(body), len(disk)))
            etag = h.get("etag", "")
            check("GET %s: ETag from the content's SHA-256, Cache-Control no-cache" % path,
                  etag == '"%s"' % hashlib.sha256(disk).hexdigest()[:16]
                  and h.get("cache-control") == "no-cache", "%s %s" % (etag, h.get("cache-control")))
            st2, h2, body2 = d.req("GET", path, headers={"If-None-Match": 'W/"x", ' + etag})
            check("GET %s with If-None-Match: 304, no body, same ETag" % path,
                  st2 == 304 and not body2 and h2.get("etag") == etag, "%d %r" % (st2, body2[:40]))
            st3, _, body3 = d.req("GET", path, headers={"If-None-Match": '"0000000000000000"'})
            check("GET %s with another ETag: 200 and the body" % path, st3 == 200 and body3 == disk)
            st4, h4, body4 = d.req("HEAD", path)
            check("HEAD %s: 200, Content-Length, no body" % path,
                  st4 == 200 and not body4 and h4.get("content-length") == str(len(disk)),
                  "%d %s" % (st4, h4.get("content-length")))
        st, h, _ = d.req("GET", "/")
        csp = h.get("content-security-policy", "")
        check("GET /: nosniff and a CSP keeping scripts and requests to the page's origin",
              h.get("x-content-type-options") == "nosniff" and "script-src 'self'" in csp
              and "connect-src 'self'" in csp, csp)
        st, h, body = d.req("GET", "/web/nothing.js")
        check("GET /web/nothing.js: 404 JSON", st == 404 and H.err_of(body)[1] == "not_found",
              "%d %r" % (st, body[:100]))
        st, h, body = d.req("POST", "/", b"x", {"Content-Type": "text/plain"})
        check("POST /: 405 with Allow", st == 405 and "GET" in h.get("allow", ""), "%d" % st)
        st, h, _ = d.req("GET", "/v1/bloom")
        check("/v1/bloom still answers its own way (400 to a GET without src=)", st == 400,
              "%d" % st)
    finally:
        d.stop("web HTTP daemon")

    key = "web-%x" % RNG.integers(1 << 60)
    kf = os.path.join(H.TMP, "web.key")
    with open(kf, "w") as f:
        f.write(key + "\n")
    d = H.Daemon("--api-key-file", kf)
    try:
        st, _, _ = d.req("GET", "/")
        st2, _, _ = d.req("GET", "/web/app.js")
        st3, _, _ = d.req("GET", "/v1/info")
        check("with --api-key-file: the page needs no key (200, 200), /v1/info does (401)",
              st == 200 and st2 == 200 and st3 == 401, "%d %d %d" % (st, st2, st3))
    finally:
        d.stop("web HTTP daemon with a key")


def test_generator():
    """tools/web2h.sh embeds any bytes exactly, names them /web/NAME and refuses odd names."""
    data = bytes(range(256)) + bytes(RNG.integers(0, 256, 3000, dtype=np.uint8)) + b'"\\\n\0'
    src = os.path.join(H.TMP, "blob.bin")
    empty = os.path.join(H.TMP, "empty.txt")
    with open(src, "wb") as f:
        f.write(data)
    open(empty, "wb").close()
    hdr = os.path.join(H.TMP, "gen.h")
    with open(hdr, "wb") as f:
        r = subprocess.run(["sh", "tools/web2h.sh", src, empty], stdout=f)
    prog = os.path.join(H.TMP, "gen.c")
    with open(prog, "w") as f:
        f.write('#include <stdio.h>\n#include <stddef.h>\n'
                'struct web_file { const char *path; const unsigned char *data; size_t len; '
                'const char *etag; };\n#include "gen.h"\n'
                'int main(void) { for (int i = 0; i < 2; i++) '
                'fprintf(stderr, "%s %zu %s\\n", web_files[i].path, web_files[i].len, '
                'web_files[i].etag); fwrite(web_files[0].data, 1, web_files[0].len, stdout); '
                'return 0; }\n')
    exe = os.path.join(H.TMP, "gen")
    c = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-o", exe, prog], capture_output=True,
                       text=True)
    if not check("web2h.sh output compiles (-Wall -Werror)", r.returncode == 0 and c.returncode == 0,
                 c.stderr[-1000:]):
        return
    out = subprocess.run([exe], capture_output=True)
    want = "/web/blob.bin %d \"%s\"\n/web/empty.txt 0 \"%s\"\n" % (
        len(data), hashlib.sha256(data).hexdigest()[:16], hashlib.sha256(b"").hexdigest()[:16])
    check("web2h.sh: %d bytes of every value back exactly, names, lengths and ETags" % len(data),
          out.stdout == data and out.stderr.decode() == want, out.stderr.decode())
    odd = os.path.join(H.TMP, "a b.js")
    open(odd, "w").close()
    r = subprocess.run(["sh", "tools/web2h.sh", odd], capture_output=True, text=True)
    check("web2h.sh refuses a file name outside [A-Za-z0-9._-]", r.returncode != 0, r.stderr)


def test_page(driver):
    """A person's session on a daemon without a key."""
    d = H.Daemon()
    p = Page(driver, d)
    try:
        run_page(p)
    finally:
        p.collect_console()
        d.stop("web page daemon")
    return p.console


def run_page(p):
    d = p.daemon
    p.d.get(p.url)
    check("the page loads: title and the empty stage's invitation",
          p.d.title == "fftbloom" and p.by("#drop").is_displayed()
          and "Drop an image" in p.by("#drop").text, p.d.title)
    check("the page asks the daemon who it is (GET v1/info)",
          p.wait("document.getElementById('server').textContent.startsWith('fftbloomd ')",
                 "v1/info"), p.by("#server").text)
    # the pickers and the drop text come from the daemon's format table, WebP and AVIF included
    info = json.loads(d.req("GET", "/v1/info")[2])
    read = [f for f in info["formats"] if f["read"]]
    want = set(t for f in read for t in f["media_types"]) | set(
        "." + e for f in read for e in f["extensions"])
    accepts = p.js("return [document.getElementById('file').accept, "
                   "document.getElementById('kfile').accept, "
                   "document.getElementById('drop-formats').textContent];")
    check("the file pickers accept every format v1/info reads, WebP and AVIF too",
          set(accepts[0].split(",")) == want and accepts[1] == accepts[0]
          and {"image/webp", "image/avif", ".webp", ".avif"} <= want, accepts)
    check("the drop text names every format read", all(f["title"] in accepts[2] for f in read)
          and "WebP" in accepts[2] and "AVIF" in accepts[2], accepts[2])
    unnamed = p.js("""return [...document.querySelectorAll('input, select, button, [role=slider]')]
        .filter((e) => e.type !== 'file')
        .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                       && !e.textContent.trim())
        .map((e) => e.outerHTML.slice(0, 100));""")
    check("every control has a label or an accessible name", not unnamed, repr(unnamed))

    # a dark noisy image (never zeros) with one bright 4 x 4 spot
    h, w, sy, sx = 64, 96, 20, 30
    img = (RNG.random((h, w, 3)) * 40 + 10).astype(np.uint8)
    img[sy:sy + 4, sx:sx + 4] = 255
    png_path = write_png(os.path.join(H.TMP, "spot.png"), img)
    with open(png_path, "rb") as f:
        png = f.read()

    # settings first, then the image: a person may do either
    p.select("#kernel", "gaussian")
    p.type_value('#kernel-params [data-kernel="gaussian"]', "sigma", 3)
    settings = {"threshold": 0.5, "knee": 0.1, "intensity": 4, "kernel_scale": 0}
    for k, v in settings.items():
        p.type_value("#bloom-params", k, v)
    p.open(png_path)
    ok = p.wait_render(1, "the first result")
    check("a result comes back after picking a PNG", ok)
    params = dict(kernel_preset="gaussian:sigma=3", format="png", **settings)
    before, after = p.canvas("before"), p.canvas("after")
    compare("before: the page shows the PNG's own pixels", before, img.astype(np.int32), tol=0)
    st, hd, body = api_bloom(d, png, params)
    ref = decode_png(body) if st == 200 else None
    compare("after: the page shows what POST /v1/bloom answers for the same settings", after, ref)
    dist = spot_rings(h, w, sy, sx, 4)
    ring, far = (dist >= 2) & (dist <= 6), dist >= 12
    gain = after.astype(np.int64) - before
    print("     glare: ring (2-6 px from the spot) +%.1f codes on average, min %+d; far (>= 12 px) "
          "max |change| %d" % (gain[ring].mean(), gain[ring].min(), np.abs(gain[far]).max()))
    check("the glare spreads around the spot (ring +10 codes or more on average, none darker)",
          gain[ring].mean() > 10 and gain[ring].min() >= -1)
    check("the far background is unchanged (within 1 code)", np.abs(gain[far]).max() <= 1)
    timing = p.js("return [...document.querySelectorAll('#timing div')].map((e) => e.className)")
    check("Server-Timing figures are shown (decode, queue, gpu, encode, total, round trip)",
          timing == ["timing-decode", "timing-queue", "timing-gpu", "timing-encode",
                     "timing-total", "timing-round-trip"], repr(timing))
    check("the view's exposure slider is hidden for a PNG", not p.by("#view-group").is_displayed())

    # intensity doubled, typed: the bloom (in linear light) doubles
    n = p.renders()
    p.type_value("#bloom-params", "intensity", 8)
    ok = p.wait_render(n + 1, "the result at intensity 8")
    after8 = p.canvas("after")
    st, _, body = api_bloom(d, png, dict(params, intensity=8))
    compare("intensity 8: the page shows the API's answer", after8, decode_png(body))
    d1 = linear_of(after) - linear_of(before)
    d2 = linear_of(after8) - linear_of(before)
    use = ring[..., None] & (after8 < 250) & (d1 > 0.005)
    ratio = d2[use].sum() / max(d1[use].sum(), 1e-12)
    print("     bloom in linear light, intensity 8 vs 4, over %d unclipped ring samples: x%.3f"
          % (use.sum(), ratio))
    check("doubling the intensity doubles the bloom (x2 within 5%)",
          ok and use.sum() > 20 and abs(ratio - 2) < 0.1)

    # the intensity slider by keyboard: five presses, one final result for the final value
    from selenium.webdriver.common.keys import Keys
    n, r0 = p.renders(), bloom_requests(d)
    rng = p.by('#bloom-params input[type=range][data-key="intensity"]')
    rng.send_keys(*([Keys.ARROW_RIGHT] * 5))
    v = p.value("#bloom-params", "intensity")
    ok = p.wait_render(n + 1, "the result after the arrow keys")
    time.sleep(0.5)  # any render still to come would start within the 200 ms debounce
    ok = ok and p.wait_render(n + 1, "the last result")
    sent = bloom_requests(d) - r0
    print("     intensity after 5 ArrowRight presses: %g (%d render(s), %d request(s))"
          % (v, p.renders() - n, sent))
    check("five quick key presses send one or two requests, not five (debounced)", 1 <= sent <= 2,
          "%d requests" % sent)
    st, _, body = api_bloom(d, png, dict(params, intensity=v))
    check("arrow keys move the intensity slider up", ok and v > 8, "%g" % v)
    compare("after the arrow keys: the page shows the API's answer for the final value",
            p.canvas("after"), decode_png(body))
    p.type_value("#bloom-params", "intensity", 4)
    p.wait_render(p.renders() + 1, "intensity back to 4")

    # the before/after divider: keyboard and pointer
    from selenium.webdriver.common.action_chains import ActionChains
    div = p.by("#divider")
    div.send_keys(Keys.HOME)
    home = (div.get_attribute("aria-valuenow"), p.js(
        "return document.getElementById('stage').style.getPropertyValue('--split')"))
    div.send_keys(Keys.END)
    end = div.get_attribute("aria-valuenow")
    stage = p.by("#stage")
    sw = stage.size["width"]
    ActionChains(p.d).move_to_element_with_offset(stage, int(-sw / 4), 0).click_and_hold() \
        .move_by_offset(1, 0).release().perform()
    dragged = float(div.get_attribute("aria-valuenow"))
    check("divider: Home shows all after, End all before, a drag puts it under the pointer",
          home == ("0", "0%") and end == "100" and abs(dragged - 25) <= 2,
          "%r %r %g" % (home, end, dragged))
    ActionChains(p.d).move_to_element(stage).click().perform()
    check("divider: a click puts it back in the middle",
          abs(float(div.get_attribute("aria-valuenow")) - 50) <= 2)

    # an uploaded kernel: first not an image (the daemon's message is shown), then a cross
    junk = os.path.join(H.TMP, "kernel.txt")
    with open(junk, "w") as f:
        f.write("this is not a kernel image\n")
    p.select("#kernel", "file")
    check("'My own kernel image' shows the kernel picker", p.by("#kernel-file").is_displayed())
    p.by("#kfile").send_keys(junk)
    ok = p.wait_error("the kernel's error")
    kparams = dict(settings, format="png")
    st, _, body = api_bloom(d, png, kparams, kernel=open(junk, "rb").read())
    est, ecode, emsg = H.err_of(body)
    shown = p.error_text()
    check("a non-image kernel: the daemon's message is shown to the person (%d %s)" % (st, ecode),
          ok and st == 415 and shown == (emsg, "%d %s" % (est, ecode))
          and p.by("#error-message").is_displayed(), "%r vs %r" % (shown, (emsg, est, ecode)))
    check("the old result is marked out of date", "stale" in p.by("#stage").get_attribute("class"))
    cross = np.zeros((9, 9, 3), np.uint8) + 3
    cross[4, :] = 255
    cross[:, 4] = 255
    cross_path = write_png(os.path.join(H.TMP, "cross.png"), cross)
    n = p.renders()
    p.by("#kfile").send_keys(cross_path)
    ok = p.wait_render(n + 1, "the result with the cross kernel")
    st, _, body = api_bloom(d, png, kparams, kernel=open(cross_path, "rb").read())
    check("a kernel image: the error is gone", ok and not p.by("#error").is_displayed())
    compare("a kernel image: the page shows the API's answer with that kernel (multipart kernel)",
            p.canvas("after"), decode_png(body))
    p.select("#kernel", "gaussian")

    # a file that is no image at all
    txt = os.path.join(H.TMP, "notes.txt")
    with open(txt, "w") as f:
        f.write("hello, this is not an image\n")
    p.open(txt)
    ok = p.wait_error("the daemon's error for a text file")
    st, _, body = d.req("POST", "/v1/bloom", open(txt, "rb").read())
    est, ecode, emsg = H.err_of(body)
    shown = p.error_text()
    check("a text file: the daemon's 415 message is shown to the person",
          ok and st == 415 and shown == (emsg, "%d %s" % (est, ecode))
          and p.by("#error-message").is_displayed(), "%r vs %r" % (shown, (emsg, est, ecode)))
    check("a text file: the page says it cannot show it", p.by("#nopreview").is_displayed())
    p.d.save_screenshot(os.path.join(OUT, "error.png"))

    # an EXR: shown through the daemon's PFM answers, with an exposure slider
    f = (RNG.random((h, w, 3)) * 0.3 + 0.02).astype(np.float32)  # below threshold - knee
    ey, ex = 40, 60
    f[ey:ey + 3, ex:ex + 3] = 6.0
    pfm = H.write_pfm(os.path.join(H.TMP, "hdr.pfm"), f)
    exr = os.path.join(H.TMP, "hdr.exr")
    if not check("an EXR made with fftbloom convert", H.cli("convert", pfm, "-o", exr)):
        return
    n = p.renders()
    p.open(exr)
    ok = p.wait_render(n + 1, "the EXR's result")
    check("an EXR: a result, the error gone, the exposure slider shown",
          ok and not p.by("#error").is_displayed() and p.by("#view-group").is_displayed())
    f16 = f.astype(np.float16).astype(np.float64)  # the EXR may hold half floats
    compare("EXR before: the input's own floats, as sRGB", p.canvas("before"), srgb8(f16))
    fparams = dict(params, format="pfm")
    st, _, body = api_bloom(d, open(exr, "rb").read(), fparams)
    fref = H.read_pfm(body) if st == 200 else None
    compare("EXR after: the API's PFM answer for the same settings, as sRGB", p.canvas("after"),
            None if fref is None else srgb8(fref))
    dist = spot_rings(h, w, ey, ex, 3)
    far = dist >= 12
    if fref is not None:
        rise = fref - f16
        print("     EXR bloom: ring (2-6 px) +%.3f linear on average; far max |change| %.2g"
              % (rise[(dist >= 2) & (dist <= 6)].mean(), np.abs(rise[far]).max()))
        check("EXR: the glare spreads around the spot, the far background keeps its floats",
              rise[(dist >= 2) & (dist <= 6)].mean() > 0.05 and np.abs(rise[far]).max() < 1e-4)
    n = p.renders()
    p.type_value("#view-params", "exposure", -2)
    time.sleep(0.6)
    compare("exposure -2 EV: before is the input x 1/4", p.canvas("before"), srgb8(f16 / 4))
    compare("exposure -2 EV: after is the answer x 1/4", p.canvas("after"),
            None if fref is None else srgb8(fref / 4))
    check("exposure is display only: no new request", p.renders() == n, "%d vs %d" % (p.renders(), n))

    # the download: the page asks for the format chosen (EXR for an EXR) with the same settings
    dl = tempfile.mkdtemp(prefix="downloads-", dir=H.TMP)
    p.d.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": dl})
    fmt = p.by("#dlformat").get_attribute("value")
    p.by("#download").click()
    t0 = time.time()
    got = []
    while time.time() - t0 < 30:
        got = [x for x in os.listdir(dl) if not x.endswith(".crdownload")]
        if got:
            break
        time.sleep(0.1)
    st, _, body = api_bloom(d, open(exr, "rb").read(), dict(params, format="exr"))
    same = False
    if got:
        a = os.path.join(H.TMP, "dl.pfm")
        b = os.path.join(H.TMP, "api.exr")
        with open(b, "wb") as fo:
            fo.write(body)
        if H.cli("convert", os.path.join(dl, got[0]), "-o", a) and \
                H.cli("convert", b, "-o", a + "2.pfm"):
            same = np.array_equal(H.read_pfm(open(a, "rb").read()),
                                  H.read_pfm(open(a + "2.pfm", "rb").read()))
    check("download: format EXR offered for an EXR, saved as hdr-bloom.exr, the API's pixels",
          fmt == "exr" and got == ["hdr-bloom.exr"] and same, "%s %r %s" % (fmt, got, same))
    # WebP chosen instead: asked for with the same settings, saved as .webp
    p.select("#dlformat", "webp")
    p.by("#download").click()
    t0 = time.time()
    got = []
    while time.time() - t0 < 30:
        got = [x for x in os.listdir(dl) if x.endswith(".webp")]
        if got:
            break
        time.sleep(0.1)
    st, _, body = api_bloom(d, open(exr, "rb").read(), dict(params, format="webp"))
    check("download: WebP chosen, saved as hdr-bloom.webp, the API's WebP answer",
          got == ["hdr-bloom.webp"] and st == 200 and
          open(os.path.join(dl, got[0]), "rb").read() == body, "%r %s" % (got, st))
    p.type_value("#view-params", "exposure", 0)

    # the sample at the page's own defaults, for the README; then a narrow screen
    n = p.renders()
    p.by("#reset").click()
    p.select("#kernel", "aperture")
    p.wait_render(n + 1, "the EXR at the defaults")
    n = p.renders()
    p.by('.panel [data-action="sample"]').click()
    ok = p.wait_render(n + 1, "the sample's result")
    check("the sample renders with the default settings", ok)
    p.js("window.scrollTo(0, 0); document.activeElement.blur()")
    time.sleep(0.3)
    p.d.save_screenshot(os.path.join(OUT, "page.png"))

    # a slow render overtaken by newer settings: cancelled (AbortController) and never shown
    shown = p.canvas("after")
    n, r0 = p.renders(), bloom_requests(d)
    c0 = int(p.js("return document.body.dataset.cancelled"))
    p.type_value("#bloom-params", "kernel_scale", 1)  # a new padded size: seconds on llvmpipe
    in_flight = p.wait("document.body.dataset.busy === '1'", "the slow render to start")
    p.type_value("#bloom-params", "kernel_scale", 0.5)
    ok = p.wait_render(n + 1, "the render that overtook the slow one")
    time.sleep(0.5)
    cancelled = int(p.js("return document.body.dataset.cancelled")) - c0
    sent = bloom_requests(d) - r0
    print("     overtaken render: %d request(s), %d cancelled by the page, %d result(s) shown"
          % (sent, cancelled, p.renders() - n))
    check("a render overtaken by new settings is cancelled and never shown",
          in_flight and ok and sent == 2 and cancelled == 1 and p.renders() == n + 1)
    compare("the result shown is the one for the latest settings", p.canvas("after"), shown, tol=0)
    p.d.set_window_size(390, 844)
    time.sleep(0.3)
    over = p.js("return [document.documentElement.scrollWidth, window.innerWidth]")
    check("a narrow screen (390 px): nothing wider than the window", over[0] <= over[1], repr(over))
    p.d.save_screenshot(os.path.join(OUT, "page-narrow.png"))
    p.d.set_window_size(1400, 900)


def test_key(driver):
    """With --api-key-file: the page says so, shows the 401, and works once the key is given."""
    key = "web-%x" % RNG.integers(1 << 60)
    kf = os.path.join(H.TMP, "page.key")
    with open(kf, "w") as f:
        f.write(key + "\n")
    d = H.Daemon("--api-key-file", kf)
    p = Page(driver, d)
    try:
        p.d.get(p.url)
        ok = p.wait("document.getElementById('server').textContent.includes('API key')", "401")
        check("with a key on the daemon: the page says it needs one and opens the key field",
              ok and p.by("#keybox").get_attribute("open") is not None, p.by("#server").text)
        h, w = 48, 64
        img = (RNG.random((h, w, 3)) * 60 + 5).astype(np.uint8)
        img[10:13, 20:23] = 255
        path = write_png(os.path.join(H.TMP, "keyed.png"), img)
        png = open(path, "rb").read()
        p.open(path)
        ok = p.wait_error("the 401")
        st, _, body = d.req("POST", "/v1/bloom", png)
        est, ecode, emsg = H.err_of(body)
        check("without the key: the daemon's 401 message is shown",
              ok and st == 401 and p.error_text() == (emsg, "401 unauthorized"),
              "%r vs %r" % (p.error_text(), emsg))
        from selenium.webdriver.common.keys import Keys
        n = p.renders()
        p.by("#apikey").send_keys(key, Keys.ENTER)
        ok = p.wait_render(n + 1, "the result with the key")
        params = {"kernel_preset": "aperture:blades=6,rotation=15,radius=0.2,size=255",
                  "threshold": 0.8, "knee": 0.2, "intensity": 20, "kernel_scale": 0.5,
                  "format": "png"}
        st, _, body = api_bloom(d, png, params, key=key)
        check("with the key typed in: a result and no error", ok and st == 200
              and not p.by("#error").is_displayed())
        compare("with the key: the page's defaults give the API's answer for them",
                p.canvas("after"), decode_png(body) if st == 200 else None)
        stored = p.js("return localStorage.getItem('fftbloom.apiKey')")
        p.d.refresh()
        ok = p.wait("document.getElementById('server').textContent.startsWith('fftbloomd ')",
                    "v1/info with the stored key")
        check("the key is kept in localStorage and used after a reload",
              stored == key and ok and p.by("#apikey").get_attribute("value") == key)
    finally:
        p.collect_console()
        d.stop("web page daemon with a key")
    return p.console


def main():
    os.makedirs(OUT, exist_ok=True)
    steps = [("test_http", test_http), ("test_generator", test_generator)]
    if not os.path.exists(H.DAEMON):
        check("daemon binary exists", False, H.DAEMON)
        steps = []
    for name, fn in steps:
        t0 = time.time()
        try:
            fn()
        except Exception as e:  # noqa
            traceback.print_exc()
            check(name + " ran to the end", False, repr(e))
        print("     (%s: %.1f s)" % (name, time.time() - t0))
    if steps:
        driver = None
        try:
            t0 = time.time()
            driver = start_browser()
            print("     (chromium %s started in %.1f s)" % (
                driver.capabilities.get("browserVersion"), time.time() - t0))
            console = []
            for name, fn in (("test_page", test_page), ("test_key", test_key)):
                t0 = time.time()
                try:
                    console += fn(driver) or []
                except Exception as e:  # noqa
                    traceback.print_exc()
                    check(name + " ran to the end", False, repr(e))
                print("     (%s: %.1f s)" % (name, time.time() - t0))
            # the expected 4xx answers log as failed loads; anything else is the page's fault
            bad = [c["message"] for c in console if c.get("level") == "SEVERE"
                   and "the server responded with a status of 4" not in c["message"]]
            for c in console:
                print("     console %s: %s" % (c.get("level"), c.get("message", "")[:200]))
            check("no script error or CSP violation in the browser's console", not bad, repr(bad))
        except Exception as e:  # noqa
            traceback.print_exc()
            check("the browser ran", False, repr(e))
        finally:
            if driver:
                driver.quit()
    shutil.rmtree(H.TMP, ignore_errors=True)
    print("test_web: %.1f s" % (time.time() - T_START))
    print("SCRIPT: %d passed, %d failed" % (H.PASSED, H.FAILED))
    sys.exit(1 if H.FAILED else 0)


if __name__ == "__main__":
    main()
