"""Runs the examples of README.md and docs/*.md (tests/docs/test_examples.sh; docs/README.md,
"Examples that are run", says how to mark them). Prints "SCRIPT: N passed, N failed" last.

Every fenced block in a shell language (sh, bash, shell, console) or python carries one mark in
its info string:

  ```sh run             run it, in order with the document's other blocks
  ```sh norun:WHY       not runnable here (WHY: gpu-host, systemd, docker, kubernetes, root, ...);
                        counted and listed, never run

A run block followed (blank lines only between) by a ```text output block must print that text
(stdout and stderr together, as a terminal shows them). In the expected text a line that is just
"..." stands for any number of lines, and "..." inside a line for any characters on it: the
places where timings, ids, digests and dates go.

Blocks run as a reader runs them from the checkout after `make run`: in a temporary folder that
holds links to every top-level entry of the checkout (build/ being BUILD, docs/examples/ there),
with a daemon started as `make run` starts it. The daemon listens on a free port; every
`localhost:808N` / `127.0.0.1:808N` and `--port 808N` in a block is rewritten to a free port
(8080 to that daemon's), and back in what the block prints. A document's blocks share one folder
(later blocks use files earlier ones made); sh blocks run under `set -e`; processes a block left
in the background are stopped when its document ends.

Also checked: every relative link of those documents names a file inside the repository, the
README stays short, docs/examples stays small, and docs/configuration.md's generated table is what
tools/configuration_md.py makes from the built daemon's option table."""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
# the documents' outputs are the GPU engine's (on llvmpipe without a GPU), as written
os.environ.setdefault("FFTBLOOM_ENGINE", "gpu")
ONLY = sys.argv[2:]  # optional: document paths to run alone (relative to the checkout)
SHELLS = {"sh", "bash", "shell", "console"}
LANGS = SHELLS | {"python"}
BLOCK_TIMEOUT = 180
README_MAX_LINES = 260
EXAMPLES_MAX_BYTES = 1 << 20
PASSED = FAILED = 0


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("ok   %s" % name)
    else:
        FAILED += 1
        print("FAIL %s\n%s" % (name, detail) if detail else "FAIL %s" % name)
    sys.stdout.flush()
    return ok


def documents():
    docs = ["README.md"] + sorted(os.path.relpath(p, ROOT)
                                  for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [d for d in docs if not ONLY or d in ONLY]


def blocks(path):
    """The fenced blocks of a Markdown file: dicts with line (1-based, of the fence), lang,
    words (the info string's other words), text, and adjacent (nothing but blank lines since the
    previous block), so that an output block can be tied to the block before it."""
    out, cur, last_end = [], None, 0
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines, 1):
        m = re.match(r"^(\s*)```(?!`)(.*)$", line)
        if cur is None and m:
            info = m.group(2).split()
            cur = {"line": i, "lang": info[0] if info else "", "words": info[1:], "body": [],
                   "indent": len(m.group(1)),
                   # only blank lines between the previous block's closing fence and this one
                   "adjacent": last_end > 0 and all(not l.strip() for l in lines[last_end:i - 1])}
        elif cur is not None and re.match(r"^\s*```\s*$", line):
            cur["text"] = "\n".join(l[cur["indent"]:] if l[:cur["indent"]].isspace() else l
                                    for l in cur["body"])
            cur["end"] = i
            out.append(cur)
            last_end, cur = i, None
        elif cur is not None:
            cur["body"].append(line)
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_daemon(tmp, env):
    log = os.path.join(tmp, "fftbloomd.log")
    p = subprocess.Popen([os.path.join(BUILD, "fftbloomd"), "--listen", "127.0.0.1", "--port",
                          "0"], stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=env,
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        m = re.search(r"listening on http://[^ ]*:(\d+)", open(log, errors="replace").read())
        if m:
            return p, int(m.group(1)), log
        time.sleep(0.05)
    raise RuntimeError("fftbloomd did not start: " + open(log, errors="replace").read())


class Ports:
    """808N in the documents -> a free port here (8080: the runner's daemon)."""

    def __init__(self, main):
        self.map = {"8080": str(main)}

    def to_real(self, text):
        def sub(m):
            if m.group(2) not in self.map:
                self.map[m.group(2)] = str(free_port())
            return m.group(1) + self.map[m.group(2)]
        return re.sub(r"((?:localhost|127\.0\.0\.1|\[::1\]):|--port[ =])(808\d)\b", sub, text)

    def to_doc(self, text):
        for doc, real in self.map.items():
            text = re.sub(r"(?<=[:= ])%s\b" % real, doc, text)
        return text


def expected_regex(expected):
    parts = []
    for line in expected.rstrip("\n").split("\n"):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.rstrip().split("...")) + r"\n")
    return re.compile("".join(parts), re.S)


def normalise(out):
    return "\n".join(l.rstrip() for l in out.rstrip("\n").split("\n")) + "\n"


def first_difference(expected, actual):
    e, a = expected.rstrip("\n").split("\n"), actual.rstrip("\n").split("\n")
    for i in range(max(len(e), len(a))):
        el = e[i] if i < len(e) else "<end>"
        al = a[i] if i < len(a) else "<end>"
        if el.strip() == "...":
            return "  (after a '...' line; whole output follows)\n" + indent(actual)
        if not re.fullmatch(".*?".join(re.escape(p) for p in el.rstrip().split("...")), al):
            return "  line %d: expected %r\n           got      %r\n  whole output:\n%s" % (
                i + 1, el, al, indent(actual))
    return "  whole output:\n" + indent(actual)


def indent(text, n=40):
    lines = text.rstrip("\n").split("\n")
    more = len(lines) - n
    return "\n".join("    | " + l for l in lines[:n]) + ("\n    | ... %d more lines" % more
                                                           if more > 0 else "")


def setup_folder(tmp):
    for name in os.listdir(ROOT):
        if name in (".git", "build"):
            continue
        os.symlink(os.path.join(ROOT, name), os.path.join(tmp, name))
    os.symlink(BUILD, os.path.join(tmp, "build"))


def stop_group(pgid):
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_document(doc, ports, env, not_run, timings):
    bs = blocks(doc)
    tmp = tempfile.mkdtemp(prefix="fftbloom-docs-")
    setup_folder(tmp)
    groups = []
    try:
        for i, b in enumerate(bs):
            where = "%s:%d" % (doc, b["line"])
            if b["lang"] not in LANGS:
                continue
            marks = [w for w in b["words"] if w == "run" or w.startswith("norun")]
            if not check("%s %s block is marked run or norun:WHY" % (where, b["lang"]),
                         len(marks) == 1 and (marks[0] == "run" or marks[0].startswith("norun:")),
                         "  info string: %r" % " ".join([b["lang"]] + b["words"])):
                continue
            if marks[0] != "run":
                not_run.append((where, marks[0][len("norun:"):]))
                continue
            nxt = bs[i + 1] if i + 1 < len(bs) else None
            expected = None
            if nxt and nxt["adjacent"] and nxt["lang"] == "text" and "output" in nxt["words"]:
                expected = nxt["text"]
            script = ports.to_real(b["text"]) + "\n"
            if b["lang"] == "python":
                path = os.path.join(tmp, "block-%d.py" % b["line"])
                argv = ["/usr/bin/python3", path]
            else:
                path = os.path.join(tmp, "block-%d.sh" % b["line"])
                script = "set -e\n" + script
                argv = ["/bin/bash" if b["lang"] == "bash" else "/bin/sh", path]
            with open(path, "w") as f:
                f.write(script)
            outp = os.path.join(tmp, "block-%d.out" % b["line"])
            t0 = time.time()
            with open(outp, "wb") as out:
                p = subprocess.Popen(argv, cwd=tmp, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, start_new_session=True)
                groups.append(p.pid)
                try:
                    rc = p.wait(timeout=BLOCK_TIMEOUT)
                except subprocess.TimeoutExpired:
                    stop_group(p.pid)
                    rc = "timeout after %d s" % BLOCK_TIMEOUT
            secs = time.time() - t0
            timings.append((secs, where))
            actual = ports.to_doc(open(outp, "rb").read().decode("utf-8", "replace"))
            name = "%s %s block runs%s (%.1f s)" % (where, b["lang"],
                                                   " and prints what is shown" if expected
                                                   is not None else "", secs)
            if rc != 0:
                check(name, False, "  exit status %s; output:\n%s" % (rc, indent(actual)))
            elif expected is not None:
                ok = expected_regex(expected).fullmatch(normalise(actual)) is not None
                check(name, ok, "" if ok else first_difference(expected, normalise(actual)))
            else:
                check(name, True)
    finally:
        for g in groups:
            stop_group(g)
        shutil.rmtree(tmp, ignore_errors=True)


def check_links(doc):
    text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            if target.startswith("http") and not re.match(r"https?://(localhost|127\.0\.0\.1)",
                                                          target):
                bad.append(target + " (outside the repository)")
            continue
        path = os.path.normpath(os.path.join(ROOT, os.path.dirname(doc), target.split("#")[0]))
        if not path.startswith(ROOT + os.sep) or not os.path.exists(path):
            bad.append(target)
    check("%s: every link names a file in the repository" % doc, not bad, "  " + ", ".join(bad))


def main():
    t0 = time.time()
    docs = documents()
    if not ONLY:
        n = len(open(os.path.join(ROOT, "README.md")).read().rstrip("\n").split("\n"))
        check("README.md is %d lines, at most %d" % (n, README_MAX_LINES), n <= README_MAX_LINES)
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(ROOT, "docs/examples/*")))
        check("docs/examples holds %d bytes, under %d" % (size, EXAMPLES_MAX_BYTES),
              size < EXAMPLES_MAX_BYTES)
        r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/configuration_md.py"),
                            "--check", os.path.join(BUILD, "fftbloomd"),
                            os.path.join(ROOT, "docs/configuration.md")],
                           capture_output=True, text=True)
        check("docs/configuration.md's option table is what the built fftbloomd's table makes",
              r.returncode == 0, "  " + (r.stdout + r.stderr).strip())
        for d in docs:
            check_links(d)
    work = tempfile.mkdtemp(prefix="fftbloom-docs-run-")
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = os.path.join(work, "cache")
    env.pop("CACHE_DIRECTORY", None)
    env.pop("FFTBLOOM_SERVER", None)
    env.pop("FFTBLOOM_API_KEY", None)
    env["PATH"] = "/usr/bin:/bin:" + env.get("PATH", "")  # python3: Debian's, with numpy
    daemon, port, log = start_daemon(work, env)
    not_run, timings = [], []
    try:
        ports = Ports(port)
        for d in docs:
            run_document(d, ports, env, not_run, timings)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            rc = daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            stop_group(daemon.pid)
            rc = "hung"
        check("the examples' daemon stopped cleanly (exit %s)" % rc, rc == 0,
              indent(open(log, errors="replace").read()))
        shutil.rmtree(work, ignore_errors=True)
    print("not run here (%d blocks):" % len(not_run))
    for where, why in not_run:
        print("  %s (%s)" % (where, why))
    print("slowest blocks (seconds):")
    for secs, where in sorted(timings, reverse=True)[:8]:
        print("  %5.1f %s" % (secs, where))
    print("%d blocks run, %d not run, %.0f s" % (len(timings), len(not_run), time.time() - t0))
    print("SCRIPT: %d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
