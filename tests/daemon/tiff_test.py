"""TIFF and HEIC through fftbloomd over real HTTP (run by test_tiff.sh). A TIFF posted to /v1/bloom
is the image its PNG twin (the same 8-bit codes) is: the float answers are byte for byte the
same. Answers as TIFF by format= (tiff, tiff16, tiff16f, tiff32) and by Accept: image/tiff read
back (Pillow, OpenCV) as the PNG and PFM answers' samples (8/16-bit codes exact, float32
exact, half within half an ulp). A TIFF input's family answer is a TIFF of its depth. A HEIC
(heif-enc at test time, lossless) is the image heif-convert decodes it to, answered as TIFF
when asked and as JPEG by default. Truncated and corrupt TIFF and HEIC bodies are 422 with the
error table's codes; /v1/info lists both formats. Prints "SCRIPT: N passed, N failed" last."""
import io
import json
import os
import subprocess

import cv2
import numpy as np
from PIL import Image

import http_test as H

Q = "/v1/bloom?kernel_preset=gaussian:sigma=2&threshold=0.5&intensity=0.5"


def tiff_bytes(a, compression="tiff_lzw"):
    b = io.BytesIO()
    Image.fromarray(a).save(b, format="TIFF", compression=compression)
    return b.getvalue()


def png_twin(a):
    """The PNG of the same samples (Pillow: RGB order, as its TIFF)."""
    b = io.BytesIO()
    Image.fromarray(a).save(b, format="PNG")
    return b.getvalue()


def read_ours(body, name):
    """A TIFF answer read back by fftbloom convert (Pillow and OpenCV read no half TIFF), as
    float32 (H, W, C) in R, G, B order."""
    p = os.path.join(H.TMP, name)
    open(p, "wb").write(body)
    subprocess.run([H.CLI, "convert", p, "-o", p + ".pfm", "--quiet"], check=True,
                   capture_output=True)
    return H.read_pfm(open(p + ".pfm", "rb").read())


def decode_cv(body):
    a = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_UNCHANGED)
    if a is not None and a.ndim == 3:
        a = a[..., [2, 1, 0, 3]] if a.shape[2] == 4 else a[..., ::-1]
    return a


def test_tiff():
    d = H.Daemon()
    try:
        a = H.rand8()
        rgba = np.dstack([a, (np.arange(a.shape[1])[None, :] * 3 % 256 +
                              np.zeros(a.shape[:2], int)).astype(np.uint8)])
        for name, arr in (("rgb", a), ("rgba", rgba)):
            tif, png = tiff_bytes(arr), png_twin(arr)
            st1, h1, t_pfm = d.req("POST", Q + "&format=exr", body=tif)
            st2, _, p_pfm = d.req("POST", Q + "&format=exr", body=png)
            H.check("%s TIFF in: the same answer as its PNG twin" % name,
                    st1 == st2 == 200 and t_pfm == p_pfm, (st1, st2, t_pfm[:200]))
            # no format=, no Accept: a TIFF of the input's depth (8)
            st, h, body = d.req("POST", Q, body=tif)
            st2, _, pbody = d.req("POST", Q + "&format=png", body=png)
            got = np.array(Image.open(io.BytesIO(body))) if st == 200 else None
            want = np.array(Image.open(io.BytesIO(pbody))) if st2 == 200 else None
            H.check("%s TIFF in, no format=: image/tiff, the PNG answer's codes" % name,
                    st == 200 and h.get("content-type") == "image/tiff" and got is not None and
                    want is not None and got.shape == want.shape and (got == want).all(),
                    (st, h.get("content-type")))
        tif = tiff_bytes(a)
        # Accept: image/tiff picks TIFF for a PNG input; the 16-bit and float depths
        st, h, body = d.req("POST", Q, body=png_twin(a), headers={"Accept": "image/tiff"})
        H.check("Accept: image/tiff gets a TIFF", st == 200 and
                h.get("content-type") == "image/tiff" and body[:4] in (b"II*\0", b"MM\0*"),
                (st, h.get("content-type")))
        st, _, exr = d.req("POST", Q + "&format=exr&exr_compression=none", body=tif)
        ref = decode_cv(exr).astype(np.float64)  # half: EXR's default depth
        st32, _, pfm = d.req("POST", Q + "&format=pfm", body=tif)
        ref32 = H.read_pfm(pfm) if st32 == 200 else None
        for fmt, tol in (("tiff32", 0.0), ("tiff16f", 0.0), ("tiff16", None)):
            st, h, body = d.req("POST", Q + "&format=" + fmt, body=tif)
            got = (read_ours(body, "a16f.tif") if fmt == "tiff16f" else decode_cv(body)) \
                if st == 200 else None
            if got is None:
                H.check("format=%s decodes" % fmt, False, (st, body[:200]))
                continue
            if fmt == "tiff16":
                want = np.floor(np.where(ref32 <= 0.0031308, ref32 * 12.92, 1.055 * np.clip(
                    ref32, 0, 1) ** (1 / 2.4) - 0.055).clip(0, 1) * 65535 + 0.5)
                err = np.abs(got.astype(np.float64) - want).max()
                H.check("format=tiff16: the PFM answer's 16-bit sRGB codes (within 1: float "
                        "rounding of the formula)", got.dtype == np.uint16 and err <= 1, err)
            elif fmt == "tiff16f":
                H.check("format=tiff16f: the half EXR answer's samples exactly",
                        got.shape == ref.shape and (got.astype(np.float64) == ref).all(),
                        np.abs(got.astype(np.float64) - ref).max())
            else:
                H.check("format=tiff32: the PFM answer's float32 samples exactly",
                        got.dtype == np.float32 and (got == ref32).all(),
                        np.abs(got.astype(np.float64) - ref32).max())
        st, _, small = d.req("POST", Q + "&format=tiff&tiff_compression=none", body=tif)
        st2, _, zipped = d.req("POST", Q + "&format=tiff", body=tif)
        H.check("tiff_compression=none: the raw samples' size at least, the same pixels",
                st == st2 == 200 and len(small) >= a.size and
                (np.array(Image.open(io.BytesIO(small))) ==
                 np.array(Image.open(io.BytesIO(zipped)))).all(), (len(small), len(zipped)))
        # a float TIFF's family answer is float32 TIFF
        f = (np.random.default_rng(1).random((40, 50)) * 3).astype(np.float32)
        st, h, body = d.req("POST", Q, body=tiff_bytes(f, "raw"))
        got = decode_cv(body) if st == 200 else None
        H.check("float TIFF in: a float32 TIFF answer", got is not None and
                got.dtype == np.float32 and got.shape[:2] == f.shape, (st, h.get("content-type")))
        # broken bodies: 422 with the table's codes
        for what, body in (("truncated", tif[:len(tif) // 2]),
                           ("corrupt", tif[:8] + bytes(200)),
                           ("header only", tif[:6])):
            st, _, b = d.req("POST", Q, body=body)
            status, code, msg = H.err_of(b)
            H.check("%s TIFF: 422 image_truncated or image_corrupt" % what, st == 422 and
                    code in ("image_truncated", "image_corrupt") and "tiff" in msg,
                    (st, code, msg))
        st, _, body = d.req("GET", "/v1/info")
        info = json.loads(body) if st == 200 else {}
        names = json.dumps(info)
        H.check("/v1/info lists TIFF (read, written) and HEIC (read)",
                "image/tiff" in names and "image/heic" in names and "tiff_compression" in names,
                names[:300])
    finally:
        d.stop("tiff daemon")


def test_heic():
    d = H.Daemon()
    try:
        y, x = np.mgrid[0:37, 0:53]
        a = np.stack([x * 4, y * 6, (x + y) * 2], -1).clip(0, 255).astype(np.uint8)
        png = os.path.join(H.TMP, "h.png")
        heic = os.path.join(H.TMP, "h.heic")
        cv2.imwrite(png, a[..., ::-1])
        subprocess.run(["heif-enc", "-L", "-p", "chroma=444", "-o", heic, png], check=True,
                       capture_output=True)
        subprocess.run(["heif-convert", heic, heic + ".png"], check=True, capture_output=True)
        body_heic = open(heic, "rb").read()
        ref_png = open(heic + ".png", "rb").read()
        st1, h1, t1 = d.req("POST", Q + "&format=tiff", body=body_heic)
        st2, h2, t2 = d.req("POST", Q + "&format=tiff", body=ref_png)
        H.check("HEIC in, format=tiff: the answer of heif-convert's decode, byte for byte",
                st1 == st2 == 200 and h1.get("content-type") == "image/tiff" and t1 == t2,
                (st1, st2, len(t1), len(t2)))
        st, h, body = d.req("POST", Q, body=body_heic)
        H.check("HEIC in, no format=: answered as JPEG", st == 200 and
                h.get("content-type") == "image/jpeg", (st, h.get("content-type")))
        st, h, body = d.req("POST", Q, body=body_heic, headers={"Accept": "image/tiff"})
        H.check("HEIC in, Accept: image/tiff: a TIFF", st == 200 and
                h.get("content-type") == "image/tiff", (st, h.get("content-type")))
        for what, b in (("truncated", body_heic[:len(body_heic) * 2 // 3]),
                        ("corrupt", body_heic[:40] + bytes(len(body_heic) - 40))):
            st, _, r = d.req("POST", Q, body=b)
            status, code, msg = H.err_of(r)
            H.check("%s HEIC: 422 image_truncated or image_corrupt" % what, st == 422 and
                    code in ("image_truncated", "image_corrupt") and "heic" in msg,
                    (st, code, msg))
        big = bytearray(body_heic)
        i = big.find(b"ispe")
        while i >= 0:  # width and height after the FullBox's version and flags
            big[i + 8:i + 16] = b"\xff" * 8
            i = big.find(b"ispe", i + 4)
        st, h, r = d.req("POST", Q, body=bytes(big))
        status, code, msg = H.err_of(r)
        H.check("a HEIC whose ispe says 4294967295x4294967295: 413 image_too_large, no "
                "Retry-After", (st, code) == (413, "image_too_large") and
                "retry-after" not in h and "heic" in msg, (st, code, msg))
    finally:
        d.stop("heic daemon")


def main():
    H.run_script((test_tiff, test_heic), only_env="TIFF_ONLY", need_daemon=True)


if __name__ == "__main__":
    main()
