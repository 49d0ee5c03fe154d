"""fftbloomd's multipart part limit over real HTTP (run by test_parts.sh): every parameter of an
operation can come as a form field of its own beside its files (issue 35, item 12: 8 parts
refused conv2d_transpose with a bias and its parameters as fields), a body past the documented
64 parts is 400 bad_multipart naming the limit, and a quoted ';' in a part header's filename
does not rename the part (item 11). Uses http_test.py's daemon harness. Last line:
"SCRIPT: N passed, N failed"."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import Daemon, check, err_of, npy_bytes, npy_load, png_bytes, rand8  # noqa: E402

RNG = np.random.default_rng()
PART_LIMIT = 64  # daemon/http.h MAX_PARTS, as docs/http-api.md documents it


def form(fields):
    """A multipart body of (name, bytes, is_file) fields; files get a filename and a type."""
    b = "----fftbloomparts%x" % RNG.integers(1 << 60)
    out = b""
    for name, data, is_file in fields:
        out += b"--" + b.encode() + b"\r\n"
        fn = '; filename="%s.npy"' % name if is_file else ""
        out += ('Content-Disposition: form-data; name="%s"%s\r\n' % (name, fn)).encode()
        if is_file:
            out += b"Content-Type: application/octet-stream\r\n"
        out += b"\r\n" + data + b"\r\n"
    out += b"--" + b.encode() + b"--\r\n"
    return out, "multipart/form-data; boundary=" + b


def deconv_ref(x, w, b, stride, padding, output_padding, dilation, groups):
    """torch.nn.functional.conv_transpose2d in float64 (weight C_in x C_out/groups x kh x kw)."""
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    x = np.asarray(x, np.float64)
    B, C, Hh, W = x.shape
    _, opg, kh, kw = w.shape
    cpg = C // groups
    fh, fw = (Hh - 1) * sh + dh * (kh - 1) + 1, (W - 1) * sw + dw * (kw - 1) + 1
    full = np.zeros((B, opg * groups, fh + oph, fw + opw))
    for g in range(groups):
        xg = x[:, g * cpg:(g + 1) * cpg]
        wg = np.asarray(w[g * cpg:(g + 1) * cpg], np.float64)
        for j in range(kh):
            for i in range(kw):
                full[:, g * opg:(g + 1) * opg, j * dh:j * dh + (Hh - 1) * sh + 1:sh,
                     i * dw:i * dw + (W - 1) * sw + 1:sw] += np.einsum('bchw,co->bohw', xg,
                                                                         wg[:, :, j, i])
    oh, ow = fh - 2 * ph + oph, fw - 2 * pw + opw
    y = full[:, :, ph:ph + oh, pw:pw + ow]
    return y + np.asarray(b, np.float64)[None, :, None, None]


def test_transpose_every_field():
    """conv2d_transpose with input, weight, bias and every parameter of its torch mode as form
    fields (11 parts), against a float64 reference; TF SAME's set likewise; and all of them at
    once (13 parts), which gets past the part limit to the parameters' own conflict rule."""
    d = Daemon()
    try:
        x = RNG.standard_normal((2, 4, 7, 6)).astype(np.float32)
        w = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)  # groups 2: 6 output planes
        b = RNG.standard_normal(6).astype(np.float32)
        files = [("input", npy_bytes(x), True), ("weight", npy_bytes(w), True),
                 ("bias", npy_bytes(b), True)]
        torch = [("padding", b"1,0"), ("stride", b"2,3"), ("dilation", b"2,1"), ("groups", b"2"),
                 ("output_padding", b"1,2"), ("method", b"overlap-add"),
                 ("padding_mode", b"torch"), ("conv_algorithm", b"auto")]
        body, ct = form(files + [(k, v, False) for k, v in torch])
        st, h, out = d.req("POST", "/v1/conv2d_transpose", body=body, headers={"Content-Type": ct})
        y = npy_load(out) if st == 200 else None
        ref = deconv_ref(x, w, b, (2, 3), (1, 0), (1, 2), (2, 1), 2)
        err = float(np.max(np.abs(y - ref))) if y is not None and y.shape == ref.shape else None
        rel = (float(np.linalg.norm(y - ref) / np.linalg.norm(ref)) if err is not None else None)
        print("     torch fields: status %d shape %s (want %s) max abs error %s rel L2 %s" % (
            st, None if y is None else y.shape, ref.shape, err, rel))
        check("conv2d_transpose: input, weight, bias and 8 parameters as 11 parts: 200 and the "
              "reference within 1e-4 max abs", err is not None and err < 1e-4, (st, out[:300]))
        tf = [("stride", b"2"), ("groups", b"2"), ("method", b"zero-insert"),
              ("padding_mode", b"tf_same"), ("output_shape", b"14,12"), ("conv_algorithm", b"auto"),
              ("dilation", b"1")]
        body, ct = form(files + [(k, v, False) for k, v in tf])
        st, h, out = d.req("POST", "/v1/conv2d_transpose", body=body, headers={"Content-Type": ct})
        y = npy_load(out) if st == 200 else None
        check("conv2d_transpose: TF SAME's parameters as 7 fields beside 3 files: 200, 14x12",
              y is not None and y.shape == (2, 6, 14, 12), (st, out[:300]))
        every = torch + [("output_shape", b"14,12")]
        body, ct = form(files + [(k, v, False) for k, v in every])
        st, h, out = d.req("POST", "/v1/conv2d_transpose", body=body, headers={"Content-Type": ct})
        e = err_of(out)
        check("conv2d_transpose: every parameter row as a field (13 parts): past the part limit, "
              "refused by the rule that output_shape is for the TF modes",
              st == 400 and e[1] != "bad_multipart" and "output_shape" in e[2], (st, out[:300]))
        # conv2d: its rows (padding, stride, dilation, groups, precision, algorithm) and bias
        xc = RNG.standard_normal((1, 2, 9, 8)).astype(np.float32)
        wc = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
        conv = [("padding", b"1"), ("stride", b"1"), ("dilation", b"1"), ("groups", b"1"),
                ("precision", b"3"), ("algorithm", b"auto")]
        body, ct = form([("input", npy_bytes(xc), True), ("weight", npy_bytes(wc), True),
                         ("bias", npy_bytes(np.zeros(3, np.float32)), True)] +
                        [(k, v, False) for k, v in conv] + [("params", b"{}", False)])
        st, h, out = d.req("POST", "/v1/conv2d", body=body, headers={"Content-Type": ct})
        y = npy_load(out) if st == 200 else None
        ref = H.conv2d_ref(xc, wc, None, (1, 1))
        check("conv2d: 3 files, 6 parameters and params as 10 parts: 200, the reference",
              y is not None and y.shape == ref.shape and np.max(np.abs(y - ref)) < 1e-4,
              (st, out[:300]))
    finally:
        d.stop("parts daemon")


def test_bloom_fields_and_limit():
    """Bloom with its parameters as fields beside the image (over 8 parts); exactly the limit
    parses; one part past it is 400 bad_multipart saying the limit."""
    d = Daemon()
    try:
        img = png_bytes(rand8(24, 32))
        fields = [("image", img, True), ("kernel_preset", b"gaussian:sigma=2", False),
                  ("threshold", b"0.5", False), ("knee", b"0.25", False),
                  ("clamp_max", b"100", False), ("intensity", b"2", False),
                  ("composite", b"mix", False), ("mix", b"0.4", False),
                  ("kernel_scale", b"0", False), ("kernel_center", b"uv:0.5,0.5", False),
                  ("normalize", b"luminance", False), ("precision", b"fp32", False),
                  ("technique", b"auto", False), ("format", b"png", False),
                  ("params", b"{}", False)]
        body, ct = form(fields)
        st, h, out = d.req("POST", "/v1/bloom", body=body, headers={"Content-Type": ct})
        check("bloom: the image, 13 parameters and params as 15 parts: 200 image/png",
              st == 200 and h.get("content-type") == "image/png", (st, out[:300]))
        # PART_LIMIT parts: the limit itself parses (then the unknown names are refused by name)
        junk = [("x%d" % i, b"1", False) for i in range(PART_LIMIT - 1)]
        body, ct = form([("image", img, True)] + junk)
        st, h, out = d.req("POST", "/v1/bloom", body=body, headers={"Content-Type": ct})
        e = err_of(out)
        check("%d parts: parsed, the first unknown name refused" % PART_LIMIT,
              st == 400 and "unknown multipart part 'x0'" in e[2], (st, out[:300]))
        body, ct = form([("image", img, True)] + junk + [("y", b"1", False)])
        st, h, out = d.req("POST", "/v1/bloom", body=body, headers={"Content-Type": ct})
        e = err_of(out)
        check("%d parts: 400 bad_multipart naming the limit %d" % (PART_LIMIT + 1, PART_LIMIT),
              st == 400 and e[1] == "bad_multipart" and "more than %d parts" % PART_LIMIT in e[2],
              (st, out[:300]))
        # item 11: a quoted ';' and "name=" in a filename belong to the filename
        b = "----fftbloomq%x" % RNG.integers(1 << 60)
        body = ("--%s\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n"
                % b).encode() + img + ("\r\n--%s\r\nContent-Disposition: form-data; "
                                       "filename=\"x;name=image;\"; name=\"params\"\r\n\r\n"
                                       "{\"format\": \"png\"}\r\n--%s--\r\n" % (b, b)).encode()
        st, h, out = d.req("POST", "/v1/bloom", body=body,
                           headers={"Content-Type": "multipart/form-data; boundary=" + b})
        check("filename=\"x;name=image;\"; name=\"params\" is the part params: 200 image/png",
              st == 200 and h.get("content-type") == "image/png", (st, out[:300]))
    finally:
        d.stop("parts limit daemon")


def main():
    H.run_script([test_transpose_every_field, test_bloom_fields_and_limit], "PARTS_ONLY",
                 need_daemon=True)


if __name__ == "__main__":
    main()
