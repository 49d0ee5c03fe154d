"""Line coverage per source folder from a --coverage build (make coverage): runs gcov on every
object of the folders named, sums executed and executable lines per folder and per file, and
prints a Markdown table. Usage: coverage.py BUILD FOLDER..."""
import glob
import os
import re
import subprocess
import sys

LINES = re.compile(r"^Lines executed:([0-9.]+)% of (\d+)$")


def file_lines(build, src):
    """(executed, total) lines of one source file from its notes (.gcno) and counts (.gcda) in
    BUILD; a file whose program never ran counts every line as not run; None: not built."""
    obj_dir = os.path.join(build, os.path.dirname(src))
    if not os.path.exists(os.path.join(obj_dir, os.path.splitext(os.path.basename(src))[0] + ".gcno")):
        return None
    out = subprocess.run(["gcov", "-n", "-o", obj_dir, src], capture_output=True, text=True).stdout
    name = None
    for line in out.splitlines():
        if line.startswith("File '"):
            name = line[6:-1]
        m = LINES.match(line)
        if m and name and os.path.normpath(name) == os.path.normpath(src):
            total = int(m.group(2))
            return round(float(m.group(1)) * total / 100.0), total
    return None


def main():
    build, folders = sys.argv[1], sys.argv[2:]
    rows, grand = [], [0, 0]
    for folder in folders:
        done = total = 0
        worst = []
        for src in sorted(glob.glob(os.path.join(folder, "*.c"))):
            r = file_lines(build, src)
            if r is None:
                continue
            done += r[0]
            total += r[1]
            worst.append((r[0] / r[1] if r[1] else 1.0, src, r[0], r[1]))
        if total:
            worst.sort()
            low = ", ".join("%s %.0f%%" % (os.path.basename(s), 100 * f) for f, s, _, _ in worst[:3])
            rows.append((folder, done, total, low))
            grand[0] += done
            grand[1] += total
    print("| folder | lines run | of | coverage | least covered files |")
    print("|---|---:|---:|---:|---|")
    for folder, done, total, low in rows:
        print("| `%s/` | %d | %d | %.1f%% | %s |" % (folder, done, total, 100.0 * done / total, low))
    if grand[1]:
        print("| all | %d | %d | %.1f%% | |" % (grand[0], grand[1], 100.0 * grand[0] / grand[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
