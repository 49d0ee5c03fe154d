"""Shared pieces of the deployment tests (tests/deploy/test_*.sh): pass/fail counting, the
daemon's own option table (`fftbloomd --help=json`) and configuration check (`--check-config`),
starting the real daemon on llvmpipe and talking HTTP to it, and a Dockerfile parser. Every
deployment file is checked against what the built binary says, so neither can drift."""
import http.client
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.path.join(ROOT, sys.argv[1] if len(sys.argv) > 1 else "build"))
DAEMON = os.path.join(BUILD, "fftbloomd")
TMP = tempfile.mkdtemp(prefix="fftbloom-deploy-")
PASSED = 0
FAILED = 0
LEAK_EXIT = 23  # LeakSanitizer's exit status in sanitizer builds (make sanitize)
LSAN_SUPP = os.path.join(ROOT, "tests", "daemon", "lsan.supp")


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("ok   %s" % name)
    else:
        FAILED += 1
        print("FAIL %s %s" % (name, detail))
    sys.stdout.flush()
    return ok


def finish():
    print("SCRIPT: %d passed, %d failed" % (PASSED, FAILED))
    sys.exit(1 if FAILED else 0)


def clean_env(extra=None):
    """This process's environment without FFTBLOOM_* (but the engine the test script pinned) and
    the systemd protocol variables, plus extra: what a deployment file sets is then all the
    daemon sees."""
    drop = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
            "LISTEN_FDNAMES", "CREDENTIALS_DIRECTORY")
    e = {k: v for k, v in os.environ.items()
         if (not k.startswith("FFTBLOOM_") or k == "FFTBLOOM_ENGINE") and k not in drop}
    e.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    e.setdefault("LSAN_OPTIONS", "exitcode=%d:suppressions=%s" % (LEAK_EXIT, LSAN_SUPP))
    e.update(extra or {})
    return e


def sanitizer_verdict(log, rc):
    """A sanitizer build's exit status made comparable: rc 0 when LeakSanitizer's only reports
    are blocks allocated wholly inside the GL driver unloaded at exit (frames "<unknown
    module>", as tests/daemon/http_test.py reasons), "sanitizer" when ASan or UBSan reported
    anything or a leak has a stack in our code."""
    if "ERROR: AddressSanitizer" in log or "runtime error:" in log:
        return "sanitizer"
    if rc != LEAK_EXIT:
        return rc
    blocks = re.findall(r"(?:Direct|Indirect) leak of .*?\n((?:\s+#\d+ .*\n)+)", log)
    if not blocks:
        return "sanitizer"
    for b in blocks:
        for f in [l.strip() for l in b.strip().splitlines()][1:]:
            if "(<unknown module>)" not in f and "libc.so" not in f and "pthread_once" not in f \
                    and "__interceptor_" not in f and "libasan.so" not in f:
                return "sanitizer"
    return 0


_HELP = None


def help_json(daemon=None):
    """The option table and modes as the binary prints them (--help=json)."""
    global _HELP
    if _HELP is None or daemon:
        out = subprocess.run([daemon or DAEMON, "--help=json"], capture_output=True, text=True,
                             env=clean_env(), check=True).stdout
        doc = json.loads(out)
        if daemon:
            return doc
        _HELP = doc
    return _HELP


def options():
    return {o["name"]: o for o in help_json()["options"]}


def env_names():
    return {o["env"]: o for o in help_json()["options"] if o["env"]}


def modes():
    return {m["name"] for m in help_json()["modes"]}


def default(name):
    return options()[name]["default"]


def check_config(args=(), env=None, daemon=None):
    """Runs `fftbloomd --check-config ARGS` with exactly env's FFTBLOOM_* variables. Returns
    (exit status, configuration dict or None, stderr)."""
    r = subprocess.run([daemon or DAEMON, "--check-config"] + list(args), capture_output=True,
                       text=True, env=clean_env(env))
    conf = None
    if r.returncode == 0:
        conf = json.loads(r.stdout)["configuration"]
    return r.returncode, conf, r.stderr.strip()


def flags_of(argv):
    """The option names (--name or --name=value) in an argument list."""
    out = []
    for a in argv:
        if a.startswith("--"):
            out.append(a[2:].split("=", 1)[0])
    return out


def check_flags_and_env(where, argv, env):
    """Every flag in argv and every FFTBLOOM_* name in env is one of the daemon's, and the
    daemon accepts their values (--check-config). Returns the configuration."""
    opts, envs = options(), env_names()
    bad_flags = [f for f in flags_of(argv) if f not in opts]
    check("%s: flags %s are the daemon's" % (where, flags_of(argv)), not bad_flags, bad_flags)
    fb = {k: v for k, v in env.items() if k.startswith("FFTBLOOM_")}
    bad_env = [k for k in fb if k not in envs]
    check("%s: variables %s are the daemon's" % (where, sorted(fb)), not bad_env, bad_env)
    rc, conf, err = check_config(argv, fb)
    check("%s: the daemon accepts the configuration" % where, rc == 0, err)
    return conf


def openapi_paths():
    out = subprocess.run([DAEMON, "--print-openapi"], capture_output=True, text=True,
                         env=clean_env(), check=True).stdout
    return set(json.loads(out)["paths"])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Daemon:
    """The daemon (or another command) started with exactly the given environment; its log in
    a file. port: read from the "listening on" line unless given."""

    def __init__(self, argv, env=None, wait_listen=True, pass_fds=(), preexec_fn=None,
                 close_fds=True, name="daemon"):
        self.log_path = os.path.join(TMP, "%s-%d.log" % (name, int(time.time() * 1e6)))
        self.logf = open(self.log_path, "wb")
        self.p = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT,
                                  env=clean_env(env), pass_fds=pass_fds, preexec_fn=preexec_fn,
                                  close_fds=close_fds)
        self.port = None
        self.scheme = "http"
        self.endpoint = None  # as the daemon logs it: "http://localhost:8080"
        if wait_listen:
            self.wait_log(r"listening on (https?)://[^ ]*:(\d+)", 60)
            m = re.search(r"listening on ((https?)://[^ ]*:(\d+))", self.log())
            if not m:
                raise RuntimeError("daemon did not start: %s" % self.log()[-3000:])
            self.endpoint, self.scheme, self.port = m.group(1), m.group(2), int(m.group(3))

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_log(self, pattern, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if re.search(pattern, self.log()):
                return True
            if self.p.poll() is not None:
                return bool(re.search(pattern, self.log()))
            time.sleep(0.02)
        return False

    def req(self, method, path, body=None, headers=None, timeout=60, port=None, host="127.0.0.1"):
        if self.scheme == "https":
            import ssl
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            c = http.client.HTTPSConnection(host, port or self.port, timeout=timeout, context=ctx)
        else:
            c = http.client.HTTPConnection(host, port or self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def stop(self, timeout=60):
        """SIGTERM; returns the exit status ("timeout" if it had to be killed)."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = "timeout"
        self.logf.close()
        return sanitizer_verdict(self.log(), rc)


def parse_dockerfile(path):
    """Instructions as (stage index, INSTRUCTION, arguments text, {flags}), continuation lines
    joined and comments dropped. JSON-form arguments stay text (json.loads them)."""
    with open(path) as f:
        lines = f.read().split("\n")
    out, stage, cur = [], -1, ""
    for line in lines + [""]:
        s = line.strip()
        if s.startswith("#") and not cur:
            continue
        if s.startswith("#"):
            continue  # a comment inside a continued instruction
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        if cur.strip():
            word, _, rest = cur.strip().partition(" ")
            ins = word.upper()
            flags = {}
            rest = rest.strip()
            while rest.startswith("--"):
                flag, _, rest = rest.partition(" ")
                k, _, v = flag[2:].partition("=")
                flags[k] = v
                rest = rest.strip()
            if ins == "FROM":
                stage += 1
            out.append((stage, ins, rest, flags))
        cur = ""
    return out


def dockerfile_env(instrs, stage):
    """The ENV of a stage: KEY=VALUE pairs (shell-quoted values allowed)."""
    env = {}
    for st, ins, rest, _ in instrs:
        if st == stage and ins == "ENV":
            for tok in shlex.split(rest):
                k, eq, v = tok.partition("=")
                if eq:
                    env[k] = v
    return env
