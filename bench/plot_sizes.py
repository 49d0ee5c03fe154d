"""Time per pixel against frame size, from the harness's result lines: the bloom workloads
(suite bloom, GPU stages back to back) and the big frames (suite big, GPU stages inside whole
calls, and the whole call on the host clock), untiled and tiled. Writes a PNG.

usage: python3 bench/plot_sizes.py OUT.png LINES.jsonl...
(`make plots` draws docs/sizes-h200.png from bench/results/h200/)"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchline import read_lines  # noqa: E402


def points(paths):
    """(megapixels, GPU ns per pixel, call ns per pixel, id, tiles, suite) per workload; its
    fastest round when it repeats (a slower round is the GL driver's clocks, bench/RESULTS.md)."""
    seen = {}
    for d in read_lines(paths):
        if d.get("impl") != "fftbloom" or d.get("suite") not in ("bloom", "big"):
            continue
        det, m = d.get("detail", {}), d.get("metrics", {})
        if "image" not in det or m.get("ms") is None or d.get("variant") != "default":
            continue
        w, h = map(int, det["image"].split("x"))
        tiles = det.get("tiles", "1x1")
        key = (d["id"], tiles)
        seen.setdefault(key, []).append((w * h, m["ms"], m.get("call_ms"), tiles, d["suite"]))
    out = []
    for (wid, tiles), v in seen.items():
        v.sort(key=lambda x: x[1])
        px, ms, call, tiles, suite = v[0]
        out.append((px / 1e6, ms * 1e6 / px, call * 1e6 / px if call else None, wid, tiles, suite))
    return sorted(out)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    pts = points(sys.argv[2:])
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    for test, marker, name in (
            (lambda p: p[5] == "bloom", "o", "GPU stages back to back (bloom suite)"),
            (lambda p: p[5] == "big" and p[4] == "1x1", "^", "GPU stages in whole calls, one piece"),
            (lambda p: p[5] == "big" and p[4] != "1x1", "s", "GPU stages in whole calls, tiles")):
        sel = [p for p in pts if test(p)]
        ax.plot([p[0] for p in sel], [p[1] for p in sel], marker, label=name)
    call = [p for p in pts if p[2] is not None and p[5] == "big"]
    ax.plot([p[0] for p in call], [p[2] for p in call], "x", label="whole call (host clock)")
    for p in pts:
        ax.annotate(p[3].split(".")[1] + ("" if p[4] == "1x1" else " " + p[4]), (p[0], p[1]),
                    fontsize=7, xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("frame, megapixels")
    ax.set_ylabel("ns per pixel")
    ax.set_title("fftbloom bloom on one H200: time per pixel against frame size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[1])
    for p in pts:
        print("%-28s %8.2f MP  %-5s  GPU %.3f ns/px%s" % (p[3], p[0], p[4], p[1],
              "  call %.2f ns/px" % p[2] if p[2] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
