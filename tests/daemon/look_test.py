"""fftbloomd and fftbloom look right and stay quiet by default (run by test_look.sh), over real
HTTP and the CLI: a bloom with no parameters takes threshold 0.8, knee 0.2, intensity 20 for an
8-bit input and 1, 0.5, 1 for a float or 16-bit one (the same answer as those values given), in
the daemon and the CLI, and /v1/info says so. Prints "SCRIPT: N passed, N failed" last."""
import json
import os
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


def main():
    H.run_script((test_defaults_by_input,), only_env="LOOK_ONLY", need_daemon=True)


if __name__ == "__main__":
    main()
