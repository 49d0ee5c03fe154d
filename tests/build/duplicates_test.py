"""The duplicate-code check of the product's C (run by test_duplicates.sh): jscpd from npm
(tests/js) over every source folder; each block of 6 or more lines and 60 or more tokens that
appears twice is a failure, printed with both places, so that one piece of code serves where
the logic is the same. Prints "SCRIPT: N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JSCPD = os.path.join(ROOT, "tests", "js", "node_modules", ".bin", "jscpd")
FOLDERS = ["core", "codec", "api", "protocol", "gles", "cpu", "daemon", "cli", "bench"]
MIN_LINES, MIN_TOKENS = 6, 60


def main():
    if not os.access(JSCPD, os.X_OK):
        print("jscpd is not installed: make deps-test installs it (npm ci --prefix tests/js)")
        print("SCRIPT: 0 passed, 1 failed")
        return 1
    folders = [f for f in FOLDERS if os.path.isdir(os.path.join(ROOT, f))]
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([JSCPD, "--format", "c", "--min-lines", str(MIN_LINES),
                            "--min-tokens", str(MIN_TOKENS), "--reporters", "json",
                            "--output", out, "--silent", "--ignore", "**/results/**"] + folders,
                           cwd=ROOT, capture_output=True, text=True)
        path = os.path.join(out, "jscpd-report.json")
        if r.returncode != 0 or not os.path.exists(path):
            print("jscpd failed (%d): %s%s" % (r.returncode, r.stdout, r.stderr))
            print("SCRIPT: 0 passed, 1 failed")
            return 1
        with open(path) as f:
            report = json.load(f)
    stats = report["statistics"]["total"]
    print("jscpd: %d C files, %d lines, %d clones (>= %d lines, >= %d tokens)"
          % (stats["sources"], stats["lines"], stats["clones"], MIN_LINES, MIN_TOKENS))
    failed = 0
    for c in report["duplicates"]:
        a, b = c["firstFile"], c["secondFile"]
        print("FAIL %d lines twice: %s:%d-%d and %s:%d-%d" % (
            c["lines"], a["name"], a["start"], a["end"], b["name"], b["start"], b["end"]))
        failed += 1
    if not failed:
        print("ok   no block of the product's C is written twice")
    print("SCRIPT: %d passed, %d failed" % (0 if failed else 1, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
