"""Sized outputs over real HTTP (run by test_sized.sh): width, height, fit, dpr and resize on POST
/v1/bloom, /v1/convolve and the GET renders of stored images. Checks each fit mode's answer size
for several boxes against the rules written here from sharp's documentation (cover, contain,
fill, inside never enlarging, outside never below the box), width or height alone, dpr; a
result resized after the operation against a float64 numpy Lanczos-3 resize of the full-size
result (rel L2 and max abs), contain's bars exactly 0 there; the bloom's rule (resize=before: a
bloom at half size looks as the full-size bloom halved, within a stated tolerance, and much
closer than a bloom of the halved input with an unscaled kernel); the limits (400 for bad
values, 413 output_too_large past --max-side or --max-pixels, checked before decoding);
ETags differing by size and equal for equal sizes, 304 on If-None-Match; a JPEG input sized.
Prints "SCRIPT: N passed, N failed" last."""
import json
import math

import numpy as np

import http_test as H

FITS = ("cover", "contain", "fill", "inside", "outside")


def side(v):
    return max(1, int(math.floor(v + 0.5)))


def expect(w, h, bw, bh, dpr, fit):
    """(canvas w, h, content w, h) for an input w x h, as sharp sizes it (one side: aspect kept,
    inside not enlarging)."""
    bw = side(bw * dpr) if bw else 0
    bh = side(bh * dpr) if bh else 0
    if not bw or not bh:
        s = bw / w if bw else bh / h
        if fit == "inside":
            s = min(s, 1)
        return side(w * s), side(h * s), side(w * s), side(h * s)
    sx, sy = bw / w, bh / h
    if fit == "fill" or fit == "cover":
        return bw, bh, bw, bh
    if fit == "contain":
        s = min(sx, sy)
        return bw, bh, min(bw, side(w * s)), min(bh, side(h * s))
    s = min(sx, sy, 1) if fit == "inside" else max(sx, sy)
    return side(w * s), side(h * s), side(w * s), side(h * s)


def lanczos3(x):
    x = np.abs(x)
    out = np.where(x < 1e-12, 1.0, 3 * np.sin(np.pi * x) * np.sin(np.pi * x / 3) /
                   np.maximum(np.pi * np.pi * x * x, 1e-300))
    return np.where(x >= 3, 0.0, out)


def weights(n, src0, length, dst):
    f = length / dst
    st = max(f, 1.0)
    c = src0 + (np.arange(dst) + 0.5) * f
    w = lanczos3((np.arange(n)[None, :] + 0.5 - c[:, None]) / st)
    return w / w.sum(axis=1, keepdims=True)


def resize_ref(img, ow, oh, x0=0.0, y0=0.0, sw=None, sh=None):
    """img (h, w, 3) float64 resized so that the window (x0, y0, sw, sh) fills ow x oh."""
    h, w = img.shape[:2]
    wx = weights(w, x0, sw or w, ow)
    wy = weights(h, y0, sh or h, oh)
    return np.einsum("yj,jic,xi->yxc", wy, img, wx)


def blobs(h, w):
    """Smooth HDR content: a dim gradient and bright gaussian spots a few pixels wide."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    a = np.zeros((h, w, 3))
    a += 0.2 * (x / w)[..., None] * np.array([1.0, 0.8, 0.6])
    for _ in range(6):
        cx, cy, s = H.RNG.uniform(10, w - 10), H.RNG.uniform(10, h - 10), H.RNG.uniform(3, 5)
        a += H.RNG.uniform(4, 12) * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) /
                                          (2 * s * s))[..., None] * H.RNG.uniform(0.5, 1, 3)
    return a.astype(np.float32)


def pfm(a):
    import os
    p = H.write_pfm(os.path.join(H.TMP, "in.pfm"), a)
    with open(p, "rb") as f:
        return f.read()


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


SHARED = []


def shared():
    """One daemon for the tests without flags of their own: its programs compile once."""
    if not SHARED:
        SHARED.append(H.Daemon())
    return SHARED[0]


def test_stop_shared():
    if SHARED:
        SHARED.pop().stop("shared daemon")


def test_sizes():
    d = shared()
    if d:
        body = pfm(H.rand_float(80, 120))
        st, _, _ = d.req("PUT", "/v1/images/src", body=body)
        H.check("PUT the source image", st in (200, 201), st)
        cases = [(40, 40, 1, f) for f in FITS] + [(50, 20, 1, f) for f in FITS] + \
                [(200, 100, 1, f) for f in FITS] + \
                [(33, 0, 1, "cover"), (0, 25, 1, "fill"), (0, 100, 1, "inside"),
                 (30, 30, 2, "cover"), (25, 0, 1.5, "contain"), (7, 9, 3, "outside")]
        for bw, bh, dpr, fit in cases:
            # after: one plan at the input's size (before is the rule test's and the JPEG's)
            q = "format=pfm&kernel_preset=gaussian:sigma=1&fit=%s&dpr=%g" % (fit, dpr)
            q += "&resize=after" if (bw, bh) != (30, 30) else ""
            q += "&width=%d" % bw if bw else ""
            q += "&height=%d" % bh if bh else ""
            want = expect(120, 80, bw, bh, dpr, fit)
            path = "/v1/convolve/src?" if (bw + bh) % 2 else "/v1/bloom/src?"
            st, _, out = d.req("GET", path + q)
            got = read_size(out) if st == 200 else None
            H.check("120x80 %s box %sx%s dpr %g: %dx%d" % (fit, bw or "-", bh or "-", dpr,
                                                           want[0], want[1]),
                    st == 200 and got == want[:2], (st, got, out[:200] if st != 200 else ""))
        # POST, and a JPEG input (decoded as floats when sized) answered as JPEG
        with open("docs/examples/frame.jpg", "rb") as f:
            jpg = f.read()
        st, h, out = d.req("POST", "/v1/bloom?width=160", body=jpg)
        import cv2
        im = cv2.imdecode(np.frombuffer(out, np.uint8), cv2.IMREAD_COLOR) if st == 200 else None
        H.check("POST a 640x360 JPEG with width=160: a 160x90 JPEG",
                im is not None and im.shape[:2] == (90, 160) and
                h.get("content-type") == "image/jpeg", (st, None if im is None else im.shape))


def read_size(data):
    head = data.split(b"\n", 3)
    w, h = map(int, head[1].split())
    return (w, h)


def test_after_matches_reference():
    d = shared()
    if d:
        a = blobs(75, 101)
        body = pfm(a)
        q0 = "format=pfm&kernel_preset=gaussian:sigma=2&normalize=luminance"
        st, _, full = d.req("POST", "/v1/convolve?" + q0, body=body)
        H.check("full-size convolution", st == 200, st)
        full = H.read_pfm(full)
        for bw, bh, fit in ((40, 0, "cover"), (37, 21, "cover"), (50, 50, "contain"),
                            (150, 60, "fill"), (1, 1, "fill")):
            q = q0 + "&resize=after&fit=%s" % fit + ("&width=%d" % bw if bw else "") + \
                ("&height=%d" % bh if bh else "")
            st, _, out = d.req("POST", "/v1/convolve?" + q, body=body)
            ow, oh, cw, ch = expect(101, 75, bw, bh, 1, fit)
            if fit == "cover" and bw and bh:
                s = max(bw / 101, bh / 75)
                sw, sh = min(bw / s, 101), min(bh / s, 75)
                ref = resize_ref(full, cw, ch, (101 - sw) / 2, (75 - sh) / 2, sw, sh)
            else:
                ref = resize_ref(full, cw, ch)
            canvas = np.zeros((oh, ow, 3))
            x0, y0 = (ow - cw) // 2, (oh - ch) // 2
            canvas[y0:y0 + ch, x0:x0 + cw] = ref
            got = H.read_pfm(out) if st == 200 else None
            ok = got is not None and got.shape == canvas.shape
            rel = rel_l2(got, canvas) if ok else float("nan")
            mx = float(np.abs(got - canvas).max()) if ok else float("nan")
            print("     after %s %sx%s: rel_l2 %.3g (tol 1e-5) max_abs %.3g (tol 1e-4)" %
                  (fit, bw, bh, rel, mx))
            H.check("resize=after %s %sx%s: the full result resized (Lanczos-3, float64 "
                    "reference)" % (fit, bw, bh), ok and rel < 1e-5 and mx < 1e-4,
                    (st, None if got is None else got.shape, rel, mx))
            if ok and fit == "contain":
                bars = np.ones(canvas.shape[:2], bool)
                bars[y0:y0 + ch, x0:x0 + cw] = False
                H.check("contain's bars are exactly 0", bars.any() and
                        not np.any(got[bars]), int(bars.sum()))


RULE_TOL = 0.05  # rel L2 of the bloom light, half-size bloom vs the full-size bloom halved: the
# kernel takes an odd size near K * s, a scale off by up to 1/K (3% for a 37-pixel gaussian)


def test_bloom_rule():
    """The bloom at the output size with its kernel scaled (resize=before) against the full-size
    bloom halved (resize=after): close, and much closer than the naive half-size bloom (the
    halved input with the kernel at its own pixel size)."""
    d = shared()
    if d:
        a = blobs(96, 128)
        body = pfm(a)
        for preset in ("gaussian:sigma=6", "glare:size=63"):
            q0 = "format=pfm&kernel_preset=%s&threshold=1&knee=0.5&intensity=2" % preset
            st1, _, before = d.req("POST", "/v1/bloom?width=64&" + q0, body=body)
            st2, _, after = d.req("POST", "/v1/bloom?width=64&resize=after&" + q0, body=body)
            small = resize_ref(a.astype(np.float64), 64, 48).astype(np.float32)
            st3, _, naive = d.req("POST", "/v1/bloom?" + q0, body=pfm(small))
            ok = st1 == st2 == st3 == 200
            if not ok:
                H.check("%s: three blooms" % preset, False, (st1, st2, st3, before[:200]))
                continue
            before, after, naive = H.read_pfm(before), H.read_pfm(after), H.read_pfm(naive)
            # the bloom's own light: what the composite added to the (resized) input
            base = resize_ref(a.astype(np.float64), 64, 48)
            e_rule = rel_l2(before - base, after - base)
            e_naive = rel_l2(naive - base, after - base)
            print("     %s: half-size bloom vs full bloom halved: rel_l2 of the bloom light "
                  "%.4f (tol %g); unscaled kernel %.4f" % (preset, e_rule, RULE_TOL, e_naive))
            H.check("%s: the bloom at half size looks as the full-size bloom halved" % preset,
                    before.shape == after.shape == (48, 64, 3) and e_rule < RULE_TOL,
                    (before.shape, e_rule))
            H.check("%s: an unscaled kernel is far off (the rule matters)" % preset,
                    e_naive > 5 * e_rule, (e_naive, e_rule))


def test_limits():
    d = H.Daemon("--max-side", "256", "--max-pixels", "30000")
    try:
        body = pfm(H.rand_float(100, 100))
        q0 = "/v1/bloom?format=pfm&kernel_preset=gaussian:sigma=1&"
        for q, status, code in (("width=0", 400, "bad_parameter"),
                                ("width=16385", 400, "bad_parameter"),
                                ("height=-3", 400, "bad_parameter"),
                                ("width=10&dpr=0.5", 400, "bad_parameter"),
                                ("width=10&dpr=4.5", 400, "bad_parameter"),
                                ("width=10&fit=squash", 400, "bad_parameter"),
                                ("fit=cover", 400, "bad_parameter"),
                                ("dpr=2", 400, "bad_parameter"),
                                ("width=10&width=20", 400, "bad_parameter"),
                                ("width=50&method=spatial", 400, "bad_parameter"),
                                ("width=300", 413, "output_too_large"),
                                ("width=150&dpr=2", 413, "output_too_large"),
                                ("width=180", 413, "output_too_large"),  # 32400 pixels
                                ("width=250&height=1&fit=outside", 413, "output_too_large"),
                                ("width=170", 200, None), ("width=85&dpr=2", 200, None),
                                ("width=50&method=spatial&resize=after", 200, None)):
            path = q0.replace("bloom", "convolve") if "method" in q else q0
            st, _, out = d.req("POST", path + q, body=body)
            s, c, m = H.err_of(out) if st != 200 else (200, None, "")
            H.check("%s: %d %s" % (q, status, code or ""), st == status and c == code,
                    (st, c, m))
        st, _, out = d.req("GET", "/v1/info")
        info = json.loads(out) if st == 200 else {}
        names = json.dumps(info)
        H.check("/v1/info lists width, height, fit, dpr and resize",
                all('"%s"' % n in names for n in ("width", "height", "fit", "dpr", "resize")),
                names[:300])
        st, _, out = d.req("GET", "/openapi.json")
        H.check("OpenAPI lists fit's choices",
                st == 200 and all(f in out.decode() for f in FITS), st)
    finally:
        d.stop("limits daemon")


def test_etag():
    d = shared()
    if d:
        st, _, _ = d.req("PUT", "/v1/images/e", body=pfm(H.rand_float(40, 60)))
        base = "/v1/bloom/e?format=pfm&kernel_preset=gaussian:sigma=1"
        tags = {}
        a = "&resize=after"  # one plan at the input's size: no FFT compiled per size
        for q in ("", "&width=30", "&width=30" + a, "&width=31" + a, "&height=30" + a,
                  "&width=30&dpr=2" + a, "&width=30&height=30&fit=contain" + a,
                  "&width=30&height=30&fit=fill" + a):
            st, h, _ = d.req("GET", base + q)
            tags[q] = h.get("etag")
            H.check("GET%s: 200 with an ETag" % q, st == 200 and tags[q], st)
        H.check("each size, fit, dpr and order has its own ETag",
                len(set(tags.values())) == len(tags), tags)
        st, h, _ = d.req("GET", base + "&resize=after&width=30")
        H.check("the same size again: the same ETag", h.get("etag") == tags["&width=30" + a],
                h.get("etag"))
        st, _, _ = d.req("GET", base + "&width=30" + a,
                         headers={"If-None-Match": tags["&width=30" + a]})
        H.check("If-None-Match with the sized tag: 304", st == 304, st)
        st, _, _ = d.req("GET", base + "&width=31" + a,
                         headers={"If-None-Match": tags["&width=30" + a]})
        H.check("If-None-Match with another size's tag: 200", st == 200, st)


def main():
    H.run_script((test_sizes, test_after_matches_reference, test_bloom_rule, test_etag,
                  test_stop_shared, test_limits), only_env="SIZED_ONLY", need_daemon=True)


if __name__ == "__main__":
    main()
