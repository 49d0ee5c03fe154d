"""The CLI's habits, one rule set for every subcommand (run by test_habits.sh): a file argument
"-" is standard input or output, --format names the output's format where one is chosen, usage
errors and shape errors exit 2 and failures while running exit 1, and a failure that is a row of
the HTTP API's error table prints its code. Each row of CASES is one subcommand and one habit.
Last line: "SCRIPT: N passed, N failed"."""
import io
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BUILD", "build")
CLI = os.path.join(ROOT, BUILD, "fftbloom")
TMP = tempfile.mkdtemp(prefix="fftbloom-habits-")
RNG = np.random.default_rng()
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + str(detail)[:600] if detail else ""))


def run(args, stdin=b""):
    r = subprocess.run([CLI] + args, input=stdin, capture_output=True, cwd=TMP, timeout=300,
                       env=dict(os.environ, FFTBLOOM_SERVER=""))
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def save(name, data):
    with open(os.path.join(TMP, name), "wb") as f:
        f.write(data)
    return name


def load(b):
    return np.load(io.BytesIO(b))


# inputs: fresh random tensors and images, a file that is no format at all
a2 = RNG.random((6, 10)).astype(np.float32)
x = RNG.random((3, 2, 9, 8)).astype(np.float32)     # batch 3: not batch4's
w = RNG.random((4, 2, 3, 3)).astype(np.float32) - 0.5
xd = RNG.random((1, 2, 5, 6)).astype(np.float32)
wd = RNG.random((2, 3, 3, 3)).astype(np.float32)
save("a.npy", npy(a2))
save("a3.npy", npy(RNG.random((2, 3, 4)).astype(np.float32)))
save("x.npy", npy(x))
save("w.npy", npy(w))
save("xd.npy", npy(xd))
save("wd.npy", npy(wd))
save("w5.npy", npy(np.ones((2, 5, 3, 3), np.float32)))
save("wd3.npy", npy(np.ones((3, 2, 3, 3), np.float32)))
save("xs.npy", npy(RNG.random((1, 1, 64, 64)).astype(np.float32)))
save("ws.npy", npy(RNG.random((1, 1, 63, 63)).astype(np.float32)))
save("bad.bin", b"garbage, not an image or an array\n")
rc, _, err = run(["convert", os.path.join(ROOT, "docs/examples/frame.jpg"), "-o", "in.png"])
check("setup: in.png", rc == 0, err)
rc, _, err = run(["kernel", "gaussian:sigma=1.5,size=7", "-o", "k.pfm"])
check("setup: k.pfm", rc == 0, err)
png = open(os.path.join(TMP, "in.png"), "rb").read()

# standard input and output: (subcommand, args, stdin, check of stdout)
STD = [
    ("convert", ["convert", "-", "-o", "-", "--format", "webp"], png,
     lambda o: o[:4] == b"RIFF" and o[8:12] == b"WEBP"),
    ("fft", ["fft", "-", "-o", "-"], npy(a2),
     lambda o: np.allclose(load(o), np.fft.fft2(a2), rtol=1e-4, atol=1e-4 * abs(np.fft.fft2(a2)).max())),
    ("bloom", ["bloom", "-", "-o", "-", "--format", "png", "--kernel-preset", "gaussian:sigma=2"], png,
     lambda o: o[:8] == b"\x89PNG\r\n\x1a\n"),
    ("convolve", ["convolve", "-", "-o", "-", "--format", "pfm", "--kernel", "k.pfm"], png,
     lambda o: o[:2] == b"PF"),
    ("kernel", ["kernel", "gaussian:sigma=2", "-o", "-", "--format", "pfm"], b"",
     lambda o: o[:2] == b"Pf" or o[:2] == b"PF"),
    ("conv2d", ["conv2d", "--input", "-", "--weight", "w.npy", "-o", "-"], npy(x),
     lambda o: load(o).shape == (3, 4, 7, 6)),
    ("conv2d --weight -", ["conv2d", "--input", "x.npy", "--weight", "-", "-o", "y.npy"], npy(w),
     lambda o: load(open(os.path.join(TMP, "y.npy"), "rb").read()).shape == (3, 4, 7, 6)),
    ("conv2d-transpose", ["conv2d-transpose", "--input", "-", "--weight", "wd.npy", "--stride", "2",
                          "-o", "-"], npy(xd), lambda o: load(o).shape == (1, 3, 11, 13)),
]
for name, args, stdin, ok in STD:
    rc, out, err = run(args, stdin)
    try:
        good = rc == 0 and ok(out)
    except Exception as e:  # noqa: BLE001: a malformed output is this check's failure
        good, err = False, "%s; %s" % (e, err)
    check("%s: - reads standard input and writes standard output" % name, good, (rc, err))

# exit statuses: (subcommand, what, args, exit status, the error table's code or None)
EXIT = [
    ("convert", "usage: an unknown option", ["convert", "in.png", "-o", "o.png", "--nope"], 2, None),
    ("convert", "usage: -o - without --format", ["convert", "in.png", "-o", "-"], 2, None),
    ("convert", "usage: --format against the extension", ["convert", "in.png", "-o", "o.png",
                                                           "--format", "jpeg"], 2, None),
    ("convert", "runtime: not an image", ["convert", "bad.bin", "-o", "o.png"], 1, "unsupported_image"),
    ("convert", "runtime: a missing file", ["convert", "nope.png", "-o", "o.png"], 1, None),
    ("fft", "usage: no output", ["fft", "a.npy"], 2, None),
    ("fft", "shape: a 3-D array", ["fft", "a3.npy", "-o", "o.npy"], 2, "invalid_shape"),
    ("fft", "runtime: not an NPY (bad magic)", ["fft", "bad.bin", "-o", "o.npy"], 1, "tensor_corrupt"),
    ("bloom", "usage: a bad value", ["bloom", "in.png", "-o", "o.png", "--intensity", "x"], 2, None),
    ("bloom", "shape: a kernel centre outside the kernel",
     ["bloom", "in.png", "-o", "o.png", "--kernel-preset", "gaussian:sigma=2", "--kernel-center",
      "5000,5000"], 2, "invalid_request"),
    ("bloom", "runtime: not an image", ["bloom", "bad.bin", "-o", "o.png"], 1, None),
    ("convolve", "usage: no kernel", ["convolve", "in.png", "-o", "o.png"], 2, None),
    ("convolve", "shape: a kernel centre outside the kernel",
     ["convolve", "in.png", "-o", "o.pfm", "--kernel", "k.pfm", "--kernel-center", "50,50"], 2,
     "invalid_request"),
    ("convolve", "runtime: a kernel that is no image", ["convolve", "in.png", "-o", "o.pfm",
                                                        "--kernel", "bad.bin"], 1, None),
    ("kernel", "usage: an unknown kernel", ["kernel", "nosuch", "-o", "k.exr"], 2, None),
    ("kernel", "usage: -o - without --format", ["kernel", "gaussian", "-o", "-"], 2, None),
    ("kernel", "runtime: an unwritable output", ["kernel", "gaussian", "-o", "bad.bin/k.exr"], 1, None),
    ("conv2d", "usage: no --weight", ["conv2d", "--input", "x.npy", "-o", "o.npy"], 2, None),
    ("conv2d", "usage: standard input twice", ["conv2d", "--input", "-", "--weight", "-", "-o",
                                               "o.npy"], 2, None),
    ("conv2d", "shape: batch4 with a batch of 3", ["conv2d", "--input", "x.npy", "--weight", "w.npy",
                                                   "--algorithm", "batch4", "-o", "o.npy"], 2, "invalid_shape"),
    ("conv2d", "shape: a window that does not fit shared memory",
     ["conv2d", "--input", "xs.npy", "--weight", "ws.npy", "--algorithm", "shared", "-o", "o.npy"], 2,
     "too_large_for_gpu"),
    ("conv2d", "shape: weight planes not matching the input",
     ["conv2d", "--input", "x.npy", "--weight", "w5.npy", "-o", "o.npy"], 2, "invalid_shape"),
    ("conv2d", "runtime: not an NPY (bad magic)", ["conv2d", "--input", "bad.bin", "--weight",
                                                   "w.npy", "-o", "o.npy"], 1, "tensor_corrupt"),
    ("conv2d", "runtime: a missing file", ["conv2d", "--input", "nope.npy", "--weight", "w.npy",
                                           "-o", "o.npy"], 1, None),
    ("conv2d-transpose", "usage: no --stride value", ["conv2d-transpose", "--input", "xd.npy",
                                                      "--weight", "wd.npy", "-o", "o.npy", "--stride"], 2, None),
    ("conv2d-transpose", "shape: weight planes not matching the input",
     ["conv2d-transpose", "--input", "xd.npy", "--weight", "wd3.npy", "--stride", "2", "-o", "o.npy"],
     2, "invalid_shape"),
    ("conv2d-transpose", "runtime: not an NPY (bad magic)",
     ["conv2d-transpose", "--input", "xd.npy", "--weight", "bad.bin", "--stride", "2", "-o", "o.npy"],
     1, "tensor_corrupt"),
    ("info", "usage: an unknown option", ["info", "--nope"], 2, None),
    ("sign-url", "usage: an unknown option", ["sign-url", "--nope"], 2, None),
    ("fftbloom", "usage: an unknown subcommand", ["nosuch"], 2, None),
]
for cmd, what, args, want, code in EXIT:
    rc, _, err = run(args)
    last = err.strip().splitlines()[-1] if err.strip() else ""
    ok = rc == want and "fftbloom" in last
    if code:
        ok = ok and last.endswith("(%s)" % code)
    check("%s: %s: exit %d%s" % (cmd, what, want, " (%s)" % code if code else ""), ok, (rc, err))

print("SCRIPT: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
