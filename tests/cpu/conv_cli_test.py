"""The CLI's conv2d and conv2d-transpose on the CPU engine (run by test_cpu_conv_cli.sh): fresh
random tensors written as .npy, `fftbloom conv2d|conv2d-transpose --engine cpu`, the result
against torch.nn.functional's float64 convolution: relative L2 error within 1e-5 and the largest
absolute error within 10 x 1e-5 x the reference's RMS (NaN fails both); the run's JSON line
(--repeat 1) must name the CPU engine, not a GL renderer. One case also on --engine gpu
(llvmpipe here). Prints the measured errors; "SCRIPT: N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
FB = os.path.join(BUILD, "fftbloom")
TOL = 1e-5
passed = failed = 0
rng = np.random.default_rng()


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name + (": " + detail if detail else ""))
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))


def run(op, engine, tensors, flags, tmp):
    """Writes tensors (name -> array), runs the CLI; (output array or None, JSON line, stderr)."""
    args = [FB, op, "--engine", engine, "--repeat", "1", "-o", os.path.join(tmp, "y.npy")]
    for k, v in tensors.items():
        np.save(os.path.join(tmp, k + ".npy"), v)
        args += ["--" + k, os.path.join(tmp, k + ".npy")]
    r = subprocess.run(args + flags, capture_output=True, text=True, timeout=120)
    line = {}
    for s in r.stderr.splitlines():
        if s.startswith("{"):
            line = json.loads(s)
    if r.returncode:
        return None, line, r.stderr[-400:]
    return np.load(os.path.join(tmp, "y.npy")), line, ""


def case(name, op, engine, xs, ws, bias, flags, ref_fn):
    x = rng.uniform(-1, 1, xs).astype(np.float32)
    w = rng.uniform(-1, 1, ws).astype(np.float32)
    t = {"input": x, "weight": w}
    b = None
    if bias:
        b = rng.uniform(-1, 1, bias).astype(np.float32)
        t["bias"] = b
    with tempfile.TemporaryDirectory() as tmp:
        y, line, err = run(op, engine, t, flags, tmp)
    if y is None:
        check(name, False, err)
        return
    tb = torch.from_numpy(b).double() if b is not None else None
    ref = ref_fn(torch.from_numpy(x).double(), torch.from_numpy(w).double(), tb).numpy()
    if y.shape != ref.shape:
        check(name, False, "shape %s, reference %s" % (y.shape, ref.shape))
        return
    d = y.astype(np.float64) - ref
    rel = float(np.sqrt(np.sum(d * d) / np.sum(ref * ref)))
    mx = float(np.max(np.abs(d)))
    rms = float(np.sqrt(np.mean(ref * ref)))
    renderer = str(line.get("renderer", ""))
    right = "llvmpipe" not in renderer if engine == "cpu" else "llvmpipe" in renderer
    check(name, rel <= TOL and mx <= 10 * TOL * rms and right,
          "rel_l2 %.3g (tol %g) max_abs %.3g (tol %.3g), %s" % (rel, TOL, mx, 10 * TOL * rms,
                                                                 renderer or "no JSON line"))


F = torch.nn.functional
for engine in ("cpu", "gpu"):
    case("conv2d %s B2 3->5 11x13 k3 s2 p1 bias" % engine, "conv2d", engine, (2, 3, 11, 13),
         (5, 3, 3, 3), (5,), ["--padding", "1", "--stride", "2"],
         lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1))
    if engine == "gpu":
        break
    case("conv2d cpu B1 17->17 depthwise 16x9 k5 d2 p4", "conv2d", engine, (1, 17, 16, 9),
         (17, 1, 5, 5), None, ["--groups", "17", "--dilation", "2", "--padding", "4"],
         lambda x, w, b: F.conv2d(x, w, b, padding=4, dilation=2, groups=17))
    case("conv2d cpu 3-D input 4->2 20x31 k7x3 s3,1 p5,0 g2", "conv2d", engine, (4, 20, 31),
         (2, 2, 7, 3), (2,), ["--groups", "2", "--stride", "3,1", "--padding", "5,0"],
         lambda x, w, b: F.conv2d(x, w, b, stride=(3, 1), padding=(5, 0), groups=2))
    case("conv2d-transpose cpu B3 6->4 9x7 k4 s2 p1 op1 g2", "conv2d-transpose", engine,
         (3, 6, 9, 7), (6, 2, 4, 4), (4,),
         ["--stride", "2", "--padding", "1", "--output-padding", "1", "--groups", "2"],
         lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                            groups=2))
    case("conv2d-transpose cpu B1 3->5 5x6 k3 s3 d2 no bias", "conv2d-transpose", engine,
         (1, 3, 5, 6), (3, 5, 3, 3), None, ["--stride", "3", "--dilation", "2"],
         lambda x, w, b: F.conv_transpose2d(x, w, b, stride=3, dilation=2))
    # TF SAME to 8x8 from 4x4 at stride 2 with a 3x3 kernel: torch's padding 1, output_padding 1
    # gives the same 8x8 (pad_top 0 there means a crop of torch's padding-0 output from 0)
    case("conv2d-transpose cpu tf_same 2->3 4x4 k3 s2", "conv2d-transpose", engine,
         (1, 2, 4, 4), (2, 3, 3, 3), (3,), ["--stride", "2", "--padding-mode", "tf_same"],
         lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2)[:, :, :8, :8])

print("SCRIPT: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
