"""fftbloomd's request-body limit at its exact edge (run by test_limits.sh): a body of exactly
--max-body bytes is taken and rendered (200), one byte more is refused 413 body_too_large, both
for a Content-Length body (judged from the header) and for a chunked one (judged as it arrives).
The bodies are valid PNGs padded to the byte by a private ancillary chunk, so that the accepted
one is answered in full. A small --max-body and a large --memory-budget keep the budget's own
rules for bodies out of it. Uses http_test.py's daemon harness. Last line:
"SCRIPT: N passed, N failed"."""
import http.client
import json
import os
import re
import socket
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_test as H  # noqa: E402
from http_test import Daemon, check, err_of, png_bytes, rand8  # noqa: E402

MAX_BODY = 65536
PATH = "/v1/bloom?kernel_preset=gaussian:sigma=2&format=png"


def png_of_size(n):
    """A random 24x32 PNG of exactly n bytes: a private ancillary chunk ('paDd', which decoders
    skip) after IHDR takes up the difference."""
    png = png_bytes(rand8(24, 32))
    pad = n - len(png) - 12
    assert pad >= 0, (n, len(png))
    data = bytes(H.RNG.integers(0, 256, pad, dtype="uint8"))
    chunk = struct.pack(">I", pad) + b"paDd" + data + struct.pack(">I", zlib.crc32(b"paDd" + data))
    out = png[:33] + chunk + png[33:]  # signature (8) and IHDR (25) first
    assert len(out) == n
    return out


def chunks(body, size):
    for i in range(0, len(body), size):
        yield body[i:i + size]


def post(d, body, chunked, piece=4096):
    """POSTs body (as Content-Length, or chunked in pieces); returns (status, error code)."""
    c = d.conn(120)
    try:
        if chunked:
            c.request("POST", PATH, body=chunks(body, piece), encode_chunked=True,
                      headers={"Transfer-Encoding": "chunked"})
        else:
            c.request("POST", PATH, body=body)
        r = c.getresponse()
        data = r.read()
        return r.status, (err_of(data)[1] if r.status != 200 else r.getheader("Content-Type"))
    except (BrokenPipeError, ConnectionResetError):
        return raw_post(d, body, chunked, piece)
    finally:
        c.close()


def raw_post(d, body, chunked, piece):
    """The same over a bare socket, reading the answer even when the server stops reading (a
    413 from the Content-Length alone comes before the body is sent)."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=60)
    try:
        head = "POST %s HTTP/1.1\r\nHost: x\r\n" % PATH
        head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else \
            "Content-Length: %d\r\n\r\n" % len(body)
        s.sendall(head.encode())
        try:
            if chunked:
                for p in chunks(body, piece):
                    s.sendall(b"%x\r\n" % len(p) + p + b"\r\n")
                s.sendall(b"0\r\n\r\n")
            else:
                s.sendall(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        out = b""
        while True:
            try:
                b = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not b:
                break
            out += b
        m = re.match(rb"HTTP/1\.[01] (\d+)", out)
        code = re.search(rb'"code"\s*:\s*"([a-z_]+)"', out)
        return (int(m.group(1)) if m else None), (code.group(1).decode() if code else None)
    finally:
        s.close()


def test_exact_body_limit():
    d = Daemon("--max-body", str(MAX_BODY), "--memory-budget", "1G")
    try:
        st, _, body = d.req("GET", "/v1/info")
        check("/v1/info says max_body %d" % MAX_BODY,
              st == 200 and json.loads(body)["limits"]["max_body"] == MAX_BODY, body[:200])
        exact, over = png_of_size(MAX_BODY), png_of_size(MAX_BODY + 1)
        for mode, chunked in (("Content-Length", False), ("chunked", True)):
            st, what = post(d, exact, chunked)
            check("a %s body of exactly --max-body (%d bytes) is rendered" % (mode, MAX_BODY),
                  st == 200 and what == "image/png", (st, what))
            st, what = post(d, over, chunked)
            check("a %s body of --max-body + 1 bytes is refused 413 body_too_large" % mode,
                  st == 413 and what == "body_too_large", (st, what))
        # chunked: the byte past the limit alone in the last chunk, and a body that reaches
        # the limit in one chunk
        st, what = post(d, over, True, piece=MAX_BODY)
        check("chunked: --max-body bytes, then one byte more in its own chunk: 413",
              st == 413 and what == "body_too_large", (st, what))
        st, what = post(d, exact, True, piece=MAX_BODY)
        check("chunked: --max-body bytes in one chunk: rendered", st == 200, (st, what))
        st, what = post(d, exact, True, piece=1000)
        check("chunked: --max-body bytes in chunks of 1000: rendered", st == 200, (st, what))
        st, _, _ = d.req("GET", "/healthz")
        check("the daemon still answers", st == 200, st)
    finally:
        d.stop("limits daemon")


def main():
    H.run_script([test_exact_body_limit], "LIMITS_ONLY", need_daemon=True)


if __name__ == "__main__":
    main()
