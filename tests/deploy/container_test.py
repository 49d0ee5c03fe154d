"""The Dockerfile and deploy/compose.yaml without a Docker engine (run by test_container.sh).
What runs: the build stage's steps in a scratch folder, from exactly the build context that
.dockerignore leaves (the files COPYed before `make deps` are all it needs; `make deps`, `make`
and `make install` run as written, CI=1 included); its apt-get lines are checked, not run (each
package must be a Debian 12 package installed here). The runtime stage is checked against the
staged tree: every shared library the staged fftbloomd links and loads while serving on
llvmpipe (from /proc/PID/maps) comes from a package the stage installs, one they depend on, or
Debian's required base; it starts with the image's ENV (and the NVIDIA EGL vendor file beside
Mesa's), and the HEALTHCHECK command, run as written with that environment, finds it over HTTP
and over HTTPS and fails once it is gone. What does not run: a Docker engine (no image is built,
no layer cache, no NVIDIA container toolkit), so `docker build`/`docker run` themselves are not
exercised here."""
import json
import os
import re
import shlex
import shutil
import subprocess

import yaml

from deploylib import (BUILD, ROOT, TMP, Daemon, check, check_flags_and_env, clean_env, default,
                       dockerfile_env, finish, free_port, modes, parse_dockerfile)

DOCKERFILE = os.path.join(ROOT, "Dockerfile")


def ignore_patterns():
    pats = []
    for line in open(os.path.join(ROOT, ".dockerignore")):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        neg = s.startswith("!")
        pats.append((neg, re.compile(glob_re(s.lstrip("!").strip("/")))))
    return pats


def glob_re(p):
    """Docker's .dockerignore pattern (Go filepath.Match plus **) as a regex on a path."""
    out, i = "", 0
    while i < len(p):
        c = p[i]
        if p.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if p.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    return "^" + out + "$"


def ignored(rel, pats):
    """A path is left out when the last pattern matching it or one of its parents excludes."""
    parts = rel.split("/")
    out = False
    for neg, rx in pats:
        if any(rx.match("/".join(parts[:k])) for k in range(1, len(parts) + 1)):
            out = not neg
    return out


def build_context():
    pats = ignore_patterns()
    files = []
    for dp, dns, fs in os.walk(ROOT):
        rel_dir = os.path.relpath(dp, ROOT)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dns[:] = [d for d in dns if not ignored(rel_dir + d, pats)]
        for f in fs:
            if not ignored(rel_dir + f, pats):
                files.append(rel_dir + f)
    return sorted(files)


def copy_into(context, srcs, dest_dir, root):
    """COPY srcs... dest (context files; a directory source copies its content)."""
    os.makedirs(dest_dir, exist_ok=True)
    for src in srcs:
        src = src.strip("/")
        chosen = [f for f in context if src in (".", "") or f == src or f.startswith(src + "/")]
        if not chosen:
            return "COPY %s: not in the build context" % src
        for f in chosen:
            if src in (".", ""):
                rel = f
            elif f == src:
                rel = os.path.basename(f)
            else:
                rel = f[len(src) + 1:]
            dst = os.path.join(dest_dir, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, f), dst)
    return None


def installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return "install ok installed" in r.stdout


def split_commands(run):
    return [c.strip() for c in run.split("&&") if c.strip()]


def apt_install_packages(cmd):
    toks = shlex.split(cmd)
    if "apt-get" not in toks or "install" not in toks:
        return None
    i = toks.index("install")
    return [t for t in toks[i + 1:] if not t.startswith("-")]


def mapped(path, root):
    return os.path.join(root, path.lstrip("/"))


def emulate(instrs, root):
    """Runs the build stage into root. Returns (ok, the stage's state)."""
    context = build_context()
    check("the build context leaves out build/ and .git (%d files)" % len(context),
          not any(f.startswith(("build/", ".git/")) or f == ".git" for f in context))
    cwd = root
    for stage, ins, rest, flags in instrs:
        if stage != 0:
            continue
        if ins == "FROM":
            image = rest.split()[0]
            release = open("/etc/debian_version").read().strip()
            check("build stage FROM %s matches this machine (Debian %s)" % (image, release),
                  image in ("debian:12-slim", "debian:12", "debian:bookworm-slim",
                            "debian:bookworm") and release.startswith("12"))
        elif ins == "WORKDIR":
            cwd = mapped(rest, root)
            os.makedirs(cwd, exist_ok=True)
        elif ins == "COPY":
            srcs = shlex.split(rest)
            dest = srcs.pop()
            dest_dir = mapped(dest, root) if dest.startswith("/") else os.path.join(cwd, dest)
            err = copy_into(context, srcs, dest_dir, root)
            if not check("COPY %s" % rest, err is None, err):
                return False
        elif ins == "RUN":
            for cmd in split_commands(rest):
                pkgs = apt_install_packages(cmd)
                if cmd == "apt-get update" or cmd == "rm -rf /var/lib/apt/lists/*":
                    print("     not run (the image's package lists): %s" % cmd)
                    continue
                if pkgs is not None:
                    missing = [p for p in pkgs if not installed(p)]
                    check("build stage apt-get install %s: Debian 12 packages (installed here)"
                          % " ".join(pkgs), not missing, missing)
                    continue
                if re.search(r"(^|\s)/", cmd):
                    check("RUN %s: no absolute path (it would act on this machine)" % cmd, False)
                    return False
                print("     running in %s: %s" % (os.path.relpath(cwd, root), cmd))
                r = subprocess.run(["sh", "-c", cmd], cwd=cwd, capture_output=True, text=True,
                                   env=clean_env({"DEBIAN_FRONTEND": "noninteractive"}))
                if not check("RUN %s" % cmd, r.returncode == 0, (r.stdout + r.stderr)[-3000:]):
                    return False
    return True


def so_packages(paths):
    """The package of each library (one dpkg -S for all of them; with merged /usr, dpkg may
    know a file by its /lib/... name)."""
    cands = {}
    for p in paths:
        real = os.path.realpath(p)
        cands[p] = [p, real, re.sub(r"^/usr/lib/", "/lib/", real), re.sub(r"^/lib/", "/usr/lib/", p)]
    r = subprocess.run(["dpkg", "-S"] + sorted({c for cs in cands.values() for c in cs}),
                       capture_output=True, text=True)
    owner = {}
    for line in r.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        for one in pkg.split(", "):
            owner.setdefault(path.strip(), one.split(":")[0].strip())
    return {p: next((owner[c] for c in cs if c in owner), None) for p, cs in cands.items()}


def closure(pkgs):
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances",
                        "--installed"] + pkgs, capture_output=True, text=True)
    out = set(pkgs)
    for line in r.stdout.splitlines():
        m = re.match(r"^\s*\|?(?:Pre)?Depends: <?([^>\s:]+)", line)
        if m:
            out.add(m.group(1))
        elif line and not line.startswith(" "):
            out.add(line.strip().split(":")[0])
    return out


def base_packages():
    r = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Priority} ${Essential}\n"],
                       capture_output=True, text=True)
    out = set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 2 and (f[1] == "required" or (len(f) > 2 and f[2] == "yes")):
            out.add(f[0])
    return out


def runtime_stage(instrs, root):
    env = dockerfile_env(instrs, 1)
    stage = [(ins, rest, flags) for st, ins, rest, flags in instrs if st == 1]
    first = {}
    for ins, rest, flags in stage:
        first.setdefault(ins, (rest, flags))
    check("runtime stage FROM debian:12-slim", first.get("FROM", ("",))[0] == "debian:12-slim")
    # packages, user, volume folder
    pkgs, user, uid, mkdirs = [], None, None, {}
    for ins, rest, _ in stage:
        if ins != "RUN":
            continue
        for cmd in split_commands(rest):
            p = apt_install_packages(cmd)
            if p is not None:
                pkgs += p
            toks = shlex.split(cmd)
            if toks and toks[0] == "useradd":
                user = toks[-1]
                if "--uid" in toks:
                    uid = toks[toks.index("--uid") + 1]
                check("useradd makes a system user without a login shell",
                      "--system" in toks and "/usr/sbin/nologin" in toks, toks)
            if toks[:2] == ["install", "-d"]:
                owner = toks[toks.index("-o") + 1] if "-o" in toks else "root"
                mkdirs[toks[-1]] = owner
    missing = [p for p in pkgs if not installed(p)]
    check("runtime apt-get install: Debian 12 packages (installed here): %s" % " ".join(pkgs),
          pkgs and not missing, missing)
    check("no -dev package in the runtime stage", not [p for p in pkgs if p.endswith("-dev")])
    u = first.get("USER", ("",))[0]
    check("USER %s is the stage's own user (uid %s), not root" % (u, uid),
          uid and u.split(":")[0] in (uid, user) and u.split(":")[0] not in ("0", "root"))
    vol = json.loads(first["VOLUME"][0]) if first.get("VOLUME", ("",))[0].startswith("[") \
        else first.get("VOLUME", ("",))[0]
    vol = vol[0] if isinstance(vol, list) else vol
    pc, wi = env.get("FFTBLOOM_PROGRAM_CACHE", ""), env.get("FFTBLOOM_FFT_WISDOM", "")
    dc = env.get("FFTBLOOM_DRIVER_CACHE", "")
    check("VOLUME %s holds the program cache, the FFT wisdom and the driver's cache (%s, %s, %s)"
          % (vol, pc, wi, dc), vol and os.path.dirname(pc) == vol and os.path.dirname(wi) == vol
          and os.path.dirname(dc) == vol)
    check("the volume folder is made and owned by the user (a new named volume takes its owner)",
          mkdirs.get(vol) == user, mkdirs)
    # What the stage adds to the base image, laid out in a folder of its own.
    staged = os.path.join(TMP, "runtime")
    for ins, rest, flags in stage:
        if ins == "COPY" and flags.get("from") == "build":
            src, dest = shlex.split(rest)
            ok = os.path.isfile(os.path.join(mapped(src, root), "usr/local/bin/fftbloomd"))
            check("COPY --from=build %s %s: the build stage made it" % (src, dest), ok)
            if ok:
                shutil.copytree(mapped(src, root), mapped(dest, staged), symlinks=True,
                                dirs_exist_ok=True)
        elif ins == "COPY":
            src, dest = shlex.split(rest)
            doc = json.load(open(os.path.join(ROOT, src)))
            check("%s -> %s: the glvnd vendor file of NVIDIA's EGL" % (src, dest),
                  dest.startswith("/usr/share/glvnd/egl_vendor.d/") and
                  doc["ICD"]["library_path"] == "libEGL_nvidia.so.0")
            os.makedirs(os.path.dirname(mapped(dest, staged)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, src), mapped(dest, staged))
    check("NVIDIA_VISIBLE_DEVICES=all and NVIDIA_DRIVER_CAPABILITIES with graphics (EGL) and "
          "compute", env.get("NVIDIA_VISIBLE_DEVICES") == "all" and
          {"graphics", "compute"} <= set(env.get("NVIDIA_DRIVER_CAPABILITIES", "").split(",")),
          env)
    expose = first.get("EXPOSE", ("",))[0]
    check("EXPOSE %s is FFTBLOOM_PORT" % expose, expose == env.get("FFTBLOOM_PORT"))
    check("STOPSIGNAL SIGTERM", first.get("STOPSIGNAL", ("",))[0] == "SIGTERM")
    entry = json.loads(first["ENTRYPOINT"][0])
    check("ENTRYPOINT %s is in the staged PATH" % entry,
          staged and os.path.isfile(os.path.join(staged, "usr/local/bin", entry[0])))
    hc_rest, hc_flags = first["HEALTHCHECK"]
    hc = json.loads(hc_rest.split("CMD", 1)[1].strip())
    check("HEALTHCHECK runs fftbloomd --health-check (a mode the binary has)",
          hc[:2] == ["fftbloomd", "--health-check"] and "health-check" in modes(), hc)
    sp = int(re.match(r"(\d+)s", hc_flags.get("start-period", "0s")).group(1))
    to = int(re.match(r"(\d+)s", hc_flags.get("timeout", "0s")).group(1))
    check("HEALTHCHECK start-period %d s allows a warm-up, timeout %d s > the checker's 5 s" %
          (sp, to), sp >= 60 and to > 5)
    stage_bin = os.path.join(staged, "usr/local/bin/fftbloomd")
    check_flags_and_env("Dockerfile ENTRYPOINT and ENV", entry[1:], env)
    return env, pkgs, staged, stage_bin, hc


def run_staged(env, pkgs, staged, stage_bin, hc):
    """The staged fftbloomd with the image's environment: its libraries, the health check."""
    vol = os.path.join(TMP, "volume")
    os.makedirs(vol)
    vendor = os.path.join(TMP, "egl_vendor.d")
    os.makedirs(vendor)
    shutil.copy(os.path.join(staged, "usr/share/glvnd/egl_vendor.d/10_nvidia.json"), vendor)
    for f in os.listdir("/usr/share/glvnd/egl_vendor.d"):
        shutil.copy(os.path.join("/usr/share/glvnd/egl_vendor.d", f), vendor)
    e = dict(env)
    port = free_port()
    e["FFTBLOOM_PORT"] = str(port)
    for k in ("FFTBLOOM_PROGRAM_CACHE", "FFTBLOOM_FFT_WISDOM", "FFTBLOOM_DRIVER_CACHE"):
        e[k] = os.path.join(vol, os.path.basename(e[k]))
    e["__EGL_VENDOR_LIBRARY_DIRS"] = vendor
    path = os.path.join(staged, "usr/local/bin") + ":" + os.environ.get("PATH", "")
    e["PATH"] = path
    d = Daemon([stage_bin], env=e, name="staged")
    try:
        check("the staged fftbloomd starts with the image's ENV (NVIDIA's vendor file beside "
              "Mesa's: it falls back to llvmpipe)", d.port == port and
              d.wait_log(r"ready: 1 GPU thread", 60), d.log()[-1500:])
        check("it listens on FFTBLOOM_LISTEN %s" % env["FFTBLOOM_LISTEN"],
              "listening on http://%s:%d" % (env["FFTBLOOM_LISTEN"], port) in d.log())
        jpeg = subprocess.run(["convert", "-size", "64x48", "plasma:", "jpeg:-"],
                              capture_output=True).stdout
        st, _, body = d.req("POST", "/v1/bloom?kernel_preset=gaussian:sigma=2", body=jpeg)
        check("a JPEG bloom answers 200", st == 200 and body[:2] == b"\xff\xd8", st)
        maps = open("/proc/%d/maps" % d.p.pid).read()
        libs = set(re.findall(r"(/\S+\.so[.0-9]*)$", maps, re.M))
        r = subprocess.run(["ldd", stage_bin], capture_output=True, text=True)
        libs |= set(re.findall(r"=> (/\S+)", r.stdout))
        owners = so_packages(libs)
        allowed = closure(pkgs) | base_packages()
        # NVIDIA's driver libraries come from the host, mounted by the container toolkit
        nvidia = {l for l in owners if re.search(r"/lib(EGL_nvidia|nvidia-|cuda)", l)}
        if nvidia:
            print("     from the NVIDIA driver (the toolkit mounts them): %s" % " ".join(
                sorted(os.path.basename(l) for l in nvidia)))
        # `make sanitize` builds link the compiler's sanitizer runtimes, which no image holds: a
        # build that links libasan (and only such a build) may load them
        san = set()
        if any(re.search(r"/libasan\.so", l) for l in libs):
            san = {l for l in owners if re.search(r"/lib(asan|ubsan|lsan)\.so", l)}
            print("     a sanitizer build: its runtimes are not in the image: %s" % " ".join(
                sorted(os.path.basename(l) for l in san)))
        stray = {l: p for l, p in owners.items()
                 if p not in allowed and l not in nvidia and l not in san}
        print("     %d libraries loaded or linked, from %d packages: %s" %
              (len(owners), len(set(owners.values())), " ".join(sorted(set(
                  p for p in owners.values() if p)))))
        check("every library it links and loads comes from the runtime stage's packages, "
              "their dependencies or the base image", not stray, stray)
        r = subprocess.run(hc, capture_output=True, text=True, env=clean_env(e))
        out = r.stdout + r.stderr
        check("HEALTHCHECK, as written with the image's environment, exits 0: %s" % out.strip(),
              r.returncode == 0 and "http://127.0.0.1:%d/healthz answered 200" % port in out)
        check("the program cache went to the volume",
              os.path.isdir(os.path.join(vol, "programs")) and
              os.listdir(os.path.join(vol, "programs")))
    finally:
        rc = d.stop()
    check("the staged fftbloomd exits 0 on SIGTERM (STOPSIGNAL)", rc == 0, rc)
    r = subprocess.run(hc, capture_output=True, text=True, env=clean_env(e))
    check("HEALTHCHECK fails once the daemon is gone", r.returncode == 1, r.stdout + r.stderr)

    # HTTPS: the same health check follows FFTBLOOM_TLS_CERT
    cert, key = os.path.join(TMP, "cert.pem"), os.path.join(TMP, "key.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "2", "-subj", "/CN=localhost"], capture_output=True)
    e2 = dict(e, FFTBLOOM_TLS_CERT=cert, FFTBLOOM_TLS_KEY=key, FFTBLOOM_PORT=str(free_port()))
    d = Daemon([stage_bin], env=e2, name="staged-tls")
    try:
        r = subprocess.run(hc, capture_output=True, text=True, env=clean_env(e2))
        out = r.stdout + r.stderr
        check("with FFTBLOOM_TLS_CERT the health check speaks HTTPS: %s" % out.strip(),
              r.returncode == 0 and "https://127.0.0.1:%s/healthz answered 200" %
              e2["FFTBLOOM_PORT"] in out)
    finally:
        rc = d.stop()
    check("exits 0", rc == 0, rc)


def compose(env_image):
    doc = yaml.safe_load(open(os.path.join(ROOT, "deploy/compose.yaml")))
    svc = doc["services"]["fftbloomd"]
    b = svc["build"]
    ctx = os.path.normpath(os.path.join(ROOT, "deploy", b["context"]))
    check("compose: builds the repository's Dockerfile", ctx == ROOT and
          os.path.isfile(os.path.join(ctx, b.get("dockerfile", "Dockerfile"))), b)
    env = dict(env_image)
    env.update({k: str(v) for k, v in (svc.get("environment") or {}).items()})
    check_flags_and_env("compose", [str(a) for a in (svc.get("command") or [])], env)
    ports = [str(p).split(":")[-1] for p in svc.get("ports", [])]
    check("compose: the published container port is FFTBLOOM_PORT (%s)" % ports,
          ports == [env["FFTBLOOM_PORT"]])
    drain = float(env.get("FFTBLOOM_DRAIN_TIMEOUT", default("drain-timeout")))
    grace = int(re.match(r"(\d+)s$", str(svc.get("stop_grace_period", "10s"))).group(1))
    check("compose: stop_grace_period %d s covers the drain (%g s) plus a margin" % (grace, drain),
          grace >= drain + 5)
    check("compose: stop_signal SIGTERM", svc.get("stop_signal", "SIGTERM") == "SIGTERM")
    dev = svc["deploy"]["resources"]["reservations"]["devices"]
    check("compose: reserves an NVIDIA GPU (driver nvidia, capabilities [gpu]; the image's "
          "NVIDIA_DRIVER_CAPABILITIES then apply)",
          dev and dev[0]["driver"] == "nvidia" and dev[0]["capabilities"] == ["gpu"], dev)
    mounts = [v.split(":") for v in svc.get("volumes", [])]
    check("compose: a named volume on the image's cache folder",
          any(m[1] == os.path.dirname(env["FFTBLOOM_PROGRAM_CACHE"]) and m[0] in
              (doc.get("volumes") or {}) for m in mounts), mounts)


def main():
    instrs = parse_dockerfile(DOCKERFILE)
    root = os.path.join(TMP, "image")
    os.makedirs(root)
    if not emulate(instrs, root):
        finish()
    env, pkgs, staged, stage_bin, hc = runtime_stage(instrs, root)
    run_staged(env, pkgs, staged, stage_bin, hc)
    compose(env)
    finish()


main()
