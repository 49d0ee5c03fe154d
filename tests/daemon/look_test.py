"""fftbloomd and fftbloom look right and stay quiet by default (run by test_look.sh), over real
HTTP and the CLI: a bloom with no parameters takes threshold 0.8, knee 0.2, intensity 20 for an
8-bit input and 1, 0.5, 1 for a float or 16-bit one (the same answer as those values given), in
the daemon and the CLI, and /v1/info says so; X-Image-Lost and the CLI's clipping warning only
for a loss nobody chose (not a bloom's highlights clipped by an 8-bit answer, not the precision
of an 8-bit input in an 8-bit answer, not a convolution's rounding just past 1.0), --quiet
silences warnings, and the CLI summary's GPU total is the sum of the stages it lists; NaN and
infinity in any input (an image, a kernel, a tensor) are refused by every operation with 422
input_not_finite and their count, and by the CLI with exit 1 and the count. Prints "SCRIPT: N passed, N failed" last."""
import json
import os
import re
import subprocess

import numpy as np

import http_test as H

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples")
LOOK_8BIT = "threshold=0.8&knee=0.2&intensity=20"
LOOK_HDR = "threshold=1&knee=0.5&intensity=1"


def run_cli(*args):
    e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.run([H.CLI] + list(args), capture_output=True, text=True, timeout=300,
                          env=e)


def test_defaults_by_input():
    d = H.Daemon()
    try:
        with open(os.path.join(EXAMPLES, "frame.jpg"), "rb") as f:
            jpg = f.read()
        png = H.png_bytes(H.rand8())
        pfm_path = H.write_pfm(os.path.join(H.TMP, "in.pfm"), H.rand_float(scale=1.5))
        with open(pfm_path, "rb") as f:
            pfm = f.read()
        ps = "&kernel_preset=gaussian:sigma=3&format=pfm"
        for name, body, look in (("jpeg", jpg, LOOK_8BIT), ("png", png, LOOK_8BIT),
                                 ("pfm", pfm, LOOK_HDR)):
            st, _, plain = d.req("POST", "/v1/bloom?" + ps[1:], body=body)
            st2, _, given = d.req("POST", "/v1/bloom?" + look + ps, body=body)
            H.check("%s: no parameters is %s" % (name, look),
                    st == st2 == 200 and plain == given, "%d %d" % (st, st2))
        # the first example: the photo visibly blooms (the old defaults moved it ~1.7 codes)
        st, _, out = d.req("POST", "/v1/bloom?format=png", body=jpg)
        import cv2
        a = cv2.imdecode(np.frombuffer(out, np.uint8), cv2.IMREAD_COLOR).astype(np.float64)
        b = cv2.imdecode(np.frombuffer(jpg, np.uint8), cv2.IMREAD_COLOR).astype(np.float64)
        diff = float(np.abs(a - b).mean())
        print("     frame.jpg: mean change %.1f codes" % diff)
        H.check("frame.jpg with no parameters blooms (mean change > 5 codes)", st == 200 and
                diff > 5, "%d %.2f" % (st, diff))
        # a stored photo's render URL: the defaults spelt out are the same render (one ETag)
        st, _, _ = d.req("PUT", "/v1/images/frame", body=jpg)
        st1, h1, b1 = d.req("GET", "/v1/bloom/frame?" + ps[1:])
        st2, h2, b2 = d.req("GET", "/v1/bloom/frame?" + LOOK_8BIT + ps)
        H.check("stored jpeg: no parameters is the 8-bit look, with the same ETag",
                st1 == st2 == 200 and b1 == b2 and h1.get("etag") and
                h1.get("etag") == h2.get("etag"), (st1, st2, h1.get("etag"), h2.get("etag")))
        st, _, body = d.req("GET", "/v1/info")
        dfl = json.loads(body).get("input_defaults", {}) if st == 200 else {}
        H.check("/v1/info: input_defaults for 8-bit and hdr inputs",
                dfl.get("8bit") == {"threshold": 0.8, "knee": 0.2, "intensity": 20} and
                dfl.get("hdr") == {"threshold": 1, "knee": 0.5, "intensity": 1}, str(dfl))
    finally:
        d.stop("defaults daemon")
    # the CLI: the same answers
    k = ["--kernel-preset", "gaussian:sigma=3", "--quiet"]
    for name, path, look in (("jpeg", os.path.join(EXAMPLES, "frame.jpg"), LOOK_8BIT),
                             ("pfm", pfm_path, LOOK_HDR)):
        a, b = os.path.join(H.TMP, "a.pfm"), os.path.join(H.TMP, "b.pfm")
        r1 = run_cli("bloom", path, "-o", a, *k)
        flags = []
        for kv in look.split("&"):
            n, v = kv.split("=")
            flags += ["--" + n, v]
        r2 = run_cli("bloom", path, "-o", b, *k, *flags)
        same = (r1.returncode == r2.returncode == 0 and
                open(a, "rb").read() == open(b, "rb").read())
        H.check("cli %s: no parameters is %s" % (name, look), same, r1.stderr + r2.stderr)


def lost_of(h):
    return h.get("x-image-lost", "")


def test_quiet_when_nothing_is_wrong():
    d = H.Daemon()
    try:
        with open(os.path.join(EXAMPLES, "frame.jpg"), "rb") as f:
            jpg = f.read()
        g = "kernel_preset=gaussian:sigma=3"
        st, h, _ = d.req("POST", "/v1/bloom?" + g, body=jpg)
        H.check("bloom jpeg -> jpeg: no X-Image-Lost", st == 200 and not lost_of(h), lost_of(h))
        st, h, _ = d.req("POST", "/v1/bloom?format=png&" + g, body=jpg)
        H.check("bloom jpeg -> png: no X-Image-Lost", st == 200 and not lost_of(h), lost_of(h))
        # a convolution that stays within [0, 1] up to rounding loses nothing either
        st, h, _ = d.req("POST", "/v1/convolve?normalize=luminance&format=png&" + g, body=jpg)
        H.check("convolve jpeg -> png (normalised): no X-Image-Lost", st == 200 and
                not lost_of(h), lost_of(h))
        hot = H.rand_float(scale=3.0)
        pfm = open(H.write_pfm(os.path.join(H.TMP, "hot.pfm"), hot), "rb").read()
        st, h, _ = d.req("POST", "/v1/bloom?format=jpeg&" + g, body=pfm)
        H.check("bloom float -> jpeg: X-Image-Lost precision only", st == 200 and
                lost_of(h) == "precision", lost_of(h))
        st, h, _ = d.req("POST", "/v1/convolve?normalize=luminance&format=png&" + g, body=pfm)
        H.check("convolve of values up to 3 -> png: X-Image-Lost names range",
                st == 200 and "range" in lost_of(h), lost_of(h))
    finally:
        d.stop("quiet daemon")
    frame = os.path.join(EXAMPLES, "frame.jpg")
    out = os.path.join(H.TMP, "o.jpg")
    r = run_cli("bloom", frame, "-o", out, "--kernel-preset", "gaussian:sigma=3")
    H.check("cli bloom jpeg -> jpeg: no warning", r.returncode == 0 and
            "warning" not in r.stderr, r.stderr)
    # the summary: GPU total = the sum of the stages listed (the kernel's spectrum included)
    m = re.search(r"(?:GPU|CPU engine) ([0-9.]+) ms \([^:]*: ([^)]*)\)", r.stderr)
    parts = [float(p.split()[-1]) for p in m.group(2).split(",")] if m else []
    total = float(m.group(1)) if m else -1
    print("     summary: total %.2f, parts %s" % (total, parts))
    H.check("cli summary: GPU total is the sum of its stages", m is not None and
            "kernel" in m.group(2) and abs(total - sum(parts)) <= 0.01 * len(parts) + 0.01,
            r.stderr)
    hot_path = os.path.join(H.TMP, "hot.pfm")
    png = os.path.join(H.TMP, "o.png")
    conv = ["convolve", hot_path, "-o", png, "--kernel-preset", "gaussian:sigma=3",
            "--normalize", "luminance"]
    r = run_cli(*conv)
    H.check("cli convolve clipping values up to 3: warns", r.returncode == 0 and
            "clipped values outside its range" in r.stderr, r.stderr)
    r = run_cli(*conv, "--quiet")
    H.check("cli convolve --quiet: no warning", r.returncode == 0 and not r.stderr, r.stderr)
    r = run_cli("convert", hot_path, "-o", png)
    H.check("cli convert clipping: warns", r.returncode == 0 and "warning" in r.stderr, r.stderr)
    r = run_cli("convert", hot_path, "-o", png, "--quiet")
    H.check("cli convert --quiet: no warning", r.returncode == 0 and not r.stderr, r.stderr)


def test_nonfinite_refused():
    img = H.rand_float(h=24, w=32, scale=1.5)
    img[3, 4, 0] = np.nan
    img[5, 6, 1] = np.inf
    img[7, 8, 2] = -np.inf
    bad = open(H.write_pfm(os.path.join(H.TMP, "nan.pfm"), img), "rb").read()
    good = open(H.write_pfm(os.path.join(H.TMP, "ok.pfm"), H.rand_float(h=24, w=32)), "rb").read()
    kimg = np.ones((5, 5), np.float32)
    kimg[2, 2] = np.nan
    kbad = open(H.write_pfm(os.path.join(H.TMP, "knan.pfm"), kimg), "rb").read()
    x = H.RNG.standard_normal((1, 2, 8, 8)).astype(np.float32)
    w = H.RNG.standard_normal((2, 2, 3, 3)).astype(np.float32)
    xbad = x.copy()
    xbad[0, 1, 2, 3] = np.nan
    xbad[0, 0, 0, 0] = np.inf
    wbad = w.copy()
    wbad[1, 0, 1, 1] = -np.inf
    d = H.Daemon()

    def refused(name, st, body, count, what):
        status, code, msg = H.err_of(body)
        H.check("%s: 422 input_not_finite naming %d in the %s" % (name, count, what),
                st == 422 and code == "input_not_finite" and ("%d NaN" % count) in msg and
                what in msg, (st, body[:300]))

    def post_parts(path, parts, query=""):
        body, ct = H.multipart([(k, v, "application/octet-stream") for k, v in parts])
        return d.req("POST", path + query, body=body, headers={"Content-Type": ct})
    try:
        g = "kernel_preset=gaussian:sigma=2&format=pfm"
        for op in ("bloom", "convolve?method=fft", "convolve?method=spatial"):
            path = "/v1/" + op + ("&" if "?" in op else "?") + g
            st, _, body = d.req("POST", path, body=bad)
            refused(op, st, body, 3, "image")
        st, _, body = post_parts("/v1/convolve", [("image", good), ("kernel", kbad)],
                                 "?format=pfm")
        refused("convolve with a kernel part", st, body, 1, "kernel")
        st, _, body = d.req("PUT", "/v1/kernels/nan", body=kbad)
        refused("PUT /v1/kernels", st, body, 1, "kernel")
        for op in ("conv2d", "conv2d_transpose"):
            st, _, body = post_parts("/v1/" + op, [("input", H.npy_bytes(xbad)),
                                                   ("weight", H.npy_bytes(w))])
            refused(op + " input", st, body, 2, "input")
            st, _, body = post_parts("/v1/" + op, [("input", H.npy_bytes(x)),
                                                   ("weight", H.npy_bytes(wbad))])
            refused(op + " weight", st, body, 1, "weight")
        st, _, body = post_parts("/v1/conv2d", [("input", H.npy_bytes(x)),
                                                ("weight", H.npy_bytes(w))])
        H.check("conv2d of finite tensors still 200", st == 200, body[:200])
    finally:
        d.stop("non-finite daemon")
    p = os.path.join(H.TMP, "cli")
    os.makedirs(p, exist_ok=True)
    nan_pfm, knan = os.path.join(H.TMP, "nan.pfm"), os.path.join(H.TMP, "knan.pfm")
    ok_pfm = os.path.join(H.TMP, "ok.pfm")
    np.save(os.path.join(p, "x.npy"), x)
    np.save(os.path.join(p, "w.npy"), w)
    np.save(os.path.join(p, "xbad.npy"), xbad)
    out = os.path.join(p, "o.pfm")
    g = ["--kernel-preset", "gaussian:sigma=2"]
    for name, args, count in (
            ("bloom", ["bloom", nan_pfm, "-o", out] + g, 3),
            ("convolve", ["convolve", nan_pfm, "-o", out] + g, 3),
            ("convolve --kernel", ["convolve", ok_pfm, "-o", out, "--kernel", knan], 1),
            ("conv2d", ["conv2d", "--input", os.path.join(p, "xbad.npy"), "--weight",
                        os.path.join(p, "w.npy"), "-o", os.path.join(p, "y.npy")], 2),
            ("conv2d-transpose", ["conv2d-transpose", "--input", os.path.join(p, "xbad.npy"),
                                  "--weight", os.path.join(p, "w.npy"), "-o",
                                  os.path.join(p, "y.npy")], 2)):
        r = run_cli(*args)
        H.check("cli %s: exit 1 naming %d NaN or infinite samples" % (name, count),
                r.returncode == 1 and ("%d NaN or infinite" % count) in r.stderr,
                (r.returncode, r.stderr[-300:]))


def main():
    H.run_script((test_defaults_by_input, test_quiet_when_nothing_is_wrong,
                  test_nonfinite_refused), only_env="LOOK_ONLY", need_daemon=True)


if __name__ == "__main__":
    main()
