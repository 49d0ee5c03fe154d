"""Throughput and latency against the number of clients, from bench/e2e.sh's and
bench/gpus.sh's result lines (suite e2e, ids e2e.jpeg.SIZE.cN): one line per (variant, size),
requests a second on the left, p50 and p99 on the right; with several runs of a point, each run is
drawn as a dot and the line goes through their median. The host's codec ceiling at each size (the
codec.jpeg.SIZE lines of the same files: all cores at once on the path the defaults run, frames
in as coefficients; the planes path's in older lines) is drawn as a dashed level. Writes a PNG.

usage: python3 bench/plot_clients.py OUT.png TITLE LINES.jsonl...
(`make plots` draws docs/clients-h200.png and docs/clients-h200x2.png from bench/results/)"""
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchline import read_lines  # noqa: E402

ID = re.compile(r"^e2e\.jpeg\.([0-9a-z]+)\.c([0-9]+)$")


def read(paths):
    """{(variant, size): {clients: [(rps, p50, p99), ...]}} and {size: [planes ceilings]}."""
    series, ceilings = {}, {}
    for d in read_lines(paths):
        if d.get("suite") != "e2e":
            continue
        m = d.get("metrics", {})
        if d.get("id", "").startswith("codec.jpeg."):
            # the ceiling of the path the defaults run: the frames in as coefficients, all
            # cores at once, where the line has it (since 2026-11-26); else the planes path's
            for key, name in (("idct_parallel_fps", "codec ceiling (all cores, coefficients in)"),
                              ("planes_fps", "planes codec ceiling")):
                if key in m:
                    ceilings.setdefault(d["id"][len("codec.jpeg."):], []).append((m[key], name))
                    break
            continue
        g = ID.match(d.get("id", ""))
        if not g or "rps" not in m:
            continue
        key = (d.get("variant", "default"), g.group(1))
        series.setdefault(key, {}).setdefault(int(g.group(2)), []).append(
            (m["rps"], m.get("p50_ms"), m.get("p99_ms")))
    return series, ceilings


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, title, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    series, ceilings = read(paths)
    if not series:
        sys.exit("plot_clients.py: no e2e.jpeg.SIZE.cN lines in " + " ".join(paths))
    fig, (ax, lat) = plt.subplots(1, 2, figsize=(11, 4.2))
    colour = {}
    for (variant, size), pts in sorted(series.items()):
        cs = sorted(pts)
        label = "%s, %s" % (variant, size)
        rps = [statistics.median(r[0] for r in pts[c]) for c in cs]
        line, = ax.plot(cs, rps, marker="o", label=label)
        colour.setdefault(size, line.get_color())
        for c in cs:
            if len(pts[c]) > 1:
                ax.scatter([c] * len(pts[c]), [r[0] for r in pts[c]], s=10,
                           color=line.get_color(), alpha=0.5)
        for i, style in ((1, ":"), (2, "-")):
            v = [statistics.median(r[i] for r in pts[c]) for c in cs if pts[c][0][i] is not None]
            if len(v) == len(cs):
                lat.plot(cs, v, style, marker=".", color=line.get_color(),
                         label="%s p%s" % (label, "50" if i == 1 else "99"))
    for size, cn in sorted(ceilings.items()):
        if size in colour:
            c, name = [v for v, _ in cn], cn[-1][1]
            span = "%.0f" % c[0] if min(c) == max(c) else "%.0f-%.0f" % (min(c), max(c))
            ax.axhline(statistics.median(c), ls="--", color=colour[size], alpha=0.6,
                       label="%s %s (%s/s)" % (size, name, span))
    for a in (ax, lat):
        a.set_xscale("log", base=2)
        a.set_xlabel("clients")
        a.grid(True, alpha=0.3)
    ax.set_ylabel("requests a second")
    ax.set_ylim(bottom=0)
    lat.set_ylabel("latency, ms (dotted p50, solid p99)")
    lat.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    lat.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
