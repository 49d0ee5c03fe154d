"""`make install DESTDIR=... PREFIX=...` (run by test_install.sh): the tree it lays out, the
units' ExecStart= under that prefix, the generated files equal to what the installed binary says
(--help, --help=env, --print-openapi and the running daemon's /openapi.json), the example
environment file accepted as it stands and with every line uncommented, a real start of the
installed fftbloomd on llvmpipe answering /healthz and /readyz, libfftbloom's files (its
examples run against a staged install in tests/lib/test_examples.sh), and `make uninstall`."""
import json
import os
import re
import stat
import subprocess
import sys

from deploylib import (BUILD, ROOT, TMP, Daemon, check, check_config, clean_env, env_names,
                       finish)

UNITS = ["fftbloomd.service", "fftbloomd.socket", "fftbloomd@.service"]


def make(*args):
    r = subprocess.run(["make", "-s", "BUILD=%s" % BUILD] + list(args), cwd=ROOT,
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def files_under(d):
    out = set()
    for dp, _, fs in os.walk(d):
        for f in fs:
            out.add(os.path.relpath(os.path.join(dp, f), d))
    return out


def check_tree(dest, prefix):
    p = prefix.lstrip("/")
    want = {
        "%s/bin/fftbloomd" % p: 0o755, "%s/bin/fftbloom" % p: 0o755,
        "%s/share/fftbloomd/openapi.json" % p: 0o644, "%s/share/fftbloomd/fftbloomd.env" % p: 0o644,
        "%s/share/doc/fftbloom/fftbloomd.txt" % p: 0o644,
        "%s/share/doc/fftbloom/fftbloom.txt" % p: 0o644,
        "%s/share/doc/fftbloom/README.md" % p: 0o644,
    }
    # the documents README.md links to, with their pictures, beside it
    for f in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if f.endswith((".md", ".png", ".jpg")):
            want["%s/share/doc/fftbloom/docs/%s" % (p, f)] = 0o644
    for u in UNITS:
        want["%s/lib/systemd/system/%s" % (p, u)] = 0o644
    # libfftbloom: header, libraries (the SONAME links resolve to the 0755 file), pkg-config,
    # the Python module where Debian's python3 looks under that prefix
    pydir = "%s/lib/python3/dist-packages" % p if prefix == "/usr" else \
        "%s/lib/python%d.%d/dist-packages" % ((p,) + sys.version_info[:2])
    want.update({"%s/include/fftbloom.h" % p: 0o644, "%s/lib/libfftbloom.a" % p: 0o644,
                 "%s/lib/libfftbloom.so.0.1.0" % p: 0o755, "%s/lib/libfftbloom.so.0" % p: 0o755,
                 "%s/lib/libfftbloom.so" % p: 0o755, "%s/lib/pkgconfig/fftbloom.pc" % p: 0o644,
                 "%s/fftbloom/__init__.py" % pydir: 0o644, "%s/fftbloom/_libpath.py" % pydir: 0o644})
    got = files_under(dest)
    check("%s: exactly the expected files" % prefix, got == set(want),
          "missing %s, extra %s" % (sorted(set(want) - got), sorted(got - set(want))))
    modes = {f: stat.S_IMODE(os.stat(os.path.join(dest, f)).st_mode) for f in want if f in got}
    bad = {f: oct(m) for f, m in modes.items() if m != want[f]}
    check("%s: file modes (binaries 0755, the rest 0644)" % prefix, not bad, bad)
    # units: ExecStart= is the installed binary, nothing points at another prefix
    for u in UNITS:
        text = open(os.path.join(dest, p, "lib/systemd/system", u)).read()
        execs = re.findall(r"^ExecStart=(\S+)", text, re.M)
        if u.endswith(".socket"):
            check("%s: %s starts nothing itself" % (prefix, u), not execs, execs)
            continue
        check("%s: %s ExecStart= is %s/bin/fftbloomd" % (prefix, u, prefix),
              execs == ["%s/bin/fftbloomd" % prefix], execs)
        if prefix != "/usr/local":
            check("%s: %s names no /usr/local path" % (prefix, u), "/usr/local" not in text)
        check("%s: %s has no unexpanded $(PREFIX)" % (prefix, u), "$(PREFIX)" not in text)


def main():
    dest = os.path.join(TMP, "root")
    rc, out = make("install", "DESTDIR=%s" % dest, "PREFIX=/usr")
    if not check("make install DESTDIR=... PREFIX=/usr", rc == 0, out[-2000:]):
        finish()
    check_tree(dest, "/usr")
    bindir = os.path.join(dest, "usr/bin")
    fftbloomd = os.path.join(bindir, "fftbloomd")
    share = os.path.join(dest, "usr/share/fftbloomd")
    doc = os.path.join(dest, "usr/share/doc/fftbloom")

    # the generated files are what the installed binaries say
    r = subprocess.run([fftbloomd, "--help"], capture_output=True, text=True, env=clean_env())
    check("installed fftbloomd --help exits 0", r.returncode == 0, r.stderr)
    check("fftbloomd.txt is its --help", open(os.path.join(doc, "fftbloomd.txt")).read() == r.stdout)
    r = subprocess.run([os.path.join(bindir, "fftbloom"), "--help"], capture_output=True,
                       text=True, env=clean_env())
    ftxt = open(os.path.join(doc, "fftbloom.txt")).read()
    subs = re.findall(r"^  ([a-z]+) ", r.stdout, re.M)
    check("fftbloom.txt is its --help and every subcommand's (%s)" % ",".join(subs),
          ftxt.startswith(r.stdout) and subs and
          all("== fftbloom %s --help" % s in ftxt for s in subs))
    r = subprocess.run([fftbloomd, "--help=env"], capture_output=True, text=True, env=clean_env())
    envfile = open(os.path.join(share, "fftbloomd.env")).read()
    check("fftbloomd.env is its --help=env", envfile == r.stdout)
    listed = set(re.findall(r"^#(FFTBLOOM_[A-Z0-9_]+)=", envfile, re.M))
    check("fftbloomd.env lists every variable of the option table (%d)" % len(env_names()),
          listed == set(env_names()), set(env_names()) ^ listed)
    # as shipped (all commented) and with every line uncommented (each at its default)
    rc, _, err = check_config(env={})
    check("the example environment as shipped is a valid configuration", rc == 0, err)
    defaults = dict(l[1:].split("=", 1) for l in envfile.splitlines() if l.startswith("#FFTBLOOM_"))
    rc, conf, err = check_config(env=defaults, daemon=fftbloomd)
    check("every variable uncommented at its default is accepted", rc == 0, err)

    r = subprocess.run([fftbloomd, "--print-openapi"], capture_output=True, text=True,
                       env=clean_env())
    installed_api = json.load(open(os.path.join(share, "openapi.json")))
    check("openapi.json is its --print-openapi", json.loads(r.stdout) == installed_api)

    # a real start of the installed tree (llvmpipe here), as systemd would start it
    cache = os.path.join(TMP, "cache")  # as CacheDirectory= makes it; the daemon adds programs/
    os.makedirs(cache)
    # (no FFT wisdom file: measuring its shapes would make the warm-up minutes long under the
    # sanitizers)
    d = Daemon([fftbloomd], env={"FFTBLOOM_PORT": "0", "FFTBLOOM_WARM_SIZES": "64x48",
                                 "FFTBLOOM_PROGRAM_CACHE": os.path.join(cache, "programs")},
               name="installed")
    try:
        st, _, body = d.req("GET", "/healthz")
        check("installed fftbloomd answers /healthz", st == 200 and json.loads(body)["status"] == "ok",
              (st, body))
        ok = d.wait_log(r"ready: 1 GPU thread", 60)
        st, _, body = d.req("GET", "/readyz")
        check("installed fftbloomd is ready after its warm-up", ok and st == 200, (st, body))
        st, _, body = d.req("GET", "/openapi.json")
        check("the running daemon serves the installed openapi.json",
              st == 200 and json.loads(body) == installed_api)
        check("the program cache was written under FFTBLOOM_PROGRAM_CACHE",
              os.path.isdir(os.path.join(cache, "programs")) and
              len(os.listdir(os.path.join(cache, "programs"))) > 0)
    finally:
        rc = d.stop()
    check("installed fftbloomd exits 0 on SIGTERM", rc == 0, (rc, d.log()[-2000:]))

    rc, out = make("uninstall", "DESTDIR=%s" % dest, "PREFIX=/usr")
    left = files_under(dest)
    check("make uninstall removes every installed file", rc == 0 and not left, (out, left))

    # the default prefix
    dest2 = os.path.join(TMP, "root2")
    rc, out = make("install", "DESTDIR=%s" % dest2)
    check("make install DESTDIR=... (default PREFIX)", rc == 0, out[-2000:])
    if rc == 0:
        check_tree(dest2, "/usr/local")
    finish()


main()
