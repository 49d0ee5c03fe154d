"""Colour profiles over real HTTP (run by test_colour.sh): a PNG and a JPEG carrying a Display P3
profile (tests/fuzz/corpus/icc/p3_v4.icc, made by lcms2) go through a no-op bloom (intensity 0)
on fftbloomd. The default answer is sRGB, tagged (PNG: an sRGB chunk, no iCCP; JPEG: an ICC
APP2 segment), within 1 code of an independent float64 reference of P3 -> sRGB (the primaries'
matrices, both D65, the sRGB curve both ways, out-of-gamut components clipped) for in-gamut
pixels; with keep_profile=1 the answer carries the input's profile and its codes are the input's
within 1. GET on a stored image takes keep_profile too. Prints "SCRIPT: N passed, N failed"."""
import os
import struct
import zlib

import numpy as np

import http_test as H

P3_ICC = os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "icc", "p3_v4.icc")


def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def png_with_icc(a8, icc):
    h, w, _ = a8.shape
    raw = b"".join(b"\0" + a8[y].tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"iCCP", b"P3\0\0" + zlib.compress(icc))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_chunks(data):
    out, p = {}, 8
    while p + 8 <= len(data):
        n = struct.unpack(">I", data[p:p + 4])[0]
        out.setdefault(data[p + 4:p + 8].decode("latin-1"), []).append(data[p + 8:p + 8 + n])
        p += 12 + n
    return out


def png_pixels(data):
    import cv2
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)[:, :, ::-1]


def jpeg_icc(data):
    """The profile of a JPEG's APP2 ICC_PROFILE segments, reassembled (b"" if none)."""
    segs, p = {}, 2
    while p + 4 <= len(data) and data[p] == 0xFF and data[p + 1] not in (0xDA, 0xD9):
        n = struct.unpack(">H", data[p + 2:p + 4])[0]
        s = data[p + 4:p + 2 + n]
        if data[p + 1] == 0xE2 and s.startswith(b"ICC_PROFILE\0"):
            segs[s[12]] = s[14:]
        p += 2 + n
    return b"".join(segs[k] for k in sorted(segs))


def rgb_to_xyz(xy):
    (rx, ry), (gx, gy), (bx, by), (wx, wy) = xy
    m = np.array([[x / y, 1.0, (1 - x - y) / y] for x, y in ((rx, ry), (gx, gy), (bx, by))]).T
    white = np.array([wx / wy, 1.0, (1 - wx - wy) / wy])
    return m * np.linalg.solve(m, white)


def eotf(c):
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def oetf(l):
    return np.where(l <= 0.0031308, l * 12.92, 1.055 * np.abs(l) ** (1 / 2.4) - 0.055)


D65 = (0.3127, 0.3290)
M = np.linalg.solve(rgb_to_xyz(((0.64, 0.33), (0.30, 0.60), (0.15, 0.06), D65)),
                    rgb_to_xyz(((0.680, 0.320), (0.265, 0.690), (0.150, 0.060), D65)))


def p3_to_srgb(a8):
    """float64 reference: the sRGB codes of P3 codes and which pixels are in sRGB's gamut."""
    lin = eotf(a8.astype(np.float64) / 255) @ M.T
    gamut = np.all((lin > -1e-4) & (lin < 1 + 1e-4), axis=2)
    return np.floor(oetf(np.clip(lin, 0, 1)) * 255 + 0.5).astype(np.int64), gamut


def compare(name, got, want, mask):
    d = np.abs(got.astype(np.int64) - want.astype(np.int64))
    worst = int(d[mask].max()) if mask.any() else 0
    H.check("%s: within 1 code of the reference (%d of %d pixels in gamut; largest difference "
            "%d)" % (name, int(mask.sum()), mask.size, worst), worst <= 1)


def test_p3():
    with open(P3_ICC, "rb") as f:
        icc = f.read()
    a8 = (H.RNG.random((40, 56, 3)) * 200 + 30).astype(np.uint8)
    a8[::5, ::3] = (H.RNG.random((8, 19, 3)) * 255).astype(np.uint8)  # some saturated
    ref, gamut = p3_to_srgb(a8)
    moved = np.abs(a8.astype(np.int64) - ref)[gamut]
    print("     P3 decoded as sRGB (before profiles were read) is off the reference by mean "
          "%.2f, max %d codes in gamut" % (moved.mean(), moved.max()))
    d = H.Daemon()
    try:
        q = "/v1/bloom?intensity=0&format=png"
        png = png_with_icc(a8, icc)
        st, h, body = d.req("POST", q, body=png)
        H.check("P3 PNG, no-op bloom: 200", st == 200, body[:300])
        c = png_chunks(body)
        H.check("sRGB answer: an sRGB chunk, no iCCP", "sRGB" in c and "iCCP" not in c)
        compare("P3 PNG as sRGB", png_pixels(body), ref, gamut)
        st, h, body = d.req("POST", q + "&keep_profile=1", body=png)
        c = png_chunks(body)
        kept = "iCCP" in c and zlib.decompress(c["iCCP"][0].split(b"\0", 1)[1][1:]) == icc
        H.check("keep_profile=1: 200 with the input's profile in iCCP", st == 200 and kept)
        compare("keep_profile=1: the input's codes", png_pixels(body), a8,
                np.ones(a8.shape[:2], bool))
        st, h, body = d.req("POST", q + "&keep_profile=2", body=png)
        H.check("keep_profile=2 refused (400)", st == 400, body[:300])
        # a JPEG with the profile: decoded on the CPU (the GPU's planes know sRGB alone)
        import cv2
        ok, j = cv2.imencode(".jpg", a8[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 100])
        j = j.tobytes()
        seg = b"\xff\xe2" + struct.pack(">H", len(icc) + 16) + b"ICC_PROFILE\0\x01\x01" + icc
        j = j[:2] + seg + j[2:]
        dec = cv2.imdecode(np.frombuffer(j, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
        jref, jgamut = p3_to_srgb(dec)
        st, h, body = d.req("POST", q, body=j)
        H.check("P3 JPEG, no-op bloom: 200", st == 200, body[:300])
        compare("P3 JPEG as sRGB", png_pixels(body), jref, jgamut)
        st, h, body = d.req("POST", "/v1/bloom?intensity=0&format=jpeg&keep_profile=1", body=j)
        H.check("JPEG answer with keep_profile=1 carries the P3 profile",
                st == 200 and jpeg_icc(body) == icc)
        st, h, body = d.req("POST", "/v1/bloom?intensity=0&format=jpeg", body=j)
        H.check("JPEG answer by default carries an sRGB profile",
                st == 200 and b"\0s\0R\0G\0B" in jpeg_icc(body))
        # a stored image: GET renders take keep_profile
        st, _, body = d.req("PUT", "/v1/images/p3", body=png)
        H.check("PUT a P3 image", st in (200, 201), body[:300])
        st, h, body = d.req("GET", "/v1/bloom/p3?intensity=0&format=png&keep_profile=1")
        c = png_chunks(body)
        H.check("GET /v1/bloom/p3?keep_profile=1: the profile kept",
                st == 200 and "iCCP" in c, body[:300] if st != 200 else "")
        st, _, body = d.req("GET", "/v1/info")
        H.check("/v1/info lists keep_profile", st == 200 and b"keep_profile" in body)
        st, _, body = d.req("GET", "/openapi.json")
        H.check("the OpenAPI document lists keep_profile", st == 200 and b"keep_profile" in body)
    finally:
        d.stop("colour daemon")


if __name__ == "__main__":
    H.run_script((test_p3,), need_daemon=True)
