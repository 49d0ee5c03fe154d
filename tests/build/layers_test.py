"""The include graph as ARCHITECTURE.md draws it (run by test_layers.sh): every project include
of a source folder points down or within, and no folder includes the system headers of a layer
above it; the CLI's operations call the public library (lib/), not the engine; the CLI binary
links no HTTP server. Prints "SCRIPT: N passed, N failed"."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BUILD", "build")

# what each folder may include of the project ("gen" and "shaders": generated headers in BUILD):
# core <- codec <- (gles, cpu) <- (api, lib) <- (cli, daemon, bench); lib (libfftbloom) wraps the
# engines and may not reach the API's JSON; api spells the engine's vocabulary, so it
# may include gles/ headers, and gles/ never includes api/
MAY_INCLUDE = {
    "core": {"core", "gen"},
    "codec": {"core", "codec"},
    "gles": {"core", "codec", "gles", "gen", "shaders"},
    "cpu": {"core", "codec", "cpu"},
    "api": {"core", "codec", "gles", "api"},
    "lib": {"core", "codec", "gles", "cpu", "lib"},
    "daemon": {"core", "codec", "gles", "cpu", "api", "daemon", "gen"},
    "cli": {"core", "codec", "gles", "api", "cli", "lib"},
    "bench": {"core", "codec", "gles", "cpu", "api", "cli", "bench", "gen", "lib"},
}
# system headers a folder must not include: GL below the engines and in the API, HTTP outside
# the daemon, jansson (the API's JSON) in the codecs and the engine
MAY_NOT = {
    "core": [r"GLES\d*/", r"EGL/", r"microhttpd\.h"],
    "codec": [r"GLES\d*/", r"EGL/", r"microhttpd\.h", r"jansson\.h"],
    "gles": [r"microhttpd\.h", r"jansson\.h"],
    "cpu": [r"GLES\d*/", r"EGL/", r"microhttpd\.h", r"jansson\.h"],
    "api": [r"GLES\d*/", r"EGL/", r"microhttpd\.h"],
    "lib": [r"microhttpd\.h", r"jansson\.h"],
    "cli": [r"microhttpd\.h"],
    "bench": [r"microhttpd\.h"],
}

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + str(detail) if detail else ""))


for folder, allowed in sorted(MAY_INCLUDE.items()):
    bad = []
    n = 0
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        if os.path.relpath(dirpath, ROOT).startswith(("bench/results", "bench/frames")):
            continue
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            for i, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m:
                    n += 1
                    top = m.group(1).split("/")[0]
                    if "/" not in m.group(1) or top not in allowed:
                        bad.append("%s:%d includes \"%s\"" % (rel, i, m.group(1)))
                m = re.match(r"\s*#\s*include\s+<([^>]+)>", line)
                if m:
                    for pat in MAY_NOT.get(folder, []):
                        if re.match(pat, m.group(1)):
                            bad.append("%s:%d includes <%s>" % (rel, i, m.group(1)))
    if n == 0:  # a rule for a folder that is gone (or includes nothing) checks nothing
        bad.append("no project include found under %s/" % folder)
    check("%s/: its %d project includes point down or within (%s), no system header of a layer "
          "above" % (folder, n, ", ".join(sorted(allowed))), not bad, "\n     ".join(bad[:20]))

# the subcommands that run operations do it through the public library (lib/include/fftbloom.h):
# no call of the engine's own functions and no GL (they may spell its vocabulary: names, enums)
ENGINE_CALL = re.compile(r"\b(bloom_run\w*|bloom_ctx_\w+|bloom_kernel_\w+|fft_(create|execute|cache_\w+|axis_\w+)|"
                         r"spatial_\w+\s*\(|deconv_run|deconv_ctx_\w+|convolve_\w+\s*\(|engine_(create|want|\w*bloom|\w*spatial)|"
                         r"cli_gpu_open|egl_ctx_\w+|kernel_generate|gl[A-Z]\w+)\s*\(")
PORTED = ["cli/fft.c", "cli/bloom.c", "cli/conv.c", "cli/conv2d.c", "cli/deconv.c", "cli/batch.c",
          "cli/sequence.c", "cli/info.c"]
bad = []
for rel in PORTED:
    for i, line in enumerate(open(os.path.join(ROOT, rel), encoding="utf-8"), 1):
        if line.lstrip().startswith(("/*", "*")):
            continue
        m = ENGINE_CALL.search(line)
        if m:
            bad.append("%s:%d calls %s" % (rel, i, m.group(1)))
check("the CLI's operations (%s) call the public library, not the engine" % ", ".join(
    os.path.basename(p) for p in PORTED), not bad, "\n     ".join(bad[:20]))

cli = os.path.join(BUILD, "fftbloom")
if os.path.exists(cli):
    r = subprocess.run(["ldd", cli], capture_output=True, text=True)
    check("fftbloom links no HTTP server (no libmicrohttpd in ldd)",
          r.returncode == 0 and "microhttpd" not in r.stdout, r.stdout[-500:])
else:
    check("fftbloom is built (%s)" % cli, False)

print("SCRIPT: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
